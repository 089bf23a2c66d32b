"""The ``mlsom`` command line."""

import argparse
import copy
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__
from ._som import SOMStreamClassifier
from .evaluation import confusion_counts, example_f1, hamming_loss, macro_f1, micro_f1, subset_accuracy


def _windows(n, n_windows):
    edges = np.linspace(0, n, min(n_windows, n) + 1).round().astype(int)
    return list(zip(edges[:-1], edges[1:], strict=True))


def run_demo(stream="MOA-Spher-5C-2A", n_instances=None, grid_size=4, n_windows=50, seed=0,
             out_dir="mlsom-demo", plot=True, file=None):
    """Run SOM-Stream-ML on a built-in drifting stream, print the results, plot the curves.

    The model is fitted on the stream's first 10 % and then classifies the rest without ever
    seeing a label. Beside it runs the same model frozen after ``fit`` (``predict`` only), which
    shows what the online adaptation adds. Returns a dict of the results.
    """
    from .datasets import load

    out = file or sys.stdout
    t0 = time.perf_counter()
    ds = load(stream, n_instances=n_instances, random_state=seed)
    L = ds.n_labels
    print(f"mlsom {__version__} demo: {ds.name}, {ds.n_instances} instances "
          f"({len(ds.X_train)} labelled for training, {len(ds.X_stream)} in the stream), "
          f"{ds.n_features} features, {L} labels, training cardinality {ds.train_cardinality:.2f}",
          file=out)
    model = SOMStreamClassifier(grid_size=grid_size, random_state=seed).fit(ds.X_train, ds.Y_train)
    frozen = copy.deepcopy(model)
    windows = _windows(len(ds.X_stream), n_windows)
    cum = {"adaptive": np.zeros((L, 4), np.int64), "frozen": np.zeros((L, 4), np.int64)}
    curves = {"adaptive": [], "frozen": []}
    preds = {"adaptive": [], "frozen": []}
    t_stream = 0.0
    for lo, hi in windows:
        Xw, Yw = ds.X_stream[lo:hi], ds.Y_stream[lo:hi]
        t = time.perf_counter()
        p_ad = model.predict_stream(Xw)
        t_stream += time.perf_counter() - t
        p_fr = frozen.predict(Xw)
        for name, p in (("adaptive", p_ad), ("frozen", p_fr)):
            cum[name] += confusion_counts(Yw, p)
            curves[name].append(macro_f1(cum[name]))
            preds[name].append(p)
    Ys = ds.Y_stream
    rows = []
    for name in ("adaptive", "frozen"):
        P = np.vstack(preds[name])
        rows.append((name, macro_f1(cum[name]), micro_f1(cum[name]), example_f1(Ys, P),
                     hamming_loss(Ys, P), subset_accuracy(Ys, P), P.sum(1).mean()))
    print(f"\nwindow  end   cumulative macro F  (adaptive | frozen after fit)", file=out)
    for i in sorted({0, 4, 9, 19, 29, 39, len(windows) - 1}):
        if i < len(windows):
            print(f"{i + 1:6d} {windows[i][1]:6d}   {curves['adaptive'][i]:.4f} | "
                  f"{curves['frozen'][i]:.4f}", file=out)
    print(f"\n{'model':<10}{'macro F':>9}{'micro F':>9}{'ex. F':>8}{'Hamming':>9}"
          f"{'subset':>8}{'|Y^|':>6}", file=out)
    for name, ma, mi, ex, ham, sub, card in rows:
        print(f"{name:<10}{ma:9.4f}{mi:9.4f}{ex:8.4f}{ham:9.4f}{sub:8.4f}{card:6.2f}", file=out)
    print(f"\ntrue stream cardinality {Ys.sum(1).mean():.2f}; model cardinality z = "
          f"{model.cardinality_:.3f}; online speed {len(ds.X_stream) / t_stream:,.0f} instances/s; "
          f"macro F with the 0/0 = 1 convention", file=out)
    png = None
    if plot:
        png = _plot(curves, windows, ds, grid_size, Path(out_dir))
        if png:
            print(f"plot written to {png}", file=out)
    print(f"total time {time.perf_counter() - t0:.1f} s", file=out)
    return {"curves": curves, "table": rows, "png": png}


def _plot(curves, windows, ds, grid_size, out_dir):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'mlsom[demo]')", file=sys.stderr)
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    ends = [hi for _, hi in windows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    ax.plot(ends, curves["adaptive"], label="mlsom (adapts online)", lw=2)
    ax.plot(ends, curves["frozen"], label="mlsom frozen after fit", lw=1.5, ls="--")
    ax.set_xlabel("instances of the stream")
    ax.set_ylabel("cumulative macro F")
    ax.set_ylim(0, 1)
    ax.set_title(f"{ds.name}: labels never arrive (d = {grid_size})")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    fig.tight_layout()
    path = out_dir / f"demo-{ds.name}.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mlsom", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mlsom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the method on a built-in drifting stream")
    demo.add_argument("--stream", default="MOA-Spher-5C-2A")
    demo.add_argument("--n-instances", type=int, default=None,
                      help="synthetic streams: instances to generate (default: the paper's size)")
    demo.add_argument("--grid-size", type=int, default=4)
    demo.add_argument("--windows", type=int, default=50)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--out", default="mlsom-demo", help="folder of the plot (default: %(default)s)")
    demo.add_argument("--no-plot", action="store_true")
    sub.add_parser("info", help="print version, build and machine information")
    args = parser.parse_args(argv)
    if args.command == "demo":
        run_demo(args.stream, args.n_instances, args.grid_size, args.windows, args.seed, args.out,
                 plot=not args.no_plot)
    elif args.command == "info":
        from ._config import show_config

        show_config()
    return 0


if __name__ == "__main__":
    sys.exit(main())
