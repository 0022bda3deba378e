"""The one way text from the data (a model's display name or key, a question, an answer, a language, a
category, a file name...) enters the Markdown and HTML the suite writes: `inert`, which makes it show as
the characters it is, never as markup. HTML is escaped; in Markdown every ASCII punctuation character is
escaped with a backslash (CommonMark lets any of them be), so that `[x](https://...)` is no link,
`![p](http://...)` no image that a report would load, `**b**` no bold, `https://...` and `www....` no
autolink, `<b>` no tag and `# x` no heading; line breaks become spaces, since the text goes inside a
sentence or a table cell.
"""

import html
import re

_MARKDOWN_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
MARKUPS = ("markdown", "html")


def inert(text, markup: str = "markdown") -> str:
    """`text` (made a string) as inert `markup`: shown as the characters it is, never as a link, an image,
    emphasis or a tag."""
    if markup not in MARKUPS:
        raise ValueError(f"markup is {markup!r}; expected one of {', '.join(MARKUPS)}")
    text = str(text)
    if markup == "html":
        return html.escape(text, quote=True)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))
