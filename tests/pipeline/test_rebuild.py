"""The database is a function of its inputs: an import is kept beside the database and every build
replays the kept imports after the release, with every stage run over them; the build's checks."""

import hashlib
import json
import shutil

import duckdb
import polars as pl
import pytest
from tiny_release import write_release

from analysis import cli, schema, store
from analysis.core import paths
from analysis.core.errors import CheckFailed, InputError, Problems
from analysis.io import imports as import_files
from analysis.pipeline import checks, imports
from analysis.pipeline.build import build
from analysis.reporting import run


def _tables(db_path) -> dict[str, list]:
    with store.connect(db_path) as con:
        return {t.name: con.execute(f"SELECT * FROM {t.name} ORDER BY ALL").fetchall() for t in schema.TABLES}


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def tiny(tmp_path, small_language_identification):
    """A database built from the tiny release, and that release."""
    source = write_release(tmp_path / "release")
    db_path = tmp_path / "db" / "calmqa.duckdb"
    build(source, db_path, verify=False, progress=False)
    return source, db_path


def _import_a_model_and_a_question(tmp_path, db_path):
    answers = tmp_path / "answers.csv"
    answers.write_text(
        "question,language,model,answer,display_name\n"
        "german:0,German,kept-model,Eine Antwort auf Deutsch über die Uhrzeit.,Kept Model\n"
        "german:1,German,kept-model,Föhn ist ein warmer Fallwind in den Alpen.,Kept Model\n",
        encoding="utf-8",
    )
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps(
            {
                "language": "German",
                "question_type": "specific",
                "collection": "auto",
                "question": "Warum ist der Sonntag in Deutschland ein Ruhetag?",
                "answer": "Weil das Grundgesetz ihn schützt.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return imports.import_file("answers", answers, db_path), imports.import_file("questions", questions, db_path)


@pytest.mark.slow
def test_a_rebuild_replays_the_kept_imports_into_the_same_tables(tmp_path, tiny):
    source, db_path = tiny
    answers, questions = _import_a_model_and_a_question(tmp_path, db_path)
    kept = paths.imports_folder(db_path)
    assert answers.kept == kept / "0001" and questions.kept == kept / "0002"
    assert (kept / "0001" / "answers.csv").read_bytes() == (tmp_path / "answers.csv").read_bytes()
    imported = _tables(db_path)
    # every stage ran for what was imported, the language identification of the new question included
    with store.connect(db_path) as con:
        new_question = con.execute("SELECT question_id FROM questions WHERE collection = 'auto'").fetchall()
        assert con.execute(
            "SELECT count(*) FROM question_language_id WHERE question_id = ?", new_question[0]
        ).fetchall() == [(1,)]
        for table in ("answer_surface", "answer_language_all"):
            assert con.execute(
                f"SELECT count(*) FROM {table} JOIN answers USING (answer_id) WHERE model = 'kept-model'"
            ).fetchall() == [(2,)]
    db_path.unlink()
    counts = build(source, db_path, verify=False, progress=False)
    assert counts["imports"] == 2 and counts["applied_imports"] == 2
    assert _tables(db_path) == imported


@pytest.mark.slow
def test_an_import_that_changes_nothing_is_not_kept(tmp_path, tiny):
    _, db_path = tiny
    first, _ = _import_a_model_and_a_question(tmp_path, db_path)
    again = imports.import_file("answers", tmp_path / "answers.csv", db_path)
    assert (again.added, again.changed, again.unchanged, again.kept) == (0, 0, 2, None)
    assert "not kept" in str(again) and "kept as" in str(first)
    assert [k.position for k in import_files.read_manifest(paths.imports_folder(db_path), Problems())] == [1, 2]


def test_a_failed_import_keeps_nothing(tmp_path, tiny):
    _, db_path = tiny
    before = _digest(db_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("question,language,model,answer\ngerman:99,German,kept-model,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="no question 'german:99'"):
        imports.import_file("answers", bad, db_path)
    assert _digest(db_path) == before and not paths.imports_folder(db_path).exists()


@pytest.mark.slow
def test_a_changed_kept_file_stops_the_build_and_keeps_the_database(tmp_path, tiny):
    source, db_path = tiny
    _import_a_model_and_a_question(tmp_path, db_path)
    before = _digest(db_path)
    kept = paths.imports_folder(db_path) / "0001" / "answers.csv"
    kept.write_text(kept.read_text(encoding="utf-8").replace("Antwort", "Frage"), encoding="utf-8")
    with pytest.raises(InputError, match=r"calmqa.duckdb, import 1, field 'sha256': the kept file .* has changed"):
        build(source, db_path, verify=False, progress=False)
    assert _digest(db_path) == before


@pytest.mark.slow
def test_a_database_copied_without_its_imports_cannot_be_imported_into(tmp_path, tiny):
    _, db_path = tiny
    _import_a_model_and_a_question(tmp_path, db_path)
    bare = tmp_path / "bare" / "calmqa.duckdb"
    bare.parent.mkdir()
    shutil.copy(db_path, bare)
    metrics = tmp_path / "metrics.csv"
    metrics.write_text("question,language,model,relevant\ngerman:0,German,kept-model,yes\n", encoding="utf-8")
    with pytest.raises(InputError, match="does not keep the imports 1, 2 that it lists"):
        imports.import_file("metrics", metrics, bare)
    copied = imports.copy_database(db_path, tmp_path / "copied" / "calmqa.duckdb")
    assert imports.import_file("metrics", metrics, copied).kept == paths.imports_folder(copied) / "0003"


def test_the_checks_find_broken_references_missing_verdicts_and_other_counts(tmp_path, tiny):
    _, db_path = tiny
    copy = tmp_path / "broken.duckdb"
    shutil.copy(db_path, copy)
    with duckdb.connect(str(copy)) as con:
        part = checks.ReleasePart.of(con)
        assert checks.failures(con, part, None) == []
        con.execute("INSERT INTO answer_metrics VALUES (999999, 1, 1, TRUE, 'x')")
        con.execute("DELETE FROM answer_surface WHERE answer_id = (SELECT min(answer_id) FROM answer_surface)")
        found = checks.failures(con, part, None)
        assert any(
            f.startswith("answer_metrics.answer_id: 1 rows name no answers.answer_id (the first: 999999)")
            for f in found
        )
        assert any(f.startswith("answer_surface: 1 model answers have no row") for f in found)
        expected = tmp_path / "expected.csv"
        checks.release_counts(con, part).with_columns(
            rows=pl.when(pl.col("table") == "questions").then(pl.col("rows") + 1).otherwise("rows")
        ).write_csv(expected)
        assert "questions in German: 3 rows, expected.csv expects 4" in checks.failures(con, part, expected)


@pytest.mark.slow
def test_a_failed_check_leaves_the_previous_database(tmp_path, tiny, monkeypatch, capsys):
    source, db_path = tiny
    before = _digest(db_path)
    monkeypatch.setattr(checks, "failures", lambda *args: ["answers.question_id: 1 rows name no questions.question_id"])
    with pytest.raises(CheckFailed, match="was not written: 1 check of the new database failed"):
        build(source, db_path, verify=False, progress=False)
    assert _digest(db_path) == before and not list(db_path.parent.glob(".*.tmp-*"))
    assert cli.main(["build-db", "--source", str(source), "--db", str(db_path), "--no-verify"]) == 2
    assert "error: " in capsys.readouterr().err and _digest(db_path) == before


@pytest.mark.parametrize("name", ["03_surface_quality"])
def test_an_imported_model_is_in_every_figure_after_a_rebuild_from_scratch(database, release_folder, tmp_path, name):
    """A model's answers to every question (GPT-4o's, renamed), imported, then the database rebuilt from
    the release alone: the model is in the tables the figures read and in every figure that shows all models."""
    db_path = tmp_path / "calmqa.duckdb"
    imports.copy_database(database, db_path)
    with store.connect(db_path) as con:
        con.sql(
            "SELECT q.name AS question, q.language, 'rebuilt-model' AS model, a.text AS answer, "
            "'Rebuilt Model' AS display_name FROM answers a JOIN questions q USING (question_id) "
            "WHERE a.model = 'gpt-4o'"
        ).pl().write_csv(tmp_path / "answers.csv")
    assert imports.import_file("answers", tmp_path / "answers.csv", db_path).added > 2_000
    db_path.unlink()
    build(release_folder, db_path)  # the pinned release: the checks compare its rows with the expected counts
    with store.connect(db_path) as con:
        n_answers = con.execute("SELECT count(*) FROM answers WHERE model = 'rebuilt-model'").fetchall()[0][0]
        for table in ("answer_surface", "answer_language_all"):
            assert (
                con.execute(
                    f"SELECT count(*) FROM {table} JOIN answers USING (answer_id) WHERE model = 'rebuilt-model'"
                ).fetchall()[0][0]
                == n_answers
                > 2_000
            )
        assert con.execute("SELECT display_name FROM models WHERE model = 'rebuilt-model'").fetchall() == [
            ("Rebuilt Model",)
        ]
    run.run_notebook(
        name,
        db_path=db_path,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
    )
    release_models = {
        "GPT-4 Turbo",
        "GPT-4o",
        "Claude 3 Opus",
        "Gemini 1.5 Pro",
        "Llama 3 70B",
        "Mixtral 8x22B",
        "Aya 13B",
        "Gemma 7B",
    }
    showing_all = 0
    for csv in sorted((tmp_path / "figures" / name).glob("*.csv")):
        table = pl.read_csv(csv, infer_schema=False)
        if "model" in table.columns and release_models <= set(table["model"]):
            showing_all += 1
            assert "Rebuilt Model" in set(table["model"]), f"{csv.name} shows every model but the imported one"
    assert showing_all >= 5
