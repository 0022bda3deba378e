"""Significance tiers, rank intervals and agreement (issue 37): each statistic against an independent
implementation (statsmodels' McNemar and Holm, scipy's Wilcoxon and Kendall's tau-b, scikit-learn's
weighted kappa, the worked example of Krippendorff's own paper), and tiers, alpha and tau on data
simulated with planted differences, at the statistics level (no build)."""

import math

import numpy as np
import polars as pl
import pytest
from holm_oracle import statsmodels_holm
from polars.testing import assert_frame_equal
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from analysis.analyses import tiers as analyses_tiers
from analysis.io.criterion_kinds import CRITERION_KIND_BY_NAME
from analysis.stats import agreement, significance

pytestmark = pytest.mark.fast


# ---------------------------------------------------------------- the tests against their references


@pytest.mark.parametrize("b, c", [(0, 0), (0, 1), (3, 9), (10, 2), (0, 7), (25, 25), (50, 71), (120, 80)])
def test_mcnemar_exact_is_statsmodels(b, c):
    expected = mcnemar([[17, b], [c, 4]], exact=True).pvalue
    assert significance.mcnemar_exact([b], [c])[0] == pytest.approx(expected, rel=1e-12)


def test_holm_is_statsmodels_on_one_family_and_within_groups():
    rng = np.random.default_rng(37)
    p = np.concatenate([rng.random(9) ** 3, [0.01, 0.01, 1.0]])
    assert significance.holm(p) == pytest.approx(statsmodels_holm(p))
    groups = np.repeat([0, 1, 2], 4)
    frame = pl.DataFrame({"g": groups, "p": p})
    adjusted = significance._holm_frame(frame, "p", ["g"], "a")["a"].to_numpy()
    for g in range(3):
        assert adjusted[groups == g] == pytest.approx(statsmodels_holm(p[groups == g]))


def _two_models(values_a, values_b):
    n = len(values_a)
    return pl.DataFrame(
        {
            "language": ["x"] * (2 * n),
            "model": ["a"] * n + ["b"] * n,
            "question_id": list(range(n)) * 2,
            "value": np.concatenate([values_a, values_b]),
        }
    )


def test_the_binary_tiers_test_is_mcnemar_on_the_shared_questions():
    rng = np.random.default_rng(1)
    a = rng.random(80) < 0.8
    b = rng.random(80) < 0.6
    frame = _two_models(a, b)
    # a question only one model answered is not paired
    frame = pl.concat(
        [frame, pl.DataFrame({"language": ["x"], "model": ["a"], "question_id": [999], "value": [False]})]
    )
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary"
    )
    best, other = ("a", "b") if a.mean() >= b.mean() else ("b", "a")
    table = [[int(np.sum(a & b)), int(np.sum(a & ~b))], [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
    p = mcnemar(table, exact=True).pvalue
    row = found.filter(pl.col("model") == other).row(0, named=True)
    assert row["p_vs_best"] == pytest.approx(p)
    assert found.filter(pl.col("model") == best)["p_vs_best"][0] is None


def test_the_numeric_tiers_test_is_wilcoxon_signed_rank():
    rng = np.random.default_rng(2)
    a = np.round(rng.normal(0.6, 0.2, 150), 1)  # rounded: zero differences and tied ranks
    b = np.round(a - rng.normal(0.05, 0.2, 150), 1)
    found = significance.tiers(
        _two_models(a, b), group=["language"], model="model", unit="question_id", value="value", kind="numeric"
    )
    expected = stats.wilcoxon(a, b, zero_method="wilcox", correction=False, method="approx").pvalue
    assert found.filter(pl.col("p_vs_best").is_not_null())["p_vs_best"][0] == pytest.approx(expected, rel=1e-9)


def test_tiers_group_what_no_test_separates_from_each_tier_leader():
    # 400 questions: a and b identical, c 10 points lower on other questions, d far lower
    n = 400
    base = np.arange(n) % 10 < 8  # 80%
    c = base.copy()
    c[np.flatnonzero(base)[:40]] = False  # 70%
    d = np.arange(n) % 10 < 3  # 30%
    frame = pl.concat(
        [_two_models(base, base), _two_models(c, d).with_columns(pl.col("model").replace({"a": "c", "b": "d"}))]
    )
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary"
    )
    assert dict(found.select("model", "tier").iter_rows()) == {"a": 1, "b": 1, "c": 2, "d": 3}
    lower = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary", better="lower"
    )
    assert dict(lower.select("model", "tier").iter_rows()) == {"d": 1, "c": 2, "a": 3, "b": 3}


# ---------------------------------------------------------------- planted differences, simulated


N_STUDIES, N_QUESTIONS, N_MODELS, BEST_SHARE = 200, 150, 5, 0.7


def documented_size(share: float, n: int, n_models: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """docs/methods.md: the difference a cell of n answers can detect against the best (Bonferroni over the
    group's n_models - 1 comparisons, 80% power), at the group's share, here written from the formula."""
    z = stats.norm.ppf(1 - alpha / (2 * (n_models - 1))) + stats.norm.ppf(power)
    return float(z * math.sqrt(2 * share * (1 - share) / n))


def _simulated(planted: dict[str, float], seed: int) -> pl.DataFrame:
    """N_STUDIES studies (one language each) of N_QUESTIONS questions: each model answers a question
    correctly with its planted share, questions differing in difficulty (answers correlated)."""
    rng = np.random.default_rng(seed)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    difficulty = rng.normal(0, 0.8, size=(N_STUDIES, N_QUESTIONS))
    frames = []
    for model, share in planted.items():
        # a logit shift that keeps the mean share close to the planted one over the difficulties
        latent = logit(share) * math.sqrt(1 + 0.8**2 * math.pi**2 / 8 / 3) + difficulty
        correct = rng.random((N_STUDIES, N_QUESTIONS)) < 1 / (1 + np.exp(-latent))
        frames.append(
            pl.DataFrame(
                {
                    "language": np.repeat(np.arange(N_STUDIES), N_QUESTIONS),
                    "model": model,
                    "question_id": np.tile(np.arange(N_QUESTIONS), N_STUDIES),
                    "value": correct.ravel(),
                }
            )
        )
    return pl.concat(frames)


def test_models_planted_equal_share_a_tier_and_a_planted_difference_is_separated():
    pooled = BEST_SHARE - 0.1
    size = documented_size(pooled, N_QUESTIONS, N_MODELS)
    planted = {"a": BEST_SHARE, "b": BEST_SHARE, "c": BEST_SHARE - size, "d": 0.45, "e": 0.4}
    frame = _simulated(planted, seed=37)
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary"
    )
    tier = {(row["language"], row["model"]): row["tier"] for row in found.iter_rows(named=True)}
    share_a_tier = np.mean([tier[(s, "a")] == tier[(s, "b")] for s in range(N_STUDIES)])
    top = [min(tier[(s, "a")], tier[(s, "b")]) for s in range(N_STUDIES)]
    separated = np.mean([tier[(s, "c")] > top[s] for s in range(N_STUDIES)])
    assert share_a_tier >= 0.95, share_a_tier
    assert separated >= 0.8, (separated, size)
    # the cells report that size (at the studies' own pooled shares, so near it)
    reported = found.filter(pl.col("model") == "c")["min_detectable_difference"].median()
    assert reported == pytest.approx(size, rel=0.15)


def test_tiers_of_fifty_languages_twenty_models_five_hundred_questions():
    # the bench times this size (scripts/bench.py); here only that it runs and finds the planted order
    rng = np.random.default_rng(5)
    n_languages, n_models, n_questions = 50, 20, 500
    shares = np.linspace(0.3, 0.9, n_models)
    frame = pl.DataFrame(
        {
            "language": np.repeat(np.arange(n_languages), n_models * n_questions),
            "model": np.tile(np.repeat(np.arange(n_models), n_questions), n_languages),
            "question_id": np.tile(np.arange(n_questions), n_languages * n_models),
            "value": rng.random(n_languages * n_models * n_questions)
            < np.tile(np.repeat(shares, n_questions), n_languages),
        }
    )
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary"
    )
    assert found.height == n_languages * n_models
    assert found.filter(pl.col("model") == n_models - 1)["tier"].max() == 1
    assert found.filter(pl.col("model") == 0)["tier"].min() > 3


def test_rank_intervals_cover_planted_ranks():
    rng = np.random.default_rng(8)
    rows = []
    for language in ("x", "y"):
        for q in range(300):
            for model, mean in (("good", 0.8), ("middle", 0.5), ("twin", 0.5), ("poor", 0.2)):
                rows.append((language, model, q, rng.normal(mean, 0.3)))
    frame = pl.DataFrame(rows, schema=["language", "model", "question_id", "value"], orient="row")
    ranks = significance.rank_intervals(
        frame, group="language", model="model", unit="question_id", value="value", n_resamples=300
    )
    overall = {r["model"]: r for r in ranks.filter(pl.col("language").is_null()).iter_rows(named=True)}
    assert (overall["good"]["rank_low"], overall["good"]["rank_high"]) == (1, 1)
    assert (overall["poor"]["rank_low"], overall["poor"]["rank_high"]) == (4, 4)
    for twin in ("middle", "twin"):  # planted equal: their intervals span both ranks
        assert (overall[twin]["rank_low"], overall[twin]["rank_high"]) == (2, 3)


# ---------------------------------------------------------------- agreement


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers, twelve
# units, values 1 to 5, missing data; the paper computes alpha = 0.743 (nominal), 0.815 (ordinal) and
# 0.849 (interval).
KRIPPENDORFF_EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _example_counts():
    units, values = [], []
    for observer in KRIPPENDORFF_EXAMPLE:
        for unit, value in enumerate(observer):
            if value is not None:
                units.append(unit)
                values.append(value - 1)
    return agreement.value_counts(np.array(units), np.array(values), 5)


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_of_the_papers_worked_example(level, published):
    assert round(agreement.krippendorff_alpha(_example_counts(), level), 3) == published


def test_annotator_agreement_of_the_worked_example_counts_its_answers_and_pairs():
    rows = [
        (unit, f"observer {o}", value - 1)
        for o, observer in enumerate(KRIPPENDORFF_EXAMPLE)
        for unit, value in enumerate(observer)
        if value is not None
    ]
    frame = pl.DataFrame(rows, schema=["unit", "annotator", "level"], orient="row")
    result = agreement.annotator_agreement(
        frame, unit="unit", annotator="annotator", level="level", n_levels=5, ordinal=False, n_resamples=200
    )
    # unit 12 has one value only: 11 pairable units, with 3, 4, 4, ... values: pairs = sum m(m-1)/2
    per_unit = [sum(o[u] is not None for o in KRIPPENDORFF_EXAMPLE) for u in range(12)]
    assert result["n_answers"] == 11
    assert result["n_pairs"] == sum(m * (m - 1) // 2 for m in per_unit if m >= 2)
    assert round(result["alpha"], 3) == 0.743
    assert result["ci_low"] <= result["alpha"] <= result["ci_high"]
    assert result["kappa"] is None  # four annotators


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_weighted_kappa_is_scikit_learns(weights):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 200)
    b = np.clip(a + rng.integers(-1, 2, 200), 0, 4)
    assert agreement.weighted_kappa(a, b, 5, weights) == pytest.approx(cohen_kappa_score(a, b, weights=weights))


def test_kendall_tau_b_is_scipys_with_ties_and_with_repeated_answers():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, 90).astype(float)  # a 0/1 verdict
    y = rng.integers(1, 6, 90) / 2 + x  # a mean rating with ties
    assert agreement.kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    counts = rng.integers(0, 4, 90)
    weighted = agreement.kendall_tau_b_weighted(x, y, counts[None, :])[0]
    assert weighted == pytest.approx(stats.kendalltau(np.repeat(x, counts), np.repeat(y, counts)).statistic)


def test_planted_agreement_comes_back():
    rng = np.random.default_rng(6)
    n = 300
    truth = rng.integers(0, 5, n)

    def rated(noise: float) -> pl.DataFrame:
        rows = []
        for annotator in ("p", "q"):
            levels = np.where(rng.random(n) < noise, rng.integers(0, 5, n), truth)
            rows += [(u, annotator, int(v)) for u, v in enumerate(levels)]
        return pl.DataFrame(rows, schema=["unit", "annotator", "level"], orient="row")

    options = {"unit": "unit", "annotator": "annotator", "level": "level", "n_levels": 5, "ordinal": True}
    perfect = agreement.annotator_agreement(rated(0.0), **options, n_resamples=200)
    assert perfect["alpha"] == pytest.approx(1.0) and perfect["kappa"] == pytest.approx(1.0)
    random = agreement.annotator_agreement(rated(1.0), **options, n_resamples=200)
    assert random["ci_low"] < 0 < random["ci_high"]
    # 30% of each annotator's ratings replaced by chance: the two agree on the truth for about half the
    # answers (0.7 squared), so alpha is near 0.5, and the weighted kappa of two annotators tracks it
    part = agreement.annotator_agreement(rated(0.3), **options, n_resamples=200)
    assert 0.3 < part["alpha"] < 0.65 and abs(part["kappa"] - part["alpha"]) < 0.05

    metric = np.exp(truth)  # a metric that orders (and ties) the answers as the truth does
    assert agreement.kendall_tau_b(metric, truth) == pytest.approx(1.0)
    low, high = agreement.tau_interval(rng.normal(size=n), truth, n_resamples=300)
    assert low < 0 < high  # a metric planted unrelated


def test_with_tiers_leaves_cells_without_a_value_out():
    answers = pl.DataFrame(
        {
            "model": ["a"] * 20 + ["b"] * 20 + ["c"] * 20,
            "language": ["x"] * 60,
            "question_id": list(range(20)) * 3,
            "v": [True] * 20 + [False] * 20 + [True] * 20,
        }
    )
    cells = pl.DataFrame(
        {"model": ["a", "b", "c"], "language": ["x"] * 3, "status": [None, None, "language not identified"]}
    )
    found = analyses_tiers.with_tiers(cells, answers, "v", by=["model", "language"], better="higher")
    assert found["tier"].to_list() == [1, 2, None]
    assert found.filter(pl.col("model") == "b")["p_vs_best"][0] == pytest.approx(2 * 0.5**20, rel=1e-3)


def test_tiers_of_models_grouped_by_nothing_else():
    """Per model alone (a study without question types, every language pooled): one group of all answers,
    as polars cannot join on no key; the tiers and p values are those of the hand-made cases above."""
    answers = pl.DataFrame(
        {"model": ["a"] * 20 + ["b"] * 20, "question_id": list(range(20)) * 2, "v": [True] * 20 + [False] * 20}
    )
    cells = pl.DataFrame({"model": ["a", "b"], "mean": [1.0, 0.0]})
    found = analyses_tiers.with_tiers(cells, answers, "v", by=["model"], better="higher")
    assert found.columns == ["model", "mean", "tier", "p_vs_best", "p_adjusted", "min_detectable_difference"]
    assert found["tier"].to_list() == [1, 2]
    assert found["p_vs_best"][1] == pytest.approx(2 * 0.5**20, rel=1e-3)
    numeric = significance.tiers(
        answers.with_columns(pl.col("v").cast(pl.Float64)),
        group=[],
        model="model",
        unit="question_id",
        value="v",
        kind="numeric",
    )
    assert numeric.columns == ["model", "n", "mean", *significance.TIER_COLUMNS]
    assert numeric["tier"].to_list() == [1, 2]
    means = pl.DataFrame({"model": ["a", "b", "c", "d"], "mean": [1.0, 0.8, 0.2, 0.5]})
    pairs = pl.DataFrame(
        {
            "model_a": ["a", "c", "a", "b", "b", "c"],
            "model_b": ["b", "a", "d", "c", "d", "d"],
            "p": [0.04, 0.001, 0.3, 0.01, 0.5, 0.02],
        }
    )
    from_pairs = significance.tiers_from_pairs(means, pairs, group=[], model="model")
    assert dict(from_pairs.select("model", "tier").iter_rows()) == {"a": 1, "b": 1, "c": 2, "d": 1}


def test_a_heatmap_with_tiers_marks_its_top_tier_and_says_so():
    from analysis.viz import heatmap

    table = pl.DataFrame(
        {
            "model": ["a", "b", "a", "b"],
            "language": ["x", "x", "y", "y"],
            "value": [90.0, 40.0, 50.0, 55.0],
            "tier": [1, 2, 1, 1],
            "p_vs_best": [None, 0.001, 0.6, None],
            "p_adjusted": [None, 0.001, 0.6, None],
            "min_detectable_difference": [20.0, 20.0, 25.0, 25.0],
        }
    )
    spec = heatmap.heatmap(table, "language", "model", "value", title="t").to_dict()
    marks = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "point"]
    assert len(marks) == 1
    assert any("datum.tier === 1" in str(t) for t in marks[0]["transform"])
    assert heatmap.TIER_NOTE in spec["title"]["subtitle"]
    tooltip_fields = {t["field"] for t in spec["layer"][0]["encoding"]["tooltip"]}
    assert {"tier", "p_vs_best", "p_adjusted", "min_detectable_difference"} <= tooltip_fields
    plain = heatmap.heatmap(table.drop("tier"), "language", "model", "value", title="t").to_dict()
    assert not [layer for layer in plain["layer"] if layer.get("mark", {}).get("type") == "point"]


def test_the_vectorised_alpha_of_resamples_is_the_krippendorff_packages():
    import krippendorff

    rng = np.random.default_rng(12)
    counts = np.zeros((120, 4))
    for unit in range(120):
        level = rng.integers(0, 4)
        for _ in range(rng.integers(2, 5)):
            counts[unit, level if rng.random() < 0.6 else rng.integers(0, 4)] += 1
    weights = np.zeros((40, 120))
    np.add.at(weights, (np.arange(40)[:, None], rng.integers(0, 120, (40, 120))), 1.0)
    for level in ("nominal", "ordinal", "interval"):
        expected = [
            krippendorff.alpha(
                value_counts=np.repeat(counts, weights[r].astype(int), axis=0),
                value_domain=list(range(4)),
                level_of_measurement=level,
            )
            for r in range(40)
        ]
        assert agreement.alpha_of_resamples(counts, level, weights) == pytest.approx(expected, rel=1e-9)


def test_tiers_from_pairs_follow_the_rule_with_holm_in_each_round():
    # four models, best first: a; pairwise p values chosen by hand. Round 1 (leader a): p(b)=0.04, p(c)=0.001,
    # p(d)=0.3 -> Holm over 3: b 0.08, c 0.003, d 0.3 -> tier 1 = a, b, d. Round 2: c alone, tier 2.
    means = pl.DataFrame({"g": ["x"] * 4, "model": ["a", "b", "c", "d"], "mean": [1.0, 0.8, 0.2, 0.5]})
    pairs = pl.DataFrame(
        {
            "g": ["x"] * 6,
            "model_a": ["a", "c", "a", "b", "b", "c"],
            "model_b": ["b", "a", "d", "c", "d", "d"],
            "p": [0.04, 0.001, 0.3, 0.01, 0.5, 0.02],
        }
    )
    found = significance.tiers_from_pairs(means, pairs, group=["g"], model="model")
    assert dict(found.select("model", "tier").iter_rows()) == {"a": 1, "b": 1, "c": 2, "d": 1}
    adjusted = dict(found.select("model", "p_adjusted").iter_rows())
    assert adjusted["a"] is None
    assert [adjusted[m] for m in "bcd"] == pytest.approx(statsmodels_holm([0.04, 0.001, 0.3]))
    # lower is better: c leads and every other is separated from it (Holm: 0.003, 0.02, 0.02); then d
    # leads, and neither a (0.3 -> 0.6) nor b (0.5) is separated from it
    lower = significance.tiers_from_pairs(means, pairs, group=["g"], model="model", better="lower")
    assert dict(lower.select("model", "tier").iter_rows()) == {"a": 2, "b": 2, "c": 1, "d": 2}


def test_a_metric_between_0_and_1_keeps_its_smallest_detectable_difference():
    # a numeric metric on 0-1: the difference detectable at n = 50 is about 0.1, which one decimal would
    # round to 0.1 or 0.0; the cells keep 4 significant figures (the formula of docs/methods.md)
    rng = np.random.default_rng(9)
    answers = pl.DataFrame(
        {
            "model": ["a"] * 50 + ["b"] * 50,
            "language": ["x"] * 100,
            "question_id": list(range(50)) * 2,
            "v": np.concatenate([rng.normal(0.6, 0.15, 50), rng.normal(0.55, 0.15, 50)]),
        }
    )
    cells = pl.DataFrame({"model": ["a", "b"], "language": ["x", "x"]})
    found = analyses_tiers.with_tiers(cells, answers, "v", by=["model", "language"], better="higher", scale=1.0)
    sd = float(np.std(answers["v"].to_numpy(), ddof=1))
    expected = (stats.norm.ppf(1 - 0.05 / 2) + stats.norm.ppf(0.8)) * sd * math.sqrt(2 / 50)
    assert found["min_detectable_difference"].to_list() == pytest.approx([expected] * 2, rel=1e-3)


def test_rating_tiers_per_language_are_wilcoxon_on_the_same_questions():
    # ratings of two models' answers to the same 30 questions of one language, two annotators on some
    # answers (their mean counts): the tier test is scipy's signed-rank test of the per-question means
    from analysis.analyses import ratings

    rng = np.random.default_rng(10)
    rows = []
    for question in range(30):
        for model, shift in (("a", 1), ("b", 0)):
            for annotator in ("p", "q") if question % 3 == 0 else ("p",):
                rows.append((question, "x", model, annotator, int(np.clip(rng.integers(1, 5) + shift, 1, 5))))
    table = pl.DataFrame(rows, schema=["question_id", "language", "model", "annotator", "level_position"], orient="row")
    found = ratings.level_tiers(table, ["language", "model"])
    means = table.group_by("model", "question_id").agg(pl.col("level_position").mean()).sort("question_id")
    a = means.filter(pl.col("model") == "a")["level_position"].to_numpy()
    b = means.filter(pl.col("model") == "b")["level_position"].to_numpy()
    expected = stats.wilcoxon(a, b, zero_method="wilcox", correction=False, method="approx").pvalue
    best = "a" if a.mean() >= b.mean() else "b"
    other = found.filter(pl.col("model") != best).row(0, named=True)
    assert other["p_vs_best"] == pytest.approx(expected, rel=1e-3)
    assert other["tier"] == (2 if expected < 0.05 else 1)
    assert found.filter(pl.col("model") == best)["tier"][0] == 1


def test_a_rating_chart_by_language_marks_its_top_tier():
    from analysis.analyses import dimensions
    from analysis.viz import rating_charts

    distribution = pl.DataFrame(
        {
            "language": ["x"] * 4,
            "model": ["a", "a", "b", "b"],
            "level": [1, 2, 1, 2],
            "n": [2, 8, 7, 3],
            "share": [0.2, 0.8, 0.7, 0.3],
            "tier": [1, 1, 2, 2],
            "p_vs_best": [None, None, 0.01, 0.01],
            "p_adjusted": [None, None, 0.01, 0.01],
            "min_detectable_difference": [0.5] * 4,
        }
    )
    orders = dimensions.Orders(["a", "b"], ["x"], ["x"])
    spec = rating_charts.rating_distribution_chart(distribution, "language", orders, title="t", level_column="level")
    text = str(spec.to_dict())
    assert "datum.tier === 1 && datum.level_order === 0" in text
    assert rating_charts.RATING_TIER_NOTE in text
    plain = rating_charts.rating_distribution_chart(
        distribution.drop("tier"), "language", orders, title="t", level_column="level"
    )
    assert "datum.tier" not in str(plain.to_dict())


def test_the_agreement_sentences_state_the_numbers_of_their_tables():
    from analysis.analyses import agreement as analyses_agreement
    from analysis.analyses import ratings

    taus = pl.DataFrame(
        {
            "criterion": ["quality"] * 5,
            "metric": ["score"] * 3 + ["flawed"] * 2,
            "metric_title": ["score"] * 3 + ["flawed"] * 2,
            "language": ["Hausa", "Swahili", "Zulu", "Hausa", "Twi"],
            "n_answers": [30, 40, 20, 5, 0],
            "tau_b": [0.4, 0.3, -0.35, None, None],
            "ci_low": [0.1, -0.05, -0.6, None, None],
            "ci_high": [0.6, 0.55, -0.1, None, None],
            "status": [None, None, None, analyses_agreement.TOO_FEW_ANSWERS, "language not identified"],
        }
    )
    words = analyses_agreement.metric_human_summary(taus)
    # from the table: one interval above 0 (Hausa), one below (Zulu), one across (Swahili); the median of
    # 0.4, 0.3 and -0.35 is 0.3; one cell with too few answers
    assert "interval is above 0 in 1 of 3 languages, below 0 in Zulu; in 1 it includes 0" in words
    assert "(median tau-b 0.30)." in words
    assert "1 cells have fewer than" in words
    assert "1 cells are in languages not identified reliably (Twi)" in words
    alphas = pl.DataFrame(
        {
            "criterion": ["quality"] * 3,
            "language": [analyses_agreement.ALL_LANGUAGES, "Hausa", "Swahili"],
            "measure": ["ordinal"] * 3,
            "alpha": [0.72, 0.81, 0.55],
            "ci_low": [0.65, 0.7, 0.4],
            "ci_high": [0.79, 0.9, 0.68],
            "kappa": [0.7, 0.8, 0.5],
            "n_answers": [300, 150, 150],
            "n_pairs": [300, 150, 150],
            "n_annotators": [2, 2, 2],
        }
    )
    criteria = [ratings.Criterion("quality", ("1", "2", "3"), CRITERION_KIND_BY_NAME["numbered"])]
    words = analyses_agreement.annotator_summary(alphas, criteria)
    assert "alpha **0.72** (95% interval 0.65 to 0.79); Cohen's weighted kappa 0.70" in words
    assert "over 300 answers, 300 pairs of ratings, 2 annotators: enough for tentative conclusions only" in words
    assert "Below 0.667 in Swahili (0.55, 150 answers)." in words


def test_ranks_are_competition_ranks_with_ties_sharing_the_best_and_nan_last():
    scores = np.array([[0.2, 0.1, 0.2, np.nan], [3.0, 1.0, 2.0, 4.0]])
    ranks = significance._ranks(scores)
    np.testing.assert_array_equal(ranks, np.array([[2.0, 1.0, 2.0, np.nan], [3.0, 1.0, 2.0, 4.0]]))


@pytest.mark.parametrize("better", ["higher", "lower"])
def test_of_two_models_with_the_same_mean_the_first_by_name_leads_the_tier(better):
    """The documented tie rule (docs/methods.md, Significance tiers): ties broken by the model's name, in
    either direction of `better`; the leader has no p value against itself, the other is tested against it."""
    values = np.arange(20) % 2 == 0
    frame = _two_models(values, values[::-1])  # the same share, their successes on different questions
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary", better=better
    )
    rows = {r["model"]: r for r in found.iter_rows(named=True)}
    assert rows["a"]["p_vs_best"] is None and rows["b"]["p_vs_best"] is not None
    assert rows["a"]["tier"] == rows["b"]["tier"] == 1


def test_a_model_that_shares_no_question_with_the_leader_joins_its_tier_with_p_one():
    """Nothing tells the two apart: p = 1 (docs/methods.md), not a tier of its own."""
    frame = pl.DataFrame(
        {
            "language": ["x"] * 20,
            "model": ["a"] * 10 + ["b"] * 10,
            "question_id": list(range(20)),
            "value": [True] * 10 + [False] * 10,
        }
    )
    found = significance.tiers(
        frame, group=["language"], model="model", unit="question_id", value="value", kind="binary"
    )
    rows = {r["model"]: r for r in found.iter_rows(named=True)}
    assert rows["a"]["tier"] == rows["b"]["tier"] == 1
    assert rows["b"]["p_vs_best"] == 1.0 and rows["b"]["p_adjusted"] == 1.0


def test_holm_reads_a_missing_p_value_as_none_and_leaves_it_out_of_the_family():
    # worked by hand: m = 2, the smaller 0.01 * 2 = 0.02, the larger max(0.02, 0.04 * 1) = 0.04
    adjusted = significance.holm([0.01, None, 0.04])
    assert adjusted[0] == pytest.approx(0.02) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.04)


def test_a_model_whose_adjusted_p_is_alpha_exactly_joins_the_tier():
    """docs/methods.md: each model whose adjusted p is 0.05 or more joins (one comparison: Holm leaves p as it is)."""
    means = pl.DataFrame({"language": ["x", "x"], "model": ["a", "b"], "mean": [0.9, 0.5]})
    for p, tiers in ((0.05, {"a": 1, "b": 1}), (0.0499, {"a": 1, "b": 2})):
        pairs = pl.DataFrame({"language": ["x"], "model_a": ["a"], "model_b": ["b"], "p": [p]})
        found = significance.tiers_from_pairs(means, pairs, group=["language"], model="model")
        assert dict(found.select("model", "tier").iter_rows()) == tiers


def test_tiers_of_no_answer_have_the_columns_and_types_of_any_other():
    some = _two_models(np.arange(10) % 2 == 0, np.arange(10) % 3 == 0)
    arguments = dict(group=["language"], model="model", unit="question_id", value="value", kind="binary")
    found = significance.tiers(some, **arguments)
    empty = significance.tiers(some.clear(), **arguments)
    assert empty.height == 0 and empty.schema == found.schema


def test_rank_intervals_of_a_model_without_a_value_in_a_language_warn_nothing_and_leave_it_out(recwarn):
    frame = pl.DataFrame(
        {
            "language": ["x"] * 6 + ["y"] * 3,
            "model": ["a", "a", "a", "b", "b", "b", "a", "a", "a"],
            "question_id": [1, 2, 3, 1, 2, 3, 4, 5, 6],
            "value": [1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
        }
    )
    found = significance.rank_intervals(
        frame, group="language", model="model", unit="question_id", value="value", n_resamples=50
    )
    assert [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)] == []
    rows = {(r["language"], r["model"]) for r in found.iter_rows(named=True)}
    assert rows == {("x", "a"), ("x", "b"), ("y", "a"), (None, "a"), (None, "b")}


def test_a_value_that_is_not_a_number_is_left_out_as_a_missing_one():
    """NaN is no value (polars would sort a mean of NaN above every number, and its model would lead)."""
    rng = np.random.default_rng(3)
    frame = _two_models(np.round(rng.random(30), 1), np.round(rng.random(30), 1))
    with_nan = frame.with_columns(
        value=pl.when((pl.col("model") == "b") & (pl.col("question_id") < 5)).then(float("nan")).otherwise("value")
    )
    without = frame.filter(~((pl.col("model") == "b") & (pl.col("question_id") < 5)))
    arguments = dict(group=["language"], model="model", unit="question_id", value="value", kind="numeric")
    # (to the last digits: the means and spreads add the same values, maybe in another order)
    assert_frame_equal(
        significance.tiers(with_nan, **arguments), significance.tiers(without, **arguments), rel_tol=1e-12
    )
