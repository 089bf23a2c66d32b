"""Experiments: streams x methods x grid sizes x seeds, run in parallel, resumable, with reports.

An experiment is a list of runs. Each run evaluates one method (with one grid size, for mlsom, and
one seed) on one stream with the protocol of :mod:`mlsom.protocol`, and its result is cached on
disk as JSON (``<out>/runs/<key>.json``): a finished run is never computed twice, so an interrupted
experiment resumes where it stopped. Runs execute serially, in local worker processes (joblib), or
on a dask.distributed cluster (a scheduler address, or ``"local"`` for a ``LocalCluster``).

Streams are those of the paper's Table 1 or data files of one's own (``data_files``, a
:class:`~mlsom.datasets.DataFile` each, read by :func:`mlsom.datasets.load_file`; the stream is
named after the file).

The cache key of a run (:attr:`Run.key`) is a hash of everything that can change its result: the
stream (its canonical name, the number of instances and the seed of a generated stream, the
generator of a moving-kernel stream, the content of a real stream's data files, or a data file's
path, options and content), the method with its grid size, seed and every parameter given, the
number of windows, the 0/0 convention, the chunk size, the scaling, the mlsom version and the
format of the run files (:data:`CACHE_FORMAT`). Change any of them and the run is computed again.

Every argument is checked before any run starts (names, numbers, the results folder, the data
files, the scheduler's address); a :class:`KeyboardInterrupt` while the runs execute becomes
:class:`ExperimentInterrupted`, which says how many runs are finished (and kept).

The reports give every measure of :data:`REPORT_MEASURES` (macro F, micro F, example-based F,
Hamming loss, subset accuracy, MINAS-BR's F1M, the cardinality error, the predicted and the true
cardinality): ``results.csv`` (one row per run: each measure's mean over windows of its cumulative
curve, ``<measure>_mean``, and its value over the whole stream, ``<measure>_final``),
``curves.csv`` (one row per run and window, with the test instances seen at the window's end and
each measure's cumulative value), ``summary.json`` (version, profile, parameters, seeds, 0/0
convention, timings, the best grid size per stream, each measure's means over seeds in
``mean_by_measure`` and its statistics in ``statistics_by_measure``; ``statistics`` is macro F's),
and PNG plots: per stream the curves of each measure of :data:`PLOTTED_MEASURES`, and per measure
of :data:`RANKED_MEASURES` the Nemenyi p-values and the critical difference diagram, ranked in
the measure's direction (1: the lowest Hamming loss). Macro F's plots are ``curves-<stream>.png``,
``nemenyi.png`` and ``cd.png``; the others' end with the measure (``cd-hamming_loss.png``). The
reference predictors (:mod:`mlsom.references`) and the upper bounds (the methods that learn the
test stream's true labels) are marked: columns ``reference`` and ``upper_bound`` in
``results.csv``, their labels under ``references`` and ``upper_bounds`` in ``summary.json``, and
:data:`REFERENCE_MARK` or :data:`UPPER_BOUND_MARK` after their names in the statistics and the
plots. Each mlsom run's
``fitted_grid_size`` (the d its model was fitted with: the choice of ``grid_size="auto"``) is a
column of ``results.csv``, and ``summary.json``'s ``fitted_grid_size`` gives, per stream and mlsom
label, the d of each seed.

The paper picks the grid size d per stream by looking at the test results; the report gives that
choice (``best_grid_size``) and flags it as optimistic. The plots and the statistics show every
method setting: mlsom's runs of one setting (its parameters and labels that arrive) with integer
grid sizes at the best d on each stream (the curve ``mlsom (d=3, best)``, the method
``mlsom (best d)`` in the statistics; ``mlsom-f0.01-l1000 (best d)`` with labels that arrive;
mlsom-frozen's runs likewise, ``mlsom-frozen (best d) (reference)``), ``grid_size="auto"`` and
every other method under its label. The best d is chosen by macro F, the
paper's measure, and stays the same for every measure. The curves are drawn over the instances of
the test stream seen at the end of each window. A curves panel holds at most 8 curves, the same in
the panels of every measure: every mlsom setting, MINAS-BR, the best lower and upper bounds, then
the others by mean macro F.
"""

import asyncio
import csv
import dataclasses
import hashlib
import json
import logging
import multiprocessing
import numbers
import os
import signal
import stat
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from multiprocessing import resource_tracker
from pathlib import Path

import numpy as np

from . import _run_files, baselines
from ._measures import DESCRIPTIVE, LOWER_IS_BETTER, check_zero_division
from ._memory import check_allocation
from ._som import AUTO_GRID_SIZES, SOMStreamClassifier, fit_nbytes
from ._validation import (
    available_cpus,
    check_float,
    check_int,
    check_label_protocol,
    describe,
)
from ._version import __version__
from .baselines import MINASBR
from .datasets import DataFile, list_streams, load
from .datasets._arff import file_kind
from .datasets._files import (
    check_label_location,
    check_split,
    check_train_fraction,
    check_train_rows,
    data_format,
    regular_file,
)
from .datasets._preprocess import check_scale, n_initial
from .datasets._registry import (
    DATA_ENV,
    REAL_FILES,
    SPHERICAL_OWN_CALIBRATION,
    TRAIN_FRACTION,
    check_not_blank,
    find_files,
    resolve_data_home,
    table_entry,
)
from .evaluation import StreamEvaluation
from .plotting import (
    method_styles,
    plot_critical_difference,
    plot_curves,
    plot_nemenyi_heatmap,
    save_png,
)
from .protocol import evaluate
from .references import REFERENCES, FrozenSOM
from .stats import friedman_nemenyi

__all__ = [
    "CACHE_FORMAT",
    "CHEAP_REFERENCES",
    "GRID_METHODS",
    "PLOTTED_MEASURES",
    "PROFILES",
    "RANKED_MEASURES",
    "REFERENCE_MARK",
    "REPORT_MEASURES",
    "TRUE_CARDINALITY",
    "UPPER_BOUND_MARK",
    "ExperimentInterrupted",
    "Run",
    "available_methods",
    "check_run",
    "is_reference",
    "make_method",
    "plan",
    "run_experiment",
    "run_one",
]

#: The reference predictors that every profile runs by default: they use the labelled set's labels
#: only and cost O(n L), nothing beside the other methods. "mlsom-frozen" (an mlsom fit per grid
#: size and seed) runs when it is named.
CHEAP_REFERENCES = ("every-label", "label-rate", "top-z")

#: The experiment designs. ``quick`` takes minutes on a laptop; ``paper`` is the paper's design
#: (every stream of Table 1, d = 1..10, 10 seeds for the stochastic methods, all baselines) with
#: the cheap reference predictors.
PROFILES = {
    "quick": {
        "streams": ["MOA-Spher-5C-2A", "MOA-Spher-3C-2A", "Mult-Non-Spher-HP"],
        "n_instances": 20_000,
        "methods": ["mlsom", "MINAS-BR", "BR-J48", "ML-kNN", "BR-HT", *CHEAP_REFERENCES],
        "grid_sizes": [2, 4, 6],
        "seeds": [0, 1],
    },
    "paper": {
        "streams": None,  # all of Table 1
        "n_instances": None,  # the table's sizes
        "methods": None,  # mlsom, MINAS-BR, every baseline and the cheap references
        "grid_sizes": list(range(1, 11)),
        "seeds": list(range(10)),
    },
}

#: methods whose results depend on the seed (run once per seed); the others run once
STOCHASTIC = {"mlsom", "MINAS-BR", "label-rate", "mlsom-frozen"}

#: methods with a grid size d (run once per grid size): mlsom and mlsom frozen after fit
GRID_METHODS = ("mlsom", "mlsom-frozen")

#: What tables, the summary and the plots write after the label of a reference predictor's run.
REFERENCE_MARK = " (reference)"

#: What tables, the summary and the plots write after the label of an upper bound's run: a method
#: that learns the true labels of the test stream (each instance's, right after predicting it;
#: with labels that arrive, those that arrive). The others learn from the labelled set only, or
#: (mlsom with labels that arrive, ``-fF-lD`` in its label) from the labels that arrive.
UPPER_BOUND_MARK = " (upper bound)"

#: The measures of the reports (results.csv, curves.csv, summary.json, the printed table, the
#: plots), each the mean over windows of its cumulative curve: macro F (the paper's measure),
#: micro F, example-based F, Hamming loss, subset accuracy, MINAS-BR's F1M, the cardinality error
#: and the predicted and true cardinality (:mod:`mlsom.evaluation`).
REPORT_MEASURES = (
    "macro_f1",
    "micro_f1",
    "example_f1",
    "hamming_loss",
    "subset_accuracy",
    "f1m",
    "cardinality_error",
    "predicted_cardinality",
    "true_cardinality",
)

#: The measures the statistics rank (a CD diagram and a Nemenyi heat map each): those of
#: :data:`REPORT_MEASURES` with a better direction, lower first for the Hamming loss and the
#: cardinality error.
RANKED_MEASURES = tuple(m for m in REPORT_MEASURES if m not in DESCRIPTIVE)

#: The curves drawn per stream: every ranked measure but the cardinality error, and
#: ``"cardinality"``, each method's predicted cardinality beside the true one.
PLOTTED_MEASURES = (*(m for m in RANKED_MEASURES if m != "cardinality_error"), "cardinality")

#: The name of the true cardinality's line in the cardinality plots.
TRUE_CARDINALITY = "true cardinality"
_TRUE_CARDINALITY_STYLE = {"color": "0.45", "linestyle": ":", "marker": "", "linewidth": 2.0}

_MEASURE_NAMES = {
    "macro_f1": "macro F",
    "micro_f1": "micro F",
    "example_f1": "example-based F",
    "hamming_loss": "Hamming loss",
    "subset_accuracy": "subset accuracy",
    "f1m": "F1M (MINAS-BR's)",
    "cardinality_error": "cardinality error",
    "predicted_cardinality": "predicted cardinality",
    "true_cardinality": "true cardinality",
}

#: Version of the run files and of what their key covers; raise it whenever either changes, so
#: that no run file written under other rules is taken for a finished run.
CACHE_FORMAT = 2

#: Seed of the generated streams: every method and seed of an experiment sees the same stream.
STREAM_SEED = 0

#: Seconds to wait for a dask scheduler before giving up.
CONNECT_TIMEOUT = 5.0

#: Largest seed: what numpy and scikit-learn accept as a random_state.
MAX_SEED = 2**32 - 1

# generating a stream takes up to about this many times the bytes of its float64 arrays (measured
# with tracemalloc for every generator of Table 1: 5x to 16x)
_GENERATOR_MEMORY_FACTOR = 16


class ExperimentInterrupted(KeyboardInterrupt):
    """An experiment stopped by Ctrl-C (a :class:`KeyboardInterrupt`) while its runs executed.

    The finished runs are kept in the results folder; running the same experiment again resumes.

    Attributes
    ----------
    n_finished : int
        Runs of the experiment whose result is in the results folder.
    n_runs : int
        Runs of the experiment.
    out_dir : pathlib.Path
        The results folder.
    """

    def __init__(self, n_finished, n_runs, out_dir):
        self.n_finished, self.n_runs, self.out_dir = n_finished, n_runs, Path(out_dir)
        super().__init__(
            f"{n_finished} of {n_runs} runs finished and kept in {self.out_dir}; run the same "
            "experiment again to resume"
        )


def _upper_bounds():
    """The incremental upper bounds, or an empty registry where river is not installed."""
    try:
        import river  # noqa: F401
    except ImportError:
        return {}
    return baselines.UPPER_BOUNDS  # (imports river)


def available_methods():
    """Names of every method the runner knows: mlsom, MINAS-BR, the lower and upper bounds, and
    the reference predictors (:data:`mlsom.references.REFERENCES`).

    The upper bounds need river; where it is not installed they are left out.
    """
    return ["mlsom", "MINAS-BR", *baselines.LOWER_BOUNDS, *_upper_bounds(), *REFERENCES]


def is_reference(method):
    """Whether a method name is one of the reference predictors (:mod:`mlsom.references`), which
    reports mark with :data:`REFERENCE_MARK`."""
    return method in REFERENCES


def _default_methods():
    """The methods of a profile that names none: every method but mlsom frozen after fit."""
    return [m for m in available_methods() if m not in REFERENCES or m in CHEAP_REFERENCES]


def _marked(label, method, kind=None):
    """A run's label as tables and plots show it: with :data:`REFERENCE_MARK` for a reference,
    :data:`UPPER_BOUND_MARK` for a method of kind ``"incremental"`` (an upper bound)."""
    if is_reference(method):
        return label + REFERENCE_MARK
    return label + UPPER_BOUND_MARK if kind == "incremental" else label


def _is_upper_bound(result):
    """Whether a run's stored result is an upper bound's (it learnt the test stream's labels)."""
    return result.get("kind") == "incremental"


def default_grid_size():
    return SOMStreamClassifier().grid_size


def make_method(name, *, grid_size=None, seed=0, params=None):
    """Build an unfitted method by name.

    Parameters
    ----------
    name : str
        ``"mlsom"``, ``"MINAS-BR"``, a name of ``mlsom.baselines.LOWER_BOUNDS`` /
        ``UPPER_BOUNDS`` or of ``mlsom.references.REFERENCES``.
    grid_size : int or "auto", optional
        mlsom and mlsom-frozen only: the grid side d (default: the estimator's, 5).
    seed : int
        Passed as ``random_state``.
    params : dict, optional
        Further constructor parameters; ``grid_size`` and ``random_state`` are given by the
        arguments above, not here. A name the method does not have raises ValueError.
    """
    params = dict(params or {})
    for key, arg in (("grid_size", "grid_size="), ("random_state", "seed=")):
        if key in params:
            raise ValueError(f"params may not set {key}: give it as {arg}")
    if name in GRID_METHODS:
        factory = SOMStreamClassifier if name == "mlsom" else FrozenSOM
        fixed = {"grid_size": default_grid_size() if grid_size is None else grid_size}
    else:
        if grid_size is not None:
            raise ValueError(_grid_size_error(name))
        factory, fixed = _factory(name), {}
    try:
        default = factory(random_state=seed, **fixed)
        fixed["random_state"] = seed
    except TypeError:  # a deterministic method without random_state
        default = factory(**fixed)
    valid = set(default.get_params()) if hasattr(default, "get_params") else set(params)
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ValueError(
            f"unknown parameter {unknown[0]!r} for {name}; its parameters: "
            f"{', '.join(sorted(valid - set(fixed))) or 'none'}"
        )
    return factory(**fixed, **params) if params else default


def _factory(name):
    """The class or factory of a method other than those of :data:`GRID_METHODS` (the baselines'
    registries, which need scikit-learn and river, are imported for their own names only)."""
    if name == "MINAS-BR":
        return MINASBR
    if name in REFERENCES:
        return REFERENCES[name]
    registry = {**baselines.LOWER_BOUNDS, **_upper_bounds()}
    if name not in registry:
        raise ValueError(f"unknown method {name!r}; valid: {', '.join(available_methods())}")
    return registry[name]


def _grid_size_error(name):
    return f"grid_size applies to mlsom only ({' and '.join(GRID_METHODS)}), not to {name!r}"


@dataclass(frozen=True)
class Run:
    """One run of an experiment: everything that defines its result.

    Attributes
    ----------
    stream : str
        A name of Table 1 (:func:`mlsom.datasets.list_streams`).
    method : str
        A name of :func:`available_methods`.
    grid_size : int, "auto" or None
        The grid side d of mlsom and mlsom-frozen; None for the other methods.
    seed : int
        The method's ``random_state``.
    n_instances : int, optional
        Generated streams: instances to generate (None: the table's size).
    params : dict
        Further constructor parameters of the method.
    n_windows : int
        Evaluation windows over the test stream.
    zero_division : {1, 0, "exclude", "mulan"}
        The 0/0 convention recorded with the result.
    chunk_size : int
        Most rows given to the method at once.
    data : str, optional
        Real streams: a fingerprint of the content of their data files (set by
        :func:`run_experiment`), so that a run on changed files is computed again.
    label_fraction, label_delay, label_seed : optional
        The delayed-label protocol (:func:`mlsom.protocol.evaluate`): the share of test rows
        whose labels come back, how many rows later, and the seed of the choice; None (the
        default): the paper's protocol. Left out of the run's identity when None, so the runs
        of earlier experiments keep their keys.
    stream_source : {"generator", "generator-v2", "generator-v1"}, optional
        The generated MOA-Spher streams (5C-2A, 5C-3A, 3C-2A) only: ``source=`` of
        :func:`mlsom.datasets.load`; None is "generator", the calibrated generator. A stream
        fitted to its own prefix (3C-2A) adds its calibration to the run's identity, so runs made
        while it was calibrated to 5C-2A ("generator-v2" now) are never taken for it.
        "generator-v1" (the first generator) is left out of the run's identity, so the runs of
        experiments made before the calibrated generator existed keep their keys, and they are
        runs on exactly those streams.
    data_file : DataFile, optional
        A data file of one's own (:func:`mlsom.datasets.load_file`) instead of a stream of
        Table 1; ``stream`` is then the file's name. Left out of the run's identity when None.
    scale : {None, "minmax_on_train"}, optional
        The features' scaling (:func:`mlsom.protocol.evaluate`); None (the default): none, and
        left out of the run's identity.
    """

    stream: str
    method: str
    grid_size: int | None
    seed: int
    n_instances: int | None = None
    params: dict = field(default_factory=dict)
    n_windows: int = 50
    zero_division: int | str = 1
    chunk_size: int = 1000
    data: str | None = None
    label_fraction: float | None = None
    label_delay: int = 0
    label_seed: int = 0
    stream_source: str | None = None
    data_file: DataFile | None = None
    scale: str | None = None

    @property
    def label(self):
        """Method name as reported, e.g. ``mlsom-d4``; with labels that arrive, the fraction and
        delay follow, e.g. ``mlsom-d4-f0.01-l1000``."""
        name = f"{self.method}-d{self.grid_size}" if self.grid_size else self.method
        if self.label_fraction is not None:
            name += f"-f{self.label_fraction:g}-l{self.label_delay}"
        return name

    def identity(self):
        """Everything that defines the result, as a JSON-serialisable dict: every field, the seed
        of a generated stream, the mlsom version and the format of the run files."""
        ident = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.label_fraction is None:  # the paper's protocol: the keys of earlier versions
            for name in ("label_fraction", "label_delay", "label_seed"):
                del ident[name]
        source = _stream_source(self.stream, self.stream_source)
        if source is None or source == "generator-v1":  # the keys of earlier versions
            del ident["stream_source"]
        else:
            ident["stream_source"] = source
            own = SPHERICAL_OWN_CALIBRATION.get(canonical_stream(self.stream))
            if source == "generator" and own is not None:
                ident["stream_calibration"] = own
        for name in ("data_file", "scale"):  # the keys of earlier versions
            if ident[name] is None:
                del ident[name]
        if self.data_file is not None:
            ident["data_file"] = dataclasses.asdict(self.data_file)
        ident.update(stream_seed=STREAM_SEED, mlsom_version=__version__, cache_format=CACHE_FORMAT)
        return ident

    @property
    def key(self):
        """File-name-safe identity of the run: a readable prefix and a hash of :meth:`identity`."""
        text = json.dumps(self.identity(), sort_keys=True, default=repr)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        safe = "".join(
            ch if ch.isalnum() or ch in "-_" else "_"
            for ch in f"{self.stream}__{self.label}__s{self.seed}"
        )
        return f"{safe}__{digest}"


# ------------------------------------------------------------------------------ argument checks


@contextmanager
def _about(argument):
    """Tag an error raised inside with the argument it is about, as ``exc.argument`` (the command
    line names the option from it); the innermost tag wins."""
    try:
        yield
    except (ValueError, TypeError, OSError) as exc:
        if getattr(exc, "argument", None) is None:
            exc.argument = argument
        raise


def _stream_entry(name):
    """The Table 1 entry of a stream name (case-insensitive); ValueError naming the valid ones."""
    return table_entry(name)


def is_real_stream(name):
    """Whether a (canonical) stream name is read from data files rather than generated."""
    return name in REAL_FILES


#: ``stream_source`` values of a generated MOA-Spher stream; the first is the default
STREAM_SOURCES = ("generator", "generator-v2", "generator-v1")


def _is_moving_kernels(name):
    """Whether a stream name (any spelling) is a generated MOA-Spher stream; False if unknown."""
    try:
        entry = _stream_entry(name)
    except (ValueError, TypeError):
        return False
    return entry.kind == "spherical" and not is_real_stream(entry.name)


def _stream_source(name, source):
    """The generator a run's stream comes from: ``source`` or the default for a generated
    MOA-Spher stream; None for the other streams."""
    if not _is_moving_kernels(name):
        return source
    return STREAM_SOURCES[0] if source is None else source


def _check_stream_source(entry, source):
    if is_real_stream(entry.name) or entry.kind != "spherical":
        if source is not None:
            raise ValueError(
                f"stream_source={source!r} applies to the generated MOA-Spher streams only "
                f"(MOA-Spher-5C-2A, MOA-Spher-5C-3A, MOA-Spher-3C-2A), not to {entry.name}"
            )
        return None
    if source is None:
        return STREAM_SOURCES[0]
    if not isinstance(source, str) or source not in STREAM_SOURCES:
        raise ValueError(
            f"stream_source must be one of {', '.join(map(repr, STREAM_SOURCES))}, got "
            f"stream_source={source!r}"
        )
    return source


def canonical_stream(name):
    """The stream's name as Table 1 spells it; ValueError for an unknown one."""
    return _stream_entry(name).name


def check_method_name(name):
    """``name`` if the runner knows the method; ValueError naming the valid ones otherwise."""
    if name in ("mlsom", "MINAS-BR") or name in REFERENCES:
        return name
    known = available_methods()
    if name not in known:
        raise ValueError(f"unknown method {name!r}; valid: {', '.join(known)}")
    return name


def check_grid_size(d):
    """``d`` as int (or "auto") if the estimator accepts it as its grid side; its error
    otherwise."""
    make_method("mlsom", grid_size=d)._validate_params()
    return d if isinstance(d, str) else int(d)


def check_seed(seed):
    """``seed`` as int if it is a seed every method accepts (0 to 2**32 - 1)."""
    return check_int("seed", seed, low=0, high=MAX_SEED)


def _n_test(entry, n_instances):
    """Rows of the test stream: exact for a generated stream, an upper bound for a real one."""
    if is_real_stream(entry.name):
        return entry.instances
    return n_instances - n_initial(n_instances, TRAIN_FRACTION)


def _check_n_instances(entry, n_instances):
    if is_real_stream(entry.name):
        if n_instances is not None:
            raise ValueError(
                f"n_instances applies to generated streams only; {entry.name} is read from its "
                "data files"
            )
        return None
    if n_instances is None:
        return entry.instances
    n = check_int("n_instances", n_instances, low=1000)
    need = n * (entry.attributes + entry.labels) * 8 * _GENERATOR_MEMORY_FACTOR
    check_allocation("n_instances", n, need, f"generating {entry.name} (an estimate)")
    return n


def _check_grid_memory(entry, n_instances, grid_size):
    """The estimator's own memory check of fit, before the stream is made (the stream's size is
    an upper bound of the labelled set's)."""
    if grid_size == "auto":  # its largest candidate
        grid_size = max(AUTO_GRID_SIZES)
    n = entry.instances if n_instances is None else n_instances
    need = fit_nbytes(grid_size, n, entry.attributes, entry.labels)
    what = (
        f"{entry.labels} maps of {grid_size} x {grid_size} neurons on {entry.attributes} "
        "features (grid distances, training sums)"
    )
    check_allocation("grid_size", grid_size, need, what)


def check_run(run):
    """Check every field of a run and return it in canonical form, before anything is computed.

    The stream name is spelt as in Table 1 (a data file's run: the file's name); ``n_instances``
    becomes the table's size for a generated stream left at None, and must be None for a real
    one or a data file; mlsom's grid size defaults to the estimator's; the method is built with
    its parameters and, where it can, checks them (unknown names, values out of range).

    Raises
    ------
    ValueError or TypeError
        Naming the field and the value.
    """
    stream, entry, n_instances, stream_source, data_file = _check_stream_fields(run)
    with _about("method"):
        method = check_method_name(run.method)
    with _about("seed"):
        seed = check_seed(run.seed)
    grid_size = run.grid_size
    with _about("grid_size"):
        if method in GRID_METHODS:
            grid_size = default_grid_size() if grid_size is None else check_grid_size(grid_size)
            if entry is not None:  # (a data file's size is known once it is read)
                _check_grid_memory(entry, n_instances, grid_size)
        elif grid_size is not None:
            raise ValueError(_grid_size_error(method))
    with _about("params"):
        if not isinstance(run.params, dict):
            raise TypeError(f"params must be a dict, got {type(run.params).__name__}")
        model = make_method(method, grid_size=grid_size, seed=seed, params=run.params)
        validate = getattr(model, "_validate_params", None)
        if validate is not None:
            validate()
    with _about("n_windows"):
        n_windows = check_int("n_windows", run.n_windows, low=1)
        n_test = None if entry is None else _n_test(entry, n_instances)
        if n_test is not None and n_windows > n_test:
            raise ValueError(
                f"n_windows={n_windows} is more than the {n_test} test instances of {entry.name}"
                + (f" (n_instances={n_instances})" if n_instances is not None else "")
            )
    with _about("zero_division"):
        zero_division = check_zero_division(run.zero_division)
    with _about("chunk_size"):
        chunk_size = check_int("chunk_size", run.chunk_size, low=1)
    with _about("scale"):
        scale = check_scale(run.scale)
    label_fraction, label_delay, label_seed = _check_label_fields(run)
    return dataclasses.replace(
        run,
        label_fraction=label_fraction,
        label_delay=label_delay,
        label_seed=label_seed,
        stream=stream,
        method=method,
        grid_size=grid_size,
        seed=seed,
        n_instances=n_instances,
        n_windows=n_windows,
        zero_division=zero_division,
        chunk_size=chunk_size,
        stream_source=stream_source,
        data_file=data_file,
        scale=scale,
    )


def _check_stream_fields(run):
    """A run's stream, checked: (its name, its Table 1 entry or None for a data file,
    n_instances, stream_source, the data file or None)."""
    if run.data_file is None:
        with _about("stream"):
            entry = _stream_entry(run.stream)
        with _about("n_instances"):
            n_instances = _check_n_instances(entry, run.n_instances)
        with _about("stream_source"):
            stream_source = _check_stream_source(entry, run.stream_source)
        return entry.name, entry, n_instances, stream_source, None
    data_file = check_data_file(run.data_file)
    with _about("stream"):
        if run.stream not in (None, data_file.name):
            raise ValueError(
                f"stream={run.stream!r}, but a data file's stream is named after the file: "
                f"{data_file.name!r}"
            )
    for name in ("n_instances", "stream_source"):
        if getattr(run, name) is not None:
            with _about(name):
                raise ValueError(
                    f"{name} applies to the generated streams only; {data_file.name} is read "
                    f"from its file (got {name}={getattr(run, name)!r})"
                )
    return data_file.name, None, None, None, data_file


def check_data_file(data_file):
    """A :class:`~mlsom.datasets.DataFile` with each field checked (the file there, a regular
    file, of a format mlsom reads, its labels found), before anything is read but its header.
    Errors name the field (``exc.argument``) and the value."""
    with _about("data_file"):
        if not isinstance(data_file, DataFile):
            raise TypeError(f"data_file must be a DataFile, got {type(data_file).__name__}")
        data_format(data_file.path)
    with _about("split"):
        check_split(data_file.split)
    with _about("train_fraction"):
        train_fraction = check_train_fraction(data_file.train_fraction)
    with _about("train_rows"):
        train_rows = check_train_rows(data_file.train_rows, train_fraction)
    with _about("xml"):
        if data_file.xml is not None and data_format(data_file.path) != "arff":
            raise ValueError(
                f"an XML file of labels applies to ARFF files, not to {data_file.path}"
            )
        if data_file.xml is not None:
            regular_file(data_file.xml)
    with _about("label_location"):
        label_location = check_label_location(data_file.label_location)
        if data_file.xml is not None and label_location is not None:
            raise ValueError("give the labels by an XML file or by their location, not both")
    checked = dataclasses.replace(
        data_file,
        label_location=label_location,
        path=os.path.abspath(os.path.expanduser(data_file.path)),
        xml=None if data_file.xml is None else os.path.abspath(os.path.expanduser(data_file.xml)),
        train_fraction=train_fraction,
        train_rows=train_rows,
    )
    with _about("data_file"):
        st = os.stat(checked.path)
        _file_columns(checked, st.st_size, st.st_mtime_ns)  # the file, its format, its labels
    return checked


@lru_cache(maxsize=64)
def _file_columns(data_file, size, mtime_ns):
    """A data file's columns, read from its header (cached while its size and modification time
    stay: every run of an experiment checks its file)."""
    return data_file.columns()


def _check_label_fields(run):
    """A run's label_fraction, label_delay and label_seed, each checked under its own name."""
    label_fraction, label_delay, label_seed = run.label_fraction, run.label_delay, run.label_seed
    if label_fraction is None:  # a delay or a seed alone would be ignored
        for name, value in (("label_delay", label_delay), ("label_seed", label_seed)):
            if not _is_zero(value):
                with _about(name):
                    raise ValueError(
                        f"{name}={value!r} needs label_fraction (the share of test instances "
                        f"whose labels arrive); without it no label arrives"
                    )
        return label_fraction, label_delay, label_seed
    # each value checked under its own name, so that an error names its own option
    with _about("label_fraction"):
        label_fraction = check_label_protocol(label_fraction, 0, 0)[0]
    with _about("label_delay"):
        label_delay = check_label_protocol(label_fraction, label_delay, 0)[1]
    with _about("label_seed"):
        label_seed = check_label_protocol(label_fraction, label_delay, label_seed)[2]
    return label_fraction, label_delay, label_seed


def _is_zero(value):
    """Whether a label delay or seed is the integer 0, the value it takes without labels."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value == 0


#: The most runs one experiment plans (each is checked and kept in memory before any runs).
MAX_RUNS = 100_000


def _names(what, values, default, check):
    """A list option of plan(): the profile's default when None, else checked, without repeats."""
    if values is None:
        return list(default)
    with _about(what):
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"{what} must be a list, got {values!r}")
        values = list(values)
        if not values:
            raise ValueError(f"{what} is empty")
        out, seen = [], set()
        for v in values:
            try:
                c = check(v)
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"{what}: {exc}") from None
            if c in seen:  # (a set: a list of many seeds took quadratic time)
                raise ValueError(f"{what}: {v!r} is given twice")
            seen.add(c)
            out.append(c)
    return out


def plan(
    profile="quick",
    *,
    streams=None,
    methods=None,
    grid_sizes=None,
    seeds=None,
    n_instances=None,
    n_windows=50,
    zero_division=1,
    chunk_size=1000,
    label_fractions=None,
    label_delays=None,
    label_seed=0,
    stream_source=None,
    data_files=None,
    params=None,
    scale=None,
):
    """The runs of a profile, with any part of the design overridden, checked before any work.

    With ``label_fractions`` (and ``label_delays``, default [0]), every method that learns
    labels (mlsom and the incremental upper bounds) runs once per fraction and delay under the
    delayed-label protocol; the batch lower bounds and MINAS-BR, which learn none, run once,
    under the paper's protocol.

    ``data_files`` (:class:`~mlsom.datasets.DataFile`) add a stream per file, named after it
    (``streams`` then defaults to none). ``params`` go to every method that takes them (one no
    method takes is refused, as are ``grid_size`` and ``random_state``). ``scale``: the
    features' scaling of every run (:func:`mlsom.protocol.evaluate`).

    Unknown names, grid sizes or seeds the methods refuse, repeated values, empty lists, grid
    sizes without mlsom, ``n_instances`` without a generated stream and more windows than a
    stream has test rows raise ValueError (or TypeError) naming the argument and the value.
    Generated streams get ``n_instances`` (default: the profile's); real ones ignore it. The
    generated MOA-Spher streams get ``stream_source`` (:class:`Run`; None: the calibrated
    generator, "generator-v2": every stream calibrated to 5C-2A, "generator-v1": the first
    one); the other streams ignore it.

    Returns
    -------
    list of Run
    """
    with _about("profile"):
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; valid: {sorted(PROFILES)}")
    design = dict(PROFILES[profile])
    streams, files = _plan_streams(design, streams, data_files)
    methods = _names("methods", methods, design["methods"] or _default_methods(), check_method_name)
    explicit_d = grid_sizes is not None
    grid_sizes = _names("grid_sizes", grid_sizes, design["grid_sizes"], check_grid_size)
    seeds = _names("seeds", seeds, design["seeds"], check_seed)
    with _about("grid_sizes"):
        if explicit_d and not any(m in GRID_METHODS for m in methods):
            raise ValueError(
                f"grid_sizes={grid_sizes} apply to mlsom ({' and '.join(GRID_METHODS)}), "
                "which is not among the methods"
            )
    with _about("n_instances"):
        if n_instances is not None and all(is_real_stream(s) for s in streams):
            raise ValueError(
                f"n_instances={n_instances} applies to generated streams only, and every stream "
                "here is read from data files"
            )
    if n_instances is None:
        n_instances = design["n_instances"]
    with _about("stream_source"):
        if stream_source is not None and not any(_is_moving_kernels(s) for s in streams):
            raise ValueError(
                f"stream_source={stream_source!r} applies to the generated MOA-Spher streams "
                "only, and there is none here"
            )
    settings, fractions, delays = _label_settings(label_fractions, label_delays, label_seed)
    n_settings = 1 if settings is not None else len(fractions) * len(delays)
    n_runs = (len(streams) + len(files)) * sum(
        (len(seeds) if m in STOCHASTIC else 1)
        * (len(grid_sizes) if m in GRID_METHODS else 1)
        * (n_settings if _learns_labels(m) else 1)
        for m in methods
    )
    if n_runs > MAX_RUNS:
        raise ValueError(
            f"the experiment would hold {n_runs} runs ({len(streams) + len(files)} streams, "
            f"{len(methods)} methods, {len(seeds)} seeds, {len(grid_sizes)} grid sizes, "
            f"{n_settings} label settings); at most {MAX_RUNS} are planned at once"
        )
    if settings is None:
        learners = any(_learns_labels(m) for m in methods)
        settings = [(f, dl) for f in fractions for dl in delays] if learners else []
    return _make_runs(
        [*((s, None) for s in streams), *((f.name, f) for f in files)],
        {m: p for m, p in zip(methods, params_of_methods(methods, params), strict=True)},
        seeds,
        grid_sizes,
        settings,
        n_instances,
        label_seed,
        stream_source,
        dict(n_windows=n_windows, zero_division=zero_division, chunk_size=chunk_size, scale=scale),
    )


def _plan_streams(design, streams, data_files):
    """:func:`plan`'s streams of Table 1 (the profile's unless given, none when only data
    files are given) and its data files, checked."""
    files = []
    if data_files is not None:
        with _about("data_files"):
            if isinstance(data_files, (str, bytes, DataFile)) or not hasattr(
                data_files, "__iter__"
            ):
                raise TypeError(
                    f"data_files must be a list of DataFile, got {describe(data_files)}"
                )
        for data_file in data_files:
            data_file = check_data_file(data_file)
            with _about("data_files"):
                same = [f for f in files if f.name == data_file.name]
                if same:
                    raise ValueError(
                        f"data_files: {data_file.path} is given twice"
                        if same[0].path == data_file.path
                        else f"data_files: {same[0].path} and {data_file.path} have the same "
                        "name, and the streams are named after their files: rename one"
                    )
            files.append(data_file)
    default = design["streams"] or list_streams()
    if streams is None and files:
        default = []
    streams = _names("streams", streams, default, canonical_stream)
    return streams, files


def params_of_methods(methods, params):
    """For each method, the parameters of ``params`` that it takes (``{}`` when None); a
    ValueError naming ``params`` for one that no method takes, or for ``grid_size`` or
    ``random_state``."""
    if params is None:
        return [{} for _ in methods]
    with _about("params"):
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict, got {type(params).__name__}")
        for key, option in (("grid_size", "grid_sizes"), ("random_state", "seeds")):
            if key in params:
                raise ValueError(f"params may not set {key}: give it with {option}")
        taken = [set(make_method(m).get_params()) & set(params) for m in methods]
        unknown = sorted(set(params) - set().union(*taken))
        if unknown:
            raise ValueError(
                f"no method of the experiment ({', '.join(methods)}) has a parameter {unknown[0]!r}"
            )
    return [{k: params[k] for k in params if k in t} for t in taken]


def _label_settings(label_fractions, label_delays, label_seed):
    """:func:`plan`'s label settings, checked: ``[(None, 0)]`` (the paper's protocol) without
    label fractions, else None and the fractions and delays."""
    with _about("label_delays"):
        if label_fractions is None and label_delays is not None:
            raise ValueError(f"label_delays={label_delays} need label_fractions")
    with _about("label_seed"):
        if label_fractions is None and not _is_zero(label_seed):
            raise ValueError(f"label_seed={label_seed!r} needs label_fractions")
    if label_fractions is None:
        return [(None, 0)], None, None
    fractions = _names("label_fractions", label_fractions, [], _check_fraction)
    delays = _names("label_delays", label_delays, [0], _check_delay)
    # the settings are listed once the runs are counted: a list as long as their product
    return None, fractions, delays


def _make_runs(
    streams, methods, seeds, grid_sizes, settings, n_instances, label_seed, stream_source, protocol
):
    """The checked runs of :func:`plan`'s design, in its order (``streams``: pairs of a name and
    its data file or None; ``methods``: each with its parameters; ``settings``: the label
    fractions and delays; ``protocol``: the runs' windows, 0/0 convention, chunks and
    scaling)."""
    runs = []
    for stream, data_file in streams:
        n = None if is_real_stream(stream) or data_file is not None else n_instances
        for method, params in methods.items():
            learns = _learns_labels(method)
            for seed in seeds if method in STOCHASTIC else seeds[:1]:
                for d in grid_sizes if method in GRID_METHODS else [None]:
                    for fraction, delay in settings if learns else [(None, 0)]:
                        run = Run(
                            stream,
                            method,
                            d,
                            seed,
                            n,
                            dict(params),
                            **protocol,
                            label_fraction=fraction,
                            label_delay=delay,
                            label_seed=label_seed if fraction is not None else 0,
                            stream_source=stream_source if _is_moving_kernels(stream) else None,
                            data_file=data_file,
                        )
                        runs.append(check_run(run))
    return runs


def _check_fraction(value):
    return check_label_protocol(value, 0, 0)[0]


def _check_delay(value):
    return check_label_protocol(0.0, value, 0)[1]


def _learns_labels(method):
    """Whether the delayed-label protocol gives the method labels (mlsom, incremental ones)."""
    if method == "mlsom":
        return True
    if method == "MINAS-BR":
        return False
    return getattr(make_method(method), "kind", None) == "incremental"


def find_data_files(streams, data_home):
    """The data files of each real stream of ``streams``: {name: (ARFF paths, XML path)}.

    Fails before any run when files are missing, naming all of them: a FileNotFoundError whose
    ``missing_data`` lists what each stream misses (without advice, for the command line's).
    """
    problems, found = [], {}
    for name in sorted(streams):
        if name in REAL_FILES:
            try:
                found[name] = find_files(
                    resolve_data_home(data_home), REAL_FILES[name], table_entry(name), advice=""
                )
            except FileNotFoundError as exc:
                problems.append(str(exc))
    if problems:
        exc = FileNotFoundError(
            "; ".join(problems) + ". Leave these streams out of streams= or give the folder of "
            f"their files with data_home= (or the environment variable {DATA_ENV})."
        )
        exc.missing_data = problems
        raise exc
    return found


@lru_cache(maxsize=64)
def _file_digest(path, size, mtime_ns):
    """SHA-256 of a file's content (cached while its size and modification time stay)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError(f"data file {path!r} is not a regular file")
        try:
            return hashlib.file_digest(f, "sha256").hexdigest()
        except OSError as exc:  # EIO, ...: name the file
            raise OSError(exc.errno, f"{exc.strerror or exc} (reading a data file)", path) from None


def _load_run(path, run):
    """The record of ``run`` kept in ``path``, checked; a ValueError naming the file when it
    cannot be that run's record.

    The record's run fields must be those of ``run`` (its identity, label and key), its
    ``wall_seconds`` a duration, and its results a valid stored
    :class:`~mlsom.evaluation.StreamEvaluation` of that run (stream, method label, seed, windows,
    0/0 convention and chunk size). The record returned holds the results as
    :meth:`~mlsom.evaluation.StreamEvaluation.to_dict` writes them, beside its run fields.
    """
    try:
        record = _run_files.read_record(path)
        if not isinstance(record.get("run"), dict):
            raise ValueError("not a run record")
        return _checked_record(record, run)
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise ValueError(
            f"run file {str(path)!r} is damaged ({exc}); delete it and rerun to recompute it"
        ) from None


def _checked_record(record, run):
    """``record`` (a run file's content) checked against ``run`` (see :func:`_load_run`)."""
    stored = record["run"]
    expected = {**run.identity(), "label": run.label, "key": run.key}
    expected = json.loads(json.dumps(expected, default=repr))  # as a run file holds it
    for name in sorted(expected):
        if name not in stored:
            raise ValueError(f"its run record has no {name!r}")
        # compared as JSON text: 2 and 2.0, 1 and true differ
        have = json.dumps(stored[name], sort_keys=True)
        want = json.dumps(expected[name], sort_keys=True)
        if have != want:
            raise ValueError(
                f"it records the run with {name}={_cut(have)}, but it stands for the run with "
                f"{name}={_cut(want)}"
            )
    extra = sorted(set(stored) - set(expected) - {"wall_seconds"})
    if extra:
        raise ValueError(f"its run record has unknown fields {extra}")
    if "wall_seconds" not in stored:
        raise ValueError("its run record has no 'wall_seconds'")
    wall = stored["wall_seconds"]
    if isinstance(wall, bool) or not isinstance(wall, (int, float)) or not 0 <= wall < np.inf:
        raise ValueError(f"its run record has wall_seconds={_cut(repr(wall))}, not a duration")
    ev = StreamEvaluation.from_dict({k: v for k, v in record.items() if k != "run"})
    results = {
        "stream": (ev.stream, run.stream),
        "method": (ev.method, run.label),
        "seed": (ev.seed, run.seed),
        "n_windows": (ev.n_windows, run.n_windows),
        "zero_division": (ev.zero_division, run.zero_division),
        "chunk_size": (ev.chunk_size, run.chunk_size),
    }
    for name, (have, want) in results.items():
        if json.dumps(have) != json.dumps(want, default=repr):
            raise ValueError(
                f"its results have {name}={_cut(repr(have))}, but the run has {name}="
                f"{_cut(repr(want))}"
            )
    if ev.n_train is None:
        raise ValueError("its results have no n_train")
    return {**ev.to_dict(), "run": stored}


def _cut(text, most=80):
    """``text``, cut to ``most`` characters for a message."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _data_fingerprints(streams, data_home):
    """For each real stream of ``streams``: a hash of its data files' names and content."""
    fingerprints = {}
    for name, (paths, xml) in find_data_files(streams, data_home).items():
        h = hashlib.sha256()
        for p in [*paths, *([xml] if xml is not None else [])]:
            st = os.stat(p)
            digest = _file_digest(str(p), st.st_size, st.st_mtime_ns)
            h.update(f"{Path(p).name}:{st.st_size}:{digest}\n".encode())
        fingerprints[name] = h.hexdigest()[:16]
    return fingerprints


def _file_fingerprint(data_file):
    """A hash of a data file's content (and of the XML file given with it)."""
    h = hashlib.sha256()
    for p in [data_file.path, *([data_file.xml] if data_file.xml is not None else [])]:
        st = os.stat(p)
        h.update(f"{_file_digest(str(p), st.st_size, st.st_mtime_ns)}\n".encode())
    return h.hexdigest()[:16]


def check_data_home(data_home):
    """``data_home`` (None or an existing folder); ValueError otherwise."""
    if data_home is None:
        return None
    if isinstance(data_home, (str, os.PathLike)):
        try:
            check_not_blank(data_home)  # Path("") is the current folder
        except ValueError as error:
            error.argument = "data_home"
            raise
    path = Path(data_home).expanduser()
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        what = "does not exist"
    except OSError as exc:  # a symbolic link loop, a permission denied, ...
        what = f"cannot be used: {exc.strerror or exc}"
    except ValueError as exc:  # a NUL byte
        what = f"cannot be used: {exc}"
    else:
        if stat.S_ISDIR(mode):
            return path
        what = "is a regular file" if stat.S_ISREG(mode) else f"is {file_kind(mode)}"
        what += ", not a folder"
    error = ValueError(f"data_home {str(data_home)!r} {what}")
    error.argument = "data_home"
    raise error


def check_out_dir(out_dir):
    """Create the results folder if needed and check that files can be written in it.

    A probe file is written and removed, so an unwritable folder, a path through a file or an
    existing file fail here, with one line, and not after the runs.
    """
    with _about("out_dir"):
        if not str(out_dir):
            raise ValueError("the results folder is an empty path")
        out = Path(out_dir).expanduser()
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(f"results folder {str(out)!r} exists and is not a folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
            probe = out / f".mlsom-write-probe-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise type(exc)(
                f"cannot write to the results folder {str(out)!r}: {exc.strerror or exc}"
            ) from None
    return out


def _check_scheduler(scheduler, n_jobs, connect_timeout):
    """Check the scheduler's address (not connecting yet) and the worker count."""
    with _about("n_jobs"):
        n_jobs = check_int("n_jobs", n_jobs, low=1)
        cpus = available_cpus()
        if scheduler in (None, "local") and n_jobs > cpus:
            raise ValueError(
                f"n_jobs={n_jobs} worker processes, but this machine has {cpus} CPU(s) for them"
            )
    with _about("connect_timeout"):
        connect_timeout = check_float(
            "connect_timeout", connect_timeout, low=0.0, low_open=True, high=3600.0
        )
    if scheduler is None:
        return scheduler, n_jobs, connect_timeout
    import distributed  # noqa: F401  (fail now if it is missing)

    if scheduler == "local":
        return scheduler, n_jobs, connect_timeout
    from distributed.comm.addressing import get_address_host_port

    with _about("scheduler"):
        if not isinstance(scheduler, str):
            raise TypeError(f"scheduler must be an address or 'local', got {scheduler!r}")
        try:
            _, port = get_address_host_port(scheduler)
        except ValueError as exc:
            raise ValueError(
                f"scheduler {scheduler!r} is not an address like tcp://host:8786 (or 'local'): "
                f"{exc}"
            ) from None
        if not 0 < port < 65536:
            raise ValueError(f"scheduler {scheduler!r}: port {port} is not in 1..65535")
    return scheduler, n_jobs, connect_timeout


@lru_cache(maxsize=4)
def _load_stream(name, n_instances, data_home, source=None, data_file=None, data=None):
    # (``data``, the fingerprint of a file's content, keeps a changed file from the cache)
    if data_file is not None:
        return data_file.load()
    if is_real_stream(name):
        return load(name, data_home=data_home)
    return load(name, n_instances=n_instances, random_state=STREAM_SEED, source=source)


def run_one(run, *, data_home=None):
    """Execute one run and return its result as a JSON-serialisable dict.

    The run's fields give the stream (of Table 1, or a data file), the method and the protocol
    (windows, 0/0 convention, chunks, scaling); ``data_home`` is the folder of a real stream's
    files. With mlsom, the result's ``info["fitted_grid_size"]`` is the d the model was fitted
    with (the choice of ``grid_size="auto"``).
    """
    ds = _load_stream(
        run.stream,
        run.n_instances,
        data_home,
        _stream_source(run.stream, run.stream_source),
        run.data_file,
        run.data,
    )
    method = make_method(run.method, grid_size=run.grid_size, seed=run.seed, params=run.params)
    t0 = time.perf_counter()
    res = evaluate(
        method,
        ds,
        n_windows=run.n_windows,
        chunk_size=run.chunk_size,
        name=run.label,
        stream_name=run.stream,
        seed=run.seed,
        zero_division=run.zero_division,
        label_fraction=run.label_fraction,
        label_delay=run.label_delay,
        label_seed=run.label_seed,
        scale=run.scale,
    )
    out = res.to_dict()
    out["run"] = {
        **run.identity(),
        "label": run.label,
        "key": run.key,
        "wall_seconds": time.perf_counter() - t0,
    }
    return out


def _run_indexed(i, run, data_home):
    return i, run_one(run, data_home=data_home)


def _run_in_worker(i, run, data_home, parent_pid):
    # Ctrl-C reaches every process of the terminal's group: a local worker process ignores it
    # and leaves the stopping to the parent (which ends the workers), so that no worker reports
    # an interruption of its own
    if os.getpid() != parent_pid:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return _run_indexed(i, run, data_home)


@dataclass
class _Experiment:
    """A checked experiment, ready to run (see :func:`run_experiment`)."""

    profile: str
    out: Path
    runs: list
    data_home: object
    n_jobs: int
    scheduler: str | None
    connect_timeout: float
    zero_division: object
    plots: bool
    progress: bool

    def path(self, run):
        return self.out / "runs" / f"{run.key}.json"

    def run(self):
        todo = [r for r in self.runs if not _run_files.finished(self.path(r))]
        t0 = time.perf_counter()
        try:
            _execute(
                todo,
                [self.path(r) for r in todo],
                self.data_home,
                n_jobs=self.n_jobs,
                scheduler=self.scheduler,
                connect_timeout=self.connect_timeout,
                progress=self.progress,
            )
        except KeyboardInterrupt:
            n_done = sum(_run_files.finished(self.path(r)) for r in self.runs)
            raise ExperimentInterrupted(n_done, len(self.runs), self.out) from None
        wall = time.perf_counter() - t0
        results = [_load_run(self.path(r), r) for r in self.runs]
        summary = _report(
            results,
            self.out,
            profile=self.profile,
            zero_division=self.zero_division,
            plots=self.plots,
        )
        summary.update(
            n_runs=len(self.runs),
            n_run_now=len(todo),
            n_cached=len(self.runs) - len(todo),
            wall_seconds=wall,
            n_jobs=self.n_jobs,
            scheduler=self.scheduler,
            cache_format=CACHE_FORMAT,
        )
        summary["estimated_paper_seconds"] = _estimate_paper_seconds(results, self.n_jobs)
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
        return summary


def prepare_experiment(
    profile="quick",
    out_dir="mlsom-experiment",
    *,
    streams=None,
    methods=None,
    grid_sizes=None,
    seeds=None,
    n_instances=None,
    data_home=None,
    n_jobs=1,
    scheduler=None,
    connect_timeout=CONNECT_TIMEOUT,
    n_windows=50,
    zero_division=1,
    chunk_size=1000,
    plots=True,
    progress=True,
    label_fractions=None,
    label_delays=None,
    label_seed=0,
    stream_source=None,
    data_files=None,
    params=None,
    scale=None,
):
    """Check every argument of :func:`run_experiment` and return the experiment, ready to run."""
    data_home = check_data_home(data_home)
    scheduler, n_jobs, connect_timeout = _check_scheduler(scheduler, n_jobs, connect_timeout)
    runs = plan(
        profile,
        streams=streams,
        methods=methods,
        grid_sizes=grid_sizes,
        seeds=seeds,
        n_instances=n_instances,
        n_windows=n_windows,
        zero_division=zero_division,
        chunk_size=chunk_size,
        label_fractions=label_fractions,
        label_delays=label_delays,
        label_seed=label_seed,
        stream_source=stream_source,
        data_files=data_files,
        params=params,
        scale=scale,
    )
    fingerprints = _data_fingerprints({r.stream for r in runs if r.data_file is None}, data_home)
    fingerprints.update(
        {r.stream: _file_fingerprint(r.data_file) for r in runs if r.data_file is not None}
    )
    runs = [
        dataclasses.replace(r, data=fingerprints[r.stream]) if r.stream in fingerprints else r
        for r in runs
    ]
    out = check_out_dir(out_dir)
    (out / "runs").mkdir(exist_ok=True)
    return _Experiment(
        profile=profile,
        out=out,
        runs=runs,
        data_home=data_home,
        n_jobs=n_jobs,
        scheduler=scheduler,
        connect_timeout=connect_timeout,
        zero_division=runs[0].zero_division,
        plots=bool(plots),
        progress=bool(progress),
    )


def run_experiment(
    profile="quick",
    out_dir="mlsom-experiment",
    *,
    streams=None,
    methods=None,
    grid_sizes=None,
    seeds=None,
    n_instances=None,
    data_home=None,
    n_jobs=1,
    scheduler=None,
    connect_timeout=CONNECT_TIMEOUT,
    n_windows=50,
    zero_division=1,
    chunk_size=1000,
    plots=True,
    progress=True,
    label_fractions=None,
    label_delays=None,
    label_seed=0,
    stream_source=None,
    data_files=None,
    params=None,
    scale=None,
):
    """Run (or resume) an experiment and write its reports.

    Every argument is checked first (:func:`plan`, the data files, the results folder, the
    scheduler's address); nothing runs unless all are valid.

    Parameters
    ----------
    profile : {"quick", "paper"}
    out_dir : str or path
        Results folder (created; a probe file checks that it is writable). Finished runs found
        there are not run again.
    streams, methods, grid_sizes, seeds, n_instances : optional
        Override the profile's design.
    data_home : str or path, optional
        Folder of the real data files (or the environment variable ``MLSOM_DATA``). The files of
        every real stream of the experiment must be there (their content is part of the runs'
        keys), even for runs already finished.
    n_jobs : int
        Local worker processes (joblib) when ``scheduler`` is None, at most the CPUs of the
        machine; 1 runs serially.
    scheduler : str, optional
        A dask.distributed scheduler address, or ``"local"`` to start a ``LocalCluster`` of
        ``n_jobs`` worker processes.
    connect_timeout : float, default=5
        Seconds to wait for the scheduler before giving up with an OSError.
    n_windows : int
    zero_division : {1, 0, "exclude", "mulan"}
        The 0/0 convention of the reports (every other can be recomputed from the run files).
    chunk_size : int, default=1000
        Most rows given to a method at once.
    plots : bool
        Write the PNG plots (needs matplotlib).
    progress : bool
        Show a progress bar (tqdm).
    label_fractions, label_delays, label_seed : optional
        Labels that arrive (:func:`plan`): each method that learns labels runs once per
        fraction and delay; the method's label in the reports says which, e.g.
        ``mlsom-d2-f0.01-l1000``.
    stream_source : {"generator", "generator-v2", "generator-v1"}, optional
        The generator of the generated MOA-Spher streams (:func:`plan`).
    data_files : list of DataFile, optional
        Data files of one's own, a stream each, named after the file (:func:`plan`); their
        content (and that of an XML file given with one) is part of the runs' keys.
    params : dict, optional
        Constructor parameters of every method that takes them (:func:`plan`).
    scale : {None, "minmax_on_train"}, optional
        The features' scaling (:func:`mlsom.protocol.evaluate`); None: none.

    Returns
    -------
    dict
        The summary also written to ``summary.json``.

    Raises
    ------
    ValueError, TypeError, OSError
        For an invalid argument, before any run; OSError also for a scheduler that cannot be
        reached.
    ExperimentInterrupted
        On Ctrl-C while the runs execute; the finished runs are kept.
    """
    return prepare_experiment(**locals()).run()  # (every argument, as given)


async def _handshake(address, timeout):
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout)
    await comm.close()


def _probe_scheduler(address, timeout):
    """Connect to the scheduler and read its handshake, all within ``timeout`` seconds.

    dask's own connection waits for the handshake without a limit, so a server that accepts the
    connection and says nothing would hang the experiment. The probe runs in a thread of its own,
    with its own event loop, so it works under a running loop (a notebook) as well.
    """
    coro = asyncio.wait_for(_handshake(address, timeout), timeout)
    with ThreadPoolExecutor(1) as pool:
        try:
            pool.submit(asyncio.run, coro).result()
        except TimeoutError:  # asyncio's, since Python 3.11
            raise OSError(f"no dask handshake from {address} within {timeout:g} s") from None
        except OSError:
            raise
        except Exception as exc:  # not dask's protocol (an HTTP server, say): any error at all
            raise OSError(
                f"{address} does not answer as a dask scheduler ({type(exc).__name__}: {exc})"
            ) from None


@contextmanager
def _sigint_ignored():
    """SIGINT ignored in this process for the block (only the main thread may change it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class _QuietLocalWorkers:
    """Ctrl-C while local worker processes run: they stop without a word, this process reports.

    Ctrl-C reaches the whole process group. A worker that is running a task ignores it
    (:func:`_run_in_worker`), but one that is still starting would print a traceback, and so
    would one that finds its executor torn down by this process mid-start. So, while the block
    runs (main thread only), SIGINT is handled here: the local worker processes are killed
    before anything else happens, then KeyboardInterrupt is raised.

    Processes are started inside :meth:`spawning`, where SIGINT is blocked in this thread: a new
    process inherits the mask through fork and exec, so it never sees a Ctrl-C. A Ctrl-C that
    arrives meanwhile (another thread of this process may take it) is kept and acted on when
    the spawning ends, so that no process is killed half-launched. The standard library's
    resource tracker, which joblib starts with its first workers, unblocks SIGINT in the thread
    that starts it (CPython 3.11, for one): it is started first.
    """

    def __init__(self):
        self.active = (
            hasattr(signal, "pthread_sigmask")  # not on Windows, which has no process groups
            and threading.current_thread() is threading.main_thread()
        )
        self._spawning = False
        self._pending = False
        self._excepthook = None  # the hook replaced once stopping, restored at the end

    def __enter__(self):
        if self.active:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc_info):
        if self.active:
            signal.signal(signal.SIGINT, self._previous)
        if self._excepthook is not None:
            threading.excepthook = self._excepthook

    def _on_sigint(self, signum, frame):
        if self._spawning:
            self._pending = True
        else:
            self._stop()

    def _quiet_executor_thread(self, args):
        # with its workers killed, joblib's executor (loky) may fail in its own manager thread
        # while it is being shut down (a KeyError on a cancelled task, for one): noise after
        # an interruption that is reported anyway; any other thread's error is shown as usual
        if not type(args.thread).__module__.startswith("joblib.externals.loky"):
            self._excepthook(args)

    def _stop(self):
        if self._excepthook is None:
            self._excepthook = threading.excepthook
            threading.excepthook = self._quiet_executor_thread
        for process in multiprocessing.active_children():
            try:
                os.kill(process.pid, signal.SIGKILL)  # it runs no further code, prints nothing
            except (ProcessLookupError, TypeError):  # gone already, or not started (no pid)
                pass
        raise KeyboardInterrupt

    @contextmanager
    def spawning(self):
        if not self.active:
            yield
            return
        resource_tracker.ensure_running()
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        self._spawning = True
        try:
            yield
        finally:
            self._spawning = False
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if self._pending:
            self._stop()


@contextmanager
def _dask_client(scheduler, n_jobs, connect_timeout):
    """A client of the scheduler, or of a LocalCluster of ``n_jobs`` worker processes."""
    from dask.distributed import Client, LocalCluster
    from distributed.utils import silence_logging_cmgr

    if scheduler == "local":
        with warnings.catch_warnings():
            # the scheduler's HTTP server (on even without a dashboard) takes another port when
            # dask's usual one is taken, and says so: no concern of a private cluster
            warnings.filterwarnings("ignore", "Port .* is already in use", UserWarning)
            # the worker processes start with Ctrl-C ignored (a disposition a new process keeps):
            # Ctrl-C reaches the whole process group, and an interrupted worker printed a
            # traceback; this process handles it and closes the cluster, which ends them
            with _sigint_ignored():
                cluster = LocalCluster(
                    n_workers=n_jobs,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # errors of the runs come back through their futures (a lost worker too, as
                    # KilledWorker); the cluster's own logs (a task cancelled by Ctrl-C, a
                    # heartbeat that found the scheduler closed, with tracebacks) would be noise
                    silence_logs=logging.CRITICAL,
                )
    else:
        cluster = nullcontext(scheduler)
    quiet = ExitStack()
    with quiet, cluster as address:
        try:
            if scheduler != "local":
                _probe_scheduler(scheduler, connect_timeout)
            client = Client(address, timeout=connect_timeout)
        except OSError as exc:
            raise OSError(f"cannot connect to the dask scheduler at {scheduler}: {exc}") from None
        with client:
            try:
                yield client
            except KeyboardInterrupt:
                # closing interrupted workers logs cancelled tasks and killed processes, with
                # tracebacks: the interruption is reported once, by the caller
                quiet.enter_context(silence_logging_cmgr(logging.CRITICAL))
                raise


def _execute(todo, paths, data_home, *, n_jobs, scheduler, connect_timeout, progress):
    """Run the runs of ``todo``; each result is written by this process as soon as it arrives, so
    workers need no access to ``out`` (a cluster's workers may not share its file system).

    The back end (a scheduler's connection, a local cluster) is set up before the progress bar
    appears, so a failure to reach it is reported alone."""
    if not todo:
        return
    if scheduler is not None:
        from dask.distributed import as_completed

        with _dask_client(scheduler, n_jobs, connect_timeout) as client:
            futures = [
                client.submit(_run_indexed, i, r, data_home, pure=False) for i, r in enumerate(todo)
            ]
            _collect((f.result() for f in as_completed(futures)), paths, len(todo), progress)
    elif n_jobs == 1:
        _collect(
            (_run_indexed(i, r, data_home) for i, r in enumerate(todo)),
            paths,
            len(todo),
            progress,
        )
    else:
        from joblib import Parallel, delayed

        # no worker process may print anything of its own on Ctrl-C: this process reports it
        with _QuietLocalWorkers() as quiet:
            gen = None
            try:
                with quiet.spawning():
                    gen = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
                        delayed(_run_in_worker)(i, r, data_home, os.getpid())
                        for i, r in enumerate(todo)
                    )
                _collect(gen, paths, len(todo), progress)
            finally:
                if gen is not None:
                    # joblib warns when a generator is dropped with tasks still running: after
                    # an interruption (or error), which the caller reports with the runs kept
                    with warnings.catch_warnings():
                        warnings.filterwarnings("ignore", ".* have been cancelled", UserWarning)
                        gen.close()  # ends the workers and the executor's threads


def _collect(results, paths, total, progress):
    bar = _progress(total, progress)
    try:
        for i, result in results:
            _run_files.store(result, paths[i])
            bar.update(1)
    finally:
        bar.close()


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total, enabled):
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc="runs", unit="run")


def _result_objects(results):
    return [StreamEvaluation.from_dict({k: v for k, v in r.items() if k != "run"}) for r in results]


def _report(results, out, *, profile, zero_division, plots):
    evals = _result_objects(results)
    curves = [{m: ev.curve(m, True, zero_division) for m in REPORT_MEASURES} for ev in evals]
    rows = _result_rows(results, evals, curves, zero_division)
    _write_csv(out / "results.csv", rows)
    _write_csv(out / "curves.csv", _curve_rows(results, evals, curves, zero_division))
    means = _means_by_measure(rows)
    shown = _shown(results, means["macro_f1"])
    summary = {
        "mlsom_version": __version__,
        "profile": profile,
        "zero_division": zero_division,
        "measure": "mean over windows of the cumulative macro F",
        "streams": sorted(means["macro_f1"]),
        "mean_macro_f1": means["macro_f1"],
        "measures": {m: _measure_name(m) for m in REPORT_MEASURES},
        "lower_is_better": [m for m in REPORT_MEASURES if m in LOWER_IS_BETTER],
        "mean_by_measure": means,
        "best_grid_size": _papers_best_grid_sizes(results, shown, means["macro_f1"]),
        "references": sorted({row["label"] for row in rows if row["reference"]}),
        "fitted_grid_size": _fitted_grid_sizes(rows),
        "upper_bounds": sorted({row["label"] for row in rows if row["upper_bound"]}),
    }
    tests = {}
    for measure in RANKED_MEASURES:
        result = _statistics(results, shown, means[measure], measure=measure)
        if result is not None:
            tests[measure] = result
    by_measure = {m: _statistics_summary(result, m) for m, result in tests.items()}
    if "macro_f1" in by_measure:
        summary["statistics"] = by_measure["macro_f1"]
    summary["statistics_by_measure"] = by_measure
    if plots:
        summary["plots"] = _plots(results, evals, curves, shown, tests, out)
    return summary


def _fitted_grid_sizes(rows):
    """Per stream and mlsom label (``mlsom-dauto``, ``mlsom-frozen-d4``, ...), the grid sizes
    the fitted models used, one per seed in the seeds' order (None for a run stored before the
    results recorded it)."""
    fitted = {}
    for row in sorted(rows, key=lambda r: r["seed"]):
        if row["grid_size"] is not None:
            by_label = fitted.setdefault(row["stream"], {})
            by_label.setdefault(row["label"], []).append(row["fitted_grid_size"])
    return fitted


def _measure_name(measure):
    """A measure's name in tables and plots (``"macro F"``, ``"Hamming loss"``)."""
    return _MEASURE_NAMES[measure]


def _means_by_measure(rows):
    """{measure: {stream: {label: mean over seeds of the run's mean over windows}}} for every
    measure of :data:`REPORT_MEASURES`."""
    means = {}
    for measure in REPORT_MEASURES:
        table = {}
        for row in rows:
            table.setdefault(row["stream"], {}).setdefault(row["label"], []).append(
                row[f"{measure}_mean"]
            )
        means[measure] = {
            stream: {label: _mean(values) for label, values in by_label.items()}
            for stream, by_label in table.items()
        }
    return means


def _mean(values):
    """The mean of the numbers that are not NaN (NaN if none is: a measure that ``"exclude"``
    left undefined in every window)."""
    finite = [v for v in values if v == v]
    return float(np.mean(finite)) if finite else float("nan")


def _result_rows(results, evals, curves, zero_division):
    """The rows of ``results.csv``: one per run, with every measure of :data:`REPORT_MEASURES`
    as its mean over windows (``<measure>_mean``) and over the whole stream (``_final``)."""
    rows = []
    for r, ev, by_measure in zip(results, evals, curves, strict=True):
        run = r["run"]
        row = {
            "stream": run["stream"],
            "method": run["method"],
            "label": run["label"],
            "reference": is_reference(run["method"]),
            "upper_bound": _is_upper_bound(r),
            "grid_size": run["grid_size"],
            "fitted_grid_size": ev.info.get("fitted_grid_size"),
            "seed": run["seed"],
        }
        for measure, curve in by_measure.items():
            finite = curve[~np.isnan(curve)]
            row[f"{measure}_mean"] = float(finite.mean()) if finite.size else float("nan")
            row[f"{measure}_final"] = float(curve[-1])
        row.update(
            instances_per_second=ev.instances_per_second,
            wall_seconds=run["wall_seconds"],
            zero_division=zero_division,
            mlsom_version=run["mlsom_version"],
        )
        rows.append(row)
    return rows


def _curve_rows(results, evals, curves, zero_division):
    """The rows of ``curves.csv``: one per run and window, with the cumulative value of every
    measure of :data:`REPORT_MEASURES` and macro F's value in the window alone."""
    curve_rows = []
    for r, ev, by_measure in zip(results, evals, curves, strict=True):
        run = r["run"]
        per = ev.curve("macro_f1", cumulative=False, zero_division=zero_division)
        for w in range(ev.n_windows):
            row = {
                "stream": run["stream"],
                "label": run["label"],
                "seed": run["seed"],
                "window": w,
                "instances": int(ev.window_edges[w + 1]),
                "macro_f1_cumulative": float(by_measure["macro_f1"][w]),
                "macro_f1_window": float(per[w]),
            }
            for measure, curve in by_measure.items():
                row.setdefault(f"{measure}_cumulative", float(curve[w]))
            curve_rows.append(row)
    return curve_rows


def _stored_run(record):
    """The :class:`Run` of a run file's ``run`` record (its identity and label)."""
    return Run(**{f.name: record[f.name] for f in dataclasses.fields(Run) if f.name in record})


def _has_grid_size(run):
    """Whether the run is one of several grid sizes of its setting (an integer d, not "auto")."""
    d = run.grid_size
    return isinstance(d, numbers.Integral) and not isinstance(d, bool)


def _setting(run):
    """A run's method with its parameters and labels that arrive, without its grid size: the
    name under which its best grid size is reported (``mlsom``, ``mlsom-f0.01-l1000``)."""
    return dataclasses.replace(run, grid_size=None).label


def _shown(results, means):
    """How each run is reported in the plots and the statistics: a :class:`_Shown`, or None for
    a run whose grid size is not the best of its setting on its stream.

    The runs of one setting (:func:`_setting`) with integer grid sizes are reported by the best
    of them on each stream (the mean over seeds; chosen by looking at the test stream, as the
    paper does): the curve ``"mlsom (d=3, best)"``, the method ``"mlsom (best d)"`` in the
    statistics; mlsom-frozen's likewise, as a method of its own (``"mlsom-frozen (best d)"``).
    Every other run (another method, ``grid_size="auto"``) is reported under its label. A
    reference predictor's names end with :data:`REFERENCE_MARK`, an upper bound's with
    :data:`UPPER_BOUND_MARK`. So every setting of every method run appears in every plot. The
    best grid size is the best by macro F, the paper's measure, for every measure.
    """
    runs = [_stored_run(r["run"]) for r in results]
    best = {}  # (stream, setting) -> label of the best grid size
    for run in runs:
        if _has_grid_size(run):
            key, score = (run.stream, _setting(run)), means[run.stream]
            if key not in best or score[run.label] > score[best[key]]:
                best[key] = run.label
    shown = []
    for run, result in zip(runs, results, strict=True):
        if not _has_grid_size(run):
            curve = method = run.label
        elif best[run.stream, _setting(run)] == run.label:
            setting = _setting(run)
            curve, method = f"{setting} (d={run.grid_size}, best)", f"{setting} (best d)"
        else:
            shown.append(None)
            continue
        kind = result.get("kind")
        shown.append(
            _Shown(run, _marked(curve, run.method, kind), _marked(method, run.method, kind))
        )
    return shown


@dataclass(frozen=True)
class _Shown:
    """A run as reported: its curve's name (with its d) and its method's name in the
    statistics (the same on every stream)."""

    run: Run
    curve: str
    method: str


def _papers_best_grid_sizes(results, shown, means):
    """The ``best_grid_size`` of the summary: per stream, mlsom's best d under the paper's
    protocol (no labels that arrive)."""
    best_d = {}
    for s in shown:
        if (
            s is not None
            and s.run.method == "mlsom"
            and s.run.label_fraction is None
            and _has_grid_size(s.run)
        ):
            best_d[s.run.stream] = {
                "grid_size": int(s.run.grid_size),
                "macro_f1": means[s.run.stream][s.run.label],
                "optimistic": True,
                "note": "chosen by looking at the test stream, as the paper does",
            }
    return best_d


def _statistics(results, shown, means, *, measure="macro_f1"):
    """Friedman and Nemenyi over the streams of ``measure`` (``means``: {stream: {label:
    value}}), of the methods reported on every stream (each setting at its best grid size), or
    None with fewer than 2 streams or methods. A stream where the measure is undefined (NaN)
    for one of them is left out; the ranks follow the measure's direction (1: the lowest Hamming
    loss, the highest F)."""
    stat_table = {}
    for s in shown:
        if s is not None:
            stat_table.setdefault(s.run.stream, {})[s.method] = means[s.run.stream][s.run.label]
    common = set.intersection(*(set(v) for v in stat_table.values())) if stat_table else set()
    streams = sorted(s for s, v in stat_table.items() if not any(v[m] != v[m] for m in common))
    if len(streams) < 2 or len(common) < 2:
        return None
    names = sorted(common)
    scores = np.array([[stat_table[s][m] for m in names] for s in streams])
    higher = measure not in LOWER_IS_BETTER
    return friedman_nemenyi(scores, methods=names, datasets=streams, higher_is_better=higher)


def _statistics_summary(result, measure):
    """The summary of a :func:`_statistics` result: the methods (as named in the plots), their
    mean ranks, the tests' values and the Nemenyi p-values."""
    return {
        "measure": measure,
        "higher_is_better": measure not in LOWER_IS_BETTER,
        "streams": list(result.datasets),
        "methods": list(result.methods),
        "mean_ranks": result.mean_ranks.tolist(),
        "friedman_chi2": result.chi2,
        "friedman_pvalue": result.chi2_pvalue,
        "iman_davenport_f": result.f_statistic,
        "iman_davenport_pvalue": result.f_pvalue,
        "nemenyi_cd": result.cd,
        "alpha": result.alpha,
        "nemenyi_pvalues": result.pvalues.tolist(),
    }


def _plots(results, evals, curves, shown, tests, out):
    """The PNG plots: per stream the curves of every measure of :data:`PLOTTED_MEASURES` (the
    same methods in each, chosen by macro F), and per measure of ``tests`` (its
    :func:`_statistics`) the Nemenyi heat map and the CD diagram. Macro F's files have no
    suffix (``curves-<stream>.png``, ``cd.png``), the others end with the measure's name."""
    panels, ends = {}, {}
    for ev, by_measure, s in zip(evals, curves, shown, strict=True):
        if s is not None:
            panel = panels.setdefault(s.run.stream, {}).setdefault(s.curve, [])
            panel.append(by_measure)
            # the runs of a stream share its windows: the test instances seen at their ends
            ends.setdefault(s.run.stream, ev.window_edges[1:])
    kinds = {s.curve: r.get("kind") for r, s in zip(results, shown, strict=True) if s}
    method_of = {s.curve: s.method for s in shown if s is not None}
    mlsom_curves = {s.curve for s in shown if s is not None and s.run.method == "mlsom"}
    top = _highlighted_method(shown)
    # one style per method over every panel, whatever its best d there
    shared = method_styles(sorted(set(method_of.values()) - {top}), highlight=None)
    written = []
    for stream, panel in sorted(panels.items()):
        mean = {
            c: {m: np.mean([r[m] for r in runs], axis=0) for m in runs[0]}
            for c, runs in panel.items()
        }
        chosen = _panel_selection(
            {c: v["macro_f1"] for c, v in mean.items()}, kinds, keep=mlsom_curves
        )
        styles = {c: shared[method_of[c]] for c in chosen if method_of[c] != top}
        highlight = next((c for c in chosen if method_of[c] == top), None)
        for measure in PLOTTED_MEASURES:
            fig = _measure_curves(
                measure, {c: mean[c] for c in chosen}, ends[stream], stream, styles, highlight
            )
            suffix = "" if measure == "macro_f1" else f"-{measure}"
            written.append(str(save_png(fig, out / f"curves-{stream}{suffix}.png")))
    for measure, result in tests.items():
        suffix = "" if measure == "macro_f1" else f"-{measure}"
        for plot, name in ((plot_nemenyi_heatmap, "nemenyi"), (plot_critical_difference, "cd")):
            fig = plot(result, measure=_measure_title(measure))
            written.append(str(save_png(fig, out / f"{name}{suffix}.png")))
    return written


def _measure_title(measure):
    """What a plot of ``measure`` shows: ``"cumulative Hamming loss (mean over windows, lower is
    better)"``."""
    better = ", lower is better" if measure in LOWER_IS_BETTER else ""
    return f"cumulative {_measure_name(measure)} (mean over windows{better})"


def _measure_curves(measure, mean, x, stream, styles, highlight):
    """The curves of one measure on one stream (``mean``: {curve: {measure: mean curve over
    seeds}}); ``"cardinality"``: each method's predicted cardinality, and the true one."""
    if measure == "cardinality":
        data = {c: v["predicted_cardinality"] for c, v in mean.items()}
        data[TRUE_CARDINALITY] = np.mean([v["true_cardinality"] for v in mean.values()], axis=0)
        styles = {**styles, TRUE_CARDINALITY: _TRUE_CARDINALITY_STYLE}
        ylabel = "predicted cardinality (labels per instance)"
    else:
        data = {c: v[measure] for c, v in mean.items()}
        better = " (lower is better)" if measure in LOWER_IS_BETTER else ""
        ylabel = f"cumulative {_measure_name(measure)}{better}"
    return plot_curves(
        data,
        x=x,
        title=f"{stream} (mean over seeds)",
        xlabel="instances of the stream",
        ylabel=ylabel,
        styles=styles,
        highlight=highlight,
    )


def _highlighted_method(shown):
    """The method drawn in the reserved style: mlsom under the paper's protocol at its best
    grid size, else with ``grid_size="auto"``, else its first other setting (None: no mlsom)."""
    mlsom = [s for s in shown if s is not None and s.run.method == "mlsom"]
    if not mlsom:
        return None
    return min(
        mlsom, key=lambda s: (s.run.label_fraction is not None, not _has_grid_size(s.run), s.method)
    ).method


def _panel_selection(curves, kinds, most=8, keep=()):
    """At most ``most`` curves for a readable panel, as the paper's Figure 1: every curve of
    ``keep`` (mlsom's), then MINAS-BR, the best lower and the best upper bound, then the others
    by mean value."""
    if len(curves) <= most:
        return curves
    by_mean = sorted(curves, key=lambda m: -float(np.nanmean(curves[m])))
    chosen = [m for m in by_mean if m in keep]
    order = [m for m in by_mean if m == "MINAS-BR"]
    for kind in ("batch", "incremental"):
        order += [m for m in by_mean if kinds.get(m) == kind][:1]
    order += by_mean
    for m in order:
        if len(chosen) >= most:
            break
        if m not in chosen:
            chosen.append(m)
    return {m: c for m, c in curves.items() if m in chosen}


def _write_csv(path, rows):
    if not rows:
        path.write_text("")
        return
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _estimate_paper_seconds(results, n_jobs):
    """Rough time of ``--profile paper`` from the speeds measured in these runs.

    Every run of the paper's design (:func:`plan` of the ``paper`` profile: the streams of Table 1
    at their sizes, mlsom at d = 1..10 and 10 seeds, MINAS-BR 10 seeds, the other methods once)
    of a method measured here is given the method's time per instance (in ``fit`` and on the
    stream) times its stream's instances, plus the rest of a run's time (making the method, the
    windows and measures) once, both the medians over the runs measured here of the method on
    that stream, or on every stream run here where that one was not (a slow first run does not
    sway a median). mlsom's time per instance at a grid size d comes from the line through its
    times measured at each d against d * d (the number of units), never below the smallest of
    them; one measured d gives the same at every d. Runs with labels that arrive or with
    ``grid_size="auto"`` count only for a method that has no other. The total is shared among
    ``n_jobs`` workers, and takes at least as long as the longest run. Methods not measured
    here are not counted; the result names them.
    """
    speeds = _measured_speeds(results)
    runs = plan("paper", methods=sorted(speeds)) if speeds else []
    seconds = [_run_seconds(speeds[r.method], r, table_entry(r.stream).instances) for r in runs]
    longest = max(seconds, default=0.0)
    return {
        "seconds": max(sum(seconds) / max(1, n_jobs), longest),
        "serial_seconds": sum(seconds),
        "longest_run_seconds": longest,
        "runs": len(runs),
        "methods_measured": sorted(speeds),
        "methods_not_measured": sorted(set(available_methods()) - set(speeds)),
        "workers": n_jobs,
        "note": "from this run's speeds; methods not measured here are not counted",
    }


def _measured_speeds(results):
    """Per method, its runs' (stream, grid size, seconds per instance, other seconds): those of
    the paper's protocol with a fixed grid size or none where the method has any, else all."""
    every, paper = {}, {}
    for r in results:
        run = _stored_run(r["run"])
        wall, n = r["run"]["wall_seconds"], max(1, r["n_train"] + r["n_test"])
        fit, stream = r.get("fit_seconds"), r.get("stream_seconds")
        scaled = wall if fit is None or stream is None else min(wall, fit + stream)
        measured = (run.stream, run.grid_size, scaled / n, wall - scaled)
        every.setdefault(run.method, []).append(measured)
        if run.label_fraction is None and run.grid_size != "auto":
            paper.setdefault(run.method, []).append(measured)
    return {m: paper.get(m) or v for m, v in every.items()}


def _run_seconds(measured, run, n_instances):
    """Seconds of ``run`` on ``n_instances`` from its method's ``measured`` runs (see
    :func:`_estimate_paper_seconds`)."""
    on_stream = [x for x in measured if x[0] == run.stream] or measured
    rest = float(np.median([x[3] for x in on_stream]))
    by_d = {}
    for _, d, per_instance, _ in on_stream:
        if isinstance(d, numbers.Integral) and not isinstance(d, bool):
            by_d.setdefault(int(d), []).append(per_instance)
    if not _has_grid_size(run) or not by_d:
        return n_instances * float(np.median([x[2] for x in on_stream])) + rest
    sizes = sorted(by_d)
    cost = [float(np.median(by_d[d])) for d in sizes]
    if len(sizes) > 1:
        slope, intercept = np.polyfit(np.array(sizes, dtype=float) ** 2, cost, 1)
        cost.append(max(float(intercept + slope * run.grid_size**2), min(cost)))
    return n_instances * cost[-1] + rest
