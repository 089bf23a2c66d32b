"""The cost of labels that arrive: partial_fit against the unlabelled online step.

Setting of the suite's online section: L = 7 labels, d = 10, A = 128 features, one thread,
float64 and float32. Two measures, each against a baseline timed in the same process, in turn
(a b a b ...), best of ``--repeats``:

* **labelled update**: ``partial_fit`` of n instances (their true labels) against
  ``predict_stream`` of the same n instances from the same model (target: at most 2 x), with
  ``corrections="strong"`` (the default) and ``"tested"`` (the paired test's re-classifications);
* **throughput with 10 % of labels**: the delayed-label protocol (each labelled instance learnt
  right after the instance ``--delay`` later is classified), driven by
  ``predict_stream(chunk, arrivals=...)`` on chunks of 1,000 (as ``mlsom.protocol`` drives it),
  against ``predict_stream`` of the stream in the same chunks (target: at least 80 %): the
  median over ``--repeats`` of the two timed chunk by chunk in turn (``paired_shares``), and
  the best of whole runs; and the
  same protocol written out with a ``predict_stream`` call for each segment between arrivals
  and a ``partial_fit`` call per labelled instance (the Python calls' cost, for comparison);
  and the chunks with ``corrections="tested"``.

    python benchmarks/bench_labels.py [--n-stream 20000] [--repeats 5] [--simd avx2]
                                      [--json out.json]
"""

import argparse
import copy
import json
import os
import platform
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import mlsom  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _suite_common import select_simd  # noqa: E402
from streams import chunks_with_arrivals, labelled_rows, make_stream  # noqa: E402


def fitted(X, Y, dtype, d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        return mlsom.SOMStreamClassifier(grid_size=d, random_state=0, n_jobs=1).fit(
            X.astype(dtype), Y
        )


def in_turn(runs, repeats):
    """Best time of each callable, run in turn (a b a b ...)."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            best[name] = min(best[name], run())
    return best


def protocol(model, X, Y, fraction, delay, seed=0):
    """predict_stream between label arrivals, partial_fit of each labelled row when it is due."""
    chosen, due = labelled_rows(len(X), fraction, delay, seed)
    lo = 0
    for i, t in zip(chosen.tolist(), due.tolist(), strict=True):
        if t >= len(X):
            break
        model.predict_stream(X[lo : t + 1])
        model.partial_fit(X[i : i + 1], Y[i : i + 1])
        lo = t + 1
    if lo < len(X):
        model.predict_stream(X[lo:])


def with_arrivals(model, X, Y, fraction, delay, seed=0, size=1000):
    """The same protocol in chunks of 1,000: each chunk and the labels due during it in one
    predict_stream(X, arrivals=...) call."""
    for lo, hi, got in chunks_with_arrivals(X, Y, fraction, delay, seed, size):
        model.predict_stream(X[lo:hi], arrivals=got)


def paired_shares(model, X, Y, fraction, delay, repeats, seed=0, size=1000):
    """The stream with labels (with_arrivals' protocol) against the stream without, on two
    copies of the model, timed chunk by chunk in turn (which goes first alternates): both meet
    the shared machine as it is at that moment, which the best of whole runs timed one after
    the other does not. Returns each repeat's throughput share, (time without) / (time with)."""
    chunks = list(chunks_with_arrivals(X, Y, fraction, delay, seed, size))
    shares = []
    for _ in range(repeats):
        a, b = copy.deepcopy(model), copy.deepcopy(model)
        t_without = t_with = 0.0
        for j, (lo, hi, got) in enumerate(chunks):
            for first in (j % 2, 1 - j % 2):
                t0 = time.perf_counter()
                if first:
                    b.predict_stream(X[lo:hi], arrivals=got)
                    t_with += time.perf_counter() - t0
                else:
                    a.predict_stream(X[lo:hi])
                    t_without += time.perf_counter() - t0
        shares.append(t_without / t_with)
    return shares


def chunked(model, X, size=1000):
    for lo in range(0, len(X), size):
        model.predict_stream(X[lo : lo + size])


def timed(fn, model, *args):
    m = copy.deepcopy(model)
    t0 = time.perf_counter()
    fn(m, *args)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=20000)
    ap.add_argument("--n-stream", type=int, default=20000)
    ap.add_argument("--grid-size", type=int, default=10)
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--delay", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--simd", default="best", help="the SIMD path: best (default), avx512f, avx2, baseline"
    )
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    simd = select_simd(args.simd)

    X, Y = make_stream(args.n_train + args.n_stream)
    out = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "mlsom": mlsom.__version__,
        "simd": simd,
        "args": vars(args),
        "cases": {},
    }
    print(f"mlsom {mlsom.__version__}, SIMD path {simd}, best of {args.repeats}, in turn")
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        Xs, Ys = Xd[args.n_train :], Y[args.n_train :]
        model = fitted(X[: args.n_train], Y[: args.n_train], dtype, args.grid_size)
        tested = copy.deepcopy(model).set_params(corrections="tested")
        # the labelled update against the unlabelled step, on the same instances and model
        best = in_turn(
            {
                "unlabelled": lambda m=model, Xs=Xs: timed(
                    lambda m_, X_: m_.predict_stream(X_), m, Xs
                ),
                "labelled": lambda m=model, Xs=Xs, Ys=Ys: timed(
                    lambda m_, X_, Y_: m_.partial_fit(X_, Y_), m, Xs, Ys
                ),
                "tested": lambda m=tested, Xs=Xs, Ys=Ys: timed(
                    lambda m_, X_, Y_: m_.partial_fit(X_, Y_), m, Xs, Ys
                ),
            },
            args.repeats,
        )
        update = best["labelled"] / best["unlabelled"]
        update_tested = best["tested"] / best["unlabelled"]
        # the stream with a share of labels against the stream without
        best2 = in_turn(
            {
                "without": lambda m=model, Xs=Xs: timed(chunked, m, Xs),
                "with": lambda m=model, Xs=Xs, Ys=Ys: timed(
                    protocol, m, Xs, Ys, args.fraction, args.delay
                ),
                "arrivals": lambda m=model, Xs=Xs, Ys=Ys: timed(
                    with_arrivals, m, Xs, Ys, args.fraction, args.delay
                ),
                "arrivals_tested": lambda m=tested, Xs=Xs, Ys=Ys: timed(
                    with_arrivals, m, Xs, Ys, args.fraction, args.delay
                ),
            },
            args.repeats,
        )
        paired = paired_shares(model, Xs, Ys, args.fraction, args.delay, args.repeats)
        share = best2["without"] / best2["with"]
        share_arrivals = best2["without"] / best2["arrivals"]
        share_tested = best2["without"] / best2["arrivals_tested"]
        name = np.dtype(dtype).name
        n = len(Xs)
        out["cases"][name] = {
            "predict_stream_us_per_instance": 1e6 * best["unlabelled"] / n,
            "partial_fit_us_per_instance": 1e6 * best["labelled"] / n,
            "labelled_over_unlabelled": update,
            "partial_fit_tested_us_per_instance": 1e6 * best["tested"] / n,
            "labelled_tested_over_unlabelled": update_tested,
            "stream_without_labels_s": best2["without"],
            "stream_with_labels_s": best2["with"],
            "throughput_with_labels_share": share,
            "stream_with_labels_arrivals_s": best2["arrivals"],
            "throughput_with_labels_arrivals_share": share_arrivals,
            "throughput_with_labels_paired_shares": paired,
            "throughput_with_labels_paired_median": float(np.median(paired)),
            "stream_with_labels_arrivals_tested_s": best2["arrivals_tested"],
            "throughput_with_labels_arrivals_tested_share": share_tested,
        }
        print(
            f"{name}: partial_fit {1e6 * best['labelled'] / n:.2f} us/instance, predict_stream "
            f"{1e6 * best['unlabelled'] / n:.2f}: ratio {update:.2f} (target <= 2); stream with "
            f"{args.fraction:.0%} of labels at delay {args.delay}: {np.median(paired):.1%} of the "
            f"throughput without with arrivals= (target >= 80 %; chunks in turn, median of "
            f"{min(paired):.1%}..{max(paired):.1%}; {share_arrivals:.1%} best of whole runs), "
            f"{share:.1%} with a "
            "predict_stream and a partial_fit call per label; corrections='tested': ratio "
            f"{update_tested:.2f}, throughput {share_tested:.1%}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
