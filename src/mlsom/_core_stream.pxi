# One instance of the online phase: classify it, then move its predicted labels' best units
# and update T, N, S and averOut (_learn_one); a labelled instance (_learn_labels). The loop
# over a chunk is in _core_online.pxi, its entry point in _core_state.pxi.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

cdef inline Py_ssize_t _ceil_div(int64_t a, int64_t b) noexcept nogil:
    return <Py_ssize_t> ((a + b - 1) // b)


cdef inline floating _move_neuron(const floating *x, floating *wt, Py_ssize_t A, Py_ssize_t M,
                                  Py_ssize_t b, floating etaf, float *Ws, const double *cc,
                                  const float *xp, Py_ssize_t npend, float *gp,
                                  float *nrm) noexcept nogil:
    """Algorithm 1's update of one best-matching unit b: w_b <- w_b + eta (x - w_b).

    Returns the exact squared distance from x to the moved neuron (summed in _sqdist_col's
    order). On the way, OUT its centred float32 copy (column b of Ws) and that copy's squared
    norm nrm, and gp[r] = xp_r . ws for the npend (at most 3) centred instances xp of the
    screening block still to come, whose screening values of b the caller then recomputes."""
    cdef Py_ssize_t i, a8 = A - A % 8
    cdef floating wv, tv, s = 0
    cdef floating sl[8]
    cdef float ws, nr = 0
    for i in range(8):
        sl[i] = 0
    gp[0] = 0
    gp[1] = 0
    gp[2] = 0
    for i in range(A):
        wv = wt[i * M + b]
        wv = wv + etaf * (x[i] - wv)
        wt[i * M + b] = wv
        tv = x[i] - wv
        if i < a8:
            sl[i & 7] = sl[i & 7] + tv * tv
        else:
            if i == a8:
                s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + ((sl[4] + sl[5]) + (sl[6] + sl[7]))
            s = s + tv * tv
        ws = <float> (<double> wv - cc[i])
        Ws[i * M + b] = ws
        nr = nr + ws * ws
        if npend > 0:
            gp[0] = gp[0] + xp[i] * ws
            if npend > 1:
                gp[1] = gp[1] + xp[A + i] * ws
                if npend > 2:
                    gp[2] = gp[2] + xp[2 * A + i] * ws
    if a8 == A:
        s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + ((sl[4] + sl[5]) + (sl[6] + sl[7]))
    nrm[0] = nr
    return s


cdef inline void _move_pair(const floating *x, floating *wt, Py_ssize_t A, Py_ssize_t M,
                            Py_ssize_t b0, Py_ssize_t b1, floating etaf, float *Ws,
                            const double *cc, const float *xp, Py_ssize_t npend, float *gp0,
                            float *gp1, float *nrm, floating *s) noexcept nogil:
    """_move_neuron for two neurons b0 != b1 in one pass over the features: each neuron's sums
    are those of _move_neuron, in the same order (bit-identical), but the two neurons' serial
    chains of additions interleave, so the pass costs about what one neuron's did. OUT nrm[0:2],
    s[0:2] and the look-ahead products gp0 and gp1 (npend values each)."""
    cdef Py_ssize_t i, j, a8 = A - A % 8
    cdef floating v0, v1, t0, t1, s0 = 0, s1 = 0
    cdef floating l0[8]
    cdef floating l1[8]
    cdef float w0, w1, n0 = 0, n1 = 0, x0, x1, x2
    cdef float g00 = 0, g01 = 0, g02 = 0, g10 = 0, g11 = 0, g12 = 0
    for j in range(8):
        l0[j] = 0
        l1[j] = 0
    for i in range(A):
        v0 = wt[i * M + b0]
        v1 = wt[i * M + b1]
        v0 = v0 + etaf * (x[i] - v0)
        v1 = v1 + etaf * (x[i] - v1)
        wt[i * M + b0] = v0
        wt[i * M + b1] = v1
        t0 = x[i] - v0
        t1 = x[i] - v1
        if i < a8:
            l0[i & 7] = l0[i & 7] + t0 * t0
            l1[i & 7] = l1[i & 7] + t1 * t1
        else:
            if i == a8:
                s0 = ((l0[0] + l0[1]) + (l0[2] + l0[3])) + ((l0[4] + l0[5]) + (l0[6] + l0[7]))
                s1 = ((l1[0] + l1[1]) + (l1[2] + l1[3])) + ((l1[4] + l1[5]) + (l1[6] + l1[7]))
            s0 = s0 + t0 * t0
            s1 = s1 + t1 * t1
        w0 = <float> (<double> v0 - cc[i])
        w1 = <float> (<double> v1 - cc[i])
        Ws[i * M + b0] = w0
        Ws[i * M + b1] = w1
        n0 = n0 + w0 * w0
        n1 = n1 + w1 * w1
        if npend > 0:
            x0 = xp[i]
            g00 = g00 + x0 * w0
            g10 = g10 + x0 * w1
            if npend > 1:
                x1 = xp[A + i]
                g01 = g01 + x1 * w0
                g11 = g11 + x1 * w1
                if npend > 2:
                    x2 = xp[2 * A + i]
                    g02 = g02 + x2 * w0
                    g12 = g12 + x2 * w1
    if a8 == A:
        s0 = ((l0[0] + l0[1]) + (l0[2] + l0[3])) + ((l0[4] + l0[5]) + (l0[6] + l0[7]))
        s1 = ((l1[0] + l1[1]) + (l1[2] + l1[3])) + ((l1[4] + l1[5]) + (l1[6] + l1[7]))
    nrm[0] = n0
    nrm[1] = n1
    s[0] = s0
    s[1] = s1
    gp0[0] = g00
    gp0[1] = g01
    gp0[2] = g02
    gp1[0] = g10
    gp1[1] = g11
    gp1[2] = g12


cdef inline void _update_averout(double *logA, int64_t *counts, Py_ssize_t b,
                                 double dist) noexcept nogil:
    """averOut of unit b: the running mean, in log space, of exp(-distance after the move)."""
    cdef int64_t nb = counts[b]
    logA[b] = _logaddexp(log(<double> nb) + logA[b], -dist) - log(<double> (nb + 1))
    if logA[b] > 0.0:
        logA[b] = 0.0   # a mean of values <= 1 is <= 1; rounding could say more
    counts[b] = nb + 1


cdef void _start_bounds(Work *w, const double *logA, const int64_t *offsets,
                        Py_ssize_t L) noexcept nogil:
    """The bounds of the labels beyond the ranking (_bayes_test), on: w.lla, each map's smallest
    log averOut (-inf where any is NaN: no bound), and w.rmin, each to be computed."""
    cdef Py_ssize_t c, j
    for c in range(L):
        w.rdirty[c] = 1
        w.lla[c] = INFINITY
        for j in range(offsets[c], offsets[c + 1]):
            if isnan(logA[j]):
                w.lla[c] = -INFINITY
                break
            if logA[j] < w.lla[c]:
                w.lla[c] = logA[j]
    w.has_bounds = 1


cdef inline void _lower_logA(Work *w, const double *logA, const int32_t *ncls,
                             Py_ssize_t b) noexcept nogil:
    """Keep w.lla a lower bound after neuron b's averOut changed (it only ever lowers it)."""
    if w.has_bounds and not logA[b] >= w.lla[ncls[b]]:
        w.lla[ncls[b]] = logA[b] if not isnan(logA[b]) else -INFINITY


cdef inline void _update_cooccurrence(int64_t *t, double *logC, Py_ssize_t L,
                                      const uint8_t *in_y, uint8_t *dirty) noexcept nogil:
    """T[c, c2] += 1 for every pair of predicted labels, then the conditional probabilities of
    the changed columns (logC), marked in dirty (unless NULL)."""
    cdef Py_ssize_t c, c2
    for c in range(L):
        if in_y[c]:
            for c2 in range(L):
                if in_y[c2]:
                    t[c * L + c2] += 1
    for c in range(L):
        if in_y[c]:
            _log_cond(t, L, logC, c)
            if dirty != NULL:
                dirty[c] = 1


cdef inline void _screen_block(const floating **rows, Py_ssize_t nb, Py_ssize_t A, Py_ssize_t M,
                               const double *cc, const float *Ws, const float *ww, float *X2,
                               double *xxb, float *G) noexcept nogil:
    """Screening values of a block of nb <= 4 instances (rows[r]: A values each) against the
    current neurons (the four-row kernel loads each weight once for the four): OUT G (nb, M),
    the centred instances X2 (nb, A) and their squared norms xxb."""
    cdef float base4[4]
    cdef Py_ssize_t r
    for r in range(nb):
        xxb[r] = _centre_row(rows[r], cc, A, X2 + r * A)
    _screen_rows(X2, xxb, nb, Ws, ww, A, M, G, base4, NULL, NULL, NULL)


cdef inline Py_ssize_t _to_move(const floating *x, const float *d, double gap,
                                const floating *wt, Py_ssize_t A, Py_ssize_t M,
                                const int64_t *offsets, Py_ssize_t c, Py_ssize_t nb,
                                Work *w) noexcept nogil:
    """_learn_one: the best-matching unit of ranked label c, if predicted, into w.moved (unless
    accepted only thanks to a negative offset: not learnt from); returns the count."""
    if w.in_y[c] and not w.weak[c]:
        w.moved[nb] = _winner(x, d, gap, wt, A, M, offsets, c, w)
        nb += 1
    return nb


ctypedef struct Drift:
    # the robust variant's drift gate (docs/method.md, "Maps that follow a moving label")
    double *mean          # (L, A) IN/OUT the recent mean of the instances each label learnt from
    const double *center  # (L, A) the mean of its training rows
    const double *limit   # (L) the squared distance from center past which its gate opens
    uint8_t *open         # (L) IN/OUT whether it has opened (it stays open)
    const int64_t *pos    # (M, 2) each neuron's (row, column) on its map
    double beta           # the recent mean's weight of a new instance
    double two_s2         # 2 sigma^2 of the neighbourhood, in grid units
    double *rate          # (M) scratch: each neuron's step eta h
    float *acc            # (4, M) scratch: the moved neurons' norms and look-ahead products


cdef void _drift_step(const floating *x, floating *wt, Py_ssize_t A, Py_ssize_t M,
                      const int64_t *offsets, Py_ssize_t c, Py_ssize_t b, double eta,
                      Drift *dr, float *Ws, float *ww, const double *cc, double *wwmax,
                      const float *xp, const double *xxp, float *gnext,
                      Py_ssize_t npend) noexcept nogil:
    """Label c learnt from x with its best-matching unit b: its recent mean moves towards x,
    then (summed in feature order) its squared distance from the training mean opens the gate
    when past the limit; once open, every other neuron u of the map moves towards x by
    eta h(u, b), h = exp(-g^2 / (2 sigma^2)), g the hexagonal grid distance (Kohonen's online
    rule). The map's neurons are contiguous columns of wt: the moves go feature by feature
    over them (_kernels_moves.h, vectorised over the neurons), each neuron's sums in feature
    order, as _move_neuron makes them, so the screening copy, its norms and the look-ahead
    follow bit for bit as they do after _move_neuron."""
    cdef Py_ssize_t i, u, lo = offsets[c], hi = offsets[c + 1]
    cdef double *m = dr.mean + c * A
    cdef const double *ctr = dr.center + c * A
    cdef double dd = 0.0, t, g2
    cdef int64_t dc, drow, cb
    cdef float *nr = dr.acc
    cdef float *g0 = dr.acc + M
    cdef float *g1 = dr.acc + 2 * M
    cdef float *g2p = dr.acc + 3 * M
    cdef double *f = dr.rate
    for i in range(A):
        m[i] = m[i] + dr.beta * (<double> x[i] - m[i])
        t = m[i] - ctr[i]
        dd = dd + t * t
    if not dr.open[c]:
        if not dd > dr.limit[c]:
            return
        dr.open[c] = 1
    if hi - lo < 2:
        return
    cb = 2 * dr.pos[2 * b + 1] + dr.pos[2 * b] % 2   # twice the x coordinate: exact
    for u in range(lo, hi):
        dc = 2 * dr.pos[2 * u + 1] + dr.pos[2 * u] % 2 - cb
        drow = dr.pos[2 * u] - dr.pos[2 * b]
        g2 = <double> (dc * dc + 3 * drow * drow) / 4.0
        f[u] = eta * exp(-g2 / dr.two_s2)
        nr[u] = 0
        g0[u] = 0
        g1[u] = 0
        g2p[u] = 0
    # the neurons but the winner (moved already), feature row by feature row
    if floating is double:
        mlsom_move_map_d(wt + lo, Ws + lo, M, A, x, cc, xp, npend, f + lo, nr + lo, g0 + lo,
                         g1 + lo, g2p + lo, hi - lo, b - lo)
    else:
        mlsom_move_map_f(wt + lo, Ws + lo, M, A, x, cc, xp, npend, f + lo, nr + lo, g0 + lo,
                         g1 + lo, g2p + lo, hi - lo, b - lo)
    for u in range(lo, hi):
        if u == b:
            continue
        ww[u] = nr[u]
        if nr[u] > wwmax[0]:
            wwmax[0] = nr[u]
        if npend > 0:
            gnext[u] = (<float> xxp[0] + nr[u]) + g0[u]
        if npend > 1:
            gnext[M + u] = (<float> xxp[1] + nr[u]) + g1[u]
        if npend > 2:
            gnext[2 * M + u] = (<float> xxp[2] + nr[u]) + g2p[u]


cdef Py_ssize_t _learn_one(const floating *x, const float *d, double gap, floating *wt,
                           Py_ssize_t A, Py_ssize_t M, const int32_t *ncls,
                           const int64_t *offsets, Py_ssize_t L, int64_t *t, double *logC,
                           double *logA, int64_t *counts, Py_ssize_t k_nn, Py_ssize_t n_rank,
                           floating eta, bint squared, bint skip_zero, float *Ws, float *ww,
                           const double *cc, double *wwmax, const float *xp, const double *xxp,
                           float *gnext, Py_ssize_t npend, uint8_t *y, Drift *dr,
                           Work *w) noexcept nogil:
    """Algorithm 1 for one instance x, given its screening values d and their gap: classify x
    (OUT y, its row of predictions), move the best-matching unit of every predicted map towards
    it, update their averOut, then T and the conditional probabilities. Returns the number of
    labels predicted.

    The screening copy (Ws, ww; IN/OUT wwmax, the largest ww) follows the moved neurons; the
    screening values gnext of the npend (at most 3) instances of the block still to come
    (centred xp, squared norms xxp) are recomputed for each moved neuron. With the robust
    variant's drift gate (dr), each learnt label then takes its _drift_step."""
    cdef Py_ssize_t c, b, r2, n_pred, nb, n_rk, k, j, m
    cdef floating s[2]
    cdef float nrm[2]
    cdef float gp[6]
    # 1. classify from the current state
    n_pred = _classify(x, d, gap, wt, A, M, ncls, offsets, L, t, logC, logA, k_nn, n_rank,
                       squared, skip_zero, w)
    # 2. the best-matching unit of every predicted map moves towards x: the winners first (a
    # map's winner depends on its own neurons only, which no other map's move touches), then
    # the moves, two neurons per pass (_move_pair)
    # the ranked labels in order; those the Bayes decision accepted beyond the ranking (once
    # labels have taught the rule) are predicted, not learnt from
    for c in range(L):
        y[c] = w.in_y[c]
    nb = 0
    n_rk = 0
    while n_rk < L and w.rank[n_rk] >= 0:
        nb = _to_move(x, d, gap, wt, A, M, offsets, w.rank[n_rk], nb, w)
        n_rk += 1
    k = 0
    while k < nb:
        if k + 1 < nb:
            _move_pair(x, wt, A, M, w.moved[k], w.moved[k + 1], eta, Ws, cc, xp, npend, gp,
                       gp + 3, nrm, s)
            m = 2
        else:
            s[0] = _move_neuron(x, wt, A, M, w.moved[k], eta, Ws, cc, xp, npend, gp, nrm)
            m = 1
        for j in range(m):
            b = w.moved[k + j]
            ww[b] = nrm[j]
            if nrm[j] > wwmax[0]:
                wwmax[0] = nrm[j]
            for r2 in range(npend):
                gnext[r2 * M + b] = (<float> xxp[r2] + nrm[j]) + gp[3 * j + r2]
            # 3. its averOut
            _update_averout(logA, counts, b, s[j] if squared else sqrt(<double> s[j]))
            _lower_logA(w, logA, ncls, b)
        k += m
    # 3b. the robust variant's drift gate, label by label: once open, the map moves as a whole
    if dr != NULL:
        for k in range(nb):
            _drift_step(x, wt, A, M, offsets, ncls[w.moved[k]], w.moved[k], eta, dr, Ws, ww, cc,
                        wwmax, xp, xxp, gnext, npend)
    # 4. the co-occurrence counts and conditional probabilities
    _update_cooccurrence(t, logC, L, w.in_y, w.rdirty if w.has_bounds else NULL)
    return n_pred


# --------------------------------------------------------------------------------------------------
# labels that arrive (beyond the paper; docs/method.md, "Labels that arrive")
# --------------------------------------------------------------------------------------------------

cdef enum:
    OFFSET_MIN = 50     # a label's acceptance offset stays 0 until it has this many entries ...
    OFFSET_EVERY = 25   # ... then it is chosen again every OFFSET_EVERY entries

cdef double CARD_RATE = 0.02   # the labelled cardinality's running mean: its weight of a new set

# A label keeps at most min(its map's neurons, GUARD_CAP) guards, and as many supports
# (docs/method.md, "Guards"): every labelled instance is compared with the guards of every label
# it tests, so their number is bounded whatever d (a map of d = 10 has up to 100 neurons);
# 16 is a map's size at d = 4.
cdef enum:
    GUARD_CAP_ = 16
GUARD_CAP = GUARD_CAP_  # for _model_file's check and the tests' reference


ctypedef struct LabelMem:
    # What the labels teach the decision rule (docs/method.md, "Labels that arrive"), the
    # model's arrays: per label c,
    double *thl         # (L) the acceptance offset
    double *mg          # (L, win) the margins of its last win labelled entries (a ring) ...
    uint8_t *mk         # (L, win) ... and 2 * kind + y (kind: _bayes_decision's mkind)
    int64_t *mtot       # (L) entries ever (the ring's next slot is mtot % win)
    double *zl          # (2) the labelled cardinality's running mean, and 1 once set
    Py_ssize_t win
    int32_t *srt        # (L, win) the ring's slots of tested entries, larger margin first,
    int64_t *nsrt       # (L) older first on a tie (a cache the caller builds), and how many,
    double *srtm        # (L, win) and their margins in that order, as the ring was when it
    int64_t *stot       # (L) held stot entries ever (_sync_sorted brings it up to the ring)
    int32_t *nslot      # (win) scratch: the ring's entries since, sorted (_sync_sorted)
    double *nmarg       # (win) ... and their margins
    uint8_t *mv         # (L, win) 1 where a tested entry's instance was nearer one of the
                        # label's guards (Work.mveto), or NULL: the model has no guards


ctypedef struct BestCut:
    # the best cut so far of _best_offset's scan: whether there is one, its F1 as num / den,
    # its offset
    bint have
    int64_t num
    int64_t den
    double t


cdef inline void _consider_cut(BestCut *b, int64_t num, int64_t den, double hi,
                               double lo) noexcept nogil:
    """A cut between margins hi > lo whose F1 is num / den: the best so far if its F1 is
    higher, or equal with an offset nearer 0 (the first on a tie). Its offset is 0 when
    lo < 0 <= hi, else the end nearer 0: hi, or the double just above lo (computed only for a
    cut at least as good as the best so far)."""
    cdef int64_t cmp
    cdef double t
    if den < 1:
        den = 1
    cmp = num * b.den - b.num * den  # (at most 4 win^2: exact)
    if b.have and cmp < 0:
        return
    if lo < 0.0 and 0.0 <= hi:
        t = 0.0
    elif hi < 0.0:
        t = hi
    else:
        t = nextafter(lo, INFINITY)
    if not b.have or cmp > 0 or fabs(t) < fabs(b.t):
        b.have = True
        b.num = num
        b.den = den
        b.t = t


cdef void _best_offset(LabelMem *lm, Py_ssize_t c, bint guarded, BestCut *plain,
                       BestCut *guard) noexcept nogil:
    """Label c's acceptance offset: the threshold on the margin that maximises the F1 score of
    label c over its remembered labelled entries (after Lipton, Elkan and Naryanaswamy,
    "Optimal thresholding of classifiers to maximize F1 measure", ECML PKDD 2014); OUT plain:
    its offset and F1.

    An entry ranked first (kind 0) is predicted whatever the offset, one neither ranked nor
    tested (kind 2) never; a tested one (kind 1) is predicted iff its margin >= the offset. The
    cuts of the tested entries sorted by margin (lm.srt, lm.srtm) are the offsets that differ;
    F1 is compared exactly (as fractions of integers), and of the best cuts the one whose offset
    is nearest 0 (the paper's test) wins, the first on a tie (_consider_cut).

    guarded: OUT guard, the same for the label's decisions with its guards (docs/method.md,
    "Guards"), in the same pass: a tested entry whose instance was nearer a guard (lm.mv) is
    never predicted, whatever the offset (it still separates the cuts, which changes no F1 and
    no choice)."""
    cdef Py_ssize_t win = lm.win, n, k, i, n1 = lm.nsrt[c]
    cdef int64_t tp0 = 0, fp0 = 0, fn0 = 0, npos = 0, tp = 0, fp = 0, num
    cdef int64_t fn0g = 0, nposg = 0, tpg = 0, fpg = 0
    cdef int kind, y, v = 0
    cdef double hi, lo
    cdef const uint8_t *mk = lm.mk + c * win
    cdef const uint8_t *mv = lm.mv + c * win if guarded else NULL
    cdef const double *ms = lm.srtm + c * win
    cdef const int32_t *o = lm.srt + c * win
    plain.have = False
    plain.num = 0
    plain.den = 1
    plain.t = 0.0
    guard[0] = plain[0]
    n = lm.mtot[c] if lm.mtot[c] < win else win
    for k in range(n):  # the slots in use, in any order (counted without a branch: the
        kind = mk[k] >> 1  # kinds and labels follow no pattern a branch could predict)
        y = mk[k] & 1
        tp0 += y & (kind == 0)
        fp0 += (1 - y) & (kind == 0)
        fn0 += y & (kind == 2)
        npos += y & (kind == 1)
        if guarded:
            v = mv[k]
            fn0g += y & ((kind == 2) | ((kind == 1) & v))
            nposg += y & (kind == 1) & (1 - v)
    for i in range(n1 + 1):
        if i > 0:
            y = mk[o[i - 1]] & 1
            tp += y
            fp += 1 - y
            if guarded:
                v = mv[o[i - 1]]
                tpg += y & (1 - v)
                fpg += (1 - y) & (1 - v)
        if 0 < i < n1 and ms[i - 1] == ms[i]:
            continue  # no offset separates equal margins
        hi = INFINITY if i == 0 else ms[i - 1]
        lo = -INFINITY if i == n1 else ms[i]
        num = 2 * (tp0 + tp)
        _consider_cut(plain, num, num + fp0 + fp + fn0 + (npos - tp), hi, lo)
        if guarded:
            num = 2 * (tp0 + tpg)
            _consider_cut(guard, num, num + fp0 + fpg + fn0g + (nposg - tpg), hi, lo)


cdef inline void _add_entry(LabelMem *lm, Py_ssize_t c, int kind, int y, double m,
                            int veto) noexcept nogil:
    """Label c's new entry, in its ring's next slot (over the oldest once the ring is full). The
    sorted cache takes it when the offset is next chosen (_sync_sorted)."""
    cdef Py_ssize_t p = lm.mtot[c] % lm.win
    lm.mk[c * lm.win + p] = <uint8_t> (2 * kind + y)
    lm.mg[c * lm.win + p] = m if kind == 1 else 0.0
    if lm.mv != NULL:
        lm.mv[c * lm.win + p] = <uint8_t> (veto if kind == 1 else 0)
    lm.mtot[c] += 1


cdef void _sync_sorted(LabelMem *lm, Py_ssize_t c) noexcept nogil:
    """Bring label c's sorted cache (the ring's tested entries by margin, larger first, older
    first on a tie) from the ring as it was at lm.stot[c] entries to the ring now, in one merge:
    the cached entries written over since leave (a slot was written over iff it is one of the
    ring's last mtot - stot slots), the tested entries since are sorted (by insertion: at most
    OFFSET_EVERY of them, but after a build) and merged in after any cached entry of an equal
    margin (they are newer). The same cache as one built afresh from the ring (_margin_order),
    at a cost linear in the ring's length once per choice of offset, where keeping it in order
    entry by entry cost two binary searches and a move of half the cache each."""
    cdef Py_ssize_t win = lm.win, n = lm.nsrt[c], i, j, k, kept = 0, nn = 0
    cdef int64_t t0 = lm.stot[c], t1 = lm.mtot[c], t, fresh = t1 - t0, start
    cdef const uint8_t *mk = lm.mk + c * win
    cdef const double *mg = lm.mg + c * win
    cdef int32_t *o = lm.srt + c * win
    cdef double *ms = lm.srtm + c * win
    cdef int32_t *no = lm.nslot
    cdef double *nm = lm.nmarg
    cdef Py_ssize_t first = t0 % win, age
    cdef double m
    if fresh <= 0:
        return
    if fresh < win:
        for i in range(n):
            age = o[i] - first  # (the slot's place after slot `first`, mod win)
            age = age + win if age < 0 else age
            if age >= fresh:  # not written over since
                o[kept] = o[i]
                ms[kept] = ms[i]
                kept += 1
    start = t1 - win if fresh > win else t0
    k = start % win
    for t in range(start, t1):
        if t > start:
            k = k + 1 if k + 1 < win else 0
        if mk[k] >> 1 != 1:
            continue
        m = mg[k]
        j = nn
        while j > 0 and nm[j - 1] < m:
            nm[j] = nm[j - 1]
            no[j] = no[j - 1]
            j -= 1
        nm[j] = m
        no[j] = <int32_t> k
        nn += 1
    i = kept - 1
    j = nn - 1
    k = kept + nn - 1
    while j >= 0:  # from the back: of equal margins, a new entry goes after the cached ones
        if i >= 0 and ms[i] < nm[j]:
            ms[k] = ms[i]
            o[k] = o[i]
            i -= 1
        else:
            ms[k] = nm[j]
            o[k] = no[j]
            j -= 1
        k -= 1
    lm.nsrt[c] = kept + nn
    lm.stot[c] = t1


cdef inline bint _rule_taught(const LabelMem *lm, Py_ssize_t L) noexcept nogil:
    """Whether labels have taught the rule (an entry in some label's memory): the labels beyond
    the ranking are then tested too (Work.extra)."""
    cdef Py_ssize_t c
    for c in range(L):
        if lm.mtot[c] > 0:
            return True
    return False


cdef void _record_labels(LabelMem *lm, const int8_t *yl, const int64_t *offsets, Py_ssize_t L,
                         int64_t S, int64_t N, Guards *gd, Work *w) noexcept nogil:
    """After a labelled instance (its classification's margins in w): a new entry for every
    label with a map whose value is known, the offsets of those due for a new choice, and the
    labelled cardinality's running mean when every label is known (it starts from the
    stream's S / N then). With guards (gd), a label due for a new offset also chooses whether
    its decisions use its guards: they do when the best F1 over its entries with them is
    strictly above the best without (docs/method.md, "Guards"); the offset is that choice's."""
    cdef Py_ssize_t c
    cdef int64_t npos = 0
    cdef BestCut plain, guard
    cdef bint every = True
    for c in range(L):
        if yl[c] < 0:
            every = False
        if offsets[c + 1] == offsets[c] or yl[c] < 0:
            continue
        npos += yl[c] == 1
        _add_entry(lm, c, w.mkind[c], yl[c] == 1, w.marg[c], w.mveto[c])
        if lm.mtot[c] >= OFFSET_MIN and lm.mtot[c] % OFFSET_EVERY == 0:
            _sync_sorted(lm, c)
            _best_offset(lm, c, gd != NULL, &plain, &guard)
            lm.thl[c] = plain.t
            if gd != NULL:
                # (F1 as fractions with numerators and denominators of at most 4 win: exact)
                gd.on[c] = guard.num * plain.den > plain.num * guard.den
                if gd.on[c]:
                    lm.thl[c] = guard.t
    if every:
        if lm.zl[1] == 0.0:
            lm.zl[0] = <double> S / <double> N
            lm.zl[1] = 1.0
        lm.zl[0] = lm.zl[0] + CARD_RATE * (<double> npos - lm.zl[0])


# The paired test of the strong corrections (corrections="tested"; docs/method.md, "A paired test
# of the corrections")
cdef enum:
    PAIR_USES = 5       # a correction's other choice is tried on this many labelled instances
    PAIR_MIN = 10       # below this many pairs, corrections are gentle
# (the model's last pairs the test counts: the ring's length, _method.PAIR_WINDOW)
PAIR_TRIES = PAIR_USES  # for _model_file's check of alt_uses
cdef double PAIR_Z = 2.0    # the sign test's threshold, in standard deviations
cdef int64_t PAIR_TOTAL_MAX = 9007199254740992  # 2^53: the count of pairs ever stays below


ctypedef struct Pairs:
    # per neuron b: where the other correction choice would have put it (place, (M, A) in the
    # model's type), how many times that choice was tried (uses[b], -1: none pending) and
    # whether the choice made was the strong one; the model's last win pairs (ring, 1: the
    # strong choice won) and their count ever (total[0])
    void *place
    int8_t *uses
    uint8_t *strong
    uint8_t *ring
    int64_t *total
    int64_t win
    float *d2           # (M) scratch: the instance's screening values, one neuron's replaced
    Work *w2            # the re-classifications' workspace (the instance's own stays intact)


cdef bint _pairs_strong(const Pairs *pr) noexcept nogil:
    """Whether corrections are strong: over the last pairs (at least PAIR_MIN), the strong
    choice won at least PAIR_Z sqrt(n) more than it lost (a one-sided sign test)."""
    cdef int64_t n = pr.total[0] if pr.total[0] < pr.win else pr.win
    cdef int64_t k, won = 0
    if n < PAIR_MIN:
        return False
    for k in range(n):
        won += pr.ring[k]
    return <double> (2 * won - n) >= PAIR_Z * sqrt(<double> n)


cdef bint _same_ranking(const Work *w, Py_ssize_t c, float dv, double da, double gap,
                        Py_ssize_t L) noexcept nogil:
    """Whether moving a neuron of map c (screening value dv where it is, exact distance da in
    the other place) certainly leaves the instance's ranking (w, its classification) as it is:
    in every round in which c was in the pool, the neuron is certainly among the k_nn nearest in
    both places, or certainly not in either (the same neurons vote), and c's votes never tied
    another class's (the tie goes to the nearer best-matching unit, which the move may change).

    The round's k_nn-th smallest exact distance lies within gap / 2 of its screening value t
    (w.rt): in the place where it is, the neuron votes for sure below _gap_window's f1 and
    never from f2 on (as _screened_votes decides); in the other, below t - gap and above
    t + gap."""
    cdef Py_ssize_t r, rc = L - 1
    cdef float f1, f2
    cdef double t
    if w.tie[c] or not isfinite(gap):
        return False
    for r in range(L):
        if w.rank[r] < 0:
            rc = r - 1  # c was in the pool of every round
            break
        if w.rank[r] == c:
            rc = r
            break
    for r in range(rc + 1):
        t = w.rt[r]
        if t == INFINITY:
            continue  # the whole pool voted
        if isnan(t):
            return False
        _gap_window(t, gap, &f1, &f2)
        if not ((dv < f1 and da < t - gap) or (dv >= f2 and da > t + gap)):
            return False
    return True


cdef Py_ssize_t _n_right(const int8_t *yl, const uint8_t *in_y, Py_ssize_t L) noexcept nogil:
    """How many of the instance's known labels a classification gets right."""
    cdef Py_ssize_t c, r = 0
    for c in range(L):
        if yl[c] >= 0 and (in_y[c] != 0) == (yl[c] == 1):
            r += 1
    return r


cdef void _paired_tests(const floating *x, const int8_t *yl, const float *d, double gap,
                        double tscale, double xx, double wwmax, floating *wt, Py_ssize_t A,
                        Py_ssize_t M, const int32_t *ncls, const int64_t *offsets, Py_ssize_t L,
                        const int64_t *t, const double *logC, const double *logA,
                        Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                        const double *cc, Pairs *pr, Work *w) noexcept nogil:
    """Before a labelled instance's moves (its classification in w): every pending other
    choice of a neuron b of a map c whose label is known, when b is c's best-matching unit or
    would be nearer x than it in the other place, is tried: x is classified again with b there
    (w2; b is not written there: see below). Where the two classifications get a different
    number of x's known labels right, the pair goes to the ring: 1 when the strong choice did
    better.
    Each choice is tried PAIR_USES times at most. Maps in label order, neurons in index order.

    The winner's exact distance is computed only when a place's distance falls within the
    screening bound of it. A re-classification that cannot change the ranking (_same_ranking)
    keeps it and redoes the Bayes tests alone. The re-classification's screening values are
    x's, b's replaced by its exact distance in the other place (rounded to float32: well within
    the bound), and the bound's largest norm is b's there when larger; the exact distances
    already computed for x are reused."""
    cdef Py_ssize_t c, b, bw, i, right, right_alt, n_ranked
    cdef double d_win = 0.0, da, nn, gap2, wmax
    cdef const floating *alt
    cdef bint copied = False, pending, have_win
    right = _n_right(yl, w.in_y, L)
    for c in range(L):
        if yl[c] < 0 or offsets[c + 1] == offsets[c]:
            continue
        pending = False
        for b in range(offsets[c], offsets[c + 1]):
            if pr.uses[b] >= 0:
                pending = True
                break
        if not pending:
            continue
        bw = _winner(x, d, gap, wt, A, M, offsets, c, w)
        have_win = False
        for b in range(offsets[c], offsets[c + 1]):
            if pr.uses[b] < 0:
                continue
            alt = <const floating *> pr.place + b * A
            da = _sqdist_row(x, alt, A)
            if b != bw:
                # nearer than the winner? Its exact distance lies within gap / 2 of its
                # screening value: computed only when da is within gap of that
                if not have_win and isfinite(gap) and da < <double> d[bw] - gap:
                    pass
                elif not have_win and isfinite(gap) and da > <double> d[bw] + gap:
                    continue
                else:
                    if not have_win:
                        d_win = _exact(x, wt, A, M, bw, w)
                        have_win = True
                    if not da < d_win:
                        continue
            pr.uses[b] = pr.uses[b] + 1
            if pr.uses[b] >= PAIR_USES:
                pr.uses[b] = -1
            if not copied:
                # once per instance: its screening values, and the exact distances its
                # classification computed, which stay valid for every neuron but the one tried
                # (the re-classifications keep w's cur: _classify's first step makes it so)
                memcpy(pr.d2, d, M * sizeof(float))
                memcpy(pr.w2.ex, w.ex, M * sizeof(double))
                memcpy(pr.w2.stamp, w.stamp, M * sizeof(int64_t))
                copied = True
            gap2 = gap
            if isfinite(gap):
                nn = 0.0
                for i in range(A):
                    nn = nn + (<double> alt[i] - cc[i]) * (<double> alt[i] - cc[i])
                wmax = nn if nn > wwmax else wwmax
                gap2 = _screen_gap(tscale, xx, wmax)
            # Neuron b in the other place, without writing it there: the classification reads
            # a neuron's weights only through the exact-distance cache (_exact,
            # _refine_argmin), which holds b's distance there (da, the sums _exact makes),
            # and its screening value (d2)
            pr.d2[b] = <float> da
            pr.w2.thl = w.thl
            pr.w2.extra = w.extra
            pr.w2.cap = w.cap
            pr.w2.ctl = w.ctl
            pr.w2.theta = w.theta
            pr.w2.phl = w.phl
            pr.w2.cur = w.cur - 1
            pr.w2.ex[b] = da
            pr.w2.stamp[b] = w.cur
            if _same_ranking(w, c, d[b], da, gap, L):
                # the ranking stays: the Bayes tests alone, c's best-matching unit found again
                pr.w2.cnt[CNT_PAIR_BAYES] += 1
                pr.w2.cur = w.cur
                n_ranked = 0
                for i in range(L):
                    pr.w2.rank[i] = w.rank[i]
                    pr.w2.winnr[i] = w.winnr[i]
                    pr.w2.in_y[i] = 0
                    pr.w2.weak[i] = 0
                    n_ranked += w.rank[i] >= 0
                pr.w2.winnr[c] = -2
                _bayes_decision(x, pr.d2, gap2, wt, A, M, offsets, L, t, logC, logA, n_ranked,
                                squared, skip_zero, pr.w2)
            else:
                pr.w2.cnt[CNT_PAIR_WHOLE] += 1
                _classify(x, pr.d2, gap2, wt, A, M, ncls, offsets, L, t, logC, logA, k_nn,
                          n_rank, squared, skip_zero, pr.w2)
            pr.d2[b] = d[b]
            pr.w2.ex[b] = w.ex[b]
            pr.w2.stamp[b] = w.stamp[b]
            right_alt = _n_right(yl, pr.w2.in_y, L)
            if right_alt != right:
                pr.ring[pr.total[0] % pr.win] = (right > right_alt) == (pr.strong[b] != 0)
                pr.total[0] += 1
                if pr.total[0] >= PAIR_TOTAL_MAX:
                    # the count stays below 2^53, as the model file demands, and keeps its
                    # place in the ring (a whole number of windows less)
                    pr.total[0] = pr.win + pr.total[0] % pr.win


cdef inline void _add_prototype(const floating *x, floating *p, int64_t *cnt, Py_ssize_t c,
                                Py_ssize_t o, Py_ssize_t size, Py_ssize_t A,
                                floating eta) noexcept nogil:
    """Label c's guards or supports (rows o, o + 1, ... of p, cnt[c] of them in use, at most
    size): x joins them while there is room; then the nearest (the first on a tie) moves
    towards x by eta, w <- w + eta (x - w), as a neuron moves."""
    cdef Py_ssize_t i, r
    cdef double d = INFINITY
    if cnt[c] < size:
        r = o + cnt[c]
        cnt[c] += 1
        for i in range(A):
            p[r * A + i] = x[i]
        return
    r = _nearest_below(x, p, A, o, size, &d, False)
    if r < 0:
        return  # (no row at a finite distance: not with the values the model file allows)
    for i in range(A):
        p[r * A + i] = p[r * A + i] + eta * (x[i] - p[r * A + i])


cdef void _learn_guards(const floating *x, const int8_t *yl, Py_ssize_t A,
                        const int64_t *offsets, Py_ssize_t L, floating eta, Guards *gd,
                        const Work *w) noexcept nogil:
    """A labelled instance's guards and supports (docs/method.md, "Guards"), from its
    classification (w: which labels were tested, their margins, whether x was nearer a
    guard): for every tested label c whose value is known, a negative that its Bayes test
    accepts (margin >= its offset) and no guard took joins c's guards, and a positive that its
    test accepts and a guard took joins its supports (each moves its nearest towards x once the
    label has min(its map's neurons, GUARD_CAP) of them), whether the label's decisions use its
    guards or not."""
    cdef Py_ssize_t c
    for c in range(L):
        if (offsets[c + 1] == offsets[c] or yl[c] < 0 or w.mkind[c] != 1
                or not w.marg[c] >= w.thl[c]):
            continue
        if yl[c] == 0 and not w.mveto[c]:
            _add_prototype(x, <floating *> gd.g, gd.gn, c, offsets[c],
                           min(offsets[c + 1] - offsets[c], GUARD_CAP_), A, eta)
        elif yl[c] == 1 and w.mveto[c]:
            _add_prototype(x, <floating *> gd.s, gd.sn, c, offsets[c],
                           min(offsets[c + 1] - offsets[c], GUARD_CAP_), A, eta)


cdef inline Py_ssize_t _n_ranked(int64_t S, int64_t N, Py_ssize_t L,
                                 const double *zl) noexcept nogil:
    """How many labels the ranking ranks: ceil(S / N), or the labelled cardinality's ceiling
    if larger (zl, when labels have set it), at most L."""
    cdef Py_ssize_t n_rank = _ceil_div(S, N), nz
    if zl != NULL and zl[1] != 0.0:
        nz = <Py_ssize_t> ceil(zl[0])
        if nz > n_rank:
            n_rank = nz
    return n_rank if n_rank < L else L

cdef void _learn_labels(const floating *x, const int8_t *yl, const float *d, double gap,
                        floating *wt, Py_ssize_t A, Py_ssize_t M, const int32_t *ncls,
                        const int64_t *offsets, Py_ssize_t L, int64_t *t, double *logC,
                        double *logA, int64_t *counts, Py_ssize_t k_nn, Py_ssize_t n_rank,
                        floating eta, floating rate, bint squared, bint skip_zero, float *Ws,
                        float *ww, const double *cc, double *wwmax, floating *pos,
                        uint8_t *has_pos, uint8_t *known, const float *xp, const double *xxp,
                        float *gnext, Py_ssize_t npend, LabelMem *lm, int64_t S, int64_t N,
                        Pairs *pr, Guards *gd, double tscale, double xx,
                        Work *w) noexcept nogil:
    """One labelled instance x, its labels yl (1, 0, -1 unknown), given its screening values d:
    classify x from the current state, then for every map c whose label is known:

    * y_c = 1: its best-matching unit moves towards x, by eta when c is predicted (a hit, as
      self-training moves it) and by rate when it is not (a miss), and its averOut takes x;
    * y_c = 0 and c predicted (a false alarm): its best-matching unit moves onto label c's last
      labelled positive (pos[c]), if there is one (a copy), which is then used up.

    With the paired test (pr, corrections="tested"; tscale and xx for its bound), the
    pending other choices are tried first (_paired_tests), and a miss moves by rate, a false
    alarm onto the positive, only while the test says the strong corrections win
    (_pairs_strong); otherwise a miss moves by eta and a false alarm moves nothing (the
    positive is kept). Either way each correction keeps where the other choice would have put
    the neuron (a miss: moved by the other step, as _move_neuron moves it; a false alarm: the
    positive, or the neuron where it was), to be tried.

    Then pos[c] = x for every positive c (known: OUT the positives; a label without a map is
    left out). T, N and S do not change: the instance was counted when the stream saw it, as
    its prediction (docs/method.md: counting its true labels as well made the model accept
    too many extra labels). The best-matching units are those of the
    state before any move (each map moves one neuron at most, and its own only). The screening
    copy and the look-ahead (xp, xxp, gnext, npend) follow the moved neurons as in _learn_one.
    With guards (gd), the tested labels' guards and supports learn from x (_learn_guards). Then
    the decision rule learns from the labels (_record_labels, with the margins of x's
    classification)."""
    cdef Py_ssize_t c, b, i
    cdef floating s
    cdef float nrm
    cdef float gp[3]
    cdef bint strong = True
    cdef floating other
    cdef floating *place = <floating *> pr.place if pr != NULL else NULL
    for c in range(L):
        w.mkind[c] = 2
        w.marg[c] = 0.0
        w.mveto[c] = 0
    w.rec = 1
    _classify(x, d, gap, wt, A, M, ncls, offsets, L, t, logC, logA, k_nn, n_rank, squared,
              skip_zero, w)
    w.rec = 0
    if pr != NULL:
        _paired_tests(x, yl, d, gap, tscale, xx, wwmax[0], wt, A, M, ncls, offsets, L, t, logC,
                      logA, k_nn, n_rank, squared, skip_zero, cc, pr, w)
        strong = _pairs_strong(pr)
    if gd != NULL:
        _learn_guards(x, yl, A, offsets, L, eta, gd, w)
    for c in range(L):
        # a label without a map is never predicted: its labels are left out (T, S, pos)
        known[c] = yl[c] == 1 and offsets[c + 1] > offsets[c]
        if offsets[c + 1] == offsets[c] or yl[c] < 0:
            continue
        if yl[c] == 1:
            b = _winner(x, d, gap, wt, A, M, offsets, c, w)
            if pr != NULL and not w.in_y[c]:
                # a miss: where the other step would have put the neuron
                other = eta if strong else rate
                for i in range(A):
                    place[b * A + i] = wt[i * M + b] + other * (x[i] - wt[i * M + b])
                pr.uses[b] = 0
                pr.strong[b] = (rate if strong else eta) == rate
            s = _move_neuron(x, wt, A, M, b, eta if w.in_y[c] or not strong else rate, Ws, cc,
                             xp, npend, gp, &nrm)
            _update_averout(logA, counts, b, s if squared else sqrt(<double> s))
            _lower_logA(w, logA, ncls, b)
        elif w.in_y[c] and has_pos[c]:
            b = _winner(x, d, gap, wt, A, M, offsets, c, w)
            if pr != NULL:
                # a false alarm: the other choice (staying, or going onto the positive)
                for i in range(A):
                    place[b * A + i] = wt[i * M + b] if strong else pos[c * A + i]
                pr.uses[b] = 0
                pr.strong[b] = strong
                if not strong:
                    continue  # nothing moves; the positive is kept
            # the neuron is put on the positive exactly (then a move by 0 refreshes its
            # screening copy), which is used once: a second false alarm before the next
            # positive would put another neuron of the map on the same point
            for i in range(A):
                wt[i * M + b] = pos[c * A + i]
            _move_neuron(pos + c * A, wt, A, M, b, 0, Ws, cc, xp, npend, gp, &nrm)
            for i in range(A):
                pos[c * A + i] = 0
            has_pos[c] = 0
        else:
            continue
        ww[b] = nrm
        if nrm > wwmax[0]:
            wwmax[0] = nrm
        for i in range(npend):
            gnext[i * M + b] = (<float> xxp[i] + nrm) + gp[i]
    for c in range(L):
        if known[c]:
            for i in range(A):
                pos[c * A + i] = x[i]
            has_pos[c] = 1
    if lm != NULL:
        _record_labels(lm, yl, offsets, L, S, N, gd, w)
        w.extra = _rule_taught(lm, L)
