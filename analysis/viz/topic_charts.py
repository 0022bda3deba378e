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
) -> alt.Chart:
    """The group x group matrix of BC, in `order` on both axes, with a line before each of `dividers` on
    both (the first language of each resource level after the first); each cell's tooltip gives BC and
    Hellinger. `item` says which paper item it is, if any (`topics.similarity_item`)."""
    return heatmap(
        similarity,
        x="group_b",
        y="group_a",
        value="bc",
        title=f"Bhattacharyya coefficient between category distributions, by {group_by}"
        + (f" ({item})" if item else ""),
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
