"""Surface-level verdicts on the model answers (docs/methods.md, section 03 Surface quality): language,
repetitions, provider errors, textual indicators, answer lengths.

`write_tables(con)` computes a verdict for every model answer (table `answer_surface`) and runs the same
language identification on every question (table `question_language_id`); `refresh_answers` and
`refresh_questions` compute them for the answers and questions an import adds or changes.
`analysis.analyses.surface` reads the tables.

An answer has a surface issue when it is a provider error (empty, or one of the texts the study declares
its provider returned instead of an answer, `study.provider_error_codes`: for CaLMQA the finish-reason
codes Gemini's API returned, which the release stores as the answer's text), repeats itself (some
sequence of 20 consecutive o200k_base tokens occurs 4 or more times) or is not in the question's
language. A provider error has no language or repetition verdict: it is neither "wrong language" nor
clean. The language verdict is that of the identification the build's workers hold
(`executors.VerdictModels`): the paper's pipeline (`language_id.Identifier`, CaLMQA), or a study's
routing (`language_routing.RoutedIdentifier`: the question's language as a prior, too short to judge below
the language's first length band), after the researcher's own verdicts (`answer_language_given`), which
take precedence; none where the language is not identified (`languages.identified`).
"""

import collections
import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import polars as pl
import regex
from tqdm import tqdm

from ..schema import ANSWER_SURFACE, NO_SURFACE_ISSUE, QUESTION_LANGUAGE_ID
from ..store import append, create_macros, insert
from . import executors, tokenizer
from .executors import VerdictModels, Workers
from .language_id import Verdict
from .language_routing import given_verdict, text_length

if TYPE_CHECKING:
    import quicktok

REPETITION_NGRAM = 20
REPETITION_MIN_COUNT = 4
EMPTY_CODE = "empty"

TABLES = (ANSWER_SURFACE, QUESTION_LANGUAGE_ID)

# The textual indicators of the paper's Appendix C.2 are plain text matches (no language identification),
# so they count in every language. These rules give the paper's shares exactly (docs/methods.md, section
# 03 Surface quality): a lower-case substring for the apology words and `translat`, the language's
# English name as written, and any pictographic character.
APOLOGY_WORDS = ("sorry", "apologize", "understand")
TRANSLATION_STEM = "translat"
_EMOJI = regex.compile(r"\p{Extended_Pictographic}")


# ---------------------------------------------------------------- tokenizer for the repetition rule


def repetition_tokenizer() -> "quicktok.Tokenizer":
    """o200k_base, the paper's encoding, offline and verified: quicktok's implementation, whose token ids
    are tiktoken's (`pipeline.tokenizer`) and which encodes about four times as fast."""
    return tokenizer.quicktok_o200k()


# ---------------------------------------------------------------- repetition


def max_ngram_count(tokens: np.ndarray, n: int = REPETITION_NGRAM) -> int:
    """Occurrences of the most frequent run of `n` consecutive tokens (overlaps count); 0 below n tokens."""
    if len(tokens) < n:
        return 0
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(tokens), n)
    return int(np.unique(windows, axis=0, return_counts=True)[1].max())


def _checked_max_ngram_count(tokens: np.ndarray, n: int = REPETITION_NGRAM, hashes: np.ndarray | None = None) -> int:
    """`max_ngram_count` via the window hashes (`_window_hashes`, computed unless given): the largest
    group of equal hashes, checked window by window; only when a collision made it impure does it fall
    back to comparing whole windows."""
    tokens = np.asarray(tokens, dtype=np.uint64)
    if hashes is None:
        hashes = _window_hashes(tokens, n)
    values, counts = np.unique(hashes, return_counts=True)
    members = np.flatnonzero(hashes == values[counts.argmax()])
    windows = tokens[members[:, None] + np.arange(n)]
    if (windows == windows[0]).all():
        return len(members)
    return max_ngram_count(tokens, n)


# Random odd multipliers (fixed seed): a window's hash is sum(token_k * R_k) mod 2**64, so two different
# windows collide with probability at most 2**-47 (token ids are below 2**17).
_HASH_MULTIPLIERS = np.random.default_rng(20).integers(0, 2**63, size=REPETITION_NGRAM, dtype=np.uint64) * np.uint64(
    2
) + np.uint64(1)
_TEXT_BITS = 12
# Elements handled at a time where several passes go over them: a block stays in the processor's cache.
_CACHE_BLOCK = 1 << 14


def _window_hashes(tokens: np.ndarray, n: int) -> np.ndarray:
    """The hash of every run of n consecutive tokens of a uint64 token array, by start position."""
    hashes = np.empty(len(tokens) - n + 1, dtype=np.uint64)
    term = np.empty(min(_CACHE_BLOCK, len(hashes)), dtype=np.uint64)
    for start in range(0, len(hashes), _CACHE_BLOCK):
        end = min(start + _CACHE_BLOCK, len(hashes))
        window_hashes, window_term = hashes[start:end], term[: end - start]
        np.multiply(tokens[start:end], _HASH_MULTIPLIERS[0], out=window_hashes)
        for k in range(1, n):
            np.multiply(tokens[start + k : end + k], _HASH_MULTIPLIERS[k], out=window_term)
            window_hashes += window_term
    return hashes


def max_ngram_counts(token_arrays: list[np.ndarray], n: int = REPETITION_NGRAM) -> np.ndarray:
    """`max_ngram_count` of many texts at once, by hashing all their windows and sorting once.

    The text's index goes into the key's top bits, so equal windows of different texts never meet.
    A hash collision could only inflate a count; where the count reaches the repetition threshold it
    is checked exactly, so the repetition verdicts do not depend on hashing.
    """
    assert n == REPETITION_NGRAM and len(token_arrays) <= 2**_TEXT_BITS
    lengths = np.array([len(t) for t in token_arrays], dtype=np.int64)
    counts = np.zeros(len(token_arrays), dtype=np.int64)
    n_windows = np.maximum(lengths - n + 1, 0)
    if n_windows.sum() == 0:
        return counts
    tokens = np.concatenate(token_arrays).astype(np.uint64)
    hashes = _window_hashes(np.concatenate((tokens, np.zeros(n - 1, np.uint64))), n)
    # A window is a position whose n tokens all belong to the same text.
    starts = np.cumsum(lengths) - lengths
    text_of = np.repeat(np.arange(len(token_arrays), dtype=np.uint64), lengths)
    offset = np.arange(lengths.sum()) - np.repeat(starts, lengths)
    is_window = offset < np.repeat(n_windows, lengths)
    keys = (text_of[is_window] << np.uint64(64 - _TEXT_BITS)) | (hashes[is_window] >> np.uint64(_TEXT_BITS))
    # Sorted a few texts at a time (equal keys are of one text), in blocks that stay in the cache.
    ends = np.cumsum(n_windows)
    cuts = ends[np.searchsorted(ends, np.arange(_CACHE_BLOCK, ends[-1], _CACHE_BLOCK))]
    for start, end in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, ends[-1:]))):
        keys[start:end].sort()
    run_starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    run_lengths = np.diff(np.append(run_starts, len(keys)))
    run_texts = (keys[run_starts] >> np.uint64(64 - _TEXT_BITS)).astype(np.int64)
    np.maximum.at(counts, run_texts, run_lengths)
    for i in np.flatnonzero(counts >= REPETITION_MIN_COUNT):
        counts[i] = _checked_max_ngram_count(token_arrays[i], n, hashes[starts[i] : starts[i] + n_windows[i]])
    return counts


# ---------------------------------------------------------------- indicators


def provider_error_code(text: str | None, codes: tuple[str, ...] = ()) -> str | None:
    """`empty`, or the text when it is one of the study's provider error `codes`, when the provider
    returned an error instead of an answer; else None."""
    if not text:
        return EMPTY_CODE
    return text if text in codes else None


def indicators(text: str, language: str) -> dict[str, bool]:
    """The textual indicators of the paper's Appendix C.2 for one answer to a question in `language`."""
    lower = text.lower()
    return {
        "apology": any(word in lower for word in APOLOGY_WORDS),
        "language_name_mention": language in text,
        "translation_mention": TRANSLATION_STEM in lower,
        "emoji": not text.isascii() and _EMOJI.search(text) is not None,
    }


# ---------------------------------------------------------------- verdicts

# A part of the answers (or questions) as the workers take it: the key of the language identification
# (`executors.VerdictModels.surface_key`), ids, texts, question languages, the detectors of those languages
# (`languages.detector`), the researcher's own verdicts of the answers' language (`answer_language_given`;
# None where not given), the study's provider error codes.
Chunk = tuple[str, list[int], list[str], list[str], list[str], list[str | None], tuple[str, ...]]


def _chunk_verdicts(chunk: Chunk) -> dict[str, list]:
    """The verdicts of a chunk of answers, as columns; it runs on the workers, with the models they
    loaded (`executors`)."""
    identification, answer_ids, texts, languages, detectors, given, error_codes = chunk
    identifier, encoding = executors.surface_identifier(identification), repetition_tokenizer()
    codes = [provider_error_code(t, error_codes) for t in texts]
    # The researcher's own verdict takes precedence over every engine.
    verdicts: dict[int, Verdict | None] = {
        i: given_verdict(label) for i, label in enumerate(given) if label and codes[i] is None
    }
    judged = [i for i, code in enumerate(codes) if code is None and i not in verdicts]
    verdicts |= dict(
        zip(
            judged,
            identifier.identify(
                [texts[i] for i in judged], [languages[i] for i in judged], [detectors[i] for i in judged]
            ),
        )
    )
    # Special-token strings in an answer are ordinary text, as for any text a model wrote.
    lengths = text_length(texts)
    tokens = [np.array(encoding.encode_ordinary(t), dtype=np.uint32) for t in texts]
    repeat_counts = max_ngram_counts(tokens)
    columns: dict[str, list] = {
        name: []
        for name in (
            "answer_id",
            "empty",
            "provider_error_code",
            "language_engine",
            "language_raw",
            "detected_language",
            "abstained",
            "language_chars",
            "n_tokens",
            "repeat_count",
            "tokenizer",
            "apology",
            "language_name_mention",
            "translation_mention",
            "emoji",
        )
    }
    for i, (answer_id, text, language) in enumerate(zip(answer_ids, texts, languages)):
        verdict = verdicts.get(i)
        columns["answer_id"].append(answer_id)
        columns["empty"].append(not text)
        columns["provider_error_code"].append(codes[i])
        columns["language_engine"].append(verdict.engine if verdict else None)
        columns["language_raw"].append(verdict.raw_json() if verdict else None)
        columns["detected_language"].append(verdict.language if verdict and not verdict.abstained else None)
        columns["abstained"].append(bool(verdict and verdict.abstained))
        columns["language_chars"].append(int(lengths[i]))
        columns["n_tokens"].append(len(tokens[i]))
        columns["repeat_count"].append(0 if codes[i] else int(repeat_counts[i]))
        columns["tokenizer"].append(encoding.name)
        for name, value in indicators(text, language).items():
            columns[name].append(value)
    return columns


def _chunks(rows: pl.DataFrame, key: str, workers: Workers, error_codes: tuple[str, ...] = ()) -> list[Chunk]:
    """`rows` (columns `key`, text, language, detector, and given_language where the researcher gave
    verdicts) cut into chunks for the workers (`Chunk`)."""
    if "given_language" not in rows.columns:
        rows = rows.with_columns(given_language=pl.lit(None, pl.String))
    rows = rows.select(key, "text", "language", "detector", "given_language").with_columns(
        pl.col("text").fill_null(""), pl.col("text").fill_null("").str.len_bytes().alias("n_bytes")
    )
    # Longest texts first and in length order, so that chunks hold texts of similar length (langid's
    # batch walk takes as many steps as its longest text) and the slowest chunks start first.
    rows = rows.sort("n_bytes", key, descending=[True, False])
    n_chunks = max(workers.parallelism * 4, -(-rows.height // 2**_TEXT_BITS))
    bounds = np.linspace(0, rows.height, n_chunks + 1).astype(int)
    return [
        (
            workers.models.surface_key,
            rows[key][a:b].to_list(),
            rows["text"][a:b].to_list(),
            rows["language"][a:b].to_list(),
            rows["detector"][a:b].to_list(),
            rows["given_language"][a:b].to_list(),
            error_codes,
        )
        for a, b in zip(bounds[:-1], bounds[1:])
        if b > a
    ]


def _verdicts(answers: pl.DataFrame, parts: Iterable[dict[str, list]], bar: tqdm) -> pl.DataFrame:
    """The rows of `answer_surface` for `answers` from the verdicts of their chunks."""
    collected = []
    for part in parts:
        collected.append(part)
        bar.update(len(part["answer_id"]))
    columns = {name: [v for part in collected for v in part[name]] for name in collected[0]} if collected else {}
    verdicts = pl.DataFrame(
        columns,
        schema={
            "answer_id": pl.Int64,
            "empty": pl.Boolean,
            "provider_error_code": pl.String,
            "language_engine": pl.String,
            "language_raw": pl.String,
            "detected_language": pl.String,
            "abstained": pl.Boolean,
            "language_chars": pl.Int32,
            "n_tokens": pl.Int32,
            "repeat_count": pl.Int32,
            "tokenizer": pl.String,
            "apology": pl.Boolean,
            "language_name_mention": pl.Boolean,
            "translation_mention": pl.Boolean,
            "emoji": pl.Boolean,
        },
    )
    return _finish(verdicts.join(answers.select("answer_id", "language", "iso_code", "identified"), on="answer_id"))


def _started(workers: Workers | None, processes: int | None = 1, langid_engine: str = "langid-batch"):
    """`workers` if given, else workers started for this call: `processes` forked (1: this process; None:
    `executors.PROCESSES`)."""
    if workers is not None:
        return contextlib.nullcontext(workers)
    return executors.start(VerdictModels(langid_engine), processes=processes)


def _bar(total: int, what: str, workers: Workers, progress: bool = True) -> tqdm:
    return tqdm(total=total, desc=f"{what} ({workers.where})", unit="answer", disable=None if progress else True)


def surface_verdicts(
    answers: pl.DataFrame,
    error_codes: tuple[str, ...] = (),
    processes: int | None = None,
    langid_engine: str = "langid-batch",
    progress: bool = True,
    workers: Workers | None = None,
) -> pl.DataFrame:
    """Verdicts for `answers` (columns answer_id, text, language, iso_code, identified, detector: the
    question's language, its ISO code, whether it is identified and its `languages.detector`), as rows of `answer_surface`, sorted by
    answer_id; `error_codes` are the study's provider error codes. On `workers`, else on `processes`
    forked here with the langid engine `langid_engine` (one process when the answers make one chunk)."""
    one_chunk = answers.height <= 1
    with _started(workers, 1 if one_chunk else processes, langid_engine) as workers:
        with _bar(answers.height, "surface verdicts", workers, progress) as bar:
            chunks = _chunks(answers, "answer_id", workers, error_codes)
            return _verdicts(answers, workers.map_unordered(_chunk_verdicts, chunks), bar)


def _finish(verdicts: pl.DataFrame) -> pl.DataFrame:
    """The derived verdicts: provider error, language match, correctness and abstention, repetition,
    surface_ok. An answered text in an identified language without a language (too short to judge, or no
    engine and no verdict of the researcher) is abstained on: counted apart, never as wrong."""
    match = pl.col("detected_language") == pl.col("iso_code")
    correct = pl.when(pl.col("identified")).then(pl.col("language_match"))
    abstained = (
        pl.when(pl.col("provider_error"))
        .then(None)
        .otherwise(pl.col("abstained") | (pl.col("identified") & pl.col("detected_language").is_null()))
    )
    return (
        verdicts.with_columns(
            language_match=match,
            repetition=pl.col("repeat_count") >= REPETITION_MIN_COUNT,
            provider_error=pl.col("provider_error_code").is_not_null(),
        )
        .with_columns(language_correct=correct, language_abstained=abstained)
        .pipe(_with_surface_ok)
        .select(ANSWER_SURFACE.column_names())
        .sort("answer_id")
    )


def _with_surface_ok(verdicts: pl.DataFrame) -> pl.DataFrame:
    """`verdicts` with `surface_ok`: the schema's one rule (`schema.NO_SURFACE_ISSUE`, three-valued), run
    by DuckDB as every query of the database runs it."""
    with duckdb.connect() as con:
        create_macros(con)
        con.register("verdicts", verdicts.to_arrow())
        ok = NO_SURFACE_ISSUE("provider_error", "repetition", "language_correct")
        column = con.sql(f"SELECT {ok} AS surface_ok FROM verdicts").pl()
    return verdicts.with_columns(column["surface_ok"])


MODEL_ANSWERS_SQL = """
SELECT a.answer_id, a.text, q.language, l.iso_code, l.identified, l.detector, g.iso_code AS given_language
FROM answers a JOIN questions q USING (question_id) JOIN languages l ON l.language = q.language
LEFT JOIN answer_language_given g USING (answer_id)
WHERE NOT a.is_human AND a.answer_id IN (SELECT unnest($answer_ids))
ORDER BY a.answer_id
"""
# Answers are read and judged this many at a time, so that memory stays bounded however many there are:
# the driver holds at most two batches' texts and verdicts (about 40 MiB per 1,000 answers of the release).
BATCH_SIZE = 10_000


def error_codes(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """The study's provider error codes (`study.provider_error_codes`)."""
    return tuple(con.execute("SELECT provider_error_codes FROM study").fetchall()[0][0])


def answer_verdicts(con: duckdb.DuckDBPyConnection, answer_ids: list[int], **options) -> pl.DataFrame:
    """Verdicts for the model answers of `answer_ids` (human reference answers among them are skipped)."""
    answers = con.sql(MODEL_ANSWERS_SQL, params={"answer_ids": answer_ids}).pl()
    return surface_verdicts(answers, error_codes(con), **options)


QUESTIONS_SQL = """
SELECT q.question_id, q.text, q.language, l.iso_code, l.detector
FROM questions q JOIN languages l USING (language)
{where}
ORDER BY q.question_id
"""


def _question_chunk(chunk: Chunk) -> tuple[list, ...]:
    """The verdicts of a chunk of questions (`Chunk`): ids, engines, raw verdicts and detected languages.
    It runs on the workers, like `_chunk_verdicts`."""
    identification, question_ids, texts, languages, detectors, _, _ = chunk
    verdicts = executors.surface_identifier(identification).identify(texts, languages, detectors)
    # (a study's engine gives no verdict in a language it has no model of: nulls, as for an answer)
    return (
        question_ids,
        [v.engine if v else None for v in verdicts],
        [v.raw_json() if v else None for v in verdicts],
        [v.language if v else None for v in verdicts],
    )


def question_language_ids(
    con: duckdb.DuckDBPyConnection, question_ids: list[int] | None = None, workers: Workers | None = None
) -> pl.DataFrame:
    """The language identification run on every question (or those of `question_ids`), as rows of
    `question_language_id` sorted by question_id: on `workers`, else in this process."""
    if question_ids is None:
        questions = con.sql(QUESTIONS_SQL.format(where="")).pl()
    else:
        questions = con.sql(
            QUESTIONS_SQL.format(where="WHERE q.question_id IN (SELECT unnest($ids))"), params={"ids": question_ids}
        ).pl()
    columns: list[list] = [[], [], [], []]
    with _started(workers) as workers:
        # In batches: the langid step's working memory grows with the number of texts it is given at once.
        for batch in questions.iter_slices(BATCH_SIZE):
            for part in workers.map_unordered(_question_chunk, _chunks(batch, "question_id", workers)):
                for column, values in zip(columns, part):
                    column.extend(values)
    verdicts = pl.DataFrame(
        dict(zip(("question_id", "language_engine", "language_raw", "detected_language"), columns)),
        schema={
            "question_id": pl.Int64,
            "language_engine": pl.String,
            "language_raw": pl.String,
            "detected_language": pl.String,
        },
    )
    return (
        questions.join(verdicts, on="question_id")
        .with_columns(identified_correctly=pl.col("detected_language") == pl.col("iso_code"))
        .select(QUESTION_LANGUAGE_ID.column_names())
        .sort("question_id")
    )


def write_tables(
    con: duckdb.DuckDBPyConnection, workers: Workers | None = None, processes: int | None = None
) -> dict[str, int]:
    """Create and fill `answer_surface` and `question_language_id` from the open read-write connection,
    replacing them if they are there (every verdict is recomputed). `workers`: the build's
    (`executors.start`), else `processes` are forked here."""
    for table in TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table.name}")
    con.execute(ANSWER_SURFACE.ddl())
    answer_ids = [r[0] for r in con.execute("SELECT answer_id FROM answers WHERE NOT is_human ORDER BY 1").fetchall()]
    codes = error_codes(con)
    # One set of workers for all batches, and each batch's chunks queued before the previous batch's
    # verdicts are collected and stored, so that the workers do not wait for the database between batches.
    pending: collections.deque[tuple[pl.DataFrame, Iterable[dict[str, list]]]] = collections.deque()
    with _started(workers, processes) as workers, _bar(len(answer_ids), "surface verdicts", workers) as bar:
        for start in range(0, len(answer_ids), BATCH_SIZE):
            answers = con.sql(MODEL_ANSWERS_SQL, params={"answer_ids": answer_ids[start : start + BATCH_SIZE]}).pl()
            parts = workers.map_unordered(_chunk_verdicts, _chunks(answers, "answer_id", workers, codes))
            # The chunks carry the texts: only what `_verdicts` joins waits here.
            pending.append((answers.drop("text"), parts))
            if len(pending) > 1:
                append(con, ANSWER_SURFACE, _verdicts(*pending.popleft(), bar))
        while pending:
            append(con, ANSWER_SURFACE, _verdicts(*pending.popleft(), bar))
        if paper_identification(con):
            insert(con, QUESTION_LANGUAGE_ID, question_language_ids(con, workers=workers))
        else:
            con.execute(QUESTION_LANGUAGE_ID.ddl())  # the paper's pipeline on the questions: CaLMQA's Table 13
    return {t.name: con.execute(f"SELECT count(*) FROM {t.name}").fetchall()[0][0] for t in TABLES}


def paper_identification(con: duckdb.DuckDBPyConnection) -> bool:
    """The study's language verdicts are the CaLMQA paper's pipeline (`study.language_identification`)."""
    return con.execute("SELECT language_identification FROM study").fetchall()[0][0] == "paper"


def refresh_answers(con: duckdb.DuckDBPyConnection, answer_ids: list[int], workers: Workers | None = None) -> None:
    """Verdicts for the given answers only (new or changed by an import), replacing any they had: on
    `workers`, else on worker processes forked here."""
    verdicts = answer_verdicts(con, answer_ids, workers=workers)
    con.execute("DELETE FROM answer_surface WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    append(con, ANSWER_SURFACE, verdicts)


def refresh_questions(con: duckdb.DuckDBPyConnection, question_ids: list[int], workers: Workers | None = None) -> None:
    """The language identification of the given questions only (added by an import)."""
    verdicts = question_language_ids(con, question_ids=question_ids, workers=workers)
    con.execute("DELETE FROM question_language_id WHERE question_id IN (SELECT unnest(?))", [question_ids])
    append(con, QUESTION_LANGUAGE_ID, verdicts)
