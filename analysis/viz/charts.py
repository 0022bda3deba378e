"""What the charts of the notebooks share, in the suite's theme: the model x language heatmap and the
charts of panels grouped by resource level. The charts themselves live in one module per subject, named
after it (`overview_charts`, `topic_charts`, `surface_charts`, `score_charts`, `rating_charts`,
`nativqa_charts`, `claims_charts`, `verdict_charts`, `language_id_charts`), each importing only the
analyses it draws, so that a change to one analysis reruns only the notebooks that show it
(`make -n -W analysis/analyses/<module>.py figures`; scripts/make_deps.py reads these imports).

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

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import polars as pl

from ..analyses.dimensions import DRAWN_MODELS_RULE, Orders
from .heatmap import CELL, heatmap
from .theme import CHARACTER_WIDTH, CONFIG, PERCENT_DOMAIN, PRINT_PADDING, PRINT_TEXT_SIZE, PRINT_WIDTHS, altair

if TYPE_CHECKING:
    import altair as alt

# The room a chart has in a report read in a window 1024 px wide, and what a chart of panels keeps of it
# for a legend beside them and between two panels, in pixels: panels wrap into as many columns as fit.
SCREEN_ROOM = 900
LEGEND_ROOM = 150
PANEL_GAP = 24
VERDICT_PANEL_WIDTH, VERDICT_PANEL_HEIGHT = 140, 70


# ---------------------------------------------------------------- model x language heatmaps


# The `usermeta` entry of a chart whose cells are the answers of a model in a language (and a question
# type): the names of those fields in its data.
DRILL_META = "calmqa_drill"


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
    a percentage from 0 to 100 printed without decimals. Only the models and languages `drawn` keeps are
    drawn, and the subtitle says how many more the figure's CSV has (it is written from `cells`, every row)."""
    by_label = x == "language_label"
    if column == "question_type" and not orders.question_types:
        column = None
    cells, orders, notes = drawn(cells, orders)
    if notes:
        subtitle = [*([subtitle] if isinstance(subtitle, str) else list(subtitle or [])), *notes]
    chart = heatmap(
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
        y_order=orders.models,
        column_order=column_order or (list(orders.question_types) if column == "question_type" else None),
        x_dividers=orders.dividers(by_label),
        x_title=_level_axis_title(orders, cells[x].n_unique()),
        tooltip=tooltip,
        caveat="caveat" if "caveat" in cells.columns else None,
    )
    # Its cells are answers of one model in one language (and question type): a report's drill-down
    # shows them on a click (`reporting.drilldown`).
    existing = getattr(chart, "usermeta", None)
    chart.usermeta = {
        **(existing if isinstance(existing, dict) else {}),
        DRILL_META: {"model": "model", "language": "language", "question_type": column},
    }
    return chart


def drawn(
    cells: pl.DataFrame, orders: Orders, model: str = "model", language: str = "language"
) -> tuple[pl.DataFrame, Orders, list[str]]:
    """What a chart draws of `cells`: the rows of the models of `orders.drawn` and of the languages of
    `orders.drawn_languages` (`dimensions.MAX_DRAWN_MODELS`, `MAX_DRAWN_LANGUAGES`: every chart caps them by
    this one rule), the orders of what is drawn, and the lines its caption adds for what is left out (how
    many more models and languages the figure's CSV, written from every row of `cells`, holds)."""
    notes = []
    if orders.drawn is not None and model in cells.columns:
        models = orders.drawn
        left_out = cells.filter(~pl.col(model).is_in(models))[model].n_unique()
        if left_out:
            cells = cells.filter(pl.col(model).is_in(models))
            orders = replace(orders, models=models)
            notes.append(
                f"{len(models)} models drawn: {DRAWN_MODELS_RULE}; the figure's CSV has the rows of "
                f"{left_out:,} more models."
            )
    if orders.drawn_languages is not None and language in cells.columns:
        kept = orders.drawn_languages
        left_out = cells.filter(~pl.col(language).is_in(kept))[language].n_unique()
        if left_out:
            cells = cells.filter(pl.col(language).is_in(kept))
            orders = orders.only(kept)
            notes.append(
                f"The {len(kept)} languages drawn are those with the most answers, identified ones first; the "
                f"figure's CSV has the rows of {left_out:,} more languages."
            )
    return cells, orders, notes


def _level_axis_title(orders: Orders, n_columns: int, cell: int = CELL) -> str | None:
    """The title of a language axis with a line between the resource levels, when the axis is wide enough
    to carry it (at most half as wide again as the axis: a few languages' axis would have it run into the
    next panel)."""
    title = orders.level_axis_title()
    width = len(title or "") * CHARACTER_WIDTH * CONFIG["axis"]["titleFontSize"]
    return title if title and width <= 1.5 * n_columns * cell else None


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
