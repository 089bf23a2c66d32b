"""MINAS-BR's F1M and the cardinality measures: hand-worked values, their curves over windows
(cumulative and per window), their direction for ranking."""

import numpy as np
import pytest

from mlsom.evaluation import (
    DESCRIPTIVE,
    LOWER_IS_BETTER,
    MEASURES,
    compute_measure,
    confusion_counts,
    evaluate_predictions,
    f1m,
    macro_f1,
    multilabel_scores,
)

# Three labels, ten instances: label A  TP 3, FP 1, FN 0 (precision 3/4, recall 1);
# label B  TP 1, FP 1, FN 3 (1/2, 1/4); label C  TP 0, FP 0, FN 2 (nothing predicted: its
# precision is 0/0; recall 0).
COUNTS = [[3, 1, 0, 6], [1, 1, 3, 5], [0, 0, 2, 8]]


def test_f1m_by_hand_under_every_convention():
    # 1: C's precision counts as 1: P = (3/4 + 1/2 + 1) / 3 = 3/4, R = (1 + 1/4 + 0) / 3 = 5/12,
    # F1M = 2 (3/4)(5/12) / (3/4 + 5/12) = 15/28
    assert f1m(COUNTS) == pytest.approx(15 / 28)
    # 0 and mulan (C occurs, so its empty prediction is wrong): P = R = 5/12
    assert f1m(COUNTS, zero_division=0) == pytest.approx(5 / 12)
    assert f1m(COUNTS, zero_division="mulan") == pytest.approx(5 / 12)
    # exclude: P over A and B only, 5/8; R = 5/12; F1M = 1/2
    assert f1m(COUNTS, zero_division="exclude") == pytest.approx(0.5)
    # not macro F, the mean of the per-label F: (6/7 + 1/3 + 0) / 3
    assert macro_f1(COUNTS) == pytest.approx((6 / 7 + 1 / 3) / 3)


def test_f1m_edge_cases():
    assert f1m([[0, 2, 3, 5]]) == 0.0  # P = R = 0: F = 0, not 0/0
    assert np.isnan(f1m([[0, 0, 0, 4]], zero_division="exclude"))  # no label left
    assert f1m([[0, 0, 0, 4]]) == 1.0  # a label never there and never predicted, convention 1
    assert np.isnan(f1m(np.zeros((0, 4))))  # no label
    with pytest.raises(ValueError, match="label counts"):
        f1m([[1, 2, 3]])


def test_cardinalities_by_hand():
    # predicted: (4 + 2 + 0) / 10; true: (3 + 4 + 2) / 10; error |0.6 - 0.9|
    assert compute_measure("predicted_cardinality", COUNTS) == pytest.approx(0.6)
    assert compute_measure("true_cardinality", COUNTS) == pytest.approx(0.9)
    assert compute_measure("cardinality_error", COUNTS) == pytest.approx(0.3)
    Y = np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]])
    P = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 0]])
    scores = multilabel_scores(Y, P)
    assert scores["predicted_cardinality"] == pytest.approx(5 / 3)
    assert scores["true_cardinality"] == pytest.approx(4 / 3)
    assert scores["cardinality_error"] == pytest.approx(1 / 3)
    # over-prediction on one instance, under-prediction on another: the errors cancel in the
    # mean, as the difference of the two cardinalities
    assert multilabel_scores([[1, 0], [1, 0]], [[1, 1], [0, 0]])["cardinality_error"] == 0.0


def test_f1m_curve_is_cumulative_over_the_stream():
    """Two windows of two instances each, two labels: the cumulative curve's second value is F1M
    of every count so far, not the mean of the windows' values."""
    Y = np.array([[1, 0], [1, 0], [0, 1], [1, 1]])
    P = np.array([[1, 1], [1, 0], [0, 0], [0, 1]])
    res = evaluate_predictions(Y, P, n_windows=2)
    # window 0: A TP 2; B FP 1 -> P = (1 + 0) / 2, R = (1 + 1) / 2 (B absent: 0/0 -> 1)
    first = 2 * 0.5 * 1.0 / 1.5
    # window 1: A FN 1; B TP 1, FN 1 -> P = (1 + 1) / 2 (A: 0/0 -> 1), R = (0 + 1/2) / 2
    second = 2 * 1.0 * 0.25 / 1.25
    # both: A TP 2, FN 1; B TP 1, FP 1, FN 1 -> P = (1 + 1/2) / 2, R = (2/3 + 1/2) / 2
    p, r = 0.75, 7 / 12
    both = 2 * p * r / (p + r)
    np.testing.assert_allclose(res.curve("f1m", cumulative=False), [first, second])
    np.testing.assert_allclose(res.curve("f1m"), [first, both])
    assert res.total("f1m") == pytest.approx(f1m(confusion_counts(Y, P)))
    np.testing.assert_allclose(res.curve("predicted_cardinality"), [1.5, 1.0])
    np.testing.assert_allclose(res.curve("true_cardinality", cumulative=False), [1.0, 1.5])
    np.testing.assert_allclose(res.curve("cardinality_error"), [0.5, 0.25])


def test_every_new_measure_is_known_with_its_direction():
    for name in ("f1m", "predicted_cardinality", "true_cardinality", "cardinality_error"):
        assert name in MEASURES
    assert LOWER_IS_BETTER == {"hamming_loss", "cardinality_error"}
    assert DESCRIPTIVE == {"predicted_cardinality", "true_cardinality"}
    assert not DESCRIPTIVE & LOWER_IS_BETTER


@pytest.mark.parametrize("zd", [0, 1])
def test_f1m_is_the_harmonic_mean_of_scikit_learns_macro_precision_and_recall(zd):
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    for _ in range(20):
        Y = (rng.random((30, 5)) < 0.2).astype(np.uint8)
        P = (rng.random((30, 5)) < 0.3).astype(np.uint8)
        p = metrics.precision_score(Y, P, average="macro", zero_division=zd)
        r = metrics.recall_score(Y, P, average="macro", zero_division=zd)
        expected = 2 * p * r / (p + r) if p + r else 0.0
        assert f1m(confusion_counts(Y, P), zero_division=zd) == pytest.approx(expected)
