"""The suite's one place for intervals: Wilson's score interval, the normal quantile, the normal interval of a mean."""

import datetime
import math
import warnings
import zlib

import numpy as np
import pytest

from analysis.stats import intervals


def test_wilson_interval_matches_a_known_value():
    low, high = intervals.wilson(5, 10)
    assert (float(low), float(high)) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_wilson_bounds_are_exact_at_none_and_all_and_undefined_without_answers():
    low, high = intervals.wilson([0, 10, 0], [10, 10, 0])
    assert low[0] == 0.0 and high[1] == 1.0
    assert 0 < high[0] < 1 and 0 < low[1] < 1
    assert math.isnan(low[2]) and math.isnan(high[2])


def test_the_normal_quantile_is_scipys():
    from scipy.stats import norm

    assert intervals.z_value() == float(norm.ppf(0.975)) == 1.959963984540054
    assert intervals.z_value(0.9) == pytest.approx(float(norm.ppf(0.95)))


def test_normal_mean_interval():
    assert intervals.normal_mean_interval(10.0, 2.0, 4) == pytest.approx((10 - 1.959964, 10 + 1.959964))
    assert intervals.normal_mean_interval(10.0, None, 4) == (None, None)
    assert intervals.normal_mean_interval(10.0, 2.0, 1) == (None, None)
    values = np.arange(100, dtype=float)
    low, high = intervals.normal_mean_interval(values.mean(), values.std(ddof=1), len(values))
    assert low < values.mean() < high


def test_bootstrap_draws_the_indices_of_64_bit_draws():
    """The bootstrap draws its resamples' indices as 32-bit integers for speed: they must be the very
    indices 64-bit draws give (NumPy bounds both with 32-bit draws), or every interval would move."""
    values = np.round(np.random.default_rng(0).random(300), 4)  # many distinct values: the resampling path
    reference_rng = np.random.default_rng([6, 1])
    means = values[reference_rng.integers(0, len(values), size=(2000, len(values)))].mean(axis=1)
    expected = tuple(float(q) for q in np.quantile(means, [0.025, 0.975]))
    assert intervals.bootstrap_mean_ci(values, np.random.default_rng([6, 1]), 2000) == expected


def test_bootstrap_in_blocks_draws_and_averages_as_one_block():
    """A large group is resampled in blocks that fit the processor's cache: its interval must be the one
    a single draw of every resample at once gives."""
    values = np.round(np.random.default_rng(1).random(5000), 4)
    reference_rng = np.random.default_rng([6, 2])
    drawn = reference_rng.integers(0, len(values), size=(2000, len(values)), dtype=np.int64)
    expected = tuple(float(q) for q in np.quantile(values[drawn].mean(axis=1), [0.025, 0.975]))
    assert intervals.bootstrap_mean_ci(values, np.random.default_rng([6, 2]), 2000) == expected


def test_bootstrap_cells_on_several_cores_match_the_groups_one_by_one():
    """The groups are resampled at once on every core; each cell's interval is still its own group's,
    drawn from its own generator, in the groups' order."""
    import polars as pl

    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"group": rng.integers(0, 7, 3000), "value": np.round(rng.random(3000), 3)})
    cells = intervals.bootstrap_cells(frame, ["group"], "value", n_resamples=300)
    for row in cells.iter_rows(named=True):
        values = frame.filter(pl.col("group") == row["group"])["value"].to_numpy()
        low, high = intervals.bootstrap_mean_ci(values, intervals._group_rng(intervals.SEED, (row["group"],)), 300)
        assert (row["n_valid"], row["ci_low"], row["ci_high"]) == (len(values), low, high)
    assert cells["group"].to_list() == sorted(set(frame["group"]))


def test_a_cell_s_seed_is_the_crc32_of_its_key_as_json_whatever_its_values_types():
    # a key of numpy and date values (as polars gives a group's values): written as text, not refused
    key = (np.int64(3), "sw", datetime.date(2024, 5, 1))
    assert intervals.cell_seed(7, key) == (7, zlib.crc32(b'["3", "sw", "2024-05-01"]'))


def test_wilson_of_no_trial_is_undefined_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        low, high = intervals.wilson(np.array([0, 3]), np.array([0, 4]))
    assert math.isnan(low[0]) and math.isnan(high[0])
    assert 0.0 < low[1] < 0.75 < high[1] < 1.0


def test_wilson_of_one_trial_is_the_formula_worked_by_hand():
    """n = 1: one success gives [1 / (1 + z^2), 1], none [0, z^2 / (1 + z^2)] (the score interval at p = 1 and 0)."""
    z2 = 1.959963984540054**2
    low, high = intervals.wilson([1, 0], [1, 1])
    assert list(low) == pytest.approx([1 / (1 + z2), 0.0], abs=1e-12)
    assert list(high) == pytest.approx([1.0, z2 / (1 + z2)], abs=1e-12)


def test_wilson_bounds_stay_inside_zero_and_one_without_a_clip_up_to_a_billion_trials():
    n = np.unique(np.logspace(0, 9, 200).astype(np.int64))
    for k in (np.ones_like(n), np.maximum(n - 1, 1), n // 2):
        inside = (k > 0) & (k < n)
        low, high = intervals.wilson(k[inside], n[inside])
        assert np.all(low > 0) and np.all(high < 1) and np.all(low < high)


def test_wilson_bounds_of_none_and_all_are_exact_where_the_formula_is_a_hair_off():
    # At n = 3, 6, 7 the formula's lower bound of k = 0 is 5.6e-17, 2.8e-17, 5.6e-17 in floating point, and
    # its upper bound of k = n at n = 10, 13, 16 is a hair off 1 (below it at 10 and 13, 1 + 2e-16 at 16;
    # worked in numpy by hand).
    low, _ = intervals.wilson([0, 0, 0], [3, 6, 7])
    _, high = intervals.wilson([10, 13, 16], [10, 13, 16])
    assert list(low) == [0.0, 0.0, 0.0] and list(high) == [1.0, 1.0, 1.0]
