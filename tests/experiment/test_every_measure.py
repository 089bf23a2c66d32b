"""Every measure in every report of ``mlsom experiment``: results.csv, curves.csv, summary.json,
the statistics per measure (ranked in the measure's direction), the plots' titles and the printed
table; upper bounds and references marked."""

import csv
import json

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mlsom import experiment  # noqa: E402
from mlsom._cli import _report_experiment  # noqa: E402
from mlsom.evaluation import LOWER_IS_BETTER, StreamEvaluation, evaluate_predictions  # noqa: E402
from mlsom.stats import average_ranks  # noqa: E402
from tests.helpers.experiment_results import capture_figures, fabricated_run  # noqa: E402

STREAMS = ["MOA-Spher-5C-2A", "MOA-Spher-3C-2A", "Mult-Non-Spher-HP"]
N, L = 120, 4


def _labels(i):
    rng = np.random.default_rng(i)
    Y = (rng.random((N, L)) < 0.3).astype(np.uint8)
    Y[np.arange(N), rng.integers(0, L, N)] = 1
    return Y


def _predictions(method, Y, i):
    """BR-HT predicts every label right; ML-kNN the true labels and the first label for every
    instance (too many); BR-J48 the true labels with a few cells flipped (more on each stream)."""
    if method == "BR-HT":
        return Y.copy()
    if method == "ML-kNN":
        P = Y.copy()
        P[:, 0] = 1
        return P
    P = Y.copy().reshape(-1)
    P[np.random.default_rng(9).permutation(P.size)[: 20 + 10 * i]] ^= 1
    return P.reshape(Y.shape)


KINDS = {"BR-HT": "incremental", "ML-kNN": "batch", "BR-J48": "batch", "every-label": "batch"}


def _result(stream, method, Y, P):
    run = fabricated_run(stream, method)
    ev = evaluate_predictions(Y, P, n_windows=4, method=run.label, kind=KINDS[method])
    data = ev.to_dict()
    data["run"] = {**run.identity(), "label": run.label, "key": run.key, "wall_seconds": 0.1}
    return data


def _results():
    results = []
    for i, stream in enumerate(STREAMS):
        Y = _labels(i)
        for method in ("BR-HT", "ML-kNN", "BR-J48"):
            results.append(_result(stream, method, Y, _predictions(method, Y, i)))
        results.append(_result(stream, "every-label", Y, np.ones_like(Y)))
    return results


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    results = _results()
    summary = experiment._report(results, out, profile="quick", zero_division=1, plots=False)
    return results, summary, out


def test_results_csv_holds_every_measure_of_each_run(report):
    results, _, out = report
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(results)
    for r, row in zip(results, rows, strict=True):
        ev = StreamEvaluation.from_dict({k: v for k, v in r.items() if k != "run"})
        for m in experiment.REPORT_MEASURES:
            assert float(row[f"{m}_mean"]) == pytest.approx(ev.mean(m)), m
            assert float(row[f"{m}_final"]) == pytest.approx(ev.total(m)), m
        assert row["upper_bound"] == str(r["run"]["method"] == "BR-HT")
        assert row["reference"] == str(r["run"]["method"] == "every-label")
    # every-label predicts all 4 labels: its predicted cardinality is 4, above the true one
    every = [row for row in rows if row["method"] == "every-label"]
    assert all(float(row["predicted_cardinality_final"]) == 4.0 for row in every)
    assert all(float(row["true_cardinality_final"]) < 4.0 for row in every)
    with open(out / "curves.csv") as f:
        curve_rows = list(csv.DictReader(f))
    assert len(curve_rows) == 4 * len(results)
    for m in experiment.REPORT_MEASURES:
        assert f"{m}_cumulative" in curve_rows[0], m
    first = StreamEvaluation.from_dict({k: v for k, v in results[0].items() if k != "run"})
    values = [float(row["hamming_loss_cumulative"]) for row in curve_rows[:4]]
    np.testing.assert_allclose(values, first.curve("hamming_loss"))


def test_summary_holds_every_measure_and_its_statistics(report):
    _, summary, _ = report
    assert json.loads(json.dumps(summary)) == summary  # as summary.json stores it
    assert list(summary["measures"]) == list(experiment.REPORT_MEASURES)
    assert summary["lower_is_better"] == ["hamming_loss", "cardinality_error"]
    assert summary["upper_bounds"] == ["BR-HT"] and summary["references"] == ["every-label"]
    for m in experiment.REPORT_MEASURES:
        by_stream = summary["mean_by_measure"][m]
        assert set(by_stream) == set(STREAMS)
        assert set(by_stream[STREAMS[0]]) == {"BR-HT", "ML-kNN", "BR-J48", "every-label"}
    assert summary["mean_by_measure"]["macro_f1"] == summary["mean_macro_f1"]
    assert set(summary["statistics_by_measure"]) == set(experiment.RANKED_MEASURES)
    assert summary["statistics"] == summary["statistics_by_measure"]["macro_f1"]
    assert summary["statistics"]["methods"] == sorted(
        ["BR-HT (upper bound)", "ML-kNN", "BR-J48", "every-label (reference)"]
    )


@pytest.mark.parametrize("measure", ["hamming_loss", "cardinality_error", "macro_f1"])
def test_ranks_follow_the_measures_direction(report, measure):
    """Rank 1 is the best: the lowest Hamming loss and cardinality error, the highest macro F.
    BR-HT predicts every label right, so it is first on each."""
    _, summary, _ = report
    st = summary["statistics_by_measure"][measure]
    ranks = dict(zip(st["methods"], st["mean_ranks"], strict=True))
    assert ranks["BR-HT (upper bound)"] == 1.0
    # the ranks of the scores themselves, in the measure's direction
    means = summary["mean_by_measure"][measure]
    labels = [m.replace(" (upper bound)", "").replace(" (reference)", "") for m in st["methods"]]
    scores = np.array([[means[s][m] for m in labels] for s in st["streams"]])
    lower = measure in LOWER_IS_BETTER
    np.testing.assert_allclose(st["mean_ranks"], average_ranks(scores, higher_is_better=not lower))
    assert st["higher_is_better"] is (not lower)
    if lower:  # every-label makes the most errors and predicts the most labels
        assert ranks["every-label (reference)"] == len(ranks)


def test_each_measure_has_its_titled_cd_diagram_and_heat_map(tmp_path, monkeypatch):
    saved = capture_figures(monkeypatch)
    monkeypatch.setattr(experiment, "PLOTTED_MEASURES", ("cardinality",))
    experiment._report(_results(), tmp_path, profile="quick", zero_division=1, plots=True)
    for m in experiment.RANKED_MEASURES:
        suffix = "" if m == "macro_f1" else f"-{m}"
        name = experiment._measure_name(m)
        for plot in ("cd", "nemenyi"):
            title = saved[f"{plot}{suffix}.png"].axes[0].get_title()
            assert f"cumulative {name} (mean over windows" in title, (plot, m)
            assert "3 streams" in title and "α = 0.05" in title, title
            assert ("lower is better" in title) is (m in LOWER_IS_BETTER), title
    # the cardinality panel: each method's predicted cardinality and the true one
    for stream in STREAMS:
        ax = saved[f"curves-{stream}-cardinality.png"].axes[0]
        lines = {ln.get_label(): ln.get_ydata() for ln in ax.get_lines()}
        assert set(lines) == {
            "BR-HT (upper bound)",
            "ML-kNN",
            "BR-J48",
            "every-label (reference)",
            experiment.TRUE_CARDINALITY,
        }
        np.testing.assert_allclose(lines["every-label (reference)"], 4.0)
        np.testing.assert_allclose(lines["BR-HT (upper bound)"], lines["true cardinality"])


def test_the_printed_table_gives_every_measure_within_100_columns(report, capsys):
    _, summary, _ = report
    summary = dict(summary, n_runs=12, n_cached=0, n_run_now=12, wall_seconds=1.0)
    summary["estimated_paper_seconds"] = {
        "seconds": 60.0,
        "runs": 3,
        "workers": 1,
        "methods_measured": [],
    }
    _report_experiment(summary, "out")
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines[:-1]), max(lines[:-1], key=len)
    header = next(line for line in lines if line.strip().startswith(STREAMS[0]))
    assert header.split()[1:] == ["macro", "F", "micro", "F", "example", "F", "Hamming"] + [
        "cardinality"
    ]
    means = summary["mean_by_measure"]
    row = next(line for line in lines if line.strip().startswith("every-label (reference)"))
    s = STREAMS[0]
    assert row.split()[2:] == [
        f"{means['macro_f1'][s]['every-label']:.4f}",
        f"{means['micro_f1'][s]['every-label']:.4f}",
        f"{means['example_f1'][s]['every-label']:.4f}",
        f"{means['hamming_loss'][s]['every-label']:.4f}",
        "4.00",
        "/",
        f"{means['true_cardinality'][s]['every-label']:.2f}",
    ]
    assert any(line.strip().startswith("BR-HT (upper bound)") for line in lines)
    # the ranks: best first by macro F, a column per measure, the Friedman p-values below
    i = lines.index("mean ranks over 3 streams (1 = best):")
    assert lines[i + 1].split() == ["macro", "F", "micro", "F", "example", "F", "Hamming"] + [
        "card.",
        "error",
    ]
    first = lines[i + 2].split()
    assert first[:3] == ["BR-HT", "(upper", "bound)"] and first[3:] == ["1.00"] * 5
    assert lines[i + 6].split()[:2] == ["Friedman", "p"]
    assert "(upper bound): learns the true labels of the test stream" in lines


def test_a_stream_where_a_measure_is_undefined_is_left_out_of_its_statistics(tmp_path):
    """With zero_division="exclude", macro F is undefined on a stream where no label occurs and
    none is predicted: its statistics rank the other streams; the Hamming loss, defined there,
    ranks all three."""
    results = []
    for i, stream in enumerate(STREAMS):
        Y = _labels(i) if i < 2 else np.zeros((N, L), np.uint8)
        for method in ("BR-HT", "BR-J48"):
            results.append(_result(stream, method, Y, Y if method == "BR-HT" else Y * 0))
        results.append(_result(stream, "every-label", Y, np.ones_like(Y)))
    summary = experiment._report(
        results, tmp_path, profile="quick", zero_division="exclude", plots=False
    )
    assert np.isnan(summary["mean_by_measure"]["macro_f1"][STREAMS[2]]["BR-HT"])
    assert summary["statistics"]["streams"] == sorted(STREAMS[:2])
    assert summary["statistics_by_measure"]["hamming_loss"]["streams"] == sorted(STREAMS)
