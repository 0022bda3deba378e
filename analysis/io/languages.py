"""A study's languages, one per standardized BCP 47 tag (docs/studies.md, "Languages"): what a name or a
code in a study folder resolves to, by `langcodes` and its `language-data` names, never by a table of the
suite's.

A value resolves exactly or not at all. It is a code when `langcodes` takes it as a valid BCP 47 tag
(`ha`, `hau`, `pt-BR`: `hau` is standardized to `ha`), or a name when `language-data` holds it as written
in one of its languages (`Hausa`, `Farsi`, `Deutsch`), case, spacing and invisible characters aside.
`langcodes.find` alone would also take a name that only begins like one (`Klingonese` as Klingon) and
would read `ha` as a name of Haida: neither happens here. A value that is the code of one language and
the name of another is the code when written in lower case, as codes are (`ga`: Irish), and is not
resolved when capitalized as a name (`Ga`: Irish's code, and the name of the Ga language). What
does not resolve is a problem naming the closest candidates; `languages.csv` settles it, since a name it
lists is the study's own and its code says the language.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass
from functools import cache

from ..core.errors import Problems
from . import records
from .imports import identity_key

# How many close names a problem proposes.
N_CANDIDATES = 3


@dataclass(frozen=True)
class Resolution:
    """What a value names: its standardized BCP 47 `tag` (`ha`, `pt-BR`), or None and the `problem` why not."""

    tag: str | None
    problem: str | None = None


def clean(name: str) -> str:
    """A language name as figures show it: NFC, without invisible characters (Unicode's format
    characters, such as a zero-width space), its spaces collapsed."""
    text = "".join(c for c in unicodedata.normalize("NFC", name) if unicodedata.category(c) != "Cf")
    return " ".join(text.split())


def same_name(name: str) -> str:
    """What makes two spellings one name (`Hausa`, `hausa`, `Hausa` with a zero-width space): the rule of
    model names (`imports.identity_key`)."""
    return identity_key(name)


def _name_key(value: str) -> str:
    """`value` as `language-data`'s tries of names hold it: compatibility forms, invisible characters,
    spacing and case aside. Not `same_name`'s key: its confusables skeleton spells `Icelandic` `lcelandic`
    and `German` `Gerrnan`, which no trie holds."""
    from language_data.names import normalize_name

    return normalize_name(clean(unicodedata.normalize("NFKC", value)))


def code_tag(value: str) -> str | None:
    """The standardized tag of `value` as a BCP 47 or ISO 639 code (`hau` -> `ha`), or None when it is not one."""
    import langcodes

    value = clean(value)
    # A private-use tag (`x-hausa`, `qaa`) or one of no single language (`und`, `mul`) names no language a
    # reader knows: it is no code here (`records.language_tag_problem`).
    if not value or records.language_tag_problem(value) is not None:
        return None
    return langcodes.standardize_tag(value)


def iso_code(tag: str) -> str:
    """The language subtag of a standardized tag: the shortest ISO 639 code of its language (`pt-BR` -> `pt`)."""
    import langcodes

    return langcodes.Language.get(tag).language or tag


def display(tag: str) -> str:
    """The English name `langcodes` gives a tag, e.g. `Klingon`."""
    import langcodes

    return langcodes.Language.get(tag).display_name()


@cache
def _names(language: str):
    """`language-data`'s trie of language names (normalized as it normalizes them) in `language` (`und`:
    in every language it has names in)."""
    from language_data.names import load_trie
    from language_data.util import data_filename

    return load_trie(data_filename(f"trie/{language}/name_to_language.marisa"))


def name_tag(value: str) -> str | None:
    """The standardized tag of the language that `value` names exactly, in any language `language-data`
    has names in (`Farsi` -> `fa`, `Deutsch` -> `de`); None for a name it holds only a prefix of."""
    import langcodes

    key = _name_key(value)
    # English names first: the trie of every language's names leaves out a name that several languages give
    # to different languages (`Hindi` is Fiji Hindi in some), which English names one language by.
    for names in (_names("en"), _names("und")):
        if key and key in names:
            return langcodes.standardize_tag(names[key][0].decode("utf-8"))
    return None


def candidates(value: str, n: int = N_CANDIDATES) -> list[str]:
    """The closest language names to `value`, with their codes (`Klingon (tlh)`): the name `langcodes.find`
    would take (a prefix of `value`), then the English names nearest in spelling."""
    import langcodes

    tags: list[str] = []
    try:
        tags.append(langcodes.find(clean(value)).to_tag())
    except LookupError:
        pass
    english = _names("en")
    key = _name_key(value)
    for close in difflib.get_close_matches(key, english.keys(), n=n, cutoff=0.6):
        tags.append(langcodes.standardize_tag(english[close][0].decode("utf-8")))
    unique = list(dict.fromkeys(tags))[:n]
    return [f"{display(tag)} ({tag})" for tag in unique]


def _lower_case_code(value: str) -> bool:
    """Whether `value`'s language subtag is written in lower case, as codes are (`ha`, `pt-BR`)."""
    return clean(value).split("-")[0].islower()


def resolve(value: str) -> Resolution:
    """The language `value` names exactly, as a code or as a name; a problem when it names none exactly,
    or one language as a code and another as a name."""
    as_code, as_name = code_tag(value), name_tag(value)
    # Written in lower case (`ha`, `en`), a code is meant: codes are written so, and many short names of
    # small languages are spelled like the codes of large ones (`Ha` is a name of Haida).
    if as_code and as_name and iso_code(as_code) != iso_code(as_name) and not _lower_case_code(value):
        return Resolution(
            None,
            f"{value!r} is the code of {display(as_code)} ({as_code}) and the name of {display(as_name)} "
            f"({as_name}): list it in languages.csv with the code of the language it means",
        )
    tag = as_code or as_name
    if tag is not None:
        return Resolution(tag)
    close = candidates(value)
    return Resolution(
        None,
        f"unknown language {value!r}: not in languages.csv, and langcodes knows no language of that name or "
        f"code exactly{'; the closest: ' + ', '.join(close) if close else ''}. Write its name or code as "
        "langcodes has it, or add it to languages.csv with its code (the name you give there is kept)",
    )


def script(tag: str) -> str | None:
    """The usual script of a language, by `langcodes` (`Latin` for `ha`, `Traditional` for `zh-Hant`)."""
    import langcodes

    try:
        return langcodes.Language.get(tag).maximize().script_name() or None
    except (LookupError, ValueError):
        return None


@dataclass(frozen=True)
class Language:
    """One language of a study: the `name` figures show, its standardized BCP 47 `tag`, where it was first
    given (`record` of `languages.csv`, or of the first question that named it) and what languages.csv says."""

    name: str
    tag: str
    record: str
    resource_level: str | None = None
    script: str | None = None
    listed: bool = False


class StudyLanguages:
    """The languages of a study folder, one per tag: those `languages.csv` lists (`add_listed`), and those the
    questions name (`name_of`). Every name or code of one tag is that language, named as languages.csv
    names it; two names of a tag it does not list are a problem naming both."""

    def __init__(self) -> None:
        self.by_tag: dict[str, Language] = {}
        self._by_name: dict[str, Language] = {}  # `same_name` of a listed name -> its language
        self._seen: dict[str, str | None] = {}  # `same_name` of a value the questions gave -> its name, or None

    def add_listed(
        self,
        path,
        record: str,
        name: str,
        code: str,
        resource_level: str | None,
        given_script: str | None,
        problems: Problems,
    ) -> None:
        """A row of languages.csv: `name` is the study's own name of the language whose code is `code`."""
        tag = code_tag(code)
        if tag is None:
            problem = records.language_tag_problem(clean(code)) or f"is {code!r}"
            problems.add(path, record, "code", f"{problem}; expected a BCP 47 or ISO 639 code, e.g. ha or hau")
            return
        shown = clean(name)
        if same_name(shown) in self._by_name:
            problems.add(
                path,
                record,
                "language",
                f"{name!r} is listed twice (first on {self._by_name[same_name(shown)].record})",
            )
            return
        if tag in self.by_tag:
            first = self.by_tag[tag]
            problems.add(
                path,
                record,
                "code",
                f"{code!r} is {display(tag)} ({tag}), which {first.record} lists as {first.name!r}: a language is "
                "listed once, under the name figures show",
            )
            return
        language = Language(shown, tag, record, resource_level, given_script or script(tag), listed=True)
        self.by_tag[tag] = self._by_name[same_name(shown)] = language

    def name_of(self, value: str, path, record: str, problems: Problems) -> str | None:
        """The name of the language `value` (a name or a code) means, as the study shows it; None with a
        problem, said once for each spelling, when it names none or another name already names its language."""
        key = same_name(value)
        if key in self._by_name:
            return self._by_name[key].name
        if key in self._seen:
            return self._seen[key]
        resolution = resolve(value)
        name = None
        if resolution.tag is None:
            problems.add(path, record, "language", resolution.problem or "")
        elif resolution.tag in self.by_tag:
            language = self.by_tag[resolution.tag]
            if language.listed:
                name = language.name
            else:
                problems.add(
                    path,
                    record,
                    "language",
                    f"{value!r} and {language.name!r} (first on {language.record}) name one language, "
                    f"{display(resolution.tag)} ({resolution.tag}): use one name, or list the language in "
                    "languages.csv with the name to show",
                )
        else:
            name = clean(value)
            self.by_tag[resolution.tag] = Language(name, resolution.tag, record, script=script(resolution.tag))
        self._seen[key] = name
        return name

    def rows(self) -> list[dict]:
        """Every language, listed first and then as the questions name them: language, iso_code,
        resource_level, script."""
        return [
            {
                "language": language.name,
                "iso_code": iso_code(language.tag),
                "resource_level": language.resource_level,
                "script": language.script,
            }
            for language in self.by_tag.values()
        ]
