"""Measures, 0/0 conventions, windows and stored results (mlsom.evaluation; protocol.md 3.1-3.3)."""

import json
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from mlsom.evaluation import (
    MEASURES,
    StreamEvaluation,
    average_curves,
    compute_measure,
    confusion_counts,
    evaluate_predictions,
    example_accuracy,
    example_counts,
    example_f1,
    example_precision,
    example_recall,
    hamming_loss,
    macro_f1,
    macro_precision,
    macro_recall,
    merge_example_counts,
    micro_f1,
    micro_precision,
    micro_recall,
    multilabel_scores,
    subset_accuracy,
    window_edges,
)

# our convention -> scikit-learn's zero_division
SHARED = [(1, 1.0), (0, 0.0), ("exclude", np.nan)]
CONVENTIONS = (1, 0, "exclude", "mulan")


def random_pairs(n_cases, seed):
    """Random (Y, Y_hat) pairs with all-zero columns, empty rows and all-empty matrices."""
    rng = np.random.default_rng(seed)
    for k in range(n_cases):
        n, L = int(rng.integers(1, 25)), int(rng.integers(2, 7))  # L = 1 is binary to sklearn
        Y = rng.random((n, L)) < rng.uniform(0.05, 0.7)
        if rng.random() < 0.5:  # predictions close to the truth
            Y_hat = Y ^ (rng.random((n, L)) < rng.uniform(0.0, 0.3))
        else:
            Y_hat = rng.random((n, L)) < rng.uniform(0.05, 0.7)
        if rng.random() < 0.5:
            Y[:, rng.integers(L)] = False  # a label absent from the window
        if rng.random() < 0.5:
            Y_hat[:, rng.integers(L)] = False  # a label never predicted
        if rng.random() < 0.5:
            Y[rng.random(n) < 0.3] = False  # instances without a label
        if rng.random() < 0.5:
            Y_hat[rng.random(n) < 0.3] = False  # instances with nothing predicted
        if k % 15 == 0:
            Y[:] = False
        if k % 30 == 0:
            Y_hat[:] = False
        yield Y.astype(np.uint8), Y_hat.astype(np.uint8)


PAIRS = list(random_pairs(100, seed=0))


def sk(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True)


# ------------------------------------------------------------------------ agreement with sklearn


@pytest.mark.parametrize(("ours", "theirs"), SHARED)
def test_label_based_measures_match_sklearn(ours, theirs):
    for Y, P in PAIRS:
        c = confusion_counts(Y, P)
        for fn, skfn in (
            (macro_f1, skm.f1_score),
            (macro_precision, skm.precision_score),
            (macro_recall, skm.recall_score),
        ):
            close(fn(c, zero_division=ours), sk(skfn, Y, P, average="macro", zero_division=theirs))
        for fn, skfn in (
            (micro_f1, skm.f1_score),
            (micro_precision, skm.precision_score),
            (micro_recall, skm.recall_score),
        ):
            close(fn(c, zero_division=ours), sk(skfn, Y, P, average="micro", zero_division=theirs))


@pytest.mark.parametrize(("ours", "theirs"), SHARED)
def test_example_based_measures_match_sklearn(ours, theirs):
    for Y, P in PAIRS:
        for fn, skfn in (
            (example_f1, skm.f1_score),
            (example_precision, skm.precision_score),
            (example_recall, skm.recall_score),
        ):
            close(
                fn(Y, P, zero_division=ours),
                sk(skfn, Y, P, average="samples", zero_division=theirs),
            )
        if ours != "exclude":  # jaccard_score has no NaN convention
            close(
                example_accuracy(Y, P, zero_division=ours),
                sk(skm.jaccard_score, Y, P, average="samples", zero_division=theirs),
            )


def test_hamming_and_subset_accuracy_match_sklearn():
    for Y, P in PAIRS:
        close(hamming_loss(Y, P), skm.hamming_loss(Y, P))
        close(subset_accuracy(Y, P), skm.accuracy_score(Y, P))
        c, ex = confusion_counts(Y, P), example_counts(Y, P)
        close(compute_measure("hamming_loss", c, ex), skm.hamming_loss(Y, P))
        close(compute_measure("subset_accuracy", c, ex), skm.accuracy_score(Y, P))


def test_excluded_jaccard_averages_only_the_defined_instances():
    for Y, P in PAIRS:
        inter = (Y & P).sum(1)
        union = (Y | P).sum(1)
        kept = union > 0
        expected = (inter[kept] / union[kept]).mean() if kept.any() else np.nan
        close(example_accuracy(Y, P, zero_division="exclude"), expected)


def _mulan_ratio(num, den, both_empty):
    """Mulan's InformationRetrievalMeasures rule: 1 if both sets are empty, 0 if one is."""
    if den == 0:
        return 1.0 if both_empty else 0.0
    return num / den


def test_mulan_convention_follows_mulans_rule():
    for Y, P in PAIRS:
        c = confusion_counts(Y, P)
        f = [_mulan_ratio(2 * tp, 2 * tp + fp + fn, True) for tp, fp, fn, _ in c]
        p = [_mulan_ratio(tp, tp + fp, tp + fp + fn == 0) for tp, fp, fn, _ in c]
        r = [_mulan_ratio(tp, tp + fn, tp + fp + fn == 0) for tp, fp, fn, _ in c]
        close(macro_f1(c, "mulan"), np.mean(f))
        close(macro_precision(c, "mulan"), np.mean(p))
        close(macro_recall(c, "mulan"), np.mean(r))
        a, t, q = (Y & P).sum(1), Y.sum(1), P.sum(1)
        close(
            example_f1(Y, P, "mulan"),
            np.mean([_mulan_ratio(2 * x, y + z, True) for x, y, z in zip(a, t, q, strict=True)]),
        )
        close(
            example_precision(Y, P, "mulan"),
            np.mean([_mulan_ratio(x, z, y + z == 0) for x, y, z in zip(a, t, q, strict=True)]),
        )
        close(
            example_recall(Y, P, "mulan"),
            np.mean([_mulan_ratio(x, y, y + z == 0) for x, y, z in zip(a, t, q, strict=True)]),
        )
        # F and Jaccard: Mulan's rule is the value 1
        close(macro_f1(c, "mulan"), macro_f1(c, 1))
        close(example_accuracy(Y, P, "mulan"), example_accuracy(Y, P, 1))


def test_conventions_on_a_small_case():
    # protocol.md 3.2: truth [[1,0],[0,0]] = prediction -> 0.5 / 1.0 / 1.0
    Y = np.array([[1, 0], [0, 0]])
    c = confusion_counts(Y, Y)
    assert [macro_f1(c, z) for z in (0, 1, "exclude")] == [0.5, 1.0, 1.0]
    # a label that occurs but is never predicted: precision 0/0 with a non-empty truth
    c = confusion_counts([[1, 0]], [[0, 0]])
    assert macro_precision(c, 1) == 1.0 and macro_precision(c, 0) == 0.0
    assert macro_precision(c, "mulan") == 0.5  # label 0 -> 0, label 1 (both empty) -> 1
    assert np.isnan(macro_precision(c, "exclude"))
    assert macro_recall(c, "exclude") == 0.0  # label 0 recall 0, label 1 excluded


def test_zero_division_values():
    c = confusion_counts([[1, 0]], [[1, 0]])
    assert macro_f1(c, np.nan) == macro_f1(c, "exclude") == 1.0
    assert macro_f1(c, 1.0) == macro_f1(c, 1) == 1.0
    assert macro_f1(c, 0.0) == 0.5
    for bad in (0.5, "warn", None, True, 2):
        with pytest.raises(ValueError, match="zero_division"):
            macro_f1(c, bad)


def test_compute_measure_needs_the_right_counts():
    with pytest.raises(ValueError, match="confusion counts"):
        compute_measure("macro_f1", ex_counts=np.zeros((0, 4)))
    with pytest.raises(ValueError, match="example counts"):
        compute_measure("example_f1", np.zeros((2, 4)))
    with pytest.raises(ValueError, match="unknown measure"):
        compute_measure("accuracy", np.zeros((2, 4)))


def test_stored_counts_reproduce_every_measure():
    for Y, P in PAIRS[:60]:
        c, ex = confusion_counts(Y, P), example_counts(Y, P)
        assert ex[:, 3].sum() == len(Y)
        for zd in CONVENTIONS:
            scores = multilabel_scores(Y, P, zero_division=zd)
            assert set(scores) == set(MEASURES)
            close(scores["macro_f1"], macro_f1(c, zd))
            close(scores["micro_recall"], micro_recall(c, zd))
            close(scores["example_f1"], example_f1(Y, P, zd))
            close(scores["example_accuracy"], example_accuracy(Y, P, zd))
            close(scores["subset_accuracy"], subset_accuracy(Y, P))
            close(scores["hamming_loss"], hamming_loss(Y, P))
            for m in MEASURES:
                close(compute_measure(m, c, ex, zero_division=zd), scores[m])


def test_example_counts_merge_like_the_union_of_rows():
    rng = np.random.default_rng(1)
    Y = (rng.random((200, 6)) < 0.3).astype(np.uint8)
    P = (rng.random((200, 6)) < 0.3).astype(np.uint8)
    parts = [example_counts(Y[a:b], P[a:b]) for a, b in ((0, 17), (17, 120), (120, 200))]
    np.testing.assert_array_equal(merge_example_counts(*parts), example_counts(Y, P))
    assert merge_example_counts().shape == (0, 4)


# --------------------------------------------------------------------------------------- windows


@pytest.mark.parametrize(("n", "W"), [(10, 4), (50, 50), (51, 50), (85_976, 50), (1001, 7)])
def test_windows_partition_the_stream(n, W):
    edges = window_edges(n, W)
    assert len(edges) == W + 1 and edges[0] == 0 and edges[-1] == n
    np.testing.assert_array_equal(edges, [w * n // W for w in range(W + 1)])
    sizes = np.diff(edges)
    assert sizes.min() >= n // W and sizes.max() <= -(-n // W) and sizes.min() >= 1
    covered = np.concatenate([np.arange(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)])
    np.testing.assert_array_equal(covered, np.arange(n))


def test_window_sizes_of_the_paper_stream():
    # protocol.md 3.3: 5C-2A, |T| = 85,976 -> windows of 1,719-1,720 rows
    assert set(np.diff(window_edges(85_976, 50)).tolist()) == {1719, 1720}


def test_window_edges_errors():
    with pytest.raises(ValueError, match="larger than the test stream"):
        window_edges(10, 11)
    with pytest.raises(ValueError):
        window_edges(10, 0)
    with pytest.raises(TypeError):
        window_edges(10.0, 2)


@pytest.fixture(scope="module")
def stream_pair():
    rng = np.random.default_rng(7)
    n, L = 997, 6
    Y = (rng.random((n, L)) < [0.4, 0.2, 0.05, 0.01, 0.0, 0.3]).astype(np.uint8)
    P = Y ^ (rng.random((n, L)) < 0.15)
    P[rng.random(n) < 0.1] = 0
    return Y, P.astype(np.uint8)


def test_windows_store_the_counts_of_their_rows(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, n_windows=23)
    edges = window_edges(len(Y), 23)
    np.testing.assert_array_equal(res.window_edges, edges)
    for w in range(23):
        a, b = edges[w], edges[w + 1]
        np.testing.assert_array_equal(res.label_counts[w], confusion_counts(Y[a:b], P[a:b]))
        np.testing.assert_array_equal(res.example_counts[w], example_counts(Y[a:b], P[a:b]))
    np.testing.assert_array_equal(res.label_counts.sum(0), confusion_counts(Y, P))


@pytest.mark.parametrize("zd", CONVENTIONS)
def test_curves_equal_direct_computation(stream_pair, zd):
    Y, P = stream_pair
    W = 12
    res = evaluate_predictions(Y, P, n_windows=W, zero_division=zd)
    edges = res.window_edges
    whole = multilabel_scores(Y, P, zero_division=zd)
    for m in MEASURES:
        cum = res.curve(m, cumulative=True)
        per = res.curve(m, cumulative=False)
        assert cum.shape == per.shape == (W,)
        close(cum[-1], whole[m])  # the cumulative curve ends at the whole-stream value
        close(res.total(m), whole[m])
        close(per[0], cum[0])
        for w in range(W):
            a, b = edges[w], edges[w + 1]
            close(per[w], multilabel_scores(Y[a:b], P[a:b], measures=[m], zero_division=zd)[m])
            close(cum[w], multilabel_scores(Y[:b], P[:b], measures=[m], zero_division=zd)[m])


def test_recorded_convention_is_the_default(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, n_windows=40, zero_division=0)
    np.testing.assert_array_equal(
        res.curve("macro_f1", cumulative=False),
        res.curve("macro_f1", cumulative=False, zero_division=0),
    )
    # label 4 never occurs and is almost never predicted: small windows see 0/0
    assert not np.array_equal(
        res.curve("macro_f1", cumulative=False),
        res.curve("macro_f1", cumulative=False, zero_division=1),
    )


def test_mean_summary_and_window_counts(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, n_windows=10)
    close(res.mean("micro_f1"), res.curve("micro_f1").mean())
    close(res.mean("macro_f1", cumulative=False), res.curve("macro_f1", cumulative=False).mean())
    summary = res.summary(zero_division=0)
    assert set(summary) == set(MEASURES)
    close(summary["example_f1"], res.mean("example_f1", zero_division=0))
    c, ex = res.window_counts(4, cumulative=True)
    b = res.window_edges[5]
    np.testing.assert_array_equal(c, confusion_counts(Y[:b], P[:b]))
    np.testing.assert_array_equal(ex, example_counts(Y[:b], P[:b]))
    c, ex = res.window_counts(-1)
    a = res.window_edges[-2]
    np.testing.assert_array_equal(c, confusion_counts(Y[a:], P[a:]))


def test_mean_leaves_out_undefined_windows():
    Y = np.zeros((4, 1), np.uint8)
    Y[2:] = 1
    res = evaluate_predictions(Y, Y, n_windows=2, zero_division="exclude")
    per = res.curve("macro_f1", cumulative=False)
    assert np.isnan(per[0]) and per[1] == 1.0
    assert res.mean("macro_f1", cumulative=False) == 1.0


def test_fixed_size_windows(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, window_size=100)
    assert res.n_windows == 10 and res.window_sizes.tolist() == [100] * 9 + [97]
    close(res.total("macro_f1"), macro_f1(confusion_counts(Y, P)))


def test_round_trip_through_json(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(
        Y,
        P,
        n_windows=9,
        zero_division="mulan",
        keep_predictions=True,
        method="m",
        kind="online",
        params={"a": 1, "b": (1, 2), "g": np.random.default_rng(0)},
        stream="s",
        seed=3,
        label_names=list("abcdef"),
        n_train=50,
        fit_seconds=0.5,
        stream_seconds=2.0,
        chunk_size=100,
        info={"x": np.float64(1.5)},
    )
    text = json.dumps(res.to_dict(), allow_nan=False)
    back = StreamEvaluation.from_dict(json.loads(text))
    assert back.to_dict() == json.loads(text)
    np.testing.assert_array_equal(back.window_edges, res.window_edges)
    np.testing.assert_array_equal(back.label_counts, res.label_counts)
    for a, b in zip(back.example_counts, res.example_counts, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(back.unpacked_predictions(), P)
    for m in MEASURES:
        for zd in CONVENTIONS:
            for cumulative in (True, False):
                np.testing.assert_array_equal(
                    back.curve(m, cumulative, zd), res.curve(m, cumulative, zd)
                )
    assert back.zero_division == "mulan" and back.seed == 3 and back.stream == "s"
    assert back.label_names == tuple("abcdef") and back.params["b"] == [1, 2]
    assert isinstance(back.params["g"], str)  # not JSON: kept as its repr
    assert back.instances_per_second == res.instances_per_second == len(Y) / 2.0
    data = res.to_dict()
    assert data["version"] == res.version and data["n_test"] == len(Y)


def test_round_trip_without_predictions(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, n_windows=5)
    back = StreamEvaluation.from_dict(json.loads(json.dumps(res.to_dict(), allow_nan=False)))
    assert back.predictions is None
    with pytest.raises(ValueError, match="not kept"):
        back.unpacked_predictions()
    assert np.isnan(back.instances_per_second)
    with pytest.raises(ValueError, match="format"):
        StreamEvaluation.from_dict({**res.to_dict(), "format": "other/9"})


def test_kept_predictions_rewindow(stream_pair):
    Y, P = stream_pair
    res = evaluate_predictions(Y, P, n_windows=50, keep_predictions=True)
    again = evaluate_predictions(Y, res.unpacked_predictions(), n_windows=7)
    close(again.total("example_f1"), res.total("example_f1"))
    assert again.n_windows == 7


def test_result_validates_its_tables():
    with pytest.raises(ValueError, match="label_counts"):
        StreamEvaluation([0, 5, 10], np.zeros((3, 2, 4)), [np.zeros((0, 4))] * 2)
    with pytest.raises(ValueError, match="example_counts"):
        StreamEvaluation([0, 5, 10], np.zeros((2, 2, 4)), [np.zeros((0, 4))])
    with pytest.raises(ValueError, match="zero_division"):
        StreamEvaluation(
            [0, 5, 10], np.zeros((2, 2, 4)), [np.zeros((0, 4))] * 2, zero_division="warn"
        )


def test_average_curves_over_runs(stream_pair):
    Y, P = stream_pair
    runs = [
        evaluate_predictions(Y, Y ^ (np.random.default_rng(s).random(Y.shape) < 0.2), n_windows=8)
        for s in range(3)
    ]
    expected = np.mean([r.curve("micro_f1", cumulative=False) for r in runs], axis=0)
    close(average_curves(runs, "micro_f1", cumulative=False), expected)
    with pytest.raises(ValueError, match="same windows"):
        average_curves([runs[0], evaluate_predictions(Y, P, n_windows=9)])
    with pytest.raises(ValueError, match="no result"):
        average_curves([])


# ----------------------------------------------------------------------- stored results, checked


def _stored(stream_pair, **kwargs):
    Y, P = stream_pair
    res = evaluate_predictions(Y[:100], P[:100], n_windows=4, **kwargs)
    return json.loads(json.dumps(res.to_dict(), allow_nan=False))


def _add_to_tp(data, amount):
    for window in data["label_counts"]:
        for row in window:
            row[0] += amount


def _move_one_instance(data):
    # two rows of one window's histogram: the instances still add up to the window's size, but
    # no longer to the labels' counts
    rows = data["example_counts"][1]
    rows[0][3] -= 1
    rows[-1][3] += 1


def _swap_fp_fn(data):
    for window in data["label_counts"]:
        for row in window:
            row[1], row[2] = row[2], row[1]


def _set(key, value):
    return lambda data: data.__setitem__(key, value)


TAMPERED = [
    # (what, change of the stored dict, message)
    (
        "intersection above the sets",
        lambda d: d["example_counts"].__setitem__(0, [[5, 1, 1, 25]]),
        r"example counts: the row \[5, 1, 1, 25\] has \|Y ∩ Ŷ\| = 5 above \|Y\| = 1",
    ),
    (
        "union above the labels",
        lambda d: d["example_counts"].__setitem__(0, [[0, 4, 3, 25]]),
        r"example_counts of window 0 hold the row \[0, 4, 3, 25\]: .*\|Y ∪ Ŷ\| <= n_labels",
    ),
    (
        "instances fewer than rows",
        lambda d: d["example_counts"].__setitem__(0, [[0, 0, 0, 24]]),
        r"example_counts of window 0 count 24 instances, but the window has 25 rows",
    ),
    (
        "a million more TP",
        lambda d: _add_to_tp(d, 10**6),
        r"label_counts of window 0, label 0 add up to 10000\d\d \(TP \+ FP \+ FN \+ TN\), but "
        r"the window has 25 rows",
    ),
    ("FP and FN swapped", _swap_fp_fn, r"example_counts and label_counts of window 0 disagree"),
    (
        "an instance moved",
        _move_one_instance,
        r"example_counts and label_counts of window 1 disagree: the instances' ",
    ),
    (
        "fractional count",
        lambda d: d["label_counts"][0][0].__setitem__(0, d["label_counts"][0][0][0] + 0.7),
        r"label_counts must be whole numbers, found \d+\.7",
    ),
    (
        "negative count",
        lambda d: d["label_counts"][0][0].__setitem__(0, -0.5),
        r"label_counts must be whole numbers, found -0\.5",
    ),
    (
        "count beyond 2**53",
        lambda d: d["example_counts"][0][0].__setitem__(3, 2**60),
        r"example_counts\[0\] must be <= 2\*\*53",
    ),
    (
        "count beyond int64",
        lambda d: d["example_counts"][0][0].__setitem__(3, 2**70),
        r"example_counts\[0\] must hold whole numbers in \[0, 2\*\*53\], found 1180591620717",
    ),
    (
        "count true",
        lambda d: d.__setitem__("window_edges", [False, True]),
        r"window_edges must hold whole numbers in \[0, 2\*\*53\], found False",
    ),
    ("n_test not the windows'", _set("n_test", 50), r"n_test=50, but window_edges end at row 100"),
    ("n_labels infinite", _set("n_labels", float("inf")), r"n_labels must be a whole number"),
    ("n_labels fractional", _set("n_labels", 4.5), r"n_labels must be a whole number.* 4\.5"),
    ("n_labels other", _set("n_labels", 4), r"label_counts must have shape \(4, 4, 4\)"),
    (
        "edge beyond int64",
        lambda d: d["window_edges"].__setitem__(-1, 2**70),
        r"window_edges must hold whole numbers in \[0, 2\*\*53\], found 1180591620717411303424",
    ),
    (
        "edges with no window",
        _set("window_edges", [0]),
        r"window_edges must be a list of at least 2 row offsets",
    ),
    (
        "uneven rows",
        _set("label_counts", [[1, 2], [3]]),
        r"label_counts must be a table of counts: nested lists of numbers, of equal lengths",
    ),
    ("windows missing", _set("example_counts", "abc"), r"example_counts must be a list, got str"),
    (
        "example counts of 3 columns",
        lambda d: d["example_counts"].__setitem__(0, [[0, 0, 25]]),
        r"example_counts\[0\] must have shape \(n_rows, 4\), got \(1, 3\)",
    ),
    (
        "predictions cut",
        lambda d: d.__setitem__("predictions", d["predictions"][:-4]),
        r"predictions hold 99 bytes, but 100 rows \(window_edges\) of 6 labels take 100",
    ),
    ("predictions not base64", _set("predictions", "!!!!"), r"predictions are not base64 text"),
    ("predictions a number", _set("predictions", 5), r"predictions must be base64 text, got int"),
    ("stream_seconds text", _set("stream_seconds", "x"), r"stream_seconds must be a number"),
    ("fit_seconds negative", _set("fit_seconds", -1.0), r"fit_seconds must be a finite number"),
    ("n_train negative", _set("n_train", -1), r"n_train must be a whole number .* got -1"),
    ("chunk_size text", _set("chunk_size", "10"), r"chunk_size must be an integer, got '10'"),
    ("params a list", _set("params", [["a", 1]]), r"params must be a dict, got list"),
    ("stream a number", _set("stream", 3), r"stream must be a string, got 3"),
    ("label_names a text", _set("label_names", "abcdef"), r"label_names must be a list of strings"),
]


@pytest.mark.parametrize("change, match", [t[1:] for t in TAMPERED], ids=[t[0] for t in TAMPERED])
def test_a_tampered_stored_result_is_refused(stream_pair, change, match):
    data = _stored(stream_pair, keep_predictions=True)
    StreamEvaluation.from_dict(json.loads(json.dumps(data)))  # as stored: accepted
    change(data)
    with pytest.raises(ValueError, match=r"data is not a valid stored StreamEvaluation: " + match):
        StreamEvaluation.from_dict(data)


def test_stored_results_of_every_shape_are_accepted(stream_pair):
    Y, P = stream_pair
    cases = [
        evaluate_predictions(np.zeros((10, 0)), np.zeros((10, 0)), n_windows=3),  # no label
        evaluate_predictions(Y[:1], P[:1], n_windows=1, keep_predictions=True),  # one row
        evaluate_predictions(Y, P, window_size=100),  # a shorter last window
        evaluate_predictions(Y, P, n_windows=len(Y)),  # one row per window
        evaluate_predictions(Y, np.ones_like(P), n_windows=3),  # every label predicted
    ]
    for res in cases:
        data = json.loads(json.dumps(res.to_dict(), allow_nan=False))
        assert StreamEvaluation.from_dict(data).to_dict() == data
    # whole numbers written as floats are read as the integers they are
    data = _stored(stream_pair)
    data["n_labels"] = float(data["n_labels"])
    data["window_edges"] = [float(e) for e in data["window_edges"]]
    back = StreamEvaluation.from_dict(data)
    assert back.n_labels == 6 and back.window_edges.dtype == np.int64


def test_result_checks_its_tables_against_the_windows():
    one = np.array([[[0, 0, 0, 5]]])  # one label, never there nor predicted, in a 5-row window
    with pytest.raises(ValueError, match=r"label 0 add up to 6 .* the window has 5 rows"):
        StreamEvaluation([0, 5], [[[1, 0, 0, 5]]], [np.array([[0, 0, 0, 5]])])
    with pytest.raises(ValueError, match=r"the row \[1, 1, 0, 5\] has \|Y ∩ Ŷ\| = 1 above"):
        StreamEvaluation([0, 5], one, [np.array([[1, 1, 0, 5]])])
    with pytest.raises(ValueError, match=r"example_counts of window 0 count 4 instances"):
        StreamEvaluation([0, 5], one, [np.array([[0, 0, 0, 4]])])
    with pytest.raises(ValueError, match=r"the instances' \|Ŷ\| add up to 5, the labels' TP \+ FP"):
        StreamEvaluation([0, 5], one, [np.array([[0, 0, 1, 5]])])
    # instance counts whose sum exceeds int64: refused, with the exact sum
    with pytest.raises(ValueError, match=rf"count {2000 * 2**53} instances, but the window has 5"):
        StreamEvaluation([0, 5], one, [np.full((2000, 4), [0, 0, 0, 2**53])])
    # sums beyond int64 on both sides, as Python integers: consistent tables are accepted
    n, L = 2**53, 1024
    big = StreamEvaluation([0, n], np.tile([0, 0, 0, n], (1, L, 1)), [np.array([[0, 0, 0, n]])])
    assert big.total("macro_f1") == 1.0
    with pytest.raises(ValueError, match=r"the instances' \|Ŷ\| add up to 9007199254740992"):
        StreamEvaluation([0, n], np.tile([0, 0, 0, n], (1, L, 1)), [np.array([[0, 0, 1, n]])])


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: compute_measure("example_f1", ex_counts=[[5, 1, 1, 1]]),
            r"the row \[5, 1, 1, 1\] has \|Y ∩ Ŷ\| = 5 above",
        ),
        (
            lambda: compute_measure("hamming_loss", [[0, 0, 0, 1], [0, 5, 5, 0]]),
            r"label 1 counts 10 instances \(TP \+ FP \+ FN \+ TN\), label 0 1",
        ),
        (
            lambda: merge_example_counts([[1, 1, 1, 2**53]], [[1, 1, 1, 1]]),
            r"would exceed 2\*\*53 instances",
        ),
    ],
)
def test_counts_that_no_predictions_give_are_refused(call, match):
    """An example F of 5.0 and a Hamming loss of 5.0 came out of such tables."""
    with pytest.raises(ValueError, match=match):
        call()


def test_merge_adds_the_counts_of_equal_triples_up_to_the_limit():
    merged = merge_example_counts([[1, 1, 1, 2**52 + 1]], [[1, 1, 1, 2**52 - 1]], [[0, 0, 0, 3]])
    assert merged.tolist() == [[0, 0, 0, 3], [1, 1, 1, 2**53]]


@pytest.mark.parametrize(
    "fields, exc, match",
    [
        ({"n_train": -5}, ValueError, r"n_train must be a whole number in \[0, 2\*\*53\]"),
        ({"stream_seconds": -1.0}, ValueError, r"stream_seconds must be a finite number"),
        ({"fit_seconds": float("nan")}, ValueError, r"fit_seconds must be a finite number"),
        ({"method": 5}, TypeError, r"method must be a string, got 5"),
        ({"label_names": "ab"}, TypeError, r"label_names must be a sequence of strings"),
        ({"label_names": ("a",)}, ValueError, r"label_names holds 1 names for 2 labels"),
        (
            {"predictions": np.zeros((7, 1), np.uint8)},
            ValueError,
            r"predictions must be the packed 0/1 rows \(uint8 of shape \(4, 1\)\)",
        ),
    ],
)
def test_a_result_is_checked_as_made_as_when_read_back(fields, exc, match):
    """These were accepted by the constructor, and its stored form then could not be read."""
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.uint8)
    made = evaluate_predictions(Y, Y, n_windows=1)
    with pytest.raises(exc, match=match):
        StreamEvaluation(made.window_edges, made.label_counts, made.example_counts, **fields)
