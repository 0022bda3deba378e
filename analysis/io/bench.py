"""The benchmarks' results that docs/performance.md shows (`python -m analysis docs`): `surface.json`
(`make bench-surface`, scripts/bench_surface.py), in bench/results/; and the inputs a benchmark
generates (`write_new_model_answers`, for `make bench`'s validation of 100,000 new models)."""

import json
from pathlib import Path

from ..core import paths

SURFACE = "surface.json"


def read(folder: Path | str = paths.BENCH_RESULTS, name: str = SURFACE) -> dict | None:
    """The measurements of a benchmark, or None when it has not been run."""
    path = Path(folder) / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def write_new_model_answers(
    path: Path | str,
    n_rows: int,
    questions: tuple[tuple[str, str], ...] = (("german:0", "German"), ("german:1", "German")),
) -> Path:
    """An answers file of `n_rows` answers, each of a new model of its own (`bulk-<i>`), to `questions`
    in turn: the import whose validation once scanned every row for each model (`make bench`'s
    validation row, and the test that it stays linear)."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as out:
        out.write("question,language,model,answer\n")
        for i in range(n_rows):
            question, language = questions[i % len(questions)]
            out.write(f"{question},{language},bulk-{i},Eine Antwort mit einigen Wörtern: Nummer {i}.\n")
    return path
