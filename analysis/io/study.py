"""A study folder (docs/studies.md): `study.toml` and the tables `languages`, `questions`, `answers`,
`ratings` and `metrics`, each a CSV, JSONL or Parquet file chosen by its extension. `read` reads and
validates all of it, collecting every problem (file, row, field) before it raises one `InputError`;
it writes nothing, and the folder is only read.

A language is one per standardized BCP 47 tag: `languages.csv` names it, and a language the files name
but `languages.csv` does not list is resolved from its exact name or code by `langcodes` (with its
`language-data`), never by a table of the suite's (`io.languages`).
"""

from __future__ import annotations

import collections
import math
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..core.errors import Problems
from . import criterion_kinds, records
from .imports import display_name_problem, identity_key, model_key_problem
from .languages import StudyLanguages, iso_code, same_name
from .languages import resolve as resolve_language

STUDY_FILE = "study.toml"
FORMATS = (".csv", ".jsonl", ".parquet")
KEY = re.compile(r"[a-z0-9][a-z0-9_-]*")  # matched whole (`records.is_key`)
TOP_KEYS = ("name", "title", "citation", "description", "criteria", "metrics", "language_id")
# `[language_id] engine`: which engine judges the answers' language (docs/studies.md): the routing the
# short-text evaluation chose per language and length, one engine for every language, or none.
LANGUAGE_ID_ENGINES = ("auto", "ngram", "lingua", "none")
# The longest title (a line), citation and description (free text, on lines) study.toml may give, in characters.
TEXT_LIMITS = {"title": 200, "citation": 2_000, "description": 10_000}
# study.toml is read whole: this large at most (two million levels of a criterion take 16 MB).
MAX_STUDY_FILE_BYTES = 1 << 24
# A criterion has this many levels at most: a rating scale (0 to 100 is 101), each level drawn and tabled.
MAX_LEVELS = 1_000
# The columns whose values are the text of a question (any characters, `records.MAX_FIELD` of them); every
# other text column holds labels (`records.label`).
CONTENT_COLUMNS = ("question", "question_english", "answer")
# Parquet rows are decoded this many at a time, so that no more than this many fields of `records.MAX_FIELD`
# characters are held before the decoded size is checked.
PARQUET_BATCH_ROWS = 256
# Each table: its required and its optional columns.
TABLES = {
    "languages": (("language", "code"), ("resource_level", "script")),
    "questions": (
        ("question_id", "language", "question"),
        ("question_english", "question_type", "category", "collection"),
    ),
    "answers": (("question_id", "model", "answer"), ("display_name", "model_version", "answer_language")),
    "ratings": (("question_id", "model", "annotator", "criterion", "rating"), ()),
    "metrics": (("question_id", "model", "metric", "value"), ()),
}
REQUIRED_TABLES = ("questions", "answers")


@dataclass(frozen=True)
class Criterion:
    name: str
    levels: tuple[str, ...]  # worst first, as text
    kind: str  # `io.criterion_kinds`


@dataclass(frozen=True)
class MetricDefinition:
    name: str
    higher_is_better: bool
    low: float | None
    high: float | None


@dataclass
class StudyFolder:
    """A validated study folder: what `study.toml` declares and the rows of its tables as frames."""

    folder: Path
    name: str
    title: str
    citation: str | None
    description: str | None
    criteria: list[Criterion]
    metrics: list[MetricDefinition]
    languages: pl.DataFrame  # language, iso_code, resource_level, script
    questions: pl.DataFrame  # question_key, language, text, text_en, question_type, category, collection
    answers: pl.DataFrame  # question_key, model, text, model_version, answer_language (ISO code or null)
    models: pl.DataFrame  # model, display_name, version, position
    ratings: pl.DataFrame  # question_key, model, annotator, criterion, level
    metric_values: pl.DataFrame  # question_key, model, metric, value
    # `[language_id] engine` of study.toml; the answers' `answer_language` is their researcher's verdict.
    language_id_engine: str = "auto"


def is_study(folder: Path | str) -> bool:
    """A study folder (rather than the CaLMQA release): it has a study.toml or a questions table (of
    any kind: a FIFO or a folder is one the study's reader refuses)."""
    folder = Path(folder)
    return (folder / STUDY_FILE).exists() or any((folder / f"questions{s}").exists() for s in FORMATS)


def source_paths(folder: Path | str) -> list[Path]:
    """The files of the study folder that `read` reads: study.toml and each table's file, in every format
    present (`read` refuses a table given twice)."""
    folder = Path(folder)
    candidates = [folder / STUDY_FILE, *(folder / f"{table}{suffix}" for table in TABLES for suffix in FORMATS)]
    return [path for path in candidates if path.is_file()]


def table_file(folder: Path, table: str, problems: Problems) -> Path | None:
    """The file of `table` in `folder` (`table.csv`, `.jsonl` or `.parquet`), or None when there is none;
    two of them is a problem, and so is one that is not a regular file (a FIFO, a device, a folder: never
    taken for an absent table)."""
    found = [folder / f"{table}{suffix}" for suffix in FORMATS if (folder / f"{table}{suffix}").exists()]
    for path in found:
        problem = records.file_problem(path, f"the {table} table as a regular file")
        if problem is not None:
            problems.add_partly_read(path, None, None, problem)
            return None
    if len(found) > 1:
        problems.add(folder / table, None, None, f"given twice ({', '.join(p.name for p in found)}): keep one")
        return None
    if not found and table in REQUIRED_TABLES:
        problems.add(
            folder / f"{table}.csv", None, None, f"missing: a study has a {table} table (.csv, .jsonl or .parquet)"
        )
    return found[0] if found else None


def rows(path: Path, table: str, problems: Problems) -> Iterator[tuple[str, dict]]:
    """(record label, row) of a table's file; extra columns are kept in the file and ignored."""
    required, _ = TABLES[table]
    if path.suffix == ".parquet":
        yield from _parquet_rows(path, required, problems)
    else:
        yield from records.read_rows(path, required, None, problems)


def _parquet_rows(path: Path, required: tuple[str, ...], problems: Problems) -> Iterator[tuple[str, dict]]:
    """The rows of a Parquet file, decoded `PARQUET_BATCH_ROWS` at a time, within the limits of a CSV file
    (`records.read_rows`) on what it holds once decoded, not only on its size: at most `records.MAX_ROWS`
    rows (its metadata says how many, checked before any is read) and `records.MAX_FILE_BYTES` bytes of
    decoded data (a small file of repeated or dictionary-encoded values can decode to gigabytes)."""
    import pyarrow.parquet as pq

    size = path.stat().st_size
    if size > records.MAX_FILE_BYTES:
        problems.add_partly_read(path, None, None, records.file_too_large(size))
        return
    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds for a damaged or foreign file
        problems.add_partly_read(path, None, None, f"cannot be read as Parquet: {exc}")
        return
    with parquet:
        if parquet.metadata.num_rows > records.MAX_ROWS:
            problems.add_partly_read(path, None, None, records.too_many_rows())
            return
        if not records.check_columns(path, parquet.schema_arrow.names, required, None, problems, "the schema"):
            return
        number, decoded = 0, 0
        try:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, use_threads=False):
                decoded += batch.nbytes
                if decoded > records.MAX_FILE_BYTES:
                    problems.add_partly_read(path, f"row {number + 1}", None, records.expands_too_far(size))
                    return
                for row in batch.to_pylist():
                    number += 1
                    yield f"row {number}", row
        except Exception as exc:  # noqa: BLE001 - as above, for a file damaged after its metadata
            problems.add_partly_read(path, f"row {number + 1}", None, f"cannot be read as Parquet: {exc}")


# ------------------------------------------------------------------------------------------ values


def _text(row: dict, column: str, path: Path, record: str, problems: Problems, required: bool = True) -> str | None:
    """A text value (a JSON number is taken as written, e.g. an id 7): a label (`records.label`) unless
    `column` holds a question's text (`CONTENT_COLUMNS`) or a model key (which `model_key_problem` checks);
    an empty required value is a problem."""
    value = row.get(column)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None or value == "":
        if required:
            problems.add(path, record, column, "is empty")
        return None
    read = records.text if column in CONTENT_COLUMNS or column == "model" else records.label
    text = read(value, path, record, column, problems)
    if text is not None and required and not text.strip():
        problems.add(path, record, column, "is empty")
        return None
    return text


def _listed(values, limit: int = 10) -> str:
    """Values for a message, the first `limit` of them when there are more."""
    values = list(values)
    shown = ", ".join(map(str, values[:limit]))
    return shown if len(values) <= limit else f"{shown}, ... ({len(values):,} in all)"


def _within(value: float, low: float, high: float) -> bool:
    """Whether `value` lies in [low, high], a bound missed by floating-point rounding only counting as met:
    a metric computed in floating point gives 100.00000000000004 for a perfect BLEU of range [0, 100]."""
    return low <= value <= high or any(math.isclose(value, bound, rel_tol=1e-9, abs_tol=1e-12) for bound in (low, high))


def _non_finite(value) -> bool:
    """Whether `value` is a number that is infinite or NaN (`inf`, `-Infinity`, `1e999`, `nan`, a JSON
    `NaN`), which a metric value cannot be: no mean, interval or chart holds it."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return False
    return isinstance(value, float) and not math.isfinite(value)


# ------------------------------------------------------------------------------------------ study.toml


def read_declaration(folder: Path, problems: Problems) -> dict | None:
    """study.toml, checked: name, title, citation, description, the criteria and the metrics."""
    path = folder / STUDY_FILE
    if not path.exists():
        problems.add(path, None, None, "missing: a study folder has a study.toml with its name and title")
        return None
    problem = records.file_problem(path, "study.toml, a text file")
    size = path.stat().st_size if problem is None else 0
    if problem is None and size > MAX_STUDY_FILE_BYTES:
        problem = f"is {size:,} bytes; a study.toml has at most {MAX_STUDY_FILE_BYTES:,} (it is read whole)"
    if problem is not None:
        problems.add(path, None, None, problem)
        return None
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        problems.add(path, "byte 0", None, records.BOM_PROBLEM)
        return None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        problems.add(path, None, None, f"is not UTF-8 text ({exc.reason}); save the file as UTF-8")
        return None
    except tomllib.TOMLDecodeError as exc:
        problems.add(path, None, None, f"is not valid TOML: {exc}")
        return None
    for key in data:
        if key not in TOP_KEYS:
            problems.add(path, None, key, f"unknown key; expected {', '.join(TOP_KEYS)}")
    name = data.get("name")
    if not records.is_key(name, KEY):
        problems.add(
            path,
            None,
            "name",
            f"is {name!r}; the study's name is a key: lower-case letters, digits, '-' and '_', e.g. my-study",
        )
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        problems.add(path, None, "title", f"is {title!r}; expected the study's title, a line of text")
    elif problem := records.label_problem(title, "the title", TEXT_LIMITS["title"]):
        problems.add(path, None, "title", problem)
    for key in ("citation", "description"):
        if key in data and not isinstance(data[key], str):
            problems.add(path, None, key, f"is {data[key]!r}; expected text")
        elif key in data and (problem := records.free_text_problem(data[key], f"the {key}", TEXT_LIMITS[key])):
            problems.add(path, None, key, problem)
    counts = [len(problems.items)]
    criteria = _criteria(path, data.get("criteria", {}), problems)
    counts.append(len(problems.items))
    metrics = _metrics(path, data.get("metrics", {}), problems)
    counts.append(len(problems.items))
    engine = _language_id_engine(path, data.get("language_id", {}), problems)
    declared = {
        kind: (set(data[kind]) if isinstance(data.get(kind), dict) else set()) if after == before else None
        for kind, before, after in zip(("criteria", "metrics"), counts, counts[1:])
    }
    # `declared`: every name study.toml gives, or None when a definition of the kind has a problem: the names
    # the rows may give are then not known for sure, and a row naming another is not reported.
    return {**data, "criteria": criteria, "metrics": metrics, "declared": declared, "language_id_engine": engine}


def _language_id_engine(path: Path, table, problems: Problems) -> str:
    """`[language_id] engine`: one of `LANGUAGE_ID_ENGINES` (default `auto`)."""
    if not isinstance(table, dict):
        problems.add(path, None, "language_id", 'expected a [language_id] table, e.g. engine = "auto"')
        return "auto"
    for key in table:
        if key != "engine":
            problems.add(path, "[language_id]", key, "unknown key; [language_id] has `engine`")
    engine = table.get("engine", "auto")
    if engine not in LANGUAGE_ID_ENGINES:
        problems.add(
            path,
            "[language_id]",
            "engine",
            f"is {engine!r}; expected one of {', '.join(map(repr, LANGUAGE_ID_ENGINES))}",
        )
        return "auto"
    return engine


def _criteria(path: Path, table, problems: Problems) -> list[Criterion]:
    if not isinstance(table, dict):
        problems.add(path, None, "criteria", "expected one [criteria.NAME] table per criterion")
        return []
    found = []
    for name, spec in table.items():
        where = f"[criteria.{name!r}]" if records.label_problem(name) else f"[criteria.{name}]"
        if not records.is_key(name, KEY):
            problems.add(path, where, None, "a criterion's name is a key: lower-case letters, digits, '-' and '_'")
        if not isinstance(spec, dict) or "levels" not in spec:
            problems.add(path, where, "levels", "missing: the criterion's levels, worst first, e.g. [1, 2, 3, 4, 5]")
            continue
        for key in spec:
            if key != "levels":
                problems.add(path, where, key, "unknown key; a criterion has `levels`")
        levels = spec["levels"]
        if not isinstance(levels, list) or len(levels) < 2:
            problems.add(
                path, where, "levels", f"is {records.shown(levels)}; a criterion has at least two levels, worst first"
            )
            continue
        if len(levels) > MAX_LEVELS:
            problems.add(
                path,
                where,
                "levels",
                f"has {len(levels):,} levels; a criterion has at most {MAX_LEVELS:,} (its charts and tables show "
                "each level: a measure of more is a metric, `[metrics.NAME]`)",
            )
            continue
        kind = criterion_kinds.kind_of(levels)
        words = [text for v in levels if (text := kind.text(v)) is not None] if kind is not None else []
        if kind is None or len(words) < len(levels):
            each = " or ".join(k.level for k in criterion_kinds.CRITERION_KINDS)
            problems.add(path, where, "levels", f"is {records.shown(levels)}; each level is {each}")
            continue
        unseen = next(((w, p) for w in words if (p := records.label_problem(w, "a level"))), None)
        if unseen is not None:
            problems.add(path, where, "levels", f"the level {records.shown(unseen[0])} {unseen[1]}")
            continue
        twice = sorted(
            t for t, n in collections.Counter(words).items() if n > 1
        )  # (one pass: `count` per level is quadratic)
        if twice:
            problems.add(path, where, "levels", f"the level(s) {_listed(map(repr, twice))} appear twice")
            continue
        found.append(Criterion(name, tuple(words), kind.name))
    return found


def _metrics(path: Path, table, problems: Problems) -> list[MetricDefinition]:
    if not isinstance(table, dict):
        problems.add(path, None, "metrics", "expected one [metrics.NAME] table per metric")
        return []
    found = []
    for name, spec in table.items():
        where = f"[metrics.{name!r}]" if records.label_problem(name) else f"[metrics.{name}]"
        if not records.is_key(name, KEY):
            problems.add(path, where, None, "a metric's name is a key: lower-case letters, digits, '-' and '_'")
        if not isinstance(spec, dict):
            problems.add(path, where, None, "expected `higher_is_better` and an optional `range`")
            continue
        for key in spec:
            if key not in ("higher_is_better", "range"):
                problems.add(path, where, key, "unknown key; a metric has `higher_is_better` and `range`")
        better = spec.get("higher_is_better")
        if not isinstance(better, bool):
            problems.add(path, where, "higher_is_better", f"is {better!r}; expected true or false")
            continue
        low = high = None
        if "range" in spec:
            bounds = spec["range"]
            numbers = (
                [records.decimal(v) if not isinstance(v, str) else None for v in bounds]
                if isinstance(bounds, list)
                else []
            )
            given = [n for n in numbers if n is not None]
            if len(numbers) != 2 or len(given) < 2 or given[0] >= given[1]:
                problems.add(path, where, "range", f"is {bounds!r}; expected [low, high], two numbers, low < high")
                continue
            low, high = given
        found.append(MetricDefinition(name, better, low, high))
    return found


# ------------------------------------------------------------------------------------------ languages


def read_languages(path: Path | None, problems: Problems) -> StudyLanguages:
    """languages.csv: the study's name of each language it lists, by its code (`io.languages`)."""
    found = StudyLanguages()
    if path is None:
        return found
    for record, row in rows(path, "languages", problems):
        n = len(problems.items)
        name = _text(row, "language", path, record, problems)
        code = _text(row, "code", path, record, problems)
        level = _text(row, "resource_level", path, record, problems, required=False)
        script = _text(row, "script", path, record, problems, required=False)
        if len(problems.items) > n:
            continue
        assert name is not None and code is not None  # `_text` gives None for a required value only with a problem
        found.add_listed(path, record, name, code, level, script, problems)
    return found


# ------------------------------------------------------------------------------------------ the tables


def read(folder: Path | str) -> StudyFolder:
    """Read and validate the study folder; raise `InputError` with every problem found."""
    folder = Path(folder)
    problems = Problems()
    if not folder.is_dir():
        problems.add(folder, None, None, "no such folder: a study is a folder with study.toml, questions and answers")
        problems.raise_if_any()
    declared = read_declaration(folder, problems)
    paths = {table: table_file(folder, table, problems) for table in TABLES}
    if any(paths[table] is None for table in REQUIRED_TABLES):
        problems.raise_if_any()  # every other table refers to the questions and answers
    languages = read_languages(paths["languages"], problems)
    # A row with a problem still names its key: what refers to it is not reported a second time. A table
    # some of whose rows are unknown (its header, or a line, could not be read) is not checked against
    # (`Problems.read_whole`), nor is study.toml's when it cannot be read: the first problem is the one to fix.
    listed = problems.read_whole(paths["languages"]) if paths["languages"] else True
    questions, question_keys = _questions(paths["questions"], languages, listed, problems)
    answers, models, answer_keys = _answers(
        paths["answers"], question_keys, problems.read_whole(paths["questions"]), problems
    )
    answers = _answer_languages(paths["answers"], answers, languages, problems)
    criteria = declared["criteria"] if declared else []
    metrics = declared["metrics"] if declared else []
    names = declared["declared"] if declared else {"criteria": None, "metrics": None}
    answered = problems.read_whole(paths["answers"])
    ratings = _ratings(paths["ratings"], answer_keys, answered, criteria, names["criteria"], problems)
    metric_values = _metric_values(paths["metrics"], answer_keys, answered, metrics, names["metrics"], problems)
    problems.raise_if_any()
    assert declared is not None  # a study.toml that cannot be read is a problem, raised above
    return StudyFolder(
        folder=folder,
        name=declared["name"],
        title=declared["title"].strip(),
        citation=declared.get("citation"),
        description=declared.get("description"),
        criteria=criteria,
        metrics=metrics,
        languages=pl.DataFrame(
            languages.rows(),
            schema={"language": pl.String, "iso_code": pl.String, "resource_level": pl.String, "script": pl.String},
        ),
        questions=questions,
        answers=answers,
        models=models,
        ratings=ratings,
        metric_values=metric_values,
        language_id_engine=declared["language_id_engine"],
    )


def _questions(
    path: Path | None, languages: StudyLanguages, listed: bool, problems: Problems
) -> tuple[pl.DataFrame, set[str]]:
    """The questions, each in the language its `language` names (`StudyLanguages.name_of`: the languages
    it names that languages.csv does not list are added there), and every question key named. A language
    that names none is a problem when languages.csv was read whole (`listed`): else it may be one of the
    rows that could not be read."""
    schema = {
        "question_key": pl.String,
        "language": pl.String,
        "text": pl.String,
        "text_en": pl.String,
        "question_type": pl.String,
        "category": pl.String,
        "collection": pl.String,
    }
    named: set[str] = set()
    if path is None:
        return pl.DataFrame(schema=schema), named
    found: list[dict] = []
    first: dict[str, str] = {}  # question key -> its first record
    for record, row in rows(path, "questions", problems):
        n = len(problems.items)
        key = _text(row, "question_id", path, record, problems)
        if key is not None:
            named.add(key)
        else:
            problems.partly_read(path)  # a question nobody can name: what names it is not reported
        language = _text(row, "language", path, record, problems)
        text = _text(row, "question", path, record, problems)
        text_en, kind, category, collection = (
            _text(row, column, path, record, problems, required=False)
            for column in ("question_english", "question_type", "category", "collection")
        )
        if len(problems.items) > n:
            continue
        assert key is not None and language is not None  # `_text`: None for a required value only with a problem
        if key in first:
            problems.add(path, record, "question_id", f"{key!r} is there twice (first on {first[key]})")
            continue
        first[key] = record
        language = languages.name_of(language, path, record, problems if listed else Problems())
        if language is None:
            continue  # (a problem said once, on the first row that names it)
        found.append(
            {
                "question_key": key,
                "language": language,
                "text": text,
                "text_en": text_en,
                "question_type": kind,
                "category": category,
                "collection": collection,
            }
        )
    return pl.DataFrame(found, schema=schema), named


def _answers(
    path: Path | None, known: set[str], all_known: bool, problems: Problems
) -> tuple[pl.DataFrame, pl.DataFrame, set[tuple[str, str]]]:
    """The answers to the questions `known`, the models in the order they first appear, and every
    (question, model) named; an answer to another question is a problem when `known` is every question
    (`all_known`: the questions table was read whole)."""
    schema = {
        "question_key": pl.String,
        "model": pl.String,
        "text": pl.String,
        "model_version": pl.String,
        "answer_language": pl.String,
        "record": pl.String,
    }
    model_schema = {"model": pl.String, "display_name": pl.String, "version": pl.String, "position": pl.Int32}
    named: set[tuple[str, str]] = set()
    if path is None:
        return pl.DataFrame(schema=schema), pl.DataFrame(schema=model_schema), named
    found: list[dict] = []
    first: dict[tuple[str, str], str] = {}  # (question key, model) -> its first record
    display: dict[str, tuple[str, str]] = {}  # model -> (display name, record)
    versions: dict[str, set[str]] = {}
    order: list[str] = []
    for record, row in rows(path, "answers", problems):
        n = len(problems.items)
        key = _text(row, "question_id", path, record, problems)
        model = _text(row, "model", path, record, problems)
        if key is not None and model is not None and model_key_problem(model) is None:
            named.add((key, model))
        else:
            problems.partly_read(path)  # an answer nobody can name: what names it is not reported
        answer = row.get("answer")
        text = "" if answer is None else records.text(answer, path, record, "answer", problems)
        name = _text(row, "display_name", path, record, problems, required=False)
        version = _text(row, "model_version", path, record, problems, required=False)
        said_language = _text(row, "answer_language", path, record, problems, required=False)
        if len(problems.items) > n:
            continue
        assert key is not None and model is not None  # `_text`: None for a required value only with a problem
        ok = True
        if key not in known:
            if all_known:
                problems.add(path, record, "question_id", f"no question {key!r} in the questions table")
            ok = False
        for column, problem in (
            ("model", model_key_problem(model)),
            ("display_name", display_name_problem(name) if name is not None else None),
        ):
            if problem:
                problems.add(path, record, column, problem)
                ok = False
        if not ok:
            continue
        if (key, model) in first:
            problems.add(
                path,
                record,
                "model",
                f"a second answer of {model} to question {key!r} (the first is on {first[key, model]})",
            )
            continue
        first[key, model] = record
        if model not in versions:
            order.append(model)
            versions[model] = set()
        if version:
            versions[model].add(version)
        if name is not None:
            given = display.setdefault(model, (name, record))
            if given[0] != name:
                problems.add(path, record, "display_name", f"is {name!r}, but {given[1]} names {model} {given[0]!r}")
        found.append(
            {
                "question_key": key,
                "model": model,
                "text": text,
                "model_version": version,
                "answer_language": said_language.strip() if said_language and said_language.strip() else None,
                "record": record,
            }
        )
    owners: dict[str, str] = {}
    for model in order:
        shown = display.get(model, (model, None))[0]
        other = owners.setdefault(identity_key(shown), model)
        if other != model:
            problems.add(
                path,
                display.get(model, (None, None))[1] or "the models",
                "display_name",
                f"{model} and {other} would both be shown as {shown!r}: give one of them another display name",
            )
    models = pl.DataFrame(
        [
            {
                "model": model,
                "display_name": display.get(model, (model, None))[0],
                "version": ", ".join(sorted(versions[model])) or None,
                "position": position,
            }
            for position, model in enumerate(order, start=1)
        ],
        schema=model_schema,
    )
    return pl.DataFrame(found, schema=schema), models, named


def _answer_languages(
    path: Path | None, answers: pl.DataFrame, languages: StudyLanguages, problems: Problems
) -> pl.DataFrame:
    """The answers with `answer_language`, the researcher's verdict of each answer's language, as the ISO
    639 code of its language (`languages.iso_code`): a language of the study by its name or code, or any
    language by its exact name or code (`languages.resolve`, as the questions' languages are resolved);
    empty where not given. The record column is dropped."""
    study_names = {same_name(language.name): language.tag for language in languages.by_tag.values()}
    codes: dict[str, str | None] = {}
    resolved: list[str | None] = []
    for value, record in zip(answers["answer_language"].to_list(), answers["record"].to_list()):
        if value is None:
            resolved.append(None)
            continue
        if value not in codes:
            tag = study_names.get(same_name(value))
            resolution = resolve_language(value) if tag is None else None
            if resolution is not None:
                tag = resolution.tag
            codes[value] = iso_code(tag) if tag is not None else None
            if tag is None:
                assert path is not None and resolution is not None  # answers come from a file
                problems.add(path, record, "answer_language", f"{resolution.problem} (said once, on its first row)")
        resolved.append(codes[value])
    return answers.with_columns(answer_language=pl.Series(resolved, dtype=pl.String)).drop("record")


def _ratings(
    path: Path | None,
    answered: set[tuple[str, str]],
    all_answered: bool,
    criteria: list[Criterion],
    declared: set[str] | None,
    problems: Problems,
) -> pl.DataFrame:
    """The ratings of the answers `answered` (every answer when `all_answered`, else a rating of another
    is not reported) on the `criteria` of study.toml (`declared`: every name it gives; None when they are
    not known for sure, a definition or the file having a problem: a rating naming another is then not
    reported)."""
    schema = {
        "question_key": pl.String,
        "model": pl.String,
        "annotator": pl.String,
        "criterion": pl.String,
        "level": pl.String,
    }
    if path is None:
        return pl.DataFrame(schema=schema)
    if declared is not None and not declared:
        problems.add(path, None, None, "the study rates answers but study.toml defines no [criteria.NAME]")
        return pl.DataFrame(schema=schema)
    levels = {c.name: frozenset(c.levels) for c in criteria}  # (a set: a scan of every level per row is quadratic)
    in_order = {c.name: c.levels for c in criteria}
    kinds = {c.name: criterion_kinds.CRITERION_KIND_BY_NAME[c.kind] for c in criteria}
    found: list[dict] = []
    first: dict[tuple[str, str, str, str], str] = {}  # (question key, model, annotator, criterion) -> first record
    for record, row in rows(path, "ratings", problems):
        n = len(problems.items)
        key, model, annotator, criterion = (
            _text(row, column, path, record, problems) for column in ("question_id", "model", "annotator", "criterion")
        )
        if len(problems.items) > n:
            continue
        # `_text` gives None for a required value only with a problem.
        assert key is not None and model is not None and annotator is not None and criterion is not None
        if criterion not in levels:
            if declared is not None and criterion not in declared:  # (an invalid definition is reported in study.toml)
                problems.add(
                    path,
                    record,
                    "criterion",
                    f"unknown criterion {criterion!r} (said once, for every row that names it); study.toml "
                    f"defines {_listed(sorted(declared))}",
                )
                declared.add(criterion)
            continue
        level = kinds[criterion].text(row.get("rating"))
        if level not in levels[criterion]:
            problems.add(
                path,
                record,
                "rating",
                f"is {records.shown(row.get('rating'))}; {criterion}'s levels are {_listed(in_order[criterion])}",
            )
            continue
        if (key, model) not in answered:
            if all_answered:
                problems.add(
                    path, record, "question_id", f"no answer of {model!r} to question {key!r} in the answers table"
                )
            continue
        identity = (key, model, annotator, criterion)
        if identity in first:
            problems.add(
                path,
                record,
                "annotator",
                f"{annotator} rates the answer of {model} to {key!r} on {criterion} twice (first on {first[identity]})",
            )
            continue
        first[identity] = record
        found.append(
            {"question_key": key, "model": model, "annotator": annotator, "criterion": criterion, "level": level}
        )
    return pl.DataFrame(found, schema=schema)


def _metric_values(
    path: Path | None,
    answered: set[tuple[str, str]],
    all_answered: bool,
    metrics: list[MetricDefinition],
    declared: set[str] | None,
    problems: Problems,
) -> pl.DataFrame:
    """The metric values of the answers `answered`, as `_ratings` reads the ratings."""
    schema = {"question_key": pl.String, "model": pl.String, "metric": pl.String, "value": pl.Float64}
    if path is None:
        return pl.DataFrame(schema=schema)
    if declared is not None and not declared:
        problems.add(path, None, None, "the study has metric values but study.toml defines no [metrics.NAME]")
        return pl.DataFrame(schema=schema)
    defined = {m.name: m for m in metrics}
    found: list[dict] = []
    first: dict[tuple[str, str, str], str] = {}  # (question key, model, metric) -> its first record
    for record, row in rows(path, "metrics", problems):
        n = len(problems.items)
        key, model, metric = (
            _text(row, column, path, record, problems) for column in ("question_id", "model", "metric")
        )
        if len(problems.items) > n:
            continue
        assert key is not None and model is not None and metric is not None  # `_text`: see `_questions`
        if metric not in defined:
            if declared is not None and metric not in declared:  # (an invalid definition is reported in study.toml)
                problems.add(
                    path,
                    record,
                    "metric",
                    f"unknown metric {metric!r} (said once, for every row that names it); study.toml defines "
                    f"{_listed(sorted(declared))}",
                )
                declared.add(metric)
            continue
        value = records.decimal(row.get("value"))
        spec = defined[metric]
        if value is None:
            given = row.get("value")
            expected = (
                "a number, and a finite one (not infinite, not NaN)"
                if _non_finite(given)
                else "a number (ASCII digits, a point, an exponent)"
            )
            problems.add(path, record, "value", f"is {records.shown(given)}; expected {expected}")
            continue
        if spec.low is not None and spec.high is not None and not _within(value, spec.low, spec.high):
            problems.add(path, record, "value", f"is {value!r}, outside {metric}'s range [{spec.low:g}, {spec.high:g}]")
            continue
        if (key, model) not in answered:
            if all_answered:
                problems.add(
                    path, record, "question_id", f"no answer of {model!r} to question {key!r} in the answers table"
                )
            continue
        if (key, model, metric) in first:
            problems.add(
                path,
                record,
                "metric",
                f"a second {metric} of {model}'s answer to {key!r} (first on {first[key, model, metric]})",
            )
            continue
        first[key, model, metric] = record
        found.append({"question_key": key, "model": model, "metric": metric, "value": value})
    return pl.DataFrame(found, schema=schema)
