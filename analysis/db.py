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
from tqdm import tqdm

from . import ingest, nativqa, paths, release
from .schema import TABLES, Table, all_tables


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


def build(source: Path | str = paths.RAW_CALMQA, db_path: Path | str = paths.DATABASE, verify: bool = True,
          nativqa_folder: Path | str = paths.NATIVQA) -> dict:
    """Build the database at `db_path` from the CaLMQA release folder `source` and the NativQA tables of
    `nativqa_folder`; returns the row count per table."""
    source, db_path = Path(source), Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with build_lock(db_path):
        # A build killed mid-way leaves its temporary file behind; holding the lock, no other build owns one.
        for stale in db_path.parent.glob(f".{db_path.name}.tmp-*"):
            stale.unlink()
        if verify:
            release.verify(source)
        data = ingest.read_release(source)
        tmp = db_path.with_name(f".{db_path.name}.tmp-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            with duckdb.connect(str(tmp)) as con:
                frames = {
                    "languages": data.languages, "categories": data.categories, "models": data.models,
                    "questions": data.questions, "answers": data.answers, "ratings": data.ratings,
                    "source_files": source_checksums(source),
                }
                for table in tqdm(TABLES, desc="write database", unit="table", disable=None):
                    if table.name in frames:
                        insert(con, table, frames[table.name])
                    else:
                        con.execute(table.ddl())  # filled later, by imports
                nativqa.write_tables(con, nativqa_folder)
                counts = {t.name: con.execute(f"SELECT count(*) FROM {t.name}").fetchall()[0][0] for t in all_tables()}
                con.execute("CHECKPOINT")
            os.replace(tmp, db_path)
        finally:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    counts["seconds"] = round(time.monotonic() - started, 1)
    return counts
