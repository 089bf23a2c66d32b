"""Benchmark suite: mlsom beside its peers and the BLAS floors, each ratio measured in one run.

    python benchmarks/suite.py [--quick] [--json out.json] [--only train,online,predict,memory]
                               [--repeats N] [--simd best|avx512f|avx2|baseline]

Setting unless stated: L = 7 labels, 10 x 10 maps (d = 10), A = 128 features, data from
``bench_online.make_stream``. Sections (each ratio's cases run in one process, best of a few
repeats with ``time.perf_counter``; on one thread mlsom and its floor run in turn, a b a b ..., so
that a slow spell of the shared machine falls on both; with two threads each runs its repeats in
a block after a pause, since a thread pool keeps spinning after a parallel call and would slow
the other's):

* ``train`` (1 and 2 threads): batch SOM training of one 10 x 10 map on 20,000 x 100 data for 10
  epochs. mlsom is ``SOMStreamClassifier(grid_size=10, n_epochs=10, max_epochs=10).fit(X, Y)``
  with Y a single all-ones label column (one map), on float64 X and on float32 X; peers: somoclu
  (compiled dense CPU batch kernel, hexagonal grid, float32), MiniSom ``train_batch`` (10 x n
  iterations; timed on one epoch and extrapolated only when the whole would pass 60 s),
  ``_baselines.numpy_batch_som`` (NumPy + BLAS); floor: 10 distance products X @ W.T alone.
  Ratios: mlsom / GEMM floor (target <= 2), somoclu / mlsom (target >= 10).
* ``online`` (1 thread): ``predict_stream`` over 100,000 instances after ``fit`` on 20,000
  (float64 and float32 X) against the floor of one BLAS matrix-vector product per instance over
  the model's neuron matrix (M x 128): (a) ``np.dot(W, x, out=o)`` in a Python loop less the
  per-call overhead of a 1 x 1 product, (b) dgemv / sgemv in a compiled loop
  (benchmarks/_floor.pyx, built at run time with Cython under the temporary directory; (a) is used
  when that fails). Ratio mlsom / floor, target <= 1.5. Peers on a prefix of the same stream:
  river binary relevance (``multioutput.PerOutputClassifier``) and classifier chain
  (``multioutput.ClassifierChain``), each over Hoeffding trees and over standardised logistic
  regression, all test-then-train (they see the labels: incremental upper bounds), warmed on a
  prefix of the training set first; mlsom's MINAS-BR; the NumPy per-instance loop
  (``_baselines.NumpyOnline``, predictions checked against mlsom's). Ratio peer / mlsom time per
  instance (target >= 50 against river BR with Hoeffding trees).
* ``predict`` (1 and 2 threads): frozen ``model.predict`` on 1,000,000 rows (float64 and
  float32), n_jobs = threads, against the GEMM floor X @ W.T over the same rows and neurons, in
  chunks of 4,096 rows. Ratio mlsom / floor, target <= 2 on 2 threads.
* ``memory`` (1 thread): resident memory of a 10,000,000-instance ``predict_stream`` in chunks of
  100,000 generated on the fly; VmRSS from /proc/self/status after each chunk; flat means growth
  (final - after the first chunk) < 20 MB.

``--quick`` runs fewer repeats, shorter peer prefixes, 250,000 rows for ``predict`` and 1,000,000
instances for ``memory`` (about 1 minute; the full suite takes about 3.5 on 2 cores).

Each section (and each thread count) runs in a subprocess whose environment sets
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and BLIS_NUM_THREADS to the thread count
and drops OPENBLAS_CORETYPE (as ``env -u OPENBLAS_CORETYPE`` would: a forced core type keeps
OpenBLAS off the best kernel for this processor); threadpoolctl's ``threadpool_info()`` is
recorded there and checked against the thread count (OpenMP reads OMP_NUM_THREADS once, when its
runtime loads, so a thread count is fixed per process). The machine is shared and noisy: compare
ratios, and rerun a suspicious one.

``--simd`` runs mlsom on one SIMD path (``mlsom._core.set_simd_level``; refused when the processor
lacks it) and its BLAS floors on the OpenBLAS kernel of the same instruction set
(``OPENBLAS_CORETYPE``: SkylakeX for AVX-512, Haswell for AVX2, Nehalem for the SSE2 baseline),
so that each path's ratios compare like with like. The default, ``best``, leaves both at the best
this processor has.

Peers (the ``bench`` extra): ``pip install threadpoolctl MiniSom river swig``, then
``CUDAHOME=/nonexistent pip install --no-build-isolation somoclu`` (built from source with
OpenMP; the suite checks that its compiled core is the one used). A missing peer is reported and
skipped. The JSON (``--json``, default benchmarks/results/suite[-quick].json) holds the machine
(CPU, cores, NumPy's build and BLAS configuration, thread pools, versions of every peer), every
case and every ratio.
"""

import argparse
import ast
import contextlib
import copy
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import math
import os
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

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


def load_make_stream():
    """``make_stream`` of bench_online.py (taken from the file alone if mlsom fails to import)."""
    try:
        from bench_online import make_stream

        return make_stream
    except Exception:
        tree = ast.parse((HERE / "bench_online.py").read_text())
        node = next(
            n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_stream"
        )
        ns = {"np": np}
        exec(compile(ast.Module([node], []), "bench_online.py", "exec"), ns)
        return ns["make_stream"]


make_stream = load_make_stream()


def stream_chunk(n, seed, L=L_LABELS, A=N_FEATURES):
    """n more instances of make_stream(..., seed=0)'s distribution (same label centres)."""
    centres = np.random.default_rng(0).normal(scale=3.0, size=(L, A))  # make_stream's first draw
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, L)) < 0.25).astype(np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    return (Y @ centres) / Y.sum(1, keepdims=True) + rng.normal(size=(n, A))


# SIMD paths of --simd: mlsom's level and the OpenBLAS core type of the same instruction set
SIMD_PATHS = {
    "best": (-1, None),
    "avx512f": (2, "SkylakeX"),
    "avx2": (1, "Haswell"),
    "baseline": (0, "Nehalem"),
}


def bench_env(threads, simd="best"):
    """Environment of a subprocess running on ``threads`` threads: OPENBLAS_CORETYPE dropped, or
    set to the kernel of the instruction set of the SIMD path asked for."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    core = SIMD_PATHS[simd][1]
    if core is not None:
        env["OPENBLAS_CORETYPE"] = core
    for var in THREAD_VARS:
        env[var] = str(threads)
    return env


def select_simd(simd):
    """Put mlsom on the SIMD path asked for; return its name (error if the CPU lacks it)."""
    from mlsom import _core

    level = SIMD_PATHS[simd][0]
    got = _core.set_simd_level(level)
    if level >= 0 and got != level:
        raise SystemExit(f"--simd {simd}: this processor's best path is {_core.simd_info()[1]}")
    return _core.simd_info()[0]


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
    """All kept neurons of all labels, one row each (M x A), C-contiguous."""
    return np.ascontiguousarray(np.concatenate([w for w in model.weights_ if w is not None]), dtype)


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


# --------------------------------------------------------------------------- train


def section_train(rec, opts):
    n, a, d, epochs = 20_000, 100, GRID, 10
    threads, repeats = rec.threads, opts.repeats
    rng = np.random.default_rng(0)
    X = np.ascontiguousarray(rng.normal(size=(n, a)) + rng.integers(0, 5, (n, 1)))
    X32 = X.astype(np.float32)
    init = X[rng.choice(n, d * d, replace=False)]
    Y1 = np.ones((n, 1), dtype=np.uint8)
    info = {"data": f"{n} x {a}", "map": f"{d} x {d}", "epochs": epochs}

    # mlsom, float64 and float32 X, each in turn with its floor: the 10 distance products alone
    for dt, Xd in ((np.float64, X), (np.float32, X32)):
        key, dname = f"mlsom_{dt.__name__}", dt.__name__
        W = np.ascontiguousarray(init, dtype=dt)
        buf = np.empty((n, d * d), dtype=dt)

        def run_gemm(Xd=Xd, W=W, buf=buf):
            t0 = time.perf_counter()
            for _ in range(epochs):
                np.dot(Xd, W.T, out=buf)
            return time.perf_counter() - t0

        gemm_note = f"{epochs} x ({n}x{a} @ {a}x{d * d})"
        gemm_note += ", run in turn with mlsom fit" if threads == 1 else ""
        if mlsom is None:
            rec.failed(key, "mlsom fit", dname, mlsom_missing(), "ms")
            best, runs = best_of(run_gemm, max(repeats, 5))
            rec.case(f"gemm_{dname}", "GEMM floor", dname, best * 1e3, "ms", note=gemm_note)
            continue
        seen = {}

        def run(Xd=Xd, seen=seen):
            m = mlsom.SOMStreamClassifier(
                grid_size=d, n_epochs=epochs, max_epochs=epochs, random_state=0, n_jobs=threads
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mlsom.ConvergenceWarning)
                t0 = time.perf_counter()
                m.fit(Xd, Y1)
                dt_s = time.perf_counter() - t0
            seen.update(n_iter=int(m.n_iter_[0]), model_dtype=model_dtype(m))
            return dt_s

        try:
            best, runs = interleaved({"mlsom": run, "gemm": run_gemm}, max(repeats, 5), threads)
            note = f"n_iter_={seen['n_iter']}, model {seen['model_dtype']}"
            rec.case(
                key, "mlsom fit", dname, best["mlsom"] * 1e3, "ms", runs=runs, note=note, **seen
            )
        except Exception as exc:
            rec.failed(key, "mlsom fit", dname, exc, "ms")
            best, runs = {"gemm": best_of(run_gemm, max(repeats, 5))[0]}, None
        rec.case(f"gemm_{dname}", "GEMM floor", dname, best["gemm"] * 1e3, "ms", note=gemm_note)
        pause()

    # NumPy + BLAS batch SOM
    from _baselines import numpy_batch_som

    def run():
        t0 = time.perf_counter()
        numpy_batch_som(X, init, epochs)
        return time.perf_counter() - t0

    best, runs = best_of(run, repeats)
    rec.case("numpy_batch", "NumPy+BLAS batch SOM", "float64", best * 1e3, "ms", runs=runs)
    pause()

    # somoclu: compiled dense CPU kernel (kerneltype 0), batch, hexagonal, float32 only
    try:
        import somoclu
        import somoclu.train as somoclu_train

        core = sys.modules.get("_somoclu_wrap")
        core_file = getattr(core, "__file__", None)
        if getattr(somoclu_train, "wrap_train", None) is None or not core_file:
            raise RuntimeError("somoclu's compiled core did not import (pure-Python fallback)")
        init32 = init.astype(np.float32)
        check = {}

        def run():
            som = somoclu.Somoclu(
                d,
                d,
                initialcodebook=init32.copy(),
                kerneltype=0,
                maptype="planar",
                gridtype="hexagonal",
                neighborhood="bubble",
                compactsupport=True,
            )
            t0 = time.perf_counter()
            som.train(X32, epochs=epochs, radiuscooling="linear", scalecooling="linear")
            dt_s = time.perf_counter() - t0
            moved = float(np.abs(som.codebook.reshape(d * d, a) - init32).max())
            check.update(codebook_moved=moved, bmus_set=bool(np.any(som.bmus)))
            return dt_s

        best, runs = best_of(run, repeats, budget_s=8)
        if not (check["codebook_moved"] > 0 and check["bmus_set"]):
            raise RuntimeError(f"somoclu trained nothing: {check}")
        rec.case(
            "somoclu",
            "somoclu train (dense CPU, batch)",
            "float32",
            best * 1e3,
            "ms",
            runs=runs,
            core=core_file,
            note=f"compiled core {Path(core_file).name}",
            **check,
        )
    except Exception as exc:
        rec.failed("somoclu", "somoclu train (dense CPU, batch)", "float32", exc, "ms")
    pause()

    # MiniSom train_batch: 10 epochs = 10 n iterations, in order
    try:
        from minisom import MiniSom

        def make():
            som = MiniSom(
                d,
                d,
                a,
                sigma=d / 2,
                learning_rate=0.5,
                neighborhood_function="bubble",
                topology="hexagonal",
                random_seed=0,
            )
            som.random_weights_init(X)
            return som

        som = make()
        t0 = time.perf_counter()
        som.train_batch(X, n)  # one epoch
        one = time.perf_counter() - t0
        if one * epochs > 60:
            value, note = one * epochs, f"extrapolated from 1 of {epochs} epochs ({one:.1f} s)"
        else:
            som = make()
            t0 = time.perf_counter()
            som.train_batch(X, epochs * n)
            value, note = time.perf_counter() - t0, "measured, one run"
        rec.case("minisom", "MiniSom train_batch", "float64", value * 1e3, "ms", note=note)
    except Exception as exc:
        rec.failed("minisom", "MiniSom train_batch", "float64", exc, "ms")

    for dt in ("float64", "float32"):
        rec.ratio("train: mlsom / GEMM floor", f"mlsom_{dt}", f"gemm_{dt}", "<= 2", dt)
        rec.ratio("train: somoclu / mlsom", "somoclu", f"mlsom_{dt}", ">= 10", dt)
    rec.ratio("train: mlsom / NumPy batch SOM", "mlsom_float64", "numpy_batch", "", "float64")
    rec.ratio("train: MiniSom / mlsom", "minisom", "mlsom_float64", "", "float64")
    return info


# --------------------------------------------------------------------------- online


def build_floor():
    """Compile benchmarks/_floor.pyx (cached under the temporary directory) and import it."""
    src = HERE / "_floor.pyx"
    key = f"{src.read_text()}|{sys.version}|{np.__version__}".encode()
    tag = hashlib.sha256(key).hexdigest()[:12]
    build = Path(tempfile.gettempdir()) / f"mlsom-bench-floor-{tag}"
    built = list(build.glob("_floor*.so")) + list(build.glob("_floor*.pyd"))
    if not built:
        build.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, build / "_floor.pyx")
        proc = subprocess.run(
            [sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-q", "-3", "_floor.pyx"],
            cwd=build,
            capture_output=True,
            text=True,
        )
        built = list(build.glob("_floor*.so")) + list(build.glob("_floor*.pyd"))
        if proc.returncode != 0 or not built:
            raise RuntimeError(f"cythonize failed: {(proc.stderr or proc.stdout)[-800:]}")
    spec = importlib.util.spec_from_file_location("_floor", built[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, str(built[0])


def river_models(L):
    from river import linear_model, multioutput, preprocessing, tree

    order = list(range(L))
    return {
        "river BR HoeffdingTree": lambda: multioutput.PerOutputClassifier(
            tree.HoeffdingTreeClassifier()
        ),
        "river BR LogisticRegression": lambda: (
            preprocessing.StandardScaler()
            | multioutput.PerOutputClassifier(linear_model.LogisticRegression())
        ),
        "river CC HoeffdingTree": lambda: multioutput.ClassifierChain(
            tree.HoeffdingTreeClassifier(), order=order
        ),
        "river CC LogisticRegression": lambda: (
            preprocessing.StandardScaler()
            | multioutput.ClassifierChain(linear_model.LogisticRegression(), order=order)
        ),
    }


def section_online(rec, opts):
    q, repeats = opts.quick, opts.repeats
    X, Y = make_stream(N_TRAIN + N_STREAM)
    Xtr, Ytr, Xs, Ys = X[:N_TRAIN], Y[:N_TRAIN], X[N_TRAIN:], Y[N_TRAIN:]
    n_loop = 10_000 if q else 20_000
    info = {"n_stream": N_STREAM, "numpy_loop_instances": n_loop}
    try:
        floor_mod, floor_path = build_floor()
        info["compiled_floor"] = floor_path
    except Exception as exc:
        floor_mod = None
        info["compiled_floor_error"] = f"{exc}"
        print(f"  compiled floor unavailable, using the NumPy loop less overhead: {exc}")

    out64 = model64 = None
    for dt in (np.float64, np.float32):
        dname = dt.__name__
        Xd = np.ascontiguousarray(Xs, dtype=dt)
        model = None
        if mlsom is None:
            rec.failed(f"mlsom_{dname}", "mlsom predict_stream", dname, mlsom_missing())
        else:
            try:
                model, fit_s = fitted_model(dt, opts.cache, 1)
                if fit_s is not None:
                    info[f"fit_s_{dname}"] = fit_s
            except Exception as exc:
                rec.failed(f"mlsom_{dname}", "mlsom predict_stream", dname, exc, "us/inst")
                model = None

        # the floor's neuron matrix: the model's (random rows of the stream if mlsom failed)
        if model is not None:
            W = neuron_matrix(model, dt)
        else:
            W = np.ascontiguousarray(Xtr[:FALLBACK_M], dtype=dt)
        M = W.shape[0]
        o = np.empty(M, dtype=dt)

        # (b) dgemv / sgemv in a compiled loop over the whole stream, run in turn with mlsom
        runs = {}
        if floor_mod is not None:
            fn = floor_mod.gemv_loop

            def run_blas(fn=fn, W=W, Xd=Xd, o=o):
                t0 = time.perf_counter()
                fn(W, Xd, o)
                return time.perf_counter() - t0

            runs["blas"] = run_blas
        got = {}
        if model is not None:

            def run(model=model, Xd=Xd, got=got):
                m = copy.deepcopy(model)
                t0 = time.perf_counter()
                got["out"] = m.predict_stream(Xd)
                return time.perf_counter() - t0

            runs["mlsom"] = run
        best, rounds = interleaved(runs, max(repeats, 3), 1, budget_s=20) if runs else ({}, 0)
        if model is not None:
            mdt = model_dtype(model)
            rec.case(
                f"mlsom_{dname}",
                "mlsom predict_stream",
                dname,
                best["mlsom"] / len(Xd) * 1e6,
                "us/inst",
                runs=rounds,
                model_dtype=mdt,
                neurons=int(sum(w.shape[0] for w in model.weights_ if w is not None)),
                note=f"{len(Xd):,} instances, model {mdt}",
            )
            if dt is np.float64:
                out64, model64 = got["out"], model
        floor_key = f"floor_numpy_{dname}"
        if "blas" in best:
            routine = "dgemv" if dt is np.float64 else "sgemv"
            rec.case(
                f"floor_blas_{dname}",
                f"floor (b): compiled {routine} loop",
                dname,
                best["blas"] / len(Xd) * 1e6,
                "us/inst",
                note=f"M={M}, {len(Xd):,} instances, run in turn with mlsom predict_stream",
            )
            floor_key = f"floor_blas_{dname}"
        pause()

        # (a) np.dot in a Python loop, less the overhead of a 1 x 1 product
        Xl = Xd[:n_loop]
        w1, X1, o1 = np.ones((1, 1), dt), np.ones((n_loop, 1), dt), np.empty(1, dt)

        def run_dot(W=W, Xl=Xl, o=o):
            t0 = time.perf_counter()
            for x in Xl:
                np.dot(W, x, out=o)
            return time.perf_counter() - t0

        def run_ovh(w1=w1, X1=X1, o1=o1):
            t0 = time.perf_counter()
            for x in X1:
                np.dot(w1, x, out=o1)
            return time.perf_counter() - t0

        t_dot, _ = best_of(run_dot, max(repeats, 3))
        t_ovh, _ = best_of(run_ovh, max(repeats, 3))
        per_a = (t_dot - t_ovh) / n_loop * 1e6
        rec.case(
            f"floor_numpy_{dname}",
            "floor (a): np.dot loop - overhead",
            dname,
            per_a,
            "us/inst",
            note=f"M={M}; raw {t_dot / n_loop * 1e6:.2f}, overhead {t_ovh / n_loop * 1e6:.2f}",
        )
        pause()
        note = ""
        if model is not None and model_dtype(model) != dname:
            note = f"the model is {model_dtype(model)}: float32 X was not kept as float32"
        rec.ratio("online: mlsom / gemv floor", f"mlsom_{dname}", floor_key, "<= 1.5", dname, note)
        if floor_key != f"floor_numpy_{dname}":
            rec.ratio(
                "online: mlsom / np.dot floor (a)",
                f"mlsom_{dname}",
                f"floor_numpy_{dname}",
                "",
                dname,
            )

    # peers, float64, on a prefix of the same stream
    n_warm = 500 if q else 2000
    prefix = {"HoeffdingTree": 1000 if q else 3000, "LogisticRegression": 2000 if q else 5000}
    info["river_warm_instances"] = n_warm
    try:
        models = river_models(Y.shape[1])
        warm_x = [dict(enumerate(r.tolist())) for r in Xtr[:n_warm]]
        warm_y = [{j: bool(v) for j, v in enumerate(r)} for r in Ytr[:n_warm]]
        for name, make in models.items():
            n = prefix[name.split()[-1]]
            xs = [dict(enumerate(r.tolist())) for r in Xs[:n]]
            ys = [{j: bool(v) for j, v in enumerate(r)} for r in Ys[:n]]
            m = make()
            for x, y in zip(warm_x, warm_y, strict=True):
                m.learn_one(x, y)
            hits = 0
            t0 = time.perf_counter()
            for x, y in zip(xs, ys, strict=True):
                p = m.predict_one(x)
                m.learn_one(x, y)
                hits += all(bool(p.get(j, False)) == v for j, v in y.items())
            dt_s = time.perf_counter() - t0
            key = "river_" + "".join(w[0] for w in name.split()[1:]).lower()
            rec.case(
                key,
                name + " (test-then-train)",
                "float64",
                dt_s / n * 1e6,
                "us/inst",
                instances=n,
                per_s=n / dt_s,
                subset_accuracy=hits / n,
                note=f"{n:,} instances, {n / dt_s:,.0f}/s, subset acc {hits / n:.3f}",
            )
            target = ">= 50" if name == "river BR HoeffdingTree" else ""
            rec.ratio(f"online: {name} / mlsom", key, "mlsom_float64", target, "float64")
            pause()
    except Exception as exc:
        rec.failed("river", "river peers", "float64", exc, "us/inst")

    try:
        from mlsom.baselines import MINASBR

        n = 5000 if q else 20_000
        mb = MINASBR(random_state=0).fit(Xtr, Ytr)
        t0 = time.perf_counter()
        mb.predict_stream(Xs[:n])
        dt_s = time.perf_counter() - t0
        note = f"{n:,} instances, {n / dt_s:,.0f}/s (fit excluded)"
        rec.case(
            "minasbr",
            "MINAS-BR predict_stream",
            "float64",
            dt_s / n * 1e6,
            "us/inst",
            instances=n,
            note=note,
        )
        rec.ratio("online: MINAS-BR / mlsom", "minasbr", "mlsom_float64", "", "float64")
    except Exception as exc:
        rec.failed("minasbr", "MINAS-BR predict_stream", "float64", exc, "us/inst")
    pause()

    try:
        from _baselines import NumpyOnline

        if model64 is None:
            raise RuntimeError("needs a fitted mlsom model")
        n = 1000 if q else 3000
        nb = NumpyOnline(copy.deepcopy(model64))
        t0 = time.perf_counter()
        out_np = nb.run(Xs[:n])
        dt_s = time.perf_counter() - t0
        same = bool(np.array_equal(out_np, out64[:n]))
        rec.case(
            "numpy_online",
            "NumPy per-instance loop",
            "float64",
            dt_s / n * 1e6,
            "us/inst",
            instances=n,
            same_predictions=same,
            note=f"{n:,} instances, same predictions as mlsom: {same}",
        )
        rec.ratio("online: NumPy loop / mlsom", "numpy_online", "mlsom_float64", "", "float64")
    except Exception as exc:
        rec.failed("numpy_online", "NumPy per-instance loop", "float64", exc, "us/inst")
    return info


# --------------------------------------------------------------------------- predict


def section_predict(rec, opts):
    threads, repeats = rec.threads, opts.repeats
    n_rows, chunk = (250_000 if opts.quick else 1_000_000), 4096
    X64, _ = make_stream(n_rows)
    info = {"rows": n_rows, "gemm_chunk_rows": chunk}
    for dt in (np.float64, np.float32):
        dname = dt.__name__
        Xd = X64 if dt is np.float64 else X64.astype(np.float32)
        model = None
        if mlsom is None:
            rec.failed(f"mlsom_{dname}", "mlsom predict", dname, mlsom_missing(), "s")
        else:
            try:
                model, _ = fitted_model(dt, opts.cache, threads)
                model.set_params(n_jobs=threads)
            except Exception as exc:
                rec.failed(f"mlsom_{dname}", "mlsom predict (frozen)", dname, exc, "s")
                model = None
        W = (
            neuron_matrix(model, dt)
            if model is not None
            else np.ascontiguousarray(X64[:FALLBACK_M], dtype=dt)
        )
        buf = np.empty((chunk, W.shape[0]), dtype=dt)

        def run_gemm(Xd=Xd, W=W, buf=buf):
            t0 = time.perf_counter()
            for lo in range(0, len(Xd), chunk):
                xc = Xd[lo : lo + chunk]
                np.dot(xc, W.T, out=buf[: len(xc)])
            return time.perf_counter() - t0

        best = None
        if model is not None:

            def run(model=model, Xd=Xd):
                t0 = time.perf_counter()
                model.predict(Xd)
                return time.perf_counter() - t0

            try:
                best, runs = interleaved(
                    {"mlsom": run, "gemm": run_gemm}, repeats, threads, budget_s=30
                )
                mdt = model_dtype(model)
                rec.case(
                    f"mlsom_{dname}",
                    "mlsom predict (frozen)",
                    dname,
                    best["mlsom"],
                    "s",
                    runs=runs,
                    rows_per_s=n_rows / best["mlsom"],
                    model_dtype=mdt,
                    note=f"{n_rows:,} rows, {n_rows / best['mlsom']:,.0f} rows/s, model {mdt}",
                )
            except Exception as exc:
                rec.failed(f"mlsom_{dname}", "mlsom predict (frozen)", dname, exc, "s")
                best = None
        if best is None:
            best = {"gemm": best_of(run_gemm, repeats, budget_s=15)[0]}
        rec.case(
            f"gemm_{dname}",
            "GEMM floor X @ W.T",
            dname,
            best["gemm"],
            "s",
            note=f"M={W.shape[0]}, chunks of {chunk} rows, {n_rows / best['gemm']:,.0f} rows/s"
            + (", run in turn with mlsom predict" if threads == 1 else ""),
        )
        target = "<= 2" if threads >= 2 else ""
        rec.ratio("predict: mlsom / GEMM floor", f"mlsom_{dname}", f"gemm_{dname}", target, dname)
        pause()
        del Xd
    return info


# --------------------------------------------------------------------------- memory


def vm_status():
    out = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, val = line.split(":", 1)
                out[key] = int(val.split()[0]) / 1024  # kB -> MB
    return out


def section_memory(rec, opts):
    n_total, chunk = (1_000_000 if opts.quick else 10_000_000), 100_000
    info = {"instances": n_total, "chunk": chunk, "dtype": "float64"}
    if mlsom is None:
        rec.failed("rss_growth", "predict_stream memory", "float64", mlsom_missing())
        return info
    model, _ = fitted_model(np.float64, opts.cache, 1)
    info["rss_before_mb"] = vm_status().get("VmRSS")
    rss, times = [], []
    for k in range(n_total // chunk):
        X = stream_chunk(chunk, seed=1000 + k)
        t0 = time.perf_counter()
        model.predict_stream(X)
        times.append(time.perf_counter() - t0)
        rss.append(vm_status().get("VmRSS", float("nan")))
        del X
    peak = vm_status().get("VmHWM")
    growth = rss[-1] - rss[0]
    info.update(rss_mb=rss, chunk_seconds=times)
    unit = "MB"
    rec.case("rss_first", "RSS after the first chunk", "float64", rss[0], unit)
    rec.case(
        "rss_max",
        "RSS max over chunks",
        "float64",
        max(rss),
        unit,
        vm_hwm_mb=peak,
        note=f"VmHWM {peak:.1f} MB",
    )
    rec.case("rss_final", "RSS after the last chunk", "float64", rss[-1], unit)
    rec.case(
        "rss_growth",
        "RSS growth (final - first)",
        "float64",
        growth,
        unit,
        flat=bool(growth < 20),
        note=f"flat (< 20 MB): {growth < 20}",
    )
    first, last = np.median(times[:5]), np.median(times[-5:])
    rec.case("us_first", "per instance, first 5 chunks", "float64", first / chunk * 1e6, "us/inst")
    rec.case(
        "us_last",
        "per instance, last 5 chunks",
        "float64",
        last / chunk * 1e6,
        "us/inst",
        note=f"{n_total:,} instances in all",
    )
    rec.ratio("memory: per-instance time last / first chunks", "us_last", "us_first", "", "float64")
    return info


SECTIONS = {
    "train": (section_train, (1, 2)),
    "online": (section_online, (1,)),
    "predict": (section_predict, (1, 2)),
    "memory": (section_memory, (1,)),
}


# --------------------------------------------------------------------------- driver


def worker(opts):
    fn = SECTIONS[opts.worker][0]
    rec = Recorder(opts.worker, opts.threads)
    simd_path = select_simd(opts.simd) if MLSOM_ERROR is None else None
    t0 = time.perf_counter()
    err = None
    try:
        info = fn(rec, opts)
    except Exception as exc:  # record what was measured so far
        info, err = {}, f"{type(exc).__name__}: {exc}"
        print(f"  [{opts.worker} x{opts.threads}] failed: {err}", flush=True)
    result = {
        "section": opts.worker,
        "threads": opts.threads,
        "simd": simd_path,
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "info": info,
        "error": err,
        "thread_check": thread_check(opts.threads),
        "mlsom_error": MLSOM_ERROR,
        "cases": rec.cases,
        "ratios": rec.ratios,
        "wall_s": time.perf_counter() - t0,
    }
    tc = result["thread_check"]
    if tc["ok"] is False:
        bad = [(p["internal_api"], p["num_threads"]) for p in tc["pools"]]
        print(f"  WARNING: thread pools not at {opts.threads}: {bad}", flush=True)
    Path(opts.result).write_text(json.dumps(result, default=str))


def fmt(v, digits=4):
    if v is None:
        return "n/a"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return f"{v:,.{digits}g}"


def print_tables(results, out=sys.stdout):
    print("\n## Cases\n", file=out)
    print("| section | case | threads | dtype | value | unit | note |", file=out)
    print("|---|---|---|---|---|---|---|", file=out)
    for r in results:
        for c in r["cases"].values():
            note = c.get("error") or c.get("note") or ""
            print(
                f"| {c['section']} | {c['case']} | {c['threads']} | {c['dtype']} | "
                f"{fmt(c['value'])} | {c['unit']} | {note} |",
                file=out,
            )
    print("\n## Ratios (time / time)\n", file=out)
    print("| ratio | threads | dtype | value | target | met | note |", file=out)
    print("|---|---|---|---|---|---|---|", file=out)
    for r in results:
        for q in r["ratios"]:
            met = {True: "yes", False: "NO", None: ""}[q["met"]]
            print(
                f"| {q['name']} | {q['threads']} | {q['dtype']} | {fmt(q['value'], 3)} | "
                f"{q['target']} | {met} | {q['note']} |",
                file=out,
            )
    busy = [(r["section"], r["threads"], r.get("cpu_busy_before")) for r in results]
    print(
        "\nCPUs busy with other work just before each section: "
        + ", ".join(f"{s} x{t}: {'n/a' if b is None else f'{b:.0%}'}" for s, t, b in busy),
        file=out,
    )
    checks = [(r["section"], r["threads"], r["thread_check"]["ok"]) for r in results]
    print(
        "\nthread counts held (threadpoolctl): "
        + ", ".join(f"{s} x{t}: {ok}" for s, t, ok in checks),
        file=out,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="about 3 minutes instead of 10")
    ap.add_argument("--json", help="output file (default benchmarks/results/suite[-quick].json)")
    ap.add_argument("--only", help="comma-separated sections: " + ",".join(SECTIONS))
    ap.add_argument("--repeats", type=int, help="timed runs per fast case (default 5, quick 3)")
    ap.add_argument(
        "--simd",
        choices=list(SIMD_PATHS),
        default="best",
        help="mlsom's SIMD path, with BLAS floors on the same instruction set (default best)",
    )
    ap.add_argument("--worker", choices=list(SECTIONS), help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.repeats is None:
        opts.repeats = 3 if opts.quick else 5
    if opts.worker:
        return worker(opts)

    only = opts.only.split(",") if opts.only else list(SECTIONS)
    unknown = set(only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections {sorted(unknown)}; choose from {list(SECTIONS)}")
    suffix = ("-quick" if opts.quick else "") + ("" if opts.simd == "best" else f"-{opts.simd}")
    out_json = Path(opts.json or HERE / "results" / f"suite{suffix}.json")
    select_simd(opts.simd)  # refuse a path this processor lacks before any work
    t_start = time.perf_counter()
    machine = machine_info()
    print(
        f"{machine['cpu_model']}, {machine['cpu_count']} cores; Python {machine['python']}; "
        + ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v)
    )
    if MLSOM_ERROR:
        print(f"mlsom does not import: {MLSOM_ERROR}")
    results = []
    with tempfile.TemporaryDirectory(prefix="mlsom-suite-") as tmp:
        for section in only:
            for threads in SECTIONS[section][1]:
                busy = cpu_busy()
                print(f"\n== {section}, {threads} thread(s) ==", flush=True)
                if busy is not None and busy > 0.25:
                    print(f"  note: the CPUs were {busy:.0%} busy with other work just before")
                res_file = Path(tmp) / f"{section}-{threads}.json"
                cmd = [sys.executable, __file__, "--worker", section, "--threads", str(threads)]
                cmd += ["--repeats", str(opts.repeats), "--cache", tmp, "--result", str(res_file)]
                cmd += ["--simd", opts.simd]
                cmd += ["--quick"] if opts.quick else []
                try:
                    proc = subprocess.run(cmd, env=bench_env(threads, opts.simd), timeout=1800)
                    rc = proc.returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                if res_file.exists():
                    results.append(json.loads(res_file.read_text()))
                else:
                    results.append(
                        dict(
                            section=section,
                            threads=threads,
                            error=f"worker exited with {rc} and no result",
                            cases={},
                            ratios=[],
                            thread_check={"ok": None},
                        )
                    )
                    print(f"  worker exited with {rc} and no result")
                results[-1]["cpu_busy_before"] = busy
    machine["load_average_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print_tables(results)
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "quick": opts.quick,
        "repeats": opts.repeats,
        "simd": opts.simd,
        "setting": {"L": L_LABELS, "d": GRID, "A": N_FEATURES, "n_train": N_TRAIN},
        "wall_s": time.perf_counter() - t_start,
        "machine": machine,
        "results": results,
        "ratios": [q for r in results for q in r["ratios"]],
    }
    out_json.parent.mkdir(parents=True, exist_ok=True)
    out_json.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwall time {report['wall_s']:.0f} s; JSON written to {out_json}")


if __name__ == "__main__":
    main()
