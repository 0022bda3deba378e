"""Language verdicts a researcher can trust on short answers in close languages (issue 35): the routing's
rules (bands, abstention, the prior's margin), the researcher's own verdicts and the study's choice of
engine, the short-text evaluation `make language-id` writes and the goals it is held to, and a generated
study of short answers in close-language pairs."""

import shutil

import polars as pl
import pytest

from analysis import schema, store
from analysis.analyses import short_text as short_text_analyses
from analysis.analyses import surface
from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import short_text_evaluation as evaluation_files
from analysis.io import study
from analysis.pipeline import language_id_all, language_routing, short_text
from analysis.pipeline.build import build

EXAMPLE = paths.DATA / "examples" / "study"


def _row(iso_code: str, from_chars: int, margin: float, engine: str = "ngram", route: str = "auto") -> dict:
    return {
        "route": route,
        "iso_code": iso_code,
        "from_chars": from_chars,
        "engine": engine,
        "margin": margin,
        "screen_margin": None,
        "pct_correct": 99.0,
    }


# ---------------------------------------------------------------- the routing's rules


def test_a_text_is_judged_by_the_band_of_its_length_and_shorter_is_too_short():
    routing = language_routing.Routing([_row("es", 50, 0.3), _row("es", 200, 0.0), _row("gl", 20, 0.1)], "auto")
    assert routing.band("es", 49) is None  # below the first band: too short to judge
    assert routing.band("es", 50).margin == 0.3
    assert routing.band("es", 199).from_chars == 50
    assert routing.band("es", 5_000).from_chars == 200
    assert routing.band("gl", 20).margin == 0.1
    assert routing.band("pt", 500) is None and not routing.knows("pt")
    # another route's rows are not this route's
    assert not language_routing.Routing([_row("es", 50, 0.3, route="lingua")], "auto").knows("es")


def test_the_routing_reads_back_from_csv_as_written():
    rows = pl.DataFrame([_row("es", 50, 0.3), _row("ms", 20, 0.149266, engine="lingua")]).with_columns(
        pl.Series("screen_margin", [None, 1.5])
    )
    read = language_routing.read_routing(rows.cast(evaluation_files.ROUTING_SCHEMA).write_csv().encode())
    assert read == [
        _row("es", 50, 0.3),
        {**_row("ms", 20, 0.149266, engine="lingua"), "screen_margin": 1.5},
    ]


def test_length_is_counted_without_surrounding_space_and_a_text_without_letters_has_none():
    assert language_routing.text_length(["  hola  ", "12345 678", "", "日本語"]).tolist() == [4, 0, 0, 3]


def test_close_neighbours_are_named_both_ways():
    assert evaluation_files.close_neighbours("es") == ("ca", "gl", "pt")
    assert evaluation_files.close_neighbours("sco") == ("en",)
    assert evaluation_files.close_neighbours("ja") == ()


def test_pieces_start_at_a_sentence_and_have_their_length():
    declarations = pl.DataFrame(
        {
            "language": ["es", "es"],
            "declaration": ["spa", "spa"],
            "article": [1, 1],
            "paragraph": [0, 1],
            "text": ["Todos los seres humanos nacen libres. Son iguales en dignidad.", "Tienen razón y conciencia."],
        }
    )
    pieces = short_text.pieces(declarations)
    assert set(pieces["chars"]) == {20, 50}  # the article has fewer than 100 characters after any sentence
    assert all(len(t) == c for t, c in zip(pieces["text"], pieces["chars"]))
    assert set(pieces.filter(pl.col("chars") == 20)["text"]) == {
        "Todos los seres huma",
        "Son iguales en digni",
        "Tienen razón y conci",
    }


@pytest.mark.slow
def test_the_prior_keeps_a_short_text_in_its_language_and_a_long_neighbour_text_is_caught(udhr_folder):
    engine = language_id_all.train_for_languages({"Spanish": "es", "Galician": "gl"}, udhr_folder)
    galician = (
        "Todos os seres humanos nacen libres e iguais en dignidade e dereitos e, dotados como están de razón e "
        "conciencia, débense comportar fraternalmente uns cos outros. Toda persoa ten os dereitos e liberdades "
        "proclamados nesta declaración."
    )
    # Spanish: any text of 20 to 199 characters is judged Spanish whatever its evidence (an unbounded margin);
    # from 200 characters only a text whose best language is Spanish is.
    rows = [_row("es", 20, 1e9), _row("es", 200, 0.0), _row("gl", 20, 0.0)]
    identifier = language_routing.RoutedIdentifier(engine, rows, "auto")
    short, long, tiny = galician[:60], galician, "Sí."
    verdicts = identifier.identify([short, long, tiny, long], ["Spanish", "Spanish", "Spanish", "Galician"], [""] * 4)
    assert [v.language if not v.abstained else "too short" for v in verdicts] == ["es", "gl", "too short", "gl"]
    assert {v.engine for v in verdicts} == {"ngram"}
    # the study chose no engine: no verdict at all
    assert language_routing.RoutedIdentifier(engine, rows, "none").identify([long], ["Spanish"], [""]) == [None]


# ---------------------------------------------------------------- the study's own verdicts and choice


@pytest.fixture
def folder(tmp_path):
    return shutil.copytree(EXAMPLE, tmp_path / "study")


def _problems(folder) -> list[str]:
    with pytest.raises(InputError) as info:
        study.read(folder)
    return [str(p) for p in info.value.problems]


def test_an_unknown_engine_and_an_unknown_answer_language_are_named(folder):
    with open(folder / "study.toml", "a", encoding="utf-8") as toml:
        toml.write('\n[language_id]\nengine = "fasttext"\n')
    answers = pl.read_csv(folder / "answers.csv").with_columns(answer_language=pl.lit(None, pl.String))
    answers[3, "answer_language"] = "Xyzzyish"
    answers.write_csv(folder / "answers.csv")
    problems = _problems(folder)
    assert any("[language_id], field 'engine': is 'fasttext'; expected one of 'auto'" in p for p in problems), problems
    assert any("answers.csv, line 5, field 'answer_language': unknown language 'Xyzzyish'" in p for p in problems), (
        problems
    )


def test_answer_language_is_resolved_as_the_study_s_languages_are(folder):
    # the study's own name of a language (which langcodes does not know), any case and spacing; a code of
    # three letters; a name in another language; a regional tag: each is its language's ISO 639 code
    languages = pl.read_csv(folder / "languages.csv")
    languages[0, "language"] = "Hausa of Kano"
    languages.write_csv(folder / "languages.csv")
    questions = pl.read_csv(folder / "questions.csv")
    questions.with_columns(pl.col("language").replace("Hausa", "Hausa of Kano")).write_csv(folder / "questions.csv")
    given = ["  hausa OF kano ", "hau", "Deutsch", "pt-BR", None]
    answers = pl.read_csv(folder / "answers.csv")
    rest = [None] * (answers.height - len(given))
    answers.with_columns(answer_language=pl.Series(given + rest, dtype=pl.String)).write_csv(folder / "answers.csv")
    read = study.read(folder)
    assert read.answers["answer_language"].to_list()[: len(given)] == ["ha", "ha", "de", "pt", None]
    assert read.answers["answer_language"].null_count() == len(rest) + 1
    # a value that is one language's code and another's name is a problem, as in the questions
    answers.with_columns(answer_language=pl.Series(["Ga", *given[1:], *rest], dtype=pl.String)).write_csv(
        folder / "answers.csv"
    )
    problems = _problems(folder)
    assert any("line 2, field 'answer_language': 'Ga' is the code of Irish" in p for p in problems), problems


def _with_given_languages(folder) -> dict:
    """The example with the researcher's verdicts of three answers: a Hausa answer said to be Yoruba, a
    Twi answer (a language no engine knows) said to be Twi, and a Swahili answer said to be Swahili by its
    code."""
    answers = pl.read_csv(folder / "answers.csv").with_columns(answer_language=pl.lit(None, pl.String))
    keys = answers.select("question_id", "model").with_row_index()
    chosen = {
        ("ha-004", "alpha-7b"): "Yoruba",
        ("tw-004", "alpha-7b"): "Twi",
        ("sw-004", "alpha-7b"): "sw",
    }
    for (question, model), value in chosen.items():
        index = keys.filter((pl.col("question_id") == question) & (pl.col("model") == model))["index"][0]
        answers[index, "answer_language"] = value
    answers.write_csv(folder / "answers.csv")
    return chosen


@pytest.mark.slow
def test_the_researcher_s_verdicts_are_used_as_given(folder, tmp_path, udhr_folder, short_text_evaluation):
    _with_given_languages(folder)
    db_path = tmp_path / "given.duckdb"
    build(folder, db_path, progress=False)
    with store.connect(db_path) as con:
        rows = con.sql(
            "SELECT a.name, s.language_engine, s.detected_language, s.language_correct, s.language_abstained "
            "FROM answer_surface s JOIN answers a USING (answer_id) WHERE a.model = 'alpha-7b' "
            "AND a.name IN ('ha-004:alpha-7b', 'tw-004:alpha-7b', 'sw-004:alpha-7b', 'tw-005:alpha-7b') ORDER BY 1"
        ).fetchall()
        identified = dict(con.sql("SELECT language, identified FROM languages").fetchall())
    assert rows == [
        ("ha-004:alpha-7b", "answer_language", "yo", False, False),  # its text is Hausa: the verdict is as given
        ("sw-004:alpha-7b", "answer_language", "sw", True, False),
        ("tw-004:alpha-7b", "answer_language", "tw", True, False),
        # Twi's other answers have no verdict: not judged, counted apart
        ("tw-005:alpha-7b", None, None, None, True),
    ]
    assert identified["Twi"] is True


@pytest.mark.slow
def test_engine_none_gives_no_language_verdict_and_the_report_says_why(
    folder, tmp_path, udhr_folder, short_text_evaluation
):
    with open(folder / "study.toml", "a", encoding="utf-8") as toml:
        toml.write('\n[language_id]\nengine = "none"\n')
    db_path = tmp_path / "none.duckdb"
    build(folder, db_path, progress=False)
    with store.connect(db_path) as con:
        assert con.sql("SELECT language_identification FROM study").fetchall() == [("none",)]
        assert con.sql("SELECT count(*) FROM languages WHERE identified").fetchall() == [(0,)]
        assert con.sql("SELECT count(*) FROM answer_surface WHERE detected_language IS NOT NULL").fetchall() == [(0,)]
        rates = surface.rates_by_model_language(con)
        # (the metrics that need no language verdict: the repetitions, and any other of the registry)
        without_language = [m.key for m in schema.SURFACE_METRICS if not m.needs_language]
        assert surface.shown_metrics(rates) == without_language and "pct_repetition" in without_language
        note = short_text_analyses.figures_note(con, rates)
    assert 'engine = "none"' in note and "No figure of the share in the correct language" in note


# ---------------------------------------------------------------- what `make language-id` writes


@pytest.fixture(scope="module")
def evaluation(short_text_evaluation):
    """The project's short-text evaluation (`make language-id`), whose measures these tests hold to their goals."""
    table, routes, meta = evaluation_files.read(short_text_evaluation)
    return table, routes, meta, pl.read_parquet(short_text_evaluation / "verdicts.parquet")


def test_every_language_either_engine_knows_is_measured_at_every_length(evaluation):
    table, routes, meta, _ = evaluation
    auto = table.filter(pl.col("route") == "auto")
    assert auto["language"].n_unique() == meta["n_languages"]
    # every language lingua knows has a declaration, and is measured
    assert set(language_routing.lingua_languages()) <= set(auto["language"])
    # as many as docs/methods.md says
    assert f"with a complete declaration: {meta['n_languages']})" in (paths.DOCS / "methods.md").read_text("utf-8")
    assert set(auto["chars"]) == {20, 50, 100, 200}


def test_the_accuracy_table_says_what_the_verdicts_say(evaluation):
    """accuracy.csv against the piece-level verdicts it summarises, counted here: the n-gram engine's own
    pieces of each length judged in their language, and the abstention of a length below the first band."""
    table, routes, _, verdicts = evaluation
    pieces = pl.read_parquet(paths.SHORT_TEXT_EVALUATION / "pieces.parquet")
    own = (
        verdicts.filter(pl.col("engine") == "ngram")
        .join(pieces.select("piece_id", "language", "chars"), on="piece_id")
        .filter(pl.col("language") == pl.col("expected"))
    )
    counted = own.group_by("language", "chars").agg(
        (100 * (pl.col("detected") == pl.col("language")).mean()).alias("pct")
    )
    reported = table.filter(pl.col("route") == "ngram").join(counted, on=["language", "chars"])
    judged = reported.filter(pl.col("pct_correct").is_not_null())
    assert judged.height > 500
    assert (judged["pct_correct"] - judged["pct"]).abs().max() < 0.01
    # a length is too short to judge exactly when its accuracy, or a longer length's, is below 95%
    for (language,), group in reported.sort("chars").group_by("language", maintain_order=True):
        below = [c for c, p in zip(group["chars"], group["pct"]) if p < 95]
        shortest_judged = max(below) if below else 0
        assert group.filter(pl.col("pct_abstained") == 100)["chars"].to_list() == [
            c for c in group["chars"] if c <= shortest_judged
        ], language
    # the routing holds the judged lengths of each route, with their engines
    auto = table.filter((pl.col("route") == "auto") & (pl.col("pct_abstained") < 100))
    listed = routes.filter(pl.col("route") == "auto").select(
        pl.col("iso_code").alias("language"), pl.col("from_chars").alias("chars"), "engine"
    )
    assert auto.select("language", "chars", "engine").sort("language", "chars").equals(listed.sort("language", "chars"))


def test_the_goals_of_the_routing(evaluation):
    """Issue 35: with the routing, at least 97% of 100-character pieces judged right in every language
    either engine knows, and at most 2% of 50-character pieces given a close neighbour's verdict. The goals
    table reports what the accuracy table says; the languages that miss are named in it (and in
    docs/methods.md), and no other misses."""
    table, _, _, _ = evaluation
    auto = table.filter(pl.col("route") == "auto")
    at_100 = auto.filter(pl.col("chars") == 100)
    missed = sorted(at_100.filter(pl.col("pct_correct").is_null() | (pl.col("pct_correct") < 97))["language"])
    over = sorted(auto.filter((pl.col("chars") == 50) & (pl.col("pct_neighbour") > 2))["language"])
    goals = short_text_analyses.goals(table).to_dicts()
    assert goals[0]["n_met"] == at_100.height - len(missed)
    assert [part.split(" (")[0] for part in goals[0]["missed_by"].split(", ") if part] == missed
    assert goals[1]["n_met"] == auto.filter(pl.col("chars") == 50).height - len(over)
    assert missed == KNOWN_MISSES and over == []
    import langcodes

    methods = (paths.DOCS / "methods.md").read_text(encoding="utf-8")
    for code in missed:
        assert f"but {langcodes.Language.get(code).display_name()}" in methods, code
    if not missed:
        assert "every language measured has at\n  least 97% of its 100-character pieces judged in it" in methods


# The languages that miss the 97% goal, measured and documented (docs/methods.md, section 10).
KNOWN_MISSES: list[str] = []


def test_the_price_of_the_prior_is_what_the_methods_say(evaluation):
    """docs/methods.md: from 200 characters at most 5% of a named close language's pieces pass as the
    expected language, but among Bosnian, Croatian and Serbian and between Malay and Indonesian; more at
    shorter lengths (a fifth or more of Scots pieces pass as English at 50); Bosnian and Croatian, Malay and
    Indonesian cannot be told apart."""
    accepted = short_text_analyses.acceptance(paths.SHORT_TEXT_EVALUATION)
    methods = (paths.DOCS / "methods.md").read_text(encoding="utf-8")
    assert "from 200 characters at most 5% of a named close language's" in methods

    def taken(expected: str, neighbour: str, chars: int) -> float:
        row = accepted.filter(
            (pl.col("expected") == expected) & (pl.col("neighbour") == neighbour) & (pl.col("chars") == chars)
        )
        return row["pct_taken_for_expected"][0]

    inseparable = [{"bs", "hr", "sr"}, {"ms", "id"}]
    at_200 = accepted.filter(pl.col("chars") == 200)
    for expected, neighbour, pct in at_200.select("expected", "neighbour", "pct_taken_for_expected").iter_rows():
        if not any({expected, neighbour} <= group for group in inseparable):
            assert pct <= 5, (expected, neighbour, pct)
    assert taken("en", "sco", 50) >= 20
    assert taken("hr", "bs", 100) >= 50 and taken("id", "ms", 100) >= 50


# ---------------------------------------------------------------- a generated study of close-language pairs


@pytest.mark.slow
def test_a_generated_study_of_short_answers_in_close_pairs_gets_at_most_2_percent_wrong(
    evaluation, udhr_folder, tmp_path
):
    import close_pairs

    folder, package = close_pairs.write(tmp_path, udhr_folder)
    db_path = tmp_path / "close_pairs.duckdb"
    build(folder, db_path, progress=False, udhr_folder=package)
    with store.connect(db_path) as con:
        n, judged, wrong, abstained = con.sql(
            "SELECT count(*), count(*) FILTER (NOT language_abstained), count(*) FILTER (NOT language_correct), "
            "count(*) FILTER (language_abstained) FROM answer_surface WHERE NOT provider_error"
        ).fetchall()[0]
        per_language = con.sql(
            "SELECT q.language, count(*) FILTER (NOT s.language_correct) AS wrong, count(*) AS n "
            "FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id) "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
        longest_abstained = con.sql(
            "SELECT max(language_chars) FROM answer_surface WHERE language_abstained"
        ).fetchall()[0][0]
    languages = {c for pair in close_pairs.PAIRS for c in pair}
    assert n == len(languages) * close_pairs.QUESTIONS * len(close_pairs.MODELS)
    # every answer is 15 to 200 characters of the question's language: judged, or too short to judge (never wrong)
    assert judged + abstained == n, (judged, abstained, n)
    # every language of the pairs is judged from 20 characters (the evaluation's shortest pieces): the answers
    # cut below that (an eighth of them) are the ones too short to judge
    assert longest_abstained < 20 and abstained < 0.2 * n, (longest_abstained, abstained)
    assert wrong <= 0.02 * n, per_language
