"""The build's checks on a finished database (`pipeline.checks`): what each failure names."""

import re

import pytest
from study_tables import study_database

from analysis.pipeline import checks


@pytest.fixture()
def con(tmp_path):
    (tmp_path / "study.toml").write_text('name = "checked"\ntitle = "Checked"\n', encoding="utf-8")
    questions = "".join(f"q{i},Hausa,Tambaya {i}\n" for i in range(4))
    (tmp_path / "questions.csv").write_text("question_id,language,question\n" + questions, encoding="utf-8")
    answers = "".join(f"q{i},{m},Amsa {i}\n" for i in range(4) for m in ("m1", "m2"))
    (tmp_path / "answers.csv").write_text("question_id,model,answer\n" + answers, encoding="utf-8")
    return study_database(tmp_path)


def test_the_release_part_ends_at_the_last_question_and_answer(con):
    part = checks.ReleasePart.of(con)
    question_ids = [r[0] for r in con.execute("SELECT question_id FROM questions").fetchall()]
    answer_ids = [r[0] for r in con.execute("SELECT answer_id FROM answers").fetchall()]
    assert len(answer_ids) == 8 and len(question_ids) == 4
    assert (part.last_question_id, part.last_answer_id) == (max(question_ids), max(answer_ids))


def test_a_broken_reference_names_how_many_rows_and_the_smallest_of_them(con):
    known = {r[0] for r in con.execute("SELECT answer_id FROM answers").fetchall()}
    unknown = [max(known) + 7, max(known) + 3, max(known) + 5]  # inserted out of order
    for answer_id in unknown:
        con.execute("INSERT INTO answer_metrics VALUES (?, 1, 1, TRUE, 'x')", [answer_id])
    found = [f for f in checks.reference_failures(con) if f.startswith("answer_metrics.answer_id")]
    assert found == [f"answer_metrics.answer_id: 3 rows name no answers.answer_id (the first: {min(unknown)})"]


def test_missing_verdicts_name_how_many_answers_and_the_smallest_of_them(con):
    # The verdict tables of `study_database` are empty: every model answer lacks its row.
    model_answers = [r[0] for r in con.execute("SELECT answer_id FROM answers WHERE NOT is_human").fetchall()]
    found = checks.coverage_failures(con)
    expected = (
        f"answer_surface: {len(model_answers)} model answers have no row (the first: answer_id {min(model_answers)})"
    )
    assert expected in found
    assert not any(re.match("question_language_id", f) for f in found)  # a study's verdicts are not the paper's
