"""The papers' printed numbers beside the suite's own, for a notebook to show next to its tables.

The printed numbers come from the claims registry (`data/paper/claims/`, read by `analysis.io.paper`); each
claim names the figures CSV that holds the suite's value (`source`), its row (`match`) and column
(`value_column`). A notebook passes the in-memory tables it writes to those CSVs, so the values shown are
the ones it writes. This only shows; `make check-paper` is what judges every claim.
"""

import polars as pl

from ..io import paper as paper_claims

# Notebooks load the registry through this module, to show its numbers beside their tables.
from ..io.paper import load_claims  # noqa: F401

COLUMNS = ("item", "row", "column", "paper", "suite", "expect", "reason")


def beside_paper(
    claims: pl.DataFrame, item: str, tables: dict[str, pl.DataFrame], paper: str = "calmqa"
) -> pl.DataFrame:
    """Each printed number of one paper item beside the suite's value, rounded to the paper's precision.

    `tables` maps a source CSV's stem (e.g. `table13_identification_accuracy`) to the table written to it;
    claims whose source is not among them are left out, and so are those `not in the release`, which
    have no source. `expect` and `reason` are the registry's."""
    rows = []
    selected = claims.filter((pl.col("paper") == paper) & (pl.col("item") == item))
    for claim in selected.iter_rows(named=True):
        stem = claim["source"].rsplit("/", 1)[-1]
        if stem not in tables:
            continue
        table, value = tables[stem], None
        for column, wanted in paper_claims.parse_match(claim["match"]).items():
            table = table.filter(pl.col(column).cast(pl.String) == wanted)
        if table.height == 1 and table[claim["value_column"]][0] is not None:
            value = f"{table[claim['value_column']][0]:.{claim['decimals']}f}"
        rows.append(
            {
                "item": item,
                "row": claim["row"],
                "column": claim["column"],
                "paper": claim["printed"],
                "suite": value,
                "expect": claim["expect"],
                "reason": claim["reason"],
            }
        )
    return pl.DataFrame(rows, schema={c: pl.String for c in COLUMNS})
