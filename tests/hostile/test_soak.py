"""Soak test: a long stream through one model, with memory and state checked after every chunk.

A model fitted on a small labelled set classifies a long drifting stream, generated on the fly in
chunks of 50,000 instances. After every chunk: the resident memory has not grown (beyond a small
bound, once the first chunks have warmed the allocator up), and the state is finite and within
its bounds.

``test_soak_long`` (marked slow) streams ``MLSOM_SOAK_INSTANCES`` instances (default 2,000,000);
``test_soak_short`` streams 200,000 and runs in the default suite. Deselect the long one with
``-m "not slow"``.
"""

import os
import sys

import numpy as np
import pytest

from mlsom import SOMStreamClassifier

CHUNK = 50_000
N_FEATURES, N_LABELS = 6, 4
WARMUP_CHUNKS = 3
MAX_RSS_GROWTH_MB = 20.0


def current_rss_mb():
    """Resident memory of this process now, in MB (None where it cannot be read)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    try:
        import psutil
    except ImportError:
        return None
    return psutil.Process().memory_info().rss / 2**20


def peak_rss_mb():
    """Peak resident memory of this process so far, in MB (NaN where it cannot be read)."""
    try:
        import resource  # POSIX only
    except ImportError:
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024.0  # bytes on macOS


class DriftingStream:
    """Clustered multi-label instances whose cluster centres rotate slowly, chunk by chunk."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.centres = self.rng.normal(scale=3.0, size=(N_LABELS, N_FEATURES))
        self.t = 0

    def chunk(self, n):
        rng = self.rng
        Y = (rng.random((n, N_LABELS)) < 0.25).astype(np.uint8)
        Y[np.arange(n), rng.integers(0, N_LABELS, n)] = 1
        angle = 1e-7 * (self.t + np.arange(n))[:, None]
        shift = np.concatenate([np.cos(angle), np.sin(angle)], axis=1) * 2.0
        X = (Y @ self.centres) / Y.sum(axis=1, keepdims=True)
        X[:, :2] += shift
        X += rng.normal(scale=0.7, size=X.shape)
        self.t += n
        return X, Y


def check_state(model):
    P = model.P_
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()
    z = model.cardinality_
    assert np.isfinite(z) and 0 <= z <= N_LABELS
    for w, ao, cnt in zip(model.weights_, model.averout_, model.neuron_counts_, strict=True):
        assert w is not None and np.isfinite(w).all()
        assert np.isfinite(ao).all() and (ao >= 0).all() and (ao <= 1).all()
        assert (cnt >= 1).all()
    T = model.T_
    assert (T >= 0).all() and np.array_equal(T, T.T)


def run_soak(n_instances):
    stream = DriftingStream(seed=11)
    X, Y = stream.chunk(500)
    model = SOMStreamClassifier(grid_size=3, random_state=0).fit(X, Y)
    check_state(model)
    n_seen = model.n_seen_
    n_chunks = -(-n_instances // CHUNK)
    warmup = max(1, min(WARMUP_CHUNKS, n_chunks // 2))
    baseline = None
    samples = []
    streamed = 0
    k = 0
    while streamed < n_instances:
        n = min(CHUNK, n_instances - streamed)
        Xc, _ = stream.chunk(n)
        out = model.predict_stream(Xc)
        assert out.shape == (n, N_LABELS) and out.dtype == np.uint8
        assert out.any(axis=1).all()  # the first-ranked label is always predicted
        del Xc, out
        streamed += n
        k += 1
        assert model.n_seen_ == n_seen + n
        n_seen = model.n_seen_
        check_state(model)
        rss = current_rss_mb()
        if rss is not None:
            if k == warmup:
                baseline = rss
            elif k > warmup:
                samples.append(rss)
    return model, baseline, samples


def assert_memory_flat(baseline, samples):
    if baseline is None:
        pytest.skip("the resident memory of this process cannot be read here")
    growth = max(samples, default=baseline) - baseline
    print(
        f"\nRSS after warm-up {baseline:.1f} MB, largest growth {growth:.2f} MB over "
        f"{len(samples)} chunks; peak RSS {peak_rss_mb():.1f} MB"
    )
    assert growth < MAX_RSS_GROWTH_MB, (baseline, samples)


def test_soak_short():
    model, baseline, samples = run_soak(200_000)
    assert model.n_seen_ == 500 + 200_000
    assert_memory_flat(baseline, samples)


@pytest.mark.slow
def test_soak_long():
    n = int(os.environ.get("MLSOM_SOAK_INSTANCES", "2000000"))
    assert n > 0, "MLSOM_SOAK_INSTANCES must be a positive number of instances"
    model, baseline, samples = run_soak(n)
    assert model.n_seen_ == 500 + n
    assert_memory_flat(baseline, samples)
