"""Overall answer scores (docs/methods.md, section 04 Answer scores), their heatmap cells with intervals
(`stats.intervals`), the caveats their heatmaps carry, and the comparison of two groups of answers
(section 6): Fisher's exact test for a 0/1 score, the two-sample Kolmogorov-Smirnov test for a
continuous one.

Per answer S = S_surf x S_fact x S_rel. S_surf is 1 without a surface issue (`answer_surface`), else 0.
S_fact (supported claims over claims, 0 without claims) and S_rel (1 when a judge found the answer
relevant) come from `answer_metrics`, imported from external pipelines, and exist only for answers
without a surface issue: an answer with a surface issue scores 0 whatever its metrics say.

An answer is *valid* for a score when that score is known for it. A surface-clean answer without
imported metrics has no S; so that such gaps cannot drag a cell towards the zeros of the answers with
surface issues, a cell's S is shown only when at least `MIN_METRICS_COVERAGE` of its surface-clean
answers have their metrics.
"""

from collections.abc import Sequence

import duckdb
import numpy as np
import polars as pl

from .. import store
from ..core.scalars import number
from ..core.text import inert
from ..schema import SCORE_LIST, SCORE_SHORT
from ..stats import comparisons, intervals
from . import dimensions, ranking, surface, tiers

MIN_VALID_ANSWERS = intervals.MIN_VALID
MIN_METRICS_COVERAGE = 0.9
# Why a cell has no value besides those of the surface heatmaps (`surface.PROVIDER_ERRORS_ONLY`,
# `surface.NOT_IDENTIFIED`): fewer valid answers than the heatmap asks for, or, for S, imported metrics
# for too few of its surface-clean answers.
TOO_FEW_ANSWERS = "too few answers"
TOO_FEW_METRICS = "too few metrics"


SCORES = {score.column: score.title for score in SCORE_LIST}
SHARE_SCORES = frozenset(score.column for score in SCORE_LIST if score.share)
SCORE_WORDS = {score.column: score.words for score in SCORE_LIST}
METRICS_HOWTO = (
    "Import them into a copy of the database with `make import-metrics FILE=metrics.csv DB=...` (a CSV or "
    "JSONL file keyed by the upstream answer name, `answer`, or by `question`, `language` and `model`, with "
    "`n_claims`, `n_supported` and `relevant`; the suite comes with an example), or from VeriScore's own output "
    "with `make import-metrics FILE=claims.jsonl VERIFICATION=verification.jsonl DB=...`, then run "
    "`make figures DB=...`."
)

ANSWERS_SQL = f"""
SELECT s.answer_id, s.question_id, s.display_name AS model, s.language, s.question_type, s.collection, q.category,
       s.resource_level, {dimensions.is_unreliable("s.language")} AS unreliable,
       -- Unreliable languages keep their raw language verdict (analyses/dimensions.py): shown marked in
       -- the heatmaps, left out of aggregates by default.
       {dimensions.SURFACE_OK_OR_RAW} AS surface_ok,
       s.provider_error, s.n_bytes,
       am.n_claims, am.n_supported, am.relevant
FROM surface_answers s
JOIN questions q USING (question_id)
LEFT JOIN answer_metrics am USING (answer_id)
WHERE {{questions}}
ORDER BY s.answer_id
"""


def score_components(answers: pl.DataFrame) -> pl.DataFrame:
    """Add s_surf, s_fact, s_rel and s (each 0 to 1, null when unknown) to rows with columns surface_ok,
    n_claims, n_supported and relevant."""
    clean = pl.col("surface_ok")
    fact = (
        pl.when(pl.col("n_claims") > 0)
        .then(pl.col("n_supported") / pl.col("n_claims"))
        .when(pl.col("n_claims") == 0)
        .then(0.0)
    )
    return answers.with_columns(
        s_surf=clean.cast(pl.Float64),
        s_fact=pl.when(clean).then(fact),
        s_rel=pl.when(clean).then(pl.col("relevant").cast(pl.Float64)),
    ).with_columns(s=pl.when(~clean).then(0.0).otherwise(pl.col("s_fact") * pl.col("s_rel")))


def answer_scores(con: duckdb.DuckDBPyConnection, imported_questions: bool = False) -> pl.DataFrame:
    """Every model answer with its surface verdict, imported metrics and score components: to the release's
    questions (the paper's figures), or with `imported_questions` to imported ones too (a comparison of
    collections, which the auto-collected questions of an import make possible)."""
    missing = [name for name in ("answer_metrics", "answer_surface") if not store.table_exists(con, name)]
    if missing:
        raise LookupError(
            f"the database has no table {', '.join(sorted(missing))}: build it with `make db`, "
            "which computes the surface verdicts"
        )
    answers = con.sql(ANSWERS_SQL.format(questions="true" if imported_questions else dimensions.from_release())).pl()
    labels = dimensions.language_labels(con)
    return score_components(answers).with_columns(language_label=pl.col("language").replace_strict(labels))


# ---------------------------------------------------------------------------------- answer scores


def _coverage(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Per group: the share of surface-clean answers whose S is known (1 when none is clean)."""
    return (
        frame.group_by(by)
        .agg(
            (pl.col("s").is_not_null() & pl.col("surface_ok")).sum().alias("n_clean_scored"),
            pl.col("surface_ok").fill_null(False).sum().alias("n_clean"),
        )
        .with_columns(
            metrics_coverage=pl.when(pl.col("n_clean") == 0)
            .then(1.0)
            .otherwise(pl.col("n_clean_scored") / pl.col("n_clean"))
        )
        .drop("n_clean_scored", "n_clean")
    )


def score_cells(
    answers: pl.DataFrame,
    value: str,
    by: Sequence[str] = ("model", "language", "question_type"),
    *,
    orders: dimensions.Orders,
    min_valid: int = MIN_VALID_ANSWERS,
    min_metrics_coverage: float = MIN_METRICS_COVERAGE,
    **bootstrap,
) -> pl.DataFrame:
    """Heatmap cells of one score: its mean x 100 per group of `by`, with n and the interval (Wilson for
    the 0/1 scores, bootstrap for the others).

    A cell without a value has a `status` that says why: per language, every answer is a provider
    error, or the language cannot be identified reliably (every score needs the surface verdict, which
    needs the language); otherwise it has fewer than `min_valid` valid answers (`TOO_FEW_ANSWERS`), or,
    for S, fewer than `min_metrics_coverage` of its surface-clean answers have metrics (`TOO_FEW_METRICS`).
    """
    by = list(by)
    keys = [c for c in ("language_label", "resource_level", "unreliable") if "language" in by and c not in by]
    if value in SHARE_SCORES:
        cells = intervals.share_cells(answers, by, value, min_valid=min_valid)
    else:
        cells = intervals.bootstrap_cells(answers, by, value, min_valid=min_valid, scale=100.0, **bootstrap)
    cells = cells.join(answers.select("language", *keys).unique(), on="language") if keys else cells
    # (a study without question types groups by a question type that is null: null keys join)
    cells = cells.join(_coverage(answers, by), on=by, nulls_equal=True)
    thin = pl.lit(value == "s") & (pl.col("metrics_coverage") < min_metrics_coverage)
    # Too thin to show: fewer valid answers than `min_valid` (the interval functions leave the mean
    # blank), or too few metrics; unless a reason of the language comes first.
    status = (
        pl.when(pl.col("n_valid") < min_valid)
        .then(pl.lit(TOO_FEW_ANSWERS))
        .when(thin)
        .then(pl.lit(TOO_FEW_METRICS))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    if "language" in by:
        errors = answers.group_by(by).agg(pl.col("provider_error").all().alias("all_provider_errors"))
        cells = cells.join(errors, on=by, nulls_equal=True)
        status = surface.cell_status(pl.col("all_provider_errors"), pl.col("unreliable"), status)
    cells = cells.with_columns(status=status).with_columns(
        [pl.when(pl.col("status").is_null()).then(pl.col(c)).alias(c) for c in ("mean", "ci_low", "ci_high")]
    )
    cells = (
        cells.rename({"mean": value})
        .with_columns(pl.col(value, "ci_low", "ci_high").round(1), pl.col("metrics_coverage").round(3))
        .select(*by, *keys, "n_answers", "n_valid", value, "ci_low", "ci_high", "metrics_coverage", "status")
        .pipe(dimensions.in_order, by, orders=orders)
    )
    if "model" not in by or "question_id" not in answers.columns:
        return cells
    # The models' significance tiers within each group of the other columns of `by` (`analyses.tiers`).
    return tiers.with_tiers(
        cells, answers, value, by=by, better="higher", kind="binary" if value in SHARE_SCORES else "numeric"
    )


def available_scores(answers: pl.DataFrame) -> list[str]:
    """The score columns that at least one answer has (S_surf always; the others need imported metrics)."""
    return [c for c in SCORES if c == "s_surf" or answers.filter(pl.col("surface_ok"))[c].is_not_null().any()]


def scores_by_model(
    answers: pl.DataFrame,
    orders: dimensions.Orders,
    exclude_unreliable: bool = True,
    *,
    values: list[str] | None = None,
    min_valid: int = MIN_VALID_ANSWERS,
    min_metrics_coverage: float = MIN_METRICS_COVERAGE,
    **bootstrap,
) -> pl.DataFrame:
    """Table 2: each score component per model and question type, micro-averaged (answers pooled over
    languages), x 100, with n and the bootstrap interval; unreliable languages out by default. `values`
    are the scores it holds (by default every one; a report gives those the database has, so that it
    shows no row without a value)."""
    kept = answers.filter(~pl.col("unreliable")) if exclude_unreliable else answers
    parts = [
        score_cells(
            kept,
            value,
            ("model", "question_type"),
            orders=orders,
            min_valid=min_valid,
            min_metrics_coverage=min_metrics_coverage,
            **bootstrap,
        )
        .rename({value: "mean"})
        .with_columns(score=pl.lit(value))
        for value in SCORES
        if values is None or value in values
    ]
    order = {value: i for i, value in enumerate(SCORES)}
    return (
        pl.concat(parts)
        .with_columns(pl.col("score").replace_strict(order, return_dtype=pl.Int8).alias("order"))
        .pipe(dimensions.in_order, ["model", "question_type", "order"], orders=orders)
        .select(
            "model",
            "question_type",
            "score",
            "n_answers",
            "n_valid",
            "mean",
            "ci_low",
            "ci_high",
            "metrics_coverage",
            *(c for c in ("tier", "p_vs_best", "p_adjusted") if c in parts[0].columns),
        )
    )


def heatmap_caveats(
    answers: pl.DataFrame,
    available: list[str],
    exclude_unreliable: bool = True,
    value: str = "s_surf",
    *,
    paper: str | None = None,
) -> list[str]:
    """What a reader of the heatmap of `value` must know, to stand beside it: that S_surf is S's surface
    part only while S cannot be drawn (the paper's study: a study of your own has no S to wait for), and
    that S_surf (and S with it) counts a short answer as clean (the model with the shortest clean answers,
    its median in bytes against the other models' median)."""
    caveats = []
    if paper and value == "s_surf" and "s" not in available:
        caveats.append(
            "Surface component only: S also needs factuality and relevance for the answers without surface "
            f"issues, and the database has {_metrics_words(available)} (make import-metrics)."
        )
    if value not in ("s_surf", "s"):
        return caveats
    kept = answers.filter(~pl.col("unreliable")) if exclude_unreliable else answers
    clean = kept.filter(pl.col("surface_ok") & pl.col("n_bytes").is_not_null())
    if clean["model"].n_unique() >= 2:
        medians = clean.group_by("model").agg(pl.col("n_bytes").median()).sort("n_bytes", "model")
        shortest = medians.row(0, named=True)
        others = number(clean.filter(pl.col("model") != shortest["model"])["n_bytes"].median())
        caveats.append(
            f"A short answer counts as clean: {inert(shortest['model'])}'s median answer without surface issues "
            f"is {shortest['n_bytes']:,.0f} bytes, the other models' {others:,.0f} bytes "
            f"(over the {clean['language'].n_unique()} languages"
            f"{' identified reliably' if exclude_unreliable else ''})."
        )
    return caveats


def surface_note(answers: pl.DataFrame, table: pl.DataFrame, exclude_unreliable: bool = True) -> str:
    """The surface component of a study's answers in words (S_surf: 1 for an answer without surface issue):
    its share over the identified languages, and the models with the highest and the lowest."""
    kept = answers.filter(~pl.col("unreliable")) if exclude_unreliable else answers
    valid = kept.filter(pl.col("s_surf").is_not_null())
    if valid.is_empty():
        return "No answer has a surface verdict (S_surf): its language is not identified."
    per_model = (
        table.filter((pl.col("score") == "s_surf") & pl.col("mean").is_not_null())
        .group_by("model")
        .agg(((pl.col("mean") * pl.col("n_valid")).sum() / pl.col("n_valid").sum()).alias("mean"))
        .sort("mean", "model")
    )
    text = (
        f"**{100 * number(valid['s_surf'].mean()):.1f}%** of the {valid.height:,} model answers of the identified "
        "languages have no surface issue (S_surf: in the question's language, without repetitions, not a "
        "provider error)."
    )
    if per_model.height >= 2:
        found = ranking.ends(per_model.sort("model").iter_rows(), ".1f")
        if found.tied:
            text += f" Every model has the same share ({found.high:.1f})."
        else:
            best, worst = found.top, found.bottom
            text += (
                f" {ranking.listed(best)} {ranking.has(best)} the most ({found.high:.1f}{ranking.each(best)}), "
                f"{ranking.listed(worst)} the fewest ({found.low:.1f}{ranking.each(worst)})."
            )
    return text


def _metrics_words(available: list[str]) -> str:
    """Which imported metrics the database has, in words: none, factuality only, relevance only, or both."""
    present = [words for key, words in (("s_fact", "factuality"), ("s_rel", "relevance")) if key in available]
    if not present:
        return "no imported metrics"
    if len(present) == 2:
        return "imported factuality and relevance for too few of them"
    missing = "relevance" if present == ["factuality"] else "factuality"
    return f"imported {present[0]} but no {missing}"


def _scope(exclude_unreliable: bool) -> str:
    return (
        "the languages with reliable language identification (Balochi, Hiligaynon, Kirundi and Papiamento left out)"
        if exclude_unreliable
        else "all languages"
    )


def thresholds_note(min_valid: int, min_metrics_coverage: float, n_resamples: int) -> str:
    """The thresholds and the bootstrap this report ran with (the notebook's parameters), in words."""
    return (
        f"Here a cell is drawn when at least {min_valid} of its answers are valid and, for S, when imported "
        f"metrics cover at least {min_metrics_coverage:.0%} of its surface-clean answers; a bootstrap interval "
        f"draws {n_resamples:,} resamples of the cell's answers."
    )


def missing_scores_note(available: list[str]) -> str:
    """Which score components this database cannot show, and why; empty when none is missing."""
    missing = [SCORES[c] for c in SCORES if c not in available]
    if not missing:
        return ""
    return (
        f"Not shown: {', '.join(missing)}. They need factuality and relevance metrics for the answers without "
        f"surface issues, and this database has {_metrics_words(available)} (see the summary above for how to "
        "import them)."
    )


def summary(
    answers: pl.DataFrame,
    table: pl.DataFrame,
    cells: dict[str, pl.DataFrame],
    exclude_unreliable: bool = True,
    min_valid: int = MIN_VALID_ANSWERS,
    min_metrics_coverage: float = MIN_METRICS_COVERAGE,
) -> str:
    """The notebook's findings in words, computed from the per-answer scores, Table 2 and the heatmap cells."""
    kept = answers.filter(~pl.col("unreliable")) if exclude_unreliable else answers
    clean = kept.filter(pl.col("surface_ok"))
    headline = "s" if "s" in cells and table.filter(pl.col("score") == "s")["mean"].is_not_null().any() else "s_surf"
    by_type = (
        kept.group_by("question_type")
        .agg((100 * pl.col(headline).mean()).alias("mean"), pl.col(headline).count().alias("n"))
        .sort("question_type")
    )
    means = {r["question_type"]: r for r in by_type.iter_rows(named=True)}
    per_model = (
        table.filter((pl.col("score") == headline) & pl.col("mean").is_not_null())
        .group_by("model")
        .agg(
            ((pl.col("mean") * pl.col("n_valid")).sum() / pl.col("n_valid").sum()).alias("mean"),
            pl.col("n_valid").sum(),
        )
        .sort("mean", "model")
    )
    words = SCORE_WORDS[headline]
    parts = []
    covered = {c: clean.filter(pl.col(c).is_not_null()).height for c in ("s_fact", "s_rel", "s")}
    if not covered["s_fact"] and not covered["s_rel"]:
        parts.append(
            "**Factuality (S_fact) and relevance (S_rel) are missing**: the database holds no imported metrics for "
            "the answers without surface issues, so the overall score S = S_surf x S_fact x S_rel cannot be "
            "computed. This notebook shows its surface component S_surf only. " + METRICS_HOWTO
        )
    else:
        share = {
            c: f"**{n:,} of the {clean.height:,}** ({100 * n / max(clean.height, 1):.1f}%)" for c, n in covered.items()
        }
        parts.append(
            f"Imported metrics cover factuality for {share['s_fact']} answers without surface issues and relevance "
            f"for {share['s_rel']}; S, which needs both, is known for {share['s']}. Answers without metrics have no "
            f"S and are left out; a cell's S is blank when fewer than {min_metrics_coverage:.0%} of its "
            "surface-clean answers have them."
        )
        if headline == "s_surf":
            parts.append(
                "Too few answers have S for a cell or a model to show it, so this summary speaks of the surface "
                "component S_surf. " + METRICS_HOWTO
            )
    type_words = " and ".join(
        f"**{means[t]['mean']:.1f}** on culturally {t} questions ({means[t]['n']:,} answers)"
        for t in ("agnostic", "specific")
        if t in means and means[t]["n"]
    )
    parts.append(f"Over {_scope(exclude_unreliable)}, {words} is {type_words}.")
    if per_model.height >= 2:
        worst, best = per_model.row(0, named=True), per_model.row(-1, named=True)
        parts.append(
            f"{inert(best['model'])} scores highest ({best['mean']:.1f} over {best['n_valid']:,} answers), "
            f"{inert(worst['model'])} lowest ({worst['mean']:.1f} over {worst['n_valid']:,}), both types of "
            "question pooled."
        )
    heatmap = cells[headline]
    reasons = heatmap.filter(pl.col("status").is_not_null()).group_by("status").agg(pl.len()).sort("status")
    why = "; ".join(
        f"{n} {status}" + (f" (fewer than {min_valid} valid answers)" if status == TOO_FEW_ANSWERS else "")
        for status, n in reasons.iter_rows()
    )
    parts.append(
        f"{reasons['len'].sum()} of the {heatmap.height} model x language x question-type cells of the "
        f"{SCORES[headline]} heatmap have no value" + (f": {why}." if why else ".")
    )
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------- collection comparison

GROUP_COLUMNS = ("collection", "question_type", "category", "model", "resource_level", "language")


def group_filter(spec: dict) -> pl.Expr:
    """The answers of a group given as {column: value or list of values} over `GROUP_COLUMNS` (and an
    optional `label`), e.g. {"label": "auto-collected", "collection": "auto", "question_type": "specific"}."""
    conditions = []
    for column, wanted in spec.items():
        if column == "label":
            continue
        if column not in GROUP_COLUMNS:
            raise ValueError(
                f"a group can select on {', '.join(GROUP_COLUMNS)} (and name itself with `label`), not on {column!r}"
            )
        conditions.append(pl.col(column).is_in(list(wanted) if isinstance(wanted, (list, tuple)) else [wanted]))
    return pl.all_horizontal(conditions) if conditions else pl.lit(True)


def group_label(spec: dict) -> str:
    return spec.get("label") or ", ".join(f"{k} = {v}" for k, v in spec.items())


def group_labels(groups: tuple[dict, dict]) -> list[str]:
    """The labels of the two groups, in their order (the panels of the comparison's heatmap)."""
    return [group_label(g) for g in groups]


def choose_score(
    answers: pl.DataFrame,
    score: str = "auto",
    min_metrics_coverage: float = MIN_METRICS_COVERAGE,
) -> tuple[str, str]:
    """The per-answer score to compare, and a sentence saying which and why.

    `auto` takes S when metrics cover at least `min_metrics_coverage` of the surface-clean answers, else S_surf.
    """
    clean = answers.filter(pl.col("surface_ok"))
    coverage = number(clean["s"].is_not_null().mean()) if clean.height else 0.0
    if score == "auto":
        score = "s" if coverage >= min_metrics_coverage else "s_surf"
        reason = f"imported metrics cover {coverage:.1%} of the answers without surface issues" + (
            "" if score == "s" else f" (less than {min_metrics_coverage:.0%}), so S cannot be compared"
        )
    elif score in SCORES:
        reason = "chosen for this run"
    else:
        raise ValueError(f"score is {score!r}; expected auto or one of {', '.join(SCORES)}")
    note = f"The compared score is **{SCORES[score]}**: {reason}."
    note += f" The groups are compared by the {TESTS[score]}" + (
        f": {SCORE_SHORT[score]} is 0 or 1 per answer, so its distribution is the share of ones, and the test compares "
        "the two shares."
        if score in SHARE_SCORES
        else ", which compares the two distributions of the per-answer score."
    )
    return score, note


def choose_groups(
    answers: pl.DataFrame,
    value: str,
    groups: tuple[dict, dict],
    fallback: tuple[dict, dict],
) -> tuple[tuple[dict, dict], str]:
    """The two groups to compare: `groups` when both have answers with a `value`, else `fallback`; and
    a sentence that says which, and why."""

    def size(spec):
        return answers.filter(group_filter(spec) & pl.col(value).is_not_null()).height

    empty = [group_label(g) for g in groups if size(g) == 0]
    if not empty:
        return groups, (
            f"Compared: **{inert(group_label(groups[0]))}** ({size(groups[0]):,} answers) against "
            f"**{inert(group_label(groups[1]))}** ({size(groups[1]):,} answers)."
        )
    note = (
        f"The group{'s' if len(empty) > 1 else ''} {' and '.join(f'**{inert(e)}**' for e in empty)} "
        f"{'have' if len(empty) > 1 else 'has'} no answers in this database, so the comparison "
        f"{inert(group_label(groups[0]))} vs {inert(group_label(groups[1]))} cannot be made."
    )
    if any(g.get("collection") == "auto" for g in groups) and not answers.filter(pl.col("collection") == "auto").height:
        note += (
            " No model answers an auto-collected question here (the release snapshot holds only "
            "human-collected questions): auto-collected questions join the database with "
            "`make import-questions FILE=... DB=...` (the Hugging Face export of the public dataset), "
            "the models' answers to them with `make import-answers FILE=... DB=...`."
        )
    missing = [group_label(g) for g in fallback if size(g) == 0]
    if missing:
        return (
            fallback,
            note
            + f" The fallback comparison has no answers either ({', '.join(inert(m) for m in missing)}): nothing is compared.",
        )
    return fallback, note + (
        f" Compared instead, as the data allows: **{inert(group_label(fallback[0]))}** "
        f"({size(fallback[0]):,} answers) against **{inert(group_label(fallback[1]))}** "
        f"({size(fallback[1]):,} answers)."
    )


def _test_row(a: np.ndarray, b: np.ndarray, value: str) -> dict:
    """The two samples' sizes and means (x 100), and their test: Fisher's exact test of the two shares for
    a 0/1 score (`SHARE_SCORES`; the difference of the shares, in points), the two-sample KS test (its
    D) for a continuous one."""
    row: dict[str, str | int | float | None] = {
        "n_a": len(a),
        "n_b": len(b),
        "mean_a": None,
        "mean_b": None,
        "test": TESTS[value],
        "difference": None,
        "ks_d": None,
        "p_value": None,
    }
    if len(a):
        row["mean_a"] = round(100 * float(a.mean()), 1)
    if len(b):
        row["mean_b"] = round(100 * float(b.mean()), 1)
    if len(a) and len(b):
        row["difference"] = round(100 * float(a.mean() - b.mean()), 1)
        if value in SHARE_SCORES:
            _, row["p_value"] = comparisons.fisher_exact(a, b)
        else:
            row["ks_d"], row["p_value"] = comparisons.ks_two_sample(a, b)
    return row


# The test of each score: a 0/1 score's distribution is its share, so two groups are compared by their
# shares (the KS D of two 0/1 samples would be just their difference, with a p value made for
# continuous data); a continuous score by its whole distribution.
TESTS = {
    value: "Fisher's exact test" if value in SHARE_SCORES else "two-sample Kolmogorov-Smirnov test" for value in SCORES
}


def _samples(answers: pl.DataFrame, spec: dict, value: str) -> pl.DataFrame:
    """The answers of a group with a `value`, in the languages that can be identified: every score needs
    the surface verdict, which needs the language, so the unreliable languages are never tested (as
    their heatmap cells are drawn as not identified)."""
    return answers.filter(group_filter(spec) & pl.col(value).is_not_null() & ~pl.col("unreliable"))


def comparison_by_language(
    answers: pl.DataFrame, groups: tuple[dict, dict], value: str, orders: dimensions.Orders
) -> pl.DataFrame:
    """Per language: the test of the per-answer `value` of the two groups (`TESTS`: Fisher's exact test
    for a 0/1 score, the two-sided two-sample KS test otherwise), with both sample sizes, both means (x
    100), their difference, KS's D and the p value; all null but the sizes when a group has no answers
    in that language, and for a language that cannot be identified (`note` says so: no test runs on
    verdicts that do not exist)."""
    a, b = (_samples(answers, g, value) for g in groups)
    languages = dimensions.in_order(
        answers.select("resource_level", "language", "unreliable").unique(),
        ["resource_level", "language"],
        orders=orders,
    )
    rows = [
        _test_row(
            a.filter(pl.col("language") == language)[value].to_numpy(),
            b.filter(pl.col("language") == language)[value].to_numpy(),
            value,
        )
        for language in languages["language"]
    ]
    return pl.concat([languages, pl.DataFrame(rows, schema=comparisons.RESULT_SCHEMA)], how="horizontal").with_columns(
        group_a=pl.lit(group_label(groups[0])),
        group_b=pl.lit(group_label(groups[1])),
        note=pl.when(pl.col("unreliable")).then(pl.lit(f"{surface.NOT_IDENTIFIED}: no verdicts, no test")),
    )


ALL_MODELS = "all models in both groups"


def comparison_aggregate(
    answers: pl.DataFrame,
    groups: tuple[dict, dict],
    value: str,
    orders: dimensions.Orders,
    resource_level: str = "high",
) -> pl.DataFrame:
    """Table 14: over the languages of `resource_level`, the test of the two groups per model (in the
    paper's order), and pooled over the models that have answers in both groups (so that a model present
    in one group only does not pass for a difference between the groups)."""
    scope = answers.filter(pl.col("resource_level") == resource_level)
    a, b = (_samples(scope, g, value) for g in groups)
    present = set(scope["model"])
    models = [m for m in orders.models if m in present] + sorted(present - set(orders.models))
    rows = [
        _test_row(
            a.filter(pl.col("model") == m)[value].to_numpy(), b.filter(pl.col("model") == m)[value].to_numpy(), value
        )
        for m in models
    ]
    both = [m for m, row in zip(models, rows) if row["n_a"] and row["n_b"]]
    rows.append(
        _test_row(
            a.filter(pl.col("model").is_in(both))[value].to_numpy(),
            b.filter(pl.col("model").is_in(both))[value].to_numpy(),
            value,
        )
    )
    return pl.concat(
        [pl.DataFrame({"model": [*models, ALL_MODELS]}), pl.DataFrame(rows, schema=comparisons.RESULT_SCHEMA)],
        how="horizontal",
    ).with_columns(
        resource_level=pl.lit(resource_level),
        group_a=pl.lit(group_label(groups[0])),
        group_b=pl.lit(group_label(groups[1])),
    )


def group_cells(
    answers: pl.DataFrame, groups: tuple[dict, dict], value: str, orders: dimensions.Orders, **options
) -> pl.DataFrame:
    """Heatmap cells (model x language) of `value` for each group, with a `group` column to facet on."""
    labelled = pl.concat([answers.filter(group_filter(g)).with_columns(group=pl.lit(group_label(g))) for g in groups])
    return score_cells(labelled, value, ("model", "language", "group"), orders=orders, **options)


def comparison_summary(
    score_note: str, group_note: str, by_language: pl.DataFrame, aggregate: pl.DataFrame, alpha: float = 0.05
) -> str:
    """The collection comparison's findings in words."""
    tested = by_language.filter(pl.col("p_value").is_not_null())
    parts = [score_note, group_note]
    test = by_language["test"][0] if by_language.height else ""

    def result(row: dict) -> str:
        statistic = (
            f"D = {row['ks_d']:.3f}" if row["ks_d"] is not None else f"difference {row['difference']:+.1f} points"
        )
        return f"{statistic}, p = {row['p_value']:.3g}"

    if tested.height:
        significant = tested.filter(pl.col("p_value") < alpha)
        largest = tested.sort(
            pl.col("ks_d").fill_null(pl.col("difference").abs()), "language", descending=[True, False]
        ).row(0, named=True)
        parts.append(
            f"The {test} could be run in {tested.height} of {by_language.height} languages; the groups differ "
            f"at p < {alpha} in {significant.height} of them (no correction for multiple tests). The largest "
            f"difference is in {inert(largest['language'])} ({result(largest)}, n = {largest['n_a']} and {largest['n_b']})."
        )
    else:
        parts.append(f"No language has answers in both groups, so no {test or 'test'} could be run.")
    overall = aggregate.filter(pl.col("model") == ALL_MODELS).row(0, named=True)
    if overall["p_value"] is not None:
        parts.append(
            f"Over the {overall['resource_level']}-resource languages, pooled over the models that answered in "
            f"both groups, the mean score x 100 is {overall['mean_a']:.1f} for {inert(overall['group_a'])} and "
            f"{overall['mean_b']:.1f} for {inert(overall['group_b'])} ({result(overall)}, "
            f"n = {overall['n_a']:,} and {overall['n_b']:,})."
        )
    return "\n\n".join(parts)
