"""The files of the short-text evaluation of the language identification (`make language-id`, written by
`analysis.pipeline.short_text` into `build/language_id_short_text/`): `accuracy.csv` (per route or engine,
language and piece length), `routing.csv` (the routing it chose, `ROUTING_SCHEMA`), `acceptance.csv`,
`neighbours.csv`, `pieces.parquet`, `verdicts.parquet` and `meta.json`; and the close languages the
evaluation and the routing name (`CLOSE_LANGUAGES`).
"""

import json
from pathlib import Path

import polars as pl

from ..core import paths

# The lengths (characters) the pieces are cut to; a length band of the routing starts at each.
PIECE_CHARS = (20, 50, 100, 200)
# Close languages whose short texts are taken for one another (ISO 639 codes as the engines write them);
# the evaluation adds the neighbours its confusion matrix shows (`neighbours.csv`).
CLOSE_LANGUAGES = (
    ("en", "sco"),
    ("es", "gl", "pt", "ca"),
    ("ms", "id"),
    ("hi", "ur"),
    ("sr", "hr", "bs"),
    ("da", "nb", "nn"),
    ("cs", "sk"),
)

# The routing: per route (`auto`, or one engine for every language), language and length band (from
# `from_chars` characters on), the engine that judges, its margin, the n-gram margin that screens lingua's
# texts first, and the accuracy measured at `from_chars`.
ROUTING_SCHEMA = {
    "route": pl.String,
    "iso_code": pl.String,
    "from_chars": pl.Int64,
    "engine": pl.String,
    "margin": pl.Float64,
    "screen_margin": pl.Float64,
    "pct_correct": pl.Float64,
}


def close_neighbours(code: str) -> tuple[str, ...]:
    """The named close languages of `code` (`CLOSE_LANGUAGES`), itself left out."""
    return tuple(sorted({c for group in CLOSE_LANGUAGES if code in group for c in group} - {code}))


def read(folder: Path | str = paths.SHORT_TEXT_EVALUATION) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """The accuracy table, the routing and the settings (`meta.json`) of the evaluation in `folder`."""
    folder = Path(folder)
    if not (folder / "meta.json").is_file():
        raise FileNotFoundError(
            f"no short-text evaluation of the language identification in {folder}: run `make language-id`"
        )
    routes = pl.read_csv(folder / "routing.csv", schema=ROUTING_SCHEMA)
    table = pl.read_csv(folder / "accuracy.csv", schema_overrides={"pct_correct": pl.Float64})
    return table, routes, json.loads((folder / "meta.json").read_text(encoding="utf-8"))


def read_acceptance(folder: Path | str = paths.SHORT_TEXT_EVALUATION) -> pl.DataFrame:
    """`acceptance.csv`: per engine, expected language, close neighbour and length, how much of the
    neighbour's pieces were judged in the expected language."""
    return pl.read_csv(Path(folder) / "acceptance.csv")
