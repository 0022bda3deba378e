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
from analysis.io.criterion_kinds import CRITERION_KIND_BY_NAME
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
    criterion = ratings.Criterion(
        "quality", tuple(str(level) for level in SPEC.criteria["quality"]), CRITERION_KIND_BY_NAME["numbered"]
    )
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


def test_planted_differences_get_their_tiers_and_the_metric_agrees_with_the_ratings(planted):
    # issue 37: the planted English answers (better 4, worse 12 of each language's 40, reference none)
    # separate the three models in every question type over all languages: reference, then better, then worse
    _, _, con = planted
    orders = dimensions.Orders.of(con)
    rates = surface.rates_by_model_language(con)
    table = surface.rates_by_model(rates, orders, True, surface.answer_verdicts(con))
    for question_type in SPEC.question_types:
        tiers = dict(
            table.filter(pl.col("question_type") == question_type)
            .select("model", "tier_pct_correct_language")
            .iter_rows()
        )
        assert tiers == {"reference": 1, "better": 2, "worse": 3}, (question_type, tiers)
    # the planted score means (better 0.75, reference 0.6, worse 0.45; sd 0.12) in every language's cells
    values = metrics.values(con)
    score = next(m for m in metrics.definitions(con) if m.name == "score")
    cells = metrics.cells(values, score, orders, ("model", "language"), n_resamples=200)
    for language in [language.name for language in SPEC.languages]:
        tiers = dict(cells.filter(pl.col("language") == language).select("model", "tier").iter_rows())
        assert tiers == {"better": 1, "reference": 2, "worse": 3}, (language, tiers)
    # the score and the ratings both follow the planted model order, so they agree in every rated language
    from analysis.analyses import agreement

    found = agreement.metric_human_agreement(con, ratings.criteria(con), orders, n_resamples=200)
    score_quality = found.filter((pl.col("metric") == "score") & (pl.col("criterion") == "quality"))
    assert score_quality.height == len(SPEC.languages)
    assert (score_quality["ci_low"] > 0).all(), score_quality


def test_planted_annotator_agreement_comes_back(tmp_path, udhr_folder):
    # issue 37: two annotators rate every answer, each giving the answer's level with probability 0.8 and
    # otherwise a level drawn afresh from the language's levels: two ratings of an answer are then the
    # same with probability 0.8^2 and otherwise as far apart as two independent ones, so Krippendorff's
    # alpha is 0.64 at any level of measurement
    from analysis.analyses import agreement

    spec = replace(
        SPEC,
        languages=SPEC.languages[:2],
        questions_per_language=150,
        with_metrics=False,
        annotators=2,
        annotators_per_answer=2,
        rating_agreement=0.8,
        annotator_sd=0.0,
    )
    truth = synthetic_study.write_study(tmp_path / "study", spec, udhr_folder)
    assert truth.alpha == pytest.approx(0.64)
    table = (
        pl.read_csv(tmp_path / "study" / "ratings.csv", schema_overrides={"rating": pl.String})
        .join(pl.read_csv(tmp_path / "study" / "questions.csv").select("question_id", "language"), on="question_id")
        .with_columns(level_position=pl.col("rating").cast(pl.Int64))
    )
    criterion = ratings.Criterion(
        "quality", tuple(str(level) for level in spec.criteria["quality"]), CRITERION_KIND_BY_NAME["numbered"]
    )
    orders = dimensions.Orders(spec.models, [language.name for language in spec.languages], [])
    found = agreement.criterion_agreement(table, criterion, orders, n_resamples=300)
    assert found["language"].to_list() == [agreement.ALL_LANGUAGES, "Hausa", "Swahili"]
    overall = found.row(0, named=True)
    n_answers = 2 * 150 * len(spec.models)
    assert (overall["n_answers"], overall["n_pairs"], overall["n_annotators"]) == (n_answers, n_answers, 2)
    assert overall["measure"] == "ordinal"
    assert overall["ci_low"] <= 0.64 <= overall["ci_high"], overall
    assert abs(overall["alpha"] - 0.64) < 0.08
    # with two annotators, the weighted kappa measures the same agreement
    assert abs(overall["kappa"] - overall["alpha"]) < 0.05
    assert found["n_answers"].to_list()[1:] == [n_answers // 2] * 2
    # one annotator per answer (the planted study of the other tests): nothing to measure, and the report says so
    single = synthetic_study.write_study(tmp_path / "single", replace(spec, annotators_per_answer=1), udhr_folder)
    assert single.alpha is None
