"""reports/index.html: every report of reports/ (the paper reproduction first), with its summary, a
thumbnail of its main figure (inline image data), when it was built, from which git commit, and the
sha256 of its database.

Built from the provenance each report carries (`reporting.provenance`), so it lists whatever reports
exist, present and future. `python -m analysis index` writes it (`make figures` runs it last).
"""

import base64
import html
import io
from pathlib import Path

from ..core import files, paths
from . import provenance
from .html import markdown_to_html
from .run import REPRODUCTION_NOTEBOOK

THUMBNAIL_WIDTH = 360
INDEX_NAME = "index.html"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>CaLMQA analysis reports</title>
<style>
body {{ font-family: "Noto Sans", "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 70em; color: #222; }}
h1 {{ font-size: 1.6em; }}
.report {{ display: flex; gap: 1.5em; border-top: 1px solid #ddd; padding: 1.2em 0; }}
.report img {{ width: {width}px; height: auto; border: 1px solid #eee; flex: none; }}
.report .no-figure {{ width: {width}px; flex: none; color: #777; font-style: italic; }}
.report h2 {{ font-size: 1.2em; margin: 0 0 0.4em 0; }}
.meta {{ font-size: 0.8em; color: #555; word-break: break-all; }}
</style>
</head>
<body>
<h1>CaLMQA analysis reports</h1>
<p>{count} reports. Each file is self-contained and opens offline.</p>
{entries}
</body>
</html>
"""

ENTRY = """<div class="report">
{thumbnail}
<div>
<h2><a href="{href}">{title}</a></h2>
<div class="summary">{summary}</div>
<p class="meta">{meta}</p>
</div>
</div>"""


def thumbnail(png: Path, width: int = THUMBNAIL_WIDTH) -> str:
    """A PNG scaled to `width` pixels (twice that for sharp screens), as a data URI."""
    from PIL import Image

    with Image.open(png) as image:
        target = min(2 * width, image.width)
        small = image.convert("RGB").resize((target, round(image.height * target / image.width)), Image.LANCZOS)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def entry(report_path: Path, figures_root: Path) -> str:
    record = provenance.read(report_path) or {}
    name = record.get("notebook", report_path.stem)
    figure = record.get("main_figure")
    png = figures_root / name / f"{figure}.png" if figure else None
    if png is not None and png.is_file():
        image = f'<img alt="{html.escape(figure)}" src="{thumbnail(png)}">'
    else:
        image = '<div class="no-figure">no figure</div>'
    if record:
        meta = (f"Built {record['built']} from commit {record['commit']}; database {record['database']}, "
                f"sha256 {record['database_sha256']}.")
    else:
        meta = "This report carries no provenance: build it again with `make figures`."
    summary = record.get("summary")
    return ENTRY.format(
        thumbnail=image, href=html.escape(report_path.name), title=html.escape(record.get("title", name)),
        summary=markdown_to_html(summary) if summary else "<p><em>This report has no summary.</em></p>",
        meta=html.escape(meta),
    )


def write_index(reports_root: Path = paths.REPORTS, figures_root: Path = paths.FIGURES,
                out: Path | None = None) -> Path:
    """Write the index of every report in `reports_root`; returns its path."""
    out = out or reports_root / INDEX_NAME
    # The reproduction report first: its summary says how much of the two papers the suite reproduces.
    pages = sorted((p for p in reports_root.glob("*.html") if p.name != INDEX_NAME and not p.name.startswith(".")),
                   key=lambda p: (p.stem != REPRODUCTION_NOTEBOOK, p.name))
    body = PAGE.format(width=THUMBNAIL_WIDTH, count=len(pages),
                       entries="\n".join(entry(p, figures_root) for p in pages))
    return files.write_text(out, body)
