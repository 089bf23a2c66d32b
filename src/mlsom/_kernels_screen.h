/* Kernel family: screening values. The plain-C bodies (one instance; four rows), compiled once
 * per path by MLSOM_DEFINE_PATH (_kernels.h), and training's per-row smallest two (plain C, one
 * body); then the hand-written kernels: the four-row tiles (AVX2 with FMA, AVX-512F) and the
 * 64-row screens, training's (mlsom_screen64min_f) and frozen scoring's with per-map minima
 * (mlsom_screen64maps_f), each for AVX-512F and for AVX2 with FMA.
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_SCREEN_H
#define MLSOM_KERNELS_SCREEN_H

#include "_kernels_common.h"

/* ------------------------------------------------------------------------------------------------
 * screening distances: out[j] = base + ww[j] + sum_i x2[i] * Wt[i, j], with x2 = -2 x given.
 * Eight features per pass over out[], in two independent sums of four.
 */
#define MLSOM_SCREEN_BODY(T)                                                             \
    {                                                                                    \
        Py_ssize_t i = 0, j;                                                             \
        for (j = 0; j < M; j++) out[j] = base + ww[j];                                   \
        for (; i + 8 <= A; i += 8) {                                                     \
            const T x0 = x2[i], x1 = x2[i + 1], x2_ = x2[i + 2], x3 = x2[i + 3];         \
            const T x4 = x2[i + 4], x5 = x2[i + 5], x6 = x2[i + 6], x7 = x2[i + 7];      \
            const T *MLSOM_RESTRICT w0 = Wt + i * M;                                     \
            const T *MLSOM_RESTRICT w1 = w0 + M;                                         \
            const T *MLSOM_RESTRICT w2 = w1 + M;                                         \
            const T *MLSOM_RESTRICT w3 = w2 + M;                                         \
            const T *MLSOM_RESTRICT w4 = w3 + M;                                         \
            const T *MLSOM_RESTRICT w5 = w4 + M;                                         \
            const T *MLSOM_RESTRICT w6 = w5 + M;                                         \
            const T *MLSOM_RESTRICT w7 = w6 + M;                                         \
            for (j = 0; j < M; j++) {                                                    \
                const T a = (x0 * w0[j] + x1 * w1[j]) + (x2_ * w2[j] + x3 * w3[j]);      \
                const T b = (x4 * w4[j] + x5 * w5[j]) + (x6 * w6[j] + x7 * w7[j]);      \
                out[j] = out[j] + (a + b);                                               \
            }                                                                            \
        }                                                                                \
        for (; i < A; i++) {                                                             \
            const T xi = x2[i];                                                          \
            const T *MLSOM_RESTRICT w0 = Wt + i * M;                                     \
            for (j = 0; j < M; j++) out[j] = out[j] + xi * w0[j];                        \
        }                                                                                \
    }

/* screening values of four rows at once: out[q*M + j] = base[q] + ww[j] + sum_i x2[q*A + i] *
 * Ws[i*M + j] for q < 4. Every weight loaded serves four rows; four features per pass over out. */
#define MLSOM_SCREEN4_BODY(T)                                                            \
    {                                                                                    \
        Py_ssize_t i = 0, j;                                                             \
        T *MLSOM_RESTRICT o0 = out, *MLSOM_RESTRICT o1 = out + M;                        \
        T *MLSOM_RESTRICT o2 = out + 2 * M, *MLSOM_RESTRICT o3 = out + 3 * M;            \
        const T *p0 = x2, *p1 = x2 + A, *p2 = x2 + 2 * A, *p3 = x2 + 3 * A;              \
        for (j = 0; j < M; j++) {                                                        \
            o0[j] = base[0] + ww[j];                                                     \
            o1[j] = base[1] + ww[j];                                                     \
            o2[j] = base[2] + ww[j];                                                     \
            o3[j] = base[3] + ww[j];                                                     \
        }                                                                                \
        for (; i + 4 <= A; i += 4) {                                                     \
            const T *MLSOM_RESTRICT w0 = Ws + i * M;                                     \
            const T *MLSOM_RESTRICT w1 = w0 + M;                                         \
            const T *MLSOM_RESTRICT w2 = w1 + M;                                         \
            const T *MLSOM_RESTRICT w3 = w2 + M;                                         \
            const T a0 = p0[i], a1 = p0[i + 1], a2 = p0[i + 2], a3 = p0[i + 3];          \
            const T b0 = p1[i], b1 = p1[i + 1], b2 = p1[i + 2], b3 = p1[i + 3];          \
            const T c0 = p2[i], c1 = p2[i + 1], c2 = p2[i + 2], c3 = p2[i + 3];          \
            const T d0 = p3[i], d1 = p3[i + 1], d2 = p3[i + 2], d3 = p3[i + 3];          \
            for (j = 0; j < M; j++) {                                                    \
                const T v0 = w0[j], v1 = w1[j], v2 = w2[j], v3 = w3[j];                  \
                o0[j] = o0[j] + ((a0 * v0 + a1 * v1) + (a2 * v2 + a3 * v3));            \
                o1[j] = o1[j] + ((b0 * v0 + b1 * v1) + (b2 * v2 + b3 * v3));            \
                o2[j] = o2[j] + ((c0 * v0 + c1 * v1) + (c2 * v2 + c3 * v3));            \
                o3[j] = o3[j] + ((d0 * v0 + d1 * v1) + (d2 * v2 + d3 * v3));            \
            }                                                                            \
        }                                                                                \
        for (; i < A; i++) {                                                             \
            const T *MLSOM_RESTRICT w0 = Ws + i * M;                                     \
            const T a0 = p0[i], b0 = p1[i], c0 = p2[i], d0 = p3[i];                      \
            for (j = 0; j < M; j++) {                                                    \
                o0[j] = o0[j] + a0 * w0[j];                                              \
                o1[j] = o1[j] + b0 * w0[j];                                              \
                o2[j] = o2[j] + c0 * w0[j];                                              \
                o3[j] = o3[j] + d0 * w0[j];                                              \
            }                                                                            \
        }                                                                                \
    }

/* the first index of the smallest of g[0:n] (*idx), that value (*m1) and the smallest of the
 * others (*m2; equal to *m1 when the minimum is not unique, +inf when n = 1) */
static void mlsom_min2_f(const float *MLSOM_RESTRICT g, Py_ssize_t n, int32_t *idx,
                         float *m1, float *m2)
{
    float a = INFINITY, b = INFINITY;
    Py_ssize_t j, ia = 0;
    for (j = 0; j < n; j++) {
        const float v = g[j];
        if (v < a) {
            b = a;
            a = v;
            ia = j;
        } else if (v < b) {
            b = v;
        }
    }
    *idx = (int32_t)ia;
    *m1 = a;
    *m2 = b;
}

#ifdef MLSOM_X86_DISPATCH
/* ---------------------------------------------------------------------------- hand-written, AVX2 */
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

/* ------------------------------------------------------------------------- hand-written, AVX-512F */
/* Four-row screening as a matrix-product kernel: a register tile of 4 rows x 2 vectors of
 * neurons accumulates every feature with fused multiply-adds before it is stored, so each weight
 * is loaded once per four rows and the partial sums never leave the registers. */
__attribute__((target("avx512f"))) static void mlsom_screen4_f_avx512_tile
    MLSOM_SCREEN4_ARGS(float)
{
    const float *p0 = x2, *p1 = x2 + A, *p2 = x2 + 2 * A, *p3 = x2 + 3 * A;
    const float *pr[4] = {p0, p1, p2, p3};
    Py_ssize_t i, j0 = 0, q;
    for (; j0 + 32 <= M; j0 += 32) {
        /* named accumulators: the compiler keeps all eight in registers */
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
        __m512 c0 = _mm512_setzero_ps(), c1 = _mm512_setzero_ps();
        __m512 d0 = _mm512_setzero_ps(), d1 = _mm512_setzero_ps();
        const float *w = Ws + j0;
        for (i = 0; i < A; i++, w += M) {
            const __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
            const __m512 xa = _mm512_set1_ps(p0[i]), xb = _mm512_set1_ps(p1[i]);
            const __m512 xc = _mm512_set1_ps(p2[i]), xd = _mm512_set1_ps(p3[i]);
            a0 = _mm512_fmadd_ps(xa, w0, a0);
            a1 = _mm512_fmadd_ps(xa, w1, a1);
            b0 = _mm512_fmadd_ps(xb, w0, b0);
            b1 = _mm512_fmadd_ps(xb, w1, b1);
            c0 = _mm512_fmadd_ps(xc, w0, c0);
            c1 = _mm512_fmadd_ps(xc, w1, c1);
            d0 = _mm512_fmadd_ps(xd, w0, d0);
            d1 = _mm512_fmadd_ps(xd, w1, d1);
        }
        {
            const __m512 acc[8] = {a0, a1, b0, b1, c0, c1, d0, d1};
            const __m512 v0 = _mm512_loadu_ps(ww + j0), v1 = _mm512_loadu_ps(ww + j0 + 16);
            for (q = 0; q < 4; q++) {
                const __m512 bq = _mm512_set1_ps(base[q]);
                const __m512 o0 = _mm512_add_ps(_mm512_add_ps(bq, v0), acc[2 * q]);
                const __m512 o1 = _mm512_add_ps(_mm512_add_ps(bq, v1), acc[2 * q + 1]);
                _mm512_storeu_ps(out + q * M + j0, o0);
                _mm512_storeu_ps(out + q * M + j0 + 16, o1);
            }
        }
    }
    for (; j0 < M; j0 += 16) {
        const __mmask16 m = mlsom_mask16(M - j0);
        __m512 acc[4];
        const float *w = Ws + j0;
        for (q = 0; q < 4; q++) acc[q] = _mm512_setzero_ps();
        for (i = 0; i < A; i++, w += M) {
            const __m512 w0 = _mm512_maskz_loadu_ps(m, w);
            for (q = 0; q < 4; q++) acc[q] = _mm512_fmadd_ps(_mm512_set1_ps(pr[q][i]), w0, acc[q]);
        }
        {
            const __m512 v0 = _mm512_maskz_loadu_ps(m, ww + j0);
            for (q = 0; q < 4; q++) {
                const __m512 o = _mm512_add_ps(_mm512_add_ps(_mm512_set1_ps(base[q]), v0), acc[q]);
                _mm512_mask_storeu_ps(out + q * M + j0, m, o);
            }
        }
    }
}

/* Screening of 64 rows in the transposed orientation: the lanes are 16 rows, a register tile of
 * 4 row vectors x 4 neurons accumulates every feature (4 loads of rows and 4 broadcast weights
 * per 16 fused multiply-adds), so no lane idles whatever the number of neurons. The rows come
 * blocked, xb[q][i][r] = -2 x'_{16q + r, i} (q < 4, i < A, r < 16), and the values go out
 * transposed, gt[j * 64 + row]. Each value is (base + ww[j]) + sum_i in feature order, the same
 * operations in the same order as mlsom_screen4_f_avx512_tile, so the values are bit-identical to it.
 * Every row's smallest value (m1), its first index (idx) and the smallest of the others (m2,
 * equal to m1 when the minimum is not unique) are tracked lane-wise, neuron by neuron.
 * The tile, for neurons j0 .. j0 + NJ - 1: DST(j, q) is where neuron j's values for rows
 * 16 q .. 16 q + 15 go, MORE(q, o) anything else done with them. */
#define MLSOM_T64_GROUP(NJ, DST, MORE)                                                   \
    do {                                                                                 \
        __m512 acc[4][NJ];                                                               \
        const float *w = Ws + j0;                                                        \
        const float *xr = xb;                                                            \
        int q_, k_;                                                                      \
        for (q_ = 0; q_ < 4; q_++)                                                       \
            for (k_ = 0; k_ < NJ; k_++) acc[q_][k_] = _mm512_setzero_ps();               \
        for (i = 0; i < A; i++, w += M, xr += 16) {                                      \
            const __m512 x0 = _mm512_loadu_ps(xr), x1 = _mm512_loadu_ps(xr + 16 * A);    \
            const __m512 x2_ = _mm512_loadu_ps(xr + 32 * A),                             \
                         x3 = _mm512_loadu_ps(xr + 48 * A);                              \
            for (k_ = 0; k_ < NJ; k_++) {                                                \
                const __m512 wk = _mm512_set1_ps(w[k_]);                                 \
                acc[0][k_] = _mm512_fmadd_ps(x0, wk, acc[0][k_]);                        \
                acc[1][k_] = _mm512_fmadd_ps(x1, wk, acc[1][k_]);                        \
                acc[2][k_] = _mm512_fmadd_ps(x2_, wk, acc[2][k_]);                       \
                acc[3][k_] = _mm512_fmadd_ps(x3, wk, acc[3][k_]);                        \
            }                                                                            \
        }                                                                                \
        for (k_ = 0; k_ < NJ; k_++) {                                                    \
            const __m512 wv = _mm512_set1_ps(ww[j0 + k_]);                               \
            const __m512i jv = _mm512_set1_epi32((int)(j0 + k_));                        \
            for (q_ = 0; q_ < 4; q_++) {                                                 \
                const __m512 o = _mm512_add_ps(_mm512_add_ps(bv[q_], wv), acc[q_][k_]);  \
                const __mmask16 lt_ = _mm512_cmp_ps_mask(o, t1[q_], _CMP_LT_OQ);         \
                _mm512_storeu_ps(DST(j0 + k_, q_), o);                                   \
                MORE(q_, o);                                                             \
                t2[q_] = _mm512_min_ps(t2[q_], _mm512_max_ps(o, t1[q_]));                \
                t1[q_] = _mm512_mask_mov_ps(t1[q_], lt_, o);                             \
                ti[q_] = _mm512_mask_mov_epi32(ti[q_], lt_, jv);                         \
            }                                                                            \
        }                                                                            \
    } while (0)
/* where the 64-row kernel puts the value of neuron j for row block q, and what else it does */
#define MLSOM_T64_ROWS(j, q) (gt + (j) * 64 + 16 * (q))
#define MLSOM_T64_NOTHING(q, o) ((void)0)

__attribute__((target("avx512f"))) static void mlsom_screen64min_f_avx512 MLSOM_SCREEN64MIN_ARGS
{
    __m512 t1[4], t2[4], bv[4];
    __m512i ti[4];
    Py_ssize_t i, j0 = 0;
    int q;
    for (q = 0; q < 4; q++) {
        t1[q] = _mm512_set1_ps(INFINITY);
        t2[q] = _mm512_set1_ps(INFINITY);
        ti[q] = _mm512_setzero_si512();
        bv[q] = _mm512_loadu_ps(base + 16 * q);
    }
    for (; j0 + 4 <= M; j0 += 4) MLSOM_T64_GROUP(4, MLSOM_T64_ROWS, MLSOM_T64_NOTHING);
    for (; j0 < M; j0 += 1) MLSOM_T64_GROUP(1, MLSOM_T64_ROWS, MLSOM_T64_NOTHING);
    for (q = 0; q < 4; q++) {
        _mm512_storeu_ps(m1 + 16 * q, t1[q]);
        _mm512_storeu_ps(m2 + 16 * q, t2[q]);
        _mm512_storeu_si512((void *)(idx + 16 * q), ti[q]);
    }
}

/* Frozen scoring's screening of 64 rows (the rows blocked as for mlsom_screen64min_f, the same
 * operations in the same order, so the same values) into four groups of 16 (the layout of the
 * 16-row ranking, _kernels_lanes.h), gt[(16 M) q + 16 j + l] for row 16 q + l, and per map c
 * and row: the smallest value (m1[64 c + row]), its first index (i1) and the smallest of the
 * others (m2, equal to m1 when the minimum is not unique), and the largest value of the row
 * (hi[row]). The tile of mlsom_screen64min_f, other places and one more maximum. */
#define MLSOM_T64_GROUPS(j, q) (gt + 16 * M * (q) + 16 * (j))
#define MLSOM_T64_MAX(q, o) (mx[q] = _mm512_max_ps(mx[q], o))

__attribute__((target("avx512f"))) static void mlsom_screen64maps_f_avx512 MLSOM_SCREEN64MAPS_ARGS
{
    __m512 t1[4], t2[4], bv[4], mx[4];
    __m512i ti[4];
    Py_ssize_t i, j0, c;
    int q;
    for (q = 0; q < 4; q++) {
        bv[q] = _mm512_loadu_ps(base + 16 * q);
        mx[q] = _mm512_set1_ps(-INFINITY);
    }
    for (c = 0; c < L; c++) {
        for (q = 0; q < 4; q++) {
            t1[q] = _mm512_set1_ps(INFINITY);
            t2[q] = _mm512_set1_ps(INFINITY);
            ti[q] = _mm512_set1_epi32((int)off[c]);
        }
        for (j0 = off[c]; j0 + 4 <= off[c + 1]; j0 += 4)
            MLSOM_T64_GROUP(4, MLSOM_T64_GROUPS, MLSOM_T64_MAX);
        for (; j0 < off[c + 1]; j0 += 1) MLSOM_T64_GROUP(1, MLSOM_T64_GROUPS, MLSOM_T64_MAX);
        for (q = 0; q < 4; q++) {
            _mm512_storeu_ps(m1 + 64 * c + 16 * q, t1[q]);
            _mm512_storeu_ps(m2 + 64 * c + 16 * q, t2[q]);
            _mm512_storeu_si512((void *)(i1 + 64 * c + 16 * q), ti[q]);
        }
    }
    for (q = 0; q < 4; q++) _mm512_storeu_ps(hi + 16 * q, mx[q]);
}
#undef MLSOM_T64_GROUP
#undef MLSOM_T64_ROWS
#undef MLSOM_T64_NOTHING
#undef MLSOM_T64_GROUPS
#undef MLSOM_T64_MAX

/* -------------------------------------------------------------- hand-written, AVX2: 64 rows */
/* Screening of 64 rows, as mlsom_screen64maps_f_avx512 (same inputs, outputs and values): a
 * register tile of 32 rows (four 8-lane vectors) x 3 neurons, for the two halves of the 64 rows
 * in turn (the neurons' weights still in the first level cache for the second), the per-map
 * smallest two and the row maxima kept lane-wise in memory between neurons.
 *
 * The twelve accumulators are named variables, not an array: GCC kept an array indexed in the
 * per-neuron loop below in memory and stored all twelve on every feature, which halved the
 * tile's multiply-add rate (benchmarks/screen_tile.c measures it). */
/* One neuron's values for 8 rows (r_ = 4 s + b_ of the 64): stored at dst, kept in the row
 * maxima (mx, NULL for none) and in the smallest two with the first index of the smallest. */
__attribute__((target("avx2"))) static inline void mlsom_t32_keep(
    __m256 a, Py_ssize_t j_, int r_, float *MLSOM_RESTRICT dst, const float *MLSOM_RESTRICT ww,
    const __m256 *bv, __m256 *mx, __m256 *t1, __m256 *t2, __m256i *ti)
{
    const __m256 o = _mm256_add_ps(_mm256_add_ps(bv[r_], _mm256_broadcast_ss(ww + j_)), a);
    const __m256i lt_ = MLSOM_AVX2_LT(o, t1[r_]);
    _mm256_storeu_ps(dst, o);
    if (mx) mx[r_] = _mm256_max_ps(mx[r_], o);
    t2[r_] = _mm256_min_ps(t2[r_], _mm256_max_ps(o, t1[r_]));
    t1[r_] = MLSOM_AVX2_BLEND(t1[r_], o, lt_);
    ti[r_] = MLSOM_AVX2_BLENDI(ti[r_], _mm256_set1_epi32((int)j_), lt_);
}

#define MLSOM_T32_FMA(k)                                                                 \
    do {                                                                                 \
        const __m256 wk = _mm256_broadcast_ss(w + (k));                                  \
        a0##k = _mm256_fmadd_ps(x0, wk, a0##k);                                          \
        a1##k = _mm256_fmadd_ps(x1, wk, a1##k);                                          \
        a2##k = _mm256_fmadd_ps(x2_, wk, a2##k);                                         \
        a3##k = _mm256_fmadd_ps(x3, wk, a3##k);                                          \
    } while (0)
/* neuron j0 + k's values for the 32 rows of half s, stored at DST(j, s, b) for 8 rows b */
#define MLSOM_T32_KEEP1(a, k, b_, DST, MX)                                               \
    mlsom_t32_keep(a, j0 + (k), 4 * s + (b_), DST(j0 + (k), s, b_), ww, bv, MX, t1, t2, ti)
#define MLSOM_T32_KEEP(k, DST, MX)                                                       \
    do {                                                                                 \
        MLSOM_T32_KEEP1(a0##k, k, 0, DST, MX);                                           \
        MLSOM_T32_KEEP1(a1##k, k, 1, DST, MX);                                           \
        MLSOM_T32_KEEP1(a2##k, k, 2, DST, MX);                                           \
        MLSOM_T32_KEEP1(a3##k, k, 3, DST, MX);                                           \
    } while (0)
/* one pass over the features for the 32 rows of half s and the neurons j0 .. j0 + NJ - 1 */
#define MLSOM_T32_PASS(FMAS)                                                             \
    do {                                                                                 \
        const float *w = Ws + j0;                                                        \
        const float *xr = xb + 32 * A * s;                                               \
        for (i = 0; i < A; i++, w += M, xr += 16) {                                      \
            const __m256 x0 = _mm256_loadu_ps(xr), x1 = _mm256_loadu_ps(xr + 8);         \
            const __m256 x2_ = _mm256_loadu_ps(xr + 16 * A),                             \
                         x3 = _mm256_loadu_ps(xr + 16 * A + 8);                          \
            FMAS;                                                                        \
        }                                                                                \
    } while (0)
#define MLSOM_T32_ZERO(k)                                                                \
    __m256 a0##k = _mm256_setzero_ps(), a1##k = _mm256_setzero_ps(),                     \
           a2##k = _mm256_setzero_ps(), a3##k = _mm256_setzero_ps()
/* the neurons j0 = START .. END - 1, three at a time then one, each for the two halves of the
 * 64 rows in turn (the neurons' weights still in the first level cache for the second) */
#define MLSOM_T32_NEURONS(START, END, DST, MX)                                           \
    do {                                                                                 \
        for (j0 = (START); j0 + 3 <= (END); j0 += 3)                                     \
            for (s = 0; s < 2; s++) {                                                    \
                MLSOM_T32_ZERO(0);                                                       \
                MLSOM_T32_ZERO(1);                                                       \
                MLSOM_T32_ZERO(2);                                                       \
                MLSOM_T32_PASS(MLSOM_T32_FMA(0); MLSOM_T32_FMA(1); MLSOM_T32_FMA(2));    \
                MLSOM_T32_KEEP(0, DST, MX);                                              \
                MLSOM_T32_KEEP(1, DST, MX);                                              \
                MLSOM_T32_KEEP(2, DST, MX);                                              \
            }                                                                            \
        for (; j0 < (END); j0 += 1)                                                      \
            for (s = 0; s < 2; s++) {                                                    \
                MLSOM_T32_ZERO(0);                                                       \
                MLSOM_T32_PASS(MLSOM_T32_FMA(0));                                        \
                MLSOM_T32_KEEP(0, DST, MX);                                              \
            }                                                                            \
    } while (0)
/* where predict (16-row groups, gt[16 M q + 16 j + l]) and training (gt[64 j + row]) keep a
 * neuron's values for rows 8 (4 s + b) .. + 7 */
#define MLSOM_T32_GROUPS(j, s, b) (gt + 16 * M * (2 * (s) + (b) / 2) + 16 * (j) + 8 * ((b) % 2))
#define MLSOM_T32_ROWS(j, s, b) (gt + 64 * (j) + 8 * (4 * (s) + (b)))

__attribute__((target("avx2,fma"))) static void mlsom_screen64maps_f_avx2 MLSOM_SCREEN64MAPS_ARGS
{
    __m256 t1[8], t2[8], bv[8], mx[8];
    __m256i ti[8];
    Py_ssize_t i, j0, c;
    int s, b;
    for (b = 0; b < 8; b++) {
        bv[b] = _mm256_loadu_ps(base + 8 * b);
        mx[b] = _mm256_set1_ps(-INFINITY);
    }
    for (c = 0; c < L; c++) {
        for (b = 0; b < 8; b++) {
            t1[b] = _mm256_set1_ps(INFINITY);
            t2[b] = _mm256_set1_ps(INFINITY);
            ti[b] = _mm256_set1_epi32((int)off[c]);
        }
        MLSOM_T32_NEURONS(off[c], off[c + 1], MLSOM_T32_GROUPS, mx);
        for (b = 0; b < 8; b++) {
            _mm256_storeu_ps(m1 + 64 * c + 8 * b, t1[b]);
            _mm256_storeu_ps(m2 + 64 * c + 8 * b, t2[b]);
            _mm256_storeu_si256((__m256i *)(i1 + 64 * c + 8 * b), ti[b]);
        }
    }
    for (b = 0; b < 8; b++) _mm256_storeu_ps(hi + 8 * b, mx[b]);
}

/* Training's screening of 64 rows, as mlsom_screen64min_f_avx512 (same inputs, outputs and
 * values: the values bit-identical to the AVX2 four-row tile's), with the tile of
 * mlsom_screen64maps_f_avx2 in training's layout and without the row maxima. */
__attribute__((target("avx2,fma"))) static void mlsom_screen64min_f_avx2 MLSOM_SCREEN64MIN_ARGS
{
    __m256 t1[8], t2[8], bv[8];
    __m256i ti[8];
    Py_ssize_t i, j0;
    int s, b;
    for (b = 0; b < 8; b++) {
        bv[b] = _mm256_loadu_ps(base + 8 * b);
        t1[b] = _mm256_set1_ps(INFINITY);
        t2[b] = _mm256_set1_ps(INFINITY);
        ti[b] = _mm256_setzero_si256();
    }
    MLSOM_T32_NEURONS(0, M, MLSOM_T32_ROWS, NULL);
    for (b = 0; b < 8; b++) {
        _mm256_storeu_ps(m1 + 8 * b, t1[b]);
        _mm256_storeu_ps(m2 + 8 * b, t2[b]);
        _mm256_storeu_si256((__m256i *)(idx + 8 * b), ti[b]);
    }
}
#undef MLSOM_T32_FMA
#undef MLSOM_T32_KEEP
#undef MLSOM_T32_KEEP1
#undef MLSOM_T32_PASS
#undef MLSOM_T32_ZERO
#undef MLSOM_T32_NEURONS
#undef MLSOM_T32_GROUPS
#undef MLSOM_T32_ROWS
#endif /* MLSOM_X86_DISPATCH */

#endif /* MLSOM_KERNELS_SCREEN_H */
