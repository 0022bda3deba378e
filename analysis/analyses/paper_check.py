"""`make check-paper`: every number of the claims registry (`data/paper/claims`, read by `io/paper.py`)
set against the suite's own value of it, read from the figures CSVs that `make figures` wrote.

A claim's status compares the printed number with the suite's value at the printed precision:

- `exact`: the suite's value rounds to the printed number (within half a unit of its last digit; a
  value exactly half-way counts, whichever way the paper rounded ties);
- `within rounding`: the suite's value has digits the paper does not print and is off by at most one
  unit of the last printed digit (a number cut instead of rounded, or rounded twice);
- `differs`: further off; the registry says why;
- `not in the release`: the claim names no suite value, because the data behind it was never released.

A claim passes when its status is the one the registry expects. It fails when the status changed, or
when its value cannot be read: the figures CSV, the row its `match` selects or the value column is
missing, which `problem` names. `python -m analysis check-paper` prints the counts by status per paper
and per paper item, then every failure, and exits with status 1 when there is one.
"""

import math
import sys
from pathlib import Path

import polars as pl

from ..core import paths
from ..io import paper
from ..io.paper import PAPER_NAMES

NOT_IN_RELEASE = "not in the release"
STATUSES = ("exact", "within rounding", "differs", NOT_IN_RELEASE)
# A claim whose value could not be read has this status; it always fails.
NO_VALUE = "no value"
# Half a unit, with room for binary floating point: 0.115 may be stored as 0.11499999.
_TOLERANCE = 1e-9


_BOUNDS = {
    "<": lambda value, bound: value < bound,
    ">": lambda value, bound: value > bound,
    "≤": lambda value, bound: value <= bound + _TOLERANCE,
    "≥": lambda value, bound: value >= bound - _TOLERANCE,
}


def status(printed: str, value: float) -> str:
    """The status of the suite's `value` against the `printed` number (at the printed precision). A
    printed bound (`<1%`, `p<.001`, `>90%`) is `exact` when the value lies on its side, and `differs`
    otherwise, however close: 1.02% is not less than 1%."""
    target = paper.printed_number(printed)
    qualifier = paper.printed_qualifier(printed)
    if qualifier in _BOUNDS:
        return "exact" if _BOUNDS[qualifier](value, target) else "differs"
    unit = paper.printed_unit(printed)
    distance = abs(value - target) / unit
    if distance <= 0.5 + _TOLERANCE:
        return "exact"
    # Rounding can only explain a difference when the suite's value has digits the paper does not
    # print: a count of 28 printed as 29 differs, an average of 0.1777 printed as 0.17 does not.
    finer = abs(value / unit - round(value / unit)) > _TOLERANCE
    if distance <= 1 + _TOLERANCE and finer:
        return "within rounding"
    return "differs"


class _Figures:
    """The figures CSVs under one folder, each read once, every cell as text."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._tables: dict[str, pl.DataFrame | str | None] = {}

    def table(self, source: str) -> pl.DataFrame | str | None:
        """The figures CSV of `source`, None when there is none, or why it cannot be read."""
        if source not in self._tables:
            path = self.root / f"{source}.csv"
            try:
                self._tables[source] = pl.read_csv(path, infer_schema=False) if path.is_file() else None
            except (pl.exceptions.PolarsError, OSError) as exc:
                self._tables[source] = (
                    f"{path} cannot be read as CSV ({str(exc).splitlines()[0]}): run `make figures` again"
                )
        return self._tables[source]

    def value(self, claim: dict) -> tuple[float | None, str | None]:
        """The suite's value of a reachable claim, or None and what is missing."""
        source, column = claim["source"], claim["value_column"]
        table = self.table(source)
        if isinstance(table, str):
            return None, table
        if table is None:
            notebook = source.split("/")[0]
            return None, (
                f"{self.root / source}.csv does not exist: run `make figures` (notebook {notebook} "
                "writes it), or correct the claim's `source`"
            )
        match = paper.parse_match(claim["match"])
        unknown = [key for key in (*match, column) if key not in table.columns]
        if unknown:
            return None, (
                f"{source}.csv has no column {', '.join(map(repr, unknown))} (its columns: {', '.join(table.columns)})"
            )
        rows = table.filter(*[pl.col(key) == text for key, text in match.items()]) if match else table
        if rows.height != 1:
            selection = claim["match"] or "(no match: the whole table)"
            return None, f"{rows.height} rows of {source}.csv match {selection}; expected exactly one"
        text = rows[column][0]
        if text is None or not text.strip():
            return None, f"{source}.csv: the {column!r} of the row {claim['match']} is empty"
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            return None, f"{source}.csv: the {column!r} of the row {claim['match']} is {text!r}, not a finite number"
        return value, None


def check_registry(
    claims_folder: Path | str = paths.PAPER_CLAIMS, figures_root: Path | str = paths.FIGURES
) -> pl.DataFrame:
    """`check` of every claim of the registry in `claims_folder` (raises `InputError` when it is invalid)."""
    return check(paper.load_claims(claims_folder), figures_root)


def check(claims: pl.DataFrame, figures_root: Path | str = paths.FIGURES) -> pl.DataFrame:
    """Every claim with the suite's `value_suite`, its `status`, what stopped a value being read
    (`problem`) and whether the claim passes (`ok`: its status is the expected one)."""
    figures = _Figures(Path(figures_root))
    results = []
    for claim in claims.iter_rows(named=True):
        value, problem = None, None
        if claim["expect"] == NOT_IN_RELEASE:
            outcome = NOT_IN_RELEASE
        else:
            value, problem = figures.value(claim)
            outcome = NO_VALUE if value is None else status(claim["printed"], value)
        results.append(
            {
                "value_suite": value,
                "status": outcome,
                "problem": problem,
                "ok": problem is None and outcome == claim["expect"],
            }
        )
    schema = {"value_suite": pl.Float64, "status": pl.String, "problem": pl.String, "ok": pl.Boolean}
    return pl.concat([claims, pl.DataFrame(results, schema=schema)], how="horizontal")


def suite_text(value: float | None, decimals: int, printed: str) -> str | None:
    """The suite's value as the paper would print it (same precision, scale and percent sign); against a
    printed bound (`<.001`), with three significant digits, since rounding it to the bound's precision
    could hide on which side it lies."""
    if value is None:
        return None
    scale = paper.printed_unit(printed) * 10.0**decimals
    suffix = next((s for s in ("%", *paper.MAGNITUDES) if printed.endswith(s)), "")
    number = value / scale
    if paper.printed_qualifier(printed) in paper.INEQUALITIES:
        return f"{number:.3g}" + suffix
    text = f"{number:,.{decimals}f}" if "," in printed else f"{number:.{decimals}f}"
    return text + suffix


def _statuses(results: pl.DataFrame) -> list[str]:
    """The statuses to count: all four, and `no value` when a claim has it."""
    return [*STATUSES, *([NO_VALUE] if (results["status"] == NO_VALUE).any() else [])]


def counts(results: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Claims per status (one column each, in `STATUSES` order, then `no value` when a claim has
    none), per group of `by`, with `claims`, and `failing`: the claims whose status is not the expected
    one. Paper items sort naturally: Table 4 before Table 10."""
    statuses = _statuses(results)
    table = results.group_by(by, maintain_order=True).agg(
        pl.len().alias("claims"),
        *[(pl.col("status") == s).sum().alias(s) for s in statuses],
        (~pl.col("ok")).sum().alias("failing"),
    )
    keys = [pl.col(c) for c in by]
    if "kind" in by:
        order = {kind: position for position, kind in enumerate(paper.KINDS)}
        keys = [pl.col(c).replace_strict(order, return_dtype=pl.Int32) if c == "kind" else pl.col(c) for c in by]
    if "item" in by:
        item = pl.col("item")
        keys = [pl.col(c) for c in by if c != "item"] + [
            item.str.extract(r"^(\D*)"),
            item.str.extract(r"(\d+)").cast(pl.Int32, strict=False),
            item,
        ]
    return table.sort(keys)


def status_long(results: pl.DataFrame) -> pl.DataFrame:
    """Claims per paper and status (every status, zeros included), for the chart."""
    statuses = _statuses(results)
    grid = results.select(pl.col("paper").unique().sort()).join(
        pl.DataFrame({"status": statuses, "position": list(range(len(statuses)))}), how="cross"
    )
    n = results.group_by("paper", "status").agg(pl.len().alias("claims"))
    return (
        grid.join(n, on=["paper", "status"], how="left")
        .with_columns(
            pl.col("claims").fill_null(0).cast(pl.Int64), paper_name=pl.col("paper").replace_strict(PAPER_NAMES)
        )
        .sort("paper", "position")
    )


# What each kind of claim is, in the counts' words.
KIND_PHRASES = {
    "reproduced": "to reproduce from the data",
    "derived": "derived from other printed numbers",
    "transcribed": "printed inputs checked against their transcription",
}


def _status_phrase(status_name: str, n: int) -> str:
    if status_name == "differs":
        return f"{n:,} {'differs' if n == 1 else 'differ'}"
    if status_name == NO_VALUE:
        return f"{n:,} without a value (the figures are missing)"
    return f"{n:,} {status_name}"


def summary_line(results: pl.DataFrame, paper_key: str) -> str:
    """One paper's claims counted apart by kind, each kind by status: `CaLMQA, 539 printed numbers: 515
    computed from the release (437 exact, ...); 24 printed inputs checked against their transcription (24
    exact)`."""
    rows = results.filter(pl.col("paper") == paper_key)
    parts = []
    for kind in paper.KINDS:
        of_kind = rows.filter(pl.col("kind") == kind)
        if of_kind.is_empty():
            continue
        statuses = [
            _status_phrase(s, n) for s in (*STATUSES, NO_VALUE) if (n := of_kind.filter(pl.col("status") == s).height)
        ]
        parts.append(f"{of_kind.height:,} {KIND_PHRASES[kind]} ({', '.join(statuses)})")
    return f"{PAPER_NAMES[paper_key]}, {rows.height:,} printed numbers: " + "; ".join(parts)


def expected_results(claims: pl.DataFrame) -> pl.DataFrame:
    """The registry as `make check-paper` finds it when it passes: every claim with the status it expects.
    The README's counts are these (`readme_counts`), so that they need no figures; `make check-paper`
    fails whenever a status is not the expected one, and then the counts no longer hold."""
    return claims.with_columns(status=pl.col("expect"), ok=pl.lit(True))


def readme_counts(results: pl.DataFrame) -> str:
    """The counts of the README: a Markdown table of the claims by paper, kind and status (one column
    per status)."""
    table = counts(results, ["paper", "kind"]).drop("claims", "failing")
    header = ["paper", "kind", *table.columns[2:]]
    rows = [[PAPER_NAMES[row[0]], row[1], *(f"{v:,}" for v in row[2:])] for row in table.select(header).iter_rows()]
    return "\n".join(
        [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows),
        ]
    )


def summary_markdown(results: pl.DataFrame) -> str:
    """The reproduction report's summary: one line per paper, then whether every claim is as expected."""
    lines = [
        f"**{summary_line(results, key)}.**" for key in PAPER_NAMES if results.filter(pl.col("paper") == key).height
    ]
    failing = results.filter(~pl.col("ok")).height
    if failing:
        lines.append(
            f"**{failing:,} of the {results.height:,} claims do not have the status the registry expects**: "
            "they are listed first below, with what is missing or what changed (`make check-paper` fails)."
        )
    else:
        lines.append(f"Every one of the {results.height:,} claims has the status the registry expects.")
    return "\n\n".join(lines)


def report_table(results: pl.DataFrame, pinned: bool = True) -> pl.DataFrame:
    """Every claim, readable: failures first, then differences with their reasons, then the rest;
    `suite` is the suite's value as the paper would print it. The reasons of the numbers computed from
    the release (kind `reproduced`) describe the pinned release: without `pinned` (the figures are of
    another version) they are left out, those not in the release excepted."""
    order = {NO_VALUE: 0, "differs": 1, "within rounding": 2, NOT_IN_RELEASE: 3, "exact": 4}
    shown = pl.col("reason") != ""
    if not pinned:
        shown = shown & ((pl.col("kind") != "reproduced") | (pl.col("expect") == NOT_IN_RELEASE))
    return (
        results.with_columns(
            suite=pl.struct("value_suite", "decimals", "printed").map_elements(
                lambda r: suite_text(r["value_suite"], r["decimals"], r["printed"]), return_dtype=pl.String
            ),
            note=pl.coalesce("problem", pl.when(shown).then("reason")),
        )
        .with_columns(
            rank=pl.when(~pl.col("ok"))
            .then(-1)
            .otherwise(pl.col("status").replace_strict(order, return_dtype=pl.Int32))
        )
        .sort("rank", "paper", "file", maintain_order=True)
        .select(
            "paper",
            "item",
            "row",
            "column",
            "printed",
            "suite",
            "status",
            "expect",
            "kind",
            "ok",
            "note",
            "claim_id",
            "source",
            "value_suite",
        )
    )


def _print_counts(table: pl.DataFrame, keys: list[str]) -> None:
    columns = [c for c in table.columns if c not in keys]
    header = [*keys, *columns]
    rows = [[str(v) for v in row] for row in table.select(header).iter_rows()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def print_report(results: pl.DataFrame) -> bool:
    """`make check-paper`'s output: the counts by status per paper and per paper item, then every failure
    (on stderr). True when every claim has its expected status."""
    for paper_key in PAPER_NAMES:
        if results.filter(pl.col("paper") == paper_key).height:
            print(summary_line(results, paper_key))
    print("\nBy paper:")
    _print_counts(counts(results, ["paper"]), ["paper"])
    print("\nBy paper and kind (reproduced: computed from the release; derived: from other printed numbers;")
    print("transcribed: a printed input checked against its transcription):")
    _print_counts(counts(results, ["paper", "kind"]), ["paper", "kind"])
    print("\nBy paper item:")
    _print_counts(counts(results, ["paper", "item"]), ["paper", "item"])
    failing = results.filter(~pl.col("ok"))
    if failing.is_empty():
        print(f"\nEvery one of the {results.height:,} claims has its expected status.")
        return True
    noun = "claim does not have its" if failing.height == 1 else "claims do not have their"
    print(f"\n{failing.height:,} {noun} expected status:", file=sys.stderr)
    for claim in failing.iter_rows(named=True):
        suite = suite_text(claim["value_suite"], claim["decimals"], claim["printed"])
        what = claim["problem"] or f"the suite has {suite}: {claim['status']}"
        print(
            f"  {claim['file']} {claim['claim_id']}: printed {claim['printed']}, expected {claim['expect']}; {what}",
            file=sys.stderr,
        )
    return False
