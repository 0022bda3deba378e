"""Notebooks to figures and reports: `run_notebook()` is what `make figures` runs for each notebook,
Papermill execution with the project's kernel, then its HTML report (`reporting.html`); outputs are
written beside their targets and moved into place only on success.

A notebook runs the sections the study has (docs/studies.md): the cells tagged `paper-only` (the CaLMQA
paper's items) only for a study that declares a paper, those tagged `study-only` only for any other;
the runner leaves the others out before Papermill executes the notebook (`sections_for`).

Each run writes where its time went beside the executed notebook (`<name>.timings.json`: kernel start,
imports and set-up, analysis, static export, kernel shutdown, HTML export), which `make bench` reports,
and its manifest (`<name>.manifest.json`, `write_manifest`): every file it wrote into its figures folder,
as the package's save functions recorded them (`core.outputs`), with its size and sha256, the
parameters and the database and release it read. docs/notebooks.md lists each notebook's files from it.
"""

import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

from .. import store
from ..analyses import studies
from ..core import environment, files, identity, outputs, paths, timings
from ..core.errors import Failure, NotebookFailed
from ..viz import export
from . import html, provenance

# The report that sets every number the papers print against the suite's: it reads the figures of the
# other notebooks, so it runs after them (`notebook_names`, the Makefile) and comes first in the index.
REPRODUCTION_NOTEBOOK = "08_paper_reproduction"
# The interactive explorer: not a report, but a notebook JupyterLab opens on any database.
EXPLORER = "00_explore"
# Papermill's own cells: the parameters as stored and as injected.
_PARAMETER_TAGS = {"parameters", "injected-parameters"}
# The parameter of a notebook that reads the evaluation of the language identification (notebook 10).
EVALUATION_PARAMETER = "evaluation_dir"


def notebook_names(generic_only: bool = False) -> list[str]:
    """The notebooks `make figures` runs, in order: those whose name starts with two digits, except 00;
    the reproduction report last, since it reads the figures of all the others. `generic_only`: those a
    study of your own gets, the notebooks that require no declaration (`required_declaration`)."""
    names = notebook_names_in(paths.NOTEBOOKS)
    if generic_only:
        names = [name for name in names if required_declaration(paths.NOTEBOOKS / f"{name}.ipynb") is None]
    return sorted(names, key=lambda name: name == REPRODUCTION_NOTEBOOK)


def notebook_names_in(folder: Path) -> list[str]:
    """The report notebooks of `folder`, by name: those whose name starts with two digits, except 00."""
    return sorted(p.stem for p in Path(folder).glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))


def reading_order(names: list[str]) -> list[str]:
    """Reports in the order a reader takes them (the index's, a report's previous and next): the
    reproduction report first, since it says how much of the two papers the suite reproduces."""
    return sorted(names, key=lambda name: (name != REPRODUCTION_NOTEBOOK, name))


def report_labels(notebooks_root: Path = paths.NOTEBOOKS, study: studies.Study | None = None) -> list[tuple[str, str]]:
    """(name, label) of every report `study` gets (None: every report), in reading order: the notebook's
    number and the title of its first Markdown heading up to a colon or parenthesis, or its name in words
    where the title comes from the data."""
    import nbformat

    labels = []
    for name in reading_order(notebook_names_in(notebooks_root)):
        needed = required_declaration(Path(notebooks_root) / f"{name}.ipynb")
        if study is not None and needed is not None and not study.requires(needed):
            continue  # a paper-only report this study does not get
        notebook = nbformat.read(Path(notebooks_root) / f"{name}.ipynb", as_version=4)
        title = provenance.notebook_title(notebook) or name[3:].replace("_", " ").capitalize()
        labels.append((name, f"{name[:2]} {re.split(r'[:(]', title)[0].strip()}"))
    return labels


# The tags of the cells of the paper-only sections, and of those only other studies' reports have.
PAPER_ONLY, STUDY_ONLY = "paper-only", "study-only"


def sections_for(notebook: dict, paper: str | None) -> dict:
    """The notebook (as JSON) without the cells of sections the study does not have: `study-only` cells
    for the paper's study (one that declares `paper`), `paper-only` cells for any other."""
    left_out = STUDY_ONLY if paper else PAPER_ONLY
    cells = [cell for cell in notebook["cells"] if left_out not in cell.get("metadata", {}).get("tags", [])]
    return {**notebook, "cells": cells}


# Where a paper-only notebook names the declaration it needs: `"calmqa": {"requires": "paper"}` (or
# `"nativqa"`) in its metadata (docs/studies.md).
METADATA_KEY = "calmqa"


def required_declaration(notebook: Path) -> str | None:
    """The study declaration a notebook needs (`paper` or `nativqa`), or None for a generic notebook."""
    return json.loads(notebook.read_text(encoding="utf-8"))["metadata"].get(METADATA_KEY, {}).get("requires")


def study_of(db_path: Path) -> studies.Study:
    """The study the database holds (its declarations)."""
    with store.connect(db_path) as con:
        return studies.Study.of(con)


def notebook_parameters(source: Path) -> set[str]:
    """The names the `parameters` cell of the notebook at `source` assigns."""
    return set(parameter_defaults(source))


def parameter_defaults(source: Path) -> dict:
    """Each name the `parameters` cell of the notebook at `source` assigns, with its value (a literal;
    any other expression as its source text)."""
    import ast

    import nbformat

    cells = nbformat.read(source, as_version=4).cells
    defaults: dict[str, object] = {}
    for cell in cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.Assign):
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        value = ast.unparse(node.value)
                    defaults |= {target.id: value for target in node.targets if isinstance(target, ast.Name)}
    return defaults


def prepare_lab(db_path: Path, folder: Path, figures_root: Path) -> list[Path]:
    """Copies of the notebooks a study gets (the explorer and every report of it) in `folder`, opened on the
    database at `db_path` (`opened_on`), each writing into its folder under `figures_root`, as `make figures`
    runs them. `make lab DB=...` or `STUDY=...` opens JupyterLab on them; they are written again each time."""
    study = study_of(Path(db_path))
    names = [EXPLORER, *(n for n in notebook_names() if _gets(n, study))]
    return [
        opened_on(name, folder, {"db_path": Path(db_path), "output_dir": figures_root / name}, study.paper)
        for name in names
    ]


def opened_on(name: str, folder: Path, parameters: dict, paper: str | None) -> Path:
    """A copy of the notebook `name` in `folder` with the sections of the study (`sections_for`, as `paper`
    says) and Papermill's parameters cell set to `parameters` (paths made absolute; those the notebook
    does not have left out), not run: for JupyterLab."""
    import papermill

    source = paths.NOTEBOOKS / f"{name}.ipynb"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.ipynb"
    sections = files.temporary_name(target)
    files.write_text(sections, json.dumps(sections_for(json.loads(source.read_text(encoding="utf-8")), paper)))
    known = notebook_parameters(source)
    given = {k: str(Path(v).resolve()) if isinstance(v, Path) else v for k, v in parameters.items() if k in known}
    try:
        papermill.execute_notebook(
            str(sections),
            str(target),
            parameters=given,
            prepare_only=True,
            kernel_name=paths.KERNEL_NAME,
            progress_bar=False,
        )
    finally:
        sections.unlink(missing_ok=True)
    return target


def _gets(name: str, study: studies.Study) -> bool:
    needed = required_declaration(paths.NOTEBOOKS / f"{name}.ipynb")
    return needed is None or study.requires(needed)


def manifest_path(executed: Path) -> Path:
    """The manifest of the run whose executed notebook is `executed` (build/executed/NAME.ipynb)."""
    return executed.with_suffix(".manifest.json")


def _portable(value):
    """A path under the project as a path relative to it, so that a manifest reads the same in any clone."""
    if isinstance(value, str) and os.path.isabs(value):
        path = Path(value).resolve()
        if path.is_relative_to(paths.ROOT):
            return str(path.relative_to(paths.ROOT))
    return value


def write_manifest(
    target: Path, name: str, recorded: list[dict], staging: Path, figures: Path, parameters: dict, record: dict
) -> Path:
    """Write the manifest of a run to `target`: the files the save functions recorded (`recorded`,
    `core.outputs`), each with its size and sha256 as written into `staging` (the figures folder
    before it takes the place of `figures`), the parameters it ran with and the database and release
    it read. A file in `staging` that no save function recorded, or a recorded one outside it or
    missing, fails the run: the manifest lists exactly what the run wrote."""
    staging = staging.resolve()
    entries: dict[str, str] = {}
    outside = []
    for entry in recorded:
        path = Path(entry["path"])
        if path.is_relative_to(staging):
            entries.setdefault(path.relative_to(staging).as_posix(), entry["by"])
        else:
            outside.append(str(path))
    present = (
        {p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()} if staging.exists() else set()
    )
    unrecorded, missing = sorted(present - set(entries)), sorted(set(entries) - present)
    if outside or unrecorded or missing:
        raise Failure(
            f"{name}: the run's files and what its save functions recorded differ (a file written other than "
            f"by viz.export or viz.tables?): not recorded {unrecorded}, recorded but missing {missing}, "
            f"written outside its folder {outside}"
        )
    manifest = {
        "notebook": name,
        "folder": _portable(str(figures.resolve())),
        "parameters": {key: _portable(value) for key, value in parameters.items()},
        "database": record["database"],
        "database_sha256": record["database_sha256"],
        "release": record["release"],
        "files": [
            {
                "name": file,
                "bytes": (staging / file).stat().st_size,
                "sha256": files.sha256(staging / file),
                "written_by": by,
            }
            for file, by in entries.items()
        ],
    }
    return files.write_text(target, json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")


def notebook_source(name: str, notebooks_root: Path = paths.NOTEBOOKS) -> Path:
    """The notebook `name` of `notebooks_root`; a name is a notebook of the folder, never a path (`../x`
    would name outputs, and a failure's note, outside their folders)."""
    known = sorted(p.stem for p in Path(notebooks_root).glob("*.ipynb"))
    if name not in known:
        raise Failure(f"no notebook {name!r} in {notebooks_root}: expected one of {', '.join(known)}")
    return Path(notebooks_root) / f"{name}.ipynb"


def claim_outputs(db_path: Path, build_root: Path) -> None:
    """Record in the output folder whose `build/` is `build_root` the study folder the database `db_path`
    belongs to; refuse, naming both, when that folder holds another study folder's reports
    (`core.identity`). A database without that record (of an older version of the suite) claims nothing."""
    wanted = store.source_of(db_path)
    if wanted is None:
        return
    record = identity.output_record(build_root)
    held = identity.read(record)
    if held is not None and not held.same_study(wanted):
        raise Failure(identity.output_refusal(Path(build_root).parent, record, held, wanted, db_path))
    if held != wanted:
        identity.write(record, wanted, database=str(Path(db_path).resolve()))


# ---------------------------------------------------------------- a failed run, kept going past
# `make figures` runs every notebook even when one fails (`run-notebook --keep-going`): a failure is a
# note beside the executed notebook, which the index shows and counts (`failures`), and which the next
# successful run of that notebook removes.
FAILURE_SUFFIX = ".failure.json"


def failure_note(build_root: Path, name: str) -> Path:
    """Where the note of a failed run of the notebook `name` is kept."""
    return Path(build_root) / "executed" / f"{name}{FAILURE_SUFFIX}"


def record_failure(
    name: str,
    message: str,
    figures_root: Path = paths.FIGURES,
    reports_root: Path = paths.REPORTS,
    build_root: Path = paths.BUILD,
    notebooks_root: Path = paths.NOTEBOOKS,
) -> Path:
    """Note that the run of `name` failed with `message` (its first line is the reason the index shows),
    and remove its report: a report of an older run must not pass for this one."""
    notebook_source(name, notebooks_root)
    labels = dict(report_labels(notebooks_root))
    executed = Path(build_root) / "executed" / f"{name}.ipynb"
    note = {
        "notebook": name,
        "title": labels.get(name, name),
        "reason": one_line(message),
        "message": message,
        "executed": _portable(str(executed.resolve())) if executed.is_file() else None,
        "failed": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    with files.lock(figures_root / f".{name}"):
        (Path(reports_root) / f"{name}.html").unlink(missing_ok=True)
        return files.write_text(failure_note(build_root, name), json.dumps(note, indent=1, ensure_ascii=False) + "\n")


def one_line(message: str) -> str:
    """The reason a failure's `message` gives, on one line: its first line, and the next one where the first
    only announces it (`1 problem in the input:` and the problem)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return "it failed"
    return f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]


def failures(build_root: Path) -> dict[str, dict]:
    """The notes of the failed runs kept in the output folder whose `build/` is `build_root`, by notebook."""
    found = {}
    for path in sorted((Path(build_root) / "executed").glob(f"*{FAILURE_SUFFIX}")):
        try:
            note = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # (being replaced, or damaged: the next run of its notebook writes it again)
        found[path.name.removesuffix(FAILURE_SUFFIX)] = note
    return found


class OutputRoots(TypedDict):
    """`run_notebook`'s output folders, to be passed as its keyword arguments."""

    figures_root: Path
    reports_root: Path
    build_root: Path


def output_roots(out: Path | str) -> OutputRoots:
    """Where a run into the folder `out` writes: `out`/figures, `out`/reports and, for the executed
    notebooks, `out`/build (the project's own folders when `out` is the project)."""
    out = Path(out)
    return {"figures_root": out / "figures", "reports_root": out / "reports", "build_root": out / "build"}


def run_notebook(
    name: str,
    db_path: Path = paths.DATABASE,
    figures_root: Path = paths.FIGURES,
    reports_root: Path = paths.REPORTS,
    build_root: Path = paths.BUILD,
    parameters: dict | None = None,
    kernel: str = paths.KERNEL_NAME,
    notebooks_root: Path = paths.NOTEBOOKS,
    language_id: Path | None = None,
    figures_of: tuple[str, ...] = (),
) -> Path:
    """Execute `notebooks/<name>.ipynb` into its figures folder and write `reports/<name>.html`.
    `language_id`: the folder of the database's language identification, whose `evaluation/` a notebook
    with an `evaluation_dir` parameter reads (`make` passes the database's; by default the parameter's).
    `figures_of`: the notebooks whose figures it reads (the reproduction report's); it is not run when the
    last run of one of them failed (`failures`), since it would read figures of an older run.

    Figures (PNG, SVG, CSV, and a print PDF of each heatmap) go to a fresh folder that replaces the
    old one only when the notebook succeeded; a failed run keeps its executed copy under build/ for
    debugging and leaves no report.
    """
    started = time.perf_counter()
    import nbformat
    import papermill

    source = notebook_source(name, notebooks_root)
    claim_outputs(Path(db_path), build_root)
    failed_inputs = sorted(set(figures_of) & set(failures(build_root)))
    if failed_inputs:
        raise Failure(
            f"{name} was not run: it reads the figures of {', '.join(failed_inputs)}, whose last run failed "
            "(it would read figures of an older run)"
        )
    study = study_of(Path(db_path)) if Path(db_path).is_file() else None
    needed = required_declaration(source)
    if study is not None and needed is not None and not study.requires(needed):
        raise Failure(
            f"{source.name} is a paper-only notebook: it needs a study that declares `{needed}`, and the study "
            f"{study.name!r} of {db_path} does not (docs/studies.md)"
        )
    # The sections of this study: Papermill executes a copy without the others (in the notebooks' folder
    # as its working folder, as it would the notebook itself).
    sections_target = build_root / "executed" / f"{name}.sections.ipynb"
    sections = files.temporary_name(sections_target)
    executed = build_root / "executed" / f"{name}.ipynb"
    # Every file of a run is private to its process until the run succeeded, so that two `make figures`
    # started at once cannot mix their outputs; the swap into place happens under a lock.
    running = files.temporary_name(executed)
    steps = files.temporary_name(executed.with_suffix(".timings.jsonl"))
    recorded = files.temporary_name(executed.with_suffix(".outputs.jsonl"))
    manifest = files.temporary_name(manifest_path(executed))
    executed.parent.mkdir(parents=True, exist_ok=True)
    reports_root.mkdir(parents=True, exist_ok=True)
    figures_root.mkdir(parents=True, exist_ok=True)
    figures = figures_root / name
    report = reports_root / f"{name}.html"
    staging = files.temporary_name(figures)
    shutil.rmtree(staging, ignore_errors=True)
    for target in (  # what killed runs left
        figures,
        executed,
        executed.with_suffix(".timings.jsonl"),
        executed.with_suffix(".outputs.jsonl"),
        manifest_path(executed),
        sections_target,
    ):
        files.remove_stale(target)
    stored = json.loads(source.read_text(encoding="utf-8"))
    files.write_text(sections, json.dumps(sections_for(stored, study.paper if study else None), indent=1) + "\n")
    params = {"db_path": str(Path(db_path).resolve()), "output_dir": str(staging.resolve()), **(parameters or {})}
    if name == REPRODUCTION_NOTEBOOK:
        params.setdefault("figures_dir", str(Path(figures_root).resolve()))
    if language_id is not None and EVALUATION_PARAMETER in notebook_parameters(source):
        params.setdefault(EVALUATION_PARAMETER, str((Path(language_id) / "evaluation").resolve()))
    seconds = {}
    try:
        # The database state the notebook reads is recorded when it opens the database (provenance).
        with provenance.database_reads() as reads:
            try:
                mark = time.perf_counter()
                _execute_with_retry(
                    papermill, sections, running, params, kernel, Path(notebooks_root), steps, recorded, name
                )
                seconds["papermill"] = time.perf_counter() - mark
            except papermill.PapermillExecutionError as exc:
                with files.lock(figures_root / f".{name}"):
                    os.replace(running, executed)
                    report.unlink(missing_ok=True)  # a report of an older run must not pass for this one
                raise NotebookFailed(source, executed, exc) from None
            read = reads.of(Path(db_path))
        mark = time.perf_counter()
        notebook = nbformat.read(running, as_version=4)
        record = provenance.record(name, notebook, Path(db_path), staging, read)
        seconds["provenance"] = time.perf_counter() - mark
        ran_with = {**parameter_defaults(source), **params, "output_dir": str(figures)}
        write_manifest(manifest, name, outputs.read(recorded), staging, figures, ran_with, record)
        with files.lock(figures_root / f".{name}"):
            report_files = reports_root / html.REPORT_FILES / name
            if staging.exists():
                files.replace_folder(staging, figures)
                files.mirror_folder(figures, report_files)
            else:
                for folder in (figures, report_files):
                    shutil.rmtree(folder, ignore_errors=True)
            os.replace(manifest, manifest_path(executed))
            mark = time.perf_counter()
            html.to_html(running, report, record, report_labels(notebooks_root, study))
            seconds["HTML export"] = time.perf_counter() - mark
            mark = time.perf_counter()
            provenance.date(report, read, Path(db_path))
            seconds["provenance"] += time.perf_counter() - mark
            os.replace(running, executed)
            failure_note(build_root, name).unlink(missing_ok=True)
        breakdown = {"notebook": name, **phases(notebook, timings.read(steps), seconds, time.perf_counter() - started)}
        files.write_text(executed.with_suffix(".timings.json"), json.dumps(breakdown, indent=2) + "\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        running.unlink(missing_ok=True)
        steps.unlink(missing_ok=True)
        recorded.unlink(missing_ok=True)
        manifest.unlink(missing_ok=True)
        sections.unlink(missing_ok=True)
    parts = ", ".join(f"{phase} {value:.1f}" for phase, value in breakdown["phases"].items())
    print(f"{name}: {breakdown['seconds']:.1f} s ({parts}) -> {figures}, {report}", file=sys.stderr)
    return report


def kernel_phases(notebook) -> dict[str, float]:
    """Papermill's times of an executed notebook, in seconds: `kernel start` (to the first cell),
    `imports and set-up` (the notebook's first cell after its parameters), `cells` (the other cells) and
    `kernel shutdown` (after the last cell)."""

    def when(stamp: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(stamp)

    cells = [c for c in notebook.cells if c.cell_type == "code" and c.metadata.get("papermill", {}).get("start_time")]
    durations = [
        c.metadata.papermill["duration"] for c in cells if not _PARAMETER_TAGS & set(c.metadata.get("tags", []))
    ]
    run = notebook.metadata.papermill
    return {
        "kernel start": (when(cells[0].metadata.papermill["start_time"]) - when(run["start_time"])).total_seconds(),
        "imports and set-up": durations[0] if durations else 0.0,
        "cells": sum(durations[1:]),
        "kernel shutdown": (when(run["end_time"]) - when(cells[-1].metadata.papermill["end_time"])).total_seconds(),
    }


def phases(notebook, steps: list[dict], seconds: dict[str, float], total: float) -> dict:
    """Where the wall time of a run went, in seconds: the kernel's phases (`kernel_phases`), the static
    exports the kernel recorded (`steps`, `core.timings`), and the runner's own (`seconds`).

    `analysis` is the cells after the set-up less the static exports they made; `other` the rest of the
    run (importing Papermill, reading and writing the notebook).
    """
    kernel = kernel_phases(notebook)
    exports = [s for s in steps if s["phase"] == "static export"]
    export_seconds = sum(s["seconds"] for s in exports)
    measured = {
        "kernel start": kernel["kernel start"],
        "imports and set-up": kernel["imports and set-up"],
        "analysis": kernel["cells"] - export_seconds,
        "static export": export_seconds,
        "kernel shutdown": kernel["kernel shutdown"],
        "HTML export": seconds["HTML export"],
        "provenance": seconds["provenance"],
    }
    measured["other"] = total - sum(measured.values())
    by_format: dict[str, dict[str, float]] = {}
    for step in exports:
        entry = by_format.setdefault(step["format"], {"files": 0, "seconds": 0.0, "cpu_seconds": 0.0})
        entry["files"] += 1
        entry["seconds"] += step["seconds"]
        entry["cpu_seconds"] += step["cpu_seconds"]
    return {
        "seconds": round(total, 3),
        "phases": {phase: round(value, 3) for phase, value in measured.items()},
        "static_export": {f: {k: round(v, 3) for k, v in e.items()} for f, e in sorted(by_format.items())},
    }


def _local_socket_kernel_manager(folder: Path):
    """jupyter_client's kernel manager, talking to the kernel over local (IPC) sockets in `folder` rather
    than TCP ports: nothing listens on the network, two kernels started at once cannot race for a port,
    and the kernel has no reason to warn, once per notebook, that its TCP channel is unencrypted."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum, default

    class LocalSocketKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        @default("ip")
        def _socket_path(self) -> str:
            return str(folder / "kernel")

    return LocalSocketKernelManager


def _execute_with_retry(
    papermill,
    source: Path,
    executed: Path,
    params: dict,
    kernel: str,
    cwd: Path,
    steps: Path,
    recorded: Path,
    name: str,
) -> None:
    # The kernel inherits the environment: it records its static exports into `steps` (core.timings)
    # and the files it writes into `recorded` (core.outputs), and its figures and tables link to their
    # files under the notebook's name (viz.export), not under the name of the copy of its sections that
    # Papermill executes.
    variables = {timings.ENV: str(steps.resolve()), outputs.ENV: str(recorded.resolve()), export.NOTEBOOK_ENV: name}
    # The kernel's sockets live in a folder of this run's own, removed with it.
    with environment.variables_set(**variables), tempfile.TemporaryDirectory(prefix="calmqa-kernel-") as sockets:
        # A kernel that dies while it starts (papermill issue 511) gets one retry, for that case only.
        for attempt in (1, 2):
            try:
                papermill.execute_notebook(
                    str(source),
                    str(executed),
                    parameters=params,
                    kernel_name=kernel,
                    cwd=str(cwd),
                    progress_bar=False,
                    log_output=False,
                    # The notebook is written once, at the end (or at the failing cell), not again after
                    # every cell as the page grows to megabytes of charts.
                    request_save_on_cell_execute=False,
                    # Every output is on disk when the last cell ends: stopping the kernel at once
                    # saves the second or so its orderly exit takes with the libraries it loaded.
                    shutdown_kernel="immediate",
                    kernel_manager_class=_local_socket_kernel_manager(Path(sockets)),
                )
                return
            except papermill.PapermillExecutionError:
                raise
            except RuntimeError as exc:
                if attempt == 2 or "Kernel" not in str(exc):
                    raise
                steps.unlink(missing_ok=True)
                recorded.unlink(missing_ok=True)
