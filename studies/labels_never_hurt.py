"""With labels that arrive, is macro F or the Hamming loss ever worse than without, beyond the
spread of the seeds?

Usage::

    python -m studies.labels_never_hurt EXP_DIR [EXP_DIR ...] [--json out.json]

Each EXP_DIR is the output of ``mlsom experiment ... --methods mlsom --label-fractions 0 ...``
(its ``results.csv``), e.g. the command of docs/results.md ("Labels never hurt"). For every
stream, grid size and setting with labels (fraction f > 0, delay D), the change of the mean
macro F and Hamming loss over the seeds against the same seeds without labels; a setting is
worse where macro F falls by more than the standard deviation over the seeds of macro F without
labels, or the Hamming loss rises by more than that of the Hamming loss. Prints, per
directory, how many settings are worse on each measure and which.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd


def changes(results_csv):
    """Per stream, grid size and setting with labels: the mean change of macro F and Hamming
    loss against no labels (same seeds), and the spread over seeds without labels."""
    df = pd.read_csv(results_csv)
    df = df[df["method"] == "mlsom"].copy()
    df["d"] = df["label"].str.extract(r"-d(\d+)-")[0].astype(int)
    df["setting"] = df["label"].str.replace(r"^mlsom-d\d+-", "", regex=True)
    cols = ["stream", "d", "seed", "macro_f1_mean", "hamming_loss_mean"]
    base = df[df["setting"] == "f0-l0"][cols]
    spread = base.groupby(["stream", "d"]).agg(
        F_sd=("macro_f1_mean", "std"), H_sd=("hamming_loss_mean", "std")
    )
    m = df.merge(base, on=["stream", "d", "seed"], suffixes=("", "_none"))
    m["dF"] = m["macro_f1_mean"] - m["macro_f1_mean_none"]
    m["dH"] = m["hamming_loss_mean"] - m["hamming_loss_mean_none"]
    with_labels = m[~m["setting"].str.startswith("f0-")]
    g = (
        with_labels.groupby(["stream", "d", "setting"])
        .agg(
            F_none=("macro_f1_mean_none", "mean"),
            dF=("dF", "mean"),
            H_none=("hamming_loss_mean_none", "mean"),
            dH=("dH", "mean"),
            seeds=("seed", "nunique"),
        )
        .reset_index()
    )
    g = g.merge(spread.reset_index(), on=["stream", "d"])
    g["F_worse"] = g["dF"] < -g["F_sd"]
    g["H_worse"] = g["dH"] > g["H_sd"]
    return g


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    out = {}
    for d in args.dirs:
        g = changes(Path(d) / "results.csv")
        worse = g[g["F_worse"] | g["H_worse"]]
        print(
            f"{d}: {len(g)} settings with labels; macro F worse on {int(g['F_worse'].sum())} "
            f"(largest fall {-g['dF'].min():.3f}), Hamming loss worse on "
            f"{int(g['H_worse'].sum())} (largest rise {g['dH'].max():.3f})"
        )
        if len(worse):
            print(worse.round(4).to_string(index=False))
        out[d] = {
            "settings": len(g),
            "macro_f1_worse": int(g["F_worse"].sum()),
            "hamming_loss_worse": int(g["H_worse"].sum()),
            "rows": g.round(6).to_dict(orient="records"),
        }
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
