"""Online throughput of predict_stream against a vectorised-NumPy per-instance loop.

Setting of issue 2: L = 7 labels, d = 10, A = 128 features, float64, one thread. Both run on the
same fitted model and the same stream in this process; the NumPy loop runs on a shorter prefix
(it is slow) and its predictions are checked against mlsom's on that prefix.

    python benchmarks/bench_online.py [--n-stream 100000] [--repeats 3]
"""

import argparse
import copy
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import mlsom  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _baselines import NumpyOnline  # noqa: E402
from streams import make_stream  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=20000)
    ap.add_argument("--n-stream", type=int, default=100_000)
    ap.add_argument("--n-numpy", type=int, default=3000)
    ap.add_argument("--grid-size", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    X, Y = make_stream(args.n_train + args.n_stream)
    Xtr, Ytr, Xs = X[: args.n_train], Y[: args.n_train], X[args.n_train :]
    model = mlsom.SOMStreamClassifier(grid_size=args.grid_size, random_state=0, n_jobs=1)
    model.fit(Xtr, Ytr)
    sizes = [w.shape[0] for w in model.weights_]
    print(
        f"mlsom {mlsom.__version__}; simd {mlsom._core.simd_info()[0]}; "
        f"L=7 A=128 d={args.grid_size}: {sum(sizes)} neurons {sizes}, k_nn={model.k_nn_}"
    )

    best = float("inf")
    for _ in range(args.repeats):
        m = copy.deepcopy(model)
        t = time.perf_counter()
        out = m.predict_stream(Xs)
        best = min(best, time.perf_counter() - t)
    ours = len(Xs) / best
    print(
        f"predict_stream : {ours:12,.0f} instances/s  ({len(Xs)} instances, "
        f"best of {args.repeats}; "
        f"mean |Y| = {out.sum(1).mean():.2f})"
    )

    nb = NumpyOnline(copy.deepcopy(model))
    Xn = Xs[: args.n_numpy]
    t = time.perf_counter()
    out_np = nb.run(Xn)
    base = len(Xn) / (time.perf_counter() - t)
    same = np.array_equal(out_np, out[: len(Xn)])
    print(
        f"NumPy loop     : {base:12,.0f} instances/s  ({len(Xn)} instances; "
        f"same predictions: {same})"
    )
    print(f"ratio          : {ours / base:12.1f} x")

    m = copy.deepcopy(model)
    m.set_params(n_jobs=None)
    t = time.perf_counter()
    m.predict(Xs)
    print(
        f"predict (frozen, n_jobs=None -> {os.cpu_count()} threads): "
        f"{len(Xs) / (time.perf_counter() - t):12,.0f} instances/s"
    )
    if not same:
        sys.exit("the NumPy baseline and mlsom disagree")


if __name__ == "__main__":
    main()
