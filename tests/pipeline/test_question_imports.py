"""An imported question is the same as one already held only when all of its key matches: its language,
its question type and its text (once normalised, `ingest.question_identity`). One part of the key alike is
not enough, in the database (`pipeline.imports.apply_questions`) or within one file
(`io.imports.read_question_file`)."""

import polars as pl
import pytest
from study_tables import study_database

from analysis.core import paths
from analysis.core.errors import Problems
from analysis.io import imports as io_imports
from analysis.io import ingest
from analysis.pipeline import imports

pytestmark = pytest.mark.fast

EXAMPLE = paths.DATA / "examples" / "study"
COLUMNS = ("language", "question_type", "collection", "text", "text_en", "category", "answer", "source", "url")


def _incoming(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(
        [{**{c: None for c in COLUMNS}, "collection": "auto", **row} for row in rows],
        schema={c: pl.String for c in COLUMNS},
    ).with_columns(normalised=pl.col("text").map_elements(ingest.question_identity, return_dtype=pl.String))


def test_an_imported_question_is_held_only_when_language_type_and_text_all_match(tmp_path):
    con = study_database(EXAMPLE)
    language, qtype, text = con.execute(
        "SELECT language, question_type, text FROM questions ORDER BY question_id"
    ).fetchall()[0]
    other_language = con.execute(f"SELECT language FROM languages WHERE language <> '{language}' LIMIT 1").fetchall()[
        0
    ][0]
    other_type = con.execute(
        f"SELECT DISTINCT question_type FROM questions WHERE question_type <> '{qtype}'"
    ).fetchall()[0][0]
    before = con.execute("SELECT count(*) FROM questions").fetchall()[0][0]
    incoming = _incoming(
        [
            {"language": language, "question_type": qtype, "text": f"  {text} "},  # the same question (spaces aside)
            {"language": language, "question_type": other_type, "text": text},  # another type
            {"language": other_language, "question_type": qtype, "text": text},  # another language
            {"language": language, "question_type": qtype, "text": text + " (2)"},  # another text
        ]
    )
    applied = imports.apply_questions(con, incoming, tmp_path / "q.csv", 1)
    assert (applied.summary.added, applied.summary.unchanged) == (3, 1)
    added = con.sql(
        f"SELECT language, question_type, text FROM questions WHERE question_id IN "
        f"({', '.join(map(str, applied.question_ids))}) ORDER BY 1, 2, 3"
    ).fetchall()
    assert added == sorted(
        [(language, other_type, text), (other_language, qtype, text), (language, qtype, text + " (2)")]
    )
    assert con.execute("SELECT count(*) FROM questions").fetchall()[0][0] == before + 3


def _read(tmp_path, lines: list[str]):
    path = tmp_path / "questions.csv"
    path.write_text("language,question_type,question\n" + "\n".join(lines) + "\n", encoding="utf-8")
    problems = Problems()
    frame = io_imports.read_question_file(path, {"German", "French"}, set(), problems)
    return frame, [str(p) for p in problems.items]


def test_a_file_may_ask_one_text_in_two_languages_and_two_types_but_not_twice(tmp_path):
    frame, problems = _read(
        tmp_path,
        ["German,specific,Wie alt?", "German,agnostic,Wie alt?", "French,specific,Wie alt?"],
    )
    assert not problems and frame.height == 3
    frame, problems = _read(tmp_path, ["German,specific,Wie alt?", "German,specific,Wie  alt?"])
    assert frame.height == 1
    assert any("line 3" in p and "the same question as" in p for p in problems), problems
