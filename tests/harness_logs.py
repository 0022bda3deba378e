"""Real Inspect AI eval logs, written by Inspect itself: a small multilingual task (what number follows n,
asked in Swahili, Hausa and Yoruba, the language in each sample's metadata) run offline by Inspect's
`mockllm` provider for three models whose answers are known by construction, so that every score is
known before the logs are read:

- `mockllm/alpha` answers every question right (Inspect's `match` scores it C, 1);
- `mockllm/beta` answers the questions of even n right and the others wrong (C, I: 0.5 on average);
- `mockllm/gamma` answers every question wrong (I, 0);
- the scorer `words` gives the number of words of the answer, which is `ANSWER_WORDS[language]` for every one.

alpha and beta are logged as `.eval`, gamma as `.json` (the two formats of Inspect's logs).
"""

from __future__ import annotations

import warnings
from pathlib import Path

N_QUESTIONS = 10  # per language: the reports show a mean over at least 10 values
MODELS = ("mockllm/alpha", "mockllm/beta", "mockllm/gamma")
# (question, answer) templates; the answer names a number.
TEMPLATES = {
    "Swahili": ("Ni nambari gani inayofuata baada ya {n}?", "Nambari inayofuata ni {m} bila shaka yoyote."),
    "Hausa": ("Wace lamba ce take bin lamba {n}?", "Lambar da take bi ita ce {m} ba tare da shakka ba."),
    "Yoruba": ("Nọ́mbà wo ló tẹ̀lé nọ́mbà {n}?", "Nọ́mbà tó tẹ̀lé e ni {m} láìsí iyèméjì kankan."),
}
ANSWER_WORDS = {language: len(answer.split()) for language, (_, answer) in TEMPLATES.items()}


def right(model: str, n: int) -> bool:
    """Whether `model` answers the question of n right."""
    return model == "mockllm/alpha" or (model == "mockllm/beta" and n % 2 == 0)


def samples(changed: str | None = None):
    """The task's samples: ids `sw-1` ... `yo-10`; `changed` gives one sample another question's text."""
    from inspect_ai.dataset import Sample

    found = []
    for language, (question, _) in TEMPLATES.items():
        prefix = {"Swahili": "sw", "Hausa": "ha", "Yoruba": "yo"}[language]
        for n in range(1, N_QUESTIONS + 1):
            sample_id = f"{prefix}-{n}"
            text = question.format(n=n) + (" (toleo jipya)" if sample_id == changed else "")
            found.append(Sample(id=sample_id, input=text, target=str(n + 1), metadata={"language": language, "n": n}))
    return found


def task(changed: str | None = None, name: str = "next_number"):
    from inspect_ai import Task
    from inspect_ai.scorer import Score, match, mean, scorer

    @scorer(metrics=[mean()])
    def words():
        async def score(state, target):
            return Score(value=len(state.output.completion.split()))

        return score

    return Task(dataset=samples(changed), scorer=[match(location="any"), words()], name=name)


def model(name: str, fail: bool = False):
    """A mockllm model that answers as `right` says (`fail`: every call raises, as a provider that is down)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    by_question = {}
    for question, answer in TEMPLATES.values():
        for n in range(1, N_QUESTIONS + 1):
            by_question[question.format(n=n)] = answer.format(m=n + 1 if right(name, n) else n + 7)

    def generate(messages, tools, tool_choice, config):
        if fail:
            raise RuntimeError("the provider is down")
        text = by_question.get(messages[-1].text, "Sijui.")
        output = ModelOutput.from_content(model=name, content=text)
        # Given, so that mockllm does not count tokens with tiktoken (which downloads its encoding).
        output.usage = ModelUsage(input_tokens=10, output_tokens=len(text), total_tokens=10 + len(text))
        return output

    return get_model(name, custom_outputs=generate)


def run(folder: Path, models, log_format: str = "eval", **options) -> list[Path]:
    """Run the task on each model offline; the logs' paths."""
    from inspect_ai import eval as inspect_eval

    task_options = {key: options.pop(key) for key in ("changed", "name") if key in options}
    with warnings.catch_warnings():
        # Inspect's retry policy passes tenacity a parameter tenacity deprecated: its warning, not ours.
        warnings.filterwarnings("ignore", "The 'initial' parameter is deprecated", DeprecationWarning)
        logs = inspect_eval(
            task(**task_options),
            model=list(models),
            log_dir=str(folder),
            log_format=log_format,
            display="none",
            **options,
        )
    return [Path(log.location) for log in logs]


def write_logs(folder: Path) -> dict[str, list[Path]]:
    """The run of the three models (folder/run/), and the bad logs beside it: an unfinished run (error/),
    a run with a sample that failed (failed-sample/), a run of the task whose sample sw-3 has another text
    (changed/), a run of two epochs (epochs/)."""
    return {
        "run": run(folder / "run", (model(m) for m in MODELS[:2]))
        + run(folder / "run", [model(MODELS[2])], log_format="json"),
        "error": run(folder / "error", [model("mockllm/delta", fail=True)]),
        "failed-sample": run(
            folder / "failed-sample", [model("mockllm/delta", fail=True)], fail_on_error=False, limit=1
        ),
        "changed": run(folder / "changed", [model("mockllm/delta")], changed="sw-3"),
        "epochs": run(folder / "epochs", [model("mockllm/delta")], epochs=2),
    }
