"""Hostile study folders (issue 38): one rule for each kind of value, wherever a study folder gives it.

Each case spoils a copy of the example study and expects exactly one problem, naming the file, the record
and the field, with the reason: a key is matched whole (a final newline is no part of a key); a label is
one line of visible text of at most 200 characters, and a free text (title, description, citation) is
visible text of a stated length; a number is an ASCII decimal; a language's code is a public BCP 47 tag;
two display names that look alike (Unicode's confusables) are one; a table that is a FIFO or a device is
refused, never taken for an absent one; a byte-order mark is named; and after a problem that leaves a
table's rows unknown (a misspelt header, study.toml that is not TOML) nothing that refers to them is
reported again. The slow test runs some of them through `python -m analysis build-db`, as a user does.
"""

import os
import shutil
import subprocess
import sys

import polars as pl
import pytest
from study_edits import EXAMPLE, edit, problems_of

from analysis.core import paths
from analysis.io import study

TOML = "study.toml"


@pytest.fixture
def folder(tmp_path):
    """A copy of the example study to spoil."""
    return shutil.copytree(EXAMPLE, tmp_path / "study")


def in_toml(old: str, new: str):
    return lambda folder: edit(folder / TOML, old, new)


def in_table(table: str, old: str, new: str, count: int = 1):
    return lambda folder: edit(folder / f"{table}.csv", old, new, count)


def replaced(table: str, make):
    """The table's CSV replaced by what `make(path)` puts in its place."""

    def spoil(folder):
        path = folder / f"{table}.csv"
        path.unlink()
        make(path)

    return spoil


def _display_names(folder, names: dict[str, str]) -> None:
    """Every answer of the models shown as the keys of `names` shown as its values instead."""
    for old, new in names.items():
        edit(folder / "answers.csv", f",{old}\n", f",{new}\n", count=-1)


def _model_version(folder, version: str) -> None:
    """A `model_version` column, given for the third answer (Gamma Mini's first, on line 4)."""
    answers = pl.read_csv(folder / "answers.csv")
    versions = [version if index == 2 else None for index in range(answers.height)]
    answers.with_columns(model_version=pl.Series(versions, dtype=pl.String)).write_csv(folder / "answers.csv")


# ------------------------------------------------------------------------------------------ the cases

CASES = {
    # -- one key rule: matched whole, so a final newline is not part of a key (`re.match` with `$` took it)
    "the study's name ending in a newline": (
        in_toml('name = "example"', 'name = "example\\n"'),
        "study.toml, field 'name': is 'example\\n'; the study's name is a key",
    ),
    "a criterion's name ending in a newline": (
        in_toml("[criteria.fluency]", '[criteria."fluency\\n"]'),
        "study.toml, [criteria.'fluency\\n']: a criterion's name is a key",
    ),
    "a metric's name ending in a newline": (
        in_toml("[metrics.flawed]", '[metrics."flawed\\n"]'),
        "study.toml, [metrics.'flawed\\n']: a metric's name is a key",
    ),
    "a model key ending in a newline": (
        in_table("answers", "ha-001,gamma-mini,", 'ha-001,"gamma-mini\n",'),
        "answers.csv, line 4, field 'model': is 'gamma-mini\\n'; a model key is",
    ),
    # -- one text rule: free texts of study.toml have a length and no control or bidirectional character
    "a title of 5 MB": (
        in_toml('title = "A made-up study', 'title = "' + "t" * 5_000_000 + "A made-up study"),
        "study.toml, field 'title': is 5,000,062 characters long; the title has at most 200",
    ),
    "a description of 5 MB": (
        in_toml('description = "Made up', 'description = "' + "d" * 5_000_000 + "Made up"),
        "field 'description': is 5,000,321 characters long; the description has at most 10,000",
    ),
    "a citation of 5 MB": (
        in_toml('name = "example"', 'name = "example"\ncitation = "' + "c" * 5_000_000 + '"'),
        "field 'citation': is 5,000,000 characters long; the citation has at most 2,000",
    ),
    "a terminal escape sequence in the title": (
        in_toml('title = "A made-up', 'title = "\\u001b[2J\\u001b[31mA made-up'),
        "field 'title': holds the control character U+001B (escape) at character 0, which starts a terminal's "
        "escape sequences; the title is one line of visible text",
    ),
    "a terminal escape sequence in the description": (
        in_toml('description = "Made up', 'description = "Made\\nup \\u001b]0;owned\\u0007 up'),
        "field 'description': holds the control character U+001B (escape) at character 8",
    ),
    "a right-to-left override in the citation": (
        in_toml('name = "example"', 'name = "example"\ncitation = "Doe (2024) \\u202egnp.exe"'),
        "field 'citation': holds the bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) at character 11",
    ),
    "a line separator in the title": (
        in_toml('title = "A made-up', 'title = "A\\u2028made-up'),
        "field 'title': holds the line separator U+2028 at character 1",
    ),
    # -- ... and every label of the tables: one line of visible text
    "a display name with U+2028": (
        in_table("answers", ",Gamma Mini\n", ",Gamma\u2028Mini\n"),
        "answers.csv, line 4, field 'display_name': is 'Gamma\\u2028Mini', which holds the line separator U+2028",
    ),
    "a category with a control character": (
        in_table("questions", ",factual,food,curated", ",factual,fo\x07od,curated"),
        "questions.csv, line 2, field 'category': is 'fo\\x07od', which holds the control character U+0007",
    ),
    "an annotator with a right-to-left override": (
        in_table("ratings", "ha-001,alpha-7b,annotator-1,overall", "ha-001,alpha-7b,annotator-\u202e1,overall"),
        "ratings.csv, line 2, field 'annotator': is 'annotator-\\u202e1', which holds the bidirectional control U+202E",
    ),
    "a question id with a byte-order mark inside": (
        in_table("questions", "ha-004,Hausa", "ha-\ufeff004,Hausa"),
        "questions.csv, line 5, field 'question_id': is 'ha-\\ufeff004', which holds a byte-order mark (U+FEFF)",
    ),
    "a model version of 300 characters": (
        lambda folder: _model_version(folder, "v" * 300),
        "answers.csv, line 4, field 'model_version': is 'vvvv",
    ),
    "a level of a criterion with a line break": (
        in_toml('levels = ["poor", "fair", "good"]', 'levels = ["poor", "fa\\nir", "good"]'),
        "study.toml, [criteria.fluency], field 'levels': the level 'fa\\nir' holds a line break at character 2",
    ),
    # -- one number rule: ASCII decimals only
    "a metric value in Arabic-Indic digits": (
        in_table("metrics", "ha-001,alpha-7b,score,0.6036", "ha-001,alpha-7b,score,\u0660.\u0666"),
        "metrics.csv, line 2, field 'value': is '٠.٦'; expected a number (ASCII digits, a point, an exponent)",
    ),
    "a metric value with an underscore": (
        in_table("metrics", "ha-001,alpha-7b,score,0.6036", "ha-001,alpha-7b,score,0.6_036"),
        "metrics.csv, line 2, field 'value': is '0.6_036'; expected a number",
    ),
    "a metric value of Python's infinity": (
        in_table("metrics", "ha-001,alpha-7b,score,0.6036", "ha-001,alpha-7b,score,Infinity"),
        "metrics.csv, line 2, field 'value': is 'Infinity'; expected a number",
    ),
    # -- private-use and invalid language tags
    "a private-use language tag": (
        in_table("languages", "Hausa,ha,", "Hausa,x-hausa,"),
        "languages.csv, line 2, field 'code': is 'x-hausa', a private-use tag that names no public language",
    ),
    "a private-use language code of ISO 639 (qaa)": (
        in_table("languages", "Hausa,ha,", "Hausa,qaa,"),
        "languages.csv, line 2, field 'code': is 'qaa', a private-use tag",
    ),
    "an invalid language tag": (
        in_table("languages", "Hausa,ha,", "Hausa,ha-NG-NG,"),
        "languages.csv, line 2, field 'code': is 'ha-NG-NG', which is not a valid BCP 47 language tag",
    ),
    "a code for no language": (
        in_table("languages", "Hausa,ha,", "Hausa,und,"),
        "languages.csv, line 2, field 'code': is 'und', a code for no single language",
    ),
    "a question's language given as a private-use tag": (
        in_table("questions", "ha-004,Hausa", "ha-004,x-hausa"),
        "questions.csv, line 5, field 'language': unknown language 'x-hausa': not in languages.csv",
    ),
    # -- look-alike display names: Unicode's confusables skeleton, not only names that mix scripts
    "an all-Cyrillic display name beside a Latin one": (
        lambda folder: _display_names(
            folder, {"Gamma Mini": "\u0412\u0415\u0422\u0410 70\u0412", "Beta 70B": "BETA 70B"}
        ),
        "field 'display_name': gamma-mini and beta-70b would both be shown as 'ВЕТА 70В'",
    ),
    "an all-Greek display name beside a Latin one": (
        lambda folder: _display_names(folder, {"Gamma Mini": "\u0391\u0392\u0395", "Alpha 7B": "ABE"}),
        "field 'display_name': gamma-mini and alpha-7b would both be shown as 'ΑΒΕ'",
    ),
    # -- special files are refused, never taken for absent tables
    "a FIFO as ratings.csv": (
        replaced("ratings", os.mkfifo),
        "ratings.csv: is a FIFO (named pipe), not a file; expected the ratings table as a regular file",
    ),
    "a FIFO as metrics.csv": (
        replaced("metrics", os.mkfifo),
        "metrics.csv: is a FIFO (named pipe), not a file; expected the metrics table as a regular file",
    ),
    "a device as metrics.csv": (
        replaced("metrics", lambda path: path.symlink_to("/dev/zero")),
        "metrics.csv: is a character device, not a file",
    ),
    "a FIFO as study.toml": (
        lambda folder: ((folder / TOML).unlink(), os.mkfifo(folder / TOML)),
        "study.toml: is a FIFO (named pipe), not a file",
    ),
    # -- a byte-order mark named wherever it is found
    "a byte-order mark at the start of study.toml": (
        lambda folder: (folder / TOML).write_bytes(b"\xef\xbb\xbf" + (folder / TOML).read_bytes()),
        "study.toml, byte 0: starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM",
    ),
    # -- no follow-on problem after a problem that leaves a table's rows unknown
    "a misspelt header of answers.csv": (
        in_table("answers", "question_id,model,answer", "question_id,modle,answer"),
        "answers.csv, line 1 (header): missing column(s) 'model'",
    ),
    "a misspelt header of questions.csv": (
        in_table("questions", "question_id,language,question", "questoin_id,language,question"),
        "questions.csv, line 1 (header): missing column(s) 'question_id'",
    ),
    "a misspelt header of languages.csv": (
        in_table("languages", "language,code", "langauge,code"),
        "languages.csv, line 1 (header): missing column(s) 'language'",
    ),
    "study.toml that is not TOML": (
        in_toml("[criteria.overall]", "[criteria.overall"),
        "study.toml: is not valid TOML",
    ),
    "a line of questions.csv that is not UTF-8": (
        lambda folder: (folder / "questions.csv").write_bytes(
            (folder / "questions.csv").read_bytes().replace(b"ha-003,Hausa,", b"ha-003,Hausa,\xff", 1)
        ),
        "questions.csv, line 4: is not UTF-8 text",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_hostile_study_value_gets_one_clear_problem(case, folder):
    spoil, expected = CASES[case]
    spoil(folder)
    problems = problems_of(folder)
    assert len(problems) == 1 and expected in problems[0], problems


def test_a_valid_study_keeps_its_marks_and_free_text_on_lines(folder):
    """What the rules leave alone: a description on several lines with a tab, a display name in one
    non-Latin script with no Latin look-alike beside it, and a right-to-left mark (U+200F) in a category."""
    edit(folder / TOML, 'description = "Made up', 'description = """Made\n\tup')
    edit(folder / TOML, 'not identified."\n', 'not identified."""\n')
    _display_names(folder, {"Gamma Mini": "\u0393\u03ac\u03bc\u03bc\u03b1"})
    edit(folder / "questions.csv", ",factual,food,curated", ",factual,food\u200f,curated")
    read = study.read(folder)
    assert read.description.startswith("Made\n\tup")
    assert "Γάμμα" in read.models["display_name"].to_list()
    assert "food\u200f" in read.questions["category"].to_list()


def test_many_levels_are_named_in_a_message_of_bounded_size(folder):
    levels = ", ".join(f'"level {i}"' for i in range(900))
    edit(folder / TOML, 'levels = ["poor", "fair", "good"]', f'levels = [{levels}, "level 5"]')
    edit(folder / "ratings.csv", "annotator-1,fluency,fair", "annotator-1,fluency,superb")
    problems = problems_of(folder)
    assert problems == ["study.toml, [criteria.fluency], field 'levels': the level(s) 'level 5' appear twice"], problems


# ------------------------------------------------------------------------- through the command line


@pytest.mark.slow  # each runs a build's process
@pytest.mark.parametrize(
    "case",
    [
        "a FIFO as ratings.csv",
        "a device as metrics.csv",
        "a byte-order mark at the start of study.toml",
        "a misspelt header of answers.csv",
        "an all-Cyrillic display name beside a Latin one",
        "a terminal escape sequence in the title",
    ],
)
def test_a_hostile_study_stops_the_build_with_one_message(case, folder, tmp_path, short_text_evaluation):
    spoil, expected = CASES[case]
    spoil(folder)
    db_path = tmp_path / "studies" / "example.duckdb"
    result = subprocess.run(
        [sys.executable, "-m", "analysis", "build-db", "--source", str(folder), "--db", str(db_path)],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("error: 1 problem in the input:\n"), result.stderr
    assert expected in result.stderr.replace(str(folder) + "/", ""), result.stderr
    assert not db_path.exists() and not list(tmp_path.glob("studies/*.duckdb*"))


@pytest.mark.parametrize(
    "toml, message",
    [
        (b'\xef\xbb\xbfname = "example"\ntitle = "t"\n', "byte-order mark"),
        (b'name = "example\\n"\ntitle = "t"\n', "name is 'example\\n'; expected a key"),
    ],
)
def test_make_reads_the_study_s_name_by_the_same_rules(tmp_path, toml, message):
    """scripts/study_name.py, which names `make study`'s database before the environment exists."""
    (tmp_path / TOML).write_bytes(toml)
    result = subprocess.run(
        [sys.executable, str(paths.ROOT / "scripts" / "study_name.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == "" and message in result.stderr, result.stderr


def test_make_does_not_wait_on_a_fifo_study_toml(tmp_path):
    os.mkfifo(tmp_path / TOML)
    result = subprocess.run(
        [sys.executable, str(paths.ROOT / "scripts" / "study_name.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "is not a regular file" in result.stderr
