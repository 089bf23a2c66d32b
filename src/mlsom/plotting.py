"""Figures of an experiment: performance curves, Nemenyi heat maps, critical difference diagrams.

Every function draws on a new :class:`matplotlib.figure.Figure` (or on the ``ax`` it is given) and
returns the figure; nothing is shown on screen. The new figures are not registered with pyplot, so
they need no closing and any number of them can be made in a batch job; in a notebook, make the
figure the last expression of a cell to see it. :func:`save_png` writes a figure to a PNG file.

matplotlib is imported when a figure is drawn, not when this module is imported.
"""

import math
import os
import pathlib
import re
from collections.abc import Mapping

import numpy as np

from ._memory import check_allocation, nbytes_of
from ._novelty import NOVELTY_CONVENTIONS, NoveltyEvaluation
from ._validation import check_alpha, check_distinct_text, check_float, describe
from .stats import MAX_METHODS, FriedmanNemenyiResult

__all__ = [
    "method_styles",
    "plot_critical_difference",
    "plot_curves",
    "plot_label_fractions",
    "plot_nemenyi_heatmap",
    "plot_novelty",
    "save_png",
]

# Styles of the curves (see method_styles). Paul Tol's "muted" qualitative palette: nine colours
# that stay apart for the common forms of colour blindness; black is kept for the highlighted
# method (mlsom), and so is the star marker.
_PALETTE = (
    "#CC6677",  # rose
    "#332288",  # indigo
    "#DDCC77",  # sand
    "#117733",  # green
    "#88CCEE",  # cyan
    "#882255",  # wine
    "#44AA99",  # teal
    "#999933",  # olive
    "#AA4499",  # purple
)
_LINESTYLES = ("-", "--", "-.", ":")
# 31 markers (a prime, so that with 9 colours and 4 line styles the slot i -> (i mod 9, i mod 4,
# i mod 31) repeats only after 9 * 4 * 31 = 1116 slots); the clearest first. The integers are
# matplotlib's tick and caret markers.
_MARKERS = (
    "o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "d", "H", "8", "x", "+",
    "1", "2", "3", "4", ".", "|", "_", 0, 1, 2, 3, 4, 5, 6, 7,
)  # fmt: skip
_HIGHLIGHT_STYLE = {
    "color": "black",
    "linestyle": "-",
    "marker": "*",
    "linewidth": 2.4,
    "markersize": 8.0,
    "zorder": 3.0,
}
_BASE_STYLE = {"linewidth": 1.3, "markersize": 4.5, "zorder": 2.0}
# Methods in the order their curves take the style slots 0, 1, 2, ... (after the highlighted
# method and other mlsom variants): the runner's methods (mlsom.experiment.available_methods).
_KNOWN_METHODS = (
    "MINAS-BR",
    *(f"{fam}-{base}" for fam in ("BR", "LP", "RAkEL", "CC", "PS", "EPS", "ECC", "HOMER")
      for base in ("J48", "SVM", "kNN")),
    "ML-kNN",
    "BR-HT", "CC-HT", "PS-HT", "MLHT", "ISOUPTree",
    "EaBR-HT", "EaCC-HT", "EaPS-HT", "EaMLHT", "EaISOUPTree",
    "every-label", "label-rate", "top-z", "mlsom-frozen",
)  # fmt: skip
# mlsom under the names it is reported by: "mlsom", "mlsom-d4", "mlsom (d=3, best)", ...
_MLSOM_NAME = re.compile(r"(?:mlsom|som-stream-ml)(?![\w])", re.IGNORECASE)

#: Most curves in one plot, and most methods in a heat map or diagram (as in :mod:`mlsom.stats`):
#: a thousand lines with their legend take about ten seconds to draw.
MAX_PLOT_METHODS = MAX_METHODS
#: Most methods of a heat map with its p-values written in the cells: k (k - 1) texts take about
#: 2 ms each to make and draw (100 methods: 9,900 texts, about 20 s).
MAX_ANNOTATED_METHODS = 100
# Measured memory of matplotlib objects (matplotlib 3.10): a line with its legend entry, a text
# in a cell, the artists of one method in a critical difference diagram; and bytes per point of a
# line (its x, y and path arrays).
_LINE_BYTES = 40_000
_TEXT_BYTES = 16_000
_CD_METHOD_BYTES = 64_000
_POINT_BYTES = 48


def _figure_and_axes(ax, figsize):
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize, layout="constrained")
        return fig, fig.add_subplot()
    if not hasattr(ax, "get_figure") or not hasattr(ax, "plot"):
        raise TypeError(f"ax must be a matplotlib Axes, got {describe(ax)}")
    try:
        fig = ax.get_figure(root=True)
    except TypeError:  # matplotlib < 3.10
        fig = ax.get_figure()
    return fig, ax


def _check_result(result):
    if not isinstance(result, FriedmanNemenyiResult):
        raise TypeError(
            "result must be a FriedmanNemenyiResult (from mlsom.stats.friedman_nemenyi), "
            f"got {type(result).__name__}"
        )
    k = len(result.methods)
    if k < 2 or k > MAX_PLOT_METHODS:
        raise ValueError(f"result must compare between 2 and {MAX_PLOT_METHODS} methods, got {k}")
    return result


def _check_text(name, value):
    """None, or a str that matplotlib can draw: where it holds an even number of unescaped
    dollar signs matplotlib reads it as mathtext, which must then parse (it failed only when the
    figure was drawn, with the parser's traceback)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {describe(value)}")
    if value is not None:
        n = value.count("$") - value.count(r"\$")
        if n and n % 2 == 0:
            from matplotlib.mathtext import MathTextParser

            try:
                MathTextParser("path").parse(value)
            except ValueError:
                raise ValueError(
                    f"{name} {describe(value)} is not mathtext matplotlib can draw; escape its "
                    "dollar signs as \\$ to print them"
                ) from None
    return value


def _check_span(name, arrays):
    """The values of ``arrays`` (NaN aside) must span less than the largest float: the axis
    ticks are placed over the span (matplotlib fails when it overflows)."""
    lo = min((float(np.nanmin(a)) for a in arrays if np.isfinite(a).any()), default=0.0)
    hi = max((float(np.nanmax(a)) for a in arrays if np.isfinite(a).any()), default=0.0)
    if not math.isfinite(hi - lo):
        raise ValueError(
            f"{name} span from {lo!r} to {hi!r}, more than the largest float: an axis cannot "
            "be drawn over them; scale them first"
        )


def _check_limits(name, value):
    """None or a pair of finite real numbers."""
    if value is None:
        return None
    try:
        pair = tuple(value)
    except TypeError:
        raise TypeError(
            f"{name} must be a pair (low, high) of numbers, got {describe(value)}"
        ) from None
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (low, high), got {describe(value)}")
    pair = tuple(check_float(f"{name}[{i}]", v) for i, v in enumerate(pair))
    if not math.isfinite(pair[1] - pair[0]):
        raise ValueError(f"{name} {pair} spans more than the largest float")
    return pair


def _as_curve(name, values):
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a sequence of real numbers, got {describe(values)}"
        ) from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    return arr


# ------------------------------------------------------------------------------ styles


def _is_mlsom(name):
    return _MLSOM_NAME.match(name) is not None


def _highlighted(names, highlight):
    """The name drawn in the reserved style, or None."""
    if highlight is None:
        return None
    if not isinstance(highlight, str):
        raise TypeError(
            f"highlight must be a method name, 'auto' or None, got {describe(highlight)}"
        )
    if highlight != "auto":
        if highlight not in names:
            raise ValueError(f"highlight={highlight!r} is not one of the methods {sorted(names)}")
        return highlight
    if "mlsom" in names:
        return "mlsom"
    return next((m for m in names if _is_mlsom(m)), None)


def method_styles(methods, *, highlight="auto"):
    """Line styles of methods: a distinct colour, line style and marker for each.

    The rules, which make the styles depend on the set of names only (not on their order, except
    for the choice of the highlighted method under ``"auto"``):

    * The highlighted method (mlsom) is black, solid, thick (2.4 points), with star markers and
      drawn above the others. No other method is black or has stars, so it differs from every
      other one in colour, marker and width.
    * The other methods take the slots 0, 1, 2, ... in this order: other mlsom variants (for
      example ``"mlsom frozen after fit"``) by name, then the methods the experiment runner knows
      (MINAS-BR, the lower bounds BR-J48 ... ML-kNN, the upper bounds BR-HT ... EaISOUPTree, the
      reference predictors every-label ... mlsom-frozen, in the order of
      :func:`mlsom.experiment.available_methods`), then every other name in sorted order. So a
      method keeps its style when methods after it are added.
    * Slot ``i`` gets colour ``i mod 9`` of Paul Tol's colour-blind-safe "muted" palette, line
      style ``i mod 4`` (solid, dashed, dash-dot, dotted) and marker ``i mod 31``. Any nine
      consecutive slots (the first nine in particular) differ in colour, neighbouring slots in
      colour, line style and marker, and no two of the first 1116 slots (more than the 1,000
      curves a plot may hold) share all three.

    Parameters
    ----------
    methods : iterable of str
        Method names.
    highlight : str or None, default="auto"
        The method to draw in the reserved style. ``"auto"``: ``"mlsom"`` when it is among the
        methods, otherwise the first name that starts with the word mlsom or SOM-Stream-ML (as
        ``"mlsom-d4"`` or ``"mlsom (d=3, best)"``), otherwise none; ``None``: none.

    Returns
    -------
    dict of str to dict
        Method name -> keyword arguments of :meth:`matplotlib.axes.Axes.plot` (``color``,
        ``linestyle``, ``marker``, ``linewidth``, ``markersize``, ``zorder``), in the order of
        ``methods``. Pass it as ``styles`` to :func:`plot_curves` to draw several panels of
        different subsets of methods with the same style for each method.
    """
    if isinstance(methods, str) or not hasattr(methods, "__iter__"):
        raise TypeError(f"methods must be a sequence of method names, got {describe(methods)}")
    names = list(dict.fromkeys(str(m) for m in methods))
    if len(names) > MAX_PLOT_METHODS:
        raise ValueError(f"methods must hold at most {MAX_PLOT_METHODS} names, got {len(names)}")
    top = _highlighted(names, highlight)
    known = {m: i for i, m in enumerate(_KNOWN_METHODS)}

    def key(m):
        if _is_mlsom(m):
            return (0, 0, m)
        if m in known:
            return (1, known[m], m)
        return (2, 0, m)

    slots = {m: i for i, m in enumerate(sorted((m for m in names if m != top), key=key))}
    styles = {}
    for m in names:
        if m == top:
            styles[m] = dict(_HIGHLIGHT_STYLE)
            continue
        i = slots[m]
        styles[m] = {
            "color": _PALETTE[i % len(_PALETTE)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
            "marker": _MARKERS[i % len(_MARKERS)],
            **_BASE_STYLE,
        }
    return styles


# ------------------------------------------------------------------------------ curves


def plot_curves(
    curves,
    *,
    x=None,
    title=None,
    xlabel="evaluation window",
    ylabel="macro F",
    ylim=None,
    styles=None,
    highlight="auto",
    legend=True,
    ax=None,
):
    """Plot one performance curve per method, as in the per-stream panels of the paper's Figure 1.

    Every method gets its own colour, line style and marker, and mlsom a reserved style drawn
    above the others (:func:`method_styles` gives the rules). The legend lies outside the axes,
    right of them, in as many columns as its entries need, so it never covers a curve; a new
    figure is widened (and for many methods heightened) to hold it.

    Parameters
    ----------
    curves : mapping of str to sequence of float
        Method name -> its value in every evaluation window (for example the macro F of the 50
        windows of a stream). NaN leaves a gap.
    x : sequence of float, optional
        Positions of the values on the x axis, shared by every curve (which must then all have its
        length). By default the windows are numbered 1, 2, ...
    title : str, optional
        Title of the axes (for example the stream's name).
    xlabel, ylabel : str
        Axis labels.
    ylim : (float, float), optional
        Limits of the y axis, for example ``(0, 1)``; by default matplotlib's.
    styles : mapping of str to dict, optional
        Method name -> keyword arguments of :meth:`matplotlib.axes.Axes.plot` (``color``,
        ``linestyle``, ``marker``, ...) that replace the defaults of :func:`method_styles` for
        that method (``method_styles`` of the union of the methods of several panels keeps each
        method's style the same in all of them).
    highlight : str or None, default="auto"
        The method drawn in the reserved style: by default mlsom (see :func:`method_styles`);
        ``None`` for none.
    legend : bool, default=True
        Whether to draw a legend (outside the axes, at their right).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure. The legend goes right of these axes too: leave
        room for it there (a figure with ``layout="constrained"`` does).

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes; the axes hold one line per method, labelled with its name,
        in the order of ``curves``.
    """
    data, x, styles = _checked_curves(curves, x, styles)
    ylim = _check_limits("ylim", ylim)
    for label, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        _check_text(label, text)
    if not isinstance(legend, (bool, np.bool_)):
        raise TypeError(f"legend must be True or False, got {describe(legend)}")
    defaults = method_styles(data, highlight=highlight)
    ncols, rows, legend_width = _legend_shape(list(data))
    figsize = (6.0, 3.6)
    if legend:
        figsize = (5.6 + legend_width, max(3.6, 0.18 * rows + 1.0))
    fig, ax = _figure_and_axes(ax, figsize)
    _draw_curves(ax, data, x, defaults, styles)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title is not None:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if legend:
        _draw_legend(ax, ncols)
    return fig


def _checked_curves(curves, x, styles):
    """The curves as {name: float array}, the shared x (or None) and the styles by name, checked
    (shapes, spans, text that matplotlib can draw, the memory of the lines)."""
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a mapping method -> values, got {type(curves).__name__}")
    if not curves:
        raise ValueError("curves must hold at least one method, got an empty mapping")
    if len(curves) > MAX_PLOT_METHODS:
        raise ValueError(
            f"curves must hold at most {MAX_PLOT_METHODS} methods (one line and legend entry "
            f"each), got {len(curves)}"
        )
    check_distinct_text("curves", curves)  # two such keys would share one line
    data = {str(m): _as_curve(f"curves[{m!r}]", v) for m, v in curves.items()}
    n_points = sum(y.size for y in data.values())
    check_allocation(
        "curves",
        f"{len(data)} methods, {n_points} values",
        nbytes_of(len(data), itemsize=_LINE_BYTES) + nbytes_of(n_points, itemsize=_POINT_BYTES),
        "the lines of the plot",
    )
    if x is not None:
        x = _as_curve("x", x)
        for m, y in data.items():
            if y.size != x.size:
                raise ValueError(
                    f"curves[{m!r}] has {y.size} values but x has {x.size}; they must match"
                )
    styles = _checked_styles(styles, data)
    for m in data:
        _check_text("method name", m)
    _check_span("curves", list(data.values()))
    if x is not None:
        _check_span("x", [x])
    return data, x, styles


def _checked_styles(styles, data):
    """``styles`` of :func:`plot_curves` as {name: mapping}, each naming a method of ``data``."""
    styles = {} if styles is None else styles
    if not isinstance(styles, Mapping):
        raise TypeError(f"styles must be a mapping method -> dict, got {type(styles).__name__}")
    unknown = sorted(set(map(str, styles)) - set(data))
    if unknown:
        raise ValueError(f"styles names methods that are not in curves: {unknown}")
    styles = {str(m): s for m, s in styles.items()}
    for m, st in styles.items():
        if not isinstance(st, Mapping):
            raise TypeError(f"styles[{m!r}] must be a dict of line properties, got {describe(st)}")
    return styles


def _draw_curves(ax, data, x, defaults, styles):
    """One line per method, labelled with its name: its default style, then its own ``styles``."""
    for i, (method, y) in enumerate(data.items()):
        xs = np.arange(1, y.size + 1) if x is None else x
        step = max(1, y.size // 10)
        # markers of neighbouring curves at different windows, so that they do not pile up
        kw = {**defaults[method], "markevery": (i % step, step)}
        kw.update(styles.get(method, {}))
        ax.plot(xs, y, label=method, **kw)


def _draw_legend(ax, ncols):
    """The legend outside the axes, at their right, in ``ncols`` columns."""
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
        ncols=ncols,
        handlelength=3.0,
        fontsize="small",
        frameon=False,
    )


def plot_novelty(evaluations, *, convention="appeared", title=None, ylim=(0.0, 1.0), ax=None):
    """F1M over a novelty stream, one curve per method, with each new label's first appearance
    and each method's detection of it marked.

    Parameters
    ----------
    evaluations : mapping of str to NoveltyEvaluation
        Method name -> its evaluation on the stream (:func:`mlsom.evaluation.evaluate_novelty`,
        :func:`mlsom.protocol.evaluate_novelty_stream`), all of the same windows.
    convention : {"appeared", "known"}, default="appeared"
        The F1M of :meth:`~mlsom.evaluation.NoveltyEvaluation.curve`.
    title : str, optional
    ylim : (float, float) or None, default=(0, 1)
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
        The curves against the instances at the end of each window; a dotted vertical line at
        each new label's first row, named; a triangle on a method's curve at the end of the
        window where it first associated a pattern with that label.
    """
    if not isinstance(evaluations, Mapping) or not evaluations:
        raise TypeError(
            "evaluations must be a non-empty mapping of method name to NoveltyEvaluation, got "
            f"{describe(evaluations)}"
        )
    for name, res in evaluations.items():
        if not isinstance(res, NoveltyEvaluation):
            raise TypeError(
                f"evaluations[{name!r}] must be a NoveltyEvaluation, got {describe(res)}"
            )
    if convention not in NOVELTY_CONVENTIONS:
        raise ValueError(
            f"convention must be one of {NOVELTY_CONVENTIONS}, got {describe(convention)}"
        )
    first = next(iter(evaluations.values()))
    for name, res in evaluations.items():
        if not np.array_equal(res.window_edges, first.window_edges):
            raise ValueError(
                f"evaluations[{name!r}] has other windows than the first evaluation: every "
                "evaluation must be of the same stream and windows"
            )
    x = first.window_edges[1:]
    curves = {name: res.curve("f1m", convention) for name, res in evaluations.items()}
    fig = plot_curves(
        curves, x=x, title=title, xlabel="test instances", ylabel="F1M", ylim=ylim, ax=ax
    )
    ax = fig.axes[0] if ax is None else ax
    colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
    marked = set()
    for name, res in evaluations.items():
        for c in res.new_labels:
            row = int(res.label_first_row[c])
            if row >= 0 and c not in marked:
                marked.add(c)
                ax.axvline(row, color="0.4", linestyle=":", linewidth=1.0)
                ax.annotate(
                    f"{res.label_names[c]} appears",
                    (row, 1.0),
                    xycoords=("data", "axes fraction"),
                    rotation=90,
                    va="top",
                    ha="right",
                    fontsize="x-small",
                    color="0.3",
                )
            w = int(res.detection_window[c])
            if w >= 0:
                ax.plot(
                    x[w],
                    curves[name][w],
                    marker="v",
                    markersize=9,
                    color=colours[name],
                    linestyle="none",
                    zorder=5,
                )
    return fig


def plot_label_fractions(scores, *, title=None, ylabel="mean macro F", ylim=None, ax=None):
    """Plot a score against the fraction of labels that arrive, on a log axis, one line per
    method (``mlsom experiment --label-fractions``).

    Parameters
    ----------
    scores : mapping of str to mapping of float to float
        Method name -> {label fraction: score}; every method has the same fractions, in [0, 1].
        Fraction 0 (no label after ``fit``) is drawn one decade left of the smallest positive
        one, and labelled "0".
    title, ylabel, ylim, ax
        As in :func:`plot_curves`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(scores, Mapping) or not scores:
        raise TypeError("scores must be a non-empty mapping of method -> {fraction: score}")
    fractions = None
    for name, by in scores.items():
        if not isinstance(by, Mapping) or not by:
            raise TypeError(f"scores[{name!r}] must be a non-empty mapping of fraction -> score")
        fr = sorted(check_float("label fraction", f, low=0.0, high=1.0) for f in by)
        if fractions is not None and fr != fractions:
            raise ValueError(
                f"every method needs the same fractions: {name!r} has {fr}, others {fractions}"
            )
        fractions = fr
    positive = [f for f in fractions if f > 0]
    zero_at = (min(positive) if positive else 1.0) / 10
    x = [f if f > 0 else zero_at for f in fractions]
    curves = {name: [float(by[f]) for f in sorted(by, key=float)] for name, by in scores.items()}
    fig = plot_curves(
        curves, x=x, title=title, xlabel="fraction of labels", ylabel=ylabel, ylim=ylim, ax=ax
    )
    axes = ax if ax is not None else fig.axes[0]
    axes.set_xscale("log")
    axes.set_xticks(x, [("0" if f == 0 else f"{f:g}") for f in fractions])
    axes.minorticks_off()
    return fig


def _legend_shape(labels):
    """Columns and rows of the legend of these labels, and its width in inches (an estimate from
    the longest label; constrained layout makes room for the real one)."""
    n = len(labels)
    # at least 16 rows a column (they fit beside the default height), then about 4 rows a column
    rows = max(16, math.ceil(math.sqrt(4 * n)))
    ncols = math.ceil(n / rows)
    rows = math.ceil(n / ncols)
    # a column: handle (3 em), pad (0.8 em), text, column spacing (2 em); "small" is 0.833 em
    fontsize = 0.833 * _font_size()
    width = ncols * (5.8 * fontsize / 72 + _text_width(labels, fontsize))
    return ncols, rows, width


def _font_size():
    import matplotlib as mpl

    return float(mpl.rcParams["font.size"])


def _text_width(labels, fontsize):
    """Width in inches of the widest of these labels in the default font at ``fontsize`` points."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    renderer = RendererAgg(1, 1, 72)  # 72 dpi: one pixel a point
    prop = FontProperties(size=fontsize)
    width = max(renderer.get_text_width_height_descent(s, prop, ismath=False)[0] for s in labels)
    return width / 72


# ------------------------------------------------------------------------------ heat map


def _method_order(result, order):
    if order is None:
        return [int(j) for j in result.order]
    if isinstance(order, str) or not hasattr(order, "__iter__"):
        raise TypeError(f"order must be a sequence of method names, got {describe(order)}")
    names = [str(m) for m in order]
    if sorted(names) != sorted(result.methods):
        raise ValueError(
            f"order must list every method once: expected {sorted(result.methods)}, got {names}"
        )
    return [result.methods.index(m) for m in names]


def plot_nemenyi_heatmap(
    result,
    *,
    alpha=None,
    order=None,
    annotate=None,
    fmt=".2f",
    title=None,
    measure=None,
    ax=None,
):
    """Heat map of the pairwise Nemenyi p-values, as in the paper's Figure 2.

    The methods are ordered from the best average rank to the worst, in the same order along
    both axes: from left to right on the x axis and from top to bottom on the y axis, so that
    row ``i`` and column ``i`` are the same method and the diagonal runs from the top left to
    the bottom right. The cell at row ``i`` and column ``j`` compares the ``i``-th and the
    ``j``-th method; the diagonal is white. The colour of a cell is graded by its
    p-value with a step at ``alpha``: pairs that differ significantly (``p < alpha``) are black
    to dark grey as ``p`` goes from 0 to ``alpha``, the others light grey, lighter as ``p`` goes
    from ``alpha`` to 1. A colour bar beside the map shows this very scale (the image's colormap
    and norm), its lower half for ``[0, alpha)`` and its upper half for ``[alpha, 1]``, with
    ``alpha`` marked.

    Parameters
    ----------
    result : FriedmanNemenyiResult
        From :func:`mlsom.stats.friedman_nemenyi`.
    alpha : float, optional
        Significance level of the dark cells; defaults to ``result.alpha``.
    order : sequence of str, optional
        The methods in the order to draw them, best first (for example by mean macro F over all
        data sets and windows, as the paper does); by default by average rank.
    annotate : bool, optional
        Whether to write the p-value in every off-diagonal cell. By default only when there are at
        most 20 methods.
    fmt : str, default=".2f"
        Format of the annotations.
    title : str, optional
        Title; by default one that names ``measure``, the number of streams (the data sets of
        ``result``), ``alpha`` and the Friedman p-value; ``""`` for none.
    measure : str, optional
        Name of the measure the methods were ranked by, for the default title.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure sized to the number of methods.

    Returns
    -------
    matplotlib.figure.Figure
        The figure's first axes hold the map (an image of the p-values, masked on the diagonal),
        its last axes the colour bar.
    """
    _check_result(result)
    alpha = result.alpha if alpha is None else check_alpha(alpha)
    _check_heatmap_options(annotate, fmt, title)
    _check_text("measure", measure)
    idx = _method_order(result, order)
    k = len(idx)
    if annotate is None:
        annotate = k <= 20
    if annotate and k > MAX_ANNOTATED_METHODS:
        raise ValueError(
            f"annotate=True writes {k * (k - 1)} p-values for {k} methods; at most "
            f"{MAX_ANNOTATED_METHODS} methods can be annotated (pass annotate=False)"
        )
    check_allocation(
        "result",
        f"{k} methods",
        nbytes_of(k, k, itemsize=4 * 8)
        + nbytes_of(k * (k - 1) if annotate else 0, itemsize=_TEXT_BYTES),
        "the cells of the heat map",
    )
    names = [result.methods[j] for j in idx]
    p = np.asarray(result.pvalues)[np.ix_(idx, idx)]

    side = max(4.0, 0.32 * k + 2.0)
    fig, ax = _figure_and_axes(ax, (side + 1.6, side))
    image = _draw_cells(ax, names, p, alpha)
    if annotate:
        _annotate_pvalues(ax, p, p < alpha, fmt)
    _draw_pvalue_bar(fig, ax, image, alpha, k)
    if title is None:
        title = (
            _default_title(measure, f"Nemenyi p-values, {_streams(result)}, \u03b1 = {alpha:g}")
            + f" (Friedman p = {result.chi2_pvalue:.3g})"
        )
    if title:
        ax.set_title(title)
    return fig


def _check_heatmap_options(annotate, fmt, title):
    if annotate is not None and not isinstance(annotate, (bool, np.bool_)):
        raise TypeError(f"annotate must be True, False or None, got {describe(annotate)}")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format string, got {describe(fmt)}")
    try:
        format(0.5, fmt)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"fmt={fmt!r} is not a format for a number: {exc}") from None
    _check_text("title", title)


def _draw_cells(ax, names, p, alpha):
    """The image of the p-values ``p`` (methods ``names`` in both directions), white on the
    diagonal, with the methods' names as tick labels and a grid between the cells."""
    k = len(names)
    cells = np.ma.masked_array(np.clip(p, 0.0, 1.0), mask=np.eye(k, dtype=bool))
    cmap, norm = _pvalue_scale(alpha)
    image = ax.imshow(
        cells, cmap=cmap, norm=norm, origin="upper", interpolation="nearest", aspect="equal"
    )
    ticksize = 9 if k <= 20 else max(5.0, 9 - (k - 20) / 6)
    ax.set_xticks(np.arange(k), labels=names, rotation=90, fontsize=ticksize)
    ax.set_yticks(np.arange(k), labels=names, fontsize=ticksize)
    ax.set_xticks(np.arange(k + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(k + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="0.55", linewidth=0.4)
    ax.tick_params(which="minor", length=0)
    return image


def _annotate_pvalues(ax, p, sig, fmt):
    """The p-value in every off-diagonal cell, white on the dark (significant) cells."""
    k = len(p)
    size = max(4.0, min(9.0, 110.0 / k))
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            ax.text(
                j,
                i,
                format(p[i, j], fmt),
                ha="center",
                va="center",
                fontsize=size,
                color="white" if sig[i, j] else "black",
                gid="pvalue",
            )


def _draw_pvalue_bar(fig, ax, image, alpha, k):
    """The colour bar of the map's scale, with alpha marked on it."""
    bar = fig.colorbar(image, ax=ax, shrink=min(1.0, 0.5 + 0.05 * k), aspect=25, pad=0.03)
    ticks = [0.0, alpha / 2, alpha, *(t for t in (0.25, 0.5, 0.75) if t > alpha * 1.5), 1.0]
    bar.set_ticks(ticks, labels=[f"\u03b1 = {t:g}" if t == alpha else f"{t:g}" for t in ticks])
    bar.ax.axhline(alpha, color="black", linewidth=1.2)
    bar.set_label(f"Nemenyi p-value (below \u03b1 = {alpha:g}: significant)", fontsize="small")
    bar.ax.tick_params(labelsize="small")


def _streams(result):
    n = len(result.datasets)
    return f"{n} stream" + ("" if n == 1 else "s")


def _default_title(measure, what):
    """The default title of a heat map or diagram: the measure, then (below) what it shows."""
    return what if measure is None else f"{measure}\n{what}"


def _pvalue_scale(alpha):
    """Colormap and norm of the heat map: black to dark grey on [0, alpha), a step, then light
    grey to lighter grey on [alpha, 1]. The norm maps alpha to the middle of the colormap, where
    the step lies between two of its 256 entries, so that p < alpha and p >= alpha never share a
    colour."""
    from matplotlib.colors import LinearSegmentedColormap, TwoSlopeNorm

    grey = [(0.0, 0.0, 0.0), (0.5, 0.3, 0.65), (1.0, 0.92, 0.92)]
    cmap = LinearSegmentedColormap(
        "nemenyi_pvalue", {"red": grey, "green": grey, "blue": grey}, N=256
    ).with_extremes(bad="white")
    return cmap, TwoSlopeNorm(vcenter=alpha, vmin=0.0, vmax=1.0)


# ------------------------------------------------------------------------------ CD diagram


def plot_critical_difference(
    result, *, reverse=False, show_ranks=False, title=None, measure=None, ax=None
):
    """Critical difference diagram of the Nemenyi test (Demšar, 2006, Figure 1).

    An axis of average ranks from 1 to ``k``; every method is joined to its average rank, the
    better half of the methods labelled on the side of rank 1 and the other half on the other
    side. A bar above the axis shows the critical difference, and thick bars below it join the
    groups of methods that do not differ significantly (:meth:`FriedmanNemenyiResult.groups`).

    Parameters
    ----------
    result : FriedmanNemenyiResult
        From :func:`mlsom.stats.friedman_nemenyi`; its ``alpha`` sets the critical difference.
    reverse : bool, default=False
        Put rank ``k`` at the left and rank 1 at the right, as in Demšar's figures.
    show_ranks : bool, default=False
        Append the average rank to every method name.
    title : str, optional
        Title of the axes; by default one that names ``measure``, the number of streams (the
        data sets of ``result``) and ``result.alpha``; ``""`` for none.
    measure : str, optional
        Name of the measure the methods were ranked by, for the default title.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (its axis lines are switched off); by default a new figure sized to the
        number of methods and the length of their names.

    Returns
    -------
    matplotlib.figure.Figure
        Method labels carry the gid ``"method-label"``, the lines from the axis to them
        ``"method-line"``, group bars ``"cd-group"`` and the critical difference bar ``"cd-bar"``.
    """
    _check_result(result)
    for label, flag in (("reverse", reverse), ("show_ranks", show_ranks)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{label} must be True or False, got {describe(flag)}")
    _check_text("title", title)
    _check_text("measure", measure)
    if title is None:
        title = _default_title(
            measure, f"Nemenyi critical difference, {_streams(result)}, \u03b1 = {result.alpha:g}"
        )
    k = result.n_methods
    check_allocation(
        "result",
        f"{k} methods",
        nbytes_of(k, itemsize=_CD_METHOD_BYTES),
        "the artists of the critical difference diagram",
    )
    ranks = np.asarray(result.mean_ranks)
    labels = [
        f"{m} ({r:.2f})" if show_ranks else m for m, r in zip(result.methods, ranks, strict=True)
    ]
    groups = result.groups()
    lay = _CDLayout(k, _text_width(labels, 9), len(groups), reverse)
    if ax is None:
        from matplotlib.figure import Figure

        title_h = 0.35 * (title.count("\n") + 1) if title else 0.0
        fig = Figure(figsize=(lay.total_w, lay.total_h + title_h))
        ax = fig.add_axes((0.0, 0.0, 1.0, lay.total_h / (lay.total_h + title_h)))
    else:
        fig, ax = _figure_and_axes(ax, None)
    ax.set_xlim(0, lay.total_w)
    ax.set_ylim(lay.total_h, 0)
    ax.set_axis_off()
    line = {"color": "black", "linewidth": 1.0, "solid_capstyle": "butt"}
    _draw_rank_axis(ax, lay.xpos, k, lay.axis_y, line)
    _draw_cd_bar(ax, lay.xpos, k, lay.cd_y, result, line)
    _draw_method_labels(ax, lay, ranks, labels, line)
    _draw_groups(ax, lay, result, groups)
    if title:
        ax.set_title(title)
    return fig


class _CDLayout:
    """Where the parts of a critical difference diagram of ``k`` methods go, in inches (the axes
    span the whole figure, one data unit per inch; y grows downwards): ``xpos(rank)``, the
    heights of the CD bar, the rank axis, the group bars and the label rows, and the size."""

    def __init__(self, k, label_width, n_groups, reverse):
        self.k, self.reverse = k, reverse
        self.textspace = 0.3 + label_width
        self.width = min(max(3.0, 0.3 * k), 12.0)
        self.total_w = self.width + 2 * self.textspace
        self.cd_y, self.axis_y = 0.3, 0.75
        self.group_y0, self.group_step = self.axis_y + 0.18, 0.12
        self.row_y0 = self.group_y0 + n_groups * self.group_step + 0.15
        self.row_step = 0.24
        self.n_left = math.ceil(k / 2)
        self.total_h = self.row_y0 + (self.n_left - 1) * self.row_step + 0.3

    def xpos(self, rank):
        frac = (rank - 1.0) / (self.k - 1.0)
        return self.textspace + self.width * ((1.0 - frac) if self.reverse else frac)


def _draw_method_labels(ax, lay, ranks, labels, line):
    """Every method's name, joined to its average rank: the half nearer the left end of the
    axis on the left, the rest on the right."""
    k = len(ranks)
    by_x = sorted(range(k), key=lambda j: (lay.xpos(ranks[j]), j))
    left, right = by_x[: lay.n_left], by_x[lay.n_left :][::-1]
    for side, members in (("left", left), ("right", right)):
        for row, j in enumerate(members):
            x, y = lay.xpos(ranks[j]), lay.row_y0 + row * lay.row_step
            edge = lay.textspace - 0.1 if side == "left" else lay.total_w - lay.textspace + 0.1
            ax.plot([x, x, edge], [lay.axis_y, y, y], gid="method-line", **line)
            ax.text(
                edge - 0.05 if side == "left" else edge + 0.05,
                y,
                labels[j],
                ha="right" if side == "left" else "left",
                va="center",
                fontsize=9,
                gid="method-label",
            )


def _draw_groups(ax, lay, result, groups):
    """A thick bar below the axis for each group of methods that do not differ significantly."""
    ranks = np.asarray(result.mean_ranks)
    index = {m: j for j, m in enumerate(result.methods)}
    for g, members in enumerate(groups):
        xs = [lay.xpos(ranks[index[m]]) for m in members]
        y = lay.group_y0 + g * lay.group_step
        ax.plot(
            [min(xs) - 0.04, max(xs) + 0.04],
            [y, y],
            color="black",
            linewidth=3.0,
            solid_capstyle="butt",
            gid="cd-group",
        )


def _draw_rank_axis(ax, xpos, k, axis_y, line):
    """The axis of ranks 1 to k, a tick per integer rank and a short one per half rank."""
    ax.plot([xpos(1), xpos(k)], [axis_y, axis_y], **line)
    step = 1 if k <= 15 else (2 if k <= 30 else 5)
    for r in np.arange(1.0, k + 0.25, 0.5):
        tall = float(r).is_integer()
        ax.plot([xpos(r)] * 2, [axis_y, axis_y - (0.08 if tall else 0.04)], **line)
        if tall and (int(r) == 1 or int(r) == k or int(r) % step == 0):
            ax.text(xpos(r), axis_y - 0.11, str(int(r)), ha="center", va="bottom", fontsize=9)


def _draw_cd_bar(ax, xpos, k, cd_y, result, line):
    """The critical difference bar, starting at rank 1, with its value."""
    end = min(1.0 + result.cd, float(k))
    ax.plot([xpos(1), xpos(end)], [cd_y, cd_y], gid="cd-bar", **line)
    for r in (1.0, end):
        ax.plot([xpos(r)] * 2, [cd_y - 0.04, cd_y + 0.04], **line)
    ax.text(
        (xpos(1) + xpos(end)) / 2,
        cd_y - 0.07,
        f"CD = {result.cd:.2f} (\u03b1 = {result.alpha:g})",
        ha="center",
        va="bottom",
        fontsize=9,
    )


# ------------------------------------------------------------------------------ saving


def save_png(fig, path, *, dpi=150, transparent=False):
    """Write a figure to a PNG file, creating its folder if needed.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, as returned by the plotting functions.
    path : str or os.PathLike
        Where to write; ``.png`` is appended when the name has no suffix.
    dpi : float, default=150
        Resolution.
    transparent : bool, default=False
        Transparent background.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        If ``path`` ends in a suffix other than ``.png``.
    """
    if not hasattr(fig, "savefig"):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {describe(path)}")
    dpi = check_float("dpi", dpi, low=0.0, low_open=True)
    if not isinstance(transparent, (bool, np.bool_)):
        raise TypeError(f"transparent must be True or False, got {describe(transparent)}")
    path = pathlib.Path(path)
    if path.suffix == "":
        path = path.with_name(path.name + ".png")
    elif path.suffix.lower() != ".png":
        raise ValueError(f"path must name a .png file, got {str(path)!r}")
    _check_raster(fig, dpi)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=dpi, transparent=transparent, bbox_inches="tight")
    return path


def _check_raster(fig, dpi):
    """Refuse a resolution whose RGBA raster (drawn twice: full, then tight) cannot fit."""
    size = getattr(fig, "get_size_inches", None)
    if size is None:
        return
    width, height = (float(v) for v in size())
    pixels = [math.ceil(v * dpi) if math.isfinite(v * dpi) else math.inf for v in (width, height)]
    check_allocation(
        "dpi",
        dpi,
        nbytes_of(*pixels, itemsize=2 * 4),
        f"a {pixels[0]} x {pixels[1]} pixel image of the {width:g} x {height:g} inch figure",
    )
