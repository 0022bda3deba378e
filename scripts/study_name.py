"""Print the name a study folder's study.toml gives it (`make study STUDY=folder` names its database and
its output folder after it). Standard library only: the Makefile runs it before the environment exists.
When there is no readable name it prints nothing and says why on stderr; the build then reports every
problem of the folder (analysis/io/study.py).

    python3 scripts/study_name.py path/to/study
"""

import re
import sys
import tomllib
from pathlib import Path

KEY = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def main(folder: str) -> int:
    path = Path(folder) / "study.toml"
    try:
        name = tomllib.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 1
    if not isinstance(name, str) or not KEY.match(name):
        print(f"{path}: name is {name!r}; expected a key: lower-case letters, digits, '-' and '_'", file=sys.stderr)
        return 1
    print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
