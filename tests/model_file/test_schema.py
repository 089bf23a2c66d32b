"""The state's table (src/mlsom/_schema.py) is the one source of what a model holds: every array
a fitted model of each kind holds is a row of it, with that row's dtype and shape; save writes
every row the model holds and load reads each back; the model file's header names the groups,
and a header whose groups disagree with the members is refused."""

import json
import pickle
import warnings

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _model_file, _schema


def _data(seed=0, n=120, A=4, L=3):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    X = Y @ rng.normal(scale=3.0, size=(L, A)) + rng.normal(size=(n, A))
    return X, Y


def _model(kind, dtype=np.float64):
    """A fitted model holding the groups of ``kind``: "paper" (maps, counts), "labelled" (and
    what labels teach, with label persistence), "tested" (and the paired test), "robust" (the
    robust variant's drift gate and acceptance, and what labels teach)."""
    X, Y = _data()
    X = X.astype(dtype)
    params = {"grid_size": 2, "random_state": 0, "n_jobs": 1, "corrections": "strong"}
    if kind == "tested":
        params["corrections"] = "tested"
    if kind == "robust":
        params["variant"] = "robust"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SOMStreamClassifier(**params).fit(X[:80], Y[:80])
    model.predict_stream(X[80:100])
    if kind != "paper":
        model.partial_fit(X[100:], Y[100:])
        model.predict_stream(X[:10])
    return model


KINDS = {
    "paper": ["maps", "counts"],
    "labelled": ["maps", "counts", "labelled", "rule", "guards", "persistence"],
    "tested": ["maps", "counts", "labelled", "rule", "guards", "pairs", "persistence"],
    "robust": [
        "maps",
        "counts",
        "labelled",
        "rule",
        "guards",
        "persistence",
        "drift",
        "acceptance",
    ],
}


def test_the_table_names_each_member_once_in_known_groups():
    names = [m.name for m in _schema.MEMBERS]
    assert len(names) == len(set(names))
    assert {m.group for m in _schema.MEMBERS} == set(_schema.GROUPS)
    for g in _schema.GROUPS.values():
        assert g.needs is None or g.needs in _schema.GROUPS
    assert not set(names) & set(_schema.FIELDS)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_array_a_model_holds_is_a_row_of_the_table(kind, dtype):
    st = _model(kind, dtype)._state
    assert _schema.groups_present(st) == KINDS[kind]
    sizes = _schema.dims_of(st)
    arrays = {k for k, v in st.items() if isinstance(v, np.ndarray)}
    # the arrays of the state: the table's, and the robust variant's acceptance record (a field)
    assert arrays - {"ctl"} == set(_schema.members(st))
    for key in _schema.members(st):
        want = _schema.expected(key, sizes, np.dtype(dtype))
        assert (st[key].dtype, st[key].shape) == want, key
    for key in set(st) - arrays:
        assert key in _schema.FIELDS or key in SOMStreamClassifier._COPIES, key


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_save_writes_every_row_the_model_holds_and_load_reads_it_back(kind, tmp_path):
    model = _model(kind)
    path = tmp_path / "m.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"][()]))
        written = set(z.files) - {"meta"}
    assert meta["format"] == _model_file.FORMAT == 2
    assert meta["groups"] == KINDS[kind]
    assert written == set(_schema.members(model._state))
    back = SOMStreamClassifier.load(path)
    assert _schema.members(back._state) == _schema.members(model._state)
    for key in _schema.members(model._state):
        np.testing.assert_array_equal(back._state[key], model._state[key], err_msg=key)
        assert back._state[key].dtype == model._state[key].dtype, key
    # a pickle keeps the same members, and no copy of the neurons
    model.predict(np.zeros((1, 4)))  # makes the predict copy
    copy = pickle.loads(pickle.dumps(model))
    assert _schema.members(copy._state) == _schema.members(model._state)
    assert not set(copy._state) & set(SOMStreamClassifier._COPIES)


def test_allocation_follows_the_table():
    sizes = _schema.dims(3, 7, 2)
    got = _schema.allocate("pairs", sizes, np.float32)
    assert list(got) == list(_schema.names("pairs"))
    assert got["alt_place"].dtype == np.float32 and got["alt_place"].shape == (7, 3)
    assert np.all(got["alt_uses"] == -1) and got["alt_uses"].dtype == np.int8
    assert got["pair_ring"].shape == (sizes["P"],)
    rec = _schema.allocate("persistence", sizes, np.float64)["persist_labels"]
    np.testing.assert_array_equal(rec, [[0, 0], [0, 0], [-1, -1]])
    st = {"Wt": np.zeros((3, 7)), "T": np.zeros((2, 2), np.int64)}
    with pytest.raises(ValueError, match="'rule' needs the group 'labelled'"):
        _schema.ensure(st, "rule")


def _saved(tmp_path, kind="labelled"):
    path = tmp_path / "m.npz"
    _model(kind).save(path)
    return _model_file.read(path)


@pytest.mark.parametrize(
    "groups",
    [
        ["maps", "counts", "labelled", "rule", "guards"],  # one group left out
        ["maps", "counts", "labelled", "rule", "guards", "persistence", "pairs"],  # one too many
        ["maps", "counts", "labelled", "rule", "persistence", "guards"],  # another order
        None,
        "maps",
    ],
    ids=["fewer", "more", "order", "none", "string"],
)
def test_a_format_2_header_whose_groups_disagree_with_the_members_is_refused(tmp_path, groups):
    meta, arrays = _saved(tmp_path)
    meta["groups"] = groups
    path = tmp_path / "bad.npz"
    _model_file.write(path, meta, arrays)
    with pytest.raises(ValueError, match=r"bad\.npz'?: inconsistent model file: the header names"):
        SOMStreamClassifier.load(path)


def test_members_of_a_group_not_named_are_refused(tmp_path):
    """A whole group of members that the header does not name (it says what it holds)."""
    meta, arrays = _saved(tmp_path)
    without = {k: v for k, v in arrays.items() if k not in _schema.names("persistence")}
    meta_without = {**meta, "groups": [g for g in meta["groups"] if g != "persistence"]}
    _model_file.write(tmp_path / "fine.npz", meta_without, without)
    assert "persist_row" not in SOMStreamClassifier.load(tmp_path / "fine.npz")._state
    _model_file.write(tmp_path / "bad.npz", meta_without, arrays)
    with pytest.raises(ValueError, match=r"bad\.npz'?: inconsistent model file: the header names"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")


def test_format_1_tells_groups_by_members_and_names_none(tmp_path):
    meta, arrays = _saved(tmp_path)
    old = {k: v for k, v in meta.items() if k != "groups"}
    _model_file.write(tmp_path / "old.npz", {**old, "format": 1}, arrays)
    back = SOMStreamClassifier.load(tmp_path / "old.npz")
    assert _schema.groups_present(back._state) == KINDS["labelled"]
    _model_file.write(tmp_path / "bad.npz", {**meta, "format": 1}, arrays)
    with pytest.raises(ValueError, match=r"bad\.npz'?: .*groups named in a format 1 header"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
    _model_file.write(tmp_path / "new.npz", {**meta, "format": 3}, arrays)
    with pytest.raises(ValueError, match=r"unsupported model file format 3"):
        SOMStreamClassifier.load(tmp_path / "new.npz")


def test_a_member_off_the_table_shape_names_the_table_shape(tmp_path):
    meta, arrays = _saved(tmp_path)
    L = arrays["T"].shape[0]
    arrays["margin_kinds"] = np.zeros((L, 499), np.uint8)
    _model_file.write(tmp_path / "bad.npz", meta, arrays)
    with pytest.raises(ValueError, match=rf"margin_kinds has dtype uint8 and shape \({L}, 499\), "):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
