"""Macro F against predicted cardinality: the robust variant with its acceptance targets scaled.

Usage::

    python -m studies.robust_tradeoff --data-home DIR [--streams A,B] [--grid-size 5]
        [--scales 1,1.25,1.5,2,3] [--seeds 5] [--n-instances 20000] [--workers 2] [--json out.json]

The robust variant calibrates the acceptance of extra labels to the labelled set: the global
offset theta steers the recent predicted cardinality towards the training set's z0, and each
label's offset steers its predicted rate towards its training rate (docs/method.md, "The robust
variant"). This study asks what that calibration costs in macro F, the figure of the results
table: each run fits the robust variant, multiplies those targets by a scale k (z0 by k, each
label's target rate by k, clipped to 1; k = 1 is the package), and runs the paper's protocol over
the stream. Beside it, two references that need no model at all: every label predicted for every
instance ("all labels"), and the paper's variant at the same d.

Nothing here is a setting of the package: the scale is set on a fitted model's state in this
script only, to measure the trade-off between the cardinality target and macro F.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from mlsom._som import SOMStreamClassifier
from mlsom.experiment import STREAM_SEED, _load_stream, _stream_source, is_real_stream
from mlsom.protocol import evaluate
from studies._shared import scores

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


class ScaledTargets(SOMStreamClassifier):
    """The robust variant with its acceptance targets multiplied by ``scale`` after fitting."""

    def __init__(self, *, scale=1.0, **params):
        super().__init__(**params)
        self.scale = scale

    def fit(self, X, Y):
        super().fit(X, Y)
        st = self._state
        ctl = st["ctl"].copy()  # [theta, gain, z0, cbar, alpha, band]
        ctl[2] *= self.scale
        ctl[3] = ctl[2]
        la = st["label_acceptance"].copy()  # [phi, rate, target rate]
        la[2] = np.minimum(la[2] * self.scale, 1.0)
        la[1] = la[2]
        st["ctl"], st["label_acceptance"] = ctl, np.ascontiguousarray(la)
        return self


class AllLabels:
    """Every label for every instance: no model, no label seen after the labelled set."""

    kind = "batch"

    def fit(self, X, Y):
        self.n_labels_ = np.asarray(Y).shape[1]
        return self

    def predict(self, X):
        return np.ones((np.asarray(X).shape[0], self.n_labels_), dtype=np.uint8)


def _dataset(stream, n, data_home):
    real = is_real_stream(stream)
    return _load_stream(stream, None if real else n, data_home, _stream_source(stream, None))


def one(args):
    stream, d, seed, method, scale, n, data_home = args
    ds = _dataset(stream, n, data_home)
    if method == "all":
        est = AllLabels()
    elif method == "paper":
        est = SOMStreamClassifier(grid_size=d, random_state=seed)
    else:
        est = ScaledTargets(scale=scale, grid_size=d, random_state=seed, variant="robust")
    res = evaluate(est, ds, seed=seed, stream_name=stream).to_dict()
    return {"stream": stream, "d": d, "seed": seed, "method": method, "scale": scale, **scores(res)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-home", default=os.environ.get("MLSOM_DATA"))
    ap.add_argument("--streams", default=",".join(DEFAULT_STREAMS))
    ap.add_argument("--grid-size", type=int, default=5)
    ap.add_argument("--scales", default="1,1.25,1.5,2,3")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-instances", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    opts = ap.parse_args()
    streams = opts.streams.split(",")
    scales = [float(v) for v in opts.scales.split(",")]
    d, n = opts.grid_size, opts.n_instances or None
    jobs = [(s, d, 0, "all", None, n, opts.data_home) for s in streams]
    for s in streams:
        for seed in range(opts.seeds):
            jobs.append((s, d, seed, "paper", None, n, opts.data_home))
            jobs += [(s, d, seed, "robust", k, n, opts.data_home) for k in scales]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(opts.workers) as pool:
        rows = list(pool.map(one, jobs, chunksize=1))
    wall = time.perf_counter() - t0

    def cell(s, method, scale=None):
        sel = [r for r in rows if (r["stream"], r["method"], r["scale"]) == (s, method, scale)]
        return (
            float(np.mean([r["macro_f"] for r in sel])),
            float(np.mean([r["card_pred"] for r in sel])),
            sel[0]["card_true"],
        )

    head = " | ".join(f"robust k = {k:g}" for k in scales)
    print(f"macro F (predicted cardinality), d = {d}, {opts.seeds} seeds (all labels: no seed)\n")
    print(f"| stream | true cardinality | all labels | paper | {head} |")
    print("|---|---|---|---|" + "---|" * len(scales))
    summary = []
    for s in streams:
        a, ca, ct = cell(s, "all")
        p, cp, _ = cell(s, "paper")
        rob = [cell(s, "robust", k) for k in scales]
        summary.append(
            {
                "stream": s,
                "card_true": ct,
                "all_labels": a,
                "paper": p,
                "card_paper": cp,
                "robust": {
                    f"{k:g}": {"macro_f": f, "card_pred": c}
                    for k, (f, c, _) in zip(scales, rob, strict=True)
                },
            }
        )
        cells = " | ".join(f"{f:.3f} ({c:.2f})" for f, c, _ in rob)
        print(f"| {s} | {ct:.2f} | {a:.3f} ({ca:.2f}) | {p:.3f} ({cp:.2f}) | {cells} |")
    print(
        f"\n{len(jobs)} runs in {wall:.0f} s on {opts.workers} workers (stream seed {STREAM_SEED})"
    )
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(
                {"command": vars(opts), "wall_s": wall, "summary": summary, "runs": rows},
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
