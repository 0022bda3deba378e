"""A generated study of short answers in close-language pairs (issue 35), and the Universal Declaration it
must be built with: its answers are held-out text the study's engine never learns.

`write` copies the udhr package without the held-out articles of the study's languages (the first fold of
the short-text evaluation's split, `pipeline.short_text`) and writes a study folder whose every answer is a
piece of those articles, in the question's language, of 20 to 200 characters, starting at a sentence as an
answer does. The routing's margins were calibrated on every fold, these articles included; the evaluation's
own numbers are the held-out ones (each fold's margins from the others)."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import polars as pl

from analysis.io import udhr
from analysis.pipeline import short_text

PAIRS = (("es", "gl"), ("en", "sco"), ("cs", "sk"), ("ms", "id"), ("da", "nb"), ("hi", "ur"), ("hr", "bs"))
LENGTHS = (20, 30, 45, 60, 80, 100, 140, 200)
MODELS = ("model-a", "model-b")
QUESTIONS = 40
HELD_OUT_FOLD = 0


def held_out_articles(udhr_folder: Path) -> set[int]:
    articles = sorted(udhr.paragraphs(["en"], udhr_folder)["article"].unique().to_list())
    folds = short_text._fold_of(articles)
    return {a for a, fold in folds.items() if fold == HELD_OUT_FOLD}


def _without_articles(html: str, articles: set[int]) -> str:
    for number in articles:
        html = re.sub(rf'<article data-number="{number}">.*?</article>', "", html, flags=re.S)
    return html


def write(root: Path, udhr_folder: Path) -> tuple[Path, Path]:
    """The study folder and the udhr package to build it with (both under `root`)."""
    codes = sorted({c for pair in PAIRS for c in pair})
    held_out = held_out_articles(udhr_folder)
    package = shutil.copytree(udhr_folder, root / "udhr")
    paragraphs = udhr.paragraphs(codes, udhr_folder)
    usual = paragraphs["bcp47"].map_elements(short_text.in_usual_script, return_dtype=pl.Boolean)
    for declaration in paragraphs["declaration"].unique().to_list():
        path = package / "declaration" / f"{declaration}.html"
        path.write_text(_without_articles(path.read_text(encoding="utf-8"), held_out), encoding="utf-8")
    test = paragraphs.filter(pl.col("article").is_in(sorted(held_out)) & usual)
    folder = root / "study"
    folder.mkdir()
    (folder / "study.toml").write_text(
        'name = "close-pairs"\ntitle = "Short answers in close-language pairs"\n', encoding="utf-8"
    )
    questions, answers = [], []
    for code in codes:
        texts = _answers(test.filter(pl.col("language") == code))
        for q in range(QUESTIONS):
            key = f"{code}-{q:03d}"
            questions.append([key, code, f"{code} question {q}"])
            for m, model in enumerate(MODELS):
                answers.append([key, model, texts[(2 * q + m) % len(texts)]])
    _write_csv(folder / "questions.csv", ["question_id", "language", "question"], questions)
    _write_csv(folder / "answers.csv", ["question_id", "model", "answer"], answers)
    return folder, package


def _answers(paragraphs: pl.DataFrame) -> list[str]:
    """Short answers cut from the held-out articles: at each sentence, a piece of the next length of
    `LENGTHS` in turn, ending at a word where one ends in its last third."""
    found = []
    for text in paragraphs.sort("declaration", "paragraph")["text"].to_list():
        for start in short_text.sentence_starts(text):
            chars = LENGTHS[len(found) % len(LENGTHS)]
            piece = text[start : start + chars]
            cut = piece.rfind(" ")
            if len(piece) == chars and cut > 2 * chars // 3:
                piece = piece[:cut]
            if len(piece.strip()) >= 15:
                found.append(piece.strip())
    if not found:
        raise ValueError("no held-out text")
    return found


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
