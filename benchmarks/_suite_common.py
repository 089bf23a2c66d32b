"""The benchmark suite's shared parts: the setting, the environment of a run (threads, SIMD path,
BLAS core type), timing, the machine's description, fitted models, the recorder of cases and
ratios. See suite.py."""

import contextlib
import importlib.metadata
import importlib.util
import io
import math
import os
import pickle
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from streams import make_stream  # noqa: E402

try:
    import mlsom

    MLSOM_ERROR = None
except Exception as exc:  # mid-rebuild: the peers' parts still run
    mlsom = None
    MLSOM_ERROR = f"{type(exc).__name__}: {exc}"

L_LABELS, GRID, N_FEATURES = 7, 10, 128
N_TRAIN, N_STREAM = 20_000, 100_000
FALLBACK_M = 534  # neurons such a model keeps: the floors' size when mlsom cannot run
PEERS = [
    "mlsom",
    "numpy",
    "scipy",
    "threadpoolctl",
    "Cython",
    "somoclu",
    "MiniSom",
    "river",
    "scikit-learn",
    "swig",
]
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
PAUSE_S = 0.3  # between cases: idle BLAS / OpenMP threads stop spinning


# --------------------------------------------------------------------------- shared helpers


# SIMD paths of --simd (mlsom._testing's names) and the OpenBLAS core type of the same
# instruction set
SIMD_PATHS = {"best": None, "avx512f": "SkylakeX", "avx2": "Haswell", "baseline": "Nehalem"}


def bench_env(threads, simd="best"):
    """Environment of a subprocess running on ``threads`` threads: OPENBLAS_CORETYPE dropped, or
    set to the kernel of the instruction set of the SIMD path asked for."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    core = SIMD_PATHS[simd]
    if core is not None:
        env["OPENBLAS_CORETYPE"] = core
    for var in THREAD_VARS:
        env[var] = str(threads)
    return env


def select_simd(simd):
    """Put mlsom on the SIMD path asked for; return its name (error if the CPU lacks it)."""
    from mlsom import _core, _testing

    try:
        _testing.select(simd=simd)  # for the rest of this process
    except ValueError:
        best = _core.simd_info()[1]
        raise SystemExit(f"--simd {simd}: this processor's best path is {best}") from None
    return _core.simd_info()[0]


def speed_options(description, repeats, n, extra=()):
    """The options of an on/off speed comparison (``--repeats``, ``--n``, ``--simd``, ``--json``
    and ``extra``: (flag, type, default) triples), parsed; mlsom put on the SIMD path asked for,
    its name printed. Returns (options, the path's name)."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--n", type=int, default=n)
    for flag, kind, default in extra:
        ap.add_argument(flag, type=kind, default=default)
    ap.add_argument(
        "--simd", default="best", help="the SIMD path: best (default), avx512f, avx2, baseline"
    )
    ap.add_argument("--json")
    opts = ap.parse_args()
    simd = select_simd(opts.simd)
    print(f"SIMD path {simd}")
    return opts, simd


def best_of(run, repeats, budget_s=None):
    """Smallest of up to ``repeats`` timings (``run()`` returns seconds); stop past ``budget_s``."""
    best, spent, runs = math.inf, 0.0, 0
    for _ in range(repeats):
        dt = run()
        best, spent, runs = min(best, dt), spent + dt, runs + 1
        if budget_s is not None and spent > budget_s:
            break
    return best, runs


def interleaved(runs, repeats, threads, budget_s=None):
    """Smallest timing of each case of ``runs`` (name -> ``run()`` returning seconds).

    On one thread the cases run in turn, a b a b ..., so that a slow spell of the shared machine
    falls on every case of a ratio alike (stop past ``budget_s`` in all). With several threads
    each case runs its repeats in a block, after a pause: the threads of an OpenMP or BLAS pool
    keep spinning for a while after a parallel call and would slow the other pool's case.
    Returns ({name: best}, rounds)."""
    best = {k: math.inf for k in runs}
    if threads > 1:
        rounds = 0
        for i, (k, run) in enumerate(runs.items()):
            if i:
                pause()
            best[k], rounds = best_of(run, repeats, budget_s)
        return best, rounds
    spent, rounds = 0.0, 0
    for _ in range(repeats):
        for k, run in runs.items():
            dt = run()
            best[k] = min(best[k], dt)
            spent += dt
        rounds += 1
        if budget_s is not None and spent > budget_s:
            break
    return best, rounds


def mlsom_missing():
    return RuntimeError(f"mlsom does not import ({MLSOM_ERROR})")


def pause():
    time.sleep(PAUSE_S)


def thread_check(threads):
    """threadpoolctl's view of every BLAS and OpenMP pool, and whether all use ``threads``."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"ok": None, "note": "threadpoolctl not installed", "pools": []}
    keys = ("user_api", "internal_api", "version", "num_threads", "architecture", "filepath")
    pools = [{k: p.get(k) for k in keys} for p in threadpool_info()]
    return {"ok": all(p["num_threads"] == threads for p in pools), "pools": pools}


def cpu_busy(interval=0.5):
    """Share of the machine's CPU time not idle over ``interval`` s (other work, shared machine)."""

    def sample():
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(interval)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 1 - (idle1 - idle0) / max(total1 - total0, 1)


def versions():
    out = {}
    for name in PEERS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def mlsom_config():
    if mlsom is None:
        return {"error": MLSOM_ERROR}
    buf = io.StringIO()
    try:
        mlsom.show_config(file=buf)
    except Exception as exc:
        return {"error": repr(exc)}
    return dict(
        (k.strip(), v.strip()) for k, v in (ln.split(":", 1) for ln in buf.getvalue().splitlines())
    )


def machine_info():
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        numpy_config = np.show_config(mode="dicts")
    except TypeError:  # NumPy < 1.26 prints only
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            np.show_config()
        numpy_config = buf.getvalue()
    return {
        "cpu_model": cpu,
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "load_average_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS", "OMP_", "MKL"))},
        "versions": versions(),
        "mlsom_config": mlsom_config(),
        "numpy_config": numpy_config,
    }


def fitted_model(dtype, cache, threads):
    """The L = 7, d = 10, A = 128 model fitted on make_stream's first 20,000 rows (pickled once)."""
    path = Path(cache) / f"model_{np.dtype(dtype).name}.pkl" if cache else None
    if path is not None and path.exists():
        with open(path, "rb") as f:
            return pickle.load(f), None
    X, Y = make_stream(N_TRAIN + N_STREAM)
    model = mlsom.SOMStreamClassifier(grid_size=GRID, random_state=0, n_jobs=threads)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
        model.fit(X[:N_TRAIN].astype(dtype), Y[:N_TRAIN])
    fit_s = time.perf_counter() - t0
    if path is not None:
        with open(path, "wb") as f:
            pickle.dump(model, f)
    return model, fit_s


def neuron_matrix(model, dtype):
    """All kept neurons of all labels, one row each (M x A), C-contiguous, starting on a 64-byte
    boundary: the floors' best case. (NumPy aligns an array to 16 bytes only; a matrix-vector
    product over a (527, 128) float32 matrix one row of 512 bytes apart took 4.1 us per call
    when the matrix started on a cache line and 4.9-5.3 us when it did not, an OpenBLAS sgemv
    run with OPENBLAS_CORETYPE=Haswell on the 2-core Xeon: a floor that moved by a quarter with
    where the allocator put it.)"""
    W = np.concatenate([w for w in model.weights_ if w is not None]).astype(dtype, copy=False)
    return aligned_copy(W)


def aligned_copy(a, alignment=64):
    """A C-contiguous copy of ``a`` whose first element lies on an ``alignment``-byte boundary."""
    a = np.asarray(a)
    buf = np.empty(a.nbytes + alignment, dtype=np.uint8)
    start = (-buf.ctypes.data) % alignment
    out = buf[start : start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def model_dtype(model):
    return str(next(w for w in model.weights_ if w is not None).dtype)


class Recorder:
    """Cases and ratios of one worker, echoed as they come."""

    def __init__(self, section, threads):
        self.section, self.threads = section, threads
        self.cases, self.ratios = {}, []

    def case(self, key, label, dtype, value, unit, **detail):
        self.cases[key] = dict(
            section=self.section,
            case=label,
            threads=self.threads,
            dtype=dtype,
            value=value,
            unit=unit,
            **detail,
        )
        shown = "error" if value is None else f"{value:,.4g} {unit}"
        extra = detail.get("note") or detail.get("error") or ""
        print(f"  [{self.section} x{self.threads}] {label} ({dtype}): {shown}  {extra}", flush=True)

    def failed(self, key, label, dtype, exc, unit=""):
        self.case(key, label, dtype, None, unit, error=f"{type(exc).__name__}: {exc}")

    def value(self, key):
        c = self.cases.get(key)
        return None if c is None else c["value"]

    def ratio(self, name, num, den, target, dtype, note=""):
        a, b = self.value(num), self.value(den)
        value = a / b if a is not None and b not in (None, 0) else None
        met = None
        if value is not None and target:
            op, bound = target.split()
            met = value <= float(bound) if op == "<=" else value >= float(bound)
        self.ratios.append(
            dict(
                name=name,
                section=self.section,
                threads=self.threads,
                dtype=dtype,
                numerator=num,
                denominator=den,
                value=value,
                target=target,
                met=met,
                note=note,
            )
        )
