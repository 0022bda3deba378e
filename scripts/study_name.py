"""Print the name a study folder's study.toml gives it (`make study STUDY=folder` names its database and
its output folder after it). Standard library only: the Makefile runs it before the environment exists.
When there is no readable name it prints nothing and says why on stderr; the build then reports every
problem of the folder (analysis/io/study.py, whose rules these are: the name a key matched whole, a
regular file read, a byte-order mark named).

    python3 scripts/study_name.py path/to/study

With `--check --db=DB --out=OUT`, print whether the database and the output folder may hold the study
(analysis/core/identity.py, from the records the build and the report runs leave): `ok`; `unknown` for a
database without the record beside it (copied, or of an older version: Make builds it again, and the
build checks the record inside it); `refused` when either holds another study folder's study, with the
message naming both on stderr.

    python3 scripts/study_name.py --check --db=data/studies/NAME.duckdb --out=studies/NAME path/to/study
"""

import argparse
import os
import re
import stat
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analysis.core import identity  # noqa: E402 - standard library only, found in the project

KEY = re.compile(r"[a-z0-9][a-z0-9_-]*")  # matched whole: `$` would let a final newline through
MAX_BYTES = 1 << 24  # analysis.io.study.MAX_STUDY_FILE_BYTES


def name_of(folder: str) -> str | None:
    path = Path(folder) / "study.toml"
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode):  # a FIFO would wait for a writer, a device never end
            print(f"{path}: is not a regular file", file=sys.stderr)
            return None
        if status.st_size > MAX_BYTES:
            print(f"{path}: is {status.st_size:,} bytes; a study.toml has at most {MAX_BYTES:,}", file=sys.stderr)
            return None
        raw = path.read_bytes()
        if raw.startswith(b"\xef\xbb\xbf"):
            print(f"{path}: starts with a UTF-8 byte-order mark; save it as UTF-8 without BOM", file=sys.stderr)
            return None
        name = tomllib.loads(raw.decode("utf-8")).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return None
    if not isinstance(name, str) or not KEY.fullmatch(name):
        print(f"{path}: name is {name!r}; expected a key: lower-case letters, digits, '-' and '_'", file=sys.stderr)
        return None
    return name


def check(folder: str, name: str, db: str, out: str) -> str:
    """`ok`, `unknown` or `refused` (see the module's docstring)."""
    wanted = identity.StudySource(name, os.path.realpath(folder), "", release=False)
    held = identity.read(identity.database_record(db))
    if held is not None and not held.same_study(wanted):
        print(identity.database_refusal(db, held, wanted), file=sys.stderr)
        return "refused"
    record = identity.output_record(Path(out) / "build")
    in_out = identity.read(record)
    if in_out is not None and not in_out.same_study(wanted):
        print(identity.output_refusal(out, record, in_out, wanted, db), file=sys.stderr)
        return "refused"
    return "unknown" if held is None and Path(db).exists() else "ok"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--db")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    name = name_of(args.folder)
    if name is None:
        return 1
    print(check(args.folder, name, args.db, args.out) if args.check else name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
