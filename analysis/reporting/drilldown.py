"""The reports' drill-down: a click on a cell of a model x language heatmap shows, under the chart, the
answers behind it (each question of that language and question type with every model's answer side by
side, the chosen model's first and marked), a page of questions at a time, with no kernel and no request
to any server: the answers travel with the reports folder.

`write(reports_root, con)` writes the answers into `reports/answers/`: `index.js` (which groups of
language and question type there are, their pages and their questions' count) and one file per page
of `QUESTIONS_PER_PAGE` questions (`g<N>-<page>.js`, numbered: no value of the data becomes a file
name). Each is a script that hands its data to the page (`calmqaAnswers.index(...)`,
`calmqaAnswers.page(...)`): a page opened from the disk (`file://`) may load a script beside it, never
read a data file. The questions' HTML is made here, by the code that makes the explorer's
(`viz.answers.question_html`: every text escaped), and the script only inserts it, so a page loads
only the files of the cells a reader opens.

A heatmap takes part when its chart names its model, language and question-type fields
(`viz.charts.DRILL_META` in its `usermeta`); the report (`reporting.html.to_html`) carries `SCRIPT`, and
`reporting.notebook`'s chart template hands each drawn chart to it. The chosen cell is the page's URL
(`#answers:model=...&language=...&type=...`): a link to it opens the report on that cell.
"""

import json
import shutil
from pathlib import Path

import duckdb
import polars as pl

from .. import store
from ..analyses import answers as answers_query
from ..analyses import dimensions
from ..core import files
from ..core.text import script_json
from ..viz import answers as answer_views

FOLDER = "answers"
INDEX_FILE = "index.js"
QUESTIONS_PER_PAGE = 5
# The answers written for a database, recorded beside them: the same database file (path, size, time)
# and the same code give the same files, so they are not written again.
STAMP_FILE = ".written-from.json"


# The report whose heatmaps a link to a cell opens on (every study gets it).
CELL_REPORT = "03_surface_quality.html"


def cell_link(model: str, language: str, question_type: str | None) -> str:
    """The address, in a reports folder, of the report opened on a cell's answers: the URL the page itself
    shows once the cell is clicked (`#answers:` and the fields as the browser's URLSearchParams writes them)."""
    from urllib.parse import urlencode

    fields = {"model": model, "language": language, **({"type": question_type} if question_type is not None else {})}
    return f"{CELL_REPORT}#answers:{urlencode(fields)}"


def _script_call(function: str, *arguments) -> str:
    """`calmqaAnswers.<function>(<arguments>);` with each argument as JSON that no text can break out of."""
    return f"calmqaAnswers.{function}({', '.join(script_json(a) for a in arguments)});\n"


def write(reports_root: Path, con: duckdb.DuckDBPyConnection) -> Path:
    """Write every answer of the database into `reports_root/answers/` (replacing what was there) and
    return the folder."""
    target = Path(reports_root) / FOLDER
    answers = answers_query.load_answers(con)
    has_surface = store.table_exists(con, answers_query.SURFACE_TABLE)
    orders = dimensions.Orders.of(con)
    staging = files.temporary_name(target)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    groups = []
    type_rank = {key: i for i, key in enumerate(orders.question_types)}
    language_rank = {language: i for i, language in enumerate(orders.languages)}
    keyed = answers.with_columns(
        _language=pl.col("language").replace_strict(language_rank, default=len(language_rank), return_dtype=pl.Int32),
        _type=pl.col("question_type").replace_strict(type_rank, default=len(type_rank), return_dtype=pl.Int32),
    )
    for number, ((language, question_type), frame) in enumerate(
        sorted(
            keyed.partition_by("language", "question_type", as_dict=True, maintain_order=True).items(),
            key=lambda item: (item[1]["_language"][0], item[1]["_type"][0], item[0][0], str(item[0][1])),
        )
    ):
        frame = frame.drop("_language", "_type")
        question_ids = frame["question_id"].unique(maintain_order=True).to_list()
        by_question = frame.partition_by("question_id", as_dict=True, maintain_order=True)
        pages = [question_ids[i : i + QUESTIONS_PER_PAGE] for i in range(0, len(question_ids), QUESTIONS_PER_PAGE)]
        for page, ids in enumerate(pages):
            shown = [answer_views.question_html(by_question[(i,)], has_surface, markdown=False) for i in ids]
            files.write_text(staging / f"g{number}-{page}.js", _script_call("page", f"g{number}", page, shown))
        groups.append(
            {
                "file": f"g{number}",
                "language": language,
                "questionType": question_type,
                "questions": len(question_ids),
                "pages": len(pages),
            }
        )
    labels = {key: orders.question_type_labels.get(key, key) for key in orders.question_types}
    files.write_text(
        staging / INDEX_FILE,
        _script_call("index", {"groups": groups, "questionTypes": labels, "perPage": QUESTIONS_PER_PAGE}),
    )
    files.replace_folder(staging, target)
    return target


def write_for(reports_root: Path, db_path: Path) -> Path:
    """`write` for the database at `db_path`, unless the answers beside the reports were written from this
    very file (its path, size and modification time) by this code."""
    target = Path(reports_root) / FOLDER
    stat = Path(db_path).stat()
    source = {
        "db": str(Path(db_path).resolve()),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "code": files.sha256(Path(__file__)) + files.sha256(Path(answer_views.__file__)),
    }
    stamp = target / STAMP_FILE
    if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")) == source:
        return target
    with store.connect(db_path) as con:
        write(reports_root, con)
    files.write_text(stamp, json.dumps(source) + "\n")
    return target


# The page's side of the drill-down. Each chart that names its cell's fields (`DRILL_META`) is handed to
# `calmqaDrillable` when drawn; a click on one of its cells (or the page's URL) opens the panel under it.
_SCRIPT_TEMPLATE = """
(function () {
  var root = %(folder)s + "/";
  var index = null, pages = {}, waiting = {}, panel = null, state = null, charts = [];
  window.calmqaAnswers = {
    index: function (data) { index = data; (waiting.index || []).forEach(function (f) { f(); }); },
    page: function (file, page, questions) {
      var key = file + "-" + page;
      pages[key] = questions;
      (waiting[key] || []).forEach(function (f) { f(); });
    }
  };
  function load(key, ready, failed) {
    if ((key === "index" && index) || pages[key]) { ready(); return; }
    (waiting[key] = waiting[key] || []).push(ready);
    var script = document.createElement("script");
    script.src = root + (key === "index" ? %(index_file)s : key + ".js");
    script.onerror = failed;
    document.head.appendChild(script);
  }
  function text(tag, words, css) {
    var element = document.createElement(tag);
    element.textContent = words;
    if (css) { element.className = css; }
    return element;
  }
  function button(words, action, disabled) {
    var element = text("button", words, "calmqa-drill-button");
    element.type = "button";
    element.disabled = !!disabled;
    element.addEventListener("click", action);
    return element;
  }
  function cellHash(cell) {
    var query = new URLSearchParams({model: cell.model, language: cell.language});
    if (cell.questionType !== null && cell.questionType !== undefined) { query.set("type", cell.questionType); }
    return "#answers:" + query.toString();
  }
  function hashCell() {
    if (location.hash.indexOf("#answers:") !== 0) { return null; }
    var query = new URLSearchParams(location.hash.slice("#answers:".length));
    if (!query.get("model") || !query.get("language")) { return null; }
    return {model: query.get("model"), language: query.get("language"), questionType: query.get("type")};
  }
  function group(cell) {
    return index.groups.filter(function (g) {
      return g.language === cell.language && (cell.questionType === null || cell.questionType === undefined
        || String(g.questionType) === String(cell.questionType));
    });
  }
  function close() {
    if (panel) { panel.remove(); panel = null; }
    state = null;
    if (location.hash.indexOf("#answers:") === 0) { history.replaceState(null, "", location.pathname + location.search); }
  }
  function render() {
    var groups = group(state.cell);
    panel.textContent = "";
    var head = document.createElement("div");
    head.className = "calmqa-drill-head";
    var type = state.cell.questionType;
    var typeLabel = (type !== null && type !== undefined) ? (index.questionTypes[type] || type) : "every question type";
    head.appendChild(text("strong", "Answers behind the cell: " + state.cell.model + " · " + state.cell.language + " · " + typeLabel));
    panel.appendChild(head);
    if (!groups.length) { panel.appendChild(text("p", "This report's answers hold no question of this language and type.")); return; }
    var g = groups[0];
    var first = state.page * index.perPage + 1, last = Math.min((state.page + 1) * index.perPage, g.questions);
    var where = text("span", " Questions " + first + "–" + last + " of " + g.questions + " (page " + (state.page + 1) + " of " + g.pages + "), every model's answer side by side, the chosen model's first. ", "calmqa-meta");
    head.appendChild(where);
    head.appendChild(button("◀ Previous", function () { show(state.cell, state.chart, state.page - 1); }, state.page <= 0));
    head.appendChild(button("Next ▶", function () { show(state.cell, state.chart, state.page + 1); }, state.page >= g.pages - 1));
    head.appendChild(button("Close", close));
    var link = text("a", "Link to this cell", "calmqa-drill-link");
    link.href = cellHash(state.cell);
    head.appendChild(link);
    var body = document.createElement("div");
    body.className = %(panel_class)s;
    body.innerHTML = pages[g.file + "-" + state.page].join("\\n");
    body.querySelectorAll(".calmqa-answers").forEach(function (answers) {
      Array.from(answers.children).forEach(function (card) {
        if (card.getAttribute(%(model_attribute)s) === state.cell.model) {
          card.classList.add(%(chosen_class)s);
          answers.insertBefore(card, answers.firstChild);
        }
      });
    });
    panel.appendChild(body);
  }
  function failure() {
    panel.textContent = "";
    panel.appendChild(text("p", "The answers behind this chart are in the folder " + root + " beside this report, which is missing here: copy the whole reports folder."));
  }
  function show(cell, chart, page) {
    if (!panel) {
      panel = document.createElement("section");
      panel.className = "calmqa-drill";
    }
    if (panel.previousSibling !== chart) { chart.parentNode.insertBefore(panel, chart.nextSibling); }
    state = {cell: cell, chart: chart, page: Math.max(page || 0, 0)};
    panel.textContent = "Loading the answers…";
    load("index", function () {
      var groups = group(cell);
      if (!groups.length) { render(); return; }
      state.page = Math.min(state.page, groups[0].pages - 1);
      load(groups[0].file + "-" + state.page, render, failure);
    }, failure);
    if (location.hash !== cellHash(cell)) { history.replaceState(null, "", cellHash(cell)); }
  }
  // A cell in the URL opens under the report's first chart that can show it.
  function openFromHash() {
    var cell = hashCell();
    if (!cell || !charts.length) { return; }
    show(cell, charts[0], 0);
    charts[0].scrollIntoView();
  }
  window.calmqaDrillable = function (view, element, fields) {
    charts.push(element);
    element.classList.add("calmqa-drillable");
    view.addEventListener("click", function (event, item) {
      var d = item && item.datum;
      if (!d || d[fields.model] === undefined || d[fields.language] === undefined) { return; }
      var type = fields.question_type ? d[fields.question_type] : null;
      show({model: String(d[fields.model]), language: String(d[fields.language]), questionType: type === undefined ? null : type}, element, 0);
    });
    if (charts.length === 1 && hashCell()) { setTimeout(openFromHash, 0); }
  };
  window.addEventListener("hashchange", function () { if (hashCell() && (!state || cellHash(state.cell) !== location.hash)) { openFromHash(); } });
})();
"""
_SCRIPT_NAMES = {
    "folder": json.dumps(FOLDER),
    "index_file": json.dumps(INDEX_FILE),
    "panel_class": json.dumps(answer_views.PANEL_CLASS),
    "model_attribute": json.dumps(answer_views.MODEL_ATTRIBUTE),
    "chosen_class": json.dumps(answer_views.CHOSEN_CLASS),
}
SCRIPT = _SCRIPT_TEMPLATE % _SCRIPT_NAMES  # noqa: UP031 - JavaScript braces would need escaping in a format string

STYLE = (
    answer_views.CSS
    + """<style>
.calmqa-drillable svg .mark-rect path { cursor: pointer; }
.calmqa-drill { border: 1px solid #bbb; border-radius: 4px; margin: 0.5em 0 1.2em 0; padding: 0.5em 0.8em;
  background: #fcfcfc; max-height: 48em; overflow-y: auto; }
.calmqa-drill-head { position: sticky; top: -0.5em; background: #fcfcfc; padding: 0.3em 0; z-index: 1; }
.calmqa-drill-button { margin-right: 0.4em; }
@media print { .calmqa-drill { display: none; } }
</style>"""
)


def head_html() -> str:
    """What a report's `<head>` gets for the drill-down: its style and its script."""
    return f'{STYLE}\n<script type="text/javascript">{SCRIPT}</script>\n'
