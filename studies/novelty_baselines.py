"""The methods on the novelty streams: mlsom with novelty detection (``novelty=True``, the default
grid size 5) and without it, MINAS-BR with its own novelty patterns, the reference predictors
and a supervised upper bound, scored as MINAS-BR's evaluator scores them.

Usage::

    python -m studies.novelty_baselines --data-home tests/data [--seeds 0 1 2]
        [--workers 2] [--json out.json] [--png-dir docs/novelty]

Every stream of ``mlsom.datasets.list_novelty_streams()`` (the generated ones at their default
100,000 instances, one run per seed; the real ones once, their methods seeded 0), through
``mlsom.protocol.evaluate_novelty_stream`` with its defaults (50 windows, Jaccard associations,
0/0 = 0). Methods: mlsom with novelty detection (d = 5; the paper variant, ``mlsom-novelty``,
and the robust one, ``mlsom-novelty-robust``); mlsom without it, paper
and robust variants, ``grid_size="auto"``; MINAS-BR with its
defaults (theta = 1,000, omega = 2,000) and with the authors' 4CRE-V2 setting (theta = omega =
100); the every-label predictor told every label of the stream (``fit_labels="all"``); the
label-rate predictor and mlsom frozen after ``fit`` on the known labels; BR-HT (River) learning
every true label, the upper bound. For each: F1M in both conventions (every label from its first
appearance; the labels the method knows), the unknown rate, the patterns and the false ones,
and each new label's time to detect. ``--png-dir``: per stream, the F1M curves of the first seed
(``mlsom.plotting.plot_novelty``: each new label's first row and each detection marked) of mlsom
with detection (both variants) and without, MINAS-BR, the every-label predictor and BR-HT.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

METHODS = [
    "mlsom-novelty",
    "mlsom-novelty-robust",
    "mlsom",
    "mlsom-robust",
    "MINAS-BR",
    "MINAS-BR-100",
    "every-label",
    "label-rate",
    "mlsom-frozen",
    "BR-HT",
]
REAL = {"4CRE-V2", "Scene-modified", "Yeast-modified"}
PLOTTED = ["mlsom-novelty", "mlsom-novelty-robust", "mlsom", "MINAS-BR", "every-label", "BR-HT"]


def _method(name, seed):
    from mlsom import SOMStreamClassifier
    from mlsom.baselines import MINASBR
    from mlsom.experiment import make_method

    if name == "mlsom-novelty":
        return SOMStreamClassifier(novelty=True, random_state=seed), {}
    if name == "mlsom-novelty-robust":
        return SOMStreamClassifier(novelty=True, variant="robust", random_state=seed), {}
    if name == "mlsom":
        return SOMStreamClassifier(grid_size="auto", random_state=seed), {}
    if name == "mlsom-robust":
        return SOMStreamClassifier(grid_size="auto", variant="robust", random_state=seed), {}
    if name == "mlsom-frozen":
        return SOMStreamClassifier(grid_size="auto", random_state=seed), {"kind": "batch"}
    if name == "MINAS-BR":
        return MINASBR(random_state=seed), {}
    if name == "MINAS-BR-100":
        return MINASBR(theta=100, omega=100, random_state=seed), {}
    if name == "every-label":
        return make_method("every-label", seed=seed), {"fit_labels": "all"}
    return make_method(name, seed=seed), {}


def one(job):
    import warnings

    from mlsom.datasets import load_novelty
    from mlsom.protocol import evaluate_novelty_stream

    stream, method, seed, data_home, keep = job
    if stream in REAL:
        ds = load_novelty(stream, data_home=data_home)
    else:
        ds = load_novelty(stream, random_state=seed)
    est, kw = _method(method, seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_novelty_stream(est, ds, **kw)
    summary = res.summary()
    summary["n_test"] = int(res.n_test)
    summary["first_rows"] = {ds.label_names[c]: r for c, r in ds.first_rows.items()}
    row = dict(stream=stream, method=method, seed=seed, seconds=time.perf_counter() - t0,
               **summary)  # fmt: skip
    return row, (res if keep else None)


def plots(png_dir, kept):
    """One PNG per stream: the kept evaluations' F1M curves (plot_novelty)."""
    from pathlib import Path

    from mlsom.plotting import plot_novelty, save_png

    Path(png_dir).mkdir(parents=True, exist_ok=True)
    for stream in dict.fromkeys(r["stream"] for r, _ in kept):
        evaluations = {r["method"]: res for r, res in kept if r["stream"] == stream}
        title = f"{stream}: F1M, every label from its first appearance"
        save_png(plot_novelty(evaluations, title=title), Path(png_dir) / f"novelty-{stream}.png")


def main(argv=None):
    from mlsom.datasets import list_novelty_streams

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-home", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--png-dir")
    args = ap.parse_args(argv)
    jobs = [
        (s, m, seed, args.data_home, bool(args.png_dir) and m in PLOTTED and seed == args.seeds[0])
        for s in list_novelty_streams()
        for m in args.methods
        for seed in ([0] if s in REAL else args.seeds)
    ]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        out = list(pool.map(one, jobs, chunksize=1))
    rows = [r for r, _ in out]
    if args.png_dir:
        plots(args.png_dir, [(r, res) for r, res in out if res is not None])
    print(f"{len(rows)} runs in {time.perf_counter() - t0:.0f} s\n")
    table = print_table(rows, list_novelty_streams(), args.methods)
    targets = _targets(table)
    for m in dict.fromkeys(t["method"] for t in targets):
        print(f"\nThe issue's targets for {m}:")
        for t in (t for t in targets if t["method"] == m):
            verdict = "holds" if t["holds"] else "NOT met"
            print(f"- {t['stream']}: {t['target']}: {t['value']} -> {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            out = {"command": vars(args), "table": table, "targets": targets, "runs": rows}
            json.dump(out, f, indent=1)
            f.write("\n")


def summarise(stream, method, rs):
    """The runs ``rs`` of a method on a stream (one per seed) in one row: the means, and each
    new label's median time to detect over the seeds (a seed that never detects it counting as
    never)."""
    ttd = {}
    for lab in rs[0]["time_to_detect"]:
        v = [np.inf if r["time_to_detect"][lab] is None else r["time_to_detect"][lab] for r in rs]
        med = float(np.median(v))
        ttd[lab] = None if med == np.inf else med
    return dict(
        stream=stream,
        method=method,
        seeds=len(rs),
        f1m_appeared=float(np.mean([r["f1m"]["appeared"] for r in rs])),
        f1m_known=float(np.mean([r["f1m"]["known"] for r in rs])),
        unknown_rate=float(np.mean([r["unknown_rate"] for r in rs])),
        n_patterns=float(np.mean([r["n_patterns"] for r in rs])),
        n_false_patterns=float(np.mean([r["n_false_patterns"] for r in rs])),
        time_to_detect=ttd,
        detected=[sum(r["time_to_detect"][lab] is not None for r in rs) for lab in ttd],
        n_test=int(rs[0]["n_test"]),
    )


def print_table(rows, streams, methods, column="method"):
    """Print, and return, the summary (:func:`summarise`) of the runs ``rows`` of every stream
    and method, a line each (``column``: the title of the methods' column)."""
    print(f"| stream | {column} | F1M (every label) | F1M (known) | unknown | patterns (false) "
          "| time to detect, median over seeds |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    table = []
    for s in streams:
        for m in methods:
            table.append(summarise(s, m, [r for r in rows if (r["stream"], r["method"]) == (s, m)]))
            print(table_line(table[-1]))
    return table


def table_line(row):
    """A row of :func:`summarise` as a line of the printed table."""
    ttd = row["time_to_detect"]
    det = ", ".join(f"{k}: {'never' if v is None else v}" for k, v in ttd.items()) or "–"
    return (
        f"| {row['stream']} | {row['method']} | {row['f1m_appeared']:.3f} | "
        f"{row['f1m_known']:.3f} | {row['unknown_rate']:.1%} | {row['n_patterns']:.1f} "
        f"({row['n_false_patterns']:.1f}) | {det} |"
    )


def _targets(table):
    """Each target of the novelty issue for mlsom with novelty detection (either variant), per
    stream: what it asks, the measured value and whether it holds."""
    by = {(r["stream"], r["method"]): r for r in table}
    out = []
    for (stream, method), r in by.items():
        if not method.startswith("mlsom-novelty"):
            continue
        f = r["f1m_appeared"]

        def add(target, value, holds, stream=stream, method=method):
            out.append(
                dict(stream=stream, method=method, target=target, value=value, holds=bool(holds))
            )

        minas = by.get((stream, "MINAS-BR"), {}).get("f1m_appeared")
        every = by.get((stream, "every-label"), {}).get("f1m_appeared")
        plain = by.get((stream, "mlsom"), {}).get("f1m_appeared")
        if stream not in REAL:
            ttd = r["time_to_detect"]
            ok = all(v is not None and v <= 2000 for v in ttd.values())
            add("every new label detected within 2,000 instances (median over seeds)", ttd, ok)
            per = r["n_false_patterns"] / r["n_test"] * 10_000
            add("at most 1 false pattern per 10,000 instances", round(per, 2), per <= 1)
            if minas is not None:
                add("F1M >= MINAS-BR + 0.10", f"{f:.3f} vs {minas:.3f}", f >= minas + 0.10)
            if every is not None:
                add("F1M >= every-label + 0.15", f"{f:.3f} vs {every:.3f}", f >= every + 0.15)
        else:
            for name, other in (("mlsom without novelty", plain), ("MINAS-BR", minas),
                                ("every-label", every)):  # fmt: skip
                if other is not None:
                    add(f"F1M above {name}", f"{f:.3f} vs {other:.3f}", f > other)
            if stream == "4CRE-V2":
                add("F1M >= 0.70", round(f, 3), f >= 0.70)
                add("at most 10 % unknown", round(r["unknown_rate"], 3), r["unknown_rate"] <= 0.10)
    return out


if __name__ == "__main__":
    main()
