"""How mlsom's costs grow with labels, grid size, features and stream length.

    python benchmarks/bench_scaling.py [--quick] [--threads 1] [--epochs 20] [--json out.json]

One factor at a time around L = 7 labels, d = 10 (10 x 10 maps), A = 128 features (data from
``streams.make_stream``): L in 2, 7, 20, 50; d in 5, 10, 20; A in 16, 64, 128, 512. For each
setting: ``fit`` time on 20,000 instances (``n_epochs = max_epochs = --epochs``, so every map
runs the same number of epochs), ``predict_stream`` time per instance over 20,000 instances, and
frozen ``predict`` throughput on 100,000 rows (n_jobs = --threads). Stream length: the base
model's ``predict_stream`` per-instance time over 10^4, 10^5 and 10^6 instances (it should be
flat). Timings are the best of a few runs with ``time.perf_counter``; "x base" divides by the
base setting's figure measured in the same run. ``--quick`` drops the largest settings (L = 50,
d = 20, A = 512, 10^6 instances).

The script re-executes itself with OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS /
BLIS_NUM_THREADS set to --threads and OPENBLAS_CORETYPE dropped (as ``env -u OPENBLAS_CORETYPE``
would). Prints a markdown table; writes JSON (default benchmarks/results/scaling[-quick].json).
"""

import argparse
import copy
import json
import os
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _suite_common import (  # noqa: E402
    THREAD_VARS,
    bench_env,
    best_of,
    machine_info,
    mlsom,
    model_dtype,
    thread_check,
)
from streams import make_stream  # noqa: E402

BASE = {"L": 7, "d": 10, "A": 128}
N_TRAIN, N_STREAM, N_PREDICT = 20_000, 20_000, 100_000


def measure(L, d, A, threads, epochs, repeats):
    X, Y = make_stream(N_TRAIN + max(N_STREAM, N_PREDICT), L=L, A=A)
    Xtr, Ytr, Xs = X[:N_TRAIN], Y[:N_TRAIN], X[N_TRAIN:]
    kept = {}

    def run_fit():
        m = mlsom.SOMStreamClassifier(
            grid_size=d, n_epochs=epochs, max_epochs=epochs, random_state=0, n_jobs=threads
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
            t0 = time.perf_counter()
            m.fit(Xtr, Ytr)
            dt = time.perf_counter() - t0
        kept["model"] = m
        return dt

    fit_s, _ = best_of(run_fit, repeats, budget_s=5)
    model = kept["model"]

    def run_stream():
        m = copy.deepcopy(model)
        t0 = time.perf_counter()
        m.predict_stream(Xs[:N_STREAM])
        return time.perf_counter() - t0

    stream_s, _ = best_of(run_stream, repeats, budget_s=10)

    def run_predict():
        t0 = time.perf_counter()
        model.predict(Xs[:N_PREDICT])
        return time.perf_counter() - t0

    predict_s, _ = best_of(run_predict, repeats, budget_s=10)
    return model, {
        "neurons": int(sum(w.shape[0] for w in model.weights_ if w is not None)),
        "model_dtype": model_dtype(model),
        "n_iter_max": int(max(model.n_iter_)),
        "fit_s": fit_s,
        "stream_us": stream_s / N_STREAM * 1e6,
        "predict_rows_per_s": N_PREDICT / predict_s,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="output (default benchmarks/results/scaling[-quick].json)")
    args = ap.parse_args()
    if "OPENBLAS_CORETYPE" in os.environ or any(
        os.environ.get(v) != str(args.threads) for v in THREAD_VARS
    ):
        env = bench_env(args.threads)
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]], env)
    if mlsom is None:
        sys.exit("mlsom does not import")

    grid = {"L": [2, 7, 20, 50], "d": [5, 10, 20], "A": [16, 64, 128, 512]}
    lengths = [10_000, 100_000, 1_000_000]
    if args.quick:
        grid = {"L": [2, 7, 20], "d": [5, 10], "A": [16, 64, 128]}
        lengths = [10_000, 100_000]
    t_start = time.perf_counter()
    print(
        f"threads {args.threads}, fit epochs {args.epochs}, fit on {N_TRAIN:,}, "
        f"predict_stream over {N_STREAM:,}, predict on {N_PREDICT:,} rows"
    )
    base_model, base = measure(
        **BASE, threads=args.threads, epochs=args.epochs, repeats=args.repeats
    )
    rows = []
    for factor, values in grid.items():
        for v in values:
            setting = {**BASE, factor: v}
            if v == BASE[factor]:
                r = base
            else:
                _, r = measure(
                    **setting, threads=args.threads, epochs=args.epochs, repeats=args.repeats
                )
            rows.append({"factor": factor, **setting, **r})
            print(
                f"  {factor}={v}: M={r['neurons']}, fit {r['fit_s']:.2f} s, "
                f"predict_stream {r['stream_us']:.2f} us/inst, "
                f"predict {r['predict_rows_per_s']:,.0f} rows/s",
                flush=True,
            )

    # stream length: the base model, per-instance time over longer and longer streams
    X, _ = make_stream(N_TRAIN + max(lengths))  # the base setting's distribution
    lengths_rows = []
    for n in lengths:
        Xs = X[N_TRAIN : N_TRAIN + n]

        def run(Xs=Xs):
            m = copy.deepcopy(base_model)
            t0 = time.perf_counter()
            m.predict_stream(Xs)
            return time.perf_counter() - t0

        best, runs = best_of(run, args.repeats, budget_s=15)
        lengths_rows.append({"n": n, "stream_us": best / n * 1e6, "runs": runs})
        print(f"  stream of {n:,}: {best / n * 1e6:.2f} us/inst", flush=True)

    print(
        "\n| factor | L | d | A | neurons | fit s | x base | predict_stream us/inst | x base "
        "| predict rows/s | x base |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['factor']} | {r['L']} | {r['d']} | {r['A']} | {r['neurons']} | "
            f"{r['fit_s']:.3f} | {r['fit_s'] / base['fit_s']:.2f} | {r['stream_us']:.2f} | "
            f"{r['stream_us'] / base['stream_us']:.2f} | {r['predict_rows_per_s']:,.0f} | "
            f"{r['predict_rows_per_s'] / base['predict_rows_per_s']:.2f} |"
        )
    print("\n| stream length | predict_stream us/inst | x shortest |")
    print("|---|---|---|")
    for r in lengths_rows:
        ratio = r["stream_us"] / lengths_rows[0]["stream_us"]
        print(f"| {r['n']:,} | {r['stream_us']:.2f} | {ratio:.2f} |")

    out = Path(args.json or HERE / "results" / f"scaling{'-quick' if args.quick else ''}.json")
    report = {
        "command": " ".join(["python", *sys.argv]),
        "threads": args.threads,
        "epochs": args.epochs,
        "base": {**BASE, **base},
        "factors": rows,
        "stream_length": lengths_rows,
        "wall_s": time.perf_counter() - t_start,
        "thread_check": thread_check(args.threads),
        "machine": machine_info(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwall time {report['wall_s']:.0f} s; JSON written to {out}")


if __name__ == "__main__":
    main()
