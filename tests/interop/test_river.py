"""The River adapter mlsom.river.SOMStreamML: River's conventions and checks, the warm-up, and the
exact equivalence of progressive validation with fit + predict_stream.

Written for every river from the declared floor (0.21) to the newest."""

import functools
import inspect
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom.datasets import moa_spherical

try:
    import river
    from river import checks, evaluate, metrics

    from mlsom.river import _SKIPPED_RIVER_CHECKS, SOMStreamML
except ImportError:  # the tests that need river skip themselves
    river = None

needs_river = pytest.mark.skipif(river is None, reason="river is not installed")

FEATURES = ("f0", "f1", "f2", "f3", "n")
LABELS = ("red", "green", "blue")


def _stream(n, shift_every=None, seed=0):
    """n instances as River pairs: 4 float features and an integer one, 3 bool labels."""
    X, Y, _ = moa_spherical(3, 4, n, shift_every, seed=seed, radius=0.2)
    out = []
    for row, labels in zip(X.tolist(), Y.tolist(), strict=True):
        x = dict(zip(FEATURES, [*row, int(row[0] * 10)], strict=True))
        out.append((x, {name: bool(v) for name, v in zip(LABELS, labels, strict=True)}))
    return out


def _matrices(stream):
    """The stream as (X, Y) with columns in sorted order of the names (the model's order)."""
    features, labels = sorted(stream[0][0]), sorted(stream[0][1])
    X = np.array([[x[k] for k in features] for x, _ in stream], dtype=np.float64)
    Y = np.array([[y[k] for k in labels] for _, y in stream], dtype=np.uint8)
    return X, Y


def _yeast(n):
    """The first n instances of river's Yeast (14 labels, 103 features; shipped with recent
    rivers, not with 0.21), or a skip."""
    yeast = getattr(river.datasets, "Yeast", None)
    if yeast is None:
        pytest.skip(f"river {river.__version__} has no Yeast data set")
    return list(yeast().take(n))


def _state(model):
    """Everything that changes when the method learns, as comparable values."""
    m = model.model_

    def lists(arrays):  # None for a label without a map
        return [None if a is None else a.tolist() for a in arrays]

    return (
        lists(m.weights_),
        lists(m.neuron_counts_),
        lists(m.log_averout_),
        m.T_.tolist(),
        m.n_seen_,
        m.cardinality_,
    )


PARAMS = {"grid_size": 3, "n_epochs": 20, "random_state": 0, "n_jobs": 1}


# --------------------------------------------------------------------------- import


def test_import_mlsom_does_not_import_river():
    code = (
        "import sys, mlsom, mlsom.datasets, mlsom.evaluation, mlsom.protocol, mlsom.baselines\n"
        "print('river' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_import_without_river_says_which_extra_to_install():
    code = "import sys\nsys.modules['river'] = None\nimport mlsom.river\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: mlsom.river needs river")
    assert "mlsom[experiments]" in last


# --------------------------------------------------------------------------- the method


@needs_river
@pytest.mark.parametrize("data", ["static", "drifting", "yeast"])
def test_progressive_validation_is_fit_then_predict_stream(data):
    """With use_labels=False (the paper's setting) River's loop is fit, then predict_stream."""
    stream = {
        "static": lambda: _stream(700),
        "drifting": lambda: _stream(700, shift_every=20),
        "yeast": lambda: _yeast(700),
    }[data]()
    features, labels = sorted(stream[0][0]), sorted(stream[0][1])
    n_warmup = 150
    model = SOMStreamML(n_warmup=n_warmup, use_labels=False, **PARAMS)
    predictions = []
    for x, y in stream:
        predictions.append(model.predict_one(x))
        model.learn_one(x, y)

    X, Y = _matrices(stream)
    reference = SOMStreamClassifier(**PARAMS).fit(X[:n_warmup], Y[:n_warmup])
    expected = reference.predict_stream(X[n_warmup:])

    assert predictions[0] == {}  # nothing learnt yet
    assert all(p == dict.fromkeys(labels, False) for p in predictions[1:n_warmup])
    got = np.array([[p[k] for k in labels] for p in predictions[n_warmup:]])
    np.testing.assert_array_equal(got, expected)
    assert model.labels_ == tuple(labels) and model.features_ == tuple(features)
    mirror = SOMStreamML(n_warmup=n_warmup, use_labels=False, **PARAMS)
    mirror.model_ = reference
    assert _state(model) == _state(mirror)

    # river's own loop gives the same model, and the metric of the same predictions
    model = SOMStreamML(n_warmup=n_warmup, use_labels=False, **PARAMS)
    metric = metrics.multioutput.MicroAverage(metrics.F1())
    evaluate.progressive_val_score(stream, model, metric)
    assert _state(model) == _state(mirror)
    again = metrics.multioutput.MicroAverage(metrics.F1())
    for (_, y), p in zip(stream[1:], predictions[1:], strict=True):
        again.update(y, p)
    assert metric.get() == again.get()


@needs_river
def test_river_metrics_accept_it():
    stream = _stream(300, 20)
    suite = [
        metrics.multioutput.MacroAverage(metrics.F1()),
        metrics.multioutput.MicroAverage(metrics.F1()),
        metrics.multioutput.ExactMatch(),
        metrics.multioutput.SampleAverage(metrics.Jaccard()),
        metrics.multioutput.PerOutput(metrics.Precision()),
    ]
    model = SOMStreamML(n_warmup=100, **PARAMS)
    for metric in suite:
        assert metric.works_with(model)
    # SOMStreamClassifier's own predict_one/learn_one are not a River estimator: refused
    assert not suite[0].works_with(SOMStreamClassifier())
    for metric in suite:
        assert evaluate.progressive_val_score(stream, model.clone(), metric) is metric
    for metric in suite[:4]:
        assert 0.5 < metric.get() <= 1.0
    assert set(suite[4].get()) == set(LABELS)  # one precision per label


@needs_river
def test_in_a_pipeline_behind_river_s_min_max_scaler():
    """The paper's preprocessing as River does it: the scaler's first output is NaN (it has
    learnt nothing yet), which the warm-up's predict_one accepts."""
    from river import preprocessing

    stream = _stream(400, 20)
    model = preprocessing.MinMaxScaler() | SOMStreamML(n_warmup=100, **PARAMS)
    metric = metrics.multioutput.MacroAverage(metrics.F1())
    assert metric.works_with(model)
    evaluate.progressive_val_score(stream, model, metric)
    assert metric.get() > 0.5
    # every instance once (the 100 of the warm-up in fit, the 300 after it in the online step);
    # the labels the 300 then bring leave the counts as they are
    assert model[-1].model_.n_seen_ == 400


@needs_river
def test_predict_one_is_pure_and_learn_one_ignores_labels_after_the_warm_up():
    stream = _stream(300, 20)
    a = SOMStreamML(n_warmup=100, use_labels=False, **PARAMS)
    b = SOMStreamML(n_warmup=100, use_labels=False, **PARAMS)
    for i, (x, y) in enumerate(stream):
        before = pickle.dumps(a)
        a.predict_one(x)
        assert pickle.dumps(a) == before
        a.learn_one(x, y)
        # after the warm-up, b gets other labels, or none: nothing differs
        if i < 100:
            b.learn_one(x, y)
        elif i % 2:
            b.learn_one(x, {name: not v for name, v in y.items()} | {"late": True})
        else:
            b.learn_one(x)
    assert _state(a) == _state(b)
    assert b.labels_ == tuple(sorted(LABELS))  # "late", first seen after the warm-up: ignored


@needs_river
@pytest.mark.parametrize("data", ["drifting", "yeast"])
def test_learn_one_with_labels_is_the_online_step_then_partial_fit(data):
    """use_labels=True (the default): after the warm-up, learn_one(x, y) is predict_stream(x)
    then partial_fit(x, y), a label name absent from y unknown (-1), one first seen after the
    warm-up ignored; learn_one(x) without y is the online step alone."""
    stream = _stream(500, shift_every=20) if data == "drifting" else _yeast(500)
    labels = sorted(stream[0][1])
    n_warmup = 120
    model = SOMStreamML(n_warmup=n_warmup, **PARAMS)
    X, Y = _matrices(stream)
    reference = SOMStreamClassifier(**PARAMS).fit(X[:n_warmup], Y[:n_warmup])
    for i, (x, y) in enumerate(stream):
        if i >= n_warmup:
            assert model.predict_one(x) == dict(
                zip(labels, map(bool, reference.predict(X[i : i + 1])[0]), strict=True)
            )
        if i >= n_warmup and i % 3 == 0:
            model.learn_one(x)  # no labels for this one
            reference.predict_stream(X[i : i + 1])
            continue
        if i >= n_warmup and i % 3 == 1:
            y = {k: v for k, v in y.items() if k != labels[0]} | {"late": True}
        model.learn_one(x, y)
        if i >= n_warmup:
            known = np.array([[int(y[k]) if k in y else -1 for k in labels]])
            reference.predict_stream(X[i : i + 1])
            reference.partial_fit(X[i : i + 1], known)
    mirror = SOMStreamML(n_warmup=n_warmup, **PARAMS)
    mirror.model_ = reference
    assert _state(model) == _state(mirror)
    assert model.labels_ == tuple(labels)


@needs_river
def test_a_label_first_seen_after_the_warm_up_has_no_prediction():
    """As documented: it is not predicted, so the metrics that look every true label up in the
    prediction fail on it, and ExactMatch counts the instance wrong."""
    stream = [(x, y | {"late": True} if i >= 150 else y) for i, (x, y) in enumerate(_stream(200))]
    with pytest.raises(KeyError, match="late"):
        evaluate.progressive_val_score(
            stream,
            SOMStreamML(n_warmup=100, **PARAMS),
            metrics.multioutput.MacroAverage(metrics.F1()),
        )
    metric = metrics.multioutput.ExactMatch()
    evaluate.progressive_val_score(stream, SOMStreamML(n_warmup=100, **PARAMS), metric)
    assert 0 < metric.get() < 150 / 199  # the last 50 instances are all wrong


@needs_river
def test_warm_up_labels():
    model = SOMStreamML(n_warmup=40, **PARAMS)
    assert model.predict_one({"a": 1.0}) == {}
    # "never" is never positive: no map, always False; "blue" appears later in the warm-up
    for i, (x, y) in enumerate(_stream(200)):
        y = {"never": False, **({k: v for k, v in y.items() if k != "blue"} if i < 10 else y)}
        model.learn_one(x, y)
        if model.model_ is None:
            assert set(model.predict_one(x)) == set(y) and not any(model.predict_one(x).values())
        else:
            p = model.predict_one(x)
            assert list(p) == ["blue", "green", "never", "red"] and p["never"] is False
    assert model.model_.weights_[2] is None  # "never"
    # the 40 of the warm-up and the 160 online steps after it; their labels leave N as it is
    assert model.model_.n_seen_ == 200


@needs_river
def test_the_warm_up_goes_on_until_a_label_is_positive():
    model = SOMStreamML(n_warmup=10, **PARAMS | {"min_neuron_size": 1})
    stream = _stream(60)
    for x, y in stream[:15]:
        model.learn_one(x, dict.fromkeys(y, False))
    assert model.model_ is None and model.predict_one(stream[15][0]) == dict.fromkeys(LABELS, False)
    model.learn_one(*stream[15])
    # trained on the last n_warmup instances: the buffer stays bounded while it waits
    assert model.model_ is not None and model.model_.n_seen_ == 10
    X = np.array([[x[k] for k in model.features_] for x, _ in stream[6:16]])
    Y = np.zeros((10, len(LABELS)), dtype=np.uint8)
    Y[-1] = [stream[15][1][k] for k in model.labels_]
    reference = SOMStreamClassifier(**PARAMS | {"min_neuron_size": 1}).fit(X, Y)
    for a, b in zip(model.model_.weights_, reference.weights_, strict=True):
        assert (a is None and b is None) or np.array_equal(a, b)


@needs_river
def test_a_warm_up_without_positives_keeps_a_bounded_buffer():
    model = SOMStreamML(n_warmup=5, **PARAMS)
    x, y = _stream(1)[0]
    for _ in range(2000):
        model.learn_one(x, dict.fromkeys(y, False))
    assert model.model_ is None and len(model._rows) == 4


@needs_river
def test_the_order_of_the_dicts_keys_does_not_matter():
    stream = _stream(250, 20)
    rng = np.random.default_rng(0)

    def shuffled(d):
        keys = list(d)
        return {k: d[k] for k in rng.permutation(keys).tolist()}

    a, b = SOMStreamML(n_warmup=80, **PARAMS), SOMStreamML(n_warmup=80, **PARAMS)
    for x, y in stream:
        assert a.predict_one(x) == b.predict_one(shuffled(x))
        a.learn_one(x, y)
        b.learn_one(shuffled(x), shuffled(y))
    assert _state(a) == _state(b)


@needs_river
def test_names_that_do_not_compare_keep_first_seen_order():
    model = SOMStreamML(n_warmup=30, **PARAMS | {"min_neuron_size": 1})
    for x, y in _stream(40):
        model.learn_one({1: x["f0"], "b": x["f1"]}, {2: y["red"], "g": y["green"]})
    assert model.features_ == (1, "b") and model.labels_ == (2, "g")
    assert set(model.predict_one({"b": 0.5, 1: 0.5})) == {2, "g"}


@needs_river
def test_parameters_pass_through_and_clone():
    som = inspect.signature(SOMStreamClassifier).parameters
    ours = inspect.signature(SOMStreamML).parameters
    assert set(ours) == set(som) | {"n_warmup", "use_labels"}
    assert all(ours[name].default == p.default for name, p in som.items())

    params = {"learning_rate": 0.1, "neighborhood": "gaussian", "min_neuron_size": 2}
    model = SOMStreamML(n_warmup=30, **PARAMS, **params)
    for x, y in _stream(40):
        model.learn_one(x, y)
    assert model.model_.get_params() == {**SOMStreamClassifier().get_params(), **PARAMS, **params}
    clone = model.clone()
    assert clone.model_ is None and clone.features_ is None and clone.labels_ == ()
    assert clone._get_params() == model._get_params()
    assert model.clone({"grid_size": 4}).grid_size == 4


@needs_river
@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"n_warmup": 0}, ValueError, "n_warmup must be >= 1"),
        ({"n_warmup": 2.5}, TypeError, "n_warmup must be an integer"),
        ({"grid_size": 0}, ValueError, "grid_size must be >= 1"),
        ({"learning_rate": 2.0}, ValueError, "learning_rate must be <= 1"),
        ({"neighborhood": "cone"}, ValueError, "neighborhood must be one of"),
        ({"use_labels": 1}, TypeError, "use_labels must be True or False"),
        ({"correction_rate": 0.0}, ValueError, "correction_rate must be > 0"),
    ],
)
def test_bad_parameters_are_refused_at_construction(params, error, match):
    with pytest.raises(error, match=match):
        SOMStreamML(**params)


# --------------------------------------------------------------------------- bad input

GOOD_X = dict.fromkeys(FEATURES, 0.5)
GOOD_Y = dict.fromkeys(LABELS, True)
P = pytest.param
BAD_X = [
    P([0.5] * 5, TypeError, r"x must be a dict of feature name -> number, got \[0.5", id="list"),
    P(None, TypeError, r"x must be a dict of feature name -> number, got None", id="None"),
    P(
        GOOD_X | {"f1": "0.5"},
        TypeError,
        r"x\['f1'\] must be a real number, got '0.5' \(str\)",
        id="str",
    ),
    P(GOOD_X | {"f1": None}, TypeError, r"x\['f1'\] must be a real number", id="None-value"),
    P(GOOD_X | {"f1": 1j}, TypeError, r"x\['f1'\] must be a real number", id="complex"),
    P(GOOD_X | {"f1": math.nan}, ValueError, r"x\['f1'\] must be finite", id="nan"),
    P(GOOD_X | {"f1": -math.inf}, ValueError, r"x\['f1'\] must be finite", id="inf"),
    P(
        GOOD_X | {"f1": 1e300},
        ValueError,
        r"x\['f1'\] must be finite and at most 1e\+100",
        id="huge",
    ),
    P(GOOD_X | {"f1": 10**400}, ValueError, r"x\['f1'\] must be finite", id="huge-int"),
    P(
        {k: v for k, v in GOOD_X.items() if k != "f2"},
        ValueError,
        r"exactly the 5 features .*: missing \['f2'\], unknown \[\]",
        id="missing",
    ),
    P(GOOD_X | {"extra": 1.0}, ValueError, r"missing \[\], unknown \['extra'\]", id="unknown"),
]
BAD_Y = [
    P([True], TypeError, r"y must be a dict of label name -> bool, got \[True\]", id="list"),
    P(GOOD_Y | {"red": "yes"}, TypeError, r"y\['red'\] must be True or False, got 'yes'", id="str"),
    P(GOOD_Y | {"red": 0.0}, TypeError, r"y\['red'\] must be True or False", id="float"),
    P(
        GOOD_Y | {"red": 2},
        ValueError,
        r"y\['red'\] must be True or False \(or 0 or 1\), got 2",
        id="two",
    ),
]


def _models():
    """A model in its warm-up and one after it, both with the features of GOOD_X."""
    warm, done = SOMStreamML(n_warmup=50, **PARAMS), SOMStreamML(n_warmup=50, **PARAMS)
    stream = _stream(60)
    for x, y in stream[:10]:
        warm.learn_one(x, y)
    for x, y in stream:
        done.learn_one(x, y)
    return {"warm-up": warm, "fitted": done}


@needs_river
@pytest.mark.parametrize("phase", ["warm-up", "fitted"])
@pytest.mark.parametrize(("x", "error", "match"), BAD_X)
def test_bad_x_is_refused_and_changes_nothing(phase, x, error, match):
    model = _models()[phase]
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        model.learn_one(x, GOOD_Y)
    if phase == "warm-up" and "must be finite" in match:
        # predict_one does not use the values during the warm-up (River's MinMaxScaler gives
        # NaN before it has learnt any)
        assert model.predict_one(x) == dict.fromkeys(LABELS, False)
    else:
        with pytest.raises(error, match=match):
            model.predict_one(x)
    assert pickle.dumps(model) == before


@needs_river
@pytest.mark.parametrize("phase", ["warm-up", "fitted"])
@pytest.mark.parametrize(("y", "error", "match"), BAD_Y)
def test_bad_y_is_refused_and_changes_nothing(phase, y, error, match):
    model = _models()[phase]
    before = pickle.dumps(model)
    with pytest.raises(error, match=match):
        model.learn_one(GOOD_X, y)
    assert pickle.dumps(model) == before


@needs_river
def test_the_warm_up_needs_labels_and_features():
    model = SOMStreamML(n_warmup=5)
    with pytest.raises(TypeError, match=r"y is needed during the warm-up \(0 of n_warmup=5"):
        model.learn_one(GOOD_X)
    with pytest.raises(ValueError, match="x has no feature"):
        model.learn_one({}, GOOD_Y)
    assert model.features_ is None and model.labels_ == ()


@needs_river
def test_a_failed_fit_changes_nothing():
    model = SOMStreamML(grid_size=1000, n_warmup=2)  # maps far beyond memory: fit refuses them
    model.learn_one(GOOD_X, {"red": True})
    before = pickle.dumps(model)
    with pytest.raises(ValueError, match="grid_size=1000 would need"):
        model.learn_one(GOOD_X, {"red": True, "new": True})
    assert pickle.dumps(model) == before and model.labels_ == ("red",)


# --------------------------------------------------------------------------- river's checks


def _river_checks():
    """(id, check, params) for each check river.checks.yield_checks makes for the adapter."""
    if river is None:
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="river is not installed"))]
    out = []
    for i, params in enumerate(SOMStreamML._unit_test_params()):
        for check in checks.yield_checks(SOMStreamML(**params)):
            name = check.__name__
            marks = ()
            if name in _SKIPPED_RIVER_CHECKS:
                marks = pytest.mark.skip(reason=_SKIPPED_RIVER_CHECKS[name])
            out.append(pytest.param(check, params, id=f"{name}[{i}]", marks=marks))
    return out


@pytest.mark.parametrize(("check", "params"), _river_checks())
def test_river_check(check, params):
    model = SOMStreamML(**params)
    if isinstance(check, functools.partial) and "dataset" in check.keywords:
        # river's multi-label data set (Music) is downloaded on first use: the checks get the
        # same kind of stream (named features, bool labels) from here, as long as river's
        # (50 instances, 500 for the memory check)
        n = 500 if check.__name__ == "check_bounded_memory_growth" else 50
        check.func(model.clone(), dataset=_stream(n, 20))
    else:
        check(model.clone())


@needs_river
def test_seeding_is_idempotent():
    """river's check_seeding_is_idempotent, which yield_checks gives only to models whose seed
    parameter is named ``seed``."""
    for params in SOMStreamML._unit_test_params():
        checks.common.check_seeding_is_idempotent(SOMStreamML(**params), dataset=_stream(60, 20))


@needs_river
def test_the_skipped_checks_fail_for_the_stated_reason():
    """The features that appear or disappear are refused with the feature check's error."""
    for name in _SKIPPED_RIVER_CHECKS:
        check = getattr(checks.common, name, None)
        if check is None:  # check_radically_disappearing_features came after river 0.21
            continue
        with pytest.raises(ValueError, match="x must give exactly the"):
            check(SOMStreamML(n_warmup=20, **PARAMS), dataset=_stream(50))
    assert SOMStreamML()._unit_test_skips() == set(_SKIPPED_RIVER_CHECKS)


@needs_river
def test_novelty_adds_the_new_labels_to_the_keys():
    """With novelty=True a label that appears after the warm-up is found and becomes a key of
    predict_one ("NP1"), labels_ grows with it, and labels given to learn_one still count for
    the labels of the warm-up (the new ones unknown to them)."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0]])
    k = rng.integers(0, 3, size=6000)
    k[3000:] = rng.integers(0, 4, size=3000)
    X = centres[k] + 0.5 * rng.normal(size=(6000, 2))
    model = SOMStreamML(grid_size=3, n_warmup=300, random_state=0, novelty=True)
    keys = set()
    for i in range(6000):
        x = {"u": X[i, 0], "v": X[i, 1]}
        keys |= set(model.predict_one(x))
        y = {"a": k[i] == 0, "b": k[i] == 1, "c": k[i] == 2}
        model.learn_one(x, y if i < 300 or i % 500 == 0 else None)
    found = model.model_.new_labels_
    assert found and keys == {"a", "b", "c", *(nl.name for nl in found)}
    assert model.labels_ == ("a", "b", "c", *(nl.name for nl in found))
    hits = [model.predict_one({"u": u, "v": v}).get("NP1", False) for u, v in X[-500:]]
    assert np.mean(np.array(hits) == (k[-500:] == 3)) > 0.9
