"""What every harness reader gives the writer: the samples it found (`Sample`: a question, its language
and a model's answer, with the answer's scores), the metrics they carry (`Metric`), what it mapped from
where and what it left out (`Harvest`); and the rules the readers share: the user's choices (`Options`),
the language a task's name ends with (`language_in_name`) and a harness's JSON read leniently (`load_json`).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import Problems, reason

# What LANGUAGE_FIELD= names to take a sample's language from its task's name (every format).
TASK = "task"


@dataclass(frozen=True)
class Options:
    """The user's choices: where the language is (`language_field`: `task`, or a field of the format's
    samples; None: the format's default) or the one language of every question (`language`, for a run of a
    single language whose names and fields hold none), where lm-evaluation-harness's question is (`question_field`: a
    key of `doc`, or `arguments` for the prompt as sent; None: `question`), and which of the harness's
    metrics to keep (`metrics`, the harness's names; None: the format's default)."""

    language_field: str | None = None
    language: str | None = None
    question_field: str | None = None
    metrics: tuple[str, ...] | None = None

    def keeps(self, metric: str) -> bool:
        """Whether to take the harness's metric `metric`: METRICS= names it, by the harness's name or by its
        key in the study (`exact_match-flexible-extract` for lm-eval's `exact_match,flexible-extract`)."""
        return self.metrics is None or metric in self.metrics or metric_key(metric) in self.metrics


@dataclass(frozen=True)
class Sample:
    """One answer of a model to a question of a task, as the harness gave it."""

    file: Path  # the file it was read from
    record: str  # where in that file, in the harness's words: "sample 'sw-1'", "line 3 (doc_id 2)"
    task: str
    sample_id: str  # the question's id within its task
    language: str  # the harness's name of the question's language
    question: str
    model: str  # the harness's name of the model
    answer: str
    scores: tuple[tuple[str, float], ...] = ()  # (the harness's metric name, value)


@dataclass
class Metric:
    """A metric of the harness: which end is better (None: the harness does not say) and whether its
    values are shares of 0 to 1 (`unit`: the harness's own rule made them so, e.g. Inspect's C/I/P/N)."""

    name: str
    higher_is_better: bool | None = None
    unit: bool = False
    source: str = ""  # where the samples hold it, for the README


@dataclass
class Harvest:
    """What a reader found in the files it read."""

    harness: str  # the harness's name, e.g. "Inspect AI"
    kind: str  # what each of `files` is, e.g. "log"
    files: list[Path]
    samples: list[Sample]
    metrics: dict[str, Metric]  # by the harness's name, in the order first met
    # Each column of the study's tables and where its values came from, in the harness's words.
    fields: dict[str, str]
    # How the reader maps a sample, in a few sentences for the README.
    how: str = ""
    # What was not taken, with how often: "samples of epochs after the first: 12".
    left_out: Counter[str] = field(default_factory=Counter)
    # Each file read: "`x.eval`: task `qa`, model `mockllm/alpha`, 30 samples".
    notes: list[str] = field(default_factory=list)


def key(name: str, allowed: str, fallback: str) -> str:
    """`name` as a key: lower-case, each run of characters outside `allowed` one `-`, trimmed to start and
    end with a letter or digit; `fallback` when nothing is left."""
    text = re.sub(rf"[^{allowed}]+", "-", name.lower()).strip("-_.")
    return text if text else fallback


def metric_key(name: str) -> str:
    """A metric's key in the study (docs/studies.md: lower-case letters, digits, `-` and `_`)."""
    return key(name, "a-z0-9_-", "metric")


def model_key(name: str) -> str:
    """A model's key in the study (lower-case letters, digits, `.`, `-` and `_`)."""
    return key(name, "a-z0-9._-", "model")


# A task's name is cut at these into its words; a language tag is one word, or one followed by its script
# and region words (`belebele_swh_Latn`, `mmmlu:locale=SW_KE`).
_WORDS = re.compile(r"[^_\-:=,/.\s]+")
# The key of a HELM run's argument that holds its language.
_LANGUAGE_ARGUMENT = re.compile(r"lang|locale", re.IGNORECASE)


def task_language(options: Options, task: str) -> str | None:
    """The language of every sample of a task: the one QUESTION_LANGUAGE= gives, or the one its name ends with."""
    return options.language or language_in_name(task)


def language_source(options: Options, field: str) -> str:
    """Where the samples' language comes from, in the harness's words: `field`, or QUESTION_LANGUAGE=."""
    return f"QUESTION_LANGUAGE={options.language}" if options.language else field


def language_in_name(name: str) -> str | None:
    """The language a task's name ends with, as written there (`mmlu_sw` -> `sw`, `belebele_swh_Latn` ->
    `swh_Latn`): the last word after the first that `langcodes` knows as a language, with the script and
    region words that follow it when they make one valid tag with it; None when there is none. The first
    word is the benchmark's name (`arc_challenge` names no language, though `arc` is Aramaic's code). A
    name with arguments (HELM's `scenario:key=value,...`) says its language in an argument whose key names
    one (`open_assistant:language=sw`, `mmmlu:locale=SW_KE`), or else in its scenario's name (`xquad_th:model=...`):
    any other argument's value is not a language, though it may look like a code (`bbq:subject=all`: `all` is
    Allar's)."""
    import langcodes

    scenario, _, arguments = name.partition(":")
    for argument in arguments.split(",") if arguments else ():
        key, _, value = argument.partition("=")
        if _LANGUAGE_ARGUMENT.search(key) and (found := _last_language(value, 0, langcodes)):
            return found
    return _last_language(scenario, 1, langcodes)


def _last_language(text: str, first: int, langcodes) -> str | None:
    """The last language tag of `text`'s words from its word `first` on (see `language_in_name`)."""
    words = list(_WORDS.finditer(text))
    for index in range(len(words) - 1, first - 1, -1):
        word = words[index].group()
        if not _is_language(word, langcodes):
            continue
        end = index
        while end + 1 < len(words) and langcodes.tag_is_valid(text[words[index].start() : words[end + 1].end()]):
            end += 1
        return text[words[index].start() : words[end].end()]
    return None


def _is_language(word: str, langcodes) -> bool:
    if not 2 <= len(word) <= 3 or not word.isascii() or not word.isalpha() or not langcodes.tag_is_valid(word):
        return False
    language = langcodes.Language.get(word)
    return bool(language.language) and language.is_valid()


def number(value) -> float | None:
    """A finite number from a JSON number or a boolean (true 1, false 0); None for anything else."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def load_json(path: Path, problems: Problems, what: str):
    """A harness's JSON file (NaN and Infinity accepted, as Python's json writes them), or None after saying
    why it is not `what`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.add(path, None, None, f"is not UTF-8 text ({exc.reason}); expected {what}")
        return None
    except OSError as exc:
        problems.add(path, None, None, f"cannot be read: {reason(exc)}")
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(path, f"line {exc.lineno} column {exc.colno}", None, f"is not JSON ({exc.msg}); expected {what}")
    except RecursionError:
        problems.add(path, None, None, f"nests deeper than Python's parser reaches; expected {what}")
    return None


def files_in(source: Path, pattern: str, problems: Problems) -> list[Path]:
    """The files matching `pattern` in `source` and its sub-folders, sorted, or `source` itself when it
    is a file; a missing source is a problem."""
    if source.is_file():
        return [source]
    if not source.is_dir():
        problems.add(source, None, None, "no such file or folder")
        return []
    return sorted(p for p in source.rglob(pattern) if p.is_file())
