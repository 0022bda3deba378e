"""Comparisons of two samples or two raters: Fisher's exact test of two proportions (0/1 samples), the
two-sample Kolmogorov-Smirnov test (continuous samples), and Cohen's kappa."""

import math

import numpy as np
import polars as pl

# The columns of a comparison of two groups, one row each (`analyses.scores`, `analyses.metrics`): their
# sizes and means, the test run, the difference of the means, KS's D (for continuous values) and the p-value.
RESULT_SCHEMA = {
    "n_a": pl.Int64,
    "n_b": pl.Int64,
    "mean_a": pl.Float64,
    "mean_b": pl.Float64,
    "test": pl.String,
    "difference": pl.Float64,
    "ks_d": pl.Float64,
    "p_value": pl.Float64,
}


def fisher_exact(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Fisher's exact test (two-sided, scipy's `fisher_exact`) of the shares of ones in two 0/1 samples:
    the difference of the shares (a's minus b's) and its p value."""
    from scipy import stats

    values = set(np.unique(a)) | set(np.unique(b))
    if not values <= {0, 1}:
        raise ValueError(f"Fisher's exact test compares 0/1 samples; these hold {sorted(values)}")
    ones_a, ones_b = int(np.sum(a)), int(np.sum(b))
    table = [[ones_a, len(a) - ones_a], [ones_b, len(b) - ones_b]]
    return float(ones_a / len(a) - ones_b / len(b)), float(stats.fisher_exact(table).pvalue)


def ks_two_sample(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The two-sided two-sample KS test (scipy's `ks_2samp`): the statistic D and its p value."""
    from scipy import stats

    result = stats.ks_2samp(a, b)
    return float(result.statistic), float(result.pvalue)


def cohens_kappa(table: list[list[int]]) -> float:
    """Cohen's kappa of a square contingency table (rows: one rater's labels, columns: the other's); NaN
    when it is undefined: the chance agreement is 1 (both raters use one and the same label) or the
    table is empty."""
    from statsmodels.stats.inter_rater import cohens_kappa as kappa

    counts = np.asarray(table, dtype=float)
    total = counts.sum()
    if total == 0 or np.isclose((counts.sum(axis=0) * counts.sum(axis=1)).sum() / total**2, 1.0):
        return math.nan
    return float(kappa(table, return_results=False))
