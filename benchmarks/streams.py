"""The benchmarks' synthetic data, made in one place (NumPy only, so that the suite still gets its
data when mlsom fails to import).

* ``make_stream``: the labelled stream of every online and scoring benchmark (L = 7 labels,
  A = 128 features unless stated): each label has a centre, each instance has each label with
  probability 0.25 and at least one, and sits at the mean of its labels' centres plus unit
  Gaussian noise.
* ``stream_chunk``: more instances of ``make_stream(..., seed=0)``'s distribution (the same label
  centres), ``seed`` choosing the draw: a long stream made chunk by chunk.
* ``training_data``: the unlabelled rows of the batch-training benchmarks (unit Gaussian noise
  plus one level in 0-4 per row, added to all its features), drawn from a caller's generator.
* ``labelled_rows`` and ``chunks_with_arrivals``: which rows of a stream get their labels, and
  when they arrive (the delayed-label protocol, in chunks as ``predict_stream(..., arrivals=...)``
  takes them).
"""

import numpy as np


def make_stream(n, L=7, A=128, seed=0):
    """(X, Y): n instances of A float64 features and their L labels (uint8)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(L, A))
    Y = (rng.random((n, L)) < 0.25).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    X = (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(size=(n, A))
    return X, Y


def stream_chunk(n, seed, L=7, A=128):
    """n more instances of make_stream(..., seed=0)'s distribution (same label centres)."""
    centres = np.random.default_rng(0).normal(scale=3.0, size=(L, A))  # make_stream's first draw
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.25).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    return (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(size=(n, A))


def training_data(rng, n, a):
    """n x a C-contiguous float64 rows drawn from ``rng`` (which the caller goes on drawing
    from, e.g. for the initial neurons)."""
    return np.ascontiguousarray(rng.normal(size=(n, a)) + rng.integers(0, 5, (n, 1)))


def labelled_rows(n, fraction, delay, seed=0):
    """The rows that get labels (a share ``fraction`` at random) and when each is learnt: once
    due + 1 rows have been classified (due sorted)."""
    chosen = np.flatnonzero(np.random.default_rng(seed).random(n) < fraction)
    return chosen, chosen + delay


def chunks_with_arrivals(X, Y, fraction, delay, seed=0, size=1000):
    """(lo, hi, arrivals) of each chunk of ``size`` rows: the labels due while rows lo:hi are
    classified, as predict_stream's ``arrivals``."""
    chosen, due = labelled_rows(len(X), fraction, delay, seed)
    for lo in range(0, len(X), size):
        hi = min(len(X), lo + size)
        k0, k1 = np.searchsorted(due, (lo, hi))  # the labels due in this chunk
        i = chosen[k0:k1]
        yield lo, hi, (X[i], Y[i], due[k0:k1] + 1 - lo)
