"""Confidence intervals: the one place the suite computes them.

A share of k successes in n answers gets Wilson's score interval, which stays inside [0, 1], is never a
single point at 0% or 100% and covers close to its nominal level even for small n. Quantities with no
closed-form interval (the mean of a score that takes many values) get the percentile bootstrap over
answers (`bootstrap_cells`); a mean where neither is wanted (the explorer's) the normal approximation.
"""

import json
import math
import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np
import polars as pl

CONFIDENCE = 0.95
# A mean or share over fewer valid values than this is not shown.
MIN_VALID = 10
N_RESAMPLES = 2000
SEED = 6
# At most this many distinct values, a resample is drawn as a multinomial count of each (`bootstrap_mean_ci`).
_FEW_DISTINCT = 64
# Resampled values drawn and averaged at once (resamples x answers): few enough that the indices and the
# values they pick stay in the processor's cache, three times as fast as a block of millions, and memory
# flat for large groups. The block size changes no result: NumPy draws the same indices in one call or
# in several, and each mean is the sum of one row.
_BOOTSTRAP_BLOCK = 32_768


@cache
def z_value(confidence: float = CONFIDENCE) -> float:
    """The two-sided quantile of the standard normal distribution for `confidence` (1.959963984540054 at 95%)."""
    from scipy.special import ndtri  # scipy's inverse normal, as `scipy.stats.norm.ppf`; imported when first needed

    return float(ndtri(0.5 + confidence / 2))


def wilson(successes, n, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of successes / n (arrays or numbers), as fractions; NaN where n is 0."""
    # (`dtype=None` reads the numbers as they are: the same floats below; the type is not mutated)
    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)  # pragma: no mutate
    z = z_value(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At k = 0 or k = n the bound is 0 or 1 exactly: the formula's rounding error would put it a hair off.
    # Between them both bounds lie inside (0, 1) (tests/stats/test_intervals.py checks n up to 10^9).
    low = np.where(k == 0, 0.0, centre - half)
    high = np.where(k == n, 1.0, centre + half)
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def with_wilson(
    table: pl.DataFrame,
    successes: str,
    n: str,
    *,
    scale: float = 100.0,
    decimals: int | None = None,
    low: str = "ci_low",
    high: str = "ci_high",
    confidence: float = CONFIDENCE,
) -> pl.DataFrame:
    """`table` with the Wilson interval of `successes` / `n` added as `low` and `high` (times `scale`,
    rounded to `decimals` when given); null where n is 0 or null."""
    lows, highs = wilson(table[successes].fill_null(0).to_numpy(), table[n].fill_null(0).to_numpy(), confidence)
    columns = [
        pl.Series(name, scale * bound, dtype=pl.Float64).fill_nan(None) for name, bound in ((low, lows), (high, highs))
    ]
    if decimals is not None:
        columns = [c.round(decimals) for c in columns]
    return table.with_columns(columns)


def normal_mean_interval(
    mean: float, std: float | None, n: int, confidence: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """The normal-approximation interval of a mean (mean +- z * std / sqrt(n)); None below two values."""
    if n < 2 or std is None:
        return None, None
    half = z_value(confidence) * std / math.sqrt(n)
    return mean - half, mean + half


def overflow_scale(values: np.ndarray) -> float:
    """What finite `values` are divided by before they are summed so that no sum of them overflows: 1 when
    none can (the largest magnitude times their number is a float), else the largest magnitude. Dividing
    and multiplying by 1 changes no value, so ordinary data give the same means to the bit."""
    if not len(values):
        return 1.0
    largest = float(np.abs(values).max())
    return largest if largest * len(values) > np.finfo(np.float64).max else 1.0


def mean(values) -> float:
    """The mean of finite `values` (at least one), finite however large they are (`overflow_scale`)."""
    values = np.asarray(values, dtype=np.float64)
    scale = overflow_scale(values)
    return float((values / scale).mean() * scale)


def bootstrap_mean_ci(
    values: np.ndarray, rng: np.random.Generator, n_resamples: int = N_RESAMPLES, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values`: resample the values with replacement. Means
    of values near the largest float are taken on the values scaled down (`overflow_scale`), so that no
    resample's sum overflows to infinity."""
    values = np.asarray(values, dtype=np.float64)
    scale = overflow_scale(values)
    values = values / scale
    distinct, frequency = np.unique(values, return_counts=True)
    if len(distinct) <= _FEW_DISTINCT:
        # A resample is a multinomial draw of how often each distinct value comes up: the same
        # distribution as drawing answers, at a cost that does not grow with the number of answers
        # (verdicts are 0/1, scores take few values).
        counts = rng.multinomial(len(values), frequency / len(values), size=n_resamples)
        means = counts @ distinct / len(values)
    else:
        means = np.empty(n_resamples)
        block = max(1, _BOOTSTRAP_BLOCK // len(values))
        resampled = np.empty((min(block, n_resamples), len(values)))
        # 32-bit indices: for fewer than 2**32 values NumPy draws the same indices as for 64-bit ones (both
        # from 32-bit bounded draws), three times as fast; tests/stats/test_intervals.py checks they are the same.
        index_type = np.int32 if len(values) < 2**31 else np.int64
        for start in range(0, n_resamples, block):
            size = min(block, n_resamples - start)
            drawn = rng.integers(0, len(values), size=(size, len(values)), dtype=index_type)
            # mode="clip" (the indices are in range) writes straight into the buffer: NumPy buffers `out` under
            # its default mode, to leave it untouched should an index be out of range.
            np.take(values, drawn, out=resampled[:size], mode="clip")
            means[start : start + size] = resampled[:size].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail]) * scale
    return float(low), float(high)


def cell_seed(seed: int, key: tuple) -> tuple[int, int]:
    """The seed of one cell of a bootstrap, from `seed` and the cell's own key (the values of its group, e.g.
    its model and language): each cell draws its own resamples, and a cell's interval does not change when
    other cells (a newly imported model, say) are added."""
    return seed, zlib.crc32(json.dumps(key, default=str).encode())


def _group_rng(seed: int, key: tuple) -> np.random.Generator:
    return np.random.default_rng(cell_seed(seed, key))


def bootstrap_cells(
    frame: pl.DataFrame,
    by: list[str],
    value: str,
    *,
    min_valid: int = MIN_VALID,
    scale: float = 1.0,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pl.DataFrame:
    """Per group of `by` (sorted): n_answers, n_valid (non-null `value`s), the mean of `value` and its 95%
    percentile bootstrap interval over answers, each times `scale`; mean and interval are null when the
    group has fewer than `min_valid` valid answers.

    Reusable for any heatmap built from per-answer values (a 0/1 verdict gives a percentage with
    `scale=100`).
    """
    groups = frame.group_by(by).agg(pl.len().alias("n_answers"), pl.col(value).drop_nulls().alias("values")).sort(by)

    def cell(row: dict) -> tuple[int, float | None, float | None, float | None]:
        values = np.asarray(row["values"], dtype=np.float64)
        if len(values) < min_valid or len(values) == 0:
            return len(values), None, None, None
        low, high = bootstrap_mean_ci(values, _group_rng(seed, tuple(row[c] for c in by)), n_resamples, confidence)
        return len(values), scale * mean(values), scale * low, scale * high

    # Each group draws from its own generator, so the groups are resampled on every core at once with the
    # same results as one after the other (NumPy lets go of the interpreter while it draws and averages).
    with ThreadPoolExecutor(max_workers=_cores()) as pool:
        results = list(pool.map(cell, groups.iter_rows(named=True)))
    n_valid, means, lows, highs = (list(column) for column in zip(*results)) if results else ([], [], [], [])
    return groups.drop("values").with_columns(
        n_valid=pl.Series(n_valid, dtype=pl.Int64),
        mean=pl.Series(means, dtype=pl.Float64),
        ci_low=pl.Series(lows, dtype=pl.Float64),
        ci_high=pl.Series(highs, dtype=pl.Float64),
    )


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def share_cells(
    frame: pl.DataFrame, by: list[str], value: str, *, min_valid: int = MIN_VALID, scale: float = 100.0
) -> pl.DataFrame:
    """`bootstrap_cells` for a 0/1 value: the share and its Wilson interval, each times `scale`."""
    groups = (
        frame.group_by(by)
        .agg(
            pl.len().alias("n_answers"),
            pl.col(value).is_not_null().sum().alias("n_valid"),
            pl.col(value).sum().alias("n_true"),
        )
        .with_columns(pl.col("n_valid").cast(pl.Int64))
        .sort(by)
    )
    groups = with_wilson(groups, "n_true", "n_valid", scale=scale)
    enough = pl.col("n_valid") >= max(min_valid, 1)
    return groups.with_columns(
        mean=pl.when(enough).then(scale * pl.col("n_true") / pl.col("n_valid")),
        ci_low=pl.when(enough).then(pl.col("ci_low")),
        ci_high=pl.when(enough).then(pl.col("ci_high")),
    ).drop("n_true")
