"""The one way figures and tables are written: a figure as PNG and SVG for the screen and as a PDF for
print (`print_pdf`), with the CSV of the numbers it shows; a table as CSV. Text cells a spreadsheet
would run as a formula are written prefixed with `'` (`io.records.write_csv_for_people`). Each file
written is recorded for the run's manifest (`core.outputs`).

A figure is drawn once for the screen: Vega-Lite renders its spec to SVG (vl-convert, as altair's `save`
does), and the PNG is that SVG rasterised at twice its size, the same bytes as rendering the spec to PNG
gives, at a third of the cost. Vega numbers the gradients and clip paths of an SVG by a counter that
lives as long as the process; they are renumbered within each file as in a fresh process, so that a
figure's SVG depends on its spec alone, not on what the kernel drew before it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ..core import outputs
from ..core.text import inert
from ..core.timings import timed
from ..io.records import write_csv_for_people
from . import print_pdf
from .theme import FIGURE_META, altair

if TYPE_CHECKING:
    import altair as alt

PNG_SCALE = 2
# An id vega gives a gradient (`p_` for a radial one; one counter for both) or a clip path, where it
# is defined (`id="..."`) or used (`url(#...)`).
_RENDER_ID = re.compile(r'(id="|url\(#)(p_)?(gradient_|clip)(\d+)(?=[")])')
# The first number of each counter in a fresh process.
_FIRST_ID = {"gradient_": 0, "clip": 1}


# A link to a file under the figures folder, written while the notebook runs (when the report's place is
# not known yet): the report (`reporting.html`) turns it into a link relative to itself.
FIGURES_LINK = "data-calmqa-figures"
# Set by the report run (`reporting.run`) to the notebook's name: its figures and tables then show links
# to their files, which a reader of the report finds beside it.
NOTEBOOK_ENV = "CALMQA_NOTEBOOK"
FILE_LABELS = {"csv": "CSV", "svg": "SVG", "pdf": "PDF (print)", "png": "PNG", "tex": "LaTeX"}


def figures_link(path: str, text: str, css: str = "") -> str:
    """A link to `path` (under the figures folder: `NOTEBOOK/NAME.csv`) showing `text`, for a report."""
    classes = f' class="{inert(css, "html")}"' if css else ""
    return f'<a{classes} {FIGURES_LINK}="{inert(path, "html")}">{inert(text, "html")}</a>'


def files_line(name: str, extensions: tuple[str, ...]) -> str:
    """Links to the files of the figure or table `name` of the notebook a report is built from; empty
    outside a report run."""
    notebook = os.environ.get(NOTEBOOK_ENV)
    if not notebook:
        return ""
    links = " · ".join(figures_link(f"{notebook}/{name}.{e}", FILE_LABELS[e]) for e in extensions)
    return f'<p class="calmqa-files">Files of <code>{inert(name, "html")}</code>: {links}</p>'


def save_figure(chart: alt.TopLevelMixin, table: pl.DataFrame, out_dir: Path | str, name: str) -> alt.TopLevelMixin:
    """Write `name`.png, `name`.svg, the print version `name`.pdf and the numbers behind the figure as
    `name`.csv; return the chart to display, which knows its name (`theme.FIGURE_META`): a report shows
    links to its files beside it."""
    existing = getattr(chart, "usermeta", None)
    # Every top-level chart class of altair has `usermeta`; the mixin that types them does not declare it.
    chart.usermeta = {**(existing if isinstance(existing, dict) else {}), FIGURE_META: name}  # type: ignore[attr-defined]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_table(table, out_dir, name)
    with timed("static export", format="svg", figure=name):
        svg = _svg(chart)
        (out_dir / f"{name}.svg").write_text(svg, encoding="utf-8")
    outputs.written(out_dir / f"{name}.svg", "save_figure")
    with timed("static export", format="png", figure=name):
        (out_dir / f"{name}.png").write_bytes(_vl_convert().svg_to_png(svg, scale=PNG_SCALE, ppi=72))
    outputs.written(out_dir / f"{name}.png", "save_figure")
    with timed("static export", format="pdf", figure=name):
        print_pdf.save(chart, out_dir / f"{name}.pdf")
    outputs.written(out_dir / f"{name}.pdf", "save_figure")
    return chart


def _svg(chart: alt.TopLevelMixin) -> str:
    """The chart as SVG, as `chart.save("x.svg")` draws it, with its gradient and clip ids numbered
    within the file."""
    from altair.utils._importers import vl_version_for_vl_convert

    alt = altair()
    # As altair's `save`: every row of the data inline, whatever the notebook's row limit.
    with alt.data_transformers.enable("default"), alt.data_transformers.disable_max_rows():
        spec = chart.to_dict(context={"pre_transform": False})
    return _renumber_ids(_vl_convert().vegalite_to_svg(spec, vl_version=vl_version_for_vl_convert()))


def _vl_convert():
    from altair.utils._importers import import_vl_convert

    return import_vl_convert()


def _renumber_ids(svg: str) -> str:
    numbers: dict[tuple[str, str], int] = {}

    def renumbered(match: re.Match) -> str:
        opening, radial, counter, number = match.groups()
        if (counter, number) not in numbers:
            numbers[counter, number] = _FIRST_ID[counter] + sum(c == counter for c, _ in numbers)
        return f"{opening}{radial or ''}{counter}{numbers[counter, number]}"

    return _RENDER_ID.sub(renumbered, svg)


def save_table(table: pl.DataFrame, out_dir: Path | str, name: str) -> pl.DataFrame:
    """Write a table as `name`.csv; return it to display."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with timed("static export", format="csv", figure=name):
        write_csv_for_people(table, out_dir / f"{name}.csv")
    outputs.written(out_dir / f"{name}.csv", "save_table")
    return table
