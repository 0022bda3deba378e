"""The verdicts of the language identification for all 23 languages (`pipeline.language_id_all`) on
every model answer: table `answer_language_all`. The paper pipeline's verdict is read from
`answer_surface`, so this stage runs after the surface stage; only the answers to questions in the four
languages the paper leaves out are read and scored by the n-gram engine."""

from pathlib import Path

import duckdb
import polars as pl

from ..core import paths
from ..schema import ANSWER_LANGUAGE_ALL
from ..store import append
from .language_id_all import TARGETS, Engine

# Answers read at once: memory stays bounded however many answers there are.
BATCH_ANSWERS = 20_000


ANSWERS_SQL = """
SELECT s.answer_id, q.language, l.iso_code, s.detected_language AS pipeline,
       CASE WHEN q.language IN (SELECT unnest($targets)) THEN a.text END AS text
FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
WHERE s.answer_id IN (SELECT unnest($answer_ids))
ORDER BY s.answer_id
"""


def answer_verdicts(con: duckdb.DuckDBPyConnection, answer_ids: list[int], engine: Engine) -> pl.DataFrame:
    """Rows of `answer_language_all` for the answers of `answer_ids` that have surface verdicts: the
    pipeline's verdict is read from `answer_surface`, and only the targets' texts are read and scored."""
    answers = con.sql(ANSWERS_SQL, params={"targets": sorted(TARGETS), "answer_ids": answer_ids}).pl()
    verdicts = engine.decide(answers["text"].fill_null("").to_list(), answers["language"].to_list(),
                             answers["pipeline"].to_list())
    return (pl.concat([answers.select("answer_id", "iso_code"), verdicts], how="horizontal")
            .with_columns(language_correct=pl.col("detected_language") == pl.col("iso_code"))
            .select(ANSWER_LANGUAGE_ALL.column_names()))


def write_tables(con: duckdb.DuckDBPyConnection, model: Path | str = paths.LANGUAGE_ID_MODEL) -> dict[str, int]:
    """Create and fill `answer_language_all` for every model answer (it reads `answer_surface`, so it runs
    after the surface stage), replacing the table if it is there."""
    engine = Engine.load(model)
    con.execute(f"DROP TABLE IF EXISTS {ANSWER_LANGUAGE_ALL.name}")
    con.execute(ANSWER_LANGUAGE_ALL.ddl())
    answer_ids = [r[0] for r in con.execute("SELECT answer_id FROM answer_surface ORDER BY 1").fetchall()]
    for start in range(0, len(answer_ids), BATCH_ANSWERS):
        append(con, ANSWER_LANGUAGE_ALL, answer_verdicts(con, answer_ids[start:start + BATCH_ANSWERS], engine))
    return {ANSWER_LANGUAGE_ALL.name: len(answer_ids)}


def refresh(con: duckdb.DuckDBPyConnection, answer_ids: list[int], model: Path | str = paths.LANGUAGE_ID_MODEL) -> None:
    """Verdicts for the given answers only (new or changed by an import), after their surface verdicts."""
    verdicts = answer_verdicts(con, answer_ids, Engine.load(model))
    con.execute(f"DELETE FROM {ANSWER_LANGUAGE_ALL.name} WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    append(con, ANSWER_LANGUAGE_ALL, verdicts)
