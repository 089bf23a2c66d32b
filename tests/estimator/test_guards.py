"""Guards: labelled negative prototypes that stop a label's extra acceptances where its
labelled negatives are (docs/method.md, "Guards").

Each label keeps the labelled instances without it that its Bayes test would have accepted and no
guard stopped (its guards), and those with it that a guard stopped (its supports), at most as many
of each as its map has neurons; a label's decisions use its guards while its memory of labelled
entries finds a strictly better F1 with them. Everything must be the NumPy reference's, bit for
bit in the choices, whatever the chunking, a save and load or a pickle in between, the SIMD path
or the frozen scoring path; without labels nothing changes.
"""

import copy
import pickle

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _core, _schema, _testing
from tests.helpers import reference as ref
from tests.helpers.compare import (
    MIN_GAP,
    assert_bitwise_equal,
    assert_last_positives,
    assert_same_predictions,
    assert_same_rule,
    assert_same_state,
    explained,
    fit_both,
    params,
)
from tests.helpers.labelled import due_arrivals, label_arrivals, overlapping_discs


def _run_both(model, st, X, Y, arrivals, chunks, delay=40):
    """The stream in chunks, each row's true labels (where it has them) given delay rows after
    its prediction, to the package and to the reference; the package's predictions."""
    rows, unknown = arrivals
    Yl = np.where(unknown, -1, Y[rows]).astype(np.int8)
    out = []
    for lo, hi in chunks:
        Y_ref, st = ref.ref_stream(st, X[lo:hi])
        Y_pkg = model.predict_stream(X[lo:hi])
        explained(st, assert_same_predictions, Y_pkg, Y_ref)
        out.append(Y_pkg)
        due = (rows + delay >= lo) & (rows + delay < hi)
        if due.any():
            st = ref.ref_learn(st, X[rows[due]], Yl[due], eta=0.05, rate=0.5)
            model.partial_fit(X[rows[due]], Yl[due])
            assert st["min_gap"] > MIN_GAP, "degenerate data: a choice is a rounding tie"
            explained(st, assert_same_state, model, st)
            assert_last_positives(model, st)
            assert_same_rule(model, st)
    return st, np.vstack(out)


CASES = [
    # d, averOut distance, zero co-occurrence rule, seed
    (3, "euclidean", "reject", 0),
    (2, "sqeuclidean", "skip", 1),
    (4, "euclidean", "skip", 2),
    (6, "euclidean", "reject", 3),  # maps of up to 36 neurons: at most GUARD_CAP guards
]


@pytest.mark.parametrize("d, dist, zc, seed", CASES)
def test_guards_match_reference(d, dist, zc, seed):
    """Overlapping discs with a share of labels 40 rows late: the guards take the false alarms
    outside each disc and the package follows the reference in every prediction, count,
    weight, offset, guard, support and flag. The test fails unless guards were used and
    stopped some acceptances, a label filled its guards (so that the nearest moved) and some
    supports were taken."""
    X, Y = overlapping_discs(seed, 1700)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    model, st = fit_both(X_tr, Y_tr, params(d, averout_distance=dist, zero_cooccurrence=zc))
    assert st["min_gap"] > MIN_GAP
    chunks = [(lo, min(lo + 100, len(X_te))) for lo in range(0, len(X_te), 100)]
    st, _ = _run_both(model, st, X_te, Y_te, label_arrivals(seed, len(X_te), 3), chunks)
    pk = model._state
    assert pk["guards_on"].any(), "no label used its guards"
    assert pk["margin_vetoes"].any(), "no tested instance was nearer a guard"
    sizes = np.diff(pk["offsets"])
    if d != 4:  # (a small map fills within the stream, and a large one its GUARD_CAP)
        full = np.minimum(sizes, _core.GUARD_CAP)
        assert np.any(pk["guard_counts"] == full), "no label filled its guards"
    assert pk["support_counts"].any(), "no support"
    assert [None if g is None else len(g) for g in model.guards_] == pk["guard_counts"].tolist()
    # frozen predictions, on the row path and the 16-row one (when the processor has it), on
    # one thread and on two
    Y_ref, _ = ref.ref_predict(st, X_te)
    assert_same_predictions(model.predict(X_te), Y_ref)
    # (rows repeated until predict spreads them over the threads: each repeat as the reference)
    M, A = model._state["Wt"].shape[1], X_te.shape[1]
    k = -(-4_000_000 // (len(X_te) * M * A))
    for n_jobs in (1, 2):
        got = copy.deepcopy(model).set_params(n_jobs=n_jobs).predict(np.tile(X_te, (k, 1)))
        assert_same_predictions(got, np.tile(Y_ref, (k, 1)))
    with _testing.switches(lanes=False):
        assert_same_predictions(model.predict(X_te), Y_ref)
    for level in _testing.lanes_levels():  # the 16-row path on every level that has it
        with _testing.switches(simd=level, lanes=True):
            assert_same_predictions(model.predict(X_te), Y_ref)


def test_guards_stop_acceptances_the_paper_rule_makes():
    """Guards change predictions: the same stream and labels with the label's guards switched
    off (a copy whose guards_on is cleared before every call) predict more false alarms of the
    labels that use them."""
    X, Y = overlapping_discs(3, 2300)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    model = SOMStreamClassifier(**params(3)).fit(X_tr, Y_tr)
    rows, unknown = label_arrivals(3, len(X_te), 3, unknown=0.0)
    Yl = Y_te[rows].astype(np.int8)
    after = np.searchsorted(rows + 40, np.arange(len(X_te)), side="right")
    got = model.predict_stream(X_te[:1000], arrivals=due_arrivals(X_te, Yl, rows, 0, 1000))
    assert model.guards_on_.any()
    off = copy.deepcopy(model)
    off._state["guards_on"][:] = 0
    Y_on, Y_off = model.predict(X_te[1000:]), off.predict(X_te[1000:])
    fa_on = ((Y_on == 1) & (Y_te[1000:] == 0)).sum(axis=0)
    fa_off = ((Y_off == 1) & (Y_te[1000:] == 0)).sum(axis=0)
    used = model.guards_on_
    assert np.all(fa_on[used] <= fa_off[used]) and fa_on[used].sum() < fa_off[used].sum()
    assert got.shape == (1000, 3) and after.shape == (len(X_te),)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_guards_resume_exactly_after_save_load_and_pickle(tmp_path, dtype):
    """A model saved, loaded or pickled in the middle of a stream with guards in use goes on
    exactly as the one that was not, and one call with arrivals is the pieces with partial_fit
    in between."""
    X, Y = overlapping_discs(4, 2100)
    X = X.astype(dtype)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    rows, unknown = label_arrivals(4, len(X_te), 3)
    Yl = np.where(unknown, -1, Y_te[rows]).astype(np.int8)
    a = SOMStreamClassifier(**params(3)).fit(X_tr, Y_tr)
    b = copy.deepcopy(a)
    ya = [a.predict_stream(X_te[lo : lo + 300], arrivals=due_arrivals(X_te, Yl, rows, lo, lo + 300))
          for lo in range(0, 900, 300)]  # fmt: skip
    for lo in range(0, 900, 300):  # the pieces: stream rows and labelled calls in order
        Xl, Yd, after = due_arrivals(X_te, Yl, rows, lo, lo + 300)
        cut = 0
        pieces = []
        for k in range(len(after) + 1):
            end = after[k] if k < len(after) else 300
            pieces.append(b.predict_stream(X_te[lo + cut : lo + end]))
            cut = end
            if k < len(after):
                b.partial_fit(Xl[k : k + 1], Yd[k : k + 1])
        np.testing.assert_array_equal(np.vstack(pieces), ya[lo // 300])
    assert_bitwise_equal(a, b)
    assert a.guards_on_.any()
    a.save(tmp_path / "m.npz")
    loaded = SOMStreamClassifier.load(tmp_path / "m.npz")
    unpickled = pickle.loads(pickle.dumps(a))
    for other in (loaded, unpickled):
        assert_bitwise_equal(a, other)
        for k in _schema.names("guards"):
            np.testing.assert_array_equal(a._state[k], other._state[k], err_msg=k)
    for lo in range(900, len(X_te), 300):
        args = due_arrivals(X_te, Yl, rows, lo, lo + 300)
        y = a.predict_stream(X_te[lo : lo + 300], arrivals=args)
        for other in (loaded, unpickled):
            np.testing.assert_array_equal(
                other.predict_stream(X_te[lo : lo + 300], arrivals=args), y
            )
    for other in (loaded, unpickled):
        for k in _schema.names("guards"):
            np.testing.assert_array_equal(a._state[k], other._state[k], err_msg=k)
        np.testing.assert_array_equal(other.predict(X_te), a.predict(X_te))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_simd_path_gives_the_same_guarded_model(dtype):
    """Guards' distances are exact sums: every SIMD path, and screening off (every distance
    exact), give the same model and predictions, online and frozen."""
    X, Y = overlapping_discs(5, 1500)
    X = X.astype(dtype)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    rows, unknown = label_arrivals(5, len(X_te), 3)
    Yl = np.where(unknown, -1, Y_te[rows]).astype(np.int8)

    def run():
        m = SOMStreamClassifier(**params(3)).fit(X_tr, Y_tr)
        y = [m.predict_stream(X_te[lo : lo + 400],
                              arrivals=due_arrivals(X_te, Yl, rows, lo, lo + 400))
             for lo in range(0, len(X_te), 400)]  # fmt: skip
        return m, np.vstack(y), m.predict(X_te)

    base, y0, p0 = run()
    assert base.guards_on_.any()
    for switch in [{"simd": v} for v in _testing.simd_levels()] + [{"screening": False}]:
        with _testing.switches(**switch):
            m, y, p = run()
        np.testing.assert_array_equal(y, y0)
        np.testing.assert_array_equal(p, p0)
        assert_bitwise_equal(m, base)
        for k in _schema.names("guards"):
            np.testing.assert_array_equal(m._state[k], base._state[k], err_msg=k)


def test_without_labels_there_are_no_guards():
    """The paper's method: no labelled call, no guard array (the model file has none) and the
    fitted attributes say so."""
    X, Y = overlapping_discs(6, 800)
    model = SOMStreamClassifier(**params(3)).fit(X[:300], Y[:300])
    model.predict_stream(X[300:])
    assert model.guards_ is None and model.supports_ is None and model.guards_on_ is None
    assert not set(_schema.names("guards")) & set(model._state)


def test_a_support_on_a_guard_wins_the_tie():
    """x is stopped by a guard only where it is strictly nearer the guard than the label's map
    and every support: the same instance labelled without the label (its test accepts it: it
    becomes a guard), then with it (stopped by that guard: it becomes a support), then with it
    again (guard and support at the same distance: not stopped, nothing added), as the
    reference. The instance is one for which the reference goes through those three steps."""
    X, Y = overlapping_discs(8, 1300)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    model, st = fit_both(X_tr, Y_tr, params(4))
    chunks = [(lo, lo + 100) for lo in range(0, 300, 100)]
    st, _ = _run_both(model, st, X_te, Y_te, label_arrivals(8, 300, 3), chunks)

    def steps(state, x, c):
        """The reference's (guard count, support count) of label c after each step."""
        y = np.full((1, 3), -1, dtype=np.int8)
        out = []
        for value in (0, 1, 1):
            y[0, c] = value
            state = ref.ref_learn(state, x[None, :], y)
            out.append((len(state["guards"]["g"][c]), len(state["guards"]["s"][c])))
        return out

    found = None
    for x in X_te[300:]:
        for c in range(3):
            g0, s0 = len(st["guards"]["g"][c]), len(st["guards"]["s"][c])
            want = [(g0 + 1, s0), (g0 + 1, s0 + 1), (g0 + 1, s0 + 1)]
            if steps(copy.deepcopy(st), x, c) == want:
                found = x, c
                break
        if found:
            break
    assert found, "no instance goes through the three steps"
    x, c = found
    y = np.full((1, 3), -1, dtype=np.int8)
    for value in (0, 1, 1):
        y[0, c] = value
        st = ref.ref_learn(st, x[None, :], y)
        model.partial_fit(x[None, :], y)
        assert st["min_gap"] > MIN_GAP
        explained(st, assert_same_state, model, st)
        assert_same_rule(model, st)
