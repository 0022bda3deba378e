"""A report as HTML: self-contained, code hidden, nothing loaded from the network, Markdown rendered with
raw HTML escaped (so a question or answer holding `<script>` shows as those characters), and its
provenance at the top."""

import re
from pathlib import Path

from ..core import files
from . import provenance


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

    # The notebook is validated once, after all the preprocessors, not after each of them (a dozen
    # schema compilations, a third of a second per report).
    exporter = ReportExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                              optimistic_validation=True)
    # Empty URLs drop the last script tags that would load require.js and MathJax from a CDN.
    exporter.require_js_url = ""
    exporter.mathjax_url = ""
    return exporter


def markdown_to_html(source: str) -> str:
    """Markdown as the reports render it (raw HTML escaped), for pages built outside nbconvert."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    return MarkdownWithMath(renderer=IPythonRenderer(escape=True)).render(source)


def to_html(executed: Path, html_path: Path, record: dict | None = None) -> None:
    """A self-contained report of an executed notebook: code hidden, no script or style from the
    network, and, given `record`, its provenance at the top."""
    import nbformat

    body, _ = _report_exporter().from_notebook_node(nbformat.read(executed, as_version=4))
    if record is not None:
        body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + provenance.embedded(record), body, count=1)
    files.write_text(html_path, body)
