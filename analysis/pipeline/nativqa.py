"""The NativQA published results into the database: the `nativqa_*` tables from the CSVs of data/nativqa
(docs/methods.md, section 07)."""

from pathlib import Path

import duckdb
import polars as pl

from ..core import paths
from ..io import nativqa
from ..schema import NATIVQA_TABLES
from ..store import insert


def write_tables(
    con: duckdb.DuckDBPyConnection, folder: Path | str = paths.NATIVQA, frames: dict[str, pl.DataFrame] | None = None
) -> dict[str, int]:
    """Validate the CSVs of `folder` and create and fill the `nativqa_*` tables; returns rows per table.
    `frames`: the folder as `io.nativqa.read_folder` read it already (the build validates it first).

    Nothing is written unless every file is valid. Tables loaded before are replaced, so that the CSVs
    can be reloaded into a database that already has them.
    """
    frames = frames if frames is not None else nativqa.read_folder(folder)
    for kind, table in NATIVQA_TABLES.items():
        con.execute(f"DROP TABLE IF EXISTS {table.name}")
        insert(con, table, frames[kind])
    return {table.name: frames[kind].height for kind, table in NATIVQA_TABLES.items()}
