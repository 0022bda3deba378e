"""Inspect AI's eval logs (`.eval` and `.json`), read by inspect_ai's own log API: `list_eval_logs` finds
the logs of a folder as Inspect does, `read_eval_log` reads each, and a score becomes a number by
Inspect's own `value_to_float` (C, I, P and N are 1, 0, 0.5 and 0). A sample is a question of the
log's task (its `id`, its `input`) and the answer of the log's model (`output.completion`).

inspect_ai is the suite's optional extra `inspect` (some forty packages `make setup` does not install):
`make study-from FORMAT=inspect`, `make test`, `make test-fast` and `make lint` install it; without it the
reader says so and names the extra.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import Failure, Problems
from .common import TASK, Harvest, Metric, Options, Sample, language_source, number, task_language

HARNESS = "Inspect AI"
DEFAULT_LANGUAGE_FIELD = "language"  # a key of the samples' metadata
MISSING = (
    "reading Inspect AI logs needs the package inspect_ai, the suite's optional extra `inspect`: "
    "`make study-from FORMAT=inspect ...` installs it, or `.venv/bin/pip install -e '.[inspect]'`"
)
# Text values of a score that Inspect's `value_to_float` reads besides C, I, P and N and numbers.
_WORD_SCORES = ("yes", "no", "true", "false")


def read(sources: list[Path], options: Options, problems: Problems) -> Harvest:
    """The samples of the Inspect logs in `sources` (log files, or folders of logs)."""
    try:
        from inspect_ai.log import list_eval_logs, read_eval_log
        from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, PARTIAL, value_to_float
    except ImportError:
        raise Failure(MISSING) from None

    language_field = TASK if options.language else options.language_field or DEFAULT_LANGUAGE_FIELD
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            found = sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(source.resolve())))
            if not found:
                problems.add(
                    source, None, None, "holds no Inspect AI log (.eval, or .json named as Inspect names logs)"
                )
            files += found
        elif source.is_file():
            files.append(source)
        else:
            problems.add(source, None, None, "no such file or folder")
    harvest = Harvest(
        HARNESS,
        "log",
        files,
        [],
        {},
        fields={
            "question_id": "id",
            "question": "input",
            "language": language_source(
                options, "eval.task" if language_field == TASK else f"metadata.{language_field}"
            ),
            "model": "eval.model",
            "answer": "output.completion",
        },
    )
    harvest.how = (
        "A sample's question is its `input` (of a chat, the text of its last user message, as Inspect's "
        "`input_text`); its question id is its `id`, after the task's name when the logs are of several tasks. A "
        "score is a number by Inspect's `value_to_float`: C (correct) 1, P (partial) 0.5, I (incorrect) and N (no "
        "answer) 0, yes and true 1, no and false 0, a number as it is; a score whose value is a dictionary gives a "
        "metric per key (`scorer.key`)."
    )
    letters = {CORRECT, INCORRECT, PARTIAL, NOANSWER}
    to_float = value_to_float()
    for path in files:
        if path.suffix not in (".eval", ".json"):
            problems.add(
                path, None, None, "is not an Inspect AI eval log: Inspect writes its logs as .eval or .json files"
            )
            continue
        try:
            log = read_eval_log(path)
        except Exception as exc:  # noqa: BLE001 - inspect_ai raises many kinds for a file that is not its log
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            problems.add(path, None, None, f"cannot be read as an Inspect AI eval log ({type(exc).__name__}: {first})")
            continue
        if log.status != "success":
            error = f": {log.error.message.strip().splitlines()[0]}" if log.error and log.error.message else ""
            problems.add(
                path,
                None,
                "status",
                f"the run did not finish (status {log.status!r}{error}); finish it (`inspect eval-retry`) "
                "or leave this log out",
            )
            continue
        if not log.samples:
            problems.add(path, None, "samples", "holds no samples (was the eval run with --no-log-samples?)")
            continue
        task, model = log.eval.task, log.eval.model
        harvest.notes.append(f"`{path.name}`: task `{task}`, model `{model}`, {len(log.samples)} samples")
        language = task_language(options, task) if language_field == TASK else None
        if language_field == TASK and language is None:
            problems.add(
                path,
                None,
                "eval.task",
                f"the task's name {task!r} ends with no language code (e.g. qa_sw); give the field of the samples' "
                "metadata that holds the language (LANGUAGE_FIELD=), or the language of every question (QUESTION_LANGUAGE=)",
            )
            continue
        for sample in log.samples:
            record = f"sample {sample.id!r}" + (f" (epoch {sample.epoch})" if sample.epoch != 1 else "")
            if sample.epoch != 1:
                harvest.left_out["samples of epochs after the first"] += 1
                continue
            taken = _sample(path, record, sample, language, language_field, problems)
            if taken is None:
                continue
            question, language_name, answer = taken
            scores = _scores(sample.scores or {}, harvest, letters, to_float)
            for key in sorted((sample.metadata or {}).keys() - {language_field}):
                harvest.left_out[f"the samples' `metadata.{key}`"] += 1
            if sample.target not in (None, "", []):
                harvest.left_out["the samples' `target` (the study format has no reference answers)"] += 1
            harvest.samples.append(
                Sample(path, record, task, str(sample.id), language_name, question, model, answer, scores)
            )
    return harvest


def _sample(path, record, sample, language, language_field, problems) -> tuple[str, str, str] | None:
    """The question, language and answer of an Inspect sample, or None after saying what is missing."""
    n = len(problems.items)
    if isinstance(sample.input, str):
        question = sample.input
    else:
        users = [m for m in sample.input if m.role == "user"]
        question = users[-1].text if users else ""
    if not question.strip():
        problems.add(path, record, "input", "has no text: the study needs the question's text")
    if language_field != TASK:
        value = (sample.metadata or {}).get(language_field)
        if not isinstance(value, str) or not value.strip():
            problems.add(
                path,
                record,
                f"metadata.{language_field}",
                f"is {value!r}; expected the question's language (LANGUAGE_FIELD= names another field of the "
                "samples' metadata, or `task` for the language the task's name ends with)",
            )
        else:
            language = value.strip()
    output = sample.output
    if sample.error is not None:
        first = (sample.error.message or "").strip().splitlines()
        problems.add(path, record, "error", f"has no answer: the sample failed ({first[0] if first else 'no message'})")
    elif output is None or not output.choices:
        problems.add(path, record, "output", "has no answer: the model gave no output")
    if len(problems.items) > n:
        return None
    assert language is not None  # a sample without one is a problem, above
    return question, language, output.completion


def _scores(scores: dict, harvest: Harvest, letters, to_float) -> tuple[tuple[str, float], ...]:
    """The sample's scores as numbers: each scorer's value (each key of a value that is a dictionary), by
    Inspect's `value_to_float`; what that rule does not read as a number is left out, and counted."""
    found = []
    for scorer, score in scores.items():
        values = score.value.items() if isinstance(score.value, dict) else [(None, score.value)]
        for key, value in values:
            name = scorer if key is None else f"{scorer}.{key}"
            lettered = (isinstance(value, str) and (value in letters or value.lower() in _WORD_SCORES)) or isinstance(
                value, bool
            )
            if lettered or number(value) is not None or (isinstance(value, str) and _numeric(value)):
                # A score of letters only is a share of 0 to 1 whose higher end is better (C, correct, is 1);
                # of a number, Inspect does not say which end is better.
                metric = harvest.metrics.setdefault(
                    name, Metric(name, higher_is_better=True, unit=True, source=f"`scores['{scorer}'].value`")
                )
                if not lettered:
                    metric.unit, metric.higher_is_better = False, None
                found.append((name, to_float(value)))
            else:
                harvest.left_out[f"score `{name}` values that are not numbers"] += 1
    return tuple(found)


def _numeric(text: str) -> bool:
    try:
        return number(float(text)) is not None
    except ValueError:
        return False
