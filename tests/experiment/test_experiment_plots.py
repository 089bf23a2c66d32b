"""The plots of ``mlsom experiment``: every method run appears in every plot it belongs to,
whatever its grid sizes and labels that arrive; curves over the instances seen."""

import csv

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from mlsom import experiment  # noqa: E402
from tests.helpers.experiment_results import (  # noqa: E402
    capture_figures,
    fabricated_result,
    fabricated_run,
)

STREAMS = ["MOA-Spher-5C-2A", "MOA-Spher-3C-2A", "Mult-Non-Spher-HP"]
LABELS = {"fraction": 0.01, "delay": 1000}  # labels that arrive: "-f0.01-l1000"
# the best fixed grid size of mlsom per stream, under the paper's protocol and with labels
BEST = {"MOA-Spher-5C-2A": (3, 2), "MOA-Spher-3C-2A": (2, 3), "Mult-Non-Spher-HP": (3, 3)}


def _design(grid_sizes):
    """Run files of every method on every stream: mlsom at ``grid_sizes`` (two seeds), with and
    without labels that arrive, MINAS-BR, a batch and an incremental method."""
    results = []
    for i, stream in enumerate(STREAMS):
        for setting, best in ((None, BEST[stream][0]), (LABELS, BEST[stream][1])):
            for d in grid_sizes:
                errors = 20 if d == best else (30 if d == "auto" else 60 + 10 * i)
                for seed in (0, 1):
                    run = fabricated_run(stream, "mlsom", grid_size=d, seed=seed, **setting or {})
                    results.append(fabricated_result(run, errors=errors, kind="online"))
        for method, kind, errors in (("MINAS-BR", "online", 40), ("BR-J48", "batch", 10 + i)):
            run = fabricated_run(stream, method)
            results.append(fabricated_result(run, errors=errors, kind=kind))
        for setting in (None, LABELS):
            run = fabricated_run(stream, "BR-HT", **setting or {})
            errors = 5 + 5 * i + (setting is not None)
            results.append(fabricated_result(run, errors=errors, kind="incremental"))
    return results


@pytest.fixture
def figures(monkeypatch, tmp_path):
    """The figures the report would write, by file name (nothing is written)."""
    return capture_figures(monkeypatch)


@pytest.fixture
def macro_only(monkeypatch):
    """Reports of macro F alone: the tests of what every plot shows draw one measure's plots
    (the test of every measure draws them all)."""
    monkeypatch.setattr(experiment, "PLOTTED_MEASURES", ("macro_f1",))
    monkeypatch.setattr(experiment, "RANKED_MEASURES", ("macro_f1",))


def _report(results, tmp_path):
    return experiment._report(results, tmp_path, profile="quick", zero_division=1, plots=True)


def _curves(fig):
    """The labels of a curves panel's lines, and those of its legend (they must agree)."""
    ax = fig.axes[0]
    lines = [ln.get_label() for ln in ax.get_lines()]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == lines
    return set(lines)


def _suffix(measure):
    return "" if measure == "macro_f1" else f"-{measure}"


def _compared(figures, measure="macro_f1"):
    """The methods of the critical difference diagram and of the heat map's two axes."""
    cd = figures[f"cd{_suffix(measure)}.png"].axes[0]
    heat = figures[f"nemenyi{_suffix(measure)}.png"].axes[0]
    names = {t.get_text() for t in cd.texts if t.get_gid() == "method-label"}
    assert {t.get_text() for t in heat.get_xticklabels()} == names
    assert {t.get_text() for t in heat.get_yticklabels()} == names
    return names


def _all_figures():
    """Every file of a report of the streams: per stream a curves plot per plotted measure, per
    ranked measure a CD diagram and a heat map."""
    names = {f"curves-{s}{_suffix(m)}.png" for s in STREAMS for m in experiment.PLOTTED_MEASURES}
    for m in experiment.RANKED_MEASURES:
        names |= {f"cd{_suffix(m)}.png", f"nemenyi{_suffix(m)}.png"}
    return names


def test_every_method_setting_is_drawn_with_fixed_and_auto_grid_sizes_and_labels(figures, tmp_path):
    summary = _report(_design([2, 3, "auto"]), tmp_path)
    assert set(figures) == _all_figures()
    for stream in STREAMS:
        d, d_labels = BEST[stream]
        expected = {
            f"mlsom (d={d}, best)",
            f"mlsom-f0.01-l1000 (d={d_labels}, best)",
            "mlsom-dauto",
            "mlsom-dauto-f0.01-l1000",
            "MINAS-BR",
            "BR-J48",
            "BR-HT (upper bound)",
            "BR-HT-f0.01-l1000 (upper bound)",
        }
        for measure in experiment.PLOTTED_MEASURES:
            extra = {"true cardinality"} if measure == "cardinality" else set()
            curves = _curves(figures[f"curves-{stream}{_suffix(measure)}.png"])
            assert curves == expected | extra, (stream, measure)
        assert summary["best_grid_size"][stream]["grid_size"] == d
    compared = {
        "mlsom (best d)",
        "mlsom-f0.01-l1000 (best d)",
        "mlsom-dauto",
        "mlsom-dauto-f0.01-l1000",
        "MINAS-BR",
        "BR-J48",
        "BR-HT (upper bound)",
        "BR-HT-f0.01-l1000 (upper bound)",
    }
    for measure in experiment.RANKED_MEASURES:
        assert _compared(figures, measure) == compared, measure
        assert set(summary["statistics_by_measure"][measure]["methods"]) == compared
    assert set(summary["statistics"]["methods"]) == compared
    assert summary["upper_bounds"] == ["BR-HT", "BR-HT-f0.01-l1000"]


def test_mlsom_with_auto_only_is_drawn_and_compared(figures, tmp_path, macro_only):
    summary = _report(_design(["auto"]), tmp_path)
    for stream in STREAMS:
        curves = _curves(figures[f"curves-{stream}.png"])
        assert {"mlsom-dauto", "mlsom-dauto-f0.01-l1000"} <= curves
    assert {"mlsom-dauto", "mlsom-dauto-f0.01-l1000"} <= _compared(figures)
    assert summary["best_grid_size"] == {}


def test_mlsom_with_labels_only_is_drawn_and_compared(figures, tmp_path, macro_only):
    results = [
        r
        for r in _design([2, 3])
        if r["run"].get("label_fraction") or r["run"]["method"] != "mlsom"
    ]
    _report(results, tmp_path)
    for stream in STREAMS:
        d = BEST[stream][1]
        assert f"mlsom-f0.01-l1000 (d={d}, best)" in _curves(figures[f"curves-{stream}.png"])
    assert "mlsom-f0.01-l1000 (best d)" in _compared(figures)


def test_a_full_panel_keeps_every_mlsom_setting(figures, tmp_path, macro_only):
    results = _design([2, 3, "auto"])
    for stream in STREAMS:  # 5 more baselines: 13 curves for a panel of at most 8
        for method in ("BR-kNN", "ML-kNN", "CC-J48", "PS-J48", "LP-J48"):
            results.append(fabricated_result(fabricated_run(stream, method), errors=1))
    _report(results, tmp_path)
    for stream in STREAMS:
        curves = _curves(figures[f"curves-{stream}.png"])
        assert len(curves) == 8
        assert sum(c.startswith("mlsom") for c in curves) == 4
        assert {"MINAS-BR", "BR-HT (upper bound)"} <= curves  # MINAS-BR, the best upper bound
    # the statistics compare every method
    assert len(_compared(figures)) == 13


def test_one_style_per_method_in_every_panel_and_mlsom_highlighted(figures, tmp_path, macro_only):
    results = _design([2, 3, "auto"])
    # methods in some panels only keep their style too
    results = [
        r
        for r in results
        if (r["run"]["stream"], r["run"]["method"])
        not in {(STREAMS[0], "BR-J48"), (STREAMS[1], "MINAS-BR")}
    ]
    _report(results, tmp_path)
    styles = {}
    for stream in STREAMS:
        d, d_labels = BEST[stream]
        for ln in figures[f"curves-{stream}.png"].axes[0].get_lines():
            name = ln.get_label().replace(f"(d={d}, best)", "(best)")
            name = name.replace(f"(d={d_labels}, best)", "(best)")
            style = (ln.get_color(), ln.get_linestyle(), ln.get_marker(), ln.get_linewidth())
            styles.setdefault(name, set()).add(style)
    assert all(len(s) == 1 for s in styles.values()), styles
    ((color, _, marker, _),) = styles["mlsom (best)"]
    assert (color, marker) == ("black", "*")
    others = [next(iter(s)) for name, s in styles.items() if name != "mlsom (best)"]
    assert all(c != "black" and m != "*" for c, _, m, _ in others)
    assert len(set(others)) == len(others)


def test_curves_are_drawn_over_the_instances_seen(figures, tmp_path, macro_only):
    results = _design([2, "auto"])
    _report(results, tmp_path)
    ends = [40, 80, 120, 160, 200]  # 200 test instances in 5 windows
    for stream in STREAMS:
        ax = figures[f"curves-{stream}.png"].axes[0]
        assert ax.get_xlabel() == "instances of the stream"
        for line in ax.get_lines():
            assert line.get_xdata().tolist() == ends, line.get_label()
    with open(tmp_path / "curves.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 * len(results)
    assert [int(r["instances"]) for r in rows[:5]] == ends


def test_mlsom_frozen_is_a_reference_at_its_own_best_grid_size(figures, tmp_path, macro_only):
    """mlsom-frozen's grid sizes are chosen apart from mlsom's: its best d per stream (here the
    other one than mlsom's), marked a reference; the paper's best d stays mlsom's."""
    results = _design([2, 3])
    for stream in STREAMS:
        for d in (2, 3):
            errors = 25 if d != BEST[stream][0] else 70
            for seed in (0, 1):
                run = fabricated_run(stream, "mlsom-frozen", grid_size=d, seed=seed)
                results.append(fabricated_result(run, errors=errors, kind="batch"))
    summary = _report(results, tmp_path)
    for stream in STREAMS:
        d = BEST[stream][0]
        frozen = 5 - d  # the other of 2 and 3
        curves = _curves(figures[f"curves-{stream}.png"])
        assert f"mlsom-frozen (d={frozen}, best) (reference)" in curves
        assert f"mlsom (d={d}, best)" in curves
        assert not any(c.startswith("mlsom-frozen-d") for c in curves)
        assert summary["best_grid_size"][stream]["grid_size"] == d
    assert "mlsom-frozen (best d) (reference)" in _compared(figures)
    assert "mlsom-frozen (best d) (reference)" in summary["statistics"]["methods"]
    assert summary["references"] == ["mlsom-frozen-d2", "mlsom-frozen-d3"]
