"""Labels that arrive with ``grid_size="auto"`` (d chosen from the labelled set, no peeking),
with the issue's checks against the River upper bounds of the labels experiment.

    python -m studies.labels_auto [--seeds 0 1] [--n-jobs 2] [--json out.jsonl]

The package itself, its defaults (``label_persistence="tested"``) with ``corrections="strong"``
(the default) and ``"tested"``, on the streams of docs/results.md's "Labels that arrive" (the
calibrated MOA-Spher generator as it was then, ``generator-v2``, 20,000 instances, label seed
0): no label, 1 % and 10 % of labels at delay 1,000, and every label at delay 0. The upper
bounds' scores are read from ``studies/results/labels-experiment-summary.json`` (they do not
depend on mlsom's d).
Prints the table, the d each seed's fit chose, and the checks.
"""

import json
from multiprocessing import Pool
from pathlib import Path

from studies._shared import STREAMS, arguments_and_bounds, checks, upper_bounds

SETTINGS = [(0.0, 1000), (0.01, 1000), (0.1, 1000), (1.0, 0)]
CORRECTIONS = ["strong", "tested"]


def run(job):
    import warnings

    from mlsom.experiment import _load_stream, _stream_source, make_method
    from mlsom.protocol import evaluate

    corrections, stream, seed, fraction, delay, data_home = job
    source = _stream_source(stream, "generator-v2" if stream.startswith("MOA-Spher") else None)
    ds = _load_stream(stream, 20000, data_home, source)
    method = make_method("mlsom", grid_size="auto", seed=seed, params={"corrections": corrections})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate(method, ds, label_fraction=fraction, label_delay=delay, label_seed=0,
                       seed=seed)  # fmt: skip
    return dict(corrections=corrections, stream=stream, seed=seed, fraction=fraction,
                delay=delay, d=int(method.grid_size_), macro_f1=res.mean("macro_f1"))  # fmt: skip


def main():
    args, with_labels = arguments_and_bounds(__doc__.splitlines()[0])
    jobs = [
        (u, s, seed, f, delay, args.data_home)
        for u in CORRECTIONS
        for s in STREAMS
        for f, delay in SETTINGS
        if u == "strong" or f > 0  # (no label: the corrections never run)
        for seed in args.seeds
    ]
    with Pool(args.n_jobs) as pool:
        results = pool.map(run, jobs)
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in results))
    score, chosen = {}, {}
    for r in results:
        key = (r["corrections"], r["stream"], r["fraction"], r["delay"])
        score.setdefault(key, []).append(r["macro_f1"])
        chosen.setdefault(r["stream"], set()).add(r["d"])
    score = {k: sum(v) / len(v) for k, v in score.items()}
    for s in STREAMS:
        score[("tested", s, 0.0, 1000)] = score[("strong", s, 0.0, 1000)]

    def ub(stream, f, delay):
        return upper_bounds(with_labels, stream, f, delay)

    print("| stream | d chosen | f = 0 | 0.01 strong | 0.01 tested | 0.1 strong | 0.1 tested | "
          "f = 1, D = 0 strong | tested | best upper bound, f = 1, D = 0 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in STREAMS:
        best = max(ub(s, 1.0, 0).items(), key=lambda kv: kv[1])
        cells = [f"{score[(u, s, f, delay)]:.3f}" for f, delay in SETTINGS[1:]
                 for u in CORRECTIONS]  # fmt: skip
        ds = ", ".join(str(d) for d in sorted(chosen[s]))
        print(f"| {s} | {ds} | {score[('strong', s, 0.0, 1000)]:.3f} | " + " | ".join(cells)
              + f" | {best[0]} {best[1]:.3f} |")  # fmt: skip
    print()
    for u in CORRECTIONS:
        line = checks(
            f"{u}, d = auto",
            lambda s, f, delay, u=u: score[(u, s, f, delay)],
            lambda s, u=u: score[(u, s, 0.0, 1000)],
            with_labels,
        )
        worse = [s for s in STREAMS if score[(u, s, 0.1, 1000)] < score[(u, s, 0.0, 1000)] - 0.01]
        print(
            f"{line}; 10 % of labels more than 0.01 below no label on: {', '.join(worse) or 'none'}"
        )


if __name__ == "__main__":
    main()
