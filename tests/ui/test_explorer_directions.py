"""The explorer's heatmap colours a study's metric by the end the study declares better, and prints a
cell's label in white over the dark end of that scheme."""

import re

import polars as pl
import pytest

from analysis.analyses import dimensions
from analysis.analyses.answers import Scale
from analysis.analyses.tiers import TIER_COLUMNS
from analysis.ui import explorer_logic
from analysis.viz import theme

pytestmark = pytest.mark.fast


def _cells() -> pl.DataFrame:
    rows = [("a", "x", 0.1), ("a", "y", 0.5), ("b", "x", 0.7), ("b", "y", 0.9)]
    return pl.DataFrame(
        {
            "model_name": [r[0] for r in rows],
            "language": [r[1] for r in rows],
            "question_type": [None] * len(rows),
            "value": [r[2] for r in rows],
            "n_answers": [10] * len(rows),
            "ci_low": [r[2] - 0.05 for r in rows],
            "ci_high": [r[2] + 0.05 for r in rows],
            "status": [None] * len(rows),
            **{c: [None] * len(rows) for c in TIER_COLUMNS},
        },
        schema_overrides={"question_type": pl.String, "status": pl.String, **{c: pl.Float64 for c in TIER_COLUMNS}},
    )


def _find(node, key):
    """Every value of `key` anywhere in a Vega-Lite spec."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            yield from _find(v, key)
    elif isinstance(node, list):
        for v in node:
            yield from _find(v, key)


@pytest.mark.parametrize("better", ["higher", "lower"])
def test_the_explorer_colours_a_study_metric_by_its_declared_better_end(better):
    scale = Scale("metric:m", "m", "metric", "study_metric_0", better, (0.0, 1.0))
    metric = explorer_logic.scale_metric(scale)
    assert metric.better == better
    orders = dimensions.Orders(["a", "b"], ["x", "y"], ["x", "y"])
    spec = explorer_logic.explorer_chart(_cells(), metric, (0.0, 1.0), orders).to_dict()
    schemes = {s["scheme"] for s in _find(spec, "scale") if isinstance(s, dict) and "scheme" in s}
    assert schemes == {theme.SCHEMES[better]}
    assert f"{better} is better" in str(list(_find(spec, "title")))
    # The labels printed in white: over the low values of "higher"'s scheme (dark at its low end), over the
    # high values of "lower"'s (dark at its high end).
    tests = [t for t in _find(spec, "test") if isinstance(t, str) and re.search(r"\] [<>] ", t)]
    assert tests, spec
    for test in tests:
        assert re.search(r"\] <" if better == "higher" else r"\] >", test), test
