"""The suite's training section: mlsom's batch training against the GEMM floor and its peers."""

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _suite_common import (
    GRID,
    best_of,
    interleaved,
    mlsom,
    mlsom_missing,
    model_dtype,
    pause,
)
from streams import training_data


def section_train(rec, opts):
    n, a, d, epochs = 20_000, 100, GRID, 10
    threads, repeats = rec.threads, opts.repeats
    rng = np.random.default_rng(0)
    X = training_data(rng, n, a)
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
