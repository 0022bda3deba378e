"""Every report, opened in headless Chromium with the network off: charts drew, no console error, no
request left the file, charts are linked, and text from the data never runs as HTML or script.

Reports are built from the real database (every notebook `make figures` runs, by the `built_runs`
fixture of conftest.py), into tmp folders; Chromium is Debian's `chromium` (the set-up installs it:
`make setup`).
"""

import csv
import gzip
import json
import re
import shutil
from pathlib import Path

import altair as alt
import nbformat
import polars as pl
import pytest
from tiny_release import write_release

from analysis import store
from analysis.core import files, paths
from analysis.pipeline.build import build
from analysis.reporting import browser, provenance, run

NOTEBOOK_NAMES = run.notebook_names()
XSS_SCRIPT = "<script>window.__calmqa_xss = 'script'</script>"
XSS_IMG = "<img src=x onerror=\"window.__calmqa_xss = 'img'\">"
PAYLOAD = f"Payload {XSS_SCRIPT} and {XSS_IMG} end"


def _chart_views_state(chrome, session) -> dict:
    return chrome.evaluate(
        session,
        """(() => {
      const views = window.calmqaViews || [];
      const read = (v, name) => { try { return v.signal(name); } catch (e) { return undefined; } };
      return {highlights: views.map(v => read(v, 'calmqa_highlight'))};
    })()""",
    )


def _click_first_heatmap(chrome, session) -> dict:
    """Click a quarter into the plot of the first linked, unfaceted chart; return every chart's highlight."""
    position = chrome.evaluate(
        session,
        """(() => {
      const views = window.calmqaViews || [];
      const read = (v, name) => { try { return v.signal(name); } catch (e) { return undefined; } };
      const view = views.find(v => read(v, 'calmqa_pick') !== undefined && read(v, 'width') > 0);
      if (!view) { return null; }
      view.container().scrollIntoView();
      const box = view.container().querySelector('canvas, svg').getBoundingClientRect();
      const origin = view.origin();
      return [box.left + origin[0] + view.width() * 0.25, box.top + origin[1] + view.height() * 0.25];
    })()""",
    )
    if position is None:
        return {"clicked": False}
    chrome.click(session, *position)
    return {"clicked": True, **_chart_views_state(chrome, session)}


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_report_renders_offline_with_linked_charts(chromium, built_reports, name):
    page = built_reports / "reports" / f"{name}.html"
    result = chromium.open(page, actions=_click_first_heatmap)
    assert result.problems == [], f"{page.name}: " + "; ".join(result.problems)
    figures = list((built_reports / "figures" / name).glob("*.png"))
    assert result.charts >= (1 if figures else 0), f"{name} saved figures but shows no chart"
    if result.values.get("clicked"):
        highlights = [h for h in result.values["highlights"] if h is not None]
        assert highlights and highlights[0], "a click on a heatmap cell highlighted nothing"
        assert all(h == highlights[0] for h in highlights), f"charts disagree on the highlight: {highlights}"
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?//""", html)


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_report_starts_with_a_summary_and_carries_its_provenance(built_reports, database, name):
    record = provenance.read(built_reports / "reports" / f"{name}.html")
    assert record["summary"] and len(record["summary"].split()) >= 10, f"{name} does not start with a summary"
    assert record["database_sha256"] == files.sha256(database)
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?|unknown", record["commit"])
    figures = built_reports / "figures" / name
    # Every figure is drawn for print too.
    assert {p.stem for p in figures.glob("*.pdf")} == {p.stem for p in figures.glob("*.png")}


# What a reader sees of a page: its title, its links, its tables' cells and whether a table is cut.
READER_VIEW_JS = """(() => {
  // An excerpt of a long text is one by design (its column says so); every other cell is whole.
  const cells = Array.from(document.querySelectorAll('td, th'))
    .filter(c => !(c.getAttribute('headers') || '').endsWith('-excerpt'))
    .map(c => c.innerText.trim());
  const tables = Array.from(document.querySelectorAll('table'));
  const cut = tables.filter(t => {
    const box = t.parentElement;
    return box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX !== 'visible'
      || t.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
  }).map(t => (t.querySelector('caption, .gt_title') || t).innerText.slice(0, 80));
  const toc = document.querySelector('nav.calmqa-toc');
  const tocTargets = toc ? Array.from(toc.querySelectorAll('a')).map(a => a.getAttribute('href').slice(1)) : [];
  const provenance = document.querySelector('.calmqa-provenance');
  return {
    title: document.title,
    indexLinks: Array.from(document.querySelectorAll('a[href="index.html"]')).length,
    text: document.body.innerText,
    cells: cells,
    polarsTables: document.querySelectorAll('table.dataframe').length,
    cutTables: cut,
    pageHeight: document.documentElement.scrollHeight,
    screenHeight: window.innerHeight,
    toc: !!toc,
    missingTargets: tocTargets.filter(id => !document.getElementById(id)),
    provenanceBreak: provenance ? getComputedStyle(provenance).wordBreak : null,
  };
})()"""
POLARS_DTYPE = re.compile(r"^(str|bool|null|i8|i16|i32|i64|u8|u16|u32|u64|f32|f64|date|datetime\[.*\]|list\[.*\])$")


def _parameter_names(name: str) -> set[str]:
    """The names of a notebook's parameters that only a notebook user would know (snake_case ones)."""
    import ast

    notebook = nbformat.read(paths.NOTEBOOKS / f"{name}.ipynb", as_version=4)
    source = next(c.source for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assigned = {t.id for node in ast.parse(source).body if isinstance(node, ast.Assign) for t in node.targets}
    return {n for n in assigned if "_" in n} - {"db_path", "output_dir"}


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_report_reads_as_a_report(chromium, built_reports, name):
    """A reader's view: a real title, a way back to the index, tables for people (no polars dump, no cut
    table or cell), a table of contents on a page longer than two screens, a provenance line that does
    not break words, and no text addressed to whoever runs the notebook."""
    page = built_reports / "reports" / f"{name}.html"
    view = chromium.open(
        page, viewport=(1400, 900), actions=lambda chrome, session: chrome.evaluate(session, READER_VIEW_JS)
    ).values
    title = provenance.read(page)["title"]
    assert view["title"].startswith(title) and view["title"] not in ("Notebook", name), view["title"]
    assert view["indexLinks"] >= 1, f"{name} has no link back to the index"
    assert "shape: (" not in view["text"] and view["polarsTables"] == 0, f"{name} shows a polars frame as it prints"
    dtype_cells = [c for c in view["cells"] if POLARS_DTYPE.match(c)]
    assert not dtype_cells, f"{name} has a dtype row or null cells: {dtype_cells[:5]}"
    assert not [c for c in view["cells"] if c in ("…", "...") or c.endswith("…")], (
        f"{name} cuts a table's rows or a cell"
    )
    assert not [c for c in view["cells"] if len(c) > 1 and c[0] == c[-1] == '"'], f"{name} quotes its strings"
    assert not view["cutTables"], f"{name}: tables wider than the page at 1400 px: {view['cutTables']}"
    if view["pageHeight"] > 2 * view["screenHeight"]:
        assert view["toc"], f"{name} is longer than two screens and has no table of contents"
    assert not view["missingTargets"], f"{name}: contents entries lead nowhere: {view['missingTargets']}"
    assert view["provenanceBreak"] not in ("break-all", None)
    spoken = [p for p in _parameter_names(name) if p in view["text"]]
    assert not spoken, f"{name} addresses notebook users in the report (parameters {spoken})"
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", html), f"{name} would fetch a font or style"


def test_index_links_every_report_with_thumbnail_and_one_provenance(chromium, built_reports, database):
    page = built_reports / "reports" / "index.html"

    def look(chrome, session):
        return chrome.evaluate(
            session,
            """Array.from(document.images).map(i => ({
            natural: i.naturalWidth / i.naturalHeight, shown: i.getBoundingClientRect().width / i.getBoundingClientRect().height}))""",
        )

    result = chromium.open(
        page, viewport=(1400, 900), actions=lambda chrome, session: {"images": look(chrome, session)}
    )
    assert result.problems == []
    html = page.read_text(encoding="utf-8")
    for name in NOTEBOOK_NAMES:
        assert f'href="{name}.html"' in html
    links = re.findall(r'<h2><a href="([^"]+)\.html"', html)
    assert links[0] == run.REPRODUCTION_NOTEBOOK, "the paper reproduction is not the first report of the index"
    assert "What to read first" in html
    with_figures = [n for n in NOTEBOOK_NAMES if list((built_reports / "figures" / n).glob("*.png"))]
    assert html.count('src="data:image/png;base64,') == len(with_figures)
    images = result.values["images"]
    assert len(images) == len(with_figures)
    stretched = [i for i in images if abs(i["shown"] / i["natural"] - 1) > 0.02]
    assert not stretched, f"thumbnails not at their aspect ratio: {stretched}"
    # One provenance for the page: the database's hash once, not once per report.
    assert html.count(files.sha256(database)) == 1


def test_the_checker_fails_on_blank_charts_requests_and_console_errors(chromium, tmp_path):
    """The detector can fail: Altair's default HTML (libraries from a CDN) and a page logging an error."""
    chart = alt.Chart(pl.DataFrame({"a": [1, 2]})).mark_bar().encode(x="a:Q")
    cdn_page = tmp_path / "cdn.html"
    chart.save(cdn_page)
    result = chromium.open(cdn_page, render_timeout=5)
    assert result.blank_charts and any(r.startswith("http") for r in result.requests)
    error_page = tmp_path / "error.html"
    error_page.write_text("<html><body><script>console.error('boom'); undefinedCall();</script></body></html>")
    result = chromium.open(error_page, render_timeout=2)
    assert any("boom" in e for e in result.console_errors) and any("undefinedCall" in e for e in result.console_errors)


# ------------------------------------------------------------------------- text from data is text


def _poison(folder: Path) -> None:
    """Put the payload into a category, question texts and answers of the tiny release."""
    categories = folder / "categories-metadata.csv"
    with open(categories, newline="", encoding="utf-8") as fh:
        rows = [[PAYLOAD if cell == "language, art and literature" else cell for cell in row] for row in csv.reader(fh)]
    with open(categories, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    path = folder / "datasets" / "dataset-specific-german.json.gz"
    data = json.loads(gzip.decompress(path.read_bytes()))
    for entry in data["entries"]:
        question = entry["question"]
        if question["category"] == "language, art and literature":
            question["category"] = PAYLOAD
        if not question["human_evaluated"]:  # the rated question must keep the text its rating quotes
            question["translations"]["German"]["text"] += " " + PAYLOAD
        for answer in entry["answers"]:
            for translation in answer["translations"].values():
                translation["text"] = PAYLOAD + " " + translation["text"]
    path.write_bytes(gzip.compress(json.dumps(data, ensure_ascii=False).encode("utf-8")))


PROBE_CELLS = [
    "from IPython.display import HTML, Markdown, display\n"
    "import polars as pl\n"
    "from analysis import store\n"
    "from analysis.reporting import notebook\n"
    "from analysis.analyses import answers as answers_query\n"
    "from analysis.viz import answers as answer_views, export, heatmap\n"
    "notebook.setup()\n"
    "con = store.connect(db_path)\n"
    "answers = answers_query.load_answers(con)\n"
    "display(Markdown('Summary: ' + ' '.join(answers['text'].unique().sort().to_list())))",
    "display(answers.select('question_text', 'text'))",
    "cells = answers.group_by('question_text', 'model_name').agg(n=pl.len())\n"
    "export.save_figure(heatmap.heatmap(cells, x='model_name', y='question_text', value='n', title='probe'),"
    " cells, output_dir, 'probe')",
    "display(HTML(answer_views.answers_html(answers, False)))",
]


def test_text_from_data_never_runs_in_a_report(chromium, tmp_path):
    source = write_release(tmp_path / "release")
    _poison(source)
    database = tmp_path / "poisoned.duckdb"
    build(source, database, verify=False)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(paths.NOTEBOOKS / "01_dataset_overview.ipynb", notebooks)
    probe = nbformat.v4.new_notebook(metadata=nbformat.read(notebooks / "01_dataset_overview.ipynb", 4).metadata)
    parameters = nbformat.v4.new_code_cell('db_path = ""\noutput_dir = ""', metadata={"tags": ["parameters"]})
    probe.cells = [parameters, *(nbformat.v4.new_code_cell(c) for c in PROBE_CELLS)]
    nbformat.write(probe, notebooks / "probe.ipynb")
    for name in ("01_dataset_overview", "probe"):
        page = run.run_notebook(
            name,
            db_path=database,
            figures_root=tmp_path / "figures",
            reports_root=tmp_path / "reports",
            build_root=tmp_path / "build",
            notebooks_root=notebooks,
            # The copy runs elsewhere: the claims its parameter names relative to notebooks/ are the project's.
            parameters={"claims_dir": str(paths.PAPER_CLAIMS)} if name == "01_dataset_overview" else None,
        )

        def inspect(chrome, session):
            return chrome.evaluate(
                session,
                "({xss: window.__calmqa_xss || null, text: document.body.innerText,"
                " svgText: Array.from(document.querySelectorAll('svg text'))"
                ".map(t => t.textContent).join(' ')})",
            )

        result = chromium.open(page, actions=inspect)
        assert result.values["xss"] is None, f"{name}: the payload ran ({result.values['xss']})"
        assert result.problems == [], f"{name}: " + "; ".join(result.problems)
        shown = result.values["text"] + result.values["svgText"]
        assert "<script>" in shown or "<img" in shown, f"{name}: the payload is not shown as text"


# ------------------------------------------------------------------------- every chart fits its place


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_every_chart_fits_its_place_at_1024_and_1400_px(chromium, built_reports, name):
    """In a window 1024 or 1400 px wide, no chart is wider than the report's output area, and no text of
    a chart (a cell's label above all) is drawn under 9 px: a chart too wide for its place and shrunk to
    fit it fails on its text. At 1400 px the report, its folds closed, is under 8,000 px tall."""
    page = built_reports / "reports" / f"{name}.html"
    for width in (1400, 1024):
        values = chromium.open(
            page,
            viewport=(width, 900),
            actions=lambda chrome, session: {
                "layout": chrome.evaluate(session, browser.LAYOUT_JS),
                "height": chrome.evaluate(session, "document.documentElement.scrollHeight"),
            },
        ).values
        layout = values["layout"]
        assert browser.layout_problems(layout) == [], f"{name} at {width} px"
        assert all(chart["smallestText"] is None or chart["smallestText"] >= 9 for chart in layout)
        if width == 1400:
            assert values["height"] < 8000, f"{name} is {values['height']:,} px tall at 1400 px"


LAYOUT_PAGE = """<!DOCTYPE html><html><body style="margin: 0">
<div class="jp-OutputArea-output" style="width: 600px">
<div class="vega-embed"><svg class="marks" width="%(width)s" height="60" viewBox="0 0 %(width)s 60" %(style)s>
<text class="role-title-text" x="10" y="20" font-size="12">%(title)s</text>
<text x="10" y="40" font-size="9">42</text></svg></div></div></body></html>"""


def test_the_layout_check_finds_a_chart_too_wide_and_one_shrunk_to_fit(chromium, tmp_path):
    pages = {
        "fits": {"width": 500, "style": "", "title": "fits"},
        "too wide": {"width": 900, "style": "", "title": "too wide"},
        "shrunk": {"width": 900, "style": 'style="max-width: 100%; height: auto"', "title": "shrunk"},
    }
    found = {}
    for name, values in pages.items():
        path = tmp_path / f"{name.replace(' ', '_')}.html"
        path.write_text(LAYOUT_PAGE % values, encoding="utf-8")
        layout = chromium.open(
            path,
            viewport=(1024, 600),
            actions=lambda chrome, session: {"layout": chrome.evaluate(session, browser.LAYOUT_JS)},
        ).values["layout"]
        found[name] = browser.layout_problems(layout)
    assert found["fits"] == []
    assert found["too wide"] == ["too wide: 900 px wide, 300 px wider than its place"]
    assert len(found["shrunk"]) == 1 and "text drawn 6 px high, under 9 px" in found["shrunk"][0]


# ------------------------------------------------------------------------- a report sent on its own

# Paths of the repository and words of its tracker, which mean nothing to a reader of a report alone.
REPOSITORY_WORDS = re.compile(
    r"\b(?:analysis|data|docs|notebooks|tests|scripts|bench|build)/[\w./*-]*|\b\w+\.py\b|\bissues? #?\d+|\bhelper\b",
    re.IGNORECASE,
)


def _visible_text(page: str) -> str:
    import html as html_module

    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.DOTALL)
    return html_module.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_a_report_stands_alone(built_reports, name):
    """What a recipient with the report and the folders beside it gets: every link beside the report
    leads to a file that exists (the methods page, the other reports, each chart's CSV, SVG and PDF, each
    table's CSV and LaTeX), the papers' items link to arXiv, every table has a caption, the navigation and
    a print stylesheet are there, and the text names no path of the repository nor its tracker."""
    reports = built_reports / "reports"
    page = (reports / f"{name}.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"#]+)(?:#[^"]*)?"', page)
    local = [link for link in links if not link.startswith(("http://", "https://", "data:"))]
    missing = sorted({link for link in local if not (reports / link).is_file()})
    assert not missing, f"{name} links to files that do not exist: {missing}"
    assert "methods.html" in local and (reports / "methods.html").is_file()
    # Every chart links to its files; every table saved beside the report to its CSV and LaTeX.
    figures = sorted(p.stem for p in (built_reports / "figures" / name).glob("*.svg"))
    for figure in figures:
        for extension in ("csv", "svg", "pdf"):
            assert f"files/{name}/{figure}.{extension}" in local, f"{name}: no link to {figure}.{extension}"
    for tex in (built_reports / "figures" / name).glob("*.tex"):
        assert tex.with_suffix(".csv").is_file(), f"{tex.name} has no CSV beside it"
        assert f"files/{name}/{tex.name}" in local, f"{name}: no link to {tex.name}"
    # Every table has a caption: great_tables' title, or the claims table's <caption>.
    without_scripts = re.sub(r"<script.*?</script>", " ", page, flags=re.DOTALL)
    tables = re.findall(r"<table\b.*?</table>", without_scripts, flags=re.DOTALL)
    uncaptioned = [
        t[:200] for t in tables if not re.search(r'class="gt_heading gt_title[^"]*"[^>]*>\s*\S|<caption>\s*\S', t)
    ]
    assert not uncaptioned, f"{name} has tables without a caption: {uncaptioned}"
    # A table of its own has its CSV and LaTeX; the paper's numbers beside a table are a view of it, not saved.
    own_tables = re.sub(r'<details class="calmqa-beside".*?</details>', " ", page, flags=re.DOTALL)
    shown_tables = len(re.findall(r'<table class="gt_table"', own_tables))
    assert len(list((built_reports / "figures" / name).glob("*.tex"))) >= shown_tables
    # The papers' items it names link to their place on arXiv.
    if re.search(r"\b(Figure|Table) \d+", _visible_text(page)):
        assert re.search(r'href="https://arxiv\.org/html/\d{4}\.\d{5}v3(#[A-Z][\w.]*)?"', page)
    # Navigation (the index, the other reports, previous or next) and a print stylesheet.
    assert 'class="calmqa-sidebar"' in page and 'href="index.html"' in page
    assert re.search(r'rel="(prev|next)"', page) and "@media print" in page
    words = sorted({m.group(0) for m in REPOSITORY_WORDS.finditer(_visible_text(page))})
    assert not words, f"{name} names the repository's paths or tracker: {words}"


def test_a_copied_reports_folder_keeps_every_link_and_anchor(built_reports, tmp_path):
    """The reports folder copied elsewhere on its own (sent to someone): every local link of every page
    (the reports, the index, the methods page) leads to a file of the copy, and every anchor to an id of
    its page."""
    import html as html_module

    copy = tmp_path / "shared-reports"
    shutil.copytree(built_reports / "reports", copy)
    pages = sorted(copy.glob("*.html"))
    ids = {page.name: set(re.findall(r'\sid="([^"]+)"', page.read_text(encoding="utf-8"))) for page in pages}
    broken = []
    for page in pages:
        text = re.sub(r"<script.*?</script>", " ", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for href in map(html_module.unescape, re.findall(r'href="([^"]+)"', text)):
            if href.startswith(("http://", "https://", "data:", "mailto:")):
                continue
            target, _, anchor = href.partition("#")
            if target and not (copy / target).is_file():
                broken.append(f"{page.name}: {href} (no such file)")
            elif anchor and (target or page.name) in ids and anchor not in ids[target or page.name]:
                broken.append(f"{page.name}: {href} (no such anchor)")
    assert not broken, broken


def test_the_methods_page_has_every_section_a_report_links_to(built_reports):
    reports = built_reports / "reports"
    methods = (reports / "methods.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'id="([^"]+)"', methods))
    for page in reports.glob("[0-9]*.html"):
        for anchor in re.findall(r'href="methods\.html#([^"]+)"', page.read_text(encoding="utf-8")):
            assert anchor in anchors, f"{page.name} links to a methods section that does not exist: {anchor}"


# A cell of the first model x language heatmap of a report that has one, clicked at its middle.
_CLICK_A_CELL_JS = """(() => {
  const chart = document.querySelector('.calmqa-drillable');
  if (!chart) { return null; }
  chart.scrollIntoView();
  const cells = Array.from(chart.querySelectorAll('svg .mark-rect path')).filter(p => p.getBoundingClientRect().width > 5);
  const box = cells[Math.floor(cells.length / 3)].getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
})()"""
# What the drill-down panel shows: its heading, and per answer its model and whether it is marked chosen.
_DRILL_STATE_JS = """(() => {
  const panel = document.querySelector('.calmqa-drill');
  if (!panel) { return {hash: location.hash, panel: false}; }
  const head = panel.querySelector('.calmqa-drill-head');
  return {
    hash: location.hash, panel: true, head: head ? head.innerText : panel.innerText,
    questions: Array.from(panel.querySelectorAll('.calmqa-question')).map(q => ({
      meta: q.querySelector('.calmqa-meta').innerText,
      first: q.querySelector('.calmqa-answer').getAttribute('data-model'),
      chosen: Array.from(q.querySelectorAll('.calmqa-answer.calmqa-chosen')).map(a => a.getAttribute('data-model')),
      models: q.querySelectorAll('.calmqa-answer').length,
    })),
  };
})()"""


def test_a_heatmap_cell_of_a_copied_report_shows_its_answers_offline_and_its_url_opens_it(
    chromium, built_reports, database, tmp_path
):
    """The reports folder copied elsewhere, opened from the disk with the network off: a click on a cell of
    report 03's first heatmap shows, under it, that language's questions of that type, each with every
    model's answer and the clicked model's first and marked; the page's URL then names the cell, and
    opening that URL opens the same answers. Nothing is requested but files of the folder."""
    from urllib.parse import parse_qs

    copy = tmp_path / "sent"
    shutil.copytree(built_reports / "reports", copy)
    page = copy / "03_surface_quality.html"

    def click(chrome, session):
        position = chrome.evaluate(session, _CLICK_A_CELL_JS)
        assert position, "report 03 has no heatmap a click can drill into"
        chrome.click(session, *position)
        chrome.wait(1.0)
        return chrome.evaluate(session, _DRILL_STATE_JS)

    clicked = chromium.open(page, viewport=(1400, 900), actions=click)
    assert clicked.problems == [], clicked.problems
    state = clicked.values
    assert state["panel"] and state["questions"], f"no answers under the clicked cell: {state}"
    cell = {k: v[0] for k, v in parse_qs(state["hash"].removeprefix("#answers:")).items()}
    assert {"model", "language", "type"} <= set(cell)
    # The oracle is the database: that language's questions of that type, and the answers to each.
    with store.connect(database) as con:
        expected = con.execute(
            "SELECT count(*) FROM questions WHERE language = ? AND question_type = ?", [cell["language"], cell["type"]]
        ).fetchone()[0]
        answered = dict(
            con.execute(
                "SELECT q.name, count(*) FROM answers a JOIN questions q USING (question_id) "
                "WHERE q.language = ? AND q.question_type = ? GROUP BY q.name",
                [cell["language"], cell["type"]],
            ).fetchall()
        )
    assert f"of {expected} " in state["head"] and cell["model"] in state["head"]
    for question in state["questions"]:
        assert question["meta"].startswith(f"{cell['language']} · {cell['type']}")
        assert question["first"] == cell["model"] and question["chosen"] == [cell["model"]]
        assert question["models"] == answered[question["meta"].rsplit(" · ", 1)[-1]]
    # The cell as a URL: a fresh tab on it shows the same answers.
    with chromium.page(page.resolve().as_uri() + state["hash"], (1400, 900)) as session:
        for _ in range(40):
            chromium.wait(0.25)
            opened = chromium.evaluate(session, _DRILL_STATE_JS)
            if opened["panel"] and opened.get("questions"):
                break
    assert opened["head"] == state["head"] and opened["questions"] == state["questions"]


def test_notebook_runs_leave_nothing_in_the_notebooks_folder(built_reports):
    """Papermill runs with the notebooks' folder as its working folder; the kernels' sockets live in a
    folder of each run's own, so the notebooks' folder holds the notebooks only."""
    assert sorted(p.name for p in paths.NOTEBOOKS.iterdir() if p.suffix != ".ipynb" and p.name != "__pycache__") == []
