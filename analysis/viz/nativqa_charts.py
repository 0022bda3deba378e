"""The charts of the NativQA results (notebook 07): a metric by model and region, and by resource level."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..analyses import nativqa
from ..io.nativqa import METRIC_BY_NAME, RESOURCE_LEVELS
from .heatmap import heatmap
from .theme import altair, print_layout

if TYPE_CHECKING:
    import altair as alt


def nativqa_score_heatmap(
    cells: pl.DataFrame, metric: str, regions: list[str], models: list[str], paper_table: int
) -> alt.Chart:
    """Model x region heatmap of one metric (higher is better), values printed as the paper does,
    regions by resource level with a line between the levels."""
    spec = METRIC_BY_NAME[metric]
    level = dict(cells.select("region", "resource_level").unique().iter_rows())
    firsts = [region for i, region in enumerate(regions) if i and level.get(region) != level.get(regions[i - 1])]
    return heatmap(
        cells,
        x="region",
        y="model",
        value="value",
        title=f"NativQA zero-shot {spec.display_name} by model and region (paper Table {paper_table})",
        value_title=spec.display_name,
        x_order=regions,
        y_order=models,
        better="higher",
        x_dividers=firsts,
        x_title="regions by resource level, high to extremely low (a line between levels)",
        tooltip=["model", "region", "resource_level", "value"],
        value_format=f".{spec.decimals}f",
        # Wider cells than the default band, so that a three-decimal score fits inside its cell.
        cell=(56, 30),
    )


def resource_level_chart(levels: pl.DataFrame, metric: str = "bleu") -> alt.Chart:
    """Grouped bars of a metric's average by resource level, one bar per model (the paper's Figure 5)."""
    alt = altair()
    column = f"average_{metric}"
    spec = METRIC_BY_NAME[metric]
    models = levels.filter(pl.col("model") != "all models")
    present = [level for level in RESOURCE_LEVELS if level in set(models["resource_level"])]
    chart = (
        alt.Chart(models)
        .mark_bar()
        .encode(
            x=alt.X("resource_level:N", sort=present, title="resource level", axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("model:N"),
            y=alt.Y(f"{column}:Q", title=f"average {spec.display_name} (higher is better)"),
            color=alt.Color("model:N", title="model", legend=alt.Legend(columns=2)),
            tooltip=["resource_level", "model", "n_regions", alt.Tooltip(f"{column}:Q", format=".4f")],
        )
        .properties(
            title=f"NativQA zero-shot {spec.display_name} by resource level ({nativqa.resource_level_item(metric)})",
            width=420,
            height=260,
        )
    )
    return print_layout(chart, "column", 0.42)
