"""NativQA published results (docs/methods.md, section 07 NativQA published results): the paper's tables
as the database holds them (`nativqa_*`, loaded from data/nativqa by `analysis.pipeline.nativqa`), with
the averages and totals the paper derives, for notebook 07."""

import duckdb
import polars as pl

from .. import store
from ..core.text import inert
from ..io.nativqa import (
    BASE_MODEL,
    DOMAIN_OUTCOMES,
    FINE_TUNED_MODEL,
    FOLDER,
    HUMAN_METRICS,
    METRIC_BY_NAME,
    REFERENCE_METRICS,
    RESOURCE_LEVELS,
    ZERO_SHOT_METRICS,
)
from ..schema import NATIVQA_TABLES

# The metric of the paper's Figure 5 (average BLEU by resource level); any other is beyond the paper.
FIGURE5_METRIC = "bleu"


def require_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Stop with a clear message when the database was built without the NativQA tables."""
    missing = [t.name for t in NATIVQA_TABLES.values() if not store.table_exists(con, t.name)]
    if missing:
        noun = "table" if len(missing) == 1 else "tables"
        raise LookupError(
            f"the database has no {noun} {', '.join(missing)}: rebuild it with `make db`, "
            f"which loads the NativQA CSVs of {FOLDER}"
        )


def region_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Regions from high to extremely low resource, alphabetical within a level."""
    return (
        con.sql(f"""
        SELECT region FROM nativqa_regions
        ORDER BY list_position({list(RESOURCE_LEVELS)}, resource_level), region
    """)
        .pl()["region"]
        .to_list()
    )


def zero_shot_models(con: duckdb.DuckDBPyConnection) -> list[str]:
    return (
        con.sql("""
        SELECT DISTINCT model FROM nativqa_results WHERE setting = 'zero-shot' AND paper_table IN (2, 4) ORDER BY model
    """)
        .pl()["model"]
        .to_list()
    )


def scores(con: duckdb.DuckDBPyConnection, metric: str, setting: str = "zero-shot") -> pl.DataFrame:
    """One metric's published scores, model by region (the cells of a heatmap)."""
    return con.sql(
        """
        SELECT r.model, r.region, g.resource_level, r.value
        FROM nativqa_results r JOIN nativqa_regions g USING (region)
        WHERE r.metric = ? AND r.setting = ?
        ORDER BY r.model, r.region
    """,
        params=[metric, setting],
    ).pl()


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
    return (
        _wide_averages(con, "region", "n_models")
        .join(regions, on="region")
        .join(order, on="region")
        .sort("position")
        .drop("position")
        .select("region", "resource_level", pl.exclude("region", "resource_level"))
    )


def average_by_resource_level(con: duckdb.DuckDBPyConnection, metric: str = "bleu") -> pl.DataFrame:
    """The paper's Figure 5: a zero-shot metric averaged over the regions of each resource level, per model
    and, as `all models`, over every model-region score of the level."""
    return con.sql(
        f"""
        WITH cells AS (
            SELECT r.model, g.resource_level, r.region, r.value
            FROM nativqa_results r JOIN nativqa_regions g USING (region)
            WHERE r.metric = ? AND r.setting = 'zero-shot'
        ), grouped AS (
            SELECT model, resource_level, count(DISTINCT region) AS n_regions, round(avg(value), 4) AS average  -- pragma: no mutate (one row per model and region: the results' key)
            FROM cells GROUP BY model, resource_level
            UNION ALL
            SELECT 'all models', resource_level, count(DISTINCT region), round(avg(value), 4)
            FROM cells GROUP BY resource_level
        )
        SELECT resource_level, model, n_regions, average AS average_{metric}
        FROM grouped
        ORDER BY list_position({list(RESOURCE_LEVELS)}, resource_level), model = 'all models', model
    """,
        params=[metric],
    ).pl()


def resource_level_item(metric: str) -> str:
    """What the chart of `metric` by resource level reproduces: the paper's Figure 5 is BLEU's."""
    return "paper Figure 5" if metric == FIGURE5_METRIC else "beyond the paper, whose Figure 5 is BLEU"


def resource_level_name(metric: str) -> str:
    """The figure's file name: `figure5_...` only for the metric the paper's Figure 5 shows."""
    return f"{'figure5_' if metric == FIGURE5_METRIC else ''}{metric}_by_resource_level"


def fine_tuning_deltas(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 3: Llama-3.1-8B-Instruct before and after fine-tuning, per region and metric, with the change."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    deltas = con.sql(
        """
        SELECT g.region, g.resource_level, base.metric, base.value AS base, tuned.value AS fine_tuned,
               round(tuned.value - base.value, 3) AS delta,
               round(100 * (tuned.value - base.value) / nullif(base.value, 0), 1) AS relative_change_pct
        FROM nativqa_results base
        JOIN nativqa_results tuned USING (region, metric, setting)
        JOIN nativqa_regions g USING (region)
        WHERE base.setting = 'fine-tuning' AND base.model = ? AND tuned.model = ?
    """,
        params=[BASE_MODEL, FINE_TUNED_MODEL],
    ).pl()
    metric_position = {m: i for i, m in enumerate(REFERENCE_METRICS)}
    return (
        deltas.join(order, on="region")
        .sort(pl.col("metric").replace_strict(metric_position, default=len(metric_position)), "position")
        .drop("position")
    )


def fine_tuning_summary(deltas: pl.DataFrame) -> pl.DataFrame:
    """Per metric: average before and after fine-tuning over the regions, and how many regions improved."""
    metric_position = {m: i for i, m in enumerate(REFERENCE_METRICS)}
    return (
        deltas.group_by("metric")
        .agg(
            pl.len().alias("n_regions"),
            pl.col("base").mean().round(4).alias("base_average"),
            pl.col("fine_tuned").mean().round(4).alias("fine_tuned_average"),
            pl.col("delta").mean().round(4).alias("delta_average"),
            (pl.col("delta") > 0).sum().alias("regions_improved"),
            (pl.col("delta") < 0).sum().alias("regions_worse"),
        )
        .sort(pl.col("metric").replace_strict(metric_position, default=len(metric_position)))
    )


def human_ratings(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 5: human accuracy and usefulness of GPT-4o's answers per region, and an `Average` row over them."""
    order = pl.DataFrame({"region": region_order(con)}).with_row_index("position")
    long = con.sql(f"""
        SELECT r.model, r.region, g.resource_level, r.metric, r.value
        FROM nativqa_results r JOIN nativqa_regions g USING (region)
        WHERE r.metric IN {HUMAN_METRICS}
    """).pl()
    wide = (
        long.pivot(on="metric", index=["model", "region", "resource_level"], values="value")
        .join(order, on="region")
        .sort("model", "position")
        .drop("position")
    )
    for metric in HUMAN_METRICS:
        if metric not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(metric))
    wide = wide.select("model", "region", "resource_level", *HUMAN_METRICS)
    average = (
        wide.group_by("model")
        .agg(
            pl.lit("Average").alias("region"),
            pl.lit(None, pl.String).alias("resource_level"),
            *[pl.col(m).mean().round(4) for m in HUMAN_METRICS],
        )
        .select(wide.columns)
    )
    return pl.concat([wide, average.sort("model")])


def regions_without(con: duckdb.DuckDBPyConnection, metrics: tuple[str, ...]) -> list[str]:
    """Regions with no published value of any of `metrics`."""
    return (
        con.sql(f"""
        SELECT region FROM nativqa_regions
        WHERE region NOT IN (SELECT region FROM nativqa_results WHERE metric IN {metrics})
        ORDER BY region
    """)
        .pl()["region"]
        .to_list()
    )


def dataset_sizes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 1: sizes per region, in resource-level order, and a `Total` row summing each column; the
    `Total` row's `n_regions` and `n_languages` count the regions and languages of the dataset."""
    counts = ["seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated"]
    return con.sql(f"""
        WITH per_region AS (
            SELECT g.region, g.language, g.city, g.resource_level, {", ".join(f"d.{c}::BIGINT AS {c}" for c in counts)},
                   1::BIGINT AS n_regions, 1::BIGINT AS n_languages,
                   list_position({list(RESOURCE_LEVELS)}, g.resource_level) AS level_position
            FROM nativqa_dataset d JOIN nativqa_regions g USING (region)
        )
        SELECT region, language, city, resource_level, {", ".join(counts)}, n_regions, n_languages FROM (
            SELECT *, 0 AS is_total FROM per_region
            UNION ALL
            SELECT 'Total', NULL, NULL, NULL, {", ".join(f"sum({c})::BIGINT" for c in counts)},
                   count(DISTINCT region),  -- pragma: no mutate (one row per region: the dataset's key)
                   count(DISTINCT language), NULL, 1 FROM per_region
        )
        ORDER BY is_total, level_position, region
    """).pl()


def edit_distances(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 24 with its averages: a column averaging each region over its splits, and an `Average` row
    averaging each split over the regions that have it; the corner averages every published value."""
    return con.sql(f"""
        WITH per_region AS (
            SELECT e.region, g.resource_level,
                   max(normalized_levenshtein)  -- pragma: no mutate (one value per region and split: the key)
                       FILTER (split = 'train') AS train,
                   max(normalized_levenshtein)  -- pragma: no mutate (one value per region and split: the key)
                       FILTER (split = 'dev') AS dev,
                   max(normalized_levenshtein)  -- pragma: no mutate (one value per region and split: the key)
                       FILTER (split = 'test') AS test,
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
    table = (
        con.sql("SELECT l.*, g.resource_level FROM nativqa_lengths l JOIN nativqa_regions g USING (region)")
        .pl()
        .join(order, on="region")
        .sort("position")
        .select("region", "resource_level", "question_words_avg", "answer_words_avg")
    )
    average = table.select(
        pl.lit("Average").alias("region"),
        pl.lit(None, pl.String).alias("resource_level"),
        pl.col("question_words_avg", "answer_words_avg").mean().round(4),
    )
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


TEXT_COUNTS_SQL = """
SELECT * FROM (VALUES
    ('topics', 'seed topics named in Section 3.1', (SELECT count(*) FROM nativqa_topics)),
    ('closed_models', 'zero-shot models with closed weights (Section 5)',
        (SELECT count(*) FROM nativqa_models WHERE weights = 'closed')),
    ('open_models', 'zero-shot models with open weights (Section 5)',
        (SELECT count(*) FROM nativqa_models WHERE weights = 'open')),
    ('additional_locations', 'further locations of Table 23', (SELECT count(*) FROM nativqa_additional_pairs))
) AS counts(quantity, description, value)
"""


def text_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """What the paper's prose counts of the things it lists (`quantity`, `description`, `value`): its
    topics, its open and closed models, its further locations, counted from their transcription."""
    return con.sql(TEXT_COUNTS_SQL).pl()


def domain_reliability(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Section 4.2.1: the web domains checked, kept as very reliable and eliminated, each as a % of
    those checked (the paper's shares of reliable and unreliable domains)."""
    return con.sql(f"""
        SELECT outcome, domains,
               100 * domains / (SELECT domains FROM nativqa_domain_reliability WHERE outcome = 'checked')
                   AS pct_of_checked
        FROM nativqa_domain_reliability
        ORDER BY list_position({list(DOMAIN_OUTCOMES)}, outcome)
    """).pl()


def summary(
    model_avg: pl.DataFrame,
    region_avg: pl.DataFrame,
    levels: pl.DataFrame,
    tuning: pl.DataFrame,
    human: pl.DataFrame,
    sizes: pl.DataFrame,
) -> str:
    """The notebook's findings in words, computed from its tables; a finding whose data is absent says so."""

    def ranked(frame: pl.DataFrame, column: str) -> pl.DataFrame:
        return frame.drop_nulls(column).sort(column, descending=True)

    sentences = []
    total = sizes.filter(pl.col("region") == "Total").row(0, named=True)
    sentences.append(
        f"MultiNativQA holds **{total['total_annotated']:,} annotated QA pairs** in {sizes.height - 1} language-region "
        f"pairs, kept from {total['qa_pairs_collected']:,} collected pairs grown from {total['seed_queries']:,} seed queries."
    )
    judged = ranked(model_avg, "gpt4o_judge_1to10")
    if judged.height:
        best, worst = judged.row(0, named=True), judged.row(-1, named=True)
        sentences.append(
            f"Averaged over the regions, **{inert(best['model'])}** gets the best GPT-4o-judge score "
            f"({best['gpt4o_judge_1to10']:.2f} of 10) and {inert(worst['model'])} the worst ({worst['gpt4o_judge_1to10']:.2f})."
        )
        regions = ranked(region_avg, "gpt4o_judge_1to10")
        easiest, hardest = regions.row(0, named=True), regions.row(-1, named=True)
        sentences.append(
            f"Averaged over the models, {inert(easiest['region'])} is the easiest region for the judge "
            f"({easiest['gpt4o_judge_1to10']:.2f}) and {inert(hardest['region'])} the hardest ({hardest['gpt4o_judge_1to10']:.2f})."
        )
    else:
        sentences.append("No GPT-4o-judge scores are in the database.")
    bert = ranked(model_avg, "bertscore_f1")
    if bert.height:
        sentences.append(f"By BERTScore F1, {inert(bert['model'][0])} leads ({bert['bertscore_f1'][0]:.3f}).")
    column = next(c for c in levels.columns if c.startswith("average_"))
    everyone = levels.filter(pl.col("model") == "all models")
    if everyone.height:
        by_level = ", ".join(
            f"{r['resource_level'].replace('_', ' ')} {r[column]:.3f}" for r in everyone.iter_rows(named=True)
        )
        sentences.append(
            f"Average zero-shot {METRIC_BY_NAME[column.removeprefix('average_')].display_name} by resource "
            f"level, over all models: {by_level}."
        )
    if tuning.height:
        changes = "; ".join(
            f"{METRIC_BY_NAME[r['metric']].display_name} improved in {r['regions_improved']} of {r['n_regions']} regions "
            f"(average change {r['delta_average']:+.3f})"
            for r in tuning.iter_rows(named=True)
        )
        sentences.append(f"Fine-tuning {BASE_MODEL} on the train split: {changes}.")
    averages = human.filter(pl.col("region") == "Average")
    if averages.height:
        average = averages.row(0, named=True)
        n_rated = human.filter((pl.col("region") != "Average") & (pl.col("model") == average["model"])).height
        sentences.append(
            f"Human raters gave {inert(average['model'])}'s answers an average accuracy of {average['human_accuracy_1to5']:.2f} "
            f"and usefulness of {average['human_usefulness_1to5']:.2f} (1 to 5) over {n_rated} regions."
        )
    return " ".join(sentences)


def human_coverage_note(con: duckdb.DuckDBPyConnection) -> str:
    """Which regions Table 5 leaves out, in words."""
    missing = regions_without(con, HUMAN_METRICS)
    if not missing:
        return "Every region has published human ratings."
    return f"The paper published no human ratings for {', '.join(missing)}: the average is over the other regions only."
