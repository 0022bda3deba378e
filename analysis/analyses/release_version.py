"""Which version of the CaLMQA release a database was built from: the pinned one (every file of
data/calmqa-manifest.csv with its checksum) or another (`make db SOURCE=... VERIFY=no`).

The reports say it, and what they say of the papers' numbers depends on it: the claims registry's
reasons (`data/paper/claims`) describe the pinned release, so a report of another version shows the
paper's value and the suite's with their status, but not those reasons.
"""

from dataclasses import dataclass

import duckdb

from .. import store
from ..core.errors import StorageError
from ..core.text import inert


@dataclass(frozen=True)
class Release:
    fingerprint: str  # `io.release.fingerprint` of the files the database was built from
    n_files: int
    differing: tuple[str, ...]  # the pinned release's files that this version lacks or changed

    @property
    def pinned(self) -> bool:
        return not self.differing

    def describe(self, markup: str | None = None) -> str:
        """The version in words, for a report's provenance and text; the file names made inert `markup`
        (`core.text.inert`) when the words go into Markdown or HTML."""
        if self.pinned:
            return f"the pinned CaLMQA release (release {self.fingerprint}, {self.n_files} files)"
        names = [inert(name, markup) if markup else name for name in self.differing[:3]]
        changed = ", ".join(names) + (f" and {len(self.differing) - 3} more" if len(self.differing) > 3 else "")
        return (
            f"another version of the CaLMQA release (release {self.fingerprint}, {self.n_files} files; "
            f"{len(self.differing)} of the pinned release's files differ or are missing: {changed})"
        )


def of(con: duckdb.DuckDBPyConnection) -> Release:
    """The release the database behind `con` was built from (its `source_files`, `store.built_from`)."""
    record = store.built_from(con)
    if record is None:
        path = con.sql("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0][0]
        raise StorageError(path, "holds no source_files table: it was not built by `make db`; rebuild it")
    return from_record(record)


def from_record(record: dict) -> Release:
    """A `Release` from what `store.built_from` gives (and a report's run records)."""
    return Release(record["fingerprint"], record["n_files"], tuple(record["differing"]))


def reasons_note(version: Release) -> str:
    """What a report of another version says instead of the registry's reasons; empty for the pinned one."""
    if version.pinned:
        return ""
    return (
        f"This database was built from {version.describe('markdown')}. The papers' numbers are set against this "
        "version's "
        "values; the claims registry's reasons for the numbers computed from the release describe the pinned "
        "release and are not shown."
    )
