"""What must hold of the outputs of every generic report of any study (issue 34), checked against the rows
the study folder holds (`study_shapes.Shape.rows`) and the CSVs the reports wrote:

- counts add up to the input rows (questions, answers, ratings and metric values, wherever a table counts
  them);
- shares lie in [0, 100] (`pct_*` columns) or [0, 1] (`share`);
- every interval contains its estimate;
- every number a summary sentence states is its CSV's (or, where no CSV holds that aggregate, the input's),
  and the items it names are the ones with that number.

`check(shape, figures, summaries)` raises AssertionError naming the first that does not hold.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl

# The estimate of a table with `ci_low` and `ci_high`, by the name of its column.
ESTIMATES = (
    "mean",
    "estimate",
    "alpha",
    "tau_b",
    "s_surf",
    "pct",
    "pct_correct_language",
    "pct_repetition",
    "pct_surface_ok",
)


def plain(markdown: str) -> str:
    """Markdown as a reader reads it: emphasis marks and backslash escapes dropped, spaces collapsed."""
    text = re.sub(r"(?<!\\)\*", "", markdown)
    text = re.sub(r"\\(.)", r"\1", text)
    return " ".join(text.split())


# Columns of names (a model, a metric may be called `0`): text, whatever their values look like.
NAME_COLUMNS = ("language", "model", "metric", "criterion")


def _csv(path: Path) -> pl.DataFrame:
    header = pl.read_csv(path, n_rows=0).columns
    return pl.read_csv(
        path, infer_schema_length=None, schema_overrides={c: pl.String for c in NAME_COLUMNS if c in header}
    )


def _read(figures: Path) -> dict[str, pl.DataFrame]:
    """Every CSV the reports wrote, by `notebook/name`, its text cells as written (a leading `'` that guards
    a spreadsheet from a formula taken off)."""
    tables = {}
    for path in sorted(figures.glob("*/*.csv")):
        frame = _csv(path)
        frame = frame.with_columns(
            # a column without a value reads as text: as the number column it is
            pl.col(c).cast(pl.Float64)
            if frame[c].null_count() == frame.height and c not in NAME_COLUMNS
            else pl.col(c).str.replace(r"^'([=+\-@\t\r])", "$1")
            for c, t in frame.schema.items()
            if t == pl.String
        )
        tables[f"{path.parent.name}/{path.stem}"] = frame
    return tables


# What report 03 says when the language identification judges none of the study's languages.
NOT_JUDGED = "No figure of the share in the correct language or without surface issues is drawn"


def check(shape, figures: Path, summaries: dict[str, list[str]]) -> None:
    """Every invariant of the outputs in `figures` (one folder per notebook) of the study of `shape`;
    `summaries`: each notebook's Markdown outputs, in order."""
    tables = _read(figures)
    rows = shape.rows
    shown = {m: (shape.display_names or {}).get(m) or m for m in shape.models}
    language_of = {q["question_id"]: q["language"] for q in rows["questions"]}
    judged = not any(NOT_JUDGED in plain(text) for text in summaries["03_surface_quality"])
    _counts_add_up(shape, tables, shown, language_of, judged)
    _shares_and_intervals(tables)
    _sentences(shape, tables, {name: [plain(m) for m in texts] for name, texts in summaries.items()}, shown)


def _sum(frame: pl.DataFrame, column: str) -> int:
    return int(frame[column].cast(pl.Float64).sum() or 0)


def _counts_add_up(
    shape, tables: dict[str, pl.DataFrame], shown: dict[str, str], language_of: dict, judged: bool
) -> None:
    """`judged`: the language identification judges one of the study's languages at least (report 03 says
    when it judges none, and then draws no language-verdict heatmap)."""
    rows = shape.rows
    n_questions, n_answers = len(rows["questions"]), len(rows["answers"])
    counts = tables["01_dataset_overview/question_counts"]
    assert _sum(counts, "n_questions") == n_questions, "question_counts: questions"
    assert _sum(counts, "n_answers") == n_answers, "question_counts: answers"
    rated = {(r["question_id"], r["model"]) for r in rows["ratings"]}
    assert _sum(counts, "n_rated_answers") == len(rated), "question_counts: rated answers"
    assert _sum(tables["01_dataset_overview/question_lengths"], "n_questions") == n_questions, "question_lengths"
    with_category = sum(1 for q in rows["questions"] if q.get("category") not in (None, ""))
    if with_category:
        for name in ("categories_by_language", "category_shares_by_language"):
            assert _sum(tables[f"01_dataset_overview/{name}"], "n_questions") == with_category, name
    assert _sum(tables["02_topic_similarity/category_distribution"], "n_questions") == with_category
    for name in ("heatmap_pct_correct_language", "heatmap_pct_surface_ok"):
        if judged:
            assert _sum(tables[f"03_surface_quality/{name}"], "n_answers") == n_answers, name
        else:
            assert f"03_surface_quality/{name}" not in tables, f"{name}: drawn, though no language is judged"
    assert _sum(tables["03_surface_quality/heatmap_pct_repetition"], "n_answers") == n_answers, "repetition"
    assert _sum(tables["04_answer_scores/heatmap_s_surf"], "n_answers") == n_answers, "heatmap_s_surf"
    values = Counter(r["metric"] for r in rows["metrics"])
    for metric in shape.metrics:
        key = f"04_answer_scores/heatmap_metric_{metric.name}"
        if values[metric.name]:
            assert _sum(tables[key], "n_values") == values[metric.name], key
            by_model = tables["04_answer_scores/metrics_by_model"].filter(pl.col("metric") == metric.name)
            assert _sum(by_model, "n_values") == values[metric.name], f"metrics_by_model: {metric.name}"
        else:
            assert key not in tables, f"{key}: a chart of a metric without values"
    ratings = Counter(r["criterion"] for r in rows["ratings"])
    answers_rated = {
        c: len({(r["question_id"], r["model"]) for r in rows["ratings"] if r["criterion"] == c}) for c in ratings
    }
    for criterion in shape.criteria:
        for by in ("model", "language"):
            key = f"05_human_evaluation/ratings_{criterion.name}_by_{by}"
            if ratings[criterion.name]:
                table = tables[key]
                assert _sum(table, "n") == ratings[criterion.name], key
                groups = [c for c in table.columns if c in ("model", "question_type", "language")]
                per_group = table.group_by(groups).agg(pl.col("n_answers").first())
                assert _sum(per_group, "n_answers") == answers_rated[criterion.name], f"{key}: answers"
            else:
                assert key not in tables, f"{key}: a chart of a criterion without ratings"
    tests = tables.get("06_collection_comparison/collection_tests")
    collections = list(dict.fromkeys(q.get("collection") for q in rows["questions"] if q.get("collection")))
    if tests is not None:
        collection_of = {q["question_id"]: q.get("collection") for q in rows["questions"]}
        for metric in shape.metrics:
            mine = tests.filter(pl.col("metric") == metric.name)
            for side, collection in (("n_a", collections[0]), ("n_b", collections[1])):
                expected = sum(
                    1
                    for r in rows["metrics"]
                    if r["metric"] == metric.name and collection_of[r["question_id"]] == collection
                )
                assert _sum(mine, side) == expected, f"collection_tests: {metric.name} {side}"


def _shares_and_intervals(tables: dict[str, pl.DataFrame]) -> None:
    for key, table in tables.items():
        for column in table.columns:
            if column.startswith("pct") and table.schema[column].is_numeric():
                values = table[column].drop_nulls()
                assert values.is_empty() or (values.min() >= 0 and values.max() <= 100), f"{key}.{column}"
            if column == "share":
                values = table[column].drop_nulls()
                assert values.is_empty() or (values.min() >= 0 and values.max() <= 1), f"{key}.{column}"
        if {"ci_low", "ci_high"} <= set(table.columns):
            estimate = [c for c in ESTIMATES if c in table.columns] or [
                c for c in table.columns if c.startswith("pct_")
            ]
            assert estimate, f"{key}: an interval without its estimate"
            (column,) = estimate[:1]
            bad = table.filter(
                pl.col(column).is_not_null()
                & ((pl.col("ci_low") > pl.col(column)) | (pl.col(column) > pl.col("ci_high")))
            )
            assert bad.is_empty(), f"{key}: intervals without their estimate {bad.head(3).to_dicts()}"
            if column.startswith("pct") or column == "s_surf":
                bounds = table.select("ci_low", "ci_high").drop_nulls()
                assert bounds.is_empty() or (bounds.min().row(0)[0] >= 0 and bounds.max().row(0)[1] <= 100), key


# ---------------------------------------------------------------- the sentences


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _one(pattern: str, texts: list[str]) -> re.Match | None:
    found = [m for m in (re.search(pattern, t) for t in texts) if m]
    return found[0] if found else None


def _sentences(shape, tables: dict[str, pl.DataFrame], texts: dict[str, list[str]], shown: dict[str, str]) -> None:
    rows = shape.rows
    # 01: the questions, the languages with the most and the fewest, the commonest topic
    overview = texts["01_dataset_overview"]
    holds = _one(r"The database holds ([\d,]+) questions in (\d+) languages", overview)
    assert holds, overview
    assert _number(holds.group(1)) == len(rows["questions"])
    assert int(holds.group(2)) == len({q["language"] for q in rows["questions"]})
    per_language = Counter(q["language"] for q in rows["questions"])
    every = _one(r"Every language has (\d+) questions", overview)
    if every:
        assert set(per_language.values()) == {int(every.group(1))}
    else:
        most = _one(r"the most questions \((\d+)( each)?\), .* the fewest \((\d+)( each)?\)", overview)
        assert most, overview
        assert int(most.group(1)) == max(per_language.values()) and int(most.group(3)) == min(per_language.values())
        assert bool(most.group(2)) == (Counter(per_language.values())[max(per_language.values())] > 1)
        assert bool(most.group(4)) == (Counter(per_language.values())[min(per_language.values())] > 1)
    # 02: the coefficients of the pairs
    similarity = tables["02_topic_similarity/category_distribution"]
    pairs_text = _one(
        r"averages ([\d.]+) \(median ([\d.]+), range ([\d.]+) to ([\d.]+)\)", texts["02_topic_similarity"]
    )
    if pairs_text:
        matrix = tables.get("02_topic_similarity/topic_similarity")
        assert matrix is not None, "a summary of pairs without their matrix"
        pairs = matrix.filter(pl.col("group_a") < pl.col("group_b"))
        mean, median, low, high = (float(g) for g in pairs_text.groups())
        assert (mean, median, low, high) == tuple(
            round(float(v), 2) for v in (pairs["bc"].mean(), pairs["bc"].median(), pairs["bc"].min(), pairs["bc"].max())
        )
        _check_pairs(texts["02_topic_similarity"], pairs)
    elif similarity.height:
        assert any(
            "no pair to compare" in t or "nothing to compare" in t or "no question categories" in t
            for t in texts["02_topic_similarity"]
        )
    # 03: the share of clean answers, per model, and the provider errors
    _check_surface(texts["03_surface_quality"], tables.get("03_surface_quality/heatmap_pct_surface_ok"))
    # 04: each metric's best and worst model, from the values
    _check_metrics(shape, texts["04_answer_scores"], shown)
    # 05: the counts of ratings
    if rows["ratings"]:
        counted = _one(
            r"([\d,]+) ratings of ([\d,]+) answers by (\d+) annotators? in (\d+) languages?, on (\d+) criteri",
            texts["05_human_evaluation"],
        )
        assert counted, texts["05_human_evaluation"]
        language_of = {q["question_id"]: q["language"] for q in rows["questions"]}
        expected = (
            len({(r["question_id"], r["model"], r["annotator"]) for r in rows["ratings"]}),
            len({(r["question_id"], r["model"]) for r in rows["ratings"]}),
            len({r["annotator"] for r in rows["ratings"]}),
            len({language_of[r["question_id"]] for r in rows["ratings"]}),
            len({r["criterion"] for r in rows["ratings"]}),
        )
        assert tuple(int(_number(g)) for g in counted.groups()) == expected, counted.group(0)
        raters = Counter((r["question_id"], r["model"], r["criterion"]) for r in rows["ratings"])
        several = _one(r"up to (\d+) on a criterion", texts["05_human_evaluation"])
        assert (int(several.group(1)) if several else 1) == max(raters.values())
    # 06: the tests and the largest difference of each metric
    tests = tables.get("06_collection_comparison/collection_tests")
    if tests is not None:
        _check_collections(texts["06_collection_comparison"], tests)


def _check_pairs(texts: list[str], pairs: pl.DataFrame) -> None:
    rounded = [(a, b, round(float(bc), 2)) for a, b, bc in pairs.select("group_a", "group_b", "bc").iter_rows()]
    high, low = max(r[2] for r in rounded), min(r[2] for r in rounded)
    one = _one(r"The one pair, (.+), has a coefficient of ([\d.]+)\.", texts)
    if one:
        assert len(rounded) == 1 and float(one.group(2)) == high
        return
    if _one(r"Every pair has the same coefficient \(([\d.]+)\)", texts):
        assert high == low
        return
    assert high != low
    for superlative, value in (("most similar", high), ("least similar", low)):
        tied = [r for r in rounded if r[2] == value]
        if len(tied) == 1:
            pattern = rf"{superlative}(?: pair is|,) (.+?) \(([\d.]+)\)"
            found = _one(pattern, texts)
            assert found and float(found.group(2)) == value, (superlative, texts)
            assert found.group(1) == f"{tied[0][0]} and {tied[0][1]}", (found.group(1), tied)
        else:
            found = _one(rf"([\d,]+) pairs tie as the {superlative} \(([\d.]+) each", texts)
            assert found and int(_number(found.group(1))) == len(tied) and float(found.group(2)) == value, texts


def _check_surface(texts: list[str], cells: pl.DataFrame | None) -> None:
    """`cells`: the heatmap of the share without surface issues, None when no language is judged."""
    kept = cells.filter(~pl.col("unreliable")) if cells is not None else None
    share = _one(r"identified languages, ([\d.]+)% of the model answers have no surface issue", texts)
    if kept is None or kept.is_empty() or _sum(kept, "n_answers") == 0:
        assert share is None
        return
    assert share, texts
    assert float(share.group(1)) == round(100 * _sum(kept, "n_surface_ok") / _sum(kept, "n_answers"), 1)
    # the share of each model's answers with a surface issue
    per_model = {
        model: round(100 - 100 * ok / n, 1)
        for model, ok, n in kept.group_by("model")
        .agg(pl.col("n_surface_ok").sum(), pl.col("n_answers").sum())
        .iter_rows()
        if n
    }
    if len(per_model) >= 2:
        fewest, most = min(per_model.values()), max(per_model.values())
        if fewest == most:
            assert _one(rf"Every model has a surface issue in {fewest:.1f}% of its answers", texts), texts
        else:
            found = _one(
                r"(.*) (has|have) the fewest answers with a surface issue \(([\d.]+)%\), (.*) (has|have) the most "
                r"\(([\d.]+)%\)",
                texts,
            )
            assert found and (float(found.group(3)), float(found.group(6))) == (fewest, most), (texts, per_model)
            assert (found.group(2) == "have") == (list(per_model.values()).count(fewest) > 1)
            assert (found.group(5) == "have") == (list(per_model.values()).count(most) > 1)
    errors = _one(r"([\d,]+) of the ([\d,]+) answers are provider errors", texts)
    assert errors and (_number(errors.group(1)), _number(errors.group(2))) == (
        _sum(kept, "n_provider_errors"),
        _sum(kept, "n_answers"),
    )


def _check_metrics(shape, texts: list[str], shown: dict[str, str]) -> None:
    values = defaultdict(lambda: defaultdict(list))
    for r in shape.rows["metrics"]:
        values[r["metric"]][shown[r["model"]]].append(float(r["value"]))
    for metric in shape.metrics:
        mine = values.get(metric.name)
        if not mine:
            continue
        means = {model: _mean(v) for model, v in mine.items()}
        if len(means) == 1:
            assert _one(rf"On {re.escape(metric.name)} \(.*?\) .* is the only model with values", texts), texts
            continue
        sentence = _one(rf"On {re.escape(metric.name)} \((higher|lower) is better\) (.*?)(?= On |$)", texts)
        assert sentence, (metric.name, texts)
        printed = [float(x) for x in re.findall(r"(?:mean |\()(-?[\d.]+(?:e[+-]\d+)?)", sentence.group(2))]
        spec = ".3g" if max(abs(v) for v in means.values()) >= 1e6 else f".{_decimals(metric) + 1}f"
        best = max(means.values()) if metric.higher_is_better else min(means.values())
        worst = min(means.values()) if metric.higher_is_better else max(means.values())
        if format(best, spec) == format(worst, spec):
            assert "every model has the same mean" in sentence.group(2), sentence.group(0)
        else:
            assert [format(v, spec) for v in printed[:2]] == [format(best, spec), format(worst, spec)], (
                sentence.group(0),
                means,
            )


def _decimals(metric) -> int:
    if metric.low is None:
        return 2
    span = metric.high - metric.low
    return 2 if span <= 1 else 1 if span <= 10 else 0


def _mean(values: list[float]) -> float:
    """The mean of values up to the largest float, without overflow: the exactly rounded sum of each value's
    share."""
    return math.fsum(v / len(values) for v in values)


def _check_collections(texts: list[str], tests: pl.DataFrame) -> None:
    run = tests.filter(pl.col("p_value").is_not_null())
    if run.is_empty():
        assert _one(r"nothing could be compared", texts), texts
        return
    counted = _one(r"(\d+) tests \(one per language and metric with values in both collections\), (\d+) of them", texts)
    assert counted and int(counted.group(1)) == run.height, texts
    assert int(counted.group(2)) == run.filter(pl.col("p_holm") < 0.05).height
    for (metric,), rows in run.group_by("metric", maintain_order=True):
        differences = {language: abs(d) for language, d in rows.select("language", "difference").iter_rows()}
        high = max(differences.values())
        found = _one(rf"on {re.escape(str(metric))}, (.*?)(?:; on |\.$)", texts)
        assert found, (metric, texts)
        said = found.group(1)
        top = [language for language, d in differences.items() if format(d, ".3g") == format(high, ".3g")]
        if format(high, ".3g") == "0":
            assert said.startswith("none"), said
        elif len(top) > 1:
            assert said.startswith(f"{format(high, '.3g')} in {len(top)} languages alike"), (said, top)
        else:
            assert said.startswith(f"in {top[0]} ("), (said, top)
