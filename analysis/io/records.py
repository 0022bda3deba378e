"""Tabular input files (CSV, JSONL) read record by record, streamed, with errors that name the file,
the line and what was expected. Every reader of the suite's CSV and JSONL inputs goes through here."""

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import Problems


def read_rows(path: Path, required: tuple[str, ...], optional: tuple[str, ...] | None, problems: Problems,
              ) -> Iterator[tuple[str, dict]]:
    """(record label, row) of a CSV or JSONL file, streamed so that large files stay in bounded memory.

    `optional` None accepts any further column.
    """
    if not path.is_file():
        problems.add(path, None, None, "no such file")
        return
    if path.stat().st_size == 0:
        problems.add(path, None, None, "the file is empty")
        return
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        yield from _jsonl_rows(path, required, optional, problems)
    elif path.suffix.lower() == ".csv":
        yield from _csv_rows(path, required, optional, problems)
    else:
        problems.add(path, None, None, "unknown format: expected a .csv or .jsonl file")


def _open_text(path: Path, problems: Problems):
    raw = open(path, "rb")
    if raw.read(3) == b"\xef\xbb\xbf":
        problems.add(path, "byte 0", None, "starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM")
        raw.close()
        return None
    raw.seek(0)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="")


def _decode_guard(path: Path, problems: Problems, record: str, read):
    try:
        return read()
    except UnicodeDecodeError as exc:
        problems.add(path, record, None, f"is not UTF-8 text ({exc.reason}); save the file as UTF-8")
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
    fh = _open_text(path, problems)
    if fh is None:
        return
    with fh:
        reader = csv.reader(fh)
        header = _decode_guard(path, problems, "line 1 (header)", lambda: next(reader, None))
        if header is None or not check_columns(path, header, required, optional, problems, "line 1 (header)"):
            return
        while True:
            line = reader.line_num + 1
            row = _decode_guard(path, problems, f"line {line}", lambda: next(reader, None))
            if row is None:
                return
            if len(row) != len(header):
                problems.add(path, f"line {line}", None, f"has {len(row)} fields, the header has {len(header)}")
            elif any(row):
                yield f"line {line}", dict(zip(header, row))


def _jsonl_rows(path, required, optional, problems):
    fh = _open_text(path, problems)
    if fh is None:
        return
    with fh:
        number = 0
        while True:
            number += 1
            line = _decode_guard(path, problems, f"line {number}", fh.readline)
            if not line:
                return
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(path, f"line {number} column {exc.colno}", None, f"invalid JSON: {exc.msg}")
                continue
            if not isinstance(row, dict):
                problems.add(path, f"line {number}", None, "expected a JSON object per line")
                continue
            if check_columns(path, list(row), required, optional, problems, f"line {number}"):
                yield f"line {number}", {k: ("" if v is None else v) for k, v in row.items()}
