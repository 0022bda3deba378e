"""Topic similarity (docs/methods.md, section 02 Topic similarity; the paper's Figure 6 for its
selection): category distributions per group and the Bhattacharyya coefficient between every two groups.

A group is any value of a grouping column: a column of `questions` (`language`, `source`, ...) or of
`languages` (`resource_level`, `family`, ...), so that datasets with other groups work unchanged.
BC(p, q) = sum over categories of sqrt(p_c * q_c) is 1 for identical distributions and 0 for
disjoint ones; the Hellinger distance sqrt(1 - BC) turns it into a metric for clustering.
"""

from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl
from numpy.typing import ArrayLike

from ..core.scalars import number
from ..core.text import inert
from . import dimensions, ranking
from .question_selection import FIGURE6_SELECTION, describe_selection

ORDERINGS = ("resource", "cluster")


@dataclass(frozen=True)
class Distributions:
    """Question counts per group (rows) and category (columns); groups and categories sorted by name."""

    group_by: str
    groups: tuple[str, ...]
    categories: tuple[str, ...]
    counts: np.ndarray

    @classmethod
    def from_counts(cls, counts: pl.DataFrame, group_by: str) -> "Distributions":
        """From a long table with columns `group_by`, `category`, `n_questions`; a category absent from
        a group's rows counts as zero questions. Groups and categories are indexed by position, never made
        column names: a category may be called anything, `language` included."""
        groups = tuple(sorted(set(counts[group_by].cast(pl.String).to_list())))
        categories = tuple(sorted(set(counts["category"].to_list())))
        matrix = np.zeros((len(groups), len(categories)))
        row = {group: i for i, group in enumerate(groups)}
        column = {category: j for j, category in enumerate(categories)}
        np.add.at(
            matrix,
            (
                [row[g] for g in counts[group_by].cast(pl.String).to_list()],
                [column[c] for c in counts["category"].to_list()],
            ),
            counts["n_questions"].to_numpy().astype(float),
        )
        return cls(group_by, groups, categories, matrix)

    @property
    def group_sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def proportions(self) -> np.ndarray:
        sizes = self.group_sizes[:, None]
        return np.divide(self.counts, sizes, out=np.zeros_like(self.counts), where=sizes > 0)

    def select(self, groups: list[str]) -> "Distributions":
        index = [self.groups.index(g) for g in groups]
        return Distributions(self.group_by, tuple(groups), self.categories, self.counts[index])

    def table(self) -> pl.DataFrame:
        """Long form: one row per group and category, with zero counts included."""
        n_groups, n_categories = self.counts.shape
        return pl.DataFrame(
            {
                self.group_by: [g for g in self.groups for _ in self.categories],
                "category": list(self.categories) * n_groups,
                "n_questions": self.counts.astype(np.int64).ravel(),
                "group_questions": np.repeat(self.group_sizes.astype(np.int64), n_categories),
                "share": self.proportions.ravel(),
            },
            schema={
                self.group_by: pl.String,
                "category": pl.String,
                "n_questions": pl.Int64,
                "group_questions": pl.Int64,
                "share": pl.Float64,
            },
        )


def _grouping_columns(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Every column a distribution can be grouped by, with the alias of the table it is read from:
    `q` for questions, `l` for languages (joined on `language` when the database has that table)."""
    rows = con.sql(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_name IN ('questions', 'languages') ORDER BY table_name DESC"  # pragma: no mutate (`language` reads alike from either table: a build checks every question's language is in languages, an import refuses an unknown one)
    ).fetchall()
    # questions first: `language`, a column of both tables, is read from questions.
    columns: dict[str, str] = {}
    for table, column in rows:
        columns.setdefault(column, "q" if table == "questions" else "l")
    columns.pop("category", None)
    return columns


def no_matrix_note(
    group_by: str, min_questions: int, question_type: str | None, collection: str | None, orders: dimensions.Orders
) -> str:
    """Why there is no similarity matrix: no group has `min_questions` of the selected questions."""
    return (
        f"No {group_by} group has {min_questions} or more {inert(describe_selection(question_type, collection, orders))}: "
        "there is no matrix to draw."
    )


def category_counts(
    con: duckdb.DuckDBPyConnection,
    group_by: str = "language",
    question_type: str | None = None,
    collection: str | None = None,
) -> Distributions:
    """Questions per group and category. `question_type` and `collection` filter the questions (None:
    no filter); questions without a category or without a group value are left out, and so are imported
    questions when the selection is the paper's Figure 6."""
    columns = _grouping_columns(con)
    if group_by not in columns:
        raise ValueError(
            f"cannot group by {group_by!r}: not a column of questions or languages "
            f"(choose from {', '.join(sorted(columns))})"
        )
    alias = columns[group_by]
    # (an inner join would be the same: every question's language is in languages, by the build's reference check
    # and the import's validation)
    join = "LEFT JOIN languages l USING (language)" if "l" in columns.values() else ""  # pragma: no mutate (see above)
    filters, params = ["q.category IS NOT NULL", f'{alias}."{group_by}" IS NOT NULL'], []
    for column, value in (("question_type", question_type), ("collection", collection)):
        if value is not None:
            filters.append(f"q.{column} = ?")
            params.append(value)
    if (group_by, question_type, collection) == FIGURE6_SELECTION:
        filters.append(dimensions.from_release())  # the paper's figure: the release's questions only
    sql = f"""
        SELECT CAST({alias}."{group_by}" AS VARCHAR) AS "{group_by}", q.category, count(*) AS n_questions
        FROM questions q {join}
        WHERE {" AND ".join(filters)}
        GROUP BY ALL
    """
    return Distributions.from_counts(con.sql(sql, params=params).pl(), group_by)


def split_by_size(distributions: Distributions, min_questions: int) -> tuple[Distributions, pl.DataFrame]:
    """The groups with at least `min_questions` questions, and a table of the groups left out."""
    sizes = distributions.group_sizes
    kept = [g for g, n in zip(distributions.groups, sizes) if n >= min_questions]
    dropped = pl.DataFrame(
        {
            distributions.group_by: [g for g, n in zip(distributions.groups, sizes) if n < min_questions],
            "n_questions": [int(n) for n in sizes if n < min_questions],
        },
        schema={distributions.group_by: pl.String, "n_questions": pl.Int64},
    )
    return distributions.select(kept), dropped


def bhattacharyya_matrix(weights: np.ndarray) -> np.ndarray:
    """BC between every two rows of `weights` (counts or proportions; each row is normalised to sum to 1).

    Rounding can push sums of square roots slightly past 1, so the result is clipped to [0, 1].
    """
    weights = np.asarray(weights, dtype=float)
    if (weights < 0).any():
        raise ValueError("category weights must be non-negative")
    totals = weights.sum(axis=1, keepdims=True)
    if (totals <= 0).any():
        raise ValueError("every group needs at least one question")
    roots = np.sqrt(weights / totals)
    return np.clip(roots @ roots.T, 0.0, 1.0)


def hellinger(bc: ArrayLike) -> np.ndarray:
    """Hellinger distance sqrt(1 - BC)."""
    return np.sqrt(np.clip(1.0 - np.asarray(bc, dtype=float), 0.0, 1.0))


def similarity_table(distributions: Distributions) -> pl.DataFrame:
    """Long form of the symmetric matrix: every ordered pair (group_a, group_b), diagonal included."""
    groups = list(distributions.groups)
    bc = bhattacharyya_matrix(distributions.counts) if groups else np.zeros((0, 0))
    return pl.DataFrame(
        {
            "group_a": [a for a in groups for _ in groups],
            "group_b": groups * len(groups),
            "bc": bc.ravel(),
            "hellinger": hellinger(bc).ravel(),
        },
        schema={"group_a": pl.String, "group_b": pl.String, "bc": pl.Float64, "hellinger": pl.Float64},
    )


def resource_order(con: duckdb.DuckDBPyConnection, groups: list[str]) -> list[str]:
    """Languages grouped by resource level (in the study's order), alphabetical within each level."""
    order = dimensions.language_order(con)
    unknown = sorted(set(groups) - set(order))
    if unknown:
        raise ValueError(
            f"ordering 'resource' needs languages as groups; not in the languages table: {unknown}. "
            "Use ordering = 'cluster'."
        )
    return [language for language in order if language in set(groups)]


def cluster_order(distributions: Distributions) -> list[str]:
    """Groups in the leaf order of an average-linkage clustering on the Hellinger distance.

    Optimal leaf ordering puts the most similar neighbours side by side; with groups sorted by name
    on input, the order is the same on every run.
    """
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    groups = list(distributions.groups)
    if len(groups) < 3:
        return groups
    distance = hellinger(bhattacharyya_matrix(distributions.counts))
    distance = (distance + distance.T) / 2
    np.fill_diagonal(distance, 0.0)
    tree = linkage(squareform(distance, checks=False), method="average", optimal_ordering=True)
    return [groups[i] for i in leaves_list(tree)]


def group_order(con: duckdb.DuckDBPyConnection, distributions: Distributions, ordering: str) -> list[str]:
    if ordering == "resource":
        return resource_order(con, list(distributions.groups))
    if ordering == "cluster":
        return cluster_order(distributions)
    raise ValueError(f"unknown ordering {ordering!r}: choose from {ORDERINGS}")


def resource_dividers(con: duckdb.DuckDBPyConnection, order: list[str], ordering: str) -> list[str]:
    """The groups before which the heatmap draws a line between the resource levels: the first language
    of each level after the first among `order`, when the groups are languages in resource order; else none."""
    if ordering != "resource":
        return []
    return dimensions.Orders.of(con).only(order).dividers(by_label=False)


def drawn_groups(distributions: Distributions, order: list[str]) -> list[str]:
    """The groups the matrix draws, in `order`: at most `dimensions.MAX_DRAWN_LANGUAGES`, those with the most
    questions (ties in `order`), by the rule every chart of languages follows (`dimensions.most_first`)."""
    sizes = {group: (n,) for group, n in zip(distributions.groups, distributions.group_sizes.astype(int).tolist())}
    return dimensions.most_first(sizes, order, dimensions.MAX_DRAWN_LANGUAGES)


def order_table(distributions: Distributions, order: list[str]) -> pl.DataFrame:
    """The heatmap's order of groups, with each group's number of questions."""
    sizes = dict(zip(distributions.groups, distributions.group_sizes.astype(int).tolist()))
    return pl.DataFrame(
        {"position": list(range(1, len(order) + 1)), "group": order, "n_questions": [sizes[g] for g in order]},
        schema={"position": pl.Int64, "group": pl.String, "n_questions": pl.Int64},
    )


def extreme_pairs(similarity: pl.DataFrame, n: int = 5) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `n` most and the `n` least similar pairs of distinct groups (each pair once; ties by name)."""
    pairs = similarity.filter(pl.col("group_a") < pl.col("group_b"))
    most = pairs.sort(["bc", "group_a", "group_b"], descending=[True, False, False]).head(n)
    least = pairs.sort(["bc", "group_a", "group_b"]).head(n)
    rank = pl.int_range(1, pl.len() + 1).alias("rank")
    return most.select(rank, pl.all()), least.select(rank, pl.all())


def pooled_resource_similarity(
    con: duckdb.DuckDBPyConnection, question_type: str | None, collection: str | None
) -> pl.DataFrame | None:
    """BC between the category distributions of the questions of the study's two resource levels, each
    level's languages pooled (CaLMQA: high- against low-resource): the questions of each level
    (`<level>_questions`), BC and Hellinger; None when the study has not exactly two resource levels."""
    levels = dimensions.Orders.of(con).resource_levels
    if len(levels) != 2:
        return None
    pooled = category_counts(con, "resource_level", question_type, collection)
    sizes = dict(zip(pooled.groups, pooled.group_sizes.astype(int).tolist()))
    bc = None
    if set(levels) <= set(pooled.groups):
        bc = float(bhattacharyya_matrix(pooled.select(list(levels)).counts)[0, 1])
    return pl.DataFrame(
        {
            f"{levels[0]}_questions": [sizes.get(levels[0], 0)],
            f"{levels[1]}_questions": [sizes.get(levels[1], 0)],
            "bc": [bc],
            "hellinger": [None if bc is None else float(hellinger(bc))],
        },
        schema={
            f"{levels[0]}_questions": pl.Int64,
            f"{levels[1]}_questions": pl.Int64,
            "bc": pl.Float64,
            "hellinger": pl.Float64,
        },
    )


def pooled_note(con: duckdb.DuckDBPyConnection) -> str:
    """What `pooled_resource_similarity` compares, with the number of languages of each level."""
    levels = dict(con.sql("SELECT resource_level, count(*) FROM languages GROUP BY ALL").fetchall())
    return (
        f"All questions of the selection from the {levels.get('high', 0)} high-resource languages against all "
        f"from the {levels.get('low', 0)} low-resource ones, whatever the grouping and the smallest group "
        "compared: one distribution per resource level."
    )


def reproduces_figure6(group_by: str, question_type: str | None, collection: str | None, paper: str | None) -> bool:
    return bool(paper) and (group_by, question_type, collection) == FIGURE6_SELECTION


def similarity_figure_name(group_by: str, question_type: str | None, collection: str | None, paper: str | None) -> str:
    """The matrix's file name: `figure6_...` only for the paper's selection of the paper's study."""
    if reproduces_figure6(group_by, question_type, collection, paper):
        return "figure6_topic_similarity"
    return "topic_similarity"


def similarity_item(group_by: str, question_type: str | None, collection: str | None, paper: str | None) -> str | None:
    """The matrix's paper item for its title: `paper Figure 6`, `beyond the paper` for another selection
    of the paper's study, and none for a study of your own."""
    if not paper:
        return None
    return "paper Figure 6" if reproduces_figure6(group_by, question_type, collection, paper) else "beyond the paper"


# The groups left out of the matrix that a summary names (the table lists them all).
LISTED_LEFT_OUT = 20


def _extreme_pairs_sentence(pairs: pl.DataFrame) -> str:
    """The most and the least similar pairs of distinct groups, as the summary prints their coefficients
    (two decimals): ties said as ties (`ranking.ends`)."""
    named = [(f"{a} and {b}", bc) for a, b, bc in pairs.select("group_a", "group_b", "bc").iter_rows()]
    found = ranking.ends(named, ".2f")
    if len(named) == 1:
        return f"The one pair, {inert(named[0][0])}, has a coefficient of {found.high:.2f}."
    if found.tied:
        return f"Every pair has the same coefficient ({found.high:.2f}): no pair is more or less similar than another."

    def which(names: list[str], value: float, superlative: str) -> str:
        if len(names) == 1:
            return f"the {superlative}{' pair is' if superlative == 'most similar' else ','} {inert(names[0])} ({value:.2f})"
        shown = "; ".join(inert(name) for name in names[: ranking.NAMED])
        more = len(names) - min(len(names), ranking.NAMED)
        return f"{len(names):,} pairs tie as the {superlative} ({value:.2f} each: {shown}" + (
            f" and {more:,} more)" if more else ")"
        )

    most, least = which(found.top, found.high, "most similar"), which(found.bottom, found.low, "least similar")
    return f"{most[0].upper()}{most[1:]}; {least}."


def summary(
    distributions: Distributions,
    dropped: pl.DataFrame,
    similarity: pl.DataFrame,
    pooled: pl.DataFrame | None,
    question_type: str | None,
    collection: str | None,
    min_questions: int,
    orders: dimensions.Orders,
    paper: str | None,
) -> str:
    """The notebook's findings in words, computed from its tables."""
    what = inert(describe_selection(question_type, collection, orders))  # Markdown
    group_by = distributions.group_by
    paragraphs = []
    if paper and question_type == "agnostic":
        paragraphs.append(
            "**Culturally agnostic questions all take the category of their English original**, so every "
            "language has the same distribution and every coefficient is 1 by construction: the comparison "
            "is only informative for culturally specific questions."
        )
    n_groups = len(distributions.groups)
    if n_groups == 0 and dropped.is_empty():
        paragraphs.append(f"The database holds no {what}: there is nothing to compare.")
    elif n_groups < 2:
        paragraphs.append(
            f"{n_groups} {group_by} group(s) have {min_questions} or more {what}: there is no pair to compare."
        )
    else:
        pairs = similarity.filter(pl.col("group_a") < pl.col("group_b")).sort("group_a", "group_b")
        paragraphs.append(
            f"Across {n_groups} {group_by} groups ({int(distributions.group_sizes.sum()):,} {what}, "
            f"{len(distributions.categories)} categories), the Bhattacharyya coefficient between two groups' topic "
            f"distributions averages **{number(pairs['bc'].mean()):.2f}** (median {number(pairs['bc'].median()):.2f}, "
            f"range {number(pairs['bc'].min()):.2f} to {number(pairs['bc'].max()):.2f}). "
            + _extreme_pairs_sentence(pairs)
        )
    if not dropped.is_empty():
        shown = [f"{inert(g)} ({n})" for g, n in dropped.head(LISTED_LEFT_OUT).iter_rows()]
        more = dropped.height - len(shown)
        paragraphs.append(
            f"Left out for having fewer than {min_questions} questions: {', '.join(shown)}"
            + (f" and {more:,} more (`left_out_groups.csv` lists them all)." if more else ".")
        )
    if pooled is not None:
        first, second = (orders.level_title(level) for level in orders.resource_levels)
        n_first, n_second, bc, _ = pooled.row(0)
        if bc is not None:
            paragraphs.append(
                f"Pooled, the {n_first:,} questions of {first} and the {n_second:,} of {second} have a "
                f"coefficient of **{bc:.3f}**."
            )
        elif n_groups or not dropped.is_empty():
            paragraphs.append(
                f"The pooled coefficient of {first} against {second} needs questions of both resource levels; "
                "the selection lacks one of them."
            )
    return "\n\n".join(paragraphs)
