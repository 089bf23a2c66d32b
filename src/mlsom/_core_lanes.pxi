# Frozen scoring 16 rows at a time, one row per vector lane (the AVX2 and AVX-512 paths).
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

# --------------------------------------------------------------------------------------------------
# frozen scoring 16 rows at a time (the AVX2 and AVX-512 paths)
# --------------------------------------------------------------------------------------------------
#
# predict screens 64 rows at a time into four groups of 16 stored neuron-major (one vector holds a
# neuron's values for the 16 rows of a group), and ranks the classes of a group's rows together:
# the kernels of _kernels.h narrow every row's bracket of the k-th smallest value of its pool,
# order the few values left in it, count the votes below the (k+1)-th smallest value and pick
# the winners, each a vector operation per neuron for the 16 rows. The k nearest neurons of a
# row are the neurons below its (k+1)-th smallest screening value vk1 whenever vk1 is more than
# the gap above the k-th vk (then every one of them is nearer than every other neuron, exactly);
# otherwise that row's round is settled here from exact distances, as _classify does. Ties of
# votes the screening leaves in doubt, the best-matching units the Bayes test needs and the
# test itself are settled row by row. A row whose values the group's kernels cannot handle
# (non-finite or huge values, a search that does not converge) is classified by _classify from
# its values alone. Every decision is the exact one, so the results are those of _classify.

cdef enum:
    LANES_PASSES = 24   # passes of the search per round before a row goes to _classify
    LANES_HIST = 32     # trial values of a group's searches kept for its later rounds
    LANES_MIN = 32      # fewer rows than this in a chunk: row by row (a padded chunk costs more)


ctypedef struct Lanes:
    float *xb       # (64, A) -2 x' of the 64 rows, blocked (16 rows per block, feature-major)
    float *base     # (64) |x'|^2 in float32 (0 for padding rows)
    float *gt       # (4, M, 16) screening values, gt[16 M q + 16 j + l] for row 16 q + l
    float *m1       # (L, 64) per map and row: smallest screening value ...
    int32_t *i1     # (L, 64) ... its first index ...
    float *m2       # (L, 64) ... the smallest of the others
    float *hi       # (64) largest screening value of each row
    float *row      # (16, A rounded up to 16) scratch of the centring
    float *d        # (M) one row's screening values, for _classify
    uint16_t *fm    # (M + 16) scratch of the window kernel
    int32_t *fj     # (M + 16)
    int32_t *votes  # (L, 16)
    uint16_t *pool  # (L) rows (bits) whose pool still holds the map
    Py_ssize_t *rank  # (16, L) the winner classes of each row in order
    float *ht       # (LANES_HIST, 16) the search's trial values ...
    int32_t *hc     # (LANES_HIST, L, 16) ... their counts per map ...
    uint16_t *hv    # (LANES_HIST) ... for these rows
    int nh
    double xx[64]
    double gap[16]
    float gapf[16]  # the gap in float32, rounded up (a margin for the rounding of a difference)
    float lo[16]    # smallest screening value of the row
    float fa[16]
    float fb[16]
    float ftop[16]  # just above the largest value of the row
    float vk[16]
    float vk1[16]
    int32_t ca[16]
    int32_t cb[16]
    int32_t win[16]
    int32_t npool[16]
    Py_ssize_t nrk[16]


cdef Lanes *_lanes_alloc(Py_ssize_t A, Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Lanes *z = <Lanes *> malloc(sizeof(Lanes))
    if z == NULL:
        return NULL
    z.xb = <float *> malloc(64 * A * sizeof(float))
    z.base = <float *> malloc(64 * sizeof(float))
    z.gt = <float *> malloc(64 * M * sizeof(float))
    z.m1 = <float *> malloc(64 * L * sizeof(float))
    z.i1 = <int32_t *> malloc(64 * L * sizeof(int32_t))
    z.m2 = <float *> malloc(64 * L * sizeof(float))
    z.hi = <float *> malloc(64 * sizeof(float))
    z.row = <float *> malloc(16 * ((A + 15) // 16 * 16) * sizeof(float))
    z.d = <float *> malloc(M * sizeof(float))
    z.fm = <uint16_t *> malloc((M + 16) * sizeof(uint16_t))
    z.fj = <int32_t *> malloc((M + 16) * sizeof(int32_t))
    z.votes = <int32_t *> malloc(16 * L * sizeof(int32_t))
    z.pool = <uint16_t *> malloc(L * sizeof(uint16_t))
    z.rank = <Py_ssize_t *> malloc(16 * L * sizeof(Py_ssize_t))
    z.ht = <float *> malloc(16 * LANES_HIST * sizeof(float))
    z.hc = <int32_t *> malloc(16 * LANES_HIST * L * sizeof(int32_t))
    z.hv = <uint16_t *> malloc(LANES_HIST * sizeof(uint16_t))
    if (z.xb == NULL or z.base == NULL or z.gt == NULL or z.m1 == NULL or z.i1 == NULL
            or z.m2 == NULL or z.hi == NULL or z.row == NULL or z.d == NULL or z.fm == NULL
            or z.fj == NULL or z.votes == NULL or z.pool == NULL or z.rank == NULL
            or z.ht == NULL or z.hc == NULL or z.hv == NULL):
        _lanes_free(z)
        return NULL
    return z


cdef void _lanes_free(Lanes *z) noexcept nogil:
    if z == NULL:
        return
    free(z.xb)
    free(z.base)
    free(z.gt)
    free(z.m1)
    free(z.i1)
    free(z.m2)
    free(z.hi)
    free(z.row)
    free(z.d)
    free(z.fm)
    free(z.fj)
    free(z.votes)
    free(z.pool)
    free(z.rank)
    free(z.ht)
    free(z.hc)
    free(z.hv)
    free(z)


cdef Py_ssize_t _lane_bmu(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t c,
                          float m1, int32_t i1, float m2, double gap, float gapf,
                          Work *w) noexcept nogil:
    """The exact first nearest neuron of map c for row l of a group (g), from the map's smallest
    screening value m1, its first index i1 and the smallest of the others m2: i1 unless another
    value lies within the gap, then the exact nearest of the candidates (_refine_argmin's rule)."""
    cdef Py_ssize_t j, best = -1
    cdef double e, be = INFINITY
    cdef float limt
    if m2 - m1 > gapf:
        return i1
    w.cnt[CNT_BMU] += 1
    limt = _float_up(<double> m1 + gap)
    for j in range(offsets[c], offsets[c + 1]):
        if g[16 * j + l] <= limt:
            e = _exact(x, Wt, A, M, j, w)
            if best < 0 or e < be:
                be = e
                best = j
    return best


cdef void _lane_knn_exact(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t L,
                          const int32_t *ncls, const uint16_t *pool, Py_ssize_t k_nn,
                          float vk, float vk1, float fa, float fb, const uint16_t *fm,
                          const int32_t *fj, Py_ssize_t nf, double gap, int32_t *votes,
                          Work *w) noexcept nogil:
    """IN/OUT votes[16 c + l]: given the counts below vk1 (the window kernel's votes), the votes of
    the k_nn nearest neurons of row l's pool, exactly: its k_nn-th smallest screening value is
    vk, and the values within the gap of it get exact distances. Those values are taken from the
    window's neurons (fm, fj, nf) when they all lie in the row's bracket [fa, fb), from a pass
    over the row otherwise."""
    cdef Py_ssize_t c, j, f, n_amb = 0, need = k_nn
    cdef uint16_t bit = <uint16_t> (1 << l)
    cdef double t = <double> vk
    cdef float f1, f2, v
    w.cnt[CNT_LANES_EXACT] += 1
    _gap_window(t, gap, &f1, &f2)
    if f1 >= fa and f2 <= fb:
        # [f1, f2) in the bracket: the values there are window values; those below vk1 leave
        # the counts, which then are the counts below f1
        for f in range(nf):
            j = fj[f]
            if fm[j] & bit:
                v = g[16 * j + l]
                if v >= f1 and v < f2:
                    w.amb[n_amb].d = v
                    w.amb[n_amb].j = j
                    n_amb += 1
                    if v < vk1:
                        votes[16 * ncls[j] + l] -= 1
        for c in range(L):
            need -= votes[16 * c + l]
    else:
        w.cnt[CNT_LANES_SCAN] += 1
        for c in range(L):
            votes[16 * c + l] = 0
            if not (pool[c] & bit):
                continue
            for j in range(offsets[c], offsets[c + 1]):
                v = g[16 * j + l]
                if v < f1:
                    votes[16 * c + l] += 1
                    need -= 1
                elif v < f2:
                    w.amb[n_amb].d = v
                    w.amb[n_amb].j = j
                    n_amb += 1
    _nearest_exact(x, Wt, A, M, n_amb, need, w)
    for j in range(need):
        votes[16 * ncls[w.amb[j].j] + l] += 1


cdef Py_ssize_t _lane_tie(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t L,
                          const uint16_t *pool, const int32_t *votes, const float *m1,
                          const int32_t *i1, const float *m2, double gap, float gapf,
                          Work *w) noexcept nogil:
    """The winner of row l's round, its ties settled as _classify settles them (m1, i1, m2: the
    group's per-map minima, map c's for row l at [64 c + l])."""
    cdef Py_ssize_t c, best = -1, bc, bb
    cdef uint16_t bit = <uint16_t> (1 << l)
    for c in range(L):
        if not (pool[c] & bit) or votes[16 * c + l] == 0:
            continue
        if best < 0 or votes[16 * c + l] > votes[16 * best + l]:
            best = c
        elif votes[16 * c + l] == votes[16 * best + l]:
            bc = _lane_bmu(x, Wt, A, M, g, l, offsets, c, m1[64 * c + l], i1[64 * c + l],
                           m2[64 * c + l], gap, gapf, w)
            bb = _lane_bmu(x, Wt, A, M, g, l, offsets, best, m1[64 * best + l],
                           i1[64 * best + l], m2[64 * best + l], gap, gapf, w)
            if _nearer(x, Wt, A, M, bc, g[16 * bc + l], bb, g[16 * bb + l], gap, w):
                best = c
    return best


cdef uint16_t _lanes_start(Py_ssize_t nrow, Py_ssize_t q, Py_ssize_t M,
                           const int64_t *offsets, Py_ssize_t L, double tscale, double wwmax,
                           const float *m1, Lanes *z) noexcept nogil:
    """Step 1 of the 16-row path for the rows of group q: each row's gap (z.gap, and rounded up
    to float32 with a margin, z.gapf) and the start of its ranking (the bracket z.fa, z.ca, z.fb,
    z.cb, the pool z.pool of every map); returns the rows left to the row-by-row path (a gap or
    a value out of range)."""
    cdef uint16_t fallback = 0
    cdef Py_ssize_t l, c
    cdef double gp, gm
    cdef float gf, h, lo
    for l in range(nrow):
        gp = _screen_gap(tscale, z.xx[16 * q + l], wwmax)
        h = z.hi[16 * q + l]
        z.gap[l] = gp
        if not (isfinite(gp) and h < 1e30):
            fallback |= <uint16_t> (1 << l)
            continue
        gm = gp * (1.0 + 1.0 / 1048576.0)
        gf = <float> gm
        if <double> gf < gm:
            gf = nextafterf(gf, INFINITY)
        z.gapf[l] = gf
        lo = INFINITY
        for c in range(L):
            if offsets[c + 1] > offsets[c] and m1[64 * c + l] < lo:
                lo = m1[64 * c + l]
        z.lo[l] = lo
        z.fa[l] = lo
        z.ca[l] = 0
        z.ftop[l] = nextafterf(h, INFINITY)
        z.fb[l] = z.ftop[l]
        z.npool[l] = <int32_t> M
        z.cb[l] = <int32_t> M
        z.nrk[l] = 0
    z.nh = 0
    for c in range(L):
        z.pool[c] = (<uint16_t> ((1 << nrow) - 1) & ~fallback) if offsets[c + 1] > offsets[c] else 0
    return fallback


cdef uint16_t _lanes_votes(const floating *px, Py_ssize_t row0, Py_ssize_t nrow,
                           const floating *Wt, Py_ssize_t A, Py_ssize_t M, const int32_t *ncls,
                           const int64_t *offsets, Py_ssize_t L, Py_ssize_t k_nn, const float *g,
                           uint16_t act, uint16_t small, uint16_t *lanes, uint16_t *fallback,
                           Lanes *z, Work *w) noexcept nogil:
    """Step 2, one round's votes (z.votes) for the rows of act (more than k_nn neurons in their
    pool: the k_nn nearest vote, found by the search and window kernels, the boundary settled
    exactly where the gap leaves it in doubt) and of small (the whole pool votes). Rows whose
    search fails move to the row-by-row path (IN/OUT lanes, fallback). Returns the rows whose
    round was settled exactly (their next search starts afresh)."""
    cdef uint16_t failed, redo = 0, bit
    cdef Py_ssize_t l, c, nf = 0
    cdef int32_t k32 = <int32_t> k_nn
    if act:
        failed = mlsom_lanes_search_f(g, offsets, L, z.pool, k32, act, LANES_PASSES, z.fa,
                                      z.ca, z.fb, z.cb, z.ht, z.hc, z.hv, &z.nh, LANES_HIST)
        if failed:
            act &= ~failed
            lanes[0] &= ~failed
            fallback[0] |= failed
            for c in range(L):
                z.pool[c] &= ~failed
        if act:
            nf = mlsom_lanes_window_f(g, offsets, L, z.pool, k32, act, z.fa, z.ca, z.fb,
                                      z.cb, z.vk, z.vk1, z.votes, z.fm, z.fj)
        for l in range(nrow):
            bit = <uint16_t> (1 << l)
            if (act & bit) and not (<double> z.vk1[l] - <double> z.vk[l]
                                    > z.gap[l] * (1.0 + 1e-12)):
                # the order at the boundary is in doubt: settle this row's round exactly
                w.cur += 1
                _lane_knn_exact(px + (row0 + l) * A, Wt, A, M, g, l, offsets, L, ncls,
                                z.pool, k_nn, z.vk[l], z.vk1[l], z.fa[l], z.fb[l], z.fm,
                                z.fj, nf, z.gap[l], z.votes, w)
                redo |= bit
    for l in range(nrow):
        bit = <uint16_t> (1 << l)
        if small & bit:
            # the whole pool votes
            w.cnt[CNT_LANES_SMALL] += 1
            for c in range(L):
                z.votes[16 * c + l] = <int32_t> (
                    offsets[c + 1] - offsets[c] if z.pool[c] & bit else 0)
    return redo


cdef void _lanes_rank(const floating *px, Py_ssize_t row0, Py_ssize_t nrow, const floating *Wt,
                      Py_ssize_t A, Py_ssize_t M, const int64_t *offsets, Py_ssize_t L,
                      Py_ssize_t k_nn, const float *g, const float *m1, const int32_t *i1,
                      const float *m2, uint16_t voted, uint16_t fresh, uint16_t *lanes,
                      uint16_t *fallback, Lanes *z, Work *w) noexcept nogil:
    """Step 2, one round's winners for the rows of voted: the most votes, ties settled by the
    nearer best-matching unit (exactly where in doubt); each winner is ranked and leaves its
    row's pool, and the row's next search starts from this round's k-th value (afresh for the
    rows of fresh). A row without votes moves to the row-by-row path."""
    cdef uint16_t doubt, bit
    cdef Py_ssize_t l, c, j
    doubt = mlsom_lanes_winner(z.votes, L, z.pool, m1, z.gapf, voted, z.win)
    for l in range(nrow):
        bit = <uint16_t> (1 << l)
        if not (voted & bit):
            continue
        if doubt & bit:
            w.cur += 1
            z.win[l] = <int32_t> _lane_tie(px + (row0 + l) * A, Wt, A, M, g, l, offsets, L,
                                           z.pool, z.votes, m1, i1, m2, z.gap[l],
                                           z.gapf[l], w)
        c = z.win[l]
        if c < 0:
            # no votes (cannot happen once the round's k nearest are settled): the row goes
            # to the row-by-row path
            lanes[0] &= ~bit
            fallback[0] |= bit
            for j in range(L):
                z.pool[j] &= ~bit
            continue
        z.rank[l * L + z.nrk[l]] = c
        z.nrk[l] += 1
        z.pool[c] &= ~bit
        z.npool[l] -= <int32_t> (offsets[c + 1] - offsets[c])
        if fresh & bit:
            z.fa[l] = z.lo[l]
            z.ca[l] = 0
        else:
            # the pool's values below vk1 are the k nearest; the winner's leave
            z.fa[l] = z.vk1[l]
            z.ca[l] = <int32_t> k_nn - z.votes[16 * c + l]
        z.fb[l] = z.ftop[l]
        z.cb[l] = z.npool[l]


cdef void _lanes_bayes(const floating *x, Py_ssize_t l, const floating *Wt, Py_ssize_t A,
                       Py_ssize_t M, const int64_t *offsets, Py_ssize_t L, const int64_t *T,
                       const double *logC, const double *logA, bint squared, bint skip_zero,
                       const float *g, const float *m1, const int32_t *i1, const float *m2,
                       Lanes *z, Work *w) noexcept nogil:
    """Step 3 for row l of the group: the Bayes decision over its ranked classes, then, once
    labels have taught the rule (w.extra), over every other label with a map in label order (OUT
    w.in_y), as _bayes_decision, its best-matching units found from the 16-row screening
    values."""
    cdef Py_ssize_t r, c, n_rk = z.nrk[l], n_pred = 1
    w.cnt[CNT_LANES_ROWS] += 1
    w.cur += 1
    for c in range(L):
        w.in_y[c] = 0
    if n_rk > 0:
        w.in_y[z.rank[l * L]] = 1
    for r in range(1, n_rk):
        n_pred += _lane_test(x, l, Wt, A, M, offsets, L, T, logC, logA, squared, skip_zero, g,
                             m1, i1, m2, z, w, z.rank[l * L + r])
    if w.extra and 0 < n_rk < L:
        for c in range(L):
            if offsets[c + 1] > offsets[c] and not _is_ranked(z.rank + l * L, n_rk, c):
                n_pred += _lane_test(x, l, Wt, A, M, offsets, L, T, logC, logA, squared,
                                     skip_zero, g, m1, i1, m2, z, w, c)
    if w.extra and n_rk > 0:
        _bound_labels(x, Wt, A, M, L, logA, squared, z.rank + l * L, n_rk, n_pred, w)


cdef inline bint _lane_test(const floating *x, Py_ssize_t l, const floating *Wt, Py_ssize_t A,
                            Py_ssize_t M, const int64_t *offsets, Py_ssize_t L, const int64_t *T,
                            const double *logC, const double *logA, bint squared,
                            bint skip_zero, const float *g, const float *m1, const int32_t *i1,
                            const float *m2, Lanes *z, Work *w, Py_ssize_t c) noexcept nogil:
    """The Bayes test of label c for row l (_lanes_bayes): sets w.in_y[c] (and what
    _bound_labels needs) when it passes. Returns whether it passed."""
    cdef Py_ssize_t bc
    cdef double rhs
    if not _bayes_rhs(T, logC, L, c, w.in_y, skip_zero, &rhs):
        return False
    if w.ctl:
        rhs = _offset_rhs(w, rhs, c)  # the robust variant's acceptance offsets
    bc = _lane_bmu(x, Wt, A, M, g, l, offsets, c, m1[64 * c + l], i1[64 * c + l],
                   m2[64 * c + l], z.gap[l], z.gapf[l], w)
    if _accept(x, Wt, A, M, c, bc, g[16 * bc + l], z.gap[l], rhs, logA, squared, w):
        w.in_y[c] = 1
        w.brhs[c] = rhs
        w.bbc[c] = bc
        return True
    return False


cdef void _lanes_group(const floating *px, Py_ssize_t row0, Py_ssize_t nrow, Py_ssize_t q,
                       const floating *Wt, Py_ssize_t A, Py_ssize_t M, const int32_t *ncls,
                       const int64_t *offsets, Py_ssize_t L, const int64_t *T,
                       const double *logC, const double *logA, Py_ssize_t k_nn,
                       Py_ssize_t n_rank, bint squared, bint skip_zero, double tscale,
                       double wwmax, uint8_t *Y, Lanes *z, Work *w) noexcept nogil:
    """Classify rows row0 .. row0 + nrow - 1 (nrow <= 16), group q of the chunk screened in z;
    OUT Y (their rows). The steps of _classify, for the 16 rows together."""
    cdef const float *g = z.gt + 16 * M * q
    cdef const float *m1 = z.m1 + 16 * q
    cdef const int32_t *i1 = z.i1 + 16 * q
    cdef const float *m2 = z.m2 + 16 * q
    cdef uint16_t lanes, fallback, act, small, redo, bit
    cdef Py_ssize_t l, c, p_, j, row
    cdef double gp
    cdef const floating *x
    # 1. each row's gap and the start of its ranking
    fallback = _lanes_start(nrow, q, M, offsets, L, tscale, wwmax, m1, z)
    lanes = <uint16_t> ((1 << nrow) - 1) & ~fallback
    # 2. winner-class ranking, a round for every row at once
    for p_ in range(n_rank):
        act = 0
        small = 0
        for l in range(nrow):
            bit = <uint16_t> (1 << l)
            if lanes & bit:
                if z.npool[l] > k_nn:
                    act |= bit
                elif z.npool[l] > 0:
                    small |= bit
        if act == 0 and small == 0:
            break
        redo = _lanes_votes(px, row0, nrow, Wt, A, M, ncls, offsets, L, k_nn, g, act, small,
                            &lanes, &fallback, z, w)
        act &= lanes
        _lanes_rank(px, row0, nrow, Wt, A, M, offsets, L, k_nn, g, m1, i1, m2, act | small,
                    redo | small, &lanes, &fallback, z, w)
    # 3. the Bayes decision, row by row; the rows left over go through _classify
    for l in range(nrow):
        bit = <uint16_t> (1 << l)
        row = row0 + l
        x = px + row * A
        if fallback & bit:
            w.cnt[CNT_LANES_FALLBACK] += 1
            for j in range(M):
                z.d[j] = g[16 * j + l]
            gp = z.gap[l]
            if not isfinite(gp):
                gp = INFINITY   # every neuron a candidate: all distances exact
                for j in range(M):
                    z.d[j] = 0
            _classify(x, z.d, gp, Wt, A, M, ncls, offsets, L, T, logC, logA, k_nn, n_rank,
                      squared, skip_zero, w)
        else:
            _lanes_bayes(x, l, Wt, A, M, offsets, L, T, logC, logA, squared, skip_zero, g, m1,
                         i1, m2, z, w)
        for c in range(L):
            Y[row * L + c] = w.in_y[c]


cdef void _lanes_chunk(const floating *px, Py_ssize_t n, Py_ssize_t s, Py_ssize_t e,
                       const double *pc,
                       const float *pws, const float *pww, const floating *Wt, Py_ssize_t A,
                       Py_ssize_t M, const int32_t *ncls, const int64_t *offsets, Py_ssize_t L,
                       const int64_t *T, const double *logC, const double *logA,
                       Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                       double tscale, double wwmax, uint8_t *Y, Lanes *z,
                       Work *w) noexcept nogil:
    """Classify rows s .. e - 1 (at most 64): screen them (rows past e padded with zeros), then
    each group of 16."""
    cdef Py_ssize_t r, q, nr, n_next
    for q in range(4):
        nr = e - s - 16 * q
        nr = 0 if nr < 0 else (16 if nr > 16 else nr)
        if floating is double:
            mlsom_centre16_d(px + (s + 16 * q) * A, A, nr, pc, z.row, z.xb + 16 * A * q,
                             z.xx + 16 * q)
        else:
            mlsom_centre16_f(px + (s + 16 * q) * A, A, nr, pc, z.row, z.xb + 16 * A * q,
                             z.xx + 16 * q)
    for r in range(64):
        z.base[r] = <float> z.xx[r]
    # the next chunk's rows (a thread takes four consecutive chunks at a time) are read while
    # these are screened
    n_next = min(64, n - e) if e < n else 0
    if n_next > 0:
        mlsom_prefetch(px + e * A, n_next * A * sizeof(floating))
    mlsom_screen64maps_f(z.xb, pws, A, M, z.base, pww, offsets, L, z.gt, z.m1, z.i1, z.m2, z.hi)
    for q in range(4):
        if s + 16 * q < e:
            _lanes_group(px, s + 16 * q, min(16, e - s - 16 * q), q, Wt, A, M, ncls, offsets, L,
                         T, logC, logA, k_nn, n_rank, squared, skip_zero, tscale, wwmax, Y, z, w)
