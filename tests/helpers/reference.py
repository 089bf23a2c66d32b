"""Plain-NumPy reference implementation of SOM-Stream-ML, for testing only.

Written from the method description (``docs/method.md``) and the package's documented
conventions, not from the Cython core. It favours being obviously correct over being fast:
loops where they are clearer, no log-space bookkeeping except in the decision rule (the tests
scale their data so that exp(-distance) never underflows).

State is a plain dict:
    maps   : list (one entry per label) of None or a dict with
             weights (m, A), counts (m,), averout (m,), pos (m, 2) = (row, col), n_iter
    T      : (L, L) int64 label (co-)occurrence counts
    N, S   : instances seen, total number of labels seen (training, then predicted)
    k_nn   : neighbours of the winner-class vote
    L, squared, skip : number of labels, averout_distance == "sqeuclidean",
             zero_cooccurrence == "skip"
    min_gap, equal_mean_ties : diagnostics of the choices made (see tie_gap, equal_mean_ties)
"""

import copy
import math
from fractions import Fraction

import numpy as np

# ---------------------------------------------------------------------------- offline phase


def hex_grid(d):
    """(row, col) of unit u = r*d + c and the exact d²×d² hexagonal grid distances."""
    r = np.repeat(np.arange(d), d)
    c = np.tile(np.arange(d), d)
    c2 = 2 * c + r % 2  # twice the x coordinate: integer, so distances are exact
    G = np.sqrt(((c2[:, None] - c2[None, :]) ** 2 + 3 * (r[:, None] - r[None, :]) ** 2) / 4.0)
    return np.column_stack([r, c]).astype(np.int64), G


def sq_dists(X, M):
    """(n, m) squared Euclidean distances, computed row by row as sum((x - m)**2)."""
    return ((X[:, None, :] - M[None, :, :]) ** 2).sum(axis=2)


def assign(X, M):
    """BMU (first index of the minimum) of every row and its squared distance."""
    D = sq_dists(X, M)
    bmu = D.argmin(axis=1)
    return bmu, D[np.arange(len(X)), bmu]


def tie_gap(D, bmu, M):
    """Smallest relative gap between a row's BMU distance and its distance to any unit whose
    weights differ from the BMU's. A gap of ~1e-16 is a tie in exact arithmetic that only
    rounding breaks, so no two implementations need agree on it; the tests avoid such data.
    (Exact ties between bit-identical weights follow the first-index rule and are tested.)"""
    best = D[np.arange(len(D)), bmu]
    identical = (M[None, :, :] == M[bmu][:, None, :]).all(axis=2)
    other = np.where(identical, np.inf, D).min(axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf where every unit equals the BMU
        rel = np.where(np.isinf(other), np.inf, (other - best) / np.maximum(other, 1e-300))
    return float(rel.min())


def equal_mean_ties(D, n_avg):
    """Rows whose minimum distance is attained by several units (necessarily with identical
    weights) at least one of which is a mean of 2 or more rows. Such a tie is exact only if
    equal means are computed bit-identically; a diagnostic for the tests, no effect here."""
    tied = D == D.min(axis=1, keepdims=True)
    return int(((tied.sum(axis=1) > 1) & (tied * (n_avg >= 2)).any(axis=1)).sum())


def train_map(Xj, M, G, n_epochs, max_epochs, neighborhood):
    """Batch SOM. Returns (weights, final assignment, its squared distances, epochs, tie gap,
    equal-mean ties)."""
    r0 = np.quantile(G, 2.0 / 3.0)
    M = M.copy()
    n_avg = np.ones(len(M))  # rows averaged into each unit's weight (1: a copy of a row)
    bmu, _ = assign(Xj, M)
    gap = tie_gap(sq_dists(Xj, M), bmu, M)
    mean_ties = 0
    epochs = 0
    for e in range(max_epochs):
        radius = r0 * (n_epochs - e) / n_epochs if e < n_epochs else 0.0
        winner_only = radius < 1.0
        if winner_only:
            H = np.eye(len(M))
        elif neighborhood == "bubble":
            H = (G <= radius).astype(float)
        else:  # gaussian
            H = np.exp(-(G**2) / (2.0 * radius**2))
        for u in range(len(M)):
            w = H[u, bmu]  # weight of every row in the new mean of unit u
            rows = w > 0
            if rows.any():
                # the same rows with the same weights always give a bit-identical mean
                M[u] = (w[rows, None] * Xj[rows]).sum(axis=0) / w[rows].sum()
                n_avg[u] = rows.sum()
        new_bmu, _ = assign(Xj, M)
        D = sq_dists(Xj, M)
        gap = min(gap, tie_gap(D, new_bmu, M))
        mean_ties += equal_mean_ties(D, n_avg)
        epochs += 1
        unchanged = np.array_equal(new_bmu, bmu)
        bmu = new_bmu
        if winner_only and unchanged:
            break
    bmu, d2 = assign(Xj, M)
    return M, bmu, d2, epochs, gap, mean_ties


def ref_fit(
    X,
    Y,
    d,
    *,
    n_epochs=100,
    max_epochs=1000,
    min_neuron_size=4,
    neighborhood="bubble",
    averout_distance="euclidean",
    zero_cooccurrence="reject",
    random_state=None,
    variant="paper",
):
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y).astype(np.int64)
    n, L = Y.shape
    squared = averout_distance == "sqeuclidean"
    T = Y.T @ Y
    pos, G = hex_grid(d)
    rng = np.random.default_rng(random_state)
    maps = [None] * L
    min_gap, mean_ties = np.inf, 0
    for j in range(L):
        if T[j, j] == 0:
            continue
        Xj = X[Y[:, j] == 1]
        init = rng.choice(len(Xj), size=d * d, replace=len(Xj) < d * d)
        M, bmu, d2, n_iter, gap, ties = train_map(
            Xj, Xj[init], G, n_epochs, max_epochs, neighborhood
        )
        min_gap = min(min_gap, gap)
        mean_ties += ties
        counts = np.bincount(bmu, minlength=d * d)
        keep = np.flatnonzero(counts >= min_neuron_size)
        if keep.size == 0:
            keep = np.array([np.argmax(counts)])  # first unit with the largest count
        if variant == "robust":
            keep = fresh_units(bmu, counts, keep)
        dist = d2 if squared else np.sqrt(d2)
        averout = np.array([np.mean(np.exp(-dist[bmu == b])) for b in keep])
        maps[j] = dict(
            weights=M[keep].copy(),
            counts=counts[keep].astype(np.int64),
            averout=averout,
            pos=pos[keep].copy(),
            n_iter=n_iter,
        )
    sizes = [len(m["counts"]) for m in maps if m is not None]
    k_nn = min(sizes)
    if k_nn % 2 == 0:
        k_nn -= 1
    k_nn = max(k_nn, 1)
    state = dict(
        maps=maps,
        T=T,
        N=n,
        S=int(np.trace(T)),
        k_nn=k_nn,
        L=L,
        squared=squared,
        skip=zero_cooccurrence == "skip",
        min_gap=min_gap,
        equal_mean_ties=mean_ties,
    )
    if variant == "robust":  # the acceptance offset, its gain and target (the training z)
        z0 = int(np.trace(T)) / n
        state.update(theta=0.0, gain=0.01, z0=z0, cbar=z0, alpha=0.005, band=0.1)
        # each label's own acceptance offset, its recent predicted rate and its training rate
        rate = np.diag(T) / n
        state.update(phi=np.zeros(L), rate=rate.copy(), target=rate.copy(), label_band=0.3)
        # the drift gate: each label's training mean, the recent mean of what it learns from
        # online (its training mean to begin with), and the squared distance between them that
        # opens the gate: 0.7^2 times the training rows' mean squared distance from their mean
        A = X.shape[1]
        center, limit = np.zeros((L, A)), np.zeros(L)
        for j in range(L):
            if maps[j] is not None:
                Xj = X[Y[:, j] == 1]
                center[j] = Xj.mean(axis=0)
                limit[j] = 0.7 * 0.7 * float(((Xj - center[j]) ** 2).sum(axis=1).mean())
        state["drift"] = dict(
            center=center,
            mean=center.copy(),
            limit=limit,
            open=np.zeros(L, bool),
            beta=0.002,
            sigma=0.2 * d,
        )
    return state


def state_of_model(model):
    """The reference's state of a fitted package model, as it is now: its maps (weights,
    averOut, counts, grid places), T, N, S and k; for the robust variant its acceptance offset
    (the drift gate is left out: the reference runs such a state without one)."""
    maps = []
    for j in range(model.n_labels_):
        if model.weights_[j] is None:
            maps.append(None)
            continue
        maps.append(
            dict(
                weights=np.array(model.weights_[j], dtype=np.float64),
                averout=np.array(model.averout_[j], dtype=np.float64),
                counts=np.array(model.neuron_counts_[j], dtype=np.int64),
                pos=np.array(model.grid_positions_[j]),
            )
        )
    st = model._state
    state = dict(
        L=model.n_labels_,
        T=np.array(model.T_, dtype=np.int64),
        N=int(st["NS"][0]),
        S=int(st["NS"][1]),
        k_nn=int(model.k_nn_),
        maps=maps,
        squared=st["squared"],
        skip=model.zero_cooccurrence == "skip",
        min_gap=np.inf,
        equal_mean_ties=0,
    )
    if "ctl" in st:
        keys = ("theta", "gain", "z0", "cbar", "alpha", "band")
        state.update({k: float(v) for k, v in zip(keys, st["ctl"], strict=True)})
    if "label_acceptance" in st:
        la = np.array(st["label_acceptance"], dtype=np.float64)
        state.update(phi=la[0].copy(), rate=la[1].copy(), target=la[2].copy(), label_band=0.3)
    return state


def fresh_units(bmu, counts, keep, factor=20):
    """Robust variant: the kept units that the label's last factor * n_j / n_b rows reached
    (bmu in the set's order); the unit reached last if none."""
    nj = len(bmu)
    last = {}
    for r, b in enumerate(bmu, start=1):  # the last row (1-based) of every unit
        last[int(b)] = r
    fresh = [b for b in keep if (nj - last.get(int(b), 0)) * int(counts[b]) <= factor * nj]
    if not fresh:
        fresh = [max(keep, key=lambda b: last.get(int(b), 0))]
    return np.array(sorted(fresh), dtype=np.int64)


def prob(T, N):
    """P[j, j] = T[j, j] / N; P[j, k] = T[j, k] / T[k, k] (0 when T[k, k] == 0)."""
    L = T.shape[0]
    P = np.zeros((L, L))
    for j in range(L):
        for k in range(L):
            if j == k:
                P[j, j] = T[j, j] / N
            elif T[k, k] > 0:
                P[j, k] = T[j, k] / T[k, k]
    return P


# ---------------------------------------------------------------------------- online phase


def rank_labels(owners, d2, k_nn, n_rank):
    """Repeated k-nearest-neuron vote.

    owners[i] = label of pooled neuron i (global order), d2[i] its squared distance to x.
    """
    order = np.argsort(d2, kind="stable")  # by (distance, global index)
    pool = [owners[i] for i in order]  # labels of the pool, nearest first
    ranking = []
    while len(ranking) < n_rank and pool:
        taken = pool[:k_nn]
        votes = {lab: taken.count(lab) for lab in taken}
        best = max(votes.values())
        # tie: the tied label whose nearest taken neuron comes first in the order
        winner = next(lab for lab in taken if votes[lab] == best)
        ranking.append(winner)
        pool = [lab for lab in pool if lab != winner]
    return ranking


def classify(state, x):
    """Prediction for x from state (no update).

    Returns (Ŷ as a list, BMU of every map as a dict, tie gap): the gap is the smallest
    relative margin of any discrete choice made (BMU, neuron order between labels, accept/reject),
    see tie_gap.
    """
    L, T, N, S = state["L"], state["T"], state["N"], state["S"]
    n_rank = -(-S // N)  # ceil(S / N), exact
    rule = state.get("rule")  # what labels taught the decision rule (ref_learn)
    if rule is not None and rule["z_set"]:
        n_rank = max(n_rank, math.ceil(rule["z"]))
    n_rank = min(n_rank, L)
    owners, weights, bmu, bmu_d2 = [], [], {}, {}
    gap = np.inf
    for j, m in enumerate(state["maps"]):
        if m is None:
            continue
        dj = ((m["weights"] - x) ** 2).sum(axis=1)
        bmu[j] = int(np.argmin(dj))
        bmu_d2[j] = dj[bmu[j]]
        gap = min(gap, tie_gap(dj[None, :], [bmu[j]], m["weights"]))
        owners += [j] * len(dj)
        weights.append(m["weights"])
    W = np.concatenate(weights)
    d2 = ((W - x) ** 2).sum(axis=1)
    ranking = rank_labels(owners, d2, state["k_nn"], n_rank)

    # neighbours in the order that belong to different labels and are not identical neurons
    o = np.argsort(d2, kind="stable")
    a, b = o[:-1], o[1:]
    matters = (np.array(owners)[a] != np.array(owners)[b]) & (W[a] != W[b]).any(axis=1)
    if matters.any():
        gap = min(gap, np.min(((d2[b] - d2[a]) / np.maximum(d2[b], 1e-300))[matters]))

    P = prob(T, N)

    def log(v):
        return math.log(v) if v > 0 else -math.inf

    theta = state.get("theta", 0.0)
    guards = state.get("guards")  # each label's guards (ref_learn), once labels have come
    vetoes = {}  # tested labels: (nearer a guard, nearest guard, nearest support)
    n_rej = 0  # ranked labels whose test was made and failed
    rejected = []  # ... which
    weak = []
    beyond = []  # labels accepted beyond the ranking: predicted, not learnt from
    Y_hat = [ranking[0]]
    # each label's kind for the labelled update: 0 ranked first, 1 tested (with its margin),
    # 2 neither
    kinds = {c: (2, 0.0) for c in range(L)}
    kinds[ranking[0]] = (0, 0.0)
    # once labels have taught the rule (an entry), every label beyond the ranking with a map is
    # tested too, in label order
    extra = []
    slack = {}  # labels accepted beyond the ranking: margin less offset
    if rule is not None and sum(rule["total"]) > 0:
        extra = [c for c in range(L) if state["maps"][c] is not None and c not in ranking]
    for c in ranking[1:] + extra:
        dist_c = bmu_d2[c] if state["squared"] else math.sqrt(bmu_d2[c])
        score = log(P[c, c]) - dist_c
        for d in Y_hat:
            if state["skip"] and P[d, c] == 0:
                continue
            score += log(P[d, c])
        threshold = log(P[c, c]) + log(state["maps"][c]["averout"][bmu[c]])
        for k in range(L):
            if k != c and P[k, c] > 0:
                threshold += log(P[k, c])
        phi = state["phi"][c] if "phi" in state else 0.0
        threshold0, threshold = threshold, threshold + theta + phi
        offset = rule["offsets"][c] if rule is not None else 0.0
        margin = score - threshold
        if math.isfinite(margin):
            kinds[c] = (1, margin)
        if math.isfinite(score) and math.isfinite(threshold):
            gap = min(gap, abs(margin - offset) / (1.0 + abs(threshold) + abs(offset)))
        accepted = margin >= offset if math.isfinite(margin) else score >= threshold
        on = guards is not None and guards["on"][c]
        low = min(offset, 0.0)  # (a labelled entry records it at or above the paper's test)
        if (
            guards is not None
            and guards["g"][c]
            and ((math.isfinite(margin) and margin >= low) or (accepted and on))
        ):
            vetoes[c], g = vetoed(guards, c, x, state["maps"][c]["weights"][bmu[c]])
            gap = min(gap, g)
            if accepted and on and vetoes[c][0]:
                accepted = False  # nearer one of the label's guards: rejected
        if accepted:
            Y_hat.append(c)
            if c in extra:
                beyond.append(c)
                slack[c] = margin - offset
            if offset < 0 and not score >= threshold0:
                if math.isfinite(score) and math.isfinite(threshold0):
                    gap = min(gap, abs(score - threshold0) / (1.0 + abs(threshold0)))
                weak.append(c)  # accepted thanks to the label's offset alone
            elif theta + phi < 0:  # accepted thanks to the offsets alone: not learnt from
                if math.isfinite(score) and math.isfinite(threshold0):
                    gap = min(gap, abs(score - threshold0) / (1.0 + abs(threshold0)))
                if score < threshold0:
                    weak.append(c)
        elif state["skip"] or all(P[d, c] > 0 for d in Y_hat):
            n_rej += 1  # (a zero P[d, c] rules c out without a test)
            rejected.append(c)
    if rule is not None and sum(rule["total"]) > 0 and rule["z_set"]:
        Y_hat, gap = bound_labels(Y_hat, slack, label_cap(rule["z"]), gap)
        weak = [c for c in weak if c in Y_hat]
        beyond = [c for c in beyond if c in Y_hat]
    state["n_rej"] = n_rej
    state["rejected"] = rejected
    state["weak"] = weak
    state["beyond"] = beyond
    state["kinds"] = kinds
    state["vetoes"] = vetoes
    return Y_hat, bmu, gap


def label_cap(z):
    """How many labels an instance may get once labels have taught the rule: the ceiling of the
    labelled cardinality z, at least 1."""
    return max(1, math.ceil(z))


def bound_labels(Y_hat, slack, cap, gap):
    """At most cap labels of Y_hat (in the order tested: ranked first, then beyond the ranking,
    those in slack): the ranked ones in their order, then those beyond the ranking by slack,
    largest first, label order on a tie. Returns (the labels kept, in Y_hat's order; the gap,
    lowered by how near a kept slack is to a dropped one)."""
    if len(Y_hat) <= cap:
        return Y_hat, gap
    ranked = [c for c in Y_hat if c not in slack]
    by_slack = sorted(sorted(slack), key=lambda c: -slack[c])  # stable: label order on a tie
    keep = set(ranked[:cap])
    n_beyond = max(0, cap - len(ranked))
    kept, dropped = by_slack[:n_beyond], by_slack[n_beyond:]
    keep.update(kept)
    for a in kept:
        for b in dropped:
            sa, sb = slack[a], slack[b]
            if math.isfinite(sa) and math.isfinite(sb):
                gap = min(gap, abs(sa - sb) / (1.0 + abs(sa) + abs(sb)))
    return [c for c in Y_hat if c in keep], gap


def _nearest(P, x):
    """(index of the nearest row of P to x, first on a tie; its squared distance; the relative
    gap to the nearest distinct row at another distance: a tie up to rounding)"""
    d = ((np.asarray(P) - x) ** 2).sum(axis=1)
    j = int(np.argmin(d))
    gap = np.inf
    for i in range(len(d)):
        if i != j and (P[i] != P[j]).any():
            gap = min(gap, abs(d[i] - d[j]) / max(d[j], 1e-300))
    return j, d[j], gap


def vetoed(guards, c, x, w_b):
    """Guards (docs/method.md, "Guards"): whether x is strictly nearer one of label c's guards
    than its best-matching unit w_b and every support, with the nearest guard and support (-1:
    none), and the relative gap of those choices (ties up to rounding)."""
    jg, dg, gap = _nearest(guards["g"][c], x)
    dp = float(((x - w_b) ** 2).sum())
    near = [w_b]
    js = -1
    if guards["s"][c]:
        js, ds, g2 = _nearest(guards["s"][c], x)
        gap = min(gap, g2)
        if ds < dp:
            dp, near = ds, [guards["s"][c][js]]
    if not any(np.array_equal(guards["g"][c][jg], p) for p in near):
        gap = min(gap, abs(dg - dp) / max(dp, 1e-300))
    return (bool(dg < dp), jg, js), gap


def ref_stream(state, X, eta=0.05):
    """Classify the rows of X in order, adapting a copy of state. Returns (Y_hat, new state).

    The new state's min_gap also covers the choices made in the stream.
    """
    state = copy.deepcopy(state)
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros((len(X), state["L"]), dtype=np.uint8)
    for i, x in enumerate(X):
        out[i, stream_step(state, x, eta)] = 1
    return out, state


def stream_step(state, x, eta=0.05):
    """One instance of the online phase, in place: classify x, then adapt state. Returns Ŷ."""
    Y_hat, bmu, gap = classify(state, x)
    state["min_gap"] = min(state["min_gap"], gap)
    maps = state["maps"]
    weak, beyond = state.get("weak", ()), state.get("beyond", ())
    learnt = [c for c in Y_hat if c not in weak and c not in beyond]
    state["n_weak"] = state.get("n_weak", 0) + sum(c in weak for c in Y_hat)
    # (1) move the BMU of every predicted label, but those accepted beyond the ranking (and,
    # robust, the weak)
    for c in learnt:
        m = maps[c]["weights"][bmu[c]]
        m += eta * (x - m)
    state["N"] += 1  # (2) counters
    state["S"] += len(Y_hat)
    for c in learnt:  # (3) running mean of the output, after the move
        b = bmu[c]
        d2 = float(((x - maps[c]["weights"][b]) ** 2).sum())
        dist = d2 if state["squared"] else math.sqrt(d2)
        n_b = maps[c]["counts"][b]
        maps[c]["averout"][b] = (n_b * maps[c]["averout"][b] + math.exp(-dist)) / (n_b + 1)
        maps[c]["counts"][b] += 1
    if "drift" in state:  # (3b) robust variant: the drift gate of every label learnt from
        for c in learnt:
            drift_step(state, c, bmu[c], x, eta)
    for j in Y_hat:  # (4) co-occurrence counts (P is recomputed from T and N on use)
        for k in Y_hat:
            state["T"][j, k] += 1
    if "theta" in state:  # (5) robust variant: the acceptance offset tracks z0
        n_y, z0 = len(Y_hat), state["z0"]
        state["cbar"] = state["cbar"] + state["alpha"] * (float(n_y) - state["cbar"])
        if abs(state["cbar"] - z0) > state["band"] * z0:  # outside the dead band
            err = float(n_y) - z0
            if (err > 0 and n_y > 1) or (err < 0 and state["n_rej"] > 0):
                state["theta"] = state["theta"] + state["gain"] * err
    if "phi" in state:  # (6) robust variant: each label's offset tracks its training rate
        for c in range(state["L"]):
            if maps[c] is None:
                continue
            y = 1.0 if c in Y_hat else 0.0
            rate, target = state["rate"], state["target"]
            rate[c] = rate[c] + state["alpha"] * (y - rate[c])
            if abs(rate[c] - target[c]) > state["label_band"] * target[c]:
                err = y - target[c]
                if (err > 0 and c in Y_hat[1:]) or (err < 0 and c in state["rejected"]):
                    state["phi"][c] = state["phi"][c] + state["gain"] * err
    return Y_hat


def drift_step(state, c, b, x, eta):
    """Robust variant: label c learnt from x (its best-matching unit b): its recent mean moves
    towards x; once that mean is farther from the training mean than the limit (squared
    distances, summed in feature order), the gate is open for good, and every other neuron u
    of the map moves towards x by eta * exp(-g^2 / (2 sigma^2)), g its grid distance to b."""
    dr = state["drift"]
    m = dr["mean"][c]
    m += dr["beta"] * (x - m)
    dd = 0.0
    for i in range(len(m)):
        dd += (m[i] - dr["center"][c, i]) * (m[i] - dr["center"][c, i])
    if not dr["open"][c] and dd > dr["limit"][c]:
        dr["open"][c] = True
    if not dr["open"][c]:
        return
    mp = state["maps"][c]
    rb, cb = mp["pos"][b]
    for u in range(len(mp["weights"])):
        if u == b:
            continue
        ru, cu = mp["pos"][u]
        dc = (2 * cu + ru % 2) - (2 * cb + rb % 2)
        g2 = (dc * dc + 3 * (ru - rb) ** 2) / 4.0
        h = math.exp(-g2 / (2.0 * dr["sigma"] * dr["sigma"]))
        w = mp["weights"][u]
        w += (eta * h) * (x - w)


OFFSET_WINDOW, OFFSET_MIN, OFFSET_EVERY, CARD_RATE = 500, 50, 25, 0.02


def best_offset(entries):
    """The F1-optimal acceptance offset of a label over its entries (kind, y, margin), oldest
    first: kind 0 is predicted whatever the offset, kind 2 never, kind 1 iff margin >= offset.
    Every cut of the tested entries sorted by margin (larger first, older first on a tie; no cut
    between equal margins) is tried, F1 compared exactly; of the best, the offset nearest 0,
    the first on a tie. Returns (offset, the smallest relative difference between distinct
    margins and of a margin from 0: the choice's gap)."""
    return best_offset_f(entries)[:2]


def best_offset_f(entries, vetoes=None):
    """best_offset, and its F1 (a Fraction). With vetoes (one flag per entry; guards), a tested
    entry whose instance was nearer one of the label's guards is never predicted, whatever the
    offset; it still separates the cuts."""
    v = vetoes if vetoes is not None else [0] * len(entries)
    tp0 = sum(1 for k, y, _ in entries if k == 0 and y == 1)
    fp0 = sum(1 for k, y, _ in entries if k == 0 and y == 0)
    fn0 = sum(
        1
        for (k, y, _), vv in zip(entries, v, strict=True)
        if y == 1 and (k == 2 or (k == 1 and vv))
    )
    tested = sorted(
        ((m, i, y, v[i]) for i, (k, y, m) in enumerate(entries) if k == 1),
        key=lambda e: (-e[0], e[1]),
    )
    n1, npos = len(tested), sum(y for _, _, y, vv in tested if not vv)
    gap = min((abs(m) for m, _, _, _ in tested), default=math.inf)
    for (a, _, _, _), (b, _, _, _) in zip(tested[:-1], tested[1:], strict=True):
        if a != b:
            gap = min(gap, (a - b) / (1.0 + abs(a)))
    best, best_f, best_t = None, None, 0.0
    for i in range(n1 + 1):
        if 0 < i < n1 and tested[i - 1][0] == tested[i][0]:
            continue
        tp = sum(y for _, _, y, vv in tested[:i] if not vv)
        fp = sum(1 - y for _, _, y, vv in tested[:i] if not vv)
        f = Fraction(2 * (tp0 + tp), max(2 * (tp0 + tp) + fp0 + fp + fn0 + npos - tp, 1))
        hi = math.inf if i == 0 else tested[i - 1][0]
        lo = -math.inf if i == n1 else tested[i][0]
        if lo < 0.0 <= hi:
            t = 0.0
        elif hi < 0.0:
            t = hi
        else:
            t = math.nextafter(lo, math.inf)
        if best is None or f > best_f or (f == best_f and abs(t) < abs(best_t)):
            best, best_f, best_t = i, f, t
    return best_t, gap, best_f


def learn_rule(state, y, kinds):
    """The decision rule learns from one labelled instance: an entry for every label with a map
    whose value is known (its offset chosen again when due), and the labelled cardinality when
    every label is known (from S / N at first)."""
    L = state["L"]
    rule = state.setdefault(
        "rule",
        dict(offsets=[0.0] * L, entries=[[] for _ in range(L)], total=[0] * L, z=0.0, z_set=False),
    )
    rule.setdefault("vetoes", [[] for _ in range(L)])
    guards = state.get("guards")
    vetoes = state.get("vetoes", {})
    npos = 0
    for c in range(L):
        if state["maps"][c] is None or y[c] < 0:
            continue
        npos += int(y[c] == 1)
        kind, m = kinds[c]
        rule["entries"][c] = (rule["entries"][c] + [(kind, int(y[c] == 1), m)])[-OFFSET_WINDOW:]
        veto = int(kind == 1 and c in vetoes and vetoes[c][0])
        rule["vetoes"][c] = (rule["vetoes"][c] + [veto])[-OFFSET_WINDOW:]
        rule["total"][c] += 1
        t = rule["total"][c]
        if t >= OFFSET_MIN and t % OFFSET_EVERY == 0:
            rule["offsets"][c], g, f0 = best_offset_f(rule["entries"][c])
            state["min_gap"] = min(state["min_gap"], g)
            if guards is not None:  # with its guards, if they do strictly better
                t1, _, f1 = best_offset_f(rule["entries"][c], rule["vetoes"][c])
                guards["on"][c] = f1 > f0
                if f1 > f0:
                    rule["offsets"][c] = t1
    if all(v >= 0 for v in y):
        if not rule["z_set"]:
            rule["z"], rule["z_set"] = state["S"] / state["N"], True
        rule["z"] = rule["z"] + CARD_RATE * (float(npos) - rule["z"])


PAIR_USES, PAIR_WINDOW, PAIR_MIN, PAIR_Z = 5, 200, 10, 2.0
GUARD_CAP = 16  # a label's guards and supports: at most min(its map's neurons, GUARD_CAP)


def paired_tests(state, x, y, Y_hat, bmu):
    """corrections="tested": before a labelled instance's moves, every pending other choice
    (state["alt"][(c, b)] = [where it would have put neuron b, strong choice made, tries]) of
    a map c whose label is known is tried when b is c's best-matching unit or would be nearer x
    than it in the other place: x is classified again with b there. Where the two
    classifications get a different number of x's known labels right, the pair (1: the strong
    choice did better) joins the model's pairs. Each choice is tried PAIR_USES times at most;
    maps in label order, neurons in index order."""
    alt, pairs = state["alt"], state["pairs"]
    saved = (state["kinds"], state["n_rej"], state["weak"], state["beyond"], state["vetoes"])
    known = [k for k in range(state["L"]) if y[k] >= 0]
    right = sum((k in Y_hat) == (y[k] == 1) for k in known)
    for c in known:
        if state["maps"][c] is None:
            continue
        W = state["maps"][c]["weights"]
        d_win = float(((x - W[bmu[c]]) ** 2).sum())
        for cc, b in sorted(alt):
            if cc != c:
                continue
            there, strong, uses = alt[(c, b)]
            d_alt = float(((x - there) ** 2).sum())
            if b != bmu[c]:
                if not np.array_equal(there, W[bmu[c]]):  # (one point: no rounding tie)
                    rel = abs(d_alt - d_win) / max(d_win, 1e-300)
                    state["min_gap"] = min(state["min_gap"], rel)
                if not d_alt < d_win:
                    continue
            if uses + 1 >= PAIR_USES:
                del alt[(c, b)]
            else:
                alt[(c, b)][2] = uses + 1
            orig = W[b].copy()
            W[b] = there
            y_alt, _, gap = classify(state, x)
            W[b] = orig
            state["min_gap"] = min(state["min_gap"], gap)
            right_alt = sum((k in y_alt) == (y[k] == 1) for k in known)
            if right != right_alt:
                pairs.append(int((right > right_alt) == strong))
    state["kinds"], state["n_rej"], state["weak"], state["beyond"], state["vetoes"] = saved


def pairs_strong(state):
    """Whether the strong corrections run: over the last PAIR_WINDOW pairs (at least
    PAIR_MIN), the strong choice won at least PAIR_Z sqrt(n) more than it lost."""
    t = state["pairs"][-PAIR_WINDOW:]
    return len(t) >= PAIR_MIN and 2 * sum(t) - len(t) >= PAIR_Z * math.sqrt(len(t))


def ref_learn(state, X, Y, eta=0.05, rate=0.5, tested=False):
    """Labelled instances in order (partial_fit): returns the new state (a copy).

    For each (x, y), y in {1, 0, -1}^L: classify x; for every label c with a map and y_c known,
    y_c = 1: the BMU of map c moves towards x by eta if c was predicted, by rate otherwise, and
    its averOut takes x (after the move); y_c = 0 and c predicted: the BMU moves onto the last
    labelled positive of c, if any (a copy), which is used up. Then each positive's last
    positive is x; T, N and S do not change; the decision rule learns (learn_rule).

    Guards (docs/method.md, "Guards"): for every tested label c whose value is known and
    whose Bayes test accepts x (margin >= its offset), a negative that none of c's guards took
    joins them, a positive that one took joins c's supports; once a label has min(its map's
    neurons, GUARD_CAP) of them, the nearest moves towards x by eta instead. Whether the
    label's decisions use its guards is chosen with its offset (learn_rule).

    tested (corrections="tested"): the pending other choices are tried first (paired_tests);
    a miss moves by rate and a false alarm onto the positive only while pairs_strong, else a
    miss moves by eta and a false alarm moves nothing (the positive stays); every correction
    keeps where the other choice would have put the neuron (state["alt"]).
    """
    state = copy.deepcopy(state)
    X = np.asarray(X, dtype=np.float64)
    maps, L = state["maps"], state["L"]
    last = state.setdefault("last_positive", {})
    if tested:
        state.setdefault("alt", {})
        state.setdefault("pairs", [])
    guards = state.setdefault(
        "guards", dict(g=[[] for _ in range(L)], s=[[] for _ in range(L)], on=[False] * L)
    )
    for x, y in zip(X, np.asarray(Y), strict=True):
        Y_hat, bmu, gap = classify(state, x)
        state["min_gap"] = min(state["min_gap"], gap)
        strong = True
        if tested:
            paired_tests(state, x, y, Y_hat, bmu)
            strong = pairs_strong(state)
        offsets = state["rule"]["offsets"] if "rule" in state else [0.0] * L
        for c in range(L):
            kind, margin = state["kinds"][c]
            if maps[c] is None or y[c] < 0 or kind != 1 or not margin >= offsets[c]:
                continue  # (only what the label's test accepts: a false alarm or a taken hit)
            v, jg, js = state["vetoes"].get(c, (False, -1, -1))
            size = min(len(maps[c]["weights"]), GUARD_CAP)
            if y[c] == 0 and not v:
                _add_prototype(guards["g"][c], size, x, jg, eta)
            elif y[c] == 1 and v:
                _add_prototype(guards["s"][c], size, x, js, eta)
        known = []
        for c in range(L):
            if maps[c] is None or y[c] < 0:
                continue
            m = maps[c]["weights"][bmu[c]]
            if y[c] == 1:
                known.append(c)
                step = eta if c in Y_hat or not strong else rate
                if tested and c not in Y_hat:
                    other = rate if step == eta else eta
                    state["alt"][(c, bmu[c])] = [m + other * (x - m), step == rate, 0]
                m += step * (x - m)
                b = bmu[c]
                d2 = float(((x - m) ** 2).sum())
                dist = d2 if state["squared"] else math.sqrt(d2)
                n_b = maps[c]["counts"][b]
                maps[c]["averout"][b] = (n_b * maps[c]["averout"][b] + math.exp(-dist)) / (n_b + 1)
                maps[c]["counts"][b] += 1
            elif c in Y_hat and c in last:
                if tested:
                    there = m.copy() if strong else last[c].copy()
                    state["alt"][(c, bmu[c])] = [there, strong, 0]
                    if not strong:
                        continue  # nothing moves; the positive stays
                m[:] = last.pop(c)  # used once
        for c in known:
            last[c] = x.copy()
        # T, N and S stay: the instance was counted as its prediction when the stream saw it
        learn_rule(state, y, state["kinds"])
    return state


def _add_prototype(P, size, x, near, eta):
    """A guard or support: x joins P while it holds fewer than size; else P[near] moves
    towards x by eta."""
    if len(P) < size:
        P.append(x.copy())
    else:
        P[near] = P[near] + eta * (x - P[near])


def ref_predict(state, X):
    """Frozen prediction: each row as the next instance of the stream, no update.

    Returns (Y_hat, smallest tie gap over the rows)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.zeros((len(X), state["L"]), dtype=np.uint8)
    gap = np.inf
    for i, x in enumerate(X):
        Y_hat, _, g = classify(state, x)
        out[i, Y_hat] = 1
        gap = min(gap, g)
    return out, gap


# ---------------------------------------------------------------------------- label persistence


def _example_f1(pred, y):
    """F1 of one prediction over the known labels of y (-1: unknown), exactly: 2 hits / (true +
    predicted), 1 when both are empty."""
    known = y >= 0
    hits = int(((pred == 1) & (y == 1) & known).sum())
    den = int(((y == 1) & known).sum() + ((pred == 1) & known).sum())
    return Fraction(1) if den == 0 else Fraction(2 * hits, den)


def persistence_reference(events, window=200, min_pairs=10, z=2.0):
    """Label persistence (docs/method.md, "Labels that persist"), one event at a time.

    ``events``: ("step", x, y_model) for each instance classified, with the model's own
    prediction (the maps never see the proposal, so a model with ``label_persistence="off"``
    gives these), and ("label", x, y) for each labelled row, in the order they happen. Returns
    the predictions given and the list of every pair's outcome (1: the proposal won).

    The record starts at the first labelled row: that row is never prompt, and only instances
    classified after it can have prompt labels. A label is prompt when it is the first label
    since the last instance classified that equals that instance; its labels are then the
    proposal for the next instance, scored against the model's prediction by their F1 over the
    label's known labels when the label arrives; it is given where the test (over the last
    ``window`` pairs, at least ``min_pairs``, wins - losses >= z sqrt(pairs)) says so."""
    ring, out = [], []
    prior, fresh, last, started = None, False, None, False
    for kind, x, y in events:
        if kind == "step":
            prop = np.where(prior >= 0, prior, y) if fresh else None
            n = min(len(ring), window)
            won = sum(ring[len(ring) - n :])
            give = prop is not None and n >= min_pairs and 2 * won - n >= z * math.sqrt(n)
            out.append(np.array(prop if give else y, dtype=np.uint8))
            last = {"x": x, "y": y, "prop": prop, "open": True} if started else None
            fresh = False
        elif not started:
            started = True
        elif last is not None and last["open"] and np.array_equal(x, last["x"]):
            last["open"] = False
            if last["prop"] is not None:
                f_prop, f_model = _example_f1(last["prop"], y), _example_f1(last["y"], y)
                if f_prop != f_model:
                    ring.append(int(f_prop > f_model))
            prior, fresh = np.array(y), True
    return np.array(out).reshape(len(out), -1), ring


# ------------------------------------------------------------------ novelty detection


def novelty_explained(X, W, radius):
    """Whether each row of X lies within the radius of some neuron: for every row and every
    neuron b (a column of W, the neurons (A, M)), the sum of the squared differences, feature by
    feature, against radius[b] squared."""
    X = np.asarray(X, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    out = np.zeros(len(X), dtype=bool)
    for i, x in enumerate(X):
        for b in range(W.shape[1]):
            if np.sum((np.array(W[:, b]) - x) ** 2) <= float(radius[b]) ** 2:
                out[i] = True
                break
    return out


def novelty_kmeans(B, k, rng, max_iter=50):
    """Lloyd's k-means, plainly: k distinct rows drawn by rng (in increasing row order) as the
    first centres; each row to its nearest centre (the first on a tie; squared distances summed
    over the features in order); each centre the sum of its rows in row order over their number
    (unchanged when it has none); until no row changes group."""
    B = np.asarray(B, dtype=np.float64)
    centres = [B[i].copy() for i in sorted(rng.choice(len(B), size=k, replace=False))]
    assign = [-1] * len(B)
    for _ in range(max_iter):
        new = []
        for x in B:
            d = []
            for c in centres:
                total = 0.0
                for a in range(len(x)):  # the features in order
                    total += (x[a] - c[a]) ** 2
                d.append(total)
            new.append(d.index(min(d)))
        if new == assign:
            break
        assign = new
        for c in range(k):
            rows = [B[i] for i in range(len(B)) if assign[i] == c]
            if rows:
                total = np.zeros(B.shape[1])
                for r in rows:  # in row order
                    total = total + r
                centres[c] = total / len(rows)
    return np.array(assign), np.array(centres)


def novelty_judge(G, centre, W, radius, extension=1.1):
    """A group's fate: None when not cohesive (the mean distance of its rows to their centre at
    least the centre's distance to the nearest neuron); else the neuron whose sphere's surface
    is nearest the centre, when the centre is within ``extension`` times its radius of it (an
    extension of its label), or -1 (a new label)."""
    W = np.asarray(W, dtype=np.float64)
    dist = [math.sqrt(float(np.sum((np.array(W[:, b]) - centre) ** 2))) for b in range(W.shape[1])]
    spread = [math.sqrt(float(np.sum((g - centre) ** 2))) for g in G]
    if not min(dist) > float(np.mean(spread)):
        return None
    surface = [dist[b] - radius[b] for b in range(len(dist))]
    b = surface.index(min(surface))
    return b if dist[b] <= extension * radius[b] else -1
