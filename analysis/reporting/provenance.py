"""What a report was built from, embedded in it and read back by the index: the notebook's title and
summary, when it was built, the git commit, the database's name and the sha256 of the database state
the notebook read, the version of the release that database was built from, and its main figure.

The database's sha256 is taken when the notebook opens it (`store.connect` records it while
`database_reads` is active), not when the run ends: a database rebuilt during the run does not pass
for the one the report shows. A report whose database changed during its run is dated back to the
state it read (`date`), so that Make, which compares times, sees it older than the new database and
builds it again.
"""

import contextlib
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .. import store
from ..analyses import release_version
from ..core import environment, files, paths
from ..core.text import inert, script_json

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
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+dirty" if changed else "")


def main_figure(figures: Path) -> str | None:
    """The figure a report is known by: the first PNG its notebook wrote (figures are written in order)."""
    pngs = sorted(figures.glob("*.png"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if figures.is_dir() else []
    return pngs[0].stem if pngs else None


@dataclass(frozen=True)
class DatabaseRead:
    """The database state a notebook read: the sha256 and modification time of the file it opened, and
    the release it was built from (`store.built_from`)."""

    sha256: str
    mtime_ns: int
    release: dict | None = None


class DatabaseReads:
    """The databases a notebook opened while `database_reads` was active (`store.connect` records them)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def of(self, db_path: Path) -> DatabaseRead | None:
        """The first state of `db_path` the notebook read, or None when it did not open it."""
        lines = self.path.read_text(encoding="utf-8").splitlines() if self.path.is_file() else []
        for line in lines:
            read = json.loads(line)
            if read["database"] == str(Path(db_path).resolve()):
                return DatabaseRead(read["sha256"], read["mtime_ns"], read.get("release"))
        return None


@contextlib.contextmanager
def database_reads() -> Iterator[DatabaseReads]:
    """While the block runs a notebook, `store.connect` (in its kernel, which inherits the environment)
    records the state of every database it opens."""
    handle, name = tempfile.mkstemp(prefix="calmqa-database-reads-", suffix=".jsonl")
    os.close(handle)
    try:
        with environment.variables_set(**{store.READS_VARIABLE: name}):
            yield DatabaseReads(Path(name))
    finally:
        Path(name).unlink(missing_ok=True)


def record(name: str, notebook, db_path: Path, figures: Path, read: DatabaseRead | None = None) -> dict:
    """What a report was built from; embedded in the report and read back by `index.py`. `read` is the
    database state the notebook read; without one (a notebook that does not open the database), the
    database as it is now."""
    return {
        "notebook": name,
        "title": notebook_title(notebook) or name,
        "summary": first_markdown_output(notebook),
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "database": Path(db_path).name,
        "database_sha256": read.sha256 if read is not None else files.sha256(db_path),
        "release": release_version.from_record(read.release).describe() if read and read.release else None,
        "main_figure": main_figure(figures),
    }


def date(report: Path, read: DatabaseRead | None, db_path: Path) -> bool:
    """Once `report` is written: when the database is no longer the state the notebook read, give the
    report the time of that state, so that Make sees the newer database and builds the report again.
    Returns whether it did. (Checked after the report is written: a database replaced later still has
    a newer time than the report.)"""
    if read is None:
        return False
    try:
        current = os.stat(db_path).st_mtime_ns
    except FileNotFoundError:
        current = None
    if current == read.mtime_ns or (current is not None and files.sha256(db_path) == read.sha256):
        return False
    os.utime(report, ns=(read.mtime_ns, read.mtime_ns))
    print(
        f"{report.name}: {db_path} changed while the notebook ran; the report shows the state it read "
        f"(sha256 {read.sha256[:12]}...) and is dated to it, so that `make figures` builds it again",
        file=sys.stderr,
    )
    return True


PROVENANCE_ID = "calmqa-provenance"


def read(report: Path) -> dict | None:
    """The provenance embedded in a report by `html.to_html`, or None for a page without it."""
    match = re.search(
        rf'<script type="application/json" id="{PROVENANCE_ID}">(.*?)</script>',
        report.read_text(encoding="utf-8"),
        re.DOTALL,
    )
    return json.loads(match.group(1)) if match else None


def line(record: dict) -> str:
    """The provenance for a reader, as HTML: when, from which commit and which database. The long
    hashes may break anywhere; the words between them never do."""

    def code(value) -> str:
        return f"<code>{inert(str(value), 'html')}</code>"

    built = str(record["built"]).replace("T", " ").replace("+00:00", " UTC")
    built_from = f" It was built from {inert(record['release'], 'html')}." if record.get("release") else ""
    return (
        f"Built {inert(built, 'html')} from commit {code(record['commit'])}; database "
        f"{inert(str(record['database']), 'html')}, sha256 {code(record['database_sha256'])}.{built_from}"
    )


def embedded(record: dict) -> str:
    """The provenance as HTML: a JSON script for `read`, and a line for the reader."""
    return (
        f'<script type="application/json" id="{PROVENANCE_ID}">{script_json(record)}</script>\n'
        f'<p class="calmqa-provenance">{line(record)}</p>\n'
    )
