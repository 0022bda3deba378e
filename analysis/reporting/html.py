"""A report as HTML: self-contained, code hidden, nothing loaded from the network, Markdown rendered with
raw HTML escaped (so a question or answer holding `<script>` shows as those characters). At the top: a
link back to the index, the report's provenance and a table of contents of its sections; its `<title>`
is the notebook's title. Cells tagged `notebook-only` (text for whoever runs the notebook: what a
parameter does) are left out."""

import html
import re
from pathlib import Path

from ..core import files
from ..core.text import inert
from . import provenance

# The tag of cells that speak to whoever runs the notebook (its parameters), not to the report's reader.
NOTEBOOK_ONLY = "notebook-only"
SITE_NAME = "CaLMQA analysis"
INDEX_PAGE = "index.html"
# Sections from which a report gets a table of contents (a page with one section needs none).
TOC_MIN_SECTIONS = 2

STYLE = """<style>
.calmqa-header { margin: 0.6em 1em 0 1em; font-size: 0.85em; color: #555; }
.calmqa-header a { color: #1a5fb4; }
.calmqa-header code { font-size: 0.95em; overflow-wrap: anywhere; }
.calmqa-provenance { margin: 0.3em 0 0 0; }
.calmqa-toc { margin: 0.8em 1em 0.4em 1em; padding: 0.5em 1em; border-left: 3px solid #ccc; font-size: 0.9em; }
.calmqa-toc ol { margin: 0.2em 0; padding-left: 1.4em; }
.calmqa-toc strong { display: block; margin-bottom: 0.2em; }
</style>"""


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


def table_of_contents(body: str) -> str:
    """An ordered list of the report's sections (level-two headings, with their level-three ones), or ""
    when it has fewer than `TOC_MIN_SECTIONS`."""
    sections: list[tuple[str, str, list[tuple[str, str]]]] = []
    for level, anchor, inner in re.findall(r'<h([23]) id="([^"]+)"[^>]*>(.*?)</h\1>', body, flags=re.DOTALL):
        entry = (anchor, _heading_text(inner))
        if level == "2":
            sections.append((*entry, []))
        elif sections:
            sections[-1][2].append(entry)
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
    """The link back to the index and, given a report's `record`, its provenance."""
    parts = [
        STYLE,
        '<header class="calmqa-header">',
        f'<nav><a class="calmqa-index-link" href="{INDEX_PAGE}">&larr; All reports ({SITE_NAME})</a></nav>',
    ]
    if record is not None:
        parts.append(provenance.embedded(record))
    parts.append("</header>")
    return "\n".join(parts) + "\n"


def to_html(executed: Path, html_path: Path, record: dict | None = None) -> None:
    """A self-contained report of an executed notebook: code and `notebook-only` cells hidden, no script
    or style from the network, its title, a link to the index, its provenance (given `record`) and a
    table of contents."""
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    title = (record or {}).get("title") or provenance.notebook_title(notebook) or html_path.stem
    body, _ = _report_exporter().from_notebook_node(
        notebook, resources={"metadata": {"name": f"{title} · {SITE_NAME}"}}
    )
    body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + header(record), body, count=1)
    contents = table_of_contents(body)
    if contents:
        # Before the first section, after the title and summary.
        body = re.sub(r"(?=<h2 id=)", lambda m: contents, body, count=1)
    files.write_text(html_path, body)
