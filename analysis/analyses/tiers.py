"""Significance tiers of the model x language heatmaps and tables (docs/methods.md, section Significance
tiers): the cells of a metric get `tier`, `p_vs_best`, `p_adjusted` and `min_detectable_difference` from
the paired tests of `stats.significance`, computed over the same answers as the cells' values, per
language and question type (the heatmap's cell groups) or, for the tables, over all languages.

Only the cells that show a value take part: a cell drawn as not identified, provider errors only or too
few answers has no tier.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ..stats import intervals, significance
from . import dimensions

TIER_COLUMNS = significance.TIER_COLUMNS


def kind_of(values: pl.Series) -> str:
    """ "binary" for a yes/no verdict (booleans, or numbers that are only 0 and 1), else "numeric"."""
    if values.dtype == pl.Boolean:
        return "binary"
    distinct = set(values.drop_nulls().unique().to_list())
    return "binary" if distinct and distinct <= {0, 1} else "numeric"


def with_tiers(
    cells: pl.DataFrame,
    answers: pl.DataFrame,
    value: str,
    *,
    by: Sequence[str],
    model: str = "model",
    unit: str = "question_id",
    better: str | None,
    shown: pl.Expr | None = None,
    kind: str | None = None,
    scale: float = 100.0,
) -> pl.DataFrame:
    """`cells` (one row per group of `by`, which holds `model`) with the tier columns of its models within
    each group of the other columns of `by`, from `answers` (one row per answer, with the columns of `by`,
    `unit` and the per-answer `value`). `shown` selects the cells that show a value (by default those
    whose `status` is null, or all when the cells have no status); the others get null tier columns.
    `kind` is "binary" or "numeric" (by default from the values); the minimal detectable difference is
    on the cells' scale (x `scale`). Without a better end (`better` None) the cells get null columns."""
    by = list(by)
    group = [c for c in by if c != model]
    null_columns = [
        pl.lit(None, dtype=pl.Int32).alias("tier"),
        *(pl.lit(None, dtype=pl.Float64).alias(c) for c in TIER_COLUMNS[1:]),
    ]
    if better is None:
        return cells.with_columns(null_columns)
    if shown is None:
        shown = pl.col("status").is_null() if "status" in cells.columns else pl.lit(True)
    showing = cells.filter(shown).select(by)
    taking = answers.join(showing, on=by, how="semi") if showing.height else answers.clear()
    if taking.is_empty():
        return cells.with_columns(null_columns)
    kind = kind or kind_of(taking[value])
    values = taking[value]
    if kind == "binary" and values.dtype != pl.Boolean:
        taking = taking.with_columns(pl.col(value).cast(pl.Float64).round(0).cast(pl.Boolean))
    found = significance.tiers(
        taking, group=group, model=model, unit=unit, value=value, kind=kind, better=better, scale=scale
    ).select(*by, *TIER_COLUMNS)
    joined = cells.drop([c for c in TIER_COLUMNS if c in cells.columns]).join(
        found, on=by, how="left", maintain_order="left"
    )
    # Significant figures, not decimals: a metric's values may lie between 0 and 1, where one decimal
    # would round its smallest detectable difference away.
    return joined.with_columns(pl.col("p_vs_best", "p_adjusted", "min_detectable_difference").round_sig_figs(4))


def rank_intervals(
    answers: pl.DataFrame,
    value: str,
    *,
    better: str,
    orders: dimensions.Orders,
    model: str = "model",
    exclude_unreliable: bool = True,
    n_resamples: int = 1000,
    seed: int = intervals.SEED,
) -> pl.DataFrame:
    """Each model's rank of `value` (1 the best) over all languages (`language` null; each language weighs
    the same) and per language, with its 95% bootstrap interval, the questions resampled within each
    language (`stats.significance.rank_intervals`), in the study's order; the unreliable languages left out
    unless `exclude_unreliable` is false."""
    kept = answers.filter(~pl.col("unreliable")) if exclude_unreliable and "unreliable" in answers.columns else answers
    ranks = significance.rank_intervals(
        kept.filter(pl.col(value).is_not_null()),
        group="language",
        model=model,
        unit="question_id",
        value=value,
        better=better,
        n_resamples=n_resamples,
        seed=seed,
    ).with_columns(pl.col("mean").round(4))
    overall = ranks.filter(pl.col("language").is_null()).sort("rank", model)
    per_language = ranks.filter(pl.col("language").is_not_null()).pipe(
        dimensions.in_order, ["language", model], orders=orders
    )
    return pl.concat([overall, per_language]).rename({model: "model"}).with_columns(value=pl.lit(value))
