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
from collections.abc import Mapping

import numpy as np

from ._memory import check_allocation, nbytes_of
from ._validation import _describe, check_float
from .stats import MAX_METHODS, FriedmanNemenyiResult, _check_alpha

__all__ = [
    "plot_critical_difference",
    "plot_curves",
    "plot_nemenyi_heatmap",
    "save_png",
]

_LINESTYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "x", "*", "P", "<", ">")

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
        raise TypeError(f"ax must be a matplotlib Axes, got {_describe(ax)}")
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
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {_describe(value)}")
    return value


def _check_limits(name, value):
    """None or a pair of finite real numbers."""
    if value is None:
        return None
    try:
        pair = tuple(value)
    except TypeError:
        raise TypeError(
            f"{name} must be a pair (low, high) of numbers, got {_describe(value)}"
        ) from None
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (low, high), got {_describe(value)}")
    return tuple(check_float(f"{name}[{i}]", v) for i, v in enumerate(pair))


def _as_curve(name, values):
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a sequence of real numbers, got {_describe(values)}"
        ) from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
    return arr


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
    legend=True,
    ax=None,
):
    """Plot one performance curve per method, as in the per-stream panels of the paper's Figure 1.

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
        ``linestyle``, ``marker``, ...) that replace the defaults for that method. By default the
        methods cycle through colours, line styles and markers, which stay apart in grey print.
    legend : bool, default=True
        Whether to draw a legend.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes; the axes hold one line per method, labelled with its name,
        in the order of ``curves``.
    """
    if not isinstance(curves, Mapping):
        raise TypeError(f"curves must be a mapping method -> values, got {type(curves).__name__}")
    if not curves:
        raise ValueError("curves must hold at least one method, got an empty mapping")
    if len(curves) > MAX_PLOT_METHODS:
        raise ValueError(
            f"curves must hold at most {MAX_PLOT_METHODS} methods (one line and legend entry "
            f"each), got {len(curves)}"
        )
    ylim = _check_limits("ylim", ylim)
    for label, text in (("title", title), ("xlabel", xlabel), ("ylabel", ylabel)):
        _check_text(label, text)
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
    styles = {} if styles is None else styles
    if not isinstance(styles, Mapping):
        raise TypeError(f"styles must be a mapping method -> dict, got {type(styles).__name__}")
    unknown = sorted(set(map(str, styles)) - set(data))
    if unknown:
        raise ValueError(f"styles names methods that are not in curves: {unknown}")
    styles = {str(m): s for m, s in styles.items()}

    fig, ax = _figure_and_axes(ax, (6.0, 3.6))
    colors = [c["color"] for c in _color_cycle()]
    for i, (method, y) in enumerate(data.items()):
        xs = np.arange(1, y.size + 1) if x is None else x
        kw = {
            "color": colors[i % len(colors)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)],
            "marker": _MARKERS[i % len(_MARKERS)],
            "markevery": max(1, y.size // 10),
            "markersize": 4,
            "linewidth": 1.3,
        }
        kw.update(styles.get(method, {}))
        ax.plot(xs, y, label=method, **kw)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if title is not None:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if legend:
        ax.legend(fontsize="small", frameon=False)
    return fig


def _color_cycle():
    import matplotlib as mpl

    return list(mpl.rcParams["axes.prop_cycle"])


# ------------------------------------------------------------------------------ heat map


def _method_order(result, order):
    if order is None:
        return [int(j) for j in result.order]
    if isinstance(order, str) or not hasattr(order, "__iter__"):
        raise TypeError(f"order must be a sequence of method names, got {_describe(order)}")
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
    ax=None,
):
    """Heat map of the pairwise Nemenyi p-values, as in the paper's Figure 2.

    The methods are ordered from the best average rank to the worst, from left to right on the x
    axis and from bottom to top on the y axis. Cells of pairs that differ significantly
    (``p < alpha``) are black; the others are grey, lighter as ``p`` grows. The diagonal is white.
    The cell at row ``i`` and column ``j`` compares the ``i``-th and the ``j``-th method.

    Parameters
    ----------
    result : FriedmanNemenyiResult
        From :func:`mlsom.stats.friedman_nemenyi`.
    alpha : float, optional
        Significance level of the black cells; defaults to ``result.alpha``.
    order : sequence of str, optional
        The methods in the order to draw them, best first (for example by mean macro F over all
        data sets and windows, as the paper does); by default by average rank.
    annotate : bool, optional
        Whether to write the p-value in every off-diagonal cell. By default only when there are at
        most 20 methods.
    fmt : str, default=".2f"
        Format of the annotations.
    title : str, optional
        Title; by default one that gives the Friedman p-value.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new figure sized to the number of methods.

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check_result(result)
    alpha = result.alpha if alpha is None else _check_alpha(alpha)
    if annotate is not None and not isinstance(annotate, (bool, np.bool_)):
        raise TypeError(f"annotate must be True, False or None, got {_describe(annotate)}")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format string, got {_describe(fmt)}")
    try:
        format(0.5, fmt)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"fmt={fmt!r} is not a format for a number: {exc}") from None
    _check_text("title", title)
    idx = _method_order(result, order)
    k = len(idx)
    if annotate and k > MAX_ANNOTATED_METHODS:
        raise ValueError(
            f"annotate=True writes {k * (k - 1)} p-values for {k} methods; at most "
            f"{MAX_ANNOTATED_METHODS} methods can be annotated (pass annotate=False)"
        )
    n_texts = k * (k - 1) if (annotate or (annotate is None and k <= 20)) else 0
    check_allocation(
        "result",
        f"{k} methods",
        nbytes_of(k, k, itemsize=4 * 8) + nbytes_of(n_texts, itemsize=_TEXT_BYTES),
        "the cells of the heat map",
    )
    names = [result.methods[j] for j in idx]
    p = np.asarray(result.pvalues)[np.ix_(idx, idx)]
    sig = p < alpha
    diagonal = np.eye(k, dtype=bool)
    grey = 0.65 + 0.27 * np.clip((p - alpha) / (1.0 - alpha), 0.0, 1.0)
    grey = np.where(sig, 0.0, grey)
    grey[diagonal] = 1.0
    rgb = np.repeat(grey[:, :, None], 3, axis=2)

    side = max(4.0, 0.32 * k + 2.0)
    fig, ax = _figure_and_axes(ax, (side + 1.2, side))
    ax.imshow(rgb, origin="lower", interpolation="nearest", aspect="equal")
    ticksize = 9 if k <= 20 else max(5.0, 9 - (k - 20) / 6)
    ax.set_xticks(np.arange(k), labels=names, rotation=90, fontsize=ticksize)
    ax.set_yticks(np.arange(k), labels=names, fontsize=ticksize)
    ax.set_xticks(np.arange(k + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(k + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="0.55", linewidth=0.4)
    ax.tick_params(which="minor", length=0)

    if annotate is None:
        annotate = k <= 20
    if annotate:
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

    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(facecolor="black", edgecolor="0.55", label=f"p < {alpha:g}"),
            Patch(facecolor="0.85", edgecolor="0.55", label=f"p \u2265 {alpha:g}"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
        fontsize="small",
    )
    if title is None:
        title = f"Nemenyi p-values (Friedman p = {result.chi2_pvalue:.3g})"
    if title:
        ax.set_title(title)
    return fig


# ------------------------------------------------------------------------------ CD diagram


def plot_critical_difference(result, *, reverse=False, show_ranks=False, title=None, ax=None):
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
        Title of the axes.
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
            raise TypeError(f"{label} must be True or False, got {_describe(flag)}")
    _check_text("title", title)
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

    # Lengths in inches: the axes span the whole figure, one data unit per inch.
    textspace = 0.35 + 0.075 * max(len(s) for s in labels)
    width = min(max(3.0, 0.3 * k), 12.0)
    total_w = width + 2 * textspace

    def xpos(r):
        frac = (r - 1.0) / (k - 1.0)
        return textspace + width * ((1.0 - frac) if reverse else frac)

    cd_y, axis_y = 0.3, 0.75
    group_y0, group_step = axis_y + 0.18, 0.12
    row_y0 = group_y0 + len(groups) * group_step + 0.15
    row_step = 0.24
    n_left = math.ceil(k / 2)
    total_h = row_y0 + (n_left - 1) * row_step + 0.3

    if ax is None:
        from matplotlib.figure import Figure

        title_h = 0.0 if title is None else 0.35
        fig = Figure(figsize=(total_w, total_h + title_h))
        ax = fig.add_axes((0.0, 0.0, 1.0, total_h / (total_h + title_h)))
    else:
        fig, ax = _figure_and_axes(ax, None)
    ax.set_xlim(0, total_w)
    ax.set_ylim(total_h, 0)
    ax.set_axis_off()
    line = {"color": "black", "linewidth": 1.0, "solid_capstyle": "butt"}

    # Axis of ranks with a tick per integer rank and a short one per half rank.
    ax.plot([xpos(1), xpos(k)], [axis_y, axis_y], **line)
    step = 1 if k <= 15 else (2 if k <= 30 else 5)
    for r in np.arange(1.0, k + 0.25, 0.5):
        tall = float(r).is_integer()
        ax.plot([xpos(r)] * 2, [axis_y, axis_y - (0.08 if tall else 0.04)], **line)
        if tall and (int(r) == 1 or int(r) == k or int(r) % step == 0):
            ax.text(xpos(r), axis_y - 0.11, str(int(r)), ha="center", va="bottom", fontsize=9)

    # Critical difference bar, starting at rank 1.
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

    # Methods: the half nearer the left end on the left, the rest on the right.
    by_x = sorted(range(k), key=lambda j: (xpos(ranks[j]), j))
    left, right = by_x[:n_left], by_x[n_left:][::-1]
    for side, members in (("left", left), ("right", right)):
        for row, j in enumerate(members):
            x, y = xpos(ranks[j]), row_y0 + row * row_step
            edge = textspace - 0.1 if side == "left" else total_w - textspace + 0.1
            ax.plot([x, x, edge], [axis_y, y, y], gid="method-line", **line)
            ax.text(
                edge - 0.05 if side == "left" else edge + 0.05,
                y,
                labels[j],
                ha="right" if side == "left" else "left",
                va="center",
                fontsize=9,
                gid="method-label",
            )

    # Groups of methods that do not differ significantly.
    index = {m: j for j, m in enumerate(result.methods)}
    for g, members in enumerate(groups):
        xs = [xpos(ranks[index[m]]) for m in members]
        y = group_y0 + g * group_step
        ax.plot(
            [min(xs) - 0.04, max(xs) + 0.04],
            [y, y],
            color="black",
            linewidth=3.0,
            solid_capstyle="butt",
            gid="cd-group",
        )
    if title is not None:
        ax.set_title(title)
    return fig


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
        raise TypeError(f"path must be a str or os.PathLike, got {_describe(path)}")
    dpi = check_float("dpi", dpi, low=0.0, low_open=True)
    if not isinstance(transparent, (bool, np.bool_)):
        raise TypeError(f"transparent must be True or False, got {_describe(transparent)}")
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
