"""plot_novelty: F1M curves over a novelty stream with the new labels' first rows and their
detections marked."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mlsom.evaluation import evaluate_novelty  # noqa: E402
from mlsom.plotting import plot_novelty  # noqa: E402


def _stream():
    # label 0 known; label 1 new from row 40 on; 100 rows, 10 windows
    Y = np.zeros((100, 2), dtype=np.uint8)
    Y[:, 0] = np.arange(100) % 2
    Y[40:, 1] = 1
    return Y


def test_curves_first_rows_and_detections_are_drawn():
    Y = _stream()
    finds = np.hstack([Y[:, :1], Y[:, 1:]])  # NP1 is label 1 exactly
    blind = np.hstack([Y[:, :1], np.zeros((100, 1), np.uint8)])
    res = {
        "finds": evaluate_novelty(Y, finds, [0], n_windows=10),
        "blind": evaluate_novelty(Y, blind[:, :1], [0], n_windows=10),
    }
    fig = plot_novelty(res, title="toy")
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_array_equal(lines["finds"].get_xdata(), res["finds"].window_edges[1:])
    np.testing.assert_allclose(lines["finds"].get_ydata(), res["finds"].curve("f1m"))
    # one dotted line at the new label's first row (40), and one triangle: where "finds"
    # associated its pattern (the end of window 4, row 50); none for "blind"
    vertical = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert [ln.get_xdata()[0] for ln in vertical] == [40]
    marks = [ln for ln in ax.get_lines() if ln.get_marker() == "v" and ln.get_linestyle() == "None"]
    assert len(marks) == 1
    w = res["finds"].detection_window[1]
    assert marks[0].get_xdata()[0] == res["finds"].window_edges[w + 1] == 50
    assert marks[0].get_color() == lines["finds"].get_color()
    assert ax.get_title() == "toy" and ax.get_xlabel() == "test instances"


def test_bad_input_is_refused_by_name():
    Y = _stream()
    res = evaluate_novelty(Y, Y[:, :1], [0], n_windows=10)
    with pytest.raises(TypeError, match="evaluations must be a non-empty mapping"):
        plot_novelty({})
    with pytest.raises(TypeError, match=r"evaluations\['a'\] must be a NoveltyEvaluation"):
        plot_novelty({"a": [0.1, 0.2]})
    with pytest.raises(ValueError, match="convention must be one of"):
        plot_novelty({"a": res}, convention="all")
    other = evaluate_novelty(Y, Y[:, :1], [0], n_windows=5)
    with pytest.raises(ValueError, match=r"evaluations\['b'\] has other windows"):
        plot_novelty({"a": res, "b": other})
