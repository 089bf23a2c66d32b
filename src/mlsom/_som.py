"""SOM-Stream-ML: the estimator (Python layer over the compiled core)."""

import json
import numbers
import os
import threading
import warnings
import zipfile

import numpy as np
from numpy.typing import ArrayLike

from . import _core
from ._base import ParamsMixin
from ._grid import grid_distances, grid_positions, initial_radius
from ._validation import (
    MAX_ABS_VALUE,
    MAX_ABS_VALUE_32,
    check_features,
    check_float,
    check_int,
    check_labels,
    check_option,
    effective_n_threads,
)
from .exceptions import ConvergenceWarning, NotFittedError

__all__ = ["SOMStreamClassifier"]


# Below this many distance terms (rows x neurons x features) a call runs on one thread: starting
# and joining OpenMP threads costs more than it saves, and far more on a machine whose cores are
# busy with other work. Results never depend on the thread count.
_PARALLEL_MIN_WORK = 4_000_000


def _threads_for(work, n_threads):
    return n_threads if work >= _PARALLEL_MIN_WORK else 1


class _ReadWriteLock:
    """Many readers (``predict``) or one writer (``fit``, ``predict_stream``) at a time."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False

    def acquire_read(self):
        with self._cond:
            while self._writer:
                self._cond.wait()
            self._readers += 1

    def release_read(self):
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_write(self):
        with self._cond:
            while self._writer or self._readers:
                self._cond.wait()
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
    grid_size : int, default=5
        Side d of every map (d x d neurons). The paper picks d per stream from 1 to 10.
    learning_rate : float, default=0.05
        Online learning rate eta of the winning neurons, in (0, 1].
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
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the choice of the initial neurons.
    n_jobs : int or None, default=None
        Threads for batch training and ``predict`` (None: all cores; -1 all, -2 all but one).
        ``predict_stream`` is sequential by nature. Results never depend on it.

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
    n_iter_ : list of int or None
        Batch epochs run for each map.

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
        n_epochs=100,
        max_epochs=1000,
        min_neuron_size=4,
        neighborhood="bubble",
        averout_distance="euclidean",
        zero_cooccurrence="reject",
        random_state=None,
        n_jobs=None,
    ):
        self.grid_size = grid_size
        self.learning_rate = learning_rate
        self.n_epochs = n_epochs
        self.max_epochs = max_epochs
        self.min_neuron_size = min_neuron_size
        self.neighborhood = neighborhood
        self.averout_distance = averout_distance
        self.zero_cooccurrence = zero_cooccurrence
        self.random_state = random_state
        self.n_jobs = n_jobs
        self._lock = _ReadWriteLock()

    # ------------------------------------------------------------------ scikit-learn conventions

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_lock", None)
        if state.get("_state") is not None:  # the cached copies are rebuilt when needed
            state["_state"] = {k: v for k, v in state["_state"].items() if k not in self._COPIES}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = _ReadWriteLock()

    def _validate_params(self):
        d = check_int("grid_size", self.grid_size, low=1, high=1000)
        eta = check_float("learning_rate", self.learning_rate, low=0.0, high=1.0, low_open=True)
        n_epochs = check_int("n_epochs", self.n_epochs, low=1, high=10**7)
        max_epochs = check_int("max_epochs", self.max_epochs, low=1, high=10**7)
        if max_epochs < n_epochs:
            raise ValueError(
                f"max_epochs must be >= n_epochs, got max_epochs={max_epochs}, n_epochs={n_epochs}"
            )
        check_int("min_neuron_size", self.min_neuron_size, low=1)
        rs = self.random_state
        if not (rs is None or isinstance(rs, np.random.Generator)):
            if isinstance(rs, bool) or not isinstance(rs, numbers.Integral):
                raise TypeError(
                    f"random_state must be None, a non-negative integer or a "
                    f"numpy.random.Generator, got {rs!r} ({type(rs).__name__})"
                )
            if rs < 0:
                raise ValueError(f"random_state must be non-negative, got {rs}")
        check_option("neighborhood", self.neighborhood, {"bubble", "gaussian"})
        check_option("averout_distance", self.averout_distance, {"euclidean", "sqeuclidean"})
        check_option("zero_cooccurrence", self.zero_cooccurrence, {"reject", "skip"})
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
            predicted; rows with no label count in N and z only.

        Returns
        -------
        self
        """
        d, _, n_epochs, max_epochs = self._validate_params()
        names = _feature_names(X)
        X = check_features("X", X, dtype=None)
        Y = check_labels("Y", Y, X.shape[0])
        n, A = X.shape
        L = Y.shape[1]
        n_threads = effective_n_threads(self.n_jobs)
        rng = np.random.default_rng(self.random_state)
        M0 = d * d
        G = grid_distances(d)
        r0 = initial_radius(d)
        positions = grid_positions(d)
        squared = self.averout_distance == "sqeuclidean"
        Yi = Y.astype(np.int64)
        T = np.ascontiguousarray(Yi.T @ Yi)

        cols, ncls, counts, log_averout, pos, n_iter = [], [], [], [], [], []
        offsets = np.zeros(L + 1, dtype=np.int64)
        not_converged = []
        for j in range(L):
            if T[j, j] == 0:
                n_iter.append(None)
                offsets[j + 1] = offsets[j]
                continue
            rows = Y[:, j] == 1
            Xj = X if rows.all() else np.ascontiguousarray(X[rows])  # no copy when all rows
            nj = Xj.shape[0]
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
            if not converged:
                not_converged.append(j)
            n_iter.append(int(epochs))
            cnt = np.bincount(bmu, minlength=M0)
            keep = cnt >= self.min_neuron_size
            if not keep.any():  # [D] never leave a map empty
                keep[np.argmax(cnt)] = True
            dist = bmu_d2 if squared else np.sqrt(bmu_d2)
            # log averOut_b = log(mean over X_b of exp(-dist)), computed as a log-mean-exp
            top = np.full(M0, -np.inf)
            np.maximum.at(top, bmu, -dist)
            s = np.bincount(bmu, weights=np.exp(-dist - top[bmu]), minlength=M0)
            with np.errstate(divide="ignore", invalid="ignore"):
                la = np.minimum(top + np.log(s) - np.log(cnt), 0.0)  # a mean of exp(-d) <= 1
            kept = np.flatnonzero(keep)
            cols.append(Wt[:, kept])
            ncls.append(np.full(kept.size, j, dtype=np.int32))
            counts.append(cnt[kept].astype(np.int64))
            log_averout.append(la[kept])
            pos.append(positions[kept])
            offsets[j + 1] = offsets[j] + kept.size
        if not_converged:
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
            "feature_names": names,
            "squared": squared,
            "skip_zero": self.zero_cooccurrence == "skip",
            "learning_rate": float(self.learning_rate),
        }
        self._lock.acquire_write()
        try:
            self._state = state
        finally:
            self._lock.release_write()
        return self

    # ------------------------------------------------------------------ online phase

    def _fitted_state(self):
        state = getattr(self, "_state", None)
        if state is None:
            raise NotFittedError(
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

    def predict_stream(self, X: ArrayLike) -> np.ndarray:
        """Online phase: classify the rows of X in order, adapting the model after each one.

        Calling it on consecutive chunks of a stream gives the same predictions and the same final
        model as one call on the whole stream. No label is needed, ever.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next instances of the stream, in arrival order.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels), dtype uint8
            The predicted label sets, 0/1.
        """
        st = self._fitted_state()
        X = _check_stream_X(st, X)
        Y = np.zeros((X.shape[0], st["n_labels"]), dtype=np.uint8)
        if X.shape[0] == 0:
            return Y
        self._lock.acquire_write()
        try:
            st.pop("rows", None)  # the neurons move
            Ws, ww, c = self._copy(st, "screen")
            _core.stream(
                X,
                st["Wt"],
                st["ncls"],
                st["offsets"],
                st["counts"],
                st["log_averout"],
                st["T"],
                st["NS"],
                st["k_nn"],
                st["learning_rate"],
                st["squared"],
                st["skip_zero"],
                Ws,
                ww,
                c,
                Y,
            )
        finally:
            self._lock.release_write()
        return Y

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
        st = self._fitted_state()
        if isinstance(x, dict):
            keys = st.get("feature_names") or list(range(st["n_features"]))
            missing = [k for k in keys if k not in x]
            extra = [k for k in x if k not in set(keys)]
            if missing or extra:
                raise ValueError(
                    f"x must give exactly the {len(keys)} features of the model: missing "
                    f"{missing[:5]}, unknown {extra[:5]}"
                )
            row = [x[k] for k in keys]
        else:
            row = np.asarray(x)
            if row.ndim != 1:
                raise ValueError(f"x must be 1-D (one instance), got shape {row.shape}")
        X = np.asarray(row)[None, :]
        y = self.predict_stream(X)[0] if adapt else self.predict(X)[0]
        return {j: bool(v) for j, v in enumerate(y)}

    def learn_one(self, x, y=None) -> "SOMStreamClassifier":
        """Do nothing: after ``fit`` the method never uses labels (River compatibility).

        With it, River's progressive validation can drive the model; the labels it passes are
        ignored, as labels never arrive in the setting the method is built for.
        """
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Frozen scoring: classify each row independently from the current model, without adapting.

        Each row gets the prediction ``predict_stream`` would give it as the next instance of the
        stream. The work is spread over ``n_jobs`` threads with the GIL released; several Python
        threads may call it at once.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels), dtype uint8
        """
        st = self._fitted_state()
        X = _check_stream_X(st, X)
        Y = np.zeros((X.shape[0], st["n_labels"]), dtype=np.uint8)
        if X.shape[0] == 0:
            return Y
        n_threads = _threads_for(
            X.shape[0] * st["Wt"].shape[1] * X.shape[1], effective_n_threads(self.n_jobs)
        )
        self._lock.acquire_read()
        try:
            N, S = (int(v) for v in st["NS"])
            Ws, ww, c = self._copy(st, "screen")
            _core.predict(
                X,
                st["Wt"],
                st["ncls"],
                st["offsets"],
                st["log_averout"],
                st["T"],
                N,
                S,
                st["k_nn"],
                st["squared"],
                st["skip_zero"],
                Ws,
                ww,
                c,
                self._copy(st, "rows"),
                Y,
                n_threads,
            )
        finally:
            self._lock.release_read()
        return Y

    # ------------------------------------------------------------------ fitted attributes

    def _per_label(self, fn):
        st = self._fitted_state()
        off = st["offsets"]
        out = []
        for j in range(st["n_labels"]):
            lo, hi = int(off[j]), int(off[j + 1])
            out.append(fn(st, lo, hi) if hi > lo else None)
        return out

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
        return self._per_label(lambda st, lo, hi: np.exp(st["log_averout"][lo:hi]))

    @property
    def grid_positions_(self):
        return self._per_label(lambda st, lo, hi: st["positions"][lo:hi].copy())

    @property
    def T_(self):
        return self._fitted_state()["T"].copy()

    @property
    def P_(self):
        st = self._fitted_state()
        T = st["T"].astype(np.float64)
        diag = np.diag(T).copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            P = np.where(diag[None, :] > 0, T / diag[None, :], 0.0)
        np.fill_diagonal(P, diag / float(st["NS"][0]))
        return P

    @property
    def n_seen_(self):
        return int(self._fitted_state()["NS"][0])

    @property
    def cardinality_(self):
        N, S = self._fitted_state()["NS"]
        return float(S) / float(N)

    @property
    def k_nn_(self):
        return int(self._fitted_state()["k_nn"])

    @property
    def n_features_in_(self):
        return int(self._fitted_state()["n_features"])

    @property
    def feature_names_in_(self):
        """Names of the features when ``fit`` got a DataFrame with string column names."""
        names = self._fitted_state().get("feature_names")
        if names is None:
            raise AttributeError("feature_names_in_: fit was not given named features")
        return np.array(names, dtype=object)

    @property
    def n_labels_(self):
        return int(self._fitted_state()["n_labels"])

    @property
    def n_iter_(self):
        return list(self._fitted_state()["n_iter"])

    # ------------------------------------------------------------------ model files

    def save(self, path) -> None:
        """Write the fitted model to ``path`` as a NumPy ``.npz`` file (no pickle inside).

        The file holds the parameters (as JSON) and the live state; :meth:`load` reads it back
        and checks every array before use, so a damaged or hostile file raises a clear error
        instead of executing code or crashing.

        Parameters
        ----------
        path : str or path-like
            Destination; numpy appends ``.npz`` when the name has no such suffix.
        """
        st = self._fitted_state()
        self._lock.acquire_read()
        try:
            meta = {
                "format": _FILE_FORMAT,
                "mlsom_version": _version(),
                "params": _json_params(self.get_params()),
                "n_iter": st["n_iter"],
                "k_nn": int(st["k_nn"]),
                "feature_names": st.get("feature_names"),
            }
            arrays = {k: np.array(st[k]) for k in _STATE_ARRAYS}
            np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
        finally:
            self._lock.release_read()

    @classmethod
    def load(cls, path) -> "SOMStreamClassifier":
        """Read a model written by :meth:`save`, validating it completely.

        Raises
        ------
        ValueError
            If the file is not an mlsom model file, has another format version, or holds
            inconsistent arrays; the message says what is wrong.
        """
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"path should be str, bytes or os.PathLike, not {type(path).__name__}")
        if not os.path.exists(path):
            raise FileNotFoundError(f"no model file {os.fsdecode(path)!r}")
        try:
            f = np.load(path, allow_pickle=False)
            if not hasattr(f, "files"):  # a plain .npy array
                raise ValueError("not a .npz archive")
            with f:
                files = set(f.files)
                meta = json.loads(str(f["meta"])) if "meta" in files else None
                arrays = {k: f[k] for k in _STATE_ARRAYS if k in files}
        except (
            OSError,
            ValueError,
            EOFError,
            NotImplementedError,
            zipfile.BadZipFile,
            UnicodeDecodeError,
        ) as exc:
            raise ValueError(f"{path!r} cannot be read as an mlsom model file: {exc}") from None
        missing = {"meta", *_STATE_ARRAYS} - files
        not_arrays = sorted(k for k, v in arrays.items() if not isinstance(v, np.ndarray))
        if not_arrays:
            raise ValueError(
                f"{path!r} is not an mlsom model file: {not_arrays} hold no NumPy array"
            )
        if missing:
            raise ValueError(f"{path!r} is not an mlsom model file: missing {sorted(missing)}")
        if not isinstance(meta, dict):
            raise ValueError(f"{path!r} is not an mlsom model file: its header is not an object")
        if meta.get("format") != _FILE_FORMAT:
            raise ValueError(
                f"{path!r}: unsupported model file format {meta.get('format')!r} "
                f"(this mlsom reads format {_FILE_FORMAT})"
            )
        params = meta.get("params")
        known = set(cls().get_params())
        if not isinstance(params, dict) or not set(params) <= known:
            unknown = sorted(set(params) - known) if isinstance(params, dict) else params
            raise ValueError(f"{path!r}: inconsistent model file: parameters {unknown!r}")
        model = cls(**params)
        try:
            model._validate_params()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path!r}: inconsistent model file: {exc}") from None
        state = _check_state(arrays, meta, path)
        state.update(
            squared=model.averout_distance == "sqeuclidean",
            skip_zero=model.zero_cooccurrence == "skip",
            learning_rate=float(model.learning_rate),
        )
        model._state = state
        return model


_FILE_FORMAT = 1
_STATE_ARRAYS = ("Wt", "ncls", "offsets", "counts", "log_averout", "positions", "T", "NS")


def _check_stream_X(st, X):
    """Validate X against the fitted model, feature names included when both have them."""
    names = _feature_names(X)
    fitted = st.get("feature_names")
    if names is not None and fitted is not None and names != fitted:
        raise ValueError(
            f"X has feature names {names[:5]}... in another order or set than the model's "
            f"{fitted[:5]}...; pass the columns in the order of feature_names_in_"
        )
    return check_features(
        "X", X, n_features=st["n_features"], allow_empty=True, dtype=st["Wt"].dtype
    )


def _check_names(names, n_features, bad):
    if names is None:
        return None
    if (
        not isinstance(names, list)
        or len(names) != n_features
        or not all(isinstance(n, str) for n in names)
    ):
        bad("feature_names")
    return names


def _feature_names(X):
    """Column names of a DataFrame-like X (all strings), else None."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    names = list(cols)
    return names if all(isinstance(c, str) for c in names) else None


def _version():
    from ._version import __version__

    return __version__


def _json_params(params):
    out = {}
    for key, value in params.items():
        if isinstance(value, np.integer):
            value = int(value)
        if key == "random_state" and not (value is None or isinstance(value, int)):
            value = None  # a Generator cannot be stored; it only mattered for fit
        json.dumps(value)
        out[key] = value
    return out


def _check_state(a, meta, path):
    """Check a loaded state completely: the compiled kernels trust it."""

    def bad(what):
        raise ValueError(f"{path!r}: inconsistent model file: {what}")

    expected = {
        "Wt": (np.float64, 2),
        "ncls": (np.int32, 1),
        "offsets": (np.int64, 1),
        "counts": (np.int64, 1),
        "log_averout": (np.float64, 1),
        "positions": (np.int64, 2),
        "T": (np.int64, 2),
        "NS": (np.int64, 1),
    }
    if a["Wt"].dtype == np.float32:
        expected["Wt"] = (np.float32, 2)
    for key, (dtype, ndim) in expected.items():
        if a[key].dtype != dtype or a[key].ndim != ndim:
            bad(
                f"{key} has dtype {a[key].dtype} and {a[key].ndim} dimensions, "
                f"expected {np.dtype(dtype)} with {ndim}"
            )
    Wt, ncls, offsets, T = a["Wt"], a["ncls"], a["offsets"], a["T"]
    A, M = Wt.shape
    L = T.shape[0]
    if A < 1 or M < 1 or L < 1 or T.shape != (L, L):
        bad(f"shapes Wt {Wt.shape}, T {T.shape}")
    if (
        offsets.shape != (L + 1,)
        or offsets[0] != 0
        or offsets[-1] != M
        or np.any(np.diff(offsets) < 0)
    ):
        bad(f"offsets {offsets.tolist()} do not partition {M} neurons into {L} labels")
    sizes = np.diff(offsets)
    if not np.array_equal(ncls, np.repeat(np.arange(L, dtype=np.int32), sizes)):
        bad("neuron labels do not match the offsets")
    if (
        a["counts"].shape != (M,)
        or a["log_averout"].shape != (M,)
        or a["positions"].shape != (M, 2)
    ):
        bad("per-neuron arrays do not have one entry per neuron")
    if np.any(a["counts"] < 1) or not np.all(np.isfinite(Wt)) or np.any(np.isnan(a["log_averout"])):
        bad("counts below 1 or non-finite weights")
    if np.any(a["log_averout"] > 0):
        bad("averOut above 1")
    if np.any(T < 0) or not np.array_equal(T, T.T) or np.any(T > np.diag(T)[None, :]):
        bad("label counts T are not a valid co-occurrence matrix")
    if np.any((sizes > 0) != (np.diag(T) > 0)):
        bad("labels with a map and labels with positive counts differ")
    NS = a["NS"]
    # S is the sum of the label-set sizes seen, which is the trace of T; N >= every label's count
    if NS.shape != (2,) or NS[0] < 1 or NS[1] != np.trace(T) or NS[0] < np.diag(T).max():
        bad(f"N, S = {NS.tolist()} do not agree with the label counts T")
    limit = MAX_ABS_VALUE_32 if Wt.dtype == np.float32 else MAX_ABS_VALUE
    if np.abs(Wt).max() > limit:
        bad(f"weights beyond {limit:g}")
    k = meta.get("k_nn")
    if not isinstance(k, int) or k < 1 or k > sizes[sizes > 0].min():
        bad(f"k_nn {k!r}")
    n_iter = meta.get("n_iter")
    if not isinstance(n_iter, list) or len(n_iter) != L:
        bad("n_iter")
    return {
        **{key: np.ascontiguousarray(a[key]) for key in _STATE_ARRAYS},
        "k_nn": k,
        "n_iter": n_iter,
        "n_features": int(A),
        "n_labels": int(L),
        "feature_names": _check_names(meta.get("feature_names"), A, bad),
    }
