"""The chart of the paper reproduction (notebook 08): the papers' printed numbers by status."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from .theme import CLAIM_STATUS_COLOURS, altair, print_layout

if TYPE_CHECKING:
    import altair as alt


def claims_status_chart(long: pl.DataFrame) -> alt.Chart:
    """One bar per paper, split by status: how much of each paper the suite reproduces."""
    alt = altair()
    statuses = long.sort("position")["status"].unique(maintain_order=True).to_list()
    chart = (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X("claims:Q", title="printed numbers", stack="zero"),
            y=alt.Y("paper_name:N", title=None),
            color=alt.Color(
                "status:N",
                sort=statuses,
                title="status",
                scale=alt.Scale(domain=statuses, range=[CLAIM_STATUS_COLOURS.get(s, "#777777") for s in statuses]),
            ),
            order=alt.Order("position:Q"),
            tooltip=[alt.Tooltip("paper_name", title="paper"), "status", "claims"],
        )
        .properties(title="The papers' printed numbers by status of their reproduction", width=520, height=90)
    )
    return print_layout(chart, "page", 0.72)
