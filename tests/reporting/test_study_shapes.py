"""Any valid study folder runs end to end (issue 34): generated study folders of every shape the format allows
(`study_shapes`) build, and the generic notebooks 01 to 06 run on each and write outputs whose invariants
hold (`study_invariants`: counts add up to the input rows, shares in [0, 100], every interval contains its
estimate, every number a summary states is its CSV's).

The notebooks' code runs in this process (`notebook_cells`: the cells the report runner keeps, with the
parameters it injects, the figures' specs validated but not drawn by vl-convert), so that a study costs
seconds, not a kernel per notebook. The fast tier runs small studies (`SMALL_STUDIES` of `FAST_SEEDS`) with
R's models left out (the reports then say that the model could not be fitted), `make test` all `SMALL_STUDIES`
and `SLOW_STUDIES` of any size with R (and `test_study_reports.py` runs `make figures STUDY=` on generated
studies: Papermill, every figure drawn); `make test-properties` runs `PROPERTY_STUDIES`, more than `make test` can spend the time on.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import hypothesis
import numpy as np
import polars as pl
import pytest
import sentences
from hypothesis import HealthCheck, Phase, given, settings
from notebook_cells import cheap_exports, remembered_validation, run_cells, shared_engine
from study_invariants import check, plain
from study_shapes import (
    LANGUAGE_POOL,
    SMALL_POOL,
    UNKNOWN_CODES,
    many_languages,
    shapes,
    tricky,
    without_optional_data,
    write,
)

from analysis.analyses import dimensions, metrics, ratings, studies, surface
from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import study
from analysis.io.criterion_kinds import CRITERION_KIND_BY_NAME
from analysis.pipeline import executors
from analysis.pipeline.build import build
from analysis.reporting import run
from analysis.stats import intervals, r_models
from analysis.viz import charts, export, rating_charts

NOTEBOOKS = run.notebook_names(generic_only=True)
CODES = (*LANGUAGE_POOL, *UNKNOWN_CODES)
# Generated studies: small ones without R and others with R in `make test`, and in `make test-properties`
# (pytest --properties). The fast tier's text is the test set's UDHR cut (tests/data/udhr), the others' the
# whole UDHR's (`make udhr`).
SEEDS = (1, 2, 3, 4)
FAST_SEEDS = SEEDS[:2]
STUDIES_PER_SEED = 5
# The small studies Hypothesis draws from each seed, as (seed, index), a test each so that pytest's workers
# share them. Its first draw is the simplest study whatever the seed: that one runs for the first seed only
# (17 studies). The fast tier runs those of `FAST_SEEDS` (9), `make test` all of them; under `make mutants`,
# whose mutants run the tests that call them, only the first seed's five (docs/mutants.md).
SMALL_STUDIES = tuple((seed, index) for seed in SEEDS for index in range(STUDIES_PER_SEED) if index or seed == SEEDS[0])
SLOW_STUDIES = 40
PROPERTY_STUDIES = 200
MANY_LANGUAGES = 2000
# The notebooks' thresholds as a user sets them for a small study (their defaults, 10 questions for a group of
# the topic matrix and 10 values for a cell, are more than a generated study has): so that the matrices and
# cells are drawn, not left out.
PARAMETERS = {"02_topic_similarity": {"min_questions": 1}, "04_answer_scores": {"min_valid_answers": 2}}
SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": True,  # a fixed set of studies, the same on every run
    "phases": [Phase.explicit, Phase.generate],
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
}


def run_study(shape, root: Path, udhr_folder: Path = paths.UDHR) -> dict[str, list[str]]:
    """Write the study of `shape` under `root` (its text from the UDHR in `udhr_folder`), build it and run every
    generic notebook on it in this process; check the invariants and return each notebook's Markdown."""
    write(root / "study", shape, udhr_folder)
    db_path = root / "study.duckdb"
    build(root / "study", db_path, progress=False, udhr_folder=udhr_folder)
    summaries = {}
    for name in NOTEBOOKS:
        outputs = run_cells(name, db_path, root / "figures" / name, PARAMETERS.get(name))
        summaries[name] = outputs.markdown()
    check(shape, root / "figures", summaries)
    # and the checks of every report's sentences against its CSVs (issue 36's own reader of them)
    found, _ = sentences.problems({name: "\n\n".join(texts) for name, texts in summaries.items()}, root / "figures")
    assert not found, found
    return summaries


@contextlib.contextmanager
def in_process(udhr_folder: Path, codes: tuple[str, ...] = CODES):
    """What every generated study of a test shares: one engine (for `codes`), remembered validation, cheap
    exports."""
    with shared_engine(codes, udhr_folder), remembered_validation(), cheap_exports():
        yield


@pytest.fixture
def without_r(monkeypatch):
    """R's models left out, as where R is not installed: every fit fails with R's own kind of error."""

    def no_r(*args, **kwargs):
        raise r_models.RError("fitting", "R is not run here (the studies with R run it)")

    monkeypatch.setattr(r_models, "fit_clmm", no_r)


@pytest.mark.parametrize(
    "seed, index",
    SMALL_STUDIES[:STUDIES_PER_SEED]
    if "MUTANT_UNDER_TEST" in os.environ
    else [
        pytest.param(seed, index, marks=[] if seed in FAST_SEEDS else [pytest.mark.slow])
        for seed, index in SMALL_STUDIES
    ],
)
def test_generated_studies_run_every_generic_notebook(
    seed, index, small_udhr_folder, small_language_identification, without_r, monkeypatch
):
    """Study `index` of the `STUDIES_PER_SEED` small studies (up to 2 languages of `SMALL_POOL` and 3 models)
    that Hypothesis draws from `seed`, the same on every run: their text and language identification from the
    test set's own UDHR cut and the small language identification. All of the seed's studies are drawn (a tenth
    of a second), this one is built and run, outside Hypothesis: a failure names the seed and the index, and
    the test of that id runs the same study again. Its build's verdicts are computed in this process: a study
    of a few answers gains nothing from forked workers (tests/pipeline/test_build.py builds with them), and
    pytest's workers already use the cores."""
    monkeypatch.setattr(executors, "PROCESSES", 1)
    drawn = []

    @hypothesis.seed(seed)
    @settings(max_examples=STUDIES_PER_SEED, **{**SETTINGS, "derandomize": False})
    @given(shape=shapes(max_languages=len(SMALL_POOL), max_models=3, pool=SMALL_POOL))
    def draw(shape):
        drawn.append(shape)

    draw()
    assert len(drawn) == STUDIES_PER_SEED
    with in_process(small_udhr_folder, (*SMALL_POOL, *UNKNOWN_CODES)), tempfile.TemporaryDirectory() as root:
        run_study(drawn[index], Path(root), small_udhr_folder)


@pytest.mark.slow
@pytest.mark.needs_r
def test_generated_studies_of_any_size_run_every_generic_notebook(udhr_folder, short_text_evaluation, request):
    """`SLOW_STUDIES` studies of up to 60 languages and 30 models, R's models fitted (`PROPERTY_STUDIES` in
    `make test-properties`)."""
    studies = PROPERTY_STUDIES if request.config.getoption("--properties") else SLOW_STUDIES

    @settings(max_examples=studies, **SETTINGS)
    @given(shape=shapes())
    def each(shape):
        with tempfile.TemporaryDirectory() as root:
            run_study(shape, Path(root))

    with in_process(udhr_folder):
        each()


# ---------------------------------------------------------------- the study the issue names


@pytest.mark.slow
def test_a_study_without_question_type_category_collection_and_languages_file_runs_every_report(
    udhr_folder, short_text_evaluation, without_r, tmp_path
):
    shape = without_optional_data(many_languages(3, models=2))
    with in_process(udhr_folder):
        summaries = run_study(shape, tmp_path)
    said = [plain(text) for texts in summaries.values() for text in texts]
    assert not (tmp_path / "study" / "languages.csv").exists()
    assert (
        "This study has no question categories (the `category` column of questions.csv): no topic matrix and no category counts."
        in said
    )
    assert (
        "This study has fewer than two collections (the `collection` column of questions.csv): no comparison between collections."
        in said
    )
    assert (
        "This study does not have exactly two resource levels (the `resource_level` column of languages.csv): no pooled comparison of the two levels."
        in said
    )
    assert not list((tmp_path / "figures").glob("*/figure*"))


@pytest.mark.slow
def test_labels_like_column_names_several_annotators_and_extreme_values(
    udhr_folder, short_text_evaluation, without_r, tmp_path
):
    """Categories called `language` and `n`, a criterion called `language`, a metric without values and
    one at the ends of a float, two annotators per answer: the four crashes of issue 34 and its sentences."""
    shape = tricky()
    with in_process(udhr_folder):
        summaries = run_study(shape, tmp_path)
    figures = tmp_path / "figures"
    bleu = pl.read_csv(figures / "04_answer_scores" / "heatmap_metric_bleu.csv")
    assert bleu["mean"].is_finite().all() and bleu["mean"].abs().max() > 1e307
    assert "The metric n has no values (metrics.csv): no heatmap of it." in [
        plain(t) for t in summaries["04_answer_scores"]
    ]
    assert not (figures / "04_answer_scores" / "heatmap_metric_n.csv").exists()
    report_05 = " ".join(plain(t) for t in summaries["05_human_evaluation"])
    assert (
        "Several annotators rated some answers (up to 2 on a criterion): the distributions count an answer once per annotator who rated it."
        in report_05
    )
    distribution = pl.read_csv(figures / "05_human_evaluation" / "ratings_overall_by_model.csv")
    assert (
        distribution.group_by("model", "question_type")
        .agg(pl.col("n").sum(), pl.col("n_answers").first())
        .select((pl.col("n") == 2 * pl.col("n_answers")).all())
    ).item()
    report_04 = " ".join(plain(t) for t in summaries["04_answer_scores"])
    # huge means in three significant digits, not in 309 digits
    assert "e+307" in report_04 or "e+308" in report_04
    spec = json.loads((figures / "04_answer_scores" / "heatmap_metric_bleu.pdf").read_text(encoding="utf-8"))
    assert {".3g"} == {text["format"] for text in _found(spec, "text") if isinstance(text, dict) and "format" in text}


def _found(node, key: str) -> list:
    """Every value of `key` anywhere in a chart's spec."""
    if isinstance(node, dict):
        return [*([node[key]] if key in node else []), *(v for child in node.values() for v in _found(child, key))]
    if isinstance(node, list):
        return [v for child in node for v in _found(child, key)]
    return []


# ---------------------------------------------------------------- each crash, at its root


def test_the_rating_chart_of_a_study_without_question_types_is_a_valid_spec():
    """Report 05 of a study without `question_type` drew its ratings by model without panels, with a
    tooltip of the field None: 'None' is an invalid value for `field`."""
    table = pl.DataFrame(
        {
            "rating_id": [1, 2, 3],
            "answer_id": [1, 2, 3],
            "model": ["A", "B", "B"],
            "question_type": [None, None, None],
            "level": [1, 2, 2],
        },
        schema_overrides={"question_type": pl.String},
    )
    orders = dimensions.Orders(["A", "B"], [], [])
    distribution = ratings.level_distribution(table, "level", [1, 2], ["model"], orders, numeric=True)
    criterion = ratings.Criterion("overall", ("1", "2"), CRITERION_KIND_BY_NAME["numbered"])
    spec = rating_charts.criterion_distribution_chart(distribution, criterion, None, orders).to_dict()
    assert [t.get("field") for t in spec["encoding"]["tooltip"]][:2] == ["model", "level"]


def test_huge_values_have_finite_means_and_intervals():
    """A metric of values near the largest float (1.7e308): the mean and every bootstrap resample's mean
    overflowed to infinity, which Vega's JSON cannot hold. Ordinary values give the same bits as before."""
    values = np.array([1.7e308, 1.7e308, -1.0, 5e-324, 1.7e308] * 3)
    frame = pl.DataFrame({"group": ["a"] * len(values), "value": values})
    cells = intervals.bootstrap_cells(frame, ["group"], "value")
    mean, low, high = cells.select("mean", "ci_low", "ci_high").row(0)
    assert mean == pytest.approx(1.7e308 / 15 * 9, rel=1e-12)
    assert np.isfinite([mean, low, high]).all() and low <= mean <= high
    ordinary = np.random.default_rng(3).normal(size=100)
    assert intervals.mean(ordinary) == float(ordinary.mean())
    same = intervals.bootstrap_mean_ci(ordinary, np.random.default_rng(1))
    drawn = np.random.default_rng(1).integers(0, 100, size=(2000, 100), dtype=np.int32)
    assert same == tuple(float(q) for q in np.quantile(ordinary[drawn].mean(axis=1), [0.025, 0.975]))


def test_a_collection_test_of_huge_values_has_finite_means():
    compared = pl.DataFrame(
        {
            "metric": ["m"] * 4,
            "language": ["L"] * 4,
            "collection": ["a", "a", "b", "b"],
            "value": [1.7e308, 1.7e308, 1.0, 2.0],
        }
    )
    orders = dimensions.Orders([], ["L"], ["L"], collections=("a", "b"))
    tests = metrics.collection_tests(compared, orders)
    assert tests.select("mean_a", "mean_b").row(0) == (1.7e308, 1.5)


@pytest.mark.parametrize(
    "file, content, expected",
    [
        (
            "metrics.csv",
            "question_id,model,metric,value\nha-001,alpha-7b,score,inf\n",
            "line 2, field 'value': is 'inf'; expected a number, and a finite one",
        ),
        (
            "metrics.csv",
            "question_id,model,metric,value\nha-001,alpha-7b,score,1e999\n",
            "line 2, field 'value': is '1e999'; expected a number, and a finite one",
        ),
        (
            "metrics.csv",
            "question_id,model,metric,value\nha-001,alpha-7b,score,NaN\n",
            "line 2, field 'value': is 'NaN'; expected a number, and a finite one",
        ),
        (
            "metrics.jsonl",
            '{"question_id": "ha-001", "model": "alpha-7b", "metric": "score", "value": NaN}\n',
            "line 1: invalid JSON: NaN is not a JSON value (write null, or a number)",
        ),
        (
            "metrics.jsonl",
            '{"question_id": "ha-001", "model": "alpha-7b", "metric": "score", "value": -Infinity}\n',
            "line 1: invalid JSON: -Infinity is not a JSON value (write null, or a number)",
        ),
        ("metrics.parquet", None, "row 1, field 'value': is inf; expected a number, and a finite one"),
    ],
)
def test_a_metric_value_that_is_not_finite_is_refused_with_file_row_and_field(tmp_path, file, content, expected):
    folder = shutil.copytree(paths.DATA / "examples" / "study", tmp_path / "study")
    (folder / "metrics.csv").unlink()
    (folder / "study.toml").write_text(
        (folder / "study.toml").read_text(encoding="utf-8").replace("range = [0, 1]", ""), encoding="utf-8"
    )
    if content is None:
        pl.DataFrame(
            {"question_id": ["ha-001"], "model": ["alpha-7b"], "metric": ["score"], "value": [float("inf")]}
        ).write_parquet(folder / file)
    else:
        (folder / file).write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        study.read(folder)
    problems = [str(p) for p in info.value.problems]
    # (JSON has no infinity and no NaN: a JSONL line that writes one is not JSON)
    assert len(problems) == 1 and f"{file}, {expected}" in problems[0], problems


def test_a_declared_metric_or_criterion_without_data_is_said_in_one_sentence():
    """Report 04 drew a heatmap of a declared metric without values and stopped: `expected a number, got
    None`. The sections ask the study what it lacks, by one rule."""
    study_row = studies.Study(
        "s",
        "t",
        None,
        None,
        None,
        False,
        "engine",
        dict.fromkeys(studies.MISSING, True),
        {"metrics": ("bleu",), "criteria": ()},
    )
    assert study_row.lacks("metrics", "bleu") and not study_row.lacks("metrics", "score")
    assert study_row.missing("metrics", "bleu") == "The metric *bleu* has no values (metrics.csv): no heatmap of it."
    assert study_row.missing("criteria", "n") == (
        "The criterion *n* has no ratings (ratings.csv): no distribution of its levels and no mixed model."
    )


def test_provider_error_codes_become_count_columns_that_cannot_collide():
    """The count column of each provider error code (data of the `study` table) was `n_` and its letters:
    `OTHER` and `other`, or a code `empty` beside the count of empty answers, made two columns one."""
    assert surface.code_columns(["OTHER", "SAFETY", "RECITATION"]) == {
        "OTHER": "n_other",
        "SAFETY": "n_safety",
        "RECITATION": "n_recitation",
    }  # CaLMQA's, as the paper check reads them
    codes = ["OTHER", "other", "empty", "provider errors", "other_2", "x y", "x-y", "ошибка"]
    columns = surface.code_columns(codes)
    fixed = {"model", "language", "question_type", "unreliable", "n_answers", "n_provider_errors", "n_empty"}
    assert len(set(columns.values())) == len(codes) and not set(columns.values()) & fixed
    assert all(column.startswith("n_") and column.isascii() for column in columns.values())


# ---------------------------------------------------------------- sentences for any data


def test_the_largest_difference_between_collections_is_said_within_each_metric():
    """Report 06 named one largest difference over every metric, comparing a 0-1 score's with a 0-100 one's."""
    tests = pl.DataFrame(
        {
            "metric": ["score", "score", "bleu", "bleu"],
            "language": ["Hausa", "Yoruba", "Hausa", "Yoruba"],
            "mean_a": [0.9, 0.5, 40.0, 30.0],
            "mean_b": [0.6, 0.45, 35.0, 10.0],
            "test": ["two-sample Kolmogorov-Smirnov test"] * 4,
            "difference": [0.3, 0.05, 5.0, 20.0],
            "p_value": [0.01, 0.5, 0.2, 0.001],
            "p_holm": [0.03, 0.5, 0.4, 0.004],
        }
    )
    orders = dimensions.Orders([], ["Hausa", "Yoruba"], ["Hausa", "Yoruba"], collections=("a", "b"))
    text = plain(metrics.collection_summary(tests, orders))
    assert "4 tests (one per language and metric with values in both collections), 2 of them significant" in text
    assert (
        "within each metric (their scales differ): on score, in Hausa (0.9 against 0.6, two-sample "
        "Kolmogorov-Smirnov test, p = 0.01, Holm-corrected 0.03); on bleu, in Yoruba (30 against 10, "
        "two-sample Kolmogorov-Smirnov test, p = 0.001, Holm-corrected 0.004)."
    ) in text


def test_a_metric_whose_models_tie_names_no_best_and_worst():
    values = pl.DataFrame(
        {
            "metric": ["m"] * 4 + ["k"] * 3,
            "model": ["A", "A", "B", "B", "A", "B", "C"],
            "value": [1.0, 0.0, 0.5, 0.5, 2.0, 2.0, 1.0],
        }
    )
    definitions = [metrics.Metric("m", True, 0.0, 1.0), metrics.Metric("k", False, None, None)]
    text = plain(metrics.summary(values, definitions, pl.DataFrame(), "S_surf."))
    assert "On m (higher is better) every model has the same mean (0.500): no model scores better than another." in text
    # lower is better: C is best; A and B tie as the worst
    assert (
        "On k (lower is better) C scores best (mean 1.000 over 1 answer), A and B tie as the worst (2.000 each)."
        in text
    )


# ---------------------------------------------------------------- charts of any number of languages


def _cells(n_languages: int, n_models: int) -> tuple[pl.DataFrame, dimensions.Orders]:
    languages = [f"language {i:04d}" for i in range(n_languages)]
    models = [f"model {i}" for i in range(n_models)]
    rows = [
        {
            "model": m,
            "language": lang,
            "language_label": lang,
            "pct_correct_language": 50.0,
            "ci_low": 40.0,
            "ci_high": 60.0,
            "status": None,
        }
        for m in models
        for lang in languages
    ]
    cells = pl.DataFrame(rows, schema_overrides={"status": pl.String})
    # the first languages have the most answers, and every language is identified
    sizes = {lang: (1, n_languages - i) for i, lang in enumerate(languages)}
    levels = {lang: "high" if i % 2 else "low" for i, lang in enumerate(languages)}
    ordered = sorted(languages, key=lambda lang: (levels[lang], lang))
    orders = dimensions.Orders(
        models,
        ordered,
        ordered,
        level_starts=(next(lang for lang in ordered if levels[lang] == "low"),),
        resource_levels=("high", "low"),
        levels_of=levels,
        drawn=dimensions.most_first({m: (1,) for m in models}, models, dimensions.MAX_DRAWN_MODELS),
        drawn_languages=dimensions.most_first(sizes, ordered, dimensions.MAX_DRAWN_LANGUAGES),
    )
    return cells, orders


def test_a_chart_of_2000_languages_draws_the_languages_with_the_most_answers_and_says_so():
    """Report 03 of a study of 2,000 languages failed: Vega ran out of stack on its axis of 2,000 labels."""
    cells, orders = _cells(MANY_LANGUAGES, 25)
    chart = charts.model_language_heatmap(
        cells, "pct_correct_language", orders, title="t", value_title="v", better="higher", column=None
    )
    spec = chart.to_dict()
    subtitle = spec["title"]["subtitle"]
    assert subtitle == [
        "20 models drawn: the study's own models first, in its order, then the imported ones with the most "
        "answers (ties by name); the figure's CSV has the rows of 5 more models.",
        "The 40 languages drawn are those with the most answers, identified ones first; the figure's CSV has the "
        "rows of 1,960 more languages.",
    ]
    data = next(iter(spec["datasets"].values()))
    languages = {row["language"] for row in data}
    assert languages == {f"language {i:04d}" for i in range(40)}
    # the line between the resource levels stands before the first low-resource language drawn
    svg = export._svg(chart)
    assert svg.startswith("<svg") and "language 0039" in svg and "language 0040" not in svg


def test_most_first_keeps_the_largest_in_order_and_breaks_ties_by_order():
    assert dimensions.most_first({"a": (1,), "b": (5,), "c": (5,), "d": (3,)}, ["a", "b", "c", "d"], 2) == ["b", "c"]
    assert dimensions.most_first({"a": (1,), "b": (5,), "c": (1,), "d": (5,)}, ["d", "c", "b", "a"], 3) == [
        "d",
        "c",
        "b",
    ]
    # identified languages first, then the most answers
    assert dimensions.most_first({"a": (0, 9), "b": (1, 1), "c": (1, 2)}, ["a", "b", "c"], 2) == ["b", "c"]
    assert dimensions.most_first({}, ["x", "y"], 5) == ["x", "y"]
