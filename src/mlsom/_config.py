"""Build and run-time information: ``mlsom.show_config()``."""

import os
import platform
import sys

import numpy as np

from . import _core
from ._version import __version__


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
        "simd_path": simd_used,
        "simd_best_supported": simd_best,
    }


def show_config(file=None):
    """Print version, compiler features (OpenMP, SIMD path) and platform, one per line."""
    info = build_info()
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file or sys.stdout)
