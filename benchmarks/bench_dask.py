"""Scoring through dask: frozen predict in this process against a 2-worker LocalCluster.

    python benchmarks/bench_dask.py [--rows 1000000] [--chunk-rows 50000] [--repeats 3]
                                    [--json out.json]

Setting: the suite's model (L = 7 labels, 10 x 10 maps, A = 128 features, fitted in float64 on
``make_stream``'s first 20,000 rows). The rows to score (``streams.stream_chunk``, float64) are
written once as a stack of .npy files, ``--chunk-rows`` rows a file (``dask.array.to_npy_stack``),
which every dask case reads back with ``dask.array.from_npy_stack``, as a data set larger than
memory would be read; the in-process cases score the same rows held in memory. Each case is timed
from the call of ``mlsom.dask.predict`` (or ``model.predict``) to the predictions here as one
NumPy array; the cases run in turn, a b c ... a b c ..., for ``--repeats`` rounds (a slow spell
of the shared machine falls on all), after one untimed first run of each cluster case (workers
importing mlsom); the best and the median of each case are reported:

* ``model.predict(X)`` in this process, n_jobs = 2 (both cores): the baseline of every ratio;
* ``model.predict(X)`` in this process, n_jobs = 1;
* ``mlsom.dask.predict`` on dask's threaded scheduler in this process (2 threads, n_jobs = 1);
* ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``, n_jobs = 1, the model
  shipped in the graph (``client=None``) and scattered to both workers (``client=client``);
* ``LocalCluster(n_workers=1, threads_per_worker=1, processes=True)``, n_jobs = 2: one worker
  using both cores through the model's threads.

Every case's predictions are checked against the baseline's. Also measured: the model's pickled
size, pickle and unpickle times (best of 20), the first ``predict`` of one row after unpickling
(it rebuilds the cached copies that pickles leave out) against a warm one, and each cluster's
start-up time. Ratios are rows/s of a case over rows/s of the baseline measured in the same run.
The CPU time each run consumed (this process and its children: the cluster's nannies and
workers; its scheduler runs here), median over the rounds, per row, is reported too: on a
machine shared with other work it moves much less than the wall time, and its ratio is what the
dask path adds in work.
On a 2-core machine no cluster of local workers can beat in-process ``predict`` on both cores:
the ratios measure what the dask path costs (graph, transfers, reading the .npy files, results
gathered here), not a speed-up; on a real cluster each worker adds its cores.

Prints a markdown table; writes JSON (default benchmarks/results/dask.json).
"""

import argparse
import contextlib
import importlib.metadata
import json
import logging
import os
import pickle
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from _suite_common import (  # noqa: E402
    GRID,
    L_LABELS,
    N_FEATURES,
    N_TRAIN,
    PAUSE_S,
    cpu_busy,
    machine_info,
)
from streams import make_stream, stream_chunk  # noqa: E402


def best_time(run, repeats):
    """(best seconds, last result) of ``repeats`` calls of ``run()``."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    return best, out


def pickle_costs(model, repeats=20):
    blob = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    dump_s, _ = best_time(lambda: pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL), repeats)
    load_s, _ = best_time(lambda: pickle.loads(blob), repeats)
    x1 = stream_chunk(1, seed=99)

    def first_predict():
        m = pickle.loads(blob)
        t0 = time.perf_counter()
        m.predict(x1)
        return time.perf_counter() - t0

    first_s = min(first_predict() for _ in range(repeats))
    model.predict(x1)
    warm_s, _ = best_time(lambda: model.predict(x1), repeats)
    return {
        "pickled_bytes": len(blob),
        "pickle_s": dump_s,
        "unpickle_s": load_s,
        "first_predict_1_row_after_unpickle_s": first_s,
        "warm_predict_1_row_s": warm_s,
        "protocol": pickle.HIGHEST_PROTOCOL,
    }


def cpu_seconds():
    """CPU time (user + system) of this process and all its descendants (a LocalCluster's
    nannies and workers; its scheduler runs in this process)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


def versions():
    out = {}
    for name in ("mlsom", "numpy", "dask", "distributed", "cloudpickle", "tornado"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--chunk-rows", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="output file (default benchmarks/results/dask.json)")
    args = ap.parse_args()

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import mlsom.dask

    t_start = time.perf_counter()
    machine = machine_info()
    machine["cpu_busy_before"] = cpu_busy()
    machine["versions"] = versions()
    print(
        f"{machine['cpu_model']}, {machine['cpu_count']} cores; Python {machine['python']}; "
        + ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    )
    busy = machine["cpu_busy_before"]
    if busy is not None and busy > 0.25:
        print(f"note: the CPUs were {busy:.0%} busy with other work just before")

    Xtr, Ytr = make_stream(N_TRAIN)
    model = mlsom.SOMStreamClassifier(grid_size=GRID, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        model.fit(Xtr, Ytr)
    neurons = sum(w.shape[0] for w in model.weights_ if w is not None)
    X = stream_chunk(args.rows, seed=1)
    print(
        f"model: L={L_LABELS} d={GRID} A={N_FEATURES}, {neurons} neurons, float64; "
        f"{args.rows:,} rows to score ({X.nbytes / 2**20:,.0f} MiB), "
        f"{args.chunk_rows:,} rows a block"
    )
    pk = pickle_costs(model)
    print(
        f"pickle: {pk['pickled_bytes']:,} bytes, dump {pk['pickle_s'] * 1e3:.2f} ms, "
        f"load {pk['unpickle_s'] * 1e3:.2f} ms; first predict of 1 row after loading "
        f"{pk['first_predict_1_row_after_unpickle_s'] * 1e3:.2f} ms (warm: "
        f"{pk['warm_predict_1_row_s'] * 1e3:.3f} ms)"
    )

    cases, clusters = [], []
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="mlsom-bench-dask-"))
        npy = os.path.join(tmp, "X")
        t0 = time.perf_counter()
        da.to_npy_stack(npy, da.from_array(X, chunks=(args.chunk_rows, -1)), axis=0)
        write_s = time.perf_counter() - t0
        files = sum(1 for f in os.listdir(npy) if f.endswith(".npy"))
        print(f"(.npy stack written in {write_s:.1f} s: {files} files)")

        def in_process(n_jobs):
            def run():
                model.set_params(n_jobs=n_jobs)
                return model.predict(X)

            return run

        def on_dask(compute, n_jobs, client=None):
            def run():
                Xd = da.from_npy_stack(npy)
                return compute(mlsom.dask.predict(model, Xd, client=client, n_jobs=n_jobs))

            return run

        def on_threads(out):
            return out.compute(scheduler="threads", num_workers=2)

        cases = [
            dict(case="in-process model.predict, n_jobs=2", data="in memory", n_jobs=2),
            dict(case="in-process model.predict, n_jobs=1", data="in memory", n_jobs=1),
            dict(
                case="mlsom.dask.predict, dask threads (2), n_jobs=1",
                data=".npy stack",
                n_jobs=1,
                run=on_dask(on_threads, 1),
            ),
        ]
        for case in cases[:2]:
            case["run"] = in_process(case["n_jobs"])
        for n_workers, n_jobs, ships in ((2, 1, ("graph", "scatter")), (1, 2, ("graph",))):
            t0 = time.perf_counter()
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # a free port: 8787 may be taken
                    silence_logs=logging.ERROR,
                )
            )
            client = stack.enter_context(Client(cluster, set_as_default=False))
            start_s = time.perf_counter() - t0
            clusters.append({"workers": n_workers, "threads_per_worker": 1, "start_s": start_s})
            print(f"(LocalCluster of {n_workers} worker(s) started in {start_s:.1f} s)")

            def on_cluster(out, client=client):
                return client.compute(out).result()

            for ship in ships:
                run = on_dask(on_cluster, n_jobs, client if ship == "scatter" else None)
                t0 = time.perf_counter()
                run()  # the workers import mlsom and dask.array
                cases.append(
                    dict(
                        case=f"LocalCluster {n_workers} x 1 thread, n_jobs={n_jobs}, {ship}",
                        data=".npy stack; model "
                        + ("scattered" if ship == "scatter" else "in the graph"),
                        n_jobs=n_jobs,
                        workers=n_workers,
                        threads_per_worker=1,
                        ship=ship,
                        first_run_s=time.perf_counter() - t0,
                        run=run,
                    )
                )

        # the cases in turn, round after round: a slow spell of the shared machine falls on all
        print(f"{args.repeats} rounds of {len(cases)} cases ...", flush=True)
        expected = model.predict(X)
        for case in cases:
            case["seconds_all"], case["cpu_seconds_all"], case["same_predictions"] = [], [], True
        for _ in range(args.repeats):
            for case in cases:
                time.sleep(PAUSE_S)  # idle OpenMP threads stop spinning
                c0, t0 = cpu_seconds(), time.perf_counter()
                Y = case["run"]()
                case["seconds_all"].append(time.perf_counter() - t0)
                case["cpu_seconds_all"].append(cpu_seconds() - c0)
                case["same_predictions"] &= bool(np.array_equal(Y, expected))
                del Y
        for case in cases:
            del case["run"]
            case["seconds"] = min(case["seconds_all"])
            case["rows_per_s"] = args.rows / case["seconds"]
            case["median_rows_per_s"] = args.rows / float(np.median(case["seconds_all"]))
            case["cpu_us_per_row"] = 1e6 * float(np.median(case["cpu_seconds_all"])) / args.rows
    model.set_params(n_jobs=None)

    base, base_median = cases[0]["rows_per_s"], cases[0]["median_rows_per_s"]
    for c in cases:
        c["ratio_to_baseline"] = c["rows_per_s"] / base
        c["median_ratio_to_baseline"] = c["median_rows_per_s"] / base_median
        c["cpu_ratio_to_baseline"] = c["cpu_us_per_row"] / cases[0]["cpu_us_per_row"]

    print(
        "\n| case | data | rows/s (best) | x baseline | rows/s (median) | x baseline | "
        "CPU µs/row | x baseline | first run (s) | same predictions |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        first = f"{c['first_run_s']:.2f}" if "first_run_s" in c else ""
        print(
            f"| {c['case']} | {c['data']} | {c['rows_per_s']:,.0f} | "
            f"{c['ratio_to_baseline']:.2f} | {c['median_rows_per_s']:,.0f} | "
            f"{c['median_ratio_to_baseline']:.2f} | {c['cpu_us_per_row']:.2f} | "
            f"{c['cpu_ratio_to_baseline']:.2f} | {first} | "
            f"{'yes' if c['same_predictions'] else 'NO'} |"
        )
    print("(baseline: in-process model.predict, n_jobs=2, measured in the same rounds)")
    print(
        f"\nmodel pickle: {pk['pickled_bytes']:,} bytes; pickle {pk['pickle_s'] * 1e3:.2f} ms, "
        f"unpickle {pk['unpickle_s'] * 1e3:.2f} ms"
    )

    machine["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    report = {
        "command": " ".join(["python", *sys.argv]),
        "setting": {
            "L": L_LABELS,
            "d": GRID,
            "A": N_FEATURES,
            "n_train": N_TRAIN,
            "neurons": neurons,
            "rows": args.rows,
            "chunk_rows": args.chunk_rows,
            "repeats": args.repeats,
            "dtype": "float64",
        },
        "model_pickle": pk,
        "clusters": clusters,
        "cases": cases,
        "dask_config": {
            "nanny_pre_spawn_environ": dask.config.get(
                "distributed.nanny.pre-spawn-environ", default=None
            )
        },
        "machine": machine,
        "wall_s": time.perf_counter() - t_start,
    }
    out = Path(args.json or HERE / "results" / "dask.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwall time {report['wall_s']:.0f} s; JSON written to {out}")
    if not all(c["same_predictions"] for c in cases):
        sys.exit("some case gave other predictions than in-process predict")


if __name__ == "__main__":
    main()
