"""What ``fit`` says of a target that is not 0/1: -1 (unknown) points to ``partial_fit``, other
integers to one-hot encoding."""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier


def _data():
    rng = np.random.default_rng(0)
    X = rng.random((30, 2))
    Y = (rng.random((30, 3)) < 0.5).astype(np.int64)
    Y[0] = 1
    return X, Y


def test_minus_one_in_fit_points_to_partial_fit():
    X, Y = _data()
    Y[4, 2] = -1
    with pytest.raises(ValueError) as exc:
        SOMStreamClassifier(grid_size=2).fit(X, Y)
    msg = str(exc.value)
    assert "found -1 at row 4, column 2" in msg
    assert "unknown" in msg and "partial_fit" in msg
    assert "multi-class" not in msg


def test_minus_one_in_a_1d_target_points_to_partial_fit_and_reshape():
    X, Y = _data()
    y = Y[:, 0].copy()
    y[3] = -1
    with pytest.raises(ValueError) as exc:
        SOMStreamClassifier(grid_size=2).fit(X, y)
    msg = str(exc.value)
    assert "partial_fit" in msg and "y.reshape(-1, 1)" in msg and "multi-class" not in msg


@pytest.mark.parametrize("value", [2, -2])
def test_other_integers_still_read_as_a_multi_class_target(value):
    X, Y = _data()
    Y[5, 1] = value
    with pytest.raises(ValueError, match="multi-class target") as exc:
        SOMStreamClassifier(grid_size=2).fit(X, Y)
    assert "partial_fit" not in str(exc.value)


def test_partial_fit_takes_the_minus_one_that_fit_refuses():
    X, Y = _data()
    model = SOMStreamClassifier(grid_size=2, random_state=0).fit(X, Y)
    Y_later = Y.copy()
    Y_later[:, 2] = -1
    assert model.partial_fit(X, Y_later) is model  # the message's advice holds
