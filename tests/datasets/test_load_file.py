"""A data file of one's own as a stream (mlsom.datasets.load_file, DataFile): the formats, the
labelled part and the errors, each naming the file or the argument and the value."""

import zipfile

import numpy as np
import pytest

from mlsom.datasets import (
    DataFile,
    balanced_initial_split,
    load_arff,
    load_file,
    prefix_split,
)
from tests.helpers.paths import DATA


def _npz(path, X, Y, **more):
    np.savez(path, X=X, Y=Y, **more)
    return path


def _xy(n=50, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 3)), (rng.random((n, 2)) < 0.5).astype(np.uint8)


def test_an_arff_file_is_split_as_the_protocol_splits():
    path = DATA / "emotions.arff"
    data = load_arff(path)
    ds = load_file(path)
    ref = prefix_split(data.X, data.Y, 0.1)
    np.testing.assert_array_equal(ds.X_train, ref.X_train)
    np.testing.assert_array_equal(ds.Y_stream, ref.Y_stream)
    assert ds.name == "emotions.arff" and ds.table is None
    assert ds.label_names == tuple(data.label_names)
    assert ds.info["split"] == "prefix" and ds.info["n_train"] == 59
    balanced = load_file(path, split="balanced", train_fraction=0.2, name="mine")
    ref = balanced_initial_split(data.X, data.Y, 0.2)
    np.testing.assert_array_equal(balanced.info["train_indices"], ref.train_indices)
    np.testing.assert_array_equal(balanced.X_stream, ref.X_stream)
    assert balanced.name == "mine"


def test_a_meka_file_finds_its_labels_in_its_header():
    ds = load_file(DATA / "meka" / "Music.arff", train_rows=100)
    assert len(ds.X_train) == 100 and ds.n_labels == 6
    assert DataFile(str(DATA / "meka" / "Music.arff")).columns()[1] == ds.label_names


@pytest.mark.parametrize("rows", [1, 10, 49])
def test_train_rows_gives_exactly_that_many_labelled_rows(rows, tmp_path):
    X, Y = _xy()
    path = _npz(tmp_path / "d.npz", X, Y)
    for split in ("prefix", "balanced"):
        ds = load_file(path, train_rows=rows, split=split)
        assert len(ds.X_train) == rows and len(ds.X_stream) == 50 - rows
    ds = load_file(path, train_rows=rows)
    np.testing.assert_array_equal(ds.X_train, X[:rows])
    np.testing.assert_array_equal(ds.Y_stream, Y[rows:])


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"train_rows": 50}, ValueError, r"train_rows=50, but .*d\.npz has 50 rows"),
        ({"train_fraction": 0.001}, ValueError, r"train_fraction=0\.001 selects no row"),
        ({"train_fraction": 0.999}, ValueError, r"selects all 50 rows, leaving no test stream"),
        ({"train_fraction": 1.5}, ValueError, r"train_fraction must be <= 1"),
        ({"train_fraction": 0.2, "train_rows": 5}, ValueError, r"give train_fraction or"),
        ({"train_rows": 2.5}, TypeError, r"train_rows must be an integer, got 2\.5"),
        ({"split": "random"}, ValueError, r"split must be 'prefix' or 'balanced', got split="),
        ({"xml": "x.xml"}, ValueError, r"xml= and label_location= apply to ARFF files only"),
        ({"label_location": ("last",)}, ValueError, r"label_location must be \('first'"),
        ({"name": ""}, ValueError, r"name must be a non-empty str"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs, error, match, tmp_path):
    path = _npz(tmp_path / "d.npz", *_xy())
    with pytest.raises(error, match=match):
        load_file(path, **kwargs)


@pytest.mark.parametrize(
    "arrays, match",
    [
        ({"X": np.zeros((5, 2))}, r"no array 'Y' \(it holds \['X'\]\)"),
        ({"X": np.zeros(5), "Y": np.zeros((5, 1))}, r"array X must be 2-D, got shape \(5,\)"),
        ({"X": np.zeros((5, 2)), "Y": np.zeros((4, 1))}, r"X has 5 rows but Y has 4"),
        ({"X": np.array([["a", "b"]] * 5), "Y": np.zeros((5, 1))}, r"X must hold real numbers"),
        ({"X": np.full((5, 2), np.nan), "Y": np.zeros((5, 1))}, r"NaN or infinity \(row 0"),
        ({"X": np.zeros((5, 2)), "Y": np.full((5, 1), 2)}, r"Y must hold only 0 and 1, found 2"),
        ({"X": np.zeros((1, 2)), "Y": np.zeros((1, 1))}, r"1 data row\(s\)"),
    ],
)
def test_a_bad_npz_file_is_refused_naming_it(arrays, match, tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=match) as info:
        load_file(path)
    assert str(path) in str(info.value)


def test_a_file_of_another_kind_is_refused_before_it_is_read(tmp_path):
    for name in ("d.csv", "d.npy", "d.txt"):
        with pytest.raises(ValueError, match=rf"data file '.*{name}': mlsom reads an ARFF file"):
            load_file(tmp_path / name)  # (not there: the name alone is refused)
    bad = tmp_path / "d.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match=r"d\.npz: not a readable \.npz file"):
        load_file(bad)
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "absent.arff")
    folder = tmp_path / "folder.arff"
    folder.mkdir()
    with pytest.raises(ValueError, match="regular file"):
        load_file(folder)


def test_an_npz_file_gives_what_the_same_arff_file_gives(tmp_path):
    data = load_arff(DATA / "emotions.arff")
    path = _npz(tmp_path / "emotions.npz", data.X, data.Y)
    a, b = load_file(path), load_file(DATA / "emotions.arff")
    for part in ("X_train", "Y_train", "X_stream", "Y_stream"):
        np.testing.assert_array_equal(getattr(a, part), getattr(b, part))


def test_a_truncated_npz_array_is_refused_naming_the_file(tmp_path):
    whole = _npz(tmp_path / "whole.npz", *_xy())
    with zipfile.ZipFile(whole) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["X.npy"] = members["X.npy"][:200]  # the header, and part of the data
    cut = tmp_path / "cut.npz"
    with zipfile.ZipFile(cut, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(ValueError, match=r"cut\.npz: array X cannot be read: EOF"):
        load_file(cut)
