"""The charts of the surface metrics (notebooks 03 and 10): one metric, or the provider errors, by
model and language, drawn as every model x language heatmap (`charts.model_language_heatmap`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..analyses import paper_items, short_text, surface
from ..analyses.dimensions import Orders
from .charts import model_language_heatmap

if TYPE_CHECKING:
    import altair as alt


def surface_heatmap(cells: pl.DataFrame, metric: str, orders: Orders, identification: str = "paper") -> alt.Chart:
    """Notebooks 03 and 10: one surface metric by model and language (paper Figures 13, 14 and 9), with
    the language verdicts of `identification` (`language_id_all.IDENTIFICATIONS`; "all" is beyond the paper)."""
    spec = surface.METRICS[metric]
    title = f"{spec.title} by model and language"
    if identification == "all":
        title += ", every language (beyond the paper; ‡ identified by the new engine)"
    subtitle = (
        f"{short_text.CAVEAT_MARK.capitalize()}: the language identification's measured accuracy for the "
        f"language at the answers' median length is below {short_text.MIN_ACCURACY:g}% or unknown (tooltip, CSV)"
        if "caveat" in cells.columns and cells["caveat"].any()
        else None
    )
    return model_language_heatmap(
        cells,
        metric,
        orders,
        title=title,
        subtitle=subtitle,
        value_title=spec.title,
        better=spec.better,
        column_order=list(
            paper_items.question_type_order(paper_items.SURFACE_FIGURES.get(metric), orders.question_types)
        ),
    )


def provider_error_heatmap(cells: pl.DataFrame, orders: Orders) -> alt.Chart:
    """Notebook 03: the share of answers that are provider errors, for the models that have any."""
    return model_language_heatmap(
        cells,
        "pct_provider_errors",
        orders,
        status=None,
        better="lower",
        title="% of answers that are provider errors",
        value_title="% provider errors",
        x="language",
    )
