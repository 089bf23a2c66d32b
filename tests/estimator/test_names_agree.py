"""Columns that must agree are joined by name, never by position.

A training and a test file, a model and the data given to it, the training set and the test
stream of the protocol: where both sides name their features (and labels), the names must be the
same, in the same order, or the input is refused with an error showing both sides. Duplicated
and empty feature names are refused where the model keeps them (fit; model files:
tests/model_file/test_tampered_files.py).
"""

import copy
import os
import pickle
import types

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main
from mlsom.datasets import load
from mlsom.protocol import evaluate
from tests.helpers.streams import left_right_rows, three_named_columns

pd = pytest.importorskip("pandas")

FAST = {"grid_size": 2, "n_epochs": 3, "max_epochs": 10, "random_state": 0, "n_jobs": 1}


# ------------------------------------------------------------------------- split ARFF files

LABELS = ["class0", "class1", "class2", "class3"]
FEATURES = ["att0", "att1"]


def _write_meka(path, X, Y, features=FEATURES, labels=LABELS, columns=None):
    """A MEKA ARFF file (the labels first), declaring the features ``features``, the values of
    each the column of X given by ``columns`` (default: X's columns in order)."""
    columns = list(range(len(features))) if columns is None else columns
    head = [f"@relation 'split: -C {len(labels)}'", ""]
    head += [f"@attribute {name} {{0, 1}}" for name in labels]
    head += [f"@attribute {name} numeric" for name in features]
    body = [
        ",".join([*map(str, y), *(repr(float(x[j])) for j in columns)])
        for x, y in zip(X, Y, strict=True)
    ]
    path.write_text("\n".join([*head, "", "@data", *body, ""]))
    return os.fspath(path)


@pytest.fixture
def split_files(tmp_path):
    """The paper's MOA-Spher-2C-2A layout: a training and a test file, in MEKA format; returns
    the folder and a function (re)writing the test file with the given declaration."""
    train = _write_meka(tmp_path / "4CRE-V2-train.arff", *left_right_rows(40, 0))
    X, Y = left_right_rows(60, 1)

    def write_test(**kw):
        return _write_meka(tmp_path / "4CRE-V2-test.arff", X, Y, **kw)

    return tmp_path, train, write_test


def test_split_files_with_the_same_names_are_read(split_files):
    folder, _, write_test = split_files
    write_test()
    ds = load("MOA-Spher-2C-2A", data_home=folder)
    X_test, _ = left_right_rows(60, 1)
    np.testing.assert_array_equal(ds.X_stream, X_test)
    assert ds.label_names == ("class2", "class3")


def test_split_files_with_reordered_features_are_refused(split_files):
    """The values are written to match the declaration `att1, att0`: joined by position, the
    test file's columns would be swapped against the training file's."""
    folder, train, write_test = split_files
    test = write_test(features=["att1", "att0"], columns=[1, 0])
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=folder)
    msg = str(info.value)
    assert f"{test} has the features ['att1', 'att0'], but {train} has ['att0', 'att1']" in msg
    assert "the same names in another order (column 0 is 'att1', not 'att0')" in msg


@pytest.mark.parametrize(
    "kw, shown, difference",
    [
        ({"features": ["att0", "x1"]}, "['att0', 'x1']", "missing ['att1'], unknown ['x1']"),
        ({"features": ["att0"]}, "['att0']", "missing ['att1'], unknown []"),
        (
            {"features": ["att0", "att1", "att2"], "columns": [0, 1, 0]},
            "['att0', 'att1', 'att2']",
            "missing [], unknown ['att2']",
        ),
    ],
    ids=["renamed", "missing", "extra"],
)
def test_split_files_with_other_features_are_refused(split_files, kw, shown, difference):
    folder, train, write_test = split_files
    test = write_test(**kw)
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=folder)
    msg = str(info.value)
    if len(kw["features"]) == 2:
        assert f"{test} has the features {shown}, but {train} has ['att0', 'att1']: " in msg
    else:  # another width is said first, in numbers
        n = len(kw["features"])
        assert f"{test} has {n} features, but {train} has 2: " in msg
    assert difference in msg


@pytest.mark.parametrize(
    "labels, difference",
    [
        (["class0", "class1", "class3", "class2"], "another order (column 2 is 'class3'"),
        (["class0", "class1", "class2", "other"], "missing ['class3'], unknown ['other']"),
    ],
    ids=["reordered", "renamed"],
)
def test_split_files_with_other_labels_are_refused(split_files, labels, difference):
    folder, train, write_test = split_files
    test = write_test(labels=labels)
    with pytest.raises(ValueError) as info:
        load("MOA-Spher-2C-2A", data_home=folder)
    msg = str(info.value)
    assert f"{test} has the labels {labels!r}, but {train} has {LABELS!r}" in msg
    assert difference in msg


@pytest.mark.parametrize(
    "kw",
    [
        {"features": ["att0", "att0"]},
        {"labels": ["class0", "class1", "class2", "class2"]},
    ],
    ids=["feature", "label"],
)
def test_a_duplicated_name_in_a_split_file_is_refused_naming_it(split_files, kw):
    folder, _, write_test = split_files
    test = write_test(**kw)
    with pytest.raises(ValueError, match="twice") as info:
        load("MOA-Spher-2C-2A", data_home=folder)
    assert test in str(info.value)


def test_mulan_split_files_are_checked_too(tmp_path):
    """Yeast's alternative of a test and a training file (Mulan format, labels named by the
    XML file, last in each row)."""
    xml = tmp_path / "yeast.xml"
    xml.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<labels xmlns="http://mulan.sourceforge.net/labels">\n'
        '<label name="L0"></label><label name="L1"></label>\n</labels>\n'
    )

    def write(name, order, seed):
        X, Y = left_right_rows(50, seed)
        feats = ["f0", "f1"]
        head = ["@relation yeast", ""]
        head += [f"@attribute {feats[j]} numeric" for j in order]
        head += ["@attribute L0 {0,1}", "@attribute L1 {0,1}"]
        body = [
            ",".join([*(repr(float(x[j])) for j in order), str(y[2]), str(y[3])])
            for x, y in zip(X, Y, strict=True)
        ]
        path = tmp_path / name
        path.write_text("\n".join([*head, "", "@data", *body, ""]))
        return os.fspath(path)

    first = write("yeast-test.arff", [0, 1], 0)
    second = write("yeast-train.arff", [0, 1], 1)
    assert load("Yeast", data_home=tmp_path).n_features == 2
    second = write("yeast-train.arff", [1, 0], 1)
    with pytest.raises(ValueError) as info:
        load("Yeast", data_home=tmp_path)
    assert f"{second} has the features ['f1', 'f0'], but {first} has ['f0', 'f1']" in str(
        info.value
    )


def test_mlsom_run_refuses_reordered_split_files(split_files, capsys):
    folder, train, write_test = split_files
    test = write_test(features=["att1", "att0"], columns=[1, 0])
    argv = ["run", "--stream", "MOA-Spher-2C-2A", "--data-home", os.fspath(folder)]
    assert main(argv) == 1  # a data error found at run time
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: ") and "Traceback" not in err
    assert f"{test} has the features ['att1', 'att0'], but {train} has ['att0', 'att1']" in err


# ----------------------------------------------------------------------- DataFrames and models


@pytest.fixture(scope="module")
def data():
    return three_named_columns()


@pytest.fixture(scope="module")
def named(data):
    X, Y = data
    return SOMStreamClassifier(**FAST).fit(pd.DataFrame(X[:80], columns=["a", "b", "c"]), Y[:80])


@pytest.mark.parametrize(
    "cols, problem",
    [
        (["a", "a", "b"], "the name(s) ['a'] appear more than once"),
        (["", "", ""], "the name(s) [''] appear more than once"),
        (["a", "", "b"], "a name is empty"),
    ],
)
def test_fit_refuses_duplicated_or_empty_column_names(data, cols, problem):
    X, Y = data
    with pytest.raises(ValueError) as info:
        SOMStreamClassifier(**FAST).fit(pd.DataFrame(X[:80], columns=cols), Y[:80])
    assert f"X has the column names {cols!r}, but {problem}" in str(info.value)


@pytest.mark.parametrize(
    "cols, difference",
    [
        (["b", "a", "c"], "the same names in another order (column 0 is 'b', not 'a')"),
        (["a", "b", "x"], "missing ['c'], unknown ['x']"),
        (["a", "b"], "missing ['c'], unknown []"),
        (["a", "b", "b"], "duplicated ['b']; missing ['c'], unknown []"),
    ],
    ids=["reordered", "renamed", "missing", "duplicated"],
)
@pytest.mark.parametrize("method", ["predict", "predict_stream", "partial_fit", "score"])
def test_dataframe_columns_must_be_the_fitted_ones(named, data, cols, difference, method):
    X, Y = data
    frame = pd.DataFrame(X[80:90, : len(cols)], columns=cols)
    model = copy.deepcopy(named)
    before = pickle.dumps(model)
    call = getattr(model, method)
    with pytest.raises(ValueError) as info:
        call(frame) if method in ("predict", "predict_stream") else call(frame, Y[80:90])
    msg = str(info.value)
    assert (
        f"X has feature names {cols!r}, but the model was fitted with ['a', 'b', 'c']: "
        f"{difference}; pass the columns in the order of feature_names_in_" in msg
    )
    assert pickle.dumps(model) == before  # nothing learnt from the refused call


def test_the_fitted_columns_give_the_arrays_result(named, data):
    X, _ = data
    frame = pd.DataFrame(X[80:], columns=["a", "b", "c"])
    np.testing.assert_array_equal(named.predict(frame), named.predict(X[80:]))
    reordered = frame[["c", "a", "b"]]
    np.testing.assert_array_equal(
        named.predict(reordered[list(named.feature_names_in_)]), named.predict(X[80:])
    )


@pytest.mark.parametrize(
    "x, difference",
    [
        ({"a": 5.0, "b": 0.0}, "missing ['c'], unknown []"),
        ({"a": 5.0, "b": 0.0, "c": 1.0, "d": 2.0}, "missing [], unknown ['d']"),
        ({"a": 5.0, "b": 0.0, "C": 1.0}, "missing ['c'], unknown ['C']"),
    ],
    ids=["missing", "extra", "renamed"],
)
def test_predict_one_keys_must_be_the_fitted_names(named, x, difference):
    with pytest.raises(ValueError) as info:
        named.predict_one(x, adapt=False)
    assert (
        f"x must give exactly the 3 features of the model, ['a', 'b', 'c']; it gives "
        f"{list(x)!r}: {difference}" in str(info.value)
    )


def test_predict_one_joins_a_dict_by_name(named, data):
    X, _ = data
    row = X[100]
    x = {"c": row[2], "a": row[0], "b": row[1]}  # any key order
    assert named.predict_one(x, adapt=False) == named.predict_one(row, adapt=False)


def test_predict_one_refuses_a_dict_for_a_model_with_duplicated_names(named, data):
    """A model pickled before such names were refused at fit: a dict cannot be joined."""
    X, _ = data
    model = SOMStreamClassifier(**FAST).fit(X[:80], data[1][:80])
    model._state["feature_names"] = ["a", "a", "b"]
    with pytest.raises(ValueError, match=r"the model's feature names \['a', 'a', 'b'\] cannot be"):
        model.predict_one({"a": 5.0, "b": 0.0})
    assert len(model.predict_one(X[100], adapt=False)) == 2  # an array is still taken


def test_a_loaded_model_checks_the_columns(tmp_path, named, data):
    X, _ = data
    named.save(tmp_path / "m.npz")
    loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
    with pytest.raises(ValueError, match=r"X has feature names \['c', 'b', 'a'\], but the model"):
        loaded.predict(pd.DataFrame(X[80:90], columns=["c", "b", "a"]))


# ------------------------------------------------------------------------------ the protocol


def _frames(data):
    X, Y = data
    Xf = pd.DataFrame(X, columns=["a", "b", "c"])
    Yf = pd.DataFrame(Y, columns=["y0", "y1"])
    return Xf[:80], Yf[:80], Xf[80:], Yf[80:]


def test_the_protocol_refuses_a_test_set_with_other_columns(data):
    X_tr, Y_tr, X_te, Y_te = _frames(data)
    good = types.SimpleNamespace(X_train=X_tr, Y_train=Y_tr, X_stream=X_te, Y_stream=Y_te)
    res = evaluate(SOMStreamClassifier(**FAST), good, n_windows=2)
    assert res.n_test == 40
    bad = types.SimpleNamespace(**{**vars(good), "X_stream": X_te[["b", "a", "c"]]})
    with pytest.raises(ValueError) as info:
        evaluate(SOMStreamClassifier(**FAST), bad, n_windows=2)
    assert (
        "X_stream has the features ['b', 'a', 'c'], but X_train has ['a', 'b', 'c']: the same "
        "names in another order" in str(info.value)
    )
    bad = types.SimpleNamespace(**{**vars(good), "Y_stream": Y_te.rename(columns={"y1": "z"})})
    with pytest.raises(ValueError) as info:
        evaluate(SOMStreamClassifier(**FAST), bad, n_windows=2)
    assert (
        "Y_stream has the labels ['y0', 'z'], but Y_train has ['y0', 'y1']: missing ['y1'], "
        "unknown ['z']" in str(info.value)
    )


def test_the_protocol_refuses_chunks_with_other_columns(data):
    X_tr, Y_tr, X_te, Y_te = _frames(data)
    chunks = [(X_te[:20], Y_te[:20]), (X_te[20:][["a", "c", "b"]], Y_te[20:])]
    with pytest.raises(ValueError) as info:
        evaluate(
            SOMStreamClassifier(**FAST), chunks, X_train=X_tr, Y_train=Y_tr, n_test=40, n_windows=2
        )
    assert (
        "X of stream chunk 1 has the features ['a', 'c', 'b'], but X_train has ['a', 'b', 'c']"
        in str(info.value)
    )


def test_the_protocol_takes_chunks_with_the_training_columns(data):
    X_tr, Y_tr, X_te, Y_te = _frames(data)
    chunks = [(X_te[:20], Y_te[:20]), (X_te[20:], Y_te[20:])]
    res = evaluate(
        SOMStreamClassifier(**FAST), chunks, X_train=X_tr, Y_train=Y_tr, n_test=40, n_windows=2
    )
    ref = evaluate(
        SOMStreamClassifier(**FAST),
        (X_te.to_numpy(), Y_te.to_numpy()),
        X_train=X_tr.to_numpy(),
        Y_train=Y_tr.to_numpy(),
        n_windows=2,
    )
    assert res.total("macro_f1") == ref.total("macro_f1")


def test_the_protocol_checks_an_arff_streams_names(tmp_path, data):
    from mlsom.datasets import iter_arff

    X, Y = left_right_rows(30, 3)
    path = _write_meka(tmp_path / "s.arff", X, Y, features=["att1", "att0"], columns=[1, 0])
    train = pd.DataFrame(left_right_rows(40, 0)[0], columns=FEATURES)
    with pytest.raises(ValueError) as info:
        evaluate(
            SOMStreamClassifier(**FAST),
            iter_arff(path, chunk_size=10),
            X_train=train,
            Y_train=left_right_rows(40, 0)[1],
            n_test=30,
            n_windows=2,
        )
    assert (
        "the stream's feature_names has the features ['att1', 'att0'], but X_train has "
        "['att0', 'att1']" in str(info.value)
    )


# ---------------------------------------------------------------------------- River and dask


def test_river_keys_must_be_the_first_instances(data):
    river = pytest.importorskip("mlsom.river")
    X, Y = data
    model = river.SOMStreamML(n_warmup=10, **FAST)
    for x, y in zip(X[:10], Y[:10], strict=True):
        model.learn_one(dict(zip("abc", x, strict=True)), {"p": bool(y[0]), "q": bool(y[1])})
    before = pickle.dumps(model)
    for call in (model.predict_one, lambda x: model.learn_one(x, {"p": True})):
        with pytest.raises(ValueError) as info:
            call({"b": 1.0, "a": 0.0, "d": 2.0})
        assert (
            "x must give exactly the 3 features fixed by the first instance learnt, "
            "['a', 'b', 'c']; it gives ['b', 'a', 'd']: missing ['c'], unknown ['d']"
            in str(info.value)
        )
    assert pickle.dumps(model) == before
    x = dict(zip("abc", X[20], strict=True))
    assert model.predict_one(dict(reversed(x.items()))) == model.predict_one(x)


@pytest.mark.parametrize(
    "cols, expected",
    [
        (["b", "a", "c"], "X has feature names ['b', 'a', 'c'], but the model was fitted with "),
        (["a", "b", "x"], "missing ['c'], unknown ['x']; pass the columns"),
        (["a", "b", "b"], "duplicated ['b']; missing ['c'], unknown []"),
        (["a", "b"], "X has 2 features (columns), but the model was fitted with 3: X has"),
    ],
    ids=["reordered", "renamed", "duplicated", "missing"],
)
def test_dask_frames_must_have_the_fitted_columns(named, data, cols, expected):
    dd = pytest.importorskip("dask.dataframe")
    import mlsom.dask

    X, _ = data
    frame = dd.from_pandas(pd.DataFrame(X[80:, : len(cols)], columns=cols), npartitions=2)
    with pytest.raises(ValueError) as info:
        mlsom.dask.predict(named, frame)
    assert expected in str(info.value)
    assert "['a', 'b', 'c']" in str(info.value)
