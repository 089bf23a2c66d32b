"""The titles of the Nemenyi heat map and the critical difference diagram (measure, streams,
alpha) and the heat map's rows in the order of its columns."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mlsom.plotting import plot_critical_difference, plot_nemenyi_heatmap  # noqa: E402
from mlsom.stats import friedman_nemenyi  # noqa: E402

# 7 streams, 5 methods whose ranks are all different (best first: e, c, a, d, b)
SCORES = np.array(
    [
        [0.60, 0.20, 0.70, 0.40, 0.90],
        [0.55, 0.25, 0.65, 0.45, 0.85],
        [0.50, 0.10, 0.80, 0.30, 0.95],
        [0.62, 0.22, 0.72, 0.42, 0.70],
        [0.58, 0.18, 0.68, 0.48, 0.88],
        [0.61, 0.21, 0.59, 0.41, 0.91],
        [0.57, 0.27, 0.77, 0.37, 0.87],
    ]
)
METHODS = ["a", "b", "c", "d", "e"]
BEST_FIRST = ["e", "c", "a", "d", "b"]


@pytest.fixture(scope="module")
def result():
    return friedman_nemenyi(SCORES, methods=METHODS, alpha=0.1)


def test_cd_diagram_title_names_measure_streams_and_alpha(result):
    ax = plot_critical_difference(result, measure="macro F").axes[0]
    assert ax.get_title() == "macro F\nNemenyi critical difference, 7 streams, \u03b1 = 0.1"
    ax = plot_critical_difference(result).axes[0]
    assert ax.get_title() == "Nemenyi critical difference, 7 streams, \u03b1 = 0.1"
    assert plot_critical_difference(result, title="").axes[0].get_title() == ""
    assert plot_critical_difference(result, title="mine").axes[0].get_title() == "mine"


def test_heatmap_title_names_measure_streams_alpha_and_friedman(result):
    title = plot_nemenyi_heatmap(result, measure="Hamming loss", alpha=0.05).axes[0].get_title()
    assert title == (
        "Hamming loss\nNemenyi p-values, 7 streams, \u03b1 = 0.05 "
        f"(Friedman p = {result.chi2_pvalue:.3g})"
    )


def test_titles_refuse_a_measure_that_is_not_text(result):
    with pytest.raises(TypeError, match="measure must be a str or None"):
        plot_critical_difference(result, measure=3)
    with pytest.raises(TypeError, match="measure must be a str or None"):
        plot_nemenyi_heatmap(result, measure=3)


def _in_screen_order(ax, axis):
    """Tick labels of an axis as a reader meets them: left to right (x), top to bottom (y)."""
    ax.figure.canvas.draw()
    if axis == "x":
        ticks = ax.get_xticklabels()
        screen = [ax.transData.transform((t.get_position()[0], 0))[0] for t in ticks]
    else:
        ticks = ax.get_yticklabels()
        # display y grows upwards: top to bottom is descending y
        screen = [-ax.transData.transform((0, t.get_position()[1]))[1] for t in ticks]
    return [ticks[i].get_text() for i in np.argsort(screen)]


@pytest.mark.parametrize("order", [None, ["b", "a", "e", "d", "c"]])
def test_heatmap_rows_run_in_the_order_of_its_columns(result, order):
    ax = plot_nemenyi_heatmap(result, order=order).axes[0]
    expected = BEST_FIRST if order is None else order
    assert _in_screen_order(ax, "x") == expected
    assert _in_screen_order(ax, "y") == expected
    # the cell drawn at the i-th row from the top and the i-th column from the left is the
    # diagonal (white, masked); the p-value written in a cell is that of its row and column
    for text in ax.texts:
        if text.get_gid() != "pvalue":
            continue
        j, i = (int(round(v)) for v in text.get_position())
        assert text.get_text() == f"{result.pvalue(expected[i], expected[j]):.2f}"
    image = ax.get_images()[0]
    assert np.ma.getmaskarray(image.get_array()).diagonal().all()
