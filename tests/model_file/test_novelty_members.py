"""Model files of novelty detection (group "novelty"): saved mid-stream with new labels and a
part-filled memory they load back exactly; edited by hand, with inconsistent patterns or memory,
load refuses them naming what is wrong, and changes nothing."""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier, _model_file
from tests.helpers.model_files import changer, rewrite, saved_and_read_back

KEYS = ("radius", "frozen", "novelty_buffer", "novelty_at", "novelty_counts", "label_origin")


@pytest.fixture(scope="module")
def novel_model():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0]])
    lab = rng.integers(0, 3, size=6000)
    lab[2500:] = rng.integers(0, 4, size=3500)
    X = centres[lab] + 0.5 * rng.normal(size=(6000, 2))
    Y = np.eye(4, dtype=np.uint8)[lab]
    model = SOMStreamClassifier(grid_size=3, random_state=0, novelty=True).fit(X[:500], Y[:500, :3])
    model.predict_stream(X[500:5917])
    assert model.new_labels_ and model._state["novelty_counts"][0] > 0
    return model


def test_round_trip_keeps_the_new_labels_and_the_memory(tmp_path, novel_model):
    saved_and_read_back(novel_model, tmp_path, KEYS + ("Wt", "T", "offsets"))
    again = SOMStreamClassifier.load(tmp_path / "m.npz")
    assert again.new_labels_ == novel_model.new_labels_
    assert again.label_names_ == novel_model.label_names_
    assert again.novelty is True


def test_novelty_radius_changed_mid_stream_survives_the_round_trip(tmp_path, novel_model):
    """novelty_radius set after fit acts the same after save and load: the same unknown rows,
    predictions and state on the rest of the stream."""
    rng = np.random.default_rng(1)
    X = rng.normal(scale=2.5, size=(3000, 2)) + 2.0
    model = SOMStreamClassifier.load(_saved(novel_model, tmp_path / "a.npz"))
    model.set_params(novelty_radius=1.3)
    back = SOMStreamClassifier.load(_saved(model, tmp_path / "b.npz"))
    assert back.novelty_radius == 1.3
    P, unknown = model.predict_stream(X, return_unknown=True)
    P2, unknown2 = back.predict_stream(X, return_unknown=True)
    assert unknown.any() and not unknown.all()
    np.testing.assert_array_equal(unknown2, unknown)
    np.testing.assert_array_equal(P2, P)
    for key in KEYS + ("Wt", "T"):
        np.testing.assert_array_equal(back._state[key], model._state[key], err_msg=key)


def _saved(model, path):
    model.save(path)
    return path


def _cases(st):
    changed = changer(st)
    have = int(st["novelty_counts"][0])
    L = st["T"].shape[0]
    return {
        "radius: negative": changed("radius", lambda a: a.__setitem__(0, -1.0)),
        "radius: negative, non-finite": changed("radius", lambda a: a.__setitem__(0, np.nan)),
        "rows in the memory": changed("novelty_counts", lambda a: a.__setitem__(0, 10**6)),
        "values past the rows": changed("novelty_at", lambda a: a.__setitem__(have, 5)),
        "not increasing": changed("novelty_at", lambda a: a.__setitem__(slice(0, 2), [9, 3])),
        "novelty_buffer": changed("novelty_buffer", lambda a: a.__setitem__(0, np.inf)),
        "distinct numbers": changed("label_origin", lambda a: a.__setitem__((3, L - 1), 10**6)),
        "no label column names": changed("label_origin", lambda a: a.__setitem__((3, L - 1), 0)),
        "a label of fit with a creation": changed(
            "label_origin", lambda a: a.__setitem__((1, 0), 5)
        ),
        "retired": changed("label_origin", lambda a: a.__setitem__((4, 0), 1)),
        "made outside the stream": changed(
            "label_origin", lambda a: a.__setitem__((0, L - 1), 10**9)
        ),
        "novelty_counts": changed("novelty_counts", lambda a: a.__setitem__(2, -1)),
    }


def test_load_refuses_inconsistent_patterns(tmp_path, novel_model):
    src = tmp_path / "m.npz"
    novel_model.save(src)
    for what, change in _cases(novel_model._state).items():
        dst = tmp_path / "bad.npz"
        rewrite(src, dst, **change)
        with pytest.raises(ValueError, match="inconsistent model file") as err:
            SOMStreamClassifier.load(dst)
        assert what in str(err.value), (what, str(err.value))


def test_a_partial_group_is_refused(tmp_path, novel_model):
    src = tmp_path / "m.npz"
    novel_model.save(src)
    rewrite(src, tmp_path / "bad.npz", novelty_buffer=None)
    with pytest.raises(ValueError, match="'novelty_buffer' is missing"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")


def test_the_memory_length_is_the_method_s(tmp_path, novel_model):
    src = tmp_path / "m.npz"
    novel_model.save(src)
    st = novel_model._state
    rewrite(src, tmp_path / "bad.npz", novelty_buffer=st["novelty_buffer"][:-1].copy())
    with pytest.raises(ValueError, match="novelty_buffer has dtype float64 and shape"):
        SOMStreamClassifier.load(tmp_path / "bad.npz")
    assert _model_file.MAX_COUNT == 2**53
