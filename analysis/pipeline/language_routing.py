"""Language verdicts on short answers in close languages (docs/methods.md, section 10, "Short answers"):
the expected language as a prior, abstention on text too short to judge, and the engine chosen per
language and length by measured short-text accuracy.

Two engines judge: the suite's character n-gram engine (`language_id_all.Engine`) and
lingua-language-detector (`lingua`, 75 languages, its models in the wheel). Each gives, for a text and
the language L it should be in, the evidence for the best other language against L's, per n-gram or
character of the text (`difference`; negative: L is the best). A text is judged *not in L* only when
that evidence exceeds L's margin for the text's length band, calibrated on the short-text evaluation
(`pipeline.short_text`): the (1 - `MAX_OWN_REJECTED`) quantile of the evidence on L's own held-out pieces
of the band's length, with a slack (`MARGIN_SLACK`), and at least 0. A text shorter than the shortest length from which the measured
accuracy for L stays at or above `MIN_ACCURACY` (or than the shortest length measured) is *too short to
judge*: no verdict, counted apart.

The routing (`Routing`, written by the evaluation as `routing.csv` and stored in the database as
`language_routing`) says, per route (`auto`, or one engine for every language), language and length band,
which engine judges with which margin. lingua weighs a text only against the expected language's close
ones and English, after the n-gram engine has ruled out every other language (`screened`), and `auto`
gives it a band only where it is measurably more accurate than the n-gram engine, never from
`LINGUA_MAX_CHARS` on: it is slow per text (milliseconds, growing with the length and the languages
weighed).

A researcher's own verdict (`answers.csv`'s `answer_language`) takes precedence over every engine.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import regex

from ..io.short_text_evaluation import close_neighbours
from .language_id import Verdict
from .language_id_all import Engine

if TYPE_CHECKING:
    from lingua import Language

# The margin of a band: the (1 - MAX_OWN_REJECTED) quantile of the evidence against the language on its own
# pieces of that length, plus MARGIN_SLACK times that quantile's distance from their median. Without the
# slack, a quantile calibrated on four folds of articles was exceeded in the fifth far more often than
# MAX_OWN_REJECTED (the articles differ in their words); with it, the held-out accuracy holds (docs/methods.md).
MAX_OWN_REJECTED = 0.01
MARGIN_SLACK = 0.5
# Below the length at which the measured accuracy (%) falls under this, a text is too short to judge.
MIN_ACCURACY = 95.0
# Two engines within this many points are as accurate: the n-gram engine (the fast one) is chosen.
TIE_POINTS = 1.0
# `auto` never sends a text of this many characters or more to lingua.
LINGUA_MAX_CHARS = 200

ENGINE_NGRAM, ENGINE_LINGUA = "ngram", "lingua"
ENGINES = (ENGINE_NGRAM, ENGINE_LINGUA)
# The engine of a verdict the researcher gave (`answers.csv`, `answer_language`).
GIVEN = "answer_language"
# What `study.toml`'s `[language_id] engine` may choose (`io.study.LANGUAGE_ID_ENGINES`): the routing, one
# engine for every language (the routes the evaluation writes), or no engine at all.
AUTO, NONE = "auto", "none"
ROUTES = (AUTO, ENGINE_NGRAM, ENGINE_LINGUA)

_LETTER = regex.compile(r"\p{L}")


def text_length(texts: list[str]) -> np.ndarray:
    """The length every rule here measures: characters of the text without surrounding white space, and 0
    for a text without a letter (digits and signs only), which nothing can judge."""
    return np.array([len(t.strip()) if _LETTER.search(t) else 0 for t in texts], dtype=np.int64)


# ---------------------------------------------------------------- lingua


@functools.cache
def lingua_languages() -> dict[str, Language]:
    """lingua's languages by ISO 639-1 code (lower case, as the other engines write them)."""
    from lingua import Language

    return {language.iso_code_639_1.name.lower(): language for language in Language.all()}


def lingua_candidates(code: str) -> tuple[str, ...]:
    """The languages lingua weighs a text expected in `code` against: the expected language, its named close
    ones and English, those lingua knows. Every other language is ruled out first by the n-gram engine
    (`screened`): lingua's cost grows with the languages it weighs (75: about 16 ms for 90 characters and
    a gigabyte of models; four: under 1 ms and 140 MB), and it is the specialist for close languages."""
    known = lingua_languages()
    return tuple(sorted({code, *close_neighbours(code), "en"} & set(known)))


@functools.cache
def _lingua_detector(candidates: tuple[str, ...]):
    """lingua's detector of `candidates`, high accuracy mode; each language's models load once per process,
    when a detector first needs them, and are shared by every detector."""
    from lingua import LanguageDetectorBuilder

    known = lingua_languages()
    return LanguageDetectorBuilder.from_languages(*(known[c] for c in candidates)).build()


def lingua_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("lingua-language-detector")


# ln of a confidence of 0 (a language lingua's rules ruled out): far below any it computes.
_LN_ZERO = math.log(1e-300)


def lingua_evidence(texts: list[str], expected: list[str], in_parallel: bool = False) -> tuple[np.ndarray, list[str]]:
    """lingua's evidence for each text against the language it should be in (`expected`, a code of
    `lingua_languages`), weighed against its `lingua_candidates`: ln(confidence of the best other) -
    ln(confidence of the expected one), per character, and that other language ("und" where lingua gives
    none). `in_parallel`: lingua's own threads (never in a forked worker process, where a thread pool
    does not survive the fork)."""
    lengths = np.maximum(text_length(texts), 1)
    difference = np.zeros(len(texts))
    others = ["und"] * len(texts)
    by_code: dict[str, list[int]] = {}
    for i, code in enumerate(expected):
        by_code.setdefault(code, []).append(i)
    for code, chosen in by_code.items():
        detector = _lingua_detector(lingua_candidates(code))
        part = [texts[i] for i in chosen]
        results = (
            detector.compute_language_confidence_values_in_parallel(part)
            if in_parallel
            else [detector.compute_language_confidence_values(text) for text in part]
        )
        for i, values in zip(chosen, results):
            own, best, best_value = 0.0, "und", 0.0
            for value in values:
                language = value.language.iso_code_639_1.name.lower()
                if language == code:
                    own = value.value
                elif value.value > best_value:
                    best, best_value = language, value.value
            ln_own = math.log(own) if own > 0 else _LN_ZERO
            ln_best = math.log(best_value) if best_value > 0 else _LN_ZERO
            difference[i] = (ln_best - ln_own) / lengths[i]
            others[i] = best
    return difference, others


def screened(code: str, other: str, difference: float, margin: float, letters_ok: bool) -> bool:
    """The n-gram engine rules a text out of `code` before lingua weighs it: the text's letters are not
    the language's, or its best other language is none of lingua's candidates and beats the expected one
    by more than the n-gram margin."""
    return not letters_ok or (other not in lingua_candidates(code) and difference > margin)


# ---------------------------------------------------------------- the routing


@dataclass(frozen=True)
class Band:
    """How the texts of one language from `from_chars` characters on are judged."""

    from_chars: int
    engine: str
    margin: float
    screen_margin: float | None  # lingua's bands: the n-gram margin that screens its texts first
    pct_correct: float | None  # the measured accuracy at `from_chars` (None: not measured)


def read_routing(data: bytes) -> list[dict]:
    """The routing's rows (`io.short_text_evaluation.ROUTING_SCHEMA`) from the bytes of its CSV, as plain
    dicts: the worker processes read them, where polars must not run (in a forked worker its thread pool
    would not survive the fork)."""
    import csv
    import io

    def number(text: str) -> float | None:
        return float(text) if text != "" else None

    return [
        {
            "route": row["route"],
            "iso_code": row["iso_code"],
            "from_chars": int(row["from_chars"]),
            "engine": row["engine"],
            "margin": float(row["margin"]),
            "screen_margin": number(row["screen_margin"]),
            "pct_correct": number(row["pct_correct"]),
        }
        for row in csv.DictReader(io.StringIO(data.decode("utf-8")))
    ]


class Routing:
    """The bands of every language of one route (rows of `io.short_text_evaluation.ROUTING_SCHEMA` as
    dicts, `read_routing`): a text shorter than its language's first band is too short to judge; a language
    without a band is not judged by the route."""

    def __init__(self, rows: list[dict], route: str) -> None:
        self.route = route
        self._bands: dict[str, list[Band]] = {}
        for row in sorted((r for r in rows if r["route"] == route), key=lambda r: (r["iso_code"], r["from_chars"])):
            self._bands.setdefault(row["iso_code"], []).append(
                Band(row["from_chars"], row["engine"], row["margin"], row["screen_margin"], row["pct_correct"])
            )

    def knows(self, code: str) -> bool:
        return code in self._bands

    def band(self, code: str, length: int) -> Band | None:
        """The band of a text of `length` characters in `code`; None when it is too short to judge (or the
        language is not routed)."""
        found = None
        for band in self._bands.get(code, ()):
            if band.from_chars <= length:
                found = band
        return found

    def min_chars(self, code: str) -> int | None:
        bands = self._bands.get(code)
        return bands[0].from_chars if bands else None

    def engines(self, code: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.engine for b in self._bands.get(code, ())))


# ---------------------------------------------------------------- the verdicts


def given_verdict(label: str) -> Verdict:
    """The researcher's own verdict of an answer's language (an ISO code), which no engine overrides."""
    return Verdict(GIVEN, label, {GIVEN: label})


def _abstained(engine: str, length: int, min_chars: int | None) -> Verdict:
    return Verdict(engine, "", {"too_short": {"chars": length, "min_chars": min_chars}}, abstained=True)


class RoutedIdentifier:
    """The surface stage's language identification of a study (`executors`): the researcher's verdict where
    given, else the route's engine for the answer's language and length, with the expected language as a
    prior; too short to judge below the language's first band; no verdict where the route does not judge
    the language (or the study chose no engine)."""

    def __init__(self, engine: Engine, routing_rows: list[dict], route: str) -> None:
        self.engine = engine
        self.route = route
        self.routing = Routing(routing_rows, route) if route != NONE else None

    def identify(self, texts: list[str], languages: list[str], detectors: list[str]) -> list[Verdict | None]:
        """A verdict (or None) for each text, given the study's name of the language it should be in (the
        detectors do not count: the routing chooses the engine). The researcher's own verdicts are taken
        before (`pipeline.surface`)."""
        codes = [self.engine.targets.get(name) for name in languages]
        lengths = text_length(texts)
        result: list[Verdict | None] = [None] * len(texts)
        if self.routing is None:
            return result
        by_engine: dict[str, list[tuple[int, str, Band]]] = {}
        for i, code in enumerate(codes):
            if code is None or not self.routing.knows(code):
                continue
            band = self.routing.band(code, int(lengths[i]))
            if band is None:
                first = self.routing.engines(code)[0]
                result[i] = _abstained(first, int(lengths[i]), self.routing.min_chars(code))
            else:
                by_engine.setdefault(band.engine, []).append((i, code, band))
        for engine, chosen in by_engine.items():
            difference, others, letters_ok = self.engine.evidence(
                [texts[i] for i, _, _ in chosen], [c for _, c, _ in chosen]
            )
            if engine == ENGINE_NGRAM:
                for (i, code, band), value, other, ok in zip(chosen, difference, others, letters_ok):
                    in_language = bool(ok and value <= band.margin)
                    raw = {engine: {"difference": round(float(value), 4), "margin": band.margin, "other": other}}
                    result[i] = Verdict(engine, code if in_language else other, raw)
                continue
            weighed = []
            for (i, code, band), value, other, ok in zip(chosen, difference, others, letters_ok):
                screen = band.screen_margin if band.screen_margin is not None else 0.0
                if screened(code, other, float(value), screen, bool(ok)):
                    raw = {ENGINE_NGRAM: {"difference": round(float(value), 4), "margin": screen, "other": other}}
                    result[i] = Verdict(engine, other, raw | {"screened": True})
                else:
                    weighed.append((i, code, band))
            if not weighed:
                continue
            lingua_difference, lingua_others = lingua_evidence(
                [texts[i] for i, _, _ in weighed], [c for _, c, _ in weighed]
            )
            for (i, code, band), value, other in zip(weighed, lingua_difference, lingua_others):
                in_language = bool(value <= band.margin)
                raw = {engine: {"difference": round(float(value), 4), "margin": band.margin, "other": other}}
                result[i] = Verdict(engine, code if in_language else other, raw)
        return result
