"""How the spherical generators drift, spread and overlap, beside the paper's own streams.

Usage::

    python benchmarks/spherical_drift.py --data-home DIR [--seeds 10] [--json out.json]

DIR holds ``minas-br/MOA-3C-5C-2D-train.arff.gz`` and ``MOA-5C-7C-2D-train.arff.gz``: the first
10,000 instances of the paper's MOA-Spher-3C-2A and 5C-2A streams (MINAS-BR's files; labels novel
in the whole stream never occur in them and are dropped). The same measures are taken on the first
10,000 instances of ``mlsom.datasets.load(name, random_state=seed)`` for each seed (the stream at
its Table 1 size, so that the radius is calibrated as in every experiment):

* drift: for each label, the Euclidean norm of the shift of its centroid between the first and the
  last fifth (2,000 instances each), every feature divided by its range over the 10,000; the
  median over the labels;
* spread: for each label, the root mean square distance of its instances to their centroid within
  windows of 1,000 instances; the median over windows, then over labels;
* overlap: the share of instances with more than one label;
* cardinality of the 10,000 and, for the generators, of the whole stream.

Generators: median and range over the seeds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mlsom.datasets import load
from mlsom.datasets._arff import load_arff

N = 10_000
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-home", required=True, type=Path)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = {}
    print("| stream | source | drift | spread | overlap | cardinality (10,000) | (all) |")
    print("|---|---|---|---|---|---|---|")
    for name, (fname, n_file, keep) in PAPER.items():
        path = args.data_home / "minas-br" / fname
        ds = load_arff(path, label_location=("first", n_file))
        paper = measures(ds.X, ds.Y[:, :keep])
        runs = []
        for seed in range(args.seeds):
            g = load(name, random_state=seed)
            X = np.concatenate([g.X_train, g.X_stream])
            Y = np.concatenate([g.Y_train, g.Y_stream])
            runs.append({**measures(X, Y), "cardinality_all": float(Y.sum(axis=1).mean())})
        out[name] = {"paper": paper, "generator": runs}
        print(
            f"| {name} | paper, first 10,000 | {paper['drift']:.3f} | {paper['spread']:.3f} | "
            f"{paper['overlap']:.3f} | {paper['cardinality']:.3f} | not published |"
        )

        def cell(key, runs=runs):
            v = np.array([r[key] for r in runs])
            return f"{np.median(v):.3f} ({v.min():.3f}-{v.max():.3f})"

        print(
            f"| {name} | generator, {args.seeds} seeds | {cell('drift')} | {cell('spread')} | "
            f"{cell('overlap')} | {cell('cardinality')} | {cell('cardinality_all')} |"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
