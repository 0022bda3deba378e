"""study.toml's declarations of rating criteria and metrics (`io.study._criteria`, `_metrics`): each kind of
mistake refused with its one message (file, table and field written out by hand), and what a valid declaration
gives: word levels in the order declared, worst first, and a metric's range."""

import dataclasses
import shutil

import pytest
from study_edits import EXAMPLE, edit, problems_of

from analysis.io import criterion_kinds, study

CRITERIA = '[criteria.overall]\nlevels = [1, 2, 3, 4, 5]\n\n[criteria.fluency]\nlevels = ["poor", "fair", "good"]\n'
METRICS = "[metrics.score]\nhigher_is_better = true\nrange = [0, 1]\n\n[metrics.flawed]\nhigher_is_better = false\nrange = [0, 1]\n"
FLUENCY = '\n[criteria.fluency]\nlevels = ["poor", "fair", "good"]\n'
FLAWED = "\n[metrics.flawed]\nhigher_is_better = false\nrange = [0, 1]\n"


def _folder(tmp_path, old: str, new: str):
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    edit(folder / "study.toml", old, new)
    return folder


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        ("criteria = 3\n", "study.toml, field 'criteria': expected one [criteria.NAME] table per criterion"),
        (
            "[criteria.Overall]\nlevels = [1, 2, 3, 4, 5]\n" + FLUENCY,
            "study.toml, [criteria.Overall]: a criterion's name is a key: lower-case letters, digits, '-' and '_'",
        ),
        (
            "[criteria.overall]\nscale = [1, 2]\n" + FLUENCY,
            "study.toml, [criteria.overall], field 'levels': missing: the criterion's levels, worst first, "
            "e.g. [1, 2, 3, 4, 5]",
        ),
        (
            '[criteria.overall]\nlevels = [1, 2, 3, 4, 5]\nnote = "x"\n' + FLUENCY,
            "study.toml, [criteria.overall], field 'note': unknown key; a criterion has `levels`",
        ),
        (
            "[criteria.overall]\nlevels = [1]\n" + FLUENCY,
            "study.toml, [criteria.overall], field 'levels': is [1]; a criterion has at least two levels, worst first",
        ),
        (
            "[criteria.overall]\nlevels = 5\n" + FLUENCY,
            "study.toml, [criteria.overall], field 'levels': is 5; a criterion has at least two levels, worst first",
        ),
        (
            '[criteria.overall]\nlevels = [1, 2, 3, 4, 5]\n\n[criteria.fluency]\nlevels = ["poor", "fair", "poor", "fair"]\n',
            "study.toml, [criteria.fluency], field 'levels': the level(s) 'fair', 'poor' appear twice",
        ),
    ],
)
def test_a_criterion_declared_wrong_is_refused_with_one_message(tmp_path, new, expected):
    assert problems_of(_folder(tmp_path, CRITERIA, new)) == [expected]


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (
            "[metrics.Score]\nhigher_is_better = true\n" + FLAWED,
            "study.toml, [metrics.Score]: a metric's name is a key: lower-case letters, digits, '-' and '_'",
        ),
        (
            "[metrics]\nscore = 1\n" + FLAWED,
            "study.toml, [metrics.score]: expected `higher_is_better` and an optional `range`",
        ),
        (
            '[metrics.score]\nhigher_is_better = true\nunit = "x"\n' + FLAWED,
            "study.toml, [metrics.score], field 'unit': unknown key; a metric has `higher_is_better` and `range`",
        ),
        (
            "[metrics.score]\nrange = [0, 1]\n" + FLAWED,
            "study.toml, [metrics.score], field 'higher_is_better': is None; expected true or false",
        ),
        (
            '[metrics.score]\nhigher_is_better = "yes"\n' + FLAWED,
            "study.toml, [metrics.score], field 'higher_is_better': is 'yes'; expected true or false",
        ),
    ]
    + [
        (
            f"[metrics.score]\nhigher_is_better = true\nrange = {bounds}\n" + FLAWED,
            f"study.toml, [metrics.score], field 'range': is {shown}; expected [low, high], two numbers, low < high",
        )
        for bounds, shown in [
            ("[1, 1]", "[1, 1]"),  # degenerate: no width
            ("[1, 0]", "[1, 0]"),
            ("[0, 1, 2]", "[0, 1, 2]"),
            ('["0", 1]', "['0', 1]"),
            ("1", "1"),
        ]
    ],
)
def test_a_metric_declared_wrong_is_refused_with_one_message(tmp_path, new, expected):
    assert problems_of(_folder(tmp_path, METRICS, new)) == [expected]


def test_word_levels_keep_the_order_declared_and_a_range_its_bounds(tmp_path):
    # the ratings' words are the example's three, declared here in another order: read as declared, not sorted
    folder = _folder(
        tmp_path,
        CRITERIA + "\n" + METRICS,
        '[criteria.overall]\nlevels = [1, 2, 3, 4, 5]\n\n[criteria.fluency]\nlevels = ["poor", "good", "fair"]\n\n'
        "[metrics.score]\nhigher_is_better = true\nrange = [-0.5, 2]\n\n[metrics.flawed]\nhigher_is_better = false\n",
    )
    read = study.read(folder)
    assert [(c.name, c.levels, c.kind) for c in read.criteria] == [
        ("overall", ("1", "2", "3", "4", "5"), "numbered"),
        ("fluency", ("poor", "good", "fair"), "worded"),
    ]
    assert [(m.name, m.higher_is_better, m.low, m.high) for m in read.metrics] == [
        ("score", True, -0.5, 2.0),
        ("flawed", False, None, None),
    ]


BROKEN_FIRST = [
    (
        "[criteria.overall]\nscale = [1, 2]\n",
        "field 'levels': missing: the criterion's levels, worst first, e.g. [1, 2, 3, 4, 5]",
    ),
    ("[criteria.overall]\nlevels = [1]\n", "field 'levels': is [1]; a criterion has at least two levels, worst first"),
    (
        f"[criteria.overall]\nlevels = [{', '.join(str(i) for i in range(1, 1002))}]\n",
        "field 'levels': has 1,001 levels; a criterion has at most 1,000 (its charts and tables show each level: "
        "a measure of more is a metric, `[metrics.NAME]`)",
    ),
    ("[criteria.overall]\nlevels = [1.5, 2]\n", "field 'levels': is [1.5, 2]; each level is a whole number or a word"),
    ('[criteria.overall]\nlevels = [1, ""]\n', "field 'levels': is [1, '']; each level is a whole number or a word"),
    (
        '[criteria.overall]\nlevels = ["poor", "fa\\tir"]\n',
        "field 'levels': the level 'fa\\tir' holds a tab at character 2; a level is one line of visible text",
    ),
]


@pytest.mark.parametrize(("first", "message"), BROKEN_FIRST)
def test_each_criterion_is_checked_after_one_with_a_mistake(tmp_path, first, message):
    second = '\n[criteria.fluency]\nlevels = ["poor", "fair", "poor"]\n'
    assert problems_of(_folder(tmp_path, CRITERIA, first + second)) == [
        f"study.toml, [criteria.overall], {message}",
        "study.toml, [criteria.fluency], field 'levels': the level(s) 'poor' appear twice",
    ]


def test_a_criterion_of_1000_levels_is_accepted(tmp_path):
    levels = ", ".join(str(i) for i in range(1, 1001))
    read = study.read(_folder(tmp_path, CRITERIA, f"[criteria.overall]\nlevels = [{levels}]\n" + FLUENCY))
    assert len(read.criteria[0].levels) == 1000


def test_a_level_that_its_kind_cannot_write_as_text_is_refused(tmp_path, monkeypatch):
    """A kind's `text` may refuse a value its `is_level` accepts (a kind added to the registry, CONTRIBUTING.md):
    the criterion is refused, not read with a level left out."""
    numbered = criterion_kinds.CRITERION_KINDS[0]
    odd_only = dataclasses.replace(numbered, text=lambda v: str(v) if v % 2 else None)
    monkeypatch.setattr(criterion_kinds, "CRITERION_KINDS", (odd_only, *criterion_kinds.CRITERION_KINDS[1:]))
    assert problems_of(_folder(tmp_path, CRITERIA, "[criteria.overall]\nlevels = [1, 2, 3]\n" + FLUENCY)) == [
        "study.toml, [criteria.overall], field 'levels': is [1, 2, 3]; each level is a whole number or a word"
    ]


@pytest.mark.parametrize(
    ("first", "message"),
    [
        ("[metrics]\nscore = 1\n", ": expected `higher_is_better` and an optional `range`"),
        ("[metrics.score]\nrange = [0, 1]\n", ", field 'higher_is_better': is None; expected true or false"),
        (
            "[metrics.score]\nhigher_is_better = true\nrange = [1, 0]\n",
            ", field 'range': is [1, 0]; expected [low, high], two numbers, low < high",
        ),
    ],
)
def test_each_metric_is_checked_after_one_with_a_mistake(tmp_path, first, message):
    second = "\n[metrics.flawed]\nhigher_is_better = 1\n"
    assert problems_of(_folder(tmp_path, METRICS, first + second)) == [
        f"study.toml, [metrics.score]{message}",
        "study.toml, [metrics.flawed], field 'higher_is_better': is 1; expected true or false",
    ]


def test_metrics_that_are_not_tables_are_refused_with_one_message(tmp_path):
    folder = _folder(tmp_path, METRICS, "")
    toml = folder / "study.toml"
    toml.write_text("metrics = 3\n" + toml.read_text(encoding="utf-8"), encoding="utf-8")
    assert problems_of(folder) == ["study.toml, field 'metrics': expected one [metrics.NAME] table per metric"]


def test_a_criterion_after_one_with_a_level_twice_is_checked(tmp_path):
    twice = '[criteria.fluency]\nlevels = ["poor", "poor"]\n\n[criteria.overall]\nlevels = [1]\n'
    assert problems_of(_folder(tmp_path, CRITERIA, twice)) == [
        "study.toml, [criteria.fluency], field 'levels': the level(s) 'poor' appear twice",
        "study.toml, [criteria.overall], field 'levels': is [1]; a criterion has at least two levels, worst first",
    ]
