"""The NativQA paper's tables (arXiv 2407.09823 v3) as transcribed in data/nativqa: one value a row,
without the rows and columns the paper derives (averages, totals), which analyses/nativqa.py computes.

`read_folder` validates every file and returns its rows as polars frames, or raises one `InputError`
naming the file, line and field of every problem (docs/methods.md, section 07).
"""

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..core import paths
from ..core.errors import Problems
from . import records
from .release import source_checksums

FOLDER = paths.NATIVQA

RESOURCE_LEVELS = ("high", "medium", "low", "extremely_low")
SPLITS = ("train", "dev", "test")
SETTINGS = ("zero-shot", "fine-tuning")
# The model Table 3 fine-tunes, and the name the CSV gives its fine-tuned version.
BASE_MODEL = "Llama-3.1-8B-Instruct"
FINE_TUNED_MODEL = "Llama-3.1-8B-Instruct-FT"


@dataclass(frozen=True)
class Metric:
    metric: str
    display_name: str
    low: float
    high: float
    decimals: int  # as the paper prints the metric


METRICS = (
    Metric("bertscore_f1", "BERTScore F1", 0.0, 1.0, 3),
    Metric("bleu", "BLEU", 0.0, 1.0, 3),
    Metric("rouge1", "ROUGE-1", 0.0, 1.0, 3),
    Metric("gpt4o_judge_1to10", "GPT-4o judge (1-10)", 1.0, 10.0, 2),
    Metric("human_accuracy_1to5", "human accuracy (1-5)", 1.0, 5.0, 2),
    Metric("human_usefulness_1to5", "human usefulness (1-5)", 1.0, 5.0, 2),
)
METRIC_BY_NAME = {m.metric: m for m in METRICS}
# The metrics each model gets on every region: Table 2's three and Table 4's judge.
ZERO_SHOT_METRICS = ("bertscore_f1", "bleu", "rouge1", "gpt4o_judge_1to10")
REFERENCE_METRICS = ("bertscore_f1", "bleu", "rouge1")
HUMAN_METRICS = ("human_accuracy_1to5", "human_usefulness_1to5")

# Result file -> the paper table it transcribes.
RESULT_FILES = {
    "table2_zero_shot.csv": 2,
    "table3_fine_tuned.csv": 3,
    "table4_llm_judge.csv": 4,
    "table5_human_eval.csv": 5,
}
REGIONS_FILE = "regions.csv"
DATASET_FILE = "table1_dataset.csv"
EDIT_DISTANCE_FILE = "table24_answer_edit_distance.csv"
LENGTHS_FILE = "table18_lengths.csv"
ADDITIONAL_FILE = "table23_additional_pairs.csv"
# Lists the paper's prose gives, transcribed so that the counts it prints of them can be computed.
TOPICS_FILE = "section3_topics.csv"
DOMAINS_FILE = "section4_domain_reliability.csv"
MODELS_FILE = "section5_models.csv"
# Section 4.2.1: of the domains checked, those judged very reliable were kept and the rest eliminated.
DOMAIN_OUTCOMES = ("checked", "very_reliable", "eliminated")
WEIGHTS = ("open", "closed")

# The columns of each CSV (the results files share theirs).
REGION_COLUMNS = ("region", "language", "iso_code", "city", "resource_level")
RESULT_COLUMNS = ("model", "region", "metric", "value", "setting")
DATASET_COLUMNS = ("region", "city", "seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated")
EDIT_DISTANCE_COLUMNS = ("region", "split", "normalized_levenshtein")
LENGTH_COLUMNS = ("region", "question_words_avg", "answer_words_avg")
ADDITIONAL_COLUMNS = ("language", "location", "qa_pairs")
TOPIC_COLUMNS = ("topic",)
DOMAIN_COLUMNS = ("outcome", "domains")
MODEL_COLUMNS = ("model", "weights")


# ---------------------------------------------------------------- loading


class _Reader:
    """Reads the CSVs of one folder (through `io.records`), recording every problem with its file, line and field."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.problems = Problems()

    def rows(self, name: str, columns: tuple[str, ...]) -> list[tuple[str, dict]]:
        """(line, row) for each data row of `name`, values stripped; empty when the file or a column is missing."""
        path = self.folder / name
        if not path.is_file() and not path.is_dir():
            self.problems.add(path, None, None, "file not found")
            return []
        found = len(self.problems.items)
        rows = [
            (line, {k: v.strip() for k, v in row.items()})
            for line, row in records.read_rows(path, columns, None, self.problems)
        ]
        if not rows and len(self.problems.items) == found:
            self.problems.add(path, None, None, "no data rows")
        return rows

    def number(
        self,
        name: str,
        line: str,
        field: str,
        text: str,
        kind: type = float,
        optional: bool = False,
        low: float = 0.0,
        high: float = math.inf,
    ):
        """A finite number from `low` to `high` (a count: a whole number); `optional`: empty gives None."""
        if text == "" and optional:
            return None
        path = self.folder / name
        if kind is int:
            return records.whole_number(text, path, line, field, self.problems)
        value = records.decimal(text)
        if value is None:
            what = (
                "a finite number"
                if records.DECIMAL.fullmatch(text)
                else "a number (ASCII digits, a point, an exponent)"
            )
            self.problems.add(path, line, field, f"{text!r} is not {what}")
            return None
        if not low <= value <= high:
            self.problems.add(path, line, field, f"{value} is outside the range {low:g} to {high:g}")
            return None
        return value

    def choice(self, name: str, line: str, field: str, text: str, allowed) -> str | None:
        if text not in allowed:
            self.problems.add(
                self.folder / name, line, field, f"unknown {field} {text!r}; expected one of {sorted(allowed)}"
            )
            return None
        return text

    def unique(self, located_keys: list[tuple[str, str, tuple]], what: str) -> None:
        """Report every (file, line, key) whose key was already seen, naming where it was first."""
        first: dict[tuple, tuple[str, str]] = {}  # key -> (file, line) where it was first seen
        for name, line, key in located_keys:
            if key in first:
                first_name, first_line = first[key]
                self.problems.add(
                    self.folder / name, line, None, f"duplicate {what} {key} (first in {first_name} {first_line})"
                )
            else:
                first[key] = (name, line)


def read_folder(folder: Path | str = FOLDER) -> dict[str, pl.DataFrame]:
    """The rows of every file, keyed by what they hold (`regions`, `results`, `dataset`,
    `edit_distance`, `lengths`, `additional_pairs`, `topics`, `domain_reliability`, `models`) and
    `source_files` (the files read, with their checksums); raises InputError listing all problems of all
    files."""
    reader = _Reader(Path(folder))
    regions = _read_regions(reader)
    known = set(regions["region"]) if regions is not None else set()
    frames = {
        "results": _read_results(reader, known),
        "dataset": _read_dataset(reader, known, regions),
        "edit_distance": _read_edit_distance(reader, known),
        "lengths": _read_lengths(reader, known),
        "additional_pairs": _read_additional(reader),
        "topics": _read_topics(reader),
        "domain_reliability": _read_domains(reader),
    }
    frames["models"] = _read_models(reader, frames["results"])
    reader.problems.raise_if_any()
    assert regions is not None  # a regions file without rows is a problem, raised above
    frames["regions"] = regions
    names = [
        REGIONS_FILE,
        *RESULT_FILES,
        DATASET_FILE,
        EDIT_DISTANCE_FILE,
        LENGTHS_FILE,
        ADDITIONAL_FILE,
        TOPICS_FILE,
        DOMAINS_FILE,
        MODELS_FILE,
    ]
    frames["source_files"] = source_checksums(Path(folder)).filter(pl.col("file").is_in(names)).sort("file")
    return frames


def _read_regions(reader: _Reader) -> pl.DataFrame | None:
    rows = reader.rows(REGIONS_FILE, REGION_COLUMNS)
    for line, row in rows:
        reader.choice(REGIONS_FILE, line, "resource_level", row["resource_level"], RESOURCE_LEVELS)
        for field in REGION_COLUMNS:
            if row[field] == "":
                reader.problems.add(reader.folder / REGIONS_FILE, line, field, "empty")
    reader.unique([(REGIONS_FILE, line, (row["region"],)) for line, row in rows], "region")
    if not rows:
        return None
    return pl.DataFrame([row for _, row in rows], schema=dict.fromkeys(REGION_COLUMNS, pl.String)).sort("region")


def _read_results(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records, keys = [], []
    for name, paper_table in RESULT_FILES.items():
        for line, row in reader.rows(name, RESULT_COLUMNS):
            where = line
            region = reader.choice(name, line, "region", row["region"], known_regions)
            metric = reader.choice(name, line, "metric", row["metric"], METRIC_BY_NAME)
            setting = reader.choice(name, line, "setting", row["setting"], SETTINGS)
            spec = METRIC_BY_NAME.get(metric) if metric is not None else None
            value = reader.number(
                name,
                line,
                "value",
                row["value"],
                low=spec.low if spec else -math.inf,
                high=spec.high if spec else math.inf,
            )
            if row["model"] == "":
                reader.problems.add(reader.folder / name, where, "model", "empty")
            # The key spans the four files: the same score must not be published twice.
            keys.append((name, line, (row["model"], row["region"], row["metric"], row["setting"])))
            records.append(
                {
                    "model": row["model"],
                    "region": region,
                    "metric": metric,
                    "value": value,
                    "setting": setting,
                    "paper_table": paper_table,
                }
            )
    reader.unique(keys, "model, region, metric, setting")
    schema = {
        "model": pl.String,
        "region": pl.String,
        "metric": pl.String,
        "value": pl.Float64,
        "setting": pl.String,
        "paper_table": pl.Int8,
    }
    return pl.DataFrame(records, schema=schema)


def _read_dataset(reader: _Reader, known_regions: set[str], regions: pl.DataFrame | None) -> pl.DataFrame:
    count_columns = DATASET_COLUMNS[2:]
    city_of = dict(regions.select("region", "city").iter_rows()) if regions is not None else {}
    records = []
    rows = reader.rows(DATASET_FILE, DATASET_COLUMNS)
    for line, row in rows:
        where = line
        region = reader.choice(DATASET_FILE, line, "region", row["region"], known_regions)
        if region is not None and row["city"] != city_of[region]:
            reader.problems.add(
                reader.folder / DATASET_FILE,
                where,
                "city",
                f"{row['city']!r} differs from {city_of[region]!r} in {REGIONS_FILE}",
            )
        counts = {
            c: reader.number(DATASET_FILE, line, c, row[c], int, optional=c in ("train", "dev")) for c in count_columns
        }
        splits = sum(counts[s] or 0 for s in SPLITS)
        if counts["total_annotated"] is not None and counts["test"] is not None and counts["total_annotated"] != splits:
            reader.problems.add(
                reader.folder / DATASET_FILE,
                where,
                "total_annotated",
                f"{counts['total_annotated']} is not train + dev + test = {splits}",
            )
        records.append({"region": region, **counts})
    reader.unique([(DATASET_FILE, line, (row["region"],)) for line, row in rows], "region")
    return pl.DataFrame(records, schema={"region": pl.String, **dict.fromkeys(count_columns, pl.Int32)})


def _read_edit_distance(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records = []
    rows = reader.rows(EDIT_DISTANCE_FILE, EDIT_DISTANCE_COLUMNS)
    for line, row in rows:
        value = reader.number(
            EDIT_DISTANCE_FILE, line, "normalized_levenshtein", row["normalized_levenshtein"], high=1.0
        )
        records.append(
            {
                "region": reader.choice(EDIT_DISTANCE_FILE, line, "region", row["region"], known_regions),
                "split": reader.choice(EDIT_DISTANCE_FILE, line, "split", row["split"], SPLITS),
                "normalized_levenshtein": value,
            }
        )
    reader.unique([(EDIT_DISTANCE_FILE, line, (row["region"], row["split"])) for line, row in rows], "region, split")
    return pl.DataFrame(records, schema={"region": pl.String, "split": pl.String, "normalized_levenshtein": pl.Float64})


def _read_lengths(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records = []
    rows = reader.rows(LENGTHS_FILE, LENGTH_COLUMNS)
    for line, row in rows:
        records.append(
            {
                "region": reader.choice(LENGTHS_FILE, line, "region", row["region"], known_regions),
                **{c: reader.number(LENGTHS_FILE, line, c, row[c]) for c in ("question_words_avg", "answer_words_avg")},
            }
        )
    reader.unique([(LENGTHS_FILE, line, (row["region"],)) for line, row in rows], "region")
    return pl.DataFrame(
        records, schema={"region": pl.String, "question_words_avg": pl.Float64, "answer_words_avg": pl.Float64}
    )


def _read_additional(reader: _Reader) -> pl.DataFrame:
    records = []
    rows = reader.rows(ADDITIONAL_FILE, ADDITIONAL_COLUMNS)
    for line, row in rows:
        for field in ("language", "location"):
            if row[field] == "":
                reader.problems.add(reader.folder / ADDITIONAL_FILE, line, field, "empty")
        records.append(
            {
                "language": row["language"],
                "location": row["location"],
                "qa_pairs": reader.number(ADDITIONAL_FILE, line, "qa_pairs", row["qa_pairs"], int),
            }
        )
    reader.unique(
        [(ADDITIONAL_FILE, line, (row["language"], row["location"])) for line, row in rows], "language, location"
    )
    return pl.DataFrame(records, schema={"language": pl.String, "location": pl.String, "qa_pairs": pl.Int32})


def _read_topics(reader: _Reader) -> pl.DataFrame:
    rows = reader.rows(TOPICS_FILE, TOPIC_COLUMNS)
    for line, row in rows:
        if row["topic"] == "":
            reader.problems.add(reader.folder / TOPICS_FILE, line, "topic", "empty")
    reader.unique([(TOPICS_FILE, line, (row["topic"],)) for line, row in rows], "topic")
    return pl.DataFrame([(row["topic"],) for _, row in rows], schema={"topic": pl.String}, orient="row")


def _read_domains(reader: _Reader) -> pl.DataFrame:
    rows = reader.rows(DOMAINS_FILE, DOMAIN_COLUMNS)
    counts = {}
    for line, row in rows:
        outcome = reader.choice(DOMAINS_FILE, line, "outcome", row["outcome"], DOMAIN_OUTCOMES)
        counts[outcome] = reader.number(DOMAINS_FILE, line, "domains", row["domains"], int)
    reader.unique([(DOMAINS_FILE, line, (row["outcome"],)) for line, row in rows], "outcome")
    missing = [o for o in DOMAIN_OUTCOMES if o not in counts]
    if rows and missing:
        reader.problems.add(reader.folder / DOMAINS_FILE, None, "outcome", f"no row for {', '.join(missing)}")
    elif rows and None not in counts.values() and counts["very_reliable"] + counts["eliminated"] != counts["checked"]:
        reader.problems.add(
            reader.folder / DOMAINS_FILE,
            None,
            "domains",
            f"very_reliable + eliminated = {counts['very_reliable'] + counts['eliminated']} is not checked = "
            f"{counts['checked']}: every domain checked was kept or eliminated",
        )
    return pl.DataFrame(
        [(o, counts.get(o)) for o in DOMAIN_OUTCOMES if o in counts],
        schema={"outcome": pl.String, "domains": pl.Int32},
        orient="row",
    )


def _read_models(reader: _Reader, results: pl.DataFrame) -> pl.DataFrame:
    """The zero-shot models and their weights; each must be a model of the zero-shot results and each of
    those must be here."""
    rows = reader.rows(MODELS_FILE, MODEL_COLUMNS)
    zero_shot = set(results.filter(pl.col("setting") == "zero-shot")["model"])
    for line, row in rows:
        reader.choice(MODELS_FILE, line, "weights", row["weights"], WEIGHTS)
        if row["model"] not in zero_shot:
            reader.problems.add(
                reader.folder / MODELS_FILE,
                line,
                "model",
                f"{row['model']!r} has no zero-shot result; expected one of {sorted(zero_shot)}",
            )
    reader.unique([(MODELS_FILE, line, (row["model"],)) for line, row in rows], "model")
    listed = {row["model"] for _, row in rows}
    if rows and zero_shot - listed:
        reader.problems.add(
            reader.folder / MODELS_FILE, None, "model", f"no row for {', '.join(sorted(zero_shot - listed))}"
        )
    return pl.DataFrame(
        [(row["model"], row["weights"]) for _, row in rows],
        schema={"model": pl.String, "weights": pl.String},
        orient="row",
    )
