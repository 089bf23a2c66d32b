"""The suite's memory section: resident memory over a long stream in chunks."""

import contextlib
import time
from pathlib import Path

import numpy as np
from _suite_common import (
    fitted_model,
    mlsom,
    mlsom_missing,
)
from streams import stream_chunk


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
