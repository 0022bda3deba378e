"""lm-evaluation-harness's `--log_samples` output: a folder per model with `results_<date>.json` and, for
each task, `samples_<task>_<date>.jsonl` (one line per document and filter), as its `EvaluationTracker`
writes them. A line is a question of the task (`doc_id`, the `doc`'s question field) and the answer of
the results file's model (`model_name`): the model's text, `resps`; each metric the line names (its
`metrics`) is a metric, after the filter's name when the filter is not `none` (`exact_match,strict-match`),
which end is better as the results file's `higher_is_better` says.

The harness writes the results file first and the samples files after it, when the run has ended: a
samples file without its results file, or with fewer documents than the results file counts
(`n-samples`), is a run that did not finish.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from ...core.errors import Problems, reason
from .common import TASK, Harvest, Metric, Options, Sample, language_source, load_json, number, task_language

HARNESS = "lm-evaluation-harness"
DEFAULT_QUESTION_FIELD = "question"  # a key of the samples' `doc`
PROMPT = "arguments"  # QUESTION_FIELD= for the prompt as sent to the model
# `samples_<task>_<date>.jsonl` and `results_<date>.json`, the date as the harness writes it
# (`datetime.now().isoformat()` with `-` for `:`).
_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_NAME = re.compile(rf"samples_(?P<task>.+)_(?P<date>{_DATE})\.jsonl")
RESULTS_NAME = re.compile(rf"(?P<stem>.+)_(?P<date>{_DATE})\.json")


def _samples_files(sources: list[Path], problems: Problems) -> list[Path]:
    found: list[Path] = []
    for source in sources:
        if source.is_dir():
            files = sorted(p for p in source.rglob("samples_*.jsonl") if SAMPLES_NAME.fullmatch(p.name))
            if not files:
                problems.add(
                    source,
                    None,
                    None,
                    "holds no lm-evaluation-harness samples file (samples_<task>_<date>.jsonl: run lm-eval with "
                    "--log_samples)",
                )
            found += files
        elif not source.is_file():
            problems.add(source, None, None, "no such file or folder")
        elif SAMPLES_NAME.fullmatch(source.name):
            found.append(source)
        elif (results := RESULTS_NAME.fullmatch(source.name)) and not source.name.startswith("samples_"):
            found += sorted(source.parent.glob(f"samples_*_{results['date']}.jsonl"))
        else:
            problems.add(
                source,
                None,
                None,
                "is not an lm-evaluation-harness output: expected samples_<task>_<date>.jsonl (--log_samples), its "
                "results_<date>.json, or a folder of them",
            )
    return list(dict.fromkeys(found))


def _results(samples_file: Path, date: str, problems: Problems) -> tuple[Path, dict] | None:
    """The results file written with the samples file (same folder, same date)."""
    candidates = [p for p in sorted(samples_file.parent.glob(f"*_{date}.json")) if not p.name.startswith("samples_")]
    if not candidates:
        problems.add(
            samples_file,
            None,
            None,
            f"the run did not finish: no results file (results_{date}.json) beside it, which lm-evaluation-harness "
            "writes when the run ends",
        )
        return None
    data = load_json(candidates[0], problems, "lm-evaluation-harness's results JSON")
    if data is None:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        problems.add(candidates[0], None, "results", "is not an lm-evaluation-harness results file (no `results`)")
        return None
    return candidates[0], data


def _model_name(data: dict) -> str | None:
    """The model's name as the harness gives it: `model_name` (since 2024), else `pretrained=` or `model=`
    of `config.model_args`, else `config.model`."""
    if isinstance(data.get("model_name"), str) and data["model_name"].strip():
        return data["model_name"].strip()
    config: dict = data["config"] if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    if isinstance(args, dict):
        args = ",".join(f"{k}={v}" for k, v in args.items())
    if isinstance(args, str):
        for part in args.split(","):
            name, _, value = part.partition("=")
            if name.strip() in ("pretrained", "model") and value.strip():
                return value.strip()
    model = config.get("model")
    return model.strip() if isinstance(model, str) and model.strip() else None


def read(sources: list[Path], options: Options, problems: Problems) -> Harvest:
    """The samples of the lm-evaluation-harness samples files in `sources`."""
    language_field = TASK if options.language else options.language_field or TASK
    question_field = options.question_field or DEFAULT_QUESTION_FIELD
    files = _samples_files(sources, problems)
    harvest = Harvest(
        HARNESS,
        "samples file",
        files,
        [],
        {},
        fields={
            "question_id": "doc_id",
            "question": "arguments.gen_args_0.arg_0" if question_field == PROMPT else f"doc.{question_field}",
            "language": language_source(options, "task" if language_field == TASK else f"doc.{language_field}"),
            "model": "model_name",
            "answer": "resps",
        },
    )
    harvest.how = (
        "A line's task is the one its file is named after (`samples_<task>_<date>.jsonl`); its model is the "
        "`model_name` of the results file of the same date; its answer is the model's first response, "
        "`resps[0][0]` (`filtered_resps`, what the metrics scored, is left out)."
    )
    for path in files:
        name = SAMPLES_NAME.fullmatch(path.name)
        assert name is not None  # `_samples_files` keeps only such names
        found = _results(path, name["date"], problems)
        if found is None:
            continue
        results_path, data = found
        model = _model_name(data)
        if model is None:
            problems.add(
                results_path, None, "model_name", "names no model (nor does config.model_args or config.model)"
            )
            continue
        task = _task(name["task"], data)
        harvest.notes.append(f"`{path.name}`: task `{task}`, model `{model}` (from `{results_path.name}`)")
        _read_samples(path, task, model, data, options, language_field, question_field, harvest, problems)
    return harvest


def _task(file_task: str, data: dict) -> str:
    """The task's name as the results file gives it (the file name has `_` for what is not a word character)."""
    named: dict = data["n-samples"] if isinstance(data.get("n-samples"), dict) else data["results"]
    return next((t for t in named if re.sub(r"\W", "_", t) == file_task), file_task)


def _lines(path: Path, problems: Problems):
    """(line number, object) of a JSONL file; a line that is not a JSON object is a problem (a run cut
    while it wrote the file)."""
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        problems.add(path, None, None, f"cannot be read: {reason(exc)}")
        return
    with handle:
        try:
            for number_, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.add(path, f"line {number_}", None, f"is not JSON ({exc.msg}): was the file cut short?")
                    continue
                if not isinstance(row, dict):
                    problems.add(path, f"line {number_}", None, "is not a JSON object: not a samples file's line")
                    continue
                yield number_, row
        except UnicodeDecodeError as exc:
            problems.add(path, None, None, f"is not UTF-8 text ({exc.reason})")


def _read_samples(path, task, model, data, options, language_field, question_field, harvest, problems) -> None:
    better = data.get("higher_is_better", {}).get(task, {}) if isinstance(data.get("higher_is_better"), dict) else {}
    language = task_language(options, task) if language_field == TASK else None
    if language_field == TASK and language is None:
        problems.add(
            path,
            None,
            "task",
            f"the task's name {task!r} ends with no language code (e.g. mgsm_native_cot_sw); give the field of the "
            "docs that holds it (LANGUAGE_FIELD=), or the language of every question (QUESTION_LANGUAGE=)",
        )
        return
    docs: dict[str, Sample] = {}  # the first line of each document, without its scores
    scores: dict[str, list[tuple[str, float]]] = {}  # each document's scores, of every filter's line
    refused: set[str] = set()  # documents whose first line has a problem (said once)
    filters: set[tuple[str, str]] = set()
    for line, row in _lines(path, problems):
        record = f"line {line}"
        if "doc_id" not in row or "doc" not in row or "resps" not in row:
            problems.add(path, record, None, "has no doc_id, doc or resps: not a line of an lm-eval samples file")
            continue
        doc_id = str(row["doc_id"])
        record = f"line {line} (doc_id {doc_id})"
        filter_name = str(row.get("filter") or "none")
        if (doc_id, filter_name) in filters:
            problems.add(path, record, "doc_id", f"is there twice with the filter {filter_name!r}")
            continue
        filters.add((doc_id, filter_name))
        if doc_id in refused:
            continue
        if doc_id not in docs:
            sample = _sample(path, record, row, task, doc_id, language, language_field, question_field, model, problems)
            if sample is None:
                refused.add(doc_id)
                continue
            docs[doc_id] = sample
            doc = row["doc"] if isinstance(row["doc"], dict) else {}
            for key in sorted(doc.keys() - {question_field, language_field}):
                harvest.left_out[f"the docs' `{key}`"] += 1
        scores.setdefault(doc_id, []).extend(_scores(row, filter_name, better, harvest))
    counts = data.get("n-samples", {}).get(task) if isinstance(data.get("n-samples"), dict) else None
    expected = counts.get("effective") if isinstance(counts, dict) else None
    n_docs = len({doc_id for doc_id, _ in filters})
    if isinstance(expected, int) and n_docs < expected:
        problems.add(
            path,
            None,
            None,
            f"holds {n_docs} documents of task {task!r}, but its results file counts {expected} (n-samples): the run "
            "did not finish writing it",
        )
    harvest.samples += [dataclasses.replace(sample, scores=tuple(scores[d])) for d, sample in docs.items()]


def _sample(path, record, row, task, doc_id, language, language_field, question_field, model, problems):
    n = len(problems.items)
    doc = row["doc"] if isinstance(row["doc"], dict) else {}
    if question_field == PROMPT:
        arguments = row.get("arguments")
        first = arguments.get("gen_args_0", {}) if isinstance(arguments, dict) else None
        question = first.get("arg_0") if isinstance(first, dict) else None
        if isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
            question = arguments[0][0]  # before the harness named the arguments (2024)
        field = "arguments.gen_args_0.arg_0"
    else:
        question, field = doc.get(question_field), f"doc.{question_field}"
    if not isinstance(question, str) or not question.strip():
        problems.add(
            path,
            record,
            field,
            f"is {question!r:.60}; expected the question's text (QUESTION_FIELD= names the doc's field that holds "
            f"it, or `{PROMPT}` for the prompt as sent; the doc's fields: {', '.join(map(str, doc)) or 'none'})",
        )
    if language_field != TASK:
        value = doc.get(language_field)
        if not isinstance(value, str) or not value.strip():
            problems.add(
                path,
                record,
                f"doc.{language_field}",
                f"is {value!r:.60}; expected the question's language (LANGUAGE_FIELD= names another field of the "
                "docs, or `task` for the language the task's name ends with)",
            )
        else:
            language = value.strip()
    answer = _answer(row["resps"])
    if answer is None:
        problems.add(
            path,
            record,
            "resps",
            f"holds no generated text ({json.dumps(row['resps'])[:60]}): a study needs the model's answer (a "
            "loglikelihood or multiple-choice task has none)",
        )
    if len(problems.items) > n:
        return None
    return Sample(path, record, task, doc_id, language, question, model, answer)


def _answer(resps) -> str | None:
    """The model's first response to the document's first request (`resps` is a list per request of the
    request's responses)."""
    if isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0] and isinstance(resps[0][0], str):
        return resps[0][0]
    return None


def _scores(row: dict, filter_name: str, better: dict, harvest: Harvest):
    names = row.get("metrics")
    if not isinstance(names, list):  # before the harness listed them (2024): every number that is not a field
        names = [k for k, v in row.items() if k not in _FIELDS and number(v) is not None]
    found = []
    for metric in names:
        name = metric if filter_name == "none" else f"{metric},{filter_name}"
        value = number(row.get(metric))
        if value is None:
            harvest.left_out[f"metric `{name}` values that are not numbers"] += 1
            continue
        harvest.metrics.setdefault(
            name,
            Metric(
                name,
                higher_is_better=better.get(metric) if isinstance(better.get(metric), bool) else None,
                source=f"the lines' `{metric}`"
                + (f" where `filter` is `{filter_name}`" if filter_name != "none" else ""),
            ),
        )
        found.append((name, value))
    return tuple(found)


# The fields of a samples file's line that are not a metric.
_FIELDS = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
}
