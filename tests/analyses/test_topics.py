"""Topic similarity: the Bhattacharyya coefficient's properties, and the module's matrix on the real
snapshot against one recomputed in plain Python from the questions table."""

import math
from collections import Counter, defaultdict

import numpy as np
import polars as pl
import pytest
from orders import CALMQA_ORDERS

from analysis.analyses import topics
from analysis.viz import topic_charts


def counts_frame(rows: list[tuple[str, str, int]]) -> pl.DataFrame:
    schema = {"language": pl.String, "category": pl.String, "n_questions": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def test_no_matrix_note_names_the_selection():
    assert topics.no_matrix_note("language", 10, "specific", "human", CALMQA_ORDERS) == (
        # the labels are made inert for Markdown: `human\-collected` shows as human-collected
        "No language group has 10 or more culturally specific human\\-collected questions: there is no matrix to draw."
    )


def test_identical_distributions_have_coefficient_one():
    bc = topics.bhattacharyya_matrix(np.array([[3, 1, 0, 6], [6, 2, 0, 12]]))
    assert bc[0, 1] == pytest.approx(1.0)
    assert np.diag(bc) == pytest.approx([1.0, 1.0])


def test_disjoint_distributions_have_coefficient_zero():
    bc = topics.bhattacharyya_matrix(np.array([[5, 2, 0, 0], [0, 0, 1, 9]]))
    assert bc[0, 1] == 0.0
    assert topics.hellinger(bc)[0, 1] == pytest.approx(1.0)


def test_matrix_is_symmetric_and_within_unit_interval():
    rng = np.random.default_rng(7)
    weights = rng.integers(0, 20, size=(15, 12))
    weights[:, 0] += 1  # every group has at least one question
    bc = topics.bhattacharyya_matrix(weights)
    assert np.array_equal(bc, bc.T)
    assert (bc >= 0).all() and (bc <= 1).all()
    assert np.diag(bc) == pytest.approx(np.ones(15))


def test_invariant_to_category_order():
    weights = np.array([[4, 0, 1, 7, 2], [1, 3, 3, 0, 5], [0, 0, 9, 1, 1]])
    permutation = [3, 0, 4, 2, 1]
    assert topics.bhattacharyya_matrix(weights[:, permutation]) == pytest.approx(topics.bhattacharyya_matrix(weights))


def test_hand_computed_example():
    # p = (1/2, 1/2, 0), q = (1/4, 1/4, 1/2): BC = 2 * sqrt(1/8) = 1/sqrt(2).
    bc = topics.bhattacharyya_matrix(np.array([[2, 2, 0], [1, 1, 2]]))
    assert bc[0, 1] == pytest.approx(1 / math.sqrt(2))
    assert topics.hellinger(bc)[0, 1] == pytest.approx(math.sqrt(1 - 1 / math.sqrt(2)))


def test_category_missing_from_a_group_counts_as_zero():
    # Fijian has no row at all for "history": it must count as zero questions, not fail or drop the category.
    frame = counts_frame([("German", "food", 2), ("German", "history", 2), ("Fijian", "food", 1)])
    distributions = topics.Distributions.from_counts(frame, "language")
    assert distributions.groups == ("Fijian", "German")
    assert distributions.categories == ("food", "history")
    assert distributions.counts.tolist() == [[1, 0], [2, 2]]
    similarity = topics.similarity_table(distributions)
    pair = similarity.filter((pl.col("group_a") == "Fijian") & (pl.col("group_b") == "German"))
    assert pair["bc"].item() == pytest.approx(math.sqrt(0.5))
    table = distributions.table().filter(pl.col("language") == "Fijian")
    assert table.select("category", "n_questions", "share").rows() == [("food", 1, 1.0), ("history", 0, 0.0)]


@pytest.mark.parametrize("group_by", ["language", "resource_level"])
def test_a_category_may_be_called_like_any_column(group_by):
    """Issue 34: a topic category called `language` (a natural one for questions about language) made the
    category pivot collide with the group column. Categories and groups are data, never column names."""
    frame = pl.DataFrame(
        [("A", "language", 2), ("A", "resource_level", 1), ("B", "n_questions", 3), ("B", '"', 1)],
        schema={group_by: pl.String, "category": pl.String, "n_questions": pl.Int64},
        orient="row",
    )
    distributions = topics.Distributions.from_counts(frame, group_by)
    assert distributions.groups == ("A", "B")
    assert distributions.categories == ('"', "language", "n_questions", "resource_level")
    expected = {("A", "language"): 2, ("A", "resource_level"): 1, ("B", "n_questions"): 3, ("B", '"'): 1}
    table = distributions.table()
    assert {(g, c): n for g, c, n in table.select(group_by, "category", "n_questions").rows() if n} == expected
    assert table["n_questions"].sum() == 7


def test_from_counts_does_not_depend_on_row_order():
    rows = [("A", "x", 1), ("B", "y", 4), ("A", "y", 3), ("C", "x", 2), ("B", "z", 1)]
    forward = topics.Distributions.from_counts(counts_frame(rows), "language")
    backward = topics.Distributions.from_counts(counts_frame(rows[::-1]), "language")
    assert forward.groups == backward.groups and forward.categories == backward.categories
    assert np.array_equal(forward.counts, backward.counts)


def test_group_without_questions_is_an_error():
    with pytest.raises(ValueError, match="at least one question"):
        topics.bhattacharyya_matrix(np.array([[1, 2], [0, 0]]))


def test_split_by_size_reports_the_groups_left_out():
    frame = counts_frame([("A", "x", 5), ("A", "y", 5), ("B", "x", 3), ("C", "y", 10)])
    kept, dropped = topics.split_by_size(topics.Distributions.from_counts(frame, "language"), 10)
    assert kept.groups == ("A", "C")
    assert dropped.rows() == [("B", 3)]


def test_extreme_pairs_are_distinct_and_ranked():
    frame = counts_frame([("A", "x", 1), ("B", "x", 1), ("B", "y", 1), ("C", "y", 1), ("D", "x", 2), ("D", "y", 1)])
    similarity = topics.similarity_table(topics.Distributions.from_counts(frame, "language"))
    most, least = topics.extreme_pairs(similarity, n=2)
    assert most.select("group_a", "group_b").rows() == [("B", "D"), ("A", "D")]
    assert least.select("group_a", "group_b").rows()[0] == ("A", "C")
    assert least["bc"][0] == 0.0
    assert most["rank"].to_list() == [1, 2]
    assert (pl.concat([most, least])["group_a"] != pl.concat([most, least])["group_b"]).all()


@pytest.mark.parametrize(
    "rows, expected",
    [
        # every pair alike: said once, no pair named most and least similar
        (
            [("A", "x", 2), ("B", "x", 3), ("C", "x", 1)],
            "Every pair has the same coefficient (1.00): no pair is more or less similar than another.",
        ),
        # three pairs tie as the most similar, three as the least
        (
            [("A", "x", 1), ("B", "x", 1), ("C", "x", 1), ("D", "x", 1), ("D", "y", 3)],
            "3 pairs tie as the most similar (1.00 each: A and B; A and C; B and C); 3 pairs tie as the least "
            "similar (0.50 each: A and D; B and D; C and D).",
        ),
        # more tied pairs than are named
        (
            [("A", "x", 1), ("B", "x", 1), ("C", "x", 1), ("D", "x", 1), ("E", "y", 1)],
            "6 pairs tie as the most similar (1.00 each: A and B; A and C; A and D and 3 more); 4 pairs tie",
        ),
        (
            [("A", "x", 1), ("B", "x", 1), ("C", "y", 1)],
            "The most similar pair is A and B (1.00); 2 pairs tie as the least similar (0.00 each: A and C; B and C).",
        ),
    ],
)
def test_the_summary_says_ties_as_ties(rows, expected):
    distributions = topics.Distributions.from_counts(counts_frame(rows), "language")
    text = topics.summary(
        distributions,
        pl.DataFrame(schema={"language": pl.String, "n_questions": pl.Int64}),
        topics.similarity_table(distributions),
        None,
        None,
        None,
        1,
        CALMQA_ORDERS,
        None,
    )
    assert expected in text, text


def test_cluster_order_puts_similar_groups_together_and_is_deterministic():
    frame = counts_frame(
        [
            ("A", "x", 9),
            ("A", "y", 1),
            ("B", "y", 9),
            ("B", "z", 1),
            ("C", "x", 8),
            ("C", "y", 2),
            ("D", "y", 8),
            ("D", "z", 2),
            ("E", "z", 10),
        ]
    )
    distributions = topics.Distributions.from_counts(frame, "language")
    order = topics.cluster_order(distributions)
    assert sorted(order) == ["A", "B", "C", "D", "E"]
    assert abs(order.index("A") - order.index("C")) == 1
    assert abs(order.index("B") - order.index("D")) == 1
    assert topics.cluster_order(distributions) == order


# On the real snapshot.


def plain_python_bc(con, question_type: str, collection: str) -> dict[tuple[str, str], float]:
    rows = con.execute(
        "SELECT language, category FROM questions WHERE question_type = ? AND collection = ?",
        [question_type, collection],
    ).fetchall()
    counts: dict[str, Counter] = defaultdict(Counter)
    for language, category in rows:
        counts[language][category] += 1
    shares = {g: {c: n / sum(cs.values()) for c, n in cs.items()} for g, cs in counts.items()}
    return {
        (a, b): sum(math.sqrt(shares[a][c] * shares[b].get(c, 0.0)) for c in shares[a]) for a in shares for b in shares
    }


def test_matrix_equals_plain_python_recomputation(con):
    expected = plain_python_bc(con, "specific", "human")
    similarity = topics.similarity_table(topics.category_counts(con, "language", "specific", "human"))
    assert similarity.height == len(expected) == 23 * 23
    for a, b, bc, distance in similarity.iter_rows():
        assert bc == pytest.approx(expected[(a, b)], abs=1e-12), (a, b)
        assert distance == pytest.approx(math.sqrt(max(0.0, 1 - expected[(a, b)])), abs=1e-6), (a, b)


def test_counts_match_the_questions_table(con):
    distributions = topics.category_counts(con, "source", "specific", "human")
    table = distributions.table().filter(pl.col("n_questions") > 0)
    expected = con.sql(
        "SELECT source, category, count(*) FROM questions WHERE question_type = 'specific' "
        "AND collection = 'human' GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert table.select("source", "category", "n_questions").sort("source", "category").rows() == expected


def test_pooled_resource_similarity_equals_plain_python(con):
    rows = con.sql(
        "SELECT l.resource_level, q.category FROM questions q JOIN languages l USING (language) "
        "WHERE q.question_type = 'specific' AND q.collection = 'human'"
    ).fetchall()
    counts: dict[str, Counter] = defaultdict(Counter)
    for level, category in rows:
        counts[level][category] += 1
    high, low = ({c: n / sum(counts[k].values()) for c, n in counts[k].items()} for k in ("high", "low"))
    expected = sum(math.sqrt(high[c] * low.get(c, 0.0)) for c in high)
    pooled = topics.pooled_resource_similarity(con, "specific", "human").row(0, named=True)
    assert pooled["bc"] == pytest.approx(expected, abs=1e-12)
    assert pooled["high_questions"] == sum(counts["high"].values())
    assert pooled["low_questions"] == sum(counts["low"].values())


def test_agnostic_questions_share_one_distribution(con):
    similarity = topics.similarity_table(topics.category_counts(con, "language", "agnostic", "human"))
    assert similarity["bc"].to_numpy() == pytest.approx(np.ones(similarity.height))


def test_resource_order_puts_high_resource_languages_first(con):
    distributions = topics.category_counts(con)
    order = topics.group_order(con, distributions, "resource")
    levels = dict(con.sql("SELECT language, resource_level FROM languages").fetchall())
    assert sorted(order) == list(distributions.groups)
    assert [levels[g] for g in order] == sorted(levels[g] for g in order)
    with pytest.raises(ValueError, match="ordering 'resource'"):
        topics.group_order(con, topics.category_counts(con, "source"), "resource")


def test_unknown_grouping_column_is_an_error(con):
    with pytest.raises(ValueError, match="cannot group by 'no_such_column'"):
        topics.category_counts(con, "no_such_column")


def test_heatmap_has_both_values_in_the_tooltip():
    frame = counts_frame([("A", "x", 1), ("B", "x", 1), ("B", "y", 3)])
    similarity = topics.similarity_table(topics.Distributions.from_counts(frame, "language"))
    spec = topic_charts.similarity_heatmap(similarity, ["B", "A"], "language", None).to_dict()
    tooltip_fields = {t["field"] for t in spec["layer"][0]["encoding"]["tooltip"]}
    assert {"group_a", "group_b", "bc", "hellinger"} <= tooltip_fields
    assert spec["layer"][1]["encoding"]["text"]["format"] == ".2f"
    assert spec["layer"][0]["encoding"]["x"]["sort"] == ["B", "A"]


def test_summary_reports_extremes_dropped_groups_and_the_agnostic_caveat():
    frame = counts_frame(
        [
            ("A", "x", 1),
            ("B", "x", 1),
            ("B", "y", 1),
            ("C", "y", 1),
            ("D", "x", 2),
            ("D", "y", 1),
            ("E", "x", 1),
        ]
    )
    kept, dropped = topics.split_by_size(topics.Distributions.from_counts(frame, "language"), 2)
    similarity = topics.similarity_table(kept)
    pooled = pl.DataFrame({"high_questions": [5], "low_questions": [4], "bc": [0.5], "hellinger": [0.7]})
    text = topics.summary(kept, dropped, similarity, pooled, "specific", "human", 2, CALMQA_ORDERS, "calmqa")
    # one pair: not named both the most and the least similar (issue 34)
    assert "The one pair, B and D, has a coefficient of 0.99." in text and "least" not in text
    assert "Left out for having fewer than 2 questions: A (1), C (1), E (1)." in text
    assert "Pooled, the 5 questions of high-resource languages and the 4 of low-resource languages" in text
    assert "**0.500**" in text
    assert "agnostic" not in text
    assert "by construction" in topics.summary(
        kept, dropped, similarity, pooled, "agnostic", "human", 2, CALMQA_ORDERS, "calmqa"
    )
    # Only the paper's agnostic questions inherit their categories: another study's are compared as they are.
    assert "by construction" not in topics.summary(
        kept, dropped, similarity, pooled, "agnostic", "human", 2, CALMQA_ORDERS, None
    )
