"""The chart of the topic similarity (notebook 02): the group x group matrix of the Bhattacharyya
coefficient."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from .heatmap import heatmap
from .theme import COEFFICIENT_DOMAIN

if TYPE_CHECKING:
    import altair as alt


def similarity_heatmap(
    similarity: pl.DataFrame,
    order: list[str],
    group_by: str,
    item: str | None,
    dividers: Sequence[str] = (),
    left_out: int = 0,
) -> alt.Chart:
    """The group x group matrix of BC of the groups of `order`, in that order on both axes, with a line
    before each of `dividers` on both (the first language of each resource level after the first); each
    cell's tooltip gives BC and Hellinger. `item` says which paper item it is, if any
    (`topics.similarity_item`); `left_out`, how many more groups the figure's CSV holds (`topics.drawn_groups`)."""
    drawn = similarity.filter(pl.col("group_a").is_in(order) & pl.col("group_b").is_in(order))
    notes = (
        [
            f"The {len(order)} groups drawn are those with the most questions; the figure's CSV has the rows of "
            f"{left_out:,} more groups."
        ]
        if left_out
        else None
    )
    return heatmap(
        drawn,
        x="group_b",
        y="group_a",
        value="bc",
        title=f"Bhattacharyya coefficient between category distributions, by {group_by}"
        + (f" ({item})" if item else ""),
        subtitle=notes,
        value_title="BC",
        x_order=order,
        y_order=order,
        value_format=".2f",
        domain=COEFFICIENT_DOMAIN,
        x_dividers=list(dividers),
        y_dividers=list(dividers),
        tooltip=["group_a", "group_b", "bc", "hellinger"],
        cell=(28, 22),
    )
