"""A small hand-made release folder, laid out like the real one, for edge cases of the ingest and build."""

import csv
import gzip
import json
import shutil
from pathlib import Path

from analysis.core import paths

RATING_HEADER = [
    "annotation_id",
    "annotator",
    "answer",
    "model",
    "factuality",
    "language_correct",
    "omissions",
    "overall-rating",
    "rating",
    "type",
    "question",
    "language",
]


def answer(question: str, language: str, model_name: str, text: str) -> dict:
    if model_name.startswith("Human"):
        name = f"{question}:{model_name.lower()}"
    else:
        name = f"{question}:language.{language.lower()}:{model_name.lower()}"
    return {
        "name": name,
        "language": language,
        "translations": {language: {"language": language, "text": text}},
        "prompting_state": {"model_name": model_name, "model": f"{model_name}-v1"},
    }


def question(name: str, qtype: int, language: str, texts: dict, category: str | None, evaluated=False) -> dict:
    q = {
        "name": name,
        "type": qtype,
        "source": "worker",
        "collector": "Author",
        "language": language,
        "translations": {lang: {"language": lang, "text": t} for lang, t in texts.items()},
        "url": None,
        "human_evaluated": evaluated,
    }
    if category:
        q["category"] = category
    return q


def specific_german() -> dict:
    entries = []
    for i, (text, text_en, category) in enumerate(
        [
            ("Warum sagt man  halb 4?", "Why half past three?", "language, art and literature"),
            ("Was ist Föhn?", "What is Foehn?", "geography, tourism, and climate"),
        ]
    ):
        name = f"german:{i}"
        entries.append(
            {
                "question": question(name, 5, "German", {"German": text, "English": text_en}, category, i == 0),
                "answers": [
                    answer(name, "German", "Human", "Antwort " * (i + 1)),
                    answer(name, "German", "Claude Opus", "Claude sagt etwas."),
                    answer(name, "German", "GPT 4o", ""),
                ],
            }
        )
    return {"entries": entries}


def agnostic(language: str) -> dict:
    texts = {"English": "Why is the sky blue?"}
    if language != "English":
        texts[language] = "Warum ist der Himmel blau?"
    q = question("non_cultural:0", 6, "English", texts, "other" if language == "English" else None)
    return {"entries": [{"question": q, "answers": [answer("non_cultural:0", language, "GPT 4 Turbo", "Weil ...")]}]}


def write_release(folder: Path, gzip_files: bool = True) -> Path:
    """Write the tiny release into `folder` and return it."""
    datasets = folder / "datasets"
    datasets.mkdir(parents=True)
    shutil.copy(paths.LANGUAGES_CSV, folder / "languages.csv")
    with open(folder / "categories-metadata.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Category", "Description", "Example", "Example 2", "Example 3"])
        for category in ("language, art and literature", "geography, tourism, and climate", "other"):
            writer.writerow([category, f"about {category}", "an example", "", ""])
    files = {
        "dataset-specific-german.json": specific_german(),
        "dataset-agnostic-german.json": agnostic("German"),
        "dataset-agnostic-english.json": agnostic("English"),
    }
    for name, content in files.items():
        data = json.dumps(content, ensure_ascii=False).encode("utf-8")
        if gzip_files:
            (datasets / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (datasets / name).write_bytes(data)
    write_ratings(folder, [rating_row()])
    return folder


def rating_row(**changes) -> dict:
    row = {
        "annotation_id": "7",
        "annotator": "3",
        "answer": "Claude sagt etwas.",
        "model": "claude",
        "factuality": "none",
        "language_correct": "yes",
        "omissions": "minor",
        "overall-rating": '[{"rating":4}]',
        "rating": "4",
        "type": "cult",
        "question": "Warum sagt man halb 4?",
        "language": "de",
    }
    row.update(changes)
    return row


def write_ratings(folder: Path, rows: list[dict]) -> None:
    with open(folder / "all_ratings.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=RATING_HEADER)
        writer.writeheader()
        writer.writerows(rows)
