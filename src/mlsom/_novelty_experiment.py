"""``mlsom experiment --novelty-streams``: methods x seeds on the novelty streams, evaluated as
MINAS-BR's evaluator does (:func:`mlsom.protocol.evaluate_novelty_stream`).

Each finished run is kept in ``<out>/novelty-runs/`` (its evaluation and its record), named by
a key that hashes everything that can change its result: the stream's data, the method, its
parameters, the seed, the windows and mlsom's version. Run again, the experiment reads the runs
it finds instead of running them, so an interrupted experiment resumes."""

import hashlib
import json
import math
import time
import warnings

import numpy as np

from . import _run_files
from ._version import __version__
from .datasets import load_novelty
from .datasets._novelty_streams import novelty_entry
from .evaluation import NoveltyEvaluation
from .experiment import (
    check_data_home,
    check_method_name,
    check_out_dir,
    check_seed,
    make_method,
    params_of_methods,
)
from .plotting import plot_novelty, save_png
from .protocol import evaluate_novelty_stream

#: the methods of a novelty experiment unless told otherwise
NOVELTY_METHODS = ("mlsom", "MINAS-BR", "every-label")


def run_novelty_experiment(
    out,
    streams,
    *,
    methods=NOVELTY_METHODS,
    seeds=(0,),
    n_instances=None,
    data_home=None,
    n_windows=50,
    params=None,
    plots=True,
):
    """Run every method on every novelty stream, once per seed, and write the results to
    ``out``: ``novelty-runs.json`` (every run's summary), ``novelty-summary.json`` (per stream
    and method: the means over the seeds, and each new label's median time to detect, a seed
    that never detects it counting as never) and, with ``plots``, ``novelty-<stream>.png`` (the
    first seed's F1M curves, :func:`mlsom.plotting.plot_novelty`). A generated stream is made
    with the run's seed (one stream per seed, as the method's seed); a real one is read once.
    Everything is checked before the first run (as the experiment checks its own: method names,
    seeds, ``params`` given to every method that takes it, the data folder, the results
    folder). Returns the summary rows."""
    entries = [novelty_entry(s) for s in streams]
    if not entries:
        raise ValueError("novelty_streams must name at least one novelty stream")
    methods = [check_method_name(m) for m in methods]
    seeds = [check_seed(s) for s in seeds]
    kw = params_of_methods(methods, params)
    real = [e for e in entries if e.kind == "real"]
    if n_instances is not None and not [e for e in entries if e.kind != "real"]:
        raise ValueError("n_instances applies to the generated novelty streams; none is given")
    data_home = check_data_home(data_home) if real else None
    for e in real:  # the files exist: read them now, not after the first runs
        load_novelty(e.name, data_home=data_home)
    out = check_out_dir(out)
    (out / "novelty-runs").mkdir(exist_ok=True)
    t0 = time.perf_counter()
    rows, kept = [], {}
    for e in entries:
        for seed in [seeds[0]] if e.kind == "real" else seeds:
            opts = {"data_home": data_home} if e.kind == "real" else {"random_state": seed}
            if e.kind != "real" and n_instances is not None:
                opts["n_instances"] = n_instances
            ds = load_novelty(e.name, **opts)
            data = _digest(ds)
            for method, p in zip(methods, kw, strict=True):
                run = {"stream": e.name, "method": method, "seed": seed, "params": p,
                       "n_windows": n_windows, "data": data, "version": __version__}  # fmt: skip
                res = _run_or_read(run, ds, out / "novelty-runs")
                rows.append({"stream": e.name, "method": method, "seed": seed, **res.summary()})
                if seed == seeds[0]:
                    kept.setdefault(e.name, {})[method] = res
    summary = summarise(rows)
    with open(out / "novelty-runs.json", "w") as f:
        json.dump(rows, f, indent=1)
    with open(out / "novelty-summary.json", "w") as f:
        json.dump({"wall_seconds": time.perf_counter() - t0, "rows": summary}, f, indent=1)
    if plots:
        for stream, evaluations in kept.items():
            title = f"{stream}: F1M, every label from its first appearance"
            save_png(plot_novelty(evaluations, title=title), out / f"novelty-{stream}.png")
    return summary


def _digest(ds):
    """SHA-256 of a novelty stream's data (labelled set and stream, features and labels)."""
    h = hashlib.sha256()
    for a in (ds.X_train, ds.Y_train, ds.X_stream, ds.Y_stream):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _run_or_read(run, ds, folder):
    """The evaluation of ``run`` (its fields: stream, method, seed, params, n_windows, data,
    version) on ``ds``: read from its run file in ``folder`` when there is one, else computed
    and kept there."""
    text = json.dumps(run, sort_keys=True, default=repr)
    key = hashlib.sha256(text.encode()).hexdigest()[:24]
    record = {**json.loads(text), "key": key}
    path = folder / f"{run['stream']}-{run['method']}-{run['seed']}-{key}.json"
    if _run_files.finished(path):
        return _read_run(path, record)
    est = make_method(run["method"], seed=run["seed"], params=run["params"])
    extra = {"fit_labels": "all"} if run["method"] == "every-label" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_novelty_stream(est, ds, n_windows=run["n_windows"], **extra)
    record["wall_seconds"] = time.perf_counter() - t0
    _run_files.store({"run": record, "evaluation": res.to_dict()}, path)
    return res


def _read_run(path, record):
    """The evaluation kept in ``path`` for the run ``record``, checked; a ValueError naming the
    file when it cannot be that run's."""
    try:
        stored = _run_files.read_record(path)
        have = stored.get("run")
        if not isinstance(have, dict):
            raise ValueError("not a run record")
        wall = have.pop("wall_seconds", None)
        if isinstance(wall, bool) or not isinstance(wall, (int, float)) or not 0 <= wall < math.inf:
            raise ValueError(f"wall_seconds={wall!r} is not a duration")
        if json.dumps(have, sort_keys=True) != json.dumps(record, sort_keys=True):
            raise ValueError("it records another run")
        res = NoveltyEvaluation.from_dict(stored.get("evaluation"))
        if res.n_windows != record["n_windows"]:
            raise ValueError(f"its evaluation has {res.n_windows} windows")
        return res
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise ValueError(
            f"run file {str(path)!r} is damaged ({exc}); delete it and rerun to recompute it"
        ) from None


def summarise(rows):
    """Per (stream, method), in the order of ``rows``: the means over the seeds of F1M (both
    conventions), the unknown rate, the patterns and the false ones; each new label's median
    time to detect (None: never on most seeds) and on how many seeds it was detected."""
    out = []
    for key in dict.fromkeys((r["stream"], r["method"]) for r in rows):
        rs = [r for r in rows if (r["stream"], r["method"]) == key]
        ttd, detected = {}, {}
        for label in rs[0]["time_to_detect"]:
            v = [np.inf if r["time_to_detect"][label] is None else r["time_to_detect"][label]
                 for r in rs]  # fmt: skip
            med = float(np.median(v))
            ttd[label] = None if med == np.inf else med
            detected[label] = int(np.isfinite(v).sum())
        out.append(
            {
                "stream": key[0],
                "method": key[1],
                "seeds": len(rs),
                "f1m_appeared": float(np.mean([r["f1m"]["appeared"] for r in rs])),
                "f1m_known": float(np.mean([r["f1m"]["known"] for r in rs])),
                "unknown_rate": float(np.mean([r["unknown_rate"] for r in rs])),
                "n_patterns": float(np.mean([r["n_patterns"] for r in rs])),
                "n_false_patterns": float(np.mean([r["n_false_patterns"] for r in rs])),
                "time_to_detect": ttd,
                "detected": detected,
            }
        )
    return out
