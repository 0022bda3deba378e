"""The bootstrap of a heatmap's cells (`stats.intervals.bootstrap_cells`): each cell is resampled with its
own draws, and the same seed gives the same intervals. The expected values come from the data and from
comparisons between runs, never from the module's own seeding."""

import numpy as np
import polars as pl
import pytest

from analysis.stats import intervals

pytestmark = pytest.mark.fast

N_CELLS = 12


def _identical_cells(values: np.ndarray) -> pl.DataFrame:
    """`N_CELLS` cells holding the same values: only their draws can tell their intervals apart."""
    return pl.DataFrame(
        {
            "model": np.repeat([f"m{i}" for i in range(N_CELLS)], len(values)),
            "value": np.tile(values, N_CELLS),
        }
    )


# Few distinct values (a 0/1 verdict: the multinomial draw) and many (a continuous score: drawn indices).
SAMPLES = {
    "verdicts": (np.arange(40) % 3 == 0).astype(float),
    "scores": np.round(np.linspace(0.0, 1.0, 40) ** 2, 4),
}


@pytest.mark.parametrize("kind", SAMPLES)
def test_cells_with_the_same_values_are_resampled_with_different_draws(kind):
    """A seed shared by every cell gives cells of the same values the same interval to the last digit."""
    cells = intervals.bootstrap_cells(_identical_cells(SAMPLES[kind]), ["model"], "value", n_resamples=200)
    assert cells["mean"].n_unique() == 1  # the same values...
    bounds = set(zip(cells["ci_low"].to_list(), cells["ci_high"].to_list()))
    assert len(bounds) > N_CELLS // 2, bounds  # ...and (nearly) every cell its own interval


@pytest.mark.parametrize("kind", SAMPLES)
def test_the_same_seed_gives_the_same_intervals_and_another_seed_others(kind):
    frame = _identical_cells(SAMPLES[kind])
    first = intervals.bootstrap_cells(frame, ["model"], "value", n_resamples=200, seed=11)
    again = intervals.bootstrap_cells(frame, ["model"], "value", n_resamples=200, seed=11)
    other = intervals.bootstrap_cells(frame, ["model"], "value", n_resamples=200, seed=12)
    assert first.equals(again)
    assert not first.select("ci_low", "ci_high").equals(other.select("ci_low", "ci_high"))


def test_a_cell_keeps_its_interval_when_other_cells_are_added_or_reordered():
    rng = np.random.default_rng(5)
    frame = pl.DataFrame({"model": rng.choice(["a", "b", "c", "d"], 400), "value": rng.random(400)})
    alone = intervals.bootstrap_cells(frame.filter(pl.col("model") == "c"), ["model"], "value", n_resamples=200)
    # The other cells first (each cell's own values keep their order: the draws pick positions among them).
    reordered = frame.sort("model", descending=True, maintain_order=True)
    together = intervals.bootstrap_cells(reordered, ["model"], "value", n_resamples=200)
    assert together.filter(pl.col("model") == "c").equals(alone)


def test_a_cell_s_interval_contains_its_mean_and_lies_within_its_values():
    rng = np.random.default_rng(8)
    frame = pl.DataFrame({"model": rng.choice(["a", "b"], 300), "value": rng.normal(size=300)})
    for row in intervals.bootstrap_cells(frame, ["model"], "value", n_resamples=300).iter_rows(named=True):
        values = frame.filter(pl.col("model") == row["model"])["value"]
        assert row["mean"] == pytest.approx(values.mean())
        assert values.min() <= row["ci_low"] < row["mean"] < row["ci_high"] <= values.max()
