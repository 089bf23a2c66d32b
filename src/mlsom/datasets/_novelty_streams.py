"""Novelty streams: labels that the labelled set never shows appear in the stream.

``load_novelty(name)`` and ``list_novelty_streams()``; ``docs/datasets.md``, "Novelty streams",
describes each. Generated ones follow MINAS-BR's MOA streams (MOA-3C-5C-2D: 3 labels known of
5): moving spherical kernels (:func:`~mlsom.datasets.moa_spherical`), the new labels' kernels
appearing at 30 % and 70 % of the stream. Real ones are MINAS-BR's own 4CRE-V2 with its novel
labels, and the package's real sets in MINAS-BR's "modified" form: the rows of chosen labels taken
out of the labelled set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int
from ._generators import SeedLike, moa_spherical, seed_sequence
from ._preprocess import prefix_split
from ._registry import (
    TRAIN_FRACTION,
    StreamDataset,
    entry_by_name,
    load,
    spherical_calibration,
)

__all__ = [
    "NOVELTY_STREAMS",
    "NoveltyDataset",
    "NoveltyEntry",
    "list_novelty_streams",
    "load_novelty",
]

#: Where in a generated novelty stream its new labels appear, as shares of the stream.
APPEAR_SHARES = (0.3, 0.7)


@dataclass(frozen=True)
class NoveltyEntry:
    """One novelty stream of the registry.

    Attributes
    ----------
    name : str
    kind : {"spherical", "real"}
    instances : int or None
        Generated streams: the default length.
    attributes, labels, known : int or None
        Generated streams: features, labels, and how many labels the labelled set shows (the
        first ``known`` columns; the others are new).
    cardinality : float or None
        Generated streams: z of the labelled set (the first 10 %), as for the paper's streams.
    sd : int or None
        Generated streams: instances per 0.01 of kernel travel at speed factor 1.
    calibration : str or None
        Generated streams: the paper stream whose calibration the kernels take.
    base : str or None
        Real streams: the stream of :func:`~mlsom.datasets.load` they are made from.
    """

    name: str
    kind: str
    instances: int | None = None
    attributes: int | None = None
    labels: int | None = None
    known: int | None = None
    cardinality: float | None = None
    sd: int | None = None
    calibration: str | None = None
    base: str | None = None


NOVELTY_STREAMS: tuple[NoveltyEntry, ...] = (
    NoveltyEntry(
        "MOA-Spher-3C-5C-2A", "spherical", 100_000, 2, 5, 3, 1.76, 2_000, "MOA-Spher-3C-2A"
    ),
    NoveltyEntry(
        "MOA-Spher-5C-7C-2A", "spherical", 100_000, 2, 7, 5, 1.54, 1_500, "MOA-Spher-5C-2A"
    ),
    NoveltyEntry(
        "MOA-Spher-3C-5C-3A", "spherical", 100_000, 3, 5, 3, 1.37, 1_500, "MOA-Spher-5C-3A"
    ),
    NoveltyEntry(
        "MOA-Spher-5C-7C-3A", "spherical", 100_000, 3, 7, 5, 1.37, 1_500, "MOA-Spher-5C-3A"
    ),
    NoveltyEntry("4CRE-V2", "real", base="MOA-Spher-2C-2A"),
    NoveltyEntry("Scene-modified", "real", base="Scene"),
    NoveltyEntry("Yeast-modified", "real", base="Yeast"),
)

_BY_KEY = {e.name.lower(): e for e in NOVELTY_STREAMS}


@dataclass(frozen=True, eq=False, repr=False)
class NoveltyDataset(StreamDataset):
    """A novelty stream: a :class:`StreamDataset` whose ``Y_train`` and ``Y_stream`` have every
    label, known and new (a new label's column of ``Y_train`` is all 0), and which says which.

    Attributes
    ----------
    known_labels : tuple of int
        The columns the labelled set shows (its labels), in order.
    new_labels : tuple of int
        The other columns: labels that only the stream shows.
    first_rows : dict of int to int
        Per new label, the row of ``X_stream`` where it first occurs.
    """

    known_labels: tuple[int, ...] = ()
    new_labels: tuple[int, ...] = ()
    first_rows: dict[int, int] = field(default_factory=dict)


def list_novelty_streams() -> list[str]:
    """Names of the novelty streams, generated first.

    Examples
    --------
    >>> from mlsom.datasets import list_novelty_streams
    >>> list_novelty_streams()[:2]
    ['MOA-Spher-3C-5C-2A', 'MOA-Spher-5C-7C-2A']
    """
    return [e.name for e in NOVELTY_STREAMS]


def novelty_entry(name: str) -> NoveltyEntry:
    return entry_by_name(name, _BY_KEY, "novelty stream", list_novelty_streams())


def load_novelty(
    name: str,
    *,
    data_home: str | os.PathLike | None = None,
    random_state: SeedLike = 0,
    n_instances: int | None = None,
) -> NoveltyDataset:
    """Load a novelty stream by name.

    Parameters
    ----------
    name : str
        A name of :func:`list_novelty_streams` (case-insensitive).
    data_home : str or path, optional
        Real streams: the folder of their files (as :func:`~mlsom.datasets.load`).
    random_state : int, optional
        Generated streams: the seed.
    n_instances : int, optional
        Generated streams: this many instances (>= 10,000) instead of 100,000; the new labels
        still appear at 30 % and 70 % of them.

    Returns
    -------
    NoveltyDataset

    Examples
    --------
    >>> from mlsom.datasets import load_novelty
    >>> ds = load_novelty("MOA-Spher-3C-5C-2A", n_instances=20_000)
    >>> ds.known_labels, ds.new_labels, ds.first_rows
    ((0, 1, 2), (3, 4), {3: 4001, 4: 12000})
    >>> int(ds.Y_train[:, 3:].sum())
    0
    """
    entry = novelty_entry(name)
    if not isinstance(random_state, (np.random.Generator, np.random.SeedSequence)):
        seed_sequence(random_state, "random_state")  # the type and sign (nothing is drawn)
    if entry.kind == "spherical":
        if data_home is not None:
            raise ValueError(f"data_home= applies to real streams only, not to {entry.name}")
        return _load_spherical(entry, random_state, n_instances)
    if n_instances is not None:
        raise ValueError(f"n_instances= applies to generated streams only, not to {entry.name}")
    return _load_real(entry, data_home)


def _load_spherical(entry, random_state, n_instances):
    n = (
        entry.instances
        if n_instances is None
        else check_int("n_instances", n_instances, low=10_000, high=10**8)
    )
    appear = [round(share * n) for share in APPEAR_SHARES]
    appear_at = [0] * entry.known + appear[: entry.labels - entry.known]
    cal = spherical_calibration(entry.calibration)
    X, Y, info = moa_spherical(
        entry.labels,
        entry.attributes,
        n,
        entry.sd / cal["speed_factor"],
        seed=random_state,
        target_cardinality=entry.cardinality,
        calib_fraction=TRAIN_FRACTION,
        placement=cal["placement"],
        pair_offset=cal["pair_offset"],
        appear_at=appear_at,
    )
    split = prefix_split(X, Y, TRAIN_FRACTION)
    known = tuple(range(entry.known))
    new = tuple(range(entry.known, entry.labels))
    return NoveltyDataset(
        name=entry.name,
        X_train=split.X_train,
        Y_train=split.Y_train,
        X_stream=split.X_stream,
        Y_stream=split.Y_stream,
        label_names=tuple(f"class{j}" for j in range(entry.labels)),
        description=(
            f"{entry.labels} moving spherical kernels in {entry.attributes}-D, {entry.known} "
            f"known from the labelled set; kernels {', '.join(map(str, new))} appear at "
            f"instances {', '.join(f'{t:,}' for t in appear_at[entry.known :])} "
            f"(calibrated as {entry.calibration})"
        ),
        table=None,
        info={"generator": info, "split": "prefix", **split.info},
        known_labels=known,
        new_labels=new,
        first_rows=_first_rows(split.Y_stream, new),
    )


def _first_rows(Y_stream, new):
    out = {}
    for c in new:
        rows = np.flatnonzero(Y_stream[:, c])
        if rows.size == 0:
            raise ValueError(f"new label {c} never occurs in the stream")
        out[int(c)] = int(rows[0])
    return out


def _modified_new_labels(Y):
    """The new labels of a "modified" real set: the ceil(L / 4) least frequent labels of the
    whole set (the first in label order on a tie)."""
    L = Y.shape[1]
    counts = Y.sum(axis=0)
    order = sorted(range(L), key=lambda c: (int(counts[c]), c))
    return tuple(sorted(order[: -(-L // 4)]))


def _load_real(entry, data_home):
    if entry.name == "4CRE-V2":
        base = load(
            entry.base,
            data_home=data_home,
            keep_labels=["class0", "class1", "class2", "class3"],
        )
        names = [n.lower() for n in base.label_names]
        new = tuple(names.index(n) for n in ("class0", "class1"))
        how = "MINAS-BR's stream with its novel labels class0 and class1"
    else:
        base = load(entry.base, data_home=data_home)
        new = _modified_new_labels(np.concatenate([base.Y_train, base.Y_stream]))
        how = f"{entry.base} in MINAS-BR's modified form"
    known = tuple(c for c in range(base.n_labels) if c not in new)
    keep = ~base.Y_train[:, list(new)].any(axis=1)
    if not keep.any():
        raise ValueError(f"{entry.name}: every labelled row has a new label")
    return NoveltyDataset(
        name=entry.name,
        X_train=np.ascontiguousarray(base.X_train[keep]),
        Y_train=np.ascontiguousarray(base.Y_train[keep]),
        X_stream=base.X_stream,
        Y_stream=base.Y_stream,
        label_names=base.label_names,
        description=(
            f"{how}: labels {', '.join(base.label_names[c] for c in new)} are new (their "
            f"{int((~keep).sum())} rows taken out of the labelled set)"
        ),
        table=None,
        info={**base.info, "base": entry.base, "n_train_removed": int((~keep).sum())},
        known_labels=known,
        new_labels=new,
        first_rows=_first_rows(base.Y_stream, new),
    )
