"""Digests of the fixed models and predictions of tests/helpers/platform_fixtures.py, to compare
platforms.

    python .ci/platform_hashes.py [--levels all|current] [--out FILE] [--compare FILE]
                                  [--report FILE] [--expect-simd NAME]

Prints the platform (machine, SIMD path, NumPy), then one line per case with the first 12 hex
digits of each digest, and one summary line.

--levels all      compute every case at every SIMD level this processor has (baseline, AVX2,
                  AVX-512F) and fail unless they all agree; the default, "current", uses the path
                  chosen at import
--out FILE        write the digests (at the path chosen at import) and the platform to FILE as JSON
--compare FILE    fail unless every digest equals the one in FILE (written by --out elsewhere)
--report FILE     the same comparison, for the record only: differences are printed, not failed
--expect-simd S   fail unless the path chosen at import is S (for example "baseline (sse2)")

Only NumPy and mlsom are needed (the mlsom on sys.path: the installed one, or src/ through
PYTHONPATH). Exit status 0 when every check passed, 1 otherwise.
"""

import argparse
import json
import os
import platform
import sys
from pathlib import Path

# the repository's root: the fixed cases are tests/helpers/platform_fixtures.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import mlsom  # noqa: E402
from mlsom import _core, _testing  # noqa: E402
from tests.helpers import platform_fixtures  # noqa: E402

PARTS = platform_fixtures.PARTS


def short(digests):
    return " ".join(f"{part}={digests[part][:12]}" for part in PARTS)


def differences(digests, detail, ref):
    """'case:part (attributes)' for every digest that differs from the reference's."""
    out = []
    ref_digests, ref_detail = ref["digests"], ref.get("detail", {})
    for case in sorted(set(digests) | set(ref_digests)):
        for part in PARTS:
            mine = digests.get(case, {}).get(part)
            theirs = ref_digests.get(case, {}).get(part)
            if mine == theirs:
                continue
            a = detail.get(case, {}).get(part, {})
            b = ref_detail.get(case, {}).get(part, {})
            names = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
            out.append(f"{case}:{part} ({', '.join(names) or '?'})")
    return out


def described(info):
    return f"{info['machine']} {info['simd_path']} (NumPy {info['numpy']}{info['numpy_note']})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--levels", choices=("all", "current"), default="current")
    ap.add_argument("--out")
    ap.add_argument("--compare")
    ap.add_argument("--report")
    ap.add_argument("--expect-simd")
    args = ap.parse_args(argv)

    used, best = _core.simd_info()
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").strip()
    info = {
        "machine": platform.machine(),
        "simd_path": used,
        "simd_best_supported": best,
        "openmp": _core.openmp_enabled(),
        "max_threads": _core.max_threads(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numpy_note": f", its {disabled} off" if disabled else "",
        "mlsom": mlsom.__version__,
        "mlsom_file": mlsom.__file__,
    }
    print("platform: " + ", ".join(f"{k}={v}" for k, v in info.items() if k != "numpy_note"))
    failures = []
    if args.expect_simd is not None and used != args.expect_simd:
        failures.append(f"SIMD path at import is {used!r}, expected {args.expect_simd!r}")

    digests, detail = platform_fixtures.run_all()
    for name, d in digests.items():
        print(f"  {name:<26} {short(d)}")
    what = [f"{len(digests)} cases x {len(PARTS)} digests at the {used} path"]

    if args.levels == "all":
        for level in _testing.simd_levels()[:-1]:  # the best, chosen at import, ran above
            with _testing.switches(simd=level):
                name = _core.simd_info()[0]
                other, other_detail = platform_fixtures.run_all()
            differ = differences(other, other_detail, {"digests": digests, "detail": detail})
            if differ:
                failures.append(f"the {name} path differs from the {used} path: {differ}")
            else:
                what.append(f"identical at the {name} path")

    if args.out:
        Path(args.out).write_text(
            json.dumps({"platform": info, "digests": digests, "detail": detail}, indent=1)
        )

    if args.compare:
        ref = json.loads(Path(args.compare).read_text())
        differ = differences(digests, detail, ref)
        if differ:
            failures.append(
                f"{len(differ)} digests differ from {described(ref['platform'])}: "
                + "; ".join(differ)
            )
        else:
            what.append(f"identical to {described(ref['platform'])}")

    if args.report:
        ref = json.loads(Path(args.report).read_text())
        differ = differences(digests, detail, ref)
        if differ:
            cases = sorted({d.split(":")[0] for d in differ})
            parts = sorted({d.split(":")[1].split(" ")[0] for d in differ})
            names = sorted({n for d in differ for n in d.split("(")[1].rstrip(")").split(", ")})
            print(
                f"NOTE (not a failure): {len(differ)} digests differ from "
                f"{described(ref['platform'])}: parts {', '.join(parts)} of {len(cases)} cases, "
                f"in {', '.join(names)} only"
            )
        else:
            what.append(f"identical to {described(ref['platform'])}")

    if failures:
        for f in failures:
            print("FAILED: " + f)
        return 1
    print(f"platform hashes ({info['machine']}, {used}{info['numpy_note']}): " + "; ".join(what))
    return 0


if __name__ == "__main__":
    sys.exit(main())
