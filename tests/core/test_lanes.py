"""predict's 16-rows-at-a-time path (AVX2 and AVX-512): the same results as the row-by-row path.

Where the 16-row kernels are selected (the AVX2 path with FMA, the AVX-512F path), frozen
``predict`` screens 64 rows at a time and ranks the classes of 16 rows together (one vector lane
per row). It must give exactly what the row-by-row path and the exact path (screening off) give,
on every kind of data, and its kernels must compute what their NumPy definitions say. Every test
here runs on each path of this processor that has the kernels (the fixture ``lanes_path``);
where none has them, the tests that need them skip, and the others check that predict still
agrees with the exact path.
"""

import warnings

import numpy as np
import pytest

import mlsom
from mlsom import _core, _testing
from tests.helpers.streams import KINDS, stream_of_kind

LANES_PATHS = [_testing.SIMD_NAMES[level] for level in _testing.lanes_levels()]

needs_lanes = pytest.mark.skipif(
    not LANES_PATHS, reason="no SIMD path of this processor has the 16-row kernels"
)


@pytest.fixture(autouse=True, params=LANES_PATHS or ["best"])
def lanes_path(request):
    """Each test on each path with the 16-row kernels (on the best path where none has them)."""
    with _testing.switches(simd=request.param):
        yield request.param


@pytest.fixture
def lanes_off():
    with _testing.switches(lanes=False):
        yield


def _fit(X, Y, grid, seed, **kw):
    model = mlsom.SOMStreamClassifier(grid_size=grid, random_state=seed, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, Y)


def _three_ways(model, X):
    """predict on the 16-row path, on the row-by-row path and with every distance exact."""
    with _testing.switches(lanes=True):
        lanes = model.predict(X)
    with _testing.switches(lanes=False):
        rows = model.predict(X)
    with _testing.switches(lanes=True, screening=False):
        exact = model.predict(X)
    return lanes, rows, exact


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
def test_lanes_predict_is_the_row_by_row_predict(kind, dtype):
    if dtype == np.float32 and kind in ("huge", "tiny"):
        pytest.skip("beyond the float32 range (tested in test_screening)")
    for seed, (grid, n, L) in enumerate([(4, 300, 3), (2, 137, 5), (6, 700, 4), (1, 50, 2)]):
        X, Y = stream_of_kind(kind, 400 + n, 7, L, seed)
        X = X.astype(dtype)
        model = _fit(X[:400], Y[:400], grid, seed)
        lanes, rows, exact = _three_ways(model, X[400:])
        np.testing.assert_array_equal(lanes, rows)
        np.testing.assert_array_equal(lanes, exact)


@pytest.mark.parametrize(
    "options",
    [
        {"averout_distance": "sqeuclidean"},
        {"zero_cooccurrence": "skip"},
        {"neighborhood": "gaussian", "min_neuron_size": 1},
    ],
)
def test_lanes_predict_with_the_options(options):
    X, Y = stream_of_kind("integers", 1500, 9, 6, 11)
    model = _fit(X[:600], Y[:600], 4, 3, **options)
    lanes, rows, exact = _three_ways(model, X[600:])
    np.testing.assert_array_equal(lanes, rows)
    np.testing.assert_array_equal(lanes, exact)


def test_lanes_predict_with_many_labels_and_threads():
    """More labels than lanes, rows not a multiple of 16 or 64, two threads."""
    X, Y = stream_of_kind("normal", 2600, 12, 21, 4)
    model = _fit(X[:1300], Y[:1300], 3, 5)
    lanes, rows, exact = _three_ways(model, X[1300:])
    np.testing.assert_array_equal(lanes, rows)
    np.testing.assert_array_equal(lanes, exact)
    model.set_params(n_jobs=2)
    np.testing.assert_array_equal(model.predict(X[1300:]), lanes)
    for lo, hi in [(0, 1), (5, 21), (60, 133), (1299, 1300)]:
        np.testing.assert_array_equal(model.predict(X[1300 + lo : 1300 + hi]), lanes[lo:hi])


@needs_lanes
def test_lanes_paths_are_exercised():
    """The data above reach every path of the 16-row code: rows it classifies, rows it leaves to
    the row-by-row path (huge values), rounds settled from exact distances from the window's
    values and from a pass over the row, rounds in which the whole pool votes (tiny maps);
    otherwise the identity tests would prove nothing about them."""
    _testing.counters(reset=True)
    for kind, grid, L, dtype in [
        ("integers", 4, 3, np.float32),
        ("duplicates", 4, 3, np.float64),
        ("blobs", 6, 4, np.float32),
        ("huge", 4, 3, np.float64),
        ("dense", 1, 3, np.float64),
    ]:
        X, Y = stream_of_kind("normal" if kind == "dense" else kind, 1000, 7, L, 0)
        if kind == "dense":  # every label on every instance: the last round's pool is one map
            Y[:] = 1
        model = _fit(X[:400].astype(dtype), Y[:400], grid, 0)
        model.predict(X[400:].astype(dtype))
    c = _testing.counters(reset=True)
    counts = [c.lanes_rows, c.lanes_fallback, c.lanes_exact, c.lanes_scan, c.lanes_small]
    assert all(v > 0 for v in counts), c


@needs_lanes
def test_small_calls_go_row_by_row():
    """Screening a padded chunk of 64 rows costs more than classifying a few rows one by one: the
    rows of a last chunk of fewer than 32 rows (all of a small call, as in production scoring
    of one row) go row by row, with the same results."""
    X, Y = stream_of_kind("normal", 450, 7, 3, 2)
    model = _fit(X[:200], Y[:200], 4, 2, n_jobs=1)
    whole = model.predict(X[200:])
    for n, on_lanes in [
        (1, 0),
        (31, 0),
        (32, 32),
        (64, 64),
        (95, 64),
        (96, 96),
        (200, 192),
        (230, 230),
    ]:
        _testing.counters(reset=True)
        np.testing.assert_array_equal(model.predict(X[200 : 200 + n]), whole[:n])
        c = _testing.counters(reset=True)
        assert (c.lanes_rows, c.lanes_fallback) == (on_lanes, 0), n


@needs_lanes
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [1, 15, 16, 17, 64, 65, 150])
@pytest.mark.parametrize("A", [1, 7, 16, 17, 40])
def test_lanes_screening_is_the_64_row_kernel(n, A, dtype, lanes_path):
    """The 16-row path centres rows with its own code and screens them with per-map minima: the
    values must be bit-identical to the four-row tile of the same path (on its rows) and to
    training's 64-row kernel (AVX-512 and AVX2), |x'|^2 must be the
    row-by-row centring's float32 sums in its order, and the per-map minima, first indices,
    second minima and row maxima those of the values (NumPy), with an empty map and a neuron
    repeated so that a minimum is shared."""
    rng = np.random.default_rng(n * 100 + A)
    sizes = [3, 0, 5, 1, 9]
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    M = offsets[-1]
    X = (rng.normal(size=(n, A)) * 3 + 1).astype(dtype)
    W = rng.normal(size=(M, A)) * 2
    W[offsets[4] + 2] = W[offsets[4]]  # an exact tie within a map
    Wt = np.ascontiguousarray(W.T, dtype=dtype)
    c = X.mean(axis=0).astype(np.float64)
    G, xx, m1, i1, m2, hi = _core.lanes_screen_values(X, Wt, offsets, c)
    # the four-row tile of the same path (the rows of its full blocks of four; a last one to
    # three rows go through the one-row kernel) and, where selected, training's 64-row kernel,
    # centred on the same point (screen_values centres on the mean)
    n4 = n - n % 4
    np.testing.assert_array_equal(G[:n4], _core.screen_values(X, Wt, False)[0][:n4])
    if lanes_path != "best":
        np.testing.assert_array_equal(G, _core.screen_values(X, Wt, True)[0])
    # |x'|^2: float32 partial sums of feature i mod 8 over the first 8 floor(A / 8) features,
    # the rest into the first, the eight added in turn
    x2 = (X.astype(np.float64) - c).astype(np.float32)
    part = np.zeros((8, n), dtype=np.float32)
    a8 = A - A % 8
    for i in range(A):
        k = i % 8 if i < a8 else 0
        part[k] = part[k] + x2[:, i] * x2[:, i]
    want = part[0]
    for k in range(1, 8):
        want = want + part[k]
    np.testing.assert_array_equal(xx, want.astype(np.float64))
    for cc in range(len(sizes)):
        lo, up = offsets[cc], offsets[cc + 1]
        if up == lo:
            assert np.all(np.isinf(m1[:, cc])) and np.all(np.isinf(m2[:, cc]))
            continue
        block = G[:, lo:up]
        np.testing.assert_array_equal(m1[:, cc], block.min(axis=1))
        np.testing.assert_array_equal(i1[:, cc], lo + block.argmin(axis=1))
        second = np.sort(block, axis=1)[:, 1] if up - lo > 1 else np.full(n, np.inf)
        np.testing.assert_array_equal(m2[:, cc], second.astype(np.float32))
    np.testing.assert_array_equal(hi, G.max(axis=1))


def _rank_reference(g, offsets, pool, k):
    """NumPy: per row r with more than k values in its pool, the k-th and (k+1)-th smallest pool
    values and the count below the (k+1)-th per map."""
    L, M = len(offsets) - 1, g.shape[0]
    owner = np.repeat(np.arange(L), np.diff(offsets))
    out = {}
    for r in range(16):
        inpool = np.array([(pool[owner[j]] >> r) & 1 for j in range(M)], dtype=bool)
        v = np.sort(g[inpool, r])
        if len(v) <= k:
            continue
        vk, vk1 = v[k - 1], v[k]
        votes = np.array(
            [
                int(np.sum(g[offsets[c] : offsets[c + 1], r] < vk1)) if (pool[c] >> r) & 1 else 0
                for c in range(L)
            ]
        )
        out[r] = (vk, vk1, votes, inpool)
    return out


@needs_lanes
@pytest.mark.parametrize("values", ["normal", "integers", "spread"])
@pytest.mark.parametrize("k", [1, 2, 7, 30])
def test_lanes_rank_kernels_agree_with_numpy(values, k):
    """One round of the 16-row kernels (bracket search, window, winner) against NumPy: each
    row's bracket holds its k-th smallest pool value with at most 8 values inside, the k-th and
    (k+1)-th smallest values, the votes below the latter per map, and the winner (the most votes;
    a tie to the smaller map minimum by more than the gap, else flagged as in doubt). A row is
    left out (failed) only when more than 8 values equal its k-th smallest."""
    rng = np.random.default_rng(k * 7 + len(values))
    sizes = [11, 30, 4, 0, 25, 17, 9]
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    M, L = offsets[-1], len(sizes)
    for trial in range(20):
        if values == "normal":
            g = rng.normal(size=(M, 16)) * 10 + 50
        elif values == "integers":  # many equal values
            g = rng.integers(0, 12, size=(M, 16)).astype(np.float64)
        else:  # a few close values, most far away
            g = rng.exponential(size=(M, 16)) ** 3
        g = np.ascontiguousarray(g, dtype=np.float32)
        pool = rng.integers(0, 1 << 16, size=L).astype(np.uint16)
        pool[rng.integers(0, L)] = 0xFFFF
        gapf = np.full(16, 0.5 if trial % 2 else 0.0, dtype=np.float32)
        failed, fa, ca, fb, cb, vk, vk1, votes, winner, doubt = _core.lanes_rank_values(
            g, offsets, pool, k, gapf
        )
        ref = _rank_reference(g, offsets, pool, k)
        m1 = np.array(
            [
                g[offsets[c] : offsets[c + 1]].min(axis=0) if sizes[c] else np.full(16, np.inf)
                for c in range(L)
            ]
        )
        for r in range(16):
            if r not in ref:
                assert winner[r] == -1
                continue
            rvk, rvk1, rvotes, inpool = ref[r]
            if failed[r]:
                assert np.sum(g[inpool, r] == rvk) > 8, (trial, r)
                continue
            vals = g[inpool, r]
            assert np.sum(vals < fa[r]) == ca[r] < k <= cb[r] == np.sum(vals < fb[r])
            assert cb[r] - ca[r] <= 8
            assert vk[r] == rvk and vk1[r] == rvk1, (trial, r)
            np.testing.assert_array_equal(votes[:, r], rvotes)
            if vk[r] == vk1[r]:
                # equal values at the boundary: fewer than k below vk1 (predict settles such a
                # round from exact distances before any winner is taken)
                assert votes[:, r].sum() < k
                continue
            assert votes[:, r].sum() == k
            top = np.flatnonzero(votes[:, r] == votes[:, r].max())
            if doubt[r]:
                d = np.abs(m1[top, r][:, None] - m1[top, r][None, :])
                assert len(top) > 1 and np.any(d[np.triu_indices(len(top), 1)] <= gapf[r])
                continue
            assert winner[r] in top
            others = top[top != winner[r]]
            assert np.all(m1[others, r] - m1[winner[r], r] > gapf[r])


def test_lanes_availability_is_reported(lanes_path):
    """Where the 16-row kernels are not selected (the baseline path), predict classifies row by
    row; the path is reported unavailable and its test hooks refuse to run. On this processor
    the paths with the kernels are exactly its AVX2 (with FMA) and AVX-512F ones."""
    with _testing.switches(simd="baseline"):
        assert not _testing.lanes_available()
        with pytest.raises(ValueError, match="AVX2 .* or AVX-512F"):
            _core.lanes_screen_values(
                np.zeros((1, 2)), np.zeros((2, 1)), np.array([0, 1]), np.zeros(2)
            )
        with pytest.raises(ValueError, match="AVX2 .* or AVX-512F"):
            _core.lanes_rank_values(
                np.zeros((1, 16), np.float32),
                np.array([0, 1]),
                np.ones(1, np.uint16),
                1,
                np.zeros(16, np.float32),
            )
    assert set(LANES_PATHS) <= {"avx2", "avx512f"}
    if "avx512f" in [_testing.SIMD_NAMES[lv] for lv in _testing.simd_levels()]:
        # an AVX-512F processor has AVX2 and FMA too
        assert LANES_PATHS == ["avx2", "avx512f"]
    assert _testing.lanes_available() == (_core.simd_info()[0] in LANES_PATHS)
