"""The release's tables (languages, categories, models, questions, answers, ratings, source files),
loaded from a release folder into the database being built (docs/methods.md, section 01).

The files are read and validated one dataset file at a time (`io.ingest`); keys are numbered in SQL,
so that the same release always gives the same ids.
"""

from pathlib import Path

import duckdb

from ..core.errors import Problems
from ..io import ingest
from ..io.release import source_checksums
from ..schema import TABLE_BY_NAME
from ..store import insert

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


# A question is in one dataset file, and an answer name names one answer (schema.QUESTIONS, schema.ANSWERS).
DUPLICATE_QUESTIONS_SQL = """
SELECT name, language, list(DISTINCT dataset_file ORDER BY dataset_file) FROM raw_questions
GROUP BY name, language HAVING count(*) > 1 ORDER BY language, name
"""
DUPLICATE_ANSWERS_SQL = """
SELECT name, list(DISTINCT dataset_file ORDER BY dataset_file) FROM raw_answers
GROUP BY name HAVING count(*) > 1 ORDER BY name
"""


def _check_identities(con: duckdb.DuckDBPyConnection, datasets: Path, problems: Problems) -> None:
    """Refuse a question that two dataset files hold (its answers would be stored once per copy) and an
    answer name that two files give (metrics keyed by it would attach to either)."""
    for name, language, found_in in con.execute(DUPLICATE_QUESTIONS_SQL).fetchall():
        problems.add(datasets / found_in[-1], f"question {name} ({language})", "question.name",
                     f"is also in {', '.join(found_in[:-1])}; a question of a language is in one dataset file")
    for name, found_in in con.execute(DUPLICATE_ANSWERS_SQL).fetchall():
        problems.add(datasets / found_in[-1], f"answer {name}", "name",
                     f"is also the name of an answer in {', '.join(found_in[:-1])}; an answer name names one answer")
    problems.raise_if_any()


def load_release(con: duckdb.DuckDBPyConnection, source: Path, progress: bool | None = True) -> None:
    """Create the release's tables in `con` from the folder `source`, one dataset file at a time, and
    the table of its files' checksums.

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
    _check_identities(con, source / "datasets", problems)
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
    insert(con, TABLE_BY_NAME["source_files"], source_checksums(source))
