"""Figure 16 (answers in English) and Figures 18 to 23 (the annotators' verdicts), against the database."""

import polars as pl

from analysis.analyses import answer_verdicts, dimensions, human_evaluation, surface
from analysis.io.calmqa import UNRELIABLE_LANGUAGES
from analysis.viz import verdict_charts


def test_english_cells_count_answers_with_a_language_verdict(con):
    cells = answer_verdicts.english_answer_cells(con)
    assert "English" not in set(cells["language"])
    assert cells.height == 8 * 22 * 2
    by_hand = con.sql("""
        SELECT count(*) FILTER (s.detected_language = 'en' AND a.text NOT IN ('OTHER', 'SAFETY', 'RECITATION', '')) AS english,
               count(*) FILTER (s.detected_language IS NOT NULL AND a.text NOT IN ('OTHER', 'SAFETY', 'RECITATION', '')) AS judged,
               count(*) FILTER (a.text IN ('OTHER', 'SAFETY', 'RECITATION') AND s.detected_language IS NOT NULL) AS codes_with_language
        FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
        WHERE q.language <> 'English'
    """).fetchall()[0]
    assert (cells["n_english"].sum(), cells["n_with_language"].sum()) == by_hand[:2]
    assert by_hand[2] == 0, "a provider's finish-reason code is not an answer and gets no language verdict"
    shown = cells.filter(pl.col("pct_english").is_not_null())
    assert ((shown["ci_low"] <= shown["pct_english"]) & (shown["pct_english"] <= shown["ci_high"])).all()
    blank = cells.filter(pl.col("n_with_language") == 0)
    assert blank["pct_english"].null_count() == blank.height and set(blank["model"]) <= {"Gemini 1.5 Pro"}
    judged = cells.filter(pl.col("status").is_null())
    assert ((judged["pct_english"] - 100 * judged["n_english"] / judged["n_with_language"]).abs() <= 0.05).all()
    # The rule of every heatmap: a language whose identification is unreliable has no verdicts, so no share.
    unreliable = cells.filter(pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES)))
    assert unreliable.height == 8 * 4 * 2 and unreliable["pct_english"].null_count() == unreliable.height
    assert set(unreliable["status"]) <= {surface.NOT_IDENTIFIED, surface.PROVIDER_ERRORS_ONLY}
    assert set(blank["status"]) == {surface.PROVIDER_ERRORS_ONLY}
    assert judged.filter(pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES))).height == 0
    spec = verdict_charts.english_answer_heatmap(cells, dimensions.Orders.of(con)).to_dict()
    assert "Kirundi †" in spec["spec"]["layer"][0]["encoding"]["x"]["sort"]


def test_verdict_counts_are_tables_25_to_27_in_long_form(con):
    ratings = human_evaluation.ratings(con)
    for (verdict, question_type), figure in answer_verdicts.FIGURES.items():
        counts = answer_verdicts.verdict_counts(ratings, verdict, question_type)
        per_language = counts.filter(pl.col("language") != answer_verdicts.ALL_LANGUAGES)
        assert set(per_language.group_by("language", "model").agg(pl.col("n_answers").sum())["n_answers"]) == {10}
        total = counts.filter(pl.col("language") == answer_verdicts.ALL_LANGUAGES)
        assert total["n_answers"].sum() == 150
        wide = human_evaluation.verdict_counts(ratings, verdict).filter(pl.col("question_type") == question_type)
        for level in human_evaluation.LEVELS[verdict]:
            assert per_language.filter(pl.col("level") == level)["n_answers"].sum() == wide[level].sum()
        spec = verdict_charts.verdict_chart(counts, verdict, question_type, dimensions.Orders.of(con)).to_dict()
        assert f"(paper Figure {figure})" in spec["title"]
