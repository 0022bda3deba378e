"""The methods page beside the reports (reports/methods.html, from docs/methods.md)."""

import re

from analysis.reporting import index


def test_every_anchor_of_the_methods_page_leads_to_a_heading(tmp_path):
    """A section's heading gets the id the reports link to (`methods-03`); the link the Markdown renderer
    puts on the heading itself, and the page's contents, lead there too."""
    source = tmp_path / "methods.md"
    source.write_text(
        "# Methods\n\nIntro.\n\n## 03 Surface quality\n\nText.\n\n## 10 Language identification\n\nMore.\n"
    )
    page = index.write_methods(tmp_path, source).read_text(encoding="utf-8")
    ids = set(re.findall(r'\sid="([^"]+)"', page))
    anchors = set(re.findall(r'href="#([^"]+)"', page))
    assert {"methods-03", "methods-10"} <= ids
    assert anchors and anchors <= ids, f"anchors without a heading: {anchors - ids}"
