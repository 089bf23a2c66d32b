"""grid_size="auto": d chosen from the labelled set alone (docs/method.md, "Choosing d from the
labelled set"), checked against a plain recomputation through the public API."""

import json
import pickle

import numpy as np
import pytest

from mlsom import AUTO_GRID_SIZES, SOMStreamClassifier
from tests.helpers.paths import DATA
from tests.helpers.streams import moving_blobs

X0, Y0 = moving_blobs()


def _f(Y, P):
    """Macro F, 0/0 = 1, label by label in plain Python."""
    out = []
    for j in range(Y.shape[1]):
        tp = int(np.sum((Y[:, j] == 1) & (P[:, j] == 1)))
        fp = int(np.sum((Y[:, j] == 0) & (P[:, j] == 1)))
        fn = int(np.sum((Y[:, j] == 1) & (P[:, j] == 0)))
        out.append(1.0 if tp + fp + fn == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(out) / len(out)


def _reference_scores(X, Y, seed, **params):
    """Each candidate's mean over 5 folds (fifths of the seed's permutation, each in the set's
    order) of its online phase's macro F; a fold whose rest has no positive is left out."""
    n = len(X)
    perm = np.random.default_rng(seed).permutation(n)
    edges = [n * i // 5 for i in range(6)]
    scores = {}
    for d in AUTO_GRID_SIZES:
        fs = []
        for i in range(5):
            held = np.sort(perm[edges[i] : edges[i + 1]])
            rest = np.setdiff1d(np.arange(n), held)
            if not Y[rest].any():
                continue  # no positive to fit a map on: the fold is left out for every d
            m = SOMStreamClassifier(grid_size=d, random_state=seed, **params)
            m.fit(X[rest], Y[rest])
            fs.append(_f(Y[held], m.predict_stream(X[held])))
        scores[d] = sum(fs) / len(fs)
    return scores


@pytest.fixture(scope="module")
def auto_model():
    return SOMStreamClassifier(grid_size="auto", random_state=3, n_epochs=20).fit(X0, Y0)


def test_the_choice_and_scores_match_a_plain_recomputation(auto_model):
    ref = _reference_scores(X0, Y0, 3, n_epochs=20)
    got = auto_model.grid_scores_
    assert list(got) == list(AUTO_GRID_SIZES)
    for d in AUTO_GRID_SIZES:
        assert got[d] == pytest.approx(ref[d], rel=1e-12, abs=1e-12)
    best = max(ref.values())
    assert auto_model.grid_size_ == min(d for d, v in ref.items() if v == best)
    # the scores differ between candidates: the choice is not a default
    assert len({round(v, 9) for v in got.values()}) > 1


def test_the_chosen_model_is_the_plain_fit_of_the_chosen_d(auto_model):
    plain = SOMStreamClassifier(grid_size=auto_model.grid_size_, random_state=3, n_epochs=20)
    plain.fit(X0, Y0)
    for a, b in zip(auto_model.weights_, plain.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(auto_model.T_, plain.T_)
    X1, _ = moving_blobs(100, seed=9)
    np.testing.assert_array_equal(auto_model.predict_stream(X1), plain.predict_stream(X1))
    assert auto_model.grid_size == "auto" and plain.grid_scores_ is None
    assert plain.grid_size_ == auto_model.grid_size_


def test_the_choice_is_reproducible_whatever_the_thread_count():
    a = SOMStreamClassifier(grid_size="auto", random_state=5, n_jobs=1, n_epochs=10).fit(X0, Y0)
    b = SOMStreamClassifier(grid_size="auto", random_state=5, n_jobs=2, n_epochs=10).fit(X0, Y0)
    assert a.grid_scores_ == b.grid_scores_ and a.grid_size_ == b.grid_size_
    for u, v in zip(a.weights_, b.weights_, strict=True):
        np.testing.assert_array_equal(u, v)


def test_a_generator_seed_is_drawn_once_and_reproducible():
    def run():
        rs = np.random.default_rng(11)
        return SOMStreamClassifier(grid_size="auto", random_state=rs, n_epochs=10).fit(X0, Y0)

    a, b = run(), run()
    assert a.grid_scores_ == b.grid_scores_
    for u, v in zip(a.weights_, b.weights_, strict=True):
        np.testing.assert_array_equal(u, v)


def test_float32_training_sets_choose_too():
    m = SOMStreamClassifier(grid_size="auto", random_state=0, n_epochs=10)
    m.fit(X0.astype(np.float32), Y0)
    assert m.weights_[0].dtype == np.float32
    assert m.grid_size_ in AUTO_GRID_SIZES and len(m.grid_scores_) == len(AUTO_GRID_SIZES)


def test_the_folds_see_self_training_lock_in_on_the_real_2c_2a_stream():
    """On the paper's real MOA-Spher-2C-2A stream, maps of d >= 2 lock in swapped labels under
    self-training (docs/results.md); frozen predictions do not show it, the online phase over
    each fold does: auto chooses d = 1, the best d on the test stream."""

    from mlsom.datasets import load

    ds = load("MOA-Spher-2C-2A", data_home=DATA)
    m = SOMStreamClassifier(grid_size="auto", random_state=0).fit(ds.X_train, ds.Y_train)
    assert m.grid_size_ == 1
    assert m.grid_scores_[1] > m.grid_scores_[2] + 0.1


def test_save_load_and_pickle_keep_the_choice(auto_model, tmp_path):
    path = tmp_path / "m.npz"
    auto_model.save(path)
    back = SOMStreamClassifier.load(path)
    assert back.grid_size == "auto"
    assert back.grid_size_ == auto_model.grid_size_
    assert back.grid_scores_ == auto_model.grid_scores_
    again = pickle.loads(pickle.dumps(auto_model))
    assert again.grid_scores_ == auto_model.grid_scores_
    X1, _ = moving_blobs(80, seed=4)
    np.testing.assert_array_equal(back.predict(X1), auto_model.predict(X1))


@pytest.mark.parametrize(
    "value, match",
    [
        ("Auto", r"grid_size must be an integer or 'auto', got 'Auto'"),
        ("", r"grid_size must be an integer or 'auto', got ''"),
        ("5", r"grid_size must be an integer or 'auto', got '5'"),
        (b"auto", r"grid_size must be an integer or 'auto'"),
        (["auto"], r"grid_size must be an integer or 'auto'"),
    ],
)
def test_other_strings_are_refused_and_change_nothing(auto_model, value, match):
    m = pickle.loads(pickle.dumps(auto_model))
    m.set_params(grid_size=value)
    with pytest.raises(TypeError, match=match):
        m.fit(X0, Y0)
    assert m.grid_scores_ == auto_model.grid_scores_


def test_too_small_a_training_set_is_refused():
    with pytest.raises(ValueError, match="at least 2 instances, got n_samples = 1"):
        SOMStreamClassifier(grid_size="auto").fit(X0[:1], Y0[:1])


def test_a_tiny_training_set_uses_one_row_per_fold():
    m = SOMStreamClassifier(grid_size="auto", random_state=0, n_epochs=5).fit(X0[:3], Y0[:3])
    assert m.grid_size_ in AUTO_GRID_SIZES


def test_a_fold_holding_every_positive_is_left_out():
    """One label, one positive: the fold that holds it has nothing to fit on (it failed with a
    bare NumPy error); the others choose, as the plain recomputation does."""
    X = np.random.default_rng(0).normal(size=(50, 3))
    Y = (np.arange(50)[:, None] == 7).astype(np.uint8)
    m = SOMStreamClassifier(grid_size="auto", random_state=0, n_epochs=5).fit(X, Y)
    assert m.grid_size_ in AUTO_GRID_SIZES
    expected = _reference_scores(X, Y, 0, n_epochs=5)
    for d in AUTO_GRID_SIZES:
        assert m.grid_scores_[d] == pytest.approx(expected[d], rel=1e-12, abs=1e-12)


def test_it_works_inside_a_scikit_learn_pipeline():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(
        StandardScaler(), SOMStreamClassifier(grid_size="auto", random_state=0, n_epochs=10)
    )
    pipe.fit(X0, Y0)
    assert pipe[-1].grid_size_ in AUTO_GRID_SIZES
    assert clone(pipe)[-1].get_params()["grid_size"] == "auto"
    assert pipe.predict(X0[:10]).shape == (10, 3)
    assert sklearn.__version__


def test_the_command_line_takes_auto(tmp_path, capsys):
    from mlsom._cli import main

    out = tmp_path / "r.json"
    args = ["run", "--stream", "MOA-Spher-5C-2A", "--n-instances", "2000", "--grid-size", "auto"]
    assert main([*args, "--out", str(out)]) == 0
    run = json.loads(out.read_text())["run"]
    assert run["grid_size"] == "auto"
    assert main(["run", "--stream", "MOA-Spher-5C-2A", "--grid-size", "Auto"]) == 2
    assert "expected an integer or auto, got 'Auto'" in capsys.readouterr().err


def test_an_experiment_runs_auto_beside_fixed_sizes(tmp_path):
    from mlsom.experiment import run_experiment

    summary = run_experiment(
        out_dir=tmp_path,
        streams=["MOA-Spher-5C-2A"],
        methods=["mlsom"],
        grid_sizes=[2, "auto"],
        seeds=[0],
        n_instances=2000,
        plots=False,
        progress=False,
    )
    assert summary["best_grid_size"]["MOA-Spher-5C-2A"]["grid_size"] == 2
    import csv

    with open(tmp_path / "results.csv") as f:
        labels = sorted(r["label"] for r in csv.DictReader(f))
    assert labels == ["mlsom-d2", "mlsom-dauto"]


def test_every_simd_path_chooses_the_same():
    """The candidates' online phases screen with the path's kernels: every path of this
    processor (and screening off) gives the same scores, choice and model, bit for bit."""
    from mlsom import _testing

    runs = []
    for level in _testing.simd_levels() + [None]:
        switch = {"simd": level} if level is not None else {"screening": False}
        with _testing.switches(**switch):
            m = SOMStreamClassifier(grid_size="auto", random_state=2, n_epochs=10)
            runs.append(m.fit(X0.astype(np.float32), Y0))
    for m in runs[1:]:
        assert m.grid_scores_ == runs[0].grid_scores_
        for u, v in zip(m.weights_, runs[0].weights_, strict=True):
            np.testing.assert_array_equal(u, v)
