"""The rules every analysis shares, each written once: one vocabulary for the models (their display
names, in the paper's order), the question types (the paper's order: culturally specific first), the
languages (by resource level, with the line between the two groups), their labels, and the
unreliable-language rule.

Every table and chart names a model by its display name (`models.display_name`, e.g. Claude 3 Opus),
never by its key (`claude-3-opus`), and lists models, languages and question types in these orders
(`in_order`).

The paper's pipeline cannot identify Balochi, Hiligaynon, Kirundi and Papiamento
(`core.vocabulary.UNRELIABLE_LANGUAGES`): their answers have no language verdict (`language_correct`
and `surface_ok` are NULL in `answer_surface`). Counts keep the detector's raw verdict for them
(`LANGUAGE_CORRECT_OR_RAW`, `SURFACE_OK_OR_RAW`); cells show them as not identified and aggregates
leave them out unless asked, and their labels carry a dagger.

The paper's tables and figures read the release's questions only (`from_release`): imports add models
beside the paper's and never change a number the paper prints. Where the identification for all 23
languages decides for them instead (notebook 10, or notebook 03 with `language_identification = "all"`),
their labels carry a double dagger: beyond the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import duckdb
import polars as pl

from ..core.vocabulary import MODELS, QUESTION_TYPES, RESOURCE_LEVELS, UNRELIABLE_LANGUAGES

UNRELIABLE_MARK = " †"
BEYOND_PAPER_MARK = " ‡"
# Over `answer_surface s`: the language verdict, and the verdict of no surface issue, with the raw
# verdict standing in where the language cannot be identified reliably.
LANGUAGE_CORRECT_OR_RAW = "coalesce(s.language_correct, s.language_match)"
SURFACE_OK_OR_RAW = "coalesce(s.surface_ok, NOT s.provider_error AND NOT s.repetition AND s.language_match)"
# The paper's models by display name, in its order (imported models follow them, `model_order`).
PAPER_MODELS = [m.display_name for m in MODELS]
MODEL_DISPLAY_NAMES = {m.model: m.display_name for m in MODELS}
# A model x language chart draws this many models at most, so that its rows stay legible however many are
# imported: the release's models, then the imported ones that answered the most (`drawn_models`); its CSV
# has every model's rows.
MAX_DRAWN_MODELS = 20
# The facets of every chart split by question type, and the rows of every table, in the paper's order.
QUESTION_TYPE_ORDER = list(QUESTION_TYPES)
RESOURCE_LEVEL_ORDER = list(RESOURCE_LEVELS)


def from_release(alias: str = "q") -> str:
    """SQL: the row of the table `alias` (questions, answers or models) is the release's, not imported
    (`import_position`). The paper's tables and figures are computed over the release's questions, so
    that an import never changes a number the paper prints: imported models add rows of their own, and
    imported questions count only where a report says so (06's comparison of collections)."""
    return f"{alias + '.' if alias else ''}import_position IS NULL"


def is_unreliable(language: str = "q.language") -> str:
    """SQL: the language in the column `language` is one whose identification is unreliable."""
    return f"{language} IN ({', '.join(repr(name) for name in sorted(UNRELIABLE_LANGUAGES))})"


def drawn_models(con: duckdb.DuckDBPyConnection, limit: int = MAX_DRAWN_MODELS) -> list[str]:
    """The display names of the models a model x language chart draws, in `model_order`: the release's
    models, then the imported models with the most answers (ties by name), `limit` in all."""
    ranked = [
        r[0]
        for r in con.sql(
            "SELECT m.display_name FROM models m LEFT JOIN answers a USING (model) "
            "GROUP BY m.display_name, m.import_position "
            "ORDER BY m.import_position IS NOT NULL, count(a.answer_id) DESC, m.display_name"
        ).fetchall()
    ][:limit]
    return [m for m in model_order(con) if m in ranked]


def model_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models' display names in the paper's order (the vocabulary's), imported models after them
    alphabetically: the order `in_order` sorts tables in."""
    names = {r[0] for r in con.sql("SELECT display_name FROM models").fetchall()}
    return [m for m in PAPER_MODELS if m in names] + sorted(names - set(PAPER_MODELS))


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
    """The axes of a model x language chart: models in the paper's order (and those it draws,
    `drawn_models`: None draws all), languages (and their labels, as `language_labels` gives them) by
    resource level, the first low-resource language (where the charts draw the line between the
    groups), and the question types in the paper's order."""

    models: list[str]
    languages: list[str]
    labels: list[str]
    first_low_resource: str | None = None
    question_types: tuple[str, ...] = QUESTION_TYPES
    drawn: list[str] | None = None

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection, all_identified: bool = False) -> Orders:
        labels = language_labels(con, all_identified)
        low = [
            r[0]
            for r in con.sql("SELECT language FROM languages WHERE resource_level = 'low' ORDER BY language").fetchall()
        ]
        return cls(
            model_order(con), list(labels), list(labels.values()), low[0] if low else None, drawn=drawn_models(con)
        )

    def label(self, language: str) -> str:
        return self.labels[self.languages.index(language)]

    def divider(self, by_label: bool = True) -> str | None:
        """The language (or its label) before which the low-resource languages start."""
        if self.first_low_resource is None or self.first_low_resource not in self.languages:
            return None
        return self.label(self.first_low_resource) if by_label else self.first_low_resource

    def without(self, language: str) -> Orders:
        """The same orders with `language` left out (the line between the groups kept)."""
        kept = [i for i, name in enumerate(self.languages) if name != language]
        first_low = self.first_low_resource
        if first_low == language:
            later = self.languages[self.languages.index(language) + 1 :]
            first_low = later[0] if later else None
        return replace(
            self,
            languages=[self.languages[i] for i in kept],
            labels=[self.labels[i] for i in kept],
            first_low_resource=first_low,
        )


def in_order(
    table: pl.DataFrame,
    by: list[str] | None = None,
    *,
    models: list[str] | None = None,
    languages: list[str] | None = None,
) -> pl.DataFrame:
    """`table` sorted by the columns `by` (by default whichever of model, resource level, language and
    question type it has), each column of the vocabulary in the suite's order: models as in `models` (by
    default the paper's), resource levels high first, languages as in `languages` (by default
    alphabetical), question types as the paper has them; values it does not know come after the known
    ones, alphabetically. Other columns sort as they are."""
    orders = {
        "model": models or PAPER_MODELS,
        "resource_level": RESOURCE_LEVEL_ORDER,
        "language": languages,
        "question_type": QUESTION_TYPE_ORDER,
    }
    by = by or [c for c in orders if c in table.columns]
    keys: list[pl.Expr] = []
    for column in by:
        if (order := orders.get(column)) is not None:
            position = {value: i for i, value in enumerate(order)}
            keys.append(pl.col(column).replace_strict(position, default=len(position), return_dtype=pl.Int32))
        keys.append(pl.col(column))
    return table.sort(keys, maintain_order=True) if keys else table
