"""NumPy baselines the benchmarks measure mlsom against, in the same run.

* ``NumpyOnline``: the online phase as a per-instance Python loop whose every step is vectorised
  with NumPy over the neurons (the natural way to write the method without a compiled core).
* ``numpy_batch_som``: batch Kohonen training with the distances from one BLAS matrix product per
  epoch (``|x|^2 - 2 X W^T + |w|^2``) and the unit sums from a second one (one-hot^T X).
"""

import math

import numpy as np


class NumpyOnline:
    """From a fitted SOMStreamClassifier's state, classify and adapt one instance at a time."""

    def __init__(self, model):
        st = model._state
        self.W = np.ascontiguousarray(st["Wt"].T)  # (M, A), row per neuron
        self.cls = st["ncls"].astype(np.int64)
        self.offsets = st["offsets"]
        self.counts = st["counts"].astype(np.float64)
        self.log_averout = st["log_averout"].copy()
        self.T = st["T"].copy()
        self.N, self.S = (int(v) for v in st["NS"])
        self.k = st["k_nn"]
        self.eta = model.learning_rate  # read at each call, as the model does
        self.L = self.T.shape[0]
        self.mapped = np.flatnonzero(np.diff(self.offsets) > 0)

    def step(self, x):
        W, L, k = self.W, self.L, self.k
        d2 = ((W - x) ** 2).sum(axis=1)
        win = np.full(L, -1)
        for c in self.mapped:
            lo, hi = self.offsets[c], self.offsets[c + 1]
            win[c] = lo + np.argmin(d2[lo:hi])
        n_rank = min(-(-self.S // self.N), L)
        order = np.lexsort((np.arange(len(d2)), d2))  # by distance, then index
        alive = np.ones(L, dtype=bool)
        rank = []
        for _ in range(n_rank):
            pool = order[alive[self.cls[order]]]
            if pool.size == 0:
                break
            votes = np.bincount(self.cls[pool[:k]], minlength=L)
            top = np.flatnonzero(votes == votes.max())
            # ties: the class whose best-matching unit is nearest (then the lower index)
            best = min(top, key=lambda c: (d2[win[c]], win[c]))
            rank.append(int(best))
            alive[best] = False
        T = self.T
        with np.errstate(divide="ignore"):
            logC = np.log(T / np.maximum(np.diag(T), 1)[None, :])
        y = [rank[0]]
        for c in rank[1:]:
            inY = np.zeros(L, dtype=bool)
            inY[y] = True
            if (T[inY, c] == 0).any():
                continue
            rest = (~inY) & (np.arange(L) != c) & (T[:, c] > 0)
            if -math.sqrt(d2[win[c]]) - self.log_averout[win[c]] >= logC[rest, c].sum():
                y.append(c)
        b = win[y]
        W[b] += self.eta * (x - W[b])
        self.N += 1
        self.S += len(y)
        dn = np.sqrt(((W[b] - x) ** 2).sum(axis=1))
        n = self.counts[b]
        self.log_averout[b] = np.logaddexp(np.log(n) + self.log_averout[b], -dn) - np.log(n + 1)
        self.counts[b] = n + 1
        T[np.ix_(y, y)] += 1
        out = np.zeros(L, dtype=np.uint8)
        out[y] = 1
        return out

    def run(self, X):
        return np.array([self.step(x) for x in X])


def hex_grid_distances(d):
    r, c = np.divmod(np.arange(d * d), d)
    c2 = 2 * c + r % 2
    return np.sqrt(((c2[:, None] - c2[None, :]) ** 2 + 3 * (r[:, None] - r[None, :]) ** 2) / 4.0)


def numpy_batch_som(X, W0, n_epochs):
    """Batch SOM (bubble neighbourhood, linear radius schedule), BLAS for the heavy products."""
    d = int(round(math.sqrt(W0.shape[0])))
    G = hex_grid_distances(d)
    r0 = np.quantile(G, 2 / 3)
    W = W0.copy()
    x2 = (X * X).sum(1)
    M = W.shape[0]
    bmu = np.argmin(x2[:, None] - 2 * X @ W.T + (W * W).sum(1)[None, :], axis=1)
    for e in range(n_epochs):
        r = r0 * (n_epochs - e) / n_epochs
        onehot = np.zeros((X.shape[0], M))
        onehot[np.arange(X.shape[0]), bmu] = 1.0
        sums = onehot.T @ X
        cnt = onehot.sum(0)
        H = (G <= r).astype(np.float64) if r >= 1 else np.eye(M)
        num, den = H @ sums, H @ cnt
        ok = den > 0
        W[ok] = num[ok] / den[ok, None]
        bmu = np.argmin(x2[:, None] - 2 * X @ W.T + (W * W).sum(1)[None, :], axis=1)
    return W, bmu
