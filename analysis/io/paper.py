"""The numbers the CaLMQA and NativQA papers print, transcribed into `data/paper/claims/*.csv`, and
their figures and tables, in `data/paper/items.csv`.

One row per printed number (a claim): where it is printed, its text exactly as printed, and where
the suite's own value of it is written (a figures CSV, a filter on its rows and a column). One row per
figure or table (an item): its anchor in the paper's arXiv HTML, and, when the release cannot reach
it, why. The formats are documented in `data/paper/README.md`; `load_claims` and `load_items` validate
every row and raise one `InputError` naming the file, line and field of each problem.
"""

import re
from pathlib import Path

import polars as pl

from ..core import paths
from ..core.errors import Problems
from . import records

COLUMNS = (
    "claim_id",
    "paper",
    "item",
    "row",
    "column",
    "printed",
    "decimals",
    "kind",
    "source",
    "match",
    "value_column",
    "expect",
    "reason",
)
PAPERS = ("calmqa", "nativqa")
PAPER_NAMES = {"calmqa": "CaLMQA", "nativqa": "NativQA"}
EXPECTATIONS = ("exact", "within rounding", "differs", "not in the release")
# How the suite's value of a claim is obtained: computed from the release (`reproduced`), computed from
# other numbers the paper prints (`derived`: an average or total of a printed table, a share of printed
# counts, a count of listed names), or a printed input read back from its transcription (`transcribed`:
# a cell of a NativQA table in data/nativqa, a speaker count of CaLMQA's Table 10 in its languages.csv).
KINDS = ("reproduced", "derived", "transcribed")
# The qualifiers that make a printed number a bound: the suite's value must lie on its side.
INEQUALITIES = ("<", ">", "≤", "≥")
# The printed text: a number with an optional qualifier (`∼64k`, `>90%`, `<.001`), sign, thousands
# separators, and a percent sign or a magnitude suffix (`64k`, `154K`, `720M`, `1.38B`). A number below
# one may be printed without its leading zero (`.001`).
# (Matched whole, `fullmatch`, with ASCII digits: `$` would allow a final newline, `\d` other scripts' digits.)
_NUMBER = re.compile(
    r"(?P<qualifier>[∼~<>≤≥])?(?P<sign>[-+−])?"
    r"(?:(?P<digits>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<decimals>[0-9]+))?|\.(?P<fraction>[0-9]+))"
    r"(?P<suffix>%|[kKMB])?"
)
# A figures CSV: `NOTEBOOK/CSV-STEM` under the figures folder.
_SOURCE = re.compile(r"[0-9][0-9]_[A-Za-z0-9_]+/[A-Za-z0-9_.-]+")
MAGNITUDES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}


def _parts(text: str) -> dict[str, str | None] | None:
    """The parts of a printed number, or None when the text is not one: `qualifier`, `sign`, `digits`
    (before the decimal point, without separators), `decimals` (after it) and `suffix`."""
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        return None
    parts = match.groupdict()
    if parts.pop("fraction") is not None:
        parts["digits"], parts["decimals"] = "0", match["fraction"]
    parts["digits"] = parts["digits"].replace(",", "")
    return parts


def printed_number(text: str) -> float:
    """The value of a printed number: `98.67` -> 98.67, `41.4%` -> 41.4, `1,173` -> 1173, `∼64k` -> 64000,
    `<.001` -> 0.001.

    A qualifier (`∼`, `>`) is part of the printed text but not of the value."""
    parts = _parts(text)
    if parts is None:
        raise ValueError(f"{text!r} is not a number as the paper prints it")
    value = float(f"{parts['digits']}.{parts['decimals'] or '0'}")
    value *= MAGNITUDES.get(parts["suffix"] or "", 1.0)
    return -value if parts["sign"] in ("-", "−") else value


def printed_qualifier(text: str) -> str:
    """The qualifier a printed number carries (`∼`, `<`, `≥`, ...), or "" when it has none."""
    parts = _parts(text)
    return (parts["qualifier"] or "") if parts else ""


def printed_decimals(text: str) -> int:
    parts = _parts(text)
    return len(parts["decimals"] or "") if parts else -1


def printed_unit(text: str) -> float:
    """One unit of the last printed digit, on the value's scale: `0.230` -> 0.001, `64k` -> 1000."""
    parts = _parts(text)
    if parts is None:
        raise ValueError(f"{text!r} is not a number as the paper prints it")
    return MAGNITUDES.get(parts["suffix"] or "", 1.0) * 10.0 ** -len(parts["decimals"] or "")


def parse_match(text: str) -> dict[str, str]:
    """`language=Fijian;question_type=specific` -> {"language": "Fijian", "question_type": "specific"}."""
    pairs = [part.split("=", 1) for part in text.split(";") if part.strip()]
    return {key.strip(): value.strip() for key, value in pairs}


def load_claims(folder: Path | str = paths.PAPER_CLAIMS) -> pl.DataFrame:
    """Every claim of every `*.csv` in `folder`, validated, with `file` and the printed `value`."""
    folder = Path(folder)
    problems = Problems()
    rows: list[dict] = []
    files = sorted(folder.glob("*.csv"))
    if not files:
        problems.add(folder, None, None, "holds no claims file (*.csv)")
    seen: dict[str, str] = {}
    for path in files:
        found = len(rows)
        for line, row in records.read_rows(path, COLUMNS, (), problems):
            where = f"{line} ({row['claim_id']})"
            for field in ("claim_id", "paper", "item", "printed", "kind", "expect"):
                if not row[field].strip():
                    problems.add(path, where, field, "is empty")
            if row["claim_id"] in seen:
                problems.add(path, where, "claim_id", f"is also the id of {seen[row['claim_id']]}")
            seen[row["claim_id"]] = f"{path.name} {line}"
            if row["paper"] not in PAPERS:
                problems.add(path, where, "paper", f"is {row['paper']!r}; expected one of {', '.join(PAPERS)}")
            if row["expect"] not in EXPECTATIONS:
                problems.add(path, where, "expect", f"is {row['expect']!r}; expected one of {', '.join(EXPECTATIONS)}")
            if row["kind"] not in KINDS:
                problems.add(path, where, "kind", f"is {row['kind']!r}; expected one of {', '.join(KINDS)}")
            if printed_qualifier(row["printed"]) in INEQUALITIES and row["expect"] == "within rounding":
                problems.add(
                    path,
                    where,
                    "expect",
                    f"is `within rounding`, but {row['printed']!r} is a bound: the suite's value is on its side "
                    "(`exact`) or not (`differs`)",
                )
            decimals = printed_decimals(row["printed"])
            if decimals < 0:
                problems.add(path, where, "printed", f"is {row['printed']!r}; expected a number as the paper prints it")
            elif row["decimals"] != str(decimals):
                problems.add(path, where, "decimals", f"is {row['decimals']!r}, but {row['printed']!r} has {decimals}")
            if row["expect"] in ("differs", "not in the release") and not row["reason"].strip():
                problems.add(path, where, "reason", f"is empty; a claim expected to be `{row['expect']}` says why")
            if row["claim_id"] and not row["claim_id"].startswith(f"{row['paper']}/"):
                problems.add(path, where, "claim_id", f"does not start with its paper, {row['paper']!r}/")
            reachable = row["expect"] != "not in the release"
            for field in ("source", "value_column"):
                if reachable and not row[field].strip():
                    problems.add(path, where, field, "is empty; a reproducible claim names where the suite's value is")
                if not reachable and row[field].strip():
                    problems.add(path, where, field, "is set, but a claim not in the release has no suite value")
            if row["source"].strip() and not _SOURCE.fullmatch(row["source"]):
                problems.add(
                    path,
                    where,
                    "source",
                    f"is {row['source']!r}; expected NOTEBOOK/CSV-STEM, e.g. "
                    "01_dataset_overview/table4_question_lengths",
                )
            if row["match"].strip() and not all("=" in p for p in row["match"].split(";") if p.strip()):
                problems.add(path, where, "match", f"is {row['match']!r}; expected column=value pairs joined by ';'")
            rows.append({**row, "file": path.name})
        if len(rows) == found and path.is_file() and path.stat().st_size:
            problems.add(path, None, None, "holds no claim (a header and no rows): add claims or remove the file")
    problems.raise_if_any()
    return pl.DataFrame(rows, schema={c: pl.String for c in (*COLUMNS, "file")}).with_columns(
        decimals=pl.col("decimals").cast(pl.Int32),
        value=pl.col("printed").map_elements(printed_number, return_dtype=pl.Float64),
    )


ITEM_COLUMNS = ("paper", "item", "anchor", "not_in_release")
# The papers' HTML pages on arXiv, at the version the registry transcribes.
PAPER_PAGES = {"calmqa": "https://arxiv.org/html/2406.17761v3", "nativqa": "https://arxiv.org/html/2407.09823v3"}
_ITEM = re.compile(r"(Figure|Table) [1-9][0-9]*")  # matched whole (`records.is_key`), as every key
# An element of the arXiv HTML (LaTeXML): a section and a figure or table in it, e.g. `A3.F8`, `S4.T2`.
_ANCHOR = re.compile(r"[SA][0-9]+(\.(SS[0-9]+|F[0-9]+|T[0-9]+))*")


def load_items(path: Path | str = paths.PAPER_ITEMS) -> pl.DataFrame:
    """Every figure and table of the two papers in `path`, validated: paper, item (`Figure 8`), its anchor
    in the paper's arXiv HTML, and `not_in_release`, why the release cannot reach it (empty when it can)."""
    path = Path(path)
    problems = Problems()
    rows = []
    seen: dict[tuple[str, str], str] = {}  # (paper, item) -> the line that lists it
    for line, row in records.read_rows(path, ITEM_COLUMNS, (), problems):
        where = f"{line} ({row['paper']} {row['item']})"
        if row["paper"] not in PAPERS:
            problems.add(path, where, "paper", f"is {row['paper']!r}; expected one of {', '.join(PAPERS)}")
        if not records.is_key(row["item"], _ITEM):
            problems.add(path, where, "item", f"is {row['item']!r}; expected `Figure N` or `Table N`")
        if not records.is_key(row["anchor"], _ANCHOR):
            problems.add(path, where, "anchor", f"is {row['anchor']!r}; expected an arXiv HTML anchor such as A3.F8")
        key = (row["paper"], row["item"])
        if key in seen:
            problems.add(path, where, "item", f"is listed twice (also on {seen[key]})")
        seen[key] = line
        rows.append(row)
    problems.raise_if_any()
    return pl.DataFrame(rows, schema={c: pl.String for c in ITEM_COLUMNS})
