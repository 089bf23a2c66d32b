"""Tests of mlsom.datasets label filtering, initial splits (protocol.md 3.3-3.4) and scaling."""

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from mlsom.datasets import (
    InitialSplit,
    balanced_initial_set,
    balanced_initial_split,
    drop_unlabelled,
    filter_labels,
    load_arff,
    minmax_scale,
    prefix_split,
)
from tests.helpers.paths import DATA


def data(name: str) -> Path:
    """A file of tests/data; a missing file fails the test (it is never skipped)."""
    path = DATA / name
    assert path.is_file(), f"test data file {path} is missing (see tests/data/README.md)"
    return path


def scene_full():
    tr = load_arff(data("scene-train.arff.gz"))
    te = load_arff(data("scene-test.arff.gz"))
    return np.vstack([tr.X, te.X]), np.vstack([tr.Y, te.Y]), tr.label_names


# ---------------------------------------------------------------------------------------------
# reference implementation of protocol.md 3.4, written from the text with plain loops and exact
# fractions, independent of the vectorised one


def reference_balanced(Y, fraction):
    Y = [tuple(int(v) for v in row) for row in np.asarray(Y)]
    N = len(Y)
    L = np.asarray(Y).shape[1] if N else 0
    B = math.floor(Fraction(repr(fraction)) * N + Fraction(1, 2))
    q = Fraction(B, L)
    freq = [sum(row[lab] for row in Y) for lab in range(L)]
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(Y):
        groups.setdefault(row, []).append(i)
    pos = dict.fromkeys(groups, 0)
    c = [0] * L
    chosen: list[int] = []
    while len(chosen) < B:
        avail = [
            lab
            for lab in range(L)
            if any(key[lab] and pos[key] < len(m) for key, m in groups.items())
        ]
        if not avail:
            break
        target = min(avail, key=lambda lab: (c[lab], freq[lab], lab))
        best = None
        for key, m in groups.items():
            if key[target] and pos[key] < len(m):
                over = sum(max(Fraction(0), c[lab] + 1 - q) for lab in range(L) if key[lab])
                cand = (over, m[pos[key]], key)
                if best is None or cand[:2] < best[:2]:
                    best = cand
        key = best[2]
        chosen.append(groups[key][pos[key]])
        pos[key] += 1
        c = [c[lab] + key[lab] for lab in range(L)]
    taken = set(chosen)
    chosen += [i for i in range(N) if i not in taken][: B - len(chosen)]
    return sorted(chosen)


# ---------------------------------------------------------------------------------------------
# filter_labels, drop_unlabelled


def test_filter_labels_yeast_drops_class14():
    d = load_arff(data("yeast.arff.gz"))
    Y, names, kept = filter_labels(d.Y, d.label_names)
    assert names == tuple(f"Class{i}" for i in range(1, 14))
    np.testing.assert_array_equal(kept, np.arange(13))
    np.testing.assert_array_equal(Y, d.Y[:, :13])
    assert Y.dtype == np.uint8
    assert Y.mean(axis=0).min() >= 0.05


def test_filter_labels_threshold_is_inclusive():
    Y = np.zeros((20, 3), dtype=np.uint8)
    Y[0, 0] = 1  # 1/20 = 5 %: kept
    Y[:3, 1] = 1  # 15 %
    Y = np.vstack([Y, np.zeros((0, 3), dtype=np.uint8)])
    Y2 = np.zeros((21, 3), dtype=np.uint8)
    Y2[0, 0] = 1  # 1/21 < 5 %: dropped
    Y2[:5, 2] = 1
    assert filter_labels(Y, ["a", "b", "c"])[1] == ("a", "b")
    assert filter_labels(Y2, ["a", "b", "c"])[1] == ("c",)
    assert filter_labels(Y2, ["a", "b", "c"], min_frequency=0.0)[1] == ("a", "b", "c")
    assert filter_labels(Y2, ["a", "b", "c"], min_frequency=0.2)[1] == ("c",)


def test_filter_labels_keep_uses_original_order():
    X, Y, names = scene_full()
    Yk, kept_names, kept = filter_labels(Y, names, keep=["Mountain", "Beach", "Field", "Sunset"])
    assert kept_names == ("Beach", "Sunset", "Field", "Mountain")
    np.testing.assert_array_equal(kept, [0, 1, 3, 4])
    np.testing.assert_array_equal(Yk, Y[:, [0, 1, 3, 4]])


def test_filter_labels_errors():
    Y = np.eye(3, dtype=np.uint8)
    abc = ["a", "b", "c"]
    with pytest.raises(ValueError, match="not both"):
        filter_labels(Y, abc, min_frequency=0.1, keep=["a"])
    with pytest.raises(ValueError, match=r"unknown label name\(s\) \['d'\]"):
        filter_labels(Y, abc, keep=["a", "d"])
    with pytest.raises(ValueError, match="2 names but Y has 3"):
        filter_labels(Y, ["a", "b"])
    with pytest.raises(ValueError, match="no label is kept"):
        filter_labels(Y, abc, min_frequency=0.5)
    with pytest.raises(ValueError, match="only 0 and 1"):
        filter_labels(Y * 2, abc)
    with pytest.raises(TypeError, match="keep must be a sequence of label names, not a str"):
        filter_labels(Y, abc, keep="a")
    # a str would be read character by character, as the names "a", "b", "c"
    with pytest.raises(TypeError, match="label_names must be a sequence of names, not a str"):
        filter_labels(Y, "abc")


def test_drop_unlabelled():
    X = np.arange(10.0).reshape(5, 2)
    Y = np.array([[0, 1], [0, 0], [1, 1], [0, 0], [1, 0]])
    X2, Y2, kept = drop_unlabelled(X, Y)
    np.testing.assert_array_equal(kept, [0, 2, 4])
    np.testing.assert_array_equal(X2, X[[0, 2, 4]])
    np.testing.assert_array_equal(Y2, Y[[0, 2, 4]])
    with pytest.raises(ValueError, match="5 rows but Y has 4"):
        drop_unlabelled(X, Y[:4])


def test_scene_four_labels_reproduces_paper_table():
    """protocol.md 0: Scene with {Beach, Sunset, Field, Mountain} gives 1,642 x 294, z = 1.07."""
    X, Y, names = scene_full()
    Yk, _, _ = filter_labels(Y, names, keep=["Beach", "Sunset", "Field", "Mountain"])
    X4, Y4, kept = drop_unlabelled(X, Yk)
    assert X4.shape == (1642, 294) and Y4.shape == (1642, 4)
    assert round(Y4.sum(axis=1).mean(), 2) == 1.07
    assert kept.size == 1642 and np.all(np.diff(kept) > 0)


def test_moa_spher_2c_2a_from_minas_br():
    """data README: drop class0/class1 and the emptied test rows -> 14,600 + 82,307 = 96,907."""
    tr = load_arff(data("minas-br/4CRE-V2-train.arff.gz"))
    te = load_arff(data("minas-br/4CRE-V2-test.arff.gz"))
    Ytr, names, _ = filter_labels(tr.Y, tr.label_names, keep=["class2", "class3"])
    Yte, _, _ = filter_labels(te.Y, te.label_names, keep=["class2", "class3"])
    Xtr, Ytr, _ = drop_unlabelled(tr.X, Ytr)
    Xte, Yte, kept = drop_unlabelled(te.X, Yte)
    assert names == ("class2", "class3")
    assert Xtr.shape[0] == 14_600 and Xte.shape[0] == 82_307
    assert 130_900 - kept.size == 48_593
    assert Xtr.shape[0] + Xte.shape[0] == 96_907
    assert round(Ytr.sum(axis=1).mean(), 3) == 1.057


# ---------------------------------------------------------------------------------------------
# balanced initial set


def test_balanced_scene4_matches_protocol_prototype():
    """protocol.md 3.4: Scene-4 -> B = 164, counts 50/50/49/49, D_tr cardinality 1.21."""
    X, Y, names = scene_full()
    Yk, _, _ = filter_labels(Y, names, keep=["Beach", "Sunset", "Field", "Mountain"])
    X4, Y4, _ = drop_unlabelled(X, Yk)
    split = balanced_initial_split(X4, Y4)
    assert isinstance(split, InitialSplit)
    assert split.info["n_train"] == 164 and split.info["quota"] == 41.0
    np.testing.assert_array_equal(split.info["label_counts"], [50, 50, 49, 49])
    assert round(split.info["cardinality"], 2) == 1.21
    assert split.info["n_filled"] == 0
    assert split.X_train.shape == (164, 294) and split.X_stream.shape == (1642 - 164, 294)
    np.testing.assert_array_equal(split.Y_train.sum(axis=0), [50, 50, 49, 49])


def test_balanced_yeast13_matches_protocol_prototype():
    """protocol.md 3.4: Yeast-13 -> B = 242, per-label counts between 44 and 56."""
    d = load_arff(data("yeast.arff.gz"))
    Y, _, _ = filter_labels(d.Y, d.label_names)
    train, info = balanced_initial_set(Y)
    assert info["n_train"] == 242 and train.size == 242
    counts = info["label_counts"]
    assert counts.min() == 44 and counts.max() == 56
    np.testing.assert_array_equal(counts, Y[train].sum(axis=0))
    # two labels occur in ~75 % of the instances, yet get no more than the others
    assert Y.mean(axis=0).max() > 0.7
    assert train.tolist() == reference_balanced(Y, 0.10)


def test_balanced_split_partitions_in_stream_order():
    rng = np.random.default_rng(5)
    Y = (rng.random((500, 5)) < [0.5, 0.3, 0.1, 0.05, 0.02]).astype(np.uint8)
    X = np.arange(500.0)[:, None] * [1.0, -1.0]
    s = balanced_initial_split(X, Y, fraction=0.2)
    assert s.train_indices.size == 100
    assert np.all(np.diff(s.train_indices) > 0) and np.all(np.diff(s.stream_indices) > 0)
    np.testing.assert_array_equal(
        np.sort(np.concatenate([s.train_indices, s.stream_indices])), np.arange(500)
    )
    np.testing.assert_array_equal(s.X_train[:, 0], s.train_indices)
    np.testing.assert_array_equal(s.X_stream[:, 0], s.stream_indices)
    np.testing.assert_array_equal(s.Y_train, Y[s.train_indices])
    np.testing.assert_array_equal(s.Y_stream, Y[s.stream_indices])
    # deterministic
    again = balanced_initial_split(X, Y, fraction=0.2)
    np.testing.assert_array_equal(again.train_indices, s.train_indices)
    # the rarest label (fewer positives than the quota 100 / 5 = 20) is taken completely
    assert Y[:, 4].sum() < 20
    assert s.Y_train[:, 4].sum() == Y[:, 4].sum()


def test_balanced_tie_on_count_goes_to_rarer_label_then_lower_index():
    # c = (0, 0): label 1 is rarer -> its group {1} -> row 2; then label 0 -> first row 0
    Y = np.array([[1, 0], [1, 0], [0, 1], [1, 0]])
    train, info = balanced_initial_set(Y, fraction=0.5)
    assert train.tolist() == [0, 2]
    # equal frequencies: the lower index (label 0) goes first -> row 1, then label 1 -> row 0
    Y = np.array([[0, 1], [1, 0], [0, 1], [1, 0]])
    assert balanced_initial_set(Y, fraction=0.25)[0].tolist() == [1]
    assert balanced_initial_set(Y, fraction=0.5)[0].tolist() == [0, 1]


def test_balanced_overshoot_beats_stream_order():
    # L = 3, N = 10, B = 2, q = 2/3. Step 1: label 0 (rarest); group {0,1} (row 0) overshoots by
    # 2/3, group {0} (row 1) by 1/3 -> row 1. Step 2: labels 1, 2 tie on count and frequency ->
    # label 1; {0,1} overshoots by 4/3 + 1/3, {1} (row 2) by 1/3 -> row 2.
    Y = np.zeros((10, 3), dtype=np.uint8)
    Y[0] = [1, 1, 0]
    Y[1] = [1, 0, 0]
    Y[2] = Y[3] = [0, 1, 0]
    Y[4] = Y[5] = Y[6] = [0, 0, 1]
    train, info = balanced_initial_set(Y, fraction=0.2)
    assert train.tolist() == [1, 2]
    np.testing.assert_array_equal(info["label_counts"], [1, 1, 0])


def test_balanced_equal_overshoot_takes_earliest_member():
    # B = 2, L = 2, q = 1. Step 1: label 0 (rarer); groups {0,1} (next row 1) and {0} (next
    # row 3) both overshoot by 0 -> the earlier, row 1; c = (1, 1). Step 2: tie on counts ->
    # label 0 again (rarer); only {0} has members left -> row 3.
    Y = np.array([[0, 1], [1, 1], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1], [0, 1]])
    train, info = balanced_initial_set(Y, fraction=0.25)
    assert train.tolist() == [1, 3]
    np.testing.assert_array_equal(info["label_counts"], [2, 1])
    # rows 1 and 3 swapped: step 1 takes the {0} row (now row 1) and c = (1, 0); step 2 wants
    # label 1: {0,1} (row 3) would overshoot label 0 by 1/2 + 0, {1} (row 0) by 0 -> row 0
    Y2 = Y[[0, 3, 2, 1, 4, 5, 6, 7]]
    train2, info2 = balanced_initial_set(Y2, fraction=0.25)
    assert train2.tolist() == [0, 1]
    np.testing.assert_array_equal(info2["label_counts"], [1, 1])
    assert train2.tolist() == reference_balanced(Y2, 0.25)


def test_balanced_fill_with_earliest_unlabelled():
    Y = np.zeros((10, 2), dtype=np.uint8)
    Y[3] = [1, 0]
    Y[7] = [0, 1]
    train, info = balanced_initial_set(Y, fraction=0.5)
    assert train.tolist() == [0, 1, 2, 3, 7]
    assert info["n_filled"] == 3


@pytest.mark.parametrize("seed", range(12))
def test_balanced_matches_reference_implementation(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(1, 250))
    L = int(rng.integers(1, 7))
    p = rng.uniform(0.02, 0.6, size=L)
    Y = (rng.random((N, L)) < p).astype(np.uint8)
    for fraction in (0.1, 0.25, 0.35, 1.0):
        train, info = balanced_initial_set(Y, fraction)
        assert train.tolist() == reference_balanced(Y, fraction), (seed, fraction)
        assert info["n_train"] == train.size


def test_balanced_sizes_and_rounding():
    Y = np.ones((90, 1), dtype=np.uint8)
    # 0.35 * 90 = 31.5 exactly -> 32, although the double product is 31.499999999999996
    assert 0.35 * 90 < 31.5
    assert balanced_initial_set(Y, 0.35)[0].size == 32
    assert balanced_initial_set(np.ones((4, 2)), 0.1)[0].size == 0
    with pytest.raises(ValueError, match="fraction"):
        balanced_initial_set(Y, 0.0)
    with pytest.raises(ValueError, match="fraction"):
        balanced_initial_set(Y, 1.5)


# ---------------------------------------------------------------------------------------------
# prefix split


def test_prefix_split():
    X = np.arange(90.0).reshape(90, 1)
    Y = (np.arange(90)[:, None] % 3 == 0).astype(np.uint8)
    s = prefix_split(X, Y, 0.35)
    assert s.X_train.shape[0] == 32 and s.X_stream.shape[0] == 58
    np.testing.assert_array_equal(s.X_train.ravel(), np.arange(32))
    np.testing.assert_array_equal(s.X_stream.ravel(), np.arange(32, 90))
    np.testing.assert_array_equal(s.train_indices, np.arange(32))
    assert s.info["n_train"] == 32
    assert s.info["label_counts"].tolist() == [11]
    d = load_arff(data("yeast.arff.gz"))
    s = prefix_split(d.X, d.Y)
    assert s.X_train.shape[0] == 242  # floor(241.7 + 0.5)
    np.testing.assert_array_equal(s.Y_stream, d.Y[242:])


# ---------------------------------------------------------------------------------------------
# scaling


def test_minmax_scale_fitted_on_train_only():
    train = np.array([[0.0, 5.0, 1.0], [2.0, 5.0, 3.0], [1.0, 5.0, 2.0]])
    stream = np.array([[1.0, 7.0, 5.0], [-2.0, 5.0, 2.0]])
    tr, st = minmax_scale(train, stream)
    np.testing.assert_allclose(tr, [[0, 0, 0], [1, 0, 1], [0.5, 0, 0.5]])
    # constant column -> 0 everywhere; no clipping outside the training range
    np.testing.assert_allclose(st, [[0.5, 0, 2.0], [-1.0, 0, 0.5]])
    assert minmax_scale(train)[0].shape == (3, 3) and len(minmax_scale(train)) == 1
    f32 = minmax_scale(train.astype(np.float32), stream.astype(np.float32))
    assert all(a.dtype == np.float32 for a in f32)
    assert minmax_scale(train.astype(int))[0].dtype == np.float64


def test_minmax_scale_errors():
    with pytest.raises(ValueError, match="2 columns but train has 3"):
        minmax_scale(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        minmax_scale(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="no row"):
        minmax_scale(np.zeros((0, 3)))


@pytest.mark.parametrize(
    "other, match",
    [
        ([[np.nan]], r"others\[0\] contains NaN or infinity"),
        ([[np.inf]], r"others\[0\] contains NaN or infinity"),
        ([[1.0]], r"others\[0\]\[0, 0\] = 1.0 is too far outside train column 0"),
    ],
)
def test_minmax_scale_refuses_what_it_cannot_scale(other, match):
    """A tiny training range turned 1.0 into inf with a warning; NaN passed through."""
    with pytest.raises(ValueError, match=match):
        minmax_scale([[0.0], [5e-324]], other)
