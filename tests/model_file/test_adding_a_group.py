"""Adding a state group is one row of the table and the code that uses it.

A group added to the table at run time (one member, ``demo_counts``, one int64 per label), with
no other change to the package, is allocated at its initial value, kept by pickles, saved and
loaded, checked by the reader (a wrong dtype or shape, a group half present, a header that does
not name it), and absent from the files written before it, which still load and start it when
first needed (docs/architecture.md, "Adding a state group")."""

import copy
import json
import pickle
import warnings

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _model_file, _schema
from tests.helpers.model_files import rewrite

DEMO = _schema.Member("demo_counts", "demo", "i8", ("L",), init=7, since=_model_file.FORMAT)


@pytest.fixture
def table(monkeypatch):
    """The table with the group "demo" added: one row and the group's entry."""
    monkeypatch.setattr(_schema, "MEMBERS", (*_schema.MEMBERS, DEMO))
    monkeypatch.setattr(_schema, "BY_NAME", {**_schema.BY_NAME, DEMO.name: DEMO})
    demo = _schema.Group("demo", None, "a group added for this test")
    monkeypatch.setattr(_schema, "GROUPS", {**_schema.GROUPS, "demo": demo})


def _model(seed=0, n=140, A=4, L=3):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    X = Y @ rng.normal(scale=3.0, size=(L, A)) + rng.normal(size=(n, A))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SOMStreamClassifier(grid_size=2, random_state=0, n_jobs=1).fit(X[:80], Y[:80])
    model.predict_stream(X[80:100])
    return model, X[100:]


def _with_demo(model):
    """The code that uses the group: here, starting it and writing its values."""
    st = model._state
    assert _schema.ensure(st, "demo")
    np.testing.assert_array_equal(st["demo_counts"], np.full(3, 7))
    st["demo_counts"][:] = [3, 1, 4]
    return st


def test_the_group_is_allocated_pickled_and_copied(table):
    model, _ = _model()
    _with_demo(model)
    assert not _schema.ensure(model._state, "demo")  # (held: left as it is)
    for again in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model), copy.copy(model)):
        np.testing.assert_array_equal(again._state["demo_counts"], [3, 1, 4])
        assert again._state["demo_counts"] is not model._state["demo_counts"]


def test_the_group_is_saved_and_loaded_and_the_stream_goes_on(table, tmp_path):
    model, X = _model()
    _with_demo(model)
    path = tmp_path / "m.npz"
    model.save(path)
    with np.load(path) as z:
        assert json.loads(str(z["meta"][()]))["groups"][-1] == "demo"
        assert z["demo_counts"].dtype == np.int64
    again = SOMStreamClassifier.load(path)
    np.testing.assert_array_equal(again._state["demo_counts"], [3, 1, 4])
    # the rest of the state is unchanged by the group: the stream goes on bit for bit
    np.testing.assert_array_equal(again.predict_stream(X), model.predict_stream(X))
    np.testing.assert_array_equal(again._state["Wt"], model._state["Wt"])


@pytest.mark.parametrize(
    "change, match",
    [
        ({"demo_counts": np.zeros(3, np.int32)}, "demo_counts has dtype int32"),
        ({"demo_counts": np.zeros(4, np.int64)}, r"demo_counts has dtype int64 and shape \(4,\)"),
    ],
)
def test_the_reader_checks_the_group(table, tmp_path, change, match):
    model, _ = _model()
    _with_demo(model)
    model.save(tmp_path / "m.npz")
    rewrite(tmp_path / "m.npz", tmp_path / "bad.npz", **change)
    with pytest.raises(ValueError, match=match):
        SOMStreamClassifier.load(tmp_path / "bad.npz")


def test_the_reader_refuses_a_header_that_does_not_name_the_group(table, tmp_path):
    model, _ = _model()
    _with_demo(model)
    model.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as z:
        meta = json.loads(str(z["meta"][()]))
    meta["groups"].remove("demo")
    rewrite(tmp_path / "m.npz", tmp_path / "bad.npz", meta=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match="groups"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")


def test_a_file_from_before_the_group_loads_and_starts_it(table, tmp_path):
    model, X = _model()
    model.save(tmp_path / "before.npz")  # (the model has no demo group: as written before it)
    again = SOMStreamClassifier.load(tmp_path / "before.npz")
    assert "demo_counts" not in again._state
    assert _schema.ensure(again._state, "demo")
    np.testing.assert_array_equal(again._state["demo_counts"], np.full(3, 7))
    np.testing.assert_array_equal(again.predict_stream(X), model.predict_stream(X))


def test_without_the_row_the_group_is_refused(tmp_path, monkeypatch):
    """The control: a file holding the group is refused by the table without the row, so the
    tests above measure what the row does."""
    with monkeypatch.context() as m:
        m.setattr(_schema, "MEMBERS", (*_schema.MEMBERS, DEMO))
        m.setattr(_schema, "BY_NAME", {**_schema.BY_NAME, DEMO.name: DEMO})
        m.setattr(_schema, "GROUPS", {**_schema.GROUPS, "demo": _schema.Group("demo", None, "")})
        model, _ = _model()
        _with_demo(model)
        model.save(tmp_path / "m.npz")
    with pytest.raises(KeyError):
        _schema.names("demo")
    with pytest.raises(ValueError, match="demo"):
        SOMStreamClassifier.load(tmp_path / "m.npz")
