"""Verdicts on the models' answers that the paper shows only in its appendix figures (docs/methods.md,
section 09 Verdicts on the answers): the share of answers in English by model and language (Figure 16, from the automatic
language identification of `answer_surface`), and the annotators' verdicts on language, factuality and
omissions by model (Figures 18 to 23; their counts are the paper's Tables 25 to 27).
"""

import duckdb
import polars as pl

from ..core.scalars import number
from ..core.text import inert
from ..stats import intervals
from . import dimensions, human_evaluation, surface

ENGLISH_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type, s.resource_level,
       {dimensions.is_unreliable("s.language")} AS unreliable,
       count(*) AS n_answers,
       count(s.detected_language) FILTER (NOT s.provider_error) AS n_with_language,
       count(*) FILTER (s.detected_language = 'en' AND NOT s.provider_error) AS n_english
FROM surface_answers s
WHERE s.language <> 'English' AND {dimensions.SURFACE_FROM_RELEASE}
GROUP BY ALL
ORDER BY model, any_value(s.language_position), s.question_type
"""


def english_answer_cells(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Figure 16: per model, language (English left out) and question type, the share of the answers
    with a language verdict that the identification takes for English. Provider errors have no verdict:
    a cell without any answer with a verdict (all provider errors) has no share, as in the paper, and
    neither has a language whose identification is unreliable (the rule of every heatmap); `status`
    says which."""
    labels = dimensions.language_labels(con)
    cells = con.sql(ENGLISH_SQL).pl().with_columns(language_label=pl.col("language").replace_strict(labels))
    status = surface.cell_status(pl.col("n_with_language") == 0, pl.col("unreliable"))
    shown = pl.col("status").is_null()
    cells = cells.with_columns(status=status).with_columns(
        pct_english=pl.when(shown).then((100 * pl.col("n_english") / pl.col("n_with_language")).round(1))
    )
    cells = intervals.with_wilson(cells, "n_english", "n_with_language", decimals=1)
    return cells.with_columns([pl.when(shown).then(pl.col(c)).alias(c) for c in ("ci_low", "ci_high")])


def english_summary(cells: pl.DataFrame) -> str:
    """Which models answer in English most often, in words (over the models with a language verdict)."""
    by_model = (
        cells.filter(~pl.col("unreliable"))
        .group_by("model")
        .agg(pl.col("n_english").sum(), pl.col("n_with_language").sum())
        # (a model whose every answer here is a provider error has no share to rank)
        .filter(pl.col("n_with_language") > 0)
        .with_columns(pct=100 * pl.col("n_english") / pl.col("n_with_language"))
        .sort("pct", "model", descending=[True, False])
    )
    if by_model.is_empty():
        return "The database has no answer with a language verdict to a question in another language than English."
    top, bottom = by_model.row(0, named=True), by_model.row(-1, named=True)
    total = 100 * number(by_model["n_english"].sum()) / number(by_model["n_with_language"].sum())
    return (
        f"Of the answers to questions in the {cells.filter(~pl.col('unreliable'))['language'].n_unique()} languages "
        f"other than English whose identification is reliable, **{total:.1f}%** are in English. "
        f"{inert(top['model'])} answers in English most often ({top['pct']:.1f}% of its answers), "
        f"{inert(bottom['model'])} least often ({bottom['pct']:.1f}%)."
    )


# ---------------------------------------------------------------- Figures 18 to 23

# The paper's figure for each verdict and question type; its counts are Table 25 (language), 26
# (factuality) and 27 (omissions).
FIGURES = {
    ("language_correct", "specific"): 18,
    ("language_correct", "agnostic"): 19,
    ("factuality", "specific"): 20,
    ("factuality", "agnostic"): 21,
    ("omissions", "specific"): 22,
    ("omissions", "agnostic"): 23,
}
VERDICT_TITLES = {
    "language_correct": "Is the answer in the question's language?",
    "factuality": "Factuality issues",
    "omissions": "Omissions",
}
ALL_LANGUAGES = "All languages"


def verdict_counts(ratings: pl.DataFrame, verdict: str, question_type: str) -> pl.DataFrame:
    """The annotators' verdicts of one kind on one question type's answers, long form: per language
    (and over all languages), model and level, the number of answers (`n`, zeros included)."""
    levels = list(human_evaluation.LEVELS[verdict])
    wide = human_evaluation.verdict_counts(ratings, verdict).filter(pl.col("question_type") == question_type)
    overall = (
        wide.group_by("question_type", "model")
        .agg(pl.col(*levels, "n").sum())
        .with_columns(language=pl.lit(ALL_LANGUAGES))
    )
    both = pl.concat([wide, overall.select(wide.columns)])
    long = both.unpivot(
        index=["language", "question_type", "model"], on=levels, variable_name="level", value_name="n_answers"
    ).with_columns(
        level_position=pl.col("level").replace_strict({lv: i for i, lv in enumerate(levels)}, return_dtype=pl.Int32),
        is_total=pl.col("language") == ALL_LANGUAGES,
    )
    return dimensions.in_order(
        long, ["is_total", "language", "model", "level_position"], orders=human_evaluation.PAPER_ORDERS
    ).select("language", "question_type", "model", "level", "level_position", "n_answers")


def verdict_summary(ratings: pl.DataFrame) -> str:
    """The annotators' verdicts in words: answers with a major problem, by question type."""
    sentences = []
    for verdict, problem in (("factuality", "major factuality issues"), ("omissions", "major omissions")):
        rows = []
        for question_type in ("specific", "agnostic"):
            subset = ratings.filter(pl.col("question_type") == question_type)
            rows.append(
                f"{subset.filter(pl.col(verdict) == 'major').height} of {subset.height} "
                f"{'culturally ' + question_type} answers"
            )
        sentences.append(f"The annotators found {problem} in {rows[0]} and in {rows[1]}.")
    return " ".join(sentences)
