"""MINAS-BR, the delayed-label baseline: its mechanisms one by one, a plain per-instance reference
of the whole online phase, the estimator contract, and a run on the paper's real stream."""

import inspect
import math
import pickle

import numpy as np
import pytest

from mlsom.baselines import MINASBR
from mlsom.baselines._minas import _candidate_votes, _group_nearest, _leaders
from mlsom.datasets import load
from mlsom.evaluation import confusion_counts, macro_f1
from mlsom.exceptions import NotFittedError
from tests.helpers.paths import DATA

# ---------------------------------------------------------------------------------- data


def blobs(n, seed=0, centres=((0.0, 0.0), (6.0, 0.0), (0.0, 6.0)), scale=0.7, p_double=0.0):
    """Stationary, separable stream: one label per instance (two with probability p_double, the
    instance then lying between its two centres)."""
    rng = np.random.default_rng(seed)
    C = np.asarray(centres)
    L = len(C)
    Y = np.zeros((n, L), dtype=np.uint8)
    Y[np.arange(n), rng.integers(0, L, n)] = 1
    extra = rng.random(n) < p_double
    Y[np.flatnonzero(extra), rng.integers(0, L, extra.sum())] = 1
    X = (Y @ C) / Y.sum(1, keepdims=True) + rng.normal(scale=scale, size=(n, C.shape[1]))
    return X, Y


def drifting(n_train=400, n_stream=3000, seed=0):
    """Three moving blobs (multi-label instances between them) and, in the second half, a fourth
    blob no training label describes. Every mechanism of MINAS-BR fires on it."""
    rng = np.random.default_rng(seed)
    n = n_train + n_stream
    C0 = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    V = np.array([[2.0, 1.0], [0.0, 3.0], [3.0, 0.0]])
    Y = np.zeros((n, 3), dtype=np.uint8)
    Y[np.arange(n), rng.integers(0, 3, n)] = 1
    extra = rng.random(n) < 0.25
    Y[np.flatnonzero(extra), rng.integers(0, 3, extra.sum())] = 1
    s = np.clip(np.arange(n) - n_train, 0, None)[:, None, None] / n_stream
    C = C0[None] + s * V[None]  # (n, 3, 2)
    X = (Y[:, :, None] * C).sum(1) / Y.sum(1, keepdims=True) + rng.normal(scale=0.6, size=(n, 2))
    novel = (np.arange(n) > n_train + n_stream // 2) & (rng.random(n) < 0.2)
    X[novel] = np.array([10.0, -6.0]) + rng.normal(scale=0.5, size=(novel.sum(), 2))
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


def one_cluster_model(n_labels=2, seed=0, **params):
    """Each label is one tight blob learnt as exactly one micro-cluster (k_ini small enough)."""
    centres = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)][:n_labels]
    X, Y = blobs(200 * n_labels, seed=seed, centres=centres, scale=0.5)
    params.setdefault("k_ini", 1e-4)
    model = MINASBR(random_state=0, **params).fit(X, Y)
    assert model.n_offline_clusters_.tolist() == [1] * n_labels
    return model


def tight_cloud(centre, n, seed=0, scale=0.05):
    rng = np.random.default_rng(seed)
    return np.asarray(centre) + rng.normal(scale=scale, size=(n, 2))


# ---------------------------------------------------------------------------------- reference


class ReferenceMINASBR:
    """The online phase written the plain way, one instance at a time, with Python loops over
    models and micro-clusters, from the fitted offline model of a MINASBR."""

    def __init__(self, fitted, theta, omega, f, min_size=3, max_iter=101, selection="all"):
        self.L = fitted.n_labels_
        self.card = fitted.cardinality_
        self.theta, self.omega, self.f = theta, omega, f
        self.min_size, self.max_iter, self.selection = min_size, max_iter, selection
        self.models = {}
        for c, r, w, g in zip(
            fitted.cluster_centers_,
            fitted.cluster_radii_,
            fitted.cluster_weights_,
            fitted.cluster_models_,
            strict=True,
        ):
            self.models.setdefault(int(g), []).append(
                dict(c=c.copy(), r=float(r), w=float(w), cat="normal", used=0)
            )
        self.next_model = self.L
        self.t = 0
        self.last = 0
        self.stm = []  # (x, t)
        self.n_ext = self.n_np = self.n_forgotten = 0
        self.pattern_votes = []  # (t, pattern k) for every novelty pattern's vote kept

    @staticmethod
    def dist(x, c):
        s = 0.0
        for a in range(len(x)):
            s += (float(x[a]) - float(c[a])) ** 2
        return math.sqrt(s)

    def nearest(self, x, mcs):
        best, bd = 0, math.inf
        for j, mc in enumerate(mcs):
            d = self.dist(x, mc["c"])
            if d < bd:
                best, bd = j, d
        return best, bd

    def step(self, x):
        self.t += 1
        t = self.t
        votes = {}
        for g in sorted(self.models):
            mcs = self.models[g]
            j, d = self.nearest(x, mcs)
            if d <= mcs[j]["r"]:
                votes[g] = d
                mcs[j]["used"] = t
        y = np.zeros(self.L, dtype=np.uint8)
        if votes:
            keep = list(votes)
            if self.selection == "closest":
                keep = sorted(keep, key=lambda g: votes[g])[: self.card]
            for g in keep:
                if g < self.L:
                    y[g] = 1
                else:
                    self.pattern_votes.append((t, g - self.L))
        else:
            self.stm.append((np.array(x), t))
            if len(self.stm) >= self.theta and self.last + self.theta < t:
                self.detect()
        if t % self.omega == 0:
            limit = t - self.omega
            self.stm = [(s, ts) for s, ts in self.stm if ts >= limit]
            for g in list(self.models):
                kept = [mc for mc in self.models[g] if mc["used"] >= limit]
                self.n_forgotten += len(self.models[g]) - len(kept)
                if kept:
                    self.models[g] = kept
                else:
                    del self.models[g]
        return y

    def kmeans(self, S, centres):
        centres = [c.copy() for c in centres]

        def assign_all():
            return [
                min(range(len(centres)), key=lambda k: (self.dist(s, centres[k]), k)) for s in S
            ]

        assign = assign_all()
        for _ in range(self.max_iter):
            for k in range(len(centres)):
                members = [S[i] for i in range(len(S)) if assign[i] == k]
                if members:
                    centres[k] = np.mean(members, axis=0)
            new = assign_all()
            if new == assign:
                break
            assign = new
        return assign

    def detect(self):
        t = self.t
        self.last = t
        if not self.models:
            return
        S = [s for s, _ in self.stm]
        r_max = max(mc["r"] for mcs in self.models.values() for mc in mcs)
        leaders = [0]
        for i in range(1, len(S)):
            if all(self.dist(S[i], S[j]) >= r_max for j in leaders):
                leaders.append(i)
        assign = self.kmeans(S, [S[i] for i in leaders])
        used = set()
        for k in range(len(leaders)):
            rows = [i for i in range(len(S)) if assign[i] == k]
            if len(rows) < self.min_size:
                continue
            P = np.array([S[i] for i in rows])
            c = P.mean(axis=0)
            r_c = 2.0 * math.sqrt(((P - c) ** 2).mean(axis=0).sum())
            a = r_c / 2
            ext, any_valid = [], False
            for g in sorted(self.models):
                mcs = self.models[g]
                j, b = self.nearest(c, mcs)
                if not (max(a, b) > 0 and (b - a) / max(a, b) > 0):
                    continue
                any_valid = True
                r_star = mcs[j]["r"]
                if b < self.f * r_star / 2 or b < r_star / 2 + a:
                    ext.append((g, mcs[j]))
            if not any_valid:
                continue
            used.update(rows)
            if len(ext) > self.card:
                self.n_ext += 1
                for g, m_star in ext:
                    cat = "ext" if m_star["cat"] in ("normal", "ext") else "extNov"
                    self.models[g].append(dict(c=c, r=r_c, w=float(len(rows)), cat=cat, used=t))
            else:
                self.n_np += 1
                new = [dict(m_star, cat="nov", used=t) for _, m_star in ext]
                new.append(dict(c=c, r=r_c, w=float(len(rows)), cat="nov", used=t))
                self.models[self.next_model] = new
                self.next_model += 1
        self.stm = [e for i, e in enumerate(self.stm) if i not in used]

    def run(self, X):
        return np.array([self.step(x) for x in X], dtype=np.uint8).reshape(len(X), self.L)


@pytest.mark.parametrize(
    "params",
    [
        dict(theta=20, omega=150, f=1.1),
        dict(theta=30, omega=100, f=50.0),  # extensions
        dict(theta=15, omega=250, f=1.1, label_selection="closest"),
    ],
)
def test_matches_the_plain_reference(params):
    Xtr, Ytr, Xs, _ = drifting(n_stream=1800, seed=3)
    model = MINASBR(k_ini=0.03, random_state=0, **params).fit(Xtr, Ytr)
    ref = ReferenceMINASBR(
        model,
        params["theta"],
        params["omega"],
        params["f"],
        selection=params.get("label_selection", "all"),
    )
    ours = model.predict_stream(Xs)
    np.testing.assert_array_equal(ours, ref.run(Xs))
    # every mechanism actually ran, so the comparison covers it
    assert model.n_novelty_detections_ > 0 and model.n_forgotten_ > 0
    assert model.n_novelty_patterns_ + model.n_extensions_ > 0
    if params["f"] > 10:
        assert model.n_extensions_ > 0
    assert (model.n_extensions_, model.n_novelty_patterns_, model.n_forgotten_) == (
        ref.n_ext,
        ref.n_np,
        ref.n_forgotten,
    )
    assert len(model.short_term_memory_) == len(ref.stm)
    assert model.n_seen_ == ref.t == len(Xs)


@pytest.mark.parametrize("selection", ["all", "closest"])
def test_novelty_pattern_votes_match_the_plain_reference(selection):
    Xtr, Ytr, Xs, _ = drifting(n_stream=1800, seed=3)
    params = dict(theta=20, omega=150, f=1.1, label_selection=selection)
    model = MINASBR(k_ini=0.03, random_state=0, **params).fit(Xtr, Ytr)
    ref = ReferenceMINASBR(model, 20, 150, 1.1, selection=selection)
    Y, unknown, P = model.predict_stream(Xs, return_unknown=True, return_patterns=True)
    np.testing.assert_array_equal(Y, ref.run(Xs))
    assert P.shape == (len(Xs), model.n_novelty_patterns_) and P.dtype == np.uint8
    expected = np.zeros_like(P)
    for t, k in ref.pattern_votes:
        expected[t - 1, k] = 1
    np.testing.assert_array_equal(P, expected)
    assert P.any() and not P[unknown].any()  # patterns voted, never on an unknown row
    # the counter of rows a pattern explained counts them (under "all", every vote is kept)
    if selection == "all":
        assert model.n_novelty_explained_ == int(P.any(axis=1).sum())


def test_novelty_pattern_votes_do_not_depend_on_chunking():
    Xtr, Ytr, Xs, _ = drifting(seed=4)
    params = dict(k_ini=0.03, theta=20, omega=150, random_state=0)
    whole = MINASBR(**params).fit(Xtr, Ytr)
    Y_w, P_w = whole.predict_stream(Xs, return_patterns=True)
    parts = MINASBR(**params).fit(Xtr, Ytr)
    out = [parts.predict_stream(c, return_patterns=True) for c in np.array_split(Xs, 7)]
    n_p = out[-1][1].shape[1]
    assert n_p == P_w.shape[1] > 0
    P_parts = np.vstack([np.pad(P, ((0, 0), (0, n_p - P.shape[1]))) for _, P in out])
    np.testing.assert_array_equal(P_w, P_parts)
    np.testing.assert_array_equal(Y_w, np.vstack([Y for Y, _ in out]))
    with pytest.raises(TypeError, match="return_patterns must be a bool, got 1"):
        whole.predict_stream(Xs[:3], return_patterns=1)


# ---------------------------------------------------------------------------------- it learns


def test_beats_the_most_frequent_label():
    X, Y = blobs(4000, seed=1, p_double=0.1)
    model = MINASBR(k_ini=0.05, theta=50, omega=500, random_state=0).fit(X[:800], Y[:800])
    Y_hat = model.predict_stream(X[800:])
    ours = macro_f1(confusion_counts(Y[800:], Y_hat))
    trivial = np.zeros_like(Y[800:])
    trivial[:, Y[:800].sum(0).argmax()] = 1
    base = macro_f1(confusion_counts(Y[800:], trivial))
    assert ours > 0.8 > base + 0.3
    assert Y_hat.dtype == np.uint8 and Y_hat.shape == (3200, 3)


def test_predictions_do_not_depend_on_stream_labels():
    Xtr, Ytr, Xs, Ys = drifting(seed=5)
    assert "Y" not in inspect.signature(MINASBR.predict_stream).parameters
    rng = np.random.default_rng(0)
    garbage = {
        "true": Ys,
        "permuted": Ys[rng.permutation(len(Ys))],
        "random": rng.integers(0, 2, Ys.shape).astype(np.uint8),
    }
    predictions, scores = {}, {}
    for name, labels in garbage.items():
        model = MINASBR(k_ini=0.03, theta=20, omega=200, random_state=0).fit(Xtr, Ytr)
        counts = np.zeros((3, 4), dtype=np.int64)
        out = []
        for lo in range(0, len(Xs), 250):  # an evaluation loop: predict a chunk, then score it
            Y_hat = model.predict_stream(Xs[lo : lo + 250])
            counts += confusion_counts(labels[lo : lo + 250], Y_hat)
            out.append(Y_hat)
        predictions[name] = np.concatenate(out)
        scores[name] = macro_f1(counts)
    np.testing.assert_array_equal(predictions["true"], predictions["permuted"])
    np.testing.assert_array_equal(predictions["true"], predictions["random"])
    # the labels changed the scores, not the predictions
    assert scores["true"] > scores["permuted"] + 0.1
    assert scores["true"] > scores["random"] + 0.1


# ---------------------------------------------------------------------------------- determinism


def test_same_seed_same_results_other_seed_other_centres():
    Xtr, Ytr, Xs, _ = drifting(seed=2)

    def run(seed):
        m = MINASBR(k_ini=0.03, theta=20, omega=200, random_state=seed).fit(Xtr, Ytr)
        return m.cluster_centers_, m.predict_stream(Xs), m

    c0, y0, m0 = run(7)
    c1, y1, m1 = run(7)
    np.testing.assert_array_equal(c0, c1)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(m0.cluster_centers_, m1.cluster_centers_)
    c2, _, _ = run(8)
    assert c2.shape != c0.shape or not np.array_equal(c0, c2)
    # a Generator works too, and init="first" needs no seed
    MINASBR(k_ini=0.03, random_state=np.random.default_rng(1)).fit(Xtr, Ytr)
    a = MINASBR(k_ini=0.03, init="first").fit(Xtr, Ytr).cluster_centers_
    b = MINASBR(k_ini=0.03, init="first", random_state=99).fit(Xtr, Ytr).cluster_centers_
    np.testing.assert_array_equal(a, b)


def test_chunking_does_not_change_anything():
    Xtr, Ytr, Xs, _ = drifting(seed=4)
    params = dict(k_ini=0.03, theta=20, omega=150, random_state=0)
    whole = MINASBR(**params).fit(Xtr, Ytr)
    Y_whole, unk_whole = whole.predict_stream(Xs, return_unknown=True)
    assert whole.n_novelty_detections_ > 0 and whole.n_forgotten_ > 0

    halves = MINASBR(**params).fit(Xtr, Ytr)
    h = len(Xs) // 2
    Y_halves = np.vstack([halves.predict_stream(Xs[:h]), halves.predict_stream(Xs[h:])])
    np.testing.assert_array_equal(Y_whole, Y_halves)

    ragged = MINASBR(**params).fit(Xtr, Ytr)
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(np.arange(1, len(Xs)), size=60, replace=False))
    parts = [ragged.predict_stream(p, return_unknown=True) for p in np.split(Xs, cuts)]
    ragged.predict_stream(Xs[:0])  # an empty chunk is a no-op
    np.testing.assert_array_equal(Y_whole, np.vstack([p[0] for p in parts]))
    np.testing.assert_array_equal(unk_whole, np.concatenate([p[1] for p in parts]))
    for m in (halves, ragged):
        np.testing.assert_array_equal(m.cluster_centers_, whole.cluster_centers_)
        np.testing.assert_array_equal(m.cluster_last_used_, whole.cluster_last_used_)
        np.testing.assert_array_equal(m.short_term_memory_, whole.short_term_memory_)
        assert m.n_unknown_ == whole.n_unknown_ == int(unk_whole.sum())


# ---------------------------------------------------------------------------------- mechanisms


def test_radius_test_accepts_inside_rejects_outside():
    model = one_cluster_model(theta=10**6)
    c, r = model.cluster_centers_, model.cluster_radii_
    assert (r > 0).all()
    direction = np.array([0.6, 0.8])
    X = np.array(
        [
            c[0] + 0.9 * r[0] * direction,
            c[0] + 1.1 * r[0] * direction,
            c[1] + 0.99 * r[1] * direction,
            c[1] + 1.01 * r[1] * direction,
        ]
    )
    Y_hat, unknown = model.predict_stream(X, return_unknown=True)
    np.testing.assert_array_equal(Y_hat, [[1, 0], [0, 0], [0, 1], [0, 0]])
    np.testing.assert_array_equal(unknown, [False, True, False, True])
    # the micro-clusters that explained an instance were used at its time step
    np.testing.assert_array_equal(model.cluster_last_used_, [1, 3])


def test_only_the_nearest_micro_cluster_of_a_label_counts():
    # columns 0-2 are one model, 3-4 another; radii: column 1 is big, column 0 small
    d = np.array([[1.0, 2.0, 5.0, 0.5, 0.5], [3.0, 2.0, 5.0, 0.7, 0.1]])
    radii = np.array([0.5, 10.0, 1.0, 0.5, 0.2])
    dmin, idx, inside = _group_nearest(d, np.array([0, 3]), radii)
    # row 0: column 1 contains it, but column 0 is nearer and too small -> no vote;
    # the second model's tie goes to its first column, which contains it
    np.testing.assert_array_equal(idx, [[0, 3], [1, 4]])
    np.testing.assert_array_equal(dmin, [[1.0, 0.5], [2.0, 0.1]])
    np.testing.assert_array_equal(inside, [[False, True], [True, True]])


def test_short_term_memory_grows_and_triggers_detection_at_theta():
    theta = 8
    model = one_cluster_model(theta=theta, omega=10**6)
    far = tight_cloud((30.0, 30.0), theta + 1)
    model.predict_stream(far[:theta])  # t = 1..8: |STM| reaches theta, but t <= last check + theta
    assert len(model.short_term_memory_) == theta == model.n_unknown_
    np.testing.assert_array_equal(model.short_term_memory_times_, np.arange(1, theta + 1))
    np.testing.assert_array_equal(model.short_term_memory_, far[:theta])
    assert model.n_novelty_detections_ == 0
    model.predict_stream(far[theta:])  # t = 9 > 0 + theta
    assert model.n_novelty_detections_ == 1
    # a tight far cloud is valid for both labels, novel for both: one novelty pattern, memory used
    assert model.n_novelty_patterns_ == 1 and model.n_extensions_ == 0
    assert len(model.short_term_memory_) == 0
    assert model.cluster_models_.max() == 2  # model id n_labels + 0
    assert model.cluster_categories_[model.cluster_models_ == 2].tolist() == ["nov"]
    # the novelty pattern now explains such instances: not unknown, yet no known label
    Y_hat, unknown = model.predict_stream(far[:3], return_unknown=True)
    assert not unknown.any() and not Y_hat.any()
    assert model.n_novelty_explained_ == 3


def test_detection_waits_theta_steps_after_the_last_one():
    theta = 5
    model = one_cluster_model(theta=theta, omega=10**6)
    # instances far apart: every cluster of the memory has < 3 members, none is kept
    spread = np.array([[50.0 * i, -50.0 * i] for i in range(1, 7)])
    model.predict_stream(spread)  # t = 6: detection runs, every cluster has < 3 members
    assert model.n_novelty_detections_ == 1 and len(model.short_term_memory_) == 6
    model.predict_stream(spread[:5] + 1.0)  # t = 7..11: |STM| >= theta, but t <= 6 + theta
    assert model.n_novelty_detections_ == 1
    model.predict_stream(spread[:1] + 2.0)  # t = 12 > 6 + theta
    assert model.n_novelty_detections_ == 2


def test_forgetting_removes_old_micro_clusters_and_memory():
    omega = 10
    model = one_cluster_model(theta=10**6, omega=omega)
    c = model.cluster_centers_
    hits_label_1 = np.repeat(c[1:2], 2 * omega, axis=0)
    model.predict_stream(np.array([[40.0, 40.0]]))  # t = 1: unknown, into the memory
    model.predict_stream(hits_label_1[: omega - 1])  # t = 2..10
    # t = 10: nothing is older than t - omega = 0
    assert sorted(set(model.cluster_models_.tolist())) == [0, 1]
    assert len(model.short_term_memory_) == 1
    model.predict_stream(hits_label_1[: omega - 1])  # t = 11..19
    assert sorted(set(model.cluster_models_.tolist())) == [0, 1]
    model.predict_stream(hits_label_1[:1])  # t = 20: label 0 last used at 0 < 10, memory t=1 < 10
    assert model.cluster_models_.tolist() == [1]
    assert model.n_forgotten_ == 1 and model.n_memory_expired_ == 1
    assert len(model.short_term_memory_) == 0
    # label 0 is gone for good: its own instances are unknown now
    Y_hat, unknown = model.predict_stream(c[:1], return_unknown=True)
    assert unknown[0] and not Y_hat.any()


def test_extension_or_novelty_by_the_distance_rule():
    # the decision rule itself, both clauses, and the silhouette validity
    b = np.array([1.0, 3.0, 5.0, 0.4, 1.9])
    r_star = np.array([2.0, 2.0, 2.0, 2.0, 2.0])
    valid, ext = _candidate_votes(b, r_star, r_c=1.0, f=1.1)
    # a = 0.5: valid iff b > 0.5; ext iff b < 1.1 (f r*/2) or b < 1.5 (r*/2 + r_C/2)
    np.testing.assert_array_equal(valid, [True, True, True, False, True])
    np.testing.assert_array_equal(ext, [True, False, False, False, False])
    valid, ext = _candidate_votes(b, r_star, r_c=3.0, f=1.1)  # a = 1.5: second clause b < 2.5
    np.testing.assert_array_equal(valid, [False, True, True, False, True])
    np.testing.assert_array_equal(ext, [False, False, False, False, True])
    valid, ext = _candidate_votes(b, r_star, r_c=1.0, f=4.0)  # first clause b < 4
    np.testing.assert_array_equal(ext, [True, True, False, False, True])
    valid, _ = _candidate_votes(np.array([0.0]), np.array([1.0]), r_c=0.0, f=1.1)
    assert not valid[0]  # a = b = 0: silhouette undefined, not valid


@pytest.mark.parametrize("f, outcome", [(1e3, "extension"), (1e-3, "novelty")])
def test_extension_or_novelty_end_to_end(f, outcome):
    # three labels, single-label training: ceil(z) = 1, so two extension votes extend
    theta = 10
    model = one_cluster_model(n_labels=3, theta=theta, omega=10**6, f=f)
    assert model.cardinality_ == 1
    far = tight_cloud((30.0, -30.0), theta + 1, seed=3)
    model.predict_stream(far)
    assert model.n_novelty_detections_ == 1
    cats = model.cluster_categories_.tolist()
    if outcome == "extension":
        # every label votes extension (D < f r*/2): C joins all three label models
        assert model.n_extensions_ == 1 and model.n_novelty_patterns_ == 0
        assert cats.count("ext") == 3
        assert sorted(model.cluster_models_.tolist()) == [0, 0, 1, 1, 2, 2]
        Y_hat = model.predict_stream(far[:2])
        np.testing.assert_array_equal(Y_hat, np.ones((2, 3)))
    else:
        assert model.n_extensions_ == 0 and model.n_novelty_patterns_ == 1
        assert cats.count("nov") == 1 and model.cluster_models_.max() == 3
        assert not model.predict_stream(far[:2]).any()


def test_leader_algorithm():
    X = np.array([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0], [2.4, 0.0], [0.9, 0.0], [4.0, 0.0]])
    np.testing.assert_array_equal(_leaders(X, 1.0), [0, 2, 5])
    # 2.4 is 0.4 from the leader 2.0 and 0.9 is 0.4 from the leader 0.5
    np.testing.assert_array_equal(_leaders(X, 0.45), [0, 1, 2, 5])
    np.testing.assert_array_equal(_leaders(X, 0.3), [0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(_leaders(X, 100.0), [0])


def test_fitted_attributes():
    X, Y = blobs(900, seed=3, p_double=0.2)
    m = MINASBR(k_ini=0.02).fit(X, Y)
    n_j = Y.sum(0)
    assert (m.n_offline_clusters_ <= np.ceil(n_j * 0.02)).all()
    assert (m.n_offline_clusters_ > 0).all()
    assert m.train_cardinality_ == pytest.approx(Y.sum(1).mean())
    assert m.cardinality_ == 2
    assert (m.cluster_weights_ >= 3).all()
    assert set(m.cluster_categories_.tolist()) == {"normal"}
    assert m.cluster_centers_.shape == (m.n_offline_clusters_.sum(), 2)
    assert m.n_features_in_ == 2 and m.n_labels_ == 3 and m.n_seen_ == 0
    # the radius is twice the RMS distance of the members to the centre: for one cluster per label
    one = MINASBR(k_ini=1e-4).fit(X, Y)
    for j in range(3):
        P = X[Y[:, j] == 1]
        rms = np.sqrt(((P - P.mean(0)) ** 2).sum(1).mean())
        assert one.cluster_radii_[j] == pytest.approx(2 * rms)
        np.testing.assert_allclose(one.cluster_centers_[j], P.mean(0))


def test_a_label_absent_from_training_is_never_predicted():
    X, Y = blobs(600, seed=0)
    Y[:, 2] = 0
    m = MINASBR(k_ini=0.05, theta=20, omega=100).fit(X, Y)
    assert m.n_offline_clusters_[2] == 0
    assert not m.predict_stream(blobs(500, seed=1)[0])[:, 2].any()


# ---------------------------------------------------------------------------------- contract


def test_params_repr_and_pickle():
    m = MINASBR()
    assert m.get_params() == dict(
        f=1.1,
        init="random",
        k_ini=0.01,
        label_selection="all",
        max_iter=101,
        min_cluster_size=3,
        omega=2000,
        random_state=None,
        theta=1000,
    )
    assert MINASBR.kind == "online"
    assert repr(MINASBR(theta=100, omega=100)) == "MINASBR(omega=100, theta=100)"
    assert m.set_params(theta=5) is m and m.theta == 5
    with pytest.raises(ValueError, match="invalid parameter 'tau'"):
        m.set_params(tau=1)
    Xtr, Ytr, Xs, _ = drifting(seed=6)
    a = MINASBR(k_ini=0.03, theta=20, omega=150, random_state=0).fit(Xtr, Ytr)
    a.predict_stream(Xs[:700])
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict_stream(Xs[700:]), b.predict_stream(Xs[700:]))


@pytest.mark.parametrize(
    "params, exc, match",
    [
        (dict(k_ini=0.0), ValueError, "k_ini must be > 0"),
        (dict(k_ini=1.5), ValueError, "k_ini must be <= 1"),
        (dict(k_ini="0.1"), TypeError, "k_ini must be a real number"),
        (dict(theta=0), ValueError, "theta must be >= 1, got 0"),
        (dict(theta=2.5), TypeError, "theta must be an integer"),
        (dict(omega=-3), ValueError, "omega must be >= 1, got -3"),
        (dict(f=0.0), ValueError, "f must be > 0"),
        (dict(f=float("nan")), ValueError, "f must be finite"),
        (dict(min_cluster_size=0), ValueError, "min_cluster_size must be >= 1"),
        (dict(max_iter=True), TypeError, "max_iter must be an integer"),
        (dict(init="kmeans++"), ValueError, "init must be one of"),
        (dict(label_selection="top"), ValueError, "label_selection must be one of"),
        (dict(random_state="seed"), TypeError, "random_state must be None, an integer"),
        (dict(random_state=-1), ValueError, "random_state must be a non-negative"),
    ],
)
def test_bad_parameters(params, exc, match):
    X, Y = blobs(100)
    with pytest.raises(exc, match=match):
        MINASBR(**params).fit(X, Y)


def test_bad_data():
    X, Y = blobs(100)
    m = MINASBR(k_ini=0.05)
    with pytest.raises(NotFittedError, match="not fitted"):
        m.predict_stream(X)
    with pytest.raises(NotFittedError):
        m.cluster_centers_  # noqa: B018
    assert not hasattr(m, "n_unknown_")
    with pytest.raises(ValueError, match="X must be 2-D"):
        m.fit(X[:, 0], Y)
    with pytest.raises(ValueError, match="Y has 99 rows but X has 100"):
        m.fit(X, Y[:99])
    with pytest.raises(ValueError, match="Y must contain only 0 and 1"):
        m.fit(X, Y * 2)
    with pytest.raises(ValueError, match="NaN or infinity"):
        m.fit(np.where(np.arange(100)[:, None] == 5, np.nan, X), Y)
    with pytest.raises(TypeError, match="X must hold real numbers"):
        m.fit(X.astype(str), Y)
    m.fit(X, Y)
    with pytest.raises(ValueError, match="X has 3 features, but the model was fitted with 2"):
        m.predict_stream(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="X must be 2-D"):
        m.predict_stream(np.zeros(2))
    with pytest.raises(TypeError, match="return_unknown must be a bool"):
        m.predict_stream(X, return_unknown=1)
    assert m.predict_stream(np.zeros((0, 2))).shape == (0, 3)


# ---------------------------------------------------------------------------------- real stream


@pytest.fixture(scope="module")
def spher():
    return load("MOA-Spher-2C-2A", data_home=DATA)


@pytest.mark.parametrize("params", [dict(), dict(theta=100, omega=100)])
def test_real_stream_prefix(spher, params):
    """The paper's MOA-Spher-2C-2A (labels class2, class3; 14,600 training rows): the first
    10,000 stream instances."""
    n = 10_000
    model = MINASBR(random_state=0, **params).fit(spher.X_train, spher.Y_train)
    assert model.cardinality_ == 2  # z = 1.057
    Y_hat = model.predict_stream(spher.X_stream[:n])
    Y = spher.Y_stream[:n]
    ours = macro_f1(confusion_counts(Y, Y_hat))
    trivial = np.zeros_like(Y)
    trivial[:, spher.Y_train.sum(0).argmax()] = 1
    assert ours > macro_f1(confusion_counts(Y, trivial)) + 0.03
    assert 0.4 < ours < 0.95
    assert model.n_seen_ == n and 0 < model.n_unknown_ < n // 2


def test_minas_br_needs_neither_scikit_learn_nor_river():
    """MINAS-BR is NumPy only: importing and running it loads no experiments-extra package."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from mlsom.baselines import MINASBR\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(300, 2)); Y = (X[:, :1] > 0).astype(np.uint8)\n"
        "Y = np.hstack([Y, 1 - Y])\n"
        "MINASBR(random_state=0).fit(X[:200], Y[:200]).predict_stream(X[200:])\n"
        "print(sorted(m for m in ('sklearn', 'river') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
