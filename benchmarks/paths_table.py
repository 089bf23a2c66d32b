"""The SIMD paths side by side, from the suite's runs on each path.

    python benchmarks/suite.py --simd avx512f --only train,online,predict
    python benchmarks/suite.py --simd avx2 --only train,online,predict
    python benchmarks/suite.py --simd baseline --only train,online,predict
    python benchmarks/paths_table.py [suite-avx512f.json suite-avx2.json suite-baseline.json]

For each case (fit, the online phase, frozen predict; both dtypes; one and two threads) it prints
mlsom's time on each path, its ratio to the BLAS floor measured in the same run on the same
instruction set (the suite sets OpenBLAS's core type to match: SkylakeX, Haswell, Nehalem), the
target where there is one, and what the baseline path costs against AVX2 (the ratio of mlsom's
own times on the two paths, from two runs: as noisy as the machine was between them). Files
default to benchmarks/results/suite-<path>.json; a path with no file is left out.
"""

import argparse
import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
PATHS = ("avx512f", "avx2", "baseline")

# (section, threads, label, the floor's case name, target on mlsom / floor)
CASES = [
    ("train", 1, "fit, 1 thread", "gemm", 2.0),
    ("train", 2, "fit, 2 threads", "gemm", 2.0),
    ("online", 1, "online, 1 thread", "gemv", 1.5),
    ("predict", 1, "predict, 1 thread", "gemm", None),
    ("predict", 2, "predict, 2 threads", "gemm", 2.0),
]
FLOOR_KEYS = {"gemm": "gemm_{dtype}", "gemv": "floor_blas_{dtype}"}


def load(files):
    runs = {}
    for f in files:
        try:
            data = json.loads(Path(f).read_text())
            runs[data["simd"]] = data
        except (OSError, ValueError, KeyError, TypeError) as exc:
            sys.exit(f"{f}: not a result file of benchmarks/suite.py ({type(exc).__name__}: {exc})")
    return runs


def _section(run, section, threads):
    for r in run["results"]:
        if r["section"] == section and r["threads"] == threads:
            return r["cases"]
    return None


def _floor(cases, kind, dtype):
    return cases.get(FLOOR_KEYS[kind].format(dtype=dtype))


def rows(runs):
    paths = [p for p in PATHS if p in runs]
    out = []
    for section, threads, label, kind, target in CASES:
        for dtype in ("float64", "float32"):
            row = {"case": f"{label}, {dtype}", "target": target, "paths": {}}
            for p in paths:
                cases = _section(runs[p], section, threads)
                if cases is None:
                    continue
                mine, floor = cases.get(f"mlsom_{dtype}"), _floor(cases, kind, dtype)
                if not mine or mine.get("value") is None or not floor or not floor.get("value"):
                    continue
                row["paths"][p] = (mine["value"], mine["unit"], mine["value"] / floor["value"])
            out.append(row)
    return paths, out


def markdown(paths, table):
    head = ["case"]
    for p in paths:
        head += [f"{p}: mlsom", f"{p}: / floor"]
    head += ["target"]
    if "avx2" in paths and "baseline" in paths:
        head += ["baseline / avx2"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table:
        cells = [row["case"]]
        for p in paths:
            if p in row["paths"]:
                value, unit, ratio = row["paths"][p]
                met = "" if row["target"] is None else (" met" if ratio <= row["target"] else " NO")
                cells += [f"{value:.4g} {unit}", f"{ratio:.2f}{met}"]
            else:
                cells += ["", ""]
        cells.append("" if row["target"] is None else f"<= {row['target']:g}")
        if "avx2" in paths and "baseline" in paths:
            a, b = row["paths"].get("avx2"), row["paths"].get("baseline")
            cells.append(f"{b[0] / a[0]:.2f}" if a and b else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="suite JSON files, one per SIMD path")
    args = ap.parse_args(argv)
    files = args.files or [f for p in PATHS if (f := RESULTS / f"suite-{p}.json").exists()]
    if not files:
        sys.exit("no suite results: run benchmarks/suite.py --simd <path> first")
    runs = load(files)
    paths, table = rows(runs)
    for p in paths:
        m = runs[p]["machine"]
        print(f"{p}: {runs[p]['command']} ({m.get('cpu_model')}, {m.get('cpu_count')} CPUs)")
    print()
    print(markdown(paths, table))


if __name__ == "__main__":
    main()
