"""A synthetic release at a multiple of the snapshot, for measuring how the pipeline scales.

Copy 0 is the snapshot itself (so the ratings still link); every further copy replicates each
question with a fresh name and each of its answers, with the text lightly perturbed (words rotated and
the copy number added) so that no stage can reuse work done on another copy. The files keep the
release's layout, one file per question type and language, written one at a time in bounded memory.
"""

import json
import shutil
from pathlib import Path

from tqdm import tqdm

from ..core.errors import Problems
from ..io import ingest, release


def perturb(text: str, copy: int) -> str:
    if copy == 0 or not text:
        return text
    words = text.split(" ")
    shift = copy % len(words)
    return " ".join(words[shift:] + words[:shift]) + f" ({copy})"


def _renamed(name: str, copy: int, offset: int) -> str:
    prefix, _, index = name.rpartition(":")
    return f"{prefix}:{int(index) + copy * offset}"


def write_release(source: Path, dest: Path, multiple: int) -> Path:
    """Write a release `multiple` times the size of `source` into `dest` (plain JSON files)."""
    if multiple < 1:
        raise ValueError("the multiple must be 1 or more")
    source, dest = Path(source), Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "datasets").mkdir(parents=True)
    for name in ("languages.csv", "categories-metadata.csv", "all_ratings.csv"):
        shutil.copyfile(source / name, dest / name)
    files = ingest.dataset_files(source, Problems())
    for path, question_type, key in tqdm(files, desc=f"synthetic release x{multiple}", unit="file", disable=None):
        with release.open_uncompressed(path) as fh:
            entries = json.load(fh)["entries"]
        # Agnostic names must stay aligned across languages, so they shift by the number of ELI5 questions.
        offset = max(ingest.question_index(e["question"]["name"]) for e in entries) + 1
        with open(dest / "datasets" / f"dataset-{question_type}-{key}.json", "w", encoding="utf-8") as out:
            out.write('{"entries": [')
            first = True
            for copy in range(multiple):
                for entry in entries:
                    out.write(("" if first else ",") + json.dumps(_copy_entry(entry, copy, offset), ensure_ascii=False))
                    first = False
            out.write("]}")
    return dest


def _copy_entry(entry: dict, copy: int, offset: int) -> dict:
    if copy == 0:
        return entry
    question = dict(entry["question"])
    old_name = question["name"]
    question["name"] = _renamed(old_name, copy, offset)
    question["human_evaluated"] = False
    question["translations"] = {
        lang: {**t, "text": perturb(t["text"], copy)} for lang, t in question["translations"].items()
    }
    answers = []
    for answer in entry["answers"]:
        answers.append(
            {
                **answer,
                "name": question["name"] + answer["name"][len(old_name) :],
                "translations": {
                    lang: {**t, "text": perturb(t["text"], copy)} for lang, t in answer["translations"].items()
                },
            }
        )
    return {**entry, "question": question, "answers": answers}
