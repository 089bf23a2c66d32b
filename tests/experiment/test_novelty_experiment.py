"""``mlsom experiment --novelty-streams`` (src/mlsom/_novelty_experiment.py): methods x seeds on
novelty streams, every run the same as :func:`mlsom.protocol.evaluate_novelty_stream`, the
summary the means over the seeds and the median times to detect; the options that do not apply
refused with one line, before any work."""

import json

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _novelty_experiment
from mlsom._cli import main
from mlsom._novelty_experiment import run_novelty_experiment, summarise
from mlsom.datasets import load_novelty
from mlsom.evaluation import NoveltyEvaluation, evaluate_novelty
from mlsom.protocol import evaluate_novelty_stream

STREAM = "MOA-Spher-3C-5C-2A"


def test_runs_are_the_protocol_s_and_the_summary_their_means(tmp_path):
    rows = run_novelty_experiment(
        tmp_path,
        [STREAM],
        methods=["mlsom", "every-label"],
        seeds=[0, 1],
        n_instances=10000,
        n_windows=10,
        params={"novelty": True},
        plots=False,
    )
    runs = json.loads((tmp_path / "novelty-runs.json").read_text())
    assert len(runs) == 4 and [r["seed"] for r in runs] == [0, 0, 1, 1]
    for r in runs:
        if r["method"] != "mlsom":
            continue
        ds = load_novelty(STREAM, n_instances=10000, random_state=r["seed"])
        model = SOMStreamClassifier(novelty=True, random_state=r["seed"])
        want = evaluate_novelty_stream(model, ds, n_windows=10).summary()
        assert r["f1m"] == want["f1m"] and r["time_to_detect"] == want["time_to_detect"]
    mine = [r for r in runs if r["method"] == "mlsom"]
    got = next(r for r in rows if r["method"] == "mlsom")
    assert got["f1m_appeared"] == pytest.approx(np.mean([r["f1m"]["appeared"] for r in mine]))
    assert got["seeds"] == 2
    stored = json.loads((tmp_path / "novelty-summary.json").read_text())["rows"]
    assert stored == rows


def test_median_time_to_detect_counts_never_as_never():
    rows = [
        {"stream": "s", "method": "m", "f1m": {"appeared": a, "known": a}, "unknown_rate": 0.0,
         "n_patterns": 1, "n_false_patterns": 0, "time_to_detect": {"x": t}}
        for a, t in [(0.5, 100), (0.7, None), (0.6, None)]
    ]  # fmt: skip
    (row,) = summarise(rows)
    assert row["time_to_detect"] == {"x": None} and row["detected"] == {"x": 1}
    (row,) = summarise(rows[:2] + [{**rows[0], "time_to_detect": {"x": 300}}])
    assert row["time_to_detect"] == {"x": 300.0} and row["detected"] == {"x": 2}
    assert row["f1m_appeared"] == pytest.approx(0.5666666666666667)


def test_the_command_prints_and_writes_the_summary(tmp_path, capsys):
    out = tmp_path / "exp"
    args = ["experiment", "--novelty-streams", STREAM, "--n-instances", "10000", "--windows", "5"]
    assert main([*args, "--param", "novelty=true", "--out", str(out), "--no-plots"]) == 0
    text = capsys.readouterr().out
    assert "3 stream x method results" in text and "every-label" in text and "MINAS-BR" in text
    assert (out / "novelty-summary.json").exists() and not list(out.glob("*.png"))


@pytest.mark.parametrize(
    "extra, option",
    [
        (["--streams", "MOA-Spher-5C-2A"], "--streams"),
        (["--grid-sizes", "3"], "--grid-sizes"),
        (["--label-fractions", "0.1"], "--label-fractions"),
        (["--n-jobs", "2"], "--n-jobs"),
    ],
)
def test_options_that_do_not_apply_are_refused(tmp_path, extra, option, capsys):
    out = tmp_path / "exp"
    assert main(["experiment", "--novelty-streams", STREAM, "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: ") and option in err and err.count("\n") == 1
    assert not out.exists()


def test_bad_names_are_refused_before_any_run(tmp_path, capsys):
    out = tmp_path / "exp"
    assert main(["experiment", "--novelty-streams", "nope", "--out", str(out)]) == 2
    assert "unknown novelty stream 'nope'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown method"):
        run_novelty_experiment(out, [STREAM], methods=["nope"], plots=False)
    with pytest.raises(ValueError, match="no method of the experiment"):
        run_novelty_experiment(out, [STREAM], methods=["mlsom"], params={"bad": 1}, plots=False)
    assert not (out / "novelty-runs.json").exists()


def _small(out, **kw):
    args = dict(methods=["mlsom", "every-label"], seeds=[0], n_instances=10000, n_windows=8)
    return run_novelty_experiment(out, [STREAM], **(args | kw), plots=False)


def test_a_second_run_reads_the_runs_kept_and_gives_the_same_results(tmp_path, monkeypatch):
    first = _small(tmp_path)
    files = sorted((tmp_path / "novelty-runs").glob("*.json"))
    assert len(files) == 2
    runs = json.loads((tmp_path / "novelty-runs.json").read_text())

    def never(*args, **kwargs):
        raise AssertionError("a kept run was run again")

    monkeypatch.setattr(_novelty_experiment, "evaluate_novelty_stream", never)
    assert _small(tmp_path) == first
    assert json.loads((tmp_path / "novelty-runs.json").read_text()) == runs
    monkeypatch.undo()
    # another parameter, another run (the kept ones stay)
    _small(tmp_path, params={"novelty": True})
    assert len(list((tmp_path / "novelty-runs").glob("*.json"))) == 3


def test_a_damaged_or_foreign_run_file_is_named(tmp_path):
    _small(tmp_path, methods=["every-label"])
    (path,) = (tmp_path / "novelty-runs").glob("*.json")
    record = json.loads(path.read_text())
    cases = {
        "not JSON": "{",
        "another run": json.dumps({**record, "run": {**record["run"], "seed": 5}}),
        "counts that disagree": json.dumps(
            {**record, "evaluation": {**record["evaluation"], "unknown_counts": [1] * 8}}
        ),
        "no duration": json.dumps({**record, "run": {**record["run"], "wall_seconds": -1}}),
    }
    for text in cases.values():
        path.write_text(text)
        with pytest.raises(ValueError, match=r"run file .* is damaged .*delete it and rerun"):
            _small(tmp_path, methods=["every-label"])


def test_novelty_evaluation_round_trips_through_json():
    rng = np.random.default_rng(3)
    Y = (rng.random((900, 5)) < 0.3).astype(np.uint8)
    Y[:300, 3:] = 0
    P = Y[:, [0, 1, 2, 3, 4, 4]] ^ (rng.random((900, 6)) < 0.1)
    unknown = rng.random(900) < 0.05
    res = evaluate_novelty(Y, P, known_labels=[0, 1, 2], unknown=unknown, n_windows=9)
    back = NoveltyEvaluation.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.summary() == res.summary() and back.n_patterns == 3
    for c in ("appeared", "known"):
        np.testing.assert_array_equal(back.curve("f1m", c), res.curve("f1m", c))
    np.testing.assert_array_equal(back.curve("unknown_rate"), res.curve("unknown_rate"))
    assert back.mapped_predictions is None and back.unknown is None


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("format", "other/1", "unsupported novelty evaluation format"),
        ("window_edges", [0, 500, 400, 900], "increasing row offsets"),
        ("unknown_counts", [10**6] * 9, "each within its window"),
        ("known_labels", [2, 1, 0], "increasing"),
        ("known_labels", [0, 1, 7], r"known_labels must lie in \[0, 5\)"),
        ("pattern_label", [9, -1, -1], r"pattern_label must lie in \[-1, 5\)"),
        ("pattern_window", [-1, -1], "must hold 3 entries"),
        ("label_first_row", [0, 0, 0, 10**6, 5], r"label_first_row must lie in \[-1, 900\)"),
        ("label_names", "abcde", "label_names must be a list of strings"),
        ("association", "cosine", "association must be one of"),
        ("zero_division", 2, "zero_division must be"),
        ("example_counts", [[[1, 1, 1, 1]]] * 9, "example_counts"),
        ("label_counts", [[[-1, 0, 0, 0]] * 5] * 9, "label_counts"),
    ],
)
def test_a_stored_novelty_evaluation_is_checked(field, value, match):
    rng = np.random.default_rng(3)
    Y = (rng.random((900, 5)) < 0.3).astype(np.uint8)
    Y[:300, 3:] = 0
    P = Y[:, [0, 1, 2, 3, 4, 4]] ^ (rng.random((900, 6)) < 0.1)
    data = evaluate_novelty(Y, P, known_labels=[0, 1, 2], n_windows=9).to_dict()
    data[field] = value
    with pytest.raises((TypeError, ValueError), match=match):
        NoveltyEvaluation.from_dict(data)
    with pytest.raises(TypeError, match="data must be a dict"):
        NoveltyEvaluation.from_dict([data])
