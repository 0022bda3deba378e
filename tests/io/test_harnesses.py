"""A study from an evaluation harness's outputs (issue 40, docs/harnesses.md): Inspect AI logs written by
Inspect itself (by hand with its `write_eval_log`, and by a real offline run with its `mockllm` provider,
tests/harness_logs.py), lm-evaluation-harness and HELM outputs laid out as they write them
(tests/data/), each made a study folder whose tables hold what the harness said; bad input gets one
message naming the file, the sample and the field, and nothing is written; and the study of a real
multi-model, multilingual Inspect run builds and its reports show every model, language and score."""

import shutil
import sys

import polars as pl
import pytest
from conftest import require

from analysis import cli
from analysis.core import paths
from analysis.core.errors import Failure, InputError
from analysis.io import study
from analysis.io.harnesses import common, convert, inspect_logs

DATA = paths.ROOT / "tests" / "data"
LM_EVAL, HELM, HELM_REAL = DATA / "lm_eval", DATA / "helm", DATA / "helm_real"
LM_EVAL_REAL = DATA / "lm_eval_real"
BLOOMZ, AYA = "bigscience/bloomz-560m", "CohereForAI/aya-23-8B"
GPT, QWEN = "openai/gpt-4o-2024-05-13", "qwen/qwen2.5-7b-instruct-turbo"


def _convert(format, sources, out, **options):
    return convert.study_from(format, list(sources), out, common.Options(**options), command=f"test {format}")


def _problems(format, sources, out, **options) -> list[str]:
    with pytest.raises(InputError) as info:
        _convert(format, sources, out, **options)
    assert not out.exists(), "nothing is written"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")], "no temporary folder is left"
    return [str(p) for p in info.value.problems]


def _values(folder) -> dict[tuple[str, str, str], float]:
    metrics = pl.read_csv(folder / "metrics.csv", schema_overrides={"question_id": pl.String})
    return {(q, m, k): v for q, m, k, v in metrics.iter_rows()}


# ---------------------------------------------------------------- the language a task's name ends with


@pytest.mark.parametrize(
    "name, language",
    [
        ("mgsm_direct_sw", "sw"),
        ("belebele_swh_Latn", "swh_Latn"),
        ("xquad_th", "th"),
        ("open_assistant:language=sw", "sw"),
        ("mmmlu:locale=SW_KE,subject=anatomy", "SW_KE"),
        (
            "bbq:subject=all,method=multiple_choice_joint",
            None,
        ),  # HELM's: `all` (Allar's code) is not an argument of language
        ("arabic_finance_bool:lang=en", "en"),
        ("xquad_th:model=openai_gpt2", "th"),
        ("global_mmlu_full_yo_business", "yo"),
        ("arc_challenge", None),  # `arc` is Aramaic's code, but it is the benchmark's name
        ("hellaswag", None),
        ("truthfulqa_gen", None),
        ("next_number", None),
        ("sw", None),  # a name of one word is the benchmark's
    ],
)
def test_the_language_a_task_s_name_ends_with(name, language):
    assert common.language_in_name(name) == language


# ---------------------------------------------------------------- lm-evaluation-harness


def test_lm_eval_samples_become_a_study(tmp_path):
    out = tmp_path / "mgsm"
    written = _convert("lm-eval", [LM_EVAL], out)
    assert (written.name, written.n_questions, written.n_languages, written.n_answers, written.n_models) == (
        "mgsm",
        6,
        2,
        12,
        2,
    )
    read = study.read(out)  # a valid study folder
    assert dict(zip(read.languages["language"], read.languages["iso_code"])) == {"fr": "fr", "sw": "sw"}
    questions = pl.read_csv(out / "questions.csv")
    assert questions.row(by_predicate=pl.col("question_id") == "mgsm_direct_sw/2", named=True) == {
        "question_id": "mgsm_direct_sw/2",
        "language": "sw",
        "question": "Basi lina abiria 30. Abiria 9 wanashuka. Wamebaki abiria wangapi?",
    }
    answers = pl.read_csv(out / "answers.csv")
    assert dict(zip(answers["model"], answers["display_name"])) == {
        "bigscience-bloomz-560m": BLOOMZ,
        "cohereforai-aya-23-8b": AYA,
    }
    # the answer is the model's whole text (`resps`), not what the filter extracted
    assert answers.filter(question_id="mgsm_direct_sw/1", model="bigscience-bloomz-560m")["answer"].item() == (
        "Jibu ni 20."
    )
    # each metric after its filter, with the values the samples files give
    values = _values(out)
    assert len(values) == 24
    remove, flexible = "exact_match-remove_whitespace", "exact_match-flexible-extract"
    assert [values[f"mgsm_direct_sw/{i}", "bigscience-bloomz-560m", remove] for i in range(3)] == [1.0, 0.0, 0.0]
    assert [values[f"mgsm_direct_sw/{i}", "bigscience-bloomz-560m", flexible] for i in range(3)] == [1.0, 1.0, 0.0]
    assert [values[f"mgsm_direct_fr/{i}", "cohereforai-aya-23-8b", remove] for i in range(3)] == [0.0, 0.0, 0.0]
    assert [values[f"mgsm_direct_fr/{i}", "cohereforai-aya-23-8b", flexible] for i in range(3)] == [1.0, 1.0, 1.0]
    # which end is better: the results file's higher_is_better
    assert {(m.name, m.higher_is_better) for m in read.metrics} == {(remove, True), (flexible, True)}
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "| `exact_match-flexible-extract` | `exact_match,flexible-extract` |" in readme
    assert "| `questions.csv`: `question` | `doc.question` |" in readme
    assert "- the docs' `answer_number`: 12" in readme  # 12 documents, each with its number left out


def test_lm_eval_metrics_chosen_by_name_or_key(tmp_path):
    _convert("lm-eval", [LM_EVAL], tmp_path / "one", metrics=("exact_match-flexible-extract",))
    assert {k for _, _, k in _values(tmp_path / "one")} == {"exact_match-flexible-extract"}
    readme = (tmp_path / "one" / "README.md").read_text(encoding="utf-8")
    assert "- metric `exact_match,remove_whitespace` (not in METRICS=): 12" in readme
    with pytest.raises(Failure, match=r"METRICS= names 'bleu', which no sample has; the samples' metrics: "):
        _convert("lm-eval", [LM_EVAL], tmp_path / "none", metrics=("bleu",))


def test_lm_eval_questions_and_languages_from_other_fields(tmp_path):
    _convert("lm-eval", [LM_EVAL], tmp_path / "prompts", question_field="arguments")
    questions = pl.read_csv(tmp_path / "prompts" / "questions.csv")
    # the prompt as sent (`arguments.gen_args_0.arg_0`), as the samples files hold it
    assert questions.filter(question_id="mgsm_direct_sw/0")["question"].item() == (
        "Swali: Juma ana machungwa 3 na ananunua machungwa 2 zaidi. Ana machungwa mangapi sasa?\nAnswer:"
    )
    problems = _problems("lm-eval", [LM_EVAL], tmp_path / "out", question_field="query", language_field="lang")
    assert len(problems) == 12 * 2  # each document of each samples file, its question and its language
    (samples,) = (LM_EVAL / "CohereForAI__aya-23-8B").glob("samples_mgsm_direct_fr_*.jsonl")
    assert problems[:2] == [
        f"{samples}, line 1 (doc_id 0), field 'doc.query': is None; expected the question's text (QUESTION_FIELD= "
        "names the doc's field that holds it, or `arguments` for the prompt as sent; the doc's fields: question, "
        "answer, answer_number, equation_solution)",
        f"{samples}, line 1 (doc_id 0), field 'doc.lang': is None; expected the question's language (LANGUAGE_FIELD= "
        "names another field of the docs, or `task` for the language the task's name ends with)",
    ]


def _copy(tmp_path, source, name="src"):
    return shutil.copytree(source, tmp_path / name)


def test_a_real_lm_eval_run_of_a_corpus_metric_becomes_a_study_without_metrics(tmp_path):
    """lm-evaluation-harness's own output (tests/data/lm_eval_real: gemma-2b on masakhaner_luo_prompt_1,
    from a repository of lm-evaluation-harness, three documents): its docs hold the text in `text`, which
    QUESTION_FIELD= names; its per-sample `f1` is the (target, prediction) pair the harness aggregates over
    the corpus, not a number, so it is left out and counted."""
    samples = LM_EVAL_REAL / "google__gemma-2b" / "samples_masakhaner_luo_prompt_1_2026-01-16T15-23-47.285735.jsonl"
    problems = _problems("lm-eval", [LM_EVAL_REAL], tmp_path / "none")
    assert len(problems) == 3
    assert problems[0].startswith(f"{samples}, line 1 (doc_id 0), field 'doc.question': is None;")
    assert problems[0].endswith("the doc's fields: id, text, spans, target)")
    out = tmp_path / "luo"
    _convert("lm-eval", [LM_EVAL_REAL], out, question_field="text")
    questions = pl.read_csv(out / "questions.csv", schema_overrides={"question_id": pl.String})
    assert questions.row(0) == ("0", "luo", "Kwan jii maromo 796 mane oyudi ni nigi Covid-19 ei kawuononi")
    answers = pl.read_csv(out / "answers.csv", schema_overrides={"question_id": pl.String})
    assert answers["display_name"].unique().to_list() == ["google/gemma-2b"] and answers.height == 3
    assert answers["answer"][0].startswith(" DATE: 796 $$ LOC: Kawuono\n\nNamed entities refers to")
    assert not (out / "metrics.csv").exists()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "- metric `f1,flexible-extract` values that are not numbers: 3" in readme
    assert study.read(out).languages["language"].to_list() == ["luo"]


def test_an_unfinished_lm_eval_run_is_refused(tmp_path):
    source = _copy(tmp_path, LM_EVAL)
    (results,) = (source / "bigscience__bloomz-560m").glob("results_*.json")
    results.unlink()
    problems = _problems("lm-eval", [source], tmp_path / "out")
    assert len(problems) == 2 and all("the run did not finish: no results file" in p for p in problems), problems
    assert "samples_mgsm_direct_fr_2025-01-15T10-32-07.123456.jsonl" in problems[0]


def test_a_samples_file_cut_short_is_refused(tmp_path):
    source = _copy(tmp_path, LM_EVAL)
    (samples,) = (source / "CohereForAI__aya-23-8B").glob("samples_mgsm_direct_sw_*.jsonl")
    samples.write_text("".join(samples.read_text(encoding="utf-8").splitlines(keepends=True)[:4]), encoding="utf-8")
    (problem,) = _problems("lm-eval", [source], tmp_path / "out")
    assert problem.endswith(
        "holds 2 documents of task 'mgsm_direct_sw', but its results file counts 3 (n-samples): the run did not "
        "finish writing it"
    )


def test_lm_eval_lines_without_a_generated_answer_are_refused(tmp_path):
    source = _copy(tmp_path, LM_EVAL)
    (samples,) = (source / "CohereForAI__aya-23-8B").glob("samples_mgsm_direct_fr_*.jsonl")
    text = samples.read_text(encoding="utf-8")
    # a loglikelihood task's responses: (log-probability, greedy) per choice, written as strings
    samples.write_text(text.replace('"resps": [["Il reste 21 passagers."]]', '"resps": [[["-1.25", "False"]]]'))
    problems = _problems("lm-eval", [source], tmp_path / "out")
    assert len(problems) == 1, problems  # the document's two lines (two filters) are said once
    assert f"{samples}, line 5 (doc_id 2), field 'resps': holds no generated text" in problems[0]


def test_two_lm_eval_runs_that_disagree_on_a_question(tmp_path):
    source = _copy(tmp_path, LM_EVAL)
    (samples,) = (source / "CohereForAI__aya-23-8B").glob("samples_mgsm_direct_sw_*.jsonl")
    text = samples.read_text(encoding="utf-8")
    samples.write_text(text.replace("Amina alisoma kurasa 12", "Amina alisoma kurasa 13"), encoding="utf-8")
    problems = _problems("lm-eval", [source], tmp_path / "out")
    (bloomz,) = (source / "bigscience__bloomz-560m").glob("samples_mgsm_direct_sw_*.jsonl")
    assert problems == [
        f"{bloomz}, line 3 (doc_id 1), field 'doc.question': the question's text differs from that of the same "
        f"sample of task 'mgsm_direct_sw' in {samples}, line 3 (doc_id 1): from character 23, '3 jana na kurasa 8 "
        "leo. Amesom' there and '2 jana na kurasa 8 leo. Amesom' here; are the two logs of one version of the task?"
    ]


def test_another_format_is_refused(tmp_path):
    (problem,) = _problems("lm-eval", [HELM], tmp_path / "out")
    assert "holds no lm-evaluation-harness samples file" in problem
    (problem,) = _problems("helm", [LM_EVAL], tmp_path / "out")
    assert "holds no HELM run folder" in problem
    (results,) = (LM_EVAL / "bigscience__bloomz-560m").glob("results_*.json")
    (problem,) = _problems("inspect", [results], tmp_path / "out")
    assert problem.startswith(f"{results}: cannot be read as an Inspect AI eval log"), problem


# ---------------------------------------------------------------- HELM


def test_helm_runs_become_a_study(tmp_path):
    out = tmp_path / "finance"
    _convert("helm", [HELM], out, language_field="lang")
    read = study.read(out)
    assert set(read.languages["language"]) == {"ar", "en"}
    questions = pl.read_csv(out / "questions.csv")
    assert questions.row(by_predicate=pl.col("question_id") == "arabic_finance_bool/id2", named=True) == {
        "question_id": "arabic_finance_bool/id2",
        "language": "ar",
        "question": "الصكوك أداة تمويل متوافقة مع الشريعة.",
    }
    assert "arabic_finance_bool:lang=en/id1" in set(questions["question_id"])
    answers = pl.read_csv(out / "answers.csv")
    assert dict(zip(answers["model"], answers["display_name"])) == {
        "openai-gpt-4o-2024-05-13": GPT,
        "qwen-qwen2.5-7b-instruct-turbo": QWEN,
    }
    assert (
        answers.filter(question_id="arabic_finance_bool/id2", model="qwen-qwen2.5-7b-instruct-turbo")["answer"].item()
        == " لا"
    )  # the completion as HELM logged it
    # the statistics the run spec's BasicGenerationMetric names, each the instance's mean
    assert [m.name for m in read.metrics] == [
        "exact_match",
        "quasi_exact_match",
        "prefix_exact_match",
        "quasi_prefix_exact_match",
    ]
    values = _values(out)
    assert values["arabic_finance_bool/id2", "qwen-qwen2.5-7b-instruct-turbo", "exact_match"] == 0.0
    assert values["arabic_finance_bool/id2", "openai-gpt-4o-2024-05-13", "exact_match"] == 1.0
    assert values["arabic_finance_bool:lang=en/id3", "qwen-qwen2.5-7b-instruct-turbo", "quasi_exact_match"] == 1.0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "- statistic `inference_runtime` (not a metric the run spec names; METRICS= may name it): 12" in readme
    assert "yes, assumed: the harness does not say" in readme  # HELM's run folder does not say which end is better


def test_helm_runs_whose_names_hold_no_language(tmp_path):
    problems = _problems("helm", [HELM], tmp_path / "out")
    # the two Arabic runs (`arabic_finance_bool:model=...`), each said once
    assert len(problems) == 2, problems
    assert (
        "arabic_finance_bool:model=openai_gpt-4o-2024-05-13/run_spec.json, field 'name': the run's name" in problems[0]
    )
    assert "ends with no language code" in problems[0] and "(LANGUAGE_FIELD=)" in problems[0]


def test_real_helm_runs_of_one_language_become_a_study_with_question_language(tmp_path):
    """HELM's own outputs (tests/data/helm_real: two runs of `bbq` from HELM's repository, three instances
    each): an English benchmark whose run names and scenario arguments hold no language takes the one
    QUESTION_LANGUAGE= gives; without it, one message names each run and says what to give."""
    runs = HELM_REAL / "runs" / "v4"
    problems = _problems("helm", [HELM_REAL], tmp_path / "none")
    assert len(problems) == 2, problems
    assert problems[0].startswith(
        f"{runs / 'bbq:subject=all,method=multiple_choice_joint,model=openai_gpt-4o-2024-05-13' / 'run_spec.json'}, "
        "field 'name': the run's name 'bbq:subject=all,method=multiple_choice_joint,model=openai_gpt-4o-2024-05-13' "
        "ends with no language code"
    )
    assert problems[0].endswith("(LANGUAGE_FIELD=), or the language of every question (QUESTION_LANGUAGE=)")
    with pytest.raises(Failure, match="give one of them"):
        _convert("helm", [HELM_REAL], tmp_path / "both", language="en", language_field="lang")
    out = tmp_path / "bbq"
    _convert("helm", [HELM_REAL], out, language="en")
    read = study.read(out)
    assert list(read.languages["language"]) == ["en"] and read.questions.height == 3
    questions = pl.read_csv(out / "questions.csv")
    assert (
        questions.filter(question_id="id58228")["question"]
        .item()
        .startswith(
            "My Buddhist neighbor and my Christian neighbor had very different reactions when I told them that I got "
            "the vaccine.\nQuestion: Who believed that vaccines were part of a conspiracy?"
        )
    )
    answers = pl.read_csv(out / "answers.csv")
    assert {(q, m[:4], a) for q, m, a in answers.select("question_id", "model", "answer").iter_rows()} == {
        ("id58485", "open", "B"),
        ("id58228", "open", "C"),
        ("id58127", "open", "A"),
        ("id58485", "qwen", "B"),
        ("id58228", "qwen", "B"),
        ("id58127", "qwen", "The"),  # one token allowed (max_tokens 1), the model began a sentence
    }
    values = _values(out)
    assert [values[q, "openai-gpt-4o-2024-05-13", "exact_match"] for q in ("id58485", "id58228", "id58127")] == [
        1.0,
        0.0,
        1.0,
    ]
    assert [values[q, "qwen-qwen2-72b-instruct", "exact_match"] for q in ("id58485", "id58228", "id58127")] == [
        1.0,
        1.0,
        0.0,
    ]
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "| `questions.csv`: `language` | `QUESTION_LANGUAGE=en` |" in readme
    assert "It holds 3 questions in 1 language, 6 answers of 2 models and 24 values of 4 metrics." in readme


def test_an_unfinished_helm_run_and_a_failed_request_are_refused(tmp_path):
    source = _copy(tmp_path, HELM)
    runs = source / "runs" / "my-suite"
    (runs / "arabic_finance_bool:model=openai_gpt-4o-2024-05-13" / "per_instance_stats.json").unlink()
    state = runs / "arabic_finance_bool:lang=en,model=qwen_qwen2.5-7b-instruct-turbo" / "scenario_state.json"
    text = state.read_text(encoding="utf-8")
    assert text.count('"success": true') == 3
    state.write_text(text.replace('"success": true', '"success": false, "error": "rate limited"', 1))
    problems = _problems("helm", [source], tmp_path / "out", language_field="lang")
    assert problems == [
        f"{runs / 'arabic_finance_bool:lang=en,model=qwen_qwen2.5-7b-instruct-turbo' / 'scenario_state.json'}, "
        "request state 1 (instance 'id1'), field 'result': has no answer: the request failed (rate limited)",
        f"{runs / 'arabic_finance_bool:model=openai_gpt-4o-2024-05-13'}: the run did not finish: per_instance_stats.json "
        "missing (HELM writes its five files when a run completes)",
    ]


# ---------------------------------------------------------------- Inspect AI, logs written by its own writer


@pytest.fixture(scope="session")
def inspect_api():
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        require(False, "inspect_ai is not installed: the extra `inspect`, which make test and test-fast install")


def _write_log(path, task, model, samples, status="success"):
    """An Inspect log of `samples` (id, input, completion or None, scores, metadata), by Inspect's writer."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    spec = EvalSpec(
        created="2026-01-05T10:00:00+00:00", task=task, dataset=EvalDataset(), model=model, config=EvalConfig()
    )
    written = [
        EvalSample(
            id=sample_id,
            epoch=1,
            input=question,
            target="",
            **({"output": ModelOutput.from_content(model=model, content=answer)} if answer is not None else {}),
            scores={name: Score(value=value) for name, value in scores.items()},
            metadata=metadata,
        )
        for sample_id, question, answer, scores, metadata in samples
    ]
    write_eval_log(EvalLog(eval=spec, status=status, samples=written), str(path))
    return path


def test_inspect_scores_become_numbers_by_inspect_s_own_rule(tmp_path, inspect_api):
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    chat = [ChatMessageSystem(content="Jibu kwa Kiswahili."), ChatMessageUser(content="Mji mkuu wa Kenya ni upi?")]
    log = _write_log(
        tmp_path / "qa.eval",
        "qa",
        "openai/gpt-4o",
        [
            (
                1,
                "Mji mkuu wa Tanzania ni upi?",
                "Dodoma.",
                {"match": "C", "judge": {"a": 2, "b": "P"}},
                {"language": "sw"},
            ),
            (2, chat, "Nairobi.", {"match": "I", "judge": {"a": 0.5, "b": "N"}}, {"language": "sw"}),
            (3, "Menene babban birnin Najeriya?", "Abuja.", {"match": "P", "letter": "B"}, {"language": "ha"}),
        ],
    )
    _write_log(
        tmp_path / "qa.json",
        "qa",
        "anthropic/claude-sonnet",
        [(1, "Mji mkuu wa Tanzania ni upi?", "", {"match": True}, {"language": "sw"})],
    )
    out = tmp_path / "out"
    _convert("inspect", [log, tmp_path / "qa.json"], out)
    values = _values(out)
    # C, I, P are 1, 0 and 0.5; True is 1; N is 0; numbers as they are; a dictionary, a metric per key
    assert values == {
        ("1", "openai-gpt-4o", "match"): 1.0,
        ("2", "openai-gpt-4o", "match"): 0.0,
        ("3", "openai-gpt-4o", "match"): 0.5,
        ("1", "openai-gpt-4o", "judge-a"): 2.0,
        ("1", "openai-gpt-4o", "judge-b"): 0.5,
        ("2", "openai-gpt-4o", "judge-a"): 0.5,
        ("2", "openai-gpt-4o", "judge-b"): 0.0,
        ("1", "anthropic-claude-sonnet", "match"): 1.0,
    }
    toml = (out / "study.toml").read_text(encoding="utf-8")
    assert "[metrics.match]\nhigher_is_better = true\nrange = [0, 1]\n" in toml  # letters: a share, higher better
    assert "[metrics.judge-a]\nhigher_is_better = true\n\n" in toml  # a number: no range, the direction assumed
    questions = pl.read_csv(out / "questions.csv")
    # a chat's question is its last user message (Inspect's `input_text`)
    assert questions["question"].to_list() == [
        "Mji mkuu wa Tanzania ni upi?",
        "Mji mkuu wa Kenya ni upi?",
        "Menene babban birnin Najeriya?",
    ]
    answers = pl.read_csv(out / "answers.csv", schema_overrides={"question_id": pl.String})
    # an empty completion is an answer (the study counts it as a provider error); models by name
    assert answers.select("model", "question_id", "answer").rows() == [
        ("anthropic-claude-sonnet", "1", None),
        ("openai-gpt-4o", "1", "Dodoma."),
        ("openai-gpt-4o", "2", "Nairobi."),
        ("openai-gpt-4o", "3", "Abuja."),
    ]
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "- score `letter` values that are not numbers: 1" in readme


def test_inspect_languages_from_the_tasks_names(tmp_path, inspect_api):
    for task in ("qa_sw", "qa_ha"):
        _write_log(tmp_path / f"{task}.eval", task, "openai/gpt-4o", [(1, f"Swali {task}?", "Jibu.", {}, {})])
    out = tmp_path / "out"
    _convert("inspect", [tmp_path / "qa_sw.eval", tmp_path / "qa_ha.eval"], out, language_field="task")
    questions = pl.read_csv(out / "questions.csv")
    assert questions.select("question_id", "language").rows() == [("qa_sw/1", "sw"), ("qa_ha/1", "ha")]
    assert "| `questions.csv`: `language` | `eval.task` |" in (out / "README.md").read_text(encoding="utf-8")


def test_bad_inspect_logs(tmp_path, inspect_api):
    started = _write_log(
        tmp_path / "started.eval", "qa", "m/a", [(1, "Swali?", "Jibu.", {}, {"language": "sw"})], "started"
    )
    unanswered = _write_log(tmp_path / "none.eval", "qa", "m/b", [(1, "Swali?", None, {}, {"language": "sw"})])
    no_language = _write_log(tmp_path / "lang.eval", "qa", "m/c", [(7, "Swali?", "Jibu.", {}, {"lugha": "sw"})])
    unknown = _write_log(tmp_path / "xx.eval", "qa", "m/d", [(1, "Swali?", "Jibu.", {}, {"language": "Xyzzyish"})])
    problems = _problems("inspect", [started, unanswered, no_language], tmp_path / "out")
    assert problems == [
        f"{started}, field 'status': the run did not finish (status 'started'); finish it (`inspect eval-retry`) or "
        "leave this log out",
        f"{unanswered}, sample 1, field 'output': has no answer: the model gave no output",
        f"{no_language}, sample 7, field 'metadata.language': is None; expected the question's language "
        "(LANGUAGE_FIELD= names another field of the samples' metadata, or `task` for the language the task's "
        "name ends with)",
    ]
    # what the study folder's own rules refuse is said of the sample it came from
    (problem,) = _problems("inspect", [unknown], tmp_path / "out")
    assert problem.startswith(f"{unknown}, sample 1, field 'metadata.language': unknown language 'Xyzzyish'"), problem
    assert problem.endswith("LANGUAGE_FIELD= says where a sample's language is (docs/harnesses.md)")


def test_a_row_the_study_refuses_is_said_of_its_sample_after_answers_of_several_lines(tmp_path, inspect_api):
    """The study reader's problem in a written row names the sample that row came from, though the answers
    before it span several lines of the CSV."""
    first = _write_log(
        tmp_path / "a.eval",
        "qa",
        "acme/model",
        [(i, f"Swali {i}?", "Jibu\nla\r\nmistari\nmingi.", {}, {"language": "sw"}) for i in range(1, 4)],
    )
    second = _write_log(tmp_path / "b.eval", "qa", "Human", [(2, "Swali 2?", "Jibu.", {}, {"language": "sw"})])
    problems = _problems("inspect", [first, second], tmp_path / "out")
    assert problems == [
        f"{second}, sample 2, field 'eval.model': is 'human', which names the human reference answers; give your "
        "model another key",
        f"{second}, sample 2, field 'eval.model': is 'Human', the name figures give the human reference answers",
    ]


def test_question_language_gives_every_inspect_and_lm_eval_sample_its_language(tmp_path, inspect_api):
    log = _write_log(tmp_path / "a.eval", "qa", "acme/model", [(1, "Swali?", "Jibu.", {}, {})])
    assert "metadata.language" in _problems("inspect", [log], tmp_path / "none")[0]
    _convert("inspect", [log], tmp_path / "inspect", language="sw")
    assert pl.read_csv(tmp_path / "inspect" / "questions.csv")["language"].to_list() == ["sw"]
    _convert("lm-eval", [LM_EVAL], tmp_path / "lm-eval", language="Kiswahili")
    languages = pl.read_csv(tmp_path / "lm-eval" / "questions.csv")["language"]
    assert languages.unique().to_list() == ["Kiswahili"] and languages.len() == 6  # not fr, sw from the tasks' names


@pytest.mark.parametrize("task", ["q" * 250, "qa\x1b[31m"])
def test_a_title_of_task_names_that_make_no_title_counts_the_tasks(tmp_path, inspect_api, task):
    """A task's name too long for a study's title (200 characters) or holding a terminal's escape gives the
    title the number of tasks instead: the study is still written, and its reader takes the title."""
    log = _write_log(tmp_path / "a.eval", task, "acme/model", [(1, "Swali?", "Jibu.", {}, {"language": "sw"})])
    _convert("inspect", [log], tmp_path / "out")
    assert 'title = "1 task (Inspect AI)"\n' in (tmp_path / "out" / "study.toml").read_text(encoding="utf-8")
    assert study.read(tmp_path / "out").title == "1 task (Inspect AI)"


def test_an_existing_folder_is_never_overwritten(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "ratings.csv").write_text("question_id,model,annotator,criterion,rating\n", encoding="utf-8")
    with pytest.raises(Failure, match="already exists and is not an empty folder"):
        _convert("lm-eval", [LM_EVAL], out)
    assert [p.name for p in out.iterdir()] == ["ratings.csv"]


def test_the_command_line_says_one_message_with_exit_status_2(tmp_path, capsys):
    status = cli.main(["study-from", "--format", "helm", "--out", str(tmp_path / "out"), str(HELM)])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: 2 problems in the input:\n") and "Traceback" not in err
    status = cli.main(
        ["study-from", "--format", "helm", "--language-field", "lang", "--out", str(tmp_path / "out"), str(HELM)]
    )
    assert status == 0 and "wrote the study out to" in capsys.readouterr().out


def test_without_inspect_ai_the_message_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # `import inspect_ai.log` raises ImportError
    with pytest.raises(Failure) as info:
        _convert("inspect", [tmp_path], tmp_path / "out")
    assert str(info.value) == inspect_logs.MISSING
    assert "optional extra `inspect`" in str(info.value) and "pip install -e '.[inspect]'" in str(info.value)


def test_the_examples_of_the_docs_page_run(tmp_path, monkeypatch):
    """docs/harnesses.md's commands on the fixtures of tests/data run as the page says."""
    page = (paths.DOCS / "harnesses.md").read_text(encoding="utf-8")
    commands = [line for line in page.splitlines() if line.startswith("make study-from") and "tests/data" in line]
    assert len(commands) == 3
    monkeypatch.chdir(paths.ROOT)
    for command in commands:
        variables = dict(word.split("=", 1) for word in command.split()[2:])
        out = tmp_path / variables["OUT"].replace("/", "-")
        arguments = ["study-from", f"--format={variables['FORMAT']}", f"--out={out}", variables["SRC"]]
        if "LANGUAGE_FIELD" in variables:
            arguments.append(f"--language-field={variables['LANGUAGE_FIELD']}")
        if "QUESTION_LANGUAGE" in variables:
            arguments.append(f"--question-language={variables['QUESTION_LANGUAGE']}")
        assert cli.main(arguments) == 0, command
        assert (out / "README.md").is_file()


# ---------------------------------------------------------------- real runs, built and reported


@pytest.fixture(scope="module")
def real_logs(tmp_path_factory, inspect_api):
    """Logs of a real offline run of Inspect (tests/harness_logs.py): three models in three languages, and
    the bad runs beside them."""
    import harness_logs

    return harness_logs.write_logs(tmp_path_factory.mktemp("inspect-logs"))


def _reports(folder, db_path, names, out):
    from analysis.pipeline.build import build
    from analysis.reporting import run

    build(folder, db_path, progress=False)
    roots = run.output_roots(out)
    for name in names:
        run.run_notebook(name, db_path=db_path, **roots)
    return roots


@pytest.mark.slow
def test_a_real_multilingual_inspect_run_becomes_a_study_whose_reports_show_every_model_language_and_score(
    real_logs, udhr_folder, language_id_model, tmp_path
):
    import harness_logs

    out = tmp_path / "next-number"
    (folder,) = {path.parent for path in real_logs["run"]}
    written = _convert("inspect", [folder], out)
    assert (written.n_questions, written.n_languages, written.n_answers, written.n_models) == (30, 3, 90, 3)
    roots = _reports(
        out, tmp_path / "study.duckdb", ["01_dataset_overview", "03_surface_quality", "04_answer_scores"], tmp_path
    )
    figures = roots["figures_root"]
    languages = set(harness_logs.TEMPLATES)
    counts = pl.read_csv(figures / "01_dataset_overview" / "question_counts.csv")
    assert dict(zip(counts["language"], zip(counts["n_questions"], counts["n_answers"]))) == {
        language: (harness_logs.N_QUESTIONS, 3 * harness_logs.N_QUESTIONS) for language in languages
    }
    verdicts = pl.read_csv(figures / "03_surface_quality" / "heatmap_pct_correct_language.csv")
    assert set(zip(verdicts["model"], verdicts["language"])) == {
        (m, lang) for m in harness_logs.MODELS for lang in languages
    }
    # the scores as metrics: each cell's mean over its 10 questions is what the models were made to score
    match = pl.read_csv(figures / "04_answer_scores" / "heatmap_metric_match.csv")
    assert {(r["model"], r["language"]): (r["n_values"], r["mean"]) for r in match.iter_rows(named=True)} == {
        (m, lang): (10, sum(harness_logs.right(m, n) for n in range(1, 11)) / 10)
        for m in harness_logs.MODELS
        for lang in languages
    }
    words = pl.read_csv(figures / "04_answer_scores" / "heatmap_metric_words.csv")
    assert {(r["model"], r["language"]): r["mean"] for r in words.iter_rows(named=True)} == {
        (m, lang): harness_logs.ANSWER_WORDS[lang] for m in harness_logs.MODELS for lang in languages
    }
    report = (roots["reports_root"] / "04_answer_scores.html").read_text(encoding="utf-8")
    assert all(name in report for name in [*harness_logs.MODELS, *languages, "match", "words"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, expected",
    [
        ("error", "field 'status': the run did not finish (status 'error': RuntimeError('the provider is down'))"),
        ("failed-sample", "sample 'sw-1', field 'error': has no answer: the sample failed (RuntimeError('the provider"),
        ("changed", "sample 'sw-3', field 'input': the question's text differs from that of the same sample of task"),
    ],
)
def test_bad_real_inspect_runs(real_logs, tmp_path, capsys, case, expected):
    (log,) = real_logs[case]
    (run,) = {path.parent for path in real_logs["run"]}
    status = cli.main(["study-from", "--format", "inspect", "--out", str(tmp_path / "out"), str(run), str(log)])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: 1 problem in the input:\n") and "Traceback" not in err, err
    assert f"{log}, {expected}" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_later_epochs_are_left_out_and_counted(real_logs, tmp_path):
    (log,) = real_logs["epochs"]
    _convert("inspect", [log], tmp_path / "out")
    assert pl.read_csv(tmp_path / "out" / "answers.csv").height == 30
    readme = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "- samples of epochs after the first: 30" in readme


@pytest.mark.slow
def test_lm_eval_and_helm_studies_build_and_report(udhr_folder, language_id_model, tmp_path):
    for format, source, options, models, languages in (
        ("lm-eval", LM_EVAL, {}, {BLOOMZ, AYA}, {"fr", "sw"}),
        ("helm", HELM, {"language_field": "lang"}, {GPT, QWEN}, {"ar", "en"}),
    ):
        out = tmp_path / format
        _convert(format, [source], out / "study", **options)
        roots = _reports(out / "study", out / "study.duckdb", ["04_answer_scores"], out)
        metrics = pl.read_csv(roots["figures_root"] / "04_answer_scores" / "metrics_by_model.csv")
        assert set(metrics["model"]) == models
        (heatmap, *_) = sorted((roots["figures_root"] / "04_answer_scores").glob("heatmap_metric_*.csv"))
        cells = pl.read_csv(heatmap)
        assert set(zip(cells["model"], cells["language"])) == {(m, lang) for m in models for lang in languages}
        assert set(cells["n_values"]) == {3}


@pytest.mark.slow
def test_make_study_from(tmp_path):
    import subprocess

    def make(*args, dry=False):
        return subprocess.run(
            [
                "make",
                "--no-print-directory",
                *(["-n", "--what-if=pyproject.toml"] if dry else []),
                "-o.venv/.setup-done",
                "study-from",
                *args,
            ],
            cwd=paths.ROOT,
            capture_output=True,
            text=True,
        )

    install = "pip install --quiet -e '.[inspect]'"
    assert install in make("FORMAT=inspect", "SRC=logs", "OUT=x", dry=True).stdout
    assert install not in make("FORMAT=lm-eval", "SRC=logs", "OUT=x", dry=True).stdout
    missing = make("FORMAT=lm-eval", "OUT=x")
    assert missing.returncode != 0 and "make study-from needs FORMAT=" in missing.stderr
    result = make("FORMAT=helm", "SRC=tests/data/helm", f"OUT={tmp_path}/finance", "LANGUAGE_FIELD=lang")
    assert result.returncode == 0, result.stderr
    assert "wrote the study finance" in result.stdout and (tmp_path / "finance" / "study.toml").is_file()
    result = make("FORMAT=helm", "SRC=tests/data/helm_real", f"OUT={tmp_path}/bbq", "QUESTION_LANGUAGE=en")
    assert result.returncode == 0, result.stderr
    assert "wrote the study bbq" in result.stdout and "3 questions in 1 language," in result.stdout
