"""study.toml's declarations of rating criteria and metrics (`io.study._criteria`, `_metrics`): each kind of
mistake refused with its one message (file, table and field written out by hand), and what a valid declaration
gives: word levels in the order declared, worst first, and a metric's range."""

import shutil

import pytest
from study_edits import EXAMPLE, edit, problems_of

from analysis.io import study

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
