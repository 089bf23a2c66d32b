/* Guards' distances (_core_classify.pxi, _vetoed; _core_stream.pxi, _add_prototype): the row of
 * G nearest x among those strictly nearer than *bound (n rows of A values, row u at G + u A),
 * by exact squared distances in the model's type with the sums of _sqdist_col
 * (_core_distances.pxi) in its order: feature i of the first 8 floor(A / 8) into partial sum
 * i mod 8, the eight sums added pairwise, then the remaining features one by one. Returns its
 * index (the first on a tie) and lowers *bound to its distance, or returns -1; first: stop at
 * the first row strictly nearer than *bound.
 *
 * With GCC and clang the eight partial sums of a row are the lanes of vectors of the path's
 * width (vector extensions), four rows at a time: four independent chains of additions, where a
 * row alone would wait on each of its additions. On the benchmark's stream (L = 7, A = 128, 16
 * guards a label; benchmarks/ab_labels.py, one process) the labelled update took 1.96 online
 * steps with one row at a time and 1.88 with four (float64; float32 2.97 and 1.81); vectors
 * wider than the path (eight doubles on AVX2) were kept in memory by the compiler, and the path's
 * own width took the AVX2 path from 1.90 to 1.59 steps (float64, bench_labels.py --simd avx2).
 * Nothing re-associates, so no -ffast-math, and every path gives the bits of _sqdist_col. The
 * plain-C body, compiled once per path by MLSOM_DEFINE_PATH (_kernels.h) with that path's
 * vectors (MLSOM_GV_*).
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_GUARDS_H
#define MLSOM_KERNELS_GUARDS_H

#include "_kernels_common.h"

#define MLSOM_PAIRWISE8(s)                                                                  \
    (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])))
/* row u's distance r, taken if strictly below b */
#define MLSOM_NEAREST_BELOW_TAKE(r, u)                                                      \
    if ((double)(r) < b) {                                                                  \
        b = (double)(r);                                                                    \
        best = (u);                                                                         \
        if (first)                                                                          \
            goto done;                                                                      \
    }
#define MLSOM_NEAREST_BELOW_ONE(T)                                                          \
    {                                                                                       \
        const T *g = G + u * A;                                                             \
        T s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                  \
        for (Py_ssize_t i = 0; i < a8; i += 8) {                                            \
            for (int k = 0; k < 8; k++) {                                                   \
                const T t = x[i + k] - g[i + k];                                            \
                s[k] = s[k] + t * t;                                                        \
            }                                                                               \
        }                                                                                   \
        T r = MLSOM_PAIRWISE8(s);                                                           \
        for (Py_ssize_t j = a8; j < A; j++) {                                               \
            const T t = x[j] - g[j];                                                        \
            r = r + t * t;                                                                  \
        }                                                                                   \
        MLSOM_NEAREST_BELOW_TAKE(r, u)                                                      \
    }
#if defined(__GNUC__) || defined(__clang__)
/* A row's eight partial sums as NV vectors of 8 / NV lanes each, the path's own width
 * (MLSOM_GV_* below): wider vectors than the path has are kept in memory
 * by the compiler, which costs more than the four chains save. */
typedef double mlsom_v8d __attribute__((vector_size(64)));
typedef double mlsom_v4d __attribute__((vector_size(32)));
typedef double mlsom_v2d __attribute__((vector_size(16)));
typedef float mlsom_v8f __attribute__((vector_size(32)));
typedef float mlsom_v4f __attribute__((vector_size(16)));
#define MLSOM_LOADV(V, p)                                                                   \
    ({                                                                                      \
        V v_;                                                                               \
        memcpy(&v_, (p), sizeof(v_));                                                       \
        v_;                                                                                 \
    })
#define MLSOM_NEAREST_BELOW_FOUR(T, V, NV)                                                  \
    for (; u + 4 <= n; u += 4) {                                                            \
        const T *g0 = G + u * A, *g1 = g0 + A, *g2 = g1 + A, *g3 = g2 + A;                  \
        V s0[NV], s1[NV], s2[NV], s3[NV];                                                   \
        for (int p = 0; p < NV; p++) {                                                      \
            s0[p] = (V){0};                                                                 \
            s1[p] = (V){0};                                                                 \
            s2[p] = (V){0};                                                                 \
            s3[p] = (V){0};                                                                 \
        }                                                                                   \
        for (Py_ssize_t i = 0; i < a8; i += 8) {                                            \
            for (int p = 0; p < NV; p++) {                                                  \
                const Py_ssize_t o = i + p * (8 / NV);                                      \
                const V xv = MLSOM_LOADV(V, x + o);                                         \
                const V t0 = xv - MLSOM_LOADV(V, g0 + o);                                   \
                s0[p] = s0[p] + t0 * t0;                                                    \
                const V t1 = xv - MLSOM_LOADV(V, g1 + o);                                   \
                s1[p] = s1[p] + t1 * t1;                                                    \
                const V t2 = xv - MLSOM_LOADV(V, g2 + o);                                   \
                s2[p] = s2[p] + t2 * t2;                                                    \
                const V t3 = xv - MLSOM_LOADV(V, g3 + o);                                   \
                s3[p] = s3[p] + t3 * t3;                                                    \
            }                                                                               \
        }                                                                                   \
        T l0[8], l1[8], l2[8], l3[8];                                                       \
        memcpy(l0, s0, sizeof(l0));                                                         \
        memcpy(l1, s1, sizeof(l1));                                                         \
        memcpy(l2, s2, sizeof(l2));                                                         \
        memcpy(l3, s3, sizeof(l3));                                                         \
        T r[4] = {MLSOM_PAIRWISE8(l0), MLSOM_PAIRWISE8(l1), MLSOM_PAIRWISE8(l2),            \
                  MLSOM_PAIRWISE8(l3)};                                                     \
        for (Py_ssize_t j = a8; j < A; j++) {                                               \
            const T xv = x[j];                                                              \
            const T t0 = xv - g0[j], t1 = xv - g1[j], t2 = xv - g2[j], t3 = xv - g3[j];     \
            r[0] = r[0] + t0 * t0;                                                          \
            r[1] = r[1] + t1 * t1;                                                          \
            r[2] = r[2] + t2 * t2;                                                          \
            r[3] = r[3] + t3 * t3;                                                          \
        }                                                                                   \
        for (int q = 0; q < 4; q++)                                                         \
            MLSOM_NEAREST_BELOW_TAKE(r[q], u + q)                                           \
    }
/* (vector type, vectors per row) of each path */
#define MLSOM_GV_D_base mlsom_v2d, 4
#define MLSOM_GV_D_avx2 mlsom_v4d, 2
#define MLSOM_GV_D_avx512 mlsom_v8d, 1
#define MLSOM_GV_F_base mlsom_v4f, 2
#define MLSOM_GV_F_avx2 mlsom_v8f, 1
#define MLSOM_GV_F_avx512 mlsom_v8f, 1
#else
#define MLSOM_NEAREST_BELOW_FOUR(T, V, NV)
#define MLSOM_GV_D_base 0, 0
#define MLSOM_GV_D_avx2 0, 0
#define MLSOM_GV_D_avx512 0, 0
#define MLSOM_GV_F_base 0, 0
#define MLSOM_GV_F_avx2 0, 0
#define MLSOM_GV_F_avx512 0, 0
#endif
#define MLSOM_NEAREST_BELOW_BODY(T, V, NV)                                                  \
    {                                                                                       \
        const Py_ssize_t a8 = A - A % 8;                                                    \
        Py_ssize_t best = -1, u = 0;                                                        \
        double b = *bound;                                                                  \
        MLSOM_NEAREST_BELOW_FOUR(T, V, NV)                                                  \
        for (; u < n; u++)                                                                  \
            MLSOM_NEAREST_BELOW_ONE(T)                                                      \
    done:                                                                                   \
        *bound = b;                                                                         \
        return best;                                                                        \
    }
/* the body with the path's vectors (the extra level of macros expands MLSOM_GV_* first) */
#define MLSOM_NEAREST_BELOW_BODY_(...) MLSOM_NEAREST_BELOW_BODY(__VA_ARGS__)
#define MLSOM_NEAREST_BELOW_BODY_PATH(T, GV) MLSOM_NEAREST_BELOW_BODY_(T, GV)

#endif /* MLSOM_KERNELS_GUARDS_H */
