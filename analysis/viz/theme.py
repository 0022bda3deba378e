"""The suite's one plotting theme: font, colour scheme, the colours of cells without a share, and the
names of the signals that link the charts of a report.

altair takes about two seconds to import, so it is imported on first use (`altair()`), which also
registers and enables the theme: importing a notebook's modules stays fast.
"""

from functools import cache

from ..core.jsonschema_formats import skip_iri_grammar

FONT = "Noto Sans, DejaVu Sans, sans-serif"
# A colour-blind-safe sequential scheme for every heatmap of the suite.
SEQUENTIAL_SCHEME = "viridis"
MISSING_COLOUR = "#eeeeee"
# Cells that have no share to colour, and why: drawn in their own colour (hatched in print) with a
# legend and a short label, never in the data's colour scale. Keys are the values of a heatmap's
# `status` column.
STATUS_STYLES = {
    "provider errors only": {"colour": "#d6604d", "label": "err", "hatch": "xxx",
                             "meaning": "every answer was a provider error"},
    "language not identified": {"colour": "#b0b0b0", "label": "n/i", "hatch": "///",
                                "meaning": "the language cannot be identified reliably"},
}
# Signal names shared by the charts of a report and the page script that links them.
PICK = "calmqa_pick"
HIGHLIGHT = "calmqa_highlight"
DIMMED_OPACITY = 0.25
CONFIG = {
    "font": FONT,
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "grid": False, "domain": False},
    "header": {"labelFontSize": 12, "titleFontSize": 12},
    "legend": {"labelFontSize": 11, "titleFontSize": 11},
    "title": {"fontSize": 14, "anchor": "start"},
    "range": {"heatmap": {"scheme": SEQUENTIAL_SCHEME}},
}


@cache
def altair():
    """The altair module, with the suite's theme registered and enabled."""
    skip_iri_grammar()
    import altair as alt

    @alt.theme.register("calmqa", enable=True)
    def calmqa_theme() -> alt.theme.ThemeConfig:
        return {"config": CONFIG}

    return alt
