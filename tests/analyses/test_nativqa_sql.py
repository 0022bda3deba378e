"""The SQL of analyses/nativqa.py on NativQA tables it can tell apart: which zero-shot models there are, one
metric's scores in one setting, the fine-tuning pairs of base and tuned scores, the regions and languages the
`Total` row of Table 1 counts, each split's edit distance and the regions of each resource level; and the tables'
keys, which make the lines the SQL mutation operator leaves alone (`-- pragma: no mutate`) equivalent to their
mutants. Expected values are worked out by hand from the rows written here, or read from the paper and its
transcription (data/nativqa, arXiv 2407.09823 v3)."""

from pathlib import Path

import duckdb
import pytest

from analysis.analyses import nativqa
from analysis.core import paths
from analysis.io.nativqa import BASE_MODEL, FINE_TUNED_MODEL
from analysis.pipeline import nativqa as nativqa_tables
from analysis.schema import NATIVQA_DATASET, NATIVQA_EDIT_DISTANCE, NATIVQA_REGIONS, NATIVQA_RESULTS

# Three regions, two of them in one language (as the paper's Bangla-BD and Bangla-IN are).
REGIONS = [
    ("R1", "Lang1", "l1", "City1", "high"),
    ("R2", "Lang1", "l1", "City2", "low"),
    ("R3", "Lang2", "l2", "City3", "medium"),
]
# (model, region, metric, value, setting, paper_table)
ZERO_SHOT = [
    ("M1", "R1", "bleu", 0.3, "zero-shot", 2),
    ("M1", "R2", "bleu", 0.1, "zero-shot", 2),
    ("M1", "R1", "rouge1", 0.4, "zero-shot", 2),
    ("M2", "R1", "bleu", 0.5, "zero-shot", 2),
    ("M2", "R2", "gpt4o_judge_1to10", 7.0, "zero-shot", 4),
    # Rated by people only (Table 5): not one of the zero-shot models of Tables 2 and 4.
    ("Rater", "R1", "human_accuracy_1to5", 4.0, "zero-shot", 5),
]
FINE_TUNING = [
    (BASE_MODEL, "R1", "bleu", 0.1, "fine-tuning", 3),
    (BASE_MODEL, "R2", "bleu", 0.2, "fine-tuning", 3),
    (BASE_MODEL, "R1", "rouge1", 0.4, "fine-tuning", 3),
    (BASE_MODEL, "R2", "rouge1", 0.25, "fine-tuning", 3),
    (FINE_TUNED_MODEL, "R1", "bleu", 0.15, "fine-tuning", 3),
    (FINE_TUNED_MODEL, "R2", "bleu", 0.1, "fine-tuning", 3),
    (FINE_TUNED_MODEL, "R1", "rouge1", 0.5, "fine-tuning", 3),
    (FINE_TUNED_MODEL, "R2", "rouge1", 0.2, "fine-tuning", 3),
]
# (region, seed_queries, qa_pairs_collected, train, dev, test, total_annotated)
DATASET = [
    ("R1", 10, 100, 5, 2, 3, 10),
    ("R2", 20, 200, None, None, 7, 7),
    ("R3", 30, 300, 1, 1, 1, 3),
]


def write(con: duckdb.DuckDBPyConnection, table, rows: list[tuple]) -> None:
    """Create `table` as the schema declares it (its primary key too) and insert `rows`."""
    con.execute(table.ddl())
    marks = ", ".join("?" * len(table.columns))
    con.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows)


@pytest.fixture
def hand_made(tmp_path: Path):
    """Makes a fresh database file with the regions and dataset tables above and the results given."""
    connections = []

    def make(results: list[tuple]) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(str(tmp_path / f"nativqa{len(connections)}.duckdb"))
        connections.append(con)
        write(con, NATIVQA_REGIONS, REGIONS)
        write(con, NATIVQA_RESULTS, results)
        write(con, NATIVQA_DATASET, DATASET)
        return con

    yield make
    for con in connections:
        con.close()


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A fresh database file holding only the NativQA tables, loaded from the committed CSVs of data/nativqa
    as the build loads them."""
    con = duckdb.connect(str(tmp_path_factory.mktemp("nativqa") / "nativqa.duckdb"))
    nativqa_tables.write_tables(con, paths.NATIVQA)
    yield con
    con.close()


# ---------------------------------------------------------------- zero_shot_models


def test_zero_shot_models_are_those_of_tables_2_and_4_each_once(hand_made):
    """M1 (three zero-shot rows) and M2 (Table 4 only); not the fine-tuning models of Table 3, nor a model
    rated only by people in Table 5."""
    assert nativqa.zero_shot_models(hand_made(ZERO_SHOT + FINE_TUNING)) == ["M1", "M2"]


def test_zero_shot_models_of_the_paper_are_its_four(published):
    """Section 5: GPT-4o and Gemini 1.5 Flash (closed), Llama-3.1-8B-Instruct and Mistral-7B-Instruct-v0.1
    (open), as data/nativqa spells them, in the order of their names."""
    assert nativqa.zero_shot_models(published) == [
        "GPT-4o",
        "Gemini-1.5-Flash",
        "Llama-3.1-8B-Instruct",
        "Mistral-7B-Instruct-v0.1",
    ]


# ---------------------------------------------------------------- scores


def test_scores_are_those_of_the_metric_in_the_zero_shot_setting(hand_made):
    """BLEU zero-shot only: not ROUGE-1 or the judge's zero-shot scores, not BLEU's fine-tuning scores."""
    cells = nativqa.scores(hand_made(ZERO_SHOT + FINE_TUNING), "bleu")
    assert cells.columns == ["model", "region", "resource_level", "value"]
    assert cells.rows() == [("M1", "R1", "high", 0.3), ("M1", "R2", "low", 0.1), ("M2", "R1", "high", 0.5)]


def test_scores_of_a_metric_in_the_fine_tuning_setting(hand_made):
    """ROUGE-1 of Table 3's two models only: not M1's zero-shot ROUGE-1, not Table 3's BLEU."""
    cells = nativqa.scores(hand_made(ZERO_SHOT + FINE_TUNING), "rouge1", "fine-tuning")
    assert cells.rows() == [
        (BASE_MODEL, "R1", "high", 0.4),
        (BASE_MODEL, "R2", "low", 0.25),
        (FINE_TUNED_MODEL, "R1", "high", 0.5),
        (FINE_TUNED_MODEL, "R2", "low", 0.2),
    ]


# ---------------------------------------------------------------- fine_tuning_deltas


def test_fine_tuning_pairs_each_base_score_with_the_tuned_score_of_its_region_metric_and_setting(hand_made):
    """One row per region and metric, the base model's score beside the fine-tuned model's score of the same
    region, metric and setting: a zero-shot score of the fine-tuned model (here 0.9 on R1's BLEU) is no
    fine-tuning result. BLEU before ROUGE-1, R1 (high) before R2 (low); changes by hand."""
    tuned_zero_shot = (FINE_TUNED_MODEL, "R1", "bleu", 0.9, "zero-shot", 2)
    deltas = nativqa.fine_tuning_deltas(hand_made(ZERO_SHOT + FINE_TUNING + [tuned_zero_shot]))
    assert deltas.select(
        "region", "resource_level", "metric", "base", "fine_tuned", "delta", "relative_change_pct"
    ).rows() == [
        ("R1", "high", "bleu", 0.1, 0.15, 0.05, 50.0),
        ("R2", "low", "bleu", 0.2, 0.1, -0.1, -50.0),
        ("R1", "high", "rouge1", 0.4, 0.5, 0.1, 25.0),
        ("R2", "low", "rouge1", 0.25, 0.2, -0.05, -20.0),
    ]


def test_fine_tuning_deltas_of_the_paper_pair_table_3_region_by_metric(published):
    """Table 3: nine regions by three metrics, 27 rows; Arabic's BLEU went from 0.080 to 0.181 and Assamese's
    ROUGE-1 from 0.006 to 0.018 (data/nativqa/table3_fine_tuned.csv)."""
    deltas = nativqa.fine_tuning_deltas(published)
    assert deltas.height == 27
    assert deltas.select("region", "metric").unique().height == 27
    rows = {(r["region"], r["metric"]): (r["base"], r["fine_tuned"], r["delta"]) for r in deltas.iter_rows(named=True)}
    assert rows["Arabic", "bleu"] == (0.08, 0.181, 0.101)
    assert rows["Assamese", "rouge1"] == (0.006, 0.018, 0.012)


# ---------------------------------------------------------------- dataset_sizes


def test_dataset_total_counts_each_language_once(hand_made):
    """Three regions in two languages (R1 and R2 are both Lang1)."""
    sizes = nativqa.dataset_sizes(hand_made(ZERO_SHOT))
    total = sizes.row(-1, named=True)
    assert (total["region"], total["n_regions"], total["n_languages"]) == ("Total", 3, 2)
    assert sizes["n_languages"].to_list()[:-1] == [1, 1, 1]


def test_dataset_total_of_the_paper_is_nine_regions_in_seven_languages(published):
    """The paper's abstract and conclusion: 9 regions, 7 languages (Bangla and English in two regions each)."""
    total = nativqa.dataset_sizes(published).row(-1, named=True)
    assert (total["region"], total["n_regions"], total["n_languages"]) == ("Total", 9, 7)


# ---------------------------------------------------------------- what the lines the operator leaves alone give


def test_edit_distances_of_the_paper_give_each_split_its_value(published):
    """Table 24: Hindi's train, dev and test distances 0.362, 0.186 and 0.460 (average 1.008 / 3 = 0.336, as
    Appendix H prints it), Nepali's test only (0.302, no train or dev)."""
    rows = {r["region"]: r for r in nativqa.edit_distances(published).iter_rows(named=True)}
    hindi, nepali = rows["Hindi"], rows["Nepali"]
    assert (hindi["train"], hindi["dev"], hindi["test"], hindi["n_values"]) == (0.362, 0.186, 0.46, 3)
    assert hindi["region_average"] == 0.336
    assert (nepali["train"], nepali["dev"], nepali["test"], nepali["region_average"]) == (None, None, 0.302, 0.302)


def test_average_by_resource_level_of_the_paper_counts_the_regions_of_each_level(published):
    """regions.csv: two high-resource regions (English-BD, English-QA), three medium (Arabic, Hindi, Turkish),
    three low (Bangla-BD, Bangla-IN, Nepali), one extremely low (Assamese); every model has BLEU on each."""
    levels = nativqa.average_by_resource_level(published, "bleu")
    counts = {(r["resource_level"], r["model"]): r["n_regions"] for r in levels.iter_rows(named=True)}
    assert set(counts.values()) == {1, 2, 3}
    for model in ["GPT-4o", "Mistral-7B-Instruct-v0.1", "all models"]:
        by_level = [counts[level, model] for level in ("high", "medium", "low", "extremely_low")]
        assert by_level == [2, 3, 3, 1]


@pytest.mark.parametrize(
    "table, rows",
    [
        (NATIVQA_RESULTS, [("M1", "R1", "bleu", 0.3, "zero-shot", 2), ("M1", "R1", "bleu", 0.4, "zero-shot", 2)]),
        (NATIVQA_DATASET, [DATASET[0], DATASET[0]]),
        (NATIVQA_EDIT_DISTANCE, [("R1", "train", 0.1), ("R1", "train", 0.2)]),
    ],
)
def test_tables_refuse_a_second_row_of_one_key(tmp_path, table, rows):
    """Why the lines marked `-- pragma: no mutate` in analyses/nativqa.py have no mutant to kill: a model's
    score of one region, metric and setting, a region's sizes, a region's distance of one split are one row."""
    con = duckdb.connect(str(tmp_path / "nativqa.duckdb"))
    with pytest.raises(duckdb.ConstraintException):
        write(con, table, rows)
