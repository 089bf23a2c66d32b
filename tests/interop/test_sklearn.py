"""scikit-learn interop: the estimator inside scikit-learn's own tools (clone, Pipeline,
GridSearchCV, cross_val_score, check_is_fitted, is_classifier) and under its estimator checks,
with scikit-learn kept out of ``import mlsom``.

Runs against whatever scikit-learn is installed; .ci/run also runs it with the lowest version the
``experiments`` extra declares.
"""

import inspect
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.exceptions import NotFittedError as SklearnNotFittedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import MinMaxScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

import mlsom  # noqa: E402
from mlsom import SOMStreamClassifier  # noqa: E402
from mlsom._sklearn import EXPECTED_FAILED_CHECKS  # noqa: E402

SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])


def make_stream(n=600, seed=0):
    """Three labels on three clusters of very different scales (a scaler matters)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    k = rng.integers(0, 3, size=n)
    X = (centres[k] + rng.normal(size=(n, 3))) * np.array([1.0, 100.0, 0.01])
    Y = np.eye(3, dtype=np.int64)[k]
    Y[rng.random(n) < 0.2, 2] = 1
    return X, Y


X, Y = make_stream()
X_tr, Y_tr, X_te = X[:200], Y[:200], X[200:]


def small(**params):
    return SOMStreamClassifier(**{"grid_size": 2, "random_state": 0, **params})


# ------------------------------------------------------------------------- the estimator checks


def _checks_kwargs():
    """Expected failures come from the estimator's own tags: the `_xfail_checks` tag on
    scikit-learn < 1.6, the same dict passed as expected_failed_checks on newer ones."""
    params = inspect.signature(parametrize_with_checks).parameters
    if "expected_failed_checks" in params:
        return {"expected_failed_checks": lambda est: est._more_tags()["_xfail_checks"]}
    return {}


with warnings.catch_warnings():
    # scikit-learn warns that the class does not inherit from BaseEstimator: on purpose, the core
    # does not import scikit-learn (the protocol is spoken by mlsom._sklearn)
    warnings.filterwarnings("ignore", "Estimator SOMStreamClassifier does not inherit")
    _CHECKS = parametrize_with_checks(
        [
            SOMStreamClassifier(grid_size=2, random_state=0, n_epochs=5, max_epochs=20),
            # grid_size="auto" fits 50 candidate models per fit: the same checks hold
            SOMStreamClassifier(grid_size="auto", random_state=0, n_epochs=5, max_epochs=20),
            # the robust variant drops stale neurons at fit: the same checks hold
            SOMStreamClassifier(
                grid_size=3, variant="robust", random_state=0, n_epochs=5, max_epochs=20
            ),
            # novelty detection: rows no neuron explains are left unknown
            SOMStreamClassifier(
                grid_size=2, novelty=True, random_state=0, n_epochs=5, max_epochs=20
            ),
        ],
        **_checks_kwargs(),
    )


@_CHECKS
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        check(estimator)


def test_expected_failures_are_few_and_explained():
    # (two of them: partial_fit, which learns labels that arrive after fit, is not the
    # from-scratch partial_fit the checks assume)
    assert len(EXPECTED_FAILED_CHECKS) <= 10
    for name, reason in EXPECTED_FAILED_CHECKS.items():
        assert name.startswith("check_") and 20 < len(reason) < 120


def test_the_tags_say_multi_label_classifier():
    model = small()
    assert is_classifier(model)
    if SKLEARN_VERSION >= (1, 6):
        from sklearn.utils import get_tags

        tags = get_tags(model)
        assert tags.estimator_type == "classifier"
        assert tags.classifier_tags.multi_label and not tags.target_tags.single_output
        assert tags.requires_fit and not tags.input_tags.allow_nan


# ------------------------------------------------------------------------- fitted or not


def test_check_is_fitted_and_scikit_learns_not_fitted_error():
    model = small()
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(model)
    for call in (model.predict, model.predict_stream):
        with pytest.raises(SklearnNotFittedError, match="not fitted yet"):
            call(X_te)
    with pytest.raises(mlsom.NotFittedError):  # mlsom's own class catches it too
        model.predict(X_te)
    assert not hasattr(model, "weights_")
    model.fit(X_tr, Y_tr)
    check_is_fitted(model)
    assert model.__sklearn_is_fitted__()


def test_without_scikit_learn_imported_nothing_imports_it():
    """import mlsom, fit, predict and an unfitted model's error stay NumPy-only."""
    code = (
        "import sys, numpy as np, mlsom\n"
        "m = mlsom.SOMStreamClassifier(grid_size=2, random_state=0)\n"
        "try:\n    m.predict(np.zeros((1, 2)))\nexcept mlsom.NotFittedError as e:\n"
        "    assert type(e) is mlsom.NotFittedError\n"
        "X = np.random.default_rng(0).normal(size=(50, 2)); Y = (X > 0).astype(np.uint8)\n"
        "m.fit(X, Y).predict(X); m.predict_stream(X)\n"
        "print(sorted(k for k in sys.modules if k.split('.')[0] in "
        "('sklearn', 'scipy', 'river', 'dask', 'pandas', 'matplotlib')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------- clone and parameters


def test_clone_of_a_fitted_model_is_unfitted_with_the_same_parameters():
    model = small(learning_rate=0.2, n_jobs=1).fit(X_tr, Y_tr)
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert not copy.__sklearn_is_fitted__()
    with pytest.raises(SklearnNotFittedError):
        copy.predict(X_te)
    np.testing.assert_array_equal(copy.fit(X_tr, Y_tr).predict(X_te), model.predict(X_te))


def test_clone_copies_a_generator_random_state_in_its_current_state():
    """scikit-learn's clone deep-copies a Generator: both models draw the same initial neurons."""
    model = small(random_state=np.random.default_rng(3))
    copy = clone(model)
    assert isinstance(copy.random_state, np.random.Generator)
    np.testing.assert_array_equal(
        copy.fit(X_tr, Y_tr).predict(X_te), model.fit(X_tr, Y_tr).predict(X_te)
    )


def test_set_params_returns_self_and_refuses_unknown_names():
    model = small()
    assert model.set_params(grid_size=3) is model and model.grid_size == 3
    with pytest.raises(ValueError, match="invalid parameter 'size'"):
        model.set_params(size=3)


# ------------------------------------------------------------------------- predictions' type


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.int32, bool, np.float64, np.float32])
def test_predictions_come_in_the_dtype_of_the_targets(tmp_path, dtype):
    model = small().fit(X_tr, Y_tr.astype(dtype))
    reference = small().fit(X_tr, Y_tr.astype(np.uint8))
    for call in ("predict", "predict_stream"):
        got = getattr(model, call)(X_te)
        assert got.dtype == np.dtype(dtype) and got.shape == (len(X_te), 3)
        np.testing.assert_array_equal(got, getattr(reference, call)(X_te))
    assert [c.dtype for c in model.classes_] == [np.dtype(dtype)] * 3
    model.save(tmp_path / "m.npz")
    back = SOMStreamClassifier.load(tmp_path / "m.npz")
    assert back.predict(X_te[:5]).dtype == np.dtype(dtype)
    assert pickle.loads(pickle.dumps(model)).predict(X_te[:5]).dtype == np.dtype(dtype)


def test_lists_give_integer_predictions_like_numpy_would():
    model = small().fit(X_tr.tolist(), Y_tr.tolist())
    assert model.predict(X_te[:3]).dtype == np.asarray(Y_tr.tolist()).dtype


def test_score_is_subset_accuracy_of_frozen_predict():
    model = small().fit(X_tr, Y_tr)
    before = pickle.dumps(model)
    expected = (model.predict(X_te) == Y[200:]).all(axis=1).mean()
    assert model.score(X_te, Y[200:]) == pytest.approx(expected)
    w = np.random.default_rng(0).random(len(X_te))
    expected_w = np.average((model.predict(X_te) == Y[200:]).all(axis=1), weights=w)
    assert model.score(X_te, Y[200:], sample_weight=w) == pytest.approx(expected_w)
    assert pickle.dumps(model) == before  # score never adapts the model
    with pytest.raises(ValueError, match="sample_weight must be"):
        model.score(X_te, Y[200:], sample_weight=-w)
    # finite weights whose sum overflows average like any others (it gave NaN)
    huge = np.full(len(X_te), 1e308)
    assert model.score(X_te, Y[200:], sample_weight=huge) == pytest.approx(expected)
    with pytest.raises(TypeError, match="sample_weight must hold real numbers, got an array of"):
        model.score(X_te, Y[200:], sample_weight=[10**400] * len(X_te))
    with pytest.raises(ValueError, match="y has 2 labels, but the model has 3"):
        model.score(X_te, Y[200:, :2])


# ------------------------------------------------------------------------- pipelines and search


def test_pipeline_with_a_scaler_fits_and_predicts_like_the_steps_by_hand():
    pipe = make_pipeline(MinMaxScaler(), small()).fit(X_tr, Y_tr)
    scaler = MinMaxScaler().fit(X_tr)
    model = small().fit(scaler.transform(X_tr), Y_tr)
    np.testing.assert_array_equal(pipe.predict(X_te), model.predict(scaler.transform(X_te)))
    assert pipe.score(X_te, Y[200:]) == model.score(scaler.transform(X_te), Y[200:])


def test_a_pipelines_online_phase_is_driven_through_its_last_step():
    """The documented way (docs and README): transform with pipe[:-1], adapt with pipe[-1]."""
    pipe = Pipeline([("scale", MinMaxScaler()), ("som", small())]).fit(X_tr, Y_tr)
    scaler = MinMaxScaler().fit(X_tr)
    model = small().fit(scaler.transform(X_tr), Y_tr)
    got = [pipe[-1].predict_stream(pipe[:-1].transform(chunk)) for chunk in np.split(X_te, 4)]
    np.testing.assert_array_equal(np.vstack(got), model.predict_stream(scaler.transform(X_te)))
    np.testing.assert_array_equal(pipe.predict(X_te), model.predict(scaler.transform(X_te)))


def test_grid_search_over_grid_size_with_a_multi_label_scorer():
    pipe = Pipeline([("scale", MinMaxScaler()), ("som", small())])
    search = GridSearchCV(
        pipe,
        {"som__grid_size": [1, 2, 3]},
        scoring="f1_macro",
        cv=KFold(3, shuffle=True, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        search.fit(X, Y)
    assert search.best_params_["som__grid_size"] in (1, 2, 3)
    scores = search.cv_results_["mean_test_score"]
    assert np.all((scores > 0.3) & (scores <= 1.0))
    assert search.predict(X_te).shape == (len(X_te), 3)


def test_cross_val_score_with_the_default_score():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        scores = cross_val_score(make_pipeline(MinMaxScaler(), small()), X, Y, cv=3)
    assert scores.shape == (3,) and np.all((scores > 0) & (scores <= 1))
