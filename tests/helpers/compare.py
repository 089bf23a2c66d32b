"""The package against the NumPy reference (tests/helpers/reference.py): the data, the parameters,
a fit of both, and the comparisons of their states and predictions that the reference tests and
the estimator's tests (labels, guards, the robust variant, label persistence) share.

Every discrete choice must be the same, every count identical, every real number equal to
``TOL``; a test first checks that the reference's smallest relative margin of a choice
(``min_gap``) is above ``MIN_GAP``, so that no choice hinges on rounding.
"""

import warnings

import numpy as np

from mlsom import ConvergenceWarning, SOMStreamClassifier, _schema
from tests.helpers import reference as ref

TOL = dict(rtol=1e-10, atol=1e-10)


MIN_GAP = 1e-9  # choices closer than this are decided by rounding only


def make_stream(seed, L, A, n_train=120, n_test=150, n_clusters=5, absent=(), rare=None):
    """Clusters in [0, 1]^A, each with a base set of 1-3 correlated labels (5% of the label bits
    flipped); the test part drifts a little. ``absent`` labels are removed from the training
    set; ``rare = (j, m)`` keeps label j on its first m training rows only."""
    rng = np.random.default_rng(seed)
    centres = rng.random((n_clusters, A))
    base = np.zeros((n_clusters, L), bool)
    for k in range(n_clusters):
        base[k, rng.choice(L, rng.integers(1, min(3, L) + 1), replace=False)] = True

    def draw(n, shift):
        cl = rng.integers(n_clusters, size=n)
        X = centres[cl] + shift + 0.08 * rng.standard_normal((n, A))
        Y = base[cl] ^ (rng.random((n, L)) < 0.05)
        return X, Y.astype(np.uint8)

    X_tr, Y_tr = draw(n_train, 0.0)
    X_te, _ = draw(n_test, 0.03)
    for j in absent:
        Y_tr[:, j] = 0
    if rare is not None:
        j, m = rare
        Y_tr[np.flatnonzero(Y_tr[:, j])[m:], j] = 0
    return X_tr, Y_tr, X_te


def params(d, **kw):
    p = dict(
        grid_size=d,
        learning_rate=0.05,
        n_epochs=20,
        max_epochs=200,
        min_neuron_size=4,
        neighborhood="bubble",
        averout_distance="euclidean",
        zero_cooccurrence="reject",
        random_state=0,
        corrections="strong",  # (ref_learn's default: tests that use the paired test say so)
    )
    p.update(kw)
    return p


def fit_quietly(X, Y, **kw):
    """``SOMStreamClassifier(**kw).fit(X, Y)`` without its ConvergenceWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SOMStreamClassifier(**kw).fit(X, Y)


def fit_both(X, Y, p):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on tiny max_epochs
        model = SOMStreamClassifier(**p).fit(X, Y)
    kw = {
        k: v
        for k, v in p.items()
        if k not in ("grid_size", "learning_rate", "correction_rate", "corrections")
    }
    state = ref.ref_fit(X, Y, p["grid_size"], **kw)
    return model, state


def assert_same_state(model, st):
    L = st["L"]
    assert model.n_labels_ == L
    assert model.n_seen_ == st["N"]
    np.testing.assert_array_equal(model.T_, st["T"])
    assert model.cardinality_ == st["S"] / st["N"]
    assert model.k_nn_ == st["k_nn"]
    np.testing.assert_allclose(model.P_, ref.prob(st["T"], st["N"]), **TOL)
    for j, m in enumerate(st["maps"]):
        if m is None:
            for attr in (
                "weights_",
                "neuron_counts_",
                "averout_",
                "log_averout_",
                "grid_positions_",
                "n_iter_",
            ):
                assert getattr(model, attr)[j] is None, (attr, j)
            continue
        np.testing.assert_array_equal(model.grid_positions_[j], m["pos"], err_msg=f"label {j}")
        np.testing.assert_array_equal(model.neuron_counts_[j], m["counts"], err_msg=f"label {j}")
        np.testing.assert_allclose(model.weights_[j], m["weights"], **TOL, err_msg=f"label {j}")
        np.testing.assert_allclose(model.averout_[j], m["averout"], **TOL, err_msg=f"label {j}")
        np.testing.assert_allclose(model.log_averout_[j], np.log(m["averout"]), **TOL)
        assert model.n_iter_[j] == m["n_iter"], f"label {j}"


def explained(st, check, *args):
    """Run a comparison; if it fails where the reference met exact ties between equal means,
    say so (see tests/core/test_reference.py::test_units_with_the_same_rows_get_identical_means)."""
    try:
        check(*args)
    except AssertionError as exc:
        if st["equal_mean_ties"]:
            raise AssertionError(
                f"{exc}\n(the reference's batch training met {st['equal_mean_ties']} exact ties "
                "between units holding the mean of the same rows; the package must compute such "
                "means bit-identically for the first-index rule to pick the same unit)"
            ) from None
        raise


def assert_same_predictions(Y_pkg, Y_ref):
    bad = np.flatnonzero((Y_pkg != Y_ref).any(axis=1))
    assert bad.size == 0, (
        f"{bad.size} rows differ, first {bad[0]}: package {Y_pkg[bad[0]]}, reference "
        f"{Y_ref[bad[0]]}"
        if bad.size
        else ""
    )


def run_case(X_tr, Y_tr, X_te, p):
    """Fit and stream both implementations, compare everything; returns (model, Y_hat, state)."""
    model, st = fit_both(X_tr, Y_tr, p)
    assert st["min_gap"] > MIN_GAP, "degenerate data: a training choice is a rounding tie"
    explained(st, assert_same_state, model, st)
    Y_ref, st = ref.ref_stream(st, X_te, eta=p["learning_rate"])
    assert st["min_gap"] > MIN_GAP, "degenerate data: a stream choice is a rounding tie"
    Y_pkg = model.predict_stream(X_te)
    assert Y_pkg.dtype == np.uint8
    explained(st, assert_same_predictions, Y_pkg, Y_ref)
    explained(st, assert_same_state, model, st)
    return model, Y_pkg, st


def state_arrays(model):
    st = model._state
    keys = ["Wt", "counts", "log_averout", "T", "NS", "last_positive", "has_positive"]
    keys += list(_schema.names("rule")) + list(_schema.names("pairs"))
    keys += list(_schema.names("persistence")) + list(_schema.names("guards"))
    return {k: np.array(st[k]) for k in keys if k in st}


def assert_bitwise_equal(a, b):
    sa, sb = state_arrays(a), state_arrays(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)


def assert_last_positives(model, st):
    last = st.get("last_positive", {})
    has = model._state["has_positive"]
    for c in range(st["L"]):
        assert bool(has[c]) == (c in last), c
        if c in last:
            np.testing.assert_allclose(model._state["last_positive"][c], last[c], **TOL)
        else:
            assert not model._state["last_positive"][c].any()


def assert_same_rule(model, st):
    """What labels taught the decision rule: offsets, entries and cardinality, the reference's."""
    rule, pk = st["rule"], model._state
    np.testing.assert_allclose(pk["label_offsets"], rule["offsets"], **TOL)
    np.testing.assert_array_equal(model.label_offsets_, pk["label_offsets"])
    if rule["z_set"]:
        assert model.labelled_cardinality_ == pk["labelled_cardinality"][0]
    else:
        assert model.labelled_cardinality_ is None
    np.testing.assert_array_equal(pk["margin_counts"], rule["total"])
    assert pk["labelled_cardinality"][1] == float(rule["z_set"])
    np.testing.assert_allclose(pk["labelled_cardinality"][0], rule["z"], **TOL)
    W = pk["margin_memory"].shape[1]
    for c, entries in enumerate(rule["entries"]):
        t = rule["total"][c]
        slots = [(t - len(entries) + i) % W for i in range(len(entries))]
        kinds = pk["margin_kinds"][c, slots]
        np.testing.assert_array_equal(kinds, [2 * k + y for k, y, _ in entries])
        np.testing.assert_allclose(pk["margin_memory"][c, slots], [m for _, _, m in entries], **TOL)
    if "guards" in st:
        assert_same_guards(model, st)


def assert_same_guards(model, st):
    """Each label's guards, supports, their use and the memory's veto flags: the reference's."""
    g, pk = st["guards"], model._state
    off = pk["offsets"]
    for c in range(st["L"]):
        for key, count, rows in (("guards", "guard_counts", g["g"][c]),
                                 ("supports", "support_counts", g["s"][c])):  # fmt: skip
            assert pk[count][c] == len(rows), (key, c)
            got = pk[key][off[c] : off[c] + len(rows)]
            if rows:
                np.testing.assert_allclose(got, np.asarray(rows), **TOL, err_msg=f"{key} {c}")
            assert not pk[key][off[c] + len(rows) : off[c + 1]].any(), (key, c)
        assert bool(pk["guards_on"][c]) == bool(g["on"][c]), c
    np.testing.assert_array_equal(model.guards_on_, [bool(v) for v in g["on"]])
    W = pk["margin_vetoes"].shape[1]
    rule = st["rule"]
    for c, flags in enumerate(rule["vetoes"]):
        t = rule["total"][c]
        slots = [(t - len(flags) + i) % W for i in range(len(flags))]
        np.testing.assert_array_equal(pk["margin_vetoes"][c, slots], flags, err_msg=str(c))
