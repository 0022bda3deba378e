"""NativQA published results: loading the CSVs into the database, the averages and totals, notebook 07."""

import hashlib
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analysis import store
from analysis.analyses import nativqa
from analysis.core.errors import InputError
from analysis.io import nativqa as nativqa_files
from analysis.pipeline import nativqa as nativqa_tables
from analysis.reporting import run
from analysis.viz import nativqa_charts


@pytest.fixture(scope="module")
def loaded_database(database) -> Path:
    """The session's database: its build loads the NativQA tables of data/nativqa."""
    return database


@pytest.fixture
def loaded(loaded_database):
    con = store.connect(loaded_database)
    yield con
    con.close()


def read_csv(name: str, folder: Path = nativqa_files.FOLDER) -> pl.DataFrame:
    return pl.read_csv(folder / name, infer_schema=False)


def table_as_strings(con, table: str, columns: list[str], key: list[str]) -> pl.DataFrame:
    frame = con.sql(f"SELECT {', '.join(columns)} FROM {table}").pl()
    return frame.with_columns(pl.all().cast(pl.String)).sort(key)


def published(values: pl.DataFrame, column: str) -> pl.DataFrame:
    """CSV text as the database gives it back: `0.280` is the number 0.28."""
    return values.with_columns(pl.col(column).cast(pl.Float64).cast(pl.String))


# ---------------------------------------------------------------- the real CSVs, row for row


def test_regions_match_csv(loaded):
    expected = read_csv("regions.csv").sort("region")
    assert_frame_equal(table_as_strings(loaded, "nativqa_regions", expected.columns, ["region"]), expected)


def test_results_match_the_four_csvs(loaded):
    expected = pl.concat(
        [
            published(read_csv(name), "value").with_columns(pl.lit(str(number)).alias("paper_table"))
            for name, number in nativqa_files.RESULT_FILES.items()
        ]
    ).sort("model", "region", "metric", "setting")
    loaded_rows = table_as_strings(
        loaded, "nativqa_results", expected.columns, ["model", "region", "metric", "setting"]
    )
    assert loaded_rows.height == sum(read_csv(name).height for name in nativqa_files.RESULT_FILES)
    assert_frame_equal(loaded_rows, expected)


def test_dataset_matches_csv(loaded):
    expected = read_csv("table1_dataset.csv").drop("city").sort("region")
    assert_frame_equal(table_as_strings(loaded, "nativqa_dataset", expected.columns, ["region"]), expected)


def test_edit_distance_matches_csv(loaded):
    expected = published(read_csv("table24_answer_edit_distance.csv"), "normalized_levenshtein").sort("region", "split")
    assert_frame_equal(
        table_as_strings(loaded, "nativqa_edit_distance", expected.columns, ["region", "split"]), expected
    )


def test_lengths_match_csv(loaded):
    expected = read_csv("table18_lengths.csv").sort("region")
    expected = published(published(expected, "question_words_avg"), "answer_words_avg")
    assert_frame_equal(table_as_strings(loaded, "nativqa_lengths", expected.columns, ["region"]), expected)


def test_additional_pairs_match_csv(loaded):
    expected = read_csv("table23_additional_pairs.csv").sort("language", "location")
    assert_frame_equal(
        table_as_strings(loaded, "nativqa_additional_pairs", expected.columns, ["language", "location"]), expected
    )


def test_source_files_record_checksums(loaded):
    rows = loaded.sql("SELECT file, sha256, bytes FROM nativqa_source_files ORDER BY file").pl()
    csvs = sorted(p for p in nativqa_files.FOLDER.glob("*.csv"))
    assert rows["file"].to_list() == [p.name for p in csvs]
    assert rows["sha256"].to_list() == [hashlib.sha256(p.read_bytes()).hexdigest() for p in csvs]
    assert rows["bytes"].to_list() == [p.stat().st_size for p in csvs]


def test_dataset_total_row_sums_the_regions(loaded):
    sizes = nativqa.dataset_sizes(loaded)
    csv = pl.read_csv(nativqa_files.FOLDER / "table1_dataset.csv")
    total = sizes.filter(pl.col("region") == "Total").row(0, named=True)
    for column in ("seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated"):
        assert total[column] == csv[column].sum()
    assert sizes["region"].to_list()[:-1] == nativqa.region_order(loaded)


# ---------------------------------------------------------------- averages on a hand-made folder

SMALL = {
    "regions.csv": """region,language,iso_code,city,resource_level
R1,Lang1,l1,City1,high
R2,Lang2,l2,City2,medium
R3,Lang3,l3,City3,medium
""",
    "table2_zero_shot.csv": """model,region,metric,value,setting
M1,R1,bleu,0.300,zero-shot
M1,R2,bleu,0.100,zero-shot
M1,R3,bleu,0.200,zero-shot
M2,R1,bleu,0.500,zero-shot
M2,R2,bleu,0.300,zero-shot
M2,R3,bleu,0.000,zero-shot
""",
    "table3_fine_tuned.csv": """model,region,metric,value,setting
Llama-3.1-8B-Instruct,R1,bleu,0.100,fine-tuning
Llama-3.1-8B-Instruct,R2,bleu,0.200,fine-tuning
Llama-3.1-8B-Instruct-FT,R1,bleu,0.150,fine-tuning
Llama-3.1-8B-Instruct-FT,R2,bleu,0.100,fine-tuning
""",
    "table4_llm_judge.csv": """model,region,metric,value,setting
M1,R1,gpt4o_judge_1to10,6.00,zero-shot
M1,R2,gpt4o_judge_1to10,4.00,zero-shot
M1,R3,gpt4o_judge_1to10,5.00,zero-shot
M2,R1,gpt4o_judge_1to10,8.00,zero-shot
M2,R2,gpt4o_judge_1to10,7.00,zero-shot
M2,R3,gpt4o_judge_1to10,3.00,zero-shot
""",
    "table5_human_eval.csv": """model,region,metric,value,setting
GPT-4o,R1,human_accuracy_1to5,4.00,zero-shot
GPT-4o,R2,human_accuracy_1to5,3.00,zero-shot
GPT-4o,R1,human_usefulness_1to5,5.00,zero-shot
GPT-4o,R2,human_usefulness_1to5,2.00,zero-shot
""",
    "table1_dataset.csv": """region,city,seed_queries,qa_pairs_collected,train,dev,test,total_annotated
R1,City1,10,100,5,2,3,10
R2,City2,20,200,,,7,7
R3,City3,30,300,1,1,1,3
""",
    "table24_answer_edit_distance.csv": """region,split,normalized_levenshtein
R1,train,0.100
R1,dev,0.200
R1,test,0.300
R2,test,0.400
R3,train,0.300
R3,test,0.500
""",
    "table18_lengths.csv": """region,question_words_avg,answer_words_avg
R1,5.0,30.0
R2,6.0,31.0
R3,7.0,32.0
""",
    "table23_additional_pairs.csv": """language,location,qa_pairs
Lang1,Place1,100
Lang1,Place2,250
Lang2,Place3,40
""",
    "section3_topics.csv": """topic
Food & Drinks
Travel
""",
    "section4_domain_reliability.csv": """outcome,domains
checked,8
very_reliable,6
eliminated,2
""",
    "section5_models.csv": """model,weights
M1,closed
M2,open
GPT-4o,closed
""",
}


@pytest.fixture
def small_folder(tmp_path) -> Path:
    folder = tmp_path / "nativqa"
    folder.mkdir()
    for name, text in SMALL.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def small(small_folder):
    con = duckdb.connect()
    nativqa_tables.write_tables(con, small_folder)
    yield con
    con.close()


def test_write_tables_counts_rows_and_reloads(small_folder):
    con = duckdb.connect()
    expected = {
        "nativqa_regions": 3,
        "nativqa_results": 20,
        "nativqa_dataset": 3,
        "nativqa_edit_distance": 6,
        "nativqa_lengths": 3,
        "nativqa_additional_pairs": 3,
        "nativqa_topics": 2,
        "nativqa_domain_reliability": 3,
        "nativqa_models": 3,
        "nativqa_source_files": 12,
    }
    assert nativqa_tables.write_tables(con, small_folder) == expected
    assert nativqa_tables.write_tables(con, small_folder) == expected
    assert con.execute("SELECT count(*) FROM nativqa_results").fetchone()[0] == 20


def test_model_and_region_averages(small):
    models = nativqa.model_averages(small)
    assert models.select("model", "n_regions", "bleu", "gpt4o_judge_1to10").rows() == [
        ("M1", 3, 0.2, 5.0),
        ("M2", 3, 0.2667, 6.0),
    ]
    assert models["bertscore_f1"].null_count() == 2  # not in the hand-made Table 2
    regions = nativqa.region_averages(small)
    assert regions.select("region", "resource_level", "n_models", "bleu", "gpt4o_judge_1to10").rows() == [
        ("R1", "high", 2, 0.4, 7.0),
        ("R2", "medium", 2, 0.2, 5.5),
        ("R3", "medium", 2, 0.1, 4.0),
    ]


def test_average_by_resource_level(small):
    levels = nativqa.average_by_resource_level(small, "bleu")
    assert levels.rows() == [
        ("high", "M1", 1, 0.3),
        ("high", "M2", 1, 0.5),
        ("high", "all models", 1, 0.4),
        ("medium", "M1", 2, 0.15),
        ("medium", "M2", 2, 0.15),
        ("medium", "all models", 2, 0.15),
    ]
    assert levels.columns[-1] == "average_bleu"


def test_fine_tuning_deltas(small):
    deltas = nativqa.fine_tuning_deltas(small)
    assert deltas.select("region", "metric", "base", "fine_tuned", "delta", "relative_change_pct").rows() == [
        ("R1", "bleu", 0.1, 0.15, 0.05, 50.0),
        ("R2", "bleu", 0.2, 0.1, -0.1, -50.0),
    ]
    summary = nativqa.fine_tuning_summary(deltas)
    assert summary.rows(named=True) == [
        {
            "metric": "bleu",
            "n_regions": 2,
            "base_average": 0.15,
            "fine_tuned_average": 0.125,
            "delta_average": -0.025,
            "regions_improved": 1,
            "regions_worse": 1,
        }
    ]


def test_human_ratings_average_over_rated_regions(small):
    human = nativqa.human_ratings(small)
    assert human.select("region", "human_accuracy_1to5", "human_usefulness_1to5").rows() == [
        ("R1", 4.0, 5.0),
        ("R2", 3.0, 2.0),
        ("Average", 3.5, 3.5),
    ]
    assert nativqa.regions_without(small, nativqa_files.HUMAN_METRICS) == ["R3"]
    assert "R3" in nativqa.human_coverage_note(small)


def test_dataset_totals_skip_missing_splits(small):
    sizes = nativqa.dataset_sizes(small)
    assert sizes.select(
        "region", "seed_queries", "qa_pairs_collected", "train", "dev", "test", "total_annotated"
    ).rows() == [
        ("R1", 10, 100, 5, 2, 3, 10),
        ("R2", 20, 200, None, None, 7, 7),
        ("R3", 30, 300, 1, 1, 1, 3),
        ("Total", 60, 600, 6, 3, 11, 20),
    ]


def test_lengths_and_additional_pairs_add_their_average_and_total(small):
    assert nativqa.lengths(small).select("region", "question_words_avg", "answer_words_avg").rows() == [
        ("R1", 5.0, 30.0),
        ("R2", 6.0, 31.0),
        ("R3", 7.0, 32.0),
        ("Average", 6.0, 31.0),
    ]
    assert nativqa.additional_pairs(small).rows() == [
        ("Lang1", "Place1", 100),
        ("Lang1", "Place2", 250),
        ("Lang2", "Place3", 40),
        ("Total", None, 390),
    ]


def test_dataset_total_counts_regions_and_languages(small):
    total = nativqa.dataset_sizes(small).filter(pl.col("region") == "Total").row(0, named=True)
    assert (total["n_regions"], total["n_languages"]) == (3, 3)


def test_figure5_names_only_bleu(small):
    assert nativqa.resource_level_name("bleu") == "figure5_bleu_by_resource_level"
    assert nativqa.resource_level_name("rouge1") == "rouge1_by_resource_level"
    chart = nativqa_charts.resource_level_chart(nativqa.average_by_resource_level(small, "rouge1"), "rouge1")
    title = chart.to_dict()["title"]
    assert "beyond the paper" in title and "Figure 5" in title  # says whose figure it is not


def test_edit_distance_averages(small):
    table = nativqa.edit_distances(small)
    assert table.select("region", "train", "dev", "test", "n_values", "region_average").rows() == [
        ("R1", 0.1, 0.2, 0.3, 3, 0.2),
        ("R2", None, None, 0.4, 1, 0.4),
        ("R3", 0.3, None, 0.5, 2, 0.4),
        ("Average", 0.2, 0.2, 0.4, 6, 0.3),
    ]
    assert nativqa.split_averages(small).rows() == [("train", 2, 0.2), ("dev", 1, 0.2), ("test", 3, 0.4)]


def test_summary_is_computed_from_the_tables(small):
    deltas = nativqa.fine_tuning_deltas(small)
    text = nativqa.summary(
        nativqa.model_averages(small),
        nativqa.region_averages(small),
        nativqa.average_by_resource_level(small),
        nativqa.fine_tuning_summary(deltas),
        nativqa.human_ratings(small),
        nativqa.dataset_sizes(small),
    )
    assert "**20 annotated QA pairs** in 3 language-region pairs" in text
    assert "**M2** gets the best GPT-4o-judge score (6.00 of 10) and M1 the worst (5.00)" in text
    assert "BERTScore" not in text  # no BERTScore in the hand-made Table 2
    assert "R1 is the easiest region for the judge (7.00) and R3 the hardest (4.00)" in text
    assert "high 0.400, medium 0.150" in text
    assert "BLEU improved in 1 of 2 regions (average change -0.025)" in text


def test_heatmap_orders_regions_and_models(small):
    cells = nativqa.scores(small, "bleu")
    spec = nativqa_charts.nativqa_score_heatmap(cells, "bleu", ["R3", "R2", "R1"], ["M2", "M1"], 2).to_dict()
    layer = spec["layer"][0]["encoding"]
    assert layer["x"]["sort"] == ["R3", "R2", "R1"] and layer["y"]["sort"] == ["M2", "M1"]
    assert spec["layer"][1]["encoding"]["text"]["format"] == ".3f"


def test_require_tables_names_what_is_missing():
    with pytest.raises(LookupError, match="no tables nativqa_regions.*make db"):
        nativqa.require_tables(duckdb.connect())


# ---------------------------------------------------------------- malformed input


def rewrite(folder: Path, name: str, old: str, new: str) -> None:
    path = folder / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    "name, old, new, message",
    [
        (
            "table2_zero_shot.csv",
            "model,region,metric,value,setting",
            "model,region,metric,score,setting",
            "table2_zero_shot.csv, line 1 (header): missing column(s) 'value'",
        ),
        (
            "table2_zero_shot.csv",
            "M1,R2,bleu",
            "M1,Atlantis,bleu",
            "table2_zero_shot.csv, line 3, field 'region': unknown region 'Atlantis'",
        ),
        (
            "table4_llm_judge.csv",
            "M1,R1,gpt4o_judge_1to10,6.00",
            "M1,R1,gpt4o_judge_1to10,six",
            "table4_llm_judge.csv, line 2, field 'value': 'six' is not a number",
        ),
        (
            "table4_llm_judge.csv",
            "M1,R1,gpt4o_judge_1to10,6.00",
            "M1,R1,gpt4o_judge_1to10,60.0",
            "table4_llm_judge.csv, line 2, field 'value': 60.0 is outside the range 1 to 10",
        ),
        (
            "table5_human_eval.csv",
            "human_usefulness_1to5,2.00",
            "human_accuracy_1to5,2.00",
            "table5_human_eval.csv, line 5: duplicate model, region, metric, setting",
        ),
        (
            "table1_dataset.csv",
            "R1,City1,10,100,5,2,3,10",
            "R1,City1,10,100,5,2,3,11",
            "table1_dataset.csv, line 2, field 'total_annotated': 11 is not train + dev + test = 10",
        ),
        (
            "table1_dataset.csv",
            "R3,City3,30",
            "R3,City3,thirty",
            "table1_dataset.csv, line 4, field 'seed_queries': is 'thirty'; expected a whole number",
        ),
        (
            "table24_answer_edit_distance.csv",
            "R3,train",
            "R3,validation",
            "table24_answer_edit_distance.csv, line 6, field 'split': unknown split 'validation'",
        ),
        (
            "table1_dataset.csv",
            "R2,City2,20",
            "R2,Elsewhere,20",
            "table1_dataset.csv, line 3, field 'city': 'Elsewhere' differs from 'City2' in regions.csv",
        ),
        (
            "regions.csv",
            "R3,Lang3,l3,City3,medium",
            "R3,Lang3,l3,City3,tiny",
            "regions.csv, line 4, field 'resource_level': unknown resource_level 'tiny'",
        ),
        (
            "table23_additional_pairs.csv",
            "Lang1,Place2,250",
            "Lang1,Place2,many",
            "table23_additional_pairs.csv, line 3, field 'qa_pairs': is 'many'; expected a whole number",
        ),
        (
            "table23_additional_pairs.csv",
            "Lang2,Place3,40",
            "Lang1,Place1,40",
            "table23_additional_pairs.csv, line 4: duplicate language, location ('Lang1', 'Place1')",
        ),
        ("section3_topics.csv", "Travel", "Food & Drinks", "section3_topics.csv, line 3: duplicate topic"),
        (
            "section4_domain_reliability.csv",
            "eliminated,2",
            "eliminated,3",
            "section4_domain_reliability.csv, field 'domains': very_reliable + eliminated = 9 is not checked = 8",
        ),
        (
            "section4_domain_reliability.csv",
            "eliminated,2",
            "removed,2",
            "section4_domain_reliability.csv, line 4, field 'outcome': unknown outcome 'removed'",
        ),
        (
            "section5_models.csv",
            "M2,open",
            "M2,free",
            "section5_models.csv, line 3, field 'weights': unknown weights 'free'",
        ),
        (
            "section5_models.csv",
            "M2,open",
            "M3,open",
            "section5_models.csv, line 3, field 'model': 'M3' has no zero-shot result",
        ),
    ],
)
def test_malformed_csv_names_file_line_and_field(small_folder, name, old, new, message):
    rewrite(small_folder, name, old, new)
    con = duckdb.connect()
    with pytest.raises(InputError) as caught:
        nativqa_tables.write_tables(con, small_folder)
    assert message in str(caught.value)
    assert con.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0] == 0, "nothing is written"


def test_every_problem_is_reported_at_once(small_folder):
    rewrite(small_folder, "table2_zero_shot.csv", "M1,R2,bleu,0.100", "M1,Atlantis,bleu,abc")
    (small_folder / "table18_lengths.csv").unlink()
    with pytest.raises(InputError) as caught:
        nativqa_tables.write_tables(duckdb.connect(), small_folder)
    text = str(caught.value)
    assert "3 problems" in text
    assert "field 'region'" in text and "field 'value'" in text and "table18_lengths.csv: file not found" in text


# ---------------------------------------------------------------- the notebook


def test_notebook_runs_on_a_database_with_the_nativqa_tables(loaded_database, tmp_path):
    run.run_notebook(
        "07_nativqa_results",
        db_path=loaded_database,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
    )
    out = tmp_path / "figures" / "07_nativqa_results"
    for name in (
        "table2_bertscore_f1",
        "table2_bleu",
        "table2_rouge1",
        "table4_gpt4o_judge",
        "figure5_bleu_by_resource_level",
    ):
        assert (out / f"{name}.png").stat().st_size > 0 and (out / f"{name}.svg").is_file()
        assert (out / f"{name}.pdf").is_file()
    csv = pl.read_csv(nativqa_files.FOLDER / "table1_dataset.csv")
    total = pl.read_csv(out / "table1_dataset_sizes.csv").filter(pl.col("region") == "Total")
    assert total["total_annotated"].item() == csv["total_annotated"].sum()
    judge = pl.read_csv(nativqa_files.FOLDER / "table4_llm_judge.csv")
    model_averages = pl.read_csv(out / "model_averages.csv")
    by_hand = judge.group_by("model").agg(pl.col("value").mean().round(4)).sort("model")
    assert model_averages.select("model", pl.col("gpt4o_judge_1to10").alias("value")).sort("model").equals(by_hand)
    lengths = pl.read_csv(out / "table18_lengths.csv").filter(pl.col("region") == "Average")
    assert lengths["answer_words_avg"].item() == round(
        pl.read_csv(nativqa_files.FOLDER / "table18_lengths.csv")["answer_words_avg"].mean(), 4
    )
    additional = pl.read_csv(out / "table23_additional_pairs.csv")
    assert additional.filter(pl.col("language") == "Total")["qa_pairs"].item() == 44414  # the paper prints 55,702
    html = (tmp_path / "reports" / "07_nativqa_results.html").read_text(encoding="utf-8")
    assert "annotated QA pairs" in html


def test_the_counts_of_the_prose_come_from_its_lists(small):
    counts = dict(nativqa.text_counts(small).select("quantity", "value").iter_rows())
    assert counts == {"topics": 2, "closed_models": 2, "open_models": 1, "additional_locations": 3}
    shares = nativqa.domain_reliability(small)
    assert shares.rows() == [("checked", 8, 100.0), ("very_reliable", 6, 75.0), ("eliminated", 2, 25.0)]
