"""The Examples sections of the public docstrings run and give what they show."""

import doctest
import importlib
import pkgutil

import pytest

import mlsom

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(mlsom.__path__, prefix="mlsom.")
    if not m.name.endswith("_cli")
)


# modules that need a package not installable on every platform (river and dask: not on
# win_arm64), and that package
OPTIONAL = {
    "mlsom.baselines._incremental": "river",
    "mlsom.river": "river",
    "mlsom.dask": "dask",
}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed"


def test_the_estimator_example_runs():
    finder = doctest.DocTestFinder()
    tests = finder.find(mlsom.SOMStreamClassifier, "SOMStreamClassifier")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    attempted = 0
    for t in tests:
        r = runner.run(t)
        assert r.failed == 0
        attempted += r.attempted
    assert attempted >= 5
