"""The rules the database's SQL shares, each defined once in the schema (`analysis.schema`, issue 29):
the "no surface issue" macro, the `surface_answers` view of the five-table join, and the languages'
order (`language_order`). Each test changes or checks the one definition and finds the change, or the
rule, in every place that shows it: the build's stored verdict, notebook 03's counts, the all-languages
counts of notebook 10, the answers of the scores and the metrics' comparison."""

import dataclasses
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest

from analysis import schema, store
from analysis.analyses import dimensions, language_id_all, metrics, scores, surface
from analysis.core import paths
from analysis.core.errors import Problems, StorageError
from analysis.io import ingest
from analysis.pipeline import language_id, language_id_evaluation
from analysis.pipeline import surface as surface_stage

HEBREW_TEXT = "שלום, זהו טקסט בעברית על ההיסטוריה של העיר ירושלים ועל האנשים שגרים בה היום."

# Answers 1-4 to an English question, 5-6 to a Balochi one (a language the study's verdicts do not
# identify; the all-languages engine judges it): (answer, question, provider error code, detected
# language, repeat count, the all-languages verdict is the question's language).
ANSWERS = [
    (1, 1, None, "en", 0, True),  # clean
    (2, 1, None, "en", 9, True),  # repeats itself
    (3, 1, "empty", None, 0, None),  # a provider error
    (4, 1, None, "de", 0, False),  # in the wrong language
    (5, 2, None, "bal", 0, True),  # clean by the raw verdict
    (6, 2, None, "bal", 9, True),  # repeats itself
]
# The rule without its repetition term: the planted bug of issue 29.
WITHOUT_REPETITION = "NOT provider_error AND in_question_language"


def _verdicts() -> pl.DataFrame:
    """The rows the surface stage's workers give for `ANSWERS`, before `_finish` derives the verdicts."""
    rows = [
        {
            "answer_id": answer,
            "empty": code == "empty",
            "provider_error_code": code,
            "language_engine": None if code else "cld2",
            "language_raw": None if code else "{}",
            "detected_language": detected,
            "abstained": False,
            "language_chars": 400,
            "n_tokens": 100,
            "repeat_count": repeats,
            "tokenizer": "o200k_base",
            "apology": False,
            "language_name_mention": False,
            "translation_mention": False,
            "emoji": False,
            "language": "English" if question == 1 else "Balochi",
            "iso_code": "en" if question == 1 else "bal",
            "identified": question == 1,
        }
        for answer, question, code, detected, repeats, _ in ANSWERS
    ]
    return pl.DataFrame(
        rows, schema_overrides={"n_tokens": pl.Int32, "repeat_count": pl.Int32, "language_chars": pl.Int32}
    )


def _database() -> duckdb.DuckDBPyConnection:
    """A small database in memory, as the build leaves it: the tables, the schema's macros and views, and
    `answer_surface` computed by the surface stage's own `_finish`."""
    con = duckdb.connect()
    for table in schema.TABLES:
        con.execute(table.ddl())
    con.execute(
        "INSERT INTO dimension_values VALUES ('resource_level', 'low', 'low', 2), ('resource_level', 'high', 'high', 1), "
        "('question_type', 'specific', 'culturally specific', 1)"
    )
    con.execute(
        "INSERT INTO languages (language, iso_code, resource_level, identified, detector) VALUES "
        "('Balochi', 'bal', 'low', false, 'cld2'), ('English', 'en', 'high', true, 'langid')"
    )
    con.execute("INSERT INTO models (model, display_name, position) VALUES ('model-a', 'Model A', 1)")
    con.execute(
        "INSERT INTO questions (question_id, name, language, question_type) VALUES "
        "(1, 'english:0', 'English', 'specific'), (2, 'balochi:0', 'Balochi', 'specific')"
    )
    for answer, question, *_ in ANSWERS:
        con.execute(
            "INSERT INTO answers (answer_id, question_id, name, model, is_human, is_dot_points, n_bytes) "
            "VALUES (?, ?, ?, 'model-a', false, false, 10)",
            [answer, question, f"answer:{answer}"],
        )
    store.create_definitions(con)
    store.append(con, schema.ANSWER_SURFACE, surface_stage._finish(_verdicts()))
    for answer, question, code, detected, _, correct in ANSWERS:
        engine = None if code else "paper" if question == 1 else "ngram"
        con.execute("INSERT INTO answer_language_all VALUES (?, ?, ?, NULL, ?)", [answer, detected, engine, correct])
    return con


def _every_place(con: duckdb.DuckDBPyConnection) -> dict[str, list]:
    """Every place that shows the "no surface issue" verdict, as the database gives it."""
    by_language = ["language"]
    return {
        "answer_surface.surface_ok": [
            r[0] for r in con.sql("SELECT surface_ok FROM answer_surface ORDER BY 1").fetchall()
        ],
        "notebook 03 n_surface_ok": surface.rates_by_model_language(con).sort(by_language)["n_surface_ok"].to_list(),
        "notebook 10 n_surface_ok": language_id_all.rates_by_model_language(con)
        .sort(by_language)["n_surface_ok"]
        .to_list(),
        "scores surface_ok": con.sql(scores.ANSWERS_SQL.format(questions="true")).pl()["surface_ok"].to_list(),
        "metrics no_surface_issue": con.sql(metrics.SURFACE_SQL).pl()["value"].to_list(),
    }


def test_no_surface_issue_is_three_valued_and_leaves_out_repetitions_everywhere():
    with _database() as con:
        places = _every_place(con)
    # Stored per answer (NULL sorts last): only answer 1 is clean; Balochi's clean answer is unknown.
    assert places["answer_surface.surface_ok"] == [False, False, False, False, True, None]
    # (Balochi, English): the raw verdict counts for Balochi in notebook 03, the engine's in notebook 10;
    # neither counts the repetitive answers.
    assert places["notebook 03 n_surface_ok"] == [1, 1]
    assert places["notebook 10 n_surface_ok"] == [1, 1]
    assert places["scores surface_ok"] == [True, False, False, False, True, False]
    assert places["metrics no_surface_issue"] == [1.0, 0.0, 0.0, 0.0]  # identified languages only


def test_changing_the_one_definition_changes_every_place_that_shows_it(monkeypatch):
    with _database() as con:
        before = _every_place(con)
    patched = dataclasses.replace(schema.NO_SURFACE_ISSUE, body=WITHOUT_REPETITION)
    monkeypatch.setattr(schema, "MACROS", tuple(patched if m.name == patched.name else m for m in schema.MACROS))
    with _database() as con:
        after = _every_place(con)
    unchanged = [place for place in before if before[place] == after[place]]
    assert not unchanged, f"these places do not follow the schema's definition: {unchanged}"
    assert after["notebook 10 n_surface_ok"] == [2, 2]  # the repetitive answers now count


def test_the_rule_is_written_nowhere_else():
    """No module but the schema spells out the rule's terms (a copy would not follow the definition)."""
    copy = re.compile(r"NOT\s+[\w.]*provider_error\s+AND\s+NOT\s+[\w.]*repetition", re.IGNORECASE)
    package = Path(schema.__file__).parent
    copies = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path != Path(schema.__file__) and copy.search(path.read_text(encoding="utf-8"))
    ]
    assert copies == []


def test_the_view_and_the_language_order_are_the_schemas():
    with _database() as con:
        columns = [r[0] for r in con.sql("DESCRIBE surface_answers").fetchall()]
        order = dimensions.language_order(con)
        positions = con.sql("SELECT language, position FROM language_order ORDER BY position").fetchall()
    # Every column of answer_surface, then what the analyses group by.
    assert columns[: len(schema.ANSWER_SURFACE.columns)] == schema.ANSWER_SURFACE.column_names()
    assert {"display_name", "language", "resource_level", "language_position", "question_import_position"} <= set(
        columns
    )
    # By the resource levels' position (high before low here), not by their names' alphabetical order.
    assert order == ["English", "Balochi"] == [language for language, _ in positions]


def test_the_language_order_follows_the_levels_position_not_their_names():
    with _database() as con:
        con.execute("UPDATE dimension_values SET position = 3 - position WHERE dimension = 'resource_level'")
        assert dimensions.language_order(con) == ["Balochi", "English"]
        rates = con.sql(surface.RATES_SQL).pl()
    assert rates["language"].to_list() == ["Balochi", "English"]


@pytest.mark.parametrize("definition", schema.MACROS + schema.VIEWS, ids=lambda d: d.name)
def test_the_schema_documents_every_definition(definition):
    assert f"`{definition.name}`" in schema.markdown()


# ---------------------------------------------------------------- detector routing as data


def _calmqa_languages() -> pl.DataFrame:
    """The project's languages.csv with its language identification columns, as the release reader reads them."""
    problems = Problems()
    languages = ingest.read_languages(paths.LANGUAGES_CSV, problems)
    languages = ingest.with_language_identification(languages, paths.LANGUAGE_IDENTIFICATION_CSV, problems)
    problems.raise_if_any()
    return languages


def test_the_routing_is_the_authors_and_comes_from_the_data():
    languages = _calmqa_languages()
    # detect_lang.py's 14 polyglot (CLD2) languages; every other goes to langid.
    assert sorted(languages.filter(pl.col("detector") == "cld2")["language"]) == [
        "Afar", "Arabic", "Balochi", "Faroese", "Fijian", "Hiligaynon", "Hindi", "Kirundi", "Pashto", "Russian",
        "Samoan", "Tongan", "Tswana", "Wolof",
    ]  # fmt: skip
    assert set(languages["detector"]) == {"cld2", "langid"}
    # franc's codes of the study's languages map to the codes the other engines write.
    codes = language_id_evaluation.franc_codes(languages)
    assert {codes[c] for c in ("arb", "cmn", "pbu", "run", "pes", "prs")} == {"ar", "zh", "ps", "rn", "fa"}
    assert all(codes[f] == iso for f, iso in zip(languages["franc_code"], languages["iso_code"]) if f)


def test_the_pipeline_routes_by_the_detector_column_not_by_a_list_in_code():
    # A Hebrew text: CLD2 says `iw` (normalised to he), and langid alone says he too, but the engine that
    # decided is the route the detector column names, whatever the language is called.
    identifier = language_id.Identifier()
    (by_cld2,) = identifier.identify([HEBREW_TEXT], ["English"], ["cld2"])
    (by_langid,) = identifier.identify([HEBREW_TEXT], ["Russian"], ["langid"])
    assert by_cld2.engine.startswith("cld2") and by_cld2.language == "he"
    assert by_langid.engine == "langid-batch" and "cld2" not in by_langid.raw


def test_a_language_without_a_detector_is_one_clear_error(tmp_path):
    routes = tmp_path / "calmqa-language-identification.csv"
    rows = paths.LANGUAGE_IDENTIFICATION_CSV.read_text(encoding="utf-8").splitlines()
    routes.write_text("\n".join([rows[0], *[r for r in rows[1:] if not r.startswith("Wolof,")], "Afar,polyglot,aar"]))
    problems = Problems()
    ingest.with_language_identification(ingest.read_languages(paths.LANGUAGES_CSV, problems), routes, problems)
    shown = "\n".join(str(p) for p in problems.items)
    assert "'Wolof' of languages.csv has no row" in shown
    assert "'polyglot'; expected one of cld2, langid" in shown and "listed more than once" in shown


def test_an_import_refuses_a_database_without_the_schemas_rules():
    """A database built before the macros and views existed is refused, naming them: every query needs them."""
    with duckdb.connect() as con:
        for table in schema.TABLES:
            con.execute(table.ddl())
        with pytest.raises(StorageError, match="macro no_surface_issue") as refused:
            store.check_schema(con, Path("old.duckdb"))
        assert "view language_order" in str(refused.value)
        store.create_definitions(con)
        store.check_schema(con, Path("old.duckdb"))
