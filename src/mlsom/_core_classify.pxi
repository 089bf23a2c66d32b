# Online phase, per instance: the winner-class ranking and the Bayes decision (_classify),
# with the work buffers they share.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

# --------------------------------------------------------------------------------------------------
# online phase
# --------------------------------------------------------------------------------------------------

# Entry (mlsom_entry of _kernels.h): d, a squared distance (screening or exact), and j, a global
# neuron index (maps laid out in label order).
ctypedef mlsom_entry Entry


cdef inline bint _less(Entry a, Entry b) noexcept nogil:
    return a.d < b.d or (a.d == b.d and a.j < b.j)


cdef void _select_smallest(Entry *a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Reorder a[0:n] so that a[0:k] holds its k smallest entries (in no particular order).

    Quickselect with a median-of-three pivot and a branch-free partition; entries are distinct
    under (distance, index), so the partition never degenerates on equal keys. Small ranges are
    finished by insertion sort.
    """
    cdef Py_ssize_t lo = 0, hi = n, i, j, mid, store, lt
    cdef Entry t, p
    while hi - lo > 16:
        mid = lo + (hi - lo) // 2
        # median of a[lo], a[mid], a[hi-1] moved to a[hi-1]
        if _less(a[mid], a[lo]):
            t = a[mid]
            a[mid] = a[lo]
            a[lo] = t
        if _less(a[hi - 1], a[lo]):
            t = a[hi - 1]
            a[hi - 1] = a[lo]
            a[lo] = t
        if _less(a[mid], a[hi - 1]):
            t = a[mid]
            a[mid] = a[hi - 1]
            a[hi - 1] = t
        p = a[hi - 1]
        store = lo
        for i in range(lo, hi - 1):
            t = a[i]
            lt = _less(t, p)
            a[i] = a[store]
            a[store] = t
            store += lt
        a[hi - 1] = a[store]
        a[store] = p
        if store == k or store + 1 == k:
            return
        if store > k:
            hi = store
        else:
            lo = store + 1
    for i in range(lo + 1, hi):
        t = a[i]
        j = i - 1
        while j >= lo and _less(t, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t


cdef enum:
    WIN = 8   # the search for the k-th smallest value stops with at most WIN values in its window


ctypedef struct Guards:
    # Labelled negative prototypes (docs/method.md, "Guards"), the model's arrays: label c's
    # guards are the first gn[c] rows of g from offsets[c] on (the map's own slots: at most as
    # many as its neurons), its supports the first sn[c] rows of s likewise; on[c]: its
    # decisions use them. g and s are (M, A) in the model's type: a row is contiguous.
    void *g
    void *s
    int64_t *gn
    int64_t *sn
    uint8_t *on
    const int64_t *off


cdef bint _guards_view(Guards *g, const floating[:, ::1] guards,
                       const int64_t[::1] guard_counts, const floating[:, ::1] supports,
                       const int64_t[::1] support_counts, const uint8_t[::1] guards_on,
                       const int64_t[::1] offsets, Py_ssize_t M, Py_ssize_t A,
                       Py_ssize_t L):
    """Fill g from the model's guard arrays (guards and supports (M, A), guard_counts,
    support_counts and guards_on (L)); False, g untouched, unless all are given with those
    shapes. The core writes through g only where its caller passed them writable (stream)."""
    if (guard_counts is None or supports is None or support_counts is None or guards_on is None
            or guards.shape[0] != M or guards.shape[1] != A or supports.shape[0] != M
            or supports.shape[1] != A or guard_counts.shape[0] != L
            or support_counts.shape[0] != L or guards_on.shape[0] != L):
        return False
    g.g = <void *> &guards[0, 0] if M > 0 and A > 0 else NULL
    g.s = <void *> &supports[0, 0] if M > 0 and A > 0 else NULL
    g.gn = <int64_t *> &guard_counts[0]
    g.sn = <int64_t *> &support_counts[0]
    g.on = <uint8_t *> &guards_on[0]
    g.off = &offsets[0]
    return True


ctypedef struct Work:
    float *dp           # (M) the instance's screening values, +inf for classes already ranked
    double *ex          # (M) exact distances computed for the current instance ...
    int64_t *stamp      # (M) ... valid where stamp[j] == cur
    int64_t cur
    Entry *ent          # (M) scratch for the neurons in the window of the k-th smallest value
    Entry *amb          # (M) scratch for the neurons the screening bound leaves in doubt ...
    Py_ssize_t n_amb    # ... how many (one round of the ranking)
    Py_ssize_t *winnr   # (L) best-matching unit of each map (global index); -1: no map, -2: not yet
    Py_ssize_t *votes   # (L)
    uint8_t *skip       # (L) classes out of the pool: ranked, or without a map
    Py_ssize_t *below   # (L) per class: how many screening values are below the last t
    uint8_t *in_y       # (L) classes in the prediction
    uint8_t *weak       # (L) ... accepted only thanks to a negative acceptance offset (robust)
    Py_ssize_t *rank    # (L) the winner classes in order, -1 after the last
    Py_ssize_t *moved   # (L) the online step's neurons to move (_learn_one)
    const void *wr      # a row-major copy of the neurons (M, A) in the model's type, or NULL:
                        # exact distances then read each neuron contiguously
    int64_t cnt[N_COUNTERS]  # this thread's counts (_core_switches.pxi), added to _counts
                             # when the workspace is freed: no shared counter per row
    bint ctl            # the robust variant's acceptance offset is on: the Bayes test's right-
    double theta        # hand side gets + theta
    Py_ssize_t n_rej    # the ranked labels the last Bayes decision's test rejected
    const double *phl   # (L) the robust variant's per-label acceptance offsets, or NULL: label
                        # c's right-hand side gets + theta + phl[c] (w.ctl set)
    uint8_t *rej        # (L) with phl: the labels whose test the last Bayes decision rejected
    const double *thl   # (L) each label's acceptance offset learnt from labels, or NULL
    bint extra          # labels have taught the rule (an entry): the labels beyond the ranking
                        # are tested too (_bayes_decision)
    bint rec            # record the Bayes tests' margins (a labelled instance): ...
    double *marg        # (L) ... OUT the margin of every label tested (mkind 1)
    uint8_t *mkind      # (L) ... OUT 0: ranked first, 1: tested, 2: neither (set by caller)
    float *rt           # (L) per round of the ranking: the k_nn-th smallest screening value of
                        # the pool (+inf: the whole pool voted; NaN: decided exactly)
    uint8_t *tie        # (L) classes whose votes tied another's in some round
    double *lla         # (L) per map, a lower bound of its neurons' log averOut, and ...
    double *rmin        # (L) ... of its Bayes test's right-hand side (_col_sum) ...
    uint8_t *rdirty     # (L) ... to compute again before its next use (its column changed)
    bint has_bounds     # ... kept by the online phase (_start_bounds): the labels beyond the
                        # ranking are then ruled out from the screening values when they can
                        # be (_bayes_test)
    const Guards *gd    # each label's guards, or NULL (_vetoed)
    uint8_t *mveto      # (L) OUT (w.rec) whether a tested label's instance was nearer a guard
    Py_ssize_t cap      # with w.extra, at most this many labels are predicted, 0: no bound
                        # (_label_cap, _bound_labels)
    double *brhs        # (L) per label accepted: its test's right-hand side, then (beyond the
    Py_ssize_t *bbc     # ranking) its slack; and its best-matching unit (_bound_labels)


cdef Work *_work_alloc(Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Work *w = <Work *> malloc(sizeof(Work))
    cdef Py_ssize_t j
    if w == NULL:
        return NULL
    w.dp = <float *> malloc(M * sizeof(float))
    w.ex = <double *> malloc(M * sizeof(double))
    w.stamp = <int64_t *> malloc(M * sizeof(int64_t))
    w.ent = <Entry *> malloc(M * sizeof(Entry))
    w.amb = <Entry *> malloc(M * sizeof(Entry))
    w.winnr = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.votes = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.skip = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.below = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.in_y = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.weak = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.rank = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.moved = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.rt = <float *> malloc(L * sizeof(float))
    w.tie = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.marg = <double *> malloc(L * sizeof(double))
    w.mkind = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.lla = <double *> malloc(L * sizeof(double))
    w.rmin = <double *> malloc(L * sizeof(double))
    w.rdirty = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.mveto = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.rej = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.brhs = <double *> malloc(L * sizeof(double))
    w.bbc = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    if (w.dp == NULL or w.brhs == NULL or w.bbc == NULL or w.mveto == NULL or w.ex == NULL
            or w.stamp == NULL or w.ent == NULL or w.amb == NULL or w.winnr == NULL
            or w.votes == NULL or w.in_y == NULL or w.weak == NULL or w.rank == NULL
            or w.moved == NULL or w.marg == NULL or w.mkind == NULL or w.rt == NULL
            or w.tie == NULL or w.lla == NULL or w.rmin == NULL or w.rdirty == NULL
            or w.skip == NULL or w.below == NULL or w.rej == NULL):
        _work_free(w)
        return NULL
    w.cur = 0
    w.wr = NULL
    w.ctl = 0
    w.theta = 0.0
    w.n_rej = 0
    w.phl = NULL
    w.thl = NULL
    w.extra = 0
    w.rec = 0
    w.has_bounds = 0
    w.gd = NULL
    w.cap = 0
    for j in range(N_COUNTERS):
        w.cnt[j] = 0
    for j in range(M):
        w.stamp[j] = -1
    return w


cdef void _work_free(Work *w) noexcept nogil:
    cdef int j
    if w == NULL:
        return
    for j in range(N_COUNTERS):
        _counts[j] += w.cnt[j]
    free(w.dp)
    free(w.ex)
    free(w.stamp)
    free(w.ent)
    free(w.amb)
    free(w.winnr)
    free(w.votes)
    free(w.skip)
    free(w.below)
    free(w.in_y)
    free(w.weak)
    free(w.rank)
    free(w.moved)
    free(w.rt)
    free(w.tie)
    free(w.marg)
    free(w.mkind)
    free(w.lla)
    free(w.rmin)
    free(w.rdirty)
    free(w.mveto)
    free(w.rej)
    free(w.brhs)
    free(w.bbc)
    free(w)


cdef inline double _exact(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          Py_ssize_t j, Work *w) noexcept nogil:
    """Exact squared distance from the current instance to neuron j, computed once (from the
    row-major copy when there is one: the same sums in the same order)."""
    if w.stamp[j] != w.cur:
        if w.wr != NULL:
            w.ex[j] = _sqdist_row(x, <const floating *> w.wr + j * A, A)
        else:
            w.ex[j] = _sqdist_col(x, Wt, A, M, j)
        w.stamp[j] = w.cur
    return w.ex[j]


cdef void _log_cond(const int64_t *T, Py_ssize_t L, double *logC, Py_ssize_t c) noexcept nogil:
    """OUT column c of logC: logC[k, c] = log P[k, c] = log(T[k, c] / T[c, c]), -inf when 0."""
    cdef Py_ssize_t k
    cdef int64_t tcc = T[c * L + c]
    for k in range(L):
        if tcc > 0 and T[k * L + c] > 0:
            logC[k * L + c] = log(<double> T[k * L + c] / <double> tcc)
        else:
            logC[k * L + c] = -INFINITY


cdef inline Py_ssize_t _winner(const floating *x, const float *d, double gap, const floating *Wt,
                               Py_ssize_t A, Py_ssize_t M, const int64_t *offsets, Py_ssize_t c,
                               Work *w) noexcept nogil:
    """The best-matching unit of label c's map (which must exist), found once per instance."""
    if w.winnr[c] == -2:
        if w.wr != NULL:
            w.winnr[c] = _refine_argmin(x, d, gap, <const floating *> w.wr, A, 1, A, offsets[c],
                                        offsets[c + 1], w.ex, w.stamp, w.cur)
        else:
            w.winnr[c] = _refine_argmin(x, d, gap, Wt, A, M, 1, offsets[c], offsets[c + 1], w.ex,
                                        w.stamp, w.cur)
    return w.winnr[c]


cdef inline bint _nearer(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                         Py_ssize_t a, float da, Py_ssize_t b, float db, double gap,
                         Work *w) noexcept nogil:
    """Whether neuron a is before neuron b in the exact (distance, index) order, given their
    screening values da and db: decided by those unless within the gap of each other."""
    cdef Entry e1, e2
    if <double> da + gap < <double> db:
        return True
    if <double> db + gap < <double> da:
        return False
    w.cnt[CNT_TIE] += 1
    e1.d = _exact(x, Wt, A, M, a, w)
    e1.j = a
    e2.d = _exact(x, Wt, A, M, b, w)
    e2.j = b
    return _less(e1, e2)


cdef inline void _nearest_exact(const floating *x, const floating *Wt, Py_ssize_t A,
                                Py_ssize_t M, Py_ssize_t n_amb, Py_ssize_t need,
                                Work *w) noexcept nogil:
    """Put the need nearest, exactly, of the n_amb neurons in doubt (w.amb) first (exact
    distances only when some are left out)."""
    cdef Py_ssize_t j
    if need < n_amb:
        w.cnt[CNT_KNN] += 1
        for j in range(n_amb):
            w.amb[j].d = _exact(x, Wt, A, M, w.amb[j].j, w)
        _select_smallest(w.amb, n_amb, need)


cdef inline void _gap_window(double t, double gap, float *f1, float *f2) noexcept nogil:
    """OUT [f1, f2): float32 bounds that hold every value v with t - gap <= v <= t + gap (and
    only a few more): the screening values whose order against t the gap leaves in doubt."""
    cdef float a = <float> (t - gap), b = <float> (t + gap)
    if <double> a > t - gap:
        a = nextafterf(a, -INFINITY)
    if <double> b < t + gap:
        b = nextafterf(b, INFINITY)
    f1[0] = a
    f2[0] = nextafterf(b, INFINITY)


cdef inline bint _bayes_rhs(const int64_t *T, const double *logC, Py_ssize_t L, Py_ssize_t c,
                            const uint8_t *in_y, bint skip_zero, double *rhs) noexcept nogil:
    """The right-hand side of the Bayes test of label c given the labels in_y already predicted
    (OUT rhs); False when a zero P[d, c] for d in in_y rules c out (unless skip_zero)."""
    cdef Py_ssize_t kk
    cdef double s = 0.0
    cdef bint zero = False, y
    cdef int64_t tk
    # without a branch on the labels (they vary from instance to instance): an excluded term
    # adds +0.0, which leaves the sum as it is (it is never -0.0: log P[k, c] <= 0, and
    # log 1 = +0.0)
    for kk in range(L):
        tk = T[kk * L + c]
        y = in_y[kk] != 0 or kk == c
        zero = zero | ((in_y[kk] != 0) & (tk == 0) & (kk != c))
        s = s + (logC[kk * L + c] if (not y) & (tk > 0) else 0.0)
    if zero and not skip_zero:
        return False
    rhs[0] = s
    return True


cdef inline void _dist_bounds(float dv, double gap, bint squared, double *lo,
                              double *hi) noexcept nogil:
    """Bounds of the distance (squared or not) whose screening value is dv: the exact squared
    distance lies within gap / 2 of it."""
    lo[0] = <double> dv - 0.5 * gap
    hi[0] = <double> dv + 0.5 * gap
    lo[0] = lo[0] if lo[0] > 0.0 else 0.0
    if not squared:
        lo[0] = sqrt(lo[0])
        hi[0] = sqrt(hi[0])


cdef inline bint _bayes_accept(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                               Py_ssize_t bc, float dv, double gap, double rhs,
                               const double *logA, bint squared, Work *w) noexcept nogil:
    """The Bayes test -dist - log averOut_bc >= rhs for the best-matching unit bc, whose screening
    value is dv. The test is monotone in the distance: the exact distance lies within gap / 2 of
    the screening value, and it is only computed when the test differs at the two ends."""
    cdef double lo_d, hi_d, dist
    _dist_bounds(dv, gap, squared, &lo_d, &hi_d)
    if -hi_d - logA[bc] >= rhs:
        return True
    if -lo_d - logA[bc] < rhs:
        return False
    w.cnt[CNT_BAYES] += 1
    dist = _exact(x, Wt, A, M, bc, w)
    if not squared:
        dist = sqrt(dist)
    return -dist - logA[bc] >= rhs


cdef inline bint _accept_margin(const floating *x, const floating *Wt, Py_ssize_t A,
                                Py_ssize_t M, Py_ssize_t c, Py_ssize_t bc, float dv, double gap,
                                double rhs, const double *logA, bint squared,
                                Work *w) noexcept nogil:
    """The Bayes test of label c (best-matching unit bc, screening value dv) with the label's
    acceptance offset learnt from labels (w.thl; docs/method.md): accept iff the margin
    (-dist - log averOut_bc) - rhs >= thl[c]. With no offset (or 0) this is _bayes_accept's
    test (a - rhs >= 0 exactly when a >= rhs). The margin is recorded when w.rec is set."""
    cdef double dist, m, lo_d, hi_d
    if w.thl == NULL or (w.thl[c] == 0.0 and not w.rec):
        return _bayes_accept(x, Wt, A, M, bc, dv, gap, rhs, logA, squared, w)
    if not w.rec:
        # as _bayes_accept: the margin is monotone in the distance, which lies within gap / 2
        # of the screening value; exact only when the two ends disagree
        _dist_bounds(dv, gap, squared, &lo_d, &hi_d)
        if (-hi_d - logA[bc]) - rhs >= w.thl[c]:
            return True
        if (-lo_d - logA[bc]) - rhs < w.thl[c]:
            return False
        w.cnt[CNT_BAYES] += 1
    dist = _exact(x, Wt, A, M, bc, w)
    if not squared:
        dist = sqrt(dist)
    m = (-dist - logA[bc]) - rhs
    if w.rec and isfinite(m):
        w.marg[c] = m
        w.mkind[c] = 1
    return m >= w.thl[c]


cdef inline Py_ssize_t _nearest_below(const floating *x, const void *P, Py_ssize_t A,
                                      Py_ssize_t o, Py_ssize_t n, double *bound,
                                      bint first) noexcept nogil:
    """The nearest of the n rows o, o + 1, ... of P (M, A) to x among those strictly nearer
    than *bound (exact squared distances, the first on a tie), or -1; IN/OUT *bound, lowered to
    its distance; first: the first row strictly nearer instead (kern mlsom_nearest_below)."""
    cdef Py_ssize_t j
    if floating is double:
        j = mlsom_nearest_below_d(x, <const double *> P + o * A, A, n, bound, first)
    else:
        j = mlsom_nearest_below_f(x, <const float *> P + o * A, A, n, bound, first)
    return o + j if j >= 0 else -1


cdef bint _vetoed(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                  Py_ssize_t c, Py_ssize_t bc, Work *w) noexcept nogil:
    """Whether x is strictly nearer one of label c's guards (w.gd, at least one) than its
    best-matching unit bc and every one of its supports (exact squared distances)."""
    cdef const Guards *gd = w.gd
    cdef double dp = _exact(x, Wt, A, M, bc, w)
    w.cnt[CNT_GUARD] += 1
    if gd.sn[c] > 0:
        _nearest_below(x, gd.s, A, gd.off[c], gd.sn[c], &dp, False)
    return _nearest_below(x, gd.g, A, gd.off[c], gd.gn[c], &dp, True) >= 0


cdef inline bint _accept(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                         Py_ssize_t c, Py_ssize_t bc, float dv, double gap, double rhs,
                         const double *logA, bint squared, Work *w) noexcept nogil:
    """The Bayes test of label c with its offset (_accept_margin), then its guards: a label
    whose decisions use them (w.gd.on[c]) is rejected where x is nearer one of them than its
    map and supports (_vetoed). On a labelled instance (w.rec) every tested label whose margin
    is recorded also records whether x was nearer a guard (w.mveto[c]), whether the label uses
    its guards or not."""
    cdef bint ok = _accept_margin(x, Wt, A, M, c, bc, dv, gap, rhs, logA, squared, w)
    cdef bint v
    if w.gd == NULL or w.gd.gn[c] == 0:
        return ok
    if w.rec and w.mkind[c] == 1 and w.marg[c] >= (w.thl[c] if w.thl[c] < 0.0 else 0.0):
        v = _vetoed(x, Wt, A, M, c, bc, w)
        w.mveto[c] = v
        return ok and not (v and w.gd.on[c])
    return ok and not (w.gd.on[c] and _vetoed(x, Wt, A, M, c, bc, w))


cdef inline void _narrow_to_window(const float *dp, Py_ssize_t M, Py_ssize_t k_nn, float *fa,
                                   Py_ssize_t *ca, float *fb, Py_ssize_t *cb,
                                   Work *w) noexcept nogil:
    """Step 2, the k-th smallest screening value: narrow the bracket [fa, fb) of dp's values
    (#{dp < fa} = ca < k_nn <= cb = #{dp < fb}) until at most WIN values are left in it, or none
    can be split (IN/OUT fa, ca, fb, cb).

    Each pass counts the values below two trial values, interpolated linearly around the
    expected place of the k_nn-th value, with a bisection whenever an interpolation failed to
    halve the values left."""
    cdef Py_ssize_t old, cp, cq
    cdef double q1, q2, m, inv
    cdef float fp, fq
    cdef bint bisect = False
    while cb[0] - ca[0] > WIN:
        old = cb[0] - ca[0]
        # two trial values around the expected place of the k_nn-th value (linear
        # interpolation within the bracket), a margin of m values either side
        if bisect:
            q1 = 1.0 / 3.0
            q2 = 2.0 / 3.0
        else:
            m = 0.125 * WIN + 0.03125 * old
            inv = 1.0 / <double> old
            q1 = (<double> (k_nn - ca[0]) - 0.5 - m) * inv
            q2 = (<double> (k_nn - ca[0]) - 0.5 + m) * inv
            if q1 < 0.5 * (<double> (k_nn - ca[0]) - 0.5) * inv:
                q1 = 0.5 * (<double> (k_nn - ca[0]) - 0.5) * inv
            if q2 > 1.0 - 0.5 * (<double> (cb[0] - k_nn) + 0.5) * inv:
                q2 = 1.0 - 0.5 * (<double> (cb[0] - k_nn) + 0.5) * inv
        fp = <float> (<double> fa[0] + (<double> fb[0] - <double> fa[0]) * q1)
        fq = <float> (<double> fa[0] + (<double> fb[0] - <double> fa[0]) * q2)
        if fa[0] < fp and fp < fq and fq < fb[0]:
            cp = mlsom_count_lt2_f(dp, M, fp, fq, &cq)
            if cp >= k_nn:
                fb[0] = fp
                cb[0] = cp
            elif cq < k_nn:
                fa[0] = fq
                ca[0] = cq
            else:
                fa[0] = fp
                ca[0] = cp
                fb[0] = fq
                cb[0] = cq
        else:
            fp = <float> (0.5 * <double> fa[0] + 0.5 * <double> fb[0])
            if not (fp > fa[0] and fp < fb[0]):
                w.cnt[CNT_WIDE] += 1   # no value left between fa and fb
                return
            cp = mlsom_count_lt_f(dp, M, fp)
            if cp < k_nn:
                fa[0] = fp
                ca[0] = cp
            else:
                fb[0] = fp
                cb[0] = cp
        bisect = 2 * (cb[0] - ca[0]) > old


cdef inline Py_ssize_t _screened_votes(const float *d, double gap, Py_ssize_t M,
                                       const int64_t *offsets, Py_ssize_t L, Py_ssize_t k_nn,
                                       Py_ssize_t n_pool, bint first, float *fa, float ftop,
                                       Work *w) noexcept nogil:
    """Step 2, one round, screened: the votes (w.votes) of the pool's neurons certainly among
    its k_nn nearest, and the neurons in doubt (w.amb); returns how many of those still vote.

    The k_nn-th smallest screening value t of the pool (w.dp: the classes already ranked at
    +inf) is found without sorting (_narrow_to_window, then a selection among the at most WIN
    values left). The neurons below t - gap are then among the k_nn nearest exactly, those above
    t + gap are not; those in between are in doubt. Removing a class can only raise t, so a
    round starts from the previous round's t (IN/OUT fa; first: the first round)."""
    cdef Py_ssize_t c, j, ca = 0, cb = n_pool, n_ent, n_def, n_amb, need
    cdef float fb = ftop, f1, f2, fa_w
    cdef double t
    if not first:
        # the values of the pool below the last round's t (counted then, per map)
        for c in range(L):
            if not w.skip[c]:
                ca += w.below[c]
    _narrow_to_window(w.dp, M, k_nn, fa, &ca, &fb, &cb, w)
    n_ent = mlsom_gather_range_f(w.dp, M, fa[0], fb, w.ent)
    need = k_nn - ca
    _select_smallest(w.ent, n_ent, need)
    t = w.ent[0].d
    for j in range(1, need):
        t = w.ent[j].d if w.ent[j].d > t else t
    fa_w = fa[0]
    fa[0] = <float> t   # exactly: t is one of the values
    _gap_window(t, gap, &f1, &f2)
    # per map in the pool: the values below f1 (their votes) and below t (for the next round's
    # start), in one pass
    mlsom_count_maps_f(d, offsets, L, w.skip, f1, fa[0], w.votes, w.below)
    n_def = 0
    for c in range(L):
        n_def += w.votes[c]
    if f1 >= fa_w and f2 <= fb:
        # the window holds every value in [f1, f2)
        n_amb = 0
        for j in range(n_ent):
            if w.ent[j].d >= f1 and w.ent[j].d < f2:
                w.amb[n_amb] = w.ent[j]
                n_amb += 1
    else:
        n_amb = mlsom_gather_range_f(w.dp, M, f1, f2, w.amb)
    w.n_amb = n_amb
    return k_nn - n_def


cdef inline Py_ssize_t _round_winner(const floating *x, const float *d, double gap,
                                     const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                                     const int64_t *offsets, Py_ssize_t L,
                                     Work *w) noexcept nogil:
    """Step 2, one round's winner: the class with the most votes (w.votes); ties go to the class
    whose best-matching unit is nearer (its nearest voting neuron), then to the lower index."""
    cdef Py_ssize_t c, best = -1, bc, bb2
    for c in range(L):
        if w.votes[c] == 0:
            continue
        if best < 0 or w.votes[c] > w.votes[best]:
            best = c
        elif w.votes[c] == w.votes[best]:
            w.tie[c] = 1
            w.tie[best] = 1
            # the nearer best-matching unit wins; screening decides unless within the gap
            bc = _winner(x, d, gap, Wt, A, M, offsets, c, w)
            bb2 = _winner(x, d, gap, Wt, A, M, offsets, best, w)
            if _nearer(x, Wt, A, M, bc, d[bc], bb2, d[bb2], gap, w):
                best = c
    return best


cdef inline bint _is_ranked(const Py_ssize_t *rank, Py_ssize_t n_ranked,
                            Py_ssize_t c) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(n_ranked):
        if rank[r] == c:
            return True
    return False


cdef inline double _reach(double lla, double rhs, double th, bint squared) noexcept nogil:
    """The squared distance (or the distance, where distances are squared) beyond which no
    neuron whose log averOut is >= lla passes the Bayes test -dist - log averOut - rhs >= th,
    with a relative slack of 1e-9, far above the rounding of the terms; -1 where none passes,
    +inf (or NaN: in doubt) where the terms are infinite."""
    cdef double lim = -lla - rhs - th
    lim = lim + 1e-9 * (fabs(lla) + fabs(rhs) + fabs(th))
    if lim < 0.0:
        return -1.0
    return lim if squared else lim * lim


cdef inline double _col_sum(const int64_t *T, const double *logC, Py_ssize_t L,
                            Py_ssize_t c) noexcept nogil:
    """The sum of min(log P[k, c], 0) over k != c with T[k, c] > 0: a lower bound of the Bayes
    test's right-hand side of label c whatever the labels predicted (_bayes_rhs sums some of
    the same terms; every term left out or capped is >= 0)."""
    cdef Py_ssize_t k
    cdef double s = 0.0
    for k in range(L):
        if k != c and T[k * L + c] > 0:
            s = s + (logC[k * L + c] if logC[k * L + c] < 0.0 else 0.0)
    return s


cdef inline double _toff(const Work *w, Py_ssize_t c) noexcept nogil:
    """The robust variant's acceptance offset of label c (w.ctl set): theta, plus the label's own
    offset where the model has them (added in that order, as the reference does)."""
    if w.phl == NULL:
        return w.theta
    return w.theta + w.phl[c]


cdef inline double _offset_rhs(const Work *w, double rhs, Py_ssize_t c) noexcept nogil:
    """Label c's Bayes test right-hand side with the robust variant's acceptance offsets (w.ctl
    set): + theta, then + the label's own (in that order, as the reference adds them)."""
    rhs = rhs + w.theta
    if w.phl != NULL:
        rhs = rhs + w.phl[c]
    return rhs


cdef inline void _rejected(Work *w, Py_ssize_t c) noexcept nogil:
    """A ranked (or tested) label's Bayes test failed: count it, and flag the label."""
    w.n_rej += 1
    w.rej[c] = 1


cdef inline bint _bayes_test(const floating *x, const float *d, double gap, const floating *Wt,
                             Py_ssize_t A, Py_ssize_t M, const int64_t *offsets, Py_ssize_t L,
                             const int64_t *T, const double *logC, const double *logA,
                             Py_ssize_t c, bint squared, bint skip_zero, bint beyond,
                             Work *w) noexcept nogil:
    """The Bayes test of label c given the labels w.in_y already predicted; sets w.in_y[c] (and
    w.weak[c]) when it passes, counts w.n_rej when it fails. Returns whether it passed.

    A label beyond the ranking (beyond) is first ruled out without its best-matching unit where
    its whole map is out of reach (w.has_bounds, and no margin to record): the test passes only
    if dist <= -log averOut_bc - rhs - offset, -lla[c] bounds -log averOut of every neuron of
    the map, and the smallest screening value less half the gap bounds the squared distances. First
    with the right-hand side's lower bound w.rmin[c] (no pass over the labels predicted), then
    with the right-hand side itself; the slack of _reach makes each rule out only what the test
    itself would reject."""
    cdef Py_ssize_t bc
    cdef double rhs, rhs0, th = 0.0, theta = 0.0, dmin = INFINITY, q
    cdef bint bound = beyond and w.has_bounds and not w.rec
    if bound:
        if w.thl != NULL:
            th = w.thl[c]
        if w.ctl:
            theta = _toff(w, c)
        if w.rdirty[c]:
            w.rmin[c] = _col_sum(T, logC, L, c)
            w.rdirty[c] = 0
        mlsom_max_f(d + offsets[c], offsets[c + 1] - offsets[c], &dmin)
        dmin = dmin - 0.5 * gap
        q = _reach(w.lla[c], w.rmin[c] + theta, th, squared)
        if dmin > q:
            # rejected, unless the zero rule rules c out first (the robust variant counts the
            # tests that fail, not the labels that rule rules out)
            w.cnt[CNT_REACH] += 1
            if w.ctl and not _bayes_rhs(T, logC, L, c, w.in_y, skip_zero, &rhs):
                return False
            _rejected(w, c)
            return False
    if not _bayes_rhs(T, logC, L, c, w.in_y, skip_zero, &rhs):
        return False
    rhs0 = rhs
    if w.ctl:
        rhs = _offset_rhs(w, rhs, c)
    if bound and dmin > _reach(w.lla[c], rhs, th, squared):
        w.cnt[CNT_REACH] += 1
        _rejected(w, c)
        return False
    bc = _winner(x, d, gap, Wt, A, M, offsets, c, w)
    if _accept(x, Wt, A, M, c, bc, d[bc], gap, rhs, logA, squared, w):
        w.in_y[c] = 1
        w.brhs[c] = rhs
        w.bbc[c] = bc
        # accepted only thanks to a negative offset: predicted, not learnt from (a label beyond
        # the ranking never is: no need to ask)
        if not beyond and ((w.ctl and _toff(w, c) < 0) or (w.thl != NULL and w.thl[c] < 0)):
            w.weak[c] = not _bayes_accept(x, Wt, A, M, bc, d[bc], gap, rhs0, logA, squared, w)
        return True
    _rejected(w, c)
    return False


cdef inline Py_ssize_t _bayes_decision(const floating *x, const float *d, double gap,
                                       const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                                       const int64_t *offsets, Py_ssize_t L, const int64_t *T,
                                       const double *logC, const double *logA,
                                       Py_ssize_t n_ranked, bint squared, bint skip_zero,
                                       Work *w) noexcept nogil:
    """Step 3, the Bayes decision in log space over the ranked classes w.rank[:n_ranked] (the
    first is always predicted), then, once labels have taught the rule (w.extra), over every other
    label with a map, in label order: OUT w.in_y; returns the number of labels predicted.

    The score p(c) prod_{d in Y} P[d,c] out_c is compared with the threshold
    p(c) prod_{k != c, P[k,c] > 0} P[k,c] averOut_b. Their common factors cancel, which leaves:
    accept c iff no P[d,c] = 0 for d in Y (unless skip_zero) and
    -dist - log averOut_b >= sum_{k not in Y, k != c, P[k,c] > 0} log P[k,c]."""
    cdef Py_ssize_t r, c, n_pred = 1
    w.in_y[w.rank[0]] = 1
    w.n_rej = 0
    if w.phl != NULL:
        for c in range(L):
            w.rej[c] = 0
    if w.rec:
        w.mkind[w.rank[0]] = 0
    for r in range(1, n_ranked):
        n_pred += _bayes_test(x, d, gap, Wt, A, M, offsets, L, T, logC, logA, w.rank[r], squared,
                              skip_zero, False, w)
    if w.extra and n_ranked < L:
        for c in range(L):
            if offsets[c + 1] > offsets[c] and not _is_ranked(w.rank, n_ranked, c):
                n_pred += _bayes_test(x, d, gap, Wt, A, M, offsets, L, T, logC, logA, c,
                                      squared, skip_zero, True, w)
    if w.extra:
        n_pred = _bound_labels(x, Wt, A, M, L, logA, squared, w.rank, n_ranked, n_pred, w)
    return n_pred


cdef inline Py_ssize_t _label_cap(const double *zl) noexcept nogil:
    """How many labels an instance may get once labels have taught the rule: the ceiling of the
    labelled cardinality z (zl[0], set where zl[1] != 0), at least 1; 0 (no bound) before
    labels set z."""
    cdef Py_ssize_t c
    if zl == NULL or zl[1] == 0.0:
        return 0
    c = <Py_ssize_t> ceil(zl[0])
    return c if c > 1 else 1


cdef Py_ssize_t _bound_labels(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                              Py_ssize_t L, const double *logA, bint squared,
                              const Py_ssize_t *rank, Py_ssize_t n_ranked, Py_ssize_t n_pred,
                              Work *w) noexcept nogil:
    """Once labels have taught the rule (w.extra), at most w.cap labels are predicted
    (_label_cap): the ranked labels predicted first, in ranking order, then the labels beyond
    the ranking by their slack (margin less the label's offset), the largest first, label order
    on a tie. The others leave w.in_y (and w.weak). Returns the number of labels predicted
    (docs/method.md, "The labels beyond the ranking")."""
    cdef Py_ssize_t cap = w.cap, kept = 0, r, c, best
    cdef double dist
    if cap <= 0 or n_pred <= cap:
        return n_pred
    for r in range(n_ranked):
        c = rank[r]
        if w.in_y[c]:
            if kept < cap:
                kept += 1
            else:
                w.in_y[c] = 0
                w.weak[c] = 0
    for c in range(L):  # the labels accepted beyond the ranking: their slack, flagged 2
        if w.in_y[c] and not _is_ranked(rank, n_ranked, c):
            dist = _exact(x, Wt, A, M, w.bbc[c], w)
            if not squared:
                dist = sqrt(dist)
            w.brhs[c] = (-dist - logA[w.bbc[c]]) - w.brhs[c]
            if w.thl != NULL:
                w.brhs[c] = w.brhs[c] - w.thl[c]
            w.in_y[c] = 2
    while kept < cap:
        best = -1
        for c in range(L):
            if w.in_y[c] == 2 and (best < 0 or w.brhs[c] > w.brhs[best]):
                best = c
        if best < 0:
            break
        w.in_y[best] = 1
        kept += 1
    for c in range(L):
        if w.in_y[c] == 2:
            w.in_y[c] = 0
            w.weak[c] = 0
    return kept


cdef Py_ssize_t _classify(const floating *x, const float *d, double gap, const floating *Wt,
                          Py_ssize_t A, Py_ssize_t M, const int32_t *ncls, const int64_t *offsets,
                          Py_ssize_t L, const int64_t *T, const double *logC, const double *logA,
                          Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                          Work *w) noexcept nogil:
    """Classify x from a frozen state, given its screening distances d to every neuron and the gap
    2 tol that bounds their disagreement with the exact distances (infinite: every decision exact).

    OUT w.rank[:n_ranked], w.in_y, w.winnr. Returns the number of labels predicted; the labels are
    w.rank[r] for r with w.in_y set.
    """
    cdef Py_ssize_t c, j, p_, n_pool = 0, n_ranked = 0, need, best
    cdef double lo, hi
    cdef float fa, ftop
    w.cur += 1
    w.n_rej = 0

    # 1. the best-matching unit of a map is found when it is first needed (_winner): for a tie,
    #    for the Bayes test of a ranked label, for the update of a predicted one
    for c in range(L):
        w.skip[c] = offsets[c + 1] == offsets[c]
        w.in_y[c] = 0
        w.weak[c] = 0
        w.winnr[c] = -2 if offsets[c + 1] > offsets[c] else -1
        w.tie[c] = 0
        n_pool += offsets[c + 1] - offsets[c]

    # 2. winner-class ranking, n_rank rounds: the k_nn nearest neurons of the classes not yet
    #    ranked vote; the majority wins (_round_winner). The k_nn nearest are those the screening
    #    values decide (_screened_votes), completed by the exactly nearest of those in doubt.
    hi = mlsom_max_f(d, M, &lo)
    memcpy(w.dp, d, M * sizeof(float))
    fa = <float> lo
    ftop = nextafterf(<float> hi, INFINITY)
    for p_ in range(n_rank):
        if n_pool == 0:
            break  # every map has been ranked
        for c in range(L):
            w.votes[c] = 0
        if n_pool <= k_nn:
            w.rt[p_] = INFINITY
            for c in range(L):
                if not w.skip[c]:
                    w.votes[c] = offsets[c + 1] - offsets[c]
        else:
            if isfinite(gap):
                need = _screened_votes(d, gap, M, offsets, L, k_nn, n_pool, p_ == 0, &fa, ftop,
                                       w)
                w.rt[p_] = fa  # the round's k_nn-th smallest screening value
            else:
                w.rt[p_] = NAN
                # every distance decided exactly: the whole pool is in doubt
                w.n_amb = mlsom_gather_range_f(w.dp, M, -INFINITY, INFINITY, w.amb)
                need = k_nn
            _nearest_exact(x, Wt, A, M, w.n_amb, need, w)
            for j in range(need):
                w.votes[ncls[w.amb[j].j]] += 1
        best = _round_winner(x, d, gap, Wt, A, M, offsets, L, w)
        w.rank[n_ranked] = best
        n_ranked += 1
        w.skip[best] = 1
        for j in range(offsets[best], offsets[best + 1]):
            w.dp[j] = INFINITY
        n_pool -= offsets[best + 1] - offsets[best]
    for j in range(n_ranked, L):
        w.rank[j] = -1
    if n_ranked == 0:
        return 0

    # 3. the Bayes decision over the ranked classes
    return _bayes_decision(x, d, gap, Wt, A, M, offsets, L, T, logC, logA, n_ranked, squared,
                           skip_zero, w)
