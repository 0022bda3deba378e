"""Figures drawn once: the PNG is the SVG rasterised, the same bytes as altair's own PNG of the chart; an
SVG depends on its chart alone, not on what the process drew before; the Vega bundle is kept by version."""

import polars as pl
import pytest

from analysis.core import paths, timings
from analysis.reporting import notebook
from analysis.viz import export, heatmap, theme


def gradient_heatmap(values) -> object:
    """A heatmap: its colour legend is a gradient, whose id vega numbers by a counter of the process."""
    table = pl.DataFrame(
        {"language": ["Arabic", "Arabic", "Hindi", "Hindi"], "model": ["m1", "m2"] * 2, "share": values}
    )
    return heatmap.heatmap(table, x="model", y="language", value="share", title="shares"), table


@pytest.mark.slow
def test_the_png_is_the_bytes_altair_draws_and_the_svg_its_drawing(tmp_path):
    chart, table = gradient_heatmap([0.1, 0.5, 0.7, 0.9])
    export.save_figure(chart, table, tmp_path, "figure")
    chart.save(tmp_path / "altair.png", scale_factor=export.PNG_SCALE)
    chart.save(tmp_path / "altair.svg")
    assert (tmp_path / "figure.png").read_bytes() == (tmp_path / "altair.png").read_bytes()
    assert (tmp_path / "figure.svg").read_text() == export._renumber_ids((tmp_path / "altair.svg").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "altair.png",
        "altair.svg",
        "figure.csv",
        "figure.pdf",
        "figure.png",
        "figure.svg",
    ]


@pytest.mark.slow
def test_a_figures_svg_does_not_depend_on_what_was_drawn_before(tmp_path):
    chart, table = gradient_heatmap([0.1, 0.5, 0.7, 0.9])
    export.save_figure(chart, table, tmp_path / "first", "figure")
    for values in ([0.2, 0.4, 0.6, 0.8], [0.3, 0.3, 0.3, 0.9]):  # vega's gradient counter moves on
        export.save_figure(*gradient_heatmap(values), tmp_path / "between", "other")
    export.save_figure(chart, table, tmp_path / "again", "figure")
    first = (tmp_path / "first" / "figure.svg").read_text()
    assert 'id="gradient_0"' in first and "url(#gradient_0)" in first
    assert (tmp_path / "again" / "figure.svg").read_text() == first


@pytest.mark.parametrize(
    "svg, expected",
    [
        (
            '<linearGradient id="gradient_7"/><path fill="url(#gradient_7)"/><radialGradient id="p_gradient_9"/>'
            '<path fill="url(#p_gradient_9)"/><clipPath id="clip12"/><g clip-path="url(#clip12)"/>',
            '<linearGradient id="gradient_0"/><path fill="url(#gradient_0)"/><radialGradient id="p_gradient_1"/>'
            '<path fill="url(#p_gradient_1)"/><clipPath id="clip1"/><g clip-path="url(#clip1)"/>',
        ),
        # text that looks like an id is left alone
        ('<text>gradient_7 clip3</text><g id="gradient_3"/>', '<text>gradient_7 clip3</text><g id="gradient_0"/>'),
    ],
)
def test_render_ids_are_numbered_as_in_a_fresh_process(svg, expected):
    assert export._renumber_ids(svg) == expected


def test_static_exports_are_timed_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv(timings.ENV, str(tmp_path / "steps.jsonl"))
    export.save_figure(*gradient_heatmap([0.1, 0.5, 0.7, 0.9]), tmp_path, "figure")
    steps = timings.read(tmp_path / "steps.jsonl")
    assert [(s["phase"], s["format"], s["figure"]) for s in steps] == [
        ("static export", "csv", "figure"),
        ("static export", "svg", "figure"),
        ("static export", "png", "figure"),
        ("static export", "pdf", "figure"),
    ]
    assert all(s["seconds"] >= 0 and s["cpu_seconds"] >= 0 for s in steps)
    monkeypatch.delenv(timings.ENV)
    export.save_table(pl.DataFrame({"a": [1]}), tmp_path, "untimed")
    assert len(timings.read(tmp_path / "steps.jsonl")) == 4


@pytest.mark.slow
def test_the_vega_bundle_is_kept_by_version(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD", tmp_path)
    from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert

    theme.altair()
    fresh = import_vl_convert().javascript_bundle(vl_version=vl_version_for_vl_convert())
    assert notebook.vega_bundle() == fresh
    kept = list((tmp_path / "cache").glob("vega-bundle-*.js"))
    assert len(kept) == 1 and vl_version_for_vl_convert() in kept[0].name
    kept[0].write_text("kept", encoding="utf-8")
    assert notebook.vega_bundle() == "kept"  # read back, not bundled again
