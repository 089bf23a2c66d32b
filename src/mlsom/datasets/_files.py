"""A stream from a data file of one's own: :func:`load_file` and :class:`DataFile`.

The file is an ARFF file (Mulan's, with its XML file of labels, or MEKA's, with ``-C n`` in its
relation name; ``.gz``, ``.bz2`` and ``.xz`` copies too) or a NumPy ``.npz`` file holding the
arrays ``X`` (instances x features) and ``Y`` (instances x labels, 0/1). Its rows are the stream,
in order; the labelled set is its first rows (``split="prefix"``, the protocol's rule for the
generated streams) or a label-balanced selection (``split="balanced"``, the rule for the real
streams, :func:`~mlsom.datasets.balanced_initial_split`). No label is filtered, no row dropped and
no feature scaled (docs/your-data.md).
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from .._memory import check_memory
from .._validation import check_float, check_int, describe
from ._arff import iter_arff, load_arff, not_regular
from ._preprocess import balanced_initial_split, n_initial, prefix_split
from ._registry import TRAIN_FRACTION, StreamDataset

__all__ = ["SPLITS", "DataFile", "load_file"]

#: How the labelled set is chosen: the first rows, or the label-balanced selection.
SPLITS = ("prefix", "balanced")

_COMPRESSED = (".gz", ".bz2", ".xz")
_FORMATS = "an ARFF file (.arff, or .arff.gz, .arff.bz2, .arff.xz) or a NumPy .npz file"


def data_format(path) -> str:
    """``"arff"`` or ``"npz"``, from the file's name; a ValueError naming it otherwise."""
    name = os.fspath(path)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"data file must be a path, got {describe(name)}")
    lower = name.lower()
    for suffix in _COMPRESSED:
        lower = lower.removesuffix(suffix)
    if lower.endswith(".arff"):
        return "arff"
    if name.lower().endswith(".npz"):
        return "npz"
    raise ValueError(
        f"data file {name!r}: mlsom reads {_FORMATS} holding X and Y; write a CSV or other "
        "table with numpy.savez(path, X=X, Y=Y) (docs/your-data.md)"
    )


def check_split(split) -> str:
    """``split`` if it is one of :data:`SPLITS`; ValueError naming it otherwise."""
    if not isinstance(split, str) or split not in SPLITS:
        raise ValueError(f"split must be 'prefix' or 'balanced', got split={describe(split)}")
    return split


def check_train_fraction(train_fraction):
    """None (the default, 0.1) or a fraction in (0, 1), as float."""
    if train_fraction is None:
        return None
    return check_float("train_fraction", train_fraction, low=0.0, low_open=True, high=1.0)


def check_train_rows(train_rows, train_fraction=None):
    """None or a number of rows >= 1; not both with ``train_fraction``."""
    if train_rows is None:
        return None
    if train_fraction is not None:
        raise ValueError(
            f"give train_fraction or train_rows, not both (got train_fraction="
            f"{describe(train_fraction)}, train_rows={describe(train_rows)})"
        )
    return check_int("train_rows", train_rows, low=1)


def check_label_location(label_location):
    """None or ("first" | "last", n >= 1), as a tuple."""
    if label_location is None:
        return None
    try:
        where, n = label_location
    except (TypeError, ValueError):
        where, n = None, None
    if where not in ("first", "last") or isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(
            f"label_location must be ('first' | 'last', n) with n >= 1, got "
            f"label_location={describe(label_location)}"
        )
    return (where, n)


def _train_size(n, train_fraction, train_rows, source):
    """The labelled set's rows and fraction of the ``n`` rows of ``source``; a ValueError naming
    the option when it leaves no labelled row or no test row."""
    if train_rows is not None:
        if train_rows >= n:
            raise ValueError(
                f"train_rows={train_rows}, but {source} has {n} rows: the labelled set must "
                f"leave a test stream (at most {n - 1} rows)"
            )
        return train_rows, Fraction(train_rows, n)
    fraction = TRAIN_FRACTION if train_fraction is None else train_fraction
    k = n_initial(n, fraction)
    if k == 0 or k >= n:
        what = "no row" if k == 0 else f"all {n} rows, leaving no test stream"
        raise ValueError(
            f"train_fraction={fraction!r} selects {what} of the {n} rows of {source}; give "
            "another train_fraction or train_rows"
        )
    return k, fraction


def regular_file(path) -> str:
    """``path`` as str, an existing regular file (a FIFO, a device, a folder: refused, never
    opened)."""
    path = os.fspath(path)
    mode = os.stat(path).st_mode  # FileNotFoundError and the like name the path
    if not stat.S_ISREG(mode):
        raise not_regular(path, mode, "data files are read from regular files only")
    return path


def _npz_header(zf, key, path):
    """Shape and dtype of the array ``key`` of an .npz file, from its header alone."""
    member = f"{key}.npy"
    if member not in zf.namelist():
        found = sorted(n.removesuffix(".npy") for n in zf.namelist())
        raise ValueError(
            f"{path}: no array {key!r} (it holds {found}); an .npz data file holds X "
            "(instances x features) and Y (instances x labels, 0/1): numpy.savez(path, X=X, Y=Y)"
        )
    with zf.open(member) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"{path}: array {key!r} has .npy format {version}, not 1.0 or 2.0")
    if len(shape) != 2:
        raise ValueError(f"{path}: array {key} must be 2-D, got shape {shape}")
    if dtype.hasobject or dtype.kind not in "biuf":
        raise ValueError(f"{path}: array {key} must hold real numbers, got dtype {dtype}")
    return shape, dtype


def _read_npz(path):
    """X and Y of an .npz data file, checked (sizes before anything is read)."""
    try:
        with zipfile.ZipFile(path) as zf:
            (n, a), dx = _npz_header(zf, "X", path)
            (m, k), dy = _npz_header(zf, "Y", path)
            if n != m:
                raise ValueError(f"{path}: X has {n} rows but Y has {m}")
            check_memory(path, 2 * n * (a * dx.itemsize + k * dy.itemsize), "arrays X and Y")
            arrays = {}
            for key in ("X", "Y"):
                with zf.open(f"{key}.npy") as f:
                    try:
                        arrays[key] = np.lib.format.read_array(f, allow_pickle=False)
                    except ValueError as exc:  # a truncated array, ...
                        raise ValueError(f"{path}: array {key} cannot be read: {exc}") from None
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
    X, Y = arrays["X"], arrays["Y"]
    if not np.isfinite(X).all():
        i, j = (int(v) for v in np.argwhere(~np.isfinite(X))[0])
        raise ValueError(f"{path}: X contains NaN or infinity (row {i}, column {j})")
    if Y.size and not ((Y == 0) | (Y == 1)).all():
        i, j = (int(v) for v in np.argwhere((Y != 0) & (Y != 1))[0])
        raise ValueError(
            f"{path}: Y must hold only 0 and 1, found {Y[i, j].item()!r} at ({i}, {j})"
        )
    names = (tuple(f"x{j}" for j in range(X.shape[1])), tuple(f"y{j}" for j in range(k)))
    return X.astype(np.float64, copy=False), Y.astype(np.uint8, copy=False), names


@dataclass(frozen=True)
class DataFile:
    """A data file of one's own and how its labelled set is chosen (:func:`load_file`'s
    arguments): what ``mlsom run --data`` and ``mlsom experiment --data`` evaluate on.

    Attributes
    ----------
    path : str
        The ARFF or .npz file.
    xml : str, optional
        The Mulan XML file of an ARFF file's labels (default: ``<name>.xml`` beside it, unless
        the relation name holds MEKA's ``-C n``).
    label_location : ("first" | "last", int), optional
        An ARFF file's labels are its first or last n attributes.
    train_fraction : float, optional
        The labelled set's share of the rows (default 0.1).
    train_rows : int, optional
        The labelled set's number of rows instead.
    split : {"prefix", "balanced"}, default "prefix"
        The first rows, or the label-balanced selection.
    """

    path: str
    xml: str | None = None
    label_location: tuple[str, int] | None = None
    train_fraction: float | None = None
    train_rows: int | None = None
    split: str = "prefix"

    @property
    def name(self) -> str:
        """The file's name, the stream's name in reports."""
        return Path(self.path).name

    def columns(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The feature and label names, from the file's header alone (an ARFF header and its
        labels' source, or an .npz file's arrays): a check that costs no data row."""
        path = regular_file(self.path)
        if data_format(path) == "npz":
            try:
                with zipfile.ZipFile(path) as zf:
                    (_, a), _ = _npz_header(zf, "X", path)
                    (_, k), _ = _npz_header(zf, "Y", path)
            except zipfile.BadZipFile as exc:
                raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
            return tuple(f"x{j}" for j in range(a)), tuple(f"y{j}" for j in range(k))
        xml = None if self.xml is None else regular_file(self.xml)
        with iter_arff(path, 1, xml=xml, label_location=self.label_location) as it:
            return it.feature_names, it.label_names

    def load(self, name: str | None = None) -> StreamDataset:
        """The stream (:func:`load_file` with these arguments)."""
        return load_file(
            self.path,
            xml=self.xml,
            label_location=self.label_location,
            train_fraction=self.train_fraction,
            train_rows=self.train_rows,
            split=self.split,
            name=name,
        )


def load_file(
    path,
    *,
    xml=None,
    label_location=None,
    train_fraction=None,
    train_rows=None,
    split="prefix",
    name=None,
) -> StreamDataset:
    """Read a data file of one's own as a stream: the labelled set and the test stream.

    Parameters
    ----------
    path : str or path
        An ARFF file (Mulan or MEKA, dense or sparse, ``.gz``/``.bz2``/``.xz`` too; read by
        :func:`~mlsom.datasets.load_arff`) or a NumPy ``.npz`` file with the arrays ``X``
        (instances x features, real numbers) and ``Y`` (instances x labels, 0/1). Rows are
        the stream's instances, in order.
    xml : str or path, optional
        The Mulan XML file naming an ARFF file's labels. Without it, the labels are the ``-C n``
        of a MEKA relation name, or those of ``<name>.xml`` beside the file.
    label_location : ("first" | "last", int), optional
        An ARFF file's labels are its first or last n attributes (instead of ``xml``).
    train_fraction : float in (0, 1), optional
        The labelled set holds floor(train_fraction * N + 1/2) of the N rows (default 0.1, the
        protocol's 10 %).
    train_rows : int, optional
        The labelled set holds this many rows instead (not with ``train_fraction``).
    split : {"prefix", "balanced"}, default "prefix"
        "prefix": the first rows are the labelled set (:func:`~mlsom.datasets.prefix_split`).
        "balanced": the label-balanced selection of the real streams
        (:func:`~mlsom.datasets.balanced_initial_split`); the stream is every other row, in order.
    name : str, optional
        The stream's name (default: the file's name).

    Returns
    -------
    StreamDataset
        ``table`` is None; ``info`` records the file, the split and the labelled set's size,
        label counts and cardinality. Features are not scaled (docs/your-data.md).

    Raises
    ------
    ValueError
        For a file of another format, a malformed file (:class:`~mlsom.datasets.ArffError`, with
        the file and line), options out of range, or a labelled set that leaves no row on either
        side; ``OSError`` for a file that cannot be read, ``MemoryError`` for one too large.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from mlsom.datasets import load_file
    >>> rng = np.random.default_rng(0)
    >>> path = os.path.join(tempfile.mkdtemp(), "mine.npz")
    >>> np.savez(path, X=rng.random((50, 3)), Y=rng.random((50, 2)) < 0.5)
    >>> ds = load_file(path, train_rows=10)
    >>> ds.name, ds.X_train.shape, ds.X_stream.shape
    ('mine.npz', (10, 3), (40, 3))
    """
    fmt = data_format(path)
    train_fraction = check_train_fraction(train_fraction)
    train_rows = check_train_rows(train_rows, train_fraction)
    split = check_split(split)
    label_location = check_label_location(label_location)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"name must be a non-empty str, got {describe(name)}")
    path = regular_file(path)
    if fmt == "npz":
        if xml is not None or label_location is not None:
            raise ValueError(f"{path}: xml= and label_location= apply to ARFF files only")
        X, Y, (_, label_names) = _read_npz(path)
    else:
        data = load_arff(path, xml=xml, label_location=label_location)
        X, Y, label_names = data.X, data.Y, tuple(data.label_names)
    n = len(X)
    if n < 2:
        raise ValueError(f"{path}: {n} data row(s); a labelled set and a test stream need two")
    n_train, fraction = _train_size(n, train_fraction, train_rows, path)
    parts = (prefix_split if split == "prefix" else balanced_initial_split)(X, Y, fraction)
    info = {"source": "file", "files": [path], "split": split, **parts.info}
    info.update(xml=None if xml is None else os.fspath(xml), train_indices=parts.train_indices)
    name = Path(path).name if name is None else name
    return StreamDataset(
        name=name,
        X_train=np.ascontiguousarray(parts.X_train, dtype=np.float64),
        Y_train=np.ascontiguousarray(parts.Y_train, dtype=np.uint8),
        X_stream=np.ascontiguousarray(parts.X_stream, dtype=np.float64),
        Y_stream=np.ascontiguousarray(parts.Y_stream, dtype=np.uint8),
        label_names=label_names,
        description=(
            f"{name}: {n} rows ({n_train} labelled, split {split!r}), {X.shape[1]} features, "
            f"{Y.shape[1]} labels"
        ),
        table=None,
        info=info,
    )
