"""Unit tests at the rules that planted bugs once slipped past (issue 29): each fails when its rule's
one definition is changed the way the review changed it.

- the repetition heatmap's denominator is the answers the provider gave (`n_answered`), not all answers;
- the all-languages "no surface issue" count leaves out repetitive answers;
- a cell needs at least `MIN_VALID` valid answers (a cell with exactly that many is drawn);
- an answer repeats itself when some 20-gram occurs 4 times or more (4 is a repetition);
- a value half-way between two printed numbers is `exact` on either side, even where binary puts it a
  hair beyond half a unit (2.675 against 2.68).
"""

import shutil

import duckdb
import polars as pl
import pytest
from orders import calmqa_orders

from analysis.analyses import language_id_all, paper_check, surface
from analysis.pipeline import surface as surface_stage
from analysis.stats import intervals


def _rates(n_answers: int, n_provider_errors: int, n_repetition: int) -> pl.DataFrame:
    n_answered = n_answers - n_provider_errors
    return pl.DataFrame(
        {
            "model": ["Model A"],
            "language": ["English"],
            "question_type": ["specific"],
            "language_label": ["English"],
            "resource_level": ["high"],
            "unreliable": [False],
            "n_answers": [n_answers],
            "n_provider_errors": [n_provider_errors],
            "n_answered": [n_answered],
            "n_language_abstained": [0],
            "n_language_judged": [n_answered],
            "n_surface_judged": [n_answers],
            "n_correct_language": [n_answered],
            "n_repetition": [n_repetition],
            "n_surface_ok": [n_answered - n_repetition],
        }
    )


def test_the_repetition_share_is_of_the_answers_the_provider_gave():
    # 10 answers, 5 provider errors, 1 of the 5 others repetitive: 20%, not 10%.
    cells = surface.metric_cells(
        _rates(10, 5, 1), "pct_repetition", calmqa_orders(["Model A"], ["English"], ["English"])
    )
    assert cells["pct_repetition"].to_list() == [20.0]
    # The clean share is of all answers: a provider error is a surface issue.
    clean = surface.metric_cells(
        _rates(10, 5, 1), "pct_surface_ok", calmqa_orders(["Model A"], ["English"], ["English"])
    )
    assert clean["pct_surface_ok"].to_list() == [40.0]


@pytest.mark.parametrize("n_valid, drawn", [(intervals.MIN_VALID, True), (intervals.MIN_VALID - 1, False)])
def test_a_cell_needs_at_least_min_valid_answers(n_valid, drawn):
    frame = pl.DataFrame(
        {"group": ["a"] * (n_valid + 2), "value": [1.0, 0.0] * (n_valid // 2) + [1.0] * (n_valid % 2) + [None, None]}
    )
    share = intervals.share_cells(frame, ["group"], "value")
    boot = intervals.bootstrap_cells(frame, ["group"], "value", n_resamples=50)
    assert share["n_valid"].to_list() == boot["n_valid"].to_list() == [n_valid]
    assert (share["mean"][0] is not None) is drawn
    assert (boot["mean"][0] is not None) is drawn


def test_four_occurrences_of_a_20_gram_are_a_repetition():
    verdicts = pl.DataFrame(
        {
            "answer_id": [1, 2],
            "empty": [False, False],
            "provider_error_code": [None, None],
            "language_engine": ["cld2", "cld2"],
            "language_raw": ["{}", "{}"],
            "detected_language": ["en", "en"],
            "abstained": [False, False],
            "language_chars": [400, 400],
            "n_tokens": [100, 100],
            "repeat_count": [surface_stage.REPETITION_MIN_COUNT, surface_stage.REPETITION_MIN_COUNT - 1],
            "tokenizer": ["o200k_base", "o200k_base"],
            "apology": [False, False],
            "language_name_mention": [False, False],
            "translation_mention": [False, False],
            "emoji": [False, False],
            "language": ["English", "English"],
            "iso_code": ["en", "en"],
            "identified": [True, True],
        }
    )
    finished = surface_stage._finish(verdicts)
    assert surface_stage.REPETITION_MIN_COUNT == 4
    assert finished["repetition"].to_list() == [True, False]
    assert finished["surface_ok"].to_list() == [False, True]


@pytest.mark.parametrize(
    "printed, value, expected",
    [
        ("2", 2.5, "exact"),  # a true tie, exact in binary: it counts either way
        ("3", 2.5, "exact"),
        ("2.67", 2.675, "exact"),  # a tie in decimal, 0.49999999999999 units away in binary
        ("2.68", 2.675, "exact"),  # the same tie, 0.50000000000003 units away in binary
        ("0.29", 0.285, "exact"),  # 0.5000000000000004 units away
        ("6.12", 6.1251, "within rounding"),
        ("6.11", 6.125, "differs"),
    ],
)
def test_a_value_half_way_rounds_either_way(printed, value, expected):
    assert paper_check.status(printed, value) == expected


def test_the_all_languages_clean_count_leaves_out_repetitions(tiny_database, tmp_path):
    db = tmp_path / "calmqa.duckdb"
    shutil.copy(tiny_database, db)
    with duckdb.connect(str(db)) as con:
        # Make every answer the all-languages engine judges correct and clean repeat itself: none of
        # them may then count as without a surface issue.
        con.execute(
            """UPDATE answer_surface SET repetition = true
               WHERE answer_id IN (SELECT answer_id FROM answer_language_all WHERE all_languages_correct)
                 AND NOT provider_error"""
        ).fetchall()
        changed = con.execute("SELECT count(*) FROM answer_surface WHERE repetition").fetchall()[0][0]
        rates = language_id_all.rates_by_model_language(con)
    assert changed > 0
    assert rates["n_surface_ok"].sum() == 0
    assert rates["n_correct_language"].sum() > 0
