"""The charts of the answers' scores (notebooks 04 and 06): a score, or a study's own metric, by model
and language."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..analyses import paper_items, scores
from ..analyses.dimensions import Orders
from .charts import _level_axis_title, model_language_heatmap
from .heatmap import CELL, heatmap
from .theme import CELL_LABEL, CHARACTER_WIDTH, CONFIG

if TYPE_CHECKING:
    import altair as alt


def score_heatmap(
    cells: pl.DataFrame,
    value: str,
    orders: Orders,
    column: str = "question_type",
    column_order: list[str] | None = None,
    subtitle: str | list[str] | None = None,
) -> alt.Chart:
    """Notebooks 04 and 06: one score (x 100) by model and language, per question type (or per group, in
    `column_order`), with the caveats a reader needs in `subtitle`."""
    tooltip = ["model", "language", column, "n_answers", "n_valid", value, "ci_low", "ci_high", "status"]
    if column == "question_type" and column_order is None:
        column_order = list(
            paper_items.question_type_order(paper_items.SCORE_FIGURES.get(value), orders.question_types)
        )
    return model_language_heatmap(
        cells,
        value,
        orders,
        title=f"{scores.SCORES[value]} by model and language",
        value_title=f"{scores.SCORE_SHORT[value]} x 100",
        better="higher",
        column=column,
        column_order=column_order,
        subtitle=subtitle,
        tooltip=tooltip,
    )


def metric_heatmap(cells: pl.DataFrame, metric, orders: Orders) -> alt.Chart:
    """Notebook 04: a study's metric (`analyses.metrics.Metric`), its mean by model and language (a panel
    per question type when the study has them), coloured by which end is better over the metric's range
    (or the data's), with the bootstrap interval in the tooltip."""
    by_type = "question_type" in cells.columns
    domain = (metric.low, metric.high) if metric.low is not None and metric.high is not None else None
    # Wide enough for a value with its decimals (0.63) in the cell's label size.
    cell = max(CELL, round((metric.decimals + 2.5) * CHARACTER_WIDTH * CONFIG["style"][CELL_LABEL]["fontSize"] + 6))
    return heatmap(
        cells,
        x="language",
        y="model",
        value="mean",
        column="question_type" if by_type else None,
        column_order=list(orders.question_types) if by_type else None,
        title=f"{metric.name} by model and language (mean, {metric.better} is better)",
        value_title=metric.name,
        value_format=f".{metric.decimals}f",
        better=metric.better,
        domain=domain,
        x_order=orders.languages,
        y_order=orders.models,
        x_dividers=orders.dividers(by_label=False),
        x_title=_level_axis_title(orders, cells["language"].n_unique(), cell),
        tooltip=["model", "language", *(["question_type"] if by_type else []), "n_values", "mean", "ci_low", "ci_high"],
        cell=(cell, CELL),
    )
