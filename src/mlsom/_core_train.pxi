# Offline phase: batch Kohonen training of one map (row screening and the best-matching
# units, the batch update in double-double sums, the radius schedule and the stop rule), and the
# offline log averOut.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

# --------------------------------------------------------------------------------------------------
# offline phase: batch Kohonen training of one map
# --------------------------------------------------------------------------------------------------

cdef inline int _threads(double work, int n_threads) noexcept nogil:
    """Threads for a parallel loop of about `work` floating-point operations: one below 4e6, where
    starting and joining threads costs more than it saves (and far more on a busy machine)."""
    return n_threads if work >= 4e6 else 1


cdef enum:
    RB = 64   # rows per screening block of the training (a thread's unit of work)
    PRB = 8   # rows per block of predict: a block's screening values (8 M floats) stay in
              # the first-level cache while its rows are classified (faster than 4 to 64)


cdef void _screen_rows(const float *X2, const double *xx, Py_ssize_t r, const float *Ws,
                       const float *ww, Py_ssize_t A, Py_ssize_t M, float *G, float *base,
                       int32_t *idx, float *m1, float *m2) noexcept nogil:
    """OUT G (r, M): screening values of r rows whose -2 x' are X2 (r, A) and |x'|^2 are xx,
    four rows per pass of the neurons (each weight loaded serves four rows). base: scratch (4).
    With idx not NULL, also every row's smallest screening value (OUT m1), the first index of it
    (OUT idx) and the smallest of the others (OUT m2): a row's nearest neuron is then settled
    without a second pass whenever m2 is beyond the screening gap of m1."""
    cdef Py_ssize_t q = 0
    while q + 4 <= r:
        base[0] = <float> xx[q]
        base[1] = <float> xx[q + 1]
        base[2] = <float> xx[q + 2]
        base[3] = <float> xx[q + 3]
        mlsom_screen4_f(X2 + q * A, Ws, A, M, base, ww, G + q * M)
        q += 4
    while q < r:
        mlsom_screen_f(X2 + q * A, Ws, A, M, <float> xx[q], ww, G + q * M)
        q += 1
    if idx != NULL:
        for q in range(r):
            mlsom_min2_f(G + q * M, M, idx + q, m1 + q, m2 + q)


cdef inline float _float_up(double v) noexcept nogil:
    """v rounded up to float32 (a limit that keeps every value at most v)."""
    cdef float f = <float> v
    if <double> f < v:
        f = nextafterf(f, INFINITY)
    return f


cdef Py_ssize_t _nearest_within(const floating *x, const float *g, Py_ssize_t gs, float limt,
                                const floating *Wr, Py_ssize_t A, Py_ssize_t M) noexcept nogil:
    """The exact nearest (first on ties) of the neurons whose screening value g[j * gs] is at
    most limt, from a row-major copy Wr of the neurons: _refine_argmin when the limit is already
    known."""
    cdef Py_ssize_t j, best = -1
    cdef double e, be = INFINITY
    _counts[CNT_BMU] += 1
    for j in range(M):
        if g[j * gs] <= limt:
            e = _sqdist_row(x, Wr + j * A, A)
            if best < 0 or e < be:
                be = e
                best = j
    return best


cdef double _centre_row(const floating *x, const double *c, Py_ssize_t A,
                        float *x2) noexcept nogil:
    """OUT x2 = -2 x' with x' = x - c rounded to float32; returns |x'|^2 (float32 partial sums)."""
    cdef Py_ssize_t i, k
    cdef float xx = 0
    cdef float part[8]
    for i in range(A):
        x2[i] = <float> (<double> x[i] - c[i])
    for k in range(8):
        part[k] = 0
    i = 0
    while i + 8 <= A:
        for k in range(8):
            part[k] = part[k] + x2[i + k] * x2[i + k]
        i += 8
    while i < A:
        part[0] = part[0] + x2[i] * x2[i]
        i += 1
    for k in range(8):
        xx = xx + part[k]
    for i in range(A):
        x2[i] = -2 * x2[i]
    return xx


cdef _shadow(Wt, c):
    """The centred float32 copy of the neurons used for screening, and its column norms."""
    Ws = np.ascontiguousarray(np.asarray(Wt) - np.asarray(c)[:, None], dtype=np.float32)
    cdef Py_ssize_t A = Ws.shape[0], M = Ws.shape[1]
    ww = np.empty(M, dtype=np.float32)
    cdef float[:, ::1] ws_ = Ws
    cdef float[::1] ww_ = ww
    with nogil:
        _col_norms(&ws_[0, 0], A, M, &ww_[0])
    return Ws, ww


def screening_copy(Wt):
    """(Ws, ww, c): the centred float32 copy of the neurons Wt (A, M) that screens distances in
    predict_stream and predict, its column norms, and its centre (the mean of the neurons).
    predict_stream keeps it in step with Wt; any centre gives the same results."""
    c = np.asarray(Wt, dtype=np.float64).mean(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        Ws, ww = _shadow(Wt, c)
    return Ws, ww, c


cdef inline Py_ssize_t _chunk_scratch(Py_ssize_t M) noexcept nogil:
    """Floats of a thread's scratch for _assign_chunk: RB * M screening values, 4 spare, each
    row's smallest two and first index (3 RB), the rows' float32 norms (RB), then M zeros."""
    return RB * M + 4 + 4 * RB + M


cdef inline void _assign_chunk(const floating *px, const float *px2, const double *pxx,
                               Py_ssize_t s, Py_ssize_t e, const float *pws, const float *pww,
                               const floating *pwr, Py_ssize_t A, Py_ssize_t M, bint screening,
                               mlsom_screen64min_f_fn k64, double wwmax, double tscale, float *G,
                               int64_t *pbmu, double *pd2, bint want_d2) noexcept nogil:
    """The assignment of rows s:e (at most RB): screen them (the 64-row kernel k64, or the
    four-row tile), then settle each row's best-matching unit, with exact distances for the
    neurons within the bound of its smallest screening value (OUT pbmu, and pd2 with want_d2).
    G: this thread's scratch (_chunk_scratch), its last M floats zeros (the screening values
    when every distance is exact)."""
    cdef float *m1 = G + RB * M + 4
    cdef float *m2 = m1 + RB
    cdef int32_t *idx = <int32_t *> (m2 + RB)
    cdef float *bf = m2 + 2 * RB
    cdef float *z = G + _chunk_scratch(M) - M
    cdef float *g
    cdef Py_ssize_t row, b, gs
    cdef double gap
    cdef float limt
    if screening and k64 != NULL:
        # the blocked rows are padded to whole blocks of RB (RB == 64)
        for row in range(RB):
            bf[row] = <float> pxx[s + row]
        k64(px2 + s * A, pws, A, M, bf, pww, G, idx, m1, m2)
    elif screening:
        _screen_rows(px2 + s * A, pxx + s, e - s, pws, pww, A, M, G, G + RB * M, idx, m1, m2)
    for row in range(s, e):
        if k64 != NULL:
            g = G + (row - s)
            gs = RB
        else:
            g = G + (row - s) * M
            gs = 1
        gap = _screen_gap(tscale, pxx[row], wwmax) if screening else INFINITY
        if isfinite(gap):
            # the nearest is settled when no other value is within the gap (the bound rounded
            # up to float32, as _refine_argmin does)
            limt = _float_up(<double> m1[row - s] + gap)
            if m2[row - s] > limt:
                b = idx[row - s]
            else:
                b = _nearest_within(px + row * A, g, gs, limt, pwr, A, M)
        else:
            # every neuron a candidate: all distances exact
            b = _refine_argmin(px + row * A, z, gap, pwr, A, 1, A, 0, M, NULL, NULL, 0)
        pbmu[row] = b
        if want_d2:
            pd2[row] = _sqdist_row(px + row * A, pwr + b * A, A)


cdef _assign(const floating[:, ::1] X, const float[:, ::1] X2, const double[::1] xxs,
             const double[::1] c, const floating[:, ::1] Wt, int64_t[::1] bmu,
             double[::1] bmu_d2, bint want_d2, int n_threads,
             mlsom_screen64min_f_fn k64=NULL):
    """Best-matching unit of every row of X among the neurons Wt (OUT bmu) and, with want_d2, its
    exact squared distance (OUT bmu_d2). X2, xxs: -2 x' for the rows' centred float32 copies x'
    (centre c) and |x'|^2, from _centred32x2; with k64 (not NULL) X2 is in its blocked layout
    and k64 screens 64 rows at a time. One parallel region; blocks of RB rows per thread."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1]
    cdef Py_ssize_t ch, j, n_chunks = (n + RB - 1) // RB
    cdef double wwmax, tscale
    cdef int failed = 0
    cdef float *G
    cdef bint screening = _sw.screening
    with np.errstate(over="ignore", invalid="ignore"):
        Ws_arr, ww_arr = _shadow(Wt, c)
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    # a row-major copy of the neurons: exact distances read each neuron contiguously
    Wr_arr = np.ascontiguousarray(np.asarray(Wt).T)
    cdef const floating[:, ::1] Wr = Wr_arr
    # raw pointers inside the parallel region (no memoryview checks there in debug builds)
    cdef const floating *px = &X[0, 0]
    cdef const floating *pwr = &Wr[0, 0]
    cdef const float *px2 = &X2[0, 0]
    cdef const double *pxx = &xxs[0]
    cdef const float *pws = &Ws[0, 0]
    cdef const float *pww = &ww[0]
    cdef int64_t *pbmu = &bmu[0]
    cdef double *pd2 = &bmu_d2[0]
    with nogil:
        wwmax = _maxval(pww, M)
        tscale = _tol_scale(A)
        with parallel(num_threads=_threads(1.0 * n * M * A, n_threads)):
            G = <float *> malloc(_chunk_scratch(M) * sizeof(float))
            if G != NULL:
                for j in range(_chunk_scratch(M) - M, _chunk_scratch(M)):
                    G[j] = 0
            for ch in prange(n_chunks, schedule="static"):
                if G == NULL:
                    failed += 1
                    continue
                _assign_chunk(px, px2, pxx, ch * RB, min(n, ch * RB + RB), pws, pww, pwr, A, M,
                              screening, k64, wwmax, tscale, G, pbmu, pd2, want_d2)
            free(G)
    if failed:
        raise MemoryError()


cdef _centred32x2(const floating[:, ::1] X, c, int n_threads, bint blocked=False):
    """-2 x' for the centred float32 copies x' = X - c of the rows, and |x'|^2 per row (rows in
    parallel: each row's values do not depend on the others).

    blocked: the layout of mlsom_screen64min_f, blocks of 16 rows with each feature's 16 values
    contiguous (row i, feature a at [(i // 16) * 16 A + 16 a + i % 16]), zero rows (and |x'|^2)
    up to a whole number of RB rows."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], i, a
    cdef Py_ssize_t n_pad = (n + RB - 1) // RB * RB if blocked else n
    cdef float *buf
    cdef int failed = 0
    X2 = np.zeros((n_pad, A), dtype=np.float32) if blocked else np.empty((n, A), dtype=np.float32)
    xx = np.zeros(n_pad, dtype=np.float64)
    cdef float[:, ::1] x2_ = X2
    cdef double[::1] xx_ = xx
    cdef const double[::1] c_ = c
    cdef const floating *px
    cdef float *px2
    cdef double *pxx
    cdef const double *pc
    if n == 0 or A == 0:
        return X2, xx
    px = &X[0, 0]
    px2 = &x2_[0, 0]
    pxx = &xx_[0]
    pc = &c_[0]
    with nogil:
        if not blocked:
            for i in prange(n, schedule="static", num_threads=_threads(4.0 * n * A, n_threads)):
                pxx[i] = _centre_row(px + i * A, pc, A, px2 + i * A)
        else:
            with parallel(num_threads=_threads(4.0 * n * A, n_threads)):
                buf = <float *> malloc(A * sizeof(float))
                for i in prange(n, schedule="static"):
                    if buf == NULL:
                        failed += 1
                        continue
                    pxx[i] = _centre_row(px + i * A, pc, A, buf)
                    for a in range(A):
                        px2[(i // 16) * 16 * A + 16 * a + i % 16] = buf[a]
                free(buf)
    if failed:
        raise MemoryError()
    return X2, xx


cdef inline void _two_sum(double a, double b, double *s, double *e) noexcept nogil:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    cdef double s_ = a + b, bp = s_ - a, ap = s_ - bp
    e[0] = (a - ap) + (b - bp)
    s[0] = s_


cdef inline void _two_prod(double a, double b, double *p, double *e) noexcept nogil:
    """p + e = a b exactly, p = fl(a b) (Dekker's product, no fused multiply-add)."""
    cdef double p_ = a * b, ca = 134217729.0 * a, cb = 134217729.0 * b
    cdef double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh
    e[0] = ((ah * bh - p_) + ah * bl + al * bh) + al * bl
    p[0] = p_


cdef inline double _radius(Py_ssize_t e, double r0, Py_ssize_t n_epochs) noexcept nogil:
    """The schedule: radius r_e = r0 (n_epochs - e) / n_epochs, 0 from epoch n_epochs on."""
    if e < n_epochs:
        return r0 * <double> (n_epochs - e) / <double> n_epochs
    return 0.0


cdef void _bmu_sums(const floating *X, Py_ssize_t n, Py_ssize_t A, const int64_t *bmu,
                    Py_ssize_t M, int64_t *cnt, double *shi, double *slo, Py_ssize_t ld,
                    Py_ssize_t *vb, int n_threads) noexcept nogil:
    """The update sums, first half: OUT cnt (M) the rows per best-matching unit and shi + slo
    (M, A; rows ld apart) their sums, each in row order in double-double arithmetic (about 8
    floating-point operations per element). In parallel over ranges of units holding about as
    many rows each (vb: n_threads + 1 bounds, scratch), so that each row is read by one thread
    and each sum is taken in row order whatever the thread count."""
    cdef Py_ssize_t i, v, t, acc = 0
    cdef int nt = _threads(8.0 * n * A, n_threads)
    for v in range(M):
        cnt[v] = 0
    for i in range(n):
        cnt[bmu[i]] += 1
    # unit ranges: range t ends at the first unit where the rows so far reach (t + 1) n / nt
    vb[0] = 0
    t = 1
    for v in range(M):
        acc += cnt[v]
        while t < nt and acc * nt >= t * n:
            vb[t] = v + 1
            t += 1
    while t <= nt:
        vb[t] = M
        t += 1
    for t in prange(nt, schedule="static", num_threads=nt):
        if floating is double:
            mlsom_group_sums_d(X, n, A, bmu, shi, slo, ld, vb[t], vb[t + 1])
        else:
            mlsom_group_sums_f(X, n, A, bmu, shi, slo, ld, vb[t], vb[t + 1])


cdef void _neighbourhoods(const double[:, ::1] G, Py_ssize_t M, double r, bint winner_only,
                          bint gaussian, const int64_t *cnt, Py_ssize_t *nb_start,
                          Py_ssize_t *nb_v, double *nb_h) noexcept nogil:
    """The neighbourhood of the epoch: OUT each unit u's list of (BMU v, h(u, v)) with h > 0 and
    rows at v, v increasing (nb_v, nb_h from nb_start[u] to nb_start[u + 1]). h is 1 on the unit
    itself when winner_only, exp(-g^2 / 2 r^2) when gaussian, else 1 within the radius."""
    cdef Py_ssize_t u, v, t = 0
    cdef double h
    for u in range(M):
        nb_start[u] = t
        for v in range(M):
            if cnt[v] == 0:
                continue
            if winner_only:
                h = 1.0 if u == v else 0.0
            elif gaussian:
                h = exp(-(G[u, v] * G[u, v]) / (2.0 * r * r))
            elif G[u, v] <= r:
                h = 1.0
            else:
                h = 0.0
            if h > 0.0:
                nb_v[t] = v
                nb_h[t] = h
                t += 1
    nb_start[M] = t


cdef void _unit_means(floating *Wt, Py_ssize_t A, Py_ssize_t M, const double *shi,
                      const double *slo, Py_ssize_t ld, const int64_t *cnt, const Py_ssize_t *nbs,
                      const Py_ssize_t *nbv, const double *nbh, bint gaussian, double *uhi,
                      double *ulo, double *den, int n_threads) noexcept nogil:
    """The update sums, second half, and the update: unit u becomes
    sum_v h(u, v) S_v / sum_v h(u, v) n_v, both sums in double-double arithmetic, rounded once
    (a unit with no rows in its neighbourhood keeps its weight). IN/OUT Wt (A, M). Every (M, A)
    array of sums has its rows ld apart."""
    cdef Py_ssize_t u, a, t
    cdef double dh, dl, p, pe, se
    for u in prange(M, schedule="static",
                    num_threads=_threads(8.0 * (nbs[M] + M) * A, n_threads)):
        mlsom_combine(shi, slo, A, ld, nbv + nbs[u], nbh + nbs[u], nbs[u + 1] - nbs[u],
                      not gaussian, uhi + u * ld, ulo + u * ld)
        dh = 0.0
        dl = 0.0
        for t in range(nbs[u], nbs[u + 1]):
            _two_prod(nbh[t], <double> cnt[nbv[t]], &p, &pe)
            _two_sum(dh, p, &dh, &se)
            dl = dl + (se + pe)
        den[u] = dh + dl
    for u in range(M):
        if den[u] > 0.0:
            for a in range(A):
                Wt[a * M + u] = <floating> ((uhi[u * ld + a] + ulo[u * ld + a]) / den[u])


cdef _zeros64(shape):
    """A float64 array of zeros of the given 2-D shape whose data starts on a 64-byte boundary."""
    cdef Py_ssize_t size = shape[0] * shape[1]
    buf = np.zeros(size + 8, dtype=np.float64)
    cdef Py_ssize_t off = ((-buf.ctypes.data) % 64) // 8
    return buf[off:off + size].reshape(shape)


def train_map(floating[:, ::1] X, floating[:, ::1] Wt, const double[:, ::1] G, double r0,
              Py_ssize_t n_epochs, Py_ssize_t max_epochs, bint gaussian,
              int64_t[::1] bmu, double[::1] bmu_d2, long long n_threads_asked):
    """Batch Kohonen training of one map, in place.

    IN  X (n, A): the instances of one label.  G (M, M): grid distances.  r0: initial radius.
    IN/OUT Wt (A, M): initial weights, replaced by the trained weights.
    OUT bmu (n), bmu_d2 (n): each row's best-matching unit and exact squared distance under the
    final weights.

    Epoch e = 0, 1, ... : every unit becomes the (neighbourhood-weighted) mean of the rows whose
    best-matching unit lies in its neighbourhood (a unit with none keeps its weight), then the rows
    are re-assigned. Radius r_e = r0 (n_epochs - e) / n_epochs; an epoch with r_e < 1 (and every
    epoch from n_epochs on) is winner-only. Training stops after the first winner-only epoch that
    changes no assignment, or after max_epochs epochs.

    An epoch costs one product X Wt (the screening values of the assignment, four rows at a time),
    O(n A) for the rows' sums per best-matching unit and O(M^2 A) for the units' sums. The sums
    are carried in double-double arithmetic and rounded once (see _kernels.h): the weights are
    the correctly rounded means (but in cases of probability ~1e-16), whatever the grouping of the
    rows, and units that take the same rows get bit-identical weights.

    Returns (number of epochs run, converged).
    """
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1]
    cdef Py_ssize_t e, i, n_epochs_run = 0
    cdef double r
    cdef bint winner_only, converged = False
    cdef int64_t changed
    if n == 0:
        raise ValueError("train_map needs at least one row")
    # centre of the screening copies (any point will do: the mean in the rows' own type)
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xxs_arr = _centred32x2(X, c_arr, n_threads, k64 != NULL)
    cdef const float[:, ::1] X2 = X2_arr
    cdef double[::1] c_v = c_arr
    cdef double[::1] xxs_v = xxs_arr
    cdef int64_t[::1] cnt = np.zeros(M, dtype=np.int64)
    # the sums' rows are ld = A rounded up to 8 doubles apart, from a 64-byte boundary: every
    # row starts on a cache line, so that threads writing different units' rows never write one
    # line (the threads once split the features of rows A doubles apart: they then wrote the
    # same lines, and two threads took longer for the sums than one)
    cdef Py_ssize_t ld = (A + 7) // 8 * 8
    cdef Py_ssize_t[::1] vb = np.zeros(n_threads + 1, dtype=np.intp)
    cdef double[:, ::1] shi = _zeros64((M, ld))  # rows' sums per BMU ...
    cdef double[:, ::1] slo = _zeros64((M, ld))  # ... and their low parts
    cdef double[:, ::1] uhi = _zeros64((M, ld))  # units' weighted sums ...
    cdef double[:, ::1] ulo = _zeros64((M, ld))  # ... and their low parts
    cdef double[::1] den = np.zeros(M, dtype=np.float64)
    cdef int64_t[::1] bmu_new = np.empty(n, dtype=np.int64)
    cdef Py_ssize_t[::1] nb_start = np.zeros(M + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] nb_v = np.zeros(M * M, dtype=np.intp)
    cdef double[::1] nb_h = np.zeros(M * M, dtype=np.float64)

    _assign(X, X2, xxs_v, c_v, Wt, bmu, bmu_d2, False, n_threads, k64)
    for e in range(max_epochs):
        r = _radius(e, r0, n_epochs)
        winner_only = r < 1.0
        with nogil:
            _bmu_sums(&X[0, 0], n, A, &bmu[0], M, &cnt[0], &shi[0, 0], &slo[0, 0], ld,
                      &vb[0], n_threads)
            _neighbourhoods(G, M, r, winner_only, gaussian, &cnt[0], &nb_start[0], &nb_v[0],
                            &nb_h[0])
            _unit_means(&Wt[0, 0], A, M, &shi[0, 0], &slo[0, 0], ld, &cnt[0], &nb_start[0],
                        &nb_v[0], &nb_h[0], gaussian, &uhi[0, 0], &ulo[0, 0], &den[0], n_threads)
        _assign(X, X2, xxs_v, c_v, Wt, bmu_new, bmu_d2, False, n_threads, k64)
        changed = 0
        for i in range(n):
            if bmu_new[i] != bmu[i]:
                changed += 1
            bmu[i] = bmu_new[i]
        n_epochs_run = e + 1
        if winner_only and changed == 0:
            converged = True
            break
    _bmu_distances(X, Wt, bmu, bmu_d2, n_threads)
    return n_epochs_run, bool(converged)


cdef _bmu_distances(const floating[:, ::1] X, const floating[:, ::1] Wt,
                    const int64_t[::1] bmu, double[::1] bmu_d2, int n_threads):
    """OUT bmu_d2: each row's exact squared distance to its best-matching unit (rows in
    parallel, from a row-major copy of the neurons)."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], i
    Wr_arr = np.ascontiguousarray(np.asarray(Wt).T)   # each neuron contiguous
    cdef const floating[:, ::1] Wr = Wr_arr
    cdef const floating *px = &X[0, 0]
    cdef const floating *pwr = &Wr[0, 0]
    cdef const int64_t *pbmu = &bmu[0]
    cdef double *pd2 = &bmu_d2[0]
    with nogil:
        for i in prange(n, schedule="static", num_threads=_threads(3.0 * n * A, n_threads)):
            pd2[i] = _sqdist_row(px + i * A, pwr + pbmu[i] * A, A)


def log_mean_exp(const double[::1] dist, const int64_t[::1] bmu, const int64_t[::1] cnt,
                 double[::1] out):
    """OUT out[b] = log(mean of exp(-dist[i]) over the rows i with bmu[i] == b), at most 0, for
    every unit b with cnt[b] > 0 rows (others are left as they are): fit's offline log averOut.

    A log-sum-exp from each unit's largest term, summed in row order, with the C library's exp
    and log: the same bits on every machine (NumPy's float64 exp and log have SIMD versions that
    round differently on AVX-512 processors).
    """
    cdef Py_ssize_t n = dist.shape[0], M = out.shape[0], i, b
    top_arr = np.full(M, -INFINITY)
    sums_arr = np.zeros(M)
    cdef double[::1] top = top_arr
    cdef double[::1] sums = sums_arr
    with nogil:
        for i in range(n):
            b = bmu[i]
            if -dist[i] > top[b]:
                top[b] = -dist[i]
        for i in range(n):
            b = bmu[i]
            sums[b] += exp(-dist[i] - top[b])
        for b in range(M):
            if cnt[b] > 0:
                out[b] = min(top[b] + log(sums[b]) - log(<double> cnt[b]), 0.0)
