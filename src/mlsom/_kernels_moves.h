/* The robust variant's neighbour moves (_core_stream.pxi, _drift_step): one feature row of a
 * map's neurons, contiguous in the transposed weights, moved towards the instance's value xi by
 * each neuron's own step f[u], with the screening copy (centred on ci), its squared norms nr and
 * the look-ahead products g0..g2 with the (up to three) centred instances still to come (x0..x2)
 * following. Every neuron's sums run over the features in order, one row per call, as
 * _move_neuron makes them: the same bits on every path. Each lane is one neuron; nothing
 * re-associates, so the compiler vectorises the loop without -ffast-math. Included by
 * _kernels.h (compiled once per path by MLSOM_DEFINE_PATH). */
#ifndef MLSOM_KERNELS_MOVES_H
#define MLSOM_KERNELS_MOVES_H

#define MLSOM_MOVE_ROW_ARGS(T)                                                              \
    (T *MLSOM_RESTRICT row, float *MLSOM_RESTRICT wsr, const double *MLSOM_RESTRICT f,      \
     float *MLSOM_RESTRICT nr, float *MLSOM_RESTRICT g0, float *MLSOM_RESTRICT g1,          \
     float *MLSOM_RESTRICT g2, Py_ssize_t n, T xi, double ci, float x0, float x1, float x2)
#define MLSOM_MOVE_ROW_BODY(T)                                                              \
    {                                                                                       \
        for (Py_ssize_t u = 0; u < n; u++) {                                                \
            T v = row[u];                                                                   \
            v = v + (T)f[u] * (xi - v);                                                     \
            row[u] = v;                                                                     \
            float ws = (float)((double)v - ci);                                             \
            wsr[u] = ws;                                                                    \
            nr[u] = nr[u] + ws * ws;                                                        \
            g0[u] = g0[u] + x0 * ws;                                                        \
            g1[u] = g1[u] + x1 * ws;                                                        \
            g2[u] = g2[u] + x2 * ws;                                                        \
        }                                                                                   \
    }

typedef void (*mlsom_move_row_d_fn) MLSOM_MOVE_ROW_ARGS(double);
typedef void (*mlsom_move_row_f_fn) MLSOM_MOVE_ROW_ARGS(float);

#endif
