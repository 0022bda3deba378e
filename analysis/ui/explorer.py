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

What the explorer shows is computed in `explorer_logic.py` (its metrics, filters, cells, heatmap, question
lists and sentences), plain functions tested without a kernel or a browser; `Explorer` here only makes
the widgets, passes their values there and shows what comes back. The heatmap is one `JupyterChart`: a
new metric, category or collection gives it a new chart, and since Altair makes new selection objects
for every chart it is given, the click's observer is attached again each time (`_draw_overview`); the
chosen cell is a variable of the chart (`theme.CHOSEN`), set without redrawing it.
"""

from dataclasses import fields
from pathlib import Path

import duckdb
import polars as pl

from .. import store
from ..analyses import dimensions
from ..analyses.answers import SURFACE_TABLE, load_answers, scales, with_scales
from ..viz import export, theme
from ..viz.answers import answers_html
from . import explorer_logic
from .explorer_logic import (
    ALL,
    Filters,
    Metric,
    apply_filters,
    available_metrics,
    cell_sentence,
    chosen_answers,
    chosen_cell,
    chosen_filters,
    compared_answers,
    control_options,
    explorer_chart,
    failure_switch,
    match_sentence,
    metric_cells,
    metric_domain,
    opening_metric,
    overview_filters,
    page_count,
    picked_cell,
    question_choices,
    question_ids,
    question_matches,
    selection_table,
    turned_page,
)

# What the notebook shows where the widgets cannot draw; the live explorer's first child hides it.
KERNEL_NOTE_CLASS = "calmqa-needs-kernel"
KERNEL_NOTE = (
    f'<p class="{KERNEL_NOTE_CLASS}"><strong>The explorer needs a running kernel.</strong> Open this '
    "notebook in JupyterLab (<code>make lab</code>) and run all cells: the controls, the heatmap and the "
    "answers appear here. The reports (<code>reports/index.html</code>) hold every figure without one.</p>"
)


class Explorer:
    """The widgets of the explorer; `show()` is what the notebook displays."""

    def __init__(self, con: duckdb.DuckDBPyConnection, output_dir: Path | str | None = None, page_size: int = 5):
        import ipywidgets as w

        alt = theme.altair()
        # JupyterChart carries its JavaScript itself (from vl-convert) instead of loading it from a CDN.
        alt.JupyterChart.enable_offline()
        self.study_scales = scales(con)
        self.answers = with_scales(load_answers(con), self.study_scales)
        self.has_surface = store.table_exists(con, SURFACE_TABLE)
        self.output_dir = output_dir
        self.page_size = page_size
        self.page = 0
        self.orders = dimensions.Orders.of(con)
        self.language_order = self.orders.languages
        self.model_order = self.orders.models
        self._updating = False
        self._domains: dict[str, tuple[float, float]] = {}

        answers = self.answers
        self.language = w.Select(
            options=control_options(answers, "language", self.language_order), value=ALL, rows=8, description="Language"
        )
        self.model = w.Dropdown(
            options=control_options(answers, "model_name", self.model_order), value=ALL, description="Model"
        )
        self.question_type = w.Dropdown(
            options=control_options(answers, "question_type", self.orders.question_types), value=ALL, description="Type"
        )
        self.category = w.Dropdown(options=control_options(answers, "category"), value=ALL, description="Category")
        self.collection = w.Dropdown(
            options=control_options(answers, "collection"), value=ALL, description="Collection"
        )
        metrics = available_metrics(self.has_surface, self.study_scales)
        self.metrics = {m.key: m for m in metrics}
        self.metric = w.Dropdown(
            options=[(m.title, m.key) for m in metrics],
            value=opening_metric(metrics),
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

    def summary(self) -> str:
        """What the explorer holds, in words (Markdown)."""
        return explorer_logic.summary(self.answers, self.has_surface)

    @property
    def chart(self):
        """The overview chart (its Altair spec) the explorer shows."""
        return self.overview.chart

    @property
    def metric_spec(self) -> Metric:
        return self.metrics[self.metric.value]

    @property
    def filters(self) -> Filters:
        return chosen_filters({f.name: getattr(self, f.name).value for f in fields(Filters)})

    @property
    def filtered(self) -> pl.DataFrame:
        """The answers matching the filters (and the chosen question, when one is)."""
        return chosen_answers(self.answers, self.filters, self.question.value)

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
        options, chosen = question_choices(found, self.question.value)
        self._updating = True
        try:
            self.question.options = options
            self.question.value = chosen
        finally:
            self._updating = False
        self.status.value = match_sentence(matching, found, self.search.value, self.has_surface)
        self._show_chosen()
        self._first_page()

    @property
    def shown_frame(self) -> pl.DataFrame:
        """The answers the comparison pages through: every model's answers (the chosen model's are marked,
        not the only ones) to the questions of the other filters, the chosen question or the search."""
        return compared_answers(self.answers, self.filters, self.question.value, self.search.value)

    def _question_list(self, frame: pl.DataFrame) -> list[int]:
        return question_ids(frame, self.metric_spec, self.only_failures.value, self.filters.model)

    def _first_page(self) -> None:
        if self._updating:
            return
        self.page = 0
        self._refresh_answers()

    def turn_page(self, step: int) -> None:
        """Show the next (`step` 1) or previous (-1) page of questions."""
        pages = page_count(len(self._question_list(self.shown_frame)), self.page_size)
        self.page = turned_page(self.page, step, pages)
        self._refresh_answers()

    def _refresh_answers(self) -> None:
        frame = self.shown_frame
        metric = self.metric_spec
        questions = self._question_list(frame)
        every = question_ids(frame, metric, False, None)
        n_failing = len(question_ids(frame, metric, True, self.filters.model)) if metric.fails_when is not None else 0
        self.only_failures.description, self.only_failures.disabled = failure_switch(metric)
        self.cell_view.value = cell_sentence(frame, self.filters, metric, len(every), n_failing, self.orders)
        pages = page_count(len(questions), self.page_size)
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
        export.save_table(selection_table(self.filtered, self.study_scales), self.output_dir, "explorer_selection")
        return Path(self.output_dir) / "explorer_selection.csv"
