"""A model file's members of what labels taught the model (the last positives, the decision rule's
offsets and margins, the corrections' paired test, the guards and supports, label persistence),
tampered with: load refuses each change with an error naming the member, and reads the files
written before those members existed."""

import copy

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _core, _schema
from tests.helpers.compare import fit_both, make_stream, params
from tests.helpers.labelled import (
    due_arrivals,
    label_arrivals,
    label_runs_case,
    overlapping_discs,
)
from tests.helpers.model_files import changer, rewrite, saved_and_read_back
from tests.helpers.streams import random_labels


def test_hostile_labelled_members_are_refused(tmp_path):
    X_tr, Y_tr, X_te = make_stream(71, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    model.partial_fit(X_te[:10], random_labels(71, 10, 3))
    src = tmp_path / "m.npz"
    model.save(src)
    pos, has = model._state["last_positive"], model._state["has_positive"]
    nan = pos.copy()
    nan[0, 0] = np.nan
    two = has.copy()
    two[0] = 2
    cases = [
        ({"has_positive": None}, "'has_positive' is missing"),
        ({"last_positive": None}, "'last_positive' is missing"),
        ({"last_positive": pos[:, :2].copy()}, "last_positive has dtype"),
        ({"last_positive": pos.astype(np.float32)}, "last_positive has dtype"),
        ({"has_positive": has.astype(np.int64)}, "has_positive has dtype"),
        ({"last_positive": nan}, "non-finite"),
        ({"last_positive": pos * 1e300}, "beyond"),
        ({"has_positive": two}, "values other than 0/1"),
        ({"has_positive": np.zeros_like(has)}, "a row given for a label without"),
    ]
    for i, (change, match) in enumerate(cases):
        dst = tmp_path / f"bad{i}.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(dst)
    # the untouched file loads, and a file from before labelled calls too
    SOMStreamClassifier.load(src)
    rule_none = dict.fromkeys(
        (*_schema.names("rule"), *_schema.names("persistence"), *_schema.names("guards"))
    )
    rewrite(
        src, tmp_path / "old.npz", format_1=True, last_positive=None, has_positive=None, **rule_none
    )
    assert "last_positive" not in SOMStreamClassifier.load(tmp_path / "old.npz")._state
    # a file with the last positives but not the rule's arrays (written before the rule
    # learnt from labels) loads, and the rule starts afresh at the next labelled call
    rewrite(src, tmp_path / "older.npz", format_1=True, **rule_none)
    older = SOMStreamClassifier.load(tmp_path / "older.npz")
    assert "last_positive" in older._state and "label_offsets" not in older._state
    older.partial_fit(X_te[10:20], random_labels(72, 10, 3))
    assert older._state["margin_counts"].max() > 0


def test_hostile_rule_members_are_refused(tmp_path):
    """What labels taught the decision rule, read from a file: every array is checked."""
    X_tr, Y_tr, X_te = make_stream(73, 3, 4)
    model, _ = fit_both(X_tr, Y_tr, params(2))
    model.partial_fit(X_te[:80], random_labels(73, 80, 3, unknown=0.0))
    st = model._state
    assert st["margin_counts"].min() >= 50 and st["labelled_cardinality"][1] == 1.0
    src = saved_and_read_back(model, tmp_path, _schema.names("rule"))
    changed = changer(st)
    W = st["margin_memory"].shape[1]
    cases = [
        ({"margin_kinds": None}, "'margin_kinds' is missing"),
        ({"label_offsets": st["label_offsets"].astype(np.float32)}, "label_offsets has dtype"),
        ({"margin_memory": np.zeros((3, W + 1))}, "margin_memory has dtype"),
        (changed("label_offsets", lambda a: a.__setitem__(0, np.inf)), "label_offsets: non-finite"),
        (changed("margin_counts", lambda a: a.__setitem__(1, -1)), "margin_counts: negative"),
        (changed("margin_counts", lambda a: a.__setitem__(1, 2**60)), "beyond 2"),
        (changed("margin_kinds", lambda a: a.__setitem__((0, 0), 6)), "kinds other than"),
        (changed("margin_memory", lambda a: a.__setitem__((0, 0), np.nan)), "non-finite margins"),
        (changed("margin_memory", lambda a: a.__setitem__((0, W - 1), 1.0)), "a slot not used"),
        (changed("labelled_cardinality", lambda a: a.__setitem__(1, 0.5)), "labelled_cardinality"),
        (changed("labelled_cardinality", lambda a: a.__setitem__(0, 99.0)), "labelled_cardinality"),
    ]
    for i, (change, match) in enumerate(cases):
        dst = tmp_path / f"bad{i}.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(dst)


def test_hostile_pair_members_are_refused(tmp_path):
    """The paired test of the corrections, read from a file: every array is checked, and a
    file that has it without the rule's arrays is refused."""
    X_tr, Y_tr, X_te = make_stream(74, 3, 4, n_test=300)
    model, _ = fit_both(X_tr, Y_tr, params(2, corrections="tested"))
    model.partial_fit(X_te, random_labels(74, 300, 3, unknown=0.0))
    st = model._state
    assert st["pair_total"][0] > 0 and (st["alt_uses"] >= 0).any()
    src = saved_and_read_back(model, tmp_path, _schema.names("pairs"))
    changed = changer(st)
    M, A = st["alt_place"].shape
    n = int(st["pair_total"][0])
    cases = [
        ({"pair_ring": None}, "'pair_ring' is missing"),
        ({k: None for k in _schema.names("rule")}, "'label_offsets' is missing"),
        ({"alt_place": st["alt_place"].astype(np.float32)}, "alt_place has dtype"),
        ({"alt_uses": np.zeros(M + 1, np.int8)}, "alt_uses has dtype"),
        ({"pair_ring": np.zeros(201, np.uint8)}, "pair_ring has dtype"),
        (changed("alt_place", lambda a: a.__setitem__((0, 0), np.nan)), "alt_place: non-finite"),
        (changed("alt_place", lambda a: a.__setitem__((0, 0), 1e300)), "alt_place: non-finite"),
        (changed("alt_uses", lambda a: a.__setitem__(0, 5)), "alt_uses: values outside"),
        (changed("alt_uses", lambda a: a.__setitem__(0, -2)), "alt_uses: values outside"),
        (changed("alt_strong", lambda a: a.__setitem__(0, 2)), "values other than 0/1"),
        (changed("pair_ring", lambda a: a.__setitem__(0, 7)), "values other than 0/1"),
        (changed("pair_total", lambda a: a.__setitem__(0, -1)), "pair_total -1"),
        (changed("pair_total", lambda a: a.__setitem__(0, 2**60)), "beyond 2"),
    ]
    if n < 200:
        ring = np.array(st["pair_ring"])
        ring[n:] = 1
        cases.append(({"pair_ring": ring}, "fewer than the ring's pairs"))
    for i, (change, match) in enumerate(cases):
        dst = tmp_path / f"bad{i}.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(dst)


def test_tampered_guards_are_refused(tmp_path):
    """Every guard member is checked on load: dtypes, shapes, values, counts, unused rows, flags;
    the untouched file loads, and a file from before guards (rule arrays without them) loads and
    starts them at its next labelled call."""
    X, Y = overlapping_discs(7, 1500)
    X_tr, Y_tr, X_te, Y_te = X[:300], Y[:300], X[300:], Y[300:]
    rows, unknown = label_arrivals(7, len(X_te), 3)
    Yl = np.where(unknown, -1, Y_te[rows]).astype(np.int8)
    model = SOMStreamClassifier(**params(3)).fit(X_tr, Y_tr)
    model.predict_stream(X_te, arrivals=due_arrivals(X_te, Yl, rows, 0, len(X_te)))
    st = model._state
    assert st["guards_on"].any() and st["support_counts"].any()
    src = tmp_path / "m.npz"
    model.save(src)
    g, gn, on, mv = st["guards"], st["guard_counts"], st["guards_on"], st["margin_vetoes"]
    sizes = np.diff(st["offsets"])
    c = int(np.flatnonzero(on)[0])

    def changed(a, where, value):
        out = a.copy()
        out[where] = value
        return out

    unused = int(st["offsets"][c] + gn[c]) if gn[c] < sizes[c] else None
    cases = [
        ({"guards": None}, "'guards' is missing"),
        ({"margin_vetoes": None}, "'margin_vetoes' is missing"),
        ({"guards": g.astype(np.float32)}, "guards has dtype"),
        ({"supports": st["supports"][:, :1].copy()}, "supports has dtype"),
        ({"guard_counts": gn.astype(np.int32)}, "guard_counts has dtype"),
        ({"guards_on": on[:2].copy()}, "guards_on has dtype"),
        ({"guards": changed(g, (0, 0), np.nan)}, "guards: non-finite"),
        ({"supports": changed(st["supports"], (0, 1), 1e300)}, "supports: non-finite"),
        (
            {"guard_counts": changed(gn, c, min(sizes[c], _core.GUARD_CAP) + 1)},
            "guard_counts: negative, or",
        ),
        ({"support_counts": changed(st["support_counts"], 0, -1)}, "support_counts: negative"),
        ({"guards_on": changed(on, c, 2)}, "guards_on: values other than 0/1"),
        (
            {
                "guards": changed(g, slice(st["offsets"][c], st["offsets"][c + 1]), 0),
                "guard_counts": changed(gn, c, 0),
            },
            "guards_on: values other than 0/1, or set for a label without guards",
        ),
        ({"margin_vetoes": changed(mv, (0, 0), 2)}, "margin_vetoes: values other"),
        ({"margin_vetoes": np.ones_like(mv)}, "margin_vetoes: values other than 0/1, or set"),
    ]
    if unused is not None:
        cases.append(({"guards": changed(g, (unused, 0), 0.5)}, "guards: values in a row"))
    for i, (change, match) in enumerate(cases):
        dst = tmp_path / f"bad{i}.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(dst)
    SOMStreamClassifier.load(src)
    # a file from before guards: it loads, classifies without them, and starts them afresh
    rewrite(src, tmp_path / "old.npz", format_1=True, **dict.fromkeys(_schema.names("guards")))
    old = SOMStreamClassifier.load(tmp_path / "old.npz")
    assert old.guards_ is None
    old.predict_stream(X_te[:50])
    old.partial_fit(X_te[:50], Y_te[:50].astype(np.int8))
    assert old._state["guard_counts"].sum() >= 0 and old.guards_on_ is not None
    SOMStreamClassifier.load(src)


@pytest.fixture(scope="module")
def case():
    """A model fitted on a stream of label runs, the rest of the stream and its arrivals."""
    return label_runs_case()


def test_hostile_persistence_members_are_refused(case, tmp_path):
    model, Xs, _, arrivals = case
    m = copy.deepcopy(model)
    m.predict_stream(Xs, arrivals=arrivals)
    st = m._state
    src = saved_and_read_back(m, tmp_path, _schema.names("persistence"))
    changed = changer(st)
    A, L = st["persist_row"].shape[0], st["persist_labels"].shape[1]
    flags0 = np.array(st["persist_flags"])
    flags0[1] = 0
    labs = np.array(st["persist_labels"])
    labs[1] = 1
    cases = [
        ({"persist_ring": None}, "'persist_ring' is missing"),
        ({k: None for k in _schema.names("labelled")}, "'last_positive' is missing"),
        ({k: None for k in _schema.names("rule")}, "'label_offsets' is missing"),
        ({"persist_row": st["persist_row"].astype(np.float32)}, "persist_row has dtype"),
        ({"persist_row": np.zeros(A + 1)}, "persist_row has dtype"),
        ({"persist_labels": np.zeros((3, L + 1), np.int8)}, "persist_labels has dtype"),
        ({"persist_flags": np.zeros(3, np.int64)}, "persist_flags has dtype"),
        ({"persist_ring": np.zeros(199, np.uint8)}, "persist_ring has dtype"),
        ({"persist_total": np.zeros(2, np.int64)}, "persist_total has dtype"),
        (changed("persist_row", lambda a: a.__setitem__(0, np.inf)), "persist_row: non-finite"),
        (changed("persist_row", lambda a: a.__setitem__(0, 1e300)), "persist_row: non-finite"),
        (changed("persist_labels", lambda a: a.__setitem__((0, 0), -1)), "predictions other"),
        (changed("persist_labels", lambda a: a.__setitem__((2, 0), 3)), "labels other"),
        (changed("persist_flags", lambda a: a.__setitem__(0, 2)), "values other than 0/1"),
        (changed("persist_ring", lambda a: a.__setitem__(0, 9)), "values other than 0/1"),
        ({"persist_flags": flags0, "persist_labels": labs}, "a proposal for an instance"),
        (changed("persist_total", lambda a: a.__setitem__(0, -1)), "persist_total -1"),
        (changed("persist_total", lambda a: a.__setitem__(0, 2**60)), "beyond 2"),
        (changed("persist_total", lambda a: a.__setitem__(0, 3)), "fewer than the ring"),
    ]
    for i, (change, match) in enumerate(cases):
        dst = tmp_path / f"bad{i}.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match=match):
            SOMStreamClassifier.load(dst)


def test_a_file_from_before_persistence_loads_and_starts_the_record(case, tmp_path):
    """A model file with labelled members but no persistence (an earlier mlsom's) loads; its
    next labelled call starts the record, as a model's first labelled call does."""
    model, Xs, Ys, arrivals = case
    m = copy.deepcopy(model)
    m.partial_fit(Xs[:20], Ys[:20])
    src = tmp_path / "m.npz"
    m.save(src)
    old = tmp_path / "old.npz"
    rewrite(src, old, format_1=True, **dict.fromkeys(_schema.names("persistence")))
    loaded = SOMStreamClassifier.load(old)
    assert loaded.persistence_pairs_ is None
    loaded.predict_stream(Xs[:10])
    loaded.partial_fit(Xs[9:10], Ys[9:10])  # prompt, but the record starts here
    loaded.predict_stream(Xs[10:11])
    loaded.partial_fit(Xs[10:11], Ys[10:11])  # prompt: no proposal had been made yet
    assert loaded.persistence_pairs_ == (0, 0)
    assert loaded._state["persist_flags"][2] == 1
