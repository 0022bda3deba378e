"""The charts of the answers' scores (notebooks 04 and 06): a score, or a study's own metric, by model
and language."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..analyses import paper_items, scores
from ..analyses.dimensions import Orders
from .charts import _level_axis_title, drawn, model_language_heatmap
from .heatmap import CELL, heatmap
from .theme import CELL_LABEL, CHARACTER_WIDTH, CONFIG, altair, print_layout

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
    (or the data's), with the bootstrap interval in the tooltip; the models and languages `charts.drawn`
    keeps."""
    by_type = "question_type" in cells.columns
    cells, orders, notes = drawn(cells, orders)
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
        subtitle=notes or None,
        value_title=metric.name,
        value_format=metric.value_format(cells["mean"]),
        better=metric.better,
        domain=domain,
        x_order=orders.languages,
        y_order=orders.models,
        x_dividers=orders.dividers(by_label=False),
        x_title=_level_axis_title(orders, cells["language"].n_unique(), cell),
        tooltip=["model", "language", *(["question_type"] if by_type else []), "n_values", "mean", "ci_low", "ci_high"],
        cell=(cell, CELL),
    )


# ---------------------------------------------------------------- rank intervals


def rank_chart(ranks: pl.DataFrame, title: str) -> alt.Chart:
    """Notebook 04: each model's rank over all languages (1 the best; a point) with its 95%
    bootstrap interval (a bar), the models ordered by rank (`stats.significance.rank_intervals`)."""
    alt = altair()
    overall = ranks.filter(pl.col("language").is_null()).sort("rank", "model")
    n_models = overall.height
    x = alt.X(
        "rank:Q",
        title="rank (1: best)",
        scale=alt.Scale(domain=[1, max(n_models, 2)], nice=False),
        axis=alt.Axis(tickMinStep=1, format="d"),
    )
    y = alt.Y("model:N", sort=overall["model"].to_list(), title=None, axis=alt.Axis(labelLimit=320))
    base = alt.Chart(overall)
    tooltip = [
        alt.Tooltip("model"),
        alt.Tooltip("rank"),
        alt.Tooltip("rank_low", title="rank, 95% low"),
        alt.Tooltip("rank_high", title="rank, 95% high"),
        alt.Tooltip("mean", format=".3g"),
    ]
    bars = base.mark_rule(strokeWidth=3, color="#9ecae1").encode(
        x=alt.X("rank_low:Q"), x2="rank_high:Q", y=y, tooltip=tooltip
    )
    points = base.mark_point(filled=True, size=40, color="#08519c").encode(x=x, y=y, tooltip=tooltip)
    chart = alt.layer(bars, points).properties(
        width=320,
        height=alt.Step(18),
        title=alt.TitleParams(
            title, subtitle="Bars: 95% bootstrap interval of the rank, the questions resampled within each language."
        ),
    )
    return print_layout(chart, "column", 0.7)
