"""The papers' printed numbers beside the suite's own, for a notebook to show next to the tables it writes.

The printed numbers come from the claims registry (`data/paper/claims/`, read by `analysis.io.paper`); each
claim names the figures CSV that holds the suite's value (`source`), its row (`match`) and column
(`value_column`). A notebook passes the in-memory tables it writes to those CSVs, so the values shown are
the ones it writes, and every claim whose CSV it writes is shown, with its status as `make check-paper`
computes it (`paper_check.status`). Claims `not in the release` have no source and no suite value: report
08 lists them.
"""

import polars as pl

from ..io import paper as paper_claims

# Notebooks load the registry through this module, to show its numbers beside their tables.
from ..io.paper import load_claims  # noqa: F401
from . import paper_check
from .release_version import Release

COLUMNS = ("item", "row", "column", "paper", "suite", "status", "note")


def _value(table: pl.DataFrame, claim: dict) -> float | None:
    for column, wanted in paper_claims.parse_match(claim["match"]).items():
        if column not in table.columns:
            return None
        table = table.filter(pl.col(column).cast(pl.String) == wanted)
    column = claim["value_column"]
    if table.height != 1 or column not in table.columns or table[column][0] is None:
        return None
    return float(table[column][0])


def beside(claims: pl.DataFrame, tables: dict[str, pl.DataFrame], version: Release) -> pl.DataFrame:
    """Every printed number whose suite value is in one of `tables` (the stem of the CSV it is written to,
    e.g. `table13_identification_accuracy` -> the table), beside that value as the paper would print it,
    with its status; those that are not exact first. `note` is the registry's reason, and says what the
    registry expects when the status is not that. The reason of a number computed from the release
    (kind `reproduced`) describes the pinned release: it is left out when `version` is another."""
    rows = []
    reachable = claims.filter(pl.col("source") != "")
    for claim in reachable.iter_rows(named=True):
        stem = claim["source"].rsplit("/", 1)[-1]
        if stem not in tables:
            continue
        value = _value(tables[stem], claim)
        if value is None:
            status, note = (
                paper_check.NO_VALUE,
                f"the row {claim['match'] or '(whole table)'} has no {claim['value_column']}",
            )
        else:
            status = paper_check.status(claim["printed"], value)
            reason = claim["reason"] if version.pinned or claim["kind"] != "reproduced" else ""
            note = (
                reason
                if status == claim["expect"]
                else f"the registry expects {claim['expect']}" + (f": {reason}" if reason else "")
            )
        rows.append(
            {
                "item": claim["item"],
                "row": claim["row"],
                "column": claim["column"],
                "paper": claim["printed"],
                "suite": paper_check.suite_text(value, claim["decimals"], claim["printed"]),
                "status": status,
                "note": note or None,
            }
        )
    table = pl.DataFrame(rows, schema=dict.fromkeys(COLUMNS, pl.String))
    return table.sort(pl.col("status") == "exact", maintain_order=True)


def counts_phrase(table: pl.DataFrame) -> str:
    """`164 printed numbers: 160 exact, 4 differ`: what a table of `beside` holds, by status."""
    parts = []
    for status_name in (*paper_check.STATUSES, paper_check.NO_VALUE):
        n = table.filter(pl.col("status") == status_name).height
        if n:
            parts.append(f"{n:,} {'differ' if status_name == 'differs' and n > 1 else status_name}")
    noun = "printed number" if table.height == 1 else "printed numbers"
    return f"{table.height:,} {noun}: {', '.join(parts)}"
