"""Synthetic multi-label streams the tests of more than one area draw: streams of a kind built to
give ties and near-ties (the screening and lane tests), streams whose clusters drift while the
training set is drawn (the robust variant and its fuzzing), and the small sets that an estimator
test and a model-file test both fit (clusters pulled by their labels, moving blobs, rows left and
right of 0)."""

import numpy as np


def stream_of_kind(kind, n, A, L, seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.35).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    centres = rng.normal(scale=2.0, size=(L, A))
    X = Y @ centres / Y.sum(1, keepdims=True) + rng.normal(size=(n, A))
    if kind == "integers":  # small integer grid: many exactly equal distances
        X = np.round(X).clip(-2, 2)
    elif kind == "duplicates":  # every row four times
        X = np.repeat(X[: n // 4], 4, axis=0)
        Y = np.repeat(Y[: n // 4], 4, axis=0)
    elif kind == "offset":  # far from the origin (screening copies are centred: no effect)
        X = X + 1e4
    elif kind == "blobs":  # two blobs far apart: |x - centre|^2 >> distances, coarse screening
        X = X + 300.0 * (rng.random((n, 1)) < 0.5)
    elif kind == "tiny":
        X = X * 1e-150
    elif kind == "huge":
        X = X * 1e90
    elif kind == "binary":
        X = (X > 0).astype(np.float64)
    return np.ascontiguousarray(X), Y


KINDS = ["normal", "integers", "duplicates", "offset", "blobs", "tiny", "huge", "binary"]


def drifting_stream(seed, L, A, n_train=2400, n_test=150, speed=1.5):
    """Each label's cluster moves along a straight line while the training set is drawn (from a
    random point, by ``speed`` in all); the test part goes on moving. Label sets: the label of
    the cluster drawn, plus another one on 10 % of the rows."""
    rng = np.random.default_rng(seed)
    start = rng.random((L, A))
    step = rng.standard_normal((L, A))
    step *= speed / np.linalg.norm(step, axis=1, keepdims=True)

    def draw(t):
        n = len(t)
        lab = rng.integers(L, size=n)
        X = start[lab] + t[:, None] * step[lab] + 0.05 * rng.standard_normal((n, A))
        Y = np.zeros((n, L), np.uint8)
        Y[np.arange(n), lab] = 1
        extra = rng.random(n) < 0.1
        Y[np.flatnonzero(extra), rng.integers(L, size=int(extra.sum()))] = 1
        return X, Y

    t = np.linspace(0.0, 1.0, n_train + n_test)
    X_tr, Y_tr = draw(t[:n_train])
    X_te, _ = draw(t[n_train:])
    return X_tr, Y_tr, X_te


def random_labels(seed, n, L, unknown=0.25):
    """Labels 1/0 at random, a share of them unknown (-1): hits, misses and false alarms."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.4).astype(np.int8)
    Y[rng.random((n, L)) < unknown] = -1
    return Y


def pulled_clusters(n=600, A=6, L=4, seed=0):
    """Clustered instances with correlated labels: label j pulls x towards centre j."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(L, A))
    Y = (rng.random((n, L)) < 0.3).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(scale=0.7, size=(n, A))
    return X, Y


def moving_blobs(n=240, seed=0):
    """Three labels on three moving blobs in 2-D; overlaps give two-label rows."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    lab = rng.integers(0, 3, size=n)
    X = centres[lab] + t[:, None] * np.array([1.0, 0.5]) + rng.normal(scale=0.8, size=(n, 2))
    Y = np.zeros((n, 3), dtype=np.uint8)
    Y[np.arange(n), lab] = 1
    two = rng.random(n) < 0.15
    Y[two, (lab[two] + 1) % 3] = 1
    return X, Y


def left_right_rows(n, seed):
    """n rows of two features and four labels: class2 left of 0, class3 right of it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + np.where(np.arange(n)[:, None] % 2, 2.0, -2.0)
    Y = np.zeros((n, 4), dtype=int)
    Y[:, 2] = X[:, 0] < 0
    Y[:, 3] = X[:, 0] >= 0
    return X, Y


def three_named_columns():
    """Two features of left_right_rows and their difference, with its last two labels."""
    X, Y = left_right_rows(120, 2)
    X = np.column_stack([X, X[:, 0] - X[:, 1]])
    return X, Y[:, 2:]
