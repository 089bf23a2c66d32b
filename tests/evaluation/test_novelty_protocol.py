"""mlsom.protocol.evaluate_novelty_stream: a method on a novelty stream, scored by MINAS-BR's
evaluation, equals the same steps written out by hand."""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom.baselines import MINASBR
from mlsom.datasets import load_novelty
from mlsom.evaluation import evaluate_novelty
from mlsom.experiment import make_method
from mlsom.protocol import evaluate_novelty_stream


@pytest.fixture(scope="module")
def stream():
    return load_novelty("MOA-Spher-3C-5C-2A", n_instances=12_000, random_state=3)


def _same(a, b):
    """The same evaluation (b computed without label names)."""
    np.testing.assert_array_equal(a.label_counts, b.label_counts)
    np.testing.assert_array_equal(a.unknown_counts, b.unknown_counts)
    np.testing.assert_array_equal(a.pattern_label, b.pattern_label)
    sa, sb = a.summary(), b.summary()
    assert list(sa.pop("time_to_detect").values()) == list(sb.pop("time_to_detect").values())
    assert sa == sb


def test_an_online_method_is_fitted_on_the_known_labels(stream):
    known = list(stream.known_labels)
    res = evaluate_novelty_stream(
        SOMStreamClassifier(grid_size=2, random_state=0), stream, chunk_size=777
    )
    m = SOMStreamClassifier(grid_size=2, random_state=0).fit(
        stream.X_train, stream.Y_train[:, known]
    )
    by_hand = evaluate_novelty(stream.Y_stream, m.predict_stream(stream.X_stream), known)
    _same(res, by_hand)
    # it knows no new label and makes no pattern: a new label is all recall lost
    assert res.n_patterns == 0
    assert all(t is None for t in res.summary()["time_to_detect"].values())


def test_minas_br_gives_its_patterns_and_unknown_rows(stream):
    known = list(stream.known_labels)
    params = dict(k_ini=0.05, theta=50, omega=300, random_state=0)
    res = evaluate_novelty_stream(MINASBR(**params), stream, chunk_size=500)
    m = MINASBR(**params).fit(stream.X_train, stream.Y_train[:, known])
    Y, unknown, P = m.predict_stream(stream.X_stream, return_unknown=True, return_patterns=True)
    by_hand = evaluate_novelty(stream.Y_stream, np.hstack([Y, P]), known, unknown=unknown)
    _same(res, by_hand)
    assert res.n_patterns == m.n_novelty_patterns_ > 0
    assert res.unknown.sum() == m.n_unknown_


def test_a_reference_told_every_label_and_an_incremental_method(stream):
    res = evaluate_novelty_stream(make_method("every-label", seed=0), stream, fit_labels="all")
    L = stream.Y_stream.shape[1]
    ones = np.ones((len(stream.Y_stream), L), dtype=np.uint8)
    _same(res, evaluate_novelty(stream.Y_stream, ones, list(range(L))))

    class Memorizer:
        """Incremental: predicts the previous row's true labels, then learns the row's."""

        kind = "incremental"

        def fit(self, X, Y):
            self.last = np.zeros(Y.shape[1], dtype=np.uint8)
            self.width = Y.shape[1]
            return self

        def predict_learn(self, X, Y):
            out = np.empty((len(X), self.width), dtype=np.uint8)
            for i in range(len(X)):
                out[i] = self.last
                self.last = Y[i]
            return out

    res = evaluate_novelty_stream(Memorizer(), stream, chunk_size=1000)
    Yp = np.vstack([np.zeros((1, L), np.uint8), stream.Y_stream[:-1]])
    _same(res, evaluate_novelty(stream.Y_stream, Yp, list(range(L))))


def test_bad_arguments_are_refused_by_name(stream):
    m = SOMStreamClassifier(grid_size=2)
    with pytest.raises(TypeError, match="dataset must be a novelty stream"):
        evaluate_novelty_stream(m, (stream.X_stream, stream.Y_stream))
    with pytest.raises(ValueError, match="kind must be one of"):
        evaluate_novelty_stream(m, stream, kind="stream")
    with pytest.raises(ValueError, match="fit_labels must be one of"):
        evaluate_novelty_stream(m, stream, fit_labels="some")
    with pytest.raises(ValueError, match="chunk_size"):
        evaluate_novelty_stream(m, stream, chunk_size=0)
