"""Answer scores, bootstrap intervals and the comparisons of two groups (issue 6; Fisher's exact test for 0/1 scores, issue 16): hand-made cases, scipy as the
reference, and notebooks 04 and 06 run on a database with surface verdicts, without and with imports."""

import csv
import dataclasses
import shutil

import numpy as np
import polars as pl
import pytest
from orders import CALMQA_ORDERS
from scipy import stats

from analysis import store
from analysis.analyses import dimensions, scores, surface
from analysis.io.calmqa import UNRELIABLE_LANGUAGES
from analysis.pipeline import imports
from analysis.reporting import provenance, run
from analysis.stats import comparisons, intervals
from analysis.viz import table_specs

# ------------------------------------------------------------------------------------ S per answer


def _answers(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={"surface_ok": pl.Boolean, "n_claims": pl.Int32, "n_supported": pl.Int32, "relevant": pl.Boolean},
        orient="row",
    )


def test_s_on_hand_made_answers():
    scored = scores.score_components(
        _answers(
            [
                (True, 4, 3, True),  # 3 of 4 claims supported, relevant
                (True, 0, 0, True),  # no claim extracted: S_fact is 0
                (True, 5, 5, False),  # not relevant
                (False, 4, 4, True),  # a surface issue: 0 whatever the metrics say
                (True, None, None, None),  # clean, metrics not imported: unknown
                (True, 2, 1, None),  # factuality only: S unknown
                (None, 3, 3, True),  # surface verdict unknown
                (False, None, None, None),
            ]
        )
    )
    assert scored["s_surf"].to_list() == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, None, 0.0]
    assert scored["s_fact"].to_list() == [0.75, 0.0, 1.0, None, None, 0.5, None, None]
    assert scored["s_rel"].to_list() == [1.0, 1.0, 0.0, None, None, None, None, None]
    assert scored["s"].to_list() == [0.75, 0.0, 0.0, 0.0, None, None, None, 0.0]


# ---------------------------------------------------------------------------------------- bootstrap


def _cells_frame() -> pl.DataFrame:
    rng = np.random.default_rng(1)
    return pl.DataFrame(
        {
            "model": ["a"] * 400 + ["b"] * 30 + ["c"] * 9,
            "value": np.concatenate([rng.random(400) < 0.5, rng.random(30), np.ones(9)]).astype(float),
        }
    )


def test_bootstrap_is_deterministic_and_contains_the_estimate():
    first = intervals.bootstrap_cells(_cells_frame(), ["model"], "value")
    second = intervals.bootstrap_cells(_cells_frame(), ["model"], "value")
    assert first.equals(second)
    shown = first.filter(pl.col("mean").is_not_null())
    assert shown["model"].to_list() == ["a", "b"]
    assert ((shown["ci_low"] <= shown["mean"]) & (shown["mean"] <= shown["ci_high"])).all()
    assert (shown["ci_low"] < shown["ci_high"]).all()
    assert (
        intervals.bootstrap_cells(_cells_frame(), ["model"], "value", seed=7)["ci_low"].to_list()
        != first["ci_low"].to_list()
    )


def test_bootstrap_width_matches_the_normal_approximation():
    row = intervals.bootstrap_cells(_cells_frame(), ["model"], "value").row(0, named=True)
    p, n = row["mean"], row["n_valid"]
    half_width = 1.96 * np.sqrt(p * (1 - p) / n)
    assert row["ci_low"] == pytest.approx(p - half_width, abs=0.01)
    assert row["ci_high"] == pytest.approx(p + half_width, abs=0.01)


def test_bootstrap_blanks_thin_cells_and_a_cell_does_not_depend_on_the_others():
    cells = intervals.bootstrap_cells(_cells_frame(), ["model"], "value")
    thin = cells.filter(pl.col("model") == "c").row(0, named=True)
    assert thin["n_valid"] == 9 and thin["mean"] is None and thin["ci_low"] is None
    alone = intervals.bootstrap_cells(_cells_frame().filter(pl.col("model") == "b"), ["model"], "value")
    assert alone.row(0) == cells.filter(pl.col("model") == "b").row(0)


def test_bootstrap_of_a_constant_is_the_constant_and_nulls_are_not_answers():
    frame = pl.DataFrame({"model": ["a"] * 12, "value": [1.0] * 10 + [None, None]})
    row = intervals.bootstrap_cells(frame, ["model"], "value", scale=100.0).row(0, named=True)
    assert (row["n_answers"], row["n_valid"], row["mean"], row["ci_low"], row["ci_high"]) == (
        12,
        10,
        100.0,
        100.0,
        100.0,
    )


def _scored_cell(n_clean_with_metrics: int, n_clean_without: int, n_issue: int) -> pl.DataFrame:
    rows = (
        [(True, 2, 2, True)] * n_clean_with_metrics
        + [(True, None, None, None)] * n_clean_without
        + [(False, None, None, None)] * n_issue
    )
    return scores.score_components(_answers(rows)).with_columns(
        model=pl.lit("m"),
        language=pl.lit("German"),
        question_type=pl.lit("specific"),
        language_label=pl.lit("German"),
        resource_level=pl.lit("high"),
        unreliable=pl.lit(False),
        provider_error=pl.lit(False),
    )


def test_s_cells_need_metrics_for_their_clean_answers():
    covered = scores.score_cells(_scored_cell(18, 1, 20), "s", orders=CALMQA_ORDERS).row(0, named=True)
    assert covered["n_valid"] == 38 and covered["s"] == round(100 * 18 / 38, 1)
    assert covered["metrics_coverage"] == round(18 / 19, 3)
    # 20 answers with surface issues would be 20 valid zeros: without the coverage rule the cell would show 0.
    uncovered = scores.score_cells(_scored_cell(0, 19, 20), "s", orders=CALMQA_ORDERS).row(0, named=True)
    assert uncovered["n_valid"] == 20 and uncovered["s"] is None and uncovered["metrics_coverage"] == 0.0
    # S_surf does not depend on metrics.
    assert scores.score_cells(_scored_cell(0, 19, 20), "s_surf", orders=CALMQA_ORDERS).row(0, named=True)[
        "s_surf"
    ] == round(100 * 19 / 39, 1)


# ------------------------------------------------------------------------ comparisons of two groups


def _comparison_frame() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for language, level, shift in (("German", "high", 0.0), ("Japanese", "high", 0.3), ("Afar", "low", 0.1)):
        for collection, n in (("human", 40), ("auto", 25)):
            if language == "Afar" and collection == "auto":
                continue
            for model in ("m1", "m2"):
                values = np.clip(rng.normal(0.5 + (shift if collection == "auto" else 0), 0.2, n), 0, 1)
                rows += [
                    {
                        "model": model,
                        "language": language,
                        "resource_level": level,
                        "unreliable": False,
                        "provider_error": False,
                        "collection": collection,
                        "question_type": "specific",
                        "s": float(v),
                    }
                    for v in values
                ]
    return pl.DataFrame(rows)


HUMAN = {"label": "human", "collection": "human", "question_type": "specific"}
AUTO = {"label": "auto", "collection": "auto", "question_type": "specific"}


def _sample(frame, language=None, collection=None, model=None, level=None):
    keep = pl.lit(True)
    for column, wanted in (
        ("language", language),
        ("collection", collection),
        ("model", model),
        ("resource_level", level),
    ):
        if wanted is not None:
            keep = keep & (pl.col(column) == wanted)
    return frame.filter(keep)["s"].to_numpy()


def test_a_continuous_score_is_compared_by_ks_per_language_as_scipy_does():
    frame = _comparison_frame()
    table = scores.comparison_by_language(frame, (HUMAN, AUTO), "s", CALMQA_ORDERS)
    assert set(table["test"]) == {"two-sample Kolmogorov-Smirnov test"}
    assert table["language"].to_list() == ["German", "Japanese", "Afar"]
    for row in table.filter(pl.col("language") != "Afar").iter_rows(named=True):
        a, b = _sample(frame, row["language"], "human"), _sample(frame, row["language"], "auto")
        expected = stats.ks_2samp(a, b)
        assert (row["n_a"], row["n_b"]) == (80, 50)
        assert row["ks_d"] == expected.statistic and row["p_value"] == expected.pvalue
        assert row["mean_a"] == round(100 * a.mean(), 1)
        assert row["difference"] == round(100 * (a.mean() - b.mean()), 1)
    afar = table.filter(pl.col("language") == "Afar").row(0, named=True)
    assert (afar["n_a"], afar["n_b"], afar["ks_d"], afar["p_value"], afar["difference"]) == (80, 0, None, None, None)
    japanese = table.filter(pl.col("language") == "Japanese").row(0, named=True)
    assert japanese["p_value"] < 0.001  # the auto answers there are shifted by 0.3


def test_the_comparison_lists_languages_in_the_levels_order_not_by_the_levels_names():
    low_first = dataclasses.replace(CALMQA_ORDERS, resource_levels=("low", "high"))
    table = scores.comparison_by_language(_comparison_frame(), (HUMAN, AUTO), "s", low_first)
    assert table["language"].to_list() == ["Afar", "German", "Japanese"]


def test_a_share_is_compared_by_fishers_exact_test_not_ks():
    """S_surf is 0 or 1 per answer: the groups differ in their shares, which Fisher's exact test compares."""
    frame = _comparison_frame().with_columns(s_surf=(pl.col("s") > 0.55).cast(pl.Float64))
    table = scores.comparison_by_language(frame, (HUMAN, AUTO), "s_surf", CALMQA_ORDERS)
    assert set(table["test"]) == {"Fisher's exact test"} and table["ks_d"].null_count() == table.height
    for row in table.filter(pl.col("language") != "Afar").iter_rows(named=True):
        human = frame.filter((pl.col("language") == row["language"]) & (pl.col("collection") == "human"))["s_surf"]
        auto = frame.filter((pl.col("language") == row["language"]) & (pl.col("collection") == "auto"))["s_surf"]
        contingency = [
            [int(human.sum()), human.len() - int(human.sum())],
            [int(auto.sum()), auto.len() - int(auto.sum())],
        ]
        assert row["p_value"] == stats.fisher_exact(contingency).pvalue
        assert row["difference"] == round(100 * (human.mean() - auto.mean()), 1)
    japanese = table.filter(pl.col("language") == "Japanese").row(0, named=True)
    assert japanese["difference"] < 0 and japanese["p_value"] < 0.001
    with pytest.raises(ValueError, match="0/1 samples"):
        comparisons.fisher_exact(np.array([0.5, 1.0]), np.array([0.0]))


def test_comparison_aggregate_equals_scipy_on_the_pooled_high_resource_answers():
    frame = _comparison_frame()
    table = scores.comparison_aggregate(frame, (HUMAN, AUTO), "s", CALMQA_ORDERS, "high")
    assert table["model"].to_list() == ["m1", "m2", scores.ALL_MODELS]
    for row in table.iter_rows(named=True):
        model = None if row["model"] == scores.ALL_MODELS else row["model"]
        expected = stats.ks_2samp(
            _sample(frame, None, "human", model, "high"), _sample(frame, None, "auto", model, "high")
        )
        assert row["ks_d"] == expected.statistic and row["p_value"] == expected.pvalue


def test_comparison_aggregate_pools_only_the_models_in_both_groups():
    frame = _comparison_frame().filter(~((pl.col("model") == "m2") & (pl.col("collection") == "auto")))
    table = scores.comparison_aggregate(frame, (HUMAN, AUTO), "s", CALMQA_ORDERS, "high")
    m2 = table.filter(pl.col("model") == "m2").row(0, named=True)
    assert m2["n_b"] == 0 and m2["ks_d"] is None
    pooled = table.filter(pl.col("model") == scores.ALL_MODELS).row(0, named=True)
    expected = stats.ks_2samp(_sample(frame, None, "human", "m1", "high"), _sample(frame, None, "auto", "m1", "high"))
    assert (pooled["n_a"], pooled["n_b"]) == (80, 50)
    assert pooled["ks_d"] == expected.statistic and pooled["p_value"] == expected.pvalue


def test_groups_fall_back_when_one_is_empty():
    frame = (
        _comparison_frame()
        .filter(pl.col("collection") == "human")
        .with_columns(
            question_type=pl.when(pl.col("model") == "m1").then(pl.lit("specific")).otherwise(pl.lit("agnostic"))
        )
    )
    specific = {"label": "specific", "question_type": "specific"}
    agnostic = {"label": "agnostic", "question_type": "agnostic"}
    groups, note = scores.choose_groups(frame, "s", (HUMAN, AUTO), (specific, agnostic))
    assert groups == (specific, agnostic)
    assert "**auto** has no answers" in note and "No model answers an auto-collected question" in note
    assert "make import-questions" in note and "make import-answers" in note
    groups, note = scores.choose_groups(frame, "s", (specific, agnostic), (HUMAN, AUTO))
    assert groups == (specific, agnostic) and note.startswith("Compared: **specific**")


def test_group_filter_refuses_unknown_columns():
    with pytest.raises(ValueError, match="not on 'colour'"):
        scores.group_filter({"colour": "red"})
    frame = _comparison_frame()
    assert frame.filter(scores.group_filter({"language": ["German", "Afar"], "model": "m1"})).height == 40 + 25 + 40


def test_score_choice_follows_the_metrics_coverage():
    covered = scores.score_components(_answers([(True, 2, 1, True)] * 9 + [(True, None, None, None)]))
    assert scores.choose_score(covered, "auto", 0.9)[0] == "s"
    assert scores.choose_score(covered, "auto", 0.95)[0] == "s_surf"
    assert scores.choose_score(covered, "s_rel")[0] == "s_rel"
    with pytest.raises(ValueError, match="expected auto or one of"):
        scores.choose_score(covered, "bleu")


# ------------------------------------------------------------------------------ notebooks end to end


@pytest.fixture(scope="module")
def surface_database(database) -> str:
    """The snapshot's database, which holds the surface verdicts (table answer_surface) from its build."""
    return database


GERMAN_ANSWER = (
    "Antwort {k}: In Bayern sind viele Feiertage katholisch geprägt, weil die Mehrheit der Bevölkerung "
    "lange katholisch war und die Landesregierung diese Tage gesetzlich geschützt hat."
)


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _import_metrics_for_every_answer(path, folder, seed):
    with store.connect(path) as con:
        names = [r[0] for r in con.execute("SELECT name FROM answers WHERE NOT is_human ORDER BY answer_id").fetchall()]
    rng = np.random.default_rng(seed)
    n_claims = rng.integers(0, 15, len(names))
    metrics = folder / f"metrics-{seed}.csv"
    pl.DataFrame(
        {
            "answer": names,
            "n_claims": n_claims,
            "n_supported": rng.binomial(n_claims, 0.7),
            "relevant": (rng.random(len(names)) < 0.85).astype(int),
        }
    ).write_csv(metrics)
    imports.import_file("metrics", metrics, path)


@pytest.fixture(scope="module")
def metrics_database(surface_database, tmp_path_factory) -> str:
    """The same with auto-collected German questions (no model answers yet) and metrics for every model
    answer, brought in with the documented imports."""
    folder = tmp_path_factory.mktemp("metrics")
    path = folder / "calmqa.duckdb"
    shutil.copy(surface_database, path)
    _write_csv(
        folder / "questions.csv",
        ["language", "question_type", "question", "collection"],
        (["German", "specific", f"Warum feiert man in Bayern den Feiertag Nummer {k}?", "auto"] for k in range(12)),
    )
    imports.import_file("questions", folder / "questions.csv", path)
    _import_metrics_for_every_answer(path, folder, 5)
    return path


@pytest.fixture(scope="module")
def partial_metrics_database(surface_database, tmp_path_factory) -> str:
    """The snapshot's database with factuality metrics (claims) for a third of the model answers and no
    relevance: S_fact can be drawn, S cannot."""
    folder = tmp_path_factory.mktemp("partial")
    path = folder / "calmqa.duckdb"
    shutil.copy(surface_database, path)
    with store.connect(path) as con:
        names = [r[0] for r in con.execute("SELECT name FROM answers WHERE NOT is_human ORDER BY answer_id").fetchall()]
    names = names[::3]
    rng = np.random.default_rng(7)
    n_claims = rng.integers(1, 15, len(names))
    metrics = folder / "claims-only.csv"
    pl.DataFrame({"answer": names, "n_claims": n_claims, "n_supported": rng.binomial(n_claims, 0.6)}).write_csv(metrics)
    imports.import_file("metrics", metrics, path)
    return path


@pytest.fixture(scope="module")
def auto_answers_database(metrics_database, tmp_path_factory) -> str:
    """The same with three models' answers to the auto-collected questions, and their metrics."""
    folder = tmp_path_factory.mktemp("auto")
    path = folder / "calmqa.duckdb"
    imports.copy_database(metrics_database, path)
    _write_csv(
        folder / "answers.csv",
        ["question", "language", "model", "answer"],
        (
            [f"auto:german:{k}", "German", model, GERMAN_ANSWER.format(k=k)]
            for k in range(12)
            for model in ("gpt-4o", "claude-3-opus", "gemma-7b")
        ),
    )
    imports.import_file("answers", folder / "answers.csv", path)
    _import_metrics_for_every_answer(path, folder, 6)
    return path


def _run(name, db_path, tmp_path):
    html = run.run_notebook(
        name,
        db_path=db_path,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
    )
    return tmp_path / "figures" / name, html.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["04_answer_scores"])
def test_answer_scores_notebook_without_metrics(built_reports, name, surface_database):
    # The run of `make figures` from the snapshot's database (conftest.built_runs), which other tests read too.
    out, page = (
        built_reports / "figures" / name,
        (built_reports / "reports" / f"{name}.html").read_text(encoding="utf-8"),
    )
    # Without metrics the table is Table 2's surface column only, so its name claims no table of the paper.
    assert sorted(p.name for p in out.iterdir()) == [
        "heatmap_s_surf.csv",
        "heatmap_s_surf.pdf",
        "heatmap_s_surf.png",
        "heatmap_s_surf.svg",
        "rank_intervals_s_surf.csv",
        "rank_intervals_s_surf.pdf",
        "rank_intervals_s_surf.png",
        "rank_intervals_s_surf.svg",
        "scores_by_model.csv",
        "scores_by_model.tex",
    ]
    assert "Factuality (S_fact) and relevance (S_rel) are missing" in page and "make import-metrics" in page
    assert provenance.read(out.parent.parent / "reports" / "04_answer_scores.html")["title"].startswith(
        "Answer scores: the surface component only (paper Figure 9;"
    )
    with store.connect(surface_database) as con:
        expected = scores.score_cells(scores.answer_scores(con), "s_surf", orders=dimensions.Orders.of(con))
    assert pl.read_csv(out / "heatmap_s_surf.csv", schema=expected.schema).equals(expected)
    table = pl.read_csv(out / "scores_by_model.csv")
    # Only the score the database has: no row of dashes for the scores that need imported metrics.
    assert set(table["score"]) == {"s_surf"} and table["mean"].null_count() == 0
    assert "blank" not in table_specs.SPECS["scores_by_model"].caption


def test_answer_scores_notebook_with_imported_metrics(metrics_database, tmp_path):
    out, page = _run("04_answer_scores", metrics_database, tmp_path)
    for value in ("s_surf", "s_fact", "s_rel", "s"):
        assert (out / f"heatmap_{value}.png").is_file()
    cells = pl.read_csv(out / "heatmap_s.csv")
    # Every cell of a reliably identified language with some answer from the provider has its S.
    assert cells["s"].drop_nulls().len() == cells.filter(pl.col("status").is_null()).height > 250
    assert ((cells["ci_low"] <= cells["s"]) & (cells["s"] <= cells["ci_high"])).drop_nulls().all()
    table = pl.read_csv(out / "table2_scores_by_model.csv")
    assert table.filter(pl.col("score") == "s")["mean"].null_count() == 0
    assert "Imported metrics cover" in page and "are missing" not in page
    assert provenance.read(out.parent.parent / "reports" / "04_answer_scores.html")["title"] == (
        "Answer scores (paper Figures 2, 9, 10, 11 and Table 2)"
    )


def test_answer_scores_notebook_after_a_partial_metrics_import(partial_metrics_database, tmp_path):
    """Factuality imported for some answers, relevance for none: the S_fact heatmap is drawn, and no text
    beside it says that the database has no metrics."""
    out, page = _run("04_answer_scores", partial_metrics_database, tmp_path)
    assert (out / "heatmap_s_fact.png").is_file() and not (out / "heatmap_s.png").exists()
    assert "holds no imported metrics" not in page and "has no imported metrics" not in page
    assert "Imported metrics cover factuality for" in page and "relevance for **0 of the" in page
    assert "imported factuality but no relevance" in page
    # The S_fact heatmap's caveats speak of S_fact, not of the surface component.
    fact = pl.read_csv(out / "heatmap_s_fact.csv")
    assert set(fact["status"].drop_nulls()) <= {
        surface.PROVIDER_ERRORS_ONLY,
        surface.NOT_IDENTIFIED,
        scores.TOO_FEW_ANSWERS,
    }
    assert scores.TOO_FEW_ANSWERS in set(fact["status"])
    # Every cell without a value says why (a legend entry), none is blank without a reason.
    assert fact.filter(pl.col("s_fact").is_null() & pl.col("status").is_null()).height == 0


@pytest.mark.parametrize("name", ["06_collection_comparison"])
def test_collection_comparison_notebook_falls_back_on_the_snapshot(built_reports, name):
    # The run of `make figures` from the snapshot's database (conftest.built_runs), which other tests read too.
    out, page = (
        built_reports / "figures" / name,
        (built_reports / "reports" / f"{name}.html").read_text(encoding="utf-8"),
    )
    assert "has no answers in this database" in page and "Compared instead" in page
    by_language = pl.read_csv(out / "tests_by_language.csv")
    assert set(by_language["group_a"]) == {"culturally specific"} and set(by_language["group_b"]) == {
        "culturally agnostic"
    }
    # Without metrics the score is S_surf, 0 or 1 per answer: Fisher's exact test, not KS.
    assert set(by_language["test"]) == {"Fisher's exact test"} and by_language["ks_d"].null_count() == 23
    # No test on a language whose verdicts do not exist (its heatmap cells are drawn as not identified).
    untested = by_language.filter(pl.col("p_value").is_null())
    assert by_language.height == 23 and set(untested["language"]) == set(UNRELIABLE_LANGUAGES)
    assert untested["n_a"].to_list() == [0] * 4 and untested["mean_a"].null_count() == 4
    assert set(untested["note"]) == {"language not identified: no verdicts, no test"}
    assert "could be run in 19 of 23 languages" in page
    # Specific vs agnostic is not the paper's Figure 12 or Table 14: neither the names nor the title say so.
    assert (out / "group_heatmaps.png").is_file() and not list(out.glob("figure12_*"))
    assert pl.read_csv(out / "high_resource_comparison.csv")["model"].to_list()[-1] == scores.ALL_MODELS
    title = provenance.read(out.parent.parent / "reports" / "06_collection_comparison.html")["title"]
    assert title == "Comparing two groups of answers: culturally specific vs culturally agnostic (beyond the paper)"


def test_collection_comparison_notebook_compares_s_when_metrics_are_imported(metrics_database, tmp_path):
    # Auto-collected questions without model answers: still nothing to compare them with.
    out, page = _run("06_collection_comparison", metrics_database, tmp_path)
    assert (
        "The compared score is **overall score S**" in page and "<strong>auto-collected</strong> has no answers" in page
    )
    by_language = pl.read_csv(out / "tests_by_language.csv")
    assert set(by_language["group_b"]) == {"culturally agnostic"}
    assert by_language.filter(pl.col("ks_d").is_null())["language"].sort().to_list() == sorted(UNRELIABLE_LANGUAGES)
    assert set(by_language["test"]) == {"two-sample Kolmogorov-Smirnov test"}
    with store.connect(metrics_database) as con:
        answers = scores.answer_scores(con).filter(pl.col("language") == "Hindi")
    specific, agnostic = (
        answers.filter(pl.col("question_type") == t)["s"].drop_nulls().to_numpy() for t in ("specific", "agnostic")
    )
    hindi = by_language.filter(pl.col("language") == "Hindi").row(0, named=True)
    assert hindi["ks_d"] == pytest.approx(stats.ks_2samp(specific, agnostic).statistic, rel=1e-12)


def test_collection_comparison_notebook_with_auto_collected_answers(auto_answers_database, tmp_path):
    out, page = _run("06_collection_comparison", auto_answers_database, tmp_path)
    assert "The compared score is **overall score S**" in page and "Compared: <strong>human-collected</strong>" in page
    by_language = pl.read_csv(out / "tests_by_language.csv")
    german = by_language.filter(pl.col("language") == "German").row(0, named=True)
    assert german["n_b"] == 36 and german["ks_d"] is not None
    with store.connect(auto_answers_database) as con:
        answers = scores.answer_scores(con, imported_questions=True).filter(pl.col("language") == "German")
    human = answers.filter((pl.col("collection") == "human") & (pl.col("question_type") == "specific"))[
        "s"
    ].drop_nulls()
    auto = answers.filter(pl.col("collection") == "auto")["s"].drop_nulls()
    expected = stats.ks_2samp(human.to_numpy(), auto.to_numpy())
    assert german["ks_d"] == pytest.approx(expected.statistic, rel=1e-12)
    assert german["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    assert by_language.filter(pl.col("language") != "German")["ks_d"].null_count() == 22
    groups = set(pl.read_csv(out / "figure12_group_heatmaps.csv")["group"])
    assert groups == {"human-collected", "auto-collected"}
    assert (out / "table14_high_resource.csv").is_file()
    assert provenance.read(out.parent.parent / "reports" / "06_collection_comparison.html")["title"] == (
        "Human- vs auto-collected questions (paper Figure 12, Table 14, the Appendix C.2 tests)"
    )


def test_surface_heatmap_cells_carry_wilson_intervals_and_statuses(surface_database):
    with store.connect(surface_database) as con:
        rates = surface.rates_by_model_language(con)
        orders = dimensions.Orders.of(con)
        cells = surface.metric_cells(rates, "pct_surface_ok", orders)
    shown = cells.filter(pl.col("status").is_null())
    # In the suite's order: models as the paper lists them, question types culturally specific first.
    expected = dimensions.in_order(
        rates.filter(~pl.col("unreliable") & (pl.col("n_answered") > 0)),
        ["model", "language", "question_type"],
        orders=orders,
    )
    assert shown.select("model", "language", "question_type").equals(
        expected.select("model", "language", "question_type")
    )
    assert (shown["pct_surface_ok"] - expected["pct_surface_ok"]).abs().max() <= 0.05
    assert shown["ci_low"].null_count() == 0
    assert (
        (shown["ci_low"] <= shown["pct_surface_ok"] + 0.05) & (shown["pct_surface_ok"] - 0.05 <= shown["ci_high"])
    ).all()
    # Wilson intervals never collapse to a point, at 0% and 100% included.
    assert (shown["ci_low"] < shown["ci_high"]).all()
    # The unreliable languages and the all-error cells are never drawn as a share.
    assert set(cells.filter(pl.col("unreliable"))["status"]) == {surface.NOT_IDENTIFIED, surface.PROVIDER_ERRORS_ONLY}
    assert (
        cells.filter(pl.col("status").is_not_null())["pct_surface_ok"].null_count()
        == cells["status"].is_not_null().sum()
    )
