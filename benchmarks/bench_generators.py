"""Generation time of the synthetic streams (protocol.md 1.3 and 2.3) for 100,000 instances.

Usage::

    python benchmarks/bench_generators.py [--n 100000] [--repeat 3]

Each row is the best and the median wall time of ``--repeat`` runs of one call, everything
included: the calibration of the radius / of z to the Table 1 cardinality on the first 10 %, the
100,000-set feature map of the Read et al. generator, the base stream, the drift.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from mlsom.datasets._generators import (
    HyperplaneGenerator,
    RandomRBFGenerator,
    RandomTreeGenerator,
    WaveformGenerator,
    moa_spherical,
    read_multilabel,
)


def cases(n):
    # (label, callable); settings of the paper's Table 1 with |DS| replaced by n
    return [
        (
            "moa_spherical 5C-2A (K5 d2 V1500, z 1.54)",
            lambda: moa_spherical(5, 2, n, 1500, 0, target_cardinality=1.54),
        ),
        (
            "moa_spherical 5C-3A (K5 d3 V1500, z 1.37)",
            lambda: moa_spherical(5, 3, n, 1500, 0, target_cardinality=1.37),
        ),
        (
            "moa_spherical 3C-2A (K3 d2 V2000, z 1.76)",
            lambda: moa_spherical(3, 2, n, 2000, 0, target_cardinality=1.76),
        ),
        (
            "moa_spherical 2C-2A rotating (V1000, z 1.06)",
            lambda: moa_spherical(2, 2, n, 1000, 0, target_cardinality=1.06, rotate=True),
        ),
        (
            "read_multilabel WF (A21 L7, z 2.37)",
            lambda: read_multilabel("waveform", 7, 21, 2.37, n, target_cardinality=2.37),
        ),
        (
            "read_multilabel RT (A30 L8, z 2.54)",
            lambda: read_multilabel("random_tree", 8, 30, 2.54, n, target_cardinality=2.54),
        ),
        (
            "read_multilabel HP (A10 L5, z 1.68)",
            lambda: read_multilabel("hyperplane", 5, 10, 1.68, n, target_cardinality=1.68),
        ),
        (
            "read_multilabel RB (A80 L22, z 2.24)",
            lambda: read_multilabel("rbf", 22, 80, 2.24, n, target_cardinality=2.24),
        ),
        ("base WaveformGenerator.sample", lambda: WaveformGenerator().sample(n, 0)),
        (
            "base RandomTreeGenerator.sample",
            lambda: RandomTreeGenerator(random_state=0).sample(n, 0),
        ),
        (
            "base HyperplaneGenerator.sample",
            lambda: HyperplaneGenerator(random_state=0).sample(n, 0),
        ),
        (
            "base RandomRBFGenerator.sample (d80)",
            lambda: RandomRBFGenerator(random_state=0).sample(n, 0),
        ),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="instances per stream")
    parser.add_argument("--repeat", type=int, default=3, help="runs per generator")
    args = parser.parse_args(argv)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"# {args.n:,} instances, best/median of {args.repeat} runs; numpy {np.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}, {cpus} CPU(s)"
    )
    print(f"{'generator':<48} {'best s':>8} {'median s':>9}")
    worst = 0.0
    for label, fn in cases(args.n):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        worst = max(worst, min(times))
        print(f"{label:<48} {min(times):8.3f} {statistics.median(times):9.3f}")
    print(f"# slowest: {worst:.3f} s (target: < 10 s per 100,000-instance stream)")


if __name__ == "__main__":
    main()
