"""Every printed number a report computes is shown in that report beside the suite's value, with its
status: checked over the whole claims registry and the reports' HTML of a `make figures` run."""

from html.parser import HTMLParser
from pathlib import Path

import polars as pl

from analysis.analyses import paper_check
from analysis.io import paper
from analysis.viz import table_specs

# The columns of a row of the paper's numbers beside the suite's that identify it and show its values.
SHOWN = ("item", "row", "column", "paper", "suite", "status")


class _BesideRows(HTMLParser):
    """The rows (their cells' text) of the tables inside `<details class="calmqa-beside">`."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, ...]] = []
        self._depth = 0  # inside how many beside blocks
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "details" and "calmqa-beside" in (dict(attrs).get("class") or ""):
            self._depth += 1
        elif self._depth and tag == "tr":
            self._row = []
        elif self._depth and tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "details" and self._depth:
            self._depth -= 1
        elif tag == "td" and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.rows.append(tuple(self._row))
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def beside_rows(report: Path) -> set[tuple[str, ...]]:
    parser = _BesideRows()
    parser.feed(report.read_text(encoding="utf-8"))
    return {row[: len(SHOWN)] for row in parser.rows}


def test_every_claim_a_report_computes_is_beside_the_papers_value(built_reports):
    results = paper_check.check(paper.load_claims(), built_reports / "figures").filter(pl.col("source") != "")
    missing = []
    for (notebook,), claims in results.group_by(pl.col("source").str.split("/").list.first()):
        shown = beside_rows(built_reports / "reports" / f"{notebook}.html")
        for claim in claims.iter_rows(named=True):
            expected = (
                claim["item"],
                claim["row"],
                claim["column"],
                claim["printed"],
                paper_check.suite_text(claim["value_suite"], claim["decimals"], claim["printed"]),
                table_specs.STATUS_MARKS[claim["status"]],
            )
            if expected not in shown:
                missing.append(f"{notebook}: {claim['claim_id']} {expected}")
    assert not missing, f"{len(missing)} claims are not shown beside the paper's value:\n" + "\n".join(missing[:20])
