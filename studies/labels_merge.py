"""One labels experiment's summary with some methods' scores taken from another run.

    python -m studies.labels_merge BASE.json NEW_OUT MERGED_OUT

The labels experiment (docs/results.md, "Labels that arrive") runs mlsom beside the River upper
bounds and the batch lower bound; the other methods' scores do not depend on mlsom, and the River
trees on the larger streams take most of its 50 minutes. After a change to mlsom alone, run
``mlsom experiment ... --methods mlsom --out NEW_OUT`` with the experiment's other arguments, then
this: ``MERGED_OUT/summary.json`` is BASE's summary with every score of a method that NEW_OUT's
run has (by the method's name before its ``-f...-l...`` suffix, e.g. ``mlsom-d2``) replaced by
NEW_OUT's, for ``studies/labels_results.py MERGED_OUT``. Streams and settings must match:
a score that BASE has and NEW_OUT's run lacks, for a method it ran, is an error.
"""

import argparse
import json
import re
import sys
from pathlib import Path

SUFFIX = re.compile(r"-f[0-9.e+-]+-l[0-9]+$")


def method_of(label):
    return SUFFIX.sub("", label)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="the full experiment's summary.json")
    ap.add_argument("new", help="the folder of the run of some methods (its summary.json)")
    ap.add_argument("out", help="the folder to write the merged summary.json to")
    args = ap.parse_args()
    base = json.loads(Path(args.base).read_text())
    new = json.loads((Path(args.new) / "summary.json").read_text())
    merged = dict(base)
    scores = {s: dict(v) for s, v in base["mean_macro_f1"].items()}
    replaced = 0
    for stream, got in new["mean_macro_f1"].items():
        if stream not in scores:
            sys.exit(f"{stream}: not a stream of {args.base}")
        methods = {method_of(label) for label in got}
        for label in scores[stream]:
            if method_of(label) in methods and label not in got:
                sys.exit(f"{stream}: {label} is in {args.base} but not in the new run")
        for label, value in got.items():
            if label not in scores[stream]:
                sys.exit(f"{stream}: {label} is not in {args.base}")
            scores[stream][label] = value
            replaced += 1
    merged["mean_macro_f1"] = scores
    merged["merged_from"] = {
        "base": str(args.base),
        "new": str(args.new),
        "new_mlsom_version": new.get("mlsom_version"),
        "replaced_scores": replaced,
    }
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "summary.json").write_text(json.dumps(merged, indent=1) + "\n")
    print(f"{replaced} scores replaced; {Path(args.out) / 'summary.json'} written")


if __name__ == "__main__":
    main()
