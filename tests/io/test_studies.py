"""Studies of your own (issue 24, docs/studies.md): the study folder's validation (each bad study gets
one clear message naming the file, row and field, and nothing is written), languages resolved by
langcodes, the example study built and written into every generic report, and the example being what
its generator writes."""

import hashlib
import json
import shutil
import subprocess
import sys

import polars as pl
import pytest
import sentences
from same_tables import assert_same_tables
from study_edits import EXAMPLE, edit, problems_of
from tiny_release import write_release

from analysis import cli, store
from analysis.analyses import dimensions, studies
from analysis.core import identity, paths
from analysis.core.errors import Failure
from analysis.io import languages, study
from analysis.pipeline import build as build_module
from analysis.pipeline import imports, synthetic_study
from analysis.pipeline.build import build
from analysis.reporting import index, provenance, run


@pytest.fixture
def folder(tmp_path):
    """A copy of the example study to spoil."""
    return shutil.copytree(EXAMPLE, tmp_path / "study")


# ---------------------------------------------------------------- each bad study, one clear message


def _drop_answers(folder):
    (folder / "answers.csv").unlink()


def _unknown_language(folder):
    edit(folder / "questions.csv", "ha-003,Hausa,", "ha-003,Xyzzyish,")


def _rating_outside_levels(folder):
    edit(folder / "ratings.csv", "annotator-1,fluency,fair", "annotator-1,fluency,superb")


def _unknown_question(folder):
    with open(folder / "answers.csv", "a", encoding="utf-8") as handle:
        handle.write("zz-404,alpha-7b,Some answer,Alpha 7B\n")


def _duplicate_answer(folder):
    lines = (folder / "answers.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    with open(folder / "answers.csv", "a", encoding="utf-8") as handle:
        handle.write(lines[5])


def _one_level(folder):
    edit(folder / "study.toml", 'levels = ["poor", "fair", "good"]', 'levels = ["good"]')


def _look_alike_display_name(folder):
    edit(folder / "answers.csv", ",Alpha 7B\n", ",\u0410lpha 7B\n")  # a Cyrillic A


def _human_display_name(folder):
    edit(folder / "answers.csv", ",Beta 70B\n", ",human\n")


BAD_STUDIES = {
    "missing file": (_drop_answers, "answers.csv: missing: a study has a answers table (.csv, .jsonl or .parquet)"),
    "unknown language": (
        _unknown_language,
        "questions.csv, line 4, field 'language': unknown language 'Xyzzyish': not in languages.csv, and langcodes "
        "knows no language of that name or code",
    ),
    "rating outside its levels": (
        _rating_outside_levels,
        "ratings.csv, line 3, field 'rating': is 'superb'; fluency's levels are poor, fair, good",
    ),
    "answer to an unknown question": (
        _unknown_question,
        "answers.csv, line 242, field 'question_id': no question 'zz-404' in the questions table",
    ),
    "duplicate answer": (
        _duplicate_answer,
        "answers.csv, line 242, field 'model': a second answer of beta-70b to question 'ha-002' (the first is on "
        "line 6)",
    ),
    # the identity rules of imports (issue 27) hold for a study's models too
    "look-alike display name": (
        _look_alike_display_name,
        "answers.csv, line 2, field 'display_name': is '\u0410lpha 7B', which mixes Cyrillic and Latin letters",
    ),
    "display name of the human answers": (
        _human_display_name,
        "answers.csv, line 3, field 'display_name': is 'human', the name figures give the human reference answers",
    ),
    "criterion with fewer than two levels": (
        _one_level,
        "study.toml, [criteria.fluency], field 'levels': is ['good']; a criterion has at least two levels",
    ),
}


@pytest.mark.parametrize("case", BAD_STUDIES, ids=list(BAD_STUDIES))
def test_a_bad_study_gets_one_clear_message(case, folder):
    spoil, expected = BAD_STUDIES[case]
    spoil(folder)
    problems = problems_of(folder)
    assert len(problems) == 1 and expected in problems[0], problems


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_STUDIES, ids=list(BAD_STUDIES))
def test_a_bad_study_stops_the_build_with_exit_2_and_nothing_is_written(case, folder, tmp_path, short_text_evaluation):
    spoil, expected = BAD_STUDIES[case]
    spoil(folder)
    db_path = tmp_path / "studies" / "example.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "analysis", "build-db", "--source", str(folder), "--db", str(db_path)],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("error: 1 problem in the input:\n"), result.stderr
    assert expected in result.stderr.replace(str(folder) + "/", ""), result.stderr
    assert not db_path.exists() and not list(tmp_path.glob("studies/*.duckdb*"))


def test_every_problem_of_a_folder_is_reported_together(folder):
    _unknown_language(folder)
    _rating_outside_levels(folder)
    _one_level(folder)
    (folder / "metrics.csv").write_text(
        "question_id,model,metric,value\nha-001,alpha-7b,score,1.5\nha-001,alpha-7b,bleu,0.3\nha-002,alpha-7b,score,x\n",
        encoding="utf-8",
    )
    problems = problems_of(folder)
    assert any("field 'language': unknown language 'Xyzzyish'" in p for p in problems)
    assert any("[criteria.fluency], field 'levels'" in p for p in problems)
    assert any("metrics.csv, line 2, field 'value': is 1.5, outside score's range [0, 1]" in p for p in problems)
    assert any("metrics.csv, line 3, field 'metric': unknown metric 'bleu' (said once" in p for p in problems)
    assert any("metrics.csv, line 4, field 'value': is 'x'; expected a number" in p for p in problems)
    # the ratings of a criterion whose definition is wrong are not reported again
    assert not any("'fluency'" in p for p in problems if "ratings.csv" in p)


@pytest.mark.parametrize(
    "toml, expected",
    [
        ('title = "t"\n', "study.toml, field 'name': is None; the study's name is a key"),
        ('name = "My Study"\ntitle = "t"\n', "study.toml, field 'name': is 'My Study'"),
        ('name = "x"\ntitle = "t"\n[metrics.m]\nrange = [1, 0]\n', "[metrics.m], field 'higher_is_better'"),
        (
            'name = "x"\ntitle = "t"\n[metrics.m]\nhigher_is_better = true\nrange = [1, 0]\n',
            "[metrics.m], field 'range': is [1, 0]",
        ),
        ('name = "x"\ntitle = "t"\n[criteria.c]\nlevels = [1, 2, 2]\n', "the level(s) '2' appear twice"),
        ('name = "x"\ntitle = "t"\ntitel = "typo"\n', "study.toml, field 'titel': unknown key"),
        ('name = "x\ntitle = "t"\n', "study.toml: is not valid TOML"),
    ],
)
def test_study_toml_is_checked(folder, toml, expected):
    (folder / "study.toml").write_text(toml, encoding="utf-8")
    (folder / "ratings.csv").unlink()
    (folder / "metrics.csv").unlink()
    assert any(expected in p for p in problems_of(folder)), problems_of(folder)


def test_a_table_given_twice_and_a_table_as_jsonl_or_parquet(folder):
    questions = pl.read_csv(folder / "questions.csv")
    questions.write_ndjson(folder / "questions.jsonl")
    assert any("questions: given twice (questions.csv, questions.jsonl)" in p for p in problems_of(folder))
    (folder / "questions.csv").unlink()
    as_jsonl = study.read(folder)
    (folder / "questions.jsonl").unlink()
    questions.write_parquet(folder / "questions.parquet")
    as_parquet = study.read(folder)
    assert as_jsonl.questions.equals(as_parquet.questions) and as_jsonl.questions.height == 80


def test_languages_not_listed_are_resolved_by_langcodes(folder):
    (folder / "languages.csv").write_text("language,code\nHausa,hau\n", encoding="utf-8")
    edit(folder / "questions.csv", ",Twi,", ",tw,", count=-1)
    folder_read = study.read(folder)
    codes = dict(zip(folder_read.languages["language"], folder_read.languages["iso_code"]))
    # hau is stored as its shortest code; Swahili and Yoruba by their names, `tw` by its code
    assert codes == {"Hausa": "ha", "Swahili": "sw", "Yoruba": "yo", "tw": "tw"}
    scripts = dict(zip(folder_read.languages["language"], folder_read.languages["script"]))
    assert scripts["Swahili"] == "Latin"


def _name_questions(folder, names: dict[str, str]) -> None:
    """Name the language of the questions `names` gives (question id -> the name or code to write)."""
    for key, name in names.items():
        edit(folder / "questions.csv", f"\n{key},Hausa,", f"\n{key},{name},")


def _languages_by_question(folder) -> dict[str, str]:
    read = study.read(folder)
    return dict(zip(read.questions["question_key"], read.questions["language"]))


def test_the_names_and_codes_of_one_language_are_that_language_as_languages_csv_names_it(folder):
    """Issue 34: `Hausa`, `hau`, `ha` and `Hausa` with a zero-width space are one language, Hausa (the
    example's languages.csv lists `Hausa,ha`), not four."""
    _name_questions(folder, {"ha-002": "hau", "ha-003": "ha", "ha-004": "Hausa\u200b", "ha-005": "hausa"})
    languages = _languages_by_question(folder)
    assert {languages[f"ha-00{i}"] for i in range(1, 6)} == {"Hausa"}
    assert sorted(study.read(folder).languages["language"]) == ["Hausa", "Swahili", "Twi", "Yoruba"]
    # languages.csv names the language: Persian and Farsi are Farsi where it lists `Farsi,fa`
    (folder / "languages.csv").write_text(
        "language,code\nHausa,ha\nSwahili,sw\nYoruba,yo\nTwi,tw\nFarsi,fa\n", encoding="utf-8"
    )
    _name_questions(folder, {"ha-006": "Persian", "ha-007": "Farsi", "ha-008": "fas"})
    languages = _languages_by_question(folder)
    assert [languages[f"ha-00{i}"] for i in (6, 7, 8)] == ["Farsi", "Farsi", "Farsi"]


def test_two_names_of_one_language_that_languages_csv_does_not_list_are_an_error_naming_both(folder):
    (folder / "languages.csv").unlink()
    _name_questions(
        folder, {"ha-002": "hau", "ha-003": "Persian", "ha-004": "Farsi", "ha-005": "Hausa\u200b", "ha-006": "eus"}
    )
    edit(folder / "questions.csv", "\nha-007,Hausa,", "\nha-007,Basque,")
    problems = problems_of(folder)
    assert problems == [
        "questions.csv, line 3, field 'language': 'hau' and 'Hausa' (first on line 2) name one language, Hausa "
        "(ha): use one name, or list the language in languages.csv with the name to show",
        "questions.csv, line 5, field 'language': 'Farsi' and 'Persian' (first on line 4) name one language, "
        "Persian (fa): use one name, or list the language in languages.csv with the name to show",
        "questions.csv, line 8, field 'language': 'Basque' and 'eus' (first on line 7) name one language, Basque "
        "(eu): use one name, or list the language in languages.csv with the name to show",
    ]  # (`Hausa` with a zero-width space is Hausa, the same name: no problem)


def test_a_name_that_matches_only_loosely_is_an_error_with_the_closest_names_unless_languages_csv_lists_it(folder):
    _name_questions(folder, {"ha-002": "Klingonese", "ha-003": "Ga"})
    problems = problems_of(folder)
    assert len(problems) == 2
    assert problems[0].startswith(
        "questions.csv, line 3, field 'language': unknown language 'Klingonese': not in languages.csv, and "
        "langcodes knows no language of that name or code exactly; the closest: Klingon (tlh), "
    )
    # `Ga` is Irish's code and the Ga language's name
    assert problems[1] == (
        "questions.csv, line 4, field 'language': 'Ga' is the code of Irish (ga) and the name of Ga (gaa): list "
        "it in languages.csv with the code of the language it means"
    )
    with open(folder / "languages.csv", "a", encoding="utf-8") as handle:
        handle.write("Klingonese,tlh,low\nGa,gaa,low\n")
    read = study.read(folder)
    codes = dict(zip(read.languages["language"], read.languages["iso_code"]))
    assert (codes["Klingonese"], codes["Ga"]) == ("tlh", "gaa")


def test_a_name_with_letters_the_confusables_table_maps_resolves_exactly():
    """The names' key is not the display names' confusables skeleton, which spells `I` as `l` and `m` as
    `rn`: Icelandic and German were unknown languages once issue 38's skeleton met issue 34b's names."""
    names = ("Icelandic", "German", "Amharic", "ICELANDIC", "Malayalam", "Hindi")
    assert {name: languages.resolve(name).tag for name in names} == {
        "Icelandic": "is",
        "German": "de",
        "Amharic": "am",
        "ICELANDIC": "is",
        "Malayalam": "ml",
        "Hindi": "hi",  # a name the trie of every language's names leaves out
    }


def test_languages_csv_lists_a_language_once(folder):
    with open(folder / "languages.csv", "a", encoding="utf-8") as handle:
        handle.write("Haoussa,hau,high\n")
    assert problems_of(folder) == [
        "languages.csv, line 6, field 'code': 'hau' is Hausa (ha), which line 2 lists as 'Hausa': a language is "
        "listed once, under the name figures show"
    ]


# ---------------------------------------------------------------- the example study


def test_the_example_is_what_its_generator_writes(tmp_path, udhr_folder):
    synthetic_study.write_study(tmp_path / "example", synthetic_study.EXAMPLE, udhr_folder)
    for path in sorted(EXAMPLE.iterdir()):
        assert (tmp_path / "example" / path.name).read_bytes() == path.read_bytes(), path.name


def _state(folder) -> dict:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def example_database(tmp_path_factory, udhr_folder):
    db_path = tmp_path_factory.mktemp("example") / "example.duckdb"
    before = _state(EXAMPLE)
    build(EXAMPLE, db_path, progress=False)
    # A study's folder is only read.
    assert _state(EXAMPLE) == before
    return db_path


@pytest.mark.slow
def test_the_example_study_builds_with_its_declarations(example_database):
    with store.connect(example_database) as con:
        declared = studies.Study.of(con)
        assert (declared.name, declared.paper, declared.nativqa, declared.language_identification) == (
            "example",
            None,
            False,
            "auto",
        )
        assert all(declared.has.values())
        identified = dict(con.sql("SELECT language, identified FROM languages").fetchall())
        # Twi (tw) has no declaration in the UDHR: no engine knows it
        assert identified == {"Hausa": True, "Swahili": True, "Yoruba": True, "Twi": False}
        orders = dimensions.Orders.of(con)
        assert orders.models == ["Alpha 7B", "Beta 70B", "Gamma Mini"]
        assert orders.question_types == ("factual", "opinion") and orders.collections == ("curated", "scraped")
        assert orders.languages == ["Hausa", "Swahili", "Twi", "Yoruba"] and orders.dividers() == ["Twi †"]
        # Twi's answers have no verdict: drawn as not identified, never 0%
        twi = con.sql(
            "SELECT count(*), count(s.language_correct) FROM answer_surface s JOIN answers a USING (answer_id) "
            "JOIN questions q USING (question_id) WHERE q.language = 'Twi'"
        ).fetchall()[0]
        assert twi == (60, 0)
        assert con.sql(
            "SELECT count(DISTINCT engine) FROM answer_language_all WHERE engine IS NOT NULL"
        ).fetchall() == [(1,)]


@pytest.mark.slow
def test_answers_imported_into_a_study_get_the_verdicts_its_rebuild_gives(
    example_database, tmp_path, language_id_model
):
    # `language_id_model` is the CaLMQA release's: a study's import must not judge with it.
    db_path = tmp_path / "study.duckdb"
    shutil.copy(example_database, db_path)
    answers = tmp_path / "answers.csv"
    pl.DataFrame(
        {
            "question": ["ha-001", "sw-001"],
            "language": ["Hausa", "Swahili"],
            "model": ["delta-1b", "delta-1b"],
            "answer": [
                "Babban Zauren Majalisar Xinkin Duniya ya yi Shelar Waxannan Dokoki Na Kare Haqqin Dan’adam a Duniya.",
                "This answer is in English, not in Swahili, and its verdict says so.",
            ],
        }
    ).write_csv(answers)
    imports.import_file("answers", answers, db_path, language_id_model=language_id_model)
    with store.connect(db_path) as con:
        verdicts = con.sql(
            "SELECT q.language, l.detected_language, l.all_languages_correct FROM answer_language_all l "
            "JOIN answers a USING (answer_id) JOIN questions q USING (question_id) WHERE a.model = 'delta-1b' "
            "ORDER BY q.language"
        ).fetchall()
    assert verdicts == [("Hausa", "ha", True), ("Swahili", "en", False)]
    rebuilt = tmp_path / "rebuilt.duckdb"
    build(EXAMPLE, rebuilt, progress=False, imports_folder=paths.imports_folder(db_path))
    assert_same_tables(db_path, rebuilt)


@pytest.mark.needs_r
@pytest.mark.slow
def test_every_generic_report_of_the_example(example_database, tmp_path):
    names = run.notebook_names(generic_only=True)
    assert names == [
        f"0{i}_{n}"
        for i, n in enumerate(
            [
                "dataset_overview",
                "topic_similarity",
                "surface_quality",
                "answer_scores",
                "human_evaluation",
                "collection_comparison",
            ],
            start=1,
        )
    ]
    roots = run.output_roots(tmp_path / "studies" / "example")
    for name in names:
        run.run_notebook(name, db_path=example_database, **roots)
    index.write_index(roots["reports_root"], roots["figures_root"], db_path=example_database)
    # every sentence that states a number about a model, language or pair matches its CSV
    summaries = {
        p.stem: (provenance.read(p) or {}).get("summary") for p in sorted(roots["reports_root"].glob("[0-9]*.html"))
    }
    found, checked = sentences.problems(summaries, roots["figures_root"])
    assert not found and checked >= 4, found
    page = (roots["reports_root"] / "index.html").read_text(encoding="utf-8")
    assert "A made-up study of long-form answers in four African languages: reports" in page
    # each report's navigation links the study's reports only, never a paper-only report it does not get
    report = (roots["reports_root"] / "03_surface_quality.html").read_text(encoding="utf-8")
    assert "04_answer_scores.html" in report
    assert not [n for n in ("07_nativqa_results", "08_paper_reproduction", "10_language_identification") if n in report]
    figures = roots["figures_root"]
    # the heatmaps' CSVs keep CaLMQA's column names, with the study's models and languages
    cells = pl.read_csv(figures / "03_surface_quality" / "heatmap_pct_correct_language.csv")
    assert {"model", "language", "question_type", "pct_correct_language", "ci_low", "ci_high", "status"} <= set(
        cells.columns
    )
    assert set(cells["model"]) == {"Alpha 7B", "Beta 70B", "Gamma Mini"}
    assert set(cells.filter(pl.col("language") == "Twi")["status"]) == {"language not identified"}
    gamma = cells.filter((pl.col("model") == "Gamma Mini") & (pl.col("language") == "Hausa"))
    assert gamma["pct_correct_language"].to_list() == [70.0, 70.0]
    repetition = pl.read_csv(figures / "03_surface_quality" / "heatmap_pct_repetition.csv")
    assert {"pct_repetition", "ci_low", "ci_high"} <= set(repetition.columns)
    # no paper item is named
    written = [p.name for p in figures.rglob("*") if p.is_file()]
    assert not [n for n in written if n.startswith(("table", "figure", "appendix"))]
    for expected in (
        "01_dataset_overview/question_lengths.csv",
        "01_dataset_overview/question_counts.csv",
        "02_topic_similarity/topic_similarity.csv",
        "04_answer_scores/heatmap_metric_score.csv",
        "04_answer_scores/heatmap_metric_flawed.csv",
        "05_human_evaluation/ratings_overall_by_model.csv",
        "05_human_evaluation/criterion_model_contrasts.csv",
        "05_human_evaluation/criterion_r2.csv",
        "06_collection_comparison/collection_tests.csv",
    ):
        assert (figures / expected).is_file(), expected
    for name in names:
        report = (roots["reports_root"] / f"{name}.html").read_text(encoding="utf-8")
        # no CaLMQA narrative in a study's report
        for word in ("Balochi", "Kirundi", "CaLMQA release", "Claude 3 Opus"):
            assert word not in report, (name, word)


def test_a_study_s_names_enter_the_reports_inert():
    """Text of a study (model, language and level names) enters a report's Markdown as the characters it
    is (`core.text.inert`, issue 27): no link, image or emphasis."""
    from analysis.analyses import surface

    hostile_model, hostile_language = "[x](https://example.com/a.png)", "**Bold**"
    rates = pl.DataFrame(
        {
            "model": [hostile_model, "plain"],
            "language": [hostile_language, hostile_language],
            "resource_level": ["high", "high"],
            "unreliable": [False, False],
            "n_answers": [10, 10],
            "n_answered": [10, 10],
            "n_surface_judged": [10, 10],
            "n_surface_ok": [9, 5],
            "n_provider_errors": [0, 0],
            "n_repetition": [1, 5],
        }
    )
    orders = dimensions.Orders(
        ["plain", hostile_model], [hostile_language], [hostile_language], resource_levels=("high",)
    )
    text = surface.study_summary(rates, orders)
    assert "\\[x\\]\\(https\\:" in text and "](" not in text, text


# ---------------------------------------------------------------- one database and one output folder per study folder


@pytest.fixture(scope="module")
def own_study(tmp_path_factory, udhr_folder):
    """A copy of the example study in a folder of its own (a study of the same name, `example`), built into
    its own database: (folder, database)."""
    root = tmp_path_factory.mktemp("own")
    folder = shutil.copytree(EXAMPLE, root / "study")
    db_path = root / "example.duckdb"
    build(folder, db_path, progress=False)
    return folder, db_path


def _fingerprint(files) -> str:
    """The fingerprint of files as docs/schema.md defines it: the sha256 of their names and checksums, sorted,
    16 hex digits."""
    lines = sorted(f"{p.name}\t{hashlib.sha256(p.read_bytes()).hexdigest()}\n" for p in files)
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:16]


@pytest.mark.slow
def test_a_database_belongs_to_one_study_folder(own_study, tmp_path, capsys):
    """Issue 34: a database records its study folder (resolved path and fingerprint), inside it and beside
    it; a build of another folder of the same name, or of the CaLMQA release, into it is refused naming
    both folders, and the database is left byte-identical."""
    folder, db_path = own_study
    with store.connect(db_path) as con:
        assert con.sql("SELECT folder, fingerprint FROM source").fetchall() == [
            (str(folder.resolve()), _fingerprint(folder.iterdir()))
        ]
    beside = json.loads(identity.database_record(db_path).read_text(encoding="utf-8"))
    assert (beside["study"], beside["folder"], beside["release"]) == ("example", str(folder.resolve()), False)
    copy = tmp_path / "copy.duckdb"  # (without the record beside it: the one inside it decides)
    shutil.copy(db_path, copy)
    before = copy.read_bytes()
    assert cli.main(["build-db", "--source", str(EXAMPLE), "--db", str(copy)]) == 2
    said = capsys.readouterr().err
    assert f"{copy} holds the study 'example' of the folder {folder.resolve()}, and the study 'example' of " in said
    assert f"the folder {EXAMPLE.resolve()} is another (a database belongs to one study folder)" in said
    release = write_release(tmp_path / "release")
    assert cli.main(["build-db", "--source", str(release), "--db", str(copy), "--no-verify"]) == 2
    assert f"and the CaLMQA release (from {release.resolve()}) is another" in capsys.readouterr().err
    assert copy.read_bytes() == before


@pytest.mark.slow
def test_an_output_folder_belongs_to_one_study_folder(own_study, example_database, tmp_path):
    folder, db_path = own_study
    build_root = run.output_roots(tmp_path / "out")["build_root"]
    run.claim_outputs(db_path, build_root)
    assert identity.read(identity.output_record(build_root)).folder == str(folder.resolve())
    with pytest.raises(Failure) as info:
        run.claim_outputs(example_database, build_root)
    assert f"{tmp_path / 'out'} holds the reports of the study 'example' of the folder {folder.resolve()}" in str(
        info.value
    )
    assert f"the study 'example' of the folder {EXAMPLE.resolve()} (the database {example_database})" in str(info.value)
    with pytest.raises(Failure):  # the index too
        index.write_index(
            tmp_path / "out" / "reports", tmp_path / "out" / "figures", db_path=example_database, build_root=build_root
        )


@pytest.mark.slow
def test_a_study_file_changed_during_the_build_is_refused_and_the_database_kept(tmp_path, monkeypatch, udhr_folder):
    """Issue 34: the build fingerprints the study's files before it reads them and checks them once the new
    database is complete; a file changed meanwhile is refused, the previous database kept byte-identical
    (and older than the changed file, so that Make builds it again)."""
    folder = shutil.copytree(EXAMPLE, tmp_path / "study")
    db_path = tmp_path / "example.duckdb"
    build(folder, db_path, progress=False)
    before = db_path.read_bytes(), identity.database_record(db_path).read_bytes()
    loaded = build_module.load_study

    def load_then_change_a_file(con, study_folder, known_languages):
        loaded(con, study_folder, known_languages)
        with open(folder / "questions.csv", "a", encoding="utf-8") as handle:
            handle.write("ha-999,Hausa,A question added while the database was built\n")

    monkeypatch.setattr(build_module, "load_study", load_then_change_a_file)
    with pytest.raises(Failure) as info:
        build(folder, db_path, progress=False)
    assert (
        f"{folder}: questions.csv changed while the database was built from it, so {db_path} was not replaced"
        in str(info.value)
    )
    assert (db_path.read_bytes(), identity.database_record(db_path).read_bytes()) == before
    assert (folder / "questions.csv").stat().st_mtime_ns > db_path.stat().st_mtime_ns


def test_a_metric_value_off_its_range_by_rounding_only_is_within_it_and_one_outside_is_named_as_written(folder):
    """Found converting a real study (TruthfulQA-Multi's BLEU per answer, issue 34): a perfect BLEU computed
    in floating point is 100.00000000000004, refused as "is 100, outside [0, 100]"."""
    edit(
        folder / "study.toml",
        "[metrics.score]\nhigher_is_better = true\nrange = [0, 1]",
        "[metrics.score]\nhigher_is_better = true\nrange = [0, 100]",
    )
    edit(folder / "metrics.csv", "ha-001,alpha-7b,score,0.6036", "ha-001,alpha-7b,score,100.00000000000004")
    values = study.read(folder).metric_values
    assert values.filter(
        pl.col("question_key") == "ha-001", pl.col("model") == "alpha-7b", pl.col("metric") == "score"
    )["value"].to_list() == [100.00000000000004]
    edit(folder / "metrics.csv", "ha-001,alpha-7b,score,100.00000000000004", "ha-001,alpha-7b,score,100.001")
    assert problems_of(folder) == ["metrics.csv, line 2, field 'value': is 100.001, outside score's range [0, 100]"]
