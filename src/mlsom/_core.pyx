# Private compiled core of mlsom: batch Kohonen training, best-matching-unit search, the
# winner-class ranking, the Bayes decision and the per-instance online update.
#
# The functions here trust their inputs: the Python layer (mlsom._som) validates shapes, dtypes,
# contiguity and values before calling them. Arrays are float64, C-contiguous; neurons are stored
# transposed (feature-major, Wt[i, j] = feature i of neuron j) so that the distance kernel of
# _kernels.h vectorises over neurons without re-associating any sum.
#
# Notation follows the method description (docs/method.md): L labels, M kept neurons over all maps,
# A features, N instances seen, S = sum of label-set sizes seen (label cardinality z = S/N).

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, exp, log, log1p, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

import numpy as np

cdef extern from "_kernels.h" nogil:
    ctypedef void (*mlsom_sqdist_fn)(const double *x, const double *Wt, Py_ssize_t A,
                                     Py_ssize_t M, double *out) noexcept nogil
    mlsom_sqdist_fn mlsom_sqdist_t
    ctypedef void (*mlsom_accumulate_fn)(const double *X, Py_ssize_t n, Py_ssize_t A,
                                         const int64_t *bmu, const Py_ssize_t *nb_start,
                                         const Py_ssize_t *nb_unit, const double *nb_h,
                                         int unit_weights, Py_ssize_t M, double *acc,
                                         Py_ssize_t a0, Py_ssize_t a1) noexcept nogil
    mlsom_accumulate_fn mlsom_accumulate
    int mlsom_simd_level
    int mlsom_simd_max_level() noexcept
    int mlsom_set_simd_level(int level) noexcept
    const char *mlsom_simd_name(int level) noexcept
    int mlsom_have_openmp() noexcept


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
    """Select the distance path (0 baseline, 1 AVX2, 2 AVX-512F, -1 best); returns the level used.

    For tests and benchmarks: all paths give bitwise identical distances.
    """
    return mlsom_set_simd_level(level)


mlsom_set_simd_level(-1)


# --------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------

cdef inline double _sqdist_col(const double *x, const double *Wt, Py_ssize_t A, Py_ssize_t M,
                               Py_ssize_t j) noexcept nogil:
    """Squared distance from x to neuron j of a transposed weight table, features in order."""
    cdef Py_ssize_t i
    cdef double s = 0.0, t
    for i in range(A):
        t = x[i] - Wt[i * M + j]
        s = s + t * t
    return s


cdef inline double _logaddexp(double a, double b) noexcept nogil:
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a >= b:
        return a + log1p(exp(b - a))
    return b + log1p(exp(a - b))


cdef inline Py_ssize_t _argmin(const double *v, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Index of the first smallest value of v[lo:hi] (hi > lo)."""
    cdef Py_ssize_t j, best = lo
    cdef double bv = v[lo]
    for j in range(lo + 1, hi):
        if v[j] < bv:
            bv = v[j]
            best = j
    return best


# --------------------------------------------------------------------------------------------------
# offline phase: batch Kohonen training of one map
# --------------------------------------------------------------------------------------------------

cdef int _assign_rows(const double[:, ::1] X, const double *Wt, Py_ssize_t M,
                      int64_t[::1] bmu, double[::1] bmu_d2, int n_threads) noexcept nogil:
    """OUT bmu[i], bmu_d2[i]: best-matching unit of row i and its squared distance.

    Returns the number of rows left undone for want of memory (0 on success).
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], i, b
    cdef int failed = 0
    cdef double *buf
    with parallel(num_threads=n_threads):
        buf = <double *> malloc(M * sizeof(double))
        for i in prange(n, schedule="static"):
            if buf == NULL:
                failed += 1
            else:
                mlsom_sqdist_t(&X[i, 0], Wt, A, M, buf)
                b = _argmin(buf, 0, M)
                bmu[i] = b
                bmu_d2[i] = buf[b]
        free(buf)
    return failed


cdef enum:
    FBLOCK = 32   # features per parallel block of the batch update


def train_map(const double[:, ::1] X, double[:, ::1] Wt, const double[:, ::1] G, double r0,
              Py_ssize_t n_epochs, Py_ssize_t max_epochs, bint gaussian,
              int64_t[::1] bmu, double[::1] bmu_d2, int n_threads):
    """Batch Kohonen training of one map, in place.

    IN  X (n, A): the instances of one label.  G (M, M): grid distances.  r0: initial radius.
    IN/OUT Wt (A, M): initial weights, replaced by the trained weights.
    OUT bmu (n), bmu_d2 (n): each row's best-matching unit and squared distance under the final
    weights.

    Epoch e = 0, 1, ... : every unit becomes the (neighbourhood-weighted) mean of the rows whose
    best-matching unit lies in its neighbourhood (a unit with none keeps its weight), then the rows
    are re-assigned. Radius r_e = r0 (n_epochs - e) / n_epochs; an epoch with r_e < 1 (and every
    epoch from n_epochs on) is winner-only. Training stops after the first winner-only epoch that
    changes no assignment, or after max_epochs epochs.

    Returns (number of epochs run, converged).
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1]
    cdef Py_ssize_t e, i, u, v, a, n_epochs_run = 0
    cdef double r, h, den
    cdef bint winner_only, converged = False
    cdef int64_t changed
    cdef int failed = 0
    if X.shape[0] == 0:
        raise ValueError("train_map needs at least one row")
    cdef Py_ssize_t t, blk, n_blocks = (A + FBLOCK - 1) // FBLOCK
    den_arr = np.zeros(M, dtype=np.float64)
    new_arr = np.zeros((M, A), dtype=np.float64)
    bmu_new_arr = np.empty(n, dtype=np.int64)
    nb_start_arr = np.zeros(M + 1, dtype=np.intp)
    nb_unit_arr = np.zeros(M * M, dtype=np.intp)
    nb_h_arr = np.zeros(M * M, dtype=np.float64)
    cdef double[::1] den_ = den_arr
    cdef double[:, ::1] neww = new_arr
    cdef int64_t[::1] bmu_new = bmu_new_arr
    cdef Py_ssize_t[::1] nb_start = nb_start_arr
    cdef Py_ssize_t[::1] nb_unit = nb_unit_arr
    cdef double[::1] nb_h = nb_h_arr
    with nogil:
        failed = _assign_rows(X, &Wt[0, 0], M, bmu, bmu_d2, n_threads)
        for e in range(max_epochs):
            if failed:
                break
            if e < n_epochs:
                r = r0 * <double> (n_epochs - e) / <double> n_epochs
            else:
                r = 0.0
            winner_only = r < 1.0
            # Neighbour lists of this epoch: the rows of BMU v go to the units u with h(u, v) > 0.
            t = 0
            for v in range(M):
                nb_start[v] = t
                if winner_only:
                    nb_unit[t] = v
                    nb_h[t] = 1.0
                    t += 1
                    continue
                for u in range(M):
                    if gaussian:
                        h = exp(-(G[u, v] * G[u, v]) / (2.0 * r * r))
                    elif G[u, v] <= r:
                        h = 1.0
                    else:
                        h = 0.0
                    if h > 0.0:
                        nb_unit[t] = u
                        nb_h[t] = h
                        t += 1
            nb_start[M] = t
            # Every unit's new weight is sum_i h(u, bmu_i) x_i / sum_i h(u, bmu_i), both sums over
            # the rows in row order. The result depends only on the rows (and weights) a unit
            # takes, never on how they are grouped: units that take the same rows get bit-identical
            # weights, so their ties are exact and go to the first index, as in exact arithmetic.
            for u in range(M):
                den_[u] = 0.0
            for i in range(n):
                v = bmu[i]
                for t in range(nb_start[v], nb_start[v + 1]):
                    den_[nb_unit[t]] = den_[nb_unit[t]] + nb_h[t]
            for blk in prange(n_blocks, schedule="static", num_threads=n_threads):
                mlsom_accumulate(&X[0, 0], n, A, &bmu[0], &nb_start[0], &nb_unit[0], &nb_h[0],
                                 not gaussian, M, &neww[0, 0], blk * FBLOCK,
                                 min(A, (blk + 1) * FBLOCK))
            for u in range(M):
                den = den_[u]
                if den > 0.0:
                    for a in range(A):
                        neww[u, a] = neww[u, a] / den
                else:
                    for a in range(A):
                        neww[u, a] = Wt[a, u]
            for a in range(A):
                for u in range(M):
                    Wt[a, u] = neww[u, a]
            failed = _assign_rows(X, &Wt[0, 0], M, bmu_new, bmu_d2, n_threads)
            if failed:
                break
            changed = 0
            for i in range(n):
                if bmu_new[i] != bmu[i]:
                    changed += 1
                bmu[i] = bmu_new[i]
            n_epochs_run = e + 1
            if winner_only and changed == 0:
                converged = True
                break
    if failed:
        raise MemoryError()
    return n_epochs_run, bool(converged)


def assign(const double[:, ::1] X, const double[:, ::1] Wt, int64_t[::1] bmu, double[::1] bmu_d2,
           int n_threads):
    """OUT bmu, bmu_d2: best-matching unit of every row of X (n, A) among the neurons Wt (A, M)."""
    cdef int failed
    with nogil:
        failed = _assign_rows(X, &Wt[0, 0], Wt.shape[1], bmu, bmu_d2, n_threads)
    if failed:
        raise MemoryError()


# --------------------------------------------------------------------------------------------------
# online phase
# --------------------------------------------------------------------------------------------------

ctypedef struct Entry:
    double d          # squared distance
    Py_ssize_t j      # global neuron index (maps laid out in label order)


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
    NB = 256   # distance buckets of the winner-class ranking


ctypedef struct Work:
    double *d2          # (M) squared distances to every neuron
    Entry *ent          # (M) scratch for the neurons of the boundary bucket
    uint8_t *bkt        # (M) distance bucket of every neuron
    Py_ssize_t *hist    # (NB) neurons of the pool per bucket
    Py_ssize_t *winnr   # (L) best-matching unit of each map (global index), -1 without a map
    Py_ssize_t *votes   # (L)
    uint8_t *removed    # (L) classes already ranked
    uint8_t *in_y       # (L) classes in the prediction
    Py_ssize_t *rank    # (L) the winner classes in order, -1 after the last


cdef Work *_work_alloc(Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Work *w = <Work *> malloc(sizeof(Work))
    if w == NULL:
        return NULL
    w.d2 = <double *> malloc(M * sizeof(double))
    w.ent = <Entry *> malloc(M * sizeof(Entry))
    w.bkt = <uint8_t *> malloc(M * sizeof(uint8_t))
    w.hist = <Py_ssize_t *> malloc(NB * sizeof(Py_ssize_t))
    w.winnr = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.votes = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    w.removed = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.in_y = <uint8_t *> malloc(L * sizeof(uint8_t))
    w.rank = <Py_ssize_t *> malloc(L * sizeof(Py_ssize_t))
    if (w.d2 == NULL or w.ent == NULL or w.bkt == NULL or w.hist == NULL or w.winnr == NULL
            or w.votes == NULL or w.removed == NULL or w.in_y == NULL or w.rank == NULL):
        _work_free(w)
        return NULL
    return w


cdef void _work_free(Work *w) noexcept nogil:
    if w == NULL:
        return
    free(w.d2)
    free(w.ent)
    free(w.bkt)
    free(w.hist)
    free(w.winnr)
    free(w.votes)
    free(w.removed)
    free(w.in_y)
    free(w.rank)
    free(w)


cdef void _log_cond(const int64_t *T, Py_ssize_t L, double *logC, Py_ssize_t c) noexcept nogil:
    """OUT column c of logC: logC[k, c] = log P[k, c] = log(T[k, c] / T[c, c]), -inf when 0."""
    cdef Py_ssize_t k
    cdef int64_t tcc = T[c * L + c]
    for k in range(L):
        if tcc > 0 and T[k * L + c] > 0:
            logC[k * L + c] = log(<double> T[k * L + c] / <double> tcc)
        else:
            logC[k * L + c] = -INFINITY


cdef Py_ssize_t _classify(const double *x, const double *Wt, Py_ssize_t A, Py_ssize_t M,
                          const int32_t *ncls, const int64_t *offsets, Py_ssize_t L,
                          const int64_t *T, const double *logC, const double *logA,
                          Py_ssize_t k_nn, Py_ssize_t n_rank, bint squared, bint skip_zero,
                          Work *w) noexcept nogil:
    """Classify x from a frozen state. OUT w.rank[:n_ranked], w.in_y, w.winnr, w.d2.

    Returns the number of labels predicted; the labels are w.rank[r] for r with w.in_y set.
    """
    cdef Py_ssize_t c, j, r, b, bb, bv, cnt, cum, n_pool, n_ent, best, kk
    cdef Py_ssize_t n_pred = 0, n_ranked = 0
    cdef double dist, rhs, lo, hi, scale
    cdef bint ok
    cdef Entry e1, e2

    # 1. distances to every kept neuron, best-matching unit of every map
    mlsom_sqdist_t(x, Wt, A, M, w.d2)
    for c in range(L):
        w.removed[c] = 0
        w.in_y[c] = 0
        if offsets[c + 1] > offsets[c]:
            w.winnr[c] = _argmin(w.d2, offsets[c], offsets[c + 1])
        else:
            w.winnr[c] = -1

    # 2. winner-class ranking: the k_nn nearest neurons of the classes not yet ranked vote; the
    #    majority wins; ties go to the class whose nearest voting neuron is closest, then to the
    #    lower class index. A class's nearest voting neuron is its best-matching unit, so ties are
    #    settled by the (distance, index) order of the best-matching units.
    #    The k_nn nearest are found without sorting: the distances are spread over NB buckets by a
    #    monotone map, the bucket holding the k_nn-th nearest is found from a histogram, and only
    #    the neurons of that bucket are ordered exactly.
    lo = w.d2[0]
    hi = w.d2[0]
    for j in range(1, M):
        lo = w.d2[j] if w.d2[j] < lo else lo
        hi = w.d2[j] if w.d2[j] > hi else hi
    scale = 0.0
    if hi - lo > 0.0:
        scale = <double> NB / (hi - lo)
        if not scale < 1e300:
            scale = 0.0
    for j in range(M):
        bv = <Py_ssize_t> ((w.d2[j] - lo) * scale)
        w.bkt[j] = <uint8_t> (bv if bv < NB - 1 else NB - 1)
    for _ in range(n_rank):
        for b in range(NB):
            w.hist[b] = 0
        n_pool = 0
        for c in range(L):
            w.votes[c] = 0
            if w.removed[c] or w.winnr[c] < 0:
                continue
            for j in range(offsets[c], offsets[c + 1]):
                w.hist[w.bkt[j]] += 1
            n_pool += offsets[c + 1] - offsets[c]
        if n_pool == 0:
            break  # every map has been ranked
        if n_pool <= k_nn:
            for c in range(L):
                if not w.removed[c] and w.winnr[c] >= 0:
                    w.votes[c] = offsets[c + 1] - offsets[c]
        else:
            cum = 0
            bb = 0
            while cum + w.hist[bb] < k_nn:
                cum += w.hist[bb]
                bb += 1
            n_ent = 0
            for c in range(L):
                if w.removed[c] or w.winnr[c] < 0:
                    continue
                cnt = 0
                for j in range(offsets[c], offsets[c + 1]):
                    cnt += w.bkt[j] < bb
                    if w.bkt[j] == bb:
                        w.ent[n_ent].d = w.d2[j]
                        w.ent[n_ent].j = j
                        n_ent += 1
                w.votes[c] = cnt
            _select_smallest(w.ent, n_ent, k_nn - cum)
            for j in range(k_nn - cum):
                w.votes[ncls[w.ent[j].j]] += 1
        best = -1
        for c in range(L):
            if w.votes[c] == 0:
                continue
            if best < 0 or w.votes[c] > w.votes[best]:
                best = c
            elif w.votes[c] == w.votes[best]:
                e1.d = w.d2[w.winnr[c]]
                e1.j = w.winnr[c]
                e2.d = w.d2[w.winnr[best]]
                e2.j = w.winnr[best]
                if _less(e1, e2):
                    best = c
        w.rank[n_ranked] = best
        n_ranked += 1
        w.removed[best] = 1

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
        ok = True
        rhs = 0.0
        for kk in range(L):
            if kk == c:
                continue
            if w.in_y[kk]:
                if T[kk * L + c] == 0 and not skip_zero:
                    ok = False
                    break
            elif T[kk * L + c] > 0:
                rhs = rhs + logC[kk * L + c]
        if not ok:
            continue
        dist = w.d2[w.winnr[c]]
        if not squared:
            dist = sqrt(dist)
        if -dist - logA[w.winnr[c]] >= rhs:
            w.in_y[c] = 1
            n_pred += 1
    return n_pred


cdef inline Py_ssize_t _ceil_div(int64_t a, int64_t b) noexcept nogil:
    return <Py_ssize_t> ((a + b - 1) // b)


def stream(const double[:, ::1] X, double[:, ::1] Wt, const int32_t[::1] ncls,
           const int64_t[::1] offsets, int64_t[::1] counts, double[::1] logA, int64_t[:, ::1] T,
           int64_t[::1] NS, Py_ssize_t k_nn, double eta, bint squared, bint skip_zero,
           uint8_t[:, ::1] Y):
    """The online phase over a chunk of the stream, in order, adapting after every instance.

    IN  X (n, A); ncls (M) label of each neuron; offsets (L+1) neurons of label c are
        offsets[c]:offsets[c+1].
    IN/OUT Wt (A, M) weights; counts (M) n_b; logA (M) log averOut; T (L, L) label (co-)counts;
           NS (2) = [N, S], instances seen and sum of predicted label-set sizes.
    OUT Y (n, L): the 0/1 predictions.
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t row, r, c, c2, b, i, n_pred, n_rank
    cdef int64_t N, S, nb
    cdef double dd, dist
    cdef const double *x
    cdef double *wt = &Wt[0, 0]
    cdef int64_t *t = &T[0, 0]
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    cdef Work *w = _work_alloc(M, L)
    if w == NULL:
        raise MemoryError()
    try:
        with nogil:
            for c in range(L):
                _log_cond(t, L, &logC[0, 0], c)
            N = NS[0]
            S = NS[1]
            for row in range(n):
                x = &X[row, 0]
                n_rank = _ceil_div(S, N)
                if n_rank > L:
                    n_rank = L
                n_pred = _classify(x, wt, A, M, &ncls[0], &offsets[0], L, t, &logC[0, 0],
                                   &logA[0], k_nn, n_rank, squared, skip_zero, w)
                # weights: the best-matching unit of every predicted map moves towards x
                for r in range(L):
                    c = w.rank[r]
                    if c < 0:
                        break
                    if not w.in_y[c]:
                        continue
                    b = w.winnr[c]
                    for i in range(A):
                        wt[i * M + b] = wt[i * M + b] + eta * (x[i] - wt[i * M + b])
                # cardinality
                N += 1
                S += n_pred
                # averOut of the moved neurons: running mean, in log space, distance after the move
                for r in range(L):
                    c = w.rank[r]
                    if c < 0:
                        break
                    if not w.in_y[c]:
                        continue
                    b = w.winnr[c]
                    dd = _sqdist_col(x, wt, A, M, b)
                    dist = dd if squared else sqrt(dd)
                    nb = counts[b]
                    logA[b] = _logaddexp(log(<double> nb) + logA[b], -dist) - log(<double> (nb + 1))
                    counts[b] = nb + 1
                    Y[row, c] = 1
                # co-occurrence counts and the conditional probabilities of the changed columns
                for r in range(L):
                    c = w.rank[r]
                    if c < 0:
                        break
                    if not w.in_y[c]:
                        continue
                    for c2 in range(L):
                        if w.in_y[c2]:
                            t[c * L + c2] += 1
                for c in range(L):
                    if w.in_y[c]:
                        _log_cond(t, L, &logC[0, 0], c)
            NS[0] = N
            NS[1] = S
    finally:
        _work_free(w)


def predict(const double[:, ::1] X, const double[:, ::1] Wt, const int32_t[::1] ncls,
            const int64_t[::1] offsets, const double[::1] logA, const int64_t[:, ::1] T,
            int64_t N, int64_t S, Py_ssize_t k_nn, bint squared, bint skip_zero,
            uint8_t[:, ::1] Y, int n_threads):
    """Frozen scoring: classify every row of X independently from the given state.

    IN  X (n, A) and the state (read only).  OUT Y (n, L).
    Rows are spread over n_threads OpenMP threads; each row's result does not depend on it.
    """
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], M = Wt.shape[1], L = T.shape[0]
    cdef Py_ssize_t row, c, n_rank
    cdef int failed = 0
    cdef Work *w
    logC_arr = np.empty((L, L), dtype=np.float64)
    cdef double[:, ::1] logC = logC_arr
    n_rank = _ceil_div(S, N)
    if n_rank > L:
        n_rank = L
    with nogil:
        for c in range(L):
            _log_cond(&T[0, 0], L, &logC[0, 0], c)
        with parallel(num_threads=n_threads):
            w = _work_alloc(M, L)
            for row in prange(n, schedule="static"):
                if w == NULL:
                    failed += 1
                else:
                    _predict_row(&X[row, 0], Wt, ncls, offsets, logA, T, &logC[0, 0], k_nn,
                                 n_rank, squared, skip_zero, w, &Y[row, 0], A, M, L)
            _work_free(w)
    if failed:
        raise MemoryError()


cdef void _predict_row(const double *x, const double[:, ::1] Wt, const int32_t[::1] ncls,
                       const int64_t[::1] offsets, const double[::1] logA,
                       const int64_t[:, ::1] T, const double *logC, Py_ssize_t k_nn,
                       Py_ssize_t n_rank, bint squared, bint skip_zero, Work *w, uint8_t *y,
                       Py_ssize_t A, Py_ssize_t M, Py_ssize_t L) noexcept nogil:
    cdef Py_ssize_t c
    _classify(x, &Wt[0, 0], A, M, &ncls[0], &offsets[0], L, &T[0, 0], logC, &logA[0], k_nn,
              n_rank, squared, skip_zero, w)
    for c in range(L):
        y[c] = w.in_y[c]
