"""The explorer as a researcher uses it: notebooks/00_explore.ipynb in a real JupyterLab, driven by
headless Chromium (`reporting.jupyterlab`), every cell run, the heatmap clicked with the mouse.

A click on a cell must reach the explorer and change the comparison below the heatmap, also after the
chart was redrawn (a new metric): Altair makes new selection objects for every chart a JupyterChart is
given, and an observer left on the old ones never fires. The chart must also fit JupyterLab's output
area at 1024 and 1400 px (the file browser open, as it is by default), with no text under 9 px.
"""

import time

import pytest

from analysis.reporting import browser, jupyterlab

SCREEN_HEIGHT = 900


@pytest.fixture(scope="module")
def explorer_tab(chromium, database, tmp_path_factory):
    """The explorer open in JupyterLab at 1400 px, every cell run."""
    root = tmp_path_factory.mktemp("lab")
    jupyterlab.prepare_explorer(root, database)
    with jupyterlab.JupyterLab(root) as lab:
        try:
            with jupyterlab.open_explorer(chromium, lab, (1400, SCREEN_HEIGHT)) as session:
                yield session
        except browser.BrowserError as exc:
            pytest.fail(f"{exc}\nJupyterLab's log:\n{lab.log()}")


@pytest.mark.parametrize("width", [1400, 1024])
def test_the_heatmap_fits_jupyterlabs_output_area(chromium, explorer_tab, width):
    chromium.resize(explorer_tab, (width, SCREEN_HEIGHT))
    chromium.wait(1.0)
    layout = chromium.evaluate(explorer_tab, browser.LAYOUT_JS)
    assert len(layout) == 1, layout
    assert browser.layout_problems(layout) == [], layout
    assert layout[0]["smallestText"] >= 9


def _click_cell(chromium, session, model: str, language: str, question_type: str) -> dict:
    """Click the overview's cell with the mouse, once the chart has stopped moving (a resize or a new metric
    redraws it: the cell measured before would be a click beside it), and wait until the comparison marks
    `model` as chosen."""
    position, deadline = None, time.monotonic() + 30
    while True:
        measured = jupyterlab.cell_centre(chromium, session, model, language, question_type)
        if measured is not None and measured == position or time.monotonic() > deadline:
            break
        position = measured
        chromium.wait(0.5)
    assert position is not None, f"the heatmap has no cell {model}, {language}, {question_type}"
    chromium.click(session, *position)
    try:
        chromium.wait_for(
            session,
            f"(() => {{ const c = document.querySelector('.calmqa-chosen .calmqa-label');"
            f" return !!c && c.innerText.startsWith({model!r}); }})()",
            timeout=60,
            what=f"the comparison to mark {model}'s answers as chosen",
        )
    except browser.BrowserError as exc:
        pytest.fail(f"a click on the cell {model} x {language} ({question_type}) changed nothing: {exc}")
    return jupyterlab.comparison(chromium, session)


# Choose an option of the explorer's dropdowns by its text (ipywidgets writes its spaces as no-break spaces).
SELECT_METRIC_JS = """((title) => {
  const text = o => o.text.replace(/\\u00a0/g, ' ');
  const select = Array.from(document.querySelectorAll('.jp-OutputArea-output select'))
    .find(s => Array.from(s.options).some(o => text(o) === title));
  select.selectedIndex = Array.from(select.options).findIndex(o => text(o) === title);
  select.dispatchEvent(new Event('change', {bubbles: true}));
  return true;
})"""


def test_a_click_on_a_cell_compares_its_answers(chromium, explorer_tab):
    chromium.resize(explorer_tab, (1400, SCREEN_HEIGHT))
    before = jupyterlab.comparison(chromium, explorer_tab)
    assert before["chosen"] is None, "a model is marked as chosen before any click"

    first = _click_cell(chromium, explorer_tab, "GPT-4o", "Arabic", "specific")
    assert first["text"] != before["text"]
    assert "Chosen: GPT-4o, Arabic, culturally specific questions" in first["output"]
    # Arabic answers run right to left.
    directions = chromium.evaluate(
        explorer_tab,
        "Array.from(document.querySelectorAll('.calmqa-chosen .calmqa-text')).map(t => getComputedStyle(t).direction)",
    )
    assert directions and directions[0] == "rtl", directions

    # Another metric redraws the chart: a click on it must still reach the explorer.
    chromium.evaluate(explorer_tab, f"{SELECT_METRIC_JS}('% with repetitions (of the answers the provider gave)')")
    chromium.wait_for(
        explorer_tab,
        "Array.from(document.querySelectorAll('.vega-embed svg.marks text'))"
        ".some(t => t.textContent.startsWith('% with repetitions'))",
        timeout=60,
        what="the heatmap of repetitions",
    )
    second = _click_cell(chromium, explorer_tab, "Llama 3 70B", "Hindi", "agnostic")
    assert second["text"] != first["text"]
    assert "Chosen: Llama 3 70B, Hindi, culturally agnostic questions" in second["output"]
    assert "repetition" in second["text"]


@pytest.fixture(scope="module")
def study_explorer_tab(chromium, tmp_path_factory, udhr_folder):
    """The explorer open in JupyterLab at 1400 px on the example study's database, every cell run."""
    from analysis.core import paths
    from analysis.pipeline.build import build

    root = tmp_path_factory.mktemp("study-lab")
    db_path = root / "example.duckdb"
    build(paths.DATA / "examples" / "study", db_path, progress=False)
    jupyterlab.prepare_explorer(root, db_path)
    with jupyterlab.JupyterLab(root) as lab:
        try:
            with jupyterlab.open_explorer(chromium, lab, (1400, SCREEN_HEIGHT)) as session:
                yield session
        except browser.BrowserError as exc:
            pytest.fail(f"{exc}\nJupyterLab's log:\n{lab.log()}")


def _choose_metric(chromium, session, title: str) -> None:
    chromium.evaluate(session, f"{SELECT_METRIC_JS}({title!r})")
    chromium.wait_for(
        session,
        f"Array.from(document.querySelectorAll('.vega-embed svg.marks text')).some(t => t.textContent.startsWith({title!r}))",
        timeout=60,
        what=f"the heatmap of {title}",
    )


def test_a_study_s_metric_and_rating_criterion_are_explored_to_their_answers(chromium, study_explorer_tab):
    """The example study's own metric and rating criterion, chosen in the explorer, draw their heatmap; a click
    on a cell shows its answers with the metric's values and the ratings, and says what the cell holds."""
    _choose_metric(chromium, study_explorer_tab, "score (mean; higher is better)")
    scored = _click_cell(chromium, study_explorer_tab, "Beta 70B", "Hausa", "factual")
    assert "Chosen: Beta 70B, Hausa, factual questions" in scored["output"]
    assert "score " in scored["text"] and "over 10 answers" in scored["output"]
    _choose_metric(chromium, study_explorer_tab, "human rating: fluency (mean level, 1 poor, 2 fair, 3 good)")
    rated = _click_cell(chromium, study_explorer_tab, "Gamma Mini", "Swahili", "opinion")
    assert "Chosen: Gamma Mini, Swahili, opinion questions" in rated["output"]
    assert "human ratings: " in rated["text"] and "poor: " in rated["output"] and "good: " in rated["output"]
