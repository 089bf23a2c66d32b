"""Model files edited by hand, the labelled members aside (test_labelled_members.py): the core
arrays damaged, files that are no model file, the fitted record of ``grid_size="auto"``, the
robust variant's record, drift gate and label acceptance, duplicated or empty feature names. Load
refuses each change with an error naming what is wrong, and reads the robust files written before
the drift gate and the labels' own acceptance offsets existed."""

import json
import os

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _model_file, _schema
from tests.helpers import reference as ref
from tests.helpers.compare import fit_quietly, params
from tests.helpers.streams import (
    drifting_stream,
    moving_blobs,
    pulled_clusters,
    three_named_columns,
)

FAST = {"grid_size": 2, "n_epochs": 3, "max_epochs": 10, "random_state": 0, "n_jobs": 1}


@pytest.fixture(scope="module")
def clusters():
    return pulled_clusters()


@pytest.fixture(scope="module")
def auto_model():
    X, Y = moving_blobs()
    return SOMStreamClassifier(grid_size="auto", random_state=3, n_epochs=20).fit(X, Y)


@pytest.fixture(scope="module")
def three_columns():
    return three_named_columns()


# ------------------------------------------------------------------- the core arrays, not a model


def test_load_refuses_damaged_files(tmp_path, clusters):
    X, Y = clusters
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(X[:200], Y[:200])
    path = tmp_path / "model.npz"
    m.save(path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    cases = {
        "offsets": lambda a: a["offsets"] + np.arange(len(a["offsets"])),
        "T": lambda a: -a["T"],
        "ncls": lambda a: a["ncls"][::-1].copy(),
        "Wt": lambda a: a["Wt"][:, :-1].copy(),
        "counts": lambda a: a["counts"] * 0,
    }
    for key, damage in cases.items():
        broken = dict(arrays)
        broken[key] = damage(arrays)
        bad_path = tmp_path / f"bad-{key}.npz"
        np.savez(bad_path, **broken)
        with pytest.raises(ValueError, match="inconsistent model file"):
            SOMStreamClassifier.load(bad_path)
    (tmp_path / "junk.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="cannot be read as an mlsom model file"):
        SOMStreamClassifier.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not an mlsom model file"):
        SOMStreamClassifier.load(tmp_path / "other.npz")


# ------------------------------------------------------------ grid_size="auto": the choice


def _tampered(tmp_path, auto_model, change):
    path = tmp_path / "m.npz"
    auto_model.save(path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files if k != "meta"}
        meta = json.loads(str(f["meta"]))
    change(meta["fitted"])
    out = tmp_path / "t.npz"
    np.savez(out, meta=np.array(json.dumps(meta)), **arrays)
    return out


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda f: f.update(grid_scores="x"), "grid_scores must be a list"),
        (lambda f: f.update(grid_scores=[]), "grid_scores must be a list"),
        (lambda f: f.update(grid_scores=[[1, 0.5]] * 11), "grid_scores must be a list"),
        (lambda f: f["grid_scores"].append([1, 0.1]), "grid_scores must be a list|repeated"),
        (lambda f: f["grid_scores"].__setitem__(0, [0, 0.1]), r"grid_scores d must be >= 1"),
        (lambda f: f["grid_scores"].__setitem__(0, [11, 0.1]), "not a candidate"),
        (lambda f: f["grid_scores"].__setitem__(0, [1, 1.5]), r"score must be <= 1"),
        (lambda f: f["grid_scores"].__setitem__(0, [1, "0.5"]), "score must be a real"),
        (lambda f: f["grid_scores"].__setitem__(0, [1]), "not a .d, score. pair"),
        (lambda f: f["grid_scores"].__setitem__(0, [1.0, 0.5]), "d must be an integer"),
        (lambda f: f.update(grid_size=f["grid_size"] % 10 + 1), "is not the best"),
    ],
)
def test_load_refuses_a_tampered_choice(tmp_path, auto_model, change, match):
    path = _tampered(tmp_path, auto_model, change)
    with pytest.raises(ValueError, match=match):
        SOMStreamClassifier.load(path)


# ------------------------------------------------------------------------ the robust variant


def _format_1(meta):
    """A model file's header as format 1 wrote it (the groups told by the members present), the
    format of the files written before this format's groups were named."""
    meta = {k: v for k, v in meta.items() if k != "groups"}
    return {**meta, "format": 1}


def test_tampered_file_variant_is_refused(tmp_path):
    X_tr, Y_tr, _ = drifting_stream(0, 2, 2)
    model = fit_quietly(X_tr, Y_tr, **params(2, variant="robust", min_neuron_size=2))
    path = tmp_path / "m.npz"
    model.save(path)
    meta, arrays = _model_file.read(path)
    for bad in ("Robust", 3, None, ["robust"]):
        meta2 = json.loads(json.dumps(meta))
        meta2["fitted"]["variant"] = bad
        bad_path = tmp_path / "bad.npz"
        _model_file.write(bad_path, meta2, arrays)
        with pytest.raises(ValueError, match="fitted variant"):
            SOMStreamClassifier.load(bad_path)
    good = [0.0, 0.01, 1.5, 1.5, 0.005, 0.1]

    def with_(k, v):
        rec = list(good)
        rec[k] = v
        return rec

    for bad in (
        None,
        good[:3],
        good + [1.0],
        "x",
        with_(0, float("nan")),
        with_(0, True),
        with_(1, 0.0),
        with_(1, 2.0),
        with_(2, -1.0),
        with_(3, -0.5),
        with_(4, 0.0),
        with_(5, 1.5),
        with_(5, "0.1"),
    ):
        meta2 = json.loads(json.dumps(meta))
        meta2["fitted"]["acceptance"] = bad
        if bad is None:
            del meta2["fitted"]["acceptance"]
        bad_path = tmp_path / "bad.npz"
        _model_file.write(bad_path, meta2, arrays)
        # (the header reader itself refuses a NaN)
        with pytest.raises(ValueError, match="fitted acceptance|NaN is not a valid header"):
            SOMStreamClassifier.load(bad_path)
    # the paper's variant with an acceptance record is refused too
    meta2 = json.loads(json.dumps(meta))
    del meta2["fitted"]["variant"]
    _model_file.write(tmp_path / "bad.npz", meta2, arrays)
    with pytest.raises(ValueError, match="fitted acceptance"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")


def saved_robust_model(tmp_path):
    """A small robust model after a stream, saved: its file's (meta, arrays), and the data."""
    X_tr, Y_tr, X_te = drifting_stream(0, 2, 2)
    model = fit_quietly(X_tr, Y_tr, **params(2, variant="robust", min_neuron_size=2))
    model.predict_stream(X_te)
    model.save(tmp_path / "m.npz")
    return (*_model_file.read(tmp_path / "m.npz"), X_tr, Y_tr, X_te)


def test_tampered_drift_gate_is_refused(tmp_path):
    meta, arrays, _, _, X_te = saved_robust_model(tmp_path)
    assert set(_schema.names("drift")) <= set(arrays)

    def changed(key, fn):
        a = {k: v.copy() for k, v in arrays.items()}
        a[key] = fn(a[key])
        return a

    def put(v, where, value):
        v = v.astype(v.dtype)
        v[where] = value
        return v

    cases = [
        (changed("drift_mean", lambda v: put(v, (0, 0), np.nan)), "drift_mean"),
        (changed("drift_mean", lambda v: put(v, (1, 1), 1e101)), "drift_mean"),
        (changed("drift_center", lambda v: put(v, (0, 1), -np.inf)), "drift_center"),
        (changed("drift_limit", lambda v: put(v, 0, -1.0)), "drift_limit"),
        (changed("drift_limit", lambda v: put(v, 1, np.nan)), "drift_limit"),
        (changed("drift_open", lambda v: put(v, 0, 2)), "drift_open"),
        (changed("drift_open", lambda v: v.astype(np.int64)), "drift_open has dtype"),
        (changed("drift_mean", lambda v: v[:, :1].copy()), "drift_mean has dtype"),
        (changed("drift_center", lambda v: v.astype(np.float32)), "drift_center has dtype"),
        ({k: v for k, v in arrays.items() if k != "drift_limit"}, "'drift_limit' is missing"),
    ]
    for bad_arrays, match in cases:
        bad_path = tmp_path / "bad.npz"
        _model_file.write(bad_path, meta, bad_arrays)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(bad_path)
    # the paper's variant has no gate
    meta_p = json.loads(json.dumps(meta))
    del meta_p["fitted"]["variant"], meta_p["fitted"]["acceptance"]
    _model_file.write(tmp_path / "bad.npz", meta_p, arrays)
    with pytest.raises(ValueError, match="drift gate arrays given for the paper's variant"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
    # a robust file from before the gate existed loads, and its maps never move as a whole
    old = {k: v for k, v in arrays.items() if k not in _schema.names("drift")}
    _model_file.write(tmp_path / "old.npz", _format_1(meta), old)
    before = SOMStreamClassifier.load(tmp_path / "old.npz")
    assert before.moving_maps_ is None and before.variant_ == "robust"
    st = ref.state_of_model(before)  # (without the gate)
    Y_ref, _ = ref.ref_stream(st, X_te, eta=before.learning_rate)
    np.testing.assert_array_equal(before.predict_stream(X_te), Y_ref)


def test_tampered_label_acceptance_is_refused(tmp_path):
    meta, arrays, X_tr, Y_tr, X_te = saved_robust_model(tmp_path)

    def changed(where, value):
        a = {k: v.copy() for k, v in arrays.items()}
        a["label_acceptance"][where] = value
        return a

    cases = [
        (changed((0, 0), np.nan), "label_acceptance: non-finite offsets"),
        (changed((0, 1), np.inf), "label_acceptance: non-finite offsets"),
        (changed((1, 0), 1.5), "label_acceptance: rates outside"),
        (changed((2, 1), -0.1), "label_acceptance: target rates outside"),
        (changed((1, 1), np.nan), "label_acceptance: rates outside"),
        (
            {**arrays, "label_acceptance": arrays["label_acceptance"].astype(np.float32)},
            "label_acceptance has dtype",
        ),
        ({**arrays, "label_acceptance": arrays["label_acceptance"][:2]}, "label_acceptance"),
    ]
    for bad_arrays, match in cases:
        _model_file.write(tmp_path / "bad.npz", meta, bad_arrays)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(tmp_path / "bad.npz")
    # a label without a map has no offset
    Y0 = Y_tr.copy()
    Y0[:, 1] = 0
    Y0[Y0.sum(axis=1) == 0, 0] = 1
    m0 = fit_quietly(X_tr, Y0, **params(2, variant="robust", min_neuron_size=2))
    m0.save(tmp_path / "m0.npz")
    meta0, arrays0 = _model_file.read(tmp_path / "m0.npz")
    arrays0["label_acceptance"][0, 1] = 0.5
    _model_file.write(tmp_path / "bad.npz", meta0, arrays0)
    with pytest.raises(ValueError, match="values for a label without a map"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
    # the paper's variant has none
    meta_p = json.loads(json.dumps(meta))
    del meta_p["fitted"]["variant"], meta_p["fitted"]["acceptance"]
    paper = {k: v for k, v in arrays.items() if k not in _schema.names("drift")}
    meta_p["groups"] = [g for g in meta_p["groups"] if g != "drift"]
    _model_file.write(tmp_path / "bad.npz", meta_p, paper)
    with pytest.raises(ValueError, match="label_acceptance given for the paper's variant"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
    # a robust file from before labels had offsets of their own loads, and goes on without
    old = {k: v for k, v in arrays.items() if k != "label_acceptance"}
    _model_file.write(tmp_path / "old.npz", _format_1(meta), old)
    before = SOMStreamClassifier.load(tmp_path / "old.npz")
    assert before.label_acceptance_offsets_ is None and before.variant_ == "robust"
    st = ref.state_of_model(before)
    assert "phi" not in st
    st["drift"] = {  # (state_of_model leaves the gate out)
        "center": before._state["drift_center"].copy(),
        "mean": before._state["drift_mean"].copy(),
        "limit": before._state["drift_limit"].copy(),
        "open": before._state["drift_open"].astype(bool),
        "beta": 0.002,
        "sigma": 0.2 * before.grid_size_,
    }
    Y_ref, _ = ref.ref_stream(st, X_te, eta=before.learning_rate)
    np.testing.assert_array_equal(before.predict_stream(X_te), Y_ref)
    assert before.label_acceptance_offsets_ is None


# ------------------------------------------------------------------------------ feature names


@pytest.mark.parametrize(
    "names, problem",
    [
        (["a", "a", "b"], r"the name\(s\) \['a'\] appear more than once"),
        (["", "", ""], r"the name\(s\) \[''\] appear more than once"),
        (["a", "", "b"], "a name is empty"),
    ],
)
def test_a_model_file_with_duplicated_or_empty_feature_names_is_refused(
    tmp_path, three_columns, names, problem
):
    pd = pytest.importorskip("pandas")
    X, Y = three_columns
    model = SOMStreamClassifier(**FAST).fit(pd.DataFrame(X[:80], columns=["a", "b", "c"]), Y[:80])
    good = tmp_path / "good.npz"
    model.save(good)
    assert list(SOMStreamClassifier.load(good).feature_names_in_) == ["a", "b", "c"]
    model._state["feature_names"] = names  # what a hand-made or altered file can hold
    bad = tmp_path / "bad.npz"
    model.save(bad)
    with pytest.raises(ValueError, match=rf"inconsistent model file: feature_names .*{problem}"):
        SOMStreamClassifier.load(bad)
    with pytest.raises(ValueError) as info:
        SOMStreamClassifier.load(bad)
    assert repr(os.fspath(bad)) in str(info.value)
