# The model's state as the core holds it, and the entry points that take it.
#
# A State holds one object per group of the schema (mlsom._schema.MEMBERS: maps, counts,
# labelled, rule, guards, pairs, persistence, drift, acceptance), each with its members as
# typed memoryviews, checked once against the state's sizes when the State is made from the
# estimator's arrays (the dict SOMStreamClassifier._state); a group the state lacks is None.
# The members held in the model's float type (the neurons and the rows kept beside them) stay
# arrays: Cython's fused types cannot type an attribute, so each entry point binds them to
# views of its instances' type (float64 or float32). The State shares the estimator's arrays:
# what the core writes is the estimator's state.
#
# The entry points take the State, the call's Settings and the data:
#   stream(state, settings, X, Y[, Xl, Yl, after])  the online phase over a chunk, with the labels
#                                                   that arrive meanwhile and label persistence
#   partial_fit(state, settings, Xl, Yl)            labels alone
#   predict(state, settings, X, Y)                  frozen scoring
#
# Part of the _core extension: included by _core.pyx, which holds the cimports.

from mlsom._method import DRIFT_SIGMA, DRIFT_SMOOTHING, LABEL_ACCEPTANCE_BAND


cdef _shape_error(str group, str members, str shapes):
    return ValueError(f"the state's group {group!r} must hold {members} shaped {shapes}")


cdef class MapsGroup:
    """The maps: neurons as columns Wt (A, M) in the model's type, each neuron's label ncls
    (M), the maps' offsets (L+1), wins (M), log averOut (M), grid positions (M, 2), and the
    float32 screening copy Ws (A, M), ww (M) centred on cc (A) (screening_copy), kept in step
    with Wt as neurons move; rows (M, A): the neurons one per row (frozen scoring), or None."""
    cdef object Wt
    cdef object rows
    cdef const int32_t[::1] ncls
    cdef const int64_t[::1] offsets
    cdef const int64_t[::1] counts
    cdef const double[::1] logA
    cdef const int64_t[:, ::1] positions
    cdef const float[:, ::1] Ws
    cdef const float[::1] ww
    cdef const double[::1] cc
    cdef Py_ssize_t A, M, L, k_nn
    cdef bint squared

    def __init__(self, dict st):
        self.Wt = st["Wt"]
        self.A, self.M = self.Wt.shape
        self.ncls = st["ncls"]
        self.offsets = st["offsets"]
        self.counts = st["counts"]
        self.logA = st["log_averout"]
        self.positions = st["positions"]
        self.Ws, self.ww, self.cc = st["screen"]
        self.rows = st.get("rows")
        self.L = self.offsets.shape[0] - 1
        self.k_nn = st["k_nn"]
        self.squared = st["squared"]
        if (self.ncls.shape[0] != self.M or self.counts.shape[0] != self.M
                or self.logA.shape[0] != self.M or self.positions.shape[0] != self.M
                or self.positions.shape[1] != 2 or self.Ws.shape[0] != self.A
                or self.Ws.shape[1] != self.M or self.ww.shape[0] != self.M
                or self.cc.shape[0] != self.A or self.L < 1 or self.k_nn < 1
                or (self.rows is not None and self.rows.shape != (self.M, self.A))):
            raise _shape_error("maps", "Wt, ncls, offsets, counts, log_averout, positions and "
                               "the screening copy", "(A, M), (M,), (L+1,), (M,), (M,), (M, 2) "
                               "and (A, M), (M,), (A,)")


cdef class CountsGroup:
    """The label counts: T (L, L) and NS (2) = [N, S], instances seen and the sum of the
    predicted label-set sizes."""
    cdef const int64_t[:, ::1] T
    cdef const int64_t[::1] NS

    def __init__(self, dict st, Py_ssize_t L):
        self.T = st["T"]
        self.NS = st["NS"]
        if self.T.shape[0] != L or self.T.shape[1] != L or self.NS.shape[0] != 2:
            raise _shape_error("counts", "T and NS", "(L, L) and (2,)")


cdef class LabelledGroup:
    """Each label's last labelled positive instance (L, A) in the model's type, and whether it
    has one (L)."""
    cdef object last_positive
    cdef const uint8_t[::1] has_positive

    def __init__(self, dict st, Py_ssize_t L, Py_ssize_t A):
        self.last_positive = st["last_positive"]
        self.has_positive = st["has_positive"]
        if self.last_positive.shape != (L, A) or self.has_positive.shape[0] != L:
            raise _shape_error("labelled", "last_positive and has_positive", "(L, A) and (L,)")


cdef class RuleGroup:
    """What labels taught the decision rule: the acceptance offsets (L), the rings of margins
    and kinds (L, W), their entries ever (L), the labelled cardinality (2), and the online
    phase's cache of the rings' tested entries in order (order (L, W), how many (L), their
    margins (L, W), as the rings were at synced (L) entries ever; LabelMem)."""
    cdef const double[::1] label_offsets
    cdef const double[:, ::1] margin_memory
    cdef const uint8_t[:, ::1] margin_kinds
    cdef const int64_t[::1] margin_counts
    cdef const double[::1] labelled_cardinality
    cdef const int32_t[:, ::1] order
    cdef const int64_t[::1] n_sorted
    cdef const double[:, ::1] sorted_margins
    cdef const int64_t[::1] synced

    def __init__(self, dict st, Py_ssize_t L):
        self.label_offsets = st["label_offsets"]
        self.margin_memory = st["margin_memory"]
        self.margin_kinds = st["margin_kinds"]
        self.margin_counts = st["margin_counts"]
        self.labelled_cardinality = st["labelled_cardinality"]
        self.order, self.n_sorted, self.sorted_margins, self.synced = st["margin_order"]
        cdef Py_ssize_t W = self.margin_memory.shape[1]
        if (W < 1 or self.label_offsets.shape[0] != L or self.margin_memory.shape[0] != L
                or self.margin_kinds.shape[0] != L or self.margin_kinds.shape[1] != W
                or self.margin_counts.shape[0] != L or self.labelled_cardinality.shape[0] != 2
                or self.order.shape[0] != L or self.order.shape[1] != W
                or self.n_sorted.shape[0] != L or self.sorted_margins.shape[0] != L
                or self.sorted_margins.shape[1] != W or self.synced.shape[0] != L):
            raise _shape_error("rule", "label_offsets, margin_memory, margin_kinds, "
                               "margin_counts, labelled_cardinality and the margins' order",
                               "(L,), (L, W), (L, W), (L,), (2,) and (L, W), (L,), (L, W), (L,)")

    cdef bint taught(self):
        """Whether a label has taught the rule (frozen scoring then uses it)."""
        cdef Py_ssize_t c
        for c in range(self.margin_counts.shape[0]):
            if self.margin_counts[c] > 0:
                return True
        return False


cdef class GuardsGroup:
    """Each label's guards and supports (M, A) in the model's type, how many each label has
    (L), whether its decisions use them (L), and beside the rule's kinds whether a tested
    entry's instance was nearer one of its guards (L, W)."""
    cdef object guards
    cdef object supports
    cdef const int64_t[::1] guard_counts
    cdef const int64_t[::1] support_counts
    cdef const uint8_t[::1] guards_on
    cdef const uint8_t[:, ::1] margin_vetoes

    def __init__(self, dict st, Py_ssize_t L, Py_ssize_t W):
        self.guards = st["guards"]
        self.supports = st["supports"]
        self.guard_counts = st["guard_counts"]
        self.support_counts = st["support_counts"]
        self.guards_on = st["guards_on"]
        self.margin_vetoes = st["margin_vetoes"]
        if self.margin_vetoes.shape[0] != L or self.margin_vetoes.shape[1] != W:
            raise _shape_error("guards", "margin_vetoes", "(L, W)")


cdef class PairsGroup:
    """The paired test of the corrections: per neuron where the other choice would have put it
    (M, A) in the model's type, its tries (M) and whether the strong choice was made (M); the
    ring of the last pairs (P) and their count ever (1)."""
    cdef object alt_place
    cdef const int8_t[::1] alt_uses
    cdef const uint8_t[::1] alt_strong
    cdef const uint8_t[::1] pair_ring
    cdef const int64_t[::1] pair_total

    def __init__(self, dict st, Py_ssize_t M, Py_ssize_t A):
        self.alt_place = st["alt_place"]
        self.alt_uses = st["alt_uses"]
        self.alt_strong = st["alt_strong"]
        self.pair_ring = st["pair_ring"]
        self.pair_total = st["pair_total"]
        if (self.alt_place.shape != (M, A) or self.alt_uses.shape[0] != M
                or self.alt_strong.shape[0] != M or self.pair_ring.shape[0] < 1
                or self.pair_total.shape[0] != 1):
            raise _shape_error("pairs", "alt_place, alt_uses, alt_strong, pair_ring and "
                               "pair_total", "(M, A), (M,), (M,), (P >= 1,) and (1,)")


cdef class PersistenceGroup:
    """Label persistence's record (Record): the last row classified (A) in the model's type,
    the labels (3, L), the flags (3), the ring of pairs (P) and their count ever (1)."""
    cdef object persist_row
    cdef const int8_t[:, ::1] persist_labels
    cdef const uint8_t[::1] persist_flags
    cdef const uint8_t[::1] persist_ring
    cdef const int64_t[::1] persist_total

    def __init__(self, dict st, Py_ssize_t L, Py_ssize_t A):
        self.persist_row = st["persist_row"]
        self.persist_labels = st["persist_labels"]
        self.persist_flags = st["persist_flags"]
        self.persist_ring = st["persist_ring"]
        self.persist_total = st["persist_total"]
        if (self.persist_row.shape != (A,) or self.persist_labels.shape[0] != 3
                or self.persist_labels.shape[1] != L or self.persist_flags.shape[0] != 3
                or self.persist_ring.shape[0] < 1 or self.persist_total.shape[0] != 1):
            raise _shape_error("persistence", "persist_row, persist_labels, persist_flags, "
                               "persist_ring and persist_total",
                               "(A,), (3, L), (3,), (P >= 1,) and (1,)")


cdef class DriftGroup:
    """The robust variant's drift gate: each label's recent mean of the instances it learnt
    from online (L, A), its training mean (L, A), the squared distance from it that opens its
    gate (L) and whether it has opened (L); beta, the recent mean's weight of a new instance,
    and sigma, the neighbourhood's width in grid units (_drift_step)."""
    cdef const double[:, ::1] drift_mean
    cdef const double[:, ::1] drift_center
    cdef const double[::1] drift_limit
    cdef const uint8_t[::1] drift_open
    cdef double beta, sigma

    def __init__(self, dict st, Py_ssize_t L, Py_ssize_t A):
        self.drift_mean = st["drift_mean"]
        self.drift_center = st["drift_center"]
        self.drift_limit = st["drift_limit"]
        self.drift_open = st["drift_open"]
        self.beta = DRIFT_SMOOTHING
        self.sigma = DRIFT_SIGMA * st["grid_size"]
        if (self.drift_mean.shape[0] != L or self.drift_mean.shape[1] != A
                or self.drift_center.shape[0] != L or self.drift_center.shape[1] != A
                or self.drift_limit.shape[0] != L or self.drift_open.shape[0] != L
                or not (0.0 < self.beta <= 1.0) or not (self.sigma > 0.0)):
            raise _shape_error("drift", "drift_mean, drift_center, drift_limit and drift_open",
                               "(L, A), (L, A), (L,) and (L,), with 0 < beta <= 1 and sigma > 0")


cdef class AcceptanceGroup:
    """The robust variant's acceptance: ctl = [theta, gain, z0, cbar, alpha, band] (the model's
    offset and the recent predicted cardinality it tracks), and each label's [phi, rate,
    target] (3, L), or None for a model saved before labels had offsets of their own
    (stream's _accept_step)."""
    cdef const double[::1] ctl
    cdef const double[:, ::1] label_acceptance
    cdef double label_band

    def __init__(self, dict st, Py_ssize_t L):
        self.ctl = st["ctl"]
        self.label_acceptance = st.get("label_acceptance")
        self.label_band = LABEL_ACCEPTANCE_BAND
        if self.ctl.shape[0] != 6 or (self.label_acceptance is not None and (
                self.label_acceptance.shape[0] != 3 or self.label_acceptance.shape[1] != L)):
            raise _shape_error("acceptance", "ctl and label_acceptance", "(6,) and (3, L)")


cdef _check_writable(dict st):
    """Refuse a state some array of which is read-only (a model unpickled from a read-only
    memory map): the online phase writes them."""
    for key, value in st.items():
        for a in (value if isinstance(value, tuple) else (value,)):
            if isinstance(a, np.ndarray) and not a.flags.writeable:
                raise ValueError(f"the model's state is read-only ({key!r}): a model that "
                                 "learns needs its own copy (copy.deepcopy(model))")


cdef class State:
    """The model's state, by group (None: the state lacks it), made from the estimator's arrays
    ``st`` (a dict holding the schema's members, the fields ``k_nn``, ``squared``,
    ``grid_size``, ``ctl`` and the copies ``screen``, ``rows`` and ``margin_order`` where the
    call needs them). The views are read only; with ``writable`` (the calls that learn) every
    array must be writable, as the core writes through them."""
    cdef readonly MapsGroup maps
    cdef readonly CountsGroup counts
    cdef readonly LabelledGroup labelled
    cdef readonly RuleGroup rule
    cdef readonly GuardsGroup guards
    cdef readonly PairsGroup pairs
    cdef readonly PersistenceGroup persistence
    cdef readonly DriftGroup drift
    cdef readonly AcceptanceGroup acceptance

    def __init__(self, dict st, bint writable=True):
        if writable:
            _check_writable(st)
        cdef MapsGroup maps = MapsGroup(st)
        cdef Py_ssize_t L = maps.L, A = maps.A, M = maps.M
        self.maps = maps
        self.counts = CountsGroup(st, L)
        if "last_positive" in st:
            self.labelled = LabelledGroup(st, L, A)
        if "label_offsets" in st:
            self.rule = RuleGroup(st, L)
        if "guards" in st:
            if self.rule is None:
                raise ValueError("the state's group 'guards' needs the group 'rule'")
            self.guards = GuardsGroup(st, L, self.rule.margin_memory.shape[1])
        if "alt_place" in st:
            self.pairs = PairsGroup(st, M, A)
        if "persist_row" in st:
            self.persistence = PersistenceGroup(st, L, A)
        if "drift_mean" in st:
            self.drift = DriftGroup(st, L, A)
        if "ctl" in st:
            self.acceptance = AcceptanceGroup(st, L)
        elif "label_acceptance" in st:
            raise ValueError("the state's 'label_acceptance' comes with its 'ctl'")


cdef class Settings:
    """A call's settings: the online learning rate eta, whether a zero co-occurrence skips a
    label (zero_cooccurrence="skip"), correction_rate, whether label persistence's proposals
    are given (label_persistence="tested"), whether label persistence's record starts in this
    call (at its first labelled row), whether the corrections are tested (corrections="tested":
    the paired test, with labels), and the threads frozen scoring may use."""
    cdef readonly double eta, rate
    cdef readonly bint skip_zero, tested, substitute, starts
    cdef readonly long long n_threads

    def __init__(self, double eta=1.0, bint skip_zero=False, double rate=0.5,
                 bint tested=False, bint substitute=False, bint starts=False,
                 long long n_threads=1):
        self.eta = eta
        self.skip_zero = skip_zero
        self.rate = rate
        self.tested = tested
        self.substitute = substitute
        self.starts = starts
        self.n_threads = n_threads


cdef void _bind_maps(ModelView *v, State state, floating *wt, floating *pos):
    cdef MapsGroup m = state.maps
    v.wt = wt
    v.ncls = &m.ncls[0]
    v.offsets = &m.offsets[0]
    v.counts = <int64_t *> &m.counts[0]
    v.logA = <double *> &m.logA[0]
    v.T = <int64_t *> &state.counts.T[0, 0]
    v.NS = <int64_t *> &state.counts.NS[0]
    v.Ws = <float *> &m.Ws[0, 0]
    v.ww = <float *> &m.ww[0]
    v.cc = &m.cc[0]
    v.pos = pos
    v.hp = <uint8_t *> &state.labelled.has_positive[0] if state.labelled is not None else NULL
    v.A = m.A
    v.M = m.M
    v.L = m.L
    v.k_nn = m.k_nn
    v.squared = m.squared


cdef void _bind_rule(LabelMem *lm, RuleGroup r, GuardsGroup g):
    lm.thl = <double *> &r.label_offsets[0]
    lm.mg = <double *> &r.margin_memory[0, 0]
    lm.mk = <uint8_t *> &r.margin_kinds[0, 0]
    lm.mtot = <int64_t *> &r.margin_counts[0]
    lm.zl = <double *> &r.labelled_cardinality[0]
    lm.win = r.margin_memory.shape[1]
    lm.srt = <int32_t *> &r.order[0, 0]
    lm.nsrt = <int64_t *> &r.n_sorted[0]
    lm.srtm = <double *> &r.sorted_margins[0, 0]
    lm.stot = <int64_t *> &r.synced[0]
    lm.mv = <uint8_t *> &g.margin_vetoes[0, 0] if g is not None else NULL


cdef void _bind_guards(Guards *gd, GuardsGroup g, MapsGroup m, const floating[:, ::1] guards,
                       const floating[:, ::1] supports) except *:
    if not _guards_view(gd, guards, g.guard_counts, supports, g.support_counts, g.guards_on,
                        m.offsets, m.M, m.A, m.L):
        raise _shape_error("guards", "guards, guard_counts, supports, support_counts and "
                           "guards_on", "(M, A), (L,), (M, A), (L,) and (L,)")


cdef void _bind_pairs(Pairs *p, PairsGroup g, void *place):
    p.place = place
    p.uses = <int8_t *> &g.alt_uses[0]
    p.strong = <uint8_t *> &g.alt_strong[0]
    p.ring = <uint8_t *> &g.pair_ring[0]
    p.total = <int64_t *> &g.pair_total[0]
    p.win = g.pair_ring.shape[0]


cdef void _bind_drift(Drift *d, DriftGroup g, MapsGroup m):
    d.mean = <double *> &g.drift_mean[0, 0]
    d.center = &g.drift_center[0, 0]
    d.limit = &g.drift_limit[0]
    d.open = <uint8_t *> &g.drift_open[0]
    d.pos = &m.positions[0, 0]
    d.beta = g.beta
    d.two_s2 = 2.0 * g.sigma * g.sigma


cdef void _bind_acceptance(Accept *a, AcceptanceGroup g):
    a.ctl = <double *> &g.ctl[0]
    a.lctl = <double *> &g.label_acceptance[0, 0] if g.label_acceptance is not None else NULL
    a.label_band = g.label_band


cdef void _bind_record(Record *rec, PersistenceGroup g, void *row):
    rec.row = row
    rec.lab = <int8_t *> &g.persist_labels[0, 0]
    rec.flags = <uint8_t *> &g.persist_flags[0]
    rec.ring = <uint8_t *> &g.persist_ring[0]
    rec.total = <int64_t *> &g.persist_total[0]
    rec.W = g.persist_ring.shape[0]


cdef inline void *_data(const floating[:, ::1] a):
    """The first element of a 2-d view, or NULL where it has none."""
    return <void *> &a[0, 0] if a is not None and a.shape[0] > 0 and a.shape[1] > 0 else NULL


def stream(State state, Settings settings, const floating[:, ::1] X, uint8_t[:, ::1] Y,
           const floating[:, ::1] Xl=None, const int8_t[:, ::1] Yl=None,
           const int64_t[::1] after=None):
    """The online phase over a chunk of the stream, in order, adapting after every instance,
    with the labels that arrive meanwhile and label persistence (docs/architecture.md).

    IN  state, settings; X (n, A), in the model's type.
    OUT Y (n, L): the 0/1 predictions.
    IN  Xl (nl, A), Yl (nl, L) in {1, 0, -1}, after (nl): labelled row k is learnt once after[k]
        rows of X have been classified (after non-decreasing, in 0..n; checked by the caller),
        or None: no labels. A labelled instance leaves T, N and S as they are; the groups
        labelled and rule must be present with it.
    The state's groups are read and written in place (the estimator's arrays)."""
    cdef MapsGroup maps = state.maps
    cdef Py_ssize_t n = X.shape[0], A = maps.A, M = maps.M, L = maps.L
    cdef Py_ssize_t nl = 0 if Xl is None else Xl.shape[0], first = 0
    cdef floating[:, ::1] Wt = maps.Wt
    cdef floating[:, ::1] pos = None
    cdef floating[:, ::1] place = None
    cdef floating[::1] prow = None
    cdef floating[:, ::1] gv = None
    cdef floating[:, ::1] sv = None
    cdef bint persist = state.persistence is not None
    cdef Online o
    cdef ModelView v
    cdef Record rec
    if X.shape[1] != A or Y.shape[0] != n or Y.shape[1] != L or (nl > 0 and (
            Yl is None or after is None or Xl.shape[1] != A or Yl.shape[0] != nl
            or Yl.shape[1] != L or after.shape[0] != nl)):
        raise ValueError("X, Y, Xl, Yl and after must be shaped (n, A), (n, L), (nl, A), "
                         "(nl, L) and (nl,)")
    if nl > 0 and (state.labelled is None or state.rule is None):
        raise ValueError("labels need the state's groups 'labelled' and 'rule'")
    memset(&o, 0, sizeof(Online))
    if state.labelled is not None:
        pos = state.labelled.last_positive
    if state.guards is not None:
        gv = state.guards.guards
        sv = state.guards.supports
    _bind_maps(&v, state, &Wt[0, 0], <floating *> _data(pos))
    o.eta = settings.eta
    o.rate = settings.rate
    o.skip_zero = settings.skip_zero
    if state.rule is not None:
        _bind_rule(&o.lmem, state.rule, state.guards)
        o.lm = &o.lmem
    if state.guards is not None:
        _bind_guards(&o.guard, state.guards, maps, gv, sv)
        o.gd = &o.guard
    if settings.tested and nl > 0:
        if state.pairs is None:
            raise ValueError("corrections='tested' needs the state's group 'pairs'")
        place = state.pairs.alt_place
        _bind_pairs(&o.pairs, state.pairs, _data(place))
        o.pr = &o.pairs
    if state.drift is not None:
        _bind_drift(&o.drift, state.drift, maps)
        o.dr = &o.drift
    if state.acceptance is not None:
        _bind_acceptance(&o.acc, state.acceptance)
    if persist:
        prow = state.persistence.persist_row
        _bind_record(&rec, state.persistence, <void *> &prow[0] if A > 0 else NULL)
        first = after[0] if settings.starts and nl > 0 else 0
    cdef const floating *px = &X[0, 0] if n > 0 else NULL
    cdef const floating *pxl = &Xl[0, 0] if nl > 0 else NULL
    cdef const int8_t *pyl = &Yl[0, 0] if nl > 0 else NULL
    cdef const int64_t *pafter = &after[0] if nl > 0 else NULL
    cdef uint8_t *py = &Y[0, 0] if n > 0 else NULL
    try:
        with nogil:
            if not _online_alloc(&o, M, L, A):
                with gil:
                    raise MemoryError()
            _online_run(&o, &v, px, n, pxl, pyl, pafter, nl, py)
            if persist:
                _persist_run(&rec, px, n, py, A, L, pxl, pyl, pafter, nl, first,
                             settings.substitute)
    finally:
        _online_free(&o)


def partial_fit(State state, Settings settings, const floating[:, ::1] Xl,
                const int8_t[:, ::1] Yl):
    """Labels alone: the rows Xl (nl, A) with their labels Yl (nl, L) in {1, 0, -1}, learnt in
    order (stream with a chunk of no row and every labelled row due before it)."""
    X = np.empty((0, Xl.shape[1]), dtype=np.asarray(Xl).dtype)
    Y = np.empty((0, Yl.shape[1]), dtype=np.uint8)
    stream(state, settings, X, Y, Xl, Yl, np.zeros(Xl.shape[0], dtype=np.int64))


def predict(State state, Settings settings, const floating[:, ::1] X, uint8_t[:, ::1] Y):
    """Frozen scoring: classify every row of X (n, A) independently from the state (read only),
    OUT Y (n, L). The state needs its copies: the screening copy and the rows (maps.rows). The
    decision rule is the one labels taught where a label has taught it (thl, zl; the guards
    with it), the robust variant's offsets (theta, each label's phi) where the state has them.

    With the 16-row kernels (AVX2 or AVX-512), chunks of 64 rows are spread over
    settings.n_threads OpenMP threads and classified 16 rows at a time (_lanes_chunk); the rows
    of a last chunk of fewer than LANES_MIN rows, and every row elsewhere, go in blocks of PRB
    rows screened by the four-row kernel and classified one by one (_classify). A row's result
    does not depend on the path, the chunks or the threads."""
    cdef MapsGroup maps = state.maps
    cdef Py_ssize_t n = X.shape[0], A = maps.A, M = maps.M, L = maps.L
    cdef const floating[:, ::1] Wt = maps.Wt
    cdef const floating[:, ::1] Wr = maps.rows
    cdef const floating[:, ::1] gv = None
    cdef const floating[:, ::1] sv = None
    cdef Frozen f
    cdef Guards guard
    cdef ModelView v
    cdef int failed
    if X.shape[1] != A or Y.shape[0] != n or Y.shape[1] != L or Wr is None:
        raise ValueError("X and Y must be shaped (n, A) and (n, L), with the rows' copy")
    if n == 0:
        return
    memset(&f, 0, sizeof(Frozen))
    f.n_threads = mlsom_cap_threads(settings.n_threads)
    f.skip_zero = settings.skip_zero
    if state.acceptance is not None:
        f.ctl = 1
        f.theta = state.acceptance.ctl[0]
        if state.acceptance.label_acceptance is not None:
            f.phl = &state.acceptance.label_acceptance[0, 0]
    if state.rule is not None and state.rule.taught():
        f.thl = &state.rule.label_offsets[0]
        f.zl = &state.rule.labelled_cardinality[0]
        if state.guards is not None:
            gv = state.guards.guards
            sv = state.guards.supports
            _bind_guards(&guard, state.guards, maps, gv, sv)
            f.gd = &guard
    _bind_maps(&v, state, <floating *> &Wt[0, 0], NULL)
    with nogil:
        failed = _predict_frozen(&f, &v, &X[0, 0], n, &Wr[0, 0], &Y[0, 0])
    if failed:
        raise MemoryError()
