"""Human ratings of any study, criterion by criterion (docs/methods.md, section 05; docs/studies.md): the
ratings in long form with each criterion's levels worst to best (`criteria`, `criterion_levels`), the
distribution of the levels by model and by language, and a cumulative link mixed model per criterion,

    level ~ model (+ question_type, when the study has question types) + (1 | question)
            (+ (1 | annotator), when three or more annotators rated the criterion)

fitted by R's `ordinal::clmm` (`stats.r_models`), with the emmeans contrasts between the models and
Nakagawa's R². The CaLMQA paper's own models of its four criteria are `analyses.human_evaluation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from ..core.text import inert
from . import dimensions

if TYPE_CHECKING:
    import pandas as pd

    from ..stats import r_models

CRITERIA_SQL = """
SELECT c.criterion, c.numeric, list(l.level ORDER BY l.position) AS levels
FROM criteria c JOIN criterion_levels l USING (criterion)
GROUP BY c.criterion, c.numeric, c.position
ORDER BY c.position
"""
LONG_SQL = """
SELECT r.rating_id, r.question_id, q.language, q.question_type, m.display_name AS model, r.annotator,
       r.criterion, r.level, cl.position AS level_position
FROM ratings r
JOIN questions q USING (question_id)
JOIN models m USING (model)
JOIN criterion_levels cl USING (criterion, level)
WHERE r.criterion = $criterion
ORDER BY r.rating_id
"""


@dataclass(frozen=True)
class Criterion:
    name: str
    levels: tuple[str, ...]  # worst first
    numeric: bool  # the levels are whole numbers


def criteria(con: duckdb.DuckDBPyConnection) -> list[Criterion]:
    """The study's criteria in order, each with its levels worst first."""
    return [Criterion(name, tuple(levels), numeric) for name, numeric, levels in con.sql(CRITERIA_SQL).fetchall()]


def criterion_ratings(con: duckdb.DuckDBPyConnection, criterion: Criterion) -> pl.DataFrame:
    """The ratings of one criterion, one row per rated answer: the rating's question, language, question
    type, model (display name) and annotator, its `level` (a whole number for a numeric criterion) and the
    level's `level_position` (1 for the worst)."""
    table = con.sql(LONG_SQL, params={"criterion": criterion.name}).pl()
    return table.with_columns(pl.col("level").cast(pl.Int64)) if criterion.numeric else table


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
        .join(counts, on=by + [column], how="left")
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
    model, as `level_distribution` counts them."""
    table = criterion_ratings(con, criterion)
    levels = [int(level) for level in criterion.levels] if criterion.numeric else list(criterion.levels)
    by_model = ["model", "question_type"] if orders.question_types else ["model"]
    return (
        level_distribution(table, "level", levels, by_model, orders, criterion.numeric),
        level_distribution(table, "level", levels, ["language", "model"], orders, criterion.numeric),
    )


# ---------------------------------------------------------------- the mixed model of a criterion

OUTCOME = "level"
MIN_GROUPS = 3


def formula(table: pl.DataFrame) -> str:
    """The criterion's model: the level on the model, the question type when the ratings have several,
    a random intercept per question, and one per annotator when there are three annotators or more (R's
    `ordinal` needs three levels of a grouping for its intercept)."""
    terms = ["model"]
    if table["question_type"].drop_nulls().n_unique() > 1:
        terms.append("question_type")
    random = ["(1 | question)"]
    # ordinal::clmm fits a random intercept only for a grouping of three or more levels.
    if table["annotator"].n_unique() >= MIN_GROUPS:
        random.append("(1 | annotator)")
    return f"{OUTCOME} ~ {' + '.join(terms)} + {' + '.join(random)}"


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
    fit: r_models.OrdinalFit
    coefficients: pl.DataFrame  # each model against the reference, and the question types
    contrasts: pl.DataFrame  # every pair of models (emmeans, Tukey-adjusted)
    r2: pl.DataFrame  # Nakagawa's marginal and conditional R²


def fit(table: pl.DataFrame, criterion: Criterion, orders: dimensions.Orders, adjust: str = "tukey") -> CriterionModel:
    """The criterion's cumulative link mixed model (`formula`), its coefficients with 95% Wald intervals
    (log-odds of a higher level), the pairwise contrasts of the models and Nakagawa's R², with models and
    question types by their names."""
    from ..stats import r_models
    from ..stats.intervals import z_value

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
            "r2_marginal": [r2.marginal],
            "r2_conditional": [r2.conditional],
            "var_fixed": [r2.var_fixed],
            "var_random": [r2.var_random],
            "converged": [model_fit.converged],
        }
    )
    reference = next(iter(model_codes(table, orders)))
    return CriterionModel(criterion.name, reference, model_fit, coefficients, contrasts, r2_table)


def fit_all(
    con: duckdb.DuckDBPyConnection, criteria_list: list[Criterion], orders: dimensions.Orders, adjust: str = "tukey"
) -> tuple[dict[str, CriterionModel], dict[str, str]]:
    """The model of every criterion with ratings of at least two models, and, for a criterion whose model
    could not be fitted, why (R's message, or too few models or levels)."""
    from ..stats import r_models

    fitted, failed = {}, {}
    for criterion in criteria_list:
        table = criterion_ratings(con, criterion)
        if table["model"].n_unique() < 2 or table["level_position"].n_unique() < 2:
            failed[criterion.name] = (
                "its ratings cover fewer than two models or two levels, so there is nothing to compare"
            )
            continue
        try:
            fitted[criterion.name] = fit(table, criterion, orders, adjust)
        except r_models.RError as exc:
            failed[criterion.name] = str(exc)
    return fitted, failed


def tables(fitted: dict[str, CriterionModel]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The coefficients, the model contrasts and the R² of every fitted criterion, each in one table."""
    parts = [(m.coefficients, m.contrasts, m.r2) for m in fitted.values()]
    if not parts:
        return pl.DataFrame(), pl.DataFrame(), pl.DataFrame()
    return tuple(pl.concat(list(column), how="vertical_relaxed") for column in zip(*parts))


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
    for name, model in fitted.items():
        coefficients = model.coefficients.filter(pl.col("variable") == "model")
        significant = model.contrasts.filter(pl.col("p") < 0.05)
        pairs = [
            (row["level_a"], row["level_b"]) if row["estimate"] > 0 else (row["level_b"], row["level_a"])
            for row in significant.iter_rows(named=True)
        ]
        r2 = model.r2.row(0, named=True)
        best = coefficients.sort("estimate", descending=True).row(0, named=True) if coefficients.height else None
        text = f"On *{name}* (`{model.fit.formula}`), "
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
