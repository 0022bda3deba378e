"""Every kind of rating criterion (`io.criterion_kinds.CRITERION_KINDS`) reaches every place that reads a
criterion (CONTRIBUTING.md, "A rating-criterion kind"): the example study with one more criterion of each kind
(its levels the kind's `example`) and a rating of every one of its rated answers, built with the small
language identification (`conftest.small_language_identification`), is read with the criterion of that
kind, keeps its kind and its levels in order in the database, and report 05's distributions count its
ratings by level (with each group's mean level where the kind is numeric), the explorer draws the mean
position of its levels, and docs/schema.md names the kind. A kind added to the registry is tested here
with no change to this file."""

import collections
import csv
import shutil
import statistics
import tomllib

import pytest

from analysis import store
from analysis.analyses import answers, dimensions, ratings
from analysis.core import paths
from analysis.io import study
from analysis.io.criterion_kinds import CRITERION_KINDS
from analysis.pipeline.build import build
from analysis.reporting import docs
from analysis.ui import explorer

EXAMPLE = paths.DATA / "examples" / "study"
ANNOTATOR = "annotator-kinds"


def criterion_name(kind) -> str:
    return f"kind_{kind.name}"


def declared_levels(kind) -> list:
    """The kind's example levels, as study.toml's TOML reads them."""
    return tomllib.loads(f"levels = {kind.example}")["levels"]


@pytest.fixture(scope="module")
def rated(tmp_path_factory, small_language_identification):
    """The example study with a criterion of every kind, its database, and the ratings written of each
    (criterion -> (question_id, model, level as text) of every rating)."""
    folder = shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("kinds") / "study")
    with open(folder / "ratings.csv", encoding="utf-8", newline="") as fh:
        answered = list(dict.fromkeys((row["question_id"], row["model"]) for row in csv.DictReader(fh)))
    written: dict[str, list[tuple[str, str, str]]] = {}
    with (
        open(folder / "study.toml", "a", encoding="utf-8") as toml,
        open(folder / "ratings.csv", "a", encoding="utf-8", newline="") as fh,
    ):
        out = csv.writer(fh)
        for kind in CRITERION_KINDS:
            name, levels = criterion_name(kind), declared_levels(kind)
            toml.write(f"\n[criteria.{name}]\nlevels = {kind.example}\n")
            written[name] = [(q, m, kind.text(levels[i % len(levels)])) for i, (q, m) in enumerate(answered)]
            out.writerows([q, m, ANNOTATOR, name, level] for q, m, level in written[name])
    db_path = folder.parent / "kinds.duckdb"
    build(
        folder,
        db_path,
        progress=False,
        udhr_folder=paths.ROOT / "tests" / "data" / "udhr",
        short_text_evaluation_folder=small_language_identification.short_text_evaluation,
    )
    return folder, db_path, written


def test_the_study_and_its_database_hold_each_criterion_with_its_kind_and_levels(rated):
    folder, db_path, _ = rated
    read = {c.name: c for c in study.read(folder).criteria}
    with store.connect(db_path) as con:
        kinds = dict(con.sql("SELECT criterion, kind FROM criteria").fetchall())
        levels = {c.name: c.levels for c in ratings.criteria(con)}
    for kind in CRITERION_KINDS:
        name = criterion_name(kind)
        texts = tuple(kind.text(level) for level in declared_levels(kind))
        assert (read[name].kind, read[name].levels) == (kind.name, texts)
        assert (kinds[name], levels[name]) == (kind.name, texts)


def _columns(folder, table: str, key: str, *values: str) -> dict:
    """`key` -> the `values` (one value, or a tuple of them) of every row of the study's `table`."""
    with open(folder / f"{table}.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {row[key]: row[values[0]] if len(values) == 1 else tuple(row[v] for v in values) for row in rows}


def test_report_05_counts_each_kind_s_ratings_by_level_with_a_mean_where_it_is_numeric(rated):
    folder, db_path, written = rated
    question_type = _columns(folder, "questions", "question_id", "question_type")
    display_name = _columns(folder, "answers", "model", "display_name")
    with store.connect(db_path) as con:
        orders = dimensions.Orders.of(con)
        found = {c.name: (c, ratings.distributions(con, c, orders)[0]) for c in ratings.criteria(con)}
    for kind in CRITERION_KINDS:
        criterion, by_model = found[criterion_name(kind)]
        texts = [kind.text(level) for level in declared_levels(kind)]
        groups = collections.defaultdict(list)
        for q, m, level in written[criterion.name]:
            groups[(display_name[m], question_type[q])].append(level)
        assert by_model.select("model", "question_type").unique().height == len(groups)
        for (model, qtype), levels in groups.items():
            group = by_model.filter((by_model["model"] == model) & (by_model["question_type"] == qtype))
            # every level, worst first, with its count of ratings
            assert [kind.text(level) for level in group["level"]] == texts, kind.name
            assert group["n"].to_list() == [levels.count(text) for text in texts], kind.name
            if kind.numeric:
                assert group["mean_level"][0] == pytest.approx(statistics.mean(float(level) for level in levels))
        assert ("mean_level" in by_model.columns) == kind.numeric


def test_the_explorer_draws_each_kind_s_mean_level_position(rated):
    folder, db_path, written = rated
    question = _columns(folder, "questions", "question_id", "language", "question_type")
    display_name = _columns(folder, "answers", "model", "display_name")
    with store.connect(db_path) as con:
        scales = {s.name: s for s in answers.scales(con)}
        loaded = answers.with_scales(answers.load_answers(con), list(scales.values()))
    metrics = {m.key: m for m in explorer.available_metrics(False, list(scales.values()))}
    for kind in CRITERION_KINDS:
        name = criterion_name(kind)
        texts = [kind.text(level) for level in declared_levels(kind)]
        assert scales[name].levels == tuple(texts)
        # a cell's value: the mean position of its answers' levels (worst 1; one rating an answer here)
        positions = collections.defaultdict(list)
        for q, m, level in written[name]:
            positions[(display_name[m], *question[q])].append(texts.index(level) + 1)
        cells = explorer.metric_cells(loaded, metrics[f"rating:{name}"]).drop_nulls("value")
        shown = {(r["model_name"], r["language"], r["question_type"]): r["value"] for r in cells.iter_rows(named=True)}
        assert shown == pytest.approx({cell: statistics.mean(p) for cell, p in positions.items()}), kind.name


def test_the_schema_page_names_every_kind():
    row = next(line for line in docs.schema_page().splitlines() if line.startswith("| `kind` |"))
    assert all(f"`{kind.name}`, e.g. `{kind.example}`" in row for kind in CRITERION_KINDS)


def test_the_example_study_s_criteria_are_of_today_s_two_kinds(rated):
    """(pinned, as the registry's readers above take the kinds' records as given)"""
    _, db_path, _ = rated
    kinds = {kind.name: (kind.sql_type, kind.numeric) for kind in CRITERION_KINDS}
    assert {"numbered": ("BIGINT", True), "worded": ("VARCHAR", False)}.items() <= kinds.items()
    with store.connect(db_path) as con:
        found = dict(con.sql("SELECT criterion, kind FROM criteria WHERE criterion NOT LIKE 'kind_%'").fetchall())
    assert found == {"overall": "numbered", "fluency": "worded"}  # levels [1, 2, 3, 4, 5] and ["poor", "fair", "good"]
