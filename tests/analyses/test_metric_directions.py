"""A study's metrics in the direction it declares (`higher_is_better`): the best and worst model the
summary names, the colours of the metric's heatmap, and the first collection against the second (never a
collection against itself). The expected values are worked out here from the data."""

import math
import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.analyses import dimensions, metrics
from analysis.viz import score_charts, theme

pytestmark = pytest.mark.fast


def _metric_values(means: list[float], names: list[str], n: int = 3) -> pl.DataFrame:
    """`n` values per model around its mean (the same spread for every model)."""
    spread = [-0.01, 0.0, 0.01][:n]
    return pl.DataFrame(
        {
            "metric": ["m"] * (n * len(means)),
            "model": [name for name in names for _ in spread],
            "value": [mean + d for mean in means for d in spread],
        }
    )


def _best_and_worst(text: str) -> tuple[str, str]:
    best = re.search(r"is better\) (\S+) scores best", text)
    worst = re.search(r", (\S+) worst \(", text)
    assert best and worst, text
    return best.group(1), worst.group(1)


@settings(max_examples=40, deadline=None)
@given(
    means=st.lists(st.integers(0, 1000), min_size=2, max_size=7, unique=True),
    higher_is_better=st.booleans(),
    relabelling=st.randoms(use_true_random=False),
)
def test_best_and_worst_follow_higher_is_better_whatever_the_models_are_called(means, higher_is_better, relabelling):
    values = [m / 1000 for m in means]
    names = [f"model{i}" for i in range(len(values))]
    relabelling.shuffle(names)  # the names say nothing of the order of the means
    metric = metrics.Metric("m", higher_is_better, 0.0, 1.0)
    text = metrics.summary(_metric_values(values, names), [metric], pl.DataFrame(), "")
    top, bottom = names[int(np.argmax(values))], names[int(np.argmin(values))]
    assert _best_and_worst(text) == ((top, bottom) if higher_is_better else (bottom, top))
    assert ("higher is better" if higher_is_better else "lower is better") in text


def _cells(values: dict[tuple[str, str], float]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"model": m, "language": lang, "n_values": 5, "mean": v, "ci_low": v - 0.1, "ci_high": v + 0.1}
            for (m, lang), v in values.items()
        ]
    )


def _colour_scales(spec) -> list[dict]:
    """Every colour encoding's scale in a Vega-Lite spec, with its legend title."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            colour = node.get("encoding", {}).get("color") if isinstance(node.get("encoding"), dict) else None
            if isinstance(colour, dict) and "scale" in colour and "field" in colour:
                found.append(colour)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_a_metric_heatmap_is_coloured_by_the_end_its_study_declares_better(higher_is_better):
    orders = dimensions.Orders(["a", "b"], ["x", "y"], ["x", "y"])
    cells = _cells({("a", "x"): 0.2, ("a", "y"): 0.4, ("b", "x"): 0.6, ("b", "y"): 0.9})
    metric = metrics.Metric("m", higher_is_better, 0.0, 1.0)
    spec = score_charts.metric_heatmap(cells, metric, orders).to_dict()
    scales = _colour_scales(spec)
    assert scales, spec
    direction = "higher" if higher_is_better else "lower"
    for colour in scales:
        assert colour["scale"]["scheme"] == theme.SCHEMES[direction]
        assert f"{direction} is better" in str(colour.get("title", "")), colour
    assert f", {direction} is better)" in str(spec["title"])


def _compared(first: np.ndarray, second: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["m"] * (len(first) + len(second)),
            "language": ["x"] * (len(first) + len(second)),
            "collection": ["human"] * len(first) + ["auto"] * len(second),
            "value": np.concatenate([first, second]),
        }
    )


@pytest.mark.parametrize("order", [("human", "auto"), ("auto", "human")])
def test_the_collections_compared_are_the_first_and_the_second_never_one_with_itself(order):
    rng = np.random.default_rng(39)
    human, auto = 0.7 + 0.1 * rng.random(30), 0.2 + 0.1 * rng.random(40)
    orders = dimensions.Orders(["a"], ["x"], ["x"], collections=order)
    row = metrics.collection_tests(_compared(human, auto), orders).row(0, named=True)
    a, b = (human, auto) if order[0] == "human" else (auto, human)
    assert (row["collection_a"], row["collection_b"]) == order
    assert (row["n_a"], row["n_b"]) == (len(a), len(b))
    assert row["mean_a"] == pytest.approx(a.mean()) and row["mean_b"] == pytest.approx(b.mean())
    assert row["difference"] == pytest.approx(a.mean() - b.mean())
    # The two samples do not overlap: the Kolmogorov-Smirnov D is 1 and the p value tiny.
    assert row["ks_d"] == pytest.approx(1.0) and row["p_value"] < 1e-10
    assert row["p_holm"] == pytest.approx(row["p_value"])


def test_collections_with_the_same_values_differ_by_nothing():
    values = np.linspace(0, 1, 20)
    orders = dimensions.Orders(["a"], ["x"], ["x"], collections=("human", "auto"))
    row = metrics.collection_tests(_compared(values, values), orders).row(0, named=True)
    assert row["difference"] == 0.0 and math.isclose(row["p_value"], 1.0)
