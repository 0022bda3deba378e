"""Language identification as the CaLMQA authors' pipeline did it: CLD2 as polyglot calls it, else langid.

The authors' detect_lang.py sends the texts of 14 languages to polyglot's `Detector` (CLD2 underneath)
and everything else to the `langid` package (1.1.6). polyglot calls CLD2 without best effort first,
then with best effort when the verdict is not reliable, and gives up when it is still not reliable;
the text then goes to langid (analyses.md section 3). The top language of CLD2's verdict is the answer.

`langid` classifies one text at a time in pure Python, which makes it the slow part of the pipeline.
`LangidBatch` runs langid's own model (the one shipped in the langid package) on many texts at once:
the same byte-level automaton walk, done for a whole batch per byte position with numpy, and the same
naive Bayes scores, so its verdicts are langid's (tests/pipeline/test_surface.py compares them).
"""

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pycld2

from ..core import files, paths

# The detector the authors' detect_lang.py sends a language's texts to first (polyglot's CLD2); the
# languages it sends there are data: `languages.detector` (data/calmqa-language-identification.csv).
CLD2 = "cld2"

# Engines for the langid step: `langid-batch` (default) is langid's model run by `LangidBatch`;
# `langid` is the package itself, one text at a time; `py3langid` is the faster fork with its own model.
LANGID_ENGINES = ("langid-batch", "langid", "py3langid")

# Deprecated ISO 639 codes that CLD2 still emits, and CLD2's "unknown".
_CODE_ALIASES = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "un": "und"}


def normalise_code(code: str) -> str:
    """An engine's language code as a lower-case ISO 639 code without region or script (`iw` -> `he`,
    `zh-Hant` -> `zh`); CLD2's `un` (unknown) becomes `und` (undetermined)."""
    primary = code.replace("_", "-").split("-")[0].lower()
    return _CODE_ALIASES.get(primary, primary)


@dataclass(frozen=True)
class Verdict:
    engine: str  # `cld2`, `cld2-best-effort`, or the langid engine that decided
    code: str  # the engine's own top code, e.g. `iw`
    raw: dict  # everything the engines said, for trying other rules later
    abstained: bool = False  # too short to judge (`language_routing`): no language, counted apart

    @property
    def language(self) -> str:
        return normalise_code(self.code)

    def raw_json(self) -> str:
        return json.dumps(self.raw, ensure_ascii=False, sort_keys=True)


def cld2_as_polyglot(text: str) -> tuple[str | None, dict]:
    """polyglot's call sequence. Returns (engine, raw); engine is None when the text must go to langid."""
    data = text.encode("utf-8")
    try:
        reliable, _, choices = pycld2.detect(data, bestEffort=False)
        engine = "cld2"
        if not reliable:
            reliable, _, choices = pycld2.detect(data, bestEffort=True)
            engine = "cld2-best-effort"
    except pycld2.error as exc:
        return None, {"cld2_error": str(exc)}
    raw = {
        "cld2": {
            "best_effort": engine == "cld2-best-effort",
            "reliable": reliable,
            "choices": [[name, code, percent, score] for name, code, percent, score in choices],
        }
    }
    return (engine if reliable else None), raw


def langid_model_sha256() -> str:
    """The sha256 of the model the `langid` package ships (the langid engines' model)."""
    import langid.langid as langid_module

    model = langid_module.model
    return hashlib.sha256(model if isinstance(model, bytes) else model.encode()).hexdigest()


class LangidBatch:
    """langid 1.1.6's model applied to a batch of texts at once.

    langid walks an automaton over the UTF-8 bytes of a text, counts the states it enters, turns the
    counts into byte n-gram feature counts (the features each state outputs) and scores every language
    as prior + counts . log P(feature | language). The walk here advances all texts of a batch by one
    byte per numpy step; the state counts are multiplied by a precomputed state x language matrix (the
    summed feature weights each state outputs), which is the same sum in another order.
    """

    def __init__(self, cache_dir: Path | None = paths.BUILD / "cache"):
        """Load langid's model; the arrays derived from it are cached under `cache_dir` (None: no cache),
        since decompressing and unpickling the model takes seconds."""
        import langid.langid as langid_module

        cache = None if cache_dir is None else Path(cache_dir) / f"langid-model-{langid_model_sha256()[:16]}.npz"
        if cache is not None and cache.is_file():
            with np.load(cache) as arrays:
                self.classes = [str(c) for c in arrays["classes"]]
                self.next_state = arrays["next_state"]
                self.state_weights = arrays["state_weights"]
                self.prior = arrays["prior"]
        else:
            identifier = langid_module.LanguageIdentifier.from_modelstring(langid_module.model)
            self.classes = [str(c) for c in identifier.nb_classes]
            self.next_state = np.asarray(identifier.tk_nextmove, dtype=np.int32)
            ptc = np.asarray(identifier.nb_ptc, dtype=np.float64)
            self.state_weights = np.zeros((len(self.next_state) >> 8, len(self.classes)))
            for state, features in identifier.tk_output.items():
                if features:
                    self.state_weights[state] = ptc[list(features)].sum(axis=0)
            self.prior = np.asarray(identifier.nb_pc, dtype=np.float64)
            if cache is not None:
                # A worker of a cluster may run from an installed package whose folder it cannot write:
                # it then derives the arrays again next time, as without a cache.
                with contextlib.suppress(OSError), files.atomic_write(cache) as tmp:
                    np.savez(
                        tmp,
                        classes=np.array(self.classes),
                        next_state=self.next_state,
                        state_weights=self.state_weights,
                        prior=self.prior,
                    )
        self.n_states = len(self.next_state) >> 8

    # Texts walked at once: the (text x state) count matrix of a walk takes WIDTH x 8 bytes per state
    # of the automaton (9,118 in langid's model).
    WIDTH = 2048

    def classify(self, texts: list[str]) -> list[tuple[str, float]]:
        """langid's (language, score) for every text, in order."""
        encoded = [t.encode("utf-8") for t in texts]
        # Longest first, so that each slice walked at once holds texts of similar length (the walk takes
        # as many steps as the slice's longest text).
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        result: list[tuple[str, float]] = [("", 0.0)] * len(encoded)
        for start in range(0, len(order), self.WIDTH):
            part = order[start : start + self.WIDTH]
            for index, verdict in zip(part, self._classify_longest_first([encoded[i] for i in part])):
                result[index] = verdict
        return result

    def _classify_longest_first(self, encoded: list[bytes]) -> list[tuple[str, float]]:
        from scipy import sparse

        sorted_lengths = np.array([len(b) for b in encoded], dtype=np.int64)
        width, max_len = len(encoded), int(sorted_lengths[0])
        # The texts still being walked at a byte position are a prefix of the list. Bytes, and the
        # (text, state) key of each state entered, are stored text by text in flat arrays: the counting
        # below then stays within one text's row at a time.
        active = np.searchsorted(-sorted_lengths, -np.arange(max_len), side="left")
        flat_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        text_start = np.concatenate(([0], np.cumsum(sorted_lengths)[:-1]))
        row_key = np.arange(width, dtype=np.int64) * self.n_states
        keys = np.empty(len(flat_bytes), dtype=np.int64)
        state = np.zeros(width, dtype=np.int64)
        for p in range(max_len):
            n = active[p]
            at = text_start[:n] + p
            state[:n] = self.next_state[(state[:n] << 8) + flat_bytes[at]]
            keys[at] = row_key[:n] + state[:n]
        counts = np.bincount(keys, minlength=width * self.n_states)
        # Sparse (text x state) counts straight from the flat array: most states are never entered.
        entered = np.flatnonzero(counts)
        row_starts = np.searchsorted(entered, np.arange(width + 1) * self.n_states)
        state_counts = sparse.csr_matrix(
            (counts[entered].astype(np.float64), entered % self.n_states, row_starts), shape=(width, self.n_states)
        )
        scores = state_counts @ self.state_weights + self.prior
        best = scores.argmax(axis=1)
        return [(self.classes[b], float(scores[row, b])) for row, b in enumerate(best)]


def _langid_classifier(engine: str):
    """A function from a list of texts to (code, score) pairs for the chosen langid engine."""
    if engine == "langid-batch":
        return LangidBatch().classify
    if engine == "langid":
        import langid

        return lambda texts: [langid.classify(t) for t in texts]
    if engine == "py3langid":
        import py3langid

        return lambda texts: [(code, float(score)) for code, score in map(py3langid.classify, texts)]
    raise ValueError(f"unknown langid engine {engine!r}; expected one of {LANGID_ENGINES}")


class Identifier:
    """The pipeline: CLD2 as polyglot calls it for the CLD2 languages, the langid engine for the rest."""

    def __init__(self, langid_engine: str = "langid-batch"):
        self.langid_engine = langid_engine
        self._classify = _langid_classifier(langid_engine)

    def identify(self, texts: list[str], languages: list[str], detectors: list[str]) -> list[Verdict]:
        """The verdict for each text, given the detector its language goes to first (`languages.detector`:
        `cld2`, else langid alone); the language's name (`languages`) does not count."""
        verdicts: dict[int, Verdict] = {}  # by the text's position
        to_langid, raws = [], {}
        for i, (text, detector) in enumerate(zip(texts, detectors)):
            if detector == CLD2:
                engine, raw = cld2_as_polyglot(text)
                if engine is not None:
                    verdicts[i] = Verdict(engine, raw["cld2"]["choices"][0][1], raw)
                    continue
                raws[i] = raw
            to_langid.append(i)
        for i, (code, score) in zip(to_langid, self._classify([texts[i] for i in to_langid])):
            raw = {**raws.get(i, {}), "langid": {"engine": self.langid_engine, "code": code, "score": score}}
            verdicts[i] = Verdict(self.langid_engine, code, raw)
        return [verdicts[i] for i in range(len(texts))]
