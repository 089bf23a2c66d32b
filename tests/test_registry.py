"""Tests of the Table 1 registry: names, synthetic streams at the table's sizes, error messages.

The real data sets are tested in test_registry_real.py (they need the ARFF files of tests/data).
"""

import dataclasses
import math

import numpy as np
import pytest

from mlsom.datasets import TABLE1, StreamDataset, list_streams, load

PAPER_NAMES = [
    "Mult-Non-Spher-WF",
    "Mult-Non-Spher-RT",
    "Mult-Non-Spher-HP",
    "Mult-Spher-RB",
    "MOA-Spher-2C-2A",
    "MOA-Spher-5C-2A",
    "MOA-Spher-5C-3A",
    "MOA-Spher-3C-2A",
    "Mediamill",
    "Nus-wide",
    "Scene",
    "Yeast",
]
SYNTHETIC = [e for e in TABLE1 if e.kind != "real"]
REAL_FILES = {  # a file name each error message must mention
    "Mediamill": "mediamill.arff",
    "Nus-wide": "nus-wide-full-cVLADplus-train.arff",
    "Scene": "scene-train.arff",
    "Yeast": "yeast.arff",
    "MOA-Spher-2C-2A": "4CRE-V2-train.arff",
}


def test_list_streams_is_table_1():
    assert list_streams() == PAPER_NAMES
    table = {e.name: (e.instances, e.attributes, e.labels, e.cardinality) for e in TABLE1}
    assert table["Mult-Spher-RB"] == (99_911, 80, 22, 2.24)
    assert table["Yeast"] == (2_364, 103, 9, 4.15)
    assert [e.sd for e in TABLE1 if e.kind == "spherical"] == [1000, 1500, 1500, 2000]


@pytest.mark.parametrize("entry", SYNTHETIC, ids=[e.name for e in SYNTHETIC])
def test_synthetic_streams_have_the_table_sizes(entry):
    ds = load(entry.name, source="generator" if entry.name == "MOA-Spher-2C-2A" else None)
    assert isinstance(ds, StreamDataset) and ds.name == entry.name and ds.table is entry
    assert ds.n_instances == entry.instances
    assert ds.n_features == entry.attributes and ds.n_labels == entry.labels
    assert len(ds.X_train) == math.floor(0.1 * entry.instances + 0.5)  # first-10 % rule
    assert ds.X_train.dtype == ds.X_stream.dtype == np.float64
    assert ds.Y_train.dtype == ds.Y_stream.dtype == np.uint8
    assert ds.Y_stream.shape == (entry.instances - len(ds.X_train), entry.labels)
    # z of D_tr: the calibration stops within 0.01 (Read) / 0.005 (spherical) on this prefix
    assert abs(ds.train_cardinality - entry.cardinality) <= 0.01
    assert len(ds.label_names) == entry.labels
    assert ds.info["source"] == "generator"


def test_train_and_stream_are_the_generated_stream_in_order():
    from mlsom.datasets._generators import read_multilabel

    ds = load("Mult-Non-Spher-HP", n_instances=5_000, random_state=3)
    X, Y, info = read_multilabel("hyperplane", 5, 10, 1.68, 5_000, seed=3, target_cardinality=1.68)
    np.testing.assert_array_equal(np.concatenate([ds.X_train, ds.X_stream]), X)
    np.testing.assert_array_equal(np.concatenate([ds.Y_train, ds.Y_stream]), Y)
    assert ds.info["generator"]["drift_points"].tolist() == [1250, 2500, 3750]


def test_lookup_is_case_insensitive():
    ds = load("  mult-non-spher-hp ", n_instances=2_000)
    assert ds.name == "Mult-Non-Spher-HP" and ds.n_instances == 2_000
    assert load("moa-spher-5c-3a", n_instances=2_000).n_features == 3


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match="unknown stream 'Mult-Spher-XX'") as exc:
        load("Mult-Spher-XX")
    for name in PAPER_NAMES:
        assert name in str(exc.value)
    with pytest.raises(TypeError):
        load(3)


def test_random_state_determinism():
    a = load("MOA-Spher-3C-2A", n_instances=3_000, random_state=1)
    b = load("MOA-Spher-3C-2A", n_instances=3_000, random_state=1)
    c = load("MOA-Spher-3C-2A", n_instances=3_000, random_state=2)
    np.testing.assert_array_equal(a.X_stream, b.X_stream)
    np.testing.assert_array_equal(a.Y_train, b.Y_train)
    assert not np.array_equal(a.X_stream, c.X_stream)


def test_dataset_is_frozen_and_repr_is_short():
    ds = load("MOA-Spher-5C-2A", n_instances=1_000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "x"
    assert repr(ds).startswith("StreamDataset(name='MOA-Spher-5C-2A', n_train=100")
    assert len(repr(ds)) < 200


def test_moa_spher_2c_2a_generator_preset_rotates():
    ds = load("MOA-Spher-2C-2A", source="generator", n_instances=20_000)
    gen = ds.info["generator"]
    assert gen["rotate"] and gen["orbit_radius"] == 0.2
    assert abs(ds.train_cardinality - 1.06) <= 0.01


@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_without_data_home_names_the_files(name, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    with pytest.raises(FileNotFoundError) as exc:
        load(name)
    msg = str(exc.value)
    assert REAL_FILES[name] in msg and "MLSOM_DATA" in msg and "data_home" in msg


@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_missing_in_folder_names_folder_and_files(name, tmp_path, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    with pytest.raises(FileNotFoundError) as exc:
        load(name, data_home=tmp_path)
    assert REAL_FILES[name] in str(exc.value) and str(tmp_path) in str(exc.value)
    monkeypatch.setenv("MLSOM_DATA", str(tmp_path / "elsewhere"))
    with pytest.raises(FileNotFoundError, match="elsewhere"):
        load(name)


def test_a_missing_xml_is_reported(tmp_path):
    (tmp_path / "yeast.arff").write_text("@relation y\n@attribute a numeric\n@data\n")
    with pytest.raises(FileNotFoundError, match="yeast.xml"):
        load("Yeast", data_home=tmp_path)


def test_options_that_do_not_apply():
    with pytest.raises(ValueError, match="synthetic streams only"):
        load("Scene", n_instances=100)
    with pytest.raises(ValueError, match="only to MOA-Spher-2C-2A"):
        load("MOA-Spher-5C-2A", source="file")
    with pytest.raises(ValueError, match="real streams only"):
        load("Mult-Spher-RB", keep_labels=["class0"])
    with pytest.raises(ValueError, match="'file' or 'generator'"):
        load("MOA-Spher-2C-2A", source="web")
    with pytest.raises(ValueError, match="n_instances"):
        load("MOA-Spher-5C-2A", n_instances=5)
