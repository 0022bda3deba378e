"""The rules every analysis shares, each written once, with their orders and labels read from the
database (docs/studies.md): the models (by display name, in `models.position` order), the question
types, collections and resource levels (`dimension_values`: their order and labels), the languages (by
resource level, with a line between the levels), their labels, and the unreliable-language rule.

Every table and chart names a model by its display name (`models.display_name`, e.g. Claude 3 Opus),
never by its key (`claude-3-opus`), and lists models, resource levels and question types in the
database's orders (`in_order`).

A language is *unreliable* when the study's language verdicts do not judge its answers
(`languages.identified` is false): the four languages the CaLMQA paper leaves out (its pipeline cannot
identify Balochi, Hiligaynon, Kirundi and Papiamento), or a study's language the all-languages engine
does not know. Their answers have no language verdict (`language_correct` and `surface_ok` are NULL in
`answer_surface`). Counts keep the detector's raw verdict for them where there is one
(`LANGUAGE_CORRECT_OR_RAW`, `SURFACE_OK_OR_RAW`); cells show them as not identified and aggregates
leave them out unless asked, and their labels carry a dagger.

The paper's tables and figures read the release's questions only (`from_release`): imports add models
beside the paper's and never change a number the paper prints. Where the all-languages engine decides for
them instead (notebook 10, or notebook 03 with `language_identification = "all"`), their labels carry a
double dagger: beyond the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import duckdb
import polars as pl

from ..schema import NO_SURFACE_ISSUE

UNRELIABLE_MARK = " †"
BEYOND_PAPER_MARK = " ‡"
# What marks a heatmap cell whose language verdicts rest on a measured accuracy below 95% or unknown
# (`short_text`; `viz.heatmap.CAVEAT_MARK_SHAPE`), in the words of a subtitle and a sentence.
CAVEAT_MARK = "the lower left corner mark"
# Over `answer_surface s`: the language verdict, and the verdict of no surface issue, with the raw
# verdict standing in where the language cannot be identified reliably.
LANGUAGE_CORRECT_OR_RAW = "coalesce(s.language_correct, s.language_match)"
SURFACE_OK_OR_RAW = NO_SURFACE_ISSUE("s.provider_error", "s.repetition", LANGUAGE_CORRECT_OR_RAW)
# The grouping columns whose values `dimension_values` orders and labels.
DIMENSIONS = ("question_type", "collection", "resource_level")
# A model x language chart draws this many models at most, so that its rows stay legible however many are
# imported: the study's (or release's) models, then the imported ones that answered the most
# (`drawn_models`); its CSV has every model's rows.
MAX_DRAWN_MODELS = 20
# A chart with a language axis, or a panel per language, draws this many languages at most, so that it stays
# legible (and Vega can draw it) however many languages a study has: the languages whose answers the study's
# verdicts judge before the others, then those with the most answers, ties in the languages' order, drawn in
# that order (`drawn_languages`, by the rule of `most_first`); its CSV has every language's rows, and its
# caption says how many more.
MAX_DRAWN_LANGUAGES = 40


def from_release(alias: str = "q", column: str = "import_position") -> str:
    """SQL: the row of the table `alias` (questions, answers or models) is the release's, not imported
    (`import_position`, or the `column` that holds it: `question_import_position` of `surface_answers`). The paper's tables and figures are computed over the release's questions, so
    that an import never changes a number the paper prints: imported models add rows of their own, and
    imported questions count only where a report says so (06's comparison of collections)."""
    return f"{alias + '.' if alias else ''}{column} IS NULL"


# Over `surface_answers s`: the answer's question is the release's.
SURFACE_FROM_RELEASE = from_release("s", "question_import_position")


def is_unreliable(language: str = "q.language") -> str:
    """SQL: the language in the column `language` is one whose answers the study's language verdicts do
    not judge (`languages.identified` is false)."""
    return f"{language} IN (SELECT language FROM languages WHERE NOT identified)"


MODEL_ORDER_SQL = "SELECT display_name FROM models ORDER BY position NULLS LAST, display_name"
# The values of a grouping column that the data holds, in the study's order, with their labels.
VALUES_SQL = """
SELECT d.value, d.label FROM dimension_values d
WHERE d.dimension = $dimension AND d.value IN (SELECT DISTINCT {column} FROM {table})
ORDER BY d.position
"""
LANGUAGES_SQL = """
SELECT l.language, l.resource_level, l.identified,
       NOT l.identified AND l.language IN (SELECT a.language FROM answer_language_all i JOIN answers a USING (answer_id)
                                           WHERE i.engine = 'ngram') AS engine_judged
FROM languages l
JOIN language_order o USING (language)
ORDER BY o.position
"""


# How `drawn_models` chooses, in words for a chart's subtitle.
DRAWN_MODELS_RULE = (
    "the study's own models first, in its order, then the imported ones with the most answers (ties by name)"
)


def drawn_models(con: duckdb.DuckDBPyConnection, limit: int = MAX_DRAWN_MODELS) -> list[str]:
    """The display names of the models a model x language chart draws, in `model_order`, `limit` in all: the
    source's own models first, in the study's order (`models.position`), then the imported models with
    the most answers, ties by name (`DRAWN_MODELS_RULE` says so under a chart that leaves some out)."""
    ranked = [
        r[0]
        for r in con.sql(
            "SELECT m.display_name FROM models m LEFT JOIN answers a USING (model) "
            "GROUP BY m.display_name, m.import_position, m.position "
            "ORDER BY m.import_position IS NOT NULL, CASE WHEN m.import_position IS NULL THEN m.position END, "
            "count(a.answer_id) DESC, m.display_name"
        ).fetchall()
    ][:limit]
    return [m for m in model_order(con) if m in ranked]


# Each language, whether the study's verdicts judge its answers, and its number of model answers (human
# reference answers are not a model's), in the languages' order.
LANGUAGE_ANSWERS_SQL = """
SELECT l.language, l.identified, count(a.answer_id) AS n_answers
FROM languages l
JOIN language_order o USING (language)
LEFT JOIN questions q ON q.language = l.language
LEFT JOIN answers a ON a.question_id = q.question_id AND NOT a.is_human
GROUP BY l.language, l.identified, o.position
ORDER BY o.position
"""


def most_first(sizes: Mapping[str, Sequence[int]], order: list[str], limit: int) -> list[str]:
    """The `limit` values of `order` with the largest `sizes` (compared in their order: (2, 0) before (1, 9)),
    ties in `order`'s order, listed in `order`'s order: what a chart draws of more values than it shows."""
    position = {value: i for i, value in enumerate(order)}
    largest = sorted(order, key=lambda value: ([-size for size in sizes.get(value, ())], position[value]))
    kept = set(largest[:limit])
    return [value for value in order if value in kept]


def drawn_languages(con: duckdb.DuckDBPyConnection, limit: int = MAX_DRAWN_LANGUAGES) -> list[str]:
    """The languages a chart with a language axis draws, in the languages' order: the `limit` languages whose
    answers the study's verdicts judge before the others, then those with the most model answers (ties in
    that order)."""
    rows = con.sql(LANGUAGE_ANSWERS_SQL).fetchall()
    return most_first({language: (int(identified), n) for language, identified, n in rows}, [r[0] for r in rows], limit)


def model_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models' display names in the study's order (`models.position`), imported models after them by
    display name: the order `in_order` sorts tables in."""
    return [r[0] for r in con.sql(MODEL_ORDER_SQL).fetchall()]


def values(con: duckdb.DuckDBPyConnection, dimension: str) -> dict[str, str]:
    """The values of the grouping column `dimension` (`DIMENSIONS`) that the data holds, in the study's
    order, with their labels."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"{dimension!r} is not a grouping column; expected one of {', '.join(DIMENSIONS)}")
    table = "languages" if dimension == "resource_level" else "questions"
    return dict(con.execute(VALUES_SQL.format(column=dimension, table=table), {"dimension": dimension}).fetchall())


def language_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Languages grouped by resource level (in the study's order of the levels), by name within each."""
    return [r[0] for r in con.sql(LANGUAGES_SQL).fetchall()]


def language_labels(con: duckdb.DuckDBPyConnection, all_identified: bool = False) -> dict[str, str]:
    """Language -> label for figures: a language the study's verdicts do not identify carries a dagger,
    or, when `all_identified` (the all-languages engine's verdicts are shown) and the engine judged its
    answers, a double dagger that marks its numbers as beyond the paper."""
    labels = {}
    for language, _, identified, engine_judged in con.sql(LANGUAGES_SQL).fetchall():
        mark = "" if identified else BEYOND_PAPER_MARK if all_identified and engine_judged else UNRELIABLE_MARK
        labels[language] = language + mark
    return labels


@dataclass(frozen=True)
class Orders:
    """The axes of a chart and the order of a table: models in the study's order (and those a model x language chart draws,
    `drawn_models`: None draws all), languages (and their
    labels, as `language_labels` gives them) by resource level, the first language of each level after
    the first (where the charts draw a line between the levels), and the question types, resource
    levels and collections the data holds, in the study's order, with their labels."""

    models: list[str]
    languages: list[str]
    labels: list[str]
    level_starts: tuple[str, ...] = ()
    question_types: tuple[str, ...] = ()
    question_type_labels: dict[str, str] = field(default_factory=dict)
    resource_levels: tuple[str, ...] = ()
    resource_level_labels: dict[str, str] = field(default_factory=dict)
    collections: tuple[str, ...] = ()
    collection_labels: dict[str, str] = field(default_factory=dict)
    # Each language's resource level (None without one).
    levels_of: dict[str, str | None] = field(default_factory=dict)
    drawn: list[str] | None = None
    # The languages a chart draws (`drawn_languages`); None draws all.
    drawn_languages: list[str] | None = None

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection, all_identified: bool = False) -> Orders:
        labels = language_labels(con, all_identified)
        rows = con.sql(LANGUAGES_SQL).fetchall()
        levels_of = {language: level for language, level, _, _ in rows}
        starts = tuple(rows[i][0] for i in range(1, len(rows)) if rows[i][1] != rows[i - 1][1])
        question_types, resource_levels, collections = (
            values(con, dimension) for dimension in ("question_type", "resource_level", "collection")
        )
        return cls(
            model_order(con),
            list(labels),
            list(labels.values()),
            starts,
            tuple(question_types),
            question_types,
            tuple(resource_levels),
            resource_levels,
            tuple(collections),
            collections,
            levels_of,
            drawn_models(con),
            drawn_languages(con),
        )

    def label(self, language: str) -> str:
        return self.labels[self.languages.index(language)]

    def dividers(self, by_label: bool = True) -> list[str]:
        """The languages (or their labels) before which a new resource level starts."""
        present = [language for language in self.level_starts if language in self.languages]
        return [self.label(language) for language in present] if by_label else present

    def groups(self, present: list[str]) -> list[tuple[str, list[str]]]:
        """The languages of `present`, in this order, as one titled group per resource level (its label
        and `languages`, e.g. `high-resource languages`), and whatever else `present` holds (a total) as a
        last, untitled group."""
        ordered = [language for language in self.languages if language in present]
        groups: dict[str | None, list[str]] = {}
        for language in ordered:
            groups.setdefault(self.levels_of.get(language), []).append(language)
        titled = [(self.level_title(level), members) for level, members in groups.items()]
        rest = [value for value in present if value not in self.languages]
        return titled + ([("", rest)] if rest else [])

    def level_title(self, level: str | None) -> str:
        """How a chart titles the languages of a resource level: `high-resource languages`."""
        if level is None:
            return "languages without a resource level" if self.resource_levels else ""
        return f"{self.resource_level_labels.get(level, level)}-resource languages"

    def level_axis_title(self) -> str | None:
        """The title of a language axis with a line between the resource levels, or None without levels."""
        titles = [self.level_title(level) for level in self.resource_levels]
        if len(titles) < 2:
            return None
        if len(titles) == 2:
            return f"{titles[0]}, then (after the line) {titles[1]}"
        return ", then ".join(titles) + " (a line between the levels)"

    def only(self, languages: list[str]) -> Orders:
        """The same orders with the languages of `languages` only (a chart that draws some of them): the line
        between two resource levels before the first of each level that is kept."""
        kept = [i for i, name in enumerate(self.languages) if name in set(languages)]
        names = [self.languages[i] for i in kept]
        starts = tuple(
            names[j] for j in range(1, len(names)) if self.levels_of.get(names[j]) != self.levels_of.get(names[j - 1])
        )
        return replace(
            self,
            languages=names,
            labels=[self.labels[i] for i in kept],
            level_starts=starts,
            drawn_languages=None,
        )

    def without(self, language: str) -> Orders:
        """The same orders with `language` left out (the lines between the levels kept)."""
        kept = [i for i, name in enumerate(self.languages) if name != language]
        starts: list[str | None] = list(self.level_starts)
        if language in starts:
            later = self.languages[self.languages.index(language) + 1 :]
            level = self.levels_of.get(language)
            following = [other for other in later if self.levels_of.get(other) == level]
            starts[starts.index(language)] = following[0] if following else None
        return replace(
            self,
            languages=[self.languages[i] for i in kept],
            labels=[self.labels[i] for i in kept],
            level_starts=tuple(s for s in starts if s is not None),
            drawn_languages=None
            if self.drawn_languages is None
            else [d for d in self.drawn_languages if d != language],
        )

    def positions(self, column: str) -> list[str] | None:
        """The order of the values of `column` that `in_order` sorts by (None: as the values sort)."""
        return {
            "model": self.models,
            "resource_level": list(self.resource_levels),
            "question_type": list(self.question_types),
            "collection": list(self.collections),
        }.get(column)


# Columns `in_order` sorts by default, in this order, when the table has them.
ORDERED_COLUMNS = ("model", "resource_level", "language", "question_type")


def in_order(table: pl.DataFrame, by: list[str] | None = None, *, orders: Orders) -> pl.DataFrame:
    """`table` sorted by the columns `by` (by default whichever of model, resource level, language and
    question type it has), each grouping column in the study's order (`Orders.positions`: models,
    resource levels, question types, collections; languages alphabetically); values the orders do not
    know come after the known ones, alphabetically. Other columns sort as they are."""
    by = by or [c for c in ORDERED_COLUMNS if c in table.columns]
    keys: list[pl.Expr] = []
    for column in by:
        order = orders.positions(column)
        if order is not None:
            position = {value: i for i, value in enumerate(order)}
            keys.append(
                pl.col(column).replace_strict(
                    position,
                    default=len(position),
                    return_dtype=pl.Int32,  # pragma: no mutate - positions of any integer type sort alike
                )
            )
        keys.append(pl.col(column))
    if not keys:  # pragma: no mutate - sorting by no key (polars allows it) leaves the table as it is
        return table
    return table.sort(keys, maintain_order=True)
