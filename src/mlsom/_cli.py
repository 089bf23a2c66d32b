"""The ``mlsom`` command line: ``demo``, ``run``, ``experiment``, ``info``."""

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__
from ._som import SOMStreamClassifier

_TABLE_MEASURES = ("macro_f1", "micro_f1", "example_f1", "hamming_loss", "subset_accuracy")


def run_demo(
    stream="MOA-Spher-5C-2A",
    n_instances=None,
    grid_size=4,
    n_windows=50,
    seed=0,
    out_dir="mlsom-demo",
    plot=True,
    file=None,
):
    """Run SOM-Stream-ML on a built-in drifting stream, print the results, plot the curves.

    The model is fitted on the stream's first 10 % and then classifies the rest without ever
    seeing a label. Beside it runs the same model frozen after ``fit`` (``predict`` only), which
    shows what the online adaptation adds. Returns a dict of the results.
    """
    from .datasets import load
    from .protocol import evaluate_many

    out = file or sys.stdout
    t0 = time.perf_counter()
    ds = load(stream, n_instances=n_instances, random_state=seed)
    print(
        f"mlsom {__version__} demo: {ds.name}, {ds.n_instances} instances "
        f"({len(ds.X_train)} labelled for training, {len(ds.X_stream)} in the stream), "
        f"{ds.n_features} features, {ds.n_labels} labels, training cardinality "
        f"{ds.train_cardinality:.2f}",
        file=out,
    )
    model = SOMStreamClassifier(grid_size=grid_size, random_state=seed)
    methods = {"adaptive": model, "frozen": copy.deepcopy(model)}
    res = evaluate_many(methods, ds, n_windows=n_windows, kinds={"frozen": "batch"})
    curves = {name: r.curve("macro_f1") for name, r in res.items()}
    ends = res["adaptive"].window_edges[1:]
    print("\nwindow    end   cumulative macro F  (adaptive | frozen after fit)", file=out)
    for i in sorted({0, 4, 9, 19, 29, 39, len(ends) - 1}):
        if i < len(ends):
            print(
                f"{i + 1:6d} {ends[i]:6d}   {curves['adaptive'][i]:.4f} | "
                f"{curves['frozen'][i]:.4f}",
                file=out,
            )
    print(
        f"\n{'model':<10}{'macro F':>9}{'micro F':>9}{'ex. F':>8}{'Hamming':>9}{'subset':>8}",
        file=out,
    )
    rows = []
    for name, r in res.items():
        values = [r.total(m) for m in _TABLE_MEASURES]
        rows.append((name, *values))
        print(
            f"{name:<10}{values[0]:9.4f}{values[1]:9.4f}{values[2]:8.4f}{values[3]:9.4f}"
            f"{values[4]:8.4f}",
            file=out,
        )
    print(
        f"\nwhole test stream, 0/0 counted as 1 (Mulan). True stream cardinality "
        f"{ds.Y_stream.sum(1).mean():.2f}; the model's z after the stream "
        f"{model.cardinality_:.3f}; online speed {res['adaptive'].instances_per_second:,.0f} "
        f"instances/s",
        file=out,
    )
    png = None
    if plot:
        png = _plot_demo(curves, ends, ds.name, grid_size, Path(out_dir))
        if png:
            print(f"plot written to {png}", file=out)
    print(f"total time {time.perf_counter() - t0:.1f} s", file=out)
    return {"curves": curves, "table": rows, "png": png, "results": res}


def _plot_demo(curves, ends, name, grid_size, out_dir):
    try:
        from .plotting import plot_curves, save_png
    except ImportError:  # pragma: no cover - plotting imports matplotlib lazily
        return None
    try:
        fig = plot_curves(
            {
                "mlsom (adapts online)": curves["adaptive"],
                "mlsom frozen after fit": curves["frozen"],
            },
            x=np.asarray(ends),
            xlabel="instances of the stream",
            ylabel="cumulative macro F",
            ylim=(0, 1),
            title=f"{name}: labels never arrive (d = {grid_size})",
        )
    except ImportError:
        print("matplotlib is not installed: no plot (pip install 'mlsom[demo]')", file=sys.stderr)
        return None
    return save_png(fig, out_dir / f"demo-{name}.png")


def _parse_params(items):
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--param expects KEY=VALUE, got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _zero_division(text):
    return text if text in ("exclude", "mulan") else int(text)


def cmd_run(args):
    from .experiment import Run, run_one

    run = Run(
        args.stream,
        args.method,
        args.grid_size,
        args.seed,
        args.n_instances,
        _parse_params(args.param),
    )
    result = run_one(
        run, data_home=args.data_home, n_windows=args.windows, zero_division=args.zero_division
    )
    from .evaluation import StreamEvaluation

    ev = StreamEvaluation.from_dict({k: v for k, v in result.items() if k != "run"})
    print(
        f"{run.label} on {run.stream} (seed {run.seed}): {ev.n_test} test instances, "
        f"{ev.n_windows} windows, 0/0 = {args.zero_division}"
    )
    for m in _TABLE_MEASURES:
        print(f"  {m:<16} mean over windows {ev.mean(m):.4f}   whole stream {ev.total(m):.4f}")
    print(
        f"  fit {ev.fit_seconds:.2f} s, stream {ev.stream_seconds:.2f} s "
        f"({ev.instances_per_second:,.0f} instances/s)"
    )
    if args.out:
        Path(args.out).write_text(json.dumps(result))
        print(f"result written to {args.out}")


def cmd_experiment(args):
    from .experiment import run_experiment

    summary = run_experiment(
        args.profile,
        args.out,
        streams=args.streams,
        methods=args.methods,
        grid_sizes=args.grid_sizes,
        seeds=args.seeds,
        n_instances=args.n_instances,
        data_home=args.data_home,
        n_jobs=args.n_jobs,
        scheduler=args.scheduler,
        n_windows=args.windows,
        zero_division=args.zero_division,
        plots=not args.no_plots,
        progress=not args.no_progress,
    )
    print(
        f"{summary['n_runs']} runs ({summary['n_cached']} found finished, "
        f"{summary['n_run_now']} run now) in {summary['wall_seconds']:.1f} s; results in "
        f"{args.out}"
    )
    print("\nmean over windows of the cumulative macro F (mean over seeds):")
    for stream, methods in summary["mean_macro_f1"].items():
        best = summary["best_grid_size"].get(stream)
        print(f"  {stream}")
        for m, v in sorted(methods.items(), key=lambda kv: -kv[1]):
            print(f"    {m:<22} {v:.4f}")
        if best:
            print(f"    best d = {best['grid_size']} (optimistic: chosen on the test stream)")
    if "statistics" in summary:
        st = summary["statistics"]
        print(
            f"\nFriedman p = {st['friedman_pvalue']:.3g}, Iman-Davenport p = "
            f"{st['iman_davenport_pvalue']:.3g}, Nemenyi CD = {st['nemenyi_cd']:.2f}"
        )
        for m, r in sorted(zip(st["methods"], st["mean_ranks"], strict=True), key=lambda t: t[1]):
            print(f"    {m:<22} mean rank {r:.2f}")
    est = summary["estimated_paper_seconds"]
    print(
        f"\nestimated time of --profile paper with {est['workers']} worker(s): "
        f"{est['seconds'] / 3600:.1f} h (methods measured here only)"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mlsom", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"mlsom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="run the method on a built-in drifting stream")
    demo.add_argument("--stream", default="MOA-Spher-5C-2A")
    demo.add_argument(
        "--n-instances",
        type=int,
        default=None,
        help="synthetic streams: instances to generate (default: the paper's size)",
    )
    demo.add_argument("--grid-size", type=int, default=4)
    demo.add_argument("--windows", type=int, default=50)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument(
        "--out", default="mlsom-demo", help="folder of the plot (default: %(default)s)"
    )
    demo.add_argument("--no-plot", action="store_true")

    run = sub.add_parser("run", help="one method on one stream")
    run.add_argument("--stream", required=True, help="a name of Table 1, e.g. MOA-Spher-5C-2A")
    run.add_argument("--method", default="mlsom", help="mlsom, MINAS-BR or a baseline name")
    run.add_argument("--grid-size", type=int, default=None, help="mlsom's d")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--n-instances", type=int, default=None)
    run.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter (JSON value), repeatable",
    )
    run.add_argument("--data-home", default=None, help="folder of the real data files")
    run.add_argument("--windows", type=int, default=50)
    run.add_argument(
        "--zero-division",
        type=_zero_division,
        default=1,
        help="0/0 convention: 1 (Mulan), 0, exclude or mulan",
    )
    run.add_argument("--out", default=None, help="write the full result as JSON")

    exp = sub.add_parser("experiment", help="streams x methods x grid sizes x seeds")
    exp.add_argument("--profile", choices=["quick", "paper"], default="quick")
    exp.add_argument("--out", default="mlsom-experiment")
    exp.add_argument("--streams", nargs="+", default=None)
    exp.add_argument("--methods", nargs="+", default=None)
    exp.add_argument("--grid-sizes", nargs="+", type=int, default=None)
    exp.add_argument("--seeds", nargs="+", type=int, default=None)
    exp.add_argument("--n-instances", type=int, default=None)
    exp.add_argument("--data-home", default=None)
    exp.add_argument("--n-jobs", type=int, default=1, help="worker processes")
    exp.add_argument(
        "--scheduler",
        default=None,
        help="dask.distributed scheduler address, or 'local' for a LocalCluster",
    )
    exp.add_argument("--windows", type=int, default=50)
    exp.add_argument("--zero-division", type=_zero_division, default=1)
    exp.add_argument("--no-plots", action="store_true")
    exp.add_argument("--no-progress", action="store_true")

    sub.add_parser("info", help="print version, build and machine information")
    args = parser.parse_args(argv)
    try:
        _dispatch(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        # a user error (a name, a value, a missing data file): the message, not a traceback
        print(f"mlsom {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


def _dispatch(args):
    if args.command == "demo":
        run_demo(
            args.stream,
            args.n_instances,
            args.grid_size,
            args.windows,
            args.seed,
            args.out,
            plot=not args.no_plot,
        )
    elif args.command == "run":
        cmd_run(args)
    elif args.command == "experiment":
        cmd_experiment(args)
    elif args.command == "info":
        from ._config import show_config

        show_config()


if __name__ == "__main__":
    sys.exit(main())
