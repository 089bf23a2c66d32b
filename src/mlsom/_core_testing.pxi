# For tests only: the kernels and steps of the phases, called one at a time on given inputs
# so that tests can check them against NumPy. Production code never calls these.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

def assign(const floating[:, ::1] X, const floating[:, ::1] Wt, int64_t[::1] bmu,
           double[::1] bmu_d2, long long n_threads_asked):
    """OUT bmu, bmu_d2: best-matching unit of every row of X (n, A) among the neurons Wt (A, M),
    and its exact squared distance."""
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xxs_arr = _centred32x2(X, c_arr, n_threads, k64 != NULL)
    cdef const float[:, ::1] X2 = X2_arr
    cdef double[::1] c = c_arr
    cdef double[::1] xxs = xxs_arr
    _assign(X, X2, xxs, c, Wt, bmu, bmu_d2, True, n_threads, k64)


def screen_values(const floating[:, ::1] X, const floating[:, ::1] Wt, bint blocked):
    """For tests: (G, idx, m1, m2) of the training's screening kernel for the rows of X (n, A) and
    the neurons Wt (A, M): G (n, M) the screening values, and each row's smallest value m1, its
    first index idx and the smallest of the others m2. blocked: the 64-row kernel of the AVX-512
    and AVX2 (with FMA) paths (ValueError where the selected path has none); otherwise the
    four-row tile."""
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f if blocked else NULL
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], s, e, r, j
    if blocked and k64 == NULL:
        raise ValueError("blocked: the 64-row kernel needs the AVX-512 or AVX2 (FMA) path")
    if A != Wt.shape[0]:
        raise ValueError(f"Wt: expected {A} rows, got {Wt.shape[0]}")
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xx_arr = _centred32x2(X, c_arr, 1, blocked)
    Ws_arr, ww_arr = _shadow(Wt, c_arr)
    G_arr = np.empty((n, M), dtype=np.float32)
    idx_arr = np.empty(n, dtype=np.int32)
    m1_arr = np.empty(n, dtype=np.float32)
    m2_arr = np.empty(n, dtype=np.float32)
    buf_arr = np.empty(RB * M + 4, dtype=np.float32)
    bidx_arr = np.empty(RB, dtype=np.int32)
    b1_arr = np.empty(RB, dtype=np.float32)
    b2_arr = np.empty(RB, dtype=np.float32)
    base_arr = np.empty(RB, dtype=np.float32)
    cdef const float[:, ::1] X2 = X2_arr
    cdef const double[::1] xx = xx_arr
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    cdef float[:, ::1] G = G_arr
    cdef int32_t[::1] idx = idx_arr
    cdef float[::1] m1 = m1_arr
    cdef float[::1] m2 = m2_arr
    cdef float[::1] buf = buf_arr
    cdef int32_t[::1] bidx = bidx_arr
    cdef float[::1] b1 = b1_arr
    cdef float[::1] b2 = b2_arr
    cdef float[::1] base = base_arr
    for s in range(0, n, RB):
        e = min(n, s + RB)
        if blocked:
            for r in range(RB):
                base[r] = <float> xx[s + r]
            k64(&X2[s, 0], &Ws[0, 0], A, M, &base[0], &ww[0], &buf[0], &bidx[0], &b1[0],
                &b2[0])
        else:
            _screen_rows(&X2[s, 0], &xx[s], e - s, &Ws[0, 0], &ww[0], A, M, &buf[0],
                         &buf[RB * M], &bidx[0], &b1[0], &b2[0])
        for r in range(s, e):
            for j in range(M):
                G[r, j] = buf[j * RB + r - s] if blocked else buf[(r - s) * M + j]
            idx[r] = bidx[r - s]
            m1[r] = b1[r - s]
            m2[r] = b2[r - s]
    return G_arr, idx_arr, m1_arr, m2_arr


def min2_values(const float[::1] g):
    """For tests: (idx, m1, m2) of the smallest-two scan of g (plain C on every path; the paths
    with a 64-row training screen track the smallest two in it instead): the smallest
    value m1 (NaN never counts; infinity where none is smaller), its first index idx (0 where no
    value is below infinity) and the smallest of the others m2."""
    cdef int32_t idx = 0
    cdef float m1 = 0, m2 = 0
    cdef Py_ssize_t n = g.shape[0]
    mlsom_min2_f(&g[0] if n > 0 else NULL, n, &idx, &m1, &m2)
    return idx, m1, m2


def search_values(const float[::1] d, float a, float b):
    """For tests: what the ranking's search kernels of the selected SIMD path give on d (n > 0):
    (#{d < a}, #{d < b} and #{d < a} from the two-threshold count, the indices j with
    a <= d[j] < b in order, max(d), min(d))."""
    cdef Py_ssize_t n = d.shape[0], c1, c2, c3, k
    cdef double lo, hi
    if n == 0:
        raise ValueError("d: expected at least one value, got 0")
    cdef mlsom_entry *ent = <mlsom_entry *> malloc(n * sizeof(mlsom_entry))
    if ent == NULL:
        raise MemoryError()
    try:
        c1 = mlsom_count_lt_f(&d[0], n, a)
        c3 = mlsom_count_lt2_f(&d[0], n, a, b, &c2)
        k = mlsom_gather_range_f(&d[0], n, a, b, ent)
        hi = mlsom_max_f(&d[0], n, &lo)
        idx = np.array([ent[j].j for j in range(k)], dtype=np.intp)
        vals = np.array([ent[j].d for j in range(k)], dtype=np.float64)
    finally:
        free(ent)
    if not np.array_equal(vals, np.asarray(d, dtype=np.float64)[idx]):
        raise AssertionError("gather_range: an entry's value is not d[j]")
    return c1, c2, c3, idx, hi, lo


def count_maps_values(const float[::1] d, const int64_t[::1] offsets, const uint8_t[::1] skip,
                      float t1, float t2):
    """For tests: the per-map counts of the selected SIMD path's count_maps kernel on d, the maps
    c (L of them) being d[offsets[c]:offsets[c + 1]]: (#{< t1}, #{< t2}) per map not skipped, 0
    for a skipped one."""
    cdef Py_ssize_t L = skip.shape[0]
    if offsets.shape[0] != L + 1:
        raise ValueError(f"offsets: expected {L + 1} entries, got {offsets.shape[0]}")
    if L == 0 or offsets[0] != 0 or offsets[L] != d.shape[0] or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets: expected a non-decreasing split of d starting at 0")
    c1_arr = np.zeros(L, dtype=np.intp)
    c2_arr = np.zeros(L, dtype=np.intp)
    cdef Py_ssize_t[::1] c1 = c1_arr
    cdef Py_ssize_t[::1] c2 = c2_arr
    cdef const float *dp = &d[0] if d.shape[0] > 0 else NULL
    mlsom_count_maps_f(dp, &offsets[0], L, &skip[0], t1, t2, &c1[0], &c2[0])
    return c1_arr, c2_arr


def lanes_screen_values(const floating[:, ::1] X, const floating[:, ::1] Wt,
                        const int64_t[::1] offsets, const double[::1] c):
    """For tests: what predict's 16-row path screens for the rows of X (n, A) and the neurons
    Wt (A, M) in maps offsets (L + 1), centred on c: (G (n, M) the screening values, xx (n) the
    rows' |x'|^2, m1, i1, m2 (n, L) per map the smallest value, its first index and the smallest
    of the others, hi (n) each row's largest value). ValueError where the kernels are not
    selected."""
    if mlsom_screen64maps_f == NULL:
        raise ValueError("the 16-row kernels need the AVX2 (with FMA) or AVX-512F path")
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = offsets.shape[0] - 1
    cdef Py_ssize_t s, e, r, j, q, cc, nr
    if Wt.shape[0] != A or c.shape[0] != A or L < 1 or offsets[0] != 0 or offsets[L] != M:
        raise ValueError("shapes do not match")
    Ws_arr, ww_arr = _shadow(Wt, c)
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    G_arr = np.empty((n, M), dtype=np.float32)
    xx_arr = np.empty(n, dtype=np.float64)
    m1_arr = np.empty((n, L), dtype=np.float32)
    i1_arr = np.empty((n, L), dtype=np.int32)
    m2_arr = np.empty((n, L), dtype=np.float32)
    hi_arr = np.empty(n, dtype=np.float32)
    cdef float[:, ::1] G = G_arr
    cdef double[::1] xxo = xx_arr
    cdef float[:, ::1] m1 = m1_arr
    cdef int32_t[:, ::1] i1 = i1_arr
    cdef float[:, ::1] m2 = m2_arr
    cdef float[::1] hi = hi_arr
    cdef Lanes *z = _lanes_alloc(A, M, L)
    if z == NULL:
        raise MemoryError()
    try:
        for s in range(0, n, 64):
            e = min(n, s + 64)
            for q in range(4):
                nr = e - s - 16 * q
                nr = 0 if nr < 0 else (16 if nr > 16 else nr)
                if floating is double:
                    mlsom_centre16_d(&X[s + 16 * q if nr > 0 else 0, 0], A, nr, &c[0], z.row,
                                     z.xb + 16 * A * q, z.xx + 16 * q)
                else:
                    mlsom_centre16_f(&X[s + 16 * q if nr > 0 else 0, 0], A, nr, &c[0], z.row,
                                     z.xb + 16 * A * q, z.xx + 16 * q)
            for r in range(64):
                z.base[r] = <float> z.xx[r]
            mlsom_screen64maps_f(z.xb, &Ws[0, 0], A, M, z.base, &ww[0], &offsets[0], L, z.gt,
                                 z.m1, z.i1, z.m2, z.hi)
            for r in range(e - s):
                q = r // 16
                for j in range(M):
                    G[s + r, j] = z.gt[16 * M * q + 16 * j + r % 16]
                for cc in range(L):
                    m1[s + r, cc] = z.m1[64 * cc + r]
                    i1[s + r, cc] = z.i1[64 * cc + r]
                    m2[s + r, cc] = z.m2[64 * cc + r]
                xxo[s + r] = z.xx[r]
                hi[s + r] = z.hi[r]
    finally:
        _lanes_free(z)
    return G_arr, xx_arr, m1_arr, i1_arr, m2_arr, hi_arr


def lanes_rank_values(const float[:, ::1] g, const int64_t[::1] offsets,
                      const uint16_t[::1] pool, Py_ssize_t k, const float[::1] gapf):
    """For tests: one round of the 16-row kernels on the values g (M, 16) (row l's values in
    column l) of maps offsets (L + 1), with pool (L) the rows (bits) whose pool holds each map:
    the search from [min, just above max) of each row's pool, the window and the winner.
    Returns (failed, fa, ca, fb, cb, vk, vk1, votes (L, 16), winner, doubt) for the rows whose
    pool has more than k values (the others: failed and zeros)."""
    if mlsom_lanes_search_f == NULL:
        raise ValueError("the 16-row kernels need the AVX2 (with FMA) or AVX-512F path")
    cdef Py_ssize_t M = g.shape[0], L = offsets.shape[0] - 1, l, c, j
    if g.shape[1] != 16 or L < 1 or pool.shape[0] != L or gapf.shape[0] != 16:
        raise ValueError("shapes do not match")
    if offsets[0] != 0 or offsets[L] != M or k < 1:
        raise ValueError("offsets or k out of range")
    cdef Lanes *z = _lanes_alloc(1, M, L)
    cdef uint16_t act = 0, failed = 0, doubt = 0
    cdef float lo, hi, v
    cdef int32_t n_pool
    if z == NULL:
        raise MemoryError()
    votes_arr = np.zeros((L, 16), dtype=np.int32)
    out = None
    try:
        for c in range(L):
            z.pool[c] = pool[c]
            for l in range(16):
                lo = INFINITY
                for j in range(offsets[c], offsets[c + 1]):
                    lo = g[j, l] if g[j, l] < lo else lo
                z.m1[64 * c + l] = lo   # the winner's tie-break values
        for l in range(16):
            lo = INFINITY
            hi = -INFINITY
            n_pool = 0
            for c in range(L):
                if pool[c] & (1 << l):
                    for j in range(offsets[c], offsets[c + 1]):
                        v = g[j, l]
                        lo = v if v < lo else lo
                        hi = v if v > hi else hi
                        n_pool += 1
            z.fa[l] = lo
            z.ca[l] = 0
            z.fb[l] = nextafterf(hi, INFINITY)
            z.cb[l] = n_pool
            z.vk[l] = 0
            z.vk1[l] = 0
            z.win[l] = -1
            if n_pool > k:
                act |= <uint16_t> (1 << l)
        z.nh = 0
        failed = mlsom_lanes_search_f(&g[0, 0], &offsets[0], L, z.pool, <int32_t> k, act,
                                      LANES_PASSES, z.fa, z.ca, z.fb, z.cb, z.ht, z.hc, z.hv,
                                      &z.nh, LANES_HIST)
        act &= ~failed
        for c in range(L):
            z.pool[c] &= act
        mlsom_lanes_window_f(&g[0, 0], &offsets[0], L, z.pool, <int32_t> k, act, z.fa, z.ca,
                             z.fb, z.cb, z.vk, z.vk1, z.votes, z.fm, z.fj)
        doubt = mlsom_lanes_winner(z.votes, L, z.pool, z.m1, &gapf[0], act, z.win)
        for c in range(L):
            for l in range(16):
                votes_arr[c, l] = z.votes[16 * c + l] if act & (1 << l) else 0
        bits = np.array([(failed >> l) & 1 for l in range(16)], dtype=bool)
        out = (bits,
               np.array([z.fa[l] for l in range(16)], dtype=np.float32),
               np.array([z.ca[l] for l in range(16)], dtype=np.int32),
               np.array([z.fb[l] for l in range(16)], dtype=np.float32),
               np.array([z.cb[l] for l in range(16)], dtype=np.int32),
               np.array([z.vk[l] for l in range(16)], dtype=np.float32),
               np.array([z.vk1[l] for l in range(16)], dtype=np.float32),
               votes_arr,
               np.array([z.win[l] if act & (1 << l) else -1 for l in range(16)], dtype=np.int32),
               np.array([(doubt >> l) & 1 for l in range(16)], dtype=bool))
    finally:
        _lanes_free(z)
    return out


def sync_margin_order(double[:, ::1] mg, uint8_t[:, ::1] mk, int64_t[::1] mtot,
                      int32_t[:, ::1] mo, int64_t[::1] mn, double[:, ::1] ms,
                      int64_t[::1] mc):
    """For tests: bring every label's sorted cache of its ring (mo, mn, ms, as the rings were at
    mc entries) up to the rings (mg, mk, mtot), as the online phase does when it chooses a
    label's offset (_sync_sorted); IN/OUT mo, mn, ms, mc."""
    cdef LabelMem lm
    cdef Py_ssize_t c, L = mg.shape[0], win = mg.shape[1]
    if (win < 1 or mk.shape[0] != L or mk.shape[1] != win or mtot.shape[0] != L
            or mo.shape[0] != L or mo.shape[1] != win or mn.shape[0] != L
            or ms.shape[0] != L or ms.shape[1] != win or mc.shape[0] != L):
        raise ValueError("sync_margin_order: inconsistent shapes")
    if (np.any(np.asarray(mn) < 0) or np.any(np.asarray(mn) > win) or np.any(np.asarray(mc) < 0)
            or np.any(np.asarray(mc) > np.asarray(mtot)) or np.any(np.asarray(mo) < 0)
            or np.any(np.asarray(mo) >= win)):
        raise ValueError("sync_margin_order: a cache that is not one of these rings'")
    lm.mg = &mg[0, 0]
    lm.mk = &mk[0, 0]
    lm.mtot = &mtot[0]
    lm.win = win
    lm.srt = &mo[0, 0]
    lm.nsrt = &mn[0]
    lm.srtm = &ms[0, 0]
    lm.stot = &mc[0]
    nslot = np.empty(win, dtype=np.int32)
    nmarg = np.empty(win, dtype=np.float64)
    cdef int32_t[::1] ns = nslot
    cdef double[::1] nm = nmarg
    lm.nslot = &ns[0]
    lm.nmarg = &nm[0]
    for c in range(L):
        _sync_sorted(&lm, c)
