"""Would bounding each instance's labels keep labels that arrive from hurting? (A NumPy prototype:
the tests' exact reference, tests/helpers/reference.py, with candidate changes of the rule patched
in; the package is not changed.)

Usage::

    python -m studies.labels_hurt_bound [--variant bound+rankfirst+tested] [--grid-size 10]
        [--fractions 0.01 0.1] [--n 20000] [--check]

The stream and protocol of ``studies.labels_hurt`` (its first n instances; labels_persistence
off). Variants, joined by "+": ``ref`` (the package's update, unchanged), ``bound`` (at most
ceil(labelled cardinality) labels per instance once labels taught the rule: the first ranked
label, then the others by margin less offset), ``rankfirst`` (with ``bound``: ranked labels keep
their places, labels beyond the ranking fill what is left), ``tested`` (corrections="tested"),
``gentle`` (correction_rate 0.05), ``nomove`` (labels teach the rule but move no neuron),
``warm`` (no label beyond the ranking until its offset is chosen), ``Slearnt`` (S counts only
the ranked labels). ``--check`` compares the unpatched reference with the package row by row.
The reference is slow: about 10 minutes per fraction at 20,000 instances.

What it showed (docs/results.md, "When labels raise the cardinality"): at d = 10, 20,000
instances, ``bound+rankfirst+tested`` gives macro F 0.235 / 0.249 with 1 % / 10 % of the labels
(0.236 without), Hamming loss 0.194 / 0.192 (0.190) and a cardinality of 2.98 / 3.09.
"""

import argparse
import copy
import math
import time

import numpy as np

from mlsom import SOMStreamClassifier
from mlsom.datasets import read_multilabel
from mlsom.evaluation import multilabel_scores
from tests.helpers import reference as R

ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
ap.add_argument("--n", type=int, default=20000)
ap.add_argument("--grid-size", dest="d", type=int, default=10)
ap.add_argument("--fractions", dest="frac", type=float, nargs="+", default=[0.01, 0.1])
ap.add_argument("--variant", default="ref")
ap.add_argument("--check", action="store_true")
a = ap.parse_args()
X, Y, _ = read_multilabel(
    "rbf", 22, 80, 2.75, 40_000, seed=0, target_cardinality=2.75, calib_fraction=0.1
)
X, Y = X[: a.n], Y[: a.n]
n0 = len(X) // 10
Xtr, Ytr, Xs, Ys = X[:n0], Y[:n0], X[n0:], Y[n0:]
base = SOMStreamClassifier(grid_size=a.d, random_state=0, n_jobs=1, label_persistence="off").fit(
    Xtr, Ytr
)
V = set(a.variant.split("+"))
orig_classify = R.classify


def classify(state, x):
    Y_hat, bmu, gap = orig_classify(state, x)
    rule = state.get("rule")
    if "warm" in V and rule is not None:
        drop = [c for c in state.get("beyond", []) if rule["total"][c] < R.OFFSET_MIN]
        if drop:
            Y_hat = [c for c in Y_hat if c not in drop]
            state["beyond"] = [c for c in state["beyond"] if c not in drop]
    if "bound" in V and rule is not None and rule["z_set"] and sum(rule["total"]) > 0:
        cap = max(1, math.ceil(rule["z"]))
        if len(Y_hat) > cap:
            kinds, offs = state["kinds"], rule["offsets"]
            if "rankfirst" in V:  # ranked labels keep their places; beyond ones fill what is left
                bey = set(state["beyond"])
                rest = [c for c in Y_hat[1:] if c not in bey] + sorted(
                    [c for c in Y_hat[1:] if c in bey], key=lambda c: -(kinds[c][1] - offs[c])
                )
            else:
                rest = sorted(Y_hat[1:], key=lambda c: -(kinds[c][1] - offs[c]))
            keep = [Y_hat[0]] + rest[: cap - 1]
            Y_hat = [c for c in Y_hat if c in keep]
            state["beyond"] = [c for c in state["beyond"] if c in keep]
            state["weak"] = [c for c in state["weak"] if c in keep]
    return Y_hat, bmu, gap


R.classify = classify

orig_step = R.stream_step


def stream_step(state, x, eta=0.05):
    Y_hat = orig_step(state, x, eta)
    if "Slearnt" in V:  # S counts only the labels learnt from (not those beyond the ranking)
        state["S"] -= len(state.get("beyond", ()))
    return Y_hat


R.stream_step = stream_step


def run(f):
    t = time.time()
    st = R.state_of_model(base)
    rng = np.random.default_rng(0)
    P = np.zeros_like(Ys)
    pend = None
    m = copy.deepcopy(base) if a.check else None
    for s in range(0, len(Xs), 1000):
        e = min(s + 1000, len(Xs))
        for i in range(s, e):
            st["min_gap"] = np.inf
            y = R.stream_step(st, Xs[i])
            P[i, y] = 1
        if a.check:
            Pp = m.predict_stream(Xs[s:e])
            assert np.array_equal(Pp, P[s:e]), s
        if pend is not None and len(pend):
            if "nomove" in V:
                saved = [
                    None
                    if mp is None
                    else {k: mp[k].copy() for k in ("weights", "averout", "counts")}
                    for mp in st["maps"]
                ]
            st = R.ref_learn(
                st, Xs[pend], Ys[pend], rate=0.05 if "gentle" in V else 0.5, tested="tested" in V
            )
            if "nomove" in V:
                for mp, sv in zip(st["maps"], saved, strict=True):
                    if mp is not None:
                        for k in sv:
                            mp[k][...] = sv[k]
            if a.check:
                m.partial_fit(Xs[pend], Ys[pend])
        k = int(round(f * (e - s)))
        pend = s + np.sort(rng.choice(e - s, k, replace=False)) if k else None
    sc = multilabel_scores(Ys, P, measures=["macro_f1", "micro_f1", "example_f1", "hamming_loss"])
    print(
        f"REF {a.variant:<16} d={a.d} f={f:<5} mF={sc['macro_f1']:.3f} "
        f"miF={sc['micro_f1']:.3f} exF={sc['example_f1']:.3f} HL={sc['hamming_loss']:.3f} "
        f"card={P.sum(1).mean():.2f} S/N_end={st['S'] / st['N']:.2f} ({time.time() - t:.0f}s)",
        flush=True,
    )


for f in a.frac:
    run(f)
