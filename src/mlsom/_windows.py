"""Evaluation windows over a test stream and the accumulation of counts window by window
(``docs/protocol.md`` 3.3).

Public through :mod:`mlsom.evaluation`.
"""

import numpy as np

from ._measures import confusion_counts, example_counts, merge_example_counts
from ._memory import check_allocation, nbytes_of
from ._validation import MAX_ROWS, check_count

# Windows: floor(w n / W) is computed exactly in int64 as w q + floor(w r / W) (n = q W + r), which
# needs (W + 1) r < 2**63; at most 2**31 windows keeps it so for every n.
_MAX_WINDOWS = 2**31
# Bytes kept per window and per label by the runners (label counts while accumulating, then
# stacked), and per window for the window's objects and its example counts.
_WINDOW_BYTES_PER_LABEL = 64
_WINDOW_BYTES = 700


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
    n_test = check_count("n_test", n_test, low=1, high=MAX_ROWS)
    n_windows = check_count("n_windows", n_windows, low=1)
    if n_windows > n_test:
        raise ValueError(f"n_windows={n_windows} is larger than the test stream ({n_test} rows)")
    n_windows = check_count("n_windows", n_windows, low=1, high=_MAX_WINDOWS)
    check_allocation(
        "n_windows",
        n_windows,
        nbytes_of(n_windows + 1, itemsize=4 * 8),
        "the window edges (int64, with three temporaries)",
    )
    w = np.arange(n_windows + 1, dtype=np.int64)
    if n_test <= MAX_ROWS // n_windows:  # w * n_test fits in int64
        return (w * n_test) // n_windows
    # floor(w n / W) = w q + floor(w r / W) with n = q W + r: no product exceeds int64
    q, r = divmod(n_test, n_windows)
    return w * q + (w * r) // n_windows


def fixed_edges(n_test, window_size):
    """Edges of windows of ``window_size`` rows; the last one may be shorter."""
    n_test = check_count("n_test", n_test, low=1, high=MAX_ROWS)
    n_windows = -(-n_test // window_size)
    check_allocation(
        ("n_test", "window_size"),
        (n_test, window_size),
        nbytes_of(n_windows + 1, itemsize=2 * 8),
        f"the edges of the {n_windows} windows of a {n_test}-row test stream (int64)",
    )
    edges = np.arange(0, n_test, window_size, dtype=np.int64)
    return np.append(edges, np.int64(n_test))


def check_window_memory(name, value, n_windows, n_labels, n_methods=1):
    """Refuse a window layout whose per-window counts cannot be kept in memory."""
    per_window = _WINDOW_BYTES + _WINDOW_BYTES_PER_LABEL * n_labels
    check_allocation(
        name,
        value,
        nbytes_of(n_windows, n_methods, per_window),
        f"the counts of {n_windows} windows x {n_labels} labels"
        + (f" of {n_methods} methods" if n_methods > 1 else ""),
    )


class WindowAccumulator:
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
            edges = fixed_edges(self.pos, self.window_size)
        counts = np.stack(self.label_counts).astype(np.int64)
        packed = None
        if self._packed is not None:
            width = (self.n_labels + 7) // 8
            packed = (
                np.concatenate(self._packed) if self._packed else np.zeros((0, width), np.uint8)
            )
        return edges, counts, list(self.example_counts), packed
