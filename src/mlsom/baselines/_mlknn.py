"""ML-kNN (Zhang & Zhou 2007), a lower bound of the paper, written with numpy.

For every label, ML-kNN counts how many of an instance's k nearest training neighbours carry
the label and decides with Bayes' rule, using a prior and count likelihoods estimated on the
training set (each training instance's neighbours exclude the instance itself), both with
Laplace-style smoothing ``s``:

* prior  P(H1_l) = (s + #positives of l) / (2s + n);
* likelihood P(C = j | H1_l) = (s + c1_l[j]) / (s (k + 1) + sum_j' c1_l[j']), where c1_l[j]
  counts the positive training instances of l with exactly j positive neighbours (H0 likewise);
* a label is predicted when P(H1) P(C | H1) > P(H0) P(C | H0).

Distances are Euclidean on features scaled to [0, 1] with the training ranges, as Mulan's
``MLkNN`` does through Weka's normalised ``EuclideanDistance``. Neighbours tied at the same
distance are taken in scikit-learn's order.
"""

import numpy as np
from sklearn.neighbors import NearestNeighbors

from .._memory import check_allocation, nbytes_of
from .._validation import MAX_ABS_VALUE, check_features, check_float, check_int
from ..exceptions import NotFittedError
from ._batch import BatchBaseline

__all__ = ["MLkNN"]


def _check_neighbour_memory(k_param, k, n_rows):
    """The neighbour table of n_rows rows (indices, and the distances scikit-learn computes)."""
    check_allocation(
        "k",
        k_param,
        nbytes_of(n_rows, k, itemsize=2 * 8),
        f"the {k} nearest neighbours of {n_rows} rows",
    )


def _positive_neighbours(Y, neigh):
    """Positive neighbours per row and label, (n, L), one neighbour rank at a time: the (n, k, L)
    table of ``Y[neigh]`` is never made."""
    counts = np.zeros((neigh.shape[0], Y.shape[1]), dtype=Y.dtype)
    for j in range(neigh.shape[1]):
        counts += Y[neigh[:, j]]
    return counts


class MLkNN(BatchBaseline):
    """Multi-label k-nearest neighbours (Zhang & Zhou 2007; Mulan ``MLkNN`` defaults).

    Parameters
    ----------
    k : int, default=10
        Number of neighbours (lowered to n - 1 when the training set is smaller).
    smoothing : float, default=1.0
        The smoothing ``s`` of the prior and the likelihoods, in [0, 1e100].
    scale : bool, default=True
        Scale features to [0, 1] with the training minimum and range before measuring distances.
    random_state : int or None, default=None
        Unused (the method is deterministic); present for a uniform interface.

    Attributes
    ----------
    prior_ : ndarray of shape (n_labels,)
        P(H1) per label.
    cond_true_, cond_false_ : ndarray of shape (n_labels, k + 1)
        P(C = j | H1) and P(C = j | H0).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
    >>> Y = np.array([[1], [1], [1], [0], [0], [0]])
    >>> MLkNN(k=1).fit(X, Y).predict(np.array([[0.2], [12.8]])).ravel().tolist()
    [1, 0]
    """

    def __init__(self, k=10, *, smoothing=1.0, scale=True, random_state=None):
        self.k = k
        self.smoothing = smoothing
        self.scale = scale
        self.random_state = random_state

    def _validate_params(self):
        check_int("k", self.k, low=1)
        # beyond 1e100, s (k + 1) could overflow and the likelihoods become 0 instead of 1/(k+1);
        # at 0 a label positive (or negative) in every training row divides 0 by 0
        check_float("smoothing", self.smoothing, low=0.0, high=MAX_ABS_VALUE, low_open=True)
        if not isinstance(self.scale, bool):
            raise TypeError(f"scale must be a bool, got {self.scale!r}")

    def _transform(self, X):
        return (X - self.min_) / self.range_ if self.scale else X

    def _fit(self, X, Y):
        n, L = Y.shape
        s = float(self.smoothing)
        _check_neighbour_memory(self.k, min(self.k, n - 1), n)  # before any attribute changes
        self.min_ = X.min(axis=0)
        rng = X.max(axis=0) - self.min_
        self.range_ = np.where(rng > 0, rng, 1.0)
        Xs = self._transform(X)
        k = min(self.k, n - 1)
        self.k_ = k
        Yi = Y.astype(np.int64)
        self.prior_ = (s + Yi.sum(axis=0)) / (2 * s + n)
        if k > 0:
            self.nn_ = NearestNeighbors(n_neighbors=k).fit(Xs)
            neigh = self.nn_.kneighbors(return_distance=False)  # excludes each point itself
            counts = _positive_neighbours(Yi, neigh)  # (n, L): positive neighbours per label
        else:
            self.nn_ = None
            counts = np.zeros((n, L), dtype=np.int64)
        c_true = np.zeros((L, k + 1))
        c_false = np.zeros((L, k + 1))
        for j in range(L):
            pos = Y[:, j] == 1
            c_true[j] = np.bincount(counts[pos, j], minlength=k + 1)
            c_false[j] = np.bincount(counts[~pos, j], minlength=k + 1)
        self.cond_true_ = (s + c_true) / (s * (k + 1) + c_true.sum(axis=1, keepdims=True))
        self.cond_false_ = (s + c_false) / (s * (k + 1) + c_false.sum(axis=1, keepdims=True))
        self._Y = Yi

    def _posterior_parts(self, X):
        n = X.shape[0]
        L = self.prior_.size
        if self.nn_ is None:
            counts = np.zeros((n, L), dtype=np.intp)
        else:
            _check_neighbour_memory(self.k, self.k_, n)
            neigh = self.nn_.kneighbors(self._transform(X), return_distance=False)
            counts = _positive_neighbours(self._Y, neigh)
        cols = np.arange(L)
        p_true = self.prior_ * self.cond_true_[cols, counts]
        p_false = (1.0 - self.prior_) * self.cond_false_[cols, counts]
        return p_true, p_false

    def _predict(self, X):
        p_true, p_false = self._posterior_parts(X)
        return p_true > p_false

    def predict_proba(self, X):
        """Posterior probability P(H1 | C) of every label for every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_labels), float64
        """
        if not hasattr(self, "n_labels_"):
            raise NotFittedError("this MLkNN is not fitted yet; call fit first")
        X = check_features("X", X, n_features=self.n_features_in_)
        p_true, p_false = self._posterior_parts(X)
        total = p_true + p_false
        return np.divide(p_true, total, out=np.full_like(p_true, 0.5), where=total > 0)
