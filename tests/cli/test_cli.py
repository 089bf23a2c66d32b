"""The command line: the demo prints its results and writes a readable plot; a reader of the
output that goes away (``mlsom ... | head``) ends a command quietly, with status 141."""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mlsom._cli import main, run_demo


def test_demo_prints_results_and_writes_a_png(tmp_path, capsys):
    assert main(["demo", "--n-instances", "6000", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "MOA-Spher-5C-2A, 6000 instances (600 labelled for training, 5400 in the stream)" in out
    assert "adaptive" in out and "frozen" in out and "macro F" in out
    png = tmp_path / "demo-MOA-Spher-5C-2A.png"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_demo_results_are_consistent(tmp_path):
    res = run_demo(n_instances=4000, n_windows=20, out_dir=tmp_path, plot=False, file=io.StringIO())
    for curve in res["curves"].values():
        assert len(curve) == 20 and all(0.0 <= v <= 1.0 for v in curve)
    # the last cumulative value is the table's macro F
    assert res["table"][0][1] == res["curves"]["adaptive"][-1]
    assert res["png"] is None
    # same seed, same results
    again = run_demo(
        n_instances=4000, n_windows=20, out_dir=tmp_path, plot=False, file=io.StringIO()
    )
    np.testing.assert_array_equal(res["curves"]["adaptive"], again["curves"]["adaptive"])


def test_console_script_info():
    out = subprocess.run(
        [sys.executable, "-m", "mlsom._cli", "info"], capture_output=True, text=True, check=True
    ).stdout
    assert "openmp" in out and "simd_path" in out


def test_user_errors_give_a_message_and_exit_code_2(capsys, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    assert main(["run", "--stream", "Nus-wide"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: Nus-wide is a real data set")
    assert "Traceback" not in err and err.count("\n") == 1
    assert main(["run", "--stream", "No-such-stream"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: argument --stream: unknown stream 'No-such-stream'")
    assert (
        main(["run", "--stream", "MOA-Spher-5C-2A", "--method", "BR-J48", "--grid-size", "3"]) == 2
    )
    assert "grid_size applies to mlsom only" in capsys.readouterr().err


# ------------------------------------------------------------------------------ a closed stdout

# Windows reports a write to a pipe without reader as EINVAL, not as a broken pipe
posix_pipes = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipe semantics")


def _with_closed_stdout(argv, *, unbuffered, tmp_path):
    """Run ``mlsom argv`` with stdout a pipe whose reader has already gone (``| head`` that has
    exited): every write to it fails with EPIPE."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"  # each print is a write: the first one fails
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "mlsom._cli", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(write_end)
    return proc


@posix_pipes
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("argv", [["info"], ["--help"], ["run", "--help"], ["--version"]])
def test_a_closed_stdout_ends_quietly_with_status_141(argv, unbuffered, tmp_path):
    proc = _with_closed_stdout(argv, unbuffered=unbuffered, tmp_path=tmp_path)
    assert (proc.returncode, proc.stderr) == (141, "")


@posix_pipes
def test_a_closed_stdout_keeps_the_result_file(tmp_path):
    # the run's result is written before anything is printed
    out = tmp_path / "r.json"
    argv = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500", "--windows", "5"]
    proc = _with_closed_stdout([*argv, "--out", str(out)], unbuffered=True, tmp_path=tmp_path)
    assert (proc.returncode, proc.stderr) == (141, "")
    assert json.loads(out.read_text())["run"]["n_windows"] == 5


@posix_pipes
def test_a_reader_that_stops_early(tmp_path):
    # as 'mlsom demo | head -1': the demo's first line is read, then the reader goes away while
    # the demo computes; its next lines find no reader
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    argv = ["demo", "--n-instances", "6000", "--windows", "5", "--no-plot"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlsom._cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout.readline().startswith(b"mlsom ")
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=120) == 141
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert stderr == b""


class _ClosedStdout:
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_stdout_in_process(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", _ClosedStdout())
    assert main(["info"]) == 141
    assert capsys.readouterr().err == ""


def test_a_broken_pipe_elsewhere_is_an_error_not_a_closed_stdout(monkeypatch, capsys):
    # a worker's or a socket's broken pipe is an error of the work: one line, status 1
    def broken(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("mlsom._cli.run_one", broken)
    argv = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500", "--windows", "5"]
    assert main(argv) == 1
    assert capsys.readouterr().err == "mlsom: error: [Errno 32] Broken pipe\n"


def test_run_out_gets_the_usual_file_permissions(tmp_path):
    """The result file is made through a rename, with 0666 less the umask (not owner-only)."""
    import os

    from mlsom._cli import _write_atomic

    old = os.umask(0o022)
    try:
        _write_atomic(tmp_path / "r.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").read_text() == "{}"
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
    assert os.listdir(tmp_path) == ["r.json"]
