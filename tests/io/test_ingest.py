import gzip
import json

import polars as pl
import pytest
from tiny_release import rating_row, write_ratings, write_release

from analysis import store
from analysis.core.errors import InputError
from analysis.pipeline.build import build


def _frame(con, sql):
    return con.sql(sql).pl()


def test_snapshot_counts(con):
    q = _frame(con, "SELECT * FROM questions")
    assert q.height == 2644
    assert dict(q.group_by("question_type").len().iter_rows()) == {"specific": 1471, "agnostic": 1173}
    assert q["language"].n_unique() == 23
    assert _frame(con, "SELECT * FROM categories").height == 12
    assert 21_000 < _frame(con, "SELECT * FROM answers").height < 23_000
    ratings = _frame(con, "SELECT * FROM ratings")
    assert ratings["rating_id"].n_unique() == 300 and ratings["question_id"].n_unique() == 100
    assert ratings.group_by("criterion").len().sort("criterion").rows() == [
        ("factuality", 300),
        ("language_correct", 300),
        ("omissions", 300),
        ("rating", 300),
    ]
    assert q.filter(pl.col("human_evaluated")).height == 100


def test_snapshot_keys_and_vocabulary(con):
    q, a, r = (_frame(con, f"SELECT * FROM {t}") for t in ("questions", "answers", "ratings"))
    models = _frame(con, "SELECT * FROM models")
    assert q["question_id"].is_unique().all() and a["answer_id"].is_unique().all()
    assert q.select("name", "language").is_unique().all()
    assert set(a.filter(~pl.col("is_human"))["model"]) == set(models["model"])
    assert set(r["model"]) <= set(models["model"])
    assert a.filter(pl.col("is_human"))["model"].null_count() == a.filter(pl.col("is_human")).height
    # every rating is linked to the answer of the same model and question
    answer_keys = a.select(
        "answer_id", pl.col("question_id").alias("answer_question_id"), pl.col("model").alias("answer_model")
    )
    linked = r.join(answer_keys, on="answer_id")
    assert linked["rating_id"].n_unique() == 300
    assert (linked["question_id"] == linked["answer_question_id"]).all()
    assert (linked["model"] == linked["answer_model"]).all()


def test_agnostic_questions_take_the_english_category(con):
    agnostic = _frame(con, "SELECT name, category FROM questions WHERE question_type = 'agnostic'")
    assert agnostic["category"].null_count() == 0
    per_name = agnostic.group_by("name").agg(pl.col("category").n_unique())
    assert (per_name["category"] == 1).all()


def test_text_and_bytes(con):
    q = _frame(con, "SELECT * FROM questions")
    assert (q["n_bytes"] == q["text"].str.len_bytes()).all()
    german = q.filter((pl.col("name") == "non_cultural:0") & (pl.col("language") == "German")).row(0, named=True)
    assert german["text"] == "Warum werden Flugzeuge von vorne nach hinten bestuhlt?"
    assert german["text_en"] == "Why are airplanes boarded front to back?"


def _tiny(folder):
    path = folder.parent / f"{folder.name}.duckdb"
    build(folder, path, verify=False, progress=False)
    with store.connect(path) as con:
        return {t: con.sql(f"SELECT * FROM {t} ORDER BY ALL").pl() for t in ("questions", "answers", "ratings")}


@pytest.mark.slow
def test_tiny_release_gz_and_plain_json_agree(tmp_path, small_language_identification):
    a = _tiny(write_release(tmp_path / "gz"))
    b = _tiny(write_release(tmp_path / "plain", gzip_files=False))
    for table in ("questions", "answers", "ratings"):
        assert a[table].equals(b[table])
    assert a["questions"].height == 4
    human = a["answers"].filter(pl.col("is_human"))
    assert human.height == 2 and human["model"].null_count() == 2
    assert a["answers"].filter(pl.col("text") == "").height == 2  # empty answers are kept, not dropped
    rating = dict(a["ratings"].select("criterion", "level").iter_rows())
    assert rating == {"rating": "4", "factuality": "none", "omissions": "minor", "language_correct": "yes"}
    assert set(a["ratings"]["model"]) == {"claude-3-opus"}
    rated = a["questions"].filter(pl.col("question_id").is_in(a["ratings"]["question_id"].implode()))
    assert rated.select("language", "question_type").rows() == [("German", "specific")]


@pytest.fixture
def problems_of(small_language_identification):
    """The message of the one error a build of a release folder stops with (the build reads the language
    identification before the release: the small one, `conftest.small_language_identification`)."""

    def problems(folder) -> str:
        with pytest.raises(InputError) as info:
            build(folder, folder.parent / "x.duckdb", verify=False, progress=False)
        return str(info.value)

    return problems


def test_invalid_json_names_file_and_line(tmp_path, problems_of):
    folder = write_release(tmp_path, gzip_files=False)
    path = folder / "datasets" / "dataset-specific-german.json"
    path.write_text('{"entries": [\n{"question": }', encoding="utf-8")
    message = problems_of(folder)
    assert "dataset-specific-german.json" in message and "line 2" in message and "invalid JSON" in message


def test_truncated_gzip_names_file(tmp_path, problems_of):
    folder = write_release(tmp_path)
    path = folder / "datasets" / "dataset-agnostic-german.json.gz"
    path.write_bytes(path.read_bytes()[:30])
    message = problems_of(folder)
    assert "dataset-agnostic-german.json.gz" in message and "cannot be read" in message


def test_unknown_model_and_duplicate_question_are_reported_together(tmp_path, problems_of):
    folder = write_release(tmp_path, gzip_files=False)
    path = folder / "datasets" / "dataset-specific-german.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["entries"][0]["answers"][1]["prompting_state"]["model_name"] = "Mystery 9000"
    data["entries"][1]["question"]["name"] = "german:0"
    path.write_text(json.dumps(data), encoding="utf-8")
    message = problems_of(folder)
    assert "2 problems" in message
    assert "entry 0 (german:0), answer 1" in message and "unknown model 'Mystery 9000'" in message
    assert "entry 1 (german:0)" in message and "duplicate question name" in message


def test_unknown_language_file(tmp_path, problems_of):
    folder = write_release(tmp_path)
    (folder / "datasets" / "dataset-specific-klingon.json.gz").write_bytes(gzip.compress(b'{"entries": []}'))
    assert "unknown language 'klingon'" in problems_of(folder)


def test_unmatched_rating_names_the_row(tmp_path, problems_of):
    folder = write_release(tmp_path)
    write_ratings(folder, [rating_row(), rating_row(annotation_id="8", question="Eine Frage, die es nicht gibt")])
    message = problems_of(folder)
    assert "all_ratings.csv, line 3 (annotation_id 8), field 'question'" in message
    assert "matches 0 specific German questions" in message


def test_rating_values_are_checked(tmp_path, problems_of):
    folder = write_release(tmp_path)
    write_ratings(folder, [rating_row(rating="6", model="gpt5", language="xx")])
    message = problems_of(folder)
    assert "field 'rating'" in message and "field 'model'" in message and "field 'language'" in message


def test_ratings_csv_with_missing_column(tmp_path, problems_of):
    folder = write_release(tmp_path)
    text = (folder / "all_ratings.csv").read_text(encoding="utf-8").replace("omissions,", "", 1)
    (folder / "all_ratings.csv").write_text(text, encoding="utf-8")
    message = problems_of(folder)
    assert "all_ratings.csv, line 1 (header)" in message and "missing column(s) 'omissions'" in message


def test_fijian_code_in_ratings(tmp_path, problems_of):
    folder = write_release(tmp_path)
    write_ratings(folder, [rating_row(language="fi")])
    # `fi` means Fijian in the annotation tool, so a German question does not match it
    assert "matches 0 specific Fijian questions" in problems_of(folder)


# ------------------------------------------------------------------ a dataset file read an entry at a time


def _both_readings(path, monkeypatch=None, language="German"):
    """A dataset file read an entry at a time and read whole: the frames and the problems of each. With
    `monkeypatch`, the file cannot be read whole the first time: the frames are those of the entries
    read one at a time."""
    from analysis.core.errors import Problems
    from analysis.io import ingest

    streamed, whole = Problems(), Problems()
    expected = ingest._frames(*ingest.read_dataset_file(path, "specific", language, whole), dataset_file=path.name)
    if monkeypatch is not None:
        monkeypatch.setattr(ingest, "read_dataset_file", None)
    return ingest.read_dataset_frames(path, "specific", language, streamed), streamed.items, expected, whole.items


def _german_file(tmp_path):
    folder = write_release(tmp_path / "release")
    return next((folder / "datasets").glob("dataset-specific-german.json*"))


@pytest.mark.parametrize("window", [7, 64, 1 << 22])
def test_a_file_read_an_entry_at_a_time_gives_the_frames_of_the_file_read_whole(tmp_path, monkeypatch, window):
    from analysis.io import ingest

    source = _german_file(tmp_path)
    with ingest.open_uncompressed(source) as handle:
        data = json.load(handle)
    path = tmp_path / "dataset-specific-german.json"
    # Spaces and line ends between the tokens, and entries cut by the window's end wherever it falls.
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(ingest, "WINDOW_BYTES", window)
    monkeypatch.setattr(ingest, "FRAME_ANSWERS", 3)  # several frames per file
    readings = _both_readings(path, monkeypatch)
    (questions, answers), problems, (whole_questions, whole_answers), whole_problems = readings
    assert answers.height > 3 and problems == whole_problems == []
    assert questions.equals(whole_questions) and answers.equals(whole_answers)
    assert questions.schema == whole_questions.schema and answers.schema == whole_answers.schema


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text[:-2] + ',"entries": []}',  # a key twice at the top level
        lambda text: text[:-2] + '], "other": 1}',  # another key, which the reader ignores
        lambda text: text[:-2] + ", 12 34]}",  # invalid JSON in the last entry
        lambda text: text[:-2] + ", 1234567]}",  # a number, which a window may cut
        lambda text: text[:-1] + " x",  # the closing brace missing
        lambda text: text + " x",  # something after the object
        lambda text: "\ufeff" + text,  # a byte-order mark
        lambda text: text.replace('"name"', '"name": 1, "name"', 1),  # a key twice in an entry
    ],
)
def test_a_file_that_is_not_plain_entries_is_read_whole_with_the_same_problems(tmp_path, monkeypatch, edit):
    from analysis.io import ingest

    with ingest.open_uncompressed(_german_file(tmp_path)) as handle:
        text = json.dumps(json.load(handle), ensure_ascii=False)
    path = tmp_path / "dataset-specific-german.json"
    path.write_text(edit(text), encoding="utf-8")
    monkeypatch.setattr(ingest, "WINDOW_BYTES", 5)
    (questions, answers), problems, (whole_questions, whole_answers), whole_problems = _both_readings(path)
    assert problems == whole_problems
    assert questions.equals(whole_questions) and answers.equals(whole_answers)
