"""SOM-Stream-ML as a River multi-label classifier (needs river: the ``experiments`` extra).

:class:`SOMStreamML` wraps :class:`mlsom.SOMStreamClassifier` in River's one-instance-at-a-time
interface: instances and label sets are dicts, the first ``n_warmup`` labelled instances train the
maps, and the rest of the stream adapts the model from its own predictions. See docs/river.md.

``import mlsom`` never imports river; this module imports it when it is imported itself.
"""

import math
import numbers
from collections.abc import Mapping

import numpy as np

try:
    from river import base as _river_base
except ModuleNotFoundError as exc:
    if exc.name != "river":
        raise
    raise ModuleNotFoundError(
        "mlsom.river needs river, which is not installed: install the experiments extra "
        "(pip install 'mlsom[experiments]') or river itself (pip install 'river>=0.21')",
        name="river",
    ) from None

from . import _names
from ._som import SOMStreamClassifier
from ._validation import MAX_ABS_VALUE, check_int, describe

__all__ = ["SOMStreamML"]

# River's estimator checks (river.checks) that cannot apply to the method, with the reason; the
# model's _unit_test_skips() returns their names, so river.checks.check_estimator skips them.
_SKIPPED_RIVER_CHECKS = {
    "check_emerging_features": (
        "the maps live in the feature space fixed by the first instance: a feature that appears "
        "later is refused (as river.compat's scikit-learn wrappers do)"
    ),
    "check_disappearing_features": (
        "every neuron distance needs every feature of the fixed feature space: an instance with "
        "missing features is refused"
    ),
    "check_radically_disappearing_features": (
        "every neuron distance needs every feature of the fixed feature space: an instance with "
        "missing features is refused"
    ),
}


def _ordered(names):
    """Names sorted, or in first-seen order where they do not compare (e.g. 1 and "a")."""
    try:
        return tuple(sorted(names))
    except TypeError:
        return tuple(names)


def _check_x(x, *, finite=True):
    """``x`` as a dict of floats: a mapping of real numbers, with ``finite`` finite and at most
    1e100 in size."""
    if not isinstance(x, Mapping):
        raise TypeError(
            f"x must be a dict of feature name -> number, got {describe(x)} ({type(x).__name__})"
        )
    out = {}
    for key, value in x.items():
        if not isinstance(value, (numbers.Real, np.bool_)):
            raise TypeError(
                f"x[{key!r}] must be a real number, got {describe(value)} ({type(value).__name__})"
            )
        try:
            v = float(value)
        except OverflowError:  # an int beyond float64
            v = math.inf
        if finite and not (math.isfinite(v) and abs(v) <= MAX_ABS_VALUE):
            raise ValueError(
                f"x[{key!r}] must be finite and at most {MAX_ABS_VALUE:g} in absolute value (the "
                f"neuron distances would overflow), got {describe(value)}"
            )
        out[key] = v
    return out


def _check_y(y):
    """The names of the positive labels of ``y``, a mapping of label name -> bool (or 0/1)."""
    if not isinstance(y, Mapping):
        raise TypeError(
            f"y must be a dict of label name -> bool, got {describe(y)} ({type(y).__name__})"
        )
    for key, value in y.items():
        if not isinstance(value, (numbers.Integral, np.bool_)):
            raise TypeError(
                f"y[{key!r}] must be True or False, got {describe(value)} ({type(value).__name__})"
            )
        if value not in (0, 1):
            raise ValueError(f"y[{key!r}] must be True or False (or 0 or 1), got {value!r}")
    return [key for key, value in y.items() if value]


# predict_stream's arrivals for a row's own labels: learnt once the row is classified
_AFTER_THE_ROW = np.ones(1, dtype=np.int64)
_AFTER_THE_ROW.flags.writeable = False


class SOMStreamML(_river_base.MultiLabelClassifier):
    """SOM-Stream-ML for River: warm-up on labelled instances, then self-training, and the labels
    that arrive.

    The model takes instances ``x`` as dicts {feature name: number} and label sets ``y`` as dicts
    {label name: bool}, and predicts {label name: bool} for every label. It learns in two phases:

    * **Warm-up.** The first ``n_warmup`` instances given to ``learn_one(x, y)`` are kept with
      their labels; then :meth:`mlsom.SOMStreamClassifier.fit` trains the maps on them (the paper's
      offline labelled set) and the buffer is dropped. Until then ``predict_one`` returns False
      for every label seen so far (``{}`` before any). If no label has been positive by the
      ``n_warmup``-th instance, the warm-up goes on until one is, and trains on the last
      ``n_warmup`` instances then (the one with a positive label and the ``n_warmup - 1``
      before it).
    * **After the warm-up.** ``predict_one(x)`` is frozen scoring (``model_.predict``): pure, the
      prediction the method would give ``x`` as the next instance (label persistence's proposal
      aside: a pure call cannot tell whether the instance learnt last is the one before ``x``).
      ``learn_one(x, y)`` runs the method's online step on ``x`` (``model_.predict_stream``):
      classify it and move the winning neurons and label statistics towards that prediction;
      then, when ``y`` is given and ``use_labels`` is True, it learns ``y``
      (``model_.partial_fit``; a label name absent from ``y`` is unknown there).
      ``learn_one(x)`` (``y`` None) is the online step alone, for the instances whose labels
      never arrive. With ``use_labels=False`` the labels are ignored (only checked to be a dict
      of bools): the paper's setting, whose labels never arrive.

    Under River's progressive validation (``predict_one`` then ``learn_one`` for each instance)
    with ``use_labels=False``, the predictions and the final model after the warm-up are exactly
    those of ``SOMStreamClassifier.fit`` on the first ``n_warmup`` instances followed by
    ``predict_stream`` on the rest; with labels, those of ``predict_stream`` and ``partial_fit``
    of each instance in turn (test-then-train, every label at once), label persistence's
    proposals aside (``predict_one`` stays frozen). The warm-up's all-False
    predictions count in the metric; to score only the stream after it, call ``learn_one`` on
    the warm-up instances first (see docs/river.md).

    Features and labels: the first instance given to ``learn_one`` fixes the feature names; every
    later ``x`` (to ``learn_one`` or ``predict_one``) must give exactly those features, in any
    order, or a ValueError names the missing and unknown ones. The labels are the names found in
    the warm-up's ``y`` dicts (a name absent from a ``y`` is False there). Features and labels are
    put in sorted order of their names (first-seen order where names do not compare), so the
    model does not depend on the order of the dicts' keys. A label never positive in the warm-up
    gets no map and is always predicted False; a label name first seen after the warm-up is
    ignored and absent from the predictions, so River's MacroAverage, MicroAverage and
    SampleAverage raise KeyError on it (ExactMatch counts the instance wrong): let every ``y`` of
    the warm-up carry every label, as River's multi-label data sets do.

    Bad input (``x`` not a dict of real numbers, non-finite values, ``y`` not a dict of bools,
    wrong features) raises an error naming the argument, and leaves the model unchanged. During
    the warm-up, ``predict_one`` does not use the values and lets NaN and infinities through:
    River's ``MinMaxScaler`` gives NaN for an instance it transforms before learning any, so a
    ``preprocessing.MinMaxScaler() | SOMStreamML()`` pipeline starts with one.

    Parameters
    ----------
    grid_size : int, default=5
        Side of every map; this and the parameters below up to ``n_jobs`` are those of
        :class:`mlsom.SOMStreamClassifier`, passed on as they are.
    n_warmup : int, default=500
        Labelled instances collected before the maps are trained (>= 1).
    use_labels : bool, default=True
        Whether ``learn_one`` learns the labels it is given after the warm-up (``partial_fit``);
        False ignores them, as the paper's method does.
    learning_rate, correction_rate, corrections, label_persistence : see SOMStreamClassifier
    n_epochs, max_epochs : the same
    min_neuron_size, neighborhood, averout_distance, zero_cooccurrence, n_jobs : the same
    variant : {"paper", "robust"}, default="paper"
        As SOMStreamClassifier's; the warm-up's instances are a prefix of the stream, in order,
        which is what "robust" reads as time order.
    novelty : bool, default=False
        As SOMStreamClassifier's: new labels found in the stream join the keys of
        ``predict_one`` as "NP1", "NP2", ... (``model_.new_labels_``); an instance left unknown
        is predicted with every label False.
    novelty_radius : float, default=1.0
        As SOMStreamClassifier's.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the maps' initial neurons; it plays the role of River's ``seed``: an integer makes
        the model reproducible.

    Attributes
    ----------
    model_ : SOMStreamClassifier or None
        The fitted method, None during the warm-up.
    features_ : tuple or None
        The feature names, in the model's column order; None before the first ``learn_one``.
    labels_ : tuple
        The label names, in the model's column order (during the warm-up: those seen so far),
        with the new labels of novelty detection after them.

    Examples
    --------
    >>> import numpy as np
    >>> from river import evaluate, metrics
    >>> from mlsom.river import SOMStreamML
    >>> rng = np.random.default_rng(0)
    >>> centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> k = rng.integers(0, 3, size=600)
    >>> X = centers[k] + rng.normal(size=(600, 2))
    >>> stream = [
    ...     ({"u": u, "v": v}, {"a": c == 0, "b": c == 1, "c": c == 2})
    ...     for (u, v), c in zip(X.tolist(), k.tolist())
    ... ]
    >>> model = SOMStreamML(grid_size=3, n_warmup=100, random_state=0)
    >>> evaluate.progressive_val_score(stream, model, metrics.multioutput.ExactMatch())
    ExactMatch: 81.14%
    >>> model.model_.n_seen_, model.labels_  # each instance counted once, as its prediction
    (600, ('a', 'b', 'c'))
    """

    def __init__(
        self,
        grid_size=5,
        *,
        n_warmup=500,
        use_labels=True,
        learning_rate=0.05,
        correction_rate=0.5,
        corrections="tested",
        label_persistence="tested",
        n_epochs=100,
        max_epochs=1000,
        min_neuron_size=4,
        neighborhood="bubble",
        averout_distance="euclidean",
        zero_cooccurrence="reject",
        variant="paper",
        novelty=False,
        novelty_radius=1.0,
        random_state=None,
        n_jobs=None,
    ):
        self.grid_size = grid_size
        self.n_warmup = n_warmup
        self.use_labels = use_labels
        self.learning_rate = learning_rate
        self.correction_rate = correction_rate
        self.corrections = corrections
        self.label_persistence = label_persistence
        self.n_epochs = n_epochs
        self.max_epochs = max_epochs
        self.min_neuron_size = min_neuron_size
        self.neighborhood = neighborhood
        self.averout_distance = averout_distance
        self.zero_cooccurrence = zero_cooccurrence
        self.variant = variant
        self.novelty = novelty
        self.novelty_radius = novelty_radius
        self.random_state = random_state
        self.n_jobs = n_jobs
        # refuse a bad parameter now, not n_warmup instances later
        check_int("n_warmup", n_warmup, low=1)
        if not isinstance(use_labels, (bool, np.bool_)):
            raise TypeError(f"use_labels must be True or False, got {use_labels!r}")
        self._new_model()._validate_params()
        self.model_ = None
        self.features_ = None
        self._feature_set = frozenset()
        self.labels_ = ()
        self._label_seen = {}  # label names in first-seen order (a dict as an ordered set)
        self._rows = []  # the warm-up: feature rows, and the positive labels of each
        self._positives = []
        self._positive_seen = False  # whether any row of the warm-up has a positive label

    def _new_model(self):
        names = SOMStreamClassifier._get_param_names()
        return SOMStreamClassifier(**{name: getattr(self, name) for name in names})

    @classmethod
    def _unit_test_params(cls):
        small = {"n_epochs": 5, "max_epochs": 50, "random_state": 0, "n_jobs": 1}
        yield {"grid_size": 2, "n_warmup": 20, "min_neuron_size": 1, **small}
        yield {
            "grid_size": 3,
            "n_warmup": 30,
            "neighborhood": "gaussian",
            "averout_distance": "sqeuclidean",
            "zero_cooccurrence": "skip",
            "variant": "robust",
            "corrections": "tested",
            "label_persistence": "off",
            **small,
        }

    def _unit_test_skips(self):
        return set(_SKIPPED_RIVER_CHECKS)

    def _row(self, values):
        """The checked values of x as a (1, n_features) row in the model's feature order."""
        if values.keys() != self._feature_set:
            raise ValueError(
                f"x must give exactly the {len(self.features_)} features fixed by the first "
                f"instance learnt, {_names.show(self.features_)}; it gives "
                f"{_names.show(values)}: {_names.difference(values, self.features_, ordered=False)}"
            )
        return np.array([[values[k] for k in self.features_]], dtype=np.float64)

    def predict_one(self, x):
        """Predict the label set of ``x``, without changing the model.

        Parameters
        ----------
        x : dict
            {feature name: real number}, with exactly the features of the first instance learnt.

        Returns
        -------
        dict
            {label name: bool} for every label: all False during the warm-up.
        """
        # during the warm-up the values are not used: NaN is let through, as River's MinMaxScaler
        # gives it for an instance transformed before the scaler has learnt any
        values = _check_x(x, finite=self.model_ is not None)
        if self.model_ is None:
            if self.features_ is not None:
                self._row(values)  # the same feature check as after the warm-up
            return dict.fromkeys(self.labels_, False)
        # frozen, label persistence's proposal aside: a pure predict_one cannot tell whether
        # the instance learnt last is the one before x (progressive validation with a delay)
        y = self.model_.predict(self._row(values))[0]
        names = self.labels_ if y.size == len(self.labels_) else self._all_labels(y.size)
        return {name: bool(v) for name, v in zip(names, y, strict=True)}

    def _all_labels(self, n):
        """The names of the model's first n labels: those of the warm-up, then the new ones of
        novelty detection."""
        base = tuple(_ordered(self._label_seen))
        return base + tuple(nl.name for nl in self.model_.new_labels_)[: n - len(base)]

    def learn_one(self, x, y=None):
        """Learn from ``x``: its labels during the warm-up, its own prediction afterwards.

        Parameters
        ----------
        x : dict
            {feature name: real number}. The first call fixes the feature names.
        y : dict or None
            {label name: bool}. Needed during the warm-up; afterwards learnt after the online
            step when ``use_labels`` (a label name absent from it is unknown; one first seen
            after the warm-up is ignored), ignored otherwise (checked only).
        """
        values = _check_x(x)
        if self.model_ is not None:
            row = self._row(values)
            known = None
            if y is not None:
                _check_y(y)
                if self.use_labels:
                    column = {name: j for j, name in enumerate(self.labels_)}
                    known = np.full((1, len(self.labels_)), -1, dtype=np.int8)
                    for name, value in y.items():
                        if name in column:
                            known[0, column[name]] = int(bool(value))
            if known is None:
                self.model_.predict_stream(row)
                if self.model_.novelty:
                    self.labels_ = self._all_labels(self.model_.n_labels_)
            elif self.model_.novelty:  # the online step, then its labels (the new ones unknown)
                self.model_.predict_stream(row)
                extra = self.model_.n_labels_ - known.shape[1]
                self.model_.partial_fit(
                    row, np.pad(known, ((0, 0), (0, extra)), constant_values=-1)
                )
            else:  # the online step, then its labels: partial_fit after it, in one call
                self.model_.predict_stream(row, arrivals=(row, known, _AFTER_THE_ROW))
            return
        if y is None:
            raise TypeError(
                f"y is needed during the warm-up ({len(self._rows)} of n_warmup={self.n_warmup} "
                f"labelled instances so far), got None"
            )
        positives = _check_y(y)
        if self.features_ is None:
            if not values:
                raise ValueError("x has no feature: the first instance fixes the features")
            features = _ordered(values)
            row = np.array([values[k] for k in features], dtype=np.float64)
        else:
            features = self.features_
            row = self._row(values)[0]
        labels, label_seen = self.labels_, self._label_seen
        if any(k not in label_seen for k in y):
            label_seen = {**label_seen, **dict.fromkeys(y)}
            labels = _ordered(label_seen)
        # (a pickle of an earlier version has no flag)
        seen = getattr(self, "_positive_seen", None)
        if seen is None:
            seen = any(self._positives)
        # nothing changes before every check has passed and, at the end of the warm-up, fit too
        if len(self._rows) + 1 >= self.n_warmup and (positives or seen):
            self.model_ = self._fit(self._rows + [row], self._positives + [positives], labels)
            self._rows, self._positives, self._positive_seen = [], [], False
        else:
            self._rows.append(row)
            self._positives.append(positives)
            self._positive_seen = seen or bool(positives)
            if not self._positive_seen and len(self._rows) >= self.n_warmup:
                # no positive yet: the warm-up keeps the last n_warmup - 1 instances only, so
                # that its buffer stays bounded however long it waits for one
                del self._rows[0], self._positives[0]
        self.features_, self._feature_set = features, frozenset(features)
        self.labels_, self._label_seen = labels, label_seen

    def _fit(self, rows, positives, labels):
        """SOMStreamClassifier fitted on the warm-up (labels in the order of ``labels``)."""
        column = {name: j for j, name in enumerate(labels)}
        Y = np.zeros((len(rows), len(labels)), dtype=np.uint8)
        for i, names in enumerate(positives):
            Y[i, [column[name] for name in names]] = 1
        return self._new_model().fit(np.array(rows), Y)
