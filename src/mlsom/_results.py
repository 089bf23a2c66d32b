"""The stored result of a stream run (:class:`StreamEvaluation`), its checks and its format.

Public through :mod:`mlsom.evaluation`.
"""

import base64
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._measures import (
    MAX_COUNT,
    MEASURES,
    check_example_counts,
    check_measure,
    check_pair,
    check_whole_counts,
    check_zero_division,
    describe_array,
    example_measure,
    is_label_measure,
    label_measure,
    merge_example_counts,
)
from ._memory import check_allocation, nbytes_of
from ._validation import as_numeric, check_count, describe
from ._version import __version__
from ._windows import WindowAccumulator, check_window_memory, fixed_edges, window_edges

_FORMAT = "mlsom.StreamEvaluation/1"


# --------------------------------------------------------------------------------- result object


def check_window_tables(edges, label_counts, ex_counts):
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
    # (|Y ∩ Ŷ| <= min(|Y|, |Ŷ|) was checked with each table: check_example_counts)
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


def from_stored(kind, data, needed, build):
    """``build(data)`` for a stored result of class ``kind`` that holds the fields ``needed``;
    a ValueError naming the class when a field is missing or ``build`` refuses one."""
    missing = [key for key in needed if key not in data]
    if missing:
        raise ValueError(f"data is not a stored {kind}: it has no {missing}")
    try:
        return build(data)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"data is not a valid stored {kind}: {exc}") from None


def stored_int(name, value):
    """A whole-number field of a stored result: an int, or a float of integral value, in
    [0, 2**53]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {describe(value)}")
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
        raise TypeError(f"label_names must be a list of strings, got {describe(value)}")
    return tuple(value)


def _is_count(value):
    """Whether ``value`` is a whole number in [0, 2**53] (an int, or a float of integral value)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    if not isinstance(value, numbers.Integral):
        value = float(value)
        if not (math.isfinite(value) and value.is_integer()):
            return False
    return 0 <= value <= MAX_COUNT


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


def stored_counts(name, value):
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
        raise ValueError(f"{name} must hold whole numbers in [0, 2**53], found {describe(bad)}")
    if arr.dtype.kind not in "iuf":  # an empty table of no numeric type
        arr = arr.astype(np.int64)
    return check_whole_counts(name, arr)


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

    # pickles and the documentation name the class by its public module
    __module__ = "mlsom.evaluation"

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
        edges = check_whole_counts("window_edges", edges)
        if edges[0] != 0 or not (np.diff(edges) > 0).all():
            raise ValueError(
                "window_edges must start at 0 and increase strictly (no empty window), got "
                f"{describe_array(edges)}"
            )
        self.window_edges = edges
        self.label_counts = check_whole_counts(
            "label_counts", as_numeric("label_counts", self.label_counts, "counts")
        )
        self.example_counts = [check_example_counts(e) for e in self.example_counts]
        self.zero_division = check_zero_division(self.zero_division)
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
        check_window_tables(self.window_edges, self.label_counts, self.example_counts)
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
                setattr(self, name, stored_int(name, value))
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
        check_measure(measure)
        zd = check_zero_division(self.zero_division if zero_division is None else zero_division)
        if is_label_measure(measure):
            counts = self.label_counts
            if cumulative:
                counts = np.cumsum(counts, axis=0)
            return label_measure(measure, counts, zd)
        triples, dense = self._stacked_example_counts()
        if cumulative:
            dense = np.cumsum(dense, axis=0)
        return example_measure(measure, triples, dense, zd)

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
        return from_stored("StreamEvaluation", data, needed, cls._from_fields)

    @classmethod
    def _from_fields(cls, data):
        n_labels = stored_int("n_labels", data["n_labels"])
        edges = stored_counts("window_edges", data["window_edges"])
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(
                f"window_edges must be a list of at least 2 row offsets, got shape {edges.shape}"
            )
        W = len(edges) - 1
        counts = stored_counts("label_counts", data["label_counts"])
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
            arr = stored_counts(f"example_counts[{w}]", e)
            if arr.size == 0:
                arr = arr.reshape(0, 4)
            elif arr.ndim != 2 or arr.shape[1] != 4:
                raise ValueError(
                    f"example_counts[{w}] must have shape (n_rows, 4), got {arr.shape}"
                )
            ex.append(arr)
        if "n_test" in data:
            n_test = stored_int("n_test", data["n_test"])
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
            n_train=_stored_optional(data, "n_train", stored_int),
            fit_seconds=_stored_optional(data, "fit_seconds", _stored_seconds),
            stream_seconds=_stored_optional(data, "stream_seconds", _stored_seconds),
            chunk_size=_stored_optional(data, "chunk_size", stored_int),
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
    Y, Y_hat = check_pair(Y, Y_hat)
    if window_size is None:
        edges = window_edges(len(Y), n_windows)  # at most one window per row of Y
        check_window_memory("n_windows", n_windows, len(edges) - 1, Y.shape[1])
    else:
        window_size = check_count("window_size", window_size, low=1)
        n_test = check_count("n_test", len(Y), low=1)
        check_window_memory("window_size", window_size, -(-n_test // window_size), Y.shape[1])
        edges = fixed_edges(n_test, window_size)
    acc = WindowAccumulator(Y.shape[1], edges=edges, keep_predictions=keep_predictions)
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
