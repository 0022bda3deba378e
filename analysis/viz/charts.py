"""Every chart of the notebooks, built from the tables of `analysis.analyses` in the suite's theme.

A chart builder takes the table it draws (and the orders of its axes, `analyses.dimensions.Orders`) and
returns an altair chart; `viz.export.save_figure` writes it with that table. Model x language heatmaps,
drawn the same way in notebooks 03, 04, 06, 09 and 10, all come from `model_language_heatmap`.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import polars as pl

from ..analyses import answer_verdicts, human_evaluation, nativqa, scores, surface, topics
from ..analyses.dimensions import Orders
from ..core import vocabulary
from ..io.nativqa import METRIC_BY_NAME, RESOURCE_LEVELS
from .heatmap import heatmap
from .theme import SEQUENTIAL_SCHEME, altair

if TYPE_CHECKING:
    import altair as alt


# ---------------------------------------------------------------- model x language heatmaps

def model_language_heatmap(cells: pl.DataFrame, value: str, orders: Orders, *, title: str, value_title: str = "%",
                           column: str = "question_type", status: str | None = "status",
                           tooltip: list[str] | None = None, x: str = "language_label") -> alt.Chart:
    """Models (rows, in the paper's order) by language (columns, by resource level: `x` is the column of
    the language's label or of its name), one panel per value of `column`, the value printed without decimals."""
    return heatmap(cells, x=x, y="model", value=value, column=column, status=status, title=title,
                   value_title=value_title, value_format=".0f",
                   x_order=orders.labels if x == "language_label" else orders.languages, y_order=orders.models,
                   tooltip=tooltip)


def surface_heatmap(cells: pl.DataFrame, metric: str, orders: Orders, all_languages: bool = False) -> alt.Chart:
    """Notebook 03 (and 10, with `all_languages`): one surface metric by model and language (paper
    Figures 13, 14 and 9)."""
    title = f"{surface.METRICS[metric]} by model and language"
    if all_languages:
        title += ", all 23 languages (beyond the paper; ‡ identified by the new engine)"
    return model_language_heatmap(cells, metric, orders, title=title)


def provider_error_heatmap(cells: pl.DataFrame, orders: Orders) -> alt.Chart:
    """Notebook 03: the share of answers that are provider errors, for the models that have any."""
    return model_language_heatmap(cells, "pct_provider_errors", orders, status=None,
                                  title="% of answers that are provider errors")


def score_heatmap(cells: pl.DataFrame, value: str, orders: Orders, column: str = "question_type") -> alt.Chart:
    """Notebooks 04 and 06: one score (x 100) by model and language, per question type (or per group)."""
    status = "status" if column == "question_type" else None
    tooltip = ["model", "language", column, "n_answers", "n_valid", value, "ci_low", "ci_high", *(["status"] if status else [])]
    return model_language_heatmap(cells, value, orders, title=f"{scores.SCORES[value]} by model and language",
                                  value_title=f"{value} x 100", column=column, status=status, tooltip=tooltip)


def english_answer_heatmap(cells: pl.DataFrame, orders: Orders) -> alt.Chart:
    """Notebook 09: the share of answers in English by model and language (English left out; paper Figure 16)."""
    others = Orders(orders.models, [language for language in orders.languages if language != "English"], orders.labels)
    return model_language_heatmap(
        cells, "pct_english", others, x="language", status=None, value_title="% in English",
        title="Answers in English to questions in another language, by model and language (paper Figure 16)",
        tooltip=["model", "language", "question_type", "n_answers", "n_with_language", "n_english", "pct_english",
                 "ci_low", "ci_high"])


# ---------------------------------------------------------------- 01 dataset overview

def specific_categories_heatmap(categories: pl.DataFrame, languages: list[str]) -> alt.Chart:
    """Figure 5: culturally specific questions by category and language (languages by resource level)."""
    return heatmap(categories, x="language", y="category", value="n_questions",
                   title="Culturally specific questions by category and language", value_title="questions",
                   x_order=languages, tooltip=["category", "language", "resource_level", "n_questions"])


# Figure 1's frame and lettering, in pixels: labels are wrapped to fit their box.
TREEMAP_WIDTH, TREEMAP_HEIGHT = 640, 384
_CHAR_WIDTH, _LINE_HEIGHT, _PADDING = 5.6, 12, 4


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
    x_scale, y_scale = TREEMAP_WIDTH / boxes["x1"].max(), TREEMAP_HEIGHT / boxes["y1"].max()
    labelled = boxes.with_columns(label=pl.Series([
        _box_label(r["category"], r["n_questions"], (r["x1"] - r["x0"]) * x_scale, (r["y1"] - r["y0"]) * y_scale)
        for r in boxes.iter_rows(named=True)]))
    middle = (boxes["n_questions"].min() + boxes["n_questions"].max()) / 2
    base = alt.Chart(labelled).encode(
        x=alt.X("x0:Q", axis=None, scale=alt.Scale(domain=[0, boxes["x1"].max()], nice=False)),
        y=alt.Y("y0:Q", axis=None, scale=alt.Scale(domain=[boxes["y1"].max(), 0], nice=False)),
    )
    rects = base.mark_rect(stroke="white", strokeWidth=2).encode(
        x2="x1:Q", y2="y1:Q",
        color=alt.Color("n_questions:Q", title="questions", scale=alt.Scale(scheme=SEQUENTIAL_SCHEME)),
        tooltip=["category", "n_questions", alt.Tooltip("pct_of_questions", title="% of questions"),
                 "description", alt.Tooltip("example", title="example (English)")],
    )
    labels = base.mark_text(align="left", baseline="top", dx=_PADDING, dy=_PADDING, fontSize=10,
                            lineBreak="\n", lineHeight=_LINE_HEIGHT).encode(
        text="label:N",
        color=alt.condition(f"datum.n_questions < {middle}", alt.value("white"), alt.value("black")),
    )
    return (rects + labels).properties(title=title, width=TREEMAP_WIDTH, height=TREEMAP_HEIGHT)


# ---------------------------------------------------------------- 02 topic similarity

def similarity_heatmap(similarity: pl.DataFrame, order: list[str], group_by: str, question_type: str | None = "specific",
                       collection: str | None = "human") -> alt.Chart:
    """The group x group matrix of BC, in `order` on both axes; each cell's tooltip gives BC and Hellinger."""
    alt = altair()
    item = "paper Figure 6" if topics.reproduces_figure6(group_by, question_type, collection) else "beyond the paper"
    chart = heatmap(
        similarity, x="group_b", y="group_a", value="bc",
        title=f"Bhattacharyya coefficient between category distributions, by {group_by} ({item})",
        value_title="BC", x_order=order, y_order=order, value_format=".2f",
        tooltip=["group_a", "group_b", "bc", "hellinger"],
    )
    # Cells wide enough for a two-decimal label.
    return chart.properties(width=alt.Step(28), height=alt.Step(22))


# ---------------------------------------------------------------- 05 human evaluation

def rating_distribution_chart(distribution: pl.DataFrame, column: str, *, title: str) -> alt.Chart:
    """Stacked horizontal bars: the share of each rating for each model, one panel per level of `column`
    (in the order of `human_evaluation.LEVELS` where it has one, else alphabetical)."""
    alt = altair()
    levels, names = human_evaluation.LEVELS, human_evaluation.DISPLAY_NAME
    table = distribution.with_columns(
        model_name=pl.col("model").replace_strict(names),
        rating_label=pl.col("rating").cast(pl.String),
    )
    model_order = [names[m] for m in human_evaluation.RATED_MODELS]
    return (
        alt.Chart(table)
        .mark_bar()
        .encode(
            x=alt.X("share:Q", stack="normalize", title="share of ratings", axis=alt.Axis(format="%")),
            y=alt.Y("model_name:N", sort=model_order, title=None),
            color=alt.Color("rating_label:O", title="rating",
                            scale=alt.Scale(scheme=SEQUENTIAL_SCHEME,
                                            domain=[str(r) for r in vocabulary.RATING_LEVELS])),
            order=alt.Order("rating:Q"),
            tooltip=[alt.Tooltip(column), alt.Tooltip("model_name", title="model"), alt.Tooltip("rating"),
                     alt.Tooltip("n", title="ratings"), alt.Tooltip("share", format=".0%"),
                     alt.Tooltip("mean_rating", title="mean rating", format=".2f")],
        )
        .properties(width=220, height=90)
        .facet(column=alt.Column(f"{column}:N", title=None,
                                 sort=list(levels[column]) if column in levels else "ascending"))
        .properties(title=title)
    )


# ---------------------------------------------------------------- 07 NativQA

def nativqa_score_heatmap(cells: pl.DataFrame, metric: str, regions: list[str], models: list[str],
                          paper_table: int) -> alt.Chart:
    """Model x region heatmap of one metric, values printed as the paper does."""
    alt = altair()
    spec = METRIC_BY_NAME[metric]
    chart = heatmap(
        cells, x="region", y="model", value="value",
        title=f"NativQA zero-shot {spec.display_name} by model and region (paper Table {paper_table})",
        value_title=spec.display_name, x_order=regions, y_order=models,
        tooltip=["model", "region", "resource_level", "value"], value_format=f".{spec.decimals}f",
    )
    # Wider cells than the default band, so that a three-decimal score fits inside its cell.
    return chart.properties(width=alt.Step(56), height=alt.Step(30))


def resource_level_chart(levels: pl.DataFrame, metric: str = "bleu") -> alt.Chart:
    """Grouped bars of a metric's average by resource level, one bar per model (the paper's Figure 5)."""
    alt = altair()
    column = f"average_{metric}"
    spec = METRIC_BY_NAME[metric]
    models = levels.filter(pl.col("model") != "all models")
    present = [level for level in RESOURCE_LEVELS if level in set(models["resource_level"])]
    return alt.Chart(models).mark_bar().encode(
        x=alt.X("resource_level:N", sort=present, title="resource level", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("model:N"),
        y=alt.Y(f"{column}:Q", title=f"average {spec.display_name}"),
        color=alt.Color("model:N", title="model"),
        tooltip=["resource_level", "model", "n_regions", alt.Tooltip(f"{column}:Q", format=".4f")],
    ).properties(title=f"NativQA zero-shot {spec.display_name} by resource level ({nativqa.resource_level_item(metric)})",
                 width=420, height=260)


# ---------------------------------------------------------------- 08 paper reproduction

def claims_status_chart(long: pl.DataFrame) -> alt.Chart:
    """One bar per paper, split by status: how much of each paper the suite reproduces."""
    alt = altair()
    statuses = long.sort("position")["status"].unique(maintain_order=True).to_list()
    return alt.Chart(long).mark_bar().encode(
        x=alt.X("claims:Q", title="printed numbers", stack="zero"),
        y=alt.Y("paper_name:N", title=None),
        color=alt.Color("status:N", sort=statuses, title="status",
                        scale=alt.Scale(domain=statuses, scheme=SEQUENTIAL_SCHEME, reverse=True)),
        order=alt.Order("position:Q"),
        tooltip=[alt.Tooltip("paper_name", title="paper"), "status", "claims"],
    ).properties(title="The papers' printed numbers by status of their reproduction", width=520, height=90)


# ---------------------------------------------------------------- 09 answer verdicts

def verdict_chart(counts: pl.DataFrame, verdict: str, question_type: str) -> alt.Chart:
    """Stacked bars: for each language (and all together) and model, how many answers got each level."""
    alt = altair()
    levels = list(human_evaluation.LEVELS[verdict])
    languages = sorted(set(counts["language"]) - {answer_verdicts.ALL_LANGUAGES}) + [answer_verdicts.ALL_LANGUAGES]
    figure = answer_verdicts.FIGURES[(verdict, question_type)]
    kind = "culturally specific" if question_type == "specific" else "culturally agnostic"
    return (
        alt.Chart(counts).mark_bar().encode(
            x=alt.X("n_answers:Q", title="answers", stack="zero"),
            y=alt.Y("model:N", title=None, sort=[human_evaluation.DISPLAY_NAME[m] for m in human_evaluation.RATED_MODELS]),
            color=alt.Color("level:O", title=verdict.replace("_", " "),
                            scale=alt.Scale(domain=levels, scheme=SEQUENTIAL_SCHEME, reverse=True)),
            order=alt.Order("level_position:Q"),
            tooltip=["language", "model", "level", "n_answers"],
        )
        .properties(width=150, height=70)
        .facet(column=alt.Column("language:N", title=None, sort=languages))
        .resolve_scale(x="independent")
        .properties(title=f"{answer_verdicts.VERDICT_TITLES[verdict]}: the annotators' verdicts on the answers to {kind} "
                          f"questions (paper Figure {figure})")
    )


# ---------------------------------------------------------------- 10 language identification

def engine_accuracy_heatmap(cells: pl.DataFrame, languages: list[str], engines: list[str]) -> alt.Chart:
    """Notebook 10: the % of held-out release texts each engine identified, by language."""
    return heatmap(cells, x="engine", y="language_label", value="pct", title="% of held-out release texts identified, by engine",
                   value_title="%", value_format=".0f", x_order=engines, y_order=languages,
                   tooltip=["language", "engine", "n_texts", "pct"])


# ---------------------------------------------------------------- the explorer

def explorer_heatmap(cells: pl.DataFrame, title: str, value_format: str, models: list[str], languages: list[str]) -> alt.Chart:
    """The explorer's model x language heatmap of one metric, over the models and languages the cells have."""
    return heatmap(
        cells, x="language", y="model_name", value="value", title=title, value_title=title,
        x_order=[language for language in languages if language in set(cells["language"])],
        y_order=[m for m in models if m in set(cells["model_name"])], value_format=value_format,
    )
