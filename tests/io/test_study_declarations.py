"""What study.toml declares, as the study declares it: a criterion's word levels in the declared order
(worst first; never sorted), through the reader, the database and what the reports and the explorer read;
a metric's range refused unless low < high."""

import json
import shutil
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from study_tables import study_database

from analysis.analyses import answers, ratings
from analysis.core import paths
from analysis.core.errors import Problems
from analysis.io import study
from analysis.ui import explorer_logic

pytestmark = pytest.mark.fast

EXAMPLE = paths.DATA / "examples" / "study"
HEAD = 'name = "x"\ntitle = "t"\n'


def _declaration(toml: str) -> tuple[dict | None, list[str]]:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "study.toml").write_text(toml, encoding="utf-8")
        problems = Problems()
        declared = study.read_declaration(Path(folder), problems)
        return declared, [str(p) for p in problems.items]


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), min_size=2, max_size=8, unique=True
    )
)
def test_word_levels_keep_the_declared_order(words):
    declared, problems = _declaration(HEAD + f"[criteria.c]\nlevels = {json.dumps(words)}\n")
    assert not problems
    assert [c.levels for c in declared["criteria"]] == [tuple(words)]


@pytest.mark.parametrize("bounds", ["[1, 1]", "[0.5, 0.5]", "[2, 1]", "[1, -1]", "[0, 0]"])
def test_a_metric_range_whose_low_is_not_below_its_high_is_refused(bounds):
    declared, problems = _declaration(HEAD + f"[metrics.m]\nhigher_is_better = true\nrange = {bounds}\n")
    assert any("[metrics.m], field 'range'" in p and "low < high" in p for p in problems), problems
    assert declared["metrics"] == []


@pytest.mark.parametrize("bounds, expected", [("[0, 1]", (0.0, 1.0)), ("[-1, 1e-9]", (-1.0, 1e-9))])
def test_a_metric_range_with_low_below_high_is_kept(bounds, expected):
    declared, problems = _declaration(HEAD + f"[metrics.m]\nhigher_is_better = false\nrange = {bounds}\n")
    assert not problems
    (metric,) = declared["metrics"]
    assert (metric.low, metric.high, metric.higher_is_better) == (*expected, False)


@pytest.fixture(scope="module")
def shuffled_study(tmp_path_factory):
    """The example study with its word levels declared in an order that is not alphabetical, either way,
    and its metrics' directions as study.toml gives them."""
    folder = shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("study") / "study")
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'levels = ["poor", "fair", "good"]' in text
    toml.write_text(text.replace('levels = ["poor", "fair", "good"]', 'levels = ["poor", "good", "fair"]'))
    # ratings.csv may use the levels in any order: only the declaration orders them.
    return folder, tomllib.loads(toml.read_text(encoding="utf-8"))


def test_word_levels_reach_the_database_reports_and_explorer_in_the_declared_order(shuffled_study):
    folder, declared = shuffled_study
    expected = {name: tuple(str(v) for v in spec["levels"]) for name, spec in declared["criteria"].items()}
    assert expected["fluency"] == ("poor", "good", "fair")
    con = study_database(folder)
    stored: dict[str, list[str]] = {}
    for criterion, level in con.sql(
        "SELECT criterion, level FROM criterion_levels ORDER BY criterion, position"
    ).fetchall():
        stored.setdefault(criterion, []).append(level)
    assert {k: tuple(v) for k, v in stored.items()} == expected
    assert {c.name: c.levels for c in ratings.criteria(con)} == expected
    scales = answers.scales(con)
    assert {s.name: s.levels for s in scales if s.kind == "rating"} == expected
    assert {s.name: explorer_logic.scale_metric(s).levels for s in scales if s.kind == "rating"} == expected


def test_metric_directions_reach_the_reports_and_explorer_as_declared(shuffled_study):
    folder, declared = shuffled_study
    expected = {name: "higher" if spec["higher_is_better"] else "lower" for name, spec in declared["metrics"].items()}
    assert set(expected.values()) == {"higher", "lower"}  # the example declares both
    scales = answers.scales(study_database(folder))
    assert {s.name: s.better for s in scales if s.kind == "metric"} == expected
    assert {s.name: explorer_logic.scale_metric(s).better for s in scales if s.kind == "metric"} == expected
