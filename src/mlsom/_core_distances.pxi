# Exact distances, the screening bound, and the small helpers around them.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports and the
# kernels' declarations.

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
    _counts[CNT_BMU] += 1
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
