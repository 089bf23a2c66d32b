"""The command line refuses hostile or mistaken input before any work, with one line.

Every option of every subcommand is given bad values (negative, zero, huge, NaN, empty, paths that
are files, folders, FIFOs or missing, unknown names): the command must exit with status 2, print
nothing on stdout (no work, no progress bar), print exactly one line ``mlsom: error: ...`` naming
the option and the value on stderr, and create nothing. Errors during the work (a data file that
cannot be read, an estimator that refuses its data, memory, a scheduler out of reach, a disk that
fills up, a bug) are one line too, with status 1; ``--debug`` shows the traceback instead.
"""

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mlsom._cli as cli
import mlsom._run_files as _run_files
from mlsom._cli import main
from tests.helpers.paths import DATA

DEMO = ["demo", "--n-instances", "1000", "--windows", "5", "--out", "{out}"]
RUN = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500", "--windows", "5"]
EXP = [
    "experiment",
    "--out",
    "{out}",
    "--streams",
    "MOA-Spher-5C-2A",
    "--methods",
    "mlsom",
    "--grid-sizes",
    "2",
    "--seeds",
    "0",
    "--n-instances",
    "1500",
    "--windows",
    "5",
    "--no-plots",
]  # the progress bar is on: a refusal must come before it

# (id, command line, fragments the error line must contain); a later option overrides the base's
CASES = [
    # ---------------------------------------------------------------- demo
    ("demo-stream-unknown", DEMO + ["--stream", "No-such"], ["--stream", "'No-such'"]),
    ("demo-stream-empty", DEMO + ["--stream", ""], ["--stream", "''"]),
    ("demo-n-instances-zero", DEMO + ["--n-instances", "0"], ["--n-instances", "0"]),
    ("demo-n-instances-negative", DEMO + ["--n-instances", "-5"], ["--n-instances", "-5"]),
    ("demo-n-instances-small", DEMO + ["--n-instances", "999"], ["--n-instances", "999"]),
    (
        "demo-n-instances-huge",
        DEMO + ["--n-instances", "10000000000000"],
        ["--n-instances", "10000000000000", "memory"],
    ),
    ("demo-n-instances-nan", DEMO + ["--n-instances", "nan"], ["--n-instances", "'nan'"]),
    ("demo-n-instances-float", DEMO + ["--n-instances", "1e4"], ["--n-instances", "'1e4'"]),
    ("demo-grid-size-zero", DEMO + ["--grid-size", "0"], ["--grid-size", "0"]),
    ("demo-grid-size-negative", DEMO + ["--grid-size", "-2"], ["--grid-size", "-2"]),
    ("demo-grid-size-float", DEMO + ["--grid-size", "2.5"], ["--grid-size", "'2.5'"]),
    ("demo-grid-size-nan", DEMO + ["--grid-size", "NaN"], ["--grid-size", "'NaN'"]),
    ("demo-grid-size-empty", DEMO + ["--grid-size", ""], ["--grid-size", "''"]),
    ("demo-grid-size-above-limit", DEMO + ["--grid-size", "1001"], ["--grid-size", "1001"]),
    ("demo-windows-zero", DEMO + ["--windows", "0"], ["--windows", "0"]),
    ("demo-windows-nan", DEMO + ["--windows", "nan"], ["--windows", "'nan'"]),
    ("demo-windows-too-many", DEMO + ["--windows", "1000"], ["--windows", "1000", "900"]),
    ("demo-seed-negative", DEMO + ["--seed", "-1"], ["--seed", "-1"]),
    ("demo-seed-huge", DEMO + ["--seed", "4294967296"], ["--seed", "4294967296"]),
    ("demo-seed-text", DEMO + ["--seed", "x"], ["--seed", "'x'"]),
    ("demo-stream-source-unknown", DEMO + ["--stream-source", "v2"], ["--stream-source", "'v2'"]),
    ("demo-out-empty", DEMO + ["--out", ""], ["--out", "empty"]),
    ("demo-out-file", DEMO + ["--out", "{file}"], ["--out", "not a folder"]),
    ("demo-out-under-file", DEMO + ["--out", "{file}/sub"], ["--out", "Not a directory"]),
    ("demo-out-fifo", DEMO + ["--out", "{fifo}"], ["--out", "not a folder"]),
    ("demo-unknown-option", DEMO + ["--bogus"], ["--bogus"]),
    # ---------------------------------------------------------------- run
    ("run-stream-missing", ["run"], ["--stream", "required"]),
    ("run-stream-unknown", RUN + ["--stream", "No-such"], ["--stream", "'No-such'"]),
    ("run-stream-huge", RUN + ["--stream", "x" * 100_000], ["--stream", "100,"]),
    ("run-method-unknown", RUN + ["--method", "SVM-42"], ["--method", "'SVM-42'"]),
    ("run-method-empty", RUN + ["--method", ""], ["--method", "''"]),
    ("run-grid-size-zero", RUN + ["--grid-size", "0"], ["--grid-size", "0"]),
    (
        "run-grid-size-for-a-baseline",
        RUN + ["--method", "BR-J48", "--grid-size", "3"],
        ["--grid-size", "mlsom only", "BR-J48"],
    ),
    ("run-seed-negative", RUN + ["--seed", "-3"], ["--seed", "-3"]),
    ("run-stream-source-empty", RUN + ["--stream-source", ""], ["--stream-source", "''"]),
    (
        "run-stream-source-other-stream",
        RUN + ["--stream", "Mult-Spher-RB", "--stream-source", "generator-v1"],
        ["--stream-source", "'generator-v1'", "Mult-Spher-RB"],
    ),
    (
        "run-n-instances-real-stream",
        RUN + ["--stream", "Yeast"],
        ["--n-instances", "Yeast"],
    ),
    ("run-windows-too-many", RUN + ["--windows", "2000"], ["--windows", "2000", "1350"]),
    ("run-label-fraction-big", RUN + ["--label-fraction", "1.5"], ["--label-fraction", "1.5"]),
    ("run-label-fraction-nan", RUN + ["--label-fraction", "nan"], ["--label-fraction", "nan"]),
    ("run-label-fraction-text", RUN + ["--label-fraction", "x"], ["--label-fraction", "'x'"]),
    ("run-label-delay-negative", RUN + ["--label-delay", "-1"], ["--label-delay", "-1"]),
    (
        "run-label-delay-huge",
        RUN + ["--label-fraction", "0.1", "--label-delay", "1e99"],
        ["--label-delay", "'1e99'"],
    ),
    ("run-label-seed-negative", RUN + ["--label-seed", "-2"], ["--label-seed", "-2"]),
    ("run-windows-negative", RUN + ["--windows", "-1"], ["--windows", "-1"]),
    ("run-zero-division-2", RUN + ["--zero-division", "2"], ["--zero-division", "'2'"]),
    ("run-zero-division-nan", RUN + ["--zero-division", "nan"], ["--zero-division", "'nan'"]),
    ("run-param-no-equals", RUN + ["--param", "bad"], ["--param", "'bad'"]),
    # a novelty stream
    (
        "run-novelty-unknown",
        ["run", "--novelty-stream", "No-such"],
        ["--novelty-stream", "'No-such'"],
    ),
    (
        "run-novelty-and-stream",
        RUN + ["--novelty-stream", "4CRE-V2"],
        ["--novelty-stream", "--stream"],
    ),
    # a data file of one's own
    ("run-data-missing", ["run", "--data", "{missing}.arff"], ["--data", "missing.arff"]),
    ("run-data-empty", ["run", "--data", ""], ["--data", "empty"]),
    ("run-data-not-a-data-file", ["run", "--data", "{file}"], ["--data", "file'", "mlsom reads"]),
    ("run-data-fifo", ["run", "--data", "{fifo}.arff"], ["--data", "fifo.arff", "FIFO"]),
    ("run-data-and-stream", RUN + ["--data", "{arff}"], ["--data", "--stream"]),
    ("run-xml-without-data", RUN + ["--xml", "{file}"], ["--xml", "--data FILE"]),
    ("run-xml-missing", ["run", "--data", "{arff}", "--xml", "{missing}"], ["--xml", "missing"]),
    ("run-labels-bad", ["run", "--data", "{arff}", "--labels", "mid:2"], ["--labels", "'mid:2'"]),
    (
        "run-train-fraction-zero",
        ["run", "--data", "{arff}", "--train-fraction", "0"],
        ["--train-fraction", "0"],
    ),
    (
        "run-train-rows-text",
        ["run", "--data", "{arff}", "--train-rows", "x"],
        ["--train-rows", "'x'"],
    ),
    (
        "run-split-unknown",
        ["run", "--data", "{arff}", "--split", "random"],
        ["--split", "'random'"],
    ),
    ("run-scale-unknown", RUN + ["--scale", "zscore"], ["--scale", "'zscore'"]),
    ("run-param-no-name", RUN + ["--param", "=3"], ["--param", "'=3'"]),
    (
        "run-param-grid-size-conflicts",
        RUN + ["--grid-size", "4", "--param", "grid_size=3"],
        ["--param grid_size=3", "--grid-size"],
    ),
    (
        "run-param-grid-size-alone",
        RUN + ["--param", "grid_size=3"],
        ["--param grid_size=3", "--grid-size"],
    ),
    ("run-param-random-state", RUN + ["--param", "random_state=1"], ["--param", "--seed"]),
    ("run-param-unknown-name", RUN + ["--param", "foo=1"], ["--param", "'foo'"]),
    ("run-param-huge-name", RUN + ["--param", "y" * 100_000 + "=1"], ["--param", "'yyy"]),
    ("run-param-out-of-range", RUN + ["--param", "learning_rate=5"], ["--param", "5"]),
    ("run-param-nan", RUN + ["--param", "learning_rate=NaN"], ["--param", "nan"]),
    ("run-param-infinite", RUN + ["--param", "learning_rate=1e999"], ["--param", "inf"]),
    ("run-param-list", RUN + ["--param", "learning_rate=[1]"], ["--param", "learning_rate"]),
    ("run-param-empty-value", RUN + ["--param", "learning_rate="], ["--param", "learning_rate"]),
    ("run-param-zero", RUN + ["--param", "n_epochs=0"], ["--param", "n_epochs", "0"]),
    ("run-param-bad-option", RUN + ["--param", "neighborhood=hex"], ["--param", "'hex'"]),
    ("run-param-n-jobs-zero", RUN + ["--param", "n_jobs=0"], ["--param", "n_jobs"]),
    (
        "run-param-deeply-nested",
        RUN + ["--param", "learning_rate=" + "[" * 100_000],
        ["--param", "learning_rate"],
    ),
    (
        "run-param-twice",
        RUN + ["--param", "n_epochs=5", "--param", "n_epochs=6"],
        ["--param n_epochs", "twice"],
    ),
    (
        "run-param-baseline-unknown",
        RUN + ["--method", "MINAS-BR", "--param", "grid=2"],
        ["--param", "'grid'", "MINAS-BR"],
    ),
    ("run-data-home-missing", RUN + ["--data-home", "{missing}"], ["--data-home", "not exist"]),
    ("run-data-home-file", RUN + ["--data-home", "{file}"], ["--data-home", "not a folder"]),
    ("run-data-home-fifo", RUN + ["--data-home", "{fifo}"], ["--data-home", "not a folder"]),
    ("run-data-home-empty", RUN + ["--data-home", ""], ["--data-home", "empty"]),
    ("run-out-folder", RUN + ["--out", "{dir}"], ["--out", "is a folder"]),
    ("run-out-missing-folder", RUN + ["--out", "{missing}/r.json"], ["--out", "does not exist"]),
    ("run-out-fifo", RUN + ["--out", "{fifo}"], ["--out", "not a regular file"]),
    ("run-out-empty", RUN + ["--out", ""], ["--out", "empty"]),
    # ---------------------------------------------------------------- experiment
    ("exp-profile-unknown", EXP + ["--profile", "huge"], ["--profile", "'huge'"]),
    (
        "exp-novelty-unknown",
        ["experiment", "--novelty-streams", "No-such"],
        ["--novelty-streams", "'No-such'"],
    ),
    (
        "exp-novelty-and-streams",
        ["experiment", "--novelty-streams", "4CRE-V2", "--streams", "MOA-Spher-5C-2A"],
        ["--streams", "does not apply to --novelty-streams"],
    ),
    (
        "exp-label-fractions-big",
        EXP + ["--label-fractions", "0.1", "2"],
        ["--label-fractions", "2"],
    ),
    (
        "exp-label-fractions-twice",
        EXP + ["--label-fractions", "0.1", "0.1"],
        ["--label-fractions", "twice"],
    ),
    (
        "exp-label-delays-alone",
        EXP + ["--label-delays", "10"],
        ["--label-delays", "label_fractions"],
    ),
    (
        "exp-label-delays-negative",
        EXP + ["--label-fractions", "0.1", "--label-delays", "-5"],
        ["--label-delays", "-5"],
    ),
    ("exp-label-seed-text", EXP + ["--label-seed", "s"], ["--label-seed", "'s'"]),
    ("exp-out-empty", EXP + ["--out", ""], ["--out", "empty"]),
    ("exp-out-file", EXP + ["--out", "{file}"], ["--out", "not a folder"]),
    ("exp-out-under-file", EXP + ["--out", "{file}/sub"], ["--out", "Not a directory"]),
    ("exp-out-fifo", EXP + ["--out", "{fifo}"], ["--out", "not a folder"]),
    ("exp-streams-unknown", EXP + ["--streams", "No-such"], ["--streams", "'No-such'"]),
    ("exp-streams-empty-name", EXP + ["--streams", ""], ["--streams", "''"]),
    (
        "exp-streams-twice",
        EXP + ["--streams", "moa-spher-5c-2a", "MOA-Spher-5C-2A"],
        ["--streams", "MOA-Spher-5C-2A", "twice"],
    ),
    ("exp-methods-unknown", EXP + ["--methods", "SVM-42"], ["--methods", "'SVM-42'"]),
    ("exp-data-missing", EXP + ["--data", "{missing}.arff"], ["--data", "missing.arff"]),
    ("exp-data-twice", EXP + ["--data", "{arff}", "{arff}"], ["--data", "twice"]),
    ("exp-xml-missing", EXP + ["--data", "{arff}", "--xml", "{missing}"], ["--xml", "missing"]),
    ("exp-labels-zero", EXP + ["--data", "{arff}", "--labels", "last:0"], ["--labels", "'last:0'"]),
    ("exp-train-fraction-nan", EXP + ["--train-fraction", "nan"], ["--train-fraction", "nan"]),
    ("exp-train-rows-zero", EXP + ["--train-rows", "0"], ["--train-rows", "0"]),
    ("exp-split-empty", EXP + ["--split", ""], ["--split", "''"]),
    ("exp-scale-empty", EXP + ["--scale", ""], ["--scale", "''"]),
    ("exp-param-unknown", EXP + ["--param", "no_such=1"], ["--param", "'no_such'"]),
    ("exp-methods-twice", EXP + ["--methods", "mlsom", "mlsom"], ["--methods", "twice"]),
    ("exp-grid-sizes-zero", EXP + ["--grid-sizes", "0"], ["--grid-sizes", "0"]),
    ("exp-grid-sizes-negative", EXP + ["--grid-sizes", "2", "-1"], ["--grid-sizes", "-1"]),
    ("exp-grid-sizes-float", EXP + ["--grid-sizes", "2.5"], ["--grid-sizes", "'2.5'"]),
    ("exp-grid-sizes-nan", EXP + ["--grid-sizes", "nan"], ["--grid-sizes", "'nan'"]),
    ("exp-grid-sizes-above-limit", EXP + ["--grid-sizes", "5000"], ["--grid-sizes", "5000"]),
    ("exp-grid-sizes-twice", EXP + ["--grid-sizes", "2", "2"], ["--grid-sizes", "twice"]),
    (
        "exp-grid-sizes-without-mlsom",
        EXP + ["--methods", "BR-J48"],
        ["--grid-sizes", "not among the methods"],
    ),
    ("exp-seeds-negative", EXP + ["--seeds", "-1"], ["--seeds", "-1"]),
    ("exp-seeds-huge", EXP + ["--seeds", "4294967296"], ["--seeds", "4294967296"]),
    ("exp-seeds-twice", EXP + ["--seeds", "0", "0"], ["--seeds", "twice"]),
    ("exp-seeds-text", EXP + ["--seeds", "x"], ["--seeds", "'x'"]),
    ("exp-stream-source-file", EXP + ["--stream-source", "file"], ["--stream-source", "'file'"]),
    ("exp-n-instances-small", EXP + ["--n-instances", "10"], ["--n-instances", "10"]),
    (
        "exp-n-instances-huge",
        EXP + ["--n-instances", "10000000000000"],
        ["--n-instances", "10000000000000", "memory"],
    ),
    (
        "exp-n-instances-real-streams-only",
        EXP + ["--streams", "Yeast"],
        ["--n-instances", "generated streams only"],
    ),
    ("exp-data-home-missing", EXP + ["--data-home", "{missing}"], ["--data-home", "not exist"]),
    ("exp-data-home-file", EXP + ["--data-home", "{file}"], ["--data-home", "not a folder"]),
    ("exp-data-home-fifo", EXP + ["--data-home", "{fifo}"], ["--data-home", "not a folder"]),
    ("exp-n-jobs-zero", EXP + ["--n-jobs", "0"], ["--n-jobs", "0"]),
    ("exp-n-jobs-negative", EXP + ["--n-jobs", "-1"], ["--n-jobs", "-1"]),
    ("exp-n-jobs-huge", EXP + ["--n-jobs", "100000"], ["--n-jobs", "100000", "CPU"]),
    ("exp-scheduler-empty", EXP + ["--scheduler", ""], ["--scheduler", "empty"]),
    ("exp-scheduler-no-port", EXP + ["--scheduler", "foo"], ["--scheduler", "'foo'"]),
    ("exp-scheduler-scheme", EXP + ["--scheduler", "http://x:1"], ["--scheduler", "http"]),
    (
        "exp-scheduler-port-range",
        EXP + ["--scheduler", "tcp://127.0.0.1:99999"],
        ["--scheduler", "99999"],
    ),
    (
        "exp-scheduler-port-text",
        EXP + ["--scheduler", "tcp://127.0.0.1:x"],
        ["--scheduler", "tcp://127.0.0.1:x"],
    ),
    ("exp-connect-timeout-zero", EXP + ["--connect-timeout", "0"], ["--connect-timeout", "0"]),
    ("exp-connect-timeout-nan", EXP + ["--connect-timeout", "nan"], ["--connect-timeout", "nan"]),
    ("exp-connect-timeout-inf", EXP + ["--connect-timeout", "inf"], ["--connect-timeout", "inf"]),
    (
        "exp-connect-timeout-huge",
        EXP + ["--connect-timeout", "100000"],
        ["--connect-timeout", "100000"],
    ),
    ("exp-windows-zero", EXP + ["--windows", "0"], ["--windows", "0"]),
    ("exp-windows-too-many", EXP + ["--windows", "100000"], ["--windows", "100000", "1350"]),
    ("exp-zero-division-2", EXP + ["--zero-division", "2"], ["--zero-division", "'2'"]),
    ("exp-zero-division-empty", EXP + ["--zero-division", ""], ["--zero-division", "''"]),
    ("exp-unknown-option", EXP + ["--grid-size", "2"], ["--grid-size"]),
    # ---------------------------------------------------------------- info, no command
    ("info-unknown-option", ["info", "--bogus"], ["--bogus"]),
    ("no-command", [], ["COMMAND"]),
    ("unknown-command", ["bogus"], ["'bogus'"]),
]


@pytest.fixture
def paths(tmp_path, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    (tmp_path / "file").write_text("not a folder\n")
    (tmp_path / "dir").mkdir()
    fifo = tmp_path / "fifo"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        os.mkfifo(tmp_path / "fifo.arff")  # a data file's name: refused unread, never blocks
    return {
        "out": str(tmp_path / "out"),
        "file": str(tmp_path / "file"),
        "dir": str(tmp_path / "dir"),
        "fifo": str(fifo),
        "missing": str(tmp_path / "missing"),
        "arff": str(DATA / "emotions.arff"),
    }


def _one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mlsom: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_option_is_refused_before_any_work(argv, fragments, paths, capsys):
    if any("{fifo}" in a for a in argv) and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    argv = [a.format(**paths) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran, nothing was printed
    line = _one_error_line(captured.err)
    for fragment in fragments:
        assert fragment in line, line
    assert len(line) < 2100  # a hostile value is not echoed whole
    assert not Path(paths["out"]).exists()  # no folder made, no run file, no plot
    assert Path(paths["file"]).read_text() == "not a folder\n"


def test_every_option_has_a_hostile_case():
    """The table above covers every option of every subcommand (so that a new option gets its
    case)."""
    parser = cli._parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    tried = {(c[1][0] if c[1] else None, a) for c in CASES for a in c[1] if a.startswith("--")}
    exempt = {"--help", "--debug", "--no-plot", "--no-plots", "--no-progress"}
    missing = []
    for name, subparser in sub.choices.items():
        for action in subparser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in exempt:
                    if (name, option) not in tried:
                        missing.append(f"{name} {option}")
    assert missing == []


def test_param_overriding_the_seed_or_grid_size_is_refused_not_a_type_error(capsys):
    # the review's case: "got multiple values for keyword argument"
    assert main(RUN + ["--grid-size", "3", "--param", "grid_size=3"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "multiple values" not in line and "--grid-size" in line


def test_param_string_and_json_values_are_accepted(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = RUN + ["--param", "neighborhood=gaussian", "--param", "learning_rate=0.2"]
    assert main(argv + ["--out", str(out)]) == 0
    params = json.loads(out.read_text())["params"]
    assert params["neighborhood"] == "gaussian" and params["learning_rate"] == 0.2
    assert "result written to" in capsys.readouterr().out
    assert not [p for p in tmp_path.iterdir() if p.name != "r.json"]  # no probe or temp file left


def test_huge_n_jobs_param_never_crashes(capsys):
    # the estimator caps n_jobs at the cores (or refuses it): a result or one line, never a crash
    rc = main(RUN + ["--param", "n_jobs=100000"])
    captured = capsys.readouterr()
    if rc == 0:
        assert "macro_f1" in captured.out and captured.err == ""
    else:
        assert rc == 2 and "n_jobs" in _one_error_line(captured.err)


def test_stream_names_are_case_insensitive_and_keep_n_instances(capsys):
    # a name in other case used to lose n_instances (the whole table's size was generated)
    argv = ["run", "--stream", "moa-spher-5c-2a", "--n-instances", "1500", "--windows", "5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "mlsom-d5 on MOA-Spher-5C-2A (seed 0): 1350 test instances, 5 windows" in out


def test_debug_is_accepted_before_and_after_the_command(capsys):
    assert main(["--debug", "info"]) == 0
    assert main(["info", "--debug"]) == 0
    assert "simd_path" in capsys.readouterr().out


# ------------------------------------------------------------------------------ errors of the work


@pytest.mark.parametrize(
    "argv, option",
    [
        (["demo", "--n-instances", "1000", "--grid-size", "1000", "--no-plot"], "--grid-size"),
        (["run", "--stream", "Yeast", "--grid-size", "300"], "--grid-size"),
        (
            ["experiment", "--streams", "Yeast", "--methods", "mlsom", "--grid-sizes", "2", "400"],
            "--grid-sizes",
        ),
    ],
    ids=["demo", "run", "experiment"],
)
def test_a_grid_too_large_for_memory_is_refused_before_any_work(argv, option, tmp_path, capsys):
    """The estimator's memory estimate of fit, checked before the stream is made (status 2)."""
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing started
    line = _one_error_line(captured.err)
    assert option in line and "would need about" in line
    assert not out.exists()


def _hostile_yeast(tmp_path):
    home = tmp_path / "data"
    home.mkdir()
    shutil.copy(DATA / "yeast.xml", home)
    (home / "yeast.arff").write_text("@relation x\n@attribute a numeric\n@data\nnot,a,number\n")
    return home


@pytest.mark.parametrize("command", ["run", "experiment"])
def test_a_hostile_data_file_is_one_line(command, tmp_path, capsys):
    home = _hostile_yeast(tmp_path)
    argv = [command, "--data-home", str(home), "--windows", "5"]
    if command == "run":
        argv += ["--stream", "Yeast"]
    else:
        argv += ["--streams", "Yeast", "--methods", "mlsom", "--grid-sizes", "2", "--seeds", "0"]
        argv += ["--out", str(tmp_path / "out"), "--no-plots", "--no-progress"]
    assert main(argv) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "yeast" in line


@pytest.mark.parametrize(
    "exc, fragment",
    [
        (MemoryError(), "mlsom: error: out of memory"),
        (OSError(28, "No space left on device"), "No space left on device"),
        (ValueError("X contains NaN\n(first at row 3)"), "X contains NaN (first at row 3)"),
        (ImportError("No module named 'river'"), "pip install 'mlsom[experiments]'"),
        (RuntimeError("boom"), "unexpected RuntimeError: boom (rerun with --debug"),
    ],
    ids=["memory", "disk-full", "multi-line", "import", "bug"],
)
def test_errors_of_the_work_are_one_line_with_status_1(exc, fragment, monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(cli, "run_one", fail)
    assert main(RUN) == 1
    captured = capsys.readouterr()
    assert fragment in _one_error_line(captured.err)


def test_debug_shows_the_traceback(monkeypatch, capsys):
    def fail(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(cli, "run_one", fail)
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", *RUN])
    with pytest.raises(RuntimeError, match="boom"):
        main([*RUN, "--debug"])
    # a refused argument: the check's own exception, under the usage error
    with pytest.raises(cli.UsageError) as info:
        main([*RUN, "--param", "foo=1", "--debug"])
    assert isinstance(info.value.__cause__, ValueError)


def test_a_full_disk_while_storing_a_run_is_one_line(tmp_path, monkeypatch, capsys):
    def full(result, path):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(_run_files, "store", full)
    argv = [a.format(out=tmp_path / "out") for a in EXP] + ["--no-progress"]
    assert main(argv) == 1
    assert "No space left on device" in _one_error_line(capsys.readouterr().err)


def test_an_unreachable_scheduler_is_one_line_within_seconds(tmp_path):
    # nothing listens on port 1 of this machine: connecting gives up after --connect-timeout
    out = tmp_path / "out"
    argv = [a.format(out=out) for a in EXP]
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "mlsom._cli", *argv]
        + ["--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - t0 < 30
    assert proc.returncode == 1 and proc.stdout == ""
    line = _one_error_line(proc.stderr)  # no progress bar before it, no traceback
    assert "cannot connect to the dask scheduler at tcp://127.0.0.1:1" in line
    # dask's own connection gives up "after 1 s", the handshake probe "within 1 s": under load
    # either timer may fire first
    assert "after 1 s" in line or "within 1 s" in line
    assert not list((out / "runs").glob("*.json"))


def test_compressed_data_is_read_by_the_cli(tmp_path, capsys):
    # the real data path works end to end (the refusals above are not all the CLI does)
    home = tmp_path / "data"
    home.mkdir()
    with gzip.open(DATA / "yeast.arff.gz") as src, open(home / "yeast.arff", "wb") as dst:
        shutil.copyfileobj(src, dst)
    shutil.copy(DATA / "yeast.xml", home)
    argv = ["run", "--stream", "yeast", "--data-home", str(home), "--windows", "5"]
    assert main(argv + ["--grid-size", "2"]) == 0
    assert "mlsom-d2 on Yeast" in capsys.readouterr().out


@pytest.fixture
def local_server(request):
    """A TCP server on this machine that accepts connections and is not a dask scheduler: it says
    nothing ("silent") or answers as a web server ("http")."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    conns = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed at the end of the test
                return
            conns.append(conn)
            if request.param == "http":
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in conns:
        conn.close()


@pytest.mark.parametrize("local_server", ["silent", "http"], indirect=True)
def test_a_server_that_is_not_a_scheduler_is_one_line_within_seconds(local_server, tmp_path, capfd):
    # dask's own connection waits for a handshake without a limit: a silent server hung it
    pytest.importorskip("dask.distributed")
    argv = [a.format(out=tmp_path / "out") for a in EXP]
    t0 = time.monotonic()
    assert main([*argv, "--scheduler", local_server, "--connect-timeout", "1"]) == 1
    assert time.monotonic() - t0 < 20
    captured = capfd.readouterr()  # file descriptors: dask's log handlers write there too
    assert captured.out == ""
    line = _one_error_line(captured.err)
    assert f"cannot connect to the dask scheduler at {local_server}" in line
    assert not list((tmp_path / "out" / "runs").glob("*.json"))


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write in any folder"
)
@pytest.mark.parametrize("command", ["experiment", "demo", "run"])
def test_an_unwritable_folder_is_refused_before_any_work(command, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if command == "experiment":
            argv = [a.format(out=locked / "exp") for a in EXP]
        elif command == "demo":
            argv = [a.format(out=locked) for a in DEMO]
        else:
            argv = RUN + ["--out", str(locked / "r.json")]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        line = _one_error_line(captured.err)
        assert "--out" in line and "ermission denied" in line
    finally:
        locked.chmod(0o700)
