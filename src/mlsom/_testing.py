"""The compiled core's test-only switches and counters, behind one small interface.

For mlsom's tests and benchmarks, not for users: the package itself never imports this module,
and none of the switches changes a result (the tests flip them and compare outputs bit for bit).

* ``switches(screening=None, lanes=None, simd=None)``: a context manager that sets the switches
  given and restores every switch on exit:

  - ``screening``: ``False`` computes every distance exactly instead of screening first;
  - ``lanes``: ``False`` makes ``predict`` classify row by row instead of 16 rows at a time on
    the paths that have the 16-row kernels (AVX2 with FMA, AVX-512F);
  - ``simd``: the kernel path, ``"baseline"``, ``"avx2"``, ``"avx512f"`` (or 0, 1, 2), or
    ``"best"``; a path the processor lacks raises ``ValueError``;
  - ``plain``: names of hand-written kernels (``KERNELS``) to replace by the plain-C body of
    the same path, for the kernel benchmark (``benchmarks/kernel_gains.py``); ``()`` none.

* ``select(...)``: the same switches, set until changed again (a benchmark's whole run);
  ``restore(old)`` puts back what it returned.
* ``simd_levels()``: the paths this processor has, lowest first (loop over them with
  ``switches(simd=level)``); ``levels_run()``: the paths selected since import.
* ``counters(reset=False)``: the decisions that needed exact distances and what the 16-row path
  did since the last reset, as a :class:`Counters` (not exact under threads).
* ``lanes_available()``: whether the selected path has the 16-row kernels; ``lanes_levels()``:
  the paths of this processor that have them.

Everything lives in the compiled core's ``_core_switches.pxi``; this module is its only caller.
"""

from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from . import _core

__all__ = [
    "KERNELS",
    "Counters",
    "counters",
    "lanes_available",
    "lanes_levels",
    "levels_run",
    "restore",
    "select",
    "simd_levels",
    "switches",
]

SIMD_NAMES = ("baseline", "avx2", "avx512f")
# the hand-written kernels `plain` can replace by the plain-C body of the same path:
# "screen4" (the four-row screening tile), "max"
# (largest and smallest value), "gather" (the values within a window), "screen64" (training's
# 64-row screen, AVX-512 and AVX2)
KERNELS = tuple(_core.PLAIN_KERNELS)

_levels_run = {_core._switches()[2]}  # the path chosen at import


class Counters(NamedTuple):
    """Counts since the last reset (the order of the CNT_ constants in _core_switches.pxi)."""

    bmu: int  # best-matching units the screening bound left in doubt
    knn: int  # k-nearest searches left in doubt
    wide: int  # k-th smallest searches out of distinct values
    tie: int  # tied votes
    bayes: int  # Bayes tests
    lanes_rows: int  # rows the 16-row path classified
    lanes_fallback: int  # rows it left to the row-by-row path
    lanes_exact: int  # rounds it settled from exact distances
    lanes_scan: int  # ... of which with a pass over the row's values
    lanes_small: int  # rounds in which the whole pool voted
    pair_bayes: int  # corrections="tested": re-classifications that reused the ranking
    pair_whole: int  # ... and those that classified again from the start
    reach: int  # labels beyond the ranking ruled out with their map out of reach
    guard: int  # instances compared with a label's guards


def _level(simd):
    best = simd_levels()[-1]
    if simd in ("best", -1):
        return best
    level = SIMD_NAMES.index(simd) if simd in SIMD_NAMES else simd
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= best:
        raise ValueError(
            f"simd={simd!r}: this processor's paths are {[SIMD_NAMES[i] for i in simd_levels()]}"
        )
    return level


def _plain_mask(names):
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    unknown = [n for n in names if n not in KERNELS]
    if unknown:
        raise ValueError(f"plain={names!r}: unknown kernels {unknown}; they are {KERNELS}")
    return sum(_core.PLAIN_KERNELS[n] for n in set(names))


def simd_levels():
    """The SIMD levels this processor has, lowest first (0 baseline, 1 AVX2, 2 AVX-512F)."""
    best = SIMD_NAMES.index(_core.simd_info()[1].split()[0])
    return list(range(best + 1))


def levels_run():
    """The SIMD levels selected since import (the import's choice included)."""
    return sorted(_levels_run)


def select(*, screening=None, lanes=None, simd=None, plain=None):
    """Set the switches given until changed again (a benchmark's whole run); return the
    previous ``(screening, lanes, simd level, plain mask)`` for :func:`restore`."""
    for name, value in (("screening", screening), ("lanes", lanes)):
        if value is not None and not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True, False or None, got {value!r}")
    level = -2 if simd is None else _level(simd)
    mask = -1 if plain is None else _plain_mask(plain)
    old = _core._switches(
        -1 if screening is None else int(bool(screening)),
        -1 if lanes is None else int(bool(lanes)),
        level,
        mask,
    )
    _levels_run.add(_core._switches()[2])
    return old


def restore(old):
    """Put back the switches :func:`select` returned."""
    _core._switches(int(old[0]), int(old[1]), old[2], old[3])


@contextmanager
def switches(*, screening=None, lanes=None, simd=None, plain=None):
    """Set the switches given for the ``with`` block; every switch is restored on exit."""
    old = select(screening=screening, lanes=lanes, simd=simd, plain=plain)
    try:
        yield
    finally:
        restore(old)


def counters(reset=False):
    """The counts since the last reset (a :class:`Counters`); ``reset`` zeroes them after."""
    return Counters(*_core._counters(reset))


def lanes_available():
    """Whether the selected SIMD path has predict's 16-row kernels (AVX2 with FMA, AVX-512F)."""
    return _core._lanes_kernels()


def lanes_levels():
    """The SIMD levels of this processor whose path has predict's 16-row kernels, lowest first
    (looked up without recording them in :func:`levels_run`)."""
    out = []
    for level in simd_levels():
        old = _core._switches(-1, -1, level, -1)
        try:
            if _core._lanes_kernels():
                out.append(level)
        finally:
            restore(old)
    return out
