"""The compiled core's test-only switches and counters: one interface (mlsom._testing), which
restores what it changes, refuses what it cannot do and is never used by the package itself."""

import ast
from pathlib import Path

import numpy as np
import pytest

import mlsom
from mlsom import _core, _testing


def test_the_package_never_touches_the_switches():
    """Production code imports neither mlsom._testing nor the core's _switches/_counters."""
    root = Path(mlsom.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "_testing.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "_core":
                names = [node.attr]
            if {"_testing", "mlsom._testing", "_switches", "_counters", "_lanes_kernels"} & set(
                names
            ):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not offenders, offenders


def test_switches_are_restored_even_after_an_error():
    before = _core._switches()
    with pytest.raises(RuntimeError, match="inside"):
        with _testing.switches(screening=False, lanes=False, simd="baseline"):
            assert _core._switches()[:3] == (False, False, 0)
            assert _core.simd_info()[0].startswith("baseline")
            raise RuntimeError("inside")
    assert _core._switches() == before
    with _testing.switches(simd="best"):
        assert _core._switches()[2] == _testing.simd_levels()[-1]


@pytest.mark.parametrize("simd", [3, -3, "avx1024", 1.0, True, None])
def test_an_unknown_or_missing_path_is_refused_and_changes_nothing(simd):
    before = _core._switches()
    if simd is None:  # None means "leave it": valid
        with _testing.switches(simd=simd):
            assert _core._switches() == before
        return
    with pytest.raises(ValueError, match="simd="):
        with _testing.switches(simd=simd):
            pass
    assert _core._switches() == before
    with pytest.raises(ValueError, match="bad switch"):
        _core._switches(screening=2)
    assert _core._switches() == before


def test_a_path_above_the_processors_is_refused():
    best = _testing.simd_levels()[-1]
    if best == 2:
        pytest.skip("this processor has every path")
    with pytest.raises(ValueError, match="this processor's paths"):
        _testing.select(simd=best + 1)


def test_counters_count_and_reset():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(600, 4)).astype(float)  # many equal distances: doubts
    Y = (rng.random((600, 3)) < 0.4).astype(np.uint8)
    Y[:, 0] = 1
    _testing.counters(reset=True)
    model = mlsom.SOMStreamClassifier(grid_size=3, random_state=0).fit(X[:300], Y[:300])
    model.predict_stream(X[300:])
    c = _testing.counters(reset=True)
    assert isinstance(c, _testing.Counters) and c.bmu > 0, c
    model.predict(X[300:])
    c = _testing.counters(reset=True)
    assert c.lanes_rows == (300 if _testing.lanes_available() else 0), c
    assert _testing.counters() == _testing.Counters(*[0] * len(c._fields))


def test_the_levels_run_are_recorded():
    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            pass
    assert set(_testing.simd_levels()) <= set(_testing.levels_run())


def test_unknown_plain_kernels_are_refused():
    before = _core._switches()
    with pytest.raises(ValueError, match="unknown kernels"):
        with _testing.switches(plain=["screen4", "fastest"]):
            pass
    assert _core._switches() == before


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_plain_kernel_bodies_give_the_same_results(dtype):
    """The kernel benchmark replaces hand-written kernels by the plain-C body of the same path
    (benchmarks/kernel_gains.py): on every path, with every kernel plain, training, the online
    phase and predict give bit-identical results (so the benchmark compares equal work)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(900, 19)).astype(dtype)
    X[::7] = X[3]  # ties
    Y = (rng.random((900, 4)) < 0.35).astype(np.uint8)
    Y[:, 1] = 1

    def run():
        m = mlsom.SOMStreamClassifier(grid_size=4, random_state=1).fit(X[:400], Y[:400])
        frozen = m.predict(X[400:])
        return frozen, m.predict_stream(X[400:]), [w.copy() for w in m.weights_]

    for level in _testing.simd_levels():
        with _testing.switches(simd=level):
            want = run()
            with _testing.switches(plain=_testing.KERNELS):
                assert _core._switches()[3] == 2 ** len(_testing.KERNELS) - 1
                got = run()
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        for a, b in zip(got[2], want[2], strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["screening", "lanes"])
def test_switches_take_bools_only(name):
    """The string 'no' was true: it switched screening on."""
    before = _testing.select()
    with pytest.raises(TypeError, match=rf"{name} must be True, False or None, got 'no'"):
        _testing.select(**{name: "no"})
    assert _testing.select() == before
