"""What a study folder expands to is bounded, and no step of its validation grows faster than its input
(issue 38).

- A file is limited by what it holds once decoded, not only by its size: a Parquet file of a few kilobytes
  can decode to gigabytes (it is decoded a few hundred rows at a time, and refused at the row where the
  decoded bytes pass `records.MAX_FILE_BYTES`), and a table of any format holds at most `records.MAX_ROWS`
  records. The limits are lowered here, so that a small file stands for a large one.
- Validation is linear in every dimension of a study (questions, models, annotators, criteria, metrics,
  levels): read at 10x and at 100x a small folder, the CPU time per record at 100x is within a few times
  that at 10x (a step quadratic in a dimension, as a `count` per level was, makes it ten times larger).
  CPU time of this process, not wall time: other processes on the machine do not change it much.
- A criterion of 200,000 levels is refused in one message, at once.
- Report 05's mixed models are fitted on at most a budget of ratings, on the ratings of a seeded sample of
  whole questions, and the report says so (`analyses.ratings.model_sample`): the budget is lowered here.
"""

import shutil
import time

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import records, study

EXAMPLE = paths.DATA / "examples" / "study"


@pytest.fixture
def folder(tmp_path):
    return shutil.copytree(EXAMPLE, tmp_path / "study")


def problems_of(folder) -> list[str]:
    with pytest.raises(InputError) as info:
        study.read(folder)
    return [str(p).replace(str(folder) + "/", "") for p in info.value.problems]


# ------------------------------------------------------------------------------------ what a file expands to


def test_a_parquet_file_is_limited_by_what_it_decodes_to_and_read_a_batch_at_a_time(folder, monkeypatch):
    """2,000 questions of one 1,000-character text: a file of a few kilobytes (Parquet's dictionary
    encoding) that decodes to 2 MB, against a limit lowered to 1 MiB. The refusal names the row the limit
    was passed at, well before the last: the rows were decoded a batch at a time, never all at once. (The
    answers to the example's questions, which the file does not hold, are not reported: the table was not
    read whole.)"""
    monkeypatch.setattr(records, "MAX_FILE_BYTES", 1 << 20)
    n = 2_000
    table = pa.table(
        {
            "question_id": [f"x-{i:04d}" for i in range(n)],
            "language": ["Hausa"] * n,
            "question": ["Me ya sa " + "a" * 991] * n,
        }
    )
    (folder / "questions.csv").unlink()
    pq.write_table(table, folder / "questions.parquet", compression="zstd")
    assert (folder / "questions.parquet").stat().st_size < 30_000
    problems = problems_of(folder)
    assert len(problems) == 1, problems[:3]
    assert problems[0].startswith("questions.parquet, row ") and "decodes to more than 1,048,576 bytes" in problems[0]
    assert int(problems[0].split("row ")[1].split(":")[0]) < n


def test_a_parquet_file_of_more_rows_than_a_table_may_hold_is_refused_before_it_is_read(folder, monkeypatch):
    monkeypatch.setattr(records, "MAX_ROWS", 500)
    monkeypatch.setattr(study, "PARQUET_BATCH_ROWS", None)  # a batch would fail: nothing may be decoded
    questions = pl.read_csv(folder / "questions.csv")
    pl.concat([questions.with_columns(pl.col("question_id") + f"-{i}") for i in range(7)]).head(501).write_parquet(
        folder / "questions.parquet"
    )
    (folder / "questions.csv").unlink()
    assert problems_of(folder) == [
        "questions.parquet: holds more than 500 records; an input table has at most 500: split it"
    ]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_table_of_more_rows_than_it_may_hold_is_refused_at_the_first_one_too_many(folder, monkeypatch, suffix):
    monkeypatch.setattr(records, "MAX_ROWS", 400)
    ratings = pl.read_csv(folder / "ratings.csv", infer_schema=False)
    assert ratings.height > 400
    (folder / "ratings.csv").unlink()
    (folder / "metrics.csv").unlink()  # as many rows as the ratings
    if suffix == ".csv":
        ratings.write_csv(folder / "ratings.csv")
    else:
        ratings.write_ndjson(folder / "ratings.jsonl")
    assert problems_of(folder) == [
        f"ratings{suffix}, line {401 + (suffix == '.csv')}: holds more than 400 records; an input table has at "
        "most 400: split it"
    ]


def test_a_criterion_of_200000_levels_is_one_problem_at_once(folder):
    levels = ", ".join(str(i) for i in range(200_000))
    toml = (folder / "study.toml").read_text(encoding="utf-8")
    (folder / "study.toml").write_text(
        toml.replace("levels = [1, 2, 3, 4, 5]", f"levels = [{levels}]"), encoding="utf-8"
    )
    started = time.process_time()
    problems = problems_of(folder)
    assert problems == [
        "study.toml, [criteria.overall], field 'levels': has 200,000 levels; a criterion has at most 1,000 (its "
        "charts and tables show each level: a measure of more is a metric, `[metrics.NAME]`)"
    ]
    assert time.process_time() - started < 60  # CPU seconds; the quadratic check of levels took hours


# ------------------------------------------------------------------------------- validation, linear in the input


def write_study(folder, questions=1, models=2, annotators=1, criteria=1, levels=2, metrics=1):
    """A valid study folder of the given size in each dimension: every model answers every question, each
    annotator rates every answer on every criterion (at the level its number gives), every metric has a
    value for every answer."""
    folder.mkdir(parents=True)
    toml = ['name = "scaled"', 'title = "A scaled study"']
    for c in range(criteria):
        toml += [f"[criteria.c{c}]", f"levels = [{', '.join(f'{chr(34)}l{i}{chr(34)}' for i in range(levels))}]"]
    for k in range(metrics):
        toml += [f"[metrics.m{k}]", "higher_is_better = true"]
    (folder / "study.toml").write_text("\n".join(toml) + "\n", encoding="utf-8")
    (folder / "languages.csv").write_text("language,code\nHausa,ha\n", encoding="utf-8")
    qs = [f"q{i}" for i in range(questions)]
    ms = [f"model-{j}" for j in range(models)]
    with open(folder / "questions.csv", "w", encoding="utf-8") as out:
        out.write("question_id,language,question\n")
        out.writelines(f"{q},Hausa,Tambaya {q}\n" for q in qs)
    with open(folder / "answers.csv", "w", encoding="utf-8") as out:
        out.write("question_id,model,answer,display_name\n")
        out.writelines(f"{q},{m},Amsa {q} {m},Model {m[6:]}\n" for q in qs for m in ms)
    with open(folder / "ratings.csv", "w", encoding="utf-8") as out:
        out.write("question_id,model,annotator,criterion,rating\n")
        out.writelines(
            f"{q},{m},a{a},c{c},l{(a + c) % levels}\n"
            for q in qs
            for m in ms
            for a in range(annotators)
            for c in range(criteria)
        )
    with open(folder / "metrics.csv", "w", encoding="utf-8") as out:
        out.write("question_id,model,metric,value\n")
        out.writelines(f"{q},{m},m{k},0.5\n" for q in qs for m in ms for k in range(metrics))


def cpu_per_record(tmp_path, dimension: str, size: int) -> float:
    """CPU seconds per unit of `dimension` to read a study of `size` of them (the best of two reads)."""
    folder = tmp_path / f"{dimension}-{size}"
    write_study(folder, **{dimension: size})
    best = float("inf")
    for _ in range(2):
        started = time.process_time()
        read = study.read(folder)
        best = min(best, time.process_time() - started)
    assert read.answers.height > 0
    return best / size


# Each dimension's size at 1x (levels: a criterion has at most 1,000, so 5, 50 and 500).
BASE = {"questions": 100, "models": 100, "annotators": 100, "criteria": 100, "metrics": 100, "levels": 5}


@pytest.mark.slow  # seconds of CPU: each dimension read at 10x and at 100x
@pytest.mark.parametrize("dimension", BASE)
def test_validation_is_linear_in_every_dimension_of_a_study(tmp_path, dimension):
    at_10x = cpu_per_record(tmp_path, dimension, 10 * BASE[dimension])
    at_100x = cpu_per_record(tmp_path, dimension, 100 * BASE[dimension])
    # linear: about 1 (less, as the fixed costs are shared by more records); quadratic: about 10
    assert at_100x < 4 * at_10x, f"{dimension}: {at_10x * 1e6:.1f} µs per unit at 10x, {at_100x * 1e6:.1f} at 100x"


# ----------------------------------------------------------------------------------- report 05's mixed models


def ratings_table(questions: int, per_question: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "question_id": [q for q in range(questions) for _ in range(per_question)],
            "rating": list(range(questions * per_question)),
        }
    )


def test_a_model_sample_takes_whole_questions_up_to_the_budget_the_same_each_time():
    from analysis.analyses.ratings import model_sample

    table = ratings_table(1_000, 7)
    sample = model_sample(table, 700)
    per_question = sample.group_by("question_id").len()
    assert per_question["len"].to_list() == [7] * per_question.height  # every rating of each question taken
    assert 700 <= sample.height < 700 + 7 and sample.height == 7 * per_question.height
    assert sample.equals(model_sample(table, 700))  # seeded: the same sample run after run
    assert sample["rating"].to_list() == sorted(sample["rating"].to_list())  # in the table's order
    assert set(sample["question_id"]) != set(range(per_question.height))  # a random sample, not the first ones
    assert model_sample(table, 7_000).equals(table)  # a table within the budget is fitted whole


@pytest.mark.needs_r
@pytest.mark.slow
def test_report_05_fits_a_stated_sample_of_a_study_s_ratings_beyond_its_budget(
    example_study_database, tmp_path, monkeypatch
):
    from analysis import store
    from analysis.analyses import dimensions
    from analysis.analyses import ratings as study_ratings

    monkeypatch.setattr(study_ratings, "MIN_MODEL_RATINGS", 60)

    db = tmp_path / "example.duckdb"
    shutil.copyfile(example_study_database, db)
    with store.connect(db) as con:
        criteria = [c for c in study_ratings.criteria(con) if c.name == "overall"]
        orders = dimensions.Orders.of(con)
        rated = study_ratings.criterion_ratings(con, criteria[0])
        fitted, failed = study_ratings.fit_all(con, criteria, orders, budget=120)
        summary = study_ratings.summary(con, fitted, failed)
    model = fitted["overall"]
    assert rated.group_by("question_id").len()["len"].unique().to_list() == [3]  # three models rated per question
    assert failed == {} and rated.height == model.n_rated > 120
    assert 120 <= model.fit.n_obs < 120 + rated.group_by("question_id").len()["len"].max()
    assert model.r2.row(0, named=True)["n_ratings"] == model.fit.n_obs
    assert model.r2.row(0, named=True)["n_ratings_rated"] == rated.height
    assert (
        f"fitted on {model.fit.n_obs:,} of its {rated.height:,} ratings: every rating of a seeded random sample of "
        f"{model.fit.n_obs // 3:,} of its {rated['question_id'].n_unique():,} questions"
    ) in summary
