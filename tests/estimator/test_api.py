"""The estimator's contract: validation, errors, parameters, persistence, threads, determinism."""

import copy
import io
import os
import pickle
import threading

import numpy as np
import pytest

import mlsom
from mlsom import ConvergenceWarning, NotFittedError, SOMStreamClassifier, _core, _testing
from tests.helpers.streams import pulled_clusters


@pytest.fixture(scope="module")
def data():
    return pulled_clusters()


@pytest.fixture(scope="module")
def fitted(data):
    X, Y = data
    return SOMStreamClassifier(grid_size=3, random_state=1).fit(X[:200], Y[:200])


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (lambda X: X[:, :, None], ValueError, r"X must be 2-D .* got shape \(200, 6, 1\)"),
        (lambda X: X[0], ValueError, r"X must be 2-D .*reshape\(1, -1\)"),
        (
            lambda X: np.where(np.arange(6) == 2, np.nan, X),
            ValueError,
            r"NaN or infinity .*row 0, column 2",
        ),
        (
            lambda X: np.where(np.arange(6) == 5, np.inf, X),
            ValueError,
            r"NaN or infinity .*column 5: inf",
        ),
        (lambda X: X.astype(str), TypeError, r"X must hold real numbers"),
        (lambda X: X + 1j, TypeError, r"X must hold real numbers"),
        (lambda X: X[:, :0], ValueError, r"X has no feature column"),
        (lambda X: X * 1e200, ValueError, r"too large"),
    ],
)
def test_fit_rejects_bad_X(data, bad, exc, match):
    X, Y = data
    with pytest.raises(exc, match=match):
        SOMStreamClassifier(grid_size=2).fit(bad(X[:200]), Y[:200])


@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (lambda Y: Y[:, 0], ValueError, r"Y must be 2-D .*reshape\(-1, 1\)"),
        (lambda Y: Y[:150], ValueError, r"Y has 150 rows but X has 200"),
        (lambda Y: Y * 2, ValueError, r"only 0 and 1, found 2"),
        (lambda Y: Y - 0.5, ValueError, r"only 0 and 1, found -?0.5 at row 0"),
        (lambda Y: np.zeros_like(Y), ValueError, r"Y has no positive label"),
        (lambda Y: np.where(Y == 1, np.nan, Y), ValueError, r"only 0 and 1, found nan"),
        (lambda Y: Y.astype(str), TypeError, r"Y must hold 0/1 values"),
    ],
)
def test_fit_rejects_bad_Y(data, bad, exc, match):
    X, Y = data
    with pytest.raises(exc, match=match):
        SOMStreamClassifier(grid_size=2).fit(X[:200], bad(Y[:200]))


def test_sparse_input_is_refused_with_a_hint(data):
    import scipy.sparse as sparse

    X, Y = data
    with pytest.raises(TypeError, match=r"X is a sparse matrix .*X.toarray\(\)"):
        SOMStreamClassifier(grid_size=2).fit(sparse.csr_matrix(X[:50]), Y[:50])


@pytest.mark.parametrize(
    "params, exc, match",
    [
        ({"grid_size": 0}, ValueError, r"grid_size must be >= 1, got 0"),
        ({"grid_size": 2.5}, TypeError, r"grid_size must be an integer or .auto., got 2.5"),
        ({"grid_size": True}, TypeError, r"grid_size must be an integer"),
        ({"learning_rate": 0.0}, ValueError, r"learning_rate must be > 0.0, got 0.0"),
        ({"learning_rate": 1.5}, ValueError, r"learning_rate must be <= 1.0, got 1.5"),
        ({"learning_rate": "fast"}, TypeError, r"learning_rate must be a real number"),
        ({"n_epochs": 0}, ValueError, r"n_epochs must be >= 1, got 0"),
        ({"n_epochs": 10, "max_epochs": 5}, ValueError, r"max_epochs must be >= n_epochs"),
        ({"min_neuron_size": 0}, ValueError, r"min_neuron_size must be >= 1, got 0"),
        (
            {"neighborhood": "mexican-hat"},
            ValueError,
            r"neighborhood must be one of .*'mexican-hat'",
        ),
        ({"averout_distance": "manhattan"}, ValueError, r"averout_distance must be one of"),
        ({"zero_cooccurrence": "ignore"}, ValueError, r"zero_cooccurrence must be one of"),
        ({"n_jobs": 0}, ValueError, r"n_jobs must be a non-zero integer or None, got 0"),
    ],
)
def test_bad_parameters(data, params, exc, match):
    X, Y = data
    with pytest.raises(exc, match=match):
        SOMStreamClassifier(**{"grid_size": 2, **params}).fit(X[:100], Y[:100])


def test_not_fitted():
    model = SOMStreamClassifier()
    for call in (model.predict, model.predict_stream):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            call(np.zeros((3, 2)))
    with pytest.raises(ValueError):  # NotFittedError is a ValueError ...
        model.predict(np.zeros((1, 2)))
    assert not hasattr(model, "weights_")  # ... and an AttributeError


def test_feature_count_must_match(fitted, data):
    X, _ = data
    for call in (fitted.predict, fitted.predict_stream):
        with pytest.raises(ValueError, match=r"X has 5 features, but \w+ is expecting 6 features"):
            call(X[:10, :5])


def test_bad_stream_input_loses_nothing(data):
    """A rejected chunk leaves the model exactly as it was."""
    X, Y = data
    model = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    before = pickle.dumps(model)
    bad = X[200:210].copy()
    bad[7, 3] = np.nan
    with pytest.raises(ValueError, match="row 7, column 3"):
        model.predict_stream(bad)
    assert pickle.dumps(model) == before


def test_empty_chunk(fitted):
    assert fitted.predict(np.zeros((0, 6))).shape == (0, 4)
    copy_ = copy.deepcopy(fitted)
    out = copy_.predict_stream(np.zeros((0, 6)))
    assert out.shape == (0, 4) and copy_.n_seen_ == fitted.n_seen_


def test_dtypes_accepted(data):
    """float32, int and bool features and bool/float labels give the float64 model."""
    X, Y = data
    ref = SOMStreamClassifier(grid_size=2, random_state=0).fit(X[:100], Y[:100])
    other = SOMStreamClassifier(grid_size=2, random_state=0).fit(
        X[:100].tolist(), Y[:100].astype(bool)
    )
    np.testing.assert_array_equal(ref.T_, other.T_)
    for a, b in zip(ref.weights_, other.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    Xi = np.round(X[:100] * 10).astype(np.int32)
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(Xi, Y[:100].astype(float))
    assert m.weights_[0].dtype == np.float64


# ---------------------------------------------------------------------------- parameters


def test_get_set_params_and_repr():
    model = SOMStreamClassifier(grid_size=4, learning_rate=0.1)
    params = model.get_params()
    assert params["grid_size"] == 4 and params["learning_rate"] == 0.1
    assert params["min_neuron_size"] == 4 and params["neighborhood"] == "bubble"
    model.set_params(grid_size=2, neighborhood="gaussian")
    assert model.grid_size == 2 and model.neighborhood == "gaussian"
    with pytest.raises(ValueError, match="invalid parameter 'grid'"):
        model.set_params(grid=3)
    assert (
        repr(model)
        == "SOMStreamClassifier(grid_size=2, learning_rate=0.1, neighborhood='gaussian')"
    )


def test_defaults_are_the_papers():
    model = SOMStreamClassifier()
    assert model.learning_rate == 0.05
    assert model.min_neuron_size == 4
    assert model.neighborhood == "bubble"
    assert model.averout_distance == "euclidean"
    assert model.zero_cooccurrence == "reject"


# ---------------------------------------------------------------------------- attributes


def test_fitted_attributes(fitted, data):
    X, Y = data
    m = fitted
    assert m.n_features_in_ == 6 and m.n_labels_ == 4
    assert m.n_seen_ == 200
    assert m.cardinality_ == pytest.approx(Y[:200].sum() / 200)
    np.testing.assert_array_equal(m.T_, Y[:200].astype(np.int64).T @ Y[:200])
    P = m.P_
    T = m.T_
    np.testing.assert_allclose(np.diag(P), np.diag(T) / 200)
    np.testing.assert_allclose(P[0, 1], T[0, 1] / T[1, 1])
    sizes = [w.shape[0] for w in m.weights_]
    k = min(sizes) - (min(sizes) % 2 == 0)
    assert m.k_nn_ == k
    for w, cnt, ao, lao, pos in zip(
        m.weights_, m.neuron_counts_, m.averout_, m.log_averout_, m.grid_positions_, strict=True
    ):
        assert w.shape[1] == 6 and cnt.shape == ao.shape == lao.shape == (w.shape[0],)
        assert pos.shape == (w.shape[0], 2) and pos.min() >= 0 and pos.max() < 3
        assert (cnt >= 4).all() or len(cnt) == 1
        np.testing.assert_allclose(np.log(ao), lao)
        assert ((ao > 0) & (ao <= 1)).all()
    # every training instance of a label maps to at most one kept neuron of its map
    assert sum(c.sum() for c in m.neuron_counts_) <= Y[:200].sum()


def test_attributes_are_copies(fitted):
    w = fitted.weights_[0]
    w[:] = 1e6
    assert not np.array_equal(fitted.weights_[0], w)
    T = fitted.T_
    T[:] = 0
    assert fitted.T_.sum() > 0


def test_attributes_follow_the_stream(data):
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    w0, T0, cnt0 = m.weights_, m.T_, m.neuron_counts_
    Yhat = m.predict_stream(X[200:300])
    assert m.n_seen_ == 300
    assert m.cardinality_ == pytest.approx((Y[:200].sum() + Yhat.sum()) / 300)
    np.testing.assert_array_equal(m.T_ - T0, Yhat.astype(np.int64).T @ Yhat)
    assert sum(c.sum() for c in m.neuron_counts_) - sum(c.sum() for c in cnt0) == Yhat.sum()
    assert any(not np.array_equal(a, b) for a, b in zip(w0, m.weights_, strict=True))


def test_absent_label_is_never_predicted(data):
    X, Y = data
    Y = Y.copy()
    Y[:200, 2] = 0
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(X[:200], Y[:200])
    assert m.weights_[2] is None and m.neuron_counts_[2] is None and m.n_iter_[2] is None
    assert m.P_[2, 2] == 0 and m.T_[2].sum() == 0
    assert m.predict_stream(X[200:])[:, 2].sum() == 0
    assert m.predict(X[200:])[:, 2].sum() == 0


def test_one_label_and_grid_size_one(data):
    X, Y = data
    m = SOMStreamClassifier(grid_size=1, random_state=0).fit(X[:100], Y[:100, :1])
    assert m.weights_[0].shape == (1, 6)
    np.testing.assert_allclose(m.weights_[0][0], X[:100][Y[:100, 0] == 1].mean(0), rtol=1e-12)
    out = m.predict_stream(X[100:150])
    assert (out[:, 0] == 1).all()  # the only label with a map is always predicted


def test_convergence_warning(data):
    X, Y = data
    with pytest.warns(ConvergenceWarning, match="did not settle"):
        SOMStreamClassifier(grid_size=6, n_epochs=1, max_epochs=1, random_state=0).fit(
            X[:300], Y[:300]
        )


# ---------------------------------------------------------------------------- behaviour


def test_learns_a_separable_stream():
    """Well separated single-label clusters: the stream is classified almost perfectly."""
    rng = np.random.default_rng(3)
    centres = np.eye(4) * 10
    lab = rng.integers(0, 4, 2000)
    X = centres[lab] + rng.normal(size=(2000, 4))
    Y = np.eye(4, dtype=np.uint8)[lab]
    m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    out = m.predict_stream(X[200:])
    assert (out == Y[200:]).all(axis=1).mean() > 0.97


def test_same_seed_same_model_different_seed_differs(data):
    X, Y = data
    a = SOMStreamClassifier(grid_size=3, random_state=5).fit(X[:200], Y[:200])
    b = SOMStreamClassifier(grid_size=3, random_state=5).fit(X[:200], Y[:200])
    c = SOMStreamClassifier(grid_size=3, random_state=6).fit(X[:200], Y[:200])
    np.testing.assert_array_equal(a.predict_stream(X[200:]), b.predict_stream(X[200:]))
    for wa, wb in zip(a.weights_, b.weights_, strict=True):
        np.testing.assert_array_equal(wa, wb)
    assert any(
        wa.shape != wc.shape or not np.array_equal(wa, wc)
        for wa, wc in zip(a.weights_, c.weights_, strict=True)
    )


def test_chunks_equal_one_call(data):
    X, Y = data
    a = SOMStreamClassifier(grid_size=3, random_state=2).fit(X[:200], Y[:200])
    b = copy.deepcopy(a)
    whole = a.predict_stream(X[200:])
    parts = np.vstack(
        [b.predict_stream(X[200:201]), b.predict_stream(X[201:377]), b.predict_stream(X[377:])]
    )
    np.testing.assert_array_equal(whole, parts)
    assert pickle.dumps(a) == pickle.dumps(b)


def test_predict_is_frozen_and_matches_stream_first_instance(data):
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=2).fit(X[:200], Y[:200])
    m.predict_stream(X[200:300])
    state = pickle.dumps(m)
    rows = X[300:400]
    out = m.predict(rows)
    assert pickle.dumps(m) == state  # predict changed nothing
    for i in range(0, 100, 7):
        one = pickle.loads(state).predict_stream(rows[i : i + 1])
        np.testing.assert_array_equal(out[i], one[0])


# ---------------------------------------------------------------------------- threads, SIMD


@pytest.fixture
def all_parallel(monkeypatch):
    """Use the requested threads even for small inputs (which otherwise run on one thread)."""
    monkeypatch.setattr(mlsom._som, "_PARALLEL_MIN_WORK", 0)


def test_small_inputs_run_on_one_thread():
    assert mlsom._som._threads_for(10, 8) == 1
    assert mlsom._som._threads_for(10**8, 8) == 8


def test_predict_same_with_one_and_two_threads(data, all_parallel):
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0, n_jobs=1).fit(X[:200], Y[:200])
    out1 = m.predict(X)
    m.set_params(n_jobs=2)
    out2 = m.predict(X)
    m.set_params(n_jobs=-1)
    np.testing.assert_array_equal(out1, out2)
    np.testing.assert_array_equal(out1, m.predict(X))


def test_fit_same_with_one_and_two_threads(data, all_parallel):
    X, Y = data
    a = SOMStreamClassifier(grid_size=4, random_state=0, n_jobs=1).fit(X[:300], Y[:300])
    b = SOMStreamClassifier(grid_size=4, random_state=0, n_jobs=2).fit(X[:300], Y[:300])
    for wa, wb in zip(a.weights_, b.weights_, strict=True):
        np.testing.assert_array_equal(wa, wb)
    np.testing.assert_array_equal(a.predict_stream(X[300:]), b.predict_stream(X[300:]))


def test_predict_from_many_python_threads(data, all_parallel):
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0, n_jobs=2).fit(X[:200], Y[:200])
    expected = m.predict(X)
    results, errors = {}, []

    def work(i):
        try:
            for _ in range(20):
                results[i] = m.predict(X)
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 6
    for out in results.values():
        np.testing.assert_array_equal(out, expected)


def test_pickles_taken_while_another_thread_streams_are_whole_models():
    """A pickle (or deepcopy) is taken as a reader: each one is the model between two chunks,
    never a mix (S is the trace of T), and readers adding their cached copies meanwhile do not
    break it."""
    X, Y = pulled_clusters(n=20_200, seed=3)  # chunks long enough for pickles to fall inside
    m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    serial = copy.deepcopy(m)
    chunks = [X[200 + 2000 * i : 2200 + 2000 * i] for i in range(10)]
    states = [copy.deepcopy(serial)]
    for c in chunks:
        serial.predict_stream(c)
        states.append(copy.deepcopy(serial))
    seen = {int(s.n_seen_): s for s in states}
    snapshots, errors, started, done = [], [], threading.Event(), threading.Event()

    def writer():
        started.wait()  # the pickles are being taken: the stream runs beside them
        for c in chunks:
            m.predict_stream(c)
        done.set()

    def reader():
        while not done.is_set():
            m.predict(X[:5])  # caches copies of the neurons as a reader

    def snapshot():
        try:
            while True:
                snapshots.append(pickle.loads(pickle.dumps(m)))
                started.set()
                if done.is_set():
                    break
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)
            started.set()

    threads = [threading.Thread(target=f) for f in (writer, reader, snapshot)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and snapshots
    for snap in snapshots:  # each is the serial model after some whole chunks
        ref = seen[int(snap.n_seen_)]
        np.testing.assert_array_equal(snap.T_, ref.T_)
        for wa, wb in zip(snap.weights_, ref.weights_, strict=True):
            np.testing.assert_array_equal(wa, wb)


def test_a_shallow_copy_does_not_share_the_neurons(data):
    """copy.copy gives a model of its own: its stream leaves the original as it was."""
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    m.predict(X[:5])  # the original caches copies of its neurons
    before = pickle.dumps(m)
    c = copy.copy(m)
    c.predict_stream(X[200:400])
    untouched = pickle.loads(before)
    assert m.n_seen_ == untouched.n_seen_
    np.testing.assert_array_equal(m.predict(X), untouched.predict(X))


def test_predict_stream_and_predict_from_threads_stay_consistent(data, all_parallel):
    """A writer (predict_stream) and readers (predict) on one model: no torn state."""
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    serial = copy.deepcopy(m)
    chunks = [X[200 + 20 * i : 220 + 20 * i] for i in range(20)]
    expected = np.vstack([serial.predict_stream(c) for c in chunks])
    got, errors = [], []

    def writer():
        for c in chunks:
            got.append(m.predict_stream(c))

    def reader():
        try:
            for _ in range(30):
                out = m.predict(X[:50])
                assert out.shape == (50, 4) and out.any(axis=1).all()
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=reader) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    np.testing.assert_array_equal(np.vstack(got), expected)


def test_simd_paths_give_identical_results(data):
    X, Y = data
    outputs = []
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            m = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
            outputs.append((level, m.predict_stream(X[200:]), m.weights_))
    base = outputs[0]
    for _, out, weights in outputs[1:]:
        np.testing.assert_array_equal(out, base[1])
        for a, b in zip(weights, base[2], strict=True):
            np.testing.assert_array_equal(a, b)  # bitwise: no re-association, no FMA


def test_pickle_round_trip(fitted, data):
    X, _ = data
    clone = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(clone.predict(X), fitted.predict(X))
    a, b = copy.deepcopy(fitted), pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(a.predict_stream(X), b.predict_stream(X))


# ---------------------------------------------------------------------------- build


def test_show_config_reports_build():
    buf = io.StringIO()
    mlsom.show_config(file=buf)
    text = buf.getvalue()
    assert f"mlsom               : {mlsom.__version__}" in text
    assert "openmp" in text and "simd_path" in text


def test_openmp_status_is_what_the_build_promised():
    """CI sets MLSOM_EXPECT_OPENMP to 1 (default build) or 0 (MLSOM_NO_OPENMP build)."""
    expected = os.environ.get("MLSOM_EXPECT_OPENMP")
    if expected is None:
        pytest.skip("MLSOM_EXPECT_OPENMP not set: nothing promised for this build")
    assert _core.openmp_enabled() == (expected == "1")


# ---------------------------------------------------------------------------- model files


def test_save_and_load_round_trip(tmp_path, data):
    X, Y = data
    m = SOMStreamClassifier(grid_size=3, random_state=0, neighborhood="gaussian").fit(
        X[:200], Y[:200]
    )
    m.predict_stream(X[200:300])
    path = tmp_path / "model.npz"
    m.save(path)
    back = SOMStreamClassifier.load(path)
    assert back.get_params() == m.get_params()
    for attr in ("T_", "P_", "n_seen_", "cardinality_", "k_nn_", "n_iter_"):
        np.testing.assert_array_equal(getattr(back, attr), getattr(m, attr))
    for a, b in zip(back.weights_, m.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    np.testing.assert_array_equal(back.predict_stream(X[300:]), m.predict_stream(X[300:]))


def test_save_before_fit():
    with pytest.raises(NotFittedError):
        SOMStreamClassifier().save("never-written.npz")


# ---------------------------------------------------------------------------- one at a time


def test_predict_one_is_one_step_of_the_stream(data):
    X, Y = data
    a = SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:200], Y[:200])
    b = copy.deepcopy(a)
    expected = a.predict_stream(X[200:230])
    got = [b.predict_one(x) for x in X[200:230]]
    assert got[0] == {j: bool(v) for j, v in enumerate(expected[0])}
    np.testing.assert_array_equal(np.array([[d[j] for j in range(4)] for d in got]), expected)
    assert pickle.dumps(a) == pickle.dumps(b)
    frozen = copy.deepcopy(b)
    before = pickle.dumps(frozen)
    frozen.predict_one(X[300], adapt=False)
    assert pickle.dumps(frozen) == before
    # learn_one without labels does nothing; with labels it is partial_fit of the row
    assert b.learn_one(X[300]) is b and pickle.dumps(b) == pickle.dumps(a)
    assert b.learn_one(X[300], {0: True}) is b
    a.partial_fit(X[300:301], np.array([[1, -1, -1, -1]]))
    for key, value in a._state.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(b._state[key], value, err_msg=key)
    assert a._state.keys() == b._state.keys()


def test_predict_one_with_dicts_and_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    cols = [f"f{i}" for i in range(6)]
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(
        pd.DataFrame(X[:200], columns=cols), Y[:200]
    )
    assert list(m.feature_names_in_) == cols
    x = dict(zip(reversed(cols), X[200][::-1], strict=True))  # any key order
    ref = copy.deepcopy(m).predict_one(X[200])
    assert m.predict_one(x) == ref
    with pytest.raises(ValueError, match=r"missing \['f5'\]"):
        m.predict_one({c: 0.0 for c in cols[:5]})
    plain = SOMStreamClassifier(grid_size=2, random_state=0).fit(X[:200], Y[:200])
    assert not hasattr(plain, "feature_names_in_")
    assert plain.predict_one(dict(enumerate(X[200]))) == ref
    with pytest.raises(ValueError, match="x must be 1-D"):
        plain.predict_one(X[:2])


def test_feature_names_survive_save_and_load(tmp_path, data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    cols = [f"f{i}" for i in range(6)]
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(
        pd.DataFrame(X[:200], columns=cols), Y[:200]
    )
    m.save(tmp_path / "m.npz")
    assert list(SOMStreamClassifier.load(tmp_path / "m.npz").feature_names_in_) == cols


def test_dataframe_columns_must_match_the_fit(data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    cols = [f"f{i}" for i in range(6)]
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(
        pd.DataFrame(X[:200], columns=cols), Y[:200]
    )
    shuffled = pd.DataFrame(X[200:210], columns=cols)[cols[::-1]]
    with pytest.raises(ValueError, match="feature_names_in_"):
        m.predict(shuffled)
    np.testing.assert_array_equal(
        m.predict(pd.DataFrame(X[200:210], columns=cols)), m.predict(X[200:210])
    )


def test_column_names_of_mixed_types_are_refused(data):
    """They were ignored: columns given in another order were then taken silently."""
    pd = pytest.importorskip("pandas")
    X, Y = data
    mixed = ["a", 1, "c", "d", "e", "f"]
    with pytest.raises(TypeError, match=r"column names of mixed types \(int, str\)"):
        SOMStreamClassifier(grid_size=2).fit(pd.DataFrame(X[:200], columns=mixed), Y[:200])
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(X[:200], Y[:200])
    before = pickle.dumps(m)
    with pytest.raises(TypeError, match=r"column names of mixed types"):
        m.predict_stream(pd.DataFrame(X[200:210], columns=mixed))
    assert pickle.dumps(m) == before
    # integer names only (a DataFrame's default) are no feature names, as in scikit-learn
    np.testing.assert_array_equal(m.predict(pd.DataFrame(X[200:210])), m.predict(X[200:210]))
