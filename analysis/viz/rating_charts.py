"""The charts of the human evaluation (notebook 05): the distribution of the ratings (or of any
criterion's levels) by model, question type or language."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import polars as pl

from ..analyses.dimensions import Orders
from .charts import VERDICT_PANEL_WIDTH, _panels_by_resource_level, _print_scale_for_panels, _widest_row
from .theme import altair, ordinal_scale, print_layout

if TYPE_CHECKING:
    import altair as alt
    from altair import Chart, VConcatChart  # for functions in which `alt` is the local module that `altair()` returns

RATING_PANEL_WIDTH, RATING_PANEL_HEIGHT = 200, 90


def rating_distribution_chart(
    distribution: pl.DataFrame,
    column: str | None,
    orders: Orders,
    *,
    title: str,
    level_column: str = "rating",
    level_title: str = "rating (5 is best)",
) -> alt.Chart:
    """Stacked horizontal bars: the share of each level of `level_column` (worst first, in the order
    `ratings.level_distribution` lists them) for each model, one panel per value of `column` (question
    types in the study's order; no panels for None). By language (the paper's Figure 26), the panels are
    split by question type when the study has them: for each question type, its languages grouped by
    resource level."""
    alt = altair()
    levels = distribution[level_column].unique(maintain_order=True).to_list()
    table = distribution.with_columns(
        rating_label=pl.col(level_column).cast(pl.String),
        level_order=pl.col(level_column)
        .cast(pl.String)
        .replace_strict({str(level): i for i, level in enumerate(levels)}, return_dtype=pl.Int32),
    )
    models = [m for m in orders.models if m in set(table["model"])]
    mean = f"mean_{level_column}"
    width = RATING_PANEL_WIDTH if column != "language" else VERDICT_PANEL_WIDTH

    def panel() -> Chart:
        return (
            alt.Chart(table)
            .mark_bar()
            .encode(
                x=alt.X(
                    "share:Q",
                    stack="normalize",
                    title="share of ratings",
                    axis=alt.Axis(format="%", values=[0, 0.5, 1]),
                ),
                y=alt.Y("model:N", sort=models, title=None),
                color=alt.Color(
                    "rating_label:O",
                    title=level_title,
                    scale=ordinal_scale([str(level) for level in levels], best_first=False),
                ),
                order=alt.Order("level_order:Q"),
                tooltip=[
                    alt.Tooltip(column),
                    alt.Tooltip("model"),
                    alt.Tooltip(level_column),
                    alt.Tooltip("n", title="ratings"),
                    alt.Tooltip("share", format=".0%"),
                    *([alt.Tooltip(mean, title=f"mean {level_column}", format=".2f")] if mean in table.columns else []),
                ],
            )
            .properties(width=width, height=RATING_PANEL_HEIGHT)
        )

    longest_model = max((len(m) for m in models), default=1)
    if column is None:
        chart = panel().properties(title=title)
        return print_layout(chart, "column", _print_scale_for_panels(1, RATING_PANEL_WIDTH, longest_model, "column"))
    present = table[column].unique().to_list()
    if column == "language":
        types = (
            [t for t in orders.question_types if t in set(table["question_type"])]
            if "question_type" in table.columns
            else []
        )

        def type_panel(question_type: str) -> Chart:
            return panel().transform_filter(alt.datum.question_type == question_type)

        by_type: VConcatChart
        if not types:
            by_type = _panels_by_resource_level(panel, column, present, orders, width, longest_model)
        else:
            blocks = [
                _panels_by_resource_level(
                    partial(type_panel, question_type),
                    column,
                    present,
                    orders,
                    width,
                    longest_model,
                ).properties(
                    title=alt.TitleParams(
                        f"{orders.question_type_labels.get(question_type, question_type)} questions", fontSize=13
                    )
                )
                for question_type in types
            ]
            by_type = alt.vconcat(*blocks, spacing=20).resolve_scale(color="shared")
        per_row = _widest_row(present, orders, width, longest_model)
        return print_layout(
            by_type.properties(title=title), "page", _print_scale_for_panels(per_row, width, longest_model)
        )
    # Stacked, on screen as in print (`theme.CONFIG`'s facet.columns).
    known = orders.positions(column) or []
    panels = [value for value in known if value in present] + sorted(v for v in present if v not in known)
    faceted = panel().facet(facet=alt.Facet(f"{column}:N", title=None, sort=panels)).properties(title=title)
    return print_layout(faceted, "column", _print_scale_for_panels(1, width, longest_model, "column"))


def criterion_distribution_chart(
    distribution: pl.DataFrame, criterion, column: str | None, orders: Orders
) -> alt.Chart:
    """Notebook 05, any study: the share of each level of a criterion (`analyses.ratings.Criterion`) by
    model, one panel per value of `column` (question types, languages by resource level, or none)."""
    by = {None: "model", "question_type": "model and question type", "language": "language and model"}[column]
    return rating_distribution_chart(
        distribution,
        column,
        orders,
        title=f"Ratings of {criterion.name} by {by}",
        level_column="level",
        level_title=f"{criterion.name} ({criterion.levels[-1]} is best)",
    )
