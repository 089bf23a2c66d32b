/* Hand-written AVX2 kernels: argmin, gather and max passes, the 4 x 24 screening tile and
 * the smallest-two scan of training.
 *
 * Part of _kernels.h, which includes it (and holds the common types and the dispatch): not
 * meant to be included alone. */

__attribute__((target("avx2,popcnt"))) static Py_ssize_t mlsom_argmin_f_avx2_mask
    MLSOM_ARGMIN_ARGS(float)
{
    Py_ssize_t j0, j, first = -1, cnt = 0;
    __m256 mvec = _mm256_set1_ps(INFINITY);
    float mv, limt, buf[8];
    double lim;
    for (j0 = 0; j0 + 8 <= n; j0 += 8) mvec = _mm256_min_ps(_mm256_loadu_ps(d + j0), mvec);
    _mm256_storeu_ps(buf, mvec);
    mv = buf[0];
    for (j = 1; j < 8; j++) mv = buf[j] < mv ? buf[j] : mv;
    for (j = j0; j < n; j++) mv = d[j] < mv ? d[j] : mv;
    lim = gap > 0.0 ? (double)mv + gap : (double)mv;
    limt = (float)lim;
    if ((double)limt < lim) limt = nextafterf(limt, INFINITY);
    {
        const __m256 vl = _mm256_set1_ps(limt), vm = _mm256_set1_ps(mv);
        for (j0 = 0; j0 + 8 <= n; j0 += 8) {
            const __m256 v = _mm256_loadu_ps(d + j0);
            const unsigned int le = (unsigned int)_mm256_movemask_ps(_mm256_cmp_ps(v, vl, _CMP_LE_OQ));
            cnt += __builtin_popcount(le);
            if (first < 0) {
                const unsigned int eq =
                    (unsigned int)_mm256_movemask_ps(_mm256_cmp_ps(v, vm, _CMP_LE_OQ));
                if (eq) first = j0 + (Py_ssize_t)__builtin_ctz(eq);
            }
        }
        for (j = j0; j < n; j++) {
            cnt += d[j] <= limt;
            if (first < 0 && d[j] <= mv) first = j;
        }
    }
    if (first < 0) first = 0;
    *n_cand = gap > 0.0 ? cnt : 1;
    return first;
}

__attribute__((target("avx2"))) static Py_ssize_t mlsom_gather_range_f_avx2_mask
    MLSOM_GATHER_RANGE_ARGS(float)
{
    Py_ssize_t j0 = 0, j, n_ent = 0;
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    for (; j0 + 8 <= n; j0 += 8) {
        const __m256 v = _mm256_loadu_ps(d + j0);
        unsigned int hit = (unsigned int)_mm256_movemask_ps(
            _mm256_and_ps(_mm256_cmp_ps(v, va, _CMP_GE_OQ), _mm256_cmp_ps(v, vb, _CMP_LT_OQ)));
        while (hit) {
            j = j0 + (Py_ssize_t)__builtin_ctz(hit);
            ent[n_ent].d = (double)d[j];
            ent[n_ent].j = j;
            n_ent++;
            hit &= hit - 1u;
        }
    }
    for (j = j0; j < n; j++) {
        if (d[j] >= a && d[j] < b) {
            ent[n_ent].d = (double)d[j];
            ent[n_ent].j = j;
            n_ent++;
        }
    }
    return n_ent;
}

/* max_f on the AVX2 path: vector max / min over whole blocks of 8, the rest scalar */
__attribute__((target("avx2"))) static double mlsom_max_f_avx2_vec MLSOM_MAX_ARGS(float)
{
    __m256 mx = _mm256_set1_ps(d[0]), mn = mx;
    float bx[8], bn[8], hv, lv;
    Py_ssize_t j0, j;
    for (j0 = 0; j0 + 8 <= n; j0 += 8) {
        const __m256 v = _mm256_loadu_ps(d + j0);
        mx = _mm256_max_ps(v, mx);
        mn = _mm256_min_ps(v, mn);
    }
    _mm256_storeu_ps(bx, mx);
    _mm256_storeu_ps(bn, mn);
    hv = bx[0];
    lv = bn[0];
    for (j = 1; j < 8; j++) {
        hv = bx[j] > hv ? bx[j] : hv;
        lv = bn[j] < lv ? bn[j] : lv;
    }
    for (j = j0; j < n; j++) {
        hv = d[j] > hv ? d[j] : hv;
        lv = d[j] < lv ? d[j] : lv;
    }
    *lo = (double)lv;
    return (double)hv;
}

/* Four rows by 24 neurons: twelve independent accumulator chains, enough to keep both FMA units
   busy through the FMA latency (eight, at 16 neurons, were not), with the three weight vectors
   and one broadcast row value in the 16 registers. Then blocks of 8 neurons, then a masked one. */
__attribute__((target("avx2,fma"))) static void mlsom_screen4_f_avx2_tile MLSOM_SCREEN4_ARGS(float)
{
    const float *p0 = x2, *p1 = x2 + A, *p2 = x2 + 2 * A, *p3 = x2 + 3 * A;
    const float *pr[4] = {p0, p1, p2, p3};
    Py_ssize_t i, j0 = 0, q, k;
    for (; j0 + 24 <= M; j0 += 24) {
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps();
        __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps();
        __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps(), c2 = _mm256_setzero_ps();
        __m256 d0 = _mm256_setzero_ps(), d1 = _mm256_setzero_ps(), d2 = _mm256_setzero_ps();
        const float *w = Ws + j0;
        for (i = 0; i < A; i++, w += M) {
            const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
            const __m256 w2 = _mm256_loadu_ps(w + 16);
            __m256 x = _mm256_set1_ps(p0[i]);
            a0 = _mm256_fmadd_ps(x, w0, a0);
            a1 = _mm256_fmadd_ps(x, w1, a1);
            a2 = _mm256_fmadd_ps(x, w2, a2);
            x = _mm256_set1_ps(p1[i]);
            b0 = _mm256_fmadd_ps(x, w0, b0);
            b1 = _mm256_fmadd_ps(x, w1, b1);
            b2 = _mm256_fmadd_ps(x, w2, b2);
            x = _mm256_set1_ps(p2[i]);
            c0 = _mm256_fmadd_ps(x, w0, c0);
            c1 = _mm256_fmadd_ps(x, w1, c1);
            c2 = _mm256_fmadd_ps(x, w2, c2);
            x = _mm256_set1_ps(p3[i]);
            d0 = _mm256_fmadd_ps(x, w0, d0);
            d1 = _mm256_fmadd_ps(x, w1, d1);
            d2 = _mm256_fmadd_ps(x, w2, d2);
        }
        {
            const __m256 acc[12] = {a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2};
            const __m256 v[3] = {_mm256_loadu_ps(ww + j0), _mm256_loadu_ps(ww + j0 + 8),
                                 _mm256_loadu_ps(ww + j0 + 16)};
            for (q = 0; q < 4; q++) {
                const __m256 bq = _mm256_set1_ps(base[q]);
                for (k = 0; k < 3; k++)
                    _mm256_storeu_ps(out + q * M + j0 + 8 * k,
                                     _mm256_add_ps(_mm256_add_ps(bq, v[k]), acc[3 * q + k]));
            }
        }
    }
    for (; j0 + 8 <= M; j0 += 8) {
        __m256 acc[4];
        const float *w = Ws + j0;
        for (q = 0; q < 4; q++) acc[q] = _mm256_setzero_ps();
        for (i = 0; i < A; i++, w += M) {
            const __m256 w0 = _mm256_loadu_ps(w);
            for (q = 0; q < 4; q++) acc[q] = _mm256_fmadd_ps(_mm256_set1_ps(pr[q][i]), w0, acc[q]);
        }
        {
            const __m256 v0 = _mm256_loadu_ps(ww + j0);
            for (q = 0; q < 4; q++)
                _mm256_storeu_ps(out + q * M + j0,
                                 _mm256_add_ps(_mm256_add_ps(_mm256_set1_ps(base[q]), v0), acc[q]));
        }
    }
    if (j0 < M) {
        /* the last 1 to 7 neurons: masked loads and stores of one block of 8 (a masked-out
           lane reads and writes nothing) */
        const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(M - j0)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 acc[4];
        const float *w = Ws + j0;
        for (q = 0; q < 4; q++) acc[q] = _mm256_setzero_ps();
        for (i = 0; i < A; i++, w += M) {
            const __m256 w0 = _mm256_maskload_ps(w, in);
            for (q = 0; q < 4; q++) acc[q] = _mm256_fmadd_ps(_mm256_set1_ps(pr[q][i]), w0, acc[q]);
        }
        {
            const __m256 v0 = _mm256_maskload_ps(ww + j0, in);
            for (q = 0; q < 4; q++)
                _mm256_maskstore_ps(out + q * M + j0, in,
                                    _mm256_add_ps(_mm256_add_ps(_mm256_set1_ps(base[q]), v0),
                                                  acc[q]));
        }
    }
}

/* the smallest of the eight lanes, in every lane */
__attribute__((target("avx2"))) static inline __m256 mlsom_hmin8_ps(__m256 v)
{
    v = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 1));
    v = _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}

__attribute__((target("avx2"))) static inline __m256i mlsom_hmin8_epi32(__m256i v)
{
    v = _mm256_min_epi32(v, _mm256_permute2x128_si256(v, v, 1));
    v = _mm256_min_epi32(v, _mm256_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_min_epi32(v, _mm256_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
}

/* mlsom_min2_f_base eight lanes at a time: each lane keeps the smallest value of its neurons, the
   first index of it and the smallest of its others, with the scalar loop's comparisons (strict,
   so a NaN never enters, and a later equal value is only a second); the last values fill a
   partial block, infinity in the lanes past the end. The lanes then combine: the smallest value,
   the lowest index among the lanes holding it (each lane's is its first), and the smallest of
   every lane's second and of the other lanes' smallest. */
__attribute__((target("avx2"))) static void mlsom_min2_f_avx2(const float *MLSOM_RESTRICT g,
                                                               Py_ssize_t n, int32_t *idx,
                                                               float *m1, float *m2)
{
    const __m256 inf = _mm256_set1_ps(INFINITY);
    const __m256i eight = _mm256_set1_epi32(8), lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 va = inf, vb = inf, lo;
    __m256i vi = _mm256_setzero_si256(), vj = lanes, best, mine;
    Py_ssize_t j = 0;
    if (n < 16 || n > INT32_MAX) {
        mlsom_min2_f_base(g, n, idx, m1, m2);
        return;
    }
    for (;; j += 8, vj = _mm256_add_epi32(vj, eight)) {
        __m256 v, lt;
        if (j + 8 <= n) {
            v = _mm256_loadu_ps(g + j);
        } else if (j < n) {
            const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - j)), lanes);
            v = _mm256_blendv_ps(inf, _mm256_maskload_ps(g + j, in), _mm256_castsi256_ps(in));
        } else {
            break;
        }
        lt = _mm256_cmp_ps(v, va, _CMP_LT_OQ);
        /* a new smallest pushes the old one to second; otherwise v may be a new second */
        vb = _mm256_blendv_ps(_mm256_blendv_ps(vb, v, _mm256_cmp_ps(v, vb, _CMP_LT_OQ)), va, lt);
        va = _mm256_blendv_ps(va, v, lt);
        vi = _mm256_blendv_epi8(vi, vj, _mm256_castps_si256(lt));
    }
    lo = mlsom_hmin8_ps(va);
    {
        const __m256 at = _mm256_cmp_ps(va, lo, _CMP_EQ_OQ);
        best = mlsom_hmin8_epi32(
            _mm256_blendv_epi8(_mm256_set1_epi32(INT32_MAX), vi, _mm256_castps_si256(at)));
        /* the one lane holding the first smallest (its index is no other lane's) */
        mine = _mm256_and_si256(_mm256_cmpeq_epi32(vi, best), _mm256_castps_si256(at));
    }
    /* no value below infinity: the scalar loop's index 0 */
    *idx = _mm256_cvtss_f32(lo) < INFINITY ? _mm256_cvtsi256_si32(best) : 0;
    *m1 = _mm256_cvtss_f32(lo);
    *m2 = _mm256_cvtss_f32(
        mlsom_hmin8_ps(_mm256_min_ps(vb, _mm256_blendv_ps(va, inf, _mm256_castsi256_ps(mine)))));
}
