"""Macro F of the benchmarks' synthetic stream with a share of labels that arrive.

    python benchmarks/labels_bench_stream.py [--dtype float32] [--delay 1000]

The setting of bench_labels.py (``bench_online.make_stream``: L = 7 independent labels, A = 128
features; d = 10, ``fit`` on 20,000 instances, then 20,000 more as the stream in chunks of
1,000 with ``predict_stream(chunk, arrivals=...)``), for label fractions 0, 1 %, 10 % (at
``--delay``) and every label (delay 0). Prints, for each half of the stream, the predicted
cardinality (the true one beside it) and the macro F over the half (per-label F1, 0/0 as 0).
docs/results.md cites it for the labels beyond the ranking.
"""

import argparse
import copy
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from bench_labels import chunks_with_arrivals, fitted  # noqa: E402
from bench_online import make_stream  # noqa: E402

from mlsom.evaluation import confusion_counts, macro_f1  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--delay", type=int, default=1000)
    args = ap.parse_args()
    X, Y = make_stream(40000)
    Xs, Ys = X[20000:].astype(args.dtype), Y[20000:]
    model = fitted(X[:20000], Y[:20000], np.dtype(args.dtype), 10)
    halves = [slice(0, 10000), slice(10000, 20000)]
    print("| labels | " + " | ".join(f"rows {h.start}-{h.stop}" for h in halves) + " |")
    print("|---|---|---|")
    for fraction in (0.0, 0.01, 0.1, 1.0):
        delay = 0 if fraction == 1.0 else args.delay
        m, out = copy.deepcopy(model), []
        for lo, hi, got in chunks_with_arrivals(Xs, Ys, fraction, delay):
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
