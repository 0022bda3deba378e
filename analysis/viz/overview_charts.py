"""The charts of the dataset overview (notebook 01): questions by category and language, and the treemap
of the categories (the paper's Figure 1)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import polars as pl

from ..analyses.dimensions import Orders
from ..core.scalars import number
from .charts import _level_axis_title, drawn
from .heatmap import heatmap
from .theme import BOX_LABEL, BOX_LABEL_PRINT_SCALE, CONFIG, PERCENT_DOMAIN, SCHEMES, altair, print_layout

if TYPE_CHECKING:
    import altair as alt


def category_heatmap(categories: pl.DataFrame, orders: Orders, title: str) -> alt.Chart:
    """Questions by category and language (languages by resource level; the paper's Figure 5 for its
    culturally specific questions); the languages `charts.drawn` keeps."""
    categories, orders, notes = drawn(categories, orders)
    return heatmap(
        categories,
        x="language",
        y="category",
        value="n_questions",
        title=title,
        subtitle=notes or None,
        value_title="questions",
        x_order=orders.languages,
        x_dividers=orders.dividers(by_label=False),
        x_title=_level_axis_title(orders, categories["language"].n_unique()),
        tooltip=["category", "language", "resource_level", "n_questions", "pct_of_language"],
    )


def category_share_heatmap(categories: pl.DataFrame, orders: Orders, title: str) -> alt.Chart:
    """`category_heatmap` as shares: each category's % of a language's questions, so that languages with
    many and few questions compare."""
    categories, orders, notes = drawn(categories, orders)
    return heatmap(
        categories,
        x="language",
        y="category",
        value="pct_of_language",
        title=title,
        subtitle=notes or None,
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
        color=alt.ColorValue("black", condition={"test": f"datum.n_questions > {middle}", "value": "white"}),
    )
    chart = (rects + labels).properties(title=title, width=TREEMAP_WIDTH, height=TREEMAP_HEIGHT)
    return print_layout(chart, "page", BOX_LABEL_PRINT_SCALE)
