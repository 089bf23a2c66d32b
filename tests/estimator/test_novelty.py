"""Novelty detection (``novelty=True``, src/mlsom/_detection.py) against the plain reference
(tests/helpers/reference.py: novelty_explained, novelty_kmeans, novelty_judge), and its API:
off by default, the stream's orchestration, chunking and threads, save/load mid-memory, the new
labels' attributes, predict and predict_one."""

import copy

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _detection, _schema, _testing
from mlsom._method import (
    NOVELTY_BLOCK,
    NOVELTY_BUFFER,
    NOVELTY_CHECK,
    NOVELTY_MIN_GROUP,
    NOVELTY_SPLIT,
)
from tests.helpers import reference as ref

CENTRES = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0], [9.0, 9.0]])


def _stream(seed=0, n=12000, new_at=(3000, 8000)):
    """Gaussian blobs: labels 0-2 from the start, label 3 from row new_at[0], 4 from new_at[1]."""
    rng = np.random.default_rng(seed)
    lab = rng.integers(0, 3, size=n)
    lab[new_at[0] :] = rng.integers(0, 4, size=n - new_at[0])
    lab[new_at[1] :] = rng.integers(0, 5, size=n - new_at[1])
    X = CENTRES[lab] + 0.5 * rng.normal(size=(n, 2))
    return X, np.eye(5, dtype=np.uint8)[lab]


def _fitted(novelty=True, **kw):
    X, Y = _stream()
    params = dict(grid_size=3, random_state=0, novelty=novelty) | kw
    return SOMStreamClassifier(**params).fit(X[:500], Y[:500, :3]), X[500:], Y[500:]


# ------------------------------------------------------------------ off by default


def test_off_by_default_and_no_state():
    model = SOMStreamClassifier(grid_size=3, random_state=0)
    assert model.novelty is False
    X, Y = _stream()
    model.fit(X[:500], Y[:500, :3])
    assert "radius" not in model._state and model.new_labels_ == ()
    P, unknown = model.predict_stream(X[500:3000], return_unknown=True)
    assert P.shape == (2500, 3) and not unknown.any()


def test_every_row_explained_is_the_plain_method():
    """With radii so large that every row is explained, detection changes nothing: the same
    predictions and the same neurons, bit for bit, as without it."""
    plain, X, _ = _fitted(novelty=False)
    model, _, _ = _fitted(novelty=True)
    model._state["radius"][:] = 1e6
    P0 = plain.predict_stream(X[:5000])
    P1, unknown = model.predict_stream(X[:5000], return_unknown=True)
    assert not unknown.any()
    np.testing.assert_array_equal(P0, P1)
    np.testing.assert_array_equal(plain._state["Wt"], model._state["Wt"])
    np.testing.assert_array_equal(plain._state["T"], model._state["T"])


# ---------------------------------------------------------- the steps, against the reference


@pytest.mark.parametrize("A, M, seed", [(1, 1, 0), (2, 9, 1), (7, 30, 2), (40, 25, 3)])
def test_explained_matches_reference(A, M, seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(A, M))
    radius = rng.uniform(0.5, 2.0, size=M) * np.sqrt(A)
    X = rng.normal(size=(300, A)) * 1.5
    # rows on a neuron's sphere, to the last bit (a radius set to the reference's distance):
    # whichever way the rounding of the square goes, the package must agree
    X[:5] = rng.normal(size=(5, A))
    for i in range(5):
        radius[i % M] = np.sqrt(np.sum((np.array(W[:, i % M]) - X[i]) ** 2))
    want = ref.novelty_explained(X, W, radius)
    np.testing.assert_array_equal(_detection.explained(X, W, radius), want)
    assert want.any() and not want.all()


@pytest.mark.parametrize("M, seed", [(64, 0), (200, 1), (63, 2)])
def test_explained_first_by_wins_matches_reference(M, seed):
    """The busiest quarter of the neurons first, the rest on the rows left: the reference's
    answers, with rows settled in either stage."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(3, M))
    radius = rng.uniform(0.05, 0.6, size=M)
    wins = rng.integers(0, 1000, size=M)
    X = rng.normal(size=(3000, 3))
    got = _detection.explained_first_by_wins(X, W, radius, wins)
    want = ref.novelty_explained(X, W, radius)
    np.testing.assert_array_equal(got, want)
    busy = np.argsort(-wins, kind="stable")[: M // 4]
    by_busy = ref.novelty_explained(X, W[:, busy], radius[busy])
    assert want.any() and by_busy.any() and (want & ~by_busy).any() and not want.all()


def test_units_the_end_of_the_labelled_set_left_explain_nothing():
    """A label whose rows move from one place to another over the (time-ordered) labelled set:
    the paper variant keeps the units of the place it left in its map, with radius 0 (exactly
    the units the robust variant drops), so an instance there is left unknown."""
    rng = np.random.default_rng(4)
    n = 2000
    X = np.vstack([rng.normal(size=(n // 2, 2)), rng.normal(size=(n // 2, 2)) + [8.0, 0.0]])
    X = np.vstack([X, rng.normal(size=(n, 2)) + [0.0, 8.0]])
    Y = np.zeros((2 * n, 2), dtype=np.uint8)
    Y[:n, 0] = 1
    Y[n:, 1] = 1
    order = np.argsort(np.r_[np.arange(n), np.arange(n)], kind="stable")  # interleaved in time
    X, Y = X[order], Y[order]
    kw = dict(grid_size=3, random_state=0, novelty=True)
    paper = SOMStreamClassifier(**kw).fit(X, Y)
    robust = SOMStreamClassifier(variant="robust", **kw).fit(X, Y)
    st, rb = paper._state, robust._state
    for j in range(2):
        lo, hi = st["offsets"][j], st["offsets"][j + 1]
        rlo, rhi = rb["offsets"][j], rb["offsets"][j + 1]
        fresh = {tuple(p) for p in rb["positions"][rlo:rhi]}
        stale = np.array([tuple(p) not in fresh for p in st["positions"][lo:hi]])
        np.testing.assert_array_equal(st["radius"][lo:hi] == 0, stale)
        assert stale.any() == (j == 0)
    left = np.array([[0.0, 0.0], [0.3, -0.2]])  # where label 0 was in the first half
    _, unknown = paper.predict_stream(left, return_unknown=True)
    assert unknown.all()


def test_explained_far_from_the_origin():
    """Large coordinates: the expansion's rounding is settled by the exact sums."""
    rng = np.random.default_rng(4)
    W = 1e6 + rng.normal(size=(3, 10))
    X = 1e6 + rng.normal(size=(500, 3))
    radius = np.full(10, 0.9)
    np.testing.assert_array_equal(
        _detection.explained(X, W, radius), ref.novelty_explained(X, W, radius)
    )


@pytest.mark.parametrize("n, A, k, seed", [(60, 2, 2, 0), (300, 3, 5, 1), (500, 10, 8, 2)])
def test_kmeans_matches_reference(n, A, k, seed):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, A)) + rng.integers(0, 4, size=(n, 1)) * 3.0
    a1, c1 = _detection.kmeans(B, k, np.random.default_rng(seed))
    a2, c2 = ref.novelty_kmeans(B, k, np.random.default_rng(seed))
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(c1, c2)


def test_judge_matches_reference():
    rng = np.random.default_rng(5)
    W = rng.normal(size=(2, 12)) * 3
    radius = rng.uniform(0.2, 1.0, size=12)
    verdicts = []
    for _ in range(200):
        centre = rng.normal(size=2) * 4
        G = centre + rng.normal(size=(40, 2)) * rng.uniform(0.05, 2.0)
        want = ref.novelty_judge(G, G.mean(axis=0), W, radius)
        got = _detection.judge(G, G.mean(axis=0), W, radius)
        assert got == want
        verdicts.append(want)
    # every outcome met: not cohesive, an extension, a new label
    assert None in verdicts and -1 in verdicts and any(v is not None and v >= 0 for v in verdicts)


def test_search_makes_the_labels_the_reference_judges():
    """A search on a state's memory: the groups are the reference k-means', each judged as the
    reference judges it; a new label per -1, its count in T, N and S, its rows taken out."""
    model, X, _ = _fitted()
    st = copy.deepcopy(model._state)
    rng = np.random.default_rng(6)
    rows = np.vstack([CENTRES[4] + 0.3 * rng.normal(size=(150, 2)), rng.normal(size=(20, 2)) * 9])
    pos = 5000
    _detection._remember(st, rows, np.arange(pos - rows.shape[0], pos))
    before = copy.deepcopy(st)
    _detection.search(st, pos, model_maker(model, st))
    B = rows.astype(np.float64)
    k = min(8, len(B) // NOVELTY_MIN_GROUP)
    assign, centres = ref.novelty_kmeans(
        B, k, np.random.default_rng((_detection.NOVELTY_SEED, pos))
    )
    verdicts = []
    for c in range(k):
        G = B[assign == c]
        if len(G) >= NOVELTY_MIN_GROUP:
            verdicts.append(
                (ref.novelty_judge(G, centres[c], before["Wt"], before["radius"]), len(G))
            )
    new = [g for v, g in verdicts if v == -1]
    assert new, verdicts  # the far blob is a new label
    assert st["n_labels"] == before["n_labels"] + len(new)
    made = [nl.made_from for nl in _detection.new_labels(st)]
    assert sorted(made) == sorted(new)
    assert int(st["NS"][0]) == int(before["NS"][0]) + sum(g for v, g in verdicts if v is not None)
    assert int(st["novelty_counts"][0]) == len(B) - sum(g for v, g in verdicts if v is not None)


def model_maker(model, st):
    """The estimator's map fitting for new labels, as predict_stream gives it to the search."""

    def make_map(G, rng):
        mp = model._label_map(np.ascontiguousarray(G), rng, st["grid_size"], 100, 1000, 1)
        keys = ("Wt", "counts", "log_averout", "positions", "radius", "epochs", "drift")
        return tuple(mp[k] for k in keys)

    return make_map


# ------------------------------------------------------------------ the stream


def _plain_loop(model, X):
    """The online phase with detection, one instance at a time, as docs/method.md states it:
    at the start of every block of NOVELTY_BLOCK instances the neurons are frozen; a row within
    novelty_radius times a frozen neuron's radius (reference test) goes through the core's
    online phase; any other is unknown and remembered; after every NOVELTY_CHECK unknown ones, a
    search. Each label predicted records the instance as its last use."""
    model = copy.deepcopy(model)
    factor = float(model.novelty_radius)
    st = model._state
    counts = st["novelty_counts"]
    online = model._online_settings()
    preds, unknown = [], []
    for x in X:
        if counts[1] % NOVELTY_BLOCK == 0:
            st["frozen"][...] = st["Wt"]
        if ref.novelty_explained(x[None], st["frozen"], factor * st["radius"])[0]:
            preds.append(model._stream(st, x[None], online, {})[0])
            unknown.append(False)
            st["label_origin"][2, : preds[-1].size][preds[-1] == 1] = counts[1]  # last use
        else:
            _detection._remember(st, x[None], np.array([counts[1]]))
            counts[2] += 1
            preds.append(np.zeros(st["n_labels"], dtype=np.uint8))
            unknown.append(True)
        counts[1] += 1
        if counts[2] >= NOVELTY_CHECK:
            counts[2] = 0
            _detection.search(st, int(counts[1]), model_maker(model, st), factor)
    L = st["n_labels"]
    P = np.vstack([np.pad(p, (0, L - p.size)) for p in preds])
    return P, np.array(unknown), model


@pytest.mark.parametrize("factor, d", [(1.0, 3), (0.7, 3), (1.4, 3), (1.0, 5)])
def test_stream_matches_the_plain_loop(factor, d):
    """(d = 5: 75 neurons, the test in two stages.)"""
    model, X, _ = _fitted(novelty_radius=factor, grid_size=d)
    assert (model._state["Wt"].shape[1] >= NOVELTY_SPLIT) == (d == 5)
    P_ref, unk_ref, twin = _plain_loop(model, X[:4000])
    P, unknown = model.predict_stream(X[:4000], return_unknown=True)
    np.testing.assert_array_equal(unknown, unk_ref)
    np.testing.assert_array_equal(P, P_ref)
    assert model.n_labels_ > 3  # a new label was made on the way
    for key in ("Wt", "T", "NS", "radius", "novelty_buffer", "label_origin"):
        np.testing.assert_array_equal(model._state[key], twin._state[key])


def test_novelty_radius_scales_the_test_at_the_next_call():
    """novelty_radius multiplies every radius in the test (against the reference), takes effect
    at the next call without a new fit, and a larger one leaves fewer rows unknown."""
    model, X, _ = _fitted()
    st = model._state
    unknown = {}
    for factor in (0.5, 1.0, 1.5):
        model.set_params(novelty_radius=factor)
        P = model.predict(X[:3000])
        far = ~ref.novelty_explained(X[:3000], st["Wt"], factor * st["radius"])
        assert not P[far].any() and P[~far].any(axis=1).all()
        unknown[factor] = far
    assert unknown[0.5].sum() > unknown[1.0].sum() > unknown[1.5].sum() > 0
    assert not (unknown[1.5] & ~unknown[1.0]).any()


def test_bad_novelty_radius_is_refused_and_changes_nothing():
    model, X, _ = _fitted()
    before = copy.deepcopy(model._state)
    for bad, err, msg in [
        (0.0, ValueError, r"novelty_radius must be >= 0.01, got 0.0"),
        (101, ValueError, r"novelty_radius must be <= 100.0, got 101"),
        (float("nan"), ValueError, r"novelty_radius must be finite, got nan"),
        ("2", TypeError, r"novelty_radius must be a real number, got '2'"),
    ]:
        model.set_params(novelty_radius=bad)
        for call in (
            lambda: model.predict_stream(X[:100]),
            lambda: model.predict(X[:100]),
            lambda: model.partial_fit(X[:5], np.ones((5, 3))),
        ):
            with pytest.raises(err, match=msg):
                call()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(model._state[key], value, err_msg=key)


@pytest.mark.parametrize("sizes", [[1, 999, 1000, 5500], [257, 3, 5000, 2240], [7500]])
def test_chunking_and_threads_change_nothing(sizes):
    whole, X, _ = _fitted()
    P, unknown = whole.predict_stream(X[:7500], return_unknown=True)
    model, _, _ = _fitted(n_jobs=2)
    parts, unks, start = [], [], 0
    for s in sizes:
        p, u = model.predict_stream(X[start : start + s], return_unknown=True)
        parts.append(p)
        unks.append(u)
        start += s
    L = model.n_labels_
    got = np.vstack([np.pad(p, ((0, 0), (0, L - p.shape[1]))) for p in parts])
    np.testing.assert_array_equal(got, P)
    np.testing.assert_array_equal(np.concatenate(unks), unknown)
    for key in whole._state:
        if isinstance(whole._state[key], np.ndarray):
            np.testing.assert_array_equal(model._state[key], whole._state[key], err_msg=key)


def test_new_labels_found_and_described():
    model, X, Y = _fitted()
    P = model.predict_stream(X)
    found = model.new_labels_
    assert len(found) >= 2 and [nl.name for nl in found][:2] == ["NP1", "NP2"]
    assert model.label_names_ == [0, 1, 2, *[nl.name for nl in found]]
    assert model.n_labels_ == 3 + len(found) == P.shape[1]
    first = found[0]
    # label 3 appears at row 2500 of this stream: found after it, within a few thousand
    assert 2500 < first.created_at < 5000
    assert first.made_from >= NOVELTY_MIN_GROUP and first.n_explained >= first.made_from
    # its predictions are the new label's instances
    hits = P[:, first.column] == 1
    assert hits.sum() > 500 and Y[hits, 3].mean() > 0.95
    # a row left unknown has no label
    _, unknown, patterns = model.predict_stream(X[:100], return_unknown=True, return_patterns=True)
    assert patterns.shape == (100, len(found))


def test_frozen_predict_and_predict_one_know_the_new_labels():
    model, X, Y = _fitted()
    model.predict_stream(X[:6000])
    L = model.n_labels_
    assert L > 3
    P = model.predict(X[6000:7000])
    assert P.shape == (1000, L)
    unknown = ~ref.novelty_explained(X[6000:7000], model._state["Wt"], model._state["radius"])
    assert not P[unknown].any() and P[~unknown].any(axis=1).all()
    one = model.predict_one(X[7000])
    assert set(one) == set(range(model.n_labels_))


def test_save_and_load_mid_memory_resume_exactly(tmp_path):
    for variant in ("paper", "robust"):
        model, X, _ = _fitted(variant=variant)
        model.predict_stream(X[:2417])
        assert 0 < model._state["novelty_counts"][0] < NOVELTY_BUFFER  # a part-filled memory
        model.save(tmp_path / "m.npz")
        loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
        np.testing.assert_array_equal(
            model.predict_stream(X[2417:]), loaded.predict_stream(X[2417:])
        )
        assert loaded.new_labels_ == model.new_labels_ and len(model.new_labels_) > 0


def test_memory_and_labels_stay_bounded():
    """A stream of instances scattered far from every map, then of bursts each far from the
    others: the memory never holds more than its length, and no more than NOVELTY_MAX_LABELS
    new labels are made."""
    model, _, _ = _fitted()
    rng = np.random.default_rng(7)
    noise = rng.uniform(-400, 400, size=(6000, 2))
    model.predict_stream(noise)
    assert int(model._state["novelty_counts"][0]) <= NOVELTY_BUFFER
    bursts = np.repeat(rng.uniform(-1e5, 1e5, size=(150, 2)), 100, axis=0)
    bursts += rng.normal(size=bursts.shape)
    model.predict_stream(bursts)
    assert int(model._state["novelty_counts"][0]) <= NOVELTY_BUFFER
    live = [nl for nl in model.new_labels_ if not nl.retired]
    assert len(live) == _detection.NOVELTY_MAX_LABELS


def test_unused_new_labels_retire():
    model, X, _ = _fitted()
    model.predict_stream(X[:4000])
    assert model.new_labels_
    st = model._state
    # a stream of label 0 alone, long past NOVELTY_FORGET, with a far burst now and then
    rng = np.random.default_rng(8)
    only0 = CENTRES[0] + 0.5 * rng.normal(size=(_detection.NOVELTY_FORGET + 3000, 2))
    only0[-200:] = CENTRES[4] + 0.5 * rng.normal(size=(200, 2))
    P = model.predict_stream(only0)
    retired = [nl for nl in model.new_labels_ if nl.retired]
    assert retired
    for nl in retired:  # its map is gone, its column stays, never predicted after
        assert st["offsets"][nl.column] == st["offsets"][nl.column + 1]
    assert P.shape[1] == model.n_labels_


# ------------------------------------------------------------------ errors


def test_bad_novelty_switched_on_after_fit_and_bad_arrivals():
    with pytest.raises(TypeError, match="novelty must be True or False, got 'yes'"):
        SOMStreamClassifier(novelty="yes").fit(np.zeros((4, 1)), np.ones((4, 1)))
    plain, X, _ = _fitted(novelty=False)
    twin = copy.deepcopy(plain)
    plain.set_params(novelty=True)  # (shapes the model at fit: the next fit)
    np.testing.assert_array_equal(plain.predict_stream(X[:3000]), twin.predict_stream(X[:3000]))
    assert "radius" not in plain._state
    model, X, _ = _fitted()
    before = copy.deepcopy(model._state)
    with pytest.raises(ValueError, match="after must be non-decreasing and within 0..10"):
        model.predict_stream(X[:10], arrivals=(X[:2], np.ones((2, 3)), [5, 11]))
    with pytest.raises(ValueError, match="after must be non-decreasing"):  # (no wrap-around)
        model.predict_stream(X[:10], arrivals=(X[:2], np.ones((2, 3)), np.uint64([5, 3])))
    with pytest.raises(ValueError, match="Y_labelled has 2 label columns"):
        model.predict_stream(X[:10], arrivals=(X[:2], np.ones((2, 2)), [5, 6]))
    with pytest.raises(TypeError, match="return_unknown must be True or False"):
        model.predict_stream(X[:10], return_unknown="no")
    for key, value in before.items():  # nothing changed
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(model._state[key], value)


# ------------------------------------------------------------------ labels that name new labels


def test_labels_beyond_the_fitted_ones_name_a_new_label(tmp_path):
    """partial_fit with a label column the model did not know at fit: the new label whose
    instances it matches is named by it (its column, the caller's label index in
    label_names_); a column that matches none becomes a label of its own, with a map."""
    model, X, Y = _fitted()
    model.predict_stream(X[:6000])
    found = model.new_labels_
    assert found and found[0].named is None
    L = model.n_labels_
    # labels arrive for 300 instances, with the caller's own column 3 (true label 3)
    rows = slice(6000, 6300)
    model.partial_fit(X[rows], Y[rows, :4])
    assert model.n_labels_ == L
    named = [nl for nl in model.new_labels_ if nl.named == 3]
    assert len(named) == 1
    assert model.label_names_[named[0].column] == 3
    # label 4 has not appeared yet in rows 6000-6300 of this stream (it comes at 7500): a column
    # for it with positives from later rows matches no new label: a label of its own
    late = np.flatnonzero(Y[:, 4] == 1)[:40]
    Y5 = np.full((40, 5), -1, dtype=np.int8)
    Y5[:, 4] = 1
    model.partial_fit(X[late], Y5)
    assert model.n_labels_ == L + 1 and model.label_names_[-1] == 4
    P = model.predict(X[late])
    assert P[:, -1].mean() > 0.5  # its own instances get it
    # and the caller's columns stay put in a later call, in any width up to the known ones
    model.partial_fit(X[rows], Y[rows, :3])
    model.save(tmp_path / "m.npz")
    again = SOMStreamClassifier.load(tmp_path / "m.npz")
    assert again.label_names_ == model.label_names_
    assert again.new_labels_ == model.new_labels_


def test_label_columns_out_of_range_are_refused_and_change_nothing():
    model, X, Y = _fitted()
    model.predict_stream(X[:3000])
    before = copy.deepcopy(model._state)
    with pytest.raises(ValueError, match="Y has 2 label columns; with novelty detection"):
        model.partial_fit(X[:5], Y[:5, :2])
    with pytest.raises(ValueError, match="at most 100 labels the model did not know"):
        model.partial_fit(X[:5], np.zeros((5, 104)))
    with pytest.raises(ValueError, match="only 1, 0 or -1"):
        model.partial_fit(X[:5], np.full((5, 4), 2))
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(model._state[key], value)


def test_arrivals_are_the_pieces_and_partial_fit():
    """predict_stream(arrivals=) with novelty detection: the pieces of X, each labelled row
    learnt by partial_fit once its rows are classified (a column beyond the fitted ones too)."""
    model, X, Y = _fitted()
    twin = copy.deepcopy(model)
    Xl, Yl = X[6000:6300], Y[6000:6300, :4].astype(np.int8)
    after = np.sort(np.random.default_rng(9).integers(0, 6000, size=300))
    after[:5] = 0
    P, unknown = model.predict_stream(X[:6000], arrivals=(Xl, Yl, after), return_unknown=True)
    parts, unks, start = [], [], 0
    for stop in [*np.unique(after), 6000]:
        if stop > start:
            p, u = twin.predict_stream(X[start:stop], return_unknown=True)
            parts.append(p)
            unks.append(u)
            start = stop
        if (after == stop).any():
            twin.partial_fit(Xl[after == stop], Yl[after == stop])
    L = twin.n_labels_
    np.testing.assert_array_equal(
        P, np.vstack([np.pad(p, ((0, 0), (0, L - p.shape[1]))) for p in parts])
    )
    np.testing.assert_array_equal(unknown, np.concatenate(unks))
    assert model.label_names_ == twin.label_names_ and 3 in model.label_names_
    for key, value in twin._state.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(model._state[key], value, err_msg=key)


def test_every_simd_path_gives_the_same_stream():
    """The stream with detection (new labels made on the way) on every SIMD path this processor
    has: the same predictions, unknown rows and state, bit for bit."""
    results = []
    for level in _testing.simd_levels():
        model, X, _ = _fitted()
        with _testing.switches(simd=_testing.SIMD_NAMES[level]):
            P, unknown = model.predict_stream(X[:6000], return_unknown=True)
            F = model.predict(X[6000:7000])
        results.append((P, unknown, F, model._state))
    assert results[0][0].shape[1] > 3
    for P, unknown, F, st in results[1:]:
        np.testing.assert_array_equal(P, results[0][0])
        np.testing.assert_array_equal(unknown, results[0][1])
        np.testing.assert_array_equal(F, results[0][2])
        for key in ("Wt", "T", "radius", "novelty_buffer", "label_origin"):
            np.testing.assert_array_equal(st[key], results[0][3][key])


def test_an_extension_grows_the_map_at_the_nearest_free_cell():
    """A group that extends a label whose grid has free cells: a neuron at the group's centre
    joins that label's map at the free cell nearest (grid distance, reference hex_grid) to the
    neuron it met, with the rows' largest distance as its radius; the offsets after it move."""
    model, X, _ = _fitted()
    st = copy.deepcopy(model._state)
    lo, hi = int(st["offsets"][0]), int(st["offsets"][1])
    _schema.delete(st, "M", lo + 1, lo + 3)  # two cells of label 0's grid free
    st["offsets"][1:] -= 2
    near = lo
    rng = np.random.default_rng(11)
    centre = st["Wt"][:, near] + 0.1
    G = centre + 0.01 * rng.normal(size=(40, 2))
    d = st["grid_size"]
    _, grid = ref.hex_grid(d)
    taken = {tuple(p) for p in st["positions"][lo : hi - 2].tolist()}
    free = [u for u in range(d * d) if (u // d, u % d) not in taken]
    at = st["positions"][near]
    want = free[int(np.argmin([grid[at[0] * d + at[1], u] for u in free]))]
    M = st["Wt"].shape[1]
    _detection.extend(st, G, G.mean(axis=0), near, pos=100)
    assert st["Wt"].shape[1] == M + 1 and st["offsets"][1] == hi - 1
    b = hi - 2  # the new neuron: after label 0's others
    assert tuple(st["positions"][b]) == (want // d, want % d)
    np.testing.assert_array_equal(st["Wt"][:, b], G.mean(axis=0))
    assert st["radius"][b] == pytest.approx(np.sqrt(((G - G.mean(axis=0)) ** 2).sum(1)).max())
    assert st["ncls"][b] == 0 and st["counts"][b] == 40
