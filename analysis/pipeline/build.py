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

A database belongs to the folder it is built from (`core.identity`): the build records the folder's
resolved path and the fingerprint of its files (`source`, `source_files`, and beside the database for
Make), and refuses to replace a database that holds another study folder's study. The files are
fingerprinted before anything reads them and again once the new database is complete: a file changed
meanwhile is refused, and the previous database is kept.
"""

import contextlib
import time
from pathlib import Path

import polars as pl

from .. import schema, store
from ..core import identity, paths, timings
from ..core.errors import CheckFailed, Failure
from ..io import calmqa, release, short_text_evaluation, study
from ..io import nativqa as nativqa_files
from . import (
    checks,
    executors,
    imports,
    language_id_all,
    language_routing,
    language_verdicts,
    nativqa,
    short_text,
    surface,
)
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
    short_text_evaluation_folder: Path | str = paths.SHORT_TEXT_EVALUATION,
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

    # Read first: a missing evaluation stops the build before anything is done.
    _, routing_rows, _ = short_text_evaluation.read(short_text_evaluation_folder)
    # The source's files as they are before anything reads them: recorded (`source_files`, `source`), and
    # compared with the files as they are once the new database is complete (`_unchanged`).
    is_study = study.is_study(source)
    verify = verify and not is_study  # no pinned checksums: a study is its author's own files
    if verify:
        with stage("checksums"):
            release.verify(source)  # (it names a damaged or changed file as a file of the pinned release)
    before = _source_files(source, is_study)
    if verify and release.differences(before):  # a file changed since it was verified
        raise Failure(_changed_during_build(source, release.differences(before), db_path))
    # The inputs are read and validated first: a problem in them stops the build at once. A study folder
    # is read whole (validated before anything is written) and its engine trained on the UDHR, once the
    # database it would replace is known to be its own.
    folder, routing, nativqa_frames = None, None, None
    if is_study:
        with stage("study engine"):
            folder = study.read(source)
            wanted = _study_source(source, folder.name, before, is_study)
            _refuse_another_study(db_path, wanted)
            codes = dict(zip(folder.languages["language"].to_list(), folder.languages["iso_code"].to_list()))
            engine = language_id_all.train_for_languages(codes, udhr_folder)
        # The route's rows of the languages the engine knows: the evaluation measured them with it.
        rows = routing_rows.filter(pl.col("iso_code").is_in(sorted(engine.targets.values())))
        route = folder.language_id_engine
        if route != language_routing.NONE:
            routing = language_routing.Routing(language_routing.read_routing(rows.write_csv().encode()), route)
        models = executors.VerdictModels.for_study(engine, rows, route)
    else:
        wanted = _study_source(source, str(calmqa.STUDY["name"]), before, is_study)
        _refuse_another_study(db_path, wanted)
        nativqa_frames = nativqa_files.read_folder(nativqa_folder)
        models = executors.VerdictModels.read(language_id_model)

    def record(built: Path) -> None:
        list_replayed(built)
        identity.write(identity.database_record(built), wanted)

    # The workers of the surface and language_id_all stages are started next: forked while this process
    # holds little memory and no database (`executors.start`), or the cluster reached before anything is written.
    with (
        executors.start(models, dask=dask) as workers,
        store.create(
            db_path,
            first=lambda path: _refuse_another_study(path, wanted),  # again, under the database's lock
            last=lambda: _unchanged(source, is_study, before, db_path),
            then=record,
        ) as con,
    ):
        with stage("release" if folder is None else "study"):
            if folder is None:
                load_release(con, source, progress)
            else:
                load_study(con, folder, routing)
            short_text.write_tables(con, short_text_evaluation_folder)
            store.insert(con, schema.TABLE_BY_NAME["source_files"], before)
            store.insert(
                con,
                schema.TABLE_BY_NAME["source"],
                pl.DataFrame([{"folder": wanted.folder, "fingerprint": wanted.fingerprint}]),
            )
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


def _study_source(source: Path, name: str, files: pl.DataFrame, is_study: bool) -> identity.StudySource:
    """The study that a build from the folder `source` (whose files are `files`) puts in its database."""
    return identity.StudySource(name, str(source.resolve()), release.fingerprint(files), release=not is_study)


def _refuse_another_study(db_path: Path, wanted: identity.StudySource) -> None:
    """A database that holds another study folder's study is not replaced (`core.identity`)."""
    held = store.source_of(db_path)
    if held is not None and not held.same_study(wanted):
        raise Failure(identity.database_refusal(db_path, held, wanted))


def _unchanged(source: Path, is_study: bool, before: pl.DataFrame, db_path: Path) -> None:
    """The source's files are as they were before the build read them; else the database is not replaced."""
    changed = _changed(before, _source_files(source, is_study))
    if changed:
        raise Failure(_changed_during_build(source, changed, db_path))


def _changed_during_build(source: Path, changed: list[str], db_path: Path) -> str:
    return (
        f"{source}: {', '.join(changed)} changed while the database was built from it, so {db_path} was not "
        "replaced (the new one would hold rows of the files as they were): build it again"
    )


def _source_files(source: Path, is_study: bool) -> pl.DataFrame:
    """The files a build reads from `source` (a study folder's study.toml and tables, or every file of a
    release folder), with their checksums and times (`io.release.source_checksums`)."""
    return release.source_checksums(source, study.source_paths(source) if is_study else None)


def _changed(before: pl.DataFrame, after: pl.DataFrame) -> list[str]:
    """The files that differ between two `_source_files` of one folder: changed, added or removed."""
    old = {row["file"]: row for row in before.iter_rows(named=True)}
    new = {row["file"]: row for row in after.iter_rows(named=True)}
    return sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
