"""The command line: the demo prints its results and writes a readable plot."""

import io
import subprocess
import sys

import numpy as np

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
