"""A study folder (docs/studies.md): `study.toml` and the tables `languages`, `questions`, `answers`,
`ratings` and `metrics`, each a CSV, JSONL or Parquet file chosen by its extension. `read` reads and
validates all of it, collecting every problem (file, row, field) before it raises one `InputError`;
it writes nothing, and the folder is only read.

A language the files name but `languages.csv` does not list is resolved from its name or code by
`langcodes` (with its `language-data`), never by a table of the suite's.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ..core.errors import Problems
from . import records
from .imports import display_name_problem, has_control, identity_key, model_key_problem

STUDY_FILE = "study.toml"
FORMATS = (".csv", ".jsonl", ".parquet")
KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
TOP_KEYS = ("name", "title", "citation", "description", "criteria", "metrics")
# Each table: its required and its optional columns.
TABLES = {
    "languages": (("language", "code"), ("resource_level", "script")),
    "questions": (
        ("question_id", "language", "question"),
        ("question_english", "question_type", "category", "collection"),
    ),
    "answers": (("question_id", "model", "answer"), ("display_name", "model_version")),
    "ratings": (("question_id", "model", "annotator", "criterion", "rating"), ()),
    "metrics": (("question_id", "model", "metric", "value"), ()),
}
REQUIRED_TABLES = ("questions", "answers")


@dataclass(frozen=True)
class Criterion:
    name: str
    levels: tuple[str, ...]  # worst first, as text
    numeric: bool


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
    answers: pl.DataFrame  # question_key, model, text, model_version
    models: pl.DataFrame  # model, display_name, version, position
    ratings: pl.DataFrame  # question_key, model, annotator, criterion, level
    metric_values: pl.DataFrame  # question_key, model, metric, value
    files: list[Path] = field(default_factory=list)


def is_study(folder: Path | str) -> bool:
    """A study folder (rather than the CaLMQA release): it has a study.toml or a questions table."""
    folder = Path(folder)
    return (folder / STUDY_FILE).is_file() or any((folder / f"questions{s}").is_file() for s in FORMATS)


def table_file(folder: Path, table: str, problems: Problems) -> Path | None:
    """The file of `table` in `folder` (`table.csv`, `.jsonl` or `.parquet`), or None when there is none;
    two of them is a problem."""
    found = [folder / f"{table}{suffix}" for suffix in FORMATS if (folder / f"{table}{suffix}").is_file()]
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
    size = path.stat().st_size
    if size > records.MAX_FILE_BYTES:  # the limit of CSV and JSONL files (`records.read_rows`)
        problems.add(path, None, None, records.file_too_large(size))
        return
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - polars raises many kinds for a damaged or foreign file
        problems.add(path, None, None, f"cannot be read as Parquet: {exc}")
        return
    if not records.check_columns(path, frame.columns, required, None, problems, "the schema"):
        return
    for number, row in enumerate(frame.iter_rows(named=True), start=1):
        yield f"row {number}", row


# ------------------------------------------------------------------------------------------ values


def _text(row: dict, column: str, path: Path, record: str, problems: Problems, required: bool = True) -> str | None:
    """A text value (a JSON number is taken as written, e.g. an id 7); an empty required value is a problem."""
    value = row.get(column)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None or value == "":
        if required:
            problems.add(path, record, column, "is empty")
        return None
    text = records.text(value, path, record, column, problems)
    if text is not None and required and not text.strip():
        problems.add(path, record, column, "is empty")
        return None
    return text


def _level(value) -> str | None:
    """A rating or a criterion's level as text: a string, or a whole number (`4`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value.strip() if isinstance(value, str) else None


def _number(value) -> float | None:
    """A finite number, from a JSON number or from text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


# ------------------------------------------------------------------------------------------ study.toml


def read_declaration(folder: Path, problems: Problems) -> dict | None:
    """study.toml, checked: name, title, citation, description, the criteria and the metrics."""
    path = folder / STUDY_FILE
    if not path.is_file():
        problems.add(path, None, None, "missing: a study folder has a study.toml with its name and title")
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
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
    if not isinstance(name, str) or not KEY.match(name):
        problems.add(
            path,
            None,
            "name",
            f"is {name!r}; the study's name is a key: lower-case letters, digits, '-' and '_', e.g. my-study",
        )
    title = data.get("title")
    if not isinstance(title, str) or not title.strip() or has_control(title):
        problems.add(path, None, "title", f"is {title!r}; expected the study's title, a line of text")
    for key in ("citation", "description"):
        if key in data and not isinstance(data[key], str):
            problems.add(path, None, key, f"is {data[key]!r}; expected text")
    criteria = _criteria(path, data.get("criteria", {}), problems)
    metrics = _metrics(path, data.get("metrics", {}), problems)
    declared = {
        kind: set(data[kind]) if isinstance(data.get(kind), dict) else set() for kind in ("criteria", "metrics")
    }
    # `declared`: every name study.toml gives, valid or not (rows naming an invalid one are not reported).
    return {**data, "criteria": criteria, "metrics": metrics, "declared": declared}


def _criteria(path: Path, table, problems: Problems) -> list[Criterion]:
    if not isinstance(table, dict):
        problems.add(path, None, "criteria", "expected one [criteria.NAME] table per criterion")
        return []
    found = []
    for name, spec in table.items():
        where = f"[criteria.{name}]"
        if not KEY.match(name):
            problems.add(path, where, None, "a criterion's name is a key: lower-case letters, digits, '-' and '_'")
        if not isinstance(spec, dict) or "levels" not in spec:
            problems.add(path, where, "levels", "missing: the criterion's levels, worst first, e.g. [1, 2, 3, 4, 5]")
            continue
        for key in spec:
            if key != "levels":
                problems.add(path, where, key, "unknown key; a criterion has `levels`")
        levels = spec["levels"]
        if not isinstance(levels, list) or len(levels) < 2:
            problems.add(path, where, "levels", f"is {levels!r}; a criterion has at least two levels, worst first")
            continue
        texts = [
            _level(v) if not isinstance(v, float) and (isinstance(v, int) or isinstance(v, str) and v.strip()) else None
            for v in levels
        ]
        words = [t for t in texts if t is not None]
        if len(words) < len(texts):
            problems.add(path, where, "levels", f"is {levels!r}; each level is a word or a whole number")
            continue
        twice = sorted({t for t in words if words.count(t) > 1})
        if twice:
            problems.add(path, where, "levels", f"the level(s) {', '.join(map(repr, twice))} appear twice")
            continue
        numeric = all(isinstance(v, int) and not isinstance(v, bool) for v in levels)
        found.append(Criterion(name, tuple(words), numeric))
    return found


def _metrics(path: Path, table, problems: Problems) -> list[MetricDefinition]:
    if not isinstance(table, dict):
        problems.add(path, None, "metrics", "expected one [metrics.NAME] table per metric")
        return []
    found = []
    for name, spec in table.items():
        where = f"[metrics.{name}]"
        if not KEY.match(name):
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
                [_number(v) if not isinstance(v, str) else None for v in bounds] if isinstance(bounds, list) else []
            )
            given = [n for n in numbers if n is not None]
            if len(numbers) != 2 or len(given) < 2 or given[0] >= given[1]:
                problems.add(path, where, "range", f"is {bounds!r}; expected [low, high], two numbers, low < high")
                continue
            low, high = given
        found.append(MetricDefinition(name, better, low, high))
    return found


# ------------------------------------------------------------------------------------------ languages


def _resolve(value: str) -> str | None:
    """The ISO 639 code of a language named by `value`, its name (`Hausa`) or its code (`ha`, `hau`),
    by `langcodes`; None when neither resolves."""
    import langcodes

    if langcodes.tag_is_valid(value):
        code = langcodes.Language.get(value).language
        if code:
            return code
    try:
        return langcodes.find(value).language
    except LookupError:
        return None


def _script(code: str) -> str | None:
    """The usual script of a language, by `langcodes` (`Latin` for `ha`)."""
    import langcodes

    try:
        return langcodes.Language.get(code).maximize().script_name() or None
    except (LookupError, ValueError):
        return None


def read_languages(path: Path | None, problems: Problems) -> dict[str, dict]:
    """languages.csv by language name: its ISO 639 code (the shortest), resource level and script."""
    import langcodes

    found: dict[str, dict] = {}
    if path is None:
        return found
    first: dict[str, str] = {}
    for record, row in rows(path, "languages", problems):
        n = len(problems.items)
        name = _text(row, "language", path, record, problems)
        code = _text(row, "code", path, record, problems)
        level = _text(row, "resource_level", path, record, problems, required=False)
        script = _text(row, "script", path, record, problems, required=False)
        if len(problems.items) > n:
            continue
        assert name is not None and code is not None  # `_text` gives None for a required value only with a problem
        iso = langcodes.Language.get(code.strip()).language if langcodes.tag_is_valid(code.strip()) else None
        if not iso:
            problems.add(path, record, "code", f"is {code!r}; expected a BCP 47 or ISO 639 code, e.g. ha or hau")
            continue
        if name in first:
            problems.add(path, record, "language", f"{name!r} is listed twice (first on {first[name]})")
            continue
        first[name] = record
        found[name] = {"iso_code": iso, "resource_level": level, "script": script or _script(iso)}
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
    # A row with a problem still names its key: what refers to it is not reported a second time.
    questions, resolved, question_keys = _questions(paths["questions"], languages, problems)
    answers, models, answer_keys = _answers(paths["answers"], question_keys, problems)
    criteria = declared["criteria"] if declared else []
    metrics = declared["metrics"] if declared else []
    names = declared["declared"] if declared else {"criteria": set(), "metrics": set()}
    ratings = _ratings(paths["ratings"], answer_keys, criteria, names["criteria"], problems)
    metric_values = _metric_values(paths["metrics"], answer_keys, metrics, names["metrics"], problems)
    problems.raise_if_any()
    assert declared is not None  # a study.toml that cannot be read is a problem, raised above
    language_rows = [{"language": name, **info} for name, info in {**languages, **resolved}.items()]
    return StudyFolder(
        folder=folder,
        name=declared["name"],
        title=declared["title"].strip(),
        citation=declared.get("citation"),
        description=declared.get("description"),
        criteria=criteria,
        metrics=metrics,
        languages=pl.DataFrame(
            language_rows,
            schema={"language": pl.String, "iso_code": pl.String, "resource_level": pl.String, "script": pl.String},
        ),
        questions=questions,
        answers=answers,
        models=models,
        ratings=ratings,
        metric_values=metric_values,
        files=[p for p in [folder / STUDY_FILE, *paths.values()] if p is not None],
    )


def _questions(
    path: Path | None, languages: dict[str, dict], problems: Problems
) -> tuple[pl.DataFrame, dict[str, dict], set[str]]:
    """The questions, and the languages they name that languages.csv does not list, resolved by
    `langcodes` (name -> ISO code, resource level (none), script)."""
    schema = {
        "question_key": pl.String,
        "language": pl.String,
        "text": pl.String,
        "text_en": pl.String,
        "question_type": pl.String,
        "category": pl.String,
        "collection": pl.String,
    }
    resolved: dict[str, dict] = {}
    named: set[str] = set()
    if path is None:
        return pl.DataFrame(schema=schema), resolved, named
    found: list[dict] = []
    first: dict[str, str] = {}  # question key -> its first record
    unresolved: set[str] = set()
    for record, row in rows(path, "questions", problems):
        n = len(problems.items)
        key = _text(row, "question_id", path, record, problems)
        if key is not None:
            named.add(key)
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
        if language in unresolved:
            continue  # said once, on its first row
        if language not in languages and language not in resolved:
            code = _resolve(language.strip())
            if code is None:
                problems.add(
                    path,
                    record,
                    "language",
                    f"unknown language {language!r}: not in languages.csv, and langcodes knows no language of "
                    "that name or code; add it to languages.csv with its code",
                )
                unresolved.add(language)
                continue
            resolved[language] = {"iso_code": code, "resource_level": None, "script": _script(code)}
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
    return pl.DataFrame(found, schema=schema), resolved, named


def _answers(
    path: Path | None, known: set[str], problems: Problems
) -> tuple[pl.DataFrame, pl.DataFrame, set[tuple[str, str]]]:
    """The answers to the questions `known`, the models in the order they first appear, and every
    (question, model) named."""
    schema = {"question_key": pl.String, "model": pl.String, "text": pl.String, "model_version": pl.String}
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
        if key is not None and model is not None:
            named.add((key, model))
        answer = row.get("answer")
        text = "" if answer is None else records.text(answer, path, record, "answer", problems)
        name = _text(row, "display_name", path, record, problems, required=False)
        version = _text(row, "model_version", path, record, problems, required=False)
        if len(problems.items) > n:
            continue
        assert key is not None and model is not None  # `_text`: None for a required value only with a problem
        ok = True
        if key not in known:
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
        found.append({"question_key": key, "model": model, "text": text, "model_version": version})
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


def _ratings(
    path: Path | None,
    answered: set[tuple[str, str]],
    criteria: list[Criterion],
    declared: set[str],
    problems: Problems,
) -> pl.DataFrame:
    schema = {
        "question_key": pl.String,
        "model": pl.String,
        "annotator": pl.String,
        "criterion": pl.String,
        "level": pl.String,
    }
    if path is None:
        return pl.DataFrame(schema=schema)
    if not declared:
        problems.add(path, None, None, "the study rates answers but study.toml defines no [criteria.NAME]")
        return pl.DataFrame(schema=schema)
    levels = {c.name: c.levels for c in criteria}
    found: list[dict] = []
    first: dict[tuple[str, str, str, str], str] = {}  # (question key, model, annotator, criterion) -> first record
    for record, row in rows(path, "ratings", problems):
        n = len(problems.items)
        key, model, annotator, criterion = (
            _text(row, column, path, record, problems) for column in ("question_id", "model", "annotator", "criterion")
        )
        level = _level(row.get("rating"))
        if len(problems.items) > n:
            continue
        # `_text` gives None for a required value only with a problem.
        assert key is not None and model is not None and annotator is not None and criterion is not None
        if criterion not in levels:
            if criterion not in declared:  # (an invalid definition is reported in study.toml)
                problems.add(
                    path,
                    record,
                    "criterion",
                    f"unknown criterion {criterion!r} (said once, for every row that names it); study.toml "
                    f"defines {', '.join(sorted(declared))}",
                )
                declared.add(criterion)
            continue
        if level not in levels[criterion]:
            problems.add(
                path,
                record,
                "rating",
                f"is {row.get('rating')!r}; {criterion}'s levels are {', '.join(levels[criterion])}",
            )
            continue
        if (key, model) not in answered:
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
    metrics: list[MetricDefinition],
    declared: set[str],
    problems: Problems,
) -> pl.DataFrame:
    schema = {"question_key": pl.String, "model": pl.String, "metric": pl.String, "value": pl.Float64}
    if path is None:
        return pl.DataFrame(schema=schema)
    if not declared:
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
            if metric not in declared:  # (an invalid definition is reported in study.toml)
                problems.add(
                    path,
                    record,
                    "metric",
                    f"unknown metric {metric!r} (said once, for every row that names it); study.toml defines "
                    f"{', '.join(sorted(declared))}",
                )
                declared.add(metric)
            continue
        value = _number(row.get("value"))
        spec = defined[metric]
        if value is None:
            problems.add(path, record, "value", f"is {row.get('value')!r}; expected a number")
            continue
        if spec.low is not None and spec.high is not None and not spec.low <= value <= spec.high:
            problems.add(path, record, "value", f"is {value:g}, outside {metric}'s range [{spec.low:g}, {spec.high:g}]")
            continue
        if (key, model) not in answered:
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
