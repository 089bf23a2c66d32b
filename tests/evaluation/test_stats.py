"""Friedman, Iman--Davenport and Nemenyi tests (mlsom.stats), checked against Demšar (2006),
scipy.stats.friedmanchisquare and scikit-posthocs."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import chi2 as chi2_dist
from scipy.stats import friedmanchisquare

from mlsom.stats import (
    FriedmanNemenyiResult,
    average_ranks,
    critical_difference,
    friedman_chi2,
    friedman_nemenyi,
    iman_davenport,
    nemenyi_pvalues,
    nemenyi_q,
    rank_data,
)

# Demšar (2006), Table 6: AUC of C4.5 with and without tuned m and cf on 14 UCI data sets.
DEMSAR_METHODS = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_DATASETS = [
    "adult (sample)",
    "breast_cancer",
    "breast_cancer_wisconsin",
    "cmc",
    "ionosphere",
    "iris",
    "liver_disorders",
    "lung_cancer",
    "lymphography",
    "mushroom",
    "primary_tumor",
    "rheum",
    "voting",
    "wine",
]
DEMSAR_AUC = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.975, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)
VOTING = DEMSAR_DATASETS.index("voting")


def demsar_ranked_table():
    """Table 6 as Demšar ranked it.

    The table prints three decimals; on "voting" C4.5+cf and C4.5+m+cf both print 0.975, but the
    paper's average ranks (2.893 and 1.964, each 0.5/14 away from an average-rank tie) rank
    C4.5+cf ahead there. A value just above 0.975 restores that order.
    """
    table = DEMSAR_AUC.copy()
    table[VOTING, 2] = 0.97501
    return table


@pytest.fixture(scope="module")
def demsar():
    return friedman_nemenyi(demsar_ranked_table(), methods=DEMSAR_METHODS, datasets=DEMSAR_DATASETS)


# ---------------------------------------------------------------------- Demšar's worked example


def test_demsar_average_ranks(demsar):
    np.testing.assert_allclose(demsar.mean_ranks, [3.143, 2.000, 2.893, 1.964], atol=5e-4)
    assert [m for m, _ in demsar.ranking()] == ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]


def test_demsar_friedman_and_iman_davenport(demsar):
    assert demsar.chi2 == pytest.approx(9.28, abs=5e-3)
    assert demsar.chi2_df == 3
    assert demsar.f_statistic == pytest.approx(3.69, abs=5e-3)
    assert demsar.f_df == (3, 39)
    # Demšar: the critical value of F(3, 39) at alpha = 0.05 is 2.85, so the null hypothesis is
    # rejected by Iman--Davenport.
    assert demsar.f_pvalue < 0.05
    assert demsar.chi2_pvalue == pytest.approx(chi2_dist.sf(demsar.chi2, 3))


def test_demsar_critical_differences(demsar):
    assert demsar.q_alpha == pytest.approx(2.569, abs=1e-3)
    assert demsar.cd == pytest.approx(1.25, abs=5e-3)
    assert critical_difference(4, 14, alpha=0.05) == pytest.approx(1.25, abs=5e-3)
    assert critical_difference(4, 14, alpha=0.10) == pytest.approx(1.12, abs=5e-3)


def test_demsar_post_hoc_conclusions(demsar):
    # At alpha = 0.05 the post-hoc test cannot tell any two methods apart (one group of all four).
    assert not demsar.significant().any()
    assert demsar.groups() == [("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5")]
    # At alpha = 0.10 (CD = 1.12) both C4.5+m+cf (3.143 - 1.964 = 1.179) and C4.5+m
    # (3.143 - 2.000 = 1.143) are significantly better than C4.5, and nothing else differs.
    r10 = friedman_nemenyi(demsar_ranked_table(), methods=DEMSAR_METHODS, alpha=0.10)
    pairs = {
        tuple(sorted((DEMSAR_METHODS[i], DEMSAR_METHODS[j])))
        for i, j in zip(*np.nonzero(np.triu(r10.significant())), strict=True)
    }
    assert pairs == {("C4.5", "C4.5+m+cf"), ("C4.5", "C4.5+m")}
    assert r10.groups() == [("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5")]


def test_printed_table_gives_average_ranks_to_ties():
    ranks = rank_data(DEMSAR_AUC)
    np.testing.assert_array_equal(ranks[DEMSAR_DATASETS.index("mushroom")], [2.5, 2.5, 2.5, 2.5])
    np.testing.assert_array_equal(ranks[VOTING], [4.0, 1.0, 2.5, 2.5])
    np.testing.assert_array_equal(ranks[DEMSAR_DATASETS.index("iris")], [1.0, 2.5, 4.0, 2.5])
    # The voting tie gives C4.5+cf and C4.5+m+cf 2.5 each there instead of 2 and 3: their
    # average ranks move 0.5/14 towards one another.
    np.testing.assert_allclose(
        average_ranks(DEMSAR_AUC), [3.143, 2.000, 2.893 + 0.5 / 14, 1.964 - 0.5 / 14], atol=5e-4
    )


def test_formulas_from_ranks_match_demsar():
    """The formulas alone, fed Demšar's published average ranks."""
    chi2, p = friedman_chi2([3.143, 2.000, 2.893, 1.964], 14)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    assert p == pytest.approx(chi2_dist.sf(chi2, 3))
    f, fp = iman_davenport(chi2, 4, 14)
    assert f == pytest.approx(3.69, abs=0.01)
    assert 0.01 < fp < 0.05


# Demšar (2006), Table 5(a): critical values of the two-tailed Nemenyi test, k = 2 ... 10.
Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


@pytest.mark.parametrize(
    "k, q05, q10", [(k, a, b) for k, a, b in zip(range(2, 11), Q05, Q10, strict=True)]
)
def test_nemenyi_q_matches_demsar_table(k, q05, q10):
    assert nemenyi_q(k, 0.05) == pytest.approx(q05, abs=1e-3)
    assert nemenyi_q(k, 0.10) == pytest.approx(q10, abs=1e-3)


def test_paper_scale_numbers_of_the_protocol():
    """docs/protocol.md: 43 methods over 12 streams."""
    assert nemenyi_q(43, 0.05) == pytest.approx(3.922, abs=1e-3)
    assert critical_difference(43, 12) == pytest.approx(20.10, abs=5e-3)
    assert critical_difference(43, 600) == pytest.approx(2.84, abs=5e-3)
    f, _ = iman_davenport(109.5, 43, 12)
    assert f == pytest.approx(3.05, abs=5e-3)
    assert chi2_dist.sf(109.5, 42) == pytest.approx(6.181e-08, rel=0.02)


# ------------------------------------------------------- references: scipy, scikit-posthocs


SHAPES = [(2, 2), (5, 3), (14, 4), (30, 6), (12, 43), (50, 10)]


@pytest.mark.parametrize("shape", SHAPES)
def test_friedman_equals_scipy_without_ties(shape):
    scores = np.random.default_rng(sum(shape)).random(shape)
    result = friedman_nemenyi(scores)
    ref = friedmanchisquare(*scores.T) if shape[1] >= 3 else None
    if ref is not None:  # scipy needs at least 3 methods
        assert result.chi2 == pytest.approx(ref.statistic, rel=1e-10)
        assert result.chi2_pvalue == pytest.approx(ref.pvalue, rel=1e-8)
    corrected = friedman_nemenyi(scores, tie_correction=True)
    assert corrected.chi2 == pytest.approx(result.chi2, rel=1e-12)


@pytest.mark.parametrize("shape", [(5, 3), (14, 4), (30, 6), (12, 43)])
def test_tie_correction_equals_scipy_with_ties(shape):
    scores = np.random.default_rng(7 * shape[0]).integers(0, 4, size=shape).astype(float)
    ref = friedmanchisquare(*scores.T)
    result = friedman_nemenyi(scores, tie_correction=True)
    assert result.chi2 == pytest.approx(ref.statistic, rel=1e-10)
    assert result.chi2_pvalue == pytest.approx(ref.pvalue, rel=1e-8)
    # Demšar's formula leaves the statistic smaller when there are ties.
    assert friedman_nemenyi(scores).chi2 < result.chi2


def test_tie_correction_equals_scipy_on_printed_table():
    ref = friedmanchisquare(*DEMSAR_AUC.T)
    assert friedman_nemenyi(DEMSAR_AUC, tie_correction=True).chi2 == pytest.approx(ref.statistic)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("integers", [False, True])
def test_nemenyi_pvalues_equal_scikit_posthocs(shape, integers):
    sp = pytest.importorskip("scikit_posthocs")
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    scores = rng.integers(0, 5, size=shape).astype(float) if integers else rng.random(shape)
    scores[:, 0] += 0.5  # one method ahead, so that some p-values are small
    ref = sp.posthoc_nemenyi_friedman(scores).to_numpy()
    result = friedman_nemenyi(scores)
    np.testing.assert_allclose(result.pvalues, ref, rtol=1e-9, atol=1e-14)
    # scikit-posthocs ranks ascending; the p-values do not depend on the direction.
    np.testing.assert_allclose(
        friedman_nemenyi(scores, higher_is_better=False).pvalues, ref, rtol=1e-9, atol=1e-14
    )


def test_pvalue_at_the_critical_difference_is_alpha():
    for k, n, alpha in [(4, 14, 0.05), (10, 30, 0.10), (43, 12, 0.05)]:
        cd = critical_difference(k, n, alpha)
        # first and last CD apart, about the middle rank so that they sum as ranks do
        ranks = (k + 1) / 2 + np.linspace(-cd / 2, cd / 2, k)
        p = nemenyi_pvalues(ranks, n)
        assert p[0, -1] == pytest.approx(alpha, rel=1e-6)
        assert np.all(p[0, 1:-1] > alpha)


def test_nemenyi_pvalues_two_methods_are_normal_two_sided():
    from scipy.stats import norm

    p = nemenyi_pvalues([1.2, 1.8], 10)
    z = 0.6 / np.sqrt(2 * 3 / 60)
    assert p[0, 1] == pytest.approx(2 * norm.sf(z), rel=1e-6)
    np.testing.assert_array_equal(np.diag(p), [1.0, 1.0])


# ---------------------------------------------------------------------- the result


def test_result_fields_and_helpers(demsar):
    assert isinstance(demsar, FriedmanNemenyiResult)
    assert demsar.methods == tuple(DEMSAR_METHODS)
    assert demsar.datasets == tuple(DEMSAR_DATASETS)
    assert (demsar.n_methods, demsar.n_datasets) == (4, 14)
    assert demsar.ranks.shape == demsar.scores.shape == (14, 4)
    np.testing.assert_allclose(demsar.ranks.sum(axis=1), 10.0)  # 1 + 2 + 3 + 4 on every row
    np.testing.assert_array_equal(demsar.order, [3, 1, 2, 0])
    assert demsar.pvalue("C4.5", "C4.5+m+cf") == demsar.pvalues[0, 3]
    assert demsar.pvalue("C4.5", "C4.5+m+cf") == demsar.pvalue("C4.5+m+cf", "C4.5")
    np.testing.assert_array_equal(demsar.pvalues, demsar.pvalues.T)
    with pytest.raises(KeyError, match="unknown method 'J48'"):
        demsar.pvalue("J48", "C4.5")
    frame = demsar.pvalues_frame()
    assert list(frame.columns) == DEMSAR_METHODS
    assert frame.loc["C4.5", "C4.5+m"] == demsar.pvalue("C4.5", "C4.5+m")
    text = demsar.summary()
    assert "Friedman chi2 = 9.279" in text and "CD = 1.254" in text
    listed = [line.split()[-1] for line in text.splitlines()[-4:]]
    assert listed == ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]


def test_result_is_read_only(demsar):
    with pytest.raises(ValueError):
        demsar.pvalues[0, 1] = 0.0
    with pytest.raises(AttributeError):
        demsar.cd = 0.0


def test_groups_are_the_maximal_non_significant_runs():
    rng = np.random.default_rng(3)
    for _ in range(20):
        k = int(rng.integers(3, 15))
        scores = rng.random((8, k)) + np.linspace(0.0, rng.uniform(0, 1.5), k)
        result = friedman_nemenyi(scores, alpha=0.10)
        groups = [set(g) for g in result.groups()]
        r = dict(zip(result.methods, result.mean_ranks, strict=True))
        for g in groups:
            assert len(g) >= 2
            spread = max(r[m] for m in g) - min(r[m] for m in g)
            assert spread < result.cd
        for a in range(k):
            for b in range(a + 1, k):
                pair = {result.methods[a], result.methods[b]}
                together = any(pair <= g for g in groups)
                assert together == (not result.significant()[a, b])
        for g in groups:  # maximal: no group inside another
            assert not any(g < h for h in groups)


def test_perfect_agreement_and_all_ties():
    same = np.tile([0.9, 0.8, 0.7, 0.6], (6, 1)) + np.arange(6)[:, None] * 0.01
    r = friedman_nemenyi(same)
    assert r.chi2 == pytest.approx(6 * 3)  # N (k - 1), the largest value
    assert r.f_statistic == np.inf and r.f_pvalue == 0.0
    tied = np.ones((5, 3))
    for correction in (False, True):
        r = friedman_nemenyi(tied, tie_correction=correction)
        assert r.chi2 == 0.0 and r.chi2_pvalue == pytest.approx(1.0)
        assert r.f_statistic == 0.0 and r.f_pvalue == pytest.approx(1.0)
        np.testing.assert_array_equal(r.pvalues, np.ones((3, 3)))


# ---------------------------------------------------------------------- input forms


def test_mapping_dataframe_and_array_agree():
    pd = pytest.importorskip("pandas")
    table = demsar_ranked_table()
    ref = friedman_nemenyi(table, methods=DEMSAR_METHODS, datasets=DEMSAR_DATASETS)
    by_method = {m: table[:, j] for j, m in enumerate(DEMSAR_METHODS)}
    nested = {
        m: {d: table[i, j] for i, d in reversed(list(enumerate(DEMSAR_DATASETS)))}
        for j, m in enumerate(DEMSAR_METHODS)
    }
    nested["C4.5"] = dict(reversed(list(nested["C4.5"].items())))  # another key order
    frame = pd.DataFrame(table, columns=DEMSAR_METHODS, index=DEMSAR_DATASETS)
    for scores in (by_method, nested, frame):
        r = friedman_nemenyi(scores)
        assert r.methods == ref.methods
        np.testing.assert_allclose(r.mean_ranks, ref.mean_ranks)
        np.testing.assert_allclose(r.pvalues, ref.pvalues)
        assert r.chi2 == pytest.approx(ref.chi2)
    assert friedman_nemenyi(frame).datasets == tuple(DEMSAR_DATASETS)
    assert set(friedman_nemenyi(nested).datasets) == set(DEMSAR_DATASETS)
    assert friedman_nemenyi(by_method).datasets == tuple(str(i) for i in range(14))
    assert friedman_nemenyi(frame, methods=list("abcd")).methods == ("a", "b", "c", "d")


def test_default_names_and_lower_is_better():
    scores = np.random.default_rng(0).random((6, 3))
    r = friedman_nemenyi(scores)
    assert r.methods == ("method 0", "method 1", "method 2")
    lower = friedman_nemenyi(-scores, higher_is_better=False)
    np.testing.assert_allclose(lower.mean_ranks, r.mean_ranks)
    np.testing.assert_allclose(
        friedman_nemenyi(scores, higher_is_better=False).mean_ranks, 4.0 - r.mean_ranks
    )


@pytest.mark.parametrize(
    "scores, kwargs, exc, match",
    [
        (np.ones((1, 4)), {}, ValueError, r"at least 2 data sets \(rows\), got shape \(1, 4\)"),
        (np.ones((4, 1)), {}, ValueError, r"at least 2 methods \(columns\), got shape \(4, 1\)"),
        (np.ones(4), {}, ValueError, r"scores must be 2-D .*got shape \(4,\)"),
        (np.ones((2, 3, 2)), {}, ValueError, r"scores must be 2-D .*got shape \(2, 3, 2\)"),
        (
            [[1.0, np.nan], [1.0, 2.0]],
            {},
            ValueError,
            r"NaN or infinity .*data set '0' \(row 0\), method 'method 1' \(column 1\): nan",
        ),
        ([[1.0, 2.0], [np.inf, 2.0]], {}, ValueError, r"\(row 1\).*: inf"),
        ([["a", "b"], ["c", "d"]], {}, TypeError, r"scores must hold real numbers"),
        ([[1 + 1j, 2], [3, 4]], {}, TypeError, r"scores must hold real numbers"),
        ([[1, 2], [3]], {}, TypeError, r"scores cannot be read as an array"),
        ({}, {}, ValueError, r"at least 2 methods, got an empty mapping"),
        ({"a": [1, 2]}, {}, ValueError, r"at least 2 methods"),
        (
            {"a": [1, 2], "b": [1, 2, 3]},
            {},
            ValueError,
            r"scores\['b'\] has 3 scores but scores\['a'\] has 2",
        ),
        (
            {"a": {"x": 1, "y": 2}, "b": {"x": 1, "z": 2}},
            {},
            ValueError,
            r"scores\['b'\] must score the same data sets.*missing \['y'\], extra \['z'\]",
        ),
        ({"a": {"x": 1, "y": 2}, "b": [1, 2]}, {}, TypeError, r"scores\['a'\] is a mapping"),
        ({"a": [[1, 2]], "b": [[1, 2]]}, {}, ValueError, r"scores\['a'\] must be a 1-D sequence"),
        (np.ones((3, 2)), {"methods": ["a"]}, ValueError, r"methods must hold 2 names, got 1"),
        (np.ones((3, 2)), {"methods": "ab"}, TypeError, r"methods must be a sequence of names"),
        (
            np.ones((3, 2)),
            {"datasets": ["x", "y"]},
            ValueError,
            r"datasets must hold 3 names, got 2",
        ),
        (np.ones((3, 2)), {"methods": ["a", "a"]}, ValueError, r"unique, got duplicates \['a'\]"),
        (
            np.ones((2, 2)),
            {"datasets": ["x", "x"]},
            ValueError,
            r"data set names must be unique, got duplicates \['x'\]",
        ),
        (
            {"a": {1: 0.5, "1": 0.7}, "b": {1: 0.6, "1": 0.4}},
            {},
            ValueError,
            r"data set names must be unique, got duplicates \['1'\]",
        ),
        (
            [[10**400, 1], [1, 2]],
            {},
            ValueError,
            r"scores holds a number beyond the range of float64: 1000",
        ),
        (
            np.ones((3, 2)),
            {"alpha": 0.0},
            ValueError,
            r"alpha must lie strictly between 0 and 1, got 0.0",
        ),
        (np.ones((3, 2)), {"alpha": 1.5}, ValueError, r"alpha .* got 1.5"),
        (np.ones((3, 2)), {"alpha": "5%"}, TypeError, r"alpha must be a real number, got '5%'"),
    ],
)
def test_bad_input_is_named(scores, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        friedman_nemenyi(scores, **kwargs)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: nemenyi_q(1), ValueError, r"n_methods must be >= 2, got 1"),
        (lambda: nemenyi_q(4.0), TypeError, r"n_methods must be an integer, got 4.0"),
        (lambda: critical_difference(4, 1), ValueError, r"n_datasets must be >= 2, got 1"),
        (lambda: friedman_chi2([1.0], 5), ValueError, r"mean_ranks must be 1-D with at least 2"),
        (lambda: friedman_chi2([1.0, np.nan], 5), ValueError, r"mean_ranks must be finite"),
        (lambda: nemenyi_pvalues(["a", "b"], 5), TypeError, r"mean_ranks must hold real numbers"),
        (
            lambda: iman_davenport(-1.0, 4, 14),
            ValueError,
            r"chi2 must be a finite number >= 0, got -1.0",
        ),
    ],
)
def test_bad_formula_arguments_are_named(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("func", [friedman_chi2, nemenyi_pvalues])
@pytest.mark.parametrize(
    "ranks, match",
    [
        (
            [3, 3, 3],
            r"mean_ranks must sum to n_methods \* \(n_methods \+ 1\) / 2 = 6, .*"
            r"got \[3\.0, 3\.0, 3\.0\] \(sum 9\.0\)",
        ),
        ([1, 1, 3], r"mean_ranks must sum to .* = 6, .*got \[1\.0, 1\.0, 3\.0\] \(sum 5\.0\)"),
        ([2.5, 2.5, 2.5, 2.5 + 1e-6], r"mean_ranks must sum to .* = 10, .*\(sum 10\.000001"),
        (
            [1, 1.5, 3.75, 3.75],  # in [1, 4] and summing to 10, but 1 and 1.5 cannot both be
            r"mean_ranks cannot be average ranks of 4 methods: its 2 smallest sum to 2\.5, "
            r"below 1 \+ \.\.\. \+ 2 = 3; got \[1\.0, 1\.5, 3\.75, 3\.75\]",
        ),
    ],
)
def test_mean_ranks_that_no_ranking_gives_are_refused(func, ranks, match):
    with pytest.raises(ValueError, match=match):
        func(ranks, 10)


def test_mean_ranks_at_the_edges_and_rounded_by_averaging_are_accepted():
    # every data set ranking the methods alike, and every data set tying them all
    assert friedman_chi2([1, 2, 3, 4], 6)[0] == pytest.approx(6 * 3)
    assert friedman_chi2([2.5, 2.5, 2.5, 2.5], 6) == (0.0, 1.0)
    np.testing.assert_array_equal(nemenyi_pvalues([2.5, 2.5, 2.5, 2.5], 6), np.ones((4, 4)))
    # averages over many data sets, which do not sum exactly in float64
    scores = np.random.default_rng(1).random((7, 43))
    r = average_ranks(scores)
    assert r.sum() != 43 * 44 / 2
    result = friedman_nemenyi(scores)
    assert friedman_chi2(r, 7) == (result.chi2, result.chi2_pvalue)
    np.testing.assert_array_equal(nemenyi_pvalues(r, 7), result.pvalues)


BIG = 2**64 - 1  # 2**64 - 1 and 2**64 - 2 are the same float64


@pytest.mark.parametrize(
    "scores",
    [
        np.array([[BIG, BIG - 1], [1, 2]], dtype=np.uint64),
        [[BIG, BIG - 1], [1, 2]],  # NumPy reads this list as float64
        {"A": np.array([BIG, 1], dtype=np.uint64), "B": np.array([BIG - 1, 2], dtype=np.uint64)},
        {"A": {"x": BIG, "y": 1}, "B": {"x": BIG - 1, "y": 2}},
    ],
)
def test_integers_beyond_float64_precision_are_ranked_exactly(scores):
    np.testing.assert_array_equal(rank_data(scores), [[1.0, 2.0], [2.0, 1.0]])
    np.testing.assert_array_equal(
        rank_data(scores, higher_is_better=False), [[2.0, 1.0], [1.0, 2.0]]
    )
    result = friedman_nemenyi(scores)
    np.testing.assert_array_equal(result.mean_ranks, [1.5, 1.5])
    assert result.chi2 == 0.0


def test_large_integers_beside_floats_and_negative_integers_are_ranked_exactly():
    # 2**60 + 1 > 2.0**60 although float64 rounds both to 2**60
    big = 2**60
    mixed = [[big + 1, float(big), big - 1], [3, 2.5, 2]]
    np.testing.assert_array_equal(rank_data(mixed), [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    by_method = {"A": [big + 1, 3], "B": [float(big), 2.5], "C": np.array([big - 1, 2])}
    np.testing.assert_array_equal(average_ranks(by_method), [1.0, 2.0, 3.0])
    negative = np.array([[-(2**62) - 1, -(2**62), 5], [-(2**62), -(2**62), 0]], dtype=np.int64)
    np.testing.assert_array_equal(rank_data(negative), [[3.0, 2.0, 1.0], [2.5, 2.5, 1.0]])
    np.testing.assert_array_equal(
        rank_data(negative, higher_is_better=False), [[1.0, 2.0, 3.0], [1.5, 1.5, 3.0]]
    )
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"A": np.array([big + 1, 3]), "B": [float(big), 2.5]})
    np.testing.assert_array_equal(friedman_nemenyi(frame).mean_ranks, [1.0, 2.0])


def test_import_needs_neither_scipy_nor_matplotlib():
    code = (
        "import sys, mlsom, mlsom.stats, mlsom.plotting; "
        "print(','.join(m for m in ('scipy', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
