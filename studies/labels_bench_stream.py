"""Macro F of the benchmarks' synthetic stream with a share of labels that arrive.

    python -m studies.labels_bench_stream [--dtype float32] [--delay 1000]

The setting of benchmarks/bench_labels.py (``make_stream`` of benchmarks/streams.py: L = 7
independent labels, A = 128 features; d = 10, ``fit`` on 20,000 instances, then 20,000 more as
the stream in chunks of 1,000 with ``predict_stream(chunk, arrivals=...)``), for label fractions
0, 1 %, 10 % (at ``--delay``) and every label (delay 0). Prints, for each half of the stream, the
predicted cardinality (the true one beside it) and the macro F over the half (per-label F1, 0/0
as 0).
docs/results.md cites it for the labels beyond the ranking.
"""

import argparse
import copy
import os
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import mlsom  # noqa: E402
from mlsom.evaluation import confusion_counts, macro_f1  # noqa: E402
from studies._shared import benchmark_streams  # noqa: E402

streams = benchmark_streams()  # benchmarks/streams.py


def fitted(X, Y, dtype, d):
    """bench_labels.py's model: d x d maps fitted on X (as ``dtype``), one thread."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        return mlsom.SOMStreamClassifier(grid_size=d, random_state=0, n_jobs=1).fit(
            X.astype(dtype), Y
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--delay", type=int, default=1000)
    args = ap.parse_args()
    X, Y = streams.make_stream(40000)
    Xs, Ys = X[20000:].astype(args.dtype), Y[20000:]
    model = fitted(X[:20000], Y[:20000], np.dtype(args.dtype), 10)
    halves = [slice(0, 10000), slice(10000, 20000)]
    print("| labels | " + " | ".join(f"rows {h.start}-{h.stop}" for h in halves) + " |")
    print("|---|---|---|")
    for fraction in (0.0, 0.01, 0.1, 1.0):
        delay = 0 if fraction == 1.0 else args.delay
        m, out = copy.deepcopy(model), []
        for lo, hi, got in streams.chunks_with_arrivals(Xs, Ys, fraction, delay):
            out.append(m.predict_stream(Xs[lo:hi], arrivals=got if len(got[0]) else None))
        P = np.concatenate(out)
        cells = []
        for h in halves:
            f1 = macro_f1(confusion_counts(Ys[h], P[h]), zero_division=0)
            card, true = P[h].sum(1).mean(), Ys[h].sum(1).mean()
            cells.append(f"macro F {f1:.3f}, {card:.2f} labels (true {true:.2f})")
        print(f"| {fraction:g} at delay {delay} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
