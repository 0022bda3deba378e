"""Holm's step-down adjustment, in both its implementations (`stats.significance.holm` for one family,
`_holm_frame` for the families of a table), and as the collections' comparison applies it: a hand-computed family, statsmodels' `multipletests` and the definition written
out as oracles, and the properties every adjustment has (never below the raw p value, at most 1, monotone in the raw order)."""

import math

import numpy as np
import polars as pl
import pytest
from holm_oracle import statsmodels_holm
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.stats import significance

pytestmark = pytest.mark.fast


def _by_numpy(p: list[float]) -> list[float]:
    return significance.holm(np.array(p, dtype=float)).tolist()


def _by_frame(p: list[float]) -> list[float]:
    frame = pl.DataFrame({"family": [0] * len(p), "p": [None if math.isnan(v) else v for v in p]})
    adjusted = significance._holm_frame(frame, "p", ["family"], "adjusted")["adjusted"]
    return [math.nan if v is None else v for v in adjusted.to_list()]


HOLM = {"significance.holm": _by_numpy, "significance._holm_frame": _by_frame}

# Sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (the running maximum:
# without it the largest raw p value would get a smaller adjusted one than the one before it).
HAND_RAW = [0.01, 0.04, 0.03, 0.005, math.nan]
HAND_ADJUSTED = [0.03, 0.06, 0.06, 0.02, math.nan]


@pytest.mark.parametrize("holm", HOLM.values(), ids=HOLM)
def test_holm_of_a_family_worked_by_hand(holm):
    assert holm(HAND_RAW) == pytest.approx(HAND_ADJUSTED, nan_ok=True)


@pytest.mark.parametrize("holm", HOLM.values(), ids=HOLM)
def test_holm_is_statsmodels_with_ties_and_ones(holm):
    raw = [0.2, 0.001, 0.04, 0.04, 0.3, 1.0, 0.011, 0.0, 0.05, 0.049]
    assert holm(raw) == pytest.approx(list(statsmodels_holm(raw)), rel=1e-12, abs=1e-15)


def _holm_by_definition(raw: list[float]) -> list[float]:
    """Holm's adjustment as its definition reads (quadratic, for short families): the k-th smallest of m
    p values becomes the largest of min(1, (m - j + 1) p_(j)) over j <= k. (statsmodels' `multipletests`,
    the oracle above, is another implementation; the definition is what every implementation must agree with,
    for families of any length.)"""
    m = len(raw)
    order = sorted(range(m), key=lambda i: raw[i])
    adjusted = [0.0] * m
    for k, i in enumerate(order):
        adjusted[i] = max(min(1.0, (m - j) * raw[order[j]]) for j in range(k + 1))
    return adjusted


p_values = st.lists(
    st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.01, 0.05, 1.0]), st.just(math.nan)), max_size=25
)


@pytest.mark.parametrize("holm", HOLM.values(), ids=HOLM)
@settings(max_examples=50, deadline=None)
@given(raw=p_values)
def test_holm_is_monotone_never_below_the_raw_p_and_follows_its_definition(holm, raw):
    adjusted = holm(raw)
    tested = [i for i, v in enumerate(raw) if not math.isnan(v)]
    assert all(math.isnan(adjusted[i]) for i in range(len(raw)) if i not in tested)
    for i in tested:
        assert raw[i] <= adjusted[i] <= 1.0
        for j in tested:
            if raw[i] <= raw[j]:
                assert adjusted[i] <= adjusted[j] + 1e-15, (raw, adjusted)
    oracle = _holm_by_definition([raw[i] for i in tested])
    assert [adjusted[i] for i in tested] == pytest.approx(oracle, rel=1e-12, abs=1e-15)


@settings(max_examples=15, deadline=None)
@given(families=st.lists(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8), min_size=1, max_size=5))
def test_holm_within_groups_adjusts_each_family_on_its_own(families):
    frame = pl.DataFrame(
        {"family": [f for f, ps in enumerate(families) for _ in ps], "p": [p for ps in families for p in ps]}
    )
    adjusted = significance._holm_frame(frame, "p", ["family"], "adjusted")
    for f, ps in enumerate(families):
        got = adjusted.filter(pl.col("family") == f)["adjusted"].to_list()
        assert got == pytest.approx(_holm_by_definition(ps), rel=1e-12, abs=1e-15)


def test_holm_within_groups_adds_its_column_and_no_other():
    frame = pl.DataFrame({"g": ["a", "a", "b"], "name": ["x", "y", "z"], "p": [0.01, 0.04, None]})
    found = significance._holm_frame(frame, "p", ["g"], "adjusted")
    assert found.columns == ["g", "name", "p", "adjusted"]
    assert found["name"].to_list() == ["x", "y", "z"]
    assert found["adjusted"].to_list()[:2] == pytest.approx([0.02, 0.04]) and found["adjusted"][2] is None
