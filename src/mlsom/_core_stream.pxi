# Online phase over a stream: classify each instance, then move its predicted labels' best
# units and update T, N, S and averOut (stream).
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

cdef inline Py_ssize_t _ceil_div(int64_t a, int64_t b) noexcept nogil:
    return <Py_ssize_t> ((a + b - 1) // b)


def stream(const floating[:, ::1] X, floating[:, ::1] Wt, const int32_t[::1] ncls,
           const int64_t[::1] offsets, int64_t[::1] counts, double[::1] logA, int64_t[:, ::1] T,
           int64_t[::1] NS, Py_ssize_t k_nn, double eta, bint squared, bint skip_zero,
           float[:, ::1] Ws, float[::1] ww, const double[::1] cc, uint8_t[:, ::1] Y):
    """The online phase over a chunk of the stream, in order, adapting after every instance.

    IN  X (n, A); ncls (M) label of each neuron; offsets (L+1) neurons of label c are
        offsets[c]:offsets[c+1].
    IN/OUT Wt (A, M) weights; counts (M) n_b; logA (M) log averOut; T (L, L) label (co-)counts;
           NS (2) = [N, S], instances seen and sum of predicted label-set sizes;
           Ws (A, M), ww (M): the screening copy of Wt centred on cc (screening_copy), kept in
           step with Wt as neurons move.
    OUT Y (n, L): the 0/1 predictions.
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t row, r, c, c2, b, i, n_pred, n_rank
    cdef int64_t N, S, nb
    cdef double dist, gap, wwmax, tscale
    cdef floating etaf = <floating> eta, wv, tv, s
    cdef floating sl[8]
    cdef Py_ssize_t a8 = A - A % 8
    cdef float nrm, ws
    cdef const floating *x
    cdef floating *wt = &Wt[0, 0]
    cdef float *d
    cdef float *G = NULL
    cdef float *X2 = NULL
    cdef double xxb[4]
    cdef float base4[4]
    cdef float gp[3]
    cdef const float *xp
    cdef Py_ssize_t npend
    cdef Py_ssize_t s0, e0, r2, j
    cdef bint screening = _sw.screening
    cdef int64_t *t = &T[0, 0]
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    cdef Work *w = _work_alloc(M, L)
    G = <float *> malloc(4 * M * sizeof(float))
    X2 = <float *> malloc(4 * A * sizeof(float))
    if w == NULL or G == NULL or X2 == NULL:
        _work_free(w)
        free(G)
        free(X2)
        raise MemoryError()
    try:
        with nogil:
            for c in range(L):
                _log_cond(t, L, &logC[0, 0], c)
            wwmax = _maxval(&ww[0], M)
            tscale = _tol_scale(A)
            N = NS[0]
            S = NS[1]
            # Instances are screened four at a time against the current neurons (the four-row
            # kernel loads each weight once for the four); the screening values of a neuron that
            # moves are then recomputed for the instances of the block still to come, so every
            # instance is screened against the neurons as they are when its turn comes.
            s0 = 0
            while s0 < n:
                e0 = min(n, s0 + 4)
                if screening:
                    for row in range(s0, e0):
                        xxb[row - s0] = _centre_row(&X[row, 0], &cc[0], A, X2 + (row - s0) * A)
                    _screen_rows(X2, xxb, e0 - s0, &Ws[0, 0], &ww[0], A, M, G, base4, NULL, NULL,
                                 NULL)
                for row in range(s0, e0):
                    x = &X[row, 0]
                    d = G + (row - s0) * M
                    n_rank = _ceil_div(S, N)
                    if n_rank > L:
                        n_rank = L
                    gap = _screen_gap(tscale, xxb[row - s0], wwmax) if screening else INFINITY
                    if not isfinite(gap):
                        gap = INFINITY   # every neuron a candidate: all distances exact
                        for j in range(M):
                            d[j] = 0
                    n_pred = _classify(x, d, gap, wt, A, M, &ncls[0], &offsets[0], L, t,
                                       &logC[0, 0], &logA[0], k_nn, n_rank, squared, skip_zero,
                                       w)
                    # the best-matching unit of every predicted map moves towards x; its new norm
                    # and its exact distance to x after the move are computed on the way
                    N += 1
                    S += n_pred
                    for r in range(L):
                        c = w.rank[r]
                        if c < 0:
                            break
                        if not w.in_y[c]:
                            continue
                        b = _winner(x, d, gap, wt, A, M, &offsets[0], c, w)
                        # (the distance summed in _sqdist_col's order)
                        for i in range(8):
                            sl[i] = 0
                        nrm = 0
                        # the instances of the block still to come: their screening values of
                        # the moved neuron, summed on the way (npend of them, at most 3)
                        npend = e0 - row - 1 if screening else 0
                        gp[0] = 0
                        gp[1] = 0
                        gp[2] = 0
                        xp = X2 + (row + 1 - s0) * A
                        for i in range(A):
                            wv = wt[i * M + b]
                            wv = wv + etaf * (x[i] - wv)
                            wt[i * M + b] = wv
                            tv = x[i] - wv
                            if i < a8:
                                sl[i & 7] = sl[i & 7] + tv * tv
                            else:
                                if i == a8:
                                    s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + (
                                        (sl[4] + sl[5]) + (sl[6] + sl[7]))
                                s = s + tv * tv
                            ws = <float> (<double> wv - cc[i])
                            Ws[i, b] = ws
                            nrm = nrm + ws * ws
                            if npend > 0:
                                gp[0] = gp[0] + xp[i] * ws
                                if npend > 1:
                                    gp[1] = gp[1] + xp[A + i] * ws
                                    if npend > 2:
                                        gp[2] = gp[2] + xp[2 * A + i] * ws
                        if a8 == A:
                            s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + (
                                (sl[4] + sl[5]) + (sl[6] + sl[7]))
                        ww[b] = nrm
                        if nrm > wwmax:
                            wwmax = nrm
                        for r2 in range(npend):
                            G[(row + 1 + r2 - s0) * M + b] = (
                                (<float> xxb[row + 1 + r2 - s0] + nrm) + gp[r2])
                        # averOut: running mean, in log space, of exp(-distance after the move)
                        dist = s if squared else sqrt(<double> s)
                        nb = counts[b]
                        logA[b] = (_logaddexp(log(<double> nb) + logA[b], -dist)
                                   - log(<double> (nb + 1)))
                        if logA[b] > 0.0:
                            logA[b] = 0.0   # a mean of values <= 1 is <= 1; rounding could say more
                        counts[b] = nb + 1
                        Y[row, c] = 1
                        # co-occurrence counts of the predicted pairs (c, c2)
                        for c2 in range(L):
                            if w.in_y[c2]:
                                t[c * L + c2] += 1
                    # the conditional probabilities of the changed columns
                    for c in range(L):
                        if w.in_y[c]:
                            _log_cond(t, L, &logC[0, 0], c)
                s0 = e0
            NS[0] = N
            NS[1] = S
    finally:
        _work_free(w)
        free(G)
        free(X2)
