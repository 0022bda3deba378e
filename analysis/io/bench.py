"""The benchmarks' results that docs/performance.md shows (`python -m analysis docs`): `surface.json`
(`make bench-surface`, scripts/bench_surface.py), in bench/results/."""

import json
from pathlib import Path

from ..core import paths

SURFACE = "surface.json"


def read(folder: Path | str = paths.BENCH_RESULTS, name: str = SURFACE) -> dict | None:
    """The measurements of a benchmark, or None when it has not been run."""
    path = Path(folder) / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
