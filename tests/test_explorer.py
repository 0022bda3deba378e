"""The explorer's logic on the real database, its widgets driven programmatically, and its HTML escaping."""

import duckdb
import papermill
import polars as pl
import pytest

from analysis import store
from analysis.core import paths
from analysis.core.text import inert
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
        SELECT m.display_name AS model_name, q.language, q.question_type, avg(a.n_bytes) AS value, count(*) AS n_answers
        FROM answers a JOIN questions q USING (question_id) JOIN models m USING (model)
        GROUP BY ALL ORDER BY ALL""").pl()
    got = cells.select(expected.columns).sort("model_name", "language", "question_type")
    assert got.drop("value").equals(expected.drop("value"))
    assert got["value"].to_list() == pytest.approx(expected["value"].to_list())
    # a share is a percentage
    empty = explorer.metric_cells(explorer.load_answers(con), explorer.METRIC_BY_KEY["empty_share"])
    n_empty = con.sql("SELECT count(*) FROM answers WHERE NOT is_human AND text = ''").fetchall()[0][0]
    assert (empty["value"] / 100 * empty["n_answers"]).sum() == pytest.approx(n_empty)
    assert ((empty["ci_low"] <= empty["value"]) & (empty["value"] <= empty["ci_high"])).all()
    assert empty["value"].max() <= 100 and empty["ci_high"].max() <= 100 and empty["value"].max() > 1


def _colour_domains(chart) -> list:
    """The domains of the quantitative colour scales of a chart's spec."""
    found = []

    def visit(node):
        if isinstance(node, dict):
            colour = node.get("encoding", {}).get("color")
            if isinstance(colour, dict) and colour.get("type") == "quantitative":
                found.append(colour.get("scale", {}).get("domain"))
            for child in node.values():
                visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit(chart.to_dict())
    return found


def test_the_default_metric_is_a_percentage_on_a_scale_that_stays_put(explore):
    assert explorer.METRIC_BY_KEY[explore.metric.value].kind == "share"
    explore.language.value = explorer.ALL
    assert _colour_domains(explore.chart.chart) == [[0, 100]]
    explore.language.value = "German"
    assert _colour_domains(explore.chart.chart) == [[0, 100]]
    # "100", never "100%", in a cell: the value is a percentage and the cell text a plain number
    assert explorer.METRIC_BY_KEY[explore.metric.value].value_format == ".0f"
    # a mean keeps the scale of the whole database whatever the filters
    explore.metric.value = "answer_bytes"
    german = _colour_domains(explore.chart.chart)
    explore.language.value = explorer.ALL
    assert _colour_domains(explore.chart.chart) == german and german[0][1] > 1000
    explore.metric.value = "surface_ok_share"


def test_agnostic_and_specific_side_by_side_and_unreliable_languages_not_identified(explore):
    explore.language.value = explorer.ALL
    spec = explore.chart.chart.to_dict()
    # In the suite's order, with the line between the high- and the low-resource languages.
    assert spec["facet"]["field"] == "question_type" and spec["facet"]["sort"] == ["specific", "agnostic"]
    assert [layer["transform"][0] for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "rule"] == [
        {"filter": 'datum["language_label"] === "Afar"'}
    ]
    rows = next(iter(spec["datasets"].values()))
    kirundi = [r for r in rows if r["language"] == "Kirundi"]
    # No value in any Kirundi cell: not identified, or (as in the reports) provider errors only where no answer is left.
    assert kirundi and all(r["value"] is None for r in kirundi)
    assert {r["status"] for r in kirundi if r["model_name"] != "Gemini 1.5 Pro"} == {explorer.NOT_IDENTIFIED}
    assert {r["language_label"] for r in kirundi} == {"Kirundi †"}
    assert any(r["status"] == explorer.PROVIDER_ERRORS_ONLY for r in rows if r["model_name"] == "Gemini 1.5 Pro")
    german = [r for r in rows if r["language"] == "German"]
    assert all(r["status"] is None and r["value"] is not None for r in german)
    # the length of an answer does not need the language verdict: Kirundi has its values
    cells = explorer.metric_cells(explore.answers, explorer.METRIC_BY_KEY["answer_bytes"])
    assert cells.filter(cells["language"] == "Kirundi")["value"].null_count() == 0


def test_a_search_box_finds_questions_by_their_words(explore):
    explore.language.value = explorer.ALL
    assert len(explore.question.options) == explorer.QUESTIONS_LISTED + 1
    row = explore.answers.filter(pl.col("language") == "German").row(0, named=True)
    word = max(row["question_text_en"].split(), key=len).strip("?.,")
    explore.search.value = word.upper()
    ids = {q for _, q in explore.question.options[1:]}
    assert row["question_id"] in ids and len(ids) < 50
    assert all(
        word.lower() in (r["question_text_en"] or "").lower() + r["question_text"].lower()
        for r in explore.answers.filter(pl.col("question_id").is_in(ids)).iter_rows(named=True)
    )
    explore.search.value = "no question holds this zzqxj"
    assert explore.question.options == ((f"{explorer.ALL} (0 questions)", None),)
    explore.search.value = ""


def test_a_provider_error_and_an_empty_answer_say_so(explore):
    errors = explore.answers.filter(pl.col("provider_error"))
    coded = errors.filter(pl.col("text") != "").head(1)
    empty = errors.filter(pl.col("text") == "").head(1)
    assert coded.height == 1
    page = explorer.answers_html(coded, True)
    assert f"the API returned the code {coded['provider_error_code'][0]} instead of an answer" in page
    if empty.height:
        page = explorer.answers_html(empty, True)
        assert "the provider returned no text" in page and "(empty)" in page


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
    assert inert(question["question_text_en"], "html") in page
    # A heatmap click selects a model and a language, and the question falls away when it no longer matches.
    explore.select_cell("GPT-4o", "Hindi")
    assert explore.filters == explorer.Filters(language="Hindi", model="GPT-4o", question_type="specific")
    assert explore.question.value is None and set(explore.filtered["model_name"]) == {"GPT-4o"}
    explore.metric.value = "empty_share"
    assert explore.chart.chart.to_dict()["title"] == "% of empty answers"
    explore.metric.value = "surface_ok_share"


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
    assert (cells["value"].fill_null(0) / 100 * cells["n_answers"]).sum() == pytest.approx(n_repeating)
    explore.question.value = explore.question.options[1][1]
    assert "no surface issue: " in explore.answers_view.value
    # a database built without the surface stage offers only what it can compute, and says why
    copy = tmp_path / "without_surface.duckdb"
    copy.write_bytes(database.read_bytes())
    with duckdb.connect(str(copy)) as con:
        con.execute("DROP TABLE answer_surface")
    with store.connect(copy) as con:
        without = explorer.Explorer(con)
        assert [m.key for m in explorer.available_metrics(without.has_surface)] == ["empty_share", "answer_bytes"]
        assert without.metric.value == "empty_share"
        assert "no <code>answer_surface</code> table" in without.status.value


def test_explore_notebook_executes_and_says_what_it_needs_without_a_kernel(database, tmp_path):
    import nbformat
    from nbconvert import HTMLExporter

    executed = tmp_path / "executed.ipynb"
    papermill.execute_notebook(
        str(paths.NOTEBOOKS / "00_explore.ipynb"),
        str(executed),
        parameters={"db_path": str(database), "output_dir": str(tmp_path / "out")},
        kernel_name=paths.KERNEL_NAME,
        cwd=str(paths.NOTEBOOKS),
        progress_bar=False,
    )
    # Exported without the widgets' state (no live kernel), the page says what it needs instead of
    # showing an empty output; the live explorer hides that note.
    page, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
    assert "The explorer needs a running kernel." in page


def test_the_live_explorer_hides_the_note_for_a_notebook_without_kernel(explore):
    assert f".{explorer.KERNEL_NOTE_CLASS} {{ display: none; }}" in explore.widget.children[0].value
