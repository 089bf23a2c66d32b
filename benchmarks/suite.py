"""Benchmark suite: mlsom beside its peers and the BLAS floors, each ratio measured in one run.

    python benchmarks/suite.py [--quick] [--json out.json] [--only train,online,predict,memory]
                               [--repeats N] [--simd best|avx512f|avx2|baseline]

This file is the driver (options, one worker process per section and thread count, the tables,
the JSON); each section is a module of its own (``_suite_train.py``, ``_suite_online.py``,
``_suite_predict.py``, ``_suite_memory.py``) over the shared parts in ``_suite_common.py``.

Setting unless stated: L = 7 labels, 10 x 10 maps (d = 10), A = 128 features, data from
``streams.make_stream``. Sections (each ratio's cases run in one process, best of a few
repeats with ``time.perf_counter``; on one thread mlsom and its floor run in turn, a b a b ..., so
that a slow spell of the shared machine falls on both; with two threads each runs its repeats in
a block after a pause, since a thread pool keeps spinning after a parallel call and would slow
the other's):

* ``train`` (1 and 2 threads): batch SOM training of one 10 x 10 map on 20,000 x 100 data for 10
  epochs. mlsom is ``SOMStreamClassifier(grid_size=10, n_epochs=10, max_epochs=10).fit(X, Y)``
  with Y a single all-ones label column (one map), on float64 X and on float32 X; peers: somoclu
  (compiled dense CPU batch kernel, hexagonal grid, float32), MiniSom ``train_batch`` (10 x n
  iterations; timed on one epoch and extrapolated only when the whole would pass 60 s),
  ``_baselines.numpy_batch_som`` (NumPy + BLAS); floor: 10 distance products X @ W.T alone.
  Ratios: mlsom / GEMM floor (target <= 2), somoclu / mlsom (target >= 10).
* ``online`` (1 thread): ``predict_stream`` over 100,000 instances after ``fit`` on 20,000
  (float64 and float32 X) against the floor of one BLAS matrix-vector product per instance over
  the model's neuron matrix (M x 128): (a) ``np.dot(W, x, out=o)`` in a Python loop less the
  per-call overhead of a 1 x 1 product, (b) dgemv / sgemv in a compiled loop
  (benchmarks/_floor.pyx, built at run time with Cython under the temporary directory; (a) is used
  when that fails). Ratio mlsom / floor, target <= 1.5. Peers on a prefix of the same stream:
  river binary relevance (``multioutput.PerOutputClassifier``) and classifier chain
  (``multioutput.ClassifierChain``), each over Hoeffding trees and over standardised logistic
  regression, all test-then-train (they see the labels: incremental upper bounds), warmed on a
  prefix of the training set first; mlsom's MINAS-BR; the NumPy per-instance loop
  (``_baselines.NumpyOnline``, predictions checked against mlsom's). Ratio peer / mlsom time per
  instance (target >= 50 against river BR with Hoeffding trees).
* ``predict`` (1 and 2 threads): frozen ``model.predict`` on 1,000,000 rows (float64 and
  float32), n_jobs = threads, against the GEMM floor X @ W.T over the same rows and neurons, in
  chunks of 4,096 rows. Ratio mlsom / floor, target <= 2 on 2 threads.
* ``memory`` (1 thread): resident memory of a 10,000,000-instance ``predict_stream`` in chunks of
  100,000 generated on the fly; VmRSS from /proc/self/status after each chunk; flat means growth
  (final - after the first chunk) < 20 MB.

``--quick`` runs fewer repeats, shorter peer prefixes, 250,000 rows for ``predict`` and 1,000,000
instances for ``memory`` (about 1 minute; the full suite takes about 3.5 on 2 cores).

Each section (and each thread count) runs in a subprocess whose environment sets
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and BLIS_NUM_THREADS to the thread count
and drops OPENBLAS_CORETYPE (as ``env -u OPENBLAS_CORETYPE`` would: a forced core type keeps
OpenBLAS off the best kernel for this processor); threadpoolctl's ``threadpool_info()`` is
recorded there and checked against the thread count (OpenMP reads OMP_NUM_THREADS once, when its
runtime loads, so a thread count is fixed per process). The machine is shared and noisy: compare
ratios, and rerun a suspicious one.

``--simd`` runs mlsom on one SIMD path (``mlsom._testing.select``; refused when the processor
lacks it) and its BLAS floors on the OpenBLAS kernel of the same instruction set
(``OPENBLAS_CORETYPE``: SkylakeX for AVX-512, Haswell for AVX2, Nehalem for the SSE2 baseline),
so that each path's ratios compare like with like. The default, ``best``, leaves both at the best
this processor has.

Peers (the ``bench`` extra): ``pip install threadpoolctl MiniSom river swig``, then
``CUDAHOME=/nonexistent pip install --no-build-isolation somoclu`` (built from source with
OpenMP; the suite checks that its compiled core is the one used). A missing peer is reported and
skipped. The JSON (``--json``, default benchmarks/results/suite[-quick].json) holds the machine
(CPU, cores, NumPy's build and BLAS configuration, thread pools, versions of every peer), every
case and every ratio.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _suite_common import (
    GRID,
    HERE,
    L_LABELS,
    MLSOM_ERROR,
    N_FEATURES,
    N_TRAIN,
    SIMD_PATHS,
    Recorder,
    bench_env,
    cpu_busy,
    machine_info,
    select_simd,
    thread_check,
)
from _suite_memory import section_memory
from _suite_online import section_online
from _suite_predict import section_predict
from _suite_train import section_train

SECTIONS = {
    "train": (section_train, (1, 2)),
    "online": (section_online, (1,)),
    "predict": (section_predict, (1, 2)),
    "memory": (section_memory, (1,)),
}


# --------------------------------------------------------------------------- driver


def worker(opts):
    fn = SECTIONS[opts.worker][0]
    rec = Recorder(opts.worker, opts.threads)
    simd_path = select_simd(opts.simd) if MLSOM_ERROR is None else None
    t0 = time.perf_counter()
    err = None
    try:
        info = fn(rec, opts)
    except Exception as exc:  # record what was measured so far
        info, err = {}, f"{type(exc).__name__}: {exc}"
        print(f"  [{opts.worker} x{opts.threads}] failed: {err}", flush=True)
    result = {
        "section": opts.worker,
        "threads": opts.threads,
        "simd": simd_path,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "info": info,
        "error": err,
        "thread_check": thread_check(opts.threads),
        "mlsom_error": MLSOM_ERROR,
        "cases": rec.cases,
        "ratios": rec.ratios,
        "wall_s": time.perf_counter() - t0,
    }
    tc = result["thread_check"]
    if tc["ok"] is False:
        bad = [(p["internal_api"], p["num_threads"]) for p in tc["pools"]]
        print(f"  WARNING: thread pools not at {opts.threads}: {bad}", flush=True)
    Path(opts.result).write_text(json.dumps(result, default=str))


def fmt(v, digits=4):
    if v is None:
        return "n/a"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return f"{v:,.{digits}g}"


def print_tables(results, out=sys.stdout):
    print("\n## Cases\n", file=out)
    print("| section | case | threads | dtype | value | unit | note |", file=out)
    print("|---|---|---|---|---|---|---|", file=out)
    for r in results:
        for c in r["cases"].values():
            note = c.get("error") or c.get("note") or ""
            print(
                f"| {c['section']} | {c['case']} | {c['threads']} | {c['dtype']} | "
                f"{fmt(c['value'])} | {c['unit']} | {note} |",
                file=out,
            )
    print("\n## Ratios (time / time)\n", file=out)
    print("| ratio | threads | dtype | value | target | met | note |", file=out)
    print("|---|---|---|---|---|---|---|", file=out)
    for r in results:
        for q in r["ratios"]:
            met = {True: "yes", False: "NO", None: ""}[q["met"]]
            print(
                f"| {q['name']} | {q['threads']} | {q['dtype']} | {fmt(q['value'], 3)} | "
                f"{q['target']} | {met} | {q['note']} |",
                file=out,
            )
    busy = [(r["section"], r["threads"], r.get("cpu_busy_before")) for r in results]
    print(
        "\nCPUs busy with other work just before each section: "
        + ", ".join(f"{s} x{t}: {'n/a' if b is None else f'{b:.0%}'}" for s, t, b in busy),
        file=out,
    )
    checks = [(r["section"], r["threads"], r["thread_check"]["ok"]) for r in results]
    print(
        "\nthread counts held (threadpoolctl): "
        + ", ".join(f"{s} x{t}: {ok}" for s, t, ok in checks),
        file=out,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="about 3 minutes instead of 10")
    ap.add_argument("--json", help="output file (default benchmarks/results/suite[-quick].json)")
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--repeats", type=int, help="timed runs per fast case (default 5, quick 3)")
    ap.add_argument(
        "--simd",
        choices=list(SIMD_PATHS),
        default="best",
        help="mlsom's SIMD path, with BLAS floors on the same instruction set (default best)",
    )
    ap.add_argument("--worker", choices=list(SECTIONS), help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.repeats is None:
        opts.repeats = 3 if opts.quick else 5
    if opts.worker:
        return worker(opts)

    only = opts.only.split(",") if opts.only else list(SECTIONS)
    unknown = set(only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections {sorted(unknown)}; choose from {list(SECTIONS)}")
    suffix = ("-quick" if opts.quick else "") + ("" if opts.simd == "best" else f"-{opts.simd}")
    out_json = Path(opts.json or HERE / "results" / f"suite{suffix}.json")
    select_simd(opts.simd)  # refuse a path this processor lacks before any work
    t_start = time.perf_counter()
    machine = machine_info()
    print(
        f"{machine['cpu_model']}, {machine['cpu_count']} cores; Python {machine['python']}; "
        + ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    )
    if MLSOM_ERROR:
        print(f"mlsom does not import: {MLSOM_ERROR}")
    results = []
    with tempfile.TemporaryDirectory(prefix="mlsom-suite-") as tmp:
        for section in only:
            for threads in SECTIONS[section][1]:
                busy = cpu_busy()
                print(f"\n== {section}, {threads} thread(s) ==", flush=True)
                if busy is not None and busy > 0.25:
                    print(f"  note: the CPUs were {busy:.0%} busy with other work just before")
                res_file = Path(tmp) / f"{section}-{threads}.json"
                cmd = [sys.executable, __file__, "--worker", section, "--threads", str(threads)]
                cmd += ["--repeats", str(opts.repeats), "--cache", tmp, "--result", str(res_file)]
                cmd += ["--simd", opts.simd]
                cmd += ["--quick"] if opts.quick else []
                try:
                    proc = subprocess.run(cmd, env=bench_env(threads, opts.simd), timeout=1800)
                    rc = proc.returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                if res_file.exists():
                    results.append(json.loads(res_file.read_text()))
                else:
                    results.append(
                        dict(
                            section=section,
                            threads=threads,
                            error=f"worker exited with {rc} and no result",
                            cases={},
                            ratios=[],
                            thread_check={"ok": None},
                        )
                    )
                    print(f"  worker exited with {rc} and no result")
                results[-1]["cpu_busy_before"] = busy
    machine["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print_tables(results)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "quick": opts.quick,
        "repeats": opts.repeats,
        "simd": opts.simd,
        "setting": {"L": L_LABELS, "d": GRID, "A": N_FEATURES, "n_train": N_TRAIN},
        "wall_s": time.perf_counter() - t_start,
        "machine": machine,
        "results": results,
        "ratios": [q for r in results for q in r["ratios"]],
    }
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwall time {report['wall_s']:.0f} s; JSON written to {out_json}")


if __name__ == "__main__":
    main()
