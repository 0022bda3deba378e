"""Read a CaLMQA release folder into tidy tables, validating every record on the way.

A release folder holds `datasets/dataset-{specific,agnostic}-LANGUAGE.json[.gz]`, `all_ratings.csv`,
`categories-metadata.csv` and `languages.csv`. Every problem found is collected and raised together as
one `InputError` naming the file, the record and the field, before anything is written anywhere.
"""

import codecs
import collections
import contextlib
import gc
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path

import polars as pl
from tqdm import tqdm

from ..core import paths
from ..core.errors import Problems
from . import calmqa as vocab
from . import records
from .release import UNREADABLE, open_uncompressed, unreadable

DATASET_FILE = re.compile(r"dataset-(specific|agnostic)-([a-z_]+)\.json(\.gz)?")  # matched whole (`fullmatch`)
# A question's upstream name: its file's key and its number, in ASCII digits (`german:12`, `non_cultural:3`).
QUESTION_NAME = re.compile(r"[a-z_]+:[0-9]+")
LANGUAGE_COLUMNS = (
    "language",
    "iso_code",
    "resource_level",
    "family",
    "branch",
    "morphology",
    "word_order",
    "script",
    "region",
    "speakers",
)
CATEGORY_COLUMNS = ("Category", "Description", "Example", "Example 2", "Example 3")
RATING_COLUMNS = (
    "annotation_id",
    "annotator",
    "answer",
    "model",
    "factuality",
    "language_correct",
    "omissions",
    "overall-rating",
    "rating",
    "type",
    "question",
    "language",
)


def normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


def question_identity(text: str) -> str:
    """What makes two texts of a question the same question: the same characters once composed (NFC: an
    `é` written as `e` and a combining accent is `é`) and their spaces normalised."""
    return normalise_whitespace(unicodedata.normalize("NFC", text))


def question_index(name: str) -> int:
    """The number after the last colon of an upstream question name (`german:12` -> 12)."""
    tail = name.rsplit(":", 1)[-1]
    return int(tail) if records.is_whole_number(tail) and len(tail) <= 18 else -1


# ---------------------------------------------------------------------------------------------- files


def read_text(path: Path, problems: Problems) -> str | None:
    try:
        with open_uncompressed(path) as fh:
            raw = fh.read(records.MAX_FILE_BYTES + 1)  # (a gzip may hold more than its own size)
    except UNREADABLE as exc:
        problems.add(path, None, None, unreadable(exc))
        return None
    if len(raw) > records.MAX_FILE_BYTES:
        problems.add(path, None, None, records.file_too_large())
        return None
    if not raw.strip():
        problems.add(path, None, None, "the file is empty")
        return None
    if raw.startswith(b"\xef\xbb\xbf"):
        problems.add(path, "byte 0", None, "starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        problems.add(
            path, f"line {line} (byte {exc.start})", None, f"is not UTF-8 text ({exc.reason}); save the file as UTF-8"
        )
        return None


def read_json(path: Path, problems: Problems):
    text = read_text(path, problems)
    if text is None:
        return None
    try:
        return records.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(path, f"line {exc.lineno} column {exc.colno}", None, f"invalid JSON: {exc.msg}")
    except ValueError as exc:  # NaN, Infinity, a key twice, too deep, or a number of more digits than Python converts
        problems.add(path, None, None, f"invalid JSON: {records.json_value_problem(exc)}")
    return None


# ------------------------------------------------------------------------------------------- metadata


def read_languages(path: Path, problems: Problems) -> pl.DataFrame:
    rows = []
    for line, r in records.read_rows(path, LANGUAGE_COLUMNS, (), problems):
        if r["resource_level"] not in vocab.RESOURCE_LEVELS:
            problems.add(
                path,
                f"{line} ({r['language']})",
                "resource_level",
                f"is {r['resource_level']!r}; expected one of {', '.join(vocab.RESOURCE_LEVELS)}",
            )
        if not r["language"] or not r["iso_code"]:
            problems.add(path, line, "language", "language and iso_code must not be empty")
        rows.append(r)
    counts = collections.Counter(r["language"] for r in rows)  # (one pass: a scan per row would be quadratic)
    for name in sorted(language for language, n in counts.items() if n > 1):
        problems.add(path, name, "language", "is listed more than once")
    return pl.DataFrame(rows, schema={c: pl.String for c in LANGUAGE_COLUMNS}, orient="row")


def read_categories(path: Path, problems: Problems) -> pl.DataFrame:
    rows = []
    for line, r in records.read_rows(path, CATEGORY_COLUMNS, (), problems):
        if not r["Category"]:
            problems.add(path, line, "Category", "is empty")
        rows.append(
            {
                "category": r["Category"],
                "description": r["Description"],
                "examples": [r[c] for c in ("Example", "Example 2", "Example 3") if r[c]],
            }
        )
    return pl.DataFrame(rows, schema={"category": pl.String, "description": pl.String, "examples": pl.List(pl.String)})


# ------------------------------------------------------------------------------------------- datasets


def _translation_text(translations, language: str, path: Path, record: str, problems: Problems) -> str | None:
    entry = translations.get(language) if isinstance(translations, dict) else None
    field = f"translations.{language}.text"
    if not isinstance(entry, dict) or "text" not in entry:
        problems.add(path, record, field, "missing")
        return None
    return records.text(entry["text"], path, record, field, problems)


def _optional_text(container: dict, key: str, path: Path, record: str, field: str, problems: Problems) -> str | None:
    """A value that is text when it is there (null or absent when not)."""
    return (
        records.text(container.get(key), path, record, field, problems, optional=True)
        if container.get(key) is not None
        else None
    )


@contextlib.contextmanager
def _cyclic_gc_paused():
    """Reading a dataset file makes millions of dicts and strings, none of them in a reference cycle;
    the cyclic collector would run again and again while they pile up, walking the survivors each time
    (a fifth to a quarter of the read time, more for larger files). Reference counting frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_cyclic_gc_paused()
def read_dataset_file(
    path: Path, question_type: str, language: str, problems: Problems, new_models: bool = False
) -> tuple[list, list]:
    """The questions and answers of one dataset file, as lists of dicts, every field checked for its
    JSON type (a problem names the type found).

    With `new_models`, an answer of a model the vocabulary does not know gets the key `model_key(name)`
    (an import of a new model's answers); otherwise it is an error.
    """
    data = read_json(path, problems)
    if data is None:
        return [], []
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        problems.add(path, "top level", "entries", 'expected an object {"entries": [...]}')
        return [], []
    questions, answers = [], []
    for question, its_answers in _entry_records(data["entries"], path, question_type, language, problems, new_models):
        questions.append(question)
        answers.extend(its_answers)
    return questions, answers


def _entry_records(
    entries: Iterable, path: Path, question_type: str, language: str, problems: Problems, new_models: bool = False
) -> Iterator[tuple[dict, list[dict]]]:
    """The record of each valid question of `entries` (a dataset file's, in order) with those of its valid
    answers; every problem is added to `problems`, and an entry with one gives no record."""
    seen_questions, seen_answers = set(), set()
    type_code = next(k for k, v in vocab.QUESTION_TYPE_BY_CODE.items() if v == question_type)
    for index, entry in enumerate(entries):
        question = entry.get("question") if isinstance(entry, dict) else None
        if not isinstance(question, dict) or not isinstance(question.get("name"), str):
            problems.add(path, f"entry {index}", "question.name", "missing; every entry needs a question with a name")
            continue
        name = question["name"]
        record = f"entry {index} ({name!r})" if records.text_problem(name) else f"entry {index} ({name})"
        if records.text(name, path, f"entry {index}", "question.name", problems) is None:
            continue
        if not QUESTION_NAME.fullmatch(name):
            problems.add(
                path,
                record,
                "question.name",
                f"is {name!r}; a question name is a key and a number of ASCII digits, e.g. german:12",
            )
            continue
        if name in seen_questions:
            problems.add(path, record, "question.name", "duplicate question name in this file")
            continue
        seen_questions.add(name)
        found = len(problems.items)
        if question.get("type") != type_code or isinstance(question.get("type"), bool):
            problems.add(
                path,
                record,
                "question.type",
                f"is {records.json_type(question.get('type'))}; a {question_type} file holds type {type_code}",
            )
        translations = question.get("translations")
        text = _translation_text(translations, language, path, record, problems)
        text_en = (
            _translation_text(translations, "English", path, record, problems)
            if isinstance(translations, dict) and "English" in translations
            else None
        )
        if question_type == "specific" and question.get("language") != language:
            problems.add(
                path,
                record,
                "question.language",
                f"is {question.get('language')!r}; a culturally specific question of this file is in {language}",
            )
        if question_type == "specific" and "category" not in question:
            problems.add(path, record, "question.category", "missing; every culturally specific question has one")
        category = _optional_text(question, "category", path, record, "question.category", problems)
        for field in ("source", "collector"):
            records.text(question.get(field), path, record, f"question.{field}", problems)
        if not isinstance(question.get("human_evaluated"), bool):
            problems.add(
                path,
                record,
                "question.human_evaluated",
                f"is {records.json_type(question.get('human_evaluated'))}; expected true or false",
            )
        url = _optional_text(question, "url", path, record, "question.url", problems)
        entry_answers = entry.get("answers", [])
        if not isinstance(entry_answers, list):
            problems.add(
                path, record, "answers", f"is {records.json_type(entry_answers)}; expected a JSON array of answers"
            )
            entry_answers = []
        if len(problems.items) > found:
            continue
        question_record = {
            "name": name,
            "language": language,
            "question_type": question_type,
            "source": question["source"],
            "collector": question["collector"],
            "category": category,
            "text": text,
            "text_en": text_en,
            "upstream_human_evaluated": question["human_evaluated"],
            "url": url,
        }
        accepted = []
        for a_index, answer in enumerate(entry_answers):
            parsed = _read_answer(answer, path, f"{record}, answer {a_index}", problems, new_models)
            if parsed is None:
                continue
            if not parsed["name"].startswith(f"{name}:"):
                problems.add(
                    path,
                    f"{record}, answer {a_index} ({parsed['name']})",
                    "name",
                    f"names another question; an answer to {name} is named {name}:...",
                )
                continue
            if parsed["name"] in seen_answers:
                problems.add(path, f"{record}, answer {a_index} ({parsed['name']})", "name", "duplicate answer name")
                continue
            seen_answers.add(parsed["name"])
            parsed["question_name"] = name
            parsed["question_language"] = language
            accepted.append(parsed)
        yield question_record, accepted


def model_key(name: str) -> str:
    """A canonical key for a model the vocabulary does not know: `My Model 2 (vLLM)` -> `my-model-2-vllm`."""
    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")


def _read_answer(answer, path: Path, record: str, problems: Problems, new_models: bool = False) -> dict | None:
    if not isinstance(answer, dict) or "name" not in answer:
        problems.add(path, record, "name", "missing; every answer needs a name")
        return None
    if records.label(answer["name"], path, record, "name", problems) is None:
        return None
    record = f"{record} ({answer['name']})"
    found = len(problems.items)
    language = answer.get("language")
    if language is None:
        problems.add(path, record, "language", "missing")
        return None
    if records.text(language, path, record, "language", problems) is None:
        return None
    translations = answer.get("translations")
    text = _translation_text(translations, language, path, record, problems)
    text_en = (
        _translation_text(translations, "English", path, record, problems)
        if isinstance(translations, dict) and "English" in translations and language != "English"
        else None
    )
    state = answer.get("prompting_state")
    if not isinstance(state, dict):
        problems.add(path, record, "prompting_state", f"is {records.json_type(state)}; expected a JSON object")
        return None
    release_name = state.get("model_name")
    model_version = _optional_text(state, "model", path, record, "prompting_state.model", problems) or _optional_text(
        state, "model_path", path, record, "prompting_state.model_path", problems
    )
    if release_name in vocab.HUMAN_RELEASE_NAMES:
        model, is_human, is_dot_points = None, True, vocab.HUMAN_RELEASE_NAMES[release_name]
    elif release_name in vocab.MODEL_BY_RELEASE_NAME:
        model, is_human, is_dot_points = vocab.MODEL_BY_RELEASE_NAME[release_name].model, False, False
    elif (
        new_models
        and isinstance(release_name, str)
        and not records.text_problem(release_name)
        and model_key(release_name)
    ):
        model, is_human, is_dot_points = model_key(release_name), False, False
    else:
        known = ", ".join(sorted([*vocab.MODEL_BY_RELEASE_NAME, *vocab.HUMAN_RELEASE_NAMES]))
        problems.add(path, record, "prompting_state.model_name", f"unknown model {release_name!r}; known: {known}")
        return None
    if len(problems.items) > found:
        return None
    return {
        "name": answer["name"],
        "model": model,
        "model_version": model_version,
        "is_human": is_human,
        "is_dot_points": is_dot_points,
        "language": language,
        "text": text,
        "text_en": text_en,
    }


# -------------------------------------------------------------------------------------------- ratings


def read_ratings(
    path: Path, questions: pl.DataFrame, answers: pl.DataFrame, languages: pl.DataFrame, problems: Problems
) -> pl.DataFrame:
    """all_ratings.csv, each row linked to its question by language, type and whitespace-normalised text."""
    language_by_code = dict(zip(languages["iso_code"], languages["language"]))
    language_by_code.update(vocab.RATINGS_LANGUAGE_CODE_OVERRIDES)
    question_by_text: dict[tuple, list[int]] = {}
    for qid, language, qtype, text in questions.select("question_id", "language", "question_type", "text").iter_rows():
        question_by_text.setdefault((language, qtype, normalise_whitespace(text or "")), []).append(qid)
    answer_by_question_model = {
        (qid, model): aid
        for aid, qid, model in answers.filter(~pl.col("is_human"))
        .select("answer_id", "question_id", "model")
        .iter_rows()
    }
    rows: list[dict] = []
    for line, r in records.read_rows(path, RATING_COLUMNS, (), problems):
        record = f"{line} (annotation_id {r['annotation_id']})"
        bad = False

        def fail(field: str, message: str) -> None:
            nonlocal bad
            bad = True
            problems.add(path, record, field, message)  # noqa: B023 - called within this iteration

        language = language_by_code.get(r["language"])
        if language is None:
            fail(
                "language",
                f"unknown language code {r['language']!r}; expected one of {', '.join(sorted(language_by_code))}",
            )
        model = vocab.MODEL_BY_RATINGS_NAME.get(r["model"])
        if model is None:
            fail(
                "model",
                f"unknown model {r['model']!r}; expected one of {', '.join(sorted(vocab.MODEL_BY_RATINGS_NAME))}",
            )
        question_type = vocab.QUESTION_TYPE_BY_RATINGS_CODE.get(r["type"])
        if question_type is None:
            fail("type", f"is {r['type']!r}; expected one of {', '.join(vocab.QUESTION_TYPE_BY_RATINGS_CODE)}")
        if r["rating"] not in {str(v) for v in vocab.RATING_LEVELS}:
            fail("rating", f"is {r['rating']!r}; expected a whole number from 1 to 5")
        for field, levels in (
            ("factuality", vocab.ISSUE_LEVELS),
            ("omissions", vocab.ISSUE_LEVELS),
            ("language_correct", vocab.LANGUAGE_CORRECT_LEVELS),
        ):
            if r[field] not in levels:
                fail(field, f"is {r[field]!r}; expected one of {', '.join(levels)}")
        annotation_id = records.whole_number(r["annotation_id"], path, record, "annotation_id", problems, 2**63 - 1)
        if annotation_id is None:
            bad = True
        if bad:
            continue
        assert model is not None  # an unknown model has failed the record above
        matches = question_by_text.get((language, question_type, normalise_whitespace(r["question"])), [])
        if len(matches) != 1:
            fail(
                "question",
                f"matches {len(matches)} {question_type} {language} questions of the release "
                "once whitespace is normalised; expected exactly one",
            )
            continue
        question_id = matches[0]
        rows.append(
            {
                # annotation_id repeats across the annotation tool's projects, so the row number is the key.
                "rating_id": len(rows) + 1,
                "annotation_id": annotation_id,
                "question_id": question_id,
                "answer_id": answer_by_question_model.get((question_id, model.model)),
                "annotator": r["annotator"],
                "language": language,
                "question_type": question_type,
                "model": model.model,
                "rating": int(r["rating"]),
                "factuality": r["factuality"],
                "omissions": r["omissions"],
                "language_correct": r["language_correct"],
                "answer_text": r["answer"],
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "rating_id": pl.Int64,
            "annotation_id": pl.Int64,
            "question_id": pl.Int64,
            "answer_id": pl.Int64,
            "annotator": pl.String,
            "language": pl.String,
            "question_type": pl.String,
            "model": pl.String,
            "rating": pl.Int8,
            "factuality": pl.String,
            "omissions": pl.String,
            "language_correct": pl.String,
            "answer_text": pl.String,
        },
    )


# ---------------------------------------------------------------------------------------------- build

QUESTION_SCHEMA = {
    "name": pl.String,
    "language": pl.String,
    "question_type": pl.String,
    "source": pl.String,
    "collector": pl.String,
    "category": pl.String,
    "text": pl.String,
    "text_en": pl.String,
    "upstream_human_evaluated": pl.Boolean,
    "url": pl.String,
}
ANSWER_SCHEMA = {
    "name": pl.String,
    "model": pl.String,
    "model_version": pl.String,
    "is_human": pl.Boolean,
    "is_dot_points": pl.Boolean,
    "language": pl.String,
    "text": pl.String,
    "text_en": pl.String,
    "question_name": pl.String,
    "question_language": pl.String,
}


def dataset_files(folder: Path, problems: Problems) -> list[tuple[Path, str, str]]:
    """(path, question type, language file key) of every dataset file, in a fixed order."""
    datasets = folder / "datasets"
    if not datasets.is_dir():
        problems.add(
            datasets, None, None, "missing: a release folder has a datasets/ folder of dataset-*.json[.gz] files"
        )
        return []
    found = []
    for path in sorted(datasets.iterdir()):
        match = DATASET_FILE.fullmatch(path.name)
        if match:
            found.append((path, match.group(1), match.group(2)))
        elif path.name.startswith("dataset-"):
            problems.add(
                path, None, None, "name not understood: expected dataset-{specific|agnostic}-LANGUAGE.json[.gz]"
            )
    keys = collections.Counter((t, k) for _, t, k in found)
    for path, t, k in found:
        if keys[t, k] > 1:
            problems.add(path, None, None, f"the {t} {k} file is there twice (as .json and .json.gz?)")
    if not found:
        problems.add(datasets, None, None, "holds no dataset-*.json[.gz] file")
    return found


def read_metadata(folder: Path, problems: Problems) -> tuple[pl.DataFrame, pl.DataFrame]:
    """languages.csv and categories-metadata.csv of a release folder; raises if anything is missing or wrong."""
    for name in ("languages.csv", "categories-metadata.csv", "all_ratings.csv"):
        if not (folder / name).is_file():
            problems.add(folder / name, None, None, "missing from the release folder")
    problems.raise_if_any()
    languages = read_languages(folder / "languages.csv", problems)
    languages = with_language_identification(languages, paths.LANGUAGE_IDENTIFICATION_CSV, problems)
    categories = read_categories(folder / "categories-metadata.csv", problems)
    problems.raise_if_any()
    return languages, categories


LANGUAGE_IDENTIFICATION_COLUMNS = ("language", "detector", "franc_code")


def with_language_identification(languages: pl.DataFrame, path: Path, problems: Problems) -> pl.DataFrame:
    """`languages` (rows of languages.csv) with each language's `detector` (`vocab.DETECTORS`: where the
    paper's pipeline sends its texts first) and `franc_code` (franc's ISO 639-3 code of it; NULL where
    franc has none), from `path` (data/calmqa-language-identification.csv): every language needs a row."""
    rows = {}
    for line, r in records.read_rows(path, LANGUAGE_IDENTIFICATION_COLUMNS, (), problems):
        if r["detector"] not in vocab.DETECTORS:
            problems.add(
                path,
                f"{line} ({r['language']})",
                "detector",
                f"is {r['detector']!r}; expected one of {', '.join(vocab.DETECTORS)}",
            )
        if r["language"] in rows:
            problems.add(path, f"{line} ({r['language']})", "language", "is listed more than once")
        rows[r["language"]] = {**r, "franc_code": r["franc_code"] or None}
    for name in languages["language"]:
        if name not in rows and path.is_file():
            problems.add(path, None, "language", f"{name!r} of languages.csv has no row: give its detector")
    routes = pl.DataFrame(
        list(rows.values()), schema={c: pl.String for c in LANGUAGE_IDENTIFICATION_COLUMNS}, orient="row"
    )
    return languages.join(routes, on="language", how="left", maintain_order="left")


def read_datasets(
    folder: Path, languages: pl.DataFrame, problems: Problems, progress: bool | None = None, in_id_order: bool = False
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(questions, answers) of each dataset file in turn, so that a large release is never in memory whole.

    The files come in the order of their names (the order of language_id_all's training texts), or with
    `in_id_order` in the order of the database's question ids: by language, culturally specific before
    agnostic (the database build stores each file as it comes). Questions carry `name_index` (the
    number of their name) for ordering; answers carry the name and language of their question; both
    carry the name of their `dataset_file`. Keys and cross-file rules are the database build's job.
    """
    language_by_key = {name.lower(): name for name in languages["language"]}
    files = []
    for path, question_type, key in dataset_files(folder, problems):
        if key in language_by_key:
            files.append((path, question_type, language_by_key[key]))
        else:
            problems.add(path, None, None, f"unknown language {key!r}: not in languages.csv")
    if in_id_order:
        files.sort(key=lambda file: (file[2], file[1] != "specific"))
    for path, question_type, language in tqdm(
        files, desc="read datasets", unit="file", disable=None if progress else True
    ):
        yield read_dataset_frames(path, question_type, language, problems)


# A dataset file is parsed from a window of this many bytes of it at a time (more while one entry is
# longer), and its records become frames every `FRAME_ANSWERS` answers: the largest file of the release
# at 50x (Hindi, 165 MB) read whole took 600 MB besides the frames (its bytes, its text, the decoder's
# buffers, then the text and every parsed object at once).
WINDOW_BYTES = 1 << 22
FRAME_ANSWERS = 10_000
_JSON_TOKEN = re.compile(r"[^ \t\n\r]")  # the first character after JSON's white space


class _NotStreamable(Exception):
    """The file is not plain `{"entries": [...]}` in UTF-8 and JSON within the size limit: it is read
    whole instead (`read_dataset_file`), which names its problem exactly."""


class _EntryStream:
    """The entries of a dataset file `{"entries": [...]}`, parsed one at a time from a window of its text
    that moves along the file: never the whole file's text nor its parsed objects at once. Anything else
    than that plain shape, valid, raises `_NotStreamable`. A value cut by the window's end fails to parse
    and is parsed again from a window twice as long, so every character is parsed a bounded number of
    times; a number so cut parses short, but the next character is then no separator, and the file is
    read whole."""

    def __init__(self, handle) -> None:
        self.handle, self.utf8 = handle, codecs.getincrementaldecoder("utf-8")()
        self.decoder = json.JSONDecoder(parse_constant=records.refuse_constant, object_pairs_hook=records.unique_keys)
        self.text, self.at, self.bytes_read, self.ended = "", 0, 0, False

    def _more(self) -> bool:
        """Extend the window past its end (dropping what was parsed): False at the end of the file."""
        if self.ended:
            return False
        try:
            raw = self.handle.read(max(WINDOW_BYTES, 2 * (len(self.text) - self.at)))
            part = self.utf8.decode(raw, final=not raw)
        except (*UNREADABLE, UnicodeDecodeError):
            raise _NotStreamable from None
        self.bytes_read += len(raw)
        if self.bytes_read > records.MAX_FILE_BYTES:
            raise _NotStreamable
        self.ended = not raw
        self.text, self.at = self.text[self.at :] + part, 0
        return True

    def _space(self) -> None:
        """Move past JSON's white space, reading on while the window ends in it."""
        while True:
            token = _JSON_TOKEN.search(self.text, self.at)
            self.at = token.start() if token else len(self.text)
            if token or not self._more():
                return

    def _expect(self, literal: str) -> None:
        self._space()
        while len(self.text) - self.at < len(literal) and self._more():
            pass
        if not self.text.startswith(literal, self.at):
            raise _NotStreamable
        self.at += len(literal)

    def _next_is(self, literal: str) -> bool:
        self._space()
        return self.text.startswith(literal, self.at)

    def _value(self):
        while True:
            try:
                value, self.at = self.decoder.raw_decode(self.text, self.at)
                return value
            except (ValueError, RecursionError):
                if not self._more():
                    raise _NotStreamable from None

    def __iter__(self) -> Iterator:
        self._expect("{")
        self._expect('"entries"')
        self._expect(":")
        self._expect("[")
        if not self._next_is("]"):
            while True:
                self._space()
                yield self._value()
                if not self._next_is(","):
                    break
                self._expect(",")
        self._expect("]")
        self._expect("}")
        self._space()
        if self.at < len(self.text):
            raise _NotStreamable


def read_dataset_frames(
    path: Path, question_type: str, language: str, problems: Problems
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The questions and answers of one dataset file as frames (`read_dataset_file`'s records, with the
    name of the file), in bounded memory: its entries parsed one at a time (`_EntryStream`), their records
    made frames every `FRAME_ANSWERS` answers. A file that is not plain `{"entries": [...]}` JSON is
    read whole by `read_dataset_file`, which names its problem; the records and problems are the same."""
    found = Problems()
    parts = _streamed_frames(path, question_type, language, found)
    if parts is None:
        # Read whole once the stream and all it read are let go.
        return _frames(*read_dataset_file(path, question_type, language, problems), dataset_file=path.name)
    problems.items.extend(found.items)
    return pl.concat([q for q, _ in parts]), pl.concat([a for _, a in parts])


def _streamed_frames(
    path: Path, question_type: str, language: str, problems: Problems
) -> list[tuple[pl.DataFrame, pl.DataFrame]] | None:
    """`read_dataset_frames`'s frames of the file parsed an entry at a time, a part every `FRAME_ANSWERS`
    answers; None when it is not plain `{"entries": [...]}` JSON."""
    questions: list[dict] = []
    answers: list[dict] = []
    parts: list[tuple[pl.DataFrame, pl.DataFrame]] = []
    try:
        with _cyclic_gc_paused(), open_uncompressed(path) as handle:
            for question, its_answers in _entry_records(_EntryStream(handle), path, question_type, language, problems):
                questions.append(question)
                answers.extend(its_answers)
                if len(answers) >= FRAME_ANSWERS:
                    parts.append(_frames(questions, answers, path.name))
                    questions, answers = [], []
    except (_NotStreamable, *UNREADABLE):
        return None
    parts.append(_frames(questions, answers, path.name))
    return parts


def _frames(questions: list[dict], answers: list[dict], dataset_file: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return (
        pl.DataFrame(questions, schema=QUESTION_SCHEMA).with_columns(
            name_index=pl.col("name").map_elements(question_index, return_dtype=pl.Int64),
            dataset_file=pl.lit(dataset_file),
        ),
        pl.DataFrame(answers, schema=ANSWER_SCHEMA).with_columns(dataset_file=pl.lit(dataset_file)),
    )


def model_table() -> pl.DataFrame:
    """The vocabulary's models in the paper's order (without versions, which come from the answers)."""
    return pl.DataFrame(
        [
            {
                "model": m.model,
                "display_name": m.display_name,
                "provider": m.provider,
                "weights": m.weights,
                "release_name": m.release_name,
                "position": position,
            }
            for position, m in enumerate(vocab.MODELS, start=1)
        ],
        schema_overrides={"position": pl.Int32},
    )
