/* The robust variant's neighbour moves (_core_stream.pxi, _drift_step): the n neurons of a map
 * but one (skip, its winner, already moved), contiguous columns of the transposed weights wt
 * (A rows of stride M), moved towards x by each one's own step f[u], feature row by feature
 * row, with the screening copy Ws (centred on cc), its squared norms nr and the look-ahead
 * products g0..g2 with the npend (at most 3) centred instances still to come (xp, rows of A)
 * following. Every neuron's sums run over the features in order, as _move_neuron makes them:
 * the same bits on every path. Each lane is one neuron; nothing
 * re-associates, so the compiler vectorises the loop without -ffast-math. The plain-C body,
 * compiled once per path by MLSOM_DEFINE_PATH (_kernels.h).
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_MOVES_H
#define MLSOM_KERNELS_MOVES_H

#include "_kernels_common.h"

/* one neuron u of the row: its move, screening copy, norm and look-ahead products */
#define MLSOM_MOVE_ONE(T)                                                                   \
    {                                                                                       \
        T v = row[u];                                                                       \
        v = v + (T)f[u] * (xi - v);                                                         \
        row[u] = v;                                                                         \
        float ws = (float)((double)v - ci);                                                 \
        wsr[u] = ws;                                                                        \
        nr[u] = nr[u] + ws * ws;                                                            \
        g0[u] = g0[u] + x0 * ws;                                                            \
        g1[u] = g1[u] + x1 * ws;                                                            \
        g2[u] = g2[u] + x2 * ws;                                                            \
    }
#define MLSOM_MOVE_MAP_BODY(T)                                                              \
    {                                                                                       \
        for (Py_ssize_t i = 0; i < A; i++) {                                                \
            T *row = wt + i * M;                                                            \
            float *wsr = Ws + i * M;                                                        \
            const T xi = x[i];                                                              \
            const double ci = cc[i];                                                        \
            const float x0 = npend > 0 ? xp[i] : 0.0f;                                      \
            const float x1 = npend > 1 ? xp[A + i] : 0.0f;                                  \
            const float x2 = npend > 2 ? xp[2 * A + i] : 0.0f;                              \
            Py_ssize_t u;                                                                   \
            for (u = 0; u < skip; u++) MLSOM_MOVE_ONE(T)                                    \
            for (u = skip + 1; u < n; u++) MLSOM_MOVE_ONE(T)                                \
        }                                                                                   \
    }

#endif /* MLSOM_KERNELS_MOVES_H */
