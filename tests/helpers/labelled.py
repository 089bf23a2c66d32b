"""Streams whose labels arrive, and a model fitted on one, that the estimator's tests of what labels
teach (guards, label persistence) and the model file's tests of the members they leave share:
overlapping discs with the arrivals of their labels, and streams of label runs with their
arrival schedule."""

import warnings

import numpy as np

from mlsom import SOMStreamClassifier


def overlapping_discs(seed, n, centres=((0.0, 0.0), (1.3, 0.0), (0.6, 0.9)), radii=(1, 1, 0.7)):
    """Instances uniform over the union of overlapping discs in the plane, each label the
    membership of one disc: where a label's disc ends inside another's, the instances just
    outside it are the negatives that its Bayes test accepts (its map's neurons are inside its
    disc), which is what guards are for."""
    rng = np.random.default_rng(seed)
    C, R = np.asarray(centres, dtype=float), np.asarray(radii, dtype=float)
    X = np.empty((0, 2))
    while len(X) < n:
        P = rng.uniform(C.min(0) - R.max(), C.max(0) + R.max(), size=(4 * n, 2))
        inside = ((P[:, None, :] - C[None]) ** 2).sum(-1) <= R**2
        X = np.vstack([X, P[inside.any(axis=1)]])
    X = X[:n]
    Y = (((X[:, None, :] - C[None]) ** 2).sum(-1) <= R**2).astype(np.uint8)
    return X, Y


def label_arrivals(seed, n, L, share=0.3, unknown=0.1):
    """The true labels of a random share of the rows (some unknown: -1)."""
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(rng.random(n) < share)
    return rows, rng.random((len(rows), L)) < unknown


def due_arrivals(X, Yl, rows, lo, hi, delay=40):
    """predict_stream's arrivals for rows lo:hi of the stream: the labelled rows due then."""
    due = (rows + delay >= lo) & (rows + delay < hi)
    return X[rows[due]], Yl[due], (rows[due] + delay - lo).astype(np.int64)


def label_runs(seed, n, L=4, A=5, stay=0.9, unknown=0.1):
    """A stream whose label sets come in runs (each instance keeps the last one's main label
    with probability ``stay``), with a share of its labels unknown (-1)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(L, A))
    Y = np.zeros((n, L), dtype=np.int8)
    cur = 0
    for i in range(n):
        if rng.random() > stay:
            cur = int(rng.integers(0, L))
        Y[i, cur] = 1
        if rng.random() < 0.2:
            Y[i, rng.integers(0, L)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(scale=2.0, size=(n, A))
    Yu = Y.copy()
    Yu[rng.random(Y.shape) < unknown] = -1
    return X, Y, Yu


def small_model(X, Y, **kw):
    """A model of grid size 2 (seed 0, one thread) fitted on X, Y, without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SOMStreamClassifier(grid_size=2, random_state=0, n_jobs=1, **kw).fit(X, Y)


def arrival_schedule(seed, n, share=0.7, late=0.2, delay=3):
    """Which rows get labels and when: (after, rows) in arrival order, most of them prompt."""
    rng = np.random.default_rng(seed)
    chosen = rng.random(n) < share
    due = np.arange(n) + np.where(rng.random(n) < late, delay, 0)
    order = np.lexsort((np.arange(n), due))
    rows = np.array([i for i in order if chosen[i] and due[i] < n], dtype=np.int64)
    return due[rows] + 1, rows


def label_runs_case():
    """A small model fitted on the first 400 rows of a stream of label runs, the rest of the
    stream (X, labels with unknowns) and the arrivals of its labels (X, Y, after)."""
    X, _, Yu = label_runs(0, 2500)
    model = small_model(X[:400], np.maximum(Yu[:400], 0))
    Xs, Ys = X[400:], Yu[400:]
    after, rows = arrival_schedule(1, len(Xs))
    return model, Xs, Ys, (Xs[rows], Ys[rows], after)
