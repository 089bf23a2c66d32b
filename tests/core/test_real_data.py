"""The core against the NumPy reference, and sanity of its results, on real data (Yeast, Scene).

The data ship in tests/data (see its README for provenance); a missing file fails the test.
"""

import numpy as np
import pytest

from mlsom import SOMStreamClassifier
from mlsom.datasets import load
from mlsom.evaluation import confusion_counts, macro_f1
from tests.helpers.compare import params, run_case
from tests.helpers.paths import DATA


@pytest.fixture(scope="module", params=["Scene", "Yeast"])
def stream(request):
    return load(request.param, data_home=DATA)


@pytest.mark.parametrize("d, nb", [(2, "bubble"), (3, "gaussian")])
def test_core_matches_reference_on_real_data(stream, d, nb):
    # the first 400 instances of the stream keep the pure-Python reference quick
    _, Y_hat, _ = run_case(
        stream.X_train,
        stream.Y_train,
        stream.X_stream[:400],
        params(d, neighborhood=nb, random_state=7),
    )
    assert (Y_hat.sum(axis=1) >= 1).all()


def test_better_than_chance(stream):
    """Macro F above a predictor that guesses each label with its training frequency, and above
    always predicting the most frequent label."""
    model = SOMStreamClassifier(grid_size=3, random_state=0).fit(stream.X_train, stream.Y_train)
    Y = stream.Y_stream
    ours = macro_f1(confusion_counts(Y, model.predict_stream(stream.X_stream)))
    rng = np.random.default_rng(0)
    prior = stream.Y_train.mean(axis=0)
    chance = np.mean(
        [
            macro_f1(confusion_counts(Y, (rng.random(Y.shape) < prior).astype(np.uint8)))
            for _ in range(5)
        ]
    )
    top = np.zeros_like(Y)
    top[:, np.argmax(stream.Y_train.sum(0))] = 1
    most_frequent = macro_f1(confusion_counts(Y, top))
    assert ours > max(chance, most_frequent) + 0.02, (ours, chance, most_frequent)


def test_scene_beats_predicting_every_label():
    """On Scene (cardinality 1.07) the method also beats the all-labels predictor. On Yeast
    (cardinality 4.2, 13 labels) it does not: a known weakness, reported, not hidden."""
    ds = load("Scene", data_home=DATA)
    model = SOMStreamClassifier(grid_size=3, random_state=0).fit(ds.X_train, ds.Y_train)
    ours = macro_f1(confusion_counts(ds.Y_stream, model.predict_stream(ds.X_stream)))
    everything = macro_f1(confusion_counts(ds.Y_stream, np.ones_like(ds.Y_stream)))
    assert ours > everything + 0.1, (ours, everything)
