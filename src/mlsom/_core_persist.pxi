# Label persistence (label_persistence="tested"): the bookkeeping of _persistence.py, one event
# at a time (docs/method.md, "Labels that persist").
#
# Part of the _core extension: included by _core.pyx, which holds the cimports.


cdef inline bint _same_row(const floating *a, const floating *b, Py_ssize_t A) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(A):
        if a[i] != b[i]:
            return False
    return True


cdef inline int _f1_cross(int64_t hit_a, int64_t den_a, int64_t hit_b,
                          int64_t den_b) noexcept nogil:
    """The sign of F1(a) - F1(b), F1 = 2 hit / den (1 when den is 0), compared as integers."""
    cdef int64_t num_a = 2 * hit_a, num_b = 2 * hit_b
    if den_a == 0:
        num_a = den_a = 1
    if den_b == 0:
        num_b = den_b = 1
    return (num_a * den_b > num_b * den_a) - (num_a * den_b < num_b * den_a)


def persist_update(const floating[:, ::1] X, uint8_t[:, ::1] Y, const floating[:, ::1] Xl,
                   const int8_t[:, ::1] Yl, const int64_t[::1] after, floating[::1] row,
                   int8_t[:, ::1] lab, uint8_t[::1] flags, uint8_t[::1] ring,
                   int64_t[::1] total, Py_ssize_t first, bint substitute):
    """The rows X were classified (the model's predictions in Y) with the labelled rows Xl, Yl
    learnt meanwhile (row k once after[k] rows of X were classified): in event order, score the
    proposal each prompt label answers against the model's prediction by their F1 over the
    label's known labels (ring, total: the pairs where they differ), give the proposals the test
    gives (in Y, when substitute) and keep the record (row: the last row classified; lab: its
    prediction, its proposal, the last prompt labels; flags: its labels may still come promptly,
    it had a proposal, the last prompt labels are its). Rows of X before ``first`` are not in
    the record (the call that starts it). The caller checked the shapes and that after is
    non-decreasing within 0..n."""
    cdef Py_ssize_t n = X.shape[0], A = X.shape[1], L = Y.shape[1], K = after.shape[0]
    cdef Py_ssize_t W = ring.shape[0], s, k = 0, c, slot, m
    cdef int64_t won = 0, t
    cdef int64_t hit_prop, hit_model, n_true, n_prop, n_model
    cdef int f_prop
    cdef const floating *prev = &row[0]
    cdef bint give
    if lab.shape[0] != 3 or lab.shape[1] != L or flags.shape[0] != 3 or row.shape[0] != A \
            or Xl.shape[1] != A or Yl.shape[1] != L or Yl.shape[0] != K or Xl.shape[0] != K \
            or total.shape[0] != 1 or W < 1:
        raise ValueError("persist_update: inconsistent shapes")
    t = total[0]
    m = t if t < W else W
    for c in range(m):
        won += ring[c]
    with nogil:
        for s in range(n + 1):
            while k < K and after[k] == s:
                # a prompt label: the first since the last row classified, equal to it
                if flags[0] and _same_row(&Xl[k, 0], prev, A):
                    flags[0] = 0
                    if flags[1]:
                        # each one's F1 over the known labels, 2 hits / (true + predicted), as
                        # integers (1 when both are empty), compared exactly
                        hit_prop = hit_model = n_true = n_prop = n_model = 0
                        for c in range(L):
                            if Yl[k, c] >= 0:
                                n_true += Yl[k, c]
                                n_prop += lab[1, c]
                                n_model += lab[0, c]
                                hit_prop += lab[1, c] & Yl[k, c]
                                hit_model += lab[0, c] & Yl[k, c]
                        f_prop = _f1_cross(hit_prop, n_true + n_prop, hit_model, n_true + n_model)
                        if f_prop != 0:
                            slot = t % W
                            if t >= W:
                                won -= ring[slot]
                            ring[slot] = f_prop > 0
                            won += ring[slot]
                            t += 1
                            if t >= PAIR_TOTAL_MAX:
                                t = W + t % W
                    for c in range(L):
                        lab[2, c] = Yl[k, c]
                    flags[2] = 1
                k += 1
            if s == n:
                break
            if s < first:
                continue  # classified before the record starts: not in it (as in another call)
            # step s: the model's prediction, and the proposal when the last prompt labels are
            # the row's before
            give = False
            for c in range(L):
                lab[0, c] = Y[s, c]
            if flags[2]:
                m = t if t < W else W
                give = substitute and m >= PAIR_MIN and \
                    <double> (2 * won - m) >= PAIR_Z * sqrt(<double> m)
                for c in range(L):
                    lab[1, c] = lab[2, c] if lab[2, c] >= 0 else lab[0, c]
                    if give:
                        Y[s, c] = lab[1, c]
                flags[1] = 1
            else:
                for c in range(L):
                    lab[1, c] = 0
                flags[1] = 0
            flags[0] = 1
            flags[2] = 0
            prev = &X[s, 0]
        if n > first:
            for c in range(A):
                row[c] = X[n - 1, c]
    total[0] = t
