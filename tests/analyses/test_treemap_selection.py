"""The categories of Figure 1's treemap (`overview.category_treemap_table`): the release's questions of the
selection only (the paper's human-collected culturally specific questions for its study, every question for any
other), categories without a question left out, the largest first; counted by hand on a small database."""

import duckdb
import pytest

from analysis.analyses import overview
from analysis.analyses.question_selection import FIGURE6_SELECTION

_, CULTURAL, HUMAN = FIGURE6_SELECTION


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE categories (category VARCHAR, description VARCHAR, examples VARCHAR[])")
    con.execute(
        "INSERT INTO categories VALUES ('art', 'Art', ['a painting']), ('food', 'Food', ['a dish']), "
        "('law', 'Law', ['a court'])"
    )
    con.execute(
        "CREATE TABLE questions (question_id INTEGER, category VARCHAR, question_type VARCHAR, collection VARCHAR, "
        "import_position INTEGER)"
    )
    rows = [
        (1, "food", CULTURAL, HUMAN, None),
        (2, "food", CULTURAL, HUMAN, None),
        (3, "food", CULTURAL, "other", None),  # another collection
        (4, "art", CULTURAL, HUMAN, None),
        (5, "art", "agnostic", HUMAN, None),  # another question type
        (6, "art", CULTURAL, HUMAN, 1),  # imported: never in a paper's figure
        (7, "art", "agnostic", "other", None),
    ]
    con.executemany("INSERT INTO questions VALUES (?, ?, ?, ?, ?)", rows)
    yield con
    con.close()


def test_the_paper_s_treemap_counts_its_selection_of_the_release_s_questions(con):
    table = overview.category_treemap_table(con, "calmqa", width=30.0, height=10.0)
    assert table.select("category", "example", "n_questions", "pct_of_questions").rows() == [
        ("food", "a dish", 2, 66.7),
        ("art", "a painting", 1, 33.3),
    ]  # law: no question, left out


def test_a_study_s_treemap_counts_every_question_of_the_release(con):
    table = overview.category_treemap_table(con, None, width=30.0, height=10.0)
    assert table.select("category", "n_questions").rows() == [("art", 3), ("food", 3)]  # a tie: by name


def test_the_boxes_tile_the_frame_largest_first(con):
    table = overview.category_treemap_table(con, "calmqa", width=30.0, height=10.0)
    # areas 200 and 100 of a 30 x 10 frame: the first box takes two thirds of the width
    assert table.select("x0", "y0", "x1", "y1").rows() == [(0.0, 0.0, 20.0, 10.0), (20.0, 0.0, 30.0, 10.0)]
