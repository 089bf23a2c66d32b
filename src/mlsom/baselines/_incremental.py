"""Upper-bound baselines: incremental multi-label learners updated with every true label set.

The paper's upper bounds are MOA/MEKA learners built on Hoeffding trees that learn the
labelled set instance by instance and then, for every instance of the test stream, predict it
and learn its true labels (test-then-train). This module rebuilds them on river's trees. Each
class follows the ``"incremental"`` interface of ``docs/methods.md``: ``fit(X_train, Y_train)``
learns the training set in order; ``predict_learn(X_chunk, Y_chunk)`` predicts row ``i`` from
the model that has learnt rows ``< i`` only, then learns row ``i``.

The Hoeffding trees are river's ``tree.HoeffdingTreeClassifier`` with its defaults, which are
MOA's and Weka's (grace period 200, split confidence 1e-7, tie threshold 0.05, information gain,
naive-Bayes-adaptive leaves, Gaussian numeric observers). Instances reach river as dicts
``{feature index: value}``; label-set learners keep their own label-set codes and decode the
predicted class directly (river's ``multioutput.MultiClassEncoder`` derives per-label
probabilities from the winning code's probability, which inverts the predicted label set
whenever that probability is below 0.5, so it is not used).

Thresholds: a label is predicted when its vote or score exceeds 0.5 (as MOA's multi-label
evaluator does).
"""

import functools
import inspect

import numpy as np
from river import drift, tree

from .._base import ParamsMixin
from .._memory import check_allocation, nbytes_of
from .._validation import check_features, check_float, check_int, check_option
from ..exceptions import NotFittedError
from ._batch import check_random_state, check_training_labels

__all__ = [
    "UPPER_BOUNDS",
    "ADWINBaggingML",
    "BRHoeffdingTree",
    "CCHoeffdingTree",
    "ISOUPTree",
    "MLHoeffdingTree",
    "PSHoeffdingTree",
]


# --------------------------------------------------------------------------- members
#
# A member is one multi-label model learning one instance at a time. It offers
#   scores(x) -> list of L floats in [0, 1] (confidence of each label),
#   predict(x) -> list of L ints in {0, 1},
#   learn(x, y, w) with y a tuple of L ints and w an instance weight.
# ``x`` is a dict {feature index: value}; members never modify it.


def _hoeffding_tree():
    return tree.HoeffdingTreeClassifier()


def _p1(proba):
    """Normalised probability of class 1 from a river distribution ({} before any learning)."""
    p1 = proba.get(1, 0.0)
    total = p1 + proba.get(0, 0.0)
    return p1 / total if total > 0 else 0.0


class _BRMember:
    """Binary relevance: one Hoeffding tree per label (MEKA ``BRUpdateable``)."""

    def __init__(self, n_features, n_labels):
        self.trees = [_hoeffding_tree() for _ in range(n_labels)]

    def scores(self, x):
        return [_p1(t.predict_proba_one(x)) for t in self.trees]

    def predict(self, x):
        return [1 if s > 0.5 else 0 for s in self.scores(x)]

    def learn(self, x, y, w=1.0):
        for t, yj in zip(self.trees, y, strict=True):
            t.learn_one(x, yj, w=w)


class _CCMember:
    """Classifier chain of Hoeffding trees in label order (MEKA ``CCUpdateable``).

    Link j is trained on the features plus the true values of labels 0..j-1 (feature keys
    ``n_features + l``) and, at prediction time, receives the 0/1 predictions of those links.
    """

    def __init__(self, n_features, n_labels):
        self.A = n_features
        self.trees = [_hoeffding_tree() for _ in range(n_labels)]

    def _walk(self, x):
        xc = dict(x)
        scores, preds = [], []
        for j, t in enumerate(self.trees):
            s = _p1(t.predict_proba_one(xc))
            p = 1 if s > 0.5 else 0
            scores.append(s)
            preds.append(p)
            xc[self.A + j] = p
        return scores, preds

    def scores(self, x):
        return self._walk(x)[0]

    def predict(self, x):
        return self._walk(x)[1]

    def learn(self, x, y, w=1.0):
        xc = dict(x)
        for j, t in enumerate(self.trees):
            t.learn_one(xc, y[j], w=w)
            xc[self.A + j] = y[j]


class _LabelSetMember:
    """Hoeffding tree over label-set codes, decoded directly (label powerset / LC-HT)."""

    def __init__(self, n_features, n_labels):
        self.L = n_labels
        self.tree = _hoeffding_tree()
        self.codes = {}
        self.sets = []

    def _code(self, y):
        code = self.codes.get(y)
        if code is None:
            code = self.codes[y] = len(self.sets)
            self.sets.append(list(y))
        return code

    def predict(self, x):
        proba = self.tree.predict_proba_one(x)
        if not proba:
            return [0] * self.L
        return self.sets[max(proba, key=proba.get)]

    def scores(self, x):
        return [float(v) for v in self.predict(x)]

    def learn(self, x, y, w=1.0):
        self.tree.learn_one(x, self._code(y), w=w)


class _PSMember(_LabelSetMember):
    """Pruned sets over a Hoeffding tree, after MEKA's ``PSUpdateable`` (Read et al. 2012).

    The first ``buffer_size`` instances are stored while the most frequent label set so far is
    predicted. When the buffer is full, label sets occurring at most ``p`` times are pruned,
    ``p`` growing until at most ``max_sets`` label sets remain; each buffered instance is then
    learnt with its label set if kept, otherwise with up to ``n_subsets`` of the kept label sets
    that are subsets of it (largest first, then most frequent). Later instances are learnt the
    same way against the fixed collection of kept label sets. Counts are weighted by the
    instance weights (the Poisson weights inside an ensemble).
    """

    def __init__(self, n_features, n_labels, buffer_size=1000, max_sets=10, p=0, n_subsets=0):
        super().__init__(n_features, n_labels)
        self.buffer_size = buffer_size
        self.max_sets = max_sets
        self.p = p
        self.n_subsets = n_subsets
        self.buffer = []
        self.counts = {}
        self.majority = [0] * n_labels
        self.kept = None

    def predict(self, x):
        if self.kept is None:
            return list(self.majority)
        return super().predict(x)

    def _targets(self, y):
        if y in self.kept:
            return (y,)
        size = sum(y)
        cand = [
            s
            for s in self.kept
            if 0 < sum(s) < size and all(a <= b for a, b in zip(s, y, strict=True))
        ]
        cand.sort(key=lambda s: (-sum(s), -self.kept[s]))
        return cand[: self.n_subsets]

    def learn(self, x, y, w=1.0):
        if self.kept is not None:
            for target in self._targets(y):
                self.tree.learn_one(x, self._code(target), w=w)
            return
        self.buffer.append((x, y, w))
        c = self.counts[y] = self.counts.get(y, 0) + w
        if c > self.counts.get(tuple(self.majority), 0):
            self.majority = list(y)
        if len(self.buffer) < self.buffer_size:
            return
        p = self.p
        kept = {s: c for s, c in self.counts.items() if c > p}
        while len(kept) > self.max_sets:
            p += 1
            kept = {s: c for s, c in kept.items() if c > p}
        self.kept = kept
        buffer, self.buffer = self.buffer, []
        for xb, yb, wb in buffer:
            for target in self._targets(yb):
                self.tree.learn_one(xb, self._code(target), w=wb)


class _ISOUPMember:
    """River's ``tree.ISOUPTreeRegressor`` on the 0/1 targets, outputs thresholded at 0.5."""

    def __init__(self, n_features, n_labels):
        self.L = n_labels
        self.tree = tree.ISOUPTreeRegressor()

    def scores(self, x):
        out = self.tree.predict_one(x)
        return [min(1.0, max(0.0, float(out.get(j, 0.0)))) for j in range(self.L)]

    def predict(self, x):
        return [1 if s > 0.5 else 0 for s in self.scores(x)]

    def learn(self, x, y, w=1.0):
        self.tree.learn_one(x, dict(enumerate(y)), w=w)


_MEMBERS = {
    "br": _BRMember,
    "cc": _CCMember,
    "ps": _PSMember,
    "mlht": _LabelSetMember,
    "isoup": _ISOUPMember,
}

# Measured bytes (river 0.2x): an unfitted Hoeffding tree, iSOUP tree, ADWIN detector; a buffered
# instance of pruned sets (a dict of A floats and a label tuple).
_TREE_BYTES = 1_000
_ISOUP_BYTES = 1_500
_ADWIN_BYTES = 400
_BUFFER_ROW_BYTES = 200
_BUFFER_FEATURE_BYTES = 72
_BUFFER_LABEL_BYTES = 16


def _check_ps_params(params, where="{}"):
    """The parameters of a pruned-sets member (those of PSHoeffdingTree but random_state);
    ``where`` formats their names in messages."""
    return {
        name: check_int(where.format(name), params.get(name, default), low=low)
        for name, default, low in (
            ("buffer_size", 1000, 1),
            ("max_sets", 10, 1),
            ("p", 0, 0),
            ("n_subsets", 0, 0),
        )
    }


def _member_nbytes(member, n_features, n_labels, buffer_size=0):
    """Estimated bytes of one member before it learns (its trees) and of its buffer."""
    if member in ("br", "cc"):
        trees = nbytes_of(n_labels, itemsize=_TREE_BYTES)
    elif member == "isoup":
        trees = _ISOUP_BYTES
    else:
        trees = _TREE_BYTES
    buffer = nbytes_of(
        buffer_size,
        _BUFFER_ROW_BYTES + _BUFFER_FEATURE_BYTES * n_features + _BUFFER_LABEL_BYTES * n_labels,
    )
    return trees + buffer


# --------------------------------------------------------------------------- common interface


class _IncrementalBaseline(ParamsMixin):
    """Shared ``fit``/``predict_learn``/``get_params`` of the upper bounds."""

    #: interface of the evaluation protocol (docs/methods.md): test-then-train
    kind = "incremental"

    def fit(self, X, Y):
        """Learn the labelled set instance by instance, in order (a fresh model is started).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels)
            0/1 label matrix.

        Returns
        -------
        self
        """
        self._validate_params()
        X = check_features("X", X)
        Y = check_training_labels(Y, X.shape[0])
        self._check_memory(X.shape[1], Y.shape[1])  # before anything changes
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        self._keys = range(X.shape[1])
        self._start(check_random_state(self.random_state))
        self._stream(X, Y, predict=False)
        return self

    def predict_learn(self, X, Y):
        """Test-then-train on a chunk: predict each row, then learn its true labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels)
            The rows' true labels; row ``i``'s labels are learnt only after row ``i`` is
            predicted.

        Returns
        -------
        Y_hat : ndarray of shape (n_samples, n_labels), dtype uint8
        """
        X, Y = self._checked(X, Y)
        if X.shape[0] == 0:
            return np.zeros((0, self.n_labels_), dtype=np.uint8)
        return self._stream(X, Y, predict=True)

    def _checked(self, X, Y=None):
        """X (and Y, unless None) checked against the fitted model; Y is checked only when X
        has rows."""
        if not hasattr(self, "n_labels_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X = check_features("X", X, n_features=self.n_features_in_, allow_empty=True)
        if Y is not None and X.shape[0] > 0:
            Y = check_training_labels(np.asarray(Y), X.shape[0])
            if Y.shape[1] != self.n_labels_:
                raise ValueError(
                    f"Y has {Y.shape[1]} labels, but the model was fitted with {self.n_labels_}"
                )
        return X, Y

    def predict(self, X):
        """Predict each row without learning (the delayed-label protocol's prediction step).

        Returns
        -------
        Y_hat : ndarray of shape (n_samples, n_labels), dtype uint8
        """
        X, _ = self._checked(X)
        return self._stream(X, None, predict=True)

    def partial_fit(self, X, Y):
        """Learn labelled rows in order, without predicting them (labels that arrive late).

        ``predict(x)`` followed by ``partial_fit([x], [y])`` for each row is ``predict_learn``.

        Returns
        -------
        self
        """
        X, Y = self._checked(X, Y)
        if X.shape[0] > 0:
            self._stream(X, Y, predict=False)
        return self

    def _stream(self, X, Y, predict):
        """Each row in order: predicted (if ``predict``), then learnt (unless Y is None)."""
        keys = self._keys
        predict_one, learn_one = self._predict_one, self._learn_one
        rows = X.tolist()
        labels = None if Y is None else [tuple(r) for r in Y.tolist()]
        out = np.zeros((len(rows), self.n_labels_), dtype=np.uint8) if predict else None
        for i, row in enumerate(rows):
            x = dict(zip(keys, row, strict=True))
            if predict:
                out[i] = predict_one(x)
            if labels is not None:
                learn_one(x, labels[i])
        return out

    def _validate_params(self):
        pass

    def _check_memory(self, n_features, n_labels):
        pass


class _SingleModel(_IncrementalBaseline):
    _member = None

    def __init__(self, *, random_state=None):
        self.random_state = random_state

    def _start(self, seed):
        self.model_ = _MEMBERS[self._member](self.n_features_in_, self.n_labels_)

    def _predict_one(self, x):
        return self.model_.predict(x)

    def _learn_one(self, x, y):
        self.model_.learn(x, y)


class BRHoeffdingTree(_SingleModel):
    """Binary relevance of Hoeffding trees (the paper's upper bound "BR"; MEKA BRUpdateable).

    Parameters
    ----------
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.
    """

    _member = "br"


class CCHoeffdingTree(_SingleModel):
    """Classifier chain of Hoeffding trees (the paper's "CC"; MEKA CCUpdateable, label order).

    Parameters
    ----------
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.
    """

    _member = "cc"


class MLHoeffdingTree(_SingleModel):
    """Stand-in for MOA's multi-label Hoeffding tree (the paper's "MLHT"): an LC Hoeffding tree.

    MOA's MLHT (Read et al. 2012) splits on a multi-label entropy and holds pruned-sets
    learners in its leaves. This stand-in is one Hoeffding tree whose classes are the label
    sets seen so far (label combination), so its splits use the entropy of the label-set
    distribution and its naive-Bayes leaves predict label sets: an approximation.

    Parameters
    ----------
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.
    """

    _member = "mlht"


class PSHoeffdingTree(_SingleModel):
    """Pruned sets over a Hoeffding tree (the paper's "PS"; after MEKA PSUpdateable).

    MEKA's defaults: a buffer of the first 1,000 instances (majority label set predicted
    meanwhile), pruning value 0 raised until at most 10 label sets remain, no subset
    re-introduction (instances with a pruned label set are not learnt).

    Parameters
    ----------
    buffer_size : int, default=1000
    max_sets : int, default=10
    p : int, default=0
    n_subsets : int, default=0
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.
    """

    _member = "ps"

    def __init__(self, *, buffer_size=1000, max_sets=10, p=0, n_subsets=0, random_state=None):
        self.buffer_size = buffer_size
        self.max_sets = max_sets
        self.p = p
        self.n_subsets = n_subsets
        self.random_state = random_state

    def _validate_params(self):
        _check_ps_params(
            {
                "buffer_size": self.buffer_size,
                "max_sets": self.max_sets,
                "p": self.p,
                "n_subsets": self.n_subsets,
            }
        )

    def _check_memory(self, n_features, n_labels):
        check_allocation(
            "buffer_size",
            self.buffer_size,
            _member_nbytes("ps", n_features, n_labels, self.buffer_size),
            f"the buffered instances of {n_features} features",
        )

    def _start(self, seed):
        self.model_ = _PSMember(
            self.n_features_in_,
            self.n_labels_,
            self.buffer_size,
            self.max_sets,
            self.p,
            self.n_subsets,
        )


class ISOUPTree(_SingleModel):
    """Incremental structured-output tree (the paper's "ISOUPTree"; MOA ``ISOUPTree``).

    River's ``tree.ISOUPTreeRegressor`` with its defaults (adaptive leaves choosing between the
    target mean and a linear model) learns the 0/1 label columns as regression targets; an
    output above 0.5 predicts the label. MOA's version differs in its leaf models (perceptrons
    on normalised inputs).

    Parameters
    ----------
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.
    """

    _member = "isoup"


class ADWINBaggingML(_IncrementalBaseline):
    """Online bagging with ADWIN of multi-label members (the paper's "Ea..." methods).

    The ensemble of MOA's ``OzaBagAdwinML`` (Bifet et al. 2009; Read et al. 2012): every member
    learns each instance with a Poisson(1) weight, then is checked on it; an ADWIN detector per
    member watches its 0/1 subset error (1 when the predicted label set is not exactly the
    true one). When a detector signals a change towards a higher error, the member with the
    highest estimated error is replaced by a fresh one. The prediction is the per-label mean of
    the members' confidences, above 0.5. River's ``ensemble.ADWINBaggingClassifier`` is not
    used: it wraps single-target models only, and in river 0.26 it feeds its detectors 1 for a
    correct prediction and replaces the member with the highest estimate, i.e. the most
    accurate one.

    Parameters
    ----------
    member : {"br", "cc", "ps", "mlht", "isoup"}, default="br"
        Multi-label learner of every member: binary relevance, classifier chain, pruned sets,
        LC Hoeffding tree, iSOUP tree (as the single-model classes of this module).
    n_models : int, default=10
        Ensemble size (MOA's default).
    delta : float, default=0.002
        ADWIN's confidence (MOA's default).
    member_params : dict or None, default=None
        Keyword arguments of the members (only ``"ps"`` has any: those of
        :class:`PSHoeffdingTree` but ``random_state``).
    random_state : int or None, default=None
        Seed of the Poisson weights.
    """

    def __init__(
        self, member="br", *, n_models=10, delta=0.002, member_params=None, random_state=None
    ):
        self.member = member
        self.n_models = n_models
        self.delta = delta
        self.member_params = member_params
        self.random_state = random_state

    def _validate_params(self):
        check_option("member", self.member, set(_MEMBERS))
        params = self.member_params or {}
        if not isinstance(params, dict):
            raise TypeError(f"member_params must be a dict or None, got {params!r}")
        allowed = set(inspect.signature(_MEMBERS[self.member].__init__).parameters)
        allowed -= {"self", "n_features", "n_labels"}
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ValueError(
                f"member_params {unknown} not accepted by member {self.member!r}; "
                f"accepted: {sorted(allowed)}"
            )
        if self.member == "ps":
            _check_ps_params(params, "member_params['{}']")
        check_int("n_models", self.n_models, low=1)
        check_float("delta", self.delta, low=0.0, high=1.0, low_open=True)

    def _new_member(self):
        params = self.member_params or {}
        if self.member == "ps":
            params = _check_ps_params(params)
        return _MEMBERS[self.member](self.n_features_in_, self.n_labels_, **params)

    def _check_memory(self, n_features, n_labels):
        params = self.member_params or {}
        buffer_size = _check_ps_params(params)["buffer_size"] if self.member == "ps" else 0
        per_member = _ADWIN_BYTES + _member_nbytes(self.member, n_features, n_labels, buffer_size)
        name, value = "n_models", self.n_models
        if self.member == "ps":
            name, value = ("n_models", "member_params['buffer_size']"), (value, buffer_size)
        check_allocation(
            name,
            value,
            nbytes_of(self.n_models, per_member),
            f"{self.n_models} members {self.member!r} and their detectors",
        )

    def _start(self, seed):
        self._rng = np.random.default_rng(seed)
        self.members_ = [self._new_member() for _ in range(self.n_models)]
        self.detectors_ = [drift.ADWIN(delta=self.delta) for _ in range(self.n_models)]
        self.n_replacements_ = 0

    def _predict_one(self, x):
        total = [0.0] * self.n_labels_
        for m in self.members_:
            for j, s in enumerate(m.scores(x)):
                total[j] += s
        half = 0.5 * len(self.members_)
        return [1 if t > half else 0 for t in total]

    def _learn_one(self, x, y):
        weights = self._rng.poisson(1.0, len(self.members_)).tolist()
        change = False
        target = list(y)
        for m, det, k in zip(self.members_, self.detectors_, weights, strict=True):
            if k > 0:
                m.learn(x, y, w=float(k))
            error = 0 if m.predict(x) == target else 1
            before = det.estimation
            det.update(error)
            if det.drift_detected and det.estimation > before:
                change = True
        if change:
            worst = max(range(len(self.detectors_)), key=lambda i: self.detectors_[i].estimation)
            self.members_[worst] = self._new_member()
            self.detectors_[worst] = drift.ADWIN(delta=self.delta)
            self.n_replacements_ += 1


#: The paper's upper bounds: name -> factory; ``factory(random_state=...)`` returns an unfitted
#: method with MOA/MEKA default parameters. "BR-HT", "CC-HT" and "PS-HT" are the paper's "BR",
#: "CC" and "PS" upper bounds; "Ea..." are their ADWIN-bagging ensembles.
UPPER_BOUNDS = {
    "BR-HT": BRHoeffdingTree,
    "CC-HT": CCHoeffdingTree,
    "PS-HT": PSHoeffdingTree,
    "MLHT": MLHoeffdingTree,
    "ISOUPTree": ISOUPTree,
    "EaBR-HT": functools.partial(ADWINBaggingML, "br"),
    "EaCC-HT": functools.partial(ADWINBaggingML, "cc"),
    "EaPS-HT": functools.partial(ADWINBaggingML, "ps"),
    "EaMLHT": functools.partial(ADWINBaggingML, "mlht"),
    "EaISOUPTree": functools.partial(ADWINBaggingML, "isoup"),
}
