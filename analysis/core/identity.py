"""Which study folder a database and an output folder belong to (docs/studies.md, "One database and one
output folder per study folder").

A database is built from one source folder: a study folder, known by its resolved path, or a version of
the CaLMQA release, which is one study whichever folder holds it (`make db SOURCE=... VERIFY=no`). The
build records the folder and a fingerprint of its files in the database (the `source` table) and beside
it (`<database>.study.json`, which Make reads before anything runs: scripts/study_name.py); every report
run and the index record them in their output folder (`build/study.json` under it). A build into a
database, or a run into an output folder, that holds another study folder's study is refused with a
message naming both folders: `DB=` and `OUT=` keep two studies apart.

Standard library only: scripts/study_name.py imports it with the system's Python, before the
environment exists.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import files

RECORD_NAME = "study.json"


@dataclass(frozen=True)
class StudySource:
    """The study a database or output folder holds: its name, the resolved path of the folder it was built
    from and the fingerprint of that folder's files (`io.release.fingerprint`); `release` for the CaLMQA
    release, whose versions are one study whatever their folder."""

    study: str
    folder: str
    fingerprint: str
    release: bool

    def same_study(self, other: StudySource) -> bool:
        """Whether `other` is this study: both the CaLMQA release, or both the one study folder."""
        if self.release or other.release:
            return self.release and other.release
        return self.folder == other.folder

    def described(self) -> str:
        if self.release:
            return f"the CaLMQA release (from {self.folder})"
        return f"the study {self.study!r} of the folder {self.folder}"


def database_record(db_path: Path | str) -> Path:
    """The copy of a database's `source` record beside it, for Make."""
    db_path = Path(db_path)
    return db_path.with_name(db_path.name + "." + RECORD_NAME)


def output_record(build_root: Path | str) -> Path:
    """The record of an output folder (its `build/` folder, beside `figures/` and `reports/`)."""
    return Path(build_root) / RECORD_NAME


def read(path: Path | str) -> StudySource | None:
    """The record at `path`; None when there is none, or it cannot be read (a later write replaces it)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return StudySource(str(data["study"]), str(data["folder"]), str(data["fingerprint"]), bool(data["release"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(path: Path | str, source: StudySource, **extra: str) -> Path:
    """Write the record `source` (and `extra` fields people read, such as the database) to `path`, atomically."""
    return files.write_text(path, json.dumps({**asdict(source), **extra}, indent=1, ensure_ascii=False) + "\n")


def database_refusal(db_path: Path | str, held: StudySource, wanted: StudySource) -> str:
    """Why a build of `wanted` does not replace the database `db_path`, which holds `held`."""
    return (
        f"{db_path} holds {held.described()}, and {wanted.described()} is another (a database belongs to one "
        f"study folder), so it was not replaced: give this one its own database and output folder (make study "
        f"STUDY=... DB=data/studies/{wanted.study}-2.duckdb OUT=studies/{wanted.study}-2), or remove {db_path} "
        "to build it from this folder"
    )


def output_refusal(
    out: Path | str, record: Path | str, held: StudySource, wanted: StudySource, db_path: Path | str
) -> str:
    """Why the reports of the database `db_path`, of `wanted`, are not written into the output folder
    `out` (whose record is `record`), which holds `held`'s."""
    return (
        f"{out} holds the reports of {held.described()} (its record: {record}), and {wanted.described()} (the "
        f"database {db_path}) is another (an output folder belongs to one study folder), so nothing was written "
        "there: give OUT= another folder, or remove that record and the figures and reports beside it to write "
        "this study's reports there"
    )
