"""Another version of the release, made from the real snapshot by holding rows back: the human ratings cut
to 228 (Fijian's all, and 12 of Kirundi's) and 15 of Tswana's 65 culturally specific questions (with
their answers). Reports built from it must state its numbers, never the pinned release's."""

import csv
import gzip
import io
import json
import shutil
from pathlib import Path

RATINGS = "all_ratings.csv"
TSWANA = "datasets/dataset-specific-tswana.json.gz"
# What is held back, and what the held-back release then holds.
DROPPED_RATINGS_LANGUAGE = "fi"  # Fijian, as the annotation tool codes it
KIRUNDI_RATINGS_DROPPED = 12
TSWANA_QUESTIONS_KEPT = 50
RATINGS_KEPT = 228
KIRUNDI_RATINGS_KEPT = 48


def write_held_back_release(snapshot: Path, dest: Path) -> Path:
    """A copy of the release folder `snapshot` in `dest` with rows held back (see the module's docstring)."""
    shutil.copytree(snapshot, dest, ignore=shutil.ignore_patterns(".*"))
    text = (snapshot / RATINGS).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    kirundi = [i for i, row in enumerate(rows) if row["language"] == "rn"]
    dropped = set(kirundi[:KIRUNDI_RATINGS_DROPPED])
    kept = [row for i, row in enumerate(rows) if row["language"] != DROPPED_RATINGS_LANGUAGE and i not in dropped]
    assert len(kept) == RATINGS_KEPT
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(kept)
    (dest / RATINGS).write_text(out.getvalue(), encoding="utf-8")
    with gzip.open(snapshot / TSWANA, "rt", encoding="utf-8") as handle:
        dataset = json.load(handle)
    dataset["entries"] = dataset["entries"][:TSWANA_QUESTIONS_KEPT]
    with gzip.open(dest / TSWANA, "wt", encoding="utf-8") as handle:
        json.dump(dataset, handle, ensure_ascii=False)
    return dest
