"""Table 13 and the Appendix C.2 indicator shares, recomputed from the raw release files alone.

Nothing here imports the project's code: the release's JSON files are read with `json` and `gzip`, the
languages are identified the way the authors' detect_lang.py did (pycld2 as polyglot calls it, else the
`langid` package), and the indicators are plain substring tests. The results are compared with the
numbers the paper prints, read from the claims registry files with `csv`, and with the values the
notebooks write must agree with these (the registry's `expect`).
"""

import csv
import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "data" / "raw" / "calmqa"
CLAIMS = ROOT / "data" / "paper" / "claims"
# detect_lang.py sends these languages to polyglot (CLD2); all others go to langid.
CLD2_LANGUAGES = {
    "Afar",
    "Arabic",
    "Balochi",
    "Faroese",
    "Fijian",
    "Hindi",
    "Hiligaynon",
    "Kirundi",
    "Pashto",
    "Russian",
    "Samoan",
    "Tongan",
    "Tswana",
    "Wolof",
}
RELEASE_MODEL_NAMES = {
    "mixtral 8x22b (together.ai)": "Mixtral-8x22B",
    "llama 3 70b (together.ai)": "Llama-3-70B",
    "gpt 4 turbo": "GPT-4-Turbo",
}

# The release must be there (`make data`): the fixture fails the full suite without it.
pytestmark = pytest.mark.usefixtures("release_folder")


def _languages() -> dict[str, dict]:
    with open(RAW / "languages.csv", newline="", encoding="utf-8") as f:
        return {row["language"]: row for row in csv.DictReader(f)}


def _datasets():
    """(question type, language, entry) of every entry of every dataset file of the release."""
    for path in sorted((RAW / "datasets").glob("dataset-*.json.gz")):
        question_type = path.name.split("-")[1]
        with gzip.open(path, "rt", encoding="utf-8") as f:
            entries = json.load(f)["entries"]
        for entry in entries:
            language = entry["answers"][0]["language"] if entry["answers"] else None
            yield question_type, language, entry


def _printed(name: str) -> dict[tuple[str, str], dict]:
    with open(CLAIMS / name, newline="", encoding="utf-8") as f:
        return {(row["row"], row["column"]): row for row in csv.DictReader(f)}


def _authors_language(text: str, language: str) -> str:
    import langid
    import pycld2

    if language in CLD2_LANGUAGES:
        data = text.encode("utf-8")
        try:
            reliable, _, choices = pycld2.detect(data, bestEffort=False)
            if not reliable:
                reliable, _, choices = pycld2.detect(data, bestEffort=True)
            if reliable:
                return choices[0][1]
        except pycld2.error:
            pass
    return langid.classify(text)[0]


def test_table13_from_the_raw_release():
    languages = _languages()
    counts = defaultdict(lambda: [0, 0])
    for question_type, language, entry in _datasets():
        if question_type != "specific":
            continue
        text = entry["question"]["translations"][language]["text"]
        code = _authors_language(text, language).replace("iw", "he")
        counts[language][0] += code == languages[language]["iso_code"]
        counts[language][1] += 1
    share = {language: round(100 * k / n, 2) for language, (k, n) in counts.items()}
    assert (
        counts["Fijian"][1] == 75
        and counts["Samoan"][1] == 25
        and counts["Wolof"][1] == 50
        and counts["Kirundi"][1] == 53
    )
    printed = _printed("calmqa-table13.csv")
    for (language, _), claim in printed.items():
        value = float(claim["printed"].rstrip("%"))
        if claim["expect"] == "exact":
            assert share[language] == value, language
    # The paper's "Tongan 96.92" is Tswana's 63 of 65; Tongan's 10 specific questions are all identified.
    assert float(printed[("Tongan", "accuracy")]["printed"].rstrip("%")) == share["Tswana"] == round(100 * 63 / 65, 2)
    assert counts["Tongan"] == [10, 10]
    assert sum(value == 100 for value in share.values()) == 14


def test_indicator_shares_from_the_raw_release():
    languages = _languages()
    hits = defaultdict(lambda: [0, 0])
    for question_type, language, entry in _datasets():
        high = languages[language]["resource_level"] == "high"
        for answer in entry["answers"]:
            model = RELEASE_MODEL_NAMES.get(answer["name"].split(":", 3)[-1])
            if model is None:
                continue
            text = answer["translations"][answer["language"]]["text"] or ""
            lower = text.lower()
            found = {
                "apology": any(w in lower for w in ("sorry", "apologize", "understand")),
                "name": language in text,
                "translate": "translat" in lower,
                "emoji": re.search("[\U0001f300-\U0001faff\u2600-\u27bf]", text) is not None,
            }
            scopes = ["high" if high else "low"] + (["high-not-english"] if high and language != "English" else [])
            scopes += ["specific"] if question_type == "specific" else []
            for scope in scopes:
                for indicator, present in found.items():
                    hits[model, scope, indicator][0] += present
                    hits[model, scope, indicator][1] += 1

    def pct(model, scope, indicator):
        k, n = hits[model, scope, indicator]
        return f"{100 * k / n:.2f}%"

    printed = {(row, column): claim["printed"] for (row, column), claim in _printed("calmqa-appendix-c2.csv").items()}
    assert (
        printed["Mixtral-8x22B", "apology words, low-resource answers"]
        == pct("Mixtral-8x22B", "low", "apology")
        == "31.47%"
    )
    assert (
        printed["Llama-3-70B", "apology words, low-resource answers"]
        == pct("Llama-3-70B", "low", "apology")
        == "14.74%"
    )
    assert printed["Llama-3-70B", "apology words, high-resource answers"] == pct(
        "Llama-3-70B", "high-not-english", "apology"
    )
    assert pct("Mixtral-8x22B", "high-not-english", "apology") == "0.00%"  # "do not contain these keywords"
    for model in ("Llama-3-70B", "Mixtral-8x22B", "GPT-4-Turbo"):
        assert printed[model, "mentions the language's English name"] == pct(model, "specific", "name")
    for model in ("Llama-3-70B", "Mixtral-8x22B"):
        assert printed[model, "translate / translation"] == pct(model, "specific", "translate")
    # A simpler emoji test than the suite's (code-point blocks, not Unicode's property): the same share.
    assert printed["Llama-3-70B", "at least one emoji"] == pct("Llama-3-70B", "specific", "emoji")
