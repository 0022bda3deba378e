"""A heatmap's colours follow which end of the value is better (analysis/viz/heatmap.py, analysis/viz/theme.py):
the scheme by `better`, and a cell's label printed in white where its colour is dark, at the dark end of that
scheme; the colour domain is the values' range. Expected Vega expressions written out by hand."""

import polars as pl
import pytest

from analysis.viz import heatmap, theme


@pytest.mark.parametrize(
    ("better", "expected"),
    [
        # viridis is dark at its low end: the lowest 50% of the domain (0..10) print in white
        ("higher", 'datum["pct"] < 5.0'),
        # orangered and blues are dark at their high end: the top 40%
        ("lower", 'datum["pct"] > 6.0'),
        (None, 'datum["pct"] > 6.0'),
    ],
)
def test_labels_are_white_at_the_dark_end_of_the_scheme_of_the_better_end(better, expected):
    assert heatmap._on_dark("pct", better, (0.0, 10.0)) == expected


def test_the_dark_end_is_measured_from_the_domain_s_low_end():
    assert heatmap._on_dark("v", "higher", (2.0, 4.0)) == 'datum["v"] < 3.0'
    assert heatmap._on_dark("v", "lower", (2.0, 4.0)) == 'datum["v"] > 3.2'


def test_the_schemes_by_the_better_end():
    assert (theme.SCHEMES["higher"], theme.SCHEMES["lower"], theme.SCHEMES[None]) == ("viridis", "orangered", "blues")


def test_the_colour_domain_is_the_values_range_and_zero_to_one_without_values():
    assert heatmap._range(pl.Series([3.0, None, -1.5, 2.0])) == (-1.5, 3.0)
    assert heatmap._range(pl.Series([7], dtype=pl.Int64)) == (7.0, 7.0)
    assert heatmap._range(pl.Series([None, None], dtype=pl.Float64)) == (0.0, 1.0)
