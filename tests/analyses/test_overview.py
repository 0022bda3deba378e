"""The overview's numbers against a recomputation by hand from the raw release JSON, sharing no code with it."""

import collections
import csv
import gzip
import json
import statistics

import polars as pl
import pytest

from analysis.analyses import dimensions, overview
from analysis.viz import overview_charts


@pytest.fixture(scope="module")
def raw_entries(release_folder):
    """(language, question type, entry) for every entry of every dataset file, read with plain json."""
    out = []
    for path in sorted((release_folder / "datasets").iterdir()):
        _, qtype, language = path.name.split(".")[0].split("-")
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for entry in json.load(fh)["entries"]:
                out.append((language.capitalize(), qtype, entry))
    return out


def test_table4_equals_a_recomputation_from_raw_json(con, raw_entries):
    questions, answers = collections.defaultdict(list), collections.defaultdict(list)
    for language, qtype, entry in raw_entries:
        text = entry["question"]["translations"][language]["text"]
        questions[language, qtype].append(len(text.encode("utf-8")))
        for answer in entry["answers"]:
            if answer["prompting_state"]["model_name"] == "Human":
                answers[language, qtype].append(len(answer["translations"][answer["language"]]["text"].encode("utf-8")))
    table = {
        (r["language"], r["question_type"]): r
        for r in overview.question_length_table(con, "calmqa").iter_rows(named=True)
    }
    assert len(table) == len(questions) == 46
    for key, lengths in questions.items():
        row = table[key]
        assert row["n_questions"] == len(lengths)
        assert row["question_bytes_mean"] == pytest.approx(statistics.fmean(lengths), abs=0.05 + 1e-9)
        assert row["question_bytes_std"] == pytest.approx(statistics.pstdev(lengths), abs=0.05 + 1e-9)
        human = answers.get(key, [])
        assert row["n_human_answers"] == len(human)
        if human:
            assert row["answer_bytes_mean"] == pytest.approx(statistics.fmean(human), abs=0.05 + 1e-9)
            assert row["answer_bytes_std"] == pytest.approx(statistics.pstdev(human), abs=0.05 + 1e-9)
        else:
            assert row["answer_bytes_mean"] is None


def test_figure5_equals_a_recomputation_from_raw_json(con, raw_entries):
    expected = collections.Counter(
        (entry["question"]["category"], language) for language, qtype, entry in raw_entries if qtype == "specific"
    )
    table = overview.category_counts(con, "calmqa")
    assert table.height == 12 * 23
    got = {(r["category"], r["language"]): r["n_questions"] for r in table.iter_rows(named=True)}
    assert {k: v for k, v in got.items() if v} == dict(expected)
    assert sum(got.values()) == 1471


def test_summary_is_computed_from_the_tables(con):
    lengths = overview.question_length_table(con, "calmqa")
    orders = dimensions.Orders.of(con)
    text = overview.summary(lengths, overview.category_counts(con, "calmqa"), orders, "calmqa")
    assert "2,644 questions" in text and "1,471 culturally specific" in text and "1,173 culturally agnostic" in text
    # the labels are the study's text, made inert for Markdown (`human\\-collected` shows as human-collected)
    assert "Spanish has the most culturally specific human\\-collected questions (102)" in text


def test_language_order_puts_high_resource_first(con):
    order = dimensions.language_order(con)
    assert len(order) == 23 and order[0] == "Arabic" and order[11] == "Afar"


# ---------------------------------------------------------------- the counts of the paper's text, Table 10, Figure 1


def test_dataset_counts_from_raw_json(con, raw_entries, release_folder):
    counts = dict(overview.dataset_counts(con).select("quantity", "value").iter_rows())
    specific = [(language, e) for language, qtype, e in raw_entries if qtype == "specific"]
    low = {
        "Afar",
        "Balochi",
        "Faroese",
        "Fijian",
        "Hiligaynon",
        "Kirundi",
        "Papiamento",
        "Pashto",
        "Samoan",
        "Tongan",
        "Tswana",
        "Wolof",
    }
    writers = collections.defaultdict(set)
    for language, entry in specific:
        if language in low:
            writers[language].add(entry["question"]["collector"])
    assert counts["specific_questions"] == len(specific) == 1471
    assert counts["specific_questions_low_resource"] == sum(language in low for language, _ in specific) == 548
    assert counts["specific_questions_high_resource"] == 923 and counts["specific_high_resource_languages"] == 11
    assert counts["low_resource_question_writers"] == len(set().union(*writers.values()))
    assert (counts["low_resource_writers_per_language_min"], counts["low_resource_writers_per_language_max"]) == (
        min(map(len, writers.values())),
        max(map(len, writers.values())),
    )
    assert (
        counts["agnostic_questions"] == len({e["question"]["name"] for _, q, e in raw_entries if q == "agnostic"}) == 51
    )
    assert counts["agnostic_translation_languages"] == 22 and counts["languages"] == 23
    # The questions of the human evaluation are those all_ratings.csv rates (the release's own flag marks every
    # language's copy of a rated agnostic question).
    with open(release_folder / "all_ratings.csv", newline="", encoding="utf-8") as fh:
        rated = {(row["language"], " ".join(row["question"].split())) for row in csv.DictReader(fh)}
    assert counts["human_evaluated_questions"] == len(rated) == 100
    assert counts["human_evaluated_languages"] == len({language for language, _ in rated}) == 5


def test_top_categories_count_ties_and_levels(con):
    top = overview.top_categories(con, "calmqa")
    assert top.group_by("language").len()["len"].max() == 1  # no tie in the release
    counts = overview.top_category_counts(top, con)
    religion = counts.filter(
        (pl.col("resource_level") == "low") & (pl.col("top_category") == "religion, beliefs, customs, and traditions")
    ).row(0, named=True)
    assert (religion["n_languages"], religion["n_languages_in_level"]) == (10, 12)


def test_table10_speakers_as_numbers(con):
    table = overview.language_table(con)
    kirundi = table.filter(pl.col("language") == "Kirundi").row(0, named=True)
    assert (kirundi["speakers"], kirundi["speakers_low"], kirundi["speakers_high"]) == ("12-13M", 12e6, 13e6)
    faroese = table.filter(pl.col("language") == "Faroese").row(0, named=True)
    assert faroese["speakers_low"] == faroese["speakers_high"] == 69e3
    assert table.height == 23 and table["speakers_low"].null_count() == 0


def test_squarify_tiles_the_frame_with_the_given_areas():
    areas = [30.0, 20.0, 15.0, 15.0, 10.0, 6.0, 4.0]
    boxes = overview.squarify(areas, 0.0, 0.0, 10.0, 10.0)
    assert [round((x1 - x0) * (y1 - y0), 9) for x0, y0, x1, y1 in boxes] == areas
    assert all(0 <= x0 < x1 <= 10 + 1e-9 and 0 <= y0 < y1 <= 10 + 1e-9 for x0, y0, x1, y1 in boxes)
    for i, a in enumerate(boxes):  # no two boxes overlap
        for b in boxes[i + 1 :]:
            assert min(a[2], b[2]) - max(a[0], b[0]) <= 1e-9 or min(a[3], b[3]) - max(a[1], b[1]) <= 1e-9


def test_treemap_boxes_are_proportional_to_the_questions(con):
    boxes = overview.category_treemap_table(con, "calmqa")
    assert boxes["n_questions"].sum() == 1471
    area = (boxes["x1"] - boxes["x0"]) * (boxes["y1"] - boxes["y0"])
    assert (area / boxes["n_questions"]).std() < 1e-3 * (area / boxes["n_questions"]).mean()
    spec = overview_charts.category_treemap(boxes, title="t").to_dict()
    assert spec["layer"][1]["mark"]["lineBreak"] == "\n"
