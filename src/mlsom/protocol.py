"""Protocol runners: evaluate multi-label stream methods on a test stream, window by window.

:func:`evaluate` runs one method, :func:`evaluate_many` several methods in one pass over the same
stream. Both dispatch on the method's ``kind`` (``docs/methods.md``):

* ``"online"``: ``fit(X_train, Y_train)`` once, then ``predict_stream(X_chunk)`` for each chunk of
  the test stream, in order. The method is only ever given feature chunks: the runner keeps the
  test labels to itself and uses them only to count (the protocol of infinitely delayed labels).
* ``"batch"``: ``fit(X_train, Y_train)`` once, then ``predict(X_chunk)``; nothing else is called,
  so the model is never updated after ``fit``.
* ``"incremental"``: ``fit(X_train, Y_train)`` once, then ``predict_learn(X_chunk, Y_chunk)``,
  which for each row in order predicts it and then learns its true labels (test-then-train). The
  runner hands over the labels of a chunk together with its features, so predicting a row before
  learning its labels is the method's contract; the runner never gives a chunk's labels before all
  earlier rows have been predicted.

The test stream is consumed in chunks of at most ``chunk_size`` rows (default 1,000), so a method
never receives the whole stream at once and memory stays bounded. Each method gets its own copy of
every chunk (it may modify it without affecting the evaluation or the other methods). The
predictions are reduced to counts on the fly (:mod:`mlsom.evaluation`): per window, the per-label
confusion counts and the histogram of per-instance (|Y ∩ Ŷ|, |Y|, |Ŷ|) triples, from which every
measure can be recomputed under every 0/0 convention; the predictions themselves are kept, packed,
only with ``keep_predictions=True``.

Streams can be given as

* a :class:`mlsom.datasets.StreamDataset` (or any object with ``X_train``, ``Y_train``,
  ``X_stream`` and ``Y_stream``; its ``name`` and ``label_names`` are recorded);
* a pair ``(X_stream, Y_stream)`` of 2-D numpy arrays, with ``X_train`` and ``Y_train`` given;
* an iterable of ``(X_chunk, Y_chunk)`` pairs of any sizes, with ``X_train`` and ``Y_train`` given,
  for streams bigger than memory (read from disk, generated on the fly). Windows are then placed
  either from the announced number of test rows ``n_test`` (the same windows as for arrays; the
  runner checks that the stream has exactly that many rows) or, without ``n_test``, as windows of a
  fixed ``window_size`` rows, the last one ending with the stream (possibly shorter).

Where the training set and the test data both name their columns (DataFrames, an ``iter_arff``
stream), the feature and label names must be the same, in the same order, or a ValueError shows
both.

Windows: ``n_windows`` (default 50) windows, window w = rows ⌊w·n/W⌋ to ⌊(w+1)·n/W⌋ - 1 of the test
stream (:func:`mlsom.evaluation.window_edges`), or windows of ``window_size`` rows. Windows and
chunks are independent: predictions of a chunk that straddles a window boundary are split.

Labels that arrive (the delayed-label protocol, ``label_fraction``, ``label_delay``,
``label_seed``): a share of the test rows, chosen at random (``label_seed``), get their true labels
back ``label_delay`` rows after they were predicted. Online methods with ``partial_fit`` (mlsom)
get them through it; incremental methods (the upper bounds) get exactly the same labels at the
same times, through ``predict`` and ``partial_fit``, and nothing else; batch methods and online
methods without ``partial_fit`` (MINAS-BR) are run as without it. With ``label_fraction=None``
(the default) each kind runs its own protocol above (online methods never see a test label,
incremental ones learn every label right after predicting its row). With 0, an online method's
run is exactly that of None; with 1 and delay 0, every method is tested then trained on each row.

Scaling (``scale``): None, the default, gives every method the features as they are (the paper
says nothing of scaling). ``scale="minmax_on_train"`` scales each feature with the training set's
minimum and range, fitted on the training set alone, applied to it and to each chunk of the test
stream: the numbers :func:`mlsom.datasets.minmax_scale` gives (docs/your-data.md).

Each result's ``info`` records the windows, the stream's own info, the scaling (``"scale"``, when
one is used), the label setting (``"labels"``) and, for mlsom, the grid side d the fitted model
uses (``"fitted_grid_size"``: the choice of ``grid_size="auto"``, or the d given).

Timing: ``fit_seconds`` is the time spent in ``fit``, ``stream_seconds`` the time spent in the
method's calls on the test stream (evaluation overhead excluded), ``instances_per_second`` their
ratio to the test rows.
"""

import inspect
import math
import numbers
import time
from collections import deque
from collections.abc import Iterable, Mapping
from contextlib import contextmanager

import numpy as np

from ._measures import check_zero_division
from ._memory import check_allocation
from ._names import difference, show, string_columns
from ._novelty import evaluate_novelty
from ._results import StreamEvaluation
from ._validation import (
    MAX_ROWS,
    check_count,
    check_distinct_text,
    check_label_protocol,
    check_option,
    check_seed,
    describe,
)
from ._windows import WindowAccumulator, check_window_memory, fixed_edges, window_edges
from .datasets._preprocess import MinMaxScaling, check_scale

__all__ = ["KINDS", "evaluate", "evaluate_many", "evaluate_novelty_stream"]

#: The method interfaces of the protocol and the call each one gets on the test stream.
KINDS = {"online": "predict_stream", "batch": "predict", "incremental": "predict_learn"}


# ------------------------------------------------------------------------------------ streams


def _as_features(X, what):
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        X = X.toarray()
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array, got shape {X.shape}")
    if X.dtype.kind == "O":  # e.g. pandas' nullable columns: real numbers, or refused below
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if X.dtype.kind not in "biuf":  # complex numbers would lose their imaginary part
        raise TypeError(f"{what} must hold real numbers, got an array of dtype {X.dtype}")
    return X


def _as_labels(Y, what, n_labels=None):
    if hasattr(Y, "toarray") and not isinstance(Y, np.ndarray):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(f"{what} must be a 2-D 0/1 array, got shape {Y.shape}")
    if n_labels is not None and Y.shape[1] != n_labels:
        raise ValueError(f"{what} has {Y.shape[1]} labels, the training set has {n_labels}")
    if Y.dtype != bool and not ((Y == 0) | (Y == 1)).all():
        raise ValueError(f"{what} must hold only 0 and 1")
    return Y


def _is_array_pair(stream):
    return (
        isinstance(stream, (tuple, list))
        and len(stream) == 2
        and all(isinstance(a, np.ndarray) and a.ndim == 2 for a in stream)
    )


class _Source:
    """The training set and the test stream in chunks of at most ``chunk_size`` rows."""

    def __init__(self, stream, X_train, Y_train, n_test, chunk_size, scale=None):
        self.chunk_size = chunk_size
        self.name = ""
        self.label_names = None
        self.stream_info = {}
        self._arrays = None
        self._iterable = None
        if all(hasattr(stream, a) for a in ("X_train", "Y_train", "X_stream", "Y_stream")):
            if X_train is not None or Y_train is not None:
                raise ValueError("the stream carries its training set: do not pass X_train/Y_train")
            X_train, Y_train = stream.X_train, stream.Y_train
            self.name = str(getattr(stream, "name", "") or "")
            names = getattr(stream, "label_names", None)
            self.label_names = None if names is None else tuple(str(n) for n in names)
            info = getattr(stream, "info", None) or {}
            self.stream_info = {
                k: v for k, v in info.items() if isinstance(v, (str, bool, numbers.Number))
            }
            self._arrays = (stream.X_stream, stream.Y_stream)
        elif _is_array_pair(stream):
            self._arrays = tuple(stream)
        elif isinstance(stream, Iterable):
            self._iterable = stream
        else:
            raise TypeError(
                "stream must be a StreamDataset, a pair (X_stream, Y_stream) of 2-D arrays or an "
                f"iterable of (X_chunk, Y_chunk) pairs, got {type(stream).__name__}"
            )
        if X_train is None or Y_train is None:
            raise ValueError("X_train and Y_train are needed with this kind of stream")
        # DataFrames' column names (features, labels) of the training set: the test data's, where
        # it has names too, must be the same, in the same order
        self._names = (string_columns(X_train), string_columns(Y_train))
        if self._iterable is not None:  # an iter_arff stream declares its names up front
            for attr, k in (("feature_names", 0), ("label_names", 1)):
                names = getattr(stream, attr, None)
                if isinstance(names, (list, tuple)):
                    self._check_names(f"the stream's {attr}", list(names), k)
        self.X_train = _as_features(X_train, "X_train")
        self.Y_train = _as_labels(Y_train, "Y_train")
        if len(self.X_train) != len(self.Y_train):
            raise ValueError(f"X_train has {len(self.X_train)} rows, Y_train {len(self.Y_train)}")
        self.n_labels = self.Y_train.shape[1]
        self.scaling = None
        if scale is not None:  # "minmax_on_train": fitted on the labelled set alone
            self.scaling = MinMaxScaling(self.X_train, "X_train")
            self.X_train = self.scaling.transform(self.X_train, "X_train")
        if self.n_labels == 0:
            raise ValueError("Y_train has no label column: there is nothing to evaluate")
        if self._arrays is not None:
            self._check_names("X_stream", string_columns(self._arrays[0]), 0)
            self._check_names("Y_stream", string_columns(self._arrays[1]), 1)
            X, Y = (
                _as_features(self._arrays[0], "X_stream"),
                _as_labels(self._arrays[1], "Y_stream", self.n_labels),
            )
            if len(X) != len(Y):
                raise ValueError(f"X_stream has {len(X)} rows, Y_stream {len(Y)}")
            if X.shape[1] != self.X_train.shape[1]:
                raise ValueError(
                    f"X_stream has {X.shape[1]} features, X_train {self.X_train.shape[1]}"
                )
            if n_test is not None and n_test != len(X):
                raise ValueError(f"n_test={n_test}, but the test stream has {len(X)} rows")
            self._arrays = (X, Y)
            n_test = len(X)
        self.n_test = n_test

    def _check_names(self, what, names, k):
        """Refuse test data whose column names (features k=0, labels k=1) differ from the
        training set's, where both have names."""
        train = self._names[k]
        if names is None or train is None or names == train:
            return
        kind = ("features", "labels")[k]
        raise ValueError(
            f"{what} has the {kind} {show(names)}, but {'XY'[k]}_train has {show(train)}: "
            f"{difference(names, train)}; the test data must have the training set's {kind}, "
            "in the same order"
        )

    def chunks(self):
        """Yield (X_chunk, Y_chunk as bool) pairs of at most ``chunk_size`` rows, in order, the
        features scaled as the training set was."""
        pos = 0
        for X_chunk, Y_chunk in self._raw_chunks():
            if self.scaling is not None:
                X_chunk = self.scaling.transform(X_chunk, "X_stream", first_row=pos)
            pos += len(X_chunk)
            yield X_chunk, Y_chunk

    def _raw_chunks(self):
        size = self.chunk_size
        if self._arrays is not None:
            X, Y = self._arrays
            for lo in range(0, len(X), size):
                yield X[lo : lo + size], Y[lo : lo + size].astype(bool)
            return
        for k, pair in enumerate(self._iterable):
            try:
                Xc, Yc = pair
            except (TypeError, ValueError):
                raise TypeError(f"stream item {k} is not an (X_chunk, Y_chunk) pair") from None
            self._check_names(f"X of stream chunk {k}", string_columns(Xc), 0)
            self._check_names(f"Y of stream chunk {k}", string_columns(Yc), 1)
            Xc = _as_features(Xc, f"X of stream chunk {k}")
            if Xc.shape[1] != self.X_train.shape[1]:
                raise ValueError(
                    f"X of stream chunk {k} has {Xc.shape[1]} features, X_train "
                    f"{self.X_train.shape[1]}"
                )
            Yc = _as_labels(Yc, f"Y of stream chunk {k}", self.n_labels)
            if len(Xc) != len(Yc):
                raise ValueError(f"stream chunk {k}: X has {len(Xc)} rows, Y {len(Yc)}")
            for lo in range(0, len(Xc), size):
                yield Xc[lo : lo + size], Yc[lo : lo + size].astype(bool)


# ------------------------------------------------------------------------------------ methods


def _method_params(method):
    get_params = getattr(method, "get_params", None)
    if get_params is None:
        return {}
    params = get_params()
    return dict(params) if isinstance(params, Mapping) else {}


class _Runner:
    """One method under evaluation: its calls, timing and window counts."""

    def __init__(self, name, method, kind, n_labels, *, edges, window_size, keep_predictions):
        if kind is None:
            kind = getattr(method, "kind", None)
        if kind not in KINDS:
            raise ValueError(
                f"method {name!r}: kind must be one of {sorted(KINDS)}, got {kind!r} (set the "
                "class attribute 'kind' or pass kind=...)"
            )
        for attr in ("fit", KINDS[kind]):
            if not callable(getattr(method, attr, None)):
                raise TypeError(f"method {name!r} of kind {kind!r} has no method {attr}()")
        self.name, self.method, self.kind = name, method, kind
        self.arrivals = False  # predict_stream(X, arrivals=...) (set by learns_labels)
        self.n_labels = n_labels
        self.fit_seconds = 0.0
        self.stream_seconds = 0.0
        self.acc = WindowAccumulator(
            n_labels, edges=edges, window_size=window_size, keep_predictions=keep_predictions
        )

    def fit(self, X_train, Y_train):
        X, Y = np.array(X_train, dtype=np.float64), np.array(Y_train, dtype=np.uint8)
        t = time.perf_counter()
        self.method.fit(X, Y)
        self.fit_seconds = time.perf_counter() - t

    def learns_labels(self):
        """Whether the delayed-label protocol gives this method labels: incremental methods,
        and online ones with ``partial_fit`` (batch methods and the others never get any)."""
        if self.kind == "incremental":
            for attr in ("predict", "partial_fit"):
                if not callable(getattr(self.method, attr, None)):
                    raise TypeError(
                        f"method {self.name!r} of kind 'incremental' has no method {attr}(), "
                        "which the delayed-label protocol (label_fraction) needs"
                    )
            return True
        if self.kind == "online" and callable(getattr(self.method, "partial_fit", None)):
            # mlsom takes a chunk and the labels arriving during it in one call
            self.arrivals = _takes(self.method, "arrivals")
            return True
        return False

    def step_with_labels(self, X_chunk, Y_chunk, plan):
        """The next chunk under the delayed-label protocol: ``plan`` gives its segments, each
        (lo, hi, x, y): predict rows lo:hi, then learn the labels y of the earlier row x (if
        any) before the next segment."""
        n = len(X_chunk)
        if self.kind == "online" and self.arrivals:
            # the whole chunk and its arrivals in one call (mlsom): the same as the loop below
            given = [(hi, x, y) for _, hi, x, y in plan if x is not None]
            X = np.array(X_chunk, dtype=np.float64)
            arrivals = None
            if given:
                arrivals = (
                    np.array([x for _, x, _ in given], dtype=np.float64),
                    np.array([y for _, _, y in given], dtype=np.uint8),
                    np.array([hi for hi, _, _ in given], dtype=np.int64),
                )
            t = time.perf_counter()
            Y_hat = self.method.predict_stream(X, arrivals=arrivals)
            self.stream_seconds += time.perf_counter() - t
            self.acc.add(Y_chunk, self._check_prediction(Y_hat, n))
            return
        Y_hat = np.zeros((n, self.n_labels), dtype=bool)
        predict = self.method.predict_stream if self.kind == "online" else self.method.predict
        for lo, hi, x, y in plan:
            X = np.array(X_chunk[lo:hi], dtype=np.float64)  # the method's own copies
            if x is not None:
                X_lab, Y_lab = np.array(x, dtype=np.float64)[None], y.astype(np.uint8)[None]
            if hi > lo:
                t = time.perf_counter()
                Y_seg = predict(X)
                self.stream_seconds += time.perf_counter() - t
                # checked and copied before any label is learnt: a method that returns a buffer
                # it reuses must not have the labels written into its counted predictions
                Y_hat[lo:hi] = self._check_prediction(Y_seg, hi - lo)
            if x is not None:
                t = time.perf_counter()
                self.method.partial_fit(X_lab, Y_lab)
                self.stream_seconds += time.perf_counter() - t
        self.acc.add(Y_chunk, Y_hat)

    def step(self, X_chunk, Y_chunk):
        """Give the method the next chunk and count its predictions against ``Y_chunk``."""
        X = np.array(X_chunk, dtype=np.float64)  # the method's own copy
        if self.kind == "incremental":
            Y_given = Y_chunk.astype(np.uint8)  # a copy: the method may not alter the truth
            t = time.perf_counter()
            Y_hat = self.method.predict_learn(X, Y_given)
        elif self.kind == "online":  # never a test label
            t = time.perf_counter()
            Y_hat = self.method.predict_stream(X)
        else:  # batch: never a test label, never an update
            t = time.perf_counter()
            Y_hat = self.method.predict(X)
        self.stream_seconds += time.perf_counter() - t
        self.acc.add(Y_chunk, self._check_prediction(Y_hat, len(X)))

    def _check_prediction(self, Y_hat, n):
        what = f"{self.name}.{KINDS[self.kind]}()"
        if hasattr(Y_hat, "toarray") and not isinstance(Y_hat, np.ndarray):
            Y_hat = Y_hat.toarray()
        Y_hat = np.asarray(Y_hat)
        if Y_hat.shape != (n, self.n_labels):
            raise ValueError(f"{what} returned shape {Y_hat.shape}, expected {(n, self.n_labels)}")
        if Y_hat.dtype != bool and not ((Y_hat == 0) | (Y_hat == 1)).all():
            raise ValueError(f"{what} returned values other than 0 and 1")
        return Y_hat.astype(bool)


def _takes(method, argument):
    """Whether the method's predict_stream takes ``argument``: ``arrivals``, labels arriving
    during the chunk (mlsom); ``return_patterns``, its novelty patterns (MINAS-BR)."""
    try:
        return argument in inspect.signature(method.predict_stream).parameters
    except (TypeError, ValueError, AttributeError):
        return False


class _LabelFeed:
    """The delayed-label protocol: which test rows get their labels back, and when.

    Row i of the test stream (counted from 0) is chosen with probability ``fraction``, by a
    generator seeded with ``seed`` that draws one number per row in order (so the choice does
    not depend on the chunks); a chosen row's labels reach the methods right after row
    ``i + delay`` has been predicted (``delay = 0``: right after its own prediction). At most
    ``delay + 1`` rows wait at any time; where the stream's length is known, a row due after
    its end is not kept (its labels would never arrive)."""

    def __init__(self, fraction, delay, seed):
        self.fraction, self.delay, self.seed = fraction, delay, seed
        self.rng = np.random.default_rng(seed)
        self.t = 0  # test rows seen
        self.pending = deque()  # (due, x, y), due increasing
        self.given = 0
        self.n_test = None

    def bound(self, n_test, n_features, itemsize, n_labels):
        """Check that the rows waiting for their labels fit in memory: about fraction x
        (delay + 1) of them, fewer where the stream (n_test rows) ends before they are due."""
        self.n_test = n_test
        waiting = self.delay + 1 if n_test is None else min(self.delay + 1, n_test)
        rows = math.ceil(self.fraction * waiting * 1.1) + 64  # (with room for the draw's spread)
        # a waiting row is a tuple of two arrays (their headers about 110 bytes each) and its
        # due time; its features are those of a stream chunk, float64 at most
        check_allocation(
            "label_delay",
            self.delay,
            rows * (n_features * max(itemsize, 8) + n_labels + 400),
            f"the labelled rows waiting for their labels (label_fraction={self.fraction} of "
            f"{waiting} rows of {n_features} features)",
        )

    def plan(self, X, Y):
        """The segments of the next chunk: (lo, hi, x, y) as _Runner.step_with_labels takes."""
        n, t0 = len(X), self.t
        end = math.inf if self.n_test is None else self.n_test
        for i in np.flatnonzero(self.rng.random(n) < self.fraction):
            if t0 + int(i) + self.delay < end:
                self.pending.append((t0 + int(i) + self.delay, X[i].copy(), Y[i].copy()))
        plan, lo = [], 0
        while self.pending and self.pending[0][0] < t0 + n:
            due, x, y = self.pending.popleft()
            hi = due - t0 + 1
            plan.append((lo, hi, x, y))
            lo = hi
            self.given += 1
        if lo < n:
            plan.append((lo, n, None, None))
        self.t += n
        return plan

    def info(self):
        return {
            "label_fraction": self.fraction,
            "label_delay": self.delay,
            "label_seed": self.seed,
            "labels_given": self.given,
        }


# ------------------------------------------------------------------------------------ runners


def evaluate(
    method,
    stream,
    *,
    n_windows=50,
    window_size=None,
    chunk_size=1000,
    X_train=None,
    Y_train=None,
    n_test=None,
    kind=None,
    name=None,
    stream_name=None,
    seed=None,
    zero_division=1,
    keep_predictions=False,
    label_fraction=None,
    label_delay=0,
    label_seed=0,
    scale=None,
):
    """Evaluate one method on a test stream with the protocol of its kind.

    The method is fitted on the training set and then run over the test stream in chunks; it is
    modified in place (fitted, and updated by online and incremental methods).

    Parameters
    ----------
    method : object
        A method with a ``kind`` of :data:`KINDS` and the calls of that kind
        (``docs/methods.md``); ``get_params()`` is recorded when present.
    stream : StreamDataset, (X_stream, Y_stream) or iterable of (X_chunk, Y_chunk)
        The stream (see the module documentation).
    n_windows : int, default=50
        Number of evaluation windows over the test stream.
    window_size : int, optional
        Windows of this many rows instead, overriding ``n_windows``; needed for an iterable
        stream without ``n_test`` (the counts kept then grow with the stream's windows).
    chunk_size : int, default=1000
        Most rows given to the method at once. Results do not depend on it for methods that
        follow the protocol.
    X_train, Y_train : array-like of shape (n_train, n_features), (n_train, n_labels), optional
        The labelled set, for streams that do not carry it (column names: module documentation).
    n_test : int, optional
        Rows of an iterable test stream, to place ``n_windows`` windows over it.
    kind : {"online", "batch", "incremental"}, optional
        Run the method under this protocol instead of its own ``kind`` (for example an online
        method frozen after ``fit``: ``kind="batch"``).
    name, stream_name : str, optional
        Names of the method and of the stream in the result (default: the method's class name,
        the stream's ``name``).
    seed : int, optional
        Seed recorded for the run (default: the method's ``random_state`` when it is an integer).
    zero_division : {1, 0, "exclude", "mulan"}, default=1
        The 0/0 convention recorded in the result; any other can be asked for later.
    keep_predictions : bool, default=False
        Keep the predictions, bit-packed, in the result.
    label_fraction : float in [0, 1], optional
        The share of the test rows whose true labels come back (labels that arrive, the module
        documentation). None (the default): the protocol of each kind.
    label_delay, label_seed : int, default=0
        Rows predicted between a row's prediction and the arrival of its labels; the seed of the
        choice of the rows that get labels (the same for every method).
    scale : {None, "minmax_on_train"}, default=None
        The features as they are, or scaled with the training set's minimum and range (the
        module documentation; :func:`mlsom.datasets.minmax_scale`'s numbers).

    Returns
    -------
    StreamEvaluation

    Examples
    --------
    >>> from mlsom import SOMStreamClassifier
    >>> from mlsom.datasets import load
    >>> ds = load("MOA-Spher-5C-2A", n_instances=2000)
    >>> res = evaluate(SOMStreamClassifier(grid_size=3, random_state=0), ds, n_windows=10)
    >>> res.curve("macro_f1").shape
    (10,)
    """
    name, kinds, seeds = _one_method(method, name, kind, seed)
    return evaluate_many(
        {name: method},
        stream,
        n_windows=n_windows,
        window_size=window_size,
        chunk_size=chunk_size,
        X_train=X_train,
        Y_train=Y_train,
        n_test=n_test,
        kinds=kinds,
        stream_name=stream_name,
        seeds=seeds,
        zero_division=zero_division,
        keep_predictions=keep_predictions,
        label_fraction=label_fraction,
        label_delay=label_delay,
        label_seed=label_seed,
        scale=scale,
    )[name]


def _one_method(method, name, kind, seed):
    """:func:`evaluate`'s method as :func:`evaluate_many` takes it: its name (checked; default
    its class name), and the ``kinds`` and ``seeds`` mappings of its kind and seed (None where
    not given; the seed checked)."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {name!r}")
    name = name or type(method).__name__
    if seed is not None:
        seed = check_seed("seed", seed)
    kinds = None if kind is None else {name: kind}
    seeds = None if seed is None else {name: seed}
    return name, kinds, seeds


def evaluate_many(
    methods,
    stream,
    *,
    n_windows=50,
    window_size=None,
    chunk_size=1000,
    X_train=None,
    Y_train=None,
    n_test=None,
    kinds=None,
    stream_name=None,
    seeds=None,
    zero_division=1,
    keep_predictions=False,
    label_fraction=None,
    label_delay=0,
    label_seed=0,
    scale=None,
):
    """Evaluate several methods on one test stream, in a single pass over it.

    All methods are fitted first; then every chunk of the stream is given to each method in turn,
    so an iterable stream is read once. Each method gets its own copy of every chunk, and each is
    timed separately.

    Parameters
    ----------
    methods : mapping of str to method, or sequence of methods
        The methods, by name (a sequence is named by class names, with ``-2``, ``-3``, ...
        appended to repeated names). The same object may not appear twice.
    stream : StreamDataset, (X_stream, Y_stream) or iterable of (X_chunk, Y_chunk)
        The stream (see the module documentation).
    n_windows, window_size, chunk_size, n_test, X_train, Y_train, stream_name : optional
        As in :func:`evaluate`.
    zero_division, keep_predictions, scale : optional
        As in :func:`evaluate` (the same for every method).
    kinds : mapping of str to str, optional
        Protocol to use for some methods instead of their ``kind``, by name.
    seeds : mapping of str to int, optional
        Seed recorded for some methods, by name (default: their ``random_state`` when it is an
        integer).
    label_fraction, label_delay, label_seed : optional
        The delayed-label protocol, as in :func:`evaluate`; every method that learns labels
        gets the same ones at the same times.

    Returns
    -------
    results : dict of str to StreamEvaluation
        In the order of ``methods``.
    """
    chunk_size = check_count("chunk_size", chunk_size, low=1)
    zero_division = check_zero_division(zero_division)
    scale = check_scale(scale)
    feed = _label_feed(label_fraction, label_delay, label_seed)
    if n_test is not None:
        n_test = check_count("n_test", n_test, low=1, high=MAX_ROWS)
    methods = _named_methods(methods)
    kinds, seeds = _check_method_mappings(methods, kinds, seeds)

    source = _Source(stream, X_train, Y_train, n_test, chunk_size, scale)
    n_test = source.n_test
    if feed is not None:
        feed.bound(n_test, source.X_train.shape[1], source.X_train.dtype.itemsize, source.n_labels)
    edges, n_windows, window_size = _window_layout(
        n_test, n_windows, window_size, source.n_labels, len(methods)
    )
    runners = [
        _Runner(
            name,
            method,
            kinds.get(name),
            source.n_labels,
            edges=edges,
            window_size=window_size,
            keep_predictions=keep_predictions,
        )
        for name, method in methods.items()
    ]
    learners = _run_methods(runners, source, feed)
    windows = (
        {"n_windows": int(n_windows)} if window_size is None else {"window_size": int(window_size)}
    )
    setting = {"windows": windows, "stream_info": source.stream_info}
    if scale is not None:
        setting["scale"] = scale
    recorded = {
        "stream": stream_name if stream_name is not None else source.name,
        "zero_division": zero_division,
        "label_names": source.label_names,
        "n_train": len(source.X_train),
        "chunk_size": chunk_size,
    }
    return {
        runner.name: _runner_result(
            runner, seeds.get(runner.name), recorded, setting, feed, learners
        )
        for runner in runners
    }


def _check_method_mappings(methods, kinds, seeds):
    """``kinds`` and ``seeds`` of :func:`evaluate_many` as dicts naming only known methods."""
    kinds = _check_mapping("kinds", kinds, "kind")
    seeds = _check_mapping("seeds", seeds, "seed")
    for what, mapping in (("kinds", kinds), ("seeds", seeds)):
        unknown = set(mapping) - set(methods)
        if unknown:
            raise ValueError(f"{what} names unknown methods: {sorted(unknown)}")
    for key, value in seeds.items():
        if value is not None:
            seeds[key] = check_seed(f"seeds[{key!r}]", value)
    return kinds, seeds


def _window_layout(n_test, n_windows, window_size, n_labels, n_methods):
    """(edges, n_windows, window_size), checked: edges None for windows of ``window_size`` rows
    over a stream of unknown length. The counts kept per window are checked before the edges are
    made."""
    if window_size is not None:
        window_size = check_count("window_size", window_size, low=1)
        edges = None
        if n_test is not None:
            check_window_memory(
                "window_size", window_size, -(-n_test // window_size), n_labels, n_methods
            )
            edges = fixed_edges(n_test, window_size)
        return edges, n_windows, window_size
    if n_test is None:
        raise ValueError(
            "an iterable stream needs n_test (to place n_windows windows) or window_size"
        )
    n_windows = check_count("n_windows", n_windows, low=1)
    if n_windows <= n_test:  # else window_edges says that the windows outnumber the rows
        check_window_memory("n_windows", n_windows, n_windows, n_labels, n_methods)
    return window_edges(n_test, n_windows), n_windows, window_size


def _run_methods(runners, source, feed):
    """Fit every method, then give each chunk of the stream to each in turn; return the names of
    the methods that learn the labels that arrive."""
    learners = {r.name for r in runners if feed is not None and r.learns_labels()}
    for runner in runners:
        with _raised_by(runner):
            runner.fit(source.X_train, source.Y_train)
    for X_chunk, Y_chunk in source.chunks():
        plan = feed.plan(X_chunk, Y_chunk) if feed is not None else None
        for runner in runners:
            with _raised_by(runner):
                if runner.name in learners:
                    runner.step_with_labels(X_chunk, Y_chunk, plan)
                else:
                    runner.step(X_chunk, Y_chunk)
    return learners


def _runner_result(runner, seed, recorded, setting, feed, learners):
    """The StreamEvaluation of one method; ``recorded`` holds the fields all methods share,
    ``setting`` what its ``info`` records of the windows, the stream and the scaling."""
    edges, counts, ex, packed = runner.acc.finish()
    params = _method_params(runner.method)
    if seed is None:
        rs = params.get("random_state")
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            seed = int(rs)
    extra = {}
    if feed is not None:
        extra["labels"] = {**feed.info(), "learns_labels": runner.name in learners}
    d = _fitted_grid_size(runner.method)
    if d is not None:
        extra["fitted_grid_size"] = d
    return StreamEvaluation(
        edges,
        counts,
        ex,
        method=runner.name,
        kind=runner.kind,
        params=params,
        seed=seed,
        fit_seconds=runner.fit_seconds,
        stream_seconds=runner.stream_seconds,
        info={
            "class": f"{type(runner.method).__module__}.{type(runner.method).__qualname__}",
            **setting,
            **extra,
        },
        predictions=packed,
        **recorded,
    )


def _fitted_grid_size(method):
    """The grid side d a fitted mlsom model uses (its ``grid_size_``: the choice of
    ``grid_size="auto"``), also inside a wrapper with an ``estimator_`` (mlsom frozen after
    fit); None for a method without one."""
    model = method
    for _ in range(2):
        try:
            d = getattr(model, "grid_size_", None)
            if isinstance(d, numbers.Integral) and not isinstance(d, bool):
                return int(d)
            model = getattr(model, "estimator_", None)
        except (AttributeError, ValueError):  # not fitted, or no such attribute
            return None
    return None


@contextmanager
def _raised_by(runner):
    """Say which method an error came from (a note on it: its type and message stay), with the
    test rows it had been given so far."""
    try:
        yield
    except Exception as exc:
        exc.add_note(
            f"(in method {runner.name!r}, {runner.acc.pos} test rows into the stream, "
            "mlsom.protocol)"
        )
        raise


def _label_feed(fraction, delay, seed):
    """The _LabelFeed of the delayed-label protocol, its arguments checked; None without it
    (the delay and the seed are checked then too: a loop over fractions may keep them)."""
    if fraction is None:
        check_label_protocol(0.0, delay, seed)
        return None
    return _LabelFeed(*check_label_protocol(fraction, delay, seed))


def _check_mapping(name, value, what):
    """A mapping of method names (None for none) as a new dict; TypeError naming ``name``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{name} must be a mapping of method name -> {what}, or None, got "
            f"{describe(value)} ({type(value).__name__})"
        )
    return dict(value)


def _named_methods(methods):
    if isinstance(methods, Mapping):
        check_distinct_text("methods", methods, "names")
        named = {str(k): v for k, v in methods.items()}
    else:
        named, seen = {}, {}
        for m in methods:
            base = type(m).__name__
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base}-{seen[base]}"
            while name in named:  # a class literally named like a numbered one ("A-2")
                seen[base] += 1
                name = f"{base}-{seen[base]}"
            named[name] = m
    if not named:
        raise ValueError("no method to evaluate")
    ids = [id(m) for m in named.values()]
    if len(set(ids)) != len(ids):
        raise ValueError("the same method object appears twice; pass separate instances")
    return named


# ------------------------------------------------------------------------------- novelty streams


def _check_novelty_dataset(dataset):
    for name in ("X_train", "Y_train", "X_stream", "Y_stream", "known_labels"):
        if not hasattr(dataset, name):
            raise TypeError(
                f"dataset must be a novelty stream (mlsom.datasets.load_novelty) with X_train, "
                f"Y_train, X_stream, Y_stream and known_labels, got {describe(dataset)}"
            )
    return [int(c) for c in dataset.known_labels]


def evaluate_novelty_stream(
    method,
    dataset,
    *,
    kind=None,
    fit_labels=None,
    n_windows=50,
    chunk_size=1000,
    association="jaccard",
    associate_with="new",
    zero_division=0,
):
    """Run a method on a novelty stream and evaluate it as MINAS-BR's evaluator does.

    ``online`` and ``batch`` methods are fitted on the labelled set's known labels only (the
    columns ``dataset.known_labels``: a new label is not a column they know) and then classify
    the stream chunk by chunk, never seeing a label; a method whose ``predict_stream`` takes
    ``return_patterns`` (MINAS-BR) also gives its novelty patterns and the rows it left unknown.
    ``incremental`` methods (the supervised upper bounds) are fitted on every column and learn
    every true label after predicting it: they know every label, so their predictions are scored
    with every label known and no pattern (``fit_labels``).

    Parameters
    ----------
    method : estimator
        A method of :mod:`mlsom.baselines`, :class:`mlsom.SOMStreamClassifier` or any object of a
        ``kind`` of :data:`KINDS`.
    dataset : NoveltyDataset
        A stream of :func:`mlsom.datasets.load_novelty`.
    kind : {"online", "batch", "incremental"}, optional
        Run the method under this protocol instead of its own ``kind``.
    fit_labels : {"known", "all"}, optional
        The columns the method is fitted on and predicts: the known labels, or every label of
        the stream (scored then with every label known). Default: "all" for incremental methods,
        "known" for the others. "all" for a reference predictor that is told how many labels the
        stream will have (the every-label predictor then predicts the new labels too).
    n_windows : int, default=50
    chunk_size : int, default=1000
        Rows given to the method at a time.
    association, associate_with, zero_division : optional
        As :func:`mlsom.evaluation.evaluate_novelty`.

    Returns
    -------
    NoveltyEvaluation
    """
    known = _check_novelty_dataset(dataset)
    kind = check_option("kind", getattr(method, "kind", None) if kind is None else kind, KINDS)
    chunk_size = check_count("chunk_size", chunk_size, low=1)
    Y = np.asarray(dataset.Y_stream)
    if fit_labels is None:
        fit_labels = "all" if kind == "incremental" else "known"
    fit_labels = check_option("fit_labels", fit_labels, ("known", "all"))
    cols = list(range(Y.shape[1])) if fit_labels == "all" else known
    unknown = None
    if kind == "online" and _takes(method, "return_patterns"):
        P_all, unknown = _stream_with_patterns(method, dataset, cols, chunk_size)
    else:  # the protocol of the method's kind, its predictions kept
        res = evaluate(method, (dataset.X_stream, Y[:, cols]), X_train=dataset.X_train,
                       Y_train=np.asarray(dataset.Y_train)[:, cols], kind=kind,
                       chunk_size=chunk_size, n_windows=1, keep_predictions=True)  # fmt: skip
        P_all = res.unpacked_predictions()
    return evaluate_novelty(
        Y,
        P_all,
        cols,
        unknown=unknown,
        n_windows=n_windows,
        association=association,
        associate_with=associate_with,
        zero_division=zero_division,
        label_names=[str(n) for n in dataset.label_names],
    )


def _stream_with_patterns(method, dataset, cols, chunk_size):
    """A method with novelty patterns (MINAS-BR) fitted on the ``cols`` and run over the stream
    chunk by chunk: (its known labels then its patterns' votes, every pattern a column; the rows
    it left unknown)."""
    method.fit(dataset.X_train, np.asarray(dataset.Y_train)[:, cols])
    preds, unknown, votes = [], [], []
    for start in range(0, len(dataset.X_stream), chunk_size):
        X_c = np.array(dataset.X_stream[start : start + chunk_size])
        Y_c, unk, P = method.predict_stream(X_c, return_unknown=True, return_patterns=True)
        preds.append(Y_c)
        unknown.append(unk)
        votes.append(P)
    n_p = max(v.shape[1] for v in votes)
    votes = [np.pad(v, ((0, 0), (0, n_p - v.shape[1]))) for v in votes]
    return np.hstack([np.vstack(preds), np.vstack(votes)]), np.concatenate(unknown)
