"""Benchmark of the surface stage (issue 3) against the CaLMQA authors' own approach.

The authors' detect_lang.py and detect_repetitions.py, restated here without their dataset classes:
one process, one answer at a time; CLD2 called as polyglot calls it, else `langid.classify`; the
repetition rule with a `Counter` of token 20-grams. The project's stage is `surface.answer_verdicts`
on 2 processes, once per langid engine. Both run over the same model answers of the database; the
language verdicts are compared on the languages whose identification is reliable.

Writes bench/results/surface.json, surface.md and surface_disagreements.csv (the answers where the
default engine and the authors' pipeline disagree). Timings depend on the machine and its load: the
load average is recorded with them.

    .venv/bin/python scripts/bench_surface.py [--db data/calmqa.duckdb] [--out bench/results]
"""

import argparse
import json
import os
import platform
import resource
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pycld2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis import store  # noqa: E402
from analysis.analyses.surface import bench_markdown  # noqa: E402
from analysis.core import paths  # noqa: E402
from analysis.io.calmqa import UNRELIABLE_LANGUAGES  # noqa: E402
from analysis.io.records import write_csv_for_people  # noqa: E402
from analysis.pipeline import surface  # noqa: E402
from analysis.pipeline.language_id import CLD2, LANGID_ENGINES, normalise_code  # noqa: E402
from analysis.pipeline.tokenizer import o200k_base  # noqa: E402


def authors_language(text: str, detector: str) -> str:
    """detect_lang.py: polyglot's Detector (CLD2) for its 14 languages (`languages.detector`), langid when
    CLD2 gives up."""
    import langid

    if detector == CLD2:
        data = text.encode("utf-8")
        try:
            reliable, _, choices = pycld2.detect(data, bestEffort=False)
            if not reliable:
                reliable, _, choices = pycld2.detect(data, bestEffort=True)
            if reliable:
                return choices[0][1]
        except pycld2.error:
            pass
    return langid.classify(text)[0]


def authors_repetition(text: str, encoding, n: int = 20, threshold: int = 4) -> bool:
    """detect_repetitions.py: any token n-gram occurring `threshold` times or more."""
    token_ids = encoding.encode(text, disallowed_special=())
    counts = Counter(tuple(token_ids[i : i + n]) for i in range(len(token_ids) - n + 1))
    return any(v >= threshold for v in counts.values())


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(function, *args, **kwargs):
    """(result, wall seconds, CPU seconds): on a shared machine the CPU time is the steadier figure."""
    started, cpu_started = time.perf_counter(), cpu_seconds()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started, cpu_seconds() - cpu_started


def run(db_path: Path, out_dir: Path) -> dict:
    con = store.connect(db_path)
    models = con.sql("SELECT answer_id, model FROM answers WHERE NOT is_human").pl()
    answers = con.sql(surface.MODEL_ANSWERS_SQL, params={"answer_ids": models["answer_id"].to_list()}).pl()
    error_codes = surface.error_codes(con)
    con.close()
    encoding = o200k_base()  # tiktoken, as the authors tokenized
    tokenizer = encoding.name
    load_before = os.getloadavg()

    # The project's stage first with the default engine (twice: the first run also fills langid's
    # model cache), then the authors' approach, then the other engines.
    project = {}
    runs = []
    for engine in ("langid-batch", "langid-batch", *[e for e in LANGID_ENGINES if e != "langid-batch"]):
        verdicts, seconds, cpu = timed(
            surface.surface_verdicts,
            answers,
            error_codes,
            processes=surface.PROCESSES,
            langid_engine=engine,
            progress=False,
        )
        runs.append((engine, seconds, cpu))
        project[engine] = verdicts
        if engine == "langid-batch" and len(runs) == 2:
            texts, detectors = answers["text"].to_list(), answers["detector"].to_list()
            codes, language_seconds, language_cpu = timed(
                lambda: [authors_language(t, d) if t else None for t, d in zip(texts, detectors)]  # noqa: B023 - called within this iteration
            )
            repeats, repetition_seconds, repetition_cpu = timed(
                lambda: [authors_repetition(t, encoding) for t in texts]  # noqa: B023 - called within this iteration
            )

    authors = answers.select("answer_id", "language", "iso_code").with_columns(
        authors_language=pl.Series([normalise_code(c) if c else None for c in codes], dtype=pl.String),
        authors_repetition=pl.Series(repeats, dtype=pl.Boolean),
    )
    authors_seconds = language_seconds + repetition_seconds
    authors_cpu = language_cpu + repetition_cpu
    engines = []
    for engine in LANGID_ENGINES:
        seconds, cpu = min((s, c) for e, s, c in runs if e == engine)
        compared = (
            project[engine]
            .select("answer_id", "detected_language", "repetition", "empty")
            .join(authors, on="answer_id")
            .filter(~pl.col("empty"))
        )
        reliable = compared.filter(~pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES)))
        disagree = reliable.filter(pl.col("detected_language") != pl.col("authors_language"))
        engines.append(
            {
                "langid_engine": engine,
                "processes": surface.PROCESSES,
                "seconds": round(seconds, 2),
                "share_of_authors_time": round(seconds / authors_seconds, 3),
                "cpu_seconds": round(cpu, 2),
                "share_of_authors_cpu": round(cpu / authors_cpu, 3),
                "n_compared": reliable.height,
                "n_disagreements": disagree.height,
                "language_agreement_pct": round(100 * (1 - disagree.height / reliable.height), 2),
                "language_agreement_all_languages_pct": round(
                    100 * (compared["detected_language"] == compared["authors_language"]).mean(), 2
                ),
                "repetition_agreement_pct": round(
                    100 * (compared["repetition"] == compared["authors_repetition"]).mean(), 2
                ),
            }
        )
        if engine == "langid-batch":
            disagreements = (
                disagree.join(models, on="answer_id")
                .select("answer_id", "model", "language", "iso_code", "authors_language", "detected_language")
                .sort("answer_id")
            )
            disagreement_kinds = (
                disagree.group_by("language", "authors_language", "detected_language")
                .len("n_answers")
                .sort(
                    "n_answers",
                    "language",
                    "authors_language",
                    "detected_language",
                    descending=[True, False, False, False],
                )
                .to_dicts()
            )
    results = {
        "n_answers": answers.height,
        "tokenizer": tokenizer,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
        },
        "authors": {
            "language_seconds": round(language_seconds, 2),
            "repetition_seconds": round(repetition_seconds, 2),
            "seconds": round(authors_seconds, 2),
            "cpu_seconds": round(authors_cpu, 2),
            "processes": 1,
        },
        "target_share_of_authors_time": round(1 / 3, 3),
        "engines": engines,
        "disagreements": disagreement_kinds,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "surface.json").write_text(json.dumps(results, indent=2) + "\n")
    (out_dir / "surface.md").write_text(bench_markdown(results) + "\n")
    write_csv_for_people(disagreements, out_dir / "surface_disagreements.csv")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=paths.DATABASE)
    parser.add_argument("--out", type=Path, default=paths.BENCH_RESULTS)
    args = parser.parse_args()
    results = run(args.db, args.out)
    print(bench_markdown(results))


if __name__ == "__main__":
    main()
