"""The reference predictors (mlsom.references): their predictions against plain NumPy, and their
runs through the protocol, 'mlsom run', 'mlsom experiment' and the reports, marked as
references."""

import csv
import json
import math

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom._cli import main
from mlsom.exceptions import NotFittedError
from mlsom.experiment import (
    CHEAP_REFERENCES,
    PROFILES,
    REFERENCE_MARK,
    available_methods,
    is_reference,
    make_method,
    plan,
    run_experiment,
)
from mlsom.protocol import evaluate
from mlsom.references import (
    REFERENCES,
    EveryLabel,
    FrozenSOM,
    LabelRate,
    MostFrequentLabels,
)


@pytest.fixture(scope="module")
def stream():
    """A small stream: 40 labelled rows whose 5 labels occur 10, 25, 25, 0 and 40 times (z =
    2.5, so the 3 most frequent: 4, then 1 and 2), and 103 test rows."""
    rng = np.random.default_rng(1)
    counts = [10, 25, 25, 0, 40]
    Y_train = np.zeros((40, 5), dtype=np.uint8)
    for j, c in enumerate(counts):
        Y_train[rng.permutation(40)[:c], j] = 1
    X_train = rng.random((40, 3))
    X_stream = rng.random((103, 3))
    Y_stream = (rng.random((103, 5)) < 0.4).astype(np.uint8)
    return X_train, Y_train, X_stream, Y_stream


def _top_z(Y):
    """The ⌈z⌉ most frequent labels of Y as a 0/1 row, ties to the lower column, in plain
    Python."""
    z = Y.sum() / len(Y)
    counts = Y.sum(axis=0).astype(int)
    chosen = sorted(range(Y.shape[1]), key=lambda j: (-counts[j], j))[: math.ceil(z)]
    row = np.zeros(Y.shape[1], dtype=np.uint8)
    row[chosen] = 1
    return row


def _label_rate(Y, n, seed):
    return (np.random.default_rng(seed).random((n, Y.shape[1])) < Y.mean(axis=0)).astype(np.uint8)


# --------------------------------------------------------------------------- the predictions


def test_every_label_predicts_every_label(stream):
    X_train, Y_train, X_stream, _ = stream
    Y = EveryLabel().fit(X_train, Y_train).predict(X_stream)
    assert Y.dtype == np.uint8 and Y.shape == (103, 5) and (Y == 1).all()


def test_top_z_predicts_the_most_frequent_labels(stream):
    X_train, Y_train, X_stream, _ = stream
    model = MostFrequentLabels().fit(X_train, Y_train)
    assert model.labels_.tolist() == [4, 1, 2]
    assert (model.predict(X_stream) == _top_z(Y_train)).all()
    # a whole z (1) takes one label, a tie the lower column; no positive label: no label
    Y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0]])
    assert _top_z(Y).tolist() == [1, 0, 0]
    assert MostFrequentLabels().fit(np.zeros((4, 1)), Y).predict(np.zeros((2, 1))).tolist() == [
        [1, 0, 0],
        [1, 0, 0],
    ]
    none = MostFrequentLabels().fit(np.zeros((3, 1)), np.zeros((3, 2)))
    assert not none.predict(np.zeros((4, 1))).any()


def test_label_rate_draws_each_label_at_its_labelled_set_rate(stream):
    X_train, Y_train, X_stream, _ = stream
    Y = LabelRate(random_state=7).fit(X_train, Y_train).predict(X_stream)
    assert (Y == _label_rate(Y_train, 103, 7)).all()
    assert not Y[:, 3].any() and Y[:, 4].all()  # rates 0 and 1
    # the rates over many rows are the labelled set's
    many = LabelRate(random_state=0).fit(X_train, Y_train).predict(np.zeros((20_000, 3)))
    assert np.abs(many.mean(axis=0) - Y_train.mean(axis=0)).max() < 0.02


def test_label_rate_is_reproducible_whatever_the_chunks(stream):
    X_train, Y_train, X_stream, _ = stream
    whole = LabelRate(random_state=3).fit(X_train, Y_train).predict(X_stream)
    model = LabelRate(random_state=3).fit(X_train, Y_train)
    edges = [0, 1, 8, 8, 50, 103]  # an empty chunk too
    parts = [model.predict(X_stream[a:b]) for a, b in zip(edges, edges[1:], strict=False)]
    assert (np.vstack(parts) == whole).all()
    # fit starts the sequence again; another seed gives other draws
    again = model.fit(X_train, Y_train).predict(X_stream)
    assert (again == whole).all()
    other = LabelRate(random_state=4).fit(X_train, Y_train).predict(X_stream)
    assert (other != whole).any()


def test_mlsom_frozen_is_mlsom_fitted_then_frozen(stream):
    X_train, Y_train, X_stream, _ = stream
    params = {"learning_rate": 0.1, "variant": "robust"}
    frozen = make_method("mlsom-frozen", grid_size=2, seed=3, params=params)
    assert isinstance(frozen, FrozenSOM) and frozen.kind == "batch"
    assert frozen.get_params() == SOMStreamClassifier(2, random_state=3, **params).get_params()
    assert not hasattr(frozen, "predict_stream") and not hasattr(frozen, "partial_fit")
    som = SOMStreamClassifier(2, random_state=3, **params).fit(X_train, Y_train)
    Y = frozen.fit(X_train, Y_train).predict(X_stream)
    assert (Y == som.predict(X_stream)).all()
    assert frozen.estimator_.grid_size_ == 2 and repr(frozen).startswith("FrozenSOM(")


def test_the_references_refuse_bad_input(stream):
    X_train, Y_train, X_stream, _ = stream
    for cls in (EveryLabel, LabelRate, MostFrequentLabels, FrozenSOM):
        with pytest.raises(NotFittedError, match="not fitted"):
            cls().predict(X_stream)
    model = MostFrequentLabels().fit(X_train, Y_train)
    with pytest.raises(ValueError, match="X has 2 features, but the model was fitted with 3"):
        model.predict(X_stream[:, :2])
    with pytest.raises(ValueError, match="Y has 39 rows but X has 40"):
        EveryLabel().fit(X_train, Y_train[1:])
    with pytest.raises(ValueError, match="X has no row"):
        MostFrequentLabels().fit(X_train[:0], Y_train[:0])
    with pytest.raises(ValueError, match="random_state must be >= 0, got -1"):
        LabelRate(random_state=-1).fit(X_train, Y_train)
    with pytest.raises(TypeError, match="'bogus'"):
        FrozenSOM(bogus=1)


# --------------------------------------------------------------------------- the registry


def test_the_registry_knows_and_marks_the_references():
    assert set(REFERENCES) == {"every-label", "label-rate", "top-z", "mlsom-frozen"}
    assert set(REFERENCES) <= set(available_methods())
    for name, cls in REFERENCES.items():
        assert is_reference(name) and cls.reference is True and cls.kind == "batch"
    assert not any(is_reference(m) for m in ("mlsom", "MINAS-BR", "BR-J48"))
    assert make_method("label-rate", seed=5).get_params() == {"random_state": 5}
    assert make_method("every-label", seed=5).get_params() == {}
    with pytest.raises(ValueError, match="unknown parameter 'k' for top-z; its parameters: none"):
        make_method("top-z", params={"k": 2})
    with pytest.raises(ValueError, match="grid_size applies to mlsom only"):
        make_method("top-z", grid_size=3)
    with pytest.raises(ValueError, match="unknown method 'top-k'; valid: .*top-z"):
        make_method("top-k")


def test_plan_runs_the_references_like_the_other_methods():
    runs = plan(
        "quick",
        streams=["MOA-Spher-5C-2A"],
        methods=["every-label", "label-rate", "top-z", "mlsom-frozen"],
        grid_sizes=[2, 3],
        seeds=[0, 1, 2],
    )
    labels = sorted(r.label for r in runs)
    assert labels.count("every-label") == labels.count("top-z") == 1  # deterministic
    assert labels.count("label-rate") == 3  # seeded: once per seed
    assert labels.count("mlsom-frozen-d2") == labels.count("mlsom-frozen-d3") == 3
    with pytest.raises(ValueError, match=r"grid_sizes=\[2\] apply to mlsom .*not among"):
        plan("quick", methods=["every-label"], grid_sizes=[2])
    with pytest.raises(ValueError, match="unknown method 'every_label'"):
        plan("quick", methods=["every_label"])
    # labels that arrive: the references learn none, so they run once, as in the paper
    runs = plan(
        "quick",
        streams=["MOA-Spher-5C-2A"],
        methods=["mlsom-frozen", "top-z"],
        grid_sizes=[2],
        seeds=[0],
        label_fractions=[0.1, 1],
    )
    assert [r.label_fraction for r in runs] == [None, None]


def test_the_profiles_run_the_cheap_references():
    assert set(CHEAP_REFERENCES) <= set(PROFILES["quick"]["methods"])
    assert "mlsom-frozen" not in PROFILES["quick"]["methods"]
    pytest.importorskip("sklearn")
    runs = plan("paper", streams=["MOA-Spher-5C-2A"], grid_sizes=[2], seeds=[0])
    methods = {r.method for r in runs}
    assert set(CHEAP_REFERENCES) <= methods and "mlsom-frozen" not in methods


# --------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize("chunk_size", [7, 1000])
def test_the_protocol_runs_each_reference(stream, chunk_size):
    X_train, Y_train, X_stream, Y_stream = stream
    expected = {
        "every-label": np.ones((103, 5), dtype=np.uint8),
        "label-rate": _label_rate(Y_train, 103, 2),
        "top-z": np.tile(_top_z(Y_train), (103, 1)),
        "mlsom-frozen": SOMStreamClassifier(2, random_state=2)
        .fit(X_train, Y_train)
        .predict(X_stream),
    }
    for name, Y_hat in expected.items():
        method = make_method(name, grid_size=2 if name == "mlsom-frozen" else None, seed=2)
        res = evaluate(
            method,
            (X_stream, Y_stream),
            X_train=X_train,
            Y_train=Y_train,
            n_windows=4,
            chunk_size=chunk_size,
            name=name,
            keep_predictions=True,
            label_fraction=0.5,  # labels that arrive reach none of them
        )
        assert res.kind == "batch" and res.info["labels"]["learns_labels"] is False, name
        assert (res.unpacked_predictions() == Y_hat).all(), name


# --------------------------------------------------------------------------- the command line

RUN = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "1500", "--windows", "5"]


def test_mlsom_run_runs_the_references_marked(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main([*RUN, "--method", "label-rate", "--seed", "3", "--out", str(out)]) == 0
    assert "label-rate (reference) on MOA-Spher-5C-2A (seed 3)" in capsys.readouterr().out
    first = json.loads(out.read_text())
    assert first["params"] == {"random_state": 3}
    assert main([*RUN, "--method", "label-rate", "--seed", "3", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["label_counts"] == first["label_counts"]
    argv = [*RUN, "--method", "mlsom-frozen", "--grid-size", "2", "--param", "learning_rate=0.1"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "mlsom-frozen-d2 (reference) on MOA-Spher-5C-2A" in capsys.readouterr().out
    params = json.loads(out.read_text())["params"]
    assert params["grid_size"] == 2 and params["learning_rate"] == 0.1
    for name in ("every-label", "top-z"):
        assert main([*RUN, "--method", name]) == 0
        assert f"{name} (reference) on MOA-Spher-5C-2A" in capsys.readouterr().out


def test_mlsom_run_names_a_bad_method_or_grid_size(capsys):
    assert main([*RUN, "--method", "every_label"]) == 2
    err = capsys.readouterr().err
    assert "argument --method: unknown method 'every_label'" in err and "every-label" in err
    assert main([*RUN, "--method", "top-z", "--grid-size", "3"]) == 2
    assert "grid_size applies to mlsom only" in capsys.readouterr().err


def test_a_tiny_experiment_marks_the_references(tmp_path, monkeypatch, capsys):
    """Through 'mlsom experiment': every reference is run, stored and marked in results.csv,
    summary.json, the printed tables, the statistics and the plots' legends."""
    from mlsom import experiment

    drawn = []

    def spy(name):
        def draw(data, **kw):
            drawn.append((name, list(data) if name == "curves" else list(data.methods)))
            return object()

        return draw

    monkeypatch.setattr(experiment, "plot_curves", spy("curves"))
    monkeypatch.setattr(experiment, "plot_nemenyi_heatmap", spy("nemenyi"))
    monkeypatch.setattr(experiment, "plot_critical_difference", spy("cd"))
    monkeypatch.setattr(experiment, "save_png", lambda fig, path: path)
    methods = ["mlsom", "every-label", "label-rate", "top-z", "mlsom-frozen"]
    argv = ["experiment", "--out", str(tmp_path), "--methods", *methods, "--no-progress"]
    argv += ["--streams", "MOA-Spher-5C-2A", "MOA-Spher-3C-2A", "--grid-sizes", "2"]
    assert main([*argv, "--seeds", "0", "--n-instances", "1500", "--windows", "5"]) == 0
    text = capsys.readouterr().out
    assert "10 runs (0 found finished, 10 run now)" in text
    refs = ["every-label", "label-rate", "mlsom-frozen-d2", "top-z"]
    assert REFERENCE_MARK == " (reference)"
    for label in ["every-label", "label-rate", "top-z"]:
        assert text.count(f"{label} (reference) ") == 3, label  # 2 streams, the ranks
    # mlsom-frozen: its runs on the streams, its best d in the ranks (a method of its own)
    assert text.count("mlsom-frozen-d2 (reference) ") == 2
    assert text.count("mlsom-frozen (best d) (reference) ") == 1
    assert "mlsom-d2 " in text and "mlsom-d2 (reference)" not in text
    with open(tmp_path / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["label"]: r["reference"] for r in rows} == {
        "mlsom-d2": "False",
        **dict.fromkeys(refs, "True"),
    }
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["references"] == refs
    stats = ["every-label", "label-rate", "mlsom-frozen (best d)", "top-z"]
    marked = [f"{m} (reference)" for m in stats]
    assert sorted(summary["statistics"]["methods"]) == sorted(["mlsom (best d)", *marked])
    curves = [f"{m} (reference)" for m in ["every-label", "label-rate", "top-z"]]
    curves.append("mlsom-frozen (d=2, best) (reference)")
    for name, shown in drawn:
        assert set(curves if name == "curves" else marked) <= set(shown), name
    n = len(experiment.RANKED_MEASURES)  # a CD diagram and a heat map each
    assert sorted(name for name, _ in drawn) == sorted(
        ["cd", "nemenyi"] * n + ["curves"] * 2 * len(experiment.PLOTTED_MEASURES)
    )
    # a second run finds every run finished
    assert (
        run_experiment(
            "quick",
            tmp_path,
            streams=["MOA-Spher-5C-2A", "MOA-Spher-3C-2A"],
            methods=methods,
            grid_sizes=[2],
            seeds=[0],
            n_instances=1500,
            n_windows=5,
            plots=False,
            progress=False,
        )["n_run_now"]
        == 0
    )
