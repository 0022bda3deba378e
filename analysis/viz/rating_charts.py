"""The charts of the human evaluation (notebook 05): the distribution of the ratings (or of any
criterion's levels) by model, question type or language and the metrics' agreement with the
annotators."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import polars as pl

from ..analyses.dimensions import Orders
from .charts import VERDICT_PANEL_WIDTH, _panels_by_resource_level, _print_scale_for_panels, _widest_row, drawn
from .heatmap import CELL, TIER_TITLES, TIER_TOOLTIP, heatmap
from .theme import CELL_LABEL, CHARACTER_WIDTH, CONFIG, altair, ordinal_scale, print_layout

if TYPE_CHECKING:
    import altair as alt
    from altair import Chart, VConcatChart  # for functions in which `alt` is the local module that `altair()` returns

RATING_PANEL_WIDTH, RATING_PANEL_HEIGHT = 200, 90
RATING_TIER_MARK_SIZE = 30
RATING_TIER_NOTE = (
    "Triangle: the panel's top tier (no paired Wilcoxon test of the ratings, Holm 5%, separates it from the best)."
)


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
    resource level. The models and languages `charts.drawn` keeps are drawn; where the table has the number
    of answers rated (`n_answers`) and several annotators rated an answer, the subtitle says that the shares
    are of ratings."""
    alt = altair()
    levels = distribution[level_column].unique(maintain_order=True).to_list()
    distribution, orders, notes = drawn(distribution, orders)
    if "n_answers" in distribution.columns:
        groups = distribution.group_by(["model", *([column] if column else [])]).agg(
            pl.col("n").sum(), pl.col("n_answers").first()
        )
        n_ratings, n_answers = groups["n"].sum(), groups["n_answers"].sum()
        if n_ratings > n_answers:
            notes = [
                f"An answer rated by several annotators counts once per annotator: {n_ratings:,} ratings of "
                f"{n_answers:,} answers.",
                *notes,
            ]
    table = distribution.with_columns(
        rating_label=pl.col(level_column).cast(pl.String),
        level_order=pl.col(level_column)
        .cast(pl.String)
        .replace_strict({str(level): i for i, level in enumerate(levels)}, return_dtype=pl.Int32),
    )
    models = [m for m in orders.models if m in set(table["model"])]
    mean = f"mean_{level_column}"
    width = RATING_PANEL_WIDTH if column != "language" else VERDICT_PANEL_WIDTH
    tiered = "tier" in table.columns and table["tier"].is_not_null().any()
    tier_tooltip = [
        alt.Tooltip(c, title=TIER_TITLES[c], **({} if c == "tier" else {"format": ".3g"}))
        for c in TIER_TOOLTIP
        if tiered and c in table.columns
    ]
    if tiered:
        notes = [RATING_TIER_NOTE, *notes]
    heading = alt.TitleParams(title, subtitle=notes) if notes else title

    def panel() -> Chart:
        bars = (
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
                    *([alt.Tooltip(column)] if column is not None else []),
                    alt.Tooltip("model"),
                    alt.Tooltip(level_column),
                    alt.Tooltip("n", title="ratings"),
                    alt.Tooltip("share", format=".0%"),
                    *([alt.Tooltip(mean, title=f"mean {level_column}", format=".2f")] if mean in table.columns else []),
                    *tier_tooltip,
                ],
            )
            .properties(width=width, height=RATING_PANEL_HEIGHT)
        )
        if not tiered:
            return bars
        # The top tier: a triangle just right of the bar's end, pointing at it (one per model and panel).
        marks = (
            alt.Chart(table)
            .transform_filter("datum.tier === 1 && datum.level_order === 0")
            .mark_point(shape="triangle-left", filled=True, size=RATING_TIER_MARK_SIZE, color="black", xOffset=5)
            .encode(x=alt.datum(1), y=alt.Y("model:N", sort=models, title=None), tooltip=tier_tooltip)
        )
        return alt.layer(bars, marks).properties(width=width, height=RATING_PANEL_HEIGHT)

    longest_model = max((len(m) for m in models), default=1)
    if column is None:
        chart = panel().properties(title=heading)
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
            by_type.properties(title=heading), "page", _print_scale_for_panels(per_row, width, longest_model)
        )
    # Stacked, on screen as in print (`theme.CONFIG`'s facet.columns).
    known = orders.positions(column) or []
    # (a question without a type is a panel of its own, drawn after the others as every facet draws it)
    panels = [value for value in known if value in present] + sorted(
        v for v in present if v not in known and v is not None
    )
    faceted = panel().facet(facet=alt.Facet(f"{column}:N", title=None, sort=panels)).properties(title=heading)
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


def metric_human_heatmap(table: pl.DataFrame, criterion: str, orders: Orders) -> alt.Chart:
    """Notebook 05, any study: how far each automatic metric (rows) agrees with the annotators' mean rating
    of `criterion` in each language (columns, by resource level): Kendall's tau-b from -1 to 1, positive
    where the metric agrees (`analyses.agreement.metric_human_agreement`), with its interval and the
    number of answers in the tooltip; cells with too few rated answers drawn as such."""
    cells = table.filter(pl.col("criterion") == criterion)
    present = set(cells["language"])
    labels = [orders.label(language) for language in orders.languages if language in present]
    # Wide enough for a signed value with two decimals (-0.35) in the cell's label size.
    cell = max(CELL, round(5.5 * CHARACTER_WIDTH * CONFIG["style"][CELL_LABEL]["fontSize"] + 6))
    dividers = [label for label in orders.dividers(by_label=True) if label in labels]
    return heatmap(
        cells,
        x="language_label",
        y="metric_title",
        value="tau_b",
        title=f"Agreement of each automatic metric with the annotators' {criterion}, by language",
        subtitle="Kendall's tau-b between the metric and the mean human rating of the same answers (1: same order).",
        value_title="tau-b",
        value_format=".2f",
        better="higher",
        domain=(-1.0, 1.0),
        x_order=labels,
        y_order=list(dict.fromkeys(cells["metric_title"].to_list())),
        status="status",
        x_dividers=dividers,
        tooltip=["metric_title", "language", "criterion", "tau_b", "ci_low", "ci_high", "n_answers", "status"],
        cell=(cell, CELL),
        linked=False,
    )
