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
                        const Guards *gd) noexcept nogil:
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
                         const Guards *gd) noexcept nogil:
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


def predict(const floating[:, ::1] X, const floating[:, ::1] Wt, const int32_t[::1] ncls,
            const int64_t[::1] offsets, const double[::1] logA, const int64_t[:, ::1] T,
            int64_t N, int64_t S, Py_ssize_t k_nn, bint squared, bint skip_zero,
            const float[:, ::1] Ws, const float[::1] ww, const double[::1] cc,
            const floating[:, ::1] Wr, uint8_t[:, ::1] Y, long long n_threads_asked,
            bint ctl=False, double theta=0.0, const double[::1] thl=None,
            const double[::1] zl=None, const floating[:, ::1] guards=None,
            const int64_t[::1] guard_counts=None, const floating[:, ::1] supports=None,
            const int64_t[::1] support_counts=None, const uint8_t[::1] guards_on=None,
            const double[::1] phl=None):
    """Frozen scoring: classify every row of X independently from the given state.

    IN  X (n, A) and the state (read only), with Ws, ww, cc its screening copy (screening_copy)
    and Wr (M, A) its neurons one per row (the exact distances read them contiguously); ctl:
    the Bayes test's right-hand side gets + theta (the robust variant's acceptance offset),
    then + phl[c] for label c where phl (L) is given (its per-label offsets);
    thl (L) and zl (2), together or not at all: what labels taught the decision rule, the
    acceptance offsets and the labelled cardinality (stream's LabelMem); guards (M, A),
    guard_counts (L), supports (M, A), support_counts (L) and guards_on (L), together, with
    thl or not at all: each label's guards (stream's).
    OUT Y (n, L).
    With the 16-row kernels (AVX2 or AVX-512), chunks of 64 rows are spread over n_threads
    OpenMP threads and classified 16 rows at a time (_lanes_chunk); the rows of a last chunk of
    fewer than LANES_MIN rows, and every row elsewhere, go in blocks of PRB rows screened by the
    four-row kernel and classified one by one (_classify). A row's result does not depend on the
    path, the chunks or the threads.
    """
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t c, n_rank
    cdef int failed = 0
    cdef double wwmax, tscale
    cdef bint screening = _sw.screening
    # 16 rows at a time where the 16-row kernels are selected (the same results), in chunks of
    # 64 rows; a last chunk of fewer than LANES_MIN rows (all of a small call) goes row by row,
    # which is faster than screening a padded chunk of 64
    cdef bint lanes = screening and mlsom_screen64maps_f != NULL and M > 0 and _sw.lanes
    cdef Py_ssize_t n_lanes = 0
    if lanes:
        n_lanes = n // 64 * 64
        if n - n_lanes >= LANES_MIN:
            n_lanes = n
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    cdef const double *pthl = NULL
    cdef const double *pphl = NULL
    if phl is not None:
        if not ctl or phl.shape[0] != L:
            raise ValueError("phl comes with ctl, shaped (L,)")
        pphl = &phl[0]
    cdef const double *pzl = NULL
    if thl is not None or zl is not None:
        if thl is None or zl is None or thl.shape[0] != L or zl.shape[0] != 2:
            raise ValueError("thl and zl must come together, shaped (L,) and (2,)")
        pthl = &thl[0]
        pzl = &zl[0]
    cdef Guards guard
    cdef const Guards *gd = NULL
    if guards is not None:
        if pthl == NULL or not _guards_view(&guard, guards, guard_counts, supports,
                                            support_counts, guards_on, offsets, M, A, L):
            raise ValueError("guards, guard_counts, supports, support_counts and guards_on "
                             "must come together, with thl, shaped (M, A), (L,), (M, A), (L,) "
                             "and (L,)")
        gd = &guard
    n_rank = _n_ranked(S, N, L, pzl)
    # raw pointers inside the parallel region (no memoryview checks there in debug builds)
    cdef const floating *px = &X[0, 0]
    cdef const floating *pw = &Wt[0, 0]
    cdef const floating *pwr = &Wr[0, 0]
    cdef const double *pc = &cc[0]
    cdef const float *pws = &Ws[0, 0]
    cdef const float *pww = &ww[0]
    cdef const int32_t *pncls = &ncls[0]
    cdef const int64_t *poff = &offsets[0]
    cdef const double *plogA = &logA[0]
    cdef const int64_t *pT = &T[0, 0]
    cdef const double *plogC = &logC[0, 0]
    cdef uint8_t *pY = &Y[0, 0]
    with nogil:
        for c in range(L):
            _log_cond(pT, L, &logC[0, 0], c)
        wwmax = _maxval(pww, M)
        tscale = _tol_scale(A)
        if lanes:
            failed = _predict_lanes(px, n, n_lanes, pc, pws, pww, pw, pwr, A, M, pncls, poff, L,
                                    pT, plogC, plogA, k_nn, n_rank, squared, skip_zero, tscale,
                                    wwmax, pY, n_threads, ctl, theta, pphl, pthl, gd)
        if n_lanes < n and not failed:
            failed = _predict_blocks(px, n_lanes, n, pc, pws, pww, pw, pwr, A, M, pncls, poff,
                                     L, pT, plogC, plogA, k_nn, n_rank, squared, skip_zero,
                                     screening, tscale, wwmax, pY, n_threads, ctl, theta,
                                     pphl, pthl, gd)
    if failed:
        raise MemoryError()
