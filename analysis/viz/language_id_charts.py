"""The chart of the language identification (notebook 10): each engine's accuracy by language."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from .heatmap import heatmap
from .theme import PERCENT_DOMAIN

if TYPE_CHECKING:
    import altair as alt


def engine_accuracy_heatmap(cells: pl.DataFrame, languages: list[str], engines: list[str]) -> alt.Chart:
    """Notebook 10: the % of held-out release texts each engine identified, by language: engines as rows,
    languages as columns, as the model x language heatmaps (a page wide and a few rows tall in print)."""
    return heatmap(
        cells,
        x="language_label",
        y="engine",
        value="pct",
        title="% of held-out release texts identified, by engine",
        value_title="% identified",
        better="higher",
        domain=PERCENT_DOMAIN,
        value_format=".0f",
        x_order=languages,
        y_order=engines,
        tooltip=["language", "engine", "n_texts", "pct"],
    )
