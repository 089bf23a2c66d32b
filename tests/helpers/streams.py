"""Synthetic multi-label streams the tests of more than one area draw: streams of a kind built to
give ties and near-ties (the screening and lane tests), and streams whose clusters drift while the
training set is drawn (the robust variant and its fuzzing)."""

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
