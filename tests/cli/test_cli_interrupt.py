"""Ctrl-C during an experiment: one line, the finished runs kept, exit status 130, resumable.

The subprocess tests send SIGINT to the whole process group, as a terminal's Ctrl-C does, so the
worker processes of the parallel back ends get it too: none of them may print a traceback.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import mlsom.experiment as experiment
from mlsom._cli import main
from mlsom._validation import available_cpus
from mlsom.experiment import ExperimentInterrupted, run_experiment

# d = 1 takes a fraction of a second, d = 48 and 50 several seconds each: the signal is sent once
# the first run is stored, while the others are still running
SLOW = [
    "experiment",
    "--streams",
    "MOA-Spher-5C-2A",
    "--methods",
    "mlsom",
    "--grid-sizes",
    "1",
    "48",
    "50",
    "--seeds",
    "0",
    "--n-instances",
    "2000",
    "--windows",
    "5",
    "--no-plots",
    "--no-progress",
]

posix_only = pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")


def _interrupt_when(ready, what, out, extra=(), poll_s=0.02):
    """Run the SLOW experiment, send SIGINT to its process group once ready(pid) holds, and
    return (returncode, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlsom._cli", *SLOW, "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        # Ctrl-C as in a terminal: a test runner started in the background may hand its children
        # SIGINT ignored, which Python then keeps
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not ready(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{what} in time"
            time.sleep(poll_s)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stdout, stderr


def _interrupt_after_first_run(out, extra=()):
    def first_run_stored(pid):
        return bool(glob.glob(str(out / "runs" / "*.json")))

    return _interrupt_when(first_run_stored, "no run finished", out, extra)


def _check_interrupted(returncode, stdout, stderr, out):
    assert returncode == 130
    assert stdout == ""
    assert stderr.splitlines() == [
        f"mlsom: interrupted: 1 of 3 runs finished and kept in {out}; rerun the same command to "
        "resume"
    ]
    (kept,) = (out / "runs").glob("*.json")
    result = json.loads(kept.read_text())
    assert result["run"]["grid_size"] == 1 and result["run"]["key"] == kept.stem
    assert not list((out / "runs").glob("*.tmp"))
    # resuming: the same experiment finds that run finished
    exp = experiment.prepare_experiment(
        "quick",
        out,
        streams=["MOA-Spher-5C-2A"],
        methods=["mlsom"],
        grid_sizes=[1, 48, 50],
        seeds=[0],
        n_instances=2000,
        n_windows=5,
    )
    assert [exp.path(r).exists() for r in exp.runs] == [True, False, False]


@posix_only
def test_ctrl_c_keeps_the_finished_runs_serial(tmp_path):
    out = tmp_path / "exp"
    _check_interrupted(*_interrupt_after_first_run(out), out)


@posix_only
@pytest.mark.skipif(available_cpus() < 2, reason="needs two CPUs for two worker processes")
def test_ctrl_c_with_worker_processes_leaves_no_traceback(tmp_path):
    out = tmp_path / "exp"
    _check_interrupted(*_interrupt_after_first_run(out, ["--n-jobs", "2"]), out)


def _worker_children(pid):
    """The pids of the joblib worker processes among ``pid``'s children (Linux /proc)."""
    found = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            children = open(path).read().split()
        except OSError:
            continue
        for child in children:
            try:
                cmdline = open(f"/proc/{child}/cmdline", "rb").read()
            except OSError:
                continue
            if b"popen_loky" in cmdline:
                found.append(int(child))
    return found


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux's /proc")
@pytest.mark.skipif(available_cpus() < 2, reason="needs two CPUs for two worker processes")
def test_ctrl_c_while_the_worker_processes_start_leaves_no_traceback(tmp_path):
    # Ctrl-C as soon as a worker process exists: it is then still starting Python and importing
    # (an interruption there printed a traceback before the worker could ignore SIGINT)
    out = tmp_path / "exp"
    returncode, stdout, stderr = _interrupt_when(
        _worker_children, "no worker process started", out, ["--n-jobs", "2"], poll_s=0.001
    )
    assert returncode == 130
    assert stdout == ""
    # every run was still running: none is kept
    assert stderr.splitlines() == [
        f"mlsom: interrupted: 0 of 3 runs finished and kept in {out}; rerun the same command to "
        "resume"
    ]


@posix_only
@pytest.mark.slow
@pytest.mark.skipif(available_cpus() < 2, reason="needs two CPUs for two worker processes")
def test_ctrl_c_with_a_local_dask_cluster_leaves_no_traceback(tmp_path):
    pytest.importorskip("dask.distributed")
    out = tmp_path / "exp"
    result = _interrupt_after_first_run(out, ["--n-jobs", "2", "--scheduler", "local"])
    _check_interrupted(*result, out)


def _interrupt_second_run(monkeypatch):
    real = experiment.run_one
    calls = []

    def run_one(run, **kwargs):
        calls.append(run)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(run, **kwargs)

    monkeypatch.setattr(experiment, "run_one", run_one)


SMALL = dict(
    streams=["MOA-Spher-5C-2A"],
    methods=["mlsom"],
    grid_sizes=[2, 3, 4],
    seeds=[0],
    n_instances=1500,
    n_windows=5,
    plots=False,
    progress=False,
)


def test_interrupted_experiment_says_how_many_runs_are_kept_and_resumes(tmp_path, monkeypatch):
    _interrupt_second_run(monkeypatch)
    with pytest.raises(ExperimentInterrupted) as info:
        run_experiment("quick", tmp_path, **SMALL)
    exc = info.value
    assert isinstance(exc, KeyboardInterrupt)  # code that stops on Ctrl-C still does
    assert (exc.n_finished, exc.n_runs, exc.out_dir) == (1, 3, tmp_path)
    assert "1 of 3 runs finished" in str(exc)
    assert len(list((tmp_path / "runs").glob("*.json"))) == 1
    monkeypatch.undo()
    resumed = run_experiment("quick", tmp_path, **SMALL)
    assert resumed["n_cached"] == 1 and resumed["n_run_now"] == 2


def test_cli_reports_an_interruption_in_one_line(tmp_path, monkeypatch, capsys):
    _interrupt_second_run(monkeypatch)
    argv = ["experiment", "--out", str(tmp_path), "--streams", "MOA-Spher-5C-2A"]
    argv += ["--methods", "mlsom", "--grid-sizes", "2", "3", "4", "--seeds", "0"]
    argv += ["--n-instances", "1500", "--windows", "5", "--no-plots", "--no-progress"]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"mlsom: interrupted: 1 of 3 runs finished and kept in {tmp_path}; rerun the same "
        "command to resume"
    ]


def test_ctrl_c_in_other_commands_is_one_line(monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("mlsom._cli.run_one", interrupted)
    argv = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500", "--windows", "5"]
    assert main(argv) == 130
    assert capsys.readouterr().err == "mlsom: interrupted\n"


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs signal masks")
def test_a_ctrl_c_while_workers_start_waits_and_the_handlers_are_restored():
    assert threading.current_thread() is threading.main_thread()
    handler, hook = signal.getsignal(signal.SIGINT), threading.excepthook
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with experiment._QuietLocalWorkers() as quiet:
            assert quiet.active and signal.getsignal(signal.SIGINT) == quiet._on_sigint
            with quiet.spawning():
                signal.raise_signal(signal.SIGINT)
                # a Ctrl-C while processes start is acted on once they have started
                reached.append("spawned")
            reached.append("collected")
    assert reached == ["spawned"]
    # the caller's SIGINT handler and thread excepthook (replaced while stopping) are back
    assert signal.getsignal(signal.SIGINT) is handler
    assert threading.excepthook is hook
