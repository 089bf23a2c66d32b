"""Multi-label evaluation measures, evaluation windows and the stored result of a stream run.

Measures (``docs/protocol.md`` 3.1), for true and predicted 0/1 label matrices Y, Ŷ of shape
(n, L):

* label-based, from the per-label confusion counts TP, FP, FN, TN (:func:`confusion_counts`):
  macro F (the mean of the per-label F values, the paper's measure), macro precision and recall
  (means of the per-label values), micro F, precision and recall (one value from the counts pooled
  over labels), Hamming loss;
* example-based, averaged over instances: F, precision, recall and accuracy (Jaccard index) of the
  true and predicted label sets, and subset accuracy (exact match).

**Zero division** (``docs/protocol.md`` 3.2). A ratio whose denominator is 0 (a label absent from
a window and never predicted; an instance with no true and no predicted label; precision when
nothing is predicted) takes a value set by ``zero_division``:

* ``1`` (default): the value 1, as Mulan does for F and Jaccard and as scikit-learn's
  ``zero_division=1.0`` does for every ratio;
* ``0``: the value 0 (scikit-learn ``zero_division=0.0``, MEKA's macro F, River);
* ``"exclude"`` (``numpy.nan`` is accepted as a synonym): the label (macro measures) or instance
  (example-based measures) is left out of the mean, as scikit-learn's ``zero_division=np.nan``;
  NaN when nothing is left;
* ``"mulan"``: Mulan's exact rule: 1 when *both* sets are empty (TP = FP = FN = 0, or an instance
  with no true and no predicted label), 0 when only one of them is.

For F and Jaccard the denominator is 0 only when both sets are empty, so ``1`` and ``"mulan"``
coincide there: macro F with the default is Mulan's macro F. They differ only for precision and
recall, when exactly one set is empty (nothing predicted for a label that occurs, or a label
predicted that does not occur): ``1`` gives 1 there, like scikit-learn, ``"mulan"`` gives 0.
Hamming loss and subset accuracy have no 0/0 case (NaN for zero instances).

**What is stored per window.** Every measure and every convention is a function of two small
integer tables, which :class:`StreamEvaluation` keeps for each evaluation window:

* the per-label confusion counts, shape (L, 4) (:func:`confusion_counts`);
* the *example counts* (:func:`example_counts`): a histogram of the per-instance triples
  (|Y_i ∩ Ŷ_i|, |Y_i|, |Ŷ_i|), one row (intersection, true size, predicted size, number of
  instances) per distinct triple, at most (L + 1)³ rows and in practice a few dozen. Every
  example-based measure (any F-beta included) depends on an instance only through its triple, and
  the instance is an exact match iff the three numbers are equal.

Both are exact integers and add up over windows, so cumulative and per-window curves of any
measure under any convention are recomputed from them without re-running a method. The
predictions themselves (bit-packed, n × ⌈L/8⌉ bytes) can be kept as well, for new window layouts.

**Windows** (``docs/protocol.md`` 3.3): W windows over a test stream T of n rows; window w
(0-based) is T[⌊wn/W⌋ : ⌊(w+1)n/W⌋] (:func:`window_edges`); sizes differ by at most one.
Alternatively, windows of a fixed number of rows, the last one possibly shorter. Curves are
cumulative by default (the value at window w uses every test row from the start of the stream to the
end of window w, as in the paper) or per window.
"""

import base64
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._memory import check_allocation, nbytes_of
from ._validation import _describe, as_numeric
from ._version import __version__

__all__ = [
    "LOWER_IS_BETTER",
    "MEASURES",
    "StreamEvaluation",
    "average_curves",
    "compute_measure",
    "confusion_counts",
    "evaluate_predictions",
    "example_accuracy",
    "example_counts",
    "example_f1",
    "example_precision",
    "example_recall",
    "hamming_loss",
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "merge_example_counts",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "multilabel_scores",
    "subset_accuracy",
    "window_edges",
]

#: Names of the measures that :func:`compute_measure` and :class:`StreamEvaluation` know.
MEASURES = (
    "macro_f1",
    "macro_precision",
    "macro_recall",
    "micro_f1",
    "micro_precision",
    "micro_recall",
    "example_f1",
    "example_precision",
    "example_recall",
    "example_accuracy",
    "hamming_loss",
    "subset_accuracy",
)

#: Measures for which smaller values are better (all the others: larger is better).
LOWER_IS_BETTER = frozenset({"hamming_loss"})

_FORMAT = "mlsom.StreamEvaluation/1"

# Counts are kept in int64 and measures computed in float64: a count above 2**53 would lose
# digits, so stored counts are refused beyond it.
_MAX_COUNT = 2**53
# Rows of a test stream: window edges are int64.
_MAX_ROWS = 2**63 - 1
# Windows: floor(w n / W) is computed exactly in int64 as w q + floor(w r / W) (n = q W + r), which
# needs (W + 1) r < 2**63; at most 2**31 windows keeps it so for every n.
_MAX_WINDOWS = 2**31
# Bytes kept per window and per label by the runners (label counts while accumulating, then
# stacked), and per window for the window's objects and its example counts.
_WINDOW_BYTES_PER_LABEL = 64
_WINDOW_BYTES = 700


# ---------------------------------------------------------------------------------------- checks


def _check_zero_division(zero_division):
    """Return the convention in canonical form: 1, 0, "exclude" or "mulan"."""
    if isinstance(zero_division, str):
        if zero_division in ("exclude", "mulan"):
            return zero_division
    elif isinstance(zero_division, numbers.Real) and not isinstance(zero_division, bool):
        if zero_division != zero_division:  # NaN, scikit-learn's way of saying "exclude"
            return "exclude"
        if zero_division in (0, 1):
            return int(zero_division)
    raise ValueError(
        f"zero_division must be 1, 0, 'exclude' (or numpy.nan) or 'mulan', got {zero_division!r}"
    )


def _check_measure(measure):
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    return measure


def _check_01(name, arr):
    if arr.dtype.kind != "b" and arr.size:
        bad = (arr != 0) & (arr != 1)  # NaN is neither
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"{name} must contain only 0 and 1, found {arr[i, j].item()!r} at row {i}, "
                f"column {j}"
            )


def _check_pair(Y, Y_hat):
    Y = as_numeric("Y", Y, "0/1 values")
    Y_hat = as_numeric("Y_hat", Y_hat, "0/1 values")
    if Y.ndim != 2 or Y.shape != Y_hat.shape:
        raise ValueError(
            f"Y and Y_hat must be 2-D arrays of the same shape, got {Y.shape} and {Y_hat.shape}"
        )
    _check_01("Y", Y)
    _check_01("Y_hat", Y_hat)
    return Y.astype(bool), Y_hat.astype(bool)


def _check_whole_counts(name, arr):
    """Counts must be whole numbers >= 0 (real arrays holding such values are accepted)."""
    if arr.dtype.kind == "f" and arr.size:
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"{name} must be whole numbers, found {arr[bad][0].item()!r}")
    if arr.size and (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, found {arr[arr < 0][0].item()!r}")
    if arr.size and (arr > _MAX_COUNT).any():
        raise ValueError(
            f"{name} must be <= 2**53 (counts beyond it are not exact in float64), found "
            f"{arr[arr > _MAX_COUNT][0].item()!r}"
        )
    return arr.astype(np.int64, copy=False)


def _check_label_counts(counts):
    counts = as_numeric("label counts", counts, "counts")
    if counts.ndim < 2 or counts.shape[-1] != 4:
        raise ValueError(f"label counts must have shape (..., n_labels, 4), got {counts.shape}")
    counts = _check_whole_counts("label counts", counts)
    # every label counts every instance once: TP + FP + FN + TN is the same for all labels
    totals = counts.sum(-1)  # at most 4 * 2**53: exact in int64
    if counts.shape[-2] and (totals != totals[..., :1]).any():
        where = np.argwhere(totals != totals[..., :1])[0]
        first = tuple(where[:-1]) + (0,)
        raise ValueError(
            f"label counts: label {int(where[-1])} counts {int(totals[tuple(where)])} instances "
            f"(TP + FP + FN + TN), label 0 {int(totals[first])}; every label counts every "
            "instance once"
        )
    return counts


def _check_example_counts(ex_counts):
    ex_counts = as_numeric("example counts", ex_counts, "counts")
    if ex_counts.size == 0:
        return np.zeros((0, 4), np.int64)
    if ex_counts.ndim != 2 or ex_counts.shape[1] != 4:
        raise ValueError(f"example counts must have shape (n_rows, 4), got {ex_counts.shape}")
    ex_counts = _check_whole_counts("example counts", ex_counts)
    a, t, p = ex_counts[:, 0], ex_counts[:, 1], ex_counts[:, 2]
    bad = (a > t) | (a > p)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"example counts: the row {ex_counts[k].tolist()} has |Y ∩ Ŷ| = {int(a[k])} above "
            f"|Y| = {int(t[k])} or |Ŷ| = {int(p[k])}"
        )
    return ex_counts


def _describe_array(arr):
    text = np.array2string(np.asarray(arr), threshold=10, edgeitems=3)
    return text if len(text) <= 80 else text[:77] + "..."


# ------------------------------------------------------------------------ sufficient statistics


def confusion_counts(Y, Y_hat):
    """Per-label confusion counts.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.

    Returns
    -------
    counts : ndarray of shape (n_labels, 4), int64
        Columns: true positives, false positives, false negatives, true negatives.
    """
    Y, Y_hat = _check_pair(Y, Y_hat)
    tp = (Y & Y_hat).sum(0)
    fp = (~Y & Y_hat).sum(0)
    fn = (Y & ~Y_hat).sum(0)
    tn = (~Y & ~Y_hat).sum(0)
    return np.stack([tp, fp, fn, tn], axis=1).astype(np.int64)


def example_counts(Y, Y_hat):
    """Histogram of the per-instance set sizes, from which every example-based measure follows.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.

    Returns
    -------
    ex_counts : ndarray of shape (n_distinct, 4), int64
        One row per distinct triple, sorted: |Y_i ∩ Ŷ_i|, |Y_i|, |Ŷ_i| and the number of
        instances i with that triple. The last column sums to ``n_samples``.

    See Also
    --------
    merge_example_counts : add histograms of several windows.

    Examples
    --------
    >>> example_counts([[1, 0, 1], [0, 0, 0], [1, 0, 1]], [[1, 1, 0], [0, 0, 0], [1, 0, 1]])
    array([[0, 0, 0, 1],
           [1, 2, 2, 1],
           [2, 2, 2, 1]])
    """
    Y, Y_hat = _check_pair(Y, Y_hat)
    inter = (Y & Y_hat).sum(1)
    n_true = Y.sum(1)
    n_pred = Y_hat.sum(1)
    n_labels = Y.shape[1]
    # encode each triple as one integer, count the codes, decode
    base = n_labels + 1
    if base**3 > _MAX_ROWS:  # the codes would overflow int64: count the rows themselves
        triples = np.column_stack([inter, n_true, n_pred]).astype(np.int64)
        uniq, counts = np.unique(triples, axis=0, return_counts=True)
        return np.column_stack([uniq, counts]).astype(np.int64)
    codes = (inter.astype(np.int64) * base + n_true) * base + n_pred
    uniq, counts = np.unique(codes, return_counts=True)
    a, rest = np.divmod(uniq, base * base)
    t, p = np.divmod(rest, base)
    return np.column_stack([a, t, p, counts]).astype(np.int64)


def merge_example_counts(*ex_counts):
    """Add example-count histograms (of several windows or chunks) into one.

    Parameters
    ----------
    *ex_counts : ndarray of shape (n_distinct_k, 4)
        Outputs of :func:`example_counts`.

    Returns
    -------
    ex_counts : ndarray of shape (n_distinct, 4), int64
        The histogram of the union of the instances.
    """
    parts = [_check_example_counts(e) for e in ex_counts]
    parts = [p for p in parts if len(p)]
    if not parts:
        return np.zeros((0, 4), np.int64)
    allrows = np.concatenate(parts)
    # summed in integers (float sums were inexact beyond 2**53); a float estimate tells a sum
    # past the limit first (an int64 sum of many counts near 2**53 could wrap)
    uniq, inverse = np.unique(allrows[:, :3], axis=0, return_inverse=True)
    inverse = inverse.ravel()
    approx = np.bincount(inverse, weights=allrows[:, 3].astype(np.float64), minlength=len(uniq))
    if approx.max() > 2.0**53 * 1.5:
        raise ValueError("merged example counts would exceed 2**53 instances")
    sums = np.zeros(len(uniq), np.int64)
    np.add.at(sums, inverse, allrows[:, 3])
    if sums.max() > _MAX_COUNT:
        raise ValueError(
            f"merged example counts would exceed 2**53 instances (a count of {int(sums.max())})"
        )
    merged = np.column_stack([uniq, sums]).astype(np.int64)
    return merged[merged[:, 3] > 0]


# ----------------------------------------------------------------------- vectorised computations


def _mean_ratio(num, den, both_empty, weights, zd):
    """Weighted mean over the last axis of num/den, with the 0/0 convention ``zd``.

    ``both_empty`` marks the undefined ratios where both sets are empty ("mulan" gives them 1 and
    the other undefined ratios 0). Returns an array of the leading shape; NaN when no weight is
    left.
    """
    shape = np.broadcast_shapes(np.shape(num), np.shape(den), np.shape(weights))
    num = np.broadcast_to(np.asarray(num, dtype=np.float64), shape)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), shape)
    weights = np.broadcast_to(np.asarray(weights, dtype=np.float64), shape)
    defined = den > 0
    vals = np.divide(num, den, out=np.zeros(shape), where=defined)
    if zd == "exclude":
        weights = weights * defined
    else:
        fill = np.broadcast_to(both_empty, shape).astype(np.float64) if zd == "mulan" else zd
        vals = np.where(defined, vals, fill)
    total = weights.sum(-1)
    acc = (vals * weights).sum(-1)
    return np.divide(acc, total, out=np.full(np.shape(total), np.nan), where=total > 0)


def _label_measure(measure, counts, zd):
    """A label-based measure of counts (..., L, 4), one value per leading index."""
    tp, fp, fn, tn = (counts[..., k].astype(np.float64) for k in range(4))
    kind, _, what = measure.partition("_")
    if measure == "hamming_loss":
        n = (tp + fp + fn + tn)[..., 0] if counts.shape[-2] else np.zeros(counts.shape[:-2])
        errors = (fp + fn).sum(-1)
        nl = n * counts.shape[-2]
        return np.divide(errors, nl, out=np.full(np.shape(nl), np.nan), where=nl > 0)
    if kind == "micro":
        tp, fp, fn = tp.sum(-1, keepdims=True), fp.sum(-1, keepdims=True), fn.sum(-1, keepdims=True)
    if what == "f1":
        num, den, both = 2 * tp, 2 * tp + fp + fn, True
    elif what == "precision":
        num, den, both = tp, tp + fp, fn == 0
    else:  # recall
        num, den, both = tp, tp + fn, fp == 0
    return _mean_ratio(num, den, both, 1.0, zd)


def _example_measure(measure, triples, weights, zd):
    """An example-based measure from distinct triples (U, 3) and instance counts (..., U)."""
    a, t, p = (triples[:, k].astype(np.float64) for k in range(3))
    if measure == "subset_accuracy":
        exact = (triples[:, 0] == triples[:, 1]) & (triples[:, 1] == triples[:, 2])
        return _mean_ratio(exact.astype(np.float64), np.ones_like(a), True, weights, 1)
    if measure == "example_f1":
        num, den, both = 2 * a, t + p, True
    elif measure == "example_precision":
        num, den, both = a, p, t == 0
    elif measure == "example_recall":
        num, den, both = a, t, p == 0
    else:  # example_accuracy (Jaccard)
        num, den, both = a, t + p - a, True
    return _mean_ratio(num, den, both, weights, zd)


def _is_label_measure(measure):
    return measure.startswith(("macro_", "micro_")) or measure == "hamming_loss"


def compute_measure(measure, label_counts=None, ex_counts=None, *, zero_division=1):
    """A measure from stored counts: the per-label confusion counts or the example counts.

    Parameters
    ----------
    measure : str
        One of :data:`MEASURES`.
    label_counts : array-like of shape (n_labels, 4), optional
        Output of :func:`confusion_counts`; needed for the macro and micro measures and the
        Hamming loss.
    ex_counts : array-like of shape (n_distinct, 4), optional
        Output of :func:`example_counts`; needed for the example-based measures and the subset
        accuracy.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        The 0/0 convention (see the module documentation).

    Returns
    -------
    value : float
        NaN where nothing is left to average (no instance; everything excluded).
    """
    _check_measure(measure)
    zd = _check_zero_division(zero_division)
    if _is_label_measure(measure):
        if label_counts is None:
            raise ValueError(f"{measure} needs the per-label confusion counts")
        counts = _check_label_counts(label_counts)
        if counts.ndim != 2:
            raise ValueError(f"label counts must have shape (n_labels, 4), got {counts.shape}")
        return float(_label_measure(measure, counts, zd))
    if ex_counts is None:
        raise ValueError(f"{measure} needs the example counts (see example_counts)")
    ex = _check_example_counts(ex_counts)
    return float(_example_measure(measure, ex[:, :3], ex[:, 3], zd))


def multilabel_scores(Y, Y_hat, *, measures=None, zero_division=1):
    """Several measures of one pair of label matrices.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.
    measures : sequence of str, optional
        Names from :data:`MEASURES` (default: all of them).
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        The 0/0 convention.

    Returns
    -------
    scores : dict
        Measure name -> value.
    """
    measures = MEASURES if measures is None else tuple(_check_measure(m) for m in measures)
    counts = confusion_counts(Y, Y_hat)
    ex = example_counts(Y, Y_hat)
    return {m: compute_measure(m, counts, ex, zero_division=zero_division) for m in measures}


# --------------------------------------------------------------------- public measure functions


def macro_f1(counts, zero_division=1):
    """Macro F: the mean over labels of the per-label F-measure 2TP / (2TP + FP + FN).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value of F for a label with TP = FP = FN = 0 (``"exclude"``: the label is left out of the
        mean; ``"mulan"`` is the same as 1 here).

    Returns
    -------
    value : float
        NaN when ``"exclude"`` leaves no label. Equals scikit-learn's
        ``f1_score(Y, Y_hat, average="macro", zero_division=...)``.
    """
    return compute_measure("macro_f1", counts, zero_division=zero_division)


def macro_precision(counts, zero_division=1):
    """Macro precision: the mean over labels of TP / (TP + FP).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value of a label's precision when nothing is predicted for it (``"mulan"``: 1 if the label
        does not occur either, else 0).

    Returns
    -------
    value : float
    """
    return compute_measure("macro_precision", counts, zero_division=zero_division)


def macro_recall(counts, zero_division=1):
    """Macro recall: the mean over labels of TP / (TP + FN).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value of a label's recall when the label does not occur (``"mulan"``: 1 if it is not
        predicted either, else 0).

    Returns
    -------
    value : float
    """
    return compute_measure("macro_recall", counts, zero_division=zero_division)


def micro_f1(counts, zero_division=1):
    """Micro F: 2ΣTP / (2ΣTP + ΣFP + ΣFN), from the counts pooled over labels.

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value when the pooled denominator is 0 (``"exclude"``: NaN).

    Returns
    -------
    value : float
    """
    return compute_measure("micro_f1", counts, zero_division=zero_division)


def micro_precision(counts, zero_division=1):
    """Micro precision: ΣTP / (ΣTP + ΣFP).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value when nothing is predicted at all (``"exclude"``: NaN).

    Returns
    -------
    value : float
    """
    return compute_measure("micro_precision", counts, zero_division=zero_division)


def micro_recall(counts, zero_division=1):
    """Micro recall: ΣTP / (ΣTP + ΣFN).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value when no label occurs at all (``"exclude"``: NaN).

    Returns
    -------
    value : float
    """
    return compute_measure("micro_recall", counts, zero_division=zero_division)


def _example(measure, Y, Y_hat, zero_division):
    return compute_measure(measure, ex_counts=example_counts(Y, Y_hat), zero_division=zero_division)


def example_f1(Y, Y_hat, zero_division=1):
    """Example-based F: the mean over instances of 2|Y_i ∩ Ŷ_i| / (|Y_i| + |Ŷ_i|).

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value for an instance with no true and no predicted label.

    Returns
    -------
    value : float
        Equals scikit-learn's ``f1_score(Y, Y_hat, average="samples", zero_division=...)``.
    """
    return _example("example_f1", Y, Y_hat, zero_division)


def example_precision(Y, Y_hat, zero_division=1):
    """Example-based precision: the mean over instances of |Y_i ∩ Ŷ_i| / |Ŷ_i|.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value for an instance with no predicted label (``"mulan"``: 1 if it has no true label
        either, else 0).

    Returns
    -------
    value : float
    """
    return _example("example_precision", Y, Y_hat, zero_division)


def example_recall(Y, Y_hat, zero_division=1):
    """Example-based recall: the mean over instances of |Y_i ∩ Ŷ_i| / |Y_i|.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value for an instance with no true label (``"mulan"``: 1 if nothing is predicted either,
        else 0).

    Returns
    -------
    value : float
    """
    return _example("example_recall", Y, Y_hat, zero_division)


def example_accuracy(Y, Y_hat, zero_division=1):
    """Example-based accuracy (Jaccard index): the mean of |Y_i ∩ Ŷ_i| / |Y_i ∪ Ŷ_i|.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value for an instance with no true and no predicted label.

    Returns
    -------
    value : float
        Equals scikit-learn's ``jaccard_score(Y, Y_hat, average="samples", zero_division=...)``.
    """
    return _example("example_accuracy", Y, Y_hat, zero_division)


def hamming_loss(Y, Y_hat):
    """Hamming loss: the fraction of wrong label decisions, (1 / nL) Σ_i |Y_i Δ Ŷ_i|.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.

    Returns
    -------
    value : float
    """
    Y, Y_hat = _check_pair(Y, Y_hat)
    return float((Y != Y_hat).mean()) if Y.size else float("nan")


def subset_accuracy(Y, Y_hat):
    """Subset accuracy: the fraction of instances whose predicted label set is the true one.

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_samples, n_labels)
        True and predicted 0/1 label matrices.

    Returns
    -------
    value : float
    """
    Y, Y_hat = _check_pair(Y, Y_hat)
    return float((Y == Y_hat).all(1).mean()) if len(Y) else float("nan")


# ------------------------------------------------------------------------------------------ windows


def window_edges(n_test, n_windows=50):
    """Boundaries of the evaluation windows over a test stream of ``n_test`` rows.

    Window w (0-based) holds rows ``edges[w]`` to ``edges[w + 1] - 1``, with
    ``edges[w] = floor(w * n_test / n_windows)`` (``docs/protocol.md`` 3.3).

    Parameters
    ----------
    n_test : int
        Rows of the test stream (at most 2**63 - 1).
    n_windows : int, default=50
        Number of windows, at most ``n_test`` (no window is empty) and at most 2**31.

    Returns
    -------
    edges : ndarray of shape (n_windows + 1,), int64
        ``edges[0] = 0`` and ``edges[-1] = n_test``; window sizes differ by at most one.

    Examples
    --------
    >>> window_edges(10, 4)
    array([ 0,  2,  5,  7, 10])
    """
    n_test = _check_count("n_test", n_test, low=1, high=_MAX_ROWS)
    n_windows = _check_count("n_windows", n_windows, low=1)
    if n_windows > n_test:
        raise ValueError(f"n_windows={n_windows} is larger than the test stream ({n_test} rows)")
    n_windows = _check_count("n_windows", n_windows, low=1, high=_MAX_WINDOWS)
    check_allocation(
        "n_windows",
        n_windows,
        nbytes_of(n_windows + 1, itemsize=4 * 8),
        "the window edges (int64, with three temporaries)",
    )
    w = np.arange(n_windows + 1, dtype=np.int64)
    if n_test <= _MAX_ROWS // n_windows:  # w * n_test fits in int64
        return (w * n_test) // n_windows
    # floor(w n / W) = w q + floor(w r / W) with n = q W + r: no product exceeds int64
    q, r = divmod(n_test, n_windows)
    return w * q + (w * r) // n_windows


def _fixed_edges(n_test, window_size):
    """Edges of windows of ``window_size`` rows; the last one may be shorter."""
    n_test = _check_count("n_test", n_test, low=1, high=_MAX_ROWS)
    n_windows = -(-n_test // window_size)
    check_allocation(
        ("n_test", "window_size"),
        (n_test, window_size),
        nbytes_of(n_windows + 1, itemsize=2 * 8),
        f"the edges of the {n_windows} windows of a {n_test}-row test stream (int64)",
    )
    edges = np.arange(0, n_test, window_size, dtype=np.int64)
    return np.append(edges, np.int64(n_test))


def _check_window_memory(name, value, n_windows, n_labels, n_methods=1):
    """Refuse a window layout whose per-window counts cannot be kept in memory."""
    per_window = _WINDOW_BYTES + _WINDOW_BYTES_PER_LABEL * n_labels
    check_allocation(
        name,
        value,
        nbytes_of(n_windows, n_methods, per_window),
        f"the counts of {n_windows} windows x {n_labels} labels"
        + (f" of {n_methods} methods" if n_methods > 1 else ""),
    )


def _check_count(name, value, *, low, high=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return int(value)


class _WindowAccumulator:
    """Adds up counts of consecutive prediction chunks into windows.

    Windows are given either by their ``edges`` (known test length) or by ``window_size`` (the
    last window ends where the stream ends).
    """

    def __init__(self, n_labels, *, edges=None, window_size=None, keep_predictions=False):
        self.n_labels = n_labels
        self.edges = None if edges is None else np.asarray(edges, dtype=np.int64)
        self.window_size = window_size
        self.pos = 0
        self.label_counts = []
        self.example_counts = []
        self._cur_counts = np.zeros((n_labels, 4), np.int64)
        self._cur_ex = []
        self._cur_n = 0
        self._packed = [] if keep_predictions else None

    def _window_end(self, w):
        if self.edges is not None:
            if w + 1 >= len(self.edges):
                raise ValueError(f"the stream has more than the {self.edges[-1]} rows announced")
            return int(self.edges[w + 1])
        return (w + 1) * self.window_size

    def _close(self):
        self.label_counts.append(self._cur_counts)
        self.example_counts.append(merge_example_counts(*self._cur_ex))
        self._cur_counts = np.zeros((self.n_labels, 4), np.int64)
        self._cur_ex = []
        self._cur_n = 0

    def add(self, Y, Y_hat):
        """Count the next rows (true and predicted labels, as bool arrays)."""
        n = len(Y)
        if self._packed is not None:
            self._packed.append(np.packbits(Y_hat, axis=1))
        lo = 0
        while lo < n:
            end = self._window_end(len(self.label_counts))
            hi = min(n, lo + end - self.pos)
            self._cur_counts += confusion_counts(Y[lo:hi], Y_hat[lo:hi])
            self._cur_ex.append(example_counts(Y[lo:hi], Y_hat[lo:hi]))
            self._cur_n += hi - lo
            self.pos += hi - lo
            lo = hi
            if self.pos == end:
                self._close()

    def finish(self):
        """Close the last window and return (edges, label_counts, example_counts, packed)."""
        if self.edges is not None:
            if self.pos != self.edges[-1]:
                raise ValueError(
                    f"the stream ended after {self.pos} rows, {int(self.edges[-1])} were announced"
                )
            edges = self.edges
        else:
            if self._cur_n:
                self._close()
            if self.pos == 0:
                raise ValueError("the test stream is empty")
            edges = _fixed_edges(self.pos, self.window_size)
        counts = np.stack(self.label_counts).astype(np.int64)
        packed = None
        if self._packed is not None:
            width = (self.n_labels + 7) // 8
            packed = (
                np.concatenate(self._packed) if self._packed else np.zeros((0, width), np.uint8)
            )
        return edges, counts, list(self.example_counts), packed


# --------------------------------------------------------------------------------- result object


def _check_window_tables(edges, label_counts, ex_counts):
    """Refuse per-window counts that no test stream can give.

    ``edges`` (W + 1,), ``label_counts`` (W, L, 4) and the W example-count tables (k_w, 4) are
    already whole, non-negative and at most 2**53. Per window: every label's TP + FP + FN + TN is
    the window's size; every example-count row (a, t, p, c) has a <= min(t, p) and
    t + p - a <= L (an intersection within both sets, a union within the labels); the instance
    counts c add up to the window's size; and both tables count the same label decisions, so
    that the instances' a, t and p add up to the labels' TP, TP + FN and TP + FP.
    """
    sizes = np.diff(edges)
    W, L = label_counts.shape[:2]
    totals = label_counts.sum(axis=2)  # at most 4 * 2**53: exact in int64
    bad = totals != sizes[:, None]
    if bad.any():
        w, j = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"label_counts of window {w}, label {j} add up to {int(totals[w, j])} "
            f"(TP + FP + FN + TN), but the window has {int(sizes[w])} rows (window_edges "
            f"{int(edges[w])} to {int(edges[w + 1])})"
        )
    rows = np.concatenate([np.zeros((0, 4), np.int64), *ex_counts])
    win = np.repeat(np.arange(W), [len(e) for e in ex_counts])
    a, t, p, c = rows.T
    # (|Y ∩ Ŷ| <= min(|Y|, |Ŷ|) was checked with each table: _check_example_counts)
    bad = t + p - a > L  # each term <= 2**53: exact in int64
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"example_counts of window {int(win[k])} hold the row {rows[k].tolist()}: no "
            f"instance has |Y ∩ Ŷ| = {int(a[k])}, |Y| = {int(t[k])}, |Ŷ| = {int(p[k])} with "
            f"n_labels={L} (|Y ∪ Ŷ| <= n_labels)"
        )
    # instances per window; the float sums tell a sum too large for int64 (it would wrap)
    approx = np.bincount(win, weights=c.astype(np.float64), minlength=W)
    exact = np.zeros(W, np.int64)
    np.add.at(exact, win, c)
    bad = (approx > 2.0**60) | (exact != sizes)
    if bad.any():
        w = int(np.argmax(bad))
        n = sum(int(x) for x in ex_counts[w][:, 3])
        raise ValueError(
            f"example_counts of window {w} count {n} instances, but the window has "
            f"{int(sizes[w])} rows (window_edges {int(edges[w])} to {int(edges[w + 1])})"
        )
    # per window, both sides are at most 2 L n (n the window's size): Python integers where
    # that can exceed int64
    dtype = object if 2 * L * int(sizes.max()) >= 2**63 else np.int64
    lc = label_counts.astype(dtype)
    tp, fp, fn = lc[..., 0], lc[..., 1], lc[..., 2]
    by_labels = np.stack([tp, tp + fn, tp + fp], axis=-1).sum(axis=1)
    by_instances = np.zeros((W, 3), dtype)
    np.add.at(by_instances, win, rows[:, :3].astype(dtype) * c.astype(dtype)[:, None])
    bad = by_labels != by_instances
    if bad.any():
        w, k = (int(i) for i in np.argwhere(bad)[0])
        inst, lab = ("|Y ∩ Ŷ|", "|Y|", "|Ŷ|")[k], ("TP", "TP + FN", "TP + FP")[k]
        raise ValueError(
            f"example_counts and label_counts of window {w} disagree: the instances' {inst} add "
            f"up to {int(by_instances[w, k])}, the labels' {lab} to {int(by_labels[w, k])}"
        )


def _jsonable(obj):
    """A JSON-serialisable version of ``obj`` (numpy scalars and arrays, tuples; else repr)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        value = float(obj)
        return value if np.isfinite(value) else None  # NaN and infinity are not JSON
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return repr(obj)


def _stored_int(name, value):
    """A whole-number field of a stored result: an int, or a float of integral value, in
    [0, 2**53]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {_describe(value)}")
    if not _is_count(value):
        raise ValueError(f"{name} must be a whole number in [0, 2**53], got {value!r}")
    return int(value)


def _stored_seconds(name, value):
    """A duration field of a stored result: a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {value!r}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def _stored_optional(data, name, check):
    value = data.get(name)
    return None if value is None else check(name, value)


def _stored_text(data, name):
    value = data.get(name, "")
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {value!r}")
    return value


def _stored_dict(data, name):
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict, got {type(value).__name__}")
    return dict(value)


def _stored_names(value):
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"label_names must be a list of strings, got {_describe(value)}")
    return tuple(value)


def _is_count(value):
    """Whether ``value`` is a whole number in [0, 2**53] (an int, or a float of integral value)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    if not isinstance(value, numbers.Integral):
        value = float(value)
        if not (math.isfinite(value) and value.is_integer()):
            return False
    return 0 <= value <= _MAX_COUNT


def _first_bad_count(value):
    """The first entry of nested lists that is no whole number in [0, 2**53] (else None)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not _is_count(item):
            return item
    return None


def _stored_counts(name, value):
    """A table of counts of a stored result (nested lists of whole numbers in [0, 2**53]) as an
    int64 array; numbers are checked before any conversion to integers."""
    arr = None
    if isinstance(value, (list, tuple)):
        try:
            arr = np.asarray(value)
        except Exception:  # uneven nesting, too deep a nesting: described below
            arr = None
    if arr is None or (arr.dtype.kind not in "iuf" and arr.size):
        bad = _first_bad_count(value) if isinstance(value, (list, tuple)) else value
        if bad is None:  # numbers, but nested unevenly
            raise ValueError(
                f"{name} must be a table of counts: nested lists of numbers, of equal lengths "
                "at each level"
            )
        raise ValueError(f"{name} must hold whole numbers in [0, 2**53], found {_describe(bad)}")
    if arr.dtype.kind not in "iuf":  # an empty table of no numeric type
        arr = arr.astype(np.int64)
    return _check_whole_counts(name, arr)


@dataclass(eq=False)
class StreamEvaluation:
    """Windowed evaluation of one method on one test stream, stored as raw counts.

    Everything needed to compute any measure of :data:`MEASURES`, under any 0/0 convention, as a
    cumulative or a per-window curve, is kept: per window the per-label confusion counts and the
    example counts (see the module documentation). Made by :func:`mlsom.protocol.evaluate` or
    :func:`evaluate_predictions`; saved with :meth:`to_dict` and restored with :meth:`from_dict`.

    Parameters
    ----------
    window_edges : ndarray of shape (n_windows + 1,), int64
        Row offsets of the windows in the test stream; window w is rows
        ``window_edges[w]:window_edges[w + 1]``.
    label_counts : ndarray of shape (n_windows, n_labels, 4), int64
        Per window, the per-label TP, FP, FN, TN (:func:`confusion_counts`).
    example_counts : list of ndarray of shape (n_distinct_w, 4), int64
        Per window, the histogram of (|Y ∩ Ŷ|, |Y|, |Ŷ|) triples (:func:`example_counts`).
    method : str, default=""
        Name of the method.
    kind : str, default=""
        Its protocol interface: "online", "batch" or "incremental".
    params : dict, default={}
        Its parameters (``get_params()``).
    stream : str, default=""
        Name of the stream.
    seed : int or None, default=None
        Seed of the run.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        The 0/0 convention used when none is asked for.
    label_names : tuple of str or None, default=None
    n_train : int or None, default=None
        Rows of the labelled training set.
    fit_seconds, stream_seconds : float or None, default=None
        Time spent in ``fit`` and in the method's calls on the test stream.
    chunk_size : int or None, default=None
        Largest number of rows the method was given at once.
    version : str
        mlsom version that produced the result.
    info : dict, default={}
        Anything else worth keeping (JSON-serialisable).
    predictions : ndarray of shape (n_test, ceil(n_labels / 8)), uint8, or None
        The predictions, bit-packed row-wise with ``numpy.packbits(..., axis=1)``, when kept.

    The tables are checked on construction against the windows: in every window, each label's
    TP + FP + FN + TN is the window's size; each example-count row (|Y ∩ Ŷ|, |Y|, |Ŷ|, count)
    has |Y ∩ Ŷ| <= min(|Y|, |Ŷ|) and |Y ∪ Ŷ| <= n_labels; the counts add up to the window's size;
    and the instances' |Y ∩ Ŷ|, |Y| and |Ŷ| add up to the labels' TP, TP + FN and TP + FP. Tables
    that no test stream can give raise ValueError.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Y = (rng.random((100, 3)) < 0.3).astype(np.uint8)
    >>> res = evaluate_predictions(Y, Y, n_windows=4)
    >>> res.curve("macro_f1").tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> res.n_test, res.window_sizes.tolist()
    (100, [25, 25, 25, 25])
    """

    window_edges: np.ndarray
    label_counts: np.ndarray
    example_counts: list
    method: str = ""
    kind: str = ""
    params: dict = field(default_factory=dict)
    stream: str = ""
    seed: Any = None
    zero_division: Any = 1
    label_names: tuple | None = None
    n_train: int | None = None
    fit_seconds: float | None = None
    stream_seconds: float | None = None
    chunk_size: int | None = None
    version: str = __version__
    info: dict = field(default_factory=dict)
    predictions: np.ndarray | None = None

    def __post_init__(self):
        edges = as_numeric("window_edges", self.window_edges, "row offsets")
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(
                f"window_edges must be 1-D with at least 2 entries, got shape {edges.shape}"
            )
        edges = _check_whole_counts("window_edges", edges)
        if edges[0] != 0 or not (np.diff(edges) > 0).all():
            raise ValueError(
                "window_edges must start at 0 and increase strictly (no empty window), got "
                f"{_describe_array(edges)}"
            )
        self.window_edges = edges
        self.label_counts = _check_whole_counts(
            "label_counts", as_numeric("label_counts", self.label_counts, "counts")
        )
        self.example_counts = [_check_example_counts(e) for e in self.example_counts]
        self.zero_division = _check_zero_division(self.zero_division)
        W = len(self.window_edges) - 1
        if (
            self.label_counts.ndim != 3
            or self.label_counts.shape[0] != W
            or self.label_counts.shape[2] != 4
        ):
            raise ValueError(
                f"label_counts must have shape ({W}, n_labels, 4), got {self.label_counts.shape}"
            )
        if len(self.example_counts) != W:
            raise ValueError(
                f"example_counts must hold {W} windows, got {len(self.example_counts)}"
            )
        _check_window_tables(self.window_edges, self.label_counts, self.example_counts)
        # the record's other fields, as from_dict checks them (so that what is made here can
        # be stored and read back)
        for name in ("method", "kind", "stream"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string, got {getattr(self, name)!r}")
        if self.label_names is not None:
            names = self.label_names
            if isinstance(names, str) or not all(isinstance(v, str) for v in names):
                raise TypeError(f"label_names must be a sequence of strings, got {names!r}")
            self.label_names = tuple(names)
            if len(self.label_names) != self.n_labels:
                raise ValueError(
                    f"label_names holds {len(self.label_names)} names for {self.n_labels} labels"
                )
        for name in ("n_train", "chunk_size"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, _stored_int(name, value))
        for name in ("fit_seconds", "stream_seconds"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, _stored_seconds(name, value))
        if self.predictions is not None:
            packed = np.asarray(self.predictions)
            shape = (self.n_test, (self.n_labels + 7) // 8)
            if packed.dtype != np.uint8 or packed.shape != shape:
                raise ValueError(
                    f"predictions must be the packed 0/1 rows (uint8 of shape {shape}), got "
                    f"{packed.dtype} of shape {packed.shape}"
                )
            self.predictions = packed

    # ------------------------------------------------------------------------------- properties

    @property
    def n_windows(self):
        """Number of evaluation windows."""
        return len(self.window_edges) - 1

    @property
    def n_labels(self):
        """Number of labels."""
        return int(self.label_counts.shape[1])

    @property
    def n_test(self):
        """Rows of the test stream."""
        return int(self.window_edges[-1])

    @property
    def window_sizes(self):
        """Rows of each window, ndarray of shape (n_windows,)."""
        return np.diff(self.window_edges)

    @property
    def instances_per_second(self):
        """Test rows processed per second of the method's own calls (NaN if unknown)."""
        if not self.stream_seconds:
            return float("nan")
        return self.n_test / self.stream_seconds

    # ------------------------------------------------------------------------------- measures

    def _stacked_example_counts(self):
        """Distinct triples (U, 3) and per-window instance counts (W, U)."""
        W = self.n_windows
        parts = [e for e in self.example_counts if len(e)]
        if not parts:
            return np.zeros((0, 3), np.int64), np.zeros((W, 0))
        allrows = np.concatenate(parts)
        win = np.repeat(np.arange(W), [len(e) for e in self.example_counts])
        triples, inverse = np.unique(allrows[:, :3], axis=0, return_inverse=True)
        # the dense table, its cumulative sum and the measure's temporaries, all (W, U) float64
        check_allocation(
            ("n_windows", "n_distinct_triples"),
            (W, len(triples)),
            nbytes_of(W, len(triples), itemsize=6 * 8),
            "the window x triple tables of an example-based curve",
        )
        dense = np.zeros((W, len(triples)))
        np.add.at(dense, (win, inverse.ravel()), allrows[:, 3])
        return triples, dense

    def curve(self, measure="macro_f1", cumulative=True, zero_division=None):
        """Values of a measure at every window.

        Parameters
        ----------
        measure : str, default="macro_f1"
            One of :data:`MEASURES`.
        cumulative : bool, default=True
            True: the value at window w covers the test rows from the start to the end of window w
            (the paper's curves). False: each window's own rows.
        zero_division : {1, 0, "exclude", "mulan"}, optional
            The 0/0 convention; default: the one recorded in :attr:`zero_division`.

        Returns
        -------
        values : ndarray of shape (n_windows,)
        """
        _check_measure(measure)
        zd = _check_zero_division(self.zero_division if zero_division is None else zero_division)
        if _is_label_measure(measure):
            counts = self.label_counts
            if cumulative:
                counts = np.cumsum(counts, axis=0)
            return _label_measure(measure, counts, zd)
        triples, dense = self._stacked_example_counts()
        if cumulative:
            dense = np.cumsum(dense, axis=0)
        return _example_measure(measure, triples, dense, zd)

    def mean(self, measure="macro_f1", cumulative=True, zero_division=None):
        """Mean over windows of :meth:`curve` (the summary used to rank methods).

        Windows where the measure is NaN (possible only with ``"exclude"``) are left out.

        Parameters
        ----------
        measure : str, default="macro_f1"
        cumulative : bool, default=True
        zero_division : {1, 0, "exclude", "mulan"}, optional

        Returns
        -------
        value : float
        """
        values = self.curve(measure, cumulative, zero_division)
        finite = values[~np.isnan(values)]
        return float(finite.mean()) if finite.size else float("nan")

    def total(self, measure="macro_f1", zero_division=None):
        """The measure over the whole test stream (the last value of the cumulative curve).

        Parameters
        ----------
        measure : str, default="macro_f1"
        zero_division : {1, 0, "exclude", "mulan"}, optional

        Returns
        -------
        value : float
        """
        return float(self.curve(measure, True, zero_division)[-1])

    def summary(self, measures=None, cumulative=True, zero_division=None):
        """:meth:`mean` of several measures.

        Parameters
        ----------
        measures : sequence of str, optional
            Default: all of :data:`MEASURES`.
        cumulative : bool, default=True
        zero_division : {1, 0, "exclude", "mulan"}, optional

        Returns
        -------
        means : dict
            Measure name -> mean over windows.
        """
        measures = MEASURES if measures is None else measures
        return {m: self.mean(m, cumulative, zero_division) for m in measures}

    def window_counts(self, window, cumulative=False):
        """The stored counts of one window (or of the stream up to its end).

        Parameters
        ----------
        window : int
            0-based window index (negative values count from the end).
        cumulative : bool, default=False
            Add up the windows from the first one to ``window``.

        Returns
        -------
        label_counts : ndarray of shape (n_labels, 4), int64
        ex_counts : ndarray of shape (n_distinct, 4), int64
        """
        if isinstance(window, bool) or not isinstance(window, numbers.Integral):
            raise TypeError(f"window must be an integer, got {window!r}")
        if not -self.n_windows <= window < self.n_windows:
            raise IndexError(
                f"window {window} is out of range: the result has {self.n_windows} windows"
            )
        w = range(self.n_windows)[window]
        if cumulative:
            return (
                self.label_counts[: w + 1].sum(0),
                merge_example_counts(*self.example_counts[: w + 1]),
            )
        return self.label_counts[w].copy(), self.example_counts[w].copy()

    def unpacked_predictions(self):
        """The kept predictions as a 0/1 uint8 array of shape (n_test, n_labels).

        Raises
        ------
        ValueError
            If the predictions were not kept.
        """
        if self.predictions is None:
            raise ValueError("the predictions were not kept (keep_predictions=False)")
        return np.unpackbits(self.predictions, axis=1, count=self.n_labels)

    # ---------------------------------------------------------------------------- persistence

    def to_dict(self):
        """A JSON-serialisable dict holding everything (see :meth:`from_dict`).

        Parameter values that JSON cannot hold are stored as their ``repr``. Kept predictions are
        stored as base64 text of the packed bytes.

        Returns
        -------
        data : dict
        """
        data = {
            "format": _FORMAT,
            "method": self.method,
            "kind": self.kind,
            "params": _jsonable(self.params),
            "stream": self.stream,
            "seed": _jsonable(self.seed),
            "zero_division": self.zero_division,
            "label_names": None if self.label_names is None else list(self.label_names),
            "n_labels": self.n_labels,
            "n_train": _jsonable(self.n_train),
            "n_test": self.n_test,
            "fit_seconds": _jsonable(self.fit_seconds),
            "stream_seconds": _jsonable(self.stream_seconds),
            "instances_per_second": _jsonable(self.instances_per_second),  # NaN -> None
            "chunk_size": _jsonable(self.chunk_size),
            "version": self.version,
            "info": _jsonable(self.info),
            "window_edges": self.window_edges.tolist(),
            "label_counts": self.label_counts.tolist(),
            "example_counts": [e.tolist() for e in self.example_counts],
            "predictions": None,
        }
        if self.predictions is not None:
            data["predictions"] = base64.b64encode(
                np.ascontiguousarray(self.predictions, dtype=np.uint8).tobytes()
            ).decode("ascii")
        return data

    @classmethod
    def from_dict(cls, data):
        """Rebuild a result from :meth:`to_dict`'s output.

        Every field is checked before use: counts and row offsets must be whole numbers in
        [0, 2**53] (a float of integral value is read as that integer, any other is refused before
        any conversion), the tables must have the shapes that ``window_edges`` and ``n_labels``
        give and agree with each other (see :class:`StreamEvaluation`), ``n_test`` must be where
        the windows end and the kept predictions must hold ``n_test`` rows; the other fields must
        have their types (text, dicts, whole numbers, durations in seconds).

        Parameters
        ----------
        data : dict

        Returns
        -------
        StreamEvaluation

        Raises
        ------
        ValueError
            When ``data`` is no valid stored result; the message names the field and the value.
        """
        if not isinstance(data, Mapping):
            raise TypeError(
                f"data must be a dict (the output of to_dict), got {type(data).__name__}"
            )
        fmt = data.get("format", _FORMAT)
        if fmt != _FORMAT:
            raise ValueError(f"unsupported result format {fmt!r} (expected {_FORMAT!r})")
        needed = ["n_labels", "window_edges", "label_counts", "example_counts"]
        if data.get("predictions") is not None:
            needed.append("n_test")
        missing = [key for key in needed if key not in data]
        if missing:
            raise ValueError(f"data is not a stored StreamEvaluation: it has no {missing}")
        try:
            return cls._from_fields(data)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"data is not a valid stored StreamEvaluation: {exc}") from None

    @classmethod
    def _from_fields(cls, data):
        n_labels = _stored_int("n_labels", data["n_labels"])
        edges = _stored_counts("window_edges", data["window_edges"])
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(
                f"window_edges must be a list of at least 2 row offsets, got shape {edges.shape}"
            )
        W = len(edges) - 1
        counts = _stored_counts("label_counts", data["label_counts"])
        if counts.shape != (W, n_labels, 4):
            # with no label, JSON keeps no trace of the last axis: [[], ...] reads as (W, 0)
            if not (n_labels == 0 and counts.size == 0 and counts.shape[:1] == (W,)):
                raise ValueError(
                    f"label_counts must have shape ({W}, {n_labels}, 4) (the windows of "
                    f"window_edges, n_labels={n_labels}), got {counts.shape}"
                )
            counts = counts.reshape(W, n_labels, 4)
        ex_list = data["example_counts"]
        if not isinstance(ex_list, list):
            raise TypeError(f"example_counts must be a list, got {type(ex_list).__name__}")
        ex = []
        for w, e in enumerate(ex_list):
            arr = _stored_counts(f"example_counts[{w}]", e)
            if arr.size == 0:
                arr = arr.reshape(0, 4)
            elif arr.ndim != 2 or arr.shape[1] != 4:
                raise ValueError(
                    f"example_counts[{w}] must have shape (n_rows, 4), got {arr.shape}"
                )
            ex.append(arr)
        if "n_test" in data:
            n_test = _stored_int("n_test", data["n_test"])
            if n_test != edges[-1]:
                raise ValueError(f"n_test={n_test}, but window_edges end at row {int(edges[-1])}")
        predictions = None
        if data.get("predictions") is not None:
            text = data["predictions"]
            if not isinstance(text, str):
                raise TypeError(f"predictions must be base64 text, got {type(text).__name__}")
            try:
                raw = np.frombuffer(base64.b64decode(text, validate=True), dtype=np.uint8)
            except ValueError as exc:  # binascii.Error
                raise ValueError(f"predictions are not base64 text: {exc}") from None
            n_test = int(edges[-1])
            width = (n_labels + 7) // 8
            if raw.size != n_test * width:
                raise ValueError(
                    f"predictions hold {raw.size} bytes, but {n_test} rows (window_edges) of "
                    f"{n_labels} labels take {n_test * width}"
                )
            predictions = raw.reshape(n_test, width).copy()
        return cls(
            window_edges=edges,
            label_counts=counts,
            example_counts=ex,
            method=_stored_text(data, "method"),
            kind=_stored_text(data, "kind"),
            params=_stored_dict(data, "params"),
            stream=_stored_text(data, "stream"),
            seed=data.get("seed"),
            zero_division=data.get("zero_division", 1),
            label_names=_stored_names(data.get("label_names")),
            n_train=_stored_optional(data, "n_train", _stored_int),
            fit_seconds=_stored_optional(data, "fit_seconds", _stored_seconds),
            stream_seconds=_stored_optional(data, "stream_seconds", _stored_seconds),
            chunk_size=_stored_optional(data, "chunk_size", _stored_int),
            version=_stored_text(data, "version"),
            info=_stored_dict(data, "info"),
            predictions=predictions,
        )

    def __repr__(self):
        return (
            f"StreamEvaluation(method={self.method!r}, kind={self.kind!r}, stream={self.stream!r}, "
            f"n_test={self.n_test}, n_windows={self.n_windows}, n_labels={self.n_labels}, "
            f"zero_division={self.zero_division!r})"
        )


def evaluate_predictions(
    Y, Y_hat, *, n_windows=50, window_size=None, zero_division=1, keep_predictions=False, **metadata
):
    """Windowed evaluation of given predictions of a test stream.

    Use it to evaluate predictions obtained elsewhere, or to lay new windows over kept
    predictions (:meth:`StreamEvaluation.unpacked_predictions`).

    Parameters
    ----------
    Y, Y_hat : array-like of shape (n_test, n_labels)
        True and predicted 0/1 label matrices of the test stream, in order.
    n_windows : int, default=50
        Number of windows (``window_edges(n_test, n_windows)``).
    window_size : int, optional
        Windows of this many rows instead (the last one may be shorter); overrides ``n_windows``.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        The convention recorded in the result (used when no other is asked for).
    keep_predictions : bool, default=False
        Keep the predictions, bit-packed, in the result.
    **metadata
        Further fields of :class:`StreamEvaluation` (``method``, ``stream``, ``seed``, ...).

    Returns
    -------
    StreamEvaluation
    """
    Y, Y_hat = _check_pair(Y, Y_hat)
    if window_size is None:
        edges = window_edges(len(Y), n_windows)  # at most one window per row of Y
        _check_window_memory("n_windows", n_windows, len(edges) - 1, Y.shape[1])
    else:
        window_size = _check_count("window_size", window_size, low=1)
        n_test = _check_count("n_test", len(Y), low=1)
        _check_window_memory("window_size", window_size, -(-n_test // window_size), Y.shape[1])
        edges = _fixed_edges(n_test, window_size)
    acc = _WindowAccumulator(Y.shape[1], edges=edges, keep_predictions=keep_predictions)
    acc.add(Y, Y_hat)
    edges, counts, ex, packed = acc.finish()
    return StreamEvaluation(
        edges, counts, ex, zero_division=zero_division, predictions=packed, **metadata
    )


def average_curves(results, measure="macro_f1", cumulative=True, zero_division=None):
    """Mean curve of several runs (seeds) of a method on one stream.

    The protocol averages the per-window values of the runs of a stochastic method before
    summarising them (``docs/protocol.md`` 3.3).

    Parameters
    ----------
    results : sequence of StreamEvaluation
        Runs with the same windows.
    measure : str, default="macro_f1"
    cumulative : bool, default=True
    zero_division : {1, 0, "exclude", "mulan"}, optional
        Default: each result's recorded convention.

    Returns
    -------
    values : ndarray of shape (n_windows,)
        Window by window, the mean over the runs (NaN values, possible only with
        ``"exclude"``, are left out).
    """
    results = list(results)
    if not results:
        raise ValueError("no result to average")
    for r in results:
        if not isinstance(r, StreamEvaluation):
            raise TypeError(f"results must hold StreamEvaluation objects, got {type(r).__name__}")
    edges = results[0].window_edges
    for r in results[1:]:
        if not np.array_equal(r.window_edges, edges):
            raise ValueError("the results do not have the same windows")
    curves = np.stack([r.curve(measure, cumulative, zero_division) for r in results])
    defined = ~np.isnan(curves)
    n = defined.sum(0)
    total = np.where(defined, curves, 0.0).sum(0)
    return np.divide(total, n, out=np.full(len(total), np.nan), where=n > 0)
