"""The mixed model of a criterion (analyses/ratings.formula) takes the question type only where the ratings
can tell it from the model: a 2,000-language study's sample of its ratings drew one model's answers to one
type only and the other's to the other, and emmeans then compared the models nested in their types."""

import polars as pl

from analysis.analyses import ratings


def _ratings(pairs: list[tuple[str, str]], annotators: int = 1) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": [model for model, _ in pairs],
            "question_type": [kind for _, kind in pairs],
            "annotator": [f"a{i % annotators}" for i in range(len(pairs))],
        }
    )


def test_confounded_models_and_question_types_leave_the_type_out():
    # model A answered only factual questions, B only opinion ones
    confounded = _ratings([("A", "factual"), ("A", "factual"), ("B", "opinion"), ("B", "opinion")])
    assert ratings.formula(confounded) == "level ~ model + (1 | question)"


def test_two_groups_of_models_each_on_its_own_types_leave_the_type_out():
    groups = _ratings([("A", "t1"), ("B", "t1"), ("C", "t2"), ("D", "t2"), ("C", "t3")])
    assert ratings.formula(groups) == "level ~ model + (1 | question)"


def test_models_linked_through_their_types_keep_the_type():
    # B links the two types: every model and type is reachable from every other
    linked = _ratings([("A", "t1"), ("B", "t1"), ("B", "t2"), ("C", "t2")], annotators=3)
    assert ratings.formula(linked) == "level ~ model + question_type + (1 | question) + (1 | annotator)"


def test_one_question_type_is_no_term():
    assert ratings.formula(_ratings([("A", "t1"), ("B", "t1")])) == "level ~ model + (1 | question)"
