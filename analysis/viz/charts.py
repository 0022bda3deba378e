"""Every chart of the notebooks, built from the tables of `analysis.analyses` in the suite's theme.

A chart builder takes the table it draws (and the orders of its axes, `analyses.dimensions.Orders`) and
returns an altair chart; `viz.export.save_figure` writes it with that table, for the screen and for
print. Every chart uses the orders and labels of `analyses.dimensions` (read from the database): models
by display name in the study's order, question types in the study's order (CaLMQA: culturally specific
first), languages grouped by resource level with a line (or, for charts of panels, a titled group)
between the groups. Every colour
scale says which end is good (`theme.SCHEMES`), and every percentage scale runs from 0 to 100. Model x
language heatmaps, drawn the same way in notebooks 03, 04, 06, 09 and 10, all come from
`model_language_heatmap`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import polars as pl

from ..analyses import answer_verdicts, human_evaluation, nativqa, paper_items, scores, surface
from ..analyses.dimensions import Orders
from ..core.scalars import number
from ..io.nativqa import METRIC_BY_NAME, RESOURCE_LEVELS
from .heatmap import CELL, heatmap
from .theme import (
    BOX_LABEL,
    BOX_LABEL_PRINT_SCALE,
    CELL_LABEL,
    CHARACTER_WIDTH,
    CLAIM_STATUS_COLOURS,
    COEFFICIENT_DOMAIN,
    CONFIG,
    PERCENT_DOMAIN,
    PRINT_PADDING,
    PRINT_TEXT_SIZE,
    PRINT_WIDTHS,
    SCHEMES,
    altair,
    ordinal_scale,
    print_layout,
)

if TYPE_CHECKING:
    import altair as alt
    from altair import Chart, VConcatChart  # for functions in which `alt` is the local module that `altair()` returns

# The room a chart has in a report read in a window 1024 px wide, and what a chart of panels keeps of it
# for a legend beside them and between two panels, in pixels: panels wrap into as many columns as fit.
SCREEN_ROOM = 900
LEGEND_ROOM = 150
PANEL_GAP = 24
VERDICT_PANEL_WIDTH, VERDICT_PANEL_HEIGHT = 140, 70


# ---------------------------------------------------------------- model x language heatmaps


def model_language_heatmap(
    cells: pl.DataFrame,
    value: str,
    orders: Orders,
    *,
    title: str,
    value_title: str,
    better: str | None,
    subtitle: str | list[str] | None = None,
    column: str | None = "question_type",
    column_order: list[str] | None = None,
    status: str | None = "status",
    tooltip: list[str] | None = None,
    x: str = "language_label",
) -> alt.Chart:
    """Models (rows, in the study's order) by language (columns, by resource level with a line between
    the groups: `x` is the column of the language's label or of its name), one panel per value of
    `column` (by default the question types, in the study's order; no panels when the study has none),
    a percentage from 0 to 100 printed without decimals. Only the models of `orders.drawn` are drawn, the
    subtitle says how many more the figure's CSV has (it is written from `cells`, every model's rows)."""
    by_label = x == "language_label"
    if column == "question_type" and not orders.question_types:
        column = None
    models = orders.models
    if orders.drawn is not None:
        left_out = cells.filter(~pl.col("model").is_in(orders.drawn))["model"].n_unique()
        if left_out:
            cells = cells.filter(pl.col("model").is_in(orders.drawn))
            models = orders.drawn
            lines = [subtitle] if isinstance(subtitle, str) else list(subtitle or [])
            subtitle = [
                *lines,
                f"The {len(orders.drawn)} models drawn are those with the most answers, the study's own before "
                f"imported ones; the figure's CSV has the rows of {left_out:,} more models.",
            ]
    return heatmap(
        cells,
        x=x,
        y="model",
        value=value,
        column=column,
        status=status,
        title=title,
        subtitle=subtitle,
        value_title=value_title,
        value_format=".0f",
        better=better,
        domain=PERCENT_DOMAIN,
        x_order=orders.labels if by_label else orders.languages,
        y_order=models,
        column_order=column_order or (list(orders.question_types) if column == "question_type" else None),
        x_dividers=orders.dividers(by_label),
        x_title=_level_axis_title(orders, cells[x].n_unique()),
        tooltip=tooltip,
    )


def _level_axis_title(orders: Orders, n_columns: int, cell: int = CELL) -> str | None:
    """The title of a language axis with a line between the resource levels, when the axis is wide enough
    to carry it (at most half as wide again as the axis: a few languages' axis would have it run into the
    next panel)."""
    title = orders.level_axis_title()
    width = len(title or "") * CHARACTER_WIDTH * CONFIG["axis"]["titleFontSize"]
    return title if title and width <= 1.5 * n_columns * cell else None


def surface_heatmap(cells: pl.DataFrame, metric: str, orders: Orders, identification: str = "paper") -> alt.Chart:
    """Notebooks 03 and 10: one surface metric by model and language (paper Figures 13, 14 and 9), with
    the language verdicts of `identification` (`language_id_all.IDENTIFICATIONS`; "all" is beyond the paper)."""
    title = f"{surface.METRICS[metric]} by model and language"
    if identification == "all":
        title += ", every language (beyond the paper; ‡ identified by the new engine)"
    return model_language_heatmap(
        cells,
        metric,
        orders,
        title=title,
        value_title=surface.METRICS[metric],
        better=surface.BETTER[metric],
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


# ---------------------------------------------------------------- 01 dataset overview


def category_heatmap(categories: pl.DataFrame, orders: Orders, title: str) -> alt.Chart:
    """Questions by category and language (languages by resource level; the paper's Figure 5 for its
    culturally specific questions)."""
    return heatmap(
        categories,
        x="language",
        y="category",
        value="n_questions",
        title=title,
        value_title="questions",
        x_order=orders.languages,
        x_dividers=orders.dividers(by_label=False),
        x_title=_level_axis_title(orders, categories["language"].n_unique()),
        tooltip=["category", "language", "resource_level", "n_questions", "pct_of_language"],
    )


def category_share_heatmap(categories: pl.DataFrame, orders: Orders, title: str) -> alt.Chart:
    """`category_heatmap` as shares: each category's % of a language's questions, so that languages with
    many and few questions compare."""
    return heatmap(
        categories,
        x="language",
        y="category",
        value="pct_of_language",
        title=title,
        value_title="% of the language's questions",
        value_format=".0f",
        domain=PERCENT_DOMAIN,
        x_order=orders.languages,
        x_dividers=orders.dividers(by_label=False),
        x_title=_level_axis_title(orders, categories["language"].n_unique()),
        tooltip=["category", "language", "resource_level", "n_questions", "pct_of_language"],
    )


# Figure 1's frame and lettering, in pixels (the labels' font size and line height are the style
# `theme.BOX_LABEL`): labels are wrapped to fit their box. In print the boxes shrink as much as the
# labels' font does (`theme.BOX_LABEL_PRINT_SCALE`), so the wrapping holds.
TREEMAP_WIDTH, TREEMAP_HEIGHT = 630, 378
_CHAR_WIDTH, _PADDING = 5.6, 4
_LINE_HEIGHT = CONFIG["style"][BOX_LABEL]["lineHeight"]


def _box_label(category: str, n: int, width_px: float, height_px: float) -> str:
    """The category's name wrapped to the box's width, then its count; what does not fit is cut."""
    chars = max(int((width_px - 2 * _PADDING) / _CHAR_WIDTH), 1)
    lines = textwrap.wrap(category, chars) or [""]
    room = max(int((height_px - 2 * _PADDING) / _LINE_HEIGHT) - 1, 1)
    if len(lines) > room:
        lines = lines[:room]
        lines[-1] = lines[-1][: max(chars - 1, 1)] + "…"
    return "\n".join([*lines, f"({n})"])


def category_treemap(boxes: pl.DataFrame, title: str) -> alt.LayerChart:
    """Figure 1: the treemap of `overview.category_treemap_table`, one box per category, labelled with its
    name and count."""
    alt = altair()
    x_scale, y_scale = TREEMAP_WIDTH / number(boxes["x1"].max()), TREEMAP_HEIGHT / number(boxes["y1"].max())
    labelled = boxes.with_columns(
        label=pl.Series(
            [
                _box_label(
                    r["category"], r["n_questions"], (r["x1"] - r["x0"]) * x_scale, (r["y1"] - r["y0"]) * y_scale
                )
                for r in boxes.iter_rows(named=True)
            ]
        )
    )
    middle = (number(boxes["n_questions"].min()) + number(boxes["n_questions"].max())) / 2
    base = alt.Chart(labelled).encode(
        x=alt.X("x0:Q", axis=None, scale=alt.Scale(domain=[0, boxes["x1"].max()], nice=False)),
        y=alt.Y("y0:Q", axis=None, scale=alt.Scale(domain=[boxes["y1"].max(), 0], nice=False)),
    )
    rects = base.mark_rect(stroke="white", strokeWidth=2).encode(
        x2="x1:Q",
        y2="y1:Q",
        color=alt.Color("n_questions:Q", title="questions", scale=alt.Scale(scheme=SCHEMES[None])),
        tooltip=[
            "category",
            "n_questions",
            alt.Tooltip("pct_of_questions", title="% of questions"),
            "description",
            alt.Tooltip("example", title="example (English)"),
        ],
    )
    labels = base.mark_text(
        align="left", baseline="top", dx=_PADDING, dy=_PADDING, style=BOX_LABEL, lineBreak="\n"
    ).encode(
        text="label:N",
        color=alt.condition(f"datum.n_questions > {middle}", alt.value("white"), alt.value("black")),
    )
    chart = (rects + labels).properties(title=title, width=TREEMAP_WIDTH, height=TREEMAP_HEIGHT)
    return print_layout(chart, "page", BOX_LABEL_PRINT_SCALE)


# ---------------------------------------------------------------- 02 topic similarity


def similarity_heatmap(
    similarity: pl.DataFrame,
    order: list[str],
    group_by: str,
    item: str | None,
    dividers: Sequence[str] = (),
) -> alt.Chart:
    """The group x group matrix of BC, in `order` on both axes, with a line before each of `dividers` on
    both (the first language of each resource level after the first); each cell's tooltip gives BC and
    Hellinger. `item` says which paper item it is, if any (`topics.similarity_item`)."""
    return heatmap(
        similarity,
        x="group_b",
        y="group_a",
        value="bc",
        title=f"Bhattacharyya coefficient between category distributions, by {group_by}"
        + (f" ({item})" if item else ""),
        value_title="BC",
        x_order=order,
        y_order=order,
        value_format=".2f",
        domain=COEFFICIENT_DOMAIN,
        x_dividers=list(dividers),
        y_dividers=list(dividers),
        tooltip=["group_a", "group_b", "bc", "hellinger"],
        cell=(28, 22),
    )


# ---------------------------------------------------------------- panels by resource level


def _panels_by_resource_level(
    panel: Callable[[], alt.Chart],
    field: str,
    present: list[str],
    orders: Orders,
    panel_width: int,
    row_label_chars: int,
    independent_x: bool = False,
) -> alt.VConcatChart:
    """The chart `panel()` faceted by `field` (languages): one titled group of panels per resource
    level, the groups stacked, each wrapped into as many columns as a report's width holds."""
    alt = altair()
    columns = _panel_columns(panel_width, row_label_chars)
    parts = []
    for name, members in orders.groups(present):
        part = (
            panel()
            .transform_filter(alt.FieldOneOfPredicate(field=field, oneOf=members))
            .facet(facet=alt.Facet(f"{field}:N", title=None, sort=members), columns=min(columns, len(members)))
        )
        if independent_x:
            part = part.resolve_scale(x="independent")
        parts.append(part.properties(title=alt.TitleParams(name, anchor="start", fontSize=12) if name else ""))
    return alt.vconcat(*parts, spacing=14).resolve_scale(color="shared")


def _panel_columns(panel_width: int, row_label_chars: int) -> int:
    """How many panels of `panel_width` fit side by side in `SCREEN_ROOM` beside their row labels and a
    legend."""
    row_labels = row_label_chars * CHARACTER_WIDTH * CONFIG["axis"]["labelFontSize"] + 12
    return max(1, int((SCREEN_ROOM - row_labels - LEGEND_ROOM) // (panel_width + PANEL_GAP)))


def _widest_row(present: list[str], orders: Orders, panel_width: int, row_label_chars: int) -> int:
    """The most panels any row of `_panels_by_resource_level` holds."""
    columns = _panel_columns(panel_width, row_label_chars)
    return max((min(columns, len(members)) for _, members in orders.groups(present)), default=1)


def _print_scale_for_panels(n_panels: int, panel_width: float, row_label_chars: int, size: str = "page") -> float:
    """How much narrower than on screen panels of `panel_width` are drawn so that `n_panels` of them
    and their row labels fit the print `size`."""
    row_labels = row_label_chars * CHARACTER_WIDTH * PRINT_TEXT_SIZE + 10
    gaps = 12 * n_panels + 12
    room = PRINT_WIDTHS[size] - 2 * PRINT_PADDING - row_labels - gaps
    return room / (n_panels * panel_width)


# ---------------------------------------------------------------- 05 human evaluation

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


# ---------------------------------------------------------------- 07 NativQA


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


# ---------------------------------------------------------------- 08 paper reproduction


def claims_status_chart(long: pl.DataFrame) -> alt.Chart:
    """One bar per paper, split by status: how much of each paper the suite reproduces."""
    alt = altair()
    statuses = long.sort("position")["status"].unique(maintain_order=True).to_list()
    chart = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("claims:Q", title="printed numbers", stack="zero"),
            y=alt.Y("paper_name:N", title=None),
            color=alt.Color(
                "status:N",
                sort=statuses,
                title="status",
                scale=alt.Scale(domain=statuses, range=[CLAIM_STATUS_COLOURS.get(s, "#777777") for s in statuses]),
            ),
            order=alt.Order("position:Q"),
            tooltip=[alt.Tooltip("paper_name", title="paper"), "status", "claims"],
        )
        .properties(title="The papers' printed numbers by status of their reproduction", width=520, height=90)
    )
    return print_layout(chart, "page", 0.72)


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


# ---------------------------------------------------------------- 10 language identification


def engine_accuracy_heatmap(cells: pl.DataFrame, languages: list[str], engines: list[str]) -> alt.Chart:
    """Notebook 10: the % of held-out release texts each engine identified, by language: engines as rows,
    languages as columns, as the model x language heatmaps (a page wide and a few rows tall in print)."""
    return heatmap(
        cells,
        x="language_label",
        y="engine",
        value="pct",
        title="% of held-out release texts identified, by engine",
        value_title="% identified",
        better="higher",
        domain=PERCENT_DOMAIN,
        value_format=".0f",
        x_order=languages,
        y_order=engines,
        tooltip=["language", "engine", "n_texts", "pct"],
    )
