/*
 * The two hot loops of mlsom, with SIMD paths chosen at run time: squared Euclidean distances from
 * one instance to many neurons, and the row sums of the batch SOM update.
 *
 * The neurons are stored transposed (feature-major): Wt[i * M + j] is feature i of neuron j. The
 * innermost loop then runs over neurons, so every lane of a vector register accumulates the distance
 * of one neuron, feature after feature, in exactly the order of a plain scalar loop. No sum is
 * re-associated: the SIMD paths and the plain C path give bitwise identical results (the build turns
 * off fused multiply-add contraction for the same reason), and a compiler needs no -ffast-math to
 * vectorise the loop.
 *
 * On x86-64 with GCC or clang the same loop is compiled three times (baseline SSE2, AVX2, AVX-512F)
 * and the widest one the processor supports is picked once at import. Elsewhere (MSVC, ARM) the
 * baseline path is used; on ARM64 it is NEON-vectorised by the compiler.
 */
#ifndef MLSOM_KERNELS_H
#define MLSOM_KERNELS_H

#include <Python.h>
#include <stdint.h>

#if defined(_MSC_VER)
#define MLSOM_RESTRICT __restrict
#else
#define MLSOM_RESTRICT __restrict__
#endif

/* out[j] = sum_i (x[i] - Wt[i*M + j])^2 for j in [0, M); the sum runs over i in increasing order. */
#define MLSOM_SQDIST_T_BODY                                                              \
    {                                                                                    \
        Py_ssize_t i = 0, j;                                                             \
        for (j = 0; j < M; j++) out[j] = 0.0;                                            \
        for (; i + 4 <= A; i += 4) {                                                     \
            const double x0 = x[i], x1 = x[i + 1], x2 = x[i + 2], x3 = x[i + 3];         \
            const double *MLSOM_RESTRICT w0 = Wt + i * M;                                \
            const double *MLSOM_RESTRICT w1 = w0 + M;                                    \
            const double *MLSOM_RESTRICT w2 = w1 + M;                                    \
            const double *MLSOM_RESTRICT w3 = w2 + M;                                    \
            for (j = 0; j < M; j++) {                                                    \
                const double t0 = x0 - w0[j], t1 = x1 - w1[j];                           \
                const double t2 = x2 - w2[j], t3 = x3 - w3[j];                           \
                out[j] = (((out[j] + t0 * t0) + t1 * t1) + t2 * t2) + t3 * t3;           \
            }                                                                            \
        }                                                                                \
        for (; i < A; i++) {                                                             \
            const double xi = x[i];                                                      \
            const double *MLSOM_RESTRICT w0 = Wt + i * M;                                \
            for (j = 0; j < M; j++) {                                                    \
                const double t0 = xi - w0[j];                                            \
                out[j] = out[j] + t0 * t0;                                               \
            }                                                                            \
        }                                                                                \
    }

/* Batch SOM update, one block of features [a0, a1):
 * acc[u*A + a] = sum over rows i in order of h(u, bmu[i]) * X[i*A + a], where the units u taking
 * the rows of BMU v, with their weights h, are nb_unit/nb_h[nb_start[v] .. nb_start[v+1]).
 * unit_weights != 0 means every h is 1 (bubble), and the product is skipped (it is exact anyway). */
#define MLSOM_ACCUMULATE_BODY                                                            \
    {                                                                                    \
        Py_ssize_t i, t, u, a;                                                           \
        for (u = 0; u < M; u++)                                                          \
            for (a = a0; a < a1; a++) acc[u * A + a] = 0.0;                              \
        for (i = 0; i < n; i++) {                                                        \
            const double *MLSOM_RESTRICT x = X + i * A;                                  \
            const Py_ssize_t v = (Py_ssize_t)bmu[i];                                     \
            for (t = nb_start[v]; t < nb_start[v + 1]; t++) {                            \
                double *MLSOM_RESTRICT row = acc + nb_unit[t] * A;                       \
                const double h = nb_h[t];                                                \
                if (unit_weights) {                                                      \
                    for (a = a0; a < a1; a++) row[a] = row[a] + x[a];                    \
                } else {                                                                 \
                    for (a = a0; a < a1; a++) row[a] = row[a] + h * x[a];                \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }

#define MLSOM_ACCUMULATE_ARGS                                                            \
    (const double *MLSOM_RESTRICT X, Py_ssize_t n, Py_ssize_t A, const int64_t *bmu,      \
     const Py_ssize_t *nb_start, const Py_ssize_t *nb_unit, const double *nb_h,           \
     int unit_weights, Py_ssize_t M, double *MLSOM_RESTRICT acc, Py_ssize_t a0,           \
     Py_ssize_t a1)

typedef void (*mlsom_accumulate_fn) MLSOM_ACCUMULATE_ARGS;

static void mlsom_accumulate_base MLSOM_ACCUMULATE_ARGS
MLSOM_ACCUMULATE_BODY

typedef void (*mlsom_sqdist_fn)(const double *MLSOM_RESTRICT x, const double *MLSOM_RESTRICT Wt,
                                Py_ssize_t A, Py_ssize_t M, double *MLSOM_RESTRICT out);

static void mlsom_sqdist_t_base(const double *MLSOM_RESTRICT x, const double *MLSOM_RESTRICT Wt,
                                Py_ssize_t A, Py_ssize_t M, double *MLSOM_RESTRICT out)
MLSOM_SQDIST_T_BODY

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define MLSOM_X86_DISPATCH 1

__attribute__((target("avx2")))
static void mlsom_sqdist_t_avx2(const double *MLSOM_RESTRICT x, const double *MLSOM_RESTRICT Wt,
                                Py_ssize_t A, Py_ssize_t M, double *MLSOM_RESTRICT out)
MLSOM_SQDIST_T_BODY

__attribute__((target("avx512f")))
static void mlsom_sqdist_t_avx512(const double *MLSOM_RESTRICT x, const double *MLSOM_RESTRICT Wt,
                                  Py_ssize_t A, Py_ssize_t M, double *MLSOM_RESTRICT out)
MLSOM_SQDIST_T_BODY

__attribute__((target("avx2")))
static void mlsom_accumulate_avx2 MLSOM_ACCUMULATE_ARGS
MLSOM_ACCUMULATE_BODY

__attribute__((target("avx512f")))
static void mlsom_accumulate_avx512 MLSOM_ACCUMULATE_ARGS
MLSOM_ACCUMULATE_BODY
#endif

/* 0 = baseline, 1 = AVX2, 2 = AVX-512F */
static int mlsom_simd_max_level(void)
{
#ifdef MLSOM_X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2")) return 1;
#endif
    return 0;
}

static int mlsom_simd_level = 0;
static mlsom_sqdist_fn mlsom_sqdist_t = mlsom_sqdist_t_base;
static mlsom_accumulate_fn mlsom_accumulate = mlsom_accumulate_base;

/* Select a path; a level above what the processor supports is lowered. Returns the level used. */
static int mlsom_set_simd_level(int level)
{
    int top = mlsom_simd_max_level();
    if (level < 0 || level > top) level = top;
    mlsom_simd_level = level;
    mlsom_sqdist_t = mlsom_sqdist_t_base;
    mlsom_accumulate = mlsom_accumulate_base;
#ifdef MLSOM_X86_DISPATCH
    if (level == 1) {
        mlsom_sqdist_t = mlsom_sqdist_t_avx2;
        mlsom_accumulate = mlsom_accumulate_avx2;
    }
    if (level == 2) {
        mlsom_sqdist_t = mlsom_sqdist_t_avx512;
        mlsom_accumulate = mlsom_accumulate_avx512;
    }
#endif
    return level;
}

static const char *mlsom_simd_name(int level)
{
    switch (level) {
    case 1: return "avx2";
    case 2: return "avx512f";
    default:
#if defined(__aarch64__) || defined(_M_ARM64)
        return "baseline (neon)";
#elif defined(__x86_64__) || defined(_M_X64)
        return "baseline (sse2)";
#else
        return "baseline";
#endif
    }
}

static int mlsom_have_openmp(void)
{
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

#endif /* MLSOM_KERNELS_H */
