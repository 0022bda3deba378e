"""The boundaries of the agreement statistics (analysis/stats/agreement.py), with expected values worked out
by hand: Krippendorff's alpha of one unit rated twice, undefined without asking the package; Cohen's kappa
under each weighting, of one pair, of levels given as floats."""

import math

import numpy as np
import pytest

from analysis.stats import agreement

# Two annotators, three answers, levels 0..2: (0, 0), (1, 2), (2, 2).
A, B = [0, 1, 2], [0, 2, 2]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_of_one_unit_rated_twice_differently_is_zero(level):
    # one unit, two values: observed disagreement 2 (o_01 = o_10 = 1), expected 2 (n_0 = n_1 = 1):
    # alpha = 1 - (n - 1) * 2 / 2 = 0, at any level (two values are one distance apart).
    assert agreement.krippendorff_alpha(np.array([[1, 1]]), level) == 0.0
    assert agreement.krippendorff_alpha(np.array([[1, 1, 0]]), level) == 0.0


def test_alpha_is_undefined_without_asking_the_package(monkeypatch):
    import krippendorff

    def asked(**_):
        raise AssertionError("krippendorff.alpha called for an undefined alpha")

    monkeypatch.setattr(krippendorff, "alpha", asked)
    for counts in ([[2, 0]], [[1, 0], [0, 1]], [[0, 0]]):
        assert math.isnan(agreement.krippendorff_alpha(np.array(counts), "nominal")), counts


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        # observed weighted disagreement 1/3 (the pair (1, 2)); chance: rows 1/3 each, columns (1/3, 0, 2/3)
        ("quadratic", 1 - (1 / 3) / (15 / 9)),  # chance 8/9 + 1/9 + 2/9 + 4/9
        ("linear", 1 - (1 / 3) / 1),  # chance 4/9 + 1/9 + 2/9 + 2/9
        (None, 1 - (1 / 3) / (2 / 3)),  # chance 1 - (1/9 + 0 + 2/9)
    ],
)
def test_kappa_under_each_weighting(weights, expected):
    assert agreement.weighted_kappa(A, B, 3, weights) == pytest.approx(expected)


def test_kappa_is_quadratic_by_default():
    assert agreement.weighted_kappa(A, B, 3) == pytest.approx(0.8)


def test_kappa_of_one_pair_that_disagrees_is_zero_and_of_agreement_alone_undefined():
    assert agreement.weighted_kappa([0], [1], 2) == 0.0  # observed 1, chance 1
    assert math.isnan(agreement.weighted_kappa([1, 1], [1, 1], 2))  # chance 0
    assert math.isnan(agreement.weighted_kappa([], [], 2))


def test_kappa_of_levels_given_as_floats():
    assert agreement.weighted_kappa(np.array(A, dtype=float), np.array(B, dtype=float), 3) == pytest.approx(0.8)


def test_an_unknown_weighting_is_refused_by_name():
    with pytest.raises(ValueError, match=r"weights 'cubic', expected 'linear', 'quadratic' or None"):
        agreement.weighted_kappa(A, B, 3, "cubic")
