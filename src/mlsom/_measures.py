"""The multi-label measures and the counts they are computed from (``docs/protocol.md`` 3.1, 3.2).

Public through :mod:`mlsom.evaluation`, whose documentation describes the measures and the
zero-division conventions.
"""

import numbers

import numpy as np

from ._validation import MAX_ROWS, as_numeric

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
    "f1m",
    "predicted_cardinality",
    "true_cardinality",
    "cardinality_error",
)

#: Measures for which smaller values are better (the others but :data:`DESCRIPTIVE`: larger is
#: better).
LOWER_IS_BETTER = frozenset({"hamming_loss", "cardinality_error"})

#: Values that describe the label sets rather than score the predictions (no value is better than
#: another): the mean number of labels predicted, and true, per instance. Not ranked.
DESCRIPTIVE = frozenset({"predicted_cardinality", "true_cardinality"})

# label-based measures that are not named macro_* or micro_*
_OTHER_LABEL_MEASURES = frozenset({"hamming_loss", "f1m", *DESCRIPTIVE, "cardinality_error"})

# Counts are kept in int64 and measures computed in float64: a count above 2**53 would lose
# digits, so stored counts are refused beyond it.
MAX_COUNT = 2**53

# ---------------------------------------------------------------------------------------- checks


def check_zero_division(zero_division):
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


def check_measure(measure):
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    return measure


def check_01(name, arr):
    """Refuse any value of ``arr`` but 0 and 1 (False and True), naming ``name``, the value and
    where it is."""
    if arr.dtype.kind != "b" and arr.size:
        bad = (arr != 0) & (arr != 1)  # NaN is neither
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"{name} must contain only 0 and 1, found {arr[i, j].item()!r} at row {i}, "
                f"column {j}"
            )


def check_pair(Y, Y_hat):
    Y = as_numeric("Y", Y, "0/1 values")
    Y_hat = as_numeric("Y_hat", Y_hat, "0/1 values")
    if Y.ndim != 2 or Y.shape != Y_hat.shape:
        raise ValueError(
            f"Y and Y_hat must be 2-D arrays of the same shape, got {Y.shape} and {Y_hat.shape}"
        )
    check_01("Y", Y)
    check_01("Y_hat", Y_hat)
    return Y.astype(bool), Y_hat.astype(bool)


def check_whole_counts(name, arr):
    """Counts must be whole numbers >= 0 (real arrays holding such values are accepted)."""
    if arr.dtype.kind == "f" and arr.size:
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"{name} must be whole numbers, found {arr[bad][0].item()!r}")
    if arr.size and (arr < 0).any():
        raise ValueError(f"{name} must be >= 0, found {arr[arr < 0][0].item()!r}")
    if arr.size and (arr > MAX_COUNT).any():
        raise ValueError(
            f"{name} must be <= 2**53 (counts beyond it are not exact in float64), found "
            f"{arr[arr > MAX_COUNT][0].item()!r}"
        )
    return arr.astype(np.int64, copy=False)


def _check_label_counts(counts):
    counts = as_numeric("label counts", counts, "counts")
    if counts.ndim < 2 or counts.shape[-1] != 4:
        raise ValueError(f"label counts must have shape (..., n_labels, 4), got {counts.shape}")
    counts = check_whole_counts("label counts", counts)
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


def check_example_counts(ex_counts):
    ex_counts = as_numeric("example counts", ex_counts, "counts")
    if ex_counts.size == 0:
        return np.zeros((0, 4), np.int64)
    if ex_counts.ndim != 2 or ex_counts.shape[1] != 4:
        raise ValueError(f"example counts must have shape (n_rows, 4), got {ex_counts.shape}")
    ex_counts = check_whole_counts("example counts", ex_counts)
    a, t, p = ex_counts[:, 0], ex_counts[:, 1], ex_counts[:, 2]
    bad = (a > t) | (a > p)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"example counts: the row {ex_counts[k].tolist()} has |Y ∩ Ŷ| = {int(a[k])} above "
            f"|Y| = {int(t[k])} or |Ŷ| = {int(p[k])}"
        )
    return ex_counts


def describe_array(arr):
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
    Y, Y_hat = check_pair(Y, Y_hat)
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
    Y, Y_hat = check_pair(Y, Y_hat)
    inter = (Y & Y_hat).sum(1)
    n_true = Y.sum(1)
    n_pred = Y_hat.sum(1)
    n_labels = Y.shape[1]
    # encode each triple as one integer, count the codes, decode
    base = n_labels + 1
    if base**3 > MAX_ROWS:  # the codes would overflow int64: count the rows themselves
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
    parts = [check_example_counts(e) for e in ex_counts]
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
    if sums.max() > MAX_COUNT:
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


def _per_instance(measure, tp, fp, fn, tn):
    """Hamming loss and the cardinalities: a sum over labels of counts (..., L) per instance
    (per label decision for the Hamming loss); NaN without instances (or labels)."""
    n = (tp + fp + fn + tn)[..., 0] if tp.shape[-1] else np.zeros(tp.shape[:-1])
    if measure == "hamming_loss":
        total, n = (fp + fn).sum(-1), n * tp.shape[-1]
    elif measure == "predicted_cardinality":
        total = (tp + fp).sum(-1)
    elif measure == "true_cardinality":
        total = (tp + fn).sum(-1)
    else:  # cardinality_error: |predicted - true| = |sum FP - sum FN| / n
        total = np.abs(fp.sum(-1) - fn.sum(-1))
    return np.divide(total, n, out=np.full(np.shape(n), np.nan), where=n > 0)


def _f1m(tp, fp, fn, zd):
    """MINAS-BR's F1M: the F of the macro precision and the macro recall (``zd`` for the 0/0
    of a label's precision or recall); 0 where both are 0, NaN where either is."""
    precision = _mean_ratio(tp, tp + fp, fn == 0, 1.0, zd)
    recall = _mean_ratio(tp, tp + fn, fp == 0, 1.0, zd)
    total = precision + recall
    f = np.divide(2 * precision * recall, total, out=np.zeros(np.shape(total)), where=total > 0)
    return np.where(np.isnan(total), np.nan, f)


def label_measure(measure, counts, zd):
    """A label-based measure of counts (..., L, 4), one value per leading index."""
    tp, fp, fn, tn = (counts[..., k].astype(np.float64) for k in range(4))
    kind, _, what = measure.partition("_")
    if measure == "f1m":
        return _f1m(tp, fp, fn, zd)
    if measure in _OTHER_LABEL_MEASURES:
        return _per_instance(measure, tp, fp, fn, tn)
    if kind == "micro":
        tp, fp, fn = tp.sum(-1, keepdims=True), fp.sum(-1, keepdims=True), fn.sum(-1, keepdims=True)
    if what == "f1":
        num, den, both = 2 * tp, 2 * tp + fp + fn, True
    elif what == "precision":
        num, den, both = tp, tp + fp, fn == 0
    else:  # recall
        num, den, both = tp, tp + fn, fp == 0
    return _mean_ratio(num, den, both, 1.0, zd)


def example_measure(measure, triples, weights, zd):
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


def is_label_measure(measure):
    return measure.startswith(("macro_", "micro_")) or measure in _OTHER_LABEL_MEASURES


def compute_measure(measure, label_counts=None, ex_counts=None, *, zero_division=1):
    """A measure from stored counts: the per-label confusion counts or the example counts.

    Parameters
    ----------
    measure : str
        One of :data:`MEASURES`.
    label_counts : array-like of shape (n_labels, 4), optional
        Output of :func:`confusion_counts`; needed for the macro and micro measures, F1M, the
        Hamming loss and the cardinalities.
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
    check_measure(measure)
    zd = check_zero_division(zero_division)
    if is_label_measure(measure):
        if label_counts is None:
            raise ValueError(f"{measure} needs the per-label confusion counts")
        counts = _check_label_counts(label_counts)
        if counts.ndim != 2:
            raise ValueError(f"label counts must have shape (n_labels, 4), got {counts.shape}")
        return float(label_measure(measure, counts, zd))
    if ex_counts is None:
        raise ValueError(f"{measure} needs the example counts (see example_counts)")
    ex = check_example_counts(ex_counts)
    return float(example_measure(measure, ex[:, :3], ex[:, 3], zd))


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
    measures = MEASURES if measures is None else tuple(check_measure(m) for m in measures)
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


def f1m(counts, zero_division=1):
    """MINAS-BR's F1M: the F-measure of the macro precision P and the macro recall R,
    2PR / (P + R).

    Unlike macro F (the mean of the per-label F values) it averages precision and recall over
    the labels first. MINAS-BR's publications report it cumulatively, over the labels known so
    far: with a fixed label set, give the counts added up from the start of the stream
    (``StreamEvaluation.curve("f1m")`` does, window by window).

    Parameters
    ----------
    counts : array-like of shape (n_labels, 4)
        Output of :func:`confusion_counts`.
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        Value of a label's precision (nothing predicted) or recall (the label absent), as in
        :func:`macro_precision` and :func:`macro_recall`; ``"exclude"`` leaves the label out
        of that mean, so that a label counts in the recall from its first occurrence on.

    Returns
    -------
    value : float
        0 where P = R = 0; NaN where ``"exclude"`` leaves no label.

    Examples
    --------
    >>> f1m([[3, 1, 0, 6], [1, 1, 3, 5], [0, 0, 2, 8]])  # P = 3/4, R = 5/12
    0.5357142857142857
    """
    return compute_measure("f1m", counts, zero_division=zero_division)


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
    Y, Y_hat = check_pair(Y, Y_hat)
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
    Y, Y_hat = check_pair(Y, Y_hat)
    return float((Y == Y_hat).all(1).mean()) if len(Y) else float("nan")
