"""Tabular input files (CSV, JSONL) read record by record, streamed, with errors that name the file,
the line and what was expected. Every reader of the suite's CSV and JSONL inputs goes through here,
and so do the checks of the values it reads (`text`, `whole_number`), which name the JSON type of a
value that has the wrong one. And the one writer of CSVs that people open (`write_csv_for_people`).

What a reader refuses, besides what its caller checks: a file that cannot be opened (the reason), a
file larger than `MAX_FILE_BYTES`, a byte-order mark, text that is not UTF-8, a CSV field longer than
`MAX_FIELD` characters or holding a NUL byte, a JSONL line that is not one JSON object, gives a key
twice, nests deeper than Python's parser reaches or holds `NaN` or `Infinity` (not JSON), and a text
value longer than `MAX_FIELD` characters (`text`). Each JSONL line is checked for the keys it must
have on its own: a line may leave out an optional key that another gives. The limits are in the
messages.
"""

import collections
import contextlib
import csv
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from ..core.errors import Problems, reason

# A text field (a CSV field, a JSON string) may be this long (characters): 50 times the release's longest
# answer (18,613), short enough to stop a file whose quoting is broken from being read as one field,
# and a text whose verdicts would take minutes to compute.
MAX_FIELD = 1 << 20
# An input file may be this large (bytes): the 100,000 rows of the largest import benchmarked take 3 MB.
MAX_FILE_BYTES = 1 << 30
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
    if path.is_dir():
        problems.add(path, None, None, "is a folder; expected a .csv or .jsonl file")
        return
    if not path.is_file():
        problems.add(path, None, None, "no such file")
        return
    if path.suffix.lower() not in (".jsonl", ".ndjson", ".csv"):
        problems.add(path, None, None, "unknown format: expected a .csv or .jsonl file")
        return
    try:
        size = path.stat().st_size
    except OSError as exc:
        problems.add(path, None, None, f"cannot be read: {reason(exc)}")
        return
    if size == 0:
        problems.add(path, None, None, "the file is empty")
        return
    if size > MAX_FILE_BYTES:
        problems.add(path, None, None, file_too_large(size))
        return
    if path.suffix.lower() == ".csv":
        yield from _csv_rows(path, required, optional, problems)
    else:
        yield from _jsonl_rows(path, required, optional, problems)


def file_too_large(size: int | None = None) -> str:
    """The refusal of a file over `MAX_FILE_BYTES` (of `size` bytes, when known)."""
    found = f"is {size:,} bytes" if size is not None else f"holds more than {MAX_FILE_BYTES:,} bytes"
    return f"{found}; an input file has at most {MAX_FILE_BYTES:,} bytes: split it"


class _NotUtf8(Exception):
    def __init__(self, line: int, reason: str):
        self.line, self.reason = line, reason


def _lines(path: Path, problems: Problems):
    """The file's lines as text (with their line ends), decoded one by one so that text that is not
    UTF-8 is found on its own line; None when the file cannot be opened or starts with a byte-order mark."""
    try:
        raw = open(path, "rb")
    except OSError as exc:
        problems.add(path, None, None, f"cannot be read: {reason(exc)}")
        return None
    if raw.read(3) == b"\xef\xbb\xbf":
        problems.add(path, "byte 0", None, "starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM")
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
        problems.add(path, f"line {exc.line}", None, f"is not UTF-8 text ({exc.reason}); save the file as UTF-8")
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            problems.add(
                path,
                record,
                None,
                f"holds a field longer than {MAX_FIELD:,} characters (a quote that is never closed?)",
            )
        else:
            problems.add(path, record, None, f"cannot be read as CSV: {exc}")
    except OSError as exc:
        problems.add(path, record, None, f"cannot be read: {reason(exc)}")
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
        problems.add(path, where, None, "; ".join(parts) + f"; expected the columns {expected}")
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
            problems.add(
                path, "line 1 (header)", None, f"the column(s) {', '.join(map(repr, duplicated))} appear twice"
            )
            return
        while True:
            line = reader.line_num + 1
            row = _guarded(path, problems, f"line {line}", lambda: next(reader, None))
            if row is None:
                return
            if len(row) != len(header):
                problems.add(path, f"line {line}", None, f"has {len(row)} fields, the header has {len(header)}")
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
            if not line.strip():
                continue
            try:
                row = loads(line)
            except json.JSONDecodeError as exc:
                problems.add(path, f"line {number} column {exc.colno}", None, f"invalid JSON: {exc.msg}")
                continue
            except ValueError as exc:  # _Refused, or a number of more digits than Python converts
                problems.add(path, f"line {number}", None, f"invalid JSON: {json_value_problem(exc)}")
                continue
            if not isinstance(row, dict):
                problems.add(path, f"line {number}", None, f"is {json_type(row)}; expected a JSON object per line")
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
    """A whole number from 0 to `maximum`: a JSON number without a fraction, or text of ASCII digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = int(value.strip())
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


# ------------------------------------------------------------------------------------------ writing

# A cell a spreadsheet would run as a formula starts with one of these (OWASP, "CSV Injection").
_FORMULA_START = re.compile(r"^[=+\-@\t\r]")
# ... unless it is a plain number (a negative one, an exponent, a percentage), which stays as it is.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?%?")


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


def write_csv_for_people(frame: pl.DataFrame, path: Path | str) -> None:
    """Write `frame` as a CSV that people open in spreadsheets (every figures and report CSV): formula
    cells neutralised (`spreadsheet_safe`); the database keeps the raw values."""
    spreadsheet_safe(frame).write_csv(path)
