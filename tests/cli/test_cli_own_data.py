"""A researcher's own data on the command line: ``mlsom run --data FILE`` and ``mlsom experiment
--data FILE ...`` (ARFF with MEKA's -C, Mulan's XML or --labels; .npz), how the labelled part is
chosen, --scale, ``experiment --param``, and the d that ``grid_size="auto"`` chose in every
output."""

import csv
import io
import json

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main, run_demo
from mlsom.datasets import load_file, minmax_scale
from mlsom.protocol import evaluate

N, A, L = 240, 4, 3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    Y = (rng.random((N, L)) < 0.35).astype(np.uint8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    X = rng.normal(size=(N, A)) * 0.3 + Y @ rng.normal(size=(L, A)) * 2.0
    X[:, 1] *= 500.0  # a feature on another scale: scaling changes the distances
    return X, Y


def _arff(path, X, Y, *, meka=True):
    """An ARFF file: MEKA's (labels first, -C in the relation) or Mulan's (labels last)."""
    labels = [f"@attribute lab{j} {{0,1}}" for j in range(Y.shape[1])]
    feats = [f"@attribute f{j} numeric" for j in range(X.shape[1])]
    relation = f"'mine: -C {Y.shape[1]}'" if meka else "mine"
    header = [f"@relation {relation}", *(labels + feats if meka else feats + labels), "@data"]
    rows = [
        ",".join([*map(str, y), *map(repr, x)] if meka else [*map(repr, x), *map(str, y)])
        for x, y in zip(X.tolist(), Y.tolist(), strict=True)
    ]
    path.write_text("\n".join(header + rows) + "\n")
    return path


def _xml(path, n_labels):
    labels = "".join(f'<label name="lab{j}"></label>' for j in range(n_labels))
    path.write_text(
        f'<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels">{labels}</labels>'
    )
    return path


@pytest.fixture
def meka(tmp_path):
    return _arff(tmp_path / "mine.arff", *_data())


def _run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# ------------------------------------------------------------------------------ mlsom run


def test_run_evaluates_a_meka_file_with_its_first_tenth_labelled(meka, tmp_path, capsys):
    out = tmp_path / "r.json"
    status, text, err = _run(
        ["run", "--data", str(meka), "--grid-size", "2", "--windows", "4", "--out", str(out)],
        capsys,
    )
    assert status == 0, err
    assert text.startswith(f"mlsom-d2 on mine.arff (seed 0): {N - 24} test instances, 4 windows")
    result = json.loads(out.read_text())
    assert result["n_train"] == 24 and result["stream"] == "mine.arff"
    assert result["info"]["fitted_grid_size"] == 2
    # the numbers of the protocol on the file's first 24 rows and the rest
    X, Y = _data()
    ev = evaluate(
        SOMStreamClassifier(grid_size=2, random_state=0),
        (X[24:], Y[24:]),
        X_train=X[:24],
        Y_train=Y[:24],
        n_windows=4,
    )
    np.testing.assert_array_equal(np.asarray(result["label_counts"]), ev.label_counts)


def test_run_prints_and_stores_the_grid_size_auto_chose(meka, tmp_path, capsys):
    out = tmp_path / "r.json"
    status, text, err = _run(
        ["run", "--data", str(meka), "--grid-size", "auto", "--windows", "3", "--out", str(out)],
        capsys,
    )
    assert status == 0, err
    X, Y = _data()
    chosen = SOMStreamClassifier(grid_size="auto", random_state=0).fit(X[:24], Y[:24]).grid_size_
    assert f"  grid size chosen by auto on the labelled set: d = {chosen}\n" in text
    assert json.loads(out.read_text())["info"]["fitted_grid_size"] == chosen
    # a d given is not announced as a choice
    status, text, _ = _run(["run", "--data", str(meka), "--windows", "3"], capsys)
    assert status == 0 and "chosen by auto" not in text


@pytest.mark.parametrize(
    "options, n_train",
    [
        (["--train-rows", "60"], 60),
        (["--train-fraction", "0.25"], 60),
        (["--train-fraction", "0.25", "--split", "balanced"], 60),
    ],
)
def test_run_chooses_the_labelled_part_as_told(options, n_train, meka, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["run", "--data", str(meka), "--grid-size", "2", "--windows", "3", "--out", str(out)]
    status, text, err = _run(argv + options, capsys)
    assert status == 0, err
    result = json.loads(out.read_text())
    assert result["n_train"] == n_train and result["n_test"] == N - n_train
    split = "balanced" if "balanced" in options else "prefix"
    assert result["info"]["stream_info"]["split"] == split
    expected = load_file(meka, train_rows=n_train, split=split)
    assert result["info"]["stream_info"]["cardinality"] == expected.info["cardinality"]


def test_run_reads_a_mulan_file_with_its_xml_or_its_labels_location(tmp_path, capsys):
    X, Y = _data()
    mulan = _arff(tmp_path / "mulan.arff", X, Y, meka=False)
    common = ["run", "--grid-size", "2", "--windows", "3"]
    # no -C and no mulan.xml beside it: the message says which options tell the labels
    status, _, err = _run([*common, "--data", str(mulan)], capsys)
    assert status == 2
    assert err.startswith("mlsom: error: argument --data: ") and str(mulan) in err
    assert "give --xml FILE or --labels last:N" in err and "xml=" not in err
    xml = _xml(tmp_path / "labels-of-mine.xml", L)
    results = []
    for options in (["--xml", str(xml)], ["--labels", f"last:{L}"]):
        out = tmp_path / f"{options[0][2:]}.json"
        status, _, err = _run([*common, "--data", str(mulan), *options, "--out", str(out)], capsys)
        assert status == 0, err
        results.append(json.loads(out.read_text()))
    assert results[0]["label_names"] == results[1]["label_names"] == ["lab0", "lab1", "lab2"]
    assert results[0]["label_counts"] == results[1]["label_counts"]


def test_run_reads_an_npz_file(tmp_path, capsys, meka):
    X, Y = _data()
    npz = tmp_path / "mine.npz"
    np.savez(npz, X=X, Y=Y)
    outs = []
    for path in (npz, meka):
        out = tmp_path / f"{path.suffix[1:]}.json"
        argv = ["run", "--data", str(path), "--grid-size", "2", "--windows", "3"]
        status, _, err = _run([*argv, "--out", str(out)], capsys)
        assert status == 0, err
        outs.append(json.loads(out.read_text()))
    assert outs[0]["label_counts"] == outs[1]["label_counts"]  # the same data, the same run


def test_run_scales_with_the_labelled_parts_minmax_only_when_asked(meka, tmp_path, capsys):
    counts = {}
    for scale in ([], ["--scale", "minmax_on_train"]):
        out = tmp_path / f"r{len(scale)}.json"
        argv = ["run", "--data", str(meka), "--grid-size", "2", "--windows", "3"]
        status, _, err = _run([*argv, *scale, "--out", str(out)], capsys)
        assert status == 0, err
        result = json.loads(out.read_text())
        assert result["info"].get("scale") == (scale[1] if scale else None)
        counts[bool(scale)] = np.asarray(result["label_counts"])
    X, Y = _data()
    X_tr, X_st = minmax_scale(X[:24], X[24:])
    by_hand = evaluate(
        SOMStreamClassifier(grid_size=2, random_state=0),
        (X_st, Y[24:]),
        X_train=X_tr,
        Y_train=Y[:24],
        n_windows=3,
    )
    np.testing.assert_array_equal(counts[True], by_hand.label_counts)
    assert not np.array_equal(counts[True], counts[False])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--stream", "MOA-Spher-5C-2A", "--xml", "x.xml"], "--xml applies to a data file"),
        (["--stream", "MOA-Spher-5C-2A", "--split", "balanced"], "--split applies to a data"),
        (["--data", "{meka}", "--train-fraction", "1.5"], "argument --train-fraction: must be"),
        (["--data", "{meka}", "--train-rows", "0"], "argument --train-rows: must be >= 1"),
        (["--data", "{meka}", "--train-rows", "9", "--train-fraction", "0.2"], "--train-rows"),
        (["--data", "{meka}", "--labels", "last"], "argument --labels: expected first:N"),
        (["--data", "{tmp}/mine.csv"], "argument --data: data file '{tmp}/mine.csv': mlsom reads"),
        (["--data", "{tmp}/absent.arff"], "argument --data: "),
        (["--data", "{meka}", "--stream", "Yeast"], "argument --stream: not allowed with"),
        (["--data", "{meka}", "--n-instances", "5000"], "argument --n-instances: n_instances"),
        (["--data", "{meka}", "--data-home", "{tmp}"], "--data-home {tmp} applies to the real"),
        (["--data", "{meka}", "--xml", "{meka}"], "argument --data: "),
        ([], "one of the arguments --stream --novelty-stream --data is required"),
    ],
)
def test_run_refuses_bad_data_options_naming_them(argv, message, meka, tmp_path, capsys):
    (tmp_path / "mine.csv").write_text("1,2,0\n")
    fill = {"meka": str(meka), "tmp": str(tmp_path)}
    argv = [a.format(**fill) for a in argv]
    status, text, err = _run(["run", *argv], capsys)
    assert status == 2 and text == ""
    assert err.startswith("mlsom: error: ") and err.count("\n") == 1
    assert message.format(**fill) in err, err


def test_run_names_a_labelled_part_that_leaves_no_stream(meka, capsys):
    status, _, err = _run(["run", "--data", str(meka), "--train-rows", str(N)], capsys)
    assert status == 1
    assert f"train_rows={N}, but {meka} has {N} rows" in err


# ------------------------------------------------------------------------------ mlsom experiment


def _experiment(meka, out, *extra, grid_sizes=("auto", "2")):
    return [
        "experiment",
        "--data",
        str(meka),
        "--methods",
        "mlsom",
        "every-label",
        "--grid-sizes",
        *grid_sizes,
        "--seeds",
        "0",
        "1",
        "--windows",
        "3",
        "--no-plots",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]


def test_experiment_runs_a_file_and_stores_the_grid_size_auto_chose(meka, tmp_path, capsys):
    out = tmp_path / "exp"
    status, text, err = _run(_experiment(meka, out, "--param", "variant=robust"), capsys)
    assert status == 0, err
    records = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    chosen = {
        r["run"]["seed"]: r["info"]["fitted_grid_size"]
        for r in records
        if r["run"]["label"] == "mlsom-dauto"
    }
    assert all(1 <= chosen[seed] <= 10 for seed in (0, 1))  # (run --data checks the choice)
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["stream"] for r in rows} == {"mine.arff"} and len(rows) == 5
    fitted = {(r["label"], r["seed"]): r["fitted_grid_size"] for r in rows}
    assert fitted[("mlsom-dauto", "0")] == str(chosen[0])
    assert fitted[("mlsom-dauto", "1")] == str(chosen[1])
    assert fitted[("mlsom-d2", "0")] == fitted[("mlsom-d2", "1")] == "2"
    assert fitted[("every-label", "0")] == ""
    summary = json.loads((out / "summary.json").read_text())
    assert summary["fitted_grid_size"]["mine.arff"] == {
        "mlsom-dauto": [chosen[0], chosen[1]],
        "mlsom-d2": [2, 2],
    }
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("mlsom-dauto"))
    if chosen[0] == chosen[1]:
        assert line.endswith(f"(auto chose d = {chosen[0]})")
    else:
        assert line.endswith(f"(auto chose d = {chosen[0]}, {chosen[1]} over the seeds)")
    # --param went to the methods that take it, and only to them
    params = {r["run"]["label"]: r["run"]["params"] for r in records}
    assert params == {
        "mlsom-dauto": {"variant": "robust"},
        "mlsom-d2": {"variant": "robust"},
        "every-label": {},
    }


def test_experiment_on_a_file_resumes_and_recomputes_when_the_file_changes(meka, tmp_path, capsys):
    out = tmp_path / "exp"
    argv = _experiment(meka, out, "--scale", "minmax_on_train", grid_sizes=["2", "3"])
    assert _run(argv, capsys)[0] == 0
    status, text, _ = _run(argv, capsys)
    assert status == 0 and text.startswith("5 runs (5 found finished, 0 run now)")
    _arff(meka, *_data(seed=1))  # the same name, other content
    status, text, _ = _run(argv, capsys)
    assert status == 0 and text.startswith("5 runs (0 found finished, 5 run now)")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--param", "no_such=1"], "argument --param: no method of the experiment"),
        (["--param", "grid_size=3"], "conflicts with --grid-sizes"),
        (["--param", "random_state=3"], "conflicts with --seeds"),
        (["--param", "variant=sideways"], "argument --param: "),
        (["--data", "{meka}", "{meka}"], "argument --data: {meka} is given twice"),
        (["--xml", "{tmp}/x.xml", "--data", "{meka}", "{tmp}/b.arff"], "--xml {tmp}/x.xml names"),
        (["--train-rows", "-1"], "argument --train-rows: must be >= 1"),
        (["--scale", "zscore"], "argument --scale: invalid choice: 'zscore'"),
        (["--n-instances", "2000"], "argument --n-instances: n_instances=2000 applies to"),
    ],
)
def test_experiment_refuses_bad_options_naming_them(extra, message, meka, tmp_path, capsys):
    _arff(tmp_path / "b.arff", *_data())
    fill = {"meka": str(meka), "tmp": str(tmp_path)}
    extra = [a.format(**fill) for a in extra]
    status, text, err = _run(_experiment(meka, tmp_path / "exp", *extra), capsys)
    assert status == 2 and text == ""
    assert message.format(**fill) in err, err
    assert not (tmp_path / "exp" / "runs").exists() or not any(
        (tmp_path / "exp" / "runs").iterdir()
    )


def test_the_demo_prints_the_grid_size_auto_chose():
    out = io.StringIO()
    res = run_demo(n_instances=2000, grid_size="auto", n_windows=5, plot=False, file=out)
    chosen = res["results"]["adaptive"].info["fitted_grid_size"]
    assert f"\ngrid size chosen by auto on the labelled set: d = {chosen}\n" in out.getvalue()
    assert 1 <= chosen <= 10
