"""Baselines (mlsom.baselines): they learn, they follow their protocol, they are reproducible."""

import inspect
import json
import math
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("river")

from mlsom.baselines import (  # noqa: E402
    HOMER,
    LOWER_BOUNDS,
    UPPER_BOUNDS,
    ADWINBaggingML,
    EnsembleOfClassifierChains,
    J48Tree,
    LinearSVM,
    MLkNN,
    PSHoeffdingTree,
    RAkEL,
    make_base_learner,
)
from mlsom.baselines._batch import (  # noqa: E402
    _balanced_kmeans,
    _pessimistic_errors,
    _pruned_sets_data,
)
from mlsom.protocol import evaluate  # noqa: E402

LOWER = sorted(LOWER_BOUNDS)
UPPER = sorted(UPPER_BOUNDS)

# Smaller pruned-sets buffers than MEKA's 1,000 so that the short test streams get past them.
UPPER_OVERRIDES = {
    "PS-HT": {"buffer_size": 150},
    "EaPS-HT": {"member_params": {"buffer_size": 150}},
}


def upper(name, seed=0):
    return UPPER_BOUNDS[name](random_state=seed, **UPPER_OVERRIDES.get(name, {}))


def easy_stream(n=500, seed=0):
    """Two uniform features; three labels given by axis-aligned thresholds (no noise)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    Y = np.column_stack([X[:, 0] > 0.5, X[:, 1] > 0.5, X[:, 0] < 0.25]).astype(np.uint8)
    return X, Y


def hamming_accuracy(Y, P):
    return float((np.asarray(Y) == np.asarray(P)).mean())


def macro_f1(Y, P):
    tp = ((Y == 1) & (P == 1)).sum(0)
    fp = ((Y == 0) & (P == 1)).sum(0)
    fn = ((Y == 1) & (P == 0)).sum(0)
    den = 2 * tp + fp + fn
    return float(np.where(den > 0, 2 * tp / np.maximum(den, 1), 1.0).mean())


def trivial(Y_train, n):
    """Per-label majority of the training set: the constant predictor to beat."""
    return np.tile((Y_train.mean(axis=0) > 0.5).astype(np.uint8), (n, 1))


@pytest.fixture(scope="module")
def easy():
    X, Y = easy_stream(500)
    return X[:200], Y[:200], X[200:], Y[200:]


# =========================================================================== lower bounds


def test_lower_registry_names_the_papers_baselines():
    families = ["BR", "LP", "RAkEL", "CC", "PS", "EPS", "ECC", "HOMER"]
    expected = {f"{f}-{b}" for f in families for b in ("J48", "SVM", "kNN")} | {"ML-kNN"}
    assert set(LOWER_BOUNDS) == expected
    for name in LOWER:
        assert LOWER_BOUNDS[name]().kind == "batch"


@pytest.mark.parametrize("name", LOWER)
def test_lower_bound_learns_a_separable_stream(name, easy):
    X_tr, Y_tr, X_te, Y_te = easy
    P = LOWER_BOUNDS[name](random_state=0).fit(X_tr, Y_tr).predict(X_te)
    assert P.dtype == np.uint8 and P.shape == Y_te.shape
    base = trivial(Y_tr, len(Y_te))
    assert hamming_accuracy(Y_te, P) > hamming_accuracy(Y_te, base) + 0.25
    assert macro_f1(Y_te, P) > 0.8 > macro_f1(Y_te, base)


@pytest.mark.parametrize("name", LOWER)
def test_lower_bound_never_sees_test_labels_nor_learns_after_fit(name, easy, monkeypatch):
    X_tr, Y_tr, X_te, _ = easy
    model = LOWER_BOUNDS[name](random_state=0)
    assert list(inspect.signature(model.predict).parameters) == ["X"]
    assert model.fit(X_tr, Y_tr) is model
    whole = model.predict(X_te)
    attributes = sorted(vars(model))

    # from now on, any training of a scikit-learn estimator fails the test
    import sklearn.neighbors
    import sklearn.preprocessing
    import sklearn.svm
    import sklearn.tree

    def refuse(*args, **kwargs):
        raise AssertionError("a base learner was trained during predict")

    for cls in (
        sklearn.tree.DecisionTreeClassifier,
        sklearn.svm.SVC,
        sklearn.neighbors.KNeighborsClassifier,
        sklearn.neighbors.NearestNeighbors,
        sklearn.preprocessing.MinMaxScaler,
    ):
        monkeypatch.setattr(cls, "fit", refuse)
    monkeypatch.setattr(type(model), "fit", refuse)

    later, earlier = X_te[150:], X_te[:150]
    first = model.predict(later)
    chunks = [model.predict(X_te[a:b]) for a, b in ((0, 1), (1, 60), (60, 150), (150, 300))]
    np.testing.assert_array_equal(np.vstack(chunks), whole)
    np.testing.assert_array_equal(model.predict(later), first)  # no memory of other chunks
    np.testing.assert_array_equal(first, whole[150:])
    np.testing.assert_array_equal(model.predict(earlier), whole[:150])
    assert sorted(vars(model)) == attributes  # predict stored nothing new


class SpyBatch:
    """Records the calls the protocol makes; delegates to a real lower bound."""

    kind = "batch"

    def __init__(self, method):
        self.method, self.calls = method, []

    def get_params(self):
        return self.method.get_params()

    def fit(self, X, Y):
        self.calls.append(("fit", len(X)))
        self.method.fit(X, Y)
        return self

    def predict(self, X):
        self.calls.append(("predict", len(X)))
        return self.method.predict(X)


@pytest.mark.parametrize("name", ["BR-J48", "ECC-kNN", "HOMER-SVM", "ML-kNN"])
def test_lower_bound_through_the_protocol_is_fitted_once_before_any_predict(name, easy):
    X_tr, Y_tr, X_te, Y_te = easy
    spy = SpyBatch(LOWER_BOUNDS[name](random_state=0))
    evaluate(spy, (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, n_windows=3, chunk_size=70)
    kinds = [c[0] for c in spy.calls]
    assert kinds[0] == "fit" and kinds.count("fit") == 1
    assert kinds[1:] == ["predict"] * math.ceil(len(X_te) / 70)
    assert sum(n for k, n in spy.calls if k == "predict") == len(X_te)


@pytest.mark.parametrize("name", LOWER)
def test_lower_bound_predicts_the_constant_of_a_single_class_label(name, easy):
    X_tr, Y_tr, X_te, Y_te = easy
    Y_const = np.column_stack([Y_tr[:, :2], np.zeros(len(Y_tr)), np.ones(len(Y_tr)), Y_tr[:, 2]])
    P = LOWER_BOUNDS[name](random_state=0).fit(X_tr, Y_const.astype(np.uint8)).predict(X_te)
    assert (P[:, 2] == 0).all() and (P[:, 3] == 1).all()
    informative = P[:, [0, 1, 4]]
    assert hamming_accuracy(Y_te, informative) > hamming_accuracy(Y_te, trivial(Y_tr, len(Y_te)))


@pytest.mark.parametrize("name", LOWER)
def test_lower_bound_is_deterministic_by_seed_and_params_are_json(name, easy):
    X_tr, Y_tr, X_te, _ = easy
    a = LOWER_BOUNDS[name](random_state=3).fit(X_tr, Y_tr).predict(X_te)
    b = LOWER_BOUNDS[name](random_state=3).fit(X_tr, Y_tr).predict(X_te)
    np.testing.assert_array_equal(a, b)
    params = LOWER_BOUNDS[name](random_state=3).get_params()
    assert json.loads(json.dumps(params)) == params
    assert params["random_state"] == 3


def test_lower_bound_refits_from_scratch(easy):
    X_tr, Y_tr, X_te, _ = easy
    model = LOWER_BOUNDS["ECC-J48"](random_state=0)
    first = model.fit(X_tr, Y_tr).predict(X_te)
    model.fit(X_tr[:50], 1 - Y_tr[:50])
    np.testing.assert_array_equal(model.fit(X_tr, Y_tr).predict(X_te), first)


def test_lower_bound_input_errors(easy):
    X_tr, Y_tr, X_te, _ = easy
    with pytest.raises(ValueError, match="base"):
        LOWER_BOUNDS["BR-J48"](base="c45").fit(X_tr, Y_tr)
    with pytest.raises(ValueError, match="base"):
        make_base_learner("c45")
    with pytest.raises(ValueError, match="0 and 1"):
        LOWER_BOUNDS["BR-J48"]().fit(X_tr, Y_tr * 2)
    with pytest.raises(ValueError, match="features"):
        LOWER_BOUNDS["BR-J48"]().fit(X_tr, Y_tr).predict(X_te[:, :1])
    with pytest.raises(ValueError, match="not fitted"):
        LOWER_BOUNDS["LP-J48"]().predict(X_te)
    with pytest.raises(ValueError, match="n_models"):
        RAkEL(n_models=5).fit(X_tr, Y_tr)  # only C(3, 2) = 3 subsets of 2 labels exist


# ----------------------------------------------------------------- building blocks


def test_pessimistic_error_matches_closed_forms():
    n = np.array([10.0, 10.0, 5.0])
    e = np.array([0.0, 10.0, 2.0])
    got = _pessimistic_errors(e, n, 0.25)
    assert got[0] == pytest.approx(10 * (1 - 0.25 ** (1 / 10)))  # no error: 1 - CF^(1/N)
    assert got[1] == 10.0
    # the upper limit U of 2 errors in 5 satisfies P(Binomial(5, U) <= 2) = 0.25
    u = got[2] / 5
    cdf = sum(math.comb(5, i) * u**i * (1 - u) ** (5 - i) for i in range(3))
    assert cdf == pytest.approx(0.25)


def test_j48_pruning_removes_noise_splits_and_can_be_switched_off():
    rng = np.random.default_rng(0)
    X = rng.random((1200, 3))
    y = ((X[:, 0] > 0.5) ^ (rng.random(1200) < 0.2)).astype(int)
    pruned = J48Tree(random_state=0).fit(X[:800], y[:800])
    full = J48Tree(confidence=None, random_state=0).fit(X[:800], y[:800])
    leaves = lambda t: np.unique(t.effective_node_[t.tree_.apply(X.astype(np.float32))]).size  # noqa: E731
    assert pruned.n_pruned_nodes_ > 0 and full.n_pruned_nodes_ == 0
    assert leaves(pruned) < leaves(full) / 2
    np.testing.assert_array_equal(full.predict(X), full.tree_.predict(X))
    assert (pruned.predict(X[800:]) == y[800:]).mean() > (full.predict(X[800:]) == y[800:]).mean()
    proba = pruned.predict_proba(X[800:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_linear_svm_predicts_as_scikit_learns_svc(n_classes):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.svm import SVC

    rng = np.random.default_rng(n_classes)
    X = rng.random((400, 3)) * np.array([1.0, 50.0, 0.1])
    y = ((X[:, 0] * n_classes).astype(int) + rng.integers(0, 2, 400)) % n_classes
    X_test = rng.random((3000, 3)) * np.array([1.2, 50.0, 0.1])
    ref = make_pipeline(MinMaxScaler(), SVC(kernel="linear", C=1.0)).fit(X, y).predict(X_test)
    got = LinearSVM().fit(X, y).predict(X_test)
    assert (got == ref).mean() > 0.999


def test_pruned_sets_transformation_by_hand():
    Y = np.array(
        [[1, 1, 1]] + [[1, 1, 0]] * 4 + [[1, 0, 0]] * 5 + [[0, 1, 1]] * 4 + [[0, 0, 1]] * 2
    )
    rows, Y_new = _pruned_sets_data(Y, p=3, strategy="A", b=2)
    # {1,1,1} (once) is replaced by its two largest frequent subsets; {0,0,1} has none: dropped
    got = sorted((int(r), tuple(y)) for r, y in zip(rows, Y_new.tolist(), strict=True))
    expect = sorted([(0, (1, 1, 0)), (0, (0, 1, 1))] + [(i, tuple(Y[i])) for i in range(1, 14)])
    assert got == expect
    rows, Y_new = _pruned_sets_data(Y, p=3, strategy="A", b=1)
    # a tie (same size, same count) goes to the label set first in numpy.unique's sorted order
    assert [tuple(y) for r, y in zip(rows, Y_new.tolist(), strict=True) if r == 0] == [(0, 1, 1)]
    rows, Y_new = _pruned_sets_data(Y, p=4, strategy="B", b=1)
    # p=4 keeps only {1,0,0}; nothing with more than one label is frequent
    assert set(map(tuple, Y_new.tolist())) == {(1, 0, 0)} and 0 not in rows


def test_rakel_draws_distinct_subsets_by_seed():
    rng = np.random.default_rng(0)
    X = rng.random((120, 3))
    Y = (rng.random((120, 6)) < 0.4).astype(np.uint8)
    a = RAkEL(random_state=0).fit(X, Y)
    assert len(a.subsets_) == 12  # min(2L, C(6, 3))
    assert len({tuple(s) for s in a.subsets_}) == 12 and all(len(s) == 3 for s in a.subsets_)
    assert a.subsets_ != RAkEL(random_state=1).fit(X, Y).subsets_
    two = RAkEL().fit(X, Y[:, :2])  # k lowered to L - 1 = 1: one model per label
    assert sorted(map(tuple, two.subsets_)) == [(0,), (1,)]


def test_ecc_uses_random_orders_and_bootstraps():
    rng = np.random.default_rng(0)
    X = rng.random((100, 3))
    Y = (rng.random((100, 5)) < 0.4).astype(np.uint8)
    m = EnsembleOfClassifierChains(random_state=0).fit(X, Y)
    assert len(m.orders_) == 10 and all(sorted(o) == list(range(5)) for o in m.orders_)
    assert len({tuple(o) for o in m.orders_}) > 1


def test_balanced_kmeans_finds_balanced_groups():
    rng = np.random.default_rng(0)
    base = (rng.random((3, 200)) < 0.5).astype(float)
    noise = (rng.random((6, 200)) < 0.03).astype(float)
    vectors = np.abs(np.repeat(base, 2, axis=0) - noise)  # labels 2i and 2i+1 nearly equal
    groups = _balanced_kmeans(vectors, 3, 20, np.random.default_rng(0))
    assert sorted(tuple(g) for g in groups) == [(0, 1), (2, 3), (4, 5)]
    # capacity ceil(7 / 3) = 3 holds even when 5 labels are identical
    same = np.vstack([np.ones((5, 10)), np.zeros((2, 10))])
    groups = _balanced_kmeans(same, 3, 20, np.random.default_rng(0))
    assert sum(len(g) for g in groups) == 7 and max(len(g) for g in groups) <= 4


def test_homer_builds_a_hierarchy_and_descends_it():
    rng = np.random.default_rng(1)
    X = rng.random((400, 2))
    # seven labels: three thresholds on x0, four on x1
    Y = np.column_stack(
        [X[:, 0] > t for t in (0.2, 0.5, 0.8)] + [X[:, 1] > t for t in (0.2, 0.4, 0.6, 0.8)]
    ).astype(np.uint8)
    m = HOMER(random_state=0).fit(X[:250], Y[:250])
    children = m.root_["children"]
    assert 2 <= len(children) <= 3 and any(isinstance(c, dict) for c in children)

    def leaves(node):
        return [c for ch in node["children"] for c in ([ch] if isinstance(ch, int) else leaves(ch))]

    assert sorted(leaves(m.root_)) == list(range(7))
    P = m.predict(X[250:])
    assert hamming_accuracy(Y[250:], P) > 0.9
    flat = HOMER().fit(X[:250], Y[:250, :2])  # fewer labels than clusters: binary relevance
    assert flat.root_["children"] == [0, 1]


# =========================================================================== ML-kNN


def test_mlknn_posteriors_by_hand():
    X = np.array([[0.0], [1.0], [3.0], [10.0], [11.0], [13.0]])
    Y = np.array([[1, 1], [1, 0], [1, 0], [0, 0], [0, 1], [0, 0]])
    m = MLkNN(k=1).fit(X, Y)
    # label 0: prior (1+3)/(2+6); positives all have 1 positive neighbour, negatives 0
    np.testing.assert_allclose(m.prior_, [0.5, 3 / 8])
    np.testing.assert_allclose(m.cond_true_[0], [1 / 5, 4 / 5])
    np.testing.assert_allclose(m.cond_false_[0], [4 / 5, 1 / 5])
    # label 1: neighbours 0->1, 1->0, 3->1, 10->11, 11->10, 13->11 give counts 0,1,0,1,0,1
    np.testing.assert_allclose(m.cond_true_[1], [3 / 4, 1 / 4])
    np.testing.assert_allclose(m.cond_false_[1], [2 / 6, 4 / 6])
    Xq = np.array([[0.2], [12.8]])
    np.testing.assert_allclose(m.predict_proba(Xq), [[0.8, 9 / 49], [0.2, 27 / 47]])
    np.testing.assert_array_equal(m.predict(Xq), [[1, 0], [0, 1]])


def test_mlknn_properties():
    rng = np.random.default_rng(0)
    X = rng.random((150, 3))
    Y = (rng.random((150, 4)) < np.array([0.1, 0.3, 0.5, 0.7])).astype(np.uint8)
    Y[:, 0] = X[:, 0] > 0.6
    m = MLkNN().fit(X[:100], Y[:100])
    proba = m.predict_proba(X[100:])
    assert ((proba >= 0) & (proba <= 1)).all()
    np.testing.assert_array_equal(m.predict(X[100:]), proba > 0.5)
    # scaled distances: a positive affine change of a feature changes nothing
    X2 = X * np.array([1000.0, 1.0, 0.01]) + np.array([-5.0, 3.0, 7.0])
    np.testing.assert_array_equal(
        MLkNN().fit(X2[:100], Y[:100]).predict(X2[100:]), m.predict(X[100:])
    )
    # labels are handled independently: permuting them permutes the predictions
    perm = [2, 0, 3, 1]
    np.testing.assert_array_equal(
        MLkNN().fit(X[:100], Y[:100, perm]).predict(X[100:]), m.predict(X[100:])[:, perm]
    )
    # k larger than the training set is lowered to n - 1
    small = MLkNN(k=50).fit(X[:5], Y[:5])
    assert small.k_ == 4 and small.predict(X[100:]).shape == (50, 4)


# =========================================================================== upper bounds


def test_upper_registry_names_the_papers_baselines():
    assert set(UPPER_BOUNDS) == {
        "BR-HT",
        "CC-HT",
        "PS-HT",
        "MLHT",
        "ISOUPTree",
        "EaBR-HT",
        "EaCC-HT",
        "EaPS-HT",
        "EaMLHT",
        "EaISOUPTree",
    }
    for name in UPPER:
        assert UPPER_BOUNDS[name]().kind == "incremental"


@pytest.fixture(scope="module")
def easy_long():
    X, Y = easy_stream(1300, seed=1)
    return X[:300], Y[:300], X[300:], Y[300:]


@pytest.mark.parametrize("name", UPPER)
def test_upper_bound_learns_and_does_not_invert_labels(name, easy_long):
    X_tr, Y_tr, X_te, Y_te = easy_long
    P = upper(name).fit(X_tr, Y_tr).predict_learn(X_te, Y_te)
    assert P.dtype == np.uint8 and P.shape == Y_te.shape
    late_truth, late = Y_te[-500:], P[-500:]
    base = trivial(Y_tr, len(late_truth))
    assert hamming_accuracy(late_truth, late) > hamming_accuracy(late_truth, base) + 0.2
    assert macro_f1(late_truth, late) > 0.75
    # an inverted label set would score near 0 here
    assert hamming_accuracy(late_truth, 1 - late) < 0.2


@pytest.mark.parametrize("name", ["PS-HT", "MLHT", "EaPS-HT", "EaMLHT"])
def test_label_set_learners_predict_seen_label_sets_not_their_complements(name):
    # features carry no information and four label sets are equally likely, so the winning label
    # set's probability stays well below 0.5: the case where a decoder that derives per-label
    # probabilities from it predicts the complement of the label set
    rng = np.random.default_rng(0)
    sets = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0]], dtype=np.uint8)
    X = rng.random((700, 2))
    Y = sets[rng.integers(0, 4, 700)]
    P = upper(name).fit(X[:300], Y[:300]).predict_learn(X[300:], Y[300:])[-200:]
    seen = {tuple(s) for s in sets.tolist()}
    # label 3 is in no label set, but in the complement of every one
    assert not P[:, 3].any()
    assert not any(tuple(c) in seen for c in (1 - P).tolist())
    if not name.startswith("Ea"):  # a single model predicts one of its classes
        assert all(tuple(p) in seen for p in P.tolist())


@pytest.mark.parametrize("name", UPPER)
def test_upper_bound_predicts_each_row_before_learning_it(name):
    X, Y = easy_stream(260, seed=2)
    model = upper(name)
    events = []
    real_predict, real_learn = model._predict_one, model._learn_one

    def spy_predict(x):
        events.append(("predict", x[0], None))
        return real_predict(x)

    def spy_learn(x, y):
        events.append(("learn", x[0], y))
        return real_learn(x, y)

    model._predict_one, model._learn_one = spy_predict, spy_learn
    model.fit(X[:60], Y[:60])
    assert [e[0] for e in events] == ["learn"] * 60  # fit only learns, in order
    assert [e[1] for e in events] == X[:60, 0].tolist()
    events.clear()
    model.predict_learn(X[60:], Y[60:])
    assert [e[0] for e in events] == ["predict", "learn"] * 200
    assert [e[1] for e in events] == np.repeat(X[60:, 0], 2).tolist()
    assert [e[2] for e in events[1::2]] == [tuple(r) for r in Y[60:].tolist()]


@pytest.mark.parametrize("name", UPPER)
def test_upper_bound_prediction_of_a_row_ignores_its_labels(name):
    X, Y = easy_stream(320, seed=3)
    X_tr, Y_tr, X_te, Y_te = X[:20], Y[:20], X[20:], Y[20:]
    a = upper(name).fit(X_tr, Y_tr).predict_learn(X_te, Y_te)
    # a learner that took in the chunk's labels before predicting its rows would follow the
    # changed labels (the spy test above checks the row-by-row order itself)
    for i in (0, 150):
        changed = Y_te.copy()
        changed[i:] = 1 - changed[i:]  # row i's labels and every later row's are different
        b = upper(name).fit(X_tr, Y_tr).predict_learn(X_te, changed)
        np.testing.assert_array_equal(a[: i + 1], b[: i + 1])
        assert (a[i + 1 :] != b[i + 1 :]).any()  # the later labels are learnt and matter


@pytest.mark.parametrize("name", UPPER)
def test_upper_bound_is_deterministic_by_seed_and_chunk_size(name):
    X, Y = easy_stream(450, seed=4)
    whole = upper(name, seed=7).fit(X[:150], Y[:150]).predict_learn(X[150:], Y[150:])
    model = upper(name, seed=7).fit(X[:150], Y[:150])
    edges = [150, 151, 158, 230, 450]
    parts = [
        model.predict_learn(X[a:b], Y[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)
    ]
    np.testing.assert_array_equal(np.vstack(parts), whole)
    assert model.predict_learn(X[:0], Y[:0]).shape == (0, 3)
    # fit starts a fresh model: what was learnt before is forgotten
    np.testing.assert_array_equal(
        model.fit(X[:150], Y[:150]).predict_learn(X[150:], Y[150:]), whole
    )
    params = model.get_params()
    assert json.loads(json.dumps(params)) == params and params["random_state"] == 7


@pytest.mark.parametrize("name", UPPER)
def test_upper_bound_predicts_the_constant_of_a_single_class_label(name):
    X, Y = easy_stream(600, seed=5)
    n = len(Y)
    Yc = np.column_stack([Y, np.zeros(n), np.ones(n)]).astype(np.uint8)
    P = upper(name).fit(X[:200], Yc[:200]).predict_learn(X[200:], Yc[200:])
    assert (P[:, 3] == 0).all() and (P[:, 4] == 1).all()


def test_upper_bound_through_the_protocol_matches_direct_calls():
    X, Y = easy_stream(500, seed=6)
    direct = upper("EaCC-HT").fit(X[:200], Y[:200]).predict_learn(X[200:], Y[200:])
    res = evaluate(
        upper("EaCC-HT"),
        (X[200:], Y[200:]),
        X_train=X[:200],
        Y_train=Y[:200],
        n_windows=2,
        chunk_size=37,
        keep_predictions=True,
    )
    np.testing.assert_array_equal(res.unpacked_predictions(), direct)


class _Stub:
    """A member that predicts a fixed table of label sets, indexed by feature 0."""

    def __init__(self, table):
        self.table = table

    def predict(self, x):
        return list(self.table[int(x[0])])

    def scores(self, x):
        return [float(v) for v in self.predict(x)]

    def learn(self, x, y, w=1.0):
        pass


def test_adwin_bagging_replaces_the_member_whose_error_rose():
    n, L = 3000, 2
    rng = np.random.default_rng(0)
    Y = (rng.random((n, L)) < 0.5).astype(np.uint8)
    X = np.column_stack([np.arange(n), rng.random(n)]).astype(float)
    wrong_late = Y.copy()
    wrong_late[1500:] = 1 - wrong_late[1500:]  # right for 1,500 rows, then always wrong
    model = ADWINBaggingML("br", n_models=2, random_state=0).fit(X[:1], Y[:1])
    good, bad = _Stub(Y), _Stub(wrong_late)
    model.members_ = [good, bad]
    model.predict_learn(X, Y)
    assert model.n_replacements_ >= 1
    assert model.members_[0] is good and model.members_[1] is not bad


def test_upper_bound_input_errors():
    X, Y = easy_stream(50)
    with pytest.raises(ValueError, match="not fitted"):
        upper("BR-HT").predict_learn(X, Y)
    model = upper("BR-HT").fit(X, Y)
    with pytest.raises(ValueError, match="labels"):
        model.predict_learn(X, Y[:, :2])
    with pytest.raises(ValueError, match="member"):
        ADWINBaggingML("lp").fit(X, Y)
    with pytest.raises(ValueError, match="member_params"):
        ADWINBaggingML("br", member_params={"buffer_size": 10}).fit(X, Y)
    with pytest.raises(ValueError, match="buffer_size"):
        PSHoeffdingTree(buffer_size=0).fit(X, Y)


@pytest.mark.parametrize("module", ["_batch", "_mlknn", "_incremental", "_minas", "_lower_bounds"])
def test_each_baseline_module_imports_first_in_a_fresh_interpreter(module):
    # no import circle: whichever module a user (or a worker process) imports first is complete
    code = f"import mlsom.baselines.{module} as m; print(sorted(getattr(m, '__all__', [])))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
