"""Tabular input files (CSV, JSONL) read record by record, streamed, with errors that name the file,
the line and what was expected. Every reader of the suite's CSV and JSONL inputs goes through here,
and so do the checks of the values it reads (`text`, `whole_number`), which name the JSON type of a
value that has the wrong one. And the one writer of CSVs that people open (`write_csv_for_people`).

What a reader refuses, besides what its caller checks: a file that cannot be opened (the reason), that
is not a regular file (a FIFO, a device: `file_problem`), larger than `MAX_FILE_BYTES` or of more than
`MAX_ROWS` records, a byte-order mark, text that is not UTF-8, a CSV field longer than `MAX_FIELD`
characters or holding a NUL byte, a JSONL line that is not one JSON object, gives a key twice, nests
deeper than Python's parser reaches or holds `NaN` or `Infinity` (not JSON), and a text value longer
than `MAX_FIELD` characters (`text`). Each JSONL line is checked for the keys it must have on its own:
a line may leave out an optional key that another gives. The limits are in the messages. A problem
after which some records of a file are unknown (its header, its size, a line that cannot be read) is
recorded as such (`Problems.add_partly_read`), so that what refers to them is not reported again.

And the one rule of each kind of value read from any file (section "the rules of values"): a key
(`is_key`: matched whole), a label and a free text (`label_problem`, `free_text_problem`: length, control
characters, line and paragraph separators, bidirectional controls, byte-order marks), a number
(`decimal`: ASCII decimal only), and a language tag (`language_tag_problem`).
"""

import collections
import contextlib
import csv
import io
import json
import os
import re
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from ..core import files
from ..core.errors import Problems, reason

# A text field (a CSV field, a JSON string) may be this long (characters): 50 times the release's longest
# answer (18,613), short enough to stop a file whose quoting is broken from being read as one field,
# and a text whose verdicts would take minutes to compute.
MAX_FIELD = 1 << 20
# An input file may be this large (bytes): the 100,000 rows of the largest import benchmarked take 3 MB. A
# compressed file (a Parquet file, a gzipped release file) may hold no more once decoded.
MAX_FILE_BYTES = 1 << 30
# An input table may hold this many records: ten times the million ratings report 05 is measured on, and
# what a file of a gigabyte holds at a hundred bytes a record. Rows are held in memory while they are checked.
MAX_ROWS = 10_000_000
# The largest value of an INTEGER column.
INT32_MAX = 2**31 - 1
# ASCII digits only: `str.isdigit` also accepts '²' and other digits `int` refuses or reads differently.
_WHOLE = re.compile(r"[0-9]+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def read_rows(
    path: Path,
    required: tuple[str, ...],
    optional: tuple[str, ...] | None,
    problems: Problems,
) -> Iterator[tuple[str, dict]]:
    """(record label, row) of a CSV or JSONL file, streamed so that large files stay in bounded memory.

    `optional` None accepts any further column.
    """
    problem = file_problem(path, "a .csv or .jsonl file")
    if problem is None and path.suffix.lower() not in (".jsonl", ".ndjson", ".csv"):
        problem = "unknown format: expected a .csv or .jsonl file"
    if problem is None:
        size = path.stat().st_size
        problem = "the file is empty" if size == 0 else file_too_large(size) if size > MAX_FILE_BYTES else None
    if problem is not None:
        problems.add_partly_read(path, None, None, problem)
        return
    if path.suffix.lower() == ".csv":
        yield from _csv_rows(path, required, optional, problems)
    else:
        yield from _jsonl_rows(path, required, optional, problems)


def file_problem(path: Path, expected: str) -> str | None:
    """Why `path` is not a file to read (`expected` says what is), or None: it does not exist, cannot be
    looked at, or is a folder or a special file (a FIFO, a device, a socket), which is never taken for
    a missing file: reading a FIFO waits for a writer, a device never ends."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"no such file; expected {expected}"
    except OSError as exc:
        return f"cannot be read: {reason(exc)}"
    if os.path.isdir(path):
        return f"is a folder; expected {expected}"
    special = files.special_kind(mode)
    return f"is {special}, not a file; expected {expected}" if special else None


def file_too_large(size: int | None = None) -> str:
    """The refusal of a file over `MAX_FILE_BYTES` (of `size` bytes, when known)."""
    found = f"is {size:,} bytes" if size is not None else f"holds more than {MAX_FILE_BYTES:,} bytes"
    return f"{found}; an input file has at most {MAX_FILE_BYTES:,} bytes: split it"


def too_many_rows() -> str:
    """The refusal of a table of more than `MAX_ROWS` records."""
    return f"holds more than {MAX_ROWS:,} records; an input table has at most {MAX_ROWS:,}: split it"


def expands_too_far(size: int) -> str:
    """The refusal of a compressed file that decodes to more than `MAX_FILE_BYTES`."""
    return (
        f"decodes to more than {MAX_FILE_BYTES:,} bytes (the file itself is {size:,} bytes); an input file holds "
        f"at most {MAX_FILE_BYTES:,} bytes once decoded: split it"
    )


BOM_PROBLEM = "starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM"


class _NotUtf8(Exception):
    def __init__(self, line: int, reason: str):
        self.line, self.reason = line, reason


def _lines(path: Path, problems: Problems):
    """The file's lines as text (with their line ends), decoded one by one so that text that is not
    UTF-8 is found on its own line; None when the file cannot be opened or starts with a byte-order mark."""
    try:
        raw = open(path, "rb")
    except OSError as exc:
        problems.add_partly_read(path, None, None, f"cannot be read: {reason(exc)}")
        return None
    if raw.read(3) == b"\xef\xbb\xbf":
        problems.add_partly_read(path, "byte 0", None, BOM_PROBLEM)
        raw.close()
        return None
    raw.seek(0)

    def decoded():
        with raw:
            for number, line in enumerate(raw, start=1):
                try:
                    yield line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise _NotUtf8(number, exc.reason) from None

    return decoded()


def _guarded(path: Path, problems: Problems, record: str, read):
    """`read()`, or None after recording why the file cannot be read on."""
    try:
        return read()
    except _NotUtf8 as exc:
        problems.add_partly_read(
            path, f"line {exc.line}", None, f"is not UTF-8 text ({exc.reason}); save the file as UTF-8"
        )
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            problems.add_partly_read(
                path,
                record,
                None,
                f"holds a field longer than {MAX_FIELD:,} characters (a quote that is never closed?)",
            )
        else:
            problems.add_partly_read(path, record, None, f"cannot be read as CSV: {exc}")
    except OSError as exc:
        problems.add_partly_read(path, record, None, f"cannot be read: {reason(exc)}")
    return None


def check_columns(path: Path, columns: list[str], required, optional, problems: Problems, where: str) -> bool:
    missing = [c for c in required if c not in columns]
    extra = [] if optional is None else [c for c in columns if c not in required and c not in optional]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(map(repr, missing))}")
        if extra:
            parts.append(f"unexpected column(s) {', '.join(map(repr, extra))}")
        expected = ", ".join(required) + (f" (optional: {', '.join(optional)})" if optional else "")
        problems.add_partly_read(path, where, None, "; ".join(parts) + f"; expected the columns {expected}")
        return False
    return True


def _csv_rows(path, required, optional, problems):
    lines = _lines(path, problems)
    if lines is None:
        return
    csv.field_size_limit(MAX_FIELD)
    with contextlib.closing(lines):
        reader = csv.reader(lines, strict=True)
        header = _guarded(path, problems, "line 1 (header)", lambda: next(reader, None))
        if header is None or not check_columns(path, header, required, optional, problems, "line 1 (header)"):
            return
        duplicated = sorted(c for c, n in collections.Counter(header).items() if n > 1)
        if duplicated:
            problems.add_partly_read(
                path, "line 1 (header)", None, f"the column(s) {', '.join(map(repr, duplicated))} appear twice"
            )
            return
        count = 0
        while True:
            line = reader.line_num + 1
            row = _guarded(path, problems, f"line {line}", lambda: next(reader, None))
            if row is None:
                return
            count += 1
            if count > MAX_ROWS:
                problems.add_partly_read(path, f"line {line}", None, too_many_rows())
                return
            if len(row) != len(header):
                problems.add_partly_read(
                    path, f"line {line}", None, f"has {len(row)} fields, the header has {len(header)}"
                )
            elif any(row):
                yield f"line {line}", dict(zip(header, row))


class _Refused(ValueError):
    pass


def json_value_problem(exc: ValueError) -> str:
    """What `json.loads` refused beyond JSON's grammar, in words."""
    if "integer string conversion" in str(exc):
        return f"a number of more than {sys.get_int_max_str_digits():,} digits"
    return str(exc)


def refuse_constant(name: str):
    """For `json.loads(parse_constant=...)`: Python reads NaN and Infinity, which JSON does not have."""
    raise _Refused(f"{name} is not a JSON value (write null, or a number)")


def unique_keys(pairs: list) -> dict:
    """For `json.loads(object_pairs_hook=...)`: an object that gives a key twice is refused (Python would
    keep the last value silently)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        twice = sorted(k for k, n in collections.Counter(k for k, _ in pairs).items() if n > 1)
        raise _Refused(f"the key(s) {', '.join(map(repr, twice))} appear twice in one object")
    return found


def loads(text: str):
    """JSON as the suite reads it: NaN, Infinity, a key given twice and nesting deeper than Python's
    parser reaches refused with a `ValueError` that says so."""
    try:
        return json.loads(text, parse_constant=refuse_constant, object_pairs_hook=unique_keys)
    except RecursionError:
        raise _Refused(
            f"arrays or objects nested deeper than the {sys.getrecursionlimit():,} levels a JSON reader follows"
        ) from None


def _jsonl_rows(path, required, optional, problems):
    lines = _lines(path, problems)
    if lines is None:
        return
    with contextlib.closing(lines):
        number = 0
        while True:
            number += 1
            line = _guarded(path, problems, f"line {number}", lambda: next(lines, None))
            if line is None:
                return
            if number > MAX_ROWS:
                problems.add_partly_read(path, f"line {number}", None, too_many_rows())
                return
            if not line.strip():
                continue
            try:
                row = loads(line)
            except json.JSONDecodeError as exc:
                problems.add_partly_read(path, f"line {number} column {exc.colno}", None, f"invalid JSON: {exc.msg}")
                continue
            except ValueError as exc:  # _Refused, or a number of more digits than Python converts
                problems.add_partly_read(path, f"line {number}", None, f"invalid JSON: {json_value_problem(exc)}")
                continue
            if not isinstance(row, dict):
                problems.add_partly_read(
                    path, f"line {number}", None, f"is {json_type(row)}; expected a JSON object per line"
                )
                continue
            if check_columns(path, list(row), required, optional, problems, f"line {number}"):
                yield f"line {number}", row


# ------------------------------------------------------------------------------------------ values


def json_type(value) -> str:
    """A JSON value for messages, with its type: `5 (a JSON number)`, `'no' (a JSON string)`, `a JSON object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'} (a JSON boolean)"
    if isinstance(value, (int, float)):
        shown = repr(value) if len(repr(value)) <= 30 else f"a number of {len(repr(value))} digits"
        return f"{shown} (a JSON number)"
    if isinstance(value, str):
        return f"{value[:60]!r}{'...' if len(value) > 60 else ''} (a JSON string)"
    if isinstance(value, list):
        return "a JSON array"
    if isinstance(value, dict):
        return "a JSON object"
    return type(value).__name__


def text_problem(value) -> str | None:
    """Why `value` is not text that can be stored, or None: it must be a string (every CSV field is)
    of Unicode characters (a JSON escape such as \\ud800 alone is not one)."""
    if not isinstance(value, str):
        return f"is {json_type(value)}; expected text (a JSON string)"
    match = _SURROGATE.search(value)
    if match:
        return (
            f"holds a lone surrogate \\u{ord(match.group()):04x} at character {match.start()}, which is not a "
            "Unicode character (half of an escaped pair?)"
        )
    if "\x00" in value:
        return f"holds a NUL character at character {value.index(chr(0))}, which is not text"
    return None


def text(value, path, record, field, problems: Problems, optional: bool = False) -> str | None:
    """`value` as text of at most `MAX_FIELD` characters, or None after recording why it is not
    (`optional`: "" and null give None)."""
    if optional and (value is None or value == ""):
        return None
    problem = text_problem(value)
    if problem is None and len(value) > MAX_FIELD:
        problem = f"is {len(value):,} characters long; a text field has at most {MAX_FIELD:,} characters"
    if problem:
        problems.add(path, record, field, problem)
        return None
    return value


def whole_number(value, path, record, field, problems: Problems, maximum: int = INT32_MAX) -> int | None:
    """A whole number from 0 to `maximum`: a JSON number without a fraction, or text of ASCII digits
    (between spaces, as `decimal` reads a number)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip(_SPACES)):
        number = int(value.strip(_SPACES))
    else:
        shown = repr(value) if isinstance(value, str) else json_type(value)  # a CSV field is always text
        problems.add(path, record, field, f"is {shown}; expected a whole number of 0 or more")
        return None
    if not 0 <= number <= maximum:
        problems.add(path, record, field, f"is {number}; expected a whole number from 0 to {maximum:,}")
        return None
    return number


def is_whole_number(text: str) -> bool:
    """Text of ASCII digits only (`str.isdigit` would accept '²', which `int` refuses)."""
    return bool(_WHOLE.fullmatch(text))


# ------------------------------------------------------------------------------------------ the rules of values
# One rule for each kind of value, wherever a file gives one (a study folder, an import, the release).


def is_key(text, pattern: re.Pattern) -> bool:
    """The one key rule: `text` is a string that `pattern` matches whole. (`re.match` with a pattern ending
    in `$` lets a final newline through: `$` matches before one.)"""
    return isinstance(text, str) and pattern.fullmatch(text) is not None


# A label is one line of visible text (a name in a figure, a table cell, a file's record): this long at most.
MAX_LABEL = 200
# What neither a label nor a free text holds, with what it does. A free text (a study's title, description
# or citation) may break lines and hold tabs; a label may not.
_LINE_BREAKS = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}
_SEPARATORS = {"\u2028": "the line separator U+2028", "\u2029": "the paragraph separator U+2029"}
# The explicit bidirectional formatting characters: embeddings, overrides and isolates, which show what
# follows them in another order than it is written (Unicode TR 9). The implicit marks (U+200E, U+200F,
# U+061C) only say which way a neutral character goes, and stay allowed.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def _unseen(text: str, line_breaks: bool) -> tuple[int, str, str] | None:
    """The first character of `text` that a label (or, with `line_breaks`, a free text) may not hold: its
    position, what it is and what it does, in words."""
    for match in _UNSEEN.finditer(text):
        char = match.group()
        if line_breaks and char in _LINE_BREAKS:
            continue
        does = ""
        if char in _LINE_BREAKS:
            what = _LINE_BREAKS[char]
        elif char in _SEPARATORS:
            what, does = _SEPARATORS[char], ", a line break that many programs do not show as one"
        elif char in _BIDI_CONTROLS:
            what = f"the bidirectional control U+{ord(char):04X} ({unicodedata.name(char)})"
            does = ", which shows what follows it in another order than it is written"
        elif char == "\ufeff":
            what = "a byte-order mark (U+FEFF)"
        elif char == "\x1b":
            what, does = "the control character U+001B (escape)", ", which starts a terminal's escape sequences"
        else:
            what = f"the control character U+{ord(char):04X}"
        return match.start(), what, does
    return None


def _text_rule(text: str, what: str, max_length: int, line_breaks: bool) -> str | None:
    if len(text) > max_length:
        return f"is {len(text):,} characters long; {what} has at most {max_length:,}"
    found = _unseen(text, line_breaks)
    if found is not None:
        position, character, does = found
        kind = "visible text, on lines" if line_breaks else "one line of visible text"
        return f"holds {character} at character {position}{does}; {what} is {kind}"
    return None


def label_problem(text: str, what: str = "a label", max_length: int = MAX_LABEL) -> str | None:
    """The one rule of a label (`what`: a name, a key, a category... shown on one line): why `text` cannot
    be one, or None. At most `max_length` characters, and none that is not seen as itself on one line:
    no control character (a line break, a tab, a terminal's escape), no line or paragraph separator
    (U+2028, U+2029), no bidirectional embedding, override or isolate, no byte-order mark."""
    return _text_rule(text, what, max_length, line_breaks=False)


def free_text_problem(text: str, what: str, max_length: int) -> str | None:
    """The one rule of a free text (`what`: a study's title, description, citation): as a label's
    (`label_problem`), except that it may break lines (a line break, a carriage return) and hold tabs."""
    return _text_rule(text, what, max_length, line_breaks=True)


def label(
    value, path, record, field, problems: Problems, optional: bool = False, max_length: int = MAX_LABEL
) -> str | None:
    """`value` as a label (`text`, then `label_problem`), or None after recording why it is not one."""
    found = text(value, path, record, field, problems, optional)
    if found is None:
        return None
    problem = label_problem(found, max_length=max_length)
    if problem:
        problems.add(path, record, field, f"is {shown(found)}, which {problem.removeprefix('is ')}")
        return None
    return found


def shown(value) -> str:
    """A value for a message: as Python writes it, cut after 60 characters when it is longer than 80."""
    written = repr(value)
    return written if len(written) <= 80 else f"{written[:60]}... ({len(written):,} characters)"


# The one number rule: ASCII digits, an optional point and an optional exponent, between spaces or tabs.
# Python's `float` also reads Arabic-Indic and other digits ('١٢'), '_' between digits ('1_000'),
# 'inf', 'nan' and '0x...'-like words: none of them is a number of a data file.
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPACES = " \t"


def decimal(value) -> float | None:
    """A finite number from a JSON number (not a boolean) or from text that is an ASCII decimal
    (`DECIMAL`); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer beyond a float's range
            return None
    elif isinstance(value, str) and DECIMAL.fullmatch(value.strip(_SPACES)):
        number = float(value.strip(_SPACES))
    else:
        return None
    return number if number == number and abs(number) != float("inf") else None


# ISO 639's codes that name no one language: undetermined, uncoded, several, and no linguistic content.
_NO_LANGUAGE = {"und", "mis", "mul", "zxx"}


def language_tag_problem(tag: str) -> str | None:
    """Why `tag` cannot be the code of a study's language, or None: it is a valid BCP 47 tag (`langcodes`)
    whose language is one language of a public standard, not a private-use one (`x-...`, `qaa` to `qtz`),
    which means whatever its writer meant, nor a code for no language or several (`und`, `mul`...)."""
    import langcodes

    if not langcodes.tag_is_valid(tag):
        return f"is {tag!r}, which is not a valid BCP 47 language tag"
    language = langcodes.Language.get(tag).language
    if language is not None and (language.startswith("x-") or len(language) == 3 and "qaa" <= language <= "qtz"):
        return f"is {tag!r}, a private-use tag that names no public language; give a language's own code"
    if language is None or language in _NO_LANGUAGE:
        return f"is {tag!r}, a code for no single language; give the language's own code"
    return None


# ------------------------------------------------------------------------------------------ writing

# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV Injection").
_FORMULA_START = re.compile(r"^[=+\-@\t\r]")
# ... unless it is a plain number (a negative one, an exponent, a percentage), which stays as it is.
_PLAIN_NUMBER = re.compile(DECIMAL.pattern + "%?")


def spreadsheet_safe(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with every text cell that a spreadsheet would run as a formula prefixed with `'`, as
    OWASP's CSV injection guidance says: a model's display name `=HYPERLINK(...)` is shown as text, not
    run. Numeric columns, and text cells that are plain numbers such as `-0.25`, are left as they are."""
    text_columns = [
        name
        for name, dtype in frame.schema.items()
        if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))
    ]
    if not text_columns:
        return frame
    return frame.with_columns(
        pl.when(
            pl.col(name).cast(pl.String).str.contains(_FORMULA_START.pattern)
            & ~pl.col(name).cast(pl.String).str.contains(rf"^{_PLAIN_NUMBER.pattern}$")
        )
        .then(pl.lit("'") + pl.col(name).cast(pl.String))
        .otherwise(pl.col(name).cast(pl.String))
        .alias(name)
        for name in text_columns
    )


def spreadsheet_safe_text(text: str) -> str:
    """`text` as `spreadsheet_safe` writes a text cell: prefixed with `'` when a spreadsheet would run it
    as a formula."""
    return f"'{text}" if _FORMULA_START.search(text) and not _PLAIN_NUMBER.fullmatch(text) else text


def write_csv_for_people(frame: pl.DataFrame, path: Path | str) -> None:
    """Write `frame` as a CSV that people open in spreadsheets (every figures and report CSV): formula
    cells neutralised (`spreadsheet_safe`), and so is the header, whose names may come from the data (a
    column per resource level or per model, `=1+1`): written by the `csv` module from the neutralised
    names, so that two names that become one are still two columns. The database keeps the raw values."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow([spreadsheet_safe_text(name) for name in frame.columns])
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write(header.getvalue())
        spreadsheet_safe(frame).write_csv(out, include_header=False)
