"""mlsom.dask: frozen predict over dask arrays and dataframes, on threads and on a LocalCluster.

The cluster (2 worker processes of 1 thread each) is started once for the module. The checks:
the predictions equal in-process ``model.predict`` exactly; the model is one key of the graph and
each worker unpickles it at most once however many blocks it scores; bad input is refused up
front with the argument named.
"""

import logging
import pickle
import subprocess
import sys

import numpy as np
import pytest

import mlsom

da = pytest.importorskip("dask.array")  # dask is not installable everywhere (win_arm64)
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

import mlsom.dask  # noqa: E402

L, A = 4, 6


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(L, A))
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(size=(n, A))
    return X, Y


@pytest.fixture(scope="module")
def data():
    X, Y = make_data(4000)
    model = mlsom.SOMStreamClassifier(grid_size=4, random_state=0).fit(X[:600], Y[:600])
    return model, X[600:]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: 8787 may be taken
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        c.run(_install_counters)
        yield c


# --------------------------------------------------------------------------- worker counters


def _install_counters():
    """On a worker: count unpickled models and predict calls (once per process; idempotent)."""
    cls = mlsom.SOMStreamClassifier
    if "_dask_test_counts" not in cls.__dict__:
        setstate, predict = cls.__setstate__, cls.predict

        def counting_setstate(self, state):
            cls._dask_test_counts["unpickled"] += 1
            setstate(self, state)

        def counting_predict(self, X):
            cls._dask_test_counts["predict"] += 1
            return predict(self, X)

        cls.__setstate__, cls.predict = counting_setstate, counting_predict
    cls._dask_test_counts = {"unpickled": 0, "predict": 0}


def _read_counters():
    return dict(mlsom.SOMStreamClassifier._dask_test_counts)


def counts(client):
    """{worker: {"unpickled": n, "predict": n}} since the last reset, then a reset."""
    out = client.run(_read_counters)
    client.run(_install_counters)
    return out


def model_carriers(collection):
    """Keys of the graph whose task carries a SOMStreamClassifier (its pickle names the class;
    a task that calls mlsom.dask's functions names only them)."""
    import cloudpickle

    return [
        key
        for key, task in dict(collection.__dask_graph__()).items()
        if b"SOMStreamClassifier" in cloudpickle.dumps(task)
    ]


# --------------------------------------------------------------------------- in this process


@pytest.mark.parametrize(
    "chunks",
    [(500, -1), (1234, -1), ((0, 1, 999, 2400), -1), (700, 2)],
    ids=["even", "uneven", "empty-and-single-row", "columns-split"],
)
def test_threads_give_model_predict(data, chunks):
    model, X = data
    Xd = da.from_array(X, chunks=chunks)
    out = mlsom.dask.predict(model, Xd)
    assert isinstance(out, da.Array)
    assert out.shape == (len(X), L)
    assert out.numblocks == (Xd.numblocks[0], 1)
    assert out.chunks[0] == Xd.chunks[0]
    got = out.compute(scheduler="threads")
    expected = model.predict(X)
    assert got.dtype == expected.dtype == out.dtype
    np.testing.assert_array_equal(got, expected)


def test_float32_rows_and_float32_model(data):
    model, X = data
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        mlsom.dask.predict(model, da.from_array(X32, chunks=(800, -1))).compute(),
        model.predict(X32),
    )
    X1, Y1 = make_data(600, seed=2)
    m32 = mlsom.SOMStreamClassifier(grid_size=4, random_state=0).fit(X1.astype(np.float32), Y1)
    assert m32.weights_[0].dtype == np.float32
    np.testing.assert_array_equal(
        mlsom.dask.predict(m32, da.from_array(X, chunks=(800, -1))).compute(), m32.predict(X)
    )


def test_the_model_is_copied_at_the_call(data):
    model, X = data
    model = pickle.loads(pickle.dumps(model))
    before = model.predict(X)
    out = mlsom.dask.predict(model, da.from_array(X, chunks=(1000, -1)), n_jobs=2)
    assert model.n_jobs is None  # the copy runs with n_jobs=2, the model is untouched
    model.predict_stream(X[::-1])  # adapts the model in place
    assert not np.array_equal(model.predict(X), before)
    np.testing.assert_array_equal(out.compute(), before)


def test_the_model_is_one_key_of_the_graph(data):
    model, X = data
    out = mlsom.dask.predict(model, da.from_array(X, chunks=(250, -1)))
    assert out.numblocks[0] == 14
    carriers = model_carriers(out)
    assert len(carriers) == 1, carriers
    assert str(carriers[0]).startswith("mlsom-model-")
    # the same model and data give the same keys (a deterministic token)
    again = mlsom.dask.predict(model, da.from_array(X, chunks=(250, -1)))
    assert set(dict(again.__dask_graph__())) == set(dict(out.__dask_graph__()))


def test_errors_in_a_block_say_where_it_lies(data):
    model, X = data
    X = X.copy()
    X[1234, 2] = np.nan
    out = mlsom.dask.predict(model, da.from_array(X, chunks=(500, -1)))
    with pytest.raises(ValueError, match=r"row 234, column 2.*block 2 of X: rows 1000 to 1499"):
        out.compute(scheduler="threads")


# --------------------------------------------------------------------------- dataframes


@pytest.fixture(scope="module")
def named():
    dd = pytest.importorskip("dask.dataframe")  # needs pandas, and pyarrow in dask >= 2025.1
    import pandas as pd

    X, Y = make_data(3000, seed=1)
    cols = [f"f{j}" for j in range(A)]
    frame = pd.DataFrame(X, columns=cols, index=np.arange(10_000, 13_000))
    model = mlsom.SOMStreamClassifier(grid_size=4, random_state=0).fit(frame[:500], Y[:500])
    return dd, pd, model, frame


def check_labels_frame(named, compute, **kw):
    dd, pd, model, frame = named
    ddf = dd.from_pandas(frame, npartitions=5)
    out = mlsom.dask.predict(model, ddf, **kw)
    assert isinstance(out, dd.DataFrame)
    assert list(out.columns) == [f"label_{j}" for j in range(L)]
    assert out.npartitions == 5
    got = compute(out)
    expected = model.predict(frame)
    pd.testing.assert_index_equal(got.index, frame.index)
    np.testing.assert_array_equal(got.to_numpy(), expected)
    assert all(got.dtypes == expected.dtype)


def test_dataframe_gives_a_dataframe_of_labels(named):
    check_labels_frame(named, lambda out: out.compute(scheduler="threads"))


def test_dataframe_columns_are_checked(named):
    dd, pd, model, frame = named
    ddf = dd.from_pandas(frame, npartitions=3)
    with pytest.raises(ValueError, match=r"X has feature names .* order of feature_names_in_"):
        mlsom.dask.predict(model, ddf[list(frame.columns[::-1])])
    with pytest.raises(ValueError, match="X has 5 features"):
        mlsom.dask.predict(model, ddf[list(frame.columns[:5])])
    with pytest.raises(TypeError, match="X is a dask Series"):
        mlsom.dask.predict(model, ddf["f0"])
    text = ddf.assign(f3=ddf["f3"].astype(str))
    with pytest.raises(TypeError, match="column 'f3' has dtype"):
        mlsom.dask.predict(model, text)
    bad = frame.copy()
    bad.iloc[1900, 1] = np.inf
    out = mlsom.dask.predict(model, dd.from_pandas(bad, npartitions=3))
    with pytest.raises(ValueError, match=r"NaN or infinity .* \(in partition 1 of X"):
        out.compute(scheduler="threads")


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_naming_the_argument(data):
    model, X = data
    Xd = da.from_array(X, chunks=(1000, -1))
    with pytest.raises(TypeError, match="model must be a fitted mlsom.SOMStreamClassifier"):
        mlsom.dask.predict(object(), Xd)
    with pytest.raises(ValueError, match="not fitted"):
        mlsom.dask.predict(mlsom.SOMStreamClassifier(), Xd)
    with pytest.raises(TypeError, match=r"X must be a dask.array.Array .* model.predict\(X\)"):
        mlsom.dask.predict(model, X)
    with pytest.raises(TypeError, match="X must be a dask.array.Array"):
        mlsom.dask.predict(model, X.tolist())
    with pytest.raises(TypeError, match="X must be a dask.array.Array .* convert it"):
        mlsom.dask.predict(model, dask.delayed(X))
    with pytest.raises(ValueError, match="X must be 2-D"):
        mlsom.dask.predict(model, Xd[:, 0])
    with pytest.raises(ValueError, match="X has 5 features, but the model was fitted with 6"):
        mlsom.dask.predict(model, Xd[:, :5])
    with pytest.raises(TypeError, match="X must hold real numbers.*dtype <U"):
        mlsom.dask.predict(model, Xd.astype(str))
    unknown = da.from_delayed(dask.delayed(X), shape=(len(X), np.nan), dtype=X.dtype)
    with pytest.raises(ValueError, match="X has an unknown number of columns"):
        mlsom.dask.predict(model, unknown)
    for n_jobs, err in [(0, ValueError), ("2", TypeError), (1.5, TypeError)]:
        with pytest.raises(err, match="n_jobs"):
            mlsom.dask.predict(model, Xd, n_jobs=n_jobs)
    with pytest.raises(TypeError, match="client must be a distributed.Client or None"):
        mlsom.dask.predict(model, Xd, client="tcp://127.0.0.1:8786")


def test_unknown_row_counts_are_fine(data):
    model, X = data
    rows = da.from_array(X, chunks=(1000, -1))
    unknown = rows[rows[:, 0] > -np.inf]  # a boolean mask: row counts unknown until computed
    assert np.isnan(unknown.shape[0])
    out = mlsom.dask.predict(model, unknown)
    np.testing.assert_array_equal(out.compute(), model.predict(X))


# --------------------------------------------------------------------------- on a cluster


@pytest.mark.parametrize("ship", ["graph", "scatter"])
def test_cluster_gives_model_predict_and_unpickles_the_model_once_per_worker(data, client, ship):
    model, X = data
    counts(client)
    Xd = da.from_array(X, chunks=(100, -1))  # 34 blocks
    out = mlsom.dask.predict(model, Xd, client=client if ship == "scatter" else None)
    got = client.compute(out).result()
    np.testing.assert_array_equal(got, model.predict(X))
    per_worker = counts(client)
    assert len(per_worker) == 2
    assert sum(c["predict"] for c in per_worker.values()) == Xd.numblocks[0]
    for worker, c in per_worker.items():
        # a worker that scored blocks holds one copy, whatever the number of blocks; a broadcast
        # copy was once seen fetched a second time under heavy load (a task started before the
        # scheduler knew the worker had it): at most 2 there, never one per block
        most = 2 if ship == "scatter" else 1
        assert (c["predict"] > 0) <= c["unpickled"] <= most, (worker, per_worker)
    # so one worker at least scored 17 blocks or more on a single copy
    assert max(c["predict"] for c in per_worker.values()) >= Xd.numblocks[0] // 2
    if ship == "scatter":  # broadcast: on every worker before any block runs
        assert all(c["unpickled"] >= 1 for c in per_worker.values()), per_worker


def test_cluster_with_n_jobs_none(data, client):
    model, X = data
    out = mlsom.dask.predict(model, da.from_array(X, chunks=(1700, -1)), n_jobs=None)
    np.testing.assert_array_equal(client.compute(out).result(), model.predict(X))
    counts(client)


def test_cluster_dataframe(named, client):
    check_labels_frame(named, lambda out: client.compute(out).result(), client=client)


# --------------------------------------------------------------------------- imports


def test_import_mlsom_does_not_import_dask():
    code = "import sys, mlsom; print(sorted(m for m in sys.modules if m.split('.')[0] == 'dask'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_dask_the_import_error_names_the_extra(monkeypatch):
    import importlib

    monkeypatch.setitem(sys.modules, "dask", None)  # "import dask" fails as if not installed
    monkeypatch.delitem(sys.modules, "mlsom.dask")
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'mlsom\[experiments\]'"):
        importlib.import_module("mlsom.dask")
