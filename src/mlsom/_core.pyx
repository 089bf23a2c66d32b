# Private compiled core of mlsom: batch Kohonen training, best-matching-unit search, the
# winner-class ranking, the Bayes decision and the per-instance online update.
#
# The functions here trust their inputs: the Python layer (mlsom._som) validates shapes, dtypes,
# contiguity and values before calling them. Instances and neurons are float64 or float32 (one
# type per call: Cython generates both versions of every function); everything else (averOut,
# probabilities, the batch update's sums) is float64. Neurons are stored transposed (feature-major,
# Wt[i, j] = feature i of neuron j).
#
# Exact distances and screening. A distance mlsom compares is always the "exact" one: the sum of
# (x_i - w_i)^2 in a fixed order (eight interleaved partial sums added pairwise, then the last
# A mod 8 features: NumPy's order for up to 128 values), in the model's type (_sqdist_col,
# _sqdist_row). Most of them are never computed, though: every neuron first gets a cheap
# screening value |x'|^2 + |w'|^2 - 2 x'.w' in float32 from copies centred on a common point (the
# kernels of _kernels.h: one instance, four rows at a time, or for training on the AVX-512 path
# 64 rows at a time with one row per vector lane), which is within
# a known bound `tol` of the exact value (_tol_scale, _screen_gap). Two neurons whose screening
# values differ by more than 2 tol are in the same order exactly; only the neurons the bound
# leaves in doubt get their exact distance. Every decision (best-matching units, the k nearest
# neurons, ties, the Bayes test) is therefore the one the exact distances give, independent of
# the SIMD path and the thread count.
#
# Notation follows the method description (docs/method.md): L labels, M kept neurons over all maps,
# A features, N instances seen, S = sum of label-set sizes seen (label cardinality z = S/N).

from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.float cimport FLT_EPSILON, FLT_MIN
from libc.math cimport INFINITY, exp, isfinite, log, log1p, nextafterf, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np

cdef extern from "_kernels.h" nogil:
    ctypedef struct mlsom_entry:
        double d
        Py_ssize_t j
    ctypedef void (*mlsom_screen_f_fn)(const float *x2, const float *Wt, Py_ssize_t A,
                                       Py_ssize_t M, float base, const float *ww,
                                       float *out) noexcept nogil
    ctypedef void (*mlsom_group_sums_d_fn)(const double *X, Py_ssize_t n, Py_ssize_t A,
                                           const int64_t *bmu, Py_ssize_t M, double *hi,
                                           double *lo, Py_ssize_t a0,
                                           Py_ssize_t a1) noexcept nogil
    ctypedef void (*mlsom_group_sums_f_fn)(const float *X, Py_ssize_t n, Py_ssize_t A,
                                           const int64_t *bmu, Py_ssize_t M, double *hi,
                                           double *lo, Py_ssize_t a0,
                                           Py_ssize_t a1) noexcept nogil
    ctypedef void (*mlsom_combine_fn)(const double *hi, const double *lo, Py_ssize_t A,
                                      const Py_ssize_t *v, const double *h, Py_ssize_t nv,
                                      int unit_weights, double *out_hi,
                                      double *out_lo) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_argmin_f_fn)(const float *d, Py_ssize_t n, double gap,
                                             Py_ssize_t *n_cand) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_count_lt_f_fn)(const float *d, Py_ssize_t n,
                                               float t) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_count_lt2_f_fn)(const float *d, Py_ssize_t n, float t1,
                                                float t2, Py_ssize_t *c2) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_gather_range_f_fn)(const float *d, Py_ssize_t n, float a,
                                                   float b, mlsom_entry *ent) noexcept nogil
    ctypedef double (*mlsom_max_f_fn)(const float *d, Py_ssize_t n, double *lo) noexcept nogil
    mlsom_screen_f_fn mlsom_screen_f
    ctypedef void (*mlsom_screen4_f_fn)(const float *x2, const float *Ws, Py_ssize_t A,
                                        Py_ssize_t M, const float *base, const float *ww,
                                        float *out) noexcept nogil
    mlsom_screen4_f_fn mlsom_screen4_f
    ctypedef void (*mlsom_min2_f_fn)(const float *g, Py_ssize_t n, int32_t *idx, float *m1,
                                     float *m2) noexcept nogil
    mlsom_min2_f_fn mlsom_min2_f
    mlsom_group_sums_d_fn mlsom_group_sums_d
    mlsom_group_sums_f_fn mlsom_group_sums_f
    mlsom_combine_fn mlsom_combine
    mlsom_argmin_f_fn mlsom_argmin_f
    mlsom_count_lt_f_fn mlsom_count_lt_f
    mlsom_count_lt2_f_fn mlsom_count_lt2_f
    mlsom_gather_range_f_fn mlsom_gather_range_f
    mlsom_max_f_fn mlsom_max_f
    ctypedef void (*mlsom_count_maps_f_fn)(const float *d, const int64_t *off, Py_ssize_t L,
                                           const uint8_t *skip, float t1, float t2,
                                           Py_ssize_t *c1, Py_ssize_t *c2) noexcept nogil
    mlsom_count_maps_f_fn mlsom_count_maps_f
    ctypedef void (*mlsom_screen64min_f_fn)(const float *xb, const float *Ws, Py_ssize_t A,
                                            Py_ssize_t M, const float *base, const float *ww,
                                            float *gt, int32_t *idx, float *m1,
                                            float *m2) noexcept nogil
    mlsom_screen64min_f_fn mlsom_screen64min_f
    ctypedef void (*mlsom_screen64maps_f_fn)(const float *xb, const float *Ws, Py_ssize_t A,
                                             Py_ssize_t M, const float *base, const float *ww,
                                             const int64_t *off, Py_ssize_t L, float *gt,
                                             float *m1, int32_t *i1, float *m2,
                                             float *hi) noexcept nogil
    ctypedef uint16_t (*mlsom_lanes_search_f_fn)(const float *g, const int64_t *off,
                                                 Py_ssize_t L, const uint16_t *pool, int32_t k,
                                                 uint16_t act, int max_pass, float *fa,
                                                 int32_t *ca, float *fb, int32_t *cb, float *ht,
                                                 int32_t *hc, uint16_t *hv, int *nh,
                                                 int h_max) noexcept nogil
    ctypedef Py_ssize_t (*mlsom_lanes_window_f_fn)(const float *g, const int64_t *off,
                                                   Py_ssize_t L, const uint16_t *pool, int32_t k,
                                                   uint16_t act, const float *fa,
                                                   const int32_t *ca, const float *fb,
                                                   const int32_t *cb, float *vk, float *vk1,
                                                   int32_t *votes, uint16_t *fm,
                                                   int32_t *fj) noexcept nogil
    ctypedef uint16_t (*mlsom_lanes_winner_fn)(const int32_t *votes, Py_ssize_t L,
                                               const uint16_t *pool, const float *m1,
                                               const float *gapf, uint16_t act,
                                               int32_t *winner) noexcept nogil
    mlsom_screen64maps_f_fn mlsom_screen64maps_f
    mlsom_lanes_search_f_fn mlsom_lanes_search_f
    mlsom_lanes_window_f_fn mlsom_lanes_window_f
    mlsom_lanes_winner_fn mlsom_lanes_winner
    ctypedef void (*mlsom_centre16_d_fn)(const double *x, Py_ssize_t A, Py_ssize_t nr,
                                         const double *c, float *buf, float *xb,
                                         double *xx) noexcept nogil
    ctypedef void (*mlsom_centre16_f_fn)(const float *x, Py_ssize_t A, Py_ssize_t nr,
                                         const double *c, float *buf, float *xb,
                                         double *xx) noexcept nogil
    mlsom_centre16_d_fn mlsom_centre16_d
    mlsom_centre16_f_fn mlsom_centre16_f
    void mlsom_prefetch(const void *p, Py_ssize_t n) noexcept nogil
    int mlsom_simd_level
    int mlsom_simd_max_level() noexcept
    int mlsom_set_simd_level(int level) noexcept
    const char *mlsom_simd_name(int level) noexcept
    int mlsom_have_openmp() noexcept
    int mlsom_cap_threads(long long n_threads) noexcept nogil


# --------------------------------------------------------------------------------------------------
# build and machine information
# --------------------------------------------------------------------------------------------------

def openmp_enabled():
    """Whether this build of the extension was compiled with OpenMP."""
    return bool(mlsom_have_openmp())


def simd_info():
    """Return (name of the distance path in use, name of the widest path this CPU supports)."""
    return (mlsom_simd_name(mlsom_simd_level).decode(),
            mlsom_simd_name(mlsom_simd_max_level()).decode())


def set_simd_level(int level):
    """Select the kernel path (0 baseline, 1 AVX2, 2 AVX-512F, -1 best); returns the level used.

    For tests and benchmarks: all paths give the same results.
    """
    return mlsom_set_simd_level(level)


mlsom_set_simd_level(-1)

# Screening on (default) or off: off computes every distance exactly. For tests and benchmarks;
# both give identical results.
cdef bint _screening = True


# How often the screening bound left an order in doubt, per kind of decision (best-matching unit,
# k nearest, tied votes, Bayes test), and how often the search for the k-th smallest screening
# value ran out of distinct values to split ("wide": equal values). For tests; not exact under
# threads.
cdef int64_t _n_doubt_bmu = 0, _n_doubt_knn = 0, _n_wide = 0, _n_doubt_tie = 0
cdef int64_t _n_doubt_bayes = 0


def screening_stats(bint reset=False):
    """Counts of decisions that needed exact distances, (best-matching unit, k nearest, wide
    window, tied votes, Bayes test); "wide window" counts k-nearest searches left with more than
    WIN equal screening values at the boundary."""
    global _n_doubt_bmu, _n_doubt_knn, _n_wide, _n_doubt_tie, _n_doubt_bayes
    out = (_n_doubt_bmu, _n_doubt_knn, _n_wide, _n_doubt_tie, _n_doubt_bayes)
    if reset:
        _n_doubt_bmu = _n_doubt_knn = _n_wide = _n_doubt_tie = _n_doubt_bayes = 0
    return out


# Frozen scoring 16 rows at a time where the AVX-512 kernels are selected (default) or one row
# at a time with _classify. For tests and benchmarks; both give identical results.
cdef bint _lanes_on = True
# What the 16-row path did: rows it classified, rows it left to _classify, rounds settled from
# exact distances (from the window's values, from a pass over the row), rounds where the whole
# pool voted. For tests; not exact under threads.
cdef int64_t _n_lanes_rows = 0, _n_lanes_fallback = 0, _n_lanes_exact = 0, _n_lanes_scan = 0
cdef int64_t _n_lanes_small = 0


def set_lanes(bint on):
    """Switch predict's 16-rows-at-a-time path on or off (returns the previous setting)."""
    global _lanes_on
    cdef bint old = _lanes_on
    _lanes_on = on
    return old


def lanes_available():
    """Whether the selected SIMD path has predict's 16-rows-at-a-time kernels (AVX-512)."""
    return mlsom_screen64maps_f != NULL


def lanes_stats(bint reset=False):
    """What predict's 16-rows-at-a-time path did: (rows it classified, rows it left to the
    row-by-row path, rounds whose k nearest it settled from exact distances, of which with a pass
    over the row's values, rounds in which the whole pool voted)."""
    global _n_lanes_rows, _n_lanes_fallback, _n_lanes_exact, _n_lanes_scan, _n_lanes_small
    out = (_n_lanes_rows, _n_lanes_fallback, _n_lanes_exact, _n_lanes_scan, _n_lanes_small)
    if reset:
        _n_lanes_rows = _n_lanes_fallback = _n_lanes_exact = _n_lanes_scan = _n_lanes_small = 0
    return out


def set_screening(bint on):
    """Switch distance screening on or off (returns the previous setting); results are identical."""
    global _screening
    cdef bint old = _screening
    _screening = on
    return old


# --------------------------------------------------------------------------------------------------
# distances
# --------------------------------------------------------------------------------------------------

cdef inline double _sqdist_col(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                               Py_ssize_t j) noexcept nogil:
    """Exact squared distance from x to neuron j: the squares (x_i - w_i)^2 in the model's type,
    feature i of the first 8 floor(A / 8) into partial sum i mod 8 (each in feature order), the
    eight sums added pairwise, ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the
    remaining features one by one. This is the order of NumPy's pairwise summation for up to 128
    values; eight independent sums keep the additions from waiting on each other."""
    cdef Py_ssize_t i, k, a8 = A - A % 8
    cdef floating s[8]
    cdef floating r, t
    for k in range(8):
        s[k] = 0
    i = 0
    while i < a8:
        for k in range(8):
            t = x[i + k] - Wt[(i + k) * M + j]
            s[k] = s[k] + t * t
        i += 8
    r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
    for i in range(a8, A):
        t = x[i] - Wt[i * M + j]
        r = r + t * t
    return r


cdef inline double _sqdist_row(const floating *x, const floating *w, Py_ssize_t A) noexcept nogil:
    """_sqdist_col for a neuron stored contiguously (w[i] = feature i): the same sums in the same
    order (the compiler specialises the inlined loop for the unit stride)."""
    return _sqdist_col(x, w, A, 1, 0)


cdef inline double _tol_scale(Py_ssize_t A) noexcept nogil:
    """The factor of the screening bound that depends on A only (computed once per call of a
    kernel): tol = _tol_scale(A) (eps (xx + wwmax) + FLT_MIN) bounds |screening value - exact
    distance| for any neuron with |w - c|^2 <= wwmax.

    With eps the float32 epsilon (twice the unit roundoff u) and S = |x'|^2 + |w'|^2:

    * The screening value is |x'|^2 + |w'|^2 - 2 x'.w' computed in float32 from x' = x - c and
      w' = w - c rounded to float32 (c: a centre, any vector): a sum of A + 2 rounded terms of
      total magnitude at most 2 S. The bound for floating-point sums and dot products in any
      order, with or without fused multiply-add (Higham, Accuracy and Stability of Numerical
      Algorithms, ch. 3), gamma_{A+2} 2 S, is (A + 2) eps S / (1 - (A + 2) u).
    * Rounding x' and w' to float32 moves the distance by at most 2 eps S (taken as 4 eps S).
    * The exact distance (a sum of A squares of x - w in the model's type, which c does not
      change; at most 2 S) is within gamma_{A+2} 2 S of the true one in float32, less in float64.

    The sum, (2 A + 8) eps S, is divided by (1 - (A + 4) eps)^2 for the gamma denominators and
    for xx and wwmax being themselves rounded sums; an underflow term covers tiny values. Infinite
    when the inputs are, or from 2^22 - 4 features on (every decision is then made exactly).
    Returned: 2 (A + 4) / (1 - (A + 4) eps)^2, rounded up a little so that the product stays a
    bound.
    """
    cdef double f = <double> (A + 4) * FLT_EPSILON
    if f >= 0.5:
        return INFINITY
    return 2.0 * <double> (A + 4) / ((1.0 - f) * (1.0 - f)) * (1.0 + 1e-12)


cdef inline double _screen_gap(double tscale, double xx, double wwmax) noexcept nogil:
    """The gap 2 tol: screening values further apart than this are in the same order exactly
    (tscale = _tol_scale(A); xx = |x'|^2; wwmax the largest |w'|^2)."""
    return 2.0 * tscale * (FLT_EPSILON * (xx + wwmax) + FLT_MIN)


cdef void _col_norms(const float *Ws, Py_ssize_t A, Py_ssize_t M, float *ww) noexcept nogil:
    cdef Py_ssize_t i, j
    for j in range(M):
        ww[j] = 0
    for i in range(A):
        for j in range(M):
            ww[j] = ww[j] + Ws[i * M + j] * Ws[i * M + j]


cdef inline double _maxval(const float *v, Py_ssize_t n) noexcept nogil:
    cdef double lo
    return mlsom_max_f(v, n, &lo)


cdef inline double _logaddexp(double a, double b) noexcept nogil:
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a >= b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef inline Py_ssize_t _argmin(const floating *v, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Index of the first smallest value of v[lo:hi] (hi > lo)."""
    cdef Py_ssize_t j, best = lo
    cdef floating bv = v[lo]
    for j in range(lo + 1, hi):
        if v[j] < bv:
            bv = v[j]
            best = j
    return best


cdef Py_ssize_t _refine_argmin(const floating *x, const float *d, double gap,
                               const floating *W, Py_ssize_t A, Py_ssize_t si, Py_ssize_t sj,
                               Py_ssize_t lo, Py_ssize_t hi, double *ex, int64_t *stamp,
                               int64_t cur) noexcept nogil:
    """The exact first nearest neuron in [lo, hi), from screening values d within gap = 2 tol.

    Only the neurons within the gap of the smallest screening value are candidates; their exact
    distances are computed only when there are several. Feature i of neuron j is
    W[j * sj + i * si] (transposed weights: sj = 1, si = M; a row-major copy: sj = A, si = 1).
    ex/stamp/cur: a cache of exact distances (stamp[j] == cur: ex[j] is valid), or NULL.
    """
    cdef Py_ssize_t j, n_cand, best
    cdef Py_ssize_t b = lo + mlsom_argmin_f(d + lo, hi - lo, gap, &n_cand)
    cdef double lim = <double> d[b] + gap, e, be = INFINITY
    if n_cand <= 1:
        return b
    global _n_doubt_bmu
    _n_doubt_bmu += 1
    best = -1
    for j in range(lo, hi):
        if <double> d[j] <= lim:
            if ex == NULL:
                e = _sqdist_col(x, W + j * sj, A, si, 0)
            else:
                if stamp[j] != cur:
                    ex[j] = _sqdist_col(x, W + j * sj, A, si, 0)
                    stamp[j] = cur
                e = ex[j]
            if best < 0 or e < be:
                be = e
                best = j
    return best


# --------------------------------------------------------------------------------------------------
# offline phase: batch Kohonen training of one map
# --------------------------------------------------------------------------------------------------

cdef inline int _threads(double work, int n_threads) noexcept nogil:
    """Threads for a parallel loop of about `work` floating-point operations: one below 4e6, where
    starting and joining threads costs more than it saves (and far more on a busy machine)."""
    return n_threads if work >= 4e6 else 1


cdef enum:
    RB = 64   # rows per screening block of the training (a thread's unit of work)
    PRB = 8   # rows per block of predict: a block's screening values (8 M floats) stay in
              # the first-level cache while its rows are classified (faster than 4 to 64)


cdef void _screen_rows(const float *X2, const double *xx, Py_ssize_t r, const float *Ws,
                       const float *ww, Py_ssize_t A, Py_ssize_t M, float *G, float *base,
                       int32_t *idx, float *m1, float *m2) noexcept nogil:
    """OUT G (r, M): screening values of r rows whose -2 x' are X2 (r, A) and |x'|^2 are xx,
    four rows per pass of the neurons (each weight loaded serves four rows). base: scratch (4).
    With idx not NULL, also every row's smallest screening value (OUT m1), the first index of it
    (OUT idx) and the smallest of the others (OUT m2): a row's nearest neuron is then settled
    without a second pass whenever m2 is beyond the screening gap of m1."""
    cdef Py_ssize_t q = 0
    while q + 4 <= r:
        base[0] = <float> xx[q]
        base[1] = <float> xx[q + 1]
        base[2] = <float> xx[q + 2]
        base[3] = <float> xx[q + 3]
        mlsom_screen4_f(X2 + q * A, Ws, A, M, base, ww, G + q * M)
        q += 4
    while q < r:
        mlsom_screen_f(X2 + q * A, Ws, A, M, <float> xx[q], ww, G + q * M)
        q += 1
    if idx != NULL:
        for q in range(r):
            mlsom_min2_f(G + q * M, M, idx + q, m1 + q, m2 + q)


cdef inline float _float_up(double v) noexcept nogil:
    """v rounded up to float32 (a limit that keeps every value at most v)."""
    cdef float f = <float> v
    if <double> f < v:
        f = nextafterf(f, INFINITY)
    return f


cdef Py_ssize_t _nearest_within(const floating *x, const float *g, Py_ssize_t gs, float limt,
                                const floating *Wr, Py_ssize_t A, Py_ssize_t M) noexcept nogil:
    """The exact nearest (first on ties) of the neurons whose screening value g[j * gs] is at
    most limt, from a row-major copy Wr of the neurons: _refine_argmin when the limit is already
    known."""
    cdef Py_ssize_t j, best = -1
    cdef double e, be = INFINITY
    global _n_doubt_bmu
    _n_doubt_bmu += 1
    for j in range(M):
        if g[j * gs] <= limt:
            e = _sqdist_row(x, Wr + j * A, A)
            if best < 0 or e < be:
                be = e
                best = j
    return best


cdef double _centre_row(const floating *x, const double *c, Py_ssize_t A,
                        float *x2) noexcept nogil:
    """OUT x2 = -2 x' with x' = x - c rounded to float32; returns |x'|^2 (float32 partial sums)."""
    cdef Py_ssize_t i, k
    cdef float xx = 0
    cdef float part[8]
    for i in range(A):
        x2[i] = <float> (<double> x[i] - c[i])
    for k in range(8):
        part[k] = 0
    i = 0
    while i + 8 <= A:
        for k in range(8):
            part[k] = part[k] + x2[i + k] * x2[i + k]
        i += 8
    while i < A:
        part[0] = part[0] + x2[i] * x2[i]
        i += 1
    for k in range(8):
        xx = xx + part[k]
    for i in range(A):
        x2[i] = -2 * x2[i]
    return xx


cdef _shadow(Wt, c):
    """The centred float32 copy of the neurons used for screening, and its column norms."""
    Ws = np.ascontiguousarray(np.asarray(Wt) - np.asarray(c)[:, None], dtype=np.float32)
    cdef Py_ssize_t A = Ws.shape[0], M = Ws.shape[1]
    ww = np.empty(M, dtype=np.float32)
    cdef float[:, ::1] ws_ = Ws
    cdef float[::1] ww_ = ww
    with nogil:
        _col_norms(&ws_[0, 0], A, M, &ww_[0])
    return Ws, ww


def screening_copy(Wt):
    """(Ws, ww, c): the centred float32 copy of the neurons Wt (A, M) that screens distances in
    predict_stream and predict, its column norms, and its centre (the mean of the neurons).
    predict_stream keeps it in step with Wt; any centre gives the same results."""
    c = np.asarray(Wt, dtype=np.float64).mean(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        Ws, ww = _shadow(Wt, c)
    return Ws, ww, c


cdef _assign(const floating[:, ::1] X, const float[:, ::1] X2, const double[::1] xxs,
             const double[::1] c, const floating[:, ::1] Wt, int64_t[::1] bmu,
             double[::1] bmu_d2, bint want_d2, int n_threads,
             mlsom_screen64min_f_fn k64=NULL):
    """Best-matching unit of every row of X among the neurons Wt (OUT bmu) and, with want_d2, its
    exact squared distance (OUT bmu_d2). X2, xxs: -2 x' for the rows' centred float32 copies x'
    (centre c) and |x'|^2, from _centred32x2; with k64 (not NULL) X2 is in its blocked layout
    and k64 screens 64 rows at a time. One parallel region; blocks of RB rows per thread."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1]
    cdef Py_ssize_t ch, s, e, row, j, b, n_chunks = (n + RB - 1) // RB
    cdef Py_ssize_t gs
    cdef float *z
    cdef float *bf
    cdef double wwmax, gap, tscale
    cdef int failed = 0
    cdef float *G
    cdef float *g
    cdef float *m1
    cdef float *m2
    cdef int32_t *idx
    cdef float limt
    cdef bint screening = _screening
    with np.errstate(over="ignore", invalid="ignore"):
        Ws_arr, ww_arr = _shadow(Wt, c)
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    # a row-major copy of the neurons: exact distances read each neuron contiguously
    Wr_arr = np.ascontiguousarray(np.asarray(Wt).T)
    cdef const floating[:, ::1] Wr = Wr_arr
    # raw pointers inside the parallel region (no memoryview checks there in debug builds)
    cdef const floating *px = &X[0, 0]
    cdef const floating *pwr = &Wr[0, 0]
    cdef const float *px2 = &X2[0, 0]
    cdef const double *pxx = &xxs[0]
    cdef const float *pws = &Ws[0, 0]
    cdef const float *pww = &ww[0]
    cdef int64_t *pbmu = &bmu[0]
    cdef double *pd2 = &bmu_d2[0]
    with nogil:
        wwmax = _maxval(pww, M)
        tscale = _tol_scale(A)
        with parallel(num_threads=_threads(1.0 * n * M * A, n_threads)):
            G = <float *> malloc((RB * M + 4 + 4 * RB + M) * sizeof(float))
            if G != NULL:
                m1 = G + RB * M + 4
                m2 = m1 + RB
                idx = <int32_t *> (m2 + RB)
                bf = m2 + 2 * RB
                z = bf + RB   # M zeros: the screening values when every distance is exact
                for j in range(M):
                    z[j] = 0
            for ch in prange(n_chunks, schedule="static"):
                if G == NULL:
                    failed += 1
                    continue
                s = ch * RB
                e = min(n, s + RB)
                if screening and k64 != NULL:
                    # the blocked rows are padded to whole blocks of RB (RB == 64)
                    for row in range(RB):
                        bf[row] = <float> pxx[s + row]
                    k64(px2 + s * A, pws, A, M, bf, pww, G, idx, m1, m2)
                elif screening:
                    _screen_rows(px2 + s * A, pxx + s, e - s, pws, pww, A, M, G, G + RB * M,
                                 idx, m1, m2)
                for row in range(s, e):
                    if k64 != NULL:
                        g = G + (row - s)
                        gs = RB
                    else:
                        g = G + (row - s) * M
                        gs = 1
                    gap = _screen_gap(tscale, pxx[row], wwmax) if screening else INFINITY
                    if isfinite(gap):
                        # the nearest is settled when no other value is within the gap (the
                        # bound rounded up to float32, as _refine_argmin does)
                        limt = _float_up(<double> m1[row - s] + gap)
                        if m2[row - s] > limt:
                            b = idx[row - s]
                        else:
                            b = _nearest_within(px + row * A, g, gs, limt, pwr, A, M)
                        pbmu[row] = b
                        if want_d2:
                            pd2[row] = _sqdist_row(px + row * A, pwr + b * A, A)
                        continue
                    # every neuron a candidate: all distances exact
                    b = _refine_argmin(px + row * A, z, gap, pwr, A, 1, A, 0, M, NULL, NULL, 0)
                    pbmu[row] = b
                    if want_d2:
                        pd2[row] = _sqdist_row(px + row * A, pwr + b * A, A)
            free(G)
    if failed:
        raise MemoryError()


cdef _centred32x2(const floating[:, ::1] X, c, int n_threads, bint blocked=False):
    """-2 x' for the centred float32 copies x' = X - c of the rows, and |x'|^2 per row (rows in
    parallel: each row's values do not depend on the others).

    blocked: the layout of mlsom_screen64min_f, blocks of 16 rows with each feature's 16 values
    contiguous (row i, feature a at [(i // 16) * 16 A + 16 a + i % 16]), zero rows (and |x'|^2)
    up to a whole number of RB rows."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], i, a
    cdef Py_ssize_t n_pad = (n + RB - 1) // RB * RB if blocked else n
    cdef float *buf
    cdef int failed = 0
    X2 = np.zeros((n_pad, A), dtype=np.float32) if blocked else np.empty((n, A), dtype=np.float32)
    xx = np.zeros(n_pad, dtype=np.float64)
    cdef float[:, ::1] x2_ = X2
    cdef double[::1] xx_ = xx
    cdef const double[::1] c_ = c
    cdef const floating *px
    cdef float *px2
    cdef double *pxx
    cdef const double *pc
    if n == 0 or A == 0:
        return X2, xx
    px = &X[0, 0]
    px2 = &x2_[0, 0]
    pxx = &xx_[0]
    pc = &c_[0]
    with nogil:
        if not blocked:
            for i in prange(n, schedule="static", num_threads=_threads(4.0 * n * A, n_threads)):
                pxx[i] = _centre_row(px + i * A, pc, A, px2 + i * A)
        else:
            with parallel(num_threads=_threads(4.0 * n * A, n_threads)):
                buf = <float *> malloc(A * sizeof(float))
                for i in prange(n, schedule="static"):
                    if buf == NULL:
                        failed += 1
                        continue
                    pxx[i] = _centre_row(px + i * A, pc, A, buf)
                    for a in range(A):
                        px2[(i // 16) * 16 * A + 16 * a + i % 16] = buf[a]
                free(buf)
    if failed:
        raise MemoryError()
    return X2, xx


def assign(const floating[:, ::1] X, const floating[:, ::1] Wt, int64_t[::1] bmu,
           double[::1] bmu_d2, long long n_threads_asked):
    """OUT bmu, bmu_d2: best-matching unit of every row of X (n, A) among the neurons Wt (A, M),
    and its exact squared distance."""
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xxs_arr = _centred32x2(X, c_arr, n_threads, k64 != NULL)
    cdef const float[:, ::1] X2 = X2_arr
    cdef double[::1] c = c_arr
    cdef double[::1] xxs = xxs_arr
    _assign(X, X2, xxs, c, Wt, bmu, bmu_d2, True, n_threads, k64)


def screen_values(const floating[:, ::1] X, const floating[:, ::1] Wt, bint blocked):
    """For tests: (G, idx, m1, m2) of the training's screening kernel for the rows of X (n, A) and
    the neurons Wt (A, M): G (n, M) the screening values, and each row's smallest value m1, its
    first index idx and the smallest of the others m2. blocked: the 64-row kernel of the AVX-512
    path (ValueError where the path is not selected); otherwise the four-row tile."""
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f if blocked else NULL
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], s, e, r, j
    if blocked and k64 == NULL:
        raise ValueError("blocked: the 64-row kernel needs the AVX-512 path")
    if A != Wt.shape[0]:
        raise ValueError(f"Wt: expected {A} rows, got {Wt.shape[0]}")
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xx_arr = _centred32x2(X, c_arr, 1, blocked)
    Ws_arr, ww_arr = _shadow(Wt, c_arr)
    G_arr = np.empty((n, M), dtype=np.float32)
    idx_arr = np.empty(n, dtype=np.int32)
    m1_arr = np.empty(n, dtype=np.float32)
    m2_arr = np.empty(n, dtype=np.float32)
    buf_arr = np.empty(RB * M + 4, dtype=np.float32)
    bidx_arr = np.empty(RB, dtype=np.int32)
    b1_arr = np.empty(RB, dtype=np.float32)
    b2_arr = np.empty(RB, dtype=np.float32)
    base_arr = np.empty(RB, dtype=np.float32)
    cdef const float[:, ::1] X2 = X2_arr
    cdef const double[::1] xx = xx_arr
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    cdef float[:, ::1] G = G_arr
    cdef int32_t[::1] idx = idx_arr
    cdef float[::1] m1 = m1_arr
    cdef float[::1] m2 = m2_arr
    cdef float[::1] buf = buf_arr
    cdef int32_t[::1] bidx = bidx_arr
    cdef float[::1] b1 = b1_arr
    cdef float[::1] b2 = b2_arr
    cdef float[::1] base = base_arr
    for s in range(0, n, RB):
        e = min(n, s + RB)
        if blocked:
            for r in range(RB):
                base[r] = <float> xx[s + r]
            k64(&X2[s, 0], &Ws[0, 0], A, M, &base[0], &ww[0], &buf[0], &bidx[0], &b1[0],
                &b2[0])
        else:
            _screen_rows(&X2[s, 0], &xx[s], e - s, &Ws[0, 0], &ww[0], A, M, &buf[0],
                         &buf[RB * M], &bidx[0], &b1[0], &b2[0])
        for r in range(s, e):
            for j in range(M):
                G[r, j] = buf[j * RB + r - s] if blocked else buf[(r - s) * M + j]
            idx[r] = bidx[r - s]
            m1[r] = b1[r - s]
            m2[r] = b2[r - s]
    return G_arr, idx_arr, m1_arr, m2_arr


def min2_values(const float[::1] g):
    """For tests: (idx, m1, m2) of the selected SIMD path's smallest-two scan of g: the smallest
    value m1 (NaN never counts; infinity where none is smaller), its first index idx (0 where no
    value is below infinity) and the smallest of the others m2."""
    cdef int32_t idx = 0
    cdef float m1 = 0, m2 = 0
    cdef Py_ssize_t n = g.shape[0]
    mlsom_min2_f(&g[0] if n > 0 else NULL, n, &idx, &m1, &m2)
    return idx, m1, m2


def search_values(const float[::1] d, float a, float b):
    """For tests: what the ranking's search kernels of the selected SIMD path give on d (n > 0):
    (#{d < a}, #{d < b} and #{d < a} from the two-threshold count, the indices j with
    a <= d[j] < b in order, max(d), min(d))."""
    cdef Py_ssize_t n = d.shape[0], c1, c2, c3, k
    cdef double lo, hi
    if n == 0:
        raise ValueError("d: expected at least one value, got 0")
    cdef mlsom_entry *ent = <mlsom_entry *> malloc(n * sizeof(mlsom_entry))
    if ent == NULL:
        raise MemoryError()
    try:
        c1 = mlsom_count_lt_f(&d[0], n, a)
        c3 = mlsom_count_lt2_f(&d[0], n, a, b, &c2)
        k = mlsom_gather_range_f(&d[0], n, a, b, ent)
        hi = mlsom_max_f(&d[0], n, &lo)
        idx = np.array([ent[j].j for j in range(k)], dtype=np.intp)
        vals = np.array([ent[j].d for j in range(k)], dtype=np.float64)
    finally:
        free(ent)
    if not np.array_equal(vals, np.asarray(d, dtype=np.float64)[idx]):
        raise AssertionError("gather_range: an entry's value is not d[j]")
    return c1, c2, c3, idx, hi, lo


def count_maps_values(const float[::1] d, const int64_t[::1] offsets, const uint8_t[::1] skip,
                      float t1, float t2):
    """For tests: the per-map counts of the selected SIMD path's count_maps kernel on d, the maps
    c (L of them) being d[offsets[c]:offsets[c + 1]]: (#{< t1}, #{< t2}) per map not skipped, 0
    for a skipped one."""
    cdef Py_ssize_t L = skip.shape[0]
    if offsets.shape[0] != L + 1:
        raise ValueError(f"offsets: expected {L + 1} entries, got {offsets.shape[0]}")
    if L == 0 or offsets[0] != 0 or offsets[L] != d.shape[0] or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets: expected a non-decreasing split of d starting at 0")
    c1_arr = np.zeros(L, dtype=np.intp)
    c2_arr = np.zeros(L, dtype=np.intp)
    cdef Py_ssize_t[::1] c1 = c1_arr
    cdef Py_ssize_t[::1] c2 = c2_arr
    cdef const float *dp = &d[0] if d.shape[0] > 0 else NULL
    mlsom_count_maps_f(dp, &offsets[0], L, &skip[0], t1, t2, &c1[0], &c2[0])
    return c1_arr, c2_arr


cdef inline void _two_sum(double a, double b, double *s, double *e) noexcept nogil:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    cdef double s_ = a + b, bp = s_ - a, ap = s_ - bp
    e[0] = (a - ap) + (b - bp)
    s[0] = s_


cdef inline void _two_prod(double a, double b, double *p, double *e) noexcept nogil:
    """p + e = a b exactly, p = fl(a b) (Dekker's product, no fused multiply-add)."""
    cdef double p_ = a * b, ca = 134217729.0 * a, cb = 134217729.0 * b
    cdef double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh
    e[0] = ((ah * bh - p_) + ah * bl + al * bh) + al * bl
    p[0] = p_


def train_map(floating[:, ::1] X, floating[:, ::1] Wt, const double[:, ::1] G, double r0,
              Py_ssize_t n_epochs, Py_ssize_t max_epochs, bint gaussian,
              int64_t[::1] bmu, double[::1] bmu_d2, long long n_threads_asked):
    """Batch Kohonen training of one map, in place.

    IN  X (n, A): the instances of one label.  G (M, M): grid distances.  r0: initial radius.
    IN/OUT Wt (A, M): initial weights, replaced by the trained weights.
    OUT bmu (n), bmu_d2 (n): each row's best-matching unit and exact squared distance under the
    final weights.

    Epoch e = 0, 1, ... : every unit becomes the (neighbourhood-weighted) mean of the rows whose
    best-matching unit lies in its neighbourhood (a unit with none keeps its weight), then the rows
    are re-assigned. Radius r_e = r0 (n_epochs - e) / n_epochs; an epoch with r_e < 1 (and every
    epoch from n_epochs on) is winner-only. Training stops after the first winner-only epoch that
    changes no assignment, or after max_epochs epochs.

    An epoch costs one product X Wt (the screening values of the assignment, four rows at a time),
    O(n A) for the rows' sums per best-matching unit and O(M^2 A) for the units' sums. The sums
    are carried in double-double arithmetic and rounded once (see _kernels.h): the weights are
    the correctly rounded means (but in cases of probability ~1e-16), whatever the grouping of the
    rows, and units that take the same rows get bit-identical weights.

    Returns (number of epochs run, converged).
    """
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1]
    cdef Py_ssize_t e, i, u, v, a, t, blk, n_epochs_run = 0
    cdef Py_ssize_t n_blocks = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t fblock = ((A + n_blocks - 1) // n_blocks + 7) // 8 * 8
    cdef double r, h, dh, dl, p, pe, se
    cdef bint winner_only, converged = False
    cdef int64_t changed
    if n == 0:
        raise ValueError("train_map needs at least one row")
    n_blocks = (A + fblock - 1) // fblock
    # centre of the screening copies (any point will do: the mean in the rows' own type)
    cdef mlsom_screen64min_f_fn k64 = mlsom_screen64min_f
    c_arr = np.mean(X, axis=0).astype(np.float64)
    X2_arr, xxs_arr = _centred32x2(X, c_arr, n_threads, k64 != NULL)
    cdef const float[:, ::1] X2 = X2_arr
    cdef double[::1] c_v = c_arr
    cdef double[::1] xxs_v = xxs_arr
    cnt_arr = np.zeros(M, dtype=np.int64)
    shi_arr = np.zeros((M, A), dtype=np.float64)   # rows' sums per best-matching unit ...
    slo_arr = np.zeros((M, A), dtype=np.float64)   # ... and their low parts
    uhi_arr = np.zeros((M, A), dtype=np.float64)   # units' weighted sums ...
    ulo_arr = np.zeros((M, A), dtype=np.float64)   # ... and their low parts
    den_arr = np.zeros(M, dtype=np.float64)
    bmu_new_arr = np.empty(n, dtype=np.int64)
    nb_start_arr = np.zeros(M + 1, dtype=np.intp)
    nb_v_arr = np.zeros(M * M, dtype=np.intp)
    nb_h_arr = np.zeros(M * M, dtype=np.float64)
    cdef int64_t[::1] cnt = cnt_arr
    cdef double[:, ::1] shi = shi_arr
    cdef double[:, ::1] slo = slo_arr
    cdef double[:, ::1] uhi = uhi_arr
    cdef double[:, ::1] ulo = ulo_arr
    cdef double[::1] den = den_arr
    cdef int64_t[::1] bmu_new = bmu_new_arr
    cdef Py_ssize_t[::1] nb_start = nb_start_arr
    cdef Py_ssize_t[::1] nb_v = nb_v_arr
    cdef double[::1] nb_h = nb_h_arr
    # raw pointers for the parallel loops (no memoryview checks there in debug builds)
    cdef const floating *px = &X[0, 0]
    cdef const int64_t *pbmu = &bmu[0]
    cdef double *pshi = &shi[0, 0]
    cdef double *pslo = &slo[0, 0]
    cdef double *puhi = &uhi[0, 0]
    cdef double *pulo = &ulo[0, 0]
    cdef double *pden = &den[0]
    cdef const int64_t *pcnt = &cnt[0]
    cdef const Py_ssize_t *pnbs = &nb_start[0]
    cdef const Py_ssize_t *pnbv = &nb_v[0]
    cdef const double *pnbh = &nb_h[0]

    _assign(X, X2, xxs_v, c_v, Wt, bmu, bmu_d2, False, n_threads, k64)
    for e in range(max_epochs):
        if e < n_epochs:
            r = r0 * <double> (n_epochs - e) / <double> n_epochs
        else:
            r = 0.0
        winner_only = r < 1.0
        with nogil:
            # rows' sums per best-matching unit, each in row order (in parallel over features;
            # about 8 floating-point operations per element in double-double arithmetic)
            for v in range(M):
                cnt[v] = 0
            for i in range(n):
                cnt[bmu[i]] += 1
            for blk in prange(n_blocks, schedule="static",
                              num_threads=_threads(8.0 * n * A, n_threads)):
                if floating is double:
                    mlsom_group_sums_d(px, n, A, pbmu, M, pshi, pslo, blk * fblock,
                                       min(A, (blk + 1) * fblock))
                else:
                    mlsom_group_sums_f(px, n, A, pbmu, M, pshi, pslo, blk * fblock,
                                       min(A, (blk + 1) * fblock))
            # each unit's list of (BMU v, h(u, v)) with h > 0 and rows at v, v increasing
            t = 0
            for u in range(M):
                nb_start[u] = t
                for v in range(M):
                    if cnt[v] == 0:
                        continue
                    if winner_only:
                        h = 1.0 if u == v else 0.0
                    elif gaussian:
                        h = exp(-(G[u, v] * G[u, v]) / (2.0 * r * r))
                    elif G[u, v] <= r:
                        h = 1.0
                    else:
                        h = 0.0
                    if h > 0.0:
                        nb_v[t] = v
                        nb_h[t] = h
                        t += 1
            nb_start[M] = t
            # unit u: sum_v h(u, v) S_v / sum_v h(u, v) n_v (a unit with no rows keeps its weight)
            for u in prange(M, schedule="static",
                            num_threads=_threads(8.0 * (pnbs[M] + M) * A, n_threads)):
                mlsom_combine(pshi, pslo, A, pnbv + pnbs[u], pnbh + pnbs[u], pnbs[u + 1] - pnbs[u],
                              not gaussian, puhi + u * A, pulo + u * A)
                dh = 0.0
                dl = 0.0
                for t in range(pnbs[u], pnbs[u + 1]):
                    _two_prod(pnbh[t], <double> pcnt[pnbv[t]], &p, &pe)
                    _two_sum(dh, p, &dh, &se)
                    dl = dl + (se + pe)
                pden[u] = dh + dl
            for u in range(M):
                if den[u] > 0.0:
                    for a in range(A):
                        Wt[a, u] = <floating> ((uhi[u, a] + ulo[u, a]) / den[u])
        _assign(X, X2, xxs_v, c_v, Wt, bmu_new, bmu_d2, False, n_threads, k64)
        changed = 0
        for i in range(n):
            if bmu_new[i] != bmu[i]:
                changed += 1
            bmu[i] = bmu_new[i]
        n_epochs_run = e + 1
        if winner_only and changed == 0:
            converged = True
            break
    Wr_arr = np.ascontiguousarray(np.asarray(Wt).T)   # each neuron contiguous
    cdef const floating[:, ::1] Wr = Wr_arr
    cdef const floating *pwr = &Wr[0, 0]
    cdef double *pd2 = &bmu_d2[0]
    with nogil:
        for i in prange(n, schedule="static", num_threads=_threads(3.0 * n * A, n_threads)):
            pd2[i] = _sqdist_row(px + i * A, pwr + pbmu[i] * A, A)
    return n_epochs_run, bool(converged)


# --------------------------------------------------------------------------------------------------
# online phase
# --------------------------------------------------------------------------------------------------

# Entry (mlsom_entry of _kernels.h): d, a squared distance (screening or exact), and j, a global
# neuron index (maps laid out in label order).
ctypedef mlsom_entry Entry


cdef inline bint _less(Entry a, Entry b) noexcept nogil:
    return a.d < b.d or (a.d == b.d and a.j < b.j)


cdef void _select_smallest(Entry *a, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Reorder a[0:n] so that a[0:k] holds its k smallest entries (in no particular order).

    Quickselect with a median-of-three pivot and a branch-free partition; entries are distinct
    under (distance, index), so the partition never degenerates on equal keys. Small ranges are
    finished by insertion sort.
    """
    cdef Py_ssize_t lo = 0, hi = n, i, j, mid, store, lt
    cdef Entry t, p
    while hi - lo > 16:
        mid = lo + (hi - lo) // 2
        # median of a[lo], a[mid], a[hi-1] moved to a[hi-1]
        if _less(a[mid], a[lo]):
            t = a[mid]
            a[mid] = a[lo]
            a[lo] = t
        if _less(a[hi - 1], a[lo]):
            t = a[hi - 1]
            a[hi - 1] = a[lo]
            a[lo] = t
        if _less(a[mid], a[hi - 1]):
            t = a[mid]
            a[mid] = a[hi - 1]
            a[hi - 1] = t
        p = a[hi - 1]
        store = lo
        for i in range(lo, hi - 1):
            t = a[i]
            lt = _less(t, p)
            a[i] = a[store]
            a[store] = t
            store += lt
        a[hi - 1] = a[store]
        a[store] = p
        if store == k or store + 1 == k:
            return
        if store > k:
            hi = store
        else:
            lo = store + 1
    for i in range(lo + 1, hi):
        t = a[i]
        j = i - 1
        while j >= lo and _less(t, a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = t


cdef enum:
    WIN = 8   # the search for the k-th smallest value stops with at most WIN values in its window


ctypedef struct Work:
    float *dp           # (M) the instance's screening values, +inf for classes already ranked
    double *ex          # (M) exact distances computed for the current instance ...
    int64_t *stamp      # (M) ... valid where stamp[j] == cur
    int64_t cur
    Entry *ent          # (M) scratch for the neurons in the window of the k-th smallest value
    Entry *amb          # (M) scratch for the neurons the screening bound leaves in doubt
    Py_ssize_t *winnr   # (L) best-matching unit of each map (global index); -1: no map, -2: not yet
    Py_ssize_t *votes   # (L)
    uint8_t *skip       # (L) classes out of the pool: ranked, or without a map
    Py_ssize_t *below   # (L) per class: how many screening values are below the last t
    uint8_t *in_y       # (L) classes in the prediction
    Py_ssize_t *rank    # (L) the winner classes in order, -1 after the last
    const void *wr      # a row-major copy of the neurons (M, A) in the model's type, or NULL:
                        # exact distances then read each neuron contiguously
    int64_t cnt[10]     # this thread's counts for screening_stats and lanes_stats (added to
                        # the module's when the workspace is freed: no shared counter per row)


cdef Work *_work_alloc(Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Work *w = <Work *> malloc(sizeof(Work))
    cdef Py_ssize_t j
    if w == NULL:
        return NULL
    w.dp = <float *> malloc(M * sizeof(float))
    w.ex = <double *> malloc(M * sizeof(double))
    w.stamp = <int64_t *> malloc(M * sizeof(int64_t))
    w.ent = <Entry *> malloc(M * sizeof(Entry))
    w.amb = <Entry *> malloc(M * sizeof(Entry))
    w.winnr = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.votes = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.skip = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.below = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.in_y = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.rank = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    if (w.dp == NULL or w.ex == NULL or w.stamp == NULL
            or w.ent == NULL or w.amb == NULL or w.winnr == NULL
            or w.votes == NULL or w.in_y == NULL or w.rank == NULL
            or w.skip == NULL or w.below == NULL):
        _work_free(w)
        return NULL
    w.cur = 0
    w.wr = NULL
    for j in range(10):
        w.cnt[j] = 0
    for j in range(M):
        w.stamp[j] = -1
    return w


cdef void _work_free(Work *w) noexcept nogil:
    global _n_doubt_bmu, _n_doubt_knn, _n_wide, _n_doubt_tie, _n_doubt_bayes
    global _n_lanes_rows, _n_lanes_fallback, _n_lanes_exact, _n_lanes_scan, _n_lanes_small
    if w == NULL:
        return
    _n_doubt_bmu += w.cnt[0]
    _n_doubt_knn += w.cnt[1]
    _n_wide += w.cnt[2]
    _n_doubt_tie += w.cnt[3]
    _n_doubt_bayes += w.cnt[4]
    _n_lanes_rows += w.cnt[5]
    _n_lanes_fallback += w.cnt[6]
    _n_lanes_exact += w.cnt[7]
    _n_lanes_scan += w.cnt[8]
    _n_lanes_small += w.cnt[9]
    free(w.dp)
    free(w.ex)
    free(w.stamp)
    free(w.ent)
    free(w.amb)
    free(w.winnr)
    free(w.votes)
    free(w.skip)
    free(w.below)
    free(w.in_y)
    free(w.rank)
    free(w)


cdef inline double _exact(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          Py_ssize_t j, Work *w) noexcept nogil:
    """Exact squared distance from the current instance to neuron j, computed once (from the
    row-major copy when there is one: the same sums in the same order)."""
    if w.stamp[j] != w.cur:
        if w.wr != NULL:
            w.ex[j] = _sqdist_row(x, <const floating *> w.wr + j * A, A)
        else:
            w.ex[j] = _sqdist_col(x, Wt, A, M, j)
        w.stamp[j] = w.cur
    return w.ex[j]


cdef void _log_cond(const int64_t *T, Py_ssize_t L, double *logC, Py_ssize_t c) noexcept nogil:
    """OUT column c of logC: logC[k, c] = log P[k, c] = log(T[k, c] / T[c, c]), -inf when 0."""
    cdef Py_ssize_t k
    cdef int64_t tcc = T[c * L + c]
    for k in range(L):
        if tcc > 0 and T[k * L + c] > 0:
            logC[k * L + c] = log(<double> T[k * L + c] / <double> tcc)
        else:
            logC[k * L + c] = -INFINITY


cdef inline Py_ssize_t _winner(const floating *x, const float *d, double gap, const floating *Wt,
                               Py_ssize_t A, Py_ssize_t M, const int64_t *offsets, Py_ssize_t c,
                               Work *w) noexcept nogil:
    """The best-matching unit of label c's map (which must exist), found once per instance."""
    if w.winnr[c] == -2:
        if w.wr != NULL:
            w.winnr[c] = _refine_argmin(x, d, gap, <const floating *> w.wr, A, 1, A, offsets[c],
                                        offsets[c + 1], w.ex, w.stamp, w.cur)
        else:
            w.winnr[c] = _refine_argmin(x, d, gap, Wt, A, M, 1, offsets[c], offsets[c + 1], w.ex,
                                        w.stamp, w.cur)
    return w.winnr[c]


cdef inline bint _nearer(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                         Py_ssize_t a, float da, Py_ssize_t b, float db, double gap,
                         Work *w) noexcept nogil:
    """Whether neuron a is before neuron b in the exact (distance, index) order, given their
    screening values da and db: decided by those unless within the gap of each other."""
    cdef Entry e1, e2
    if <double> da + gap < <double> db:
        return True
    if <double> db + gap < <double> da:
        return False
    w.cnt[3] += 1
    e1.d = _exact(x, Wt, A, M, a, w)
    e1.j = a
    e2.d = _exact(x, Wt, A, M, b, w)
    e2.j = b
    return _less(e1, e2)


cdef inline void _nearest_exact(const floating *x, const floating *Wt, Py_ssize_t A,
                                Py_ssize_t M, Py_ssize_t n_amb, Py_ssize_t need,
                                Work *w) noexcept nogil:
    """Put the need nearest, exactly, of the n_amb neurons in doubt (w.amb) first (exact
    distances only when some are left out)."""
    cdef Py_ssize_t j
    if need < n_amb:
        w.cnt[1] += 1
        for j in range(n_amb):
            w.amb[j].d = _exact(x, Wt, A, M, w.amb[j].j, w)
        _select_smallest(w.amb, n_amb, need)


cdef inline void _gap_window(double t, double gap, float *f1, float *f2) noexcept nogil:
    """OUT [f1, f2): float32 bounds that hold every value v with t - gap <= v <= t + gap (and
    only a few more): the screening values whose order against t the gap leaves in doubt."""
    cdef float a = <float> (t - gap), b = <float> (t + gap)
    if <double> a > t - gap:
        a = nextafterf(a, -INFINITY)
    if <double> b < t + gap:
        b = nextafterf(b, INFINITY)
    f1[0] = a
    f2[0] = nextafterf(b, INFINITY)


cdef inline bint _bayes_rhs(const int64_t *T, const double *logC, Py_ssize_t L, Py_ssize_t c,
                            const uint8_t *in_y, bint skip_zero, double *rhs) noexcept nogil:
    """The right-hand side of the Bayes test of label c given the labels in_y already predicted
    (OUT rhs); False when a zero P[d, c] for d in in_y rules c out (unless skip_zero)."""
    cdef Py_ssize_t kk
    cdef double s = 0.0
    for kk in range(L):
        if kk == c:
            continue
        if in_y[kk]:
            if T[kk * L + c] == 0 and not skip_zero:
                return False
        elif T[kk * L + c] > 0:
            s = s + logC[kk * L + c]
    rhs[0] = s
    return True


cdef inline bint _bayes_accept(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                               Py_ssize_t bc, float dv, double gap, double rhs,
                               const double *logA, bint squared, Work *w) noexcept nogil:
    """The Bayes test -dist - log averOut_bc >= rhs for the best-matching unit bc, whose screening
    value is dv. The test is monotone in the distance: the exact distance lies within gap / 2 of
    the screening value, and it is only computed when the test differs at the two ends."""
    cdef double lo_d = <double> dv - 0.5 * gap, hi_d = <double> dv + 0.5 * gap, dist
    lo_d = lo_d if lo_d > 0.0 else 0.0
    if not squared:
        lo_d = sqrt(lo_d)
        hi_d = sqrt(hi_d)
    if -hi_d - logA[bc] >= rhs:
        return True
    if -lo_d - logA[bc] < rhs:
        return False
    w.cnt[4] += 1
    dist = _exact(x, Wt, A, M, bc, w)
    if not squared:
        dist = sqrt(dist)
    return -dist - logA[bc] >= rhs


cdef Py_ssize_t _classify(const floating *x, const float *d, double gap, const floating *Wt,
                          Py_ssize_t A, Py_ssize_t M, const int32_t *ncls, const int64_t *offsets,
                          Py_ssize_t L, const int64_t *T, const double *logC, const double *logA,
                          Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                          Work *w) noexcept nogil:
    """Classify x from a frozen state, given its screening distances d to every neuron and the gap
    2 tol that bounds their disagreement with the exact distances (infinite: every decision exact).

    OUT w.rank[:n_ranked], w.in_y, w.winnr. Returns the number of labels predicted; the labels are
    w.rank[r] for r with w.in_y set.
    """
    cdef Py_ssize_t c, j, r, n_pool, n_ent, n_amb, n_def, need, best, kk, bc, bb2, ca, cb, cp
    cdef Py_ssize_t old, p_
    cdef Py_ssize_t n_pred = 0, n_ranked = 0
    cdef double rhs, lo, hi, t
    cdef float fa, fb, fp, fq, f1, f2, ftop, fa_w
    cdef double q1, q2, m, inv
    cdef Py_ssize_t cq
    cdef bint bisect
    cdef float *dp = w.dp
    w.cur += 1

    # 1. the best-matching unit of a map is found when it is first needed (_winner): for a tie,
    #    for the Bayes test of a ranked label, for the update of a predicted one
    n_pool = 0
    for c in range(L):
        w.skip[c] = offsets[c + 1] == offsets[c]
        w.in_y[c] = 0
        w.winnr[c] = -2 if offsets[c + 1] > offsets[c] else -1
        n_pool += offsets[c + 1] - offsets[c]

    # 2. winner-class ranking: the k_nn nearest neurons of the classes not yet ranked vote; the
    #    majority wins; ties go to the class whose nearest voting neuron is closest, then to the
    #    lower class index. A class's nearest voting neuron is its best-matching unit, so ties are
    #    settled by the (distance, index) order of the best-matching units.
    #    The k_nn nearest are found without sorting. The k_nn-th smallest screening value t of
    #    the pool (dp: the classes already ranked at +inf) is searched for by counting the values
    #    below a trial value (one vectorised pass each), the trial values interpolated between a
    #    bracket [fa, fb) (#{dp < fa} < k_nn <= #{dp < fb}), with a bisection whenever an
    #    interpolation fails to halve the values left in the bracket, until at most WIN are left;
    #    those are gathered and selected. The neurons below t - gap are then among the k_nn
    #    nearest exactly, those above t + gap are not, and the nearest (exactly) of those in
    #    between complete them. Removing a class can only raise t, so each pass starts from the
    #    previous pass's t.
    hi = mlsom_max_f(d, M, &lo)
    memcpy(dp, d, M * sizeof(float))
    fa = <float> lo
    ca = 0
    ftop = nextafterf(<float> hi, INFINITY)
    for p_ in range(n_rank):
        if n_pool == 0:
            break  # every map has been ranked
        for c in range(L):
            w.votes[c] = 0
        if n_pool <= k_nn:
            for c in range(L):
                if not w.skip[c]:
                    w.votes[c] = offsets[c + 1] - offsets[c]
        else:
            if isfinite(gap):
                if p_ > 0:
                    # the values of the pool below the last round's t (counted then, per map)
                    ca = 0
                    for c in range(L):
                        if not w.skip[c]:
                            ca += w.below[c]
                fb = ftop
                cb = n_pool
                bisect = False
                while cb - ca > WIN:
                    old = cb - ca
                    # two trial values around the expected place of the k_nn-th value (linear
                    # interpolation within the bracket), a margin of m values either side
                    if bisect:
                        q1 = 1.0 / 3.0
                        q2 = 2.0 / 3.0
                    else:
                        m = 0.125 * WIN + 0.03125 * old
                        inv = 1.0 / <double> old
                        q1 = (<double> (k_nn - ca) - 0.5 - m) * inv
                        q2 = (<double> (k_nn - ca) - 0.5 + m) * inv
                        if q1 < 0.5 * (<double> (k_nn - ca) - 0.5) * inv:
                            q1 = 0.5 * (<double> (k_nn - ca) - 0.5) * inv
                        if q2 > 1.0 - 0.5 * (<double> (cb - k_nn) + 0.5) * inv:
                            q2 = 1.0 - 0.5 * (<double> (cb - k_nn) + 0.5) * inv
                    fp = <float> (<double> fa + (<double> fb - <double> fa) * q1)
                    fq = <float> (<double> fa + (<double> fb - <double> fa) * q2)
                    if fa < fp and fp < fq and fq < fb:
                        cp = mlsom_count_lt2_f(dp, M, fp, fq, &cq)
                        if cp >= k_nn:
                            fb = fp
                            cb = cp
                        elif cq < k_nn:
                            fa = fq
                            ca = cq
                        else:
                            fa = fp
                            ca = cp
                            fb = fq
                            cb = cq
                    else:
                        fp = <float> (0.5 * <double> fa + 0.5 * <double> fb)
                        if not (fp > fa and fp < fb):
                            w.cnt[2] += 1   # no value left between fa and fb
                            break
                        cp = mlsom_count_lt_f(dp, M, fp)
                        if cp < k_nn:
                            fa = fp
                            ca = cp
                        else:
                            fb = fp
                            cb = cp
                    bisect = 2 * (cb - ca) > old
                n_ent = mlsom_gather_range_f(dp, M, fa, fb, w.ent)
                need = k_nn - ca
                _select_smallest(w.ent, n_ent, need)
                t = w.ent[0].d
                for j in range(1, need):
                    t = w.ent[j].d if w.ent[j].d > t else t
                fa_w = fa
                fa = <float> t   # exactly: t is one of the values
                _gap_window(t, gap, &f1, &f2)
                # per map in the pool: the values below f1 (their votes) and below t (for the
                # next round's start), in one pass
                mlsom_count_maps_f(d, offsets, L, w.skip, f1, fa, w.votes, w.below)
                n_def = 0
                for c in range(L):
                    n_def += w.votes[c]
                if f1 >= fa_w and f2 <= fb:
                    # the window holds every value in [f1, f2)
                    n_amb = 0
                    for j in range(n_ent):
                        if w.ent[j].d >= f1 and w.ent[j].d < f2:
                            w.amb[n_amb] = w.ent[j]
                            n_amb += 1
                else:
                    n_amb = mlsom_gather_range_f(dp, M, f1, f2, w.amb)
                need = k_nn - n_def
            else:
                # every distance decided exactly: the whole pool is in doubt
                n_amb = mlsom_gather_range_f(dp, M, -INFINITY, INFINITY, w.amb)
                need = k_nn
            _nearest_exact(x, Wt, A, M, n_amb, need, w)
            for j in range(need):
                w.votes[ncls[w.amb[j].j]] += 1
        best = -1
        for c in range(L):
            if w.votes[c] == 0:
                continue
            if best < 0 or w.votes[c] > w.votes[best]:
                best = c
            elif w.votes[c] == w.votes[best]:
                # the nearer best-matching unit wins; screening decides unless within the gap
                bc = _winner(x, d, gap, Wt, A, M, offsets, c, w)
                bb2 = _winner(x, d, gap, Wt, A, M, offsets, best, w)
                if _nearer(x, Wt, A, M, bc, d[bc], bb2, d[bb2], gap, w):
                    best = c
        w.rank[n_ranked] = best
        n_ranked += 1
        w.skip[best] = 1
        for j in range(offsets[best], offsets[best + 1]):
            dp[j] = INFINITY
        n_pool -= offsets[best + 1] - offsets[best]

    # 3. Bayes decision in log space. The score p(c) prod_{d in Y} P[d,c] out_c is compared with
    #    the threshold p(c) prod_{k != c, P[k,c] > 0} P[k,c] averOut_b. Their common factors cancel,
    #    which leaves: accept c iff no P[d,c] = 0 for d in Y (unless skip_zero) and
    #    -dist - log averOut_b >= sum_{k not in Y, k != c, P[k,c] > 0} log P[k,c].
    for r in range(n_ranked, L):
        w.rank[r] = -1
    if n_ranked == 0:
        return 0
    w.in_y[w.rank[0]] = 1
    n_pred = 1
    for r in range(1, n_ranked):
        c = w.rank[r]
        if not _bayes_rhs(T, logC, L, c, w.in_y, skip_zero, &rhs):
            continue
        bc = _winner(x, d, gap, Wt, A, M, offsets, c, w)
        if _bayes_accept(x, Wt, A, M, bc, d[bc], gap, rhs, logA, squared, w):
            w.in_y[c] = 1
            n_pred += 1
    return n_pred



cdef inline Py_ssize_t _ceil_div(int64_t a, int64_t b) noexcept nogil:
    return <Py_ssize_t> ((a + b - 1) // b)


def stream(const floating[:, ::1] X, floating[:, ::1] Wt, const int32_t[::1] ncls,
           const int64_t[::1] offsets, int64_t[::1] counts, double[::1] logA, int64_t[:, ::1] T,
           int64_t[::1] NS, Py_ssize_t k_nn, double eta, bint squared, bint skip_zero,
           float[:, ::1] Ws, float[::1] ww, const double[::1] cc, uint8_t[:, ::1] Y):
    """The online phase over a chunk of the stream, in order, adapting after every instance.

    IN  X (n, A); ncls (M) label of each neuron; offsets (L+1) neurons of label c are
        offsets[c]:offsets[c+1].
    IN/OUT Wt (A, M) weights; counts (M) n_b; logA (M) log averOut; T (L, L) label (co-)counts;
           NS (2) = [N, S], instances seen and sum of predicted label-set sizes;
           Ws (A, M), ww (M): the screening copy of Wt centred on cc (screening_copy), kept in
           step with Wt as neurons move.
    OUT Y (n, L): the 0/1 predictions.
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t row, r, c, c2, b, i, n_pred, n_rank
    cdef int64_t N, S, nb
    cdef double dist, gap, wwmax, tscale
    cdef floating etaf = <floating> eta, wv, tv, s
    cdef floating sl[8]
    cdef Py_ssize_t a8 = A - A % 8
    cdef float nrm, ws
    cdef const floating *x
    cdef floating *wt = &Wt[0, 0]
    cdef float *d
    cdef float *G = NULL
    cdef float *X2 = NULL
    cdef double xxb[4]
    cdef float base4[4]
    cdef float gp[3]
    cdef const float *xp
    cdef Py_ssize_t npend
    cdef Py_ssize_t s0, e0, r2, j
    cdef bint screening = _screening
    cdef int64_t *t = &T[0, 0]
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    cdef Work *w = _work_alloc(M, L)
    G = <float *> malloc(4 * M * sizeof(float))
    X2 = <float *> malloc(4 * A * sizeof(float))
    if w == NULL or G == NULL or X2 == NULL:
        _work_free(w)
        free(G)
        free(X2)
        raise MemoryError()
    try:
        with nogil:
            for c in range(L):
                _log_cond(t, L, &logC[0, 0], c)
            wwmax = _maxval(&ww[0], M)
            tscale = _tol_scale(A)
            N = NS[0]
            S = NS[1]
            # Instances are screened four at a time against the current neurons (the four-row
            # kernel loads each weight once for the four); the screening values of a neuron that
            # moves are then recomputed for the instances of the block still to come, so every
            # instance is screened against the neurons as they are when its turn comes.
            s0 = 0
            while s0 < n:
                e0 = min(n, s0 + 4)
                if screening:
                    for row in range(s0, e0):
                        xxb[row - s0] = _centre_row(&X[row, 0], &cc[0], A, X2 + (row - s0) * A)
                    _screen_rows(X2, xxb, e0 - s0, &Ws[0, 0], &ww[0], A, M, G, base4, NULL, NULL,
                                 NULL)
                for row in range(s0, e0):
                    x = &X[row, 0]
                    d = G + (row - s0) * M
                    n_rank = _ceil_div(S, N)
                    if n_rank > L:
                        n_rank = L
                    gap = _screen_gap(tscale, xxb[row - s0], wwmax) if screening else INFINITY
                    if not isfinite(gap):
                        gap = INFINITY   # every neuron a candidate: all distances exact
                        for j in range(M):
                            d[j] = 0
                    n_pred = _classify(x, d, gap, wt, A, M, &ncls[0], &offsets[0], L, t,
                                       &logC[0, 0], &logA[0], k_nn, n_rank, squared, skip_zero,
                                       w)
                    # the best-matching unit of every predicted map moves towards x; its new norm
                    # and its exact distance to x after the move are computed on the way
                    N += 1
                    S += n_pred
                    for r in range(L):
                        c = w.rank[r]
                        if c < 0:
                            break
                        if not w.in_y[c]:
                            continue
                        b = _winner(x, d, gap, wt, A, M, &offsets[0], c, w)
                        # (the distance summed in _sqdist_col's order)
                        for i in range(8):
                            sl[i] = 0
                        nrm = 0
                        # the instances of the block still to come: their screening values of
                        # the moved neuron, summed on the way (npend of them, at most 3)
                        npend = e0 - row - 1 if screening else 0
                        gp[0] = 0
                        gp[1] = 0
                        gp[2] = 0
                        xp = X2 + (row + 1 - s0) * A
                        for i in range(A):
                            wv = wt[i * M + b]
                            wv = wv + etaf * (x[i] - wv)
                            wt[i * M + b] = wv
                            tv = x[i] - wv
                            if i < a8:
                                sl[i & 7] = sl[i & 7] + tv * tv
                            else:
                                if i == a8:
                                    s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + (
                                        (sl[4] + sl[5]) + (sl[6] + sl[7]))
                                s = s + tv * tv
                            ws = <float> (<double> wv - cc[i])
                            Ws[i, b] = ws
                            nrm = nrm + ws * ws
                            if npend > 0:
                                gp[0] = gp[0] + xp[i] * ws
                                if npend > 1:
                                    gp[1] = gp[1] + xp[A + i] * ws
                                    if npend > 2:
                                        gp[2] = gp[2] + xp[2 * A + i] * ws
                        if a8 == A:
                            s = ((sl[0] + sl[1]) + (sl[2] + sl[3])) + (
                                (sl[4] + sl[5]) + (sl[6] + sl[7]))
                        ww[b] = nrm
                        if nrm > wwmax:
                            wwmax = nrm
                        for r2 in range(npend):
                            G[(row + 1 + r2 - s0) * M + b] = (
                                (<float> xxb[row + 1 + r2 - s0] + nrm) + gp[r2])
                        # averOut: running mean, in log space, of exp(-distance after the move)
                        dist = s if squared else sqrt(<double> s)
                        nb = counts[b]
                        logA[b] = (_logaddexp(log(<double> nb) + logA[b], -dist)
                                   - log(<double> (nb + 1)))
                        if logA[b] > 0.0:
                            logA[b] = 0.0   # a mean of values <= 1 is <= 1; rounding could say more
                        counts[b] = nb + 1
                        Y[row, c] = 1
                        # co-occurrence counts of the predicted pairs (c, c2)
                        for c2 in range(L):
                            if w.in_y[c2]:
                                t[c * L + c2] += 1
                    # the conditional probabilities of the changed columns
                    for c in range(L):
                        if w.in_y[c]:
                            _log_cond(t, L, &logC[0, 0], c)
                s0 = e0
            NS[0] = N
            NS[1] = S
    finally:
        _work_free(w)
        free(G)
        free(X2)


# --------------------------------------------------------------------------------------------------
# frozen scoring 16 rows at a time (the AVX-512 path)
# --------------------------------------------------------------------------------------------------
#
# predict screens 64 rows at a time into four groups of 16 stored neuron-major (one vector holds a
# neuron's values for the 16 rows of a group), and ranks the classes of a group's rows together:
# the kernels of _kernels.h narrow every row's bracket of the k-th smallest value of its pool,
# order the few values left in it, count the votes below the (k+1)-th smallest value and pick
# the winners, each a vector operation per neuron for the 16 rows. The k nearest neurons of a
# row are the neurons below its (k+1)-th smallest screening value vk1 whenever vk1 is more than
# the gap above the k-th vk (then every one of them is nearer than every other neuron, exactly);
# otherwise that row's round is settled here from exact distances, as _classify does. Ties of
# votes the screening leaves in doubt, the best-matching units the Bayes test needs and the
# test itself are settled row by row. A row whose values the group's kernels cannot handle
# (non-finite or huge values, a search that does not converge) is classified by _classify from
# its values alone. Every decision is the exact one, so the results are those of _classify.

cdef enum:
    LANES_PASSES = 24   # passes of the search per round before a row goes to _classify
    LANES_HIST = 32     # trial values of a group's searches kept for its later rounds
    LANES_MIN = 32      # fewer rows than this in a chunk: row by row (a padded chunk costs more)


ctypedef struct Lanes:
    float *xb       # (64, A) -2 x' of the 64 rows, blocked (16 rows per block, feature-major)
    float *base     # (64) |x'|^2 in float32 (0 for padding rows)
    float *gt       # (4, M, 16) screening values, gt[16 M q + 16 j + l] for row 16 q + l
    float *m1       # (L, 64) per map and row: smallest screening value ...
    int32_t *i1     # (L, 64) ... its first index ...
    float *m2       # (L, 64) ... the smallest of the others
    float *hi       # (64) largest screening value of each row
    float *row      # (16, A rounded up to 16) scratch of the centring
    float *d        # (M) one row's screening values, for _classify
    uint16_t *fm    # (M + 16) scratch of the window kernel
    int32_t *fj     # (M + 16)
    int32_t *votes  # (L, 16)
    uint16_t *pool  # (L) rows (bits) whose pool still holds the map
    Py_ssize_t *rank  # (16, L) the winner classes of each row in order
    float *ht       # (LANES_HIST, 16) the search's trial values ...
    int32_t *hc     # (LANES_HIST, L, 16) ... their counts per map ...
    uint16_t *hv    # (LANES_HIST) ... for these rows
    int nh
    double xx[64]
    double gap[16]
    float gapf[16]  # the gap in float32, rounded up (with a margin for the rounding of a difference)
    float lo[16]    # smallest screening value of the row
    float fa[16]
    float fb[16]
    float ftop[16]  # just above the largest value of the row
    float vk[16]
    float vk1[16]
    int32_t ca[16]
    int32_t cb[16]
    int32_t win[16]
    int32_t npool[16]
    Py_ssize_t nrk[16]


cdef Lanes *_lanes_alloc(Py_ssize_t A, Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Lanes *z = <Lanes *> malloc(sizeof(Lanes))
    if z == NULL:
        return NULL
    z.xb = <float *> malloc(64 * A * sizeof(float))
    z.base = <float *> malloc(64 * sizeof(float))
    z.gt = <float *> malloc(64 * M * sizeof(float))
    z.m1 = <float *> malloc(64 * L * sizeof(float))
    z.i1 = <int32_t *> malloc(64 * L * sizeof(int32_t))
    z.m2 = <float *> malloc(64 * L * sizeof(float))
    z.hi = <float *> malloc(64 * sizeof(float))
    z.row = <float *> malloc(16 * ((A + 15) // 16 * 16) * sizeof(float))
    z.d = <float *> malloc(M * sizeof(float))
    z.fm = <uint16_t *> malloc((M + 16) * sizeof(uint16_t))
    z.fj = <int32_t *> malloc((M + 16) * sizeof(int32_t))
    z.votes = <int32_t *> malloc(16 * L * sizeof(int32_t))
    z.pool = <uint16_t *> malloc(L * sizeof(uint16_t))
    z.rank = <Py_ssize_t *> malloc(16 * L * sizeof(Py_ssize_t))
    z.ht = <float *> malloc(16 * LANES_HIST * sizeof(float))
    z.hc = <int32_t *> malloc(16 * LANES_HIST * L * sizeof(int32_t))
    z.hv = <uint16_t *> malloc(LANES_HIST * sizeof(uint16_t))
    if (z.xb == NULL or z.base == NULL or z.gt == NULL or z.m1 == NULL or z.i1 == NULL
            or z.m2 == NULL or z.hi == NULL or z.row == NULL or z.d == NULL or z.fm == NULL
            or z.fj == NULL or z.votes == NULL or z.pool == NULL or z.rank == NULL
            or z.ht == NULL or z.hc == NULL or z.hv == NULL):
        _lanes_free(z)
        return NULL
    return z


cdef void _lanes_free(Lanes *z) noexcept nogil:
    if z == NULL:
        return
    free(z.xb)
    free(z.base)
    free(z.gt)
    free(z.m1)
    free(z.i1)
    free(z.m2)
    free(z.hi)
    free(z.row)
    free(z.d)
    free(z.fm)
    free(z.fj)
    free(z.votes)
    free(z.pool)
    free(z.rank)
    free(z.ht)
    free(z.hc)
    free(z.hv)
    free(z)


cdef Py_ssize_t _lane_bmu(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t c,
                          float m1, int32_t i1, float m2, double gap, float gapf,
                          Work *w) noexcept nogil:
    """The exact first nearest neuron of map c for row l of a group (g), from the map's smallest
    screening value m1, its first index i1 and the smallest of the others m2: i1 unless another
    value lies within the gap, then the exact nearest of the candidates (_refine_argmin's rule)."""
    cdef Py_ssize_t j, best = -1
    cdef double e, be = INFINITY
    cdef float limt
    if m2 - m1 > gapf:
        return i1
    w.cnt[0] += 1
    limt = _float_up(<double> m1 + gap)
    for j in range(offsets[c], offsets[c + 1]):
        if g[16 * j + l] <= limt:
            e = _exact(x, Wt, A, M, j, w)
            if best < 0 or e < be:
                be = e
                best = j
    return best


cdef void _lane_knn_exact(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t L,
                          const int32_t *ncls, const uint16_t *pool, Py_ssize_t k_nn,
                          float vk, float vk1, float fa, float fb, const uint16_t *fm,
                          const int32_t *fj, Py_ssize_t nf, double gap, int32_t *votes,
                          Work *w) noexcept nogil:
    """IN/OUT votes[16 c + l]: given the counts below vk1 (the window kernel's votes), the votes of
    the k_nn nearest neurons of row l's pool, exactly: its k_nn-th smallest screening value is
    vk, and the values within the gap of it get exact distances. Those values are taken from the
    window's neurons (fm, fj, nf) when they all lie in the row's bracket [fa, fb), from a pass
    over the row otherwise."""
    cdef Py_ssize_t c, j, f, n_amb = 0, need = k_nn
    cdef uint16_t bit = <uint16_t> (1 << l)
    cdef double t = <double> vk
    cdef float f1, f2, v
    w.cnt[7] += 1
    _gap_window(t, gap, &f1, &f2)
    if f1 >= fa and f2 <= fb:
        # [f1, f2) in the bracket: the values there are window values; those below vk1 leave
        # the counts, which then are the counts below f1
        for f in range(nf):
            j = fj[f]
            if fm[j] & bit:
                v = g[16 * j + l]
                if v >= f1 and v < f2:
                    w.amb[n_amb].d = v
                    w.amb[n_amb].j = j
                    n_amb += 1
                    if v < vk1:
                        votes[16 * ncls[j] + l] -= 1
        for c in range(L):
            need -= votes[16 * c + l]
    else:
        w.cnt[8] += 1
        for c in range(L):
            votes[16 * c + l] = 0
            if not (pool[c] & bit):
                continue
            for j in range(offsets[c], offsets[c + 1]):
                v = g[16 * j + l]
                if v < f1:
                    votes[16 * c + l] += 1
                    need -= 1
                elif v < f2:
                    w.amb[n_amb].d = v
                    w.amb[n_amb].j = j
                    n_amb += 1
    _nearest_exact(x, Wt, A, M, n_amb, need, w)
    for j in range(need):
        votes[16 * ncls[w.amb[j].j] + l] += 1


cdef Py_ssize_t _lane_tie(const floating *x, const floating *Wt, Py_ssize_t A, Py_ssize_t M,
                          const float *g, Py_ssize_t l, const int64_t *offsets, Py_ssize_t L,
                          const uint16_t *pool, const int32_t *votes, const float *m1,
                          const int32_t *i1, const float *m2, double gap, float gapf,
                          Work *w) noexcept nogil:
    """The winner of row l's round, its ties settled as _classify settles them (m1, i1, m2: the
    group's per-map minima, map c's for row l at [64 c + l])."""
    cdef Py_ssize_t c, best = -1, bc, bb
    cdef uint16_t bit = <uint16_t> (1 << l)
    for c in range(L):
        if not (pool[c] & bit) or votes[16 * c + l] == 0:
            continue
        if best < 0 or votes[16 * c + l] > votes[16 * best + l]:
            best = c
        elif votes[16 * c + l] == votes[16 * best + l]:
            bc = _lane_bmu(x, Wt, A, M, g, l, offsets, c, m1[64 * c + l], i1[64 * c + l],
                           m2[64 * c + l], gap, gapf, w)
            bb = _lane_bmu(x, Wt, A, M, g, l, offsets, best, m1[64 * best + l],
                           i1[64 * best + l], m2[64 * best + l], gap, gapf, w)
            if _nearer(x, Wt, A, M, bc, g[16 * bc + l], bb, g[16 * bb + l], gap, w):
                best = c
    return best


cdef void _lanes_group(const floating *px, Py_ssize_t row0, Py_ssize_t nrow, Py_ssize_t q,
                       const floating *Wt, Py_ssize_t A, Py_ssize_t M, const int32_t *ncls,
                       const int64_t *offsets, Py_ssize_t L, const int64_t *T,
                       const double *logC, const double *logA, Py_ssize_t k_nn,
                       Py_ssize_t n_rank, bint squared, bint skip_zero, double tscale,
                       double wwmax, uint8_t *Y, Lanes *z, Work *w) noexcept nogil:
    """Classify rows row0 .. row0 + nrow - 1 (nrow <= 16), group q of the chunk screened in z;
    OUT Y (their rows)."""
    cdef const float *g = z.gt + 16 * M * q
    cdef const float *m1 = z.m1 + 16 * q
    cdef const int32_t *i1 = z.i1 + 16 * q
    cdef const float *m2 = z.m2 + 16 * q
    cdef uint16_t live = <uint16_t> ((1 << nrow) - 1)
    cdef uint16_t lanes, fallback = 0, act, small, failed, doubt, redo, bit
    cdef Py_ssize_t l, c, p_, j, r, bc, row, nf = 0
    cdef double gp, gm, rhs
    cdef float gf, h, lo
    cdef int32_t k32 = <int32_t> k_nn
    cdef const floating *x
    # per row: the gap, the start of the search
    for l in range(nrow):
        gp = _screen_gap(tscale, z.xx[16 * q + l], wwmax)
        h = z.hi[16 * q + l]
        z.gap[l] = gp
        if not (isfinite(gp) and h < 1e30):
            fallback |= <uint16_t> (1 << l)
            continue
        gm = gp * (1.0 + 1.0 / 1048576.0)
        gf = <float> gm
        if <double> gf < gm:
            gf = nextafterf(gf, INFINITY)
        z.gapf[l] = gf
        lo = INFINITY
        for c in range(L):
            if offsets[c + 1] > offsets[c] and m1[64 * c + l] < lo:
                lo = m1[64 * c + l]
        z.lo[l] = lo
        z.fa[l] = lo
        z.ca[l] = 0
        z.ftop[l] = nextafterf(h, INFINITY)
        z.fb[l] = z.ftop[l]
        z.npool[l] = <int32_t> M
        z.cb[l] = <int32_t> M
        z.nrk[l] = 0
    lanes = live & ~fallback
    z.nh = 0
    for c in range(L):
        z.pool[c] = lanes if offsets[c + 1] > offsets[c] else 0
    for p_ in range(n_rank):
        act = 0
        small = 0
        for l in range(nrow):
            bit = <uint16_t> (1 << l)
            if lanes & bit:
                if z.npool[l] > k_nn:
                    act |= bit
                elif z.npool[l] > 0:
                    small |= bit
        if act == 0 and small == 0:
            break
        redo = 0
        if act:
            failed = mlsom_lanes_search_f(g, offsets, L, z.pool, k32, act, LANES_PASSES, z.fa,
                                          z.ca, z.fb, z.cb, z.ht, z.hc, z.hv, &z.nh, LANES_HIST)
            if failed:
                act &= ~failed
                lanes &= ~failed
                fallback |= failed
                for c in range(L):
                    z.pool[c] &= ~failed
            if act:
                nf = mlsom_lanes_window_f(g, offsets, L, z.pool, k32, act, z.fa, z.ca, z.fb,
                                          z.cb, z.vk, z.vk1, z.votes, z.fm, z.fj)
            for l in range(nrow):
                bit = <uint16_t> (1 << l)
                if (act & bit) and not (<double> z.vk1[l] - <double> z.vk[l]
                                        > z.gap[l] * (1.0 + 1e-12)):
                    # the order at the boundary is in doubt: settle this row's round exactly
                    w.cur += 1
                    _lane_knn_exact(px + (row0 + l) * A, Wt, A, M, g, l, offsets, L, ncls,
                                    z.pool, k_nn, z.vk[l], z.vk1[l], z.fa[l], z.fb[l], z.fm,
                                    z.fj, nf, z.gap[l], z.votes, w)
                    redo |= bit
        for l in range(nrow):
            bit = <uint16_t> (1 << l)
            if small & bit:
                # the whole pool votes
                w.cnt[9] += 1
                for c in range(L):
                    z.votes[16 * c + l] = <int32_t> (
                        offsets[c + 1] - offsets[c] if z.pool[c] & bit else 0)
        doubt = mlsom_lanes_winner(z.votes, L, z.pool, m1, z.gapf, act | small, z.win)
        for l in range(nrow):
            bit = <uint16_t> (1 << l)
            if not ((act | small) & bit):
                continue
            if doubt & bit:
                w.cur += 1
                z.win[l] = <int32_t> _lane_tie(px + (row0 + l) * A, Wt, A, M, g, l, offsets, L,
                                               z.pool, z.votes, m1, i1, m2, z.gap[l],
                                               z.gapf[l], w)
            c = z.win[l]
            if c < 0:
                # no votes (cannot happen once the round's k nearest are settled): the row goes
                # to the row-by-row path
                lanes &= ~bit
                fallback |= bit
                for j in range(L):
                    z.pool[j] &= ~bit
                continue
            z.rank[l * L + z.nrk[l]] = c
            z.nrk[l] += 1
            z.pool[c] &= ~bit
            z.npool[l] -= <int32_t> (offsets[c + 1] - offsets[c])
            if (redo | small) & bit:
                z.fa[l] = z.lo[l]
                z.ca[l] = 0
            else:
                # the pool's values below vk1 are the k nearest; the winner's leave
                z.fa[l] = z.vk1[l]
                z.ca[l] = k32 - z.votes[16 * c + l]
            z.fb[l] = z.ftop[l]
            z.cb[l] = z.npool[l]
    # the Bayes decision, row by row
    for l in range(nrow):
        bit = <uint16_t> (1 << l)
        row = row0 + l
        x = px + row * A
        if fallback & bit:
            w.cnt[6] += 1
            for j in range(M):
                z.d[j] = g[16 * j + l]
            gp = z.gap[l]
            if not isfinite(gp):
                gp = INFINITY   # every neuron a candidate: all distances exact
                for j in range(M):
                    z.d[j] = 0
            _classify(x, z.d, gp, Wt, A, M, ncls, offsets, L, T, logC, logA, k_nn, n_rank,
                      squared, skip_zero, w)
            for c in range(L):
                Y[row * L + c] = w.in_y[c]
            continue
        w.cnt[5] += 1
        w.cur += 1
        for c in range(L):
            w.in_y[c] = 0
        if z.nrk[l] > 0:
            w.in_y[z.rank[l * L]] = 1
        for r in range(1, z.nrk[l]):
            c = z.rank[l * L + r]
            if not _bayes_rhs(T, logC, L, c, w.in_y, skip_zero, &rhs):
                continue
            bc = _lane_bmu(x, Wt, A, M, g, l, offsets, c, m1[64 * c + l], i1[64 * c + l],
                           m2[64 * c + l], z.gap[l], z.gapf[l], w)
            if _bayes_accept(x, Wt, A, M, bc, g[16 * bc + l], z.gap[l], rhs, logA, squared, w):
                w.in_y[c] = 1
        for c in range(L):
            Y[row * L + c] = w.in_y[c]


cdef void _lanes_chunk(const floating *px, Py_ssize_t n, Py_ssize_t s, Py_ssize_t e,
                       const double *pc,
                       const float *pws, const float *pww, const floating *Wt, Py_ssize_t A,
                       Py_ssize_t M, const int32_t *ncls, const int64_t *offsets, Py_ssize_t L,
                       const int64_t *T, const double *logC, const double *logA,
                       Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                       double tscale, double wwmax, uint8_t *Y, Lanes *z,
                       Work *w) noexcept nogil:
    """Classify rows s .. e - 1 (at most 64): screen them (rows past e padded with zeros), then
    each group of 16."""
    cdef Py_ssize_t r, q, nr, n_next
    for q in range(4):
        nr = e - s - 16 * q
        nr = 0 if nr < 0 else (16 if nr > 16 else nr)
        if floating is double:
            mlsom_centre16_d(px + (s + 16 * q) * A, A, nr, pc, z.row, z.xb + 16 * A * q,
                             z.xx + 16 * q)
        else:
            mlsom_centre16_f(px + (s + 16 * q) * A, A, nr, pc, z.row, z.xb + 16 * A * q,
                             z.xx + 16 * q)
    for r in range(64):
        z.base[r] = <float> z.xx[r]
    # the next chunk's rows (a thread's chunks are consecutive) are read while these are screened
    n_next = min(64, n - e) if e < n else 0
    if n_next > 0:
        mlsom_prefetch(px + e * A, n_next * A * sizeof(floating))
    mlsom_screen64maps_f(z.xb, pws, A, M, z.base, pww, offsets, L, z.gt, z.m1, z.i1, z.m2, z.hi)
    for q in range(4):
        if s + 16 * q < e:
            _lanes_group(px, s + 16 * q, min(16, e - s - 16 * q), q, Wt, A, M, ncls, offsets, L,
                         T, logC, logA, k_nn, n_rank, squared, skip_zero, tscale, wwmax, Y, z, w)


def lanes_screen_values(const floating[:, ::1] X, const floating[:, ::1] Wt,
                        const int64_t[::1] offsets, const double[::1] c):
    """For tests: what predict's 16-row path screens for the rows of X (n, A) and the neurons
    Wt (A, M) in maps offsets (L + 1), centred on c: (G (n, M) the screening values, xx (n) the
    rows' |x'|^2, m1, i1, m2 (n, L) per map the smallest value, its first index and the smallest
    of the others, hi (n) each row's largest value). ValueError where the kernels are not
    selected."""
    if mlsom_screen64maps_f == NULL:
        raise ValueError("the 16-row kernels need the AVX-512 path")
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = offsets.shape[0] - 1
    cdef Py_ssize_t s, e, r, j, q, cc, nr
    if Wt.shape[0] != A or c.shape[0] != A or L < 1 or offsets[0] != 0 or offsets[L] != M:
        raise ValueError("shapes do not match")
    Ws_arr, ww_arr = _shadow(Wt, c)
    cdef const float[:, ::1] Ws = Ws_arr
    cdef const float[::1] ww = ww_arr
    G_arr = np.empty((n, M), dtype=np.float32)
    xx_arr = np.empty(n, dtype=np.float64)
    m1_arr = np.empty((n, L), dtype=np.float32)
    i1_arr = np.empty((n, L), dtype=np.int32)
    m2_arr = np.empty((n, L), dtype=np.float32)
    hi_arr = np.empty(n, dtype=np.float32)
    cdef float[:, ::1] G = G_arr
    cdef double[::1] xxo = xx_arr
    cdef float[:, ::1] m1 = m1_arr
    cdef int32_t[:, ::1] i1 = i1_arr
    cdef float[:, ::1] m2 = m2_arr
    cdef float[::1] hi = hi_arr
    cdef Lanes *z = _lanes_alloc(A, M, L)
    if z == NULL:
        raise MemoryError()
    try:
        for s in range(0, n, 64):
            e = min(n, s + 64)
            for q in range(4):
                nr = e - s - 16 * q
                nr = 0 if nr < 0 else (16 if nr > 16 else nr)
                if floating is double:
                    mlsom_centre16_d(&X[s + 16 * q if nr > 0 else 0, 0], A, nr, &c[0], z.row,
                                     z.xb + 16 * A * q, z.xx + 16 * q)
                else:
                    mlsom_centre16_f(&X[s + 16 * q if nr > 0 else 0, 0], A, nr, &c[0], z.row,
                                     z.xb + 16 * A * q, z.xx + 16 * q)
            for r in range(64):
                z.base[r] = <float> z.xx[r]
            mlsom_screen64maps_f(z.xb, &Ws[0, 0], A, M, z.base, &ww[0], &offsets[0], L, z.gt,
                                 z.m1, z.i1, z.m2, z.hi)
            for r in range(e - s):
                q = r // 16
                for j in range(M):
                    G[s + r, j] = z.gt[16 * M * q + 16 * j + r % 16]
                for cc in range(L):
                    m1[s + r, cc] = z.m1[64 * cc + r]
                    i1[s + r, cc] = z.i1[64 * cc + r]
                    m2[s + r, cc] = z.m2[64 * cc + r]
                xxo[s + r] = z.xx[r]
                hi[s + r] = z.hi[r]
    finally:
        _lanes_free(z)
    return G_arr, xx_arr, m1_arr, i1_arr, m2_arr, hi_arr


def lanes_rank_values(const float[:, ::1] g, const int64_t[::1] offsets,
                      const uint16_t[::1] pool, Py_ssize_t k, const float[::1] gapf):
    """For tests: one round of the 16-row kernels on the values g (M, 16) (row l's values in
    column l) of maps offsets (L + 1), with pool (L) the rows (bits) whose pool holds each map:
    the search from [min, just above max) of each row's pool, the window and the winner.
    Returns (failed, fa, ca, fb, cb, vk, vk1, votes (L, 16), winner, doubt) for the rows whose
    pool has more than k values (the others: failed and zeros)."""
    if mlsom_lanes_search_f == NULL:
        raise ValueError("the 16-row kernels need the AVX-512 path")
    cdef Py_ssize_t M = g.shape[0], L = offsets.shape[0] - 1, l, c, j
    if g.shape[1] != 16 or L < 1 or pool.shape[0] != L or gapf.shape[0] != 16:
        raise ValueError("shapes do not match")
    if offsets[0] != 0 or offsets[L] != M or k < 1:
        raise ValueError("offsets or k out of range")
    cdef Lanes *z = _lanes_alloc(1, M, L)
    cdef uint16_t act = 0, failed = 0, doubt = 0
    cdef float lo, hi, v
    cdef int32_t n_pool
    if z == NULL:
        raise MemoryError()
    votes_arr = np.zeros((L, 16), dtype=np.int32)
    out = None
    try:
        for c in range(L):
            z.pool[c] = pool[c]
            for l in range(16):
                lo = INFINITY
                for j in range(offsets[c], offsets[c + 1]):
                    lo = g[j, l] if g[j, l] < lo else lo
                z.m1[64 * c + l] = lo   # the winner's tie-break values
        for l in range(16):
            lo = INFINITY
            hi = -INFINITY
            n_pool = 0
            for c in range(L):
                if pool[c] & (1 << l):
                    for j in range(offsets[c], offsets[c + 1]):
                        v = g[j, l]
                        lo = v if v < lo else lo
                        hi = v if v > hi else hi
                        n_pool += 1
            z.fa[l] = lo
            z.ca[l] = 0
            z.fb[l] = nextafterf(hi, INFINITY)
            z.cb[l] = n_pool
            z.vk[l] = 0
            z.vk1[l] = 0
            z.win[l] = -1
            if n_pool > k:
                act |= <uint16_t> (1 << l)
        z.nh = 0
        failed = mlsom_lanes_search_f(&g[0, 0], &offsets[0], L, z.pool, <int32_t> k, act,
                                      LANES_PASSES, z.fa, z.ca, z.fb, z.cb, z.ht, z.hc, z.hv,
                                      &z.nh, LANES_HIST)
        act &= ~failed
        for c in range(L):
            z.pool[c] &= act
        mlsom_lanes_window_f(&g[0, 0], &offsets[0], L, z.pool, <int32_t> k, act, z.fa, z.ca,
                             z.fb, z.cb, z.vk, z.vk1, z.votes, z.fm, z.fj)
        doubt = mlsom_lanes_winner(z.votes, L, z.pool, z.m1, &gapf[0], act, z.win)
        for c in range(L):
            for l in range(16):
                votes_arr[c, l] = z.votes[16 * c + l] if act & (1 << l) else 0
        bits = np.array([(failed >> l) & 1 for l in range(16)], dtype=bool)
        out = (bits,
               np.array([z.fa[l] for l in range(16)], dtype=np.float32),
               np.array([z.ca[l] for l in range(16)], dtype=np.int32),
               np.array([z.fb[l] for l in range(16)], dtype=np.float32),
               np.array([z.cb[l] for l in range(16)], dtype=np.int32),
               np.array([z.vk[l] for l in range(16)], dtype=np.float32),
               np.array([z.vk1[l] for l in range(16)], dtype=np.float32),
               votes_arr,
               np.array([z.win[l] if act & (1 << l) else -1 for l in range(16)], dtype=np.int32),
               np.array([(doubt >> l) & 1 for l in range(16)], dtype=bool))
    finally:
        _lanes_free(z)
    return out


def predict(const floating[:, ::1] X, const floating[:, ::1] Wt, const int32_t[::1] ncls,
            const int64_t[::1] offsets, const double[::1] logA, const int64_t[:, ::1] T,
            int64_t N, int64_t S, Py_ssize_t k_nn, bint squared, bint skip_zero,
            const float[:, ::1] Ws, const float[::1] ww, const double[::1] cc,
            const floating[:, ::1] Wr, uint8_t[:, ::1] Y, long long n_threads_asked):
    """Frozen scoring: classify every row of X independently from the given state.

    IN  X (n, A) and the state (read only), with Ws, ww, cc its screening copy (screening_copy)
    and Wr (M, A) its neurons one per row (the exact distances read them contiguously).
    OUT Y (n, L).
    With the AVX-512 kernels, chunks of 64 rows are spread over n_threads OpenMP threads and
    classified 16 rows at a time (_lanes_chunk); the rows of a last chunk of fewer than LANES_MIN
    rows, and every row elsewhere, go in blocks of PRB rows screened by the four-row kernel and
    classified one by one (_classify). A row's result does not depend on the path, the chunks or
    the threads.
    """
    cdef int n_threads = mlsom_cap_threads(n_threads_asked)
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t ch, s, e, row, c, j, n_rank, n_chunks
    cdef int failed = 0
    cdef double gap, wwmax, tscale
    cdef float *G
    cdef float *X2
    cdef double *xx
    cdef float *g
    cdef Work *w
    cdef Lanes *z
    cdef bint screening = _screening
    # 16 rows at a time where the AVX-512 kernels are selected (the same results), in chunks of
    # 64 rows; a last chunk of fewer than LANES_MIN rows (all of a small call) goes row by row,
    # which is faster than screening a padded chunk of 64
    cdef bint lanes = screening and mlsom_screen64maps_f != NULL and M > 0 and _lanes_on
    cdef Py_ssize_t n_lanes = 0, n_lchunks
    if lanes:
        n_lanes = n // 64 * 64
        if n - n_lanes >= LANES_MIN:
            n_lanes = n
    n_lchunks = (n_lanes + 63) // 64
    n_chunks = (n - n_lanes + PRB - 1) // PRB
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    n_rank = _ceil_div(S, N)
    if n_rank > L:
        n_rank = L
    # raw pointers inside the parallel region (no memoryview checks there in debug builds)
    cdef const floating *px = &X[0, 0]
    cdef const floating *pw = &Wt[0, 0]
    cdef const floating *pwr = &Wr[0, 0]
    cdef const double *pc = &cc[0]
    cdef const float *pws = &Ws[0, 0]
    cdef const float *pww = &ww[0]
    cdef const int32_t *pncls = &ncls[0]
    cdef const int64_t *poff = &offsets[0]
    cdef const double *plogA = &logA[0]
    cdef const int64_t *pT = &T[0, 0]
    cdef const double *plogC = &logC[0, 0]
    cdef uint8_t *pY = &Y[0, 0]
    with nogil:
        for c in range(L):
            _log_cond(pT, L, &logC[0, 0], c)
        wwmax = _maxval(pww, M)
        tscale = _tol_scale(A)
        if lanes:
            with parallel(num_threads=n_threads):
                w = _work_alloc(M, L)
                if w != NULL:
                    w.wr = pwr
                z = _lanes_alloc(A, M, L)
                for ch in prange(n_lchunks, schedule="static"):
                    if w == NULL or z == NULL:
                        failed += 1
                        continue
                    s = ch * 64
                    e = min(n_lanes, s + 64)
                    _lanes_chunk(px, n, s, e, pc, pws, pww, pw, A, M, pncls, poff, L, pT, plogC,
                                 plogA, k_nn, n_rank, squared, skip_zero, tscale, wwmax, pY, z, w)
                _work_free(w)
                _lanes_free(z)
    if failed:
        raise MemoryError()
    if n_lanes == n:
        return
    with nogil:
        with parallel(num_threads=n_threads):
            w = _work_alloc(M, L)
            if w != NULL:
                w.wr = pwr
            G = <float *> malloc((PRB * M + 4) * sizeof(float))
            X2 = <float *> malloc(PRB * A * sizeof(float))
            xx = <double *> malloc(PRB * sizeof(double))
            for ch in prange(n_chunks, schedule="static"):
                if w == NULL or G == NULL or X2 == NULL or xx == NULL:
                    failed += 1
                    continue
                s = n_lanes + ch * PRB
                e = min(n, s + PRB)
                if screening:
                    for row in range(s, e):
                        xx[row - s] = _centre_row(px + row * A, pc, A, X2 + (row - s) * A)
                    _screen_rows(X2, xx, e - s, pws, pww, A, M, G, G + PRB * M, NULL, NULL, NULL)
                for row in range(s, e):
                    g = G + (row - s) * M
                    gap = _screen_gap(tscale, xx[row - s], wwmax) if screening else INFINITY
                    if not isfinite(gap):
                        for j in range(M):   # every neuron a candidate: all distances exact
                            g[j] = 0
                    _classify(px + row * A, g, gap, pw, A, M, pncls, poff, L, pT, plogC, plogA,
                              k_nn, n_rank, squared, skip_zero, w)
                    for c in range(L):
                        pY[row * L + c] = w.in_y[c]
            _work_free(w)
            free(G)
            free(X2)
            free(xx)
    if failed:
        raise MemoryError()


def log_mean_exp(const double[::1] dist, const int64_t[::1] bmu, const int64_t[::1] cnt,
                 double[::1] out):
    """OUT out[b] = log(mean of exp(-dist[i]) over the rows i with bmu[i] == b), at most 0, for
    every unit b with cnt[b] > 0 rows (others are left as they are): fit's offline log averOut.

    A log-sum-exp from each unit's largest term, summed in row order, with the C library's exp
    and log: the same bits on every machine (NumPy's float64 exp and log have SIMD versions that
    round differently on AVX-512 processors).
    """
    cdef Py_ssize_t n = dist.shape[0], M = out.shape[0], i, b
    top_arr = np.full(M, -INFINITY)
    sums_arr = np.zeros(M)
    cdef double[::1] top = top_arr
    cdef double[::1] sums = sums_arr
    with nogil:
        for i in range(n):
            b = bmu[i]
            if -dist[i] > top[b]:
                top[b] = -dist[i]
        for i in range(n):
            b = bmu[i]
            sums[b] += exp(-dist[i] - top[b])
        for b in range(M):
            if cnt[b] > 0:
                out[b] = min(top[b] + log(sums[b]) - log(<double> cnt[b]), 0.0)


def max_threads():
    """The most threads the core will start for one call (the processors OpenMP may use; 1
    without OpenMP), whatever n_jobs asks for."""
    return mlsom_cap_threads(1 << 62)
