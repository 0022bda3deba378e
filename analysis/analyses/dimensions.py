"""The rules every analysis shares, each written once: the order of the models (the paper's), the
languages by resource level, their labels, and the unreliable-language rule.

The paper's pipeline cannot identify Balochi, Hiligaynon, Kirundi and Papiamento
(`core.vocabulary.UNRELIABLE_LANGUAGES`): their answers have no language verdict (`language_correct`
and `surface_ok` are NULL in `answer_surface`). Counts keep the detector's raw verdict for them
(`LANGUAGE_CORRECT_OR_RAW`, `SURFACE_OK_OR_RAW`); cells show them as not identified and aggregates
leave them out unless asked, and their labels carry a dagger. Where the identification for all 23
languages decides for them instead (notebook 10), their labels carry a double dagger: beyond the paper.
"""

from dataclasses import dataclass

import duckdb

from ..core.vocabulary import UNRELIABLE_LANGUAGES

UNRELIABLE_MARK = " †"
BEYOND_PAPER_MARK = " ‡"
# Over `answer_surface s`: the language verdict, and the verdict of no surface issue, with the raw
# verdict standing in where the language cannot be identified reliably.
LANGUAGE_CORRECT_OR_RAW = "coalesce(s.language_correct, s.language_match)"
SURFACE_OK_OR_RAW = "coalesce(s.surface_ok, NOT s.provider_error AND NOT s.repetition AND s.language_match)"


def is_unreliable(language: str = "q.language") -> str:
    """SQL: the language in the column `language` is one whose identification is unreliable."""
    return f"{language} IN ({', '.join(repr(name) for name in sorted(UNRELIABLE_LANGUAGES))})"


def model_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models' display names in the paper's order (the vocabulary's), imported models after them."""
    return [r[0] for r in con.sql("SELECT display_name FROM models ORDER BY rowid").fetchall()]


def language_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Languages grouped by resource level (high first), alphabetical within each group."""
    return [r[0] for r in con.sql("SELECT language FROM languages ORDER BY resource_level, language").fetchall()]


def language_labels(con: duckdb.DuckDBPyConnection, all_identified: bool = False) -> dict[str, str]:
    """Language -> label for figures: the four unreliable languages carry a dagger, or, when
    `all_identified` (their verdicts come from the identification for all 23 languages), a double
    dagger that marks their numbers as beyond the paper."""
    mark = BEYOND_PAPER_MARK if all_identified else UNRELIABLE_MARK
    return {language: language + (mark if language in UNRELIABLE_LANGUAGES else "") for language in language_order(con)}


@dataclass(frozen=True)
class Orders:
    """The axes of a model x language chart: models in the paper's order, languages (and their labels,
    as `language_labels` gives them) by resource level."""

    models: list[str]
    languages: list[str]
    labels: list[str]

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection, all_identified: bool = False) -> "Orders":
        labels = language_labels(con, all_identified)
        return cls(model_order(con), list(labels), list(labels.values()))
