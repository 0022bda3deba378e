"""The overview's numbers against a recomputation by hand from the raw release JSON, sharing no code with it."""

import collections
import gzip
import json
import statistics

import pytest

from analysis import overview


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
    table = {(r["language"], r["question_type"]): r for r in overview.question_length_table(con).iter_rows(named=True)}
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
    table = overview.specific_category_counts(con)
    assert table.height == 12 * 23
    got = {(r["category"], r["language"]): r["n_questions"] for r in table.iter_rows(named=True)}
    assert {k: v for k, v in got.items() if v} == dict(expected)
    assert sum(got.values()) == 1471


def test_summary_is_computed_from_the_tables(con):
    lengths = overview.question_length_table(con)
    text = overview.summary(lengths, overview.specific_category_counts(con))
    assert "2,644 questions" in text and "1,471 culturally specific" in text and "1,173 culturally agnostic" in text
    assert "Spanish has the most culturally specific questions (102)" in text


def test_language_order_puts_high_resource_first(con):
    order = overview.language_order(con)
    assert len(order) == 23 and order[0] == "Arabic" and order[11] == "Afar"
