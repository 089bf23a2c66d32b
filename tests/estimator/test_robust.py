"""``variant="robust"``: the stale neurons of a time-ordered training set are dropped at ``fit``.

A kept unit b of label j is dropped when the label's last 20 n_j / n_b training rows (in the set's
order) never mapped to it; the unit reached last stays if every one would go; ``k_nn`` follows
from the maps left (docs/method.md, "The robust variant"). The state and every prediction of the
online phase must be those of ``reference.ref_fit(..., variant="robust")`` and ``ref_stream``;
on a set in random order the variant fits the paper's model; the default is the paper's,
bit for bit, in memory and in model files.
"""

import json
import pickle
import zipfile

import numpy as np
import pytest

import mlsom
from mlsom import SOMStreamClassifier, _testing
from tests.helpers import reference as ref
from tests.helpers.compare import (
    MIN_GAP,
    assert_same_predictions,
    assert_same_state,
    explained,
    fit_both,
    fit_quietly,
    make_stream,
    params,
)
from tests.helpers.streams import drifting_stream

# a unit can be stale only when it holds more than 20 of its label's rows (its gap is at most
# n_j): the drifting sets are long enough for that


def robust_params(d, nb, dist, zc):
    return params(
        d,
        neighborhood=nb,
        averout_distance=dist,
        zero_cooccurrence=zc,
        variant="robust",
        min_neuron_size=2,
    )


def sizes(model):
    return [0 if w is None else len(w) for w in model.weights_]


CASES = [
    # L, d, A, neighbourhood, averOut distance, zero rule, seed
    (1, 3, 2, "bubble", "euclidean", "reject", 0),
    (2, 2, 2, "bubble", "euclidean", "reject", 1),
    (2, 3, 3, "gaussian", "sqeuclidean", "skip", 2),
    (3, 3, 2, "bubble", "sqeuclidean", "reject", 3),
    (3, 4, 5, "gaussian", "euclidean", "skip", 4),
    (5, 3, 3, "bubble", "euclidean", "skip", 5),
    (4, 4, 2, "gaussian", "sqeuclidean", "reject", 6),
]


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed", CASES)
def test_drifting_training_set_matches_reference(L, d, A, nb, dist, zc, seed):
    X_tr, Y_tr, X_te = drifting_stream(seed, L, A)
    p = robust_params(d, nb, dist, zc)
    model, st = fit_both(X_tr, Y_tr, p)
    assert st["min_gap"] > MIN_GAP, "degenerate data: a training choice is a rounding tie"
    explained(st, assert_same_state, model, st)
    assert model.variant_ == "robust"
    # the drift leaves units behind: the variant must have dropped some, or this tests nothing
    paper = fit_quietly(X_tr, Y_tr, **{**p, "variant": "paper"})
    assert sum(sizes(model)) < sum(sizes(paper)), (sizes(model), sizes(paper))
    for w_r, w_p in zip(model.weights_, paper.weights_, strict=True):
        # the units left are some of the paper's, in their order (the same training)
        assert all((w_p == row).all(axis=1).any() for row in w_r)
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    assert st["min_gap"] > MIN_GAP, "degenerate data: a stream choice is a rounding tie"
    Y_pkg = model.predict_stream(X_te)
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    assert model.acceptance_offset_ == st["theta"]  # bit for bit
    assert_same_label_acceptance(model, st)


def test_every_unit_stale_keeps_the_one_reached_last():
    # label 0 occurs on the first 40 rows only, in a set of 400: its rows' order is its own,
    # so its map keeps units; a unit of label 1 that only the first rows reach goes
    rng = np.random.default_rng(7)
    X = np.concatenate([rng.normal(0, 0.1, (200, 2)), rng.normal(5, 0.1, (200, 2))])
    Y = np.zeros((400, 2), np.uint8)
    Y[:200, 0] = 1
    Y[:, 1] = 1
    p = params(3, variant="robust", min_neuron_size=1)
    model, st = fit_both(X, Y, p)
    explained(st, assert_same_state, model, st)
    # label 1's rows from the first cluster all precede those of the second: its units there
    # are stale, those of the second stay
    w1 = model.weights_[1]
    assert (w1 > 2.5).all(), w1
    assert len(model.weights_[0]) >= 1


def test_fresh_units_reference_fallback_and_bound():
    # the rule itself, on hand-made assignments: n_j = 100, factor 20
    bmu = np.array([0] * 50 + [1] * 49 + [2])  # unit 2 reached last, once
    counts = np.bincount(bmu, minlength=3)
    # unit 0: last row 50, gap 50, 50 * 50 = 2500 > 2000: stale; unit 1: gap 1: fresh;
    # unit 2: gap 0: fresh
    np.testing.assert_array_equal(ref.fresh_units(bmu, counts, np.arange(3)), [1, 2])
    keep = np.array([True, False, False])
    got = mlsom._som._fresh_units(bmu, counts, keep)
    # unit 0 alone kept, and stale: it stays as the one reached last among the kept
    np.testing.assert_array_equal(got, [True, False, False])
    np.testing.assert_array_equal(ref.fresh_units(bmu, counts, np.array([0])), [0])
    got = mlsom._som._fresh_units(bmu, counts, np.array([True, True, True]))
    np.testing.assert_array_equal(got, [False, True, True])
    # the bound compares Python integers: a product beyond int64 (3 * 2**62, which int64
    # arithmetic would wrap to a negative number, "fresh") still decides exactly
    cnt = np.array([2**62, 3], dtype=np.int64)
    got = mlsom._som._fresh_units(np.array([0, 1, 1, 1]), cnt, np.array([True, True]))
    np.testing.assert_array_equal(got, [False, True])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_order_fits_the_papers_maps(seed):
    X_tr, Y_tr, _ = make_stream(seed, 4, 3, n_train=300)
    p = params(3, min_neuron_size=2)
    paper = fit_quietly(X_tr, Y_tr, **p)
    robust = fit_quietly(X_tr, Y_tr, **p, variant="robust")
    assert robust.variant_ == "robust" and paper.variant_ == "paper"
    assert robust.k_nn_ == paper.k_nn_
    for a, b in zip(paper.weights_, robust.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    assert paper.acceptance_offset_ is None and robust.acceptance_offset_ == 0.0
    # frozen scoring before any stream: theta = 0, the paper's decisions
    X_te = make_stream(seed + 100, 4, 3)[2]
    np.testing.assert_array_equal(paper.predict(X_te), robust.predict(X_te))


# (L, d, A, neighbourhood, distance, zero rule, seed, what the offset does on the stream)
OFFSET_CASES = [
    (1, 3, 2, "bubble", "euclidean", "reject", 0, "up"),
    (3, 3, 2, "bubble", "sqeuclidean", "reject", 13, "up"),
    (5, 3, 3, "bubble", "euclidean", "skip", 15, "up"),
    (2, 2, 2, "bubble", "euclidean", "reject", 1, "down, weak acceptances"),
    (1, 3, 2, "bubble", "euclidean", "reject", 10, "stays in the band"),
]


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed, offset", OFFSET_CASES)
def test_random_order_stream_matches_reference(L, d, A, nb, dist, zc, seed, offset):
    """The acceptance offset on a set with nothing to prune: predictions, state and theta."""
    X_tr, Y_tr, X_te = make_stream(seed, max(L, 3), A, n_train=300, n_test=300)
    p = params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc, variant="robust")
    model, st = fit_both(X_tr, Y_tr, p)
    assert st["min_gap"] > MIN_GAP
    explained(st, assert_same_state, model, st)
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    assert st["min_gap"] > MIN_GAP, "degenerate data: a stream choice is a rounding tie"
    Y_pkg = model.predict_stream(X_te)
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    assert model.acceptance_offset_ == st["theta"]
    assert_same_label_acceptance(model, st)
    # what the case is there for (else it tests less than it says)
    if offset == "up":
        assert st["theta"] > 0.0
    elif offset == "stays in the band":
        assert st["theta"] == 0.0 and abs(st["cbar"] - st["z0"]) <= 0.1 * st["z0"]
    else:
        assert st["theta"] < 0.0 and st["n_weak"] > 0
    # frozen scoring uses the current offset: each row as the next instance
    Y_fr, _ = ref.ref_predict(st, X_tr[:100])
    np.testing.assert_array_equal(model.predict(X_tr[:100]), Y_fr)
    # in chunks: the same stream
    m2, _ = fit_both(X_tr, Y_tr, p)
    Y2 = np.concatenate([m2.predict_stream(X_te[:77]), m2.predict_stream(X_te[77:])])
    np.testing.assert_array_equal(Y2, Y_pkg)
    assert m2.acceptance_offset_ == model.acceptance_offset_


GATE_CASES = [
    # L, d, A, neighbourhood, averOut distance, zero rule, seed
    (2, 3, 2, "bubble", "euclidean", "reject", 0),
    (3, 4, 3, "gaussian", "sqeuclidean", "skip", 1),
    (4, 3, 2, "bubble", "sqeuclidean", "reject", 2),
    (2, 5, 4, "gaussian", "euclidean", "skip", 3),
]


def assert_same_label_acceptance(model, st):
    """Each label's own offset, recent rate and training rate: the reference's, bit for bit."""
    la = model._state["label_acceptance"]
    np.testing.assert_array_equal(model.label_acceptance_offsets_, st["phi"])
    np.testing.assert_array_equal(la, np.stack([st["phi"], st["rate"], st["target"]]))


def assert_same_drift(model, st):
    dr = st["drift"]
    np.testing.assert_array_equal(model.moving_maps_, dr["open"])
    np.testing.assert_array_equal(model._state["drift_center"], dr["center"])
    np.testing.assert_array_equal(model._state["drift_mean"], dr["mean"])
    np.testing.assert_array_equal(model._state["drift_limit"], dr["limit"])


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed", GATE_CASES)
def test_drift_gate_matches_reference(L, d, A, nb, dist, zc, seed, tmp_path):
    """Clusters that go on moving through a long test part: the labels' recent means leave
    their training means, the gates open, and from then on the maps move as a whole; the
    predictions, the gates, the recent means and the neurons are the reference's."""
    X_tr, Y_tr, X_te = drifting_stream(seed, L, A, n_train=1200, n_test=2500, speed=3.0)
    p = robust_params(d, nb, dist, zc)
    model, st = fit_both(X_tr, Y_tr, p)
    assert st["min_gap"] > MIN_GAP, "degenerate data: a training choice is a rounding tie"
    assert_same_drift(model, st)
    assert not model.moving_maps_.any()  # every gate starts closed
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    assert st["min_gap"] > MIN_GAP, "degenerate data: a stream choice is a rounding tie"
    Y_pkg = model.predict_stream(X_te)
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    assert_same_drift(model, st)
    assert model.acceptance_offset_ == st["theta"]
    assert_same_label_acceptance(model, st)
    # what the case is there for: some gate opened, and a map larger than one neuron moved
    # as a whole (its neurons are not the paper's moves alone)
    assert model.moving_maps_.any(), "no gate opened: the case tests nothing"
    assert any(
        model.moving_maps_[j] and len(w) > 1 for j, w in enumerate(model.weights_) if w is not None
    )
    # in chunks, and through a model file and a pickle half way: the same stream
    m2, _ = fit_both(X_tr, Y_tr, p)
    half = len(X_te) // 2
    Y2 = [m2.predict_stream(X_te[:777]), m2.predict_stream(X_te[777:half])]
    back = pickle.loads(pickle.dumps(m2))
    m2.save(tmp_path / "m.npz")
    loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
    for resumed in (back, loaded):
        Y3 = np.concatenate([*Y2, resumed.predict_stream(X_te[half:])])
        np.testing.assert_array_equal(Y3, Y_pkg)
        np.testing.assert_array_equal(resumed.moving_maps_, model.moving_maps_)
        for a, b in zip(resumed.weights_, model.weights_, strict=True):
            np.testing.assert_array_equal(a, b)


def test_drift_gate_stays_closed_on_a_stationary_stream():
    """A stream drawn like its training set never moves the recent means far: the gates stay
    closed, and the robust variant's maps move as the paper's do (the reference without its
    gate gives the same predictions and neurons)."""
    X_tr, Y_tr, X_te = make_stream(4, 3, 3, n_train=600, n_test=1500)
    p = params(3, variant="robust")
    model, st = fit_both(X_tr, Y_tr, p)
    del st["drift"]
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    Y_pkg = model.predict_stream(X_te)
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    assert not model.moving_maps_.any()


def test_default_is_the_papers_state_and_file(tmp_path):
    X_tr, Y_tr, _ = drifting_stream(0, 3, 2)
    a = fit_quietly(X_tr, Y_tr, **params(3))
    b = fit_quietly(X_tr, Y_tr, **params(3, variant="paper"))
    assert a.get_params()["variant"] == "paper"
    assert pickle.dumps(a._state) == pickle.dumps(b._state)
    assert "variant" not in a._state  # the state as before variants existed
    a.save(tmp_path / "a.npz")
    with zipfile.ZipFile(tmp_path / "a.npz") as z:
        names = [n for n in z.namelist() if n.endswith(".json")]
        meta = json.loads(z.read(names[0])) if names else None
    if meta is not None:
        assert "variant" not in meta["fitted"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_save_load_pickle_keep_the_variant(tmp_path, dtype):
    X_tr, Y_tr, X_te = drifting_stream(3, 3, 2)
    model = fit_quietly(X_tr.astype(dtype), Y_tr, **params(3, variant="robust", min_neuron_size=2))
    X_te = X_te.astype(dtype)
    model.predict_stream(X_te[:60])  # theta has moved: the file and the pickle keep it
    theta = model.acceptance_offset_
    assert theta != 0.0
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = SOMStreamClassifier.load(path)
    assert loaded.variant_ == "robust" and loaded.get_params()["variant"] == "robust"
    assert loaded.acceptance_offset_ == theta
    back = pickle.loads(pickle.dumps(model))
    assert back.variant_ == "robust" and back.acceptance_offset_ == theta
    np.testing.assert_array_equal(loaded.predict(X_te[:5]), model.predict(X_te[:5]))
    Y0 = model.predict_stream(X_te[60:])
    np.testing.assert_array_equal(loaded.predict_stream(X_te[60:]), Y0)
    np.testing.assert_array_equal(back.predict_stream(X_te[60:]), Y0)
    assert loaded.acceptance_offset_ == back.acceptance_offset_ == model.acceptance_offset_
    # the variant the maps were fitted with, whatever the live parameter says
    loaded.set_params(variant="paper")
    assert loaded.variant_ == "robust"


@pytest.mark.parametrize("value", ["Robust", "", "paper ", None, 1, ["robust"], b"robust"])
def test_bad_variant_is_refused_by_name(value):
    X_tr, Y_tr, _ = drifting_stream(0, 2, 2, n_train=60)
    model = SOMStreamClassifier(grid_size=2, variant=value)
    with pytest.raises(ValueError, match="variant must be one of"):
        model.fit(X_tr, Y_tr)
    assert not hasattr(model, "_state") or model.__dict__.get("_state") is None


def label_shifted_stream(seed, n_train=600, n_test=1500, L=3, A=2):
    """Clusters with correlated labels (label j pulls x towards centre j), each row with at least
    one label; each further label with its own rate, which the test part shifts: label 1 from
    0.6 to 0.05, label 2 from 0.3 to 0.6."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(L, A))

    def draw(n, rates):
        Y = (rng.random((n, L)) < rates).astype(np.uint8)
        Y[np.arange(n), rng.integers(0, L, n)] = 1
        X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(scale=0.7, size=(n, A))
        return X, Y

    X_tr, Y_tr = draw(n_train, np.array([0.3, 0.6, 0.3]))
    return X_tr, Y_tr, draw(n_test, np.array([0.3, 0.05, 0.6]))[0]


def test_label_offsets_move_both_ways_as_the_reference(tmp_path):
    """Each label's own acceptance offset: up for a label predicted more often than in the
    training set, down for one predicted less, with weak acceptances; the predictions, offsets
    and rates are the reference's, in chunks and after save/load too, and frozen scoring uses
    them."""
    X_tr, Y_tr, X_te = label_shifted_stream(5)
    p = params(2, variant="robust")
    model, st = fit_both(X_tr, Y_tr, p)
    la = model._state["label_acceptance"]
    np.testing.assert_array_equal(la[1], Y_tr.mean(axis=0))  # the training rates, twice
    np.testing.assert_array_equal(la[2], la[1])
    assert not la[0].any()
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    assert st["min_gap"] > MIN_GAP, "degenerate data: a stream choice is a rounding tie"
    Y_pkg = model.predict_stream(X_te)
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    assert_same_label_acceptance(model, st)
    phi = model.label_acceptance_offsets_
    assert (phi > 0).any() and (phi < 0).any(), phi  # what the case is there for
    assert st["n_weak"] > 0
    Y_fr, _ = ref.ref_predict(st, X_te[:200])
    np.testing.assert_array_equal(model.predict(X_te[:200]), Y_fr)
    m2, _ = fit_both(X_tr, Y_tr, p)
    Y2 = m2.predict_stream(X_te[:700])
    m2.save(tmp_path / "m.npz")
    m3 = SOMStreamClassifier.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(np.concatenate([Y2, m3.predict_stream(X_te[700:])]), Y_pkg)
    np.testing.assert_array_equal(m3._state["label_acceptance"], la)


@pytest.mark.parametrize("gates", ["closed", "open"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_simd_path_fits_the_same_robust_model(gates, dtype):
    """Every SIMD path, and every distance exact (no screening), give the same model and
    predictions; with the drift gates open, the maps' whole moves keep the screening copy in
    step (a stale copy would change which distances are computed exactly, and so decisions)."""
    if gates == "open":
        X_tr, Y_tr, X_te = drifting_stream(2, 4, 5, n_train=1200, n_test=2500, speed=3.0)
    else:
        X_tr, Y_tr, X_te = drifting_stream(5, 3, 4)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    p = params(4 if gates == "open" else 3, variant="robust", min_neuron_size=2)
    ref_model = None
    for level in _testing.simd_levels() + [None]:
        switch = {"simd": level} if level is not None else {"screening": False}
        with _testing.switches(**switch):
            m = fit_quietly(X_tr, Y_tr, **p)
            Y = m.predict_stream(X_te)
        if ref_model is None:
            ref_model, ref_Y = m, Y
            continue
        for a, b in zip(ref_model.weights_, m.weights_, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(Y, ref_Y)
        np.testing.assert_array_equal(m.moving_maps_, ref_model.moving_maps_)
    assert ref_model.moving_maps_.any() == (gates == "open")


def test_river_adapter_passes_the_variant():
    pytest.importorskip("river")
    from mlsom.river import SOMStreamML

    X_tr, Y_tr, X_te = drifting_stream(1, 2, 2, n_train=200)
    m = SOMStreamML(
        grid_size=3,
        n_warmup=200,
        variant="robust",
        min_neuron_size=2,
        random_state=0,
        n_epochs=20,
        max_epochs=200,
    )
    for x, y in zip(X_tr, Y_tr, strict=True):
        m.learn_one({"u": x[0], "v": x[1]}, {"a": bool(y[0]), "b": bool(y[1])})
    assert m.model_ is not None and m.model_.variant_ == "robust"
    direct = fit_quietly(
        X_tr,
        Y_tr,
        grid_size=3,
        variant="robust",
        min_neuron_size=2,
        random_state=0,
        n_epochs=20,
        max_epochs=200,
    )
    for a, b in zip(direct.weights_, m.model_.weights_, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="variant must be one of"):
        SOMStreamML(variant="fast")
