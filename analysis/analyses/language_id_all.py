"""The verdicts of the language identification for all 23 languages (`answer_language_all`, computed by
`analysis.pipeline.language_id_all`; docs/methods.md, section 10), read for notebook 10: the surface
rates with every language identified, and how the verdicts changed for the four languages."""

import duckdb
import polars as pl

from ..schema import NO_SURFACE_ISSUE
from . import dimensions, surface

# Per model, language and question type: the counts that need a language verdict, from this table.
LANGUAGE_COUNTS_SQL = f"""
SELECT s.display_name AS model, s.language, s.question_type,
       count(*) FILTER (i.all_languages_correct) AS n_correct_language,
       count(*) FILTER ({NO_SURFACE_ISSUE("s.provider_error", "s.repetition", "i.all_languages_correct")}) AS n_surface_ok
FROM answer_language_all i
JOIN surface_answers s USING (answer_id)
WHERE {dimensions.SURFACE_FROM_RELEASE}
GROUP BY ALL
"""


def rates_by_model_language(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """`surface.rates_by_model_language` with every language identified: the counts and shares that need
    a language verdict (`n_correct_language`, `n_surface_ok` and their shares) come from this table;
    `beyond_paper` marks the languages the engine identified where the study's verdicts do not (CaLMQA's
    four), and `unreliable` is left only to a language no engine identifies. `surface.metric_cells`,
    `surface.rates_by_model` and `surface.summary` take it as they take the paper's."""
    counts = con.sql(LANGUAGE_COUNTS_SQL).pl()
    by = ["model", "language", "question_type"]
    beyond_paper = [
        language
        for language, label in dimensions.language_labels(con, all_identified=True).items()
        if label.endswith(dimensions.BEYOND_PAPER_MARK)
    ]
    rates = (
        surface.rates_by_model_language(con)
        .drop("n_correct_language", "n_surface_ok")
        .join(counts, on=by, how="left", maintain_order="left", nulls_equal=True)
        .with_columns(
            pl.col("n_correct_language", "n_surface_ok").fill_null(0),
            unreliable=pl.col("unreliable") & ~pl.col("language").is_in(beyond_paper),
            beyond_paper=pl.col("language").is_in(beyond_paper),
            language_label=pl.col("language").replace_strict(dimensions.language_labels(con, all_identified=True)),
        )
    )
    shares = {
        key: pl.when(pl.col(m.denominator.name) > 0).then(100 * pl.col(m.count) / pl.col(m.denominator.name))
        for key, m in surface.METRICS.items()
        if m.needs_language
    }
    return rates.with_columns(**shares)


# Notebook 03's parameter `language_identification`: whose language verdicts its surface figures use.
IDENTIFICATIONS = {
    "paper": "the paper's pipeline (Balochi, Hiligaynon, Kirundi and Papiamento not identified, as in the paper)",
    "all": "the identification of every language (the four the paper leaves out filled in: beyond the paper)",
}


def surface_rates(
    con: duckdb.DuckDBPyConnection, identification: str = "paper"
) -> tuple[pl.DataFrame, dimensions.Orders]:
    """The surface rates by model, language and question type, and the orders of their heatmaps, with the
    language verdicts of `identification` (`IDENTIFICATIONS`): the paper's view, or every language
    identified (the four marked ‡, beyond the paper). Notebooks 03 and 10 draw both through this."""
    if identification not in IDENTIFICATIONS:
        raise ValueError(f"language_identification is {identification!r}; expected one of {', '.join(IDENTIFICATIONS)}")
    if identification == "paper":
        return surface.rates_by_model_language(con), dimensions.Orders.of(con)
    return rates_by_model_language(con), dimensions.Orders.of(con, all_identified=True)


def answer_verdicts(con: duckdb.DuckDBPyConnection, identification: str = "paper") -> pl.DataFrame:
    """Every model answer's surface verdicts (`surface.answer_verdicts`, the paired data of the significance
    tiers) with the language verdicts of `identification`, as `surface_rates` counts them."""
    if identification == "paper":
        return surface.answer_verdicts(con)
    language = "i.all_languages_correct"
    sql = surface.verdicts_sql(
        {"language_correct": language, "surface_ok": NO_SURFACE_ISSUE("s.provider_error", "s.repetition", language)},
        "LEFT JOIN answer_language_all i USING (answer_id)",  # pragma: no mutate (every model answer has its row: the build's coverage check, an import's refresh of what it adds)
    )
    beyond_paper = [
        language
        for language, label in dimensions.language_labels(con, all_identified=True).items()
        if label.endswith(dimensions.BEYOND_PAPER_MARK)
    ]
    return con.sql(sql).pl().with_columns(unreliable=pl.col("unreliable") & ~pl.col("language").is_in(beyond_paper))


def output_name(name: str, identification: str = "paper") -> str:
    """The file name of a figure or table of the surface rates: the paper's view keeps the plain name,
    every language identified is marked as such, so that no file of the paper's view holds its numbers."""
    return name + ("_all_languages" if identification == "all" else "")


VERDICT_CHANGES_SQL = f"""
SELECT s.language, s.detected_language AS paper_verdict, i.detected_language AS new_verdict,
       i.all_languages_correct AS in_question_language, count(*) AS n_answers
FROM answer_language_all i
JOIN surface_answers s USING (answer_id)
WHERE {dimensions.is_unreliable("s.language")} AND i.detected_language IS NOT NULL
GROUP BY ALL
ORDER BY s.language, n_answers DESC, paper_verdict, new_verdict
"""


def verdict_changes(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """For the model answers in the four languages: the paper pipeline's verdict against the new one."""
    return con.sql(VERDICT_CHANGES_SQL).pl()
