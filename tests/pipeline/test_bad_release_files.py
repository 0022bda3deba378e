"""A corpus of bad inputs, one case per problem: each must fail with an error a researcher can act on,
naming the file, the record and the field, and leave the existing database byte-identical."""

import gzip
import hashlib
import json
from pathlib import Path

import pytest
from tiny_release import rating_row, write_ratings, write_release

from analysis.core.errors import InputError
from analysis.pipeline.build import build

SPECIFIC = "datasets/dataset-specific-german.json"


def _edit_json(folder: Path, name: str, change) -> None:
    path = folder / name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _set(path: str, value):
    """A change that sets a nested key of the first entry, e.g. 'question.type'."""

    def change(data):
        target = data["entries"][0]
        *parents, last = path.split(".")
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value

    return change


_DELETE = object()


def _write(name: str, content: bytes):
    return lambda folder: (folder / name).write_bytes(content)


def _ratings(**changes):
    return lambda folder: write_ratings(folder, [rating_row(**changes)])


def _ratings_text(transform):
    def apply(folder):
        path = folder / "all_ratings.csv"
        path.write_bytes(transform(path.read_bytes()))

    return apply


CASES = {
    "invalid JSON": (
        _write(SPECIFIC, b'{"entries": [\n  {"question": {,}}]}'),
        ["dataset-specific-german.json", "line 2 column", "invalid JSON"],
    ),
    "truncated gzip": (
        lambda f: (
            (f / "datasets/x")
            .parent.joinpath("dataset-agnostic-german.json.gz")
            .write_bytes(gzip.compress(b'{"entries": []}' * 50)[:25])
            or (f / "datasets/dataset-agnostic-german.json").unlink()
        ),
        ["dataset-agnostic-german.json.gz", "cannot be read", "truncated or corrupted gzip"],
    ),
    "wrong top-level shape": (
        _write(SPECIFIC, b'[{"question": {}}]'),
        ["dataset-specific-german.json", "top level", "'entries'", '{"entries": [...]}'],
    ),
    "missing question name": (
        lambda f: _edit_json(f, SPECIFIC, _set("question.name", _DELETE)),
        ["dataset-specific-german.json", "entry 0", "'question.name'", "missing"],
    ),
    "missing answer language": (
        lambda f: _edit_json(f, SPECIFIC, _set("answers.1.language", _DELETE)),
        ["entry 0 (german:0), answer 1", "'language'", "missing"],
    ),
    "missing question text": (
        lambda f: _edit_json(f, SPECIFIC, _set("question.translations", {"English": {"text": "x"}})),
        ["entry 0 (german:0)", "'translations.German.text'", "missing"],
    ),
    "wrong question type": (
        lambda f: _edit_json(f, SPECIFIC, _set("question.type", 6)),
        ["entry 0 (german:0)", "'question.type'", "is 6"],
    ),
    "unknown language": (
        _write("datasets/dataset-specific-klingon.json", b'{"entries": []}'),
        ["dataset-specific-klingon.json", "unknown language 'klingon'", "languages.csv"],
    ),
    "duplicate question names": (
        lambda f: _edit_json(f, SPECIFIC, lambda d: d["entries"].append(d["entries"][0])),
        ["entry 2 (german:0)", "'question.name'", "duplicate question name"],
    ),
    "answer to a question that does not exist": (
        lambda f: _edit_json(f, SPECIFIC, _set("answers.1.name", "german:9:language.german:claude opus")),
        ["answer 1 (german:9:language.german:claude opus)", "'name'", "names another question"],
    ),
    "unknown model": (
        lambda f: _edit_json(f, SPECIFIC, _set("answers.1.prompting_state", {"model_name": "GPT 9"})),
        ["answer 1", "'prompting_state.model_name'", "unknown model 'GPT 9'", "known:"],
    ),
    "empty file": (_write(SPECIFIC, b""), ["dataset-specific-german.json", "the file is empty"]),
    "text that is not UTF-8": (
        _write(SPECIFIC, '{"entries": []} café'.encode("latin-1")),
        ["dataset-specific-german.json", "line 1 (byte 19)", "is not UTF-8"],
    ),
    "CSV with a missing column": (
        _ratings_text(lambda b: b.replace(b",omissions", b"", 1)),
        ["all_ratings.csv", "line 1 (header)", "missing column(s) 'omissions'"],
    ),
    "CSV with an extra column": (
        _ratings_text(lambda b: b.replace(b",language\r\n", b",language,notes\r\n", 1)),
        ["all_ratings.csv", "line 1 (header)", "unexpected column(s) 'notes'"],
    ),
    "CSV with a byte-order mark": (
        _ratings_text(lambda b: b"\xef\xbb\xbf" + b),
        ["all_ratings.csv", "byte-order mark"],
    ),
    "CSV row with too many fields": (
        _ratings_text(lambda b: b + b"1,2,3\r\n"),
        ["all_ratings.csv", "line 3", "has 3 fields, the header has 12"],
    ),
    "rating out of range": (
        _ratings(rating="7"),
        ["all_ratings.csv", "line 2 (annotation_id 7)", "'rating'", "from 1 to 5"],
    ),
    "issue level not known": (_ratings(factuality="huge"), ["line 2", "'factuality'", "none, minor, major"]),
    "unknown model in ratings": (_ratings(model="gpt5"), ["line 2", "'model'", "unknown model 'gpt5'"]),
    "unknown language in ratings": (_ratings(language="xx"), ["line 2", "'language'", "unknown language code 'xx'"]),
    "rating whose question cannot be matched": (
        _ratings(question="Keine solche Frage"),
        ["line 2 (annotation_id 7)", "'question'", "matches 0 specific German"],
    ),
    "missing release file": (
        lambda f: (f / "categories-metadata.csv").unlink(),
        ["categories-metadata.csv", "missing from the release folder"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_input_is_refused_and_the_database_kept(case, tmp_path, tiny_database):
    break_it, expected = CASES[case]
    folder = write_release(tmp_path / "release", gzip_files=False)
    break_it(folder)
    target = tmp_path / "calmqa.duckdb"
    target.write_bytes(tiny_database.read_bytes())  # the good database of the same tiny release
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    with pytest.raises(InputError) as info:
        build(folder, target, verify=False, progress=False)
    message = str(info.value)
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before
    # nothing beside it but its lock file, when the build got as far as taking it
    assert {p.name for p in tmp_path.iterdir()} - {"calmqa.duckdb.lock"} == {"calmqa.duckdb", "release"}


@pytest.mark.slow
def test_several_problems_in_one_file_are_reported_together(tmp_path, small_language_identification):
    folder = write_release(tmp_path / "release", gzip_files=False)
    write_ratings(folder, [rating_row(rating="0"), rating_row(annotation_id="9", model="bard", omissions="?")])
    with pytest.raises(InputError) as info:
        build(folder, tmp_path / "x.duckdb", verify=False)
    message = str(info.value)
    assert message.startswith("3 problems")
    assert "line 2 (annotation_id 7), field 'rating'" in message
    assert (
        "line 3 (annotation_id 9), field 'model'" in message
        and "line 3 (annotation_id 9), field 'omissions'" in message
    )
    assert not (tmp_path / "x.duckdb").exists()
