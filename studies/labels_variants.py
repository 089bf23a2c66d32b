"""Variants of the labelled update (``partial_fit``), measured under the delayed-label protocol.

    python -m studies.labels_variants --variants package record drift-train \
        [--runs "MOA-Spher-2C-2A 2 0.01" "Mult-Non-Spher-HP 4 0.1" ...] [--seeds 0 1] \
        [--delay 1000] [--n-jobs 2] [--json out.jsonl] [--data-home tests/data]

The package fits the model; the online phase and the labelled updates then run in the exact
NumPy reference of the tests (``tests/helpers/reference.py``: ``classify`` and ``learn_rule``
as they are), with the labelled update changed as each variant says. With ``package`` the scores
are the package's own to the last digit (the reference is exact), which is what makes the other rows
comparable; ``native`` and ``native-tested`` run the package itself (the compiled core). The
MOA-Spher generators are the first generator's (``generator-v1``; ``--stream-source generator``:
the calibrated one, as ``mlsom experiment``), at 20,000 instances; label seed 0.
docs/results.md ("What the labels could do next") has the tables.
"""

import argparse
import json
import math
from collections import deque
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from studies._shared import NATIVE, ROOT, evaluate_labels, native_method
from tests.helpers import reference as ref  # the tests' exact NumPy reference

ETA, RATE = 0.05, 0.5  # the package's learning_rate and correction_rate

# name: (what it does, its switches)
VARIANTS = {
    "package": ("the package's update: miss step 0.5, false-alarm re-seeding", {}),
    "eta-only": ("every labelled move by eta: no strong correction", {"strong": "never"}),
    "rule-only": ("no neuron moves: only the decision rule learns", {"moves": False}),
    "record": (
        "strong corrections only for a neuron whose record (misses and false alarms against "
        "hits) is mostly wrong",
        {"strong": "record", "count_misses": True, "factor": 1},
    ),
    "record-fa2": (
        "strong corrections only past two false alarms per hit of the neuron",
        {"strong": "record", "count_misses": False, "factor": 2},
    ),
    "eta-miss": ("miss step eta, re-seeding kept", {"miss": "eta"}),
    "missed-positive": (
        "miss step eta, re-seeding only onto the last missed positive",
        {"miss": "eta", "positive": "missed"},
    ),
    "worst-positive": (
        "miss step eta, re-seeding onto the worst-covered positive since the last one",
        {"miss": "eta", "positive": "worst"},
    ),
    "coverage": (
        "strong corrections only for a positive farther from its neuron than -log averOut",
        {"strong": "coverage"},
    ),
    "drift-train": (
        "strong corrections while a label's error over its last 50 labelled instances is 3 "
        "standard deviations above its training-set error (after DDM)",
        {"strong": "drift", "level": "train", "sigmas": 3.0},
    ),
    "drift-train-2": ("the same at 2 standard deviations", {"strong": "drift", "sigmas": 2.0}),
    "drift-heldout": (
        "the same with the error on the labelled set's last fifth (maps of the first four fifths)",
        {"strong": "drift", "level": "heldout", "sigmas": 3.0},
    ),
    **NATIVE,
    "ddm": (
        "DDM's own levels on each label's labelled errors: strong from a drift until the error "
        "is back under the level it left",
        {"strong": "ddm"},
    ),
    "ddm-start": (
        "the same, strong also before a label's first level (its first 30 labelled instances)",
        {"strong": "ddm", "start_strong": True},
    ),
    "paired": (
        "strong corrections while they win a paired test on the stream: each correction's other "
        "choice (the miss step or eta, re-seeding or not) is tried on the next 5 labelled "
        "instances its neuron wins in either place; strong while, of the last 200 tests where "
        "the two differ in the number of known labels right, the strong choice won 2 sqrt(n) "
        "more than it lost (eta-steps before 10 tests)",
        {"strong": "paired", "start_strong": False},
    ),
    "paired-start": (
        "the same, strong before the first 10 tests",
        {"strong": "paired", "start_strong": True},
    ),
}

RUNS = [
    "MOA-Spher-2C-2A 2 0.01",
    "MOA-Spher-2C-2A 4 0.1",
    "MOA-Spher-3C-2A 4 0.1",
    "MOA-Spher-5C-2A 2 0.1",
    "MOA-Spher-5C-2A 4 0.1",
    "Mult-Non-Spher-HP 4 0.1",
    "Mult-Non-Spher-WF 4 0.1",
    "Mult-Non-Spher-RT 4 0.1",
]


def _averout(state, c, b, x):
    m = state["maps"][c]
    d2 = float(((x - m["weights"][b]) ** 2).sum())
    dist = d2 if state["squared"] else math.sqrt(d2)
    n_b = m["counts"][b]
    m["averout"][b] = (n_b * m["averout"][b] + math.exp(-dist)) / (n_b + 1)
    m["counts"][b] += 1


def _drifted(state, c, sigmas):
    """The windowed drift test: the label's error over its last 50 labelled instances against
    the level set at fit."""
    e, win = state["level"][c], state["errors"][c]
    n = len(win)
    if n < 10:
        return False
    return sum(win) / n > e + sigmas * math.sqrt(max(e * (1 - e), 1e-12) / n)


def _ddm(state, c, err, start_strong):
    """DDM (Gama, Medas, Castillo, Rodrigues, SBIA 2004) on label c's labelled errors; returns
    whether the label is in its strong-correction mode."""
    d = state.setdefault("ddm", {}).setdefault(
        c, dict(n=0, e=0, pmin=math.inf, smin=math.inf, strong=False, lvl=None)
    )
    d["n"] += 1
    d["e"] += err
    n = d["n"]
    p = d["e"] / n
    sd = math.sqrt(p * (1 - p) / n)
    if d["strong"]:
        if n >= 30 and p + sd < d["lvl"]:  # the new concept's error is under the old level
            d.update(strong=False, n=0, e=0, pmin=math.inf, smin=math.inf)
        return d["strong"]
    if n < 30 and start_strong and d["pmin"] == math.inf:
        return True  # no level yet: the package's strong corrections
    if n >= 30:
        if p + sd < d["pmin"] + d["smin"]:
            d["pmin"], d["smin"] = p, sd
        if p + sd >= d["pmin"] + 3 * d["smin"]:
            d.update(strong=True, lvl=d["pmin"] + 2 * d["smin"], n=0, e=0)
    return d["strong"]


PAIRED_USES, PAIRED_WINDOW, PAIRED_MIN, PAIRED_Z = 5, 200, 10, 2.0


def _paired_tests(state, x, y, Y_hat, bmu):
    """The paired tests of the "paired" variants. Each correction decision of a neuron (a miss:
    the miss step or eta; a false alarm: re-seeding or not) keeps where the other choice would
    have put the neuron (as a difference, carried along as the neuron moves since). A labelled
    instance that the neuron wins in its map, either where it is or where the other choice would
    have put it, is classified again with the neuron in the other place; where the two
    classifications differ in the number of known labels they get right, the test counts
    whether the strong choice was the better (the discordant pairs of McNemar's test). Each
    correction is tried on up to PAIRED_USES instances."""
    alt, tally = state.setdefault("alt", {}), state.setdefault("tally", deque(maxlen=PAIRED_WINDOW))
    saved = (state["kinds"], state["n_rej"], state["weak"], state["beyond"])
    known = [k for k in range(state["L"]) if y[k] >= 0]
    right = sum((k in Y_hat) == (y[k] == 1) for k in known)
    for c in known:
        if state["maps"][c] is None:
            continue
        W = state["maps"][c]["weights"]
        d_win = float(((x - W[bmu[c]]) ** 2).sum())
        for (cc, b), (delta, applied_strong, uses) in list(alt.items()):
            if cc != c or (b != bmu[c] and not float(((x - W[b] - delta) ** 2).sum()) < d_win):
                continue
            if uses + 1 >= PAIRED_USES:
                del alt[(c, b)]
            else:
                alt[(c, b)] = (delta, applied_strong, uses + 1)
            orig = W[b].copy()
            W[b] += delta
            y_alt = ref.classify(state, x)[0]
            W[b] = orig
            right_alt = sum((k in y_alt) == (y[k] == 1) for k in known)
            if right != right_alt:
                tally.append(int((right > right_alt) == applied_strong))
    state["kinds"], state["n_rej"], state["weak"], state["beyond"] = saved


def _paired_strong(state, v):
    t = state.get("tally", ())
    if len(t) < PAIRED_MIN:
        return v["start_strong"]
    return 2 * sum(t) - len(t) >= PAIRED_Z * math.sqrt(len(t))


def learn_one(state, x, y, v):
    """One labelled instance (x, y in {1, 0, -1}) under variant switches v: the reference's
    ref_learn with the strong corrections (the miss step RATE and the false-alarm re-seeding)
    gated, and the re-seeding target chosen, as v says."""
    maps, L = state["maps"], state["L"]
    last = state.setdefault("last_positive", {})
    last_d = state.setdefault("last_distance", {})
    rec = state.setdefault(
        "record", {c: np.zeros((len(m["weights"]), 2), np.int64) for c, m in enumerate(maps) if m}
    )
    Y_hat, bmu, _ = ref.classify(state, x)
    if not v.get("moves", True):
        ref.learn_rule(state, y, state["kinds"])
        return
    strong_mode = v.get("strong")
    errors = {c: int((c in Y_hat) != (y[c] == 1)) for c in range(L) if maps[c] and y[c] >= 0}
    if strong_mode == "drift":
        win = state.setdefault("errors", {c: deque(maxlen=50) for c in range(L)})
        for c, e in errors.items():
            win[c].append(e)
    if strong_mode == "paired":
        _paired_tests(state, x, y, Y_hat, bmu)
    ddm_strong = {}
    if strong_mode == "ddm":
        for c, e in errors.items():
            ddm_strong[c] = _ddm(state, c, e, v.get("start_strong", False))

    def strong(c, r, covered, what):
        if strong_mode == "never":
            return False
        if strong_mode == "record":
            return r[1] > v["factor"] * r[0]
        if strong_mode == "coverage":  # a miss's step; a false alarm re-seeds as before
            return what != "miss" or not covered
        if strong_mode == "drift":
            return _drifted(state, c, v["sigmas"])
        if strong_mode == "ddm":
            return ddm_strong[c]
        if strong_mode == "paired":
            return _paired_strong(state, v)
        return not (what == "miss" and v.get("miss") == "eta")

    positives = []
    for c in range(L):
        if maps[c] is None or y[c] < 0:
            continue
        b = bmu[c]
        m = maps[c]["weights"][b]
        d2 = float(((x - m) ** 2).sum())
        covered = math.exp(-(d2 if state["squared"] else math.sqrt(d2))) >= maps[c]["averout"][b]
        r = rec[c][b]  # [right, wrong] of this neuron on labelled instances
        if y[c] == 1:
            hit = c in Y_hat
            if strong_mode == "coverage" and covered:
                pass  # a covered positive is no re-seeding target
            elif not (v.get("positive") == "missed" and hit):
                positives.append((c, d2))
            step = ETA if hit or not strong(c, r, covered, "miss") else RATE
            if strong_mode == "paired" and not hit:  # the other choice's place, for the test
                state["alt"][(c, b)] = ((ETA + RATE - 2 * step) * (x - m), step == RATE, 0)
            m += step * (x - m)
            _averout(state, c, b, x)
            if strong_mode == "record":
                if hit:
                    r[0] += 1
                elif v["count_misses"]:
                    r[1] += 1
        elif c in Y_hat:  # a false alarm
            if strong_mode == "record":
                r[1] += 1
            if strong(c, r, covered, "false alarm") and c in last:
                if strong_mode == "paired":
                    state["alt"][(c, b)] = (m - last[c], True, 0)
                m[:] = last.pop(c)
                r[:] = 0  # a new neuron, a new record
            elif strong_mode == "paired" and c in last:
                state["alt"][(c, b)] = (last[c] - m, False, 0)
    for c, d2 in positives:
        if v.get("positive") == "worst":
            if c in last and last_d[c] > d2:
                continue
            last_d[c] = d2
        last[c] = x.copy()
    ref.learn_rule(state, y, state["kinds"])


class Variant:
    """An online method for mlsom.protocol.evaluate: the package fits, the reference runs."""

    kind = "online"

    def __init__(self, base, switches):
        self.base, self.v = base, switches

    def get_params(self):
        return dict(self.v)

    def fit(self, X, Y):
        from mlsom.experiment import make_method

        self.base.fit(X, Y)
        self.state = ref.state_of_model(self.base)
        if self.v.get("strong") == "drift":
            X, Y = np.asarray(X, np.float64), np.asarray(Y).astype(bool)
            if self.v.get("level") == "heldout":
                n = len(Y) - len(Y) // 5
                head = make_method(
                    "mlsom", grid_size=self.base.grid_size, seed=self.base.random_state
                )
                head.fit(X[:n], Y[:n].astype(np.uint8))
                P, Y = np.asarray(head.predict(X[n:])).astype(bool), Y[n:]
            else:  # frozen predictions of the training set itself
                P = np.zeros_like(Y)
                for i, x in enumerate(X):
                    P[i, ref.classify(self.state, x)[0]] = True
            self.state["level"] = (P != Y).mean(axis=0)
        return self

    def predict_stream(self, X):
        out = np.zeros((len(X), self.state["L"]), dtype=np.uint8)
        for i, x in enumerate(np.asarray(X, np.float64)):
            out[i, ref.stream_step(self.state, x, ETA)] = 1
        return out

    def partial_fit(self, X, Y):
        for x, y in zip(np.asarray(X, np.float64), np.asarray(Y), strict=True):
            learn_one(self.state, x, y.astype(np.int64), self.v)
        return self


def method_for(variant, d, seed):
    """The package itself for the ``NATIVE`` variants, else the reference with the variant's
    labelled update."""
    from mlsom.experiment import make_method

    if variant in NATIVE:
        return native_method(variant, d, seed)
    return Variant(make_method("mlsom", grid_size=d, seed=seed), VARIANTS[variant][1])


def run(job):
    return evaluate_labels(job, method_for)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--runs", nargs="+", default=RUNS, help='"STREAM D FRACTION" each')
    ap.add_argument(
        "--grid",
        nargs=3,
        metavar=("STREAMS", "DS", "FRACTIONS"),
        help='instead of --runs, every combination: comma-separated lists, e.g. "Scene,Yeast" '
        '"2,4" "0.01,0.1"',
    )
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--delay", type=int, default=1000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--data-home", default=str(ROOT / "tests" / "data"))
    ap.add_argument("--json", help="write every run's result here, one JSON object a line")
    ap.add_argument(
        "--stream-source",
        default="generator-v1",
        choices=["generator", "generator-v1"],
        help="the generator of the MOA-Spher streams (default: the first one, as the tables of "
        "docs/results.md that this script made)",
    )
    args = ap.parse_args()
    if args.grid:
        streams, ds, fractions = (part.split(",") for part in args.grid)
        args.runs = [f"{s} {d} {f}" for s in streams for d in ds for f in fractions]
    runs = [(s, int(d), float(f)) for s, d, f in (r.split() for r in args.runs)]
    jobs = [
        (v, s, d, seed, f, args.delay, args.data_home, args.stream_source)
        for v in args.variants
        for s, d, f in runs
        for seed in args.seeds
    ]
    with Pool(args.n_jobs) as pool:
        results = pool.map(run, jobs)
    if args.json:
        Path(args.json).write_text("".join(json.dumps(r) + "\n" for r in results))
    print("| variant | " + " | ".join(f"{s} d={d} f={f:g}" for s, d, f in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for v in args.variants:
        cells = []
        for s, d, f in runs:
            got = [r["macro_f1"] for r in results if r["variant"] == v and r[
                "stream"] == s and r["d"] == d and r["fraction"] == f]  # fmt: skip
            cells.append(f"{sum(got) / len(got):.3f}")
        print(f"| {v} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
