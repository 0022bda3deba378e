"""Generated study folders (`study_shapes`) through `make figures STUDY=` as a user runs it (issue 34): the
database built, every generic notebook executed by Papermill with every figure drawn by vl-convert, every
report and the index written, and the outputs' invariants (`study_invariants`) holding. Also the shortcut
the in-process tests take (`notebook_cells.shared_engine`) against the build's own training.

`make test-properties` adds a study of 2,000 languages (its build and reports take minutes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest
from notebook_cells import engine_for, pool_engine
from study_invariants import check
from study_shapes import LANGUAGE_POOL, UNKNOWN_CODES, many_languages, tricky, without_optional_data, write

from analysis.core import paths
from analysis.pipeline import language_id_all
from analysis.reporting import run

pytestmark = pytest.mark.slow

NOTEBOOKS = run.notebook_names(generic_only=True)
MANY_LANGUAGES = 2000


def make_figures(shape, root: Path) -> Path:
    """`make figures STUDY=` on the study of `shape`, its database and outputs under `root`."""
    folder = write(root / "study", shape)
    out = root / "out"
    result = subprocess.run(
        ["make", "figures", f"STUDY={folder}", f"DB={root / 'study.duckdb'}", f"OUT={out}"],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for name in NOTEBOOKS:
        assert (out / "reports" / f"{name}.html").is_file(), name
    assert (out / "reports" / "index.html").is_file()
    return out


def _markdown(executed: Path) -> list[str]:
    notebook = json.loads(executed.read_text(encoding="utf-8"))
    return [
        "".join(output["data"]["text/markdown"])
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if "text/markdown" in output.get("data", {})
    ]


@pytest.mark.needs_r
@pytest.mark.parametrize("case", ["without optional data", "tricky labels"])
def test_make_figures_on_generated_studies(case, tmp_path):
    """The study the issue names (no `question_type`, `category`, `collection` or languages.csv) and one of
    labels like column names, several annotators per answer and metric values at the ends of a float."""
    shape = without_optional_data(many_languages(3, models=2)) if case == "without optional data" else tricky()
    out = make_figures(shape, tmp_path)
    summaries = {name: _markdown(out / "build" / "executed" / f"{name}.ipynb") for name in NOTEBOOKS}
    check(shape, out / "figures", summaries)
    if case == "tricky labels":
        report = (out / "reports" / "05_human_evaluation.html").read_text(encoding="utf-8")
        assert "An answer rated by several annotators counts once per annotator" in report


@pytest.mark.needs_r
@pytest.mark.properties
def test_a_study_of_2000_languages_builds_and_every_report_renders(tmp_path):
    """`MANY_LANGUAGES` languages (the UDHR pool's, then codes of the IANA registry the UDHR lacks): every
    generic report is drawn, its charts showing 40 languages and saying how many more their CSV holds."""
    out = make_figures(many_languages(MANY_LANGUAGES), tmp_path)
    cells = pl.read_csv(out / "figures" / "03_surface_quality" / "heatmap_pct_correct_language.csv")
    assert cells["language"].n_unique() == MANY_LANGUAGES
    report = (out / "reports" / "03_surface_quality.html").read_text(encoding="utf-8")
    assert "the figure's CSV has the rows of 1,960 more languages" in report.replace("&#x27;", "'")


def test_the_shared_engine_is_the_one_a_build_trains(udhr_folder):
    """The in-process tests' shortcut (`notebook_cells.shared_engine`) gives a study the engine its build
    would train."""
    languages = {"Hausa": "ha", "tw": "tw", "select": "sw", "العربية": "ar"}
    trained = language_id_all.train_for_languages(languages, udhr_folder)
    shared = engine_for(languages, pool_engine((*LANGUAGE_POOL, *UNKNOWN_CODES), udhr_folder))
    assert shared.to_bytes() == trained.to_bytes()
    assert list(shared.targets) == ["Hausa", "select", "العربية"]
