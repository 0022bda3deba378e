"""Surface-level quality of the model answers (docs/methods.md, section 03 Surface quality): reads the
verdicts of `answer_surface` and `question_language_id` (computed by `analysis.pipeline.surface`) for
notebook 03: language, repetitions, provider errors, textual indicators, answer lengths, the agreement
with the annotators; and the words of the surface benchmark's results (`make bench-surface`, docs/performance.md).
"""

import math
from functools import partial

import duckdb
import polars as pl

from ..core.scalars import number
from ..core.text import inert
from ..io import paper, tokenizer_ranks
from ..schema import ANSWERED, SURFACE_METRICS
from ..stats import comparisons, intervals
from . import dimensions, paper_check, short_text, tiers

# Where the language cannot be identified reliably the verdicts that need it are unknown (NULL): the rates
# count the detector's raw verdict in their place. The cells show such languages as not identified, and
# aggregates take them only when asked to (exclude_unreliable = false).
RAW_VERDICTS = {"language_correct": dimensions.LANGUAGE_CORRECT_OR_RAW, "surface_ok": dimensions.SURFACE_OK_OR_RAW}
# The surface metrics (`schema.SURFACE_METRICS`: title, better end, denominator...) by their key.
METRICS = {metric.key: metric for metric in SURFACE_METRICS}
# Metrics that need a language verdict, which the unreliable languages do not get, in METRICS' order.
LANGUAGE_METRICS = tuple(key for key, metric in METRICS.items() if metric.needs_language)
# Each metric counts the answers of its denominator whose verdict is true.
_COUNTS = ",\n       ".join(
    f"count(*) FILTER ({m.denominator.sql} AND {RAW_VERDICTS.get(m.column, 's.' + m.column)}) AS {m.count}"
    for m in METRICS.values()
)
# The metrics' denominators besides the answers and those the provider gave, each counted once; and the
# answers whose language was not judged (too short to judge, or no engine), counted apart.
DENOMINATORS = tuple(
    dict.fromkeys(
        m.denominator.name for m in METRICS.values() if m.denominator.name not in ("n_answers", ANSWERED.name)
    )
)
_DENOMINATOR_COUNTS = "".join(
    f"count(*) FILTER ({m.denominator.sql}) AS {m.denominator.name},\n       "
    for m in {m.denominator.name: m for m in METRICS.values()}.values()
    if m.denominator.name in DENOMINATORS
)
RATES_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type, s.resource_level,
       {dimensions.is_unreliable("s.language")} AS unreliable,
       count(*) AS n_answers,
       count(*) FILTER (s.provider_error) AS n_provider_errors,
       count(*) FILTER ({ANSWERED.sql}) AS {ANSWERED.name},
       count(*) FILTER (s.language_abstained) AS n_language_abstained,
       {_DENOMINATOR_COUNTS}{_COUNTS}
FROM surface_answers s
WHERE {dimensions.SURFACE_FROM_RELEASE}
GROUP BY ALL
ORDER BY model, any_value(s.language_position), s.question_type
"""
# The answers the share without surface issues is of (those whose language was not judged and that have no
# other issue left out).
_SURFACE_DENOMINATOR = METRICS["pct_surface_ok"].denominator.name


def verdicts_sql(verdicts: dict[str, str] | None = None, join: str = "") -> str:
    """Per model answer: its model, language, question type and question, whether it is a provider error,
    and for each metric its verdict (NULL outside the metric's denominator), the paired data of the
    significance tiers. `verdicts` replaces
    the SQL of a verdict column (as `RAW_VERDICTS` does), `join` adds the table it reads."""
    columns = {**RAW_VERDICTS, **(verdicts or {})}
    selected = ",\n       ".join(
        f"CASE WHEN {m.denominator.sql} THEN {columns.get(m.column, 's.' + m.column)} END AS {key}"
        for key, m in METRICS.items()
    )
    return f"""
SELECT s.display_name AS model, s.language, s.question_type, s.question_id,
       {dimensions.is_unreliable("s.language")} AS unreliable, s.provider_error,
       {selected}
FROM surface_answers s
{join}
WHERE {dimensions.SURFACE_FROM_RELEASE}
"""


def answer_verdicts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every model answer's verdict of each surface metric (`verdicts_sql`), with the language verdicts of
    the paper's pipeline (the unreliable languages' raw ones, as the rates count them)."""
    return con.sql(verdicts_sql()).pl()


# Why a heatmap cell has no value (`cell_status`).
PROVIDER_ERRORS_ONLY = "provider errors only"
NOT_IDENTIFIED = "language not identified"


def cell_status(provider_errors_only: pl.Expr, not_identified: pl.Expr, otherwise: pl.Expr | None = None) -> pl.Expr:
    """The status of a heatmap cell, null where it shows its value: the rule of every heatmap of the
    reports (surface metrics, scores, verdicts) and of the explorer. No answer to judge comes first (every
    answer of the cell is a provider error), then a language that is not identified (for a value that
    needs the language verdict), then `otherwise`, a reason of the heatmap's own (too few answers; by default
    none: the status is null, a String column as the reasons are)."""
    return (
        pl.when(provider_errors_only)
        .then(pl.lit(PROVIDER_ERRORS_ONLY))
        .when(not_identified)
        .then(pl.lit(NOT_IDENTIFIED))
        .otherwise(otherwise)
    )


def _share(count: str, denominator: str) -> pl.Expr:
    return pl.when(pl.col(denominator) > 0).then(100 * pl.col(count) / pl.col(denominator))


def rates_by_model_language(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per model, language and question type: the counts behind each metric and the shares (%), not
    rounded (paper Figures 13, 14 and 9). Unreliable languages carry their raw language verdict here;
    `metric_cells` shows them as not identified."""
    rates = (
        con.sql(RATES_SQL)
        .pl()
        .join(short_text.cell_caveats(con), on=["model", "language", "question_type"], how="left", nulls_equal=True)
    )
    labels = dimensions.language_labels(con)
    return rates.with_columns(
        language_label=pl.col("language").replace_strict(labels),
        pct_provider_errors=_share("n_provider_errors", "n_answers"),
        **{key: _share(m.count, m.denominator.name) for key, m in METRICS.items()},
    )


def metric_cells(
    rates: pl.DataFrame, metric: str, orders: dimensions.Orders, verdicts: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The heatmap cells of one metric: the share (to its decimals) with its 95% Wilson interval, and a
    `status` where the cell has no share to colour (`cell_status`): `provider errors only` (no answer to
    judge) or `language not identified` (an unreliable language, for a metric that needs the language verdict).
    A metric that needs the language verdict names what it rests on: the engine that judged most of the
    cell's answers, the answers too short to judge, the measured accuracy at their median length, and a
    `caveat` where that accuracy is below 95% or unknown (`short_text.cell_caveats`). With the answers'
    `verdicts` (`answer_verdicts`), the cells that show a share get their significance tier within their
    language and question type (`analyses.tiers`)."""
    spec = METRICS[metric]
    count, denominator = spec.count, spec.denominator.name
    status = cell_status(pl.col("n_answered") == 0, pl.col("unreliable") & pl.lit(spec.needs_language))
    by = ["model", "language", "question_type"]
    cells = intervals.with_wilson(rates, count, denominator, decimals=spec.decimals).with_columns(
        _share(count, denominator).alias(metric), status=status
    )
    blank = pl.col("status").is_not_null()
    language = (
        ["language_engine", "pct_accuracy_at_median", "accuracy_note", "caveat"]
        if spec.needs_language and "caveat" in cells.columns
        else []
    )
    cells = (
        cells.with_columns(
            [pl.when(blank).then(None).otherwise(pl.col(c)).alias(c) for c in (metric, "ci_low", "ci_high")]
        )
        .with_columns(
            pl.col(metric).round(spec.decimals),
            *([(pl.col("caveat").fill_null(True) & ~blank).alias("caveat")] if language else []),
        )
        .select(
            *by,
            "language_label",
            "unreliable",
            *dict.fromkeys(("n_answers", "n_answered", "n_provider_errors", "n_language_abstained", denominator)),
            count,
            metric,
            "ci_low",
            "ci_high",
            "status",
            *language,
        )
        .pipe(dimensions.in_order, by, orders=orders)
    )
    if verdicts is None:
        return cells
    return tiers.with_tiers(cells, verdicts, metric, by=by, better=spec.better, kind="binary")


def shown_metrics(rates: pl.DataFrame) -> list[str]:
    """The metrics a report draws: those that need the language verdict only when some language of the
    study gets one (`short_text.figures_note` says why not)."""
    identified = not rates.is_empty() and not rates["unreliable"].all()
    return [key for key, metric in METRICS.items() if identified or not metric.needs_language]


def rates_by_model(
    rates: pl.DataFrame,
    orders: dimensions.Orders,
    exclude_unreliable: bool = True,
    verdicts: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Micro-averaged shares per model and question type (answers pooled over languages), one decimal. With
    the answers' `verdicts` (`answer_verdicts`), each metric's significance tier over all those languages
    (`tier_<metric>`: the questions paired across languages, `analyses.tiers`)."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    counts = [
        "n_answers",
        "n_answered",
        "n_provider_errors",
        "n_language_abstained",
        *DENOMINATORS,
        *(m.count for m in METRICS.values()),
    ]
    table = (
        kept.group_by("model", "question_type")
        .agg(pl.col(counts).sum(), pl.col("language").n_unique().alias("n_languages"))
        .with_columns(
            *[_share(m.count, m.denominator.name).round(m.decimals).alias(key) for key, m in METRICS.items()],
            pct_provider_errors=_share("n_provider_errors", "n_answers").round(1),
            # Section 3 speaks of the share with a surface issue (provider errors included).
            pct_surface_issues=(100 - _share("n_surface_ok", METRICS["pct_surface_ok"].denominator.name)).round(1),
        )
        .select(
            "model",
            "question_type",
            "n_languages",
            "n_answers",
            "n_provider_errors",
            "n_language_abstained",
            *METRICS,
            "pct_provider_errors",
            "pct_surface_issues",
        )
        .pipe(dimensions.in_order, ["model", "question_type"], orders=orders)
    )
    if verdicts is None:
        return table
    answers = verdicts.filter(~pl.col("unreliable")) if exclude_unreliable else verdicts
    for key, metric in METRICS.items():
        tiered = tiers.with_tiers(
            table,
            answers,
            key,
            by=["model", "question_type"],
            better=metric.better,
            kind="binary",
            shown=pl.col(key).is_not_null(),
        )
        table = table.with_columns(tiered["tier"].alias(f"tier_{key}"))
    return table


# ---------------------------------------------------------------- provider errors (Table 2 footnote)

# Per code: one count column `n_<code>` for each of the study's provider error codes (CaLMQA: Gemini's
# `OTHER`, `SAFETY`, `RECITATION`), then the empty answers.
PROVIDER_ERRORS_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type,
       {dimensions.is_unreliable("s.language")} AS unreliable,
       count(*) AS n_answers,
       count(*) FILTER (s.provider_error) AS n_provider_errors,
       {{code_counts}}
       count(*) FILTER (s.provider_error_code = 'empty') AS n_empty
FROM surface_answers s
WHERE {dimensions.SURFACE_FROM_RELEASE}
GROUP BY ALL
"""


def provider_error_codes(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The texts the study's provider returned in place of an answer (besides an empty one)."""
    return list(con.sql("SELECT provider_error_codes FROM study").fetchall()[0][0])


# The count columns of PROVIDER_ERRORS_SQL that are not a code's.
_FIXED_COUNT_COLUMNS = ("model", "language", "question_type", "unreliable", "n_answers", "n_provider_errors", "n_empty")


def code_columns(codes: list[str]) -> dict[str, str]:
    """The count column of each provider error code: `n_` and the code in lower-case letters, digits and
    `_` (`OTHER`: `n_other`), with a number appended where that name is another column's (the code's
    position: `n_other_2` for `Other` after `OTHER`, `n_empty_1` for a code `empty`), so that no code can
    make two columns one."""
    columns: dict[str, str] = {}
    taken = set(_FIXED_COUNT_COLUMNS)
    for position, code in enumerate(codes, start=1):
        name = base = "n_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in code.lower())
        suffix = position
        while name in taken:
            name, suffix = f"{base}_{suffix}", suffix + len(codes)
        columns[code] = name
        taken.add(name)
    return columns


def _provider_error_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    counts = "".join(
        f'count(*) FILTER (s.provider_error_code = {duckdb_literal(code)}) AS "{column}",\n       '
        for code, column in code_columns(provider_error_codes(con)).items()
    )
    return con.sql(PROVIDER_ERRORS_SQL.format(code_counts=counts)).pl()


def duckdb_literal(text: str) -> str:
    """`text` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def provider_error_cells(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """% of answers that are provider errors, per model (those with any), language and question type,
    with the raw codes counted, the 95% Wilson interval and the significance tier within the language and
    question type, among all models (the fewest errors best; the best may be a model without any, which
    the heatmap does not draw)."""
    counts = tiers.with_tiers(
        _provider_error_counts(con),
        con.sql(verdicts_sql()).pl(),
        "provider_error",
        by=["model", "language", "question_type"],
        better="lower",
        kind="binary",
    )
    erring = (
        counts.group_by("model").agg(pl.col("n_provider_errors").sum()).filter(pl.col("n_provider_errors") > 0)["model"]
    )
    labels = dimensions.language_labels(con)
    cells = counts.filter(pl.col("model").is_in(erring.implode())).with_columns(
        language_label=pl.col("language").replace_strict(labels),
        pct_provider_errors=_share("n_provider_errors", "n_answers").round(1),
    )
    return intervals.with_wilson(cells, "n_provider_errors", "n_answers", decimals=1).pipe(
        dimensions.in_order, ["model", "language", "question_type"], orders=dimensions.Orders.of(con)
    )


def provider_error_shares(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The paper's Table 2 footnote: % of each model's answers that are provider errors, per question type,
    over the 19 languages with reliable identification (as Table 2 aggregates), two decimals."""
    counts = (
        _provider_error_counts(con)
        .filter(~pl.col("unreliable"))
        .group_by("model", "question_type")
        .agg(
            pl.col(
                "n_answers", "n_provider_errors", *code_columns(provider_error_codes(con)).values(), "n_empty"
            ).sum(),
            pl.col("language").n_unique().alias("n_languages"),
        )
        .with_columns(pct_provider_errors=_share("n_provider_errors", "n_answers").round(2))
    )
    return dimensions.in_order(
        intervals.with_wilson(counts, "n_provider_errors", "n_answers", decimals=2),
        ["model", "question_type"],
        orders=dimensions.Orders.of(con),
    )


# ---------------------------------------------------------------- identification accuracy (Table 13)

QUESTION_ACCURACY_SQL = f"""
WITH detected AS (
    SELECT q.language, q.question_type, l.resource_level, l.iso_code, o.position AS language_position,
           i.detected_language, i.identified_correctly
    FROM question_language_id i JOIN questions q USING (question_id) JOIN languages l ON l.language = q.language
    JOIN language_order o ON o.language = q.language
    WHERE {dimensions.from_release()}
), wrong AS (
    SELECT language, detected_language, count(*) AS n
    FROM detected WHERE NOT identified_correctly AND question_type = $question_type GROUP BY ALL
)
SELECT d.resource_level, d.language, d.iso_code,
       {dimensions.is_unreliable("d.language")} AS unreliable,
       count(*) FILTER (d.question_type = $question_type) AS n_questions,
       count(*) FILTER (d.question_type = $question_type AND d.identified_correctly) AS n_identified,
       round(100 * n_identified / n_questions, 2) AS pct_identified,
       count(*) AS n_questions_all_types,
       round(100 * avg(d.identified_correctly::INT), 2) AS pct_identified_all_types,
       (SELECT string_agg(w.detected_language || ' (' || w.n || ')', ', ' ORDER BY w.n DESC, w.detected_language)
        FROM wrong w WHERE w.language = d.language) AS detected_instead
FROM detected d
GROUP BY d.resource_level, d.language, d.iso_code
ORDER BY any_value(d.language_position)
"""
TABLE13_QUESTION_TYPE = "specific"


def question_identification_accuracy(
    con: duckdb.DuckDBPyConnection, question_type: str = TABLE13_QUESTION_TYPE
) -> pl.DataFrame:
    """Table 13: per language, the % of its culturally specific questions (the paper's denominators)
    identified as their own language, two decimals, with the 95% Wilson interval; beside it the same over
    all its questions, and what the missed questions were taken for."""
    table = con.sql(QUESTION_ACCURACY_SQL, params={"question_type": question_type}).pl()
    table = intervals.with_wilson(table, "n_identified", "n_questions", decimals=2)
    return table.select(
        "resource_level",
        "language",
        "iso_code",
        "unreliable",
        "n_questions",
        "n_identified",
        "pct_identified",
        "ci_low",
        "ci_high",
        "n_questions_all_types",
        "pct_identified_all_types",
        "detected_instead",
    )


def fully_identified_languages(accuracy: pl.DataFrame) -> pl.DataFrame:
    """Appendix C.1's count: the languages whose every question of Table 13 was identified, and which;
    and of the other reliably identified languages, the lowest share and its language (the appendix
    says they stay "typically above 90%")."""
    full = accuracy.filter(pl.col("n_identified") == pl.col("n_questions")).sort("language")
    others = accuracy.filter((pl.col("n_identified") < pl.col("n_questions")) & ~pl.col("unreliable"))
    lowest = others.sort("pct_identified", "language").head(1)
    return pl.DataFrame(
        {
            "n_languages": [full.height],
            "languages": [", ".join(full["language"])],
            "lowest_other_pct": [lowest["pct_identified"][0] if lowest.height else None],
            "lowest_other_language": [lowest["language"][0] if lowest.height else None],
        },
        schema={
            "n_languages": pl.Int64,
            "languages": pl.String,
            "lowest_other_pct": pl.Float64,
            "lowest_other_language": pl.String,
        },
    )


def _prints_as(printed: str, value: float) -> bool:
    """Whether `value` is the paper's `printed` number, as `paper_check.status` compares them."""
    return paper_check.status(printed, value) == "exact"


def table13_note(accuracy: pl.DataFrame, claims: pl.DataFrame) -> str:
    """Each share of the paper's Table 13 that is not its language's share here, and whose share it is
    instead, if any language's (the paper's Tongan 96.92 is Tswana's 63 of 65 in the pinned release)."""
    sentences = []
    printed = claims.filter(pl.col("source").str.ends_with("/table13_identification_accuracy"))
    for claim in printed.iter_rows(named=True):
        language = paper.parse_match(claim["match"]).get("language")
        own = accuracy.filter(pl.col("language") == language)
        if own.is_empty() or paper_check.status(claim["printed"], own["pct_identified"][0]) == "exact":
            continue
        row = own.row(0, named=True)
        found = accuracy.filter(
            (pl.col("language") != language)
            & pl.col("pct_identified").map_elements(partial(_prints_as, claim["printed"]), return_dtype=pl.Boolean)
        )
        whose = (
            "it is the share of "
            + ", ".join(
                f"{inert(r['language'])} ({r['n_identified']} of {r['n_questions']})"
                for r in found.iter_rows(named=True)
            )
            if found.height
            else "no language has that share here"
        )
        name = inert(language)
        sentences.append(
            f"The paper's {name} {claim['printed']} is not {name}'s share here ({row['n_identified']} of "
            f"{row['n_questions']} culturally specific questions, {row['pct_identified']:.2f}%): {whose}."
        )
    return " ".join(sentences)


# ---------------------------------------------------------------- textual indicators (Appendix C.2)

INDICATORS = {
    "apology": "sorry / apologize / understand",
    "language_name_mention": "English name of the language",
    "translation_mention": "translate / translation",
    "emoji": "emoji",
}
# The groups of answers the paper's Appendix C.2 gives shares over. The apology shares are by resource
# level; its high-resource figure (Llama 3 70B, 10.48%) is over the ten high-resource languages other
# than English, where an apology word is a sign of failure rather than ordinary English. Its shares of
# "responses" of a model are over the answers to culturally specific questions.
PAPER_INDICATOR_SCOPES = {
    "low-resource languages": "s.resource_level = 'low'",
    "high-resource languages": "s.resource_level = 'high'",
    "high-resource languages other than English": "s.resource_level = 'high' AND s.language <> 'English'",
    "culturally specific questions": "s.question_type = 'specific'",
    "all answers": "true",
}


def indicator_scopes(con: duckdb.DuckDBPyConnection, paper: str | None) -> dict[str, str]:
    """The groups of answers the indicators' shares are over, each with its SQL condition: the paper's
    (`PAPER_INDICATOR_SCOPES`) for the paper's study; for any other, each resource level's languages,
    each question type's questions and all answers."""
    if paper:
        return PAPER_INDICATOR_SCOPES
    orders = dimensions.Orders.of(con)
    scopes = {
        orders.level_title(level): f"s.resource_level = {duckdb_literal(level)}" for level in orders.resource_levels
    }
    scopes |= {
        f"{orders.question_type_labels[kind]} questions": f"s.question_type = {duckdb_literal(kind)}"
        for kind in orders.question_types
    }
    return scopes | {"all answers": "true"}


INDICATORS_SQL = f"""
SELECT s.display_name AS model, {{scope_sql}} AS scope, count(*) AS n_answers,
       {{counts}}
FROM surface_answers s
WHERE {{where}} AND {dimensions.SURFACE_FROM_RELEASE}
GROUP BY ALL
"""


def indicator_shares(con: duckdb.DuckDBPyConnection, paper: str | None) -> pl.DataFrame:
    """Appendix C.2: % of each model's answers with each textual indicator, in each scope of
    `indicator_scopes` (every language counts: indicators are text matches), two decimals, with the
    95% Wilson interval. One row per model, scope and indicator."""
    counts = ", ".join(f"count(*) FILTER (s.{name}) AS {name}" for name in INDICATORS)
    scopes = indicator_scopes(con, paper)
    parts = [
        con.sql(INDICATORS_SQL.format(scope_sql=duckdb_literal(scope), counts=counts, where=where)).pl()
        for scope, where in scopes.items()
    ]
    scope_order = {scope: i for i, scope in enumerate(scopes)}
    models = {name: i for i, name in enumerate(dimensions.model_order(con))}
    long = (
        pl.concat(parts)
        .unpivot(
            index=["model", "scope", "n_answers"],
            on=list(INDICATORS),
            variable_name="indicator",
            value_name="n_with_indicator",
        )
        .with_columns(pct=_share("n_with_indicator", "n_answers").round(2))
    )
    return intervals.with_wilson(long, "n_with_indicator", "n_answers", decimals=2).sort(
        pl.col("model").replace_strict(models, return_dtype=pl.Int32),
        pl.col("scope").replace_strict(scope_order, return_dtype=pl.Int32),
        "indicator",
    )


def indicator_table(shares: pl.DataFrame) -> pl.DataFrame:
    """`indicator_shares` for reading: one row per model and scope, one column per indicator (%)."""
    return shares.pivot(on="indicator", index=["model", "scope", "n_answers"], values="pct").select(
        "model", "scope", "n_answers", *INDICATORS
    )


# ---------------------------------------------------------------- answer lengths (Table 17)

TOKEN_COUNTS_SQL = f"""
SELECT m.display_name AS model, s.tokenizer,
       count(*) AS n_all, avg(s.n_tokens) AS mean_all, median(s.n_tokens) AS median_all,
       stddev_samp(s.n_tokens) AS std_all,
       count(*) FILTER (s.language_correct AND NOT s.repetition) AS n_clean,
       avg(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS mean_clean,
       median(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS median_clean,
       stddev_samp(s.n_tokens) FILTER (s.language_correct AND NOT s.repetition) AS std_clean
FROM answer_surface s
JOIN answers a USING (answer_id)
JOIN questions q USING (question_id)
JOIN models m ON m.model = a.model
WHERE (CAST($question_type AS VARCHAR) IS NULL OR q.question_type = $question_type) AND {dimensions.from_release()}
GROUP BY ALL
ORDER BY any_value(m.rowid)
"""


def answer_token_counts(con: duckdb.DuckDBPyConnection, question_type: str | None = None) -> pl.DataFrame:
    """Mean, median and standard deviation (n - 1) of the answers' length in o200k_base tokens, per model,
    over its answers (to the questions of `question_type`, when given) and over those in the correct
    language without repetitions (in the identified languages: the others get no language verdict); one
    decimal. The paper's Table 17 is over the culturally specific questions (its "all data" comes out so:
    provider errors included, as the tokens of their codes)."""
    table = con.sql(TOKEN_COUNTS_SQL, params={"question_type": question_type}).pl()
    return table.with_columns(pl.col("^(mean|median|std)_.*$").round(1))


# ---------------------------------------------------------------- agreement with the annotators

RATED_SQL = f"""
SELECT r.rating_id, q.language, r.model, r.level AS annotator_label,
       {dimensions.is_unreliable()} AS unreliable,
       CASE WHEN s.provider_error THEN 'provider error'
            WHEN {dimensions.LANGUAGE_CORRECT_OR_RAW} THEN 'correct' ELSE 'incorrect' END AS automatic
FROM ratings r
JOIN answer_surface s USING (answer_id)
JOIN questions q ON q.question_id = r.question_id
WHERE r.criterion = 'language_correct'
ORDER BY r.rating_id
"""
PARTIALLY_TREATMENTS = ("excluded", "incorrect", "correct")
KAPPA_SCOPES = {
    "reliable languages": "the rated languages with reliable identification (Kirundi's answers left out)",
    "all rated languages": "all rated languages (Kirundi with the detector's raw verdict)",
}


def rated_answers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Each human rating with the annotator's language label and the automatic verdict of the same answer."""
    return con.sql(RATED_SQL).pl()


def agreement_crosstab(rated: pl.DataFrame) -> pl.DataFrame:
    """Annotator label (yes / partially / no) against the automatic verdict, separately for languages
    whose identification is reliable and for the unreliable ones."""
    table = (
        rated.with_columns(
            identification=pl.when(pl.col("unreliable"))
            .then(pl.lit("unreliable" + dimensions.UNRELIABLE_MARK))
            .otherwise(pl.lit("reliable"))
        )
        .group_by("identification", "annotator_label", "automatic")
        .len()
        .pivot(on="automatic", index=["identification", "annotator_label"], values="len", sort_columns=True)
        .fill_null(0)
    )
    order = {label: i for i, label in enumerate(("yes", "partially", "no"))}
    return table.sort("identification", pl.col("annotator_label").replace_strict(order, return_dtype=pl.Int8))


def agreement_kappa(rated: pl.DataFrame) -> pl.DataFrame:
    """Cohen's kappa between annotators (yes -> correct, no -> incorrect) and the automatic verdict, over
    the reliable languages and over all rated languages, for each treatment of `partially`: left out,
    counted as incorrect, counted as correct. Provider errors have no verdict and are left out."""
    rows = []
    for scope in KAPPA_SCOPES:
        kept = rated.filter(pl.col("automatic") != "provider error")
        if scope == "reliable languages":
            kept = kept.filter(~pl.col("unreliable"))
        for treatment in PARTIALLY_TREATMENTS:
            mapping = {"yes": "correct", "no": "incorrect", "partially": None if treatment == "excluded" else treatment}
            pairs = kept.with_columns(
                human=pl.col("annotator_label").replace_strict(mapping, return_dtype=pl.String)
            ).drop_nulls("human")
            agree = number((pairs["human"] == pairs["automatic"]).mean())
            labels = ("correct", "incorrect")
            table = [
                [pairs.filter((pl.col("human") == h) & (pl.col("automatic") == a)).height for a in labels]
                for h in labels
            ]
            kappa = comparisons.cohens_kappa(table)
            rows.append(
                {
                    "languages": scope,
                    "partially_as": treatment,
                    "n_answers": pairs.height,
                    "n_unreliable_answers": pairs["unreliable"].sum(),
                    "pct_agreement": round(100 * agree, 1),
                    "cohens_kappa": round(float(kappa), 3),
                }
            )
    return pl.DataFrame(rows)


def _kappa_text(kappa: float | None) -> str:
    if kappa is None or math.isnan(kappa):
        return "undefined (every label and every verdict is the same)"
    return f"{kappa:.2f}"


def summary(
    rates: pl.DataFrame,
    accuracy: pl.DataFrame,
    kappa: pl.DataFrame,
    errors: pl.DataFrame,
    exclude_unreliable: bool = True,
) -> str:
    """The notebook's findings in words, computed from its tables."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    clean = (100 * pl.col("n_surface_ok").sum() / pl.col(_SURFACE_DENOMINATOR).sum()).alias("ok")
    by_level = dict(kept.group_by("resource_level").agg(clean).sort("resource_level").iter_rows())
    by_model = kept.group_by("model").agg(clean)
    reliable = accuracy.filter(~pl.col("unreliable"))
    weakest = reliable.sort("pct_identified").row(0, named=True)
    headline = {
        row["languages"]: row for row in kappa.filter(pl.col("partially_as") == "excluded").iter_rows(named=True)
    }
    reliable_kappa, all_kappa = headline["reliable languages"], headline["all rated languages"]
    worst_errors = errors.sort("pct_provider_errors", descending=True).row(0, named=True)
    n_languages = kept["language"].n_unique()
    if "beyond_paper" in kept.columns and kept["beyond_paper"].any():
        scope = (
            f"all {n_languages} languages (Balochi, Hiligaynon, Kirundi and Papiamento identified by the new "
            "engine, beyond the paper)"
        )
    else:
        scope = (
            f"the {n_languages} languages with reliable identification"
            if exclude_unreliable
            else f"all {n_languages} languages"
        )
    return (
        f"Over {scope}, **{by_level.get('high', float('nan')):.1f}%** of the model answers in high-resource "
        f"languages have no surface issue, against **{by_level.get('low', float('nan')):.1f}%** in low-resource "
        f"ones. {_fewest_and_most_issues(by_model)} "
        f"{inert(worst_errors['model'])} returned provider errors for {worst_errors['pct_provider_errors']:.1f}% of its "
        f"answers to culturally {worst_errors['question_type']} questions. On the culturally specific questions "
        f"themselves the identification is right for at least {weakest['pct_identified']:.2f}% of each reliable "
        f"language (lowest: {inert(weakest['language'])}). Against the annotators' language labels (`partially` left "
        f"out), Cohen's kappa is **{_kappa_text(reliable_kappa['cohens_kappa'])}** over "
        f"{reliable_kappa['n_answers']} answers of the reliable languages and "
        f"**{_kappa_text(all_kappa['cohens_kappa'])}** over all {all_kappa['n_answers']}, with "
        f"the {all_kappa['n_unreliable_answers']} of the unreliable languages (whose automatic verdict is the "
        "detector's raw one)."
    ) + (f" **Caveat:** {caveat}" if (caveat := short_text.caveat_sentence(kept)) else "")


def _fewest_and_most_issues(by_model: pl.DataFrame) -> str:
    """Which model has the fewest answers with a surface issue and which the most, each with the share of
    its answers that have one (`by_model`: `model`, `ok`, the share without an issue), ties said as ties."""
    issues = by_model.select("model", (100 - pl.col("ok")).round(1).alias("issues")).sort("issues", "model")
    fewest, most = number(issues["issues"].min()), number(issues["issues"].max())
    if fewest == most:
        return f"Every model has a surface issue in {fewest:.1f}% of its answers."

    def named(value: float) -> str:
        models = issues.filter(pl.col("issues") == value)["model"].to_list()
        return " and ".join(map(inert, models)) + (" have" if len(models) > 1 else " has")

    return (
        f"{named(fewest)} the fewest answers with a surface issue ({fewest:.1f}%), "
        f"{named(most)} the most ({most:.1f}%)."
    )


def study_summary(rates: pl.DataFrame, orders: dimensions.Orders, exclude_unreliable: bool = True) -> str:
    """The surface findings of a study in words, computed from its rates: which languages the engine
    identifies, the share of answers without surface issues (per resource level and per model), the
    provider errors and the repetitions."""
    kept = rates.filter(~pl.col("unreliable")) if exclude_unreliable else rates
    not_identified = sorted(rates.filter(pl.col("unreliable"))["language"].unique().to_list())
    parts = []
    n_languages = rates["language"].n_unique()
    if not_identified:
        parts.append(
            f"The language identification judges {n_languages - len(not_identified)} of the study's {n_languages} "
            f"languages; {', '.join(map(inert, not_identified))} {'is' if len(not_identified) == 1 else 'are'} not identified "
            "(no engine has a measured routing for it, or the study chose none, and no answer carries the "
            "researcher's own verdict), so "
            f"{'its' if len(not_identified) == 1 else 'their'} answers get no language verdict: drawn as not "
            "identified (†) and left out of the aggregates below."
        )
    if kept.is_empty() or kept["n_answers"].sum() == 0:
        return " ".join(parts + ["No answer of an identified language has a surface verdict."])
    ok = (100 * pl.col("n_surface_ok").sum() / pl.col(_SURFACE_DENOMINATOR).sum()).alias("ok")
    overall = kept.select(ok)["ok"][0]
    levels = dict(kept.group_by("resource_level").agg(ok).iter_rows())
    by_level = [
        f"**{levels[level]:.1f}%** in {inert(orders.level_title(level))}"
        for level in orders.resource_levels
        if level in levels
    ]
    parts.append(
        f"Over the {kept['language'].n_unique()} identified languages, **{overall:.1f}%** of the model answers have "
        "no surface issue (in the question's language, without repetitions, not a provider error)"
        + (f": {', '.join(by_level)}." if len(by_level) > 1 else ".")
    )
    by_model = kept.group_by("model").agg(ok).filter(pl.col("ok").is_not_null() & pl.col("ok").is_not_nan())
    if by_model.height >= 2:
        parts.append(_fewest_and_most_issues(by_model))
    totals = kept.select(pl.col("n_answers", "n_answered", "n_provider_errors", "n_repetition").sum()).row(
        0, named=True
    )
    parts.append(
        f"{totals['n_provider_errors']:,} of the {totals['n_answers']:,} answers are provider errors (empty), and "
        f"{100 * totals['n_repetition'] / max(totals['n_answered'], 1):.1f}% of the others repeat themselves."
    )
    caveat = short_text.caveat_sentence(kept)
    if caveat:
        parts.append(f"**Caveat:** {caveat}")
    return " ".join(parts)


def bench_engines(bench: dict) -> pl.DataFrame:
    """One row per langid engine: time, share of the authors' time, agreement with their verdicts."""
    return pl.DataFrame(bench["engines"]).select(
        "langid_engine",
        "processes",
        "seconds",
        "share_of_authors_time",
        "cpu_seconds",
        "share_of_authors_cpu",
        "n_compared",
        "n_disagreements",
        "language_agreement_pct",
        "language_agreement_all_languages_pct",
        "repetition_agreement_pct",
    )


def bench_markdown(bench: dict) -> str:
    """The benchmark's findings in words: speed against the authors' scripts, agreement, disagreements."""
    authors = bench["authors"]
    default = next(e for e in bench["engines"] if e["langid_engine"] == "langid-batch")
    others = [e for e in bench["engines"] if e["langid_engine"] != "langid-batch"]
    verdict = "within" if default["share_of_authors_time"] <= bench["target_share_of_authors_time"] else "above"
    lines = [
        f"On {bench['n_answers']:,} model answers ({bench['machine']['cpus']} CPUs, load average "
        f"{bench['machine']['load_average_before'][0]} at the start), the authors' approach took "
        f"**{authors['seconds']:.1f} s** in one process ({authors['language_seconds']:.1f} s language "
        f"identification, {authors['repetition_seconds']:.1f} s repetitions with `{bench['tokenizer']}`). "
        f"The project's surface stage took **{default['seconds']:.1f} s** on {default['processes']} processes: "
        f"{default['share_of_authors_time']:.0%} of the authors' time, {verdict} the target of a third "
        f"(CPU time: {default['cpu_seconds']:.1f} s against {authors['cpu_seconds']:.1f} s; the project's includes "
        f"starting the workers and loading the models).",
        "",
        f"Its language verdicts agree with the authors' on **{default['language_agreement_pct']:.2f}%** of the "
        f"{default['n_compared']:,} non-empty answers in the 19 reliably identified languages; the repetition "
        f"verdicts on {default['repetition_agreement_pct']:.2f}% of all non-empty answers.",
    ]
    for engine in others:
        lines.append(
            f"- `{engine['langid_engine']}` instead: {engine['seconds']:.1f} s, "
            f"{engine['language_agreement_pct']:.2f}% agreement ({engine['n_disagreements']} answers differ)."
        )
    if bench["disagreements"]:
        kinds = ", ".join(
            f"{d['language']}: authors `{d['authors_language']}`, project `{d['detected_language']}` ({d['n_answers']})"
            for d in bench["disagreements"]
        )
        lines += [
            "",
            f"The {default['n_disagreements']} remaining disagreements (bench/results/surface_disagreements.csv): {kinds}.",
        ]
    else:
        lines += [
            "",
            "No answer of a reliably identified language gets a different language from the two pipelines: "
            "the batch engine runs the `langid` package's own model and scoring, so its verdicts are langid's.",
        ]
    return "\n".join(lines)


def tokenizer_markdown(con: duckdb.DuckDBPyConnection) -> str:
    """Which encoding counted the repetitions and token lengths, and how it is verified."""
    used = [r[0] for r in con.sql("SELECT DISTINCT tokenizer FROM answer_surface ORDER BY 1").fetchall()]
    return (
        f"Repetitions and token counts use the **{', '.join(used)}** encoding, as the paper did, offline: "
        f"the `quicktok-v1` package's implementation, whose ranks are checked against tiktoken's own sha256 "
        f"(`{tokenizer_ranks.O200K_SHA256[:12]}...`) before use. `make check-tokenizer` compares its token ids "
        "with tiktoken's on every text of the database (identical on every text of the release) and measures "
        "what cl100k_base would change (the suite's benchmarks)."
    )
