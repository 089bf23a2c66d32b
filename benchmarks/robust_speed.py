"""Online speed of ``variant="robust"`` against the paper's variant, in one process.

Usage::

    python benchmarks/robust_speed.py [--repeats 7] [--n 100000] [--drift 0] [--simd best]
        [--json out.json]

The suite's benchmark setting (``_suite_common``: L = 7 labels, d = 10, A = 128, the model fitted
on the first 20,000 rows of ``make_stream``), fitted once per variant, float64 and float32. Each
repeat runs ``predict_stream`` over the next ``--n`` rows on a fresh copy of each fitted model,
the two variants in turn (a b a b ..., so that a slow spell of the shared machine falls on both);
the best time of each is kept. The ratio is robust / paper instances per second (target >= 0.8).
One thread (the online phase is sequential).

``--drift k`` adds a linear drift to the stream: row i of the n moves by k (i / n) times each
feature's standard deviation in the training rows, so that the robust variant's drift gates
open and its maps move as a whole (its slowest online step); the labels whose gate opened are
reported.
"""

from __future__ import annotations

import copy
import json
import time
import warnings

import numpy as np
from _suite_common import GRID, N_TRAIN, speed_options
from streams import make_stream

import mlsom


def main():
    opts, simd = speed_options(__doc__.splitlines()[0], 7, 100_000, extra=[("--drift", float, 0.0)])
    X, Y = make_stream(N_TRAIN + opts.n)
    out = {"simd": simd}
    for dt in (np.float64, np.float32):
        Xd = X.astype(dt)
        models = {}
        for variant in ("paper", "robust"):
            m = mlsom.SOMStreamClassifier(grid_size=GRID, random_state=0, variant=variant, n_jobs=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
                m.fit(Xd[:N_TRAIN], Y[:N_TRAIN])
            models[variant] = m
        best = {v: np.inf for v in models}
        rest = Xd[N_TRAIN:]
        if opts.drift:
            ramp = np.linspace(0.0, opts.drift, len(rest))[:, None]
            rest = (rest + ramp * Xd[:N_TRAIN].std(axis=0)).astype(dt)
        moving = None
        for _ in range(opts.repeats):
            for v, m in models.items():
                mc = copy.deepcopy(m)
                t0 = time.perf_counter()
                mc.predict_stream(rest)
                best[v] = min(best[v], time.perf_counter() - t0)
                if v == "robust":
                    moving = int(mc.moving_maps_.sum())
        sizes = {
            v: int(sum(len(w) for w in m.weights_ if w is not None)) for v, m in models.items()
        }
        ratio = best["paper"] / best["robust"]
        out[dt.__name__] = {
            "best_s": best,
            "neurons": sizes,
            "speed_ratio": ratio,
            "moving_maps": moving,
        }
        rate = {v: f"{opts.n / best[v]:,.0f} inst/s ({sizes[v]} neurons)" for v in models}
        print(
            f"{dt.__name__}: paper {rate['paper']}, robust {rate['robust']}, "
            f"{moving} of {len(models['robust'].weights_)} maps moving as a whole: "
            f"robust / paper speed {ratio:.2f} (target >= 0.8)"
        )
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"command": vars(opts), "results": out}, f, indent=1)


if __name__ == "__main__":
    main()
