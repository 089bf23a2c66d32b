"""SOM-Stream-ML: the estimator (Python layer over the compiled core)."""

import copy
import json
import math
import numbers
import os
import threading
import warnings

import numpy as np
from numpy.typing import ArrayLike

from . import _core, _detection, _model_file, _names, _persistence, _schema, _sklearn
from ._base import ParamsMixin
from ._grid import grid_distances, grid_positions, initial_radius
from ._memory import check_allocation
from ._method import (
    ACCEPTANCE_BAND,
    ACCEPTANCE_GAIN,
    ACCEPTANCE_SMOOTHING,
    CORRECTIONS,
    DRIFT_GATE,
    NOVELTY_MAX_LABELS,
    NOVELTY_RMS_FACTOR,
    PERSISTENCE,
    STALE_FACTOR,
    VARIANTS,
)
from ._validation import (
    LABEL_DTYPES,
    as_array,
    as_numeric,
    check_features,
    check_float,
    check_int,
    check_labels,
    check_option,
    check_partial_labels,
    check_training_set,
    describe,
    effective_n_threads,
    feature_names,
    value_limit,
)
from .evaluation import confusion_counts, macro_f1
from .exceptions import ConvergenceWarning

__all__ = ["SOMStreamClassifier"]


# Below this many distance terms (rows x neurons x features) a call runs on one thread: starting
# and joining OpenMP threads costs more than it saves, and far more on a machine whose cores are
# busy with other work. Results never depend on the thread count.
_PARALLEL_MIN_WORK = 4_000_000


_ZERO_RULES = frozenset({"reject", "skip"})

# The method's constants (VARIANTS, the robust variant's gains and bands, the windows of what
# labels teach, the values of corrections and label_persistence) live in _method.py.


# The largest grid side accepted (memory is checked against the machine as well: see fit).
_MAX_GRID_SIZE = 1000
# Bounds of the integer parameters that have no bound of their own (min_neuron_size, n_jobs;
# random_state), so that every value fit accepts is saved and loaded exactly.
_MAX_INT64 = 2**63 - 1
_MAX_SEED = 2**128 - 1

# grid_size="auto": the candidates (the paper's range of d) and the folds of the labelled set
# each candidate is scored on (docs/method.md, "Choosing d from the labelled set").
AUTO_GRID_SIZES = tuple(range(1, 11))
_AUTO_FOLDS = 5


def _check_fit_memory(d, X, L):
    """``fit``'s memory check, before any work: the maps of grid side ``d`` (None: the largest
    that grid_size="auto" tries; its folds fit on fewer rows) on the checked X, and the label
    statistics of L labels."""
    n, A = X.shape
    if d is None:
        top = max(AUTO_GRID_SIZES)
        need = fit_nbytes(top, n, A, L, X.itemsize)
        what = f"{L} maps of up to {top} x {top} neurons on {A} features"
        check_allocation("grid_size", "auto", need, f"{what} (grid distances, training sums)")
    else:
        need = fit_nbytes(d, n, A, L, X.itemsize)
        what = f"{L} maps of {d} x {d} neurons on {A} features"
        check_allocation("grid_size", d, need, f"{what} (grid distances, training sums)")
    # label counts T and, in every later call, the L x L conditional log-probabilities
    check_allocation("Y", f"{n} x {L}", 24 * L * L, f"the label statistics of {L} labels")


def fit_nbytes(grid_size, n_samples, n_features, n_labels, itemsize=8):
    """Bytes ``fit`` needs for maps of ``grid_size`` (its memory check's estimate): the grid
    distances and the training's neighbour lists (M0^2 each, with the temporaries of
    grid_distances), the training's sums per unit and the maps themselves."""
    m0 = grid_size * grid_size
    return 40 * m0 * m0 + m0 * n_features * (32 + 2 * n_labels * itemsize) + 16 * n_samples


def _threads_for(work, n_threads):
    return n_threads if work >= _PARALLEL_MIN_WORK else 1


def _add_robust_state(state, Yi, center, limit):
    """Add the robust variant's members to the state of a fit on labels ``Yi``: the acceptance
    control, each label's acceptance, and the drift gate's training means and limits."""
    n = Yi.shape[0]
    T = state["T"]
    state["variant"] = "robust"
    # the core's ctl: the acceptance offset theta, its gain, its target z0, the recent
    # predicted cardinality (z0 to begin with), its smoothing, the dead band
    z0 = float(int(Yi.sum())) / n
    state["ctl"] = np.array([0.0, ACCEPTANCE_GAIN, z0, z0, ACCEPTANCE_SMOOTHING, ACCEPTANCE_BAND])
    # each label's own offset (0), its recent predicted rate and its training rate
    _schema.ensure(state, "acceptance")
    rate = np.diag(T).astype(np.float64) / n
    state["label_acceptance"][1:] = rate
    # the drift gate: the recent means start at the training means
    _schema.ensure(state, "drift")
    state["drift_mean"][...] = center
    state["drift_center"][...] = center
    state["drift_limit"][...] = limit


class _ReadWriteLock:
    """Many readers (``predict``, fitted attributes, ``save``) or one writer (``fit``,
    ``predict_stream``, ``partial_fit``) at a time. A waiting writer goes before readers that
    come after it, so that readers in a loop never starve a stream. Not reentrant: code holding
    the lock never takes it again."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    def acquire_read(self):
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1

    def release_read(self):
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self):
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            except BaseException:  # interrupted: the readers it held back may go
                self._writers_waiting -= 1
                self._cond.notify_all()
                raise
            self._writers_waiting -= 1
            self._writer = True

    def release_write(self):
        with self._cond:
            self._writer = False
            self._cond.notify_all()


class SOMStreamClassifier(ParamsMixin):
    """Multi-label stream classifier with one self-organizing map per label (SOM-Stream-ML).

    Trained once on a small labelled set, it then classifies an unlabelled, possibly drifting
    stream one instance at a time and adapts itself from its own predictions: labels never need to
    arrive ("infinitely delayed labels").

    Offline (``fit``): one hexagonal ``grid_size`` x ``grid_size`` batch SOM per label, trained on
    the instances of that label; neurons with fewer than ``min_neuron_size`` instances are dropped;
    label counts ``T``, probabilities ``P`` and the label cardinality ``z`` are recorded.

    Online (``predict_stream``): for each instance, the labels are ranked by repeated k-nearest-
    neuron votes over the pooled neurons; the first is predicted, the next ``ceil(z) - 1`` are
    accepted by a Bayes rule against per-neuron thresholds; then the best-matching neuron of every
    predicted label moves towards the instance, and ``z``, ``T``, ``P`` and the neurons' average
    outputs are updated.

    Parameters
    ----------
    grid_size : int or "auto", default=5
        Side d of every map (d x d neurons). The paper picks d per stream from 1 to 10, by
        looking at the test stream. "auto" chooses d from the labelled set alone: each d of
        :data:`AUTO_GRID_SIZES` (1 to 10) is scored by the mean macro F of its online phase over
        five folds of the training set (random, from ``random_state``; each fold in the set's
        order, the model fitted on the other four); the best (the smallest on a tie) is fitted
        on the whole set. The choice is in ``grid_size_``, the scores in ``grid_scores_``. It
        costs 50 fits on four fifths of the set, each followed by the online phase over the last
        fifth, then the final fit.
    learning_rate : float, default=0.05
        Online learning rate eta of the winning neurons, in (0, 1].
    correction_rate : float, default=0.5
        How far, in (0, 1], a labelled instance given to ``partial_fit`` pulls the best-matching
        neuron of a true label the model did not predict (a miss). Unused without labels.
    corrections : {"tested", "strong"}, default="tested"
        How ``partial_fit`` corrects a wrong prediction. "strong": a miss moves the neuron by
        ``correction_rate`` and a false alarm moves it onto the label's last labelled positive,
        always. "tested" (docs/method.md, "A paired test of the corrections"): each correction
        keeps where the other choice (a miss: ``learning_rate``; a false alarm: staying) would
        have put the neuron, the next labelled instances that neuron wins are classified again
        with it there, and the strong corrections run only while they win that paired test
        over the model's last 200 discordant pairs by two standard deviations; otherwise a miss
        moves by ``learning_rate`` and a false alarm moves nothing. It guards streams on which
        labels overlap from corrections that hurt (``correction_pairs_``). Unused without
        labels.
    label_persistence : {"tested", "off"}, default="tested"
        Whether the labels of an instance that arrive before the next instance is classified
        (prompt labels: test-then-train) may be given to that next instance, as the no-change
        classifier does (docs/method.md, "Labels that persist"). "tested": each prompt label
        also scores the proposal its own instance had against the model's prediction (each
        one's F1 over the known labels), and the proposal is given instead of the
        model's prediction while it wins those discordant pairs, over the last 200, by two
        standard deviations (``persistence_pairs_``). The maps learn from the model's own
        prediction either way. "off": never. Labels that come later than that never count.
    n_epochs : int, default=100
        Batch epochs over which the neighbourhood radius shrinks linearly to zero.
    max_epochs : int, default=1000
        Cap on the total number of batch epochs, the winner-only epochs that run after the
        schedule until no assignment changes included. Must be >= ``n_epochs``.
    min_neuron_size : int, default=4
        Neurons with fewer mapped training instances are discarded (the most populated neuron of a
        map is always kept).
    neighborhood : {"bubble", "gaussian"}, default="bubble"
        Neighbourhood function of the batch training. "bubble" averages the instances mapped within
        the radius, as the paper describes; "gaussian" weights them by exp(-g^2 / 2r^2).
    averout_distance : {"euclidean", "sqeuclidean"}, default="euclidean"
        Distance inside the neuron output exp(-distance), offline and online.
    zero_cooccurrence : {"reject", "skip"}, default="reject"
        What a zero conditional probability P[d, c] does to the score of candidate label c:
        "reject" multiplies it in (labels never seen together are never predicted together, as the
        paper's Algorithm 1); "skip" leaves the factor out, like the threshold does.
    variant : {"paper", "robust"}, default="paper"
        "paper" is the paper's method. "robust" (beyond the paper; docs/method.md, "The robust
        variant") changes three things. At ``fit`` it drops the neurons that the end of the
        training set no longer reaches: it reads the set's order as time order and removes a
        neuron when its label's last ``STALE_FACTOR`` (20) x n_j / n_b training rows never
        mapped to it (n_j the label's rows, n_b the neuron's), the neuron reached last staying
        if all would go; ``k_nn_`` follows from the maps that remain (in a set in random order
        this drops a neuron with probability about exp(-20)). Online, it calibrates the
        acceptance of extra labels: the Bayes test's threshold gets an offset theta
        (``acceptance_offset_``, 0 after ``fit``), which after each instance of
        ``predict_stream`` moves by ``ACCEPTANCE_GAIN`` (0.01) x (labels predicted - z0), z0
        the training set's cardinality, while the recent predicted cardinality is more than
        ``ACCEPTANCE_BAND`` (10 %) away from z0, and unless the move could not change a
        decision; each label's own offset (``label_acceptance_offsets_``, 0 after ``fit``) is
        added to theta for its test, and moves the same way by ``ACCEPTANCE_GAIN`` x (1 if the
        label was predicted else 0, minus its training rate) while its recent predicted rate
        (smoothing ``ACCEPTANCE_SMOOTHING``, 0.005) is more than ``LABEL_ACCEPTANCE_BAND``
        (30 %) of its training rate away from it; a label accepted only thanks to a negative
        offset is predicted but not learnt from. ``predict`` uses the current offsets. And
        once the running mean of the instances a label learns from online (rate
        ``DRIFT_SMOOTHING``, 0.002) is farther from its training rows' mean than
        ``DRIFT_GATE`` (0.7) times their root mean squared distance from it, the label's
        drift gate opens for good (``moving_maps_``): its whole map follows, the winner's grid
        neighbours moving too, by eta exp(-g^2 / (2 sigma^2)), sigma = ``DRIFT_SIGMA`` (0.2)
        x d.
    novelty : bool, default=False
        Novelty detection (beyond the paper; docs/method.md, "New labels"): the online phase
        finds labels that the labelled set never showed. An instance within no neuron's radius
        (the largest distance of a training row the neuron won) is left unknown (predicted
        with no label; ``return_unknown``), leaves the model as it is and is remembered; groups
        of such instances become new labels (a column each, after the labels of ``fit``, named
        ``NP1``, ``NP2``, ...: ``new_labels_``, ``label_names_``) or extend a label's map. Off,
        the model is exactly the paper's method (its state holds no novelty group). It shapes
        the model at ``fit`` (the neurons' radii): switched on after ``fit``, it takes effect at
        the next ``fit``; switched off after, detection pauses until it is on again.
    novelty_radius : float, default=1.0
        With novelty detection, the factor on every neuron's radius (0.01 to 100): an instance
        farther than ``novelty_radius`` times the radius from every neuron is unknown, and the
        extension rule reads the radii so scaled. Larger tolerates more drift of the known
        labels (on a drifting stream, fewer unknown instances and spurious new labels, a
        faster stream) and finds a new label that appears close to known ones later or not at
        all; docs/method.md, "New labels", has the measured trade-off. Takes effect at the next
        call.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the choice of the initial neurons (an int: 0 to 2**128 - 1, a full NumPy seed).
    n_jobs : int or None, default=None
        Threads for batch training and ``predict`` (None: all cores; -1 all, -2 all but one),
        capped at the cores the process may use (CPU affinity, cgroup quota): no value starts
        more threads than that. ``predict_stream`` is sequential by nature. Results never depend
        on it.

    Changing a parameter after ``fit`` (``set_params``): ``learning_rate``,
    ``correction_rate``, ``zero_cooccurrence``, ``novelty_radius`` and ``n_jobs`` take effect at
    the next call; the
    others shape the maps and take effect at the next ``fit``. Either way a model saved and
    loaded again behaves as the one in memory (the file records the grid size and averOut
    distance the maps were fitted with), and an invalid value is refused by the next call that
    uses it and by ``save``.

    Attributes
    ----------
    weights_ : list of (m_j, n_features) ndarray or None
        Weight vectors of the kept neurons of each label's map; None for a label absent from the
        training set.
    neuron_counts_ : list of (m_j,) int64 ndarray or None
        n_b, the number of instances mapped to each kept neuron (training, then the stream).
    averout_ : list of (m_j,) ndarray or None
        averOut_b, the average output exp(-distance) of each kept neuron.
    log_averout_ : list of (m_j,) ndarray or None
        Its logarithm, which the model keeps (averOut underflows for distances above ~745).
    grid_positions_ : list of (m_j, 2) int64 ndarray or None
        (row, column) of each kept neuron on its map.
    T_ : (n_labels, n_labels) int64 ndarray
        Label counts (diagonal) and co-occurrence counts.
    P_ : (n_labels, n_labels) ndarray
        P[j, j] = T[j, j] / N, P[j, k] = T[j, k] / T[k, k] (0 where T[k, k] = 0).
    n_seen_ : int
        N, the instances seen (training set, then stream).
    cardinality_ : float
        z, the label cardinality of the training set and of the predictions since.
    k_nn_ : int
        Neighbours of the winner-class vote: the size of the smallest map, made odd.
    n_features_in_, n_labels_ : int
        With novelty detection, ``n_labels_`` counts the new labels too (retired ones
        included: a column is never taken back).
    new_labels_ : tuple of NewLabel
        The labels novelty detection made (``novelty=True``), in column order: each one's name
        (``NP1``, ...), column, the instance it was made at, the unexplained instances it was
        made from, the instances it explains (its count, those included), its last use,
        whether it was retired, and the caller's label column that named it (``partial_fit``)
        or None. Empty without novelty detection.
    label_names_ : list of int or str
        Each column's name: its index for a label of ``fit``, the caller's label column for a
        label that labels named or made, ``NPk`` for a new one no label named (the keys of
        ``predict_one`` in the River adapter).
    feature_names_in_ : ndarray of str
        The column names of a DataFrame given to ``fit`` (only when all are strings; unique and
        not empty, else ``fit`` refuses them). A later DataFrame must have exactly these
        columns in this order, and a dict given to ``predict_one`` exactly these keys; anything
        else is refused, showing both (docs/sklearn.md, "Feature names").
    n_iter_ : list of int or None
        Batch epochs run for each map.
    grid_size_ : int
        The side d the maps were fitted with (``grid_size``, or the choice of "auto").
    variant_ : str
        The variant the maps were fitted with ("paper" or "robust").
    acceptance_offset_ : float or None
        The robust variant's offset theta of the Bayes test (log scale; positive: fewer extra
        labels); None for the paper's.
    label_acceptance_offsets_ : ndarray of shape (n_labels,) or None
        The robust variant's offset of each label's Bayes test, added to
        ``acceptance_offset_`` (log scale; positive: the label is accepted less often); it
        brings each label's predicted rate back towards its training set's. None for the
        paper's variant, and for a robust model saved before labels had offsets of their own.
    moving_maps_ : ndarray of bool of shape (n_labels,) or None
        The robust variant's drift gate: True for the labels whose map moves as a whole in the
        online phase, because the instances they were predicted for moved away from their
        training rows (docs/method.md); None for the paper's variant, and for a robust model
        saved before the gate existed.
    label_offsets_ : ndarray of shape (n_labels,)
        Each label's acceptance offset learnt from labelled instances (``partial_fit``): its
        Bayes test accepts it when the test's margin is at least this (0: the paper's test;
        all 0 until labels arrive).
    guards_ : list of ndarray or None
        Each label's guards (docs/method.md, "Guards"): labelled instances without the label
        that the label's Bayes test would have accepted and no guard stopped, one
        (n_guards, n_features) array per label (at most as many rows as its map has neurons;
        once full, the nearest moves towards each new one by ``learning_rate``), None for a
        label without a map. None until labels arrive (``partial_fit``).
    supports_ : list of ndarray or None
        Each label's supports: labelled instances with the label that one of its guards
        stopped, as ``guards_``. A guard stops the label only where the instance is nearer it
        than the label's best-matching neuron and every support.
    guards_on_ : ndarray of bool of shape (n_labels,) or None
        Whether each label's decisions use its guards: chosen with its acceptance offset, when
        its best F1 over its remembered labelled entries is strictly higher with them than
        without. None until labels arrive.
    labelled_cardinality_ : float or None
        The running mean of the number of labels of the fully labelled instances given to
        ``partial_fit``; the ranking ranks at least its ceiling. None until one arrives.
    correction_pairs_ : tuple (int, int) or None
        With ``corrections="tested"``: of the model's last (at most 200) discordant pairs of
        its paired test, how many the strong correction won, and how many there are; the
        strong corrections run while wins - losses >= 2 sqrt(pairs), with 10 pairs at least.
        None until a labelled update made with ``corrections="tested"``.
    persistence_pairs_ : tuple (int, int) or None
        Of the last (at most 200) discordant pairs of label persistence's test, how many the
        proposal (the labels of the instance before) won, and how many there are; the proposal
        is given while wins - losses >= 2 sqrt(pairs), with 10 pairs at least. None until a
        labelled update.
    grid_scores_ : dict of int to float or None
        With ``grid_size="auto"``: each candidate d's mean macro F over the folds; else None.

    Every fitted attribute is read under the model's reader lock and returned as a new object
    (never a view of the live state): while another thread runs ``predict_stream``,
    ``partial_fit`` or ``fit``, it is the model between two of those calls, never half of one.

    Examples
    --------
    >>> import numpy as np
    >>> from mlsom import SOMStreamClassifier
    >>> rng = np.random.default_rng(0)
    >>> centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    >>> labels = rng.integers(0, 3, size=400)
    >>> X = centers[labels] + rng.normal(size=(400, 2))
    >>> Y = np.eye(3, dtype=np.uint8)[labels]
    >>> model = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:100], Y[:100])
    >>> Y_hat = model.predict_stream(X[100:])
    >>> Y_hat.shape
    (300, 3)
    >>> bool((Y_hat.argmax(axis=1) == labels[100:]).mean() > 0.8)
    True
    """

    #: interface of the evaluation protocol (docs/methods.md): unsupervised online
    kind = "online"

    def __init__(
        self,
        grid_size=5,
        *,
        learning_rate=0.05,
        correction_rate=0.5,
        corrections="tested",
        label_persistence="tested",
        n_epochs=100,
        max_epochs=1000,
        min_neuron_size=4,
        neighborhood="bubble",
        averout_distance="euclidean",
        zero_cooccurrence="reject",
        variant="paper",
        novelty=False,
        novelty_radius=1.0,
        random_state=None,
        n_jobs=None,
    ):
        self.grid_size = grid_size
        self.learning_rate = learning_rate
        self.correction_rate = correction_rate
        self.corrections = corrections
        self.label_persistence = label_persistence
        self.n_epochs = n_epochs
        self.max_epochs = max_epochs
        self.min_neuron_size = min_neuron_size
        self.neighborhood = neighborhood
        self.averout_distance = averout_distance
        self.zero_cooccurrence = zero_cooccurrence
        self.variant = variant
        self.novelty = novelty
        self.novelty_radius = novelty_radius
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._lock = _ReadWriteLock()

    # ------------------------------------------------------------------ scikit-learn conventions
    # (spoken without importing scikit-learn: see _sklearn.py)

    _estimator_type = "classifier"  # is_classifier of scikit-learn < 1.6

    def __sklearn_tags__(self):
        return _sklearn.sklearn_tags()

    def _more_tags(self):  # scikit-learn < 1.6
        return _sklearn.legacy_tags()

    def _get_tags(self):  # scikit-learn < 1.6
        return _sklearn.legacy_tags()

    def __sklearn_is_fitted__(self):
        return getattr(self, "_state", None) is not None

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight=None) -> float:
        """Subset accuracy of frozen :meth:`predict` on ``(X, y)``: the share of rows whose
        whole label set is right (scikit-learn's classifier score). The model does not adapt.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels)
            The true 0/1 label sets (named ``y`` as scikit-learn calls it).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the rows.

        Returns
        -------
        float
        """
        Y_hat = self.predict(X)
        Y = check_labels("y", y, Y_hat.shape[0], require_positive=False)
        if Y.shape[1] != Y_hat.shape[1]:
            raise ValueError(f"y has {Y.shape[1]} labels, but the model has {Y_hat.shape[1]}")
        right = (Y == Y_hat).all(axis=1)
        if sample_weight is None:
            return float(right.mean()) if right.size else 0.0
        w = as_numeric("sample_weight", sample_weight)
        if w.shape != right.shape:
            raise ValueError(
                f"sample_weight must be {right.shape[0]} real numbers, got shape {w.shape}"
            )
        w = w.astype(np.float64)
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
            raise ValueError("sample_weight must be finite, non-negative and not all zero")
        # scaled by the largest first: finite weights whose sum overflows still average
        return float(np.average(right, weights=w / w.max()))

    def __getstate__(self):
        """The model's state for pickle and copy: a copy of it, taken as a reader (as ``save``
        does), so that a stream adapting the model in another thread cannot change it half way;
        the copies are also what ``copy.copy`` gets, so a copy never shares the neurons that its
        original's stream moves. The cached copies of the neurons are left out (rebuilt when
        needed)."""
        lock = self.__dict__.get("_lock")
        if lock is not None:
            lock.acquire_read()
        try:
            state = self.__dict__.copy()
            state.pop("_lock", None)
            st = state.get("_state")
            if st is not None:
                st = dict(st)  # one step: a reader may add a cached copy meanwhile
                kept = _pickled()
                state["_state"] = copy.deepcopy({k: v for k, v in st.items() if k in kept})
            return state
        finally:
            if lock is not None:
                lock.release_read()

    def __setstate__(self, state):
        st = state.get("_state")
        if st is not None:  # a pickle of an earlier mlsom: the fields it did not keep
            st.setdefault("grid_size", state.get("grid_size"))
            st.setdefault("labels_dtype", np.dtype(np.uint8))
            st.setdefault("grid_scores", None)
            st.pop("learning_rate", None)  # read from the parameters at every call now
            st.pop("skip_zero", None)
        self.__dict__.update(state)
        self._lock = _ReadWriteLock()

    def _validate_params(self):
        """The checked parameters (d, eta, n_epochs, max_epochs); d is None for "auto"."""
        if isinstance(self.grid_size, str) and self.grid_size == "auto":
            d = None
        else:
            try:
                d = check_int("grid_size", self.grid_size, low=1, high=_MAX_GRID_SIZE)
            except TypeError:  # a string other than "auto" included
                raise TypeError(
                    f"grid_size must be an integer or 'auto', got {describe(self.grid_size)} "
                    f"({type(self.grid_size).__name__})"
                ) from None
        eta = check_float("learning_rate", self.learning_rate, low=0.0, high=1.0, low_open=True)
        self._correction_rate()
        self._corrections()
        self._label_persistence()
        n_epochs = check_int("n_epochs", self.n_epochs, low=1, high=10**7)
        max_epochs = check_int("max_epochs", self.max_epochs, low=1, high=10**7)
        if max_epochs < n_epochs:
            raise ValueError(
                f"max_epochs must be >= n_epochs, got max_epochs={max_epochs}, n_epochs={n_epochs}"
            )
        # the integers without a natural bound are bounded all the same, so that a model file
        # holds them exactly (a count never exceeds int64; 128 bits are a full NumPy seed)
        check_int("min_neuron_size", self.min_neuron_size, low=1, high=_MAX_INT64)
        rs = self.random_state
        if not (rs is None or isinstance(rs, np.random.Generator)):
            if isinstance(rs, bool) or not isinstance(rs, numbers.Integral):
                raise TypeError(
                    f"random_state must be None, a non-negative integer or a "
                    f"numpy.random.Generator, got {rs!r} ({type(rs).__name__})"
                )
            if rs < 0:
                raise ValueError(f"random_state must be non-negative, got {rs}")
            if rs > _MAX_SEED:
                raise ValueError(f"random_state must be < 2**128, got {describe(rs)}")
        check_option("neighborhood", self.neighborhood, {"bubble", "gaussian"})
        check_option("averout_distance", self.averout_distance, {"euclidean", "sqeuclidean"})
        check_option("zero_cooccurrence", self.zero_cooccurrence, _ZERO_RULES)
        check_option("variant", self.variant, set(VARIANTS))
        self._novelty()
        self._novelty_radius()
        if self.n_jobs is not None:
            check_int("n_jobs", self.n_jobs, low=-_MAX_INT64, high=_MAX_INT64)
        effective_n_threads(self.n_jobs)
        return d, eta, n_epochs, max_epochs

    # ------------------------------------------------------------------ offline phase

    def fit(self, X: ArrayLike, Y: ArrayLike) -> "SOMStreamClassifier":
        """Offline phase: train one map per label on a labelled set and record label statistics.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training instances. float32 input gives a float32 model (weights, distances and
            later inputs in float32: half the memory, about twice the speed); anything else is
            converted to float64.
        Y : array-like of shape (n_samples, n_labels)
            Their label sets as a 0/1 matrix. A label with no positive gets no map and is never
            predicted; rows with no label count in N and z only. Predictions come back in Y's
            dtype (bool, integer or float; uint8 for anything else), as scikit-learn expects.

        Returns
        -------
        self
        """
        d, _, n_epochs, max_epochs = self._validate_params()
        n_threads = effective_n_threads(self.n_jobs)
        X, Y, names, labels_dtype = check_training_set(X, Y, n_threads)
        _check_fit_memory(d, X, Y.shape[1])
        scores = None
        if d is None:
            d, scores = self._choose_grid_size(X, Y, n_epochs, max_epochs, n_threads)
        state = self._fit_maps(X, Y, d, n_epochs, max_epochs, n_threads, warn=True)
        state.update(feature_names=names, labels_dtype=labels_dtype, grid_scores=scores)
        self._lock.acquire_write()
        try:
            self._state = state
        finally:
            self._lock.release_write()
        return self

    def _choose_grid_size(self, X, Y, n_epochs, max_epochs, n_threads):
        """grid_size="auto": score every d of AUTO_GRID_SIZES on the labelled set alone, by the
        online phase (predict_stream) over each of _AUTO_FOLDS folds, the maps fitted on the
        rest; returns the best d (the smallest on a tie) and every d's mean score.

        The folds are the consecutive fifths of a seeded permutation of the rows (a labelled set
        need not be in stream order: one sorted by label would leave a fold with one label), each
        given to the online phase in the set's order; a fold is scored by its macro F with 0/0
        counted as 1 (a fold whose rest has no positive at all is left out, for every d). The
        permutation and every candidate fit use the estimator's seed (a Generator gives one draw
        for all of them), so the result depends on the seed as a plain fit does."""
        n = X.shape[0]
        if n < 2:
            raise ValueError(
                f"grid_size='auto' scores each grid size on part of the training set held out: "
                f"it needs at least 2 instances, got n_samples = {n}"
            )
        seed = self.random_state
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**63))
        k = min(_AUTO_FOLDS, n)
        edges = [n * i // k for i in range(k + 1)]
        perm = np.random.default_rng(seed).permutation(n)
        params = {**self.get_params(), "random_state": seed}
        fold_f = {d: [] for d in AUTO_GRID_SIZES}
        for i in range(k):  # each fold split once, for every candidate
            held = np.zeros(n, dtype=bool)
            held[perm[edges[i] : edges[i + 1]]] = True
            X_fit, Y_fit, X_held, Y_held = X[~held], Y[~held], X[held], Y[held]
            if not Y_fit.any():
                # every positive of the set is in this fold: nothing to fit a map on, for any d
                # (another fold holds them for fitting, as each row is held out once)
                continue
            for d in AUTO_GRID_SIZES:
                cand = type(self)(**{**params, "grid_size": d})
                st = cand._fit_maps(X_fit, Y_fit, d, n_epochs, max_epochs, n_threads)
                st["grid_scores"] = None
                cand._state = st
                P = cand._stream(st, X_held, cand._online_settings(), {})
                fold_f[d].append(macro_f1(confusion_counts(Y_held, P), zero_division=1))
        scores = {d: float(np.mean(f)) for d, f in fold_f.items()}
        best = max(scores.values())
        return min(d for d, v in scores.items() if v == best), scores

    def _train_map(self, Xj, rng, M0, G, r0, n_epochs, max_epochs, n_threads):
        """One label's map trained on its rows ``Xj``: the weights (A, M0), each row's winner
        and squared distance to it, the epochs run and whether the map settled."""
        nj, A = Xj.shape
        # [D] initial neurons: d*d distinct random rows, with replacement when too few
        init = rng.choice(nj, size=M0, replace=nj < M0)
        Wt = np.ascontiguousarray(Xj[init].T)
        bmu = np.empty(nj, dtype=np.int64)
        bmu_d2 = np.empty(nj, dtype=np.float64)
        epochs, converged = _core.train_map(
            Xj,
            Wt,
            G,
            r0,
            n_epochs,
            max_epochs,
            self.neighborhood == "gaussian",
            bmu,
            bmu_d2,
            _threads_for(nj * M0 * A, n_threads),
        )
        return Wt, bmu, bmu_d2, epochs, converged

    def _fit_maps(self, X, Y, d, n_epochs, max_epochs, n_threads, warn=False):
        """The offline phase on checked X (n, A) and Y (n, L) with grid side d: the state, but
        for feature_names, labels_dtype and grid_scores, which the caller adds."""
        n, A = X.shape
        L = Y.shape[1]
        rng = np.random.default_rng(self.random_state)
        squared = self.averout_distance == "sqeuclidean"
        robust = self.variant == "robust"
        Yi = Y.astype(np.int64)
        T = np.ascontiguousarray(Yi.T @ Yi)

        cols, ncls, counts, log_averout, pos, radius, n_iter = [], [], [], [], [], [], []
        offsets = np.zeros(L + 1, dtype=np.int64)
        if robust:  # the drift gate's training means and limits (0 for a label without a map)
            center = np.zeros((L, A), dtype=np.float64)
            limit = np.zeros(L, dtype=np.float64)
        not_converged = []
        for j in range(L):
            if T[j, j] == 0:
                n_iter.append(None)
                offsets[j + 1] = offsets[j]
                continue
            rows = Y[:, j] == 1
            Xj = X if rows.all() else np.ascontiguousarray(X[rows])  # no copy when all rows
            mp = self._label_map(Xj, rng, d, n_epochs, max_epochs, n_threads)
            if not mp["converged"]:
                not_converged.append(j)
            n_iter.append(mp["epochs"])
            if robust:
                center[j], limit[j] = mp["drift"]
            cols.append(mp["Wt"])
            ncls.append(np.full(mp["counts"].size, j, dtype=np.int32))
            counts.append(mp["counts"])
            log_averout.append(mp["log_averout"])
            pos.append(mp["positions"])
            radius.append(mp["radius"])
            offsets[j + 1] = offsets[j] + mp["counts"].size
        if not_converged and warn:
            warnings.warn(
                f"the maps of labels {not_converged} did not settle within max_epochs="
                f"{max_epochs} epochs; their assignments were still changing",
                ConvergenceWarning,
                stacklevel=2,
            )
        sizes = np.diff(offsets)
        k = int(sizes[sizes > 0].min())
        if k % 2 == 0:
            k -= 1
        state = {
            "Wt": np.ascontiguousarray(np.concatenate(cols, axis=1)),
            "ncls": np.ascontiguousarray(np.concatenate(ncls)),
            "offsets": offsets,
            "counts": np.ascontiguousarray(np.concatenate(counts)),
            "log_averout": np.ascontiguousarray(np.concatenate(log_averout)),
            "positions": np.concatenate(pos),
            "T": T,
            "NS": np.array([n, int(Yi.sum())], dtype=np.int64),
            "k_nn": max(1, k),
            "n_iter": n_iter,
            "n_features": A,
            "n_labels": L,
            "feature_names": None,  # the caller's (the order of the keys is the pickle's)
            "grid_size": d,
            "squared": squared,
            "labels_dtype": np.dtype(np.uint8),
        }
        if robust:  # absent: the paper's (the state, pickles and files of the paper's variant
            _add_robust_state(state, Yi, center, limit)  # stay what they were before variants)
        if self.novelty:  # absent without novelty detection, likewise
            _schema.ensure(state, "novelty")
            state["radius"][...] = np.concatenate(radius)
            state["frozen"][...] = state["Wt"]
        return state

    def _label_map(self, Xj, rng, d, n_epochs, max_epochs, n_threads):
        """One label's map fitted on its rows Xj on a d x d grid (the offline phase's steps 3-5):
        its kept neurons' weights (A, m), counts, log averOut, grid positions and radii (the
        largest distance of a row they won), the epochs run, whether it settled, and the robust
        variant's drift gate (training mean, limit)."""
        M0 = d * d
        Wt, bmu, bmu_d2, epochs, converged = self._train_map(
            Xj, rng, M0, grid_distances(d), initial_radius(d), n_epochs, max_epochs, n_threads
        )
        cnt = np.bincount(bmu, minlength=M0)
        keep = cnt >= int(self.min_neuron_size)  # (checked: an integer)
        if not keep.any():  # [D] never leave a map empty
            keep[np.argmax(cnt)] = True
        robust = self.variant == "robust"
        if robust:
            keep = _fresh_units(bmu, cnt, keep)
        dist = bmu_d2 if self.averout_distance == "sqeuclidean" else np.sqrt(bmu_d2)
        # log averOut_b = log(mean over X_b of exp(-dist)), a log-mean-exp (<= 0), with the C
        # library's exp and log (the same bits on every machine)
        la = np.full(M0, -np.inf)
        _core.log_mean_exp(dist, bmu, cnt, la)
        # each neuron's radius (novelty detection): the largest distance of a row it won, and at
        # least NOVELTY_RMS_FACTOR times their root mean square distance (in many dimensions a
        # neuron fitted on a few rows is nearer them than to the next rows of its label); 0 for
        # a unit the end of the rows no longer reaches (the robust variant drops it; the paper's
        # keeps it in the map, explaining nothing: its label has left that place)
        far = np.zeros(M0)
        np.maximum.at(far, bmu, np.sqrt(bmu_d2))
        rms = np.sqrt(np.bincount(bmu, weights=bmu_d2, minlength=M0) / np.maximum(cnt, 1))
        far = np.maximum(far, NOVELTY_RMS_FACTOR * rms)
        far[~(keep if robust else _fresh_units(bmu, cnt, keep))] = 0.0
        kept = np.flatnonzero(keep)
        return {
            "Wt": Wt[:, kept],
            "counts": cnt[kept].astype(np.int64),
            "log_averout": la[kept],
            "positions": grid_positions(d)[kept],
            "radius": far[kept],
            "epochs": int(epochs),
            "converged": converged,
            "drift": _drift_limit(Xj) if robust else None,
        }

    # ------------------------------------------------------------------ online phase

    def _online_settings(self):
        """The parameters read at every call (they take effect at once, in memory and in a saved
        file alike): the online learning rate and the zero co-occurrence rule (novelty_radius,
        read where it is used, is checked here too: before any change)."""
        eta = check_float("learning_rate", self.learning_rate, low=0.0, high=1.0, low_open=True)
        rule = check_option("zero_cooccurrence", self.zero_cooccurrence, _ZERO_RULES)
        self._novelty_radius()
        return eta, rule == "skip"

    def _correction_rate(self):
        """correction_rate, checked at every labelled call (it acts at once)."""
        return check_float(
            "correction_rate", self.correction_rate, low=0.0, high=1.0, low_open=True
        )

    def _corrections(self):
        """corrections, checked at every labelled call (it acts at once)."""
        return check_option("corrections", self.corrections, set(CORRECTIONS))

    def _label_persistence(self):
        """label_persistence, checked at every call that learns or may use it (it acts at once)."""
        return check_option("label_persistence", self.label_persistence, set(PERSISTENCE))

    def _novelty(self):
        """novelty, checked: True or False."""
        if not isinstance(self.novelty, (bool, np.bool_)):
            raise TypeError(f"novelty must be True or False, got {describe(self.novelty)}")
        return bool(self.novelty)

    def _novelty_radius(self):
        """novelty_radius, checked: a float, 0.01 to 100."""
        return check_float("novelty_radius", self.novelty_radius, low=0.01, high=100.0)

    def _detects(self, st):
        """Whether the online phase detects new labels: novelty on, in a model fitted with it
        (novelty shapes the model at fit: switched on after, it takes effect at the next fit)."""
        return self._novelty() and "radius" in st

    def _fitted_state(self):
        state = getattr(self, "_state", None)
        if state is None:
            raise _sklearn.not_fitted(
                f"this {type(self).__name__} is not fitted yet; call fit(X, Y) first"
            )
        return state

    # Copies of the neurons kept with the state, made when first needed (pickles leave them out):
    # "screen", the float32 screening copy (Ws, ww, centre), which predict_stream keeps in step
    # with the weights; "rows", the neurons one per row (M, A) for predict's exact distances,
    # which predict_stream drops, as it moves neurons.
    _COPIES = {
        "screen": _core.screening_copy,
        "rows": lambda Wt: np.ascontiguousarray(Wt.T),
    }

    @classmethod
    def _copy(cls, st, key):
        out = st.get(key)
        if out is None:
            out = st[key] = cls._COPIES[key](st["Wt"])
        return out

    def predict_stream(
        self,
        X: ArrayLike,
        *,
        arrivals=None,
        return_unknown: bool = False,
        return_patterns: bool = False,
    ):
        """Online phase: classify the rows of X in order, adapting the model after each one.

        Calling it on consecutive chunks of a stream gives the same predictions and the same final
        model as one call on the whole stream. No label is needed, ever.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next instances of the stream, in arrival order.
        arrivals : tuple (X_labelled, Y_labelled, after), optional
            Labels that arrive while X is classified: row k of ``X_labelled`` with its labels
            ``Y_labelled[k]`` (1, 0 or -1, as for :meth:`partial_fit`) is learnt once ``after[k]``
            rows of X have been classified (0: before the first; ``after`` non-decreasing, at
            most n_samples). The same as ``predict_stream`` on the pieces of X and
            ``partial_fit`` of each labelled row in between, in one call (with novelty
            detection, ``Y_labelled``'s columns are the caller's, as ``partial_fit`` takes
            them).
        return_unknown : bool, default=False
            Also return which rows were left unknown (``novelty=True``; else none).
        return_patterns : bool, default=False
            Return the labels of ``fit`` and the new labels apart (as MINAS-BR's novelty
            patterns): ``Y`` then holds the labels of ``fit`` only.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels), dtype uint8
            The predicted label sets, 0/1, over the model's labels after the call (``n_labels_``:
            with novelty detection, new labels add columns on the right, 0 for the rows
            classified before they were made; a row left unknown is all 0).
        unknown : ndarray of bool of shape (n_samples,)
            With ``return_unknown``.
        patterns : ndarray of shape (n_samples, n_new_labels)
            With ``return_patterns``: the predictions of the new labels (the columns of Y after
            those of ``fit``).
        """
        st = self._fitted_state()
        for name, flag in (
            ("return_unknown", return_unknown),
            ("return_patterns", return_patterns),
        ):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {describe(flag)}")
        X = _check_stream_X(st, X)
        online = self._online_settings()
        if self._detects(st):
            if arrivals is None:
                Y, unknown = self._stream_novel(st, X, online)
            else:
                Y, unknown = self._stream_novel_arrivals(st, X, online, arrivals)
        else:
            extra = {} if arrivals is None else self._arrivals(st, arrivals, X.shape[0], X.dtype)
            Y = self._stream(st, X, online, extra)
            unknown = np.zeros(X.shape[0], dtype=bool)
        Y = _as_labels(st, Y)
        out = [Y]
        if return_patterns:
            new = _new_columns(st, Y.shape[1])
            out = [Y[:, ~new], Y[:, new]]
        if return_unknown:
            out.insert(1, unknown)
        return out[0] if len(out) == 1 else tuple(out)

    def _stream_novel_arrivals(self, st, X, online, arrivals):
        """predict_stream with novelty detection and labels that arrive: the pieces of X between
        the arrivals, each labelled row learnt by partial_fit once its rows are classified (Y's
        columns the caller's, as partial_fit takes them). Everything is checked first."""
        X_l, Y_l, after = _split_arrivals(arrivals)
        n = X.shape[0]
        X_l = _check_stream_X(st, X_l, name="X_labelled")
        Y_l = self._caller_labels(st, X_l, Y_l, "Y_labelled")
        after = _after_of(after, X_l.shape[0], n)
        rate = self._correction_rate()
        self._corrections()
        self._label_persistence()
        parts, unknowns, start = [], [], 0
        self._lock.acquire_write()
        try:
            _check_headroom(st, n + X_l.shape[0])  # (before any change: the call as a whole)
            for stop in [*np.unique(after).tolist(), n]:
                if stop > start:
                    Y, u = self._stream_novel_locked(st, X[start:stop], online)
                    parts.append(Y)
                    unknowns.append(u)
                    start = stop
                due = after == stop
                if due.any():
                    self._learn_named_locked(st, X_l[due], Y_l[due], online, rate)
        finally:
            self._lock.release_write()
        L = st["n_labels"]
        Y = np.zeros((0, L), dtype=np.uint8)
        if parts:
            Y = np.vstack([np.pad(p, ((0, 0), (0, L - p.shape[1]))) for p in parts])
        return Y, np.concatenate(unknowns) if unknowns else np.zeros(0, dtype=bool)

    def _caller_labels(self, st, X, Y, name="Y"):
        """Y checked as the caller's label columns of a model with novelty detection: the
        labels of fit, then at most NOVELTY_MAX_LABELS more; as int8."""
        n_fit = int(np.count_nonzero(st["label_origin"][_detection.CREATED] == -1))
        width = np.shape(Y)[1] if np.ndim(Y) == 2 else n_fit
        if not n_fit <= width <= n_fit + NOVELTY_MAX_LABELS:
            raise ValueError(
                f"{name} has {width} label columns; with novelty detection it holds the {n_fit} "
                f"labels of fit, then at most {NOVELTY_MAX_LABELS} labels the model did not know "
                "at fit"
            )
        return check_partial_labels(name, Y, X.shape[0], width)

    def _map_maker(self, st, n_epochs, max_epochs):
        """make_map(rows, rng) of _detection: a new label's map fitted on rows as fit fits one."""

        def make_map(G, rng):
            G = np.ascontiguousarray(G, dtype=st["Wt"].dtype)
            mp = self._label_map(G, rng, st["grid_size"], n_epochs, max_epochs, 1)
            keys = ("Wt", "counts", "log_averout", "positions", "radius", "epochs", "drift")
            return tuple(mp[k] for k in keys)

        return make_map

    def _stream_novel(self, st, X, online):
        """The online phase with novelty detection (_detection.stream): (Y, unknown)."""
        self._lock.acquire_write()
        try:
            _check_headroom(st, X.shape[0])  # (before any change: the chunk as a whole)
            return self._stream_novel_locked(st, X, online)
        finally:
            self._lock.release_write()

    def _stream_novel_locked(self, st, X, online):
        """_stream_novel under the writer lock, held by the caller."""
        _, _, n_epochs, max_epochs = self._validate_params()

        def core(rows):
            Y = np.zeros((rows.shape[0], st["n_labels"]), dtype=np.uint8)
            state, settings = self._core_state(st, rows.shape[0], online, None)
            _core.stream(state, settings, rows, Y)
            return Y

        maker = self._map_maker(st, n_epochs, max_epochs)
        return _detection.stream(st, X, core, maker, self._novelty_radius())

    def _stream(self, st, X, online, extra):
        """The core's online phase over X (checked) with the online settings (eta, skip_zero),
        and the labels that arrive meanwhile (``extra``: Xl, Yl, after and rate, or nothing);
        returns the predictions."""
        Y = np.zeros((X.shape[0], st["n_labels"]), dtype=np.uint8)
        if X.shape[0] == 0 and not extra:
            return Y
        self._lock.acquire_write()
        try:
            n_rows = X.shape[0] + (len(extra["Xl"]) if extra else 0)
            state, settings = self._core_state(st, n_rows, online, extra.get("rate"))
            if extra:
                _core.stream(state, settings, X, Y, extra["Xl"], extra["Yl"], extra["after"])
            else:
                _core.stream(state, settings, X, Y)
        finally:
            self._lock.release_write()
        return Y

    def _learn(self, st, Xl, Yl, online, rate):
        """The core's labelled update: the rows Xl (checked) with their labels Yl, in order."""
        self._lock.acquire_write()
        try:
            state, settings = self._core_state(st, Xl.shape[0], online, rate)
            _core.partial_fit(state, settings, Xl, Yl)
        finally:
            self._lock.release_write()

    def _core_state(self, st, n_rows, online, rate):
        """Under the writer lock: the core's State of ``st`` and the call's Settings, for a call
        that learns ``n_rows`` rows, labelled ones with correction rate ``rate`` (None: no
        label). The neurons move: the copy by rows is dropped, the screening copy kept; with
        labels, the groups labels start (a model from before a group starts it empty)."""
        eta, skip_zero = online
        _check_headroom(st, n_rows)
        st.pop("rows", None)  # the neurons move
        self._copy(st, "screen")
        persist = self._label_persistence() == "tested"
        new = tested = False
        if rate is not None:
            tested = self._corrections() == "tested"
            self._labelled_memory(st, tested)
            new = _schema.ensure(st, "persistence")
        _ensure_margin_order(st)
        settings = _core.Settings(
            eta=eta,
            skip_zero=skip_zero,
            rate=0.5 if rate is None else rate,
            tested=tested,
            substitute=persist,
            starts=new,
        )
        return _core.State(st), settings

    def _arrivals(self, st, arrivals, n, dtype):
        """The checked ``arrivals`` of predict_stream as the core's keyword arguments."""
        X_l, Y_l, after = _split_arrivals(arrivals)
        fast = _arrivals_as_given(st, X_l, Y_l, after, n, dtype)
        if fast is not None:
            rate = self._correction_rate()
            self._corrections()
            return dict(fast, rate=rate)
        X_l = _check_stream_X(st, X_l, name="X_labelled")
        Y_l = check_partial_labels("Y_labelled", Y_l, X_l.shape[0], st["n_labels"])
        after_arr = _after_of(after, X_l.shape[0], n)
        rate = self._correction_rate()
        self._corrections()
        if X_l.shape[0] == 0:
            return {}
        return dict(
            Xl=np.ascontiguousarray(X_l, dtype=dtype),
            Yl=Y_l,
            after=np.ascontiguousarray(after_arr),
            rate=rate,
        )

    @staticmethod
    def _labelled_memory(st, tested=False):
        """What labels teach, kept from the first labelled update on: each label's last labelled
        positive, and the decision rule's acceptance offsets, the margins they are chosen from
        and the labelled cardinality (docs/method.md, "Labels that arrive")."""
        # (a model from before a group starts it empty)
        for group in ("labelled", "rule", "guards", *(("pairs",) if tested else ())):
            _schema.ensure(st, group)

    def predict_one(self, x: ArrayLike | dict, *, adapt: bool = True) -> dict[int, bool]:
        """Classify one instance, River style, and (by default) adapt the model to it.

        ``model.predict_one(x)`` is ``model.predict_stream([x])[0]`` as a dict: classification and
        adaptation are one step of the method. With ``adapt=False`` it is ``predict([x])[0]``.

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            The instance. A dict maps feature names (when ``fit`` got a DataFrame) or feature
            indices 0..n_features-1 to values; every feature must be present.
        adapt : bool, default=True

        Returns
        -------
        dict of int to bool
            For every label index, whether it is predicted.
        """
        if not isinstance(adapt, (bool, np.bool_)):
            raise TypeError(f"adapt must be True or False, got {adapt!r}")
        X = self._one_row(x)
        y = self.predict_stream(X)[0] if adapt else self.predict(X)[0]
        return {j: bool(v) for j, v in enumerate(y)}

    def _one_row(self, x):
        """One instance (an array of n_features values, or a dict) as a (1, n_features) array."""
        st = self._fitted_state()
        if isinstance(x, dict):
            keys = st.get("feature_names") or list(range(st["n_features"]))
            problem = _names.bad_names(keys)
            if problem is not None:  # a model pickled before such names were refused at fit
                raise ValueError(
                    f"x cannot be given as a dict: the model's feature names "
                    f"{_names.show(keys)} cannot be joined by name ({problem}); pass the "
                    "values as an array in the model's column order"
                )
            if x.keys() != set(keys):
                raise ValueError(
                    f"x must give exactly the {len(keys)} features of the model, "
                    f"{_names.show(keys)}; it gives {_names.show(x)}: "
                    f"{_names.difference(x, keys, ordered=False)}"
                )
            row = [_feature_value(k, x[k]) for k in keys]
        else:
            row = as_array("x", x)
            if row.ndim != 1:
                raise ValueError(f"x must be 1-D (one instance), got shape {row.shape}")
        row = as_array("x", row)
        if row.dtype.kind == "O":  # Python numbers of mixed kinds, or integers beyond int64
            try:
                row = row.astype(np.float64)
            except OverflowError:
                raise ValueError(
                    f"x holds a value beyond the range of floating point: {describe(x)}"
                ) from None
            except (TypeError, ValueError):
                pass  # refused as not real numbers, naming the dtype
        return row[None, :]

    def partial_fit(self, X: ArrayLike, Y: ArrayLike) -> "SOMStreamClassifier":
        """Learn from labels that arrive: update the model with labelled instances, in order.

        Usually the instances were classified by ``predict_stream`` earlier and their true
        labels come back late, for a few of them, sometimes for some labels only. For each row,
        the model classifies it from its current state, then, for every label whose value is
        known (docs/method.md, "Labels that arrive"):

        * a true label it predicted (a hit): the label's best-matching neuron moves towards the
          instance by ``learning_rate``, as self-training moves it;
        * a true label it missed: that neuron moves towards the instance by
          ``correction_rate``;
        * a label it predicted wrongly (a false alarm): that neuron moves onto the label's last
          labelled positive instance, when one has been given since the last such move (it is
          kept for the purpose, and used once);

        the moved neurons' averOut take the instance (hits and misses). With
        ``corrections="tested"`` the moves by ``correction_rate`` and onto the positive run
        only while a paired test on the stream finds that they help (misses then move by
        ``learning_rate``, false alarms not at all; ``correction_pairs_``). The label counts (T,
        N, S) do not change: the stream counted the instance, as its prediction, when it saw
        it. The decision rule learns as well: each known label's margin in the Bayes test
        joins its memory of its last 500 labelled instances, from which its acceptance offset
        is chosen for F1 (``label_offsets_``), and the ranking ranks at least as many labels
        as the fully labelled instances have on average (``labelled_cardinality_``). Each label
        also keeps, as guards, the labelled instances without it that its test accepted (and,
        as supports, those with it that a guard stopped); while its remembered entries give a
        better F1 with them (``guards_on_``), it is rejected where an instance is nearer one of
        its guards than its map and supports (docs/method.md, "Guards"). A label
        without a map (no positive in the training set) stays without one: its labels are
        ignored. Without any call the model is exactly the one of the paper's method.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The labelled instances, in the order their labels arrived.
        Y : array-like of shape (n_samples, n_labels)
            Their labels: 1 (present), 0 (absent) or -1 (unknown, scikit-learn's marker for
            unlabelled targets), so that partly labelled instances count too. With novelty
            detection (a model fitted with ``novelty=True``) the columns are the caller's labels:
            those of ``fit``, then up to 100 labels the model did not know at ``fit``; such a
            column names the new label its instances match, or becomes a label of its own
            (docs/method.md, "Labels that name new labels"); the new labels no column names are
            unknown to Y.

        Returns
        -------
        self
        """
        st = self._fitted_state()
        X = _check_stream_X(st, X)
        online = self._online_settings()
        rate = self._correction_rate()
        self._corrections()
        self._label_persistence()
        if "label_origin" in st:  # novelty detection: the caller's columns (docs/method.md)
            return self._partial_fit_named(st, X, Y, online, rate)
        Yl = check_partial_labels("Y", Y, X.shape[0], st["n_labels"])
        if X.shape[0] > 0:
            self._learn(st, X, Yl, online, rate)
        return self

    def _partial_fit_named(self, st, X, Y, online, rate):
        """partial_fit of a model fitted with novelty detection. Y's columns are the caller's
        labels: the labels of fit first, then labels the model did not know at fit, each of
        which names a new label its instances match, or becomes a label of its own
        (_detection.name_label); the new labels no column names are unknown to Y."""
        Yc = self._caller_labels(st, X, Y)
        if X.shape[0] == 0:
            return self
        self._lock.acquire_write()
        try:
            self._learn_named_locked(st, X, Yc, online, rate)
        finally:
            self._lock.release_write()
        return self

    def _learn_named_locked(self, st, X, Yc, online, rate):
        """_partial_fit_named's learning (Yc checked), under the writer lock held by the
        caller."""
        n_fit = int(np.count_nonzero(st["label_origin"][_detection.CREATED] == -1))
        _, skip_zero = online
        _, _, n_epochs, max_epochs = self._validate_params()
        cols = _detection.caller_columns(st, Yc.shape[1], n_fit)
        for u in np.flatnonzero(cols < 0):
            cols[u] = _detection.name_label(
                st,
                int(u),
                X,
                Yc[:, u],
                lambda rows: self._frozen(st, rows, skip_zero, 1, True),
                self._map_maker(st, n_epochs, max_epochs),
                int(st["novelty_counts"][_detection.SEEN]),
            )
        Yl = np.full((X.shape[0], st["n_labels"]), -1, dtype=np.int8)
        Yl[:, cols[cols >= 0]] = Yc[:, cols >= 0]
        state, settings = self._core_state(st, X.shape[0], online, rate)
        _core.partial_fit(state, settings, X, Yl)

    def learn_one(self, x, y=None) -> "SOMStreamClassifier":
        """Learn the labels of one instance, River style: ``partial_fit`` of one row.

        ``y`` maps label indices to True/False (a label left out, or None, is unknown), or is
        an array of n_labels values 1, 0 or -1. Without ``y`` (None) nothing happens: the model
        adapts to unlabelled instances in ``predict_one`` / ``predict_stream``.
        """
        if y is None:
            return self
        st = self._fitted_state()
        if isinstance(y, dict):
            L = st["n_labels"]
            row = np.full(L, -1, dtype=np.int8)
            for key, value in y.items():
                if (
                    isinstance(key, bool)
                    or not isinstance(key, numbers.Integral)
                    or not (0 <= key < L)
                ):
                    raise ValueError(f"y: label {key!r} is not a label index in 0..{L - 1}")
                if value is None:
                    continue
                if not isinstance(value, (bool, np.bool_, numbers.Integral)) or value not in (
                    0,
                    1,
                ):
                    raise ValueError(
                        f"y: label {key} must be True, False or None (unknown), got {value!r}"
                    )
                row[key] = int(value)
            y = row
        X = self._one_row(x)
        return self.partial_fit(X, np.asarray(y)[None, :] if np.ndim(y) == 1 else y)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Frozen scoring: classify each row independently from the current model, without adapting.

        Each row gets the prediction ``predict_stream`` would give it as the next instance of the
        stream, label persistence's proposal aside (``label_persistence``: it is for the one
        instance after a prompt label). The work is spread over ``n_jobs`` threads with the GIL
        released; several Python threads may call it at once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels), dtype uint8
        """
        st = self._fitted_state()
        X = _check_stream_X(st, X, effective_n_threads(self.n_jobs))
        Y = np.zeros((X.shape[0], st["n_labels"]), dtype=np.uint8)
        _, skip_zero = self._online_settings()
        if X.shape[0] == 0:
            return _as_labels(st, Y)
        n_threads = _threads_for(
            X.shape[0] * st["Wt"].shape[1] * X.shape[1], effective_n_threads(self.n_jobs)
        )
        detects = self._detects(st)
        self._lock.acquire_read()
        try:
            Y = self._frozen(st, X, skip_zero, n_threads, detects)
        finally:
            self._lock.release_read()
        return _as_labels(st, Y)

    def _frozen(self, st, X, skip_zero, n_threads, detects):
        """Frozen scoring of X (checked) under a lock held by the caller: 0/1 uint8 over the
        labels as they are now (a stream in another thread may have added some); with novelty
        detection, a row no neuron explains is left unknown, as in the stream."""
        Y = np.zeros((X.shape[0], st["n_labels"]), dtype=np.uint8)
        self._copy(st, "screen")
        self._copy(st, "rows")
        _ensure_margin_order(st)
        settings = _core.Settings(skip_zero=skip_zero, n_threads=n_threads)
        _core.predict(_core.State(st, writable=False), settings, X, Y)
        if detects:
            Y[~_detection.explained_now(st, X, self._novelty_radius())] = 0
        return Y

    # ------------------------------------------------------------------ fitted attributes
    # Each is computed from the state under the reader lock and returned as a new object: a
    # snapshot of the model between two calls that learn (predict_stream, partial_fit, fit),
    # never half of one, and never a view that the next call would change.

    def _snapshot(self, fn):
        """``fn(state)`` computed under the reader lock (NotFittedError before ``fit``)."""
        self._lock.acquire_read()
        try:
            return fn(self._fitted_state())
        finally:
            self._lock.release_read()

    def _per_label(self, fn):
        def each(st):
            off = st["offsets"]
            out = []
            for j in range(st["n_labels"]):
                lo, hi = int(off[j]), int(off[j + 1])
                out.append(fn(st, lo, hi) if hi > lo else None)
            return out

        return self._snapshot(each)

    @property
    def weights_(self):
        return self._per_label(lambda st, lo, hi: st["Wt"][:, lo:hi].T.copy())

    @property
    def neuron_counts_(self):
        return self._per_label(lambda st, lo, hi: st["counts"][lo:hi].copy())

    @property
    def log_averout_(self):
        return self._per_label(lambda st, lo, hi: st["log_averout"][lo:hi].copy())

    @property
    def averout_(self):
        # the C library's exp (math.exp): the same bits on every machine, unlike NumPy's SIMD exp
        return self._per_label(
            lambda st, lo, hi: np.array([math.exp(v) for v in st["log_averout"][lo:hi].tolist()])
        )

    @property
    def grid_positions_(self):
        return self._per_label(lambda st, lo, hi: st["positions"][lo:hi].copy())

    @property
    def classes_(self):
        """The values of each label, ``[0, 1]`` in the dtype of the predictions (scikit-learn's
        convention for multi-label classifiers: one array per label)."""
        return self._snapshot(
            lambda st: [np.array([0, 1], dtype=st["labels_dtype"]) for _ in range(st["n_labels"])]
        )

    @property
    def T_(self):
        return self._snapshot(lambda st: st["T"].copy())

    @property
    def P_(self):
        return self._snapshot(_probabilities)

    @property
    def n_seen_(self):
        return self._snapshot(lambda st: int(st["NS"][0]))

    @property
    def cardinality_(self):
        return self._snapshot(lambda st: float(st["NS"][1]) / float(st["NS"][0]))

    @property
    def k_nn_(self):
        return self._snapshot(lambda st: int(st["k_nn"]))

    @property
    def n_features_in_(self):
        return self._snapshot(lambda st: int(st["n_features"]))

    @property
    def feature_names_in_(self):
        """Names of the features when ``fit`` got a DataFrame with string column names."""
        names = self._snapshot(lambda st: st.get("feature_names"))
        if names is None:
            raise AttributeError("feature_names_in_: fit was not given named features")
        return np.array(names, dtype=object)

    @property
    def n_labels_(self):
        return self._snapshot(lambda st: int(st["n_labels"]))

    @property
    def new_labels_(self):
        return self._snapshot(_detection.new_labels)

    @property
    def label_names_(self):
        return self._snapshot(_detection.label_names)

    @property
    def n_iter_(self):
        return self._snapshot(lambda st: list(st["n_iter"]))

    @property
    def grid_size_(self):
        return self._snapshot(lambda st: int(st["grid_size"]))

    @property
    def variant_(self):
        return self._snapshot(lambda st: st.get("variant", "paper"))

    @property
    def acceptance_offset_(self):
        return self._snapshot(lambda st: None if "ctl" not in st else float(st["ctl"][0]))

    @property
    def label_acceptance_offsets_(self):
        return self._snapshot(
            lambda st: np.array(st["label_acceptance"][0]) if "label_acceptance" in st else None
        )

    @property
    def moving_maps_(self):
        return self._snapshot(
            lambda st: st["drift_open"].astype(bool) if "drift_open" in st else None
        )

    @property
    def label_offsets_(self):
        return self._snapshot(
            lambda st: (
                np.array(st["label_offsets"]) if "label_offsets" in st else np.zeros(st["n_labels"])
            )
        )

    def _prototypes(self, key, count):
        def read(st):
            if key not in st:
                return None
            off, n = st["offsets"], st[count]
            return [
                None if off[c + 1] == off[c] else np.array(st[key][off[c] : off[c] + n[c]])
                for c in range(st["n_labels"])
            ]

        return self._snapshot(read)

    @property
    def guards_(self):
        return self._prototypes("guards", "guard_counts")

    @property
    def supports_(self):
        return self._prototypes("supports", "support_counts")

    @property
    def guards_on_(self):
        return self._snapshot(
            lambda st: st["guards_on"].astype(bool) if "guards_on" in st else None
        )

    @property
    def correction_pairs_(self):
        return self._snapshot(
            lambda st: (
                _persistence.ring_pairs(st["pair_ring"], st["pair_total"])
                if "pair_total" in st
                else None
            )
        )

    @property
    def persistence_pairs_(self):
        return self._snapshot(lambda st: _persistence.pairs(st) if "persist_ring" in st else None)

    @property
    def labelled_cardinality_(self):
        def read(st):
            z = st.get("labelled_cardinality")
            return None if z is None or z[1] == 0.0 else float(z[0])

        return self._snapshot(read)

    @property
    def grid_scores_(self):
        return self._snapshot(
            lambda st: None if st.get("grid_scores") is None else dict(st["grid_scores"])
        )

    # ------------------------------------------------------------------ model files

    def save(self, path) -> None:
        """Write the fitted model to ``path`` as a NumPy ``.npz`` file (no pickle inside).

        The file holds the parameters (as JSON) and the live state; :meth:`load` reads it back
        and checks every array before use, so a damaged or hostile file raises a clear error
        instead of executing code or crashing. The file is written to a temporary name and
        renamed: a failed save leaves any earlier file at ``path`` as it was. It is taken as a
        reader: a stream adapting the model in another thread waits, and the file is the model
        between two of its calls.

        Every value ``fit`` accepts is saved: a parameter is stored as the plain Python value
        the model uses (a NumPy integer as int; a NumPy float or a Fraction as float; a str
        subclass as str; a Generator ``random_state`` as None), which is what :meth:`load`
        gives back.

        Parameters
        ----------
        path : str or path-like
            Destination; ``.npz`` is appended when the name has no such suffix.

        Raises
        ------
        TypeError, ValueError
            If a parameter was set to an invalid value after ``fit`` (the file would not load);
            the error names it.
        ValueError
            If ``path`` cannot name a model file: empty, ending in a folder separator, a file
            name that is only ``.npz``, or a path that exists and is not a regular file (a
            folder, device, FIFO or socket), as given or with ``.npz`` appended.
        FileNotFoundError
            If the folder of ``path`` does not exist.
        """
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path should be str, bytes or os.PathLike, not {type(path).__name__}")
        self._fitted_state()
        self._validate_params()
        self._lock.acquire_read()
        try:
            st = self._fitted_state()  # the state a fit in another thread may have replaced
            _model_file.write_model(path, _json_params(self.get_params()), st, _version())
        finally:
            self._lock.release_read()

    @classmethod
    def load(cls, path) -> "SOMStreamClassifier":
        """Read a model written by :meth:`save`, validating it completely.

        Only a regular file is opened. Every member's dtype and shape are checked from the
        archive's headers before its data is read, and the header JSON is bounded in size and
        depth: a hostile file of any size is refused after reading at most its own size, with a
        ``ValueError``.

        Raises
        ------
        FileNotFoundError
            If there is no file at ``path``.
        ValueError
            If ``path`` is empty, ends in a folder separator or is not a regular file (a folder,
            device, FIFO or socket: never opened for reading), or if the file is not an mlsom
            model file, has another format version, or holds inconsistent arrays; the message
            names the path and says what is wrong.
        """
        return _model_file.read_model(path, cls, _fitted_record)


def _pickled():
    """What a pickle keeps of the state: the table's members and the fields (the copies of the
    neurons, _COPIES, are made again when needed)."""
    return frozenset((*_schema.BY_NAME, *_schema.FIELDS))


def _split_arrivals(arrivals):
    """predict_stream's ``arrivals`` as (X_labelled, Y_labelled, after), or TypeError."""
    try:
        X_l, Y_l, after = arrivals
    except (TypeError, ValueError):
        raise TypeError(
            "arrivals must be a tuple (X_labelled, Y_labelled, after), got "
            f"{type(arrivals).__name__}"
        ) from None
    return X_l, Y_l, after


def _after_of(after, n_labelled, n):
    """``after`` of predict_stream's arrivals as int64: n_labelled integers, non-decreasing,
    within 0..n (the rows of X); ValueError otherwise."""
    given = np.asarray(after)
    if given.shape != (n_labelled,) or (given.size and given.dtype.kind not in "iu"):
        raise ValueError(
            f"after must be {n_labelled} integers (one per labelled row), got "
            f"{given.dtype} of shape {given.shape}"
        )
    arr = given
    if arr.size and arr.dtype.kind == "u" and arr.max() > n:
        arr = np.full(arr.shape, -1)  # (beyond int64 perhaps: refused below)
    # (an empty one of any dtype: none is read)
    arr = arr.astype(np.int64) if arr.size else np.zeros(0, np.int64)
    if arr.size and (arr.min() < 0 or arr.max() > n or np.any(np.diff(arr) < 0)):
        raise ValueError(
            f"after must be non-decreasing and within 0..{n} (the rows of X), got "
            f"{given[:10].tolist()}"
        )
    return arr


def _new_columns(st, n_labels):
    """Which of the first n_labels columns are new labels (found by novelty detection)."""
    if "label_origin" not in st:
        return np.zeros(n_labels, dtype=bool)
    return st["label_origin"][_detection.NUMBER, :n_labels] > 0


def _probabilities(st):
    """P from the state's T and N: P[j, j] = T[j, j] / N, P[j, k] = T[j, k] / T[k, k] (0 where
    T[k, k] = 0)."""
    T = st["T"].astype(np.float64)
    diag = np.diag(T).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        P = np.where(diag[None, :] > 0, T / diag[None, :], 0.0)
    np.fill_diagonal(P, diag / float(st["NS"][0]))
    return P


def _drift_limit(Xj):
    """Robust variant: a label's training mean and the squared distance from it past which its
    drift gate opens (DRIFT_GATE^2 times the rows' mean squared distance from the mean)."""
    X64 = np.asarray(Xj, dtype=np.float64)
    center = X64.mean(axis=0)
    spread2 = float(((X64 - center) ** 2).sum(axis=1).mean())
    return center, DRIFT_GATE * DRIFT_GATE * spread2


def _fitted_record(fitted, model):
    """A model file's record of the parameters the state was fitted with (``fitted`` of its
    header; ``model`` made from its parameters), checked: the state's fields it gives."""
    if not (
        isinstance(fitted, dict)
        and {"grid_size", "averout_distance"} <= set(fitted)
        and set(fitted)
        <= {
            "grid_size",
            "averout_distance",
            "labels_dtype",
            "grid_scores",
            "variant",
            "acceptance",
        }
    ):
        raise ValueError(f"fitted {fitted!r}")
    d = check_int("fitted grid_size", fitted["grid_size"], low=1, high=_MAX_GRID_SIZE)
    scores = _check_grid_scores(fitted.get("grid_scores"), d)
    check_option(
        "fitted averout_distance", fitted["averout_distance"], {"euclidean", "sqeuclidean"}
    )
    variant = check_option("fitted variant", fitted.get("variant", "paper"), set(VARIANTS))
    ctl = _check_acceptance(fitted.get("acceptance"), variant)
    labels_dtype = check_option(
        "fitted labels_dtype", fitted.get("labels_dtype", "uint8"), set(LABEL_DTYPES)
    )
    fields = {
        "grid_size": d,
        "squared": fitted["averout_distance"] == "sqeuclidean",
        "labels_dtype": LABEL_DTYPES[labels_dtype],
        "grid_scores": scores,
    }
    if variant != "paper":
        fields.update(variant=variant, ctl=ctl)
    return fields


def _check_grid_scores(scores, d):
    """A model file's record of grid_size="auto" (a list of [d, score] pairs, or None): as the
    dict grid_scores_ gives; a ValueError unless every d is a candidate, once, every score a
    number in [0, 1], and the fitted d the best score's smallest d."""
    if scores is None:
        return None
    if not isinstance(scores, list) or not 0 < len(scores) <= len(AUTO_GRID_SIZES):
        raise ValueError(f"fitted grid_scores must be a list of [d, score] pairs, got {scores!r}")
    out = {}
    for pair in scores:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f"fitted grid_scores: {pair!r} is not a [d, score] pair")
        g = check_int("fitted grid_scores d", pair[0], low=1, high=_MAX_GRID_SIZE)
        v = check_float("fitted grid_scores score", pair[1], low=0.0, high=1.0)
        if g not in AUTO_GRID_SIZES or g in out:
            raise ValueError(f"fitted grid_scores: d={g} is not a candidate or is repeated")
        out[g] = v
    best = max(out.values())
    if d != min(g for g, v in out.items() if v == best):
        raise ValueError(f"fitted grid_size {d} is not the best of grid_scores {scores!r}")
    return out


def _check_headroom(st, n):
    """Refuse a chunk of n instances (of the stream and labelled) that would take the model's
    counts past 2**53: N grows by 1 an instance, S by at most L, T's counts stay below N; a
    neuron's count and a label's count of labelled entries grow by at most 1 an instance (a
    labelled instance adds to them but not to N)."""
    N, S = (int(v) for v in st["NS"])
    top = int(st["counts"].max())
    if "margin_counts" in st:
        top = max(top, int(st["margin_counts"].max()))
    limit = _model_file.MAX_COUNT
    if N + n > limit or S + n * st["n_labels"] > limit or top + n > limit:
        raise ValueError(
            f"X: {n} more instances would take the model's counts (N={N}, S={S}, largest "
            f"neuron or labelled count {top}) past 2**53, the most they hold exactly; refit the "
            f"model or start from a copy saved earlier"
        )


def _arrivals_as_given(st, X_l, Y_l, after, n, dtype):
    """predict_stream's arrivals as the core's Xl, Yl and after, without a copy, where they come
    as NumPy arrays already in the core's layout (Xl C-contiguous of the model's dtype and width,
    Yl int8, or uint8 0/1, after int64) and one compiled pass finds every value valid: the
    protocol's case, where the general checks' NumPy calls cost about 2 % of a chunk. None
    otherwise (no labelled row included): the general checks then take them, and say what is
    wrong."""
    if not (
        type(X_l) is np.ndarray
        and type(Y_l) is np.ndarray
        and type(after) is np.ndarray
        and X_l.dtype == dtype
        and Y_l.dtype in _ARRIVALLABEL_DTYPES
        and after.dtype == np.int64
        and X_l.ndim == 2
        and X_l.shape[0] > 0
        and X_l.shape[1] == st["n_features"]
        and Y_l.shape == (X_l.shape[0], st["n_labels"])
        and after.shape == (X_l.shape[0],)
        and X_l.flags.c_contiguous
        and Y_l.flags.c_contiguous
        and after.flags.c_contiguous
    ):
        return None
    if not _core.arrivals_ok(X_l, Y_l, after, n, value_limit(dtype)):
        return None
    return {"Xl": X_l, "Yl": Y_l.view(np.int8), "after": after}


_ARRIVALLABEL_DTYPES = (np.dtype(np.int8), np.dtype(np.uint8))


def _check_stream_X(st, X, n_threads=1, name="X"):
    """Validate X (called ``name`` in errors) against the fitted model, feature names included
    when both have them (the values checked over n_threads threads)."""
    names = feature_names(X)
    fitted = st.get("feature_names")
    if names is not None and fitted is not None and names != fitted:
        raise ValueError(
            f"{name} has feature names {_names.show(names)}, but the model was fitted with "
            f"{_names.show(fitted)}: {_names.difference(names, fitted)}; pass the columns in "
            f"the order of feature_names_in_ ({name}[list(model.feature_names_in_)])"
        )
    return check_features(
        name,
        X,
        n_features=st["n_features"],
        allow_empty=True,
        dtype=st["Wt"].dtype,
        estimator="SOMStreamClassifier",
        n_threads=n_threads,
    )


def _ensure_margin_order(st):
    """The online phase's cache of the rule's rings (``margin_order``), built where the state
    has the rule and lacks it (a loaded model; a pickle of an earlier mlsom kept 2 or 3 of its
    arrays)."""
    if "label_offsets" in st and len(st.get("margin_order", ())) != 4:
        st["margin_order"] = _margin_order(
            st["margin_memory"], st["margin_kinds"], st["margin_counts"]
        )


def _margin_order(margins, kinds, counts):
    """The cache the online phase keeps of each label's ring of labelled entries: the slots of
    its tested entries (kind 1) by margin, larger first, older first on a tie, how many, their
    margins in that order, and the ring's entries ever it was made at (built once, from a
    loaded model's rings; the online phase brings a label's up to its ring when it chooses the
    label's offset)."""
    L, W = margins.shape
    order = np.zeros((L, W), dtype=np.int32)
    n_sorted = np.zeros(L, dtype=np.int64)
    sorted_margins = np.zeros((L, W), dtype=np.float64)
    for c in range(L):
        t = int(counts[c])
        slots = np.arange(t - min(t, W), t) % W  # oldest first
        slots = slots[kinds[c, slots] >> 1 == 1]
        ranked = slots[np.lexsort((np.arange(slots.size), -margins[c, slots]))]
        order[c, : ranked.size] = ranked
        n_sorted[c] = ranked.size
        sorted_margins[c, : ranked.size] = margins[c, ranked]
    return order, n_sorted, sorted_margins, np.array(counts, dtype=np.int64)


def _as_labels(st, Y):
    return Y if st["labels_dtype"] == np.uint8 else Y.astype(st["labels_dtype"])


def _feature_value(key, value):
    """One value of a dict instance: a real number (or a NumPy scalar / 0-d array of one)."""
    if not (
        isinstance(value, numbers.Real)
        or (
            getattr(value, "dtype", None) is not None
            and value.dtype.kind in "biuf"
            and np.ndim(value) == 0
        )
    ):
        raise TypeError(
            f"x[{key!r}] must be a real number, got {describe(value)} ({type(value).__name__})"
        )
    return value


def _version():
    from ._version import __version__

    return __version__


def _check_acceptance(rec, variant):
    """A model file's record of the robust variant's acceptance, [theta, gain, z0, cbar, alpha,
    band]: present exactly for the robust variant, theta finite, gain and alpha in (0, 1], z0
    and cbar in [0, 2**53], band in [0, 1]; as the state's float64 array (or None)."""
    if variant == "paper":
        if rec is not None:
            raise ValueError(f"fitted acceptance {rec!r} given for the paper's variant")
        return None
    if not (isinstance(rec, list) and len(rec) == 6):
        raise ValueError(
            f"fitted acceptance must be [theta, gain, z0, cbar, alpha, band], got {rec!r}"
        )
    theta = check_float("fitted acceptance theta", rec[0])
    gain = check_float("fitted acceptance gain", rec[1], low=0.0, high=1.0, low_open=True)
    z0 = check_float("fitted acceptance z0", rec[2], low=0.0, high=float(2**53))
    cbar = check_float("fitted acceptance cbar", rec[3], low=0.0, high=float(2**53))
    alpha = check_float("fitted acceptance alpha", rec[4], low=0.0, high=1.0, low_open=True)
    band = check_float("fitted acceptance band", rec[5], low=0.0, high=1.0)
    return np.array([theta, gain, z0, cbar, alpha, band], dtype=np.float64)


def _fresh_units(bmu, cnt, keep):
    """Robust variant: of the units ``keep`` of one map, those its label's rows still reached
    near the end of the training set.

    ``bmu[r]`` is the unit of the label's r-th training row (in the set's order), ``cnt`` the
    rows per unit. A unit b is stale when the label's last ``STALE_FACTOR * n_j / cnt[b]`` rows
    never reached it, n_j = len(bmu) (compared in integers: (n_j - last_b) cnt_b > F n_j). If
    every kept unit is stale, the one reached last stays.
    """
    nj = int(bmu.size)
    last = np.zeros(cnt.size, dtype=np.int64)
    np.maximum.at(last, bmu, np.arange(1, nj + 1, dtype=np.int64))  # 1-based, 0: never
    kept = np.flatnonzero(keep)
    fresh = keep.copy()
    for b in kept.tolist():  # Python integers: no overflow whatever n_j
        if (nj - int(last[b])) * int(cnt[b]) > STALE_FACTOR * nj:
            fresh[b] = False
    if not fresh.any():
        fresh[kept[np.argmax(last[kept])]] = True
    return fresh


def _plain_param(value):
    """A checked parameter's value as the plain Python value the model uses: a NumPy scalar or
    other integer as int, a real (NumPy float, Fraction) as float, a str subclass as str."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


def _json_params(params):
    """The parameters (checked by _validate_params) as the model file's JSON values."""
    out = {}
    for key, value in params.items():
        if key == "random_state" and isinstance(value, np.random.Generator):
            value = None  # a Generator cannot be stored; it only mattered for fit
        value = _plain_param(value)
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:  # not reached for a value fit accepts
            raise TypeError(f"cannot save parameter {key}={describe(value)}: {exc}") from None
        out[key] = value
    return out
