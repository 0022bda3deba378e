"""The database file: a read-only connection for every reader, and the two ways to write it, each
atomic, so that a failed or killed write leaves the previous file byte-identical: `create` a new
database (the build), `modify` a copy of the existing one (an import). Both hold the database's lock,
so that two writers take turns.

`from analysis import store; con = store.connect(db_path)` is how notebooks open it.
"""

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl

from .core import files, paths
from .schema import Table

# DuckDB would otherwise hold up to 80% of the machine's memory in its buffer pool. At 50x the snapshot
# a larger pool made the build no faster, only larger (the pool is most of the build's memory besides
# the dataset file being read).
WRITE_MEMORY_LIMIT = "512MB"


def connect(db_path: Path | str = paths.DATABASE) -> duckdb.DuckDBPyConnection:
    """A read-only connection, as every notebook uses: many readers may share the file."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise FileNotFoundError(f"no database at {db_path}: build it with `make db`")
    return duckdb.connect(str(db_path), read_only=True)


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchall()[0][0] > 0


def insert(con: duckdb.DuckDBPyConnection, table: Table, frame: pl.DataFrame) -> None:
    """Create `table` from its schema and fill it from `frame` (columns matched by name)."""
    con.execute(table.ddl())
    append(con, table, frame)


def append(con: duckdb.DuckDBPyConnection, table: Table, frame: pl.DataFrame) -> None:
    """Add the rows of `frame` (columns matched by name) to the existing `table`."""
    con.register("incoming", frame.select(table.column_names()).to_arrow())
    con.execute(f"INSERT INTO {table.name} SELECT * FROM incoming")
    con.unregister("incoming")


def _lock(db_path: Path):
    return files.lock(db_path, f"waiting for another write of {db_path} to finish ...")


@contextlib.contextmanager
def _written(db_path: Path, tmp: Path, copy: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to `tmp` (a copy of `db_path` when `copy`), checkpointed when the block ends."""
    try:
        if copy:
            shutil.copyfile(db_path, tmp)
        with duckdb.connect(str(tmp), config={"memory_limit": WRITE_MEMORY_LIMIT}) as con:
            con.execute("SET enable_progress_bar = false")  # long writes draw their own
            yield con
            con.execute("CHECKPOINT")
    finally:
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


@contextlib.contextmanager
def create(db_path: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a new, empty database that replaces `db_path` only if the block succeeds."""
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with _lock(db_path):
        # A write killed mid-way leaves its temporary file behind; holding the lock, no other write owns one.
        for stale in db_path.parent.glob(f".{db_path.name}.tmp-*"):
            stale.unlink()
        with files.atomic_write(db_path) as tmp, _written(db_path, tmp, copy=False) as con:
            yield con


@contextlib.contextmanager
def modify(db_path: Path | str = paths.DATABASE) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a copy of the database that replaces it only if the block succeeds.

    An import that fails, or is killed, leaves the database byte-identical.
    """
    db_path = Path(db_path)
    if not db_path.is_file():
        raise FileNotFoundError(f"no database at {db_path}: build it with `make db`")
    with _lock(db_path), files.atomic_write(db_path) as tmp, _written(db_path, tmp, copy=True) as con:
        yield con
