"""Aggregates of a polars Series (`max()`, `sum()`, `mean()`...) as the numbers they are.

polars types such an aggregate as any Python value its columns can hold (a date, a string, a list, None),
whatever the column; these say that a numeric column's is a number, and raise if it is not, so that a
type checker can follow the arithmetic done with it."""


def number(value: object) -> float:
    """A numeric aggregate (an int or a float; a bool is not one) as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)
