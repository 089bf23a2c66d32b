"""Lower-bound baselines: batch multi-label learners trained once on the labelled set.

The paper compares its method with 31 Mulan learners that are trained on the initial labelled
set and never updated (lower bounds). This module rebuilds the problem-transformation ones on
scikit-learn base learners. Each class follows the ``"batch"`` interface of ``docs/methods.md``:
``fit(X_train, Y_train)`` once, then ``predict(X_chunk) -> uint8 (n, L)``; ``predict`` has no
label argument, never refits and keeps no state between calls.

Base learners (``base=``), chosen to stand for Weka's defaults as used by Mulan:

``"j48"``
    :class:`J48Tree`: scikit-learn's CART tree with the entropy criterion and at least two
    instances per leaf, followed by C4.5-style pessimistic pruning (confidence 0.25, subtree
    replacement). Approximates Weka J48: CART splits are always binary, C4.5's subtree raising is
    not done, and the binomial upper confidence limit is the exact (Clopper-Pearson) one where
    Weka uses a normal approximation.
``"svm"``
    :class:`LinearSVM`: min-max scaling to [0, 1] on the training data followed by
    ``SVC(kernel="linear", C=1)``: Weka SMO's defaults (linear kernel, C = 1, normalised
    inputs, pairwise multi-class, hard 0/1 outputs since no logistic model is fitted). libsvm
    and SMO solve the same problem with different solvers and tolerances, so the hyperplanes
    agree only approximately.
``"knn"``
    Min-max scaling followed by one nearest neighbour (Weka IBk's defaults: k = 1, Euclidean
    distance on range-normalised attributes). IBk averages the classes of neighbours tied at the
    same distance; scikit-learn takes one of them.

Labels (or label sets) that have a single value in the training data are not given to a base
learner: the constant is predicted.
"""

import math

import numpy as np
from scipy.special import betaincinv
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from .._base import ParamsMixin
from .._memory import check_allocation, nbytes_of
from .._validation import check_features, check_float, check_int, check_labels, check_option
from ..exceptions import NotFittedError

__all__ = [
    "HOMER",
    "RAkEL",
    "BinaryRelevance",
    "ClassifierChain",
    "EnsembleOfClassifierChains",
    "EnsembleOfPrunedSets",
    "J48Tree",
    "LabelPowerset",
    "LinearSVM",
    "PrunedSets",
]

BASE_LEARNERS = ("j48", "svm", "knn")
_SEED_HIGH = 2**31 - 1
_MAX_INT64 = 2**63 - 1
# balanced k-means iterations (Mulan's HOMER runs 20)
_MAX_ITER = 10_000
# Rough bytes kept by one fitted base learner per training row (a tree's node arrays, an SVM's
# support vectors, a 1-NN's copy of the scaled rows), and per learner.
_MODEL_BYTES_PER_ROW = 32
_MODEL_BYTES = 4096


def _check_models_memory(name, value, n_learners, X, what):
    """Refuse a number of base learners whose fitted models cannot be kept in memory."""
    n, A = X.shape
    check_allocation(
        name,
        value,
        nbytes_of(n_learners, _MODEL_BYTES + _MODEL_BYTES_PER_ROW * (n + A)),
        f"{n_learners} fitted base learners ({what}) on {n} training rows",
    )


# --------------------------------------------------------------------------- base learners


class J48Tree(ClassifierMixin, BaseEstimator):
    """Decision tree standing for Weka's J48 (C4.5): entropy splits plus pessimistic pruning.

    A scikit-learn ``DecisionTreeClassifier(criterion="entropy")`` is grown, then pruned bottom-up
    as C4.5 does by subtree replacement (Quinlan 1993, ch. 4): a node of ``N`` training instances
    of which ``E`` are not of its majority class has the estimated error ``N * U(E, N)``, where
    ``U`` is the upper limit of the binomial confidence interval at level ``confidence``; the node
    becomes a leaf when that estimate does not exceed the summed estimates of its subtree's
    leaves by more than 0.1 (the margin Weka's J48 uses). Pruning is applied at prediction time
    by stopping at the first pruned ancestor of the leaf an instance reaches.

    Parameters
    ----------
    confidence : float or None, default=0.25
        Confidence level of the pruning (J48's ``-C``), in (0, 1); ``None`` keeps the unpruned
        tree.
    min_samples_leaf : int, default=2
        Minimum number of training instances in a leaf (J48's ``-M``).
    random_state : int or None, default=None
        Seed of the tree's tie-breaking between equally good splits.
    """

    def __init__(self, confidence=0.25, min_samples_leaf=2, random_state=None):
        self.confidence = confidence
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def fit(self, X, y):
        """Grow and prune the tree on ``X`` (n, A) and class labels ``y`` (n,)."""
        if self.confidence is not None:
            # outside (0, 1) the binomial limit is NaN and nothing would ever be pruned
            cf = check_float("confidence", self.confidence, low=0.0, high=1.0, low_open=True)
            if cf >= 1.0:
                raise ValueError(f"confidence must be < 1, got {cf}")
        tree = DecisionTreeClassifier(
            criterion="entropy",
            min_samples_leaf=self.min_samples_leaf,
            random_state=self.random_state,
        ).fit(X, y)
        self.tree_ = tree
        self.classes_ = tree.classes_
        t = tree.tree_
        value = t.value[:, 0, :]
        # scikit-learn >= 1.4 stores class fractions, older versions counts: normalise either way
        dist = value / np.maximum(value.sum(axis=1, keepdims=True), 1e-300)
        n_node = t.n_node_samples.astype(np.float64)
        left, right = t.children_left, t.children_right
        n_nodes = t.node_count
        pruned = np.zeros(n_nodes, dtype=bool)
        if self.confidence is not None and n_nodes > 1:
            errors = n_node - np.rint(dist.max(axis=1) * n_node)
            leaf_err = _pessimistic_errors(errors, n_node, self.confidence)
            eff_err = leaf_err.copy()
            # children always have larger indices than their parent (depth-first numbering)
            for node in range(n_nodes - 1, -1, -1):
                if left[node] == -1:
                    continue
                subtree = eff_err[left[node]] + eff_err[right[node]]
                if leaf_err[node] <= subtree + 0.1:
                    pruned[node] = True
                else:
                    eff_err[node] = subtree
        # effective node of every node: its shallowest pruned ancestor (or itself)
        top = np.full(n_nodes, -1, dtype=np.intp)
        for node in range(n_nodes):
            if top[node] == -1 and pruned[node]:
                top[node] = node
            for child in (left[node], right[node]):
                if child != -1:
                    top[child] = top[node]
        self.effective_node_ = np.where(top == -1, np.arange(n_nodes), top)
        self.node_distribution_ = dist
        self.n_pruned_nodes_ = int(pruned.sum())
        return self

    def predict_proba(self, X):
        """Class distribution of the (pruned) leaf each row of ``X`` reaches."""
        leaves = self.tree_.apply(np.asarray(X, dtype=np.float32))
        return self.node_distribution_[self.effective_node_[leaves]]

    def predict(self, X):
        """Majority class of the (pruned) leaf each row of ``X`` reaches."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _pessimistic_errors(errors, n, confidence):
    """C4.5's estimated error count ``n * U(errors, n)`` with the exact binomial upper limit."""
    upper = np.ones_like(n)
    ok = errors < n
    # Clopper-Pearson: U solves P(Binomial(n, U) <= e) = confidence, i.e. U = Beta^{-1}(1 - cf)
    upper[ok] = betaincinv(errors[ok] + 1.0, n[ok] - errors[ok], 1.0 - confidence)
    return n * upper


class LinearSVM(ClassifierMixin, BaseEstimator):
    """Linear support vector machine standing for Weka's SMO with its defaults.

    Features are scaled to [0, 1] with the training minimum and range (SMO normalises its
    inputs), then ``sklearn.svm.SVC(kernel="linear", C=C)`` is trained; several classes are
    handled pairwise with voting, as SMO and libsvm do. Predictions use the primal weights
    ``coef_`` of the pairwise problems, which gives libsvm's decisions (up to rounding at the
    boundary) much faster than its kernel expansion over the support vectors.

    Parameters
    ----------
    C : float, default=1.0
        Complexity constant (SMO's ``-C``).
    """

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        """Scale ``X`` (n, A) and train on class labels ``y`` (n,) (at least two classes)."""
        self.scaler_ = MinMaxScaler().fit(X)
        svc = SVC(kernel="linear", C=self.C).fit(self.scaler_.transform(X), y)
        self.classes_ = svc.classes_
        self.coef_ = svc.coef_
        self.intercept_ = svc.intercept_
        return self

    def decision_function(self, X):
        """Pairwise decision values of shape (n, K(K-1)/2).

        Pairs come in the order (0, 1), (0, 2), ..., (1, 2), ...; a positive value favours the
        first class of the pair, except for two classes where it favours the second (the
        conventions of scikit-learn's ``SVC``).
        """
        return self.scaler_.transform(X) @ self.coef_.T + self.intercept_

    def predict(self, X):
        """Class of each row of ``X`` (pairwise voting; ties go to the first class)."""
        dec = self.decision_function(X)
        K = self.classes_.size
        if K == 2:
            return self.classes_[(dec[:, 0] > 0).astype(np.intp)]
        votes = np.zeros((dec.shape[0], K), dtype=np.intp)
        k = 0
        for i in range(K):
            for j in range(i + 1, K):
                pos = dec[:, k] > 0
                votes[pos, i] += 1
                votes[~pos, j] += 1
                k += 1
        return self.classes_[np.argmax(votes, axis=1)]


def make_base_learner(base, seed=None):
    """A fresh, unfitted scikit-learn classifier standing for a Weka base learner.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}
        Which Weka learner to stand for (see the module docstring).
    seed : int or None
        Seed of the learner's own randomness (only the tree has any), 0 to 2**32 - 1.

    Returns
    -------
    estimator
        An object with ``fit``, ``predict`` and, for ``"j48"`` and ``"knn"``, ``predict_proba``.
    """
    if seed is not None:
        seed = check_int("seed", seed, low=0, high=2**32 - 1)
    if base == "j48":
        return J48Tree(random_state=seed)
    if base == "svm":
        return LinearSVM(C=1.0)
    if base == "knn":
        return make_pipeline(MinMaxScaler(), KNeighborsClassifier(n_neighbors=1))
    raise ValueError(f"base must be one of {list(BASE_LEARNERS)}, got {base!r}")


class _Constant:
    """Stand-in model for a target with a single value in the training data."""

    def __init__(self, value):
        self.value = value

    def predict(self, X):
        return np.full(X.shape[0], self.value)


def _fit_target(base, seed, X, y):
    """Fit a base learner on one target, or a constant when the target has one value."""
    values = np.unique(y)
    if values.size == 1:
        return _Constant(values[0])
    return make_base_learner(base, seed).fit(X, y)


def _positive_score(model, X):
    """Confidence that a binary target is 1: class-1 probability, or the 0/1 prediction.

    Weka's SMO without logistic models and IBk with k = 1 give hard 0/1 distributions, so the
    prediction is the faithful confidence for them; the tree gives leaf class fractions.
    """
    if isinstance(model, _Constant):
        return np.full(X.shape[0], float(model.value))
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(X)
        return proba[:, list(model.classes_).index(1)]
    return model.predict(X).astype(np.float64)


# --------------------------------------------------------------------------- common interface


def check_training_labels(Y, n_samples):
    """Validate a 0/1 training label matrix (an all-zero matrix is allowed here)."""
    return check_labels("Y", Y, n_samples, require_positive=False)


def check_random_state(random_state):
    if random_state is None:
        return None
    return check_int("random_state", random_state, low=0)


class BatchBaseline(ParamsMixin):
    """Shared ``fit``/``predict``/``get_params`` of the lower bounds."""

    #: interface of the evaluation protocol (docs/methods.md): trained once, never updated
    kind = "batch"

    def fit(self, X, Y):
        """Train on the labelled set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training instances.
        Y : array-like of shape (n_samples, n_labels)
            Their 0/1 label matrix.

        Returns
        -------
        self
        """
        self._validate_params()
        X = check_features("X", X)
        Y = check_training_labels(Y, X.shape[0])
        self._seed = check_random_state(self.random_state)
        self._rng = np.random.default_rng(self._seed)
        try:
            self._fit(X, Y)
        finally:
            del self._rng
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        return self

    def predict(self, X):
        """Predict the label sets of a chunk of the stream (the model is not changed).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y_hat : ndarray of shape (n_samples, n_labels), dtype uint8
        """
        if not hasattr(self, "n_labels_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X = check_features("X", X, n_features=self.n_features_in_, allow_empty=True)
        if X.shape[0] == 0:
            return np.zeros((0, self.n_labels_), dtype=np.uint8)
        return np.ascontiguousarray(self._predict(X), dtype=np.uint8)

    def _validate_params(self):
        check_option("base", self.base, set(BASE_LEARNERS))

    def _next_seed(self):
        return int(self._rng.integers(_SEED_HIGH))


# --------------------------------------------------------------------------- building blocks


def _fit_br(base, seeds, X, Y):
    return [_fit_target(base, s, X, Y[:, j]) for j, s in enumerate(seeds)]


def _br_scores(models, X):
    return np.column_stack([_positive_score(m, X) for m in models])


def _br_predict(models, X):
    return np.column_stack([m.predict(X) for m in models]).astype(np.uint8)


def _fit_chain(base, seeds, X, Y, order):
    """Classifier chain: link ``k`` learns label ``order[k]`` from X and the true earlier labels."""
    models = []
    for k, j in enumerate(order):
        Xk = np.hstack([X, Y[:, order[:k]].astype(np.float64)]) if k else X
        models.append(_fit_target(base, seeds[k], Xk, Y[:, j]))
    return models


def _chain_predict(models, X, order, with_scores=False):
    """Predict along the chain, feeding each link the 0/1 predictions of the earlier links."""
    n = X.shape[0]
    Y_hat = np.zeros((n, len(order)), dtype=np.uint8)
    scores = np.zeros((n, len(order))) if with_scores else None
    for k, j in enumerate(order):
        Xk = np.hstack([X, Y_hat[:, order[:k]].astype(np.float64)]) if k else X
        Y_hat[:, j] = models[k].predict(Xk)
        if with_scores:
            scores[:, j] = _positive_score(models[k], Xk)
    return (Y_hat, scores) if with_scores else Y_hat


def _fit_lp(base, seed, X, Y):
    """Label powerset: one multi-class learner over the distinct label sets."""
    sets, codes = np.unique(Y, axis=0, return_inverse=True)
    return sets, _fit_target(base, seed, X, codes.ravel())


def _lp_predict(fitted, X):
    sets, model = fitted
    return sets[model.predict(X).astype(np.intp)]


def _pruned_sets_data(Y, p, strategy, b):
    """Pruned-sets transformation (Read, Pfahringer & Holmes 2008).

    Label sets occurring more than ``p`` times are kept. An instance whose label set is rarer is
    re-introduced with frequent proper subsets of it instead: strategy ``"A"`` takes the ``b``
    best ranked by size, then by frequency (both descending); strategy ``"B"`` takes every one
    with more than ``b`` labels. The empty set is never re-introduced. Ties of rank go to the
    label set that comes first in ``numpy.unique``'s sorted order of the 0/1 vectors (Mulan's
    order depends on a hash map).

    Returns
    -------
    rows : ndarray of int
        Index into the original instances of every transformed instance.
    Y_new : ndarray of shape (len(rows), L)
        Their label sets.
    """
    sets, inverse, counts = np.unique(Y, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    kept = counts > p
    kept_idx = np.flatnonzero(kept)
    sizes = sets.sum(axis=1, dtype=np.int64)
    counts = counts.astype(np.int64)
    rows = [np.flatnonzero(kept[inverse])]
    new_sets = [inverse[rows[0]]]
    for u in np.flatnonzero(~kept):
        # frequent non-empty proper subsets of label set u
        cand = [c for c in kept_idx if 0 < sizes[c] < sizes[u] and not (sets[c] > sets[u]).any()]
        if strategy == "A":
            cand.sort(key=lambda c: (-sizes[c], -counts[c]))
            cand = cand[:b]
        else:
            cand = [c for c in cand if sizes[c] > b]
        if not cand:
            continue
        members = np.flatnonzero(inverse == u)
        rows.append(np.repeat(members, len(cand)))
        new_sets.append(np.tile(cand, members.size))
    rows = np.concatenate(rows).astype(np.intp)
    return rows, sets[np.concatenate(new_sets).astype(np.intp)]


def _fit_ps(base, seed, X, Y, p, strategy, b):
    rows, Y_new = _pruned_sets_data(Y, p, strategy, b)
    if rows.size == 0:
        # every label set was pruned and nothing could be re-introduced: plain label powerset
        return _fit_lp(base, seed, X, Y)
    return _fit_lp(base, seed, X[rows], Y_new)


# --------------------------------------------------------------------------- the lower bounds


class BinaryRelevance(BatchBaseline):
    """Binary relevance (Mulan ``BinaryRelevance``): one independent binary learner per label.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner (module docstring).
    random_state : int or None, default=None
        Seed (only the tree's tie-breaking uses it).
    """

    def __init__(self, base="j48", *, random_state=None):
        self.base = base
        self.random_state = random_state

    def _fit(self, X, Y):
        seeds = [self._next_seed() for _ in range(Y.shape[1])]
        self.models_ = _fit_br(self.base, seeds, X, Y)

    def _predict(self, X):
        return _br_predict(self.models_, X)


class ClassifierChain(BatchBaseline):
    """Classifier chain (Read et al. 2011; Mulan ``ClassifierChain``), labels in index order.

    Link ``k`` is trained on the features plus the true values of the labels before it in the
    chain and, at prediction time, receives the 0/1 predictions of those links.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner.
    random_state : int or None, default=None
        Seed (only the tree's tie-breaking uses it).
    """

    def __init__(self, base="j48", *, random_state=None):
        self.base = base
        self.random_state = random_state

    def _fit(self, X, Y):
        self.order_ = list(range(Y.shape[1]))
        seeds = [self._next_seed() for _ in self.order_]
        self.models_ = _fit_chain(self.base, seeds, X, Y, self.order_)

    def _predict(self, X):
        return _chain_predict(self.models_, X, self.order_)


class LabelPowerset(BatchBaseline):
    """Label powerset (Mulan ``LabelPowerset``): one multi-class learner over the label sets.

    Only label sets seen in training can be predicted.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner (the SVM is pairwise multi-class, as Weka's SMO).
    random_state : int or None, default=None
        Seed (only the tree's tie-breaking uses it).
    """

    def __init__(self, base="j48", *, random_state=None):
        self.base = base
        self.random_state = random_state

    def _fit(self, X, Y):
        self.model_ = _fit_lp(self.base, self._next_seed(), X, Y)

    def _predict(self, X):
        return _lp_predict(self.model_, X)


class RAkEL(BatchBaseline):
    """Random k-labelsets, overlapping version (Tsoumakas, Katakis & Vlahavas 2011).

    ``n_models`` distinct random label subsets of size ``labelset_size`` are drawn; a label
    powerset learner is trained on each; a label is predicted when at least ``threshold`` of the
    models whose subset contains it vote for it (labels in no subset are never predicted).
    Defaults are Mulan's: k = 3, m = min(2L, C(L, k)), threshold 0.5. Mulan's default
    constructor wraps binary relevance around each subset; here each subset gets a label
    powerset, as in the published method. Mulan refuses ``k >= L``; here ``k`` is lowered to
    ``L - 1`` (a single label keeps one label powerset), our choice for the 2- and 3-label
    streams.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner of every label powerset.
    labelset_size : int, default=3
        k, the size of each label subset.
    n_models : int or None, default=None
        m; ``None`` means min(2L, C(L, k)).
    threshold : float, default=0.5
        Fraction of votes needed to predict a label.
    random_state : int or None, default=None
        Seed of the subset draw and the trees.
    """

    def __init__(
        self, base="j48", *, labelset_size=3, n_models=None, threshold=0.5, random_state=None
    ):
        self.base = base
        self.labelset_size = labelset_size
        self.n_models = n_models
        self.threshold = threshold
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_int("labelset_size", self.labelset_size, low=1)
        if self.n_models is not None:
            check_int("n_models", self.n_models, low=1)
        check_float("threshold", self.threshold, low=0.0, high=1.0)

    def _check_n_models(self, m, X):
        _check_models_memory("n_models", self.n_models, m, X, "label powersets")

    def _fit(self, X, Y):
        L = Y.shape[1]
        k = min(self.labelset_size, max(L - 1, 1))
        n_subsets = math.comb(L, k)
        m = min(2 * L, n_subsets) if self.n_models is None else self.n_models
        if m > n_subsets:
            raise ValueError(
                f"n_models={m} exceeds the {n_subsets} distinct {k}-label subsets of {L} labels"
            )
        self._check_n_models(m, X)
        chosen, subsets = set(), []
        while len(subsets) < m:
            s = tuple(sorted(self._rng.choice(L, size=k, replace=False).tolist()))
            if s not in chosen:
                chosen.add(s)
                subsets.append(s)
        self.subsets_ = [list(s) for s in subsets]
        self.models_ = [_fit_lp(self.base, self._next_seed(), X, Y[:, s]) for s in self.subsets_]

    def _predict(self, X):
        L = self.n_labels_
        votes = np.zeros((X.shape[0], L))
        length = np.zeros(L)
        for s, model in zip(self.subsets_, self.models_, strict=True):
            votes[:, s] += _lp_predict(model, X)
            length[s] += 1
        confidence = np.divide(votes, length, out=np.zeros_like(votes), where=length > 0)
        return (confidence >= self.threshold) & (length > 0)


class PrunedSets(BatchBaseline):
    """Pruned sets (Read, Pfahringer & Holmes 2008; Mulan ``PrunedSets``).

    A label powerset trained after pruning label sets that occur ``p`` times or fewer and
    re-introducing their instances with frequent subsets (see ``strategy``). Defaults are
    Mulan's: p = 3, strategy A, b = 2.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner of the label powerset.
    p : int, default=3
        Label sets occurring at most ``p`` times are pruned.
    strategy : {"A", "B"}, default="A"
        "A": re-introduce the ``b`` best frequent subsets (largest first, then most frequent);
        "B": re-introduce every frequent subset with more than ``b`` labels.
    b : int, default=2
        Parameter of the strategy.
    random_state : int or None, default=None
        Seed (only the tree's tie-breaking uses it).
    """

    def __init__(self, base="j48", *, p=3, strategy="A", b=2, random_state=None):
        self.base = base
        self.p = p
        self.strategy = strategy
        self.b = b
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_int("p", self.p, low=0, high=_MAX_INT64)
        check_option("strategy", self.strategy, {"A", "B"})
        check_int("b", self.b, low=0, high=_MAX_INT64)

    def _fit(self, X, Y):
        self.model_ = _fit_ps(self.base, self._next_seed(), X, Y, self.p, self.strategy, self.b)

    def _predict(self, X):
        return _lp_predict(self.model_, X)


class EnsembleOfPrunedSets(BatchBaseline):
    """Ensemble of pruned sets (Read, Pfahringer & Holmes 2008; Mulan ``EnsembleOfPrunedSets``).

    ``n_models`` pruned-sets learners, each on a random ``sample_fraction`` of the training set
    drawn without replacement; a label is predicted when at least ``threshold`` of the models
    predict it. Defaults are Mulan's: 10 models, 66 %, p = 2, strategy A, b = 3, threshold 0.5.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner.
    n_models : int, default=10
    sample_fraction : float, default=0.66
    p : int, default=2
    strategy : {"A", "B"}, default="A"
    b : int, default=3
    threshold : float, default=0.5
    random_state : int or None, default=None
        Seed of the samples and the trees.
    """

    def __init__(
        self,
        base="j48",
        *,
        n_models=10,
        sample_fraction=0.66,
        p=2,
        strategy="A",
        b=3,
        threshold=0.5,
        random_state=None,
    ):
        self.base = base
        self.n_models = n_models
        self.sample_fraction = sample_fraction
        self.p = p
        self.strategy = strategy
        self.b = b
        self.threshold = threshold
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_int("n_models", self.n_models, low=1)
        check_float("sample_fraction", self.sample_fraction, low=0.0, high=1.0, low_open=True)
        check_int("p", self.p, low=0, high=_MAX_INT64)
        check_option("strategy", self.strategy, {"A", "B"})
        check_int("b", self.b, low=0, high=_MAX_INT64)
        check_float("threshold", self.threshold, low=0.0, high=1.0)

    def _fit(self, X, Y):
        n = X.shape[0]
        _check_models_memory("n_models", self.n_models, self.n_models, X, "pruned sets")
        size = max(1, int(round(n * self.sample_fraction)))
        self.models_ = []
        for _ in range(self.n_models):
            idx = np.sort(self._rng.permutation(n)[:size])
            self.models_.append(
                _fit_ps(self.base, self._next_seed(), X[idx], Y[idx], self.p, self.strategy, self.b)
            )

    def _predict(self, X):
        votes = sum(_lp_predict(m, X).astype(np.float64) for m in self.models_)
        return votes / len(self.models_) >= self.threshold


class EnsembleOfClassifierChains(BatchBaseline):
    """Ensemble of classifier chains (Read et al. 2011; Mulan ``EnsembleOfClassifierChains``).

    ``n_models`` chains, each with a random label order and trained on a bootstrap sample
    (with replacement, as large as the training set); the per-label confidences of the chains
    are averaged and thresholded at ``threshold`` (Mulan's defaults: 10 chains, confidences,
    0.5). Confidences are the tree's leaf fractions and 0/1 for the SVM and 1-NN (module
    docstring).

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
    n_models : int, default=10
    threshold : float, default=0.5
    random_state : int or None, default=None
        Seed of the samples, the orders and the trees.
    """

    def __init__(self, base="j48", *, n_models=10, threshold=0.5, random_state=None):
        self.base = base
        self.n_models = n_models
        self.threshold = threshold
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_int("n_models", self.n_models, low=1)
        check_float("threshold", self.threshold, low=0.0, high=1.0)

    def _fit(self, X, Y):
        n, L = Y.shape
        _check_models_memory(
            "n_models", self.n_models, nbytes_of(self.n_models, L), X, f"chains of {L} links"
        )
        self.orders_, self.models_ = [], []
        for _ in range(self.n_models):
            idx = self._rng.integers(0, n, size=n)
            order = self._rng.permutation(L).tolist()
            seeds = [self._next_seed() for _ in range(L)]
            self.orders_.append(order)
            self.models_.append(_fit_chain(self.base, seeds, X[idx], Y[idx], order))

    def _predict(self, X):
        total = np.zeros((X.shape[0], self.n_labels_))
        for order, models in zip(self.orders_, self.models_, strict=True):
            total += _chain_predict(models, X, order, with_scores=True)[1]
        return total / len(self.models_) >= self.threshold


def _balanced_kmeans(vectors, k, max_iter, rng):
    """Balanced k-means of the rows of ``vectors`` (Tsoumakas, Katakis & Vlahavas 2008).

    Every cluster holds at most ceil(m / k) rows: a row joins its nearest centre; when a cluster
    overflows, its farthest member moves on to its next nearest centre. Centres start at k
    distinct random rows and are the members' means; at most ``max_iter`` iterations.

    Returns
    -------
    list of ndarray
        The row indices of each non-empty cluster.
    """
    m = vectors.shape[0]
    distinct = np.unique(vectors, axis=0)
    k = min(k, distinct.shape[0])
    capacity = math.ceil(m / k)
    centres = distinct[rng.choice(distinct.shape[0], size=k, replace=False)].astype(np.float64)
    assign = np.full(m, -1)
    for _ in range(max_iter):
        # d[r, c]: squared distance of row r to centre c; inf once r was evicted from c
        d = ((vectors[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        buckets = [[] for _ in range(k)]  # (distance, row), kept sorted
        new = np.full(m, -1)
        for row in range(m):
            moving = row
            while True:
                c = int(np.argmin(d[moving]))
                buckets[c].append((d[moving, c], moving))
                buckets[c].sort()
                new[moving] = c
                if len(buckets[c]) <= capacity:
                    break
                _, moving = buckets[c].pop()  # the farthest member moves on
                d[moving, c] = np.inf
        converged = np.array_equal(new, assign)
        assign = new
        if converged:
            break
        for c in range(k):
            if (assign == c).any():  # an empty cluster keeps its centre
                centres[c] = vectors[assign == c].mean(axis=0)
    return [np.flatnonzero(assign == c) for c in range(k) if (assign == c).any()]


class HOMER(BatchBaseline):
    """Hierarchy of multi-label learners (Tsoumakas, Katakis & Vlahavas 2008; Mulan ``HOMER``).

    The labels are split recursively into ``n_clusters`` groups by balanced k-means on their
    0/1 columns over the whole training set, until a group has at most ``n_clusters`` labels;
    each internal node trains binary relevance (Mulan's default inner learner) to predict, for
    the instances that carry one of its labels, which child groups are relevant ("meta-labels":
    the OR of a group's labels). Prediction descends only into the children predicted relevant.
    With fewer labels than ``n_clusters`` (Mulan refuses that case) the hierarchy is flat, which
    is binary relevance. Labels whose 0/1 columns are all identical are split at random, as
    Mulan does when clustering puts every label in one group.

    Parameters
    ----------
    base : {"j48", "svm", "knn"}, default="j48"
        Base learner of the binary relevance at every node.
    n_clusters : int, default=3
        Children per node (Mulan's default 3).
    max_iter : int, default=20
        Iterations of the balanced k-means (Mulan's 20), at most 10,000.
    random_state : int or None, default=None
        Seed of the clustering and the trees.
    """

    def __init__(self, base="j48", *, n_clusters=3, max_iter=20, random_state=None):
        self.base = base
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_int("n_clusters", self.n_clusters, low=2)
        check_int("max_iter", self.max_iter, low=1, high=_MAX_ITER)

    def _partition(self, labels, Y):
        k = self.n_clusters
        if labels.size <= k:
            return [labels[i : i + 1] for i in range(labels.size)]
        groups = _balanced_kmeans(Y[:, labels].T.astype(np.float64), k, self.max_iter, self._rng)
        if len(groups) < 2:
            perm = self._rng.permutation(labels.size)
            groups = [perm[i::k] for i in range(k)]
        return [labels[np.sort(g)] for g in groups]

    def _build(self, labels, X, Y, rows):
        groups = self._partition(labels, Y)
        meta = np.column_stack([Y[np.ix_(rows, g)].any(axis=1) for g in groups]).astype(np.uint8)
        seeds = [self._next_seed() for _ in groups]
        node = {"models": _fit_br(self.base, seeds, X[rows], meta), "children": []}
        for j, g in enumerate(groups):
            if g.size == 1:
                node["children"].append(int(g[0]))
            else:
                child_rows = rows[meta[:, j] == 1]
                if child_rows.size == 0:  # cannot happen with the OR meta-labels; stay safe
                    child_rows = rows
                node["children"].append(self._build(g, X, Y, child_rows))
        return node

    def _fit(self, X, Y):
        # the balanced k-means of the root (only with more labels than clusters): the
        # (labels, clusters, rows) differences and their squares
        n, L = Y.shape
        if L > self.n_clusters:
            check_allocation(
                "n_clusters",
                self.n_clusters,
                nbytes_of(L, self.n_clusters, n, itemsize=2 * 8),
                f"the distances of {L} label columns of {n} rows to {self.n_clusters} centres",
            )
        self.root_ = self._build(np.arange(Y.shape[1]), X, Y, np.arange(X.shape[0]))

    def _descend(self, node, X, rows, out):
        pred = _br_predict(node["models"], X[rows])
        for j, child in enumerate(node["children"]):
            hit = rows[pred[:, j] == 1]
            if hit.size == 0:
                continue
            if isinstance(child, int):
                out[hit, child] = 1
            else:
                self._descend(child, X, hit, out)

    def _predict(self, X):
        out = np.zeros((X.shape[0], self.n_labels_), dtype=np.uint8)
        self._descend(self.root_, X, np.arange(X.shape[0]), out)
        return out
