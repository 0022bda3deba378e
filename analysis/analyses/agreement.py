"""Agreement for report 05 (docs/methods.md, section Agreement): between the annotators (Krippendorff's
alpha per criterion, over all languages and per language, and Cohen's weighted kappa with exactly two
annotators), and between each automatic metric or surface verdict and the annotators (Kendall's tau-b
per language and criterion against the mean human rating of the same answers; for CaLMQA, the suite's
language verdict against the annotators' `language_correct`). Statistics: `stats.agreement`.

An answer is a model's answer to a question; the annotators' levels are their positions, worst first.
"""

from __future__ import annotations

import duckdb
import polars as pl

from .. import store
from ..core.scalars import number
from ..core.text import inert
from ..stats import agreement, intervals
from . import dimensions, metrics, ratings, surface

ALL_LANGUAGES = "all languages"
# A tau or alpha over fewer answers than this is not shown (the heatmap's "too few answers").
MIN_ANSWERS = intervals.MIN_VALID
TOO_FEW_ANSWERS = "too few answers"
ONE_VALUE = "one value only"
# Alpha below this: the criterion's ratings are not reliable enough to draw conclusions from (Krippendorff's
# own rule: 0.667 the lowest acceptable for tentative conclusions, 0.8 for firm ones).
ALPHA_TENTATIVE, ALPHA_FIRM = 0.667, 0.8


def measure(criterion: ratings.Criterion) -> str:
    """The level of measurement of a criterion's alpha: ordinal (its levels are ordered worst to best, as
    every study lists them), nominal for two levels (where the two are the same)."""
    return "ordinal" if len(criterion.levels) > 2 else "nominal"


def annotator_agreement(
    con: duckdb.DuckDBPyConnection,
    criteria: list[ratings.Criterion],
    orders: dimensions.Orders,
    n_resamples: int = agreement.N_RESAMPLES,
    seed: int = intervals.SEED,
) -> pl.DataFrame:
    """Per criterion, over all languages and per language: Krippendorff's alpha of the answers rated by
    two or more annotators, its bootstrap interval, Cohen's weighted kappa where exactly two annotators
    rated them, and the counts behind each value (answers rated twice or more, pairs of ratings,
    annotators). Empty when no answer was rated by two annotators."""
    parts = [
        criterion_agreement(ratings.criterion_ratings(con, criterion), criterion, orders, n_resamples, seed)
        for criterion in criteria
    ]
    return pl.concat(parts) if parts else criterion_agreement(pl.DataFrame(), None, orders)


def criterion_agreement(
    table: pl.DataFrame,
    criterion: ratings.Criterion | None,
    orders: dimensions.Orders,
    n_resamples: int = agreement.N_RESAMPLES,
    seed: int = intervals.SEED,
) -> pl.DataFrame:
    """`annotator_agreement` of one criterion from its ratings (`ratings.criterion_ratings`: question,
    model, language, annotator and `level_position`), over all languages and per language in the study's
    order; a scope without an answer rated twice has no row."""
    rows = []
    if criterion is not None and table.height:
        table = table.with_columns(
            unit=pl.concat_str(pl.col("question_id").cast(pl.String), pl.lit("|"), pl.col("model")),
            position=pl.col("level_position") - 1,
        )
        by_language = table.partition_by("language", as_dict=True)
        scopes = [(ALL_LANGUAGES, table)] + [
            (language, by_language[(language,)]) for language in orders.languages if (language,) in by_language
        ]
        for scope, part in scopes:
            result = agreement.annotator_agreement(
                part,
                unit="unit",
                annotator="annotator",
                level="position",
                n_levels=len(criterion.levels),
                ordinal=measure(criterion) == "ordinal",
                n_resamples=n_resamples,
                # Each scope its own resamples (`intervals.cell_seed`): one seed for all would give every
                # language the same draws.
                seed=intervals.cell_seed(seed, (criterion.name, scope)),
            )
            if result["n_answers"] == 0:
                continue
            rows.append({"criterion": criterion.name, "language": scope, "measure": measure(criterion), **result})
    schema = {"criterion": pl.String, "language": pl.String, "measure": pl.String, **agreement.ALPHA_SCHEMA}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.col("alpha", "ci_low", "ci_high", "kappa").round(3))


def annotator_summary(table: pl.DataFrame, criteria: list[ratings.Criterion]) -> str:
    """Annotator agreement in words a reader can act on: where alpha is too low to rely on the ratings."""
    overall = table.filter(pl.col("language") == ALL_LANGUAGES)
    if overall.is_empty():
        return (
            "No answer was rated by two or more annotators, so the annotators' agreement cannot be measured "
            f"({'one annotator per answer' if criteria else 'no ratings'}): every rating is one person's "
            "judgement. To measure it, have a second annotator rate a sample of the answers (a few hundred "
            "answers give alpha to about +-0.1)."
        )
    parts = []
    for row in overall.iter_rows(named=True):
        alpha, name = row["alpha"], inert(row["criterion"])
        counts = f"{row['n_answers']:,} answers, {row['n_pairs']:,} pairs of ratings, {row['n_annotators']} annotators"
        if alpha is None:
            parts.append(f"*{name}*: alpha is undefined ({counts}): the annotators used one level only.")
            continue
        interval = f" (95% interval {row['ci_low']:.2f} to {row['ci_high']:.2f})" if row["ci_low"] is not None else ""
        if alpha >= ALPHA_FIRM:
            verdict = "reliable enough for firm conclusions (at least 0.8)"
        elif alpha >= ALPHA_TENTATIVE:
            verdict = (
                "enough for tentative conclusions only (0.667 to 0.8): read small differences between models with care"
            )
        else:
            verdict = (
                "too low to rely on (below 0.667): differences between models on this criterion may be the "
                "annotators' rather than the models'; clarify the guidelines or add annotators"
            )
        kappa = f"; Cohen's weighted kappa {row['kappa']:.2f}" if row["kappa"] is not None else ""
        parts.append(f"*{name}*: alpha **{alpha:.2f}**{interval}{kappa}, over {counts}: {verdict}.")
        low = table.filter(
            (pl.col("criterion") == row["criterion"])
            & (pl.col("language") != ALL_LANGUAGES)
            & (pl.col("alpha") < ALPHA_TENTATIVE)
        )
        if low.height:
            parts[-1] += (
                " Below 0.667 in "
                + ", ".join(
                    f"{inert(r['language'])} ({r['alpha']:.2f}, {r['n_answers']} answers)"
                    for r in low.iter_rows(named=True)
                )
                + "."
            )
    return "\n".join(f"- {p}" for p in parts)


# ---------------------------------------------------------------- metric-human agreement


def mean_human_ratings(con: duckdb.DuckDBPyConnection, criteria: list[ratings.Criterion]) -> pl.DataFrame:
    """Per rated answer and criterion: its language, model (display name), question and the mean of its
    annotators' level positions (1 the worst), with the number of ratings."""
    parts = [
        ratings.criterion_ratings(con, criterion)
        .group_by("language", "model", "question_id")
        .agg(mean_rating=pl.col("level_position").cast(pl.Float64).mean(), n_ratings=pl.len())
        .with_columns(criterion=pl.lit(criterion.name))
        for criterion in criteria
    ]
    schema = {
        "language": pl.String,
        "model": pl.String,
        "question_id": pl.Int64,
        "mean_rating": pl.Float64,
        "n_ratings": pl.UInt32,
        "criterion": pl.String,
    }
    return pl.concat(parts) if parts else pl.DataFrame(schema=schema)


def verdict_title(key: str) -> str:
    """A surface metric's name as a verdict on one answer, for the agreement heatmap's rows: its share's
    title without the "%" ("% in the correct language" -> "answer in the correct language")."""
    return "answer " + surface.METRICS[key].title.removeprefix("% ")


def automatic_values(
    con: duckdb.DuckDBPyConnection,
) -> tuple[pl.DataFrame, dict[str, str], dict[str, str], list[tuple[str, str]]]:
    """Every automatic value of a model answer, long: its model (display name), question, `metric` and
    `value` (the surface verdicts as 0/1, the study's metrics); each metric's better end and its title;
    and the (metric, language) pairs left out: a verdict that needs the language verdict, in a language
    not identified reliably (where the heatmaps draw it *not identified*)."""
    better, titles = {}, {}
    parts = []
    not_identified: list[tuple[str, str]] = []
    if store.table_exists(con, "answer_surface"):
        verdicts = surface.answer_verdicts(con)
        unreliable = verdicts.filter(pl.col("unreliable"))["language"].unique().sort().to_list()
        for key, spec in surface.METRICS.items():
            better[key], titles[key] = spec.better, verdict_title(key)
            if spec.needs_language:
                not_identified += [(key, language) for language in unreliable]
            judged = pl.col(key).is_not_null() & ~(pl.col("unreliable") & pl.lit(spec.needs_language))
            parts.append(
                verdicts.filter(judged).select(
                    "model", "question_id", metric=pl.lit(key), value=pl.col(key).cast(pl.Float64)
                )
            )
    definitions = {m.name: m for m in metrics.definitions(con)}
    if definitions:
        values = metrics.values(con)
        for name, metric in definitions.items():
            better[name], titles[name] = metric.better, name
        parts.append(values.select("model", "question_id", "metric", pl.col("value").cast(pl.Float64)))
    schema = {"model": pl.String, "question_id": pl.Int64, "metric": pl.String, "value": pl.Float64}
    return (pl.concat(parts) if parts else pl.DataFrame(schema=schema)), better, titles, not_identified


def metric_human_agreement(
    con: duckdb.DuckDBPyConnection,
    criteria: list[ratings.Criterion],
    orders: dimensions.Orders,
    n_resamples: int = agreement.N_RESAMPLES,
    seed: int = intervals.SEED,
    min_answers: int = MIN_ANSWERS,
) -> pl.DataFrame:
    """Per criterion, automatic metric and language: Kendall's tau-b between the metric's value of each
    rated answer and its mean human rating, oriented so that a positive tau is agreement (a metric where
    lower is better has its sign turned), with its bootstrap interval and the number of answers; a
    `status` (too few answers) where fewer than `min_answers` answers have both; `metric_title` the
    metric's name for people (a surface verdict's title, a study's metric's own name)."""
    humans = mean_human_ratings(con, criteria)
    values, better, titles, not_identified = automatic_values(con)
    joined = humans.join(values, on=["model", "question_id"])
    rated = humans.select("criterion", "language").unique(maintain_order=True)
    rows = [
        {"criterion": criterion, "metric": metric, "language": language, "n_answers": 0, "not_identified": True}
        for criterion, language in rated.iter_rows()
        for metric, left_out in not_identified
        if left_out == language
    ]
    for (criterion, metric, language), part in joined.group_by("criterion", "metric", "language", maintain_order=True):
        sign = -1.0 if better.get(str(metric)) == "lower" else 1.0
        x, y = (sign * part["value"]).to_numpy(), part["mean_rating"].to_numpy()
        enough = part.height >= min_answers
        tau = agreement.kendall_tau_b(x, y) if enough else None
        cell = intervals.cell_seed(seed, (criterion, metric, language))
        low, high = agreement.tau_interval(x, y, n_resamples, cell) if enough else (None, None)
        rows.append(
            {
                "criterion": criterion,
                "metric": metric,
                "language": language,
                "n_answers": part.height,
                "tau_b": tau,
                "ci_low": low,
                "ci_high": high,
                "not_identified": False,
            }
        )
    schema = {
        "criterion": pl.String,
        "metric": pl.String,
        "language": pl.String,
        "not_identified": pl.Boolean,
        "n_answers": pl.Int64,
        "tau_b": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
    }
    table = pl.DataFrame(rows, schema=schema).with_columns(pl.col("tau_b", "ci_low", "ci_high").fill_nan(None))
    criterion_order = {c.name: i for i, c in enumerate(criteria)}
    metric_order = {m: i for i, m in enumerate(better)}
    return (
        table.with_columns(
            metric_title=pl.col("metric").replace_strict(titles, default=pl.col("metric")),
            status=pl.when(pl.col("not_identified"))
            .then(pl.lit(surface.NOT_IDENTIFIED))
            .when(pl.col("n_answers") < min_answers)
            .then(pl.lit(TOO_FEW_ANSWERS))
            .when(pl.col("tau_b").is_null())
            .then(pl.lit(ONE_VALUE)),
            language_label=pl.col("language").replace_strict(
                {language: orders.label(language) for language in orders.languages}, default=pl.col("language")
            ),
            _c=pl.col("criterion").replace_strict(criterion_order, return_dtype=pl.Int32),
            _m=pl.col("metric").replace_strict(metric_order, return_dtype=pl.Int32),
            _l=pl.col("language").replace_strict(
                {language: i for i, language in enumerate(orders.languages)},
                default=len(orders.languages),
                return_dtype=pl.Int32,
            ),
        )
        .with_columns(pl.col("tau_b", "ci_low", "ci_high").round(3))
        .sort("_c", "_m", "_l")
        .drop("_c", "_m", "_l", "not_identified")
    )


def metric_human_summary(table: pl.DataFrame) -> str:
    """Metric-human agreement in words: per criterion and metric, the languages where the metric agrees
    with the annotators (tau's interval above 0) and where it does not."""
    if table.is_empty():
        return (
            "No automatic metric or surface verdict shares answers with the human ratings, so how far the "
            "metrics agree with the annotators cannot be measured."
        )
    parts = []
    shown = table.filter(pl.col("tau_b").is_not_null())
    for (criterion, metric), part in shown.group_by("criterion", "metric_title", maintain_order=True):
        agrees = part.filter(pl.col("ci_low") > 0)
        against = part.filter(pl.col("ci_high") < 0)
        unclear = part.height - agrees.height - against.height
        words = f"*{inert(str(metric))}* against *{inert(str(criterion))}*: tau-b's interval is above 0 in {agrees.height} of {part.height} languages"
        if against.height:
            words += f", below 0 in {', '.join(map(inert, against['language']))}"
        if unclear:
            words += f"; in {unclear} it includes 0 (too few answers, or no agreement: use the human ratings there)"
        median = number(part["tau_b"].median())
        # The answers behind each value are in the heatmap's tooltip and the CSV (`n_answers`), per language.
        parts.append(words + f" (median tau-b {median:.2f}).")
    thin = table.filter(pl.col("status") == TOO_FEW_ANSWERS).height
    if thin:
        parts.append(f"{thin} cells have fewer than {MIN_ANSWERS} rated answers with a value and are not shown.")
    unidentified = table.filter(pl.col("status") == surface.NOT_IDENTIFIED)
    if unidentified.height:
        parts.append(
            f"{unidentified.height} cells are in languages not identified reliably "
            f"({', '.join(map(inert, unidentified['language'].unique(maintain_order=True)))}), where the verdicts "
            "that need the language verdict have none."
        )
    constant = table.filter(pl.col("status") == ONE_VALUE).height
    if constant:
        parts.append(
            f"In {constant} cells the metric or the mean rating takes one value only (e.g. every rated answer in "
            "the right language): tau-b is undefined there, and the metric cannot be checked against the annotators."
        )
    return "\n".join(f"- {p}" for p in parts)
