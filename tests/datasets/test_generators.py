"""Tests of the synthetic stream generators (protocol.md sections 1.3 and 2.1-2.3).

Statistical checks use fixed seeds, so they are deterministic; their thresholds are set at about
4 standard errors (or a chi-square at mean + 4 sd) so that they test the property, not the seed.
"""

import math

import numpy as np
import pytest

from mlsom.datasets._generators import (
    HyperplaneGenerator,
    RandomRBFGenerator,
    RandomTreeGenerator,
    WaveformGenerator,
    _conditional,
    _feature_map,
    _sample_sets,
    _scale_priors,
    _SetDraws,
    moa_spherical,
    read_multilabel,
)


def card(Y):
    return float(Y.sum(axis=1).mean())


def n_train(n):
    return math.floor(0.1 * n + 0.5)


def chi2_homogeneity(rows):
    """Chi-square statistic and df of a contingency table (categories x groups), rare merged."""
    table = np.asarray(rows, dtype=float)
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    rare = expected.min(axis=1) < 5
    if rare.any():
        table = np.vstack([table[~rare], table[rare].sum(0, keepdims=True)])
        expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    stat = float(((table - expected) ** 2 / expected).sum())
    df = (table.shape[0] - 1) * (table.shape[1] - 1)
    return stat, df


def label_set_table(Y, groups):
    """Counts of each distinct label set (rows) in each group of rows (columns)."""
    codes = Y.astype(np.int64) @ (1 << np.arange(Y.shape[1]))
    uniq = np.unique(np.concatenate([codes[g] for g in groups]))
    return np.stack([[np.sum(codes[g] == u) for g in groups] for u in uniq])


# ================================================================================== moa_spherical

SPHER_PRESETS = [  # K, d, n, V, z: the paper's Table 1
    (5, 2, 95_529, 1500, 1.54),
    (5, 3, 94_667, 1500, 1.37),
    (3, 2, 93_345, 2000, 1.76),
]


@pytest.mark.parametrize("K, d, n, V, z", SPHER_PRESETS)
def test_spherical_presets_shape_dtype_and_calibration(K, d, n, V, z):
    X, Y, info = moa_spherical(K, d, n, V, seed=0, target_cardinality=z)
    assert X.shape == (n, d) and X.dtype == np.float64
    assert Y.shape == (n, K) and Y.dtype == np.uint8
    assert set(np.unique(Y)) <= {0, 1}
    assert Y.sum(axis=1).min() >= 1  # noise 0: every instance is inside its own sphere
    # calibration stops within 0.005 on exactly this prefix; 0.01 is the spec's test tolerance
    assert abs(card(Y[: n_train(n)]) - z) <= 0.01
    assert info["calibration"]["converged"]
    assert 0.02 <= info["radius"] <= 0.45


def test_spherical_samples_inside_generating_kernel_and_label_rule():
    X, Y, info = moa_spherical(5, 3, 30_000, 500, seed=3, radius=0.2)
    r = info["radius"]
    C = info["centers"][info["step_of"]]  # (n, K, d) positions at each instance's time
    rows = np.arange(len(X))
    d_own = np.linalg.norm(X - C[rows, info["kernel"]], axis=1)
    assert d_own.max() < r
    dist = np.linalg.norm(X[:, None, :] - C, axis=2)
    np.testing.assert_array_equal(Y, (dist <= r).astype(np.uint8))
    # the kernels stay inside [r, 1 - r]^d, so every sphere stays in the unit cube
    assert info["centers"].min() >= r - 1e-12 and info["centers"].max() <= 1 - r + 1e-12


def test_spherical_step_timing_and_speed():
    V = 1000
    n = 60_000
    _, _, info = moa_spherical(3, 2, n, V, seed=1, radius=0.15)
    centers = info["centers"]
    assert centers.shape == (n // 10 + 1, 3, 2)
    np.testing.assert_array_equal(info["step_of"], np.arange(1, n + 1) // 10)
    steps = np.linalg.norm(np.diff(centers, axis=0), axis=2)  # (n_steps, K)
    # each step moves distance / floor(distance / (0.1 / V)), i.e. 0.1 / V up to a relative 1 / T
    # (T >= 10 steps per leg here); the only other steps are the pauses at the end of a leg
    moving = steps > 1e-12
    assert steps[moving].min() >= 0.1 / V * (1 - 1e-9)
    assert steps[moving].max() <= 0.1 / V * 1.1
    assert np.median(steps[moving]) == pytest.approx(0.1 / V, rel=1e-3)
    assert moving.mean() > 0.99
    # 0.01 distance every V instances: total path of each kernel over n instances = 0.01 n / V
    np.testing.assert_allclose(steps.sum(axis=0), 0.01 * n / V, rtol=0.01)


def test_spherical_static_when_shift_every_is_none():
    X, Y, info = moa_spherical(4, 2, 40_000, None, seed=2, radius=0.2)
    c = info["centers"]
    assert np.all(c == c[0])
    # stationary: label frequencies of the two halves agree (4 standard errors)
    a, b = Y[:20_000].mean(0), Y[20_000:].mean(0)
    se = np.sqrt(a * (1 - a) / 20_000 * 2)
    assert np.all(np.abs(a - b) <= 4 * se + 1e-12)
    assert info["shift_every"] == math.inf


def test_spherical_drift_changes_the_label_distribution():
    n = 95_529
    X, Y, info = moa_spherical(5, 2, n, 1500, seed=0, target_cardinality=1.54)
    c = info["centers"]
    moved = np.linalg.norm(c[-1] - c[0], axis=1)
    assert moved.max() > 0.05  # kernels travel 0.01 per 1500 instances: ~0.64 in total
    blocks = [card(Y[i : i + 10_000]) for i in range(0, n - 10_000, 10_000)]
    assert max(blocks) - min(blocks) > 0.1
    # label-set distribution of the first and last 10 % differ (chi-square far above its df)
    stat, df = chi2_homogeneity(label_set_table(Y, [slice(0, 9553), slice(n - 9553, n)]))
    assert stat > df + 4 * math.sqrt(2 * df)


def test_spherical_rotating_preset():
    n, V, rho = 96_907, 1000, 0.2
    X, Y, info = moa_spherical(2, 2, n, V, seed=0, target_cardinality=1.06, rotate=True)
    assert abs(card(Y[: n_train(n)]) - 1.06) <= 0.01
    r = info["radius"]
    assert r + rho <= 0.5
    omega = 0.01 / (rho * V)
    assert info["omega"] == pytest.approx(omega)
    c = info["centers"]
    tq = 10 * np.arange(len(c))
    dist = np.linalg.norm(c[:, 0] - c[:, 1], axis=1)
    np.testing.assert_allclose(dist, 2 * rho * np.abs(np.cos(omega * tq)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c - 0.5, axis=2), rho, atol=1e-12)
    np.testing.assert_allclose(info["meeting_times"], [np.pi / 2 / omega, 1.5 * np.pi / omega])
    # where the clusters coincide almost every instance carries both labels
    t_meet = int(info["meeting_times"][0])
    assert card(Y[t_meet - 300 : t_meet + 300]) > 1.9
    assert card(Y) > card(Y[: n_train(n)]) + 0.2


def test_spherical_noise_and_dropping():
    n = 20_000
    X, Y, info = moa_spherical(3, 2, n, 1000, seed=4, radius=0.1, noise_level=0.1)
    assert len(X) < n and Y.sum(axis=1).min() >= 1
    assert (info["kernel"] == -1).any()  # some noise points fell inside a sphere and were kept
    assert np.all(np.diff(info["source_index"]) > 0)
    X2, Y2, info2 = moa_spherical(
        3, 2, n, 1000, seed=4, radius=0.1, noise_level=0.1, drop_unlabeled=False
    )
    assert len(X2) == n
    noise = info2["kernel"] == -1
    assert abs(noise.mean() - 0.1) < 4 * math.sqrt(0.09 / n)
    assert (Y2.sum(axis=1) == 0).sum() == n - len(X)
    np.testing.assert_array_equal(X2[info["source_index"]], X)


def test_spherical_determinism():
    a = moa_spherical(5, 2, 5_000, 1500, seed=7, target_cardinality=1.5)
    b = moa_spherical(5, 2, 5_000, 1500, seed=7, target_cardinality=1.5)
    c = moa_spherical(5, 2, 5_000, 1500, seed=8, target_cardinality=1.5)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2]["radius"] == b[2]["radius"]
    assert not np.array_equal(a[0], c[0])
    ss = np.random.SeedSequence(11)
    d = moa_spherical(3, 2, 2_000, 1000, ss, radius=0.2)
    e = moa_spherical(3, 2, 2_000, 1000, ss, radius=0.2)
    np.testing.assert_array_equal(d[0], e[0])  # the caller's SeedSequence is not consumed


def test_spherical_prefix_does_not_depend_on_length():
    # per-kernel destination streams and up-front draws: a longer stream extends a shorter one
    a = moa_spherical(4, 2, 10_000, 200, seed=5, radius=0.15)
    b = moa_spherical(4, 2, 20_000, 200, seed=5, radius=0.15)
    np.testing.assert_array_equal(a[0], b[0][:10_000])
    np.testing.assert_array_equal(a[1], b[1][:10_000])


def test_spherical_errors():
    with pytest.raises(ValueError, match="rotate=True needs n_classes=2"):
        moa_spherical(3, 2, 100, 1000, rotate=True, radius=0.1)
    with pytest.raises(ValueError, match="radius or target_cardinality"):
        moa_spherical(3, 2, 100, 1000)
    with pytest.raises(ValueError, match="radius \\+ orbit_radius"):
        moa_spherical(2, 2, 100, 1000, rotate=True, radius=0.4)
    with pytest.raises(ValueError, match="n_features"):
        moa_spherical(3, 1, 100, 1000, radius=0.1)
    with pytest.raises(ValueError, match="target_cardinality"):
        moa_spherical(3, 2, 100, 1000, target_cardinality=3.5)


@pytest.mark.parametrize(
    "target, fraction, n_cal, achieved",
    [(1.5, 1e-9, 1, "1.0000"), (1.25, 0.002, 2, "1.0000"), (1.54, 0.002, 2, "1.5000")],
)
def test_spherical_calibration_that_misses_the_target_is_an_error(
    target, fraction, n_cal, achieved
):
    # a prefix of n_cal instances has cardinalities k / n_cal: none within 0.005 of the target
    match = (
        rf"target_cardinality={target} is not reached within 0\.005 on the calibration prefix "
        rf"of {n_cal} instance\(s\) \(calib_fraction={fraction!r} of n_instances=1000\): the "
        rf"closest radius, [0-9.]+, gives cardinality {achieved}; .*give a larger calib_fraction"
    )
    with pytest.raises(ValueError, match=match):
        moa_spherical(5, 2, 1000, 100, target_cardinality=target, calib_fraction=fraction)


def test_spherical_calibration_on_a_short_prefix_that_can_hit_the_target():
    # 1.5 is 3 / 2: two instances can reach it
    _, Y, info = moa_spherical(5, 2, 1000, 100, target_cardinality=1.5, calib_fraction=0.002)
    assert info["calibration"]["converged"] and info["calibration"]["n_calibration"] == 2
    assert card(Y[:2]) == 1.5


def _pairs(K=5, d=2, n=20_000, V=1500, seed=0, **kw):
    kw.setdefault("radius", 0.15)
    return moa_spherical(K, d, n, V, seed, placement="pairs", pair_offset=(0.1, 0.2), **kw)


@pytest.mark.parametrize("K, d", [(5, 2), (5, 3), (3, 2), (4, 2)])
def test_spherical_pairs_start_geometry(K, d):
    r = 0.15
    X, Y, info = _pairs(K, d, seed=K + d)
    pairs = info["pairs"]
    assert info["placement"] == "pairs" and info["pair_offset"] == (0.1, 0.2)
    assert len(pairs) == K // 2
    paired = [k for p in pairs for k in p]
    assert len(set(paired)) == len(paired) and set(paired) <= set(range(K))
    c0 = info["centers"][0]
    for a, b in pairs:  # a pair's centres start 0.1 to 0.2 apart
        assert 0.1 - 1e-12 <= np.linalg.norm(c0[a] - c0[b]) <= 0.2 + 1e-12
    assert np.all(info["centers"] >= r - 1e-12) and np.all(info["centers"] <= 1 - r + 1e-12)
    # the groups (pair midpoints, the single kernel) take distinct strata of every feature
    single = sorted(set(range(K)) - set(paired))
    mids = [(c0[a] + c0[b]) / 2 for a, b in pairs] + [c0[k] for k in single]
    halves = [np.linalg.norm(c0[a] - c0[b]) / 2 for a, b in pairs] + [0.0] * len(single)
    u = np.array([(m - (r + h)) / (1 - 2 * (r + h)) for m, h in zip(mids, halves, strict=True)])
    strata = np.floor(u * len(mids)).astype(int)
    for j in range(d):
        assert sorted(strata[:, j]) == list(range(len(mids)))
    assert X.shape == (20_000, d) and Y.shape == (20_000, K) and Y.sum(axis=1).min() >= 1


def test_spherical_pairs_share_the_other_draws_with_uniform():
    # the pairs placement draws from a fourth child stream: the instances' draws are the same
    _, _, a = moa_spherical(5, 2, 5_000, 1500, 3, radius=0.15)
    _, _, b = _pairs(n=5_000, seed=3)
    np.testing.assert_array_equal(a["kernel"], b["kernel"])
    assert not np.array_equal(a["centers"][0], b["centers"][0])


def test_spherical_pairs_calibration_and_co_occurrence():
    n, z = 20_000, 1.54
    X, Y, info = _pairs(n=n, V=1500 / 0.45, radius=None, target_cardinality=z)
    assert info["calibration"]["converged"]
    assert abs(card(Y[: n_train(n)]) - z) <= 0.01
    # most label pairs that occur together are the kernel pairs
    prefix = Y[: n_train(n)].astype(np.int64)
    co = prefix.T @ prefix
    together = {tuple(sorted(p)): co[p] for p in info["pairs"]}
    others = [co[a, b] for a in range(5) for b in range(a + 1, 5) if (a, b) not in together]
    assert min(together.values()) > max(others)


def test_spherical_pairs_determinism_and_prefix():
    a = _pairs(n=10_000, seed=4)
    b = _pairs(n=20_000, seed=4)
    c = _pairs(n=10_000, seed=5)
    np.testing.assert_array_equal(a[0], b[0][:10_000])
    np.testing.assert_array_equal(a[1], b[1][:10_000])
    assert a[2]["pairs"] == b[2]["pairs"]
    assert not np.array_equal(a[0], c[0])


def test_spherical_pairs_errors():
    with pytest.raises(ValueError, match=r"placement must be one of .*'grid'"):
        moa_spherical(3, 2, 100, 1000, radius=0.1, placement="grid")
    with pytest.raises(ValueError, match="placement='pairs' does not apply to rotate=True"):
        moa_spherical(2, 2, 100, 1000, radius=0.1, rotate=True, placement="pairs")
    with pytest.raises(ValueError, match=r"lo <= hi, got \(0.2, 0.1\)"):
        moa_spherical(3, 2, 100, 1000, radius=0.1, placement="pairs", pair_offset=(0.2, 0.1))
    with pytest.raises(ValueError, match=r"pair_offset\[0\]"):
        moa_spherical(3, 2, 100, 1000, radius=0.1, placement="pairs", pair_offset=(-0.1, 0.1))
    with pytest.raises(TypeError, match="pair_offset must be a pair of floats"):
        moa_spherical(3, 2, 100, 1000, radius=0.1, placement="pairs", pair_offset=0.1)


# ====================================================================== binary base generators


def test_waveform_two_classes_and_wave_shapes():
    gen = WaveformGenerator()
    X, y = gen.sample(40_000, random_state=0)
    assert X.shape == (40_000, 21)
    assert set(np.unique(y)) == {0, 1}
    assert abs(y.mean() - 0.5) < 4 * math.sqrt(0.25 / 40_000)
    h = gen.waves_
    assert h.shape == (3, 21) and h.max() == 6
    assert [int(np.argmax(w)) for w in h] == [6, 14, 10]
    # E[x | class 0] = (h1 + h2) / 2, E[x | class 1] = (h1 + h3) / 2 (sd of a mean < 0.03)
    np.testing.assert_allclose(X[y == 0].mean(0), (h[0] + h[1]) / 2, atol=0.12)
    np.testing.assert_allclose(X[y == 1].mean(0), (h[0] + h[2]) / 2, atol=0.12)
    _, y3 = WaveformGenerator(n_classes=3).sample(3000, random_state=0)
    assert set(np.unique(y3)) == {0, 1, 2}
    assert WaveformGenerator(noise_features=True).sample(10, random_state=0)[0].shape == (10, 40)


def test_sample_by_class_returns_class_conditional_instances():
    gen = WaveformGenerator()
    neg, pos = gen.sample_by_class(20_000, random_state=1)
    assert neg.shape == pos.shape == (20_000, 21)
    h = gen.waves_
    np.testing.assert_allclose(neg.mean(0), (h[0] + h[1]) / 2, atol=0.12)
    np.testing.assert_allclose(pos.mean(0), (h[0] + h[2]) / 2, atol=0.12)


def test_random_tree_leaves_are_pure_and_classes_present():
    gen = RandomTreeGenerator(random_state=0)
    X, y = gen.sample(20_000, random_state=1)
    assert X.shape == (20_000, 30) and X.min() >= 0 and X.max() < 1
    leaves = gen.apply(X)
    assert np.all(gen.value_[leaves] >= 0)  # every instance ends in a leaf
    for leaf in np.unique(leaves):  # one class per leaf cell
        assert len(np.unique(y[leaves == leaf])) == 1
    freq = np.bincount(y, minlength=2) / len(y)
    assert freq.min() >= 0.01
    # depth of the tree <= max_depth: max_depth steps from the root always reach a leaf
    assert len(np.unique(leaves)) <= 2**gen.max_depth
    g2 = RandomTreeGenerator(random_state=0)
    np.testing.assert_array_equal(gen.threshold_, g2.threshold_)


def test_random_tree_rejects_a_one_class_tree():
    # a single-leaf tree (max_depth 0) has one class: redrawn until it has the other class too,
    # which never happens -> error; with min_class_fraction=0 it is accepted
    with pytest.raises(RuntimeError, match="balanced"):
        RandomTreeGenerator(max_depth=0, random_state=0)
    gen = RandomTreeGenerator(max_depth=0, min_class_fraction=0.0, random_state=0)
    assert gen.n_attempts_ == 1


def test_hyperplane_balanced_with_five_percent_noise():
    gen = HyperplaneGenerator(random_state=0)
    X, y = gen.sample(100_000, random_state=1)
    assert X.shape == (100_000, 10)
    se = math.sqrt(0.25 / 100_000)
    assert abs(y.mean() - 0.5) < 4 * se  # symmetric about the plane: balanced
    flipped = (y != gen.decision(X)).mean()
    assert abs(flipped - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 100_000)


def test_random_rbf_radial_law():
    gen = RandomRBFGenerator(n_features=3, n_centroids=1, random_state=0)
    X, y = gen.sample(50_000, random_state=1)
    assert np.all(y == gen.classes_[0])
    r = np.linalg.norm(X - gen.centers_[0], axis=1)
    # radius |g| sigma with g ~ N(0, 1): mean sigma sqrt(2 / pi)
    expected = gen.sigma_[0] * math.sqrt(2 / math.pi)
    assert abs(r.mean() - expected) < 4 * gen.sigma_[0] * math.sqrt((1 - 2 / math.pi) / 50_000)
    gen80 = RandomRBFGenerator(random_state=0)
    X80, y80 = gen80.sample(10_000, random_state=2)
    assert X80.shape == (10_000, 80) and set(np.unique(y80)) == {0, 1}
    assert 0 <= gen80.sigma_.min() and gen80.sigma_.max() < 1


def test_base_generators_deterministic():
    for gen in (
        WaveformGenerator(),
        RandomTreeGenerator(random_state=3),
        HyperplaneGenerator(random_state=3),
        RandomRBFGenerator(random_state=3),
    ):
        a = gen.sample(500, random_state=9)
        b = gen.sample(500, random_state=9)
        c = gen.sample(500, random_state=10)
        np.testing.assert_array_equal(a[0], b[0])
        assert not np.array_equal(a[0], c[0])


# ========================================================================= Read et al. internals


def moa_priors(u, z):
    """MOA's loop, verbatim in numpy (with a tolerance so that it terminates)."""
    p = u.copy()
    for _ in range(100_000):
        c = p.sum() / z
        p = np.minimum(1.0, p / c)
        if p.sum() >= z * (1 - 1e-13):
            break
    return p


def test_scale_priors_is_the_limit_of_moas_loop():
    rng = np.random.default_rng(0)
    for _ in range(200):
        L = int(rng.integers(2, 25))
        u = rng.random(L)
        z = float(rng.uniform(0.05, L))
        p = _scale_priors(u, z)
        assert p.sum() == pytest.approx(z, rel=1e-10)
        np.testing.assert_allclose(p, moa_priors(u, z), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(_scale_priors(np.array([0.2, 0.5]), 2.0), [1.0, 1.0])


def test_conditional_matrix_follows_moa():
    rng = np.random.default_rng(1)
    L = 6
    p = rng.random(L)
    n_pairs = L * (L - 1) // 2
    flags = rng.random(n_pairs) < 0.5
    excl = rng.random(n_pairs) < 0.5
    Q = _conditional(p, flags, excl)
    idx = 0
    for j in range(L):
        assert Q[j, j] == p[j]
        for k in range(j + 1, L):
            if flags[idx]:
                qjk = max(0.0, p[j] + p[k] - 1) if excl[idx] else min(1.0, p[k] / p[j])
                assert Q[j, k] == pytest.approx(qjk)
                assert Q[k, j] == pytest.approx(qjk * p[j] / p[k])
            else:
                assert Q[j, k] == pytest.approx(p[j]) and Q[k, j] == pytest.approx(p[k])
            idx += 1


def test_label_set_sampler_two_independent_labels():
    # L = 2, independent: first label k ~ pi, the other one on with probability p_other
    p = np.array([0.3, 0.6])
    Q = _conditional(p, np.array([False]), np.array([False]))
    n = 200_000
    Y = _sample_sets(p, Q, _SetDraws(np.random.default_rng(0), n, 2))
    pi = p / p.sum()
    expected = pi + pi[::-1] * p  # P(y_j = 1) = pi_j + pi_other p_j
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(Y.mean(0) - expected) < 4 * se)
    assert Y.any(axis=1).all()


def test_feature_map_ordering_rounding_and_cycling():
    def rows(*sets_counts):
        out = []
        for labels, count in sets_counts:
            y = np.zeros(3, dtype=bool)
            y[list(labels)] = True
            out += [y] * count
        return np.array(out)

    ident = np.arange(5)
    S = _feature_map(rows(((1,), 30), ((0,), 50), ((0, 1), 20)), 5, ident)
    # weights .5, .3, .2 -> 3 slots for {0}, 2 for {1}, none left for {0, 1}
    assert [tuple(np.flatnonzero(s)) for s in S] == [(0,), (0,), (0,), (1,), (1,)]
    # equal counts: lexicographic order (0,) < (0, 1) < (1,); 1 slot each, then cycle
    S = _feature_map(rows(((1,), 10), ((0, 1), 10), ((0,), 10)), 4, np.arange(4))
    assert [tuple(np.flatnonzero(s)) for s in S] == [(0,), (0, 1), (1,), (0,)]
    perm = np.array([4, 3, 2, 1, 0])
    S = _feature_map(rows(((1,), 30), ((0,), 50), ((0, 1), 20)), 5, perm)
    assert [tuple(np.flatnonzero(s)) for s in S] == [(1,), (1,), (0,), (0,), (0,)]


# =============================================================================== read_multilabel


class SentinelBase:
    """Test double: every attribute of an instance equals its class."""

    n_features = 6

    def sample(self, n, random_state):
        rng = np.random.default_rng(random_state)
        y = rng.integers(0, 2, n)
        return np.repeat(y[:, None], self.n_features, axis=1).astype(float), y


@pytest.mark.parametrize("remap", [False, True])
def test_read_features_follow_the_feature_map(remap):
    X, Y, info = read_multilabel(
        SentinelBase(), 4, 6, 1.8, 8_000, seed=0, remap_features=remap, n_map_samples=5_000
    )
    maps = info["feature_maps"][info["concept"]]  # (n, A, L)
    subset = np.all(~maps | Y[:, None, :].astype(bool), axis=2)  # S_a subset of Y_t
    np.testing.assert_array_equal(X == 1.0, subset)
    assert info["feature_maps"].any(axis=2).all()  # every S_a is a non-empty combination


@pytest.mark.parametrize(
    "base, A, L",
    [("waveform", 21, 7), ("random_tree", 30, 8), ("hyperplane", 10, 5), ("rbf", 80, 22)],
)
def test_read_shapes_dtypes_nonempty(base, A, L):
    X, Y, info = read_multilabel(base, L, A, 2.0, 4_000, seed=1, n_map_samples=5_000)
    assert X.shape == (4_000, A) and X.dtype == np.float64
    assert Y.shape == (4_000, L) and Y.dtype == np.uint8
    assert Y.sum(axis=1).min() >= 1
    assert np.isfinite(X).all()
    assert info["conditional"].shape == (4, L, L)
    assert info["feature_maps"].shape == (4, A, L)


def test_read_boundaries_exact():
    n = 10_001
    X, Y, info = read_multilabel("hyperplane", 5, 10, 1.5, n, seed=0, n_map_samples=2_000)
    # b_s = floor(s n / 4 + 1/2)
    assert info["boundaries"].tolist() == [0, 2500, 5001, 7501, 10_001]
    assert info["drift_points"].tolist() == [2500, 5001, 7501]
    expected = np.repeat(np.arange(4), np.diff(info["boundaries"]))
    np.testing.assert_array_equal(info["concept"], expected)


def test_read_paper_drift_redraws_the_stated_fraction_of_conditionals():
    L = 7
    X, Y, info = read_multilabel("waveform", L, 21, 2.37, 20_000, seed=2, n_map_samples=5_000)
    Q0 = info["conditional_undrifted"]
    p = info["priors"][0]
    for s, f in enumerate((0.0, 0.1, 0.1, 0.3)):
        pairs = info["redrawn_pairs"][s]
        assert len(pairs) == math.floor(f * L * (L - 1) + 0.5)  # 0, 4, 4, 13
        assert len({tuple(x) for x in pairs.tolist()}) == len(pairs)  # without replacement
        assert np.all(pairs[:, 0] != pairs[:, 1])  # off-diagonal
        Qs = info["conditional"][s]
        changed = np.zeros((L, L), dtype=bool)
        changed[pairs[:, 0], pairs[:, 1]] = True
        np.testing.assert_array_equal(Qs[~changed], Q0[~changed])  # nothing else moves
        assert np.all((Qs >= 0) & (Qs <= 1))
        np.testing.assert_array_equal(info["priors"][s], p)  # priors unchanged
    # sub-streams 2 and 3 redraw different entries (independent draws)
    assert {tuple(x) for x in info["redrawn_pairs"][1].tolist()} != {
        tuple(x) for x in info["redrawn_pairs"][2].tolist()
    }


def test_read_no_drift_gives_identical_substream_distributions():
    n = 40_000
    X, Y, info = read_multilabel(
        "hyperplane", 5, 10, 1.7, n, drift_fractions=(0, 0, 0, 0), seed=3, n_map_samples=5_000
    )
    assert all(np.array_equal(q, info["conditional"][0]) for q in info["conditional"])
    b = info["boundaries"]
    groups = [slice(b[s], b[s + 1]) for s in range(4)]
    stat, df = chi2_homogeneity(label_set_table(Y, groups))
    assert stat < df + 4 * math.sqrt(2 * df)


def test_read_paper_drift_changes_the_substream_distributions():
    n = 40_000
    X, Y, info = read_multilabel("hyperplane", 5, 10, 1.7, n, seed=3, n_map_samples=5_000)
    b = info["boundaries"]
    # same draws as above except the concepts: the first and last sub-streams now differ
    stat, df = chi2_homogeneity(label_set_table(Y, [slice(b[0], b[1]), slice(b[3], b[4])]))
    assert stat > df + 4 * math.sqrt(2 * df)
    # and the first sub-stream is the same as without drift (f_1 = 0)
    X0, Y0, _ = read_multilabel(
        "hyperplane", 5, 10, 1.7, n, drift_fractions=(0, 0, 0, 0), seed=3, n_map_samples=5_000
    )
    np.testing.assert_array_equal(Y[: b[1]], Y0[: b[1]])
    np.testing.assert_array_equal(X[: b[1]], X0[: b[1]])


@pytest.mark.parametrize(
    "base, A, L, z, n",
    [
        ("waveform", 21, 7, 2.37, 100_000),
        ("hyperplane", 10, 5, 1.68, 94_417),
        ("rbf", 80, 22, 2.24, 30_000),
    ],
)
def test_read_calibrated_cardinality_on_the_training_prefix(base, A, L, z, n):
    X, Y, info = read_multilabel(base, L, A, z, n, seed=0, target_cardinality=z)
    # the calibration stops within 0.01 on exactly this prefix (spec tolerance 0.02)
    assert abs(card(Y[: n_train(n)]) - z) <= 0.01
    cal = info["calibration"]
    assert cal["converged"] and cal["n_calibration"] == n_train(n)
    assert 0 < info["z_param"] <= L


def test_read_calibration_advances_the_sub_seed_when_unreachable():
    # found by search: seed 0 of this preset has a cardinality floor above 1.68
    X, Y, info = read_multilabel("hyperplane", 5, 10, 1.68, 10_000, seed=0, target_cardinality=1.68)
    assert info["attempt"] >= 1
    assert abs(card(Y[:1000]) - 1.68) <= 0.01
    with pytest.raises(ValueError, match="not reached"):
        read_multilabel(
            "hyperplane",
            5,
            10,
            1.68,
            2_000,
            seed=0,
            target_cardinality=1.01,
            max_attempts=2,
            dependency=1.0,
            n_map_samples=1_000,
        )


def test_read_determinism():
    kw = dict(n_map_samples=3_000)
    a = read_multilabel("random_tree", 6, 30, 2.0, 3_000, seed=5, **kw)
    b = read_multilabel("random_tree", 6, 30, 2.0, 3_000, seed=5, **kw)
    c = read_multilabel("random_tree", 6, 30, 2.0, 3_000, seed=6, **kw)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1], c[1]) and not np.array_equal(a[0], c[0])


def test_read_moa_drift_mode():
    L = 6
    X, Y, info = read_multilabel(
        "hyperplane",
        L,
        10,
        2.0,
        8_000,
        drift_fractions=(0, 0.5, 0, 0.5),
        seed=4,
        drift_mode="moa",
        n_map_samples=3_000,
    )
    pr = info["priors"]
    np.testing.assert_array_equal(pr[0], pr[2])  # f = 0: concept unchanged
    np.testing.assert_array_equal(info["conditional"][0], info["conditional"][2])
    assert not np.array_equal(pr[0], pr[1])  # f = 0.5: some priors redrawn
    assert info["redrawn_pairs"] is None
    assert Y.sum(axis=1).min() >= 1


def test_read_cumulative_drift_accumulates():
    X, Y, info = read_multilabel(
        "hyperplane",
        5,
        10,
        1.7,
        4_000,
        drift_fractions=(0, 0.3, 0.3, 0.3),
        seed=1,
        cumulative=True,
        n_map_samples=2_000,
    )
    Q = info["conditional"]
    diff = [(Q[s] != Q[0]).sum() for s in range(4)]
    # every sub-stream keeps the previous changes: the changed set grows (or stays)
    assert diff[1] <= diff[2] <= diff[3] and diff[3] > diff[1]


def test_read_sigmoid_transition():
    n, w = 40_000, 2_000
    X, Y, info = read_multilabel(
        "hyperplane", 5, 10, 1.7, n, seed=0, transition_width=w, n_map_samples=2_000
    )
    concept, b1 = info["concept"], info["boundaries"][1]
    assert np.all(concept[: b1 - 4 * w] == 0)  # far from the boundary: pure concepts
    t = np.arange(b1 - w, b1)
    expected = (1 / (1 + np.exp(-4 * (t - b1) / w))).mean()  # ~ 0.13
    got = (concept[b1 - w : b1] >= 1).mean()
    assert abs(got - expected) < 4 * math.sqrt(expected * (1 - expected) / w)
    assert 0 < got < 0.5


def test_read_errors():
    with pytest.raises(ValueError, match="n_features must be 21"):
        read_multilabel("waveform", 5, 10, 1.5, 100)
    with pytest.raises(ValueError, match="base must be one of"):
        read_multilabel("nope", 5, 10, 1.5, 100)
    with pytest.raises(ValueError, match="z must be"):
        read_multilabel("hyperplane", 5, 10, 6.0, 100)
    with pytest.raises(ValueError, match="must equal the base"):
        read_multilabel(SentinelBase(), 5, 7, 1.5, 100)


@pytest.mark.parametrize(
    "make",
    [
        lambda: RandomRBFGenerator(n_features=2, n_classes=300, random_state=0),
        lambda: RandomTreeGenerator(n_classes=300, min_class_fraction=0, random_state=0),
    ],
)
def test_class_indices_beyond_127_are_not_wrapped(make):
    """y was cast to int8: class 201 came out as -55."""
    _, y = make().sample(3000, random_state=0)
    assert y.dtype == np.int16
    assert y.min() >= 0 and y.max() < 300 and y.max() > 127


def test_few_classes_keep_int8():
    _, y = RandomRBFGenerator(n_features=2, n_classes=3, random_state=0).sample(50, 0)
    assert y.dtype == np.int8


def test_noise_features_must_be_a_bool():
    with pytest.raises(TypeError, match=r"noise_features must be True or False, got 'False'"):
        WaveformGenerator(noise_features="False")
