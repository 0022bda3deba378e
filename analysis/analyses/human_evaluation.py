"""The CaLMQA paper's human evaluation (docs/methods.md, section 05 Human evaluation; a paper-only section
of notebook 05): the rating tables and distributions, the cumulative link mixed models of the 300
native-speaker ratings, and their results worded as sentences. The generic analysis of any study's
ratings, criterion by criterion, is `analyses.ratings`.

The models themselves are fitted by `analysis.stats.r_models` (R's `ordinal`, `emmeans`; pymer4). Reference
levels follow the paper: Claude 3 Opus for the model, culturally specific for the question type, and
the verdict without a problem for factuality, omissions and language correctness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from ..core.text import inert
from ..io import calmqa as vocabulary
from ..stats import r_models
from ..stats.intervals import z_value
from . import dimensions
from . import ratings as generic_ratings

if TYPE_CHECKING:
    import pandas as pd

# The tables name a model by its display name (`ratings()`); the R models get its key, an identifier
# R's term names and emmeans' contrast labels keep as it is, and every table they give back names it
# by its display name again.
REFERENCE_MODEL = "claude-3-opus"
RATED_MODELS = (REFERENCE_MODEL,) + tuple(
    m.model for m in vocabulary.MODELS if m.ratings_name and m.model != REFERENCE_MODEL
)
DISPLAY_NAME = vocabulary.DISPLAY_NAMES
# The paper's orders of its models and question types, for its tables (imported models after, by name).
PAPER_ORDERS = dimensions.Orders(
    [m.display_name for m in vocabulary.MODELS], [], [], question_types=vocabulary.QUESTION_TYPES
)
MODEL_KEY = {name: key for key, name in DISPLAY_NAME.items()}
# Factor levels for R, reference level first.
LEVELS = {
    "model": RATED_MODELS,
    "question_type": vocabulary.QUESTION_TYPES,
    "factuality": vocabulary.ISSUE_LEVELS,
    "omissions": vocabulary.ISSUE_LEVELS,
    "language_correct": vocabulary.LANGUAGE_CORRECT_LEVELS,
}
SINGLE_PREDICTORS = ("model", "question_type", "factuality", "omissions", "language_correct")
# Table 23's last model: model and question type with their interaction (the model of Table 21).
INTERACTION = "model * question_type"
RANDOM_INTERCEPT = "(1 | annotator)"
BINARY_OUTCOMES = {"no_factuality_issue": ("factuality", "none"), "no_omission": ("omissions", "none")}

# The paper's four criteria side by side, one row per rated answer.
RATINGS_SQL = """
SELECT r.rating_id, q.language, r.annotator, q.question_type, m.display_name AS model,
       CAST(any_value(r.level) FILTER (r.criterion = 'rating') AS TINYINT) AS rating,
       any_value(r.level) FILTER (r.criterion = 'factuality') AS factuality,
       any_value(r.level) FILTER (r.criterion = 'omissions') AS omissions,
       any_value(r.level) FILTER (r.criterion = 'language_correct') AS language_correct
FROM ratings r
JOIN questions q USING (question_id)
JOIN models m USING (model)
GROUP BY r.rating_id, q.language, r.annotator, q.question_type, m.display_name
ORDER BY r.rating_id
"""


def ratings(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The human ratings, one row per rated answer with the paper's four criteria as columns (the model
    by its display name)."""
    return con.sql(RATINGS_SQL).pl()


DESIGN_SQL = """
WITH rated AS (  -- one row per rated answer (`ratings` is long: one row per criterion)
    SELECT r.rating_id, any_value(r.question_id) AS question_id, any_value(r.model) AS model,
           any_value(r.annotator) AS annotator, any_value(q.language) AS language,
           any_value(q.question_type) AS question_type, any_value(q.name) AS name
    FROM ratings r JOIN questions q USING (question_id)
    GROUP BY r.rating_id
), per_cell AS (
    SELECT model, question_type, count(*) AS n FROM rated GROUP BY ALL
), per_language AS (
    SELECT language, question_type, count(DISTINCT question_id) AS n FROM rated GROUP BY ALL
)
SELECT * FROM (VALUES
    ('rated_answers', 'rated answers', (SELECT count(*) FROM rated)),
    ('annotators', 'annotators', (SELECT count(DISTINCT annotator) FROM rated)),
    ('languages', 'languages', (SELECT count(DISTINCT language) FROM rated)),
    ('models', 'models rated', (SELECT count(DISTINCT model) FROM rated)),
    ('rated_questions', 'questions rated', (SELECT count(DISTINCT question_id) FROM rated)),
    ('answers_per_model_and_type_min', 'fewest rated answers of one model and question type',
        (SELECT min(n) FROM per_cell)),
    ('answers_per_model_and_type_max', 'most rated answers of one model and question type',
        (SELECT max(n) FROM per_cell)),
    ('specific_questions_per_language_min', 'fewest culturally specific questions rated in one language',
        (SELECT min(n) FROM per_language WHERE question_type = 'specific')),
    ('specific_questions_per_language_max', 'most culturally specific questions rated in one language',
        (SELECT max(n) FROM per_language WHERE question_type = 'specific')),
    ('agnostic_questions_per_language_min', 'fewest culturally agnostic questions rated in one language',
        (SELECT min(n) FROM per_language WHERE question_type = 'agnostic')),
    ('agnostic_questions_per_language_max', 'most culturally agnostic questions rated in one language',
        (SELECT max(n) FROM per_language WHERE question_type = 'agnostic')),
    ('agnostic_originals', 'culturally agnostic questions rated, as English originals (each in every language)',
        (SELECT count(DISTINCT name) FROM rated WHERE question_type = 'agnostic')),
    ('agnostic_translation_languages', 'languages other than English whose agnostic translations were rated',
        (SELECT count(DISTINCT language) FROM rated WHERE question_type = 'agnostic' AND language <> 'English'))
) AS counts(quantity, description, value)
"""


def design_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """What the human evaluation rated, in the counts the paper's text gives (`quantity`, `description`,
    `value`): answers, annotators, languages, questions, and the fewest and most per model and
    question type and per language."""
    return con.sql(DESIGN_SQL).pl()


def annotators_per_language(table: pl.DataFrame) -> pl.DataFrame:
    """How many annotators rated each language, and how many ratings each language has."""
    return (
        table.group_by("language").agg(n_annotators=pl.col("annotator").n_unique(), n_ratings=pl.len()).sort("language")
    )


def random_effect_note(table: pl.DataFrame) -> str:
    """Why the models have a random intercept per annotator only, computed from the ratings."""
    per_language = annotators_per_language(table)
    if per_language["n_annotators"].max() == 1:
        return (
            f"Each of the {len(per_language)} languages was rated by exactly one annotator, so annotator and "
            "language are the same grouping: the paper's annotators-within-language term would add a second "
            "variance that the data cannot tell apart from the first. The models below therefore have one "
            f"random intercept per annotator, `{RANDOM_INTERCEPT}`, and no separate language term."
        )
    several = per_language.filter(pl.col("n_annotators") > 1)["language"].to_list()
    return (
        f"Some languages ({', '.join(several)}) were rated by several annotators; the models below still use "
        f"one random intercept per annotator, `{RANDOM_INTERCEPT}`, as the default."
    )


def rating_distribution(table: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Number and share of each rating 1 to 5 within each group of `by` (zero counts included), and the
    mean rating."""
    return generic_ratings.level_distribution(table, "rating", vocabulary.RATING_LEVELS, by, PAPER_ORDERS, numeric=True)


def with_rating_tiers(con: duckdb.DuckDBPyConnection, distribution: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """`rating_distribution` by `by` (holding the model) with the models' significance tiers on the overall
    rating within each group of the other columns (e.g. a question type and language: Figure 26's panels),
    by the paired test of `ratings.level_tiers`."""
    rating = next(c for c in generic_ratings.criteria(con) if c.name == "rating")
    return generic_ratings.with_level_tiers(distribution, generic_ratings.criterion_ratings(con, rating), by)


def verdict_counts(table: pl.DataFrame, verdict: str) -> pl.DataFrame:
    """Tables 25 to 27: counts of each level of `verdict` by language, question type and model."""
    levels = LEVELS[verdict]
    unknown = set(table[verdict].unique().to_list()) - set(levels)
    if unknown:
        raise ValueError(f"unexpected {verdict} values {sorted(unknown)}; expected {levels}")
    keys = ["language", "question_type", "model"]
    counts = table.group_by(keys).agg(
        *[(pl.col(verdict) == level).sum().cast(pl.Int64).alias(level) for level in levels], n=pl.len()
    )
    return dimensions.in_order(counts, keys, orders=PAPER_ORDERS)


def expit(x: float) -> float:
    """The logistic function 1 / (1 + e^-x)."""
    return 1 / (1 + math.exp(-x))


def model_frame(table: pl.DataFrame) -> pd.DataFrame:
    """The ratings as the R models need them: the rating an ordered factor, predictors as factors whose
    first level is the reference, and the binary outcomes of the logistic models as 0/1."""
    import pandas as pd

    frame = table.with_columns(
        *[(pl.col(source) == value).cast(pl.Int64).alias(name) for name, (source, value) in BINARY_OUTCOMES.items()],
        model=pl.col("model").replace_strict(MODEL_KEY),
    ).to_pandas()
    frame["rating"] = pd.Categorical(
        frame["rating"].astype(str), categories=[str(r) for r in vocabulary.RATING_LEVELS], ordered=True
    )
    for variable, levels in LEVELS.items():
        frame[variable] = pd.Categorical(frame[variable], categories=list(levels))
    annotators = frame["annotator"].astype(str)
    frame["annotator"] = pd.Categorical(annotators, categories=sorted(annotators.unique()))
    return frame


def rating_formula(predictors: str) -> str:
    return f"rating ~ {predictors} + {RANDOM_INTERCEPT}"


def fit_rating_model(frame: pd.DataFrame, predictors: str) -> r_models.OrdinalFit:
    """A cumulative link mixed model of the rating on `predictors` (R formula terms) with the annotator intercept."""
    fit = r_models.fit_clmm(rating_formula(predictors), frame)
    if not fit.converged:
        raise RuntimeError(f"{fit.formula} did not converge: {fit.convergence}")
    return fit


def _split_term(term: str) -> list[tuple[str, str]]:
    """`modelgpt-4-turbo:question_typeagnostic` -> [("model", "gpt-4-turbo"), ("question_type", "agnostic")]."""
    parts = []
    for part in term.split(":"):
        variable = max((v for v in LEVELS if part.startswith(v) and part[len(v) :] in LEVELS[v]), key=len, default=None)
        if variable is None:
            raise ValueError(f"cannot read the term {term!r} as factor levels of {list(LEVELS)}")
        parts.append((variable, part[len(variable) :]))
    return parts


def answer_phrase(variable: str, level: str) -> str:
    """How a sentence names an answer with this level: "of GPT-4 Turbo", "with minor omissions"."""
    match variable:
        case "model":
            return f"of {DISPLAY_NAME.get(level, level)}"
        case "question_type":
            return f"to a culturally {level} question"
        case "factuality":
            return "with no factuality issues" if level == "none" else f"with {level} factuality issues"
        case "omissions":
            return "with no omissions" if level == "none" else f"with {level} omissions"
        case "language_correct":
            return {
                "yes": "in the question's language",
                "partially": "partially in the question's language",
                "no": "not in the question's language",
            }[level]
    raise ValueError(f"no wording for {variable}")


def level_name(variable: str, level: str) -> str:
    if variable == "model":
        return DISPLAY_NAME.get(level, level)
    if variable == "question_type":
        return f"culturally {level}"
    return f"{variable} {level}"


def adjustment_name(adjust: str) -> str:
    """An emmeans p-value adjustment as prose names it: "Tukey", "Bonferroni"."""
    return adjust.capitalize()


def _format_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def odds_sentence(variable: str, level_a: str, level_b: str, estimate: float, std_error: float, p: float) -> str:
    """A log-odds difference b of group A over group B in words: the odds ratio of a higher rating, said of
    the favoured group, with its 95% interval, and logistic(b), the percentage the paper reports for it.

    logistic(b) = OR / (1 + OR) is the odds ratio put on a 0-100 scale; the paper calls it a "chance of a
    higher rating", but it is not the probability that one answer is rated above another."""
    if estimate < 0:
        level_a, level_b, estimate = level_b, level_a, -estimate
    z = z_value()
    low, high = math.exp(estimate - z * std_error), math.exp(estimate + z * std_error)
    return (
        f"An answer {answer_phrase(variable, level_a)} has **{math.exp(estimate):.2f} times the odds** of a higher "
        f"rating than one {answer_phrase(variable, level_b)} (odds ratio, 95% CI {low:.2f} to {high:.2f}; log-odds "
        f"{estimate:.2f}, {_format_p(p)}); read as the paper reads an effect, logistic(b) = {expit(estimate):.0%}."
    )


def _odds_columns(table: pl.DataFrame) -> pl.DataFrame:
    """Odds ratio exp(b) with its Wald 95% interval, and logistic(b) in % (the paper's reading) both ways."""
    b, se, z = pl.col("estimate"), pl.col("std_error"), z_value()
    return table.with_columns(
        odds_ratio=b.exp(),
        odds_ratio_ci_low=(b - z * se).exp(),
        odds_ratio_ci_high=(b + z * se).exp(),
        logistic_pct=100 / (1 + (-b).exp()),
        logistic_reversed_pct=100 / (1 + b.exp()),
    )


def coefficient_table(fit: r_models.OrdinalFit) -> pl.DataFrame:
    """The fixed effects of a fit with what they compare, their odds ratios and their wording."""
    rows = []
    for row in fit.coefficients.iter_rows(named=True):
        parts = _split_term(row["term"])
        if len(parts) == 1:
            variable, level = parts[0]
            sentence = odds_sentence(variable, level, LEVELS[variable][0], row["estimate"], row["std_error"], row["p"])
        else:
            (variable, level), (by_variable, by_level) = parts
            sentence = (
                f"Interaction: for {level_name(variable, level)}, the log-odds difference of "
                f"{level_name(by_variable, by_level)} over {level_name(by_variable, LEVELS[by_variable][0])} "
                f"questions is {abs(row['estimate']):.2f} {'larger' if row['estimate'] > 0 else 'smaller'} than for "
                f"{level_name(variable, LEVELS[variable][0])} (ratio of odds ratios {math.exp(row['estimate']):.2f}, "
                f"{_format_p(row['p'])})."
            )
        rows.append(
            {
                "term": row["term"],
                "comparison": " x ".join(f"{level_name(v, lv)} vs {level_name(v, LEVELS[v][0])}" for v, lv in parts),
                "estimate": row["estimate"],
                "std_error": row["std_error"],
                "z": row["z"],
                "p": row["p"],
                "sentence": sentence,
            }
        )
    table = _odds_columns(pl.DataFrame(rows))
    return table.select(pl.exclude("sentence"), "sentence")


def contrast_table(
    fit: r_models.OrdinalFit, variable: str, by: str | None = None, adjust: str = "tukey", across_groups: bool = False
) -> pl.DataFrame:
    """Pairwise emmeans contrasts of `variable` (within each level of `by`) with their sentences."""
    contrasts = r_models.pairwise_contrasts(fit, variable, by=by, adjust=adjust, across_groups=across_groups)
    if "model" in (variable, by):
        contrasts = _with_display_names(contrasts, variable, by)
    sentences = [
        (f"{level_name(by, row[by])}: " if by else "")
        + odds_sentence(variable, row["level_a"], row["level_b"], row["estimate"], row["std_error"], row["p"])
        for row in contrasts.iter_rows(named=True)
    ]
    return _odds_columns(contrasts).with_columns(sentence=pl.Series(sentences, dtype=pl.String))


def _with_display_names(contrasts: pl.DataFrame, variable: str, by: str | None) -> pl.DataFrame:
    """emmeans' contrasts with each model named by its display name (their labels rebuilt from the levels)."""
    if by == "model":
        return contrasts.with_columns(model=pl.col("model").replace_strict(DISPLAY_NAME))
    named = contrasts.with_columns(pl.col("level_a", "level_b").replace_strict(DISPLAY_NAME))
    return named.with_columns(contrast=pl.col("level_a") + " - " + pl.col("level_b"))


def fit_table(fits: dict[str, r_models.OrdinalFit]) -> pl.DataFrame:
    """Log-likelihood, AIC, convergence and annotator variance of each fitted model."""
    return pl.DataFrame(
        [
            {
                "analysis": name,
                "formula": fit.formula,
                "n_obs": fit.n_obs,
                "log_likelihood": fit.log_likelihood,
                "aic": fit.aic,
                "annotator_variance": fit.random_effects.filter(pl.col("group") == "annotator")["variance"].sum(),
                "converged": fit.converged,
                "max_gradient": fit.convergence["max_gradient"],
                "condition_number_hessian": fit.convergence["condition_number_hessian"],
                "r_messages": "; ".join(fit.r_messages),
            }
            for name, fit in fits.items()
        ]
    )


def threshold_table(fits: dict[str, r_models.OrdinalFit]) -> pl.DataFrame:
    """The flexible thresholds (log-odds cut points between adjacent ratings) of each fitted model."""
    return pl.concat([fit.thresholds.select(pl.lit(name).alias("analysis"), pl.all()) for name, fit in fits.items()])


def bullets(sentences) -> str:
    """Sentences as a Markdown list."""
    return "\n".join(f"- {s}" for s in sentences)


def contrast_bullets(contrasts: pl.DataFrame, heading: str, across_groups: bool | None = None) -> str:
    """A contrast table (`contrast_table`) as Markdown: `heading` with the p-value adjustment the table
    used (for contrasts within each model, `across_groups` says whether it ran over all models'
    contrasts together), then a sentence per contrast."""
    scope = {None: "", True: " over all models", False: " within each model"}[across_groups]
    return f"{heading} ({adjustment_name(contrasts['adjust'][0])}-adjusted p values{scope}):\n\n" + bullets(
        contrasts["sentence"]
    )


def single_predictor_r2(
    frame: pd.DataFrame, predictors: Sequence[str] = (*SINGLE_PREDICTORS, INTERACTION)
) -> pl.DataFrame:
    """Table 23: one model per predictor, and last the model with model, question type and their
    interaction (Table 21's, whose R squared its caption prints); Nakagawa's marginal R squared (fixed
    effects alone) and conditional R squared (with the annotator intercept), in the paper's three decimals
    and unrounded. Sorted by the marginal R squared."""
    rows = []
    for predictor in predictors:
        fit = fit_rating_model(frame, predictor)
        r2 = r_models.nakagawa_r2(fit)
        rows.append(
            {
                "predictor": predictor,
                "r2_marginal": round(r2.marginal, 3),
                "r2_conditional": round(r2.conditional, 3),
                "r2_marginal_unrounded": r2.marginal,
                "r2_conditional_unrounded": r2.conditional,
                "var_fixed": r2.var_fixed,
                "var_annotator": r2.var_random,
                "var_residual": r2.var_residual,
                "log_likelihood": fit.log_likelihood,
                "aic": fit.aic,
            }
        )
    return pl.DataFrame(rows).sort("r2_marginal", "predictor", descending=[True, False])


def fit_issue_models(frame: pd.DataFrame) -> dict[str, r_models.LogisticFit]:
    """Mixed logistic regressions of "no factuality issue" and "no omission" on the question type."""
    return {
        outcome: r_models.fit_mixed_logistic(
            f"{outcome} ~ question_type + {RANDOM_INTERCEPT}",
            frame[[outcome, "question_type", "annotator"]],
        )
        for outcome in BINARY_OUTCOMES
    }


def issue_model_table(fits: dict[str, r_models.LogisticFit]) -> pl.DataFrame:
    """The fixed effects of the logistic models, one block per outcome."""
    return pl.concat(
        [fit.coefficients.select(pl.lit(outcome).alias("outcome"), pl.all()) for outcome, fit in fits.items()]
    )


def issue_model_sentences(fits: dict[str, r_models.LogisticFit]) -> list[str]:
    """Each logistic model in words: the chance of no problem for each question type (for an average annotator)."""
    sentences = []
    for outcome, fit in fits.items():
        source, _ = BINARY_OUTCOMES[outcome]
        what = "no factuality issues" if source == "factuality" else "no omissions"
        coefs = {r["term"]: r for r in fit.coefficients.iter_rows(named=True)}
        intercept = coefs["(Intercept)"]["estimate"]
        effect = coefs["question_typeagnostic"]
        sentences.append(
            f"An answer to a culturally specific question has a **{expit(intercept):.0%}** chance of {what}; "
            f"to a culturally agnostic question **{expit(intercept + effect['estimate']):.0%}** "
            f"(odds ratio {effect['odds_ratio']:.2f}, 95% CI {math.exp(effect['ci_low']):.2f} to "
            f"{math.exp(effect['ci_high']):.2f}, {_format_p(effect['p'])}; for an annotator of average leniency)."
        )
    return sentences


def summary(
    table: pl.DataFrame, model_contrasts: pl.DataFrame, question_type_fit: r_models.OrdinalFit, r2: pl.DataFrame
) -> str:
    """The findings in words, computed from the ratings and the fitted models."""
    means = table.group_by("model").agg(pl.col("rating").mean()).sort("rating", descending=True)
    best, worst = means.row(0, named=True), means.row(-1, named=True)
    significant = model_contrasts.filter(pl.col("p") < 0.05)
    ordered_pairs = [
        (row["level_a"], row["level_b"]) if row["estimate"] > 0 else (row["level_b"], row["level_a"])
        for row in significant.iter_rows(named=True)
    ]
    preferred = "; ".join(f"{inert(a)} over {inert(b)}" for a, b in ordered_pairs) or "none"
    qt = coefficient_table(question_type_fit).row(0, named=True)
    top = r2.filter(pl.col("predictor") != INTERACTION).row(0, named=True)
    interaction = r2.filter(pl.col("predictor") == INTERACTION).row(0, named=True)
    return (
        f"**{len(table)} ratings** by {table['annotator'].n_unique()} annotators in {table['language'].n_unique()} "
        f"languages. {inert(best['model'])} has the highest mean rating ({best['rating']:.2f} of 5), "
        f"{inert(worst['model'])} the lowest ({worst['rating']:.2f}). "
        f"Pairwise contrasts of the model CLMM ({adjustment_name(model_contrasts['adjust'][0])}-adjusted, "
        f"p < 0.05) prefer: {preferred}. "
        f"{qt['sentence']} "
        f"Of the single predictors, *{top['predictor']}* explains the most: marginal R² {top['r2_marginal']:.3f} "
        f"(conditional {top['r2_conditional']:.3f} with the annotator). The model with model, question type and "
        f"their interaction (Table 21) has marginal R² {interaction['r2_marginal']:.3f} and conditional "
        f"R² {interaction['r2_conditional']:.3f}."
    )
