/* The kernels in plain C, one body per family (screening, batch sums, the passes over one
 * instance's screening values), written so that a compiler vectorises them for any target;
 * MLSOM_DEFINE_PATH compiles them once per SIMD path.
 *
 * Part of _kernels.h, which includes it (and holds the common types and the dispatch): not
 * meant to be included alone. */

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

/* group sums, features [a0, a1): (hi, lo)[v*A + a] = sum over the rows i with bmu[i] = v. */
#define MLSOM_GROUP_SUMS_BODY(T)                                                         \
    {                                                                                    \
        Py_ssize_t i, v, a;                                                              \
        for (v = 0; v < M; v++)                                                          \
            for (a = a0; a < a1; a++) {                                                  \
                hi[v * A + a] = 0.0;                                                     \
                lo[v * A + a] = 0.0;                                                     \
            }                                                                            \
        for (i = 0; i < n; i++) {                                                        \
            const T *MLSOM_RESTRICT xr = X + i * A;                                      \
            double *MLSOM_RESTRICT h_ = hi + (Py_ssize_t)bmu[i] * A;                     \
            double *MLSOM_RESTRICT l_ = lo + (Py_ssize_t)bmu[i] * A;                     \
            for (a = a0; a < a1; a++) {                                                  \
                double s, e;                                                             \
                const double x = (double)xr[a];                                          \
                MLSOM_TWO_SUM(h_[a], x, s, e);                                           \
                h_[a] = s;                                                               \
                l_[a] = l_[a] + e;                                                       \
            }                                                                            \
        }                                                                                \
    }

/* one unit: (out_hi, out_lo)[a] = sum over t < nv of h[t] * (hi, lo)[v[t]*A + a], a in [0, A);
 * unit_weights: every h is 1 (no products). */
#define MLSOM_COMBINE_BODY                                                               \
    {                                                                                    \
        Py_ssize_t t, a;                                                                 \
        for (a = 0; a < A; a++) {                                                        \
            out_hi[a] = 0.0;                                                             \
            out_lo[a] = 0.0;                                                             \
        }                                                                                \
        for (t = 0; t < nv; t++) {                                                       \
            const double *MLSOM_RESTRICT sh = hi + v[t] * A;                             \
            const double *MLSOM_RESTRICT sl = lo + v[t] * A;                             \
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

/* ------------------------------------------------------------------------------------------------
 * small passes over one instance's distances
 */
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
 * is written, the count advances only for those in the window); returns how many. The x86 paths
 * use the vector-mask versions below. */
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

#define MLSOM_SCREEN_ARGS(T)                                                             \
    (const T *MLSOM_RESTRICT x2, const T *MLSOM_RESTRICT Wt, Py_ssize_t A, Py_ssize_t M, \
     T base, const T *MLSOM_RESTRICT ww, T *MLSOM_RESTRICT out)
#define MLSOM_SCREEN4_ARGS(T)                                                            \
    (const T *MLSOM_RESTRICT x2, const T *MLSOM_RESTRICT Ws, Py_ssize_t A, Py_ssize_t M,  \
     const T *MLSOM_RESTRICT base, const T *MLSOM_RESTRICT ww, T *MLSOM_RESTRICT out)
#define MLSOM_GROUP_SUMS_ARGS(T)                                                         \
    (const T *MLSOM_RESTRICT X, Py_ssize_t n, Py_ssize_t A, const int64_t *bmu,           \
     Py_ssize_t M, double *MLSOM_RESTRICT hi, double *MLSOM_RESTRICT lo, Py_ssize_t a0,   \
     Py_ssize_t a1)
#define MLSOM_COMBINE_ARGS                                                               \
    (const double *MLSOM_RESTRICT hi, const double *MLSOM_RESTRICT lo, Py_ssize_t A,      \
     const Py_ssize_t *v, const double *h, Py_ssize_t nv, int unit_weights,               \
     double *MLSOM_RESTRICT out_hi, double *MLSOM_RESTRICT out_lo)
#define MLSOM_ARGMIN_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, double gap,        \
                              Py_ssize_t *n_cand)
#define MLSOM_COUNT_LT_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T t)
#define MLSOM_COUNT_LT2_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T t1, T t2,    \
                                 Py_ssize_t *c2)
#define MLSOM_GATHER_RANGE_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, T a, T b,      \
                                    mlsom_entry *MLSOM_RESTRICT ent)
#define MLSOM_MAX_ARGS(T) (const T *MLSOM_RESTRICT d, Py_ssize_t n, double *lo)
#define MLSOM_COUNT_MAPS_ARGS(T) (const T *MLSOM_RESTRICT d, const int64_t *off, Py_ssize_t L, \
                                 const uint8_t *skip, T t1, T t2, Py_ssize_t *c1,        \
                                 Py_ssize_t *c2)

typedef void (*mlsom_screen_f_fn) MLSOM_SCREEN_ARGS(float);
typedef void (*mlsom_screen4_f_fn) MLSOM_SCREEN4_ARGS(float);
typedef void (*mlsom_group_sums_d_fn) MLSOM_GROUP_SUMS_ARGS(double);
typedef void (*mlsom_group_sums_f_fn) MLSOM_GROUP_SUMS_ARGS(float);
typedef void (*mlsom_combine_fn) MLSOM_COMBINE_ARGS;
typedef Py_ssize_t (*mlsom_argmin_f_fn) MLSOM_ARGMIN_ARGS(float);
typedef Py_ssize_t (*mlsom_count_lt_f_fn) MLSOM_COUNT_LT_ARGS(float);
typedef Py_ssize_t (*mlsom_count_lt2_f_fn) MLSOM_COUNT_LT2_ARGS(float);
typedef Py_ssize_t (*mlsom_gather_range_f_fn) MLSOM_GATHER_RANGE_ARGS(float);
typedef double (*mlsom_max_f_fn) MLSOM_MAX_ARGS(float);
typedef void (*mlsom_count_maps_f_fn) MLSOM_COUNT_MAPS_ARGS(float);

/* the first index of the smallest of g[0:n] (*idx), that value (*m1) and the smallest of the
 * others (*m2; equal to *m1 when the minimum is not unique, +inf when n = 1) */
static void mlsom_min2_f_base(const float *MLSOM_RESTRICT g, Py_ssize_t n, int32_t *idx,
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


/* a hint that bytes [p, p + n) will be read soon (a no-op where the compiler has no such hint) */
static void mlsom_prefetch(const void *p, Py_ssize_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    const char *a = (const char *)p;
    Py_ssize_t o;
    for (o = 0; o < n; o += 64) __builtin_prefetch(a + o, 0, 3);
#else
    (void)p;
    (void)n;
#endif
}

/* all kernels of one path, for one target attribute (empty for the baseline) */
#define MLSOM_DEFINE_PATH(SUFFIX, ATTR)                                                  \
    ATTR static void mlsom_screen_f_##SUFFIX MLSOM_SCREEN_ARGS(float)                    \
        MLSOM_SCREEN_BODY(float)                                                         \
    ATTR static void mlsom_screen4_f_##SUFFIX MLSOM_SCREEN4_ARGS(float)                  \
        MLSOM_SCREEN4_BODY(float)                                                        \
    ATTR static void mlsom_group_sums_d_##SUFFIX MLSOM_GROUP_SUMS_ARGS(double)          \
        MLSOM_GROUP_SUMS_BODY(double)                                                   \
    ATTR static void mlsom_group_sums_f_##SUFFIX MLSOM_GROUP_SUMS_ARGS(float)           \
        MLSOM_GROUP_SUMS_BODY(float)                                                    \
    ATTR static void mlsom_combine_##SUFFIX MLSOM_COMBINE_ARGS MLSOM_COMBINE_BODY       \
    ATTR static Py_ssize_t mlsom_argmin_f_##SUFFIX MLSOM_ARGMIN_ARGS(float)             \
        MLSOM_ARGMIN_BODY(float, nextafterf)                                            \
    ATTR static Py_ssize_t mlsom_count_lt_f_##SUFFIX MLSOM_COUNT_LT_ARGS(float)          \
        MLSOM_COUNT_LT_BODY(float)                                                       \
    ATTR static Py_ssize_t mlsom_count_lt2_f_##SUFFIX MLSOM_COUNT_LT2_ARGS(float)        \
        MLSOM_COUNT_LT2_BODY(float)                                                      \
    ATTR static Py_ssize_t mlsom_gather_range_f_##SUFFIX MLSOM_GATHER_RANGE_ARGS(float)  \
        MLSOM_GATHER_RANGE_BODY(float)                                                   \
    ATTR static double mlsom_max_f_##SUFFIX MLSOM_MAX_ARGS(float) MLSOM_MAX_BODY(float)  \
    ATTR static void mlsom_count_maps_f_##SUFFIX MLSOM_COUNT_MAPS_ARGS(float)            \
        MLSOM_COUNT_MAPS_BODY(float)

MLSOM_DEFINE_PATH(base, )
