"""The files researchers import (`make import-*`): a new model's answers, per-answer metrics (also
VeriScore's own output), and questions of the public dataset's export.

Each reader reads and validates the whole file, collecting every problem (file, record, field); it is
given what the database already holds (question and answer ids, languages, categories) to check the
file's references against. `analysis.pipeline.imports` applies what they return.

Every import that changed the database is kept beside it (`core.paths.imports_folder`), one numbered
folder per import holding the file as it was imported, and listed in order in `manifest.csv`
(`read_manifest`, `write_manifest`): the database build replays them.
"""

import csv
import io
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from tqdm import tqdm

from ..core import files
from ..core.errors import Problems
from . import ingest, records

MODEL_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes"}, {"0", "false", "no"}
QUESTION_TYPE_WORDS = {"specific": "specific", "culturally specific": "specific", "cultural": "specific",
                       "agnostic": "agnostic", "culturally agnostic": "agnostic", "non-cultural": "agnostic"}


# ------------------------------------------------------------------------------------------ values

def _whole_number(value, path, record, field, problems) -> int | None:
    text = str(value).strip()
    if not re.fullmatch(r"\d+", text):
        problems.add(path, record, field, f"is {value!r}; expected a whole number of 0 or more")
        return None
    return int(text)


def _flag(value, path, record, field, problems) -> bool | None:
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    problems.add(path, record, field, f"is {value!r}; expected one of 1/0, true/false, yes/no")
    return None


# ------------------------------------------------------------------------------------------ answers

ANSWER_COLUMNS = ("question", "language", "model", "answer")
ANSWER_OPTIONAL = ("model_version", "display_name")


def read_answer_file(path: Path, questions: dict[tuple[str, str], int], languages: set[str],
                     problems: Problems) -> pl.DataFrame:
    """Validated answers of a CSV/JSONL file, or of a file in the release's JSON format; `questions` maps
    (upstream name, language) to the question id of every question of the database."""
    if ingest.DATASET_FILE.match(path.name):
        return _release_format_answers(path, questions, languages, problems)
    rows, seen = [], {}
    for record, row in tqdm(records.read_rows(path, ANSWER_COLUMNS, ANSWER_OPTIONAL, problems), desc=f"read {path.name}",
                            unit=" rows", disable=None):
        language, model, question = str(row["language"]), str(row["model"]), str(row["question"])
        ok = True
        if language not in languages:
            problems.add(path, record, "language", f"unknown language {language!r}; expected one of "
                                                   f"{', '.join(sorted(languages))}")
            ok = False
        elif (question, language) not in questions:
            problems.add(path, record, "question", f"no question {question!r} in {language}; expected an upstream "
                                                   "name such as german:0 or non_cultural:3")
            ok = False
        if not MODEL_KEY.match(model):
            problems.add(path, record, "model", f"is {model!r}; a model key is lower-case letters, digits, '.', "
                                                "'-' or '_', e.g. my-model-7b")
            ok = False
        if not isinstance(row["answer"], str):
            problems.add(path, record, "answer", "expected text")
            ok = False
        if not ok:
            continue
        key = (question, language, model)
        if key in seen:
            problems.add(path, record, "question", f"a second answer of {model} to {question} in {language} "
                                                   f"(the first is on {seen[key]})")
            continue
        seen[key] = record
        rows.append({"question_id": questions[question, language], "model": model, "text": row["answer"],
                     "model_version": str(row.get("model_version") or "") or None,
                     "display_name": str(row.get("display_name") or "") or None,
                     "name": f"{question}:language.{language.lower()}:{model}"})
    return pl.DataFrame(rows, schema={"question_id": pl.Int64, "model": pl.String, "text": pl.String,
                                      "model_version": pl.String, "display_name": pl.String, "name": pl.String})


def _release_format_answers(path: Path, questions, languages, problems: Problems) -> pl.DataFrame:
    match = ingest.DATASET_FILE.match(path.name)
    question_type, key = match.group(1), match.group(2)
    language = {name.lower(): name for name in languages}.get(key)
    if language is None:
        problems.add(path, None, None, f"unknown language {key!r} in the file name")
        return pl.DataFrame()
    _, answers = ingest.read_dataset_file(path, question_type, language, problems, new_models=True)
    rows = []
    for answer in answers:
        if answer["is_human"]:
            continue
        qid = questions.get((answer["question_name"], language))
        if qid is None:
            problems.add(path, f"answer {answer['name']}", "name", f"its question is not in the database's {language} questions")
            continue
        rows.append({"question_id": qid, "model": answer["model"], "text": answer["text"],
                     "model_version": answer["model_version"], "display_name": None, "name": answer["name"]})
    return pl.DataFrame(rows, schema={"question_id": pl.Int64, "model": pl.String, "text": pl.String,
                                      "model_version": pl.String, "display_name": pl.String, "name": pl.String})


# ------------------------------------------------------------------------------------------ metrics

METRIC_KEYS = ("answer", "question", "language", "model")
METRIC_VALUES = ("n_claims", "n_supported", "relevant")


def read_metric_file(path: Path, by_name: dict[str, int], by_key: dict[tuple[str, str, str], int],
                     problems: Problems) -> pl.DataFrame:
    """Validated metrics keyed by answer name, or by question, language and model: `by_name` maps the
    upstream name of every model answer, `by_key` its (question name, language, model), to its id."""
    rows, seen = [], {}
    header_checked = False
    for record, row in records.read_rows(path, (), METRIC_KEYS + METRIC_VALUES, problems):
        if not header_checked:
            header_checked = True
            if not _metric_columns_ok(path, record, row, problems):
                return pl.DataFrame()
        if "answer" in row:
            answer_id = by_name.get(str(row["answer"]))
            where = f"no model answer named {row['answer']!r}"
        else:
            answer_id = by_key.get((str(row["question"]), str(row["language"]), str(row["model"])))
            where = f"no answer of {row['model']!r} to {row['question']!r} in {row['language']!r}"
        if answer_id is None:
            problems.add(path, record, "answer" if "answer" in row else "question", where)
            continue
        values = {"answer_id": answer_id, "n_claims": None, "n_supported": None, "relevant": None}
        if "n_claims" in row:
            values["n_claims"] = _whole_number(row["n_claims"], path, record, "n_claims", problems)
            values["n_supported"] = _whole_number(row["n_supported"], path, record, "n_supported", problems)
            if None not in (values["n_claims"], values["n_supported"]) and values["n_supported"] > values["n_claims"]:
                problems.add(path, record, "n_supported", f"is {values['n_supported']}, more than n_claims "
                                                          f"({values['n_claims']})")
        if "relevant" in row:
            values["relevant"] = _flag(row["relevant"], path, record, "relevant", problems)
        if answer_id in seen:
            problems.add(path, record, None, f"metrics for the same answer as {seen[answer_id]}")
            continue
        seen[answer_id] = record
        rows.append(values)
    return pl.DataFrame(rows, schema={"answer_id": pl.Int64, "n_claims": pl.Int32, "n_supported": pl.Int32,
                                      "relevant": pl.Boolean})


def _metric_columns_ok(path: Path, record: str, row: dict, problems: Problems) -> bool:
    columns = set(row)
    keyed = "answer" in columns or {"question", "language", "model"} <= columns
    has_fact = {"n_claims", "n_supported"} <= columns
    if not keyed or not (has_fact or "relevant" in columns) or (("n_claims" in columns) != ("n_supported" in columns)):
        problems.add(path, record, None,
                     "expected a key (`answer`, or `question`, `language` and `model`) and metrics "
                     "(`n_claims` with `n_supported`, and/or `relevant`); found " + ", ".join(sorted(columns)))
        return False
    return True


def read_veriscore(claims: Path, verification: Path, by_name: dict[str, int], problems: Problems) -> pl.DataFrame:
    """VeriScore's own output: its claims (or evidence) file and its verification file, line by line.

    Each line of the claims file carries `prompt_source` (which must be the upstream answer name),
    `abstained` and `all_claims`; the matching line of the verification file maps each claim to
    `{"verification_result": ...}`. n_claims is the number of distinct claims (0 when VeriScore found
    "No verifiable claim." or the answer abstained); n_supported counts those verified `supported`.
    """
    claim_rows = list(records.read_rows(claims, ("prompt_source", "abstained"), None, problems))
    verified = [row for _, row in records.read_rows(verification, (), None, problems)]
    rows, seen = [], {}
    for index, (record, row) in enumerate(claim_rows):
        answer_id = by_name.get(str(row["prompt_source"]))
        if answer_id is None:
            problems.add(claims, record, "prompt_source", f"no model answer named {row['prompt_source']!r}; "
                                                          "set prompt_source to the upstream answer name")
            continue
        all_claims = [] if row["abstained"] else row.get("all_claims") or []
        all_claims = [c for c in dict.fromkeys(all_claims) if c != "No verifiable claim."]
        if all_claims:
            if index >= len(verified):
                problems.add(verification, f"line {index + 1}", None, "missing: the verification file is shorter "
                                                                      "than the claims file")
                continue
            results = verified[index]
            n_supported = sum(1 for c in all_claims
                              if isinstance(results.get(c), dict) and results[c].get("verification_result") == "supported")
        else:
            n_supported = 0
        if answer_id in seen:
            problems.add(claims, record, "prompt_source", f"the same answer as {seen[answer_id]}")
            continue
        seen[answer_id] = record
        rows.append({"answer_id": answer_id, "n_claims": len(all_claims), "n_supported": n_supported, "relevant": None})
    return pl.DataFrame(rows, schema={"answer_id": pl.Int64, "n_claims": pl.Int32, "n_supported": pl.Int32,
                                      "relevant": pl.Boolean})


# ---------------------------------------------------------------------------------------- questions

QUESTION_COLUMNS = ("language", "question_type", "question")
QUESTION_OPTIONAL = ("question_english", "answer", "collection", "category", "source", "url")


def read_question_file(path: Path, languages: set[str], categories: set[str], problems: Problems) -> pl.DataFrame:
    """Validated questions of an export of the public dataset (one row per question and language)."""
    rows, seen = [], {}
    for record, row in tqdm(records.read_rows(path, QUESTION_COLUMNS, QUESTION_OPTIONAL, problems), desc=f"read {path.name}",
                            unit=" rows", disable=None):
        language = str(row["language"]).strip()
        qtype = QUESTION_TYPE_WORDS.get(str(row["question_type"]).strip().lower())
        collection = str(row.get("collection") or "auto").strip().lower()
        category = str(row.get("category") or "").strip() or None
        ok = True
        if language not in languages:
            problems.add(path, record, "language", f"unknown language {language!r}; expected one of "
                                                   f"{', '.join(sorted(languages))}")
            ok = False
        if qtype is None:
            problems.add(path, record, "question_type", f"is {row['question_type']!r}; expected specific or agnostic")
            ok = False
        if collection not in ("human", "auto"):
            problems.add(path, record, "collection", f"is {row['collection']!r}; expected human or auto")
            ok = False
        if category is not None and category not in categories:
            problems.add(path, record, "category", f"unknown category {category!r}")
            ok = False
        text = str(row["question"])
        if not text.strip():
            problems.add(path, record, "question", "is empty")
            ok = False
        if not ok:
            continue
        key = (language, qtype, ingest.normalise_whitespace(text))
        if key in seen:
            problems.add(path, record, "question", f"the same question as {seen[key]}")
            continue
        seen[key] = record
        rows.append({"language": language, "question_type": qtype, "collection": collection, "text": text,
                     "text_en": str(row.get("question_english") or "") or None, "category": category,
                     "answer": str(row.get("answer") or "") or None, "source": str(row.get("source") or "") or None,
                     "url": str(row.get("url") or "") or None, "normalised": key[2]})
    return pl.DataFrame(rows, schema={c: pl.String for c in ("language", "question_type", "collection", "text",
                                                              "text_en", "category", "answer", "source", "url",
                                                              "normalised")})


# ---------------------------------------------------------------------------------- kept imports

KINDS = ("answers", "metrics", "questions")
MANIFEST = "manifest.csv"
MANIFEST_COLUMNS = ("position", "kind", "file", "sha256", "verification", "verification_sha256")


@dataclass(frozen=True)
class KeptImport:
    """One import kept beside the database: `folder/<position>/<file>` (and VeriScore's verification file)."""

    folder: Path
    position: int
    kind: str
    file: str
    sha256: str
    verification: str | None = None
    verification_sha256: str | None = None

    @property
    def path(self) -> Path:
        return self.folder / f"{self.position:04d}" / self.file

    @property
    def verification_path(self) -> Path | None:
        return self.folder / f"{self.position:04d}" / self.verification if self.verification else None

    def row(self) -> dict:
        return {"position": self.position, "kind": self.kind, "file": self.file, "sha256": self.sha256,
                "verification": self.verification or "", "verification_sha256": self.verification_sha256 or ""}


def read_manifest(folder: Path, problems: Problems) -> list[KeptImport]:
    """The kept imports of `folder`, in order, each checked to be there with the content it was kept with;
    none when the folder has no manifest."""
    path = folder / MANIFEST
    if not path.is_file():
        return []
    kept = []
    for record, row in records.read_rows(path, MANIFEST_COLUMNS, (), problems):
        if row["kind"] not in KINDS or not row["position"].isdigit():
            problems.add(path, record, "kind" if row["kind"] not in KINDS else "position",
                         f"is {row['kind'] if row['kind'] not in KINDS else row['position']!r}; "
                         f"expected one of {', '.join(KINDS)} and a whole number")
            continue
        entry = KeptImport(folder, int(row["position"]), row["kind"], row["file"], row["sha256"],
                           row["verification"] or None, row["verification_sha256"] or None)
        for kept_file, expected in ((entry.path, entry.sha256), (entry.verification_path, entry.verification_sha256)):
            if kept_file is None:
                continue
            if not kept_file.is_file():
                problems.add(path, record, "file", f"the kept file {kept_file} is missing")
            elif files.sha256(kept_file) != expected:
                problems.add(path, record, "sha256", f"the kept file {kept_file} has changed since it was imported")
        kept.append(entry)
    positions = [k.position for k in kept]
    if positions != sorted(set(positions)):
        problems.add(path, None, "position", f"positions {positions} are not increasing")
    return kept


def write_manifest(folder: Path, kept: list[KeptImport]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(k.row() for k in kept)
    files.write_text(folder / MANIFEST, buffer.getvalue())


def keep(folder: Path, kind: str, path: Path, verification: Path | None = None) -> KeptImport:
    """Copy an imported file (and its verification file) into the next numbered folder of `folder` and
    add it to the manifest. The copies are checked against the originals' checksums."""
    problems = Problems()
    kept = read_manifest(folder, problems)
    problems.raise_if_any()
    entry = KeptImport(folder, max((k.position for k in kept), default=0) + 1, kind, path.name, files.sha256(path),
                       verification.name if verification else None,
                       files.sha256(verification) if verification else None)
    with files.atomic_folder(entry.path.parent) as tmp:
        for source in (path, verification):
            if source is not None:
                shutil.copyfile(source, tmp / source.name)
    write_manifest(folder, [*kept, entry])
    return entry
