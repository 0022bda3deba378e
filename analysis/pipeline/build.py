"""The one build of the database: a pure function of its inputs.

Inputs: the CaLMQA release folder, the NativQA CSVs, the trained language identification for all 23
languages, and the imports kept beside the database (`make import-*`): those the database being
replaced holds, or, without one, those its folder's manifest lists (`pipeline.imports.to_replay`). Stages, in order: the release's
tables; the kept imports, replayed in the order they were made; the surface verdicts and the language
identification of every question; the verdicts in all 23 languages; the NativQA tables; the checks
(`pipeline.checks`). Every stage runs over imported rows as over the release's, so a rebuild keeps
everything an import added.

The surface and language_id_all stages run on the build's workers (`pipeline.executors`): worker
processes forked from this one, or with `dask` a Dask cluster; the tables are the same to the byte.

The database is written to a temporary file that replaces the previous one only when every stage and
check succeeded (`store.create`): a failed or killed build, or one whose cluster cannot be reached or
goes away, leaves it byte-identical.
"""

import contextlib
import time
from pathlib import Path

from .. import schema, store
from ..core import paths, timings
from ..core.errors import CheckFailed
from ..io import nativqa as nativqa_files
from ..io import release
from . import checks, executors, imports, language_verdicts, nativqa, surface
from .release import load_release


def build(
    source: Path | str = paths.RAW_CALMQA,
    db_path: Path | str = paths.DATABASE,
    verify: bool = True,
    nativqa_folder: Path | str = paths.NATIVQA,
    imports_folder: Path | str | None = None,
    progress: bool | None = True,
    language_id_model: Path | str = paths.LANGUAGE_ID_MODEL,
    dask: str | None = None,
) -> dict:
    """Build the database at `db_path` from the CaLMQA release folder `source` (checked against the pinned
    release's checksums when `verify`), the NativQA tables of `nativqa_folder`, the imports kept in
    `imports_folder` (by default the one beside `db_path`) and the language identification trained from
    the same release (`language_id_model`; `make` trains one per database), the verdict stages on the Dask
    cluster `dask` names (`local:N` or `tcp://host:port`) if given; returns the row count per table, the
    number of imports replayed, the seconds of the build and of each stage, and this process's peak memory
    in each stage and over the whole build (MiB; without the worker processes)."""
    source, db_path = Path(source), store.resolve(db_path, writing=True)
    imports_folder = Path(imports_folder) if imports_folder is not None else paths.imports_folder(db_path)
    own_folder = imports_folder == paths.imports_folder(db_path)
    replayed: list = []

    def list_replayed(built: Path) -> None:
        """The manifest of the database's own imports folder, as the new database holds them."""
        if own_folder:
            imports.write_manifest(built, imports_folder, replayed)

    started = time.monotonic()
    stage_seconds: dict[str, float] = {}
    stage_peak_mib: dict[str, int | None] = {}
    # Each stage starts its own measure of the peak, which forgets the one before: the build's peak is
    # the largest of those read before each start and at the end.
    peaks_before_stages: list[int | None] = []

    @contextlib.contextmanager
    def stage(name: str):
        begun = time.monotonic()
        peaks_before_stages.append(timings.peak_memory_mib())
        timings.reset_peak_memory()
        yield
        stage_seconds[name] = round(time.monotonic() - begun, 2)
        stage_peak_mib[name] = timings.peak_memory_mib()

    # The NativQA tables and the n-gram engine are read and checked first: a problem stops the build at once.
    nativqa_frames = nativqa_files.read_folder(nativqa_folder)
    models = executors.VerdictModels.read(language_id_model)
    # The workers of the surface and language_id_all stages are started next: forked while this process
    # holds little memory and no database (`executors.start`), or the cluster reached before anything is written.
    with executors.start(models, dask=dask) as workers, store.create(db_path, then=list_replayed) as con:
        if verify:
            with stage("checksums"):
                release.verify(source)
        with stage("release"):
            load_release(con, source, progress)
            for table in schema.TABLES:
                if not store.table_exists(con, table.name):
                    con.execute(table.ddl())  # filled by the stages below
            release_part = checks.ReleasePart.of(con)
        with stage("imports"):
            replayed = imports.to_replay(db_path, imports_folder)
            imports.replay(con, replayed)
        with stage("surface"):
            surface.write_tables(con, workers)
        with stage("language_id_all"):
            language_verdicts.write_tables(con, workers)
        with stage("nativqa"):
            nativqa.write_tables(con, nativqa_folder, nativqa_frames)
        with stage("checks"):
            failed = checks.failures(con, release_part, paths.EXPECTED_COUNTS if verify else None)
            if failed:
                raise CheckFailed(db_path, failed)
        counts = {t.name: con.execute(f"SELECT count(*) FROM {t.name}").fetchall()[0][0] for t in schema.TABLES}
    return {
        **counts,
        "imports": len(replayed),
        "seconds": round(time.monotonic() - started, 1),
        "stage_seconds": stage_seconds,
        "stage_peak_mib": stage_peak_mib,
        "peak_mib": max((p for p in [*peaks_before_stages, timings.peak_memory_mib()] if p is not None), default=None),
    }
