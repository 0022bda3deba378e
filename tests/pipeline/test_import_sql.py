"""The SQL of the imports and of what reads a database's provenance, at the cases each condition decides.

Answers (`imports.apply_answers`, and what `imports.read` holds them against): which model may answer which
question, what counts as added, changed or already there, and the model an import adds. Metrics (`imports.apply_metrics`): what counts as added, changed or already there, and which file a
metric row names as its source after a file that gives only some of its values. Questions
(`imports.apply_questions`): how imported questions are named within their language and collection, their
English text, and the human answers they bring. And `store.built_from` / `release_version.of`: the release
a database was built from, or the error naming a database built by no release.

Every import runs on a copy of the tiny database (tests/tiny_release.py), whose eight answers are numbered 1 to
8 and whose four questions are 1 `non_cultural:0` (English), 2 `german:0`, 3 `german:1`, 4 `non_cultural:0`
(German); it holds no metrics and no imported question.
"""

import shutil

import duckdb
import pytest
from study_tables import study_database

from analysis import store
from analysis.analyses import release_version
from analysis.core import paths
from analysis.core.errors import InputError, StorageError
from analysis.pipeline import imports

# Two of the tiny release's model answers.
CLAUDE_0 = "german:0:language.german:claude opus"
CLAUDE_1 = "german:1:language.german:claude opus"


@pytest.fixture
def db(tiny_database, tmp_path):
    path = tmp_path / "db" / "calmqa.duckdb"
    path.parent.mkdir()
    shutil.copy(tiny_database, path)
    return path


def _import(kind, db, tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return imports.import_file(kind, path, db)


def _counts(summary):
    return summary.added, summary.changed, summary.unchanged


def _by_first_column(db, sql: str) -> dict:
    """The rows of `sql`: first column -> the others."""
    with store.connect(db) as con:
        return {key: tuple(values) for key, *values in con.execute(sql).fetchall()}


def _metrics(db):
    """answer name -> (n_claims, n_supported, relevant, source)."""
    return _by_first_column(
        db,
        "SELECT a.name, m.n_claims, m.n_supported, m.relevant, m.source "
        "FROM answer_metrics m JOIN answers a USING (answer_id)",
    )


# ------------------------------------------------------------------------------------------ answers

# A new model's answers to the three German questions of the tiny release (2, 3 and 4): added as 9, 10 and 11,
# in the order of their questions.
MINE = "question,language,model,answer,model_version\n"
MY_ANSWERS = (
    MINE
    + "german:0,German,my-model,Eins.,v2\ngerman:1,German,my-model,Zwei.,v2\nnon_cultural:0,German,my-model,Drei.,v2\n"
)


def _texts(db):
    """answer_id -> text of every answer."""
    with store.connect(db) as con:
        return dict(con.execute("SELECT answer_id, text FROM answers").fetchall())


def test_a_new_model_s_answers_are_added_and_an_import_again_changes_only_the_answer_whose_text_differs(db, tmp_path):
    """Each row of the second file is matched with the answer of its own question and model: two are as they
    were, one has a new text, and no other answer changes."""
    release = _texts(db)
    first = _import("answers", db, tmp_path, "mine.csv", MY_ANSWERS)
    assert _counts(first) == (3, 0, 0)
    assert _texts(db) == release | {9: "Eins.", 10: "Zwei.", 11: "Drei."}
    again = _import("answers", db, tmp_path, "again.csv", MY_ANSWERS.replace("Drei.", "Vier."))
    assert _counts(again) == (0, 1, 2)
    assert _texts(db) == release | {9: "Eins.", 10: "Zwei.", 11: "Vier."}


def test_a_new_model_is_added_once_with_its_version_named_once(db, tmp_path):
    """Three answers of the new model, all of version v2: one row, version `v2`, named by its key (no display
    name given), carrying the import's position."""
    _import("answers", db, tmp_path, "mine.csv", MY_ANSWERS)
    with store.connect(db) as con:
        rows = con.execute(
            "SELECT model, display_name, version, import_position FROM models WHERE model = 'my-model'"
        ).fetchall()
    assert rows == [("my-model", "my-model", "v2", 1)]


def test_a_release_model_may_not_answer_a_release_question(db, tmp_path):
    """claude-3-opus answers german:0 in the release: an import of its answer to it is refused."""
    with pytest.raises(InputError, match="a model of the release"):
        _import("answers", db, tmp_path, "claude.csv", MINE + "german:0,German,claude-3-opus,Anders.,\n")
    with store.connect(db) as con:
        assert con.execute("SELECT text FROM answers WHERE answer_id = 3").fetchall() == [("Claude sagt etwas.",)]


def test_a_release_model_may_answer_a_question_an_earlier_import_added(db, tmp_path):
    """The questions an import added are not the release's: a release model's answer to one (question 6,
    `auto:german:0`, added by the questions file) is added."""
    _import("questions", db, tmp_path, "questions.csv", QUESTIONS)
    summary = _import(
        "answers", db, tmp_path, "claude.csv", MINE + "auto:german:0,German,claude-3-opus,Eine Brezel.,\n"
    )
    assert _counts(summary) == (1, 0, 0)
    with store.connect(db) as con:
        added = con.execute("SELECT question_id, model, text FROM answers WHERE answer_id = 11").fetchall()
    # the questions file added the human answers 9 and 10
    assert added == [(6, "claude-3-opus", "Eine Brezel.")]


# ------------------------------------------------------------------------------------------ metrics

FIRST = f"answer,n_claims,n_supported,relevant\n{CLAUDE_0},4,2,yes\n{CLAUDE_1},3,3,no\n"


def test_metrics_of_answers_that_had_none_are_added_not_changed(db, tmp_path):
    summary = _import("metrics", db, tmp_path, "first.csv", FIRST)
    assert _counts(summary) == (2, 0, 0)
    assert _metrics(db) == {CLAUDE_0: (4, 2, True, "first.csv"), CLAUDE_1: (3, 3, False, "first.csv")}


def test_metrics_given_again_as_they_are_change_nothing(db, tmp_path):
    _import("metrics", db, tmp_path, "first.csv", FIRST)
    again = _import("metrics", db, tmp_path, "again.csv", FIRST)
    assert _counts(again) == (0, 0, 2)
    assert again.kept is None
    assert _metrics(db) == {CLAUDE_0: (4, 2, True, "first.csv"), CLAUDE_1: (3, 3, False, "first.csv")}


def test_counts_given_again_without_relevance_change_nothing(db, tmp_path):
    """A file without `relevant` leaves the answer's relevance alone: it is no change, though the row has one."""
    _import("metrics", db, tmp_path, "first.csv", FIRST)
    counts = _import("metrics", db, tmp_path, "counts.csv", f"answer,n_claims,n_supported\n{CLAUDE_0},4,2\n")
    assert _counts(counts) == (0, 0, 1)
    assert counts.kept is None
    assert _metrics(db)[CLAUDE_0] == (4, 2, True, "first.csv")


def test_a_changed_n_supported_alone_is_a_change(db, tmp_path):
    _import("metrics", db, tmp_path, "first.csv", FIRST)
    summary = _import("metrics", db, tmp_path, "supported.csv", f"answer,n_claims,n_supported\n{CLAUDE_0},4,3\n")
    assert _counts(summary) == (0, 1, 0)
    assert _metrics(db)[CLAUDE_0] == (4, 3, True, "supported.csv")


def test_a_file_of_counts_alone_changes_the_counts_and_becomes_their_source(db, tmp_path):
    _import("metrics", db, tmp_path, "first.csv", FIRST)
    summary = _import("metrics", db, tmp_path, "claims.csv", f"answer,n_claims,n_supported\n{CLAUDE_0},6,5\n")
    assert _counts(summary) == (0, 1, 0)
    # relevance kept from the first file, the counts and the source are the new file's
    assert _metrics(db) == {CLAUDE_0: (6, 5, True, "claims.csv"), CLAUDE_1: (3, 3, False, "first.csv")}


def test_a_file_of_relevance_alone_changes_it_and_becomes_the_source(db, tmp_path):
    _import("metrics", db, tmp_path, "first.csv", FIRST)
    summary = _import("metrics", db, tmp_path, "judge.csv", f"answer,relevant\n{CLAUDE_0},no\n")
    assert _counts(summary) == (0, 1, 0)
    # the counts kept from the first file, relevance and the source are the new file's
    assert _metrics(db) == {CLAUDE_0: (4, 2, False, "judge.csv"), CLAUDE_1: (3, 3, False, "first.csv")}


# ------------------------------------------------------------------------------------------ questions

# New question ids follow the last (4), in the order of language, question type and text: the English
# question 5, then the German ones by text ("Was" < "Wer" < "Wo") 6, 7 and 8.
QUESTIONS = (
    "language,question_type,question,question_english,answer,collection\n"
    "German,specific,Wer war Goethe?,Who was Goethe?,Ein Dichter.,auto\n"
    "German,specific,Was ist eine Brezel?,,,auto\n"
    "German,specific,Wo liegt Köln?,,,human\n"
    "English,specific,What is a bagel?,,A bread roll.,auto\n"
)


def _questions(db):
    """question_id -> (name, language, collection, text_en) of the imported questions."""
    return _by_first_column(
        db,
        "SELECT question_id, name, language, collection, text_en FROM questions WHERE import_position IS NOT NULL",
    )


def test_imported_questions_are_numbered_from_0_within_their_language_and_collection(db, tmp_path):
    """The release's German and English questions, and the questions of the collection in other languages,
    do not count; a later import goes on after the questions of its language and collection."""
    first = _import("questions", db, tmp_path, "questions.csv", QUESTIONS)
    assert (first.added, first.unchanged) == (4, 0)
    names = {qid: row[0] for qid, row in _questions(db).items()}
    assert names == {5: "auto:english:0", 6: "auto:german:0", 7: "auto:german:1", 8: "human:german:0"}
    second = _import(
        "questions",
        db,
        tmp_path,
        "more.csv",
        "language,question_type,question\nJapanese,specific,なぜ?\nGerman,specific,Wie alt ist Köln?\n",
    )
    assert (second.added, second.unchanged) == (2, 0)
    names = {qid: row[0] for qid, row in _questions(db).items()}
    # German before Japanese: 9 and 10
    assert {qid: names[qid] for qid in (9, 10)} == {9: "auto:german:2", 10: "auto:japanese:0"}


def test_an_english_question_without_an_english_text_is_its_own(db, tmp_path):
    _import("questions", db, tmp_path, "questions.csv", QUESTIONS)
    assert {qid: row[3] for qid, row in _questions(db).items()} == {
        5: "What is a bagel?",  # English: its own text
        6: None,  # German, no English text given
        7: "Who was Goethe?",  # the English text given
        8: None,
    }


def test_only_questions_imported_with_an_answer_get_a_human_answer_numbered_after_the_last(db, tmp_path):
    _import("questions", db, tmp_path, "questions.csv", QUESTIONS)
    with store.connect(db) as con:
        added = con.execute(
            "SELECT answer_id, question_id, name, is_human, model, text FROM answers WHERE answer_id > 8 ORDER BY 1"
        ).fetchall()
        assert con.execute("SELECT count(*) FROM answers").fetchall() == [(10,)]
    # in the order of their questions: 5 (English) then 7
    assert added == [
        (9, 5, "auto:english:0:human", True, None, "A bread roll."),
        (10, 7, "auto:german:1:human", True, None, "Ein Dichter."),
    ]


# ------------------------------------------------------------------------------------------ provenance


def test_a_release_database_says_the_release_it_was_built_from_and_a_study_none(tiny_database):
    """The tiny release's six files, which differ from the pinned release's; a study of one's own (no paper)
    is no CaLMQA release, though it has a (here empty) source_files table."""
    with store.connect(tiny_database) as con:
        found = store.built_from(con)
        version = release_version.of(con)
    assert found is not None and found["n_files"] == 6
    assert {"all_ratings.csv", "datasets/dataset-agnostic-afar.json"} <= set(found["differing"])
    assert version.n_files == 6 and not version.pinned
    study = study_database(paths.DATA / "examples" / "study")
    assert store.table_exists(study, "source_files")
    assert store.built_from(study) is None


def test_a_database_built_by_no_release_is_named_in_the_error(tmp_path):
    path = tmp_path / "plain.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
        with pytest.raises(StorageError, match="holds no source_files table") as info:
            release_version.of(con)
    assert info.value.path == str(path)
