"""MINAS-BR: novelty detection for multi-label streams with micro-clusters, one model per label.

The delayed-label baseline of the paper (Costa Junior et al., BRACIS 2019), written for this
project from the specification in ``docs/minas-br.md``. It is the binary-relevance version of
MINAS: every label is a set of micro-clusters learnt offline; online, an instance gets every label
whose nearest micro-cluster contains it; instances no label explains wait in a short-term memory
that is clustered from time to time into new micro-clusters, which either *extend* the labels they
are close to or found a *novelty pattern* (a new, unnamed label).

Everything runs in NumPy. The stream is processed in blocks of instances that share the same model
(the model only changes at a novelty-detection step or a forgetting step, whose times depend on the
stream alone), so one block costs a few array operations whatever its length.
"""

import math
import numbers

import numpy as np

from .._base import ParamsMixin
from .._validation import check_features, check_float, check_int, check_labels, check_option
from ..exceptions import NotFittedError

__all__ = ["MINASBR"]

# categories of a micro-cluster
NORMAL, EXT, NOV, EXT_NOV = 0, 1, 2, 3
CATEGORY_NAMES = ("normal", "ext", "nov", "extNov")

# longest block of instances classified with one set of distance computations
_BLOCK = 2048
# most entries of one (rows x micro-clusters) distance table, 32 MB of float64: blocks and k-means
# assignments are computed in row slices below it, so memory does not grow with the product of
# the number of rows and of clusters (results do not depend on the slicing)
_DIST_ELEMS = 2**22
# time steps are int64: theta and omega far beyond any stream length are refused
_MAX_STEPS = 2**62
# Lloyd's k-means converges in far fewer updates
_MAX_ITER = 10_000


# ---------------------------------------------------------------------------------- helpers


def _sq_dists_exact(X, C):
    """Squared Euclidean distances (n, m), accumulated feature by feature.

    Each entry is computed from its own two rows only, in a fixed order, so it does not depend on
    how many rows are passed at once (the stream's predictions do not depend on the chunking).
    """
    d = np.zeros((X.shape[0], C.shape[0]))
    for a in range(X.shape[1]):
        diff = X[:, a, None] - C[None, :, a]
        diff *= diff
        d += diff
    return d


def _sq_dists_fast(X, C, x2=None):
    """Squared Euclidean distances (n, m) from one matrix product (for the k-means steps)."""
    if x2 is None:
        x2 = np.einsum("ij,ij->i", X, X)
    c2 = np.einsum("ij,ij->i", C, C)
    d = X @ C.T
    d *= -2.0
    d += x2[:, None]
    d += c2[None, :]
    np.maximum(d, 0.0, out=d)
    return d


def _cluster_sums(X, assign, k):
    """Per-cluster sums of the rows of X, (k, n_features)."""
    return np.stack(
        [np.bincount(assign, weights=X[:, a], minlength=k) for a in range(X.shape[1])], axis=1
    )


def _nearest(X, centres, x2):
    """Index of the nearest centre of every row (ties: the lower index), in row slices that keep
    the distance table below ``_DIST_ELEMS`` entries."""
    n, k = X.shape[0], centres.shape[0]
    rows = max(1, _DIST_ELEMS // max(k, 1))
    if n <= rows:
        return np.argmin(_sq_dists_fast(X, centres, x2), axis=1)
    out = np.empty(n, dtype=np.intp)
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        out[lo:hi] = np.argmin(_sq_dists_fast(X[lo:hi], centres, x2[lo:hi]), axis=1)
    return out


def _kmeans(X, centres, max_iter):
    """Lloyd's k-means from the given initial centres.

    At most ``max_iter`` centre updates; it stops early once no assignment changes (the centres
    then stay where they are, so the result equals that of running all ``max_iter`` updates).
    A centre that loses all its members stays where it is.

    Returns
    -------
    assign : (n,) int64 ndarray
        Index of the nearest final centre of every row (ties: the lower index).
    """
    centres = np.array(centres, dtype=np.float64, copy=True)
    k = centres.shape[0]
    x2 = np.einsum("ij,ij->i", X, X)
    assign = _nearest(X, centres, x2)
    for _ in range(max_iter):
        counts = np.bincount(assign, minlength=k)
        sums = _cluster_sums(X, assign, k)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
        new = _nearest(X, centres, x2)
        if np.array_equal(new, assign):
            break
        assign = new
    return assign


def _cluster_features(X, assign, k, min_size):
    """Centre, radius and weight of each cluster with at least ``min_size`` members.

    The radius is twice the root-mean-square distance of the members to their centre,
    ``2 * sqrt(sum_a var_a)``; the per-feature variances are taken about the centre, which equals
    ``SS/N - (LS/N)^2`` of the cluster feature vector without its cancellation error.

    Returns
    -------
    kept : (k',) int64 ndarray
        Indices of the kept clusters, increasing.
    centres : (k', n_features) ndarray
    radii, weights : (k',) ndarray
    """
    counts = np.bincount(assign, minlength=k)
    kept = np.flatnonzero(counts >= min_size)
    A = X.shape[1]
    if kept.size == 0:
        return kept, np.empty((0, A)), np.empty(0), np.empty(0)
    centres = _cluster_sums(X, assign, k) / np.maximum(counts, 1)[:, None]
    dev = X - centres[assign]
    var = _cluster_sums(dev * dev, assign, k) / np.maximum(counts, 1)[:, None]
    radii = 2.0 * np.sqrt(var.sum(axis=1))
    radii[counts == 1] = 0.0
    return kept, centres[kept], radii[kept], counts[kept].astype(np.float64)


def _leaders(X, radius):
    """Leader clustering in arrival order: row 0 leads; a row leads when it lies at distance
    ``>= radius`` from every earlier leader. Returns the leaders' row indices, increasing."""
    n = X.shape[0]
    free = np.ones(n, dtype=bool)  # rows not within `radius` of an earlier leader
    leaders = []
    i = 0
    while True:
        leaders.append(i)
        rest = X[i + 1 :]
        d = np.sqrt(_sq_dists_exact(rest, X[i : i + 1])[:, 0])
        free[i + 1 :] &= d >= radius
        nxt = np.flatnonzero(free[i + 1 :])
        if nxt.size == 0:
            return np.asarray(leaders, dtype=np.int64)
        i = i + 1 + int(nxt[0])


def _group_nearest(d, starts, radii):
    """Per group of columns: the nearest column (first on ties), its distance, and whether it lies
    within that column's radius.

    Parameters
    ----------
    d : (n, m) ndarray
        Distances, columns sorted by group.
    starts : (G,) int64 ndarray
        First column of every group (all groups non-empty).
    radii : (m,) ndarray

    Returns
    -------
    dmin : (n, G) ndarray
    idx : (n, G) int64 ndarray
        Column of the nearest micro-cluster of each group.
    inside : (n, G) bool ndarray
    """
    m = d.shape[1]
    dmin = np.minimum.reduceat(d, starts, axis=1)
    sizes = np.diff(np.append(starts, m))
    hit = d == np.repeat(dmin, sizes, axis=1)
    cols = np.where(hit, np.arange(m), m)
    idx = np.minimum.reduceat(cols, starts, axis=1)
    inside = dmin <= radii[idx]
    return dmin, idx, inside


def _candidate_votes(b, r_star, r_c, f):
    """Validity and extension votes of a candidate cluster against every model.

    Parameters
    ----------
    b : (G,) ndarray
        Distance from the candidate's centre to the nearest micro-cluster centre of each model.
    r_star : (G,) ndarray
        Radius of that nearest micro-cluster.
    r_c : float
        Radius of the candidate.
    f : float
        Extension threshold factor.

    Returns
    -------
    valid : (G,) bool ndarray
        Silhouette (b - a) / max(a, b) > 0 with a = r_c / 2.
    extension : (G,) bool ndarray
        Valid, and b < f * r_star / 2 or b < r_star / 2 + r_c / 2. A valid model that does not
        vote for an extension votes for a novelty.
    """
    b = np.asarray(b, dtype=np.float64)
    r_star = np.asarray(r_star, dtype=np.float64)
    a = r_c / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        valid = (b - a) / np.maximum(a, b) > 0
    extension = valid & ((b < f * r_star / 2.0) | (b < r_star / 2.0 + a))
    return valid, extension


def _check_random_state(value):
    if value is None or isinstance(value, np.random.Generator):
        return np.random.default_rng(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            "random_state must be None, an integer or a numpy.random.Generator, "
            f"got {value!r} ({type(value).__name__})"
        )
    if value < 0:
        raise ValueError(f"random_state must be a non-negative integer, got {value}")
    return np.random.default_rng(int(value))


# ---------------------------------------------------------------------------------- estimator


class MINASBR(ParamsMixin):
    """MINAS-BR, multi-label novelty detection for streams with infinitely delayed labels.

    Binary relevance over micro-clusters: each label is modelled by its own set of micro-clusters
    (centre, radius, weight), learnt offline by k-means on the training instances that carry the
    label. Online, the labels of an instance are those whose *nearest* micro-cluster contains it.
    An instance no model explains is *unknown*: it is predicted with no label and kept in a
    short-term memory; when that memory holds ``theta`` instances (and no novelty detection ran in
    the last ``theta`` time steps) the memory is clustered, and every cohesive, well separated new
    cluster either extends the labels it lies close to or becomes a *novelty pattern*. Every
    ``omega`` time steps, micro-clusters not used for ``omega`` steps and memory entries older than
    ``omega`` steps are forgotten. The method never sees a label of the stream.

    Offline (``fit``): for each label j, X_j = the training instances with label j;
    k_j = max(1, ceil(|X_j| * k_ini)) initial centres (random distinct rows of X_j, or its first
    k_j rows with ``init="first"``), Lloyd's k-means for at most ``max_iter`` updates; clusters with
    fewer than ``min_cluster_size`` members are dropped. The cardinality used by the extension
    rule is ``ceil(z)``, z the mean number of labels of a training instance.

    Online (``predict_stream``), for each instance x at time t = 1, 2, ...:

    1. For every model (label or novelty pattern) its nearest micro-cluster (Euclidean distance to
       the centre); when the distance is at most that micro-cluster's radius the model *votes* and
       the micro-cluster's last-used time becomes t.
    2. At least one vote: the prediction is every voting known label (``label_selection="all"``),
       or the ``ceil(z)`` voting models nearest to x (``"closest"``), known labels kept.
    3. No vote: x is unknown (all-zero row) and joins the short-term memory; if the memory holds
       at least ``theta`` instances and the last novelty detection ran before t - theta, novelty
       detection runs now.
    4. When t is a multiple of ``omega``: memory entries from before t - omega are dropped, and
       micro-clusters last used before t - omega are forgotten (moved to a sleep memory that is
       never used again; only their number is kept). A model left empty disappears.

    Novelty detection: the leader algorithm over the memory, in arrival order, with threshold
    R_max = the largest micro-cluster radius of the whole model, gives the initial centres of a
    k-means (at most ``max_iter`` updates); clusters with fewer than ``min_cluster_size`` members
    are discarded. Each remaining candidate C (centre c, radius r_C) is then compared with every
    model M in turn (including the changes the previous candidates made):

    * validity (silhouette): b = distance from c to the nearest centre of M, a = r_C / 2; C is
      valid for M when (b - a) / max(a, b) > 0;
    * for a valid model, with m* its nearest micro-cluster (distance D = b, radius r*): an
      *extension* vote when D < f * r* / 2 or D < r* / 2 + r_C / 2, otherwise a *novelty* vote.

    If C is valid for at least one model its instances leave the memory, and: with more extension
    votes than ``ceil(z)``, C is added (category "ext", or "extNov" when m* belongs to a novelty
    pattern) to every model that voted for an extension; otherwise C founds a new novelty-pattern
    model made of C and copies of the m* of the extension-voting models (category "nov"). New
    micro-clusters count as used at the time of the detection.

    What the output shows: the (n, n_labels) prediction holds the known labels only. Novelty
    patterns are unnamed labels (MINAS-BR's own evaluation associates them afterwards with the
    novel classes of the stream, which this package's protocol removes); a novelty-pattern model
    still votes, so an instance it explains is not unknown, but the vote adds no column to the
    output. Their number is ``n_novelty_patterns_``; ``n_novelty_explained_`` counts the
    instances that a novelty pattern voted for, and ``n_unknown_`` the unknown instances (empty
    rows; ``predict_stream(..., return_unknown=True)`` also returns which rows they are, for
    MINAS-BR's convention of leaving unknown instances out of the measures).

    Parameters
    ----------
    k_ini : float, default=0.01
        Fraction of a label's training instances that gives its number of offline micro-clusters,
        in (0, 1].
    theta : int, default=1000
        Short-term memory size that triggers novelty detection, and the least number of time steps
        between two detections (at most 2**62). The paper's authors used 100 on the
        MOA-Spher-2C-2A stream.
    omega : int, default=2000
        Forgetting window, in time steps (at most 2**62). The authors used 100 on the
        MOA-Spher-2C-2A stream. The short-term memory holds at most 2 ``omega`` instances.
    f : float, default=1.1
        Extension threshold factor (> 0).
    min_cluster_size : int, default=3
        Offline and novelty-detection clusters with fewer members are discarded.
    max_iter : int, default=101
        Most k-means centre updates (MOA's k-means runs 101 Lloyd iterations), at most 10,000.
    init : {"random", "first"}, default="random"
        Initial offline centres: distinct random training instances of the label (seeded by
        ``random_state``), or its first k_j instances (deterministic).
    label_selection : {"all", "closest"}, default="all"
        Every voting label ("all", the original method), or the ``ceil(z)`` voting models nearest
        to the instance ("closest", a variant of the authors' code).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the choice of the initial offline centres; the online phase is deterministic.

    Attributes
    ----------
    n_features_in_, n_labels_ : int
        Shape of the training data.
    train_cardinality_ : float
        z, the mean number of labels of a training instance.
    cardinality_ : int
        ceil(z), the extension threshold and the size of the "closest" label selection.
    n_offline_clusters_ : (n_labels,) int64 ndarray
        Micro-clusters each label kept after the offline phase.
    cluster_centers_ : (m, n_features) ndarray
        Centres of the current micro-clusters, grouped by model.
    cluster_radii_, cluster_weights_ : (m,) ndarray
        Their radii and numbers of members.
    cluster_models_ : (m,) int64 ndarray
        The model of each micro-cluster: j < n_labels for known label j, n_labels + k for the
        k-th novelty pattern (k from 0).
    cluster_categories_ : (m,) ndarray of str
        "normal" (offline), "ext", "nov" or "extNov".
    cluster_last_used_ : (m,) int64 ndarray
        Last time step each micro-cluster explained an instance (0 for an unused offline one).
    short_term_memory_ : (s, n_features) ndarray
        The unknown instances waiting in the short-term memory, oldest first.
    short_term_memory_times_ : (s,) int64 ndarray
        Their time steps.
    n_seen_ : int
        t, the stream instances processed so far.
    n_unknown_ : int
        Instances predicted unknown so far.
    n_novelty_explained_ : int
        Instances for which at least one novelty-pattern model voted.
    n_novelty_detections_ : int
        Novelty-detection procedures run.
    n_extensions_ : int
        Candidate clusters that became extensions.
    n_novelty_patterns_ : int
        Novelty patterns created.
    n_forgotten_ : int
        Micro-clusters forgotten (moved to the sleep memory).
    n_memory_expired_ : int
        Short-term memory entries dropped for being older than ``omega`` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from mlsom.baselines import MINASBR
    >>> rng = np.random.default_rng(0)
    >>> centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    >>> lab = rng.integers(0, 3, size=3000)
    >>> X = centres[lab] + rng.normal(size=(3000, 2))
    >>> Y = np.eye(3, dtype=np.uint8)[lab]
    >>> model = MINASBR(k_ini=0.05, random_state=0).fit(X[:600], Y[:600])
    >>> Y_hat = model.predict_stream(X[600:])
    >>> Y_hat.shape
    (2400, 3)
    >>> bool((Y_hat[np.arange(2400), lab[600:]] == 1).mean() > 0.8)
    True
    """

    #: interface of the evaluation protocol (docs/methods.md): unsupervised online
    kind = "online"

    def __init__(
        self,
        k_ini=0.01,
        theta=1000,
        omega=2000,
        f=1.1,
        *,
        min_cluster_size=3,
        max_iter=101,
        init="random",
        label_selection="all",
        random_state=None,
    ):
        self.k_ini = k_ini
        self.theta = theta
        self.omega = omega
        self.f = f
        self.min_cluster_size = min_cluster_size
        self.max_iter = max_iter
        self.init = init
        self.label_selection = label_selection
        self.random_state = random_state

    # ------------------------------------------------------------------ scikit-learn conventions

    def _validate_params(self):
        p = {
            "k_ini": check_float("k_ini", self.k_ini, low=0.0, high=1.0, low_open=True),
            "theta": check_int("theta", self.theta, low=1, high=_MAX_STEPS),
            "omega": check_int("omega", self.omega, low=1, high=_MAX_STEPS),
            "f": check_float("f", self.f, low=0.0, low_open=True),
            "min_cluster_size": check_int("min_cluster_size", self.min_cluster_size, low=1),
            "max_iter": check_int("max_iter", self.max_iter, low=1, high=_MAX_ITER),
            "init": check_option("init", self.init, {"random", "first"}),
            "label_selection": check_option(
                "label_selection", self.label_selection, {"all", "closest"}
            ),
        }
        p["rng"] = _check_random_state(self.random_state)
        return p

    # ------------------------------------------------------------------ offline phase

    def fit(self, X, Y):
        """Offline phase: k-means micro-clusters for every label of a labelled set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training instances (converted to float64).
        Y : array-like of shape (n_samples, n_labels)
            Their label sets as a 0/1 matrix. A label with no positive (or whose clusters are all
            smaller than ``min_cluster_size``) has no micro-cluster and is never predicted.

        Returns
        -------
        self
        """
        p = self._validate_params()
        X = check_features("X", X)
        Y = check_labels("Y", Y, X.shape[0])
        n, A = X.shape
        L = Y.shape[1]
        rng = p.pop("rng")
        centres, radii, weights, models = [], [], [], []
        n_off = np.zeros(L, dtype=np.int64)
        for j in range(L):
            Xj = X[Y[:, j] == 1]
            if Xj.shape[0] == 0:
                continue
            k = max(1, math.ceil(Xj.shape[0] * p["k_ini"]))
            if p["init"] == "random":
                start = Xj[rng.choice(Xj.shape[0], size=k, replace=False)]
            else:
                start = Xj[:k]
            assign = _kmeans(Xj, start, p["max_iter"])
            _, c, r, w = _cluster_features(Xj, assign, k, p["min_cluster_size"])
            centres.append(c)
            radii.append(r)
            weights.append(w)
            models.append(np.full(len(r), j, dtype=np.int64))
            n_off[j] = len(r)
        z = float(Y.sum(axis=1).mean())
        m = int(n_off.sum())
        self._params = p
        self._n_features = A
        self._n_labels = L
        self._z = z
        self._card = -(-int(Y.sum()) // n)  # ceil(z), exactly
        self._n_off = n_off
        self._C = np.concatenate(centres) if centres else np.empty((0, A))
        self._r = np.concatenate(radii) if radii else np.empty(0)
        self._w = np.concatenate(weights) if weights else np.empty(0)
        self._g = np.concatenate(models) if models else np.empty(0, dtype=np.int64)
        self._cat = np.full(m, NORMAL, dtype=np.int8)
        self._used = np.zeros(m, dtype=np.int64)
        self._next_model = L
        self._t = 0
        self._last_check = 0
        self._stm_X = np.empty((0, A))
        self._stm_t = np.empty(0, dtype=np.int64)
        self._counters = dict(
            unknown=0,
            novelty_explained=0,
            detections=0,
            extensions=0,
            novelty_patterns=0,
            forgotten=0,
            memory_expired=0,
        )
        self._regroup()
        return self

    # ------------------------------------------------------------------ model bookkeeping

    def _regroup(self):
        """Sort the micro-clusters by model (stable: insertion order within a model) and record
        where each model's block starts."""
        order = np.argsort(self._g, kind="stable")
        for name in ("_C", "_r", "_w", "_g", "_cat", "_used"):
            setattr(self, name, getattr(self, name)[order])
        if self._g.size:
            self._models, self._starts = np.unique(self._g, return_index=True)
        else:
            self._models = np.empty(0, dtype=np.int64)
            self._starts = np.empty(0, dtype=np.int64)

    def _add_clusters(self, centres, radii, weights, model, categories, t):
        k = len(radii)
        self._C = np.concatenate([self._C, np.asarray(centres).reshape(k, -1)])
        self._r = np.concatenate([self._r, radii])
        self._w = np.concatenate([self._w, weights])
        self._g = np.concatenate([self._g, np.broadcast_to(np.asarray(model, np.int64), (k,))])
        self._cat = np.concatenate([self._cat, np.asarray(categories, dtype=np.int8)])
        self._used = np.concatenate([self._used, np.full(k, t, dtype=np.int64)])
        self._regroup()

    def _fitted(self):
        if not hasattr(self, "_C"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(X, Y) first"
            )

    # ------------------------------------------------------------------ online phase

    def predict_stream(self, X, *, return_unknown=False, return_patterns=False):
        """Online phase: classify the rows of X in order, adapting the model from them alone.

        Calling it on consecutive chunks of a stream gives the same predictions and the same final
        model as one call on the whole stream. No label is needed, ever.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next instances of the stream, in arrival order.
        return_unknown : bool, default=False
            Also return which rows were unknown (explained by no model).
        return_patterns : bool, default=False
            Also return the novelty patterns' votes, for MINAS-BR's novelty evaluation
            (:func:`mlsom.evaluation.evaluate_novelty`).

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels), dtype uint8
            The predicted known labels, 0/1; unknown rows are all zero.
        unknown : ndarray of shape (n_samples,), dtype bool
            Only with ``return_unknown=True``.
        patterns : ndarray of shape (n_samples, n_novelty_patterns_), dtype uint8
            Only with ``return_patterns=True``: column k is 1 where the k-th novelty pattern
            voted (as the known labels, under ``label_selection``), for every pattern that
            exists at the end of the call; a pattern created in a later call adds a column
            then, so earlier chunks' outputs are padded with zero columns to put them together.
            Returned last.
        """
        self._fitted()
        if not isinstance(return_unknown, (bool, np.bool_)):
            raise TypeError(
                f"return_unknown must be a bool, got {return_unknown!r} "
                f"({type(return_unknown).__name__})"
            )
        if not isinstance(return_patterns, (bool, np.bool_)):
            raise TypeError(
                f"return_patterns must be a bool, got {return_patterns!r} "
                f"({type(return_patterns).__name__})"
            )
        X = check_features("X", X, n_features=self._n_features, allow_empty=True)
        n = X.shape[0]
        Y = np.zeros((n, self._n_labels), dtype=np.uint8)
        unknown = np.zeros(n, dtype=bool)
        votes = [] if return_patterns else None
        i = 0
        while i < n:
            i += self._step_block(X, i, Y, unknown, votes)
        out = (Y, unknown) if return_unknown else (Y,)
        if return_patterns:
            P = np.zeros((n, self._counters["novelty_patterns"]), dtype=np.uint8)
            for rows, cols in votes:
                P[rows, cols] = 1
            out += (P,)
        return out if len(out) > 1 else Y

    def _step_block(self, X, i, Y, unknown_out, votes=None):
        """Classify rows i, i+1, ... of X with the current model, up to the next event (novelty
        detection, forgetting), the end of X or ``_BLOCK`` rows; apply the event. Returns the
        number of rows consumed."""
        p = self._params
        theta, omega = p["theta"], p["omega"]
        t0 = self._t
        # rows per block: at most _BLOCK, and a distance table of at most _DIST_ELEMS entries
        rows = max(1, min(_BLOCK, _DIST_ELEMS // max(len(self._r), 1)))
        nb = min(X.shape[0] - i, omega - t0 % omega, rows)
        Xb = X[i : i + nb]
        L = self._n_labels
        if self._models.size:
            d = np.sqrt(_sq_dists_exact(Xb, self._C))
            dmin, idx, vote = _group_nearest(d, self._starts, self._r)
        else:
            dmin = np.empty((nb, 0))
            idx = np.empty((nb, 0), dtype=np.int64)
            vote = np.empty((nb, 0), dtype=bool)
        unknown = ~vote.any(axis=1)

        # the first unknown row at which novelty detection fires ends the block
        end, detect = nb, False
        u = np.flatnonzero(unknown)
        if u.size:
            size_after = len(self._stm_t) + 1 + np.arange(u.size)
            fires = (size_after >= theta) & (t0 + 1 + u > self._last_check + theta)
            if fires.any():
                end, detect = int(u[np.argmax(fires)]) + 1, True
        if end < nb:
            dmin, idx, vote, unknown = dmin[:end], idx[:end], vote[:end], unknown[:end]
        times = t0 + 1 + np.arange(end, dtype=np.int64)

        # predictions: known labels among the voting models
        known = self._models < L
        if p["label_selection"] == "closest" and self._models.size > self._card:
            masked = np.where(vote, dmin, np.inf)
            nearest = np.argsort(masked, axis=1, kind="stable")[:, : self._card]
            chosen = np.zeros_like(vote)
            np.put_along_axis(chosen, nearest, True, axis=1)
            chosen &= vote
        else:
            chosen = vote
        Y[i : i + end, self._models[known]] = chosen[:, known]
        if votes is not None and not known.all():
            r, k = np.nonzero(chosen[:, ~known])
            votes.append((i + r, self._models[~known][k] - L))
        unknown_out[i : i + end] = unknown
        nov = vote[:, ~known].any(axis=1)
        self._counters["novelty_explained"] += int(nov.sum())
        self._counters["unknown"] += int(unknown.sum())

        # the nearest micro-cluster of every voting model was used now
        if vote.any():
            rows, cols = np.nonzero(vote)
            np.maximum.at(self._used, idx[rows, cols], times[rows])

        # unknown instances join the short-term memory
        if unknown.any():
            self._stm_X = np.concatenate([self._stm_X, Xb[:end][unknown]])
            self._stm_t = np.concatenate([self._stm_t, times[unknown]])
        self._t = t0 + end
        if detect:
            self._novelty_detection()
        if self._t % omega == 0:
            self._forget()
        return end

    def _novelty_detection(self):
        """Cluster the short-term memory and turn the valid clusters into extensions or novelty
        patterns (see the class docstring)."""
        p = self._params
        t = self._t
        self._last_check = t
        self._counters["detections"] += 1
        if not self._models.size:
            return  # every model was forgotten: no cluster can be valid
        S = self._stm_X
        r_max = float(self._r.max()) if self._r.size else 0.0
        leaders = _leaders(S, r_max)
        assign = _kmeans(S, S[leaders], p["max_iter"])
        kept, centres, radii, weights = _cluster_features(
            S, assign, len(leaders), p["min_cluster_size"]
        )
        used = np.zeros(len(S), dtype=bool)
        f = p["f"]
        for c, rc, w, k in zip(centres, radii, weights, kept, strict=True):
            d = np.sqrt(_sq_dists_exact(c[None, :], self._C))
            dmin, idx, _ = _group_nearest(d, self._starts, self._r)
            b, idx = dmin[0], idx[0]
            valid, ext = _candidate_votes(b, self._r[idx], rc, f)
            if not valid.any():
                continue
            used |= assign == k
            ext_models = self._models[ext]
            ext_mc = idx[ext]
            if ext.sum() > self._card:
                self._counters["extensions"] += 1
                cats = np.where(np.isin(self._cat[ext_mc], (NORMAL, EXT)), EXT, EXT_NOV)
                self._add_clusters(
                    np.repeat(c[None, :], len(ext_models), axis=0),
                    np.full(len(ext_models), rc),
                    np.full(len(ext_models), w),
                    ext_models,
                    cats,
                    t,
                )
            else:
                self._counters["novelty_patterns"] += 1
                new = self._next_model
                self._next_model += 1
                self._add_clusters(
                    np.vstack([self._C[ext_mc], c[None, :]]),
                    np.append(self._r[ext_mc], rc),
                    np.append(self._w[ext_mc], w),
                    new,
                    np.full(len(ext_mc) + 1, NOV),
                    t,
                )
        if used.any():
            self._stm_X = self._stm_X[~used]
            self._stm_t = self._stm_t[~used]

    def _forget(self):
        """Drop memory entries and micro-clusters older than ``omega`` time steps."""
        limit = self._t - self._params["omega"]
        old = self._stm_t < limit
        if old.any():
            self._counters["memory_expired"] += int(old.sum())
            self._stm_X = self._stm_X[~old]
            self._stm_t = self._stm_t[~old]
        stale = self._used < limit
        if stale.any():
            self._counters["forgotten"] += int(stale.sum())
            keep = ~stale
            for name in ("_C", "_r", "_w", "_g", "_cat", "_used"):
                setattr(self, name, getattr(self, name)[keep])
            self._regroup()

    # ------------------------------------------------------------------ fitted attributes

    def _attr(self, value):
        self._fitted()
        return value() if callable(value) else value

    @property
    def n_features_in_(self):
        return self._attr(lambda: self._n_features)

    @property
    def n_labels_(self):
        return self._attr(lambda: self._n_labels)

    @property
    def train_cardinality_(self):
        return self._attr(lambda: self._z)

    @property
    def cardinality_(self):
        return self._attr(lambda: self._card)

    @property
    def n_offline_clusters_(self):
        return self._attr(lambda: self._n_off.copy())

    @property
    def cluster_centers_(self):
        return self._attr(lambda: self._C.copy())

    @property
    def cluster_radii_(self):
        return self._attr(lambda: self._r.copy())

    @property
    def cluster_weights_(self):
        return self._attr(lambda: self._w.copy())

    @property
    def cluster_models_(self):
        return self._attr(lambda: self._g.copy())

    @property
    def cluster_categories_(self):
        return self._attr(lambda: np.asarray(CATEGORY_NAMES)[self._cat])

    @property
    def cluster_last_used_(self):
        return self._attr(lambda: self._used.copy())

    @property
    def short_term_memory_(self):
        return self._attr(lambda: self._stm_X.copy())

    @property
    def short_term_memory_times_(self):
        return self._attr(lambda: self._stm_t.copy())

    @property
    def n_seen_(self):
        return self._attr(lambda: self._t)

    @property
    def n_unknown_(self):
        return self._attr(lambda: self._counters["unknown"])

    @property
    def n_novelty_explained_(self):
        return self._attr(lambda: self._counters["novelty_explained"])

    @property
    def n_novelty_detections_(self):
        return self._attr(lambda: self._counters["detections"])

    @property
    def n_extensions_(self):
        return self._attr(lambda: self._counters["extensions"])

    @property
    def n_novelty_patterns_(self):
        return self._attr(lambda: self._counters["novelty_patterns"])

    @property
    def n_forgotten_(self):
        return self._attr(lambda: self._counters["forgotten"])

    @property
    def n_memory_expired_(self):
        return self._attr(lambda: self._counters["memory_expired"])
