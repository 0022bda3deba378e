"""The heatmap of the suite: a value by row and column, the value printed in each cell, cells without a
share drawn in their status's colour, and (in a report) linked to the other charts of the page.

Heatmaps are linked within a report: clicking a cell picks its row and column values (a point
selection named `theme.PICK`), and the report's page script copies them into the variable
`theme.HIGHLIGHT` of every chart on the page, which dims the cells of other rows and columns (see
`reporting/notebook.py`). Each heatmap records how it was built (`heatmap_meta`), so that its print
version can be drawn from the same table (`viz/print_pdf.py`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from .theme import DIMMED_OPACITY, HIGHLIGHT, MISSING_COLOUR, PICK, SEQUENTIAL_SCHEME, STATUS_STYLES, altair

if TYPE_CHECKING:
    import altair as alt

# Columns that go into a heatmap's default tooltip when the table has them.
TOOLTIP_EXTRAS = ("n_answers", "n", "ci_low", "ci_high")
# Where a heatmap records how it was built, for its print version (Vega-Lite ignores `usermeta`).
HEATMAP_META = "calmqa_heatmap"


def heatmap(
    table: pl.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    title: str,
    value_title: str | None = None,
    x_order: list[str] | None = None,
    y_order: list[str] | None = None,
    tooltip: list[str] | None = None,
    value_format: str = "d",
    column: str | None = None,
    status: str | None = None,
    linked: bool = True,
) -> alt.Chart:
    """A heatmap of `value` by `x` and `y` with the value printed in each cell.

    Cells whose value is null are drawn grey and left without a number. `column` facets the heatmap
    side by side (for example agnostic and specific questions). Cells with a `status` (a column whose
    values are keys of `STATUS_STYLES`) are drawn in that status's colour with its short label and a
    legend, outside the value's colour scale. The tooltip shows `tooltip` (by
    default the row, the column, the value and whichever of `TOOLTIP_EXTRAS` the table has), with
    the value and its confidence bounds in `value_format`. With `linked`, a click picks the cell's
    row and column values for the report's highlighting.
    """
    alt = altair()
    value_title = value_title or value
    base = alt.Chart(table)
    x_enc = alt.X(f"{x}:N", sort=x_order, title=None, axis=alt.Axis(labelAngle=-45))
    y_enc = alt.Y(f"{y}:N", sort=y_order, title=None, axis=alt.Axis(labelLimit=320))
    tooltip_columns = tooltip or [y, x, value, *(c for c in TOOLTIP_EXTRAS if c in table.columns)]
    if status is not None and status not in tooltip_columns:
        tooltip_columns = [*tooltip_columns, status]
    if status is not None:
        unknown = set(table[status].drop_nulls()) - set(STATUS_STYLES)
        if unknown:
            raise ValueError(f"heatmap {title!r}: statuses {sorted(unknown)} have no style in theme.STATUS_STYLES")
        has_status = f"isValid(datum[{json.dumps(status)}])"
        base_values = base.transform_filter(f"!({has_status})")
        base_status = base.transform_filter(has_status)
    else:
        base_values = base
    cells = base_values.mark_rect().encode(
        x=x_enc,
        y=y_enc,
        color=alt.condition(
            f"datum[{json.dumps(value)}] === null",
            alt.value(MISSING_COLOUR),
            alt.Color(f"{value}:Q", title=value_title, scale=alt.Scale(scheme=SEQUENTIAL_SCHEME)),
        ),
        tooltip=[_tooltip(c, value, value_title, value_format) for c in tooltip_columns],
    )
    domain_middle = _middle(table[value])
    labels = base_values.mark_text(fontSize=9).encode(
        x=x_enc,
        y=y_enc,
        text=alt.Text(f"{value}:Q", format=value_format),
        color=alt.condition(f"datum[{json.dumps(value)}] < {domain_middle}", alt.value("white"), alt.value("black")),
    )
    layers = [cells, labels]
    if status is not None:
        shown = list(STATUS_STYLES)
        status_colour = alt.Color(f"{status}:N", title="no share shown",
                                  scale=alt.Scale(domain=shown, range=[STATUS_STYLES[s]["colour"] for s in shown]))
        status_cells = base_status.mark_rect().encode(
            x=x_enc, y=y_enc, color=status_colour,
            tooltip=[_tooltip(c, value, value_title, value_format) for c in tooltip_columns])
        short = {s: STATUS_STYLES[s]["label"] for s in shown}
        status_labels = base_status.transform_calculate(
            status_label=f"{json.dumps(short)}[datum[{json.dumps(status)}]]",
        ).mark_text(fontSize=8, color="black").encode(x=x_enc, y=y_enc, text="status_label:N")
        layers += [status_cells, status_labels]
    if linked:
        highlighted = (f"length({HIGHLIGHT}) == 0 || indexof({HIGHLIGHT}, toString(datum[{json.dumps(x)}])) >= 0"
                       f" || indexof({HIGHLIGHT}, toString(datum[{json.dumps(y)}])) >= 0")
        opacity = alt.condition(highlighted, alt.value(1.0), alt.value(DIMMED_OPACITY))
        pick = alt.selection_point(name=PICK, fields=[x, y], on="click", clear="dblclick", toggle=False)
        layers = [layers[0].encode(opacity=opacity).add_params(pick),
                  *(layer.encode(opacity=opacity) for layer in layers[1:])]
    chart = alt.layer(*layers)
    if status is not None:
        chart = chart.resolve_scale(color="independent")
    if column is not None:
        chart = chart.facet(column=alt.Column(f"{column}:N", title=None)).resolve_scale(x="independent")
    if linked:
        chart = chart.add_params(alt.param(name=HIGHLIGHT, value=[]))
    meta = {"x": x, "y": y, "value": value, "title": title, "value_title": value_title,
            "x_order": x_order, "y_order": y_order, "value_format": value_format, "column": column,
            "status": status}
    return chart.properties(title=title, usermeta={HEATMAP_META: meta})


def _tooltip(column: str, value: str, value_title: str, value_format: str) -> alt.Tooltip:
    alt = altair()
    if column == value:
        return alt.Tooltip(column, title=value_title, format=value_format)
    if column in ("ci_low", "ci_high"):
        return alt.Tooltip(column, title=f"95% CI {'low' if column == 'ci_low' else 'high'}", format=value_format)
    return alt.Tooltip(column)


def heatmap_meta(chart: alt.TopLevelMixin) -> dict | None:
    """How `chart` was built by `heatmap()`, or None when it is not a heatmap."""
    usermeta = getattr(chart, "usermeta", None)
    if not isinstance(usermeta, dict):
        return None
    return usermeta.get(HEATMAP_META)


def _middle(values: pl.Series) -> float:
    values = values.drop_nulls()
    if values.is_empty():
        return 0.0
    return float(values.min() + (values.max() - values.min()) / 2)
