"""Experiments: streams x methods x grid sizes x seeds, run in parallel, resumable, with reports.

An experiment is a list of runs. Each run evaluates one method (with one grid size, for mlsom, and
one seed) on one stream with the protocol of :mod:`mlsom.protocol`, and its result is cached on
disk as JSON (``<out>/runs/<key>.json``): a finished run is never computed twice, so an interrupted
experiment resumes where it stopped. Runs execute serially, in local worker processes (joblib), or
on a dask.distributed cluster (a scheduler address, or ``"local"`` for a ``LocalCluster``).

The reports: ``results.csv`` (one row per run), ``curves.csv`` (one row per run and window),
``summary.json`` (version, profile, parameters, seeds, 0/0 convention, timings, the best grid size
per stream and the statistics), and PNG plots of the curves, the Nemenyi p-values and the critical
difference diagram.

The paper picks the grid size d per stream by looking at the test results; the report gives that
choice (``best_grid_size``) and flags it as optimistic.
"""

import csv
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ._version import __version__

__all__ = [
    "PROFILES",
    "Run",
    "available_methods",
    "make_method",
    "plan",
    "run_experiment",
    "run_one",
]

#: The experiment designs. ``quick`` takes minutes on a laptop; ``paper`` is the paper's design
#: (every stream of Table 1, d = 1..10, 10 seeds for the stochastic methods, all baselines).
PROFILES = {
    "quick": {
        "streams": ["MOA-Spher-5C-2A", "MOA-Spher-3C-2A", "Mult-Non-Spher-HP"],
        "n_instances": 20_000,
        "methods": ["mlsom", "MINAS-BR", "BR-J48", "ML-kNN", "BR-HT"],
        "grid_sizes": [2, 4, 6],
        "seeds": [0, 1],
    },
    "paper": {
        "streams": None,  # all of Table 1
        "n_instances": None,  # the table's sizes
        "methods": None,  # mlsom, MINAS-BR and every baseline
        "grid_sizes": list(range(1, 11)),
        "seeds": list(range(10)),
    },
}

#: methods whose results depend on the seed (run once per seed); the others run once
STOCHASTIC = {"mlsom", "MINAS-BR"}


def _upper_bounds():
    """The incremental upper bounds, or an empty registry where river is not installed."""
    try:
        import river  # noqa: F401
    except ImportError:
        return {}
    from .baselines import UPPER_BOUNDS

    return UPPER_BOUNDS


def available_methods():
    """Names of every method the runner knows: mlsom, MINAS-BR, the lower and upper bounds.

    The upper bounds need river; where it is not installed they are left out.
    """
    from .baselines import LOWER_BOUNDS

    return ["mlsom", "MINAS-BR", *LOWER_BOUNDS, *_upper_bounds()]


def make_method(name, *, grid_size=None, seed=0, params=None):
    """Build an unfitted method by name.

    Parameters
    ----------
    name : str
        ``"mlsom"``, ``"MINAS-BR"`` or a name of ``mlsom.baselines.LOWER_BOUNDS`` /
        ``UPPER_BOUNDS``.
    grid_size : int, optional
        mlsom only: the grid side d (default 5).
    seed : int
        Passed as ``random_state``.
    params : dict, optional
        Further constructor parameters.
    """
    params = dict(params or {})
    if name == "mlsom":
        from ._som import SOMStreamClassifier

        return SOMStreamClassifier(grid_size=grid_size or 5, random_state=seed, **params)
    if grid_size is not None:
        raise ValueError(f"grid_size applies to mlsom only, not to {name!r}")
    from .baselines import LOWER_BOUNDS, MINASBR

    if name == "MINAS-BR":
        return MINASBR(random_state=seed, **params)
    registry = {**LOWER_BOUNDS, **_upper_bounds()}
    if name not in registry:
        raise ValueError(f"unknown method {name!r}; valid: {', '.join(available_methods())}")
    try:
        return registry[name](random_state=seed, **params)
    except TypeError:  # a deterministic method without random_state
        return registry[name](**params)


@dataclass(frozen=True)
class Run:
    """One run of an experiment."""

    stream: str
    method: str
    grid_size: int | None
    seed: int
    n_instances: int | None = None
    params: dict = field(default_factory=dict)

    @property
    def label(self):
        """Method name as reported, e.g. ``mlsom-d4``."""
        return f"{self.method}-d{self.grid_size}" if self.grid_size else self.method

    @property
    def key(self):
        """File-name-safe identity of the run (a hash of everything that defines it)."""
        text = json.dumps(
            [
                self.stream,
                self.method,
                self.grid_size,
                self.seed,
                self.n_instances,
                sorted(self.params.items()),
            ],
            default=str,
        )
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        safe = "".join(
            ch if ch.isalnum() or ch in "-_" else "_"
            for ch in f"{self.stream}__{self.label}__s{self.seed}"
        )
        return f"{safe}__{digest}"


def plan(
    profile="quick", *, streams=None, methods=None, grid_sizes=None, seeds=None, n_instances=None
):
    """The runs of a profile, with any part of the design overridden.

    Returns
    -------
    list of Run
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {sorted(PROFILES)}")
    design = dict(PROFILES[profile])
    from .datasets import list_streams

    streams = streams or design["streams"] or list_streams()
    methods = methods or design["methods"] or available_methods()
    grid_sizes = grid_sizes or design["grid_sizes"]
    seeds = seeds if seeds is not None else design["seeds"]
    n_instances = n_instances if n_instances is not None else design["n_instances"]
    known = set(available_methods())
    for m in methods:
        if m not in known:
            raise ValueError(f"unknown method {m!r}; valid: {', '.join(sorted(known))}")
    runs = []
    for stream in streams:
        for method in methods:
            for seed in seeds if method in STOCHASTIC else seeds[:1]:
                for d in grid_sizes if method == "mlsom" else [None]:
                    runs.append(Run(stream, method, d, int(seed), n_instances))
    return runs


@lru_cache(maxsize=4)
def _load_stream(name, n_instances, data_home):
    from .datasets import list_streams, load

    synthetic = {
        "Mult-Non-Spher-WF",
        "Mult-Non-Spher-RT",
        "Mult-Non-Spher-HP",
        "Mult-Spher-RB",
        "MOA-Spher-5C-2A",
        "MOA-Spher-5C-3A",
        "MOA-Spher-3C-2A",
    }
    assert set(synthetic) <= set(list_streams())
    if name in synthetic:
        return load(name, n_instances=n_instances, random_state=0)
    return load(name, data_home=data_home)


def _check_data_files(streams, data_home):
    """Fail before any run when a real stream's files are missing, naming all of them."""
    from .datasets._registry import _REAL, _data_home, _entry, _find

    problems = []
    for name in sorted(streams):
        if name in _REAL:
            try:
                _find(_data_home(data_home), _REAL[name], _entry(name))
            except FileNotFoundError as exc:
                problems.append(str(exc))
    if problems:
        raise FileNotFoundError(
            "; ".join(problems) + ". Leave these streams out with streams= (--streams) or "
            "give their folder with data_home= (--data-home)."
        )


def run_one(run, *, data_home=None, n_windows=50, zero_division=1, chunk_size=1000):
    """Execute one run and return its result as a JSON-serialisable dict."""
    from .protocol import evaluate

    ds = _load_stream(run.stream, run.n_instances, data_home)
    method = make_method(run.method, grid_size=run.grid_size, seed=run.seed, params=run.params)
    t0 = time.perf_counter()
    res = evaluate(
        method,
        ds,
        n_windows=n_windows,
        chunk_size=chunk_size,
        name=run.label,
        stream_name=run.stream,
        seed=run.seed,
        zero_division=zero_division,
    )
    out = res.to_dict()
    out["run"] = {
        "stream": run.stream,
        "method": run.method,
        "label": run.label,
        "grid_size": run.grid_size,
        "seed": run.seed,
        "n_instances": run.n_instances,
        "params": run.params,
        "wall_seconds": time.perf_counter() - t0,
        "mlsom_version": __version__,
        "zero_division": zero_division,
        "n_windows": n_windows,
    }
    return out


def _store(result, path):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(result))
    os.replace(tmp, path)  # atomic: a run file is either complete or absent


def _run_indexed(i, run, kwargs):
    return i, run_one(run, **kwargs)


def run_experiment(
    profile="quick",
    out_dir="mlsom-experiment",
    *,
    streams=None,
    methods=None,
    grid_sizes=None,
    seeds=None,
    n_instances=None,
    data_home=None,
    n_jobs=1,
    scheduler=None,
    n_windows=50,
    zero_division=1,
    plots=True,
    progress=True,
):
    """Run (or resume) an experiment and write its reports.

    Parameters
    ----------
    profile : {"quick", "paper"}
    out_dir : str or path
        Results folder; finished runs found there are not run again.
    streams, methods, grid_sizes, seeds, n_instances : optional
        Override the profile's design.
    data_home : str or path, optional
        Folder of the real data files (or the environment variable ``MLSOM_DATA``).
    n_jobs : int
        Local worker processes (joblib) when ``scheduler`` is None; 1 runs serially.
    scheduler : str, optional
        A dask.distributed scheduler address, or ``"local"`` to start a ``LocalCluster`` of
        ``n_jobs`` worker processes.
    n_windows : int
    zero_division : {1, 0, "exclude", "mulan"}
        The 0/0 convention of the reports (every other can be recomputed from the run files).
    plots : bool
        Write the PNG plots (needs matplotlib).
    progress : bool
        Show a progress bar (tqdm).

    Returns
    -------
    dict
        The summary also written to ``summary.json``.
    """
    out = Path(out_dir)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    runs = plan(
        profile,
        streams=streams,
        methods=methods,
        grid_sizes=grid_sizes,
        seeds=seeds,
        n_instances=n_instances,
    )
    kwargs = {"data_home": data_home, "n_windows": n_windows, "zero_division": zero_division}
    todo = [r for r in runs if not (out / "runs" / f"{r.key}.json").exists()]
    _check_data_files({r.stream for r in todo}, data_home)
    t0 = time.perf_counter()
    _execute(todo, out, kwargs, n_jobs=n_jobs, scheduler=scheduler, progress=progress)
    wall = time.perf_counter() - t0
    results = [json.loads((out / "runs" / f"{r.key}.json").read_text()) for r in runs]
    summary = _report(results, out, profile=profile, zero_division=zero_division, plots=plots)
    summary.update(
        n_runs=len(runs),
        n_run_now=len(todo),
        n_cached=len(runs) - len(todo),
        wall_seconds=wall,
        n_jobs=n_jobs,
        scheduler=scheduler,
    )
    summary["estimated_paper_seconds"] = _estimate_paper_seconds(results, n_jobs)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def _execute(todo, out, kwargs, *, n_jobs, scheduler, progress):
    """Run the runs of ``todo``; each result is written by this process as soon as it arrives, so
    workers need no access to ``out`` (a cluster's workers may not share its file system)."""
    if not todo:
        return
    paths = [out / "runs" / f"{r.key}.json" for r in todo]
    bar = _progress(len(todo), progress)
    try:
        if scheduler is not None:
            from dask.distributed import Client, LocalCluster, as_completed

            cluster = None
            if scheduler == "local":
                cluster = LocalCluster(
                    n_workers=max(1, n_jobs),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
                client = Client(cluster)
            else:
                client = Client(scheduler)
            try:
                futures = [
                    client.submit(_run_indexed, i, r, kwargs, pure=False)
                    for i, r in enumerate(todo)
                ]
                for fut in as_completed(futures):
                    i, result = fut.result()
                    _store(result, paths[i])
                    bar.update(1)
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
        elif n_jobs == 1:
            for i, r in enumerate(todo):
                _store(run_one(r, **kwargs), paths[i])
                bar.update(1)
        else:
            from joblib import Parallel, delayed

            gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                delayed(_run_indexed)(i, r, kwargs) for i, r in enumerate(todo)
            )
            for i, result in gen:
                _store(result, paths[i])
                bar.update(1)
    finally:
        bar.close()


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total, enabled):
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc="runs", unit="run")


def _result_objects(results):
    from .evaluation import StreamEvaluation

    return [StreamEvaluation.from_dict({k: v for k, v in r.items() if k != "run"}) for r in results]


def _report(results, out, *, profile, zero_division, plots):
    evals = _result_objects(results)
    rows = []
    for r, ev in zip(results, evals, strict=True):
        run = r["run"]
        curve = ev.curve("macro_f1", cumulative=True, zero_division=zero_division)
        rows.append(
            {
                "stream": run["stream"],
                "method": run["method"],
                "label": run["label"],
                "grid_size": run["grid_size"],
                "seed": run["seed"],
                "macro_f1_mean": float(np.nanmean(curve)),
                "macro_f1_final": float(curve[-1]),
                "micro_f1_mean": ev.mean("micro_f1", zero_division=zero_division),
                "hamming_loss_mean": ev.mean("hamming_loss", zero_division=zero_division),
                "instances_per_second": ev.instances_per_second,
                "wall_seconds": run["wall_seconds"],
                "zero_division": zero_division,
                "mlsom_version": run["mlsom_version"],
            }
        )
    _write_csv(out / "results.csv", rows)
    curve_rows = []
    for r, ev in zip(results, evals, strict=True):
        run = r["run"]
        cum = ev.curve("macro_f1", cumulative=True, zero_division=zero_division)
        per = ev.curve("macro_f1", cumulative=False, zero_division=zero_division)
        for w in range(len(cum)):
            curve_rows.append(
                {
                    "stream": run["stream"],
                    "label": run["label"],
                    "seed": run["seed"],
                    "window": w,
                    "macro_f1_cumulative": float(cum[w]),
                    "macro_f1_window": float(per[w]),
                }
            )
    _write_csv(out / "curves.csv", curve_rows)

    # mean over seeds, per stream and method label
    table = {}
    for row in rows:
        table.setdefault(row["stream"], {}).setdefault(row["label"], []).append(
            row["macro_f1_mean"]
        )
    means = {s: {m: float(np.mean(v)) for m, v in d.items()} for s, d in table.items()}
    best_d = {}
    for s, d in means.items():
        soms = {m: v for m, v in d.items() if m.startswith("mlsom-d")}
        if soms:
            m = max(soms, key=soms.get)
            best_d[s] = {
                "grid_size": int(m.split("-d")[1]),
                "macro_f1": soms[m],
                "optimistic": True,
                "note": "chosen by looking at the test stream, as the paper does",
            }
    summary = {
        "mlsom_version": __version__,
        "profile": profile,
        "zero_division": zero_division,
        "measure": "mean over windows of the cumulative macro F",
        "streams": sorted(means),
        "mean_macro_f1": means,
        "best_grid_size": best_d,
    }
    # statistics over streams: mlsom at its best d beside every other method
    stat_table = {}
    for s, d in means.items():
        if s not in best_d:
            continue
        entry = {m: v for m, v in d.items() if not m.startswith("mlsom-d")}
        entry["mlsom (best d)"] = best_d[s]["macro_f1"]
        stat_table[s] = entry
    common = set.intersection(*(set(v) for v in stat_table.values())) if stat_table else set()
    result = None
    if len(stat_table) >= 2 and len(common) >= 2:
        from .stats import friedman_nemenyi

        names = sorted(common)
        scores = np.array([[stat_table[s][m] for m in names] for s in sorted(stat_table)])
        result = friedman_nemenyi(scores, methods=names, datasets=sorted(stat_table))
        summary["statistics"] = {
            "methods": names,
            "mean_ranks": result.mean_ranks.tolist(),
            "friedman_chi2": result.chi2,
            "friedman_pvalue": result.chi2_pvalue,
            "iman_davenport_f": result.f_statistic,
            "iman_davenport_pvalue": result.f_pvalue,
            "nemenyi_cd": result.cd,
            "alpha": result.alpha,
            "nemenyi_pvalues": result.pvalues.tolist(),
        }
    if plots:
        summary["plots"] = _plots(results, evals, best_d, result, out, zero_division)
    return summary


def _plots(results, evals, best_d, stat_result, out, zero_division):
    from .plotting import plot_critical_difference, plot_curves, plot_nemenyi_heatmap, save_png

    written = []
    by_stream = {}
    for r, ev in zip(results, evals, strict=True):
        run = r["run"]
        label = run["label"]
        if run["method"] == "mlsom":
            if best_d.get(run["stream"], {}).get("grid_size") != run["grid_size"]:
                continue
            label = f"mlsom (d={run['grid_size']}, best)"
        by_stream.setdefault(run["stream"], {}).setdefault(label, []).append(
            ev.curve("macro_f1", cumulative=True, zero_division=zero_division)
        )
    kinds = {r["run"]["label"]: r.get("kind") for r in results}
    for stream, curves in sorted(by_stream.items()):
        mean_curves = {m: np.mean(c, axis=0) for m, c in curves.items()}
        mean_curves = _panel_selection(mean_curves, kinds)
        fig = plot_curves(
            mean_curves, title=f"{stream} (mean over seeds)", ylabel="cumulative macro F"
        )
        written.append(str(save_png(fig, out / f"curves-{stream}.png")))
    if stat_result is not None:
        written.append(str(save_png(plot_nemenyi_heatmap(stat_result), out / "nemenyi.png")))
        written.append(str(save_png(plot_critical_difference(stat_result), out / "cd.png")))
    return written


def _panel_selection(curves, kinds, most=8):
    """At most ``most`` curves for a readable panel, as the paper's Figure 1: mlsom (best d),
    MINAS-BR, the best lower and the best upper bound, then the others by mean value."""
    if len(curves) <= most:
        return curves
    by_mean = sorted(curves, key=lambda m: -float(np.nanmean(curves[m])))
    keep = [m for m in by_mean if m.startswith("mlsom") or m == "MINAS-BR"]
    for kind in ("batch", "incremental"):
        best = next((m for m in by_mean if kinds.get(m) == kind), None)
        if best is not None:
            keep.append(best)
    keep += [m for m in by_mean if m not in keep]
    chosen = set(keep[:most])
    return {m: c for m, c in curves.items() if m in chosen}


def _write_csv(path, rows):
    if not rows:
        path.write_text("")
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _estimate_paper_seconds(results, n_jobs):
    """Rough time of ``--profile paper`` from the speeds measured in these runs.

    Each measured method's instances per second (fit and stream together) is applied to every run
    of the paper's design (the table's stream sizes, d = 1..10 and 10 seeds for mlsom, 10 seeds
    for MINAS-BR, one run for the others) and divided by the worker count. Methods not measured
    here are not counted; the estimate says so.
    """
    from .datasets import TABLE1

    speed = {}
    for r in results:
        run = r["run"]
        n = (r["n_train"] + r["n_test"]) or 1
        speed.setdefault(run["method"], []).append((run["wall_seconds"], n))
    per_instance = {m: sum(s for s, _ in v) / sum(n for _, n in v) for m, v in speed.items()}
    total_instances = sum(e.instances for e in TABLE1)
    total = 0.0
    for m, sec in per_instance.items():
        n_runs = 100 if m == "mlsom" else (10 if m in STOCHASTIC else 1)
        total += sec * total_instances * n_runs
    return {
        "seconds": total / max(1, n_jobs),
        "methods_measured": sorted(per_instance),
        "workers": n_jobs,
        "note": "from this run's speeds; methods not measured here are not counted",
    }
