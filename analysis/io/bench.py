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


def tier_answers(n_languages: int, n_models: int, n_questions: int, seed: int = 37):
    """The per-answer frame `make bench` times the significance tiers on: every model answers every
    question of every language, a 0/1 verdict (`correct`, shares spread from 30% to 90% over the
    models) and a number (`score`, means spread by 0.02 a model), one row per answer."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    size = n_languages * n_models * n_questions
    model = np.tile(np.repeat(np.arange(n_models), n_questions), n_languages)
    return pl.DataFrame(
        {
            "language": np.repeat(np.arange(n_languages), n_models * n_questions),
            "model": model,
            "question_id": np.tile(np.arange(n_questions), n_languages * n_models)
            + n_questions * np.repeat(np.arange(n_languages), n_models * n_questions),
            "correct": rng.random(size) < 0.3 + 0.6 * model / max(n_models - 1, 1),
            "score": rng.normal(0.5, 0.2, size) + 0.02 * model,
        }
    )
