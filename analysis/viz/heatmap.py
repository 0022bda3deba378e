"""The heatmap of the suite: a value by row and column, the value printed in each cell, cells without a
value drawn in their status's colour, groups of columns (or rows) set apart by a line, and (in a report)
linked to the other charts of the page.

Heatmaps are linked within a report: clicking a cell picks its row and column values (a point
selection named `theme.PICK`), and the report's page script copies them into the variable
`theme.HIGHLIGHT` of every chart on the page, which dims the cells of other rows and columns (see
`reporting/notebook.py`). Each heatmap records its print layout (`theme.print_layout`): cells as
small as the page's width needs, but never smaller than their printed labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from ..core.scalars import number
from .theme import (
    CELL_LABEL,
    CHARACTER_WIDTH,
    CHOSEN,
    CHOSEN_COLOUR,
    DARK_END,
    DIMMED_OPACITY,
    DIVIDER_COLOUR,
    DIVIDER_WIDTH,
    HIGHLIGHT,
    MISSING_COLOUR,
    PICK,
    PRINT_CELL_LABEL_SIZE,
    PRINT_PADDING,
    PRINT_TEXT_SIZE,
    PRINT_WIDTHS,
    SCHEMES,
    STATUS_LABEL,
    STATUS_STYLES,
    altair,
    better_title,
    print_layout,
)

if TYPE_CHECKING:
    import altair as alt

# Columns that go into a heatmap's default tooltip when the table has them (a language verdict's engine,
# answers too short to judge and the engine's measured accuracy at the answers' median length among them).
TOOLTIP_EXTRAS = (
    "n_answers",
    "n",
    "ci_low",
    "ci_high",
    "language_engine",
    "n_language_abstained",
    "pct_accuracy_at_median",
    "accuracy_note",
)
# A tooltip names a column as a reader would (any other column by its own name).
TOOLTIP_TITLES = {
    "model": "Model",
    "model_name": "Model",
    "language": "Language",
    "language_label": "Language",
    "question_type": "Question type",
    "resource_level": "Resource level",
    "category": "Category",
    "collection": "Collection",
    "n_answers": "Answers",
    "n_valid": "Answers with a value",
    "n": "Count",
    "status": "No value shown",
    "language_engine": "Language judged by",
    "n_language_abstained": "Too short to judge",
    "pct_accuracy_at_median": "Engine's accuracy at the median length (%)",
    "accuracy_note": "Accuracy note",
}
# A table with a `tier` column (`analyses.tiers`) has its top tier marked in a corner of the cell, these
# columns in every tooltip, and this line under the title.
TIER_TOOLTIP = ("tier", "p_vs_best", "p_adjusted", "min_detectable_difference")
TIER_TITLES = {
    "tier": "tier (1: no test tells it from the best)",
    "p_vs_best": "p vs the best (paired)",
    "p_adjusted": "p vs the best, Holm-adjusted",
    "min_detectable_difference": "smallest difference its answers detect",
}
TIER_NOTE = "Top right corner mark: the top tier, models no paired test (Holm, 5%) separates from the best there."
# The mark: a right triangle filling the cell's top right corner (Vega draws a custom shape scaled by
# half the square root of its size, so its legs are 4.5 px), clear of a centred label of three digits
# at the cells' screen and print sizes.
TIER_MARK_SHAPE = "M0,0L-1,0L0,1Z"
TIER_MARK_SIZE = 81
# A caveat on a cell (`heatmap`'s `caveat`): the same triangle in the opposite corner, the bottom left, so
# that the cell's label keeps its width (a mark after the value widened every label, and the print
# heatmap of 23 languages no longer fitted its page).
CAVEAT_MARK_SHAPE = "M0,0L1,0L0,-1Z"
# A screen cell, in pixels.
CELL = 20


def heatmap(
    table: pl.DataFrame,
    x: str,
    y: str,
    value: str,
    *,
    title: str,
    subtitle: str | list[str] | None = None,
    value_title: str | None = None,
    x_order: list[str] | None = None,
    y_order: list[str] | None = None,
    tooltip: list[str] | None = None,
    value_format: str = "d",
    column: str | None = None,
    column_order: list[str] | None = None,
    status: str | None = None,
    linked: bool = True,
    better: str | None = None,
    domain: tuple[float, float] | None = None,
    x_dividers: Sequence[str] = (),
    y_dividers: Sequence[str] = (),
    x_title: str | None = None,
    cell: tuple[int, int] = (CELL, CELL),
    print_size: str = "page",
    pick_fields: Sequence[str] | None = None,
    outline_chosen: bool = False,
    caveat: str | None = None,
) -> alt.Chart:
    """A heatmap of `value` by `x` and `y` with the value printed in each cell.

    The colour scale is `theme.SCHEMES[better]` ("higher", "lower" or None: which end of the value is
    good, which the legend's title says) over `domain` (fixed, e.g. `theme.PERCENT_DOMAIN`) or the
    data's range. Cells whose value is null are drawn grey and left without a number. `column` facets
    the heatmap in `column_order` (stacked, on screen as in print). A line is drawn before each
    column of `x_dividers` and above each row of `y_dividers` (e.g. the first low-resource language);
    `x_title` may say what the line divides. Cells with
    a `status` (a column whose values are keys of `STATUS_STYLES`) are drawn in that status's colour
    with its short label and a legend, outside the value's colour scale. The tooltip shows `tooltip`
    (by default the row, the column, the value and whichever of `TOOLTIP_EXTRAS` the table has), with
    the value and its confidence bounds in `value_format`. With `linked`, a click picks the cell's row
    and column values for the report's highlighting (`pick_fields`, when given, are the fields a click
    picks instead: the explorer adds the facet's). With `outline_chosen`, the cells that match the
    variable `theme.CHOSEN` (an object of field values, set from outside: the explorer's chosen cell)
    are outlined. `cell` is a cell's screen size (width, height); in print the heatmap fits
    `print_size` ("page" or "column"). `caveat`: a boolean column: a cell whose column is true gets a
    triangle in its bottom left corner (`CAVEAT_MARK_SHAPE`), which the chart's subtitle names.
    """
    alt = altair()
    value_title = value_title or value
    base = alt.Chart(table)
    x_enc = alt.X(f"{x}:N", sort=x_order, title=x_title, axis=alt.Axis(labelAngle=-45))
    y_enc = alt.Y(f"{y}:N", sort=y_order, title=None, axis=alt.Axis(labelLimit=320))
    tooltip_columns = tooltip or [y, x, value, *(c for c in TOOLTIP_EXTRAS if c in table.columns)]
    if status is not None and status not in tooltip_columns:
        tooltip_columns = [*tooltip_columns, status]
    tiered = "tier" in table.columns and table["tier"].is_not_null().any()
    if tiered:
        tooltip_columns = [
            *tooltip_columns,
            *(c for c in TIER_TOOLTIP if c in table.columns and c not in tooltip_columns),
        ]
        lines = [subtitle] if isinstance(subtitle, str) else list(subtitle or [])
        subtitle = [*lines, TIER_NOTE]
    if status is not None:
        unknown = set(table[status].drop_nulls()) - set(STATUS_STYLES)
        if unknown:
            raise ValueError(f"heatmap {title!r}: statuses {sorted(unknown)} have no style in theme.STATUS_STYLES")
        has_status = f"isValid(datum[{json.dumps(status)}])"
        base_values = base.transform_filter(f"!({has_status})")
        base_status = base.transform_filter(has_status)
    else:
        base_values = base
    scale = alt.Scale(scheme=SCHEMES[better], **({"domain": list(domain)} if domain else {}))
    # Conditions are given as typed channel values (`alt.Color(..., condition=...)`, `_white_where`), not as
    # `alt.condition`'s dicts: altair finds a dict's class by validating it against each candidate class, which
    # took most of the time of a heatmap's construction.
    cells = base_values.mark_rect().encode(
        x=x_enc,
        y=y_enc,
        color=alt.Color(
            f"{value}:Q",
            title=better_title(value_title, better),
            scale=scale,
            condition={"test": f"datum[{json.dumps(value)}] === null", "value": MISSING_COLOUR},
        ),
        # A cell with a value has no reason for having none: its tooltip leaves the status out.
        tooltip=[_tooltip(c, value, value_title, value_format) for c in tooltip_columns if c != status],
    )
    # A cell without a value is grey and has no label (Vega would print "null").
    labelled = base_values.transform_filter(f"isValid(datum[{json.dumps(value)}])")
    labels = labelled.mark_text(style=CELL_LABEL).encode(
        x=x_enc,
        y=y_enc,
        text=alt.Text(f"{value}:Q", format=value_format),
        color=_white_where(_on_dark(value, better, domain or _range(table[value]))),
    )
    layers = [cells, labels]
    if tiered:
        layers.append(_tier_marks(base_values, x, y, x_order, y_order, value, better, domain or _range(table[value])))
    if caveat is not None and table[caveat].any():
        layers.append(
            _corner_marks(
                labelled.transform_filter(f"datum[{json.dumps(caveat)}] === true"),
                (x, x_order, 0),
                (y, y_order, 1),
                CAVEAT_MARK_SHAPE,
                _on_dark(value, better, domain or _range(table[value])),
            )
        )
    shown = [s for s in STATUS_STYLES if status is not None and s in set(table[status])]
    if shown:
        # `fill`, not `color`: a scale and a legend of their own beside the value's.
        status_colour = alt.Fill(
            f"{status}:N",
            title="no value shown",
            scale=alt.Scale(domain=shown, range=[STATUS_STYLES[s]["colour"] for s in shown]),
        )
        status_cells = base_status.mark_rect().encode(
            x=x_enc,
            y=y_enc,
            fill=status_colour,
            tooltip=[_tooltip(c, value, value_title, value_format) for c in tooltip_columns],
        )
        short = {s: STATUS_STYLES[s]["label"] for s in shown}
        status_labels = (
            base_status.transform_calculate(
                status_label=f"{json.dumps(short)}[datum[{json.dumps(status)}]]",
            )
            .mark_text(style=STATUS_LABEL, color="black")
            .encode(x=x_enc, y=y_enc, text="status_label:N")
        )
        layers += [status_cells, status_labels]
    if linked:
        highlighted = (
            f"length({HIGHLIGHT}) == 0 || indexof({HIGHLIGHT}, toString(datum[{json.dumps(x)}])) >= 0"
            f" || indexof({HIGHLIGHT}, toString(datum[{json.dumps(y)}])) >= 0"
        )
        opacity = alt.OpacityValue(DIMMED_OPACITY, condition={"test": highlighted, "value": 1.0})
        pick = alt.selection_point(
            name=PICK, fields=list(pick_fields or [x, y]), on="click", clear="dblclick", toggle=False
        )
        layers = [
            layers[0].encode(opacity=opacity).add_params(pick),
            *(layer.encode(opacity=opacity) for layer in layers[1:]),
        ]
    for field, dividers, channel, order in ((x, x_dividers, "x", x_order), (y, y_dividers, "y", y_order)):
        layers += [_divider(base, field, divider, channel, order) for divider in dividers]
    if outline_chosen:
        layers.append(_outline(base, [x, y, *([column] if column else [])], x_enc, y_enc))
    # The chart is built in one call with its properties, not by `properties` and `add_params`: each of those
    # rebuilds a layered chart, every layer deep-copied.
    variables = [
        *([alt.param(name=HIGHLIGHT, value=[]).param] if linked else []),
        *([alt.param(name=CHOSEN, value={}).param] if outline_chosen else []),
    ]
    top_level = {
        "title": alt.TitleParams(title, subtitle=subtitle) if subtitle else title,
        **({"params": variables} if variables else {}),
    }
    view_size = {"width": alt.Step(cell[0]), "height": alt.Step(cell[1])}
    if column is None:
        chart = alt.layer(*layers, **view_size, **top_level)
    else:
        chart = alt.layer(*layers, **view_size).facet(
            facet=alt.Facet(f"{column}:N", title=None, sort=column_order), **top_level
        )
    widest_label = max([_label_chars(table[value], value_format), *([3] if status is not None else [])])
    return print_layout(chart, print_size, _print_scale(table, x, y, column, cell[0], print_size, widest_label))


def _tier_marks(
    base: alt.Chart,
    x: str,
    y: str,
    x_order: list[str] | None,
    y_order: list[str] | None,
    value: str,
    better: str | None,
    domain: tuple[float, float],
) -> alt.Chart:
    """A small triangle in the top right corner of each cell of the top tier (`tier` 1)."""
    return _corner_marks(
        base.transform_filter(f"datum.tier === 1 && isValid(datum[{json.dumps(value)}])"),
        (x, x_order, 1),
        (y, y_order, 0),
        TIER_MARK_SHAPE,
        _on_dark(value, better, domain),
    )


def _corner_marks(
    cells: alt.Chart,
    x: tuple[str, list[str] | None, int],
    y: tuple[str, list[str] | None, int],
    shape: str,
    on_dark: str,
) -> alt.Chart:
    """A `shape` (`TIER_MARK_SHAPE`, `CAVEAT_MARK_SHAPE`) in a corner of each of `cells`, white where
    `on_dark` holds and black elsewhere; its corner placed on the cell's (the band positions of `x` and `y`:
    field, order, 0 or 1), so that it stays in the corner at any cell size."""
    alt = altair()
    return cells.mark_point(shape=shape, filled=True, size=TIER_MARK_SIZE, opacity=1, strokeWidth=0).encode(
        x=alt.X(f"{x[0]}:N", sort=x[1], bandPosition=x[2]),
        y=alt.Y(f"{y[0]}:N", sort=y[1], bandPosition=y[2]),
        color=_white_where(on_dark),
    )


def _white_where(test: str) -> alt.ColorValue:
    """A mark's colour: white where the Vega expression `test` holds (a dark cell), black elsewhere."""
    return altair().ColorValue("black", condition={"test": test, "value": "white"})


def _outline(base: alt.Chart, fields: list[str], x_enc, y_enc) -> alt.Chart:
    """The cells whose `fields` equal those the variable `CHOSEN` holds (an unset field matches any
    value), outlined; none while it holds none."""
    chosen = [f"{CHOSEN}[{json.dumps(f)}]" for f in fields]
    any_set = " || ".join(f"isValid({c})" for c in chosen)
    matches = " && ".join(f"(!isValid({c}) || datum[{json.dumps(f)}] === {c})" for f, c in zip(fields, chosen))
    return (
        base.transform_filter(f"({any_set}) && {matches}")
        .mark_rect(fill=None, stroke=CHOSEN_COLOUR, strokeWidth=2.5)
        .encode(x=x_enc, y=y_enc)
    )


def _divider(base: alt.Chart, field: str, before: str, channel: str, order: list[str] | None) -> alt.Chart:
    """A line along the start of the band of `before` on `channel`: between two groups of values."""
    alt = altair()
    position = {"x": alt.X, "y": alt.Y}[channel](f"{field}:N", sort=order, bandPosition=0)
    return (
        base.transform_filter(f"datum[{json.dumps(field)}] === {json.dumps(before)}")
        .transform_aggregate(groupby=[field])
        .mark_rule(color=DIVIDER_COLOUR, strokeWidth=DIVIDER_WIDTH)
        .encode(**{channel: position})
    )


def _print_scale(
    table: pl.DataFrame, x: str, y: str, column: str | None, cell_width: int, size: str, widest_label: float
) -> float:
    """How much smaller than on screen the cells are drawn in print: as wide as the `size`'s width
    allows beside the row labels, for the most columns any panel has, but wide enough for the widest
    cell label (a heatmap with too many columns for the width then prints wider than it, and the print
    test says so, rather than its labels spilling over their cells)."""
    n_columns = (
        number(table.group_by(column).agg(pl.col(x).n_unique())[x].max()) if column else table[x].n_unique()
    ) or 1
    longest_row_label = max((len(str(v)) for v in table[y].unique().to_list()), default=1)
    row_labels = longest_row_label * CHARACTER_WIDTH * PRINT_TEXT_SIZE + 10
    room = PRINT_WIDTHS[size] - 2 * PRINT_PADDING - row_labels - 4
    label_room = widest_label * CHARACTER_WIDTH * PRINT_CELL_LABEL_SIZE + 3
    return max(room / n_columns, label_room) / cell_width


def _label_chars(values: pl.Series, value_format: str) -> float:
    """How many characters wide the widest cell label is: the integer digits of the largest magnitude, a
    sign, and the decimals and suffix of the d3 format (`.0f`, `.2f`, `d`, `.0%`...), the decimal point
    counted as half a character (it is about half a digit wide); for significant digits (`.3g`), the
    largest magnitude as the format prints it."""
    finite = values.cast(pl.Float64).drop_nulls().drop_nans().abs()
    largest = number(finite.max()) if finite.len() else 0.0
    negative = int(bool(values.cast(pl.Float64).drop_nulls().lt(0).any()))
    if value_format.endswith("g"):  # significant digits (`.3g`: 1.70e+308), d3 keeping the trailing zeros
        return negative + len(f"{largest:{value_format}}") + 1
    percent = value_format.endswith("%")
    digits = len(f"{largest * (100 if percent else 1):.0f}")
    decimals = int(value_format.split(".")[1].rstrip("f%de")) if "." in value_format else 0
    return negative + digits + (decimals + 0.5 if decimals else 0) + int(percent)


def _range(values: pl.Series) -> tuple[float, float]:
    values = values.drop_nulls()
    if values.is_empty():
        return 0.0, 1.0
    return number(values.min()), number(values.max())


def _on_dark(value: str, better: str | None, domain: tuple[float, float]) -> str:
    """Vega expression: the cell's colour is dark, so its label is printed in white."""
    low, high = domain
    field = f"datum[{json.dumps(value)}]"
    if DARK_END[better] == "low":
        return f"{field} < {low + 0.5 * (high - low)}"
    return f"{field} > {low + 0.6 * (high - low)}"


def _tooltip(column: str, value: str, value_title: str, value_format: str) -> alt.Tooltip:
    alt = altair()
    if column == value:
        return alt.Tooltip(column, title=value_title, format=value_format)
    if column in TIER_TITLES:
        if column == "tier":
            return alt.Tooltip(column, title=TIER_TITLES[column])
        return alt.Tooltip(column, title=TIER_TITLES[column], format=".3g")
    if column in ("ci_low", "ci_high"):
        return alt.Tooltip(column, title=f"95% CI {'low' if column == 'ci_low' else 'high'}", format=value_format)
    return alt.Tooltip(column, title=TOOLTIP_TITLES.get(column, column))
