"""The study a database holds (the `study` table, docs/studies.md) and what its data has, read once per
notebook: the declarations that switch the paper-only sections on (`paper`, `nativqa`), and the sentence
a report shows where a section's data is missing.

One rule for absent optional data: a section asks `Study.has` (or `Study.lacks` for one declared metric
or criterion) and, where the data is not there, shows `Study.missing`'s one sentence instead of its
tables and charts."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from ..core.text import inert

# What is true of a study without data of a kind (after "This study"), and where a study folder gives it.
MISSING = {
    "ratings": "has no human ratings",
    "metrics": "has no automatic metrics",
    "categories": "has no question categories",
    "collections": "has fewer than two collections",
    "question_types": "has no question types",
    "resource_levels": "has no resource levels",
    "two_resource_levels": "does not have exactly two resource levels",
}
DATA_FILES = {
    "ratings": "ratings.csv",
    "metrics": "metrics.csv and `[metrics.NAME]` in study.toml",
    "categories": "the `category` column of questions.csv",
    "collections": "the `collection` column of questions.csv",
    "question_types": "the `question_type` column of questions.csv",
    "resource_levels": "the `resource_level` column of languages.csv",
    "two_resource_levels": "the `resource_level` column of languages.csv",
}
# What a section that lacks them cannot show.
WITHOUT = {
    "ratings": "no rating distributions and no mixed models",
    "metrics": "no metric heatmaps",
    "categories": "no topic matrix and no category counts",
    "collections": "no comparison between collections",
    "question_types": "no split by question type",
    "resource_levels": "languages are not grouped by resource level",
    "two_resource_levels": "no pooled comparison of the two levels",
}
# A declared metric without a value, a declared criterion without a rating: what its section cannot show.
LACKS = {
    "metrics": ("metric", "values", "metrics.csv", "no heatmap of it"),
    "criteria": ("criterion", "ratings", "ratings.csv", "no distribution of its levels and no mixed model"),
}
LACKS_SQL = """
SELECT (SELECT coalesce(list(metric ORDER BY position), []) FROM metrics
        WHERE metric NOT IN (SELECT DISTINCT metric FROM metric_values)) AS metrics,
       (SELECT coalesce(list(criterion ORDER BY position), []) FROM criteria
        WHERE criterion NOT IN (SELECT DISTINCT criterion FROM ratings)) AS criteria
"""
HAS_SQL = """
SELECT (SELECT count(*) > 0 FROM ratings) AS ratings,
       (SELECT count(*) > 0 FROM metric_values) AS metrics,
       (SELECT count(*) > 0 FROM questions WHERE category IS NOT NULL) AS categories,
       (SELECT count(DISTINCT collection) >= 2 FROM questions) AS collections,
       (SELECT count(*) > 0 FROM questions WHERE question_type IS NOT NULL) AS question_types,
       (SELECT count(*) > 0 FROM languages WHERE resource_level IS NOT NULL) AS resource_levels,
       (SELECT count(DISTINCT resource_level) = 2 FROM languages) AS two_resource_levels
"""


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    citation: str | None
    description: str | None
    # The paper whose claims registry and items apply (`calmqa`), or None: the paper-only sections.
    paper: str | None
    nativqa: bool
    language_identification: str
    has: dict[str, bool]
    # The declared metrics without a value and criteria without a rating (`lacks`), by kind.
    empty: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection) -> Study:
        name, title, citation, description, paper, nativqa, language_identification = con.sql(
            "SELECT name, title, citation, description, paper, nativqa, language_identification FROM study"
        ).fetchall()[0]
        has = dict(zip(MISSING, con.sql(HAS_SQL).fetchall()[0]))
        empty = {kind: tuple(names) for kind, names in zip(LACKS, con.sql(LACKS_SQL).fetchall()[0])}
        return cls(name, title, citation, description, paper, nativqa, language_identification, has, empty)

    def lacks(self, kind: str, name: str) -> bool:
        """Whether the declared metric or criterion `name` (`kind`: `metrics` or `criteria`) has no data."""
        return name in self.empty[kind]

    def missing(self, what: str, name: str | None = None) -> str:
        """One sentence saying that the study has no `what` (a key of `MISSING`) and what is not shown;
        with `name`, that its declared metric or criterion `name` (`what`: `metrics` or `criteria`) has none."""
        if name is not None:
            noun, data, file, without = LACKS[what]
            where = "" if self.paper else f" ({file})"
            return f"The {noun} *{inert(name)}* has no {data}{where}: {without}."
        where = "" if self.paper else f" ({DATA_FILES[what]})"
        return f"This study {MISSING[what]}{where}: {WITHOUT[what]}."

    def requires(self, declaration: str) -> bool:
        """Whether the study declares `declaration`: `paper` or `nativqa`."""
        return bool(self.paper) if declaration == "paper" else bool(getattr(self, declaration))
