"""Choosing d from the labelled set: scikit-learn's GridSearchCV over frozen ``predict`` against
``grid_size="auto"``, on the paper's MOA-Spher-2C-2A (MINAS-BR's 4CRE-V2 files).

    python -m studies.grid_search_vs_auto --data-home tests/data [--seeds 0 1 2 3 4] [--json F]

Per seed: the d that docs/sklearn.md's GridSearchCV chooses (MinMaxScaler then the model,
``f1_macro`` over five shuffled folds of the labelled set, d = 1..10, model and folds seeded),
the d that ``grid_size="auto"`` chooses (the same seed), and every d's score on the test stream
with the paper's protocol (mean over the 50 windows of the cumulative macro F, 0/0 = 1).
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

from mlsom import AUTO_GRID_SIZES, SOMStreamClassifier
from mlsom.datasets import load
from mlsom.protocol import evaluate


def choices(ds, seed):
    """The d that GridSearchCV and auto choose from the labelled set, and their scores."""
    search = GridSearchCV(
        make_pipeline(MinMaxScaler(), SOMStreamClassifier(random_state=seed)),
        {"somstreamclassifier__grid_size": list(AUTO_GRID_SIZES)},
        scoring="f1_macro",
        cv=KFold(5, shuffle=True, random_state=seed),
    )
    search.fit(ds.X_train, ds.Y_train)
    auto = SOMStreamClassifier(grid_size="auto", random_state=seed).fit(ds.X_train, ds.Y_train)
    return {
        "grid_search_d": int(search.best_params_["somstreamclassifier__grid_size"]),
        "grid_search_scores": [float(s) for s in search.cv_results_["mean_test_score"]],
        "auto_d": int(auto.grid_size_),
        "auto_scores": [float(auto.grid_scores_[d]) for d in AUTO_GRID_SIZES],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", required=True, help="the folder with 4CRE-V2's files")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    start = time.perf_counter()
    ds = load("MOA-Spher-2C-2A", data_home=args.data_home)
    runs = []
    for seed in args.seeds:
        run = {"seed": seed, **choices(ds, seed)}
        run["stream"] = {
            d: evaluate(SOMStreamClassifier(grid_size=d, random_state=seed), ds).mean("macro_f1")
            for d in AUTO_GRID_SIZES
        }
        runs.append(run)
        print(
            f"seed {seed}: GridSearchCV chooses d = {run['grid_search_d']} (its scores "
            f"{min(run['grid_search_scores']):.3f} to {max(run['grid_search_scores']):.3f}), "
            f"auto d = {run['auto_d']} (its scores {min(run['auto_scores']):.3f} to "
            f"{max(run['auto_scores']):.3f})"
        )
    stream = {d: float(np.mean([r["stream"][d] for r in runs])) for d in AUTO_GRID_SIZES}
    print(
        "test stream, mean over the seeds: "
        + ", ".join(f"d = {d} {s:.3f}" for d, s in stream.items())
    )
    seconds = time.perf_counter() - start
    print(f"{seconds:.0f} s")
    if args.json:
        seeds = " ".join(map(str, args.seeds))
        command = (
            f"python -m studies.grid_search_vs_auto --data-home {args.data_home} "
            f"--seeds {seeds} --json {args.json}"
        )
        result = {"command": command, "seconds": seconds, "runs": runs, "stream_mean": stream}
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
