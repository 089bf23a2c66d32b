"""The compiled core's state object: one typed group per group of the table, None where the
state lacks it; its checks of shapes and of writability; and a read-only model still scores."""

import copy
import warnings

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _core, _schema


def _model(variant="paper", labels=False, corrections="strong"):
    rng = np.random.default_rng(3)
    Y = (rng.random((160, 3)) < 0.4).astype(np.int8)
    Y[Y.sum(axis=1) == 0, 0] = 1
    X = Y @ rng.normal(scale=3.0, size=(3, 4)) + rng.normal(size=(160, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SOMStreamClassifier(
            grid_size=2, variant=variant, corrections=corrections, random_state=0, n_jobs=1
        ).fit(X[:80], Y[:80])
    model.predict_stream(X[80:100])
    if labels:
        model.partial_fit(X[100:140], Y[100:140])
    return model, X[140:]


def _state(model, writable=True):
    """The core's State of a model (its calls that learn left the copies it needs)."""
    return _core.State(model._state, writable=writable)


def _margin_order(st):
    L, W = st["margin_memory"].shape
    return (
        np.zeros((L, W), np.int32),
        np.zeros(L, np.int64),
        np.zeros((L, W)),
        np.zeros(L, np.int64),
    )


@pytest.mark.parametrize(
    "kind, params",
    [
        ("paper", {}),
        ("labelled", {"labels": True}),
        ("tested", {"labels": True, "corrections": "tested"}),
        ("robust", {"variant": "robust", "labels": True}),
    ],
)
def test_the_state_holds_the_groups_of_the_table_and_no_other(kind, params):
    model, _ = _model(**params)
    state = _state(model)
    held = set(_schema.groups_present(model._state))
    for group in _schema.GROUPS:
        if not _schema.GROUPS[group].core:  # a group of the Python layer only
            assert not hasattr(state, group), group
            continue
        assert (getattr(state, group) is not None) == (group in held), group
    assert {"maps", "counts"} <= held


def test_a_group_of_the_wrong_shape_is_refused_naming_it():
    model, _ = _model(labels=True)
    st = dict(model._state)
    st.setdefault("screen", _core.screening_copy(st["Wt"]))
    st["margin_order"] = _margin_order(st)
    _core.State(st)  # (as it is: accepted)
    st["margin_counts"] = np.zeros(5, np.int64)
    with pytest.raises(ValueError, match="group 'rule'"):
        _core.State(st)
    st = dict(model._state, NS=np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="group 'counts'"):
        _core.State(st)


def test_a_read_only_state_scores_but_does_not_learn():
    model, X = _model(variant="robust", labels=True)
    frozen = copy.deepcopy(model)
    for value in frozen._state.values():
        for a in value if isinstance(value, tuple) else (value,):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
    np.testing.assert_array_equal(frozen.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="read-only"):
        frozen.predict_stream(X)
    with pytest.raises(ValueError, match="read-only"):
        frozen.partial_fit(X[:2], np.ones((2, 3), np.int8))
