"""Labels that arrive: ``partial_fit`` (and ``learn_one``) against the NumPy reference.

``partial_fit(X, Y)`` takes labelled instances, Y in {1, 0, -1 (unknown)}: hits move a label's
best-matching neuron by the learning rate, misses by ``correction_rate``, false alarms move it
onto the label's last labelled positive (docs/method.md, "Labels that arrive"). Every choice,
count and real number must be those of ``reference.ref_learn``, whatever the chunking, the thread
count or a save and load in between; bad input changes nothing; without a labelled call the
model is the paper's.
"""

import copy
import warnings

import numpy as np
import pytest

import mlsom
from mlsom import SOMStreamClassifier, _core, _schema, _testing
from mlsom.exceptions import NotFittedError
from tests.helpers import reference as ref
from tests.helpers.compare import (
    MIN_GAP,
    TOL,
    assert_bitwise_equal,
    assert_last_positives,
    assert_same_predictions,
    assert_same_rule,
    assert_same_state,
    explained,
    fit_both,
    make_stream,
    params,
)
from tests.helpers.model_files import rewrite
from tests.helpers.streams import random_labels

CASES = [
    # L, d, A, neighbourhood, averOut distance, zero co-occurrence rule, seed
    (2, 2, 2, "bubble", "euclidean", "reject", 1),
    (3, 3, 5, "gaussian", "sqeuclidean", "skip", 2),
    (5, 2, 20, "bubble", "sqeuclidean", "reject", 3),
    (5, 5, 3, "bubble", "euclidean", "skip", 4),
    (8, 3, 20, "gaussian", "euclidean", "reject", 5),
    (1, 3, 3, "bubble", "euclidean", "reject", 6),
]


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed", CASES)
@pytest.mark.parametrize("rate", [0.5, 0.9, 0.1])
def test_partial_fit_matches_reference(L, d, A, nb, dist, zc, seed, rate):
    """Streams and labelled calls interleaved, as the protocol gives them: every prediction,
    count, weight, averOut and last positive is the reference's. (With correction_rate 1 a
    missed label's neuron lands on the instance up to rounding, and two maps' neurons on the
    same instance tie up to rounding: data the reference cannot judge; that rate is checked for
    determinism below.)"""
    X_tr, Y_tr, X_te = make_stream(seed, L, A, n_test=240)
    p = params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc)
    model, st = fit_both(X_tr, Y_tr, p)
    model.set_params(correction_rate=rate)
    assert st["min_gap"] > MIN_GAP
    Yl = random_labels(seed, len(X_te), L)
    for lo, hi in [(0, 60), (60, 120), (120, 240)]:
        Y_ref, st = ref.ref_stream(st, X_te[lo:hi])
        Y_pkg = model.predict_stream(X_te[lo:hi])
        explained(st, assert_same_predictions, Y_pkg, Y_ref)
        # the labels of the chunk before, late, as they arrive
        a, b = max(0, lo - 60), hi - 30
        st = ref.ref_learn(st, X_te[a:b], Yl[a:b], eta=0.05, rate=rate)
        model.partial_fit(X_te[a:b], Yl[a:b])
        assert st["min_gap"] > MIN_GAP, "degenerate data: a labelled choice is a rounding tie"
        explained(st, assert_same_state, model, st)
        assert_last_positives(model, st)
        assert_same_rule(model, st)
    # frozen predictions of the updated model too
    Y_ref, _ = ref.ref_predict(st, X_te)
    assert_same_predictions(model.predict(X_te), Y_ref)


def _assert_same_pairs(model, st):
    """The paired test of the corrections: every pending other choice (the neuron's other
    place, strong flag, tries), and the model's pairs, the reference's."""
    pk = model._state
    offsets = pk["offsets"]
    pending = {}
    for (c, b), (there, strong, uses) in st["alt"].items():
        pending[int(offsets[c]) + b] = (there, strong, uses)
    uses = pk["alt_uses"]
    assert sorted(np.flatnonzero(uses >= 0).tolist()) == sorted(pending), "pending choices"
    for j, (there, strong, n) in pending.items():
        assert uses[j] == n and bool(pk["alt_strong"][j]) == bool(strong), j
        np.testing.assert_allclose(pk["alt_place"][j], there, **TOL, err_msg=f"neuron {j}")
    pairs = st["pairs"]
    assert int(pk["pair_total"][0]) == len(pairs)
    last = pairs[-ref.PAIR_WINDOW :]
    slots = [(len(pairs) - len(last) + i) % ref.PAIR_WINDOW for i in range(len(last))]
    np.testing.assert_array_equal(pk["pair_ring"][slots], last)
    assert model.correction_pairs_ == (sum(last), len(last))


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed", CASES)
@pytest.mark.parametrize("rate", [0.5, 0.1])
def test_tested_corrections_match_reference(L, d, A, nb, dist, zc, seed, rate):
    """corrections="tested": the paired tests (re-classifications with a neuron in its other
    place), the pairs, the gate on the strong corrections and every move are the reference's,
    streams and labelled calls interleaved."""
    X_tr, Y_tr, X_te = make_stream(seed, L, A, n_test=300)
    p = params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc)
    model, st = fit_both(X_tr, Y_tr, p)
    model.set_params(correction_rate=rate, corrections="tested")
    Yl = random_labels(seed, len(X_te), L, unknown=0.1)
    for lo, hi in [(0, 60), (60, 120), (120, 200), (200, 300)]:
        Y_ref, st = ref.ref_stream(st, X_te[lo:hi])
        Y_pkg = model.predict_stream(X_te[lo:hi])
        explained(st, assert_same_predictions, Y_pkg, Y_ref)
        # the labels of rows a:b arrive, each row's once (an instance learnt twice can meet
        # its own margin as an acceptance offset: an exact tie)
        a, b = max(0, lo - 30), hi - 30
        st = ref.ref_learn(st, X_te[a:b], Yl[a:b], eta=0.05, rate=rate, tested=True)
        model.partial_fit(X_te[a:b], Yl[a:b])
        assert st["min_gap"] > MIN_GAP, "degenerate data: a labelled choice is a rounding tie"
        explained(st, assert_same_state, model, st)
        assert_last_positives(model, st)
        assert_same_rule(model, st)
        _assert_same_pairs(model, st)
    if L > 1:  # pairs were made (with one label, only a re-ranking could make one)
        assert len(st["pairs"]) > 0
    Y_ref, _ = ref.ref_predict(st, X_te)
    assert_same_predictions(model.predict(X_te), Y_ref)


def test_correction_pairs_follow_the_reference_call_after_call():
    """correction_pairs_ (strong wins, pairs in the window) is the reference's after every
    labelled call, from fewer than PAIR_MIN pairs (the gate closed) to enough for the test to
    act; the pairs are not all one way."""
    X_tr, Y_tr, X_te = make_stream(7, 3, 5, n_test=400)
    model, st = fit_both(X_tr, Y_tr, params(3))
    model.set_params(corrections="tested")
    Yl = random_labels(7, len(X_te), 3, unknown=0.0)
    model.predict_stream(X_te[:200])
    st = ref.ref_stream(st, X_te[:200])[1]
    seen = []
    for i, j in zip([0, 5, *range(20, 200, 20)], [5, *range(20, 220, 20)], strict=True):
        model.partial_fit(X_te[i:j], Yl[i:j])
        st = ref.ref_learn(st, X_te[i:j], Yl[i:j], tested=True)
        won, n = model.correction_pairs_
        assert (won, n) == (sum(st["pairs"][-200:]), min(len(st["pairs"]), 200))
        seen.append(n)
    assert seen[0] < ref.PAIR_MIN <= seen[-1]
    won, n = model.correction_pairs_
    assert 0 < won < n


def test_corrections_is_checked_at_every_labelled_call(tmp_path):
    """A bad value is refused by the next labelled call, which then changes nothing, and by
    save; the unlabelled stream does not use it."""
    X_tr, Y_tr, X_te = make_stream(61, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    model.set_params(corrections="paired")
    before = _file_bytes(copy.deepcopy(model).set_params(corrections="strong"), tmp_path / "a.npz")
    with pytest.raises(ValueError, match=r"corrections.*'paired'"):
        model.partial_fit(X_te[:5], np.ones((5, 3), np.int8))
    with pytest.raises(ValueError, match=r"corrections.*'paired'"):
        model.partial_fit(X_te[:0], np.ones((0, 3), np.int8))
    with pytest.raises(ValueError, match=r"corrections.*'paired'"):
        model.predict_stream(X_te[:5], arrivals=(X_te[:0], np.ones((0, 3), np.int8), []))
    with pytest.raises(ValueError, match=r"corrections.*'paired'"):
        model.save(tmp_path / "m.npz")
    after = _file_bytes(copy.deepcopy(model).set_params(corrections="strong"), tmp_path / "b.npz")
    assert before == after
    assert model.correction_pairs_ is None


def test_labels_of_a_label_without_a_map_are_ignored():
    """A label absent from the training set has no map: its labels change nothing (T, S, its
    last positive), and the model file stays valid."""
    X_tr, Y_tr, X_te = make_stream(11, 4, 5, absent=(2,))
    model, st = fit_both(X_tr, Y_tr, params(3))
    Yl = random_labels(11, len(X_te), 4, unknown=0.0)
    Yl[:, 2] = 1
    st = ref.ref_learn(st, X_te, Yl)
    model.partial_fit(X_te, Yl)
    assert_same_state(model, st)
    assert model.T_[2].sum() == 0 and model.T_[:, 2].sum() == 0
    assert not model._state["has_positive"][2]


def test_labels_leave_the_counts_as_they_are():
    """T, N and S count the stream's instances as their predictions, once: labels that arrive
    for them move neurons but add nothing to the counts (docs/method.md: counting the true
    label sets as well made the model accept too many extra labels), while the neurons do
    move."""
    X_tr, Y_tr, X_te = make_stream(12, 4, 5)
    model, _ = fit_both(X_tr, Y_tr, params(3))
    model.predict_stream(X_te[:40])
    T0, N0, z0 = model.T_.copy(), model.n_seen_, model.cardinality_
    W0 = [w.copy() for w in model.weights_ if w is not None]
    model.partial_fit(X_te[:40], random_labels(12, 40, 4, unknown=0.0))
    np.testing.assert_array_equal(model.T_, T0)
    assert model.n_seen_ == N0 and model.cardinality_ == z0
    W1 = [w for w in model.weights_ if w is not None]
    assert any(not np.array_equal(a, b) for a, b in zip(W0, W1, strict=True))


@pytest.mark.parametrize("corrections", ["strong", "tested"])
@pytest.mark.parametrize("rate", [0.5, 1.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunking_and_threads_change_nothing(dtype, rate, corrections):
    """One call, row by row, or in two chunks; one thread or two: the same model, bit for bit."""
    X_tr, Y_tr, X_te = make_stream(21, 5, 20, n_test=200)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    model, _ = fit_both(X_tr, Y_tr, params(3, correction_rate=rate, corrections=corrections))
    model.predict_stream(X_te[:100])
    Yl = random_labels(21, 200, 5)
    whole = copy.deepcopy(model).set_params(n_jobs=1)
    whole.partial_fit(X_te, Yl)
    rows = copy.deepcopy(model).set_params(n_jobs=2)
    for i in range(200):
        rows.partial_fit(X_te[i : i + 1], Yl[i : i + 1])
    parts = copy.deepcopy(model)
    parts.partial_fit(X_te[:77], Yl[:77]).partial_fit(X_te[77:], Yl[77:])
    assert_bitwise_equal(whole, rows)
    assert_bitwise_equal(whole, parts)
    np.testing.assert_array_equal(whole.predict_stream(X_te), parts.predict_stream(X_te))


@pytest.mark.parametrize("corrections", ["strong", "tested"])
def test_save_and_load_between_labels_resumes_exactly(tmp_path, corrections):
    """A model saved while labels are still pending (predicted instances whose labels come
    later), loaded, then given those labels and more stream, is the model that never stopped;
    its last positives (and the paired test's state) travel in the file."""
    X_tr, Y_tr, X_te = make_stream(31, 4, 6, n_test=240)
    model, _ = fit_both(X_tr, Y_tr, params(3, corrections=corrections))
    Yl = random_labels(31, 240, 4)
    model.predict_stream(X_te[:80])
    model.partial_fit(X_te[:40], Yl[:40])  # labels of the first half arrived
    model.predict_stream(X_te[80:120])  # rows 40:120 still wait for theirs
    model.save(tmp_path / "m.npz")
    loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
    assert_bitwise_equal(model, loaded)
    for m in (model, loaded):
        m.partial_fit(X_te[40:120], Yl[40:120])
    np.testing.assert_array_equal(
        model.predict_stream(X_te[120:]), loaded.predict_stream(X_te[120:])
    )
    assert_bitwise_equal(model, loaded)


def test_without_labelled_calls_the_model_is_the_papers(tmp_path):
    """No labelled call (or one of no rows): no labelled state, no labelled member in the file,
    and the stream goes exactly as before."""
    X_tr, Y_tr, X_te = make_stream(41, 3, 4)
    model, st = fit_both(X_tr, Y_tr, params(2))
    model.partial_fit(X_te[:0], np.zeros((0, 3), np.int8))
    model.learn_one(X_te[0])  # no y: nothing
    assert "last_positive" not in model._state
    Y_ref, st = ref.ref_stream(st, X_te)
    assert_same_predictions(model.predict_stream(X_te), Y_ref)
    assert_same_state(model, st)
    model.save(tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as z:
        assert not {"last_positive", "has_positive"} & set(z.files)


def test_learn_one_is_partial_fit_of_one_row():
    """The estimator's River-style learn_one: y as {label index: bool or None} or as an array."""
    X_tr, Y_tr, X_te = make_stream(51, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    a, b, c = copy.deepcopy(model), copy.deepcopy(model), copy.deepcopy(model)
    a.partial_fit(X_te[:1], np.array([[1, -1, 0]]))
    b.learn_one(X_te[0], {0: True, 2: False})
    c.learn_one({0: X_te[0, 0], 1: X_te[0, 1], 2: X_te[0, 2], 3: X_te[0, 3]}, {0: 1, 1: None, 2: 0})
    assert_bitwise_equal(a, b)
    assert_bitwise_equal(a, c)
    for y, match in [
        ({3: True}, "label 3"),
        ({0: 2}, "True, False or None"),
        ({True: 1}, "label True"),
    ]:
        with pytest.raises(ValueError, match=match):
            model.learn_one(X_te[0], y)


def _file_bytes(model, path):
    model.save(path)
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize(
    "Y, exc, match",
    [
        (np.ones((5, 4), np.int8), ValueError, "4 label columns, the model has 3"),
        (np.full((5, 3), 2), ValueError, r"only 1, 0 or -1.*found 2 at row 0"),
        (np.full((5, 3), 0.5), ValueError, r"found 0.5"),
        (np.full((5, 3), np.nan), ValueError, r"found nan"),
        (np.ones((4, 3), np.int8), ValueError, "4 rows but X has 5"),
        (np.ones(3, np.int8), ValueError, "2-D"),
        (np.array([["a"] * 3] * 5), TypeError, "dtype"),
        (None, TypeError, "got None"),
    ],
)
def test_bad_labels_are_refused_and_change_nothing(tmp_path, Y, exc, match):
    X_tr, Y_tr, X_te = make_stream(61, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    model.partial_fit(X_te[:3], np.array([[1, 0, 1], [0, 1, 0], [1, -1, -1]]))
    before = _file_bytes(model, tmp_path / "a.npz")
    with pytest.raises(exc, match=match):
        model.partial_fit(X_te[:5], Y)
    assert _file_bytes(model, tmp_path / "b.npz") == before


def test_bad_instances_and_unfitted_models_are_refused(tmp_path):
    X_tr, Y_tr, X_te = make_stream(62, 3, 4)
    with pytest.raises(NotFittedError, match="not fitted"):
        SOMStreamClassifier().partial_fit(X_te[:2], np.ones((2, 3), np.int8))
    with pytest.raises(NotFittedError, match="not fitted"):
        SOMStreamClassifier().learn_one(X_te[0], {0: True})
    model, _ = fit_both(X_tr, Y_tr, params(2))
    before = _file_bytes(model, tmp_path / "a.npz")
    bad_X = X_te[:2].copy()
    bad_X[1, 2] = np.inf
    for X, match in [(X_te[:2, :3], "3 features"), (bad_X, "finite|inf")]:
        with pytest.raises(ValueError, match=match):
            model.partial_fit(X, np.ones((2, 3), np.int8))
    for rate in [0, 1.5, -0.1, "x", np.nan]:
        model.set_params(correction_rate=rate)
        with pytest.raises((ValueError, TypeError), match="correction_rate"):
            model.partial_fit(X_te[:2], np.ones((2, 3), np.int8))
    model.set_params(correction_rate=0.5)
    assert _file_bytes(model, tmp_path / "b.npz") == before


def test_the_count_of_pairs_stays_below_2_to_the_53(tmp_path):
    """A model loaded with the largest count of pairs a file may hold (2^53) goes on collecting
    pairs, and what it saves loads again: the count wraps by whole windows, keeping its place in
    the ring."""
    X_tr, Y_tr, X_te = make_stream(75, 3, 4, n_test=600)
    model, _ = fit_both(X_tr, Y_tr, params(2, corrections="tested"))
    model.partial_fit(X_te[:300], random_labels(75, 300, 3, unknown=0.0))
    src = tmp_path / "m.npz"
    model.save(src)
    rewrite(src, tmp_path / "edge.npz", pair_total=np.array([2**53], np.int64))
    edge = SOMStreamClassifier.load(tmp_path / "edge.npz")
    edge.partial_fit(X_te[300:], random_labels(76, 300, 3, unknown=0.0))
    total = int(edge._state["pair_total"][0])
    assert 200 <= total < 10**6  # wrapped: 200 + its place in the ring, then counting on
    edge.save(tmp_path / "again.npz")
    again = SOMStreamClassifier.load(tmp_path / "again.npz")
    assert again.correction_pairs_ == edge.correction_pairs_
    assert int(again._state["pair_total"][0]) == total


@pytest.mark.parametrize("corrections, n_labelled", [("strong", 40), ("tested", 120)])
def test_a_few_labels_undo_a_label_swap(corrections, n_labelled):
    """The failure labels are there to fix: two clusters whose maps self-training has swapped
    (each label's neurons moved onto the other's cluster). A few labelled instances of each
    cluster put every neuron back: misses pull the true label's neuron over, false alarms send
    the wrong one to its label's last positive; with the paired test (the default), once it has
    seen its 10 pairs and found that the strong corrections win them."""
    rng = np.random.default_rng(5)
    centres = np.array([[0.0, 0.0], [6.0, 0.0]])
    lab = rng.integers(0, 2, size=400)
    X = centres[lab] + rng.normal(scale=0.5, size=(400, 2))
    Y = np.eye(2, dtype=np.uint8)[lab]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SOMStreamClassifier(grid_size=2, random_state=0, corrections=corrections)
        model.fit(X[:200], Y[:200])
    right = model.predict(X[200:])
    assert (right == Y[200:]).all(axis=1).mean() > 0.95
    st = model._state  # swap the maps' neurons: each label's neurons onto the other's cluster
    o = st["offsets"]
    a, b = st["Wt"][:, o[0] : o[1]].copy(), st["Wt"][:, o[1] : o[2]].copy()
    k = min(a.shape[1], b.shape[1])
    st["Wt"][:, o[0] : o[0] + k], st["Wt"][:, o[1] : o[1] + k] = b[:, :k], a[:, :k]
    st.pop("screen", None)
    st.pop("rows", None)
    assert (model.predict(X[200:]) == Y[200:]).all(axis=1).mean() < 0.5
    end = 200 + n_labelled
    for i in range(200, end):
        model.partial_fit(X[i : i + 1], Y[i : i + 1].astype(np.int8))
    assert (model.predict(X[end:]) == Y[end:]).all(axis=1).mean() > 0.95


def test_partial_fit_is_in_the_public_api():
    assert callable(mlsom.SOMStreamClassifier.partial_fit)
    assert SOMStreamClassifier().get_params()["correction_rate"] == 0.5
    assert "correction_rate" in SOMStreamClassifier.__doc__


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arrivals_are_the_pieces_and_partial_fit(dtype):
    """predict_stream(X, arrivals=(X_l, Y_l, after)) is predict_stream on the pieces of X and
    partial_fit of each labelled row in between: the same predictions and model, bit for bit,
    with arrivals before the first row, several at one place, within blocks of four and at the
    end."""
    X_tr, Y_tr, X_te = make_stream(81, 4, 9, n_test=200)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    model, _ = fit_both(X_tr, Y_tr, params(3))
    model.predict_stream(X_te[:50])
    Yl = random_labels(81, 200, 4)
    after = np.array([0, 0, 3, 5, 6, 6, 6, 9, 41, 99, 150, 150])
    rows = np.arange(len(after)) * 3  # labelled rows (of the first 50, already seen)
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    Y_a = a.predict_stream(X_te[50:200], arrivals=(X_te[rows], Yl[rows], after))
    pieces, lo = [], 0
    for k, at in enumerate(after):
        pieces.append(b.predict_stream(X_te[50 + lo : 50 + at]))
        b.partial_fit(X_te[rows[k] : rows[k] + 1], Yl[rows[k] : rows[k] + 1])
        lo = at
    pieces.append(b.predict_stream(X_te[50 + lo : 200]))
    np.testing.assert_array_equal(Y_a, np.vstack(pieces))
    assert_bitwise_equal(a, b)
    # every row of the call classified before its first labelled row, which starts the record
    # of label persistence: those rows are not in it, as in the pieces (the record once kept
    # the call's last row)
    e, f = copy.deepcopy(model), copy.deepcopy(model)
    Y_e = e.predict_stream(X_te[:7], arrivals=(X_te[:2], Yl[:2], [7, 7]))
    Y_f = f.predict_stream(X_te[:7])
    f.partial_fit(X_te[:2], Yl[:2])
    np.testing.assert_array_equal(Y_e, Y_f)
    assert_bitwise_equal(e, f)
    assert not e._state["persist_row"].any()
    # arrivals with no row to classify
    c, d = copy.deepcopy(model), copy.deepcopy(model)
    c.predict_stream(X_te[:0], arrivals=(X_te[:2], Yl[:2], [0, 0]))
    d.partial_fit(X_te[:2], Yl[:2])
    assert_bitwise_equal(c, d)


_I64 = np.array([0, 0])


def _Y8(value, dtype):
    """Labels of two rows and three labels in 1-byte integers, ``value`` at row 1, column 2."""
    Y = np.zeros((2, 3), dtype=dtype)
    Y[1, 2] = value
    return Y


def _X_with(value):
    X = np.zeros((2, 4))
    X[1, 3] = value
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arrivals_in_the_cores_layout_go_as_given(dtype):
    """Arrivals that come as the core takes them (X_labelled C-contiguous in the model's dtype,
    Y_labelled int8 or uint8, after int64: the protocol's case) skip the general checks after
    one compiled pass over their values; the predictions and the model are those of the same
    arrivals in any other form (lists, floats, a Fortran-ordered or float32 X), bit for bit."""
    from mlsom._som import _arrivals_as_given

    X_tr, Y_tr, X_te = make_stream(83, 4, 9, n_test=120)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    model, _ = fit_both(X_tr, Y_tr, params(3))
    st = model._state
    rows = np.arange(0, 60, 3)
    Yl = random_labels(83, 120, 4)[rows]  # 1, 0 and -1
    after = np.sort(np.random.default_rng(0).integers(0, 61, rows.size))
    fast = (X_te[rows], Yl.astype(np.int8), after.astype(np.int64))
    got = _arrivals_as_given(st, *fast, 60, np.dtype(dtype))
    assert got is not None and got["Xl"] is fast[0] and got["after"] is fast[2]
    positive = np.maximum(Yl, 0).astype(np.uint8)  # uint8: 0/1 only
    assert _arrivals_as_given(st, fast[0], positive, fast[2], 60, np.dtype(dtype)) is not None
    # not in the layout, or a value out of bounds: the general checks take them
    others = [
        (X_te[rows].tolist(), Yl, after),
        (np.asfortranarray(X_te[rows]), Yl.astype(np.int8), after.astype(np.int64)),
        (X_te[rows].astype(np.float32 if dtype == np.float64 else np.float64), fast[1], fast[2]),
        (fast[0], Yl.astype(np.int16), fast[2]),
        (fast[0], fast[1], after.astype(np.int32)),
        (fast[0], fast[1], fast[2] + 100),
    ]
    for X_l, Y_l, a in others:
        assert _arrivals_as_given(st, X_l, Y_l, a, 60, np.dtype(dtype)) is None
    for Y_l in (fast[1], Yl.astype(np.float64)):
        a, b = copy.deepcopy(model), copy.deepcopy(model)
        Y_a = a.predict_stream(X_te[60:], arrivals=(fast[0], Y_l, fast[2]))
        Y_b = b.predict_stream(X_te[60:], arrivals=others[0])
        np.testing.assert_array_equal(Y_a, Y_b)
        assert_bitwise_equal(a, b)
    a, b = copy.deepcopy(model), copy.deepcopy(model)
    Y_a = a.predict_stream(X_te[60:], arrivals=(fast[0], positive, fast[2]))
    Y_b = b.predict_stream(X_te[60:], arrivals=(others[0][0], positive.tolist(), others[0][2]))
    np.testing.assert_array_equal(Y_a, Y_b)
    assert_bitwise_equal(a, b)
    c = copy.deepcopy(model)
    c.predict_stream(X_te[60:])  # (the labels change the model: the comparisons above tell)
    assert not np.array_equal(c._state["Wt"], a._state["Wt"])


@pytest.mark.parametrize(
    "arrivals, exc, match",
    [
        ("x", TypeError, "tuple"),
        ((np.zeros((2, 5)), np.zeros((2, 3)), [0, 0]), ValueError, "X_labelled has 5 features"),
        ((np.zeros((2, 4)), np.zeros((2, 2)), [0, 0]), ValueError, "2 label columns"),
        ((np.zeros((2, 4)), np.zeros((2, 3)), [0]), ValueError, "after must be 2 integers"),
        ((np.zeros((2, 4)), np.zeros((2, 3)), [0.5, 1]), ValueError, "after must be 2 integers"),
        ((np.zeros((2, 4)), np.zeros((2, 3)), [3, 1]), ValueError, "non-decreasing"),
        ((np.zeros((2, 4)), np.zeros((2, 3)), [0, 11]), ValueError, r"within 0\.\.10"),
        ((np.zeros((2, 4)), np.zeros((2, 3)), [-1, 0]), ValueError, "within"),
        (
            (np.zeros((2, 4)), np.zeros((2, 3)), np.array([2**64 - 1, 3], np.uint64)),
            ValueError,
            r"got \[18446744073709551615, 3\]",
        ),
        ((np.zeros((2, 4)), np.full((2, 3), 3), [0, 0]), ValueError, "only 1, 0 or -1"),
        # in the core's layout already (the compiled check of the protocol's case)
        ((np.zeros((2, 4)), np.full((2, 3), 2, np.int8), _I64), ValueError, "found 2 at row 0"),
        ((np.zeros((2, 4)), _Y8(-2, np.int8), _I64), ValueError, "found -2 at row 1, column 2"),
        ((np.zeros((2, 4)), _Y8(255, np.uint8), _I64), ValueError, "found 255 at row 1"),
        ((np.zeros((2, 4)), _Y8(2, np.uint8), _I64), ValueError, "found 2 at row 1"),
        ((np.zeros((2, 4)), _Y8(1, np.int8), np.array([3, 1])), ValueError, "non-decreasing"),
        ((np.zeros((2, 4)), _Y8(1, np.int8), np.array([0, 11])), ValueError, r"within 0\.\.10"),
        ((np.zeros((2, 4)), _Y8(1, np.int8), np.array([-1, 0])), ValueError, "within"),
        ((_X_with(np.nan), _Y8(1, np.int8), _I64), ValueError, "NaN or infinity .*row 1, column 3"),
        ((_X_with(-np.inf), _Y8(1, np.uint8), _I64), ValueError, "NaN or infinity"),
        ((_X_with(1e200), _Y8(1, np.int8), _I64), ValueError, "too large"),
    ],
)
def test_bad_arrivals_are_refused_and_change_nothing(tmp_path, arrivals, exc, match):
    X_tr, Y_tr, X_te = make_stream(82, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    before = _file_bytes(model, tmp_path / "a.npz")
    with pytest.raises(exc, match=match):
        model.predict_stream(X_te[:10], arrivals=arrivals)
    assert _file_bytes(model, tmp_path / "b.npz") == before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_simd_path_learns_the_same(dtype):
    """Labelled updates screen with the path's kernels: every path of this processor (and
    screening off) gives the same predictions and model, bit for bit."""
    X_tr, Y_tr, X_te = make_stream(91, 5, 20, n_test=200)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    model, _ = fit_both(X_tr, Y_tr, params(3))
    Yl = random_labels(91, 200, 5)
    after = np.arange(0, 100, 10)
    runs = []
    for level in _testing.simd_levels() + [None]:
        m = copy.deepcopy(model)
        switch = {"simd": level} if level is not None else {"screening": False}
        with _testing.switches(**switch):
            Y = m.predict_stream(X_te[100:], arrivals=(X_te[:10], Yl[:10], after))
            m.partial_fit(X_te[10:100], Yl[10:100])
            # then the labels' acceptance offsets are set: frozen scoring with them
            P = m.predict(X_te)
        runs.append((Y, m, P))
    assert np.any(runs[0][1].label_offsets_ != 0)
    for Y, m, P in runs[1:]:
        np.testing.assert_array_equal(Y, runs[0][0])
        assert_bitwise_equal(m, runs[0][1])
        np.testing.assert_array_equal(P, runs[0][2])


@pytest.mark.parametrize("case", [CASES[2], CASES[4]], ids=["sqeuclidean", "euclidean"])
def test_labels_out_of_reach_are_ruled_out_as_the_test_would(case):
    """Once labels have taught the rule, the labels the ranking left out are Bayes-tested too;
    most are ruled out from their map's screening values (and the bounds of its averOut and of
    the test's right-hand side) without their best-matching unit. What is ruled out so is what
    the exact test rejects: the predictions and the model are the reference's, and those of
    screening off (every distance exact, nothing ruled out so), bit for bit."""
    L, d, A, nb, dist, zc, seed = case
    X_tr, Y_tr, X_te = make_stream(seed, L, A, n_test=240)
    model, st = fit_both(
        X_tr, Y_tr, params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc)
    )
    Yl = random_labels(seed, len(X_te), L)
    exact = copy.deepcopy(model)
    _testing.counters(reset=True)
    model.partial_fit(X_te[:60], Yl[:60])
    Y_pkg = model.predict_stream(X_te[60:])
    assert _testing.counters().reach > 0
    st = ref.ref_learn(st, X_te[:60], Yl[:60], eta=0.05, rate=0.5)
    Y_ref, st = ref.ref_stream(st, X_te[60:])
    assert st["min_gap"] > MIN_GAP
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    with _testing.switches(screening=False):
        _testing.counters(reset=True)
        exact.partial_fit(X_te[:60], Yl[:60])
        np.testing.assert_array_equal(exact.predict_stream(X_te[60:]), Y_pkg)
        assert _testing.counters().reach == 0
    assert_bitwise_equal(exact, model)


def test_labels_beyond_the_ranking_are_predicted_not_learnt_from():
    """A label that the Bayes test accepts beyond the ranking (once labels have taught the
    rule) is predicted, but self-training does not learn from it: its map's neurons, averOut
    and counts stay as they were, while the ranked labels predicted move theirs (the
    reference finds the instances; the package, one instance at a time, is checked against
    both)."""
    L = 6
    X_tr, Y_tr, X_te = make_stream(57, L, 5, n_test=400)
    model, st = fit_both(X_tr, Y_tr, params(3))
    Yl = random_labels(57, len(X_te), L)
    model.partial_fit(X_te[:80], Yl[:80])
    st = ref.ref_learn(st, X_te[:80], Yl[:80], eta=0.05, rate=0.5)
    offsets = model._state["offsets"]
    seen = 0
    for i in range(80, len(X_te)):
        Y_hat, _, _ = ref.classify(st, X_te[i])
        beyond = list(st["beyond"])
        before = {k: np.array(model._state[k]) for k in ("Wt", "counts", "log_averout")}
        y = model.predict_stream(X_te[i : i + 1])[0]
        ref.stream_step(st, X_te[i])
        assert sorted(np.flatnonzero(y)) == sorted(Y_hat)
        moved = np.flatnonzero((model._state["Wt"] != before["Wt"]).any(axis=0))
        for c in beyond:
            neurons = np.arange(offsets[c], offsets[c + 1])
            assert y[c] == 1
            assert not np.isin(neurons, moved).any(), (i, c)
            np.testing.assert_array_equal(
                model._state["counts"][neurons], before["counts"][neurons]
            )
            np.testing.assert_array_equal(
                model._state["log_averout"][neurons], before["log_averout"][neurons]
            )
        if beyond:
            seen += 1
            ranked = [c for c in Y_hat if c not in beyond]
            assert any(np.isin(np.arange(offsets[c], offsets[c + 1]), moved).any() for c in ranked)
    assert seen >= 5, seen
    assert st["min_gap"] > MIN_GAP
    explained(st, assert_same_state, model, st)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tested_corrections_are_the_same_on_every_path(dtype):
    """corrections="tested" on a model with many neurons and labels: every SIMD path and
    screening off (every distance exact, every re-classification from the start) give the
    same predictions and model, bit for bit; with screening, the re-classifications took both
    the short way (the instance's ranking kept, the Bayes tests alone) and the whole one."""
    X_tr, Y_tr, X_te = make_stream(93, 7, 24, n_train=600, n_test=700)
    X_tr, X_te = X_tr.astype(dtype), X_te.astype(dtype)
    model, _ = fit_both(X_tr, Y_tr, params(5, corrections="tested"))
    Yl = random_labels(93, 700, 7, unknown=0.1)
    runs, counts = [], None
    for level in _testing.simd_levels() + [None]:
        m = copy.deepcopy(model)
        switch = {"simd": level} if level is not None else {"screening": False}
        with _testing.switches(**switch):
            _testing.counters(reset=True)
            Y = m.predict_stream(X_te[400:], arrivals=(X_te[:400], Yl[:400], np.arange(400) // 2))
            if level is None:
                assert _testing.counters().pair_bayes == 0
            elif counts is None:
                counts = _testing.counters()
        runs.append((Y, m))
    assert counts.pair_bayes > 0 and counts.pair_whole > 0, counts
    assert runs[0][1].correction_pairs_[1] > 0
    for Y, m in runs[1:]:
        np.testing.assert_array_equal(Y, runs[0][0])
        assert_bitwise_equal(m, runs[0][1])


def _fresh_cache(s):
    return mlsom._som._margin_order(s["margin_memory"], s["margin_kinds"], s["margin_counts"])


def _assert_same_cache(got, want):
    order, n_sorted, sorted_margins, synced = got
    np.testing.assert_array_equal(n_sorted, want[1])
    np.testing.assert_array_equal(synced, want[3])
    for c in range(len(n_sorted)):
        np.testing.assert_array_equal(order[c, : n_sorted[c]], want[0][c, : want[1][c]])
        np.testing.assert_array_equal(sorted_margins[c, : n_sorted[c]], want[2][c, : want[1][c]])


@pytest.mark.parametrize("win", [1, 2, 7, 50])
def test_the_sorted_cache_brought_up_to_its_ring_is_a_fresh_one(win):
    """The online phase brings a label's sorted cache of its ring up to the ring only when it
    chooses the label's offset (one merge: the entries written over leave, the new ones are
    sorted in). Against the cache built afresh by NumPy (_margin_order: by margin, larger first,
    older first on a tie), from random rings with many equal margins, kinds of every sort and
    syncs after 0 to 3 rings' worth of new entries."""
    rng = np.random.default_rng(win)
    L = 3
    mg = np.zeros((L, win))
    mk = np.zeros((L, win), dtype=np.uint8)
    mtot = np.zeros(L, dtype=np.int64)
    cache = [a.copy() for a in mlsom._som._margin_order(mg, mk, mtot)]
    for _ in range(300):
        for c in range(L):
            for _ in range(rng.integers(0, 3 * win + 2) if rng.random() < 0.3 else 0):
                kind, y = rng.integers(0, 3), rng.integers(0, 2)
                p = mtot[c] % win
                mk[c, p] = 2 * kind + y
                mg[c, p] = rng.choice([-1.5, -0.0, 0.0, 0.25, 2.0, rng.normal()]) * (kind == 1)
                mtot[c] += 1
        _core.sync_margin_order(mg, mk, mtot, *cache)
        _assert_same_cache(cache, mlsom._som._margin_order(mg, mk, mtot))
    assert mtot.min() > 10 * win


def test_rule_past_its_window_matches_reference_and_survives_a_reload(tmp_path):
    """More labelled entries than a label's ring holds (500): the oldest leave the ring and the
    sorted cache the online phase keeps of it; offsets, kinds and margins stay the reference's,
    the cache equals one built afresh from the rings, and a model saved and loaded in between
    (which rebuilds the cache) ends bit-identical to one that was not."""
    X_tr, Y_tr, X_te = make_stream(81, 2, 3, n_test=1400)
    model, st = fit_both(X_tr, Y_tr, params(2))
    Yl = random_labels(81, len(X_te), 2, unknown=0.1)
    twin = None
    for lo, hi in [(0, 500), (500, 900), (900, 1400)]:
        st = ref.ref_learn(st, X_te[lo:hi], Yl[lo:hi])
        model.partial_fit(X_te[lo:hi], Yl[lo:hi])
        if twin is None:
            model.save(tmp_path / "mid.npz")
            twin = SOMStreamClassifier.load(tmp_path / "mid.npz")
        else:
            twin.partial_fit(X_te[lo:hi], Yl[lo:hi])
        assert st["min_gap"] > MIN_GAP, "degenerate data: a labelled choice is a rounding tie"
        assert_same_rule(model, st)
    s = model._state
    assert s["margin_counts"].min() > 1000 and np.any(s["label_offsets"] != 0)
    # the cache as the online phase left it (each label's as at its last choice of offset),
    # brought up to the rings, is one built afresh from them
    order, n_sorted, sorted_margins, synced = (a.copy() for a in s["margin_order"])
    assert np.all(synced % 25 == 0) and np.all(synced <= s["margin_counts"])
    _core.sync_margin_order(
        s["margin_memory"], s["margin_kinds"], s["margin_counts"], order, n_sorted,
        sorted_margins, synced,
    )  # fmt: skip
    _assert_same_cache((order, n_sorted, sorted_margins, synced), _fresh_cache(s))
    assert_bitwise_equal(model, twin)
    for k in _schema.names("rule"):
        np.testing.assert_array_equal(s[k], twin._state[k], err_msg=k)
    np.testing.assert_array_equal(model.predict(X_te), twin.predict(X_te))


@pytest.mark.parametrize("corrections", ["strong", "tested"])
@pytest.mark.parametrize("seed", [91, 92])
def test_labels_in_the_robust_variant_match_reference(seed, corrections):
    """The robust variant's acceptance offset and each label's offset learnt from labels act
    together (the label's on top of the variant's), the paired test's re-classifications
    with them; every choice is the reference's."""
    X_tr, Y_tr, X_te = make_stream(seed, 4, 6, n_test=400)
    model, st = fit_both(X_tr, Y_tr, params(3, variant="robust", corrections=corrections))
    assert st["min_gap"] > MIN_GAP
    Yl = random_labels(seed, len(X_te), 4, unknown=0.1)
    tested = corrections == "tested"
    for lo, hi in [(0, 150), (150, 400)]:
        Y_ref, st = ref.ref_stream(st, X_te[lo:hi])
        explained(st, assert_same_predictions, model.predict_stream(X_te[lo:hi]), Y_ref)
        st = ref.ref_learn(st, X_te[lo:hi], Yl[lo:hi], tested=tested)
        model.partial_fit(X_te[lo:hi], Yl[lo:hi])
        assert st["min_gap"] > MIN_GAP, "degenerate data: a labelled choice is a rounding tie"
        explained(st, assert_same_state, model, st)
        assert_same_rule(model, st)
        if tested:
            _assert_same_pairs(model, st)
    assert np.any(model._state["label_offsets"] != 0)
    Y_ref, _ = ref.ref_predict(st, X_te)
    assert_same_predictions(model.predict(X_te), Y_ref)


def test_label_cap_is_the_ceiling_of_the_labelled_cardinality():
    assert ref.label_cap(2.0) == 2
    assert ref.label_cap(2.01) == 3
    assert ref.label_cap(0.3) == 1
    assert ref.label_cap(0.0) == 1


def test_bound_keeps_ranked_labels_first_then_the_largest_slack():
    """The reference's bound on its own (the package is checked against it below): ranked labels
    in their order, then labels beyond the ranking by slack, label order on a tie; the gap
    records how near a kept slack is to a dropped one."""
    # ranked 4, 1; beyond 0 (slack 0.5), 2 (2.0), 3 (0.5)
    Y_hat = [4, 1, 0, 2, 3]
    slack = {0: 0.5, 2: 2.0, 3: 0.5}
    assert ref.bound_labels(Y_hat, slack, 5, np.inf) == (Y_hat, np.inf)
    kept, gap = ref.bound_labels(Y_hat, slack, 3, np.inf)
    assert kept == [4, 1, 2]
    assert gap == pytest.approx(1.5 / 3.5)
    kept, gap = ref.bound_labels(Y_hat, slack, 4, np.inf)
    assert kept == [4, 1, 0, 2]  # 0 and 3 tie: label order
    assert gap == 0.0  # a tie at the cut: the reference cannot judge it
    assert ref.bound_labels(Y_hat, slack, 1, np.inf)[0] == [4]
    assert ref.bound_labels([4, 1, 0], {0: 9.0}, 1, np.inf)[0] == [4]


def _bound_binds(monkeypatch):
    """Count the reference's calls of bound_labels that drop a label."""
    dropped = []
    bound = ref.bound_labels

    def counting(Y_hat, slack, cap, gap):
        kept, gap = bound(Y_hat, slack, cap, gap)
        if len(kept) < len(Y_hat):
            dropped.append(len(Y_hat) - len(kept))
        return kept, gap

    monkeypatch.setattr(ref, "bound_labels", counting)
    return dropped


@pytest.mark.parametrize("variant", ["paper", "robust"])
def test_labels_past_the_labelled_cardinality_are_dropped_as_the_reference_does(
    monkeypatch, variant
):
    """Once labels have taught the rule, an instance gets at most max(1, ceil z) labels, z the
    labelled cardinality: on a stream of many labels whose labels beyond the ranking pass their
    tests often, the bound drops labels (it binds), and every prediction, online and frozen
    (one row at a time and the 16-row path), and the state after are the reference's."""
    L = 10
    X_tr, Y_tr, X_te = make_stream(23, L, 6, n_test=700)
    model, st = fit_both(X_tr, Y_tr, params(3, variant=variant))
    dropped = _bound_binds(monkeypatch)
    Yl = random_labels(23, len(X_te), L, unknown=0.0)
    Yl[:, 5:] = 0  # half the labels never positive in the labels that arrive: z stays small
    st = ref.ref_learn(st, X_te[:150], Yl[:150], eta=0.05, rate=0.5)
    model.partial_fit(X_te[:150], Yl[:150])
    cap = max(1, int(np.ceil(model.labelled_cardinality_)))
    Y_ref, st = ref.ref_stream(st, X_te[150:450])
    Y_pkg = model.predict_stream(X_te[150:450])
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    assert Y_pkg.sum(axis=1).max() <= cap
    assert len(dropped) >= 10, dropped
    explained(st, assert_same_state, model, st)
    Y_ref, gap = ref.ref_predict(st, X_te[450:])
    assert gap > MIN_GAP
    one_by_one = np.concatenate([model.predict(X_te[i : i + 1]) for i in range(450, len(X_te))])
    assert_same_predictions(one_by_one, Y_ref)
    assert_same_predictions(model.predict(X_te[450:]), Y_ref)  # 250 rows: the 16-row path
    assert one_by_one.sum(axis=1).max() <= cap
