"""The one error type for bad input: it names the file, the record and the field of every problem found."""

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    file: str
    record: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.record:
            where += f", {self.record}"
        if self.field:
            where += f", field '{self.field}'"
        return f"{where}: {self.message}"


class InputError(Exception):
    """Raised with every problem of an input at once, so that a researcher can fix them in one pass."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems[:50]]
        if len(self.problems) > 50:
            lines.append(f"... and {len(self.problems) - 50} more problems")
        noun = "problem" if len(self.problems) == 1 else "problems"
        super().__init__(f"{len(self.problems)} {noun} in the input:\n  " + "\n  ".join(lines))


class Problems:
    """Collects problems while a file is read; `raise_if_any` stops before anything is written."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def add(self, file: str | Path, record: str | None, field: str | None, message: str) -> None:
        self.items.append(Problem(str(file), record, field, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


class NotebookFailed(Exception):
    """A notebook of `make figures` raised: names the notebook and the cell, and where the executed copy is."""

    def __init__(self, source: Path, executed: Path, error) -> None:
        first_line = (error.source or "").strip().splitlines()[:1]
        super().__init__(
            f"{source.name} failed in code cell {error.cell_index} (execution count {error.exec_count}"
            f"{', `' + first_line[0] + '`' if first_line else ''}): {error.ename}: {error.evalue}\n"
            f"The executed copy, with the traceback, is kept at {executed}; no report was written."
        )


class CheckFailed(Exception):
    """A finished database failed the build's checks (analysis/pipeline/checks.py); it was not written."""

    def __init__(self, db_path: Path, failures: list[str]):
        self.failures = list(failures)
        noun = "check" if len(failures) == 1 else "checks"
        super().__init__(f"{db_path} was not written: {len(failures)} {noun} of the new database failed:\n  "
                         + "\n  ".join(self.failures))
