"""Build the DuckDB results database from a release folder, atomically; open it read-only for analysis.

The build writes a temporary file beside the target and moves it into place only when every stage
succeeded, so a failed or interrupted build leaves the previous database byte-identical. A lock file
keeps two builds of the same database from running at once.
"""

import contextlib
import fcntl
import os
import shutil
import sys
import time
from pathlib import Path

import duckdb
import polars as pl

from . import ingest, language_id_all, nativqa, paths, release, surface
from .errors import Problems
from .schema import TABLE_BY_NAME, TABLES, Table, all_tables


def connect(db_path: Path | str = paths.DATABASE) -> duckdb.DuckDBPyConnection:
    """A read-only connection, as every notebook uses: many readers may share the file."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise FileNotFoundError(f"no database at {db_path}: build it with `make db`")
    return duckdb.connect(str(db_path), read_only=True)


@contextlib.contextmanager
def build_lock(db_path: Path):
    lock_path = db_path.with_name(db_path.name + ".lock")
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another build of {db_path} to finish ...", file=sys.stderr)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def insert(con: duckdb.DuckDBPyConnection, table: Table, frame: pl.DataFrame) -> None:
    """Create `table` from its schema and fill it from `frame` (columns matched by name)."""
    con.execute(table.ddl())
    con.register("incoming", frame.select(table.column_names()).to_arrow())
    con.execute(f"INSERT INTO {table.name} SELECT * FROM incoming")
    con.unregister("incoming")


def source_checksums(folder: Path) -> pl.DataFrame:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    rows = []
    for path in files:
        sha, size = release.sha256_uncompressed(path)
        rows.append({"file": str(path.relative_to(folder)), "sha256": sha, "bytes": size})
    return pl.DataFrame(rows, schema={"file": pl.String, "sha256": pl.String, "bytes": pl.Int64})


@contextlib.contextmanager
def modify(db_path: Path | str = paths.DATABASE):
    """A read-write connection to a copy of the database that replaces it only if the block succeeds.

    An import that fails, or is killed, leaves the database byte-identical.
    """
    db_path = Path(db_path)
    if not db_path.is_file():
        raise FileNotFoundError(f"no database at {db_path}: build it with `make db`")
    with build_lock(db_path):
        tmp = db_path.with_name(f".{db_path.name}.tmp-{os.getpid()}")
        try:
            shutil.copyfile(db_path, tmp)
            with duckdb.connect(str(tmp)) as con:
                yield con
                con.execute("CHECKPOINT")
            os.replace(tmp, db_path)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


BUILD_MEMORY_LIMIT = "1GB"

# Question ids follow language, type (specific first) and the number in the upstream name; answer ids
# follow their question, human reference answers first, then models by key.
QUESTIONS_SQL = """
INSERT INTO questions
SELECT row_number() OVER (ORDER BY r.language, r.question_type DESC, r.name_index, r.name) AS question_id,
       r.name, r.language, r.question_type, 'human', r.source, r.collector,
       CASE WHEN r.question_type = 'agnostic' THEN english.category ELSE r.category END,
       r.text, coalesce(r.text_en, CASE WHEN r.language = 'English' THEN r.text END), strlen(r.text),
       FALSE, r.upstream_human_evaluated, r.url
FROM raw_questions r
LEFT JOIN (SELECT name, category FROM raw_questions WHERE question_type = 'agnostic' AND language = 'English') english
       ON r.question_type = 'agnostic' AND english.name = r.name
"""
# The window runs over the keys alone: sorting whole answers, texts and all, would hold them in memory.
ANSWERS_SQL = """
INSERT INTO answers
SELECT k.answer_id, k.question_id, a.name, a.model, a.model_version, a.is_human, a.is_dot_points, a.language,
       a.text, a.text_en, strlen(a.text)
FROM (
    SELECT r.rowid AS raw_row, q.question_id,
           row_number() OVER (ORDER BY q.question_id, r.is_human DESC, r.model NULLS LAST, r.name) AS answer_id
    FROM raw_answers r
    JOIN questions q ON q.name = r.question_name AND q.language = r.question_language
) k
JOIN raw_answers a ON a.rowid = k.raw_row
ORDER BY k.answer_id
"""
MODEL_VERSIONS_SQL = """
SELECT model, string_agg(DISTINCT model_version, ', ' ORDER BY model_version) AS version
FROM answers WHERE NOT is_human GROUP BY model
"""


def load_release(con: duckdb.DuckDBPyConnection, source: Path, progress: bool | None = True) -> None:
    """Create the release's tables in `con` from the folder `source`, one dataset file at a time.

    Every problem of every file is collected first; `InputError` lists them all.
    """
    problems = Problems()
    languages, categories = ingest.read_metadata(source, problems)
    insert(con, TABLE_BY_NAME["languages"], languages)
    insert(con, TABLE_BY_NAME["categories"], categories)
    first = True
    for questions, answers in ingest.read_datasets(source, languages, problems, progress):
        for name, frame in (("raw_questions", questions), ("raw_answers", answers)):
            con.register("incoming", frame.to_arrow())
            con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM incoming" if first
                        else f"INSERT INTO {name} SELECT * FROM incoming")
            con.unregister("incoming")
        first = False
    problems.raise_if_any()
    con.execute(TABLE_BY_NAME["questions"].ddl())
    con.execute(QUESTIONS_SQL)
    for name, language, category in con.execute(
            "SELECT name, language, category FROM questions WHERE category NOT IN (SELECT category FROM categories) "
            "ORDER BY question_id").fetchall():
        problems.add(source / "datasets", f"question {name} ({language})", "question.category",
                     f"unknown category {category!r}: not in categories-metadata.csv")
    problems.raise_if_any()
    con.execute(TABLE_BY_NAME["answers"].ddl())
    con.execute(ANSWERS_SQL)
    con.execute("DROP TABLE raw_questions; DROP TABLE raw_answers")
    versions = con.sql(MODEL_VERSIONS_SQL).pl()
    insert(con, TABLE_BY_NAME["models"],
           ingest.model_table().join(versions, on="model", how="inner", maintain_order="left"))
    ratings = ingest.read_ratings(
        source / "all_ratings.csv",
        con.sql("SELECT question_id, language, question_type, text FROM questions").pl(),
        con.sql("SELECT answer_id, question_id, model, is_human FROM answers WHERE NOT is_human").pl(),
        languages, problems)
    problems.raise_if_any()
    insert(con, TABLE_BY_NAME["ratings"], ratings)
    con.execute("UPDATE questions SET human_evaluated = question_id IN (SELECT question_id FROM ratings)")


def build(source: Path | str = paths.RAW_CALMQA, db_path: Path | str = paths.DATABASE, verify: bool = True,
          nativqa_folder: Path | str = paths.NATIVQA, progress: bool | None = True) -> dict:
    """Build the database at `db_path` from the CaLMQA release folder `source` and the NativQA tables of
    `nativqa_folder`; returns the row count per table."""
    source, db_path = Path(source), Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    stage_seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def stage(name: str):
        begun = time.monotonic()
        yield
        stage_seconds[name] = round(time.monotonic() - begun, 2)

    with build_lock(db_path):
        # A build killed mid-way leaves its temporary file behind; holding the lock, no other build owns one.
        for stale in db_path.parent.glob(f".{db_path.name}.tmp-*"):
            stale.unlink()
        if verify:
            with stage("checksums"):
                release.verify(source)
        tmp = db_path.with_name(f".{db_path.name}.tmp-{os.getpid()}")
        try:
            # DuckDB would otherwise hold up to 80% of the machine's memory in its buffer pool.
            with duckdb.connect(str(tmp), config={"memory_limit": BUILD_MEMORY_LIMIT}) as con:
                con.execute("SET enable_progress_bar = false")  # the build draws its own
                with stage("release"):
                    load_release(con, source, progress)
                    insert(con, TABLE_BY_NAME["source_files"], source_checksums(source))
                    for table in TABLES:
                        if not _exists(con, table.name):
                            con.execute(table.ddl())  # filled later, by imports
                with stage("surface"):
                    surface.write_tables(con)
                with stage("language_id_all"):
                    language_id_all.write_tables(con)
                with stage("nativqa"):
                    nativqa.write_tables(con, nativqa_folder)
                counts = {t.name: con.execute(f"SELECT count(*) FROM {t.name}").fetchall()[0][0] for t in all_tables()}
                con.execute("CHECKPOINT")
            os.replace(tmp, db_path)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    return {**counts, "seconds": round(time.monotonic() - started, 1), "stage_seconds": stage_seconds}


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]).fetchall()[0][0])
