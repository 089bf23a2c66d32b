"""Determinism: what the same inputs must reproduce bit for bit.

* Two fits with the same seed give identical fitted models: every fitted attribute, bitwise.
* One thread or two (on inputs large enough for the parallel kernels to be used) changes nothing.
* The predictions and the final model of ``predict_stream`` do not depend on how the stream is cut
  into chunks (1, 7, 1000 rows, random sizes, empty chunks in between, ``predict_one``).
* ``predict`` from 8 concurrent Python threads gives the serial result.
* Saving mid-stream, loading and going on gives the uninterrupted run's predictions and state.

Each property is checked for float64 and float32 input (the model may keep float32 input in
float32; only the runs being compared are required to agree).
"""

import copy
import pickle
import threading
import warnings

import numpy as np
import pytest

import mlsom
from mlsom import ConvergenceWarning, SOMStreamClassifier

FITTED_ATTRIBUTES = (
    "weights_",
    "neuron_counts_",
    "averout_",
    "log_averout_",
    "grid_positions_",
    "T_",
    "P_",
    "n_seen_",
    "cardinality_",
    "k_nn_",
    "n_iter_",
    "n_features_in_",
    "n_labels_",
    "acceptance_offset_",
    "label_acceptance_offsets_",
    "label_offsets_",
    "labelled_cardinality_",
)
DTYPES = [np.float64, np.float32]


def make_stream(n, n_features=6, n_labels=4, seed=0, dtype=np.float64):
    """Clustered instances with correlated labels: label j pulls x towards centre j."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_labels, n_features))
    Y = (rng.random((n, n_labels)) < 0.3).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, n_labels, n)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(scale=0.7, size=(n, n_features))
    return X.astype(dtype), Y


def assert_same_value(a, b, what):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), what
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_same_value(u, v, f"{what}[{i}]")
    elif a is None or b is None:
        assert a is None and b is None, what
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, what
        # bitwise: NaN payloads and the sign of zero included
        assert a.tobytes() == b.tobytes(), what
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), (what, a, b)


def assert_same_model(a, b):
    for name in FITTED_ATTRIBUTES:
        assert_same_value(getattr(a, name), getattr(b, name), name)


# ---------------------------------------------------------------------------- fitting


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "params",
    [
        {"grid_size": 3},
        {"grid_size": 4, "neighborhood": "gaussian", "averout_distance": "sqeuclidean"},
        {"grid_size": 2, "min_neuron_size": 1, "zero_cooccurrence": "skip"},
    ],
    ids=["bubble", "gaussian-sq", "skip"],
)
def test_same_seed_gives_a_bitwise_identical_model(params, dtype):
    X, Y = make_stream(300, dtype=dtype)
    a = SOMStreamClassifier(random_state=7, **params).fit(X, Y)
    b = SOMStreamClassifier(random_state=7, **params).fit(X.copy(), Y.copy())
    assert_same_model(a, b)
    # a Generator seeded alike gives the same model as the integer seed
    c = SOMStreamClassifier(random_state=np.random.default_rng(7), **params).fit(X, Y)
    assert_same_model(a, c)
    # refitting the same object gives the same model again
    assert_same_model(a, copy.deepcopy(a).fit(X, Y))


@pytest.fixture(scope="module")
def big(request):
    """A training set for which every map's batch training runs on several threads."""
    X, Y = make_stream(3000, n_features=24, n_labels=2, seed=3)
    return X, Y


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_thread_and_two_threads_give_the_same_model(big, dtype):
    X, Y = big
    X = X.astype(dtype)
    grid = 10
    threshold = getattr(mlsom._som, "_PARALLEL_MIN_WORK", 4_000_000)
    smallest_map = int(Y.sum(axis=0).min())
    # rows x neurons x features of the smallest map's training: above the parallel threshold
    assert smallest_map * grid * grid * X.shape[1] > max(threshold, 4_000_000)
    params = {"grid_size": grid, "n_epochs": 6, "max_epochs": 10, "random_state": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # few epochs keep the test short
        one = SOMStreamClassifier(n_jobs=1, **params).fit(X, Y)
        two = SOMStreamClassifier(n_jobs=2, **params).fit(X, Y)
    assert_same_model(one, two)
    # frozen scoring of a large chunk, on one thread and on two
    Z, _ = make_stream(6000, n_features=24, n_labels=2, seed=4, dtype=dtype)
    n_neurons = sum(w.shape[0] for w in one.weights_)
    assert Z.shape[0] * n_neurons * Z.shape[1] > max(threshold, 4_000_000)
    p1 = one.set_params(n_jobs=1).predict(Z)
    p2 = one.set_params(n_jobs=2).predict(Z)
    np.testing.assert_array_equal(p1, p2)
    # and the stream, which is sequential, from both models
    np.testing.assert_array_equal(one.predict_stream(Z), two.predict_stream(Z))
    assert_same_model(one, two)


# ---------------------------------------------------------------------------- streaming


def _chunkings(n, rng):
    sizes = rng.integers(0, 300, size=n)  # zero-size chunks included
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    random_edges = cuts[cuts < n].tolist() + [n]
    return {
        "whole": [0, n],
        "rows of 1": list(range(n + 1)),
        "rows of 7": list(range(0, n, 7)) + [n],
        "rows of 1000": list(range(0, n, 1000)) + [n],
        "random sizes": random_edges,
    }


@pytest.mark.parametrize("variant", ["paper", "robust"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_predict_stream_does_not_depend_on_the_chunking(dtype, variant):
    X, Y = make_stream(2500, seed=5, dtype=dtype)
    base = SOMStreamClassifier(grid_size=3, random_state=2, variant=variant).fit(X[:300], Y[:300])
    stream = X[300:]
    n = stream.shape[0]
    results = {}
    for name, edges in _chunkings(n, np.random.default_rng(9)).items():
        model = copy.deepcopy(base)
        parts = [
            model.predict_stream(stream[lo:hi])
            for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        ]
        results[name] = (np.vstack(parts), model)
    ref_out, ref_model = results.pop("whole")
    assert ref_out.shape == (n, 4)
    for name, (out, model) in results.items():
        np.testing.assert_array_equal(out, ref_out, err_msg=name)
        assert_same_model(model, ref_model)
    # one instance at a time with predict_one
    model = copy.deepcopy(base)
    ones = np.array([[d[j] for j in range(4)] for d in map(model.predict_one, stream[:400])])
    np.testing.assert_array_equal(ones, ref_out[:400])


@pytest.mark.parametrize("dtype", DTYPES)
def test_predict_from_8_threads_equals_the_serial_result(big, dtype):
    X, Y = big
    X = X.astype(dtype)
    model = SOMStreamClassifier(grid_size=6, n_epochs=10, random_state=0, n_jobs=2).fit(X, Y)
    Z, _ = make_stream(4000, n_features=24, n_labels=2, seed=8, dtype=dtype)
    chunks = [Z, Z[:7], Z[1000:1001], Z[:0], Z[::3]]
    serial = [model.predict(c) for c in chunks]
    state = pickle.dumps(model)
    barrier = threading.Barrier(8)
    results, errors = {}, []

    def work(i):
        try:
            barrier.wait()
            for rep in range(3):
                for k, c in enumerate(chunks):
                    results[(i, rep, k)] = model.predict(c)
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 8 * 3 * len(chunks)
    for (_, _, k), out in results.items():
        np.testing.assert_array_equal(out, serial[k])
    assert pickle.dumps(model) == state  # predict changed nothing


# ---------------------------------------------------------------------------- model files


@pytest.mark.parametrize("variant", ["paper", "robust"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("split", [1, 777])
def test_save_mid_stream_load_and_continue_equals_the_uninterrupted_run(
    tmp_path, dtype, split, variant
):
    X, Y = make_stream(2300, seed=6, dtype=dtype)
    fit_params = {"grid_size": 3, "neighborhood": "gaussian", "random_state": 4, "variant": variant}
    uninterrupted = SOMStreamClassifier(**fit_params).fit(X[:300], Y[:300])
    interrupted = copy.deepcopy(uninterrupted)
    stream = X[300:]
    expected = uninterrupted.predict_stream(stream)

    first = interrupted.predict_stream(stream[:split])
    path = tmp_path / "mid-stream.npz"
    interrupted.save(path)
    resumed = SOMStreamClassifier.load(path)
    rest = resumed.predict_stream(stream[split:])
    np.testing.assert_array_equal(np.vstack([first, rest]), expected)
    for name in FITTED_ATTRIBUTES:
        assert_same_value(getattr(resumed, name), getattr(uninterrupted, name), name)
    # saving both final models writes the same arrays
    resumed.save(tmp_path / "a.npz")
    uninterrupted.save(tmp_path / "b.npz")
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        assert a.files == b.files
        for key in a.files:
            assert_same_value(a[key], b[key], key)


@pytest.mark.parametrize("dtype", DTYPES)
def test_save_load_save_is_a_fixed_point(tmp_path, dtype):
    X, Y = make_stream(400, seed=2, dtype=dtype)
    model = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:300], Y[:300])
    model.predict_stream(X[300:])
    model.save(tmp_path / "one.npz")
    again = SOMStreamClassifier.load(tmp_path / "one.npz")
    again.save(tmp_path / "two.npz")
    with np.load(tmp_path / "one.npz") as a, np.load(tmp_path / "two.npz") as b:
        for key in a.files:
            assert_same_value(a[key], b[key], key)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
