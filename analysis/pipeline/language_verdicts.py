"""The verdicts of the language identification for all 23 languages (`pipeline.language_id_all`) on
every model answer: table `answer_language_all`. The paper pipeline's verdict is read from
`answer_surface`, so this stage runs after the surface stage. An answer to a question in one of the
four languages the paper leaves out is judged by the n-gram engine (on the build's worker processes);
every other answer keeps the pipeline's verdict, copied in SQL without reading its text."""

import collections
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import duckdb
import polars as pl
from tqdm import tqdm

from ..core import paths
from ..schema import ANSWER_LANGUAGE_ALL
from ..store import append
from .language_id_all import CHUNK_TEXTS, ENGINE_PAPER, TARGETS, Engine

# Answers read at once: memory stays bounded however many answers there are.
BATCH_ANSWERS = 20_000

# An answer the n-gram engine does not judge (its question is not in a target language, or it is a
# provider error, which has no verdict) keeps the paper pipeline's verdict: `Engine.decide`'s rule.
PIPELINE_VERDICTS_SQL = f"""
INSERT INTO {ANSWER_LANGUAGE_ALL.name}
SELECT s.answer_id, s.detected_language,
       CASE WHEN s.detected_language IS NOT NULL THEN '{ENGINE_PAPER}' END, NULL::DOUBLE,
       s.detected_language = l.iso_code
FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
WHERE q.language NOT IN (SELECT unnest($targets)) OR s.detected_language IS NULL
ORDER BY s.answer_id
"""

JUDGED_IDS_SQL = """
SELECT s.answer_id
FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
WHERE q.language IN (SELECT unnest($targets)) AND s.detected_language IS NOT NULL
ORDER BY 1
"""

ANSWERS_SQL = """
SELECT s.answer_id, q.language, l.iso_code, s.detected_language AS pipeline,
       CASE WHEN q.language IN (SELECT unnest($targets)) THEN a.text END AS text
FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
WHERE s.answer_id IN (SELECT unnest($answer_ids))
ORDER BY s.answer_id
"""


def _engine(model: str) -> Engine:
    """The engine of `model`, loaded once per process and version of the file (a worker loads its own on
    its first part)."""
    stat = Path(model).stat() if Path(model).is_file() else None
    return _load(model, stat and (stat.st_mtime_ns, stat.st_size))


@cache
def _load(model: str, version: tuple[int, int] | None) -> Engine:
    return Engine.load(model)


def _part_verdicts(part: tuple[str, list[int], list[str], list[str], list[str | None]]) -> tuple[list, ...]:
    """The engine's verdicts (answer ids, detected languages, engines, margins) for a part of the answers
    (model file, answer ids, texts, question languages, pipeline verdicts). Lists only: it runs in the
    build's forked workers, where polars must not."""
    model, answer_ids, texts, languages, pipeline = part
    return answer_ids, *_engine(model).verdicts(texts, languages, pipeline)


def _rows(answers: pl.DataFrame, parts: Iterable[tuple[list, ...]]) -> pl.DataFrame:
    """Rows of `answer_language_all` for `answers` (rows of `ANSWERS_SQL`) from their parts' verdicts."""
    columns = list(zip(*parts))
    verdicts = pl.DataFrame(
        {name: [v for part in column for v in part]
         for name, column in zip(("answer_id", "detected_language", "engine", "ngram_margin"), columns)},
        schema={"answer_id": pl.Int64, "detected_language": pl.String, "engine": pl.String, "ngram_margin": pl.Float64})
    return (verdicts.join(answers.select("answer_id", "iso_code"), on="answer_id")
            .with_columns(language_correct=pl.col("detected_language") == pl.col("iso_code"))
            .select(ANSWER_LANGUAGE_ALL.column_names())
            .sort("answer_id"))


def _parts(model: str, answers: pl.DataFrame) -> list[tuple[str, list[int], list[str], list[str], list[str | None]]]:
    """`answers` (rows of `ANSWERS_SQL`) in parts of `CHUNK_TEXTS` answers, as `_part_verdicts` takes them."""
    return [(model, part["answer_id"].to_list(), part["text"].fill_null("").to_list(), part["language"].to_list(),
             part["pipeline"].to_list()) for part in answers.iter_slices(CHUNK_TEXTS)]


def _read(con: duckdb.DuckDBPyConnection, answer_ids: list[int]) -> pl.DataFrame:
    return con.sql(ANSWERS_SQL, params={"targets": sorted(TARGETS), "answer_ids": answer_ids}).pl()


def answer_verdicts(con: duckdb.DuckDBPyConnection, answer_ids: list[int], model: Path | str = paths.LANGUAGE_ID_MODEL
                    ) -> pl.DataFrame:
    """Rows of `answer_language_all` for the answers of `answer_ids` that have surface verdicts: the
    pipeline's verdict is read from `answer_surface`, and only the targets' texts are read and scored."""
    answers = _read(con, answer_ids)
    return _rows(answers, map(_part_verdicts, _parts(str(model), answers)))


def write_tables(con: duckdb.DuckDBPyConnection, model: Path | str = paths.LANGUAGE_ID_MODEL,
                 workers=None) -> dict[str, int]:
    """Create and fill `answer_language_all` for every model answer (it reads `answer_surface`, so it runs
    after the surface stage), replacing the table if it is there. `workers`: the build's worker pool
    (`surface.verdict_workers()`), which judges the targets' answers a part at a time; else they are
    judged here."""
    model = str(model)
    _engine(model)  # a missing or outdated model stops the stage here, with its own message
    con.execute(f"DROP TABLE IF EXISTS {ANSWER_LANGUAGE_ALL.name}")
    con.execute(ANSWER_LANGUAGE_ALL.ddl())
    con.execute(PIPELINE_VERDICTS_SQL, {"targets": sorted(TARGETS)})
    judged = [r[0] for r in con.execute(JUDGED_IDS_SQL, {"targets": sorted(TARGETS)}).fetchall()]
    # Each batch's parts are queued before the previous batch's verdicts are stored, as in the surface stage.
    pending: collections.deque = collections.deque()
    judge = workers or map

    def store_next() -> None:
        verdicts = _rows(*pending.popleft())
        append(con, ANSWER_LANGUAGE_ALL, verdicts)
        bar.update(verdicts.height)

    with tqdm(total=len(judged), desc="n-gram language verdicts", unit="answer", disable=None) as bar:
        for start in range(0, len(judged), BATCH_ANSWERS):
            answers = _read(con, judged[start:start + BATCH_ANSWERS])
            pending.append((answers, judge(_part_verdicts, _parts(model, answers))))
            if len(pending) > 1:
                store_next()
        while pending:
            store_next()
    return {ANSWER_LANGUAGE_ALL.name: con.execute(f"SELECT count(*) FROM {ANSWER_LANGUAGE_ALL.name}").fetchall()[0][0]}


def refresh(con: duckdb.DuckDBPyConnection, answer_ids: list[int], model: Path | str = paths.LANGUAGE_ID_MODEL) -> None:
    """Verdicts for the given answers only (new or changed by an import), after their surface verdicts."""
    verdicts = answer_verdicts(con, answer_ids, model)
    con.execute(f"DELETE FROM {ANSWER_LANGUAGE_ALL.name} WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    append(con, ANSWER_LANGUAGE_ALL, verdicts)
