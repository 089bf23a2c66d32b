"""Prototype of the robust variant's acceptance offsets, in NumPy: the global offset theta alone,
with each label's own offset phi (two dead bands), phi alone, or phi kept at or below 0.

Usage::

    python -m studies.robust_offsets_prototype STREAMS D_LIST SEEDS CONFIGS OUT.jsonl [N]
    python -m studies.robust_offsets_prototype --summary OUT.jsonl [...]

e.g. ``Mult-Non-Spher-HP,Scene 2,5,10 0,1,2 robust,both,both30 out.jsonl``. CONFIGS among
``robust`` (theta alone: the package before 2026-12-02), ``both`` (theta and phi, 20 % band),
``both30`` (30 %: the package's robust variant since 2026-12-02), ``bothneg`` (phi <= 0),
``label`` (phi alone), ``hystg`` (``both30`` with a hysteresis on theta: once it leaves its
band it moves until the running cardinality crosses z0 again) and ``hyst`` (the same for every
phi too). The maps are fitted by the package (``variant="robust"``); the online
phase is the reference's (``tests/helpers/reference.py``: its ranking and probabilities, its drift
gate) with the offsets of the configuration, so that the configurations differ in the offsets only.
``both30`` runs with a check that the package's own ``predict_stream`` gives the same
predictions row for row. Real streams are read from ``tests/data``; generated ones have N
instances (20,000 by default; 0: their Table 1 size). Each run appends a line to OUT.jsonl
(mean over the 50 windows of the cumulative macro F, predicted and true cardinality).
``--summary`` tabulates them against the paper's variant's runs of the same seeds in
``studies/results/robust-streams.json`` and ``robust-2c2a.json`` (20,000 instances: for
another N, compare the configurations with ``both30`` instead). Runs take 0.1-0.3 ms per
instance (MOA-Spher-2C-2A: about 25 s), about 1 ms at the Table 1 sizes with ``both30``'s
check.
"""

from __future__ import annotations

import collections
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from mlsom import SOMStreamClassifier
from mlsom.datasets import load
from mlsom.evaluation import confusion_counts, macro_f1, window_edges
from studies._shared import RESULTS, ROOT
from tests.helpers import reference  # the tests' exact NumPy reference

REAL = {"MOA-Spher-2C-2A", "Scene", "Yeast"}


def get(name, n=20000):
    if name in REAL:
        return load(name, data_home=str(ROOT / "tests" / "data"))
    return load(name, n_instances=n or None, random_state=0)  # 0: the Table 1 size


def classify(st, x, cfg):
    L, T, N, S = st["L"], st["T"], st["N"], st["S"]
    n_rank = min(-(-S // N), L)
    owners, weights, bmu, bmu_d2 = [], [], {}, {}
    for j, m in enumerate(st["maps"]):
        if m is None:
            continue
        dj = ((m["weights"] - x) ** 2).sum(axis=1)
        bmu[j] = int(np.argmin(dj))
        bmu_d2[j] = dj[bmu[j]]
        owners += [j] * len(dj)
        weights.append(m["weights"])
    W = np.concatenate(weights)
    d2 = ((W - x) ** 2).sum(axis=1)
    ranking = reference.rank_labels(owners, d2, st["k_nn"], n_rank)
    P = reference.prob(T, N)

    def lg(v):
        return math.log(v) if v > 0 else -math.inf

    theta, phi = st["theta"], st["phi"]
    Y_hat, weak, rej = [ranking[0]], [], []
    for c in ranking[1:]:
        dist_c = bmu_d2[c] if st["squared"] else math.sqrt(bmu_d2[c])
        score = lg(P[c, c]) - dist_c
        for d in Y_hat:
            score += lg(P[d, c])
        thr0 = lg(P[c, c]) + lg(st["maps"][c]["averout"][bmu[c]])
        for k in range(L):
            if k != c and P[k, c] > 0:
                thr0 += lg(P[k, c])
        thr = thr0 + theta + phi[c]
        if score >= thr:
            Y_hat.append(c)
            if theta + phi[c] < 0 and score < thr0:
                weak.append(c)
        elif all(P[d, c] > 0 for d in Y_hat):
            rej.append(c)
    return Y_hat, bmu, weak, rej, ranking


def _acting(st, key, dev, band, cfg, hyst="hyst"):
    """Whether an offset moves: outside its dead band; with hysteresis (``cfg[hyst]``), also
    inside it, from leaving the band until the running value crosses its target again."""
    if not cfg.get(hyst):
        return abs(dev) > band
    side = st.setdefault("side", {})
    if abs(dev) > band:
        side[key] = math.copysign(1.0, dev)
    elif key in side and dev * side[key] <= 0:
        del side[key]  # back at (or past) the target: the dead band holds again
    return key in side


def step(st, x, cfg, eta=0.05):
    Y_hat, bmu, weak, rej, ranking = classify(st, x, cfg)
    maps = st["maps"]
    learnt = [c for c in Y_hat if c not in weak]
    for c in learnt:
        m = maps[c]["weights"][bmu[c]]
        m += eta * (x - m)
    st["N"] += 1
    st["S"] += len(Y_hat)
    for c in learnt:
        b = bmu[c]
        d2 = float(((x - maps[c]["weights"][b]) ** 2).sum())
        dist = d2 if st["squared"] else math.sqrt(d2)
        n_b = maps[c]["counts"][b]
        maps[c]["averout"][b] = (n_b * maps[c]["averout"][b] + math.exp(-dist)) / (n_b + 1)
        maps[c]["counts"][b] += 1
    if cfg.get("gate", True):
        for c in learnt:
            reference.drift_step(st, c, bmu[c], x, eta)
    for j in Y_hat:
        for k in Y_hat:
            st["T"][j, k] += 1
    n_y, z0 = len(Y_hat), st["z0"]
    st["cbar"] += st["alpha"] * (n_y - st["cbar"])
    if cfg["global"] and _acting(st, "theta", st["cbar"] - z0, cfg["gband"] * z0, cfg):
        err = n_y - z0
        if (err > 0 and n_y > 1) or (err < 0 and rej):
            st["theta"] += st["gain"] * err
    if cfg["perlabel"]:
        pi, r = st["pi"], st["rate"]
        ind = np.zeros(st["L"])
        ind[Y_hat] = 1
        r += cfg["palpha"] * (ind - r)
        for c in range(st["L"]):
            if maps[c] is None or not _acting(
                st, ("phi", c), r[c] - pi[c], cfg["pband"] * pi[c], cfg, "physt"
            ):
                continue
            e = ind[c] - pi[c]
            if (e > 0 and c in Y_hat[1:]) or (e < 0 and c in rej):
                st["phi"][c] += cfg["pgain"] * e
                if cfg.get("neg"):
                    st["phi"][c] = min(st["phi"][c], 0.0)
    return Y_hat


def run(name, d, seed, cfg, n=20000):
    ds = get(name, n)
    m = SOMStreamClassifier(grid_size=d, random_state=seed, variant="robust").fit(
        ds.X_train, ds.Y_train
    )
    st = reference.state_of_model(m)
    s = m._state
    st["drift"] = dict(
        center=np.array(s["drift_center"], float),
        mean=np.array(s["drift_mean"], float),
        limit=np.array(s["drift_limit"], float),
        open=np.array(s["drift_open"], bool),
        beta=0.002,
        sigma=0.2 * d,
    )
    Yt = np.asarray(ds.Y_train)
    st["pi"] = Yt.mean(0).astype(float)
    st["rate"] = st["pi"].copy()
    st["phi"] = np.zeros(st["L"])
    X = np.asarray(ds.X_stream, float)
    Y = np.asarray(ds.Y_stream).astype(bool)
    out = np.zeros(Y.shape, bool)
    for i, x in enumerate(X):
        out[i, step(st, x, cfg)] = True
    if cfg.get("check"):
        ref = m.predict_stream(ds.X_stream).astype(bool)
        assert (ref == out).all(), "the prototype differs from the package"
    e = window_edges(len(X), 50)
    C = np.zeros((Y.shape[1], 4), np.int64)
    curve = []
    for w in range(50):
        C = C + confusion_counts(Y[e[w] : e[w + 1]], out[e[w] : e[w + 1]])
        curve.append(macro_f1(C))
    return dict(
        stream=name,
        n=len(X),
        d=d,
        seed=seed,
        cfg=cfg["name"],
        macro_f=float(np.mean(curve)),
        card=float(out.sum() / len(X)),
        true=float(Y.sum() / len(X)),
    )


# theta with its 10 % band, and each label's phi (its band, smoothing, gain) as configured
_BOTH = dict(gband=0.1, perlabel=True, pband=0.2, palpha=0.005, pgain=0.01, **{"global": True})
CFGS = {
    "robust": dict(_BOTH, name="robust", perlabel=False),
    "both": dict(_BOTH, name="both"),
    "both30": dict(_BOTH, name="both30", pband=0.3, check=True),
    "bothneg": dict(_BOTH, name="bothneg", neg=True),
    "label": dict(_BOTH, name="label", **{"global": False}),
    # hysteresis: an offset that left its band moves until the running value is back on target
    "hystg": dict(_BOTH, name="hystg", pband=0.3, hyst=True),
    "hyst": dict(_BOTH, name="hyst", pband=0.3, hyst=True, physt=True),
}


def summary(files):
    paper = {}
    for f in ["robust-streams.json", "robust-2c2a.json"]:
        for r in json.load(open(RESULTS / f))["runs"]:
            if r["variant"] == "paper":
                paper[(r["stream"], r["d"], r["seed"])] = r["macro_f"]
    rows = [json.loads(line) for f in files for line in open(f)]
    g = collections.defaultdict(list)
    for r in rows:
        g[(r["stream"], r["d"], r["cfg"])].append(r)
    cfgs = sorted({r["cfg"] for r in rows})
    keys = sorted({(r["stream"], r["d"]) for r in rows})
    print("stream d | paper | " + " | ".join(f"{c} (card)" for c in cfgs) + " | true")
    worst = collections.defaultdict(list)
    for s, d in keys:
        line = []
        seeds = None
        for c in cfgs:
            rs = g.get((s, d, c), [])
            if not rs:
                line.append("-")
                continue
            seeds = [r["seed"] for r in rs]
            mf = np.mean([r["macro_f"] for r in rs])
            cd = np.mean([r["card"] for r in rs])
            pf = np.mean([paper[(s, d, k)] for k in seeds])
            tr = rs[0]["true"]
            worst[c].append((mf - pf, s, d, abs(cd / tr - 1)))
            line.append(f"{mf:.3f} ({cd:.2f}) {mf - pf:+.3f}")
        pf = np.mean([paper[(s, d, k)] for k in seeds])
        print(f"{s[-8:]:>8} {d:2d} | {pf:.3f} | " + " | ".join(line) + f" | {tr:.2f}")
    for c in cfgs:
        w = worst[c]
        print(
            c,
            "cells below -0.01:",
            [(s[-6:], d, round(x, 3)) for x, s, d, _ in w if x < -0.01],
            "card outside 15%:",
            sorted({s[-6:] for x, s, d, e in w if e > 0.15}),
            "mean diff",
            round(np.mean([x for x, *_ in w]), 4),
        )


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
        sys.exit()
    streams = sys.argv[1].split(",")
    ds_ = [int(v) for v in sys.argv[2].split(",")]
    seeds = [int(v) for v in sys.argv[3].split(",")]
    cfgs = sys.argv[4].split(",")
    n = int(sys.argv[6]) if len(sys.argv) > 6 else 20000
    jobs = [(s, d, k, CFGS[c], n) for s in streams for d in ds_ for k in seeds for c in cfgs]
    t = time.time()
    with ProcessPoolExecutor(2) as ex, open(sys.argv[5], "a") as f:
        for r in ex.map(run, *zip(*jobs, strict=True)):
            f.write(json.dumps(r) + "\n")
            f.flush()
            print(r, flush=True)
    print("seconds", time.time() - t)
