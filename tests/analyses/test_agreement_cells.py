"""The bootstraps of agreement (`analyses.agreement`) resample each cell with its own draws: languages whose
ratings are the same get the same alpha and different intervals, and every metric x language cell of the
metric-human agreement gets a seed of its own."""

import numpy as np
import polars as pl
import pytest
from study_tables import study_database

from analysis.analyses import agreement, dimensions, ratings
from analysis.core import paths
from analysis.io.criterion_kinds import CRITERION_KIND_BY_NAME
from analysis.stats import agreement as stats_agreement

pytestmark = pytest.mark.fast

EXAMPLE = paths.DATA / "examples" / "study"


def test_languages_with_the_same_ratings_get_the_same_alpha_and_their_own_intervals():
    rng = np.random.default_rng(39)
    truth = rng.integers(1, 6, 40)
    second = np.where(rng.random(40) < 0.7, truth, rng.integers(1, 6, 40))
    rows = [
        {"question_id": offset + q, "model": "m", "language": language, "annotator": who, "level_position": int(v)}
        for language, offset in (("A", 0), ("B", 1000))
        for who, levels in (("first", truth), ("second", second))
        for q, v in enumerate(levels)
    ]
    criterion = ratings.Criterion("c", ("1", "2", "3", "4", "5"), CRITERION_KIND_BY_NAME["numbered"])
    orders = dimensions.Orders(["m"], ["A", "B"], ["A", "B"])
    table = agreement.criterion_agreement(pl.DataFrame(rows), criterion, orders, n_resamples=300)
    a, b = (table.filter(pl.col("language") == language).row(0, named=True) for language in ("A", "B"))
    assert a["alpha"] == b["alpha"] and a["n_answers"] == b["n_answers"] == 40
    assert (a["ci_low"], a["ci_high"]) != (b["ci_low"], b["ci_high"])


def test_every_metric_human_cell_draws_its_own_resamples(monkeypatch):
    seeds = []
    real = stats_agreement.tau_interval

    def recording(x, y, n_resamples, seed):
        seeds.append(repr(seed))
        return real(x, y, n_resamples, seed)

    monkeypatch.setattr(stats_agreement, "tau_interval", recording)
    con = study_database(EXAMPLE)
    table = agreement.metric_human_agreement(con, ratings.criteria(con), dimensions.Orders.of(con), n_resamples=20)
    assert len(seeds) == table.filter(pl.col("ci_low").is_not_null()).height > 1
    assert len(set(seeds)) == len(seeds)
