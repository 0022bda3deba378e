"""Comparisons of two samples or two raters: the two-sample Kolmogorov-Smirnov test and Cohen's kappa."""

import numpy as np


def ks_two_sample(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The two-sided two-sample KS test (scipy's `ks_2samp`): the statistic D and its p value."""
    from scipy import stats

    result = stats.ks_2samp(a, b)
    return float(result.statistic), float(result.pvalue)


def cohens_kappa(table: list[list[int]]) -> float:
    """Cohen's kappa of a square contingency table (rows: one rater's labels, columns: the other's)."""
    from statsmodels.stats.inter_rater import cohens_kappa as kappa

    return float(kappa(table, return_results=False))
