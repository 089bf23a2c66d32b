"""What does ``novelty_radius`` trade? On the novelty streams: F1M, the instances left unknown,
the false patterns and each new label's time to detect; on streams without new labels (the
paper's, drifting): the instances left unknown, the spurious new labels and macro F.

Usage::

    python -m studies.novelty_radius --data-home tests/data [--radii 1 1.15 1.3 1.5]
        [--seeds 0 1 2] [--variant paper] [--workers 2] [--json out.json]

For each radius factor, ``SOMStreamClassifier(novelty=True, novelty_radius=r, variant=...)``
(grid size 5, seeded as each run):

* on every stream of ``mlsom.datasets.list_novelty_streams()`` (the generated ones one run per
  seed at their default 100,000 instances, the real ones once, seed 0), through
  ``mlsom.protocol.evaluate_novelty_stream`` with its defaults, as ``studies.novelty_baselines``
  scores them (the same columns);
* on every stream of ``mlsom.datasets.list_streams()`` that ``--data-home`` holds (seed 0: the
  stream as ``load(name, random_state=0)`` gives it, its labelled set then its stream, none of
  them with a new label): the share of the stream left unknown (all of it and its last tenth),
  the new labels made per 10,000 instances (all spurious) and macro F over the labels of
  ``fit`` (zero_division=1), beside the same model without novelty detection.
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from studies.novelty_baselines import REAL, print_table


def _model(radius, variant, seed):
    from mlsom import SOMStreamClassifier

    novelty = radius is not None
    r = radius if novelty else 1.0
    params = dict(novelty=novelty, novelty_radius=r, variant=variant, random_state=seed)
    return SOMStreamClassifier(**params)


def novelty_run(job):
    """One run on a novelty stream: the summary of its evaluation."""
    import warnings

    from mlsom.datasets import load_novelty
    from mlsom.protocol import evaluate_novelty_stream

    stream, radius, variant, seed, data_home = job
    kw = {"data_home": data_home} if stream in REAL else {"random_state": seed}
    ds = load_novelty(stream, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_novelty_stream(_model(radius, variant, seed), ds)
    row = res.summary()
    row["n_test"] = int(res.n_test)
    return dict(stream=stream, method=f"r={radius}", seed=seed, **row)


def drift_run(job):
    """One run on a stream without new labels: unknown shares, new labels made, macro F (with
    radius None: the model without novelty detection)."""
    import warnings

    from mlsom.datasets import load
    from mlsom.evaluation import multilabel_scores

    stream, radius, variant, data_home = job
    ds = load(stream, random_state=0, data_home=data_home)
    X, Y = np.asarray(ds.X_stream), np.asarray(ds.Y_stream)
    model = _model(radius, variant, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(np.asarray(ds.X_train), np.asarray(ds.Y_train))
        P, unknown = model.predict_stream(X, return_unknown=True)
    n, tenth = X.shape[0], max(1, X.shape[0] // 10)
    macro = multilabel_scores(Y, P[:, : Y.shape[1]], measures=["macro_f1"])["macro_f1"]
    return dict(
        stream=stream,
        radius=radius,
        n=int(n),
        unknown=float(unknown.mean()),
        unknown_last_tenth=float(unknown[-tenth:].mean()),
        new_labels_per_10k=len(model.new_labels_) / n * 10_000,
        macro_f1=float(macro),
    )


def _available(data_home):
    """The streams of list_streams() that load from data_home (the others are named)."""
    from mlsom.datasets import list_streams, load

    have = []
    for name in list_streams():
        try:
            load(name, random_state=0, data_home=data_home)
        except (FileNotFoundError, OSError) as exc:
            print(f"({name}: not in --data-home, left out: {str(exc).split(';')[0]})")
            continue
        have.append(name)
    return have


def main(argv=None):
    from mlsom.datasets import list_novelty_streams

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-home", required=True)
    ap.add_argument("--radii", type=float, nargs="+", default=[1.0, 1.15, 1.3, 1.5])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--variant", default="paper", choices=["paper", "robust"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    jobs = [
        (s, r, args.variant, seed, args.data_home)
        for s in list_novelty_streams()
        for r in args.radii
        for seed in ([0] if s in REAL else args.seeds)
    ]
    drift_streams = _available(args.data_home)
    drift_jobs = [
        (s, r, args.variant, args.data_home) for s in drift_streams for r in [None, *args.radii]
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        runs = list(pool.map(novelty_run, jobs, chunksize=1))
        drift = list(pool.map(drift_run, drift_jobs, chunksize=1))
    print(f"{len(runs) + len(drift)} runs in {time.perf_counter() - t0:.0f} s\n")
    print("Novelty streams (variant " + args.variant + ")\n")
    methods = [f"r={r}" for r in args.radii]
    table = print_table(runs, list_novelty_streams(), methods, column="novelty_radius")
    print("\nStreams without new labels (seed 0; radius – : novelty detection off)\n")
    print("| stream | novelty_radius | unknown | unknown, last tenth | new labels / 10k | "
          "macro F |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for d in drift:
        r = "–" if d["radius"] is None else d["radius"]
        print(
            f"| {d['stream']} | {r} | {d['unknown']:.1%} | {d['unknown_last_tenth']:.1%} | "
            f"{d['new_labels_per_10k']:.2f} | {d['macro_f1']:.3f} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            out = {"command": vars(args), "novelty": table, "drift": drift, "runs": runs}
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
