"""What a report was built from, embedded in it and read back by the index: the notebook's title and
summary, when it was built, the git commit, the database's name and sha256, and its main figure."""

import datetime
import html
import json
import re
import subprocess
from pathlib import Path

from ..core import files, paths
from .notebook import script_json

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


def main_figure(figures: Path) -> str | None:
    """The figure a report is known by: the first PNG its notebook wrote (figures are written in order)."""
    pngs = sorted(figures.glob("*.png"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if figures.is_dir() else []
    return pngs[0].stem if pngs else None


def record(name: str, notebook, db_path: Path, figures: Path) -> dict:
    """What a report was built from; embedded in the report and read back by `index.py`."""
    return {
        "notebook": name,
        "title": notebook_title(notebook) or name,
        "summary": first_markdown_output(notebook),
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "database": Path(db_path).name,
        "database_sha256": files.sha256(db_path),
        "main_figure": main_figure(figures),
    }


PROVENANCE_ID = "calmqa-provenance"


def read(report: Path) -> dict | None:
    """The provenance embedded in a report by `html.to_html`, or None for a page without it."""
    match = re.search(rf'<script type="application/json" id="{PROVENANCE_ID}">(.*?)</script>',
                      report.read_text(encoding="utf-8"), re.DOTALL)
    return json.loads(match.group(1)) if match else None


def line(record: dict) -> str:
    """The provenance for a reader, as HTML: when, from which commit and which database. The long
    hashes may break anywhere; the words between them never do."""
    def code(value) -> str:
        return f"<code>{html.escape(str(value))}</code>"

    built = str(record["built"]).replace("T", " ").replace("+00:00", " UTC")
    return (f"Built {html.escape(built)} from commit {code(record['commit'])}; database "
            f"{html.escape(str(record['database']))}, sha256 {code(record['database_sha256'])}.")


def embedded(record: dict) -> str:
    """The provenance as HTML: a JSON script for `read`, and a line for the reader."""
    return (f'<script type="application/json" id="{PROVENANCE_ID}">{script_json(record)}</script>\n'
            f'<p class="calmqa-provenance">{line(record)}</p>\n')
