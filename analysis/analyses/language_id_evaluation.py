"""How well language identification works on human-written text, engine by engine (docs/methods.md,
section 10 Language identification for all 23 languages): the tables of notebook 10, from the
evaluation's files (`make language-id-eval`, `analysis.pipeline.language_id_evaluation`) and from the
human ratings of the answers in the four languages the paper leaves out.

Three questions are asked of every engine: its accuracy on held-out release texts of each language; how
often text of a neighbour language (or of the other languages) is taken for one of the four; and how
much of the UDHR in three of them it recognises (out-of-domain recall).
"""

import duckdb
import polars as pl

from ..core.text import inert
from ..io.calmqa import NEIGHBOURS
from ..io.calmqa import UNRELIABLE_LANGUAGES as TARGETS

# `read` is how notebook 10 reads the evaluation's files.
from ..io.language_id_evaluation import ENGINE_DETAILS, ENGINES, read  # noqa: F401
from . import dimensions

EXCERPT_CHARS = 300  # of a text shown in a table


def _target_codes(texts: pl.DataFrame) -> dict[str, str]:
    return dict(
        texts.filter(pl.col("language_name").is_in(sorted(TARGETS)))
        .select("language_name", "language")
        .unique()
        .iter_rows()
    )


def _judged(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Verdicts with their text's origin and language, the expected language's code, and whether the
    text was identified as the expected language."""
    codes = dict(texts.filter(pl.col("origin") == "release").select("language_name", "language").unique().iter_rows())
    return (
        verdicts.join(texts.drop("text"), on="text_key", how="left")
        .with_columns(expected_code=pl.col("expected").replace_strict(codes, return_dtype=pl.String))
        .with_columns(as_expected=pl.col("detected") == pl.col("expected_code"))
    )


def _engine_columns(frame: pl.DataFrame, index: list[str], value: str) -> pl.DataFrame:
    """`frame` with one column per engine, named by its key (`engine_titles` names them), in the order of ENGINES."""
    wide = frame.pivot(on="engine", index=index, values=value)
    return wide.select(*index, *[e for e in ENGINES if e in wide.columns])


def accuracy(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per language: held-out release texts, and the % each engine identified as their language."""
    own = _judged(texts, verdicts).filter(
        (pl.col("origin") == "release") & (pl.col("expected") == pl.col("language_name"))
    )
    per_engine = own.group_by("language_name", "engine").agg(
        pl.len().alias("n_texts"), (100 * pl.col("as_expected").mean()).round(1).alias("pct")
    )
    table = _engine_columns(per_engine, ["language_name", "n_texts"], "pct").rename({"language_name": "language"})
    return table.with_columns(left_out_by_paper=pl.col("language").is_in(sorted(TARGETS))).sort(
        "left_out_by_paper", "language", descending=[True, False]
    )


def neighbour_confusion(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per language left out by the paper and engine: the % of its held-out release texts identified
    correctly, taken for a named neighbour, and what they were taken for (most frequent first)."""
    own = _judged(texts, verdicts).filter(
        (pl.col("origin") == "release")
        & pl.col("expected").is_in(sorted(TARGETS))
        & (pl.col("expected") == pl.col("language_name"))
    )
    neighbours = pl.col("detected").is_in(
        pl.col("expected").replace_strict({t: list(n) for t, n in NEIGHBOURS.items()})
    )
    counts = own.group_by("expected", "engine", "detected").len()
    taken_for = (
        counts.filter(pl.col("detected") != pl.col("expected").replace_strict(_target_codes(texts)))
        .sort("len", "detected", descending=[True, False])
        .group_by("expected", "engine", maintain_order=True)
        .agg(pl.format("{} ({})", pl.col("detected").fill_null("none"), "len").str.join(", ").alias("taken_for"))
    )
    summary = own.group_by("expected", "engine").agg(
        pl.len().alias("n_texts"),
        (100 * pl.col("as_expected").mean()).round(1).alias("pct_correct"),
        (100 * neighbours.mean()).round(1).alias("pct_named_neighbour"),
    )
    order = {e: i for i, e in enumerate(ENGINES)}
    return (
        summary.join(taken_for, on=["expected", "engine"], how="left")
        .with_columns(
            named_neighbours=pl.col("expected").replace_strict({t: ", ".join(n) for t, n in NEIGHBOURS.items()})
        )
        .rename({"expected": "language"})
        .sort("language", pl.col("engine").replace_strict(order, return_dtype=pl.Int64))
        .select("language", "engine", "n_texts", "pct_correct", "named_neighbours", "pct_named_neighbour", "taken_for")
    )


def neighbour_false_positives(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per language left out by the paper and UDHR neighbour (its named neighbours and English): the %
    of the neighbour's paragraphs each engine took for the left-out language when that was expected."""
    judged = _judged(texts, verdicts).filter((pl.col("origin") == "udhr") & pl.col("expected").is_in(sorted(TARGETS)))
    pairs = pl.DataFrame([{"expected": t, "language": n} for t in sorted(TARGETS) for n in (*NEIGHBOURS[t], "en")])
    per_engine = (
        judged.join(pairs, on=["expected", "language"], how="inner")
        .group_by("expected", "language", "engine")
        .agg(
            pl.col("kind").unique().sort().str.join(", ").alias("declarations"),
            pl.len().alias("n_paragraphs"),
            (100 * pl.col("as_expected").mean()).round(1).alias("pct"),
        )
    )
    return (
        _engine_columns(per_engine, ["expected", "language", "declarations", "n_paragraphs"], "pct")
        .rename({"expected": "taken_for", "language": "neighbour"})
        .sort("taken_for", "neighbour")
    )


def other_language_false_positives(
    texts: pl.DataFrame, verdicts: pl.DataFrame, engines: tuple[str, ...] = ("paper", "all23")
) -> pl.DataFrame:
    """Per language left out by the paper, origin (held-out release texts of the other 22 languages; the
    UDHR in every other language the engine models) and engine: how many texts were taken for the
    left-out language when it was expected, and in which languages they were written."""
    judged = _judged(texts, verdicts).filter(
        pl.col("expected").is_in(sorted(TARGETS))
        & pl.col("engine").is_in(list(engines))
        & (pl.col("language") != pl.col("expected_code"))
    )
    taken = (
        judged.filter(pl.col("as_expected"))
        .group_by("expected", "origin", "engine", "language")
        .len()
        .sort("len", "language", descending=[True, False])
        .group_by("expected", "origin", "engine", maintain_order=True)
        .agg(pl.format("{} ({})", "language", "len").str.join(", ").alias("written_in"))
    )
    order = {e: i for i, e in enumerate(ENGINES)}
    return (
        judged.group_by("expected", "origin", "engine")
        .agg(
            pl.len().alias("n_texts"),
            pl.col("language").n_unique().alias("n_languages"),
            pl.col("as_expected").sum().alias("n_taken"),
            (100 * pl.col("as_expected").mean()).round(2).alias("pct_taken"),
        )
        .join(taken, on=["expected", "origin", "engine"], how="left")
        .rename({"expected": "taken_for"})
        .sort("taken_for", "origin", pl.col("engine").replace_strict(order, return_dtype=pl.Int64))
    )


def out_of_domain_recall(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Per language left out by the paper that has a UDHR (Hiligaynon, Kirundi, Papiamento): the % of its
    paragraphs each engine identified as the language, the legal register the release has none of."""
    codes = _target_codes(texts)
    judged = _judged(texts, verdicts).filter(
        (pl.col("origin") == "udhr")
        & pl.col("expected").is_in(list(codes))
        & (pl.col("language") == pl.col("expected_code"))
    )
    per_engine = judged.group_by("expected", "engine").agg(
        pl.len().alias("n_paragraphs"), (100 * pl.col("as_expected").mean()).round(1).alias("pct")
    )
    return (
        _engine_columns(per_engine, ["expected", "n_paragraphs"], "pct")
        .rename({"expected": "language"})
        .sort("language")
    )


def errors(texts: pl.DataFrame, verdicts: pl.DataFrame, engine: str = "all23") -> pl.DataFrame:
    """Every held-out release text of a language left out by the paper that `engine` did not identify."""
    judged = _judged(texts, verdicts).filter(
        (pl.col("origin") == "release")
        & (pl.col("engine") == engine)
        & pl.col("expected").is_in(sorted(TARGETS))
        & (pl.col("expected") == pl.col("language_name"))
        & ~pl.col("as_expected")
    )
    return (
        judged.join(texts.select("text_key", "text"), on="text_key")
        .select(
            pl.col("expected").alias("language"),
            "kind",
            "group",
            "detected",
            pl.col("ngram_margin").round(3),
            _excerpt(),
        )
        .sort("language", "group", "excerpt")
    )


def neighbour_errors(texts: pl.DataFrame, verdicts: pl.DataFrame, engine: str = "all23") -> pl.DataFrame:
    """Every UDHR paragraph of another language that `engine` took for a language left out by the paper."""
    codes = _target_codes(texts)
    judged = _judged(texts, verdicts).filter(
        (pl.col("origin") == "udhr")
        & (pl.col("engine") == engine)
        & pl.col("expected").is_in(list(codes))
        & pl.col("as_expected")
        & ~pl.col("language").is_in(list(codes.values()))
    )
    return (
        judged.join(texts.select("text_key", "text"), on="text_key")
        .select(
            pl.col("expected").alias("taken_for"),
            "language",
            pl.col("kind").alias("declaration"),
            "group",
            pl.col("ngram_margin").round(3),
            _excerpt(),
        )
        .sort("taken_for", "language", "declaration", "group")
    )


def _excerpt() -> pl.Expr:
    return (
        pl.when(pl.col("text").str.len_chars() > EXCERPT_CHARS)
        .then(pl.col("text").str.slice(0, EXCERPT_CHARS) + " …")
        .otherwise(pl.col("text"))
        .alias("excerpt")
    )


def accuracy_cells(texts: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """`accuracy` as heatmap cells: one row per language and engine (engine by its title)."""
    table = accuracy(texts, verdicts)
    engines = [e for e in ENGINES if e in table.columns]
    return (
        table.unpivot(
            index=["language", "n_texts", "left_out_by_paper"], on=engines, variable_name="engine", value_name="pct"
        )
        .with_columns(
            engine=pl.col("engine").replace_strict(ENGINES, return_dtype=pl.String),
            language_label=pl.col("language")
            + pl.when(pl.col("left_out_by_paper")).then(pl.lit(dimensions.BEYOND_PAPER_MARK)).otherwise(pl.lit("")),
        )
        .select("language_label", "language", "engine", "n_texts", "pct")
    )


def accuracy_order(texts: pl.DataFrame, verdicts: pl.DataFrame) -> tuple[list[str], list[str]]:
    """The heatmap's languages (the four left out by the paper first) and engines, in order."""
    cells = accuracy_cells(texts, verdicts)
    return (
        cells["language_label"].unique(maintain_order=True).to_list(),
        [ENGINES[e] for e in ENGINES if ENGINES[e] in set(cells["engine"])],
    )


def engine_titles(meta: dict) -> pl.DataFrame:
    """The engines compared, with what each is and how long it took."""
    return pl.DataFrame(
        [
            {"engine": e, "name": ENGINES[e], "what": ENGINE_DETAILS[e], "seconds": meta["seconds"].get(e)}
            for e in meta["engines"]
        ],
        schema={"engine": pl.String, "name": pl.String, "what": pl.String, "seconds": pl.Float64},
    )


# ---------------------------------------------------------------- agreement with the annotators

RATED_SQL = f"""
SELECT r.rating_id, q.language, m.display_name AS model, r.level AS annotator_label,
       s.detected_language AS paper_verdict, s.detected_language = s.iso_code AS paper_correct,
       i.detected_language AS new_verdict, round(i.ngram_margin, 3) AS ngram_margin, i.all_languages_correct AS new_correct, a.text
FROM ratings r
JOIN questions q ON q.question_id = r.question_id
JOIN answer_language_all i USING (answer_id)
JOIN surface_answers s USING (answer_id)
JOIN answers a USING (answer_id)
JOIN models m ON m.model = r.model
WHERE r.criterion = 'language_correct' AND {dimensions.is_unreliable("q.language")}
ORDER BY r.rating_id
"""
ANNOTATOR_VERDICT = {"yes": True, "no": False}  # `partially` has no counterpart in a two-valued verdict


def rated_answers(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The human-rated answers in the four languages the paper leaves out (only Kirundi has ratings),
    with the annotator's label, the paper pipeline's and the new engine's verdicts, and whether the new
    verdict agrees with the annotator (null for `partially`)."""
    rated = con.sql(RATED_SQL).pl()
    return rated.with_columns(
        annotator_correct=pl.col("annotator_label").replace_strict(
            ANNOTATOR_VERDICT, default=None, return_dtype=pl.Boolean
        )
    ).with_columns(agrees=pl.col("new_correct") == pl.col("annotator_correct"))


def rated_table(rated: pl.DataFrame, disagreements_only: bool = False) -> pl.DataFrame:
    """The rated answers for display: labels, both verdicts, the n-gram margin and an excerpt."""
    shown = rated.filter(pl.col("agrees").not_()) if disagreements_only else rated
    return shown.select(
        "rating_id",
        "language",
        "model",
        "annotator_label",
        "paper_verdict",
        "new_verdict",
        "ngram_margin",
        "agrees",
        _excerpt(),
    )


def partially_breakdown(rated: pl.DataFrame) -> pl.DataFrame:
    """The new verdicts of the answers each annotator label covers (`partially` included)."""
    return (
        rated.group_by("language", "annotator_label", "new_verdict")
        .len("n_answers")
        .sort("language", "annotator_label", "n_answers", descending=[False, False, True])
    )


def agreement(rated: pl.DataFrame) -> pl.DataFrame:
    """Per language: rated answers, those labelled `yes` or `no`, and the % of these on which the paper
    pipeline's verdict (its detected language is the question's) and the new engine's agree with the annotator."""
    labelled = rated.filter(pl.col("annotator_correct").is_not_null())
    return (
        rated.group_by("language")
        .agg(pl.len().alias("n_rated"), (pl.col("annotator_label") == "partially").sum().alias("n_partially"))
        .join(
            labelled.group_by("language").agg(
                pl.len().alias("n_compared"),
                (100 * (pl.col("paper_correct") == pl.col("annotator_correct")).mean())
                .round(1)
                .alias("pct_agreement_paper"),
                (100 * pl.col("agrees").mean()).round(1).alias("pct_agreement_new"),
            ),
            on="language",
            how="left",
        )
        .sort("language")
    )


# ---------------------------------------------------------------- the goals of issue 19

MIN_ACCURACY = 95.0  # % of held-out text of each of the four languages identified
MAX_NEIGHBOUR_FALSE_POSITIVES = 5.0  # % of a named neighbour's text taken for one of the four
MIN_ANNOTATOR_AGREEMENT = 90.0  # % of the rated answers (`partially` left out) on which the verdicts agree


def goals(texts: pl.DataFrame, verdicts: pl.DataFrame, rated: pl.DataFrame, engine: str = "all23") -> pl.DataFrame:
    """Each goal of issue 19, what `engine` measured, and whether it is met. Columns: goal, language,
    of (what was measured on), measured (%, or a count), threshold, met."""
    table = accuracy(texts, verdicts)
    rows = [
        {
            "goal": "held-out accuracy",
            "language": row["language"],
            "of": f"{row['n_texts']} release texts",
            "measured": row[engine],
            "threshold": f">= {MIN_ACCURACY:g}%",
            "met": row[engine] >= MIN_ACCURACY,
        }
        for row in table.filter(pl.col("left_out_by_paper")).iter_rows(named=True)
    ]
    others = table.filter(~pl.col("left_out_by_paper"))
    below = others.filter(pl.col(engine) < pl.col("paper"))
    rows.append(
        {
            "goal": "no language below its paper-pipeline accuracy",
            "language": f"the other {others.height}",
            "of": ", ".join(below["language"]) or "no language below",
            "measured": float(below.height),
            "threshold": "0 languages",
            "met": below.height == 0,
        }
    )
    false_positives = neighbour_false_positives(texts, verdicts).filter(pl.col("neighbour") != "en")
    rows += [
        {
            "goal": "neighbour false positives",
            "language": row["taken_for"],
            "of": f"{row['n_paragraphs']} UDHR paragraphs in {row['neighbour']}",
            "measured": row[engine],
            "threshold": f"<= {MAX_NEIGHBOUR_FALSE_POSITIVES:g}%",
            "met": row[engine] <= MAX_NEIGHBOUR_FALSE_POSITIVES,
        }
        for row in false_positives.iter_rows(named=True)
    ]
    rows += [
        {
            "goal": "agreement with the annotators",
            "language": row["language"],
            "of": f"{row['n_compared']} rated answers (`partially` left out)",
            "measured": row["pct_agreement_new"],
            "threshold": f">= {MIN_ANNOTATOR_AGREEMENT:g}%",
            "met": row["pct_agreement_new"] is not None and row["pct_agreement_new"] >= MIN_ANNOTATOR_AGREEMENT,
        }
        for row in agreement(rated).iter_rows(named=True)
    ]
    return pl.DataFrame(
        rows,
        schema={
            "goal": pl.String,
            "language": pl.String,
            "of": pl.String,
            "measured": pl.Float64,
            "threshold": pl.String,
            "met": pl.Boolean,
        },
    )


def rated_note(rated: pl.DataFrame) -> str:
    """Which of the four languages have human ratings (`rated_answers`), and how many, in words."""
    counts = rated.group_by("language").len().sort("language")
    if counts.is_empty():
        return "None of the four languages the paper leaves out has human ratings in this database."
    listed = " and ".join(f"{inert(r['language'])} ({r['len']} answers)" for r in counts.iter_rows(named=True))
    only = "only " if counts.height < len(TARGETS) else ""
    return (
        f"Of the four languages, {only}{listed} {'has' if counts.height == 1 else 'have'} human ratings, each answer "
        "with the annotator's label *is the answer in the question's language* (`yes`, `partially`, `no`)."
    )


def release_line(meta: dict, version) -> str:
    """From which release the evaluation was computed, against the one the database was built from
    (`analyses.release_version.of`): the same when `make` built both, as it does."""
    evaluated = meta.get("release")
    if evaluated is None:
        return (
            "**The evaluation does not record the release it was computed from**: run `make language-id-eval` "
            "again to have it set against this database's."
        )
    if evaluated == version.fingerprint:
        return (
            f"The evaluation was computed from the same release as this database: {version.describe('markdown')}; "
            "`make` trains the new engine from it too."
        )
    return (
        f"**The evaluation was computed from release {inert(evaluated)}, not from this database's** "
        f"({version.describe('markdown')}): its tables describe another version of the release. Build both from one "
        "release folder: `make figures DB=... SOURCE=...` with the `SOURCE` the database was built from."
    )


def summary(goals_table: pl.DataFrame, meta: dict, version) -> str:
    """The evaluation's findings in words, from `goals`, and the release it was computed from."""

    def rows(goal: str) -> list[dict]:
        return goals_table.filter(pl.col("goal") == goal).to_dicts()

    worst = max(rows("neighbour false positives"), key=lambda r: r["measured"])
    missed = goals_table.filter(~pl.col("met"))
    lines = [
        f"Cross-validated over {meta['folds']} folds split by question (seed {meta['seed']}), the new engine identifies "
        + ", ".join(f"{inert(r['language'])} {r['measured']:.1f}%" for r in rows("held-out accuracy"))
        + " of the held-out human-written release texts of the four languages the paper leaves out; the other "
        f"languages keep the paper pipeline's verdicts. The most neighbour text taken for one of the four is "
        f"{worst['measured']:.1f}% ({worst['of']}, taken for {inert(worst['language'])}).",
        *[
            f"{inert(r['language'])}: the new verdicts agree with the annotators' language labels on {r['measured']:.1f}% of "
            f"{r['of']}."
            for r in rows("agreement with the annotators")
        ],
        "Every goal set for the new engine is met."
        if missed.is_empty()
        else "**Goals not met:** "
        + "; ".join(f"{r['goal']} ({r['language']}, {r['of']})" for r in missed.to_dicts())
        + ".",
        release_line(meta, version),
    ]
    return "\n\n".join(lines)
