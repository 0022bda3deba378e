"""The explorer's logic on the real database, its widgets driven programmatically, and its HTML escaping."""

import re

import duckdb
import papermill
import polars as pl
import pytest

from analysis import store
from analysis.analyses import answers as answers_query
from analysis.analyses import dimensions, surface
from analysis.core import paths
from analysis.core.text import inert
from analysis.ui import explorer, explorer_logic
from analysis.viz import answers as answer_views


@pytest.fixture(scope="module")
def explore(database):
    connection = store.connect(database)
    yield explorer.Explorer(connection, page_size=3)
    connection.close()


def test_answers_are_every_answer_with_question_and_rating(con):
    answers = answers_query.load_answers(con)
    assert answers.height == con.sql("SELECT count(*) FROM answers").fetchall()[0][0]
    rated = con.sql("SELECT count(DISTINCT answer_id) FROM ratings").fetchall()[0][0]
    assert answers["ratings"].drop_nulls().len() == rated
    german = answers.filter(pl.col("ratings").is_not_null()).row(0, named=True)["ratings"]
    assert all(criterion in german for criterion in ("rating", "factuality", "omissions", "language_correct"))
    assert set(answers.filter(pl.col("is_human"))["model_name"]) <= {
        answers_query.HUMAN,
        answers_query.HUMAN + " (dot points)",
    }


def test_metric_cells_equal_a_recomputation_in_sql(con):
    cells = explorer_logic.metric_cells(answers_query.load_answers(con), explorer_logic.METRIC_BY_KEY["answer_bytes"])
    expected = con.sql("""
        SELECT m.display_name AS model_name, q.language, q.question_type, avg(a.n_bytes) AS value, count(*) AS n_answers
        FROM answers a JOIN questions q USING (question_id) JOIN models m USING (model)
        GROUP BY ALL ORDER BY ALL""").pl()
    got = cells.select(expected.columns).sort("model_name", "language", "question_type")
    assert got.drop("value").equals(expected.drop("value"))
    assert got["value"].to_list() == pytest.approx(expected["value"].to_list())
    # a share is a percentage
    empty = explorer_logic.metric_cells(answers_query.load_answers(con), explorer_logic.METRIC_BY_KEY["empty_share"])
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
    assert explorer_logic.METRIC_BY_KEY[explore.metric.value].kind == "share"
    explore.language.value = explorer_logic.ALL
    assert _colour_domains(explore.chart) == [[0, 100]]
    explore.category.value = explore.category.options[1]
    assert _colour_domains(explore.chart) == [[0, 100]]
    # "100", never "100%", in a cell: the value is a percentage and the cell text a plain number
    assert explorer_logic.METRIC_BY_KEY[explore.metric.value].value_format == ".0f"
    # a mean keeps the scale of the whole database whatever the filters
    explore.metric.value = "answer_bytes"
    one_category = _colour_domains(explore.chart)
    explore.category.value = explorer_logic.ALL
    assert _colour_domains(explore.chart) == one_category and one_category[0][1] > 1000
    explore.metric.value = "pct_surface_ok"


def test_specific_and_agnostic_stacked_and_unreliable_languages_not_identified(explore):
    explore.language.value = explorer_logic.ALL
    spec = explore.chart.to_dict()
    # In the suite's order, with the line between the high- and the low-resource languages.
    assert spec["facet"]["field"] == "question_type" and spec["facet"]["sort"] == ["specific", "agnostic"]
    assert spec["config"]["facet"]["columns"] == 1
    assert [layer["transform"][0] for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "rule"] == [
        {"filter": 'datum["language_label"] === "Afar"'}
    ]
    rows = next(iter(spec["datasets"].values()))
    kirundi = [r for r in rows if r["language"] == "Kirundi"]
    # No value in any Kirundi cell: not identified, or (as in the reports) provider errors only where no answer is left.
    assert kirundi and all(r["value"] is None for r in kirundi)
    assert {r["status"] for r in kirundi if r["model_name"] != "Gemini 1.5 Pro"} == {surface.NOT_IDENTIFIED}
    assert {r["language_label"] for r in kirundi} == {"Kirundi †"}
    assert any(r["status"] == surface.PROVIDER_ERRORS_ONLY for r in rows if r["model_name"] == "Gemini 1.5 Pro")
    german = [r for r in rows if r["language"] == "German"]
    assert all(r["status"] is None and r["value"] is not None for r in german)
    # the length of an answer does not need the language verdict: Kirundi has its values
    cells = explorer_logic.metric_cells(explore.answers, explorer_logic.METRIC_BY_KEY["answer_bytes"])
    assert cells.filter(cells["language"] == "Kirundi")["value"].null_count() == 0


def test_a_search_box_finds_questions_by_their_words(explore):
    explore.language.value = explorer_logic.ALL
    assert len(explore.question.options) == explorer_logic.QUESTIONS_LISTED + 1
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
    assert explore.question.options == ((f"{explorer_logic.ALL} (0 questions)", None),)
    explore.search.value = ""


def test_a_provider_error_and_an_empty_answer_say_so(explore):
    errors = explore.answers.filter(pl.col("provider_error"))
    coded = errors.filter(pl.col("text") != "").head(1)
    empty = errors.filter(pl.col("text") == "").head(1)
    assert coded.height == 1
    page = answer_views.answers_html(coded, True)
    code = coded["provider_error_code"][0]
    assert f'title="the API returned the code {code} instead of an answer">provider error {code}</span>' in page
    assert "wrong language" not in page and "repetition" not in page  # a provider error is neither
    if empty.height:
        page = answer_views.answers_html(empty, True)
        assert 'title="the provider returned no text (a provider error)">empty</span>' in page and "(empty)" in page


def test_the_overview_stays_whole_and_outlines_the_chosen_cell(explore, con):
    explore.reset()
    whole = next(iter(explore.chart.to_dict()["datasets"].values()))
    explore.language.value = "German"
    explore.question_type.value = "specific"
    frame = explore.filtered
    n_expected = con.sql("""SELECT count(*) FROM answers JOIN questions USING (question_id)
                            WHERE questions.language = 'German' AND question_type = 'specific'""").fetchall()[0][0]
    assert frame.height == n_expected and set(frame["language"]) == {"German"}
    # The heatmap keeps every cell; the chosen ones are outlined (the chart's variable, set without redrawing).
    data = next(iter(explore.chart.to_dict()["datasets"].values()))
    assert data == whole and len({row["language"] for row in data}) > 1 and all("ci_low" in row for row in data)
    assert explore.overview.params.calmqa_chosen == {"language_label": "German", "question_type": "specific"}
    spec = explore.chart.to_dict()
    outline = [
        layer for layer in spec["spec"]["layer"] if layer["mark"].get("fill") is None and "stroke" in layer["mark"]
    ]
    assert len(outline) == 1 and "calmqa_chosen" in outline[0]["transform"][0]["filter"]
    # A question: its answers, side by side, with the English translation.
    label, question_id = explore.question.options[1]
    explore.question.value = question_id
    chosen = explore.filtered
    assert set(chosen["question_id"]) == {question_id}
    page = explore.answers_view.value
    question = chosen.row(0, named=True)
    assert len(re.findall(r'class="calmqa-answer[ "]', page)) == chosen.height
    assert inert(question["question_text_en"], "html") in page
    # A heatmap click chooses a model, a language and a question type; the question falls away when it
    # no longer matches.
    explore.select_cell("GPT-4o", "Hindi", "agnostic")
    assert explore.filters == explorer_logic.Filters(language="Hindi", model="GPT-4o", question_type="agnostic")
    assert explore.question.value is None and set(explore.filtered["model_name"]) == {"GPT-4o"}
    assert explore.overview.params.calmqa_chosen == {
        "model_name": "GPT-4o",
        "language_label": "Hindi",
        "question_type": "agnostic",
    }
    explore.metric.value = "empty_share"
    title = explore.chart.to_dict()["title"]
    assert (title["text"] if isinstance(title, dict) else title) == "% of empty answers"
    # a new chart keeps the chosen cell outlined, and its click is listened to again
    assert explore.overview.params.calmqa_chosen["model_name"] == "GPT-4o"
    assert explore.overview.selections._trait_notifiers["calmqa_pick"]["change"]
    explore.metric.value = "pct_surface_ok"


def test_a_click_on_a_redrawn_chart_still_chooses_a_cell(explore):
    """What the browser sends on a click (the selection's Vega signal, as Altair's JupyterChart script
    passes it on), after the chart was replaced: the observer is on the new chart's selections."""
    explore.reset()
    explore.metric.value = "pct_repetition"
    cell = {"model_name": "Llama 3 70B", "language_label": "Kirundi †", "question_type": "specific"}
    explore.overview._vl_selections = {"calmqa_pick": {"value": {"vlPoint": {"or": [cell]}}, "store": []}}
    assert explore.filters == explorer_logic.Filters(language="Kirundi", model="Llama 3 70B", question_type="specific")
    explore.metric.value = "pct_surface_ok"


def test_the_comparison_shows_every_model_the_chosen_first_with_badges(explore):
    explore.reset()
    explore.select_cell("Llama 3 70B", "Hindi", "agnostic")
    page = explore.answers_view.value
    questions = page.split('class="calmqa-question"')[1:]
    assert len(questions) == explore.page_size
    for question in questions:
        cards = re.split(r'class="calmqa-answer(?=[ "])', question)[1:]
        assert cards[0].startswith(' calmqa-chosen"') and "Llama 3 70B · <em>chosen model</em>" in cards[0]
        assert sum(c.startswith(' calmqa-chosen"') for c in cards) == 1
        # every model's answer, then the human references
        models = [re.search(r'calmqa-label">([^<·]+)', c).group(1).strip() for c in cards]
        assert set(explore.model_order) <= set(models) and models[0] == "Llama 3 70B"
    rows = explore.answers.filter(
        (pl.col("language") == "Hindi")
        & (pl.col("question_type") == "agnostic")
        & (pl.col("model_name") == "Llama 3 70B")
    )
    n_wrong = rows.filter(pl.col("language_correct").not_()).height
    assert n_wrong and page.count("wrong language") >= 1
    # The sentence above it: the chosen cell and its failures.
    assert (
        f"{rows.height} questions, {rows.filter(pl.col('surface_ok').not_()).height} of them" in explore.cell_view.value
    )


def test_only_the_failures_and_paging_through_every_question(explore):
    explore.reset()
    explore.select_cell("Llama 3 70B", "Hindi", "agnostic")
    explore.metric.value = "pct_correct_language"
    rows = explore.answers.filter(
        (pl.col("language") == "Hindi")
        & (pl.col("question_type") == "agnostic")
        & (pl.col("model_name") == "Llama 3 70B")
    )
    wrong = set(rows.filter(pl.col("language_correct").not_())["question_id"])
    explore.only_failures.value = True
    assert explore.only_failures.description == "Only where the answer is in the wrong language"
    seen = []
    for number in range(len(wrong)):
        page = explore.answers_view.value
        assert f"(page {number + 1} of {-(-len(wrong) // explore.page_size)})" in page
        seen += [int(n) for n in re.findall(r"non_cultural:(\d+)</div>", page)]
        chosen_cards = [
            c for c in re.split(r'class="calmqa-answer(?=[ "])', page)[1:] if c.startswith(' calmqa-chosen"')
        ]
        assert chosen_cards and all("wrong language" in c for c in chosen_cards)
        if explore.next_page.disabled:
            break
        explore.turn_page(1)
    names = set(explore.answers.filter(pl.col("question_id").is_in(sorted(wrong)))["question_name"])
    assert {f"non_cultural:{n}" for n in seen} == names and len(seen) == len(names)
    assert explore.next_page.disabled and not explore.previous_page.disabled
    explore.only_failures.value = False
    assert explore.page == 0
    # Reset returns to the whole overview
    explore.reset()
    assert explore.filters == explorer_logic.Filters() and explore.overview.params.calmqa_chosen == {}
    assert not explore.only_failures.value and explore.metric.value == "pct_correct_language"
    explore.metric.value = "pct_surface_ok"


def test_answers_html_escapes_text_from_the_data(explore):
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    frame = explore.answers.head(2).with_columns(text=pl.lit(payload), question_text=pl.lit(payload))
    page = answer_views.answers_html(frame, True)
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # a model's name from the data is text too, and the chosen one is marked all the same
    named = frame.with_columns(model_name=pl.lit(payload))
    page = answer_views.answers_html(named, True, chosen_model=payload)
    assert "<script>alert" not in page and "calmqa-chosen" in page
    # every text block takes its direction from its text: Arabic, Hebrew and Pashto run right to left
    assert page.count('dir="auto"') == len(re.findall(r'class="calmqa-(?:question-)?text[" ]', page))


def test_answers_are_rendered_as_sanitised_markdown():
    """An answer's Markdown is rendered (emphasis, lists) and then cleaned: raw HTML stays text, and a link
    keeps only a safe scheme."""
    page = answer_views.markdown_html(
        "**Bold** and a list:\n\n- one\n- two\n\n<script>alert(1)</script> [x](javascript:alert(2)) [y](https://a.org)"
    )
    assert "<strong>Bold</strong>" in page and "<li>one</li>" in page
    assert "<script" not in page and 'href="javascript' not in page and "&lt;script&gt;" in page
    assert 'href="https://a.org"' in page and 'rel="noopener noreferrer"' in page


def test_surface_metrics_appear_only_with_the_surface_table(database, tmp_path, explore):
    with store.connect(database) as con:
        n_scales = con.sql(
            "SELECT (SELECT count(*) FROM metrics) + (SELECT count(DISTINCT criterion) FROM criterion_levels)"
        ).fetchall()[0][0]
    # the suite's own metrics, then one per metric and rating criterion of the study
    assert len(explore.metric.options) == len(explorer_logic.METRICS) + n_scales
    explore.metric.value = "pct_repetition"
    cells = explorer_logic.metric_cells(explore.answers, explorer_logic.METRIC_BY_KEY["pct_repetition"])
    with store.connect(database) as con:
        n_repeating = con.sql("SELECT count(*) FROM answer_surface WHERE repetition").fetchall()[0][0]
    assert (cells["value"].fill_null(0) / 100 * cells["n_answers"]).sum() == pytest.approx(n_repeating)
    explore.question.value = explore.question.options[1][1]
    assert (
        ">no surface issue</span>" in explore.answers_view.value
        or ">wrong language</span>" in explore.answers_view.value
    )
    # a database built without the surface stage offers only what it can compute, and says why
    copy = tmp_path / "without_surface.duckdb"
    copy.write_bytes(database.read_bytes())
    with duckdb.connect(str(copy)) as con:
        con.execute("DROP TABLE answer_surface")
    with store.connect(copy) as con:
        without = explorer.Explorer(con)
        assert [m.key for m in explorer_logic.available_metrics(without.has_surface)] == ["empty_share", "answer_bytes"]
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


def test_the_explorer_and_report_03_give_the_same_tiers(con):
    # the explorer's cells of a surface metric carry the tiers that report 03's cells carry (both paired
    # on the same answers), and its chart marks the top tier
    answers = answers_query.load_answers(con)
    metric = explorer_logic.METRIC_BY_KEY["pct_surface_ok"]
    cells = explorer_logic.metric_cells(answers, metric)
    rates, orders = surface.rates_by_model_language(con), dimensions.Orders.of(con)
    report = surface.metric_cells(rates, "pct_surface_ok", orders, surface.answer_verdicts(con))
    mine = cells.filter(pl.col("tier").is_not_null()).select(
        pl.col("model_name").alias("model"), "language", "question_type", "tier"
    )
    theirs = report.filter(pl.col("tier").is_not_null()).select("model", "language", "question_type", "tier")
    assert mine.height > 0
    assert mine.sort(pl.all()).equals(theirs.sort(pl.all()))
    spec = explorer_logic.explorer_chart(cells, metric, (0, 100), orders).to_dict()
    assert "datum.tier === 1" in str(spec)


def test_the_provider_error_heatmap_gets_tiers_from_mcnemar_against_the_model_of_fewest_errors(con):
    # report 03's heatmap of provider errors: in each language and question type the model with the fewest
    # errors is the best (among all models, drawn or not), and each drawn cell's p_vs_best is statsmodels'
    # exact McNemar test of the two models' errors on the questions both answered
    from statsmodels.stats.contingency_tables import mcnemar

    cells = surface.provider_error_cells(con)
    separated = cells.filter(pl.col("tier") > 1)
    assert separated.height > 0
    row = separated.row(0, named=True)
    errors = con.sql(
        "SELECT display_name AS model, question_id, provider_error FROM surface_answers "
        "WHERE language = $language AND question_type = $question_type",
        params={"language": row["language"], "question_type": row["question_type"]},
    ).pl()
    shares = errors.group_by("model").agg(pl.col("provider_error").mean()).sort("provider_error", "model")
    best = shares["model"][0]
    paired = errors.filter(pl.col("model") == best).join(
        errors.filter(pl.col("model") == row["model"]), on="question_id", suffix="_other"
    )
    a, b = paired["provider_error"].to_numpy(), paired["provider_error_other"].to_numpy()
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    assert row["p_vs_best"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-3)
    assert row["p_adjusted"] < 0.05
