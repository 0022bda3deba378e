"""The suite's one plotting theme: font, colour schemes, the colours of cells without a value, the names
of the signals that link the charts of a report, and the two media a chart is drawn for.

Every chart is drawn twice from one Vega-Lite spec: on screen (the reports, PNG and SVG) with `CONFIG`,
and in print (a PDF sized for a page or a column of a paper, `viz/print_pdf.py`) with `PRINT_CONFIG`.
Sizes that differ between the two are in the configs, never in the specs: text drawn by a mark takes
its size from a named style (`CELL_LABEL`, `STATUS_LABEL`, `BOX_LABEL`). A faceted chart's panels are
stacked in both (`facet.columns`), so that it fits a laptop's window as it fits a page.

A colour scale says which end is good. A measure where more is better (the share of answers in the
correct language) is drawn in `SCHEMES["higher"]`, one where less is better (the share with
repetitions) in the reversed-looking `SCHEMES["lower"]`, and a quantity that is neither (a count of
questions) in `SCHEMES[None]`; the legend's title says "higher is better" or "lower is better"
(`better_title`). Every percentage scale runs over `PERCENT_DOMAIN`, whatever the data's range.

altair takes about two seconds to import, so it is imported on first use (`altair()`), which also
registers and enables the theme: importing a notebook's modules stays fast.
"""

from functools import cache
from typing import Any

from ..core.jsonschema_formats import skip_iri_grammar

# Noto Sans first; the others draw the scripts it lacks (fonts-noto-core, fonts-noto-cjk).
FONT = (
    "Noto Sans, Noto Sans Arabic, Noto Sans Hebrew, Noto Sans Devanagari, Noto Sans Ethiopic, "
    "Noto Sans CJK JP, DejaVu Sans, sans-serif"
)
# Colour-blind-safe sequential schemes by which end of the measure is good: viridis (dark to yellow)
# where higher is better, white to dark red where lower is better, white to blue for plain quantities.
SCHEMES = {"higher": "viridis", "lower": "orangered", None: "blues"}
# The end of each scheme that is dark (a cell's value is printed in white there).
DARK_END = {"higher": "low", "lower": "high", None: "high"}
# Ordered levels where one end is bad (ratings 1 to 5, no/minor/major issues): red for the bad end,
# blue for the good one, yellow between (ColorBrewer's RdYlBu, safe for colour-blind readers).
ORDINAL_SCHEME = "redyellowblue"
BETTER_WORDS = {"higher": "higher is better", "lower": "lower is better"}
# The colour domains of the suite, fixed whatever the data's range: a percentage runs from 0 to 100, a
# coefficient (Bhattacharyya's, between two distributions) from 0 to 1.
PERCENT_DOMAIN = (0, 100)
COEFFICIENT_DOMAIN = (0, 1)
MISSING_COLOUR = "#eeeeee"
# The line between the high- and the low-resource languages of a heatmap.
DIVIDER_COLOUR = "#222222"
DIVIDER_WIDTH = 1.5
# Cells that have no value to colour, and why: drawn in their own colour with a legend and a short
# label, never in the data's colour scale. Keys are the values of a heatmap's `status` column.
STATUS_STYLES = {
    "provider errors only": {"colour": "#de77ae", "label": "err", "meaning": "every answer was a provider error"},
    "language not identified": {
        "colour": "#b0b0b0",
        "label": "n/i",
        "meaning": "the language cannot be identified reliably",
    },
    "too few answers": {"colour": "#dcdcdc", "label": "few", "meaning": "fewer valid answers than a cell needs"},
    "one value only": {
        "colour": "#e8e8e8",
        "label": "=",
        "meaning": "the metric or the ratings take one value only, so their agreement is undefined",
    },
    "too few metrics": {
        "colour": "#d9cfc1",
        "label": "cov",
        "meaning": "imported metrics for too few of its answers without surface issues",
    },
}
# The statuses of the papers' printed numbers (`analyses.paper_check`): a colour each, for the bars of
# the reproduction report's chart and the badges of its claims. A difference is a warning (orange), apart
# from a difference within rounding (light blue) and from an exact match (blue); a number whose data was
# not released is grey, and one the suite could not read red. Blue and orange stay apart for colour-blind
# readers.
CLAIM_STATUS_COLOURS = {
    "exact": "#2c7bb6",
    "within rounding": "#abd9e9",
    "differs": "#f28e2b",
    "not in the release": "#bdbdbd",
    "no value": "#b2182b",
}
# The width of a character of Noto Sans, in ems (its average over digits and lower-case letters,
# a little generous): enough to estimate how wide a label or a line of a title prints.
CHARACTER_WIDTH = 0.58
# Signal names shared by the charts of a report and the page script that links them.
PICK = "calmqa_pick"
HIGHLIGHT = "calmqa_highlight"
# The explorer's chosen cell (an object of field values it sets), outlined in this colour.
CHOSEN = "calmqa_chosen"
CHOSEN_COLOUR = "#000000"
DIMMED_OPACITY = 0.25
# Named styles of the text marks, so that their size follows the medium.
CELL_LABEL = "calmqa_cell_label"
STATUS_LABEL = "calmqa_status_label"
BOX_LABEL = "calmqa_box_label"
# The smallest text of a chart on screen, in pixels: a cell's label (a reader must not zoom to read it).
SCREEN_LABEL_SIZE = 9
CONFIG: dict[str, Any] = {  # Vega-Lite's `config`
    "font": FONT,
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": False, "domain": False},
    "header": {"labelFontSize": 12, "titleFontSize": 12},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "titleLimit": 400},
    "title": {"fontSize": 14, "anchor": "start", "subtitleFontSize": 11, "subtitleColor": "#444444"},
    "range": {"heatmap": {"scheme": SCHEMES["higher"]}},
    # Panels of a facet stacked, on screen as in print: a heatmap of 23 languages fits a laptop's window
    # only with its culturally specific and agnostic panels one above the other.
    "facet": {"columns": 1, "spacing": 14},
    "style": {
        CELL_LABEL: {"fontSize": SCREEN_LABEL_SIZE},
        STATUS_LABEL: {"fontSize": SCREEN_LABEL_SIZE},
        BOX_LABEL: {"fontSize": 10, "lineHeight": 12},
    },
}

# Print: a figure is laid out for the text width of a page or for one column, in points (1/72 in; a
# Vega-Lite pixel is a PDF point). At that width, cell labels print at 6.5 pt and every other text at
# 7 pt or more (tests/viz/test_print_pdf.py reads the sizes back from the PDFs).
POINTS_PER_INCH = 72
PRINT_WIDTHS = {"page": 6.3 * POINTS_PER_INCH, "column": 3.0 * POINTS_PER_INCH}
PRINT_PADDING = 4
PRINT_CELL_LABEL_SIZE = 6.5
PRINT_TEXT_SIZE = 7.5
PRINT_CONFIG: dict[str, Any] = {
    **CONFIG,
    "padding": PRINT_PADDING,
    "axis": {**CONFIG["axis"], "labelFontSize": PRINT_TEXT_SIZE, "titleFontSize": 8, "tickSize": 3, "labelPadding": 2},
    "header": {"labelFontSize": 8, "titleFontSize": 8, "labelPadding": 3},
    "legend": {
        "labelFontSize": 7,
        "titleFontSize": 7.5,
        "orient": "bottom",
        "direction": "horizontal",
        "gradientLength": 120,
        "gradientThickness": 8,
        "symbolSize": 60,
        "titleLimit": 400,
        "labelLimit": 300,
        "columnPadding": 8,
        "rowPadding": 2,
    },
    "title": {**CONFIG["title"], "fontSize": 9, "subtitleFontSize": 7, "offset": 4},
    "facet": {"columns": 1, "spacing": 8},
    "concat": {"spacing": 8},
    "style": {
        CELL_LABEL: {"fontSize": PRINT_CELL_LABEL_SIZE},
        STATUS_LABEL: {"fontSize": PRINT_CELL_LABEL_SIZE},
        BOX_LABEL: {"fontSize": 7, "lineHeight": 8.4},
    },
}
# Screen font sizes over print ones: how much smaller than on screen a chart's marks are drawn in print
# where their text must keep its print size (the treemap's boxes, whose labels are wrapped to them).
BOX_LABEL_PRINT_SCALE = PRINT_CONFIG["style"][BOX_LABEL]["fontSize"] / CONFIG["style"][BOX_LABEL]["fontSize"]
# Where a chart records how it is laid out in print, and the name of its files (Vega-Lite ignores `usermeta`).
PRINT_META = "calmqa_print"
FIGURE_META = "calmqa_figure"


def better_title(title: str, better: str | None) -> str:
    """A legend title that says which end of the scale is good."""
    return f"{title} ({BETTER_WORDS[better]})" if better else title


def ordinal_scale(levels: list[str], best_first: bool):
    """The colour scale of ordered `levels`, the bad end warm (`ORDINAL_SCHEME`): `best_first` when the
    first level is the good one (no issues), else the last (a rating of 5)."""
    return altair().Scale(domain=list(levels), scheme=ORDINAL_SCHEME, reverse=best_first)


def print_layout(chart, size: str = "page", scale: float = 1.0):
    """`chart`, just built, with its print layout recorded: laid out for a `size` ("page" or "column") with
    every width and height of its views multiplied by `scale` (see `viz/print_pdf.py`). The chart itself is
    given the record, not a copy: altair rebuilds a layered chart to copy it, every layer deep-copied."""
    if size not in PRINT_WIDTHS:
        raise ValueError(f"print size {size!r}: expected one of {', '.join(PRINT_WIDTHS)}")
    existing = getattr(chart, "usermeta", None)
    chart.usermeta = {
        **(existing if isinstance(existing, dict) else {}),
        PRINT_META: {"size": size, "scale": round(min(scale, 1.0), 4)},
    }
    return chart


@cache
def altair():
    """The altair module, with the suite's theme registered and enabled."""
    skip_iri_grammar()
    import altair as alt

    @alt.theme.register("calmqa", enable=True)
    def calmqa_theme() -> alt.theme.ThemeConfig:
        # altair's TypedDict of the config cannot take style names held in constants (it wants literal
        # keys) nor a colour scheme as a range; Vega-Lite validates the config when a chart is rendered.
        return {"config": CONFIG}  # type: ignore[typeddict-item]

    return alt
