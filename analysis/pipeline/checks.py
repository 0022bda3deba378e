"""The build's checks, run on the finished database before it replaces the previous one, so that a
database that fails one is never written (in the manner of PUDL's data validation):

- every reference the schema declares holds (`schema.Column.references`): no answer of an unknown
  question, no verdict of an unknown answer, no rating of an unknown model;
- every model answer has its surface verdicts and its verdict in every language, and (where the study's
  verdicts are the paper's pipeline) every question its language identification;
- a build of the pinned release gives the rows per table and language of `data/calmqa-expected-counts.csv`,
  counted over the release's own rows (imports add rows after them, with higher ids).
"""

from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from .. import schema
from ..core.errors import Problems
from ..io import records

# (table, key, the rows that must all have one, what they are)
COVERAGE = (
    ("answer_surface", "answer_id", "SELECT answer_id FROM answers WHERE NOT is_human", "model answer"),
    ("answer_language_all", "answer_id", "SELECT answer_id FROM answers WHERE NOT is_human", "model answer"),
    ("question_language_id", "question_id", "SELECT question_id FROM questions", "question"),
)
# Rows per language of the release's part of each table; `$question`/`$answer` are the release's last ids.
RELEASE_COUNTS_SQL = {
    "languages": "SELECT '(all)', count(*) FROM languages",
    "categories": "SELECT '(all)', count(*) FROM categories",
    "models": "SELECT '(all)', count(*) FROM models WHERE model IN (SELECT model FROM answers WHERE answer_id <= $answer)",
    "questions": "SELECT language, count(*) FROM questions WHERE question_id <= $question GROUP BY ALL",
    "answers": "SELECT q.language, count(*) FROM answers a JOIN questions q USING (question_id) "
    "WHERE a.answer_id <= $answer GROUP BY ALL",
    "ratings": "SELECT q.language, count(DISTINCT r.rating_id) FROM ratings r JOIN questions q USING (question_id) "
    "GROUP BY ALL",
    "answer_surface": "SELECT q.language, count(*) FROM answer_surface s JOIN answers a USING (answer_id) "
    "JOIN questions q USING (question_id) WHERE a.answer_id <= $answer GROUP BY ALL",
    "answer_language_all": "SELECT q.language, count(*) FROM answer_language_all s JOIN answers a USING (answer_id) "
    "JOIN questions q USING (question_id) WHERE a.answer_id <= $answer GROUP BY ALL",
    "question_language_id": "SELECT q.language, count(*) FROM question_language_id i JOIN questions q USING (question_id) "
    "WHERE q.question_id <= $question GROUP BY ALL",
}
COUNT_COLUMNS = ("table", "language", "rows")


@dataclass(frozen=True)
class ReleasePart:
    """The last question and answer ids of the release: the rows an import adds come after them."""

    last_question_id: int
    last_answer_id: int

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection) -> "ReleasePart":
        return cls(
            *con.execute(
                "SELECT (SELECT coalesce(max(question_id), 0) FROM questions), "
                "(SELECT coalesce(max(answer_id), 0) FROM answers)"
            ).fetchall()[0]
        )


def reference_failures(con: duckdb.DuckDBPyConnection) -> list[str]:
    failures = []
    for table in schema.TABLES:
        for column, target, target_column in table.references():
            n, example = con.execute(f"""
                SELECT count(*), min(t.{column}) FROM {table.name} t
                ANTI JOIN {target} r ON t.{column} = r.{target_column}
                WHERE t.{column} IS NOT NULL""").fetchall()[0]
            if n:
                failures.append(
                    f"{table.name}.{column}: {n:,} rows name no {target}.{target_column} (the first: {example!r})"
                )
    return failures


def coverage_failures(con: duckdb.DuckDBPyConnection) -> list[str]:
    failures = []
    paper = con.execute("SELECT language_identification FROM study").fetchall()[0][0] == "paper"
    for table, key, required, what in COVERAGE:
        if table == "question_language_id" and not paper:
            continue  # the paper's pipeline on the questions (CaLMQA's Table 13)
        n, example = con.execute(f"""
            SELECT count(*), min(k.{key}) FROM ({required}) k ANTI JOIN {table} t USING ({key})""").fetchall()[0]
        if n:
            failures.append(f"{table}: {n:,} {what}s have no row (the first: {key} {example})")
    return failures


def release_counts(con: duckdb.DuckDBPyConnection, part: ReleasePart) -> pl.DataFrame:
    """Rows per table and language of the release's part of the database."""
    rows = []
    for table, sql in RELEASE_COUNTS_SQL.items():
        params = {
            name: value
            for name, value in (("question", part.last_question_id), ("answer", part.last_answer_id))
            if f"${name}" in sql
        }
        rows += [
            {"table": table, "language": language, "rows": n} for language, n in con.execute(sql, params).fetchall()
        ]
    return pl.DataFrame(rows, schema={"table": pl.String, "language": pl.String, "rows": pl.Int64}).sort(
        "table", "language"
    )


def read_expected_counts(path: Path) -> pl.DataFrame:
    problems = Problems()
    rows = []
    for record, row in records.read_rows(path, COUNT_COLUMNS, (), problems):
        n = records.whole_number(row["rows"], path, record, "rows", problems, 2**63 - 1)
        if n is not None:
            rows.append({**row, "rows": n})
    problems.raise_if_any()
    return pl.DataFrame(rows, schema={"table": pl.String, "language": pl.String, "rows": pl.Int64}).sort(
        "table", "language"
    )


def count_failures(con: duckdb.DuckDBPyConnection, part: ReleasePart, expected_path: Path) -> list[str]:
    expected = read_expected_counts(expected_path)
    found = release_counts(con, part)
    compared = expected.join(found, on=["table", "language"], how="full", coalesce=True, suffix="_built")
    return [
        f"{row['table']} in {row['language']}: {row['rows_built'] or 0:,} rows, {expected_path.name} expects "
        f"{row['rows'] or 0:,}"
        for row in compared.filter(pl.col("rows").ne_missing(pl.col("rows_built"))).iter_rows(named=True)
    ]


def failures(con: duckdb.DuckDBPyConnection, part: ReleasePart, expected_counts: Path | None) -> list[str]:
    """Every failed check; the counts are checked only when `expected_counts` is given (the pinned release)."""
    found = reference_failures(con) + coverage_failures(con)
    if expected_counts is not None:
        found += count_failures(con, part, expected_counts)
    return found
