# Frozen scoring (predict): blocks of rows across threads, each row classified with the
# ranking of the online phase; the 16-row path where the processor has it.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

cdef void _predict_rows(const floating *px, Py_ssize_t s, Py_ssize_t e, const double *pc,
                        const float *pws, const float *pww, const floating *Wt, Py_ssize_t A,
                        Py_ssize_t M, const int32_t *ncls, const int64_t *offsets, Py_ssize_t L,
                        const int64_t *T, const double *logC, const double *logA,
                        Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                        bint screening, double tscale, double wwmax, uint8_t *Y, float *G,
                        float *X2, double *xx, Work *w) noexcept nogil:
    """Classify rows s:e (at most PRB) one by one: screen them with the four-row kernel, then
    _classify each; OUT their rows of Y. G, X2, xx: this thread's scratch."""
    cdef Py_ssize_t row, c, j
    cdef double gap
    cdef float *g
    if screening:
        for row in range(s, e):
            xx[row - s] = _centre_row(px + row * A, pc, A, X2 + (row - s) * A)
        _screen_rows(X2, xx, e - s, pws, pww, A, M, G, G + PRB * M, NULL, NULL, NULL)
    for row in range(s, e):
        g = G + (row - s) * M
        gap = _screen_gap(tscale, xx[row - s], wwmax) if screening else INFINITY
        if not isfinite(gap):
            for j in range(M):   # every neuron a candidate: all distances exact
                g[j] = 0
        _classify(px + row * A, g, gap, Wt, A, M, ncls, offsets, L, T, logC, logA, k_nn,
                  n_rank, squared, skip_zero, w)
        for c in range(L):
            Y[row * L + c] = w.in_y[c]


cdef int _predict_lanes(const floating *px, Py_ssize_t n, Py_ssize_t n_lanes, const double *pc,
                        const float *pws, const float *pww, const floating *pw,
                        const floating *pwr, Py_ssize_t A, Py_ssize_t M, const int32_t *pncls,
                        const int64_t *poff, Py_ssize_t L, const int64_t *pT,
                        const double *plogC, const double *plogA, Py_ssize_t k_nn,
                        Py_ssize_t n_rank, bint squared, bint skip_zero, double tscale,
                        double wwmax, uint8_t *pY, int n_threads, bint ctl,
                        double theta, const double *phl, const double *thl,
                        Py_ssize_t cap, const Guards *gd) noexcept nogil:
    """Rows 0:n_lanes on the 16-row path: chunks of 64 rows over the threads (_lanes_chunk).
    Returns how many threads could not get their buffers (0: all done)."""
    cdef Py_ssize_t ch, s
    cdef int failed = 0
    cdef Work *w
    cdef Lanes *z
    with parallel(num_threads=n_threads):
        w = _work_alloc(M, L)
        if w != NULL:
            w.wr = pwr
            w.ctl = ctl
            w.theta = theta
            w.phl = phl
            w.thl = thl
            w.extra = thl != NULL  # (given only once labels have taught the rule)
            w.cap = cap
            w.gd = gd
        z = _lanes_alloc(A, M, L)
        # dynamic: a thread slowed by other work on a shared machine does not hold the others
        # up (the rows are independent, so the results do not depend on who takes a chunk);
        # four chunks (256 rows) per take keep the scheduling cost small
        for ch in prange((n_lanes + 63) // 64, schedule="dynamic", chunksize=4):
            if w == NULL or z == NULL:
                failed += 1
                continue
            s = ch * 64
            _lanes_chunk(px, n, s, min(n_lanes, s + 64), pc, pws, pww, pw, A, M, pncls, poff, L,
                         pT, plogC, plogA, k_nn, n_rank, squared, skip_zero, tscale, wwmax, pY, z,
                         w)
        _work_free(w)
        _lanes_free(z)
    return failed


cdef int _predict_blocks(const floating *px, Py_ssize_t s0, Py_ssize_t n, const double *pc,
                         const float *pws, const float *pww, const floating *pw,
                         const floating *pwr, Py_ssize_t A, Py_ssize_t M, const int32_t *pncls,
                         const int64_t *poff, Py_ssize_t L, const int64_t *pT,
                         const double *plogC, const double *plogA, Py_ssize_t k_nn,
                         Py_ssize_t n_rank, bint squared, bint skip_zero, bint screening,
                         double tscale, double wwmax, uint8_t *pY, int n_threads, bint ctl,
                         double theta, const double *phl, const double *thl,
                         Py_ssize_t cap, const Guards *gd) noexcept nogil:
    """Rows s0:n row by row: blocks of PRB rows over the threads (_predict_rows). Returns how
    many threads could not get their buffers (0: all done)."""
    cdef Py_ssize_t ch, s
    cdef int failed = 0
    cdef Work *w
    cdef float *G
    cdef float *X2
    cdef double *xx
    with parallel(num_threads=n_threads):
        w = _work_alloc(M, L)
        if w != NULL:
            w.wr = pwr
            w.ctl = ctl
            w.theta = theta
            w.phl = phl
            w.thl = thl
            w.extra = thl != NULL  # (given only once labels have taught the rule)
            w.cap = cap
            w.gd = gd
        G = <float *> malloc((PRB * M + 4) * sizeof(float))
        X2 = <float *> malloc(PRB * A * sizeof(float))
        xx = <double *> malloc(PRB * sizeof(double))
        for ch in prange((n - s0 + PRB - 1) // PRB, schedule="dynamic", chunksize=32):
            if w == NULL or G == NULL or X2 == NULL or xx == NULL:
                failed += 1
                continue
            s = s0 + ch * PRB
            _predict_rows(px, s, min(n, s + PRB), pc, pws, pww, pw, A, M, pncls, poff, L, pT,
                          plogC, plogA, k_nn, n_rank, squared, skip_zero, screening, tscale,
                          wwmax, pY, G, X2, xx, w)
        _work_free(w)
        free(G)
        free(X2)
        free(xx)
    return failed


ctypedef struct Frozen:
    # frozen scoring's settings and decision rule (predict in _core_state.pxi)
    int n_threads
    bint skip_zero
    bint ctl            # the Bayes test's right-hand side gets + theta ...
    double theta
    const double *phl   # ... and + phl[c] for label c (L), or NULL
    const double *thl   # (L) what labels taught the rule: the acceptance offsets ...
    const double *zl    # (2) ... and the labelled cardinality, or both NULL
    const Guards *gd    # each label's guards (with thl), or NULL


cdef int _predict_frozen(const Frozen *f, const ModelView *v, const floating *px, Py_ssize_t n,
                         const floating *pwr, uint8_t *pY) noexcept nogil:
    """Classify the n rows px independently from the model v (read only; pwr: its neurons one
    per row, (M, A)), OUT pY (n, L); nonzero if memory ran out. 16 rows at a time where the
    16-row kernels are selected (the same results), in chunks of 64 rows; a last chunk of
    fewer than LANES_MIN rows (all of a small call) goes row by row, which is faster than
    screening a padded chunk of 64."""
    cdef Py_ssize_t A = v.A, M = v.M, L = v.L, c, n_rank, n_lanes = 0, cap
    cdef int failed = 0
    cdef double wwmax, tscale
    cdef bint screening = _sw.screening
    cdef bint lanes = screening and mlsom_screen64maps_f != NULL and M > 0 and _sw.lanes
    cdef const floating *pw = <const floating *> v.wt
    cdef double *logC = <double *> malloc(L * L * sizeof(double) + 1)
    if logC == NULL:
        return 1
    if lanes:
        n_lanes = n // 64 * 64
        if n - n_lanes >= LANES_MIN:
            n_lanes = n
    for c in range(L):
        _log_cond(v.T, L, logC, c)
    n_rank = _n_ranked(v.NS[1], v.NS[0], L, f.zl)
    cap = _label_cap(f.zl) if f.thl != NULL else 0
    wwmax = _maxval(v.ww, M)
    tscale = _tol_scale(A)
    if lanes:
        failed = _predict_lanes(px, n, n_lanes, v.cc, v.Ws, v.ww, pw, pwr, A, M, v.ncls,
                                v.offsets, L, v.T, logC, v.logA, v.k_nn, n_rank, v.squared,
                                f.skip_zero, tscale, wwmax, pY, f.n_threads, f.ctl, f.theta,
                                f.phl, f.thl, cap, f.gd)
    if n_lanes < n and not failed:
        failed = _predict_blocks(px, n_lanes, n, v.cc, v.Ws, v.ww, pw, pwr, A, M, v.ncls,
                                 v.offsets, L, v.T, logC, v.logA, v.k_nn, n_rank, v.squared,
                                 f.skip_zero, screening, tscale, wwmax, pY, f.n_threads, f.ctl,
                                 f.theta, f.phl, f.thl, cap, f.gd)
    free(logC)
    return failed
