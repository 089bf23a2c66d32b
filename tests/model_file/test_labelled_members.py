"""A model file's members of what labels taught the model (the last positives, the decision rule's
offsets and margins, the corrections' paired test), tampered with: load refuses each change with
an error naming the member, and reads the files written before those members existed."""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _schema
from tests.helpers.compare import fit_both, make_stream, params
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
