"""The paper's variant beside ``variant="robust"``, run for run: macro F and predicted cardinality.

Usage::

    python -m studies.robust_variant --data-home DIR [--streams A,B] [--grid-sizes 2,5,10]
        [--seeds 10] [--n-instances 20000] [--workers 2] [--stream-source SOURCE]
        [--json out.json]

``--grid-sizes`` may include ``auto`` (``grid_size="auto"``, each variant choosing with its own
online phase).

Every (stream, d, seed) runs twice through ``mlsom.experiment.run_one`` (the paper's protocol:
fit on the stream's training set, then the online phase over the rest), once per variant, with
nothing else changed. For each run: the mean over the 50 windows of the cumulative macro F (the
figure of docs/results.md) and the predicted cardinality of the whole test stream, beside the
true one. The table gives, per stream and d, the mean over the seeds of both variants, their
difference, and the cardinalities. Real streams are read from ``--data-home`` (MOA-Spher-2C-2A
is also in ``tests/data``); generated ones get ``--n-instances`` (their Table 1 size with 0), and
the generated MOA-Spher ones ``--stream-source`` (``mlsom.experiment.Run``'s ``stream_source``:
``generator-v2`` gives the 3C-2A of the tables measured before it had its own calibration).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from mlsom.experiment import STREAM_SOURCES, Run, run_one
from studies._shared import scores

REAL = {"MOA-Spher-2C-2A", "Scene", "Yeast"}
DEFAULT_STREAMS = [
    "MOA-Spher-2C-2A",
    "Scene",
    "Yeast",
    "Mult-Non-Spher-WF",
    "Mult-Non-Spher-RT",
    "Mult-Non-Spher-HP",
    "Mult-Spher-RB",
    "MOA-Spher-5C-2A",
    "MOA-Spher-5C-3A",
    "MOA-Spher-3C-2A",
]


def one(args):
    stream, d, seed, variant, n, data_home, source = args
    run = Run(
        stream,
        "mlsom",
        d,
        seed,
        None if stream in REAL else n,
        params={"variant": variant},
        stream_source=source if stream.startswith("MOA-Spher") and stream not in REAL else None,
    )
    res = run_one(run, data_home=data_home)
    return {
        "stream": stream,
        "d": d,
        "seed": seed,
        "variant": variant,
        **scores(res),
        "stream_seconds": res["stream_seconds"],
        "fit_seconds": res["fit_seconds"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=os.environ.get("MLSOM_DATA"))
    ap.add_argument("--streams", default=",".join(DEFAULT_STREAMS))
    ap.add_argument("--grid-sizes", default="2,5,10")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n-instances", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--stream-source", choices=STREAM_SOURCES)
    ap.add_argument("--json")
    opts = ap.parse_args()
    streams = opts.streams.split(",")
    ds = [v if v == "auto" else int(v) for v in opts.grid_sizes.split(",")]
    n = opts.n_instances or None
    jobs = [
        (s, d, seed, v, n, opts.data_home, opts.stream_source)
        for s in streams
        for d in ds
        for seed in range(opts.seeds)
        for v in ("paper", "robust")
    ]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(opts.workers) as pool:
        rows = list(pool.map(one, jobs, chunksize=1))
    wall = time.perf_counter() - t0
    print("| stream | d | paper | robust | robust - paper | cardinality: paper / robust / true |")
    print("|---|---|---|---|---|---|")
    summary = []
    for s in streams:
        for d in ds:

            def mean(v, key, s=s, d=d):
                return float(
                    np.mean(
                        [r[key] for r in rows if (r["stream"], r["d"], r["variant"]) == (s, d, v)]
                    )
                )

            p, r = mean("paper", "macro_f"), mean("robust", "macro_f")
            cp, cr, ct = (
                mean("paper", "card_pred"),
                mean("robust", "card_pred"),
                mean("paper", "card_true"),
            )
            summary.append(
                {
                    "stream": s,
                    "d": d,
                    "paper": p,
                    "robust": r,
                    "card_paper": cp,
                    "card_robust": cr,
                    "card_true": ct,
                }
            )
            print(
                f"| {s} | {d} | {p:.3f} | {r:.3f} | {r - p:+.3f} | {cp:.2f} / {cr:.2f} / {ct:.2f} |"
            )
    print(f"\n{len(jobs)} runs in {wall:.0f} s on {opts.workers} workers")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(
                {"command": vars(opts), "wall_s": wall, "summary": summary, "runs": rows},
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
