"""The experiment runner: design, caching and resuming, parallel back ends, reports, CLI."""

import csv
import json

import pytest

from mlsom._cli import main
from mlsom._validation import available_cpus
from mlsom.experiment import PROFILES, Run, check_run, make_method, plan, run_experiment

SMALL = dict(
    streams=["MOA-Spher-5C-2A", "MOA-Spher-3C-2A"],
    methods=["mlsom", "MINAS-BR", "BR-J48"],
    grid_sizes=[2, 3],
    seeds=[0, 1],
    n_instances=1500,
    n_windows=10,
    plots=False,
    progress=False,
)


def test_plan_counts_runs():
    runs = plan(
        "quick",
        streams=["MOA-Spher-5C-2A"],
        methods=["mlsom", "MINAS-BR", "BR-J48"],
        grid_sizes=[2, 4, 6],
        seeds=[0, 1, 2],
    )
    by = {}
    for r in runs:
        by.setdefault(r.method, []).append(r)
    assert len(by["mlsom"]) == 9  # d x seeds
    assert len(by["MINAS-BR"]) == 3  # seeds
    assert len(by["BR-J48"]) == 1  # deterministic: one run
    assert len({r.key for r in runs}) == len(runs)
    paper = plan("paper", streams=["MOA-Spher-5C-2A"], methods=["mlsom"])
    assert len(paper) == 100 and PROFILES["paper"]["grid_sizes"] == list(range(1, 11))


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown method 'SVM-42'"):
        plan("quick", methods=["SVM-42"])
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        plan("huge")
    with pytest.raises(ValueError, match="grid_size applies to mlsom only"):
        make_method("BR-J48", grid_size=3)


def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_experiment_writes_reports_and_resumes(tmp_path):
    out = tmp_path / "exp"
    s1 = run_experiment("quick", out, **SMALL)
    n = 2 * (4 + 2 + 1)
    assert s1["n_runs"] == n and s1["n_run_now"] == n and s1["n_cached"] == 0
    rows = _rows(out / "results.csv")
    assert len(rows) == n
    assert {r["zero_division"] for r in rows} == {"1"}
    assert {r["mlsom_version"] for r in rows} == {s1["mlsom_version"]}
    assert len(_rows(out / "curves.csv")) == n * 10
    summary = json.loads((out / "summary.json").read_text())
    assert summary["zero_division"] == 1 and summary["profile"] == "quick"
    for stream, best in summary["best_grid_size"].items():
        assert best["optimistic"] is True and best["grid_size"] in (2, 3)
        values = summary["mean_macro_f1"][stream]
        assert best["macro_f1"] == max(values["mlsom-d2"], values["mlsom-d3"])
    assert "statistics" in summary and len(summary["statistics"]["methods"]) == 3
    # every run file carries its parameters, seed, version and convention
    run_file = json.loads(next((out / "runs").glob("*MINAS-BR*s1*.json")).read_text())
    assert run_file["run"]["seed"] == 1 and run_file["params"]["random_state"] == 1
    assert run_file["run"]["zero_division"] == 1 and run_file["version"] == s1["mlsom_version"]
    # resume: nothing is run again, the reports are the same
    s2 = run_experiment("quick", out, **SMALL)
    assert s2["n_run_now"] == 0 and s2["n_cached"] == n
    assert s2["mean_macro_f1"] == s1["mean_macro_f1"]
    # a lost run is recomputed, identically
    victim = next((out / "runs").glob("*mlsom-d3__s0*.json"))
    before = json.loads(victim.read_text())
    victim.unlink()
    s3 = run_experiment("quick", out, **SMALL)
    assert s3["n_run_now"] == 1
    after = json.loads(victim.read_text())
    assert after["label_counts"] == before["label_counts"]


@pytest.mark.skipif(available_cpus() < 2, reason="two worker processes need two CPUs")
def test_parallel_back_ends_give_the_serial_results(tmp_path):
    small = dict(SMALL, streams=["MOA-Spher-5C-2A"], methods=["mlsom", "BR-J48"], seeds=[0])
    serial = run_experiment("quick", tmp_path / "serial", **small)
    joblib = run_experiment("quick", tmp_path / "joblib", n_jobs=2, **small)
    assert joblib["mean_macro_f1"] == serial["mean_macro_f1"]
    distributed = pytest.importorskip("dask.distributed")  # not on every platform (win_arm64)
    dask = run_experiment("quick", tmp_path / "dask", n_jobs=2, scheduler="local", **small)
    assert dask["mean_macro_f1"] == serial["mean_macro_f1"]
    # an existing cluster, by its scheduler address: real worker processes
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = run_experiment(
            "quick", tmp_path / "cluster", scheduler=cluster.scheduler_address, **small
        )
    assert remote["mean_macro_f1"] == serial["mean_macro_f1"]


def test_plots_are_written(tmp_path, monkeypatch):
    from mlsom import experiment

    # two measures of each kind of plot (all of them: tests/experiment/test_experiment_plots.py)
    monkeypatch.setattr(experiment, "PLOTTED_MEASURES", ("macro_f1", "cardinality"))
    monkeypatch.setattr(experiment, "RANKED_MEASURES", ("macro_f1", "hamming_loss"))
    small = dict(SMALL, methods=["mlsom", "BR-J48", "MINAS-BR"], seeds=[0], plots=True)
    s = run_experiment("quick", tmp_path, **small)
    names = sorted(p.rsplit("/", 1)[-1] for p in s["plots"])
    assert names == [
        "cd-hamming_loss.png",
        "cd.png",
        "curves-MOA-Spher-3C-2A-cardinality.png",
        "curves-MOA-Spher-3C-2A.png",
        "curves-MOA-Spher-5C-2A-cardinality.png",
        "curves-MOA-Spher-5C-2A.png",
        "nemenyi-hamming_loss.png",
        "nemenyi.png",
    ]
    for p in s["plots"]:
        assert open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_cli_run_and_experiment(tmp_path, capsys):
    out_json = tmp_path / "run.json"
    main(
        [
            "run",
            "--stream",
            "MOA-Spher-5C-2A",
            "--method",
            "mlsom",
            "--grid-size",
            "3",
            "--n-instances",
            "1500",
            "--windows",
            "10",
            "--param",
            "learning_rate=0.1",
            "--out",
            str(out_json),
        ]
    )
    text = capsys.readouterr().out
    assert "mlsom-d3 on MOA-Spher-5C-2A (seed 0)" in text and "macro_f1" in text
    result = json.loads(out_json.read_text())
    assert result["params"]["learning_rate"] == 0.1 and result["params"]["grid_size"] == 3
    main(
        [
            "experiment",
            "--out",
            str(tmp_path / "e"),
            "--streams",
            "MOA-Spher-5C-2A",
            "MOA-Spher-3C-2A",
            "--methods",
            "mlsom",
            "BR-J48",
            "--grid-sizes",
            "2",
            "--seeds",
            "0",
            "--n-instances",
            "1500",
            "--windows",
            "10",
            "--no-plots",
            "--no-progress",
        ]
    )
    text = capsys.readouterr().out
    assert "4 runs (0 found finished, 4 run now)" in text
    assert "best d = 2 (optimistic" in text and "estimated time of --profile paper" in text


def test_run_key_depends_on_everything():
    a = Run("S", "mlsom", 3, 0, 1000)
    assert a.key != Run("S", "mlsom", 3, 1, 1000).key
    assert a.key != Run("S", "mlsom", 4, 0, 1000).key
    assert a.key != Run("S", "mlsom", 3, 0, 2000).key
    assert a.key != Run("S", "mlsom", 3, 0, 1000, {"learning_rate": 0.1}).key
    assert a.key == Run("S", "mlsom", 3, 0, 1000).key


def test_curve_panels_keep_the_papers_selection():
    from mlsom.experiment import _panel_selection

    curves = {f"L{i}": [0.1 * i] * 3 for i in range(6)}  # lower bounds, L5 best
    curves.update({f"U{i}": [0.5 + 0.05 * i] * 3 for i in range(6)})  # upper bounds, U5 best
    curves.update({"mlsom (d=3, best)": [0.05] * 3, "MINAS-BR": [0.01] * 3})
    kinds = {m: "batch" for m in curves if m.startswith("L")}
    kinds.update({m: "incremental" for m in curves if m.startswith("U")})
    chosen = _panel_selection(curves, kinds, keep={"mlsom (d=3, best)"})
    assert len(chosen) == 8
    assert {"mlsom (d=3, best)", "MINAS-BR", "L5", "U5"} <= set(chosen)
    assert (
        _panel_selection(dict(list(curves.items())[:5]), kinds).keys()
        == dict(list(curves.items())[:5]).keys()
    )


def test_missing_data_files_stop_the_experiment_before_any_run(tmp_path, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match=r"Mediamill.*Nus-wide.*Leave these streams out"):
        run_experiment(
            "quick",
            tmp_path,
            streams=["MOA-Spher-5C-2A", "Mediamill", "Nus-wide"],
            methods=["mlsom"],
            grid_sizes=[2],
            seeds=[0],
            n_instances=1500,
            plots=False,
            progress=False,
        )
    assert not list((tmp_path / "runs").glob("*.json"))


# ------------------------------------------------------------------------- labels that arrive


def test_plan_repeats_only_the_methods_that_learn_labels():
    runs = plan(
        "quick",
        streams=["MOA-Spher-5C-2A"],
        methods=["mlsom", "MINAS-BR", "BR-J48", "BR-HT"],
        grid_sizes=[2],
        seeds=[0],
        label_fractions=[0, 0.01, 1],
        label_delays=[0, 1000],
        label_seed=4,
    )
    by = {}
    for r in runs:
        by.setdefault(r.method, []).append(r)
    assert len(by["mlsom"]) == len(by["BR-HT"]) == 6  # fractions x delays
    assert [(r.label_fraction, r.label_delay) for r in by["mlsom"]] == [
        (0.0, 0),
        (0.0, 1000),
        (0.01, 0),
        (0.01, 1000),
        (1.0, 0),
        (1.0, 1000),
    ]
    assert {r.label_seed for r in by["BR-HT"]} == {4}
    # the batch lower bound and MINAS-BR learn no label: once, the paper's protocol
    assert [r.label_fraction for r in by["BR-J48"] + by["MINAS-BR"]] == [None, None]
    assert by["mlsom"][3].label == "mlsom-d2-f0.01-l1000"
    assert len({r.key for r in runs}) == len(runs)
    for kw, match in [
        ({"label_fractions": [1.5]}, "label_fraction"),
        ({"label_fractions": [0.1, 0.1]}, "given twice"),
        ({"label_delays": [10]}, "need label_fractions"),
        ({"label_seed": 3}, "label_seed=3 needs label_fractions"),
        ({"label_fractions": [0.1], "label_delays": [-1]}, "label_delay"),
        ({"seeds": range(200_000)}, r"would hold 600000 runs \(1 streams.*at most 100000"),
    ]:
        with pytest.raises(ValueError, match=match):
            plan("quick", streams=["MOA-Spher-5C-2A"], methods=["mlsom"], **kw)


def test_run_keys_without_labels_are_those_of_before():
    """The label fields enter a run's identity only when set: the runs of experiments made
    before they existed keep their keys (and their cached results)."""
    a = Run("S", "mlsom", 3, 0, 1000)
    assert not {"label_fraction", "label_delay", "label_seed"} & set(a.identity())
    b = Run("S", "mlsom", 3, 0, 1000, label_fraction=0.0)
    assert b.key != a.key and b.identity()["label_fraction"] == 0.0
    assert Run("S", "mlsom", 3, 0, 1000, label_fraction=0.1, label_delay=5).key != b.key


def test_cli_with_labels_that_arrive(tmp_path, capsys):
    out_json = tmp_path / "run.json"
    args = ["--stream", "MOA-Spher-5C-2A", "--grid-size", "3", "--n-instances", "1500"]
    main(["run", *args, "--windows", "5", "--label-fraction", "0.1", "--label-delay", "20"])
    main(["run", *args, "--windows", "5", "--label-fraction", "0.1", "--out", str(out_json)])
    text = capsys.readouterr().out
    assert "mlsom-d3-f0.1-l20 on MOA-Spher-5C-2A" in text and "mlsom-d3-f0.1-l0" in text
    labels = json.loads(out_json.read_text())["info"]["labels"]
    assert labels["label_fraction"] == 0.1 and labels["learns_labels"]
    assert 100 < labels["labels_given"] < 170  # about 10 % of the 1,350 test instances
    assert main(["run", *args, "--label-fraction", "2"]) == 2
    assert "argument --label-fraction: must be in [0, 1]" in capsys.readouterr().err
    main(
        [
            "experiment",
            "--out",
            str(tmp_path / "e"),
            "--streams",
            "MOA-Spher-5C-2A",
            "--methods",
            "mlsom",
            "BR-J48",
            "--grid-sizes",
            "2",
            "--seeds",
            "0",
            "--n-instances",
            "1500",
            "--windows",
            "5",
            "--label-fractions",
            "0",
            "0.5",
            "--label-delays",
            "10",
            "--no-plots",
            "--no-progress",
        ]
    )
    text = capsys.readouterr().out
    assert "3 runs (0 found finished, 3 run now)" in text
    assert "mlsom-d2-f0.5-l10" in text and "mlsom-d2-f0-l10" in text


@pytest.mark.parametrize(
    "fields, exc, argument, match",
    [
        ({"label_fraction": 1.5}, ValueError, "label_fraction", r"label_fraction must be in"),
        (
            {"label_fraction": 0.5, "label_delay": 2**63},
            ValueError,
            "label_delay",
            r"label_delay must be <= 9223372036854775807, got 9223372036854775808",
        ),
        (
            {"label_fraction": 0.5, "label_delay": 1.5},
            TypeError,
            "label_delay",
            r"label_delay must be an integer, got 1.5",
        ),
        (
            {"label_fraction": 0.5, "label_seed": -1},
            ValueError,
            "label_seed",
            r"label_seed must be non-negative, got -1",
        ),
        # without a fraction no label arrives: a delay or a seed alone would be ignored
        ({"label_delay": 5}, ValueError, "label_delay", r"label_delay=5 needs label_fraction"),
        ({"label_seed": 7}, ValueError, "label_seed", r"label_seed=7 needs label_fraction"),
    ],
)
def test_each_label_value_is_named_in_its_own_error(fields, exc, argument, match):
    """The command line names the option from ``argument``: a bad delay is not the fraction's."""
    with pytest.raises(exc, match=match) as info:
        check_run(Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, **fields))
    assert info.value.argument == argument


def test_cli_run_names_the_label_delay_not_the_fraction(capsys):
    args = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500"]
    assert main([*args, "--label-fraction", "0.5", "--label-delay", str(2**63)]) == 2
    err = capsys.readouterr().err
    assert "label_delay must be <= 9223372036854775807, got 9223372036854775808" in err
    assert "argument --label-delay:" in err and "--label-fraction" not in err
    assert main([*args, "--label-seed", "7"]) == 2  # ignored without --label-fraction: refused
    assert "argument --label-seed: label_seed=7 needs label_fraction" in capsys.readouterr().err
