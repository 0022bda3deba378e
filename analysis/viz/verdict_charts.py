"""The charts of the answers' verdicts (notebook 09): answers in English by model and language, and the
annotators' verdicts by language and model."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ..analyses import answer_verdicts, human_evaluation
from ..analyses.dimensions import Orders
from .charts import (
    VERDICT_PANEL_HEIGHT,
    VERDICT_PANEL_WIDTH,
    _panels_by_resource_level,
    _print_scale_for_panels,
    _widest_row,
    model_language_heatmap,
)
from .theme import altair, ordinal_scale, print_layout

if TYPE_CHECKING:
    import altair as alt
    from altair import Chart  # for functions in which `alt` is the local module that `altair()` returns


def english_answer_heatmap(cells: pl.DataFrame, orders: Orders) -> alt.Chart:
    """Notebook 09: the share of answers in English by model and language (English left out; paper Figure 16)."""
    return model_language_heatmap(
        cells,
        "pct_english",
        orders.without("English"),
        x="language_label",
        better="lower",
        value_title="% in English",
        title="Answers in English to questions in another language, by model and language (paper Figure 16)",
        tooltip=[
            "model",
            "language",
            "question_type",
            "n_answers",
            "n_with_language",
            "n_english",
            "pct_english",
            "ci_low",
            "ci_high",
            "status",
        ],
    )


# ---------------------------------------------------------------- 09 answer verdicts


def verdict_chart(counts: pl.DataFrame, verdict: str, question_type: str, orders: Orders) -> alt.Chart:
    """Stacked bars: for each language (grouped by resource level, then all together) and model, how many
    answers got each level (the first level is the good one, drawn cool; the worst warm)."""
    alt = altair()
    levels = list(human_evaluation.LEVELS[verdict])
    figure = answer_verdicts.FIGURES[(verdict, question_type)]
    models = [m for m in orders.models if m in set(counts["model"])]

    def panel() -> Chart:
        return (
            alt.Chart(counts)
            .mark_bar()
            .encode(
                x=alt.X("n_answers:Q", title="answers", stack="zero", axis=alt.Axis(tickCount=3)),
                y=alt.Y("model:N", title=None, sort=models),
                color=alt.Color(
                    "level:O",
                    title=f"{verdict.replace('_', ' ')} ({levels[0]} is best)",
                    scale=ordinal_scale(levels, best_first=True),
                ),
                order=alt.Order("level_position:Q"),
                tooltip=["language", "model", "level", "n_answers"],
            )
            .properties(width=VERDICT_PANEL_WIDTH, height=VERDICT_PANEL_HEIGHT)
        )

    present = counts["language"].unique(maintain_order=True).to_list()
    longest_model = max((len(m) for m in models), default=1)
    chart = _panels_by_resource_level(
        panel, "language", present, orders, VERDICT_PANEL_WIDTH, longest_model, independent_x=True
    ).properties(
        title=f"{answer_verdicts.VERDICT_TITLES[verdict]}: the annotators' verdicts on the answers to "
        f"{orders.question_type_labels.get(question_type, question_type)} questions (paper Figure {figure})"
    )
    per_row = _widest_row(present, orders, VERDICT_PANEL_WIDTH, longest_model)
    return print_layout(chart, "page", _print_scale_for_panels(per_row, VERDICT_PANEL_WIDTH, longest_model))
