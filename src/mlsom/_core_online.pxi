# One call's online phase over a chunk of the stream and the labels that arrive meanwhile: its
# scratch, the views of the state's groups it reads and writes, and the loop over the chunk's
# instances in order (_online_run). The entry points that bind the state to these views are in
# _core_state.pxi.
#
# Part of the _core extension: included by _core.pyx, which holds the cimports.


ctypedef struct ModelView:
    # the groups every state holds (maps, counts) and the labelled group, as raw pointers
    void *wt            # (A, M) the neurons, in the model's type (IN/OUT)
    const int32_t *ncls  # (M) each neuron's label
    const int64_t *offsets  # (L+1) label c's neurons are offsets[c]:offsets[c+1]
    int64_t *counts     # (M) wins (IN/OUT)
    double *logA        # (M) log averOut (IN/OUT)
    int64_t *T          # (L, L) label (co-)counts (IN/OUT)
    int64_t *NS         # (2) [N, S] (IN/OUT)
    float *Ws           # (A, M) the screening copy, kept in step with wt (IN/OUT)
    float *ww           # (M) its squared norms (IN/OUT)
    const double *cc    # (A) its centre
    void *pos           # (L, A) each label's last labelled positive (IN/OUT), or NULL
    uint8_t *hp         # (L) whether it has one (IN/OUT), or NULL
    Py_ssize_t A
    Py_ssize_t M
    Py_ssize_t L
    Py_ssize_t k_nn
    bint squared


ctypedef struct Accept:
    # the robust variant's acceptance (docs/method.md), or ctl NULL (the paper's variant)
    double *ctl         # [theta, gain, z0, cbar, alpha, band] (IN/OUT theta and cbar)
    double *lctl        # (3, L) [phi, rate, target] per label (IN/OUT phi and rate), or NULL
    double label_band
    double cbar


ctypedef struct Online:
    # one call's online phase: the call's settings, its scratch, and the views of the state's
    # optional groups (each pointer NULL where the state lacks the group)
    double eta          # learning_rate
    double rate         # correction_rate
    bint skip_zero      # zero_cooccurrence="skip"
    double *logC        # (L, L) log of the conditional probabilities, from T
    Work *w             # the instance's workspace
    float *G            # (4, M) the block's screening values
    float *X2           # (4, A) the block's centred float32 rows
    uint8_t *known      # (L) scratch of _learn_labels
    LabelMem lmem       # what labels taught the decision rule ...
    LabelMem *lm        # ... or NULL
    Pairs pairs         # the paired test of the corrections ...
    Pairs *pr           # ... or NULL
    Drift drift         # the drift gate ...
    Drift *dr           # ... or NULL
    Guards guard        # the guards ...
    Guards *gd          # ... or NULL
    Accept acc


cdef void _online_free(Online *o) noexcept nogil:
    """Free o's scratch (o zeroed before its views were bound)."""
    _work_free(o.w)
    free(o.logC)
    free(o.G)
    free(o.X2)
    free(o.known)
    free(o.lmem.nslot)
    free(o.lmem.nmarg)
    free(o.drift.rate)
    free(o.drift.acc)
    free(o.pairs.d2)
    _work_free(o.pairs.w2)


cdef bint _online_alloc(Online *o, Py_ssize_t M, Py_ssize_t L, Py_ssize_t A) noexcept nogil:
    """Allocate o's scratch once its views are bound; False if memory ran out (the caller frees
    what was allocated with _online_free)."""
    o.w = _work_alloc(M, L)
    o.logC = <double *> malloc(L * L * sizeof(double) + 1)
    o.G = <float *> malloc(4 * M * sizeof(float))
    o.X2 = <float *> malloc(4 * A * sizeof(float))
    o.known = <uint8_t *> malloc(L * sizeof(uint8_t))
    if o.lm != NULL:
        o.lmem.nslot = <int32_t *> malloc(o.lmem.win * sizeof(int32_t))
        o.lmem.nmarg = <double *> malloc(o.lmem.win * sizeof(double))
    if o.pr != NULL:
        o.pairs.d2 = <float *> malloc(M * sizeof(float))
        o.pairs.w2 = _work_alloc(M, L)
    if o.dr != NULL:
        o.drift.rate = <double *> malloc(M * sizeof(double))
        o.drift.acc = <float *> malloc(4 * M * sizeof(float))
    if (o.w == NULL or o.logC == NULL or o.G == NULL or o.X2 == NULL or o.known == NULL
            or (o.dr != NULL and (o.drift.rate == NULL or o.drift.acc == NULL))
            or (o.lm != NULL and (o.lmem.nslot == NULL or o.lmem.nmarg == NULL))
            or (o.pr != NULL and (o.pairs.d2 == NULL or o.pairs.w2 == NULL))):
        return False
    if o.lm != NULL:
        o.w.thl = o.lmem.thl
        o.w.extra = _rule_taught(o.lm, L)
        o.w.gd = o.gd
        if o.pr != NULL:
            o.pairs.w2.gd = o.gd
    if o.acc.ctl != NULL:
        o.w.ctl = 1
        o.w.theta = o.acc.ctl[0]
        o.w.phl = o.acc.lctl  # (row 0 of lctl: phi)
        o.acc.cbar = o.acc.ctl[3]
    return True


cdef inline void _accept_step(Accept *ac, Work *w, const uint8_t *y, const int64_t *offsets,
                              Py_ssize_t L, Py_ssize_t n_pred) noexcept nogil:
    """The robust variant's acceptance after an instance with n_pred labels predicted (y, its
    row of predictions).

    cbar += alpha (n_pred - cbar) (the recent predicted cardinality), and if
    |cbar - z0| > band z0, theta += gain (n_pred - z0), unless that could not change the
    decisions (more labels than z0 and none accepted beyond the first, or fewer and none
    rejected): a dead band, and conditional integration, so that theta does not wind up where
    the offset has nothing left to change. Per label c with a map (lctl), with y[c] = 1 where it
    was predicted: rate[c] += alpha (y[c] - rate[c]), and if |rate[c] - target[c]| > label_band
    target[c], phi[c] += gain (y[c] - target[c]), only where it could change the label's
    decisions: y above the target and c predicted beyond the first ranked, or below it and c's
    test rejected it."""
    cdef double err, gain = ac.ctl[1], z0 = ac.ctl[2], alpha = ac.ctl[4]
    cdef double *plc = ac.lctl
    cdef Py_ssize_t c
    ac.cbar = ac.cbar + alpha * (<double> n_pred - ac.cbar)
    if fabs(ac.cbar - z0) > ac.ctl[5] * z0:
        err = <double> n_pred - z0
        if (err > 0 and n_pred > 1) or (err < 0 and w.n_rej > 0):
            w.theta = w.theta + gain * err
    if plc == NULL:
        return
    for c in range(L):
        if offsets[c + 1] == offsets[c]:
            continue
        plc[L + c] = plc[L + c] + alpha * (<double> y[c] - plc[L + c])
        if fabs(plc[L + c] - plc[2 * L + c]) > ac.label_band * plc[2 * L + c]:
            err = <double> y[c] - plc[2 * L + c]
            if (err > 0 and y[c] and c != w.rank[0]) or (err < 0 and w.rej[c]):
                plc[c] = plc[c] + gain * err


cdef inline Py_ssize_t _next_block(const floating *X, Py_ssize_t n, Py_ssize_t *row,
                                   const floating *Xl, const int64_t *after, Py_ssize_t nl,
                                   Py_ssize_t *k, Py_ssize_t A, Py_ssize_t *idx, bint *lab,
                                   const floating **rows) noexcept nogil:
    """The next block of up to four instances, in the order they come (a labelled row k comes
    before stream row r once after[k] <= r): their rows, whether each is labelled and its index
    in X or Xl. Advances row and k past them; returns how many."""
    cdef Py_ssize_t nb = 0
    while nb < 4 and (row[0] < n or k[0] < nl):
        lab[nb] = k[0] < nl and after[k[0]] <= row[0]
        if lab[nb]:
            idx[nb] = k[0]
            rows[nb] = Xl + k[0] * A
            k[0] += 1
        else:
            idx[nb] = row[0]
            rows[nb] = X + row[0] * A
            row[0] += 1
        nb += 1
    return nb


cdef void _online_run(Online *o, ModelView *v, const floating *X, Py_ssize_t n,
                      const floating *Xl, const int8_t *Yl, const int64_t *after, Py_ssize_t nl,
                      uint8_t *Y) noexcept nogil:
    """Classify the n rows of X in order, adapting after each, and learn the nl labelled rows
    Xl, Yl meanwhile (row k once after[k] rows of X were classified); OUT Y (n, L).

    Instances (of the stream, and labelled ones, in the order they come) are screened four at a
    time against the current neurons; the screening values of a neuron that moves are then
    recomputed for the instances of the block still to come, so every instance is screened
    against the neurons as they are when its turn comes."""
    cdef Py_ssize_t A = v.A, M = v.M, L = v.L, c, e, j, nb, row = 0, k = 0, n_rank, n_pred
    cdef Py_ssize_t idx[4]
    cdef bint lab[4]
    cdef const floating *rows[4]
    cdef double xxb[4]
    cdef floating *wt = <floating *> v.wt
    cdef float *d
    cdef double gap, wwmax, tscale
    cdef int64_t N = v.NS[0], S = v.NS[1]
    cdef bint screening = _sw.screening
    cdef const double *pzl = o.lmem.zl if o.lm != NULL else NULL
    for c in range(L):
        _log_cond(v.T, L, o.logC, c)
    if o.lm != NULL:  # (labels beyond the ranking are tested only with it)
        _start_bounds(o.w, v.logA, v.offsets, L)
    wwmax = _maxval(v.ww, M)
    tscale = _tol_scale(A)
    while row < n or k < nl:
        nb = _next_block(X, n, &row, Xl, after, nl, &k, A, idx, lab, rows)
        if screening:
            _screen_block(rows, nb, A, M, v.cc, v.Ws, v.ww, o.X2, xxb, o.G)
        for e in range(nb):
            # this instance's screening values, the gap, the labels to rank
            d = o.G + e * M
            n_rank = _n_ranked(S, N, L, pzl)
            o.w.cap = _label_cap(pzl)
            gap = _screen_gap(tscale, xxb[e], wwmax) if screening else INFINITY
            if not isfinite(gap):
                gap = INFINITY   # every neuron a candidate: all distances exact
                for j in range(M):
                    d[j] = 0
            if lab[e]:
                _learn_labels(rows[e], Yl + idx[e] * L, d, gap, wt, A, M, v.ncls, v.offsets, L,
                              v.T, o.logC, v.logA, v.counts, v.k_nn, n_rank, <floating> o.eta,
                              <floating> o.rate, v.squared, o.skip_zero, v.Ws, v.ww, v.cc,
                              &wwmax, <floating *> v.pos, v.hp, o.known, o.X2 + (e + 1) * A,
                              xxb + e + 1, o.G + (e + 1) * M, nb - e - 1 if screening else 0,
                              o.lm, S, N, o.pr, o.gd, tscale, xxb[e], o.w)
            else:
                n_pred = _learn_one(rows[e], d, gap, wt, A, M, v.ncls, v.offsets, L, v.T,
                                    o.logC, v.logA, v.counts, v.k_nn, n_rank, <floating> o.eta,
                                    v.squared, o.skip_zero, v.Ws, v.ww, v.cc, &wwmax,
                                    o.X2 + (e + 1) * A, xxb + e + 1, o.G + (e + 1) * M,
                                    nb - e - 1 if screening else 0, Y + idx[e] * L, o.dr, o.w)
                S += n_pred
                if o.acc.ctl != NULL:
                    _accept_step(&o.acc, o.w, Y + idx[e] * L, v.offsets, L, n_pred)
                N += 1
    v.NS[0] = N
    v.NS[1] = S
    if o.acc.ctl != NULL:
        o.acc.ctl[0] = o.w.theta
        o.acc.ctl[3] = o.acc.cbar
