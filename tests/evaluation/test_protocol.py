"""Protocol runners (mlsom.protocol): who sees which labels, chunking, windows, metadata."""

import json

import numpy as np
import pytest

import mlsom
from mlsom import SOMStreamClassifier
from mlsom.datasets import load
from mlsom.evaluation import MEASURES, StreamEvaluation, evaluate_predictions
from mlsom.protocol import evaluate, evaluate_many


@pytest.fixture(scope="module")
def ds():
    return load("MOA-Spher-5C-2A", n_instances=5000)


def som(**kw):
    return SOMStreamClassifier(grid_size=3, random_state=0, n_jobs=1, **kw)


def same_counts(a, b):
    np.testing.assert_array_equal(a.window_edges, b.window_edges)
    np.testing.assert_array_equal(a.label_counts, b.label_counts)
    assert len(a.example_counts) == len(b.example_counts)
    for x, y in zip(a.example_counts, b.example_counts, strict=True):
        np.testing.assert_array_equal(x, y)


def small_stream(n_train=30, n_test=100, L=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_train + n_test, 4))
    X[:, 0] = np.arange(-n_train, n_test)  # feature 0: the row's position in the test stream
    Y = (rng.random((n_train + n_test, L)) < 0.4).astype(np.uint8)
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


class Spy:
    """Records every call; predicts from the features only."""

    def __init__(self, kind, n_labels):
        self.kind = kind
        self.n_labels = n_labels
        self.calls = []

    def get_params(self):
        return {"n_labels": self.n_labels}

    def _guess(self, X):
        return (X[:, 1:2] < np.linspace(0.2, 0.8, self.n_labels)).astype(np.uint8)

    def fit(self, *args, **kwargs):
        self.calls.append(("fit", args, kwargs))
        return self

    def predict_stream(self, *args, **kwargs):
        self.calls.append(("predict_stream", args, kwargs))
        return self._guess(args[0])

    def predict(self, *args, **kwargs):
        self.calls.append(("predict", args, kwargs))
        return self._guess(args[0])

    def predict_learn(self, *args, **kwargs):
        self.calls.append(("predict_learn", args, kwargs))
        return self._guess(args[0])

    def partial_fit(self, *args, **kwargs):
        self.calls.append(("partial_fit", args, kwargs))
        return self


@pytest.mark.parametrize("kind", ["online", "batch"])
def test_online_and_batch_methods_never_see_a_test_label(kind):
    X_tr, Y_tr, X_te, Y_te = small_stream()
    spy = Spy(kind, 3)
    res = evaluate(
        spy,
        (X_te, Y_te),
        X_train=X_tr,
        Y_train=Y_tr,
        chunk_size=16,
        n_windows=10,
        keep_predictions=True,
    )
    name, args, kwargs = spy.calls[0]
    assert name == "fit" and not kwargs and len(args) == 2
    np.testing.assert_array_equal(args[0], X_tr)
    np.testing.assert_array_equal(args[1], Y_tr)
    rest = spy.calls[1:]
    call = "predict_stream" if kind == "online" else "predict"
    # only the one prediction call, with the features as its single argument, after one fit
    assert {c[0] for c in rest} == {call}
    assert all(len(args) == 1 and not kwargs for _, args, kwargs in rest)
    chunks = [args[0] for _, args, _ in rest]
    assert max(len(c) for c in chunks) == 16 and len(chunks) == 7
    np.testing.assert_array_equal(np.vstack(chunks), X_te)
    assert not any(np.shares_memory(c, Y_te) or np.shares_memory(c, X_te) for c in chunks)
    np.testing.assert_array_equal(res.unpacked_predictions(), spy._guess(X_te))
    same_counts(res, evaluate_predictions(Y_te, spy._guess(X_te), n_windows=10))


def test_online_som_is_only_called_through_predict_stream(ds):
    model = som()
    calls = []
    for attr in ("predict", "partial_fit", "fit"):
        if hasattr(model, attr):
            original = getattr(model, attr)

            def record(*args, _name=attr, _original=original, **kwargs):
                calls.append(_name)
                return _original(*args, **kwargs)

            setattr(model, attr, record)
    res = evaluate(model, ds)
    assert calls == ["fit"]
    assert model.n_seen_ == len(ds.X_train) + len(ds.X_stream)  # it adapted from the stream
    assert res.kind == "online"


def test_batch_method_is_never_updated_after_fit(ds):
    frozen = som()
    res = evaluate(frozen, ds, kind="batch", n_windows=20)
    reference = som().fit(ds.X_train, ds.Y_train)
    for a, b in zip(frozen.weights_, reference.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(frozen.T_, reference.T_)
    assert frozen.n_seen_ == reference.n_seen_ == len(ds.X_train)
    assert res.kind == "batch"
    same_counts(
        res, evaluate_predictions(ds.Y_stream, reference.predict(ds.X_stream), n_windows=20)
    )


class LastLabels:
    """Test-then-train learner that predicts the labels of the previous row."""

    kind = "incremental"

    def __init__(self):
        self.log = []

    def fit(self, X, Y):
        self.last = Y[-1].copy()
        return self

    def predict_learn(self, X, Y):
        out = np.empty_like(Y)
        for i in range(len(X)):
            row = int(X[i, 0])
            out[i] = self.last
            self.log.append(("predict", row))
            self.last = Y[i].copy()
            self.log.append(("learn", row))
        return out


@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_incremental_prediction_of_a_row_does_not_use_its_labels(chunk_size):
    X_tr, Y_tr, X_te, Y_te = small_stream()
    method = LastLabels()
    res = evaluate(
        method,
        (X_te, Y_te),
        X_train=X_tr,
        Y_train=Y_tr,
        chunk_size=chunk_size,
        n_windows=10,
        keep_predictions=True,
    )
    n = len(X_te)
    assert method.log == [(step, i) for i in range(n) for step in ("predict", "learn")]
    expected = np.vstack([Y_tr[-1:], Y_te[:-1]])
    np.testing.assert_array_equal(res.unpacked_predictions(), expected)
    # changing the labels of row 37 changes the prediction of row 38 only
    Y_changed = Y_te.copy()
    Y_changed[37] = 1 - Y_changed[37]
    again = evaluate(
        LastLabels(),
        (X_te, Y_changed),
        X_train=X_tr,
        Y_train=Y_tr,
        chunk_size=chunk_size,
        n_windows=10,
        keep_predictions=True,
    )
    diff = np.flatnonzero((again.unpacked_predictions() != res.unpacked_predictions()).any(1))
    assert diff.tolist() == [38]


def test_incremental_method_cannot_alter_the_truth():
    X_tr, Y_tr, X_te, Y_te = small_stream()

    class Vandal(LastLabels):
        def predict_learn(self, X, Y):
            Y[:] = 1  # the runner gives a copy: the truth stays intact
            return np.ones_like(Y)

    res = evaluate(Vandal(), (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, n_windows=5)
    same_counts(res, evaluate_predictions(Y_te, np.ones_like(Y_te), n_windows=5))


def test_chunk_size_does_not_change_results(ds):
    results = [evaluate(som(), ds, chunk_size=c) for c in (1, 37, 1000, 10**6)]
    for res in results[1:]:
        same_counts(res, results[0])
    # and all of them equal one call over the whole stream
    whole = som().fit(ds.X_train, ds.Y_train).predict_stream(ds.X_stream)
    same_counts(results[0], evaluate_predictions(ds.Y_stream, whole))
    assert [r.chunk_size for r in results] == [1, 37, 1000, 10**6]


def _chunks(X, Y, sizes):
    lo = 0
    for s in sizes:
        yield X[lo : lo + s], Y[lo : lo + s]
        lo += s


def test_iterable_stream_matches_arrays(ds):
    reference = evaluate(som(), ds, chunk_size=500)
    n = len(ds.X_stream)
    rng = np.random.default_rng(3)
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(min(rng.integers(1, 1500), n - sum(sizes))))
    res = evaluate(
        som(),
        _chunks(ds.X_stream, ds.Y_stream, sizes),
        X_train=ds.X_train,
        Y_train=ds.Y_train,
        n_test=n,
        chunk_size=500,
        stream_name=ds.name,
    )
    same_counts(res, reference)
    assert res.stream == ds.name and res.n_test == n


def test_iterable_stream_with_fixed_windows():
    X_tr, Y_tr, X_te, Y_te = small_stream(n_test=95)
    spy = Spy("online", 3)
    res = evaluate(
        spy,
        _chunks(X_te, Y_te, [40, 40, 15]),
        X_train=X_tr,
        Y_train=Y_tr,
        window_size=20,
        chunk_size=8,
    )
    assert res.window_sizes.tolist() == [20, 20, 20, 20, 15]
    assert res.info["windows"] == {"window_size": 20}
    assert max(len(args[0]) for name, args, _ in spy.calls if name != "fit") == 8
    same_counts(res, evaluate_predictions(Y_te, spy._guess(X_te), window_size=20))


def test_iterable_stream_length_is_checked():
    X_tr, Y_tr, X_te, Y_te = small_stream(n_test=100)
    kw = {"X_train": X_tr, "Y_train": Y_tr, "n_windows": 5}
    with pytest.raises(ValueError, match="ended after 100 rows, 120"):
        evaluate(Spy("online", 3), _chunks(X_te, Y_te, [50, 50]), n_test=120, **kw)
    with pytest.raises(ValueError, match="more than the 80 rows"):
        evaluate(Spy("online", 3), _chunks(X_te, Y_te, [50, 50]), n_test=80, **kw)
    with pytest.raises(ValueError, match="n_test"):
        evaluate(Spy("online", 3), _chunks(X_te, Y_te, [50, 50]), **kw)
    with pytest.raises(ValueError, match="X_train and Y_train"):
        evaluate(Spy("online", 3), _chunks(X_te, Y_te, [100]), n_test=100)


def test_stream_arguments_are_checked(ds):
    with pytest.raises(ValueError, match="carries its training set"):
        evaluate(som(), ds, X_train=ds.X_train, Y_train=ds.Y_train)
    X_tr, Y_tr, X_te, Y_te = small_stream()
    with pytest.raises(ValueError, match="n_test=99"):
        evaluate(Spy("online", 3), (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, n_test=99)
    with pytest.raises(ValueError, match="labels"):
        evaluate(Spy("online", 3), (X_te, Y_te[:, :2]), X_train=X_tr, Y_train=Y_tr)
    with pytest.raises(ValueError, match="only 0 and 1"):
        evaluate(Spy("online", 3), (X_te, Y_te * 2), X_train=X_tr, Y_train=Y_tr)
    with pytest.raises(ValueError, match="larger than the test stream"):
        evaluate(Spy("online", 3), (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, n_windows=101)
    with pytest.raises(TypeError, match="stream must be"):
        evaluate(Spy("online", 3), 42, X_train=X_tr, Y_train=Y_tr)
    with pytest.raises(ValueError, match="zero_division"):
        evaluate(Spy("online", 3), (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, zero_division=2)


def test_method_interface_is_checked():
    X_tr, Y_tr, X_te, Y_te = small_stream()
    kw = {"X_train": X_tr, "Y_train": Y_tr, "n_windows": 5}

    class NoKind:
        def fit(self, X, Y):
            return self

    with pytest.raises(ValueError, match="kind must be one of"):
        evaluate(NoKind(), (X_te, Y_te), **kw)
    with pytest.raises(TypeError, match="predict_stream"):
        evaluate(NoKind(), (X_te, Y_te), kind="online", **kw)

    class WrongShape(Spy):
        def predict_stream(self, X):
            return np.zeros((len(X), 2), np.uint8)

    with pytest.raises(ValueError, match=r"returned shape \(16, 2\), expected \(16, 3\)"):
        evaluate(WrongShape("online", 3), (X_te, Y_te), chunk_size=16, **kw)

    class Scores(Spy):
        def predict_stream(self, X):
            return np.full((len(X), 3), 0.7)

    with pytest.raises(ValueError, match="other than 0 and 1"):
        evaluate(Scores("online", 3), (X_te, Y_te), **kw)


def test_evaluate_many_is_one_pass_with_separate_results(ds):
    sizes = [700] * 6 + [300]
    consumed = []

    def stream():
        for X, Y in _chunks(ds.X_stream, ds.Y_stream, sizes):
            consumed.append(len(X))
            yield X, Y

    class Mutator(SOMStreamClassifier):
        def predict_stream(self, X):
            out = super().predict_stream(X)
            X[:] = 0.0  # may not affect the other methods
            return out

    results = evaluate_many(
        {
            "adaptive": som(),
            "frozen": som(),
            "mutator": Mutator(grid_size=3, random_state=0, n_jobs=1),
        },
        stream(),
        X_train=ds.X_train,
        Y_train=ds.Y_train,
        n_test=len(ds.X_stream),
        kinds={"frozen": "batch"},
        seeds={"frozen": 11},
        chunk_size=250,
    )
    assert consumed == sizes  # read once
    assert list(results) == ["adaptive", "frozen", "mutator"]
    same_counts(results["adaptive"], evaluate(som(), ds))
    same_counts(results["mutator"], results["adaptive"])
    same_counts(results["frozen"], evaluate(som(), ds, kind="batch"))
    assert results["frozen"].kind == "batch" and results["frozen"].seed == 11
    assert results["adaptive"].seed == 0  # from random_state
    assert not np.array_equal(results["frozen"].label_counts, results["adaptive"].label_counts)


def test_evaluate_many_names_and_identity():
    X_tr, Y_tr, X_te, Y_te = small_stream()
    kw = {"X_train": X_tr, "Y_train": Y_tr, "n_windows": 5}
    res = evaluate_many([Spy("online", 3), Spy("batch", 3), LastLabels()], (X_te, Y_te), **kw)
    assert list(res) == ["Spy", "Spy-2", "LastLabels"]
    assert [r.kind for r in res.values()] == ["online", "batch", "incremental"]
    spy = Spy("online", 3)
    with pytest.raises(ValueError, match="appears twice"):
        evaluate_many({"a": spy, "b": spy}, (X_te, Y_te), **kw)
    with pytest.raises(ValueError, match="unknown methods"):
        evaluate_many({"a": spy}, (X_te, Y_te), kinds={"b": "batch"}, **kw)
    with pytest.raises(ValueError, match="no method"):
        evaluate_many({}, (X_te, Y_te), **kw)


def test_som_run_on_a_small_stream(ds):
    model = som()
    res = evaluate(model, ds)
    curve = res.curve("macro_f1")
    assert curve.shape == (50,)
    assert np.all((curve >= 0) & (curve <= 1))
    per_window = res.curve("macro_f1", cumulative=False)
    assert per_window.shape == (50,) and np.all((per_window >= 0) & (per_window <= 1))
    assert res.mean() == pytest.approx(curve.mean())
    assert res.mean() > 0.5  # far better than chance on this stream
    for m in MEASURES:
        assert np.all(np.isfinite(res.curve(m)))
    # metadata
    assert res.method == "SOMStreamClassifier" and res.kind == "online"
    assert res.stream == "MOA-Spher-5C-2A" and res.seed == 0
    assert res.params == model.get_params() and res.version == mlsom.__version__
    assert res.zero_division == 1 and res.label_names == ds.label_names
    assert res.n_train == 500 and res.n_test == 4500 and res.chunk_size == 1000
    assert res.fit_seconds > 0 and res.stream_seconds > 0 and res.instances_per_second > 0
    assert res.info["stream_info"]["split"] == "prefix"
    back = StreamEvaluation.from_dict(json.loads(json.dumps(res.to_dict(), allow_nan=False)))
    np.testing.assert_array_equal(back.curve("macro_f1"), curve)
    assert back.fit_seconds == res.fit_seconds and back.params == res.params


class ReusedBuffer:
    """An incremental method whose predict returns a buffer that partial_fit then writes the
    labels into: the counted predictions must be those returned, all zeros."""

    kind = "incremental"

    def fit(self, X, Y):
        self.buf = np.zeros((1000, Y.shape[1]), dtype=np.uint8)
        return self

    def predict(self, X):
        self.buf[: len(X)] = 0
        return self.buf[: len(X)]

    def partial_fit(self, X, Y):
        self.buf[: len(Y)] = Y
        return self

    def predict_learn(self, X, Y):  # pragma: no cover - the label protocol calls the pair
        return np.zeros_like(Y)


def test_a_prediction_is_counted_before_its_labels_are_learnt():
    """The labels leaked into a reused buffer's counted predictions: macro F 1.0 for all zeros."""
    X_tr, Y_tr, X_te, Y_te = small_stream()
    res = evaluate_many(
        {"buffer": ReusedBuffer()},
        (X_te, Y_te),
        X_train=X_tr,
        Y_train=Y_tr,
        n_windows=5,
        label_fraction=1.0,
        label_delay=0,
        keep_predictions=True,
    )["buffer"]
    assert not res.unpacked_predictions().any()
    assert res.total("micro_f1") == 0.0


def test_names_are_checked_before_anything_runs():
    X_tr, Y_tr, X_te, Y_te = small_stream()
    kw = {"X_train": X_tr, "Y_train": Y_tr, "n_windows": 5}
    spy = Spy("online", 3)
    with pytest.raises(TypeError, match=r"name must be a str or None, got 5"):
        evaluate(spy, (X_te, Y_te), name=5, **kw)
    assert not spy.calls  # nothing ran (it ran the whole stream, then failed)
    with pytest.raises(ValueError, match=r"names \['1'\] are given twice once written as text"):
        evaluate_many({1: Spy("online", 3), "1": Spy("online", 3)}, (X_te, Y_te), **kw)


def test_a_stream_unlike_its_training_set_is_refused():
    X_tr, Y_tr, X_te, Y_te = small_stream()
    with pytest.raises(ValueError, match=r"Y_train has no label column"):
        evaluate(Spy("online", 0), (X_te, Y_te[:, :0]), X_train=X_tr, Y_train=Y_tr[:, :0])
    with pytest.raises(ValueError, match=r"X_stream has 3 features, X_train 4"):
        evaluate(Spy("online", 3), (X_te[:, :3], Y_te), X_train=X_tr, Y_train=Y_tr)
    with pytest.raises(ValueError, match=r"X of stream chunk 0 has 3 features, X_train 4"):
        evaluate(
            Spy("online", 3), iter([(X_te[:, :3], Y_te)]), X_train=X_tr, Y_train=Y_tr,
            window_size=10,
        )  # fmt: skip


class FailsLate(Spy):
    def predict_stream(self, X):
        if len(self.calls) > 2:
            raise RuntimeError("out of disk")
        return super().predict_stream(X)


def test_an_error_inside_a_method_says_which_method_and_where():
    """Its type and message stay; a note names the method (the traceback alone did)."""
    X_tr, Y_tr, X_te, Y_te = small_stream()
    methods = {"fine": Spy("online", 3), "late": FailsLate("online", 3)}
    with pytest.raises(RuntimeError, match="out of disk") as info:
        evaluate_many(methods, (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, chunk_size=20)
    assert info.value.__notes__ == [
        "(in method 'late', 40 test rows into the stream, mlsom.protocol)"
    ]
