"""The CaLMQA release as a study (docs/studies.md, the adapter): its tables (the study's row and
declarations, the orders and labels of its question types, collections and resource levels, languages,
categories, models, questions, answers, criteria and ratings), loaded from a release folder into the
database being built (docs/methods.md, section 01; the build records its files: `pipeline.build`).

The files are read and validated one dataset file at a time (`io.ingest`) and stored as they come, in
the order of the keys; keys are numbered in SQL, so that the same release always gives the same ids.
"""

from pathlib import Path

import duckdb
import polars as pl

from ..core.errors import Problems
from ..io import calmqa, criterion_kinds, ingest
from ..schema import TABLE_BY_NAME
from ..store import insert

# Question ids follow language, type (specific first) and the number in the upstream name; answer ids
# follow their question, human reference answers first, then models by key. A dataset file holds one
# language and question type, and `ingest.read_datasets(in_id_order=True)` gives the files in that
# order, so each file's questions and answers are numbered, and its answers stored, on their own, after
# those of the files before: no step sorts or joins the whole release, and the answers' texts are
# written once. `file_questions` and `file_answers` are the file's frames, which DuckDB scans from the
# caller's variables: a registered view would keep every file's data alive until the transaction commits.
FILE_QUESTIONS_SQL = """
SELECT $first_id - 1 + row_number() OVER (ORDER BY name_index, name) AS question_id, *
FROM file_questions
"""
FILE_ANSWERS_SQL = """
INSERT INTO answers
SELECT $first_id - 1 + row_number() OVER (ORDER BY q.question_id, a.is_human DESC, a.model NULLS LAST, a.name) AS answer_id,
       q.question_id, a.name, a.model, a.model_version, a.is_human, a.is_dot_points, a.language,
       a.text, a.text_en, strlen(a.text), NULL
FROM file_answers a
JOIN raw_questions q ON q.question_id >= $first_question_id AND q.name = a.question_name
ORDER BY answer_id
"""
QUESTIONS_SQL = """
INSERT INTO questions
SELECT r.question_id, r.name, r.language, r.question_type, 'human', r.source, r.collector,
       CASE WHEN r.question_type = 'agnostic' THEN english.category ELSE r.category END,
       r.text, coalesce(r.text_en, CASE WHEN r.language = 'English' THEN r.text END), strlen(r.text),
       FALSE, r.upstream_human_evaluated, r.url, NULL
FROM raw_questions r
LEFT JOIN (SELECT name, category FROM raw_questions WHERE question_type = 'agnostic' AND language = 'English') english
       ON r.question_type = 'agnostic' AND english.name = r.name
ORDER BY r.question_id
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
SELECT name, list(DISTINCT dataset_file ORDER BY dataset_file) FROM answer_files
GROUP BY name HAVING count(*) > 1 ORDER BY name
"""
# Whether an answer name of the file just read is already taken: its answers are then not stored (the
# answers' UNIQUE constraint would stop the build with DuckDB's message), and `_check_identities` names
# every such answer once all files are read.
FILE_HAS_DUPLICATE_ANSWERS_SQL = """
SELECT EXISTS (SELECT name FROM answer_files WHERE name IN (SELECT name FROM file_answers)
               GROUP BY name HAVING count(*) > 1)
"""


def _check_identities(con: duckdb.DuckDBPyConnection, datasets: Path, problems: Problems) -> None:
    """Refuse a question that two dataset files hold (its answers would be stored once per copy) and an
    answer name that two files give (metrics keyed by it would attach to either)."""
    for name, language, found_in in con.execute(DUPLICATE_QUESTIONS_SQL).fetchall():
        problems.add(
            datasets / found_in[-1],
            f"question {name} ({language})",
            "question.name",
            f"is also in {', '.join(found_in[:-1])}; a question of a language is in one dataset file",
        )
    for name, found_in in con.execute(DUPLICATE_ANSWERS_SQL).fetchall():
        problems.add(
            datasets / found_in[-1],
            f"answer {name}",
            "name",
            f"is also the name of an answer in {', '.join(found_in[:-1])}; an answer name names one answer",
        )
    problems.raise_if_any()


def load_release(con: duckdb.DuckDBPyConnection, source: Path, progress: bool | None = True) -> None:
    """Create the release's tables in `con` from the folder `source`, one dataset file at a time.

    Every problem of every file is collected first; `InputError` lists them all.
    """
    problems = Problems()
    languages, categories = ingest.read_metadata(source, problems)
    # One transaction: committed file by file, the answers would go through the write-ahead log and
    # the checkpoints it triggers, written two or three times instead of once.
    con.execute("BEGIN TRANSACTION")
    insert(con, TABLE_BY_NAME["study"], study_row())
    insert(con, TABLE_BY_NAME["dimension_values"], dimension_values())
    insert(
        con,
        TABLE_BY_NAME["languages"],
        languages.with_columns(identified=~pl.col("language").is_in(sorted(calmqa.UNRELIABLE_LANGUAGES))),
    )
    insert(con, TABLE_BY_NAME["categories"], categories)
    con.execute(TABLE_BY_NAME["answers"].ddl())
    con.execute("CREATE TEMP TABLE answer_files (name VARCHAR, dataset_file VARCHAR)")
    n_questions = n_answers = 0
    first = True
    duplicate_answers = False
    for questions, answers in ingest.read_datasets(source, languages, problems, progress, in_id_order=True):
        if problems.items:
            continue  # nothing more is stored, but every file is still read for its problems
        file_questions, file_answers = questions.to_arrow(), answers.to_arrow()  # noqa: F841 (scanned by the SQL)
        con.execute(
            ("CREATE TEMP TABLE raw_questions AS " if first else "INSERT INTO raw_questions ") + FILE_QUESTIONS_SQL,
            {"first_id": n_questions + 1},
        )
        con.execute("INSERT INTO answer_files SELECT name, dataset_file FROM file_answers")
        # (a question twice in one file would also give each of its answers twice)
        duplicate_answers = (
            duplicate_answers
            or questions["name"].is_duplicated().any()
            or con.execute(FILE_HAS_DUPLICATE_ANSWERS_SQL).fetchall()[0][0]
        )
        if not duplicate_answers:
            n_answers += con.execute(
                FILE_ANSWERS_SQL, {"first_id": n_answers + 1, "first_question_id": n_questions + 1}
            ).fetchall()[0][0]
        n_questions += questions.height
        first = False
        del questions, answers, file_questions, file_answers  # not kept while the next file is read
    problems.raise_if_any()
    _check_identities(con, source / "datasets", problems)
    con.execute("DROP TABLE answer_files")
    con.execute(TABLE_BY_NAME["questions"].ddl())
    con.execute(QUESTIONS_SQL)
    for name, language, category in con.execute(
        "SELECT name, language, category FROM questions WHERE category NOT IN (SELECT category FROM categories) "
        "ORDER BY question_id"
    ).fetchall():
        problems.add(
            source / "datasets",
            f"question {name} ({language})",
            "question.category",
            f"unknown category {category!r}: not in categories-metadata.csv",
        )
    problems.raise_if_any()
    con.execute("DROP TABLE raw_questions")
    versions = con.sql(MODEL_VERSIONS_SQL).pl()
    insert(
        con,
        TABLE_BY_NAME["models"],
        ingest.model_table()
        .join(versions, on="model", how="inner", maintain_order="left")
        .with_columns(import_position=pl.lit(None, pl.Int32)),
    )
    ratings = ingest.read_ratings(
        source / "all_ratings.csv",
        con.sql("SELECT question_id, language, question_type, text FROM questions").pl(),
        con.sql("SELECT answer_id, question_id, model, is_human FROM answers WHERE NOT is_human").pl(),
        languages,
        problems,
    )
    problems.raise_if_any()
    criteria, levels = criterion_tables()
    insert(con, TABLE_BY_NAME["criteria"], criteria)
    insert(con, TABLE_BY_NAME["criterion_levels"], levels)
    insert(con, TABLE_BY_NAME["ratings"], long_ratings(ratings))
    con.execute("UPDATE questions SET human_evaluated = question_id IN (SELECT question_id FROM ratings)")
    con.execute("COMMIT")


def study_row() -> pl.DataFrame:
    """What the CaLMQA study declares: the paper's claims and items, the NativQA tables, the paper's
    language identification, and Gemini's finish-reason codes as provider errors."""
    return pl.DataFrame(
        [{**calmqa.STUDY, "provider_error_codes": list(calmqa.PROVIDER_ERROR_CODES)}],
        schema_overrides={"provider_error_codes": pl.List(pl.String)},
    )


def dimension_values() -> pl.DataFrame:
    """The order and labels of CaLMQA's question types (culturally specific first), collections and
    resource levels."""
    labels = {
        "question_type": calmqa.QUESTION_TYPE_LABELS,
        "collection": calmqa.COLLECTION_LABELS,
        "resource_level": {level: level for level in calmqa.RESOURCE_LEVELS},
    }
    return pl.DataFrame(
        [
            {"dimension": dimension, "value": value, "label": label, "position": position}
            for dimension, values in labels.items()
            for position, (value, label) in enumerate(values.items(), start=1)
        ],
        schema_overrides={"position": pl.Int32},
    )


def criterion_tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The annotators' four criteria (`criteria`) and their levels worst first (`criterion_levels`)."""
    criteria = pl.DataFrame(
        [
            {"criterion": name, "position": position, "kind": _kind(levels)}
            for position, (name, levels) in enumerate(calmqa.CRITERIA.items(), start=1)
        ],
        schema_overrides={"position": pl.Int32},
    )
    levels = pl.DataFrame(
        [
            {"criterion": name, "level": str(level), "position": position}
            for name, levels in calmqa.CRITERIA.items()
            for position, level in enumerate(levels, start=1)
        ],
        schema_overrides={"position": pl.Int32},
    )
    return criteria, levels


def _kind(levels: tuple) -> str:
    kind = criterion_kinds.kind_of(list(levels))
    assert kind is not None, levels  # (CaLMQA's levels: whole numbers or words)
    return kind.name


def long_ratings(ratings: pl.DataFrame) -> pl.DataFrame:
    """all_ratings.csv's rows (`ingest.read_ratings`), one row per criterion: the rows of `ratings`."""
    return (
        ratings.with_columns(pl.col(list(calmqa.CRITERIA)).cast(pl.String))
        .unpivot(
            index=["rating_id", "question_id", "answer_id", "model", "annotator"],
            on=list(calmqa.CRITERIA),
            variable_name="criterion",
            value_name="level",
        )
        .sort("rating_id", pl.col("criterion").replace_strict({c: i for i, c in enumerate(calmqa.CRITERIA)}))
    )
