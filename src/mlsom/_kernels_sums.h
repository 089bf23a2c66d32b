/* Kernel family: the sums of the batch update (plain-C bodies, compiled once per path by
 * MLSOM_DEFINE_PATH, _kernels.h).
 *
 * Included by _kernels.h; compiles on its own (_kernels_common.h). */
#ifndef MLSOM_KERNELS_SUMS_H
#define MLSOM_KERNELS_SUMS_H

#include "_kernels_common.h"

/* ------------------------------------------------------------------------------------------------
 * batch update. The new weight of unit u is  sum_i h(u, bmu_i) x_i / sum_i h(u, bmu_i).  It is
 * computed in two steps, the rows' sums per best-matching unit v (O(n A)) and then, per unit, the
 * h-weighted sum of those (O(M^2 A)), in double-double arithmetic (error-free transformations:
 * Knuth's TwoSum, Dekker's TwoProduct; see Ogita, Rump and Oishi, "Accurate sum and dot product",
 * SIAM J. Sci. Comput. 26, 2005). A sum is thus carried to about 2^-106 of its terms' magnitude
 * and rounded once at the end: the weight is the correctly rounded mean except in cases of
 * probability ~1e-16, whatever the grouping of the rows. Units that take the same rows get
 * bit-identical weights (their ties are then exact and go to the first index, as in exact
 * arithmetic), and the result does not depend on the thread count.
 *
 * The build turns off contraction into fused multiply-adds, which would break these
 * transformations.
 */
#define MLSOM_TWO_SUM(a, b, s, e)                                                        \
    do {                                                                                 \
        const double s_ = (a) + (b);                                                     \
        const double bp_ = s_ - (a);                                                     \
        const double ap_ = s_ - bp_;                                                     \
        (e) = ((a) - ap_) + ((b) - bp_);                                                 \
        (s) = s_;                                                                        \
    } while (0)

/* group sums of the units [v0, v1): (hi, lo)[v*ld + a] = sum over the rows i with bmu[i] = v, in
 * row order (ld: the sums' row stride, at least A). The threads take disjoint ranges of units,
 * so that each row is read by one thread only. */
#define MLSOM_GROUP_SUMS_BODY(T)                                                         \
    {                                                                                    \
        Py_ssize_t i, v, a;                                                              \
        for (v = v0; v < v1; v++)                                                        \
            for (a = 0; a < A; a++) {                                                    \
                hi[v * ld + a] = 0.0;                                                    \
                lo[v * ld + a] = 0.0;                                                    \
            }                                                                            \
        for (i = 0; i < n; i++) {                                                        \
            const T *MLSOM_RESTRICT xr = X + i * A;                                      \
            double *MLSOM_RESTRICT h_ = hi + (Py_ssize_t)bmu[i] * ld;                    \
            double *MLSOM_RESTRICT l_ = lo + (Py_ssize_t)bmu[i] * ld;                    \
            if (bmu[i] < v0 || bmu[i] >= v1) continue;                                   \
            for (a = 0; a < A; a++) {                                                    \
                double s, e;                                                             \
                const double x = (double)xr[a];                                          \
                MLSOM_TWO_SUM(h_[a], x, s, e);                                           \
                h_[a] = s;                                                               \
                l_[a] = l_[a] + e;                                                       \
            }                                                                            \
        }                                                                                \
    }

/* one unit: (out_hi, out_lo)[a] = sum over t < nv of h[t] * (hi, lo)[v[t]*ld + a], a in [0, A);
 * unit_weights: every h is 1 (no products). */
#define MLSOM_COMBINE_BODY                                                               \
    {                                                                                    \
        Py_ssize_t t, a;                                                                 \
        for (a = 0; a < A; a++) {                                                        \
            out_hi[a] = 0.0;                                                             \
            out_lo[a] = 0.0;                                                             \
        }                                                                                \
        for (t = 0; t < nv; t++) {                                                       \
            const double *MLSOM_RESTRICT sh = hi + v[t] * ld;                            \
            const double *MLSOM_RESTRICT sl = lo + v[t] * ld;                            \
            if (unit_weights) {                                                          \
                for (a = 0; a < A; a++) {                                                \
                    double s, e;                                                         \
                    MLSOM_TWO_SUM(out_hi[a], sh[a], s, e);                               \
                    out_hi[a] = s;                                                       \
                    out_lo[a] = out_lo[a] + (e + sl[a]);                                 \
                }                                                                        \
            } else {                                                                     \
                const double w = h[t];                                                   \
                const double cw = 134217729.0 * w; /* Dekker's split of w */             \
                const double wh = cw - (cw - w), wl = w - wh;                            \
                for (a = 0; a < A; a++) {                                                \
                    double s, e;                                                         \
                    const double x = sh[a];                                              \
                    const double p = w * x;                                              \
                    const double cx = 134217729.0 * x;                                   \
                    const double xh = cx - (cx - x), xl = x - xh;                        \
                    const double pe = ((wh * xh - p) + wh * xl + wl * xh) + wl * xl;     \
                    MLSOM_TWO_SUM(out_hi[a], p, s, e);                                   \
                    out_hi[a] = s;                                                       \
                    out_lo[a] = out_lo[a] + ((e + pe) + w * sl[a]);                      \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }

#endif /* MLSOM_KERNELS_SUMS_H */
