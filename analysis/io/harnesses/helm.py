"""HELM's run folders (`benchmark_output/runs/<suite>/<run>/`, as `helm-run` writes them): `run_spec.json`
(the run's name, scenario and model), `scenario_state.json` (each request to the model: the instance, its
input and the model's completion) and `per_instance_stats.json` (the metrics' statistics per instance). An
instance is a question of the run's task (the run's name without its model: `open_assistant:language=sw`)
and the completion the answer of the run's model (`adapter_spec.model`); each statistic the run spec's
metrics name is a metric, its value the statistic's mean over the instance's requests.

HELM counts a run as complete when it has written its five files (`run_spec.json`, `scenario.json`,
`scenario_state.json`, `stats.json`, `per_instance_stats.json`; its runner's `_is_run_completed`): a
folder without one of them is a run that did not finish.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import Problems
from .common import TASK, Harvest, Metric, Options, Sample, language_source, load_json, number, task_language

HARNESS = "HELM"
RUN_FILES = ("run_spec.json", "scenario.json", "scenario_state.json", "stats.json", "per_instance_stats.json")
# The arguments of a run's name that name the model rather than the task.
MODEL_ARGUMENTS = ("model", "model_deployment")


def _runs(sources: list[Path], problems: Problems) -> list[Path]:
    """The run folders: a source that holds one of a run's files, or the folders under it that do."""
    runs: list[Path] = []
    for source in sources:
        if source.is_file():
            source = source.parent
        if not source.is_dir():
            problems.add(source, None, None, "no such file or folder")
        elif any((source / name).is_file() for name in RUN_FILES):
            runs.append(source)
        else:
            found = sorted({p.parent for name in RUN_FILES for p in source.rglob(name)})
            if not found:
                problems.add(source, None, None, f"holds no HELM run folder (a folder with {', '.join(RUN_FILES)})")
            runs += found
    return list(dict.fromkeys(runs))


def task_of(run_name: str) -> str:
    """The run's name without the arguments that name the model: `mmlu:subject=anatomy,model=openai_gpt2`
    -> `mmlu:subject=anatomy`."""
    scenario, _, arguments = run_name.partition(":")
    kept = [a for a in arguments.split(",") if a and a.partition("=")[0] not in MODEL_ARGUMENTS]
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def read(sources: list[Path], options: Options, problems: Problems) -> Harvest:
    """The samples of the HELM run folders in `sources` (run folders, or a suite's folder of them)."""
    language_field = TASK if options.language else options.language_field or TASK
    runs = _runs(sources, problems)
    harvest = Harvest(
        HARNESS,
        "run",
        [run / "scenario_state.json" for run in runs],
        [],
        {},
        fields={
            "question_id": "instance.id",
            "question": "instance.input.text",
            "language": language_source(
                options, "run_spec.name" if language_field == TASK else f"scenario_spec.args.{language_field}"
            ),
            "model": "adapter_spec.model",
            "answer": "result.completions[0].text",
        },
    )
    harvest.how = (
        "A run's task is its name without the model (`run_spec.json`'s `name`); a request state's question is its "
        "instance's input and its answer the first completion; a metric's value is the mean of the statistic "
        "(`per_instance_stats.json`) over the instance's requests."
    )
    for run in runs:
        missing = [name for name in RUN_FILES if not (run / name).is_file()]
        if missing:
            problems.add(
                run,
                None,
                None,
                f"the run did not finish: {', '.join(missing)} missing (HELM writes its five files when a run completes)",
            )
            continue
        spec = load_json(run / "run_spec.json", problems, "HELM's run spec")
        state = load_json(run / "scenario_state.json", problems, "HELM's scenario state")
        stats = load_json(run / "per_instance_stats.json", problems, "HELM's per-instance statistics")
        if spec is None or state is None or stats is None:
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            problems.add(run / "run_spec.json", None, "name", "is not a HELM run spec (no run name)")
            continue
        if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
            problems.add(run / "scenario_state.json", None, "request_states", "is not a HELM scenario state")
            continue
        model = (state.get("adapter_spec") or spec.get("adapter_spec") or {}).get("model")
        if not isinstance(model, str) or not model:
            problems.add(run / "scenario_state.json", None, "adapter_spec.model", "names no model")
            continue
        task = task_of(spec["name"])
        harvest.notes.append(f"`{run.name}`: task `{task}`, model `{model}`")
        language = _language(run, spec, task, options, language_field, problems)
        if language is None:
            continue
        wanted = _metric_names(spec, options)
        values = _instance_stats(run / "per_instance_stats.json", stats, wanted, harvest, problems)
        _read_states(run / "scenario_state.json", state, task, language, model, values, harvest, problems)
    return harvest


def _language(
    run: Path, spec: dict, task: str, options: Options, language_field: str, problems: Problems
) -> str | None:
    if language_field == TASK:
        language = task_language(options, task)
        if language is None:
            problems.add(
                run / "run_spec.json",
                None,
                "name",
                f"the run's name {spec['name']!r} ends with no language code (e.g. open_assistant:language=sw); give "
                "the scenario's argument that holds it (LANGUAGE_FIELD=), or the language of every question (QUESTION_LANGUAGE=)",
            )
        return language
    arguments = (spec.get("scenario_spec") or {}).get("args") or {}
    value = arguments.get(language_field)
    if not isinstance(value, str) or not value.strip():
        problems.add(
            run / "run_spec.json",
            None,
            f"scenario_spec.args.{language_field}",
            f"is {value!r}; expected the questions' language (LANGUAGE_FIELD= names another argument of the "
            f"scenario: {', '.join(arguments) or 'it has none'}; or `task` for the language the run's name ends with)",
        )
        return None
    return value.strip()


def _metric_names(spec: dict, options: Options) -> set[str] | None:
    """The statistics to take: those the run spec's metrics name (`metric_specs[].args.names`); every one
    (None) when it names none, or when METRICS= chooses."""
    if options.metrics is not None:
        return None
    named = {
        name
        for metric in spec.get("metric_specs") or []
        for name in ((metric.get("args") or {}).get("names") or [])
        if isinstance(name, str)
    }
    return named or None


def _instance_stats(path: Path, stats, wanted: set[str] | None, harvest: Harvest, problems: Problems):
    """(instance id) -> [(statistic, value)] of the first train trial, without perturbations."""
    values: dict[str, list[tuple[str, float]]] = {}
    if not isinstance(stats, list):
        problems.add(path, None, None, "is not HELM's per-instance statistics (a list)")
        return values
    for entry in stats:
        if not isinstance(entry, dict) or entry.get("train_trial_index", 0) != 0 or entry.get("perturbation"):
            continue
        for stat in entry.get("stats") or []:
            name = (stat.get("name") or {}) if isinstance(stat, dict) else {}
            if not isinstance(name.get("name"), str) or name.get("perturbation"):
                continue
            metric = name["name"]
            if wanted is not None and metric not in wanted:
                harvest.left_out[f"statistic `{metric}` (not a metric the run spec names; METRICS= may name it)"] += 1
                continue
            mean = number(stat.get("mean"))
            if mean is None and number(stat.get("count")):
                total = number(stat.get("sum"))
                mean = total / stat["count"] if total is not None else None
            if mean is None:
                harvest.left_out[f"statistic `{metric}` without a value"] += 1
                continue
            harvest.metrics.setdefault(metric, Metric(metric, source=f"statistic `{metric}`: its `mean`"))
            values.setdefault(str(entry.get("instance_id")), []).append((metric, mean))
    return values


def _read_states(path: Path, state: dict, task, language, model, values, harvest: Harvest, problems: Problems) -> None:
    seen: set[str] = set()
    for number_, request_state in enumerate(state["request_states"], start=1):
        instance = request_state.get("instance") if isinstance(request_state, dict) else None
        if not isinstance(instance, dict):
            problems.add(path, f"request state {number_}", "instance", "missing: not a HELM scenario state")
            continue
        instance_id = str(instance.get("id"))
        record = f"request state {number_} (instance {instance_id!r})"
        if request_state.get("train_trial_index", 0) != 0:
            harvest.left_out["requests of train trials after the first"] += 1
            continue
        if instance.get("perturbation"):
            harvest.left_out["requests of perturbed instances"] += 1
            continue
        if request_state.get("reference_index") is not None or request_state.get("request_mode") == "calibration":
            problems.add(
                path,
                record,
                "reference_index",
                "a request that scores a reference, not a generated answer: a study needs the model's answers "
                "(a run of a generation adapter)",
            )
            continue
        if instance_id in seen:
            continue
        seen.add(instance_id)
        n = len(problems.items)
        question = (instance.get("input") or {}).get("text")
        if not isinstance(question, str) or not question.strip():
            problems.add(path, record, "instance.input.text", "is empty: the study needs the question's text")
        result = request_state.get("result")
        completions = result.get("completions") if isinstance(result, dict) else None
        if not isinstance(result, dict):
            problems.add(path, record, "result", "missing: the request was not made, so there is no answer")
        elif not result.get("success", True):
            problems.add(path, record, "result", f"has no answer: the request failed ({result.get('error')})")
        elif not completions or not isinstance(completions[0].get("text"), str):
            problems.add(path, record, "result.completions", "has no answer: no completion")
        if len(problems.items) > n:
            continue
        assert isinstance(question, str) and isinstance(completions, list)  # else a problem, above
        if instance.get("references"):
            harvest.left_out["the instances' references (the study format has no reference answers)"] += 1
        scores = tuple(values.get(instance_id, ()))
        harvest.samples.append(
            Sample(path, record, task, instance_id, language, question, model, completions[0]["text"], scores)
        )
