"""``mlsom run --novelty-stream``: a novelty stream evaluated as MINAS-BR's evaluator does, the
same numbers as :func:`mlsom.protocol.evaluate_novelty_stream`; the options that do not apply
refused with one line naming them."""

import json

import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main
from mlsom.datasets import load_novelty
from mlsom.protocol import evaluate_novelty_stream

RUN = ["run", "--novelty-stream", "MOA-Spher-3C-5C-2A", "--n-instances", "20000"]


def test_run_evaluates_a_novelty_stream(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = [*RUN, "--param", "novelty=true", "--windows", "10", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "novelty stream MOA-Spher-3C-5C-2A" in text and "new labels class3, class4" in text
    got = json.loads(out.read_text())
    ds = load_novelty("MOA-Spher-3C-5C-2A", n_instances=20000, random_state=0)
    want = evaluate_novelty_stream(
        SOMStreamClassifier(novelty=True, random_state=0), ds, n_windows=10
    ).summary()
    assert got["f1m"] == want["f1m"] and got["time_to_detect"] == want["time_to_detect"]
    assert got["n_patterns"] == want["n_patterns"] > 0
    assert f"{want['f1m']['appeared']:.4f}" in text


@pytest.mark.parametrize(
    "extra, option",
    [
        (["--label-delay", "3"], "--label-delay"),
        (["--stream-source", "generator"], "--stream-source"),
        (["--data-home", "."], "--data-home"),
    ],
)
def test_options_that_do_not_apply_are_refused(extra, option, capsys):
    assert main([*RUN, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: ") and option in err and err.count("\n") == 1


def test_an_unknown_novelty_stream_is_refused(capsys):
    assert main(["run", "--novelty-stream", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--novelty-stream: unknown novelty stream 'nope'" in err and "4CRE-V2" in err
