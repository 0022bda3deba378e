"""The statistics do not depend on what things are called, and follow which end is better: significance
tiers (`stats.significance.tiers`) and rank intervals (`rank_intervals`) of generated answers are the same
when models, languages and questions are renamed (the names mapped back), and the same when every value
changes sign and the better end changes with it. The expected values are the first run's own results,
compared with a second run on renamed or mirrored data: nothing here is computed by the code's helpers."""

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from analysis.stats import significance

pytestmark = pytest.mark.fast

MODELS = ["alpha", "beta", "gamma", "delta"]
LANGUAGES = ["Hausa", "Tongan"]
N_QUESTIONS = 9
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def answers(draw, kind: str) -> pl.DataFrame:
    """Every model's answer to every question of each language, with a verdict or a score (some missing)."""
    n = len(LANGUAGES) * len(MODELS) * N_QUESTIONS
    if kind == "binary":
        values = draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n, max_size=n))
    else:
        values = draw(st.lists(st.one_of(st.none(), st.integers(0, 20).map(float)), min_size=n, max_size=n))
    rows = [(lang, m, f"{lang}-q{q}") for lang in LANGUAGES for m in MODELS for q in range(N_QUESTIONS)]
    frame = pl.DataFrame(rows, schema=["language", "model", "question"], orient="row")
    frame = frame.with_columns(pl.Series("value", values, dtype=pl.Boolean if kind == "binary" else pl.Float64))
    means = frame.group_by("language", "model").agg(pl.col("value").cast(pl.Float64).mean())
    # a tie for the best mean is broken by the models' names, which is what renaming changes
    assume(means.drop_nulls().group_by("language").agg(pl.col("value").is_duplicated().any())["value"].not_().all())
    return frame


def renamed(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, str]]:
    """`frame` with its models, languages and questions renamed so that their sorted order is reversed,
    and the models' new names to old."""
    models = {m: f"model {chr(ord('z') - i)}" for i, m in enumerate(sorted(MODELS))}
    languages = {lang: f"language {9 - i}" for i, lang in enumerate(sorted(LANGUAGES))}
    return (
        frame.with_columns(
            pl.col("model").replace_strict(models),
            pl.col("language").replace_strict(languages),
            ("renamed " + pl.col("question").str.reverse()).alias("question"),
        ),
        {new: old for old, new in models.items()} | {new: old for old, new in languages.items()},
    )


def _tiers(frame: pl.DataFrame, kind: str, better: str = "higher") -> pl.DataFrame:
    return significance.tiers(
        frame, group=["language"], model="model", unit="question", value="value", kind=kind, better=better
    )


def assert_same(table: pl.DataFrame, expected: pl.DataFrame) -> None:
    """The same rows; floats the same but for rounding (sums taken in another order)."""
    assert table.columns == expected.columns and table.height == expected.height
    for column in table.columns:
        mine, theirs = table[column].to_list(), expected[column].to_list()
        if table[column].dtype == pl.Float64:
            assert [v is None for v in mine] == [v is None for v in theirs], column
            assert [v for v in mine if v is not None] == pytest.approx([v for v in theirs if v is not None], rel=1e-12)
        else:
            assert mine == theirs, column


def _named_back(table: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    return table.with_columns(pl.col("model", "language").replace_strict(names, default=None)).sort(
        "language", "model", nulls_last=True
    )


@pytest.mark.parametrize("kind", ["binary", "numeric"])
def test_tiers_are_the_same_whatever_models_languages_and_questions_are_called(kind):
    @SETTINGS
    @given(answers(kind))
    def check(frame):
        first = _tiers(frame, kind).sort("language", "model")
        other, names = renamed(frame)
        again = _named_back(_tiers(other, kind), names)
        assert_same(again, first)

    check()


def test_tiers_follow_the_better_end_when_every_value_changes_sign():
    @SETTINGS
    @given(answers("numeric"))
    def check(frame):
        higher = _tiers(frame, "numeric", "higher").sort("language", "model")
        lower = _tiers(frame.with_columns(-pl.col("value")), "numeric", "lower").sort("language", "model")
        columns = ["language", "model", "n", "tier", "p_vs_best", "p_adjusted"]
        assert_same(lower.select(columns), higher.select(columns))
        assert lower["mean"].to_list() == [-m for m in higher["mean"].to_list()]

    check()


def test_rank_intervals_are_the_same_whatever_the_models_are_called_and_follow_the_better_end():
    @SETTINGS
    @given(answers("numeric"))
    def check(frame):
        def ranks(data: pl.DataFrame, better: str) -> pl.DataFrame:
            return significance.rank_intervals(
                data, group="language", model="model", unit="question", value="value", better=better, n_resamples=50
            )

        first = ranks(frame, "higher").sort("language", "model", nulls_last=True)
        # models renamed only: the questions' draws are the same, so the intervals are too
        models = {m: f"model {chr(ord('z') - i)}" for i, m in enumerate(sorted(MODELS))}
        again = ranks(frame.with_columns(pl.col("model").replace_strict(models)), "higher")
        back = again.with_columns(pl.col("model").replace_strict({v: k for k, v in models.items()}))
        assert_same(back.sort("language", "model", nulls_last=True), first)
        mirrored = ranks(frame.with_columns(-pl.col("value")), "lower").sort("language", "model", nulls_last=True)
        assert (
            mirrored.select("rank", "rank_low", "rank_high").to_dicts()
            == first.select("rank", "rank_low", "rank_high").to_dicts()
        )

    check()
