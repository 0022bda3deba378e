"""One vocabulary and honest encodings (issue 16): models by display name in the study's order (CaLMQA:
the paper's), question types culturally specific first, languages by resource level with a line between
the groups, colour scales that say which end is good and percentages on 0-100, and the caveats beside
the score heatmaps; the orders read from the database (issue 24)."""

import polars as pl
import pytest
from orders import CALMQA_ORDERS, PAPER_MODELS, calmqa_orders

from analysis.analyses import dimensions, scores
from analysis.io.calmqa import MODELS
from analysis.viz import surface_charts, theme


def test_in_order_sorts_by_the_vocabulary_and_puts_unknown_values_last():
    table = pl.DataFrame(
        {
            "model": ["My model", "Aya 13B", "GPT-4 Turbo", "Aya 13B", "Another model"],
            "question_type": ["agnostic", "agnostic", "specific", "specific", "agnostic"],
            "resource_level": ["low", "low", "high", "high", "high"],
        }
    )
    ordered = dimensions.in_order(table, ["model", "question_type"], orders=CALMQA_ORDERS)
    position = {m.display_name: i for i, m in enumerate(MODELS)}
    paper = [m for m in ordered["model"] if m in position]
    assert paper == sorted(paper, key=position.get)
    assert ordered["model"].to_list()[-2:] == ["Another model", "My model"]
    aya = ordered.filter(pl.col("model") == "Aya 13B")["question_type"].to_list()
    assert aya == ["specific", "agnostic"]
    # By default: whichever vocabulary columns the table has, in the order model, resource level, ...
    assert dimensions.in_order(table, orders=CALMQA_ORDERS).equals(
        dimensions.in_order(table, ["model", "resource_level", "question_type"], orders=CALMQA_ORDERS)
    )


def test_orders_group_languages_by_resource_level_with_the_first_low_resource_language(con):
    orders = dimensions.Orders.of(con)
    levels = dict(con.sql("SELECT language, resource_level FROM languages").fetchall())
    [divider] = orders.dividers(by_label=False)
    first_low = orders.languages.index(divider)
    assert {levels[language] for language in orders.languages[:first_low]} == {"high"}
    assert {levels[language] for language in orders.languages[first_low:]} == {"low"}
    assert orders.models == PAPER_MODELS
    assert orders.dividers() == [orders.label(divider)]
    assert orders.question_types == ("specific", "agnostic") and orders.resource_levels == ("high", "low")
    assert orders.level_axis_title() == "high-resource languages, then (after the line) low-resource languages"
    # Leaving out the first low-resource language moves the line to the next one.
    without = orders.without(orders.languages[first_low])
    assert without.dividers(by_label=False) == [orders.languages[first_low + 1]]


def _layers(spec: dict) -> list[dict]:
    inner = spec.get("spec", spec)
    return inner["layer"]


def _surface_cells(metric: str) -> tuple[pl.DataFrame, dimensions.Orders]:
    languages = ["German", "Hindi", "Fijian", "Wolof"]
    rows = [
        {
            "model": m,
            "language": language,
            "language_label": language,
            "question_type": qt,
            metric: 40.0,
            "status": None,
        }
        for m in PAPER_MODELS[:2]
        for language in languages
        for qt in ("agnostic", "specific")
    ]
    return pl.DataFrame(rows, schema_overrides={"status": pl.String}), calmqa_orders(
        PAPER_MODELS[:2], languages, languages, "Fijian"
    )


@pytest.mark.parametrize(
    "metric, better, scheme",
    [
        ("pct_correct_language", "higher is better", theme.SCHEMES["higher"]),
        ("pct_repetition", "lower is better", theme.SCHEMES["lower"]),
    ],
)
def test_surface_heatmaps_say_which_end_is_good_on_a_0_to_100_scale_with_the_divider(metric, better, scheme):
    cells, orders = _surface_cells(metric)
    spec = surface_charts.surface_heatmap(cells, metric, orders).to_dict()
    colour = _layers(spec)[0]["encoding"]["color"]
    assert better in colour["title"]
    assert colour["scale"]["scheme"] == scheme and colour["scale"]["domain"] == [0, 100]
    # The facets in the paper's order, and a rule before the first low-resource language.
    assert spec["facet"]["sort"] == ["specific", "agnostic"]
    rules = [layer for layer in _layers(spec) if layer["mark"]["type"] == "rule"]
    assert len(rules) == 1 and rules[0]["transform"][0] == {"filter": 'datum["language_label"] === "Fijian"'}
    assert rules[0]["encoding"]["x"]["bandPosition"] == 0


def test_repetition_and_correct_language_look_different():
    assert theme.SCHEMES["higher"] != theme.SCHEMES["lower"]
    from analysis.analyses import surface

    assert (
        surface.METRICS["pct_correct_language"].better == "higher"
        and surface.METRICS["pct_repetition"].better == "lower"
    )


def test_score_caveats_are_computed_from_the_answers():
    answers = pl.DataFrame(
        {
            "model": ["A", "A", "A", "B", "B", "C"],
            "language": ["German"] * 6,
            "unreliable": [False] * 6,
            "surface_ok": [True, True, False, True, True, True],
            "n_bytes": [100, 300, 5, 900, 1100, 2000],
        }
    )
    surface_only, short = scores.heatmap_caveats(answers, ["s_surf"], paper="calmqa")
    assert "Surface component only" in surface_only and "the database has no imported metrics" in surface_only
    assert "A's median answer without surface issues is 200 bytes, the other models' 1,100 bytes" in short
    assert len(scores.heatmap_caveats(answers, ["s_surf", "s_fact", "s_rel", "s"], paper="calmqa")) == 1
    # a study of your own has no S to wait for
    assert scores.heatmap_caveats(answers, ["s_surf"], paper=None) == [short]
    # After a partial import each heatmap says what it is: the surface one what the database lacks, the
    # S_fact one nothing about the surface component.
    partial = scores.heatmap_caveats(answers, ["s_surf", "s_fact"], paper="calmqa")[0]
    assert "imported factuality but no relevance" in partial
    assert scores.heatmap_caveats(answers, ["s_surf", "s_fact"], value="s_fact", paper="calmqa") == []


def test_score_caveat_on_the_release_names_the_model_with_the_shortest_clean_answers(con):
    answers = scores.answer_scores(con)
    caveat = scores.heatmap_caveats(answers, scores.available_scores(answers))[-1]
    model, median = con.sql("""
        SELECT m.display_name, median(a.n_bytes) FROM answer_surface s JOIN answers a USING (answer_id)
        JOIN models m ON m.model = a.model JOIN questions q USING (question_id)
        WHERE s.surface_ok AND q.language NOT IN ('Balochi', 'Hiligaynon', 'Kirundi', 'Papiamento')
        GROUP BY 1 ORDER BY 2 LIMIT 1""").fetchall()[0]
    assert f"{model}'s median answer without surface issues is {median:,.0f} bytes" in caveat
