"""Label persistence (label_persistence="tested"): the labels of the instance just before,
given to the next one while a paired test on the stream says they beat the model.

Checked against the plain reference (tests/helpers/reference.py, persistence_reference) on the
model's own predictions, which a model with label_persistence="off" gives (the maps never see the
proposal: the state is the same either way)."""

import copy

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _schema, _testing
from mlsom.river import SOMStreamML
from tests.helpers import reference as ref
from tests.helpers.labelled import arrival_schedule, label_runs, label_runs_case, small_model


def _events(X, som, Xl, Yl, after):
    ev, k = [], 0
    for s in range(len(X)):
        while k < len(after) and after[k] <= s:
            ev.append(("label", Xl[k], Yl[k]))
            k += 1
        ev.append(("step", X[s], som[s]))
    ev.extend(("label", Xl[j], Yl[j]) for j in range(k, len(after)))
    return ev


@pytest.fixture(scope="module")
def case():
    return label_runs_case()


@pytest.mark.parametrize("corrections", ["strong", "tested"])
def test_persistence_matches_the_reference(case, corrections):
    model, Xs, _, arrivals = case
    off = copy.deepcopy(model).set_params(label_persistence="off", corrections=corrections)
    on = copy.deepcopy(model).set_params(corrections=corrections)
    som = off.predict_stream(Xs, arrivals=arrivals)
    got = on.predict_stream(Xs, arrivals=arrivals)
    want, ring = ref.persistence_reference(_events(Xs, som, *arrivals))
    np.testing.assert_array_equal(got, want)
    n = min(len(ring), 200)
    assert on.persistence_pairs_ == (sum(ring[len(ring) - n :]), n)
    # the test has work to do here: the proposal is given, and not everywhere
    assert 0 < (got != som).any(axis=1).sum() < len(Xs) // 2
    assert n == 200 and sum(ring) > 100
    # the maps never see the proposal
    for a, b in zip(on.weights_, off.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(on.T_, off.T_)
    np.testing.assert_array_equal(on.label_offsets_, off.label_offsets_)


def test_float32_matches_the_reference():
    X, _, Yu = label_runs(5, 1600)
    X = X.astype(np.float32)
    model = small_model(X[:400], np.maximum(Yu[:400], 0))
    Xs, Ys = X[400:], Yu[400:]
    after, rows = arrival_schedule(6, len(Xs))
    arrivals = (Xs[rows], Ys[rows], after)
    som = (
        copy.deepcopy(model)
        .set_params(label_persistence="off")
        .predict_stream(Xs, arrivals=arrivals)
    )
    got = model.predict_stream(Xs, arrivals=arrivals)
    want, ring = ref.persistence_reference(_events(Xs, som, *arrivals))
    np.testing.assert_array_equal(got, want)
    assert model._state["persist_row"].dtype == np.float32 and len(ring) > 10


def test_chunks_rows_and_files_change_nothing(case, tmp_path):
    """One call, row by row with partial_fit between, chunks with arrivals, and a save and load
    at every chunk's end: the same predictions and the same test."""
    model, Xs, _, (Xl, Yl, after) = case
    whole = copy.deepcopy(model)
    want = whole.predict_stream(Xs, arrivals=(Xl, Yl, after))
    rows, out, k = copy.deepcopy(model), [], 0
    for s in range(len(Xs)):
        while k < len(after) and after[k] <= s:
            rows.partial_fit(Xl[k : k + 1], Yl[k : k + 1])
            k += 1
        out.append(rows.predict_stream(Xs[s : s + 1]))
    rows.partial_fit(Xl[k:], Yl[k:])
    np.testing.assert_array_equal(np.vstack(out), want)
    assert rows.persistence_pairs_ == whole.persistence_pairs_
    chunked, out = copy.deepcopy(model), []
    for i, lo in enumerate(range(0, len(Xs), 700)):
        hi = min(len(Xs), lo + 700)
        sel = (after >= lo) & ((after < hi) | ((hi == len(Xs)) & (after == hi)))
        out.append(chunked.predict_stream(Xs[lo:hi], arrivals=(Xl[sel], Yl[sel], after[sel] - lo)))
        chunked.save(tmp_path / f"m{i}.npz")
        chunked = SOMStreamClassifier.load(tmp_path / f"m{i}.npz")
    np.testing.assert_array_equal(np.vstack(out), want)
    for key in _schema.names("persistence"):
        np.testing.assert_array_equal(chunked._state[key], whole._state[key])


def test_every_simd_path_and_screening_off_give_the_same(case):
    """Label persistence on top of the labelled update: every SIMD path this processor has, and
    screening off, give the same predictions, proposals and state, bit for bit."""
    model, Xs, _, arrivals = case
    runs = []
    for level in _testing.simd_levels() + [None]:
        m = copy.deepcopy(model)
        switch = {"simd": level} if level is not None else {"screening": False}
        with _testing.switches(**switch):
            runs.append((m.predict_stream(Xs, arrivals=arrivals), m))
    Y0, m0 = runs[0]
    assert m0.persistence_pairs_[1] == 200
    for Y, m in runs[1:]:
        np.testing.assert_array_equal(Y, Y0)
        for key in (
            *_schema.names("maps"),
            *_schema.names("counts"),
            *_schema.names("persistence"),
        ):
            np.testing.assert_array_equal(m._state[key], m0._state[key])


def test_late_labels_change_nothing(case):
    """Labels that arrive after the next instance is classified are never prompt: the
    predictions are the model's own, and no pair is counted."""
    model, Xs, Ys, _ = case
    rows = np.flatnonzero(np.random.default_rng(2).random(len(Xs)) < 0.5)
    rows = rows[rows + 1 < len(Xs)]
    arrivals = (Xs[rows], Ys[rows], rows + 2)  # delay 1
    off = copy.deepcopy(model).set_params(label_persistence="off")
    on = copy.deepcopy(model)
    np.testing.assert_array_equal(
        on.predict_stream(Xs, arrivals=arrivals), off.predict_stream(Xs, arrivals=arrivals)
    )
    assert on.persistence_pairs_ == (0, 0)


def test_without_labels_nothing_is_kept(case):
    model, Xs, _, _ = case
    m = copy.deepcopy(model)
    m.predict_stream(Xs[:50])
    assert m.persistence_pairs_ is None
    assert not any(k in m._state for k in _schema.names("persistence"))


def test_a_stream_without_runs_keeps_the_model(case):
    """Labels in random order: the labels of the instance before lose the test, and the
    predictions stay the model's."""
    model, Xs, Ys, _ = case
    perm = np.random.default_rng(3).permutation(len(Xs))
    Xp, Yp = Xs[perm], Ys[perm]
    arrivals = (Xp, Yp, np.arange(1, len(Xp) + 1))  # every label, at once
    off = copy.deepcopy(model).set_params(label_persistence="off")
    on = copy.deepcopy(model)
    np.testing.assert_array_equal(
        on.predict_stream(Xp, arrivals=arrivals), off.predict_stream(Xp, arrivals=arrivals)
    )
    won, n = on.persistence_pairs_
    assert n == 200 and 2 * won < n


@pytest.mark.parametrize("value", ["on", "", None, 1, "Tested"])
def test_bad_label_persistence_is_refused_and_changes_nothing(case, value):
    model, Xs, Ys, _ = case
    m = copy.deepcopy(model).set_params(label_persistence=value)
    with pytest.raises((TypeError, ValueError), match="label_persistence"):
        m.predict_stream(Xs[:5])  # before any label too
    with pytest.raises((TypeError, ValueError), match="label_persistence"):
        m.partial_fit(Xs[:0], Ys[:0])
    m.set_params(label_persistence="tested")
    m.partial_fit(Xs[:5], Ys[:5])
    before = copy.deepcopy(m._state)
    m.set_params(label_persistence=value)
    with pytest.raises((TypeError, ValueError), match="label_persistence"):
        m.predict_stream(Xs[5:10])
    with pytest.raises((TypeError, ValueError), match="label_persistence"):
        m.partial_fit(Xs[5:6], Ys[5:6])
    with pytest.raises((TypeError, ValueError), match="label_persistence"):
        m.save("unused.npz")
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(m._state[key], value)


@pytest.mark.parametrize("delay", [None, 50])
def test_river_predict_one_stays_frozen_and_learn_one_is_the_step_then_the_labels(delay):
    """River's predict_one is predict (pure: it cannot tell whether the instance learnt last is
    the one before x), with or without a delay; learn_one is the online step on x, then its
    labels, so the model's own test sees the instances in the order they are learnt."""
    evaluate = pytest.importorskip("river.evaluate")
    metrics = pytest.importorskip("river.metrics")
    X, Y, _ = label_runs(4, 900, stay=0.95)
    names = [f"f{j}" for j in range(X.shape[1])]
    data = [
        (dict(zip(names, x.tolist(), strict=True)), {f"l{c}": bool(v) for c, v in enumerate(y)})
        for x, y in zip(X, Y, strict=True)
    ]
    model = SOMStreamML(grid_size=2, n_warmup=200, random_state=0, n_jobs=1)
    inner = {"n": 0}
    predict_one = model.predict_one

    def checked(x):
        p = predict_one(x)
        if model.model_ is not None:
            frozen = model.model_.predict(model._row(x))[0]
            assert [p[n] for n in model.labels_] == frozen.astype(bool).tolist()
            inner["n"] += 1
        return p

    model.predict_one = checked
    evaluate.progressive_val_score(data, model, metrics.multioutput.ExactMatch(), delay=delay)
    assert inner["n"] >= 600
    # the model learnt the stream's instances in order, each one's labels promptly
    assert model.model_.persistence_pairs_[1] > 0
