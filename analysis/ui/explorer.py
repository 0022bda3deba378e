"""The interactive explorer of notebooks/00_explore.ipynb (JupyterLab, ipywidgets): "why is this cell red?"

An overview heatmap of one metric, model x language, culturally specific and agnostic questions
stacked (a percentage by default, on a colour scale that stays put: 0-100 for a percentage), over the
answers of the chosen category and collection. It stays whole: choosing a cell outlines it instead of
filtering it away. A click on a cell (or the model, language and question-type controls) chooses a
model, a language and a question type, and the panel below compares the answers: each question of
that language and type (the original and its English translation side by side), with every model's
answer beside the others, the chosen model's first and marked, each with its verdicts as badges
(wrong language, not identified, repetition, provider error, empty, the human rating where there is
one). A switch keeps only the questions where the chosen model's answer fails the metric (in the
wrong language, repeating itself...); paging goes through every question; Reset returns to the whole
overview. A search box and a question list find one question by its words.

The languages whose identification is unreliable are drawn as in the reports: not identified, never
as a share. All text from the data is escaped; an answer's block takes its direction from its text
(`dir="auto"`), so Arabic, Hebrew and Pashto run right to left.

Without a running kernel (the notebook exported to HTML, or opened where widgets cannot run) the
widgets cannot draw: a short note says so, and the live explorer hides it.

The logic (loading, filtering, aggregating, the HTML of the comparison) is plain functions, tested
without a browser; `Explorer` only wires them to widgets. The heatmap is one `JupyterChart`: a new
metric, category or collection gives it a new chart, and since Altair makes new selection objects for
every chart it is given, the click's observer is attached again each time (`_draw_overview`); the
chosen cell is a variable of the chart (`theme.CHOSEN`), set without redrawing it.
"""

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import duckdb
import polars as pl

from .. import store
from ..analyses import dimensions, surface, tiers
from ..analyses.answers import SURFACE_TABLE, Scale, load_answers, scales, with_scales
from ..analyses.scores import TOO_FEW_ANSWERS
from ..core.scalars import number
from ..core.text import inert
from ..reporting import drilldown
from ..schema import SURFACE_METRICS, SurfaceMetric
from ..stats import intervals
from ..viz import export, heatmap, theme
from ..viz.answers import answers_html, shorten

ALL = "(all)"
# Questions listed at once under the search box.
QUESTIONS_LISTED = 50
# What the notebook shows where the widgets cannot draw; the live explorer's first child hides it.
KERNEL_NOTE_CLASS = "calmqa-needs-kernel"
KERNEL_NOTE = (
    f'<p class="{KERNEL_NOTE_CLASS}"><strong>The explorer needs a running kernel.</strong> Open this '
    "notebook in JupyterLab (<code>make lab</code>) and run all cells: the controls, the heatmap and the "
    "answers appear here. The reports (<code>reports/index.html</code>) hold every figure without one.</p>"
)


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


class Explorer:
    """The widgets of the explorer; `show()` is what the notebook displays."""

    def __init__(self, con: duckdb.DuckDBPyConnection, output_dir: Path | str | None = None, page_size: int = 5):
        import ipywidgets as w

        alt = theme.altair()
        # JupyterChart carries its JavaScript itself (from vl-convert) instead of loading it from a CDN.
        alt.JupyterChart.enable_offline()
        study_scales = scales(con)
        self.answers = with_scales(load_answers(con), study_scales)
        self.has_surface = store.table_exists(con, SURFACE_TABLE)
        self.output_dir = output_dir
        self.page_size = page_size
        self.page = 0
        self.orders = dimensions.Orders.of(con)
        self.language_order = self.orders.languages
        self.model_order = self.orders.models
        self._updating = False
        self._domains: dict[str, tuple[float, float]] = {}

        def options(column: str, order: list[str] | None = None) -> list[str]:
            present = set(self.answers[column].drop_nulls().to_list())
            ordered = [v for v in order or [] if v in present] + sorted(present - set(order or []))
            return [ALL, *ordered]

        self.language = w.Select(
            options=options("language", self.language_order), value=ALL, rows=8, description="Language"
        )
        self.model = w.Dropdown(options=options("model_name", self.model_order), value=ALL, description="Model")
        self.question_type = w.Dropdown(
            options=options("question_type", list(self.orders.question_types)), value=ALL, description="Type"
        )
        self.category = w.Dropdown(options=options("category"), value=ALL, description="Category")
        self.collection = w.Dropdown(options=options("collection"), value=ALL, description="Collection")
        metrics = available_metrics(self.has_surface, study_scales)
        self.metrics = {m.key: m for m in metrics}
        self.metric = w.Dropdown(
            options=[(m.title, m.key) for m in metrics],
            value=DEFAULT_METRIC if DEFAULT_METRIC in {m.key for m in metrics} else metrics[0].key,
            description="Metric",
            layout=w.Layout(width="100%", max_width="32em"),
        )
        self.search = w.Text(
            value="",
            placeholder="words of a question, in its language or in English",
            description="Search",
            layout=w.Layout(width="95%"),
        )
        self.question = w.Select(
            options=[(ALL, None)], value=None, rows=8, description="Question", layout=w.Layout(width="95%")
        )

        # Controls keep their width and wrap to the next line where the output area is narrow.
        def fixed():
            return w.Layout(width="auto", flex="0 0 auto")

        self.only_failures = w.Checkbox(value=False, description="Only the failures", indent=False, layout=fixed())
        self.previous_page = w.Button(description="◀ Previous", layout=fixed())
        self.next_page = w.Button(description="Next ▶", layout=fixed())
        self.reset_button = w.Button(description="Reset", button_style="warning", layout=fixed())
        self.status = w.HTML()
        self.cell_view = w.HTML()
        self.answers_view = w.HTML()
        self.save_button = w.Button(
            description="Save matching answers as CSV", layout=fixed(), disabled=output_dir is None
        )
        self.save_button.on_click(lambda _: self.save_selection())
        self.previous_page.on_click(lambda _: self.turn_page(-1))
        self.next_page.on_click(lambda _: self.turn_page(1))
        self.reset_button.on_click(lambda _: self.reset())
        self.overview = alt.JupyterChart(None, embed_options={"actions": False, "renderer": "svg"})
        self._draw_overview()
        for control in (self.language, self.model, self.question_type, self.search):
            control.observe(self._on_filter, names="value")
        for control in (self.category, self.collection, self.metric):
            control.observe(self._on_overview_filter, names="value")
        self.question.observe(lambda _: self._first_page(), names="value")
        self.only_failures.observe(lambda _: self._first_page(), names="value")
        self._on_filter()
        wrap = w.Layout(flex_flow="row wrap", align_items="center")
        filters = w.HBox(
            [self.language, w.VBox([self.model, self.question_type, self.category, self.collection, self.metric])],
            layout=wrap,
        )
        paging = w.HBox(
            [self.only_failures, self.previous_page, self.next_page, self.reset_button, self.save_button], layout=wrap
        )
        # Drawn only where the widgets run: it hides the note shown where they cannot (`show`).
        live = w.HTML(f"<style>.{KERNEL_NOTE_CLASS} {{ display: none; }}</style>")
        self.widget = w.VBox(
            [
                live,
                filters,
                self.status,
                # The heatmap scrolls sideways in a box of its own when wider than the output area, so that a
                # click on a right-hand cell never moves the controls and the answers out of view.
                w.Box([self.overview], layout=w.Layout(overflow="auto hidden", max_width="100%", width="100%")),
                self.cell_view,
                self.search,
                self.question,
                paging,
                self.answers_view,
            ]
        )

    def show(self):
        """Display the note for a notebook without a kernel, then return the widgets to display."""
        from IPython.display import HTML, display

        display(HTML(KERNEL_NOTE))
        return self.widget

    @property
    def chart(self):
        """The overview chart (its Altair spec) the explorer shows."""
        return self.overview.chart

    @property
    def metric_spec(self) -> Metric:
        return self.metrics[self.metric.value]

    @property
    def filters(self) -> Filters:
        return Filters(
            **{
                f.name: (None if getattr(self, f.name).value == ALL else getattr(self, f.name).value)
                for f in fields(Filters)
            }
        )

    @property
    def filtered(self) -> pl.DataFrame:
        """The answers matching the filters (and the chosen question, when one is)."""
        frame = apply_filters(self.answers, self.filters)
        if self.question.value is not None:
            frame = frame.filter(pl.col("question_id") == self.question.value)
        return frame

    def _overview_chart(self):
        metric = self.metric_spec
        if metric.key not in self._domains:
            self._domains[metric.key] = metric_domain(self.answers, metric)
        return explorer_chart(
            metric_cells(apply_filters(self.answers, overview_filters(self.filters)), metric),
            metric,
            self._domains[metric.key],
            self.orders,
        )

    def _draw_overview(self) -> None:
        """Give the overview its chart for the metric, category and collection, and listen to its clicks:
        every chart given to a JupyterChart gets new selection objects, so the observer goes on the new one."""
        self.overview.chart = self._overview_chart()
        self.overview.selections.observe(self._on_pick, [theme.PICK])
        self._show_chosen()

    def _show_chosen(self) -> None:
        setattr(self.overview.params, theme.CHOSEN, chosen_cell(self.filters, self.orders))

    def _on_overview_filter(self, _change=None) -> None:
        if self._updating:
            return
        self._draw_overview()
        self._on_filter()

    def _on_filter(self, _change=None) -> None:
        if self._updating:
            return
        matching = apply_filters(self.answers, self.filters)
        found = question_matches(matching, self.search.value)
        chosen = self.question.value
        options = question_options(found)
        shown = options[:QUESTIONS_LISTED]
        more = f", the first {len(shown)} listed: search to narrow" if len(options) > len(shown) else ""
        self._updating = True
        try:
            self.question.options = [(f"{ALL} ({len(options):,} questions{more})", None), *shown]
            self.question.value = chosen if chosen in {q for _, q in shown} else None
        finally:
            self._updating = False
        note = (
            ""
            if self.has_surface
            else (
                " The database has no <code>answer_surface</code> table, so surface verdicts are not shown: "
                "build it with the surface-quality step of <code>make db</code>."
            )
        )
        searched = f" ({len(options):,} with every word of the search)" if self.search.value.strip() else ""
        self.status.value = (
            f"<p>{matching.height:,} answers to {matching['question_id'].n_unique():,} questions "
            f"match{searched}. Click a cell of the heatmap to compare its answers.{note}</p>"
        )
        self._show_chosen()
        self._first_page()

    @property
    def shown_frame(self) -> pl.DataFrame:
        """The answers the comparison pages through: every model's answers (the chosen model's are marked,
        not the only ones) to the questions of the other filters, the chosen question or the search."""
        frame = apply_filters(self.answers, replace(self.filters, model=None))
        if self.question.value is not None:
            return frame.filter(pl.col("question_id") == self.question.value)
        return question_matches(frame, self.search.value)

    def _question_list(self, frame: pl.DataFrame) -> list[int]:
        return question_ids(frame, self.metric_spec, self.only_failures.value, self.filters.model)

    def _first_page(self) -> None:
        if self._updating:
            return
        self.page = 0
        self._refresh_answers()

    def turn_page(self, step: int) -> None:
        """Show the next (`step` 1) or previous (-1) page of questions."""
        pages = max((len(self._question_list(self.shown_frame)) + self.page_size - 1) // self.page_size, 1)
        self.page = min(max(self.page + step, 0), pages - 1)
        self._refresh_answers()

    def _refresh_answers(self) -> None:
        frame = self.shown_frame
        metric = self.metric_spec
        questions = self._question_list(frame)
        every = question_ids(frame, metric, False, None)
        n_failing = len(question_ids(frame, metric, True, self.filters.model)) if metric.fails_when is not None else 0
        self.only_failures.description = (
            f"Only where the answer {metric.failure}" if metric.fails_when is not None else "Only the failures"
        )
        self.only_failures.disabled = metric.fails_when is None
        self.cell_view.value = cell_sentence(frame, self.filters, metric, len(every), n_failing, self.orders)
        pages = max((len(questions) + self.page_size - 1) // self.page_size, 1)
        self.previous_page.disabled = self.page <= 0
        self.next_page.disabled = self.page >= pages - 1
        self.answers_view.value = answers_html(
            frame, self.has_surface, self.page_size, self.filters.model, questions, self.page
        )

    def select_cell(self, model_name: str, language: str, question_type: str | None = None) -> None:
        """Set the model, language and question-type filters to one heatmap cell (what a click on it does)."""
        self._updating = True
        try:
            self.model.value = model_name
            self.language.value = language
            if question_type is not None:
                self.question_type.value = question_type
        finally:
            self._updating = False
        self._on_filter()

    def reset(self) -> None:
        """Back to the whole overview: every filter, the search, the question and the page cleared."""
        self._updating = True
        try:
            for control in (self.language, self.model, self.question_type, self.category, self.collection):
                control.value = ALL
            self.search.value = ""
            self.only_failures.value = False
        finally:
            self._updating = False
        self._draw_overview()
        self._on_filter()

    def _on_pick(self, change) -> None:
        cell = picked_cell(getattr(change["new"], "value", None) or [], self.orders)
        if cell is not None:
            self.select_cell(cell["model"], cell["language"], cell["question_type"])

    def save_selection(self) -> Path:
        """Write the matching answers as explorer_selection.csv in the output folder."""
        if self.output_dir is None:  # (the save button is disabled then)
            raise ValueError("the explorer was opened without an output folder (output_dir): nothing to save to")
        export.save_table(self.filtered, self.output_dir, "explorer_selection")
        return Path(self.output_dir) / "explorer_selection.csv"
