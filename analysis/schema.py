"""The database schema: every table and column with its type, meaning and references, in one place.

The DDL, the build's checks of the references and the table documentation (docs/schema.md) are all generated
from this one description (`python -m analysis schema` prints the Markdown), so they cannot drift apart.
"""

from dataclasses import dataclass

from .io.criterion_kinds import CRITERION_KINDS


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    meaning: str
    constraint: str = ""
    # `table.column` this column's values must be in (NULL aside): checked at the end of every build,
    # not declared to DuckDB, whose foreign keys would forbid the updates an import makes.
    references: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    meaning: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    # Further sets of columns that identify a row (an identity rule): declared to DuckDB, which refuses
    # a row that would break one; the readers refuse such rows first, naming the file and the record.
    unique: tuple[tuple[str, ...], ...] = ()

    def ddl(self) -> str:
        lines = [f"{c.name} {c.type} {c.constraint}".rstrip() for c in self.columns]
        if self.primary_key:
            lines.append(f"PRIMARY KEY ({', '.join(self.primary_key)})")
        lines += [f"UNIQUE ({', '.join(columns)})" for columns in self.unique]
        return f"CREATE TABLE {self.name} (\n    " + ",\n    ".join(lines) + "\n)"

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def references(self) -> list[tuple[str, str, str]]:
        """(column, referenced table, referenced column) of every column that references another table."""
        found = []
        for c in self.columns:
            if c.references:
                table, column = c.references.split(".")
                found.append((c.name, table, column))
        return found


C = Column
STUDY = Table(
    "study",
    "The study the database holds, in one row: its name and title, and what it declares (docs/studies.md).",
    (
        C("name", "VARCHAR", "the study's key, e.g. `calmqa`", "NOT NULL"),
        C("title", "VARCHAR", "its title", "NOT NULL"),
        C("citation", "VARCHAR", "how to cite it"),
        C("description", "VARCHAR", "what it is"),
        C(
            "paper",
            "VARCHAR",
            "the paper whose printed numbers the claims registry holds and whose items the outputs reproduce "
            "(`calmqa`); NULL for a study of your own",
        ),
        C("nativqa", "BOOLEAN", "the NativQA paper's published tables are loaded (report 07)", "NOT NULL"),
        C(
            "language_identification",
            "VARCHAR",
            "whose verdicts `answer_surface` holds: `paper` (the CaLMQA paper's pipeline), or a study's "
            "`[language_id] engine`: `auto` (each language and length judged by the engine the short-text "
            "evaluation chose, `language_routing`), `ngram` or `lingua` (that engine for every language), `none` "
            "(no engine: only the researcher's own verdicts, `answer_language_given`)",
            "NOT NULL",
        ),
        C(
            "provider_error_codes",
            "VARCHAR[]",
            "texts the provider returned in place of an answer (besides an empty answer), e.g. Gemini's `SAFETY`",
            "NOT NULL",
        ),
    ),
    ("name",),
)
DIMENSION_VALUES = Table(
    "dimension_values",
    "The order and label of every value of the grouping columns `question_type`, `collection` and "
    "`resource_level`: tables and figures list them in this order, under this label.",
    (
        C("dimension", "VARCHAR", "`question_type`, `collection` or `resource_level`", "NOT NULL"),
        C("value", "VARCHAR", "the value as the data holds it, e.g. `specific`", "NOT NULL"),
        C("label", "VARCHAR", "how tables and figures name it, e.g. `culturally specific`", "NOT NULL"),
        C("position", "INTEGER", "its place in the order, from 1", "NOT NULL"),
    ),
    ("dimension", "value"),
)
LANGUAGES = Table(
    "languages",
    "The study's languages (for CaLMQA, the paper's Table 10).",
    (
        C("language", "VARCHAR", "the name the study uses, e.g. `German`", "NOT NULL"),
        C("iso_code", "VARCHAR", "ISO 639 code (the shortest of the language), e.g. `de`", "NOT NULL"),
        C(
            "resource_level",
            "VARCHAR",
            "a label of `dimension_values` (CaLMQA: `high`, the paper's 11 high- and mid-resource languages, or `low`)",
        ),
        C("family", "VARCHAR", "language family"),
        C("branch", "VARCHAR", "branch within the family"),
        C("morphology", "VARCHAR", "morphological type"),
        C("word_order", "VARCHAR", "basic word order"),
        C("script", "VARCHAR", "writing system"),
        C("region", "VARCHAR", "where it is spoken"),
        C("speakers", "VARCHAR", "number of speakers as the paper prints it, e.g. `133M`"),
        C(
            "identified",
            "BOOLEAN",
            "the study's language verdicts (`answer_surface`) judge its answers: false for the four languages "
            "the CaLMQA paper leaves out, and for a study's language the engine does not know",
            "NOT NULL",
        ),
        C(
            "detector",
            "VARCHAR",
            "the detector that judges its answers first: `cld2` (CLD2 as polyglot calls it, langid where CLD2 is "
            "unsure) or `langid`, the CaLMQA authors' routing (data/calmqa-language-identification.csv); for a "
            "study's language the engine of its shortest judged answers (`ngram` or `lingua`; `language_routing` "
            "gives it by length), `none` where no engine judges it",
            "NOT NULL",
        ),
        C(
            "franc_code",
            "VARCHAR",
            "the ISO 639-3 code franc writes for it (the language identification evaluation's `pyfranc` engine); "
            "NULL where franc has none, and for a study's language",
        ),
    ),
    ("language",),
)
# The columns of `languages` that describe a language, in the order of the paper's Table 10; the others say
# how the suite judges its answers.
LANGUAGE_DESCRIPTION = tuple(
    c.name for c in LANGUAGES.columns if c.name not in ("identified", "detector", "franc_code")
)
CATEGORIES = Table(
    "categories",
    "The questions' topic categories (CaLMQA: the 12 categories of culturally specific questions).",
    (
        C("category", "VARCHAR", "category name, e.g. `food and drinks`", "NOT NULL"),
        C("description", "VARCHAR", "what the category covers"),
        C("examples", "VARCHAR[]", "example questions (CaLMQA: from categories-metadata.csv)"),
    ),
    ("category",),
)
MODELS = Table(
    "models",
    "The models whose answers are in the database.",
    (
        C("model", "VARCHAR", "canonical key used everywhere in the project, e.g. `claude-3-opus`", "NOT NULL"),
        C("display_name", "VARCHAR", "name for figures, e.g. `Claude 3 Opus`", "NOT NULL"),
        C("provider", "VARCHAR", "who trained it"),
        C("weights", "VARCHAR", "`open` or `closed` weights"),
        C("release_name", "VARCHAR", "`prompting_state.model_name` in the CaLMQA release JSON"),
        C("version", "VARCHAR", "exact model version or path as the source records it"),
        C(
            "position",
            "INTEGER",
            "the model's place in tables and figures (CaLMQA: the paper's order; a study: the order of "
            "answers.csv); NULL for an imported model, which comes after, by display name",
        ),
        C(
            "import_position",
            "INTEGER",
            "where the row came from: the import that added it (`applied_imports.position`); NULL for the release's or the study folder's rows",
        ),
    ),
    ("model",),
    unique=(("display_name",),),
)
QUESTIONS = Table(
    "questions",
    "One row per question in the analysis sense: an agnostic question is one row per language.",
    (
        C("question_id", "BIGINT", "key of this table", "NOT NULL"),
        C("name", "VARCHAR", "upstream name, e.g. `german:0` or `non_cultural:3`", "NOT NULL"),
        C(
            "language",
            "VARCHAR",
            "language of `text` (for agnostic questions: the language of the translation)",
            "NOT NULL",
            references="languages.language",
        ),
        C(
            "question_type",
            "VARCHAR",
            "a value of `dimension_values` (CaLMQA: `specific`, culturally specific, or `agnostic`); NULL when "
            "the study has no question types",
        ),
        C(
            "collection",
            "VARCHAR",
            "a value of `dimension_values` (CaLMQA: `human`, the release, or `auto`, auto-collected); NULL "
            "when the study has no collections",
        ),
        C("source", "VARCHAR", "website the question came from, or `worker`"),
        C("collector", "VARCHAR", "`Author`, a crowdworker id or an annotator number"),
        C(
            "category",
            "VARCHAR",
            "topic category; agnostic questions take the category of their English original",
            references="categories.category",
        ),
        C("text", "VARCHAR", "question text in `language` (agnostic: the translation; English: the original)"),
        C("text_en", "VARCHAR", "English text (translation of a specific question; the original of an agnostic one)"),
        C("n_bytes", "BIGINT", "UTF-8 bytes of `text`"),
        C("human_evaluated", "BOOLEAN", "the question has human ratings in `ratings` (CaLMQA: 100 questions)"),
        C(
            "upstream_human_evaluated",
            "BOOLEAN",
            "the release's own flag; it marks the 10 rated agnostic questions in all 23 languages",
        ),
        C("url", "VARCHAR", "address of the original post, when known"),
        C(
            "import_position",
            "INTEGER",
            "where the row came from: the import that added it (`applied_imports.position`); NULL for the release's or the study folder's rows",
        ),
    ),
    ("question_id",),
    unique=(("name", "language"),),
)
ANSWERS = Table(
    "answers",
    "One row per answer: the models' answers and the human reference answers.",
    (
        C("answer_id", "BIGINT", "key of this table", "NOT NULL"),
        C(
            "question_id",
            "BIGINT",
            "the question answered (`questions.question_id`)",
            "NOT NULL",
            references="questions.question_id",
        ),
        C("name", "VARCHAR", "upstream name, e.g. `german:0:language.german:gpt 4o` or `german:0:human`", "NOT NULL"),
        C(
            "model",
            "VARCHAR",
            "canonical model key (`models.model`); NULL for human reference answers",
            references="models.model",
        ),
        C("model_version", "VARCHAR", "exact model version or path that produced it"),
        C("is_human", "BOOLEAN", "a reference answer written by people", "NOT NULL"),
        C("is_dot_points", "BOOLEAN", "a human reference answer in the dot-point variant", "NOT NULL"),
        C("language", "VARCHAR", "language the answer was asked in"),
        C("text", "VARCHAR", "answer text (an empty string where the provider returned an error)"),
        C("text_en", "VARCHAR", "English translation of the answer, where the release has one"),
        C("n_bytes", "BIGINT", "UTF-8 bytes of `text`"),
        C(
            "import_position",
            "INTEGER",
            "where the row came from: the import that added it (`applied_imports.position`); NULL for the release's or the study folder's rows",
        ),
    ),
    ("answer_id",),
    unique=(("name",),),
)

CRITERIA = Table(
    "criteria",
    "The criteria the annotators rated the answers on (CaLMQA: `rating`, `factuality`, `omissions`, `language_correct`).",
    (
        C("criterion", "VARCHAR", "the criterion's key", "NOT NULL"),
        C("position", "INTEGER", "its place in tables and reports, from 1", "NOT NULL"),
        C(
            "kind",
            "VARCHAR",
            "its kind (`io.criterion_kinds`), told by its levels: "
            + "; ".join(f"`{kind.name}`, e.g. `{kind.example}`" for kind in CRITERION_KINDS),
            "NOT NULL",
        ),
    ),
    ("criterion",),
)
CRITERION_LEVELS = Table(
    "criterion_levels",
    "Each criterion's levels, worst first.",
    (
        C("criterion", "VARCHAR", "the criterion", "NOT NULL", references="criteria.criterion"),
        C("level", "VARCHAR", "the level as written, e.g. `4` or `minor`", "NOT NULL"),
        C("position", "INTEGER", "1 for the worst level, then up to the best", "NOT NULL"),
    ),
    ("criterion", "level"),
)
RATINGS = Table(
    "ratings",
    "Every human rating, one criterion a row: an annotator's rating of an answer is one `rating_id` with a "
    "row per criterion.",
    (
        C(
            "rating_id",
            "BIGINT",
            "one annotator's rating of one answer (CaLMQA: the row of all_ratings.csv, whose annotation ids repeat "
            "across the tool's projects)",
            "NOT NULL",
        ),
        C(
            "question_id",
            "BIGINT",
            "the rated question (CaLMQA: matched by language, type and whitespace-normalised text)",
            "NOT NULL",
            references="questions.question_id",
        ),
        C(
            "answer_id",
            "BIGINT",
            "the rated answer (CaLMQA: the release's answer of the same model to that question)",
            references="answers.answer_id",
        ),
        C("model", "VARCHAR", "canonical model key (`models.model`)", "NOT NULL", references="models.model"),
        C("annotator", "VARCHAR", "the annotator (CaLMQA: one per language)", "NOT NULL"),
        C("criterion", "VARCHAR", "the criterion", "NOT NULL", references="criteria.criterion"),
        C("level", "VARCHAR", "the level given, one of the criterion's `criterion_levels`", "NOT NULL"),
    ),
    ("rating_id", "criterion"),
)
ANSWER_METRICS = Table(
    "answer_metrics",
    "Per-answer metrics imported from external pipelines (`make import-metrics`).",
    (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL", references="answers.answer_id"),
        C("n_claims", "INTEGER", "verifiable claims extracted from the answer (e.g. by VeriScore)"),
        C("n_supported", "INTEGER", "claims judged supported by the evidence"),
        C("relevant", "BOOLEAN", "a judge found the answer relevant to the question"),
        C("source", "VARCHAR", "name of the file the metrics were imported from"),
    ),
    ("answer_id",),
)
METRICS = Table(
    "metrics",
    "The study's automatic metrics (`study.toml`); CaLMQA's score S has its own inputs, `answer_metrics`.",
    (
        C("metric", "VARCHAR", "the metric's key", "NOT NULL"),
        C("higher_is_better", "BOOLEAN", "a higher value is a better answer", "NOT NULL"),
        C("range_low", "DOUBLE", "the lowest value it can take, when it has a range"),
        C("range_high", "DOUBLE", "the highest value it can take, when it has a range"),
        C("position", "INTEGER", "its place in reports, from 1", "NOT NULL"),
    ),
    ("metric",),
)
METRIC_VALUES = Table(
    "metric_values",
    "Every value of an automatic metric, one answer and metric a row.",
    (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL", references="answers.answer_id"),
        C("metric", "VARCHAR", "the metric (`metrics.metric`)", "NOT NULL", references="metrics.metric"),
        C("value", "DOUBLE", "its value", "NOT NULL"),
    ),
    ("answer_id", "metric"),
)
ANSWER_LANGUAGE_GIVEN = Table(
    "answer_language_given",
    "The researcher's own verdicts of the answers' language (a study's `answers.csv`, column `answer_language`): "
    "they take precedence over every engine.",
    (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL", references="answers.answer_id"),
        C("iso_code", "VARCHAR", "the language the researcher found the answer in, as an ISO 639 code", "NOT NULL"),
    ),
    ("answer_id",),
)
LANGUAGE_ROUTING = Table(
    "language_routing",
    "How each language's answers are judged, by length (analysis/pipeline/language_routing.py): from the "
    "short-text evaluation (`make language-id`), for the database's languages. An answer shorter than its "
    "language's first band is too short to judge.",
    (
        C(
            "route",
            "VARCHAR",
            "`auto` (the engine chosen per language and length by measured accuracy), `ngram` or `lingua` (one "
            "engine for every language)",
            "NOT NULL",
        ),
        C("language", "VARCHAR", "the language (`languages.language`)", "NOT NULL", references="languages.language"),
        C("from_chars", "INTEGER", "the band starts at this many characters (20, 50, 100, 200)", "NOT NULL"),
        C("engine", "VARCHAR", "the engine that judges the band: `ngram` or `lingua`", "NOT NULL"),
        C(
            "margin",
            "DOUBLE",
            "the engine's margin for the language: an answer is judged not in it only when the evidence for "
            "another language, per character and times the square root of the length, exceeds it",
            "NOT NULL",
        ),
        C(
            "screen_margin",
            "DOUBLE",
            "lingua's bands: the n-gram margin by which the n-gram engine rules texts out first",
        ),
        C("pct_correct", "DOUBLE", "the measured accuracy (%) at `from_chars` characters", "NOT NULL"),
    ),
    ("route", "language", "from_chars"),
)
LANGUAGE_ID_ACCURACY = Table(
    "language_id_accuracy",
    "The short-text evaluation (`make language-id`) for the database's languages: held-out pieces of the "
    "Universal Declaration cut to 20, 50, 100 and 200 characters, judged by each route with the language "
    "expected (docs/methods.md, section 10).",
    (
        C(
            "route",
            "VARCHAR",
            "`auto`, `ngram`, `lingua` (as `language_routing`), or the CaLMQA paper's routes `cld2` and `langid` "
            "(judged without prior or abstention)",
            "NOT NULL",
        ),
        C("language", "VARCHAR", "the language (`languages.language`)", "NOT NULL", references="languages.language"),
        C("chars", "INTEGER", "the pieces' length in characters", "NOT NULL"),
        C("engine", "VARCHAR", "the engine that judged them", "NOT NULL"),
        C("n_pieces", "INTEGER", "pieces judged", "NOT NULL"),
        C("pct_correct_raw", "DOUBLE", "% judged in the language by the engine alone (no prior, no abstention)"),
        C("pct_correct", "DOUBLE", "% judged in the language; NULL where the length is too short to judge"),
        C("pct_abstained", "DOUBLE", "% too short to judge (counted apart, never as wrong)", "NOT NULL"),
        C(
            "pct_neighbour",
            "DOUBLE",
            "% given a close neighbour's verdict (`neighbours.csv` of the evaluation)",
            "NOT NULL",
        ),
    ),
    ("route", "language", "chars"),
)
SOURCE_FILES = Table(
    "source_files",
    "The input files the database was built from, with their checksums.",
    (
        C("file", "VARCHAR", "path inside the source folder", "NOT NULL"),
        C("sha256", "VARCHAR", "sha256 of the uncompressed content", "NOT NULL"),
        C("bytes", "BIGINT", "uncompressed size", "NOT NULL"),
    ),
    ("file",),
)

SOURCE = Table(
    "source",
    "The folder the database was built from, in one row: the study it holds belongs to that folder "
    "(docs/studies.md, section One database and one output folder per study folder).",
    (
        C("folder", "VARCHAR", "the resolved path of the study folder or of the release folder", "NOT NULL"),
        C(
            "fingerprint",
            "VARCHAR",
            "the fingerprint of its files as the build read them (`source_files`: the sha256 of their names and "
            "checksums, 16 hex digits)",
            "NOT NULL",
        ),
    ),
    (),
)
# ---------------------------------------------------------------- the surface metrics


@dataclass(frozen=True)
class Denominator:
    """What a surface metric is a share of: a count of the surface rates (`name`), the answers it counts
    (`sql`, a condition over `answer_surface s`) and how a title says it (`words`)."""

    name: str
    sql: str
    words: str


ALL_ANSWERS = Denominator("n_answers", "TRUE", "of all answers")
# A provider error has no verdict on its text: neither in the wrong language nor repetitive.
ANSWERED = Denominator("n_answered", "NOT s.provider_error", "of the answers the provider gave")
# An answer whose language was not judged (too short to judge, or no engine) is counted apart, never as wrong:
# out of the share in the correct language, and out of the share without surface issues unless it has another.
LANGUAGE_JUDGED = Denominator(
    "n_language_judged",
    "NOT s.provider_error AND NOT coalesce(s.language_abstained, FALSE)",
    "of the answers the provider gave whose language was judged",
)
SURFACE_JUDGED = Denominator(
    "n_surface_judged",
    "NOT coalesce(s.language_abstained AND NOT s.repetition, FALSE)",
    "of all answers but those whose language was not judged and that have no other issue",
)


@dataclass(frozen=True)
class SurfaceMetric:
    """One surface metric: the share of a cell's answers (`denominator`) whose per-answer verdict `column`
    of `answer_surface` is true. Every place that shows it reads this record: the reports' rates, cells,
    heatmaps and CSVs (`analyses.surface`), the surface tables (`viz.table_specs`), the explorer
    (`ui.explorer_logic`) and docs/schema.md. `needs_language`: the verdict needs the language verdict, so
    the cells of a language that is not identified have no value. `new_column`: the verdict's own column,
    for a metric whose verdict no column of `answer_surface` holds yet; the table gets it from here (the
    build computes it in `pipeline.surface._finish`)."""

    key: str  # the share's column in the reports' CSVs, `pct_...`; its heatmap is `heatmap_<key>`
    column: str  # the per-answer verdict: true, false, or NULL where the answer is not judged
    title: str  # heatmap titles and the explorer's list
    label: str  # the surface tables' column header
    better: str  # which end is good, "higher" or "lower" (`viz.theme.SCHEMES`)
    denominator: Denominator
    needs_language: bool
    failure: str  # an answer that fails the metric, in words: "repeats itself"
    decimals: int = 1
    new_column: Column | None = None

    @property
    def count(self) -> str:
        """The count of the answers whose verdict is true, in the rates (`n_repetition`)."""
        return "n_" + self.key.removeprefix("pct_")

    @property
    def fails_when(self) -> bool:
        """The verdict of an answer that fails the metric: true where lower is better."""
        return self.better == "lower"


SURFACE_METRICS = (
    SurfaceMetric(
        key="pct_correct_language",
        column="language_correct",
        title="% in the correct language",
        label="% correct language",
        better="higher",
        denominator=LANGUAGE_JUDGED,
        needs_language=True,
        failure="is in the wrong language",
    ),
    SurfaceMetric(
        key="pct_repetition",
        column="repetition",
        title="% with repetitions",
        label="% with repetitions",
        better="lower",
        denominator=ANSWERED,
        needs_language=False,
        failure="repeats itself",
    ),
    SurfaceMetric(
        key="pct_surface_ok",
        column="surface_ok",
        title="% without surface issues",
        label="% without surface issues",
        better="higher",
        denominator=SURFACE_JUDGED,
        needs_language=True,
        failure="has a surface issue",
    ),
)


@dataclass(frozen=True)
class Score:
    """One per-answer score, as every report and table names it: its column, its title, its short name
    (colour legends, the tables' `score` column), whether it is 0 or 1 per answer (`share`: its cells are
    shares with Wilson intervals, the others' the bootstrap interval of their mean; the comparison of
    two groups tests it by Fisher's exact test) and how the summaries name it. Every score is shown x 100,
    higher is better, and needs the surface verdict, so the language verdict."""

    column: str
    title: str
    short: str
    share: bool
    words: str


# The scores, in the order they are reported (`analyses/scores.py` computes them); here, beside the surface
# metrics, so that the tables name them without importing the analysis that computes them.
SCORE_LIST = (
    Score(
        "s_surf",
        "% without surface issues (S_surf)",
        "S_surf",
        True,
        "S_surf (the % of answers without surface issues)",
    ),
    Score("s_fact", "factuality (S_fact)", "S_fact", False, "the mean S_fact (x 100)"),
    Score("s_rel", "% relevant (S_rel)", "S_rel", True, "S_rel (the % of answers judged relevant)"),
    Score("s", "overall score S", "S", False, "the mean overall score S (x 100)"),
)
SCORE_SHORT = {score.column: score.short for score in SCORE_LIST}


def surface_metrics_markdown() -> str:
    """The surface metrics as a Markdown table (docs/schema.md)."""
    rows = "\n".join(
        f"| `{m.key}` | `{m.column}` | {m.title} | {m.denominator.words} | {m.better} | "
        f"{'yes' if m.needs_language else 'no'} | {m.decimals} |"
        for m in SURFACE_METRICS
    )
    return (
        "| metric | verdict | title | share | better | needs the language | decimals |\n"
        f"|---|---|---|---|---|---|---|\n{rows}\n"
    )


ANSWER_SURFACE = Table(
    "answer_surface",
    "Surface-level verdicts for every model answer (docs/methods.md, section 03).",
    (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL", references="answers.answer_id"),
        C("empty", "BOOLEAN", "the text is empty", "NOT NULL"),
        C(
            "provider_error",
            "BOOLEAN",
            "the provider returned an error instead of an answer: the text is empty or one of the study's "
            "`provider_error_codes` (CaLMQA: Gemini's finish-reason codes `OTHER`, `SAFETY`, `RECITATION`)",
            "NOT NULL",
        ),
        C(
            "provider_error_code",
            "VARCHAR",
            "the raw error: `empty` or the code stored as the text; NULL for an answer",
        ),
        C(
            "language_engine",
            "VARCHAR",
            "what decided the language: `cld2`, `cld2-best-effort` or the langid engine (`langid-batch`: langid "
            "1.1.6's model) of the paper's pipeline; for a study's answers `ngram` (the all-languages engine), "
            "`lingua` (lingua-language-detector) or `answer_language` (the researcher's own verdict); NULL for a "
            "provider error and for an answer whose language is not identified",
        ),
        C(
            "language_raw",
            "VARCHAR",
            "JSON of every engine's raw verdict (CLD2's reliability flag and top 3; langid's code and score; the "
            "n-gram engine's margin)",
        ),
        C(
            "detected_language",
            "VARCHAR",
            "detected language as a normalised ISO 639 code (`iw` -> `he`; `und` for CLD2's unknown); NULL for a "
            "provider error and where no engine judged the answer",
        ),
        C("language_match", "BOOLEAN", "`detected_language` is the question's language; NULL for a provider error"),
        C(
            "language_correct",
            "BOOLEAN",
            "`language_match`, but NULL where the language is not identified (`languages.identified`: CaLMQA's "
            "Balochi, Hiligaynon, Kirundi and Papiamento)",
        ),
        C(
            "language_abstained",
            "BOOLEAN",
            "the answer's language was not judged though its language is identified: too short to judge "
            "(`language_routing`; `language_engine` names the engine that would have judged it), or no engine and "
            "no verdict of the researcher; counted apart, never as wrong. NULL for a provider error",
        ),
        C(
            "language_chars",
            "INTEGER",
            "length of the text in characters as the language verdicts measure it (no surrounding white space; 0 "
            "without a letter): the length band of `language_routing`",
            "NOT NULL",
        ),
        C("n_tokens", "INTEGER", "length of the text in tokens of `tokenizer` (paper Table 17)", "NOT NULL"),
        C(
            "repeat_count",
            "INTEGER",
            "occurrences of the most frequent sequence of 20 consecutive tokens (0 below 20 tokens)",
            "NOT NULL",
        ),
        C(
            "repetition",
            "BOOLEAN",
            "some sequence of 20 consecutive tokens occurs 4 or more times (false for a provider error)",
            "NOT NULL",
        ),
        C(
            "tokenizer",
            "VARCHAR",
            "encoding of `n_tokens` and `repeat_count`: `o200k_base`, as the paper (quicktok's "
            "implementation, whose token ids are tiktoken's)",
            "NOT NULL",
        ),
        C(
            "surface_ok",
            "BOOLEAN",
            "no surface issue: `no_surface_issue(provider_error, repetition, language_correct)`, the schema's "
            "macro (NULL when only the language verdict is unknown)",
        ),
        C(
            "apology",
            "BOOLEAN",
            "contains `sorry`, `apologize` or `understand` (case-insensitive substring)",
            "NOT NULL",
        ),
        C(
            "language_name_mention",
            "BOOLEAN",
            "contains the name of the question's language as the study writes it (`Balochi`; case-sensitive substring)",
            "NOT NULL",
        ),
        C(
            "translation_mention",
            "BOOLEAN",
            "contains `translat` (translate, translation, translated...; case-insensitive substring)",
            "NOT NULL",
        ),
        C("emoji", "BOOLEAN", "contains an emoji: a character of Unicode's Extended_Pictographic property", "NOT NULL"),
        # The verdicts of the surface metrics that have a column of their own (`SurfaceMetric.new_column`).
        *(m.new_column for m in SURFACE_METRICS if m.new_column is not None),
    ),
    ("answer_id",),
)
QUESTION_LANGUAGE_ID = Table(
    "question_language_id",
    "The paper's language identification run on every question: the pipeline's own accuracy (paper Table 13); "
    "filled for a study whose `language_identification` is `paper` only.",
    (
        C(
            "question_id",
            "BIGINT",
            "the question (`questions.question_id`)",
            "NOT NULL",
            references="questions.question_id",
        ),
        C("language_engine", "VARCHAR", "what decided the language, as in `answer_surface`", "NOT NULL"),
        C("language_raw", "VARCHAR", "JSON of every engine's raw verdict", "NOT NULL"),
        C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code", "NOT NULL"),
        C(
            "identified_correctly",
            "BOOLEAN",
            "the question was identified as its own language (kept for the unreliable languages too: this table is what shows them unreliable)",
            "NOT NULL",
        ),
    ),
    ("question_id",),
)
ANSWER_LANGUAGE_ALL = Table(
    "answer_language_all",
    "Language verdict for every model answer in every language (beyond the paper, analysis/pipeline/language_id_all.py): "
    "the verdict of `answer_surface`, and for the languages it leaves unidentified (CaLMQA's Balochi, Hiligaynon, "
    "Kirundi and Papiamento) the all-languages engine's, a character n-gram model, where it knows them.",
    (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL", references="answers.answer_id"),
        C(
            "detected_language",
            "VARCHAR",
            "detected language as a normalised ISO 639 code; NULL for a provider error (as in `answer_surface`) "
            "and where no engine judged the answer",
        ),
        C(
            "engine",
            "VARCHAR",
            "what decided: `paper` (the paper's pipeline, the verdict of `answer_surface`) or `ngram` (the "
            "n-gram model: CaLMQA's answers to a question in Balochi, Hiligaynon, Kirundi or Papiamento); a "
            "study's answers keep the engine of `answer_surface` (`ngram`, `lingua`, `answer_language`); NULL for "
            "a provider error",
        ),
        C(
            "ngram_margin",
            "DOUBLE",
            "mean log-likelihood per n-gram of the question's language minus that of the best other "
            "language; positive: the n-gram model prefers the question's language; NULL for `paper` (and where "
            "the pipeline alone decided)",
        ),
        C(
            "all_languages_correct",
            "BOOLEAN",
            "the all-languages verdict: `detected_language` is the question's language, in every language; NULL "
            "where no engine judged the answer",
        ),
    ),
    ("answer_id",),
)
NATIVQA_REGIONS = Table(
    "nativqa_regions",
    "NativQA's nine language-region pairs (its Tables 1 and 2).",
    (
        C("region", "VARCHAR", "language-region pair as the paper names it, e.g. `Bangla-IN`", "NOT NULL"),
        C("language", "VARCHAR", "language of the questions and answers, e.g. `Bangla`", "NOT NULL"),
        C("iso_code", "VARCHAR", "ISO 639-1 code, e.g. `bn`", "NOT NULL"),
        C("city", "VARCHAR", "city whose residents' queries seeded the region, e.g. `Kolkata`", "NOT NULL"),
        C(
            "resource_level",
            "VARCHAR",
            "`high`, `medium`, `low` or `extremely_low`, as the paper classes the language",
            "NOT NULL",
        ),
    ),
    ("region",),
)
NATIVQA_RESULTS = Table(
    "nativqa_results",
    "Every published score of a model on a region, one value a row (Tables 2 to 5).",
    (
        C(
            "model",
            "VARCHAR",
            "model as the paper names it; `Llama-3.1-8B-Instruct-FT` is the fine-tuned Llama of Table 3",
            "NOT NULL",
        ),
        C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL", references="nativqa_regions.region"),
        C(
            "metric",
            "VARCHAR",
            "`bertscore_f1`, `bleu`, `rouge1` (0 to 1), `gpt4o_judge_1to10`, `human_accuracy_1to5`, `human_usefulness_1to5`",
            "NOT NULL",
        ),
        C("value", "DOUBLE", "the score as printed in the paper", "NOT NULL"),
        C(
            "setting",
            "VARCHAR",
            "`zero-shot` (Tables 2, 4, 5) or `fine-tuning` (Table 3: the base and the fine-tuned Llama)",
            "NOT NULL",
        ),
        C("paper_table", "TINYINT", "the paper's table the value comes from: 2, 3, 4 or 5", "NOT NULL"),
    ),
    ("model", "region", "metric", "setting"),
)
NATIVQA_DATASET = Table(
    "nativqa_dataset",
    "MultiNativQA's size per region (Table 1, without its total row).",
    (
        C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL", references="nativqa_regions.region"),
        C("seed_queries", "INTEGER", "seed queries collected from native speakers", "NOT NULL"),
        C(
            "qa_pairs_collected",
            "INTEGER",
            "QA pairs collected by the search-engine expansion, before annotation",
            "NOT NULL",
        ),
        C("train", "INTEGER", "annotated QA pairs in the train split; NULL where there is none (Nepali)"),
        C("dev", "INTEGER", "annotated QA pairs in the dev split; NULL where there is none (Nepali)"),
        C("test", "INTEGER", "annotated QA pairs in the test split", "NOT NULL"),
        C("total_annotated", "INTEGER", "annotated QA pairs, train + dev + test (checked on load)", "NOT NULL"),
    ),
    ("region",),
)
NATIVQA_EDIT_DISTANCE = Table(
    "nativqa_edit_distance",
    "How much annotators edited the collected answers (Table 24).",
    (
        C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL", references="nativqa_regions.region"),
        C("split", "VARCHAR", "`train`, `dev` or `test`", "NOT NULL"),
        C(
            "normalized_levenshtein",
            "DOUBLE",
            "mean normalized Levenshtein distance between collected and edited answer, 0 (unchanged) to 1",
            "NOT NULL",
        ),
    ),
    ("region", "split"),
)
NATIVQA_LENGTHS = Table(
    "nativqa_lengths",
    "Average question and answer length per region (Table 18).",
    (
        C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL", references="nativqa_regions.region"),
        C("question_words_avg", "DOUBLE", "average question length in whitespace-separated words", "NOT NULL"),
        C("answer_words_avg", "DOUBLE", "average answer length in whitespace-separated words", "NOT NULL"),
    ),
    ("region",),
)
NATIVQA_ADDITIONAL_PAIRS = Table(
    "nativqa_additional_pairs",
    "QA pairs collected, not annotated, for six further locations (Table 23, without its total).",
    (
        C("language", "VARCHAR", "language of the pairs: `Arabic` or `English`", "NOT NULL"),
        C("location", "VARCHAR", "where the queries were localised, e.g. `Egypt`, `New York`", "NOT NULL"),
        C("qa_pairs", "INTEGER", "QA pairs collected", "NOT NULL"),
    ),
    ("language", "location"),
)
NATIVQA_TOPICS = Table(
    "nativqa_topics",
    "The seed topics NativQA's Section 3.1 names, one a row (data/nativqa/section3_topics.csv).",
    (C("topic", "VARCHAR", "the topic as the paper names it, e.g. `Food & Drinks`", "NOT NULL"),),
    ("topic",),
)
NATIVQA_DOMAIN_RELIABILITY = Table(
    "nativqa_domain_reliability",
    "The web domains NativQA's Section 4.2.1 checked for reliability, kept and eliminated "
    "(data/nativqa/section4_domain_reliability.csv).",
    (
        C("outcome", "VARCHAR", "`checked`, `very_reliable` (kept) or `eliminated`", "NOT NULL"),
        C("domains", "INTEGER", "number of domains", "NOT NULL"),
    ),
    ("outcome",),
)
NATIVQA_MODELS = Table(
    "nativqa_models",
    "The zero-shot models of NativQA and whether their weights are open, as its Section 5 names them "
    "(data/nativqa/section5_models.csv).",
    (
        C("model", "VARCHAR", "as in `nativqa_results.model`", "NOT NULL"),
        C("weights", "VARCHAR", "`open` or `closed`", "NOT NULL"),
    ),
    ("model",),
)
NATIVQA_SOURCE_FILES = Table(
    "nativqa_source_files",
    "The NativQA CSVs the tables were loaded from, with their checksums.",
    (
        C("file", "VARCHAR", "file name in data/nativqa", "NOT NULL"),
        C("sha256", "VARCHAR", "sha256 of the content", "NOT NULL"),
        C("bytes", "BIGINT", "size", "NOT NULL"),
    ),
    ("file",),
)

APPLIED_IMPORTS = Table(
    "applied_imports",
    "The files imported into this database (`make import-*`), in order: kept, validated, beside the database, and replayed by every build.",
    (
        C(
            "position",
            "INTEGER",
            "order of the import; the file is kept as `<database>-imports/<position>/<file>`",
            "NOT NULL",
        ),
        C("kind", "VARCHAR", "`answers`, `metrics` or `questions`", "NOT NULL"),
        C("file", "VARCHAR", "name of the imported file", "NOT NULL"),
        C("sha256", "VARCHAR", "sha256 of the file", "NOT NULL"),
        C("verification", "VARCHAR", "VeriScore's verification file imported with it (metrics only)"),
        C("verification_sha256", "VARCHAR", "sha256 of the verification file"),
        C("added", "BIGINT", "rows the import added", "NOT NULL"),
        C("changed", "BIGINT", "rows the import changed", "NOT NULL"),
        C("unchanged", "BIGINT", "rows of the file already in the database as the file says", "NOT NULL"),
    ),
    ("position",),
)

TABLES = (
    STUDY,
    DIMENSION_VALUES,
    LANGUAGES,
    CATEGORIES,
    MODELS,
    QUESTIONS,
    ANSWERS,
    CRITERIA,
    CRITERION_LEVELS,
    RATINGS,
    METRICS,
    METRIC_VALUES,
    ANSWER_METRICS,
    SOURCE_FILES,
    SOURCE,
    APPLIED_IMPORTS,
    ANSWER_SURFACE,
    QUESTION_LANGUAGE_ID,
    ANSWER_LANGUAGE_ALL,
    ANSWER_LANGUAGE_GIVEN,
    LANGUAGE_ROUTING,
    LANGUAGE_ID_ACCURACY,
    NATIVQA_REGIONS,
    NATIVQA_RESULTS,
    NATIVQA_DATASET,
    NATIVQA_EDIT_DISTANCE,
    NATIVQA_LENGTHS,
    NATIVQA_ADDITIONAL_PAIRS,
    NATIVQA_TOPICS,
    NATIVQA_DOMAIN_RELIABILITY,
    NATIVQA_MODELS,
    NATIVQA_SOURCE_FILES,
)
TABLE_BY_NAME = {t.name: t for t in TABLES}


@dataclass(frozen=True)
class Macro:
    """A rule written once in SQL: a DuckDB macro that the build creates in the database, so that the
    build's verdicts and every query read the same definition (`store.create_definitions`)."""

    name: str
    parameters: tuple[str, ...]
    body: str
    meaning: str

    def ddl(self) -> str:
        return f"CREATE OR REPLACE MACRO {self.name}({', '.join(self.parameters)}) AS {self.body}"

    def __call__(self, *arguments: str) -> str:
        """SQL: the macro applied to the SQL expressions `arguments`."""
        if len(arguments) != len(self.parameters):
            raise TypeError(f"{self.name} takes {len(self.parameters)} arguments, not {len(arguments)}")
        return f"{self.name}({', '.join(arguments)})"


@dataclass(frozen=True)
class View:
    """A query the database keeps under a name (DuckDB inlines it into every query that reads it)."""

    name: str
    meaning: str
    query: str
    # (column, meaning) of the columns the view adds to those of the tables it reads whole.
    columns: tuple[tuple[str, str], ...] = ()

    def ddl(self) -> str:
        return f"CREATE OR REPLACE VIEW {self.name} AS {self.query}"


# Kleene (three-valued) logic, as SQL's AND and NOT: an unknown language verdict leaves the verdict unknown
# unless a provider error or a repetition already decides it (false).
NO_SURFACE_ISSUE = Macro(
    "no_surface_issue",
    ("provider_error", "repetition", "in_question_language"),
    "NOT provider_error AND NOT repetition AND in_question_language",
    "no surface issue: not a provider error, no repetition, and in the question's language (three-valued: "
    "NULL when only the language verdict is unknown). `answer_surface.surface_ok` is it, with the study's "
    "language verdict; every count of answers without a surface issue calls it",
)
MACROS = (NO_SURFACE_ISSUE,)

LANGUAGE_ORDER = View(
    "language_order",
    "Every language's place in tables and figures: by resource level (in `dimension_values`' order; a "
    "language without one last), then by name.",
    "SELECT l.language, row_number() OVER (ORDER BY d.position NULLS LAST, l.language) AS position\n"
    "FROM languages l\n"
    "LEFT JOIN dimension_values d ON d.dimension = 'resource_level' AND d.value = l.resource_level",
    (("language", "the language (`languages.language`)"), ("position", "its place, from 1")),
)
SURFACE_ANSWERS = View(
    "surface_answers",
    "Every model answer's surface verdicts (every column of `answer_surface`) with what the analyses group "
    "them by: its question's language, type and collection, the language's code, resource level and order, "
    "and the model's display name (`answer_surface` joined with `answers`, `questions`, `languages`, "
    "`language_order` and `models`).",
    "SELECT s.*, a.question_id, a.model, m.display_name, a.n_bytes,\n"
    "       q.language, q.question_type, q.collection, q.import_position AS question_import_position,\n"
    "       l.iso_code, l.resource_level, l.identified, o.position AS language_position\n"
    "FROM answer_surface s\n"
    "JOIN answers a USING (answer_id)\n"
    "JOIN questions q USING (question_id)\n"
    "JOIN languages l ON l.language = q.language\n"
    "JOIN language_order o ON o.language = q.language\n"
    "JOIN models m ON m.model = a.model",
    (
        ("question_id, model", "of `answers`"),
        ("display_name", "the model's (`models.display_name`)"),
        ("n_bytes", "UTF-8 bytes of the answer's text (`answers.n_bytes`)"),
        ("language, question_type, collection", "the question's (`questions`)"),
        ("question_import_position", "the question's `import_position`: NULL for the release's or the study folder's"),
        ("iso_code, resource_level, identified", "the question's language's (`languages`)"),
        ("language_position", "the language's place in tables and figures (`language_order.position`)"),
    ),
)
# In the order they are created: a view may read those before it.
VIEWS = (LANGUAGE_ORDER, SURFACE_ANSWERS)
# The tables the NativQA CSVs fill, by what `io.nativqa.read_folder` calls their rows.
NATIVQA_TABLES = {
    "regions": NATIVQA_REGIONS,
    "results": NATIVQA_RESULTS,
    "dataset": NATIVQA_DATASET,
    "edit_distance": NATIVQA_EDIT_DISTANCE,
    "lengths": NATIVQA_LENGTHS,
    "additional_pairs": NATIVQA_ADDITIONAL_PAIRS,
    "topics": NATIVQA_TOPICS,
    "domain_reliability": NATIVQA_DOMAIN_RELIABILITY,
    "models": NATIVQA_MODELS,
    "source_files": NATIVQA_SOURCE_FILES,
}


def markdown() -> str:
    """The documentation of every table (docs/schema.md, `python -m analysis docs`)."""
    parts = []
    for table in TABLES:
        rows = "\n".join(f"| `{c.name}` | {c.type} | {c.meaning} |" for c in table.columns)
        unique = "".join(
            f"\nNo two rows share {' and '.join(f'`{c}`' for c in columns)}.\n" for columns in table.unique
        )
        parts.append(
            f"#### `{table.name}`\n{table.meaning}\n\n| column | type | meaning |\n|---|---|---|\n{rows}\n" + unique
        )
    for view in VIEWS:
        rows = "\n".join(f"| `{column}` | {meaning} |" for column, meaning in view.columns)
        parts.append(
            f"#### `{view.name}` (view)\n{view.meaning}\n\n| column | meaning |\n|---|---|\n{rows}\n\n"
            f"```sql\n{view.ddl()}\n```\n"
        )
    for macro in MACROS:
        parts.append(f"#### `{macro.name}` (macro)\n{macro.meaning}.\n\n```sql\n{macro.ddl()}\n```\n")
    return "\n".join(parts)
