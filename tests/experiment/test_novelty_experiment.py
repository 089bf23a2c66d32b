"""``mlsom experiment --novelty-streams`` (src/mlsom/_novelty_experiment.py): methods x seeds on
novelty streams, every run the same as :func:`mlsom.protocol.evaluate_novelty_stream`, the
summary the means over the seeds and the median times to detect; the options that do not apply
refused with one line, before any work."""

import json

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main
from mlsom._novelty_experiment import run_novelty_experiment, summarise
from mlsom.datasets import load_novelty
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
