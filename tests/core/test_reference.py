"""The package against the plain-NumPy reference implementation in tests/helpers/reference.py.

Every discrete choice (BMUs, neuron order, accept/reject) must be the same, every count identical,
every real number equal to 1e-10. The data are chosen so that no choice hinges on rounding: the
reference measures the smallest relative margin of all its choices (``min_gap``) and each test
first asserts that it is comfortably above round-off.
"""

import copy
import itertools

import numpy as np
import pytest

from tests.helpers import reference as ref
from tests.helpers.compare import (
    MIN_GAP,
    assert_same_state,
    fit_both,
    make_stream,
    params,
    run_case,
)

# ---------------------------------------------------------------------------- data


# ---------------------------------------------------------------------------- comparison


# ---------------------------------------------------------------------------- random streams

# every (L, d, A); neighbourhood, distance and zero-co-occurrence rule rotate over them
GRID = list(itertools.product([1, 2, 5, 8], [1, 2, 3, 5], [1, 3, 20]))
# twice, so that every (L, d, A) meets both neighbourhoods, both distances and both rules
RANDOM_CASES = [
    (
        L,
        d,
        A,
        ("bubble", "gaussian")[(i + k) % 2],
        ("euclidean", "sqeuclidean")[(i // 2 + k) % 2],
        ("reject", "skip")[(i // 4 + k) % 2],
        i + 48 * k,
    )
    for k in (0, 1)
    for i, (L, d, A) in enumerate(GRID)
]
# Data on which a choice is a tie in exact arithmetic that only rounding breaks (min_gap ~ 0)
# cannot be compared; these grid points get another seed or neighbourhood. A Gaussian map that
# collapses onto two populated units gives such ties: exp(-g^2/2r^2) factorises, so units u, v
# with g(u,a)^2 - g(u,b)^2 = g(v,a)^2 - g(v,b)^2 get the same mean through different sums.
RANDOM_CASES[33] = RANDOM_CASES[33][:3] + ("bubble",) + RANDOM_CASES[33][4:]  # (5, 5, 1)
RANDOM_CASES[35] = RANDOM_CASES[35][:6] + (135,)  # (5, 5, 20)
RANDOM_CASES[94] = RANDOM_CASES[94][:6] + (194,)  # (8, 5, 3)


@pytest.mark.parametrize("L, d, A, nb, dist, zc, seed", RANDOM_CASES)
def test_random_stream_matches_reference(L, d, A, nb, dist, zc, seed):
    X_tr, Y_tr, X_te = make_stream(seed, L, A)
    _, Y, _ = run_case(
        X_tr,
        Y_tr,
        X_te,
        params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc, random_state=seed),
    )
    assert Y.sum(axis=1).min() >= 1  # at least one label per instance, always
    if L >= 5:  # the data are meant to exercise the Bayes rule, not just the vote
        assert (Y.sum(axis=1) > 1).any(), "no multi-label prediction: the case is too weak"


def test_random_streams_predict_many_multilabel_rows():
    # over the multi-label cases, extra labels are accepted and rejected alike
    multi, total, rejected = 0, 0, 0
    for L, d, A, nb, dist, zc, seed in RANDOM_CASES[:48]:
        if L < 2 or d not in (2, 3):
            continue
        X_tr, Y_tr, X_te = make_stream(seed, L, A)
        p = params(
            d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc, random_state=seed
        )
        _, st = fit_both(X_tr, Y_tr, p)
        Y, st = ref.ref_stream(st, X_te)
        multi += int((Y.sum(axis=1) > 1).sum())
        total += len(Y)
        rejected += int((Y.sum(axis=1) < min(-(-st["S"] // st["N"]), L)).sum())
    assert multi > 0.2 * total
    assert rejected > 0.05 * total


@pytest.mark.parametrize(
    "nb, dist, zc", [("bubble", "euclidean", "reject"), ("gaussian", "sqeuclidean", "skip")]
)
def test_default_schedule_matches_reference(nb, dist, zc):
    # n_epochs=100, max_epochs=1000 as in the paper
    X_tr, Y_tr, X_te = make_stream(101, 5, 3, n_train=150, n_test=100)
    run_case(
        X_tr,
        Y_tr,
        X_te,
        params(
            3,
            n_epochs=100,
            max_epochs=1000,
            neighborhood=nb,
            averout_distance=dist,
            zero_cooccurrence=zc,
            random_state=7,
        ),
    )


@pytest.mark.parametrize("eta", [0.1, 0.2])
def test_learning_rate_matches_reference(eta):
    X_tr, Y_tr, X_te = make_stream(6, 5, 3)
    run_case(X_tr, Y_tr, X_te, params(3, learning_rate=eta, random_state=6))


# ---------------------------------------------------------------------------- special cases


@pytest.mark.parametrize(
    "L, absent, nb", [(2, (0,), "bubble"), (5, (1, 4), "gaussian"), (8, (0, 3, 7), "bubble")]
)
def test_labels_absent_from_training(L, absent, nb):
    X_tr, Y_tr, X_te = make_stream(20 + L, L, 3, absent=absent)
    model, Y, _ = run_case(X_tr, Y_tr, X_te, params(3, neighborhood=nb, random_state=L))
    for j in absent:
        assert model.weights_[j] is None and model.n_iter_[j] is None
        assert not Y[:, j].any()  # never predicted
        assert not model.T_[j].any() and not model.T_[:, j].any()
    assert len(absent) < L and Y.any()


@pytest.mark.parametrize(
    "d, n_rare, nb", [(3, 5, "bubble"), (5, 7, "gaussian"), (5, 1, "bubble"), (2, 3, "gaussian")]
)
def test_class_with_fewer_instances_than_neurons(d, n_rare, nb):
    # the rare map is initialised with replacement: duplicate units, exact BMU ties (first wins)
    X_tr, Y_tr, X_te = make_stream(30 + d, 5, 3, rare=(2, n_rare))
    assert Y_tr[:, 2].sum() == n_rare < d * d
    model, _, _ = run_case(
        X_tr, Y_tr, X_te, params(d, neighborhood=nb, min_neuron_size=1, random_state=d)
    )
    assert model.neuron_counts_[2].sum() >= n_rare


@pytest.mark.parametrize("min_size, d", [(1000, 3), (1000, 5), (30, 3)])
def test_maps_left_with_a_single_neuron(min_size, d):
    # no unit reaches min_neuron_size: the most populated (first of them) is kept alone
    X_tr, Y_tr, X_te = make_stream(40 + d, 5, 3, n_train=200)
    model, _, st = run_case(X_tr, Y_tr, X_te, params(d, min_neuron_size=min_size, random_state=1))
    sizes = [len(w) for w in model.weights_ if w is not None]
    assert 1 in sizes
    if min_size == 1000:
        assert set(sizes) == {1} and model.k_nn_ == 1


def test_single_label_rare_class_falls_back_to_largest_unit():
    # one map with a single neuron (n_j = 3 < min_neuron_size), the others with many: k_nn = 1
    X_tr, Y_tr, X_te = make_stream(50, 5, 3, n_train=200, rare=(0, 3))
    model, _, _ = run_case(X_tr, Y_tr, X_te, params(3, random_state=2))
    assert len(model.weights_[0]) == 1 and model.k_nn_ == 1
    assert max(len(w) for w in model.weights_ if w is not None) > 1


# ---------------------------------------------------------------------------- the vote tie rule


def test_vote_tie_goes_to_the_label_with_the_nearest_neuron():
    # Single-label training set: z = 1, so the prediction is exactly the first vote's winner.
    # Four overlapping labels in 2-D; maps of 8, 8, 8 and 9 neurons give k_nn = 8 - 1 = 7, and
    # 3:3:1 or 2:2:2:1 splits. Pick query points where the tie rule alone decides: the nearest
    # neuron overall belongs to a label outside the tie, and the winner is not the lowest tied
    # label index.
    rng = np.random.default_rng(1)
    lab = rng.integers(0, 4, size=300)
    X_tr = rng.random((300, 2)) + 0.1 * lab[:, None]
    Y_tr = np.eye(4, dtype=np.uint8)[lab]
    model, st = fit_both(X_tr, Y_tr, params(3, min_neuron_size=6, random_state=1))
    assert st["min_gap"] > MIN_GAP
    assert_same_state(model, st)
    assert sorted(len(m["weights"]) for m in st["maps"])[0] == 8 and model.k_nn_ == 7
    k = model.k_nn_
    owners = np.concatenate([[j] * len(w) for j, w in enumerate(model.weights_)])
    W = np.concatenate(model.weights_)

    Xq, winners = [], []
    for x in rng.random((2000, 2)) * 1.4:
        d2 = ((W - x) ** 2).sum(axis=1)
        taken = owners[np.argsort(d2, kind="stable")[:k]]
        votes = np.bincount(taken, minlength=4)
        tied = np.flatnonzero(votes == votes.max())
        if len(tied) < 2 or taken[0] in tied:
            continue
        winner = next(c for c in taken if c in tied)  # the first tied label in distance order
        if winner != tied.min():
            Xq.append(x)
            winners.append(winner)
    assert len(Xq) >= 20
    Xq = np.array(Xq[:40])
    expected = np.eye(4, dtype=np.uint8)[winners[:40]]
    Y_ref, gap = ref.ref_predict(st, Xq)
    assert gap > MIN_GAP
    np.testing.assert_array_equal(Y_ref, expected)
    np.testing.assert_array_equal(model.predict(Xq), expected)
    for i in range(5):
        one = copy.deepcopy(model).predict_stream(Xq[i : i + 1])
        np.testing.assert_array_equal(one, expected[i : i + 1])


# ------------------------------------------------------------------ exact ties of equal means


def _same_rows_case(which):
    if which == "minimal":
        # 16 rows in 1-D, 3x3 map, radii 1.73, 1.15, 0.58. The bubble epoch at radius 1.15 gives
        # units (0,0) and (0,1) the mean of the same 4 rows; the winner-only epoch recomputes
        # (0,0) from those 4 rows, now its own, and leaves (0,1), which has no row, as it was.
        # Both hold the mean of the same rows, so the rows tie exactly between them, and by the
        # first-index rule all go to (0,0): (0,1) ends empty and is dropped. An implementation
        # that sums the same rows in a different order the second time (e.g. per-BMU group
        # sums, then the group's own rows) gets means 1 ulp apart and splits the rows 2/2.
        rng = np.random.default_rng(172)
        n, A = rng.integers(5, 40), rng.integers(1, 5)
        X = rng.random((n, A))
        return (
            X,
            np.ones((n, 1), np.uint8),
            params(3, n_epochs=3, max_epochs=3, min_neuron_size=1, random_state=172),
        )
    # a realistic one: default-like settings, the early large-radius epochs collapse the map on
    # two populated units, so groups of up to four units share their rows and tie exactly
    X_tr, Y_tr, _ = make_stream(5, 5, 3)
    return X_tr, Y_tr, params(3, random_state=5)


@pytest.mark.parametrize("which", ["minimal", "stream"])
def test_units_with_the_same_rows_get_identical_means(which):
    X, Y, p = _same_rows_case(which)
    model, st = fit_both(X, Y, p)
    assert st["min_gap"] > MIN_GAP  # every tie in the reference is between identical weights
    if which == "minimal":
        assert [0, 1] not in st["maps"][0]["pos"].tolist()
    for j, m in enumerate(st["maps"]):
        np.testing.assert_array_equal(model.grid_positions_[j], m["pos"], err_msg=f"label {j}")
    assert_same_state(model, st)


# ---------------------------------------------------------------------------- frozen and chunked


@pytest.mark.parametrize(
    "L, d, nb, dist, zc",
    [(5, 3, "bubble", "euclidean", "reject"), (8, 2, "gaussian", "sqeuclidean", "skip")],
)
def test_predict_is_the_first_step_of_predict_stream(L, d, nb, dist, zc):
    X_tr, Y_tr, X_te = make_stream(60 + L, L, 3)
    model, st = fit_both(
        X_tr,
        Y_tr,
        params(d, neighborhood=nb, averout_distance=dist, zero_cooccurrence=zc, random_state=L),
    )
    model.predict_stream(X_te[:50])  # a state that has moved away from the fit
    _, st = ref.ref_stream(st, X_te[:50])
    Xq = X_te[50:90]
    before = copy.deepcopy(model)
    Y = model.predict(Xq)
    Y_ref, gap = ref.ref_predict(st, Xq)
    assert gap > MIN_GAP
    np.testing.assert_array_equal(Y, Y_ref)
    assert (Y.sum(axis=1) > 1).any()
    for i, x in enumerate(Xq):
        np.testing.assert_array_equal(copy.deepcopy(before).predict_stream(x[None]), Y[i : i + 1])
    assert_same_state(model, st)  # predict left the model untouched


@pytest.mark.parametrize("split", [1, 75, 149])
def test_stream_in_two_chunks_equals_one_call(split):
    X_tr, Y_tr, X_te = make_stream(70, 5, 20)
    model, st = fit_both(X_tr, Y_tr, params(3, random_state=9))
    whole = copy.deepcopy(model)
    Y_whole = whole.predict_stream(X_te)
    Y_parts = np.vstack([model.predict_stream(X_te[:split]), model.predict_stream(X_te[split:])])
    np.testing.assert_array_equal(Y_parts, Y_whole)
    _, st = ref.ref_stream(st, X_te)
    assert_same_state(model, st)
    assert_same_state(whole, st)


# ---------------------------------------------------------------------------- the reference itself


def test_reference_grid_and_probabilities():
    pos, G = ref.hex_grid(3)
    assert pos[4].tolist() == [1, 1]
    assert sorted(G[4])[:7] == [0.0] + [1.0] * 6  # inner unit: six neighbours at exactly 1
    assert np.quantile(ref.hex_grid(5)[1], 2 / 3) == 3.0
    assert np.quantile(ref.hex_grid(2)[1], 2 / 3) == 1.0
    T = np.array([[4, 2, 0], [2, 2, 0], [0, 0, 0]])
    np.testing.assert_allclose(ref.prob(T, 8), [[0.5, 1.0, 0], [0.5, 0.25, 0], [0, 0, 0]])
    # the ranking: k = 3 over labels [1, 2, 2, 1, 0] sorted by distance -> 2 wins 2:1,
    # then k = 3 over [1, 1, 0] -> 1
    owners = [1, 2, 2, 1, 0]
    assert ref.rank_labels(owners, np.array([1.0, 2, 3, 4, 5]), 3, 3) == [2, 1, 0]
    # tie 1:1:1 -> the label of the nearest neuron; equal distances -> global index order
    assert ref.rank_labels([2, 0, 1], np.array([1.0, 2, 3]), 3, 1) == [2]
    assert ref.rank_labels([2, 0, 1], np.array([1.0, 1, 1]), 3, 1) == [2]
    assert ref.rank_labels([0, 1, 1, 0], np.array([1.0, 2, 3, 4]), 4, 1) == [0]
