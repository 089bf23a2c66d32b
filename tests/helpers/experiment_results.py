"""Run files of an experiment made without running anything: the results that
``mlsom.experiment`` reports on, with a chosen quality, size and wall time for each run."""

import numpy as np

from mlsom import experiment
from mlsom.evaluation import evaluate_predictions
from mlsom.experiment import Run

N_LABELS = 3


def capture_figures(monkeypatch):
    """The figures the experiment's report would write, by file name, kept in the returned dict
    in place of being written (``monkeypatch``: pytest's fixture)."""
    saved = {}

    def keep(fig, path):
        saved[path.name] = fig
        return path

    monkeypatch.setattr(experiment, "save_png", keep)
    return saved


def fabricated_result(
    run,
    *,
    errors,
    n_train=100,
    n_test=200,
    n_windows=5,
    kind="batch",
    wall_seconds=0.5,
    fit_seconds=None,
    stream_seconds=None,
):
    """The stored result of ``run`` (a :class:`mlsom.experiment.Run`), as ``run_one`` returns it,
    with the given sizes and times.

    ``errors`` cells of the predicted label matrix are flipped, always the first ones of one fixed
    order: a run with more errors has a macro F no higher, in every window, than one with fewer.
    """
    rng = np.random.default_rng(7)
    Y = (rng.random((n_test, N_LABELS)) < 0.4).astype(np.uint8)
    Y[np.arange(n_test), rng.integers(0, N_LABELS, n_test)] = 1
    Y_hat = Y.copy().reshape(-1)
    cells = rng.permutation(Y_hat.size)[:errors]
    Y_hat[cells] ^= 1
    ev = evaluate_predictions(
        Y,
        Y_hat.reshape(Y.shape),
        n_windows=n_windows,
        method=run.label,
        kind=kind,
        stream=run.stream,
        seed=run.seed,
        n_train=n_train,
        fit_seconds=fit_seconds,
        stream_seconds=stream_seconds,
    )
    result = ev.to_dict()
    result["run"] = {
        **run.identity(),
        "label": run.label,
        "key": run.key,
        "wall_seconds": wall_seconds,
    }
    return result


def fabricated_run(stream, method, *, grid_size=None, seed=0, fraction=None, delay=0):
    """A :class:`mlsom.experiment.Run` of the paper's protocol, or of labels that arrive."""
    return Run(stream, method, grid_size, seed, label_fraction=fraction, label_delay=delay)
