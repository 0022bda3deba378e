"""Checks of the reports' sentences against the CSVs their numbers come from (the tests' own oracle).

Each check finds one kind of sentence in a report's summary (the text `provenance.read` gives, which the
index shows too), reads the names and numbers it states, and recomputes them from the figures CSV the
report wrote: the number at the precision printed, and its direction (the model named as having the most
of something has the largest value in the CSV; ties may be named together). A sentence of a known kind
that a check cannot read is a problem too: a rewording must come with its check.

Nothing here calls the package's code that wrote the sentence or the CSV.
"""

import functools
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import polars as pl

# A name as a sentence gives it: one model, language or group (Markdown's escapes undone by `_plain`); a
# name may end with a full stop (a generated model `ws8f3c.`), which is then not the end of a sentence.
NAME = r"(?:(?!\s\(|, |\. | has | have ).)+?\.?"
# Where a sentence starts: a name that opens one is not the end of the sentence before it.
START = r"(?:^|(?<=\. ))"


def _plain(markdown: str) -> str:
    """A summary's Markdown as the words a reader reads: escapes and emphasis marks gone."""
    # (CommonMark: a backslash escapes any ASCII punctuation, and `core.text.inert` escapes them all)
    text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    return re.sub(r"\*\*|(?<![\w*])\*(?!\s)|(?<!\s)\*(?![\w*])", "", text)


def _names(listed: str, known: Iterable[str] = ()) -> list[str]:
    """`A`, `A and B`, `A, B and C`: the names a sentence lists; with the `known` names (the CSV's), the
    way of reading `listed` as known names joined by `, ` and ` and ` (a generated model may be called `and`:
    `a and and and b` is `a`, `and` and `b`)."""
    simple = [n.strip() for n in re.split(r", | and ", listed) if n.strip()]
    known = {" ".join(name.split()) for name in known}
    if not known or all(name in known for name in simple):
        return simple

    @functools.cache
    def read_from(start: int) -> tuple[str, ...] | None:
        for name in sorted(known, key=len, reverse=True):
            if not listed.startswith(name, start):
                continue
            end = start + len(name)
            if end == len(listed):
                return (name,)
            for joint in (", ", " and "):
                if listed.startswith(joint, end) and (rest := read_from(end + len(joint))) is not None:
                    return (name, *rest)
        return None

    found = read_from(0)
    return list(found) if found is not None else simple


def _close(printed: str, value: float, slack: float = 0.0) -> bool:
    """`printed` is `value` at the printed precision (half a unit of its last digit, plus `slack`)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(float(printed.replace(",", "")) - value) <= 0.5 * 10**-decimals + slack + 1e-9


def _extreme(
    values: dict[str, float], named: list[str], printed: str, highest: bool, what: str, slack: float = 0.0
) -> list[str]:
    """Problems with a sentence naming `named` as having the highest (or lowest) of `values` at `printed`."""
    problems = []
    if not values:
        return [f"{what}: the CSV has no value"]
    # A name as a reader reads it: its spaces collapsed, as Markdown shows them (`a  b` is `a b`).
    values = {" ".join(name.split()): value for name, value in values.items()}
    best = max(values.values()) if highest else min(values.values())
    for name in named:
        if name not in values:
            problems.append(f"{what}: {name!r} is not in the CSV ({sorted(values)[:5]}...)")
        elif not _close(printed, values[name], slack):
            problems.append(f"{what}: {name} is {printed} in the sentence, {values[name]:.4f} in the CSV")
        elif not _close(f"{best:.6f}", values[name], 1e-6 + slack):
            problems.append(
                f"{what}: {name} ({values[name]:.4f}) is not the {'highest' if highest else 'lowest'} ({best:.4f})"
            )
    return problems


def _pooled_share(frame: pl.DataFrame, count: str, total: str, by: str = "model") -> dict[str, float]:
    sums = frame.group_by(by).agg(pl.col(count).sum(), pl.col(total).sum()).filter(pl.col(total) > 0)
    return {r[by]: 100 * r[count] / r[total] for r in sums.iter_rows(named=True)}


def _reliable(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(~pl.col("unreliable")) if "unreliable" in frame.columns else frame


def _surface_issues(text: str, figures: Path) -> list[str] | None:
    """03: which model has the fewest and which the most answers with a surface issue."""
    if not re.search(r"fewest (answers with a )?surface issue", text):
        return None
    cells = _reliable(pl.read_csv(figures / "03_surface_quality" / "heatmap_pct_surface_ok.csv"))
    issues = {m: 100 - v for m, v in _pooled_share(cells, "n_surface_ok", "n_answers").items()}
    if match := re.search(r"Every model has a surface issue in ([\d.]+)% of its answers", text):
        return [] if all(_close(match[1], v) for v in issues.values()) else [f"surface issues do not tie: {issues}"]
    match = re.search(
        rf"{START}({NAME}) ha(?:s|ve) the fewest answers with a surface issue \(([\d.]+)%\), ({NAME}) ha(?:s|ve) the most "
        r"\(([\d.]+)%\)",
        text,
    )
    if match is None:
        # The wording before issue 36 ("X has the fewest surface issues (a% clean), Y the most (b%)") gave the
        # worst model's share without an issue as its share with one: read as written, it is checked too.
        old = re.search(
            rf"{START}({NAME}) has the fewest surface issues \(([\d.]+)% clean\), ({NAME}) the most \(([\d.]+)%\)", text
        )
        if old is None:
            return ["a sentence on surface issues that no check reads"]
        fewest, clean, most, printed = old.groups()
        return _extreme(issues, [fewest], f"{100 - float(clean):.1f}", False, "fewest surface issues") + _extreme(
            issues, [most], printed, True, "most surface issues"
        )
    fewest, a, most, b = match.groups()
    return _extreme(issues, _names(fewest, issues), a, False, "fewest surface issues") + _extreme(
        issues, _names(most, issues), b, True, "most surface issues"
    )


def _s_surf(text: str, figures: Path) -> list[str] | None:
    """04: the model with the highest and the lowest S_surf, pooled over question types: from the per-model
    table the sentence is computed from (`surface_by_model.csv`), or else from the heatmap's cells (a
    small study's cells may be blank, too few answers each, where its models' pooled values are not)."""
    folder = figures / "04_answer_scores"
    path = folder / "heatmap_s_surf.csv"
    # (a column whose every value is empty is read as numbers all the same)
    numbers = {"s_surf": pl.Float64, "mean": pl.Float64, "n_valid": pl.Float64}
    tables = [folder / f"{name}.csv" for name in ("surface_by_model", "scores_by_model", "table2_scores_by_model")]
    by_model = next(
        (t for t in tables if t.is_file() and {"score", "mean"} <= set(pl.read_csv(t, n_rows=0).columns)), None
    )
    if by_model is not None:
        cells = pl.read_csv(by_model, schema_overrides={**numbers, "score": pl.String})
        cells = cells.filter((pl.col("score") == "s_surf") & pl.col("mean").is_not_null()).rename({"mean": "s_surf"})
    elif path.is_file():
        cells = _reliable(pl.read_csv(path, schema_overrides=numbers)).filter(pl.col("s_surf").is_not_null())
    else:
        return None
    weighted = cells.group_by("model").agg((pl.col("s_surf") * pl.col("n_valid")).sum() / pl.col("n_valid").sum())
    scores = dict(weighted.iter_rows())
    # The CSV's cells are rounded to one decimal: a pooled value is known to within that.
    slack = 0.05
    if match := re.search(
        rf"{START}({NAME}) scores highest \(([\d.]+) over [\d,]+ answers\), ({NAME}) lowest \(([\d.]+) over", text
    ):
        high, a, low, b = match.groups()
    elif match := re.search(
        rf"no surface issue \(S_surf[^)]*\)\. ({NAME}) has the most \(([\d.]+)\), ({NAME}) the fewest \(([\d.]+)\)",
        text,
    ):
        high, a, low, b = match.groups()
    else:
        return ["a sentence on S_surf that no check reads"] if "S_surf" in text and "highest" in text else None
    return _extreme(scores, _names(high, scores), a, True, "highest S_surf", slack) + _extreme(
        scores, _names(low, scores), b, False, "lowest S_surf", slack
    )


def _study_metrics(text: str, figures: Path) -> list[str] | None:
    """04: per study metric, the best and the worst model by mean, as `higher_is_better` says."""
    path = figures / "04_answer_scores" / "metrics_by_model.csv"
    found = re.findall(
        rf"On \*?(\w+)\*? \((higher|lower) is better\),? ({NAME}) scores best \(mean ([\d.]+) over [\d,]+ answers\), "
        rf"({NAME}) worst \(([\d.]+)\)",
        text,
    )
    if not found:
        return None
    # the models' means over all their values (`metrics_pooled_by_model`): the table's cells leave out those
    # with too few values, which the sentence's means count
    pooled = path.with_name("metrics_pooled_by_model.csv")
    table = pl.read_csv(pooled if pooled.is_file() else path, schema_overrides={"mean": pl.Float64})
    problems = []
    for metric, better, best, a, worst, b in found:
        rows = table.filter(pl.col("metric") == metric)
        if pooled.is_file():
            means = dict(rows.select("model", "mean").iter_rows())
        else:
            means = dict(
                rows.group_by("model")
                .agg((pl.col("mean") * pl.col("n_values")).sum() / pl.col("n_values").sum())
                .iter_rows()
            )
        higher = better == "higher"
        problems += _extreme(means, _names(best, means), a, higher, f"best on {metric}", 0.0005)
        problems += _extreme(means, _names(worst, means), b, not higher, f"worst on {metric}", 0.0005)
    return problems


def _topic_pairs(text: str, figures: Path) -> list[str] | None:
    """02: the most and the least similar pair of groups, or how many pairs tie as either (at the two decimals
    printed)."""
    most = re.search(rf"most similar pair is ({NAME}) and ({NAME}) \(([\d.]+)\)", text)
    most_tied = re.search(r"([\d,]+) pairs tie as the most similar \(([\d.]+) each", text)
    least = re.search(rf"the least similar, ({NAME}) and ({NAME}) \(([\d.]+)\)", text)
    least_tied = re.search(r"([\d,]+) pairs tie as the least similar \(([\d.]+) each", text)
    if not (most or most_tied or least or least_tied):
        return ["a sentence on similar pairs that no check reads"] if "similar pair" in text else None
    if not ((most or most_tied) and (least or least_tied)):
        return ["a sentence on similar pairs that no check reads"]
    folder = figures / "02_topic_similarity"
    path = next(p for p in (folder / "figure6_topic_similarity.csv", folder / "topic_similarity.csv") if p.is_file())
    pairs = pl.read_csv(path).filter(pl.col("group_a") < pl.col("group_b"))
    bc = {f"{r['group_a']}|{r['group_b']}": r["bc"] for r in pairs.iter_rows(named=True)}
    problems = []
    for named, tied, highest, what in (
        (most, most_tied, True, "most similar pair"),
        (least, least_tied, False, "least similar pair"),
    ):
        if named:
            a, b, printed = named.groups()
            problems += _extreme(bc, ["|".join(sorted((a, b)))], printed, highest, what)
            continue
        count, printed = tied.groups()
        extreme = max(bc.values()) if highest else min(bc.values())
        at = sum(1 for value in bc.values() if f"{value:.2f}" == printed)
        if not _close(printed, extreme) or at != int(count.replace(",", "")):
            problems.append(
                f"{what}: {count} pairs tie at {printed} in the sentence; the CSV has {at} at the extreme {extreme:.4f}"
            )
    return problems


def _english(text: str, figures: Path) -> list[str] | None:
    """09: which model answers in English most and least often."""
    match = re.search(
        rf"{START}({NAME}) answers in English most often \(([\d.]+)% of its answers\), ({NAME}) least often \(([\d.]+)%\)",
        text,
    )
    if match is None:
        return None
    cells = _reliable(pl.read_csv(figures / "09_answer_verdicts" / "figure16_english_answers.csv"))
    shares = _pooled_share(cells, "n_english", "n_with_language")
    most, a, least, b = match.groups()
    return _extreme(shares, _names(most, shares), a, True, "most English") + _extreme(
        shares, _names(least, shares), b, False, "least English"
    )


def _mean_rating(text: str, figures: Path) -> list[str] | None:
    """05 (CaLMQA): the models with the highest and the lowest mean rating."""
    match = re.search(
        rf"{START}({NAME}) has the highest mean rating \(([\d.]+) of \d+\), ({NAME}) the lowest \(([\d.]+)\)", text
    )
    if match is None:
        return None
    ratings = pl.read_csv(figures / "05_human_evaluation" / "figure4_rating_distribution_by_question_type.csv")
    means = dict(ratings.group_by("model").agg((pl.col("rating") * pl.col("n")).sum() / pl.col("n").sum()).iter_rows())
    high, a, low, b = match.groups()
    return _extreme(means, _names(high, means), a, True, "highest mean rating") + _extreme(
        means, _names(low, means), b, False, "lowest mean rating"
    )


CHECKS: tuple[Callable[[str, Path], list[str] | None], ...] = (
    _surface_issues,
    _s_surf,
    _study_metrics,
    _topic_pairs,
    _english,
    _mean_rating,
)


def problems(summaries: dict[str, str], figures: Path) -> tuple[list[str], int]:
    """Every problem with the sentences of `summaries` (report name -> its summary's Markdown) against the
    CSVs under `figures`, and how many checks read a sentence."""
    found, checked = [], 0
    for report, summary in summaries.items():
        text = " ".join(_plain(summary or "").split())
        for check in CHECKS:
            result = check(text, figures)
            if result is None:
                continue
            checked += 1
            found += [f"{report}: {p}" for p in result]
    return found, checked
