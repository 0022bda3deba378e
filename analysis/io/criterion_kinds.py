"""The kinds of rating criteria (docs/studies.md, section `study.toml`; CONTRIBUTING.md, "A rating-criterion
kind"): one record each, which every place that reads a criterion reads: study.toml's reader (`io.study`:
which levels it accepts, the kind of a criterion, the text of a level and of a rating), the database
(`criteria.kind`, and its meaning in docs/schema.md), report 05 (`analyses.ratings`: a rating's level as
the kind's `sql_type`, and each group's mean level where the kind is `numeric`) and the explorer (the mean
position of the levels, whatever the kind).
"""

from collections.abc import Callable
from dataclasses import dataclass


def level_text(value) -> str | None:
    """A level or a rating as text: a string (stripped) or a whole number (`4`, also written `4.0`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value.strip() if isinstance(value, str) else None


@dataclass(frozen=True)
class CriterionKind:
    """One kind of rating criterion, told by its levels in study.toml: a criterion is of the first kind (in
    `CRITERION_KINDS`' order) of which every level `is_level`."""

    name: str  # `criteria.kind`
    is_level: Callable[[object], bool]  # a level as study.toml (TOML) gives it
    level: str  # a level of this kind in words, for the messages: "a whole number"
    example: str  # levels of this kind as study.toml writes them, worst first
    sql_type: str  # the type of a level in the analyses (the database keeps every level as text)
    numeric: bool  # its levels are numbers: each group of ratings has a mean level
    # A level or a rating as text, from study.toml (TOML) or a table (a CSV's text, a JSON or Parquet value):
    # the text the database keeps and a rating matches; None for a value that is not one.
    text: Callable[[object], str | None] = level_text


def _whole_number(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _word(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


CRITERION_KINDS = (
    CriterionKind("numbered", _whole_number, "a whole number", "[1, 2, 3, 4, 5]", "BIGINT", numeric=True),
    # (a mix of words and whole numbers too: its numbers are words)
    CriterionKind(
        "worded",
        lambda value: _word(value) or _whole_number(value),
        "a word",
        '["poor", "fair", "good"]',
        "VARCHAR",
        numeric=False,
    ),
)
CRITERION_KIND_BY_NAME = {kind.name: kind for kind in CRITERION_KINDS}


def kind_of(levels: list) -> CriterionKind | None:
    """The kind of a criterion with these `levels` (as study.toml gives them); None when they are of none."""
    return next((kind for kind in CRITERION_KINDS if all(kind.is_level(level) for level in levels)), None)
