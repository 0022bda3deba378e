"""The SQL of what reads a built database, at the cases each condition decides: the answers with their
ratings (`answers.load_answers`), the words on a study's ratings (`ratings.summary`), the questions per
category of a selection (`topics.category_counts`) and the encoding the surface metrics name
(`surface.tokenizer_markdown`).

Every test reads the tiny database (tests/tiny_release.py), whose eight answers are numbered 1 to 8: 2 and 5
are the human references of the German questions `german:0` (2) and `german:1` (3), 4 and 7 the empty answers
of GPT-4o to them, 3 and 6 Claude 3 Opus's; 1 and 8 are GPT-4 Turbo's to `non_cultural:0` in English (1) and
German (4). Its one rating (annotator 3) rates answer 3 on four criteria: `rating` 4, `factuality` none,
`omissions` minor and `language_correct` yes.
"""

import shutil

import duckdb
import pytest

from analysis import store
from analysis.analyses import answers, ratings, surface, topics


@pytest.fixture
def con(tiny_database):
    connection = store.connect(tiny_database)
    yield connection
    connection.close()


def _by_answer(frame, column):
    return dict(zip(frame["answer_id"].to_list(), frame[column].to_list()))


def test_every_answer_is_loaded_with_the_human_references_named_and_the_empty_answers_marked(con):
    """The human references have no model (and so no row of `models`): they are loaded all the same."""
    frame = answers.load_answers(con)
    assert sorted(frame["answer_id"].to_list()) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert _by_answer(frame, "model_name") == {
        1: "GPT-4 Turbo",
        2: "human reference",
        3: "Claude 3 Opus",
        4: "GPT-4o",
        5: "human reference",
        6: "Claude 3 Opus",
        7: "GPT-4o",
        8: "GPT-4 Turbo",
    }
    assert {aid for aid, empty in _by_answer(frame, "is_empty").items() if empty} == {4, 7}


def test_a_rating_s_level_is_placed_on_its_own_criterion_s_scale(con):
    """`none` and `minor` are levels of both factuality and omissions, `4` and `yes` of one criterion each:
    each level gets the position it has on the criterion it was given for (criterion_levels)."""
    levels = _by_answer(answers.load_answers(con), "rating_levels")
    assert sorted((level["criterion"], level["position"]) for level in levels[3]) == [
        ("factuality", 3),
        ("language_correct", 3),
        ("omissions", 2),
        ("rating", 4),
    ]
    assert all(levels[aid] == [] for aid in (1, 2, 4, 5, 6, 7, 8))


def test_the_ratings_summary_counts_criteria_once_and_the_most_annotators_of_an_answer(tiny_database, tmp_path):
    """A second annotator (5) rates answer 3 on `rating` alone: two ratings of one answer by two annotators on
    four criteria, and up to two annotators on a criterion (answer 3's `rating`; one on the three others)."""
    path = tmp_path / "calmqa.duckdb"
    shutil.copy(tiny_database, path)
    with duckdb.connect(str(path)) as con:
        con.execute("INSERT INTO ratings VALUES (2, 2, 3, 'claude-3-opus', '5', 'rating', '2')")
    with store.connect(path) as con:
        text = ratings.summary(con, {}, {})
    assert text == (
        "**2 ratings** of 1 answers by 2 annotators in 1 language, on 4 criteria. "
        "Several annotators rated some answers (up to 2 on a criterion): the distributions count an answer once "
        "per annotator who rated it."
    )


def test_category_counts_of_one_question_type_count_only_its_questions(con):
    """The specific questions are the two German ones, one in each of their categories; the agnostic ones
    (`other`) are left out."""
    counts = topics.category_counts(con, "language", question_type="specific")
    assert counts.groups == ("German",)
    assert counts.categories == ("geography, tourism, and climate", "language, art and literature")
    assert counts.counts.tolist() == [[1.0, 1.0]]


def test_the_tokenizer_is_named_once_however_many_answers_it_counted(con):
    """Six answers have surface verdicts, all counted with o200k_base."""
    assert surface.tokenizer_markdown(con).startswith(
        "Repetitions and token counts use the **o200k_base** encoding, as the paper did"
    )
