"""A study's automatic metrics (docs/methods.md, sections 04 and 06; docs/studies.md): each metric's
definition (`metrics`: which end is better, its range), its values per answer (`metric_values`), the
model x language cells of its mean with percentile bootstrap intervals, and the comparison of the
study's collections per language and metric (Fisher's exact test for a metric whose values are 0 and 1,
the two-sample Kolmogorov-Smirnov test otherwise, with Holm's correction for the number of tests).

The CaLMQA paper's score S and its parts (S_surf, S_fact, S_rel) are `analyses.scores`.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl

from ..core.text import inert
from ..stats import comparisons, intervals
from . import dimensions

DEFINITIONS_SQL = "SELECT metric, higher_is_better, range_low, range_high FROM metrics ORDER BY position"
VALUES_SQL = """
SELECT a.answer_id, m.display_name AS model, q.language, q.question_type, q.collection, l.resource_level,
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
    return (
        table.rename({"n_answers": "n_values"})
        .with_columns(pl.col("mean", "ci_low", "ci_high").round(decimals), metric=pl.lit(metric.name))
        .select("metric", *grouping, "n_values", "mean", "ci_low", "ci_high")
        .pipe(dimensions.in_order, grouping, orders=orders)
    )


def by_model(
    metric_values: pl.DataFrame, metric_list: list[Metric], orders: dimensions.Orders, **options
) -> pl.DataFrame:
    """Each metric per model (and question type), the answers of every language pooled, with the bootstrap
    interval of its mean."""
    by = ("model", "question_type") if orders.question_types else ("model",)
    parts = [cells(metric_values, metric, orders, by, **options) for metric in metric_list]
    return pl.concat(parts) if parts else pl.DataFrame()


def summary(metric_values: pl.DataFrame, metric_list: list[Metric], table: pl.DataFrame, surface_note: str) -> str:
    """The study's answer scores in words: the surface component (`surface_note`), then each metric's
    best and worst model."""
    parts = [surface_note]
    if not metric_list:
        return " ".join(parts + ["The study defines no automatic metric (`[metrics.NAME]` in study.toml)."])
    if metric_values.is_empty():
        return " ".join(parts + ["The study has no metric values (metrics.csv): no metric heatmaps."])
    pooled = (
        metric_values.group_by("metric", "model")
        .agg(pl.col("value").mean().alias("mean"), pl.len().alias("n"))
        .sort("metric", "mean", "model")
    )
    for metric in metric_list:
        rows = pooled.filter(pl.col("metric") == metric.name)
        if rows.height < 1:
            parts.append(f"*{metric.name}* has no values.")
            continue
        ordered = rows.sort("mean", "model", descending=[metric.higher_is_better, False])
        best, worst = ordered.row(0, named=True), ordered.row(-1, named=True)
        digits = metric.decimals + 1
        parts.append(
            f"On *{metric.name}* ({metric.better} is better) {inert(best['model'])} scores best "
            f"(mean {best['mean']:.{digits}f} over {best['n']:,} answers)"
            + (f", {inert(worst['model'])} worst ({worst['mean']:.{digits}f})." if rows.height > 1 else ".")
        )
    return " ".join(parts)


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
                "mean_a": float(a.mean()) if len(a) else None,
                "mean_b": float(b.mean()) if len(b) else None,
                "test": "Fisher's exact test" if binary[metric] else "two-sample Kolmogorov-Smirnov test",
                "difference": None,
                "ks_d": None,
                "p_value": None,
            }
            if len(a) and len(b):
                row["difference"] = float(a.mean() - b.mean())
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
    return table.with_columns(p_holm=pl.Series(holm(table["p_value"].to_numpy()), dtype=pl.Float64))


def holm(p_values: np.ndarray) -> list[float | None]:
    """Holm's step-down correction of the p values (NaN or None: no test) for the number of tests run."""
    p = np.array([np.nan if v is None else v for v in p_values], dtype=float)
    tested = np.flatnonzero(~np.isnan(p))
    adjusted = np.full(len(p), np.nan)
    order = tested[np.argsort(p[tested], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return [None if np.isnan(v) else float(v) for v in adjusted]


def collection_title(orders: dimensions.Orders) -> str:
    """The title of a study's comparison of its collections."""
    if len(orders.collections) < 2:
        return "Comparing the collections"
    first, second = (inert(orders.collection_labels.get(c, c)) for c in orders.collections[:2])
    return f"Comparing the collections: {first} against {second} questions"


def collection_summary(tests: pl.DataFrame, orders: dimensions.Orders, alpha: float = 0.05) -> str:
    """The comparison of the collections in words: how many tests, how many significant after Holm's
    correction, and the largest difference."""
    first, second = (inert(orders.collection_labels.get(c, c)) for c in orders.collections[:2])
    run = tests.filter(pl.col("p_value").is_not_null())
    if run.is_empty():
        return f"No language has values in both {first} and {second} questions: nothing could be compared."
    significant = run.filter(pl.col("p_holm") < alpha)
    largest = run.sort(pl.col("difference").abs(), "metric", "language", descending=[True, False, False]).row(
        0, named=True
    )
    return (
        f"{first[:1].upper() + first[1:]} against {second} questions: {run.height} tests (one per language and "
        f"metric with values in both collections), **{significant.height}** of them significant at "
        f"{alpha} after Holm's correction for the {run.height} tests. The largest difference is in "
        f"{inert(largest['language'])} on *{largest['metric']}* ({largest['mean_a']:.3g} against {largest['mean_b']:.3g}, "
        f"{largest['test']}, p = {largest['p_value']:.3g}, Holm-corrected {largest['p_holm']:.3g})."
    )
