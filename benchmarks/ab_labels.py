"""Two builds of mlsom in one process, on bench_labels.py's stream with 10 % of labels.

    python benchmarks/ab_labels.py --before DIR --after DIR [--rounds 10] [--json out.json]

DIR holds a built ``mlsom`` package (``src`` of a checkout built in place). Each package is
copied under another name (``mlsom_before``, ``mlsom_after``; the package imports itself
relatively) so that both import side by side. Each round gives each build two fresh copies of
its fitted model; the stream (20,000 instances after ``fit`` on 20,000, L = 7, d = 10,
A = 128, one thread) goes chunk by chunk (1,000) to the four of them, with labels
(``predict_stream(chunk, arrivals=...)``, 10 % at delay 1,000) and without, in an order that
rotates from chunk to chunk; the times are summed over the rounds. Every timing of one chunk
thus meets the shared machine as the other three meet it: differences of about 1 % show, which
separate processes a second apart do not resolve (whole-run ratios moved by several per cent
from run to run).

Prints, per dtype, each build's throughput share with labels and after / before for the
stream with labels and without; and each build's labelled update (``partial_fit`` of the
20,000 instances against ``predict_stream`` of the same, from the fitted model, in turn, best
of the rounds) in online steps.
"""

import argparse
import copy
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from streams import chunks_with_arrivals, make_stream  # noqa: E402


def load_build(src, name, into):
    """Import the mlsom package under src (a directory holding ``mlsom``) as ``name``."""
    pkg = Path(src) / "mlsom"
    if not (pkg / "__init__.py").is_file():
        raise SystemExit(f"{src}: no mlsom package there")
    shutil.copytree(pkg, Path(into) / name)
    return importlib.import_module(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--delay", type=int, default=1000)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="mlsom-ab-")
    sys.path.insert(0, tmp)
    builds = {b: load_build(getattr(args, b), f"mlsom_{b}", tmp) for b in ("before", "after")}
    X, Y = make_stream(40000)
    n_train, size = 20000, 1000
    out = {"args": vars(args), "cases": {}}
    try:
        for dtype in (np.float64, np.float32):
            Xs, Ys = X[n_train:].astype(dtype), Y[n_train:]
            models = {}
            for b, pkg in builds.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", pkg.ConvergenceWarning)
                    models[b] = pkg.SOMStreamClassifier(grid_size=10, random_state=0, n_jobs=1)
                    models[b].fit(X[:n_train].astype(dtype), Y[:n_train])
            chunks = list(chunks_with_arrivals(Xs, Ys, args.fraction, args.delay, size=size))
            keys = [(b, labels) for b in builds for labels in (True, False)]
            total = dict.fromkeys(keys, 0.0)
            for _ in range(args.rounds):
                ms = {k: copy.deepcopy(models[k[0]]) for k in keys}
                for j, (lo, hi, got) in enumerate(chunks):
                    for k in keys[j % 4 :] + keys[: j % 4]:
                        t0 = time.perf_counter()
                        if k[1]:
                            ms[k].predict_stream(Xs[lo:hi], arrivals=got)
                        else:
                            ms[k].predict_stream(Xs[lo:hi])
                        total[k] += time.perf_counter() - t0
            # the labelled update: partial_fit of the stream's instances (each label's ring of
            # 500 entries fills, then entries come and go) against predict_stream of the same,
            # each build, in turn (the best of the rounds)
            part = slice(0, len(Xs))
            upd = {(b, kind): float("inf") for b in builds for kind in ("fit", "stream")}
            for r in range(args.rounds):
                for b, kind in list(upd)[r % 4 :] + list(upd)[: r % 4]:
                    m = copy.deepcopy(models[b])
                    t0 = time.perf_counter()
                    if kind == "fit":
                        m.partial_fit(Xs[part], Ys[part])
                    else:
                        m.predict_stream(Xs[part])
                    upd[(b, kind)] = min(upd[(b, kind)], time.perf_counter() - t0)
            name = np.dtype(dtype).name
            res = {f"{b}_share": total[(b, False)] / total[(b, True)] for b in builds} | {
                "after_over_before_with_labels": total[("after", True)] / total[("before", True)],
                "after_over_before_without": total[("after", False)] / total[("before", False)],
            }
            res |= {f"{b}_update_steps": upd[(b, "fit")] / upd[(b, "stream")] for b in builds}
            out["cases"][name] = res
            print(
                f"{name}: throughput share with labels {res['before_share']:.1%} before, "
                f"{res['after_share']:.1%} after; after / before: with labels "
                f"{res['after_over_before_with_labels']:.3f}, without "
                f"{res['after_over_before_without']:.3f}; labelled update "
                f"{res['before_update_steps']:.3f} online steps before, "
                f"{res['after_update_steps']:.3f} after"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
