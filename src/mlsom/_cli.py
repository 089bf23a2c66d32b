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
* 130: interrupted (Ctrl-C); ``mlsom experiment`` keeps its finished runs and says how many;
* 141: the reader of the output went away (``mlsom run ... | head``): the command stops and
  prints nothing more, as a program that the SIGPIPE signal ends (status 128 + 13 in a shell).

``--stream-source`` chooses the generator of the generated MOA-Spher streams (5C-2A, 5C-3A,
3C-2A), as ``source=`` of :func:`mlsom.datasets.load`: ``generator`` (the default, calibrated,
3C-2A to its own paper prefix), ``generator-v2`` (every stream calibrated to 5C-2A's prefix, the
default until 2026-12-07) or ``generator-v1`` (the first one, the streams of earlier versions bit
for bit). ``demo`` and ``run``
refuse it for a stream that has no generator to choose; ``experiment`` applies it to its generated
MOA-Spher streams and refuses it only when it has none.

A command line holds at most 256 arguments that start with ``-`` (options, or values that look
like them; a command has a few dozen): argparse's time grows with the square of their number.

``mlsom run --param KEY=VALUE`` cannot set a parameter that has its own option (``grid_size``:
``--grid-size``, ``random_state``: ``--seed``): such a ``--param`` is refused, so that there is
one place for each value. ``mlsom experiment --param`` gives the parameter to every method that
takes it (and refuses one that none takes, and ``grid_size`` and ``random_state``).

``--data FILE`` (``run``: one file instead of ``--stream``; ``experiment``: files beside or
instead of ``--streams``) evaluates on a file of one's own (:func:`mlsom.datasets.load_file`:
ARFF or .npz), with ``--xml``, ``--labels``, ``--train-fraction``, ``--train-rows`` and
``--split`` telling its labels and its labelled part; those options are refused without it.
``--scale minmax_on_train`` scales the features with the labelled set's minimum and range. With
``--grid-size auto`` / ``--grid-sizes auto``, the d chosen is printed and stored.
"""

import argparse
import copy
import json
import os
import secrets
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from . import __version__
from ._config import show_config
from ._novelty_experiment import NOVELTY_METHODS, run_novelty_experiment
from ._som import SOMStreamClassifier
from .datasets import DataFile, list_novelty_streams, list_streams, load, load_novelty
from .datasets._files import SPLITS
from .datasets._novelty_streams import novelty_entry
from .datasets._preprocess import SCALINGS
from .datasets._registry import DATA_ENV
from .evaluation import StreamEvaluation
from .experiment import (
    PROFILES,
    REFERENCE_MARK,
    STREAM_SOURCES,
    UPPER_BOUND_MARK,
    ExperimentInterrupted,
    Run,
    canonical_stream,
    check_data_home,
    check_grid_size,
    check_method_name,
    check_out_dir,
    check_run,
    check_seed,
    default_grid_size,
    find_data_files,
    is_real_stream,
    is_reference,
    make_method,
    prepare_experiment,
    run_one,
)
from .plotting import plot_curves, save_png
from .protocol import evaluate_many, evaluate_novelty_stream
from .references import REFERENCES

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
    stream_source=None,
):
    """Run SOM-Stream-ML on a built-in drifting stream, print the results, plot the curves.

    The model is fitted on the stream's first 10 % and then classifies the rest without ever
    seeing a label. Beside it runs the same model frozen after ``fit`` (``predict`` only), which
    shows what the online adaptation adds. ``stream_source`` is ``source=`` of
    :func:`mlsom.datasets.load` (None: the stream's default, the calibrated generator for the
    generated MOA-Spher streams; "generator-v2", "generator-v1": the earlier ones). Returns a
    dict of the results.
    """
    out = file or sys.stdout
    t0 = time.perf_counter()
    ds = load(stream, n_instances=n_instances, random_state=seed, source=stream_source)
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
    if grid_size == "auto":
        grid_size = f"{model.grid_size_}, chosen by auto"
        print(f"grid size chosen by auto on the labelled set: d = {model.grid_size_}", file=out)
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

    def parse_known_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        # (after "--" every argument is a value, whatever it starts with)
        end = args.index("--") if "--" in args else len(args)
        n_options = sum(1 for a in args[:end] if isinstance(a, str) and a[:1] == "-" and a != "-")
        if n_options > _MAX_OPTIONS:
            self.error(
                f"too many options: {n_options} arguments start with '-' (options, or values "
                f"that look like them); a command line holds at most {_MAX_OPTIONS}"
            )
        return super().parse_known_args(args, namespace)

    def error(self, message):
        raise UsageError(f"{_one_line(ValueError(message))} (see '{self.prog} --help')")


# The most arguments that start with '-' a command line may hold (a command has a few dozen
# options): argparse looks for the next option among all of them at each one, a time that grows
# with the square of their number.
_MAX_OPTIONS = 256


# the options of a data file of one's own and of the scaling, in ``run`` and ``experiment``
_DATA_OPTIONS = {
    "data_file": "--data",
    "xml": "--xml",
    "label_location": "--labels",
    "train_fraction": "--train-fraction",
    "train_rows": "--train-rows",
    "split": "--split",
    "scale": "--scale",
}

# the option of each argument that the library's checks name (``exc.argument``), per command
_OPTIONS = {
    "demo": {
        "stream": "--stream",
        "n_instances": "--n-instances",
        "grid_size": "--grid-size",
        "seed": "--seed",
        "n_windows": "--windows",
        "out_dir": "--out",
        "stream_source": "--stream-source",
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
        "label_fraction": "--label-fraction",
        "label_delay": "--label-delay",
        "label_seed": "--label-seed",
        "stream_source": "--stream-source",
        **_DATA_OPTIONS,
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
        "label_fractions": "--label-fractions",
        "label_delays": "--label-delays",
        "label_seed": "--label-seed",
        "stream_source": "--stream-source",
        "params": "--param",
        "data_files": "--data",
        **_DATA_OPTIONS,
    },
}


# what to do about a real stream's missing data files, per command, in the command's options
_MISSING_DATA_ADVICE = {
    "demo": (
        f"Set the environment variable {DATA_ENV} to the folder of its files, or choose a "
        "generated stream with --stream"
    ),
    "run": (
        f"Give the folder of its files with --data-home (or the environment variable {DATA_ENV}),"
        " or choose another --stream"
    ),
    "experiment": (
        "Leave these streams out of --streams, or give the folder of their files with "
        f"--data-home (or the environment variable {DATA_ENV})"
    ),
}


def _usage_message(command, exc):
    """The message of an argument refused by a check, with the option it is about."""
    missing = getattr(exc, "missing_data", None)
    if missing and command in _MISSING_DATA_ADVICE:
        return _one_line("; ".join(missing) + f". {_MISSING_DATA_ADVICE[command]}.")
    argument = getattr(exc, "argument", None)
    option = _OPTIONS.get(command, {}).get(argument)
    text = _one_line(exc)
    if argument in ("data_file", "data_files"):  # the reader's advice, in options
        text = text.replace(
            "pass xml=, labels= or label_location=", "give --xml FILE or --labels last:N"
        )
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


_STREAM = _typed(str, "a stream name", canonical_stream)
_NOVELTY_STREAM = _typed(str, "a novelty stream name", lambda name: novelty_entry(name).name)
_METHOD = _typed(str, "a method name", check_method_name)
_GRID_SIZE = _typed(
    lambda text: text if text == "auto" else int(text), "an integer or auto", check_grid_size
)
_SEED = _typed(int, "an integer", check_seed)
_N_INSTANCES = _typed(int, "an integer", _at_least(1000))
_WINDOWS = _typed(int, "an integer", _at_least(1))
_N_JOBS = _typed(int, "an integer", _at_least(1))
_SECONDS = _typed(float, "a number", _positive_seconds)
_PATH = _typed(str, "a path", _not_empty)


def _fraction(value):
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise ValueError(f"must be in [0, 1], got {value}")
    return value


_LABEL_FRACTION = _typed(float, "a number", _fraction)
_LABEL_DELAY = _typed(int, "an integer", _at_least(0))


def _open_fraction(value):
    if not 0.0 < value < 1.0:  # also refuses NaN
        raise ValueError(f"must be in (0, 1), got {value}")
    return value


def _label_location(text):
    where, sep, count = text.partition(":")
    try:
        n = int(count)
    except ValueError:
        n = 0
    if not sep or where not in ("first", "last") or n < 1:
        raise argparse.ArgumentTypeError(
            f"expected first:N or last:N (the labels are the first or last N attributes), "
            f"got {text!r}"
        )
    return (where, n)


_TRAIN_FRACTION = _typed(float, "a number", _open_fraction)
_TRAIN_ROWS = _typed(int, "an integer", _at_least(1))

# parameters with their own option in ``mlsom run`` (and ``experiment``): a --param may not set
# them
_OWN_OPTION = {"grid_size": "--grid-size", "random_state": "--seed"}
_OWN_OPTIONS = {"grid_size": "--grid-sizes", "random_state": "--seeds"}


def _parse_params(items, own_option=None):
    """``--param KEY=VALUE`` items as a dict; a VALUE that is not JSON is taken as a string.
    ``own_option``: the parameters that have an option of their own (default ``run``'s)."""
    own_option = _OWN_OPTION if own_option is None else own_option
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ValueError(
                f"--param expects KEY=VALUE with KEY a parameter name, e.g. learning_rate=0.1; "
                f"got {item!r}"
            )
        if key in own_option:
            raise ValueError(
                f"--param {item} conflicts with {own_option[key]}: give {key} with "
                f"{own_option[key]} only"
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
    """Write through a temporary file and a rename; the file gets the usual permissions (0666
    less the umask), not the owner-only ones of tempfile's files."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
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
            stream_source=args.stream_source,
        )
    )
    find_data_files([run.stream], None)
    if not args.no_plot:
        check_out_dir(args.out)
    return lambda: run_demo(
        run.stream,
        args.n_instances,
        run.grid_size,
        run.n_windows,
        run.seed,
        args.out,
        plot=not args.no_plot,
        stream_source=run.stream_source,
    )


def _data_files(args):
    """The DataFile of each ``--data`` path with ``--xml``, ``--labels``, ``--train-fraction``,
    ``--train-rows`` and ``--split``; [] without ``--data``, where those options are refused."""
    paths = args.data if isinstance(args.data, list) else [args.data] if args.data else []
    options = {
        "--xml": args.xml,
        "--labels": args.labels,
        "--train-fraction": args.train_fraction,
        "--train-rows": args.train_rows,
        "--split": args.split,
    }
    if not paths:
        for option, value in options.items():
            if value is not None:
                raise ValueError(
                    f"{option} applies to a data file of one's own (--data FILE), not to the "
                    "streams of Table 1"
                )
        return []
    if args.xml is not None and len(paths) > 1:
        raise ValueError(
            f"--xml {args.xml} names the labels of one file, and --data gives {len(paths)}: run "
            "them one at a time, or let each file find its labels (MEKA's -C n in its relation "
            "name, or a Mulan <name>.xml beside it)"
        )
    return [
        DataFile(
            path,
            xml=args.xml,
            label_location=args.labels,
            train_fraction=args.train_fraction,
            train_rows=args.train_rows,
            split="prefix" if args.split is None else args.split,
        )
        for path in paths
    ]


def _cmd_run(args):
    if args.novelty_stream is not None:
        return _cmd_run_novelty(args)
    (data_file,) = _data_files(args) or [None]
    if data_file is not None and args.data_home is not None:
        raise ValueError(
            f"--data-home {args.data_home} applies to the real streams of Table 1; --data reads "
            "its file where it is"
        )
    data_home = check_data_home(args.data_home)
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
            label_fraction=args.label_fraction,
            label_delay=args.label_delay,
            label_seed=args.label_seed,
            stream_source=args.stream_source,
            data_file=data_file,
            scale=args.scale,
        )
    )
    if data_file is None:
        find_data_files([run.stream], data_home)
    out = None if args.out is None else _check_out_file(args.out)
    return lambda: _do_run(run, data_home, out)


# the options of one's own data (``run`` and ``experiment``), with their defaults: a novelty
# stream takes none of them
_OWN_DATA_DEFAULTS = {
    "scale": None,
    "xml": None,
    "labels": None,
    "train_fraction": None,
    "train_rows": None,
    "split": None,
}

# the options of ``run`` that a novelty stream does not take, with their defaults
_NOT_FOR_NOVELTY = {
    "stream_source": None,
    "label_fraction": None,
    "label_delay": 0,
    "label_seed": 0,
    "zero_division": 1,
    **_OWN_DATA_DEFAULTS,
}


def _refuse_options(args, defaults, what):
    """ValueError naming the first option of ``defaults`` (dest: default) set otherwise: it
    does not apply to ``what``."""
    for key, default in defaults.items():
        if getattr(args, key) != default:
            raise ValueError(f"--{key.replace('_', '-')} does not apply to {what}")


def _cmd_run_novelty(args):
    """``mlsom run --novelty-stream``: checked, then the work as a function."""
    _refuse_options(
        args,
        _NOT_FOR_NOVELTY,
        "--novelty-stream (its labelled set, stream and evaluation are the novelty stream's)",
    )
    entry = novelty_entry(args.novelty_stream)
    real = entry.kind == "real"
    if real and args.n_instances is not None:
        raise ValueError(f"--n-instances applies to generated streams, not to {entry.name}")
    if not real and args.data_home is not None:
        raise ValueError(f"--data-home applies to real streams, not to {entry.name}")
    kw = {"data_home": check_data_home(args.data_home)} if real else {"random_state": 0}
    if args.n_instances is not None:
        kw["n_instances"] = args.n_instances
    method = make_method(
        args.method, grid_size=args.grid_size, seed=args.seed, params=_parse_params(args.param)
    )
    out = None if args.out is None else _check_out_file(args.out)
    dataset = load_novelty(entry.name, **kw)
    return lambda: _do_run_novelty(args, method, dataset, out)


def _do_run_novelty(args, method, dataset, out):
    t0 = time.perf_counter()
    ev = evaluate_novelty_stream(method, dataset, n_windows=args.windows)
    seconds = time.perf_counter() - t0
    summary = ev.summary()
    if out is not None:
        head = {"stream": dataset.name, "method": args.method, "seed": args.seed}
        _write_atomic(out, json.dumps({**head, "seconds": seconds, **summary}))
    print(
        f"{args.method} on the novelty stream {dataset.name} (seed {args.seed}): {ev.n_test} "
        f"test instances, {args.windows} windows; new labels "
        f"{', '.join(str(dataset.label_names[c]) for c in dataset.new_labels)}"
    )
    f1m = summary["f1m"]
    print(f"  F1M, every label from its first appearance  {f1m['appeared']:.4f}")
    print(f"  F1M, the labels the method knows            {f1m['known']:.4f}")
    print(f"  unknown rate                                {summary['unknown_rate']:.4f}")
    print(f"  patterns {summary['n_patterns']}, false {summary['n_false_patterns']}")
    for name, t in summary["time_to_detect"].items():
        print(f"  {name}: {'never detected' if t is None else f'detected after {t} instances'}")
    print(f"  {seconds:.1f} s")
    if out is not None:
        print(f"result written to {out}")


def _do_run(run, data_home, out):
    result = run_one(run, data_home=data_home)
    if out is not None:  # first: a reader of stdout that goes away cannot lose the result
        _write_atomic(out, json.dumps(result))
    ev = StreamEvaluation.from_dict({k: v for k, v in result.items() if k != "run"})
    label = run.label + (REFERENCE_MARK if is_reference(run.method) else "")
    print(
        f"{label} on {run.stream} (seed {run.seed}): {ev.n_test} test instances, "
        f"{ev.n_windows} windows, 0/0 = {run.zero_division}"
    )
    if run.grid_size == "auto":
        print(f"  grid size chosen by auto on the labelled set: d = {ev.info['fitted_grid_size']}")
    for m in _TABLE_MEASURES:
        print(f"  {m:<16} mean over windows {ev.mean(m):.4f}   whole stream {ev.total(m):.4f}")
    print(
        f"  fit {ev.fit_seconds:.2f} s, stream {ev.stream_seconds:.2f} s "
        f"({ev.instances_per_second:,.0f} instances/s)"
    )
    if out is not None:
        print(f"result written to {out}")


# the options of ``experiment`` that novelty streams do not take, with their defaults
_NOT_FOR_NOVELTY_EXPERIMENT = {
    "profile": "quick",
    "streams": None,
    "grid_sizes": None,
    "stream_source": None,
    "n_jobs": 1,
    "scheduler": None,
    "connect_timeout": 5.0,
    "zero_division": 1,
    "label_fractions": None,
    "label_delays": None,
    "label_seed": 0,
    "data": None,
    **_OWN_DATA_DEFAULTS,
}


def _cmd_novelty_experiment(args):
    _refuse_options(
        args,
        _NOT_FOR_NOVELTY_EXPERIMENT,
        "--novelty-streams (their labelled sets, streams and evaluation are the novelty streams')",
    )
    methods = args.methods or list(NOVELTY_METHODS)
    seeds = args.seeds or [0]
    params = _parse_params(args.param, _OWN_OPTIONS) or None
    for name in args.novelty_streams:  # the checks of run_novelty_experiment, before any work
        novelty_entry(name)
    out = check_out_dir(args.out)
    return lambda: _report_novelty_experiment(
        run_novelty_experiment(
            out,
            args.novelty_streams,
            methods=methods,
            seeds=seeds,
            n_instances=args.n_instances,
            data_home=args.data_home,
            n_windows=args.windows,
            params=params,
            plots=not args.no_plots,
        ),
        out,
    )


def _report_novelty_experiment(rows, out):
    print(
        f"{len(rows)} stream x method results in {out} (novelty-summary.json, novelty-runs.json; "
        "the runs kept in novelty-runs/)"
    )
    print(f"{'stream':<20} {'method':<14} {'F1M every':>9} {'F1M known':>9} {'unknown':>8} "
          f"{'patterns (false)':>17}  time to detect (median)")  # fmt: skip
    for r in rows:
        ttd = ", ".join(
            f"{k}: {'never' if v is None else int(v)}" for k, v in r["time_to_detect"].items()
        )
        pat = f"{r['n_patterns']:.1f} ({r['n_false_patterns']:.1f})"
        f1m = f"{r['f1m_appeared']:>9.4f} {r['f1m_known']:>9.4f}"
        print(f"{r['stream']:<20} {r['method']:<14} {f1m} {r['unknown_rate']:>8.1%} {pat:>17}  "
              f"{ttd or '-'}")  # fmt: skip


def _cmd_experiment(args):
    if args.novelty_streams is not None:
        return _cmd_novelty_experiment(args)
    experiment = prepare_experiment(
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
        label_fractions=args.label_fractions,
        label_delays=args.label_delays,
        label_seed=args.label_seed,
        stream_source=args.stream_source,
        data_files=_data_files(args) or None,
        params=_parse_params(args.param, _OWN_OPTIONS) or None,
        scale=args.scale,
    )
    return lambda: _report_experiment(experiment.run(), args.out)


# The columns of the experiment's printed tables: (measure, header, width); the cardinality's
# column gives the predicted and the true one.
_EXPERIMENT_COLUMNS = (
    ("macro_f1", "macro F", 9),
    ("micro_f1", "micro F", 9),
    ("example_f1", "example F", 11),
    ("hamming_loss", "Hamming", 9),
)
_RANK_COLUMNS = (*_EXPERIMENT_COLUMNS, ("cardinality_error", "card. error", 13))


def _report_experiment(summary, out):
    print(
        f"{summary['n_runs']} runs ({summary['n_cached']} found finished, "
        f"{summary['n_run_now']} run now) in {summary['wall_seconds']:.1f} s; results in "
        f"{out}"
    )
    references = set(summary.get("references", ()))
    upper_bounds = set(summary.get("upper_bounds", ()))

    def shown(label):  # a reference predictor's or an upper bound's label with its mark
        if label in references:
            return label + REFERENCE_MARK
        return label + UPPER_BOUND_MARK if label in upper_bounds else label

    labels = [shown(m) for v in summary["mean_macro_f1"].values() for m in v]
    names = summary.get("statistics", {}).get("methods", [])
    width = max([22, *(len(m) for m in labels + names)])
    _print_measures(summary, shown, width)
    if "statistics" in summary:
        _print_ranks(summary, width)
    if references or upper_bounds:
        print(
            f"\n{REFERENCE_MARK.strip()}: a reference predictor, which learns nothing beyond the "
            f"labelled set;\n{UPPER_BOUND_MARK.strip()}: learns the true labels of the test stream"
        )
    est = summary["estimated_paper_seconds"]
    left_out = est.get("methods_not_measured", [])
    print(
        f"\nestimated time of --profile paper with {est['workers']} worker(s): "
        f"{_duration(est['seconds'])} for the {est.get('runs', 0):,} runs of the "
        f"{len(est['methods_measured'])} method(s) measured here"
        + (f" ({len(left_out)} other method(s) not counted)" if left_out else "")
    )


def _auto_d(summary, stream, label):
    """What an experiment's table shows after a ``grid_size="auto"`` run's value: the d chosen,
    once if every seed chose it, else per seed."""
    if "-dauto" not in label:
        return ""
    chosen = summary.get("fitted_grid_size", {}).get(stream, {}).get(label) or [None]
    shown = ["?" if d is None else str(d) for d in chosen]
    if len(set(shown)) == 1:
        return f"   (auto chose d = {shown[0]})"
    return f"   (auto chose d = {', '.join(shown)} over the seeds)"


def _print_measures(summary, shown, width):
    """Per stream, every method's mean over windows of each cumulative measure, by macro F."""
    means = summary.get("mean_by_measure", {})
    print(
        "\nmean over windows of each cumulative measure (mean over seeds; Hamming loss: lower "
        "is better;\ncardinality: labels per instance, predicted / true):"
    )
    header = "".join(f"{name:>{w}}" for _, name, w in _EXPERIMENT_COLUMNS)
    for stream, methods in summary["mean_macro_f1"].items():
        print(f"  {stream:<{width + 2}}{header}  cardinality")
        for m, _ in sorted(methods.items(), key=lambda kv: -kv[1]):
            values = "".join(f"{means[c][stream][m]:>{w}.4f}" for c, _, w in _EXPERIMENT_COLUMNS)
            cardinality = (
                f"{means['predicted_cardinality'][stream][m]:.2f} / "
                f"{means['true_cardinality'][stream][m]:.2f}"
            )
            print(f"    {shown(m):<{width}}{values}  {cardinality}{_auto_d(summary, stream, m)}")
        best = summary["best_grid_size"].get(stream)
        if best:
            print(f"    best d = {best['grid_size']} (optimistic: chosen on the test stream)")


def _print_ranks(summary, width):
    """The tests over the streams of macro F, then every method's mean rank for each measure
    (1: the best; the lowest Hamming loss and cardinality error) and each Friedman p-value."""
    st = summary["statistics"]
    print(
        f"\nFriedman p = {st['friedman_pvalue']:.3g}, Iman-Davenport p = "
        f"{st['iman_davenport_pvalue']:.3g}, Nemenyi CD = {st['nemenyi_cd']:.2f} (macro F, "
        f"alpha = {st['alpha']:g})"
    )
    by_measure = summary["statistics_by_measure"]
    columns = [c for c in _RANK_COLUMNS if c[0] in by_measure]
    print(f"mean ranks over {len(st['streams'])} streams (1 = best):")
    print(f"  {'':<{width + 2}}" + "".join(f"{name:>{w}}" for _, name, w in columns))
    ranks = {
        c: dict(zip(by_measure[c]["methods"], by_measure[c]["mean_ranks"], strict=True))
        for c, _, _ in columns
    }
    for m in sorted(st["methods"], key=ranks["macro_f1"].get):
        values = "".join(f"{ranks[c].get(m, float('nan')):>{w}.2f}" for c, _, w in columns)
        print(f"    {m:<{width}}{values}")
    pvalues = "".join(f"{by_measure[c]['friedman_pvalue']:>{w}.3g}" for c, _, w in columns)
    print(f"    {'Friedman p':<{width}}{pvalues}")


def _duration(seconds):
    """A duration for people: seconds under a minute, minutes under an hour, then hours, and
    days from two days up."""
    if seconds < 59.5:
        return "under 1 s" if seconds < 0.5 else f"{seconds:.0f} s"
    if seconds < 3570:  # 59.5 min: "60 min" would read better as "1.0 h"
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _cmd_info(args):
    return show_config


_COMMANDS = {
    "demo": _cmd_demo,
    "run": _cmd_run,
    "experiment": _cmd_experiment,
    "info": _cmd_info,
}


def _wrap(text, indent="  "):
    """``text`` wrapped to 78 columns under ``indent`` (for the raw epilogs)."""
    return textwrap.fill(
        text, 78, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    )


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (laid out for 80 columns); option help wrapped to the
    terminal without breaking a name at a hyphen (MOA-Spher-5C-2A, --n-jobs, mlsom-demo)."""

    def _split_lines(self, text, width):
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _stream_names(data_home=True):
    """The streams of Table 1, generated and read from data files, for the epilogs."""
    names = list_streams()
    generated = [n for n in names if not is_real_stream(n)]
    real = [n for n in names if is_real_stream(n)]
    return (
        "streams (the paper's Table 1; names are case-insensitive):\n"
        + _wrap("generated: " + ", ".join(generated))
        + "\n"
        + _wrap(
            "read from data files ("
            + ("--data-home or " if data_home else "the folder in ")
            + "$MLSOM_DATA; see docs/datasets.md): "
            + ", ".join(real)
        )
    )


def _profiles():
    quick = PROFILES["quick"]
    return (
        "profiles:\n"
        + _wrap(
            f"quick (minutes): streams {' '.join(quick['streams'])}, "
            f"{quick['n_instances']:,} instances each; methods {' '.join(quick['methods'])}; "
            f"grid sizes {' '.join(map(str, quick['grid_sizes']))}; "
            f"seeds {' '.join(map(str, quick['seeds']))}"
        )
        + "\n"
        + _wrap(
            "paper (the paper's design): every stream of Table 1 at its full size, every "
            "method but mlsom-frozen, grid sizes 1 to 10, seeds 0 to 9 (the summary of every "
            "experiment estimates how long this one takes)"
        )
    )


_EXIT_STATUS = """\
exit status:
  0    done
  1    an error during the work (a data file that cannot be read, an estimator
       that refuses its data, memory, a scheduler out of reach, a disk)
  2    arguments refused before any work (every argument is checked first)
  130  interrupted (Ctrl-C)
  141  the reader of the output went away ('mlsom ... | head'): nothing is
       printed, as for a program that SIGPIPE ends
An error is one line on stderr, 'mlsom: error: ...'; --debug shows its traceback
instead."""

_STREAM_SOURCE_HELP = (
    "the generator of the generated MOA-Spher streams (5C-2A, 5C-3A, 3C-2A): generator, the "
    "calibrated one; generator-v2, every stream calibrated to 5C-2A (the default until "
    "2026-12-07); or generator-v1, the first one (the streams of earlier versions, bit for "
    "bit); {which} (default: generator)"
)

_REFERENCES_HELP = (
    "The reference predictors, which a method must beat to show that it learnt something, are "
    "marked (reference) in the output: every-label predicts every label for every instance; "
    "label-rate each label independently at its rate in the labelled set (seeded); "
    "top-z the ceil(z) most frequent labels of the labelled set for every instance (z: its "
    "labels per instance); mlsom-frozen is mlsom fitted on the labelled set, then frozen "
    "(no online update; it takes the grid size and parameters of mlsom)."
)

_DEBUG_HELP = "show the traceback of an error instead of one line (default: off)"


def _add_demo(sub, common, streams):
    """The ``demo`` subcommand's parser."""
    formatter = _Formatter
    demo = sub.add_parser(
        "demo",
        parents=[common],
        formatter_class=formatter,
        help="run the method on a built-in drifting stream, print the results, plot them",
        description="Fit SOM-Stream-ML on the labelled start of a stream (its first 10 %, or\n"
        "the paper's training file), then classify the rest without any label,\n"
        "adapting from its own predictions; beside it, the same model frozen after\n"
        "the fit. Prints the cumulative macro F per window and the measures over\n"
        "the whole stream, and plots the curves (matplotlib).",
        epilog=_stream_names(data_home=False),
    )
    demo.add_argument(
        "--stream",
        type=_STREAM,
        default="MOA-Spher-5C-2A",
        help="a stream of Table 1, see below (default: %(default)s)",
    )
    demo.add_argument(
        "--n-instances",
        type=_N_INSTANCES,
        default=None,
        help="instances to generate, at least 1000; generated streams only "
        "(default: the stream's size in Table 1, 95,529 for MOA-Spher-5C-2A)",
    )
    demo.add_argument(
        "--grid-size",
        type=_GRID_SIZE,
        default=4,
        help="d: each label's map has d x d neurons (default: %(default)s)",
    )
    demo.add_argument(
        "--windows",
        type=_WINDOWS,
        default=50,
        help="evaluation windows over the stream (default: %(default)s)",
    )
    demo.add_argument(
        "--seed",
        type=_SEED,
        default=0,
        help="seed of the generated stream and of the model (default: %(default)s)",
    )
    demo.add_argument(
        "--stream-source",
        choices=STREAM_SOURCES,
        default=None,
        help=_STREAM_SOURCE_HELP.format(which="refused for the other streams"),
    )
    demo.add_argument(
        "--out",
        type=_PATH,
        default="mlsom-demo",
        help="folder of the plot, created if needed (default: %(default)s)",
    )
    demo.add_argument(
        "--no-plot",
        action="store_true",
        help="print the results only (default: off: the plot is written to --out)",
    )


def _add_run(sub, common, streams):
    """The ``run`` subcommand's parser."""
    formatter = _Formatter
    run = sub.add_parser(
        "run",
        parents=[common],
        formatter_class=formatter,
        help="evaluate one method on one stream",
        description="Evaluate one method on one stream with the paper's protocol: fit on the\n"
        "labelled start of the stream, then classify the rest in order. Prints each\n"
        "measure (mean over the windows and over the whole stream) and the timings.\n"
        "A generated stream is always made with seed 0 (as in 'mlsom experiment');\n"
        "--seed seeds the method.",
        epilog="--param KEY=VALUE sets a parameter of the method's constructor; VALUE is\n"
        "read as JSON (0.1, 100, true, null), else taken as a string (gaussian).\n"
        "A parameter that has an option of its own cannot be set with --param\n"
        "(grid_size: --grid-size, random_state: --seed), so each value has one place.\n"
        f"\n{_wrap(_REFERENCES_HELP, '')}\n\n{streams}",
    )
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--stream",
        type=_STREAM,
        default=None,
        help="a stream of Table 1, see below (default: none: give --stream or --data)",
    )
    source.add_argument(
        "--novelty-stream",
        type=_NOVELTY_STREAM,
        default=None,
        metavar="NAME",
        help=f"a novelty stream instead ({', '.join(list_novelty_streams())}): new labels appear "
        "in it; evaluated as MINAS-BR's evaluator does (F1M in both conventions, the unknown "
        "rate, the patterns, each new label's time to detect); mlsom finds new labels with "
        "--param novelty=true (default: none)",
    )
    source.add_argument(
        "--data",
        type=_PATH,
        default=None,
        metavar="FILE",
        help="a data file of one's own instead: ARFF (Mulan, with its XML; MEKA, with -C in the "
        "relation name; .gz, .bz2, .xz too) or .npz (arrays X and Y); its first rows are the "
        "labelled set, the rest the stream in order (default: none: give --stream or --data)",
    )
    run.add_argument(
        "--method",
        type=_METHOD,
        default="mlsom",
        help=f"mlsom, MINAS-BR, a reference predictor ({', '.join(REFERENCES)}) or a "
        "baseline, e.g. BR-J48, ML-kNN, BR-HT (an unknown name is refused with the list of "
        "all) (default: %(default)s)",
    )
    run.add_argument(
        "--grid-size",
        type=_GRID_SIZE,
        default=None,
        help=f"mlsom's d (d x d neurons per label), or auto to choose it from the labelled set; "
        f"mlsom and mlsom-frozen only (default: the estimator's, {default_grid_size()})",
    )
    run.add_argument(
        "--seed", type=_SEED, default=0, help="seed of the method (default: %(default)s)"
    )
    run.add_argument(
        "--n-instances",
        type=_N_INSTANCES,
        default=None,
        help="instances to generate, at least 1000; generated streams only "
        "(default: the stream's size in Table 1)",
    )
    run.add_argument(
        "--stream-source",
        choices=STREAM_SOURCES,
        default=None,
        help=_STREAM_SOURCE_HELP.format(
            which="refused for the other streams (MOA-Spher-2C-2A and the real ones are read "
            "from their data files)"
        ),
    )
    run.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter of the method, repeatable; not grid_size nor "
        "random_state (see below) (default: none: the method's defaults)",
    )
    run.add_argument(
        "--data-home",
        type=_PATH,
        default=None,
        help="folder of the real streams' data files (default: the folder in $MLSOM_DATA, if set)",
    )
    _add_data_options(run, "the labels of the --data file")
    _add_run_protocol(run)


def _add_data_options(parser, labels):
    """The options of a data file of one's own (``--data``) and of the scaling."""
    parser.add_argument(
        "--xml",
        type=_PATH,
        default=None,
        metavar="FILE",
        help=f"the Mulan XML file naming {labels} (default: none: MEKA's -C n in the relation "
        "name, else the file's <name>.xml beside it)",
    )
    parser.add_argument(
        "--labels",
        type=_label_location,
        default=None,
        metavar="first:N|last:N",
        help="the labels are the first or last N attributes of the ARFF file (default: none: "
        "as for --xml)",
    )
    parser.add_argument(
        "--train-fraction",
        type=_TRAIN_FRACTION,
        default=None,
        metavar="F",
        help="the labelled set's share of the file's rows, in (0, 1) (default: none: 0.1, the "
        "protocol's 10 %%)",
    )
    parser.add_argument(
        "--train-rows",
        type=_TRAIN_ROWS,
        default=None,
        metavar="N",
        help="the labelled set's number of rows instead of --train-fraction (default: none)",
    )
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default=None,
        help="how the labelled set is chosen: prefix, the first rows (the generated streams' "
        "rule), or balanced, the label-balanced selection of the real streams; the stream is "
        "every other row, in order (default: none: prefix)",
    )
    parser.add_argument(
        "--scale",
        choices=[s for s in SCALINGS if s is not None],
        default=None,
        help="minmax_on_train scales each feature with the labelled set's minimum and range "
        "for every method (default: none: the features as they are, as in the paper)",
    )


def _add_run_protocol(run):
    """The ``run`` subcommand's options of the protocol (windows, measures, labels) and output."""
    run.add_argument(
        "--windows",
        type=_WINDOWS,
        default=50,
        help="evaluation windows over the test stream (default: %(default)s)",
    )
    run.add_argument(
        "--zero-division",
        type=_zero_division,
        default=1,
        help="value of a measure whose ratio is 0/0: 1 (Mulan's F), 0, exclude (left out "
        "of the mean) or mulan (1 when both sets are empty, else 0) (default: %(default)s)",
    )
    run.add_argument(
        "--out",
        type=_PATH,
        default=None,
        help="also write the full result (counts per window, timings) to this JSON file "
        "(default: none: print only)",
    )
    run.add_argument(
        "--label-fraction",
        type=_LABEL_FRACTION,
        default=None,
        help="labels that arrive: this share of the test instances (0 to 1) get their labels "
        "back, --label-delay instances later; mlsom and the incremental methods learn them "
        "(default: none: the paper's protocol)",
    )
    run.add_argument(
        "--label-delay",
        type=_LABEL_DELAY,
        default=0,
        help="instances between a prediction and its labels (default: %(default)s)",
    )
    run.add_argument(
        "--label-seed",
        type=_SEED,
        default=0,
        help="seed of the choice of the labelled instances (default: %(default)s)",
    )


def _add_experiment(sub, common, streams):
    """The ``experiment`` subcommand's parser and the options of what runs (those of how it
    runs and what it writes are added by :func:`_add_experiment_execution`)."""
    formatter = _Formatter
    exp = sub.add_parser(
        "experiment",
        parents=[common],
        formatter_class=formatter,
        help="run streams x methods x grid sizes x seeds, with reports and statistics",
        description="Run every combination of streams, methods, grid sizes (mlsom and\n"
        "mlsom-frozen) and seeds (mlsom, MINAS-BR, label-rate and mlsom-frozen; the\n"
        "other methods run once, with the first seed), in parallel processes or on a\n"
        "dask cluster, and write results.csv, curves.csv, summary.json and the plots\n"
        "to --out. The options override the profile.\n"
        "\n"
        "Each finished run is stored in --out at once: Ctrl-C stops the experiment\n"
        "(exit status 130) keeping the finished runs, and the same command run again\n"
        "resumes, running only the runs not yet finished.",
        epilog=f"{_profiles()}\n\n{_wrap(_REFERENCES_HELP, '')}\n\n{streams}",
    )
    exp.add_argument(
        "--profile",
        choices=["quick", "paper"],
        default="quick",
        help="the design, see below (default: %(default)s)",
    )
    exp.add_argument(
        "--out",
        type=_PATH,
        default="mlsom-experiment",
        help="results folder, created if needed; runs finished there are not run again "
        "(default: %(default)s)",
    )
    exp.add_argument(
        "--streams",
        nargs="+",
        type=_STREAM,
        default=None,
        metavar="STREAM",
        help="streams of Table 1, see below (default: the profile's)",
    )
    exp.add_argument(
        "--methods",
        nargs="+",
        type=_METHOD,
        default=None,
        metavar="METHOD",
        help="mlsom, MINAS-BR, baselines, reference predictors (as 'mlsom run --method') "
        "(default: the profile's)",
    )
    exp.add_argument(
        "--grid-sizes",
        nargs="+",
        type=_GRID_SIZE,
        default=None,
        metavar="D",
        help="mlsom's grid sizes d; auto chooses d from the labelled set (default: the profile's)",
    )
    exp.add_argument(
        "--seeds",
        nargs="+",
        type=_SEED,
        default=None,
        metavar="SEED",
        help="seeds of mlsom, MINAS-BR, label-rate and mlsom-frozen; the generated streams "
        "always use seed 0 (default: the profile's)",
    )
    exp.add_argument(
        "--n-instances",
        type=_N_INSTANCES,
        default=None,
        help="instances of each generated stream, at least 1000 (default: the profile's: "
        "20,000 for quick, the sizes of Table 1 for paper)",
    )
    exp.add_argument(
        "--stream-source",
        choices=STREAM_SOURCES,
        default=None,
        help=_STREAM_SOURCE_HELP.format(
            which="the other streams ignore it (refused when there is no such stream); the "
            "runs finished with one generator are not reused for the other"
        ),
    )
    exp.add_argument(
        "--data-home",
        type=_PATH,
        default=None,
        help="folder of the real streams' data files (default: the folder in $MLSOM_DATA, if set)",
    )
    return exp


def _add_experiment_data(exp):
    """The ``experiment`` subcommand's options of novelty streams, of data files of one's own,
    of the methods' parameters and of the scaling."""
    exp.add_argument(
        "--novelty-streams",
        nargs="+",
        type=_NOVELTY_STREAM,
        default=None,
        metavar="NAME",
        help="novelty streams instead (as 'mlsom run --novelty-stream'): every method on each, "
        "once per seed (a generated one made with that seed), evaluated as MINAS-BR's evaluator "
        "does; writes novelty-runs.json, novelty-summary.json and a plot per stream to --out, "
        "and keeps each finished run in --out's novelty-runs/: the same command again resumes "
        "(default: none)",
    )
    exp.add_argument(
        "--data",
        nargs="+",
        type=_PATH,
        default=None,
        metavar="FILE",
        help="data files of one's own, a stream each, named after the file (as 'mlsom run "
        "--data'); without --streams, the experiment runs on these files only (default: none)",
    )
    exp.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="a constructor parameter, repeatable, given to every method that takes it (e.g. "
        "variant=robust: mlsom and mlsom-frozen); one that no method takes is refused, and so "
        "are grid_size and random_state (--grid-sizes, --seeds) (default: none: the methods' "
        "defaults)",
    )
    _add_data_options(exp, "the labels of the one --data file")


def _add_experiment_execution(exp):
    """The ``experiment`` subcommand's options of how it runs and what it writes."""
    exp.add_argument(
        "--n-jobs",
        type=_N_JOBS,
        default=1,
        help="local worker processes, at most the CPUs; with --scheduler local, the "
        "cluster's workers (default: %(default)s: one run after the other)",
    )
    exp.add_argument(
        "--scheduler",
        type=_PATH,
        default=None,
        help="a dask.distributed scheduler's address (tcp://host:8786), or 'local' for a "
        "local cluster of --n-jobs processes (default: none: no dask)",
    )
    exp.add_argument(
        "--connect-timeout",
        type=_SECONDS,
        default=5.0,
        help="seconds to wait for the scheduler before giving up (default: %(default)s)",
    )
    exp.add_argument(
        "--windows",
        type=_WINDOWS,
        default=50,
        help="evaluation windows over each test stream (default: %(default)s)",
    )
    exp.add_argument(
        "--zero-division",
        type=_zero_division,
        default=1,
        help="the 0/0 convention of the reports, as in 'mlsom run' (default: %(default)s)",
    )
    exp.add_argument(
        "--label-fractions",
        nargs="+",
        type=_LABEL_FRACTION,
        default=None,
        metavar="F",
        help="labels that arrive: run mlsom and the incremental methods once per share of "
        "labelled test instances (and per --label-delays); the other methods run once "
        "(default: none: the paper's protocol)",
    )
    exp.add_argument(
        "--label-delays",
        nargs="+",
        type=_LABEL_DELAY,
        default=None,
        metavar="N",
        help="instances between a prediction and its labels (default: 0)",
    )
    exp.add_argument(
        "--label-seed",
        type=_SEED,
        default=0,
        help="seed of the choice of the labelled instances (default: %(default)s)",
    )
    exp.add_argument(
        "--no-plots",
        action="store_true",
        help="write no plots (default: off: PNG plots in --out, needs matplotlib)",
    )
    exp.add_argument(
        "--no-progress",
        action="store_true",
        help="show no progress bar (default: off: a bar on stderr)",
    )


def _add_info(sub, common):
    """The ``info`` subcommand's parser."""
    formatter = _Formatter
    sub.add_parser(
        "info",
        parents=[common],
        formatter_class=formatter,
        help="print the version, build (OpenMP, SIMD path) and machine",
        description="Print mlsom's version, how it was built (OpenMP, the SIMD path in use)\n"
        "and the platform, one item per line (as mlsom.show_config()).",
    )


def _parser():
    """The argument parser of ``mlsom`` and its subcommands.

    Every option has help text with its default (a default of None is said in words), and the
    descriptions are plain text laid out for an 80-column terminal (tests/cli/test_cli_help.py).
    """
    formatter = _Formatter
    parser = _Parser(
        prog="mlsom",
        description="Multi-label stream classification with self-organizing maps when labels\n"
        "never arrive (SOM-Stream-ML): run the method, compare it with the paper's\n"
        "baselines, show the build.",
        epilog=f"{_EXIT_STATUS}\n\nRun 'mlsom COMMAND --help' for the options of a command.",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"mlsom {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    # --debug is accepted after the command as well; SUPPRESS keeps the sub-parser from
    # overwriting a --debug given before the command
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help=_DEBUG_HELP.replace(" (default", "; also accepted before the command (default"),
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    streams = _stream_names()
    _add_demo(sub, common, streams)
    _add_run(sub, common, streams)
    exp = _add_experiment(sub, common, streams)
    _add_experiment_data(exp)
    _add_experiment_execution(exp)
    _add_info(sub, common)
    return parser


class _StdoutClosed(Exception):
    """The reader of stdout went away (``mlsom ... | head``). Not an OSError, so that no handler
    of the work takes it for an error of its own."""


class _GuardedStdout:
    """sys.stdout during a command: a BrokenPipeError of its writes becomes
    :class:`_StdoutClosed`, told apart from a broken pipe elsewhere (a worker's, a socket's)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise _StdoutClosed from None

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise _StdoutClosed from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _discard_stdout(stream):
    """Point stdout's file descriptor at the null device, so that what is left in the buffer
    and the interpreter's flush at exit are dropped instead of failing again (the recipe of the
    Python documentation's note on SIGPIPE)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's capture): nothing to do
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def main(argv=None):
    """Run the command line; returns the exit status (see the module documentation).

    When the reader of the output goes away (``mlsom run ... | head``) the command stops where
    it was, prints nothing more (no error) and returns 141, the status of a program that SIGPIPE
    ends; what it had written to files by then (a run's ``--out``, an experiment's finished runs)
    is kept.
    """
    stdout = sys.stdout
    guarded = sys.stdout = _GuardedStdout(stdout)
    try:
        try:
            status = _main(argv)
        except SystemExit:  # --help, --version: flush here, where a closed reader is handled
            guarded.flush()
            raise
        guarded.flush()
        return status
    except _StdoutClosed:
        _discard_stdout(stdout)
        return 141
    finally:
        sys.stdout = stdout


def _main(argv):
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
    except _StdoutClosed:
        raise
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
