"""Every parameter value fit accepts is saved and loaded; model file paths that cannot name a
file are refused by save and load.

For every constructor parameter and every kind of value (Python, NumPy scalars of each type,
0-d arrays, Fraction, Decimal, str subclasses): either fit refuses it with an error naming the
parameter, or the model saves, loads with the parameter as the plain Python value the model
used, and the loaded model predicts and learns exactly as the one in memory.
"""

import inspect
import os
import re
import socket
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from mlsom import SOMStreamClassifier

INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOAT_TYPES = (np.float16, np.float32, np.float64)

#: parameter -> a valid value of it, for the kinds of integer and real values
INTEGERS = {
    "grid_size": 2,
    "n_epochs": 5,
    "max_epochs": 20,
    "min_neuron_size": 2,
    "n_jobs": 1,
    "random_state": 3,
}
REALS = {"learning_rate": 0.05, "correction_rate": 0.3, "novelty_radius": 1.5}
OPTIONS = {
    "corrections": "tested",
    "label_persistence": "off",
    "neighborhood": "gaussian",
    "averout_distance": "sqeuclidean",
    "zero_cooccurrence": "skip",
    "variant": "robust",
    "grid_size": "auto",
}
BOOLEANS = {"novelty": True}
BASE = {"grid_size": 2, "n_epochs": 5, "max_epochs": 20, "random_state": 0, "n_jobs": 1}


def _kinds(value):
    """(label, value, accepted) for each kind of value the parameter could be given as."""
    if isinstance(value, bool):
        return [
            ("bool", value, True),
            ("numpy bool", np.bool_(value), True),
            ("int", int(value), False),
            ("str", str(value), False),
            ("0-d array", np.array(value), False),
        ]
    if isinstance(value, str):
        return [
            ("str", value, True),
            ("numpy str", np.str_(value), True),
            ("0-d array", np.array(value), False),
            ("bytes", value.encode(), False),
        ]
    if isinstance(value, int):
        kinds = [("int", value, True), ("bool", True, False), ("numpy bool", np.True_, False)]
        kinds += [(t.__name__, t(value), True) for t in INT_TYPES]
        kinds += [(t.__name__, t(value), False) for t in FLOAT_TYPES]
        kinds += [
            ("float", float(value), False),
            ("0-d array", np.array(value), False),
            ("Fraction", Fraction(value), False),
            ("Decimal", Decimal(value), False),
        ]
        return kinds
    kinds = [
        ("float", value, True),
        ("int", 1, True),
        ("bool", True, False),
        ("numpy bool", np.True_, False),
    ]
    kinds += [(t.__name__, t(1), True) for t in INT_TYPES]
    kinds += [(t.__name__, t(value), True) for t in FLOAT_TYPES]
    kinds += [
        ("Fraction", Fraction(value).limit_denominator(1000), True),
        ("Fraction 1/3", Fraction(1, 3), True),
        ("0-d array", np.array(value), False),
        ("Decimal", Decimal(str(value)), False),
        ("str", str(value), False),
    ]
    return kinds


CASES = [
    pytest.param(name, value, accepted, id=f"{name}-{label}")
    for table in (INTEGERS, REALS, OPTIONS, BOOLEANS)
    for name, typical in table.items()
    for label, value, accepted in _kinds(typical)
]
CASES += [
    pytest.param("n_jobs", None, True, id="n_jobs-None"),
    pytest.param("n_jobs", np.int8(-1), True, id="n_jobs-int8 -1"),
    pytest.param("random_state", None, True, id="random_state-None"),
    pytest.param("random_state", 2**128 - 1, True, id="random_state-2**128-1"),
    pytest.param("random_state", np.uint64(2**64 - 1), True, id="random_state-uint64 max"),
]


def test_the_cases_cover_every_parameter():
    names = {p.values[0] for p in CASES}
    params = set(inspect.signature(SOMStreamClassifier).parameters)
    assert names == params


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    k = rng.integers(0, 3, size=n)
    X = centres[k] + rng.normal(size=(n, 3))
    Y = np.eye(3, dtype=np.uint8)[k]
    Y[(k == 2) & (rng.random(n) < 0.3), 0] = 1
    return X, Y


X, Y = _data()
X_FIT, Y_FIT, X_REST, Y_REST = X[:80], Y[:80], X[80:], Y[80:]


def _plain(value):
    """The plain Python value the model uses for a parameter value."""
    if value is None or isinstance(value, np.random.Generator):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    return float(value)


def _run(model):
    """What the model does next: a stream chunk, labels that arrive, then another chunk."""
    first = model.predict_stream(X_REST[:60])
    model.partial_fit(X_REST[60:100], Y_REST[60:100])
    return first, model.predict_stream(X_REST[100:]), model.predict(X_REST)


@pytest.mark.parametrize("name, value, accepted", CASES)
def test_every_value_fit_accepts_is_saved_and_loaded(name, value, accepted, tmp_path):
    params = {**BASE, name: value}
    if name == "grid_size" and value == "auto":
        params.update(n_epochs=2, max_epochs=4)
    model = SOMStreamClassifier(**params)
    if not accepted:
        with pytest.raises((TypeError, ValueError), match=name):
            model.fit(X_FIT, Y_FIT)
        return
    model.fit(X_FIT, Y_FIT)
    assert model.get_params()[name] is value  # fit leaves the parameters as given
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = SOMStreamClassifier.load(path)
    got = loaded.get_params()
    for key, given in model.get_params().items():
        assert type(got[key]) is type(_plain(given)), key
        assert got[key] == _plain(given), key
    # a model fitted with the plain values is the same model (with a seed: None draws afresh)
    if got["random_state"] is not None:
        again = SOMStreamClassifier(**got).fit(X_FIT, Y_FIT)
        for attr in ("T_", "neuron_counts_", "weights_"):
            a, b = getattr(model, attr), getattr(again, attr)
            np.testing.assert_array_equal(np.concatenate(a), np.concatenate(b), err_msg=attr)
    # and the loaded model does exactly what the one in memory does
    for a, b in zip(_run(model), _run(loaded), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.concatenate(model.weights_), np.concatenate(loaded.weights_))


def test_a_generator_random_state_is_saved_as_none(tmp_path):
    model = SOMStreamClassifier(**{**BASE, "random_state": np.random.default_rng(5)})
    model.fit(X_FIT, Y_FIT).save(tmp_path / "m.npz")
    loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
    assert loaded.get_params()["random_state"] is None
    np.testing.assert_array_equal(model.predict(X_REST), loaded.predict(X_REST))


@pytest.mark.parametrize(
    "name, value, match",
    [
        ("random_state", 2**128, r"random_state must be < 2\*\*128"),
        ("random_state", 10**5000, r"random_state must be < 2\*\*128"),
        ("min_neuron_size", 2**63, r"min_neuron_size must be <= 9223372036854775807"),
        ("n_jobs", 2**63, r"n_jobs must be <= 9223372036854775807"),
        ("n_jobs", -(2**63), r"n_jobs must be >= -9223372036854775807"),
        ("min_neuron_size", 10**5000, r"min_neuron_size must be <= .*got an integer of 16610 b"),
    ],
    ids=lambda v: v if isinstance(v, str) else f"{v.bit_length()} bits",
)
def test_integers_a_model_file_could_not_hold_are_refused_by_fit(name, value, match):
    with pytest.raises(ValueError, match=match):
        SOMStreamClassifier(**{**BASE, name: value}).fit(X_FIT, Y_FIT)


def test_a_value_set_after_fit_that_fit_would_refuse_is_refused_by_save(tmp_path):
    model = SOMStreamClassifier(**BASE).fit(X_FIT, Y_FIT)
    model.set_params(learning_rate=Decimal("0.1"))
    with pytest.raises(TypeError, match="learning_rate must be a real number"):
        model.save(tmp_path / "m.npz")
    assert not os.listdir(tmp_path)


# ---------------------------------------------------------------------------- paths


@pytest.fixture(scope="module")
def fitted():
    return SOMStreamClassifier(**BASE).fit(X_FIT, Y_FIT)


def test_save_and_load_refuse_an_empty_path(fitted, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for path in ("", b""):
        with pytest.raises(ValueError, match=r"cannot save to '': an empty path is not a file"):
            fitted.save(path)
        with pytest.raises(ValueError, match=r"cannot load '': an empty path is not a file"):
            SOMStreamClassifier.load(path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("tail", ["sub/", "missing/", "./", "sub/.npz", ".npz"])
def test_save_refuses_a_path_that_names_no_file(fitted, tmp_path, tail):
    os.mkdir(tmp_path / "sub")
    path = os.path.join(str(tmp_path), tail)
    with pytest.raises(ValueError, match=re.escape(f"cannot save to {path!r}: ")):
        fitted.save(path)
    assert os.listdir(tmp_path) == ["sub"] and os.listdir(tmp_path / "sub") == []


def test_save_refuses_an_existing_folder_named_with_or_without_the_suffix(fitted, tmp_path):
    for name in ("models", "models.npz"):
        os.mkdir(tmp_path / name)
        with pytest.raises(ValueError, match=rf"{name}': it exists and is not a regular file"):
            fitted.save(tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == ["models", "models.npz"]
    assert os.listdir(tmp_path / "models") == []


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_save_refuses_a_device_and_writes_nothing_beside_it(fitted):
    there = os.path.lexists("/dev/null.npz")
    try:
        for path in ("/dev/null", b"/dev/null"):
            with pytest.raises(ValueError, match=r"cannot save to '/dev/null': it exists and is"):
                fitted.save(path)
    finally:
        written = not there and os.path.lexists("/dev/null.npz")
        if written:  # (a save that went through: not left behind)
            os.unlink("/dev/null.npz")
    assert not written
    with pytest.raises(ValueError, match=r"'/dev/null' cannot be read .*not a regular file"):
        SOMStreamClassifier.load("/dev/null")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_save_refuses_a_socket_or_fifo_named_before_the_suffix(fitted, tmp_path):
    names = []
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        names.append("fifo")
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(tmp_path / "sock"))
            names.append("sock")
        except OSError:  # a path too long for a socket
            pass
        for name in names:
            with pytest.raises(ValueError, match=rf"{name}': it exists and is not a regular file"):
                fitted.save(tmp_path / name)
    assert not any(n.endswith(".npz") for n in os.listdir(tmp_path))


def test_load_refuses_a_folder_path(tmp_path):
    for path in (str(tmp_path) + "/", str(tmp_path / "missing") + "/"):
        with pytest.raises(ValueError, match="ends in a folder separator, not a file name"):
            SOMStreamClassifier.load(path)
    with pytest.raises(ValueError, match="it is a directory"):
        SOMStreamClassifier.load(tmp_path)


def test_save_still_appends_the_suffix_and_load_reads_it(fitted, tmp_path):
    fitted.save(tmp_path / "model")
    assert os.listdir(tmp_path) == ["model.npz"]
    loaded = SOMStreamClassifier.load(tmp_path / "model.npz")
    np.testing.assert_array_equal(loaded.predict(X_REST), fitted.predict(X_REST))
