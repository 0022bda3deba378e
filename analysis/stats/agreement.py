"""Agreement (docs/methods.md, section Agreement): between annotators, Krippendorff's alpha (the
`krippendorff` package) with a bootstrap interval over the rated answers and Cohen's weighted kappa
when exactly two annotators rated; between an automatic metric and the annotators, Kendall's tau-b with
a bootstrap interval over the answers.

Both bootstraps resample the answers (the units) with replacement; a resample is a vector of counts, one
per kind of answer (a distinct pattern of ratings, a distinct pair of values), so that the statistics
of all resamples are computed at once from per-kind parts (alpha's coincidences, tau's contingency
tables) rather than from copied rows.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from . import intervals

N_RESAMPLES = 1000
# Kendall's tau-b of the resamples: their contingency tables are built this many cells at a time, so
# that memory stays bounded.
_TAU_CELLS = 2_000_000


# ---------------------------------------------------------------- Krippendorff's alpha


def value_counts(units: np.ndarray, values: np.ndarray, n_values: int) -> np.ndarray:
    """The units x values matrix of how many annotators gave each value (0 to n_values - 1) to each unit
    (units numbered 0 to u - 1)."""
    counts = np.zeros((int(units.max()) + 1 if units.size else 0, n_values))
    np.add.at(counts, (units, values), 1.0)
    return counts


def krippendorff_alpha(counts: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of a units x values matrix of counts (`value_counts`), at the `level` of
    measurement ("nominal", "ordinal", "interval"; the values are the columns' ranks), by the
    `krippendorff` package; NaN when it is undefined (fewer than two pairable values, or one value only)."""
    import krippendorff

    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.sum() < 2 or np.count_nonzero(pairable.sum(axis=0)) < 2:
        return math.nan
    alpha = krippendorff.alpha(
        value_counts=pairable,
        # (the package's default domain is the same: the columns' ranks)
        value_domain=list(range(counts.shape[1])),  # pragma: no mutate
        level_of_measurement=level,  # type: ignore[arg-type]
    )
    return float(alpha)


def alpha_of_resamples(counts: np.ndarray, level: str, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha of the units of `counts` (`value_counts`, units rated twice or more) taken
    `weights` times each, one value per row of `weights` (resamples x units), NaN where undefined: the
    coincidence matrix of a resample is the weighted sum of its units' matrices, so the whole bootstrap is
    one matrix product rather than a call of the package per resample (the tests check both agree)."""
    n_values = counts.shape[1]
    per_unit = counts.sum(axis=1)
    # each unit's coincidences: n_uc n_uk, less n_uc on the diagonal, over m_u - 1 (Krippendorff 2011, C.2)
    unit_coincidences = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(n_values)) / (
        per_unit - 1
    )[:, None, None]
    coincidences = (np.atleast_2d(weights) @ unit_coincidences.reshape(counts.shape[0], -1)).reshape(
        -1, n_values, n_values
    )
    marginals = coincidences.sum(axis=2)
    total = marginals.sum(axis=1)
    c, k = np.indices((n_values, n_values))
    if level == "nominal":
        distance = np.broadcast_to((c != k).astype(float), coincidences.shape)
    elif level == "interval":
        distance = np.broadcast_to(((c - k) ** 2).astype(float), coincidences.shape)
    elif level == "ordinal":
        # (the marginals from c to k, less half of c's and k's)^2, the values ranked by their columns
        cumulative = np.cumsum(marginals, axis=1)
        low, high = np.minimum(c, k), np.maximum(c, k)
        between = cumulative[:, high] - cumulative[:, low] + marginals[:, low]
        distance = (between - (marginals[:, c] + marginals[:, k]) / 2) ** 2
    else:
        raise ValueError(f"alpha_of_resamples: level {level!r}, expected 'nominal', 'ordinal' or 'interval'")
    observed = (coincidences * distance).sum(axis=(1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * distance).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (total - 1) * observed / expected, np.nan)


def alpha_interval(
    counts: np.ndarray, level: str, n_resamples: int = N_RESAMPLES, seed: int | tuple[int, ...] = intervals.SEED
) -> tuple[float, float]:
    """The percentile bootstrap interval (95%) of Krippendorff's alpha, the rated answers resampled."""
    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.shape[0] < 2:
        return math.nan, math.nan
    patterns, frequencies = np.unique(pairable, axis=0, return_counts=True)
    return _percentile_interval(
        alpha_of_resamples(patterns, level, resample_weights(frequencies, n_resamples, seed)), n_resamples
    )


def resample_weights(frequencies: np.ndarray, n_resamples: int, seed: int | tuple[int, ...]) -> np.ndarray:
    """The bootstrap's resamples (rows) of units that fall into kinds (columns: e.g. the distinct patterns
    of ratings of an answer) with these `frequencies`: how many units of each kind a resample draws.
    Drawing n units with replacement draws each kind a multinomial number of times, so the resamples are
    drawn per kind, at a cost that grows with the kinds rather than with the units."""
    rng = np.random.default_rng(seed)
    total = int(frequencies.sum())
    return rng.multinomial(total, frequencies / total, size=n_resamples).astype(np.float64)


def _percentile_interval(values: np.ndarray, n_resamples: int) -> tuple[float, float]:
    """The 95% percentile interval of a bootstrap's statistics, NaN when fewer than half are defined."""
    values = values[~np.isnan(values)]
    if values.size < n_resamples / 2:
        return math.nan, math.nan
    low, high = np.quantile(values, [(1 - intervals.CONFIDENCE) / 2, 1 - (1 - intervals.CONFIDENCE) / 2])
    return float(low), float(high)


# ---------------------------------------------------------------- Cohen's weighted kappa


def weighted_kappa(a: np.ndarray, b: np.ndarray, n_values: int, weights: str | None = "quadratic") -> float:
    """Cohen's kappa of two annotators' levels (0 to n_values - 1) of the same answers, with `weights`
    "linear", "quadratic" (disagreements weighed by their distance, or its square) or None (unweighted);
    NaN when the chance disagreement is 0."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if a.size == 0:
        return math.nan
    observed = np.zeros((n_values, n_values))
    np.add.at(observed, (a, b), 1.0)
    observed /= a.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((n_values, n_values))
    # (`astype(None)` is `astype(float)`: the weights' type is not mutated)
    if weights is None:
        w = (i != j).astype(float)  # pragma: no mutate
    elif weights == "linear":
        w = np.abs(i - j).astype(float)  # pragma: no mutate
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)  # pragma: no mutate
    else:
        raise ValueError(f"weighted_kappa: weights {weights!r}, expected 'linear', 'quadratic' or None")
    chance = float((w * expected).sum())
    if chance == 0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / chance


# ---------------------------------------------------------------- Kendall's tau-b


def kendall_tau_b_weighted(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of the answers (x, y) taken `weights` times each: one value per row of `weights`
    (resamples x answers). An answer taken twice makes a pair tied in both x and y.

    Computed from each resample's contingency table of the distinct values of x and y (the mean ratings
    take few values): concordant less discordant pairs from its suffix sums, ties from its margins, so
    that the cost grows with resamples x distinct x x distinct y, not with the square of the answers."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    x_values, x_codes = np.unique(x, return_inverse=True)
    y_values, y_codes = np.unique(y, return_inverse=True)
    if y_values.size > x_values.size:  # tau is symmetric: the fewer distinct values along the columns
        x_values, x_codes, y_values, y_codes = y_values, y_codes, x_values, x_codes
    n_rows, n_columns = x_values.size, y_values.size
    cells = x_codes.ravel() * n_columns + y_codes.ravel()
    # the answers' weights summed per cell of the table, for all resamples at once
    order = np.argsort(cells, kind="stable")
    distinct, starts = np.unique(cells[order], return_index=True)
    per_cell = np.add.reduceat(weights[:, order], starts, axis=1) if order.size else weights[:, :0]
    taus = np.empty(weights.shape[0])
    block = max(1, _TAU_CELLS // max(1, n_rows * n_columns))
    for start in range(0, weights.shape[0], block):
        rows = slice(start, start + block)
        flat = np.zeros((per_cell[rows].shape[0], n_rows * n_columns))
        flat[:, distinct] = per_cell[rows]
        table = flat.reshape(-1, n_rows, n_columns)
        # below[r, i, j]: the answers of resample r in a later row than i, in column j
        below = np.cumsum(table[:, ::-1, :], axis=1)[:, ::-1, :] - table
        later = np.cumsum(below[:, :, ::-1], axis=2)[:, :, ::-1] - below  # columns after j
        earlier = np.cumsum(below, axis=2) - below  # columns before j
        score = (table * (later - earlier)).sum(axis=(1, 2))
        total = table.sum(axis=(1, 2))
        pairs = total * (total - 1) / 2
        row_sums, column_sums = table.sum(axis=2), table.sum(axis=1)
        ties_x = (row_sums * (row_sums - 1) / 2).sum(axis=1)
        ties_y = (column_sums * (column_sums - 1) / 2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            taus[rows] = score / np.sqrt((pairs - ties_x) * (pairs - ties_y))
    return taus


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of paired values (NaN when either is constant or fewer than two pairs)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2:
        return math.nan
    return float(kendall_tau_b_weighted(x, y, np.ones((1, x.size)))[0])


def tau_interval(
    x, y, n_resamples: int = N_RESAMPLES, seed: int | tuple[int, ...] = intervals.SEED
) -> tuple[float, float]:
    """The percentile bootstrap interval (95%) of Kendall's tau-b, the answers resampled (drawn per
    distinct pair of values, `resample_weights`)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 3:
        return math.nan, math.nan
    pairs, frequencies = np.unique(np.column_stack([x, y]), axis=0, return_counts=True)
    weights = resample_weights(frequencies, n_resamples, seed)
    return _percentile_interval(kendall_tau_b_weighted(pairs[:, 0], pairs[:, 1], weights), n_resamples)


# ---------------------------------------------------------------- tables


ALPHA_SCHEMA = {
    "alpha": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "kappa": pl.Float64,
    "n_answers": pl.Int64,
    "n_pairs": pl.Int64,
    "n_annotators": pl.Int64,
}


def annotator_agreement(
    ratings: pl.DataFrame,
    *,
    unit: str,
    annotator: str,
    level: str,
    n_levels: int,
    ordinal: bool,
    n_resamples: int = N_RESAMPLES,
    seed: int | tuple[int, ...] = intervals.SEED,
) -> dict:
    """The agreement of the annotators of `ratings` (one row per rating: the rated `unit`, the `annotator`,
    the `level` as its position 0 to n_levels - 1): Krippendorff's alpha (ordinal or nominal) and its
    interval over the units rated by two or more annotators, Cohen's weighted kappa (quadratic) when
    exactly two annotators rated them, and the counts behind them: `n_answers` rated twice or more,
    `n_pairs` the pairs of ratings of one answer by two annotators."""
    frame = ratings.select(unit, annotator, level).unique([unit, annotator], keep="first", maintain_order=True)
    shared = frame.filter(pl.len().over(unit) >= 2)
    if shared.is_empty():
        return {
            "alpha": None,
            "ci_low": None,
            "ci_high": None,
            "kappa": None,
            "n_answers": 0,
            "n_pairs": 0,
            "n_annotators": frame[annotator].n_unique(),
        }
    codes = shared[unit].rank("dense").cast(pl.Int64).to_numpy() - 1
    counts = value_counts(codes, shared[level].cast(pl.Int64).to_numpy(), n_levels)
    measure = "ordinal" if ordinal else "nominal"
    alpha = krippendorff_alpha(counts, measure)
    low, high = alpha_interval(counts, measure, n_resamples, seed)
    per_unit = counts.sum(axis=1)
    annotators = shared[annotator].unique().sort().to_list()
    kappa = None
    if len(annotators) == 2:
        wide = shared.pivot(on=annotator, index=unit, values=level).drop_nulls()
        kappa = weighted_kappa(
            wide[annotators[0]].to_numpy(), wide[annotators[1]].to_numpy(), n_levels, "quadratic" if ordinal else None
        )
    return {
        "alpha": _none_if_nan(alpha),
        "ci_low": _none_if_nan(low),
        "ci_high": _none_if_nan(high),
        "kappa": _none_if_nan(kappa),
        "n_answers": int(counts.shape[0]),
        "n_pairs": int((per_unit * (per_unit - 1) / 2).sum()),
        "n_annotators": len(annotators),
    }


def _none_if_nan(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
