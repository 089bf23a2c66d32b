"""Is the robust variant, with ``grid_size="auto"``, as good as the paper's variant with
``grid_size="auto"`` on every measure, beside the reference predictors?

Usage::

    python -m studies.robust_judged PAPER_DIR ROBUST_DIR [--json out.json]

PAPER_DIR: ``mlsom experiment --methods mlsom every-label label-rate top-z mlsom-frozen
--grid-sizes auto ...``; ROBUST_DIR: the same streams and seeds with ``--methods mlsom --param
variant=robust --grid-sizes auto`` (docs/results.md, "The robust variant judged again", has
both commands). Neither side peeks: each chooses d from its labelled set. For every stream, the
mean over seeds of the windows' mean of each measure; the checks: the robust variant's Hamming
loss no worse and its cardinality error smaller on at least 8 of 10 streams, and never more than
0.02 below the paper's on macro F or on example-based F; and, per measure, on how many streams
the every-label predictor (which predicts every label) beats the paper's variant: a measure it
wins on rewards over-prediction there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

MEASURES = [
    ("macro_f1", "macro F", False),
    ("micro_f1", "micro F", False),
    ("example_f1", "example F", False),
    ("hamming_loss", "Hamming loss", True),
    ("subset_accuracy", "subset accuracy", False),
    ("cardinality_error", "cardinality error", True),
]


def means(directory, rename=None):
    """{(stream, column name): {measure: mean over seeds}} of an experiment's results.csv."""
    df = pd.read_csv(Path(directory) / "results.csv")
    df["name"] = df["method"] if rename is None else df["method"].replace(rename)
    cols = [f"{m}_mean" for m, _, _ in MEASURES] + ["predicted_cardinality_mean"]
    cols += ["true_cardinality_mean", "fitted_grid_size"]
    return df.groupby(["stream", "name"])[cols].mean()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("paper")
    ap.add_argument("robust")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    paper = means(args.paper, {"mlsom": "paper"})
    robust = means(args.robust, {"mlsom": "robust"})
    table = pd.concat([paper, robust]).sort_index()
    streams = sorted(table.index.get_level_values(0).unique())
    names = ["paper", "robust", "mlsom-frozen", "every-label", "label-rate", "top-z"]
    out = {"rows": [], "checks": {}}
    for m, title, lower in MEASURES:
        col = f"{m}_mean"
        print(f"\n#### {title} ({'lower' if lower else 'higher'} is better)\n")
        print("| stream | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for s in streams:
            cells = []
            for n in names:
                v = table[col].get((s, n))
                cells.append("–" if v is None else f"{v:.4f}")
            print(f"| {s} | " + " | ".join(cells) + " |")
    checks = {
        "hamming_no_worse": [],
        "cardinality_error_smaller": [],
        "macro_f1_within": [],
        "example_f1_within": [],
    }
    every_beats = {m: [] for m, _, _ in MEASURES}
    for s in streams:
        p, r = table.loc[(s, "paper")], table.loc[(s, "robust")]
        out["rows"].append({"stream": s, "paper": p.to_dict(), "robust": r.to_dict()})
        if r["hamming_loss_mean"] <= p["hamming_loss_mean"]:
            checks["hamming_no_worse"].append(s)
        if r["cardinality_error_mean"] < p["cardinality_error_mean"]:
            checks["cardinality_error_smaller"].append(s)
        if r["macro_f1_mean"] >= p["macro_f1_mean"] - 0.02:
            checks["macro_f1_within"].append(s)
        if r["example_f1_mean"] >= p["example_f1_mean"] - 0.02:
            checks["example_f1_within"].append(s)
        if (s, "every-label") in table.index:
            e = table.loc[(s, "every-label")]
            for m, _, lower in MEASURES:
                ev, pv = e[f"{m}_mean"], p[f"{m}_mean"]
                if (ev < pv) if lower else (ev > pv):
                    every_beats[m].append(s)
    print("\n#### Checks\n")
    n = len(streams)
    for key, got in checks.items():
        print(f"* {key}: {len(got)} of {n} streams; not on {sorted(set(streams) - set(got))}")
    for m, title, _ in MEASURES:
        print(f"* every-label beats the paper's variant on {title}: {every_beats[m]}")
    d = {
        s: (
            table.loc[(s, "paper"), "fitted_grid_size"],
            table.loc[(s, "robust"), "fitted_grid_size"],
        )
        for s in streams
    }
    print(f"* d chosen by auto (mean over seeds; paper, robust): {d}")
    out["checks"] = {k: sorted(v) for k, v in checks.items()}
    out["every_label_beats_paper"] = every_beats
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
