"""What the explorer (`explorer.py`) shows, computed from the answers without any widget: its metrics and
which it opens with, the filters and the answers they choose, the cells of its heatmap and the heatmap
itself, the cell a click picks, the questions it pages through and lists, and its sentences. The
widgets only pass their values here and show what comes back, so everything here is tested without a
kernel or a browser (tests/ui/). Text from the data is escaped in every piece of HTML made here.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace

import polars as pl

from ..analyses import dimensions, surface, tiers
from ..analyses.answers import Scale
from ..analyses.scores import TOO_FEW_ANSWERS
from ..core.scalars import number
from ..core.text import inert
from ..reporting import drilldown
from ..schema import SURFACE_METRICS, SurfaceMetric
from ..stats import intervals
from ..viz import heatmap, theme
from ..viz.answers import shorten

# A control's value for every value.
ALL = "(all)"
# Questions listed at once under the search box.
QUESTIONS_LISTED = 50


@dataclass(frozen=True)
class Metric:
    """A per-answer column and how cells aggregate it: `share` of true values (a percentage, on a 0-100
    scale) or `mean` (on a scale fixed by the unfiltered cells). `needs_language`: the value depends on
    the language verdict, so the unreliable languages' cells are drawn as not identified. An answer
    fails the metric when its column equals `fails_when` (None: no answer fails a mean); `failure` names
    such answers."""

    key: str
    title: str
    column: str
    kind: str
    value_format: str
    needs_surface: bool = False
    needs_language: bool = False
    # Which end is good ("higher", "lower" or None), as `theme.SCHEMES` draws it.
    better: str | None = None
    fails_when: bool | None = None
    failure: str = ""
    # The colour scale's fixed range (a metric's declared range, a criterion's levels), or None.
    domain: tuple[float, float] | None = None
    # A rating criterion's levels, worst first: a cell's value is the mean position of its levels (worst 1).
    levels: tuple[str, ...] = ()
    # What one unit of a mean is, after its number in a sentence.
    unit: str = ""


def scale_metric(scale: Scale) -> Metric:
    """The explorer's metric of a study's metric (the mean of its values) or rating criterion (the mean
    position of its levels, worst 1), with the better end the study declares."""
    if scale.kind == "metric":
        # Two decimals on a narrow range (0 to 1), one on a wide one (0 to 100).
        wide = scale.domain is not None and scale.domain[1] - scale.domain[0] > 10
        return Metric(
            scale.key,
            f"{scale.name} (mean; {scale.better} is better)",
            scale.column,
            "mean",
            ".1f" if wide else ".2f",
            better=scale.better,
            domain=scale.domain,
        )
    numbered = list(scale.levels) == [str(i) for i in range(1, len(scale.levels) + 1)]
    levels = (
        f"1 to {len(scale.levels)}"
        if numbered
        else ", ".join(f"{i} {level}" for i, level in enumerate(scale.levels, start=1))
    )
    return Metric(
        scale.key,
        f"human rating: {scale.name} (mean level, {levels})",
        scale.column,
        "mean",
        ".2f",
        better=scale.better,
        domain=scale.domain,
        levels=scale.levels,
    )


def surface_metric(metric: SurfaceMetric) -> Metric:
    """The explorer's metric of a surface metric of the reports: the same share of the same answers."""
    return Metric(
        metric.key,
        f"{metric.title} ({metric.denominator.words})",
        metric.column,
        "share",
        ".0f",
        needs_surface=True,
        needs_language=metric.needs_language,
        better=metric.better,
        fails_when=metric.fails_when,
        failure=metric.failure,
    )


# The reports' surface metrics, then two of the explorer's own (no report draws them as heatmaps).
METRICS = (
    *map(surface_metric, SURFACE_METRICS),
    Metric(
        "empty_share",
        "% of empty answers",
        "is_empty",
        "share",
        ".0f",
        better="lower",
        fails_when=True,
        failure="is empty",
    ),
    Metric("answer_bytes", "mean answer length (bytes)", "n_bytes", "mean", ",d", unit=" bytes"),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}
# The metric the overview opens with, when the database has it.
DEFAULT_METRIC = "pct_surface_ok"


@dataclass(frozen=True)
class Filters:
    """One value per control; None means every value."""

    language: str | None = None
    model: str | None = None
    question_type: str | None = None
    category: str | None = None
    collection: str | None = None


# The filters that choose a cell of the overview; the others (category, collection) choose its answers.
CELL_FILTERS = ("language", "model", "question_type")


def available_metrics(has_surface: bool, study_scales: Sequence[Scale] = ()) -> list[Metric]:
    """The explorer's metrics: the surface metrics (when the database has the verdicts), its own two, and
    the study's metrics and rating criteria."""
    return [m for m in METRICS if has_surface or not m.needs_surface] + [scale_metric(s) for s in study_scales]


def apply_filters(answers: pl.DataFrame, filters: Filters) -> pl.DataFrame:
    """The answers matching every set filter (the model filter matches `model_name`)."""
    conditions = []
    for f in fields(filters):
        chosen = getattr(filters, f.name)
        if chosen is not None:
            column = "model_name" if f.name == "model" else f.name
            conditions.append(pl.col(column) == chosen)
    return answers.filter(*conditions) if conditions else answers


def overview_filters(filters: Filters) -> Filters:
    """The filters the overview heatmap follows: not those that choose its cell, so that it stays whole."""
    return Filters(**{f.name: None if f.name in CELL_FILTERS else getattr(filters, f.name) for f in fields(filters)})


def metric_cells(answers: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """Model x language x question-type cells of `metric` over model answers (human references are not a
    model): the value (a share as a percentage), the number of answers with a value, and a 95%
    confidence interval (Wilson for a share, normal approximation for a mean). A cell without a value
    has a `status`: its language cannot be identified (for a metric that needs the language verdict),
    or every answer of it was a provider error, or none has a value."""
    keys = ["model_name", "language", "question_type"]
    models = answers.filter(~pl.col("is_human"))
    if metric.needs_language:
        models = models.filter(~pl.col("unreliable"))
    value = pl.col(metric.column).cast(pl.Float64)
    cells = (
        models.filter(pl.col(metric.column).is_not_null())
        .group_by(keys)
        .agg(value=value.mean(), std=value.std(ddof=1), n_answers=pl.len(), n_true=value.sum())
    )
    if metric.kind == "share":
        # As the reports compute a share (`analyses.surface`): rounded, the two are the same number.
        cells = intervals.with_wilson(cells, "n_true", "n_answers", scale=100.0).with_columns(
            value=100 * pl.col("n_true") / pl.col("n_answers")
        )
    else:
        bounds = [
            intervals.normal_mean_interval(mean, std, n)
            for mean, std, n in cells.select("value", "std", "n_answers").iter_rows()
        ]
        cells = cells.with_columns(
            ci_low=pl.Series([b[0] for b in bounds], dtype=pl.Float64),
            ci_high=pl.Series([b[1] for b in bounds], dtype=pl.Float64),
        )
    every = (
        answers.filter(~pl.col("is_human"))
        .group_by(keys)
        .agg(
            unreliable=pl.col("unreliable").first(),
            errors_only=pl.col("provider_error").fill_null(False).all(),
        )
    )
    # The reports' rule (`analyses.surface.cell_status`), and a cell without any value to show.
    status = surface.cell_status(
        pl.col("errors_only") & metric.needs_surface,
        pl.col("unreliable") & metric.needs_language,
        pl.when(pl.col("n_answers").fill_null(0) == 0).then(pl.lit(TOO_FEW_ANSWERS)),
    )
    shown = pl.col("status").is_null()
    table = (
        every.join(cells, on=keys, how="left")
        .with_columns(status=status)
        .select(
            *keys,
            *(pl.when(shown).then(pl.col(c)).alias(c) for c in ("value", "ci_low", "ci_high")),
            n_answers=pl.col("n_answers").fill_null(0).cast(pl.Int64),
            status="status",
        )
        .sort(keys)
    )
    # The significance tiers of the shown cells, over the same answers (`analyses.tiers`).
    return tiers.with_tiers(
        table,
        models.filter(pl.col(metric.column).is_not_null()),
        metric.column,
        by=keys,
        model="model_name",
        better=metric.better,
        kind="binary" if metric.kind == "share" else "numeric",
        scale=100.0 if metric.kind == "share" else 1.0,
    )


def language_label(language: str, orders: dimensions.Orders) -> str:
    """A language as the reports label it: a dagger for one whose answers have no language verdict."""
    return orders.label(language) if language in orders.languages else language


def metric_domain(answers: pl.DataFrame, metric: Metric) -> tuple[float, float]:
    """The colour scale of `metric`: 0-100 for a percentage; for a mean, its range over every answer,
    so that the colours keep their meaning whatever the filters."""
    if metric.kind == "share":
        return theme.PERCENT_DOMAIN
    if metric.domain is not None:
        return metric.domain
    values = metric_cells(answers, metric)["value"].drop_nulls()
    return (0.0, number(values.max())) if values.len() else (0.0, 1.0)


def explorer_chart(cells: pl.DataFrame, metric: Metric, domain: tuple[float, float], orders: dimensions.Orders):
    """The explorer's heatmap of `cells`: the question types stacked (in the study's order), the colour
    scale fixed to `domain` and saying which end is good, a line before the first language of each
    resource level after the first, the unreliable languages marked and their cells drawn as in the
    reports. A click picks a cell's model, language and question type (`theme.PICK`); the cells matching
    `theme.CHOSEN` are outlined."""
    table = cells.with_columns(
        language_label=pl.col("language").map_elements(lambda v: language_label(v, orders), return_dtype=pl.String)
    )
    present = set(table["language"])
    languages, models = orders.languages, orders.models
    return heatmap.heatmap(
        table,
        x="language_label",
        y="model_name",
        value="value",
        title=metric.title,
        value_title="%" if metric.kind == "share" else metric.unit.strip() or "mean",
        better=metric.better,
        domain=domain,
        x_order=[language_label(v, orders) for v in languages if v in present],
        y_order=[m for m in models if m in set(table["model_name"])],
        value_format=metric.value_format,
        column="question_type" if orders.question_types else None,
        column_order=list(orders.question_types),
        status="status",
        x_dividers=[language_label(v, orders) for v in orders.dividers(by_label=False) if v in present],
        tooltip=[
            "model_name",
            "language",
            "question_type",
            "value",
            "n_answers",
            "ci_low",
            "ci_high",
            *tiers.TIER_COLUMNS,
        ],
        pick_fields=["model_name", "language_label", "question_type"],
        outline_chosen=True,
        # Below the panels: beside them the chart would not fit a notebook's output area at 1024 px.
    ).configure_legend(orient="bottom", direction="horizontal", gradientLength=200, titleLimit=300)


def chosen_cell(filters: Filters, orders: dimensions.Orders) -> dict[str, str]:
    """The fields of the overview's cells that `filters` choose, as the heatmap's `theme.CHOSEN` holds them."""
    chosen = {
        "model_name": filters.model,
        "language_label": language_label(filters.language, orders) if filters.language else None,
        "question_type": filters.question_type,
    }
    return {k: v for k, v in chosen.items() if v is not None}


def picked_cell(picked: list[dict], orders: dimensions.Orders) -> dict[str, str] | None:
    """Model, language and question type of a click on the overview (`PointSelection.value`), or None."""
    if not picked or "model_name" not in picked[0] or "language_label" not in picked[0]:
        return None
    labels = {language_label(v, orders): v for v in orders.languages}
    label = picked[0]["language_label"]
    return {
        "model": picked[0]["model_name"],
        "language": labels.get(label, label),
        "question_type": picked[0].get("question_type"),
    }


def failing(metric: Metric) -> pl.Expr | None:
    """Whether an answer fails `metric` (None for a metric no answer fails)."""
    if metric.fails_when is None:
        return None
    return pl.col(metric.column).fill_null(not metric.fails_when) == metric.fails_when


def question_ids(answers: pl.DataFrame, metric: Metric, only_failures: bool, model: str | None) -> list[int]:
    """The questions among `answers`, in their order; with `only_failures`, those where the answer of
    `model` (of any model when None) fails `metric`."""
    fails = failing(metric)
    if only_failures and fails is not None:
        model_answers = answers.filter(~pl.col("is_human"))
        if model is not None:
            model_answers = model_answers.filter(pl.col("model_name") == model)
        wanted = set(model_answers.filter(fails)["question_id"])
        answers = answers.filter(pl.col("question_id").is_in(sorted(wanted)))
    if metric.kind == "mean" and model is not None and metric.better is not None:
        # The questions by the chosen model's value of the metric, its worst answers first (those without
        # a value last; ties in their order).
        values = answers.filter(pl.col("model_name") == model).group_by("question_id").agg(pl.col(metric.column).mean())
        worst_first = metric.better == "higher"
        order = (
            answers.select("question_id")
            .unique(maintain_order=True)
            .with_row_index("position")
            .join(values, on="question_id", how="left")
            .sort(metric.column, "position", descending=[not worst_first, False], nulls_last=True)
        )
        return order["question_id"].to_list()
    return answers["question_id"].unique(maintain_order=True).to_list()


def question_options(answers: pl.DataFrame) -> list[tuple[str, int]]:
    """(label, question_id) of every question among `answers`, in the frame's order."""
    questions = answers.unique("question_id", keep="first", maintain_order=True)
    return [
        (f"{r['language']} · {r['question_type']} · {shorten(r['question_text'], 90)}", r["question_id"])
        for r in questions.iter_rows(named=True)
    ]


def cell_sentence(
    answers: pl.DataFrame, filters: Filters, metric: Metric, n_questions: int, n_failing: int, orders: dimensions.Orders
) -> str:
    """What the comparison shows, in words: the chosen model, language and question type, the chosen
    model's value of the metric over them, and how many questions have a failing answer."""
    chosen = [
        f"<strong>{inert(filters.model, 'html')}</strong>" if filters.model else "every model",
        inert(filters.language, "html") if filters.language else "every language",
        inert(orders.question_type_labels.get(filters.question_type, filters.question_type), "html") + " questions"
        if filters.question_type
        else "every question type",
    ]
    sentence = f"Chosen: {', '.join(chosen)}. {n_questions:,} questions"
    if metric.fails_when is not None:
        whose = inert(filters.model, "html") + "'s answer" if filters.model else "an answer"
        sentence += f", {n_failing:,} of them where {whose} {inert(metric.failure, 'html')}"
    if filters.model and filters.language and filters.question_type:
        cells = metric_cells(answers.filter(pl.col("model_name") == filters.model), metric)
        if cells.height == 1:
            cell = cells.row(0, named=True)
            if cell["status"]:
                sentence += f"; the cell: {inert(cell['status'], 'html')}"
            elif cell["value"] is not None:
                # The chart's own format (a d3 format; `,d` is Python's `,.0f` for a float).
                shown = format(cell["value"], metric.value_format.replace("d", ".0f"))
                value = f"{shown}%" if metric.kind == "share" else f"{shown}{metric.unit}"
                sentence += f"; the cell: {value} over {cell['n_answers']:,} answers"
                if metric.levels:
                    sentence += " (" + level_counts(answers, filters, metric) + ")"
    if filters.model and filters.language:
        link = drilldown.cell_link(filters.model, filters.language, filters.question_type)
        sentence += (
            f". To share it: <code>{inert(link, 'html')}</code> in the reports folder (<code>make figures</code>) "
            "opens this cell's answers"
        )
    return f"<p>{sentence}.</p>"


def level_counts(answers: pl.DataFrame, filters: Filters, metric: Metric) -> str:
    """How many of the chosen model's ratings in the cell gave each level of the criterion, worst first."""
    criterion = metric.key.split(":", 1)[1]
    ratings = (
        answers.filter(pl.col("model_name") == filters.model)
        .select(pl.col("rating_levels").explode())
        .drop_nulls()
        .unnest("rating_levels")
        .filter(pl.col("criterion") == criterion)
    )
    counts = dict(ratings.group_by("position").len().iter_rows())
    return ", ".join(f"{inert(level, 'html')}: {counts.get(i, 0):,}" for i, level in enumerate(metric.levels, start=1))


def summary(answers: pl.DataFrame, has_surface: bool) -> str:
    """What the explorer holds, in words."""
    models = answers.filter(~pl.col("is_human"))
    surface = (
        "Surface verdicts come from the `answer_surface` table."
        if has_surface
        else "The database has no `answer_surface` table yet, so the surface metrics and verdicts are absent."
    )
    return (
        f"The explorer holds **{answers.height:,} answers** ({models.height:,} from "
        f"{models['model_name'].n_unique()} models, {answers.height - models.height:,} human references) to "
        f"{answers['question_id'].n_unique():,} questions in {answers['language'].n_unique()} languages, "
        f"{answers.filter(pl.col('ratings').is_not_null()).height} of them rated by people. {surface}"
    )


def selection_table(answers: pl.DataFrame, study_scales: Sequence[Scale]) -> pl.DataFrame:
    """The answers as a CSV holds them (it holds no list): the study's metric values as text, `metric value,
    ...` in the study's order, beside `ratings` (`criterion level, ...`); the levels' positions and the
    numbered columns of the scales are left out, since those texts say the same."""
    pair = pl.concat_str(
        pl.element().struct.field("metric"), pl.element().struct.field("value").cast(pl.String), separator=" "
    )
    return answers.with_columns(pl.col("metric_values").list.eval(pair).list.join(", ")).drop(
        "rating_levels", *(scale.column for scale in study_scales)
    )


def question_matches(answers: pl.DataFrame, search: str) -> pl.DataFrame:
    """The answers whose question's text, English text or name holds every word of `search` (any case)."""
    frame = answers
    for word in search.lower().split():
        frame = frame.filter(
            pl.col("question_text").str.to_lowercase().str.contains(word, literal=True)
            | pl.col("question_text_en").fill_null("").str.to_lowercase().str.contains(word, literal=True)
            | pl.col("question_name").str.to_lowercase().str.contains(word, literal=True)
        )
    return frame


def control_options(answers: pl.DataFrame, column: str, order: Sequence[str] = ()) -> list[str]:
    """A control's choices: `ALL`, then the values of `column` among `answers`, those in `order` first
    (in that order) and the others sorted."""
    present = set(answers[column].drop_nulls().to_list())
    ordered = [v for v in order if v in present] + sorted(present - set(order))
    return [ALL, *ordered]


def opening_metric(metrics: Sequence[Metric]) -> str:
    """The key of the metric the overview opens with: `DEFAULT_METRIC` when it is one of `metrics`, else
    the first."""
    return DEFAULT_METRIC if DEFAULT_METRIC in {m.key for m in metrics} else metrics[0].key


def chosen_filters(values: Mapping[str, str]) -> Filters:
    """The filters of the controls' values (one per field of `Filters`, by its name); `ALL` is every value."""
    return Filters(**{f.name: None if values[f.name] == ALL else values[f.name] for f in fields(Filters)})


def chosen_answers(answers: pl.DataFrame, filters: Filters, question: int | None) -> pl.DataFrame:
    """The answers matching the filters, and the chosen question when one is (what the explorer saves)."""
    frame = apply_filters(answers, filters)
    if question is not None:
        frame = frame.filter(pl.col("question_id") == question)
    return frame


def compared_answers(answers: pl.DataFrame, filters: Filters, question: int | None, search: str) -> pl.DataFrame:
    """The answers the comparison pages through: every model's answers (the chosen model's are marked,
    not the only ones) to the questions of the other filters, the chosen question or the search."""
    frame = apply_filters(answers, replace(filters, model=None))
    if question is not None:
        return frame.filter(pl.col("question_id") == question)
    return question_matches(frame, search)


def question_choices(answers: pl.DataFrame, chosen: int | None) -> tuple[list[tuple[str, int | None]], int | None]:
    """The question list of `answers`: a line counting their questions, then the first `QUESTIONS_LISTED`
    (label, question_id); and the chosen question, kept when it is listed (else None)."""
    options = question_options(answers)
    shown = options[:QUESTIONS_LISTED]
    more = f", the first {len(shown)} listed: search to narrow" if len(options) > len(shown) else ""
    listed: list[tuple[str, int | None]] = [(f"{ALL} ({len(options):,} questions{more})", None), *shown]
    return listed, chosen if chosen in {q for _, q in shown} else None


def match_sentence(matching: pl.DataFrame, found: pl.DataFrame, search: str, has_surface: bool) -> str:
    """What the filters match, in words: the answers and their questions (`matching`), how many questions
    hold every word of the search when there is one (`found`), and what a click does; without the
    `answer_surface` table, that the surface verdicts are absent."""
    note = (
        ""
        if has_surface
        else (
            " The database has no <code>answer_surface</code> table, so surface verdicts are not shown: "
            "build it with the surface-quality step of <code>make db</code>."
        )
    )
    searched = f" ({found['question_id'].n_unique():,} with every word of the search)" if search.strip() else ""
    return (
        f"<p>{matching.height:,} answers to {matching['question_id'].n_unique():,} questions "
        f"match{searched}. Click a cell of the heatmap to compare its answers.{note}</p>"
    )


def failure_switch(metric: Metric) -> tuple[str, bool]:
    """The label of the switch that keeps only the questions with a failing answer, and whether it is
    disabled (for a metric no answer fails)."""
    if metric.fails_when is None:
        return "Only the failures", True
    return f"Only where the answer {metric.failure}", False


def page_count(n_questions: int, page_size: int) -> int:
    """How many pages of `page_size` questions hold `n_questions`: one at least, empty when there is none."""
    return max((n_questions + page_size - 1) // page_size, 1)


def turned_page(page: int, step: int, n_pages: int) -> int:
    """The page `step` pages after `page` (before it when negative), kept within the `n_pages` pages."""
    return min(max(page + step, 0), n_pages - 1)
