"""The explorer's logic on the real database, its widgets driven programmatically, and its HTML escaping."""

import duckdb
import papermill
import polars as pl
import pytest

from analysis import store
from analysis.core import paths
from analysis.ui import explorer


@pytest.fixture(scope="module")
def explore(database):
    connection = store.connect(database)
    yield explorer.Explorer(connection, page_size=3)
    connection.close()


def test_answers_are_every_answer_with_question_and_rating(con):
    answers = explorer.load_answers(con)
    assert answers.height == con.sql("SELECT count(*) FROM answers").fetchall()[0][0]
    assert answers["rating"].drop_nulls().len() == con.sql("SELECT count(answer_id) FROM ratings").fetchall()[0][0]
    assert set(answers.filter(pl.col("is_human"))["model_name"]) <= {explorer.HUMAN, explorer.HUMAN + " (dot points)"}


def test_metric_cells_equal_a_recomputation_in_sql(con):
    cells = explorer.metric_cells(explorer.load_answers(con), explorer.METRIC_BY_KEY["answer_bytes"])
    expected = con.sql("""
        SELECT m.display_name AS model_name, q.language, avg(a.n_bytes) AS value, count(*) AS n_answers
        FROM answers a JOIN questions q USING (question_id) JOIN models m USING (model)
        GROUP BY ALL ORDER BY ALL""").pl()
    got = cells.select(expected.columns).sort("model_name", "language")
    assert got.drop("value").equals(expected.drop("value"))
    assert got["value"].to_list() == pytest.approx(expected["value"].to_list())
    empty = explorer.metric_cells(explorer.load_answers(con), explorer.METRIC_BY_KEY["empty_share"])
    n_empty = con.sql("SELECT count(*) FROM answers WHERE NOT is_human AND text = ''").fetchall()[0][0]
    assert (empty["value"] * empty["n_answers"]).sum() == pytest.approx(n_empty)
    assert ((empty["ci_low"] <= empty["value"]) & (empty["value"] <= empty["ci_high"])).all()


def test_widgets_filter_the_answers_and_the_heatmap(explore, con):
    explore.language.value = "German"
    explore.question_type.value = "specific"
    frame = explore.filtered
    n_expected = con.sql("""SELECT count(*) FROM answers JOIN questions USING (question_id)
                            WHERE questions.language = 'German' AND question_type = 'specific'""").fetchall()[0][0]
    assert frame.height == n_expected and set(frame["language"]) == {"German"}
    cells = explore.chart.chart.to_dict()
    data = next(iter(cells["datasets"].values()))
    assert {row["language"] for row in data} == {"German"} and all("ci_low" in row for row in data)
    # A question: its answers, side by side, with the English translation.
    label, question_id = explore.question.options[1]
    explore.question.value = question_id
    chosen = explore.filtered
    assert set(chosen["question_id"]) == {question_id}
    page = explore.answers_view.value
    question = chosen.row(0, named=True)
    assert page.count('class="calmqa-answer"') == chosen.height
    assert explorer.html.escape(question["question_text_en"]) in page
    # A heatmap click selects a model and a language, and the question falls away when it no longer matches.
    explore.select_cell("GPT-4o", "Hindi")
    assert explore.filters == explorer.Filters(language="Hindi", model="GPT-4o", question_type="specific")
    assert explore.question.value is None and set(explore.filtered["model_name"]) == {"GPT-4o"}
    explore.metric.value = "empty_share"
    assert explore.chart.chart.to_dict()["title"] == "share of empty answers"


def test_answers_html_escapes_text_from_the_data(explore):
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    frame = explore.answers.head(2).with_columns(text=pl.lit(payload), question_text=pl.lit(payload))
    page = explorer.answers_html(frame, True)
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_surface_metrics_appear_only_with_the_surface_table(database, tmp_path, explore):
    assert len(explore.metric.options) == len(explorer.METRICS)
    explore.metric.value = "repetition_share"
    cells = explorer.metric_cells(explore.answers, explorer.METRIC_BY_KEY["repetition_share"])
    with store.connect(database) as con:
        n_repeating = con.sql("SELECT count(*) FROM answer_surface WHERE repetition").fetchall()[0][0]
    assert (cells["value"] * cells["n_answers"]).sum() == pytest.approx(n_repeating)
    explore.question.value = explore.question.options[1][1]
    assert "no surface issue: " in explore.answers_view.value
    # a database built without the surface stage offers only what it can compute, and says why
    copy = tmp_path / "without_surface.duckdb"
    copy.write_bytes(database.read_bytes())
    with duckdb.connect(str(copy)) as con:
        con.execute("DROP TABLE answer_surface")
    with store.connect(copy) as con:
        without = explorer.Explorer(con)
        assert [m.key for m in explorer.available_metrics(without.has_surface)] == ["answer_bytes", "empty_share"]
        assert "no <code>answer_surface</code> table" in without.status.value


def test_explore_notebook_executes(database, tmp_path):
    papermill.execute_notebook(
        str(paths.NOTEBOOKS / "00_explore.ipynb"), str(tmp_path / "executed.ipynb"),
        parameters={"db_path": str(database), "output_dir": str(tmp_path / "out")},
        kernel_name=paths.KERNEL_NAME, cwd=str(paths.NOTEBOOKS), progress_bar=False,
    )
