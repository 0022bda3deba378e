"""Two databases hold the same rows in every table of the schema."""

from pathlib import Path

import duckdb

from analysis import schema


def assert_same_tables(built: Path, expected: Path) -> None:
    """Every table of `built` equals that of `expected`: EXCEPT ALL both ways is empty."""
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{built}' AS built (READ_ONLY)")
        con.execute(f"ATTACH '{expected}' AS expected (READ_ONLY)")
        for table in schema.TABLES:
            for a, b in (("built", "expected"), ("expected", "built")):
                extra = con.execute(
                    f"SELECT count(*) FROM (SELECT * FROM {a}.{table.name} EXCEPT ALL SELECT * FROM {b}.{table.name})"
                ).fetchall()[0][0]
                assert extra == 0, f"{table.name}: {extra} rows of the {a} database are not in the {b} one"
