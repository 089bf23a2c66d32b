"""The twelve streams of the paper's Table 1, by name: ``load(name)`` and ``list_streams()``.

Synthetic streams are generated (:mod:`mlsom.datasets._generators`) with the table's size, number
of attributes and labels, and with the table's label cardinality z as the target of the first 10 %
(the labelled set D_tr); the first 10 % is the training set, the rest the stream
(``docs/protocol.md`` 3.3). The moving-kernel (MOA-Spher) streams come from a generator calibrated
on the paper's streams, or from earlier ones (``source="generator-v2"``, ``"generator-v1"``). Real
streams are read from ARFF files in a folder given by ``data_home`` or the environment variable
``MLSOM_DATA``; their labels are filtered, unlabelled rows dropped, and the label-balanced 10 %
training set chosen (``docs/protocol.md`` 3.4).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._memory import check_memory
from .._names import difference, show
from .._validation import check_float, check_int
from ._arff import load_arff, not_regular
from ._generators import SeedLike, moa_spherical, read_multilabel, seed_sequence
from ._preprocess import balanced_initial_split, drop_unlabelled, filter_labels, prefix_split

__all__ = ["StreamDataset", "TableEntry", "TABLE1", "list_streams", "load"]

DATA_ENV = "MLSOM_DATA"
TRAIN_FRACTION = 0.1

#: The moving-kernel streams' generator, ``source="generator"`` (``docs/datasets.md``, "The
#: spherical generators beside the paper's streams"): kernels in pairs of near-coincident spheres
#: ``pair_offset`` apart, the groups stratified over the cube, moving at ``speed_factor`` times
#: Table 1's 0.01 per sd instances. Fitted on the first 10,000 instances of the paper's
#: MOA-Spher-5C-2A; the streams without a prefix of their own (5C-3A) take it too.
SPHERICAL_CALIBRATION = {"placement": "pairs", "pair_offset": (0.1, 0.2), "speed_factor": 0.45}

#: The streams with a prefix of the paper's own stream are fitted to it: MOA-Spher-3C-2A on the
#: first 10,000 instances of its paper stream (``studies/results/spherical-fit-3c2a.json``).
#: ``source="generator-v2"`` gives every stream :data:`SPHERICAL_CALIBRATION` (the default until
#: 2026-12-07); ``source="generator-v1"`` is the first generator: centres uniform in
#: [r, 1 - r]^d, speed factor 1.
SPHERICAL_OWN_CALIBRATION = {
    "MOA-Spher-3C-2A": {"placement": "pairs", "pair_offset": (0.0, 0.1), "speed_factor": 0.70},
}

_SOURCES = ("file", "generator", "generator-v2", "generator-v1")


def spherical_calibration(name: str, source: str = "generator") -> dict[str, Any] | None:
    """The calibration of a generated MOA-Spher stream under ``source`` ("generator": its own
    prefix's where it has one, else :data:`SPHERICAL_CALIBRATION`; "generator-v2": always
    :data:`SPHERICAL_CALIBRATION`); None for "generator-v1" (no calibration)."""
    if source == "generator":
        return SPHERICAL_OWN_CALIBRATION.get(name, SPHERICAL_CALIBRATION)
    if source == "generator-v2":
        return SPHERICAL_CALIBRATION
    return None


@dataclass(frozen=True)
class TableEntry:
    """One row of the paper's Table 1.

    Attributes
    ----------
    name : str
        The name as printed in the paper.
    instances, attributes, labels : int
        |DS|, |A| and |Y|.
    cardinality : float
        z, the label cardinality of the initial labelled set.
    sd : int or None
        Displacement period of the MOA spherical streams (instances per 0.01 of cluster travel).
    kind : str
        "read" (Read et al.'s generator), "spherical" (MOA RBF), or "real".
    """

    name: str
    instances: int
    attributes: int
    labels: int
    cardinality: float
    sd: int | None
    kind: str


TABLE1: tuple[TableEntry, ...] = (
    TableEntry("Mult-Non-Spher-WF", 100_000, 21, 7, 2.37, None, "read"),
    TableEntry("Mult-Non-Spher-RT", 99_586, 30, 8, 2.54, None, "read"),
    TableEntry("Mult-Non-Spher-HP", 94_417, 10, 5, 1.68, None, "read"),
    TableEntry("Mult-Spher-RB", 99_911, 80, 22, 2.24, None, "read"),
    TableEntry("MOA-Spher-2C-2A", 96_907, 2, 2, 1.06, 1_000, "spherical"),
    TableEntry("MOA-Spher-5C-2A", 95_529, 2, 5, 1.54, 1_500, "spherical"),
    TableEntry("MOA-Spher-5C-3A", 94_667, 3, 5, 1.37, 1_500, "spherical"),
    TableEntry("MOA-Spher-3C-2A", 93_345, 2, 3, 1.76, 2_000, "spherical"),
    TableEntry("Mediamill", 41_442, 120, 15, 3.78, None, "real"),
    TableEntry("Nus-wide", 162_598, 128, 7, 1.71, None, "real"),
    TableEntry("Scene", 1_642, 294, 4, 1.07, None, "real"),
    TableEntry("Yeast", 2_364, 103, 9, 4.15, None, "real"),
)

_BY_KEY = {e.name.lower(): e for e in TABLE1}

_READ_BASE = {
    "Mult-Non-Spher-WF": "waveform",
    "Mult-Non-Spher-RT": "random_tree",
    "Mult-Non-Spher-HP": "hyperplane",
    "Mult-Spher-RB": "rbf",
}

_DESCRIPTIONS = {
    "Mult-Non-Spher-WF": "Read et al.'s meta multi-label generator over a two-class Waveform "
    "stream; four sub-streams, 10/10/30 % of p(y_k|y_j) redrawn in the 2nd/3rd/4th.",
    "Mult-Non-Spher-RT": "Read et al.'s meta multi-label generator over a RandomTree stream; "
    "four sub-streams with the paper's label-dependence drift.",
    "Mult-Non-Spher-HP": "Read et al.'s meta multi-label generator over a Hyperplane stream "
    "(5 % label noise); four sub-streams with the paper's label-dependence drift.",
    "Mult-Spher-RB": "Read et al.'s meta multi-label generator over a RandomRBF stream "
    "(50 centroids); four sub-streams with the paper's label-dependence drift.",
    "MOA-Spher-2C-2A": "Two spherical clusters in 2-D, counter-rotating about the centre so that "
    "they move close and away from each other; an instance has every label whose sphere holds it.",
    "MOA-Spher-5C-2A": "Five moving spherical clusters in 2-D (MOA RandomRBFGeneratorEvents "
    "style); overlaps are multi-label instances.",
    "MOA-Spher-5C-3A": "Five moving spherical clusters in 3-D; overlaps are multi-label instances.",
    "MOA-Spher-3C-2A": "Three moving spherical clusters in 2-D; overlaps are multi-label "
    "instances.",
    "Mediamill": "Mulan's Mediamill video data (120 features); labels with < 5 % positives "
    "removed, unlabelled rows dropped.",
    "Nus-wide": "Mulan's NUS-WIDE images, cVLAD+ features (128); labels with < 5 % positives "
    "removed, unlabelled rows dropped.",
    "Scene": "Mulan's Scene images (294 features), labels Beach, Sunset, Field, Mountain; "
    "unlabelled rows dropped.",
    "Yeast": "Mulan's Yeast genes (103 features); labels with < 5 % positives removed.",
}


@dataclass(frozen=True)
class _RealSpec:
    # alternatives, in order of preference: each a tuple of ARFF files concatenated in order
    files: tuple[tuple[str, ...], ...]
    xml: str | None  # Mulan label file; None: MEKA format (labels in the relation name)
    folders: tuple[str, ...]  # sub-folders of data_home searched after data_home itself
    keep: tuple[str, ...] | None = None  # explicit label subset (else the 5 % rule)
    split: str = "balanced"  # "balanced" 10 %, or "file": first file is D_tr, the rest the stream


_NUS = "nus-wide-full-cVLADplus"
REAL_FILES: dict[str, _RealSpec] = {
    "Yeast": _RealSpec(
        # Mulan's full yeast.arff is its test part followed by its train part
        files=(("yeast.arff",), ("yeast-test.arff", "yeast-train.arff")),
        xml="yeast.xml",
        folders=("yeast",),
    ),
    "Scene": _RealSpec(
        files=(("scene.arff",), ("scene-train.arff", "scene-test.arff")),
        xml="scene.xml",
        folders=("scene",),
        keep=("Beach", "Sunset", "Field", "Mountain"),
    ),
    "Mediamill": _RealSpec(
        files=(("mediamill.arff",), ("mediamill-train.arff", "mediamill-test.arff")),
        xml="mediamill.xml",
        folders=("mediamill",),
    ),
    "Nus-wide": _RealSpec(
        files=((f"{_NUS}.arff",), (f"{_NUS}-train.arff", f"{_NUS}-test.arff")),
        xml=f"{_NUS}.xml",
        folders=("nus-wide", "nuswide", "nuswide-cVLADplus"),
    ),
    "MOA-Spher-2C-2A": _RealSpec(
        files=(("4CRE-V2-train.arff", "4CRE-V2-test.arff"),),
        xml=None,
        folders=("minas-br",),
        keep=("class2", "class3"),
        split="file",
    ),
}


@dataclass(frozen=True, eq=False, repr=False)
class StreamDataset:
    """A stream (of Table 1, or a file of one's own), split into the labelled set and the stream.

    Attributes
    ----------
    name : str
        Table 1 name.
    X_train : ndarray of shape (n_train, n_features), float64
    Y_train : ndarray of shape (n_train, n_labels), uint8
        The initial labelled set D_tr.
    X_stream : ndarray of shape (n_stream, n_features), float64
    Y_stream : ndarray of shape (n_stream, n_labels), uint8
        The test stream, in order (its labels are for evaluation only).
    label_names : tuple of str
    description : str
    table : TableEntry or None
        The paper's values: ``table.instances``, ``table.attributes``, ``table.labels``,
        ``table.cardinality`` (and ``table.sd``); None for a file of one's own
        (:func:`~mlsom.datasets.load_file`).
    info : dict
        How it was made: generator metadata (drift points, calibrated radius or z, ...) or the
        files read and the preprocessing record.
    """

    name: str
    X_train: np.ndarray
    Y_train: np.ndarray
    X_stream: np.ndarray
    Y_stream: np.ndarray
    label_names: tuple[str, ...]
    description: str
    table: TableEntry | None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n_instances(self) -> int:
        """Measured |DS|: training plus stream instances."""
        return int(self.X_train.shape[0] + self.X_stream.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])

    @property
    def n_labels(self) -> int:
        return int(self.Y_train.shape[1])

    @property
    def train_cardinality(self) -> float:
        """Measured z: mean number of labels per instance of the labelled set D_tr."""
        return float(self.Y_train.sum(axis=1).mean()) if len(self.Y_train) else float("nan")

    @property
    def cardinality(self) -> float:
        """Mean number of labels per instance over the whole stream (D_tr and test stream)."""
        total = self.Y_train.sum() + self.Y_stream.sum()
        return float(total / self.n_instances) if self.n_instances else float("nan")

    def __repr__(self) -> str:
        return (
            f"StreamDataset(name={self.name!r}, n_train={len(self.X_train)}, "
            f"n_stream={len(self.X_stream)}, n_features={self.n_features}, "
            f"n_labels={self.n_labels}, train_cardinality={self.train_cardinality:.3f})"
        )


def list_streams() -> list[str]:
    """Names of the twelve streams of the paper's Table 1, in the table's order.

    Examples
    --------
    >>> from mlsom.datasets import list_streams
    >>> list_streams()[:2]
    ['Mult-Non-Spher-WF', 'Mult-Non-Spher-RT']
    >>> len(list_streams())
    12
    """
    return [e.name for e in TABLE1]


def entry_by_name(name: str, by_key: Mapping[str, Any], what: str, names: Sequence[str]) -> Any:
    """The entry of ``by_key`` (keyed by lower-case name) that ``name`` names, case-insensitive;
    TypeError or ValueError (naming the ``what`` and the valid ``names``) otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {name!r}")
    try:
        return by_key[name.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown {what} {name!r}; valid names (case-insensitive): {', '.join(names)}"
        ) from None


def table_entry(name: str) -> TableEntry:
    return entry_by_name(name, _BY_KEY, "stream", list_streams())


def _prefix_split(X, Y):
    return prefix_split(X, Y, TRAIN_FRACTION)


def load(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    random_state: SeedLike = 0,
    n_instances: int | None = None,
    source: str | None = None,
    keep_labels: Sequence[str] | None = None,
    min_label_freq: float | None = None,
) -> StreamDataset:
    """Load a stream of the paper's Table 1 by name.

    Parameters
    ----------
    name : str
        A name of :func:`list_streams` (case-insensitive), e.g. ``"Mult-Non-Spher-HP"``.
    data_home : str or path, optional
        Folder of the real data files (the folder itself, then a sub-folder named after the data
        set, e.g. ``minas-br/``, are searched; ``.gz``/``.bz2``/``.xz`` copies are accepted).
        Default: the environment variable ``MLSOM_DATA``. Not used by synthetic streams.
    random_state : int, SeedSequence, Generator or None, default=0
        Seed of a synthetic stream (real streams are deterministic).
    n_instances : int, optional
        Synthetic streams only: generate this many instances (>= 1000, so that the 10 % prefix
        can hit the two-decimal z of the table) instead of the table's |DS|; the cardinality
        target and the 10 % rule stay.
    source : {"file", "generator", "generator-v2", "generator-v1"}, optional
        The MOA-Spher streams only. "generator" (the default of 5C-2A, 5C-3A and 3C-2A): the
        calibrated generator, :func:`moa_spherical` with the kernels in pairs (its
        ``placement="pairs"``) at the speed and pair offsets fitted on the stream's own paper
        prefix where one is public (5C-2A, 3C-2A: :data:`SPHERICAL_OWN_CALIBRATION`), else on
        5C-2A's (:data:`SPHERICAL_CALIBRATION`, ``docs/datasets.md``). "generator-v2": every
        stream calibrated to 5C-2A's prefix, the default until 2026-12-07 (it differs from
        "generator" on 3C-2A only). "generator-v1": the first
        generator, centres uniform in [r, 1 - r]^d moving at 0.01 per sd instances; it gives the
        streams of earlier versions bit for bit. "file", for "MOA-Spher-2C-2A" only and its
        default: the paper's real stream (``4CRE-V2-train.arff`` / ``-test.arff`` of MINAS-BR,
        novel labels class0/class1 removed, then the test rows left without a label; D_tr = the
        file's training part, 14,600 rows, 15 % of the stream). MOA-Spher-2C-2A's generated
        stream is a rotating preset, the same for every generator source; all use the
        10 % prefix rule.
    keep_labels : sequence of str, optional
        Real streams: keep exactly these labels (case-insensitive names), overriding the default
        selection (Scene: Beach, Sunset, Field, Mountain; MOA-Spher-2C-2A: class2, class3; the
        others: labels with at least ``min_label_freq`` positives).
    min_label_freq : float, optional
        Real streams: the frequency rule's threshold (default 0.05).

    Returns
    -------
    StreamDataset

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones), an unknown ``source``, an
        option that does not apply or an empty or blank ``data_home``; for data files that are
        no regular file (a FIFO, a device, a directory: never opened), a malformed file
        (:class:`ArffError`), files of one data set with different features, or no row with a
        label kept (in the training part, the test part or all of them): the message names the
        file(s).
    FileNotFoundError
        For a real stream whose files are not found; the message names the files expected.
        Any other ``OSError`` (a symbolic link loop, a permission denied, an I/O error) names the
        file too.
    MemoryError
        When the rows of the files, or the stream made from them, would need more memory than
        the process can get (``mlsom._memory``); the message names the file(s).

    Examples
    --------
    >>> from mlsom.datasets import load
    >>> ds = load("MOA-Spher-5C-2A", n_instances=10_000)
    >>> ds.X_train.shape, ds.X_stream.shape
    ((1000, 2), (9000, 2))
    >>> ds.table.cardinality, bool(abs(ds.train_cardinality - 1.54) <= 0.01)
    (1.54, True)
    """
    entry = table_entry(name)
    if not isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        seed_sequence(random_state, "random_state")  # the type and sign (nothing is drawn)
    source = _check_source(entry, source)
    if source != "file":
        if keep_labels is not None or min_label_freq is not None:
            raise ValueError("keep_labels= and min_label_freq= apply to real streams only")
        return _load_synthetic(entry, random_state, n_instances, source)
    if n_instances is not None:
        raise ValueError(f"n_instances= applies to synthetic streams only, not to {entry.name}")
    return _load_real(entry, data_home, keep_labels, min_label_freq)


def _check_source(entry: TableEntry, source: str | None) -> str:
    """The source of ``entry``'s stream: ``source`` checked, or the stream's default."""
    if source is not None and entry.kind != "spherical":
        raise ValueError(
            f"source= applies only to the MOA-Spher streams, not to {entry.name} (got "
            f"source={source!r})"
        )
    if source is None:
        source = "file" if entry.kind == "real" or entry.name == "MOA-Spher-2C-2A" else "generator"
    if not isinstance(source, str) or source not in _SOURCES:
        raise ValueError(
            f"source must be 'file' or 'generator' or 'generator-v2' (every stream calibrated "
            f"to 5C-2A) or 'generator-v1' (the first spherical generator), got source={source!r}"
        )
    if source == "file" and entry.kind == "spherical" and entry.name != "MOA-Spher-2C-2A":
        raise ValueError(
            f"source='file' applies only to MOA-Spher-2C-2A (the paper's stream); {entry.name} "
            "is generated: source='generator' (the default), 'generator-v2' or 'generator-v1'"
        )
    return source


def _spherical_options(entry: TableEntry, source: str) -> dict[str, Any]:
    """moa_spherical's arguments for a MOA-Spher stream of Table 1 and a generator source."""
    options: dict[str, Any] = {"shift_every": entry.sd}
    if entry.name == "MOA-Spher-2C-2A":
        options["rotate"] = True  # the rotating preset: the same for both sources
    elif source in ("generator", "generator-v2"):
        cal = spherical_calibration(entry.name, source)
        options["shift_every"] = entry.sd / cal["speed_factor"]
        options["placement"] = cal["placement"]
        options["pair_offset"] = cal["pair_offset"]
    return options


def _load_synthetic(
    entry: TableEntry, random_state: SeedLike, n_instances: int | None, source: str = "generator"
):
    n = entry.instances if n_instances is None else check_int("n_instances", n_instances, low=1000)
    z = entry.cardinality
    if entry.kind == "read":
        X, Y, info = read_multilabel(
            _READ_BASE[entry.name],
            entry.labels,
            entry.attributes,
            z,
            n,
            seed=random_state,
            target_cardinality=z,
            calib_fraction=TRAIN_FRACTION,
        )
    else:
        X, Y, info = moa_spherical(
            entry.labels,
            entry.attributes,
            n,
            seed=random_state,
            target_cardinality=z,
            calib_fraction=TRAIN_FRACTION,
            **_spherical_options(entry, source),
        )
    split = _prefix_split(X, Y)
    description = _DESCRIPTIONS[entry.name]
    if entry.name == "MOA-Spher-2C-2A":
        description += " (generated preset; the paper's stream is source='file')"
    elif entry.kind == "spherical" and source == "generator-v1":
        description += " (the first generator: centres uniform in the cube)"
    return StreamDataset(
        name=entry.name,
        X_train=split.X_train,
        Y_train=split.Y_train,
        X_stream=split.X_stream,
        Y_stream=split.Y_stream,
        label_names=tuple(f"class{j}" for j in range(entry.labels)),
        description=description,
        table=entry,
        info={"source": source, "generator": info, "split": "prefix", **split.info},
    )


# ----------------------------------------------------------------------------------- real data


def check_not_blank(data_home) -> None:
    """Refuse an empty or blank ``data_home``: ``Path("")`` is the current folder."""
    text = os.fspath(data_home)
    if isinstance(text, str) and not text.strip():
        raise ValueError(
            f"data_home must be a folder, got {text!r} (an empty or blank path; write '.' for "
            "the current folder)"
        )


def resolve_data_home(data_home) -> Path | None:
    if data_home is None:
        env = os.environ.get(DATA_ENV)
        name, value = DATA_ENV, env
        if not env:
            return None
    else:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(f"data_home must be a str, an os.PathLike or None, got {data_home!r}")
        check_not_blank(data_home)
        name, value = "data_home", data_home
    try:
        return Path(value).expanduser()
    except (RuntimeError, ValueError) as exc:  # "~user" of no such user, and the like
        raise ValueError(f"{name} {str(value)!r} cannot be read as a folder: {exc}") from None


def _check_keep_labels(keep_labels):
    if keep_labels is None:
        return None
    if isinstance(keep_labels, str) or not hasattr(keep_labels, "__len__"):
        raise TypeError(
            f"keep_labels must be a sequence of label names, got {type(keep_labels).__name__}"
        )
    keep = list(keep_labels)
    for k in keep:
        if not isinstance(k, str):
            raise TypeError(f"keep_labels must hold label names (str), got {k!r}")
    return keep


def find_files(folder: Path | None, spec: _RealSpec, entry: TableEntry, advice: str | None = None):
    """The first complete alternative of ARFF files (and the XML), or FileNotFoundError naming
    every file missing (and those found), then ``advice``: how to give the folder (by default in
    Python: ``data_home=`` or the environment variable; ``""`` for none)."""
    if advice is None:
        advice = (
            f"pass data_home= or set the environment variable {DATA_ENV} to the folder holding them"
        )
    alternatives = " or ".join(" + ".join(files) for files in spec.files)
    subs = ", ".join(spec.folders)
    needed = (
        f"{alternatives}{f', with {spec.xml}' if spec.xml else ''} (a .gz, .bz2 or .xz copy of "
        "an ARFF file is accepted)"
    )
    if folder is None:
        raise FileNotFoundError(
            _advised(
                f"{entry.name} is a real data set and needs the files {needed}; no data folder "
                "is given",
                advice,
            )
        )
    dirs = [folder] + [folder / sub for sub in spec.folders]

    def locate(fname):
        for d in dirs:
            for suffix in ("", ".gz", ".bz2", ".xz"):
                p = d / (fname + suffix)
                if _is_data_file(p, folder, entry):
                    return p
        return None

    for files in spec.files:
        paths = [locate(f) for f in files]
        if all(p is not None for p in paths):
            xml = None if spec.xml is None else locate(spec.xml)
            if spec.xml is None or xml is not None:
                return paths, xml
    # not found: every file looked up, to name each one missing (the ARFF files when no
    # alternative is complete, the XML when it is absent)
    names = list(dict.fromkeys(f for files in spec.files for f in files))
    located = {f: locate(f) for f in names + ([spec.xml] if spec.xml else [])}
    complete = [files for files in spec.files if all(located[f] for f in files)]
    missing = [f for f in names if not complete and located[f] is None]
    missing += [spec.xml] if spec.xml and located[spec.xml] is None else []
    found = [f for f, p in located.items() if p is not None]
    where = f"{folder} and its sub-folder{'s' if len(spec.folders) > 1 else ''} {subs}"
    raise FileNotFoundError(
        _advised(
            f"{entry.name}: missing from {where}: {', '.join(missing)}"
            + (f" (found: {', '.join(found)})" if found else "")
            + f"; it needs {needed}",
            advice,
        )
    )


def _advised(detail, advice):
    return f"{detail}; {advice}" if advice else detail


def _is_data_file(p: Path, folder: Path, entry: TableEntry) -> bool:
    """Whether a data file lies at ``p``: False when nothing does, an error naming it when it is
    no regular file (a FIFO, a device, a directory: never opened, a FIFO would block) or
    cannot be looked at (a symbolic link loop, a permission denied)."""

    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError) as exc:
        if not isinstance(exc, OSError) or exc.errno == errno.ENAMETOOLONG:  # (or a NUL byte)
            raise ValueError(f"data folder {str(folder)!r} cannot be searched: {exc}") from None
        raise OSError(exc.errno, f"{exc.strerror} (a data file of {entry.name})", str(p)) from None
    if not stat.S_ISREG(mode):
        raise not_regular(p, mode, f"{entry.name} is read from regular files only")
    return True


def _resolve_names(wanted: Sequence[str], names: Sequence[str], what: str) -> list[str]:
    by_lower = {n.lower(): n for n in names}
    out = []
    for w in wanted:
        if w.lower() not in by_lower:
            raise ValueError(f"{what}: unknown label {w!r}; the labels are {list(names)}")
        out.append(by_lower[w.lower()])
    return out


def _read_all(paths, xml):
    parts = [load_arff(p, xml=xml) for p in paths]
    first = parts[0]
    for p in parts[1:]:
        if p.n_features != first.n_features:
            raise ValueError(
                f"{p.source} has {p.n_features} features, but {first.source} has "
                f"{first.n_features}: the files of a data set must have the same features "
                f"({difference(p.feature_names, first.feature_names)})"
            )
        # the parts are joined column by column: the same names, in the same order
        for what, got, expected in (
            ("features", p.feature_names, first.feature_names),
            ("labels", p.label_names, first.label_names),
        ):
            if got != expected:
                raise ValueError(
                    f"{p.source} has the {what} {show(got)}, but {first.source} has "
                    f"{show(expected)}: {difference(got, expected)}; the files of a data set "
                    f"must declare the same {what} in the same order"
                )
    return parts, first.label_names


def _no_row(files: str, n_rows: int, kept_names: Sequence[str], what: str) -> ValueError:
    """The error for ``files`` (``n_rows`` data rows) left without a row for ``what``."""
    if n_rows == 0:
        return ValueError(f"{files}: no data row, so no {what}")
    rows = "its 1 data row has" if n_rows == 1 else f"none of its {n_rows} data rows has"
    return ValueError(
        f"{files}: {rows} one of the labels kept ({', '.join(kept_names)}), so no {what}"
    )


def _load_real(entry, data_home, keep_labels, min_label_freq):
    keep_labels = _check_keep_labels(keep_labels)
    if min_label_freq is not None:
        min_label_freq = check_float("min_label_freq", min_label_freq, low=0.0, high=1.0)
    spec = REAL_FILES[entry.name]
    paths, xml = find_files(resolve_data_home(data_home), spec, entry)
    parts, names = _read_all(paths, xml)
    files = " + ".join(str(p) for p in paths)
    # below: the concatenation, the rows kept and the split, each a copy of the data at most
    check_memory(
        files,
        3 * sum(p.X.nbytes + p.Y.nbytes for p in parts),
        f"preparing the stream {entry.name}",
    )

    keep = keep_labels if keep_labels is not None else spec.keep
    if keep is not None and min_label_freq is not None:
        raise ValueError("give either keep_labels= or min_label_freq=, not both")
    keep = None if keep is None else _resolve_names(list(keep), names, entry.name)
    Y_all = np.concatenate([p.Y for p in parts])

    if not len(Y_all):
        raise _no_row(files, 0, (), "stream")

    def select(Y):
        # the frequency rule is evaluated on the whole data set, then applied to each part
        if keep is not None:
            return filter_labels(Y, names, keep=keep)
        try:
            _, kept_names, kept = filter_labels(
                Y_all, names, min_frequency=0.05 if min_label_freq is None else min_label_freq
            )
        except ValueError as exc:  # no label frequent enough
            raise ValueError(f"{files}: {exc}") from None
        return Y[:, kept], kept_names, kept

    info: dict[str, Any] = {
        "source": "file",
        "files": [str(p) for p in paths],
        "xml": None if xml is None else str(xml),
        "labels_in_file": names,
    }
    if spec.split == "file":
        # the file's own split: first file = D_tr, the others the stream, in order
        Xs, Ys = [], []
        for p in parts:
            Yp, kept_names, _ = select(p.Y)
            Xp, Yp, _ = drop_unlabelled(p.X, Yp)
            Xs.append(Xp)
            Ys.append(Yp)
        if not len(Xs[0]):
            raise _no_row(parts[0].source, parts[0].n_instances, kept_names, "initial set")
        if not sum(map(len, Xs[1:])):
            n_rows = sum(p.n_instances for p in parts[1:])
            raise _no_row(" + ".join(map(str, paths[1:])), n_rows, kept_names, "test stream")
        X_train, Y_train = Xs[0], Ys[0]
        X_stream = np.concatenate(Xs[1:])
        Y_stream = np.concatenate(Ys[1:])
        info.update(
            split="file",
            n_train=len(X_train),
            dropped_unlabelled=int(
                sum(p.n_instances for p in parts) - len(X_train) - len(X_stream)
            ),
        )
    else:
        X = np.concatenate([p.X for p in parts])
        Y, kept_names, _ = select(Y_all)
        X, Y, kept_rows = drop_unlabelled(X, Y)
        if not len(X):
            raise _no_row(files, len(Y_all), kept_names, "stream")
        split = balanced_initial_split(X, Y, TRAIN_FRACTION)
        X_train, Y_train, X_stream, Y_stream = split[:4]
        if not len(X_train) or not len(X_stream):
            raise ValueError(
                f"{files}: {len(X)} data rows with one of the labels kept, too few for an "
                f"initial set of {TRAIN_FRACTION:.0%} and a stream"
            )
        info.update(
            split="balanced",
            dropped_unlabelled=int(len(Y_all) - len(kept_rows)),
            train_indices=split.train_indices,
            **split.info,
        )
    return StreamDataset(
        name=entry.name,
        X_train=np.ascontiguousarray(X_train, dtype=np.float64),
        Y_train=np.ascontiguousarray(Y_train, dtype=np.uint8),
        X_stream=np.ascontiguousarray(X_stream, dtype=np.float64),
        Y_stream=np.ascontiguousarray(Y_stream, dtype=np.uint8),
        label_names=tuple(kept_names),
        description=_DESCRIPTIONS[entry.name],
        table=entry,
        info=info,
    )
