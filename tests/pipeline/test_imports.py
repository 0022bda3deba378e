"""Imports of metrics, questions and answers: valid and malformed files, idempotence, atomicity."""

import hashlib
import json
import shutil

import pytest

from analysis import store
from analysis.core import paths
from analysis.core.errors import InputError
from analysis.pipeline import imports

EXAMPLES = paths.DATA / "examples"


@pytest.fixture
def copy(database, tmp_path):
    path = tmp_path / "calmqa.duckdb"
    shutil.copy(database, path)
    return path


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rows(path, sql):
    with store.connect(path) as con:
        return con.execute(sql).fetchall()


def test_metrics_by_answer_name_and_by_key(copy):
    first = imports.import_file("metrics", EXAMPLES / "metrics.csv", copy)
    assert (first.added, first.changed, first.unchanged) == (3, 0, 0)
    imports.import_file("metrics", EXAMPLES / "metrics.jsonl", copy)
    rows = dict(
        _rows(
            copy,
            "SELECT a.name, (m.n_claims, m.n_supported, m.relevant) FROM answer_metrics m "
            "JOIN answers a USING (answer_id)",
        )
    )
    assert rows["german:0:language.german:gpt 4o"] == (12, 9, True)
    assert rows["german:1:language.german:gpt 4o"] == (8, 5, True)
    assert rows["german:1:language.german:claude opus"] == (None, None, False)


def test_metrics_import_is_idempotent(copy):
    imports.import_file("metrics", EXAMPLES / "metrics.csv", copy)
    with store.connect(copy) as con:
        before = con.execute("SELECT * FROM answer_metrics ORDER BY ALL").fetchall()
    again = imports.import_file("metrics", EXAMPLES / "metrics.csv", copy)
    assert (again.added, again.changed, again.unchanged) == (0, 0, 3)
    with store.connect(copy) as con:
        assert con.execute("SELECT * FROM answer_metrics ORDER BY ALL").fetchall() == before


def test_a_second_file_updates_only_the_metrics_it_gives(copy, tmp_path):
    imports.import_file("metrics", EXAMPLES / "metrics.csv", copy)
    relevance = tmp_path / "judge.csv"
    relevance.write_text("answer,relevant\ngerman:0:language.german:gpt 4o,no\n", encoding="utf-8")
    summary = imports.import_file("metrics", relevance, copy)
    assert summary.changed == 1
    assert _rows(
        copy,
        "SELECT n_claims, n_supported, relevant FROM answer_metrics m JOIN answers a "
        "USING (answer_id) WHERE a.name = 'german:0:language.german:gpt 4o'",
    ) == [(12, 9, False)]


def test_veriscore_output(copy):
    imports.import_file(
        "metrics", EXAMPLES / "veriscore-claims.jsonl", copy, verification=EXAMPLES / "veriscore-verification.jsonl"
    )
    rows = dict(
        _rows(copy, "SELECT a.name, (m.n_claims, m.n_supported) FROM answer_metrics m JOIN answers a USING (answer_id)")
    )
    assert rows == {"german:0:language.german:gemma 7b": (3, 2), "non_cultural:0:language.german:gemma 7b": (0, 0)}


@pytest.mark.parametrize(
    "content, fragments",
    [
        (
            "answer,n_claims,n_supported\nno such answer,3,1\n",
            ["line 2", "'answer'", "no model answer named 'no such answer'"],
        ),
        (
            "answer,n_claims,n_supported\ngerman:0:language.german:gpt 4o,3,5\n",
            ["line 2", "'n_supported'", "more than n_claims"],
        ),
        (
            "answer,n_claims,n_supported\ngerman:0:language.german:gpt 4o,three,1\n",
            ["line 2", "'n_claims'", "whole number"],
        ),
        ("answer,relevant\ngerman:0:language.german:gpt 4o,maybe\n", ["line 2", "'relevant'", "true/false"]),
        ("answer,n_claims\ngerman:0:language.german:gpt 4o,3\n", ["expected a key", "n_supported"]),
        (
            "answer,n_claims,n_supported,colour\ngerman:0:language.german:gpt 4o,3,1,red\n",
            ["line 1 (header)", "unexpected column(s) 'colour'"],
        ),
        (
            "answer,relevant\ngerman:0:language.german:gpt 4o,1\ngerman:0:language.german:gpt 4o,0\n",
            ["line 3", "the same answer as line 2"],
        ),
    ],
)
def test_malformed_metrics_are_refused(copy, tmp_path, content, fragments):
    path = tmp_path / "metrics.csv"
    path.write_text(content, encoding="utf-8")
    before = _digest(copy)
    with pytest.raises(InputError) as info:
        imports.import_file("metrics", path, copy)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert _digest(copy) == before


def test_malformed_jsonl_names_the_line(copy, tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"answer": "german:0:language.german:gpt 4o", "relevant": true}\n{"answer": \n', encoding="utf-8")
    before = _digest(copy)
    with pytest.raises(InputError, match=r"metrics.jsonl, line 2 column \d+: invalid JSON"):
        imports.import_file("metrics", path, copy)
    assert _digest(copy) == before


def test_questions_import(copy):
    summary = imports.import_file("questions", EXAMPLES / "questions.csv", copy)
    assert summary.added == 3
    rows = _rows(
        copy, "SELECT name, language, question_type, collection FROM questions WHERE collection = 'auto' ORDER BY name"
    )
    assert rows == [
        ("auto:german:0", "German", "specific", "auto"),
        ("auto:german:1", "German", "specific", "auto"),
        ("auto:japanese:0", "Japanese", "specific", "auto"),
    ]
    assert _rows(copy, "SELECT count(*) FROM answers WHERE name LIKE 'auto:%:human'") == [(1,)]
    again = imports.import_file("questions", EXAMPLES / "questions.csv", copy)
    assert (again.added, again.unchanged) == (0, 3)


def test_a_question_already_in_the_release_is_not_added_again(copy, tmp_path):
    text = _rows(copy, "SELECT text FROM questions WHERE name = 'german:0'")[0][0]
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"language": "German", "question_type": "specific", "question": "  " + text, "collection": "human"})
        + "\n",
        encoding="utf-8",
    )
    assert imports.import_file("questions", path, copy).added == 0


def test_malformed_questions_are_refused(copy, tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(
        "language,question_type,question\nKlingon,specific,Why?\nGerman,maybe,Warum?\nGerman,specific,\n",
        encoding="utf-8",
    )
    before = _digest(copy)
    with pytest.raises(InputError) as info:
        imports.import_file("questions", path, copy)
    message = str(info.value)
    assert message.startswith("3 problems")
    assert "line 2, field 'language'" in message and "line 3, field 'question_type'" in message
    assert "line 4, field 'question'" in message
    assert _digest(copy) == before


def test_answers_of_a_new_model(copy):
    surface_before = _rows(copy, "SELECT count(*) FROM answer_surface")[0][0]
    summary = imports.import_file("answers", EXAMPLES / "answers.csv", copy)
    assert (summary.added, summary.changed, summary.unchanged) == (4, 0, 0)
    assert _rows(copy, "SELECT display_name FROM models WHERE model = 'my-model-7b'") == [("my-model-7b",)]
    verdicts = _rows(
        copy,
        "SELECT a.name, s.empty FROM answer_surface s JOIN answers a USING (answer_id) "
        "WHERE a.model = 'my-model-7b' ORDER BY a.name",
    )
    assert len(verdicts) == 4 and ("afar:0:language.afar:my-model-7b", True) in verdicts
    # verdicts were computed for the new answers only
    assert _rows(copy, "SELECT count(*) FROM answer_surface")[0][0] == surface_before + 4
    again = imports.import_file("answers", EXAMPLES / "answers.csv", copy)
    assert (again.added, again.changed, again.unchanged) == (0, 0, 4)


def test_a_changed_answer_is_replaced_and_its_verdict_recomputed(copy, tmp_path):
    imports.import_file("answers", EXAMPLES / "answers.csv", copy)
    path = tmp_path / "fixed.jsonl"
    path.write_text(
        json.dumps({"question": "afar:0", "language": "Afar", "model": "my-model-7b", "answer": "Maqaane " * 5}) + "\n",
        encoding="utf-8",
    )
    summary = imports.import_file("answers", path, copy)
    assert (summary.added, summary.changed) == (0, 1)
    assert _rows(
        copy,
        "SELECT s.empty FROM answer_surface s JOIN answers a USING (answer_id) "
        "WHERE a.name = 'afar:0:language.afar:my-model-7b'",
    ) == [(False,)]


def test_answers_in_the_release_format(copy, tmp_path):
    entry = {
        "question": {
            "name": "german:1",
            "type": 5,
            "language": "German",
            "source": "x",
            "collector": "x",
            "human_evaluated": False,
            "category": "history",
            "translations": {"German": {"language": "German", "text": "?"}},
        },
        "answers": [
            {
                "name": "german:1:language.german:new llm 2 (local)",
                "language": "German",
                "translations": {"German": {"language": "German", "text": "Eine Antwort."}},
                "prompting_state": {"model_name": "New LLM 2 (local)", "model_path": "org/new-llm-2"},
            }
        ],
    }
    path = tmp_path / "dataset-specific-german.json"
    path.write_text(json.dumps({"entries": [entry]}), encoding="utf-8")
    assert imports.import_file("answers", path, copy).added == 1
    assert _rows(copy, "SELECT model, version FROM models WHERE model = 'new-llm-2-local'") == [
        ("new-llm-2-local", "org/new-llm-2")
    ]


def test_malformed_answers_are_refused_together(copy, tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text(
        "question,language,model,answer\n"
        "german:9999,German,my-model,x\n"
        "german:0,Klingon,my-model,x\n"
        "german:0,German,My Model!,x\n"
        "german:0,German,my-model,x\n"
        "german:0,German,my-model,y\n",
        encoding="utf-8",
    )
    before = _digest(copy)
    with pytest.raises(InputError) as info:
        imports.import_file("answers", path, copy)
    message = str(info.value)
    assert message.startswith("4 problems")
    assert "line 2, field 'question': no question 'german:9999' in German" in message
    assert "line 3, field 'language': unknown language 'Klingon'" in message
    assert "line 4, field 'model'" in message
    assert (
        "line 6, field 'question': a second answer of my-model to german:0 in German (the first is on line 5)"
        in message
    )
    assert _digest(copy) == before
