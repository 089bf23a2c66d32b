"""The results table of the robust variant: per stream, the paper's variant with its optimistic d,
both variants with ``grid_size="auto"``, MINAS-BR and the best lower and upper bounds.

Usage::

    python -m studies.robust_table RUNS.json EXPERIMENT_DIR [--json out.json]
    python -m studies.robust_table RUNS.json --peers-from TABLE.json [--json out.json]

``RUNS.json`` is the output of ``studies/robust_variant.py --grid-sizes 1,...,10,auto``
(both variants, every d and auto, the same seeds); ``EXPERIMENT_DIR`` an ``mlsom experiment``
output folder with MINAS-BR and the bounds on the same streams (its finished run files). Every
value is the mean over the seeds of the mean over the windows of the cumulative macro F. The
optimistic d is the paper's variant's best mean over d = 1..10 on the test stream itself.

The last lines also give the robust variant with its own best d on the test stream, the most a
choice of d could give it, against the same optimistic column.

``--peers-from`` takes MINAS-BR's and the bounds' columns from a table this script wrote
before (its ``--json``) instead of an experiment folder: they do not depend on mlsom, so a
change to mlsom's variants needs only ``RUNS.json`` measured again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mlsom.baselines import LOWER_BOUNDS, UPPER_BOUNDS
from mlsom.evaluation import StreamEvaluation


def _experiment_means(folder):
    """{stream: {method: mean over seeds of the mean over windows of the cumulative macro F}}
    from the run files of an experiment folder (finished runs only, so that an experiment still
    running or stopped can be read)."""
    per = {}
    for f in sorted((folder / "runs").glob("*.json")):
        res = json.loads(f.read_text())
        value = float(np.mean(StreamEvaluation.from_dict(res).curve("macro_f1", cumulative=True)))
        per.setdefault(res["stream"], {}).setdefault(res["method"], []).append(value)
    return {s: {m: float(np.mean(v)) for m, v in ms.items()} for s, ms in per.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs")
    ap.add_argument("experiment", nargs="?")
    ap.add_argument("--peers-from")
    ap.add_argument("--json")
    opts = ap.parse_args()
    if (opts.experiment is None) == (opts.peers_from is None):
        ap.error("give either EXPERIMENT_DIR or --peers-from")
    rows = json.loads(Path(opts.runs).read_text())["runs"]
    if opts.experiment is not None:
        summary = _experiment_means(Path(opts.experiment))
    else:
        summary = {}
        for o in json.loads(Path(opts.peers_from).read_text()):
            peers = {"MINAS-BR": o["minas_br"]}
            for value, method in (o["best_lower"], o["best_upper"]):
                if method is not None:
                    peers[method] = value
            summary[o["stream"]] = {m: v for m, v in peers.items() if v is not None}

    def mean(stream, d, variant):
        v = [
            r["macro_f"]
            for r in rows
            if (r["stream"], r["d"], r["variant"]) == (stream, d, variant)
        ]
        return float(np.mean(v)) if v else None

    streams = list(dict.fromkeys(r["stream"] for r in rows))
    out = []
    print(
        "| stream | paper, optimistic d | paper, auto | robust, auto "
        "| robust auto − paper optimistic | MINAS-BR | best lower bound | best upper bound |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s in streams:
        per_d = {d: mean(s, d, "paper") for d in range(1, 11)}
        per_d = {d: v for d, v in per_d.items() if v is not None}
        best_d = max(per_d, key=lambda d: (per_d[d], -d))
        pa, ra = mean(s, "auto", "paper"), mean(s, "auto", "robust")
        # the robust variant's own optimistic d: what a perfect choice of d would give it
        r_d = {d: mean(s, d, "robust") for d in per_d}
        r_best = max(r_d, key=lambda d: (r_d[d], -d))
        ex = summary.get(s, {})
        low = max(((ex[m], m) for m in LOWER_BOUNDS if m in ex), default=(None, None))
        up = max(((ex[m], m) for m in UPPER_BOUNDS if m in ex), default=(None, None))
        minas = ex.get("MINAS-BR")
        out.append(
            {
                "stream": s,
                "paper_best": per_d[best_d],
                "paper_best_d": best_d,
                "paper_auto": pa,
                "robust_auto": ra,
                "robust_best": r_d[r_best],
                "robust_best_d": r_best,
                "minas_br": minas,
                "best_lower": low,
                "best_upper": up,
            }
        )

        def f(v):
            return "" if v is None else f"{v:.4f}"

        print(
            f"| {s} | {per_d[best_d]:.4f} (d = {best_d}) | {f(pa)} | {f(ra)} | "
            f"{ra - per_d[best_d]:+.4f} | {f(minas)} | {f(low[0])} ({low[1]}) "
            f"| {f(up[0])} ({up[1]}) |"
        )
    diff = [o["robust_auto"] - o["paper_best"] for o in out]
    print(
        f"\nrobust auto − paper optimistic: mean {np.mean(diff):+.4f}, worst {min(diff):+.4f}; "
        f"paper auto − paper optimistic: mean "
        f"{np.mean([o['paper_auto'] - o['paper_best'] for o in out]):+.4f}"
    )
    ceiling = [o["robust_best"] - o["paper_best"] for o in out]
    print(
        f"robust with its own optimistic d − paper optimistic (the most a choice of d from the "
        f"labelled set could give): mean {np.mean(ceiling):+.4f}, worst {min(ceiling):+.4f}"
    )
    if opts.json:
        Path(opts.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
