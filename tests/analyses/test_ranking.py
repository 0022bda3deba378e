"""The one rule by which summaries name the largest and the smallest of some values (analysis/analyses/ranking.py):
values compared as the sentence prints them, ties said as ties, and the words around the names."""

import pytest

from analysis.analyses import ranking


def test_the_ends_are_the_items_that_print_as_the_largest_and_the_smallest():
    found = ranking.ends([("a", 0.504), ("b", 0.496), ("c", 0.1), ("d", 0.12)], ".1f")
    # 0.504 and 0.496 both print 0.5; 0.1 and 0.12 both print 0.1
    assert (found.top, found.high, found.bottom, found.low, found.tied) == (["a", "b"], 0.504, ["c", "d"], 0.1, False)


def test_values_that_print_alike_are_a_tie_whatever_their_digits():
    found = ranking.ends([("a", 1.04), ("b", 0.96)], ".0f")
    assert found.tied and found.top == found.bottom == ["a", "b"]
    assert (found.high, found.low) == (1.04, 0.96)


def test_the_ends_of_one_item_are_that_item_tied_with_itself():
    found = ranking.ends([("only", "2.5")], ".2f")
    assert (found.top, found.high, found.bottom, found.low, found.tied) == (["only"], 2.5, ["only"], 2.5, True)


def test_no_item_is_refused():
    with pytest.raises(ValueError, match="^no items to rank$"):
        ranking.ends([], ".2f")


@pytest.mark.parametrize(
    ("names", "limit", "expected"),
    [
        (["A"], 3, "A"),
        (["A", "B"], 3, "A and B"),
        (["A", "B", "C"], 3, "A, B and C"),
        (["A", "B", "C", "D"], 3, "A, B, C and 1 other"),
        (["A", "B", "C", "D", "E"], 3, "A, B, C and 2 others"),
        ([f"m{i}" for i in range(1234)], 2, "m0, m1 and 1,232 others"),
        (["*x*", "a_b"], 3, "\\*x\\* and a\\_b"),  # Markdown inert
    ],
)
def test_names_are_listed_as_a_sentence_says_them(names, limit, expected):
    assert ranking.listed(names, limit) == expected


def test_a_tie_of_more_than_three_names_three_by_default():
    assert ranking.listed(["A", "B", "C", "D"]) == "A, B, C and 1 other"


@pytest.mark.parametrize(("names", "has", "each"), [(["A"], "has", ""), (["A", "B"], "have", " each")])
def test_the_verb_and_each_follow_the_number_of_names(names, has, each):
    assert (ranking.has(names), ranking.each(names)) == (has, each)
