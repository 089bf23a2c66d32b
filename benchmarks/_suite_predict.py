"""The suite's predict section: frozen scoring against the GEMM floor."""

import time

import numpy as np
from _suite_common import (
    FALLBACK_M,
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
