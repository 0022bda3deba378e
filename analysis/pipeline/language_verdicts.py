"""The verdicts of the all-languages engine (`pipeline.language_id_all`) on every model answer: table
`answer_language_all`. The study's own verdicts are read from `answer_surface`, so this stage runs after
the surface stage. An answer to a question in a language those verdicts leave unidentified
(`languages.identified` false: the four languages the CaLMQA paper leaves out) is judged by the n-gram
engine where it knows the language (on the build's workers, `executors`); every other answer keeps the
study's verdict, copied in SQL without reading its text (a study's answers were judged by the engine
already, in the surface stage)."""

import collections
import contextlib
from collections.abc import Iterable
from pathlib import Path

import duckdb
import polars as pl
from tqdm import tqdm

from ..core import paths
from ..schema import ANSWER_LANGUAGE_ALL
from ..store import append
from . import executors
from .executors import VerdictModels, Workers
from .language_id_all import CHUNK_TEXTS, ENGINE_NGRAM, ENGINE_PAPER
from .language_routing import ENGINE_LINGUA, GIVEN

# Answers read at once: memory stays bounded however many answers there are.
BATCH_ANSWERS = 20_000

_SURFACE_ANSWERS = """FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language"""
# The answers the n-gram engine judges (`Engine.verdicts`' rule): those to a question in a target
# language that are not provider errors (which have no verdict). Every other answer keeps the pipeline's.
_JUDGED = "q.language IN (SELECT unnest($targets)) AND s.detected_language IS NOT NULL"

PIPELINE_VERDICTS_SQL = f"""
INSERT INTO {ANSWER_LANGUAGE_ALL.name}
SELECT s.answer_id, s.detected_language,
       CASE WHEN s.language_engine IN ('{ENGINE_NGRAM}', '{ENGINE_LINGUA}', '{GIVEN}') THEN s.language_engine
            WHEN s.detected_language IS NOT NULL THEN '{ENGINE_PAPER}' END,
       CASE WHEN s.language_engine = '{ENGINE_NGRAM}'
            THEN -CAST(json_extract(s.language_raw, '$.ngram.difference') AS DOUBLE) END,
       s.detected_language = l.iso_code
{_SURFACE_ANSWERS}
WHERE NOT ({_JUDGED}){{scope}}
ORDER BY s.answer_id
"""
JUDGED_IDS_SQL = f"SELECT s.answer_id {_SURFACE_ANSWERS} WHERE {_JUDGED}{{scope}} ORDER BY 1"
JUDGED_ANSWERS_SQL = f"""
SELECT s.answer_id, q.language, l.iso_code, s.detected_language AS pipeline, a.text
{_SURFACE_ANSWERS}
WHERE s.answer_id IN (SELECT unnest($answer_ids))
ORDER BY s.answer_id
"""


def _part_verdicts(part: tuple[str, list[int], list[str], list[str], list[str]]) -> tuple[list, ...]:
    """The engine's verdicts (answer ids, detected languages, engines, margins) for a part of the judged
    answers (the engine's key, answer ids, texts, question languages, pipeline verdicts). Lists only: it
    runs on the workers, with the engine they loaded (`executors`), where polars must not (in a forked
    worker its thread pool would not survive the fork)."""
    engine_key, answer_ids, texts, languages, pipeline = part
    return answer_ids, *executors.ngram_engine(engine_key).verdicts(texts, languages, pipeline)


def _parts(engine_key: str, answers: pl.DataFrame) -> list[tuple[str, list[int], list[str], list[str], list[str]]]:
    """`answers` (rows of `JUDGED_ANSWERS_SQL`) in parts of `CHUNK_TEXTS`, as `_part_verdicts` takes them."""
    return [
        (
            engine_key,
            part["answer_id"].to_list(),
            part["text"].fill_null("").to_list(),
            part["language"].to_list(),
            part["pipeline"].to_list(),
        )
        for part in answers.iter_slices(CHUNK_TEXTS)
    ]


def _rows(answers: pl.DataFrame, parts: Iterable[tuple[list, ...]]) -> pl.DataFrame:
    """Rows of `answer_language_all` for `answers` (rows of `JUDGED_ANSWERS_SQL`) from their parts' verdicts."""
    columns = list(zip(*parts))
    verdicts = pl.DataFrame(
        {
            name: [v for part in column for v in part]
            for name, column in zip(("answer_id", "detected_language", "engine", "ngram_margin"), columns)
        },
        schema={"answer_id": pl.Int64, "detected_language": pl.String, "engine": pl.String, "ngram_margin": pl.Float64},
    )
    return (
        verdicts.join(answers.select("answer_id", "iso_code"), on="answer_id")
        .with_columns(all_languages_correct=pl.col("detected_language") == pl.col("iso_code"))
        .select(ANSWER_LANGUAGE_ALL.column_names())
        .sort("answer_id")
    )


def _add_verdicts(con: duckdb.DuckDBPyConnection, workers: Workers, answer_ids: list[int] | None = None) -> None:
    """Add the rows of `answer_language_all` for the answers of `answer_ids` (None: every answer with a
    surface verdict): the study's verdicts copied in SQL, the judged answers scored by the n-gram engine
    on `workers`, a batch queued before the previous one is stored."""
    workers.models.load_engine()  # here too: the languages it decides for choose the answers it judges
    engine = executors.ngram_engine(workers.models.engine_key)
    unidentified = [r[0] for r in con.execute("SELECT language FROM languages WHERE NOT identified").fetchall()]
    params: dict = {"targets": sorted(set(unidentified) & set(engine.targets))}
    scope = ""
    if answer_ids is not None:
        scope, params["answer_ids"] = " AND s.answer_id IN (SELECT unnest($answer_ids))", answer_ids
    con.execute(PIPELINE_VERDICTS_SQL.format(scope=scope), params)
    judged = [r[0] for r in con.execute(JUDGED_IDS_SQL.format(scope=scope), params).fetchall()]
    pending: collections.deque = collections.deque()

    def store_next() -> None:
        verdicts = _rows(*pending.popleft())
        append(con, ANSWER_LANGUAGE_ALL, verdicts)
        bar.update(verdicts.height)

    with tqdm(
        total=len(judged), desc=f"n-gram language verdicts ({workers.where})", unit="answer", disable=None
    ) as bar:
        for start in range(0, len(judged), BATCH_ANSWERS):
            answers = con.sql(JUDGED_ANSWERS_SQL, params={"answer_ids": judged[start : start + BATCH_ANSWERS]}).pl()
            parts = workers.map_unordered(_part_verdicts, _parts(workers.models.engine_key, answers))
            pending.append((answers.drop("text"), parts))  # the chunks carry the texts
            if len(pending) > 1:
                store_next()
        while pending:
            store_next()


def _started(workers: Workers | None, model: Path | str):
    """`workers` if given, else this process with the n-gram engine trained into `model`."""
    if workers is not None:
        return contextlib.nullcontext(workers)
    return executors.start(VerdictModels.read(model), processes=1)


def write_tables(
    con: duckdb.DuckDBPyConnection, workers: Workers | None = None, model: Path | str = paths.LANGUAGE_ID_MODEL
) -> dict[str, int]:
    """Create and fill `answer_language_all` for every model answer (it reads `answer_surface`, so it runs
    after the surface stage), replacing the table if it is there. `workers`: the build's
    (`executors.start`), which hold the n-gram engine; else it is read from `model` and run here."""
    con.execute(f"DROP TABLE IF EXISTS {ANSWER_LANGUAGE_ALL.name}")
    con.execute(ANSWER_LANGUAGE_ALL.ddl())
    with _started(workers, model) as workers:
        _add_verdicts(con, workers)
    return {ANSWER_LANGUAGE_ALL.name: con.execute(f"SELECT count(*) FROM {ANSWER_LANGUAGE_ALL.name}").fetchall()[0][0]}


def refresh(
    con: duckdb.DuckDBPyConnection,
    answer_ids: list[int],
    workers: Workers | None = None,
    model: Path | str = paths.LANGUAGE_ID_MODEL,
) -> None:
    """Verdicts for the given answers only (new or changed by an import), after their surface verdicts."""
    con.execute(f"DELETE FROM {ANSWER_LANGUAGE_ALL.name} WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    with _started(workers, model) as workers:
        _add_verdicts(con, workers, answer_ids)
