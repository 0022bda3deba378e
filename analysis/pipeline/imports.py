"""Bring your own results: a new model's answers, per-answer metrics, and questions of the public dataset.

`import_file` reads and validates the whole file against the database (`analysis.io.imports`), writing
nothing when there is a problem; it then applies the file to a copy of the database that replaces the
original only on success (`store.writing`), computes the verdicts of what it added or changed, and keeps
the file beside the database (`core.paths.imports_folder`), so that `make db` replays it after the
release: the database stays a function of its inputs. Imports are idempotent: a row that is already in
the database as the file says is left alone, and an import that changes nothing is not kept and leaves
the database as it was, its time included.

The database is what says which imports it holds (`applied_imports`, written in the same atomic
replacement as the rows they added): the kept file is copied into its numbered folder before the
database is replaced, and the folder's `manifest.csv` is written from the database after it. So a kill
at any point leaves them agreeing: a numbered folder no database records is never replayed and is
replaced by the next import, and a manifest behind its database is written again by the next write.
A build replays what the database it replaces holds (the manifest when there is none).
Every row an import adds carries its position (`import_position`): the release's rows have none.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from .. import store
from ..core import files, paths
from ..core.errors import Problems, StorageError
from ..io import imports, ingest, records
from ..io.imports import KINDS, KeptImport
from . import executors, language_verdicts, surface

WHAT = {"answers": "answers", "metrics": "answers' metrics", "questions": "questions"}


@dataclass
class ImportSummary:
    file: Path
    kind: str
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    detail: str = ""
    kept: Path | None = None

    @property
    def changes_anything(self) -> bool:
        return bool(self.added or self.changed)

    def __str__(self) -> str:
        kept = (
            f"; kept as {self.kept}, which a rebuild (`make db`, or `make study` for a study) replays"
            if self.kept
            else "; it changes nothing, so it is not kept"
        )
        return (
            f"{self.file}: {self.added:,} {WHAT[self.kind]} added, {self.changed:,} changed, "
            f"{self.unchanged:,} already there{self.detail}{kept}"
        )


@dataclass
class Applied:
    """What applying a file did: its summary, and the ids whose verdicts must be computed."""

    summary: ImportSummary
    answer_ids: list[int]
    question_ids: list[int]


# ------------------------------------------------------------------------------------------ reading


def _question_ids(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], int]:
    return {
        (name, language): qid
        for qid, name, language in con.execute("SELECT question_id, name, language FROM questions").fetchall()
    }


def _column(con: duckdb.DuckDBPyConnection, sql: str) -> set[str]:
    return {r[0] for r in con.execute(sql).fetchall()}


def _answers_by_name(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return dict(con.execute("SELECT name, answer_id FROM answers WHERE NOT is_human").fetchall())


def _study(con: duckdb.DuckDBPyConnection) -> str | None:
    """The name of the study the database holds, or None for the CaLMQA release (whose paper it reproduces)."""
    name, paper = con.execute("SELECT name, paper FROM study").fetchall()[0]
    return None if paper else name


def _holdings(con: duckdb.DuckDBPyConnection, languages: set[str]) -> imports.Holdings:
    return imports.Holdings(
        study=_study(con),
        questions=_question_ids(con),
        languages=languages,
        models=dict(con.execute("SELECT model, display_name FROM models").fetchall()),
        answers={
            name: (qid, model)
            for name, qid, model in con.execute("SELECT name, question_id, model FROM answers").fetchall()
        },
        release_questions={
            r[0] for r in con.execute("SELECT question_id FROM questions WHERE import_position IS NULL").fetchall()
        },
        release_models=_column(con, "SELECT model FROM models WHERE import_position IS NULL"),
    )


def read(
    kind: str,
    path: Path,
    con: duckdb.DuckDBPyConnection,
    problems: Problems,
    verification: Path | None = None,
    notes: list[str] | None = None,
) -> pl.DataFrame:
    """The validated rows of an import file of `kind`, checked against what `con` holds; what the import
    leaves out of a valid file is said in `notes`."""
    for file in (path, verification):
        if file is None:
            continue
        if records.text_problem(file.name) or records.label_problem(file.name, max_length=255):
            problems.add(
                file,
                None,
                None,
                "the file's name is not plain text (it holds a control character or a "
                "byte that is not UTF-8): rename the file, so that it can be kept and listed",
            )
        special = files.special_kind(file.stat().st_mode) if file.exists() else None
        if special is not None:
            problems.add(file, None, None, f"is {special}, not a file: name a .csv, .jsonl or .json file")
    problems.raise_if_any()
    study = _study(con)
    if study is not None:
        imports.check_study_import(kind, path, study, problems)
        problems.raise_if_any()
    languages = _column(con, "SELECT language FROM languages")
    if kind == "answers":
        return imports.read_answer_file(path, _holdings(con, languages), problems, notes)
    if kind == "questions":
        return imports.read_question_file(path, languages, _column(con, "SELECT category FROM categories"), problems)
    if verification is not None:
        return imports.read_veriscore(path, verification, _answers_by_name(con), problems)
    by_key = {
        (name, language, model): aid
        for aid, name, language, model in con.execute(
            "SELECT a.answer_id, q.name, q.language, a.model FROM answers a JOIN questions q USING (question_id) "
            "WHERE NOT a.is_human"
        ).fetchall()
    }
    return imports.read_metric_file(path, _answers_by_name(con), by_key, problems)


# ------------------------------------------------------------------------------------------ applying


def apply_answers(con: duckdb.DuckDBPyConnection, incoming: pl.DataFrame, path: Path, position: int) -> Applied:
    """Add a model's answers; an answer already there with another text is replaced (never one of the
    release's: `io.imports` refuses a file that would change one). What it adds carries `position`."""
    summary = ImportSummary(path, "answers")
    con.register("incoming", incoming.to_arrow())
    con.execute("""
        CREATE OR REPLACE TEMP TABLE matched AS
        SELECT i.*, a.answer_id, a.text AS old_text
        FROM incoming i LEFT JOIN answers a
          ON a.question_id = i.question_id AND a.model = i.model AND NOT a.is_human
    """)
    summary.unchanged = con.execute("SELECT count(*) FROM matched WHERE old_text = text").fetchall()[0][0]
    con.execute(
        """
        INSERT INTO models (model, display_name, version, import_position)
        SELECT model, coalesce(any_value(display_name), model), string_agg(DISTINCT model_version, ', '), $position
        FROM incoming WHERE model NOT IN (SELECT model FROM models) GROUP BY model
    """,
        {"position": position},
    )
    changed = con.execute("""
        UPDATE answers SET text = m.text, n_bytes = strlen(m.text), model_version = m.model_version
        FROM matched m WHERE answers.answer_id = m.answer_id AND m.old_text IS DISTINCT FROM m.text
        RETURNING answers.answer_id
    """).fetchall()
    summary.changed = len(changed)
    added = con.execute(
        """
        INSERT INTO answers
        SELECT (SELECT coalesce(max(answer_id), 0) FROM answers)
                   + row_number() OVER (ORDER BY m.question_id, m.name) AS answer_id,
               m.question_id, m.name, m.model, m.model_version, FALSE, FALSE, q.language, m.text, NULL,
               strlen(m.text), $position
        FROM matched m JOIN questions q USING (question_id)
        WHERE m.answer_id IS NULL
        RETURNING answer_id
    """,
        {"position": position},
    ).fetchall()
    summary.added = len(added)
    con.execute("DROP TABLE matched")
    con.unregister("incoming")
    models = sorted(incoming["model"].unique())
    summary.detail = f"; models: {', '.join(models[:5])}" + (
        f" and {len(models) - 5:,} more" if len(models) > 5 else ""
    )
    return Applied(summary, sorted(r[0] for r in changed + added), [])


def apply_metrics(con: duckdb.DuckDBPyConnection, incoming: pl.DataFrame, path: Path, position: int) -> Applied:
    """Add per-answer metrics; a metric the file does not give keeps its current value."""
    summary = ImportSummary(path, "metrics")
    con.register("incoming", incoming.to_arrow())
    counts = con.execute("""
        SELECT count(*) FILTER (WHERE m.answer_id IS NULL),
               count(*) FILTER (WHERE m.answer_id IS NOT NULL AND (
                   (i.n_claims IS NOT NULL AND (i.n_claims IS DISTINCT FROM m.n_claims
                                                OR i.n_supported IS DISTINCT FROM m.n_supported))
                   OR (i.relevant IS NOT NULL AND i.relevant IS DISTINCT FROM m.relevant)))
        FROM incoming i LEFT JOIN answer_metrics m USING (answer_id)
    """).fetchall()[0]
    summary.added, summary.changed = counts
    summary.unchanged = incoming.height - summary.added - summary.changed
    con.execute(
        """
        INSERT INTO answer_metrics
        SELECT answer_id, n_claims, n_supported, relevant, ? FROM incoming
        ON CONFLICT (answer_id) DO UPDATE SET
            n_claims = coalesce(excluded.n_claims, answer_metrics.n_claims),
            n_supported = CASE WHEN excluded.n_claims IS NULL THEN answer_metrics.n_supported
                               ELSE excluded.n_supported END,
            relevant = coalesce(excluded.relevant, answer_metrics.relevant),
            source = CASE WHEN excluded.n_claims IS NULL AND excluded.relevant IS NULL THEN answer_metrics.source
                          ELSE excluded.source END
    """,
        [path.name],
    )
    con.unregister("incoming")
    return Applied(summary, [], [])


def apply_questions(con: duckdb.DuckDBPyConnection, incoming: pl.DataFrame, path: Path, position: int) -> Applied:
    """Add questions (auto-collected unless the file's `collection` says otherwise) with their reference answers.

    A question already in the database (same language, type and text, `ingest.question_identity`) is left alone.
    New ones are named `<collection>:<language>:<n>`.
    """
    summary = ImportSummary(path, "questions")
    con.create_function("question_identity", ingest.question_identity, [str], str)
    con.register("incoming", incoming.to_arrow())
    try:
        con.execute("""
            CREATE OR REPLACE TEMP TABLE new_questions AS
            SELECT i.*,
                   (SELECT coalesce(max(question_id), 0) FROM questions)
                       + row_number() OVER (ORDER BY i.language, i.question_type, i.normalised) AS question_id
            FROM incoming i
            ANTI JOIN (SELECT language, question_type, question_identity(text) AS normalised FROM questions) q
                USING (language, question_type, normalised)
        """)
        con.execute(
            """
            INSERT INTO questions
            SELECT n.question_id,
                   n.collection || ':' || lower(n.language) || ':' ||
                       (coalesce((SELECT count(*) FROM questions q
                                  WHERE q.language = n.language AND q.name LIKE n.collection || ':%'), 0)
                        + row_number() OVER (PARTITION BY n.language, n.collection ORDER BY n.question_id) - 1),
                   n.language, n.question_type, n.collection, n.source, NULL, n.category, n.text,
                   coalesce(n.text_en, CASE WHEN n.language = 'English' THEN n.text END),
                   strlen(n.text), FALSE, NULL, n.url, $position
            FROM new_questions n
        """,
            {"position": position},
        )
        con.execute(
            """
            INSERT INTO answers
            SELECT (SELECT coalesce(max(answer_id), 0) FROM answers)
                       + row_number() OVER (ORDER BY n.question_id) AS answer_id,
                   n.question_id, q.name || ':human', NULL, NULL, TRUE, FALSE, n.language, n.answer, NULL,
                   strlen(n.answer), $position
            FROM new_questions n JOIN questions q USING (question_id)
            WHERE n.answer IS NOT NULL
        """,
            {"position": position},
        )
        question_ids = [r[0] for r in con.execute("SELECT question_id FROM new_questions ORDER BY 1").fetchall()]
        con.execute("DROP TABLE new_questions")
    finally:
        con.unregister("incoming")
        con.remove_function("question_identity")
    summary.added = len(question_ids)
    summary.unchanged = incoming.height - summary.added
    return Applied(summary, [], question_ids)


APPLY = {"answers": apply_answers, "metrics": apply_metrics, "questions": apply_questions}


def held_imports(con: duckdb.DuckDBPyConnection, folder: Path) -> list[KeptImport]:
    """The imports the database holds, in order, as kept in `folder`."""
    return [
        KeptImport(folder, *row)
        for row in con.execute(
            "SELECT position, kind, file, sha256, verification, verification_sha256 FROM applied_imports "
            "ORDER BY position"
        ).fetchall()
    ]


def _record(con: duckdb.DuckDBPyConnection, entry: KeptImport, summary: ImportSummary) -> None:
    con.execute(
        "INSERT INTO applied_imports VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            entry.position,
            entry.kind,
            entry.file,
            entry.sha256,
            entry.verification,
            entry.verification_sha256,
            summary.added,
            summary.changed,
            summary.unchanged,
        ],
    )


def write_manifest(db_path: Path, folder: Path, kept: list[KeptImport]) -> None:
    """The folder's manifest, as the database `db_path` (just written) holds them, dated as the database:
    written after it, it must not make Make see the database as older than its manifest."""
    if not kept and not folder.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    imports.write_manifest(folder, kept)
    written = os.stat(db_path)
    os.utime(folder / imports.MANIFEST, ns=(written.st_atime_ns, written.st_mtime_ns))


def _sync_manifest(db_path: Path, folder: Path) -> None:
    """Write the manifest again when it is not what the database holds (a write killed between the two)."""
    with store.connect(db_path) as con:
        store.check_schema(con, db_path)
        held = held_imports(con, folder)
    problems = Problems()
    listed = imports.read_manifest(folder, problems)
    if problems.items or listed != held:
        write_manifest(db_path, folder, held)


# ------------------------------------------------------------------------------------------ entry points


def import_file(
    kind: str,
    path: Path | str,
    db_path: Path | str,
    verification: Path | str | None = None,
    language_id_model: Path | str = paths.LANGUAGE_ID_MODEL,
    dask: str | None = None,
) -> ImportSummary:
    """Validate the file, apply it to the database with the verdicts of what it adds or changes (the
    language verdicts in every language by the models the database was built with: `language_id_model`,
    or a study's engine trained again, `executors.VerdictModels.of_database`), and
    keep it beside the database when it changed anything (`make import-answers|metrics|questions`). The
    verdicts of the answers it adds or changes are computed on worker processes forked here, or with
    `dask` on the Dask cluster it names (`local:N` or `tcp://host:port`)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of import {kind!r}; expected one of {', '.join(KINDS)}")
    path = Path(path)
    verification = Path(verification) if verification is not None else None
    # Validated and applied under one hold of the database's lock: the ids the file's names resolve to
    # are those of the database it is applied to, though a build may be waiting to replace it.
    with store.writing(db_path) as writing:
        db_path = writing.db_path  # the resolved file (a link's target)
        folder = paths.imports_folder(db_path)
        with writing.reading() as con:
            problems = Problems()
            # A database copied without its imports folder: a rebuild would lose them.
            held = held_imports(con, folder)
            imports.check_kept(held, db_path, problems)
            problems.raise_if_any()
            notes: list[str] = []
            incoming = read(kind, path, con, problems, verification, notes)
            problems.raise_if_any()
        position = max((k.position for k in held), default=0) + 1
        with writing.modifying() as con:
            applied = APPLY[kind](con, incoming, path, position)
            applied.summary.detail += "".join(notes)
            if not applied.summary.changes_anything:
                writing.unchanged()
            if applied.answer_ids:
                models = executors.VerdictModels.of_database(con, language_id_model)
                with executors.start(models, dask=dask) as workers:
                    surface.refresh_answers(con, applied.answer_ids, workers)
                    language_verdicts.refresh(con, applied.answer_ids, workers)
            if applied.question_ids:
                surface.refresh_questions(con, applied.question_ids)
            # Kept before the database is replaced: a kill between the two leaves a folder that no database
            # records, which the next import of that position replaces.
            entry = imports.keep(folder, position, kind, path, verification)
            _record(con, entry, applied.summary)
            applied.summary.kept = entry.path.parent
        if writing.replaced:
            write_manifest(db_path, folder, [*held, entry])
        else:
            _sync_manifest(db_path, folder)
    return applied.summary


def to_replay(db_path: Path, folder: Path) -> list[KeptImport]:
    """The imports a build of `db_path` replays from `folder`, each checked to be kept as it was: those
    the database it replaces holds, when `folder` is that database's; else those the manifest lists."""
    problems = Problems()
    if folder == paths.imports_folder(db_path) and db_path.is_file():
        try:
            with store.connect(db_path) as con:
                held = held_imports(con, folder) if store.table_exists(con, "applied_imports") else None
        except (StorageError, duckdb.Error):
            held = None  # a damaged or foreign file, which the build replaces: the manifest says what to replay
        if held is not None:
            imports.check_kept(held, db_path, problems)
            problems.raise_if_any()
            return held
    kept = imports.read_manifest(folder, problems)
    problems.raise_if_any()
    imports.check_kept(kept, folder / imports.MANIFEST, problems)
    problems.raise_if_any()
    return kept


def replay(con: duckdb.DuckDBPyConnection, kept: list[KeptImport]) -> list[ImportSummary]:
    """Apply the kept imports, in order, to the database being built (its verdicts come from the build's
    stages, which run afterwards)."""
    problems = Problems()
    summaries = []
    for entry in kept:
        incoming = read(entry.kind, entry.path, con, problems, entry.verification_path)
        problems.raise_if_any()
        summary = APPLY[entry.kind](con, incoming, entry.path, entry.position).summary
        _record(con, entry, summary)
        summaries.append(summary)
    return summaries


def copy_database(source: Path | str, target: Path | str) -> Path:
    """Copy a database with the imports kept beside it, so that the copy can be rebuilt and imported into."""
    source, target = store.resolve(source), store.resolve(target, writing=True)
    store.copy(source, target)
    kept = paths.imports_folder(source)
    if kept.is_dir():
        with files.atomic_folder(paths.imports_folder(target)) as tmp:
            shutil.copytree(kept, tmp, dirs_exist_ok=True)
    return target
