"""Reference predictors: what a method must beat to show that it learnt something.

Each is fitted on the labelled set and then predicts the test stream chunk by chunk, like the
batch methods of :mod:`mlsom.protocol` (``kind = "batch"``: ``fit(X_train, Y_train)`` once, then
``predict(X_chunk)``; no test label is ever seen and nothing is updated). All but the last use the
labelled set's labels only, never a feature:

* :class:`EveryLabel` (``"every-label"``): every label for every instance;
* :class:`LabelRate` (``"label-rate"``): each label independently, with the rate at which it occurs
  in the labelled set, drawn from a generator seeded with ``random_state``;
* :class:`MostFrequentLabels` (``"top-z"``): for every instance, the ⌈z⌉ labels that occur most
  often in the labelled set, z being its label cardinality (mean labels per instance);
* :class:`FrozenSOM` (``"mlsom-frozen"``): :class:`mlsom.SOMStreamClassifier` fitted on the
  labelled set, then frozen: ``predict`` (frozen scoring) and never ``predict_stream``, so it
  shows what mlsom's online phase adds.

:data:`REFERENCES` maps their names to their classes; the experiment runner
(:func:`mlsom.experiment.available_methods`) knows them by these names, and its tables, summary and
plots mark them "(reference)". Every class has the class attribute ``reference = True``.

Predictions are 0/1 ``uint8`` arrays of shape ``(n_rows, n_labels)``; they do not depend on how the
stream is cut into chunks (for :class:`LabelRate`: the same seed gives the same predictions
whatever the chunk sizes). The first three cost O(n L) for n rows and L labels.

Examples
--------
>>> import numpy as np
>>> from mlsom.references import MostFrequentLabels
>>> Y = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1], [1, 1, 0]])
>>> MostFrequentLabels().fit(np.zeros((4, 2)), Y).predict(np.zeros((2, 2)))
array([[1, 1, 0],
       [1, 1, 0]], dtype=uint8)
"""

import numpy as np

from ._base import ParamsMixin
from ._som import SOMStreamClassifier
from ._validation import check_features, check_int, check_labels
from .exceptions import NotFittedError

__all__ = ["REFERENCES", "EveryLabel", "FrozenSOM", "LabelRate", "MostFrequentLabels"]

#: Largest ``random_state`` of :class:`LabelRate` (what numpy and scikit-learn accept as a seed).
MAX_SEED = 2**32 - 1


class _LabelPrior(ParamsMixin):
    """``fit`` and the checks of the references that use the labelled set's labels only."""

    kind = "batch"
    reference = True

    def fit(self, X, Y):
        """Learn what the predictor needs from the labelled set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The labelled set's features (checked; only their number is kept), at least one row.
        Y : array-like of shape (n_samples, n_labels)
            Its 0/1 labels; a labelled set without any positive label is accepted.

        Returns
        -------
        self
        """
        X = check_features("X", X)
        Y = check_labels("Y", Y, X.shape[0], require_positive=False)
        self._validate_params()
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        self.label_counts_ = Y.sum(axis=0, dtype=np.int64)
        self.n_samples_ = Y.shape[0]
        self._fit_labels(Y)
        return self

    def _validate_params(self):
        """Check the parameters (none here)."""

    def _fit_labels(self, Y):
        """What the predictor keeps of the labelled set's labels (subclasses)."""

    def _rows(self, X):
        """The number of rows of ``X``, checked against the fitted features."""
        if not hasattr(self, "n_labels_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")
        X = check_features("X", X, n_features=self.n_features_in_, allow_empty=True)
        return X.shape[0]


class EveryLabel(_LabelPrior):
    """Every label for every instance.

    The trivial over-predictor: a measure on which it scores well rewards predicting too many
    labels (macro F does, on sparse labels).

    Attributes
    ----------
    n_labels_ : int
        Labels of the labelled set.
    n_features_in_ : int
        Features of the labelled set.
    label_counts_ : ndarray of shape (n_labels,)
        How often each label occurs in the labelled set.
    """

    def predict(self, X):
        """Every label for each row of ``X``: an array of ones of shape (n_rows, n_labels)."""
        return np.ones((self._rows(X), self.n_labels_), dtype=np.uint8)


class LabelRate(_LabelPrior):
    """Each label independently, at the rate at which it occurs in the labelled set.

    Row i of the test stream gets label j when the uniform draw u(i, j) in [0, 1) is below that
    rate; the draws come from one generator (``numpy.random.default_rng(random_state)``), seeded
    at ``fit``, in the order of the rows and, in a row, of the labels. Successive ``predict`` calls
    continue the same sequence of draws: the rows of successive calls are the rows of one stream,
    so the same seed gives the same predictions however the stream is cut into chunks.

    Parameters
    ----------
    random_state : int or None, default=None
        The seed (0 to 2**32 - 1); None: a fresh, unpredictable one.

    Attributes
    ----------
    rates_ : ndarray of shape (n_labels,)
        The labelled set's rate of each label.
    n_labels_, n_features_in_, label_counts_
        As in :class:`EveryLabel`.
    """

    def __init__(self, random_state=None):
        self.random_state = random_state

    def _validate_params(self):
        if self.random_state is not None:
            check_int("random_state", self.random_state, low=0, high=MAX_SEED)

    def _fit_labels(self, Y):
        self.rates_ = self.label_counts_ / self.n_samples_
        self._rng = np.random.default_rng(self.random_state)

    def predict(self, X):
        """The labels of the next rows of the stream, drawn at the labelled set's rates."""
        n = self._rows(X)
        return (self._rng.random((n, self.n_labels_)) < self.rates_).astype(np.uint8)


class MostFrequentLabels(_LabelPrior):
    """The ⌈z⌉ most frequent labels of the labelled set, for every instance.

    z is the labelled set's label cardinality (its mean number of labels per instance); the
    labels are ranked by how often they occur there, a tie going to the label of the lower
    column.

    Attributes
    ----------
    labels_ : ndarray of shape (n_chosen,)
        The chosen labels' columns, most frequent first.
    n_labels_, n_features_in_, label_counts_
        As in :class:`EveryLabel`.
    """

    def _fit_labels(self, Y):
        total = int(self.label_counts_.sum())
        k = -(-total // self.n_samples_)  # ⌈z⌉ in integers
        order = np.argsort(-self.label_counts_, kind="stable")
        self.labels_ = order[:k]
        self._row = np.zeros(self.n_labels_, dtype=np.uint8)
        self._row[self.labels_] = 1

    def predict(self, X):
        """The chosen labels for each row of ``X``."""
        n = self._rows(X)
        return np.tile(self._row, (n, 1))


class FrozenSOM:
    """:class:`mlsom.SOMStreamClassifier` fitted on the labelled set, then frozen.

    ``fit`` is the estimator's; ``predict`` is its frozen scoring (:meth:`~mlsom.SOMStreamClassifier
    .predict`): no online update, no label learnt, so the model stays the one ``fit`` made.

    Parameters
    ----------
    grid_size : int or "auto", default=5
        As the estimator's.
    **params
        Any other parameter of :class:`mlsom.SOMStreamClassifier` (``random_state``,
        ``variant``, ...); an unknown one raises TypeError.

    Attributes
    ----------
    estimator_ : SOMStreamClassifier
        The fitted estimator (``estimator_.grid_size_`` is the d that ``"auto"`` chose).
    """

    kind = "batch"
    reference = True

    def __init__(self, grid_size=5, **params):
        self._model = SOMStreamClassifier(grid_size, **params)

    def get_params(self, deep=True):
        """The estimator's parameters, as a dict."""
        return self._model.get_params(deep=deep)

    def set_params(self, **params):
        """Set parameters of the estimator; they take effect at the next ``fit``."""
        self._model.set_params(**params)
        return self

    def _validate_params(self):
        self._model._validate_params()

    def __repr__(self):
        return repr(self._model).replace(type(self._model).__name__, type(self).__name__, 1)

    @property
    def estimator_(self):
        if not hasattr(self, "_fitted"):
            raise NotFittedError("this FrozenSOM is not fitted yet: call fit first")
        return self._model

    def fit(self, X, Y):
        """Fit the estimator on the labelled set (:meth:`mlsom.SOMStreamClassifier.fit`)."""
        self._model.fit(X, Y)
        self._fitted = True
        return self

    def predict(self, X):
        """Frozen scoring of each row (:meth:`mlsom.SOMStreamClassifier.predict`)."""
        return self.estimator_.predict(X)


#: The reference predictors: name -> class; ``cls()`` (``cls(random_state=...)`` for the seeded
#: ones) is an unfitted predictor.
REFERENCES = {
    "every-label": EveryLabel,
    "label-rate": LabelRate,
    "top-z": MostFrequentLabels,
    "mlsom-frozen": FrozenSOM,
}
