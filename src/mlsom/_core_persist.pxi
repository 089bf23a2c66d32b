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


ctypedef struct Record:
    # label persistence's record (the state's group "persistence"): the last row classified (A,
    # the model's type), its prediction, its proposal and the last prompt labels (lab (3, L)),
    # the flags (its labels may still come promptly, it had a proposal, the last prompt labels
    # are its), the ring of the last W pairs (1: the proposal won) and their count ever
    void *row
    int8_t *lab
    uint8_t *flags
    uint8_t *ring
    int64_t *total
    Py_ssize_t W


cdef void _persist_run(Record *rec, const floating *X, Py_ssize_t n, uint8_t *Y, Py_ssize_t A,
                       Py_ssize_t L, const floating *Xl, const int8_t *Yl, const int64_t *after,
                       Py_ssize_t K, Py_ssize_t first, bint substitute) noexcept nogil:
    """The n rows X were classified (the model's predictions in Y (n, L)) with the K labelled
    rows Xl, Yl learnt meanwhile (row k once after[k] rows of X were classified): in event
    order, score the proposal each prompt label answers against the model's prediction by their
    F1 over the label's known labels (the ring's pairs where they differ), give the proposals
    the test gives (in Y, when substitute) and keep the record. Rows of X before ``first`` are
    not in the record (the call that starts it)."""
    cdef Py_ssize_t W = rec.W, s, k = 0, c, slot, m
    cdef int64_t won = 0, t
    cdef int64_t hit_prop, hit_model, n_true, n_prop, n_model
    cdef int f_prop
    cdef floating *row = <floating *> rec.row
    cdef int8_t *lab = rec.lab
    cdef uint8_t *flags = rec.flags
    cdef uint8_t *ring = rec.ring
    cdef const floating *prev = row
    cdef bint give
    t = rec.total[0]
    m = t if t < W else W
    for c in range(m):
        won += ring[c]
    for s in range(n + 1):
        while k < K and after[k] == s:
            # a prompt label: the first since the last row classified, equal to it
            if flags[0] and _same_row(Xl + k * A, prev, A):
                flags[0] = 0
                if flags[1]:
                    # each one's F1 over the known labels, 2 hits / (true + predicted), as
                    # integers (1 when both are empty), compared exactly
                    hit_prop = hit_model = n_true = n_prop = n_model = 0
                    for c in range(L):
                        if Yl[k * L + c] >= 0:
                            n_true += Yl[k * L + c]
                            n_prop += lab[L + c]
                            n_model += lab[c]
                            hit_prop += lab[L + c] & Yl[k * L + c]
                            hit_model += lab[c] & Yl[k * L + c]
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
                    lab[2 * L + c] = Yl[k * L + c]
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
            lab[c] = Y[s * L + c]
        if flags[2]:
            m = t if t < W else W
            give = substitute and m >= PAIR_MIN and \
                <double> (2 * won - m) >= PAIR_Z * sqrt(<double> m)
            for c in range(L):
                lab[L + c] = lab[2 * L + c] if lab[2 * L + c] >= 0 else lab[c]
                if give:
                    Y[s * L + c] = lab[L + c]
            flags[1] = 1
        else:
            for c in range(L):
                lab[L + c] = 0
            flags[1] = 0
        flags[0] = 1
        flags[2] = 0
        prev = X + s * A
    if n > first:
        for c in range(A):
            row[c] = X[(n - 1) * A + c]
    rec.total[0] = t
