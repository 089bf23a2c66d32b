"""Which loops of the kernels (src/mlsom/_kernels.h and the family files it includes) GCC
vectorizes for a target, loop by loop (-fopt-info-vec).

    python .ci/neon_vec_report.py --cc aarch64-linux-gnu-gcc [--flags "..."] [--full]

The kernels are written as macros (MLSOM_DEFINE_PATH expands them once per SIMD path), so GCC's
vectorization report on the real build puts every loop of every kernel on the one line of the
expansion. This script compiles _kernels.h alone, preprocessed and split into one statement a line,
with the build's flags (--flags: what setup.py passed to the compiler for _core.c) and
-fkeep-static-functions, and prints, per function, each loop with GCC's verdict: "vectorized,
16-byte vectors" and the like; "NOT vectorized", with GCC's first reason when it gives one (--full:
every reason); or "no loop left" (unrolled completely, or replaced by a memset). The last line is a
summary.

For aarch64 (no x86 dispatch) this is the baseline path, the one aarch64 runs; GCC vectorizes
with Advanced SIMD (NEON), which is part of the AArch64 baseline. Only the C compiler is needed
(no Python headers: a stand-in Python.h declares Py_ssize_t).
"""

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "src" / "mlsom" / "_kernels.h"

# _kernels.h includes <Python.h> for Py_ssize_t and the C headers Python.h brings (string.h for
# memcpy): a stand-in in the temporary folder
PYTHON_H = """\
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
typedef ptrdiff_t Py_ssize_t;
"""

# flags of a setuptools compile line that are about files, warnings or debugging information
DROP_PREFIXES = ("-I", "-o", "-fopt-info", "-g", "-W")


def split_statements(text):
    """One statement a line in the long (macro-expanded) lines, and a loop nested without braces
    on a line of its own; shorter lines as they are."""
    out = []
    for line in text.splitlines():
        if len(line) < 160:
            out.append(line)
            continue
        depth, cur = 0, []
        for i, ch in enumerate(line):
            if (
                depth == 0
                and re.match(r"for\s*\(", line[i : i + 5])
                and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_"))
                and "".join(cur).strip().endswith(")")
            ):
                out.append("".join(cur).strip())  # for (...) for (...): the inner one apart
                cur = []
            cur.append(ch)
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif (ch in ";{}") and depth == 0:
                out.append("".join(cur).strip())
                cur = []
        if "".join(cur).strip():
            out.append("".join(cur).strip())
    return "\n".join(out) + "\n"


def functions_by_line(text):
    """Map each line number (1-based) to the function whose body it is in (or None)."""
    owner, depth, current, candidate = {}, 0, None, None
    for no, line in enumerate(text.splitlines(), 1):
        if depth == 0:
            m = re.findall(r"\b(mlsom_\w+)\s*\(", line)
            if m:
                candidate = m[0]
        for ch in line:
            if ch == "{":
                if depth == 0:
                    current = candidate
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    current = None
        owner[no] = current
    return owner


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cc", required=True)
    ap.add_argument("--flags", default="-O3 -ffp-contract=off -fno-math-errno -fopenmp -fPIC")
    ap.add_argument("--full", action="store_true", help="print the reason of every missed loop")
    args = ap.parse_args(argv)

    # the code-generation flags: no file names, include folders, outputs or reports
    flags = [
        f
        for f in shlex.split(args.flags)
        if f.startswith("-") and f != "-c" and not f.startswith(DROP_PREFIXES)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "Python.h").write_text(PYTHON_H)
        (tmp / "tu.c").write_text(f'#include "{KERNELS}"\n')
        pre = subprocess.run(
            [args.cc, *flags, f"-I{tmp}", "-E", "-P", str(tmp / "tu.c")],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout
        src = split_statements(pre)
        (tmp / "kernels.c").write_text(src)
        reports = {}
        for kind in ("optimized", "missed"):
            out = tmp / f"{kind}.txt"
            subprocess.run(
                [
                    args.cc,
                    *flags,
                    "-fkeep-static-functions",
                    f"-fopt-info-vec-{kind}={out}",
                    "-c",
                    str(tmp / "kernels.c"),
                    "-o",
                    str(tmp / "kernels.o"),
                ],
                check=True,
            )
            reports[kind] = out.read_text().splitlines()

    lines = src.splitlines()
    owner = functions_by_line(src)
    # every loop of the kernels' functions, by the line of its 'for'
    loops = {
        no: {"vectorized": None, "reasons": [], "reported": False}
        for no, line in enumerate(lines, 1)
        if re.match(r"for\s*\(", line.strip()) and (owner.get(no) or "").startswith("mlsom_")
    }
    slp = {}
    for kind, records in reports.items():
        for rec in records:
            m = re.match(r".*kernels\.c:(\d+):\d+: (?:optimized|missed): (.*)", rec)
            if not m:
                continue
            no, msg = int(m.group(1)), m.group(2).strip()
            fn = owner.get(no)
            if not fn:
                continue
            if no not in loops:
                if "basic block" in msg and kind == "optimized":
                    slp[fn] = slp.get(fn, 0) + 1
                # a reason reported at a statement: it belongs to the loop around it
                inner = [k for k in loops if k < no and owner.get(k) == fn]
                if not inner or not msg.startswith("not vectorized") or kind != "missed":
                    continue
                no = max(inner)
            loop = loops[no]
            loop["reported"] = True
            v = re.match(r"loop vectorized using (\d+) byte vectors", msg)
            if v:
                loop["vectorized"] = max(int(v.group(1)), loop["vectorized"] or 0)
            elif msg.startswith("not vectorized") and msg not in loop["reasons"]:
                loop["reasons"].append(msg.removeprefix("not vectorized: "))

    n_vec = n_all = 0
    current = None
    for no in sorted(loops):
        fn = owner[no]
        if fn != current:
            current = fn
            extra = f"  (+{slp[fn]} straight-line blocks vectorized)" if fn in slp else ""
            print(fn + extra)
        loop = loops[no]
        n_all += 1
        head = re.sub(r"\s+", " ", lines[no - 1].strip())
        head = head if len(head) <= 64 else head[:61] + "..."
        if loop["vectorized"]:
            n_vec += 1
            verdict = f"vectorized, {loop['vectorized']}-byte vectors"
        elif not loop["reported"]:
            verdict = "no loop left (unrolled completely, or made a memset)"
        else:
            reasons = loop["reasons"][: None if args.full else 1]
            verdict = "NOT vectorized" + (": " + "; ".join(reasons) if reasons else "")
        print(f"    {head:<64}  {verdict}")
    print(f"{n_vec} of {n_all} loops of the kernels vectorized ({args.cc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
