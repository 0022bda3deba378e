"""A generated corpus of hostile inputs (issue 17), run through the command line as a user runs it
(`python -m analysis ...`, here `cli.main` in-process): release files, imports (answers, metrics,
VeriScore's output, questions), the NativQA tables, the claims registry and database paths.

Every case asserts: the exit status (2: the command refused and wrote nothing, unless the case says
otherwise), that the message names the place (file, record and field, or the path and the reason),
that no traceback reaches stdout or stderr, that the database is byte-identical with nothing left
beside it, and, for the classes that were once accepted wrongly, the refusal or the value stored.
Faults (a killed import, a read-only or full disk, an unreadable file), Make's arguments and races
are in test_faults_and_races.py.
"""

import gzip
import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from tiny_release import rating_row, write_ratings, write_release

from analysis import cli, store
from analysis.core import paths
from analysis.io import release as release_files
from analysis.viz import export

SPECIFIC = "datasets/dataset-specific-german.json"
AGNOSTIC = "datasets/dataset-agnostic-german.json"
CLAUDE = "german:0:language.german:claude opus"
CLAUDE_1 = "german:1:language.german:claude opus"
GPT = "german:0:language.german:gpt 4o"


@dataclass
class Run:
    status: int
    out: str
    err: str


def run_cli(argv: list[str], capsys) -> Run:
    capsys.readouterr()
    status = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return Run(status, captured.out, captured.err)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(db: Path, sql: str) -> list[tuple]:
    with store.connect(db) as con:
        return con.execute(sql).fetchall()


@dataclass
class Work:
    """One case's folder, with a fresh tiny release beside it, and the database the case gives the
    command: a copy of the tiny database, shared by the cases that leave it as it is (each checks so)."""

    root: Path
    db: Path

    @property
    def release(self) -> Path:
        folder = self.root / "release"
        if not folder.exists():
            write_release(folder, gzip_files=False)
        return folder

    def file(self, name: str, content: str | bytes) -> Path:
        path = self.root / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        return path

    def left_beside(self) -> list[str]:
        """What is beside the database besides itself and its lock: temporaries, kept imports."""
        return sorted(p.name for p in self.db.parent.iterdir() if p.name not in (self.db.name, self.db.name + ".lock"))


@pytest.fixture(scope="module")
def shared_database(tmp_path_factory, tiny_database) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("shared") / "calmqa.duckdb"
    shutil.copyfile(tiny_database, db)
    return db, digest(db)


@pytest.fixture
def work(tmp_path, tiny_database) -> Work:
    """A case's folder with its own copy of the tiny database."""
    (tmp_path / "db").mkdir()
    db = tmp_path / "db" / "calmqa.duckdb"
    shutil.copyfile(tiny_database, db)
    return Work(tmp_path, db)


def assert_refused(result: Run, fragments: tuple[str, ...], status: int = 2) -> None:
    text = result.out + result.err
    assert "Traceback" not in text, text
    assert result.status == status, f"exit status {result.status}, expected {status}:\n{text}"
    if status == 2:
        assert result.err.startswith("error: "), result.err
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in:\n{text}"


# --------------------------------------------------------------------------------------- the corpus


@dataclass
class Case:
    """A hostile input: `prepare(work)` writes it and returns the command's arguments; the message must
    hold every fragment of `expect`."""

    prepare: Callable[[Work], list]
    expect: tuple[str, ...]
    status: int = 2
    # The case changes the database file itself (a folder, a damaged file...) or succeeds: it gets its own copy.
    own_database: bool = False


CASES: dict[str, Case] = {}


def case(name: str, prepare, *expect: str, status: int = 2, own_database: bool = False) -> None:
    assert name not in CASES, name
    CASES[name] = Case(prepare, expect, status, own_database or status == 0 or name.startswith("database:"))


# ---- release files (make db VERIFY=no), generated: every field of a dataset entry with each wrong JSON type


def edit_json(folder: Path, name: str, change) -> None:
    path = folder / name
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")  # a lone surrogate as its JSON escape, \\ud800


def at(path: str):
    """The container and key of a dotted path in the first entry, e.g. `question.translations.German.text`."""

    def locate(data):
        target = data["entries"][0]
        *parents, last = path.split(".")
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        return target, int(last) if last.isdigit() else last

    return locate


def set_field(path: str, value):
    def change(data):
        container, key = at(path)(data)
        container[key] = value

    return change


def build_args(work: Work, source: Path | None = None, extra=()) -> list:
    return ["build-db", "--source", source or work.release, "--db", work.db, "--no-verify", *extra]


def release_case(name: str, change, *expect: str, file: str = SPECIFIC) -> None:
    def prepare(work: Work):
        edit_json(work.release, file, change)
        return build_args(work)

    case(f"release: {name}", prepare, file.split("/")[-1], *expect)


WRONG_VALUES = {
    "a number": (7, "7 (a JSON number)"),
    "an object": ({"text": "x"}, "a JSON object"),
    "an array": (["x"], "a JSON array"),
    "a boolean": (True, "true (a JSON boolean)"),
    "a lone surrogate": ("Frage \ud800", "lone surrogate \\ud800"),
    "a NUL character": ("Fra\x00ge", "NUL character"),
}
# Text fields of a question and of an answer, with the wrong values each must refuse.
TEXT_FIELDS = {
    "question.source": ("a number", "an object", "a lone surrogate"),
    "question.collector": ("an array", "a boolean"),
    "question.category": ("an object", "a number"),
    "question.url": ("an object", "an array"),
    "question.translations.German.text": ("a number", "an object", "a lone surrogate", "a NUL character"),
    "question.translations.English.text": ("a number", "an array"),
    "answers.1.translations.German.text": ("a number", "an object", "a lone surrogate"),
    "answers.1.language": ("a number", "an object"),
    "answers.1.prompting_state.model": ("an object", "a number"),
}
for field_path, kinds in TEXT_FIELDS.items():
    for kind in kinds:
        value, shown = WRONG_VALUES[kind]
        where = "entry 0 (german:0)" + (", answer 1" if field_path.startswith("answers") else "")
        field_name = (
            field_path.split(".", 2)[-1]
            if field_path.startswith("answers")
            else field_path.removeprefix("question.")
            if ".translations." in field_path
            else field_path
        )
        release_case(f"{field_path} is {kind}", set_field(field_path, value), where, f"'{field_name}'", shown)

release_case(
    '"answers": 5',
    set_field("answers", 5),
    "entry 0 (german:0)",
    "'answers'",
    "5 (a JSON number)",
    "expected a JSON array",
)
release_case('"answers" an object', set_field("answers", {"a": 1}), "'answers'", "a JSON object")
release_case("question.type a string", set_field("question.type", "5"), "'question.type'", "'5' (a JSON string)")
release_case("question.type true", set_field("question.type", True), "'question.type'", "true (a JSON boolean)")
release_case("question.type an array", set_field("question.type", [5]), "'question.type'", "a JSON array")
release_case(
    "human_evaluated a string",
    set_field("question.human_evaluated", "false"),
    "'question.human_evaluated'",
    "'false' (a JSON string)",
    "expected true or false",
)
release_case(
    "prompting_state a string",
    set_field("answers.1.prompting_state", "Claude Opus"),
    "answer 1",
    "'prompting_state'",
    "a JSON string",
)
release_case("question.name an array", set_field("question.name", ["german:0"]), "entry 0", "'question.name'")
release_case(
    "answer name a number",
    set_field("answers.1.name", 12),
    "entry 0 (german:0), answer 1",
    "'name'",
    "12 (a JSON number)",
)
release_case("entries an object", lambda d: d.__setitem__("entries", {"0": 1}), "top level", "'entries'")


def write_bytes(name: str, content: bytes, *expect: str, label: str) -> None:
    def prepare(work: Work):
        (work.release / name).write_bytes(content)
        return build_args(work)

    case(f"release: {label}", prepare, name.split("/")[-1], *expect)


write_bytes(
    SPECIFIC,
    b'{"entries": [{"question": {"name": "german:0", "human_evaluated": NaN}}]}',
    "invalid JSON",
    "NaN is not a JSON value",
    label="NaN, which JSON does not have",
)
write_bytes(
    SPECIFIC,
    b'{"entries": [' + b"9" * 5000 + b"]}",
    "invalid JSON",
    "more than 4,300 digits",
    label="a number of 5,000 digits",
)
write_bytes(SPECIFIC, b"\xef\xbb\xbf{}", "byte-order mark", label="a byte-order mark")


def corrupt_gzip(flip: bool):
    def prepare(work: Work):
        path = work.release / SPECIFIC
        data = bytearray(gzip.compress(path.read_bytes()))
        path.unlink()
        if flip:
            data[len(data) // 2] ^= 0xFF
        else:
            data = data[: len(data) // 2]
        (work.release / (SPECIFIC + ".gz")).write_bytes(bytes(data))
        return build_args(work)

    return prepare


case(
    "release: a gzip with one flipped byte",
    corrupt_gzip(True),
    "dataset-specific-german.json.gz",
    "cannot be read",
    "corrupted gzip",
)
case("release: a truncated gzip", corrupt_gzip(False), "dataset-specific-german.json.gz", "truncated or corrupted gzip")


def same_question_in_two_files(work: Work):
    def add(data):
        entry = json.loads((work.release / SPECIFIC).read_text(encoding="utf-8"))["entries"][1]
        entry["question"]["type"] = 6
        data["entries"].append(entry)

    edit_json(work.release, AGNOSTIC, add)
    return build_args(work)


case(
    "release: the same question in two dataset files",
    same_question_in_two_files,
    "dataset-specific-german.json, question german:1 (German), field 'question.name'",
    "is also in dataset-agnostic-german.json",
)


def same_answer_name_in_two_files(work: Work):
    edit_json(work.release, AGNOSTIC, set_field("answers.0.name", "non_cultural:0:language.english:gpt 4 turbo"))
    return build_args(work)


case(
    "release: one answer name in two dataset files",
    same_answer_name_in_two_files,
    "answer non_cultural:0:language.english:gpt 4 turbo, field 'name'",
    "dataset-agnostic-english.json",
    "an answer name names one answer",
)


def ratings(*changes: dict, text=None):
    def prepare(work: Work):
        write_ratings(work.release, [rating_row(**c) for c in changes])
        if text is not None:
            path = work.release / "all_ratings.csv"
            path.write_bytes(text(path.read_bytes()))
        return build_args(work)

    return prepare


case(
    "release: ratings annotation_id '²'",
    ratings({"annotation_id": "²"}),
    "all_ratings.csv, line 2",
    "'annotation_id'",
    "is '²'",
)
case(
    "release: ratings annotation_id of 30 digits",
    ratings({"annotation_id": "9" * 30}),
    "'annotation_id'",
    "expected a whole number from 0 to 9,223,372,036,854,775,807",
)
case(
    "release: ratings field over the CSV field limit",
    ratings({"answer": "x" * 1_100_000}),
    "all_ratings.csv, line 2",
    "longer than 1,048,576 characters",
)
case(
    "release: ratings with text after a closing quote",
    ratings({}, text=lambda b: b.replace(b"Claude sagt", b'"Claude" sagt', 1)),
    "all_ratings.csv, line 2",
    "cannot be read as CSV",
)
case(
    "release: ratings not UTF-8 on line 3",
    ratings({}, {"annotation_id": "8"}, text=lambda b: b.replace(b"Claude", b"Cl\xe9ude")),
    "all_ratings.csv, line 2",
    "is not UTF-8",
)
case(
    "release: a column twice in languages.csv",
    lambda w: (
        (w.release / "languages.csv").write_text(
            (w.release / "languages.csv").read_text(encoding="utf-8").replace("speakers", "speakers,region", 1),
            encoding="utf-8",
        ),
        build_args(w),
    )[-1],
    "languages.csv, line 1 (header)",
    "the column(s) 'region' appear twice",
)
case(
    "release: datasets is a file",
    lambda w: (shutil.rmtree(w.release / "datasets"), (w.release / "datasets").write_text("x")) and build_args(w),
    "datasets",
    "a release folder has a datasets/ folder",
)
case(
    "release: SOURCE is a file",
    lambda w: build_args(w, w.file("release.json", "{}")),
    "release.json",
    "missing from the release folder",
)


# A question named `german:²`: `str.isdigit` accepts '²', `int` does not; its number is ASCII digits.
def superscript_question(work: Work):
    def rename(data):
        entry = data["entries"][1]
        entry["question"]["name"] = "german:²"
        for answer in entry["answers"]:
            answer["name"] = answer["name"].replace("german:1", "german:²")

    edit_json(work.release, SPECIFIC, rename)
    return build_args(work)


case(
    "release: a question named german:²",
    superscript_question,
    "entry 1 (german:²), field 'question.name'",
    "a number of ASCII digits",
)


# ---- the database path


def db_is(make):
    def prepare(work: Work):
        make(work.db)
        return build_args(work)

    return prepare


case("database: DB= a folder", db_is(lambda db: (db.unlink(), db.mkdir())), "calmqa.duckdb: is a folder")
case(
    "database: DB= a file that is not DuckDB",
    db_is(lambda db: db.write_text("notes I keep")),
    "calmqa.duckdb: is not a DuckDB database",
    "a build replaces only a database",
)
case(
    "database: import into a folder",
    lambda w: (
        (w.db.unlink(), w.db.mkdir())
        and ["import-metrics", w.file("m.csv", f"answer,relevant\n{CLAUDE},1\n"), "--db", w.db]
    ),
    "calmqa.duckdb: is a folder",
)
case(
    "database: import into a file that is not DuckDB",
    lambda w: (
        w.db.write_text("x" * 4096)
        and ["import-metrics", w.file("m.csv", f"answer,relevant\n{CLAUDE},1\n"), "--db", w.db]
    ),
    "calmqa.duckdb: is not a DuckDB database",
)
case(
    "database: import into a missing database",
    lambda w: w.db.unlink() or ["import-metrics", w.file("m.csv", f"answer,relevant\n{CLAUDE},1\n"), "--db", w.db],
    "calmqa.duckdb: no database here",
    "make db",
)


def truncated_database(work: Work):
    data = work.db.read_bytes()
    work.db.write_bytes(data[: len(data) // 3])
    return ["import-metrics", work.file("m.csv", f"answer,relevant\n{CLAUDE},1\n"), "--db", work.db]


case("database: a truncated DuckDB file", truncated_database, "calmqa.duckdb: cannot be")
case(
    "database: expected-counts of a file that is not DuckDB",
    lambda w: w.db.write_text("x") and ["expected-counts", "--db", w.db],
    "calmqa.duckdb: is not a DuckDB database",
)


# ---- imports, generated: every field of an answers JSONL line with each wrong JSON type


def import_case(
    name: str, kind: str, file_name: str, content, *expect: str, verification=None, status: int = 2
) -> None:
    """The message names `file_name` unless `expect` names another file (the verification file)."""

    def prepare(work: Work):
        path = work.file(file_name, content)
        extra = ["--verification", work.file("verification.jsonl", verification)] if verification is not None else []
        return [f"import-{kind}", path, "--db", work.db, *extra]

    names_file = () if any(".jsonl," in e or ".csv," in e for e in expect) else (file_name,)
    case(f"import {kind}: {name}", prepare, *names_file, *expect, status=status)


def jsonl(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


ANSWER = {"question": "german:0", "language": "German", "model": "my-model", "answer": "Eine Antwort."}
for field_name, kinds in {
    "question": ("an object", "a number"),
    "language": ("an array", "a boolean"),
    "model": ("a number", "an object"),
    "answer": ("a number", "an object", "a lone surrogate", "a NUL character"),
    "model_version": ("an object",),
    "display_name": ("a number", "an array"),
}.items():
    for kind in kinds:
        value, shown = WRONG_VALUES[kind]
        import_case(
            f"answers JSONL {field_name} is {kind}",
            "answers",
            "answers.jsonl",
            jsonl({**ANSWER, field_name: value}),
            "line 1",
            f"'{field_name}'",
            shown,
        )

ANSWERS_CSV = "question,language,model,answer,display_name\n"
import_case(
    "a display name that is GPT-4o's",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,my-model,Antwort.,GPT-4o\n",
    "line 2, field 'display_name'",
    "is already gpt-4o's",
    "figures would merge the two",
)
import_case(
    "a display name GPT-4o's but for case and spacing",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,my-model,Antwort.,gpt-4O\n",
    "line 2",
    "already gpt-4o's",
)
import_case(
    "a display name of the human answers",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,my-model,Antwort.,Human\n",
    "line 2, field 'display_name'",
    "the name figures give the human reference answers",
)
import_case(
    "two display names for one model",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,my-model,A.,Mine\ngerman:1,German,my-model,B.,Mine 2\n",
    "line 3, field 'display_name'",
    "line 2 gives my-model the display name 'Mine'",
)
import_case(
    "two new models with one display name",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,model-a,A.,Same\ngerman:0,German,model-b,B.,Same\n",
    "line 3, field 'display_name'",
    "already model-a's",
)
import_case(
    "another display name for a model in the database",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,gpt-4o,Antwort.,My GPT\n",
    "line 2, field 'display_name'",
    "gpt-4o is in the database as 'GPT-4o'",
)
import_case(
    "a display name with a tab",
    "answers",
    "answers.csv",
    ANSWERS_CSV + 'german:0,German,my-model,A.,"My\tModel"\n',
    "line 2, field 'display_name'",
    "holds a tab at character 2; a display name is one line of visible text",
)
import_case(
    "a CSV field over the field limit",
    "answers",
    "answers.csv",
    ANSWERS_CSV + "german:0,German,my-model," + "x" * 1_100_000 + ",\n",
    "line 2",
    "longer than 1,048,576 characters",
)
import_case(
    "a quote never closed",
    "answers",
    "answers.csv",
    ANSWERS_CSV + 'german:0,German,my-model,"Antwort,\n',
    "line 2",
    "cannot be read as CSV",
)
import_case(
    "latin-1 text on line 3",
    "answers",
    "answers.csv",
    (ANSWERS_CSV + "german:0,German,m,A.,\ngerman:1,German,m,Caf\xe9,\n").encode("latin-1"),
    "line 3",
    "is not UTF-8",
)
import_case("a byte-order mark", "answers", "answers.csv", b"\xef\xbb\xbf" + ANSWERS_CSV.encode(), "byte-order mark")
import_case(
    "a column twice",
    "answers",
    "answers.csv",
    "question,language,model,answer,answer\n",
    "line 1 (header)",
    "'answer' appear twice",
)
import_case("an unknown suffix", "answers", "answers.txt", ANSWERS_CSV, "unknown format")
import_case(
    "a line that is an array",
    "answers",
    "answers.jsonl",
    '["german:0"]\n',
    "line 1",
    "a JSON array",
    "a JSON object per line",
)


def release_format_answers(name: str, model_name: str = "New LLM") -> str:
    entry = {
        "question": {
            "name": "german:0",
            "type": 5,
            "language": "German",
            "source": "x",
            "collector": "x",
            "human_evaluated": False,
            "category": "other",
            "translations": {"German": {"language": "German", "text": "?"}},
        },
        "answers": [
            {
                "name": name,
                "language": "German",
                "translations": {"German": {"language": "German", "text": "Eine neue Antwort."}},
                "prompting_state": {"model_name": model_name},
            }
        ],
    }
    return json.dumps({"entries": [entry]})


# Two answers with one name: metrics keyed by it would attach to either.
import_case(
    "an answer named as another model's answer",
    "answers",
    "dataset-specific-german.json",
    release_format_answers(CLAUDE),
    f"answer {CLAUDE}, field 'name'",
    "already another answer's",
)
import_case(
    'release format with "answers": 5',
    "answers",
    "dataset-specific-german.json",
    json.dumps({"entries": [{**json.loads(release_format_answers("x"))["entries"][0], "answers": 5}]}),
    "entry 0 (german:0), field 'answers'",
    "5 (a JSON number)",
)

METRICS_CSV = "answer,n_claims,n_supported\n"
for label, value, shown in (
    ("3,000,000,000", "3000000000", "from 0 to 2,147,483,647"),
    ("'²'", "²", "is '²'"),
    ("negative", "-1", "is '-1'"),
    ("a fraction", "2.5", "is '2.5'"),
    ("in another script's digits", "٣", "is '٣'"),
    ("with an underscore", "1_000", "is '1_000'"),
):
    import_case(
        f"n_claims {label}",
        "metrics",
        "metrics.csv",
        METRICS_CSV + f"{CLAUDE},{value},0\n",
        "line 2, field 'n_claims'",
        shown,
    )
for label, value, shown in (
    ("true", True, "true (a JSON boolean)"),
    ("a word", "three", "is 'three'"),
    ("an object", {"n": 3}, "a JSON object"),
    ("a float", 3.0, "3.0 (a JSON number)"),
):
    import_case(
        f"JSONL n_claims {label}",
        "metrics",
        "metrics.jsonl",
        jsonl({"answer": CLAUDE, "n_claims": value, "n_supported": 0}),
        "line 1, field 'n_claims'",
        shown,
    )
import_case(
    "a later JSONL line lacks n_supported",
    "metrics",
    "metrics.jsonl",
    jsonl({"answer": CLAUDE, "n_claims": 3, "n_supported": 1}, {"answer": CLAUDE_1, "n_claims": 3}),
    "line 2",
    "`n_claims` with `n_supported`",
    "found answer, n_claims",
)
import_case(
    "a later JSONL line gives no metric",
    "metrics",
    "metrics.jsonl",
    jsonl({"answer": CLAUDE, "relevant": True}, {"answer": CLAUDE_1}),
    "line 2",
    "found answer",
)
import_case(
    "a later JSONL line gives no key",
    "metrics",
    "metrics.jsonl",
    jsonl({"answer": CLAUDE, "relevant": True}, {"relevant": False}),
    "line 2",
    "found relevant",
)
import_case(
    "a JSONL line with a key twice",
    "metrics",
    "metrics.jsonl",
    f'{{"answer": "{CLAUDE}", "answer": "{GPT}", "relevant": true}}\n',
    "line 1",
    "'answer' appear twice",
)
import_case(
    "a JSONL line with Infinity",
    "metrics",
    "metrics.jsonl",
    f'{{"answer": "{CLAUDE}", "n_claims": Infinity, "n_supported": 1}}\n',
    "line 1",
    "Infinity is not a JSON value",
)
import_case(
    "answer and question naming two answers",
    "metrics",
    "metrics.jsonl",
    jsonl({"answer": CLAUDE, "question": "german:1", "language": "German", "model": "claude-3-opus", "relevant": True}),
    "line 1, field 'answer'",
    "names another answer",
)
import_case(
    "relevant a number",
    "metrics",
    "metrics.jsonl",
    jsonl({"answer": CLAUDE, "relevant": 2}),
    "line 1, field 'relevant'",
    "2 (a JSON number)",
)
case(
    "import metrics: a file that is a folder",
    lambda w: (w.root / "folder.csv").mkdir() or ["import-metrics", w.root / "folder.csv", "--db", w.db],
    "folder.csv: is a folder",
)

VERIFIED = jsonl({"Claim A": {"verification_result": "supported"}, "Claim B": {"verification_result": "unsupported"}})
import_case(
    'VeriScore abstained "false", a string',
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": CLAUDE, "abstained": "false", "all_claims": ["Claim A", "Claim B"]}),
    "line 1, field 'abstained'",
    "'false' (a JSON string)",
    verification=VERIFIED,
)
import_case(
    "VeriScore abstained null",
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": CLAUDE, "abstained": None, "all_claims": []}),
    "field 'abstained'",
    "is null",
    verification=VERIFIED,
)
import_case(
    "VeriScore all_claims a string",
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": CLAUDE, "abstained": False, "all_claims": "Claim A"}),
    "line 1, field 'all_claims'",
    "'Claim A' (a JSON string)",
    "a JSON array of strings",
    verification=VERIFIED,
)
import_case(
    "VeriScore a claim that is a number",
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": CLAUDE, "abstained": False, "all_claims": ["Claim A", 5]}),
    "all_claims[1]",
    "5 (a JSON number)",
    verification=VERIFIED,
)
import_case(
    "VeriScore a claim without a verification result",
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": CLAUDE, "abstained": False, "all_claims": ["Claim A", "Claim C"]}),
    "verification.jsonl, line 1",
    "'Claim C'",
    verification=VERIFIED,
)
import_case(
    "VeriScore prompt_source a number",
    "metrics",
    "claims.jsonl",
    jsonl({"prompt_source": 3, "abstained": True}),
    "line 1, field 'prompt_source'",
    "3 (a JSON number)",
    verification=VERIFIED,
)

# ---- issue 38: what the round before found left (each was accepted, or counted wrongly, and exited 0)
QUESTION_OF_38 = {"language": "German", "question_type": "specific", "question": "Wie hoch ist die Zugspitze?"}
CLAIMS_AB = jsonl({"prompt_source": CLAUDE, "abstained": False, "all_claims": ["Claim A", "Claim B"]})
import_case(
    "VeriScore a verification file longer than its claims file",
    "metrics",
    "claims.jsonl",
    CLAIMS_AB,
    "verification.jsonl, line 2",
    "is longer than the claims file (2 lines against 1)",
    verification=VERIFIED + VERIFIED,
)
for verdict in ("Supported", "supportd", "Supported."):
    import_case(
        f"VeriScore a verification result {verdict!r}",
        "metrics",
        "claims.jsonl",
        CLAIMS_AB,
        "verification.jsonl, line 1",
        f"gives the verification_result {verdict!r} for the claim 'Claim A'; VeriScore writes one of supported, "
        "unsupported, contradicted, inconclusive",
        verification=jsonl(
            {"Claim A": {"verification_result": verdict}, "Claim B": {"verification_result": "unsupported"}}
        ),
    )
import_case(
    "an answer name with a newline in the release format",
    "answers",
    "dataset-specific-german.json",
    release_format_answers("german:0:language.german:new\nllm"),
    "field 'name'",
    "holds a line break at character 28; a label is one line of visible text",
)
import_case(
    "a question that is an NFD copy of one in the database",
    "questions",
    "questions.jsonl",
    jsonl({"language": "German", "question_type": "specific", "question": "Was ist Fo\u0308hn?"}),
    "0 questions added, 0 changed, 1 already there; it changes nothing",
    status=0,
)


import_case(
    "a model version with a terminal escape sequence",
    "answers",
    "answers.jsonl",
    jsonl({**ANSWER, "model_version": "v1\x1b[2J"}),
    "line 1, field 'model_version'",
    "holds the control character U+001B (escape) at character 2",
)
import_case(
    "a question's category with a right-to-left override",
    "questions",
    "questions.jsonl",
    jsonl({**QUESTION_OF_38, "category": "geo\u202egraphy"}),
    "line 1, field 'category'",
    "holds the bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) at character 3",
)


def release_file_of_a_model_and_a_human(work: Work):
    entry = json.loads(release_format_answers("german:0:language.german:new llm"))
    human = dict(entry["entries"][0]["answers"][0], name="german:0:human:x", prompting_state={"model_name": "Human"})
    entry["entries"][0]["answers"].append(human)
    return ["import-answers", work.file("dataset-specific-german.json", json.dumps(entry)), "--db", work.db]


case(
    "import answers: a release file of a model's answers and a human answer",
    release_file_of_a_model_and_a_human,
    "1 answers added",
    "its 1 human answer is not imported (the release's)",
    status=0,
)

QUESTION = {"language": "German", "question_type": "specific", "question": "Warum ist der Himmel blau?"}
for field_name, kind in (
    ("question_english", "a number"),
    ("question", "an object"),
    ("answer", "a lone surrogate"),
    ("collection", "a number"),
    ("language", "an array"),
    ("url", "an object"),
):
    value, shown = WRONG_VALUES[kind]
    import_case(
        f"questions {field_name} is {kind}",
        "questions",
        "questions.jsonl",
        jsonl({**QUESTION, field_name: value}),
        "line 1",
        f"'{field_name}'",
        shown,
    )


def non_utf8_file_name(work: Work):
    path = work.file(b"answers-\xff.csv".decode("utf-8", "surrogateescape"), ANSWERS_CSV + "german:0,German,m,A.,\n")
    return ["import-answers", path, "--db", work.db]


case("import answers: a file name that is not UTF-8", non_utf8_file_name, "answers-\\udcff.csv", "not plain text")


# ---- the NativQA tables (make db), each refused before anything is built


def nativqa(name: str, file: str, line: int, column: str, value: str, *expect: str) -> None:
    """Set `column` of line `line` of a copy of data/nativqa/`file` to `value`."""

    def prepare(work: Work):
        folder = work.root / "nativqa"
        if not folder.exists():
            shutil.copytree(paths.NATIVQA, folder)
        path = folder / file
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        header = lines[0].rstrip("\n").split(",")
        fields = lines[line - 1].rstrip("\n").split(",")
        fields[header.index(column)] = value
        lines[line - 1] = ",".join(fields) + "\n"
        path.write_text("".join(lines), encoding="utf-8", errors="surrogateescape")
        return build_args(work, extra=["--nativqa", folder])

    case(f"nativqa: {name}", prepare, f"{file}, line {line}", *expect)


nativqa("a value nan", "table2_zero_shot.csv", 3, "value", "nan", "field 'value'", "'nan' is not a number")
nativqa("a value inf", "table4_llm_judge.csv", 2, "value", "inf", "field 'value'", "'inf' is not a number")
nativqa("a value 1e400", "table2_zero_shot.csv", 3, "value", "1e400", "field 'value'", "'1e400' is not a finite number")
nativqa("a negative count", "table1_dataset.csv", 2, "seed_queries", "-3664", "field 'seed_queries'", "is '-3664'")
nativqa(
    "a count of 3,000,000,000",
    "table1_dataset.csv",
    2,
    "seed_queries",
    "3000000000",
    "field 'seed_queries'",
    "from 0 to 2,147,483,647",
)
nativqa("a count '²'", "table23_additional_pairs.csv", 2, "qa_pairs", "²", "field 'qa_pairs'", "is '²'")
nativqa(
    "a count with an underscore",
    "table23_additional_pairs.csv",
    2,
    "qa_pairs",
    "7_956",
    "field 'qa_pairs'",
    "is '7_956'",
)
nativqa(
    "a negative average length",
    "table18_lengths.csv",
    2,
    "question_words_avg",
    "-6.0",
    "field 'question_words_avg'",
    "-6.0 is outside the range 0 to inf",
)
nativqa(
    "an average length NaN",
    "table18_lengths.csv",
    2,
    "question_words_avg",
    "NaN",
    "field 'question_words_avg'",
    "'NaN' is not a number",
)
nativqa(
    "an edit distance Infinity",
    "table24_answer_edit_distance.csv",
    2,
    "normalized_levenshtein",
    "Infinity",
    "field 'normalized_levenshtein'",
    "'Infinity' is not a number",
)
nativqa(
    "a field over the CSV field limit", "regions.csv", 2, "city", "D" * 1_100_000, "longer than 1,048,576 characters"
)
nativqa("not UTF-8", "regions.csv", 3, "city", "Doh\udce9", "is not UTF-8")


# ---- the claims registry (make check-paper)

CLAIMS_HEADER = "claim_id,paper,item,row,column,printed,decimals,kind,source,match,value_column,expect,reason\n"
CLAIM = "calmqa/x/y,calmqa,Table 1,a row,a column,{printed},{decimals},reproduced,01_x/y,a=b,v,exact,\n"


def claims_case(name: str, registry: str | bytes, *expect: str, figure: str | None = None, status: int = 2) -> None:
    def prepare(work: Work):
        folder = work.root / "claims"
        folder.mkdir()
        (folder / "c.csv").write_bytes(
            registry if isinstance(registry, bytes) else registry.encode("utf-8", "surrogatepass")
        )
        figures = work.root / "figures"
        (figures / "01_x").mkdir(parents=True)
        if figure is not None:
            (figures / "01_x" / "y.csv").write_bytes(figure.encode("utf-8", "surrogateescape"))
        return ["check-paper", "--claims", folder, "--figures", figures]

    case(f"claims: {name}", prepare, *expect, status=status)


claims_case(
    "a printed number '1²'",
    CLAIMS_HEADER + CLAIM.format(printed="1²", decimals=0),
    "c.csv, line 2 (calmqa/x/y), field 'printed'",
    "is '1²'",
)
claims_case(
    "not UTF-8 on line 3",
    CLAIMS_HEADER.encode()
    + CLAIM.format(printed="1", decimals=0).encode()
    + CLAIM.format(printed="1", decimals=0).replace("a row", "\xe9").encode("latin-1"),
    "c.csv, line 3",
    "is not UTF-8",
)
claims_case(
    "a field over the CSV field limit",
    CLAIMS_HEADER + CLAIM.format(printed="1", decimals=0).replace("a row", "r" * 1_100_000),
    "c.csv, line 2",
    "longer than 1,048,576",
)
claims_case(
    "two claims with one id",
    CLAIMS_HEADER + CLAIM.format(printed="1", decimals=0) * 2,
    "c.csv, line 3 (calmqa/x/y), field 'claim_id'",
    "is also the id of",
)
claims_case(
    "a kind that is not one",
    CLAIMS_HEADER + CLAIM.format(printed="1", decimals=0).replace(",reproduced,", ",copied,"),
    "c.csv, line 2 (calmqa/x/y), field 'kind'",
    "is 'copied'; expected one of reproduced, derived, transcribed",
)
claims_case(
    "a bound expected within rounding",
    CLAIMS_HEADER + CLAIM.format(printed="<1%", decimals=0).replace(",exact,", ",within rounding,"),
    "c.csv, line 2 (calmqa/x/y), field 'expect'",
    "is a bound",
)
claims_case(
    "a figures CSV that is not CSV",
    CLAIMS_HEADER + CLAIM.format(printed="1.5", decimals=1),
    "01_x/y.csv cannot be read as CSV",
    figure='a,v\n"b,1\n\udcff',
    status=1,
)
claims_case(
    "a figures value nan",
    CLAIMS_HEADER + CLAIM.format(printed="1.5", decimals=1),
    "01_x/y.csv",
    "'nan', not a finite number",
    figure="a,v\nb,nan\n",
    status=1,
)


# ---------------------------------------------------------------------------------------- the tests


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_hostile_input(name, request, tmp_path, shared_database, capsys):
    hostile = CASES[name]
    if hostile.own_database:
        work = request.getfixturevalue("work")
    else:
        work = Work(tmp_path, shared_database[0])
    argv = hostile.prepare(work)
    before = digest(work.db) if hostile.own_database and work.db.is_file() else shared_database[1]
    result = run_cli(argv, capsys)
    try:
        assert_refused(result, hostile.expect, hostile.status)
        if hostile.status != 0 and work.db.is_file():
            assert digest(work.db) == before, "the database changed"
            assert work.left_beside() == [], f"left beside the database: {work.left_beside()}"
    finally:
        if not hostile.own_database and (not work.db.is_file() or digest(work.db) != shared_database[1]):
            shutil.copyfile(request.getfixturevalue("tiny_database"), work.db)  # for the cases after this one


def test_the_corpus_is_broad():
    """At least 60 cases in all, over every kind of input, beside pipeline/test_bad_release_files.py's."""
    kinds = {name.split(":")[0].split(" ")[0] for name in CASES}
    assert len(CASES) >= 60 and {"release", "database", "import", "nativqa", "claims"} <= kinds


# ---- what was once stored wrongly, stored right


def test_a_later_jsonl_line_may_give_some_metrics_and_the_others_stay(work, capsys):
    first = work.file("first.jsonl", jsonl({"answer": CLAUDE, "n_claims": 4, "n_supported": 3, "relevant": True}))
    assert run_cli(["import-metrics", first, "--db", work.db], capsys).status == 0
    second = work.file(
        "second.jsonl",
        jsonl({"answer": CLAUDE_1, "n_claims": 2, "n_supported": 1}, {"answer": CLAUDE, "relevant": False}),
    )
    assert run_cli(["import-metrics", second, "--db", work.db], capsys).status == 0
    stored = dict(
        rows(
            work.db,
            "SELECT a.name, (m.n_claims, m.n_supported, m.relevant) FROM answer_metrics m "
            "JOIN answers a USING (answer_id)",
        )
    )
    assert stored == {CLAUDE: (4, 3, False), CLAUDE_1: (2, 1, None)}


def test_veriscore_booleans_and_claim_lists_are_read_as_json_types(work, capsys):
    claims = work.file(
        "claims.jsonl",
        jsonl(
            {"prompt_source": CLAUDE, "abstained": False, "all_claims": ["Claim A", "Claim B", "Claim A"]},
            {"prompt_source": CLAUDE_1, "abstained": True},
        ),
    )
    verification = work.file("verification.jsonl", VERIFIED + "{}\n")
    result = run_cli(["import-metrics", claims, "--db", work.db, "--verification", verification], capsys)
    assert result.status == 0, result.err
    stored = dict(
        rows(
            work.db, "SELECT a.name, (m.n_claims, m.n_supported) FROM answer_metrics m JOIN answers a USING (answer_id)"
        )
    )
    # distinct claims, not characters; an abstained answer has none
    assert stored == {CLAUDE: (2, 1), CLAUDE_1: (0, 0)}


def test_an_imported_model_keeps_its_own_display_name_and_cells(work, capsys):
    answers = work.file("answers.csv", ANSWERS_CSV + "german:0,German,my-model,Antwort.,My Model\n")
    assert run_cli(["import-answers", answers, "--db", work.db], capsys).status == 0
    assert rows(work.db, "SELECT model, display_name FROM models ORDER BY display_name") == sorted(
        [
            ("claude-3-opus", "Claude 3 Opus"),
            ("gpt-4-turbo", "GPT-4 Turbo"),
            ("gpt-4o", "GPT-4o"),
            ("my-model", "My Model"),
        ],
        key=lambda r: r[1],
    )
    assert rows(
        work.db, "SELECT count(*) FROM answers a JOIN models m USING (model) WHERE m.display_name = 'GPT-4o'"
    ) == [(2,)]


def test_the_identity_rules_are_declared_to_the_database(work):
    """The schema's identity rules hold in DuckDB too: a row that would break one is refused."""
    import duckdb

    with duckdb.connect(str(work.db)) as con:
        for sql in (
            "INSERT INTO models (model, display_name) VALUES ('another', 'GPT-4o')",
            f"INSERT INTO answers SELECT answer_id + 1000, question_id, name, model, model_version, is_human, "
            f"is_dot_points, language, text, text_en, n_bytes, import_position FROM answers WHERE name = '{CLAUDE}'",
            "INSERT INTO questions SELECT question_id + 1000, name, language, question_type, collection, source, "
            "collector, category, text, text_en, n_bytes, human_evaluated, upstream_human_evaluated, url, import_position "
            "FROM questions WHERE name = 'german:0'",
        ):
            with pytest.raises(duckdb.ConstraintException):
                con.execute(sql)


def test_a_flipped_byte_is_found_by_the_checksums_under_verify(work, capsys, monkeypatch):
    """VERIFY=yes: the checksum stage reads every file; a flipped byte in a gzip is a message, not zlib.error."""
    source = work.release
    manifest = [
        release_files.ReleaseFile(str(p.relative_to(source)), "", "", *release_files.sha256_uncompressed(p))
        for p in sorted(source.rglob("*"))
        if p.is_file()
    ]
    monkeypatch.setattr(release_files, "read_manifest", lambda *args: manifest)
    corrupt_gzip(True)(work)
    before = digest(work.db)
    result = run_cli(["build-db", "--source", source, "--db", work.db], capsys)
    assert_refused(result, ("dataset-specific-german.json.gz", "corrupted gzip", "expected the release file"))
    assert digest(work.db) == before


# ---- spreadsheet formulas in the CSVs people open (OWASP, CSV injection)


def test_formula_cells_are_neutralised_in_figures_csvs_and_kept_raw_in_the_database(work, tmp_path, capsys):
    name = '=HYPERLINK("http://example.org","click")'
    answers = work.file("answers.jsonl", jsonl({**ANSWER, "display_name": name}))
    assert run_cli(["import-answers", answers, "--db", work.db], capsys).status == 0
    assert rows(work.db, "SELECT display_name FROM models WHERE model = 'my-model'") == [(name,)]
    table = pl.DataFrame(
        {
            "model": [name, "@SUM(A1)", "\tx", "-1+2", "-0.25", "GPT-4o", "+", "12%"],
            "score": [-0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        }
    )
    export.save_table(table, tmp_path / "figures", "t")
    written = pl.read_csv(tmp_path / "figures" / "t.csv", infer_schema=False)
    assert written["model"].to_list() == ["'" + name, "'@SUM(A1)", "'\tx", "'-1+2", "-0.25", "GPT-4o", "'+", "12%"]
    # numbers stay numbers, negative ones included
    assert written["score"].to_list()[0] == "-0.5"


def test_a_header_made_from_data_is_neutralised_as_its_cells_are(tmp_path):
    """Issue 38: a data value that becomes a column (a resource level `=1+1` pivoted into a column of its
    own) was written raw in the header; it is neutralised as a cell is, and two names that become one stay
    two columns."""
    import csv

    long = pl.DataFrame(
        {
            "model": ["a", "a", "a", "a"],
            "resource_level": ["=1+1", "high", "'=1+1", "-0.5"],
            "share": [0.1, 0.2, 0.3, 0.4],
        }
    )
    wide = long.pivot(on="resource_level", index="model", values="share")
    export.save_table(wide, tmp_path, "by_level")
    with open(tmp_path / "by_level.csv", encoding="utf-8", newline="") as handle:
        header, row = list(csv.reader(handle))
    assert header == ["model", "'=1+1", "high", "'=1+1", "-0.5"]
    assert row == ["a", "0.1", "0.2", "0.3", "0.4"]
