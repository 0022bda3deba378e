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


# ---------------------------------------------------------------- the entries, whole, written out by hand


def test_a_failed_report_s_entry_whole():
    note = {"title": "T<1>", "reason": "R&D", "executed": "build/a&b.ipynb", "notebook": "03_x"}
    assert index.failed_entry(note) == (
        '<div class="report">\n<div class="no-figure">no report: its last run failed</div>\n<div>\n'
        '<h2>T&lt;1&gt; <span class="failed-mark">failed</span></h2>\n<p class="failures">R&amp;D</p>\n'
        '<p class="meta">The executed notebook, with the traceback: <code>build/a&amp;b.ipynb</code>. '
        "<code>make figures</code> runs it again.</p>\n</div>\n</div>"
    )


@pytest.mark.parametrize(
    ("note", "title", "reason"),
    [
        ({"notebook": "03_x<"}, "03_x&lt;", "it failed"),  # no title: the notebook's name; no reason: a general one
        ({"title": "", "notebook": "03_x"}, "03_x", "it failed"),
        ({}, "?", "it failed"),
        ({"title": "T", "notebook": "03_x", "reason": "no data"}, "T", "no data"),
    ],
)
def test_a_failed_report_s_entry_without_its_record_s_fields(note, title, reason):
    entry = index.failed_entry(note)
    assert f'<h2>{title} <span class="failed-mark">failed</span></h2>' in entry
    assert f'<p class="failures">{reason}</p>' in entry
    # no executed notebook: the line says only how to run it again
    assert '<p class="meta"><code>make figures</code> runs it again.</p>' in entry


def test_a_study_s_headline_whole():
    study = _study(name="m&s", description="About <it>.", citation="Me & you")
    records = {"04_answer_scores": {"title": "Scores & such"}, "03_surface_quality": {}}
    assert index.study_headline(records, study) == (
        '<div class="lead"><p>About &lt;it&gt;.</p><p>2 reports of the study <code>m&amp;s</code>, one per notebook '
        "of the CaLMQA analysis suite (docs/studies.md). Each says where the study lacks the data for one of its "
        "sections.</p><p>What to read first:</p><ol>"
        '<li><a href="03_surface_quality.html">03_surface_quality</a>: which models answer in the question\'s '
        "language, without repeating themselves</li>"
        '<li><a href="04_answer_scores.html">Scores &amp; such</a>: the share of answers without surface issues, '
        "and the study's metrics</li></ol>"
        '<p class="provenance">Cite the study as: Me &amp; you</p></div>'
    )


def test_a_study_s_headline_without_description_citation_or_reports_to_read_first():
    study = _study(description="", citation="")
    assert index.study_headline({"01_dataset_overview": {}}, study) == (
        '<div class="lead"><p>1 report of the study <code>mine</code>, one per notebook of the CaLMQA analysis '
        "suite (docs/studies.md). Each says where the study lacks the data for one of its sections.</p></div>"
    )
