"""What each hand-written SIMD kernel gains over the plain-C body it replaces, on the suite's work.

    python benchmarks/kernel_gains.py [--quick] [--json out.json] [--simd avx2,avx512f]
                                      [--rounds N] [--kernels gather,max,...]

Every path compiles a plain-C body of each kernel (vectorised by the compiler for that path);
some also have a hand-written AVX2 or AVX-512F version that the dispatch prefers (each family's
file, _kernels_screen.h, _kernels_search.h, ... holds both).
``mlsom._testing.switches(plain=...)`` swaps one of them back to the plain body (the results
are bit-identical: tests/core/test_testing_interface.py), so its gain is measured in one
process, the two variants run in turn (a b a b ...: a slow spell of the shared machine falls
on both), best of ``--rounds`` each, one thread.

The work is the suite's (benchmarks/suite.py), smaller: ``fit`` of one 10 x 10 map on
20,000 x 100 (10 epochs), ``predict_stream`` over 20,000 instances and frozen ``predict`` of
100,000 rows of the L = 7, d = 10, A = 128 model fitted on make_stream's first 20,000 rows;
float64 and float32 X. Each kernel is timed on the work that calls it on that path (the row
below says which). The 16-row predict path of the AVX2 and AVX-512 paths (a family of kernels,
all or none) is measured the same way against the row-by-row path (``lanes=False``).

A kernel earns its lines when it gains about 5 % or more on some work of its path.
"""

import argparse
import copy
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from streams import make_stream, training_data  # noqa: E402

import mlsom  # noqa: E402

# kernel -> the work that calls it, per path (see _kernels.h's dispatch and the core's phases)
WORK = {
    "avx2": {
        # (predict goes 16 rows at a time on this path too: the four-row screen, max and gather
        # serve only its small calls and the rows the 16-row kernels leave over)
        "screen4": ("online",),
        "screen64": ("fit",),
        "max": ("online",),
        "gather": ("online",),
        "lanes": ("predict",),
    },
    "avx512f": {
        "screen4": ("online",),
        "screen64": ("fit",),
        "max": ("online",),
        "gather": ("online",),
        "lanes": ("predict",),
    },
}
DTYPES = (np.float64, np.float32)


def make_work(quick):
    rng = np.random.default_rng(0)
    n = 10_000 if quick else 20_000
    Xt = training_data(rng, n, 100)
    Y1 = np.ones((n, 1), dtype=np.uint8)
    n_stream = 5_000 if quick else 20_000
    n_pred = 25_000 if quick else 100_000
    X, Y = make_stream(20_000 + max(n_stream, n_pred))
    work = {}
    for dt in DTYPES:
        name = dt.__name__
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
            model = mlsom.SOMStreamClassifier(grid_size=10, random_state=0, n_jobs=1)
            model.fit(X[:20_000].astype(dt), Y[:20_000])
        Xs = np.ascontiguousarray(X[20_000 : 20_000 + n_stream], dtype=dt)
        Xp = np.ascontiguousarray(X[20_000 : 20_000 + n_pred], dtype=dt)
        Xf = Xt.astype(dt)

        def fit(Xf=Xf):
            m = mlsom.SOMStreamClassifier(
                grid_size=10, n_epochs=10, max_epochs=10, random_state=0, n_jobs=1
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
                t0 = time.perf_counter()
                m.fit(Xf, Y1)
                return time.perf_counter() - t0

        def online(model=model, Xs=Xs):
            m = copy.deepcopy(model)
            t0 = time.perf_counter()
            m.predict_stream(Xs)
            return time.perf_counter() - t0

        def predict(model=model, Xp=Xp):
            t0 = time.perf_counter()
            model.predict(Xp)
            return time.perf_counter() - t0

        work[("fit", name)] = fit
        work[("online", name)] = online
        work[("predict", name)] = predict
    return work


def measure(run, kernel, rounds):
    """Best of rounds of run with the hand-written kernel and with the plain body, in turn."""
    from mlsom import _testing

    plain = {"lanes": False} if kernel == "lanes" else {"plain": (kernel,)}
    hand, base = [], []
    run()  # warm
    for _ in range(rounds):
        hand.append(run())
        with _testing.switches(**plain):
            base.append(run())
    return min(hand), min(base)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--simd", default="avx2,avx512f")
    ap.add_argument("--kernels", default="", help="comma-separated (default: every kernel)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    from mlsom import _testing

    rounds = args.rounds or (3 if args.quick else 7)
    have = [_testing.SIMD_NAMES[i] for i in _testing.simd_levels()]
    paths = [p for p in args.simd.split(",") if p]
    for p in paths:
        if p not in WORK:
            raise SystemExit(f"--simd {p}: the paths with hand-written kernels are {list(WORK)}")
    missing = [p for p in paths if p not in have]
    if missing:
        print(f"NOTE: this processor lacks {missing}: not measured")
    paths = [p for p in paths if p in have]
    print(
        f"mlsom {mlsom.__version__}, {platform.processor() or platform.machine()}, "
        f"paths {paths}, best of {rounds}, one thread"
    )
    work = make_work(args.quick)
    rows = []
    print(f"{'path':<8} {'kernel':<11} {'work':<16} {'hand ms':>9} {'plain ms':>9} {'gain':>7}")
    for path in paths:
        with _testing.switches(simd=path):
            for kernel, uses in WORK[path].items():
                if args.kernels and kernel not in args.kernels.split(","):
                    continue
                for use in uses:
                    for dt in DTYPES:
                        key = (use, dt.__name__)
                        hand, base = measure(work[key], kernel, rounds)
                        gain = base / hand - 1
                        rows.append(
                            {
                                "path": path,
                                "kernel": kernel,
                                "work": f"{use} {dt.__name__}",
                                "hand_s": hand,
                                "plain_s": base,
                                "gain": gain,
                            }
                        )
                        print(
                            f"{path:<8} {kernel:<11} {use + ' ' + dt.__name__:<16} "
                            f"{hand * 1e3:9.1f} {base * 1e3:9.1f} {gain:+7.1%}",
                            flush=True,
                        )
    print("\nbest gain per kernel (a kernel stays when it gains about 5 % or more somewhere):")
    for path in paths:
        for kernel in WORK[path]:
            mine = [r for r in rows if r["path"] == path and r["kernel"] == kernel]
            if not mine:
                continue
            top = max(mine, key=lambda r: r["gain"])
            print(f"  {path:<8} {kernel:<11} {top['gain']:+7.1%} ({top['work']})")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": rounds, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
