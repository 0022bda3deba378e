"""A study's automatic metrics (docs/methods.md, sections 04 and 06; docs/studies.md): each metric's
definition (`metrics`: which end is better, its range), its values per answer (`metric_values`), the
model x language cells of its mean with percentile bootstrap intervals, and the comparison of the
study's collections per language and metric (Fisher's exact test for a metric whose values are 0 and 1,
the two-sample Kolmogorov-Smirnov test otherwise, with Holm's correction for the number of tests).

The CaLMQA paper's score S and its parts (S_surf, S_fact, S_rel) are `analyses.scores`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl

from ..core.text import inert
from ..stats import comparisons, intervals, significance
from . import dimensions, ranking, tiers

# From this size on a metric's values are printed in three significant digits (`Metric.value_format`).
LARGE = 1e6
DEFINITIONS_SQL = "SELECT metric, higher_is_better, range_low, range_high FROM metrics ORDER BY position"
VALUES_SQL = """
SELECT a.answer_id, a.question_id, m.display_name AS model, q.language, q.question_type, q.collection, l.resource_level,
       mv.metric, mv.value
FROM metric_values mv
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
JOIN models m ON m.model = a.model
ORDER BY mv.metric, a.answer_id
"""
# The surface verdict as a 0/1 value per answer, compared between collections beside the metrics.
SURFACE_OK = "no_surface_issue"
SURFACE_SQL = f"""
SELECT s.answer_id, s.display_name AS model, s.language, s.question_type, s.collection, s.resource_level,
       '{SURFACE_OK}' AS metric, CAST(s.surface_ok AS DOUBLE) AS value
FROM surface_answers s
WHERE s.identified AND s.surface_ok IS NOT NULL
ORDER BY s.answer_id
"""


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool
    low: float | None
    high: float | None

    @property
    def better(self) -> str:
        """Which end is good, as `viz.theme.SCHEMES` names it."""
        return "higher" if self.higher_is_better else "lower"

    @property
    def decimals(self) -> int:
        """Decimals a cell prints: two for a metric within 1 of zero in width, one within 10, else none."""
        span = (self.high - self.low) if self.low is not None and self.high is not None else None
        return 2 if span is None or span <= 1 else 1 if span <= 10 else 0

    def value_format(self, values, extra_decimals: int = 0) -> str:
        """How a cell (or, with one `extra_decimals`, a sentence) prints the metric's `values` (a format of
        Python and of d3 alike): its `decimals`, or three significant digits once a value reaches a million in
        size (a metric without a range may hold any number up to the largest float, which fixed decimals would
        print in 309 digits)."""
        finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
        return ".3g" if finite and max(finite) >= LARGE else f".{self.decimals + extra_decimals}f"


def definitions(con: duckdb.DuckDBPyConnection) -> list[Metric]:
    """The study's metrics, in its order."""
    return [Metric(*row) for row in con.sql(DEFINITIONS_SQL).fetchall()]


def values(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every metric value with its answer's model (display name), language, question type, collection and
    resource level."""
    return con.sql(VALUES_SQL).pl()


def cells(
    metric_values: pl.DataFrame,
    metric: Metric,
    orders: dimensions.Orders,
    by: tuple[str, ...] = ("model", "language", "question_type"),
    *,
    min_valid: int = intervals.MIN_VALID,
    n_resamples: int = intervals.N_RESAMPLES,
    seed: int = intervals.SEED,
) -> pl.DataFrame:
    """The heatmap cells of one metric: its mean per group of `by` (the model x language cells, a panel per
    question type), with n and the 95% percentile bootstrap interval over answers; blank (null) with
    fewer than `min_valid` values. Rows in the study's order."""
    grouping = [column for column in by if column != "question_type" or orders.question_types]
    chosen = metric_values.filter(pl.col("metric") == metric.name)
    table = intervals.bootstrap_cells(
        chosen, grouping, "value", min_valid=min_valid, n_resamples=n_resamples, seed=seed
    )
    decimals = metric.decimals + 1
    table = (
        table.rename({"n_answers": "n_values"})
        .with_columns(pl.col("mean", "ci_low", "ci_high").round(decimals), metric=pl.lit(metric.name))
        .select("metric", *grouping, "n_values", "mean", "ci_low", "ci_high")
        .pipe(dimensions.in_order, grouping, orders=orders)
    )
    if "model" not in grouping or "question_id" not in chosen.columns:
        return table
    # The models' significance tiers within each group of the other columns (`analyses.tiers`).
    return tiers.with_tiers(
        table, chosen, "value", by=grouping, better=metric.better, shown=pl.col("mean").is_not_null(), scale=1.0
    )


def by_model(
    metric_values: pl.DataFrame, metric_list: list[Metric], orders: dimensions.Orders, **options
) -> pl.DataFrame:
    """Each metric per model (and question type), the answers of every language pooled, with the bootstrap
    interval of its mean."""
    by = ("model", "question_type") if orders.question_types else ("model",)
    parts = [cells(metric_values, metric, orders, by, **options) for metric in metric_list]
    return pl.concat(parts) if parts else pl.DataFrame()


def pooled(metric_values: pl.DataFrame) -> pl.DataFrame:
    """Each metric's mean per model over all its values (every language and question type; no cell left
    out for having too few values): the numbers the summary's best and worst models are named by."""
    return (
        metric_values.group_by("metric", "model")
        .agg(pl.col("value"), pl.len().alias("n"))
        .with_columns(mean=pl.col("value").map_elements(intervals.mean, return_dtype=pl.Float64))
        .drop("value")
        .sort("metric", "mean", "model")
    )


def summary(metric_values: pl.DataFrame, metric_list: list[Metric], table: pl.DataFrame, surface_note: str) -> str:
    """The study's answer scores in words: the surface component (`surface_note`), then each metric's
    best and worst model."""
    parts = [surface_note]
    if not metric_list:
        return " ".join(parts + ["The study defines no automatic metric (`[metrics.NAME]` in study.toml)."])
    if metric_values.is_empty():
        return " ".join(parts + ["The study has no metric values (metrics.csv): no metric heatmaps."])
    means = pooled(metric_values)
    for metric in metric_list:
        rows = means.filter(pl.col("metric") == metric.name).sort("model")
        if rows.height < 1:
            parts.append(f"*{metric.name}* has no values.")
            continue
        spec = metric.value_format(rows["mean"], extra_decimals=1)
        n = dict(rows.select("model", "n").iter_rows())
        found = ranking.ends(rows.select("model", "mean").iter_rows(), spec)
        best, worst = (found.top, found.high), (found.bottom, found.low)
        if not metric.higher_is_better:
            best, worst = worst, best
        if rows.height == 1:
            (model,) = found.top
            parts.append(
                f"On *{metric.name}* ({metric.better} is better) {inert(model)} is the only model with values "
                f"(mean {found.high:{spec}} over {_answers(n[model])})."
            )
        elif found.tied:
            parts.append(
                f"On *{metric.name}* ({metric.better} is better) every model has the same mean "
                f"({found.high:{spec}}): no model scores better than another."
            )
        else:
            (names, value), (others, other) = best, worst
            answers = f" over {_answers(n[names[0]])}" if len(names) == 1 else ""
            parts.append(
                f"On *{metric.name}* ({metric.better} is better) {ranking.listed(names)} "
                f"{'scores' if len(names) == 1 else 'tie as the'} best (mean {value:{spec}}{ranking.each(names)}{answers}), "
                f"{ranking.listed(others)} {'' if len(others) == 1 else 'tie as the '}worst ({other:{spec}}{ranking.each(others)})."
            )
    return " ".join(parts)


def _answers(n: int) -> str:
    return f"{n:,} answer{'s' if n != 1 else ''}"


# ---------------------------------------------------------------- the collections compared

HOLM = "Holm"


def comparison_values(con: duckdb.DuckDBPyConnection, metric_values: pl.DataFrame) -> pl.DataFrame:
    """What the collections are compared on: the surface verdict (1 for an answer without surface issue,
    0 with one; the answers of a language that is not identified left out) and every metric value."""
    surface = con.sql(SURFACE_SQL).pl()
    return pl.concat([surface, metric_values.select(surface.columns)])


def collection_tests(compared: pl.DataFrame, orders: dimensions.Orders) -> pl.DataFrame:
    """Per language and metric, the study's first two collections compared (in its order): both numbers
    of values and means, their difference (the first's minus the second's), the test (Fisher's exact test
    of the two shares for a metric whose values are all 0 or 1, else the two-sample Kolmogorov-Smirnov
    test with its D), the p value, and the p value corrected by Holm's method over every test of the
    table. Nulls where a collection has no value in a language."""
    first, second = orders.collections[:2]
    rows = []
    metrics = compared["metric"].unique(maintain_order=True).to_list()
    binary = dict(compared.group_by("metric").agg(pl.col("value").is_in([0.0, 1.0]).all()).iter_rows())
    # Each language's values of each metric and collection, gathered once (not filtered per language).
    groups = (
        compared.filter(pl.col("collection").is_in([first, second]))
        .group_by("metric", "language", "collection")
        .agg(pl.col("value"))
    )
    samples = {
        (metric, language, collection): np.asarray(values, dtype=float)
        for metric, language, collection, values in groups.iter_rows()
    }
    present = set(zip(compared["metric"].to_list(), compared["language"].to_list()))
    empty = np.array([], dtype=float)
    for metric in metrics:
        for language in [language for language in orders.languages if (metric, language) in present]:
            a = samples.get((metric, language, first), empty)
            b = samples.get((metric, language, second), empty)
            row = {
                "metric": metric,
                "language": language,
                "collection_a": first,
                "collection_b": second,
                "n_a": len(a),
                "n_b": len(b),
                "mean_a": intervals.mean(a) if len(a) else None,
                "mean_b": intervals.mean(b) if len(b) else None,
                "test": "Fisher's exact test" if binary[metric] else "two-sample Kolmogorov-Smirnov test",
                "difference": None,
                "ks_d": None,
                "p_value": None,
            }
            if len(a) and len(b):
                # (beyond the largest float, as for means of -1.7e308 and 1.7e308, the difference is infinite)
                row["difference"] = intervals.mean(a) - intervals.mean(b)
                if binary[metric]:
                    _, row["p_value"] = comparisons.fisher_exact(a, b)
                else:
                    row["ks_d"], row["p_value"] = comparisons.ks_two_sample(a, b)
            rows.append(row)
    schema = {
        "metric": pl.String,
        "language": pl.String,
        "collection_a": pl.String,
        "collection_b": pl.String,
        **comparisons.RESULT_SCHEMA,
    }
    table = pl.DataFrame(rows, schema=schema)
    # (a comparison not run has no p value: NaN to Holm, which leaves it out of the family, and null again after)
    adjusted = significance.holm(table["p_value"].cast(pl.Float64).fill_null(math.nan).to_numpy())
    return table.with_columns(p_holm=pl.Series(adjusted, dtype=pl.Float64, nan_to_null=True))


def collection_title(orders: dimensions.Orders) -> str:
    """The title of a study's comparison of its collections."""
    if len(orders.collections) < 2:
        return "Comparing the collections"
    first, second = (inert(orders.collection_labels.get(c, c)) for c in orders.collections[:2])
    return f"Comparing the collections: {first} against {second} questions"


def collection_summary(tests: pl.DataFrame, orders: dimensions.Orders, alpha: float = 0.05) -> str:
    """The comparison of the collections in words: how many tests, how many significant after Holm's
    correction, and per metric the largest difference between the collections' means (the metrics' scales
    differ, so differences are compared within a metric only), ties said as ties."""
    first, second = (inert(orders.collection_labels.get(c, c)) for c in orders.collections[:2])
    run = tests.filter(pl.col("p_value").is_not_null())
    if run.is_empty():
        return f"No language has values in both {first} and {second} questions: nothing could be compared."
    significant = run.filter(pl.col("p_holm") < alpha)
    parts = [
        f"{first[:1].upper() + first[1:]} against {second} questions: {run.height} tests (one per language and "
        f"metric with values in both collections), **{significant.height}** of them significant at "
        f"{alpha} after Holm's correction for the {run.height} tests."
    ]
    largest = []
    for (metric,), rows in run.group_by("metric", maintain_order=True):
        found = ranking.ends(((r["language"], abs(r["difference"])) for r in rows.iter_rows(named=True)), ".3g")
        name = f"on *{inert(str(metric))}*"
        if format(found.high, ".3g") == "0":
            largest.append(f"{name}, none (the means are the same in every language)")
        elif len(found.top) > 1:
            largest.append(
                f"{name}, {found.high:.3g} in {len(found.top)} languages alike ({ranking.listed(found.top)})"
            )
        else:
            row = rows.filter(pl.col("language") == found.top[0]).row(0, named=True)
            largest.append(
                f"{name}, in {inert(row['language'])} ({row['mean_a']:.3g} against {row['mean_b']:.3g}, {row['test']}, "
                f"p = {row['p_value']:.3g}, Holm-corrected {row['p_holm']:.3g})"
            )
    parts.append(
        "The largest difference between the collections' means, within each metric (their scales differ): "
        + "; ".join(largest)
        + "."
    )
    return " ".join(parts)
