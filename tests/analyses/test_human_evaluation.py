"""Rating tables on small hand-made inputs, the wording of results, and the analyses on the real ratings."""

import math

import polars as pl
import pytest
from orders import CALMQA_ORDERS

from analysis.analyses import human_evaluation
from analysis.viz import rating_charts

SMALL = pl.DataFrame(
    {
        "rating_id": [1, 2, 3, 4, 5, 6],
        "language": ["German", "German", "German", "Hindi", "Hindi", "Hindi"],
        "annotator": ["1", "1", "1", "2", "2", "2"],
        "question_type": ["specific", "agnostic", "specific", "specific", "agnostic", "agnostic"],
        "model": ["Claude 3 Opus", "Claude 3 Opus", "Mixtral 8x22B", "Claude 3 Opus", "Claude 3 Opus", "GPT-4 Turbo"],
        "rating": [5, 4, 1, 4, 5, 5],
        "factuality": ["none", "minor", "major", "none", "none", "minor"],
        "omissions": ["none", "none", "major", "minor", "none", "none"],
        "language_correct": ["yes", "yes", "no", "partially", "yes", "yes"],
    },
    schema_overrides={"rating": pl.Int8},
)


def test_rating_distribution_counts_every_level_with_zeros():
    table = human_evaluation.rating_distribution(SMALL, ["model"])
    claude = table.filter(pl.col("model") == "Claude 3 Opus")
    assert claude["rating"].to_list() == [1, 2, 3, 4, 5]
    assert claude["n"].to_list() == [0, 0, 0, 2, 2]
    assert claude["share"].to_list() == [0, 0, 0, 0.5, 0.5]
    assert claude["mean_rating"].unique().to_list() == [4.5]
    assert table.group_by("model").agg(pl.col("share").sum())["share"].to_list() == [1.0, 1.0, 1.0]
    # Display names, in the paper's order.
    assert table["model"].unique(maintain_order=True).to_list() == ["GPT-4 Turbo", "Claude 3 Opus", "Mixtral 8x22B"]


def test_verdict_counts_by_language_type_and_model():
    table = human_evaluation.verdict_counts(SMALL, "language_correct")
    assert table.columns == ["language", "question_type", "model", "yes", "partially", "no", "n"]
    assert table.rows() == [
        ("German", "specific", "Claude 3 Opus", 1, 0, 0, 1),
        ("German", "specific", "Mixtral 8x22B", 0, 0, 1, 1),
        ("German", "agnostic", "Claude 3 Opus", 1, 0, 0, 1),
        ("Hindi", "specific", "Claude 3 Opus", 0, 1, 0, 1),
        ("Hindi", "agnostic", "GPT-4 Turbo", 1, 0, 0, 1),
        ("Hindi", "agnostic", "Claude 3 Opus", 1, 0, 0, 1),
    ]
    with pytest.raises(ValueError, match="unexpected factuality values"):
        human_evaluation.verdict_counts(SMALL.with_columns(factuality=pl.lit("severe")), "factuality")


def test_model_frame_puts_reference_levels_first():
    frame = human_evaluation.model_frame(SMALL)
    assert frame["rating"].cat.ordered and list(frame["rating"].cat.categories) == ["1", "2", "3", "4", "5"]
    # R gets each model's key, an identifier its term names and contrast labels keep as it is.
    assert list(frame["model"].cat.categories) == ["claude-3-opus", "gpt-4-turbo", "mixtral-8x22b"]
    assert frame["model"].tolist() == [
        "claude-3-opus",
        "claude-3-opus",
        "mixtral-8x22b",
        "claude-3-opus",
        "claude-3-opus",
        "gpt-4-turbo",
    ]
    assert list(frame["question_type"].cat.categories) == ["specific", "agnostic"]
    assert list(frame["factuality"].cat.categories) == ["none", "minor", "major"]
    assert list(frame["language_correct"].cat.categories) == ["yes", "partially", "no"]
    assert frame["no_factuality_issue"].tolist() == [1, 0, 0, 1, 1, 0]
    assert frame["no_omission"].tolist() == [1, 1, 0, 0, 1, 1]
    assert list(frame["annotator"].cat.categories) == ["1", "2"]
    assert not frame.isna().any().any()


def test_odds_sentence_names_the_favoured_group_first_and_says_odds():
    favoured = human_evaluation.odds_sentence("model", "gpt-4-turbo", "claude-3-opus", math.log(3), 0.1, 0.0004)
    assert favoured.startswith("An answer of GPT-4 Turbo has **3.00 times the odds** of a higher rating")
    assert "than one of Claude 3 Opus" in favoured and "p < 0.001" in favoured
    assert "logistic(b) = 75%" in favoured and "chance" not in favoured
    reversed_ = human_evaluation.odds_sentence("model", "claude-3-opus", "gpt-4-turbo", -math.log(3), 0.1, 0.2)
    assert reversed_.split(" (odds ratio")[0] == favoured.split(" (odds ratio")[0]
    assert "p = 0.200" in reversed_
    omissions = human_evaluation.odds_sentence("omissions", "major", "none", -math.log(9), 0.5, 0.01)
    assert omissions.startswith("An answer with no omissions has **9.00 times the odds**")
    assert "logistic(b) = 90%" in omissions


def test_contrasts_are_listed_under_their_adjustment():
    contrasts = pl.DataFrame({"sentence": ["A over B.", "C over D."], "adjust": ["bonferroni"] * 2})
    text = human_evaluation.contrast_bullets(contrasts, "Question type within each model", across_groups=True)
    assert (
        text
        == "Question type within each model (Bonferroni-adjusted p values over all models):\n\n- A over B.\n- C over D."
    )
    assert "(Bonferroni-adjusted p values):" in human_evaluation.contrast_bullets(contrasts, "Pairwise contrasts")


def test_terms_are_read_as_factor_levels():
    assert human_evaluation._split_term("modelgpt-4-turbo:question_typeagnostic") == [
        ("model", "gpt-4-turbo"),
        ("question_type", "agnostic"),
    ]
    assert human_evaluation._split_term("language_correctpartially") == [("language_correct", "partially")]
    with pytest.raises(ValueError, match="cannot read the term"):
        human_evaluation._split_term("modelgpt-5")


def test_random_effect_note_follows_the_data():
    assert "exactly one annotator" in human_evaluation.random_effect_note(SMALL)
    shared = SMALL.with_columns(annotator=pl.Series(["1", "3", "1", "2", "2", "2"]))
    assert "German" in human_evaluation.random_effect_note(shared)


def test_distribution_chart_has_one_panel_per_question_type():
    table = human_evaluation.rating_distribution(SMALL, ["model", "question_type"])
    spec = rating_charts.rating_distribution_chart(table, "question_type", CALMQA_ORDERS, title="t").to_dict()
    assert spec["facet"]["field"] == "question_type"
    assert spec["facet"]["sort"] == ["specific", "agnostic"]
    assert spec["spec"]["encoding"]["x"]["stack"] == "normalize"
    assert spec["spec"]["encoding"]["y"]["sort"] == ["GPT-4 Turbo", "Claude 3 Opus", "Mixtral 8x22B"]


def test_analyses_on_the_real_ratings(con):
    ratings = human_evaluation.ratings(con)
    assert len(ratings) == 300
    frame = human_evaluation.model_frame(ratings)
    model_fit = human_evaluation.fit_rating_model(frame, "model")
    coefficients = human_evaluation.coefficient_table(model_fit)
    assert coefficients["comparison"].to_list() == ["GPT-4 Turbo vs Claude 3 Opus", "Mixtral 8x22B vs Claude 3 Opus"]
    assert all(s.startswith("An answer of ") for s in coefficients["sentence"])
    contrasts = human_evaluation.contrast_table(model_fit, "model")
    assert set(contrasts["adjust"]) == {"tukey"} and len(contrasts) == 3
    interaction = human_evaluation.coefficient_table(human_evaluation.fit_rating_model(frame, "model * question_type"))
    assert interaction.filter(pl.col("term").str.contains(":"))["sentence"].str.starts_with("Interaction").all()

    r2 = human_evaluation.single_predictor_r2(frame, ["model", "question_type", human_evaluation.INTERACTION])
    assert r2["r2_marginal"].to_list() == sorted(r2["r2_marginal"], reverse=True)
    assert ((r2["r2_marginal"] > 0) & (r2["r2_marginal"] < r2["r2_conditional"]) & (r2["r2_conditional"] < 1)).all()

    question_type_fit = human_evaluation.fit_rating_model(frame, "question_type")
    text = human_evaluation.summary(ratings, contrasts, question_type_fit, r2)
    assert "**300 ratings** by 5 annotators in 5 languages" in text
    assert "Tukey-adjusted" in text
    # Table 21's caption: the interaction model's marginal and conditional R squared (Nakagawa).
    table21 = r2.filter(pl.col("predictor") == human_evaluation.INTERACTION).row(0, named=True)
    assert (table21["r2_marginal"], table21["r2_conditional"]) == (0.266, 0.497)
    assert "marginal R² 0.266 and conditional R² 0.497" in text
    assert contrasts.filter((pl.col("level_a") == "Claude 3 Opus") & (pl.col("level_b") == "Mixtral 8x22B"))[
        "logistic_pct"
    ].round(0).to_list() == [88.0]

    issues = human_evaluation.fit_issue_models(frame)
    table = human_evaluation.issue_model_table(issues)
    assert table.select("outcome", "term").rows() == [
        ("no_factuality_issue", "(Intercept)"),
        ("no_factuality_issue", "question_typeagnostic"),
        ("no_omission", "(Intercept)"),
        ("no_omission", "question_typeagnostic"),
    ]
    sentences = human_evaluation.issue_model_sentences(issues)
    assert len(sentences) == 2 and "no factuality issues" in sentences[0] and "no omissions" in sentences[1]
