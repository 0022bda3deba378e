"""A study generated with known effects (analysis/pipeline/synthetic_study.py) gets them back (issue 24):
the planted shares of answers in another language, repetitive and empty answers (exact), the metric
means and the Bhattacharyya coefficients of the planted category distributions (exact), the difference
between the collections (each test equals scipy's on the same values, and finds the planted
difference), and the planted model effects on the ratings (within the fitted model's 95% interval)."""

import math
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from scipy import stats

from analysis import store
from analysis.analyses import dimensions, metrics, ratings, surface, topics
from analysis.pipeline import synthetic_study
from analysis.pipeline.build import build
from analysis.pipeline.synthetic_study import Language, StudySpec

pytestmark = pytest.mark.slow

SPEC = StudySpec(
    name="planted",
    title="A study with planted effects",
    languages=[
        Language("Hausa", "ha", "high"),
        Language("Swahili", "sw", "high"),
        Language("Yoruba", "yo", "low"),
        Language("Zulu", "zu", "low"),
    ],
    models=["reference", "better", "worse"],
    questions_per_language=40,
    wrong_language={"better": 4, "worse": 12},
    repetitive={"reference": 6},
    empty={"worse": 2},
    criteria={"quality": (1, 2, 3, 4, 5)},
    model_effects={"reference": 0.0, "better": 1.5, "worse": -1.0},
    score_means={"reference": 0.6, "better": 0.75, "worse": 0.45},
    collection_shift=0.2,
    flawed_shares=(0.05, 0.6),
    annotators=3,
    seed=3,
)


@pytest.fixture(scope="module")
def planted(tmp_path_factory, udhr_folder):
    folder = tmp_path_factory.mktemp("planted") / "study"
    truth = synthetic_study.write_study(folder, SPEC, udhr_folder)
    db_path = folder.parent / "planted.duckdb"
    build(folder, db_path, progress=False)
    con = store.connect(db_path)
    yield folder, truth, con
    con.close()


def test_planted_shares_in_another_language_repetitions_and_provider_errors_come_back_exactly(planted):
    _, truth, con = planted
    rates = surface.rates_by_model_language(con)
    cells = rates.group_by("model", "language").agg(
        pl.col("n_answers", "n_answered", "n_correct_language", "n_repetition", "n_provider_errors").sum()
    )
    assert cells.height == len(SPEC.models) * len(SPEC.languages)
    for row in cells.iter_rows(named=True):
        key = (row["model"], row["language"])
        n = truth.answers_per_cell
        assert row["n_answers"] == n
        assert row["n_provider_errors"] == truth.empty[key]
        assert row["n_answered"] == n - truth.empty[key]
        # every answer the provider gave is in the question's language but the planted English ones
        assert row["n_correct_language"] == n - truth.empty[key] - truth.wrong_language[key], key
        assert row["n_repetition"] == truth.repetitive[key], key
    # as the heatmap shows it, per question type: the planted answers are the cell's first questions, whose
    # types alternate
    cells = surface.metric_cells(rates, "pct_correct_language", dimensions.Orders.of(con))
    for row in cells.iter_rows(named=True):
        kind = SPEC.question_types.index(row["question_type"])
        wrong, repeated, empty = (
            getattr(SPEC, name).get(row["model"], 0) for name in ("wrong_language", "repetitive", "empty")
        )
        of_kind = [i for i in range(SPEC.questions_per_language) if i % len(SPEC.question_types) == kind]
        n_wrong = sum(i < wrong for i in of_kind)
        n_empty = sum(wrong + repeated <= i < wrong + repeated + empty for i in of_kind)
        answered = len(of_kind) - n_empty
        assert row["n_answered"] == answered
        assert row["pct_correct_language"] == round(100 * (answered - n_wrong) / answered, 1), row


def test_metric_means_are_those_of_the_values(planted):
    folder, _, con = planted
    orders = dimensions.Orders.of(con)
    written = pl.read_csv(folder / "metrics.csv").join(
        pl.read_csv(folder / "questions.csv").select("question_id", "language", "question_type"), on="question_id"
    )
    values = metrics.values(con)
    for metric in metrics.definitions(con):
        cells = metrics.cells(values, metric, orders)
        expected = (
            written.filter(pl.col("metric") == metric.name)
            .group_by("model", "language", "question_type")
            .agg(pl.col("value").mean().alias("expected"), pl.len().alias("n"))
        )
        joined = cells.join(expected, on=["model", "language", "question_type"])
        assert joined.height == cells.height == 3 * 4 * 2
        assert (joined["n_values"] == joined["n"]).all()
        digits = metric.decimals + 1
        assert all(
            got == pytest.approx(round(want, digits), abs=10 ** -(digits + 3))
            for got, want in zip(joined["mean"], joined["expected"])
        )
        assert ((joined["ci_low"] <= joined["mean"]) & (joined["mean"] <= joined["ci_high"])).all()


def test_the_planted_difference_between_the_collections_is_found(planted):
    folder, truth, con = planted
    orders = dimensions.Orders.of(con)
    tests = metrics.collection_tests(metrics.comparison_values(con, metrics.values(con)), orders)
    written = pl.read_csv(folder / "metrics.csv").join(
        pl.read_csv(folder / "questions.csv").select("question_id", "language", "collection"), on="question_id"
    )
    for row in tests.filter(pl.col("metric").is_in(["score", "flawed"])).iter_rows(named=True):
        values = written.filter((pl.col("metric") == row["metric"]) & (pl.col("language") == row["language"]))
        a = values.filter(pl.col("collection") == "curated")["value"].to_numpy()
        b = values.filter(pl.col("collection") == "scraped")["value"].to_numpy()
        if row["metric"] == "score":
            assert row["test"] == "two-sample Kolmogorov-Smirnov test"
            expected = stats.ks_2samp(a, b)
            assert row["ks_d"] == pytest.approx(expected.statistic, rel=1e-12)
            assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
            # planted: the second collection's score is lower by `collection_shift` (before clipping to 0-1)
            assert row["difference"] == pytest.approx(truth.collection_shift, abs=0.06)
        else:
            assert row["test"] == "Fisher's exact test" and row["ks_d"] is None
            table = [[int(a.sum()), len(a) - int(a.sum())], [int(b.sum()), len(b) - int(b.sum())]]
            assert row["p_value"] == pytest.approx(stats.fisher_exact(table).pvalue, rel=1e-9)
            assert row["difference"] < 0  # planted: 5% flawed against 60%
        assert row["p_holm"] < 0.05 and row["p_holm"] >= row["p_value"]
    # Holm's correction, by hand
    p = tests["p_value"].drop_nulls().to_numpy()
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (len(p) - np.arange(len(p))) * p[order]))
    assert sorted(tests["p_holm"].drop_nulls().to_list()) == pytest.approx(sorted(holm.tolist()), rel=1e-12)


def test_bhattacharyya_coefficients_of_the_planted_distributions(planted):
    _, truth, con = planted
    similarity = topics.similarity_table(topics.category_counts(con, "language"))
    for a, b, bc, _ in similarity.iter_rows():
        p, q = truth.category_counts[a], truth.category_counts[b]
        expected = sum(math.sqrt(p[c] / sum(p.values()) * q[c] / sum(q.values())) for c in p)
        assert bc == pytest.approx(expected, abs=1e-12), (a, b)


@pytest.mark.needs_r
def test_the_planted_model_effects_on_the_ratings_are_within_the_models_intervals(planted):
    _, truth, con = planted
    orders = dimensions.Orders.of(con)
    fitted, failed = ratings.fit_all(con, ratings.criteria(con), orders)
    assert not failed and list(fitted) == ["quality"]
    model = fitted["quality"]
    assert model.fit.formula == "level ~ model + question_type + (1 | question) + (1 | annotator)"
    assert model.reference == "reference"
    coefficients = model.coefficients.filter(pl.col("variable") == "model")
    for row in coefficients.iter_rows(named=True):
        planted_effect = truth.model_effects[row["level"]] - truth.model_effects["reference"]
        assert row["ci_low"] <= planted_effect <= row["ci_high"], row
    # and the contrast between the two others: better over worse, significantly
    contrast = model.contrasts.filter((pl.col("level_a") == "better") & (pl.col("level_b") == "worse")).row(
        0, named=True
    )
    assert contrast["estimate"] > 0 and contrast["p"] < 0.05
    assert 0 < model.r2["r2_marginal"][0] < model.r2["r2_conditional"][0] < 1


@pytest.mark.needs_r
def test_the_model_intervals_cover_the_planted_effects_at_their_level(tmp_path, udhr_folder):
    """Over twelve generated studies (seeds 1 to 12), the 95% intervals of the two planted model effects
    cover them about 95% of the time: at least 20 of the 24 (a binomial(24, 0.95) falls below that with
    probability under 3%)."""
    orders = dimensions.Orders(SPEC.models, [], [], question_types=SPEC.question_types)
    criterion = ratings.Criterion("quality", tuple(str(level) for level in SPEC.criteria["quality"]), True)
    covered = 0
    for seed in range(1, 13):
        folder = tmp_path / f"seed-{seed}"
        synthetic_study.write_study(folder, replace(SPEC, seed=seed, with_metrics=False), udhr_folder)
        table = (
            pl.read_csv(folder / "ratings.csv", schema_overrides={"rating": pl.String})
            .join(
                pl.read_csv(folder / "questions.csv").select("question_id", "language", "question_type"),
                on="question_id",
            )
            .with_columns(level=pl.col("rating").cast(pl.Int64), level_position=pl.col("rating").cast(pl.Int64))
        )
        model = ratings.fit(table, criterion, orders)
        for row in model.coefficients.filter(pl.col("variable") == "model").iter_rows(named=True):
            covered += row["ci_low"] <= SPEC.model_effects[row["level"]] <= row["ci_high"]
    assert covered >= 20, covered
