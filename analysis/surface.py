"""Surface-level quality of the model answers (docs/methods.md, section 03 Surface quality): language,
repetitions, provider errors, textual indicators, answer lengths.

`write_tables(con)` computes a verdict for every model answer (table `answer_surface`) and runs the same
language identification on every question (table `question_language_id`); `answer_verdicts` and
`surface_verdicts` compute verdicts for a subset, for answers imported later. The notebook functions
below only read those tables.

An answer has a surface issue when it is a provider error (empty, or one of the finish-reason codes
Gemini's API returned, which the release stores as the answer's text), repeats itself (some sequence of
20 consecutive o200k_base tokens occurs 4 or more times) or is not in the question's language. A
provider error has no language or repetition verdict: it is neither "wrong language" nor clean.
"""

import contextlib
import multiprocessing
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import regex
import tiktoken
from tqdm import tqdm

from . import db, intervals, paths, schema, tokenizer
from .language_id import UNRELIABLE_LANGUAGES, Identifier

REPETITION_NGRAM = 20
REPETITION_MIN_COUNT = 4
# What Gemini's API returned instead of an answer, stored as the answer's text in the release: the
# finish reasons of a blocked or failed generation. With the empty answers they are provider errors.
PROVIDER_ERROR_CODES = ("OTHER", "SAFETY", "RECITATION")
EMPTY_CODE = "empty"
PROCESSES = 2
BENCH_RESULTS = paths.BENCH_RESULTS

C = schema.Column
ANSWER_SURFACE = schema.Table("answer_surface", "Surface-level verdicts for every model answer (analyses.md section 3).", (
    C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL"),
    C("empty", "BOOLEAN", "the text is empty", "NOT NULL"),
    C("provider_error", "BOOLEAN", "the provider returned an error instead of an answer: the text is empty or a finish-reason code (`OTHER`, `SAFETY`, `RECITATION`)", "NOT NULL"),
    C("provider_error_code", "VARCHAR", "the raw error: `empty` or the code stored as the text; NULL for an answer"),
    C("language_engine", "VARCHAR", "what decided the language: `cld2`, `cld2-best-effort` or the langid engine (`langid-batch`: langid 1.1.6's model); NULL for a provider error"),
    C("language_raw", "VARCHAR", "JSON of every engine's raw verdict (CLD2's reliability flag and top 3; langid's code and score)"),
    C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code (`iw` -> `he`; `und` for CLD2's unknown); NULL for a provider error"),
    C("language_match", "BOOLEAN", "`detected_language` is the question's language; NULL for a provider error"),
    C("language_correct", "BOOLEAN", "`language_match`, but NULL where identification is unreliable (Balochi, Hiligaynon, Kirundi, Papiamento)"),
    C("n_tokens", "INTEGER", "length of the text in tokens of `tokenizer` (paper Table 17)", "NOT NULL"),
    C("repeat_count", "INTEGER", "occurrences of the most frequent sequence of 20 consecutive tokens (0 below 20 tokens)", "NOT NULL"),
    C("repetition", "BOOLEAN", "some sequence of 20 consecutive tokens occurs 4 or more times (false for a provider error)", "NOT NULL"),
    C("tokenizer", "VARCHAR", "tiktoken encoding of `n_tokens` and `repeat_count`: `o200k_base`, as the paper", "NOT NULL"),
    C("surface_ok", "BOOLEAN", "no surface issue: no provider error, no repetition, `language_correct` (NULL when only the language verdict is unknown)"),
    C("apology", "BOOLEAN", "contains `sorry`, `apologize` or `understand` (case-insensitive substring)", "NOT NULL"),
    C("language_name_mention", "BOOLEAN", "contains the English name of the question's language as written (`Balochi`; case-sensitive substring)", "NOT NULL"),
    C("translation_mention", "BOOLEAN", "contains `translat` (translate, translation, translated...; case-insensitive substring)", "NOT NULL"),
    C("emoji", "BOOLEAN", "contains an emoji: a character of Unicode's Extended_Pictographic property", "NOT NULL"),
), ("answer_id",))
QUESTION_LANGUAGE_ID = schema.Table("question_language_id", "The language identification run on every question: the pipeline's own accuracy (paper Table 13).", (
    C("question_id", "BIGINT", "the question (`questions.question_id`)", "NOT NULL"),
    C("language_engine", "VARCHAR", "what decided the language, as in `answer_surface`", "NOT NULL"),
    C("language_raw", "VARCHAR", "JSON of every engine's raw verdict", "NOT NULL"),
    C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code", "NOT NULL"),
    C("language_correct", "BOOLEAN", "the question was identified as its own language (kept for the unreliable languages too: this table is what shows them unreliable)", "NOT NULL"),
), ("question_id",))
TABLES = (ANSWER_SURFACE, QUESTION_LANGUAGE_ID)

# The textual indicators of the paper's Appendix C.2 are plain text matches (no language identification),
# so they count in every language. These rules give the paper's shares exactly (docs/methods.md, section
# 03 Surface quality): a lower-case substring for the apology words and `translat`, the language's
# English name as written, and any pictographic character.
APOLOGY_WORDS = ("sorry", "apologize", "understand")
TRANSLATION_STEM = "translat"
_EMOJI = regex.compile(r"\p{Extended_Pictographic}")


# ---------------------------------------------------------------- tokenizer for the repetition rule

def repetition_tokenizer() -> tiktoken.Encoding:
    """o200k_base, the paper's encoding, offline and verified (`analysis.tokenizer`)."""
    return tokenizer.o200k_base()


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

def provider_error_code(text: str | None) -> str | None:
    """`empty` or the finish-reason code when the provider returned an error instead of an answer, else None."""
    if not text:
        return EMPTY_CODE
    return text if text in PROVIDER_ERROR_CODES else None


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

# Set in the parent before the worker processes fork, so that they share the loaded models.
_identifier: Identifier | None = None
_tokenizer: tiktoken.Encoding | None = None


def _chunk_verdicts(chunk: tuple[list[int], list[str], list[str]]) -> dict[str, list]:
    answer_ids, texts, languages = chunk
    codes = [provider_error_code(t) for t in texts]
    answered = [i for i, code in enumerate(codes) if code is None]
    verdicts = dict(zip(answered, _identifier.identify([texts[i] for i in answered], [languages[i] for i in answered])))
    # Special-token strings in an answer are ordinary text, as for any text a model wrote.
    tokens = [_tokenizer.encode_to_numpy(t, disallowed_special=()) for t in texts]
    repeat_counts = max_ngram_counts(tokens)
    columns: dict[str, list] = {name: [] for name in (
        "answer_id", "empty", "provider_error_code", "language_engine", "language_raw", "detected_language",
        "n_tokens", "repeat_count", "apology", "language_name_mention", "translation_mention", "emoji")}
    for i, (answer_id, text, language) in enumerate(zip(answer_ids, texts, languages)):
        verdict = verdicts.get(i)
        columns["answer_id"].append(answer_id)
        columns["empty"].append(not text)
        columns["provider_error_code"].append(codes[i])
        columns["language_engine"].append(verdict.engine if verdict else None)
        columns["language_raw"].append(verdict.raw_json() if verdict else None)
        columns["detected_language"].append(verdict.language if verdict else None)
        columns["n_tokens"].append(len(tokens[i]))
        columns["repeat_count"].append(0 if codes[i] else int(repeat_counts[i]))
        for name, value in indicators(text, language).items():
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
        "answer_id": pl.Int64, "empty": pl.Boolean, "provider_error_code": pl.String, "language_engine": pl.String,
        "language_raw": pl.String, "detected_language": pl.String, "n_tokens": pl.Int32, "repeat_count": pl.Int32,
        "apology": pl.Boolean,
        "language_name_mention": pl.Boolean, "translation_mention": pl.Boolean, "emoji": pl.Boolean})
    return _finish(verdicts.join(answers.select("answer_id", "language", "iso_code"), on="answer_id"), _tokenizer.name)


def _finish(verdicts: pl.DataFrame, tokenizer: str) -> pl.DataFrame:
    """The derived verdicts: provider error, language match and correctness, repetition, surface_ok."""
    match = pl.col("detected_language") == pl.col("iso_code")
    correct = pl.when(pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES))).then(None).otherwise(pl.col("language_match"))
    return (verdicts
            .with_columns(language_match=match, repetition=pl.col("repeat_count") >= REPETITION_MIN_COUNT,
                          tokenizer=pl.lit(tokenizer), provider_error=pl.col("provider_error_code").is_not_null())
            .with_columns(language_correct=correct)
            # Kleene logic, as SQL: an unknown language verdict leaves surface_ok unknown unless
            # another issue already decides it.
            .with_columns(surface_ok=~pl.col("provider_error") & ~pl.col("repetition") & pl.col("language_correct"))
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
       count(*) FILTER (s.provider_error) AS n_provider_errors,
       count(*) FILTER (NOT s.provider_error) AS n_answered,
       -- Unreliable languages keep their raw verdict here: the cells show them as not identified, and
       -- aggregates take them only when asked to (exclude_unreliable = false).
       count(*) FILTER (coalesce(s.language_correct, s.language_match)) AS n_correct_language,
       count(*) FILTER (s.repetition) AS n_repetition,
       count(*) FILTER (coalesce(s.surface_ok, NOT s.provider_error AND NOT s.repetition AND s.language_match)) AS n_surface_ok
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
JOIN models m ON m.model = a.model
GROUP BY ALL
ORDER BY model, l.resource_level, q.language, q.question_type
"""
# Each heatmap metric: its title, the count it is a share of and the denominator. A provider error is
# neither in the wrong language nor repetitive, so those two shares are of the answers the provider
# gave; it is a surface issue, so the clean share is of all answers.
METRICS = {
    "pct_correct_language": "% in the correct language",
    "pct_repetition": "% with repetitions",
    "pct_surface_ok": "% without surface issues",
}
METRIC_COUNTS = {
    "pct_correct_language": ("n_correct_language", "n_answered"),
    "pct_repetition": ("n_repetition", "n_answered"),
    "pct_surface_ok": ("n_surface_ok", "n_answers"),
}
# Metrics that need a language verdict, which the unreliable languages do not get.
LANGUAGE_DEPENDENT = frozenset({"pct_correct_language", "pct_surface_ok"})
PROVIDER_ERRORS_ONLY = "provider errors only"
NOT_IDENTIFIED = "language not identified"
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


def _share(count: str, denominator: str) -> pl.Expr:
    return pl.when(pl.col(denominator) > 0).then(100 * pl.col(count) / pl.col(denominator))


def rates_by_model_language(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per model, language and question type: the counts behind each metric and the shares (%), not
    rounded (paper Figures 13, 14 and 9). Unreliable languages carry their raw language verdict here;
    `metric_cells` shows them as not identified."""
    rates = con.sql(RATES_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES)}).pl()
    labels = language_labels(con)
    return rates.with_columns(
        language_label=pl.col("language").replace_strict(labels),
        pct_provider_errors=_share("n_provider_errors", "n_answers"),
        **{metric: _share(count, denominator) for metric, (count, denominator) in METRIC_COUNTS.items()})


def metric_cells(rates: pl.DataFrame, metric: str) -> pl.DataFrame:
    """The heatmap cells of one metric: the share (one decimal) with its 95% Wilson interval, and a
    `status` where the cell has no share to colour: `provider errors only` (no answer to judge) or
    `language not identified` (an unreliable language, for a metric that needs the language verdict)."""
    count, denominator = METRIC_COUNTS[metric]
    status = (pl.when(pl.col("n_answered") == 0).then(pl.lit(PROVIDER_ERRORS_ONLY))
              .when(pl.col("unreliable") & pl.lit(metric in LANGUAGE_DEPENDENT)).then(pl.lit(NOT_IDENTIFIED)))
    by = ["model", "language", "question_type"]
    cells = intervals.with_wilson(rates, count, denominator, decimals=1).with_columns(
        _share(count, denominator).alias(metric), status=status)
    blank = pl.col("status").is_not_null()
    return (cells.with_columns([pl.when(blank).then(None).otherwise(pl.col(c)).alias(c)
                                for c in (metric, "ci_low", "ci_high")])
            .with_columns(pl.col(metric).round(1))
            .select(*by, "language_label", "unreliable", *dict.fromkeys(("n_answers", "n_provider_errors", denominator)),
                    count, metric, "ci_low", "ci_high", "status")
            .sort(by))


def rates_by_model(rates: pl.DataFrame, exclude_unreliable: bool = True) -> pl.DataFrame:
    """Micro-averaged shares per model and question type (answers pooled over languages), one decimal."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    counts = ["n_answers", "n_answered", "n_provider_errors", *(c for c, _ in METRIC_COUNTS.values())]
    return (kept.group_by("model", "question_type")
            .agg(pl.col(counts).sum(), pl.col("language").n_unique().alias("n_languages"))
            .with_columns(*[_share(count, denominator).round(1).alias(metric)
                            for metric, (count, denominator) in METRIC_COUNTS.items()],
                          pct_provider_errors=_share("n_provider_errors", "n_answers").round(1))
            .select("model", "question_type", "n_languages", "n_answers", "n_provider_errors", *METRICS,
                    "pct_provider_errors")
            .sort("model", "question_type"))


# ---------------------------------------------------------------- provider errors (Table 2 footnote)

PROVIDER_ERRORS_SQL = """
SELECT m.display_name AS model, q.language, q.question_type,
       q.language IN (SELECT unnest($unreliable)) AS unreliable,
       count(*) AS n_answers,
       count(*) FILTER (s.provider_error) AS n_provider_errors,
       count(*) FILTER (s.provider_error_code = 'OTHER') AS n_other,
       count(*) FILTER (s.provider_error_code = 'SAFETY') AS n_safety,
       count(*) FILTER (s.provider_error_code = 'RECITATION') AS n_recitation,
       count(*) FILTER (s.provider_error_code = 'empty') AS n_empty
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN models m ON m.model = a.model
GROUP BY ALL
"""


def _provider_error_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return con.sql(PROVIDER_ERRORS_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES)}).pl()


def provider_error_cells(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """% of answers that are provider errors, per model (those with any), language and question type,
    with the raw codes counted and the 95% Wilson interval."""
    counts = _provider_error_counts(con)
    erring = counts.group_by("model").agg(pl.col("n_provider_errors").sum()).filter(pl.col("n_provider_errors") > 0)["model"]
    labels = language_labels(con)
    cells = (counts.filter(pl.col("model").is_in(erring.implode()))
             .with_columns(language_label=pl.col("language").replace_strict(labels),
                           pct_provider_errors=_share("n_provider_errors", "n_answers").round(1)))
    return (intervals.with_wilson(cells, "n_provider_errors", "n_answers", decimals=1)
            .sort("model", "language", "question_type"))


def provider_error_shares(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The paper's Table 2 footnote: % of each model's answers that are provider errors, per question type,
    over the 19 languages with reliable identification (as Table 2 aggregates), two decimals."""
    counts = (_provider_error_counts(con).filter(~pl.col("unreliable"))
              .group_by("model", "question_type")
              .agg(pl.col("n_answers", "n_provider_errors", "n_other", "n_safety", "n_recitation", "n_empty").sum(),
                   pl.col("language").n_unique().alias("n_languages"))
              .with_columns(pct_provider_errors=_share("n_provider_errors", "n_answers").round(2)))
    return intervals.with_wilson(counts, "n_provider_errors", "n_answers", decimals=2).sort("model", "question_type")


# ---------------------------------------------------------------- identification accuracy (Table 13)

QUESTION_ACCURACY_SQL = """
WITH detected AS (
    SELECT q.language, q.question_type, l.resource_level, l.iso_code, i.detected_language, i.language_correct
    FROM question_language_id i JOIN questions q USING (question_id) JOIN languages l ON l.language = q.language
), wrong AS (
    SELECT language, detected_language, count(*) AS n
    FROM detected WHERE NOT language_correct AND question_type = $question_type GROUP BY ALL
)
SELECT d.resource_level, d.language, d.iso_code,
       d.language IN (SELECT unnest($unreliable)) AS unreliable,
       count(*) FILTER (d.question_type = $question_type) AS n_questions,
       count(*) FILTER (d.question_type = $question_type AND d.language_correct) AS n_identified,
       round(100 * n_identified / n_questions, 2) AS pct_identified,
       count(*) AS n_questions_all_types,
       round(100 * avg(d.language_correct::INT), 2) AS pct_identified_all_types,
       (SELECT string_agg(w.detected_language || ' (' || w.n || ')', ', ' ORDER BY w.n DESC, w.detected_language)
        FROM wrong w WHERE w.language = d.language) AS detected_instead
FROM detected d
GROUP BY d.resource_level, d.language, d.iso_code
ORDER BY d.resource_level, d.language
"""
TABLE13_QUESTION_TYPE = "specific"


def question_identification_accuracy(con: duckdb.DuckDBPyConnection, question_type: str = TABLE13_QUESTION_TYPE) -> pl.DataFrame:
    """Table 13: per language, the % of its culturally specific questions (the paper's denominators)
    identified as their own language, two decimals, with the 95% Wilson interval; beside it the same over
    all its questions, and what the missed questions were taken for."""
    table = con.sql(QUESTION_ACCURACY_SQL, params={"unreliable": sorted(UNRELIABLE_LANGUAGES),
                                                    "question_type": question_type}).pl()
    table = intervals.with_wilson(table, "n_identified", "n_questions", decimals=2)
    return table.select("resource_level", "language", "iso_code", "unreliable", "n_questions", "n_identified",
                        "pct_identified", "ci_low", "ci_high", "n_questions_all_types", "pct_identified_all_types",
                        "detected_instead")


# ---------------------------------------------------------------- textual indicators (Appendix C.2)

INDICATORS = {
    "apology": "sorry / apologize / understand",
    "language_name_mention": "English name of the language",
    "translation_mention": "translate / translation",
    "emoji": "emoji",
}
# The groups of answers the paper's Appendix C.2 gives shares over. The apology shares are by resource
# level; its high-resource figure (Llama 3 70B, 10.48%) is over the ten high-resource languages other
# than English, where an apology word is a sign of failure rather than ordinary English. Its shares of
# "responses" of a model are over the answers to culturally specific questions.
INDICATOR_SCOPES = {
    "low-resource languages": "l.resource_level = 'low'",
    "high-resource languages": "l.resource_level = 'high'",
    "high-resource languages other than English": "l.resource_level = 'high' AND q.language <> 'English'",
    "culturally specific questions": "q.question_type = 'specific'",
    "all answers": "true",
}
INDICATORS_SQL = """
SELECT m.display_name AS model, {scope_sql} AS scope, count(*) AS n_answers,
       {counts}
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN languages l ON l.language = q.language
JOIN models m ON m.model = a.model
WHERE {where}
GROUP BY ALL
"""


def indicator_shares(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Appendix C.2: % of each model's answers with each textual indicator, in each scope of
    `INDICATOR_SCOPES` (all 23 languages count: indicators are text matches), two decimals, with the
    95% Wilson interval. One row per model, scope and indicator."""
    counts = ", ".join(f"count(*) FILTER (s.{name}) AS {name}" for name in INDICATORS)
    parts = [con.sql(INDICATORS_SQL.format(scope_sql=f"'{scope}'", counts=counts, where=where)).pl()
             for scope, where in INDICATOR_SCOPES.items()]
    scope_order = {scope: i for i, scope in enumerate(INDICATOR_SCOPES)}
    models = {name: i for i, name in enumerate(model_order(con))}
    long = (pl.concat(parts)
            .unpivot(index=["model", "scope", "n_answers"], on=list(INDICATORS), variable_name="indicator",
                     value_name="n_with_indicator")
            .with_columns(pct=_share("n_with_indicator", "n_answers").round(2)))
    return (intervals.with_wilson(long, "n_with_indicator", "n_answers", decimals=2)
            .sort(pl.col("model").replace_strict(models, return_dtype=pl.Int32),
                  pl.col("scope").replace_strict(scope_order, return_dtype=pl.Int32), "indicator"))


def indicator_table(shares: pl.DataFrame) -> pl.DataFrame:
    """`indicator_shares` for reading: one row per model and scope, one column per indicator (%)."""
    return (shares.pivot(on="indicator", index=["model", "scope", "n_answers"], values="pct")
            .select("model", "scope", "n_answers", *INDICATORS))


# ---------------------------------------------------------------- answer lengths (Table 17)

TOKEN_COUNTS_SQL = """
SELECT m.display_name AS model, s.tokenizer,
       count(*) AS n_all, avg(s.n_tokens) AS mean_all, median(s.n_tokens) AS median_all,
       stddev_samp(s.n_tokens) AS std_all,
       count(*) FILTER (s.language_correct AND NOT s.repetition) AS n_clean,
       avg(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS mean_clean,
       median(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS median_clean,
       stddev_samp(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS std_clean
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN models m ON m.model = a.model
WHERE q.question_type = $question_type
GROUP BY ALL
ORDER BY any_value(m.rowid)
"""


def answer_token_counts(con: duckdb.DuckDBPyConnection, question_type: str = TABLE13_QUESTION_TYPE) -> pl.DataFrame:
    """Table 17: mean, median and standard deviation (n - 1) of the answers' length in o200k_base tokens,
    per model, over its answers to the culturally specific questions (the paper's "all data" comes out so:
    provider errors included, as the tokens of their codes) and over those in the correct language without
    repetitions (19 languages: the others get no language verdict); one decimal."""
    table = con.sql(TOKEN_COUNTS_SQL, params={"question_type": question_type}).pl()
    return table.with_columns(pl.col("^(mean|median|std)_.*$").round(1))


# ---------------------------------------------------------------- agreement with the annotators

RATED_SQL = """
SELECT r.rating_id, r.language, r.model, r.language_correct AS annotator_label,
       q.language IN (SELECT unnest($unreliable)) AS unreliable,
       CASE WHEN s.provider_error THEN 'provider error'
            WHEN coalesce(s.language_correct, s.language_match) THEN 'correct' ELSE 'incorrect' END AS automatic
FROM ratings r
JOIN answer_surface s USING (answer_id)
JOIN questions q ON q.question_id = r.question_id
ORDER BY r.rating_id
"""
PARTIALLY_TREATMENTS = ("excluded", "incorrect", "correct")
KAPPA_SCOPES = {
    "reliable languages": "the rated languages with reliable identification (Kirundi's answers left out)",
    "all rated languages": "all rated languages (Kirundi with the detector's raw verdict)",
}


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


def agreement_kappa(rated: pl.DataFrame) -> pl.DataFrame:
    """Cohen's kappa between annotators (yes -> correct, no -> incorrect) and the automatic verdict, over
    the reliable languages and over all rated languages, for each treatment of `partially`: left out,
    counted as incorrect, counted as correct. Provider errors have no verdict and are left out."""
    from statsmodels.stats.inter_rater import cohens_kappa

    rows = []
    for scope in KAPPA_SCOPES:
        kept = rated.filter(pl.col("automatic") != "provider error")
        if scope == "reliable languages":
            kept = kept.filter(~pl.col("unreliable"))
        for treatment in PARTIALLY_TREATMENTS:
            mapping = {"yes": "correct", "no": "incorrect", "partially": None if treatment == "excluded" else treatment}
            pairs = kept.with_columns(human=pl.col("annotator_label").replace_strict(mapping, return_dtype=pl.String)).drop_nulls("human")
            agree = (pairs["human"] == pairs["automatic"]).mean()
            labels = ("correct", "incorrect")
            table = [[pairs.filter((pl.col("human") == h) & (pl.col("automatic") == a)).height for a in labels] for h in labels]
            kappa = cohens_kappa(table, return_results=False)
            rows.append({"languages": scope, "partially_as": treatment, "n_answers": pairs.height,
                         "n_unreliable_answers": pairs["unreliable"].sum(),
                         "pct_agreement": round(100 * agree, 1), "cohens_kappa": round(float(kappa), 3)})
    return pl.DataFrame(rows)


def read_bench_results(folder: Path | str = BENCH_RESULTS, name: str = "surface.json") -> dict | None:
    """The measurements of a benchmark (`surface.json`: scripts/bench_surface.py; `tokenizer.json`:
    scripts/check_tokenizer.py), or None when it has not been run."""
    import json

    path = Path(folder) / name
    return json.loads(path.read_text()) if path.is_file() else None


def summary(rates: pl.DataFrame, accuracy: pl.DataFrame, kappa: pl.DataFrame, errors: pl.DataFrame,
            exclude_unreliable: bool = True) -> str:
    """The notebook's findings in words, computed from its tables."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    clean = (100 * pl.col("n_surface_ok").sum() / pl.col("n_answers").sum()).alias("ok")
    by_level = dict(kept.group_by("resource_level").agg(clean).sort("resource_level").iter_rows())
    by_model = kept.group_by("model").agg(clean).sort("ok")
    (worst, worst_ok), (best, best_ok) = by_model.row(0), by_model.row(-1)
    reliable = accuracy.filter(~pl.col("unreliable"))
    weakest = reliable.sort("pct_identified").row(0, named=True)
    headline = {row["languages"]: row for row in kappa.filter(pl.col("partially_as") == "excluded").iter_rows(named=True)}
    reliable_kappa, all_kappa = headline["reliable languages"], headline["all rated languages"]
    worst_errors = errors.sort("pct_provider_errors", descending=True).row(0, named=True)
    scope = "the 19 languages with reliable identification" if exclude_unreliable else "all 23 languages"
    return (
        f"Over {scope}, **{by_level.get('high', float('nan')):.1f}%** of the model answers in high-resource "
        f"languages have no surface issue, against **{by_level.get('low', float('nan')):.1f}%** in low-resource "
        f"ones. {best} has the fewest surface issues ({best_ok:.1f}% clean), {worst} the most ({worst_ok:.1f}%). "
        f"{worst_errors['model']} returned provider errors for {worst_errors['pct_provider_errors']:.1f}% of its "
        f"answers to culturally {worst_errors['question_type']} questions. On the culturally specific questions "
        f"themselves the identification is right for at least {weakest['pct_identified']:.2f}% of each reliable "
        f"language (lowest: {weakest['language']}). Against the annotators' language labels (`partially` left "
        f"out), Cohen's kappa is **{reliable_kappa['cohens_kappa']:.2f}** over {reliable_kappa['n_answers']} answers "
        f"of the reliable languages and **{all_kappa['cohens_kappa']:.2f}** over all {all_kappa['n_answers']} with "
        f"Kirundi's {all_kappa['n_unreliable_answers']} (whose automatic verdict is the detector's raw one)."
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


def tokenizer_markdown(con: duckdb.DuckDBPyConnection, check: dict | None) -> str:
    """Which encoding counted the repetitions and token lengths, and how it was verified (from
    `make check-tokenizer`'s results when they are there)."""
    used = [r[0] for r in con.sql("SELECT DISTINCT tokenizer FROM answer_surface ORDER BY 1").fetchall()]
    text = (f"Repetitions and token counts use tiktoken's **{', '.join(used)}** encoding, as the paper did, offline: "
            f"its rank file is rebuilt from the `quicktok-v1` package and checked against tiktoken's own sha256 "
            f"(`{tokenizer.O200K_SHA256[:12]}...`) before use.")
    if check is None:
        return text + (" `make check-tokenizer` compares its token ids with a second implementation on every text "
                       "of the release and measures what cl100k_base would change; it has not been run here.")
    e, r = check["exactness"], check["repetition"]
    outcome = "identical on every one" if e["n_differing"] == 0 else f"**different on {e['n_differing']}**"
    return text + (f" Against {e['second_implementation']}'s own implementation, the token ids are {outcome} of "
                   f"{e['n_texts']:,} texts ({e['n_tokens']:,} tokens). With cl100k_base instead, "
                   f"{r['n_verdicts_changed']} of the {r['n_model_answers']:,} repetition verdicts would change.")
