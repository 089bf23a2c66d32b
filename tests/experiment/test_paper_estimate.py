"""The estimated time of ``--profile paper`` from an experiment's measured speeds, and how the
command line prints it."""

import pytest

from mlsom._cli import _duration, _report_experiment
from mlsom.datasets import TABLE1
from mlsom.experiment import _estimate_paper_seconds, available_methods
from tests.helpers.experiment_results import fabricated_result, fabricated_run

STREAM = "MOA-Spher-5C-2A"
N = 1000  # instances of every fabricated run (100 labelled, 900 in the stream)
# mlsom: 2 us an instance at d = 2 and 5 us at d = 4, so 1 us + 0.25 us * d * d on the line
# through them, never below 2 us; 10 ms more a run. BR-J48: 3 us an instance, 20 ms more.
MLSOM_COST = {d: max(2e-6, 1e-6 + 0.25e-6 * d * d) for d in range(1, 11)}


def _timed(method, per_instance, rest, *, grid_size=None, seed=0, **setting):
    run = fabricated_run(STREAM, method, grid_size=grid_size, seed=seed, **setting)
    scaled = per_instance * N
    return fabricated_result(
        run,
        errors=10,
        n_train=100,
        n_test=900,
        fit_seconds=scaled / 4,
        stream_seconds=3 * scaled / 4,
        wall_seconds=scaled + rest,
    )


def _results():
    results = []
    for seed in (0, 1, 2):
        for d, cost in ((2, 2e-6), (4, 5e-6)):
            slow = seed == 0 and d == 2  # a slow first run: the median leaves it out
            results.append(_timed("mlsom", 1e-4 if slow else cost, 0.01, grid_size=d, seed=seed))
    # runs the paper's design has no counterpart of, much slower: not counted for mlsom
    results.append(_timed("mlsom", 1e-3, 5.0, grid_size="auto"))
    results.append(_timed("mlsom", 1e-3, 5.0, grid_size=2, fraction=0.1, delay=0))
    results.append(_timed("BR-J48", 3e-6, 0.02))
    return results


def _expected_runs():
    """Seconds of every run of the paper's design of mlsom and BR-J48, by hand."""
    sizes = [e.instances for e in TABLE1]
    mlsom = [n * MLSOM_COST[d] + 0.01 for n in sizes for d in range(1, 11) for _ in range(10)]
    return mlsom + [n * 3e-6 + 0.02 for n in sizes]


@pytest.fixture(scope="module")
def estimate():
    return _estimate_paper_seconds(_results(), 1)


def test_estimate_from_a_fabricated_result_set(estimate):
    runs = _expected_runs()
    assert estimate["runs"] == len(runs) == len(TABLE1) * (100 + 1)
    assert estimate["seconds"] == pytest.approx(sum(runs), rel=1e-9)
    assert estimate["methods_measured"] == ["BR-J48", "mlsom"]
    assert set(estimate["methods_not_measured"]) == set(available_methods()) - {"BR-J48", "mlsom"}


def test_workers_share_the_runs_but_none_is_quicker_than_the_longest_run(estimate):
    runs = _expected_runs()
    longest = max(e.instances for e in TABLE1) * MLSOM_COST[10] + 0.01
    assert max(runs) == pytest.approx(longest)
    assert estimate["serial_seconds"] == pytest.approx(sum(runs))
    assert estimate["longest_run_seconds"] == pytest.approx(longest)
    many = _estimate_paper_seconds(_results(), 100_000)
    assert many["seconds"] == pytest.approx(longest) and many["workers"] == 100_000


def test_estimate_uses_labels_that_arrive_only_without_other_runs():
    only = [_timed("mlsom", 4e-6, 0.0, grid_size=3, fraction=0.1, delay=0)]
    est = _estimate_paper_seconds(only, 1)
    expected = sum(10 * 10 * e.instances * 4e-6 for e in TABLE1)
    assert est["seconds"] == pytest.approx(expected)


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0.2, "under 1 s"),
        (42.4, "42 s"),
        (59.7, "1 min"),
        (100.0, "2 min"),
        (1500.0, "25 min"),
        (3569.0, "59 min"),
        (3600.0, "1.0 h"),
        (6 * 3600.0, "6.0 h"),
        (3 * 86400.0, "3.0 days"),
    ],
)
def test_durations_read_in_the_unit_that_fits(seconds, text):
    assert _duration(seconds) == text


def test_the_command_line_prints_a_short_estimate_in_minutes(estimate, capsys, tmp_path):
    summary = {
        "n_runs": 9,
        "n_cached": 0,
        "n_run_now": 9,
        "wall_seconds": 1.0,
        "mean_macro_f1": {},
        "best_grid_size": {},
        "estimated_paper_seconds": estimate,
    }
    _report_experiment(summary, tmp_path)
    line = capsys.readouterr().out.strip().splitlines()[-1]
    minutes = round(sum(_expected_runs()) / 60)
    assert 1 <= minutes < 60  # the case that printed "0.0 h"
    n_other = len(available_methods()) - 2
    assert line == (
        f"estimated time of --profile paper with 1 worker(s): {minutes} min for the "
        f"{len(_expected_runs()):,} runs of the 2 method(s) measured here ({n_other} other "
        "method(s) not counted)"
    )


def test_estimate_counts_mlsom_frozen_at_every_grid_size_and_seed():
    """mlsom-frozen takes mlsom's grid sizes and seeds in the paper's design: 100 runs a stream,
    each at its cost on the line through the grid sizes measured."""
    results = [
        _timed("mlsom-frozen", cost, 0.0, grid_size=d, seed=seed)
        for seed in (0, 1)
        for d, cost in ((2, 2e-6), (4, 5e-6))
    ]
    est = _estimate_paper_seconds(results, 1)
    sizes = [e.instances for e in TABLE1]
    assert est["methods_measured"] == ["mlsom-frozen"]
    assert est["runs"] == 100 * len(TABLE1)
    expected = sum(10 * n * MLSOM_COST[d] for n in sizes for d in range(1, 11))
    assert est["seconds"] == pytest.approx(expected)
