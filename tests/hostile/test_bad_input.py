"""A sweep of the public API with bad values: every case expects a documented exception type whose
message names the faulty argument, and a failed call must leave a fitted model exactly as it was.
"""

import io
import json
import math
import pickle
import re
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from mlsom import NotFittedError, SOMStreamClassifier, stats
from mlsom import evaluation as ev
from mlsom.datasets import (
    ArffError,
    balanced_initial_set,
    balanced_initial_split,
    drop_unlabelled,
    filter_labels,
    iter_arff,
    load_arff,
    minmax_scale,
    prefix_split,
)

N_FEATURES, N_LABELS = 3, 2


def make_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    Y = (rng.random((n, N_LABELS)) < 0.5).astype(np.uint8)
    Y[~Y.any(axis=1), 0] = 1
    return X, Y


X0, Y0 = make_data()


@pytest.fixture
def fitted():
    """A freshly fitted model (each test may damage it)."""
    return SOMStreamClassifier(grid_size=2, random_state=0).fit(X0, Y0)


def snapshot(model):
    """Everything a failed call must leave unchanged."""
    return {
        "weights": [w.copy() for w in model.weights_],
        "counts": [c.copy() for c in model.neuron_counts_],
        "log_averout": [a.copy() for a in model.log_averout_],
        "T": model.T_,
        "n_seen": model.n_seen_,
        "cardinality": model.cardinality_,
        "params": model.get_params(),
        "pickle": pickle.dumps(model),
    }


def assert_unchanged(model, before):
    after = snapshot(model)
    for key in ("weights", "counts", "log_averout"):
        for a, b in zip(after[key], before[key], strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after["T"], before["T"])
    assert after["n_seen"] == before["n_seen"]
    assert after["cardinality"] == before["cardinality"]
    assert after["params"] == before["params"]
    assert after["pickle"] == before["pickle"]


def _named_cases(argnames, table):
    """Parametrize over a table of (id, *args) rows."""
    return pytest.mark.parametrize(argnames, [c[1:] for c in table], ids=[c[0] for c in table])


# ---------------------------------------------------------------------------- constructor


class _Weird:
    def __repr__(self):
        return "<weird>"


PARAM_CASES = [
    # grid_size
    ("grid_size", 0, ValueError, r"grid_size must be >= 1, got 0"),
    ("grid_size", -3, ValueError, r"grid_size must be >= 1, got -3"),
    ("grid_size", 1001, ValueError, r"grid_size must be <= 1000, got 1001"),
    ("grid_size", 2.0, TypeError, r"grid_size must be an integer or .auto., got 2.0"),
    ("grid_size", math.nan, TypeError, r"grid_size must be an integer or .auto., got nan"),
    ("grid_size", True, TypeError, r"grid_size must be an integer or .auto., got True"),
    ("grid_size", "3", TypeError, r"grid_size must be an integer or .auto., got '3'"),
    ("grid_size", None, TypeError, r"grid_size must be an integer or .auto., got None"),
    ("grid_size", [2], TypeError, r"grid_size must be an integer or .auto., got \[2\]"),
    ("grid_size", np.float64(2), TypeError, r"grid_size must be an integer"),
    # learning_rate
    ("learning_rate", 0.0, ValueError, r"learning_rate must be > 0.0, got 0.0"),
    ("learning_rate", -0.1, ValueError, r"learning_rate must be > 0.0, got -0.1"),
    ("learning_rate", 1.0000001, ValueError, r"learning_rate must be <= 1.0, got 1.0000001"),
    ("learning_rate", math.nan, ValueError, r"learning_rate must be finite, got nan"),
    ("learning_rate", math.inf, ValueError, r"learning_rate must be finite, got inf"),
    ("learning_rate", -math.inf, ValueError, r"learning_rate must be finite, got -inf"),
    ("learning_rate", True, TypeError, r"learning_rate must be a real number, got True"),
    ("learning_rate", "0.1", TypeError, r"learning_rate must be a real number, got '0.1'"),
    ("learning_rate", None, TypeError, r"learning_rate must be a real number, got None"),
    ("learning_rate", 0.1j, TypeError, r"learning_rate must be a real number, got 0.1j"),
    ("learning_rate", 10**400, ValueError, r"learning_rate must be finite, got 1000000000"),
    ("learning_rate", Fraction(10**400), ValueError, r"learning_rate must be finite, got Frac"),
    ("correction_rate", -(10**400), ValueError, r"correction_rate must be finite, got -1000"),
    ("novelty", "yes", TypeError, r"novelty must be True or False, got 'yes'"),
    ("novelty", 1, TypeError, r"novelty must be True or False, got 1"),
    ("novelty", None, TypeError, r"novelty must be True or False, got None"),
    ("novelty", np.array(True), TypeError, r"novelty must be True or False, got array"),
    ("novelty_radius", 0.0, ValueError, r"novelty_radius must be >= 0.01, got 0.0"),
    ("novelty_radius", -1, ValueError, r"novelty_radius must be >= 0.01, got -1"),
    ("novelty_radius", 100.5, ValueError, r"novelty_radius must be <= 100.0, got 100.5"),
    ("novelty_radius", math.inf, ValueError, r"novelty_radius must be finite, got inf"),
    ("novelty_radius", math.nan, ValueError, r"novelty_radius must be finite, got nan"),
    ("novelty_radius", True, TypeError, r"novelty_radius must be a real number, got True"),
    ("novelty_radius", None, TypeError, r"novelty_radius must be a real number, got None"),
    ("corrections", "Tested", ValueError, r"corrections must be one of .*got 'Tested'"),
    ("corrections", None, ValueError, r"corrections must be one of .*got None"),
    ("corrections", True, ValueError, r"corrections must be one of .*got True"),
    ("corrections", ["tested"], ValueError, r"corrections must be one of .*got \['tested'\]"),
    ("label_persistence", "Off", ValueError, r"label_persistence must be one of .*got 'Off'"),
    ("label_persistence", None, ValueError, r"label_persistence must be one of .*got None"),
    ("label_persistence", False, ValueError, r"label_persistence must be one of .*got False"),
    # n_epochs, max_epochs
    ("n_epochs", 0, ValueError, r"n_epochs must be >= 1, got 0"),
    ("n_epochs", -1, ValueError, r"n_epochs must be >= 1, got -1"),
    ("n_epochs", 1.5, TypeError, r"n_epochs must be an integer, got 1.5"),
    ("n_epochs", math.nan, TypeError, r"n_epochs must be an integer, got nan"),
    ("n_epochs", False, TypeError, r"n_epochs must be an integer, got False"),
    ("n_epochs", "10", TypeError, r"n_epochs must be an integer, got '10'"),
    ("n_epochs", 2000, ValueError, r"max_epochs must be >= n_epochs, got max_epochs=1000, n_e"),
    ("max_epochs", 0, ValueError, r"max_epochs must be >= 1, got 0"),
    ("max_epochs", 50, ValueError, r"max_epochs must be >= n_epochs, got max_epochs=50"),
    ("max_epochs", None, TypeError, r"max_epochs must be an integer, got None"),
    ("max_epochs", True, TypeError, r"max_epochs must be an integer, got True"),
    ("max_epochs", 1e3, TypeError, r"max_epochs must be an integer, got 1000.0"),
    # min_neuron_size
    ("min_neuron_size", 0, ValueError, r"min_neuron_size must be >= 1, got 0"),
    ("min_neuron_size", -4, ValueError, r"min_neuron_size must be >= 1, got -4"),
    ("min_neuron_size", 4.0, TypeError, r"min_neuron_size must be an integer, got 4.0"),
    ("min_neuron_size", True, TypeError, r"min_neuron_size must be an integer, got True"),
    ("min_neuron_size", "4", TypeError, r"min_neuron_size must be an integer, got '4'"),
    # options
    ("neighborhood", "Bubble", ValueError, r"neighborhood must be one of .*got 'Bubble'"),
    ("neighborhood", "", ValueError, r"neighborhood must be one of .*got ''"),
    ("neighborhood", None, ValueError, r"neighborhood must be one of .*got None"),
    ("neighborhood", 1, ValueError, r"neighborhood must be one of .*got 1"),
    ("neighborhood", ["bubble"], ValueError, r"neighborhood must be one of .*got \['bubble'\]"),
    ("averout_distance", "manhattan", ValueError, r"averout_distance must be one of"),
    ("averout_distance", "EUCLIDEAN", ValueError, r"averout_distance must be one of"),
    ("averout_distance", None, ValueError, r"averout_distance must be one of .*got None"),
    ("zero_cooccurrence", "REJECT", ValueError, r"zero_cooccurrence must be one of"),
    ("zero_cooccurrence", 0, ValueError, r"zero_cooccurrence must be one of .*got 0"),
    ("zero_cooccurrence", True, ValueError, r"zero_cooccurrence must be one of .*got True"),
    # n_jobs
    ("n_jobs", 0, ValueError, r"n_jobs must be a non-zero integer or None, got 0"),
    ("n_jobs", 1.5, TypeError, r"n_jobs must be an integer, got 1.5"),
    ("n_jobs", math.nan, TypeError, r"n_jobs must be an integer, got nan"),
    ("n_jobs", True, TypeError, r"n_jobs must be an integer, got True"),
    ("n_jobs", "2", TypeError, r"n_jobs must be an integer, got '2'"),
    ("n_jobs", _Weird(), TypeError, r"n_jobs must be an integer, got <weird>"),
    # random_state
    ("random_state", "seed", TypeError, r"random_state"),
    ("random_state", 1.5, TypeError, r"random_state"),
    ("random_state", -1, ValueError, r"random_state"),
    ("random_state", math.nan, TypeError, r"random_state"),
    ("random_state", _Weird(), TypeError, r"random_state"),
    # beyond the C integers of the compiled kernels
    ("n_epochs", 2**63, ValueError, r"n_epochs"),
]


def _param_kwargs(name, value):
    kwargs = {"grid_size": 2, name: value}
    if name == "n_epochs" and value == 2**63:
        kwargs["max_epochs"] = 2**63
    if name == "max_epochs" and value == 50:
        kwargs["n_epochs"] = 100
    return kwargs


@pytest.mark.parametrize("name, value, exc, match", PARAM_CASES)
def test_bad_parameter_is_refused_by_fit(name, value, exc, match):
    model = SOMStreamClassifier(**_param_kwargs(name, value))
    with pytest.raises(exc, match=match):
        model.fit(X0, Y0)
    assert not hasattr(model, "weights_")


@pytest.mark.parametrize("name, value, exc, match", PARAM_CASES)
def test_bad_parameter_refit_leaves_the_model_unchanged(fitted, name, value, exc, match):
    before = snapshot(fitted)
    fitted.set_params(**_param_kwargs(name, value))
    with pytest.raises(exc, match=match):
        fitted.fit(X0, Y0)
    fitted.set_params(**before["params"])
    assert_unchanged(fitted, before)


@pytest.mark.parametrize("value", [10**6, -(10**6)])
def test_huge_n_jobs_is_accepted_and_changes_nothing(value):
    """n_jobs beyond the cores is allowed: results never depend on the thread count."""
    a = SOMStreamClassifier(grid_size=2, random_state=0, n_jobs=value).fit(X0, Y0)
    b = SOMStreamClassifier(grid_size=2, random_state=0, n_jobs=1).fit(X0, Y0)
    np.testing.assert_array_equal(a.predict(X0), b.predict(X0))


def test_set_params_refuses_unknown_names(fitted):
    before = snapshot(fitted)
    with pytest.raises(ValueError, match="invalid parameter 'grid'"):
        fitted.set_params(grid=3)
    assert_unchanged(fitted, before)


# ---------------------------------------------------------------------------- fit: X and Y


def _sparse(a):
    sparse = pytest.importorskip("scipy.sparse")
    return sparse.csr_matrix(a)


FIT_X_CASES = [
    ("1-D", lambda X: X[:, 0], ValueError, r"X must be 2-D .*got shape \(120,\).*reshape"),
    ("3-D", lambda X: X[:, :, None], ValueError, r"X must be 2-D .*got shape \(120, 3, 1\)"),
    ("0-D", lambda X: 1.0, ValueError, r"X must be 2-D .*got shape \(\)"),
    ("empty", lambda X: X[:0], ValueError, r"X has no row: shape \(0, 3\)"),
    ("no column", lambda X: X[:, :0], ValueError, r"X has no feature column"),
    ("NaN", lambda X: np.where(np.arange(3) == 1, np.nan, X), ValueError, r"X contains NaN"),
    ("inf", lambda X: np.where(np.arange(3) == 2, np.inf, X), ValueError, r"X contains NaN"),
    ("-inf", lambda X: np.where(np.arange(3) == 0, -np.inf, X), ValueError, r"X contains NaN"),
    ("too large", lambda X: X * 1e101, ValueError, r"X has a value too large"),
    (
        "float32 too large",
        lambda X: (X * 1e16).astype(np.float32),
        ValueError,
        r"X has a value too large .*float32",
    ),
    ("str", lambda X: X.astype(str), TypeError, r"X must hold real numbers, .*dtype <U"),
    ("bytes", lambda X: X.astype("S8"), TypeError, r"X must hold real numbers, .*dtype \|S8"),
    ("object", lambda X: X.astype(object), TypeError, r"X must hold real numbers, .*object"),
    ("complex", lambda X: X + 0j, TypeError, r"X must hold real numbers, .*complex128"),
    ("None", lambda X: None, TypeError, r"X must hold real numbers, .*object"),
    ("dict", lambda X: {"a": [1.0]}, TypeError, r"X must hold real numbers"),
    ("ragged", lambda X: [[1.0, 2.0], [1.0]], TypeError, r"X cannot be read as an array"),
    ("datetime", lambda X: X.astype("datetime64[s]"), TypeError, r"X must hold real numbers"),
    ("sparse", lambda X: _sparse(X), TypeError, r"X is a sparse matrix .*X.toarray\(\)"),
]

FIT_Y_CASES = [
    ("1-D", lambda Y: Y[:, 0], ValueError, r"Y must be 2-D .*reshape\(-1, 1\)"),
    ("3-D", lambda Y: Y[:, :, None], ValueError, r"Y must be 2-D .*got shape \(120, 2, 1\)"),
    ("fewer rows", lambda Y: Y[:100], ValueError, r"Y has 100 rows but X has 120"),
    ("more rows", lambda Y: np.vstack([Y, Y]), ValueError, r"Y has 240 rows but X has 120"),
    ("no column", lambda Y: Y[:, :0], ValueError, r"Y has no label column"),
    ("value 2", lambda Y: Y * 2, ValueError, r"Y must contain only 0 and 1, found 2"),
    (
        "value -1",
        lambda Y: -Y.astype(np.int64),
        ValueError,
        r"Y must contain only 0 and 1, found -1",
    ),
    ("value 0.5", lambda Y: Y * 0.5, ValueError, r"Y must contain only 0 and 1, found 0.5"),
    ("NaN", lambda Y: np.where(Y == 1, np.nan, 0.0), ValueError, r"Y must contain .* found nan"),
    ("inf", lambda Y: np.where(Y == 1, np.inf, 0.0), ValueError, r"Y must contain .* found inf"),
    ("no positive", lambda Y: np.zeros_like(Y), ValueError, r"Y has no positive label"),
    ("str", lambda Y: Y.astype(str), TypeError, r"Y must hold 0/1 values, .*dtype <U"),
    ("object", lambda Y: Y.astype(object), TypeError, r"Y must hold 0/1 values, .*object"),
    ("complex", lambda Y: Y + 0j, TypeError, r"Y must hold 0/1 values, .*complex"),
    ("None", lambda Y: None, TypeError, r"Y must hold 0/1 values"),
    ("sparse", lambda Y: _sparse(Y), TypeError, r"Y is a sparse matrix .*Y.toarray\(\)"),
]


@_named_cases("bad, exc, match", FIT_X_CASES)
def test_fit_refuses_bad_X_and_keeps_the_model(fitted, bad, exc, match):
    before = snapshot(fitted)
    with pytest.raises(exc, match=match):
        fitted.fit(bad(X0), Y0)
    assert_unchanged(fitted, before)
    with pytest.raises(exc, match=match):
        SOMStreamClassifier(grid_size=2).fit(bad(X0), Y0)


@_named_cases("bad, exc, match", FIT_Y_CASES)
def test_fit_refuses_bad_Y_and_keeps_the_model(fitted, bad, exc, match):
    before = snapshot(fitted)
    with pytest.raises(exc, match=match):
        fitted.fit(X0, bad(Y0))
    assert_unchanged(fitted, before)


# ---------------------------------------------------------------------------- prediction


STREAM_X_CASES = [
    ("fewer features", np.zeros((4, 2)), ValueError, r"X has 2 features, but .* fitted with 3"),
    ("more features", np.zeros((4, 5)), ValueError, r"X has 5 features, but .* fitted with 3"),
    ("zero rows, wrong features", np.zeros((0, 4)), ValueError, r"X has 4 features"),
    ("zero rows, no column", np.zeros((0, 0)), ValueError, r"X has no feature column"),
    (
        "NaN",
        np.array([[0.0, 0.0, 0.0], [0.0, np.nan, 0.0]]),
        ValueError,
        r"X contains NaN .*row 1, column 1",
    ),
    ("inf", np.array([[0.0, 0.0, np.inf]]), ValueError, r"X contains NaN .*row 0, column 2"),
    ("too large", np.full((1, 3), -1e101), ValueError, r"X has a value too large"),
    ("1-D", np.zeros(3), ValueError, r"X must be 2-D .*reshape\(1, -1\)"),
    ("3-D", np.zeros((1, 1, 3)), ValueError, r"X must be 2-D"),
    ("scalar", 0.0, ValueError, r"X must be 2-D"),
    ("empty list", [], ValueError, r"X must be 2-D .*got shape \(0,\)"),
    ("str", np.zeros((2, 3)).astype(str), TypeError, r"X must hold real numbers"),
    ("object", np.array([[None, 1.0, 2.0]]), TypeError, r"X must hold real numbers"),
    ("complex", np.zeros((2, 3)) + 1j, TypeError, r"X must hold real numbers"),
    ("None", None, TypeError, r"X must hold real numbers"),
    ("ragged", [[0.0, 0.0], [0.0, 0.0, 0.0]], TypeError, r"X cannot be read as an array"),
]


@pytest.mark.parametrize("method", ["predict", "predict_stream"])
@_named_cases("bad, exc, match", STREAM_X_CASES)
def test_prediction_refuses_bad_X_and_keeps_the_model(fitted, method, bad, exc, match):
    before = snapshot(fitted)
    with pytest.raises(exc, match=match):
        getattr(fitted, method)(bad)
    assert_unchanged(fitted, before)


@pytest.mark.parametrize(
    "dtype, over",
    [
        (np.float32, 1e15 + 0.125),
        (np.float32, -(1e15 + 0.125)),
        (np.float64, float(np.nextafter(1e100, np.inf))),
    ],
)
def test_a_value_just_over_the_limit_is_shown_over_it(dtype, over):
    """The message shows the value with every digit it needs: never equal to the limit."""
    model = SOMStreamClassifier(grid_size=2, random_state=0).fit(X0.astype(dtype), Y0)
    X = np.zeros((2, N_FEATURES))
    X[1, 2] = over
    with pytest.raises(ValueError, match=r"value too large .*row 1, column 2: ") as info:
        model.predict(X)
    shown, limit = re.search(r"column 2: (\S+); the limit is (\S+) ", str(info.value)).groups()
    assert float(shown) == over and abs(float(shown)) > float(limit)


ZERO_ROW_INPUTS = {
    "float64": np.zeros((0, 3)),
    "float32": np.zeros((0, 3), dtype=np.float32),
    "int64": np.zeros((0, 3), dtype=np.int64),
    "bool": np.zeros((0, 3), dtype=bool),
    "fortran": np.asfortranarray(np.zeros((0, 3))),
    "slice": X0[5:5],
}


@pytest.mark.parametrize("method", ["predict", "predict_stream"])
@pytest.mark.parametrize("name", list(ZERO_ROW_INPUTS))
def test_zero_row_chunk_gives_an_empty_result(fitted, method, name):
    before = snapshot(fitted)
    out = getattr(fitted, method)(ZERO_ROW_INPUTS[name])
    assert out.shape == (0, N_LABELS) and out.dtype == np.uint8
    assert_unchanged(fitted, before)


PREDICT_ONE_CASES = [
    ("NaN", [np.nan, 0.0, 0.0], ValueError, r"X contains NaN"),
    ("inf", [0.0, np.inf, 0.0], ValueError, r"X contains NaN"),
    ("fewer features", [0.0, 0.0], ValueError, r"X has 2 features, but .* fitted with 3"),
    ("no feature", [], ValueError, r"X has no feature column"),
    ("2-D", [[0.0, 0.0, 0.0]], ValueError, r"x must be 1-D \(one instance\), got shape \(1, 3\)"),
    ("scalar", 1.0, ValueError, r"x must be 1-D \(one instance\), got shape \(\)"),
    ("None", None, ValueError, r"x must be 1-D"),
    ("str", "abc", ValueError, r"x must be 1-D"),
    ("str values", ["a", "b", "c"], TypeError, r"X must hold real numbers"),
    (
        "dict missing",
        {0: 1.0, 1: 2.0},
        ValueError,
        r"x must give exactly the 3 features.*missing \[2\]",
    ),
    ("dict extra", {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}, ValueError, r"x must give .*unknown \[3\]"),
    ("dict str keys", {"0": 1.0, "1": 2.0, "2": 3.0}, ValueError, r"x must give .*unknown \['0'"),
    ("dict NaN", {0: np.nan, 1: 2.0, 2: 3.0}, ValueError, r"X contains NaN"),
]


@pytest.mark.parametrize("adapt", [True, False])
@_named_cases("x, exc, match", PREDICT_ONE_CASES)
def test_predict_one_refuses_bad_x_and_keeps_the_model(fitted, adapt, x, exc, match):
    before = snapshot(fitted)
    with pytest.raises(exc, match=match):
        fitted.predict_one(x, adapt=adapt)
    assert_unchanged(fitted, before)


@pytest.mark.parametrize("adapt", ["no", 1, None, np.nan])
def test_predict_one_refuses_a_non_bool_adapt(fitted, adapt):
    before = snapshot(fitted)
    with pytest.raises(TypeError, match="adapt must be True or False, got "):
        fitted.predict_one([0.0, 0.0, 0.0], adapt=adapt)
    assert_unchanged(fitted, before)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.predict(np.zeros((1, 3))),
        lambda m: m.predict_stream(np.zeros((1, 3))),
        lambda m: m.predict_stream(np.zeros((0, 3))),
        lambda m: m.predict_one([0.0, 0.0, 0.0]),
        lambda m: m.predict_one([0.0, 0.0, 0.0], adapt=False),
        lambda m: m.save("never-written.npz"),
        lambda m: m.weights_,
        lambda m: m.T_,
        lambda m: m.P_,
        lambda m: m.n_seen_,
        lambda m: m.cardinality_,
        lambda m: m.averout_,
    ],
    ids=[
        "predict",
        "predict_stream",
        "predict_stream-empty",
        "predict_one",
        "predict_one-frozen",
        "save",
        "weights_",
        "T_",
        "P_",
        "n_seen_",
        "cardinality_",
        "averout_",
    ],
)
def test_not_fitted(call):
    with pytest.raises(NotFittedError, match=r"SOMStreamClassifier is not fitted yet; call fit"):
        call(SOMStreamClassifier())


def _valid_in(dtype, X):
    """X as `dtype`, with values the dtype holds: a negative or out-of-range float cast to an
    integer type is undefined in C, and raises "invalid value encountered in cast" on ARM."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        X = np.clip(np.round(X), info.min, info.max)
    return X.astype(dtype)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("method", ["predict", "predict_stream"])
def test_valid_chunks_of_any_real_dtype_warn_nothing(fitted, method):
    """No RuntimeWarning (overflow in a cast, invalid value) from checking valid input."""
    for dtype in (np.float32, np.float16, np.int8, np.uint64, bool):
        getattr(fitted, method)(_valid_in(dtype, X0[:5] * 10))
    getattr(fitted, method)(np.full((2, 3), 1e100))
    getattr(fitted, method)(np.full((2, 3), 3e38, dtype=np.float32))


# ---------------------------------------------------------------------------- model files


@pytest.fixture
def saved(tmp_path, fitted):
    path = tmp_path / "model.npz"
    fitted.save(path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    return path, arrays, json.loads(str(arrays["meta"]))


def _write_npz(tmp_path, arrays, **changes):
    a = {**arrays, **changes}
    path = tmp_path / "changed.npz"
    np.savez(path, **a)
    return path


def _meta(meta, **changes):
    return np.array(json.dumps({**meta, **changes}))


@pytest.mark.parametrize("cut", [0, 1, 10, 100, 0.5, -22, -1])
def test_load_refuses_a_truncated_file(saved, tmp_path, cut):
    path, _, _ = saved
    raw = path.read_bytes()
    n = int(len(raw) * cut) if isinstance(cut, float) else cut % len(raw) if cut < 0 else cut
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(raw[:n])
    with pytest.raises(
        ValueError, match=r"truncated\.npz'\)? cannot be read as an mlsom model file"
    ):
        SOMStreamClassifier.load(bad)


@pytest.mark.parametrize("where", [0.01, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9, 0.97])
def test_load_refuses_corrupted_bytes_or_reads_the_same_model(saved, tmp_path, fitted, where):
    """Flipped bytes: the CRC of the zip members (or the checks) catch them."""
    path, _, _ = saved
    raw = bytearray(path.read_bytes())
    pos = int(len(raw) * where)
    # the "version needed to extract" fields of the central directory have a test of their own
    # (test_load_refuses_an_unsupported_zip_version)
    versions = [i + 6 for i in range(len(raw)) if raw[i : i + 4] == b"PK\x01\x02"]
    while any(pos - 4 < v < pos + 4 for v in versions):
        pos += 8
    raw[pos : pos + 4] = bytes(b ^ 0xA5 for b in raw[pos : pos + 4])
    bad = tmp_path / "corrupted.npz"
    bad.write_bytes(bytes(raw))
    try:
        back = SOMStreamClassifier.load(bad)
    except ValueError as exc:
        assert "corrupted.npz" in str(exc)
        return
    # bytes of the zip structure no reader looks at: the model must be the saved one
    assert_unchanged(back, snapshot(fitted))


def test_load_refuses_an_unsupported_zip_version(saved, tmp_path):
    path, _, _ = saved
    raw = bytearray(path.read_bytes())
    central = raw.index(b"PK\x01\x02")
    raw[central + 6 : central + 8] = (136).to_bytes(2, "little")
    bad = tmp_path / "version.npz"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"version\.npz'\)? cannot be read as an mlsom model"):
        SOMStreamClassifier.load(bad)


def test_load_refuses_a_foreign_npz(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, x=np.zeros(3), y=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"foreign\.npz'\)? is not an mlsom model file: missing"):
        SOMStreamClassifier.load(path)


def test_load_refuses_a_file_that_is_no_zip(tmp_path):
    path = tmp_path / "text.npz"
    path.write_text("hello")
    with pytest.raises(ValueError, match=r"text\.npz'\)? cannot be read as an mlsom model file"):
        SOMStreamClassifier.load(path)


def test_load_refuses_a_plain_npy(tmp_path):
    path = tmp_path / "plain.npy"
    np.save(path, np.zeros(3))
    with pytest.raises(
        ValueError, match=r"plain\.npy'\)? cannot be read as an mlsom model file: not a \.npz"
    ):
        SOMStreamClassifier.load(path)


class _Boom:
    """Unpickling it would run code: the loader must never unpickle."""

    def __reduce__(self):
        return (eval, ("1/0",))


def test_load_never_unpickles_members(saved, tmp_path):
    _, arrays, _ = saved
    path = tmp_path / "pickled.npz"
    with zipfile.ZipFile(path, "w") as z:
        for key in arrays:
            z.writestr(key + ".npy", pickle.dumps(_Boom()))
    with pytest.raises(ValueError, match=r"pickled\.npz'\)? cannot be read as an mlsom model file"):
        SOMStreamClassifier.load(path)


def test_load_refuses_object_arrays(saved, tmp_path):
    _, arrays, _ = saved
    path = tmp_path / "objects.npz"
    with zipfile.ZipFile(path, "w") as z:
        for key, value in arrays.items():
            buf = io.BytesIO()
            if key == "T":
                np.save(buf, np.array([_Boom()], dtype=object), allow_pickle=True)
            else:
                np.save(buf, value)
            z.writestr(key + ".npy", buf.getvalue())
    with pytest.raises(ValueError, match=r"objects\.npz.: inconsistent model file: member .T."):
        SOMStreamClassifier.load(path)


def test_load_refuses_a_member_that_is_not_npy(saved, tmp_path):
    _, arrays, _ = saved
    path = tmp_path / "raw-member.npz"
    with zipfile.ZipFile(path, "w") as z:
        for key, value in arrays.items():
            buf = io.BytesIO()
            np.save(buf, value)
            z.writestr(key + ".npy", pickle.dumps(value) if key == "T" else buf.getvalue())
    with pytest.raises(ValueError, match=r"raw-member\.npz'"):
        SOMStreamClassifier.load(path)


def test_load_of_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"absent\.npz"):
        SOMStreamClassifier.load(tmp_path / "absent.npz")


@pytest.mark.parametrize(
    "path",
    [
        None,
        0,
        3.5,
        12345,
    ],
    ids=["None", "fd-0", "float", "int"],
)
def test_load_and_save_refuse_paths_that_are_no_paths(fitted, path):
    before = snapshot(fitted)
    with pytest.raises(TypeError, match=r"path should be|str, bytes or os.PathLike"):
        SOMStreamClassifier.load(path)
    with pytest.raises(TypeError, match=r"str, bytes or os.PathLike"):
        fitted.save(path)
    assert_unchanged(fitted, before)


def test_save_into_a_missing_folder(tmp_path, fitted):
    before = snapshot(fitted)
    with pytest.raises(FileNotFoundError, match=r"no-such-folder"):
        fitted.save(tmp_path / "no-such-folder" / "m.npz")
    assert_unchanged(fitted, before)


@pytest.mark.parametrize("version", [0, 3, "1", 1.5, 2.0, None, [1]])
def test_load_refuses_another_format_version(saved, tmp_path, version):
    _, arrays, meta = saved
    path = _write_npz(tmp_path, arrays, meta=_meta(meta, format=version))
    with pytest.raises(ValueError, match=r"changed\.npz'\)?: unsupported model file format"):
        SOMStreamClassifier.load(path)


def test_load_refuses_a_header_without_format(saved, tmp_path):
    _, arrays, meta = saved
    meta = {k: v for k, v in meta.items() if k != "format"}
    path = _write_npz(tmp_path, arrays, meta=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match=r"unsupported model file format None"):
        SOMStreamClassifier.load(path)


@pytest.mark.parametrize(
    "meta_text", ["{not json", "", "[1, 2", '{"format": 1'], ids=["garbage", "empty", "list", "obj"]
)
def test_load_refuses_a_header_that_is_no_json(saved, tmp_path, meta_text):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, meta=np.array(meta_text))
    with pytest.raises(ValueError, match=r"changed\.npz'\)? cannot be read as an mlsom model file"):
        SOMStreamClassifier.load(path)


@pytest.mark.parametrize(
    "meta_value",
    [[1, 2], "text", None],
    ids=["list", "str", "null"],
)
def test_load_refuses_a_header_that_is_no_object(saved, tmp_path, meta_value):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, meta=np.array(json.dumps(meta_value)))
    with pytest.raises(ValueError, match=r"is not an mlsom model file: its header is not an obj"):
        SOMStreamClassifier.load(path)


@pytest.mark.parametrize(
    "change, match",
    [
        ({"params": None}, r"inconsistent model file: parameters None"),
        ({"params": [1]}, r"inconsistent model file: parameters \[1\]"),
        ({"params": {"bogus": 1}}, r"inconsistent model file: parameters \['bogus'\]"),
        ("no params", r"inconsistent model file: parameters None"),
        ({"k_nn": "3"}, r"inconsistent model file: k_nn '3'"),
        ({"k_nn": 0}, r"inconsistent model file: k_nn 0"),
        ({"k_nn": 99}, r"inconsistent model file: k_nn 99"),
        ({"n_iter": {"a": 1}}, r"inconsistent model file: n_iter"),
        ({"n_iter": [1]}, r"inconsistent model file: n_iter"),
        ({"feature_names": [1, 2, 3]}, r"inconsistent model file: feature_names"),
        ({"feature_names": ["a", "b"]}, r"inconsistent model file: feature_names"),
    ],
    ids=[
        "params-null",
        "params-list",
        "params-unknown",
        "params-missing",
        "k_nn-str",
        "k_nn-0",
        "k_nn-99",
        "n_iter-dict",
        "n_iter-short",
        "names-int",
        "names-short",
    ],
)
def test_load_refuses_a_bad_header_field(saved, tmp_path, change, match):
    _, arrays, meta = saved
    if change == "no params":
        meta = {k: v for k, v in meta.items() if k != "params"}
        change = {}
    path = _write_npz(tmp_path, arrays, meta=_meta(meta, **change))
    with pytest.raises(ValueError, match=match):
        SOMStreamClassifier.load(path)


@pytest.mark.parametrize(
    "param, value, exc, match",
    [
        ("grid_size", -1, ValueError, r"inconsistent model file: grid_size must be >= 1"),
        ("learning_rate", 2.0, ValueError, r"inconsistent model file: learning_rate must be <="),
        ("neighborhood", "hat", ValueError, r"inconsistent model file: neighborhood must be one"),
        ("n_jobs", 0, ValueError, r"inconsistent model file: n_jobs must be a non-zero"),
        ("n_epochs", "100", ValueError, r"inconsistent model file: n_epochs must be an integer"),
        ("random_state", "x", ValueError, r"inconsistent model file: random_state must be"),
    ],
)
def test_load_checks_the_stored_parameters(saved, tmp_path, param, value, exc, match):
    _, arrays, meta = saved
    path = _write_npz(tmp_path, arrays, meta=_meta(meta, params={**meta["params"], param: value}))
    with pytest.raises(exc, match=match):
        SOMStreamClassifier.load(path)


def _array_damages():
    def retype(key, dtype):
        return lambda a: {key: a[key].astype(dtype)}

    cases = {
        "Wt-int": retype("Wt", np.int64),
        "Wt-float16": retype("Wt", np.float16),
        "Wt-complex": retype("Wt", np.complex128),
        "Wt-1D": lambda a: {"Wt": a["Wt"].ravel()},
        "Wt-3D": lambda a: {"Wt": a["Wt"][None]},
        "Wt-NaN": lambda a: {"Wt": a["Wt"] * np.nan},
        "Wt-inf": lambda a: {"Wt": np.where(a["Wt"] > 0, np.inf, a["Wt"])},
        "Wt-fewer-neurons": lambda a: {"Wt": a["Wt"][:, :-1].copy()},
        "Wt-empty": lambda a: {"Wt": a["Wt"][:, :0].copy()},
        "ncls-int64": retype("ncls", np.int64),
        "ncls-reversed": lambda a: {"ncls": a["ncls"][::-1].copy()},
        "offsets-int32": retype("offsets", np.int32),
        "offsets-shifted": lambda a: {"offsets": a["offsets"] + 1},
        "offsets-decreasing": lambda a: {"offsets": a["offsets"][::-1].copy()},
        "offsets-2D": lambda a: {"offsets": a["offsets"][None]},
        "counts-float": retype("counts", np.float64),
        "counts-zero": lambda a: {"counts": a["counts"] * 0},
        "counts-negative": lambda a: {"counts": -a["counts"]},
        "counts-short": lambda a: {"counts": a["counts"][:-1].copy()},
        "log_averout-float32": retype("log_averout", np.float32),
        "log_averout-positive": lambda a: {"log_averout": a["log_averout"] + 10},
        "log_averout-NaN": lambda a: {"log_averout": a["log_averout"] * np.nan},
        "log_averout-short": lambda a: {"log_averout": a["log_averout"][:-1].copy()},
        "positions-float": retype("positions", np.float64),
        "positions-1D": lambda a: {"positions": a["positions"].ravel()},
        "T-float": retype("T", np.float64),
        "T-negative": lambda a: {"T": -a["T"]},
        "T-asymmetric": lambda a: {"T": a["T"] + np.triu(np.ones_like(a["T"]), 1)},
        "T-not-square": lambda a: {"T": a["T"][:, :1].copy()},
        "T-1D": lambda a: {"T": np.diag(a["T"]).copy()},
        "NS-int32": retype("NS", np.int32),
        "NS-three": lambda a: {"NS": np.array([1, 2, 3])},
        "NS-zero": lambda a: {"NS": np.array([0, 0])},
        "NS-2D": lambda a: {"NS": a["NS"][None]},
    }
    return cases


ARRAY_DAMAGES = _array_damages()


@pytest.mark.parametrize("name", list(ARRAY_DAMAGES))
def test_load_refuses_arrays_of_the_wrong_dtype_or_shape(saved, tmp_path, name):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, **ARRAY_DAMAGES[name](arrays))
    with pytest.raises(ValueError, match=r"changed\.npz'\)?: inconsistent model file: "):
        SOMStreamClassifier.load(path)


@pytest.mark.parametrize("missing", ["meta", "Wt", "T", "NS", "offsets"])
def test_load_refuses_a_file_without_a_member(saved, tmp_path, missing):
    _, arrays, _ = saved
    path = tmp_path / "partial.npz"
    np.savez(path, **{k: v for k, v in arrays.items() if k != missing})
    with pytest.raises(ValueError, match=rf"not an mlsom model file: missing \['{missing}'\]"):
        SOMStreamClassifier.load(path)


def test_load_refuses_counts_that_contradict_T(saved, tmp_path):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, NS=np.array([1, 10**6], dtype=np.int64))
    with pytest.raises(ValueError, match=r"inconsistent model file"):
        SOMStreamClassifier.load(path)


def test_load_refuses_weights_beyond_the_feature_limit(saved, tmp_path):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, Wt=arrays["Wt"] * 1e300)
    with pytest.raises(ValueError, match=r"inconsistent model file"):
        SOMStreamClassifier.load(path)


def test_extra_members_are_ignored(saved, tmp_path, fitted):
    _, arrays, _ = saved
    path = _write_npz(tmp_path, arrays, extra=np.zeros(3))
    assert_unchanged(SOMStreamClassifier.load(path), snapshot(fitted))


# ---------------------------------------------------------------------------- evaluation

Y3 = np.array([[1, 0], [0, 1], [1, 1]])
RESULT = ev.evaluate_predictions(Y3, Y3, n_windows=1)

EVALUATION_CASES = [
    (
        "confusion 1-D",
        lambda: ev.confusion_counts([1, 0], [1, 0]),
        ValueError,
        r"Y and Y_hat must be 2-D",
    ),
    (
        "confusion shapes",
        lambda: ev.confusion_counts(Y3, Y3[:2]),
        ValueError,
        r"Y and Y_hat .*same shape",
    ),
    (
        "confusion 2",
        lambda: ev.confusion_counts(Y3 * 2, Y3),
        ValueError,
        r"Y must contain only 0 and 1, found 2",
    ),
    (
        "confusion -1",
        lambda: ev.confusion_counts(Y3, -Y3),
        ValueError,
        r"Y_hat must contain only 0 and 1, found -1",
    ),
    (
        "confusion 0.5",
        lambda: ev.confusion_counts(Y3 * 0.5, Y3),
        ValueError,
        r"Y must contain .* 0.5",
    ),
    (
        "confusion NaN",
        lambda: ev.confusion_counts(np.where(Y3 == 1, np.nan, 0), Y3),
        ValueError,
        r"Y must contain .* nan",
    ),
    (
        "confusion str",
        lambda: ev.confusion_counts(Y3.astype(str), Y3),
        TypeError,
        r"Y must hold 0/1 values",
    ),
    (
        "confusion object",
        lambda: ev.confusion_counts(Y3, Y3.astype(object)),
        TypeError,
        r"Y_hat must hold 0/1 values",
    ),
    (
        "confusion complex",
        lambda: ev.confusion_counts(Y3 + 0j, Y3),
        TypeError,
        r"Y must hold 0/1 values",
    ),
    (
        "confusion ragged",
        lambda: ev.confusion_counts([[1], [1, 0]], Y3),
        TypeError,
        r"Y cannot be read as an array",
    ),
    (
        "example_counts 3",
        lambda: ev.example_counts(Y3, Y3 * 3),
        ValueError,
        r"Y_hat must contain only 0 and 1",
    ),
    (
        "hamming 1-D",
        lambda: ev.hamming_loss([1, 0], [1, 0]),
        ValueError,
        r"Y and Y_hat must be 2-D",
    ),
    (
        "subset NaN",
        lambda: ev.subset_accuracy(np.full((2, 2), np.nan), np.zeros((2, 2))),
        ValueError,
        r"Y must contain",
    ),
    ("example_f1 2", lambda: ev.example_f1(Y3 * 2, Y3), ValueError, r"Y must contain only 0 and 1"),
    (
        "scores measure",
        lambda: ev.multilabel_scores(Y3, Y3, measures=["f2"]),
        ValueError,
        r"unknown measure 'f2'",
    ),
    (
        "scores zero_division",
        lambda: ev.multilabel_scores(Y3, Y3, zero_division=2),
        ValueError,
        r"zero_division must be",
    ),
    (
        "scores zero_division None",
        lambda: ev.multilabel_scores(Y3, Y3, zero_division=None),
        ValueError,
        r"zero_division must be",
    ),
    ("measure None", lambda: ev.compute_measure(None), ValueError, r"unknown measure None"),
    (
        "measure no counts",
        lambda: ev.compute_measure("macro_f1"),
        ValueError,
        r"macro_f1 needs the per-label",
    ),
    (
        "measure no example counts",
        lambda: ev.compute_measure("example_f1"),
        ValueError,
        r"example_f1 needs the example counts",
    ),
    (
        "label counts shape",
        lambda: ev.compute_measure("macro_f1", np.zeros((2, 3))),
        ValueError,
        r"label counts must have shape",
    ),
    (
        "label counts negative",
        lambda: ev.macro_f1(-np.ones((2, 4))),
        ValueError,
        r"label counts must be >= 0",
    ),
    (
        "label counts fractional",
        lambda: ev.micro_f1(np.full((2, 4), 0.5)),
        ValueError,
        r"label counts must be whole numbers",
    ),
    (
        "label counts NaN",
        lambda: ev.macro_recall(np.full((2, 4), np.nan)),
        ValueError,
        r"label counts must be whole numbers",
    ),
    ("label counts str", lambda: ev.macro_f1("abc"), TypeError, r"label counts must hold counts"),
    (
        "label counts 3-D",
        lambda: ev.macro_f1(np.zeros((2, 2, 4))),
        ValueError,
        r"label counts must have shape \(n_labels, 4\)",
    ),
    (
        "example counts shape",
        lambda: ev.compute_measure("example_f1", ex_counts=np.zeros((2, 3))),
        ValueError,
        r"example counts must have shape",
    ),
    (
        "example counts str",
        lambda: ev.compute_measure("example_f1", ex_counts=[["a"] * 4]),
        TypeError,
        r"example counts must hold counts",
    ),
    (
        "example counts negative",
        lambda: ev.compute_measure("example_f1", ex_counts=[[2, 1, 1, -5]]),
        ValueError,
        r"example counts must be >= 0",
    ),
    (
        "merge str",
        lambda: ev.merge_example_counts("x"),
        TypeError,
        r"example counts must hold counts",
    ),
    (
        "merge shape",
        lambda: ev.merge_example_counts(np.zeros((2, 3))),
        ValueError,
        r"example counts must have shape",
    ),
    ("edges 0", lambda: ev.window_edges(0), ValueError, r"n_test must be >= 1, got 0"),
    (
        "edges float",
        lambda: ev.window_edges(10.0),
        TypeError,
        r"n_test must be an integer, got 10.0",
    ),
    (
        "edges bool",
        lambda: ev.window_edges(True),
        TypeError,
        r"n_test must be an integer, got True",
    ),
    (
        "edges windows str",
        lambda: ev.window_edges(10, "2"),
        TypeError,
        r"n_windows must be an integer",
    ),
    (
        "edges too many windows",
        lambda: ev.window_edges(10, 11),
        ValueError,
        r"n_windows=11 is larger",
    ),
    (
        "evaluate window_size 0",
        lambda: ev.evaluate_predictions(Y3, Y3, window_size=0),
        ValueError,
        r"window_size must be >= 1",
    ),
    (
        "evaluate window_size float",
        lambda: ev.evaluate_predictions(Y3, Y3, window_size=1.5),
        TypeError,
        r"window_size must be an integer",
    ),
    (
        "evaluate empty",
        lambda: ev.evaluate_predictions(np.zeros((0, 2)), np.zeros((0, 2)), n_windows=1),
        ValueError,
        r"n_test must be >= 1",
    ),
    (
        "evaluate labels 2",
        lambda: ev.evaluate_predictions(Y3 * 2, Y3, n_windows=1),
        ValueError,
        r"Y must contain only 0 and 1",
    ),
    (
        "evaluate zero_division",
        lambda: ev.evaluate_predictions(Y3, Y3, n_windows=1, zero_division="x"),
        ValueError,
        r"zero_division must be",
    ),
    ("average none", lambda: ev.average_curves([]), ValueError, r"no result to average"),
    (
        "average not results",
        lambda: ev.average_curves([1, 2]),
        TypeError,
        r"results must hold StreamEvaluation objects, got int",
    ),
    (
        "average measure",
        lambda: ev.average_curves([RESULT], measure="f2"),
        ValueError,
        r"unknown measure 'f2'",
    ),
    ("curve measure", lambda: RESULT.curve("f2"), ValueError, r"unknown measure 'f2'"),
    ("summary measure", lambda: RESULT.summary(measures=["x"]), ValueError, r"unknown measure 'x'"),
    (
        "window_counts index",
        lambda: RESULT.window_counts(5),
        IndexError,
        r"window 5 is out of range: the result has 1 windows",
    ),
    (
        "window_counts negative",
        lambda: RESULT.window_counts(-2),
        IndexError,
        r"window -2 is out of range",
    ),
    (
        "window_counts float",
        lambda: RESULT.window_counts(0.5),
        TypeError,
        r"window must be an integer, got 0.5",
    ),
    (
        "from_dict None",
        lambda: ev.StreamEvaluation.from_dict(None),
        TypeError,
        r"data must be a dict",
    ),
    (
        "from_dict empty",
        lambda: ev.StreamEvaluation.from_dict({}),
        ValueError,
        r"data is not a stored StreamEvaluation: it has no \['n_labels'",
    ),
    (
        "from_dict format",
        lambda: ev.StreamEvaluation.from_dict({"format": "other"}),
        ValueError,
        r"unsupported result format 'other'",
    ),
    (
        "from_dict shapes",
        lambda: ev.StreamEvaluation.from_dict({**RESULT.to_dict(), "n_labels": 5}),
        ValueError,
        r"data is not a valid stored StreamEvaluation",
    ),
    (
        "from_dict edges",
        lambda: ev.StreamEvaluation.from_dict({**RESULT.to_dict(), "window_edges": "x"}),
        ValueError,
        r"data is not a valid stored StreamEvaluation",
    ),
]


@_named_cases("call, exc, match", EVALUATION_CASES)
def test_evaluation_refuses_bad_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------- statistics

S = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1], [0.5, 0.6, 0.4], [0.2, 0.3, 0.1]])

STATS_CASES = [
    ("ranks 1-D", lambda: stats.rank_data([1, 2, 3]), ValueError, r"scores must be 2-D"),
    (
        "ranks NaN",
        lambda: stats.rank_data(np.where(S > 0.5, np.nan, S)),
        ValueError,
        r"scores holds NaN or infinity",
    ),
    (
        "ranks inf",
        lambda: stats.average_ranks(np.where(S > 0.5, np.inf, S)),
        ValueError,
        r"scores holds NaN or infinity",
    ),
    (
        "ranks str",
        lambda: stats.rank_data(S.astype(str)),
        TypeError,
        r"scores must hold real numbers",
    ),
    (
        "ranks empty",
        lambda: stats.rank_data(np.zeros((0, 3))),
        ValueError,
        r"scores must hold at least 2 data sets",
    ),
    (
        "ranks one method",
        lambda: stats.rank_data(np.zeros((3, 1))),
        ValueError,
        r"scores must hold at least 2 methods",
    ),
    (
        "ranks empty mapping",
        lambda: stats.rank_data({}),
        ValueError,
        r"scores must hold at least 2 methods",
    ),
    (
        "ranks higher_is_better str",
        lambda: stats.rank_data(S, higher_is_better="yes"),
        TypeError,
        r"higher_is_better must be True or False",
    ),
    (
        "ranks higher_is_better None",
        lambda: stats.average_ranks(S, higher_is_better=None),
        TypeError,
        r"higher_is_better must be True or False",
    ),
    (
        "chi2 n_datasets 0",
        lambda: stats.friedman_chi2([1, 2, 3], 0),
        ValueError,
        r"n_datasets must be >= 2",
    ),
    (
        "chi2 n_datasets float",
        lambda: stats.friedman_chi2([1, 2, 3], 2.5),
        TypeError,
        r"n_datasets must be an integer",
    ),
    (
        "chi2 ranks NaN",
        lambda: stats.friedman_chi2([1, np.nan, 3], 4),
        ValueError,
        r"mean_ranks must be finite",
    ),
    (
        "chi2 ranks 2-D",
        lambda: stats.friedman_chi2([[1, 2]], 4),
        ValueError,
        r"mean_ranks must be 1-D",
    ),
    (
        "chi2 ranks str",
        lambda: stats.friedman_chi2(["a", "b"], 4),
        TypeError,
        r"mean_ranks must hold real numbers",
    ),
    (
        "chi2 ranks out of range",
        lambda: stats.friedman_chi2([10, 20, 30], 4),
        ValueError,
        r"mean_ranks must lie between 1 and the number of methods \(3\)",
    ),
    (
        "chi2 ranks below 1",
        lambda: stats.nemenyi_pvalues([0.5, 2, 3], 4),
        ValueError,
        r"mean_ranks must lie between 1",
    ),
    (
        "iman chi2 negative",
        lambda: stats.iman_davenport(-1, 3, 4),
        ValueError,
        r"chi2 must be a finite number >= 0",
    ),
    (
        "iman chi2 NaN",
        lambda: stats.iman_davenport(np.nan, 3, 4),
        ValueError,
        r"chi2 must be a finite number",
    ),
    (
        "iman chi2 str",
        lambda: stats.iman_davenport("1", 3, 4),
        TypeError,
        r"chi2 must be a real number",
    ),
    (
        "iman chi2 too large",
        lambda: stats.iman_davenport(100.0, 3, 4),
        ValueError,
        r"chi2 must be <= n_datasets \* \(n_methods - 1\) = 8",
    ),
    (
        "iman one method",
        lambda: stats.iman_davenport(1.0, 1, 4),
        ValueError,
        r"n_methods must be >= 2",
    ),
    (
        "q alpha 0",
        lambda: stats.nemenyi_q(3, 0),
        ValueError,
        r"alpha must lie strictly between 0 and 1",
    ),
    (
        "q alpha NaN",
        lambda: stats.nemenyi_q(3, np.nan),
        ValueError,
        r"alpha must lie strictly between",
    ),
    ("q alpha str", lambda: stats.nemenyi_q(3, "0.05"), TypeError, r"alpha must be a real number"),
    ("q methods float", lambda: stats.nemenyi_q(3.0), TypeError, r"n_methods must be an integer"),
    (
        "cd datasets 0",
        lambda: stats.critical_difference(3, 0),
        ValueError,
        r"n_datasets must be >= 2",
    ),
    (
        "cd methods bool",
        lambda: stats.critical_difference(True, 3),
        TypeError,
        r"n_methods must be an integer",
    ),
    (
        "friedman one method",
        lambda: stats.friedman_nemenyi(S[:, :1]),
        ValueError,
        r"scores must hold at least 2 methods",
    ),
    (
        "friedman names",
        lambda: stats.friedman_nemenyi(S, methods=["a", "b"]),
        ValueError,
        r"methods must hold 3 names",
    ),
    (
        "friedman names str",
        lambda: stats.friedman_nemenyi(S, methods="abc"),
        TypeError,
        r"methods must be a sequence of names",
    ),
    (
        "friedman alpha",
        lambda: stats.friedman_nemenyi(S, alpha=2),
        ValueError,
        r"alpha must lie strictly between",
    ),
    (
        "friedman ragged",
        lambda: stats.friedman_nemenyi({"a": [1, 2], "b": [1]}),
        ValueError,
        r"scores\['b'\] has 1 scores",
    ),
    (
        "friedman higher_is_better",
        lambda: stats.friedman_nemenyi(S, higher_is_better=None),
        TypeError,
        r"higher_is_better must be True or False",
    ),
    (
        "friedman tie_correction",
        lambda: stats.friedman_nemenyi(S, tie_correction="yes"),
        TypeError,
        r"tie_correction must be True or False",
    ),
    (
        "result unknown method",
        lambda: stats.friedman_nemenyi(S).pvalue("zz", "method 0"),
        KeyError,
        r"unknown method 'zz'",
    ),
    (
        "result alpha",
        lambda: stats.friedman_nemenyi(S).significant(alpha=5),
        ValueError,
        r"alpha must lie strictly between",
    ),
]


@_named_cases("call, exc, match", STATS_CASES)
def test_stats_refuse_bad_arguments(call, exc, match):
    pytest.importorskip("scipy")
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------- datasets

Xd = np.arange(12.0).reshape(6, 2)
Yd = np.array([[1, 0], [0, 1], [1, 1], [1, 0], [0, 1], [1, 0]])

DATASETS_CASES = [
    (
        "filter names count",
        lambda: filter_labels(Yd, ["a"]),
        ValueError,
        r"label_names has 1 names but Y has 2",
    ),
    (
        "filter min_frequency 2",
        lambda: filter_labels(Yd, ["a", "b"], min_frequency=2),
        ValueError,
        r"min_frequency must be in \[0, 1\]",
    ),
    (
        "filter min_frequency NaN",
        lambda: filter_labels(Yd, ["a", "b"], min_frequency=np.nan),
        ValueError,
        r"min_frequency must be in",
    ),
    (
        "filter min_frequency str",
        lambda: filter_labels(Yd, ["a", "b"], min_frequency="x"),
        TypeError,
        r"min_frequency must be a real number",
    ),
    (
        "filter keep unknown",
        lambda: filter_labels(Yd, ["a", "b"], keep=["c"]),
        ValueError,
        r"unknown label name\(s\) \['c'\]",
    ),
    (
        "filter keep str",
        lambda: filter_labels(Yd, ["a", "b"], keep="a"),
        TypeError,
        r"keep must be a sequence",
    ),
    (
        "filter both",
        lambda: filter_labels(Yd, ["a", "b"], keep=["a"], min_frequency=0.1),
        ValueError,
        r"min_frequency= or keep=",
    ),
    (
        "filter Y 2",
        lambda: filter_labels(Yd * 2, ["a", "b"]),
        ValueError,
        r"Y must hold only 0 and 1",
    ),
    ("filter Y 1-D", lambda: filter_labels(Yd[:, 0], ["a"]), ValueError, r"Y must be 2-D"),
    (
        "filter Y str",
        lambda: filter_labels(Yd.astype(str), ["a", "b"]),
        TypeError,
        r"Y must hold 0/1 values",
    ),
    ("drop rows", lambda: drop_unlabelled(Xd[:3], Yd), ValueError, r"X has 3 rows but Y has 6"),
    ("drop X 1-D", lambda: drop_unlabelled(Xd[:, 0], Yd), ValueError, r"X must be 2-D"),
    (
        "initial fraction 0",
        lambda: balanced_initial_set(Yd, 0),
        ValueError,
        r"fraction must be in \(0, 1\]",
    ),
    (
        "initial fraction NaN",
        lambda: balanced_initial_set(Yd, np.nan),
        ValueError,
        r"fraction must be in",
    ),
    (
        "initial fraction str",
        lambda: balanced_initial_set(Yd, "0.1"),
        TypeError,
        r"fraction must be a real number",
    ),
    (
        "initial fraction bool",
        lambda: balanced_initial_set(Yd, True),
        TypeError,
        r"fraction must be a real number",
    ),
    (
        "initial fraction 1.5",
        lambda: balanced_initial_split(Xd, Yd, 1.5),
        ValueError,
        r"fraction must be in",
    ),
    (
        "initial rows",
        lambda: balanced_initial_split(Xd[:2], Yd, 0.5),
        ValueError,
        r"X has 2 rows but Y has 6",
    ),
    ("prefix fraction -1", lambda: prefix_split(Xd, Yd, -1), ValueError, r"fraction must be in"),
    (
        "prefix fraction inf",
        lambda: prefix_split(Xd, Yd, math.inf),
        ValueError,
        r"fraction must be in",
    ),
    ("minmax 1-D", lambda: minmax_scale(Xd[:, 0]), ValueError, r"train must be 2-D"),
    (
        "minmax NaN",
        lambda: minmax_scale(np.where(Xd > 3, np.nan, Xd)),
        ValueError,
        r"train contains NaN",
    ),
    (
        "minmax str",
        lambda: minmax_scale(Xd.astype(str)),
        TypeError,
        r"train must hold real numbers",
    ),
    (
        "minmax object",
        lambda: minmax_scale(np.array([[None, 1.0]])),
        TypeError,
        r"train must hold real numbers",
    ),
    ("minmax complex", lambda: minmax_scale(Xd + 1j), TypeError, r"train must hold real numbers"),
    (
        "minmax ragged",
        lambda: minmax_scale([[1.0], [1.0, 2.0]]),
        TypeError,
        r"train cannot be read as an array",
    ),
    ("minmax empty", lambda: minmax_scale(Xd[:0]), ValueError, r"train has no row"),
    (
        "minmax others columns",
        lambda: minmax_scale(Xd, Xd[:, :1]),
        ValueError,
        r"others\[0\] has 1 columns but train has 2",
    ),
    ("minmax others 1-D", lambda: minmax_scale(Xd, Xd[0]), ValueError, r"others\[0\] must be 2-D"),
    (
        "minmax others str",
        lambda: minmax_scale(Xd, Xd, Xd.astype(str)),
        TypeError,
        r"others\[1\] must hold real numbers",
    ),
]


@_named_cases("call, exc, match", DATASETS_CASES)
def test_preprocessing_refuses_bad_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_numpy_scalar_fractions_are_accepted():
    idx32, _ = balanced_initial_set(Yd, np.float32(0.5))
    idx64, _ = balanced_initial_set(Yd, np.float64(0.5))
    np.testing.assert_array_equal(idx32, idx64)


@pytest.fixture(scope="module")
def arff_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("arff") / "small.arff"
    path.write_text(
        "@relation 'small: -C -2'\n@attribute a numeric\n@attribute b numeric\n"
        "@attribute y1 {0,1}\n@attribute y2 {0,1}\n@data\n1,2,0,1\n3,4,1,0\n"
    )
    return path


ARFF_CASES = [
    (
        "path None",
        {"path": None},
        TypeError,
        r"path must be a str or an os.PathLike of str, got None",
    ),
    ("path int", {"path": 3}, TypeError, r"path must be a str or an os.PathLike .*got 3"),
    ("path bytes", {"path": b"small.arff"}, TypeError, r"path must be a str or an os.PathLike"),
    ("path missing", {"path": "no-such-file.arff"}, FileNotFoundError, r"no-such-file\.arff"),
    ("xml int", {"xml": 5}, TypeError, r"xml must be a str or an os.PathLike .*got 5"),
    ("xml missing", {"xml": "no-such-labels.xml"}, FileNotFoundError, r"no-such-labels\.xml"),
    (
        "nominal",
        {"nominal": "ignore"},
        ValueError,
        r"nominal must be 'error' or 'onehot', got 'ignore'",
    ),
    (
        "nominal None",
        {"nominal": None},
        ValueError,
        r"nominal must be 'error' or 'onehot', got None",
    ),
    (
        "missing",
        {"missing": "median"},
        ValueError,
        r"missing must be 'error', 'mean' or 'zero', got 'median'",
    ),
    ("missing int", {"missing": 1}, ValueError, r"missing must be .* got 1"),
    (
        "dtype int",
        {"dtype": np.int64},
        ValueError,
        r"dtype must be a floating-point type, got int64",
    ),
    (
        "dtype complex",
        {"dtype": complex},
        ValueError,
        r"dtype must be a floating-point type, got complex128",
    ),
    (
        "dtype bogus",
        {"dtype": "bogus"},
        TypeError,
        r"dtype must be a floating-point type, got 'bogus'",
    ),
    (
        "encoding unknown",
        {"encoding": "utf-6"},
        ValueError,
        r"encoding 'utf-6' is not a known text encoding",
    ),
    ("encoding bytes codec", {"encoding": "rot13"}, ValueError, r"encoding 'rot13' is not a known"),
    (
        "encoding int",
        {"encoding": 8},
        TypeError,
        r"encoding must be the name of a text encoding, got 8",
    ),
    (
        "labels int",
        {"labels": 5},
        TypeError,
        r"labels must be a sequence of attribute names, got 5",
    ),
    (
        "labels str",
        {"labels": "y1"},
        TypeError,
        r"labels must be a sequence of attribute names, not a string",
    ),
    ("labels empty", {"labels": []}, ValueError, r"labels= is empty"),
    ("labels repeated", {"labels": ["y1", "y1"]}, ValueError, r"labels= repeats a name"),
    ("labels unknown", {"labels": ["zz"]}, ArffError, r"no attribute named 'zz'"),
    (
        "labels and location",
        {"labels": ["y1"], "label_location": ("last", 1)},
        ValueError,
        r"give at most one of labels=, label_location= and xml=",
    ),
    (
        "location str",
        {"label_location": "last"},
        ValueError,
        r"label_location must be \('first' \| 'last', n\), got 'last'",
    ),
    ("location short", {"label_location": ("last",)}, ValueError, r"label_location must be"),
    (
        "location where",
        {"label_location": ("middle", 1)},
        ValueError,
        r"label_location must be .*'middle'",
    ),
    ("location n str", {"label_location": ("last", "1")}, ValueError, r"label_location must be"),
    ("location n bool", {"label_location": ("last", True)}, ValueError, r"label_location must be"),
    (
        "location n 0",
        {"label_location": ("last", 0)},
        ValueError,
        r"label_location: n must be in 1..3 for 4 attributes, got 0",
    ),
    (
        "location n too large",
        {"label_location": ("first", 4)},
        ValueError,
        r"label_location: n must be in 1..3",
    ),
]


@pytest.mark.parametrize("reader", ["load_arff", "iter_arff"])
@_named_cases("kwargs, exc, match", ARFF_CASES)
def test_arff_readers_refuse_bad_arguments(arff_file, reader, kwargs, exc, match):
    kwargs = dict(kwargs)
    path = kwargs.pop("path", arff_file)
    if isinstance(path, str) and path.startswith("no-such"):
        path = arff_file.parent / path
    if isinstance(kwargs.get("xml"), str):
        kwargs["xml"] = arff_file.parent / kwargs["xml"]
    read = load_arff if reader == "load_arff" else iter_arff
    with pytest.raises(exc, match=match):
        read(path, **kwargs)


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, True, "10", None])
def test_iter_arff_refuses_a_bad_chunk_size(arff_file, chunk_size):
    with pytest.raises(ValueError, match=r"chunk_size must be a positive integer, got "):
        iter_arff(arff_file, chunk_size)


def test_iter_arff_accepts_numpy_integers(arff_file):
    chunks = list(iter_arff(arff_file, np.int64(1)))
    assert [x.shape for x, _ in chunks] == [(1, 2), (1, 2)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_range_check_counts_what_numpy_counts(dtype, n_threads):
    """The compiled pass behind check_features: NaN, infinities and values beyond the limit
    count, the limit itself does not; in blocks of rows across threads (a bad value in any
    block, the last partial one included)."""
    from mlsom import _core
    from mlsom._validation import MAX_ABS_VALUE, MAX_ABS_VALUE_32

    limit = MAX_ABS_VALUE_32 if dtype == np.float32 else MAX_ABS_VALUE
    rng = np.random.default_rng(7)
    # past a million values (the threads' threshold), rows not a multiple of the block
    X = rng.normal(size=(9_001, 128)).astype(dtype)

    def numpy_count(a):
        with np.errstate(invalid="ignore", over="ignore"):
            return int((~(np.abs(a.astype(np.float64)) <= limit)).sum())

    assert _core.count_out_of_range(X, limit, n_threads) == 0
    top = np.nextafter(dtype(limit), dtype(np.inf))  # the first value of the type past it
    at = np.nextafter(top, dtype(0))  # the largest value of the type at most the limit
    cells = [(0, 0), (511, 127), (4_000, 3), (9_000, 127), (9_000, 0)]
    for value in (np.nan, np.inf, -np.inf, top, -top):
        Y = X.copy()
        for i, j in cells:
            Y[i, j] = value
        assert _core.count_out_of_range(Y, limit, n_threads) == numpy_count(Y) == len(cells)
    Y = X.copy()
    Y[5, 5], Y[6, 6] = at, -at
    assert _core.count_out_of_range(Y, limit, n_threads) == numpy_count(Y) == 0
    # small and empty inputs, one column
    assert _core.count_out_of_range(X[:0], limit, n_threads) == 0
    col = np.ascontiguousarray(X[:7, :1])
    col[3, 0] = np.nan
    assert _core.count_out_of_range(col, limit, n_threads) == 1
