"""Two builds of mlsom on the same work, in turn: the before/after table of a change to the core.

    python benchmarks/compare_builds.py --before DIR --after DIR [--simd avx512f,avx2,baseline]
                                        [--rounds N] [--quick] [--json out.json]

DIR is a directory that holds a built ``mlsom`` package (``src`` of a checkout built in place,
or a ``site-packages``). Each round runs one worker process per build, each
timing every case once on every SIMD path asked for; a case's time is its best over the rounds,
so a slow spell of the shared machine falls on both builds. The work is that of
``kernel_gains.py`` (the suite's cases, smaller): ``fit`` of one 10 x 10 map on 20,000 x 100
(10 epochs), ``predict_stream`` over 20,000 instances, frozen ``predict`` of 100,000 rows; float64
and float32; one thread. The per-call cases time what each call costs beyond its rows, on a
robust model that labels have taught (every group of the state held): 500 calls of
``predict_one``, of ``partial_fit`` of one row, and of ``predict_stream`` of 8 rows with the
labels of 2 arriving meanwhile. The builds take turns going first, round by round. The table
gives after / before per case: a change that should not change speed should stay within the
run-to-run noise (a few per cent on this machine).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(simd, quick):
    sys.path.insert(0, str(HERE))
    import kernel_gains

    import mlsom

    if b"__asan_init" in Path(mlsom._core.__file__).read_bytes():
        raise SystemExit(f"{mlsom._core.__file__} is a sanitized build: rebuild it plainly")

    def select(path):
        try:
            from mlsom import _testing

            _testing.select(simd=path)
        except ImportError:  # builds before mlsom._testing
            level = {"baseline": 0, "avx2": 1, "avx512f": 2}[path]
            mlsom._core.set_simd_level(level)

    work = kernel_gains.make_work(quick)
    work.update(per_call_work())
    out = {}
    for path in simd:
        select(path)
        for (use, dt), run in work.items():
            run()  # warm
            out[f"{path} {use} {dt}"] = min(run(), run())
    print(json.dumps({"mlsom": mlsom.__file__, "times": out}))


def per_call_work(n_calls=500):
    """The per-call cases (module docstring), float64 and float32."""
    import copy
    import warnings

    import numpy as np

    import mlsom

    rng = np.random.default_rng(1)
    A, L = 20, 6
    Y = (rng.random((4000, L)) < 0.3).astype(np.uint8)
    X = Y @ rng.normal(scale=2.0, size=(L, A)) + rng.normal(size=(4000, A))
    work = {}
    for dt in (np.float64, np.float32):
        Xd = X.astype(dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = mlsom.SOMStreamClassifier(
                grid_size=3, variant="robust", random_state=0, n_jobs=1
            ).fit(Xd[:1000], Y[:1000])
            base.predict_stream(Xd[1000:1500])
            base.partial_fit(Xd[1000:1200], Y[1000:1200])

        def one(base=base, Xd=Xd):
            m = copy.deepcopy(base)
            t0 = time.perf_counter()
            for i in range(n_calls):
                m.predict_one(Xd[1500 + i])
            return time.perf_counter() - t0

        def labels(base=base, Xd=Xd):
            m = copy.deepcopy(base)
            t0 = time.perf_counter()
            for i in range(n_calls):
                m.partial_fit(Xd[2000 + i : 2001 + i], Y[2000 + i : 2001 + i])
            return time.perf_counter() - t0

        def chunks(base=base, Xd=Xd):
            m = copy.deepcopy(base)
            after = np.array([3, 8])
            t0 = time.perf_counter()
            for i in range(0, 8 * n_calls, 8):
                s = 1500 + i % 2400
                got = (Xd[s : s + 2], Y[s : s + 2].astype(np.int8), after)
                m.predict_stream(Xd[s : s + 8], arrivals=got)
            return time.perf_counter() - t0

        name = np.dtype(dt).name
        work[("predict_one-x500", name)] = one
        work[("partial_fit-1row-x500", name)] = labels
        work[("stream-8rows+2labels-x500", name)] = chunks
    return work


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--before")
    ap.add_argument("--after")
    ap.add_argument("--simd", default="avx512f,avx2,baseline")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    simd = [p for p in args.simd.split(",") if p]
    if args.worker:
        worker(simd, args.quick)
        return
    if not (args.before and args.after):
        ap.error("--before and --after are required")
    best = {"before": {}, "after": {}}
    for r in range(args.rounds):
        # Alternate which build goes first: the first process of a pair can find the machine in
        # another state (caches, frequency) than the second, and that must not fall on one build.
        for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(getattr(args, name)))
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
                env[var] = "1"
            cmd = [sys.executable, __file__, "--worker", "--simd", ",".join(simd)]
            cmd += ["--quick"] if args.quick else []
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"the {name} build failed:\n{proc.stderr[-2000:]}")
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            if r < 2:
                print(f"round {r + 1}, {name}: {got['mlsom']}", flush=True)
            for case, t in got["times"].items():
                best[name][case] = min(t, best[name].get(case, float("inf")))
    print(f"\nbest of {args.rounds} rounds x 2 runs, one thread\n")
    print("| path | case | before | after | after / before |")
    print("|---|---|---|---|---|")
    rows = []
    for case, t0 in best["before"].items():
        t1 = best["after"][case]
        path, use, dt = case.split()
        rows.append({"path": path, "case": f"{use} {dt}", "before_s": t0, "after_s": t1})
        print(f"| {path} | {use} {dt} | {t0 * 1e3:.1f} ms | {t1 * 1e3:.1f} ms | {t1 / t0:.3f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rounds": args.rounds, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
