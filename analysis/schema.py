"""The database schema: every table and column with its type and meaning.

The DDL and the README's table documentation are both generated from this one description
(`python -m analysis schema` prints the Markdown), so the two cannot drift apart.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    meaning: str
    constraint: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    meaning: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()

    def ddl(self) -> str:
        lines = [f"{c.name} {c.type} {c.constraint}".rstrip() for c in self.columns]
        if self.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(self.primary_key)})")
        return f"CREATE TABLE {self.name} (\n    " + ",\n    ".join(lines) + "\n)"

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


C = Column
TABLES = (
    Table("languages", "The 23 languages (the paper's Table 10).", (
        C("language", "VARCHAR", "English name as the release spells it, e.g. `German`", "NOT NULL"),
        C("iso_code", "VARCHAR", "ISO 639 code, e.g. `de`", "NOT NULL"),
        C("resource_level", "VARCHAR", "`high` (the paper's 11 high- and mid-resource languages) or `low`", "NOT NULL"),
        C("family", "VARCHAR", "language family"),
        C("branch", "VARCHAR", "branch within the family"),
        C("morphology", "VARCHAR", "morphological type"),
        C("word_order", "VARCHAR", "basic word order"),
        C("script", "VARCHAR", "writing system"),
        C("region", "VARCHAR", "where it is spoken"),
        C("speakers", "VARCHAR", "number of speakers as the paper prints it, e.g. `133M`"),
    ), ("language",)),
    Table("categories", "The 12 topic categories of culturally specific questions.", (
        C("category", "VARCHAR", "category name, e.g. `food and drinks`", "NOT NULL"),
        C("description", "VARCHAR", "what the category covers"),
        C("examples", "VARCHAR[]", "example questions from categories-metadata.csv"),
    ), ("category",)),
    Table("models", "The LLMs whose answers are in the database.", (
        C("model", "VARCHAR", "canonical key used everywhere in the project, e.g. `claude-3-opus`", "NOT NULL"),
        C("display_name", "VARCHAR", "name for figures, e.g. `Claude 3 Opus`", "NOT NULL"),
        C("provider", "VARCHAR", "who trained it"),
        C("weights", "VARCHAR", "`open` or `closed` weights"),
        C("release_name", "VARCHAR", "`prompting_state.model_name` in the release JSON"),
        C("version", "VARCHAR", "exact model version or path as the release records it"),
    ), ("model",)),
    Table("questions", "One row per question in the analysis sense: an agnostic question is one row per language.", (
        C("question_id", "BIGINT", "key of this table", "NOT NULL"),
        C("name", "VARCHAR", "upstream name, e.g. `german:0` or `non_cultural:3`", "NOT NULL"),
        C("language", "VARCHAR", "language of `text` (for agnostic questions: the language of the translation)", "NOT NULL"),
        C("question_type", "VARCHAR", "`specific` (culturally specific) or `agnostic` (culturally agnostic)", "NOT NULL"),
        C("collection", "VARCHAR", "`human` (the release snapshot) or `auto` (auto-collected)", "NOT NULL"),
        C("source", "VARCHAR", "website the question came from, or `worker`"),
        C("collector", "VARCHAR", "`Author`, a crowdworker id or an annotator number"),
        C("category", "VARCHAR", "topic category; agnostic questions take the category of their English original"),
        C("text", "VARCHAR", "question text in `language` (agnostic: the translation; English: the original)"),
        C("text_en", "VARCHAR", "English text (translation of a specific question; the original of an agnostic one)"),
        C("n_bytes", "BIGINT", "UTF-8 bytes of `text`"),
        C("human_evaluated", "BOOLEAN", "the question has human ratings in `ratings` (100 questions)"),
        C("upstream_human_evaluated", "BOOLEAN", "the release's own flag; it marks the 10 rated agnostic questions in all 23 languages"),
        C("url", "VARCHAR", "address of the original post, when known"),
    ), ("question_id",)),
    Table("answers", "One row per answer: the models' answers and the human reference answers.", (
        C("answer_id", "BIGINT", "key of this table", "NOT NULL"),
        C("question_id", "BIGINT", "the question answered (`questions.question_id`)", "NOT NULL"),
        C("name", "VARCHAR", "upstream name, e.g. `german:0:language.german:gpt 4o` or `german:0:human`", "NOT NULL"),
        C("model", "VARCHAR", "canonical model key (`models.model`); NULL for human reference answers"),
        C("model_version", "VARCHAR", "exact model version or path that produced it"),
        C("is_human", "BOOLEAN", "a reference answer written by people", "NOT NULL"),
        C("is_dot_points", "BOOLEAN", "a human reference answer in the dot-point variant", "NOT NULL"),
        C("language", "VARCHAR", "language the answer was asked in"),
        C("text", "VARCHAR", "answer text (an empty string where the provider returned an error)"),
        C("text_en", "VARCHAR", "English translation of the answer, where the release has one"),
        C("n_bytes", "BIGINT", "UTF-8 bytes of `text`"),
    ), ("answer_id",)),
    Table("ratings", "One row per human rating (all_ratings.csv), linked to its question.", (
        C("rating_id", "BIGINT", "row number in all_ratings.csv (annotation ids repeat across the tool's projects)", "NOT NULL"),
        C("annotation_id", "BIGINT", "row id in the annotation tool"),
        C("question_id", "BIGINT", "the rated question, matched by language, type and whitespace-normalised text", "NOT NULL"),
        C("answer_id", "BIGINT", "the release's answer of the same model to that question"),
        C("annotator", "VARCHAR", "annotator id (one per language)", "NOT NULL"),
        C("language", "VARCHAR", "language of the question", "NOT NULL"),
        C("question_type", "VARCHAR", "`specific` or `agnostic`", "NOT NULL"),
        C("model", "VARCHAR", "canonical model key (`models.model`)", "NOT NULL"),
        C("rating", "TINYINT", "overall rating, 1 (unusable) to 5 (excellent)", "NOT NULL"),
        C("factuality", "VARCHAR", "factuality issues: `none`, `minor`, `major`", "NOT NULL"),
        C("omissions", "VARCHAR", "omissions: `none`, `minor`, `major`", "NOT NULL"),
        C("language_correct", "VARCHAR", "is the answer in the question's language: `yes`, `partially`, `no`", "NOT NULL"),
        C("answer_text", "VARCHAR", "the answer text that was rated (not always the release's text)"),
    ), ("rating_id",)),
    Table("answer_metrics", "Per-answer metrics imported from external pipelines (`make import-metrics`).", (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL"),
        C("n_claims", "INTEGER", "verifiable claims extracted from the answer (e.g. by VeriScore)"),
        C("n_supported", "INTEGER", "claims judged supported by the evidence"),
        C("relevant", "BOOLEAN", "a judge found the answer relevant to the question"),
        C("source", "VARCHAR", "name of the file the metrics were imported from"),
    ), ("answer_id",)),
    Table("source_files", "The input files the database was built from, with their checksums.", (
        C("file", "VARCHAR", "path inside the source folder", "NOT NULL"),
        C("sha256", "VARCHAR", "sha256 of the uncompressed content", "NOT NULL"),
        C("bytes", "BIGINT", "uncompressed size", "NOT NULL"),
    ), ("file",)),
)
TABLE_BY_NAME = {t.name: t for t in TABLES}


def all_tables() -> tuple[Table, ...]:
    """Every table of the database: the release's, then those of the modules that add their own."""
    from . import language_id_all, nativqa, surface

    return TABLES + surface.TABLES + language_id_all.TABLES + nativqa.TABLES


def markdown() -> str:
    """The README's documentation of every table."""
    parts = []
    for table in all_tables():
        rows = "\n".join(f"| `{c.name}` | {c.type} | {c.meaning} |" for c in table.columns)
        parts.append(f"#### `{table.name}`\n{table.meaning}\n\n| column | type | meaning |\n|---|---|---|\n{rows}\n")
    return "\n".join(parts)
