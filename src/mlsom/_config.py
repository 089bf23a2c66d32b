"""Build and run-time information (``mlsom.show_config()``); OpenMP settings checked at import."""

import os
import platform
import re
import sys
import warnings

import numpy as np

from . import _core
from ._memory import format_bytes, memory_limit
from ._version import __version__

# OMP_STACKSIZE's syntax (OpenMP 5.2, section 21.2.6): a positive integer and an optional unit,
# B, K, M or G (either case), kilobytes when none is given; GOMP_STACKSIZE, GCC's own name, is read
# the same way.
_STACKSIZE = re.compile(r"\s*(\d+)\s*([bkmgBKMG]?)\s*")
_UNIT = {"": 1024, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _stack_bytes(text):
    """Bytes of OMP_STACKSIZE's value ``text``, or None where the runtime ignores it (malformed)."""
    m = _STACKSIZE.fullmatch(text) if len(text) <= 64 else None
    if m is None:
        return None
    return int(m.group(1)) * _UNIT[m.group(2).lower()]


def check_openmp_settings():
    """Run single-threaded, with a warning, where the OpenMP settings would end the process.

    An OpenMP runtime that cannot start a thread with the stack that ``OMP_STACKSIZE`` (or
    ``GOMP_STACKSIZE``) asks for ends the whole process (GCC's prints "Thread creation failed"),
    with no exception Python could catch. So when the stacks of the extra threads would take
    more than half the memory this process can ever get (:func:`mlsom._memory.memory_limit`),
    the core uses one thread. Called at import; returns the warning's text, or None.
    """
    if not _core.openmp_enabled():
        return None
    threads = _core.max_threads()
    limit, source = memory_limit()
    for name in ("OMP_STACKSIZE", "GOMP_STACKSIZE"):
        value = os.environ.get(name)
        size = None if value is None else _stack_bytes(value)
        if size is None or threads < 2 or (threads - 1) * size <= limit // 2:
            continue
        _core._run_serial()
        text = (
            f"{name}={value!r} asks for {format_bytes(size)} of stack for each thread the core "
            f"would start beside the main one ({threads - 1}), more than half of the "
            f"{format_bytes(limit)} this process can use ({source}); the OpenMP runtime would "
            "end the process when it failed to start them, so mlsom runs on one thread"
        )
        warnings.warn(text, RuntimeWarning, stacklevel=2)
        return text
    return None


check_openmp_settings()


def build_info():
    """Return a dict with the version, OpenMP status, SIMD path and platform of this install."""
    simd_used, simd_best = _core.simd_info()
    return {
        "mlsom": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "openmp": _core.openmp_enabled(),
        "cpu_count": os.cpu_count(),
        "max_threads": _core.max_threads(),
        # a child forked after its parent's core used threads runs on one thread (README)
        "forked_serial": _core.forked_serial(),
        "simd_path": simd_used,
        "simd_best_supported": simd_best,
    }


def show_config(file=None):
    """Print version, compiler features (OpenMP, SIMD path) and platform, one per line."""
    info = build_info()
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file or sys.stdout)
