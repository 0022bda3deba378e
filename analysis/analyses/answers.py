"""The answers behind a cell: every answer with its question, its model's name and everything the suite
knows of it (its surface verdicts, its study metrics, its human ratings), and those verdicts as the
badges a reader sees. The explorer (`ui.explorer`) and the reports' drill-down (`reporting.drilldown`)
both show answers from here.
"""

from typing import NamedTuple

import duckdb
import polars as pl

from .. import store
from ..schema import SURFACE_METRICS
from . import dimensions

HUMAN = "human reference"
SURFACE_TABLE = "answer_surface"
# Per answer: whether it is a provider error (with its code), and the verdict of each surface metric
# (`schema.SURFACE_METRICS`), null where the answer is not among those its share counts (a provider
# error is neither in the wrong language nor repetitive).
SURFACE_SELECT = {
    "provider_error": "s.provider_error",
    "provider_error_code": "s.provider_error_code",
    **{m.column: f"CASE WHEN {m.denominator.sql} THEN s.{m.column} END" for m in SURFACE_METRICS},
}
SURFACE_TYPES = {"provider_error_code": "VARCHAR"}


def load_answers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every answer with its question, its model's display name (`human reference` for people's
    answers), its human ratings where there are some (`ratings`: `criterion level, ...` in the order they
    were given; `rating_levels`: a list of `criterion`, `position` of the level, worst 1), its study metrics (`metric_values`: a list of `metric`, `value` in the study's order of
    metrics, empty without any) and its surface verdicts (null columns when the database has no
    `answer_surface` table). Sorted by language, question type and question, within a question the human
    references first, then the models in the suite's order."""
    surface = store.table_exists(con, SURFACE_TABLE)
    surface_select = ", ".join(
        f"{sql} AS {name}" if surface else f"CAST(NULL AS {SURFACE_TYPES.get(name, 'BOOLEAN')}) AS {name}"
        for name, sql in SURFACE_SELECT.items()
    )
    surface_join = f"LEFT JOIN {SURFACE_TABLE} s ON s.answer_id = a.answer_id" if surface else ""
    frame = con.sql(f"""
        SELECT a.answer_id, q.question_id, q.name AS question_name, q.language, l.resource_level,
               q.question_type, q.category, q.collection,
               q.text AS question_text, q.text_en AS question_text_en,
               a.model, CASE WHEN a.is_human THEN '{HUMAN}' || CASE WHEN a.is_dot_points THEN ' (dot points)' ELSE '' END
                             ELSE m.display_name END AS model_name,
               a.is_human, a.text, a.text_en, a.n_bytes, a.text = '' AS is_empty,
               {surface_select},
               r.ratings,
               coalesce(rl.rating_levels, []) AS rating_levels,
               coalesce(v.metric_values, []) AS metric_values,
               NOT l.identified AS unreliable
        FROM answers a
        JOIN questions q USING (question_id)
        JOIN languages l ON l.language = q.language
        LEFT JOIN models m ON m.model = a.model
        LEFT JOIN (
            SELECT answer_id, string_agg(criterion || ' ' || level, ', ' ORDER BY rating_id, criterion) AS ratings
            FROM ratings GROUP BY answer_id
        ) r ON r.answer_id = a.answer_id
        LEFT JOIN (
            SELECT r.answer_id, list({{'criterion': r.criterion, 'position': l.position}} ORDER BY r.rating_id) AS rating_levels
            FROM ratings r JOIN criterion_levels l ON l.criterion = r.criterion AND l.level = r.level
            GROUP BY r.answer_id
        ) rl ON rl.answer_id = a.answer_id
        LEFT JOIN (
            SELECT v.answer_id, list({{'metric': v.metric, 'value': v.value}} ORDER BY d.position, v.metric) AS metric_values
            FROM metric_values v JOIN metrics d USING (metric) GROUP BY v.answer_id
        ) v ON v.answer_id = a.answer_id
        {surface_join}
    """).pl()
    # Within a question, the models in the suite's order (the paper's, then imported ones), as every chart has them.
    rank = {name: i for i, name in enumerate(dimensions.model_order(con))}
    position = pl.col("model_name").replace_strict(rank, default=len(rank), return_dtype=pl.Int32)
    return (
        frame.with_columns(_position=position)
        .sort(
            "language",
            "question_type",
            "question_id",
            pl.col("is_human").not_(),
            "_position",
            "model_name",
            "answer_id",
        )
        .drop("_position")
    )


class Scale(NamedTuple):
    """A study's own measure of its answers that the explorer draws: an automatic metric (`metric`: its
    value) or a human-rating criterion (`rating`: the position of the level, worst 1, averaged over the
    annotators of an answer). `column` is the answers' column of it (`with_scales`): numbered, since no
    value of the data names a column."""

    key: str
    name: str
    kind: str
    column: str
    better: str
    domain: tuple[float, float] | None
    levels: tuple[str, ...] = ()


def scales(con: duckdb.DuckDBPyConnection) -> list[Scale]:
    """The study's metrics (in its order), then its rating criteria (in its order)."""
    found = [
        Scale(
            f"metric:{name}",
            name,
            "metric",
            f"study_metric_{i}",
            "higher" if higher else "lower",
            (low, high) if low is not None and high is not None else None,
        )
        for i, (name, higher, low, high) in enumerate(
            con.sql("SELECT metric, higher_is_better, range_low, range_high FROM metrics ORDER BY position").fetchall()
        )
    ]
    levels: dict[str, list[str]] = {}
    for criterion, level in con.sql(
        "SELECT l.criterion, l.level FROM criterion_levels l JOIN criteria c USING (criterion) "
        "ORDER BY c.position, l.position"
    ).fetchall():
        levels.setdefault(criterion, []).append(level)
    found += [
        Scale(f"rating:{name}", name, "rating", f"study_rating_{i}", "higher", (1.0, float(len(names))), tuple(names))
        for i, (name, names) in enumerate(levels.items())
    ]
    return found


def with_scales(answers: pl.DataFrame, found: list[Scale]) -> pl.DataFrame:
    """`answers` with a column per scale: the answer's metric value, or the mean position of its levels."""
    columns = []
    for scale in found:
        field, value = ("metric", "value") if scale.kind == "metric" else ("criterion", "position")
        source = "metric_values" if scale.kind == "metric" else "rating_levels"
        columns.append(
            pl.col(source)
            .list.eval(pl.element().filter(pl.element().struct.field(field) == scale.name).struct.field(value))
            .list.mean()
            .cast(pl.Float64)
            .alias(scale.column)
        )
    return answers.with_columns(columns) if columns else answers


class Badge(NamedTuple):
    """One verdict on an answer as a reader sees it: its words, its kind (`fail`: a failure, warm; `note`:
    grey; `ok`: green; `rating` and `metric`: blue) and what it means (a tooltip), possibly empty."""

    text: str
    kind: str
    explanation: str = ""


def badges(answer: dict, has_surface: bool) -> list[Badge]:
    """An answer's verdicts: provider error or empty, wrong language (or not identified, for an unreliable
    language), repetition, no surface issue, the human ratings (each criterion and level) and the study's
    metrics (each value to three significant digits)."""
    found = []
    if answer["is_empty"]:
        found.append(Badge("empty", "fail", "the provider returned no text (a provider error)"))
    elif answer["provider_error"]:
        code = answer["provider_error_code"]
        found.append(Badge(f"provider error {code}", "fail", f"the API returned the code {code} instead of an answer"))
    elif has_surface and not answer["is_human"]:
        if answer["language_correct"] is False:
            found.append(Badge("wrong language", "fail", "the language verdict differs from the question's language"))
        elif answer["language_correct"] is None:
            found.append(Badge("language not identified", "note", "the identification does not know this language"))
        if answer["repetition"]:
            found.append(Badge("repetition", "fail", "the answer repeats a passage of itself"))
        if answer["surface_ok"]:
            found.append(Badge("no surface issue", "ok", "in the question's language, no repetition, not empty"))
    if answer["ratings"] is not None:
        found.append(Badge(f"human ratings: {answer['ratings']}", "rating"))
    for value in answer.get("metric_values") or []:
        found.append(Badge(f"{value['metric']} {value['value']:.3g}", "metric", "the study's metric of this answer"))
    return found
