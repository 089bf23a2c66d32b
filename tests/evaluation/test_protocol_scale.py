"""The protocol's scaling (``scale=``) and the grid size a fitted mlsom model records: the
default gives the features as they are, ``"minmax_on_train"`` is a plain min-max fitted on the
labelled part."""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom.datasets import minmax_scale
from mlsom.protocol import evaluate, evaluate_many
from mlsom.references import FrozenSOM


class Recorder:
    """An online method that keeps every feature row it is given."""

    kind = "online"

    def fit(self, X, Y):
        self.X_fit = np.array(X)
        self.n_labels = np.asarray(Y).shape[1]
        self.seen = []
        return self

    def predict_stream(self, X):
        self.seen.append(np.array(X))
        return np.zeros((len(X), self.n_labels), dtype=np.uint8)


def stream(seed=0, n_train=40, n_test=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_train + n_test, 4)) * [1.0, 1000.0, 0.01, 1.0] + [0.0, 5e3, -2.0, 0.0]
    X[:n_train, 3] = 7.0  # constant on the labelled part
    Y = (rng.random((n_train + n_test, 3)) < 0.4).astype(np.uint8)
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


def numpy_minmax(X_train, X):
    """Min-max with the labelled part's minima and maxima, written out in NumPy."""
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    span = hi - lo
    out = (X - lo) / np.where(span == 0, 1.0, span)
    out[:, span == 0] = 0.0
    return out


def test_by_default_every_method_gets_the_features_as_they_are():
    X_tr, Y_tr, X_st, Y_st = stream()
    rec = Recorder()
    res = evaluate(rec, (X_st, Y_st), X_train=X_tr, Y_train=Y_tr, n_windows=3, chunk_size=25)
    np.testing.assert_array_equal(rec.X_fit, X_tr)
    np.testing.assert_array_equal(np.vstack(rec.seen), X_st)
    assert "scale" not in res.info


@pytest.mark.parametrize("iterable", [False, True])
def test_minmax_on_train_is_a_plain_minmax_fitted_on_the_labelled_part(iterable):
    X_tr, Y_tr, X_st, Y_st = stream()
    # an iterable stream of uneven pieces: each is scaled with the labelled part's statistics
    test = [(X_st[a:b], Y_st[a:b]) for a, b in ((0, 7), (7, 50), (50, 90))] if iterable else None
    rec = Recorder()
    res = evaluate(
        rec,
        test if iterable else (X_st, Y_st),
        X_train=X_tr,
        Y_train=Y_tr,
        n_test=len(X_st),
        n_windows=3,
        chunk_size=25,
        scale="minmax_on_train",
    )
    np.testing.assert_allclose(rec.X_fit, numpy_minmax(X_tr, X_tr), rtol=0, atol=1e-12)
    seen = np.vstack(rec.seen)
    np.testing.assert_allclose(seen, numpy_minmax(X_tr, X_st), rtol=0, atol=1e-12)
    assert (rec.X_fit.min(axis=0)[:3] == 0).all() and (rec.X_fit.max(axis=0)[:3] == 1).all()
    assert (seen[:, 3] == 0).all()  # constant on the labelled part: 0 everywhere
    assert seen.min() < 0 or seen.max() > 1  # the stream is not clipped to [0, 1]
    # the numbers of minmax_scale, and the setting recorded
    np.testing.assert_array_equal(seen, minmax_scale(X_tr, X_st)[1])
    assert res.info["scale"] == "minmax_on_train"


def test_minmax_on_train_changes_mlsom_exactly_as_scaling_by_hand():
    X_tr, Y_tr, X_st, Y_st = stream(seed=1, n_train=120, n_test=300)

    def run(X_train, X_test, **kw):
        model = SOMStreamClassifier(grid_size=2, random_state=0, n_jobs=1)
        return evaluate(
            model, (X_test, Y_st), X_train=X_train, Y_train=Y_tr, n_windows=5, **kw
        ).label_counts

    scaled = run(X_tr, X_st, scale="minmax_on_train")
    by_hand = run(*minmax_scale(X_tr, X_st))
    raw = run(X_tr, X_st)
    np.testing.assert_array_equal(scaled, by_hand)
    # feature 1 (range ~1000) dominates the raw distances: the option changes the result
    assert not np.array_equal(scaled, raw)


def test_evaluate_many_scales_for_every_method():
    X_tr, Y_tr, X_st, Y_st = stream()
    a, b = Recorder(), Recorder()
    evaluate_many(
        {"a": a, "b": b},
        (X_st, Y_st),
        X_train=X_tr,
        Y_train=Y_tr,
        n_windows=2,
        scale="minmax_on_train",
    )
    np.testing.assert_array_equal(np.vstack(a.seen), np.vstack(b.seen))
    np.testing.assert_allclose(np.vstack(a.seen), numpy_minmax(X_tr, X_st), atol=1e-12)


@pytest.mark.parametrize("bad", ["minmax", "MINMAX_ON_TRAIN", True, 1, ""])
def test_an_unknown_scale_is_refused_naming_it(bad):
    X_tr, Y_tr, X_st, Y_st = stream()
    with pytest.raises(ValueError, match=r"scale must be None .* got scale="):
        evaluate(Recorder(), (X_st, Y_st), X_train=X_tr, Y_train=Y_tr, n_windows=2, scale=bad)


def test_a_value_the_scaling_cannot_take_names_the_stream_row():
    X_tr, Y_tr, X_st, Y_st = stream()
    X_st = X_st.copy()
    X_st[60, 2] = np.nan
    with pytest.raises(ValueError, match=r"X_stream contains NaN or infinity \(row 60, column 2\)"):
        evaluate(
            Recorder(),
            (X_st, Y_st),
            X_train=X_tr,
            Y_train=Y_tr,
            n_windows=2,
            chunk_size=25,
            scale="minmax_on_train",
        )


@pytest.mark.parametrize("make", [SOMStreamClassifier, FrozenSOM])
def test_the_grid_size_auto_chose_is_recorded(make):
    X_tr, Y_tr, X_st, Y_st = stream(seed=2, n_train=200, n_test=100)
    model = make(grid_size="auto", random_state=0)
    res = evaluate(model, (X_st, Y_st), X_train=X_tr, Y_train=Y_tr, n_windows=2)
    fitted = model.estimator_ if make is FrozenSOM else model
    assert res.info["fitted_grid_size"] == fitted.grid_size_
    assert isinstance(res.info["fitted_grid_size"], int)
    fixed = make(grid_size=3, random_state=0)
    res = evaluate(fixed, (X_st, Y_st), X_train=X_tr, Y_train=Y_tr, n_windows=2)
    assert res.info["fitted_grid_size"] == 3
    res = evaluate(Recorder(), (X_st, Y_st), X_train=X_tr, Y_train=Y_tr, n_windows=2)
    assert "fitted_grid_size" not in res.info
