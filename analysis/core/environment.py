"""Environment variables for what a block of code starts: a kernel, a scheduler or a library reads them,
and every process started in the block inherits them."""

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def variables_set(**variables: str) -> Iterator[None]:
    """`variables` set while the block runs; afterwards each has its value from before again, or is unset."""
    before = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
