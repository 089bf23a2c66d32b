"""Styles and legends of the figures (mlsom.plotting) with 1, 5, 15 and 40 methods.

Every curve has its own (colour, line style, marker), mlsom a reserved one, the legend lies
outside the data and shows exactly the lines drawn; the heat map's colour bar is the scale of its
cells; the critical difference diagram's names neither overlap each other nor its lines.
"""

import itertools

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mlsom import plotting  # noqa: E402
from mlsom.plotting import (  # noqa: E402
    method_styles,
    plot_critical_difference,
    plot_curves,
    plot_nemenyi_heatmap,
)
from mlsom.stats import friedman_nemenyi  # noqa: E402

SIZES = [1, 5, 15, 40]


def _names(n):
    """n method names as an experiment reports them: mlsom first, then baselines, then others;
    given in a shuffled order (the styles must not depend on it)."""
    pool = ["mlsom", *plotting._KNOWN_METHODS, *(f"custom-{i:02d}" for i in range(40))]
    names = pool[:n]
    np.random.default_rng(n).shuffle(names)
    return names


def _curves(names, n_windows=50):
    rng = np.random.default_rng(len(names))
    return {m: np.clip(0.5 + np.cumsum(rng.normal(0, 0.03, n_windows)), 0, 1) for m in names}


def _draw(fig):
    """Draw the figure on an Agg canvas; return its renderer."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _style(line):
    return (to_rgba(line.get_color()), line.get_linestyle(), line.get_marker())


def _result(names):
    rng = np.random.default_rng(len(names))
    k = len(names)
    scores = rng.random((12, k)) + np.linspace(1.0, 0.0, k)
    return friedman_nemenyi(scores, methods=names)


# ---------------------------------------------------------------------- curves


@pytest.mark.parametrize("n", SIZES)
def test_curves_styles_distinct_and_mlsom_reserved(n):
    names = _names(n)
    (ax,) = plot_curves(_curves(names)).axes
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert list(lines) == names
    styles = [_style(ln) for ln in ax.lines]
    assert len(set(styles)) == n  # (a) no two lines share (colour, line style, marker)
    # the first ten methods (mlsom and the nine colours of the palette) differ in colour
    assert len({s[0] for s in styles}) == min(n, 10)
    top = lines["mlsom"]
    for m, ln in lines.items():
        if m == "mlsom":
            continue
        # (b) mlsom differs from every other in colour, and in marker and width too
        assert to_rgba(ln.get_color()) != to_rgba(top.get_color())
        assert ln.get_marker() != top.get_marker()
        assert ln.get_linewidth() < top.get_linewidth()
        assert ln.get_zorder() < top.get_zorder()  # drawn on top


@pytest.mark.parametrize("n", SIZES)
def test_curves_legend_outside_data_and_matching_lines(n):
    names = _names(n)
    fig = plot_curves(_curves(names), title=f"{n} methods", ylim=(0, 1))
    renderer = _draw(fig)
    (ax,) = fig.axes
    legend = ax.get_legend()
    box = legend.get_window_extent(renderer)
    data_area = ax.get_window_extent(renderer)
    # (c) the legend lies right of the axes' data area, so off every line, and inside the figure
    assert box.x0 > data_area.x1
    assert not box.overlaps(data_area)
    for ln in ax.lines:
        assert not box.overlaps(ln.get_window_extent(renderer))
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1
    assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1
    # the data keep a readable area however long the legend
    assert data_area.width >= 4.0 * fig.dpi and data_area.height >= 2.4 * fig.dpi
    # (d) one entry per line, in the same order, with the line's label and style
    handles = legend.legend_handles
    assert [t.get_text() for t in legend.get_texts()] == [ln.get_label() for ln in ax.lines]
    assert len(handles) == len(ax.lines)
    for handle, ln in zip(handles, ax.lines, strict=True):
        assert _style(handle) == _style(ln)
        assert handle.get_linewidth() == ln.get_linewidth()
    # several columns when one would be too tall
    assert legend._ncols == (1 if n <= 16 else -(-n // 16))


def test_curves_legend_outside_given_axes():
    fig = Figure(figsize=(10, 4), layout="constrained")
    left, right = fig.subplots(1, 2)
    plot_curves(_curves(_names(5)), ax=left)
    renderer = _draw(fig)
    box = left.get_legend().get_window_extent(renderer)
    assert box.x0 > left.get_window_extent(renderer).x1
    assert not box.overlaps(right.get_window_extent(renderer))


def test_curves_without_legend_keep_the_default_size():
    fig = plot_curves(_curves(_names(40)), legend=False)
    assert fig.axes[0].get_legend() is None
    assert tuple(fig.get_size_inches()) == (6.0, 3.6)


# ---------------------------------------------------------------------- style rules


def test_styles_depend_on_the_names_only_and_stay_when_methods_are_added():
    names = _names(15)
    styles = method_styles(names)
    assert list(styles) == names
    assert method_styles(sorted(names)) == styles
    # baselines keep their style when an unknown method joins, and all when one sorting last does
    more = method_styles([*names, "zzz-new"])
    assert all(more[m] == styles[m] for m in names)
    more = method_styles([*names, "aaa-new"])
    assert all(more[m] == styles[m] for m in names if not m.startswith("custom"))


def test_styles_of_a_thousand_methods_are_distinct():
    names = [f"m{i:04d}" for i in range(plotting.MAX_PLOT_METHODS)]
    styles = list(method_styles(names).values())
    triples = [(s["color"], s["linestyle"], s["marker"]) for s in styles]
    assert len(set(triples)) == len(triples)
    # neighbours differ in all three
    for a, b in itertools.pairwise(triples):
        assert all(x != y for x, y in zip(a, b, strict=True))
    assert all(s["color"] != "black" and s["marker"] != "*" for s in styles)


@pytest.mark.parametrize(
    "names, expected",
    [
        (["BR-J48", "mlsom", "MINAS-BR"], "mlsom"),
        (["mlsom-d4", "mlsom", "mlsom-d2"], "mlsom"),
        (["BR-HT", "mlsom (d=3, best)", "MINAS-BR"], "mlsom (d=3, best)"),
        (["mlsom (adapts online)", "mlsom frozen after fit"], "mlsom (adapts online)"),
        (["SOM-Stream-ML", "ML-kNN"], "SOM-Stream-ML"),
        (["mlsomething", "ML-kNN"], None),
        (["SOM-3", "EaCC"], None),
    ],
)
def test_highlight_auto(names, expected):
    styles = method_styles(names)
    black = [m for m, s in styles.items() if s["color"] == "black"]
    assert black == ([] if expected is None else [expected])


def test_highlight_explicit_and_none():
    names = ["mlsom", "MINAS-BR", "BR-J48"]
    assert method_styles(names, highlight="BR-J48")["BR-J48"]["color"] == "black"
    assert method_styles(names, highlight="BR-J48")["mlsom"]["color"] != "black"
    assert all(s["color"] != "black" for s in method_styles(names, highlight=None).values())
    with pytest.raises(ValueError, match=r"highlight='EaCC' is not one of the methods"):
        plot_curves(_curves(names), highlight="EaCC")
    with pytest.raises(TypeError, match=r"highlight must be a method name"):
        method_styles(names, highlight=1)


def test_known_methods_cover_the_runner():
    from mlsom.experiment import available_methods

    assert set(available_methods()) - {"mlsom"} <= set(plotting._KNOWN_METHODS)


# ---------------------------------------------------------------------- heat map


def _pixels(buffer, points):
    """RGB in [0, 1] of the rendered figure at these display points (x, y from bottom left)."""
    x, y = np.asarray(points).astype(int).T
    return buffer[buffer.shape[0] - y, x, :3] / 255.0


@pytest.mark.parametrize("n", SIZES[1:])
def test_heatmap_colour_bar_is_the_scale_of_the_cells(n):
    result = _result(_names(n))
    fig = plot_nemenyi_heatmap(result, annotate=False)
    renderer = _draw(fig)
    ax = fig.axes[0]
    (image,) = ax.get_images()
    bar = image.colorbar
    assert ax.get_legend() is None  # no legend of two colours beside a graded map
    assert bar is not None and bar.mappable is image
    assert bar.cmap is image.cmap and bar.norm is image.norm
    assert result.alpha in bar.get_ticks()
    assert not bar.ax.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))

    # (e) what is drawn: every off-diagonal cell against the colour bar at the cell's p-value
    buffer = np.asarray(fig.canvas.buffer_rgba())
    p = np.ma.getdata(image.get_array())
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    level = np.asarray(image.norm(p[i, j]))
    keep = np.abs(level - 0.5) >= 0.02  # the bar's alpha line lies at 0.5
    assert keep.sum() >= n * (n - 1) // 2
    i, j, level = i[keep], j[keep], level[keep]
    cells = _pixels(buffer, ax.transData.transform(np.column_stack([j, i])))
    frac = np.clip(level, 0.01, 0.99)  # off the bar's outline
    on_bar = _pixels(buffer, bar.ax.transAxes.transform(np.column_stack([0.5 + 0 * frac, frac])))
    np.testing.assert_allclose(cells, on_bar, atol=3 / 255)
    np.testing.assert_allclose(cells, image.cmap(level)[:, :3], atol=1 / 255)
    np.testing.assert_array_equal(cells[:, 0] < 0.35, p[i, j] < result.alpha)
    # the diagonal is white, the colormap's colour of masked cells
    diagonal = np.column_stack([np.arange(n), np.arange(n)])
    np.testing.assert_allclose(_pixels(buffer, ax.transData.transform(diagonal)), 1.0)
    # the step at alpha: the two sides never share a colour
    below = image.cmap(image.norm(np.nextafter(result.alpha, 0.0)))
    above = image.cmap(image.norm(result.alpha))
    assert below[0] < 0.35 <= 0.65 <= above[0]


# ---------------------------------------------------------------------- CD diagram


@pytest.mark.parametrize("n", SIZES[1:])
def test_cd_diagram_names_apart_from_each_other_and_the_lines(n):
    result = _result(_names(n))
    fig = plot_critical_difference(result, show_ranks=True)
    renderer = _draw(fig)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_gid() == "method-label"]
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert len(boxes) == n
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    # every vertical line from the rank axis lies between the two columns of names
    xs = [
        ax.transData.transform((ln.get_xdata()[0], 0.0))[0]
        for ln in ax.lines
        if ln.get_gid() == "method-line"
    ]
    left = [b for t, b in zip(labels, boxes, strict=True) if t.get_ha() == "right"]
    right = [b for t, b in zip(labels, boxes, strict=True) if t.get_ha() == "left"]
    assert max(b.x1 for b in left) < min(xs) and max(xs) < min(b.x0 for b in right)
    # each name on a row of its own, at the end of its line (which stops short of the names)
    lines = [ln for ln in ax.lines if ln.get_gid() == "method-line"]
    ends = [ax.transData.transform((ln.get_xdata()[-1], ln.get_ydata()[-1])) for ln in lines]
    assert len({round(y, 3) for _, y in ends}) == -(-n // 2)
    for (x, y), ln in zip(ends, lines, strict=True):
        side = left if ln.get_xdata()[-1] < ln.get_xdata()[0] else right
        (own,) = [b for b in side if b.y0 < y < b.y1]
        assert own.x1 <= x if side is left else x <= own.x0
    # and inside the figure
    for b in boxes:
        assert fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1
