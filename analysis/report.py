"""Notebooks to figures and self-contained HTML reports.

`setup_notebook()` is the first call of every notebook: it enables the offline chart renderer, so
that charts draw in JupyterLab and in the exported report with no network. `run_notebook()` is what
`make figures` runs for each notebook: Papermill execution with the project's kernel, then an HTML
report; outputs are written beside their targets and moved into place only on success.
"""

import json
import os
import shutil
import sys
import time
from pathlib import Path

import altair as alt

from . import paths
from .errors import NotebookFailed

_bundle_emitted = False


def _offline_html_renderer(spec: dict, **metadata) -> dict:
    """Altair's own HTML renderer, with the Vega JavaScript inlined once, before the first chart.

    The template skips its CDN loads when the global VEGA_DEBUG already records the versions; the
    bundle is wrapped in a function so that including it twice cannot redeclare its top-level names.
    """
    global _bundle_emitted
    from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert
    from altair.vegalite.v6.display import html_renderer

    bundle = html_renderer(spec, **metadata)
    if not _bundle_emitted:
        vlc = import_vl_convert()
        versions = json.dumps({
            "vega_version": alt.VEGA_VERSION,
            "vegalite_version": alt.VEGALITE_VERSION,
            "vegaembed_version": alt.VEGAEMBED_VERSION,
        })
        script = vlc.javascript_bundle(vl_version=vl_version_for_vl_convert())
        prefix = (
            f"<script type=\"text/javascript\">(function(){{\n{script}\n}})();\n"
            f"var VEGA_DEBUG = Object.assign(typeof VEGA_DEBUG == 'undefined' ? {{}} : VEGA_DEBUG, {versions});</script>\n"
        )
        bundle["text/html"] = prefix + bundle["text/html"]
        _bundle_emitted = True
    return bundle


alt.renderers.register("calmqa_offline", _offline_html_renderer)


def setup_notebook(max_rows: int = 5000) -> None:
    """Offline charts and readable tables, for JupyterLab and for the exported report alike."""
    import polars as pl

    alt.renderers.enable("calmqa_offline")
    alt.data_transformers.enable("default", max_rows=max_rows)
    pl.Config.set_tbl_rows(60)
    pl.Config.set_tbl_cols(30)
    pl.Config.set_fmt_str_lengths(60)


def notebook_names() -> list[str]:
    """The notebooks `make figures` runs, in order: those whose name starts with two digits, except 00."""
    return sorted(p.stem for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))


def to_html(executed: Path, html: Path) -> None:
    """A self-contained report of an executed notebook: code hidden, no script or style from the network."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    exporter.require_js_url = ""
    exporter.mathjax_url = ""
    body, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    tmp = html.with_name(f".{html.name}.tmp-{os.getpid()}")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, html)


def run_notebook(name: str, db_path: Path = paths.DATABASE, figures_root: Path = paths.FIGURES,
                 reports_root: Path = paths.REPORTS, build_root: Path = paths.BUILD,
                 parameters: dict | None = None, kernel: str = paths.KERNEL_NAME) -> Path:
    """Execute `notebooks/<name>.ipynb` into its figures folder and write `reports/<name>.html`.

    Figures go to a fresh folder that replaces the old one only when the notebook succeeded; a failed
    run keeps its executed copy under build/ for debugging and leaves no report.
    """
    import papermill

    source = paths.NOTEBOOKS / f"{name}.ipynb"
    if not source.is_file():
        raise FileNotFoundError(f"no notebook {source}")
    executed = build_root / "executed" / f"{name}.ipynb"
    executed.parent.mkdir(parents=True, exist_ok=True)
    reports_root.mkdir(parents=True, exist_ok=True)
    figures = figures_root / name
    staging = figures_root / f".{name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    params = {"db_path": str(Path(db_path).resolve()), "output_dir": str(staging.resolve()), **(parameters or {})}
    started = time.monotonic()
    try:
        _execute_with_retry(papermill, source, executed, params, kernel)
        if figures.exists():
            shutil.rmtree(figures)
        if staging.exists():
            os.replace(staging, figures)
        report = reports_root / f"{name}.html"
        to_html(executed, report)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"{name}: {time.monotonic() - started:.1f} s -> {figures}, {report}", file=sys.stderr)
    return report


def _execute_with_retry(papermill, source: Path, executed: Path, params: dict, kernel: str) -> None:
    # Parallel kernel starts can race for a port (papermill issue 511): one retry for that case only.
    for attempt in (1, 2):
        try:
            papermill.execute_notebook(
                str(source), str(executed), parameters=params, kernel_name=kernel,
                cwd=str(paths.NOTEBOOKS), progress_bar=False, log_output=False,
            )
            return
        except papermill.PapermillExecutionError as exc:
            raise NotebookFailed(source, executed, exc) from None
        except RuntimeError as exc:
            if attempt == 2 or "Kernel" not in str(exc):
                raise
