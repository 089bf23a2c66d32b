"""Frozen scoring on dask: ``predict`` of a fitted model mapped over a dask array or dataframe.

A data set larger than one machine's memory is scored block by block, on the threads of this
process or on the workers of a ``dask.distributed`` cluster (the ``experiments`` extra brings
dask[distributed]). The fitted model travels to each worker once, not once per block: it is one
key of the task graph (or one scattered future), on which every block's task depends. See
docs/scale-out.md.

``import mlsom`` never imports dask; this module imports ``dask`` and ``dask.array`` when it is
imported itself, and ``dask.dataframe`` (which needs pandas and pyarrow) only when given a dask
DataFrame.
"""

import pickle
import sys

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
except ModuleNotFoundError as exc:
    if exc.name is None or exc.name.split(".")[0] != "dask":
        raise
    raise ModuleNotFoundError(
        "mlsom.dask needs dask, which is not installed: install the experiments extra "
        "(pip install 'mlsom[experiments]') or dask itself "
        "(pip install 'dask[distributed]>=2024.1')",
        name="dask",
    ) from None

from mlsom import _names
from mlsom._som import SOMStreamClassifier
from mlsom._validation import describe, effective_n_threads

__all__ = ["predict"]


def predict(model, X, *, client=None, n_jobs=1):
    """Frozen ``model.predict`` over a dask array or dataframe, lazily, one task per block.

    Each block of rows is scored by ``model.predict`` where dask runs the task (a thread of this
    process, or a worker of a ``dask.distributed`` cluster); the blocks' predictions are exactly
    those of ``model.predict`` on the whole data set. Nothing is computed until the result is
    (``.compute()``, ``.to_parquet(...)``, ``dask.array.to_npy_stack(...)``, ...).

    The model is copied when ``predict`` is called (a pickle round trip): refitting or adapting
    ``model`` afterwards does not change the result. The copy is one key of the task graph (or,
    with ``client``, one future scattered to every worker), on which every block depends: each
    worker receives and unpickles it once, however many blocks it scores, and keeps it in memory
    until the computation ends.

    Parameters
    ----------
    model : SOMStreamClassifier
        A fitted model.
    X : dask.array.Array of shape (n_samples, n_features), or dask.dataframe.DataFrame
        The rows to score, of a real or boolean dtype, in blocks of rows. An array whose
        columns are split into several chunks is rechunked to one column chunk (each block then
        holds whole rows). A DataFrame has one column per feature, in the order of
        ``model.feature_names_in_`` when the model was fitted on named features (the names are
        checked, as ``model.predict`` checks them). NumPy arrays and other in-memory data are
        refused: ``model.predict(X)`` scores them, or wrap them with
        ``dask.array.from_array(X, chunks=(rows, -1))``.
    client : distributed.Client or None, default=None
        None: the model is one key of the graph, shipped with it whichever scheduler computes
        the result (threads of this process, processes, or a distributed cluster: each worker
        fetches it once from the scheduler or a peer). A ``Client``: the model is scattered now
        to every worker of that client's cluster (``client.scatter(..., broadcast=True)``) and
        the graph refers to that future: the result must then be computed on that cluster
        while the returned collection exists.
    n_jobs : int or None, default=1
        Threads of each block's ``predict`` (the model's ``n_jobs`` parameter, resolved on the
        worker: None all its cores, -1 all, -2 all but one, capped at its cores). dask already
        runs one task per worker thread, so the default 1 keeps the cores from being
        oversubscribed; with one dask thread per worker (``--nthreads 1``), None lets each
        block use all the worker's cores. Results never depend on it.

    Returns
    -------
    Y : dask.array.Array of shape (n_samples, n_labels), or dask.dataframe.DataFrame
        For an array: the 0/1 label sets, lazily, in row blocks matching X's, of the dtype of
        ``model.predict`` (uint8 unless the model was fitted on labels of another dtype). For
        a DataFrame: a DataFrame with X's index and partitions and one column per label,
        named ``"label_0"``, ``"label_1"``, ...

    Raises
    ------
    TypeError
        ``model`` is not a SOMStreamClassifier, ``X`` is not a dask array or DataFrame or does
        not hold real numbers, ``client`` is not a Client.
    ValueError
        ``model`` is not fitted, or ``X`` has a wrong number of columns (or unknown ones) or
        other feature names than the model. Bad values (NaN, infinity, too large) are found when
        their block is computed: ``model.predict``'s error, with the block's place in ``X``.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from mlsom import SOMStreamClassifier
    >>> import mlsom.dask
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 4))
    >>> Y = (X[:, :3] > 0).astype(np.uint8)
    >>> model = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    >>> lazy = mlsom.dask.predict(model, da.from_array(X, chunks=(250, -1)))
    >>> lazy.shape, lazy.numblocks
    ((1000, 3), (4, 1))
    >>> bool((lazy.compute() == model.predict(X)).all())
    True
    """
    n_features, names, empty = _check_model(model)
    effective_n_threads(n_jobs)  # validated here; resolved on the worker, against its cores
    _check_client(client)
    frame = _dask_frame_module(X)
    if frame is not None:
        X = _check_frame(frame, X, n_features, names)
    else:
        X = _check_array(X, n_features)
    shipped = _ship(model, client, n_jobs)
    if frame is not None:
        return _map_partitions(X, shipped, empty)
    return _map_blocks(X, shipped, empty)


# --------------------------------------------------------------------------- graph


def _ship(model, client, n_jobs):
    """A frozen copy of ``model`` (``n_jobs`` threads per block), as one delayed key of the
    graph, or scattered to every worker of ``client``."""
    blob = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    frozen = pickle.loads(blob)
    frozen.set_params(n_jobs=n_jobs)
    if client is None:
        return dask.delayed(frozen, name=f"mlsom-model-{tokenize(blob, n_jobs)}", pure=True)
    return client.scatter(frozen, broadcast=True, hash=False)


def _map_partitions(X, shipped, empty):
    """The lazy DataFrame of the label columns, one ``_predict_partition`` per partition."""
    import pandas as pd

    columns = [f"label_{j}" for j in range(empty.shape[1])]
    meta = pd.DataFrame(
        {c: np.empty(0, dtype=empty.dtype) for c in columns}, index=X._meta.index[:0]
    )
    return X.map_partitions(
        _predict_partition,
        shipped,
        columns,
        meta=meta,
    )


def _map_blocks(X, shipped, empty):
    """The lazy array of the label sets, one ``_predict_block`` per block of rows."""
    return da.map_blocks(
        _predict_block,
        X,
        shipped,
        chunks=(X.chunks[0], (empty.shape[1],)),
        dtype=empty.dtype,
        meta=np.empty((0, 0), dtype=empty.dtype),
        # one name per model and X (older dask takes it as a prefix and adds a token)
        name=f"mlsom-predict-{tokenize(shipped.key, X.name)}",
    )


# --------------------------------------------------------------------------- checks


def _check_model(model):
    """(n_features, feature names or None, an empty prediction) of a fitted model."""
    if not isinstance(model, SOMStreamClassifier):
        raise TypeError(
            f"model must be a fitted mlsom.SOMStreamClassifier, got {describe(model)} "
            f"({type(model).__name__})"
        )
    n_features = model.n_features_in_  # NotFittedError (a ValueError) when not fitted
    try:
        names = [str(c) for c in model.feature_names_in_]
    except AttributeError:
        names = None
    # the dtype and width of the predictions, as model.predict gives them
    empty = np.asarray(model.predict(np.zeros((0, n_features))))
    return n_features, names, empty


def _check_client(client):
    """Refuses a ``client`` that is neither None nor a Client (no ``scatter`` method)."""
    if client is not None and not callable(getattr(client, "scatter", None)):
        raise TypeError(
            f"client must be a distributed.Client or None, got {describe(client)} "
            f"({type(client).__name__})"
        )


def _dask_frame_module(X):
    """dask.dataframe when X is a dask DataFrame or Series, else None (without importing it: a
    dask DataFrame can only exist once dask.dataframe is imported)."""
    dd = sys.modules.get("dask.dataframe")
    if dd is None or not isinstance(X, (dd.DataFrame, dd.Series)):
        return None
    return dd


def _refuse_input(X):
    kind = f"{type(X).__module__}.{type(X).__name__}"
    hint = ""
    if dask.is_dask_collection(X):
        hint = ": convert it to a dask array or DataFrame first"
    elif hasattr(X, "__array__") or isinstance(X, list | tuple):
        hint = (
            ": in-memory data is scored by model.predict(X), or wrap it as "
            "dask.array.from_array(X, chunks=(rows, -1))"
        )
    raise TypeError(f"X must be a dask.array.Array or a dask.dataframe.DataFrame, got {kind}{hint}")


def _check_array(X, n_features):
    """A dask array of n_features columns in one column chunk (rechunked if split)."""
    if not isinstance(X, da.Array):
        _refuse_input(X)
    if X.ndim != 2:
        raise ValueError(
            f"X must be 2-D (n_samples, n_features), got a dask array of shape {X.shape}"
        )
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must hold real numbers, got a dask array of dtype {X.dtype}")
    if any(np.isnan(c) for c in X.chunks[1]):
        raise ValueError(
            f"X has an unknown number of columns (column chunks {X.chunks[1]}); compute them "
            f"first (X.compute_chunk_sizes())"
        )
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with {n_features}")
    if X.numblocks[1] > 1:  # each block must hold whole rows
        X = X.rechunk({1: -1})
    return X


def _check_frame(dd, X, n_features, names):
    """A dask DataFrame of n_features real columns, named as the model's features if both are."""
    if isinstance(X, dd.Series):
        raise TypeError(
            "X is a dask Series; pass a DataFrame with one column per feature (X.to_frame())"
        )
    cols = list(X.columns)
    named = names is not None and all(isinstance(c, str) for c in cols)
    if len(cols) != n_features:
        raise ValueError(
            f"X has {len(cols)} features (columns), but the model was fitted with {n_features}"
            + (
                f": X has {_names.show(cols)}, the model {_names.show(names)} "
                f"({_names.difference(cols, names)})"
                if named
                else ""
            )
        )
    if named and cols != names:
        raise ValueError(
            f"X has feature names {_names.show(cols)}, but the model was fitted with "
            f"{_names.show(names)}: {_names.difference(cols, names)}; pass the columns in the "
            f"order of feature_names_in_ (X[list(model.feature_names_in_)])"
        )
    bad = [(c, d) for c, d in X.dtypes.items() if getattr(d, "kind", "O") not in "biuf"]
    if bad:
        c, d = bad[0]
        raise TypeError(
            f"X must hold real numbers, but column {c!r} has dtype {d}"
            + (f" ({len(bad)} such columns)" if len(bad) > 1 else "")
        )
    return X


# --------------------------------------------------------------------------- tasks


def _predict_block(block, model, block_info=None):
    """``model.predict`` of one block of rows; an error says where the block lies in X."""
    try:
        return model.predict(block)
    except (TypeError, ValueError) as exc:
        where = "X"
        info = (block_info or {}).get(0)
        if info is not None:
            i = info["chunk-location"][0]
            lo, hi = info["array-location"][0]
            where = f"block {i} of X"
            if np.isfinite(lo) and np.isfinite(hi):
                where += f": rows {lo} to {hi - 1}, the row numbers above counted from {lo}"
        raise _located(exc, where) from None


def _predict_partition(part, model, columns, partition_info=None):
    """``model.predict`` of one partition, as a DataFrame of its index and the label columns."""
    import pandas as pd

    try:
        Y = np.asarray(model.predict(part))
    except (TypeError, ValueError) as exc:
        where = "X"
        if partition_info is not None:
            where = (
                f"partition {partition_info['number']} of X, the row numbers above counted "
                f"from its first row"
            )
        raise _located(exc, where) from None
    return pd.DataFrame(Y, index=part.index, columns=columns)


def _located(exc, where):
    """``exc`` with ``(in <where>)`` added to its message, of the same type where possible."""
    try:
        new = type(exc)(f"{exc} (in {where})")
    except Exception:  # an exception type that takes other arguments
        return exc
    return new
