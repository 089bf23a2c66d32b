"""Figures (mlsom.plotting): curves, Nemenyi heat map, critical difference diagram, PNG files."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mlsom.plotting import (  # noqa: E402
    plot_critical_difference,
    plot_curves,
    plot_nemenyi_heatmap,
    save_png,
)
from mlsom.stats import friedman_nemenyi  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

METHODS = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
# Demšar (2006), Table 6, with C4.5+cf just ahead on "voting" as in the paper's ranks.
AUC = np.array(
    [
        [0.763, 0.768, 0.771, 0.798],
        [0.599, 0.591, 0.590, 0.569],
        [0.954, 0.971, 0.968, 0.967],
        [0.628, 0.661, 0.654, 0.657],
        [0.882, 0.888, 0.886, 0.898],
        [0.936, 0.931, 0.916, 0.931],
        [0.661, 0.668, 0.609, 0.685],
        [0.583, 0.583, 0.563, 0.625],
        [0.775, 0.838, 0.866, 0.875],
        [1.000, 1.000, 1.000, 1.000],
        [0.940, 0.962, 0.965, 0.962],
        [0.619, 0.666, 0.614, 0.669],
        [0.972, 0.981, 0.97501, 0.975],
        [0.957, 0.978, 0.946, 0.970],
    ]
)
RANK_ORDER = ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]


@pytest.fixture(scope="module")
def result10():
    return friedman_nemenyi(AUC, methods=METHODS, alpha=0.10)


@pytest.fixture(scope="module")
def result_many():
    rng = np.random.default_rng(5)
    k = 25
    scores = rng.random((12, k)) + np.linspace(1.0, 0.0, k)
    names = [f"method-{j:02d}" for j in rng.permutation(k)]
    return friedman_nemenyi(scores, methods=names)


def _texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


def _lines(ax, gid):
    return [ln for ln in ax.lines if ln.get_gid() == gid]


# ---------------------------------------------------------------------- curves


def make_curves(n=50):
    rng = np.random.default_rng(1)
    return {
        m: np.clip(0.5 + np.cumsum(rng.normal(0, 0.02, n)), 0, 1)
        for m in ["SOM-3", "EaCC", "BR-J48", "MINAS-BR"]
    }


def test_curves_one_labelled_line_per_method():
    curves = make_curves()
    fig = plot_curves(curves, title="MOA-Spher-5C-2A")
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert [ln.get_label() for ln in ax.lines] == list(curves)
    for ln, values in zip(ax.lines, curves.values(), strict=True):
        np.testing.assert_array_equal(ln.get_xdata(), np.arange(1, 51))
        np.testing.assert_array_equal(ln.get_ydata(), values)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(curves)
    assert ax.get_title() == "MOA-Spher-5C-2A"
    assert ax.get_ylabel() == "macro F"
    assert ax.get_xlabel() == "evaluation window"
    # neighbouring methods differ in colour and line style
    styles = [(to_rgb(ln.get_color()), ln.get_linestyle()) for ln in ax.lines]
    assert len(set(styles)) == len(styles)


def test_curves_options():
    curves = make_curves(10)
    x = np.arange(10) * 100
    fig = plot_curves(
        curves,
        x=x,
        ylabel="micro F",
        ylim=(0, 1),
        legend=False,
        styles={"EaCC": {"color": "black", "linestyle": ":"}},
    )
    (ax,) = fig.axes
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), x)
    assert ax.get_ylabel() == "micro F"
    assert ax.get_ylim() == (0.0, 1.0)
    assert ax.get_legend() is None
    assert to_rgb(ax.lines[1].get_color()) == (0.0, 0.0, 0.0)
    assert ax.lines[1].get_linestyle() == ":"


def test_curves_on_given_axes_of_a_grid():
    fig = Figure()
    axes = fig.subplots(1, 2)
    out = plot_curves({"a": [0.1, 0.2]}, ax=axes[1])
    assert out is fig
    assert len(axes[1].lines) == 1 and len(axes[0].lines) == 0


def test_curves_whose_keys_print_the_same_are_refused():
    """{1: ..., "1": ...} would draw one line labelled '1' and drop the other."""
    with pytest.raises(ValueError, match=r"curves: keys \['1'\] are given twice"):
        plot_curves({1: [0.1, 0.2], "1": [0.3, 0.4]})


def test_curves_of_different_lengths_without_x():
    fig = plot_curves({"a": [0.1, 0.2, 0.3], "b": [0.4, 0.5]})
    assert [len(ln.get_xdata()) for ln in fig.axes[0].lines] == [3, 2]


@pytest.mark.parametrize(
    "curves, kwargs, exc, match",
    [
        ([0.1, 0.2], {}, TypeError, r"curves must be a mapping"),
        ({}, {}, ValueError, r"at least one method"),
        ({"a": [[0.1, 0.2]]}, {}, ValueError, r"curves\['a'\] must be a non-empty 1-D"),
        ({"a": []}, {}, ValueError, r"curves\['a'\] must be a non-empty 1-D"),
        ({"a": ["x", "y"]}, {}, TypeError, r"curves\['a'\] must be a sequence of real numbers"),
        (
            {"a": [0.1, 0.2]},
            {"x": [1, 2, 3]},
            ValueError,
            r"curves\['a'\] has 2 values but x has 3",
        ),
        ({"a": [0.1, 0.2]}, {"styles": {"b": {}}}, ValueError, r"not in curves: \['b'\]"),
        ({"a": [0.1, 0.2]}, {"ax": "left"}, TypeError, r"ax must be a matplotlib Axes"),
    ],
)
def test_curves_bad_input(curves, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        plot_curves(curves, **kwargs)


# ---------------------------------------------------------------------- heat map


def test_heatmap_is_ordered_by_mean_rank_and_annotated(result10):
    fig = plot_nemenyi_heatmap(result10)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == RANK_ORDER
    assert [t.get_text() for t in ax.get_yticklabels()] == RANK_ORDER
    texts = _texts(ax, "pvalue")
    assert len(texts) == 4 * 3  # every off-diagonal cell, none on the diagonal
    for t in texts:
        j, i = (int(round(v)) for v in t.get_position())
        assert i != j
        p = result10.pvalue(RANK_ORDER[i], RANK_ORDER[j])
        assert t.get_text() == f"{p:.2f}"
        assert to_rgb(t.get_color()) == ((1.0, 1.0, 1.0) if p < 0.10 else (0.0, 0.0, 0.0))
    assert "0.0258" in ax.get_title()


def _cell_grey(image):
    """Grey level of every cell as drawn: the image's colormap and norm applied to its array."""
    rgba = image.to_rgba(image.get_array())
    np.testing.assert_array_equal(rgba[..., 0], rgba[..., 2])  # greys
    return rgba[..., 0]


def test_heatmap_cells_dark_where_significant(result10):
    ax = plot_nemenyi_heatmap(result10).axes[0]
    (image,) = ax.get_images()
    order = [METHODS.index(m) for m in RANK_ORDER]
    p = result10.pvalues[np.ix_(order, order)]
    np.testing.assert_array_equal(np.ma.getdata(image.get_array()), p)
    grey = _cell_grey(image)
    sig = result10.significant()[np.ix_(order, order)]
    assert sig.sum() == 4  # C4.5 against C4.5+m and C4.5+m+cf, both ways
    off = ~np.eye(4, dtype=bool)
    # significant: black to dark grey; the others light grey, lighter as p grows
    np.testing.assert_array_equal((grey < 0.35)[off], sig[off])
    assert (grey[off & ~sig] >= 0.65).all()
    light = off & ~sig
    assert np.all(np.diff(grey[light][np.argsort(p[light])]) >= 0)
    np.testing.assert_array_equal(np.diag(grey), np.ones(4))  # white diagonal
    assert image.origin == "upper"  # the best method at the top left
    # at alpha = 0.05 nothing is dark
    image05 = plot_nemenyi_heatmap(result10, alpha=0.05).axes[0].get_images()[0]
    assert (_cell_grey(image05) >= 0.65).all()


def test_heatmap_custom_order_and_annotation_switch(result_many):
    order = sorted(result_many.methods)
    fig = plot_nemenyi_heatmap(result_many, order=order, title="")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == order
    assert _texts(ax, "pvalue") == []  # 25 methods: no annotations by default
    assert ax.get_title() == ""
    annotated = plot_nemenyi_heatmap(result_many, annotate=True, fmt=".1e").axes[0]
    texts = _texts(annotated, "pvalue")
    assert len(texts) == 25 * 24
    assert all("e" in t.get_text() for t in texts)
    ranked = [t.get_text() for t in annotated.get_xticklabels()]
    assert ranked == [m for m, _ in result_many.ranking()]


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"order": ["C4.5"]}, ValueError, r"order must list every method once"),
        ({"order": "C4.5"}, TypeError, r"order must be a sequence of method names"),
        ({"alpha": 2.0}, ValueError, r"alpha must lie strictly between 0 and 1"),
    ],
)
def test_heatmap_bad_input(result10, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        plot_nemenyi_heatmap(result10, **kwargs)


@pytest.mark.parametrize("plot", [plot_nemenyi_heatmap, plot_critical_difference])
def test_plots_need_a_result(plot):
    with pytest.raises(TypeError, match="result must be a FriedmanNemenyiResult"):
        plot(np.ones((4, 4)))


# ---------------------------------------------------------------------- CD diagram


def _label_order(ax):
    """Method labels in rank order: left side top to bottom, then right side bottom to top."""
    labels = _texts(ax, "method-label")
    left = sorted((t for t in labels if t.get_ha() == "right"), key=lambda t: t.get_position()[1])
    right = sorted((t for t in labels if t.get_ha() == "left"), key=lambda t: -t.get_position()[1])
    return [t.get_text() for t in left + right], len(left), len(right)


def test_cd_diagram_labels_in_rank_order(result10):
    fig = plot_critical_difference(result10)
    ax = fig.axes[0]
    assert ax.yaxis_inverted()  # y grows downwards: smaller y is higher on the page
    order, n_left, n_right = _label_order(ax)
    assert order == RANK_ORDER
    assert (n_left, n_right) == (2, 2)


def test_cd_diagram_groups_and_cd_bar(result10):
    ax = plot_critical_difference(result10).axes[0]
    groups = _lines(ax, "cd-group")
    assert len(groups) == len(result10.groups()) == 2
    (bar,) = _lines(ax, "cd-bar")
    # positions of the methods on the axis: the vertical part of each label's line
    xs = {}
    connectors = _lines(ax, "method-line")
    assert len(connectors) == 4
    for t in _texts(ax, "method-label"):
        tx, ty = t.get_position()
        (ln,) = [
            ln
            for ln in connectors
            if ln.get_ydata()[-1] == ty and abs(ln.get_xdata()[-1] - tx) < 0.1
        ]
        xs[t.get_text()] = ln.get_xdata()[0]
    assert xs["C4.5+m+cf"] < xs["C4.5+m"] < xs["C4.5+cf"] < xs["C4.5"]
    unit = (xs["C4.5"] - xs["C4.5+m+cf"]) / (3.143 - 1.964)
    cd_len = np.ptp(bar.get_xdata())
    assert cd_len == pytest.approx(result10.cd * unit, rel=2e-3)
    for line, members in zip(groups, result10.groups(), strict=True):
        lo, hi = sorted(line.get_xdata())
        assert lo < min(xs[m] for m in members) and hi > max(xs[m] for m in members)
        outside = set(METHODS) - set(members)
        assert all(not lo <= xs[m] <= hi for m in outside)
    assert any("CD = 1.12" in t.get_text() for t in ax.texts)


def test_cd_diagram_one_group_at_005_and_reverse():
    result = friedman_nemenyi(AUC, methods=METHODS)
    ax = plot_critical_difference(result, reverse=True, show_ranks=True, title="C4.5").axes[0]
    assert len(_lines(ax, "cd-group")) == 1
    labels = _texts(ax, "method-label")
    assert "C4.5+m+cf (1.96)" in [t.get_text() for t in labels]
    # reversed: the best methods are labelled on the right
    right = [t.get_text() for t in labels if t.get_ha() == "left"]
    assert sorted(right) == sorted(["C4.5+m+cf (1.96)", "C4.5+m (2.00)"])
    assert ax.get_title() == "C4.5"


def test_cd_diagram_many_methods(result_many):
    fig = plot_critical_difference(result_many)
    ax = fig.axes[0]
    order, n_left, n_right = _label_order(ax)
    assert order == [m for m, _ in result_many.ranking()]
    assert (n_left, n_right) == (13, 12)
    assert len(_lines(ax, "cd-group")) == len(result_many.groups()) > 1


# ---------------------------------------------------------------------- saving


def test_save_png_writes_png(tmp_path, result10):
    figures = [
        plot_curves(make_curves()),
        plot_nemenyi_heatmap(result10),
        plot_critical_difference(result10, title="CD"),
    ]
    for i, fig in enumerate(figures):
        path = save_png(fig, tmp_path / "nested" / f"figure{i}")  # suffix added, folder made
        assert path == tmp_path / "nested" / f"figure{i}.png"
        data = path.read_bytes()
        assert data[:8] == PNG_MAGIC
        assert len(data) > 1000


def test_save_png_rejects_other_formats(tmp_path):
    fig = plot_curves({"a": [0.1, 0.2]})
    with pytest.raises(ValueError, match=r"path must name a \.png file, got '.*figure\.pdf'"):
        save_png(fig, tmp_path / "figure.pdf")
    assert not (tmp_path / "figure.pdf").exists()
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        save_png("figure", tmp_path / "figure.png")


def test_plot_label_fractions_draws_a_log_axis_with_zero():
    pytest.importorskip("matplotlib")
    from mlsom.plotting import plot_label_fractions

    scores = {
        "mlsom-d2": {0: 0.34, 0.001: 0.8, 0.01: 0.9, 0.1: 0.93, 1: 0.95},
        "BR-HT": {0: 0.5, 0.001: 0.55, 0.01: 0.6, 0.1: 0.7, 1: 0.78},
    }
    fig = plot_label_fractions(scores, title="2C-2A")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.001", "0.01", "0.1", "1"]
    xs = ax.lines[0].get_xdata()
    assert xs[0] == pytest.approx(1e-4) and list(xs[1:]) == [0.001, 0.01, 0.1, 1]
    with pytest.raises(ValueError, match="same fractions"):
        plot_label_fractions({"a": {0: 1, 1: 1}, "b": {0: 1}})
    with pytest.raises(ValueError, match="label fraction"):
        plot_label_fractions({"a": {2: 1}})
    with pytest.raises(TypeError, match="non-empty mapping"):
        plot_label_fractions({})


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"curves": {"a": [1e308, -1e308]}}, ValueError, r"curves span from -1e\+308 to 1e\+308"),
        ({"ylim": (1e308, -1e308)}, ValueError, r"ylim \(1e\+308, -1e\+308\) spans more than"),
        ({"curves": {"$x^$": [0.1, 0.2]}}, ValueError, r"method name '\$x\^\$' is not mathtext"),
        ({"title": "$x^$"}, ValueError, r"title '\$x\^\$' is not mathtext"),
        ({"styles": {"a": 5}}, TypeError, r"styles\['a'\] must be a dict of line properties"),
    ],
)
def test_what_matplotlib_could_not_draw_is_refused_before_drawing(kwargs, exc, match):
    """These failed inside matplotlib when the figure was drawn, naming no argument."""
    with pytest.raises(exc, match=match):
        plot_curves(**{"curves": {"a": [0.1, 0.2]}, **kwargs})


def test_dollar_signs_that_are_no_mathtext_still_draw(tmp_path):
    fig = plot_curves({"cost $5": [0.1, 0.2]}, title=r"$\eta$ = 0.05, price \$3")
    save_png(fig, tmp_path / "dollars.png")
    assert (tmp_path / "dollars.png").stat().st_size > 0
