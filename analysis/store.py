"""The database file: a read-only connection for every reader, and the two ways to write it, each
atomic, so that a failed or killed write leaves the previous file byte-identical: `create` a new
database (the build), or, `writing` an existing one (an import), read it to validate the change and
then modify a copy of it. Both hold the database's lock, so that two writers take turns, and both
first remove what a killed write left beside the database.

Every database path goes through `resolve` first: a symbolic link is followed (the file it names is
the one read and replaced), and a path that is a folder, a special file (a device, a FIFO, a socket)
or, for a write, a read-only file is refused with a `StorageError` naming it and the reason, as is a
file that is not a DuckDB database (a build never replaces such a file), a DuckDB database of another
schema (for an import), and a database that cannot be read or written (a full disk, a read-only
folder): the reason the operating system or DuckDB gives.

A write-ahead log (`<database>.wal`) that another writer left beside the database holds committed
changes: a write checkpoints it into the database first (DuckDB's own crash-safe checkpoint), and
refuses, naming it, a log DuckDB cannot apply or a database another program has open.

`from analysis import store; con = store.connect(db_path)` is how notebooks open it. When the
environment names a file in `READS_VARIABLE` (a report's run does: `reporting.provenance`), `connect`
adds to it the sha256 of the database it opened and the release it was built from, so that a report
records the state it read.
"""

import contextlib
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import polars as pl

from . import schema
from .core import errors, files, identity, paths
from .core.errors import StorageError
from .io import release
from .schema import TABLES, Table

# DuckDB would otherwise hold up to 80% of the machine's memory in its buffer pool. At 50x the snapshot
# a larger pool made the build no faster, only larger (the pool is most of the build's memory besides
# the dataset file being read); 256 MB keeps the driver of a build under 1 GiB (docs/performance.md).
WRITE_MEMORY_LIMIT_MIB = 256
WRITE_MEMORY_LIMIT = f"{WRITE_MEMORY_LIMIT_MIB}MB"
# Every DuckDB database file has these bytes at this offset of its header.
_MAGIC, _MAGIC_AT = b"DUCK", 8
READS_VARIABLE = "CALMQA_DATABASE_READS"


def resolve(db_path: Path | str, writing: bool = False) -> Path:
    """The database file that `db_path` names, symbolic links followed (a write replaces the file a link
    names, not the link). Refused with the reason: a folder, a special file (a device, a FIFO, a socket),
    a link that loops, and, when `writing`, a read-only file (a write would replace it with a writable one)."""
    db_path = Path(db_path)
    try:
        resolved = Path(os.path.realpath(db_path, strict=False))
        info = resolved.stat()
    except FileNotFoundError:
        return resolved
    except OSError as exc:  # a loop of links, a part of the path that is a file, permissions
        raise StorageError(db_path, f"cannot be used as a database: {errors.reason(exc)}") from None
    shown = db_path if resolved == db_path.absolute() else f"{db_path} (-> {resolved})"
    if stat.S_ISDIR(info.st_mode):
        raise StorageError(shown, "is a folder, not a database: name a .duckdb file")
    special = files.special_kind(info.st_mode)
    if special is not None:
        raise StorageError(shown, f"is {special}, not a database file: name a .duckdb file")
    if writing and not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise StorageError(
            shown,
            "is read-only (no write permission), so it is not changed: make it writable "
            "(chmod u+w) to write it, or name another file",
        )
    return resolved


def _kind(db_path: Path) -> str:
    """`missing`, `duckdb` or `other` (a file that is not a DuckDB database), of a resolved path."""
    if not db_path.exists():
        return "missing"
    try:
        with open(db_path, "rb") as handle:
            header = handle.read(_MAGIC_AT + len(_MAGIC))
    except OSError as exc:
        raise StorageError(db_path, errors.reason(exc)) from None
    return "duckdb" if header[_MAGIC_AT:] == _MAGIC else "other"


def _existing(db_path: Path) -> None:
    """Refuse a database path that is not an existing DuckDB database, saying what it is."""
    kind = _kind(db_path)
    if kind == "missing":
        raise StorageError(db_path, "no database here: build it with `make db` (DB= for another path)")
    if kind == "other":
        raise StorageError(db_path, "is not a DuckDB database")


def write_ahead_log(db_path: Path) -> Path:
    """Where DuckDB keeps the changes not yet checkpointed into `db_path`."""
    return db_path.with_name(db_path.name + ".wal")


def _checkpoint_log(db_path: Path) -> None:
    """Checkpoint a write-ahead log left beside the database into it (what DuckDB does when it opens
    the database for writing; crash-safe: the log stays until its changes are in the file), so that a
    copy of the file holds every committed change and no log is left for an older file. Refuses a log
    DuckDB cannot apply, and a database another program has open."""
    log = write_ahead_log(db_path)
    if not log.exists():
        return
    try:
        with duckdb.connect(str(db_path)) as con:
            con.execute("CHECKPOINT")
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise StorageError(
                db_path,
                "is open in another program, so the write-ahead log beside it cannot be checkpointed into it; "
                f"close it there and run again ({exc})",
            ) from None
        raise StorageError(
            log,
            "is a write-ahead log that DuckDB cannot apply to the database beside it (it was written for "
            f"another version of that file): the database was not changed; move the log away and run again ({exc})",
        ) from None


def check_schema(con: duckdb.DuckDBPyConnection, db_path: Path) -> None:
    """Refuse a DuckDB database that is not this suite's, or is of another version of its schema."""
    found = {
        (table, column)
        for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall()
    }
    missing = [f"{t.name}.{c}" for t in TABLES for c in t.column_names() if (t.name, c) not in found]
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    macros = {
        r[0]
        for r in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE macro_definition IS NOT NULL"
        ).fetchall()
    }
    missing += [f"view {v.name}" for v in schema.VIEWS if v.name not in views]
    missing += [f"macro {m.name}" for m in schema.MACROS if m.name not in macros]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5:,} more" if len(missing) > 5 else "")
        raise StorageError(
            db_path,
            f"is a DuckDB database of another schema, or of an older version of this suite's (it has no "
            f"{shown}): an import writes only a database this version built; build one with `make db` "
            "(DB= for another path)",
        )


def connect(db_path: Path | str = paths.DATABASE) -> duckdb.DuckDBPyConnection:
    """A read-only connection, as every notebook uses: many readers may share the file."""
    db_path = resolve(db_path)
    _existing(db_path)
    reads = os.environ.get(READS_VARIABLE)
    try:
        if reads:
            return _connect_recorded(db_path, Path(reads))
        return duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error as exc:
        raise StorageError(db_path, f"cannot be opened: {exc}") from None


def _connect_recorded(db_path: Path, reads: Path) -> duckdb.DuckDBPyConnection:
    """Connect, and add the sha256 of the very file opened to `reads` (one JSON line): a writer replaces
    the database by renaming, so the file keeps its content while it is open, and the name is checked
    to still be that file once DuckDB has opened it."""
    for _ in range(5):
        with open(db_path, "rb") as handle:
            opened = os.fstat(handle.fileno())
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            con = duckdb.connect(str(db_path), read_only=True)
            now = os.stat(db_path)
        if (now.st_dev, now.st_ino, now.st_mtime_ns) == (opened.st_dev, opened.st_ino, opened.st_mtime_ns):
            read = {"database": str(db_path.resolve()), "sha256": digest, "mtime_ns": opened.st_mtime_ns}
            with open(reads, "a", encoding="utf-8") as out:
                out.write(json.dumps({**read, "release": built_from(con)}) + "\n")
            return con
        con.close()  # replaced while it was opened: open the new one
    raise StorageError(db_path, "was replaced again and again while it was being opened")


def built_from(con: duckdb.DuckDBPyConnection) -> dict | None:
    """The release the database was built from: the fingerprint of its files (`source_files`), their
    number, and the pinned release's files it lacks or holds changed; None for a database without them,
    and for a study of one's own (its `study` row declares no paper: its files are no CaLMQA release)."""
    if not table_exists(con, "source_files"):
        return None
    if table_exists(con, "study") and con.execute("SELECT paper IS NULL FROM study").fetchall() == [(True,)]:
        return None
    checksums = con.sql("SELECT file, sha256 FROM source_files").pl()
    return {
        "fingerprint": release.fingerprint(checksums),
        "n_files": checksums.height,
        "differing": release.differences(checksums),
    }


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return (
        con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchall()[0][0] > 0
    )


def create_definitions(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) the schema's macros and views (`schema.MACROS`, `schema.VIEWS`) in the open
    read-write database: the build does, so that every reader of the database calls the same rules."""
    create_macros(con)
    for view in schema.VIEWS:
        con.execute(view.ddl())


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) the schema's macros (`schema.MACROS`): in the database, or in a connection of
    its own where the build computes a verdict in SQL before storing it."""
    for macro in schema.MACROS:
        con.execute(macro.ddl())


def insert(con: duckdb.DuckDBPyConnection, table: Table, frame: pl.DataFrame) -> None:
    """Create `table` from its schema and fill it from `frame` (columns matched by name)."""
    con.execute(table.ddl())
    append(con, table, frame)


def append(con: duckdb.DuckDBPyConnection, table: Table, frame: pl.DataFrame) -> None:
    """Add the rows of `frame` (columns matched by name) to the existing `table`."""
    con.register("incoming", frame.select(table.column_names()).to_arrow())
    con.execute(f"INSERT INTO {table.name} SELECT * FROM incoming")
    con.unregister("incoming")


@contextlib.contextmanager
def _locked(db_path: Path) -> Iterator[None]:
    """The database's lock, and what killed writes left beside it removed: holding the lock, no other
    write of it is under way."""
    with files.lock(db_path, f"waiting for another write of {db_path} to finish ..."):
        files.remove_stale(db_path, locked=True)
        yield


@contextlib.contextmanager
def _written(db_path: Path, tmp: Path, copy: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to `tmp` (a copy of `db_path` when `copy`), checkpointed when the block
    ends; an error of the disk becomes a `StorageError` naming the database."""
    try:
        if copy:
            shutil.copyfile(db_path, tmp)
        with duckdb.connect(str(tmp), config={"memory_limit": WRITE_MEMORY_LIMIT}) as con:
            con.execute("SET enable_progress_bar = false")  # long writes draw their own
            yield con
            con.execute("CHECKPOINT")
        if db_path.exists():
            shutil.copymode(db_path, tmp)  # the replacement keeps the permissions of the file it replaces
    except (duckdb.IOException, duckdb.OutOfMemoryException, duckdb.FatalException) as exc:
        # (DuckDB reports a full disk as any of these, depending on what it was writing.)
        full = f"{errors.DISK_FULL}: " if "No space left on device" in str(exc) else ""
        raise StorageError(db_path, f"could not be written (nothing was changed): {full}{exc}") from None
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise StorageError(db_path, f"could not be written (nothing was changed): {errors.reason(exc)}") from None
    finally:
        write_ahead_log(tmp).unlink(missing_ok=True)


@contextlib.contextmanager
def create(
    db_path: Path | str,
    then: Callable[[Path], None] | None = None,
    first: Callable[[Path], None] | None = None,
    last: Callable[[], None] | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a new, empty database that replaces `db_path` only if the block
    succeeds; under the database's lock, `first(path)` runs before anything is written, `last()` once
    the new database is complete on disk (its last write done) and before it replaces the old one,
    `then(path)` once it has. An error raised by any of them leaves the old database as it was.

    A file at `db_path` that is not a DuckDB database is never replaced. The path is `resolve`d: a
    link's file is replaced, and a special or read-only file is refused."""
    db_path = resolve(db_path, writing=True)
    if _kind(db_path) == "other" and db_path.stat().st_size:
        raise StorageError(
            db_path,
            "is not a DuckDB database, and a build replaces only a database: name another file, or remove this one",
        )
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(db_path):
        if first is not None:
            first(db_path)
        if _kind(db_path) == "duckdb":
            _checkpoint_log(db_path)  # so that a killed build leaves the old database whole, log included
        with files.atomic_write(db_path) as tmp:
            with _written(db_path, tmp, copy=False) as con:
                yield con
            if last is not None:
                last()
        if then is not None:
            then(db_path)


def source_of(db_path: Path | str) -> identity.StudySource | None:
    """The study folder the database at `db_path` belongs to (its `source` and `study` rows,
    `core.identity`); None where there is no database, or one without that record (of an older version
    of the suite, or not the suite's)."""
    db_path = resolve(db_path)
    if _kind(db_path) != "duckdb":
        return None
    try:
        with duckdb.connect(str(db_path), read_only=True) as con:
            if not (table_exists(con, "source") and table_exists(con, "study")):
                return None
            rows = con.execute(
                "SELECT s.name, s.paper IS NOT NULL, f.folder, f.fingerprint FROM study s, source f"
            ).fetchall()
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            raise StorageError(
                db_path,
                f"is open in another program, so the study it holds cannot be read; close it there and run again ({exc})",
            ) from None
        raise StorageError(db_path, f"cannot be read: {exc}") from None
    if len(rows) != 1:
        return None
    name, release, folder, fingerprint = rows[0]
    return identity.StudySource(name, folder, fingerprint, release)


class _Unchanged(Exception):
    """Raised inside `Writing.modifying` to drop the copy: the database is left as it is."""


class Writing:
    """A write of an existing database under its lock (`writing`): `reading` the database as it is, to
    validate what will change it, then `modifying` a copy that replaces it only if the block succeeds.
    Holding the lock throughout, what was validated is what is written: no other write comes between."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.replaced = False

    @contextlib.contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        try:
            with connect(self.db_path) as con:
                check_schema(con, self.db_path)
                yield con
        except duckdb.IOException as exc:  # a damaged file may open, and fail when read
            raise StorageError(self.db_path, f"cannot be read: {exc}") from None

    @contextlib.contextmanager
    def modifying(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection to a copy of the database that replaces it only if the block succeeds
        and did not call `unchanged`: a write that fails, is killed, or changes nothing leaves the
        database byte-identical (and its time too, so that nothing made from it looks stale)."""
        _checkpoint_log(self.db_path)
        try:
            with files.atomic_write(self.db_path) as tmp, _written(self.db_path, tmp, copy=True) as con:
                yield con
        except _Unchanged:
            return
        self.replaced = True

    def unchanged(self) -> None:
        """Inside `modifying`: drop the copy, the database stays as it was."""
        raise _Unchanged


@contextlib.contextmanager
def writing(db_path: Path | str = paths.DATABASE) -> Iterator[Writing]:
    """Hold the lock of the existing database `db_path` (`resolve`d: a link's file is written, a special
    or read-only file refused) for a `Writing` (an import)."""
    db_path = resolve(db_path, writing=True)
    _existing(db_path)
    with _locked(db_path):
        yield Writing(db_path)


def copy(source: Path | str, target: Path | str) -> Path:
    """Copy the database `source` (with the changes of a write-ahead log beside it) to `target`, as a
    write of `target`: under its lock, atomically."""
    source, target = resolve(source), resolve(target, writing=True)
    _existing(source)
    if _kind(target) not in ("missing", "duckdb"):
        raise StorageError(target, "is not a DuckDB database, and a copy replaces only a database")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target), files.atomic_write(target) as tmp:
        shutil.copyfile(source, tmp)
        log = write_ahead_log(source)
        if log.exists():
            shutil.copyfile(log, write_ahead_log(tmp))
            with _written(target, tmp, copy=False):
                pass  # opening the copy applies the log; the block's end checkpoints it
    return target
