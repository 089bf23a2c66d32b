"""How the spherical generators drift, spread and overlap, beside the paper's own streams.

Usage::

    python -m studies.spherical_drift --data-home DIR [--source generator] [--seeds 10]
        [--json out.json]
    python -m studies.spherical_drift --data-home DIR --fit [--json fit.json]

DIR holds ``minas-br/MOA-3C-5C-2D-train.arff.gz`` and ``MOA-5C-7C-2D-train.arff.gz``: the first
10,000 instances of the paper's MOA-Spher-3C-2A and 5C-2A streams (MINAS-BR's files; labels novel
in the whole stream never occur in them and are dropped). The same measures are taken on the first
10,000 instances of ``mlsom.datasets.load(name, random_state=seed, source=SOURCE)`` for each seed
(the stream at its Table 1 size, so that the radius is calibrated as in every experiment;
``--source generator`` is the calibrated generator, each stream fitted to its own prefix where it
has one, ``generator-v2`` every stream calibrated to 5C-2A, ``generator-v1`` the first one):

* drift: for each label, the Euclidean norm of the shift of its centroid between the first and the
  last fifth (2,000 instances each), every feature divided by its range over the 10,000; the
  median over the labels;
* spread: for each label, the root mean square distance of its instances to their centroid within
  windows of 1,000 instances; the median over windows, then over labels;
* overlap: the share of instances with more than one label;
* cardinality of the 10,000 and, for the generators, of the whole stream.

Generators: median and range over the seeds.

``--fit`` fits the calibrated generator's parameters (``SPHERICAL_CALIBRATION`` and
``SPHERICAL_OWN_CALIBRATION`` of ``mlsom.datasets._registry``) on one paper prefix
(``--calibrate``, default MOA-Spher-5C-2A): for every point of a grid of speed factors and
pair-offset ranges it generates the stream for each seed and takes the medians of drift, spread
and overlap; the point with the least sum of squared relative errors against the paper's prefix
wins. The cardinality needs no fitting: the radius bisection matches it on the first 10 %.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import numpy as np

from mlsom.datasets import load
from mlsom.datasets._arff import load_arff
from mlsom.datasets._generators import moa_spherical
from mlsom.datasets._registry import (
    TRAIN_FRACTION,
    spherical_calibration,
    table_entry,
)

N = 10_000
FIT_KEYS = ("drift", "spread", "overlap")
# the fit's grid: speed factors, and the pair offsets' lower and upper ends
FIT_SPEEDS = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
FIT_LO = (0.0, 0.05, 0.1, 0.15)
FIT_HI = (0.1, 0.15, 0.2, 0.25)
PAPER = {  # stream: (file, labels in the file, known labels kept: the first ones)
    "MOA-Spher-3C-2A": ("MOA-3C-5C-2D-train.arff.gz", 5, 3),
    "MOA-Spher-5C-2A": ("MOA-5C-7C-2D-train.arff.gz", 7, 5),
}


def measures(X, Y):
    X, Y = X[:N], Y[:N]
    span = X.max(axis=0) - X.min(axis=0)
    span[span == 0] = 1.0
    fifth = len(X) // 5
    drift, spread = [], []
    for j in range(Y.shape[1]):
        a = X[:fifth][Y[:fifth, j] == 1]
        b = X[-fifth:][Y[-fifth:, j] == 1]
        if len(a) and len(b):
            drift.append(float(np.linalg.norm((a.mean(axis=0) - b.mean(axis=0)) / span)))
        per = []
        for w in range(0, len(X), 1000):
            Z = X[w : w + 1000][Y[w : w + 1000, j] == 1]
            if len(Z) > 10:
                per.append(float(np.sqrt(((Z - Z.mean(axis=0)) ** 2).sum(axis=1).mean())))
        if per:
            spread.append(float(np.median(per)))
    return {
        "drift": float(np.median(drift)),
        "spread": float(np.median(spread)),
        "overlap": float((Y.sum(axis=1) > 1).mean()),
        "cardinality": float(Y.sum(axis=1).mean()),
    }


def paper_measures(data_home, name):
    fname, n_file, keep = PAPER[name]
    ds = load_arff(data_home / "minas-br" / fname, label_location=("first", n_file))
    return measures(ds.X, ds.Y[:, :keep])


def with_whole_stream(X, Y):
    return {**measures(X, Y), "cardinality_all": float(Y.sum(axis=1).mean())}


def fit(data_home, name, seeds):
    """Grid search of (speed factor, pair offsets) on one paper prefix; the table and the best."""
    target = paper_measures(data_home, name)
    e = table_entry(name)
    grid = []
    print(f"fit on {name}: paper {', '.join(f'{k} {target[k]:.3f}' for k in FIT_KEYS)}")
    print("| speed factor | pair offset | drift | spread | overlap | radius | error |")
    print("|---|---|---|---|---|---|---|")
    for speed, lo, hi in itertools.product(FIT_SPEEDS, FIT_LO, FIT_HI):
        if lo >= hi:
            continue
        runs = []
        for seed in seeds:
            X, Y, info = moa_spherical(
                e.labels,
                e.attributes,
                e.instances,
                e.sd / speed,
                seed,
                target_cardinality=e.cardinality,
                calib_fraction=TRAIN_FRACTION,
                placement="pairs",
                pair_offset=(lo, hi),
            )
            runs.append({**with_whole_stream(X, Y), "radius": info["radius"]})
        med = {k: float(np.median([r[k] for r in runs])) for k in runs[0]}
        error = sum(((med[k] - target[k]) / target[k]) ** 2 for k in FIT_KEYS)
        grid.append({"speed_factor": speed, "pair_offset": [lo, hi], **med, "error": error})
        print(
            f"| {speed} | {lo}-{hi} | {med['drift']:.3f} | {med['spread']:.3f} | "
            f"{med['overlap']:.3f} | {med['radius']:.3f} | {error:.4f} |"
        )
    best = min(grid, key=lambda g: g["error"])
    print(f"best: speed factor {best['speed_factor']}, pair offset {best['pair_offset']}")
    print(f"in use: {spherical_calibration(name)}")
    return {"stream": name, "paper": target, "seeds": list(seeds), "grid": grid, "best": best}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-home", required=True, type=Path)
    ap.add_argument("--seeds", type=int, default=10)
    sources = ("generator", "generator-v2", "generator-v1")
    ap.add_argument("--source", choices=sources, default="generator")
    ap.add_argument("--fit", action="store_true", help="fit the calibrated generator's parameters")
    ap.add_argument("--calibrate", choices=sorted(PAPER), default="MOA-Spher-5C-2A")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.fit:
        out = fit(args.data_home, args.calibrate, range(args.seeds))
        if args.json:
            args.json.write_text(json.dumps(out, indent=1) + "\n")
        return
    out = {"source": args.source}
    if args.source != "generator-v1":
        out["calibration"] = {name: spherical_calibration(name, args.source) for name in PAPER}
    print("| stream | source | drift | spread | overlap | cardinality (10,000) | (all) |")
    print("|---|---|---|---|---|---|---|")
    for name in PAPER:
        paper = paper_measures(args.data_home, name)
        runs = []
        for seed in range(args.seeds):
            g = load(name, random_state=seed, source=args.source)
            X = np.concatenate([g.X_train, g.X_stream])
            Y = np.concatenate([g.Y_train, g.Y_stream])
            runs.append({**with_whole_stream(X, Y), "radius": g.info["generator"]["radius"]})
        out[name] = {"paper": paper, "generator": runs}
        print(
            f"| {name} | paper, first 10,000 | {paper['drift']:.3f} | {paper['spread']:.3f} | "
            f"{paper['overlap']:.3f} | {paper['cardinality']:.3f} | not published |"
        )

        def cell(key, runs=runs):
            v = np.array([r[key] for r in runs])
            return f"{np.median(v):.3f} ({v.min():.3f}-{v.max():.3f})"

        print(
            f"| {name} | {args.source}, {args.seeds} seeds | {cell('drift')} | {cell('spread')} | "
            f"{cell('overlap')} | {cell('cardinality')} | {cell('cardinality_all')} |"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
