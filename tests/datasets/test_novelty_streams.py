"""Novelty streams: moa_spherical's kernels that appear later (against a plain per-instance
reference), and the registry's novelty streams (load_novelty)."""

import numpy as np
import pytest

from mlsom.datasets import (
    NoveltyDataset,
    list_novelty_streams,
    load,
    load_novelty,
    moa_spherical,
)
from mlsom.datasets._novelty_streams import NOVELTY_STREAMS

DATA = "tests/data"


def _reference_stream(X_centers, radius, frac, directions, u_kernel, appear_at, n):
    """Instance by instance: the kernel among those that exist at t (label order), its point,
    and every existing sphere that holds it."""
    K = len(appear_at)
    X = np.empty((n, X_centers.shape[2]))
    Y = np.zeros((n, K), dtype=np.uint8)
    for t in range(n):
        active = [k for k in range(K) if appear_at[k] <= t]
        k = active[min(int(u_kernel[t] * len(active)), len(active) - 1)]
        C = X_centers[(t + 1) // 10]
        X[t] = C[k] + radius * frac[t] * directions[t]
        for j in active:
            Y[t, j] = ((X[t] - C[j]) ** 2).sum() <= radius * radius
        Y[t, k] = 1
    return X, Y


def test_kernels_that_appear_later_match_a_plain_reference():
    from mlsom.datasets._generators import _SphericalDraws, seed_sequence

    n, appear_at = 3000, [0, 0, 1000, 2200]
    X, Y, info = moa_spherical(
        4, 2, n, 300, seed=5, radius=0.2, placement="pairs", appear_at=appear_at
    )
    draws = _SphericalDraws(seed_sequence(5), 4, 2, n, 0.0, "pairs")
    Xr, Yr = _reference_stream(
        info["centers"], 0.2, draws.frac, draws.directions, draws.u_kernel, appear_at, n
    )
    np.testing.assert_allclose(X, Xr, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(Y, Yr)
    assert not Y[:1000, 2].any() and not Y[:2200, 3].any()
    assert Y[1000:, 2].any() and Y[2200:, 3].any()
    assert info["appear_at"] == appear_at
    assert set(info["kernel"][:1000]) <= {0, 1}  # only the kernels of the start draw
    # the two late kernels pair with each other, not with a kernel of the start
    assert {frozenset(p) for p in info["pairs"]} == {frozenset({0, 1}), frozenset({2, 3})}


def test_every_kernel_from_the_start_is_the_stream_without_appear_at():
    a = moa_spherical(5, 2, 4000, 1500, seed=3, target_cardinality=1.54, placement="pairs")
    b = moa_spherical(
        5, 2, 4000, 1500, seed=3, target_cardinality=1.54, placement="pairs", appear_at=[0] * 5
    )
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "appear_at, error, match",
    [
        ([0, 0, 5], ValueError, r"one instance per kernel \(n_classes=4\), got 3"),
        ([1, 2, 3, 4], ValueError, r"a kernel from the start \(a 0\), got \[1, 2, 3, 4\]"),
        ([0, 0, 0, -1], ValueError, r"appear_at\[3\]"),
        ([0, 0, 0, 1000], ValueError, r"appear_at\[3\]"),
        ([0, 0, 0, 1.5], TypeError, r"appear_at\[3\] must be an integer"),
        ("0000", TypeError, "appear_at must be a sequence of 4 ints"),
        (7, TypeError, "appear_at must be a sequence"),
    ],
)
def test_bad_appear_at_is_refused_by_name(appear_at, error, match):
    with pytest.raises(error, match=match):
        moa_spherical(4, 2, 1000, 300, seed=0, radius=0.2, appear_at=appear_at)


def test_appear_at_does_not_apply_to_the_rotating_kernels():
    with pytest.raises(ValueError, match="appear_at does not apply to rotate=True"):
        moa_spherical(2, 2, 1000, 300, radius=0.1, rotate=True, appear_at=[0, 10])


GENERATED = [e for e in NOVELTY_STREAMS if e.kind == "spherical"]


@pytest.mark.parametrize("entry", GENERATED, ids=lambda e: e.name)
def test_generated_novelty_streams(entry):
    n = 20_000
    ds = load_novelty(entry.name, n_instances=n, random_state=1)
    assert isinstance(ds, NoveltyDataset)
    assert ds.known_labels == tuple(range(entry.known))
    assert ds.new_labels == tuple(range(entry.known, entry.labels))
    assert ds.X_train.shape == (n // 10, entry.attributes)
    assert ds.Y_stream.shape == (n - n // 10, entry.labels)
    assert not ds.Y_train[:, list(ds.new_labels)].any()
    assert abs(ds.train_cardinality - entry.cardinality) <= 0.005
    # the new labels appear at 30 % and 70 % of the stream, the first of them at the earliest
    for c, share in zip(ds.new_labels, (0.3, 0.7), strict=False):
        row = ds.first_rows[c]
        assert row >= round(share * n) - n // 10 and ds.Y_stream[row, c] == 1
        assert not ds.Y_stream[:row, c].any()
    # the seed decides the stream
    again = load_novelty(entry.name, n_instances=n, random_state=1)
    np.testing.assert_array_equal(ds.X_stream, again.X_stream)
    other = load_novelty(entry.name, n_instances=n, random_state=2)
    assert not np.array_equal(ds.X_stream, other.X_stream)


def test_3c5c_takes_3c2a_calibration_and_5c7c_5c2a():
    a = load_novelty("moa-spher-3c-5c-2a", n_instances=10_000)
    b = load_novelty("MOA-Spher-5C-7C-2A", n_instances=10_000)
    assert a.info["generator"]["pair_offset"] == (0.0, 0.1)
    assert a.info["generator"]["shift_every"] == pytest.approx(2000 / 0.70)
    assert b.info["generator"]["pair_offset"] == (0.1, 0.2)
    assert b.info["generator"]["shift_every"] == pytest.approx(1500 / 0.45)


def test_the_paper_stream_is_4cre_v2_with_its_novel_labels():
    ds = load_novelty("4CRE-V2", data_home=DATA)
    base = load("MOA-Spher-2C-2A", data_home=DATA)
    names = [n.lower() for n in ds.label_names]
    assert [names[c] for c in ds.new_labels] == ["class0", "class1"]
    assert [names[c] for c in ds.known_labels] == ["class2", "class3"]
    # the first appearances: test rows 10,407 and 47,402
    assert sorted(ds.first_rows.values()) == [10_407, 47_402]
    assert ds.X_train.shape == base.X_train.shape
    assert ds.X_stream.shape[0] >= base.X_stream.shape[0]


@pytest.mark.parametrize("name", ["Scene-modified", "Yeast-modified"])
def test_modified_real_sets_leave_their_new_labels_out_of_the_labelled_set(name):
    ds = load_novelty(name, data_home=DATA)
    base = load(name.split("-")[0], data_home=DATA)
    counts = np.concatenate([base.Y_train, base.Y_stream]).sum(axis=0)
    L = base.n_labels
    assert len(ds.new_labels) == -(-L // 4)
    # the least frequent labels are the new ones
    assert max(counts[list(ds.new_labels)]) <= min(counts[list(ds.known_labels)])
    assert not ds.Y_train[:, list(ds.new_labels)].any()
    kept = ~base.Y_train[:, list(ds.new_labels)].any(axis=1)
    np.testing.assert_array_equal(ds.X_train, base.X_train[kept])
    np.testing.assert_array_equal(ds.X_stream, base.X_stream)
    assert ds.info["n_train_removed"] == int((~kept).sum()) > 0
    for c in ds.new_labels:
        assert ds.Y_stream[ds.first_rows[c], c] == 1


def test_names_and_bad_arguments():
    assert list_novelty_streams()[:4] == [e.name for e in GENERATED]
    with pytest.raises(ValueError, match="unknown novelty stream 'Scene'; valid names"):
        load_novelty("Scene")
    with pytest.raises(TypeError, match="name must be a str"):
        load_novelty(3)
    with pytest.raises(ValueError, match="data_home= applies to real streams only"):
        load_novelty("MOA-Spher-3C-5C-2A", data_home=DATA)
    with pytest.raises(ValueError, match="n_instances= applies to generated streams only"):
        load_novelty("4CRE-V2", data_home=DATA, n_instances=20_000)
    with pytest.raises(ValueError, match="n_instances"):
        load_novelty("MOA-Spher-3C-5C-2A", n_instances=5_000)
    with pytest.raises((ValueError, MemoryError), match="n_instances"):
        load_novelty("MOA-Spher-3C-5C-2A", n_instances=10**12)


def test_a_missing_real_file_names_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="scene"):
        load_novelty("Scene-modified", data_home=tmp_path)
