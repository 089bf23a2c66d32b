"""Model files written by an earlier mlsom load, and go on bit for bit.

``tests/data/model-files/`` holds model files that ``SOMStreamClassifier.save`` wrote with the
mlsom of the commit its README names (model-file format 1), one for each kind of state a file
holds (the paper's variant; the robust one, its offsets and drift gate moved, in float64 and in
float32 with ``grid_size="auto"``; guards learnt from labels; a model saved between two stream
calls with label persistence and paired tests pending, in float64 and float32). Beside each,
``NAME-expected.npz`` holds the inputs of a continuation (a stream, the labels that arrive
during it, rows to score frozen) and what that mlsom gave for it: the frozen predictions right
after loading, the stream's predictions, the frozen predictions after it, and a SHA-256 digest
of each public fitted attribute right after loading and after the stream.

Each file is loaded with today's code and must give all of it bit for bit; so must the loaded
model pickled, saved again and loaded, or both, and the continuation on every SIMD path. The
files are never rewritten: the header must still say the format they were written in.
"""

import copy
import hashlib
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _testing
from tests.helpers.paths import DATA

FIXTURES_DIR = DATA / "model-files"
FIXTURES = ("paper", "robust", "robust-float32", "guards", "pending", "pending-float32")
# averout_ is exp of log_averout_ (digested) by the C library, whose last bit may differ between
# processors (docs/platforms.md)
NOT_DIGESTED = frozenset({"averout_"})


# ------------------------------------------------------------------------------------- helpers


def fitted_attribute_names(model):
    """The public fitted attributes the model has: the properties of its class whose names end
    with an underscore (averout_ aside, see NOT_DIGESTED), those that raise AttributeError for
    this model (feature_names_in_ without named features) left out."""
    names = []
    for name in sorted(dir(type(model))):
        if name.startswith("_") or not name.endswith("_") or name in NOT_DIGESTED:
            continue
        if not isinstance(getattr(type(model), name), property):
            continue
        try:
            getattr(model, name)
        except AttributeError:
            continue
        names.append(name)
    return names


def _feed(h, value):
    """Add a value to a hash with its kind, and for an array its dtype and shape: equal digests
    mean the same bits. Python and NumPy scalars of one kind hash alike; arrays in little-endian
    byte order whatever the machine's."""
    if value is None:
        h.update(b"N;")
    elif isinstance(value, bool | np.bool_):
        h.update(b"B%d;" % bool(value))
    elif isinstance(value, int | np.integer):
        h.update(b"I%d;" % int(value))
    elif isinstance(value, float | np.floating):
        h.update(b"F" + float(value).hex().encode() + b";")  # exact: hex of the float64
    elif isinstance(value, str):
        raw = value.encode()
        h.update(b"S%d:" % len(raw) + raw)
    elif isinstance(value, list | tuple):
        h.update(b"L%d:" % len(value))
        for v in value:
            _feed(h, v)
    elif isinstance(value, dict):
        h.update(b"D%d:" % len(value))
        for key in sorted(value):
            _feed(h, key)
            _feed(h, value[key])
    elif isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("cannot digest an array of Python objects")
        a = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<"), copy=False)
        h.update(b"A" + a.dtype.str.encode() + repr(tuple(a.shape)).encode() + b":")
        h.update(a.tobytes())
    else:
        raise TypeError(f"cannot digest a {type(value).__name__}")


def digest(value):
    """The SHA-256 (hex) of one value, as _feed hashes it."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()


def attribute_digests(model, names):
    """{name: digest of the model's attribute}, for the given names."""
    return {name: digest(getattr(model, name)) for name in names}


def continuation(model, inputs, names):
    """Run the fixed continuation on a model; return what is compared.

    ``inputs``: ``X_next`` (the stream), ``X_probe`` (rows scored frozen) and, where labels
    arrive during the stream, ``arrivals_X``, ``arrivals_Y``, ``arrivals_after`` (as
    ``predict_stream``'s ``arrivals``). ``names``: the fitted attributes to digest."""
    out = {"digests_loaded": attribute_digests(model, names)}
    out["Y_probe_loaded"] = model.predict(inputs["X_probe"])
    arrivals = None
    if "arrivals_after" in inputs:
        arrivals = (inputs["arrivals_X"], inputs["arrivals_Y"], inputs["arrivals_after"])
    out["Y_stream"] = model.predict_stream(inputs["X_next"], arrivals=arrivals)
    out["Y_probe_after"] = model.predict(inputs["X_probe"])
    out["digests_after"] = attribute_digests(model, names)
    return out


INPUT_KEYS = ("X_next", "X_probe", "arrivals_X", "arrivals_Y", "arrivals_after")
PREDICTION_KEYS = ("Y_probe_loaded", "Y_stream", "Y_probe_after")


def header(path):
    """The JSON header (the ``meta`` member) of a model file, read without unpickling."""
    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["meta"][()]))


def file_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# Changes of the method since the files were written, oldest first: (tag, the fixtures whose
# continuation it changes). For those, what the model does after loading (its predictions and
# its attributes after the stream) is that of NAME-expected-TAG.npz, written with the code of
# the change by continue_after_change.py; what loading gives stays that of NAME-expected.npz.
METHOD_CHANGES = [
    # at most ceil(z) labels an instance once labels have taught the rule (docs/method.md)
    ("bound", ("guards", "pending", "pending-float32")),
]
CONTINUED = ("Y_probe_loaded", "Y_stream", "Y_probe_after", "digests_after")


def expected(name):
    """The committed inputs and outputs of fixture ``name`` (a dict of arrays and values): those
    the earlier mlsom recorded, with the continuation of the last method change that changed
    it."""
    with np.load(FIXTURES_DIR / f"{name}-expected.npz", allow_pickle=False) as z:
        want = {key: z[key] for key in z.files}
    for tag, names in METHOD_CHANGES:
        if name in names:
            with np.load(FIXTURES_DIR / f"{name}-expected-{tag}.npz", allow_pickle=False) as z:
                assert str(z["model_sha256"]) == str(want["model_sha256"])
                assert list(z["names"]) == list(want["names"])
                want.update({key: z[key] for key in CONTINUED})
    return want


def assert_same_continuation(got, want, what):
    """Every prediction equal, every digest equal (naming the attributes that differ)."""
    for key in PREDICTION_KEYS:
        assert got[key].dtype == want[key].dtype, f"{what}: {key} dtype"
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{what}: {key}")
    names = [str(n) for n in want["names"]]
    for key in ("digests_loaded", "digests_after"):
        recorded = dict(zip(names, (str(d) for d in want[key]), strict=True))
        differ = [n for n in names if got[key][n] != recorded[n]]
        assert not differ, f"{what}: {key}: the attributes {differ} differ"


def _inputs(want):
    return {k: want[k] for k in INPUT_KEYS if k in want}


def _names(want):
    return [str(n) for n in want["names"]]


# --------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", FIXTURES)
def test_the_files_are_those_the_earlier_format_wrote(name):
    """The committed file is the one the generator wrote (its SHA-256), and its header still
    says the format and version it was written with: the files are never rewritten."""
    want = expected(name)
    path = FIXTURES_DIR / f"{name}.npz"
    assert file_sha256(path) == str(want["model_sha256"])
    meta = header(path)
    assert meta["format"] == int(want["format"]) == 1
    assert meta["mlsom_version"] == str(want["mlsom_version"])
    with zipfile.ZipFile(path) as zf:  # model files are stored, as save writes them
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


@pytest.mark.parametrize("name", FIXTURES)
def test_files_of_format_1_load_and_continue_bit_for_bit(name):
    want = expected(name)
    model = SOMStreamClassifier.load(FIXTURES_DIR / f"{name}.npz")
    missing = [n for n in _names(want) if not hasattr(model, n)]
    assert not missing, f"the loaded model has no {missing}"
    got = continuation(model, _inputs(want), _names(want))
    assert_same_continuation(got, want, f"{name} loaded")


@pytest.mark.parametrize("route", ["pickle", "save", "pickle-save"])
@pytest.mark.parametrize("name", FIXTURES)
def test_loaded_then_pickled_or_saved_again_continues_bit_for_bit(name, route, tmp_path):
    """The loaded model pickled, saved with today's code and loaded, or pickled then saved and
    loaded, continues as the file itself does."""
    want = expected(name)
    model = SOMStreamClassifier.load(FIXTURES_DIR / f"{name}.npz")
    if route.startswith("pickle"):
        model = pickle.loads(pickle.dumps(model))
    if route.endswith("save"):
        model.save(tmp_path / "again.npz")
        model = SOMStreamClassifier.load(tmp_path / "again.npz")
    got = continuation(model, _inputs(want), _names(want))
    assert_same_continuation(got, want, f"{name} loaded, then {route}")


@pytest.mark.parametrize("name", FIXTURES)
def test_every_simd_path_and_screening_off_continue_bit_for_bit(name):
    want = expected(name)
    loaded = SOMStreamClassifier.load(FIXTURES_DIR / f"{name}.npz")
    switches = [{"simd": level} for level in _testing.simd_levels()] + [{"screening": False}]
    for switch in switches:
        with _testing.switches(**switch):
            got = continuation(copy.deepcopy(loaded), _inputs(want), _names(want))
        assert_same_continuation(got, want, f"{name} with {switch}")


@pytest.mark.parametrize("name", FIXTURES)
def test_a_continuation_one_bit_away_is_caught(name):
    """The comparison sees the smallest change: the learning rate one unit in the last place
    (of the model's float type) higher changes the digests after the stream."""
    want = expected(name)
    model = SOMStreamClassifier.load(FIXTURES_DIR / f"{name}.npz")
    dtype = next(w.dtype for w in model.weights_ if w is not None).type
    model.set_params(learning_rate=float(np.nextafter(dtype(model.learning_rate), dtype(1))))
    got = continuation(model, _inputs(want), _names(want))
    with pytest.raises(AssertionError, match="Y_stream|Y_probe_after|digests_after"):
        assert_same_continuation(got, want, name)


def test_digests_see_one_bit_dtype_shape_and_kind():
    w = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    one_ulp = w.copy()
    one_ulp[1, 2] = np.nextafter(one_ulp[1, 2], 2.0)
    values = [
        [w, None],
        [one_ulp, None],
        [w.astype(np.float32), None],
        [w.reshape(4, 3), None],
        [w, w[:0]],
        (0.1,),
        (float(np.nextafter(0.1, 1.0)),),
        (1,),
        (True,),
        ("1",),
        {1: 0.5},
        {2: 0.5},
    ]
    digests = [digest(v) for v in values]
    assert len(set(digests)) == len(values)
    # the same bits in another byte order, and a NumPy scalar for a Python one, hash alike
    assert digest(w.astype(">f8")) == digest(w)
    assert digest(np.float64(0.1)) == digest(0.1) and digest(np.int64(3)) == digest(3)
