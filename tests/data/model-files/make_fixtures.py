"""Write the model files of this folder and what mlsom gave when it continued from each.

This script was run ONCE, from the repository root, with the package at the commit that README.md
names (model-file format 1):

    PYTHONPATH=src python tests/data/model-files/make_fixtures.py

The files it wrote are the record of what that mlsom saved and did;
tests/model_file/test_model_file_compat.py checks that later versions still load them and continue
bit for bit. Do NOT run it again with a later mlsom (after a change of the model file's format,
or of anything else): the files must stay those the earlier code wrote. It refuses to overwrite a
file that exists, and to run with a format other than 1.

For each case it fits a small model on a synthetic multi-label stream drawn from a seeded NumPy
Generator, runs the first part of the stream (with labels arriving, for some cases), saves the
model (``NAME.npz``), and writes ``NAME-expected.npz`` (compressed): the inputs of a fixed
continuation and the outputs of the model loaded from the file, given by the test module's own
``continuation`` (it imports it, so that the test runs exactly what was recorded). Before
writing, it checks that the model in memory and the one loaded from the file give the same
continuation, and that each file holds the state its case is about.
"""

import copy
import hashlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS.parent))  # the repository's root: the tests package


import mlsom  # noqa: E402
from mlsom import SOMStreamClassifier, _model_file  # noqa: E402
from tests.model_file import test_model_file_compat as compat  # noqa: E402

N_NEXT = 300  # rows of the continuation
N_PROBE = 120  # rows scored frozen


def runs_stream(seed, n, n_features, n_labels, stay=0.9, noise=1.0, scale=2.0, drift=0.0):
    """Instances whose main label comes in runs (kept with probability ``stay``), a second label
    added to 30 % of them; an instance is the mean of its labels' centres plus Gaussian noise,
    the whole stream shifting by ``drift`` along one direction from its first row to its last."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=scale, size=(n_labels, n_features))
    Y = np.zeros((n, n_labels), dtype=np.uint8)
    main = 0
    for i in range(n):
        if rng.random() > stay:
            main = int(rng.integers(0, n_labels))
        Y[i, main] = 1
        if rng.random() < 0.3:
            Y[i, rng.integers(0, n_labels)] = 1
    X = (Y @ centres) / Y.sum(axis=1, keepdims=True)
    X += rng.normal(scale=noise, size=(n, n_features))
    X += np.linspace(0.0, drift, n)[:, None] * rng.normal(size=n_features)[None, :]
    return X, Y


def label_schedule(seed, Y, share, late, delay, unknown=0.1):
    """Labels of a share of the stream's rows, in arrival order: (rows, labels with -1 where
    unknown, after), ``after`` counting stream rows classified before the label is learnt (a
    row's own count + 1 when prompt; ``delay`` rows more for a ``late`` share)."""
    rng = np.random.default_rng(seed)
    n = len(Y)
    rows = np.flatnonzero(rng.random(n) < share)
    after = rows + 1 + np.where(rng.random(len(rows)) < late, delay, 0)
    Yl = Y[rows].astype(np.int8)
    Yl[rng.random(Yl.shape) < unknown] = -1
    order = np.argsort(after, kind="stable")
    return rows[order], Yl[order], after[order]


def split_arrivals(X, schedule, lo, hi, final=False):
    """predict_stream's arrivals for stream rows lo:hi: the labels due once lo to hi - 1 rows
    were classified (one due at hi goes to the next call, at 0), and those due at hi too when
    the call is the ``final`` one."""
    rows, Yl, after = schedule
    sel = (after >= lo) & ((after < hi) | (final & (after == hi)))
    return X[rows[sel]], Yl[sel], (after[sel] - lo).astype(np.int64)


def fitted(X, Y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a map that has not settled is a result like any other
        return SOMStreamClassifier(**params).fit(X, Y)


# ------------------------------------------------------------------------------------- the cases


def case_paper():
    """The paper's variant with its defaults (grid 3), fitted on 300 rows of which none has the
    last label (it has no map), then 200 rows of stream."""
    X, Y = runs_stream(101, 300 + 200 + N_NEXT + N_PROBE, n_features=4, n_labels=4)
    Y[:300, 3] = 0
    Y[:300][Y[:300].sum(axis=1) == 0, 0] = 1
    model = fitted(X[:300], Y[:300], grid_size=3, random_state=1)
    assert model.weights_[3] is None
    model.predict_stream(X[300:500])
    return model, {"X_next": X[500 : 500 + N_NEXT], "X_probe": X[500 + N_NEXT :]}


def _robust(seed, dtype, n_pre, drift, **params):
    X, Y = runs_stream(seed, 300 + n_pre + N_NEXT + N_PROBE, 5, 4, stay=0.85, drift=drift)
    X = X.astype(dtype)
    model = fitted(X[:300], Y[:300], variant="robust", random_state=2, **params)
    assert model.acceptance_offset_ == 0.0 and not np.any(model.label_acceptance_offsets_)
    just_fitted = compat.attribute_digests(model, compat.fitted_attribute_names(model))
    model.predict_stream(X[300 : 300 + n_pre])
    now = compat.attribute_digests(model, compat.fitted_attribute_names(model))
    # the online offsets and the drift gate have moved since fit
    for name in ("acceptance_offset_", "label_acceptance_offsets_", "moving_maps_"):
        assert now[name] != just_fitted[name], name
    assert model.acceptance_offset_ != 0.0 and model.moving_maps_.any()
    assert np.count_nonzero(model.label_acceptance_offsets_) >= 2
    rest = X[300 + n_pre :]
    return model, {"X_next": rest[:N_NEXT], "X_probe": rest[N_NEXT:]}


def case_robust():
    """The robust variant (grid 3, Gaussian neighbourhood, squared averOut distance) on a
    drifting stream, saved after 600 rows of stream: its acceptance offsets have moved and
    drift gates have opened."""
    return _robust(106, np.float64, 600, 6.0, grid_size=3, neighborhood="gaussian",
                   averout_distance="sqeuclidean")  # fmt: skip


def case_robust_float32():
    """The robust variant in float32, grid_size="auto" (the grid scores are in the file), saved
    after 400 rows of a stream drifting faster."""
    model, inputs = _robust(1, np.float32, 400, 10.0, grid_size="auto")
    assert model.grid_scores_ is not None and model.weights_[0].dtype == np.float32
    return model, inputs


def case_guards():
    """The paper's variant (grid 3, zero_cooccurrence="skip") that learnt from labels arriving
    5 rows late (40 % of the rows, 10 % of their labels unknown) over 600 rows of stream: every
    label has guards, and some use them. The continuation's stream has labels arriving too,
    the first of them for rows classified before the save."""
    n = 300 + 600 + N_NEXT
    X, Y = runs_stream(103, n + N_PROBE, 5, 4, noise=1.5, scale=1.5)
    model = fitted(X[:300], Y[:300], grid_size=3, zero_cooccurrence="skip", random_state=3)
    Xs, Ys = X[300:n], Y[300:n]
    schedule = label_schedule(6, Ys, share=0.4, late=1.0, delay=5)
    model.predict_stream(Xs[:600], arrivals=split_arrivals(Xs, schedule, 0, 600))
    assert all(g is not None and len(g) > 0 for g in model.guards_)
    assert model.guards_on_.any() and not model.guards_on_.all()
    Xl, Yl, after = split_arrivals(Xs, schedule, 600, 600 + N_NEXT, final=True)
    assert after[0] < 6 and len(after) > 50
    inputs = {"X_next": Xs[600:], "X_probe": X[n:]}
    inputs.update(arrivals_X=Xl, arrivals_Y=Yl, arrivals_after=after)
    return model, inputs


def _pending(dtype):
    """Saved between two stream calls, with corrections="tested" and label persistence (the
    default): most labels come promptly, a quarter 6 rows late. The save comes right after a
    row whose predecessor's labels came promptly (it had a proposal) and whose own labels have
    not come yet: they are the first thing the continuation learns, still prompt; the late
    labels of the rows before it come during the continuation too. Paired tests of the
    corrections are pending (alt_uses), and both paired tests have pairs."""
    n = 300 + 1200
    X, Y = runs_stream(104, n + N_PROBE, 6, 4, noise=1.5, scale=1.5)
    X = X.astype(dtype)
    model = fitted(X[:300], Y[:300], grid_size=4, corrections="tested", learning_rate=0.1,
                   correction_rate=0.3, random_state=4)  # fmt: skip
    Xs, Ys = X[300:n], Y[300:n]
    schedule = label_schedule(5, Ys, share=0.8, late=0.25, delay=6)
    rows, _, after = schedule
    prompt = set(rows[after == rows + 1].tolist())
    cut = next(s for s in range(700, 900) if {s - 2, s - 1} <= prompt)
    model.predict_stream(Xs[:cut], arrivals=split_arrivals(Xs, schedule, 0, cut))
    flags = model._state["persist_flags"]
    assert flags[0] == 1 and flags[1] == 1 and flags[2] == 0, flags
    assert np.any(model._state["alt_uses"] >= 0)
    assert model.correction_pairs_[1] > 0 and model.persistence_pairs_[1] > 0
    Xl, Yl, after = split_arrivals(Xs, schedule, cut, cut + N_NEXT, final=True)
    assert after[0] == 0 and np.array_equal(Xl[0], Xs[cut - 1])  # the pending prompt labels
    late = (schedule[2] >= cut) & (schedule[2] <= cut + N_NEXT) & (schedule[0] < cut - 1)
    assert late.any() and len(after) > 100  # late labels of rows classified before the save
    inputs = {"X_next": Xs[cut : cut + N_NEXT], "X_probe": X[n:]}
    inputs.update(arrivals_X=Xl, arrivals_Y=Yl, arrivals_after=after)
    return model, inputs


CASES = {
    "paper": case_paper,
    "robust": case_robust,
    "robust-float32": case_robust_float32,
    "guards": case_guards,
    "pending": lambda: _pending(np.float64),
    "pending-float32": lambda: _pending(np.float32),
}


def _commit():
    """HEAD's hash; the package's sources (src/) must be those of HEAD."""

    def git(*args):
        return subprocess.run(["git", "-C", str(TESTS), *args], capture_output=True, text=True)

    if git("diff", "--quiet", "HEAD", "--", "../src").returncode != 0:
        sys.exit("src/ differs from HEAD: the files must be written by a committed mlsom")
    return git("rev-parse", "HEAD").stdout.strip()


def main():
    if _model_file.FORMAT != 1:
        sys.exit(f"this script records model-file format 1; this mlsom writes {_model_file.FORMAT}")
    assert list(CASES) == list(compat.FIXTURES)
    for name in CASES:
        for path in (HERE / f"{name}.npz", HERE / f"{name}-expected.npz"):
            if path.exists():
                sys.exit(f"{path} exists: the fixtures are written once and never rewritten")
    commit = _commit()
    for name, make in CASES.items():
        model, inputs = make()
        path = HERE / f"{name}.npz"
        model.save(path)
        loaded = SOMStreamClassifier.load(path)
        names = compat.fitted_attribute_names(loaded)
        assert names == compat.fitted_attribute_names(model)
        got = compat.continuation(loaded, inputs, names)
        same = compat.continuation(copy.deepcopy(model), inputs, names)
        for key in compat.PREDICTION_KEYS:
            assert np.array_equal(got[key], same[key]), (name, key)
        for key in ("digests_loaded", "digests_after"):
            assert got[key] == same[key], (name, key)
        record = dict(inputs)
        record.update({key: got[key] for key in compat.PREDICTION_KEYS})
        record["names"] = np.array(names)
        for key in ("digests_loaded", "digests_after"):
            record[key] = np.array([got[key][n] for n in names])
        record["format"] = np.int64(compat.header(path)["format"])
        record["mlsom_version"] = np.array(mlsom.__version__)
        record["commit"] = np.array(commit)
        record["model_sha256"] = np.array(hashlib.sha256(path.read_bytes()).hexdigest())
        np.savez_compressed(HERE / f"{name}-expected.npz", **record)
        facts = [
            f"{model.variant_}",
            f"{model.weights_[0].dtype}",
            f"d={model.grid_size_}",
            f"{model.n_features_in_} features",
            f"{model.n_labels_} labels",
            f"N={model.n_seen_}",
        ]
        if model.guards_ is not None:
            facts.append(f"guards {[0 if g is None else len(g) for g in model.guards_]}")
            facts.append(f"guards_on {model.guards_on_.astype(int).tolist()}")
        if model.variant_ == "robust":
            facts.append(f"theta {model.acceptance_offset_:.4g}")
            facts.append(f"gates {model.moving_maps_.astype(int).tolist()}")
        if model.persistence_pairs_ is not None:
            facts.append(f"persistence pairs {model.persistence_pairs_}")
            facts.append(f"correction pairs {model.correction_pairs_}")
        arrivals = len(inputs.get("arrivals_after", ()))
        print(f"{name}: {path.stat().st_size} bytes; {', '.join(facts)}; continuation "
              f"{len(inputs['X_next'])} rows, {arrivals} labelled rows arriving")  # fmt: skip


if __name__ == "__main__":
    main()
