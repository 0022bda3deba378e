"""Imports into a study's database (issue 38): they take the study's formats only and speak its words.

A study's answers are imported from a table (question, language, model, answer), as docs/studies.md
says; CaLMQA's other imports (VeriScore's metrics, an export of its dataset's questions, a file in its
release's JSON format) are refused there, and a refused import names the study's questions and models,
never CaLMQA's (`german:0`, "the release", "the paper"). Each case runs the command as a user does
(`python -m analysis import-...`, here `cli.main` in-process) and asserts the exit status, the message,
no traceback, and the database byte-identical with nothing left beside it.
"""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from analysis import cli

# CaLMQA's words, which no message of a study's import may hold.
CALMQA_WORDS = ("german", "non_cultural", "the release", "the paper", "upstream", "CaLMQA", "VeriScore")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table(*rows: str) -> str:
    return "question,language,model,answer\n" + "".join(row + "\n" for row in rows)


CASES = {
    "VeriScore's metrics": (
        "metrics",
        "metrics.jsonl",
        json.dumps({"question": "ha-001", "language": "Hausa", "model": "alpha-7b", "n_claims": 3, "n_supported": 2})
        + "\n",
        "the database holds the study 'example', whose metrics are its folder's metrics table",
    ),
    "an export of questions": (
        "questions",
        "questions.csv",
        "language,question_type,question\nHausa,specific,Me ya sa?\n",
        "the database holds the study 'example', whose questions are its folder's questions table",
    ),
    "answers in the release's JSON format": (
        "answers",
        "dataset-specific-hausa.json",
        json.dumps({"entries": []}),
        "the database holds the study 'example', whose answers are imported from a .csv or .jsonl file with the "
        "columns question (a question's question_id), language, model and answer",
    ),
    "answers in a JSON file": (
        "answers",
        "answers.json",
        json.dumps([{"question": "ha-001", "language": "Hausa", "model": "delta-1b", "answer": "A."}]),
        "whose answers are imported from a .csv or .jsonl file",
    ),
    "an answer to a question the study does not have": (
        "answers",
        "answers.csv",
        table("german:0,Hausa,delta-1b,Amsa."),
        "line 2, field 'question': no question 'german:0' in Hausa; expected the question_id of a question of "
        "the study 'example', such as 'ha-001' in Hausa",
    ),
    "an answer of one of the study's models to one of its questions": (
        "answers",
        "answers.csv",
        table("ha-001,Hausa,alpha-7b,Wata amsa."),
        "line 2, field 'model': is alpha-7b, a model of the study: its answers to the study's questions are its "
        "folder's, which an import never changes",
    ),
    "a display name that looks like a model's of the study": (
        "answers",
        "answers.csv",
        "question,language,model,answer,display_name\nha-001,Hausa,delta-1b,Amsa.,\u0391lpha 7\u0392\n",
        "field 'display_name': is 'Αlpha 7Β', which mixes Greek and Latin letters",
    ),
    "an all-Cyrillic display name that looks like a model's of the study": (
        "answers",
        "answers.csv",
        "question,language,model,answer,display_name\nha-001,Hausa,delta-1b,Amsa.,\u0412\u0415\u0422\u0410 70\u0412\n",
        "the display name 'ВЕТА 70В' of the new model delta-1b is already beta-70b's ('Beta 70B')",
    ),
}


@pytest.mark.slow  # the example study's database is built once for the run (conftest)
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_an_import_into_a_study_speaks_the_study_s_words(case, example_study_database, tmp_path, capsys):
    kind, name, content, expected = CASES[case]
    db = tmp_path / "db" / "example.duckdb"
    db.parent.mkdir()
    shutil.copyfile(example_study_database, db)
    before = digest(db)
    path = tmp_path / "in" / name
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    capsys.readouterr()
    status = cli.main([f"import-{kind}", str(path), "--db", str(db)])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert status == 2 and captured.err.startswith("error: ") and "Traceback" not in text, text
    assert expected in text, text
    said = text.replace(str(path), "FILE")
    assert not [word for word in CALMQA_WORDS if word in said and word not in content], said
    assert digest(db) == before and sorted(p.name for p in db.parent.iterdir()) == [db.name, db.name + ".lock"]
