"""The delayed-label protocol of mlsom.protocol: a share of the test rows get their labels back,
some rows later, and every method that learns labels gets the same ones at the same times."""

import warnings

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom.protocol import evaluate, evaluate_many


def _data(seed=0, n_train=150, n_test=400, L=3, A=4):
    rng = np.random.default_rng(seed)
    centres = rng.random((4, A)) * 4
    base = rng.random((4, L)) < 0.5
    base[:, 0] |= ~base.any(axis=1)

    def draw(n, shift):
        k = rng.integers(0, 4, size=n)
        return centres[k] + shift + 0.3 * rng.normal(size=(n, A)), base[k].astype(np.uint8)

    X_tr, Y_tr = draw(n_train, 0.0)
    X_te, Y_te = draw(n_test, np.linspace(0, 1, n_test)[:, None])
    return X_tr, Y_tr, X_te, Y_te


def _som():
    return SOMStreamClassifier(grid_size=3, random_state=0, n_epochs=10, max_epochs=50)


def _fit(method, X, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return method.fit(X, Y)


def _run(method, X_tr, Y_tr, X_te, Y_te, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(
            method, (X_te, Y_te), X_train=X_tr, Y_train=Y_tr, keep_predictions=True, **kw
        )


def _by_hand(method, X_te, Y_te, fraction, delay, seed, predict):
    """The protocol written out row by row: the reference the runner must match."""
    chosen = np.random.default_rng(seed).random(len(X_te)) < fraction
    out = np.zeros(Y_te.shape, dtype=bool)
    for t in range(len(X_te)):
        out[t] = np.asarray(predict(method, X_te[t : t + 1]))[0].astype(bool)
        i = t - delay
        if i >= 0 and chosen[i]:
            method.partial_fit(X_te[i : i + 1], Y_te[i : i + 1])
    return out


def _runner_against_the_loop(make, predict, data, chunk_size, fraction, delay, seed):
    """The runner's predictions for a fresh method from ``make`` against the row-by-row loop's
    (``_by_hand``) for another; returns the runner's result."""
    X_tr, Y_tr, X_te, Y_te = data
    res = _run(
        make(),
        X_tr,
        Y_tr,
        X_te,
        Y_te,
        chunk_size=chunk_size,
        label_fraction=fraction,
        label_delay=delay,
        label_seed=seed,
    )
    want = _by_hand(_fit(make(), X_tr, Y_tr), X_te, Y_te, fraction, delay, seed, predict)
    np.testing.assert_array_equal(res.unpacked_predictions().astype(bool), want)
    return res


def _upper_bound():
    """River's BR Hoeffding tree (needs the river extra)."""
    pytest.importorskip("river")
    from mlsom.baselines import BRHoeffdingTree

    return BRHoeffdingTree(random_state=0)


@pytest.mark.parametrize("method", ["mlsom", "BR-HT"])
@pytest.mark.parametrize("fraction, delay", [(0.3, 0), (0.3, 17), (1.0, 5), (0.05, 120)])
@pytest.mark.parametrize("chunk_size", [1000, 7])
def test_runner_is_the_protocol_written_out(method, fraction, delay, chunk_size):
    """mlsom (predict_stream, then partial_fit of the labels due) and an upper bound (predict,
    then partial_fit) give exactly the predictions of the row-by-row loop, whatever the
    chunks."""
    X_tr, Y_tr, X_te, Y_te = _data(1)
    if method == "mlsom":
        runs = [(_som, lambda m, X: m.predict_stream(X))]
    else:
        _upper_bound()
        runs = [(_upper_bound, lambda m, X: m.predict(X))]
    for make, predict in runs:
        res = _runner_against_the_loop(
            make, predict, (X_tr, Y_tr, X_te, Y_te), chunk_size, fraction, delay, 3
        )
        labels = res.info["labels"]
        assert labels["learns_labels"]
        chosen = np.random.default_rng(3).random(len(X_te)) < fraction
        assert labels["labels_given"] == int(chosen[: len(X_te) - delay].sum())


def test_fraction_zero_is_todays_protocol_for_mlsom():
    X_tr, Y_tr, X_te, Y_te = _data(2)
    old = _run(_som(), X_tr, Y_tr, X_te, Y_te)
    new = _run(_som(), X_tr, Y_tr, X_te, Y_te, label_fraction=0.0, label_delay=100)
    np.testing.assert_array_equal(
        old.unpacked_predictions().astype(bool), new.unpacked_predictions().astype(bool)
    )
    assert "labels" not in old.info and new.info["labels"]["labels_given"] == 0


def test_every_label_at_once_is_test_then_train_for_the_upper_bounds():
    X_tr, Y_tr, X_te, Y_te = _data(3)
    old = _run(_upper_bound(), X_tr, Y_tr, X_te, Y_te)
    new = _run(_upper_bound(), X_tr, Y_tr, X_te, Y_te, label_fraction=1.0)
    np.testing.assert_array_equal(
        old.unpacked_predictions().astype(bool), new.unpacked_predictions().astype(bool)
    )
    # and with no label at all, the upper bound never learns after fit
    none = _run(_upper_bound(), X_tr, Y_tr, X_te, Y_te, label_fraction=0.0)
    frozen = _fit(_upper_bound(), X_tr, Y_tr).predict(X_te)
    np.testing.assert_array_equal(none.unpacked_predictions().astype(bool), frozen.astype(bool))


class _Spy:
    """An online method that records its calls: (rows predicted so far, labelled rows)."""

    kind = "online"

    def __init__(self, n_labels, learns=True):
        self.n_labels, self.calls, self.seen = n_labels, [], 0
        if learns:
            self.partial_fit = self._partial_fit

    def fit(self, X, Y):
        return self

    def predict_stream(self, X):
        self.seen += len(X)
        self.calls.append(("predict", len(X)))
        return np.zeros((len(X), self.n_labels), dtype=np.uint8)

    def _partial_fit(self, X, Y):
        self.calls.append(("labels", self.seen, X.copy(), Y.copy()))
        return self


class _IncrementalSpy(_Spy):
    kind = "incremental"

    def predict(self, X):
        return self.predict_stream(X)

    def predict_learn(self, X, Y):  # pragma: no cover - not called under the label protocol
        raise AssertionError("predict_learn under the delayed-label protocol")


def test_every_learner_gets_the_same_labels_at_the_same_times():
    X_tr, Y_tr, X_te, Y_te = _data(4)
    spies = {
        "online": _Spy(3),
        "incremental": _IncrementalSpy(3),
        "no_partial_fit": _Spy(3, learns=False),
    }
    res = evaluate_many(
        spies,
        (X_te, Y_te),
        X_train=X_tr,
        Y_train=Y_tr,
        chunk_size=50,
        label_fraction=0.2,
        label_delay=30,
        label_seed=9,
    )
    got = {
        k: [(c[1], c[2].tolist(), c[3].tolist()) for c in s.calls if c[0] == "labels"]
        for k, s in spies.items()
    }
    chosen = np.flatnonzero(np.random.default_rng(9).random(len(X_te)) < 0.2)
    want = [(i + 31, [X_te[i].tolist()], [Y_te[i].tolist()]) for i in chosen if i + 30 < 400]
    assert got["online"] == want
    assert got["incremental"] == want
    assert got["no_partial_fit"] == []  # MINAS-BR's case: run as before, whole chunks
    assert spies["no_partial_fit"].calls == [("predict", 50)] * 8
    assert not res["no_partial_fit"].info["labels"]["learns_labels"]


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"label_fraction": -0.1}, ValueError, "label_fraction"),
        ({"label_fraction": 1.5}, ValueError, "label_fraction"),
        ({"label_fraction": float("nan")}, ValueError, "label_fraction"),
        ({"label_fraction": "all"}, TypeError, "label_fraction"),
        ({"label_fraction": True}, TypeError, "label_fraction"),
        ({"label_fraction": 0.1, "label_delay": -1}, ValueError, "label_delay"),
        ({"label_fraction": 0.1, "label_delay": 2.5}, TypeError, "label_delay"),
        ({"label_fraction": 0.1, "label_seed": -1}, ValueError, "label_seed"),
        ({"label_fraction": 0.1, "label_seed": "x"}, TypeError, "label_seed"),
        # checked without a fraction too (they were not)
        ({"label_delay": -5}, ValueError, "label_delay must be >= 0, got -5"),
        ({"label_delay": 2.5}, TypeError, "label_delay"),
        ({"label_seed": -1}, ValueError, "label_seed must be non-negative, got -1"),
        ({"label_seed": "x"}, TypeError, "label_seed must be an integer, got 'x'"),
    ],
)
def test_bad_protocol_arguments_are_refused(kw, exc, match):
    X_tr, Y_tr, X_te, Y_te = _data(5, n_test=50)
    model = _som()
    with pytest.raises(exc, match=match):
        _run(model, X_tr, Y_tr, X_te, Y_te, **kw)
    assert not hasattr(model, "_state")  # refused before anything ran


def test_rows_due_after_the_stream_ends_are_not_kept():
    """Labels that would arrive after the last row never arrive: the run is the one without
    labels, and the rows are not kept waiting (they were, for any delay)."""
    from mlsom.protocol import _LabelFeed

    X_tr, Y_tr, X_te, Y_te = _data(7, n_test=120)
    late = _run(_som(), X_tr, Y_tr, X_te, Y_te, label_fraction=1.0, label_delay=2**62)
    none = _run(_som(), X_tr, Y_tr, X_te, Y_te)
    assert late.info["labels"]["labels_given"] == 0
    np.testing.assert_array_equal(late.predictions, none.predictions)
    feed = _LabelFeed(1.0, 100, 0)
    feed.bound(120, X_te.shape[1], 8, Y_te.shape[1])
    feed.plan(X_te[:50], Y_te[:50])
    assert [due for due, _, _ in feed.pending] == list(range(100, 120))  # due before the end


def test_a_delay_the_memory_cannot_hold_is_refused_before_running():
    """An iterable stream of unknown length keeps about fraction x (delay + 1) rows waiting."""
    X_tr, Y_tr, X_te, Y_te = _data(8, n_test=50)
    model = _som()
    with pytest.raises(ValueError, match=r"label_delay=1125899906842624 would need about"):
        evaluate(
            model,
            iter([(X_te, Y_te)]),
            X_train=X_tr,
            Y_train=Y_tr,
            window_size=10,
            label_fraction=1.0,
            label_delay=2**50,
        )
    assert not hasattr(model, "_state")


@pytest.mark.parametrize("where", ["X_train", "X_stream", "X of stream chunk 0"])
def test_complex_features_are_refused_not_cast(where):
    """A cast to float would drop the imaginary part silently; the estimator refuses them too."""
    X_tr, Y_tr, X_te, Y_te = _data(9, n_test=50)
    if where == "X_train":
        X_tr = X_tr + 1j
    else:
        X_te = X_te + 1j
    stream = iter([(X_te, Y_te)]) if where.startswith("X of") else (X_te, Y_te)
    with pytest.raises(TypeError, match=rf"{where} must hold real numbers, got .*complex128"):
        evaluate(_som(), stream, X_train=X_tr, Y_train=Y_tr, window_size=10)


def test_an_incremental_method_without_the_calls_is_refused():
    class Old:
        kind = "incremental"

        def fit(self, X, Y):
            return self

        def predict_learn(self, X, Y):
            return np.zeros_like(Y)

    X_tr, Y_tr, X_te, Y_te = _data(6, n_test=50)
    with pytest.raises(TypeError, match="no method predict"):
        _run(Old(), X_tr, Y_tr, X_te, Y_te, label_fraction=0.5)
    _run(Old(), X_tr, Y_tr, X_te, Y_te)  # fine without the label protocol


def test_labels_fix_what_self_training_locks_in():
    """On a stream whose two clusters trade places, self-training follows them under the wrong
    names; 5 % of the labels, 50 rows late, keep the names right."""
    rng = np.random.default_rng(7)
    n = 3000
    k = rng.integers(0, 2, size=n + 300)
    t = np.r_[np.zeros(300), np.linspace(0, np.pi, n)]
    centres = np.stack([np.c_[np.cos(t), np.sin(t)], np.c_[-np.cos(t), -np.sin(t)]]) * 3
    X = centres[k, np.arange(n + 300)] + 0.4 * rng.normal(size=(n + 300, 2))
    Y = np.eye(2, dtype=np.uint8)[k]
    base = dict(grid_size=2, random_state=0)
    res = {}
    for frac in (None, 0.05):
        model = SOMStreamClassifier(**base)
        res[frac] = _run(
            model, X[:300], Y[:300], X[300:], Y[300:], label_fraction=frac, label_delay=50
        ).curve("macro_f1")
    assert res[0.05][-10:].mean() > 0.9
    assert res[0.05][-10:].mean() > res[None][-10:].mean() + 0.1


def test_random_protocols_are_the_protocol_written_out():
    """Random shares, delays, chunk sizes and label seeds, with every setting of what labels do
    (corrections, label persistence, variant): the runner's mlsom predictions are those of the
    row-by-row loop."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    X_tr, Y_tr, X_te, Y_te = _data(4, n_test=240)

    @settings(max_examples=25, deadline=None)
    @given(
        fraction=st.sampled_from([0.0, 0.01, 0.2, 0.7, 1.0]),
        delay=st.integers(0, 300),
        chunk_size=st.integers(1, 300),
        label_seed=st.integers(0, 2**32 - 1),
        corrections=st.sampled_from(["strong", "tested"]),
        persistence=st.sampled_from(["tested", "off"]),
        variant=st.sampled_from(["paper", "robust"]),
    )
    def check(fraction, delay, chunk_size, label_seed, corrections, persistence, variant):
        def make():
            return _som().set_params(
                corrections=corrections, label_persistence=persistence, variant=variant
            )

        _runner_against_the_loop(
            make,
            lambda m, X: m.predict_stream(X),
            (X_tr, Y_tr, X_te, Y_te),
            chunk_size,
            fraction,
            delay,
            label_seed,
        )

    assert hypothesis is not None
    check()
