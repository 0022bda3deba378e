"""The files researchers import (`make import-*`): a new model's answers, per-answer metrics (also
VeriScore's own output), and questions of the public dataset's export.

Each reader reads and validates the whole file, collecting every problem (file, record, field); it is
given what the database already holds (question and answer ids, languages, categories) to check the
file's references against. `analysis.pipeline.imports` applies what they return.

Every import that changed the database is kept beside it (`core.paths.imports_folder`), one numbered
folder per import holding the file as it was imported (`keep`). The database records which imports it
holds (`applied_imports`); `manifest.csv` in the folder lists them for people and for a build that has
no database to read them from (`read_manifest`, `write_manifest`): the database build replays them.
"""

import csv
import functools
import io
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from tqdm import tqdm

from ..core import files
from ..core.errors import Problems
from ..core.text import skeleton
from . import ingest, records

MODEL_KEY = re.compile(r"[a-z0-9][a-z0-9._-]*")  # matched whole (`records.is_key`)
TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes"}, {"0", "false", "no"}
QUESTION_TYPE_WORDS = {
    "specific": "specific",
    "culturally specific": "specific",
    "cultural": "specific",
    "agnostic": "agnostic",
    "culturally agnostic": "agnostic",
    "non-cultural": "agnostic",
}
# The names figures give the human reference answers: no model may be shown as one of them, or keyed so.
RESERVED_DISPLAY_NAMES = ("Human", "Human (dot points)")
RESERVED_MODEL_KEYS = frozenset(ingest.model_key(name) for name in RESERVED_DISPLAY_NAMES)
# A display name is a label in a figure's legend or axis: this many characters at most.
MAX_DISPLAY_NAME = 80
# Scripts whose letters look like one another's ('a' and Cyrillic 'а', 'o' and Greek 'ο'): a name mixing
# them is a look-alike of another (Unicode TR 39's restriction to a single script for these).
_LOOK_ALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK"})


# ------------------------------------------------------------------------------------------ values


def _flag(value, path, record, field, problems) -> bool | None:
    """A yes/no value: a JSON boolean, 1/0, or the words true/false, yes/no."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1) or isinstance(value, str):
        word = str(value).strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    shown = repr(value) if isinstance(value, str) else records.json_type(value)
    problems.add(path, record, field, f"is {shown}; expected one of 1/0, true/false, yes/no")
    return None


def identity_key(name: str) -> str:
    """What makes two names the same to a reader: compatibility forms (NFKC: full-width letters, ligatures,
    NFC and NFD alike), invisible characters (zero-width spaces, direction marks and overrides: Unicode's
    format characters), every kind of dash, case and spacing aside, and characters that look alike
    (Unicode's confusables skeleton, `core.text.skeleton`: the Cyrillic `ВЕТА 70В` is `BETA 70B`, the
    Greek `ΑΒΕ` is `ABE`; the skeleton is taken again after the case is folded)."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(
        "-" if category == "Pd" else char for char in text if (category := unicodedata.category(char)) != "Cf"
    )
    return skeleton(skeleton(" ".join(text.split())).casefold())


def _scripts(text: str) -> set[str]:
    """The scripts of the letters of `text`, by the first word of their Unicode names (LATIN, CYRILLIC...)."""
    return {
        unicodedata.name(char, "?").split(" ")[0]
        for char in unicodedata.normalize("NFKC", text)
        if unicodedata.category(char).startswith("L")
    }


@functools.lru_cache(maxsize=1 << 12)  # checked on every row that gives it: a model's rows give one name
def display_name_problem(name: str) -> str | None:
    """Why `name` cannot be a model's display name, or None: figures show it as the model's name, so it is
    plain visible text of one script family, not too long, and not the name of the human answers."""
    if len(name) > MAX_DISPLAY_NAME:
        return f"is {len(name):,} characters long; a display name has at most {MAX_DISPLAY_NAME} (it labels figures)"
    problem = records.label_problem(name, "a display name", MAX_DISPLAY_NAME)
    if problem is not None:
        return f"is {name[:MAX_DISPLAY_NAME]!r}, which {problem}"
    if name != name.strip():
        return f"is {name!r}; a display name has no space at either end"
    invisible = next((char for char in name if unicodedata.category(char) == "Cf"), None)
    if invisible is not None:
        return (
            f"is {name!r}, which holds the invisible character U+{ord(invisible):04X} "
            f"({unicodedata.name(invisible, 'a format character')}); a display name is visible text"
        )
    mixed = sorted(_scripts(name) & _LOOK_ALIKE_SCRIPTS)
    if len(mixed) > 1:
        return (
            f"is {name!r}, which mixes {' and '.join(s.title() for s in mixed)} letters: a look-alike of "
            "another name; write it in one of them"
        )
    if identity_key(name) in _reserved_keys():
        return f"is {name!r}, the name figures give the human reference answers"
    return None


@functools.cache
def _reserved_keys() -> frozenset[str]:
    return frozenset(identity_key(name) for name in RESERVED_DISPLAY_NAMES)


def model_key_problem(model: str) -> str | None:
    """Why `model` cannot be an imported model's key, or None."""
    if not records.is_key(model, MODEL_KEY):
        return f"is {model!r}; a model key is lower-case letters, digits, '.', '-' or '_', e.g. my-model-7b"
    if model in RESERVED_MODEL_KEYS:
        return f"is {model!r}, which names the human reference answers; give your model another key"
    return None


def _display_name(value, path, record, problems) -> str | None:
    name = records.text(value, path, record, "display_name", problems, optional=True)
    if name is None:
        return None
    problem = display_name_problem(name)
    if problem:
        problems.add(path, record, "display_name", problem)
        return None
    return name


# ------------------------------------------------------------------------------------------ answers

ANSWER_COLUMNS = ("question", "language", "model", "answer")
ANSWER_OPTIONAL = ("model_version", "display_name")
ANSWER_SCHEMA = {
    "question_id": pl.Int64,
    "model": pl.String,
    "text": pl.String,
    "model_version": pl.String,
    "display_name": pl.String,
    "name": pl.String,
}


@dataclass(frozen=True)
class Holdings:
    """What the database holds that an answers file is checked against."""

    study: str | None  # the name of the study the database holds; None for the CaLMQA release
    questions: dict[tuple[str, str], int]  # (upstream name, language) -> question id
    languages: set[str]
    models: dict[str, str]  # model key -> display name
    answers: dict[str, tuple[int, str | None]]  # answer name -> (question id, model; None for a human answer)
    release_questions: set[int]  # the ids of the release's questions (not imported)
    release_models: set[str]  # the keys of the release's models


def read_answer_file(path: Path, held: Holdings, problems: Problems, notes: list[str] | None = None) -> pl.DataFrame:
    """Validated answers of a CSV/JSONL file, or of a file in the release's JSON format, checked against
    what the database holds: every question exists, no answer takes the name of another, and every model
    keeps one display name that no other model has. What the import leaves out of a valid file (the
    human answers of a release file) is said in `notes`."""
    if file_name := ingest.DATASET_FILE.fullmatch(path.name):
        rows = _release_format_answers(path, file_name, held, problems, notes if notes is not None else [])
    else:
        rows = _table_answers(path, held, problems)
    _check_identities(path, rows, held, problems)
    return pl.DataFrame([{c: row[c] for c in ANSWER_SCHEMA} for row in rows], schema=ANSWER_SCHEMA)


def _table_answers(path: Path, held: Holdings, problems: Problems) -> list[dict]:
    rows: list[dict] = []
    seen: dict[tuple[str, str, str], str] = {}  # (question, language, model) -> its first record
    for record, row in tqdm(
        records.read_rows(path, ANSWER_COLUMNS, ANSWER_OPTIONAL, problems),
        desc=f"read {path.name}",
        unit=" rows",
        disable=None,
    ):
        found = len(problems.items)
        question, language, model, answer = (
            records.text(row[field], path, record, field, problems) for field in ANSWER_COLUMNS
        )
        model_version = records.label(row.get("model_version"), path, record, "model_version", problems, optional=True)
        display_name = _display_name(row.get("display_name"), path, record, problems)
        if len(problems.items) > found:
            continue
        # records.text gives None for a required field only after recording a problem.
        assert question is not None and language is not None and model is not None and answer is not None
        ok = True
        if language not in held.languages:
            problems.add(
                path,
                record,
                "language",
                f"unknown language {language!r}; expected one of {', '.join(sorted(held.languages))}",
            )
            ok = False
        elif (question, language) not in held.questions:
            problems.add(path, record, "question", f"no question {question!r} in {language}; {_question_names(held)}")
            ok = False
        problem = model_key_problem(model)
        if problem:
            problems.add(path, record, "model", problem)
            ok = False
        if not ok:
            continue
        key = (question, language, model)
        if key in seen:
            problems.add(
                path,
                record,
                "question",
                f"a second answer of {model} to {question} in {language} (the first is on {seen[key]})",
            )
            continue
        seen[key] = record
        rows.append(
            {
                "question_id": held.questions[question, language],
                "model": model,
                "text": answer,
                "model_version": model_version,
                "display_name": display_name,
                "name": f"{question}:language.{language.lower()}:{model}",
                "record": record,
            }
        )
    return rows


def _question_names(held: Holdings) -> str:
    """What names a question in an answers file, in the words of the database's source."""
    if held.study is None:
        return "expected an upstream name such as german:0 or non_cultural:3"
    example = min(held.questions, default=None)
    such = f", such as {example[0]!r} in {example[1]}" if example else ""
    return f"expected the question_id of a question of the study {held.study!r}{such}"


# The formats of CaLMQA's imports, for messages: what a study's database refuses.
STUDY_ANSWER_FORMAT = (
    "a .csv or .jsonl file with the columns question (a question's question_id), language, model and answer "
    "(optional: display_name, model_version)"
)


def check_study_import(kind: str, path: Path, study: str, problems: Problems) -> None:
    """An import into the database of a study (`study`, its name) takes that study's formats only: its
    answers as a table (`STUDY_ANSWER_FORMAT`). A file of the CaLMQA release's format, VeriScore's metrics
    and the public dataset's questions are CaLMQA's, which a study has not: a study's metrics and
    questions are tables of its folder."""
    if kind == "metrics":
        problems.add(
            path,
            None,
            None,
            f"the database holds the study {study!r}, whose metrics are its folder's metrics table (the metrics "
            "its study.toml defines): add the values there and run `make study`",
        )
    elif kind == "questions":
        problems.add(
            path,
            None,
            None,
            f"the database holds the study {study!r}, whose questions are its folder's questions table: add "
            "them there and run `make study`",
        )
    elif ingest.DATASET_FILE.fullmatch(path.name) or path.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        problems.add(
            path,
            None,
            None,
            f"the database holds the study {study!r}, whose answers are imported from {STUDY_ANSWER_FORMAT}",
        )


def _release_format_answers(
    path: Path, file_name: re.Match[str], held: Holdings, problems: Problems, notes: list[str]
) -> list[dict]:
    """The model answers of a file in the release's format (`file_name`: its name matched by
    `ingest.DATASET_FILE`). Its human answers are the release's and never imported: a file of human
    answers only is refused, and those of a file with models' answers are counted in `notes`."""
    question_type, key = file_name.group(1), file_name.group(2)
    language = {name.lower(): name for name in held.languages}.get(key)
    if language is None:
        problems.add(path, None, None, f"unknown language {key!r} in the file name")
        return []
    _, answers = ingest.read_dataset_file(path, question_type, language, problems, new_models=True)
    human = sum(answer["is_human"] for answer in answers)
    if human and human == len(answers):
        problems.add(
            path,
            None,
            None,
            f"holds human answers only ({human:,}), which an import never adds (they are the release's): "
            "`import-answers` adds a model's answers",
        )
        return []
    if human:
        notes.append(f"; its {human:,} human answer{' is' if human == 1 else 's are'} not imported (the release's)")
    rows = []
    for answer in answers:
        if answer["is_human"]:
            continue
        problem = model_key_problem(answer["model"])
        if problem:
            problems.add(path, f"answer {answer['name']}", "prompting_state.model_name", problem)
            continue
        qid = held.questions.get((answer["question_name"], language))
        if qid is None:
            problems.add(
                path, f"answer {answer['name']}", "name", f"its question is not in the database's {language} questions"
            )
            continue
        rows.append(
            {
                "question_id": qid,
                "model": answer["model"],
                "text": answer["text"],
                "model_version": answer["model_version"],
                "display_name": None,
                "name": answer["name"],
                "record": f"answer {answer['name']}",
            }
        )
    return rows


def _check_identities(path: Path, rows: list[dict], held: Holdings, problems: Problems) -> None:
    """Every answer name names one answer, every display name one model (`identity_key`: case, spacing,
    compatibility forms and invisible characters aside), and no row changes the release's answers (an
    import adds a model of the release only to imported questions). One pass over the rows."""
    source, whose = ("the release", "the paper's") if held.study is None else ("the study", "its folder's")
    for row in rows:
        if row["model"] in held.release_models and row["question_id"] in held.release_questions:
            problems.add(
                path,
                row["record"],
                "model",
                f"is {row['model']}, a model of {source}: its answers to {source}'s questions are {whose}, which "
                "an import never changes (it may add its answers to imported questions); give your model a key "
                "of its own",
            )
            continue
        owner = held.answers.get(row["name"])
        if owner is not None and owner != (row["question_id"], row["model"]):
            problems.add(
                path,
                row["record"],
                "name",
                f"the answer name {row['name']!r} is already another answer's "
                f"(of {owner[1] or 'a human'}); an answer name names one answer",
            )
    display_by_model: dict[str, tuple[str, str]] = {}
    first_record: dict[str, str] = {}  # model -> its first record, in the file's order
    for row in rows:
        first_record.setdefault(row["model"], row["record"])
        if row["display_name"] is None:
            continue
        first = display_by_model.setdefault(row["model"], (row["display_name"], row["record"]))
        if first[0] != row["display_name"]:
            problems.add(
                path,
                row["record"],
                "display_name",
                f"is {row['display_name']!r}, but {first[1]} gives {row['model']} the display name {first[0]!r}",
            )
    owners = {identity_key(name): model for model, name in held.models.items()}
    for model, first_seen in first_record.items():
        given = display_by_model.get(model)
        if model in held.models:
            if given is not None and given[0] != held.models[model]:
                problems.add(
                    path,
                    given[1],
                    "display_name",
                    f"is {given[0]!r}, but {model} is in the database as "
                    f"{held.models[model]!r}; give that display name or none",
                )
            continue
        name, record = given if given is not None else (model, first_seen)
        other = owners.get(identity_key(name))
        if other is not None:
            problems.add(
                path,
                record,
                "display_name" if given else "model",
                f"the display name {name!r} of the new model {model} is already {other}'s "
                f"({held.models.get(other, name)!r}); figures would merge the two: give another display name",
            )
        owners[identity_key(name)] = model


# ------------------------------------------------------------------------------------------ metrics

METRIC_KEYS = ("answer", "question", "language", "model")
# What VeriScore writes as a claim's verification_result: the first word of its verifier's decision, in
# lower case (`supported`/`unsupported` with two labels; `supported`/`contradicted`/`inconclusive` with three).
VERIFICATION_RESULTS = ("supported", "unsupported", "contradicted", "inconclusive")
METRIC_VALUES = ("n_claims", "n_supported", "relevant")
METRIC_SCHEMA = {"answer_id": pl.Int64, "n_claims": pl.Int32, "n_supported": pl.Int32, "relevant": pl.Boolean}


def read_metric_file(
    path: Path, by_name: dict[str, int], by_key: dict[tuple[str, str, str], int], problems: Problems
) -> pl.DataFrame:
    """Validated metrics keyed by answer name, or by question, language and model: `by_name` maps the
    upstream name of every model answer, `by_key` its (question name, language, model), to its id.
    Every record (each line of a JSONL file on its own) has a key and gives metrics."""
    rows: list[dict] = []
    seen: dict[int, str] = {}  # answer id -> its first record
    for record, row in records.read_rows(path, (), METRIC_KEYS + METRIC_VALUES, problems):
        if not _metric_columns_ok(path, record, row, problems):
            if path.suffix.lower() == ".csv":
                return pl.DataFrame(schema=METRIC_SCHEMA)  # the header is wrong: every row would say so
            continue
        answer_id = _metric_answer(path, record, row, by_name, by_key, problems)
        n_claims: int | None = None
        n_supported: int | None = None
        relevant: bool | None = None
        if "n_claims" in row:
            n_claims = records.whole_number(row["n_claims"], path, record, "n_claims", problems)
            n_supported = records.whole_number(row["n_supported"], path, record, "n_supported", problems)
            if n_claims is not None and n_supported is not None and n_supported > n_claims:
                problems.add(path, record, "n_supported", f"is {n_supported}, more than n_claims ({n_claims})")
        if "relevant" in row:
            relevant = _flag(row["relevant"], path, record, "relevant", problems)
        if answer_id is None:
            continue
        if answer_id in seen:
            problems.add(path, record, None, f"metrics for the same answer as {seen[answer_id]}")
            continue
        seen[answer_id] = record
        rows.append({"answer_id": answer_id, "n_claims": n_claims, "n_supported": n_supported, "relevant": relevant})
    return pl.DataFrame(rows, schema=METRIC_SCHEMA)


def _metric_answer(path, record, row, by_name, by_key, problems) -> int | None:
    """The id of the answer a metrics record names by `answer`, or by `question`, `language` and
    `model` (when it gives both, they must name the same answer); an empty or null key is not given."""
    given = {field for field in METRIC_KEYS if row.get(field) not in (None, "")}
    if "answer" not in given and not {"question", "language", "model"} <= given:
        problems.add(path, record, "answer", "names no answer: give `answer`, or `question`, `language` and `model`")
        return None
    found = None
    if "answer" in given:
        name = records.text(row["answer"], path, record, "answer", problems)
        if name is None:
            return None
        found = by_name.get(name)
        if found is None:
            problems.add(path, record, "answer", f"no model answer named {name!r}")
            return None
    if {"question", "language", "model"} <= given:
        key = tuple(
            records.text(row[field], path, record, field, problems) for field in ("question", "language", "model")
        )
        if None in key:
            return None
        by_parts = by_key.get(key)
        if by_parts is None:
            problems.add(path, record, "question", f"no answer of {key[2]!r} to {key[0]!r} in {key[1]!r}")
            return None
        if found is not None and found != by_parts:
            problems.add(
                path,
                record,
                "answer",
                f"names another answer than question {key[0]!r}, language {key[1]!r} and model {key[2]!r} do",
            )
            return None
        found = by_parts
    return found


def _metric_columns_ok(path: Path, record: str, row: dict, problems: Problems) -> bool:
    columns = set(row)
    keyed = "answer" in columns or {"question", "language", "model"} <= columns
    has_fact = {"n_claims", "n_supported"} <= columns
    if not keyed or not (has_fact or "relevant" in columns) or (("n_claims" in columns) != ("n_supported" in columns)):
        problems.add(
            path,
            record,
            None,
            "expected a key (`answer`, or `question`, `language` and `model`) and metrics "
            "(`n_claims` with `n_supported`, and/or `relevant`); found " + ", ".join(sorted(columns)),
        )
        return False
    return True


def read_veriscore(claims: Path, verification: Path, by_name: dict[str, int], problems: Problems) -> pl.DataFrame:
    """VeriScore's own output: its claims (or evidence) file and its verification file, line by line.

    Each line of the claims file carries `prompt_source` (which must be the upstream answer name),
    `abstained` (true or false) and `all_claims` (a list of claims; it may be left out when the answer
    abstained); the matching line of the verification file maps each claim to `{"verification_result":
    ...}`. n_claims is the number of distinct claims (0 when VeriScore found "No verifiable claim." or
    the answer abstained); n_supported counts those verified `supported`.
    """
    claim_rows = list(records.read_rows(claims, ("prompt_source", "abstained"), None, problems))
    verified = list(records.read_rows(verification, (), None, problems))
    if len(verified) > len(claim_rows) and problems.read_whole(claims):
        problems.add(
            verification,
            verified[len(claim_rows)][0],
            None,
            f"is longer than the claims file ({len(verified):,} lines against {len(claim_rows):,}): each line "
            "verifies the claims of the claims file's line of the same number, so the two files do not belong "
            "together",
        )
    rows: list[dict] = []
    seen: dict[int, str] = {}  # answer id -> its first record
    for index, (record, row) in enumerate(claim_rows):
        source = records.text(row["prompt_source"], claims, record, "prompt_source", problems)
        answer_id = by_name.get(source) if source is not None else None
        if source is not None and answer_id is None:
            problems.add(
                claims,
                record,
                "prompt_source",
                f"no model answer named {source!r}; set prompt_source to the upstream answer name",
            )
        abstained = row["abstained"]
        if not isinstance(abstained, bool):
            problems.add(
                claims,
                record,
                "abstained",
                f"is {records.json_type(abstained)}; expected true or false "
                '(a JSON boolean; the text "false" is not one)',
            )
            continue
        all_claims = _claim_list(claims, record, row, abstained, problems)
        if answer_id is None or all_claims is None:
            continue
        if all_claims:
            if index >= len(verified) and verification.is_file():
                problems.add(
                    verification,
                    f"line {index + 1}",
                    None,
                    "missing: the verification file is shorter than the claims file",
                )
            if index >= len(verified):
                continue
            n_supported = _supported(verification, *verified[index], all_claims, index, problems)
            if n_supported is None:
                continue
        else:
            n_supported = 0
        if answer_id in seen:
            problems.add(claims, record, "prompt_source", f"the same answer as {seen[answer_id]}")
            continue
        seen[answer_id] = record
        rows.append({"answer_id": answer_id, "n_claims": len(all_claims), "n_supported": n_supported, "relevant": None})
    return pl.DataFrame(rows, schema=METRIC_SCHEMA)


def _claim_list(path: Path, record: str, row: dict, abstained: bool, problems: Problems) -> list[str] | None:
    """The distinct claims of a claims line (none when it abstained or found no verifiable claim)."""
    value = row.get("all_claims")
    if abstained and value is None:
        return []
    if not isinstance(value, list):
        problems.add(
            path,
            record,
            "all_claims",
            f"is {records.json_type(value)}; expected a list of claims (a JSON array of strings)",
        )
        return None
    for position, claim in enumerate(value):
        problem = records.text_problem(claim)
        if problem:
            problems.add(path, record, f"all_claims[{position}]", problem)
            return None
    return [] if abstained else [c for c in dict.fromkeys(value) if c != "No verifiable claim."]


def _supported(
    path: Path, record: str, results: dict, all_claims: list[str], index: int, problems: Problems
) -> int | None:
    """How many of the claims the verification line says are `supported`; every claim must have a result,
    one of VeriScore's (`VERIFICATION_RESULTS`): another word (`Supported`, a misspelling) is not taken
    for `unsupported`."""
    n_supported = 0
    for claim in all_claims:
        result = results.get(claim)
        verdict = result.get("verification_result") if isinstance(result, dict) else None
        if not isinstance(verdict, str):
            problems.add(
                path,
                record,
                None,
                f"gives no verification_result (a JSON string) for the claim {claim!r} "
                f"of the claims file's line {index + 1}",
            )
            return None
        if verdict not in VERIFICATION_RESULTS:
            problems.add(
                path,
                record,
                None,
                f"gives the verification_result {records.shown(verdict)} for the claim {claim!r}; VeriScore "
                f"writes one of {', '.join(VERIFICATION_RESULTS)} (in lower case), and counts `supported` only",
            )
            return None
        n_supported += verdict == "supported"
    return n_supported


# ---------------------------------------------------------------------------------------- questions

QUESTION_COLUMNS = ("language", "question_type", "question")
QUESTION_OPTIONAL = ("question_english", "answer", "collection", "category", "source", "url")
# The columns of texts (any characters); the others are labels (`records.label`: one line of visible text).
QUESTION_TEXTS = ("question", "question_english", "answer")
MAX_URL = 2_048  # characters: the longest URL browsers agree to take


def read_question_file(path: Path, languages: set[str], categories: set[str], problems: Problems) -> pl.DataFrame:
    """Validated questions of an export of the public dataset (one row per question and language)."""
    rows: list[dict] = []
    seen: dict[tuple[str, str, str], str] = {}  # (language, question type, normalised text) -> its first record
    for record, row in tqdm(
        records.read_rows(path, QUESTION_COLUMNS, QUESTION_OPTIONAL, problems),
        desc=f"read {path.name}",
        unit=" rows",
        disable=None,
    ):
        found = len(problems.items)
        values = {
            field: records.text(row.get(field), path, record, field, problems, optional=field not in QUESTION_COLUMNS)
            if field in QUESTION_TEXTS
            else records.label(
                row.get(field),
                path,
                record,
                field,
                problems,
                optional=field not in QUESTION_COLUMNS,
                max_length=MAX_URL if field == "url" else records.MAX_LABEL,
            )
            for field in (*QUESTION_COLUMNS, *QUESTION_OPTIONAL)
        }
        if len(problems.items) > found:
            continue
        given_language, given_type, text = values["language"], values["question_type"], values["question"]
        # records.text gives None for a required field only after recording a problem.
        assert given_language is not None and given_type is not None and text is not None
        language = given_language.strip()
        qtype = QUESTION_TYPE_WORDS.get(given_type.strip().lower())
        collection = (values["collection"] or "auto").strip().lower()
        category = (values["category"] or "").strip() or None
        ok = True
        if language not in languages:
            problems.add(
                path,
                record,
                "language",
                f"unknown language {language!r}; expected one of {', '.join(sorted(languages))}",
            )
            ok = False
        if qtype is None:
            problems.add(
                path, record, "question_type", f"is {values['question_type']!r}; expected specific or agnostic"
            )
            ok = False
        if collection not in ("human", "auto"):
            problems.add(path, record, "collection", f"is {values['collection']!r}; expected human or auto")
            ok = False
        if category is not None and category not in categories:
            problems.add(path, record, "category", f"unknown category {category!r}")
            ok = False
        if not text.strip():
            problems.add(path, record, "question", "is empty")
            ok = False
        if not ok or qtype is None:  # an unknown question type has set `ok` already
            continue
        key = (language, qtype, ingest.question_identity(text))
        if key in seen:
            problems.add(path, record, "question", f"the same question as {seen[key]}")
            continue
        seen[key] = record
        rows.append(
            {
                "language": language,
                "question_type": qtype,
                "collection": collection,
                "text": text,
                "text_en": values["question_english"],
                "category": category,
                "answer": values["answer"],
                "source": values["source"],
                "url": values["url"],
                "normalised": key[2],
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            c: pl.String
            for c in (
                "language",
                "question_type",
                "collection",
                "text",
                "text_en",
                "category",
                "answer",
                "source",
                "url",
                "normalised",
            )
        },
    )


# ---------------------------------------------------------------------------------- kept imports

KINDS = ("answers", "metrics", "questions")
MANIFEST = "manifest.csv"
MANIFEST_COLUMNS = ("position", "kind", "file", "sha256", "verification", "verification_sha256")


@dataclass(frozen=True)
class KeptImport:
    """One import kept beside the database: `folder/<position>/<file>` (and VeriScore's verification file)."""

    folder: Path
    position: int
    kind: str
    file: str
    sha256: str
    verification: str | None = None
    verification_sha256: str | None = None

    @property
    def path(self) -> Path:
        return self.folder / f"{self.position:04d}" / self.file

    @property
    def verification_path(self) -> Path | None:
        return self.folder / f"{self.position:04d}" / self.verification if self.verification else None

    def row(self) -> dict:
        return {
            "position": self.position,
            "kind": self.kind,
            "file": self.file,
            "sha256": self.sha256,
            "verification": self.verification or "",
            "verification_sha256": self.verification_sha256 or "",
        }


def read_manifest(folder: Path, problems: Problems) -> list[KeptImport]:
    """The kept imports `manifest.csv` of `folder` lists, in order; none when the folder has no manifest."""
    path = folder / MANIFEST
    if not path.is_file():
        return []
    kept = []
    for record, row in records.read_rows(path, MANIFEST_COLUMNS, (), problems):
        found = len(problems.items)
        position = records.whole_number(row["position"], path, record, "position", problems)
        if row["kind"] not in KINDS:
            problems.add(path, record, "kind", f"is {row['kind']!r}; expected one of {', '.join(KINDS)}")
        for field in ("file", "verification"):
            if row[field] and (Path(row[field]).name != row[field] or row[field] in (".", "..")):
                problems.add(
                    path,
                    record,
                    field,
                    f"is {row[field]!r}; expected the name of a file kept in the import's own folder",
                )
        if not row["file"]:
            problems.add(path, record, "file", "is empty")
        if len(problems.items) > found:
            continue
        assert position is not None  # records.whole_number gives None only after recording a problem
        kept.append(
            KeptImport(
                folder,
                position,
                row["kind"],
                row["file"],
                row["sha256"],
                row["verification"] or None,
                row["verification_sha256"] or None,
            )
        )
    positions = [k.position for k in kept]
    if positions != sorted(set(positions)):
        problems.add(path, None, "position", f"positions {positions} are not increasing")
    return kept


def check_kept(kept: list[KeptImport], listed_in: Path, problems: Problems) -> None:
    """Every kept file is there, with the content it was kept with (`listed_in`: the database or the
    manifest that lists them)."""
    missing = []
    for entry in kept:
        for kept_file, expected in ((entry.path, entry.sha256), (entry.verification_path, entry.verification_sha256)):
            if kept_file is None:
                continue
            if not kept_file.is_file():
                missing.append(entry.position)
            elif files.sha256(kept_file) != expected:
                problems.add(
                    listed_in,
                    f"import {entry.position}",
                    "sha256",
                    f"the kept file {kept_file} has changed since it was imported",
                )
    if missing:
        positions = ", ".join(str(p) for p in dict.fromkeys(missing))
        problems.add(
            listed_in,
            None,
            None,
            f"{kept[0].folder} does not keep the imports {positions} that it lists: copy a database with its "
            "imports folder (`pipeline.imports.copy_database`)",
        )


def write_manifest(folder: Path, kept: list[KeptImport]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(k.row() for k in kept)
    files.write_text(folder / MANIFEST, buffer.getvalue())


def keep(folder: Path, position: int, kind: str, path: Path, verification: Path | None = None) -> KeptImport:
    """Copy an imported file (and its verification file) into the numbered folder `position` of `folder`,
    replacing what a killed import may have left there. The database that records the import is what
    makes it kept: a folder no database records is never replayed."""
    entry = KeptImport(
        folder,
        position,
        kind,
        path.name,
        files.sha256(path),
        verification.name if verification else None,
        files.sha256(verification) if verification else None,
    )
    with files.atomic_folder(entry.path.parent) as tmp:
        for source in (path, verification):
            if source is not None:
                shutil.copyfile(source, tmp / source.name)
    return entry
