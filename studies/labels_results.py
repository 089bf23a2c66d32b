"""Tables and plots of an experiment with labels that arrive (``mlsom experiment
--label-fractions ... --label-delays ...``), from its ``summary.json``.

    python -m studies.labels_results OUT [--png-dir DIR] [--delay-for-plots 1000]

Prints, per stream, the mean over windows of the cumulative macro F (mean over seeds) of every
method at every fraction and delay, and the issue's checks; writes one PNG per stream (macro F
against the fraction of labels on a log axis, one line per method, at one delay).
"""

import argparse
import json
from pathlib import Path

from studies._shared import parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the experiment's folder (its summary.json)")
    ap.add_argument("--png-dir", help="write the plots here")
    ap.add_argument("--delay-for-plots", type=int, default=1000)
    args = ap.parse_args()
    summary = json.loads((Path(args.out) / "summary.json").read_text())
    with_labels, without = parse(summary)
    checks = {}
    for stream in sorted(with_labels):
        methods = with_labels[stream]
        settings = sorted({k for v in methods.values() for k in v})
        print(f"\n### {stream}\n")
        print("| method | " + " | ".join(f"f={f:g}, D={d}" for f, d in settings) + " |")
        print("|---|" + "---|" * len(settings))
        for name in sorted(methods):
            cells = [f"{methods[name].get(s, float('nan')):.3f}" for s in settings]
            print(f"| {name} | " + " | ".join(cells) + " |")
        for name, value in sorted(without.get(stream, {}).items()):
            print(f"| {name} (no label after fit, paper's protocol) | {value:.3f} |")
        soms = {m: v for m, v in methods.items() if m.startswith("mlsom")}
        ups = {m: v for m, v in methods.items() if not m.startswith("mlsom")}
        for som_name, som in soms.items():
            best_up_all = max(v.get((1.0, 0), float("nan")) for v in ups.values())
            none = som.get((0.0, 1000), som.get((0.0, 0)))
            ten = som.get((0.1, 1000))
            gap_closed = (ten - none) / (best_up_all - none) if best_up_all > none else float("nan")
            beats = {
                f: all(som.get((f, 1000), 0) > v.get((f, 1000), 1) for v in ups.values())
                for f in (0.01, 0.1)
            }
            checks[(stream, som_name)] = {
                "no labels": none,
                "1% at 1000": som.get((0.01, 1000)),
                "10% at 1000": ten,
                "share of the gap closed at 10%": gap_closed,
                "all labels (f=1, D=0)": som.get((1.0, 0)),
                "best upper bound, all labels": best_up_all,
                "beats every upper bound at 1%": beats[0.01],
                "beats every upper bound at 10%": beats[0.1],
            }
        if args.png_dir:
            from mlsom.plotting import plot_label_fractions, save_png

            fractions = sorted({f for f, d in settings if d == args.delay_for_plots})
            scores = {
                name: {f: v[(f, args.delay_for_plots)] for f in fractions}
                for name, v in methods.items()
                if all((f, args.delay_for_plots) in v for f in fractions)
            }
            fig = plot_label_fractions(
                scores, title=f"{stream}, labels {args.delay_for_plots} instances late"
            )
            Path(args.png_dir).mkdir(parents=True, exist_ok=True)
            save_png(fig, Path(args.png_dir) / f"labels-{stream}.png")
    print_summary(with_labels, checks)
    print("\n### Checks\n")
    for (stream, name), c in checks.items():
        text = ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in c.items()
        )
        print(f"* {stream}, {name}: {text}")


def print_summary(with_labels, checks):
    """The table of docs/results.md (mlsom at each d and the best upper bound at each setting,
    D = 1,000, and every label at once) and the issue's targets counted over the streams."""
    cols = [(f, 1000) for f in (0.0, 0.001, 0.01, 0.1, 1.0)] + [(1.0, 0)]
    print("\n### Summary (mean macro F; D = 1,000, then every label at once)\n")
    print("| stream | method | f = 0 | 0.001 | 0.01 | 0.1 | 1 | f = 1, D = 0 |")
    print("|---|---|---|---|---|---|---|---|")
    for stream in sorted(with_labels):
        methods = with_labels[stream]
        ups = {m: v for m, v in methods.items() if not m.startswith("mlsom")}
        best = max(ups, key=lambda m: ups[m].get((1.0, 0), float("-inf")))
        first = True
        for name in sorted(m for m in methods if m.startswith("mlsom")) + [best]:
            label = name if name.startswith("mlsom") else f"best upper bound ({name})"
            cells = [f"{methods[name].get(c, float('nan')):.3f}" for c in cols]
            print(f"| {stream if first else ''} | {label} | " + " | ".join(cells) + " |")
            first = False
    print("\n### Targets over the streams, per mlsom setting\n")
    for som_name in sorted({name for _, name in checks}):
        rows = {st: c for (st, name), c in checks.items() if name == som_name}
        half = [st for st, c in rows.items() if c["share of the gap closed at 10%"] >= 0.5]
        beat1 = [st for st, c in rows.items() if c["beats every upper bound at 1%"]]
        beat10 = [st for st, c in rows.items() if c["beats every upper bound at 10%"]]
        close = [
            st
            for st, c in rows.items()
            if c["all labels (f=1, D=0)"] >= c["best upper bound, all labels"] - 0.05
        ]
        n = len(rows)
        print(
            f"* {som_name}: half the gap closed at 10 % on {len(half)}/{n} ({', '.join(half)}); "
            f"beats every upper bound at 1 % on {len(beat1)}/{n}, at 10 % on {len(beat10)}/{n}; "
            f"every label within 0.05 of the best upper bound on {len(close)}/{n}"
        )


if __name__ == "__main__":
    main()
