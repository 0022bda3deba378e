"""The claims of the reproduction report as a reader can use them: one fold per paper item, offline
filters and a search.

`claims_browser(table, ...)` draws the table of every claim (`analyses.paper_check.report_table`, with
whatever columns the registry gives it) as HTML that needs no network: grouped by paper, then by paper
item (its name links to the item on arXiv), each item's head row counting its claims by status. Exact
claims and those not in the release are folded away inside their item (a click on the item opens it):
what shows is what the suite finds otherwise than the paper prints; a reason
shared by several claims of an item is stated once, above them. A select per facet column (the status,
and any other the registry has, such as a kind) and a search box over every column filter the claims;
a filter shows the matching claims whatever is folded. Without JavaScript (a notebook that does not
run it) every claim shows. Text from the registry is escaped; the notes' Markdown (`code`, *italics*)
is rendered as in the other tables.
"""

from __future__ import annotations

import hashlib
import json
import re

import polars as pl

from ..core.text import inert
from ..io.paper import PAPER_NAMES
from .export import figures_link, files_line
from .tables import Table, _markdown_inline
from .theme import CLAIM_STATUS_COLOURS

# The columns a claim row shows, when the table has them, and their headings.
SHOWN = {"row": "Row", "column": "Column", "printed": "Printed", "suite": "Suite", "status": "Status"}
# Columns a select filters on, when the table has them (the registry may add a kind of claim).
FACETS = ("status", "kind")
# The statuses whose claims are folded away inside their item: those that agree with the paper and
# those the release cannot check (the report lists the unreachable items, with why, below the claims).
FOLDED = ("exact", "not in the release")

STYLE = """
.calmqa-claims { font-size: 14px; max-width: 100%%; }
.calmqa-claims-controls { display: flex; flex-wrap: wrap; gap: 0.6em 1.2em; align-items: center; margin: 0.4em 0 0.8em 0; }
.calmqa-claims-controls input[type=search] { width: 18em; max-width: 100%%; }
.calmqa-claims table { border-collapse: collapse; width: 100%%; table-layout: auto; }
.calmqa-claims caption { text-align: left; font-size: 15px; padding: 0.3em 0; }
/* Over the notebook's own table style (`:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`: right-aligned). */
.calmqa-claims.calmqa-claims table th, .calmqa-claims.calmqa-claims table td { padding: 2px 8px; text-align: left;
  vertical-align: top; border: none; border-bottom: 1px solid #eee; }
.calmqa-claims thead th { border-bottom: 2px solid #999; }
.calmqa-claims .calmqa-paper th { font-size: 16px; padding-top: 0.8em; border-bottom: 2px solid #666; }
.calmqa-claims .calmqa-item-head th { background: #f4f4f4; font-weight: normal; }
.calmqa-claims .calmqa-fold { font: inherit; font-weight: bold; background: none; border: none; padding: 0; cursor: pointer; color: #1a5fb4; }
.calmqa-claims .calmqa-fold::before { content: "▸ "; }
.calmqa-claims .calmqa-item.calmqa-open .calmqa-fold::before { content: "▾ "; }
.calmqa-claims .calmqa-counts { color: #444; margin-left: 0.6em; }
.calmqa-claims .calmqa-reason td { color: #333; background: #fafafa; font-size: 13px; }
.calmqa-claims .calmqa-claim td:first-child { padding-left: 1.6em; }
.calmqa-claims .calmqa-status { display: inline-block; border-radius: 3px; padding: 0 0.4em; font-size: 12px; white-space: nowrap; }
.calmqa-claims .calmqa-failing { outline: 2px solid %(failing)s; font-weight: bold; }
.calmqa-claims .calmqa-source { font-size: 12px; overflow-wrap: anywhere; }
%(badges)s
@media print { .calmqa-claims-controls { display: none; } .calmqa-claims tr[hidden] { display: table-row; } }
"""

SCRIPT = """
(function () {
  var root = document.getElementById(%(id)s);
  if (!root) { return; }
  root.classList.add("calmqa-live");
  var selects = Array.from(root.querySelectorAll("select[data-facet]"));
  var search = root.querySelector("input[type=search]");
  var count = root.querySelector(".calmqa-claims-count");
  function apply() {
    var words = search.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var chosen = selects.filter(function (s) { return s.value; });
    var filtering = words.length > 0 || chosen.length > 0;
    var shown = 0;
    root.querySelectorAll("tbody.calmqa-item").forEach(function (item) {
      var open = item.classList.contains("calmqa-open");
      var visible = 0;
      var groups = {};
      item.querySelectorAll("tr.calmqa-claim").forEach(function (row) {
        var matches = chosen.every(function (s) { return row.getAttribute("data-" + s.dataset.facet) === s.value; })
          && words.every(function (w) { return row.dataset.text.indexOf(w) >= 0; });
        var show = filtering ? matches : (open || %(folded)s.indexOf(row.dataset.status) < 0);
        row.hidden = !show;
        if (show) { visible += 1; groups[row.dataset.group] = true; }
      });
      item.querySelectorAll("tr.calmqa-reason").forEach(function (row) { row.hidden = !groups[row.dataset.group]; });
      item.hidden = filtering && visible === 0;
      shown += visible;
    });
    root.querySelectorAll("tbody.calmqa-paper").forEach(function (paper) {
      var items = root.querySelectorAll('tbody.calmqa-item[data-paper="' + paper.dataset.paper + '"]');
      paper.hidden = Array.from(items).every(function (item) { return item.hidden; });
    });
    count.textContent = shown + " of " + count.dataset.total + " claims shown";
  }
  root.querySelectorAll("button.calmqa-fold").forEach(function (button) {
    button.addEventListener("click", function () {
      var item = button.closest("tbody.calmqa-item");
      var open = item.classList.toggle("calmqa-open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
      apply();
    });
  });
  root.querySelectorAll("button[data-fold-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.dataset.foldAll === "open";
      root.querySelectorAll("tbody.calmqa-item").forEach(function (item) {
        item.classList.toggle("calmqa-open", open);
        item.querySelector("button.calmqa-fold").setAttribute("aria-expanded", open ? "true" : "false");
      });
      apply();
    });
  });
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  apply();
})();
"""


def _natural(item: str) -> tuple:
    """Paper items in reading order: `Table 4` before `Table 10`."""
    number = re.search(r"\d+", item)
    return re.sub(r"\d.*", "", item), int(number.group()) if number else 0, item


def _badge_css() -> str:
    rules = []
    for status, colour in CLAIM_STATUS_COLOURS.items():
        dark = status in ("exact", "no value")
        rules.append(
            f".calmqa-claims .calmqa-status[data-status={json.dumps(status)}] {{ background: {colour}; "
            f"color: {'#fff' if dark else '#111'}; }}"
        )
    return "\n".join(rules)


def _status_badge(status: str, failing: bool, expected: str | None) -> str:
    text = inert(status, "html")
    if failing and expected:
        text += f" (expected: {inert(expected, 'html')})"
    classes = "calmqa-status" + (" calmqa-failing" if failing else "")
    return f'<span class="{classes}" data-status="{inert(status, "html")}">{text}</span>'


def _counts(rows: pl.DataFrame) -> str:
    """`6 claims: 4 exact, 2 differ`, in the order the statuses first appear."""
    by_status = rows.group_by("status", maintain_order=True).agg(pl.len())
    parts = [f"{n:,} {status}" for status, n in by_status.iter_rows()]
    return f"{rows.height:,} claim{'s' if rows.height != 1 else ''}: {', '.join(parts)}"


def claims_browser(
    table: pl.DataFrame, links: dict[tuple[str, str], str], caption: str, name: str | None = None
) -> Table:
    """The claims of `table` (one row each, with `paper`, `item`, `status` and the columns of `SHOWN`)
    folded by paper item, with a filter per facet column and a search (see the module's docstring).
    `links` give each (paper, item) its address on arXiv; a claim's `source` links to its figures CSV
    (`export.figures_link`); `name`, the table's files (`tables.save`), when it was saved."""
    digest = hashlib.sha256(table.write_csv().encode()).hexdigest()[:12]
    root_id = f"calmqa-claims-{digest}"
    shown = [c for c in SHOWN if c in table.columns]
    facets = [c for c in FACETS if c in table.columns]
    extra = [c for c in facets if c not in shown]
    has_source = "source" in table.columns
    n_columns = len(shown) + len(extra) + int(has_source)
    header = [*(SHOWN[c] for c in shown), *(c.replace("_", " ").capitalize() for c in extra)]
    header += ["Source CSV"] if has_source else []
    ordered = table.with_row_index("_position")
    parts = [
        f"<style>{STYLE % {'failing': CLAIM_STATUS_COLOURS['no value'], 'badges': _badge_css()}}</style>",
        f'<div class="calmqa-claims" id="{root_id}">',
        '<div class="calmqa-claims-controls">',
    ]
    for facet in facets:
        values = ordered[facet].drop_nulls().unique(maintain_order=True).to_list()
        options = "".join(f'<option value="{inert(v, "html")}">{inert(v, "html")}</option>' for v in values)
        heading = facet.replace("_", " ").capitalize()
        parts.append(
            f'<label>{heading} <select data-facet="{facet}"><option value="">all</option>{options}</select></label>'
        )
    parts += [
        '<label>Search <input type="search" placeholder="item, row, column, number, note"></label>',
        '<button type="button" data-fold-all="open">Open every item</button>',
        '<button type="button" data-fold-all="close">Fold every item</button>',
        f'<span class="calmqa-claims-count" data-total="{table.height}">{table.height:,} claims</span>',
        "</div>",
        f"<table><caption>{inert(caption, 'html')}</caption><thead><tr>{''.join(f'<th scope=col>{h}</th>' for h in header)}"
        "</tr></thead>",
    ]
    group = 0
    for (paper,), by_paper in ordered.group_by(["paper"], maintain_order=True):
        paper_name = PAPER_NAMES.get(paper, paper)
        parts.append(
            f'<tbody class="calmqa-paper" data-paper="{inert(paper, "html")}"><tr><th colspan="{n_columns}" scope="rowgroup">'
            f"{inert(paper_name, 'html')}</th></tr></tbody>"
        )
        items = sorted(by_paper["item"].unique().to_list(), key=_natural)
        for item in items:
            rows = by_paper.filter(pl.col("item") == item).sort("_position")
            url = links.get((paper, item))
            link = f' <a class="calmqa-arxiv" href="{inert(url, "html")}">on arXiv ↗</a>' if url else ""
            parts.append(
                f'<tbody class="calmqa-item" data-paper="{inert(paper, "html")}" data-item="{inert(item, "html")}">'
                f'<tr class="calmqa-item-head"><th colspan="{n_columns}" scope="rowgroup">'
                f'<button type="button" class="calmqa-fold" aria-expanded="false">{inert(paper_name, "html")} '
                f"{inert(item, 'html')}</button>{link}"
                f'<span class="calmqa-counts">{inert(_counts(rows), "html")}</span></th></tr>'
            )
            # One reason row for the claims of a status that share it, then those claims.
            notes = (
                rows.with_columns(pl.col("note").fill_null(""))
                if "note" in rows.columns
                else rows.with_columns(note=pl.lit(""))
            )
            for (status, note), claims in notes.group_by(["status", "note"], maintain_order=True):
                group += 1
                if note:
                    shared = f" ({claims.height} claims)" if claims.height > 1 else ""
                    parts.append(
                        f'<tr class="calmqa-reason" data-group="{group}"><td colspan="{n_columns}">'
                        f"{_status_badge(status, False, None)} Why{shared}: {_markdown_inline(note)}</td></tr>"
                    )
                for claim in claims.iter_rows(named=True):
                    parts.append(_claim_row(claim, shown, extra, facets, has_source, group, item))
            parts.append("</tbody>")
    parts += [
        "</table></div>",
        f"<script>{SCRIPT % {'id': json.dumps(root_id), 'folded': json.dumps(list(FOLDED))}}</script>",
    ]
    if name:
        parts.append(files_line(name, ("csv", "tex")))
    return Table("\n".join(parts), table.height)


def _claim_row(
    claim: dict,
    shown: list[str],
    extra: list[str],
    facets: list[str],
    has_source: bool,
    group: int,
    item: str,
) -> str:
    failing = claim.get("ok") is False
    cells = []
    for column in [*shown, *extra]:
        value = claim.get(column)
        if column == "status":
            cells.append(_status_badge(claim["status"], failing, claim.get("expect")))
        else:
            cells.append(inert("" if value is None else str(value), "html"))
    if has_source:
        source = claim.get("source") or ""
        cells.append(figures_link(f"{source}.csv", f"{source.split('/')[-1]}.csv", "calmqa-source") if source else "")
    searched = " ".join(str(v) for k, v in claim.items() if k not in ("_position", "ok") and v is not None)
    attributes = "".join(
        f' data-{facet}="{inert(str(claim.get(facet) or ""), "html")}"' for facet in facets if facet != "status"
    )
    return (
        f'<tr class="calmqa-claim" data-status="{inert(claim["status"], "html")}" data-group="{group}"{attributes}'
        f' data-text="{inert(f"{item} {searched}".lower(), "html")}">'
        + "".join(f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )
