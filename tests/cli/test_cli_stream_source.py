"""``--stream-source`` of ``mlsom demo``, ``run`` and ``experiment``: the generator of the
generated MOA-Spher streams reaches :func:`mlsom.datasets.load` (the calibrated one by default,
every stream calibrated to 5C-2A with ``generator-v2``, the first one with ``generator-v1``),
an experiment keeps the runs of each apart, and a value
that is not a source, or a source for a stream that has no generator to choose, is refused with
one line naming the option and the value."""

import io
import json
from pathlib import Path

import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main, run_demo
from mlsom.datasets import load
from mlsom.experiment import Run, check_run
from mlsom.protocol import evaluate

STREAM = "MOA-Spher-5C-2A"
RUN = ["run", "--stream", STREAM, "--n-instances", "2000", "--windows", "4", "--grid-size", "2"]


def _run(tmp_path, capsys, *source):
    """``mlsom run`` with ``--stream-source *source`` (none: the default); its result file."""
    out = tmp_path / f"r{'-'.join(source)}.json"
    assert main([*RUN, *(["--stream-source", *source] if source else []), "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""
    return json.loads(out.read_text())


def _api(source):
    """The same run through the API: load(source=...) and the protocol."""
    ds = load(STREAM, n_instances=2000, random_state=0, source=source)
    return evaluate(SOMStreamClassifier(grid_size=2, random_state=0), ds, n_windows=4).to_dict()


def test_run_passes_the_source_to_load(tmp_path, capsys):
    default = _run(tmp_path, capsys)
    calibrated = _run(tmp_path, capsys, "generator")
    first = _run(tmp_path, capsys, "generator-v1")
    for result, source in [
        (default, "generator"),
        (calibrated, "generator"),
        (first, "generator-v1"),
    ]:
        assert result["info"]["stream_info"]["source"] == source
        api = _api(source)
        for counts in ("label_counts", "example_counts"):
            assert result[counts] == json.loads(json.dumps(api[counts])), counts
    # the default is the calibrated generator, and the first one gives other streams
    assert default["run"]["key"] == calibrated["run"]["key"]
    assert first["label_counts"] != default["label_counts"]
    # the result file says which: the first generator's runs keep the keys of before it
    assert default["run"]["stream_source"] == "generator"
    assert "stream_source" not in first["run"]
    v1 = check_run(Run(STREAM, "mlsom", 2, 0, 2000, n_windows=4, stream_source="generator-v1"))
    assert first["run"]["key"] == v1.key


def test_run_gives_3c2a_fitted_to_its_own_prefix_and_v2_the_one_of_before(tmp_path, capsys):
    argv = ["run", "--stream", "MOA-Spher-3C-2A", "--n-instances", "2000", "--windows", "4"]
    argv += ["--grid-size", "2"]
    results = {}
    for source in ("generator", "generator-v2"):
        out = tmp_path / f"{source}.json"
        assert main([*argv, "--stream-source", source, "--out", str(out)]) == 0
        results[source] = json.loads(out.read_text())
        assert results[source]["info"]["stream_info"]["source"] == source
        ds = load("MOA-Spher-3C-2A", n_instances=2000, random_state=0, source=source)
        offset = (0.0, 0.1) if source == "generator" else (0.1, 0.2)
        assert ds.info["generator"]["pair_offset"] == offset
        api = evaluate(SOMStreamClassifier(grid_size=2, random_state=0), ds, n_windows=4)
        assert results[source]["label_counts"] == json.loads(
            json.dumps(api.to_dict()["label_counts"])
        )
    capsys.readouterr()
    assert results["generator"]["label_counts"] != results["generator-v2"]["label_counts"]
    assert results["generator"]["run"]["key"] != results["generator-v2"]["run"]["key"]


def _demo_lines(text):
    """The demo's printout without its timings."""
    return [
        line
        for line in text.splitlines()
        if line and "instances/s" not in line and not line.startswith("total time")
    ]


def test_demo_passes_the_source_to_load(tmp_path, capsys):
    argv = ["demo", "--n-instances", "2000", "--windows", "4", "--no-plot", "--out", str(tmp_path)]
    printed = {}
    for source in (None, "generator-v1"):
        assert main([*argv, *(["--stream-source", source] if source else [])]) == 0
        printed[source] = _demo_lines(capsys.readouterr().out)
        api = io.StringIO()
        run_demo(n_instances=2000, n_windows=4, plot=False, file=api, stream_source=source)
        assert printed[source] == _demo_lines(api.getvalue())
    assert printed[None] != printed["generator-v1"]
    assert not Path(tmp_path / f"demo-{STREAM}.png").exists()


EXPERIMENT = [
    "experiment",
    "--streams",
    STREAM,
    "--methods",
    "mlsom",
    "--grid-sizes",
    "2",
    "--seeds",
    "0",
    "--n-instances",
    "1500",
    "--windows",
    "3",
    "--no-plots",
    "--no-progress",
]


def test_experiment_keeps_the_runs_of_each_generator(tmp_path, capsys):
    out = tmp_path / "exp"

    def experiment(*source):
        argv = [*EXPERIMENT, "--out", str(out), *(["--stream-source", *source] if source else [])]
        assert main(argv) == 0
        return capsys.readouterr().out.splitlines()[0]

    assert "(0 found finished, 1 run now)" in experiment("generator-v1")
    assert "(1 found finished, 0 run now)" in experiment("generator-v1")
    assert "(0 found finished, 1 run now)" in experiment()  # the calibrated one: another run
    assert "(1 found finished, 0 run now)" in experiment("generator")  # the default, named
    runs = [json.loads(f.read_text()) for f in sorted((out / "runs").glob("*.json"))]
    sources = sorted(r["info"]["stream_info"]["source"] for r in runs)
    assert sources == ["generator", "generator-v1"]
    for r in runs:
        recorded = r["run"].get("stream_source", "generator-v1")  # v1: the key of before
        assert recorded == r["info"]["stream_info"]["source"]


def _one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mlsom: error: argument --stream-source: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "argv, value",
    [
        (RUN + ["--stream-source", "v2"], "'v2'"),
        (RUN + ["--stream-source", ""], "''"),
        (RUN + ["--stream-source", "Generator"], "'Generator'"),
        (RUN + ["--stream-source", "file"], "'file'"),  # load's, for MOA-Spher-2C-2A only
        (["run", "--stream", "Mult-Spher-RB", "--stream-source", "generator"], "'generator'"),
        (["run", "--stream", "MOA-Spher-2C-2A", "--stream-source", "generator-v1"], "v1'"),
        (["demo", "--no-plot", "--stream-source", "x" * 5000], "xxx"),
        (["demo", "--stream", "Mult-Non-Spher-HP", "--stream-source", "generator-v1"], "v1'"),
        (EXPERIMENT + ["--stream-source", "generator-v3"], "'generator-v3'"),
        (
            EXPERIMENT[:2] + ["Yeast", "--methods", "mlsom", "--stream-source", "generator-v1"],
            "'generator-v1'",
        ),
    ],
    ids=[
        "run-unknown",
        "run-empty",
        "run-case",
        "run-file",
        "run-other-generator",
        "run-real-2C-2A",
        "demo-huge",
        "demo-other-generator",
        "experiment-unknown",
        "experiment-no-such-stream",
    ],
)
def test_a_bad_stream_source_is_refused_by_name(argv, value, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    if argv[0] == "experiment":
        argv = [*argv, "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before any work
    line = _one_error_line(captured.err)
    assert value in line and len(line) < 2100
    assert list(tmp_path.iterdir()) == []  # no results folder, no plot
