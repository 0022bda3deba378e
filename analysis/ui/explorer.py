"""The interactive explorer of notebooks/00_explore.ipynb (JupyterLab, ipywidgets).

Controls for language, model, question type, category and collection filter every answer of the
database; a model x language heatmap of the chosen metric follows them (culturally agnostic and
specific questions side by side, a percentage by default, on a colour scale that stays put while the
filters change: 0-100 for a percentage), and below it the matching questions are shown with their
answers side by side: original text and English translation where the release has one, surface
verdicts (from `answer_surface`, when that table exists) and human ratings. The languages whose
identification is unreliable are drawn as in the reports: not identified, never as a share.
Clicking a heatmap cell selects its model and language; a search box finds a question by its words.

Without a running kernel (the notebook exported to HTML, or opened where widgets cannot run) the
widgets cannot draw: a short note says so, and the live explorer hides it.

The logic (loading, filtering, aggregating, the HTML of the answers) is plain functions, tested
without a browser; `Explorer` only wires them to widgets. All text from the data is escaped.
"""

from dataclasses import dataclass, fields
from pathlib import Path

import duckdb
import polars as pl

from .. import store
from ..analyses import dimensions
from ..analyses.surface import NOT_IDENTIFIED, PROVIDER_ERRORS_ONLY
from ..core.text import inert
from ..core.vocabulary import UNRELIABLE_LANGUAGES
from ..stats import intervals
from ..viz import export, heatmap, theme

ALL = "(all)"
HUMAN = "human reference"
SURFACE_TABLE = "answer_surface"
# Per answer: the language verdict, repetitions of the answers the provider gave (a provider error is
# neither), no surface issue, and whether it is a provider error (with its code).
SURFACE_SELECT = {
    "language_correct": "s.language_correct",
    "repetition": "CASE WHEN s.provider_error THEN NULL ELSE s.repetition END",
    "surface_ok": "s.surface_ok",
    "provider_error": "s.provider_error",
    "provider_error_code": "s.provider_error_code",
}
SURFACE_TYPES = {"provider_error_code": "VARCHAR"}
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
    the language verdict, so the unreliable languages' cells are drawn as not identified."""

    key: str
    title: str
    column: str
    kind: str
    value_format: str
    needs_surface: bool = False
    needs_language: bool = False
    # Which end is good ("higher", "lower" or None), as `theme.SCHEMES` draws it.
    better: str | None = None


METRICS = (
    Metric(
        "surface_ok_share",
        "% of answers without surface issues",
        "surface_ok",
        "share",
        ".0f",
        True,
        True,
        better="higher",
    ),
    Metric(
        "language_correct_share",
        "% in the correct language (of the answers the provider gave)",
        "language_correct",
        "share",
        ".0f",
        True,
        True,
        better="higher",
    ),
    Metric(
        "repetition_share",
        "% with repetitions (of the answers the provider gave)",
        "repetition",
        "share",
        ".0f",
        True,
        better="lower",
    ),
    Metric("empty_share", "% of empty answers", "is_empty", "share", ".0f", better="lower"),
    Metric("answer_bytes", "mean answer length (bytes)", "n_bytes", "mean", ",d"),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}


@dataclass(frozen=True)
class Filters:
    """One value per control; None means every value."""

    language: str | None = None
    model: str | None = None
    question_type: str | None = None
    category: str | None = None
    collection: str | None = None


def load_answers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every answer with its question, its model's display name (`human reference` for people's
    answers), its human rating where there is one, and its surface verdicts (null columns when the
    database has no `answer_surface` table)."""
    surface = store.table_exists(con, SURFACE_TABLE)
    surface_select = ", ".join(
        f"{sql} AS {name}" if surface else f"CAST(NULL AS {SURFACE_TYPES.get(name, 'BOOLEAN')}) AS {name}"
        for name, sql in SURFACE_SELECT.items()
    )
    surface_join = f"LEFT JOIN {SURFACE_TABLE} s ON s.answer_id = a.answer_id" if surface else ""
    return con.sql(f"""
        SELECT a.answer_id, q.question_id, q.name AS question_name, q.language, l.resource_level,
               q.question_type, q.category, q.collection,
               q.text AS question_text, q.text_en AS question_text_en,
               a.model, CASE WHEN a.is_human THEN '{HUMAN}' || CASE WHEN a.is_dot_points THEN ' (dot points)' ELSE '' END
                             ELSE m.display_name END AS model_name,
               a.is_human, a.text, a.text_en, a.n_bytes, a.text = '' AS is_empty,
               {surface_select},
               r.rating, r.factuality, r.omissions, r.language_correct AS rated_language_correct
        FROM answers a
        JOIN questions q USING (question_id)
        JOIN languages l ON l.language = q.language
        LEFT JOIN models m ON m.model = a.model
        LEFT JOIN ratings r ON r.answer_id = a.answer_id
        {surface_join}
        ORDER BY q.language, q.question_type, q.question_id, a.is_human DESC, model_name, a.answer_id
    """).pl()


def available_metrics(has_surface: bool) -> list[Metric]:
    return [m for m in METRICS if has_surface or not m.needs_surface]


def apply_filters(answers: pl.DataFrame, filters: Filters) -> pl.DataFrame:
    """The answers matching every set filter (the model filter matches `model_name`)."""
    conditions = []
    for f in fields(filters):
        chosen = getattr(filters, f.name)
        if chosen is not None:
            column = "model_name" if f.name == "model" else f.name
            conditions.append(pl.col(column) == chosen)
    return answers.filter(*conditions) if conditions else answers


def metric_cells(answers: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """Model x language x question-type cells of `metric` over model answers (human references are not a
    model): the value (a share as a percentage), the number of answers with a value, and a 95%
    confidence interval (Wilson for a share, normal approximation for a mean). A cell without a value
    has a `status`: its language cannot be identified (for a metric that needs the language verdict),
    or every answer of it was a provider error."""
    keys = ["model_name", "language", "question_type"]
    models = answers.filter(~pl.col("is_human"))
    if metric.needs_language:
        models = models.filter(~pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES)))
    value = pl.col(metric.column).cast(pl.Float64)
    cells = (
        models.filter(pl.col(metric.column).is_not_null())
        .group_by(keys)
        .agg(value=value.mean(), std=value.std(ddof=1), n_answers=pl.len(), n_true=value.sum())
    )
    if metric.kind == "share":
        cells = intervals.with_wilson(cells, "n_true", "n_answers", scale=100.0).with_columns(pl.col("value") * 100)
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
            unreliable=pl.col("language").first().is_in(sorted(UNRELIABLE_LANGUAGES)),
            errors_only=pl.col("provider_error").fill_null(False).all(),
        )
    )
    # As the reports' cells (`analyses.surface.metric_cells`): no answer to judge comes first.
    status = (
        pl.when(pl.col("errors_only") & metric.needs_surface)
        .then(pl.lit(PROVIDER_ERRORS_ONLY))
        .when(pl.col("unreliable") & metric.needs_language)
        .then(pl.lit(NOT_IDENTIFIED))
    )
    shown = pl.col("status").is_null()
    return (
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


def language_label(language: str) -> str:
    """A language as the reports label it: a dagger for the four whose identification is unreliable."""
    return language + (dimensions.UNRELIABLE_MARK if language in UNRELIABLE_LANGUAGES else "")


def metric_domain(answers: pl.DataFrame, metric: Metric) -> tuple[float, float]:
    """The colour scale of `metric`: 0-100 for a percentage; for a mean, its range over every answer,
    so that the colours keep their meaning whatever the filters."""
    if metric.kind == "share":
        return theme.PERCENT_DOMAIN
    values = metric_cells(answers, metric)["value"].drop_nulls()
    return (0.0, float(values.max())) if values.len() else (0.0, 1.0)


def explorer_chart(
    cells: pl.DataFrame,
    metric: Metric,
    domain: tuple[float, float],
    models: list[str],
    languages: list[str],
    divider: str | None = None,
):
    """The explorer's heatmap of `cells`: culturally specific and agnostic questions side by side, the
    colour scale fixed to `domain` and saying which end is good, a line before `divider` (the first
    low-resource language), the unreliable languages marked and their cells drawn as in the reports."""
    table = cells.with_columns(language_label=pl.col("language").map_elements(language_label, return_dtype=pl.String))
    present = set(table["language"])
    return heatmap.heatmap(
        table,
        x="language_label",
        y="model_name",
        value="value",
        title=metric.title,
        value_title="%" if metric.kind == "share" else "bytes",
        better=metric.better,
        domain=domain,
        x_order=[language_label(v) for v in languages if v in present],
        y_order=[m for m in models if m in set(table["model_name"])],
        value_format=metric.value_format,
        column="question_type",
        column_order=list(dimensions.QUESTION_TYPE_ORDER),
        status="status",
        x_dividers=[language_label(divider)] if divider in present else [],
        tooltip=["model_name", "language", "question_type", "value", "n_answers", "ci_low", "ci_high"],
    )


def question_options(answers: pl.DataFrame) -> list[tuple[str, int]]:
    """(label, question_id) of every question among `answers`, in the frame's order."""
    questions = answers.unique("question_id", keep="first", maintain_order=True)
    return [
        (f"{r['language']} · {r['question_type']} · {_shorten(r['question_text'], 90)}", r["question_id"])
        for r in questions.iter_rows(named=True)
    ]


def _shorten(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _flag(value) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def _text_block(label: str, text: str | None) -> str:
    # dir="auto": Arabic, Hebrew and Pashto text runs right to left within its own block.
    return (
        f'<div class="calmqa-label">{inert(label, "html")}</div>'
        f'<div class="calmqa-text" dir="auto">{inert(text or "", "html")}</div>'
    )


CSS = """<style>
.calmqa-question { border-top: 2px solid #888; margin-top: 1em; padding-top: 0.5em; }
.calmqa-answers { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 0.6em; }
.calmqa-answer { border: 1px solid #ccc; border-radius: 4px; padding: 0.4em; font-size: 0.9em; }
.calmqa-text { white-space: pre-wrap; max-height: 18em; overflow-y: auto; }
.calmqa-label { font-weight: bold; margin-top: 0.3em; }
.calmqa-meta { color: #555; font-size: 0.85em; }
</style>"""


def answers_html(answers: pl.DataFrame, has_surface: bool, limit: int = 5) -> str:
    """The first `limit` questions of `answers` with their answers side by side, as escaped HTML."""
    question_ids = answers["question_id"].unique(maintain_order=True).to_list()
    if not question_ids:
        return "<p>No answer matches these filters.</p>"
    parts = [CSS]
    if len(question_ids) > limit:
        parts.append(f"<p>Showing {limit} of {len(question_ids):,} questions: pick one in the question list.</p>")
    for question_id in question_ids[:limit]:
        rows = answers.filter(pl.col("question_id") == question_id)
        q = rows.row(0, named=True)
        meta = " · ".join(str(q[c]) for c in ("language", "question_type", "category", "collection", "question_name"))
        parts.append(f'<div class="calmqa-question"><div class="calmqa-meta">{inert(meta, "html")}</div>')
        parts.append(_text_block("Question", q["question_text"]))
        if q["question_text_en"] and q["question_text_en"] != q["question_text"]:
            parts.append(_text_block("In English", q["question_text_en"]))
        parts.append('<div class="calmqa-answers">')
        for a in rows.iter_rows(named=True):
            parts.append(f'<div class="calmqa-answer"><div class="calmqa-label">{inert(a["model_name"], "html")}</div>')
            details = [f"{a['n_bytes']:,} bytes"]
            if a["is_empty"]:
                details.append("empty: the provider returned no text (a provider error)")
            elif a["provider_error"]:
                details.append(
                    f"provider error: the API returned the code {a['provider_error_code']} instead of an answer"
                )
            if has_surface and not a["is_human"]:
                details.append("correct language: " + _flag(a["language_correct"]))
                details.append("repetition: " + _flag(a["repetition"]))
                details.append("no surface issue: " + _flag(a["surface_ok"]))
            if a["rating"] is not None:
                details.append(
                    f"human rating {a['rating']}/5, factuality issues: {a['factuality']}, "
                    f"omissions: {a['omissions']}, language correct: {a['rated_language_correct']}"
                )
            parts.append(f'<div class="calmqa-meta">{inert("; ".join(details), "html")}</div>')
            parts.append(
                _text_block("Answer", a["text"])
                if a["text"]
                else '<div class="calmqa-label">Answer</div><div class="calmqa-text"><em>(empty)</em></div>'
            )
            if a["text_en"]:
                parts.append(_text_block("English translation", a["text_en"]))
            parts.append("</div>")
        parts.append("</div></div>")
    return "\n".join(parts)


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
        f"{answers.filter(pl.col('rating').is_not_null()).height} of them rated by people. {surface}"
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
        self.answers = load_answers(con)
        self.has_surface = store.table_exists(con, SURFACE_TABLE)
        self.output_dir = output_dir
        self.page_size = page_size
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
            options=options("question_type", dimensions.QUESTION_TYPE_ORDER), value=ALL, description="Type"
        )
        self.category = w.Dropdown(options=options("category"), value=ALL, description="Category")
        self.collection = w.Dropdown(options=options("collection"), value=ALL, description="Collection")
        metrics = available_metrics(self.has_surface)
        self.metric = w.Dropdown(
            options=[(m.title, m.key) for m in metrics],
            value=metrics[0].key,
            description="Metric",
            layout=w.Layout(width="32em"),
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
        self.status = w.HTML()
        self.answers_view = w.HTML()
        self.save_button = w.Button(
            description="Save matching answers as CSV", layout=w.Layout(width="auto"), disabled=output_dir is None
        )
        self.save_button.on_click(lambda _: self.save_selection())
        self.chart = alt.JupyterChart(self._chart(), embed_options={"actions": False})
        self.chart.selections.observe(self._on_pick, [theme.PICK])
        for control in (self.language, self.model, self.question_type, self.category, self.collection, self.search):
            control.observe(self._on_filter, names="value")
        self.metric.observe(lambda _: self._refresh_chart(), names="value")
        self.question.observe(lambda _: self._refresh_answers(), names="value")
        self._on_filter()
        filters = w.HBox(
            [self.language, w.VBox([self.model, self.question_type, self.category, self.collection, self.metric])]
        )
        # Drawn only where the widgets run: it hides the note shown where they cannot (`show`).
        live = w.HTML(f"<style>.{KERNEL_NOTE_CLASS} {{ display: none; }}</style>")
        self.widget = w.VBox(
            [live, filters, self.status, self.chart, self.search, self.question, self.save_button, self.answers_view]
        )

    def show(self):
        """Display the note for a notebook without a kernel, then return the widgets to display."""
        from IPython.display import HTML, display

        display(HTML(KERNEL_NOTE))
        return self.widget

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

    def _chart(self):
        metric = METRIC_BY_KEY[self.metric.value] if hasattr(self, "metric") else available_metrics(self.has_surface)[0]
        frame = apply_filters(self.answers, self.filters) if hasattr(self, "collection") else self.answers
        if metric.key not in self._domains:
            self._domains[metric.key] = metric_domain(self.answers, metric)
        return explorer_chart(
            metric_cells(frame, metric),
            metric,
            self._domains[metric.key],
            self.model_order,
            self.language_order,
            self.orders.divider(by_label=False),
        )

    def _on_filter(self, _change=None) -> None:
        if self._updating:
            return
        matching = apply_filters(self.answers, self.filters)
        found = question_matches(matching, self.search.value)
        chosen = self.question.value
        options = question_options(found)
        shown = options[:QUESTIONS_LISTED]
        more = f", the first {len(shown)} listed: search to narrow" if len(options) > len(shown) else ""
        self.question.options = [(f"{ALL} ({len(options):,} questions{more})", None), *shown]
        self.question.value = chosen if chosen in {q for _, q in shown} else None
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
            f"match{searched}.{note}</p>"
        )
        self._refresh_chart()
        self._refresh_answers()

    def _refresh_chart(self) -> None:
        self.chart.chart = self._chart()

    def _refresh_answers(self) -> None:
        frame = self.filtered if self.question.value is not None else question_matches(self.filtered, self.search.value)
        self.answers_view.value = answers_html(frame, self.has_surface, self.page_size)

    def select_cell(self, model_name: str, language: str) -> None:
        """Set the model and language filters to one heatmap cell (what a click on it does)."""
        self._updating = True
        try:
            self.model.value = model_name
            self.language.value = language
        finally:
            self._updating = False
        self._on_filter()

    def _on_pick(self, change) -> None:
        picked = getattr(change["new"], "value", None) or []
        if picked and "model_name" in picked[0] and "language_label" in picked[0]:
            labels = {language_label(v): v for v in self.language_order}
            self.select_cell(
                picked[0]["model_name"], labels.get(picked[0]["language_label"], picked[0]["language_label"])
            )

    def save_selection(self) -> Path:
        """Write the matching answers as explorer_selection.csv in the output folder."""
        export.save_table(self.filtered, self.output_dir, "explorer_selection")
        return Path(self.output_dir) / "explorer_selection.csv"
