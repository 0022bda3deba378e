"""Notebooks to figures and reports: `run_notebook()` is what `make figures` runs for each notebook,
Papermill execution with the project's kernel, then its HTML report (`reporting.html`); outputs are
written beside their targets and moved into place only on success.
"""

import os
import shutil
import sys
import time
from pathlib import Path

from ..core import files, paths
from ..core.errors import NotebookFailed
from . import html, provenance

# The report that sets every number the papers print against the suite's: it reads the figures of the
# other notebooks, so it runs after them (`notebook_names`, the Makefile) and comes first in the index.
REPRODUCTION_NOTEBOOK = "08_paper_reproduction"


def notebook_names() -> list[str]:
    """The notebooks `make figures` runs, in order: those whose name starts with two digits, except 00;
    the reproduction report last, since it reads the figures of all the others."""
    names = sorted(p.stem for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))
    return sorted(names, key=lambda name: name == REPRODUCTION_NOTEBOOK)


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
    running = files.temporary_name(executed)
    executed.parent.mkdir(parents=True, exist_ok=True)
    reports_root.mkdir(parents=True, exist_ok=True)
    figures_root.mkdir(parents=True, exist_ok=True)
    figures = figures_root / name
    report = reports_root / f"{name}.html"
    staging = files.temporary_name(figures)
    shutil.rmtree(staging, ignore_errors=True)
    for target in (figures, executed):  # what runs killed before left
        files.remove_stale(target)
    params = {"db_path": str(Path(db_path).resolve()), "output_dir": str(staging.resolve()), **(parameters or {})}
    if name == REPRODUCTION_NOTEBOOK:
        params.setdefault("figures_dir", str(Path(figures_root).resolve()))
    started = time.monotonic()
    try:
        # The database state the notebook reads is recorded when it opens the database (provenance).
        with provenance.database_reads() as reads:
            try:
                _execute_with_retry(papermill, source, running, params, kernel, Path(notebooks_root))
            except papermill.PapermillExecutionError as exc:
                with files.lock(figures_root / f".{name}"):
                    os.replace(running, executed)
                    report.unlink(missing_ok=True)  # a report of an older run must not pass for this one
                raise NotebookFailed(source, executed, exc) from None
            read = reads.of(Path(db_path))
        record = provenance.record(name, nbformat.read(running, as_version=4), Path(db_path), staging, read)
        with files.lock(figures_root / f".{name}"):
            if staging.exists():
                files.replace_folder(staging, figures)
            elif figures.exists():
                shutil.rmtree(figures)
            html.to_html(running, report, record)
            provenance.date(report, read, Path(db_path))
            os.replace(running, executed)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        running.unlink(missing_ok=True)
    print(f"{name}: {time.monotonic() - started:.1f} s -> {figures}, {report}", file=sys.stderr)
    return report


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
