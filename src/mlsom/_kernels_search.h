/* Kernel family: the passes over one instance's screening values that rank the classes
 * (smallest value and its candidates, counts below trial values, the window's gather, the
 * largest and smallest value, per-map counts). The plain-C bodies, compiled once per path by
 * MLSOM_DEFINE_PATH (_kernels.h), then the hand-written AVX2 and AVX-512F gather and min/max.
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_SEARCH_H
#define MLSOM_KERNELS_SEARCH_H

#include "_kernels_common.h"

/* first index of the smallest d[0:n] (n > 0); *n_cand = entries <= that minimum + gap (the
 * bound is rounded up to the type of d, which can only add candidates) */
#define MLSOM_ARGMIN_BODY(T, NEXTUP)                                                     \
    {                                                                                    \
        Py_ssize_t j, k, cnt = 0, first = 0;                                             \
        T m[8], mv, limt;                                                                \
        double lim;                                                                      \
        for (k = 0; k < 8; k++) m[k] = d[0];                                             \
        for (j = 0; j + 8 <= n; j += 8)                                                  \
            for (k = 0; k < 8; k++) m[k] = d[j + k] < m[k] ? d[j + k] : m[k];            \
        mv = m[0];                                                                       \
        for (k = 1; k < 8; k++) mv = m[k] < mv ? m[k] : mv;                              \
        for (; j < n; j++) mv = d[j] < mv ? d[j] : mv;                                   \
        lim = gap > 0.0 ? (double)mv + gap : (double)mv;                                 \
        limt = (T)lim;                                                                   \
        if ((double)limt < lim) limt = NEXTUP(limt, (T)INFINITY);                        \
        for (j = 0; j < n; j++) cnt += d[j] <= limt;                                     \
        while (first < n - 1 && !(d[first] <= mv)) first++;                              \
        *n_cand = gap > 0.0 ? cnt : 1;                                                   \
        return first;                                                                    \
    }

/* how many of d[0:n] are below t (n < 2^31); vectorised by the compiler */
#define MLSOM_COUNT_LT_BODY(T)                                                           \
    {                                                                                    \
        Py_ssize_t j;                                                                    \
        int32_t c = 0;                                                                   \
        for (j = 0; j < n; j++) c += d[j] < t;                                           \
        return c;                                                                        \
    }

/* how many of d[0:n] are below t1 (returned) and below t2 (*c2) */
#define MLSOM_COUNT_LT2_BODY(T)                                                          \
    {                                                                                    \
        Py_ssize_t j;                                                                    \
        int32_t c = 0, e = 0;                                                            \
        for (j = 0; j < n; j++) {                                                        \
            c += d[j] < t1;                                                              \
            e += d[j] < t2;                                                              \
        }                                                                                \
        *c2 = e;                                                                         \
        return c;                                                                        \
    }

/* the entries of d[0:n] with a <= d[j] < b into ent, in index order (branch-free: every entry
 * is written, the count advances only for those in the window); returns how many. The AVX2 and
 * AVX-512 paths use the hand-written vector-mask versions at the end of this file. */
#define MLSOM_GATHER_RANGE_BODY(T)                                                       \
    {                                                                                    \
        Py_ssize_t j, n_ent = 0;                                                         \
        for (j = 0; j < n; j++) {                                                        \
            ent[n_ent].d = (double)d[j];                                                 \
            ent[n_ent].j = j;                                                            \
            n_ent += (d[j] >= a) & (d[j] < b);                                           \
        }                                                                                \
        return n_ent;                                                                    \
    }

/* largest of d[0:n] (n > 0) returned, smallest in *lo */
#define MLSOM_MAX_BODY(T)                                                                \
    {                                                                                    \
        Py_ssize_t j, k;                                                                 \
        T m[8], l[8], mv, lv;                                                            \
        for (k = 0; k < 8; k++) m[k] = l[k] = d[0];                                      \
        for (j = 0; j + 8 <= n; j += 8)                                                  \
            for (k = 0; k < 8; k++) {                                                    \
                m[k] = d[j + k] > m[k] ? d[j + k] : m[k];                                \
                l[k] = d[j + k] < l[k] ? d[j + k] : l[k];                                \
            }                                                                            \
        mv = m[0];                                                                       \
        lv = l[0];                                                                       \
        for (k = 1; k < 8; k++) {                                                        \
            mv = m[k] > mv ? m[k] : mv;                                                  \
            lv = l[k] < lv ? l[k] : lv;                                                  \
        }                                                                                \
        for (; j < n; j++) {                                                             \
            mv = d[j] > mv ? d[j] : mv;                                                  \
            lv = d[j] < lv ? d[j] : lv;                                                  \
        }                                                                                \
        *lo = (double)lv;                                                                \
        return (double)mv;                                                               \
    }

/* per map c (neurons off[c] to off[c + 1]) not skipped: how many values are below t1 (c1[c]) and
 * below t2 (c2[c]); 0 for a skipped map */
#define MLSOM_COUNT_MAPS_BODY(T)                                                         \
    {                                                                                    \
        Py_ssize_t c, j;                                                                 \
        for (c = 0; c < L; c++) {                                                        \
            int32_t a = 0, b = 0;                                                        \
            if (!skip[c]) {                                                              \
                for (j = off[c]; j < off[c + 1]; j++) {                                  \
                    a += d[j] < t1;                                                      \
                    b += d[j] < t2;                                                      \
                }                                                                        \
            }                                                                            \
            c1[c] = a;                                                                   \
            c2[c] = b;                                                                   \
        }                                                                                \
    }

#ifdef MLSOM_X86_DISPATCH
/* ---------------------------------------------------------------------------- hand-written, AVX2 */
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

/* ------------------------------------------------------------------------- hand-written, AVX-512F */
/* gather_range with the window's test as one vector compare per 16 neurons: first the masks of
 * the blocks (no branch, no dependence between blocks), then their set bits (the few values in
 * the window), four blocks to a 64-bit word (x86 is little-endian: block q's mask lands in bits
 * 16 (q % 4) onwards). Up to 1024 values (64 blocks) at a time. */
__attribute__((target("avx512f"))) static Py_ssize_t
mlsom_gather_range_f_avx512_mask MLSOM_GATHER_RANGE_ARGS(float)
{
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
    uint16_t h[64];
    Py_ssize_t s0, j0, q, nb, n_ent = 0;
    for (s0 = 0; s0 < n; s0 += 1024) {
        const Py_ssize_t e0 = n - s0 < 1024 ? n : s0 + 1024;
        for (j0 = s0, q = 0; j0 < e0; j0 += 16, q++) {
            const __mmask16 m = mlsom_mask16(e0 - j0);
            const __m512 v = _mm512_maskz_loadu_ps(m, d + j0);
            h[q] = (uint16_t)_mm512_mask_cmp_ps_mask(
                _mm512_mask_cmp_ps_mask(m, v, va, _CMP_GE_OQ), v, vb, _CMP_LT_OQ);
        }
        nb = q;
        for (; q % 4; q++) h[q] = 0;
        for (q = 0; q < nb; q += 4) {
            uint64_t hits;
            memcpy(&hits, h + q, sizeof hits);
            while (hits) {
                const Py_ssize_t j = s0 + 16 * q + (Py_ssize_t)__builtin_ctzll(hits);
                hits &= hits - 1u;
                ent[n_ent].j = j;
                ent[n_ent].d = (double)d[j];
                n_ent++;
            }
        }
    }
    return n_ent;
}

/* max_f in one vector pass, the last block masked (the generic body stays scalar here: its
 * ternaries are not turned into vector max / min) */
__attribute__((target("avx512f"))) static double mlsom_max_f_avx512_mask MLSOM_MAX_ARGS(float)
{
    __m512 mx = _mm512_set1_ps(d[0]), mn = mx;
    Py_ssize_t j0;
    for (j0 = 0; j0 < n; j0 += 16) {
        const __mmask16 m = mlsom_mask16(n - j0);
        const __m512 v = _mm512_maskz_loadu_ps(m, d + j0);
        mx = _mm512_mask_max_ps(mx, m, v, mx);
        mn = _mm512_mask_min_ps(mn, m, v, mn);
    }
    *lo = (double)_mm512_reduce_min_ps(mn);
    return (double)_mm512_reduce_max_ps(mx);
}
#endif /* MLSOM_X86_DISPATCH */

#endif /* MLSOM_KERNELS_SEARCH_H */
