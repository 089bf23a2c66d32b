"""The run cache: a finished run is reused only when every input that can change it is the same.

The review's case: rerunning into the same results folder with ``--windows 7`` reported the cached
50-window results. Each input is changed in turn here, and each change must compute the run again;
leaving everything equal must find it finished.
"""

import dataclasses
import gzip
import json
import os
import shutil

import pytest

import mlsom.experiment as experiment
from mlsom._cli import main
from mlsom.datasets import DataFile
from mlsom.experiment import CACHE_FORMAT, Run, check_run, plan, run_experiment
from tests.helpers.paths import DATA

BASE = dict(
    streams=["MOA-Spher-5C-2A"],
    methods=["mlsom"],
    grid_sizes=[2],
    seeds=[0],
    n_instances=1500,
    n_windows=10,
    plots=False,
    progress=False,
)

# each input of a run, changed alone: (name, overrides of BASE, field of the run file that shows it)
CHANGES = [
    ("stream", {"streams": ["MOA-Spher-3C-2A"]}, ("stream", "MOA-Spher-3C-2A")),
    ("n_instances", {"n_instances": 1600}, ("n_instances", 1600)),
    ("method", {"methods": ["MINAS-BR"], "grid_sizes": None}, ("method", "MINAS-BR")),
    ("grid_size", {"grid_sizes": [3]}, ("grid_size", 3)),
    ("seed", {"seeds": [1]}, ("seed", 1)),
    ("n_windows", {"n_windows": 7}, ("n_windows", 7)),
    ("zero_division", {"zero_division": 0}, ("zero_division", 0)),
    ("zero_division-exclude", {"zero_division": "exclude"}, ("zero_division", "exclude")),
    ("chunk_size", {"chunk_size": 100}, ("chunk_size", 100)),
]


def _run_files(out):
    return sorted((out / "runs").glob("*.json"))


@pytest.mark.parametrize("name, change, shown", CHANGES, ids=[c[0] for c in CHANGES])
def test_changing_any_input_computes_the_run_again(name, change, shown, tmp_path):
    out = tmp_path / "exp"
    first = run_experiment("quick", out, **BASE)
    assert first["n_run_now"] == 1
    again = run_experiment("quick", out, **BASE)
    assert again["n_run_now"] == 0 and again["n_cached"] == 1  # all equal: found finished
    changed = run_experiment("quick", out, **{**BASE, **change})
    assert changed["n_run_now"] == 1 and changed["n_cached"] == 0
    files = _run_files(out)
    assert len(files) == 2
    runs = [json.loads(f.read_text())["run"] for f in files]
    field, value = shown
    assert len({json.dumps(r[field]) for r in runs}) == 2  # the two runs differ there
    assert value in [r[field] for r in runs]


def test_the_reported_case_more_windows_then_fewer(tmp_path, capsys):
    argv = ["experiment", "--out", str(tmp_path), "--streams", "MOA-Spher-5C-2A"]
    argv += ["--methods", "mlsom", "--grid-sizes", "2", "--seeds", "0", "--n-instances", "1500"]
    argv += ["--no-plots", "--no-progress"]
    assert main(argv + ["--windows", "50"]) == 0
    assert "1 runs (0 found finished, 1 run now)" in capsys.readouterr().out
    assert main(argv + ["--windows", "7"]) == 0
    assert "1 runs (0 found finished, 1 run now)" in capsys.readouterr().out
    curves = (tmp_path / "curves.csv").read_text().splitlines()
    assert len(curves) == 1 + 7  # the report is of the 7-window run
    assert main(argv + ["--windows", "7"]) == 0
    assert "1 runs (1 found finished, 0 run now)" in capsys.readouterr().out


@pytest.mark.parametrize("what", ["version", "format"])
def test_another_version_or_cache_format_computes_the_run_again(what, tmp_path, monkeypatch):
    out = tmp_path / "exp"
    assert run_experiment("quick", out, **BASE)["n_run_now"] == 1
    if what == "version":
        monkeypatch.setattr(experiment, "__version__", "99.0")
    else:
        monkeypatch.setattr(experiment, "CACHE_FORMAT", CACHE_FORMAT + 1)
    assert run_experiment("quick", out, **BASE)["n_run_now"] == 1
    assert len(_run_files(out)) == 2


def test_the_key_covers_every_field_of_a_run():
    run = Run("MOA-Spher-5C-2A", "mlsom", 3, 0, 1500)
    identity = run.identity()
    fields = {f.name for f in dataclasses.fields(Run)}
    # a field added later is in the key without more work; the label-protocol fields only
    # when it is on (test_experiment.test_run_keys_without_labels_are_those_of_before)
    labels = {"label_fraction", "label_delay", "label_seed"}
    # a data file and a scaling only when given (the keys of earlier versions stay)
    optional = {"data_file", "scale"}
    assert fields - labels - optional <= set(identity)
    every = dataclasses.replace(
        run, label_fraction=0.1, data_file=DataFile("x.arff"), scale="minmax_on_train"
    )
    assert fields <= set(every.identity())
    assert {"stream_seed", "mlsom_version", "cache_format"} <= set(identity)
    changed = {
        "stream": "MOA-Spher-3C-2A",
        "method": "MINAS-BR",
        "grid_size": 4,
        "seed": 1,
        "n_instances": 2000,
        "params": {"learning_rate": 0.1},
        "n_windows": 7,
        "zero_division": "mulan",
        "chunk_size": 10,
        "data": "0123456789abcdef",
        "label_fraction": 0.5,
        "label_delay": 10,
        "label_seed": 3,
        "stream_source": "generator-v1",
        "data_file": DataFile("x.arff"),
        "scale": "minmax_on_train",
    }
    assert set(changed) == fields  # every field is tried below
    keys = {run.key}
    for name, value in changed.items():
        base = run if name == "label_fraction" else dataclasses.replace(run, label_fraction=0.1)
        keys.add(dataclasses.replace(base, **{name: value}).key)
    assert len(keys) == 1 + len(changed)
    assert Run("MOA-Spher-5C-2A", "mlsom", 3, 0, 1500).key == run.key
    a = Run("S", "mlsom", 3, 0, params={"learning_rate": 0.1, "n_epochs": 5})
    b = Run("S", "mlsom", 3, 0, params={"n_epochs": 5, "learning_rate": 0.1})
    assert a.key == b.key  # the order of the parameters does not matter


def test_runs_are_canonical_so_equal_runs_share_a_key():
    # the same run spelt two ways: one key (and n_instances is not lost with the other spelling)
    a = check_run(Run("moa-spher-5c-2a", "mlsom", None, 0, None))
    b = check_run(Run("MOA-Spher-5C-2A", "mlsom", 5, 0, 95_529))
    assert a == b and a.key == b.key and a.label == "mlsom-d5"
    assert check_run(Run("moa-spher-5c-2a", "mlsom", 2, 0, 1500)).n_instances == 1500
    # a real stream has no n_instances: the quick profile's 20,000 is not put in its key
    (yeast,) = plan("quick", streams=["Yeast"], methods=["BR-J48"])
    assert yeast.n_instances is None


@pytest.mark.parametrize(
    "run, match",
    [
        (Run("MOA-Spher-5C-2A", "mlsom", 0, 0, 1500), "grid_size must be >= 1"),
        (Run("MOA-Spher-5C-2A", "mlsom", -2, 0, 1500), "grid_size must be >= 1"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2.5, 0, 1500), "grid_size must be an integer"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, -1, 1500), "seed must be >= 0"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 999), "n_instances must be >= 1000"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, n_windows=1351), "1350 test instances"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, zero_division=2), "zero_division"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, chunk_size=0), "chunk_size"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, {"nope": 1}), "unknown parameter 'nope'"),
        (Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, {"grid_size": 3}), "give it as grid_size="),
        (Run("MOA-Spher-5C-2A", "BR-J48", None, 0, 1500, {"random_state": 3}), "seed="),
        (Run("MOA-Spher-5C-2A", "BR-J48", 3, 0, 1500), "grid_size applies to mlsom only"),
        (Run("Yeast", "mlsom", 2, 0, 1500), "generated streams only"),
        (Run("No-such", "mlsom", 2, 0, 1500), "unknown stream"),
        (Run("MOA-Spher-5C-2A", "SVM-42", None, 0, 1500), "unknown method"),
    ],
)
def test_check_run_refuses_what_would_run_wrongly(run, match):
    # grid_size 0 used to run d=5 and record 0
    with pytest.raises((ValueError, TypeError), match=match) as info:
        check_run(run)
    assert info.value.argument  # the command line names the option from it


def test_plan_refuses_a_bad_design_before_any_run(tmp_path):
    for kwargs, match in [
        ({"grid_sizes": [0]}, "grid_sizes: grid_size must be >= 1"),
        ({"grid_sizes": [2, 2]}, "given twice"),
        ({"seeds": []}, "seeds is empty"),
        ({"streams": "MOA-Spher-5C-2A"}, "streams must be a list"),
        ({"methods": ["BR-J48"], "grid_sizes": [2]}, "not among the methods"),
        ({"streams": ["Yeast"], "n_instances": 2000}, "generated streams only"),
    ]:
        with pytest.raises((ValueError, TypeError), match=match):
            plan("quick", **{"methods": ["mlsom"], **kwargs})
    with pytest.raises(ValueError, match="grid_sizes: grid_size must be >= 1"):
        run_experiment("quick", tmp_path / "exp", **{**BASE, "grid_sizes": [0]})
    assert not (tmp_path / "exp").exists()


def _yeast_home(tmp_path):
    home = tmp_path / "data"
    home.mkdir()
    with gzip.open(DATA / "yeast.arff.gz") as src, open(home / "yeast.arff", "wb") as dst:
        shutil.copyfileobj(src, dst)
    shutil.copy(DATA / "yeast.xml", home)
    return home


def test_a_real_streams_data_files_are_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    home = _yeast_home(tmp_path)
    out = tmp_path / "exp"
    kwargs = dict(BASE, streams=["Yeast"], n_instances=None, n_windows=5, data_home=home)
    assert run_experiment("quick", out, **kwargs)["n_run_now"] == 1
    # a new modification time, the same content: found finished
    arff = home / "yeast.arff"
    st = arff.stat()
    os.utime(arff, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert run_experiment("quick", out, **kwargs)["n_run_now"] == 0
    # other content (an ARFF comment at the end): computed again
    with open(arff, "a") as f:
        f.write("% edited\n")
    assert run_experiment("quick", out, **kwargs)["n_run_now"] == 1
    # the same files in another folder: found finished
    moved = tmp_path / "moved"
    shutil.copytree(home, moved)
    assert run_experiment("quick", out, **{**kwargs, "data_home": moved})["n_run_now"] == 0
    runs = [json.loads(f.read_text())["run"] for f in _run_files(out)]
    assert len({r["data"] for r in runs}) == 2


def test_missing_data_files_are_refused_even_for_finished_runs(tmp_path, monkeypatch):
    # their content is part of the key: without them the runs cannot be recognised
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    home = _yeast_home(tmp_path)
    kwargs = dict(BASE, streams=["Yeast"], n_instances=None, n_windows=5)
    run_experiment("quick", tmp_path / "exp", data_home=home, **kwargs)
    with pytest.raises(FileNotFoundError, match="Yeast.*Leave these streams out"):
        run_experiment("quick", tmp_path / "exp", **kwargs)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_an_empty_file_in_place_of_a_run_file_is_computed_again(tmp_path):
    """Not a finished run: recomputed and replaced, never opened (a FIFO would block)."""
    out = tmp_path / "exp"
    run_experiment("quick", out, **BASE)
    (path,) = _run_files(out)
    for plant in (lambda p: os.mkfifo(p), lambda p: p.write_bytes(b"")):
        path.unlink()
        plant(path)
        again = run_experiment("quick", out, **BASE)
        assert again["n_run_now"] == 1
        assert path.is_file() and json.loads(path.read_text())["run"]["stream"]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b"[" * 100_000 + b"]" * 100_000],
    ids=["text", "list", "deep"],
)
def test_a_damaged_run_file_is_named_in_one_error(tmp_path, content):
    out = tmp_path / "exp"
    run_experiment("quick", out, **BASE)
    (path,) = _run_files(out)
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rf"run file '.*{path.name}' is damaged .* delete it"):
        run_experiment("quick", out, **BASE)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_a_data_file_is_refused_without_blocking(tmp_path, monkeypatch):
    import threading

    monkeypatch.delenv("MLSOM_DATA", raising=False)
    home = tmp_path / "data"
    home.mkdir()
    shutil.copy(DATA / "yeast.xml", home)
    os.mkfifo(home / "yeast.arff")
    kwargs = dict(BASE, streams=["Yeast"], n_instances=None, n_windows=5, data_home=home)
    caught = []

    def target():
        try:
            run_experiment("quick", tmp_path / "exp", **kwargs)
        except Exception as exc:  # inspected below
            caught.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "a FIFO data file blocked the experiment"
    # the finder takes regular files only: the FIFO is no data file (else: "not a regular file")
    assert caught and isinstance(caught[0], (FileNotFoundError, ValueError))
    assert "yeast.arff" in str(caught[0]) or "not a regular file" in str(caught[0])


def test_the_spherical_generator_is_in_the_key():
    """A generated MOA-Spher stream's run names its generator: the calibrated one (the default)
    and the first one never share a run file, and the first one's key is that of the runs made
    before the field existed (its identity has no stream_source)."""
    new = check_run(Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500))
    old = check_run(Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500, stream_source="generator-v1"))
    assert new.stream_source == "generator" and new.identity()["stream_source"] == "generator"
    assert "stream_source" not in old.identity() and old.key != new.key
    assert Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500).key == new.key  # None is the default
    # the other streams have no generator to choose: their keys are those of before
    (rb,) = plan("quick", streams=["Mult-Spher-RB"], methods=["BR-J48"], n_instances=1500)
    assert rb.stream_source is None and "stream_source" not in rb.identity()
    for run, message in [
        (Run("Mult-Spher-RB", "BR-J48", None, 0, 1500, stream_source="generator"), "Mult-Spher"),
        (Run("MOA-Spher-5C-2A", "BR-J48", None, 0, 1500, stream_source="v1"), "'v1'"),
    ]:
        with pytest.raises(ValueError, match=message) as exc:
            check_run(run)
        assert exc.value.argument == "stream_source"
    with pytest.raises(ValueError, match="stream_source='generator-v1'"):
        plan("quick", streams=["Yeast"], methods=["BR-J48"], stream_source="generator-v1")


def test_a_stream_fitted_to_its_own_prefix_has_its_calibration_in_the_key(monkeypatch):
    """3C-2A's generator was refitted to its own prefix: its runs name the fit, so a run made
    while it was calibrated to 5C-2A (stream_source="generator" then, its key that of
    "generator-v2" but for the name) is never taken for one on today's stream. 5C-2A's runs
    keep the keys they had."""
    new = check_run(Run("MOA-Spher-3C-2A", "mlsom", 2, 0, 1500))
    v2 = check_run(Run("MOA-Spher-3C-2A", "mlsom", 2, 0, 1500, stream_source="generator-v2"))
    ident = new.identity()
    assert ident["stream_source"] == "generator"
    assert ident["stream_calibration"]["speed_factor"] == 0.70
    assert "stream_calibration" not in v2.identity() and new.key != v2.key
    five = check_run(Run("MOA-Spher-5C-2A", "mlsom", 2, 0, 1500))
    assert "stream_calibration" not in five.identity()
    key, five_key = new.key, five.key
    monkeypatch.setattr(experiment, "SPHERICAL_OWN_CALIBRATION", {})  # the keys of before
    assert "stream_calibration" not in new.identity() and new.key != key
    assert five.key == five_key


def test_the_first_generator_runs_on_the_first_streams(tmp_path):
    base = {**BASE, "stream_source": "generator-v1"}
    first = run_experiment("quick", tmp_path, **base)
    assert first["n_run_now"] == 1
    assert run_experiment("quick", tmp_path, **base)["n_cached"] == 1
    assert run_experiment("quick", tmp_path, **BASE)["n_run_now"] == 1  # the calibrated one
    records = [json.loads(f.read_text())["run"] for f in _run_files(tmp_path)]
    assert sorted(r.get("stream_source", "generator-v1") for r in records) == [
        "generator",
        "generator-v1",
    ]


def _add_to_every_tp(record, amount):
    for window in record["label_counts"]:
        for row in window:
            row[0] += amount


# a finished run's file, edited: (what, change of its record, the reason the error gives)
TAMPERED_RUNS = [
    (
        "counts",
        lambda r: _add_to_every_tp(r, 1000),
        r"data is not a valid stored StreamEvaluation: label_counts of window 0, label 0 add up "
        r"to \d+ \(TP \+ FP \+ FN \+ TN\), but the window has 135 rows",
    ),
    (
        "run of another stream",
        lambda r: r["run"].__setitem__("stream", "MOA-Spher-3C-2A"),
        r'it records the run with stream="MOA-Spher-3C-2A", but it stands for the run with '
        r'stream="MOA-Spher-5C-2A"',
    ),
    (
        "grid size as a float",
        lambda r: r["run"].__setitem__("grid_size", 2.0),
        r"it records the run with grid_size=2.0, but it stands for the run with grid_size=2",
    ),
    (
        "no label",
        lambda r: r["run"].pop("label"),
        r"its run record has no 'label'",
    ),
    (
        "no wall_seconds",
        lambda r: r["run"].pop("wall_seconds"),
        r"its run record has no 'wall_seconds'",
    ),
    (
        "wall_seconds as text",
        lambda r: r["run"].__setitem__("wall_seconds", "1"),
        r"its run record has wall_seconds='1', not a duration",
    ),
    (
        "an unknown run field",
        lambda r: r["run"].__setitem__("extra", 1),
        r"its run record has unknown fields \['extra'\]",
    ),
    (
        "results of another stream",
        lambda r: r.__setitem__("stream", "MOA-Spher-3C-2A"),
        r"its results have stream='MOA-Spher-3C-2A', but the run has stream='MOA-Spher-5C-2A'",
    ),
    (
        "results of another seed",
        lambda r: r.__setitem__("seed", 1),
        r"its results have seed=1, but the run has seed=0",
    ),
    (
        "no n_train",
        lambda r: r.pop("n_train"),
        r"its results have no n_train",
    ),
]


def test_a_tampered_run_file_is_named_in_one_error(tmp_path):
    """A run file is taken for its run only when it is that run's record, and valid: its run
    fields, its timing and its results are checked when the experiment resumes."""
    out = tmp_path / "exp"
    run_experiment("quick", out, **BASE)
    (path,) = _run_files(out)
    original = path.read_text()
    for _what, change, reason in TAMPERED_RUNS:
        record = json.loads(original)
        change(record)
        path.write_text(json.dumps(record))
        with pytest.raises(
            ValueError, match=rf"run file '.*{path.name}' is damaged \({reason}.*\); delete it"
        ):
            run_experiment("quick", out, **BASE)
    path.write_text(original)
    again = run_experiment("quick", out, **BASE)
    assert again["n_cached"] == 1 and again["n_run_now"] == 0
