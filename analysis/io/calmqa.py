"""CaLMQA as a study: the vocabulary of its release (canonical model keys and the names and codes the
release files use, its question types, collections, resource levels and rating scales) and what the
CaLMQA study declares (`STUDY`, the languages the paper leaves out of its language verdicts).

This is the adapter's vocabulary: the release's reader (`io.ingest`) and loader (`pipeline.release`)
write it into the generic tables (docs/studies.md), from which every generic analysis reads its orders,
labels and levels. Only the paper-only sections and the paper's own language identification read it
directly."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    model: str  # canonical key, used in every table and figure of the project
    display_name: str
    provider: str
    weights: str  # "open" or "closed"
    release_name: str  # prompting_state.model_name in the release JSON
    ratings_name: str | None  # `model` column of all_ratings.csv


MODELS = (
    Model("gpt-4-turbo", "GPT-4 Turbo", "OpenAI", "closed", "GPT 4 Turbo", "gpt4turbo"),
    Model("gpt-4o", "GPT-4o", "OpenAI", "closed", "GPT 4o", None),
    Model("claude-3-opus", "Claude 3 Opus", "Anthropic", "closed", "Claude Opus", "claude"),
    Model("gemini-1.5-pro", "Gemini 1.5 Pro", "Google", "closed", "Gemini 1.5 Pro", None),
    Model("llama-3-70b", "Llama 3 70B", "Meta", "open", "Llama 3 70B (together.ai)", None),
    Model("mixtral-8x22b", "Mixtral 8x22B", "Mistral AI", "open", "Mixtral 8x22B (together.ai)", "mixtral22b"),
    Model("aya-13b", "Aya 13B", "Cohere For AI", "open", "AYA 13B", None),
    Model("gemma-7b", "Gemma 7B", "Google", "open", "Gemma 7B", None),
)
MODEL_BY_RELEASE_NAME = {m.release_name: m for m in MODELS}
DISPLAY_NAMES = {m.model: m.display_name for m in MODELS}
MODEL_BY_RATINGS_NAME = {m.ratings_name: m for m in MODELS if m.ratings_name}

# Reference answers written by people; not a model, so they carry no model key.
HUMAN_RELEASE_NAMES = {"Human": False, "Human (dot points)": True}  # name -> is_dot_points

QUESTION_TYPE_BY_CODE = {5: "specific", 6: "agnostic"}
QUESTION_TYPE_BY_RATINGS_CODE = {"cult": "specific", "non-cult": "agnostic"}
QUESTION_TYPES = ("specific", "agnostic")
QUESTION_TYPE_LABELS = {"specific": "culturally specific", "agnostic": "culturally agnostic"}

# The annotation tool wrote `fi` for Fijian (ISO 639-1 `fj`); every other code is the language's ISO code.
RATINGS_LANGUAGE_CODE_OVERRIDES = {"fi": "Fijian"}

# The collections: the release holds human-collected questions; `make import-questions` adds auto-collected ones.
COLLECTION_LABELS = {"human": "human-collected", "auto": "auto-collected"}

RATING_LEVELS = (1, 2, 3, 4, 5)
ISSUE_LEVELS = ("none", "minor", "major")
LANGUAGE_CORRECT_LEVELS = ("yes", "partially", "no")
RESOURCE_LEVELS = ("high", "low")
# The annotators' four criteria (columns of all_ratings.csv), each with its levels worst to best, as the
# generic `criterion_levels` table orders them (the paper's models take the best level as reference).
CRITERIA = {
    "rating": RATING_LEVELS,
    "factuality": tuple(reversed(ISSUE_LEVELS)),
    "omissions": tuple(reversed(ISSUE_LEVELS)),
    "language_correct": tuple(reversed(LANGUAGE_CORRECT_LEVELS)),
}

# The detectors of the authors' pipeline (detect_lang.py): `cld2`, CLD2 as polyglot calls it first (langid
# where CLD2 is unsure), or `langid` alone. Which one each language goes to is data:
# data/calmqa-language-identification.csv, the `detector` column of `languages`.
DETECTORS = ("cld2", "langid")
# franc (the evaluation's `pyfranc` engine) writes ISO 639-3 codes: those of the study's languages are
# data (the `franc_code` column of data/calmqa-language-identification.csv); these are the codes of the
# neighbours (`NEIGHBOURS`) and of two languages franc takes texts for, as the other engines write them.
NEIGHBOUR_FRANC_CODES = {
    "urd": "ur",
    "pes": "fa",
    "prs": "fa",
    "tgl": "tl",
    "kin": "rw",
    "por": "pt",
    "swh": "sw",
    "fra": "fr",
}

# Languages neither detector of the paper's pipeline knows or tells from a neighbour (analyses.md
# section 3): their answers get no language verdict from it, and the paper leaves them out. The study
# declares it as `languages.identified = false`.
UNRELIABLE_LANGUAGES = frozenset({"Balochi", "Hiligaynon", "Kirundi", "Papiamento"})
# The neighbours each of them is taken for (issue 19's list, with Waray and Portuguese), as ISO 639 codes:
# the language identification for all 23 languages learns them, and its evaluation tests on them.
NEIGHBOURS = {
    "Balochi": ("ur", "fa"),
    "Hiligaynon": ("ceb", "tl", "war"),
    "Kirundi": ("rw",),
    "Papiamento": ("es", "pt"),
}

# What the CaLMQA study declares (the `study` table; docs/studies.md).
STUDY = {
    "name": "calmqa",
    "title": "CaLMQA: culturally specific and agnostic long-form questions in 23 languages",
    "citation": "Arora et al., CaLMQA: Exploring culturally specific long-form question answering across "
    "23 languages, arXiv 2406.17761",
    "description": "The CaLMQA release: human-collected questions, the answers of 8 models and 300 human ratings.",
    "paper": "calmqa",
    "nativqa": True,
    "language_identification": "paper",
}
# What Gemini's API returned instead of an answer, stored as the answer's text in the release: the
# finish reasons of a blocked or failed generation. With the empty answers they are provider errors.
PROVIDER_ERROR_CODES = ("OTHER", "SAFETY", "RECITATION")
