"""A study folder (docs/studies.md) from the samples a harness reader found: the samples are checked
together first (two files that give one question different texts or languages, a model answering a
question twice), then the folder is written beside its place, read back by the study reader
(`io.study.read`, every rule of a study) and moved into place only when it is valid. A problem the study
reader finds in a row is said of the sample that row came from (its file, its place there and the
harness's field), so that the message names what the user can change. Nothing is written then.

The folder: `study.toml` (its name from the folder's, a title from the tasks, one `[metrics.NAME]` per
metric), `questions.csv`, `answers.csv`, `metrics.csv` (when there are scores) and a `README.md` saying
what was mapped from where and what was left out.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import Failure, InputError, Problem, Problems
from ...core.files import atomic_folder
from .. import records, study
from .common import Harvest, Metric, Sample, key, metric_key, model_key

QUESTIONS = ("question_id", "language", "question")
ANSWERS = ("question_id", "model", "answer", "display_name")
METRICS = ("question_id", "model", "metric", "value")
# Which field of a sample each column of the written tables comes from (the reader's `fields`).
COLUMN_FIELDS = {
    "question_id": "question_id",
    "language": "language",
    "question": "question",
    "model": "model",
    "display_name": "model",
    "answer": "answer",
}


@dataclass(frozen=True)
class Written:
    """What the folder holds."""

    folder: Path
    name: str
    n_questions: int
    n_languages: int
    n_answers: int
    n_models: int
    n_metrics: int


def _unique(names: list[str], make) -> dict[str, str]:
    """A key for each name, distinct (`-2`, `-3`, ... after a key taken)."""
    keys: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        base = make(name)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate)
        keys[name] = candidate
    return keys


def check(harvest: Harvest, problems: Problems) -> None:
    """Samples that disagree: one question given two texts or two languages, or answered twice by a model."""
    questions: dict[tuple[str, str], Sample] = {}
    answers: dict[tuple[str, str, str], Sample] = {}
    fields = harvest.fields
    for sample in harvest.samples:
        first = questions.setdefault((sample.task, sample.sample_id), sample)
        where = f"{first.file}, {first.record}"
        if first.question != sample.question:
            problems.add(
                sample.file,
                sample.record,
                fields["question"],
                f"the question's text differs from that of the same sample of task {sample.task!r} in {where}: "
                f"{_difference(first.question, sample.question)}; are the two logs of one version of the task?",
            )
        elif first.language != sample.language:
            problems.add(
                sample.file,
                sample.record,
                fields["language"],
                f"is {sample.language!r}, but {where} gives the same question the language {first.language!r}",
            )
        other = answers.setdefault((sample.task, sample.sample_id, sample.model), sample)
        if other is not sample:
            problems.add(
                sample.file,
                sample.record,
                fields["model"],
                f"a second answer of {sample.model} to this sample of task {sample.task!r} (the first is in "
                f"{other.file}, {other.record}): keep one run of a model on a task",
            )


def _difference(a: str, b: str) -> str:
    """Where two texts part, shown briefly."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"from character {at + 1}, {a[at : at + 30]!r} there and {b[at : at + 30]!r} here"


def write(harvest: Harvest, out: Path, *, command: str, sources: list[Path]) -> Written:
    """Write the study folder `out` from the harvest (which `check` found consistent); raise `InputError`
    naming the samples whose rows the study reader refuses, with nothing written."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise Failure(
            f"{out}: already exists and is not an empty folder; a study is written to a new folder (yours may "
            "hold ratings you added): choose another OUT= or remove it"
        )
    if not harvest.samples:
        raise Failure(f"no sample was taken from {', '.join(map(str, sources))}: there is nothing to make a study of")
    tasks = list(dict.fromkeys(s.task for s in harvest.samples))
    models = sorted(dict.fromkeys(s.model for s in harvest.samples), key=lambda m: (m.lower(), m))
    model_keys = _unique(models, model_key)
    metric_keys = _unique(list(harvest.metrics), metric_key)
    name = key(out.name, "a-z0-9_-", "study")
    question_ids: dict[tuple[str, str], str] = {}
    tables: dict[str, list[tuple[tuple, Sample]]] = {"questions": [], "answers": [], "metrics": []}
    for sample in harvest.samples:
        question = (sample.task, sample.sample_id)
        if question not in question_ids:
            question_ids[question] = sample.sample_id if len(tasks) == 1 else f"{sample.task}/{sample.sample_id}"
            tables["questions"].append(((question_ids[question], sample.language, sample.question), sample))
    position = {model: n for n, model in enumerate(models)}
    by_model = sorted(harvest.samples, key=lambda s: position[s.model])  # stable: the questions' order within
    for sample in by_model:
        qid = question_ids[sample.task, sample.sample_id]
        tables["answers"].append(((qid, model_keys[sample.model], sample.answer, sample.model), sample))
        for metric, value in sample.scores:
            tables["metrics"].append(((qid, model_keys[sample.model], metric_keys[metric], repr(value)), sample))
    title = _title(tasks, harvest.harness)
    with atomic_folder(out) as folder:
        origins = {
            "questions.csv": _write_csv(folder / "questions.csv", QUESTIONS, tables["questions"]),
            "answers.csv": _write_csv(folder / "answers.csv", ANSWERS, tables["answers"]),
        }
        if tables["metrics"]:
            origins["metrics.csv"] = _write_csv(folder / "metrics.csv", METRICS, tables["metrics"])
        (folder / study.STUDY_FILE).write_text(
            _study_toml(name, title, harvest, metric_keys, command, sources), encoding="utf-8"
        )
        try:
            read = study.read(folder)
        except InputError as exc:
            raise InputError([_of_sample(p, folder, out, origins, harvest) for p in exc.problems]) from None
        (folder / "README.md").write_text(
            _readme(title, harvest, read, model_keys, metric_keys, out, command, sources), encoding="utf-8"
        )
    return Written(
        out,
        name,
        read.questions.height,
        read.languages.height,
        read.answers.height,
        read.models.height,
        len(read.metrics),
    )


def _title(tasks: list[str], harness: str) -> str:
    """The tasks' names and the harness's; the number of tasks when their names do not make a title (too long,
    or holding what a line of text may not)."""
    shown = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more tasks" if len(tasks) > 3 else "")
    title = f"{shown} ({harness})"
    if records.label_problem(title, max_length=study.TEXT_LIMITS["title"]):
        title = f"{len(tasks)} task{'s' if len(tasks) != 1 else ''} ({harness})"
    return title


def _write_csv(path: Path, header: tuple[str, ...], rows: list[tuple[tuple, Sample]]) -> dict[int, Sample]:
    """Write the rows; return the sample of each row by the line it starts on (as `records` counts lines:
    a text with line breaks spans several)."""
    origins: dict[int, Sample] = {}
    line = 2
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for values, sample in rows:
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerow(values)
            text = buffer.getvalue()
            handle.write(text)
            origins[line] = sample
            line += text.count("\n")
    return origins


def _of_sample(
    problem: Problem, folder: Path, out: Path, origins: dict[str, dict[int, Sample]], harvest: Harvest
) -> Problem:
    """A problem the study reader found in a written row, said of the sample the row came from."""
    name = Path(problem.file).name
    line = re.fullmatch(r"line (\d+)", problem.record or "")
    sample = origins.get(name, {}).get(int(line.group(1))) if line else None
    if sample is None:
        file = str(out / Path(problem.file).relative_to(folder)) if problem.file.startswith(str(folder)) else out
        return Problem(str(file), problem.record, problem.field, f"(in the study it would write) {problem.message}")
    column = COLUMN_FIELDS.get(problem.field or "")
    field = harvest.fields.get(column) if column else problem.field
    message = problem.message
    if column == "language":
        message += "; LANGUAGE_FIELD= says where a sample's language is (docs/harnesses.md)"
    return Problem(str(sample.file), sample.record, field, message)


def _toml_text(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _study_toml(
    name: str, title: str, harvest: Harvest, metric_keys: dict[str, str], command: str, sources: list[Path]
) -> str:
    described = (
        f"Written by `{command}` from the {harness_files(harvest)} in {', '.join(map(str, sources))}; its README.md "
        "says what was mapped from where and what was left out."
    )
    lines = [f"name = {_toml_text(name)}", f"title = {_toml_text(title)}", f"description = {_toml_text(described)}"]
    for metric in harvest.metrics.values():
        lines += ["", f"[metrics.{metric_keys[metric.name]}]"]
        lines.append(f"higher_is_better = {'false' if metric.higher_is_better is False else 'true'}")
        if metric.unit:
            lines.append("range = [0, 1]")
    return "\n".join(lines) + "\n"


def harness_files(harvest: Harvest) -> str:
    n = len(harvest.files)
    return f"{n} {harvest.harness} {harvest.kind}{'s' if n != 1 else ''}"


def _cell(text: str) -> str:
    """Text from the harness as a cell of a Markdown table: on one line, its `|` escaped."""
    return re.sub(r"\s+", " ", text).replace("|", "\\|")


def _readme(
    title: str,
    harvest: Harvest,
    read: study.StudyFolder,
    model_keys: dict[str, str],
    metric_keys: dict[str, str],
    out: Path,
    command: str,
    sources: list[Path],
) -> str:
    fields = harvest.fields
    answers = read.answers.group_by("model").len()
    n_answers = dict(zip(answers["model"], answers["len"]))
    languages = read.questions.group_by("language", maintain_order=True).len()
    lines = [
        f"# {title}",
        "",
        f"Written by `{command}` from the {harness_files(harvest)} in {', '.join(f'`{s}`' for s in sources)}. "
        "The folder is a study as the suite's docs/studies.md describes it: edit it as you need (fix a "
        "language in `questions.csv`, add `ratings.csv` and its criteria to `study.toml`, say which end of a "
        "metric is better), then build it and its reports:",
        "",
        "```sh",
        f"make study STUDY={out}",
        f"make figures STUDY={out}",
        "```",
        "",
        f"It holds {_count(read.questions.height, 'question')} in {_count(read.languages.height, 'language')}, "
        f"{_count(read.answers.height, 'answer')} of {_count(read.models.height, 'model')} and "
        f"{_count(read.metric_values.height, 'value')} of {_count(len(read.metrics), 'metric')}.",
        "",
        "## What was mapped from where",
        "",
        f"| study | from {harvest.harness}'s |",
        "|---|---|",
        f"| `questions.csv`: `question_id` | `{fields['question_id']}` |",
        f"| `questions.csv`: `question` | `{fields['question']}` |",
        f"| `questions.csv`: `language` | `{fields['language']}` |",
        f"| `answers.csv`: `model` (a key), `display_name` | `{fields['model']}` |",
        f"| `answers.csv`: `answer` | `{fields['answer']}` |",
        "| `metrics.csv` and `study.toml`'s `[metrics.NAME]` | the metrics below |",
        "",
        harvest.how,
        "",
        "### Files read",
        "",
        *[f"- {note}" for note in harvest.notes],
        "",
        "### Models",
        "",
        "| `model` | `display_name` (the harness's name) | answers |",
        "|---|---|---|",
        *[f"| `{model_keys[m]}` | {_cell(m)} | {n_answers.get(model_keys[m], 0)} |" for m in model_keys],
        "",
        "### Languages",
        "",
        "The names the harness gave; the suite resolves each to its code with `langcodes` (docs/studies.md).",
        "",
        "| `language` | questions |",
        "|---|---|",
        *[f"| {_cell(language)} | {n} |" for language, n in languages.iter_rows()],
        "",
        "### Metrics",
        "",
    ]
    if harvest.metrics:
        lines += [
            "| `metric` | the harness's name | from | higher is better | range |",
            "|---|---|---|---|---|",
            *[_metric_row(metric, metric_keys) for metric in harvest.metrics.values()],
        ]
    else:
        lines.append("None: the samples hold no score the study can take.")
    lines += ["", "## Left out", ""]
    lines += [f"- {what}: {n}" for what, n in sorted(harvest.left_out.items())] or ["- nothing"]
    return "\n".join(lines) + "\n"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _metric_row(metric: Metric, metric_keys: dict[str, str]) -> str:
    if metric.higher_is_better is None:
        better = "yes, assumed: the harness does not say (set `higher_is_better` in `study.toml`)"
    else:
        better = "yes" if metric.higher_is_better else "no"
    shown = "0 to 1" if metric.unit else "not given"
    return f"| `{metric_keys[metric.name]}` | `{_cell(metric.name)}` | {metric.source} | {better} | {shown} |"
