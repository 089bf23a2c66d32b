/* Kernel family: the winner-class ranking of frozen scoring 16 rows at a time, hand-written for
 * AVX-512F and for AVX2 with FMA (no plain-C bodies): the rows' centring, the search of the k-th
 * smallest value's bracket, its window and the votes, the winner. Their 64-row screening is in
 * _kernels_screen.h (mlsom_screen64maps_f).
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_LANES_H
#define MLSOM_KERNELS_LANES_H

#include "_kernels_common.h"

#ifdef MLSOM_X86_DISPATCH
/* ------------------------------------------------------------------------------------------------
 * Frozen scoring 16 rows at a time (AVX-512F, then AVX2 with FMA). A group's screening values
 * are stored neuron-major, g[16 j + l] for row l of the group, so that one vector holds one
 * neuron's values for the 16 rows ("lanes"), and every step of the winner-class ranking
 * (counting below a trial value, the window around the k-th smallest value, the votes) is one
 * vector operation per neuron for the 16 rows, with no branch that depends on a row's values.
 * The maps still in a row's pool are given as lane masks, pool[c] (bit l: map c is in the pool
 * of row l).
 */

/* a 16 x 16 transpose in registers: r[i] holds row i on entry, column i on return */
__attribute__((target("avx512f"))) static inline void mlsom_tr16(__m512 *r)
{
    __m512 t[16];
    int i;
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* now 128-bit block b of r[4 g + m] holds column 4 b + m of rows 4 g .. 4 g + 3 */
    for (i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
        t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xdd);
        t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
        t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xdd);
    }
    for (i = 0; i < 4; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
        r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
        r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
        r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd);
    }
}

/* 16 values x[0:16] (those of mask m) minus c[0:16] in float64, rounded to float32 */
__attribute__((target("avx512f"))) static inline __m512 mlsom_centred16_d(const double *x,
                                                                         const double *c,
                                                                         __mmask16 m)
{
    const __mmask8 m0 = (__mmask8)(m & 0xFF), m1 = (__mmask8)(m >> 8);
    const __m256 lo = _mm512_cvtpd_ps(
        _mm512_sub_pd(_mm512_maskz_loadu_pd(m0, x), _mm512_maskz_loadu_pd(m0, c)));
    const __m256 hi = _mm512_cvtpd_ps(
        _mm512_sub_pd(_mm512_maskz_loadu_pd(m1, x + 8), _mm512_maskz_loadu_pd(m1, c + 8)));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                               _mm256_castps_pd(hi), 1));
}

__attribute__((target("avx512f"))) static inline __m512 mlsom_centred16_f(const float *x,
                                                                         const double *c,
                                                                         __mmask16 m)
{
    const __mmask8 m0 = (__mmask8)(m & 0xFF), m1 = (__mmask8)(m >> 8);
    const __m512 v = _mm512_maskz_loadu_ps(m, x);
    const __m256 lo = _mm512_cvtpd_ps(_mm512_sub_pd(
        _mm512_cvtps_pd(_mm512_castps512_ps256(v)), _mm512_maskz_loadu_pd(m0, c)));
    const __m256 hi = _mm512_cvtpd_ps(_mm512_sub_pd(
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))),
        _mm512_maskz_loadu_pd(m1, c + 8)));
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                               _mm256_castps_pd(hi), 1));
}

/* The rows x[A r : A r + A] (r < nr <= 16; zeros for the others) centred on c and rounded to
 * float32, x', as _centre_row computes them: OUT xb[16 i + r] = -2 x'_{r,i} (the blocked layout
 * of the 64-row screening) and xx[r] = |x'_r|^2 with _centre_row's float32 sums in its order
 * (feature i of the first 8 floor(A / 8) into partial sum i mod 8, the others into the first,
 * the eight partial sums added in turn). The rows are read in order (one stream for the
 * prefetcher) into buf (16 A16 floats, A16 = A rounded up to 16), then transposed 16 x 16 in
 * registers. */
#define MLSOM_CENTRE16_BODY(LOAD)                                                        \
    {                                                                                    \
        const Py_ssize_t a8 = A - A % 8, a16 = (A + 15) / 16 * 16;                       \
        __m512 part[8], r[16], sum;                                                      \
        float sv[16];                                                                    \
        Py_ssize_t i0, i, q;                                                             \
        for (q = 0; q < nr; q++)                                                         \
            for (i0 = 0; i0 < A; i0 += 16)                                               \
                _mm512_storeu_ps(buf + q * a16 + i0,                                     \
                                 LOAD(x + q * A + i0, c + i0, mlsom_mask16(A - i0)));    \
        for (q = 0; q < 8; q++) part[q] = _mm512_setzero_ps();                           \
        for (i0 = 0; i0 < A; i0 += 16) {                                                 \
            for (q = 0; q < 16; q++)                                                     \
                r[q] = q < nr ? _mm512_loadu_ps(buf + q * a16 + i0) : _mm512_setzero_ps(); \
            mlsom_tr16(r);                                                               \
            for (i = 0; i < 16 && i0 + i < A; i++) {                                     \
                const __m512 sq = _mm512_mul_ps(r[i], r[i]);                             \
                if (i0 + i < a8)                                                         \
                    part[i % 8] = _mm512_add_ps(part[i % 8], sq);                        \
                else                                                                     \
                    part[0] = _mm512_add_ps(part[0], sq);                                \
                _mm512_storeu_ps(xb + 16 * (i0 + i), _mm512_mul_ps(_mm512_set1_ps(-2.0f), r[i])); \
            }                                                                            \
        }                                                                                \
        sum = part[0];                                                                   \
        for (q = 1; q < 8; q++) sum = _mm512_add_ps(sum, part[q]);                       \
        _mm512_storeu_ps(sv, sum);                                                       \
        for (q = 0; q < 16; q++) xx[q] = (double)sv[q];                                  \
    }

__attribute__((target("avx512f"))) static void mlsom_centre16_d_avx512 MLSOM_CENTRE16_ARGS(double)
    MLSOM_CENTRE16_BODY(mlsom_centred16_d)

__attribute__((target("avx512f"))) static void mlsom_centre16_f_avx512 MLSOM_CENTRE16_ARGS(float)
    MLSOM_CENTRE16_BODY(mlsom_centred16_f)
#undef MLSOM_CENTRE16_BODY

/* The window of the k-th smallest value: the search stops when at most this many values of a
 * row's pool lie in its bracket [fa, fb). */
#define MLSOM_LANES_WIN 8

/* For the rows act of a group: narrows each row's bracket [fa, fb), #{pool < fa} = ca < k <=
 * cb = #{pool < fb}, until cb - ca <= MLSOM_LANES_WIN, by counting the pool's values below two
 * trial values per row and pass (interpolated within the bracket, or at its thirds when the
 * last pass did not halve it; its middle when the trial values would not be strictly inside).
 * Returns the rows that did not get there in max_pass passes or whose bracket could not be
 * split (no float strictly inside).
 * The trial values of the group's earlier passes are kept with their counts per map (a history
 * of at most h_max: ht[16 h + l], hc[16 (L h + c) + l], hv[h] the rows they were counted for,
 * *nh entries): a later round, whose pool lost maps, first tightens each bracket with the counts
 * they give for its pool, at no cost of a pass. */
__attribute__((target("avx512f"))) static uint16_t mlsom_lanes_search_f_avx512
    MLSOM_LANES_SEARCH_ARGS
{
    __m512 fa = _mm512_loadu_ps(fa_), fb = _mm512_loadu_ps(fb_);
    __m512i ca = _mm512_loadu_si512((const void *)ca_), cb = _mm512_loadu_si512((const void *)cb_);
    const __m512i kv = _mm512_set1_epi32(k), wv = _mm512_set1_epi32(MLSOM_LANES_WIN);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512 half = _mm512_set1_ps(0.5f), fone = _mm512_set1_ps(1.0f);
    __mmask16 bis = 0, fail = 0, act = (__mmask16)act_in;
    int pass, h;
    for (h = 0; h < *nh; h++) {
        /* the count below an earlier trial value t for the current pool */
        const __mmask16 ok = act & hv[h];
        const __m512 t = _mm512_loadu_ps(ht + 16 * h);
        __m512i cnt = _mm512_setzero_si512();
        __mmask16 lo, hi;
        Py_ssize_t c;
        if (!ok) continue;
        for (c = 0; c < L; c++)
            cnt = _mm512_mask_add_epi32(cnt, pool[c], cnt,
                                        _mm512_loadu_si512((const void *)(hc + 16 * (L * h + c))));
        lo = _mm512_mask_cmplt_epi32_mask(ok & _mm512_cmp_ps_mask(t, fa, _CMP_GT_OQ), cnt, kv);
        hi = _mm512_mask_cmpge_epi32_mask(ok & _mm512_cmp_ps_mask(t, fb, _CMP_LT_OQ), cnt, kv);
        fa = _mm512_mask_mov_ps(fa, lo, t);
        ca = _mm512_mask_mov_epi32(ca, lo, cnt);
        fb = _mm512_mask_mov_ps(fb, hi, t);
        cb = _mm512_mask_mov_epi32(cb, hi, cnt);
    }
    act = _mm512_mask_cmpgt_epi32_mask(act, _mm512_sub_epi32(cb, ca), wv);
    for (pass = 0; act && pass < max_pass; pass++) {
        const __m512i oldi = _mm512_sub_epi32(cb, ca);
        const __m512 old = _mm512_cvtepi32_ps(oldi);
        const __m512 inv = _mm512_div_ps(fone, old);
        const __m512 kc = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(kv, ca)), half);
        const __m512 kb = _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(cb, kv)), half);
        const __m512 m = _mm512_add_ps(_mm512_mul_ps(old, _mm512_set1_ps(0.125f)),
                                       _mm512_set1_ps(0.25f * MLSOM_LANES_WIN));
        __m512 q1 = _mm512_mul_ps(_mm512_sub_ps(kc, m), inv);
        __m512 q2 = _mm512_mul_ps(_mm512_add_ps(kc, m), inv);
        __m512 p, q, wd, mid;
        __mmask16 ok, mid_ok;
        __m512i cp0 = _mm512_setzero_si512(), cq0 = cp0;
        Py_ssize_t c, j;
        q1 = _mm512_max_ps(q1, _mm512_mul_ps(_mm512_mul_ps(half, kc), inv));
        q2 = _mm512_min_ps(q2, _mm512_sub_ps(fone, _mm512_mul_ps(_mm512_mul_ps(half, kb), inv)));
        q1 = _mm512_mask_mov_ps(q1, bis, _mm512_set1_ps(1.0f / 3.0f));
        q2 = _mm512_mask_mov_ps(q2, bis, _mm512_set1_ps(2.0f / 3.0f));
        wd = _mm512_sub_ps(fb, fa);
        p = _mm512_add_ps(fa, _mm512_mul_ps(wd, q1));
        q = _mm512_add_ps(fa, _mm512_mul_ps(wd, q2));
        ok = _mm512_cmp_ps_mask(fa, p, _CMP_LT_OQ) & _mm512_cmp_ps_mask(p, q, _CMP_LT_OQ) &
             _mm512_cmp_ps_mask(q, fb, _CMP_LT_OQ);
        mid = _mm512_add_ps(_mm512_mul_ps(half, fa), _mm512_mul_ps(half, fb));
        mid_ok = _mm512_cmp_ps_mask(fa, mid, _CMP_LT_OQ) & _mm512_cmp_ps_mask(mid, fb, _CMP_LT_OQ);
        p = _mm512_mask_mov_ps(p, (__mmask16)~ok, mid);
        q = _mm512_mask_mov_ps(q, (__mmask16)~ok, mid);
        fail |= act & (__mmask16)~(ok | mid_ok);
        act &= ok | mid_ok;
        const int keep = *nh + 2 <= h_max;
        h = *nh;
        for (c = 0; c < L; c++) {
            /* a map's counts for all 16 rows (no mask per value), kept for the rows whose pool
             * holds it */
            const __mmask16 pm = pool[c] & act;
            const Py_ssize_t e = off[c + 1];
            __m512i tp0 = _mm512_setzero_si512(), tq0 = tp0, tp1 = tp0, tq1 = tp0;
            __m512i tp2 = tp0, tq2 = tp0, tp3 = tp0, tq3 = tp0;
            if (!pm) {
                if (keep) {
                    _mm512_storeu_si512((void *)(hc + 16 * (L * h + c)), tp0);
                    _mm512_storeu_si512((void *)(hc + 16 * (L * (h + 1) + c)), tp0);
                }
                continue;
            }
            for (j = off[c]; j + 3 < e; j += 4) {
                const __m512 v0 = _mm512_loadu_ps(g + 16 * j), v1 = _mm512_loadu_ps(g + 16 * j + 16);
                const __m512 v2 = _mm512_loadu_ps(g + 16 * j + 32);
                const __m512 v3 = _mm512_loadu_ps(g + 16 * j + 48);
                tp0 = _mm512_mask_add_epi32(tp0, _mm512_cmp_ps_mask(v0, p, _CMP_LT_OQ), tp0, one);
                tq0 = _mm512_mask_add_epi32(tq0, _mm512_cmp_ps_mask(v0, q, _CMP_LT_OQ), tq0, one);
                tp1 = _mm512_mask_add_epi32(tp1, _mm512_cmp_ps_mask(v1, p, _CMP_LT_OQ), tp1, one);
                tq1 = _mm512_mask_add_epi32(tq1, _mm512_cmp_ps_mask(v1, q, _CMP_LT_OQ), tq1, one);
                tp2 = _mm512_mask_add_epi32(tp2, _mm512_cmp_ps_mask(v2, p, _CMP_LT_OQ), tp2, one);
                tq2 = _mm512_mask_add_epi32(tq2, _mm512_cmp_ps_mask(v2, q, _CMP_LT_OQ), tq2, one);
                tp3 = _mm512_mask_add_epi32(tp3, _mm512_cmp_ps_mask(v3, p, _CMP_LT_OQ), tp3, one);
                tq3 = _mm512_mask_add_epi32(tq3, _mm512_cmp_ps_mask(v3, q, _CMP_LT_OQ), tq3, one);
            }
            for (; j < e; j++) {
                const __m512 v0 = _mm512_loadu_ps(g + 16 * j);
                tp0 = _mm512_mask_add_epi32(tp0, _mm512_cmp_ps_mask(v0, p, _CMP_LT_OQ), tp0, one);
                tq0 = _mm512_mask_add_epi32(tq0, _mm512_cmp_ps_mask(v0, q, _CMP_LT_OQ), tq0, one);
            }
            tp0 = _mm512_add_epi32(_mm512_add_epi32(tp0, tp2), _mm512_add_epi32(tp1, tp3));
            tq0 = _mm512_add_epi32(_mm512_add_epi32(tq0, tq2), _mm512_add_epi32(tq1, tq3));
            cp0 = _mm512_mask_add_epi32(cp0, pm, cp0, tp0);
            cq0 = _mm512_mask_add_epi32(cq0, pm, cq0, tq0);
            if (keep) {
                _mm512_storeu_si512((void *)(hc + 16 * (L * h + c)), tp0);
                _mm512_storeu_si512((void *)(hc + 16 * (L * (h + 1) + c)), tq0);
            }
        }
        if (keep) {
            _mm512_storeu_ps(ht + 16 * h, p);
            _mm512_storeu_ps(ht + 16 * (h + 1), q);
            hv[h] = hv[h + 1] = act;
            *nh = h + 2;
        }
        {
            const __m512i cp = cp0, cq = cq0;
            const __mmask16 ge_p = _mm512_mask_cmpge_epi32_mask(act, cp, kv);
            const __mmask16 lt_q = _mm512_mask_cmplt_epi32_mask(act & (__mmask16)~ge_p, cq, kv);
            const __mmask16 in = act & (__mmask16)~(ge_p | lt_q);
            __m512i nw;
            fb = _mm512_mask_mov_ps(fb, ge_p, p);
            cb = _mm512_mask_mov_epi32(cb, ge_p, cp);
            fa = _mm512_mask_mov_ps(fa, lt_q, q);
            ca = _mm512_mask_mov_epi32(ca, lt_q, cq);
            fa = _mm512_mask_mov_ps(fa, in, p);
            ca = _mm512_mask_mov_epi32(ca, in, cp);
            fb = _mm512_mask_mov_ps(fb, in, q);
            cb = _mm512_mask_mov_epi32(cb, in, cq);
            nw = _mm512_sub_epi32(cb, ca);
            bis = _mm512_mask_cmpgt_epi32_mask(act, _mm512_add_epi32(nw, nw), oldi);
            act = _mm512_mask_cmpgt_epi32_mask(act, nw, wv);
        }
    }
    _mm512_storeu_ps(fa_, fa);
    _mm512_storeu_ps(fb_, fb);
    _mm512_storeu_si512((void *)ca_, ca);
    _mm512_storeu_si512((void *)cb_, cb);
    return (uint16_t)(fail | act);
}

/* For the rows act of a group, whose brackets hold at most MLSOM_LANES_WIN values of the pool
 * (ca < k <= cb): the k-th and (k+1)-th smallest values of the pool (vk, vk1; vk1 = +inf when
 * the pool has k values) and per map the count below vk1 (votes[16 c + l], 0 for maps out of
 * the pool). The values in the brackets are put in order by an insertion network of
 * MLSOM_LANES_WIN registers, fed only the neurons with a row in its bracket. OUT fm (M + 16):
 * per neuron j the rows with its value in their bracket; fj (M + 16): the neurons with any, in
 * order; returns how many. */
__attribute__((target("avx512f,popcnt"))) static Py_ssize_t mlsom_lanes_window_f_avx512
    MLSOM_LANES_WINDOW_ARGS
{
    const __m512 fa = _mm512_loadu_ps(fa_), fb = _mm512_loadu_ps(fb_);
    const __m512i ca = _mm512_loadu_si512((const void *)ca_);
    const __m512i cb = _mm512_loadu_si512((const void *)cb_);
    const __m512i one = _mm512_set1_epi32(1);
    const Py_ssize_t M = off[L];
    __m512 mn = _mm512_set1_ps(INFINITY);
    __m512 r[MLSOM_LANES_WIN];
    Py_ssize_t c, j, f, nf = 0;
    int i;
    /* the masks of the bracket, the count below it per map, the smallest value above it (per
     * map for all 16 rows, kept for the rows whose pool holds the map) */
    for (c = 0; c < L; c++) {
        const __mmask16 pm = pool[c] & act;
        const Py_ssize_t e = off[c + 1];
        __m512i lo0 = _mm512_setzero_si512(), lo1 = lo0;
        __m512 mn0 = _mm512_set1_ps(INFINITY), mn1 = mn0;
        if (!pm) {
            for (j = off[c]; j < e; j++) fm[j] = 0;
            _mm512_storeu_si512((void *)(votes + 16 * c), lo0);
            continue;
        }
        for (j = off[c]; j + 1 < e; j += 2) {
            const __m512 v0 = _mm512_loadu_ps(g + 16 * j), v1 = _mm512_loadu_ps(g + 16 * j + 16);
            const __mmask16 lt0 = _mm512_cmp_ps_mask(v0, fa, _CMP_LT_OQ);
            const __mmask16 lt1 = _mm512_cmp_ps_mask(v1, fa, _CMP_LT_OQ);
            lo0 = _mm512_mask_add_epi32(lo0, lt0, lo0, one);
            lo1 = _mm512_mask_add_epi32(lo1, lt1, lo1, one);
            mn0 = _mm512_mask_min_ps(mn0, _mm512_cmp_ps_mask(v0, fb, _CMP_GE_OQ), v0, mn0);
            mn1 = _mm512_mask_min_ps(mn1, _mm512_cmp_ps_mask(v1, fb, _CMP_GE_OQ), v1, mn1);
            fm[j] = (uint16_t)(_mm512_mask_cmp_ps_mask(pm, v0, fb, _CMP_LT_OQ) & ~lt0);
            fm[j + 1] = (uint16_t)(_mm512_mask_cmp_ps_mask(pm, v1, fb, _CMP_LT_OQ) & ~lt1);
        }
        if (j < e) {
            const __m512 v0 = _mm512_loadu_ps(g + 16 * j);
            const __mmask16 lt0 = _mm512_cmp_ps_mask(v0, fa, _CMP_LT_OQ);
            lo0 = _mm512_mask_add_epi32(lo0, lt0, lo0, one);
            mn0 = _mm512_mask_min_ps(mn0, _mm512_cmp_ps_mask(v0, fb, _CMP_GE_OQ), v0, mn0);
            fm[j] = (uint16_t)(_mm512_mask_cmp_ps_mask(pm, v0, fb, _CMP_LT_OQ) & ~lt0);
        }
        _mm512_storeu_si512((void *)(votes + 16 * c),
                            _mm512_maskz_mov_epi32(pm, _mm512_add_epi32(lo0, lo1)));
        mn = _mm512_mask_min_ps(mn, pm, _mm512_min_ps(mn0, mn1), mn);
    }
    /* the neurons with a row in its bracket, 16 masks at a time (compressed, no branch) */
    for (j = 0; j < M; j += 16) {
        const __mmask16 lm = mlsom_mask16(M - j);
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(fm + j)));
        const __mmask16 nz = _mm512_mask_test_epi32_mask(lm, w, w);
        const __m512i jv = _mm512_add_epi32(_mm512_set1_epi32((int)j),
                                            _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
                                                             5, 4, 3, 2, 1, 0));
        _mm512_storeu_si512((void *)(fj + nf), _mm512_maskz_compress_epi32(nz, jv));
        nf += __builtin_popcount((unsigned int)nz);
    }
    /* their values in order, row by row: r[i] ends as the (i + 1)-th smallest in the bracket */
    for (i = 0; i < MLSOM_LANES_WIN; i++) r[i] = _mm512_set1_ps(INFINITY);
    for (f = 0; f < nf; f++) {
        __m512 v = _mm512_loadu_ps(g + 16 * (Py_ssize_t)fj[f]);
        const __mmask16 mk = fm[fj[f]];
        for (i = 0; i < MLSOM_LANES_WIN; i++) {
            const __m512 t = r[i];
            r[i] = _mm512_mask_min_ps(t, mk, t, v);
            v = _mm512_max_ps(t, v);
        }
    }
    {
        /* vk is the (k - ca)-th value of the bracket; vk1 the next one, or the smallest value
         * above the bracket when cb = k */
        const __m512i rank = _mm512_sub_epi32(_mm512_set1_epi32(k), ca);
        const __mmask16 inside = _mm512_cmpgt_epi32_mask(_mm512_sub_epi32(cb, ca), rank);
        __m512 vk = _mm512_set1_ps(INFINITY), vk1 = mn;
        for (i = 0; i < MLSOM_LANES_WIN; i++) {
            vk = _mm512_mask_mov_ps(vk, _mm512_cmpeq_epi32_mask(rank, _mm512_set1_epi32(i + 1)),
                                    r[i]);
            if (i > 0)
                vk1 = _mm512_mask_mov_ps(
                    vk1, inside & _mm512_cmpeq_epi32_mask(rank, _mm512_set1_epi32(i)), r[i]);
        }
        _mm512_storeu_ps(vk_, vk);
        _mm512_storeu_ps(vk1_, vk1);
        /* the votes: below the bracket, and the bracket's values below vk1 */
        f = 0;
        for (c = 0; c < L; c++) {
            __m512i cnt = _mm512_loadu_si512((const void *)(votes + 16 * c));
            for (; f < nf && fj[f] < off[c + 1]; f++) {
                const __m512 v = _mm512_loadu_ps(g + 16 * (Py_ssize_t)fj[f]);
                cnt = _mm512_mask_add_epi32(
                    cnt, _mm512_mask_cmp_ps_mask(fm[fj[f]], v, vk1, _CMP_LT_OQ), cnt, one);
            }
            _mm512_storeu_si512((void *)(votes + 16 * c), cnt);
        }
    }
    return nf;
}

/* The winner of a round for the rows act of a group: the map of the pool with the most votes;
 * a tie goes to the map whose smallest screening value (m1[64 c + l]) is smaller by more than
 * gapf[l] (a float bound at least the screening gap). Returns the rows with a tie that the
 * bound leaves in doubt (their winner is to be decided from exact distances). */
__attribute__((target("avx512f"))) static uint16_t mlsom_lanes_winner_avx512 MLSOM_LANES_WINNER_ARGS
{
    const __m512 gapf = _mm512_loadu_ps(gapf_);
    __m512i bv = _mm512_setzero_si512(), bw = _mm512_set1_epi32(-1);
    __m512 bm = _mm512_set1_ps(INFINITY);
    __mmask16 doubt = 0;
    Py_ssize_t c;
    for (c = 0; c < L; c++) {
        const __m512i vc = _mm512_loadu_si512((const void *)(votes + 16 * c));
        const __m512 mc = _mm512_loadu_ps(m1 + 64 * c);
        const __mmask16 valid = _mm512_mask_cmpgt_epi32_mask(pool[c] & act, vc,
                                                             _mm512_setzero_si512());
        const __mmask16 more = _mm512_mask_cmpgt_epi32_mask(valid, vc, bv);
        const __mmask16 tie = _mm512_mask_cmpeq_epi32_mask(valid, vc, bv);
        const __mmask16 nearer =
            _mm512_mask_cmp_ps_mask(tie, _mm512_sub_ps(bm, mc), gapf, _CMP_GT_OQ);
        const __mmask16 farther =
            _mm512_mask_cmp_ps_mask(tie, _mm512_sub_ps(mc, bm), gapf, _CMP_GT_OQ);
        const __mmask16 take = more | nearer;
        /* a map with more votes than every earlier one settles the doubts among those */
        doubt = (doubt & (__mmask16)~more) | (tie & (__mmask16)~(nearer | farther));
        bv = _mm512_mask_mov_epi32(bv, take, vc);
        bw = _mm512_mask_mov_epi32(bw, take, _mm512_set1_epi32((int)c));
        bm = _mm512_mask_mov_ps(bm, take, mc);
    }
    _mm512_storeu_si512((void *)winner, bw);
    return (uint16_t)doubt;
}
/* ------------------------------------------------------------------------------------------------
 * The same 16-row path on AVX2 (with FMA): the same layouts and the same operations in the same
 * order, each 16-lane vector of the AVX-512 kernels held as two 8-lane halves (s = 0: rows 0-7 of
 * the group, s = 1: rows 8-15), the lane masks as uint16 between steps and as compare vectors
 * within one (mlsom_m8 widens 8 bits of a mask to a compare vector). The screening values
 * (mlsom_screen64maps_f_avx2) are bit-identical to the AVX-512 kernel's (each the same chain of
 * fused multiply-adds), and so are every trial value, bracket and count.
 */

/* the lanes of bits m & 0xFF, as an AVX2 compare result (all ones where the bit is set) */
__attribute__((target("avx2"))) static inline __m256i mlsom_m8(unsigned m)
{
    const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)(m & 0xFF)), bits), bits);
}

__attribute__((target("avx2"))) static inline unsigned mlsom_bits8(__m256i v)
{
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(v));
}

/* an 8 x 8 transpose in registers: r[i] holds row i on entry, column i on return */
__attribute__((target("avx2"))) static inline void mlsom_tr8(__m256 *r)
{
    __m256 t[8], u[8];
    int i;
    for (i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* u[4 g + m]: column m of rows 4 g .. 4 g + 3 in its low half, column m + 4 in its high */
    for (i = 0; i < 2; i++) {
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
        r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
    }
}

/* 8 values x[0:8] (the first `left` of them, zeros after) minus c[0:8] in float64, rounded to
 * float32 */
__attribute__((target("avx2"))) static inline __m256 mlsom_centred8_d(const double *x,
                                                                     const double *c,
                                                                     Py_ssize_t left)
{
    __m256d a, b, ca, cb;
    if (left >= 8) {
        a = _mm256_loadu_pd(x);
        b = _mm256_loadu_pd(x + 4);
        ca = _mm256_loadu_pd(c);
        cb = _mm256_loadu_pd(c + 4);
    } else {
        const __m256i k = _mm256_set1_epi64x(left);
        const __m256i m0 = _mm256_cmpgt_epi64(k, _mm256_setr_epi64x(0, 1, 2, 3));
        const __m256i m1 = _mm256_cmpgt_epi64(k, _mm256_setr_epi64x(4, 5, 6, 7));
        a = _mm256_maskload_pd(x, m0);
        b = _mm256_maskload_pd(x + 4, m1);
        ca = _mm256_maskload_pd(c, m0);
        cb = _mm256_maskload_pd(c + 4, m1);
    }
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(b, cb)),
                           _mm256_cvtpd_ps(_mm256_sub_pd(a, ca)));
}

__attribute__((target("avx2"))) static inline __m256 mlsom_centred8_f(const float *x,
                                                                     const double *c,
                                                                     Py_ssize_t left)
{
    __m256 v;
    __m256d ca, cb;
    if (left >= 8) {
        v = _mm256_loadu_ps(x);
        ca = _mm256_loadu_pd(c);
        cb = _mm256_loadu_pd(c + 4);
    } else {
        const __m256i k = _mm256_set1_epi64x(left);
        v = _mm256_maskload_ps(
            x, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
        ca = _mm256_maskload_pd(c, _mm256_cmpgt_epi64(k, _mm256_setr_epi64x(0, 1, 2, 3)));
        cb = _mm256_maskload_pd(c + 4, _mm256_cmpgt_epi64(k, _mm256_setr_epi64x(4, 5, 6, 7)));
    }
    return _mm256_set_m128(
        _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), cb)),
        _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), ca)));
}

/* The rows' centring of the AVX2 path: the same values as mlsom_centre16_d/f_avx512,
 * xb[16 i + r] = -2 x'_{r,i} and xx[r] = |x'_r|^2 in _centre_row's float32 sums and order
 * (feature i of the first 8 floor(A / 8) into partial sum i mod 8, the others into the first,
 * the eight added in turn), one lane per row; rows r >= nr are zeros (buf is not used). The
 * rows go 8 at a time, 8 features of each, transposed 8 x 8 in registers. */
#define MLSOM_CENTRE16_AVX2(NAME, T, LOAD)                                               \
    __attribute__((target("avx2"))) static void NAME MLSOM_CENTRE16_ARGS(T)              \
    {                                                                                    \
        const Py_ssize_t a8 = A - A % 8;                                                 \
        const __m256 m2 = _mm256_set1_ps(-2.0f);                                         \
        __m256 part[8], r[8], sum;                                                       \
        float sv[8];                                                                     \
        Py_ssize_t i0, i, q, h;                                                          \
        (void)buf;                                                                       \
        for (h = 0; h < 2; h++) {                                                        \
            for (q = 0; q < 8; q++) part[q] = _mm256_setzero_ps();                       \
            for (i0 = 0; i0 < A; i0 += 8) {                                              \
                for (q = 0; q < 8; q++)                                                  \
                    r[q] = 8 * h + q < nr ? LOAD(x + (8 * h + q) * A + i0, c + i0, A - i0) \
                                          : _mm256_setzero_ps();                         \
                mlsom_tr8(r);                                                            \
                for (i = 0; i < 8 && i0 + i < A; i++) {                                  \
                    const __m256 sq = _mm256_mul_ps(r[i], r[i]);                         \
                    if (i0 + i < a8)                                                     \
                        part[i] = _mm256_add_ps(part[i], sq);                            \
                    else                                                                 \
                        part[0] = _mm256_add_ps(part[0], sq);                            \
                    _mm256_storeu_ps(xb + 16 * (i0 + i) + 8 * h, _mm256_mul_ps(m2, r[i])); \
                }                                                                        \
            }                                                                            \
            sum = part[0];                                                               \
            for (q = 1; q < 8; q++) sum = _mm256_add_ps(sum, part[q]);                   \
            _mm256_storeu_ps(sv, sum);                                                   \
            for (q = 0; q < 8; q++) xx[8 * h + q] = (double)sv[q];                       \
        }                                                                                \
    }
MLSOM_CENTRE16_AVX2(mlsom_centre16_d_avx2, double, mlsom_centred8_d)
MLSOM_CENTRE16_AVX2(mlsom_centre16_f_avx2, float, mlsom_centred8_f)
#undef MLSOM_CENTRE16_AVX2
/* As mlsom_lanes_search_f_avx512 (same arguments, the same passes, values and counts). */
__attribute__((target("avx2"))) static uint16_t mlsom_lanes_search_f_avx2 MLSOM_LANES_SEARCH_ARGS
{
    __m256 fa[2], fb[2];
    __m256i ca[2], cb[2];
    const __m256i kv = _mm256_set1_epi32(k), wv = _mm256_set1_epi32(MLSOM_LANES_WIN);
    const __m256 half = _mm256_set1_ps(0.5f), fone = _mm256_set1_ps(1.0f);
    unsigned bis = 0, fail = 0, act = act_in;
    int pass, h, s;
    for (s = 0; s < 2; s++) {
        fa[s] = _mm256_loadu_ps(fa_ + 8 * s);
        fb[s] = _mm256_loadu_ps(fb_ + 8 * s);
        ca[s] = _mm256_loadu_si256((const __m256i *)(ca_ + 8 * s));
        cb[s] = _mm256_loadu_si256((const __m256i *)(cb_ + 8 * s));
    }
    for (h = 0; h < *nh; h++) {
        /* the count below an earlier trial value t for the current pool */
        const unsigned ok = act & hv[h];
        Py_ssize_t c;
        if (!ok) continue;
        for (s = 0; s < 2; s++) {
            const __m256 t = _mm256_loadu_ps(ht + 16 * h + 8 * s);
            const __m256i okv = mlsom_m8(ok >> (8 * s));
            __m256i cnt = _mm256_setzero_si256(), lo, hi, ltk;
            for (c = 0; c < L; c++) {
                const __m256i hcv =
                    _mm256_loadu_si256((const __m256i *)(hc + 16 * (L * h + c) + 8 * s));
                cnt = _mm256_add_epi32(
                    cnt, _mm256_and_si256(mlsom_m8((unsigned)pool[c] >> (8 * s)), hcv));
            }
            ltk = _mm256_cmpgt_epi32(kv, cnt);
            lo = _mm256_and_si256(_mm256_and_si256(okv, ltk),
                                  _mm256_castps_si256(_mm256_cmp_ps(t, fa[s], _CMP_GT_OQ)));
            hi = _mm256_andnot_si256(ltk, _mm256_and_si256(okv, MLSOM_AVX2_LT(t, fb[s])));
            fa[s] = MLSOM_AVX2_BLEND(fa[s], t, lo);
            ca[s] = MLSOM_AVX2_BLENDI(ca[s], cnt, lo);
            fb[s] = MLSOM_AVX2_BLEND(fb[s], t, hi);
            cb[s] = MLSOM_AVX2_BLENDI(cb[s], cnt, hi);
        }
    }
    {
        unsigned a = 0;
        for (s = 0; s < 2; s++)
            a |= mlsom_bits8(_mm256_cmpgt_epi32(_mm256_sub_epi32(cb[s], ca[s]), wv)) << (8 * s);
        act &= a;
    }
    for (pass = 0; act && pass < max_pass; pass++) {
        __m256 p[2], q[2];
        __m256i oldi[2], cp[2], cq[2];
        unsigned okm = 0, midm = 0, bis_new = 0, act_new = 0;
        Py_ssize_t c, j;
        int keep;
        for (s = 0; s < 2; s++) {
            const __m256 old = _mm256_cvtepi32_ps(oldi[s] = _mm256_sub_epi32(cb[s], ca[s]));
            const __m256 inv = _mm256_div_ps(fone, old);
            const __m256 kc =
                _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(kv, ca[s])), half);
            const __m256 kb =
                _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(cb[s], kv)), half);
            const __m256 m = _mm256_add_ps(_mm256_mul_ps(old, _mm256_set1_ps(0.125f)),
                                           _mm256_set1_ps(0.25f * MLSOM_LANES_WIN));
            const __m256i bv = mlsom_m8(bis >> (8 * s));
            __m256 q1 = _mm256_mul_ps(_mm256_sub_ps(kc, m), inv);
            __m256 q2 = _mm256_mul_ps(_mm256_add_ps(kc, m), inv);
            __m256 wd, mid, ok, mid_ok;
            q1 = _mm256_max_ps(q1, _mm256_mul_ps(_mm256_mul_ps(half, kc), inv));
            q2 = _mm256_min_ps(q2,
                               _mm256_sub_ps(fone, _mm256_mul_ps(_mm256_mul_ps(half, kb), inv)));
            q1 = MLSOM_AVX2_BLEND(q1, _mm256_set1_ps(1.0f / 3.0f), bv);
            q2 = MLSOM_AVX2_BLEND(q2, _mm256_set1_ps(2.0f / 3.0f), bv);
            wd = _mm256_sub_ps(fb[s], fa[s]);
            p[s] = _mm256_add_ps(fa[s], _mm256_mul_ps(wd, q1));
            q[s] = _mm256_add_ps(fa[s], _mm256_mul_ps(wd, q2));
            ok = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(fa[s], p[s], _CMP_LT_OQ),
                                             _mm256_cmp_ps(p[s], q[s], _CMP_LT_OQ)),
                               _mm256_cmp_ps(q[s], fb[s], _CMP_LT_OQ));
            mid = _mm256_add_ps(_mm256_mul_ps(half, fa[s]), _mm256_mul_ps(half, fb[s]));
            mid_ok = _mm256_and_ps(_mm256_cmp_ps(fa[s], mid, _CMP_LT_OQ),
                                   _mm256_cmp_ps(mid, fb[s], _CMP_LT_OQ));
            p[s] = _mm256_blendv_ps(mid, p[s], ok);
            q[s] = _mm256_blendv_ps(mid, q[s], ok);
            okm |= (unsigned)_mm256_movemask_ps(ok) << (8 * s);
            midm |= (unsigned)_mm256_movemask_ps(mid_ok) << (8 * s);
            cp[s] = cq[s] = _mm256_setzero_si256();
        }
        fail |= act & ~(okm | midm);
        act &= okm | midm;
        keep = *nh + 2 <= h_max;
        h = *nh;
        for (c = 0; c < L; c++) {
            /* a map's counts for all 16 rows, kept for the rows whose pool holds it */
            const unsigned pm = pool[c] & act;
            const Py_ssize_t e = off[c + 1];
            if (!pm) {
                if (keep)
                    for (s = 0; s < 2; s++) {
                        _mm256_storeu_si256((__m256i *)(hc + 16 * (L * h + c) + 8 * s),
                                            _mm256_setzero_si256());
                        _mm256_storeu_si256((__m256i *)(hc + 16 * (L * (h + 1) + c) + 8 * s),
                                            _mm256_setzero_si256());
                    }
                continue;
            }
            for (s = 0; s < 2; s++) {
                /* one half of the rows at a time: its accumulators and trial values stay in
                 * registers; a half none of whose rows still searches with this map is skipped
                 * (its counts, zeros, are never used) */
                const __m256 ps = p[s], qs = q[s];
                __m256i tp0 = _mm256_setzero_si256(), tq0 = tp0, tp1 = tp0, tq1 = tp0, tp, tq, pv;
                if (!((pm >> (8 * s)) & 0xFFu)) {
                    if (keep) {
                        _mm256_storeu_si256((__m256i *)(hc + 16 * (L * h + c) + 8 * s), tp0);
                        _mm256_storeu_si256((__m256i *)(hc + 16 * (L * (h + 1) + c) + 8 * s),
                                            tp0);
                    }
                    continue;
                }
                for (j = off[c]; j + 3 < e; j += 4) {
                    const __m256 v0 = _mm256_loadu_ps(g + 16 * j + 8 * s);
                    const __m256 v1 = _mm256_loadu_ps(g + 16 * j + 16 + 8 * s);
                    const __m256 v2 = _mm256_loadu_ps(g + 16 * j + 32 + 8 * s);
                    const __m256 v3 = _mm256_loadu_ps(g + 16 * j + 48 + 8 * s);
                    tp0 = _mm256_sub_epi32(tp0, _mm256_add_epi32(MLSOM_AVX2_LT(v0, ps),
                                                                 MLSOM_AVX2_LT(v1, ps)));
                    tq0 = _mm256_sub_epi32(tq0, _mm256_add_epi32(MLSOM_AVX2_LT(v0, qs),
                                                                 MLSOM_AVX2_LT(v1, qs)));
                    tp1 = _mm256_sub_epi32(tp1, _mm256_add_epi32(MLSOM_AVX2_LT(v2, ps),
                                                                 MLSOM_AVX2_LT(v3, ps)));
                    tq1 = _mm256_sub_epi32(tq1, _mm256_add_epi32(MLSOM_AVX2_LT(v2, qs),
                                                                 MLSOM_AVX2_LT(v3, qs)));
                }
                for (; j < e; j++) {
                    const __m256 v0 = _mm256_loadu_ps(g + 16 * j + 8 * s);
                    tp0 = _mm256_sub_epi32(tp0, MLSOM_AVX2_LT(v0, ps));
                    tq0 = _mm256_sub_epi32(tq0, MLSOM_AVX2_LT(v0, qs));
                }
                tp = _mm256_add_epi32(tp0, tp1);
                tq = _mm256_add_epi32(tq0, tq1);
                pv = mlsom_m8(pm >> (8 * s));
                cp[s] = _mm256_add_epi32(cp[s], _mm256_and_si256(pv, tp));
                cq[s] = _mm256_add_epi32(cq[s], _mm256_and_si256(pv, tq));
                if (keep) {
                    _mm256_storeu_si256((__m256i *)(hc + 16 * (L * h + c) + 8 * s), tp);
                    _mm256_storeu_si256((__m256i *)(hc + 16 * (L * (h + 1) + c) + 8 * s), tq);
                }
            }
        }
        if (keep) {
            for (s = 0; s < 2; s++) {
                _mm256_storeu_ps(ht + 16 * h + 8 * s, p[s]);
                _mm256_storeu_ps(ht + 16 * (h + 1) + 8 * s, q[s]);
            }
            hv[h] = hv[h + 1] = (uint16_t)act;
            *nh = h + 2;
        }
        for (s = 0; s < 2; s++) {
            const __m256i av = mlsom_m8(act >> (8 * s));
            const __m256i ge_p = _mm256_andnot_si256(_mm256_cmpgt_epi32(kv, cp[s]), av);
            const __m256i lt_q =
                _mm256_andnot_si256(ge_p, _mm256_and_si256(av, _mm256_cmpgt_epi32(kv, cq[s])));
            const __m256i in = _mm256_andnot_si256(_mm256_or_si256(ge_p, lt_q), av);
            __m256i nw;
            fb[s] = MLSOM_AVX2_BLEND(fb[s], p[s], ge_p);
            cb[s] = MLSOM_AVX2_BLENDI(cb[s], cp[s], ge_p);
            fa[s] = MLSOM_AVX2_BLEND(fa[s], q[s], lt_q);
            ca[s] = MLSOM_AVX2_BLENDI(ca[s], cq[s], lt_q);
            fa[s] = MLSOM_AVX2_BLEND(fa[s], p[s], in);
            ca[s] = MLSOM_AVX2_BLENDI(ca[s], cp[s], in);
            fb[s] = MLSOM_AVX2_BLEND(fb[s], q[s], in);
            cb[s] = MLSOM_AVX2_BLENDI(cb[s], cq[s], in);
            nw = _mm256_sub_epi32(cb[s], ca[s]);
            bis_new |= mlsom_bits8(_mm256_and_si256(
                           av, _mm256_cmpgt_epi32(_mm256_add_epi32(nw, nw), oldi[s])))
                       << (8 * s);
            act_new |= mlsom_bits8(_mm256_and_si256(av, _mm256_cmpgt_epi32(nw, wv))) << (8 * s);
        }
        bis = bis_new;
        act = act_new;
    }
    for (s = 0; s < 2; s++) {
        _mm256_storeu_ps(fa_ + 8 * s, fa[s]);
        _mm256_storeu_ps(fb_ + 8 * s, fb[s]);
        _mm256_storeu_si256((__m256i *)(ca_ + 8 * s), ca[s]);
        _mm256_storeu_si256((__m256i *)(cb_ + 8 * s), cb[s]);
    }
    return (uint16_t)(fail | act);
}

/* As mlsom_lanes_window_f_avx512 (same arguments and results); the neurons with a row in its
 * bracket are listed by a branch-free scalar loop, and the insertion network runs one half of
 * the rows at a time (eight registers). */
__attribute__((target("avx2"))) static Py_ssize_t mlsom_lanes_window_f_avx2 MLSOM_LANES_WINDOW_ARGS
{
    const Py_ssize_t M = off[L];
    __m256 fa[2], fb[2], mn[2], vk1[2];
    Py_ssize_t c, j, f, nf = 0;
    int i, s;
    for (s = 0; s < 2; s++) {
        fa[s] = _mm256_loadu_ps(fa_ + 8 * s);
        fb[s] = _mm256_loadu_ps(fb_ + 8 * s);
        mn[s] = _mm256_set1_ps(INFINITY);
    }
    /* the masks of the bracket, the count below it per map, the smallest value above it */
    for (c = 0; c < L; c++) {
        const unsigned pm = pool[c] & act;
        const Py_ssize_t e = off[c + 1];
        __m256i lo[2];
        __m256 mn0[2];
        if (!pm) {
            for (j = off[c]; j < e; j++) fm[j] = 0;
            for (s = 0; s < 2; s++)
                _mm256_storeu_si256((__m256i *)(votes + 16 * c + 8 * s), _mm256_setzero_si256());
            continue;
        }
        for (s = 0; s < 2; s++) {
            lo[s] = _mm256_setzero_si256();
            mn0[s] = _mm256_set1_ps(INFINITY);
        }
        for (j = off[c]; j < e; j++) {
            unsigned in = 0;
            for (s = 0; s < 2; s++) {
                /* below fb or not (a NaN is neither, and min keeps mn0 then: as
                 * the AVX-512 kernel's compare with fb >= does) */
                const __m256 v = _mm256_loadu_ps(g + 16 * j + 8 * s);
                const __m256 lt = _mm256_cmp_ps(v, fa[s], _CMP_LT_OQ);
                const __m256 ltb = _mm256_cmp_ps(v, fb[s], _CMP_LT_OQ);
                lo[s] = _mm256_sub_epi32(lo[s], _mm256_castps_si256(lt));
                mn0[s] = _mm256_blendv_ps(_mm256_min_ps(v, mn0[s]), mn0[s], ltb);
                in |= (unsigned)_mm256_movemask_ps(_mm256_andnot_ps(lt, ltb)) << (8 * s);
            }
            fm[j] = (uint16_t)(in & pm);
        }
        for (s = 0; s < 2; s++) {
            const __m256i pv = mlsom_m8(pm >> (8 * s));
            _mm256_storeu_si256((__m256i *)(votes + 16 * c + 8 * s), _mm256_and_si256(pv, lo[s]));
            mn[s] = MLSOM_AVX2_BLEND(mn[s], _mm256_min_ps(mn0[s], mn[s]), pv);
        }
    }
    /* the neurons with a row in its bracket, in order: 16 masks at a time, two bits of a
     * byte compare per mask */
    for (j = 0; j + 16 <= M; j += 16) {
        const __m256i w = _mm256_loadu_si256((const __m256i *)(fm + j));
        unsigned nz =
            ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi16(w, _mm256_setzero_si256()));
        while (nz) {
            fj[nf++] = (int32_t)(j + (__builtin_ctz(nz) >> 1));
            nz &= nz - 1;
            nz &= nz - 1;
        }
    }
    for (; j < M; j++) {
        fj[nf] = (int32_t)j;
        nf += fm[j] != 0;
    }
    for (s = 0; s < 2; s++) {
        /* their values in order: r[i] ends as the (i + 1)-th smallest in the bracket; vk is the
         * (k - ca)-th value of the bracket, vk1 the next one, or the smallest value above the
         * bracket when cb = k */
        const __m256i ca = _mm256_loadu_si256((const __m256i *)(ca_ + 8 * s));
        const __m256i cb = _mm256_loadu_si256((const __m256i *)(cb_ + 8 * s));
        const __m256i rank = _mm256_sub_epi32(_mm256_set1_epi32(k), ca);
        const __m256i inside = _mm256_cmpgt_epi32(_mm256_sub_epi32(cb, ca), rank);
        __m256 r[MLSOM_LANES_WIN], vk = _mm256_set1_ps(INFINITY);
        for (i = 0; i < MLSOM_LANES_WIN; i++) r[i] = _mm256_set1_ps(INFINITY);
        for (f = 0; f < nf; f++) {
            const unsigned m8 = ((unsigned)fm[fj[f]] >> (8 * s)) & 0xFF;
            __m256 v;
            __m256i mk;
            if (!m8) continue;
            v = _mm256_loadu_ps(g + 16 * (Py_ssize_t)fj[f] + 8 * s);
            mk = mlsom_m8(m8);
            for (i = 0; i < MLSOM_LANES_WIN; i++) {
                const __m256 t = r[i];
                r[i] = MLSOM_AVX2_BLEND(t, _mm256_min_ps(t, v), mk);
                v = _mm256_max_ps(t, v);
            }
        }
        vk1[s] = mn[s];
        for (i = 0; i < MLSOM_LANES_WIN; i++) {
            vk = MLSOM_AVX2_BLEND(vk, r[i], _mm256_cmpeq_epi32(rank, _mm256_set1_epi32(i + 1)));
            if (i > 0)
                vk1[s] = MLSOM_AVX2_BLEND(
                    vk1[s], r[i],
                    _mm256_and_si256(inside, _mm256_cmpeq_epi32(rank, _mm256_set1_epi32(i))));
        }
        _mm256_storeu_ps(vk_ + 8 * s, vk);
        _mm256_storeu_ps(vk1_ + 8 * s, vk1[s]);
    }
    /* the votes: below the bracket, and the bracket's values below vk1 */
    f = 0;
    for (c = 0; c < L; c++) {
        __m256i cnt[2];
        for (s = 0; s < 2; s++)
            cnt[s] = _mm256_loadu_si256((const __m256i *)(votes + 16 * c + 8 * s));
        for (; f < nf && fj[f] < off[c + 1]; f++)
            for (s = 0; s < 2; s++) {
                const __m256 v = _mm256_loadu_ps(g + 16 * (Py_ssize_t)fj[f] + 8 * s);
                cnt[s] = _mm256_sub_epi32(
                    cnt[s], _mm256_and_si256(mlsom_m8((unsigned)fm[fj[f]] >> (8 * s)),
                                             MLSOM_AVX2_LT(v, vk1[s])));
            }
        for (s = 0; s < 2; s++)
            _mm256_storeu_si256((__m256i *)(votes + 16 * c + 8 * s), cnt[s]);
    }
    return nf;
}

/* As mlsom_lanes_winner_avx512 (same arguments and results). */
__attribute__((target("avx2"))) static uint16_t mlsom_lanes_winner_avx2 MLSOM_LANES_WINNER_ARGS
{
    unsigned doubt_all = 0;
    Py_ssize_t c;
    int s;
    for (s = 0; s < 2; s++) {
        const __m256 gapf = _mm256_loadu_ps(gapf_ + 8 * s);
        __m256i bv = _mm256_setzero_si256(), bw = _mm256_set1_epi32(-1), doubt = bv;
        __m256 bm = _mm256_set1_ps(INFINITY);
        for (c = 0; c < L; c++) {
            const __m256i vc = _mm256_loadu_si256((const __m256i *)(votes + 16 * c + 8 * s));
            const __m256 mc = _mm256_loadu_ps(m1 + 64 * c + 8 * s);
            const __m256i valid =
                _mm256_and_si256(mlsom_m8(((unsigned)pool[c] & act) >> (8 * s)),
                                 _mm256_cmpgt_epi32(vc, _mm256_setzero_si256()));
            const __m256i more = _mm256_and_si256(valid, _mm256_cmpgt_epi32(vc, bv));
            const __m256i tie = _mm256_and_si256(valid, _mm256_cmpeq_epi32(vc, bv));
            const __m256i nearer = _mm256_and_si256(
                tie, _mm256_castps_si256(_mm256_cmp_ps(_mm256_sub_ps(bm, mc), gapf, _CMP_GT_OQ)));
            const __m256i farther = _mm256_and_si256(
                tie, _mm256_castps_si256(_mm256_cmp_ps(_mm256_sub_ps(mc, bm), gapf, _CMP_GT_OQ)));
            const __m256i take = _mm256_or_si256(more, nearer);
            /* a map with more votes than every earlier one settles the doubts among those */
            doubt = _mm256_or_si256(_mm256_andnot_si256(more, doubt),
                                    _mm256_andnot_si256(_mm256_or_si256(nearer, farther), tie));
            bv = MLSOM_AVX2_BLENDI(bv, vc, take);
            bw = MLSOM_AVX2_BLENDI(bw, _mm256_set1_epi32((int)c), take);
            bm = MLSOM_AVX2_BLEND(bm, mc, take);
        }
        _mm256_storeu_si256((__m256i *)(winner + 8 * s), bw);
        doubt_all |= mlsom_bits8(doubt) << (8 * s);
    }
    return (uint16_t)doubt_all;
}
#endif /* MLSOM_X86_DISPATCH */

#endif /* MLSOM_KERNELS_LANES_H */
