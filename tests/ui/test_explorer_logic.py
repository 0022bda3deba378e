"""The explorer's logic (`analysis/ui/explorer_logic.py`) on small frames written by hand, without any
widget: the controls' choices, the filters and the answers they choose, the cells of a metric, the
questions paged through and listed, the pages and the sentences. Every expected value is worked out by
hand from the frame of its test."""

import polars as pl
import pytest

from analysis.analyses import dimensions, surface
from analysis.analyses.answers import Scale
from analysis.schema import SURFACE_METRICS
from analysis.ui import explorer_logic as logic

pytestmark = pytest.mark.fast

ORDERS = dimensions.Orders(
    models=["Alpha", "Beta"],
    languages=["German", "Kirundi"],
    labels=["German", "Kirundi †"],
    question_types=("specific", "agnostic"),
    question_type_labels={"specific": "culturally specific", "agnostic": "culturally agnostic"},
)
EMPTY = logic.METRIC_BY_KEY["empty_share"]
LENGTH = logic.METRIC_BY_KEY["answer_bytes"]
SURFACE_OK = logic.METRIC_BY_KEY["pct_surface_ok"]


def _answers(*rows: dict) -> pl.DataFrame:
    """Answers with the explorer's columns: each row's own values over these defaults."""
    defaults = {
        "question_id": 1,
        "question_name": "q1",
        "question_text": "Was ist Brot?",
        "question_text_en": "What is bread?",
        "model_name": "Alpha",
        "language": "German",
        "question_type": "specific",
        "category": "food",
        "collection": "human",
        "is_human": False,
        "unreliable": False,
        "provider_error": False,
        "is_empty": False,
        "surface_ok": True,
        "n_bytes": 100,
    }
    return pl.DataFrame(
        [defaults | row for row in rows],
        schema_overrides={"question_text_en": pl.String, "surface_ok": pl.Boolean, "n_bytes": pl.Int64},
    )


# ------------------------------------------------------------------------------------------ the metrics


def test_a_surface_metric_is_the_reports_share_titled_with_its_denominator():
    record = next(m for m in SURFACE_METRICS if m.key == "pct_repetition")
    metric = logic.surface_metric(record)
    assert metric.title == "% with repetitions (of the answers the provider gave)"
    assert (metric.column, metric.kind, metric.value_format) == ("repetition", "share", ".0f")
    assert (metric.better, metric.fails_when, metric.failure) == ("lower", True, "repeats itself")
    assert metric.needs_surface and not metric.needs_language


def test_a_study_metric_is_a_mean_with_decimals_by_its_range():
    narrow = logic.scale_metric(Scale("metric:bleu", "BLEU", "metric", "study_metric_0", "higher", (0.0, 1.0)))
    assert narrow.title == "BLEU (mean; higher is better)" and narrow.kind == "mean"
    assert narrow.value_format == ".2f" and narrow.domain == (0.0, 1.0) and narrow.column == "study_metric_0"
    wide = logic.scale_metric(Scale("metric:score", "score", "metric", "study_metric_1", "lower", (0.0, 100.0)))
    assert wide.value_format == ".1f" and wide.better == "lower"
    unbounded = logic.scale_metric(Scale("metric:n", "n", "metric", "study_metric_2", "higher", None))
    assert unbounded.value_format == ".2f" and unbounded.domain is None


def test_a_rating_criterion_is_the_mean_position_of_its_levels():
    numbered = logic.scale_metric(
        Scale("rating:fluency", "fluency", "rating", "rating_0", "higher", (1, 3), ("1", "2", "3"))
    )
    assert numbered.title == "human rating: fluency (mean level, 1 to 3)"
    named = logic.scale_metric(Scale("rating:fact", "fact", "rating", "rating_1", "higher", (1, 2), ("wrong", "right")))
    assert named.title == "human rating: fact (mean level, 1 wrong, 2 right)"
    assert named.levels == ("wrong", "right") and named.value_format == ".2f" and named.fails_when is None


def test_the_metrics_offered_and_the_one_the_overview_opens_with():
    without_surface = logic.available_metrics(False)
    assert [m.key for m in without_surface] == ["empty_share", "answer_bytes"]
    assert logic.opening_metric(without_surface) == "empty_share"
    study = Scale("metric:bleu", "BLEU", "metric", "study_metric_0", "higher", (0.0, 1.0))
    every = logic.available_metrics(True, [study])
    assert [m.key for m in every] == [
        "pct_correct_language",
        "pct_repetition",
        "pct_surface_ok",
        "empty_share",
        "answer_bytes",
        "metric:bleu",
    ]
    assert logic.opening_metric(every) == "pct_surface_ok"


def test_the_switch_of_failures_says_what_fails_and_is_off_for_a_mean():
    assert logic.failure_switch(EMPTY) == ("Only where the answer is empty", False)
    assert logic.failure_switch(SURFACE_OK) == ("Only where the answer has a surface issue", False)
    assert logic.failure_switch(LENGTH) == ("Only the failures", True)


# ------------------------------------------------------------------------------- the controls and filters


def test_a_controls_choices_follow_the_order_then_the_rest_sorted():
    answers = _answers(
        {"language": "Swahili"}, {"language": "Afar"}, {"language": None}, {"language": "German"}, {"language": "Afar"}
    )
    assert logic.control_options(answers, "language", ["German", "Hindi", "Swahili"]) == [
        "(all)",
        "German",
        "Swahili",
        "Afar",
    ]
    assert logic.control_options(answers, "language") == ["(all)", "Afar", "German", "Swahili"]


def test_the_controls_values_are_the_filters_all_meaning_every_value():
    values = {"language": "(all)", "model": "Beta", "question_type": "(all)", "category": "food", "collection": "(all)"}
    assert logic.chosen_filters(values) == logic.Filters(model="Beta", category="food")
    assert logic.chosen_filters(dict.fromkeys(values, "(all)")) == logic.Filters()


def test_filters_choose_answers_and_the_overview_keeps_only_those_not_choosing_its_cell():
    answers = _answers(
        {"question_id": 1, "model_name": "Alpha", "language": "German"},
        {"question_id": 1, "model_name": "Beta", "language": "German"},
        {"question_id": 2, "model_name": "Alpha", "language": "Kirundi"},
        {"question_id": 3, "model_name": "Alpha", "language": "German", "category": "music"},
    )
    chosen = logic.apply_filters(answers, logic.Filters(language="German", model="Alpha"))
    assert chosen["question_id"].to_list() == [1, 3]
    assert logic.apply_filters(answers, logic.Filters()).height == 4
    every = logic.Filters("German", "Alpha", "specific", "food", "human")
    assert logic.overview_filters(every) == logic.Filters(category="food", collection="human")
    # What the explorer saves: the filters' answers, and the chosen question's only when there is one.
    assert logic.chosen_answers(answers, logic.Filters(model="Alpha"), 3)["question_id"].to_list() == [3]
    assert logic.chosen_answers(answers, logic.Filters(model="Alpha"), None)["question_id"].to_list() == [1, 2, 3]


def test_the_comparison_holds_every_models_answers_to_the_chosen_or_searched_questions():
    answers = _answers(
        {"question_id": 1, "model_name": "Alpha", "question_text": "Was ist Brot?"},
        {"question_id": 1, "model_name": "Beta", "question_text": "Was ist Brot?"},
        {"question_id": 2, "model_name": "Alpha", "question_text": "Wer war Goethe?", "question_text_en": None},
        {"question_id": 3, "model_name": "Beta", "language": "Kirundi", "question_text": "Brot?"},
    )
    chosen = logic.Filters(language="German", model="Alpha")
    # The model filter does not narrow the comparison: Beta's answer to question 1 is compared too.
    assert logic.compared_answers(answers, chosen, 1, "")["model_name"].to_list() == ["Alpha", "Beta"]
    assert logic.compared_answers(answers, chosen, None, "")["question_id"].to_list() == [1, 1, 2]
    assert logic.compared_answers(answers, chosen, None, "goethe")["question_id"].to_list() == [2]


def test_a_search_needs_every_word_in_the_question_its_translation_or_its_name():
    answers = _answers(
        {
            "question_id": 1,
            "question_name": "food:1",
            "question_text": "Was ist Brot?",
            "question_text_en": "What is bread?",
        },
        {"question_id": 2, "question_name": "people:2", "question_text": "Wer war Goethe?", "question_text_en": None},
        {
            "question_id": 3,
            "question_name": "food:3",
            "question_text": "Brot oder Reis?",
            "question_text_en": "Bread or rice?",
        },
    )
    assert logic.question_matches(answers, "BREAD")["question_id"].to_list() == [1, 3]
    assert logic.question_matches(answers, "bread what")["question_id"].to_list() == [1]
    assert logic.question_matches(answers, "people:")["question_id"].to_list() == [2]
    assert logic.question_matches(answers, "  ")["question_id"].to_list() == [1, 2, 3]
    assert logic.question_matches(answers, "brot goethe").is_empty()


# ------------------------------------------------------------------------------ the cells of the heatmap


def test_a_shares_cells_count_the_models_answers_with_a_value():
    answers = _answers(
        # Alpha in German: one empty answer in four; a human reference is not a model.
        *({"model_name": "Alpha", "is_empty": empty} for empty in (True, False, False, False)),
        {"model_name": "Human", "is_human": True, "is_empty": True},
        # Alpha in Kirundi, a language without a language verdict: two empty answers in two.
        *({"model_name": "Alpha", "language": "Kirundi", "unreliable": True, "is_empty": True} for _ in range(2)),
        # Beta in German: provider errors only.
        *({"model_name": "Beta", "provider_error": True, "surface_ok": None} for _ in range(2)),
    )
    cells = {(c["model_name"], c["language"]): c for c in logic.metric_cells(answers, EMPTY).iter_rows(named=True)}
    assert set(cells) == {("Alpha", "German"), ("Alpha", "Kirundi"), ("Beta", "German")}
    german = cells[("Alpha", "German")]
    assert (german["value"], german["n_answers"], german["status"]) == (25.0, 4, None)
    # Wilson's 95% interval of 1 in 4: 4.56% to 69.94%.
    assert german["ci_low"] == pytest.approx(4.56, abs=0.01) and german["ci_high"] == pytest.approx(69.94, abs=0.01)
    # The share of empty answers needs no language verdict, nor surface verdicts.
    assert (cells[("Alpha", "Kirundi")]["value"], cells[("Alpha", "Kirundi")]["n_answers"]) == (100.0, 2)
    assert (cells[("Beta", "German")]["value"], cells[("Beta", "German")]["n_answers"]) == (0.0, 2)
    # A surface metric: the language without a verdict is not identified; provider errors only say so.
    ok = {(c["model_name"], c["language"]): c for c in logic.metric_cells(answers, SURFACE_OK).iter_rows(named=True)}
    assert (ok[("Alpha", "German")]["value"], ok[("Alpha", "German")]["n_answers"]) == (100.0, 4)
    assert ok[("Alpha", "Kirundi")]["status"] == surface.NOT_IDENTIFIED and ok[("Alpha", "Kirundi")]["value"] is None
    assert ok[("Beta", "German")]["status"] == surface.PROVIDER_ERRORS_ONLY and ok[("Beta", "German")]["n_answers"] == 0


def test_a_means_cells_have_a_normal_interval_and_a_scale_from_every_answer():
    answers = _answers(*({"n_bytes": n} for n in (100, 200, 300)), {"model_name": "Beta", "n_bytes": 50})
    cells = logic.metric_cells(answers, LENGTH).sort("model_name")
    alpha, beta = cells.iter_rows(named=True)
    # 200 +- 1.96 x 100 / sqrt(3) = 200 +- 113.16; a cell of one answer has no interval.
    assert (alpha["value"], alpha["n_answers"]) == (200.0, 3)
    assert alpha["ci_low"] == pytest.approx(86.84, abs=0.01) and alpha["ci_high"] == pytest.approx(313.16, abs=0.01)
    assert (beta["value"], beta["ci_low"], beta["ci_high"]) == (50.0, None, None)
    assert logic.metric_domain(answers, LENGTH) == (0.0, 200.0)
    assert logic.metric_domain(answers, EMPTY) == (0, 100)
    declared = logic.scale_metric(Scale("metric:m", "m", "metric", "n_bytes", "higher", (0.0, 1.0)))
    assert logic.metric_domain(answers, declared) == (0.0, 1.0)


# ------------------------------------------------------------------------------ choosing and picking a cell


def test_a_cell_is_chosen_by_its_label_and_a_click_gives_back_the_language():
    assert logic.language_label("Kirundi", ORDERS) == "Kirundi †"
    assert logic.language_label("Hausa", ORDERS) == "Hausa"  # not among the study's languages
    assert logic.chosen_cell(logic.Filters(language="Kirundi", model="Beta"), ORDERS) == {
        "model_name": "Beta",
        "language_label": "Kirundi †",
    }
    assert logic.chosen_cell(logic.Filters(category="food"), ORDERS) == {}
    click = [{"model_name": "Beta", "language_label": "Kirundi †", "question_type": "agnostic"}]
    assert logic.picked_cell(click, ORDERS) == {"model": "Beta", "language": "Kirundi", "question_type": "agnostic"}
    assert logic.picked_cell([], ORDERS) is None
    assert logic.picked_cell([{"model_name": "Beta"}], ORDERS) is None


# ------------------------------------------------------------------------- the questions and their pages


def test_only_the_failures_keeps_the_questions_where_the_chosen_models_answer_fails():
    answers = _answers(
        {"question_id": 3, "model_name": "Alpha", "is_empty": False},
        {"question_id": 3, "model_name": "Beta", "is_empty": True},
        {"question_id": 1, "model_name": "Alpha", "is_empty": True},
        {"question_id": 2, "model_name": "Alpha", "is_empty": False},
        {"question_id": 2, "model_name": "Human", "is_human": True, "is_empty": True},
    )
    assert logic.question_ids(answers, EMPTY, False, "Alpha") == [3, 1, 2]
    assert logic.question_ids(answers, EMPTY, True, "Alpha") == [1]
    assert logic.question_ids(answers, EMPTY, True, None) == [3, 1]  # any model's; a human reference is none
    # A metric no answer fails keeps every question.
    assert logic.question_ids(answers, LENGTH, True, "Alpha") == [3, 1, 2]


def test_the_questions_of_a_mean_come_worst_first_for_the_chosen_model():
    answers = _answers(
        {"question_id": 1, "n_bytes": 300},
        {"question_id": 2, "n_bytes": 100},
        {"question_id": 3, "model_name": "Beta", "n_bytes": 5},  # no answer of Alpha: last
        {"question_id": 4, "n_bytes": 100},  # a tie with question 2: in their order
        {"question_id": 5, "n_bytes": 200},
    )
    longer_is_better = logic.scale_metric(Scale("metric:len", "len", "metric", "n_bytes", "higher", None))
    shorter_is_better = logic.scale_metric(Scale("metric:len", "len", "metric", "n_bytes", "lower", None))
    assert logic.question_ids(answers, longer_is_better, False, "Alpha") == [2, 4, 5, 1, 3]
    assert logic.question_ids(answers, shorter_is_better, False, "Alpha") == [1, 5, 2, 4, 3]
    # Without a chosen model, or without a better end, the frame's order.
    assert logic.question_ids(answers, longer_is_better, False, None) == [1, 2, 3, 4, 5]
    assert logic.question_ids(answers, LENGTH, False, "Alpha") == [1, 2, 3, 4, 5]


def test_the_question_list_counts_the_questions_and_lists_the_first_ones():
    answers = _answers(
        {"question_id": 7, "question_text": "Was   ist\nBrot?"},
        {"question_id": 7, "model_name": "Beta"},
        {"question_id": 9, "language": "Kirundi", "question_type": "agnostic", "question_text": "x" * 100},
    )
    listed, chosen = logic.question_choices(answers, 9)
    assert listed == [
        ("(all) (2 questions)", None),
        ("German · specific · Was ist Brot?", 7),
        ("Kirundi · agnostic · " + "x" * 89 + "…", 9),
    ]
    assert chosen == 9
    assert logic.question_choices(answers, 8)[1] is None  # a question no longer among them is let go
    many = _answers(*({"question_id": i} for i in range(1, 53)))
    listed, chosen = logic.question_choices(many, 52)
    assert listed[0] == ("(all) (52 questions, the first 50 listed: search to narrow)", None)
    assert [q for _, q in listed[1:]] == list(range(1, 51)) and chosen is None  # 52 is not listed


def test_pages_hold_the_questions_and_turning_stays_within_them():
    assert [logic.page_count(n, 5) for n in (0, 1, 5, 6, 11)] == [1, 1, 1, 2, 3]
    assert logic.turned_page(0, -1, 3) == 0
    assert logic.turned_page(0, 1, 3) == 1
    assert logic.turned_page(2, 1, 3) == 2
    assert logic.turned_page(2, -1, 3) == 1
    assert logic.turned_page(0, 1, 1) == 0


# ------------------------------------------------------------------------------------------ the sentences


def test_the_status_says_what_matches_and_what_is_missing():
    matching = _answers(
        {"question_id": 1}, {"question_id": 1, "model_name": "Beta"}, {"question_id": 2}, *({"question_id": 3},) * 1200
    )
    found = matching.filter(pl.col("question_id") == 2)
    assert logic.match_sentence(matching, found, "", True) == (
        "<p>1,203 answers to 3 questions match. Click a cell of the heatmap to compare its answers.</p>"
    )
    assert logic.match_sentence(matching, found, "goethe", False) == (
        "<p>1,203 answers to 3 questions match (1 with every word of the search). Click a cell of the heatmap to "
        "compare its answers. The database has no <code>answer_surface</code> table, so surface verdicts are not "
        "shown: build it with the surface-quality step of <code>make db</code>.</p>"
    )


def test_the_cell_sentence_says_what_is_chosen_and_what_fails():
    answers = _answers({"model_name": "<b>Alpha</b>", "is_empty": True}, {"model_name": "Beta"})
    sentence = logic.cell_sentence(answers, logic.Filters(model="<b>Alpha</b>"), EMPTY, 3, 1, ORDERS)
    assert sentence == (
        "<p>Chosen: <strong>&lt;b&gt;Alpha&lt;/b&gt;</strong>, every language, every question type. 3 questions, "
        "1 of them where &lt;b&gt;Alpha&lt;/b&gt;'s answer is empty.</p>"
    )
    assert logic.cell_sentence(answers, logic.Filters(), LENGTH, 1200, 0, ORDERS) == (
        "<p>Chosen: every model, every language, every question type. 1,200 questions.</p>"
    )


def test_the_cell_sentence_of_a_whole_cell_gives_its_value_and_its_link():
    answers = _answers(*({"question_id": i, "n_bytes": n} for i, n in ((1, 1000), (2, 3000))))
    chosen = logic.Filters(language="German", model="Alpha", question_type="specific")
    assert logic.cell_sentence(answers, chosen, LENGTH, 2, 0, ORDERS) == (
        "<p>Chosen: <strong>Alpha</strong>, German, culturally specific questions. 2 questions; the cell: 2,000 "
        "bytes over 2 answers. To share it: <code>03_surface_quality.html#answers:model=Alpha&amp;language=German&amp;"
        "type=specific</code> in the reports folder (<code>make figures</code>) opens this cell's answers.</p>"
    )


def test_a_criterions_levels_are_counted_worst_first():
    level = pl.Struct({"criterion": pl.String, "position": pl.Int64})
    answers = pl.DataFrame(
        {
            "model_name": ["Alpha", "Alpha", "Alpha", "Beta"],
            "rating_levels": [
                [{"criterion": "clarity", "position": 1}, {"criterion": "other", "position": 2}],
                [{"criterion": "clarity", "position": 3}, {"criterion": "clarity", "position": 3}],
                None,
                [{"criterion": "clarity", "position": 2}],
            ],
        },
        schema_overrides={"rating_levels": pl.List(level)},
    )
    metric = logic.scale_metric(
        Scale("rating:clarity", "clarity", "rating", "rating_0", "higher", (1, 3), ("bad", "<ok>", "good"))
    )
    assert logic.level_counts(answers, logic.Filters(model="Alpha"), metric) == "bad: 1, &lt;ok&gt;: 0, good: 2"


def test_the_summary_counts_answers_models_questions_and_ratings():
    answers = _answers(
        {"question_id": 1, "model_name": "Alpha"},
        {"question_id": 1, "model_name": "Beta"},
        {"question_id": 2, "model_name": "Alpha", "language": "Kirundi"},
        {"question_id": 2, "model_name": "Human", "is_human": True, "language": "Kirundi"},
    ).with_columns(ratings=pl.Series([None, "rated", None, "rated"], dtype=pl.String))
    assert logic.summary(answers, True) == (
        "The explorer holds **4 answers** (3 from 2 models, 1 human references) to 2 questions in 2 languages, "
        "2 of them rated by people. Surface verdicts come from the `answer_surface` table."
    )
    assert logic.summary(answers, False).endswith(
        "The database has no `answer_surface` table yet, so the surface metrics and verdicts are absent."
    )


def test_a_selection_for_csv_says_metric_values_as_text_and_keeps_no_list():
    answers = pl.DataFrame(
        {
            "answer_id": [1, 2],
            "ratings": ["overall 4, fluency good", None],
            "rating_levels": [[{"criterion": "overall", "position": 4}, {"criterion": "fluency", "position": 3}], []],
            "metric_values": [[{"metric": "bleu", "value": 0.25}, {"metric": "chrf", "value": 41.5}], []],
            "study_rating_0": [4.0, None],
        }
    )
    scale = Scale(
        "rating:overall", "overall", "rating", "study_rating_0", "higher", (1.0, 5.0), ("1", "2", "3", "4", "5")
    )
    table = logic.selection_table(answers, [scale])
    assert table.columns == ["answer_id", "ratings", "metric_values"]
    assert table["metric_values"].to_list() == ["bleu 0.25, chrf 41.5", ""]
    assert table["ratings"].to_list() == ["overall 4, fluency good", None]
