/* Guards' distances (_core_classify.pxi, _vetoed; _core_stream.pxi, _add_prototype): the row of
 * G nearest x among those strictly nearer than *bound (n rows of A values, row u at G + u A),
 * by exact squared distances in the model's type with the sums of _sqdist_col
 * (_core_distances.pxi) in its order: feature i of the first 8 floor(A / 8) into partial sum
 * i mod 8, the eight sums added pairwise, then the remaining features one by one. Returns its
 * index (the first on a tie) and lowers *bound to its distance, or returns -1; first: stop at
 * the first row strictly nearer than *bound.
 *
 * With GCC and clang the eight partial sums of a row are the lanes of one vector (vector
 * extensions), four rows at a time: four independent chains of additions, where a row alone
 * would wait on each of its additions (on the benchmark's stream, L = 7, A = 128, 16 guards a
 * label, the labelled update took 2.04 online steps with one row at a time, 1.9 with four).
 * Nothing re-associates, so no -ffast-math, and every path gives the bits of _sqdist_col.
 * Included by _kernels.h (compiled once per path by MLSOM_DEFINE_PATH). */
#ifndef MLSOM_KERNELS_GUARDS_H
#define MLSOM_KERNELS_GUARDS_H

#define MLSOM_NEAREST_BELOW_ARGS(T)                                                         \
    (const T *MLSOM_RESTRICT x, const T *MLSOM_RESTRICT G, Py_ssize_t A, Py_ssize_t n,      \
     double *MLSOM_RESTRICT bound, int first)
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
typedef double mlsom_v8d __attribute__((vector_size(64)));
typedef float mlsom_v8f __attribute__((vector_size(32)));
#define MLSOM_LOAD8(V, p)                                                                   \
    ({                                                                                      \
        V v_;                                                                               \
        memcpy(&v_, (p), sizeof(v_));                                                       \
        v_;                                                                                 \
    })
#define MLSOM_NEAREST_BELOW_FOUR(T, V)                                                      \
    for (; u + 4 <= n; u += 4) {                                                            \
        const T *g0 = G + u * A, *g1 = g0 + A, *g2 = g1 + A, *g3 = g2 + A;                  \
        V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                                           \
        for (Py_ssize_t i = 0; i < a8; i += 8) {                                            \
            const V xv = MLSOM_LOAD8(V, x + i);                                             \
            const V t0 = xv - MLSOM_LOAD8(V, g0 + i), t1 = xv - MLSOM_LOAD8(V, g1 + i);     \
            const V t2 = xv - MLSOM_LOAD8(V, g2 + i), t3 = xv - MLSOM_LOAD8(V, g3 + i);     \
            s0 = s0 + t0 * t0;                                                              \
            s1 = s1 + t1 * t1;                                                              \
            s2 = s2 + t2 * t2;                                                              \
            s3 = s3 + t3 * t3;                                                              \
        }                                                                                   \
        T r[4] = {MLSOM_PAIRWISE8(s0), MLSOM_PAIRWISE8(s1), MLSOM_PAIRWISE8(s2),            \
                  MLSOM_PAIRWISE8(s3)};                                                     \
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
#else
#define MLSOM_NEAREST_BELOW_FOUR(T, V)
#endif
#define MLSOM_NEAREST_BELOW_BODY(T, V)                                                      \
    {                                                                                       \
        const Py_ssize_t a8 = A - A % 8;                                                    \
        Py_ssize_t best = -1, u = 0;                                                        \
        double b = *bound;                                                                  \
        MLSOM_NEAREST_BELOW_FOUR(T, V)                                                      \
        for (; u < n; u++)                                                                  \
            MLSOM_NEAREST_BELOW_ONE(T)                                                      \
    done:                                                                                   \
        *bound = b;                                                                         \
        return best;                                                                        \
    }

typedef Py_ssize_t (*mlsom_nearest_below_d_fn) MLSOM_NEAREST_BELOW_ARGS(double);
typedef Py_ssize_t (*mlsom_nearest_below_f_fn) MLSOM_NEAREST_BELOW_ARGS(float);

#endif
