"""Online speed with novelty detection on (``novelty=True``) against off, in one process, on
streams without new labels.

Usage::

    python benchmarks/novelty_speed.py [--repeats 5] [--n 100000] [--simd best]
        [--novelty-radius 1.0] [--json out.json]

Two streams, each fitted once per setting, float64:

* ``suite``: the suite's benchmark setting (``_suite_common``: L = 7 labels, d = 10, A = 128,
  fitted on the first 20,000 rows of ``make_stream``), the next ``--n`` rows;
* ``spherical``: MOA-Spher-5C-2A (5 labels, A = 2, d = 5; its labelled set, then its stream):
  the cheapest online step the package has, where the detection's own work weighs most.

Each repeat runs ``predict_stream`` over the stream on a fresh copy of each fitted model, the
two settings in turn (a b a b ...); the best time of each is kept. Detection on uses
``--novelty-radius`` (the estimator's ``novelty_radius``, default 1.0). The ratio is on / off
instances per second (the target: at least 0.7). One thread. Also reported: the share of rows
left unknown and the new labels made, on that stream without new labels.
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
from mlsom.datasets import load


def _streams(n):
    X, Y = make_stream(N_TRAIN + n)
    yield "suite", GRID, X[:N_TRAIN], Y[:N_TRAIN], X[N_TRAIN:]
    ds = load("MOA-Spher-5C-2A", random_state=0)
    yield "spherical", 5, np.asarray(ds.X_train), np.asarray(ds.Y_train), np.asarray(ds.X_stream)


def main():
    extra = [("--novelty-radius", float, 1.0)]
    opts, simd = speed_options(__doc__.splitlines()[0], 5, 100_000, extra)
    out = {"simd": simd, "novelty_radius": opts.novelty_radius}
    for name, d, X_tr, Y_tr, X in _streams(opts.n):
        models = {}
        for novelty in (False, True):
            m = mlsom.SOMStreamClassifier(
                grid_size=d,
                random_state=0,
                novelty=novelty,
                novelty_radius=opts.novelty_radius,
                n_jobs=1,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
                m.fit(X_tr, Y_tr)
            models[novelty] = m
        best = {v: np.inf for v in models}
        unknown = made = None
        for _ in range(opts.repeats):
            for v, m in models.items():
                mc = copy.deepcopy(m)
                t0 = time.perf_counter()
                _, unk = mc.predict_stream(X, return_unknown=True)
                best[v] = min(best[v], time.perf_counter() - t0)
                if v:
                    unknown, made = float(unk.mean()), len(mc.new_labels_)
        ratio = best[False] / best[True]
        out[name] = {
            "rows": int(X.shape[0]),
            "best_s": {"off": best[False], "on": best[True]},
            "speed_ratio": ratio,
            "unknown_rate": unknown,
            "new_labels_made": made,
        }
        print(
            f"{name}: {X.shape[0]} rows, off {X.shape[0] / best[False]:,.0f} /s, on "
            f"{X.shape[0] / best[True]:,.0f} /s: ratio {ratio:.3f} (target >= 0.7); unknown "
            f"{unknown:.1%}, new labels made {made}"
        )
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
