"""Novelty detection: new labels found in the stream without a label (docs/method.md, "New
labels"), for ``SOMStreamClassifier(novelty=True)``.

An instance is *explained* when it lies within the radius of some neuron (of any map), the
neurons taken as they stood at the start of its block of ``NOVELTY_BLOCK`` instances and every
radius taken ``novelty_radius`` times (the estimator's parameter, ``factor`` here). Explained
instances go through the core's online phase as without novelty detection; the others are
classified with no label ("unknown"), leave the model as it is and enter a short-term memory.
After every ``NOVELTY_CHECK`` unexplained instances a search groups the memory (k-means) and
judges each group: a group of at least ``NOVELTY_MIN_GROUP`` rows nearer its own centre than the
nearest neuron (a positive silhouette) either meets the sphere of a neuron (an extension of that
neuron's label: a neuron is added to its map) or does not (a new label, with a map of its own).
New labels that stop being used are retired.

Everything here is NumPy over the state's arrays (the table of ``_schema``, group "novelty");
the online phase itself stays the core's. The estimator calls :func:`stream` under its writer
lock.
"""

import math
from typing import NamedTuple

import numpy as np

from . import _core, _schema
from ._grid import grid_distances, grid_positions
from ._method import (
    NOVELTY_BLOCK,
    NOVELTY_BUFFER,
    NOVELTY_CHECK,
    NOVELTY_EXTENSION,
    NOVELTY_FORGET,
    NOVELTY_KMEANS_ITER,
    NOVELTY_MAX_GROUPS,
    NOVELTY_MAX_LABELS,
    NOVELTY_MEMORY,
    NOVELTY_MIN_GROUP,
    NOVELTY_SEED,
    NOVELTY_SPLIT,
)

# rows of label_origin
CREATED, MADE_FROM, LAST_USED, NUMBER, RETIRED, NAMED = range(6)
# entries of novelty_counts
IN_MEMORY, SEEN, SINCE_SEARCH = range(3)

# below this magnitude, values and squared distances are bounded in float32 (well within its
# range); beyond it, in float64
_F32_SAFE = 1e15


class NewLabel(NamedTuple):
    """A label found by novelty detection (``SOMStreamClassifier.new_labels_``)."""

    #: "NP1", "NP2", ...: in the order they were made
    name: str
    #: its column in the predictions
    column: int
    #: the number of instances of the online phase seen when it was made
    created_at: int
    #: the unexplained instances it was made from
    made_from: int
    #: the instances it explains: its count (T's diagonal), those it was made from included
    n_explained: int
    #: the number of instances seen at its last prediction
    last_used: int
    #: whether it was retired (unused for NOVELTY_FORGET instances, or merged into another
    #: label): never predicted again, its column kept
    retired: bool
    #: the caller's label column that labels given to ``partial_fit`` named it by, or None
    named: int | None = None


def new_labels(st):
    """The state's new labels, in column order."""
    if "label_origin" not in st:
        return ()
    o = st["label_origin"]
    return tuple(
        NewLabel(
            name=f"NP{int(o[NUMBER, c])}",
            column=int(c),
            created_at=int(o[CREATED, c]),
            made_from=int(o[MADE_FROM, c]),
            n_explained=int(st["T"][c, c]),
            last_used=int(o[LAST_USED, c]),
            retired=bool(o[RETIRED, c]),
            named=None if o[NAMED, c] < 0 else int(o[NAMED, c]),
        )
        for c in np.flatnonzero(o[NUMBER] > 0)
    )


def label_names(st):
    """Each label's name: its column index for a label of fit, the caller's label column for a
    label that labels named (``partial_fit``), "NPk" for a new one no label named."""
    if "label_origin" not in st:
        return list(range(st["n_labels"]))
    o = st["label_origin"]
    return [
        int(u) if u >= 0 else (f"NP{int(k)}" if k > 0 else c)
        for c, (k, u) in enumerate(zip(o[NUMBER].tolist(), o[NAMED].tolist(), strict=True))
    ]


def caller_columns(st, n_columns, n_fit):
    """The model's column of each of the caller's ``n_columns`` label columns: the first
    ``n_fit`` are the labels of fit; a later one is the label it named (-1: none yet)."""
    out = np.full(n_columns, -1, dtype=np.int64)
    out[:n_fit] = np.arange(n_fit)
    named = st["label_origin"][NAMED]
    for c in np.flatnonzero(named >= 0):
        if named[c] < n_columns:
            out[named[c]] = c
    return out


def name_label(st, u, X, Y_u, predict, make_map, pos):
    """The caller's label column ``u``, which the model does not know, with its values Y_u
    (1/0/-1) on the rows X: the new label whose frozen predictions on the rows with a value
    match it best by Jaccard, at least 1/2, is named by it; else, with a positive row, a new
    label is made from the positive rows (a map fitted on them, its count theirs) and named by
    it. Returns its column, or -1 (no positive row: nothing to learn a label from)."""
    known = Y_u >= 0
    pos_rows = Y_u == 1
    if not pos_rows.any():
        return -1
    o = st["label_origin"]
    free = np.flatnonzero((o[NUMBER] > 0) & (o[RETIRED] == 0) & (o[NAMED] < 0))
    if free.size:
        P = predict(X[known])[:, free].astype(bool)
        y = pos_rows[known]
        inter = (P & y[:, None]).sum(axis=0)
        union = (P | y[:, None]).sum(axis=0)
        score = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
        best = int(np.argmax(score))
        if score[best] >= 0.5:
            o[NAMED, free[best]] = u
            return int(free[best])
    G = np.ascontiguousarray(X[pos_rows], dtype=np.float64)
    c = new_label(st, G, pos, make_map, np.random.default_rng((NOVELTY_SEED, pos, u)), count=False)
    lo, hi = int(st["offsets"][c]), int(st["offsets"][c + 1])
    # (a neuron wins at most once per instance the stream counted)
    st["counts"][lo:hi] = np.minimum(st["counts"][lo:hi], max(1, int(st["NS"][0])))
    st["label_origin"][NAMED, c] = u
    st["label_origin"][CREATED, c] = pos
    return c


# ------------------------------------------------------------------------------ the test


def squared_distances(x, rows):
    """Squared Euclidean distances from x (A,) to each row of ``rows`` (M, A), float64, each a
    sum over the features of the squared differences."""
    return np.sum((rows - x) ** 2, axis=1)


def explained(X, neurons, radius):
    """Whether each row of X (n, A) lies within the radius of some neuron: the squared distance
    (:func:`squared_distances`, float64) at most the radius squared. ``neurons`` (A, M).

    The answer is first bounded through the expansion |x|^2 - 2 x.w + |w|^2, in float32 for
    values of a moderate size (a matrix product); only the rows whose answer the bound leaves
    open are settled by the exact sums, so the answers are exactly those of
    :func:`squared_distances`."""
    X = np.asarray(X, dtype=np.float64)
    n, A = X.shape
    M = neurons.shape[1]
    out = np.zeros(n, dtype=bool)
    if n == 0 or M == 0:
        return out
    rows = np.ascontiguousarray(neurons.T, dtype=np.float64)
    r2 = np.asarray(radius, dtype=np.float64) ** 2
    big = max(float(np.abs(rows).max()), float(np.abs(X).max()), float(r2.max()))
    dtype = np.float32 if big < _F32_SAFE else np.float64
    eps = float(np.finfo(dtype).eps)
    ww = np.einsum("ij,ij->i", rows, rows)
    # |x - w|^2 <= r^2  <=>  2 x.w - (|w|^2 - r^2) >= |x|^2: one matrix product of the rows
    # with a column of ones against [2 w; r^2 - |w|^2], its largest entry against |x|^2
    aug = np.empty((A + 1, M), dtype=dtype)
    aug[:A] = 2.0 * rows.T
    aug[A] = r2 - ww
    bound = float(ww.max()) + float(r2.max())
    step = max(1, (1 << 22) // M)  # rows at a time: a bounded block of products
    for lo in range(0, n, step):
        Xb = X[lo : lo + step]
        xx = np.einsum("ij,ij->i", Xb, Xb)
        Xa = np.empty((Xb.shape[0], A + 1), dtype=dtype)
        Xa[:, :A] = Xb
        Xa[:, A] = 1.0
        slack = (Xa @ aug).max(axis=1) - xx
        # a bound, per row, of the rounding of the product, of the values' conversion and of
        # the exact sums, with room to spare
        tol = (8.0 * (A + 4) * eps) * (xx + bound) + 1e-300
        sure = slack > tol
        maybe = ~sure & (slack >= -tol)
        out[lo : lo + step] = sure
        for i in np.flatnonzero(maybe):
            out[lo + i] = bool(np.any(squared_distances(Xb[i], rows) <= r2))
    return out


def explained_first_by_wins(X, neurons, radius, wins):
    """:func:`explained`, with the quarter of the neurons that won the most rows (``wins``)
    tried first and the others only for the rows those leave unexplained: the same answers (a
    row is explained when any neuron explains it), for about a quarter of the products where
    the busiest neurons explain most rows. Maps of fewer than NOVELTY_SPLIT neurons in all are
    tried at once."""
    M = neurons.shape[1]
    if M < NOVELTY_SPLIT:
        return explained(X, neurons, radius)
    order = np.argsort(-np.asarray(wins), kind="stable")
    first, rest = order[: M // 4], order[M // 4 :]
    ok = explained(X, neurons[:, first], radius[first])
    left = np.flatnonzero(~ok)
    if left.size:
        ok[left] = explained(X[left], neurons[:, rest], radius[rest])
    return ok


def explained_now(st, X, factor=1.0):
    """Whether each row of X lies within ``factor`` times the radius of a neuron of the model as
    it is (frozen scoring)."""
    return explained_first_by_wins(X, st["Wt"], factor * st["radius"], st["counts"])


# ------------------------------------------------------------------------------ the stream


def stream(st, X, core, make_map, factor=1.0):
    """The online phase over X (checked, in the model's type) with novelty detection, each
    neuron's radius taken ``factor`` times (``novelty_radius``).

    ``core(rows)`` runs the core's online phase over some rows and returns their predictions
    (the model's labels at the time); ``make_map(rows, rng)`` fits a map on rows (a new label's)
    and returns (Wt, counts, log_averout, positions, radius, epochs, drift: the robust variant's
    (training mean, limit) or None). Returns (Y, unknown): the
    predictions over every label the model has at the end (a label made during the call is 0
    for the rows before it) and the rows left unknown."""
    counts = st["novelty_counts"]
    n = X.shape[0]
    unknown = np.zeros(n, dtype=bool)
    parts = []
    i = 0
    while i < n:
        pos = int(counts[SEEN])
        if pos % NOVELTY_BLOCK == 0:
            st["frozen"][...] = st["Wt"]
        end = min(n, i + NOVELTY_BLOCK - pos % NOVELTY_BLOCK)
        ok = explained_first_by_wins(X[i:end], st["frozen"], factor * st["radius"], st["counts"])
        unk = np.flatnonzero(~ok)
        need = NOVELTY_CHECK - int(counts[SINCE_SEARCH])
        if unk.size >= need:  # the search runs right after this unexplained instance
            end = i + int(unk[need - 1]) + 1
            ok, unk = ok[: end - i], unk[:need]
        rows = i + np.flatnonzero(ok)
        if rows.size:
            Y_rows = core(X[rows])
            parts.append((rows, Y_rows))
            _note_use(st, Y_rows, pos + rows - i)
        if unk.size:
            _remember(st, X[i + unk], pos + unk)
            unknown[i + unk] = True
        counts[SEEN] += end - i
        counts[SINCE_SEARCH] += unk.size
        if counts[SINCE_SEARCH] >= NOVELTY_CHECK:
            counts[SINCE_SEARCH] = 0
            search(st, int(counts[SEEN]), make_map, factor)
        i = end
    Y = np.zeros((n, st["n_labels"]), dtype=np.uint8)
    for rows, Y_rows in parts:
        Y[rows, : Y_rows.shape[1]] = Y_rows
    return Y, unknown


def _note_use(st, Y_rows, at):
    """Record, for each label predicted in Y_rows, the instance (``at``: each row's) of its last
    prediction."""
    used = Y_rows.any(axis=0)
    if used.any():
        last = Y_rows.shape[0] - 1 - np.argmax(Y_rows[::-1], axis=0)
        st["label_origin"][LAST_USED, : Y_rows.shape[1]][used] = at[last[used]]


def _remember(st, rows, at):
    """Append rows (instances ``at``) to the memory; past its length the oldest go."""
    buf, when, counts = st["novelty_buffer"], st["novelty_at"], st["novelty_counts"]
    have = int(counts[IN_MEMORY])
    rows, at = rows[-NOVELTY_BUFFER:], at[-NOVELTY_BUFFER:]
    over = max(0, have + rows.shape[0] - NOVELTY_BUFFER)
    if over:
        _keep_rows(st, np.arange(over, have))
        have -= over
    buf[have : have + rows.shape[0]] = rows
    when[have : have + rows.shape[0]] = at
    counts[IN_MEMORY] = have + rows.shape[0]


def _keep_rows(st, keep):
    """Keep only the memory's rows ``keep`` (increasing), moved to the front."""
    buf, when, counts = st["novelty_buffer"], st["novelty_at"], st["novelty_counts"]
    have = int(counts[IN_MEMORY])
    k = keep.size
    buf[:k] = buf[keep]
    when[:k] = when[keep]
    buf[k:have] = 0
    when[k:have] = -1
    counts[IN_MEMORY] = k


# ------------------------------------------------------------------------------ the search


def search(st, pos, make_map, factor=1.0):
    """A search at instance ``pos``: forget what is too old, group the memory, and turn each
    valid group into an extension of a label or a new label (module docstring); the radii taken
    ``factor`` times."""
    counts = st["novelty_counts"]
    have = int(counts[IN_MEMORY])
    _keep_rows(st, np.flatnonzero(st["novelty_at"][:have] > pos - NOVELTY_MEMORY))
    _retire_unused(st, pos)
    have = int(counts[IN_MEMORY])
    if have < NOVELTY_MIN_GROUP:
        return
    B = st["novelty_buffer"][:have].astype(np.float64)
    rng = np.random.default_rng((NOVELTY_SEED, pos))
    k = min(NOVELTY_MAX_GROUPS, have // NOVELTY_MIN_GROUP)
    assign, centres = kmeans(B, k, rng)
    taken = np.zeros(have, dtype=bool)
    for c in range(k):
        idx = np.flatnonzero(assign == c)
        if idx.size < NOVELTY_MIN_GROUP:
            continue
        verdict = judge(B[idx], centres[c], st["Wt"], factor * st["radius"])
        if verdict is None:
            continue
        if verdict < 0:
            if _active_new(st) >= NOVELTY_MAX_LABELS:
                continue
            new_label(st, B[idx], pos, make_map, rng)
        else:
            extend(st, B[idx], centres[c], verdict, pos, factor)
        taken[idx] = True
    if taken.any():
        _keep_rows(st, np.flatnonzero(~taken))
        st["frozen"][...] = st["Wt"]


def kmeans(B, k, rng):
    """Lloyd's k-means of the rows of B (n, A) into k groups from k distinct rows drawn by
    ``rng``, until no row changes group (at most NOVELTY_KMEANS_ITER rounds): (each row's group,
    the centres (k, A)). A row goes to the nearest centre (the lower index on a tie), the squared
    distances summed feature by feature in order; a centre is the mean of its rows (their sum
    in row order over their number), and a group left empty keeps its centre."""
    n, A = B.shape
    centres = B[np.sort(rng.choice(n, size=k, replace=False))].copy()
    assign = np.full(n, -1)
    for _ in range(NOVELTY_KMEANS_ITER):
        d2 = np.zeros((n, k))
        for a in range(A):
            d2 += (B[:, a, None] - centres[:, a]) ** 2
        new = np.argmin(d2, axis=1)
        if np.array_equal(new, assign):
            break
        assign = new
        # each group's sum, feature by feature, over its rows in row order
        sums = np.stack([np.bincount(assign, weights=B[:, a], minlength=k) for a in range(A)], 1)
        size = np.bincount(assign, minlength=k)
        full = size > 0
        centres[full] = sums[full] / size[full, None]
    return assign, centres


def met_labels(G, centre, st, factor=1.0):
    """The labels of the neurons whose sphere (radius taken ``factor`` times) the group G
    around ``centre`` meets."""
    spread = float(np.sqrt(squared_distances(centre, G)).max())
    dn = np.sqrt(squared_distances(centre, np.ascontiguousarray(st["Wt"].T, dtype=np.float64)))
    return np.unique(st["ncls"][dn - factor * st["radius"] - spread <= 0])


def judge(G, centre, Wt, radius):
    """A group of rows G (g, A) around ``centre``: the neuron whose label it extends, -1 for a
    new label, or None (neither: its rows stay in the memory).

    Only a cohesive group counts: its rows on average nearer their centre than the centre is to
    any neuron (MINAS's positive silhouette). It extends the label of the neuron whose sphere's
    surface is nearest its centre when the centre is within NOVELTY_EXTENSION times that
    neuron's radius of it (MINAS's extension rule); farther, it is a new label."""
    if Wt.shape[1] == 0:
        return -1
    dn = np.sqrt(squared_distances(centre, np.ascontiguousarray(Wt.T, dtype=np.float64)))
    if not float(dn.min()) > float(np.sqrt(squared_distances(centre, G)).mean()):
        return None
    nearest = int(np.argmin(dn - radius))
    return nearest if dn[nearest] <= NOVELTY_EXTENSION * radius[nearest] else -1


# ------------------------------------------------------------------------------ changes


def new_label(st, G, pos, make_map, rng, count=True):
    """A new label made from the rows G: a column after the last, its map fitted on G, its count
    in T (and in N and S) the rows' (with ``count``; else in T and S only, at most N: labelled
    rows, which the stream does not count). Returns its column."""
    Wt, cnt, la, positions, radius, epochs, drift = make_map(G, rng)
    L, M, m = st["n_labels"], st["Wt"].shape[1], Wt.shape[1]
    _schema.insert(st, "L", L, 1)
    _schema.insert(st, "M", M, m)
    st["Wt"][:, M:] = Wt
    st["ncls"][M:] = L
    st["counts"][M:] = cnt
    st["log_averout"][M:] = la
    st["positions"][M:] = positions
    st["radius"][M:] = radius
    st["offsets"][L] = M
    st["offsets"][L + 1] = M + m
    g = G.shape[0] if count else min(G.shape[0], int(st["NS"][0]))
    st["T"][L, L] = g
    st["NS"][1] += g
    if count:
        st["NS"][0] += g
        # the next number: a label's number stays with its column, retired or not
        number = int(st["label_origin"][NUMBER].max(initial=0)) + 1
    else:
        number = 0
    st["label_origin"][:, L] = (pos, G.shape[0], pos, number, 0, -1)
    st["n_labels"] = L + 1
    st["n_iter"] = [*st["n_iter"], int(epochs)]
    if "drift_mean" in st:  # the robust variant's gate and acceptance, as fit sets them
        centre, limit = drift
        st["drift_mean"][L] = centre
        st["drift_center"][L] = centre
        st["drift_limit"][L] = limit
    if "label_acceptance" in st:
        st["label_acceptance"][1:, L] = g / int(st["NS"][0])
    return L


def extend(st, G, centre, near, pos, factor=1.0):
    """The rows G extend the label of neuron ``near``: a neuron at their centre joins its map, at
    a free place of its grid nearest to that neuron's (as a growing map grows at its border),
    with their largest distance from the centre as its radius and their number as its wins;
    with no place free, neuron ``near``'s radius grows to reach the centre. The rows count for
    the label in T, N and S. The radii are taken ``factor`` times (a new neuron's stored radius
    is the rows' spread; a grown one reaches the centre once taken ``factor`` times)."""
    c = int(st["ncls"][near])
    lo, hi = int(st["offsets"][c]), int(st["offsets"][c + 1])
    spread = np.sqrt(squared_distances(centre, G))
    place = _free_place(st["positions"][lo:hi], st["positions"][near], int(st["grid_size"]))
    if place is None:
        reach = math.sqrt(float(squared_distances(centre, st["Wt"][:, near][None, :])[0]))
        st["radius"][near] = max(float(st["radius"][near]), reach / factor)
    else:
        _schema.insert(st, "M", hi, 1)
        st["Wt"][:, hi] = centre
        st["ncls"][hi] = c
        st["counts"][hi] = G.shape[0]
        st["log_averout"][hi] = _log_averout(spread, st["squared"])
        st["positions"][hi] = place
        st["radius"][hi] = float(spread.max())
        st["offsets"][c + 1 :] += 1
    g = G.shape[0]
    st["T"][c, c] += g
    st["NS"] += g
    st["label_origin"][LAST_USED, c] = pos
    # a new label the group also meets is the same pattern as c: the label of fit, or else the
    # oldest new label, takes the others in
    o = st["label_origin"]
    loose = (o[NUMBER] > 0) & (o[RETIRED] == 0) & (o[NAMED] < 0)  # new, unnamed, in use
    met = [int(j) for j in met_labels(G, centre, st, factor) if loose[j]]
    same = sorted({c, *met})
    keep = same[0] if loose[c] else c
    for j in same[::-1]:
        if j != keep:
            merge(st, keep, j)


def _log_averout(spread, squared):
    """A neuron's log averOut over rows at distances ``spread`` (Euclidean), as fit computes it
    (_core.log_mean_exp; squared distances with averout_distance="sqeuclidean")."""
    out = np.zeros(1)
    dist = np.ascontiguousarray(spread**2 if squared else spread, dtype=np.float64)
    _core.log_mean_exp(dist, np.zeros(dist.size, np.int64), np.array([dist.size]), out)
    return out[0]


def _free_place(taken, at, d):
    """The free cell of a d x d grid (cells ``taken``) nearest to cell ``at`` by grid distance
    (_grid.grid_distances, as training measures it; the first in row order on a tie), or
    None."""
    g = grid_distances(d)[int(at[0]) * d + int(at[1])]
    g[np.asarray(taken, dtype=np.int64) @ np.array([d, 1])] = np.inf
    u = int(np.argmin(g))
    return None if g[u] == np.inf else grid_positions(d)[u]


def merge(st, c, j):
    """Label j (a new one) is the same pattern as label c: its counts are folded into c's (T's
    row and column, the union's count on the diagonal) and it is retired."""
    T = st["T"]
    both = int(T[c, j])
    T[c, c] += T[j, j] - both
    others = np.ones(T.shape[0], dtype=bool)
    others[[c, j]] = False
    T[c, others] = np.minimum(T[c, others] + T[j, others], np.minimum(np.diag(T)[others], T[c, c]))
    T[others, c] = T[c, others]
    T[j, :] = 0
    T[:, j] = 0
    st["NS"][1] = int(np.trace(T))
    o = st["label_origin"]
    o[LAST_USED, c] = max(o[LAST_USED, c], o[LAST_USED, j])
    retire(st, j)


def _active_new(st):
    o = st["label_origin"]
    return int(np.count_nonzero((o[NUMBER] > 0) & (o[RETIRED] == 0)))


def _retire_unused(st, pos):
    """Retire every new label that no label named, not predicted for NOVELTY_FORGET instances."""
    o = st["label_origin"]
    unused = o[LAST_USED] < pos - NOVELTY_FORGET
    stale = np.flatnonzero((o[NUMBER] > 0) & (o[RETIRED] == 0) & (o[NAMED] < 0) & unused)
    for c in stale[::-1]:
        retire(st, int(c))


def retire(st, c):
    """Retire label c: its map is removed (it is never predicted again); its column and counts
    stay."""
    lo, hi = int(st["offsets"][c]), int(st["offsets"][c + 1])
    _schema.delete(st, "M", lo, hi)
    st["offsets"][c + 1 :] -= hi - lo
    _schema.reset_label(st, c)  # (what labels taught it, its gate and acceptance)
    st["label_origin"][RETIRED, c] = 1
