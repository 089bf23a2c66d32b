"""Tests of the Table 1 registry: names, synthetic streams at the table's sizes, error messages.

The real data sets are tested in tests/datasets/test_registry_real.py (they need the ARFF files
of tests/data).
"""

import dataclasses
import hashlib
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
    with pytest.raises(
        ValueError, match=r"'file' or 'generator' or 'generator-v2'.*'generator-v1'.*'web'"
    ):
        load("MOA-Spher-2C-2A", source="web")
    with pytest.raises(ValueError, match="source= applies only to the MOA-Spher streams"):
        load("Mult-Non-Spher-HP", source="generator-v1")
    with pytest.raises(ValueError, match="source= applies only to the MOA-Spher streams"):
        load("Yeast", source="file")
    with pytest.raises(ValueError, match="source=1"):
        load("MOA-Spher-3C-2A", source=1)
    with pytest.raises(ValueError, match="n_instances"):
        load("MOA-Spher-5C-2A", n_instances=5)


# sha256 of X_train, Y_train, X_stream, Y_stream of the spherical streams as the first generator
# made them, computed before the calibrated generator existed: source="generator-v1" gives them
# bit for bit
V1_STREAMS = [  # name, random_state, n_instances, sha256
    (
        "MOA-Spher-5C-2A",
        0,
        2000,
        "3f653add745ba8786024e038b25f1a494be4f58e4a26af1e3ab9284e0395b1f3",
    ),
    (
        "MOA-Spher-5C-2A",
        3,
        5000,
        "26a73a2f4ead2c9a09b4eff0d0a807a7414b6e828eca7c95d9463e8b3563634d",
    ),
    (
        "MOA-Spher-5C-3A",
        1,
        2000,
        "b9cec08f00e89b19874814bd4c40a5a8e55a9544b5004d83d7f16ae84f589495",
    ),
    (
        "MOA-Spher-3C-2A",
        0,
        3000,
        "d6f8a325830bcc1eefc9700bf0c377a8e92e8a6b73e0d7b397fe2e1bbf89a5d7",
    ),
    (
        "MOA-Spher-3C-2A",
        7,
        1000,
        "7faf169ace43e81332ad9b0c1a7ae0a93f9207f685cb45656a817883326d7e86",
    ),
    (
        "MOA-Spher-2C-2A",
        0,
        2000,
        "a293a4b265c05a31353720cbbd8e889e0fe7930cf4cc8b470ebb4c0eac9ad8fc",
    ),
    (
        "MOA-Spher-5C-2A",
        0,
        None,
        "5730f3370316b2ca2df9ce1969799967a268cd836f083c766b76aaed21a3e6d0",
    ),
]


def _digest(ds):
    h = hashlib.sha256()
    for a in (ds.X_train, ds.Y_train, ds.X_stream, ds.Y_stream):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("name, seed, n, digest", V1_STREAMS)
def test_generator_v1_gives_the_first_streams_bit_for_bit(name, seed, n, digest):
    ds = load(name, random_state=seed, n_instances=n, source="generator-v1")
    assert _digest(ds) == digest
    assert ds.info["source"] == "generator-v1"
    assert ds.info["generator"]["placement"] == "uniform"
    calibrated = load(name, random_state=seed, n_instances=n, source="generator")
    if name == "MOA-Spher-2C-2A":  # the rotating preset is the same for both generators
        assert _digest(calibrated) == digest
    else:
        assert calibrated.info["source"] == "generator" and _digest(calibrated) != digest


@pytest.mark.parametrize("name", ["MOA-Spher-5C-2A", "MOA-Spher-5C-3A", "MOA-Spher-3C-2A"])
def test_the_calibrated_generator_is_the_default(name):
    entry = next(e for e in TABLE1 if e.name == name)
    ds = load(name, n_instances=10_000, random_state=2)
    same = load(name, n_instances=10_000, random_state=2, source="generator")
    np.testing.assert_array_equal(ds.X_stream, same.X_stream)
    np.testing.assert_array_equal(ds.Y_train, same.Y_train)
    gen = ds.info["generator"]
    assert gen["placement"] == "pairs" and len(gen["pairs"]) == entry.labels // 2
    # 3C-2A is fitted to its own paper prefix, 5C-3A (no prefix) takes 5C-2A's fit
    offset, speed = ((0.0, 0.1), 0.70) if name == "MOA-Spher-3C-2A" else ((0.1, 0.2), 0.45)
    assert gen["pair_offset"] == offset
    assert gen["shift_every"] == pytest.approx(entry.sd / speed)
    assert abs(ds.train_cardinality - entry.cardinality) <= 0.01
    assert ds.X_train.shape == (1000, entry.attributes) and ds.Y_stream.shape == (
        9000,
        entry.labels,
    )
    Y = np.concatenate([ds.Y_train, ds.Y_stream])
    assert Y.sum(axis=1).min() >= 1 and Y.any(axis=0).all()  # every label occurs
    assert "uniform" not in ds.description
    assert "uniform" in load(name, n_instances=1000, source="generator-v1").description


# sha256 (as above) of the calibrated streams while every one was calibrated to 5C-2A's prefix,
# computed before 3C-2A got its own fit: source="generator-v2" gives them bit for bit
V2_STREAMS = [
    (
        "MOA-Spher-3C-2A",
        0,
        3000,
        "3781f7ad2368d4ca3af124a6b6b84518d50387e16d854d1d9372cfbbd9a1a320",
    ),
    (
        "MOA-Spher-3C-2A",
        4,
        2000,
        "83e1d663d58927610a3ba24d64bcaba2061397c9ebd43d76a2e69184e5476d43",
    ),
    (
        "MOA-Spher-5C-2A",
        1,
        2000,
        "720e3b44e3d6226afab8cd8f960a8bac6af5e4dbea5bd4e9885ea8532e8bf3ee",
    ),
]


@pytest.mark.parametrize("name, seed, n, digest", V2_STREAMS)
def test_generator_v2_gives_the_streams_calibrated_to_5c2a_bit_for_bit(name, seed, n, digest):
    ds = load(name, random_state=seed, n_instances=n, source="generator-v2")
    assert _digest(ds) == digest and ds.info["source"] == "generator-v2"
    assert ds.info["generator"]["pair_offset"] == (0.1, 0.2)
    now = load(name, random_state=seed, n_instances=n)
    if name == "MOA-Spher-3C-2A":  # fitted to its own prefix since: another stream
        assert _digest(now) != digest and now.info["generator"]["pair_offset"] == (0.0, 0.1)
    else:  # 5C-2A's own fit is the one v2 gives every stream
        assert _digest(now) == digest


def test_generator_v2_is_refused_where_there_is_no_generator():
    with pytest.raises(ValueError, match="source='generator-v2'"):
        load("Yeast", source="generator-v2")
    with pytest.raises(ValueError, match="'generator-v2'.*source='v2'"):
        load("MOA-Spher-3C-2A", source="v2")


@pytest.mark.parametrize(
    "data_home, match",
    [
        ("~no-such-user-here/x", r"data_home '~no-such-user-here/x' cannot be read as a folder"),
        ("/tmp/" + "a" * 300, r"data folder '/tmp/a+' cannot be searched: .*too long"),
    ],
)
def test_a_data_home_that_is_no_folder_is_named(data_home, match):
    """They raised a bare RuntimeError and OSError."""
    with pytest.raises(ValueError, match=match):
        load("Yeast", data_home=data_home)
