"""Surface-level verdicts (issue 3): detectors, the repetition rule at its edges, indicators, tables."""

import duckdb
import langid
import numpy as np
import polars as pl
import pytest
from orders import CALMQA_ORDERS

from analysis import schema, store
from analysis.analyses import surface as surface_tables
from analysis.io.calmqa import PROVIDER_ERROR_CODES
from analysis.pipeline import surface
from analysis.pipeline.language_id import Identifier, LangidBatch, cld2_as_polyglot, normalise_code

ENGLISH = "The quick brown fox jumps over the lazy dog while the farmer watches from the old wooden barn."
GERMAN = "Der schnelle braune Fuchs springt über den faulen Hund, während der Bauer aus der alten Scheune zusieht."
HEBREW = "השועל החום המהיר קופץ מעל הכלב העצלן בזמן שהאיכר מסתכל מהאסם הישן והגדול שלו בכפר."
RUSSIAN = "Быстрая коричневая лиса прыгает через ленивую собаку, пока фермер смотрит из старого сарая."


def test_codes_are_normalised():
    assert normalise_code("iw") == "he"
    assert normalise_code("zh-Hant") == "zh"
    assert normalise_code("zh_Hant") == "zh"
    assert normalise_code("un") == "und"
    assert normalise_code("EN") == "en"


def test_cld2_reliable_text_is_decided_by_cld2():
    engine, raw = cld2_as_polyglot(RUSSIAN)
    assert engine == "cld2"
    assert raw["cld2"]["choices"][0][1] == "ru"


def test_cld2_gives_up_on_text_without_language():
    engine, raw = cld2_as_polyglot("12345 67890")
    assert engine is None
    assert raw["cld2"]["best_effort"] and not raw["cld2"]["reliable"]


def test_hebrew_from_cld2_is_normalised_to_he():
    # Russian is a CLD2 language: a Hebrew answer to a Russian question goes through CLD2, which says `iw`.
    (verdict,) = Identifier().identify([HEBREW], ["Russian"], ["cld2"])
    assert verdict.engine.startswith("cld2")
    assert verdict.code == "iw"
    assert verdict.language == "he"


def test_unreliable_cld2_verdict_falls_back_to_langid():
    (verdict,) = Identifier().identify(["12345 67890"], ["Afar"], ["cld2"])
    assert verdict.engine == "langid-batch"
    assert "cld2" in verdict.raw and "langid" in verdict.raw


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["langid-batch", "langid", "py3langid"])
def test_langid_engines_identify_clear_texts(engine):
    verdicts = Identifier(engine).identify([ENGLISH, GERMAN, HEBREW], ["English", "German", "Hebrew"], ["langid"] * 3)
    assert [v.language for v in verdicts] == ["en", "de", "he"]
    assert {v.engine for v in verdicts} == {engine}


@pytest.mark.slow
def test_langid_batch_reproduces_the_langid_package(tmp_path):
    texts = [
        ENGLISH,
        GERMAN,
        HEBREW,
        RUSSIAN,
        "",
        "a",
        "Hola, ¿cómo estás?",
        "日本語の文章です。",
        "Ko e hā e me'a ʻoku ke fai?",
        ENGLISH * 30,
        "🙂🙂🙂",
    ]
    ours = LangidBatch(cache_dir=tmp_path).classify(texts)
    expected = [langid.classify(t) for t in texts]
    assert [code for code, _ in ours] == [code for code, _ in expected]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in expected], rtol=1e-9)
    # The second load comes from the cache and gives the same verdicts.
    assert LangidBatch(cache_dir=tmp_path).classify(texts) == ours


def _tokens(*parts) -> np.ndarray:
    return np.concatenate([np.asarray(p, dtype=np.uint32) for p in parts])


SEQUENCE_20 = np.arange(100, 120)
SEQUENCE_19 = np.arange(100, 119)


def _separated(sequence, times):
    # Distinct separators so that no other run of 20 tokens repeats.
    return _tokens(*[np.concatenate(([5000 + i], sequence)) for i in range(times)])


@pytest.mark.parametrize(
    ("tokens", "count", "repeats"),
    [
        (_separated(SEQUENCE_20, 3), 3, False),
        (_separated(SEQUENCE_20, 4), 4, True),
        (_separated(SEQUENCE_19, 4), 1, False),
        (np.full(22, 7), 3, False),  # 20 equal tokens, overlapping: 3 occurrences in 22 tokens
        (np.full(23, 7), 4, True),  # ... and 4 in 23
        (np.arange(19), 0, False),  # fewer than 20 tokens: no sequence at all
    ],
)
def test_repetition_rule_at_its_edges(tokens, count, repeats):
    assert surface.max_ngram_count(tokens) == count
    batch = surface.max_ngram_counts([tokens, np.arange(50)])
    assert batch[0] == count and batch[1] == 1
    assert (batch[0] >= surface.REPETITION_MIN_COUNT) == repeats


def test_batch_counts_match_exact_counts():
    rng = np.random.default_rng(3)
    arrays = []
    for _ in range(60):
        base = rng.integers(0, 30, size=rng.integers(0, 200))
        block = rng.integers(0, 5, size=rng.integers(18, 25))
        arrays.append(np.concatenate([base, np.tile(block, rng.integers(0, 6))]).astype(np.uint32))
    assert surface.max_ngram_counts(arrays).tolist() == [surface.max_ngram_count(a) for a in arrays]


def test_indicators_are_the_papers_substring_matches():
    assert surface.indicators("I'm sorry, I cannot answer.", "German")["apology"]
    assert surface.indicators("I APOLOGIZE for the confusion.", "German")["apology"]
    assert surface.indicators("I understand your question.", "German")["apology"]
    # Substrings, as the paper counts them: inside a word too.
    assert surface.indicators("A misunderstanding.", "German")["apology"]
    assert not surface.indicators("Ich verstehe die Frage.", "German")["apology"]
    # The English name as written: case-sensitive, inside other words too.
    assert surface.indicators("Here is the answer in German:", "German")["language_name_mention"]
    assert surface.indicators("用German回答", "German")["language_name_mention"]
    assert surface.indicators("Germany is a country.", "German")["language_name_mention"]
    assert not surface.indicators("in german", "German")["language_name_mention"]
    assert surface.indicators("Translation: ...", "Tongan")["translation_mention"]
    assert surface.indicators("I am translating it.", "Tongan")["translation_mention"]
    assert not surface.indicators("transport", "Tongan")["translation_mention"]
    assert surface.indicators("Great idea 😀", "English")["emoji"]
    assert surface.indicators("Love ❤️", "English")["emoji"]
    assert surface.indicators("Love ❤ without the selector", "English")["emoji"]
    assert not surface.indicators("café — naïve ½ →", "English")["emoji"]
    assert not any(surface.indicators("", "English").values())


def test_provider_error_codes():
    texts = ("", None, "OTHER", "SAFETY", "RECITATION", "Other things")
    assert [surface.provider_error_code(t, PROVIDER_ERROR_CODES) for t in texts] == [
        "empty",
        "empty",
        "OTHER",
        "SAFETY",
        "RECITATION",
        None,
    ]
    # A study that declares no code of its provider: only an empty answer is a provider error.
    assert [surface.provider_error_code(t) for t in texts] == ["empty", "empty", None, None, None, None]


def test_verdicts_for_provider_errors_unreliable_and_repetitive_answers():
    answers = pl.DataFrame(
        {
            "answer_id": [1, 2, 3, 4, 5],
            "text": ["", ENGLISH, GERMAN, " ".join(["the same words again and again here"] * 30), "OTHER"],
            "language": ["English", "Papiamento", "German", "English", "German"],
            "iso_code": ["en", "pap", "de", "en", "de"],
            "identified": [True, False, True, True, True],
            "detector": ["langid"] * 5,
        }
    )
    verdicts = surface.surface_verdicts(answers, PROVIDER_ERROR_CODES, processes=1, progress=False)
    rows = {r["answer_id"]: r for r in verdicts.iter_rows(named=True)}
    assert verdicts.columns == schema.ANSWER_SURFACE.column_names()
    for error, code in ((rows[1], "empty"), (rows[5], "OTHER")):
        # A provider error is neither in the wrong language nor repetitive, and not clean either.
        assert error["provider_error"] and error["provider_error_code"] == code
        assert (
            error["detected_language"] is None and error["language_match"] is None and error["language_correct"] is None
        )
        assert not error["repetition"] and error["surface_ok"] is False
    assert rows[1]["empty"] and not rows[5]["empty"] and rows[5]["n_tokens"] == 1
    unreliable = rows[2]
    assert unreliable["detected_language"] == "en" and unreliable["language_match"] is False
    assert unreliable["language_correct"] is None and unreliable["surface_ok"] is None
    assert rows[3]["language_correct"] and rows[3]["surface_ok"] and rows[3]["provider_error_code"] is None
    assert rows[4]["repetition"] and rows[4]["surface_ok"] is False
    assert set(verdicts["tokenizer"]) == {"o200k_base"}


def test_heatmap_cells_show_provider_errors_and_unidentified_languages_as_such():
    rates = pl.DataFrame(
        {
            "model": ["A", "A", "A"],
            "language": ["German", "German", "Kirundi"],
            "question_type": ["agnostic", "specific", "agnostic"],
            "language_label": ["German", "German", "Kirundi †"],
            "resource_level": ["high", "high", "low"],
            "unreliable": [False, False, True],
            "n_answers": [10, 10, 10],
            "n_provider_errors": [10, 0, 0],
            "n_answered": [0, 10, 10],
            "n_language_abstained": [0, 0, 0],
            "n_language_judged": [0, 10, 10],
            "n_surface_judged": [10, 10, 10],
            # every metric of the registry: none of the provider errors, every clean answer where higher
            # is better (none where lower is), 2 of Kirundi's 10
            **{m.count: [0, 10 if m.better == "higher" else 0, 2] for m in schema.SURFACE_METRICS},
        }
    )
    for metric, record in surface_tables.METRICS.items():
        cells = surface_tables.metric_cells(rates, metric, CALMQA_ORDERS)
        # In the suite's order: culturally specific questions first.
        assert cells.select("language", "question_type").rows() == [
            ("German", "specific"),
            ("German", "agnostic"),
            ("Kirundi", "agnostic"),
        ]
        clean, errors, kirundi = cells.rows(named=True)
        assert errors["status"] == surface_tables.PROVIDER_ERRORS_ONLY and errors[metric] is None
        assert clean["status"] is None and clean[metric] == (100.0 if record.better == "higher" else 0.0)
        # A share of 100% or 0% still has an interval of some width.
        assert clean["ci_low"] < clean["ci_high"]
        # (e.g. the language verdict's share and the share without surface issues need the language verdict)
        if record.needs_language:
            assert kirundi["status"] == surface_tables.NOT_IDENTIFIED and kirundi[metric] is None
        else:
            assert kirundi["status"] is None and kirundi[metric] == 20.0
    assert {m.key for m in schema.SURFACE_METRICS if m.needs_language} >= {"pct_correct_language", "pct_surface_ok"}


def test_write_tables_fills_both_tables(database, tmp_path):
    copy = tmp_path / "calmqa.duckdb"
    copy.write_bytes(database.read_bytes())
    with duckdb.connect(str(copy)) as con:
        counts = surface.write_tables(con)
        n_model_answers = con.execute("SELECT count(*) FROM answers WHERE NOT is_human").fetchone()[0]
        n_questions = con.execute("SELECT count(*) FROM questions").fetchone()[0]
        assert counts == {"answer_surface": n_model_answers, "question_language_id": n_questions}
        empty = con.execute(
            "SELECT count(*) FROM answers a JOIN answer_surface s USING (answer_id) WHERE a.text = ''"
        ).fetchone()[0]
        assert empty == con.execute("SELECT count(*) FROM answer_surface WHERE empty").fetchone()[0]
        nulls = con.execute("""SELECT count(*) FROM answer_surface s JOIN answers a USING (answer_id)
                           JOIN questions q USING (question_id)
                           WHERE s.language_correct IS NULL AND NOT s.provider_error""").fetchone()[0]
        unreliable = con.execute("""SELECT count(*) FROM answer_surface s JOIN answers a USING (answer_id)
                                JOIN questions q USING (question_id)
                                WHERE q.language IN ('Balochi', 'Hiligaynon', 'Kirundi', 'Papiamento') AND NOT s.provider_error""").fetchone()[
            0
        ]
        assert nulls == unreliable
    con = store.connect(copy)
    rates = surface_tables.rates_by_model_language(con)
    assert rates["n_answers"].sum() == n_model_answers
    accuracy = surface_tables.question_identification_accuracy(con)
    assert accuracy.height == 23
    kappa = surface_tables.agreement_kappa(surface_tables.rated_answers(con))
    assert kappa["partially_as"].to_list() == list(surface_tables.PARTIALLY_TREATMENTS) * 2
    assert kappa["languages"].unique(maintain_order=True).to_list() == list(surface_tables.KAPPA_SCOPES)
    con.close()


def test_the_model_with_the_most_surface_issues_is_named_with_its_share_of_answers_with_one():
    """The sentence once gave the worst model's share *without* an issue as its share with one."""
    by_model = pl.DataFrame({"model": ["Alpha", "Beta", "Gamma"], "ok": [96.6, 25.0, 80.0]})
    sentence = surface_tables._fewest_and_most_issues(by_model)
    assert sentence == "Alpha has the fewest answers with a surface issue (3.4%), Beta has the most (75.0%)."


def test_models_tied_on_surface_issues_are_said_to_tie():
    tied = pl.DataFrame({"model": ["Alpha", "Beta"], "ok": [90.0, 90.0]})
    assert surface_tables._fewest_and_most_issues(tied) == "Every model has a surface issue in 10.0% of its answers."
    two_best = pl.DataFrame({"model": ["Alpha", "Beta", "Gamma"], "ok": [90.0, 90.0, 50.0]})
    assert surface_tables._fewest_and_most_issues(two_best).startswith("Alpha and Beta have the fewest")
