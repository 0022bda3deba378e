"""Bring your own results: a new model's answers, per-answer metrics, and questions of the public dataset.

Every import reads and validates the whole file first, collecting every problem (file, row, field),
and writes nothing when there is one; it then applies the file to a copy of the database that replaces
the original only on success (`db.modify`). Imports are idempotent: a row that is already in the
database as the file says is left alone, so importing the same file twice changes nothing.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl
from tqdm import tqdm

from . import db, ingest, records
from .errors import Problems

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


def _question_ids(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], int]:
    return {(name, language): qid for qid, name, language in
            con.execute("SELECT question_id, name, language FROM questions").fetchall()}


def _languages(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in con.execute("SELECT language FROM languages").fetchall()}


# ------------------------------------------------------------------------------------------ answers

@dataclass
class ImportSummary:
    file: Path
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    what: str = "rows"
    detail: str = ""

    def __str__(self) -> str:
        return (f"{self.file}: {self.added:,} {self.what} added, {self.changed:,} changed, "
                f"{self.unchanged:,} already there{self.detail}")


ANSWER_COLUMNS = ("question", "language", "model", "answer")
ANSWER_OPTIONAL = ("model_version", "display_name")


def read_answer_file(path: Path, con: duckdb.DuckDBPyConnection, problems: Problems) -> pl.DataFrame:
    """Validated answers of a CSV/JSONL file, or of a file in the release's JSON format."""
    questions, languages = _question_ids(con), _languages(con)
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


def import_answers(path: Path | str, db_path: Path | str) -> ImportSummary:
    """Add a model's answers; surface verdicts are computed for the answers that are new or changed."""
    path = Path(path)
    problems = Problems()
    with db.connect(db_path) as con:
        incoming = read_answer_file(path, con, problems)
    problems.raise_if_any()
    summary = ImportSummary(path, what="answers")
    with db.modify(db_path) as con:
        con.register("incoming", incoming.to_arrow())
        con.execute("""
            CREATE TEMP TABLE matched AS
            SELECT i.*, a.answer_id, a.text AS old_text
            FROM incoming i LEFT JOIN answers a
              ON a.question_id = i.question_id AND a.model = i.model AND NOT a.is_human
        """)
        summary.unchanged = con.execute("SELECT count(*) FROM matched WHERE old_text = text").fetchall()[0][0]
        con.execute("""
            INSERT INTO models (model, display_name, version)
            SELECT model, coalesce(any_value(display_name), model), string_agg(DISTINCT model_version, ', ')
            FROM incoming WHERE model NOT IN (SELECT model FROM models) GROUP BY model
        """)
        changed = con.execute("""
            UPDATE answers SET text = m.text, n_bytes = strlen(m.text), model_version = m.model_version
            FROM matched m WHERE answers.answer_id = m.answer_id AND m.old_text IS DISTINCT FROM m.text
            RETURNING answers.answer_id
        """).fetchall()
        summary.changed = len(changed)
        added = con.execute("""
            INSERT INTO answers
            SELECT (SELECT coalesce(max(answer_id), 0) FROM answers)
                       + row_number() OVER (ORDER BY m.question_id, m.name) AS answer_id,
                   m.question_id, m.name, m.model, m.model_version, FALSE, FALSE, q.language, m.text, NULL,
                   strlen(m.text)
            FROM matched m JOIN questions q USING (question_id)
            WHERE m.answer_id IS NULL
            RETURNING answer_id
        """).fetchall()
        summary.added = len(added)
        con.unregister("incoming")
        refresh_surface(con, [r[0] for r in changed + added])
    summary.detail = f"; models: {', '.join(sorted(incoming['model'].unique()))}"
    return summary


def refresh_surface(con: duckdb.DuckDBPyConnection, answer_ids: list[int]) -> None:
    """Surface verdicts, and the language verdicts for all 23 languages, for the given answers only (new
    or changed by an import)."""
    if not answer_ids:
        return
    from . import language_id_all, surface

    verdicts = surface.answer_verdicts(con, answer_ids)
    con.execute("DELETE FROM answer_surface WHERE answer_id IN (SELECT unnest(?))", [answer_ids])
    con.register("verdicts", verdicts.to_arrow())
    con.execute("INSERT INTO answer_surface SELECT * FROM verdicts")
    con.unregister("verdicts")
    language_id_all.refresh(con, answer_ids)


# ------------------------------------------------------------------------------------------ metrics

METRIC_KEYS = ("answer", "question", "language", "model")
METRIC_VALUES = ("n_claims", "n_supported", "relevant")


def read_metric_file(path: Path, con: duckdb.DuckDBPyConnection, problems: Problems) -> pl.DataFrame:
    """Validated metrics keyed by answer name, or by question, language and model."""
    by_name = dict(con.execute("SELECT name, answer_id FROM answers WHERE NOT is_human").fetchall())
    by_key = {(name, language, model): aid for aid, name, language, model in con.execute(
        "SELECT a.answer_id, q.name, q.language, a.model FROM answers a JOIN questions q USING (question_id) "
        "WHERE NOT a.is_human").fetchall()}
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


def read_veriscore(claims: Path, verification: Path, con: duckdb.DuckDBPyConnection, problems: Problems) -> pl.DataFrame:
    """VeriScore's own output: its claims (or evidence) file and its verification file, line by line.

    Each line of the claims file carries `prompt_source` (which must be the upstream answer name),
    `abstained` and `all_claims`; the matching line of the verification file maps each claim to
    `{"verification_result": ...}`. n_claims is the number of distinct claims (0 when VeriScore found
    "No verifiable claim." or the answer abstained); n_supported counts those verified `supported`.
    """
    by_name = dict(con.execute("SELECT name, answer_id FROM answers WHERE NOT is_human").fetchall())
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


def import_metrics(path: Path | str, db_path: Path | str, verification: Path | str | None = None) -> ImportSummary:
    """Add per-answer metrics; a metric the file does not give keeps its current value."""
    path = Path(path)
    problems = Problems()
    with db.connect(db_path) as con:
        incoming = (read_veriscore(path, Path(verification), con, problems) if verification
                    else read_metric_file(path, con, problems))
    problems.raise_if_any()
    summary = ImportSummary(path, what="answers' metrics")
    with db.modify(db_path) as con:
        con.register("incoming", incoming.to_arrow())
        counts = con.execute("""
            SELECT count(*) FILTER (WHERE m.answer_id IS NULL),
                   count(*) FILTER (WHERE m.answer_id IS NOT NULL AND (
                       (i.n_claims IS NOT NULL AND (i.n_claims IS DISTINCT FROM m.n_claims
                                                    OR i.n_supported IS DISTINCT FROM m.n_supported))
                       OR (i.relevant IS NOT NULL AND i.relevant IS DISTINCT FROM m.relevant)))
            FROM incoming i LEFT JOIN answer_metrics m USING (answer_id)
        """).fetchall()[0]
        summary.added, summary.changed = counts
        summary.unchanged = incoming.height - summary.added - summary.changed
        con.execute("""
            INSERT INTO answer_metrics
            SELECT answer_id, n_claims, n_supported, relevant, ? FROM incoming
            ON CONFLICT (answer_id) DO UPDATE SET
                n_claims = coalesce(excluded.n_claims, answer_metrics.n_claims),
                n_supported = CASE WHEN excluded.n_claims IS NULL THEN answer_metrics.n_supported
                                   ELSE excluded.n_supported END,
                relevant = coalesce(excluded.relevant, answer_metrics.relevant),
                source = CASE WHEN excluded.n_claims IS NULL AND excluded.relevant IS NULL THEN answer_metrics.source
                              ELSE excluded.source END
        """, [path.name])
        con.unregister("incoming")
    return summary


# ---------------------------------------------------------------------------------------- questions

QUESTION_COLUMNS = ("language", "question_type", "question")
QUESTION_OPTIONAL = ("question_english", "answer", "collection", "category", "source", "url")


def read_question_file(path: Path, con: duckdb.DuckDBPyConnection, problems: Problems) -> pl.DataFrame:
    """Validated questions of an export of the public dataset (one row per question and language)."""
    languages = _languages(con)
    categories = {r[0] for r in con.execute("SELECT category FROM categories").fetchall()}
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


def import_questions(path: Path | str, db_path: Path | str) -> ImportSummary:
    """Add questions (auto-collected unless the file's `collection` says otherwise) with their reference answers.

    A question already in the database (same language, type and whitespace-normalised text) is left alone.
    New ones are named `<collection>:<language>:<n>`.
    """
    path = Path(path)
    problems = Problems()
    with db.connect(db_path) as con:
        incoming = read_question_file(path, con, problems)
    problems.raise_if_any()
    summary = ImportSummary(path, what="questions")
    with db.modify(db_path) as con:
        con.create_function("normalise_whitespace", ingest.normalise_whitespace, [str], str)
        con.register("incoming", incoming.to_arrow())
        con.execute("""
            CREATE TEMP TABLE new_questions AS
            SELECT i.*,
                   (SELECT coalesce(max(question_id), 0) FROM questions)
                       + row_number() OVER (ORDER BY i.language, i.question_type, i.normalised) AS question_id
            FROM incoming i
            ANTI JOIN (SELECT language, question_type, normalise_whitespace(text) AS normalised FROM questions) q
                USING (language, question_type, normalised)
        """)
        con.execute("""
            INSERT INTO questions
            SELECT n.question_id,
                   n.collection || ':' || lower(n.language) || ':' ||
                       (coalesce((SELECT count(*) FROM questions q
                                  WHERE q.language = n.language AND q.name LIKE n.collection || ':%'), 0)
                        + row_number() OVER (PARTITION BY n.language, n.collection ORDER BY n.question_id) - 1),
                   n.language, n.question_type, n.collection, n.source, NULL, n.category, n.text,
                   coalesce(n.text_en, CASE WHEN n.language = 'English' THEN n.text END),
                   strlen(n.text), FALSE, NULL, n.url
            FROM new_questions n
        """)
        con.execute("""
            INSERT INTO answers
            SELECT (SELECT coalesce(max(answer_id), 0) FROM answers)
                       + row_number() OVER (ORDER BY n.question_id) AS answer_id,
                   n.question_id, q.name || ':human', NULL, NULL, TRUE, FALSE, n.language, n.answer, NULL,
                   strlen(n.answer)
            FROM new_questions n JOIN questions q USING (question_id)
            WHERE n.answer IS NOT NULL
        """)
        summary.added = con.execute("SELECT count(*) FROM new_questions").fetchall()[0][0]
        summary.unchanged = incoming.height - summary.added
        con.unregister("incoming")
    return summary
