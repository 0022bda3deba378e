"""NativQA published results (docs/methods.md, section 07 NativQA published results): load the
paper's tables, derive its averages and totals.

The CSVs in data/nativqa are the NativQA paper's tables (arXiv 2407.09823 v3) transcribed one value a
row, without the rows and columns the paper derives (averages, totals): this module computes those.
`write_tables` validates every file and fills the `nativqa_*` tables of the project's database; the
other functions read those tables and return polars frames for notebook 07.
"""

import csv
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import duckdb
import polars as pl

from . import db, paths
from .errors import Problems
from .schema import Column as C
from .schema import Table

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
# The metric of the paper's Figure 5 (average BLEU by resource level); any other is beyond the paper.
FIGURE5_METRIC = "bleu"

REGIONS = Table("nativqa_regions", "NativQA's nine language-region pairs (its Tables 1 and 2).", (
    C("region", "VARCHAR", "language-region pair as the paper names it, e.g. `Bangla-IN`", "NOT NULL"),
    C("language", "VARCHAR", "language of the questions and answers, e.g. `Bangla`", "NOT NULL"),
    C("iso_code", "VARCHAR", "ISO 639-1 code, e.g. `bn`", "NOT NULL"),
    C("city", "VARCHAR", "city whose residents' queries seeded the region, e.g. `Kolkata`", "NOT NULL"),
    C("resource_level", "VARCHAR", "`high`, `medium`, `low` or `extremely_low`, as the paper classes the language", "NOT NULL"),
), ("region",))
RESULTS = Table("nativqa_results", "Every published score of a model on a region, one value a row (Tables 2 to 5).", (
    C("model", "VARCHAR", "model as the paper names it; `Llama-3.1-8B-Instruct-FT` is the fine-tuned Llama of Table 3", "NOT NULL"),
    C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL"),
    C("metric", "VARCHAR", "`bertscore_f1`, `bleu`, `rouge1` (0 to 1), `gpt4o_judge_1to10`, `human_accuracy_1to5`, `human_usefulness_1to5`", "NOT NULL"),
    C("value", "DOUBLE", "the score as printed in the paper", "NOT NULL"),
    C("setting", "VARCHAR", "`zero-shot` (Tables 2, 4, 5) or `fine-tuning` (Table 3: the base and the fine-tuned Llama)", "NOT NULL"),
    C("paper_table", "TINYINT", "the paper's table the value comes from: 2, 3, 4 or 5", "NOT NULL"),
), ("model", "region", "metric", "setting"))
DATASET = Table("nativqa_dataset", "MultiNativQA's size per region (Table 1, without its total row).", (
    C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL"),
    C("seed_queries", "INTEGER", "seed queries collected from native speakers", "NOT NULL"),
    C("qa_pairs_collected", "INTEGER", "QA pairs collected by the search-engine expansion, before annotation", "NOT NULL"),
    C("train", "INTEGER", "annotated QA pairs in the train split; NULL where there is none (Nepali)"),
    C("dev", "INTEGER", "annotated QA pairs in the dev split; NULL where there is none (Nepali)"),
    C("test", "INTEGER", "annotated QA pairs in the test split", "NOT NULL"),
    C("total_annotated", "INTEGER", "annotated QA pairs, train + dev + test (checked on load)", "NOT NULL"),
), ("region",))
EDIT_DISTANCE = Table("nativqa_edit_distance", "How much annotators edited the collected answers (Table 24).", (
    C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL"),
    C("split", "VARCHAR", "`train`, `dev` or `test`", "NOT NULL"),
    C("normalized_levenshtein", "DOUBLE", "mean normalized Levenshtein distance between collected and edited answer, 0 (unchanged) to 1", "NOT NULL"),
), ("region", "split"))
LENGTHS = Table("nativqa_lengths", "Average question and answer length per region (Table 18).", (
    C("region", "VARCHAR", "`nativqa_regions.region`", "NOT NULL"),
    C("question_words_avg", "DOUBLE", "average question length in whitespace-separated words", "NOT NULL"),
    C("answer_words_avg", "DOUBLE", "average answer length in whitespace-separated words", "NOT NULL"),
), ("region",))
ADDITIONAL = Table("nativqa_additional_pairs", "QA pairs collected, not annotated, for six further locations (Table 23, without its total).", (
    C("language", "VARCHAR", "language of the pairs: `Arabic` or `English`", "NOT NULL"),
    C("location", "VARCHAR", "where the queries were localised, e.g. `Egypt`, `New York`", "NOT NULL"),
    C("qa_pairs", "INTEGER", "QA pairs collected", "NOT NULL"),
), ("language", "location"))
SOURCE_FILES = Table("nativqa_source_files", "The NativQA CSVs the tables were loaded from, with their checksums.", (
    C("file", "VARCHAR", "file name in data/nativqa", "NOT NULL"),
    C("sha256", "VARCHAR", "sha256 of the content", "NOT NULL"),
    C("bytes", "BIGINT", "size", "NOT NULL"),
), ("file",))
TABLES = (REGIONS, RESULTS, DATASET, EDIT_DISTANCE, LENGTHS, ADDITIONAL, SOURCE_FILES)


# ---------------------------------------------------------------- loading


class _Reader:
    """Reads the CSVs of one folder, recording every problem with its file, line and field."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.problems = Problems()

    def rows(self, name: str, columns: tuple[str, ...]) -> list[tuple[int, dict]]:
        """(line number, row) for each data row of `name`; empty when the file or a column is missing."""
        path = self.folder / name
        if not path.is_file():
            self.problems.add(path, None, None, "file not found")
            return []
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                self.problems.add(path, "line 1", None, f"missing column(s) {', '.join(missing)}; found {reader.fieldnames}")
                return []
            rows = []
            for row in reader:
                if None in row or any(row.get(c) is None for c in columns):
                    self.problems.add(path, f"line {reader.line_num}", None, "wrong number of fields")
                    continue
                rows.append((reader.line_num, {k: v.strip() for k, v in row.items()}))
            if not rows:
                self.problems.add(path, None, None, "no data rows")
            return rows

    def number(self, name: str, line: int, field: str, text: str, kind: type = float, optional: bool = False):
        if text == "" and optional:
            return None
        try:
            return kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            self.problems.add(self.folder / name, f"line {line}", field, f"{text!r} is not {what}")
            return None

    def choice(self, name: str, line: int, field: str, text: str, allowed) -> str | None:
        if text not in allowed:
            self.problems.add(self.folder / name, f"line {line}", field, f"unknown {field} {text!r}; expected one of {sorted(allowed)}")
            return None
        return text

    def unique(self, located_keys: list[tuple[str, int, tuple]], what: str) -> None:
        """Report every (file, line, key) whose key was already seen, naming where it was first."""
        first = {}
        for name, line, key in located_keys:
            if key in first:
                first_name, first_line = first[key]
                self.problems.add(self.folder / name, f"line {line}", None,
                                  f"duplicate {what} {key} (first in {first_name} line {first_line})")
            else:
                first[key] = (name, line)


def read_folder(folder: Path | str = FOLDER) -> dict[str, pl.DataFrame]:
    """Every table's frame, keyed by table name; raises InputError listing all problems of all files."""
    reader = _Reader(Path(folder))
    regions = _read_regions(reader)
    known = set(regions["region"]) if regions is not None else set()
    frames = {
        RESULTS.name: _read_results(reader, known),
        DATASET.name: _read_dataset(reader, known, regions),
        EDIT_DISTANCE.name: _read_edit_distance(reader, known),
        LENGTHS.name: _read_lengths(reader, known),
        ADDITIONAL.name: _read_additional(reader),
    }
    reader.problems.raise_if_any()
    frames[REGIONS.name] = regions
    names = [REGIONS_FILE, *RESULT_FILES, DATASET_FILE, EDIT_DISTANCE_FILE, LENGTHS_FILE, ADDITIONAL_FILE]
    frames[SOURCE_FILES.name] = db.source_checksums(Path(folder)).filter(pl.col("file").is_in(names)).sort("file")
    return frames


def write_tables(con: duckdb.DuckDBPyConnection, folder: Path | str = FOLDER) -> dict[str, int]:
    """Validate the CSVs of `folder` and create and fill the `nativqa_*` tables; returns rows per table.

    Nothing is written unless every file is valid. Tables loaded before are replaced, so that the CSVs
    can be reloaded into a database that already has them.
    """
    frames = read_folder(folder)
    for table in TABLES:
        con.execute(f"DROP TABLE IF EXISTS {table.name}")
        db.insert(con, table, frames[table.name])
    return {t.name: frames[t.name].height for t in TABLES}


def _read_regions(reader: _Reader) -> pl.DataFrame | None:
    rows = reader.rows(REGIONS_FILE, REGIONS.column_names())
    for line, row in rows:
        reader.choice(REGIONS_FILE, line, "resource_level", row["resource_level"], RESOURCE_LEVELS)
        for field in REGIONS.column_names():
            if row[field] == "":
                reader.problems.add(reader.folder / REGIONS_FILE, f"line {line}", field, "empty")
    reader.unique([(REGIONS_FILE, line, (row["region"],)) for line, row in rows], "region")
    if not rows:
        return None
    return pl.DataFrame([row for _, row in rows], schema=dict.fromkeys(REGIONS.column_names(), pl.String)).sort("region")


def _read_results(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records, keys = [], []
    for name, paper_table in RESULT_FILES.items():
        for line, row in reader.rows(name, ("model", "region", "metric", "value", "setting")):
            where = f"line {line}"
            region = reader.choice(name, line, "region", row["region"], known_regions)
            metric = reader.choice(name, line, "metric", row["metric"], METRIC_BY_NAME)
            setting = reader.choice(name, line, "setting", row["setting"], SETTINGS)
            value = reader.number(name, line, "value", row["value"])
            if row["model"] == "":
                reader.problems.add(reader.folder / name, where, "model", "empty")
            if metric is not None and value is not None:
                spec = METRIC_BY_NAME[metric]
                if not spec.low <= value <= spec.high:
                    reader.problems.add(reader.folder / name, where, "value",
                                        f"{value} is outside the range {spec.low:g} to {spec.high:g} of {metric}")
            # The key spans the four files: the same score must not be published twice.
            keys.append((name, line, (row["model"], row["region"], row["metric"], row["setting"])))
            records.append({"model": row["model"], "region": region, "metric": metric, "value": value,
                            "setting": setting, "paper_table": paper_table})
    reader.unique(keys, "model, region, metric, setting")
    schema = {"model": pl.String, "region": pl.String, "metric": pl.String, "value": pl.Float64,
              "setting": pl.String, "paper_table": pl.Int8}
    return pl.DataFrame(records, schema=schema)


def _read_dataset(reader: _Reader, known_regions: set[str], regions: pl.DataFrame | None) -> pl.DataFrame:
    count_columns = ("seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated")
    city_of = dict(regions.select("region", "city").iter_rows()) if regions is not None else {}
    records = []
    rows = reader.rows(DATASET_FILE, ("region", "city", *count_columns))
    for line, row in rows:
        where = f"line {line}"
        region = reader.choice(DATASET_FILE, line, "region", row["region"], known_regions)
        if region is not None and row["city"] != city_of[region]:
            reader.problems.add(reader.folder / DATASET_FILE, where, "city",
                                f"{row['city']!r} differs from {city_of[region]!r} in {REGIONS_FILE}")
        counts = {c: reader.number(DATASET_FILE, line, c, row[c], int, optional=c in ("train", "dev")) for c in count_columns}
        splits = sum(counts[s] or 0 for s in SPLITS)
        if counts["total_annotated"] is not None and counts["test"] is not None and counts["total_annotated"] != splits:
            reader.problems.add(reader.folder / DATASET_FILE, where, "total_annotated",
                                f"{counts['total_annotated']} is not train + dev + test = {splits}")
        records.append({"region": region, **counts})
    reader.unique([(DATASET_FILE, line, (row["region"],)) for line, row in rows], "region")
    return pl.DataFrame(records, schema={"region": pl.String, **dict.fromkeys(count_columns, pl.Int32)})


def _read_edit_distance(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records = []
    rows = reader.rows(EDIT_DISTANCE_FILE, EDIT_DISTANCE.column_names())
    for line, row in rows:
        value = reader.number(EDIT_DISTANCE_FILE, line, "normalized_levenshtein", row["normalized_levenshtein"])
        if value is not None and not 0 <= value <= 1:
            reader.problems.add(reader.folder / EDIT_DISTANCE_FILE, f"line {line}", "normalized_levenshtein",
                                f"{value} is outside 0 to 1")
        records.append({
            "region": reader.choice(EDIT_DISTANCE_FILE, line, "region", row["region"], known_regions),
            "split": reader.choice(EDIT_DISTANCE_FILE, line, "split", row["split"], SPLITS),
            "normalized_levenshtein": value,
        })
    reader.unique([(EDIT_DISTANCE_FILE, line, (row["region"], row["split"])) for line, row in rows], "region, split")
    return pl.DataFrame(records, schema={"region": pl.String, "split": pl.String, "normalized_levenshtein": pl.Float64})


def _read_lengths(reader: _Reader, known_regions: set[str]) -> pl.DataFrame:
    records = []
    rows = reader.rows(LENGTHS_FILE, LENGTHS.column_names())
    for line, row in rows:
        records.append({
            "region": reader.choice(LENGTHS_FILE, line, "region", row["region"], known_regions),
            **{c: reader.number(LENGTHS_FILE, line, c, row[c]) for c in ("question_words_avg", "answer_words_avg")},
        })
    reader.unique([(LENGTHS_FILE, line, (row["region"],)) for line, row in rows], "region")
    return pl.DataFrame(records, schema={"region": pl.String, "question_words_avg": pl.Float64, "answer_words_avg": pl.Float64})


def _read_additional(reader: _Reader) -> pl.DataFrame:
    records = []
    rows = reader.rows(ADDITIONAL_FILE, ADDITIONAL.column_names())
    for line, row in rows:
        for field in ("language", "location"):
            if row[field] == "":
                reader.problems.add(reader.folder / ADDITIONAL_FILE, f"line {line}", field, "empty")
        records.append({"language": row["language"], "location": row["location"],
                        "qa_pairs": reader.number(ADDITIONAL_FILE, line, "qa_pairs", row["qa_pairs"], int)})
    reader.unique([(ADDITIONAL_FILE, line, (row["language"], row["location"])) for line, row in rows],
                  "language, location")
    return pl.DataFrame(records, schema={"language": pl.String, "location": pl.String, "qa_pairs": pl.Int32})


# ---------------------------------------------------------------- analysis

def require_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Stop with a clear message when the database was built without the NativQA tables."""
    present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    missing = [t.name for t in TABLES if t.name not in present]
    if missing:
        noun = "table" if len(missing) == 1 else "tables"
        raise LookupError(f"the database has no {noun} {', '.join(missing)}: rebuild it with `make db`, "
                          f"which loads the NativQA CSVs of {FOLDER}")


def region_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Regions from high to extremely low resource, alphabetical within a level."""
    return con.sql(f"""
        SELECT region FROM nativqa_regions
        ORDER BY list_position({list(RESOURCE_LEVELS)}, resource_level), region
    """).pl()["region"].to_list()


def zero_shot_models(con: duckdb.DuckDBPyConnection) -> list[str]:
    return con.sql("""
        SELECT DISTINCT model FROM nativqa_results WHERE setting = 'zero-shot' AND paper_table IN (2, 4) ORDER BY model
    """).pl()["model"].to_list()


def scores(con: duckdb.DuckDBPyConnection, metric: str, setting: str = "zero-shot") -> pl.DataFrame:
    """One metric's published scores, model by region (the cells of a heatmap)."""
    return con.sql("""
        SELECT r.model, r.region, g.resource_level, r.value
        FROM nativqa_results r JOIN nativqa_regions g USING (region)
        WHERE r.metric = ? AND r.setting = ?
        ORDER BY r.model, r.region
    """, params=[metric, setting]).pl()


def score_heatmap(cells: pl.DataFrame, metric: str, regions: list[str], models: list[str], paper_table: int) -> alt.Chart:
    """Model x region heatmap of one metric, in the suite's shared style, values printed as the paper does."""
    from . import plots

    spec = METRIC_BY_NAME[metric]
    chart = plots.heatmap(
        cells, x="region", y="model", value="value",
        title=f"NativQA zero-shot {spec.display_name} by model and region (paper Table {paper_table})",
        value_title=spec.display_name, x_order=regions, y_order=models,
        tooltip=["model", "region", "resource_level", "value"], value_format=f".{spec.decimals}f",
    )
    # Wider cells than the default band, so that a three-decimal score fits inside its cell.
    return chart.properties(width=alt.Step(56), height=alt.Step(30))


def _wide_averages(con: duckdb.DuckDBPyConnection, by: str, count_name: str) -> pl.DataFrame:
    # Four decimals, one more than the paper prints: no average of these inputs then ends on a rounding tie.
    long = con.sql(f"""
        SELECT r.{by}, r.metric, count(*) AS n, round(avg(r.value), 4) AS average
        FROM nativqa_results r
        WHERE r.setting = 'zero-shot' AND r.metric IN {ZERO_SHOT_METRICS}
        GROUP BY r.{by}, r.metric
    """).pl()
    counts = long.group_by(by).agg(pl.col("n").max().alias(count_name))
    wide = long.pivot(on="metric", index=by, values="average")
    for metric in ZERO_SHOT_METRICS:
        if metric not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(metric))
    return wide.join(counts, on=by).select(by, count_name, *ZERO_SHOT_METRICS)


def model_averages(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Each model's zero-shot average over the regions (Tables 2 and 4), one column per metric."""
    return _wide_averages(con, "model", "n_regions").sort("model")


def region_averages(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Each region's zero-shot average over the models (Tables 2 and 4), one column per metric."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    regions = con.sql("SELECT region, resource_level FROM nativqa_regions").pl()
    return (_wide_averages(con, "region", "n_models").join(regions, on="region").join(order, on="region")
            .sort("position").drop("position").select("region", "resource_level", pl.exclude("region", "resource_level")))


def average_by_resource_level(con: duckdb.DuckDBPyConnection, metric: str = "bleu") -> pl.DataFrame:
    """The paper's Figure 5: a zero-shot metric averaged over the regions of each resource level, per model
    and, as `all models`, over every model-region score of the level."""
    return con.sql(f"""
        WITH cells AS (
            SELECT r.model, g.resource_level, r.region, r.value
            FROM nativqa_results r JOIN nativqa_regions g USING (region)
            WHERE r.metric = ? AND r.setting = 'zero-shot'
        ), grouped AS (
            SELECT model, resource_level, count(DISTINCT region) AS n_regions, round(avg(value), 4) AS average
            FROM cells GROUP BY model, resource_level
            UNION ALL
            SELECT 'all models', resource_level, count(DISTINCT region), round(avg(value), 4)
            FROM cells GROUP BY resource_level
        )
        SELECT resource_level, model, n_regions, average AS average_{metric}
        FROM grouped
        ORDER BY list_position({list(RESOURCE_LEVELS)}, resource_level), model = 'all models', model
    """, params=[metric]).pl()


def resource_level_chart(levels: pl.DataFrame, metric: str = "bleu") -> alt.Chart:
    """Grouped bars of a metric's average by resource level, one bar per model (the paper's Figure 5)."""
    column = f"average_{metric}"
    spec = METRIC_BY_NAME[metric]
    models = levels.filter(pl.col("model") != "all models")
    present = [level for level in RESOURCE_LEVELS if level in set(models["resource_level"])]
    return alt.Chart(models).mark_bar().encode(
        x=alt.X("resource_level:N", sort=present, title="resource level", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("model:N"),
        y=alt.Y(f"{column}:Q", title=f"average {spec.display_name}"),
        color=alt.Color("model:N", title="model"),
        tooltip=["resource_level", "model", "n_regions", alt.Tooltip(f"{column}:Q", format=".4f")],
    ).properties(title=f"NativQA zero-shot {spec.display_name} by resource level ({resource_level_item(metric)})",
                 width=420, height=260)


def resource_level_item(metric: str) -> str:
    """What the chart of `metric` by resource level reproduces: the paper's Figure 5 is BLEU's."""
    return "paper Figure 5" if metric == FIGURE5_METRIC else "beyond the paper, whose Figure 5 is BLEU"


def resource_level_name(metric: str) -> str:
    """The figure's file name: `figure5_...` only for the metric the paper's Figure 5 shows."""
    return f"{'figure5_' if metric == FIGURE5_METRIC else ''}{metric}_by_resource_level"


def fine_tuning_deltas(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 3: Llama-3.1-8B-Instruct before and after fine-tuning, per region and metric, with the change."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    deltas = con.sql("""
        SELECT g.region, g.resource_level, base.metric, base.value AS base, tuned.value AS fine_tuned,
               round(tuned.value - base.value, 3) AS delta,
               round(100 * (tuned.value - base.value) / nullif(base.value, 0), 1) AS relative_change_pct
        FROM nativqa_results base
        JOIN nativqa_results tuned USING (region, metric, setting)
        JOIN nativqa_regions g USING (region)
        WHERE base.setting = 'fine-tuning' AND base.model = ? AND tuned.model = ?
    """, params=[BASE_MODEL, FINE_TUNED_MODEL]).pl()
    metric_position = {m: i for i, m in enumerate(REFERENCE_METRICS)}
    return (deltas.join(order, on="region")
            .sort(pl.col("metric").replace_strict(metric_position, default=len(metric_position)), "position")
            .drop("position"))


def fine_tuning_summary(deltas: pl.DataFrame) -> pl.DataFrame:
    """Per metric: average before and after fine-tuning over the regions, and how many regions improved."""
    metric_position = {m: i for i, m in enumerate(REFERENCE_METRICS)}
    return (deltas.group_by("metric").agg(
        pl.len().alias("n_regions"),
        pl.col("base").mean().round(4).alias("base_average"),
        pl.col("fine_tuned").mean().round(4).alias("fine_tuned_average"),
        pl.col("delta").mean().round(4).alias("delta_average"),
        (pl.col("delta") > 0).sum().alias("regions_improved"),
        (pl.col("delta") < 0).sum().alias("regions_worse"),
    ).sort(pl.col("metric").replace_strict(metric_position, default=len(metric_position))))


def human_ratings(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 5: human accuracy and usefulness of GPT-4o's answers per region, and an `Average` row over them."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    long = con.sql(f"""
        SELECT r.model, r.region, g.resource_level, r.metric, r.value
        FROM nativqa_results r JOIN nativqa_regions g USING (region)
        WHERE r.metric IN {HUMAN_METRICS}
    """).pl()
    wide = (long.pivot(on="metric", index=["model", "region", "resource_level"], values="value")
            .join(order, on="region").sort("model", "position").drop("position"))
    for metric in HUMAN_METRICS:
        if metric not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(metric))
    wide = wide.select("model", "region", "resource_level", *HUMAN_METRICS)
    average = wide.group_by("model").agg(
        pl.lit("Average").alias("region"), pl.lit(None, pl.String).alias("resource_level"),
        *[pl.col(m).mean().round(4) for m in HUMAN_METRICS],
    ).select(wide.columns)
    return pl.concat([wide, average.sort("model")])


def regions_without(con: duckdb.DuckDBPyConnection, metrics: tuple[str, ...]) -> list[str]:
    """Regions with no published value of any of `metrics`."""
    return con.sql(f"""
        SELECT region FROM nativqa_regions
        WHERE region NOT IN (SELECT region FROM nativqa_results WHERE metric IN {metrics})
        ORDER BY region
    """).pl()["region"].to_list()


def dataset_sizes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 1: sizes per region, in resource-level order, and a `Total` row summing each column; the
    `Total` row's `n_regions` and `n_languages` count the regions and languages of the dataset."""
    counts = ["seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated"]
    return con.sql(f"""
        WITH per_region AS (
            SELECT g.region, g.language, g.city, g.resource_level, {', '.join(f'd.{c}::BIGINT AS {c}' for c in counts)},
                   1::BIGINT AS n_regions, 1::BIGINT AS n_languages,
                   list_position({list(RESOURCE_LEVELS)}, g.resource_level) AS level_position
            FROM nativqa_dataset d JOIN nativqa_regions g USING (region)
        )
        SELECT region, language, city, resource_level, {', '.join(counts)}, n_regions, n_languages FROM (
            SELECT *, 0 AS is_total FROM per_region
            UNION ALL
            SELECT 'Total', NULL, NULL, NULL, {', '.join(f'sum({c})::BIGINT' for c in counts)},
                   count(DISTINCT region), count(DISTINCT language), NULL, 1 FROM per_region
        )
        ORDER BY is_total, level_position, region
    """).pl()


def edit_distances(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 24 with its averages: a column averaging each region over its splits, and an `Average` row
    averaging each split over the regions that have it; the corner averages every published value."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    return con.sql(f"""
        WITH per_region AS (
            SELECT e.region, g.resource_level,
                   max(normalized_levenshtein) FILTER (split = 'train') AS train,
                   max(normalized_levenshtein) FILTER (split = 'dev') AS dev,
                   max(normalized_levenshtein) FILTER (split = 'test') AS test,
                   count(*) AS n_values,
                   round(avg(normalized_levenshtein), 4) AS region_average
            FROM nativqa_edit_distance e JOIN nativqa_regions g USING (region)
            GROUP BY e.region, g.resource_level
        ), overall AS (
            SELECT 'Average' AS region, NULL AS resource_level,
                   round(avg(normalized_levenshtein) FILTER (split = 'train'), 4) AS train,
                   round(avg(normalized_levenshtein) FILTER (split = 'dev'), 4) AS dev,
                   round(avg(normalized_levenshtein) FILTER (split = 'test'), 4) AS test,
                   count(*) AS n_values,
                   round(avg(normalized_levenshtein), 4) AS region_average
            FROM nativqa_edit_distance
        )
        SELECT region, resource_level, train, dev, test, n_values, region_average FROM (
            SELECT *, list_position({list(RESOURCE_LEVELS)}, resource_level) AS level_position, 0 AS is_total FROM per_region
            UNION ALL
            SELECT *, NULL, 1 FROM overall
        )
        ORDER BY is_total, level_position, region
    """).pl()


def split_averages(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 24's per-split averages in long form, with how many regions each average is over."""
    return con.sql("""
        SELECT split, count(*) AS n_regions, round(avg(normalized_levenshtein), 4) AS average
        FROM nativqa_edit_distance GROUP BY split
        ORDER BY list_position(['train', 'dev', 'test'], split)
    """).pl()


def lengths(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 18 as published, in resource-level order, and an `Average` row over the regions (the
    paper's text gives 6 and 35 words)."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    table = (con.sql("SELECT l.*, g.resource_level FROM nativqa_lengths l JOIN nativqa_regions g USING (region)").pl()
             .join(order, on="region").sort("position")
             .select("region", "resource_level", "question_words_avg", "answer_words_avg"))
    average = table.select(pl.lit("Average").alias("region"), pl.lit(None, pl.String).alias("resource_level"),
                           pl.col("question_words_avg", "answer_words_avg").mean().round(4))
    return pl.concat([table, average])


def additional_pairs(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 23: the QA pairs collected for six further locations, and a `Total` row summing them."""
    return con.sql("""
        SELECT language, location, qa_pairs::BIGINT AS qa_pairs FROM (
            SELECT *, 0 AS is_total FROM nativqa_additional_pairs
            UNION ALL
            SELECT 'Total', NULL, sum(qa_pairs), 1 FROM nativqa_additional_pairs
        ) ORDER BY is_total, language, location
    """).pl()


def summary(model_avg: pl.DataFrame, region_avg: pl.DataFrame, levels: pl.DataFrame, tuning: pl.DataFrame,
            human: pl.DataFrame, sizes: pl.DataFrame) -> str:
    """The notebook's findings in words, computed from its tables; a finding whose data is absent says so."""
    def ranked(frame: pl.DataFrame, column: str) -> pl.DataFrame:
        return frame.drop_nulls(column).sort(column, descending=True)

    sentences = []
    total = sizes.filter(pl.col("region") == "Total").row(0, named=True)
    sentences.append(
        f"MultiNativQA holds **{total['total_annotated']:,} annotated QA pairs** in {sizes.height - 1} language-region "
        f"pairs, kept from {total['qa_pairs_collected']:,} collected pairs grown from {total['seed_queries']:,} seed queries.")
    judged = ranked(model_avg, "gpt4o_judge_1to10")
    if judged.height:
        best, worst = judged.row(0, named=True), judged.row(-1, named=True)
        sentences.append(
            f"Averaged over the regions, **{best['model']}** gets the best GPT-4o-judge score "
            f"({best['gpt4o_judge_1to10']:.2f} of 10) and {worst['model']} the worst ({worst['gpt4o_judge_1to10']:.2f}).")
        regions = ranked(region_avg, "gpt4o_judge_1to10")
        easiest, hardest = regions.row(0, named=True), regions.row(-1, named=True)
        sentences.append(
            f"Averaged over the models, {easiest['region']} is the easiest region for the judge "
            f"({easiest['gpt4o_judge_1to10']:.2f}) and {hardest['region']} the hardest ({hardest['gpt4o_judge_1to10']:.2f}).")
    else:
        sentences.append("No GPT-4o-judge scores are in the database.")
    bert = ranked(model_avg, "bertscore_f1")
    if bert.height:
        sentences.append(f"By BERTScore F1, {bert['model'][0]} leads ({bert['bertscore_f1'][0]:.3f}).")
    column = next(c for c in levels.columns if c.startswith("average_"))
    everyone = levels.filter(pl.col("model") == "all models")
    if everyone.height:
        by_level = ", ".join(f"{r['resource_level'].replace('_', ' ')} {r[column]:.3f}" for r in everyone.iter_rows(named=True))
        sentences.append(f"Average zero-shot {METRIC_BY_NAME[column.removeprefix('average_')].display_name} by resource "
                         f"level, over all models: {by_level}.")
    if tuning.height:
        changes = "; ".join(
            f"{METRIC_BY_NAME[r['metric']].display_name} improved in {r['regions_improved']} of {r['n_regions']} regions "
            f"(average change {r['delta_average']:+.3f})" for r in tuning.iter_rows(named=True))
        sentences.append(f"Fine-tuning {BASE_MODEL} on the train split: {changes}.")
    averages = human.filter(pl.col("region") == "Average")
    if averages.height:
        average = averages.row(0, named=True)
        n_rated = human.filter((pl.col("region") != "Average") & (pl.col("model") == average["model"])).height
        sentences.append(
            f"Human raters gave {average['model']}'s answers an average accuracy of {average['human_accuracy_1to5']:.2f} "
            f"and usefulness of {average['human_usefulness_1to5']:.2f} (1 to 5) over {n_rated} regions.")
    return " ".join(sentences)


def human_coverage_note(con: duckdb.DuckDBPyConnection) -> str:
    """Which regions Table 5 leaves out, in words."""
    missing = regions_without(con, HUMAN_METRICS)
    if not missing:
        return "Every region has published human ratings."
    return (f"The paper published no human ratings for {', '.join(missing)}: the average is over the "
            f"other regions only.")
