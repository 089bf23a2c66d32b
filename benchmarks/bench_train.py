"""Batch training time of one 10 x 10 map on 20,000 x 100 data for 10 epochs, against NumPy + BLAS.

Both start from the same initial neurons and run the same number of epochs with the same bubble
schedule; the baseline takes its distances and unit sums from BLAS matrix products. Thread count:
``--threads`` (default 1) for both (OpenMP in mlsom, OpenBLAS in NumPy).

    python benchmarks/bench_train.py [--threads 1] [--repeats 3]
"""

import argparse
import os
import sys
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--n", type=int, default=20_000)
ap.add_argument("--features", type=int, default=100)
ap.add_argument("--grid-size", type=int, default=10)
ap.add_argument("--epochs", type=int, default=10)
ap.add_argument("--repeats", type=int, default=3)
args = ap.parse_args()
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402

import mlsom  # noqa: E402
from mlsom import _core  # noqa: E402
from mlsom._grid import grid_distances, initial_radius  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _baselines import numpy_batch_som  # noqa: E402
from streams import training_data  # noqa: E402


def blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return "; ".join(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} "
        f"x{i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )


def main():
    rng = np.random.default_rng(0)
    d, M = args.grid_size, args.grid_size**2
    X = training_data(rng, args.n, args.features)
    init = rng.choice(args.n, size=M, replace=False)
    G, r0 = grid_distances(d), initial_radius(d)
    print(
        f"mlsom {mlsom.__version__}; simd {_core.simd_info()[0]}; openmp {_core.openmp_enabled()}; "
        f"BLAS: {blas_info()}"
    )
    print(
        f"{args.n} x {args.features} data, {d} x {d} map, {args.epochs} epochs, "
        f"{args.threads} thread(s)"
    )

    # all repeats of mlsom first, then the baseline's: OpenBLAS threads keep spinning for a while
    # after a call and would steal cores from the OpenMP threads of the next mlsom run
    t_ours, t_np = float("inf"), float("inf")
    for _ in range(args.repeats):
        Wt = np.ascontiguousarray(X[init].T)
        bmu = np.empty(args.n, dtype=np.int64)
        bd2 = np.empty(args.n)
        t = time.perf_counter()
        # max_epochs = n_epochs: exactly the scheduled epochs (unless the last ones converge)
        epochs, _ = _core.train_map(
            X, Wt, G, r0, args.epochs, args.epochs, False, bmu, bd2, args.threads
        )
        t_ours = min(t_ours, time.perf_counter() - t)
    for _ in range(args.repeats):
        t = time.perf_counter()
        W_np, bmu_np = numpy_batch_som(X, X[init], epochs)
        t_np = min(t_np, time.perf_counter() - t)
    agree = np.mean(bmu == bmu_np)
    wdiff = np.abs(Wt.T - W_np).max()
    print(
        f"mlsom train_map : {t_ours * 1e3:8.1f} ms  ({epochs} epochs, "
        f"{t_ours / epochs * 1e3:.1f} ms/epoch)"
    )
    print(
        f"NumPy + BLAS    : {t_np * 1e3:8.1f} ms  (same epochs; assignments agree on {agree:.4%}, "
        f"max |W diff| {wdiff:.1e})"
    )
    print(f"ratio mlsom/NumPy time: {t_ours / t_np:.2f}  (target <= 2)")

    # the public path: fit() of one label (includes mapping, discards and averOut)
    Y = np.ones((args.n, 1), dtype=np.uint8)
    model = mlsom.SOMStreamClassifier(
        grid_size=d,
        n_epochs=args.epochs,
        max_epochs=args.epochs,
        random_state=0,
        n_jobs=args.threads,
    )
    t = time.perf_counter()
    model.fit(X, Y)
    print(
        f"SOMStreamClassifier.fit: {(time.perf_counter() - t) * 1e3:.1f} ms "
        f"({model.n_iter_[0]} epochs)"
    )


if __name__ == "__main__":
    main()
