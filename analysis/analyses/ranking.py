"""Sentences that name the largest and the smallest of some values (the model with the most clean answers,
the most similar pair of languages...): the one rule by which every summary says a tie as a tie. Values are
compared as the sentence prints them (rounded to its decimals), so that a sentence never names one of two
values it prints alike as the larger, and never names the same item as the largest and the smallest."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.text import inert

# A tie of more items than this is named by its first ones and a count of the others.
NAMED = 3


@dataclass(frozen=True)
class Ends:
    """The items with the largest value (`top`, at `high`) and those with the smallest (`bottom`, at `low`),
    each in the order they were given; `tied` when every item prints the same value."""

    top: list[str]
    high: float
    bottom: list[str]
    low: float
    tied: bool


def ends(items: Iterable[tuple[str, float]], spec: str) -> Ends:
    """The ends of `items` (name, value; at least one) as the format `spec` (`.2f`, `.3g`) prints them: the
    items whose value prints as the largest's, and those whose value prints as the smallest's."""
    given = [(name, float(value)) for name, value in items]
    if not given:
        raise ValueError("no items to rank")
    high, low = max(v for _, v in given), min(v for _, v in given)
    high_text, low_text = format(high, spec), format(low, spec)
    return Ends(
        [n for n, v in given if format(v, spec) == high_text],
        high,
        [n for n, v in given if format(v, spec) == low_text],
        low,
        high_text == low_text,
    )


def listed(names: list[str], limit: int = NAMED) -> str:
    """Names for Markdown (inert): `A`, `A and B`, `A, B and C`, `A, B, C and 4 others`."""
    shown = [inert(name) for name in names[:limit]]
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest:,} other{'s' if rest != 1 else ''}"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def has(names: list[str]) -> str:
    """`has` or `have`, as `listed(names)` needs."""
    return "has" if len(names) == 1 else "have"


def each(names: list[str]) -> str:
    """` each` after the value of a tie, nothing after one item's."""
    return " each" if len(names) > 1 else ""
