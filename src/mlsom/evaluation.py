"""Multi-label evaluation measures, computed from per-label confusion counts.

Every measure is computed from counts that can be stored per evaluation window, so any measure or
0/0 convention can be recomputed later without re-running a method.

The 0/0 convention (``zero_division``): a label absent from a window and never predicted there has
precision, recall and F = 0/0. Mulan counts it as 1 (the default here, as in the paper's tools);
``0`` counts it as 0; ``"exclude"`` leaves such labels out of the macro average. Where the
conventions overlap, the results equal scikit-learn's ``f1_score(..., zero_division=...)``.
"""

import numpy as np

__all__ = [
    "confusion_counts",
    "example_f1",
    "hamming_loss",
    "macro_f1",
    "micro_f1",
    "subset_accuracy",
]


def _check_pair(Y, Y_hat):
    Y = np.asarray(Y)
    Y_hat = np.asarray(Y_hat)
    if Y.ndim != 2 or Y.shape != Y_hat.shape:
        raise ValueError(
            f"Y and Y_hat must be 2-D arrays of the same shape, got {Y.shape} and {Y_hat.shape}"
        )
    return Y.astype(bool), Y_hat.astype(bool)


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


def _f_per_label(counts, zero_division):
    counts = np.asarray(counts)
    tp, fp, fn = counts[:, 0], counts[:, 1], counts[:, 2]
    den = 2 * tp + fp + fn
    f = np.divide(2.0 * tp, den, out=np.zeros(len(tp)), where=den > 0)
    empty = den == 0
    if zero_division == "exclude":
        return f[~empty]
    if zero_division not in (0, 1):
        raise ValueError(f"zero_division must be 0, 1 or 'exclude', got {zero_division!r}")
    f[empty] = float(zero_division)
    return f


def macro_f1(counts, zero_division=1):
    """Mean over labels of the per-label F-measure, from :func:`confusion_counts`.

    Returns NaN when ``zero_division="exclude"`` leaves no label.
    """
    f = _f_per_label(counts, zero_division)
    return float(f.mean()) if f.size else float("nan")


def micro_f1(counts, zero_division=1):
    """F-measure of the counts summed over labels."""
    tp, fp, fn = np.asarray(counts)[:, :3].sum(0)
    den = 2 * tp + fp + fn
    if den == 0:
        if zero_division == "exclude":
            return float("nan")
        return float(zero_division)
    return float(2 * tp / den)


def example_f1(Y, Y_hat, zero_division=1):
    """Mean over instances of the F-measure between true and predicted label sets."""
    Y, Y_hat = _check_pair(Y, Y_hat)
    tp = (Y & Y_hat).sum(1)
    den = Y.sum(1) + Y_hat.sum(1)
    f = np.divide(2.0 * tp, den, out=np.zeros(len(tp)), where=den > 0)
    if zero_division == "exclude":
        f = f[den > 0]
        return float(f.mean()) if f.size else float("nan")
    f[den == 0] = float(zero_division)
    return float(f.mean()) if f.size else float("nan")


def hamming_loss(Y, Y_hat):
    """Fraction of wrong label decisions."""
    Y, Y_hat = _check_pair(Y, Y_hat)
    return float((Y != Y_hat).mean())


def subset_accuracy(Y, Y_hat):
    """Fraction of instances whose predicted label set is exactly the true one."""
    Y, Y_hat = _check_pair(Y, Y_hat)
    return float((Y == Y_hat).all(1).mean())
