"""A report as HTML: self-contained, code hidden, nothing loaded from the network, Markdown rendered with
raw HTML escaped (so a question or answer holding `<script>` shows as those characters). At the top, the
report's provenance; beside it in a wide window (above it in a narrow one), its navigation: back to the
index, the previous and the next report, its sections, the papers' figures and tables it names (each
linked to its place on arXiv), the methods page and every report. Its `<title>` is the notebook's title.
Cells tagged `notebook-only` (text for whoever runs the notebook: what a parameter does) are left out.

A report reads on its own, sent to someone with the reports folder: its mentions of the methods link to
`methods.html` (written with the index from docs/methods.md), its figures and tables to the copies of
their files in the folder (`files/<notebook>/`), and a print stylesheet prints the report without its
navigation."""

import html
import re
from pathlib import Path

from ..analyses import paper_items
from ..core import files
from ..core.text import inert
from ..io.paper import PAPER_NAMES
from ..viz import export, tables
from . import drilldown, provenance

# The tag of cells that speak to whoever runs the notebook (its parameters), not to the report's reader.
NOTEBOOK_ONLY = "notebook-only"
SITE_NAME = "CaLMQA analysis"
INDEX_PAGE = "index.html"
# Sections from which a report gets a table of contents (a page with one section needs none).
TOC_MIN_SECTIONS = 2

METHODS_PAGE = "methods.html"
# The folder beside the reports that holds a copy of every report's figure and table files
# (`files/<notebook>/<name>.csv`), which the reports link to.
REPORT_FILES = "files"
# At least this wide, a window shows the navigation as a sidebar beside the report; narrower, above it.
SIDEBAR_MIN_WIDTH = 1280

STYLE = """<style>
.calmqa-header { margin: 0.6em 1em 0 1em; font-size: 0.85em; color: #555; }
.calmqa-header a, .calmqa-sidebar a { color: #1a5fb4; }
.calmqa-header code { font-size: 0.95em; overflow-wrap: anywhere; }
.calmqa-provenance { margin: 0.3em 0 0 0; }
.calmqa-sidebar { margin: 0.6em 1em 0.4em 1em; padding: 0.5em 1em; border-left: 3px solid #ccc; font-size: 0.9em; }
.calmqa-sidebar ol, .calmqa-sidebar ul { margin: 0.2em 0 0.6em 0; padding-left: 1.4em; }
.calmqa-sidebar strong { display: block; margin: 0.4em 0 0.2em 0; }
.calmqa-sidebar .calmqa-pager { display: flex; justify-content: space-between; gap: 1em; margin: 0.3em 0; }
.calmqa-sidebar [aria-current=page] { font-weight: bold; color: #222; }
.calmqa-sidebar .calmqa-all-reports { display: none; }
.calmqa-files { font-size: 0.85em; color: #555; margin: 0.2em 0 1em 0; }
@media (min-width: %(wide)dpx) {
  body { padding-left: 290px !important; }
  .calmqa-sidebar { position: fixed; top: 0; left: 0; bottom: 0; width: 250px; margin: 0; overflow-y: auto;
    border-left: none; border-right: 1px solid #ddd; background: #fafafa; padding: 1em; box-sizing: border-box; }
  .calmqa-sidebar .calmqa-all-reports { display: block; }
}
/* Printed: the report alone, its links spelled out, charts and tables kept whole on a page. */
@media print {
  body { padding-left: 0 !important; }
  .calmqa-sidebar, .calmqa-files, .vega-embed .vega-actions, details > summary { display: none !important; }
  .jp-OutputArea-output, .calmqa-chart, table, figure { break-inside: avoid; }
  h1, h2, h3 { break-after: avoid; }
  a[href^="http"]::after { content: " (" attr(href) ")"; font-size: 0.8em; overflow-wrap: anywhere; }
  .calmqa-chart svg { max-width: 100%%; height: auto; }
  .%(scrolled)s { max-height: none !important; overflow: visible !important; }
}
</style>""" % {"wide": SIDEBAR_MIN_WIDTH, "scrolled": tables.SCROLLED_TABLE_CLASS}  # noqa: UP031 - CSS braces would need escaping in a format string


# Printed, a report shows what its folds hold (a closed fold would print as its line alone).
PRINT_OPENS_FOLDS = (
    '<script>window.addEventListener("beforeprint", function () {'
    ' document.querySelectorAll("details").forEach(function (d) { d.open = true; }); });</script>\n'
)


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
                escape=True,
                attachments=cell.get("attachments", {}),
                embed_images=self.embed_images,
                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                anchor_link_text=self.anchor_link_text,
                exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options,
            )
            return MarkdownWithMath(renderer=renderer).render(source)

    from nbconvert.preprocessors import TagRemovePreprocessor

    # The notebook is validated once, after all the preprocessors, not after each of them (a dozen
    # schema compilations, a third of a second per report).
    exporter = ReportExporter(
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True, optimistic_validation=True
    )
    exporter.register_preprocessor(TagRemovePreprocessor(remove_cell_tags={NOTEBOOK_ONLY}), enabled=True)
    # Empty URLs drop the last script tags that would load require.js and MathJax from a CDN.
    exporter.require_js_url = ""
    exporter.mathjax_url = ""
    return exporter


def markdown_to_html(source: str) -> str:
    """Markdown as the reports render it (raw HTML escaped), for pages built outside nbconvert."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    return MarkdownWithMath(renderer=IPythonRenderer(escape=True)).render(source)


def _heading_text(inner: str) -> str:
    """A heading's text without its markup and nbconvert's anchor link."""
    inner = re.sub(r'<a class="anchor-link".*?</a>', "", inner, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", inner)).strip()


def _sections(body: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The report's sections: (anchor, text, its subsections) of each level-two heading."""
    sections: list[tuple[str, str, list[tuple[str, str]]]] = []
    for level, anchor, inner in re.findall(r'<h([23]) id="([^"]+)"[^>]*>(.*?)</h\1>', body, flags=re.DOTALL):
        entry = (anchor, _heading_text(inner))
        if level == "2":
            sections.append((*entry, []))
        elif sections:
            sections[-1][2].append(entry)
    return sections


def table_of_contents(body: str) -> str:
    """An ordered list of the report's sections (level-two headings, with their level-three ones), or ""
    when it has fewer than `TOC_MIN_SECTIONS`."""
    sections = _sections(body)
    if len(sections) < TOC_MIN_SECTIONS:
        return ""

    def link(anchor: str, text: str) -> str:
        return f'<a href="#{inert(anchor, "html")}">{inert(text, "html")}</a>'

    items = []
    for anchor, text, subsections in sections:
        inner = "".join(f"<li>{link(*s)}</li>" for s in subsections)
        items.append(f"<li>{link(anchor, text)}" + (f"<ol>{inner}</ol>" if inner else "") + "</li>")
    return f'<nav class="calmqa-toc" aria-label="Contents"><strong>Contents</strong><ol>{"".join(items)}</ol></nav>\n'


def header(record: dict | None) -> str:
    """The report's provenance, given its `record` (the navigation is `sidebar`)."""
    parts = [STYLE, '<header class="calmqa-header">']
    if record is not None:
        parts.append(provenance.embedded(record))
    parts.append("</header>")
    return "\n".join(parts) + "\n"


def sidebar(name: str, body: str, reports: list[tuple[str, str]], items: list[tuple[str, str, str]]) -> str:
    """The navigation of report `name`: back to the index, the previous and the next report of
    `reports` ((name, label) in reading order), this report's sections, the paper items it shows
    ((paper, item, address on arXiv)), the methods, and every report. Beside the report in a wide
    window, above it in a narrow one; not printed."""
    names = [n for n, _ in reports]
    labels = dict(reports)
    parts = [
        f'<nav class="calmqa-sidebar" aria-label="Reports">'
        f'<a class="calmqa-index-link" href="{INDEX_PAGE}">&larr; All reports ({SITE_NAME})</a>'
    ]
    if name in names:
        position = names.index(name)
        previous = names[position - 1] if position > 0 else None
        following = names[position + 1] if position + 1 < len(names) else None
        pager = [
            f'<a rel="prev" href="{inert(previous, "html")}.html">&larr; {inert(labels[previous], "html")}</a>'
            if previous
            else "<span></span>",
            f'<a rel="next" href="{inert(following, "html")}.html">{inert(labels[following], "html")} &rarr;</a>'
            if following
            else "<span></span>",
        ]
        parts.append(f'<div class="calmqa-pager">{"".join(pager)}</div>')
    parts.append(table_of_contents(body))
    if items:
        links = "".join(
            f'<li><a href="{inert(url, "html")}">{inert(PAPER_NAMES.get(paper, paper), "html")} {inert(item, "html")} '
            "on arXiv</a></li>"
            for paper, item, url in items
        )
        parts.append(
            f"<details><summary>The papers' items in this report ({len(items)})</summary><ul>{links}</ul></details>"
        )
    parts.append(f'<p><a href="{METHODS_PAGE}">Methods: how each report is computed</a></p>')
    if reports:
        entries = "".join(
            f'<li><a href="{inert(n, "html")}.html"{" aria-current=page" if n == name else ""}>{inert(label, "html")}</a></li>'
            for n, label in reports
        )
        parts.append(f'<div class="calmqa-all-reports"><strong>Reports</strong><ol>{entries}</ol></div>')
    parts.append("</nav>")
    return "\n".join(parts) + "\n"


# The methods page's sections are `## NN Title`; a report names its section as `docs/methods.md`, section NN.
_METHODS_MENTION = re.compile(r"<code>docs/methods\.md</code>(,\s*section\s+(\d\d)[^.;)<]*)?")


def link_methods(body: str) -> str:
    """A report's mentions of the methods (`docs/methods.md`, section 03 Surface quality) as links to the
    methods page beside it, at that section: a reader of the report alone has the page, not the repository."""

    def link(match: re.Match) -> str:
        section = match.group(2)
        anchor = f"#{methods_anchor(section)}" if section else ""
        words = inert(match.group(1).lstrip(", "), "html") if match.group(1) else "the methods"
        return f'<a href="{METHODS_PAGE}{anchor}">the methods page{", " + words if match.group(1) else ""}</a>'

    return _METHODS_MENTION.sub(link, body)


def methods_anchor(section: str) -> str:
    """The anchor of section `NN` of the methods page."""
    return f"methods-{section}"


def link_files(body: str) -> str:
    """The links a notebook wrote to files of its figures folder (`viz.export.figures_link`, `NOTEBOOK/NAME.csv`)
    as links to their copies in the report's own folder (`REPORT_FILES`), so that the reports folder keeps
    every link when it is copied or sent on its own."""
    return re.sub(
        rf'{export.FIGURES_LINK}="([^"]*)"',
        lambda m: f'href="{REPORT_FILES}/{m.group(1)}"',
        body,
    )


def to_html(
    executed: Path,
    html_path: Path,
    record: dict | None = None,
    reports: list[tuple[str, str]] | None = None,
) -> None:
    """A self-contained report of an executed notebook: code and `notebook-only` cells hidden, no script
    or style from the network, its title, its provenance (given `record`), its navigation (`sidebar`:
    `reports` are every report, in reading order, with a label), links to the methods page and to the
    files of its figures and tables in the reports folder (`link_files`)."""
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    title = (record or {}).get("title") or provenance.notebook_title(notebook) or html_path.stem
    body, _ = _report_exporter().from_notebook_node(
        notebook, resources={"metadata": {"name": f"{title} · {SITE_NAME}"}}
    )
    navigation = sidebar(html_path.stem, body, reports or [], paper_items_shown(notebook, title))
    body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + header(record) + navigation, body, count=1)
    body = body.replace("</head>", drilldown.head_html() + PRINT_OPENS_FOLDS + "</head>", 1)
    files.write_text(html_path, link_methods(link_files(body)))


def paper_items_shown(notebook, title: str) -> list[tuple[str, str, str]]:
    """(paper, item, address on arXiv) of every figure and table of the papers a report names in its
    text: its Markdown, and the Markdown its code displayed. An item named without its paper is the
    NativQA paper's in a report whose title names it, the CaLMQA paper's otherwise."""
    texts = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            texts.append(cell.source)
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            texts.append(output.get("data", {}).get("text/markdown") or "")
    default = "nativqa" if "NativQA" in title else "calmqa"
    anchors = paper_items.anchors_of(paper_items.load_items())
    return [
        (paper, item, paper_items.item_url(paper, item, anchors))
        for paper, item in paper_items.mentioned_items("\n".join([title, *texts]), default)
    ]
