"""Which differences between models are real (docs/methods.md, section Significance tiers): paired tests
of two models on the questions both answered, Holm's adjustment, the tiers they make, the smallest
difference a cell's answers could detect, and bootstrap rank intervals.

A tier is what no test separates: in each group (a language and a metric, or all languages), the best
model leads tier 1, and every model whose paired test against it is not significant after Holm's
adjustment (over that round's comparisons) joins it; of the models left, the best leads tier 2, and so on.
The tests are paired on the questions (the same question answered by both models): exact McNemar for
yes/no verdicts, Wilcoxon's signed-rank test (normal approximation with the tie correction) for numeric
values. Everything is computed for all groups at once, in polars: a round is one join and one
aggregation, whatever the number of groups.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import polars as pl

ALPHA = 0.05
POWER = 0.8
# The columns a table of tiers has beside its group's and model's.
TIER_COLUMNS = ("tier", "p_vs_best", "p_adjusted", "min_detectable_difference")
KINDS = ("binary", "numeric")
# The key of the one group of models when the caller groups by nothing (polars joins on at least one key).
_ALL = "_all_answers"


def mcnemar_exact(b, c) -> np.ndarray:
    """The two-sided exact McNemar test of paired yes/no verdicts, from the discordant counts: `b` pairs
    where only the first is yes, `c` where only the second is: twice the binomial(b + c, 1/2) probability
    of a count as small as min(b, c), at most 1 (1 when no pair is discordant)."""
    from scipy.stats import binom

    b, c = np.asarray(b), np.asarray(c)  # arrays of counts, so that `b + c` adds them (lists would concatenate)
    n = b + c
    return np.minimum(1.0, 2.0 * binom.cdf(np.minimum(b, c), n, 0.5))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of one family of p values (NaN values are left out of the family and
    stay NaN): the k-th smallest of m becomes max over j <= k of min(1, (m - j + 1) p_(j))."""
    p = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    if valid.size == 0:
        return adjusted
    # Tied p values get the same adjusted value whatever their order: the sort need not be stable.
    order = valid[np.argsort(p[valid])]
    m = order.size
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def _holm_frame(frame: pl.DataFrame, p: str, by: list[str], out: str) -> pl.DataFrame:
    """`frame` with `out`: Holm's adjustment of `p` within each group of `by` (null p values left out)."""
    ranked = (
        frame.with_row_index("_row")
        .with_columns(
            _m=pl.col(p).count().over(by),
            _rank=pl.col(p).rank("ordinal").over(by),
        )
        .with_columns(_stepped=pl.min_horizontal(pl.lit(1.0), (pl.col("_m") - pl.col("_rank") + 1) * pl.col(p)))
        .sort([*by, "_rank"], nulls_last=True)
        .with_columns(pl.col("_stepped").cum_max().over(by).alias(out))
        .with_columns(pl.when(pl.col(p).is_not_null()).then(pl.col(out)).alias(out))
        .sort("_row")
    )
    return ranked.drop("_row", "_m", "_rank", "_stepped")


def _normal_sf(z: pl.Expr) -> pl.Expr:
    """The upper tail of the standard normal distribution, erfc(z / sqrt 2) / 2, as a polars expression
    (through numpy's vectorised scipy function on the column)."""
    from scipy.special import ndtr

    return z.map_batches(lambda s: pl.Series(ndtr(-s.to_numpy()), dtype=pl.Float64), return_dtype=pl.Float64)


def _paired_p(pairs: pl.DataFrame, keys: list[str], kind: str) -> pl.DataFrame:
    """Per comparison (`keys`): the p value of the paired test of the leader's value (`lead`) against the
    model's (`value`) on their shared questions, and the number of pairs."""
    if kind == "binary":
        counts = pairs.group_by(keys).agg(
            n_pairs=pl.len(),
            b=(pl.col("lead") & ~pl.col("value")).sum(),
            c=(~pl.col("lead") & pl.col("value")).sum(),
        )
        return counts.with_columns(
            p=pl.Series(mcnemar_exact(counts["b"].to_numpy(), counts["c"].to_numpy()), dtype=pl.Float64)
        ).select(*keys, "n_pairs", "p")
    # Wilcoxon's signed-rank test, zero differences left out (scipy's zero_method="wilcox"), the normal
    # approximation without continuity correction and with the correction for tied ranks.
    ranked = (
        pairs.with_columns(d=pl.col("lead") - pl.col("value"))
        .filter(pl.col("d") != 0)
        .with_columns(a=pl.col("d").abs())
        .with_columns(r=pl.col("a").rank("average").over(keys))
    )
    ties = ranked.group_by([*keys, "a"]).agg(t=pl.len()).group_by(keys).agg(tie=(pl.col("t") ** 3 - pl.col("t")).sum())
    stats = ranked.group_by(keys).agg(n=pl.len(), w=pl.col("r").filter(pl.col("d") > 0).sum())
    n = pl.col("n").cast(pl.Float64)
    variance = n * (n + 1) * (2 * n + 1) / 24 - pl.col("tie") / 48
    z = ((pl.col("w") - n * (n + 1) / 4) / variance.sqrt()).abs()
    tested = stats.join(ties, on=keys, how="left").with_columns(
        p=pl.when(variance > 0).then(pl.min_horizontal(pl.lit(1.0), 2 * _normal_sf(z))).otherwise(1.0)
    )
    n_pairs = pairs.group_by(keys).agg(n_pairs=pl.len())
    return (
        n_pairs.join(tested.select(*keys, "p"), on=keys, how="left")
        .with_columns(pl.col("p").fill_null(1.0))
        .select(*keys, "n_pairs", "p")
    )


def tiers(
    answers: pl.DataFrame,
    *,
    group: Sequence[str],
    model: str,
    unit: str,
    value: str,
    kind: str,
    better: str = "higher",
    alpha: float = ALPHA,
    power: float = POWER,
    scale: float = 1.0,
) -> pl.DataFrame:
    """The significance tiers of the models in each group of `group` (e.g. a language and question type).

    `answers` holds one row per answer with its `group` columns, its `model`, its `unit` (the question it
    answers: the tests pair two models' answers to the same unit) and its `value` (a boolean verdict for
    `kind` "binary", a number for "numeric"; null rows are left out). Returns per group and model: `n` and
    `mean` of the values, `tier` (1 the best), `p_vs_best` (the paired test against the group's best model,
    null for the best itself) and `p_adjusted` (Holm's adjustment of those p values over the group's models),
    and `min_detectable_difference` (x `scale`): the difference between two models of this model's number of
    answers that a two-sided test at `alpha`, Bonferroni-adjusted over the group's comparisons, finds with
    probability `power`, at the group's spread of the values. `better` ("higher" or "lower") says which
    mean is best."""
    if kind not in KINDS:
        raise ValueError(f"tiers: kind {kind!r}, expected one of {', '.join(KINDS)}")
    if better not in ("higher", "lower"):
        raise ValueError(f"tiers: better {better!r}, expected 'higher' or 'lower'")
    if not group:  # all answers one group (e.g. per model over every language of a study without question types)
        found = tiers(
            answers.with_columns(pl.lit(0).alias(_ALL)),
            group=[_ALL],
            model=model,
            unit=unit,
            value=value,
            kind=kind,
            better=better,
            alpha=alpha,
            power=power,
            scale=scale,
        )
        return found.drop(_ALL)
    group = list(group)
    keys = [*group, model]
    # A number that is not one (NaN) is left out as a missing value is: polars sorts NaN above every number.
    typed = pl.col(value).cast(pl.Boolean) if kind == "binary" else pl.col(value).cast(pl.Float64).fill_nan(None)
    values = (
        answers.select(*keys, unit, value)
        .with_columns(typed)
        .filter(pl.col(value).is_not_null())
        # one value per model and unit (their mean; a study has one answer a model and question)
        .group_by([*keys, unit])
        .agg(pl.col(value).mean() if kind == "numeric" else pl.col(value).first())
    )
    numeric = pl.col(value).cast(pl.Float64)
    summary = values.group_by(keys).agg(n=pl.len(), mean=numeric.mean())
    spread = values.group_by(group).agg(
        sd=numeric.std(ddof=1) if kind == "numeric" else numeric.mean().alias("share"),
        n_models=pl.col(model).n_unique(),
    )
    if kind == "binary":
        # A share's spread at the group's mean share, kept off 0 and 1 (where it would say any difference shows).
        spread = spread.with_columns(sd=(pl.col("sd").clip(0.05, 0.95) * (1 - pl.col("sd").clip(0.05, 0.95))).sqrt())
    z_power = _z(power)
    comparisons = (pl.col("n_models") - 1).clip(lower_bound=1)
    z_alpha = comparisons.map_batches(
        lambda m: pl.Series(_z_array(1 - alpha / (2 * m.to_numpy())), dtype=pl.Float64), return_dtype=pl.Float64
    )
    summary = summary.join(spread.select(*group, "sd", "n_models"), on=group, how="left").with_columns(
        min_detectable_difference=scale * (z_alpha + z_power) * pl.col("sd").fill_null(0) * (2 / pl.col("n")).sqrt()
    )
    value_lead = values.rename({value: "lead", model: "_lead_model"})

    def round_p(others: pl.DataFrame) -> pl.DataFrame:
        pairs = (
            values.join(others.select(*keys, "_lead_model"), on=keys)
            .join(value_lead, on=[*group, "_lead_model", unit])
            .select(*keys, unit, "lead", pl.col(value).alias("value"))
        )
        return _paired_p(pairs, keys, kind).select(*keys, "p")

    found = _assign_tiers(summary.select(*keys, "mean"), group, model, better, alpha, round_p)
    return summary.join(found, on=keys, how="left").select(*keys, "n", "mean", *TIER_COLUMNS).sort(keys)


def tiers_from_pairs(
    means: pl.DataFrame,
    pairs: pl.DataFrame,
    *,
    group: Sequence[str],
    model: str,
    better: str = "higher",
    alpha: float = ALPHA,
) -> pl.DataFrame:
    """The significance tiers of models whose pairwise tests are given: `means` holds per group of `group`
    and `model` the `mean` that says which model is best (e.g. a mixed model's estimate), `pairs` the
    unadjusted p value `p` of each pair of models of a group (`model_a`, `model_b`, either order). The
    tiers follow the rule of `tiers` (Holm within each round); returns `tier`, `p_vs_best`, `p_adjusted`
    per group and model. A pair without a p value cannot be told apart (p = 1)."""
    if better not in ("higher", "lower"):
        raise ValueError(f"tiers_from_pairs: better {better!r}, expected 'higher' or 'lower'")
    if not group:
        one = pl.lit(0).alias(_ALL)
        found = tiers_from_pairs(
            means.with_columns(one), pairs.with_columns(one), group=[_ALL], model=model, better=better, alpha=alpha
        )
        return found.drop(_ALL)
    group = list(group)
    keys = [*group, model]
    both_ways = pl.concat(
        [
            pairs.select(*group, pl.col("model_a").alias(model), pl.col("model_b").alias("_lead_model"), "p"),
            pairs.select(*group, pl.col("model_b").alias(model), pl.col("model_a").alias("_lead_model"), "p"),
        ]
    ).unique([*keys, "_lead_model"], keep="first", maintain_order=True)

    def round_p(others: pl.DataFrame) -> pl.DataFrame:
        return others.join(both_ways, on=[*keys, "_lead_model"], how="left").select(*keys, "p")

    found = _assign_tiers(means.select(*keys, "mean"), group, model, better, alpha, round_p)
    return means.join(found.select(*keys, *TIER_COLUMNS[:3]), on=keys, how="left").sort(keys)


def _assign_tiers(summary: pl.DataFrame, group: list[str], model: str, better: str, alpha: float, round_p):
    """The tier rule for all groups at once: in each round, the best pending model of each group (by
    `mean`; ties broken by the model's name) leads a tier; `round_p` gives the unadjusted p value of each
    other pending model (a frame of the group, model and `_lead_model` columns) against its leader; those
    whose Holm-adjusted p (over the round's comparisons of their group) is `alpha` or more join the tier.
    Returns per group and model `tier`, and `p_vs_best` and `p_adjusted` from the first round (against
    the group's best model)."""
    keys = [*group, model]
    descending = better == "higher"
    pending = summary.select(*keys, "mean")
    assigned: list[pl.DataFrame] = []
    first_round: pl.DataFrame | None = None
    tier = 1
    while pending.height:
        ranked = pending.with_columns(
            pl.col(model)
            .sort_by(["mean", model], descending=[descending, False])
            .first()
            .over(group)
            .alias("_lead_model")
        )
        leaders = ranked.filter(pl.col(model) == pl.col("_lead_model")).select(keys)
        others = ranked.filter(pl.col(model) != pl.col("_lead_model"))
        tested = others.select(*keys).join(round_p(others), on=keys, how="left")
        # Models without a shared question (or a test) cannot be told apart from the leader: p = 1.
        tested = tested.with_columns(pl.col("p").fill_null(1.0))
        tested = _holm_frame(tested, "p", group, "p_adjusted")
        if first_round is None:
            first_round = tested.select(*keys, pl.col("p").alias("p_vs_best"), "p_adjusted")
        joined = tested.filter(pl.col("p_adjusted") >= alpha).select(keys)
        in_tier = pl.concat([leaders, joined])
        assigned.append(in_tier.with_columns(tier=pl.lit(tier)))  # an Int32, as polars makes a Python int
        pending = pending.join(in_tier, on=keys, how="anti")
        tier += 1
    tiers_frame = (
        pl.concat(assigned) if assigned else pl.DataFrame(schema={**summary.select(keys).schema, "tier": pl.Int32})
    )
    # Every model of `summary` is in one tier (the rounds go on until none is pending).
    if first_round is not None:
        return tiers_frame.join(first_round, on=keys, how="left")
    return tiers_frame.with_columns(p_vs_best=pl.lit(None, pl.Float64), p_adjusted=pl.lit(None, pl.Float64))


def _z(probability: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(probability))


def _z_array(probabilities: np.ndarray) -> np.ndarray:
    from scipy.special import ndtri

    return ndtri(probabilities)


def rank_intervals(
    answers: pl.DataFrame,
    *,
    group: str,
    model: str,
    unit: str,
    value: str,
    better: str = "higher",
    n_resamples: int = 1000,
    seed: int = 6,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Each model's rank (1 the best) in each group of `group` (a language) and over all groups, with its
    percentile bootstrap interval: the questions are resampled with replacement within each group, the
    same resample for every model (so the ranks of a resample are of models on the same questions), and
    the overall mean is the mean of the group means (each language weighing the same). Returns group,
    model, mean, rank, rank_low, rank_high; the overall rows have the group null."""
    frame = (
        answers.select(group, model, unit, pl.col(value).cast(pl.Float64))
        .filter(pl.col(value).is_not_null())
        .group_by(group, model, unit)
        .agg(pl.col(value).mean())
    )
    schema = {
        group: frame.schema[group],
        model: frame.schema[model],
        "mean": pl.Float64(),
        "rank": pl.Int64(),
        "rank_low": pl.Int64(),
        "rank_high": pl.Int64(),
    }
    groups = frame[group].unique().sort().to_list()
    models = frame[model].unique().sort().to_list()
    if not groups or not models:
        return pl.DataFrame(schema=schema)
    rng = np.random.default_rng(seed)
    sign = -1.0 if better == "higher" else 1.0
    model_index = {m: i for i, m in enumerate(models)}
    group_means = np.full((n_resamples + 1, len(groups), len(models)), np.nan)
    parts = frame.partition_by(group, as_dict=True)
    for g, name in enumerate(groups):
        part = parts[(name,)]
        units = part[unit].unique().sort().to_list()
        unit_index = {u: i for i, u in enumerate(units)}
        table = np.full((len(units), len(models)), np.nan)
        table[
            np.fromiter((unit_index[u] for u in part[unit]), dtype=np.int64, count=part.height),
            np.fromiter((model_index[m] for m in part[model]), dtype=np.int64, count=part.height),
        ] = part[value].to_numpy()
        present = ~np.isnan(table)
        filled = np.where(present, table, 0.0)
        # resample 0 is the data itself; each row of `weights` counts how often a question is drawn
        draws = rng.integers(0, len(units), size=(n_resamples, len(units)))
        weights = np.zeros((n_resamples + 1, len(units)))
        weights[0] = 1.0
        np.add.at(weights, (np.arange(1, n_resamples + 1)[:, None], draws), 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            group_means[:, g, :] = (weights @ filled) / (weights @ present.astype(float))
    # (the mean of a model's group means; NaN, without numpy's warning, for a model with no value anywhere)
    counted = (~np.isnan(group_means)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = np.nansum(group_means, axis=1) / counted
    rows = []
    scopes: list[tuple[int | None, object]] = [*enumerate(groups), (None, None)]
    for index, name in scopes:
        means = overall if index is None else group_means[:, index, :]
        ranks = _ranks(sign * means)
        point = ranks[0]
        # A model without a value in the group has no rank in any resample: its bounds are NaN, without numpy's
        # all-NaN warning, and it is left out below.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice encountered", RuntimeWarning)
            low = np.nanquantile(ranks[1:], (1 - confidence) / 2, axis=0, method="lower")
            high = np.nanquantile(ranks[1:], 1 - (1 - confidence) / 2, axis=0, method="higher")
        for m, model_name in enumerate(models):
            if math.isnan(means[0, m]):
                continue
            rows.append((name, model_name, float(means[0, m]), int(point[m]), int(low[m]), int(high[m])))
    return pl.DataFrame(rows, schema=schema, orient="row")


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Per row, the competition rank of each column (1 the smallest; ties share the best rank; NaN last,
    as NaN)."""
    from scipy.stats import rankdata

    # (`astype(None)` is `astype(float)`: the type is not mutated)
    ranked = rankdata(np.where(np.isnan(scores), np.inf, scores), method="min", axis=1).astype(
        float
    )  # pragma: no mutate
    return np.where(np.isnan(scores), np.nan, ranked)
