"""Spoiling a copy of the example study: one edit of a file's text, and the problems its reading reports
(paths relative to the folder)."""

import pytest

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import study

EXAMPLE = paths.DATA / "examples" / "study"


def edit(path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def problems_of(folder) -> list[str]:
    with pytest.raises(InputError) as info:
        study.read(folder)
    return [str(p).replace(str(folder) + "/", "") for p in info.value.problems]
