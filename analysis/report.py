"""Notebooks to figures and self-contained HTML reports.

`setup_notebook()` is the first call of every notebook: it enables the offline chart renderer, so
that charts draw in JupyterLab and in the exported report with no network. `run_notebook()` is what
`make figures` runs for each notebook: Papermill execution with the project's kernel, then an HTML
report; outputs are written beside their targets and moved into place only on success.

A report holds everything it needs: the Vega JavaScript once (before the first chart), a small
script that links the charts of the page (a click on a heatmap cell highlights its row and column
values in every chart, see `plots.PICK`), and its provenance: build time, git commit and sha256 of
the database (`provenance()`; `index.py` lists the reports from it). Text from data stays text:
chart specs are embedded with `<`, `>` and `&` escaped, and Markdown is rendered with raw HTML
escaped, so a question or answer holding `<script>` shows as those characters.
"""

import contextlib
import datetime
import fcntl
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import altair as alt
import polars as pl

from . import paths, plots
from .errors import NotebookFailed

_bundle_emitted = False
# The report that sets every number the papers print against the suite's: it reads the figures of the
# other notebooks, so it runs after them (`notebook_names`, the Makefile) and comes first in the index.
REPRODUCTION_NOTEBOOK = "08_paper_reproduction"

# Runs once per page: every chart registers its view; a pick in one sets the highlight of all.
LINK_SCRIPT = """
(function () {
  if (window.calmqaLink) { return; }
  var views = [];
  window.calmqaViews = views;
  function hasSignal(view, name) {
    try { view.signal(name); return true; } catch (e) { return false; }
  }
  window.calmqaLink = function (view) {
    views.push(view);
    if (!hasSignal(view, %(pick)s)) { return; }
    view.addSignalListener(%(pick)s, function (name, value) {
      var picked = [];
      Object.keys(value || {}).forEach(function (key) {
        if (Array.isArray(value[key])) { picked = picked.concat(value[key].map(String)); }
      });
      views.forEach(function (other) {
        if (hasSignal(other, %(highlight)s)) { other.signal(%(highlight)s, picked).runAsync(); }
      });
    });
  };
})();
""" % {"pick": json.dumps(plots.PICK), "highlight": json.dumps(plots.HIGHLIGHT)}

CHART_TEMPLATE = """<div id="%(id)s" class="calmqa-chart"></div>
<script type="text/javascript">
(function () {
  var element = document.getElementById(%(id_json)s);
  function fail(error) {
    element.textContent = "This chart could not be drawn: " + error;
    console.error("chart %(id)s:", error);
  }
  if (typeof vegaEmbed === "undefined") {
    fail("the Vega JavaScript is not on this page; run the notebook again from its first cell");
    return;
  }
  vegaEmbed(element, %(spec)s, %(options)s)
    .then(function (result) { if (window.calmqaLink) { window.calmqaLink(result.view); } })
    .catch(fail);
})();
</script>"""

# No action that opens a web page (the Vega editor): reports are read offline.
EMBED_OPTIONS = {"mode": "vega-lite", "actions": {"export": True, "source": False, "compiled": False, "editor": False}}


def script_json(value) -> str:
    """JSON that is safe inside a <script> element whatever strings it holds (no `</script>` can end it)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _offline_html_renderer(spec: dict, **metadata) -> dict:
    """Each chart as a container and a vega-embed call; the Vega JavaScript and the linking script
    are inlined once, before the first chart of the kernel's session.

    The bundle is wrapped in a function so that including it twice cannot redeclare its top-level
    names (it publishes vegaEmbed, vega and vegaLite on window).
    """
    global _bundle_emitted
    chart_id = f"calmqa-chart-{uuid.uuid4().hex[:12]}"
    page = CHART_TEMPLATE % {
        "id": chart_id, "id_json": json.dumps(chart_id), "spec": script_json(spec),
        "options": json.dumps(EMBED_OPTIONS),
    }
    if not _bundle_emitted:
        from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert

        bundle = import_vl_convert().javascript_bundle(vl_version=vl_version_for_vl_convert())
        page = (f"<script type=\"text/javascript\">(function(){{\n{bundle}\n}})();\n{LINK_SCRIPT}</script>\n"
                + page)
        _bundle_emitted = True
    return {"text/html": page}


alt.renderers.register("calmqa_offline", _offline_html_renderer)


def setup_notebook(max_rows: int = 5000) -> None:
    """Offline charts and readable tables, for JupyterLab and for the exported report alike."""
    alt.renderers.enable("calmqa_offline")
    alt.data_transformers.enable("default", max_rows=max_rows)
    pl.Config.set_tbl_rows(60)
    pl.Config.set_tbl_cols(30)
    pl.Config.set_fmt_str_lengths(60)


def notebook_names() -> list[str]:
    """The notebooks `make figures` runs, in order: those whose name starts with two digits, except 00;
    the reproduction report last, since it reads the figures of all the others."""
    names = sorted(p.stem for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))
    return sorted(names, key=lambda name: name == REPRODUCTION_NOTEBOOK)


def full_table(table: pl.DataFrame):
    """Every row of `table` as an HTML table (a displayed polars frame stops at `setup_notebook`'s row
    limit); cell text is escaped, so text from data never becomes markup."""
    from IPython.display import HTML

    return HTML(table.to_pandas().to_html(index=False, na_rep="", escape=True, border=0, classes="calmqa-table"))


def _report_exporter():
    """nbconvert's HTML exporter, with Markdown rendered as text: raw HTML in it is escaped."""
    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class ReportExporter(HTMLExporter):
        @pass_context
        def markdown2html(self, context, source):
            cell = context.get("cell", {})
            renderer = IPythonRenderer(
                escape=True, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options,
            )
            return MarkdownWithMath(renderer=renderer).render(source)

    exporter = ReportExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    # Empty URLs drop the last script tags that would load require.js and MathJax from a CDN.
    exporter.require_js_url = ""
    exporter.mathjax_url = ""
    return exporter


def markdown_to_html(source: str) -> str:
    """Markdown as the reports render it (raw HTML escaped), for pages built outside nbconvert."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    return MarkdownWithMath(renderer=IPythonRenderer(escape=True)).render(source)


_TITLE = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)


def _markdown_texts(notebook):
    """The Markdown of the notebook in order: its Markdown cells and the Markdown its code displayed."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            yield cell.source
        elif cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if output.get("output_type") in ("execute_result", "display_data"):
                    yield output.get("data", {}).get("text/markdown") or ""


def notebook_title(notebook) -> str | None:
    """The first level-one heading of the notebook, in a Markdown cell or in Markdown a code cell
    displayed: a notebook whose title depends on its data displays it with `titled`."""
    for text in _markdown_texts(notebook):
        match = _TITLE.search(text)
        if match:
            return match.group(1)
    return None


def first_markdown_output(notebook) -> str | None:
    """The notebook's summary: by the suite's convention, its first output, displayed as Markdown,
    without the title `titled` puts before it."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            if output.get("output_type") in ("execute_result", "display_data") and data:
                text = data.get("text/markdown")
                return _TITLE.sub("", text, count=1).strip() if text and text.lstrip().startswith("# ") else text
    return None


def titled(title: str, summary: str):
    """A notebook's data-dependent title and its summary, displayed as its first output (the report and
    the index take the title from it)."""
    from IPython.display import Markdown

    return Markdown(f"# {title}\n\n{summary}")


def git_commit(root: Path = paths.ROOT) -> str:
    """The checked-out commit, with `+dirty` when tracked files differ from it; `unknown` outside git."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if changed else "")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main_figure(figures: Path) -> str | None:
    """The figure a report is known by: the first PNG its notebook wrote (figures are written in order)."""
    pngs = sorted(figures.glob("*.png"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if figures.is_dir() else []
    return pngs[0].stem if pngs else None


def provenance(name: str, notebook, db_path: Path, figures: Path) -> dict:
    """What a report was built from; embedded in the report and read back by `index.py`."""
    return {
        "notebook": name,
        "title": notebook_title(notebook) or name,
        "summary": first_markdown_output(notebook),
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "database": Path(db_path).name,
        "database_sha256": file_sha256(Path(db_path)),
        "main_figure": main_figure(figures),
    }


PROVENANCE_ID = "calmqa-provenance"


def read_provenance(report: Path) -> dict | None:
    """The provenance embedded in a report by `to_html`, or None for a page without it."""
    match = re.search(rf'<script type="application/json" id="{PROVENANCE_ID}">(.*?)</script>',
                      report.read_text(encoding="utf-8"), re.DOTALL)
    return json.loads(match.group(1)) if match else None


def _provenance_html(record: dict) -> str:
    line = (f"Built {record['built']} from commit {record['commit']}; database {record['database']}, "
            f"sha256 {record['database_sha256']}.")
    return (f'<script type="application/json" id="{PROVENANCE_ID}">{script_json(record)}</script>\n'
            f'<p class="calmqa-provenance" style="font-size:0.8em;color:#555;margin:0.5em 1em">'
            f"{html.escape(line)}</p>\n")


def to_html(executed: Path, html_path: Path, record: dict | None = None) -> None:
    """A self-contained report of an executed notebook: code hidden, no script or style from the
    network, and, given `record`, its provenance at the top."""
    import nbformat

    body, _ = _report_exporter().from_notebook_node(nbformat.read(executed, as_version=4))
    if record is not None:
        body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + _provenance_html(record), body, count=1)
    tmp = html_path.with_name(f".{html_path.name}.tmp-{os.getpid()}")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, html_path)


def run_notebook(name: str, db_path: Path = paths.DATABASE, figures_root: Path = paths.FIGURES,
                 reports_root: Path = paths.REPORTS, build_root: Path = paths.BUILD,
                 parameters: dict | None = None, kernel: str = paths.KERNEL_NAME,
                 notebooks_root: Path = paths.NOTEBOOKS) -> Path:
    """Execute `notebooks/<name>.ipynb` into its figures folder and write `reports/<name>.html`.

    Figures (PNG, SVG, CSV, and a print PDF of each heatmap) go to a fresh folder that replaces the
    old one only when the notebook succeeded; a failed run keeps its executed copy under build/ for
    debugging and leaves no report.
    """
    import nbformat
    import papermill

    source = Path(notebooks_root) / f"{name}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"no notebook {source}")
    executed = build_root / "executed" / f"{name}.ipynb"
    # Every file of a run is private to its process until the run succeeded, so that two `make figures`
    # started at once cannot mix their outputs; the swap into place happens under a lock.
    running = executed.with_name(f".{name}.tmp-{os.getpid()}.ipynb")
    executed.parent.mkdir(parents=True, exist_ok=True)
    reports_root.mkdir(parents=True, exist_ok=True)
    figures_root.mkdir(parents=True, exist_ok=True)
    figures = figures_root / name
    report = reports_root / f"{name}.html"
    staging = figures_root / f".{name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    params = {"db_path": str(Path(db_path).resolve()), "output_dir": str(staging.resolve()), **(parameters or {})}
    if name == REPRODUCTION_NOTEBOOK:
        params.setdefault("figures_dir", str(Path(figures_root).resolve()))
    started = time.monotonic()
    try:
        try:
            _execute_with_retry(papermill, source, running, params, kernel, Path(notebooks_root))
        except papermill.PapermillExecutionError as exc:
            with _output_lock(figures_root, name):
                os.replace(running, executed)
                report.unlink(missing_ok=True)  # a report of an older run must not pass for this one
            raise NotebookFailed(source, executed, exc) from None
        record = provenance(name, nbformat.read(running, as_version=4), Path(db_path), staging)
        with _output_lock(figures_root, name):
            if figures.exists():
                shutil.rmtree(figures)
            if staging.exists():
                os.replace(staging, figures)
            to_html(running, report, record)
            os.replace(running, executed)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        running.unlink(missing_ok=True)
    print(f"{name}: {time.monotonic() - started:.1f} s -> {figures}, {report}", file=sys.stderr)
    return report


@contextlib.contextmanager
def _output_lock(figures_root: Path, name: str):
    with open(figures_root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _execute_with_retry(papermill, source: Path, executed: Path, params: dict, kernel: str, cwd: Path) -> None:
    # Parallel kernel starts can race for a port (papermill issue 511): one retry for that case only.
    for attempt in (1, 2):
        try:
            papermill.execute_notebook(
                str(source), str(executed), parameters=params, kernel_name=kernel,
                cwd=str(cwd), progress_bar=False, log_output=False,
            )
            return
        except papermill.PapermillExecutionError:
            raise
        except RuntimeError as exc:
            if attempt == 2 or "Kernel" not in str(exc):
                raise
