"""The one way figures and tables are written: a figure as PNG and SVG for the screen and as a PDF for
print (`print_pdf`), with the CSV of the numbers it shows; a table as CSV. Text cells a spreadsheet
would run as a formula are written prefixed with `'` (`io.records.write_csv_for_people`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ..io.records import write_csv_for_people
from . import print_pdf

if TYPE_CHECKING:
    import altair as alt


def save_figure(chart: alt.TopLevelMixin, table: pl.DataFrame, out_dir: Path | str, name: str) -> alt.TopLevelMixin:
    """Write `name`.png, `name`.svg, the print version `name`.pdf and the numbers behind the figure as
    `name`.csv; return the chart to display."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_table(table, out_dir, name)
    chart.save(out_dir / f"{name}.svg")
    chart.save(out_dir / f"{name}.png", scale_factor=2)
    print_pdf.save(chart, out_dir / f"{name}.pdf")
    return chart


def save_table(table: pl.DataFrame, out_dir: Path | str, name: str) -> pl.DataFrame:
    """Write a table as `name`.csv; return it to display."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv_for_people(table, out_dir / f"{name}.csv")
    return table
