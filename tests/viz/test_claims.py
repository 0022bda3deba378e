"""The reproduction report's claims (viz/claims.py): folded by paper item, filtered and searched offline,
whatever columns the claims registry has; in a browser, on a small table and on the real report."""

import re

import polars as pl
import pytest

from analysis.viz import claims
from analysis.viz.theme import CLAIM_STATUS_COLOURS


def _table(**extra) -> pl.DataFrame:
    shared = "the release holds the human-collected questions only"
    frame = pl.DataFrame(
        {
            "paper": ["calmqa"] * 6 + ["nativqa"],
            "item": ["Table 4", "Table 4", "Table 4", "Section 2", "Section 2", "Table 10", "Table 2"],
            "row": ["English", "German", "Hindi", "questions", "auto", "Fijian", "<b>GPT-4o</b>"],
            "column": ["# Q", "# Q", "# Q", "n", "n", "speakers", "Avg. F1"],
            "printed": ["78", "96", "91", "51.7K", "10k", "350K", "0.779"],
            "suite": ["78", "96", "92", None, None, "350K", "0.780"],
            "status": [
                "exact",
                "exact",
                "differs",
                "not in the release",
                "not in the release",
                "exact",
                "within rounding",
            ],
            "expect": [
                "exact",
                "exact",
                "differs",
                "not in the release",
                "not in the release",
                "exact",
                "within rounding",
            ],
            "ok": [True] * 7,
            "note": [None, None, "one question *more*", shared, shared, None, "cut, not rounded"],
            "source": ["01_dataset_overview/table4_question_lengths"] * 3
            + [None, None]
            + ["01_dataset_overview/table10_languages", "07_nativqa_results/table2_bertscore"],
        }
    )
    return frame.with_columns(**{k: pl.Series(v) for k, v in extra.items()})


def test_claims_are_folded_by_item_with_reasons_stated_once():
    page = claims.claims_browser(_table(), {("calmqa", "Table 4"): "https://arxiv.org/html/x#A1.T4"}, "Claims").html
    # One fold per item, in reading order within each paper (Table 4 before Table 10).
    items = re.findall(r'data-item="([^"]+)"', page)
    assert items == ["Section 2", "Table 4", "Table 10", "Table 2"]
    assert 'href="https://arxiv.org/html/x#A1.T4">on arXiv' in page
    assert "3 claims: 2 exact, 1 differs" in page
    # The reason the two claims of Section 2 share is stated once, for the two.
    shown_text = re.findall(r">([^<]+)<", page)
    assert sum("the release holds the human-collected questions only" in t for t in shown_text) == 1
    assert "Why (2 claims):" in page
    assert "one question <em>more</em>" in page  # the notes' Markdown, as in the other tables
    # Exact claims are the folded ones; every claim row says its status for the filter.
    assert len(re.findall(r'class="calmqa-claim" data-status="exact"', page)) == 3
    assert "&lt;b&gt;GPT-4o&lt;/b&gt;" in page and "<b>GPT-4o</b>" not in page
    assert '<option value="differs">differs</option>' in page and 'data-facet="kind"' not in page
    assert 'data-calmqa-figures="01_dataset_overview/table4_question_lengths.csv"' in page
    # "differs" is a warning colour of its own, apart from "within rounding".
    assert CLAIM_STATUS_COLOURS["differs"] != CLAIM_STATUS_COLOURS["within rounding"]
    assert f'.calmqa-status[data-status="differs"] {{ background: {CLAIM_STATUS_COLOURS["differs"]}' in page


def test_a_column_the_registry_adds_becomes_a_filter():
    page = claims.claims_browser(
        _table(kind=["reproduced", "reproduced", "derived", "transcribed", "transcribed", "reproduced", "derived"]),
        {},
        "Claims",
    ).html
    assert 'data-facet="kind"' in page and '<option value="transcribed">transcribed</option>' in page
    assert 'data-kind="derived"' in page and "<th scope=col>Kind</th>" in page


BROWSER_STATE_JS = """(() => {
  const rows = Array.from(document.querySelectorAll('tr.calmqa-claim'));
  return {
    shown: rows.filter(r => !r.hidden).map(r => r.dataset.status),
    height: document.documentElement.scrollHeight,
    count: document.querySelector('.calmqa-claims-count').textContent,
  };
})()"""


def _click(chromium, session, selector: str) -> None:
    """A mouse click on the first element matching `selector`, at its centre, as a reader's."""
    box = chromium.evaluate(
        session,
        f"(() => {{ const e = document.querySelector({selector!r}); e.scrollIntoView({{block: 'center'}});"
        " const b = e.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()",
    )
    chromium.click(session, *box)


def _choose_status(chromium, session, status: str) -> None:
    chromium.evaluate(
        session,
        f"(() => {{ const s = document.querySelector('select[data-facet=status]'); s.value = {status!r};"
        " s.dispatchEvent(new Event('change')); return true; })()",
    )


def test_folds_and_filters_work_offline_in_a_browser(chromium, tmp_path):
    page = tmp_path / "claims.html"
    page.write_text(f"<!DOCTYPE html><html><body>{claims.claims_browser(_table(), {}, 'Claims').html}</body></html>")

    def drive(chrome, session):
        states = {"folded": chrome.evaluate(session, BROWSER_STATE_JS)}
        _click(chrome, session, 'tbody.calmqa-item[data-item="Table 4"] button.calmqa-fold')
        states["opened"] = chrome.evaluate(session, BROWSER_STATE_JS)
        _choose_status(chrome, session, "differs")
        states["differs"] = chrome.evaluate(session, BROWSER_STATE_JS)
        _choose_status(chrome, session, "")
        chrome.evaluate(
            session,
            "(() => { const i = document.querySelector('input[type=search]'); i.value = 'fijian';"
            " i.dispatchEvent(new Event('input')); return true; })()",
        )
        states["searched"] = chrome.evaluate(session, BROWSER_STATE_JS)
        return states

    result = chromium.open(page, actions=drive)
    assert result.problems == []
    states = result.values
    # exact claims and those not in the release are folded away: the claim that differs and the one within rounding show
    assert states["folded"]["shown"] == ["differs", "within rounding"]
    assert states["opened"]["shown"].count("exact") == 2  # Table 4's, not Table 10's
    assert states["differs"]["shown"] == ["differs"] and states["differs"]["count"] == "1 of 7 claims shown"
    assert states["searched"]["shown"] == ["exact"]  # a search finds folded claims too


def test_report_08_is_short_folded_and_opens_and_filters(chromium, built_reports):
    """The page the index says to read first: under 8,000 px tall at 1400 px with every item folded; a
    click opens an item's exact claims, and the status filter keeps the numbers that differ."""
    page = built_reports / "reports" / "08_paper_reproduction.html"

    def drive(chrome, session):
        states = {"folded": chrome.evaluate(session, BROWSER_STATE_JS)}
        _click(chrome, session, 'tbody.calmqa-item[data-item="Table 13"] button.calmqa-fold')
        states["opened"] = chrome.evaluate(session, BROWSER_STATE_JS)
        _choose_status(chrome, session, "differs")
        states["differs"] = chrome.evaluate(session, BROWSER_STATE_JS)
        return states

    result = chromium.open(page, viewport=(1400, 900), actions=drive)
    assert result.problems == []
    folded, opened, differs = result.values["folded"], result.values["opened"], result.values["differs"]
    assert folded["height"] < 8000, f"report 08 is {folded['height']} px tall at 1400 px, folded"
    assert folded["shown"] and not {"exact", "not in the release"} & set(folded["shown"])
    assert opened["shown"].count("exact") > 0 and opened["height"] > folded["height"]
    assert differs["shown"] and set(differs["shown"]) == {"differs"}
    total = int(re.search(r"of (\d+) claims", differs["count"]).group(1))
    assert differs["count"] == f"{len(differs['shown'])} of {total} claims shown"


@pytest.mark.parametrize("status", ["exact", "within rounding", "differs", "not in the release", "no value"])
def test_every_status_has_its_colour(status):
    assert re.fullmatch(r"#[0-9a-f]{6}", CLAIM_STATUS_COLOURS[status])
