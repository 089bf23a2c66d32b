"""Evaluation of predictions on a novelty stream, as MINAS-BR's evaluator does
(``docs/protocol.md`` 3.5).

Public through :mod:`mlsom.evaluation`, whose documentation describes the measures.
"""

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._measures import (
    check_01,
    check_zero_division,
    compute_measure,
    confusion_counts,
    example_counts,
)
from ._memory import check_allocation, nbytes_of
from ._results import StreamEvaluation, check_window_tables, from_stored, stored_counts
from ._validation import as_numeric, check_count, check_option, describe
from ._windows import check_window_memory, fixed_edges, window_edges

#: How a novelty pattern is matched with a true label (:func:`evaluate_novelty`).
NOVELTY_ASSOCIATIONS = ("jaccard", "f1", "chi2")

#: Which labels the novelty measures average over (:meth:`NoveltyEvaluation.curve`).
NOVELTY_CONVENTIONS = ("appeared", "known")

#: The format :meth:`NoveltyEvaluation.to_dict` writes.
NOVELTY_FORMAT = "mlsom-novelty-evaluation/1"

#: Measures of :meth:`NoveltyEvaluation.curve`.
NOVELTY_MEASURES = ("f1m", "macro_precision", "macro_recall", "unknown_rate")

# The chi-squared statistic of a 2 x 2 table must exceed the 5 % critical value of the
# chi-squared distribution with one degree of freedom, as in MINAS-BR.
CHI2_CRITICAL = 3.841

# --------------------------------------------------------------------------------------- checks


def _check_01_matrix(name, values, n_rows=None):
    arr = as_numeric(name, values, "0/1 values")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    if n_rows is not None and arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} rows, Y has {n_rows}")
    check_01(name, arr)
    return arr.astype(bool)


def _check_known_labels(known_labels, n_labels, n_columns):
    if isinstance(known_labels, str | bytes) or not np.iterable(known_labels):
        raise TypeError(
            f"known_labels must be a sequence of label columns of Y, got {describe(known_labels)}"
        )
    known = []
    for value in known_labels:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"known_labels must hold integers, got {describe(value)}")
        if not 0 <= value < n_labels:
            raise ValueError(
                f"known_labels holds {int(value)}, outside the {n_labels} label columns of Y"
            )
        if int(value) in known:
            raise ValueError(f"known_labels holds {int(value)} twice")
        known.append(int(value))
    if len(known) > n_columns:
        raise ValueError(
            f"predictions has {n_columns} columns, fewer than the {len(known)} known labels "
            "(its first columns are the known labels, the next ones the novelty patterns)"
        )
    return np.array(known, dtype=np.int64)


def _check_unknown(unknown, n_rows):
    if unknown is None:
        return np.zeros(n_rows, dtype=bool)
    arr = as_numeric("unknown", unknown, "booleans")
    if arr.shape != (n_rows,):
        raise ValueError(f"unknown must have shape ({n_rows},) (one per row of Y), got {arr.shape}")
    if arr.dtype.kind != "b" and arr.size:
        bad = (arr != 0) & (arr != 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"unknown must hold booleans, found {arr[i].item()!r} at row {i}")
    return arr.astype(bool)


def _check_names(name, names, count, default, any_count=False):
    if names is None:
        return tuple(default(k) for k in range(count))
    if isinstance(names, (str, bytes)) or not all(isinstance(v, str) for v in names):
        raise TypeError(f"{name} must be a sequence of strings, got {describe(names)}")
    names = tuple(names)
    if len(names) != count and not any_count:
        raise ValueError(f"{name} holds {len(names)} names for {count} columns")
    return names


def _stored_indices(name, value, low, high, count=None):
    """A list of whole numbers in [low, high) of a stored evaluation (``count`` of them, if
    given) as an int64 array."""
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"{name} must be a list of integers, got {describe(value)}")
    if count is not None and len(value) != count:
        raise ValueError(f"{name} must hold {count} entries, got {len(value)}")
    bad = [v for v in value if not low <= v < high]
    if bad:
        raise ValueError(f"{name} must lie in [{low}, {high}), found {bad[0]}")
    return np.array(value, dtype=np.int64)


def _pattern_starts(P, evaluated, pattern_created):
    """Row from which each pattern exists: its first predicted row on an evaluated row, or the
    row given in ``pattern_created`` (which must not come after that first prediction)."""
    seen = P & evaluated[:, None]
    any_seen = seen.any(axis=0)
    first = np.where(any_seen, np.argmax(seen, axis=0), -1).astype(np.int64)
    if pattern_created is None:
        return first
    created = as_numeric("pattern_created", pattern_created, "row numbers")
    if created.shape != (P.shape[1],):
        raise ValueError(
            f"pattern_created must have shape ({P.shape[1]},) (one row per pattern), got "
            f"{created.shape}"
        )
    if created.dtype.kind not in "iu":
        raise TypeError(f"pattern_created must hold integers, got dtype {created.dtype}")
    bad = (created < 0) | (created >= len(P))
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"pattern_created[{k}] = {created[k].item()} is not a row of the stream "
            f"(0 to {len(P) - 1})"
        )
    late = any_seen & (created > first)
    if late.any():
        k = int(np.argmax(late))
        raise ValueError(
            f"pattern_created[{k}] = {created[k].item()}, but the pattern is predicted at row "
            f"{first[k]} already"
        )
    return created.astype(np.int64)


def _check_associations(associations, n_patterns, n_labels, n_windows):
    if associations is None:
        return None
    arr = as_numeric("associations", associations, "integers")
    if arr.shape != (n_patterns, 2):
        raise ValueError(
            f"associations must have shape ({n_patterns}, 2) (a label and a window per "
            f"pattern), got {arr.shape}"
        )
    if arr.dtype.kind not in "iu":
        raise TypeError(f"associations must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    label, window = arr[:, 0], arr[:, 1]
    for what, values, high in (("label", label, n_labels), ("window", window, n_windows)):
        bad = (values < -1) | (values >= high)
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(
                f"associations[{k}] has the {what} {values[k]}, outside -1 (none) to {high - 1}"
            )
    bad = (label < 0) != (window < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(
            f"associations[{k}] = {arr[k].tolist()}: the label and the window are both -1 "
            "(never associated) or neither"
        )
    return arr


# ---------------------------------------------------------------------------------- association


def association_scores(a, b, c, d, association):
    """Scores of 2 x 2 tables of a pattern against a label (arrays of the same shape).

    ``a``: rows where both the pattern is predicted and the label is true; ``b``: the label
    without the pattern; ``c``: the pattern without the label; ``d``: neither. Jaccard
    a / (a + b + c) and F1 2a / (2a + b + c) are 0 where a = 0; chi-squared is
    n (ad - bc)^2 / ((a + b)(c + d)(a + c)(b + d)) where the pattern and the label go together
    (ad > bc), 0 where they do not or where a margin is 0.

    Examples
    --------
    >>> association_scores([3, 0], [1, 2], [1, 2], [5, 6], "jaccard").tolist()
    [0.6, 0.0]
    """
    association = check_option("association", association, NOVELTY_ASSOCIATIONS)
    cells = []
    for name, values in zip("abcd", (a, b, c, d), strict=True):
        arr = as_numeric(name, values, "counts").astype(np.float64)
        if (arr < 0).any() or np.isnan(arr).any():
            raise ValueError(f"{name} must hold counts >= 0, got {describe(values)}")
        cells.append(arr)
    a, b, c, d = np.broadcast_arrays(*cells)
    if association == "jaccard":
        num, den = a, a + b + c
    elif association == "f1":
        num, den = 2 * a, 2 * a + b + c
    else:
        n = a + b + c + d
        num = n * (a * d - b * c) ** 2
        den = (a + b) * (c + d) * (a + c) * (b + d)
        num = np.where(a * d > b * c, num, 0.0)
    return np.divide(num, den, out=np.zeros(np.shape(num)), where=(den > 0) & (a > 0))


class _Associator:
    """The 2 x 2 tables of every pattern against every candidate label, accumulated window by
    window from the window where both exist, and the associations made from them."""

    def __init__(self, start_window, candidate, appear_window, association, given=None):
        n_patterns, n_labels = len(start_window), len(candidate)
        self.given = given
        check_allocation(
            "predictions",
            (n_patterns, n_labels),
            nbytes_of(n_patterns, n_labels, itemsize=6 * 8),
            f"the tables of {n_patterns} patterns x {n_labels} labels (int64)",
        )
        self.start_window = start_window
        self.candidate = candidate
        self.appear_window = appear_window
        self.association = association
        self.tables = np.zeros((4, n_patterns, n_labels), dtype=np.int64)
        self.label = np.full(n_patterns, -1, dtype=np.int64)
        self.window = np.full(n_patterns, -1, dtype=np.int64)

    def update(self, w, P_w, Y_w):
        """Add the evaluated rows of window ``w`` and associate every pattern not yet
        associated whose best score passes the threshold (or make the given associations of
        window ``w``)."""
        if self.given is not None:
            hit = self.given[:, 1] == w
            self.label[hit], self.window[hit] = self.given[hit, 0], w
            return
        active = (
            (self.start_window[:, None] >= 0)
            & (self.start_window[:, None] <= w)
            & self.candidate[None, :]
            & (self.appear_window[None, :] >= 0)
            & (self.appear_window[None, :] <= w)
        )
        if not active.any():
            return
        a = P_w.T.astype(np.float64) @ Y_w.astype(np.float64)  # exact below 2**53 rows
        a = a.astype(np.int64)
        n_p = P_w.sum(axis=0)[:, None]
        n_y = Y_w.sum(axis=0)[None, :]
        n = len(P_w)
        window = np.stack(np.broadcast_arrays(a, n_y - a, n_p - a, n - n_p - n_y + a))
        self.tables += window * active
        open_ = (self.label < 0) & active.any(axis=1)
        if not open_.any():
            return
        scores = association_scores(*self.tables[:, open_], self.association)
        scores = np.where(active[open_], scores, 0.0)
        best = np.argmax(scores, axis=1)  # the first label on a tie
        top = scores[np.arange(len(best)), best]
        threshold = CHI2_CRITICAL if self.association == "chi2" else 0.0
        found = np.flatnonzero(open_)[top > threshold]
        self.label[found] = best[top > threshold]
        self.window[found] = w


# ----------------------------------------------------------------------------------- evaluation


def _first_rows(M):
    """Per column, the first row holding a 1, or -1."""
    has = M.any(axis=0)
    return np.where(has, np.argmax(M, axis=0), -1).astype(np.int64)


def _window_of(rows, edges):
    return np.where(rows >= 0, np.searchsorted(edges, rows, side="right") - 1, -1)


def _edges(n_rows, n_windows, window_size, n_labels):
    if window_size is None:
        edges = window_edges(n_rows, n_windows)
        check_window_memory("n_windows", n_windows, len(edges) - 1, n_labels)
        return edges
    window_size = check_count("window_size", window_size, low=1)
    check_window_memory("window_size", window_size, -(-n_rows // window_size), n_labels)
    return fixed_edges(n_rows, window_size)


def _run_windows(Y, P, known, evaluated, edges, associator):
    """Window by window: associate patterns, map the predictions, count over evaluated rows."""
    n_rows, n_labels = Y.shape
    P_known, P_pat = P[:, : len(known)], P[:, len(known) :]
    mapped = np.zeros((n_rows, n_labels), dtype=bool)
    W = len(edges) - 1
    label_counts = np.zeros((W, n_labels, 4), dtype=np.int64)
    ex_counts = []
    for w in range(W):
        rows = np.arange(edges[w], edges[w + 1])[evaluated[edges[w] : edges[w + 1]]]
        Y_w, Pp_w = Y[rows], P_pat[rows]
        associator.update(w, Pp_w, Y_w)
        onto = np.zeros((P_pat.shape[1], n_labels))
        done = np.flatnonzero(associator.label >= 0)
        onto[done, associator.label[done]] = 1.0
        mapped_w = (Pp_w.astype(np.float64) @ onto) > 0
        mapped_w[:, known] |= P_known[rows]
        mapped[rows] = mapped_w
        label_counts[w] = confusion_counts(Y_w, mapped_w)
        ex_counts.append(example_counts(Y_w, mapped_w))
    return mapped, label_counts, ex_counts


def evaluate_novelty(
    Y,
    predictions,
    known_labels,
    *,
    unknown=None,
    n_windows=50,
    window_size=None,
    association="jaccard",
    associate_with="new",
    pattern_created=None,
    associations=None,
    zero_division=0,
    label_names=None,
    pattern_names=None,
):
    """Evaluate predictions on a novelty stream as MINAS-BR's evaluator does.

    At the end of each window, every novelty pattern not yet associated is associated with the
    true label it matches best (``association``), over the 2 x 2 tables of the pattern against
    each label accumulated from the window where both exist; from then on its predictions count
    as predictions of that label. Rows left unknown are left out of every count. See
    ``docs/protocol.md`` 3.5.

    Parameters
    ----------
    Y : array-like of shape (n_test, n_labels)
        True 0/1 labels of the test stream, every label (known and new).
    predictions : array-like of shape (n_test, n_known + n_patterns)
        Predicted 0/1 labels: first the known labels, in the order of ``known_labels``, then
        one column per novelty pattern.
    known_labels : sequence of int
        The columns of ``Y`` that the model knows from its labelled set; the other columns are
        the new labels.
    unknown : array-like of shape (n_test,) of bool, optional
        Rows the model left unknown (default: none).
    n_windows : int, default=50
        Number of windows (``window_edges(n_test, n_windows)``).
    window_size : int, optional
        Windows of this many rows instead (the last one may be shorter).
    association : {"jaccard", "f1", "chi2"}, default="jaccard"
        The score of a pattern against a label (:func:`association_scores`); a pattern is
        associated when its best score is above 0 (above 3.841 for ``"chi2"``).
    associate_with : {"new", "all"}, default="new"
        The labels a pattern can be associated with: the new ones (MINAS-BR), or every label
        (a pattern associated with a known label is then mapped onto it, and counted false).
    pattern_created : array-like of shape (n_patterns,) of int, optional
        Row at which each pattern was created (default: its first predicted row).
    associations : array-like of shape (n_patterns, 2) of int, optional
        Associations given instead of computed: per pattern, the column of Y it stands for and
        the window at whose end it starts to (-1, -1: never).
    zero_division : {0, 1, "exclude", "mulan"}, default=0
        The 0/0 convention of the macro precision and recall (0: MINAS-BR's).
    label_names, pattern_names : sequence of str, optional
        Names of the columns of ``Y`` and of the patterns (default: "0", "1", ...; "NP1", ...).

    Returns
    -------
    NoveltyEvaluation

    Examples
    --------
    >>> Y = [[1, 0], [1, 0], [0, 1], [0, 1]]
    >>> P = [[1, 0], [1, 0], [0, 1], [0, 1]]      # label 0, then pattern NP1
    >>> res = evaluate_novelty(Y, P, known_labels=[0], n_windows=2)
    >>> res.pattern_label.tolist(), res.curve("f1m").tolist()
    ([1], [1.0, 1.0])
    """
    Y = _check_01_matrix("Y", Y)
    n_rows, n_labels = Y.shape
    check_count("the number of rows of Y", n_rows, low=1)
    P = _check_01_matrix("predictions", predictions, n_rows)
    known = _check_known_labels(known_labels, n_labels, P.shape[1])
    n_patterns = P.shape[1] - len(known)
    options = {
        "association": check_option("association", association, NOVELTY_ASSOCIATIONS),
        "associate_with": check_option("associate_with", associate_with, ("new", "all")),
        "zero_division": check_zero_division(zero_division),
        "label_names": _check_names("label_names", label_names, n_labels, str),
        "pattern_names": _check_names(
            "pattern_names", pattern_names, n_patterns, lambda k: f"NP{k + 1}"
        ),
    }
    unknown = _check_unknown(unknown, n_rows)
    edges = _edges(n_rows, n_windows, window_size, n_labels)
    given = _check_associations(associations, n_patterns, n_labels, len(edges) - 1)
    starts = _pattern_starts(P[:, len(known) :], ~unknown, pattern_created)
    return _evaluate(Y, P, known, unknown, edges, starts, given, options)


def _evaluate(Y, P, known, unknown, edges, starts, given, options):
    n_labels = Y.shape[1]
    is_known = np.zeros(n_labels, dtype=bool)
    is_known[known] = True
    first_row = _first_rows(Y)
    exists = np.where(is_known, 0, _window_of(first_row, edges))  # known labels: from the start
    candidate = ~is_known if options["associate_with"] == "new" else np.ones(n_labels, bool)
    associator = _Associator(
        _window_of(starts, edges), candidate, exists, options["association"], given
    )
    mapped, label_counts, ex_counts = _run_windows(Y, P, known, ~unknown, edges, associator)
    return NoveltyEvaluation(
        window_edges=edges,
        label_counts=label_counts,
        example_counts=ex_counts,
        unknown_counts=np.add.reduceat(unknown.astype(np.int64), edges[:-1]),
        known_labels=known,
        label_first_row=first_row,
        pattern_start_row=starts,
        pattern_label=associator.label,
        pattern_window=associator.window,
        mapped_predictions=mapped,
        unknown=unknown,
        **options,
    )


# ---------------------------------------------------------------------------------------- result


@dataclass(eq=False, repr=False)
class NoveltyEvaluation:
    """Evaluation of predictions on a novelty stream (made by :func:`evaluate_novelty`).

    Attributes
    ----------
    window_edges : ndarray of shape (n_windows + 1,), int64
        Window w is rows ``window_edges[w]:window_edges[w + 1]`` of the test stream.
    label_counts : ndarray of shape (n_windows, n_labels, 4), int64
        Per window, each true label's TP, FP, FN, TN over the rows not left unknown, with the
        patterns mapped onto their labels (patterns not yet associated predict nothing).
    example_counts : list of ndarray of shape (n_distinct_w, 4), int64
        Per window, the example counts of the same rows (:func:`example_counts`).
    unknown_counts : ndarray of shape (n_windows,), int64
        Rows left unknown in each window.
    known_labels : ndarray of int64
        The columns of Y the model knows (the first columns of the predictions).
    label_first_row : ndarray of shape (n_labels,), int64
        Each label's first true row (-1: it never occurs).
    pattern_start_row : ndarray of shape (n_patterns,), int64
        The row from which each pattern exists (-1: never predicted on an evaluated row).
    pattern_label : ndarray of shape (n_patterns,), int64
        The label each pattern is associated with (-1: none).
    pattern_window : ndarray of shape (n_patterns,), int64
        The window at whose end it was associated (-1: never).
    association, associate_with : str
        How patterns were associated.
    zero_division : {0, 1, "exclude", "mulan"}
        The 0/0 convention used when none is asked for.
    label_names, pattern_names : tuple of str
    mapped_predictions : ndarray of shape (n_test, n_labels), bool
        The predictions as true labels, with each row mapped by the associations made by the
        end of its window; rows left unknown predict nothing.
    unknown : ndarray of shape (n_test,), bool
        The rows left unknown.
    """

    # pickles and the documentation name the class by its public module
    __module__ = "mlsom.evaluation"

    window_edges: np.ndarray
    label_counts: np.ndarray
    example_counts: list
    unknown_counts: np.ndarray
    known_labels: np.ndarray
    label_first_row: np.ndarray
    pattern_start_row: np.ndarray
    pattern_label: np.ndarray
    pattern_window: np.ndarray
    association: str = "jaccard"
    associate_with: str = "new"
    zero_division: object = 0
    label_names: tuple = ()
    pattern_names: tuple = ()
    mapped_predictions: np.ndarray = None
    unknown: np.ndarray = None

    def __repr__(self):
        return (
            f"NoveltyEvaluation(n_test={self.n_test}, n_windows={self.n_windows}, "
            f"n_labels={self.n_labels}, known_labels={self.known_labels.tolist()}, "
            f"n_patterns={self.n_patterns}, association={self.association!r})"
        )

    @property
    def n_windows(self):
        return len(self.window_edges) - 1

    @property
    def n_test(self):
        return int(self.window_edges[-1])

    @property
    def n_labels(self):
        return self.label_counts.shape[1]

    @property
    def n_patterns(self):
        return len(self.pattern_label)

    @property
    def new_labels(self):
        """The columns of Y the model does not know (ndarray of int64)."""
        return np.setdiff1d(np.arange(self.n_labels), self.known_labels)

    @property
    def detection_window(self):
        """Per label, the first window at whose end a pattern was associated with it (-1:
        never, and for the known labels), ndarray of shape (n_labels,)."""
        never = self.n_windows
        out = np.full(self.n_labels, never, dtype=np.int64)
        done = self.pattern_label >= 0
        np.minimum.at(out, self.pattern_label[done], self.pattern_window[done])
        out[out == never] = -1
        out[self.known_labels] = -1
        return out

    @property
    def time_to_detect(self):
        """Per label, the instances from its first true row to the end of the window where a
        pattern was associated with it (NaN: a known label, or a new one never detected or
        never occurring), ndarray of shape (n_labels,)."""
        w = self.detection_window
        found = (w >= 0) & (self.label_first_row >= 0)
        end = self.window_edges[np.where(found, w, 0) + 1]
        return np.where(found, end - self.label_first_row, np.nan)

    @property
    def false_patterns(self):
        """The patterns never associated, or associated with a known label (ndarray of their
        indices)."""
        is_known = np.isin(self.pattern_label, self.known_labels)
        return np.flatnonzero((self.pattern_label < 0) | is_known)

    def counted_labels(self, convention="appeared"):
        """Which labels the novelty measures average over, per window.

        ``"appeared"``: the known labels and every new label from the window of its first true
        row on (a new label never found costs its recall). ``"known"``: the labels the model
        knows: the known labels and each new label from the window where a pattern is first
        associated with it on. Returns a bool array of shape (n_windows, n_labels).
        """
        check_option("convention", convention, NOVELTY_CONVENTIONS)
        if convention == "appeared":
            since = np.searchsorted(self.window_edges, self.label_first_row, side="right") - 1
            since = np.where(self.label_first_row >= 0, since, self.n_windows)
        else:
            since = np.where(self.detection_window >= 0, self.detection_window, self.n_windows)
        since[self.known_labels] = 0
        return np.arange(self.n_windows)[:, None] >= since[None, :]

    def curve(self, measure="f1m", convention="appeared", cumulative=True, zero_division=None):
        """A novelty measure, window by window.

        Parameters
        ----------
        measure : {"f1m", "macro_precision", "macro_recall", "unknown_rate"}, default="f1m"
            ``"f1m"``: 2 PrM ReM / (PrM + ReM), the F of the macro precision PrM and macro
            recall ReM over the counted labels (0 where both are 0); ``"unknown_rate"``: the
            fraction of rows left unknown.
        convention : {"appeared", "known"}, default="appeared"
            The labels counted (:meth:`counted_labels`).
        cumulative : bool, default=True
            Counts from the start of the stream to the end of each window (MINAS-BR's), or
            each window on its own.
        zero_division : {0, 1, "exclude", "mulan"}, optional
            Default: the recorded one.

        Returns
        -------
        values : ndarray of shape (n_windows,)
            NaN where nothing is left to average.
        """
        check_option("measure", measure, NOVELTY_MEASURES)
        if measure == "unknown_rate":
            unknown, sizes = self.unknown_counts, np.diff(self.window_edges)
            if cumulative:
                unknown, sizes = np.cumsum(unknown), np.cumsum(sizes)
            return unknown / sizes
        zd = check_zero_division(self.zero_division if zero_division is None else zero_division)
        counted = self.counted_labels(convention)
        counts = np.cumsum(self.label_counts, axis=0) if cumulative else self.label_counts
        out = np.empty(self.n_windows)
        for w in range(self.n_windows):
            sel = counts[w][counted[w]]
            pr = compute_measure("macro_precision", sel, zero_division=zd)
            re = compute_measure("macro_recall", sel, zero_division=zd)
            out[w] = {"macro_precision": pr, "macro_recall": re}.get(measure, _f_of(pr, re))
        return out

    def mean(self, measure="f1m", convention="appeared", cumulative=True, zero_division=None):
        """The mean over the windows of :meth:`curve` (MINAS-BR's summary)."""
        return float(np.mean(self.curve(measure, convention, cumulative, zero_division)))

    def stream_evaluation(self, zero_division=1, **metadata):
        """The package's usual measures of the mapped predictions, as a
        :class:`StreamEvaluation` over the rows not left unknown, every true label counted.

        Its window w holds the rows of window w not left unknown; a window whose every row was
        left unknown is left out (``info["novelty_windows"]`` lists the windows kept).
        ``metadata`` goes to :class:`StreamEvaluation`.
        """
        sizes = np.diff(self.window_edges) - self.unknown_counts
        kept = np.flatnonzero(sizes > 0)
        if not len(kept):
            raise ValueError("every row was left unknown: no row to evaluate")
        info = dict(metadata.pop("info", {}))
        info["novelty_windows"] = kept.tolist()
        metadata.setdefault("label_names", self.label_names)
        return StreamEvaluation(
            np.concatenate([[0], np.cumsum(sizes[kept])]),
            self.label_counts[kept],
            [self.example_counts[w] for w in kept],
            zero_division=zero_division,
            info=info,
            **metadata,
        )

    # ---------------------------------------------------------------------------- persistence

    def to_dict(self):
        """A JSON-serialisable dict of the evaluation (see :meth:`from_dict`): everything but
        the per-row arrays ``mapped_predictions`` and ``unknown``, which are not kept."""
        return {
            "format": NOVELTY_FORMAT,
            "window_edges": self.window_edges.tolist(),
            "label_counts": self.label_counts.tolist(),
            "example_counts": [e.tolist() for e in self.example_counts],
            "unknown_counts": self.unknown_counts.tolist(),
            "known_labels": self.known_labels.tolist(),
            "label_first_row": self.label_first_row.tolist(),
            "pattern_start_row": self.pattern_start_row.tolist(),
            "pattern_label": self.pattern_label.tolist(),
            "pattern_window": self.pattern_window.tolist(),
            "association": self.association,
            "associate_with": self.associate_with,
            "zero_division": self.zero_division,
            "label_names": list(self.label_names),
            "pattern_names": list(self.pattern_names),
        }

    @classmethod
    def from_dict(cls, data):
        """Rebuild an evaluation from :meth:`to_dict`'s output (without the per-row arrays).

        Every field is checked before use: the counts are whole numbers in [0, 2**53] with the
        shapes the windows, ``label_names`` and ``pattern_names`` give, and agree with each other
        (every label's TP + FP + FN + TN and the example counts add up to the rows of the window
        not left unknown); the rows, labels, patterns and windows named lie within the stream;
        the options are the ones :func:`evaluate_novelty` takes.

        Raises
        ------
        TypeError, ValueError
            When ``data`` is no valid stored evaluation; the message names the field.
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a dict (the output of to_dict), got {describe(data)}")
        if data.get("format") != NOVELTY_FORMAT:
            raise ValueError(
                f"unsupported novelty evaluation format {describe(data.get('format'))} "
                f"(expected {NOVELTY_FORMAT!r})"
            )
        return from_stored("NoveltyEvaluation", data, cls._STORED, cls._from_fields)

    _STORED = (
        "window_edges", "label_counts", "example_counts", "unknown_counts", "known_labels",
        "label_first_row", "pattern_start_row", "pattern_label", "pattern_window",
        "association", "associate_with", "zero_division", "label_names", "pattern_names",
    )  # fmt: skip

    @classmethod
    def _from_fields(cls, data):
        for name in ("label_names", "pattern_names"):
            if not isinstance(data[name], list):
                raise TypeError(f"{name} must be a list of strings, got {describe(data[name])}")
        labels = _check_names("label_names", data["label_names"], -1, str, any_count=True)
        patterns = _check_names("pattern_names", data["pattern_names"], -1, str, any_count=True)
        L, P = len(labels), len(patterns)
        edges = stored_counts("window_edges", data["window_edges"])
        if edges.ndim != 1 or edges.size < 2 or edges[0] != 0 or (np.diff(edges) <= 0).any():
            raise ValueError("window_edges must be increasing row offsets from 0")
        W, n_test = edges.size - 1, int(edges[-1])
        counts = stored_counts("label_counts", data["label_counts"])
        if counts.size == 0:
            counts = counts.reshape(W, L, 4) if W * L == 0 else counts
        if counts.shape != (W, L, 4):
            raise ValueError(f"label_counts must have shape ({W}, {L}, 4), got {counts.shape}")
        unknown = stored_counts("unknown_counts", data["unknown_counts"])
        if unknown.shape != (W,) or (unknown > np.diff(edges)).any():
            raise ValueError(f"unknown_counts must be {W} counts, each within its window")
        ex = data["example_counts"]
        if not isinstance(ex, list) or len(ex) != W:
            raise ValueError(f"example_counts must be a list of {W} tables")
        ex = [stored_counts(f"example_counts[{w}]", e) for w, e in enumerate(ex)]
        ex = [e.reshape(0, 4) if e.size == 0 else e for e in ex]
        if any(e.ndim != 2 or e.shape[1] != 4 for e in ex):
            raise ValueError("each table of example_counts must have shape (n_rows, 4)")
        evaluated = np.concatenate([[0], np.cumsum(np.diff(edges) - unknown)])
        check_window_tables(evaluated, counts, ex)
        known = _stored_indices("known_labels", data["known_labels"], 0, L)
        if (np.diff(known) <= 0).any():
            raise ValueError("known_labels must be increasing")
        label = _stored_indices("pattern_label", data["pattern_label"], -1, L, P)
        window = _stored_indices("pattern_window", data["pattern_window"], -1, W, P)
        if ((label < 0) != (window < 0)).any():
            raise ValueError("a pattern has a label without a window, or a window without one")
        return cls(
            window_edges=edges,
            label_counts=counts,
            example_counts=ex,
            unknown_counts=unknown,
            known_labels=known,
            label_first_row=_stored_indices(
                "label_first_row", data["label_first_row"], -1, n_test, L
            ),
            pattern_start_row=_stored_indices(
                "pattern_start_row", data["pattern_start_row"], -1, n_test, P
            ),
            pattern_label=label,
            pattern_window=window,
            association=check_option("association", data["association"], NOVELTY_ASSOCIATIONS),
            associate_with=check_option("associate_with", data["associate_with"], ("new", "all")),
            zero_division=check_zero_division(data["zero_division"]),
            label_names=labels,
            pattern_names=patterns,
        )

    def summary(self, zero_division=None):
        """The main numbers as a dict: mean F1M in both conventions, the unknown rate over the
        stream, the patterns and the false ones, each new label's time to detect (None:
        never)."""
        ttd = self.time_to_detect
        return {
            "f1m": {
                c: self.mean("f1m", c, zero_division=zero_division) for c in NOVELTY_CONVENTIONS
            },
            "unknown_rate": float(self.unknown_counts.sum() / self.n_test),
            "n_patterns": self.n_patterns,
            "n_false_patterns": len(self.false_patterns),
            "time_to_detect": {
                self.label_names[j]: None if np.isnan(ttd[j]) else int(ttd[j])
                for j in self.new_labels
            },
        }


def _f_of(precision, recall):
    """2 P R / (P + R); 0 where both are 0, NaN where either is."""
    if np.isnan(precision) or np.isnan(recall):
        return float("nan")
    total = precision + recall
    return 2 * precision * recall / total if total > 0 else 0.0
