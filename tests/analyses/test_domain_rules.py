"""Unit tests at the rules that `make mutants` found untested (docs/mutants.md): each fails on a mutant
of its rule that the fast tier let survive."""

import math

import duckdb
import polars as pl
import pytest
from orders import calmqa_orders

from analysis import schema
from analysis.analyses import dimensions, paper_check, surface
from analysis.pipeline import surface as surface_stage
from analysis.stats import intervals


def test_the_normal_interval_of_a_mean_needs_two_values():
    low, high = intervals.normal_mean_interval(10.0, 2.0, 2)
    half = intervals.z_value() * 2.0 / math.sqrt(2)
    assert (low, high) == pytest.approx((10.0 - half, 10.0 + half))


def _shares(n_valid_by_group: dict[str, int]) -> pl.DataFrame:
    groups, values = [], []
    for group, n_valid in n_valid_by_group.items():
        groups += [group] * (n_valid + 1)
        values += [float(i % 2) for i in range(n_valid)] + [None]
    return pl.DataFrame({"group": groups, "value": values})


def test_share_cells_are_sorted_counted_and_scaled():
    frame = _shares({f"g{i:02d}": 10 + i for i in range(20, 0, -1)})
    cells = intervals.share_cells(frame, ["group"], "value", scale=1.0)
    assert cells["group"].to_list() == sorted(cells["group"].to_list())
    assert cells.schema["n_valid"] == pl.Int64
    assert "n_true" not in cells.columns
    first = cells.row(0, named=True)
    low, high = intervals.wilson(first["n_valid"] // 2, first["n_valid"])
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((float(low), float(high)))


def test_a_cell_below_the_minimum_has_no_interval_and_one_value_may_suffice():
    cells = intervals.share_cells(
        _shares({"few": intervals.MIN_VALID - 1, "enough": intervals.MIN_VALID}), ["group"], "value"
    )
    few = cells.filter(pl.col("group") == "few").row(0, named=True)
    assert few["mean"] is None and few["ci_low"] is None and few["ci_high"] is None
    enough = cells.filter(pl.col("group") == "enough").row(0, named=True)
    assert None not in (enough["mean"], enough["ci_low"], enough["ci_high"])
    one = intervals.share_cells(_shares({"one": 1}), ["group"], "value", min_valid=0)
    assert one["mean"].to_list() == [0.0]


def test_a_number_one_unit_off_on_the_printed_grid_differs():
    # 0.29 printed as 0.28: one unit off, and no digit beyond the printed ones to have been rounded away.
    assert paper_check.status("0.28", 0.29) == "differs"
    assert paper_check.status("0.28", 0.2899) == "within rounding"


@pytest.mark.parametrize(
    "printed, value, expected",
    [
        # Half a unit away, up to and including the tolerance: the value rounds to the printed number.
        ("0", 0.5 + paper_check._TOLERANCE, "exact"),
        ("0", 0.5 + 2 * paper_check._TOLERANCE, "within rounding"),
        # One unit away, up to and including the tolerance, with digits the paper does not print.
        ("0", 1 + paper_check._TOLERANCE, "within rounding"),
        ("0", 1 + 3 * paper_check._TOLERANCE, "differs"),
        # A value within the tolerance of the printed grid has no digit beyond it: not rounded away.
        ("1", paper_check._TOLERANCE, "differs"),
        ("1", 2 * paper_check._TOLERANCE, "within rounding"),
    ],
)
def test_the_tolerance_is_inclusive_at_each_boundary(printed, value, expected):
    assert paper_check.status(printed, value) == expected


# The answers of `_finish`'s test: (answer_id, provider error code, detected language, the question's
# language code, whether that language is identified, the largest 20-gram count), in no order.
_FINISH_ROWS = [
    (5, "OTHER", None, "de", True, 0),
    (3, None, "de", "de", True, surface_stage.REPETITION_MIN_COUNT - 1),
    (1, None, "en", "de", True, 0),
    (4, None, "rn", "rn", False, 0),
    (2, None, "de", "de", True, surface_stage.REPETITION_MIN_COUNT),
    (6, None, "fr", "rn", False, 0),
]


def _verdicts_to_finish() -> pl.DataFrame:
    """`_finish`'s input as `_verdicts` hands it: the workers' columns joined with the question's language."""
    ids, codes, detected, iso_codes, identified, repeats = (list(c) for c in zip(*_FINISH_ROWS))
    n = len(ids)
    return pl.DataFrame(
        {
            "answer_id": ids,
            "empty": [False] * n,
            "provider_error_code": codes,
            "language_engine": [None if d is None else "cld2" for d in detected],
            "language_raw": [None if d is None else f'{{"id": {i}}}' for d, i in zip(detected, ids)],
            "detected_language": detected,
            "abstained": [False] * n,
            "language_chars": [20 * i for i in ids],
            "n_tokens": [10 * i for i in ids],
            "repeat_count": repeats,
            "tokenizer": ["o200k_base"] * n,
            "apology": [i == 1 for i in ids],
            "language_name_mention": [i == 2 for i in ids],
            "translation_mention": [i == 3 for i in ids],
            "emoji": [i == 4 for i in ids],
            "language": ["German" if c == "de" else "Kirundi" for c in iso_codes],
            "iso_code": iso_codes,
            "identified": identified,
        },
        schema_overrides={"n_tokens": pl.Int32, "repeat_count": pl.Int32, "language_chars": pl.Int32},
    )


def test_finish_derives_every_verdict_of_an_answer():
    verdicts = _verdicts_to_finish()
    finished = surface_stage._finish(verdicts)
    assert finished.columns == schema.ANSWER_SURFACE.column_names()
    assert finished["answer_id"].to_list() == [1, 2, 3, 4, 5, 6]
    by_id = {row["answer_id"]: row for row in finished.iter_rows(named=True)}
    # The workers' columns pass through unchanged, each with its answer.
    for row in verdicts.iter_rows(named=True):
        for column in set(verdicts.columns) & set(finished.columns):
            assert by_id[row["answer_id"]][column] == row[column], (row["answer_id"], column)

    def column(name: str) -> list:
        return [by_id[i][name] for i in sorted(by_id)]

    assert column("provider_error") == [False, False, False, False, True, False]
    assert column("repetition") == [False, True, False, False, False, False]
    # The raw verdict compares the detected language with the question's, identified or not; a provider
    # error has none.
    assert column("language_match") == [False, True, True, True, None, False]
    # The language verdict is the raw one where the language is identified, unknown elsewhere.
    assert column("language_correct") == [False, True, True, None, None, None]
    # Three-valued: a provider error or a repetition decides it; else the language verdict does.
    assert column("surface_ok") == [False, False, True, None, False, None]
    # Every answer here got a verdict or is in a language not identified: none is abstained on; a provider
    # error has no such verdict.
    assert column("language_abstained") == [False, False, False, False, None, False]


def test_finish_counts_an_answer_without_a_language_verdict_apart():
    """An answer too short to judge (the identifier abstained), and one in an identified language that no
    engine judged, have no language verdict: abstained on, neither right nor wrong; one that repeats itself
    still has a surface issue."""
    verdicts = (
        _verdicts_to_finish()
        .head(3)
        .with_columns(
            detected_language=pl.lit(None, pl.String),
            abstained=pl.Series([True, False, True]),
            repeat_count=pl.Series([0, 0, surface_stage.REPETITION_MIN_COUNT], dtype=pl.Int32),
            provider_error_code=pl.lit(None, pl.String),
            identified=pl.lit(True),
        )
    )
    # answers 5 and 1 abstained on, 3 judged by no engine; 1 repeats itself
    assert verdicts["answer_id"].to_list() == [5, 3, 1]
    finished = {row["answer_id"]: row for row in surface_stage._finish(verdicts).iter_rows(named=True)}
    assert [finished[i]["language_abstained"] for i in (5, 3, 1)] == [True, True, True]
    assert [finished[i]["language_correct"] for i in (5, 3, 1)] == [None, None, None]
    assert [finished[i]["surface_ok"] for i in (5, 3, 1)] == [None, None, False]


def test_a_cells_status_is_its_first_reason():
    # (provider errors only, language not identified, the heatmap's own reason)
    cells = pl.DataFrame(
        {
            "errors_only": [True, True, False, False, False],
            "not_identified": [True, False, True, False, False],
            "own": ["too few", "too few", "too few", "too few", None],
        }
    )
    errors_only, not_identified = pl.col("errors_only"), pl.col("not_identified")
    with_own = cells.select(status=surface.cell_status(errors_only, not_identified, pl.col("own")))["status"]
    assert with_own.to_list() == [
        surface.PROVIDER_ERRORS_ONLY,
        surface.PROVIDER_ERRORS_ONLY,
        surface.NOT_IDENTIFIED,
        "too few",
        None,
    ]
    without_own = cells.select(status=surface.cell_status(errors_only, not_identified))["status"]
    assert without_own.dtype == pl.String
    assert without_own.to_list() == [
        surface.PROVIDER_ERRORS_ONLY,
        surface.PROVIDER_ERRORS_ONLY,
        surface.NOT_IDENTIFIED,
        None,
        None,
    ]
    # A heatmap whose every cell shows its value still has a text status column.
    shown = cells.filter(~pl.col("errors_only") & ~pl.col("not_identified"))
    assert shown.select(status=surface.cell_status(errors_only, not_identified))["status"].dtype == pl.String
    assert (surface.PROVIDER_ERRORS_ONLY, surface.NOT_IDENTIFIED) == ("provider errors only", "language not identified")


def test_a_share_is_a_percentage_of_a_denominator_above_zero():
    counts = pl.DataFrame({"n": [1, 3, 0, 0], "of": [4, 3, 1, 0]})
    assert counts.select(share=surface._share("n", "of"))["share"].to_list() == [25.0, 100.0, 0.0, None]


def test_a_macro_applies_to_exactly_its_arguments():
    assert schema.NO_SURFACE_ISSUE("a", "b", "c") == "no_surface_issue(a, b, c)"
    with pytest.raises(TypeError, match=r"^no_surface_issue takes 3 arguments, not 2$"):
        schema.NO_SURFACE_ISSUE("a", "b")


def test_the_release_and_unreliable_language_filters():
    assert dimensions.from_release() == "q.import_position IS NULL"
    assert dimensions.from_release("s", "question_import_position") == "s.question_import_position IS NULL"
    assert dimensions.from_release("") == "import_position IS NULL"
    assert dimensions.is_unreliable() == "q.language IN (SELECT language FROM languages WHERE NOT identified)"
    assert dimensions.is_unreliable("s.language").startswith("s.language IN ")


def _languages_database() -> duckdb.DuckDBPyConnection:
    """The tables `dimensions.LANGUAGES_SQL` reads, with four languages: identified; not identified and not
    judged by the all-languages engine; not identified and judged by it; not identified, judged by another."""
    con = duckdb.connect()
    con.execute(
        """
        CREATE TABLE languages AS SELECT * FROM (VALUES
            ('German', 'high', true), ('Kirundi', 'low', false), ('Balochi', 'low', false), ('Fijian', 'low', false)
        ) t(language, resource_level, identified);
        CREATE TABLE language_order AS SELECT * FROM (VALUES ('German', 1), ('Balochi', 2), ('Fijian', 3), ('Kirundi', 4))
            t(language, position);
        CREATE TABLE answers AS SELECT * FROM (VALUES (1, 'German'), (2, 'Balochi'), (3, 'Fijian'), (4, 'Kirundi'))
            t(answer_id, language);
        CREATE TABLE answer_language_all AS SELECT * FROM (VALUES (1, 'ngram'), (2, 'ngram'), (3, 'other'))
            t(answer_id, engine);
        """
    )
    return con


def test_a_language_label_marks_what_judges_its_answers():
    with _languages_database() as con:
        assert dimensions.language_labels(con) == {
            "German": "German",
            "Balochi": "Balochi" + dimensions.UNRELIABLE_MARK,
            "Fijian": "Fijian" + dimensions.UNRELIABLE_MARK,
            "Kirundi": "Kirundi" + dimensions.UNRELIABLE_MARK,
        }
        assert list(dimensions.language_labels(con, all_identified=True).items()) == [
            ("German", "German"),
            ("Balochi", "Balochi" + dimensions.BEYOND_PAPER_MARK),
            ("Fijian", "Fijian" + dimensions.UNRELIABLE_MARK),
            ("Kirundi", "Kirundi" + dimensions.UNRELIABLE_MARK),
        ]
    assert (dimensions.UNRELIABLE_MARK, dimensions.BEYOND_PAPER_MARK) == (" †", " ‡")


def _four_languages() -> dimensions.Orders:
    languages = ["German", "Hindi", "Fijian", "Wolof"]
    return calmqa_orders(["B", "A"], languages, [f"{language} label" for language in languages], "Fijian")


@pytest.mark.parametrize(
    "left_out, languages, starts",
    [
        ("Fijian", ["German", "Hindi", "Wolof"], ("Wolof",)),  # the line moves to the next low-resource one
        ("Hindi", ["German", "Fijian", "Wolof"], ("Fijian",)),
        ("German", ["Hindi", "Fijian", "Wolof"], ("Fijian",)),
        ("Japanese", ["German", "Hindi", "Fijian", "Wolof"], ("Fijian",)),
    ],
)
def test_orders_without_a_language_keep_the_line_between_the_levels(left_out, languages, starts):
    orders = _four_languages()
    without = orders.without(left_out)
    assert without.languages == languages
    assert without.labels == [f"{language} label" for language in languages]
    assert without.level_starts == starts
    assert without.models == orders.models and without.levels_of == orders.levels_of


def test_orders_without_the_only_language_of_its_level_draw_no_line():
    orders = calmqa_orders(["A"], ["German", "Hindi", "Fijian"], ["German", "Hindi", "Fijian"], "Fijian")
    assert orders.without("Fijian").level_starts == ()
    assert orders.without("Fijian").languages == ["German", "Hindi"]


def test_each_grouping_column_sorts_in_the_studys_order():
    orders = dimensions.Orders(
        ["B", "A"],
        [],
        [],
        question_types=("specific", "agnostic"),
        resource_levels=("high", "low"),
        collections=("calmqa", "imported"),
    )
    assert orders.positions("model") == ["B", "A"]
    assert orders.positions("question_type") == ["specific", "agnostic"]
    assert orders.positions("resource_level") == ["high", "low"]
    assert orders.positions("collection") == ["calmqa", "imported"]
    assert orders.positions("language") is None
    table = pl.DataFrame(
        {
            "model": ["A", "Z", "B", "A", "B", "C"],
            "resource_level": ["low", "high", "low", "high", "high", "low"],
            "language": ["b", "a", "b", "a", "c", "a"],
            "question_type": ["agnostic", "specific", "specific", "agnostic", "agnostic", "specific"],
            "collection": ["imported", "calmqa", "calmqa", "calmqa", "imported", "calmqa"],
            "row": [1, 2, 3, 4, 5, 6],
        }
    )
    # By default: model, resource level, language, question type; unknown models after the known ones.
    assert dimensions.in_order(table, orders=orders)["row"].to_list() == [5, 3, 4, 1, 6, 2]
    assert dimensions.in_order(table, ["collection", "row"], orders=orders)["row"].to_list() == [2, 3, 4, 6, 1, 5]
    assert dimensions.in_order(table, ["language"], orders=orders)["row"].to_list() == [2, 4, 6, 1, 3, 5]
    # Rows that tie on every column sorted by keep their order (a hundred rows: polars' unstable sort
    # reorders them).
    ties = pl.DataFrame({"model": ["A", "B"] * 50, "row": range(100)})
    assert dimensions.in_order(ties, ["model"], orders=orders)["row"].to_list() == [
        *range(1, 100, 2),
        *range(0, 100, 2),
    ]
    # A table without any of the columns keeps its order.
    assert dimensions.in_order(table.select("row").reverse(), orders=orders)["row"].to_list() == [6, 5, 4, 3, 2, 1]


def test_a_surface_metric_counts_and_fails_by_its_record():
    # (properties, which mutmut does not mutate: pinned here) Every record of the registry: its count is
    # `n_` and its key without `pct_`, and an answer fails it by a true verdict where lower is better.
    found = {m.key: (m.count, m.fails_when) for m in schema.SURFACE_METRICS}
    assert found == {m.key: ("n_" + m.key[len("pct_") :], m.better == "lower") for m in schema.SURFACE_METRICS}
    assert {
        "pct_correct_language": ("n_correct_language", False),
        "pct_repetition": ("n_repetition", True),
        "pct_surface_ok": ("n_surface_ok", False),
    }.items() <= found.items()
