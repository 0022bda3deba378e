"""The one build of the database, for the CaLMQA release and for any study folder (docs/studies.md): a
pure function of its inputs.

Inputs: the CaLMQA release folder or a study folder (one with a `study.toml`), the NativQA CSVs (the
release's study declares them), the trained language identification (the release's: `make language-id`;
a study's is trained here, from the UDHR, before the worker processes start), and the imports kept
beside the database (`make import-*`): those the database being replaced holds, or, without one, those
its folder's manifest lists (`pipeline.imports.to_replay`). Stages, in order: the source's tables
(`release` or `study`, the only stage that differs); the kept imports, replayed in the order they were made; the surface verdicts
(and, for the paper's pipeline, the language identification of every question); the verdicts of the
all-languages engine; the NativQA tables; the checks (`pipeline.checks`). Every stage runs over imported
rows as over the source's, so a rebuild keeps everything an import added.

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
from ..io import release, study
from . import checks, executors, imports, language_id_all, language_verdicts, nativqa, surface
from .release import load_release
from .study import load_study


def build(
    source: Path | str = paths.RAW_CALMQA,
    db_path: Path | str = paths.DATABASE,
    verify: bool = True,
    nativqa_folder: Path | str = paths.NATIVQA,
    imports_folder: Path | str | None = None,
    progress: bool | None = True,
    language_id_model: Path | str = paths.LANGUAGE_ID_MODEL,
    udhr_folder: Path | str = paths.UDHR,
    dask: str | None = None,
) -> dict:
    """Build the database at `db_path` from `source`: the CaLMQA release folder (checked against the
    pinned release's checksums when `verify`, with the NativQA tables of `nativqa_folder` and the language
    identification trained from the same release, `language_id_model`: `make` trains one per database) or
    a study folder (`study.is_study`; with an engine trained here on the UDHR of `udhr_folder`), and the
    imports kept in `imports_folder` (by default the one beside `db_path`); the verdict stages on the Dask
    cluster `dask` names (`local:N` or `tcp://host:port`) if given. Returns the row count per table, the
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

    # The inputs are read and validated first: a problem in them stops the build at once. A study folder
    # is read whole (validated before anything is written) and its engine trained on the UDHR.
    folder, engine, nativqa_frames = None, None, None
    if study.is_study(source):
        verify = False  # no pinned checksums: a study is its author's own files
        with stage("study engine"):
            folder = study.read(source)
            codes = dict(zip(folder.languages["language"].to_list(), folder.languages["iso_code"].to_list()))
            engine = language_id_all.train_for_languages(codes, udhr_folder)
        models = executors.VerdictModels.for_study(engine)
    else:
        nativqa_frames = nativqa_files.read_folder(nativqa_folder)
        models = executors.VerdictModels.read(language_id_model)
    # The workers of the surface and language_id_all stages are started next: forked while this process
    # holds little memory and no database (`executors.start`), or the cluster reached before anything is written.
    with executors.start(models, dask=dask) as workers, store.create(db_path, then=list_replayed) as con:
        if verify:
            with stage("checksums"):
                release.verify(source)
        with stage("release" if folder is None else "study"):
            if folder is None:
                load_release(con, source, progress)
            else:
                assert engine is not None  # trained with the study folder, above
                load_study(con, folder, set(engine.targets))
            for table in schema.TABLES:
                if not store.table_exists(con, table.name):
                    con.execute(table.ddl())  # filled by the stages below
            store.create_definitions(con)  # the rules and views every reader shares (`schema.MACROS`, `VIEWS`)
            release_part = checks.ReleasePart.of(con)
        with stage("imports"):
            replayed = imports.to_replay(db_path, imports_folder)
            imports.replay(con, replayed)
        with stage("surface"):
            surface.write_tables(con, workers)
        with stage("language_id_all"):
            language_verdicts.write_tables(con, workers)
        if nativqa_frames is not None:
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
