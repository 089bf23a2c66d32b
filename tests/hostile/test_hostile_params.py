"""Hostile and mistaken parameter values at the public entry points of the data, evaluation,
statistics, plotting and baseline modules.

The rule: a value from a caller never crashes the process, never hangs it, never allocates without
a bound, never overflows and never gives a silently wrong answer; a bad value gets a TypeError or
ValueError that names the argument. The tests are grouped by family (thread counts, memory
estimates, integer and float edges, hangs), then by entry point; most are tables of
(id, call, expected exception, message pattern), and every pattern names the argument.

The memory tests run under a fixed, small memory limit (``small_memory``), so that they refuse the
same values on every machine; a few absurd values are also checked against the real limit.
"""

import inspect
import itertools
import math
import signal
import sys
from contextlib import contextmanager
from fractions import Fraction

import numpy as np
import pytest

import mlsom._memory as memory
from mlsom import evaluation as ev
from mlsom import protocol, stats
from mlsom._memory import check_allocation, format_bytes, memory_limit, nbytes_of
from mlsom.baselines import MINASBR
from mlsom.datasets import (
    HyperplaneGenerator,
    RandomRBFGenerator,
    RandomTreeGenerator,
    WaveformGenerator,
    balanced_initial_split,
    filter_labels,
    load,
    load_novelty,
    minmax_scale,
    moa_spherical,
    read_multilabel,
)


def _needs_extras():
    """The baselines, statistics and plots need the ``experiments`` extra."""
    for name in ("scipy", "sklearn", "river", "matplotlib"):
        pytest.importorskip(name)


def _named_cases(argnames, table):
    """Parametrize over a table of (id, *args) rows."""
    return pytest.mark.parametrize(argnames, [c[1:] for c in table], ids=[c[0] for c in table])


def _refuses(call, exc, match):
    with pytest.raises(exc, match=match) as info:
        call()
    return info.value


@contextmanager
def _deadline(seconds):
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows: no guard
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# A small labelled set for the baselines
_RNG = np.random.default_rng(0)
X60 = _RNG.random((60, 3))
Y60 = (_RNG.random((60, 4)) < 0.4).astype(np.uint8)
Y3 = np.eye(3, dtype=np.uint8)


class _Batch:
    """A minimal batch method for the protocol."""

    kind = "batch"

    def fit(self, X, Y):
        self.L = Y.shape[1]

    def predict(self, X):
        return np.zeros((len(X), self.L), dtype=np.uint8)


# ============================================================================ the memory helper


@pytest.mark.parametrize(
    "nbytes, text",
    [
        (0, "0 bytes"),
        (999, "999 bytes"),
        (1000, "1 kB"),
        (999_999, "1 MB"),
        (1_500_000_000, "1.5 GB"),
        (16 * 10**12, "16 TB"),
        (2**70, "1.18 ZB"),
        (10**100, "1e+100 bytes"),
        (math.inf, "an unbounded amount"),
    ],
)
def test_format_bytes(nbytes, text):
    assert format_bytes(nbytes) == text


def test_check_allocation_passes_below_the_limit_and_names_everything_above_it():
    assert check_allocation("n", 5, 10**6, "x", limit=10**9) == 10**6
    err = _refuses(
        lambda: check_allocation("n_instances", 10**12, 16 * 10**12, "X", limit=8 * 10**9),
        ValueError,
        r"^n_instances=1000000000000 would need about 16 TB for X; this process can use at "
        r"most 8 GB \(the limit given\)$",
    )
    assert "16 TB" in str(err)
    _refuses(
        lambda: check_allocation(("a", "b"), (1, 2), 10**20, "y", limit=10**9),
        ValueError,
        r"^a=1, b=2 would need about 100 EB for y",
    )
    _refuses(
        lambda: check_allocation("n", 10**400, math.inf, "z", limit=10**9),
        ValueError,
        r"^n=1000.*\.\.\. would need an unbounded amount of memory for z",
    )
    _refuses(lambda: check_allocation("n", 1, -1, "z"), ValueError, r"nbytes must be >= 0")
    _refuses(lambda: check_allocation("n", 1, "1", "z"), TypeError, r"nbytes must be a number")


def test_check_allocation_uses_the_process_limit(monkeypatch):
    limit, source = memory_limit()
    assert 0 < limit <= memory.ADDRESS_SPACE and isinstance(source, str)
    _refuses(lambda: check_allocation("n", 1, limit + 1, "x"), ValueError, r"n=1 would need about")
    assert check_allocation("n", 1, limit, "x") == limit


def test_memory_limit_honours_rlimit_as_and_cgroups(monkeypatch):
    monkeypatch.setattr(memory, "_address_space_limit", lambda: 123_000_000)
    monkeypatch.setattr(memory, "_cgroup_limit", lambda: None)
    assert memory.memory_limit() == (123_000_000, "the process's address-space limit (RLIMIT_AS)")
    _refuses(
        lambda: check_allocation("n_labels", 7, 200_000_000, "Y"),
        ValueError,
        r"n_labels=7 would need about 200 MB for Y; this process can use at most 123 MB "
        r"\(the process's address-space limit \(RLIMIT_AS\)\)",
    )
    monkeypatch.setattr(memory, "_cgroup_limit", lambda: 50_000_000)
    assert memory.memory_limit()[0] == 50_000_000


def test_memory_limit_falls_back_to_the_address_space(monkeypatch):
    monkeypatch.setattr(memory, "_physical_memory", lambda: (None, None))
    monkeypatch.setattr(memory, "_address_space_limit", lambda: None)
    monkeypatch.setattr(memory, "_cgroup_limit", lambda: None)
    assert memory.memory_limit() == (2**47, "the address space of a 64-bit process")


def test_physical_memory_is_read_from_sysconf():
    phys, source = memory._physical_memory()
    if phys is None:  # pragma: no cover - a platform without the figure
        pytest.skip("no physical memory figure here")
    assert phys > 2**20 and "physical" in source


def test_nbytes_of_never_overflows():
    assert nbytes_of(2**40, 2**40, itemsize=8) == 2**83
    assert nbytes_of(math.inf, 3) == math.inf
    assert nbytes_of(-5, 3) == 0
    assert nbytes_of(2.5, itemsize=2) == 6


# ============================================================================ 1. thread counts

_THREAD_NAMES = ("n_jobs", "n_threads", "threads", "workers", "n_workers", "processes", "n_procs")


def _public_callables():
    import mlsom.baselines as baselines
    import mlsom.datasets as datasets
    import mlsom.plotting as plotting

    for module in (datasets, ev, protocol, stats, plotting, baselines):
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj):
                yield f"{module.__name__}.{name}", obj


def test_no_entry_point_takes_a_thread_or_process_count():
    _needs_extras()
    # none of these entry points starts threads or processes; a new n_jobs-like parameter must
    # be resolved with mlsom._validation.effective_n_threads and get its tests here
    found = []
    for where, obj in _public_callables():
        try:
            params = inspect.signature(obj).parameters
        except (TypeError, ValueError):
            continue
        found += [f"{where}({p})" for p in params if p in _THREAD_NAMES]
    assert found == []


def test_neighbour_searches_stay_single_threaded():
    from mlsom.baselines import MLkNN
    from mlsom.baselines._batch import make_base_learner

    model = MLkNN(k=3).fit(X60, Y60)
    assert model.nn_.n_jobs is None  # scikit-learn: None means one job
    assert make_base_learner("knn")[-1].n_jobs is None


# ============================================================================ 2. memory estimates


@pytest.fixture
def small_memory(monkeypatch):
    """A 50 MB process: the estimates refuse the same values on every machine."""
    monkeypatch.setattr(memory, "memory_limit", lambda: (50_000_000, "the test's limit"))


def _result(k, n=2):
    return stats.friedman_nemenyi(np.random.default_rng(k).random((n, k)))


def _many_windows_result():
    # 20,000 one-instance windows over 50 labels, each with its own example-count triple
    # (|Y ∩ Ŷ|, |Y|, |Ŷ|) and the label counts that go with it: a dense (W, U) table of 400
    # million
    W, L = 20_000, 50
    triples = [
        (a, t, p)
        for t in range(L + 1)
        for p in range(L + 1)
        for a in range(min(t, p) + 1)
        if t + p - a <= L
    ][:W]
    ex = [np.array([[a, t, p, 1]]) for a, t, p in triples]
    a, t, p = np.array(triples).T[:, :, None]
    j = np.arange(L)
    tp, fn, fp = j < a, (j >= a) & (j < t), (j >= t) & (j < t + p - a)
    counts = np.stack([tp, fp, fn, ~(tp | fn | fp)], axis=-1).astype(np.int64)
    return ev.StreamEvaluation(np.arange(W + 1), counts, ex)


def _tall_skinny(n, L):
    rng = np.random.default_rng(1)
    return rng.random((n, 2)), (rng.random((n, L)) < 0.5).astype(np.uint8)


MEMORY_CASES = [
    # ---- generators and load
    (
        "novelty stream n_instances",
        lambda: load_novelty("MOA-Spher-3C-5C-2A", n_instances=10**7),
        r"n_instances=10000000, n_classes=5, n_features=2 would need about .* GB",
    ),
    (
        "spherical n_instances",
        lambda: moa_spherical(3, 2, 10**12, 100, radius=0.1),
        r"n_instances=1000000000000, n_classes=3, n_features=2 would need about 325 TB",
    ),
    (
        "spherical n_features",
        lambda: moa_spherical(3, 10**6, 100, 100, radius=0.1),
        r"n_features=1000000 would need about .* GB for the stream",
    ),
    (
        "spherical n_classes",
        lambda: moa_spherical(10**5, 2, 1000, 100, radius=0.1),
        r"n_classes=100000, n_features=2 would need about",
    ),
    (
        "spherical rotation meeting times",
        lambda: moa_spherical(2, 2, 100_000, 1e-6, radius=0.1, rotate=True),
        r"shift_every=1e-06 would need about 38.2 GB for the meeting times",
    ),
    (
        "read n_instances",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 10**9),
        r"n_instances=1000000000, n_labels=5, n_features=10 would need about",
    ),
    (
        "read n_map_samples",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 1000, n_map_samples=10**8),
        r"n_map_samples=100000000, n_labels=5 would need about",
    ),
    (
        "read n_features",
        lambda: read_multilabel("hyperplane", 5, 10**6, 1.5, 1000),
        r"n_features=1000000 would need about",
    ),
    (
        "read sub-streams and transitions",
        lambda: read_multilabel(
            "hyperplane", 5, 10, 1.5, 10_000, drift_fractions=[0.1] * 5000, transition_width=10
        ),
        r"drift_fractions='5000 sub-streams', n_labels=5 would need about 40\d MB",
    ),
    (
        "tree depth",
        lambda: RandomTreeGenerator(max_depth=60, random_state=0),
        r"max_depth=60, first_leaf_level=3, leaf_fraction=0.15 would need about .* for a random "
        r"tree of .* nodes",
    ),
    (
        "tree n_classes",
        lambda: RandomTreeGenerator(n_classes=10**12, min_class_fraction=0.0),
        r"n_classes=1000000000000 would need about 16 TB",
    ),
    (
        "rbf centroids",
        lambda: RandomRBFGenerator(n_centroids=10**6, n_features=100),
        r"n_centroids=1000000, n_features=100 would need about 832 MB for the centroids",
    ),
    (
        "hyperplane n_features",
        lambda: HyperplaneGenerator(n_features=10**8),
        r"n_features=100000000 would need about 800 MB for the weights",
    ),
    (
        "sample n_samples",
        lambda: WaveformGenerator().sample(10**7),
        r"n_samples=10000000 would need about 5.52 GB",
    ),
    (
        "sample_by_class n_samples",
        lambda: WaveformGenerator().sample_by_class(10**7),
        r"n_samples=10000000 would need about",
    ),
    (
        "load n_instances",
        lambda: load("Mult-Non-Spher-HP", n_instances=10**9),
        r"n_instances=1000000000, n_labels=5, n_features=10 would need about",
    ),
    # ---- evaluation and protocol
    (
        "window_edges n_windows",
        lambda: ev.window_edges(10**12, 10**8),
        r"n_windows=100000000 would need about 3.2 GB for the window edges",
    ),
    (
        "evaluate_predictions n_windows",
        lambda: ev.evaluate_predictions(
            np.zeros((10**6, 1)), np.zeros((10**6, 1)), n_windows=10**6
        ),
        r"n_windows=1000000 would need about 764 MB for the counts of 1000000 windows x 1 labels",
    ),
    (
        "evaluate_predictions window_size",
        lambda: ev.evaluate_predictions(np.zeros((10**6, 1)), np.zeros((10**6, 1)), window_size=1),
        r"window_size=1 would need about 764 MB",
    ),
    (
        "evaluate n_test and window_size",
        lambda: protocol.evaluate(
            _Batch(), iter([]), X_train=Y3, Y_train=Y3, n_test=10**15, window_size=1
        ),
        r"window_size=1 would need about 892 PB for the counts of 1000000000000000 windows",
    ),
    (
        "evaluate n_windows",
        lambda: protocol.evaluate(
            _Batch(), iter([]), X_train=Y3, Y_train=Y3, n_test=10**12, n_windows=10**6
        ),
        r"n_windows=1000000 would need about 892 MB for the counts",
    ),
    (
        "evaluate_many counts per method",
        lambda: protocol.evaluate_many(
            [_Batch() for _ in range(100)],
            iter([]),
            X_train=Y3,
            Y_train=Y3,
            n_test=10**6,
            n_windows=10**4,
        ),
        r"n_windows=10000 would need about 892 MB for the counts of 10000 windows x 3 labels "
        r"of 100 methods",
    ),
    (
        "curve of many windows and triples",
        lambda: _many_windows_result().curve("example_f1"),
        r"n_windows=20000, n_distinct_triples=20000 would need about 19.2 GB",
    ),
    # ---- plotting
    (
        "plot_curves lines",
        lambda: __import__("mlsom.plotting").plotting.plot_curves(
            {f"m{i}": np.zeros(5000) for i in range(1000)}
        ),
        r"curves='1000 methods, 5000000 values' would need about 280 MB for the lines",
    ),
    (
        "heat map texts",
        lambda: __import__("mlsom.plotting").plotting.plot_nemenyi_heatmap(
            _result(100), annotate=True
        ),
        r"result='100 methods' would need about 159 MB for the cells of the heat map",
    ),
    (
        "critical difference diagram",
        lambda: __import__("mlsom.plotting").plotting.plot_critical_difference(_result(1000)),
        r"result='1000 methods' would need about 64 MB",
    ),
    (
        "save_png dpi",
        lambda: __import__("mlsom.plotting").plotting.save_png(
            __import__("matplotlib.figure").figure.Figure(figsize=(6, 4)), "unused.png", dpi=3000
        ),
        r"dpi=3000.0 would need about 1.73 GB for a 18000 x 12000 pixel image",
    ),
    # ---- baselines
    (
        "ML-kNN k",
        lambda: __import__("mlsom.baselines").baselines.MLkNN(k=10**9).fit(*_tall_skinny(2000, 2)),
        r"k=1000000000 would need about 64 MB for the 1999 nearest neighbours of 2000 rows",
    ),
    (
        "RAkEL n_models",
        lambda: (
            __import__("mlsom.baselines")
            .baselines.RAkEL(n_models=4000)
            .fit(*_tall_skinny(1000, 30))
        ),
        r"n_models=4000 would need about 14\d MB for 4000 fitted base learners",
    ),
    (
        "EPS n_models",
        lambda: (
            __import__("mlsom.baselines")
            .baselines.EnsembleOfPrunedSets(n_models=10**5)
            .fit(X60, Y60)
        ),
        r"n_models=100000 would need about",
    ),
    (
        "ECC n_models",
        lambda: (
            __import__("mlsom.baselines")
            .baselines.EnsembleOfClassifierChains(n_models=10**5)
            .fit(X60, Y60)
        ),
        r"n_models=100000 would need about .* \(chains of 4 links\)",
    ),
    (
        "HOMER n_clusters",
        lambda: (
            __import__("mlsom.baselines")
            .baselines.HOMER(n_clusters=10)
            .fit(*_tall_skinny(20_000, 20))
        ),
        r"n_clusters=10 would need about 64 MB for the distances of 20 label columns",
    ),
    (
        "PS-HT buffer_size",
        lambda: (
            __import__("mlsom.baselines").baselines.PSHoeffdingTree(buffer_size=10**6).fit(X60, Y60)
        ),
        r"buffer_size=1000000 would need about 480 MB for the buffered instances",
    ),
    (
        "ADWIN bagging n_models",
        lambda: (
            __import__("mlsom.baselines").baselines.ADWINBaggingML(n_models=10**5).fit(X60, Y60)
        ),
        r"n_models=100000 would need about 440 MB for 100000 members 'br'",
    ),
    (
        "ADWIN bagging ps buffer",
        lambda: (
            __import__("mlsom.baselines")
            .baselines.ADWINBaggingML("ps", member_params={"buffer_size": 10**5})
            .fit(X60, Y60)
        ),
        r"n_models=10, member_params\['buffer_size'\]=100000 would need about 480 MB",
    ),
]


@_named_cases("call, match", MEMORY_CASES)
def test_memory_hungry_values_are_refused_before_allocating(small_memory, call, match):
    _needs_extras()
    err = _refuses(call, ValueError, match)
    assert "this process can use at most 50 MB (the test's limit)" in str(err)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: moa_spherical(3, 2, 2**63, 100, radius=0.1), r"n_instances=9223372036854775808"),
        (lambda: read_multilabel("waveform", 5, 21, 1.5, 10**15), r"n_instances=10+, n_labels"),
        (lambda: HyperplaneGenerator().sample(10**15), r"n_samples=10+ would need about"),
    ],
    ids=["spherical 2**63", "read 10**15", "sample 10**15"],
)
def test_absurd_sizes_are_refused_on_any_machine(call, match):
    _refuses(call, ValueError, match + r".*this process can use at most")


def test_a_refused_fit_changes_nothing(small_memory):
    _needs_extras()
    from mlsom.baselines import MLkNN

    model = MLkNN(k=3).fit(X60, Y60)
    before = (model.min_.copy(), model.prior_.copy(), model.k_)
    with pytest.raises(ValueError, match=r"k=1000000000 would need"):
        model.set_params(k=10**9).fit(*_tall_skinny(2000, 4))
    assert np.array_equal(model.min_, before[0]) and np.array_equal(model.prior_, before[1])
    assert model.k_ == before[2] and model.n_labels_ == 4


def test_minas_distance_tables_are_sliced_without_changing_predictions(monkeypatch):
    # MINAS-BR's k-means and online blocks work in row slices of at most _DIST_ELEMS distances:
    # memory does not grow with rows x micro-clusters, and the slicing does not change anything
    from mlsom.baselines import _minas

    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0], [9.0, 9.0]])
    lab = rng.integers(0, 4, 3000)
    X = centres[lab] + rng.normal(size=(3000, 2))
    Y = np.eye(4, dtype=np.uint8)[lab][:, :3]

    def run():
        model = MINASBR(k_ini=0.05, theta=50, omega=400, random_state=0).fit(X[:600], Y[:600])
        return model.predict_stream(X[600:]), model.cluster_centers_, model.n_novelty_patterns_

    whole = run()
    monkeypatch.setattr(_minas, "_DIST_ELEMS", 7)
    sliced = run()
    assert np.array_equal(whole[0], sliced[0]) and np.array_equal(whole[1], sliced[1])
    assert whole[2] == sliced[2] > 0


def test_ml_knn_counts_neighbours_without_the_three_way_table():
    _needs_extras()
    from mlsom.baselines._mlknn import _positive_neighbours

    rng = np.random.default_rng(3)
    Y = (rng.random((50, 6)) < 0.3).astype(np.int64)
    neigh = rng.integers(0, 50, (40, 7))
    np.testing.assert_array_equal(_positive_neighbours(Y, neigh), Y[neigh].sum(axis=1))


# ================================================================== 3. integer and float edges

BIG = 10**100

EDGE_CASES = [
    # ---- novelty streams
    (
        "novelty n_instances 10**12",
        lambda: load_novelty("MOA-Spher-3C-5C-2A", n_instances=10**12),
        ValueError,
        r"n_instances must be <= 100000000, got 1000000000000",
    ),
    (
        "novelty random_state -1 (real stream)",
        lambda: load_novelty("Scene-modified", random_state=-1),
        ValueError,
        r"random_state must be >= 0, got -1",
    ),
    (
        "spherical appear_at 2**63",
        lambda: moa_spherical(2, 2, 1000, 100, radius=0.1, appear_at=[0, 2**63]),
        ValueError,
        r"appear_at\[1\] must be <= 999, got 9223372036854775808",
    ),
    (
        "spherical appear_at nan",
        lambda: moa_spherical(2, 2, 1000, 100, radius=0.1, appear_at=[0, float("nan")]),
        TypeError,
        r"appear_at\[1\] must be an integer, got nan",
    ),
    # ---- window edges, counts, results
    (
        "edges n_test 2**63",
        lambda: ev.window_edges(2**63),
        ValueError,
        r"n_test must be <= 9223372036854775807",
    ),
    ("edges n_test 10**100", lambda: ev.window_edges(BIG), ValueError, r"n_test must be <= "),
    (
        "edges n_windows 2**31 + 1",
        lambda: ev.window_edges(2**40, 2**31 + 1),
        ValueError,
        r"n_windows must be <= 2147483648",
    ),
    ("edges n_windows 0", lambda: ev.window_edges(10, 0), ValueError, r"n_windows must be >= 1"),
    (
        "edges n_windows 3.0",
        lambda: ev.window_edges(10, 3.0),
        TypeError,
        r"n_windows must be an integer",
    ),
    (
        "edges n_windows True",
        lambda: ev.window_edges(10, True),
        TypeError,
        r"n_windows must be an integer",
    ),
    (
        "edges more windows than rows",
        lambda: ev.window_edges(3, 4),
        ValueError,
        r"n_windows=4 is larger than the test stream \(3 rows\)",
    ),
    (
        "counts 1e300",
        lambda: ev.macro_f1(np.full((2, 4), 1e300)),
        ValueError,
        r"label counts must be <= 2\*\*53.*1e\+300",
    ),
    (
        "counts uint64 max",
        lambda: ev.micro_f1(np.full((2, 4), 2**64 - 1, dtype=np.uint64)),
        ValueError,
        r"label counts must be <= 2\*\*53",
    ),
    (
        "example counts inf",
        lambda: ev.compute_measure("example_f1", ex_counts=[[1, 1, 1, np.inf]]),
        ValueError,
        r"example counts must be whole numbers",
    ),
    (
        "example counts 2**60",
        lambda: ev.compute_measure("example_f1", ex_counts=[[1, 1, 1, 2**60]]),
        ValueError,
        r"example counts must be <= 2\*\*53",
    ),
    (
        "result edges decrease",
        lambda: ev.StreamEvaluation([0, 5, 3], np.zeros((2, 1, 4)), [np.zeros((0, 4))] * 2),
        ValueError,
        r"window_edges must start at 0 and increase strictly",
    ),
    (
        "result edges start",
        lambda: ev.StreamEvaluation([2, 5], np.zeros((1, 1, 4)), [np.zeros((0, 4))]),
        ValueError,
        r"window_edges must start at 0",
    ),
    (
        "result edges empty window",
        lambda: ev.StreamEvaluation([0, 5, 5], np.zeros((2, 1, 4)), [np.zeros((0, 4))] * 2),
        ValueError,
        r"window_edges must .* increase strictly",
    ),
    (
        "result edges NaN",
        lambda: ev.StreamEvaluation([0, np.nan], np.zeros((1, 1, 4)), [np.zeros((0, 4))]),
        ValueError,
        r"window_edges must be whole numbers",
    ),
    (
        "result counts fractional",
        lambda: ev.StreamEvaluation([0, 5], np.full((1, 1, 4), 0.5), [np.zeros((0, 4))]),
        ValueError,
        r"label_counts must be whole numbers",
    ),
    (
        "result counts negative",
        lambda: ev.StreamEvaluation([0, 5], -np.ones((1, 1, 4)), [np.zeros((0, 4))]),
        ValueError,
        r"label_counts must be >= 0",
    ),
    (
        "evaluate_predictions window_size NaN",
        lambda: ev.evaluate_predictions(Y3, Y3, window_size=np.nan),
        TypeError,
        r"window_size must be an integer",
    ),
    (
        "evaluate_predictions n_windows 1.0",
        lambda: ev.evaluate_predictions(Y3, Y3, n_windows=1.0),
        TypeError,
        r"n_windows must be an integer",
    ),
    (
        "window_counts 2**63",
        lambda: ev.evaluate_predictions(Y3, Y3, n_windows=1).window_counts(2**63),
        IndexError,
        r"window 9223372036854775808 is out of range",
    ),
    # ---- protocol
    (
        "evaluate n_test True",
        lambda: protocol.evaluate(_Batch(), iter([]), X_train=Y3, Y_train=Y3, n_test=True),
        TypeError,
        r"n_test must be an integer",
    ),
    (
        "evaluate n_test 2**63",
        lambda: protocol.evaluate(_Batch(), iter([]), X_train=Y3, Y_train=Y3, n_test=2**63),
        ValueError,
        r"n_test must be <= 9223372036854775807",
    ),
    (
        "evaluate n_test 0",
        lambda: protocol.evaluate(_Batch(), iter([]), X_train=Y3, Y_train=Y3, n_test=0),
        ValueError,
        r"n_test must be >= 1",
    ),
    (
        "evaluate chunk_size 0",
        lambda: protocol.evaluate(_Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, chunk_size=0),
        ValueError,
        r"chunk_size must be >= 1",
    ),
    (
        "evaluate chunk_size 2.0",
        lambda: protocol.evaluate(_Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, chunk_size=2.0),
        TypeError,
        r"chunk_size must be an integer",
    ),
    (
        "evaluate window_size 0",
        lambda: protocol.evaluate(_Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, window_size=0),
        ValueError,
        r"window_size must be >= 1",
    ),
    (
        "evaluate more windows than rows",
        lambda: protocol.evaluate(_Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=4),
        ValueError,
        r"n_windows=4 is larger than the test stream \(3 rows\)",
    ),
    (
        "evaluate empty stream",
        lambda: protocol.evaluate(_Batch(), (Y3[:0], Y3[:0]), X_train=Y3, Y_train=Y3),
        ValueError,
        r"n_test must be >= 1",
    ),
    (
        "evaluate seed str",
        lambda: protocol.evaluate(
            _Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, seed="7"
        ),
        TypeError,
        r"seed must be an integer, got '7'",
    ),
    (
        "evaluate_many seeds float",
        lambda: protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, seeds={"a": 1.5}
        ),
        TypeError,
        r"seeds\['a'\] must be an integer, got 1.5",
    ),
    # ---- statistics
    (
        "nemenyi_q n_methods 10**100",
        lambda: stats.nemenyi_q(BIG),
        ValueError,
        r"n_methods must be <= 1000",
    ),
    (
        "cd n_methods 2**63",
        lambda: stats.critical_difference(2**63, 5),
        ValueError,
        r"n_methods must be <= 1000",
    ),
    (
        "cd n_datasets 10**100",
        lambda: stats.critical_difference(4, BIG),
        ValueError,
        r"n_datasets must be <= 2147483647",
    ),
    (
        "chi2 n_datasets 10**400",
        lambda: stats.friedman_chi2([1.0, 2.0], 10**400),
        ValueError,
        r"n_datasets must be <= 2147483647",
    ),
    (
        "iman n_datasets 2**63",
        lambda: stats.iman_davenport(1.0, 5, 2**63),
        ValueError,
        r"n_datasets must be <= 2147483647",
    ),
    (
        "iman n_methods 1.0",
        lambda: stats.iman_davenport(1.0, 3.0, 5),
        TypeError,
        r"n_methods must be an integer",
    ),
    (
        "q alpha 1e-17",
        lambda: stats.nemenyi_q(3, 1e-17),
        ValueError,
        r"alpha must be >= 1e-10 .*got 1e-17",
    ),
    (
        "friedman alpha 1e-300",
        lambda: stats.friedman_nemenyi(np.eye(3), alpha=1e-300),
        ValueError,
        r"alpha must be >= 1e-10",
    ),
    (
        "q alpha inf",
        lambda: stats.nemenyi_q(3, np.inf),
        ValueError,
        r"alpha must lie strictly between 0 and 1",
    ),
    # ---- plotting
    ("save_png dpi NaN", lambda: _save(dpi=np.nan), ValueError, r"dpi must be finite"),
    ("save_png dpi 0", lambda: _save(dpi=0), ValueError, r"dpi must be > 0"),
    ("save_png dpi -1", lambda: _save(dpi=-1), ValueError, r"dpi must be > 0"),
    ("save_png dpi True", lambda: _save(dpi=True), TypeError, r"dpi must be a real number"),
    ("save_png dpi str", lambda: _save(dpi="150"), TypeError, r"dpi must be a real number"),
    (
        "save_png transparent",
        lambda: _save(transparent="no"),
        TypeError,
        r"transparent must be True or False",
    ),
    (
        "save_png path int",
        lambda: _save(path=5),
        TypeError,
        r"path must be a str or os.PathLike, got 5",
    ),
    ("curves ylim inf", lambda: _plot(ylim=(0, np.inf)), ValueError, r"ylim\[1\] must be finite"),
    ("curves ylim NaN", lambda: _plot(ylim=(np.nan, 1)), ValueError, r"ylim\[0\] must be finite"),
    ("curves ylim one", lambda: _plot(ylim=(0,)), ValueError, r"ylim must be a pair"),
    ("curves ylim number", lambda: _plot(ylim=1), TypeError, r"ylim must be a pair"),
    ("curves title number", lambda: _plot(title=3), TypeError, r"title must be a str or None"),
    ("heat map fmt", lambda: _heat(fmt="%d"), ValueError, r"fmt='%d' is not a format for a number"),
    ("heat map fmt type", lambda: _heat(fmt=2), TypeError, r"fmt must be a format string"),
    (
        "heat map annotate",
        lambda: _heat(annotate="yes"),
        TypeError,
        r"annotate must be True, False or None",
    ),
    ("cd reverse", lambda: _cd(reverse=None), TypeError, r"reverse must be True or False"),
    ("cd show_ranks", lambda: _cd(show_ranks=1), TypeError, r"show_ranks must be True or False"),
    # ---- generators
    (
        "spherical n_instances True",
        lambda: moa_spherical(3, 2, True, 100, radius=0.1),
        TypeError,
        r"n_instances must be an integer",
    ),
    (
        "spherical n_features 2.0",
        lambda: moa_spherical(3, 2.0, 100, 100, radius=0.1),
        TypeError,
        r"n_features must be an integer",
    ),
    (
        "spherical n_classes -1",
        lambda: moa_spherical(-1, 2, 100, 100, radius=0.1),
        ValueError,
        r"n_classes must be >= 1",
    ),
    (
        "spherical shift_every NaN",
        lambda: moa_spherical(3, 2, 100, np.nan, radius=0.1),
        ValueError,
        r"shift_every must be finite",
    ),
    (
        "spherical shift_every -inf",
        lambda: moa_spherical(3, 2, 100, -np.inf, radius=0.1),
        ValueError,
        r"shift_every must be finite",
    ),
    (
        "spherical shift_every 0",
        lambda: moa_spherical(3, 2, 100, 0, radius=0.1),
        ValueError,
        r"shift_every must be > 0",
    ),
    (
        "spherical rotation speed infinite",
        lambda: moa_spherical(2, 2, 100, 5e-324, radius=0.1, rotate=True),
        ValueError,
        r"shift_every=5e-324 with orbit_radius=0.2 makes the rotation speed infinite",
    ),
    (
        "spherical radius inf",
        lambda: moa_spherical(3, 2, 100, 100, radius=np.inf),
        ValueError,
        r"radius must be finite",
    ),
    (
        "read n_labels 2**63",
        lambda: read_multilabel("hyperplane", 2**63, 10, 1.5, 100),
        ValueError,
        r"n_labels must be <= 1000",
    ),
    (
        "read z inf",
        lambda: read_multilabel("hyperplane", 5, 10, np.inf, 100),
        ValueError,
        r"z must be finite",
    ),
    (
        "read more sub-streams than instances",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 3, drift_fractions=[0.0] * 4),
        ValueError,
        r"drift_fractions has 4 entries \(sub-streams\) but n_instances=3",
    ),
    (
        "read no sub-stream",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, drift_fractions=()),
        ValueError,
        r"drift_fractions must have at least one entry",
    ),
    (
        "read drift_fractions str",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, drift_fractions="0.1"),
        TypeError,
        r"drift_fractions must be a sequence",
    ),
    (
        "read drift fraction NaN",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, drift_fractions=[0, np.nan]),
        ValueError,
        r"drift_fractions\[i\] must be finite",
    ),
    (
        "read n_map_samples 0",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, n_map_samples=0),
        ValueError,
        r"n_map_samples must be >= 1",
    ),
    (
        "read max_attempts 10**9",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, max_attempts=10**9),
        ValueError,
        r"max_attempts must be <= 100",
    ),
    (
        "tree n_classes 10**100",
        lambda: RandomTreeGenerator(n_classes=BIG, min_class_fraction=0.0),
        ValueError,
        r"n_classes must be <= 9223372036854775807",
    ),
    (
        "tree max_depth -1",
        lambda: RandomTreeGenerator(max_depth=-1),
        ValueError,
        r"max_depth must be >= 0",
    ),
    (
        "tree leaf_fraction NaN",
        lambda: RandomTreeGenerator(leaf_fraction=np.nan),
        ValueError,
        r"leaf_fraction must be finite",
    ),
    (
        "rbf n_classes 2**64",
        lambda: RandomRBFGenerator(n_classes=2**64),
        ValueError,
        r"n_classes must be <= 9223372036854775807",
    ),
    (
        "rbf n_centroids 10**7",
        lambda: RandomRBFGenerator(n_centroids=10**7),
        ValueError,
        r"n_centroids must be <= 1000000",
    ),
    (
        "sample n_samples -1",
        lambda: WaveformGenerator().sample(-1),
        ValueError,
        r"n_samples must be >= 0",
    ),
    (
        "sample n_samples 2.0",
        lambda: WaveformGenerator().sample(2.0),
        TypeError,
        r"n_samples must be an integer",
    ),
    (
        "sample_by_class batch_size 1.5",
        lambda: WaveformGenerator().sample_by_class(5, batch_size=1.5),
        TypeError,
        r"batch_size must be an integer",
    ),
    # ---- load and preprocessing
    (
        "load n_instances 10**100",
        lambda: load("MOA-Spher-5C-2A", n_instances=BIG),
        ValueError,
        r"n_instances=10+.* would need",
    ),
    (
        "load n_instances 2000.0",
        lambda: load("MOA-Spher-5C-2A", n_instances=2000.0),
        TypeError,
        r"n_instances must be an integer",
    ),
    (
        "load random_state -1",
        lambda: load("MOA-Spher-5C-2A", n_instances=2000, random_state=-1),
        ValueError,
        r"random_state must be >= 0, got -1",
    ),
    (
        "load random_state 1.5",
        lambda: load("MOA-Spher-5C-2A", n_instances=2000, random_state=1.5),
        TypeError,
        r"random_state must be an int",
    ),
    (
        "load keep_labels ints",
        lambda: load("Yeast", keep_labels=[1]),
        TypeError,
        r"keep_labels must hold label names \(str\), got 1",
    ),
    (
        "load keep_labels str",
        lambda: load("Yeast", keep_labels="Beach"),
        TypeError,
        r"keep_labels must be a sequence of label names",
    ),
    (
        "load min_label_freq NaN",
        lambda: load("Yeast", min_label_freq=np.nan),
        ValueError,
        r"min_label_freq must be finite",
    ),
    (
        "load min_label_freq 2",
        lambda: load("Yeast", min_label_freq=2),
        ValueError,
        r"min_label_freq must be <= 1.0",
    ),
    (
        "load data_home int",
        lambda: load("Yeast", data_home=3),
        TypeError,
        r"data_home must be a str, an os.PathLike or None, got 3",
    ),
    (
        "minmax span overflows",
        lambda: minmax_scale(np.array([[-1e308], [1e308]])),
        ValueError,
        r"train column 0 spans more than the largest float64",
    ),
    (
        "minmax float32 span overflows",
        lambda: minmax_scale(np.array([[-3e38], [3e38]], np.float32)),
        ValueError,
        r"train column 0 spans more than the largest float32",
    ),
    # ---- baselines
    (
        "ML-kNN smoothing 1e308",
        lambda: _mlknn(smoothing=1e308),
        ValueError,
        r"smoothing must be <= 1e\+100",
    ),
    (
        "ML-kNN smoothing 0",  # a label positive in every row divided 0 by 0: NaN, predicted 0
        lambda: _mlknn(smoothing=0.0),
        ValueError,
        r"smoothing must be > 0.0, got 0.0",
    ),
    ("ML-kNN k True", lambda: _mlknn(k=True), TypeError, r"k must be an integer"),
    ("ML-kNN k 2.0", lambda: _mlknn(k=2.0), TypeError, r"k must be an integer"),
    (
        "MINAS theta 2**63",
        lambda: MINASBR(theta=2**63).fit(X60, Y60),
        ValueError,
        r"theta must be <= 4611686018427387904",
    ),
    (
        "MINAS omega 10**100",
        lambda: MINASBR(omega=BIG).fit(X60, Y60),
        ValueError,
        r"omega must be <= 4611686018427387904",
    ),
    (
        "MINAS max_iter 10**6",
        lambda: MINASBR(max_iter=10**6).fit(X60, Y60),
        ValueError,
        r"max_iter must be <= 10000",
    ),
    (
        "MINAS k_ini NaN",
        lambda: MINASBR(k_ini=np.nan).fit(X60, Y60),
        ValueError,
        r"k_ini must be finite",
    ),
    (
        "PS p 2**63",
        lambda: _batch("PrunedSets", p=2**63),
        ValueError,
        r"p must be <= 9223372036854775807",
    ),
    (
        "EPS b 10**100",
        lambda: _batch("EnsembleOfPrunedSets", b=BIG),
        ValueError,
        r"b must be <= 9223372036854775807",
    ),
    (
        "HOMER max_iter 10**6",
        lambda: _batch("HOMER", max_iter=10**6),
        ValueError,
        r"max_iter must be <= 10000",
    ),
    (
        "RAkEL n_models 10**100",
        lambda: _batch("RAkEL", n_models=BIG),
        ValueError,
        r"n_models=10+ exceeds the 4 distinct 3-label subsets",
    ),
    (
        "ADWIN ps buffer -1",
        lambda: _adwin("ps", member_params={"buffer_size": -1}),
        ValueError,
        r"member_params\['buffer_size'\] must be >= 1, got -1",
    ),
    (
        "ADWIN ps max_sets str",
        lambda: _adwin("ps", member_params={"max_sets": "3"}),
        TypeError,
        r"member_params\['max_sets'\] must be an integer",
    ),
    (
        "J48 confidence NaN",
        lambda: _j48(confidence=np.nan),
        ValueError,
        r"confidence must be finite",
    ),
    (
        "J48 confidence 5",
        lambda: _j48(confidence=5),
        ValueError,
        r"confidence must be <= 1.0, got 5.0",
    ),
    (
        "J48 confidence 1",
        lambda: _j48(confidence=1.0),
        ValueError,
        r"confidence must be < 1, got 1.0",
    ),
    (
        "base learner seed 2**40",
        lambda: __import__("mlsom.baselines").baselines.make_base_learner("j48", seed=2**40),
        ValueError,
        r"seed must be <= 4294967295",
    ),
    (
        "base learner seed 1.5",
        lambda: __import__("mlsom.baselines").baselines.make_base_learner("svm", seed=1.5),
        TypeError,
        r"seed must be an integer",
    ),
    (
        "PS-HT buffer_size 0",
        lambda: _incremental("PSHoeffdingTree", buffer_size=0),
        ValueError,
        r"buffer_size must be >= 1",
    ),
]


def _save(path="unused.png", **kw):
    from matplotlib.figure import Figure

    from mlsom.plotting import save_png

    return save_png(Figure(figsize=(2, 2)), path, **kw)


def _plot(**kw):
    from mlsom.plotting import plot_curves

    return plot_curves({"a": [0.1, 0.2]}, **kw)


def _heat(**kw):
    from mlsom.plotting import plot_nemenyi_heatmap

    return plot_nemenyi_heatmap(_result(4, 3), **kw)


def _cd(**kw):
    from mlsom.plotting import plot_critical_difference

    return plot_critical_difference(_result(4, 3), **kw)


def _mlknn(**kw):
    from mlsom.baselines import MLkNN

    return MLkNN(**kw).fit(X60, Y60)


def _j48(**kw):
    from mlsom.baselines import J48Tree

    return J48Tree(**kw).fit(X60, Y60[:, 0])


def _batch(cls, **kw):
    import mlsom.baselines as baselines

    return getattr(baselines, cls)(**kw).fit(X60, Y60)


def _incremental(cls, **kw):
    import mlsom.baselines as baselines

    return getattr(baselines, cls)(**kw).fit(X60, Y60)


def _adwin(member, **kw):
    from mlsom.baselines import ADWINBaggingML

    return ADWINBaggingML(member, **kw).fit(X60, Y60)


@_named_cases("call, exc, match", EDGE_CASES)
def test_integer_and_float_edges_are_refused(call, exc, match, tmp_path, monkeypatch):
    _needs_extras()
    monkeypatch.chdir(tmp_path)  # nothing is written, but stay out of the working tree
    _refuses(call, exc, match)
    assert not list(tmp_path.iterdir())


def test_window_edges_are_exact_up_to_2_63():
    # the second and third cases take the path that avoids int64 overflow in w * n_test
    for n, W in [(2**62, 4), (2**63 - 1, 3), (2**63 - 1, 1000), (10**18 + 7, 2**20 + 1)]:
        w = np.arange(W + 1)
        assert ev.window_edges(n, W).tolist() == [(int(i) * n) // W for i in w]
        assert ev.window_edges(n, W).dtype == np.int64


def test_example_counts_are_exact_beyond_two_million_labels():
    L = 2_200_000  # (L + 1)**3 > 2**63: the code of the triple (L, L, L) overflowed int64
    Y = np.zeros((3, L), dtype=bool)
    P = np.zeros((3, L), dtype=bool)
    Y[0, :5] = P[0, :5] = True
    Y[1, -3:] = True
    P[1, -1] = P[1, 0] = True
    Y[2] = P[2] = True
    expected = np.array([[1, 3, 2, 1], [5, 5, 5, 1], [L, L, L, 1]])
    np.testing.assert_array_equal(ev.example_counts(Y, P), expected)
    assert ev.example_f1(Y, P) == pytest.approx((2 * 1 / 5 + 1 + 1) / 3)


def test_minmax_keeps_large_but_representable_spans():
    out = minmax_scale(np.array([[-1e307], [1e307]]))[0]
    np.testing.assert_array_equal(out, [[0.0], [1.0]])


def test_spherical_stream_with_a_speed_near_the_float_limit():
    # 0.1 / shift_every per step underflows against the distances: the kernels cannot move in
    # float64 (it used to overflow converting an infinite number of steps to an int)
    X, Y, info = moa_spherical(3, 2, 500, 1.7e308, seed=1, radius=0.1)
    centers = info["centers"]
    assert np.all(centers == centers[0])
    X2, Y2, _ = moa_spherical(3, 2, 500, None, seed=1, radius=0.1)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(Y, Y2)


NUMPY_INT_CASES = [
    ("window_edges", lambda c: ev.window_edges(c(60_000), c(50))),
    ("evaluate_predictions", lambda c: ev.evaluate_predictions(Y3, Y3, n_windows=c(3)).curve()),
    (
        "evaluate",
        lambda c: protocol.evaluate(
            _Batch(), (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=c(3), chunk_size=c(2), seed=c(4)
        ).to_dict()["label_counts"],
    ),
    ("critical_difference", lambda c: stats.critical_difference(c(4), c(14))),
    ("spherical", lambda c: moa_spherical(c(3), c(2), c(300), c(100), seed=c(1), radius=0.1)[0]),
    ("tree", lambda c: RandomTreeGenerator(max_depth=c(4), random_state=c(2)).threshold_),
    ("sample", lambda c: HyperplaneGenerator(random_state=c(1)).sample(c(20), c(3))[0]),
    (
        "MINAS",
        lambda c: (
            MINASBR(theta=c(20), omega=c(100), random_state=c(0)).fit(X60, Y60).predict_stream(X60)
        ),
    ),
    ("ML-kNN", lambda c: _mlknn(k=c(3)).predict(X60)),
]


@pytest.mark.parametrize(
    "call", [c[1] for c in NUMPY_INT_CASES], ids=[c[0] for c in NUMPY_INT_CASES]
)
@pytest.mark.parametrize("cast", [np.int64, np.int32, np.uint16], ids=["int64", "int32", "uint16"])
def test_numpy_integers_are_accepted_like_int(call, cast):
    _needs_extras()
    expected = call(int)
    got = call(cast)
    if isinstance(expected, float):
        assert got == expected
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_fraction_and_numpy_float_fractions_are_accepted():
    from mlsom.datasets import prefix_split

    X = np.arange(40.0).reshape(20, 2)
    Y = np.ones((20, 1))
    sizes = {len(prefix_split(X, Y, f).X_train) for f in (0.25, np.float32(0.25), Fraction(1, 4))}
    assert sizes == {5}


# ============================================================================ 4. hangs


class _SkewedBase:
    """A base stream whose class 1 occurs once: it used to make the generator loop forever."""

    n_features = 3

    def __init__(self):
        self.first = True

    def sample(self, n, random_state):
        y = np.zeros(n, dtype=np.int8)
        if self.first:
            y[0], self.first = 1, False
        return np.zeros((n, 3)), y


HANG_CASES = [
    (
        "sample_by_class batch_size 0",
        lambda: WaveformGenerator().sample_by_class(10, batch_size=0),
        ValueError,
        r"batch_size must be >= 1, got 0",
    ),
    (
        "read over a base whose class 1 occurs once",
        lambda: read_multilabel(_SkewedBase(), 3, 3, 1.5, 100, n_map_samples=1000),
        RuntimeError,
        r"produced only 1 instances of class 1 in \d+ draws, 100 were needed",
    ),
    (
        "read endless drift_fractions",
        lambda: read_multilabel(
            "hyperplane", 5, 10, 1.5, 100, drift_fractions=itertools.repeat(0.1)
        ),
        TypeError,
        r"drift_fractions must be a sequence of floats .* got repeat",
    ),
    (
        "read max_attempts",
        lambda: read_multilabel("hyperplane", 5, 10, 1.5, 100, max_attempts=10**12),
        ValueError,
        r"max_attempts must be <= 100",
    ),
    (
        "read n_labels (n L**2 sampler)",
        lambda: read_multilabel("hyperplane", 5000, 10, 1.5, 100),
        ValueError,
        r"n_labels must be <= 1000, got 5000",
    ),
    (
        "rbf centroids drawn one at a time",
        lambda: RandomRBFGenerator(n_features=1, n_centroids=10**9),
        ValueError,
        r"n_centroids must be <= 1000000",
    ),
    (
        "filter_labels endless label_names",
        lambda: filter_labels(Y3, itertools.count()),
        TypeError,
        r"label_names must be a sequence of names, got count",
    ),
    (
        "filter_labels endless keep",
        lambda: filter_labels(Y3, ["a", "b", "c"], keep=itertools.repeat("a")),
        TypeError,
        r"keep must be a sequence of label names, got repeat",
    ),
    (
        "Nemenyi p-values of 1001 methods",
        lambda: stats.nemenyi_pvalues(np.linspace(1, 1001, 1001), 5),
        ValueError,
        r"mean_ranks holds 1001 methods; the Nemenyi test takes at most 1000",
    ),
    (
        "Friedman-Nemenyi of 1001 methods",
        lambda: stats.friedman_nemenyi(np.random.default_rng(0).random((3, 1001))),
        ValueError,
        r"scores holds 1001 methods; the Nemenyi test takes at most 1000",
    ),
    (
        "heat map annotating 101 methods",
        lambda: __import__("mlsom.plotting").plotting.plot_nemenyi_heatmap(
            _result(101), annotate=True
        ),
        ValueError,
        r"annotate=True writes 10100 p-values for 101 methods; at most 100",
    ),
    (
        "plot of 1001 curves",
        lambda: __import__("mlsom.plotting").plotting.plot_curves(
            {f"m{i}": [0.5] for i in range(1001)}
        ),
        ValueError,
        r"curves must hold at most 1000 methods",
    ),
    (
        "MINAS max_iter",
        lambda: MINASBR(max_iter=10**12).fit(X60, Y60),
        ValueError,
        r"max_iter must be <= 10000",
    ),
    (
        "HOMER max_iter",
        lambda: _batch("HOMER", max_iter=10**12),
        ValueError,
        r"max_iter must be <= 10000",
    ),
]


@_named_cases("call, exc, match", HANG_CASES)
def test_values_that_would_hang_are_refused_at_once(call, exc, match):
    _needs_extras()
    with _deadline(20):
        _refuses(call, exc, match)


def test_deep_shallow_random_tree_is_applied_over_its_real_depth():
    # max_depth=10**9 with mostly leaves: the tree is shallow, and apply() used to loop 10**9
    # times anyway
    with _deadline(20):
        gen = RandomTreeGenerator(max_depth=10**9, leaf_fraction=0.9, random_state=0)
        X, y = gen.sample(100, random_state=1)
    assert X.shape == (100, 30) and set(np.unique(y)) <= {0, 1}


def test_a_random_tree_deeper_than_the_recursion_limit_is_built():
    # seed 2583 grows a 120-level tree of 1,385 nodes: the recursive build needed one Python
    # frame per level
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 60)
    try:
        gen = RandomTreeGenerator(
            max_depth=120,
            first_leaf_level=0,
            leaf_fraction=0.5,
            min_class_fraction=0.0,
            n_features=1,
            random_state=2583,
        )
    finally:
        sys.setrecursionlimit(limit)
    assert gen._depth == 120 and len(gen.value_) == 1385


def test_rakel_drawing_every_subset_terminates():
    _needs_extras()
    from mlsom.baselines import RAkEL

    Y = (np.random.default_rng(2).random((60, 6)) < 0.5).astype(np.uint8)
    with _deadline(20):
        model = RAkEL(n_models=20, random_state=0).fit(X60, Y)  # all C(6, 3) = 20 subsets
    assert len({tuple(s) for s in model.subsets_}) == 20


@pytest.mark.parametrize("text", ["²", "1" * 5000, "１２３４５", "\udcff"])
def test_a_malformed_cgroup_file_is_no_limit(tmp_path, monkeypatch, text):
    """Non-ASCII digits were read as a limit, and odd contents raised from every allocation
    check."""
    import builtins

    from mlsom import _memory

    path = tmp_path / "memory.max"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    real_open = builtins.open

    def fake_open(name, *args, **kwargs):
        if str(name).startswith("/sys/fs/cgroup/"):
            return real_open(path, *args, **kwargs)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    assert _memory._cgroup_limit() is None


# ---- text given for a path or a list, a fraction too small to select a row, a kinds= of the
# wrong type (each was accepted silently or refused with an unnamed error)
SMALL_VALUE_CASES = [
    (
        "load data_home empty",  # searched the current folder
        lambda: load("Yeast", data_home=""),
        ValueError,
        r"data_home must be a folder, got '' \(an empty or blank path; write '\.' for the current",
    ),
    (
        "load data_home blank",
        lambda: load("Yeast", data_home=" \t"),
        ValueError,
        r"data_home must be a folder, got ' \\t' \(an empty or blank path",
    ),
    (
        "run_experiment data_home empty",  # said "'' is not a folder"
        lambda: __import__("mlsom.experiment").experiment.run_experiment("quick", data_home=""),
        ValueError,
        r"data_home must be a folder, got '' \(an empty or blank path",
    ),
    (
        "filter_labels label_names str",  # read as the names 'a', 'b'
        lambda: filter_labels(np.eye(2), "ab"),
        TypeError,
        r"label_names must be a sequence of names, not a str \(read character by character\), "
        r"got 'ab'",
    ),
    (
        "filter_labels label_names bytes",  # read as the names 97, 98
        lambda: filter_labels(np.eye(2), b"ab"),
        TypeError,
        r"label_names must be a sequence of names, not a bytes .*, got b'ab'",
    ),
    (
        "filter_labels keep bytes",  # said "unknown label name(s) [97]"
        lambda: filter_labels(np.eye(2), ["a", "b"], keep=b"a"),
        TypeError,
        r"keep must be a sequence of label names, not a bytes .*, got b'a'",
    ),
    (
        "balanced_initial_split fraction 1e-300",  # an empty training set
        lambda: balanced_initial_split(np.eye(4), np.eye(4, 2), 1e-300),
        ValueError,
        r"fraction must be >= 1/\(2 \* N\) = 1/8 \(0\.125\) to select a training row of the "
        r"N = 4 rows, got 1e-300",
    ),
    (
        "balanced_initial_split fraction just below half a row",
        lambda: balanced_initial_split(np.eye(4), np.eye(4, 2), 0.1249),
        ValueError,
        r"fraction must be >= 1/\(2 \* N\) = 1/8 .*, got 0\.1249",
    ),
    (
        "evaluate_many kinds str",  # ValueError: dictionary update sequence element #0 ...
        lambda: protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, kinds="batch"
        ),
        TypeError,
        r"kinds must be a mapping of method name -> kind, or None, got 'batch' \(str\)",
    ),
    (
        "evaluate_many kinds int",  # TypeError: 'int' object is not iterable
        lambda: protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, kinds=3
        ),
        TypeError,
        r"kinds must be a mapping of method name -> kind, or None, got 3 \(int\)",
    ),
    (
        "evaluate_many kinds empty list",  # taken for no kinds
        lambda: protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, kinds=[]
        ),
        TypeError,
        r"kinds must be a mapping of method name -> kind, or None, got \[\] \(list\)",
    ),
    (
        "evaluate_many seeds list",  # the same code as kinds
        lambda: protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, seeds=[0]
        ),
        TypeError,
        r"seeds must be a mapping of method name -> seed, or None, got \[0\] \(list\)",
    ),
]


@_named_cases("call, exc, match", SMALL_VALUE_CASES)
def test_small_hostile_values_are_refused_by_name(call, exc, match, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing is written, but stay out of the working tree
    monkeypatch.delenv("MLSOM_DATA", raising=False)
    _refuses(call, exc, match)
    assert not list(tmp_path.iterdir())


def test_the_smallest_fraction_that_selects_a_row_is_accepted():
    """Half a row rounds up (floor(fraction * N + 1/2)): 1/8 of 4 rows selects one."""
    from mlsom.datasets import balanced_initial_set

    split = balanced_initial_split(np.eye(4), np.eye(4, 2), 0.125)
    assert split.train_indices.tolist() == [0] and split.info["n_train"] == 1
    # the selection alone still returns an empty set (its documented size rule)
    assert balanced_initial_set(np.eye(4, 2), 1e-300)[0].size == 0


def test_kinds_and_seeds_mappings_are_still_accepted():
    res = protocol.evaluate_many(
        {"a": _Batch()},
        (Y3, Y3),
        X_train=Y3,
        Y_train=Y3,
        n_windows=1,
        kinds={"a": "batch"},
        seeds={"a": 3},
    )
    assert res["a"].n_test == 3
    for empty in (None, {}):
        res = protocol.evaluate_many(
            {"a": _Batch()}, (Y3, Y3), X_train=Y3, Y_train=Y3, n_windows=1, kinds=empty
        )
        assert res["a"].n_test == 3
