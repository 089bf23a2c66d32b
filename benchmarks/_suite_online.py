"""The suite's online section: the per-instance phase against the gemv floor, River's learners,
MINAS-BR and a NumPy loop."""

import copy
import hashlib
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _suite_common import (
    FALLBACK_M,
    HERE,
    N_STREAM,
    N_TRAIN,
    aligned_copy,
    best_of,
    fitted_model,
    interleaved,
    mlsom,
    mlsom_missing,
    model_dtype,
    neuron_matrix,
    pause,
)
from streams import make_stream


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
            W = aligned_copy(np.asarray(Xtr[:FALLBACK_M], dtype=dt))
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
