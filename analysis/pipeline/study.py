"""A study folder's tables (docs/studies.md), loaded into the database being built: the study's row and
declarations, the orders and labels of its question types, collections and resource levels, its
languages (identified where its route judges them or the researcher gave verdicts), categories, models,
questions, answers with the researcher's own verdicts of their language, criteria with their levels,
ratings and metrics (the build records its files: `pipeline.build`).

The folder has been read and validated by `io.study.read`; keys are numbered here, in the order of the
files (questions as they come, answers by question and then model), so that the same folder always
gives the same ids.
"""

import duckdb
import polars as pl

from ..io.study import StudyFolder
from ..schema import TABLE_BY_NAME
from ..store import insert
from .language_routing import NONE, Routing


def study_row(study: StudyFolder) -> pl.DataFrame:
    """What a study of your own declares: no paper, no NativQA tables, the answers' language judged as its
    `[language_id] engine` says (`auto` by default), no provider error but an empty answer."""
    return pl.DataFrame(
        [
            {
                "name": study.name,
                "title": study.title,
                "citation": study.citation,
                "description": study.description,
                "paper": None,
                "nativqa": False,
                "language_identification": study.language_id_engine,
                "provider_error_codes": [],
            }
        ],
        schema_overrides={"paper": pl.String, "provider_error_codes": pl.List(pl.String)},
    )


def dimension_values(study: StudyFolder) -> pl.DataFrame:
    """Each value of the question types, collections and resource levels in the order it first appears
    (questions; languages), labelled as written."""
    columns = {
        "question_type": study.questions["question_type"],
        "collection": study.questions["collection"],
        "resource_level": study.languages["resource_level"],
    }
    return pl.DataFrame(
        [
            {"dimension": dimension, "value": value, "label": value, "position": position}
            for dimension, series in columns.items()
            for position, value in enumerate(series.drop_nulls().unique(maintain_order=True).to_list(), start=1)
        ],
        schema={"dimension": pl.String, "value": pl.String, "label": pl.String, "position": pl.Int32},
    )


# The study folder's rows are the source's, as the release's are: no import added them.
NOT_IMPORTED = pl.lit(None, dtype=pl.Int32)


def language_verdicts(study: StudyFolder, routing: Routing | None) -> pl.DataFrame:
    """Per language of the study: whether its answers get language verdicts (`identified`: its route judges
    it, or the researcher gave verdicts of some of its answers) and the engine of its shortest judged
    answers (`detector`; `none` where no engine judges it). `routing`: the study's route (None: no engine)."""
    labelled = set(
        study.answers.filter(pl.col("answer_language").is_not_null())
        .join(study.questions.select("question_key", "language"), on="question_key")["language"]
        .to_list()
    )
    rows = []
    for name, code in zip(study.languages["language"], study.languages["iso_code"]):
        engines = routing.engines(code) if routing is not None else ()
        rows.append(
            {
                "language": name,
                "identified": bool(engines) or name in labelled,
                "detector": engines[0] if engines else NONE,
            }
        )
    return pl.DataFrame(rows, schema={"language": pl.String, "identified": pl.Boolean, "detector": pl.String})


def load_study(con: duckdb.DuckDBPyConnection, study: StudyFolder, routing: Routing | None) -> None:
    """Create the study's tables in `con`; `routing`: the study's route of the short-text evaluation's
    routing, restricted to the languages its engine knows (None: the study chose no engine)."""
    con.execute("BEGIN TRANSACTION")
    insert(con, TABLE_BY_NAME["study"], study_row(study))
    insert(con, TABLE_BY_NAME["dimension_values"], dimension_values(study))
    insert(
        con,
        TABLE_BY_NAME["languages"],
        study.languages.join(language_verdicts(study, routing), on="language", maintain_order="left").with_columns(
            *(
                pl.lit(None, dtype=pl.String).alias(c)
                for c in ("family", "branch", "morphology", "word_order", "region", "speakers")
            ),
            franc_code=pl.lit(None, dtype=pl.String),
        ),
    )
    categories = study.questions["category"].drop_nulls().unique().sort()
    insert(
        con,
        TABLE_BY_NAME["categories"],
        pl.DataFrame(
            {"category": categories, "description": None, "examples": None},
            schema={"category": pl.String, "description": pl.String, "examples": pl.List(pl.String)},
        ),
    )
    insert(
        con,
        TABLE_BY_NAME["models"],
        study.models.with_columns(
            *(pl.lit(None, dtype=pl.String).alias(c) for c in ("provider", "weights", "release_name")),
            import_position=NOT_IMPORTED,
        ),
    )
    questions = study.questions.with_row_index("question_id", offset=1).with_columns(
        pl.col("question_id").cast(pl.Int64),
        name=pl.col("question_key"),
        source=pl.lit(None, dtype=pl.String),
        collector=pl.lit(None, dtype=pl.String),
        n_bytes=pl.col("text").str.len_bytes().cast(pl.Int64),
        human_evaluated=pl.col("question_key").is_in(study.ratings["question_key"].implode()),
        upstream_human_evaluated=pl.lit(None, dtype=pl.Boolean),
        url=pl.lit(None, dtype=pl.String),
        import_position=NOT_IMPORTED,
    )
    insert(con, TABLE_BY_NAME["questions"], questions)
    positions = study.models.select("model", "position")
    answers = (
        study.answers.join(questions.select("question_key", "question_id", "language"), on="question_key")
        .join(positions, on="model")
        .sort("question_id", "position")
        .with_row_index("answer_id", offset=1)
        .with_columns(
            pl.col("answer_id").cast(pl.Int64),
            name=pl.col("question_key") + ":" + pl.col("model"),
            is_human=pl.lit(False),
            is_dot_points=pl.lit(False),
            text_en=pl.lit(None, dtype=pl.String),
            n_bytes=pl.col("text").str.len_bytes().cast(pl.Int64),
            import_position=NOT_IMPORTED,
        )
    )
    insert(con, TABLE_BY_NAME["answers"], answers)
    insert(
        con,
        TABLE_BY_NAME["answer_language_given"],
        answers.filter(pl.col("answer_language").is_not_null()).select("answer_id", iso_code="answer_language"),
    )
    insert(
        con,
        TABLE_BY_NAME["criteria"],
        pl.DataFrame(
            [{"criterion": c.name, "position": i, "kind": c.kind} for i, c in enumerate(study.criteria, start=1)],
            schema={"criterion": pl.String, "position": pl.Int32, "kind": pl.String},
        ),
    )
    insert(
        con,
        TABLE_BY_NAME["criterion_levels"],
        pl.DataFrame(
            [
                {"criterion": c.name, "level": level, "position": i}
                for c in study.criteria
                for i, level in enumerate(c.levels, start=1)
            ],
            schema={"criterion": pl.String, "level": pl.String, "position": pl.Int32},
        ),
    )
    keys = answers.select("question_key", "model", "question_id", "answer_id")
    # One rating_id per annotator's rating of an answer, numbered in the order they first appear.
    rated = ["question_key", "model", "annotator"]
    rating_ids = study.ratings.select(rated).unique(maintain_order=True).with_row_index("rating_id", offset=1)
    ratings = (
        study.ratings.join(rating_ids, on=rated, maintain_order="left")
        .join(keys, on=["question_key", "model"], maintain_order="left")
        .with_columns(pl.col("rating_id").cast(pl.Int64))
    )
    insert(con, TABLE_BY_NAME["ratings"], ratings)
    insert(
        con,
        TABLE_BY_NAME["metrics"],
        pl.DataFrame(
            [
                {
                    "metric": m.name,
                    "higher_is_better": m.higher_is_better,
                    "range_low": m.low,
                    "range_high": m.high,
                    "position": i,
                }
                for i, m in enumerate(study.metrics, start=1)
            ],
            schema={
                "metric": pl.String,
                "higher_is_better": pl.Boolean,
                "range_low": pl.Float64,
                "range_high": pl.Float64,
                "position": pl.Int32,
            },
        ),
    )
    insert(
        con,
        TABLE_BY_NAME["metric_values"],
        study.metric_values.join(keys, on=["question_key", "model"], maintain_order="left"),
    )
    con.execute("COMMIT")
