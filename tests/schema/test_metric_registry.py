"""The surface-metric registry (`schema.SURFACE_METRICS`) and the heatmap cell-status rule
(`analyses.surface.cell_status`) each have one definition that every place showing them reads (issue 29):

- a metric added to the registry, and a change to one already there, reach the reports' heatmap CSVs,
  charts and table, the explorer's list and cells, and the schema page of the docs;
- the cell-status rule changed in its one definition changes the reports' surface, score and verdict
  cells and the explorer's;
- the explorer and the reports agree cell by cell (value, interval, number of answers and status) on
  every surface metric of the tiny release, planted with an unidentified language and a repetition.
"""

import json
import shutil
import subprocess
import sys

import duckdb
import polars as pl
import pytest

from analysis import schema, store
from analysis.analyses import answer_verdicts, dimensions, scores, surface
from analysis.analyses import answers as answers_query
from analysis.reporting import docs
from analysis.ui import explorer_logic
from analysis.viz import export, table_specs


def _planted(tiny_database, tmp_path, unidentified: str, mixed: bool = True):
    """A copy of the tiny database where `unidentified` is a language the verdicts do not judge (as the
    build leaves such a language: no language verdict, no surface verdict unless another issue decides
    it) and every other answer apologises; with `mixed`, the identified cell with the most answers has
    a provider error first and a repetition last, so that the shares of the answers the provider gave
    differ from the shares of all answers."""
    db = tmp_path / "calmqa.duckdb"
    shutil.copy(tiny_database, db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE languages SET identified = false WHERE language = ?", [unidentified])
        con.execute(
            """UPDATE answer_surface SET language_correct = NULL,
                   surface_ok = CASE WHEN provider_error OR repetition THEN false END
               WHERE answer_id IN (SELECT a.answer_id FROM answers a JOIN questions q USING (question_id)
                                   WHERE q.language = ?)""",
            [unidentified],
        )
        con.execute("UPDATE answer_surface SET apology = answer_id % 2 = 0")
        if mixed:
            first, last = con.execute(
                """SELECT min(s.answer_id), max(s.answer_id)
                   FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
                   WHERE q.language <> ? AND NOT s.provider_error
                   GROUP BY a.model, q.language, q.question_type ORDER BY count(*) DESC, 1 LIMIT 1""",
                [unidentified],
            ).fetchone()
            assert first != last
            con.execute(
                """UPDATE answer_surface SET provider_error = true, provider_error_code = 'empty',
                       detected_language = NULL, language_match = NULL, language_correct = NULL,
                       repetition = false, surface_ok = false
                   WHERE answer_id = ?""",
                [first],
            )
            con.execute("UPDATE answer_surface SET repetition = true, surface_ok = false WHERE answer_id = ?", [last])
    return db


# --------------------------------------------------------------- the registry: one record, every place

# Run in a fresh interpreter: the registry is edited before any reader is imported, as an edit of
# analysis/schema.py would be; the readers then run as notebook 03, the explorer and `make docs` do.
EDITED_REGISTRY = r"""
import dataclasses, json, sys
from pathlib import Path

from analysis import schema

database, out = sys.argv[1], Path(sys.argv[2])
dummy = schema.SurfaceMetric(
    key="pct_apology", column="apology", title="% apologising", label="% apologies", better="lower",
    denominator=schema.ANSWERED, needs_language=False, failure="apologises", decimals=2,
)
schema.SURFACE_METRICS = tuple(
    dataclasses.replace(m, title="% repeating themselves", label="% repeating", better="higher", decimals=2)
    if m.key == "pct_repetition" else m
    for m in schema.SURFACE_METRICS
) + (dummy,)

from analysis import store
from analysis.analyses import dimensions, paper_items, surface
from analysis.analyses import answers as answers_query
from analysis.reporting import docs
from analysis.ui import explorer_logic
from analysis.viz import export, surface_charts, tables

con = store.connect(database)
orders = dimensions.Orders.of(con)
rates = surface.rates_by_model_language(con)
found = {"charts": {}}
for metric in surface.METRICS:
    cells = surface.metric_cells(rates, metric, orders)
    spec = surface_charts.surface_heatmap(cells, metric, orders).to_dict()
    found["charts"][metric] = {"title": spec["title"], "spec": json.dumps(spec)}
    export.save_table(cells, out, f"heatmap_{metric}")
table = tables.save(surface.rates_by_model(rates, orders, exclude_unreliable=False), out, "rates_by_model")
found["table_html"] = table.html
answers = answers_query.load_answers(con)
found["explorer"] = {
    m.key: {"title": m.title, "better": m.better, "fails_when": m.fails_when, "failure": m.failure}
    for m in explorer_logic.available_metrics(True)
}
export.save_table(explorer_logic.metric_cells(answers, explorer_logic.METRIC_BY_KEY["pct_apology"]), out, "explorer_pct_apology")
found["docs"] = docs.schema_page()
found["notebook 03 draws after the paper's figures"] = paper_items.beyond_surface_figures(surface.METRICS)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def edited_registry(tiny_database, tmp_path_factory):
    """What every reader shows after a metric was added to the registry and another one changed there."""
    folder = tmp_path_factory.mktemp("registry")
    database = _planted(tiny_database, folder, "English")
    out = folder / "out"
    result = subprocess.run(
        [sys.executable, "-c", EDITED_REGISTRY, str(database), str(out)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), out, database


def test_a_metric_added_to_the_registry_is_in_the_reports_the_tables_the_explorer_and_the_docs(edited_registry):
    found, out, database = edited_registry
    # The report: its heatmap CSV, with the share of the answers the provider gave, recomputed here.
    cells = pl.read_csv(out / "heatmap_pct_apology.csv")
    with duckdb.connect(str(database), read_only=True) as con:
        expected = con.sql("""
            SELECT m.display_name AS model, q.language, q.question_type,
                   count(*) FILTER (NOT s.provider_error) AS n_answered,
                   count(*) FILTER (s.apology AND NOT s.provider_error) AS n_apology
            FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
            JOIN models m ON m.model = a.model GROUP BY ALL""").pl()
    both = cells.join(expected, on=["model", "language", "question_type"], suffix="_sql")
    assert both.height == cells.height == expected.height
    assert both["n_apology"].to_list() == both["n_apology_sql"].to_list()
    for row in both.iter_rows(named=True):
        if row["n_answered_sql"]:
            assert row["status"] is None  # (needs no language verdict: the unidentified language has its shares)
            assert row["pct_apology"] == round(100 * row["n_apology_sql"] / row["n_answered_sql"], 2)
        else:
            assert row["status"] == surface.PROVIDER_ERRORS_ONLY and row["pct_apology"] is None
    assert cells["pct_apology"].drop_nulls().n_unique() > 1
    # ... its chart, in the colours of its better end; the table of rates with its label and decimals.
    chart = found["charts"]["pct_apology"]
    # (after the paper's three, Figures 13, 14 and 9: the registry's other metrics, then the one added)
    paper_figures = {"pct_correct_language", "pct_repetition", "pct_surface_ok"}
    drawn_after = [m.key for m in schema.SURFACE_METRICS if m.key not in paper_figures] + ["pct_apology"]
    assert found["notebook 03 draws after the paper's figures"] == drawn_after
    assert chart["title"] == "% apologising by model and language" and "lower is better" in chart["spec"]
    assert "pct_apology" in pl.read_csv(out / "rates_by_model.csv").columns
    assert "% apologies" in found["table_html"] and r"\% apologies" in (out / "rates_by_model.tex").read_text()
    # The explorer: in its list, its answers failing it, its cells those of the report.
    assert found["explorer"]["pct_apology"] == {
        "title": "% apologising (of the answers the provider gave)",
        "better": "lower",
        "fails_when": True,
        "failure": "apologises",
    }
    shown = pl.read_csv(out / "explorer_pct_apology.csv").rename({"model_name": "model"})
    joined = cells.join(shown, on=["model", "language", "question_type"], suffix="_explorer")
    assert joined.height == cells.height
    assert joined["status"].to_list() == joined["status_explorer"].to_list()
    assert joined.select(pl.col("value").round(2))["value"].to_list() == joined["pct_apology"].to_list()
    # The docs.
    assert (
        "| `pct_apology` | `apology` | % apologising | of the answers the provider gave | lower | no | 2 |"
        in found["docs"]
    )


def test_a_change_to_a_record_changes_every_place_that_shows_the_metric(edited_registry):
    found, out, _ = edited_registry
    chart = found["charts"]["pct_repetition"]
    assert chart["title"] == "% repeating themselves by model and language" and "higher is better" in chart["spec"]
    assert "% repeating" in found["table_html"] and "% with repetitions" not in found["table_html"]
    assert found["explorer"]["pct_repetition"]["title"] == "% repeating themselves (of the answers the provider gave)"
    assert found["explorer"]["pct_repetition"]["better"] == "higher"
    assert found["explorer"]["pct_repetition"]["fails_when"] is False
    assert "| `pct_repetition` | `repetition` | % repeating themselves |" in found["docs"]
    # Two decimals now, in the heatmap CSV (its interval too) and in the table.
    cells = pl.read_csv(out / "heatmap_pct_repetition.csv")
    shares = cells.drop_nulls("pct_repetition")
    assert any(round(v, 1) != v for v in shares["ci_high"].to_list() + shares["pct_repetition"].to_list())
    assert "% repeating" in found["table_html"]


def test_every_reader_takes_the_registry_in_its_order():
    keys = [m.key for m in schema.SURFACE_METRICS]
    assert list(surface.METRICS) == keys
    assert [m.key for m in explorer_logic.METRICS if m.needs_surface] == keys
    assert surface.LANGUAGE_METRICS == tuple(m.key for m in schema.SURFACE_METRICS if m.needs_language)
    spec = table_specs.spec_for("rates_by_model")
    assert all(spec.labels[m.key] == m.label and spec.decimals[m.key] == m.decimals for m in schema.SURFACE_METRICS)
    assert all(f"| `{m.key}` | `{m.column}` | {m.title} |" in docs.schema_page() for m in schema.SURFACE_METRICS)


def test_the_score_tables_name_each_score_by_its_one_record(monkeypatch):
    assert [score.column for score in scores.SCORE_LIST] == list(scores.SCORES)
    named = table_specs.spec_for("table2_scores_by_model").values["score"]
    assert named == {score.column: score.short for score in scores.SCORE_LIST}
    monkeypatch.setitem(scores.SCORE_SHORT, "s_fact", "Factuality")
    assert table_specs.spec_for("table2_scores_by_model").values["score"]["s_fact"] == "Factuality"
    assert table_specs.spec_for("scores_by_model").values["score"]["s_fact"] == "Factuality"


# --------------------------------------------------------------- the cell-status rule: one definition


def _not_identified_first(provider_errors_only, not_identified, otherwise=None):
    """The rule with its first two reasons the other way round."""
    return (
        pl.when(not_identified)
        .then(pl.lit(surface.NOT_IDENTIFIED))
        .when(provider_errors_only)
        .then(pl.lit(surface.PROVIDER_ERRORS_ONLY))
        .otherwise(pl.lit(None, dtype=pl.String) if otherwise is None else otherwise)
    )


UNIDENTIFIED = "German"


def _statuses(con) -> dict[str, str | None]:
    """The status of the cell of GPT-4o's German answers (all provider errors, in a language that is not
    identified) in every heatmap that shows it."""
    orders = dimensions.Orders.of(con)
    rates = surface.rates_by_model_language(con)
    answers = answers_query.load_answers(con)
    chosen = (pl.col("language") == UNIDENTIFIED) & (pl.col("question_type") == "specific")
    found = {}
    for metric in surface.METRICS:
        cells = surface.metric_cells(rates, metric, orders).filter(chosen & (pl.col("model") == "GPT-4o"))
        found[f"report {metric}"] = cells["status"].item()
        shown = explorer_logic.metric_cells(answers, explorer_logic.METRIC_BY_KEY[metric])
        found[f"explorer {metric}"] = shown.filter(chosen & (pl.col("model_name") == "GPT-4o"))["status"].item()
    score_cells = scores.score_cells(scores.answer_scores(con), "s_surf", orders=orders, min_valid=1)
    found["report s_surf"] = score_cells.filter(chosen & (pl.col("model") == "GPT-4o"))["status"].item()
    english = answer_verdicts.english_answer_cells(con)
    found["report english answers"] = english.filter(chosen & (pl.col("model") == "GPT-4o"))["status"].item()
    return found


def test_the_cell_status_rule_changed_in_its_one_definition_changes_every_heatmap(tiny_database, tmp_path, monkeypatch):
    with store.connect(_planted(tiny_database, tmp_path, UNIDENTIFIED, mixed=False)) as con:
        before = _statuses(con)
        monkeypatch.setattr(surface, "cell_status", _not_identified_first)
        after = _statuses(con)
    # (a metric without the language verdict is untouched: its cell has no language reason)
    without_language = {m.key for m in schema.SURFACE_METRICS if not m.needs_language}
    assert "pct_repetition" in without_language
    assert before == {place: surface.PROVIDER_ERRORS_ONLY for place in before}
    assert after == {
        place: surface.PROVIDER_ERRORS_ONLY if place.split()[-1] in without_language else surface.NOT_IDENTIFIED
        for place in after
    }


# --------------------------------------------------------------- the explorer against the reports


def test_the_explorer_shows_every_surface_cell_as_the_reports_figure_csv(tiny_database, tmp_path):
    with store.connect(_planted(tiny_database, tmp_path, "English")) as con:
        orders = dimensions.Orders.of(con)
        rates = surface.rates_by_model_language(con)
        answers = answers_query.load_answers(con)
    keys = ["model", "language", "question_type"]
    seen = set()
    for metric, spec in surface.METRICS.items():
        # As notebook 03 writes it (`export.save_figure` writes the CSV with `save_table`).
        export.save_table(surface.metric_cells(rates, metric, orders), tmp_path, f"heatmap_{metric}")
        report = pl.read_csv(
            tmp_path / f"heatmap_{metric}.csv",
            schema_overrides={"status": pl.String, metric: pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64},
        )
        shown = (
            explorer_logic.metric_cells(answers, explorer_logic.METRIC_BY_KEY[metric])
            .rename({"model_name": "model"})
            .with_columns(pl.col("value", "ci_low", "ci_high").round(spec.decimals))
        )
        both = report.join(shown, on=keys, how="full", coalesce=True, suffix="_explorer")
        assert both.height == report.height == shown.height, metric
        for row in both.iter_rows(named=True):
            where = (metric, row["model"], row["language"], row["question_type"])
            assert row["status"] == row["status_explorer"], where
            assert (row[metric], row["ci_low"], row["ci_high"]) == (
                row["value"],
                row["ci_low_explorer"],
                row["ci_high_explorer"],
            ), where
            if row["status"] is None:
                assert row["n_answers_explorer"] == row[spec.denominator.name], where
            seen.add(
                "answered and provider errors" if row["status"] is None and row["n_provider_errors"] else row["status"]
            )
    # The comparison met every kind of cell: a value (of answers only, and of answers beside provider
    # errors), provider errors only, a language not identified.
    assert seen == {None, "answered and provider errors", surface.PROVIDER_ERRORS_ONLY, surface.NOT_IDENTIFIED}
