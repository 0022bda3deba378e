"""The shared plotting theme, chart builders, and the one way figures are written: PNG, SVG and the CSV behind them."""

from pathlib import Path

import altair as alt
import polars as pl

FONT = "Noto Sans, DejaVu Sans, sans-serif"
# A colour-blind-safe sequential scheme for every heatmap of the suite.
SEQUENTIAL_SCHEME = "viridis"
MISSING_COLOUR = "#eeeeee"


@alt.theme.register("calmqa", enable=True)
def calmqa_theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "font": FONT,
            "view": {"stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": False, "domain": False},
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            "legend": {"labelFontSize": 11, "titleFontSize": 11},
            "title": {"fontSize": 14, "anchor": "start"},
            "range": {"heatmap": {"scheme": SEQUENTIAL_SCHEME}},
        }
    }


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
) -> alt.Chart:
    """A heatmap of `value` by `x` and `y` with the value printed in each cell.

    Cells whose value is null are drawn grey and left without a number. `column` facets the heatmap
    side by side (for example agnostic and specific questions).
    """
    base = alt.Chart(table)
    x_enc = alt.X(f"{x}:N", sort=x_order, title=None, axis=alt.Axis(labelAngle=-45))
    y_enc = alt.Y(f"{y}:N", sort=y_order, title=None, axis=alt.Axis(labelLimit=320))
    cells = base.mark_rect().encode(
        x=x_enc,
        y=y_enc,
        color=alt.condition(
            f"datum['{value}'] === null",
            alt.value(MISSING_COLOUR),
            alt.Color(f"{value}:Q", title=value_title or value, scale=alt.Scale(scheme=SEQUENTIAL_SCHEME)),
        ),
        tooltip=[alt.Tooltip(c) for c in (tooltip or [y, x, value])],
    )
    domain_middle = _middle(table[value])
    labels = base.mark_text(fontSize=9).encode(
        x=x_enc,
        y=y_enc,
        text=alt.Text(f"{value}:Q", format=value_format),
        color=alt.condition(f"datum['{value}'] < {domain_middle}", alt.value("white"), alt.value("black")),
    )
    chart = cells + labels
    if column is not None:
        chart = chart.facet(column=alt.Column(f"{column}:N", title=None)).resolve_scale(x="independent")
    return chart.properties(title=title)


def _middle(values: pl.Series) -> float:
    values = values.drop_nulls()
    if values.is_empty():
        return 0.0
    return float(values.min() + (values.max() - values.min()) / 2)


def save_figure(chart: alt.TopLevelMixin, table: pl.DataFrame, out_dir: Path | str, name: str) -> alt.TopLevelMixin:
    """Write `name`.png, `name`.svg and the numbers behind the figure as `name`.csv; return the chart to display."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_table(table, out_dir, name)
    chart.save(out_dir / f"{name}.svg")
    chart.save(out_dir / f"{name}.png", scale_factor=2)
    return chart


def save_table(table: pl.DataFrame, out_dir: Path | str, name: str) -> pl.DataFrame:
    """Write a table as `name`.csv; return it to display."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.write_csv(out_dir / f"{name}.csv")
    return table
