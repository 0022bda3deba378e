"""The failures a user can cause, each with a message that says where and why, and nothing else.

`Failure` is what the command line (`analysis.cli`, the suite's one error boundary) turns into one
line `error: ...` and exit status 2, never a traceback: bad input (`InputError`, naming the file, the
record and the field of every problem), a failed notebook, a new database that failed the build's
checks, a file or database that cannot be read or written (`StorageError`: the path and the
operating system's or the database's reason), and a Dask cluster that cannot be reached, goes away or
runs other versions than the driver (`WorkerRefused`). `os_reason` words an `OSError` the same way.
"""

import errno
import os
from dataclasses import dataclass
from pathlib import Path


class Failure(Exception):
    """A failure the user can act on: its message names the place and the reason."""


@dataclass(frozen=True)
class Problem:
    file: str
    record: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.record:
            where += f", {self.record}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class InputError(Failure):
    """Raised with every problem of an input at once, so that a researcher can fix them in one pass."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:50]]
        if len(self.problems) > 50:
            lines.append(f"... and {len(self.problems) - 50} more problems")
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{len(self.problems)} {noun} in the input:\n  " + "\n  ".join(lines))


class Problems:
    """Collects problems while a file is read; `raise_if_any` stops before anything is written."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._partly_read: set[str] = set()

    def add(self, file: str | Path, record: str | None, field: str | None, message: str) -> None:
        self.items.append(Problem(str(file), record, field, message))

    def add_partly_read(self, file: str | Path, record: str | None, field: str | None, message: str) -> None:
        """A problem after which some of the file's records are not known (a header, a size or a line that
        cannot be read, a key that is not one): what refers to them is not reported again (`read_whole`)."""
        self.add(file, record, field, message)
        self.partly_read(file)

    def partly_read(self, file: str | Path) -> None:
        """Some of the file's records are not known (a problem said why)."""
        self._partly_read.add(str(file))

    def read_whole(self, file: str | Path | None) -> bool:
        """Every record of `file` was read (with or without problems of its own): a reference to a record
        it does not hold is a problem of the referring file, not a consequence of this one's."""
        return file is not None and str(file) not in self._partly_read

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


class NotebookFailed(Failure):
    """A notebook of `make figures` raised: names the notebook and the cell, and where the executed copy is."""

    def __init__(self, source: Path, executed: Path, error) -> None:
        first_line = (error.source or "").strip().splitlines()[:1]
        super().__init__(
            f"{source.name} failed in code cell {error.cell_index} (execution count {error.exec_count}"
            f"{', `' + first_line[0] + '`' if first_line else ''}): {error.ename}: {error.evalue}\n"
            f"The executed copy, with the traceback, is kept at {executed}; no report was written."
        )


class CheckFailed(Failure):
    """A finished database failed the build's checks (analysis/pipeline/checks.py); it was not written."""

    def __init__(self, db_path: Path, failures: list[str]):
        self.failures = list(failures)
        noun = "check" if len(failures) == 1 else "checks"
        super().__init__(
            f"{db_path} was not written: {len(failures)} {noun} of the new database failed:\n  "
            + "\n  ".join(self.failures)
        )


class WorkerRefused(Failure):
    """A worker of a Dask cluster that does not run the driver's versions (`pipeline.dask_executor`): the
    message names both. Raised on a worker too, so it takes only its message."""


class StorageError(Failure):
    """A file, folder or database that cannot be read or written: its path and the reason."""

    def __init__(self, path: Path | str, reason: str):
        self.path = str(path)
        super().__init__(f"{path}: {reason}")


DISK_FULL = "the disk is full: free space (the database is written beside itself, then moved into place)"
# What the user can do about the commonest reasons a file cannot be read or written.
_ADVICE = {
    errno.ENOSPC: DISK_FULL,
    errno.EDQUOT: "the disk quota is exceeded: free space",
    errno.EACCES: "permission denied: check the file's and its folder's permissions",
    errno.EPERM: "operation not permitted: check the file's and its folder's permissions",
    errno.EROFS: "the file system is read-only: choose a writable place",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOENT: "no such file or folder",
    errno.ENAMETOOLONG: "the name is too long for the file system",
}


def reason(exc: OSError) -> str:
    """Why an operating system call failed, in words that say what to do."""
    advice = _ADVICE.get(exc.errno) if exc.errno is not None else None
    return advice or exc.strerror or (os.strerror(exc.errno) if exc.errno else str(exc))


def os_reason(exc: OSError) -> str:
    """An `OSError` as `path: reason`, e.g. `data/x.duckdb: the disk is full: free space ...`."""
    where = os.fsdecode(exc.filename) if exc.filename is not None else "a file"
    if exc.filename2 is not None:
        where = f"{where} -> {os.fsdecode(exc.filename2)}"
    return f"{where}: {reason(exc)}"
