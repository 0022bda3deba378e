"""Human ratings of any study, criterion by criterion (docs/methods.md, section 05; docs/studies.md): the
ratings in long form with each criterion's levels worst to best (`criteria`, `criterion_levels`), the
distribution of the levels by model and by language, and a cumulative link mixed model per criterion,

    level ~ model (+ question_type, when the study has question types) + (1 | question)
            (+ (1 | annotator), when three or more annotators rated the criterion)

fitted by R's `ordinal::clmm` (`stats.r_models`), with the emmeans contrasts between the models and
Nakagawa's R². The models' significance tiers (docs/methods.md, section Significance tiers): over all
languages from the mixed model's contrasts (`CriterionModel.tiers`), per language from a paired test of
the levels (`level_tiers`). The CaLMQA paper's own models of its four criteria are `analyses.human_evaluation`.

R's `clmm` takes seconds for a few thousand ratings and grows faster than the ratings do (its optimiser
evaluates the Laplace likelihood many times, each over every rating and question), so a study's models
share a budget (`MODEL_RATINGS`): a criterion with more ratings than its share is fitted on the ratings of a
random sample of its questions (`model_sample`, seeded: the same sample run after run), and the report says
so. Every other number of the report counts every rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl

from ..core.text import inert
from ..io.criterion_kinds import CRITERION_KIND_BY_NAME, CriterionKind
from ..stats import significance
from . import dimensions, tiers

if TYPE_CHECKING:
    import pandas as pd

    from ..stats import r_models

CRITERIA_SQL = """
SELECT c.criterion, c.kind, list(l.level ORDER BY l.position) AS levels
FROM criteria c JOIN criterion_levels l USING (criterion)
GROUP BY c.criterion, c.kind, c.position
ORDER BY c.position
"""
# (`{level_type}`: the criterion's kind's `sql_type`, a constant of `io.criterion_kinds`)
LONG_SQL = """
SELECT r.rating_id, r.question_id, r.answer_id, q.language, q.question_type, m.display_name AS model, r.annotator,
       r.criterion, CAST(r.level AS {level_type}) AS level, cl.position AS level_position
FROM ratings r
JOIN questions q USING (question_id)
JOIN models m USING (model)
JOIN criterion_levels cl USING (criterion, level)
WHERE r.criterion = $criterion
ORDER BY r.rating_id
"""
LEVELS_SQL = """
SELECT CAST(level AS {level_type}) AS level FROM criterion_levels WHERE criterion = $criterion ORDER BY position
"""


@dataclass(frozen=True)
class Criterion:
    name: str
    levels: tuple[str, ...]  # worst first, as the database keeps them (text)
    kind: CriterionKind


def criteria(con: duckdb.DuckDBPyConnection) -> list[Criterion]:
    """The study's criteria in order, each with its levels worst first and its kind."""
    return [
        Criterion(name, tuple(levels), CRITERION_KIND_BY_NAME[kind])
        for name, kind, levels in con.sql(CRITERIA_SQL).fetchall()
    ]


def criterion_ratings(con: duckdb.DuckDBPyConnection, criterion: Criterion) -> pl.DataFrame:
    """The ratings of one criterion, one row per rated answer: the rating's question, language, question
    type, model (display name) and annotator, its `level` (of its kind's type: a whole number for a
    numbered criterion) and the level's `level_position` (1 for the worst)."""
    sql = LONG_SQL.format(level_type=criterion.kind.sql_type)
    return con.sql(sql, params={"criterion": criterion.name}).pl()


def typed_levels(con: duckdb.DuckDBPyConnection, criterion: Criterion) -> list:
    """The criterion's levels worst first, of its kind's type (as `criterion_ratings` gives a rating's)."""
    sql = LEVELS_SQL.format(level_type=criterion.kind.sql_type)
    return [level for (level,) in con.sql(sql, params={"criterion": criterion.name}).fetchall()]


def level_distribution(
    table: pl.DataFrame,
    column: str,
    levels: Sequence,
    by: Sequence[str],
    orders: dimensions.Orders,
    numeric: bool,
) -> pl.DataFrame:
    """Number (`n`) and share of each level of `column` (in `levels`' order, worst first) within each
    group of `by`, zero counts included; for numeric levels also the group's mean (`mean_<column>`)."""
    by = list(by)
    dtype = table.schema[column]
    level_frame = pl.DataFrame(
        {column: list(levels), "_position": list(range(len(levels)))},
        schema={column: dtype, "_position": pl.Int32},
    )
    counts = table.group_by(by + [column]).agg(n=pl.len())
    distribution = (
        table.select(by)
        .unique()
        .join(level_frame, how="cross")
        .join(counts, on=by + [column], how="left", nulls_equal=True)
        .with_columns(pl.col("n").fill_null(0).cast(pl.Int64))
        .with_columns(share=pl.col("n") / pl.col("n").sum().over(by))
    )
    if numeric:
        distribution = distribution.with_columns(
            (((pl.col(column) * pl.col("n")).sum() / pl.col("n").sum()).over(by)).alias(f"mean_{column}")
        )
    return distribution.pipe(dimensions.in_order, by + ["_position"], orders=orders).drop("_position")


def distributions(
    con: duckdb.DuckDBPyConnection, criterion: Criterion, orders: dimensions.Orders
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A criterion's levels by model (and question type, when the study has them) and by language and
    model, as `level_distribution` counts them (`n` ratings of each level), with the number of answers the
    group's ratings rate (`n_answers`: fewer than its ratings where several annotators rated an answer)."""
    table = criterion_ratings(con, criterion)
    levels = typed_levels(con, criterion)
    by_model = ["model", "question_type"] if orders.question_types else ["model"]

    def with_answers(by: list[str]) -> pl.DataFrame:
        # How many answers the group's ratings rate: fewer than its ratings when several annotators rated one.
        answers = table.group_by(by).agg(pl.col("answer_id").n_unique().cast(pl.Int64).alias("n_answers"))
        distribution = level_distribution(table, "level", levels, by, orders, criterion.kind.numeric)
        return distribution.join(answers, on=by, how="left", nulls_equal=True, maintain_order="left")

    by_language = ["language", "model"]
    return with_answers(by_model), with_level_tiers(with_answers(by_language), table, by_language)


def level_tiers(table: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Per group of `by` (which holds `model`; e.g. a language and a model): the models' significance tiers
    within each group of the other columns of `by`, from the ratings of `criterion_ratings`: the paired
    Wilcoxon signed-rank test of the level positions two models' answers to the same questions got (an
    answer rated by several annotators counts with the mean of its positions), Holm-adjusted, the higher
    level the better (`analyses.tiers`; the smallest detectable difference in level positions)."""
    by = list(by)
    cells = table.select(by).unique().sort(by)
    return tiers.with_tiers(cells, table, "level_position", by=by, better="higher", kind="numeric", scale=1.0)


def with_level_tiers(distribution: pl.DataFrame, table: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """`distribution` (`level_distribution` by `by`) with the tier columns of its groups (`level_tiers`),
    the same on every level's row of a group."""
    by = list(by)
    return distribution.join(level_tiers(table, by), on=by, how="left", maintain_order="left")


# ---------------------------------------------------------------- the mixed model of a criterion

OUTCOME = "level"
MIN_GROUPS = 3
# The ratings the models of a study's criteria are fitted on, in all (each criterion's share, at least
# `MIN_MODEL_RATINGS`): with a question's and an annotator's intercept, 2,000 ratings take R's `clmm` about
# half a minute of a core, and 6,000 a minute and a half (docs/methods.md, section 05).
MODEL_RATINGS = 4_000
MIN_MODEL_RATINGS = 1_000
SAMPLE_SEED = 38


def model_sample(table: pl.DataFrame, max_ratings: int, seed: int = SAMPLE_SEED) -> pl.DataFrame:
    """`table` (a criterion's ratings) when it has at most `max_ratings` rows; else the ratings of the
    questions a seeded random order of them takes until they reach `max_ratings` (every rating of a question
    it takes: the model's random intercept per question needs them together; so a question's ratings may
    pass the number), in the table's order. Linear in the ratings."""
    if table.height <= max_ratings:
        return table
    per_question = table.group_by("question_id").len().sort("question_id")
    order = np.random.default_rng(seed).permutation(per_question.height)
    before = pl.col("len").cum_sum().shift(1, fill_value=0)
    taken = per_question[order].filter(before < max_ratings)["question_id"]
    return table.filter(pl.col("question_id").is_in(taken.implode()))


def formula(table: pl.DataFrame) -> str:
    """The criterion's model: the level on the model, the question type when the ratings have several and
    tell it apart from the model (`_linked`), a random intercept per question, and one per annotator when
    there are three annotators or more (R's `ordinal` needs three levels of a grouping for its intercept)."""
    terms = ["model"]
    if table["question_type"].drop_nulls().n_unique() > 1 and _linked(table):
        terms.append("question_type")
    random = ["(1 | question)"]
    # ordinal::clmm fits a random intercept only for a grouping of three or more levels.
    if table["annotator"].n_unique() >= MIN_GROUPS:
        random.append("(1 | annotator)")
    return f"{OUTCOME} ~ {' + '.join(terms)} + {' + '.join(random)}"


def _linked(table: pl.DataFrame) -> bool:
    """Whether every model and question type of the ratings are linked through the (model, type) pairs
    rated. Ratings where one group of models answered only one group of types (a sample of few questions
    per language can draw them so) confound the two: R cannot tell a model's effect from its types', and
    emmeans then compares the models as nested in their types. Over the distinct pairs, not the rows."""
    pairs = table.select("model", "question_type").drop_nulls().unique().rows()
    if not pairs:
        return False
    neighbours: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for model, kind in pairs:
        neighbours.setdefault(("model", model), set()).add(("type", kind))
        neighbours.setdefault(("type", kind), set()).add(("model", model))
    reached, frontier = {("model", pairs[0][0])}, [("model", pairs[0][0])]
    while frontier:
        for node in neighbours[frontier.pop()] - reached:
            reached.add(node)
            frontier.append(node)
    return len(reached) == len(neighbours)


def model_frame(table: pl.DataFrame, criterion: Criterion, orders: dimensions.Orders) -> pd.DataFrame:
    """The ratings of `criterion_ratings` as R needs them: the level an ordered factor (worst first), the
    model a factor whose first level (the reference) is the first model in the study's order, the question
    type (reference: the first in the study's order), question and annotator as factors. R's term names
    carry the factor levels, so the models are numbered `m1`, `m2`, ... (`model_codes`)."""
    import pandas as pd

    codes = model_codes(table, orders)
    kinds = [kind for kind in orders.question_types if kind in set(table["question_type"].drop_nulls())]
    frame = table.select(
        level=pl.col("level_position").cast(pl.String),
        model=pl.col("model").replace_strict(codes),
        question_type=pl.col("question_type"),
        question=pl.col("question_id").cast(pl.String),
        annotator=pl.col("annotator"),
    ).to_pandas()
    frame[OUTCOME] = pd.Categorical(
        frame[OUTCOME], categories=[str(i) for i in range(1, len(criterion.levels) + 1)], ordered=True
    )
    frame["model"] = pd.Categorical(frame["model"], categories=list(codes.values()))
    frame["question_type"] = pd.Categorical(frame["question_type"], categories=kinds)
    for column in ("question", "annotator"):
        frame[column] = pd.Categorical(frame[column], categories=sorted(frame[column].unique()))
    return frame


def model_codes(table: pl.DataFrame, orders: dimensions.Orders) -> dict[str, str]:
    """Display name -> the name R's terms give the model (`m1` for the first rated model in the study's order)."""
    rated = [m for m in orders.models if m in set(table["model"])]
    return {name: f"m{i}" for i, name in enumerate(rated, start=1)}


@dataclass(frozen=True)
class CriterionModel:
    criterion: str
    reference: str  # the reference model (display name): the first rated model in the study's order
    n_rated: int  # the criterion's ratings; the model is fitted on `fit.n_obs` of them (`model_sample`)
    n_questions: tuple[int, int]  # the questions of the ratings fitted, and of all the criterion's ratings
    fit: r_models.OrdinalFit
    coefficients: pl.DataFrame  # each model against the reference, and the question types
    contrasts: pl.DataFrame  # every pair of models (emmeans, Tukey-adjusted)
    r2: pl.DataFrame  # Nakagawa's marginal and conditional R²
    tiers: pl.DataFrame  # each model's tier from the unadjusted contrasts, Holm within each round


def fit(
    rated: pl.DataFrame,
    criterion: Criterion,
    orders: dimensions.Orders,
    adjust: str = "tukey",
    max_ratings: int | None = None,
) -> CriterionModel:
    """The criterion's cumulative link mixed model (`formula`), its coefficients with 95% Wald intervals
    (log-odds of a higher level), the pairwise contrasts of the models and Nakagawa's R², with models and
    question types by their names; fitted on `model_sample(rated, max_ratings)` when `max_ratings` is given."""
    from ..stats import r_models
    from ..stats.intervals import z_value

    table = rated if max_ratings is None else model_sample(rated, max_ratings)
    frame = model_frame(table, criterion, orders)
    model_fit = r_models.fit_clmm(formula(table), frame)
    names = {code: name for name, code in model_codes(table, orders).items()}
    z = z_value()
    coefficients = (
        model_fit.coefficients.with_columns(
            variable=pl.when(pl.col("term").str.starts_with("model"))
            .then(pl.lit("model"))
            .otherwise(pl.lit("question_type")),
        )
        .with_columns(
            level=pl.when(pl.col("variable") == "model")
            .then(pl.col("term").str.strip_prefix("model").replace_strict(names, default=None))
            .otherwise(pl.col("term").str.strip_prefix("question_type")),
            ci_low=pl.col("estimate") - z * pl.col("std_error"),
            ci_high=pl.col("estimate") + z * pl.col("std_error"),
        )
        .select(
            pl.lit(criterion.name).alias("criterion"),
            "variable",
            "level",
            "estimate",
            "std_error",
            "ci_low",
            "ci_high",
            "z",
            "p",
        )
    )
    contrasts = r_models.pairwise_contrasts(model_fit, "model", adjust=adjust).with_columns(
        pl.col("level_a", "level_b").replace_strict(names)
    )
    contrasts = contrasts.with_columns(contrast=pl.col("level_a") + " - " + pl.col("level_b")).select(
        pl.lit(criterion.name).alias("criterion"), pl.all()
    )
    r2 = r_models.nakagawa_r2(model_fit)
    r2_table = pl.DataFrame(
        {
            "criterion": [criterion.name],
            "formula": [model_fit.formula],
            "n_ratings": [model_fit.n_obs],
            "n_ratings_rated": [rated.height],
            "r2_marginal": [r2.marginal],
            "r2_conditional": [r2.conditional],
            "var_fixed": [r2.var_fixed],
            "var_random": [r2.var_random],
            "converged": [model_fit.converged],
        }
    )
    reference = next(iter(model_codes(table, orders)))
    unadjusted = r_models.pairwise_contrasts(model_fit, "model", adjust="none").with_columns(
        pl.col("level_a", "level_b").replace_strict(names)
    )
    questions = (table["question_id"].n_unique(), rated["question_id"].n_unique())
    return CriterionModel(
        criterion.name,
        reference,
        rated.height,
        questions,
        model_fit,
        coefficients,
        contrasts,
        r2_table,
        model_tiers(criterion.name, reference, coefficients, unadjusted, orders),
    )


def model_tiers(
    criterion: str, reference: str, coefficients: pl.DataFrame, unadjusted: pl.DataFrame, orders: dimensions.Orders
) -> pl.DataFrame:
    """The models' significance tiers on a criterion over all languages, from its mixed model: the best is
    the model of the highest log-odds of a better level (the reference at 0), the tests the emmeans
    contrasts between two models unadjusted (`p_vs_best`), Holm-adjusted within each round of the tier
    rule (`stats.significance.tiers_from_pairs`)."""
    estimates = pl.concat(
        [
            pl.DataFrame({"model": [reference], "estimate": [0.0]}),
            coefficients.filter(pl.col("variable") == "model").select(pl.col("level").alias("model"), "estimate"),
        ]
    )
    found = significance.tiers_from_pairs(
        estimates.with_columns(criterion=pl.lit(criterion), mean=pl.col("estimate")),
        unadjusted.select(
            pl.lit(criterion).alias("criterion"),
            pl.col("level_a").alias("model_a"),
            pl.col("level_b").alias("model_b"),
            "p",
        ),
        group=["criterion"],
        model="model",
    )
    return (
        found.select("criterion", "model", "estimate", "tier", "p_vs_best", "p_adjusted")
        .with_columns(pl.col("estimate").round(4), pl.col("p_vs_best", "p_adjusted").round_sig_figs(4))
        .pipe(dimensions.in_order, ["model"], orders=orders)
    )


def fit_all(
    con: duckdb.DuckDBPyConnection,
    criteria_list: list[Criterion],
    orders: dimensions.Orders,
    adjust: str = "tukey",
    budget: int = MODEL_RATINGS,
) -> tuple[dict[str, CriterionModel], dict[str, str]]:
    """The model of every criterion with ratings of at least two models, and, for a criterion whose model
    could not be fitted, why (R's message, or too few models or levels). Each criterion's model is fitted
    on at most its share of `budget` ratings (and at least `MIN_MODEL_RATINGS`; `model_sample`)."""
    from ..stats import r_models

    share = max(MIN_MODEL_RATINGS, budget // max(1, len(criteria_list)))
    fitted, failed = {}, {}
    for criterion in criteria_list:
        table = criterion_ratings(con, criterion)
        if table["model"].n_unique() < 2 or table["level_position"].n_unique() < 2:
            failed[criterion.name] = (
                "its ratings cover fewer than two models or two levels, so there is nothing to compare"
            )
            continue
        try:
            fitted[criterion.name] = fit(table, criterion, orders, adjust, max_ratings=share)
        except r_models.RError as exc:
            failed[criterion.name] = str(exc)
    return fitted, failed


def tables(fitted: dict[str, CriterionModel]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The coefficients, the model contrasts, the R² and the models' tiers of every fitted criterion,
    each in one table."""
    parts = [(m.coefficients, m.contrasts, m.r2, m.tiers) for m in fitted.values()]
    if not parts:
        return pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), pl.DataFrame()
    concatenated = [pl.concat(list(column), how="vertical_relaxed") for column in zip(*parts)]
    return concatenated[0], concatenated[1], concatenated[2], concatenated[3]


def sampled(model: CriterionModel) -> str:
    """What a model was fitted on, when it is not every rating of its criterion (`model_sample`)."""
    if model.fit.n_obs == model.n_rated:
        return ""
    return (
        f", fitted on {model.fit.n_obs:,} of its {model.n_rated:,} ratings: every rating of a seeded random "
        f"sample of {model.n_questions[0]:,} of its {model.n_questions[1]:,} questions, since R's `clmm` on every "
        "rating would take longer than a report may; every other number counts every rating"
    )


def summary(con: duckdb.DuckDBPyConnection, fitted: dict[str, CriterionModel], failed: dict[str, str]) -> str:
    """The ratings of a study in words: how many, by whom, on which criteria; per criterion the model the
    annotators rated best (its mean level position), the contrasts between models that are significant,
    and the marginal R² of the model effect."""
    counts = con.sql(
        "SELECT count(DISTINCT rating_id), count(DISTINCT answer_id), count(DISTINCT annotator), "
        "count(DISTINCT q.language), count(DISTINCT criterion) FROM ratings JOIN questions q USING (question_id)"
    ).fetchall()[0]
    n_ratings, n_answers, n_annotators, n_languages, n_criteria = counts
    parts = [
        f"**{n_ratings:,} ratings** of {n_answers:,} answers by {n_annotators} annotator"
        f"{'s' if n_annotators != 1 else ''} in {n_languages} language{'s' if n_languages != 1 else ''}, "
        f"on {n_criteria} criteri{'a' if n_criteria != 1 else 'on'}."
    ]
    (most_raters,) = con.sql(
        "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM ratings GROUP BY answer_id, criterion)"
    ).fetchall()[0]
    if most_raters > 1:
        parts.append(
            f"Several annotators rated some answers (up to {most_raters} on a criterion): the distributions count "
            "an answer once per annotator who rated it."
        )
    for name, model in fitted.items():
        coefficients = model.coefficients.filter(pl.col("variable") == "model")
        significant = model.contrasts.filter(pl.col("p") < 0.05)
        pairs = [
            (row["level_a"], row["level_b"]) if row["estimate"] > 0 else (row["level_b"], row["level_a"])
            for row in significant.iter_rows(named=True)
        ]
        r2 = model.r2.row(0, named=True)
        best = coefficients.sort("estimate", descending=True).row(0, named=True) if coefficients.height else None
        text = f"On *{name}* (`{model.fit.formula}`{sampled(model)}), "
        if best is not None and best["estimate"] > 0:
            text += (
                f"{inert(best['level'])} has the highest odds of a better level ({best['estimate']:+.2f} log-odds "
                f"against {inert(model.reference)})"
            )
        else:
            text += f"no model has higher odds of a better level than {inert(model.reference)}"
        text += (
            f"; the contrasts (Tukey-adjusted, p < 0.05) prefer {'; '.join(f'{inert(a)} over {inert(b)}' for a, b in pairs)}"
            if pairs
            else "; no contrast between two models is significant (Tukey-adjusted, p < 0.05)"
        )
        text += f"; marginal R² {r2['r2_marginal']:.3f}, conditional {r2['r2_conditional']:.3f}."
        parts.append(text)
    parts += [f"No model of *{name}*: {why}." for name, why in failed.items()]
    return " ".join(parts)
