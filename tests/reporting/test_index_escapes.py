"""A study's own text on the index page (`reporting.index`) is shown as the characters it is: each field a
study or a report record gives (title, name, description, citation, a report's title, summary, figure and
failure) is escaped, and escaped once."""

import html

import pytest

from analysis.analyses.studies import Study
from analysis.reporting import index

pytestmark = pytest.mark.fast

HOSTILE = '<img src=x onerror="alert(1)">&copy; R&D'
ESCAPED = html.escape(HOSTILE, quote=True)


def _study(**fields) -> Study:
    plain = {
        "name": "mine",
        "title": "My study",
        "citation": "Someone 2026",
        "description": "A study.",
        "paper": None,
        "nativqa": False,
        "language_identification": "none",
        "has": {},
        "empty": {"metrics": (), "criteria": ()},
    }
    return Study(**{**plain, **fields})


def _assert_inert(page: str) -> None:
    assert "<img src=x" not in page and 'onerror="alert' not in page, page
    assert ESCAPED in page, page  # escaped once: not dropped, not escaped twice


@pytest.mark.parametrize("field", ["description", "citation", "name"])
def test_a_study_s_text_is_escaped_in_the_index_headline(field):
    _assert_inert(index.study_headline({}, _study(**{field: HOSTILE})))


def test_a_report_s_title_is_escaped_in_the_reading_order_and_its_entry(tmp_path):
    name = next(iter(index.STUDY_READING_ORDER))
    _assert_inert(index.study_headline({name: {"title": HOSTILE}}, _study()))
    record = {"title": HOSTILE, "notebook": name}
    _assert_inert(index.entry(tmp_path / f"{name}.html", record, tmp_path, index._build_key(record)))


def test_a_report_s_summary_enters_the_index_without_its_tags(tmp_path):
    record = {"title": "t", "summary": HOSTILE}
    page = index.entry(tmp_path / "r.html", record, tmp_path, index._build_key(record))
    assert "<img src=x" not in page and 'onerror="alert' not in page, page


def test_a_failed_report_s_title_and_reason_are_escaped():
    note = {"title": HOSTILE, "reason": HOSTILE, "notebook": "x"}
    _assert_inert(index.failed_entry(note))
    _assert_inert(index.failures_block({"x": note}))


def test_the_page_title_of_a_study_s_index_is_escaped(tmp_path, monkeypatch):
    monkeypatch.setattr(index, "study_of", lambda db_path: _study(title=HOSTILE, description=HOSTILE))
    (tmp_path / "reports").mkdir()
    page = index.write_index(tmp_path / "reports", tmp_path / "figures", db_path=None).read_text(encoding="utf-8")
    _assert_inert(page)
    assert f"<title>{ESCAPED}: reports</title>" in page
