"""Preprocessing of real multi-label data sets for the stream protocol (docs/protocol.md, 3.4).

* :func:`filter_labels` -- keep the labels with at least 5 % positives (or a named subset);
* :func:`drop_unlabelled` -- remove instances left with an empty label set;
* :func:`balanced_initial_split` -- the deterministic, label-balanced 10 % initial training set;
* :func:`prefix_split` -- the first 10 % of the stream as training set (synthetic streams);
* :func:`minmax_scale` -- min-max scaling fitted on the training part only.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._memory import check_allocation, nbytes_of
from .._validation import as_numeric, describe

__all__ = [
    "InitialSplit",
    "balanced_initial_set",
    "balanced_initial_split",
    "drop_unlabelled",
    "filter_labels",
    "minmax_scale",
    "prefix_split",
]


class InitialSplit(NamedTuple):
    """An initial labelled set and the stream that follows it.

    Attributes
    ----------
    X_train, Y_train : ndarray
        The initial (offline, labelled) training set, rows in stream order.
    X_stream, Y_stream : ndarray
        All other rows, in their original order: the test stream.
    train_indices, stream_indices : ndarray of int
        Row numbers in the input of the two parts (both increasing).
    info : dict
        Details of the selection (see the function that made the split).
    """

    X_train: np.ndarray
    Y_train: np.ndarray
    X_stream: np.ndarray
    Y_stream: np.ndarray
    train_indices: np.ndarray
    stream_indices: np.ndarray
    info: dict[str, Any]


def _labels01(Y, name: str = "Y") -> np.ndarray:
    arr = np.asarray(Y)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_instances, n_labels), got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold 0/1 values, got dtype {arr.dtype}")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        i, j = np.argwhere((arr != 0) & (arr != 1))[0]
        raise ValueError(f"{name} must hold only 0 and 1, found {arr[i, j]!r} at ({i}, {j})")
    return arr.astype(np.uint8, copy=False)


def _check_xy(X, Y) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X)
    Y = _labels01(Y)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_instances, n_features), got shape {X.shape}")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
    return X, Y


def n_initial(n: int, fraction) -> int:
    """floor(fraction * n + 1/2), with ``fraction`` taken as the decimal number it prints as.

    Exact rational arithmetic: 0.1 * 2415 = 241.5 rounds up to 242 even though the binary double
    nearest 0.1 times 2415 might fall just below 241.5.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise TypeError(f"fraction must be a real number, got {fraction!r}")
    if not isinstance(fraction, (int, float, Fraction)):  # numpy scalars
        fraction = float(fraction)
    if not (isinstance(fraction, Fraction) or math.isfinite(fraction)) or not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    f = fraction if isinstance(fraction, Fraction) else Fraction(repr(float(fraction)))
    return math.floor(f * n + Fraction(1, 2))


def _refuse_text(name: str, value: Any, what: str) -> None:
    """A str or bytes where a sequence is expected would be read character by character."""
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError(
            f"{name} must be a sequence of {what}, not a {type(value).__name__} (read character "
            f"by character), got {describe(value)}"
        )


def filter_labels(
    Y: ArrayLike,
    label_names: Sequence[str],
    *,
    min_frequency: float | None = None,
    keep: Sequence[str] | None = None,
) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """Keep the frequent labels, or a named subset of the labels.

    Parameters
    ----------
    Y : array-like of shape (n_instances, n_labels)
        0/1 label matrix.
    label_names : sequence of str
        One name per column of ``Y``.
    min_frequency : float in [0, 1], optional
        Keep the labels whose positive rate on all of ``Y`` is at least this value. Default 0.05
        (the paper: "labels with < 5 % positives removed") unless ``keep`` is given.
    keep : sequence of str, optional
        Keep exactly these labels (overrides the frequency rule; give only one of the two).
        Names are matched exactly (case-sensitive).

    Returns
    -------
    Y : ndarray of uint8, shape (n_instances, n_kept)
        The kept columns, in their original order (also when ``keep`` lists them in another).
    names : tuple of str
        Their names.
    kept_indices : ndarray of int
        Their column numbers in the input.

    Raises
    ------
    ValueError
        If no label is kept, a name in ``keep`` is unknown, or both options are given.
    TypeError
        If ``label_names`` or ``keep`` is a str or bytes (not a sequence of names).
    """
    Y = _labels01(Y)
    _refuse_text("label_names", label_names, "names")
    if not hasattr(label_names, "__len__"):  # an iterator could be endless
        raise TypeError(
            f"label_names must be a sequence of names, got {type(label_names).__name__}"
        )
    names = tuple(label_names)
    if len(names) != Y.shape[1]:
        raise ValueError(f"label_names has {len(names)} names but Y has {Y.shape[1]} columns")
    if keep is not None and min_frequency is not None:
        raise ValueError("give either min_frequency= or keep=, not both")
    if keep is not None:
        _refuse_text("keep", keep, "label names")
        if not hasattr(keep, "__len__"):
            raise TypeError(f"keep must be a sequence of label names, got {type(keep).__name__}")
        if len(keep) > len(names):
            raise ValueError(f"keep names {len(keep)} labels but Y has only {len(names)}")
        keep = list(keep)
        if len(set(keep)) != len(keep):
            raise ValueError(f"keep repeats a name: {keep!r}")
        unknown = [k for k in keep if k not in names]
        if unknown:
            raise ValueError(f"unknown label name(s) {unknown!r}; the labels are {list(names)!r}")
        kept = np.array(sorted(names.index(k) for k in keep), dtype=np.intp)
    else:
        if min_frequency is not None and (
            isinstance(min_frequency, bool) or not isinstance(min_frequency, numbers.Real)
        ):
            raise TypeError(f"min_frequency must be a real number, got {min_frequency!r}")
        mf = 0.05 if min_frequency is None else float(min_frequency)
        if not 0 <= mf <= 1:
            raise ValueError(f"min_frequency must be in [0, 1], got {min_frequency!r}")
        if Y.shape[0] == 0:
            raise ValueError("Y has no row: label frequencies are undefined")
        freq = Y.sum(axis=0) / Y.shape[0]
        kept = np.flatnonzero(freq >= mf).astype(np.intp)
    if kept.size == 0:
        raise ValueError("no label is kept")
    return Y[:, kept], tuple(names[i] for i in kept), kept


def drop_unlabelled(X: ArrayLike, Y: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Remove the instances whose label set is empty.

    Returns
    -------
    X, Y : ndarray
        The rows with at least one positive label, in their original order.
    kept_rows : ndarray of int
        Their row numbers in the input.
    """
    X, Y = _check_xy(X, Y)
    kept = np.flatnonzero(Y.any(axis=1))
    return X[kept], Y[kept], kept


def balanced_initial_set(Y: ArrayLike, fraction: float = 0.10) -> tuple[np.ndarray, dict[str, Any]]:
    """Choose a label-balanced initial training set, deterministically (docs/protocol.md 3.4).

    Algorithm (no random numbers):

    1. B = floor(fraction * N + 1/2) instances are selected; quota q = B / L per label; counts
       c_l = 0.
    2. Instances are grouped by identical label set; each group keeps stream order.
    3. Until B instances are selected:

       a. among the labels that still have an unselected positive instance, take the neediest
          l* = argmin c_l (ties: smaller frequency over all of ``Y``, then smaller column index);
       b. among the groups that contain l* and have members left, take the one with the smallest
          overshoot sum_{l in set} max(0, c_l + 1 - q) (ties: the group whose next member comes
          earliest in the stream); the overshoot is computed exactly, in integers (times L);
       c. select that group's next member and add its label vector to c.

       If no instance with a label is left, the earliest unselected instances fill the rest.
    4. The training set is the selected rows in stream order.

    Parameters
    ----------
    Y : array-like of shape (N, L)
        0/1 labels, rows in stream order.
    fraction : float in (0, 1], default 0.10
        Size of the training set relative to N.

    Returns
    -------
    train_indices : ndarray of int
        Increasing row numbers of the selected instances.
    info : dict
        ``n_train`` (B), ``quota`` (B / L), ``label_counts`` (positives per label in the training
        set), ``cardinality`` (of the training set), ``n_filled`` (instances added without a
        label by the fill rule).
    """
    Y = _labels01(Y)
    N, L = Y.shape
    if L == 0:
        raise ValueError("Y has no label column")
    B = n_initial(N, fraction)
    # the distinct label sets (as many as the rows at most): their sort, their counts in int64,
    # their members
    check_allocation(
        "Y", f"{N} x {L}", nbytes_of(N, 10 * L + 136), "the groups of identical label sets"
    )
    freq = Y.sum(axis=0, dtype=np.int64)
    keys, inv = np.unique(Y, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    M = keys.astype(np.int64)  # groups x labels
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(keys) + 1))
    members = [order[bounds[g] : bounds[g + 1]] for g in range(len(keys))]  # stream order
    sizes = np.diff(bounds)
    ptr = np.zeros(len(keys), dtype=np.int64)
    labelled = M.any(axis=1)
    c = np.zeros(L, dtype=np.int64)
    selected: list[int] = []
    label_index = np.arange(L)
    while len(selected) < B:
        open_groups = labelled & (ptr < sizes)
        available = M[open_groups].any(axis=0)
        if not available.any():
            break
        cand = label_index[available]
        # primary key last in np.lexsort: counts, then overall frequency, then index
        target = cand[np.lexsort((cand, freq[cand], c[cand]))[0]]
        groups = np.flatnonzero(open_groups & (M[:, target] == 1))
        excess = np.maximum(0, L * (c + 1) - B)  # L * max(0, c_l + 1 - q), exact
        overshoot = M[groups] @ excess
        nxt = np.array([members[g][ptr[g]] for g in groups])
        g = groups[np.lexsort((nxt, overshoot))[0]]
        selected.append(int(members[g][ptr[g]]))
        ptr[g] += 1
        c += M[g]
    n_filled = B - len(selected)
    if n_filled:
        free = np.ones(N, dtype=bool)
        free[selected] = False
        selected.extend(np.flatnonzero(free)[:n_filled].tolist())
    train = np.sort(np.asarray(selected, dtype=np.intp))
    counts = Y[train].sum(axis=0, dtype=np.int64)
    info = {
        "n_train": int(B),
        "quota": B / L,
        "label_counts": counts,
        "cardinality": float(counts.sum() / B) if B else math.nan,
        "n_filled": int(n_filled),
    }
    return train, info


def _split(X, Y, train: np.ndarray, info: dict[str, Any]) -> InitialSplit:
    rest = np.ones(X.shape[0], dtype=bool)
    rest[train] = False
    stream = np.flatnonzero(rest)
    return InitialSplit(X[train], Y[train], X[stream], Y[stream], train, stream, info)


def balanced_initial_split(X: ArrayLike, Y: ArrayLike, fraction: float = 0.10) -> InitialSplit:
    """Split into a label-balanced initial training set and the test stream (docs/protocol.md 3.4).

    The training rows are chosen by :func:`balanced_initial_set` (deterministic, no random
    numbers); the stream is every other row, in the original order.

    Parameters
    ----------
    X : array-like of shape (N, A)
    Y : array-like of shape (N, L), 0/1
    fraction : float in (0, 1], default 0.10
        Size of the training set relative to N: floor(fraction * N + 1/2) rows, so at least
        1/(2N) for the training set not to be empty.

    Returns
    -------
    InitialSplit
        ``(X_train, Y_train, X_stream, Y_stream, train_indices, stream_indices, info)``; ``info``
        as returned by :func:`balanced_initial_set`.

    Raises
    ------
    ValueError
        If ``fraction`` is outside (0, 1] or selects no row (below 1/(2N)).
    """
    X, Y = _check_xy(X, Y)
    N = X.shape[0]
    if N and n_initial(N, fraction) == 0:  # an empty training set: nothing to fit
        raise ValueError(
            f"fraction must be >= 1/(2 * N) = 1/{2 * N} ({1 / (2 * N):.3g}) to select a training "
            f"row of the N = {N} rows, got {fraction!r}"
        )
    train, info = balanced_initial_set(Y, fraction)
    return _split(X, Y, train, info)


def prefix_split(X: ArrayLike, Y: ArrayLike, fraction: float = 0.10) -> InitialSplit:
    """The first floor(fraction * N + 1/2) rows train, the rest is the stream (protocol 3.3).

    Returns
    -------
    InitialSplit
        ``info`` holds ``n_train``, ``label_counts`` and ``cardinality`` of the training part.
    """
    X, Y = _check_xy(X, Y)
    n = n_initial(X.shape[0], fraction)
    train = np.arange(n, dtype=np.intp)
    counts = Y[:n].sum(axis=0, dtype=np.int64)
    info = {
        "n_train": n,
        "label_counts": counts,
        "cardinality": float(counts.sum() / n) if n else math.nan,
    }
    return _split(X, Y, train, info)


#: The values of :func:`mlsom.protocol.evaluate`'s ``scale``: None (the default) gives the
#: features as they are; "minmax_on_train" scales them as :func:`minmax_scale` does.
SCALINGS = (None, "minmax_on_train")


def check_scale(scale):
    """``scale`` if it is one of :data:`SCALINGS`; a ValueError naming ``scale`` and the value
    otherwise."""
    if not (scale is None or (isinstance(scale, str) and scale in SCALINGS)):
        raise ValueError(
            f"scale must be None (the features as they are) or 'minmax_on_train' (min-max "
            f"scaling fitted on the labelled set), got scale={describe(scale)}"
        )
    return scale


def _as_float(a, name):
    arr = as_numeric(name, a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    dt = arr.dtype if arr.dtype.kind == "f" else np.float64
    return arr.astype(dt, copy=False)


class MinMaxScaling:
    """Min-max scaling fitted on a training part: (x - min_train) / (max_train - min_train).

    A column constant on the training part becomes 0 everywhere; values outside the training
    range are not clipped. :func:`minmax_scale` and ``scale="minmax_on_train"`` of
    :func:`mlsom.protocol.evaluate` both scale with it.

    Parameters
    ----------
    train : array-like of shape (n, A)
        Finite, at least one row.
    name : str, default="train"
        The name of ``train`` in error messages.
    """

    def __init__(self, train, name="train"):
        tr = _as_float(train, name)
        if tr.shape[0] == 0:
            raise ValueError(f"{name} has no row")
        if not np.isfinite(tr).all():
            i, j = (int(v) for v in np.argwhere(~np.isfinite(tr))[0])
            raise ValueError(f"{name} contains NaN or infinity (row {i}, column {j})")
        lo = tr.min(axis=0)
        with np.errstate(over="ignore"):
            span = tr.max(axis=0) - lo
        if not np.isfinite(span).all():
            j = int(np.flatnonzero(~np.isfinite(span))[0])
            raise ValueError(
                f"{name} column {j} spans more than the largest {tr.dtype} (from {lo[j]!r} to "
                f"{tr[:, j].max()!r}): its range cannot be computed; scale it down first"
            )
        self.name, self.train, self.low, self.span = name, tr, lo, span
        self.constant = span == 0
        self._divisor = np.where(self.constant, 1, span)

    def transform(self, part, name, first_row=0):
        """``part`` scaled (float32 stays float32, anything else becomes float64); errors name
        it as ``name`` and its rows from ``first_row`` on."""
        arr = _as_float(part, name)
        if arr.shape[1] != self.train.shape[1]:
            raise ValueError(
                f"{name} has {arr.shape[1]} columns but {self.name} has {self.train.shape[1]}"
            )
        if not np.isfinite(arr).all():
            i, j = (int(v) for v in np.argwhere(~np.isfinite(arr))[0])
            raise ValueError(f"{name} contains NaN or infinity (row {first_row + i}, column {j})")
        with np.errstate(over="ignore"):
            res = (arr - self.low) / self._divisor
        res[:, self.constant] = 0
        if not np.isfinite(res).all():  # a value far outside a tiny training range
            i, j = (int(v) for v in np.argwhere(~np.isfinite(res))[0])
            raise ValueError(
                f"{name}[{first_row + i}, {j}] = {float(arr[i, j])!r} is too far outside "
                f"{self.name} column {j} (range {float(self.low[j])!r} to "
                f"{float(self.low[j] + self.span[j])!r}) to scale in {arr.dtype}"
            )
        return res.astype(arr.dtype, copy=False)


def minmax_scale(train: ArrayLike, *others: ArrayLike) -> tuple[np.ndarray, ...]:
    """Scale features to [0, 1] with the minimum and range of the training part only.

    Each column becomes (x - min_train) / (max_train - min_train). A column that is constant on
    the training part becomes 0 everywhere (in ``train`` and in ``others``). Values of ``others``
    outside the training range are *not* clipped, so they may fall outside [0, 1]. The same
    scaling as ``scale="minmax_on_train"`` of :func:`mlsom.protocol.evaluate`
    (docs/your-data.md).

    Parameters
    ----------
    train : array-like of shape (n, A)
        Fits the scaling; must be finite and have at least one row.
    *others : array-like of shape (m, A)
        Further parts (e.g. the stream), scaled with the training statistics.

    Returns
    -------
    tuple of ndarray
        ``(train_scaled, *others_scaled)``, always a tuple (``(train_scaled,)`` without others);
        float32 inputs stay float32, anything else becomes float64.
    """
    scaling = MinMaxScaling(train, "train")
    out = [scaling.transform(scaling.train, "train")]
    out += [scaling.transform(part, f"others[{k}]") for k, part in enumerate(others)]
    return tuple(out)
