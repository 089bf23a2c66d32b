"""The ``mlsom`` command line: ``demo``, ``run``, ``experiment``, ``info``.

Every command checks all its arguments before it starts any work (names, numbers, paths, the data
files, the results folder, a scheduler's address) and reports an error as one line on stderr,
``mlsom: error: <message>``, never as a traceback (``--debug``, before or after the command,
shows the traceback instead). Exit status:

* 0: done;
* 1: an error during the work (a data file that cannot be read, an estimator that refuses its
  data, memory, a scheduler that cannot be reached, a result that cannot be written);
* 2: the command was refused before any work (what argparse refuses, and every check of the
  arguments);
* 130: interrupted (Ctrl-C); ``mlsom experiment`` keeps its finished runs and says how many.

``mlsom run --param KEY=VALUE`` cannot set a parameter that has its own option (``grid_size``:
``--grid-size``, ``random_state``: ``--seed``): such a ``--param`` is refused, so that there is
one place for each value.
"""

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__
from ._som import SOMStreamClassifier
from .experiment import (
    ExperimentInterrupted,
    Run,
    _canonical_stream,
    _check_data_home,
    _check_grid_size,
    _check_method_name,
    _check_out_dir,
    _check_seed,
    _find_data_files,
    _prepare_experiment,
    check_run,
    run_one,
)

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


# ------------------------------------------------------------------------------ errors


class UsageError(Exception):
    """An argument refused before any work (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line, handled in :func:`main` like every other error, and
    without abbreviated options (``experiment --grid-size`` is a mistake, not ``--grid-sizes``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError(f"{_one_line(ValueError(message))} (see '{self.prog} --help')")


# the option of each argument that the library's checks name (``exc.argument``), per command
_OPTIONS = {
    "demo": {
        "stream": "--stream",
        "n_instances": "--n-instances",
        "grid_size": "--grid-size",
        "seed": "--seed",
        "n_windows": "--windows",
        "out_dir": "--out",
    },
    "run": {
        "stream": "--stream",
        "method": "--method",
        "grid_size": "--grid-size",
        "seed": "--seed",
        "n_instances": "--n-instances",
        "params": "--param",
        "n_windows": "--windows",
        "zero_division": "--zero-division",
        "data_home": "--data-home",
    },
    "experiment": {
        "profile": "--profile",
        "streams": "--streams",
        "stream": "--streams",
        "methods": "--methods",
        "method": "--methods",
        "grid_sizes": "--grid-sizes",
        "grid_size": "--grid-sizes",
        "seeds": "--seeds",
        "seed": "--seeds",
        "n_instances": "--n-instances",
        "n_windows": "--windows",
        "zero_division": "--zero-division",
        "data_home": "--data-home",
        "out_dir": "--out",
        "n_jobs": "--n-jobs",
        "scheduler": "--scheduler",
        "connect_timeout": "--connect-timeout",
    },
}


def _usage_message(command, exc):
    """The message of an argument refused by a check, with the option it is about."""
    argument = getattr(exc, "argument", None)
    option = _OPTIONS.get(command, {}).get(argument)
    text = _one_line(exc)
    if option is None:
        return text
    return f"argument {option}: {text.removeprefix(f'{argument}: ')}"


_MAX_MESSAGE = 2000  # characters: a hostile value echoed in a message is cut


def _one_line(exc):
    text = " ".join(str(exc).split())
    if len(text) > _MAX_MESSAGE:
        text = f"{text[: _MAX_MESSAGE - 20]} ... ({len(text):,} characters)"
    if isinstance(exc, MemoryError):
        return f"out of memory: {text}" if text else "out of memory"
    return text or type(exc).__name__


# errors of the work that mean a wrong input or a failing machine, not a bug of mlsom: shown as
# their message (the package's own errors are among them: NotFittedError and the data sets'
# ArffError are ValueErrors)
_RUNTIME_ERRORS = (ValueError, TypeError, OSError, MemoryError)

# ------------------------------------------------------------------------------ option values


def _typed(convert, what, check=None):
    """An argparse ``type``: ``convert`` the text, then ``check`` it; errors name the value."""

    def parse(text):
        try:
            value = convert(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if check is not None:
            try:
                value = check(value)
            except (ValueError, TypeError) as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        return value

    parse.__name__ = what
    return parse


def _at_least(low):
    def check(value):
        if value < low:
            raise ValueError(f"must be >= {low}, got {value}")
        return value

    return check


def _positive_seconds(value):
    if not 0 < value <= 3600:  # also refuses NaN
        raise ValueError(f"must be a number of seconds in (0, 3600], got {value}")
    return value


def _zero_division(text):
    if text in ("exclude", "mulan"):
        return text
    if text in ("0", "1"):
        return int(text)
    raise argparse.ArgumentTypeError(f"must be 1, 0, exclude or mulan, got {text!r}")


def _not_empty(text):
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


_STREAM = _typed(str, "a stream name", _canonical_stream)
_METHOD = _typed(str, "a method name", _check_method_name)
_GRID_SIZE = _typed(int, "an integer", _check_grid_size)
_SEED = _typed(int, "an integer", _check_seed)
_N_INSTANCES = _typed(int, "an integer", _at_least(1000))
_WINDOWS = _typed(int, "an integer", _at_least(1))
_N_JOBS = _typed(int, "an integer", _at_least(1))
_SECONDS = _typed(float, "a number", _positive_seconds)
_PATH = _typed(str, "a path", _not_empty)

# parameters with their own option in ``mlsom run``: a --param may not set them
_OWN_OPTION = {"grid_size": "--grid-size", "random_state": "--seed"}


def _parse_params(items):
    """``--param KEY=VALUE`` items as a dict; a VALUE that is not JSON is taken as a string."""
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ValueError(
                f"--param expects KEY=VALUE with KEY a parameter name, e.g. learning_rate=0.1; "
                f"got {item!r}"
            )
        if key in _OWN_OPTION:
            raise ValueError(
                f"--param {item} conflicts with {_OWN_OPTION[key]}: give {key} with "
                f"{_OWN_OPTION[key]} only"
            )
        if key in params:
            raise ValueError(f"--param {key} is given twice")
        try:
            params[key] = json.loads(value)
        except (ValueError, RecursionError):  # not JSON: a string, e.g. neighborhood=gaussian
            params[key] = value
    return params


def _check_out_file(path):
    """A file the result can be written to (created at the end): its folder must exist and be
    writable, and the path may not be a folder or anything but a regular file."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise IsADirectoryError(f"--out {path} is a folder; give a file name")
    if p.exists() and not p.is_file():
        raise ValueError(f"--out {path} exists and is not a regular file")
    folder = p.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"--out {path}: the folder {str(folder)!r} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".mlsom-probe-"):
            pass
    except OSError as exc:
        raise type(exc)(f"--out {path}: cannot write in {str(folder)!r}: {exc.strerror}") from None
    return p


def _write_atomic(path, text):
    tmp = tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with tmp:
            tmp.write(text)
        os.replace(tmp.name, path)
    except BaseException:
        Path(tmp.name).unlink(missing_ok=True)
        raise


# ------------------------------------------------------------------------------ commands
#
# Each ``_cmd_<command>(args)`` checks everything and returns the work as a function of no
# argument; main() tells the errors of the two phases apart.


def _cmd_demo(args):
    run = check_run(
        Run(
            args.stream,
            "mlsom",
            args.grid_size,
            args.seed,
            args.n_instances,
            n_windows=args.windows,
        )
    )
    _find_data_files([run.stream], None)
    if not args.no_plot:
        _check_out_dir(args.out)
    return lambda: run_demo(
        run.stream,
        args.n_instances,
        run.grid_size,
        run.n_windows,
        run.seed,
        args.out,
        plot=not args.no_plot,
    )


def _cmd_run(args):
    data_home = _check_data_home(args.data_home)
    run = check_run(
        Run(
            args.stream,
            args.method,
            args.grid_size,
            args.seed,
            args.n_instances,
            _parse_params(args.param),
            n_windows=args.windows,
            zero_division=args.zero_division,
        )
    )
    _find_data_files([run.stream], data_home)
    out = None if args.out is None else _check_out_file(args.out)
    return lambda: _do_run(run, data_home, out)


def _do_run(run, data_home, out):
    from .evaluation import StreamEvaluation

    result = run_one(run, data_home=data_home)
    ev = StreamEvaluation.from_dict({k: v for k, v in result.items() if k != "run"})
    print(
        f"{run.label} on {run.stream} (seed {run.seed}): {ev.n_test} test instances, "
        f"{ev.n_windows} windows, 0/0 = {run.zero_division}"
    )
    for m in _TABLE_MEASURES:
        print(f"  {m:<16} mean over windows {ev.mean(m):.4f}   whole stream {ev.total(m):.4f}")
    print(
        f"  fit {ev.fit_seconds:.2f} s, stream {ev.stream_seconds:.2f} s "
        f"({ev.instances_per_second:,.0f} instances/s)"
    )
    if out is not None:
        _write_atomic(out, json.dumps(result))
        print(f"result written to {out}")


def _cmd_experiment(args):
    experiment = _prepare_experiment(
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
        connect_timeout=args.connect_timeout,
        n_windows=args.windows,
        zero_division=args.zero_division,
        plots=not args.no_plots,
        progress=not args.no_progress,
    )
    return lambda: _report_experiment(experiment.run(), args.out)


def _report_experiment(summary, out):
    print(
        f"{summary['n_runs']} runs ({summary['n_cached']} found finished, "
        f"{summary['n_run_now']} run now) in {summary['wall_seconds']:.1f} s; results in "
        f"{out}"
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


def _cmd_info(args):
    from ._config import show_config

    return show_config


_COMMANDS = {
    "demo": _cmd_demo,
    "run": _cmd_run,
    "experiment": _cmd_experiment,
    "info": _cmd_info,
}


def _parser():
    parser = _Parser(
        prog="mlsom",
        description=__doc__.splitlines()[0],
        epilog="exit status: 0 done, 1 an error during the work, 2 arguments refused before any "
        "work, 130 interrupted; errors are one line (--debug: the traceback)",
    )
    parser.add_argument("--version", action="version", version=f"mlsom {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    # --debug is accepted after the command as well; SUPPRESS keeps the sub-parser from
    # overwriting a --debug given before the command
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo", parents=[common], help="run the method on a built-in drifting stream"
    )
    demo.add_argument("--stream", type=_STREAM, default="MOA-Spher-5C-2A")
    demo.add_argument(
        "--n-instances",
        type=_N_INSTANCES,
        default=None,
        help="synthetic streams: instances to generate (default: the paper's size)",
    )
    demo.add_argument("--grid-size", type=_GRID_SIZE, default=4)
    demo.add_argument("--windows", type=_WINDOWS, default=50)
    demo.add_argument("--seed", type=_SEED, default=0)
    demo.add_argument(
        "--out", type=_PATH, default="mlsom-demo", help="folder of the plot (default: %(default)s)"
    )
    demo.add_argument("--no-plot", action="store_true")

    run = sub.add_parser("run", parents=[common], help="one method on one stream")
    run.add_argument(
        "--stream", type=_STREAM, required=True, help="a name of Table 1, e.g. MOA-Spher-5C-2A"
    )
    run.add_argument(
        "--method", type=_METHOD, default="mlsom", help="mlsom, MINAS-BR or a baseline name"
    )
    run.add_argument("--grid-size", type=_GRID_SIZE, default=None, help="mlsom's d")
    run.add_argument("--seed", type=_SEED, default=0)
    run.add_argument("--n-instances", type=_N_INSTANCES, default=None)
    run.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter (JSON value, else a string), repeatable; not grid_size "
        "(--grid-size) nor random_state (--seed)",
    )
    run.add_argument("--data-home", type=_PATH, default=None, help="folder of the real data files")
    run.add_argument("--windows", type=_WINDOWS, default=50)
    run.add_argument(
        "--zero-division",
        type=_zero_division,
        default=1,
        help="0/0 convention: 1 (Mulan), 0, exclude or mulan",
    )
    run.add_argument("--out", type=_PATH, default=None, help="write the full result as JSON")

    exp = sub.add_parser(
        "experiment", parents=[common], help="streams x methods x grid sizes x seeds"
    )
    exp.add_argument("--profile", choices=["quick", "paper"], default="quick")
    exp.add_argument("--out", type=_PATH, default="mlsom-experiment")
    exp.add_argument("--streams", nargs="+", type=_STREAM, default=None)
    exp.add_argument("--methods", nargs="+", type=_METHOD, default=None)
    exp.add_argument("--grid-sizes", nargs="+", type=_GRID_SIZE, default=None)
    exp.add_argument("--seeds", nargs="+", type=_SEED, default=None)
    exp.add_argument("--n-instances", type=_N_INSTANCES, default=None)
    exp.add_argument("--data-home", type=_PATH, default=None)
    exp.add_argument(
        "--n-jobs", type=_N_JOBS, default=1, help="worker processes (at most the CPUs)"
    )
    exp.add_argument(
        "--scheduler",
        type=_PATH,
        default=None,
        help="dask.distributed scheduler address, or 'local' for a LocalCluster",
    )
    exp.add_argument(
        "--connect-timeout",
        type=_SECONDS,
        default=5.0,
        help="seconds to wait for the scheduler (default: %(default)s)",
    )
    exp.add_argument("--windows", type=_WINDOWS, default=50)
    exp.add_argument("--zero-division", type=_zero_division, default=1)
    exp.add_argument("--no-plots", action="store_true")
    exp.add_argument("--no-progress", action="store_true")

    sub.add_parser("info", parents=[common], help="print version, build and machine information")
    return parser


def main(argv=None):
    """Run the command line; returns the exit status (see the module documentation)."""
    args = None

    def debug():
        return getattr(args, "debug", False)

    try:
        args = _parser().parse_args(argv)
        try:
            work = _COMMANDS[args.command](args)
        except (ValueError, TypeError, OSError) as exc:
            raise UsageError(_usage_message(args.command, exc)) from exc
        work()
    except UsageError as exc:
        if debug():
            raise
        print(f"mlsom: error: {exc}", file=sys.stderr)
        return 2
    except ExperimentInterrupted as exc:
        print(
            f"mlsom: interrupted: {exc.n_finished} of {exc.n_runs} runs finished and kept in "
            f"{exc.out_dir}; rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    except KeyboardInterrupt:
        if debug():
            raise
        print("mlsom: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:
        if debug():
            raise
        print(
            f"mlsom: error: {_one_line(exc)} (install the optional dependencies: "
            "pip install 'mlsom[experiments]')",
            file=sys.stderr,
        )
        return 1
    except _RUNTIME_ERRORS as exc:
        if debug():
            raise
        print(f"mlsom: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: still one line, the traceback with --debug
        if debug():
            raise
        print(
            f"mlsom: error: unexpected {type(exc).__name__}: {_one_line(exc)} (rerun with "
            "--debug for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
