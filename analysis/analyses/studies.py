"""The study a database holds (the `study` table, docs/studies.md) and what its data has, read once per
notebook: the declarations that switch the paper-only sections on (`paper`, `nativqa`), and the sentence
a report shows where a section's data is missing."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

# What each kind of data is, for the sentence that says it is missing, and where a study folder gives it.
DATA_WORDS = {
    "ratings": "human ratings",
    "metrics": "automatic metrics",
    "categories": "question categories",
    "collections": "two or more collections",
    "question_types": "question types",
    "resource_levels": "resource levels",
}
DATA_FILES = {
    "ratings": "ratings.csv",
    "metrics": "metrics.csv and `[metrics.NAME]` in study.toml",
    "categories": "the `category` column of questions.csv",
    "collections": "the `collection` column of questions.csv",
    "question_types": "the `question_type` column of questions.csv",
    "resource_levels": "the `resource_level` column of languages.csv",
}
# What a section that lacks them cannot show.
WITHOUT = {
    "ratings": "no rating distributions and no mixed models",
    "metrics": "no metric heatmaps",
    "categories": "no topic matrix and no category counts",
    "collections": "no comparison between collections",
    "question_types": "no split by question type",
    "resource_levels": "languages are not grouped by resource level",
}
HAS_SQL = """
SELECT (SELECT count(*) > 0 FROM ratings) AS ratings,
       (SELECT count(*) > 0 FROM metric_values) AS metrics,
       (SELECT count(*) > 0 FROM questions WHERE category IS NOT NULL) AS categories,
       (SELECT count(DISTINCT collection) >= 2 FROM questions) AS collections,
       (SELECT count(*) > 0 FROM questions WHERE question_type IS NOT NULL) AS question_types,
       (SELECT count(*) > 0 FROM languages WHERE resource_level IS NOT NULL) AS resource_levels
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

    @classmethod
    def of(cls, con: duckdb.DuckDBPyConnection) -> Study:
        name, title, citation, description, paper, nativqa, language_identification = con.sql(
            "SELECT name, title, citation, description, paper, nativqa, language_identification FROM study"
        ).fetchall()[0]
        names = ("ratings", "metrics", "categories", "collections", "question_types", "resource_levels")
        has = dict(zip(names, con.sql(HAS_SQL).fetchall()[0]))
        return cls(name, title, citation, description, paper, nativqa, language_identification, has)

    def missing(self, what: str) -> str:
        """One sentence saying that the study has no `what` (a key of `DATA_WORDS`) and what is not shown."""
        where = "" if self.paper else f" ({DATA_FILES[what]})"
        return f"This study has no {DATA_WORDS[what]}{where}: {WITHOUT[what]}."

    def requires(self, declaration: str) -> bool:
        """Whether the study declares `declaration`: `paper` or `nativqa`."""
        return bool(self.paper) if declaration == "paper" else bool(getattr(self, declaration))
