"""Confidence intervals of shares: the one place the suite computes them.

A share of k successes in n answers gets Wilson's score interval, which stays inside [0, 1], is never a
single point at 0% or 100% and covers close to its nominal level even for small n. Quantities with no
closed-form interval (the mean of a score that takes many values) use the bootstrap of
`analysis.scores.bootstrap_mean_ci` instead.
"""

import numpy as np
import polars as pl
from scipy.stats import norm

CONFIDENCE = 0.95


def wilson(successes, n, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of successes / n (arrays or numbers), as fractions; NaN where n is 0."""
    k, n = np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    z = norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At k = 0 or k = n the bound equals 0 or 1 exactly; clip the rounding error of the formula.
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def with_wilson(table: pl.DataFrame, successes: str, n: str, *, scale: float = 100.0, decimals: int | None = None,
                low: str = "ci_low", high: str = "ci_high", confidence: float = CONFIDENCE) -> pl.DataFrame:
    """`table` with the Wilson interval of `successes` / `n` added as `low` and `high` (times `scale`,
    rounded to `decimals` when given); null where n is 0 or null."""
    lows, highs = wilson(table[successes].fill_null(0).to_numpy(), table[n].fill_null(0).to_numpy(), confidence)
    columns = [pl.Series(name, scale * bound, dtype=pl.Float64).fill_nan(None) for name, bound in ((low, lows), (high, highs))]
    if decimals is not None:
        columns = [c.round(decimals) for c in columns]
    return table.with_columns(columns)
