"""Unit tests at the rules that `make mutants` found untested (docs/mutants.md): each fails on a mutant
of its rule that the fast tier let survive."""

import math

import polars as pl
import pytest

from analysis.analyses import paper_check
from analysis.stats import intervals


def test_the_normal_interval_of_a_mean_needs_two_values():
    low, high = intervals.normal_mean_interval(10.0, 2.0, 2)
    half = intervals.z_value() * 2.0 / math.sqrt(2)
    assert (low, high) == pytest.approx((10.0 - half, 10.0 + half))


def _shares(n_valid_by_group: dict[str, int]) -> pl.DataFrame:
    groups, values = [], []
    for group, n_valid in n_valid_by_group.items():
        groups += [group] * (n_valid + 1)
        values += [float(i % 2) for i in range(n_valid)] + [None]
    return pl.DataFrame({"group": groups, "value": values})


def test_share_cells_are_sorted_counted_and_scaled():
    frame = _shares({f"g{i:02d}": 10 + i for i in range(20, 0, -1)})
    cells = intervals.share_cells(frame, ["group"], "value", scale=1.0)
    assert cells["group"].to_list() == sorted(cells["group"].to_list())
    assert cells.schema["n_valid"] == pl.Int64
    assert "n_true" not in cells.columns
    first = cells.row(0, named=True)
    low, high = intervals.wilson(first["n_valid"] // 2, first["n_valid"])
    assert (first["ci_low"], first["ci_high"]) == pytest.approx((float(low), float(high)))


def test_a_cell_below_the_minimum_has_no_interval_and_one_value_may_suffice():
    cells = intervals.share_cells(
        _shares({"few": intervals.MIN_VALID - 1, "enough": intervals.MIN_VALID}), ["group"], "value"
    )
    few = cells.filter(pl.col("group") == "few").row(0, named=True)
    assert few["mean"] is None and few["ci_low"] is None and few["ci_high"] is None
    enough = cells.filter(pl.col("group") == "enough").row(0, named=True)
    assert None not in (enough["mean"], enough["ci_low"], enough["ci_high"])
    one = intervals.share_cells(_shares({"one": 1}), ["group"], "value", min_valid=0)
    assert one["mean"].to_list() == [0.0]


def test_a_number_one_unit_off_on_the_printed_grid_differs():
    # 0.29 printed as 0.28: one unit off, and no digit beyond the printed ones to have been rounded away.
    assert paper_check.status("0.28", 0.29) == "differs"
    assert paper_check.status("0.28", 0.2899) == "within rounding"
