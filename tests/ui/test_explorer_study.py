"""The explorer on a study of one's own: its metrics and its human ratings per criterion are explored as the
surface metrics are (the example study, in memory: no build)."""

import polars as pl
import pytest
from study_tables import study_database

from analysis.core import paths
from analysis.ui import explorer, explorer_logic

EXAMPLE = paths.ROOT / "data" / "examples" / "study"


@pytest.fixture(scope="module")
def explore():
    return explorer.Explorer(study_database(EXAMPLE))


def _oracle():
    """The example's own files, read without the package: answers' keys, ratings and metrics."""
    questions = pl.read_csv(EXAMPLE / "questions.csv").select("question_id", "language", "question_type")
    answers = pl.read_csv(EXAMPLE / "answers.csv").select("model", "display_name").unique()
    names = dict(answers.iter_rows())
    ratings = pl.read_csv(EXAMPLE / "ratings.csv", schema_overrides={"rating": pl.String}).join(
        questions, on="question_id"
    )
    metrics = pl.read_csv(EXAMPLE / "metrics.csv").join(questions, on="question_id")
    return names, ratings, metrics


def test_the_study_metrics_and_criteria_are_metrics_of_the_explorer(explore):
    keys = {key: m for key, m in explore.metrics.items()}
    assert {"metric:score", "metric:flawed", "rating:overall", "rating:fluency"} <= set(keys)
    # the better end as study.toml declares it; a criterion's best level is its last
    assert (keys["metric:score"].better, keys["metric:flawed"].better) == ("higher", "lower")
    assert keys["rating:fluency"].levels == ("poor", "fair", "good") and keys["rating:fluency"].domain == (1.0, 3.0)
    assert "1 poor, 2 fair, 3 good" in keys["rating:fluency"].title and "1 to 5" in keys["rating:overall"].title


def test_a_rating_cell_is_the_mean_level_and_its_sentence_counts_each_level(explore):
    names, ratings, _ = _oracle()
    position = {"poor": 1, "fair": 2, "good": 3}
    expected = ratings.filter(
        (pl.col("criterion") == "fluency") & (pl.col("language") == "Hausa") & (pl.col("question_type") == "factual")
    ).with_columns(model=pl.col("model").replace_strict(names), level=pl.col("rating").replace_strict(position))
    metric = explore.metrics["rating:fluency"]
    cells = explorer_logic.metric_cells(explore.answers, metric).filter(
        (pl.col("language") == "Hausa") & (pl.col("question_type") == "factual")
    )
    for model, value in cells.select("model_name", "value").iter_rows():
        mine = expected.filter(pl.col("model") == model)
        # each answer's levels averaged over its annotators, then the answers averaged
        by_answer = mine.group_by("question_id").agg(pl.col("level").mean())["level"].mean()
        assert value == pytest.approx(by_answer), model
    model = cells["model_name"][0]
    filters = explorer_logic.Filters(language="Hausa", model=model, question_type="factual")
    frame = explorer_logic.apply_filters(
        explore.answers, explorer_logic.Filters(language="Hausa", question_type="factual")
    )
    sentence = explorer_logic.cell_sentence(frame, filters, metric, 10, 0, explore.orders)
    counts = expected.filter(pl.col("model") == model).group_by("rating").len()
    for level, n in counts.iter_rows():
        assert f"{level}: {n}" in sentence
    assert "03_surface_quality.html#answers:model=" in sentence


def test_a_metric_lists_the_chosen_model_s_worst_answers_first(explore):
    names, _, metrics = _oracle()
    for key, worst_first_descending in (("metric:score", False), ("metric:flawed", True)):
        metric = explore.metrics[key]
        frame = explorer_logic.apply_filters(
            explore.answers, explorer_logic.Filters(language="Swahili", question_type="opinion")
        )
        model = "Beta 70B"
        listed = explorer_logic.question_ids(frame, metric, False, model)
        names_by_id = dict(frame.select("question_id", "question_name").unique().iter_rows())
        mine = metrics.filter(
            (pl.col("metric") == key.split(":")[1])
            & (pl.col("language") == "Swahili")
            & (pl.col("question_type") == "opinion")
            & (pl.col("model").replace_strict(names) == model)
        )
        values = dict(mine.select("question_id", "value").iter_rows())
        shown = [values[names_by_id[q]] for q in listed]
        assert shown == sorted(shown, reverse=worst_first_descending), key


def test_the_saved_selection_holds_each_answer_s_metrics_and_ratings_as_text(explore, tmp_path, monkeypatch):
    names, ratings, metrics = _oracle()
    monkeypatch.setattr(explore, "output_dir", tmp_path)
    saved = pl.read_csv(explore.save_selection(), infer_schema=False)
    assert saved.height == explore.filtered.height
    row = saved.filter((pl.col("question_name") == "ha-001") & (pl.col("model_name") == names["alpha-7b"])).row(
        0, named=True
    )
    mine = metrics.filter((pl.col("question_id") == "ha-001") & (pl.col("model") == "alpha-7b"))
    shown = dict(pair.rsplit(" ", 1) for pair in row["metric_values"].split(", "))
    assert {m: float(v) for m, v in shown.items()} == dict(mine.select("metric", "value").iter_rows())
    rated = ratings.filter((pl.col("question_id") == "ha-001") & (pl.col("model") == "alpha-7b"))
    assert sorted(row["ratings"].split(", ")) == sorted(
        f"{c} {r}" for c, r in rated.select("criterion", "rating").iter_rows()
    )
