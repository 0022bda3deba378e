"""Reports of another version of the release state that version's numbers: built from the real snapshot
with rows held back (tests/held_back_release.py: 228 ratings, no Fijian ones, 48 Kirundi ones, 50 Tswana
questions), no report's prose states the pinned release's 300 ratings, Kirundi's 60 rated answers or
Tswana's 63 of 65, and each states what this version holds. The paper's own values, shown beside the
suite's (`<details class="calmqa-beside">`), are the paper's and are left out of the prose checked."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from held_back_release import KIRUNDI_RATINGS_KEPT, RATINGS_KEPT, write_held_back_release

from analysis.io import release as release_files
from analysis.pipeline.build import build
from analysis.pipeline.language_id_all import Engine, train_from_release
from analysis.reporting import provenance, run

# The reports whose text depends on the ratings or on Tswana's questions.
NOTEBOOKS = ("03_surface_quality", "05_human_evaluation", "09_answer_verdicts", "10_language_identification")
# What the reports of the pinned release state that is false of the held-back one.
PINNED = {
    "300 ratings": r"\b300 (?:human-rated |rated )?(?:ratings|answers)",
    "Kirundi's 60 rated answers": r"Kirundi's 60\b|\b60 (?:rated )?answers",
    "Tswana's 63 of 65": r"\b63 of 65\b",
    "10 answers per cell": r"\b10 answers per\b|\(10 answers\)",
    "5 annotators": r"\b5 (?:native-speaker )?annotators\b",
}


class _Prose(HTMLParser):
    """A report's text, without scripts, styles and the paper's values shown beside the suite's."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skipped: list[str] = []  # the tags being skipped, innermost last

    def handle_starttag(self, tag, attrs):
        beside = tag == "details" and "calmqa-beside" in (dict(attrs).get("class") or "")
        if self._skipped and tag == self._skipped[0]:
            self._skipped.append(tag)
        elif not self._skipped and (tag in ("script", "style") or beside):
            self._skipped.append(tag)

    def handle_endtag(self, tag):
        if self._skipped and tag == self._skipped[-1]:
            self._skipped.pop()

    def handle_data(self, data):
        if not self._skipped:
            self.parts.append(data)


def prose(report: Path) -> str:
    parser = _Prose()
    parser.feed(report.read_text(encoding="utf-8"))
    return " ".join(" ".join(parser.parts).split())


@pytest.fixture(scope="module")
def held_back_reports(release_folder, language_id_model, tmp_path_factory) -> Path:
    """The reports of NOTEBOOKS, built from the held-back release (with the pinned release's evaluation of
    the language identification, which report 10 must then say is another release's)."""
    root = tmp_path_factory.mktemp("held-back")
    source = write_held_back_release(release_folder, root / "release")
    db = root / "held-back.duckdb"
    build(source, db, verify=False, progress=False)
    for name in NOTEBOOKS:
        run.run_notebook(
            name, db_path=db, figures_root=root / "figures", reports_root=root / "reports", build_root=root / "build"
        )
    return root / "reports"


@pytest.mark.needs_r
@pytest.mark.slow
def test_no_report_states_the_pinned_releases_numbers(held_back_reports):
    found = []
    for name in NOTEBOOKS:
        text = prose(held_back_reports / f"{name}.html")
        found += [
            f"{name}: {what} ({m.group(0)!r})" for what, pattern in PINNED.items() for m in re.finditer(pattern, text)
        ]
    assert not found, "the reports of the held-back release state the pinned release's numbers:\n" + "\n".join(found)


@pytest.mark.needs_r
@pytest.mark.slow
def test_the_reports_state_the_held_back_releases_numbers(held_back_reports):
    def text(name: str) -> str:
        return prose(held_back_reports / f"{name}.html")

    assert f"{RATINGS_KEPT} ratings by 4 annotators in 4 languages" in text("05_human_evaluation")
    assert f"Kirundi ({KIRUNDI_RATINGS_KEPT} answers) has human ratings" in text("10_language_identification")
    # The paper's "Tongan 96.92" was Tswana's 63 of 65; with 50 Tswana questions no language has it.
    assert "The paper's Tongan 96.92% is not Tongan's share here" in text("03_surface_quality")
    assert "no language has that share here" in text("03_surface_quality")
    # The evaluation of the language identification is the pinned release's: report 10 says so.
    assert "The evaluation was computed from release" in text("10_language_identification")
    assert "not from this database's" in text("10_language_identification")
    for name in NOTEBOOKS:
        record = provenance.read(held_back_reports / f"{name}.html")
        assert record["release"].startswith("another version of the CaLMQA release"), record["release"]
        assert "all_ratings.csv" in record["release"]


def test_the_language_identification_is_trained_from_the_release_it_is_given(
    release_folder, udhr_folder, language_id_model, tmp_path
):
    """`make language-id SOURCE=...` trains from that release: the model records the release it was
    trained from, the held-back one's, and the project's model the pinned one's."""
    source = write_held_back_release(release_folder, tmp_path / "release")
    out = tmp_path / "model.npz"
    train_from_release(source, udhr_folder, out)
    held_back = release_files.fingerprint(release_files.source_checksums(source))
    pinned = release_files.fingerprint(release_files.source_checksums(release_folder))
    assert Engine.load(out).provenance["release"] == held_back != pinned
    # The project's model (`make language-id` without SOURCE) is the pinned release's.
    assert Engine.load(language_id_model).provenance["release"] == pinned
