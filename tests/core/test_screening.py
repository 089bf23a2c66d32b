"""Distance screening, BLAS products and float32: they must never change a result.

The compiled core screens distances with |x|^2 + |w|^2 - 2 x.w (its own kernel, or BLAS matrix
products for training and for large ``predict`` calls) and computes exact distances only where the
screening bound leaves the order in doubt. Switching screening off computes every distance
exactly; both must give bit-identical models and predictions, also on data built to produce ties
and near-ties. float32 models are checked against float64 ones within float32 tolerance.
"""

import copy
import warnings

import numpy as np
import pytest

import mlsom
from mlsom import _core, _testing
from tests.helpers.streams import KINDS, stream_of_kind


@pytest.fixture
def no_screening():
    with _testing.switches(screening=False):
        yield


def _state(model):
    st = model._state
    return {k: np.array(st[k]) for k in ("Wt", "counts", "log_averout", "T", "NS")}


def _run(kind, dtype, seed, grid=4, gaussian=False):
    X, Y = stream_of_kind(kind, 600, 7, 3, seed)
    X = X.astype(dtype)
    model = mlsom.SOMStreamClassifier(
        grid_size=grid,
        random_state=seed,
        neighborhood="gaussian" if gaussian else "bubble",
        n_epochs=20,
        max_epochs=60,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short max_epochs may not settle: irrelevant here
        model.fit(X[:300], Y[:300])
    frozen = model.predict(X[300:])
    stream = model.predict_stream(X[300:])
    return model, frozen, stream


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("gaussian", [False, True])
def test_screening_changes_nothing(kind, dtype, gaussian):
    if dtype == np.float32 and kind == "huge":
        pytest.skip("beyond the float32 limit (tested elsewhere)")
    if dtype == np.float32 and kind == "tiny":
        pytest.skip("float32 has no such values")
    for seed in range(3):
        m1, f1, s1 = _run(kind, dtype, seed, gaussian=gaussian)
        with _testing.switches(screening=False):
            m2, f2, s2 = _run(kind, dtype, seed, gaussian=gaussian)
        assert m1.n_iter_ == m2.n_iter_
        np.testing.assert_array_equal(f1, f2)
        np.testing.assert_array_equal(s1, s2)
        for key, a in _state(m1).items():
            np.testing.assert_array_equal(a, _state(m2)[key], err_msg=key)


@pytest.mark.parametrize(
    "kind, dtype, expected",
    [
        ("duplicates", np.float64, ("bmu", "knn")),
        ("integers", np.float32, ("bmu", "knn")),
        ("blobs", np.float32, ("bmu", "knn", "bayes")),
        ("blobs", np.float64, ("bmu", "knn", "bayes")),
        ("tiny", np.float64, ("bmu", "knn", "wide", "tie")),
        ("huge", np.float64, ("bmu", "knn", "tie", "bayes")),
    ],
)
def test_the_doubtful_paths_are_exercised(kind, dtype, expected):
    """The data of the identity test reach every path that settles a doubt with exact distances
    (best-matching units, the k nearest, a k-nearest boundary among many equal screening values,
    tied votes, the Bayes test); otherwise that test would prove nothing about them."""
    _testing.counters(reset=True)
    _run(kind, dtype, 0)
    counts = _testing.counters()._asdict()
    assert all(counts[k] > 0 for k in expected), counts


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predict_does_not_depend_on_blocks_or_threads(dtype):
    """predict screens rows in blocks, four rows per kernel pass, over threads: a row's result
    must not depend on its neighbours in the block or on the thread count."""
    X, Y = stream_of_kind("integers", 3000, 9, 4, 1)
    X = X.astype(dtype)
    model = mlsom.SOMStreamClassifier(grid_size=5, random_state=1).fit(X[:1000], Y[:1000])
    whole = model.predict(X[1000:])
    model.set_params(n_jobs=2)
    np.testing.assert_array_equal(model.predict(X[1000:]), whole)
    for lo, hi in [(0, 1), (3, 10), (5, 70), (61, 200), (1999, 2000)]:
        np.testing.assert_array_equal(model.predict(X[1000 + lo : 1000 + hi]), whole[lo:hi])
    # and each row gets what predict_stream gives it as the next instance
    for i in range(0, 2000, 97):
        m = copy.deepcopy(model)
        np.testing.assert_array_equal(m.predict_stream(X[1000 + i : 1001 + i])[0], whole[i])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_simd_paths_identical_with_screening(dtype):
    X, Y = stream_of_kind("normal", 2000, 13, 3, 5)
    X = X.astype(dtype)
    out = []
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            m = mlsom.SOMStreamClassifier(grid_size=5, random_state=2).fit(X[:800], Y[:800])
            out.append((m.predict(X[800:]), m.predict_stream(X[800:]), _state(m)))
    for f, s, st in out[1:]:
        np.testing.assert_array_equal(f, out[0][0])
        np.testing.assert_array_equal(s, out[0][1])
        for key in st:
            np.testing.assert_array_equal(st[key], out[0][2][key])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
# the AVX2 tile takes neurons 24, then 8 at a time, then the last 1 to 7 in a masked block; the
# smallest-two scan 8 lanes at a time from 16 neurons on, the last ones in a masked block
@pytest.mark.parametrize("M", [1, 3, 4, 8, 15, 16, 25, 33, 47, 100])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 200])
def test_training_screening_kernels_agree(n, M, dtype):
    """Training screens rows with the 64-row kernel on the AVX-512 path and with the four-row
    tile elsewhere, on every SIMD path this processor has: the values must be close to the exact
    distances, and each row's smallest value, its first index and the smallest of the others
    must be those of the values (NumPy), with neurons repeated so that minima are shared. On one
    path, the 64-row kernel's values are bit-identical to the tile's (where it adds in the same
    order)."""
    rng = np.random.default_rng(n * 1000 + M)
    A = 11
    X = rng.normal(size=(n, A)).astype(dtype)
    W = rng.normal(size=(M, A))
    if M > 2:
        W[M // 2] = W[0]  # an exact tie: first index, and m2 == m1
    if M > 20:
        W[M - 1] = W[9]  # another, between two lanes of 8 and in the part taken one by one
    Wt = np.ascontiguousarray(W.T, dtype=dtype)
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            _check_training_screening(X, W, Wt)


def _min2_reference(g):
    """The smallest value (NaN ignored), its first index, the smallest of the others: NumPy."""
    ok = ~np.isnan(g)
    if not (g[ok] < np.inf).any():
        return 0, np.float32(np.inf), np.float32(np.inf)
    m1 = g[ok].min()
    idx = int(np.flatnonzero(g == m1)[0])
    rest = np.delete(g, idx)
    rest = rest[~np.isnan(rest)]
    return idx, m1, rest.min() if rest.size else np.float32(np.inf)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 15, 16, 17, 24, 31, 100, 527])
def test_smallest_two_scan_on_every_path(n):
    rng = np.random.default_rng(n)
    cases = [rng.normal(size=n).astype(np.float32)]
    if n:
        few = rng.integers(0, 3, n).astype(np.float32)  # ties everywhere, across lanes too
        tail = np.full(n, 5, np.float32)
        tail[-1] = 1  # the smallest last, in a vector scan's partial block
        cases += [few, tail, np.full(n, np.inf, np.float32), np.full(n, np.nan, np.float32)]
        odd = rng.normal(size=n).astype(np.float32)
        odd[rng.random(n) < 0.3] = np.nan
        odd[rng.random(n) < 0.2] = np.inf
        odd[rng.random(n) < 0.1] = -np.inf
        cases.append(odd)
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            for g in cases:
                idx, m1, m2 = _core.min2_values(g)
                ridx, rm1, rm2 = _min2_reference(g)
                assert (idx, m1, m2) == (ridx, rm1, rm2), (level, g)


def _check_training_screening(X, W, Wt):
    n, M = X.shape[0], W.shape[0]
    results = [_core.screen_values(X, Wt, False)]
    # training's 64-row kernel exists on the paths with predict's 16-row kernels (AVX-512, and
    # AVX2 with FMA): every such path must run it here
    if _core._lanes_kernels():
        results.append(_core.screen_values(X, Wt, True))
    else:
        with pytest.raises(ValueError, match="blocked"):
            _core.screen_values(X, Wt, True)
    exact = ((X.astype(np.float64)[:, None, :] - W[None]) ** 2).sum(-1)
    # the tile takes each block's rows four at a time (any left over go one by one, adding in
    # another order): the kernels' values are bit-identical on the rows of whole groups of four
    start = np.arange(n) // 64 * 64
    in_fours = np.arange(n) - start < np.minimum(n - start, 64) // 4 * 4
    assert in_fours.any() == (n >= 4)
    for G, idx, m1, m2 in results:
        np.testing.assert_array_equal(G[in_fours], results[0][0][in_fours])
        np.testing.assert_allclose(G, exact, rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(idx, G.argmin(axis=1))
        np.testing.assert_array_equal(m1, G.min(axis=1))
        second = np.sort(G, axis=1)[:, 1] if M > 1 else np.full(n, np.inf, np.float32)
        np.testing.assert_array_equal(m2, second)


def test_float32_model_keeps_float32_and_agrees_with_float64():
    X, Y = stream_of_kind("normal", 6000, 20, 4, 3)
    m64 = mlsom.SOMStreamClassifier(grid_size=6, random_state=0).fit(X[:2000], Y[:2000])
    m32 = mlsom.SOMStreamClassifier(grid_size=6, random_state=0).fit(
        X[:2000].astype(np.float32), Y[:2000]
    )
    assert all(w.dtype == np.float32 for w in m32.weights_)
    assert all(w.dtype == np.float64 for w in m64.weights_)
    assert m32.n_iter_ == m64.n_iter_
    for w32, w64 in zip(m32.weights_, m64.weights_, strict=True):
        np.testing.assert_allclose(w32, w64, rtol=1e-4, atol=1e-4)
    # float64 input to a float32 model is converted, and gives the float32 input's result
    np.testing.assert_array_equal(m32.predict(X[2000:]), m32.predict(X[2000:].astype(np.float32)))
    f32 = m32.predict(X[2000:])
    f64 = m64.predict(X[2000:])
    assert (f32 == f64).all(axis=1).mean() > 0.995
    s32 = m32.predict_stream(X[2000:].astype(np.float32))
    s64 = m64.predict_stream(X[2000:])
    assert (s32 == s64).all(axis=1).mean() > 0.99
    np.testing.assert_allclose(m32.P_, m64.P_, atol=1e-3)


def test_float32_model_file_round_trip(tmp_path):
    X, Y = stream_of_kind("normal", 1500, 6, 3, 4)
    X = X.astype(np.float32)
    m = mlsom.SOMStreamClassifier(grid_size=4, random_state=0).fit(X[:500], Y[:500])
    m.predict_stream(X[500:1000])
    m.save(tmp_path / "m.npz")
    back = mlsom.SOMStreamClassifier.load(tmp_path / "m.npz")
    assert back.weights_[0].dtype == np.float32
    np.testing.assert_array_equal(back.predict_stream(X[1000:]), m.predict_stream(X[1000:]))


def test_float32_limit_is_named():
    X, Y = stream_of_kind("normal", 200, 4, 2, 0)
    m = mlsom.SOMStreamClassifier(grid_size=3, random_state=0).fit(X.astype(np.float32), Y)
    bad = X[:5].copy()
    bad[2, 1] = 1e20
    with pytest.raises(ValueError, match=r"X has a value too large .* float32 .*row 2, column 1"):
        m.predict(bad)
    with pytest.raises(ValueError, match="too large"):
        mlsom.SOMStreamClassifier(grid_size=3).fit(bad.astype(np.float32), Y[:5])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("A", [1, 3, 7, 8, 9, 13, 64, 100, 127, 128])
def test_exact_distances_are_numpys_sums(dtype, A):
    """The exact distance sums the squares in eight interleaved partial sums added pairwise, then
    the remaining features: the order NumPy's pairwise summation uses for up to 128 values. The
    best-matching unit's distance must equal NumPy's ((x - w)**2).sum() bit for bit, and the unit
    must be NumPy's argmin (first index on ties)."""
    rng = np.random.default_rng(A)
    X = (rng.normal(size=(400, A)) * rng.uniform(0.1, 100.0, size=A)).astype(dtype)
    W = rng.normal(size=(20, A)).astype(dtype)
    W[7] = W[3]  # a duplicated neuron: the lower index must win
    bmu = np.empty(400, dtype=np.int64)
    d2 = np.empty(400, dtype=np.float64)
    _core.assign(X, np.ascontiguousarray(W.T), bmu, d2, 1)
    D = np.array([[((x - w) ** 2).sum() for w in W] for x in X])
    np.testing.assert_array_equal(bmu, D.argmin(axis=1))
    np.testing.assert_array_equal(d2, D[np.arange(400), bmu].astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cached_copies_follow_the_stream(dtype):
    """predict keeps copies of the neurons (the screening copy, one neuron per row) with the
    model; after predict_stream has moved neurons, predict must give what every distance
    computed exactly gives, and what a model rebuilt from the same state gives; pickles must not
    carry the copies."""
    import pickle

    X, Y = stream_of_kind("integers", 2400, 9, 4, 3)
    X = X.astype(dtype)
    model = mlsom.SOMStreamClassifier(grid_size=5, random_state=3).fit(X[:800], Y[:800])
    model.predict(X[800:1600])  # makes the copies
    model.predict_stream(X[800:1600])  # moves neurons
    got = model.predict(X[1600:])
    with _testing.switches(screening=False):
        exact = model.predict(X[1600:])
    np.testing.assert_array_equal(got, exact)
    rebuilt = pickle.loads(pickle.dumps(model))
    assert not {"screen", "rows"} & set(rebuilt._state)
    np.testing.assert_array_equal(got, rebuilt.predict(X[1600:]))


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 64, 527, 1023, 1024, 1025, 2100])
def test_search_kernels_agree_with_numpy_on_every_path(n):
    """The ranking's counting, window-gathering and min/max kernels (one per SIMD path, the last
    block of a vector path masked, the gather in slices of 1024) against NumPy, on values with
    ties, +inf (the classes already ranked) and windows that are empty, narrow or everything."""
    rng = np.random.default_rng(n)
    d = rng.normal(size=n).astype(np.float32)
    d[rng.random(n) < 0.2] = np.inf
    if n > 4:
        d[1::5] = d[0]  # ties
    finite = d[np.isfinite(d)]
    lo = float(finite.min()) if finite.size else 0.0
    cases = [
        (lo, np.inf),
        (-np.inf, np.inf),
        (0.0, 0.0),
        (float(d[0]), float(np.nextafter(d[0], np.float32(np.inf)))),
    ]
    if finite.size > 2:
        q = np.quantile(finite, [0.1, 0.13, 0.5])
        cases += [(float(q[0]), float(q[1])), (float(q[1]), float(q[2]))]
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            for a, b in cases:
                a, b = np.float32(a), np.float32(b)
                c1, c2, c3, idx, hi, lo_ = _core.search_values(d, a, b)
                assert c1 == c3 == int((d < a).sum()), (level, a, b)
                assert c2 == int((d < b).sum()), (level, a, b)
                np.testing.assert_array_equal(idx, np.flatnonzero((d >= a) & (d < b)))
                assert hi == d.max() and lo_ == d.min(), level


def test_count_maps_kernel_agrees_with_numpy_on_every_path():
    """The per-map counts of the ranking (one pass over the maps in the pool; on the AVX-512
    path each map's last partial block masked) against NumPy on every path, with maps of 0 to
    75 neurons, skipped maps, ties at the thresholds and +inf; with thresholds on both sides of
    0.0, the value a masked load gives the lanes past a map's end."""
    rng = np.random.default_rng(7)
    sizes = np.array([0, 1, 7, 8, 9, 15, 16, 17, 75, 3])
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    d = rng.normal(size=int(offsets[-1])).astype(np.float32)
    d[::6] = np.inf
    d[1::7] = np.float32(-0.3)  # values equal to a threshold are not below it
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            for t1, t2 in ((-0.3, 0.4), (0.2, 0.9)):  # 0.0 below both, or not
                for skip in (np.zeros(len(sizes)), np.arange(len(sizes)) % 3 == 1):
                    skip = skip.astype(np.uint8)
                    c1, c2 = _core.count_maps_values(
                        d, offsets, skip, np.float32(t1), np.float32(t2)
                    )
                    for c in range(len(sizes)):
                        part = d[offsets[c] : offsets[c + 1]]
                        want1 = 0 if skip[c] else int((part < np.float32(t1)).sum())
                        want2 = 0 if skip[c] else int((part < np.float32(t2)).sum())
                        assert (c1[c], c2[c]) == (want1, want2), (level, t1, c, skip[c])
