"""Dataset overview (docs/methods.md, section 01 Dataset overview): questions and answers per language,
question type, category and collection, their lengths, the languages and the categories of any study;
for the CaLMQA study, the paper's Tables 4 and 10, Figures 1 and 5 and the counts its text gives of the
dataset (a paper-only section), computed in SQL from the release.

The paper's tables and figures count its human-collected questions (and its topics, the culturally
specific ones): `selection` gives a study's selection of questions, the paper's for the paper's study.
"""

import duckdb
import polars as pl

from .. import schema
from ..core.scalars import number
from ..core.text import inert
from ..io import paper
from . import dimensions, question_selection, ranking

# The counts are of the study's (the release's) questions: imported ones, of any collection, left out.
RELEASE, RELEASE_QUESTION = dimensions.from_release(""), dimensions.from_release("q")


def selection(paper: str | None) -> tuple[str | None, str | None]:
    """(question type, collection) of the questions whose topics the overview counts: the paper's
    human-collected culturally specific questions for the paper's study, every question otherwise."""
    return question_selection.selection("default", "default", paper)


QUESTION_COUNTS_SQL = """
WITH answered AS (
    SELECT a.question_id, count(*) AS n_answers, count(DISTINCT a.model) AS n_models,
           count(*) FILTER (a.answer_id IN (SELECT answer_id FROM ratings)) AS n_rated_answers
    FROM answers a WHERE NOT a.is_human GROUP BY a.question_id
)
SELECT l.resource_level, q.language, q.question_type, q.collection, count(*) AS n_questions,
       coalesce(sum(w.n_answers), 0)::BIGINT AS n_answers, coalesce(max(w.n_models), 0)::BIGINT AS n_models,
       coalesce(sum(w.n_rated_answers), 0)::BIGINT AS n_rated_answers
FROM questions q JOIN languages l USING (language) LEFT JOIN answered w USING (question_id)
GROUP BY ALL
"""


def question_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Questions and model answers per language, question type and collection: the number of questions,
    of the models' answers to them, of the models that answered, and of the answers with human ratings;
    languages by resource level, question types and collections in the study's order."""
    orders = dimensions.Orders.of(con)
    by = ["resource_level", "language", "question_type", "collection"]
    return dimensions.in_order(con.sql(QUESTION_COUNTS_SQL).pl(), by, orders=orders)


# Population standard deviation (ddof = 0) and one decimal, as the paper prints them. `$collection`
# (NULL: every collection) selects the questions; human reference answers are those of the release.
TABLE4_SQL = f"""
WITH question_stats AS (
    SELECT language, question_type,
           count(*) AS n_questions,
           avg(n_bytes) AS question_bytes_mean,
           stddev_pop(n_bytes) AS question_bytes_std
    FROM questions
    WHERE (CAST($collection AS VARCHAR) IS NULL OR collection = $collection) AND {RELEASE}
    GROUP BY language, question_type
), answer_stats AS (
    SELECT q.language, q.question_type,
           count(*) AS n_human_answers,
           avg(a.n_bytes) AS answer_bytes_mean,
           stddev_pop(a.n_bytes) AS answer_bytes_std
    FROM answers a JOIN questions q USING (question_id)
    WHERE a.is_human AND NOT a.is_dot_points AND (CAST($collection AS VARCHAR) IS NULL OR q.collection = $collection)
      AND {RELEASE_QUESTION}
    GROUP BY q.language, q.question_type
)
SELECT l.resource_level, s.language, s.question_type, s.n_questions,
       round(s.question_bytes_mean, 1) AS question_bytes_mean,
       round(s.question_bytes_std, 1) AS question_bytes_std,
       coalesce(a.n_human_answers, 0) AS n_human_answers,
       round(a.answer_bytes_mean, 1) AS answer_bytes_mean,
       round(a.answer_bytes_std, 1) AS answer_bytes_std
FROM question_stats s
JOIN languages l USING (language)
LEFT JOIN answer_stats a ON a.language = s.language AND a.question_type IS NOT DISTINCT FROM s.question_type
"""

CATEGORY_COUNTS_SQL = f"""
SELECT c.category, l.language, l.resource_level, count(q.question_id) AS n_questions
FROM categories c
CROSS JOIN languages l
LEFT JOIN questions q
       ON q.category = c.category AND q.language = l.language
      AND (CAST($question_type AS VARCHAR) IS NULL OR q.question_type = $question_type)
      AND (CAST($collection AS VARCHAR) IS NULL OR q.collection = $collection) AND {RELEASE_QUESTION}
GROUP BY c.category, l.language, l.resource_level
ORDER BY c.category, l.language
"""


def question_length_table(con: duckdb.DuckDBPyConnection, paper: str | None) -> pl.DataFrame:
    """Per language and question type (Table 4's layout), the number of questions and the byte lengths of
    questions and of human reference answers (plain `human` answers, not the dot-point variant; a study's
    answers are models'), languages by resource level. The paper's Table 4 is over its human-collected
    questions."""
    _, collection = selection(paper)
    table = con.sql(TABLE4_SQL, params={"collection": collection}).pl()
    return dimensions.in_order(table, ["resource_level", "language", "question_type"], orders=dimensions.Orders.of(con))


def category_counts(con: duckdb.DuckDBPyConnection, paper: str | None) -> pl.DataFrame:
    """Questions by category and language (zero where there are none; the paper's Figure 5 for its
    culturally specific questions), and each count as a % of the language's questions of the selection
    (one decimal; null for a language without any)."""
    question_type, collection = selection(paper)
    counts = con.sql(CATEGORY_COUNTS_SQL, params={"question_type": question_type, "collection": collection}).pl()
    total = pl.col("n_questions").sum().over("language")
    return counts.with_columns(pct_of_language=pl.when(total > 0).then(100 * pl.col("n_questions") / total).round(1))


def summary(lengths: pl.DataFrame, categories: pl.DataFrame, orders: dimensions.Orders, paper: str | None) -> str:
    """The overview's findings in words, computed from its two tables: the questions per question type,
    the languages with the most and the fewest questions of the selection, and the commonest category."""
    question_type, collection = selection(paper)
    n = dict(lengths.group_by("question_type").agg(pl.col("n_questions").sum()).iter_rows())
    kinds = [kind for kind in orders.question_types if n.get(kind)]
    by_kind = " and ".join(f"{n[kind]:,} {orders.question_type_labels[kind]}" for kind in kinds)
    what = inert(question_selection.describe_selection(question_type, collection, orders))  # Markdown
    chosen = lengths.filter(pl.col("question_type") == question_type) if question_type else lengths
    per_language = chosen.group_by("language").agg(pl.col("n_questions").sum()).sort("language")
    found = ranking.ends(per_language.iter_rows(), ".0f")
    parts = [
        f"The database holds **{sum(n.values()):,} questions** in {lengths['language'].n_unique()} languages"
        + (f": {by_kind}." if by_kind else ".")
    ]
    if found.tied:
        parts.append(f"Every language has {found.high:.0f} {what}.")
    else:
        most, fewest = found.top, found.bottom
        parts.append(
            f"{ranking.listed(most)} {ranking.has(most)} the most {what} ({found.high:.0f}{ranking.each(most)}), "
            f"{ranking.listed(fewest)} the fewest ({found.low:.0f}{ranking.each(fewest)})."
        )
    top = categories.group_by("category").agg(pl.col("n_questions").sum()).sort("category")
    if top.height and number(top["n_questions"].max()) > 0:
        common = ranking.ends(top.iter_rows(), ".0f")
        share = common.high / max(number(top["n_questions"].sum()), 1)
        ones = what.removesuffix("questions") + "ones" if what != "questions" else "questions"
        if len(common.top) == 1:
            parts.append(
                f"The most common topic is *{inert(common.top[0])}* ({common.high:.0f} questions, {share:.0%} of the {ones})."
            )
        else:
            topics = ", ".join(f"*{inert(c)}*" for c in common.top[: ranking.NAMED])
            more = len(common.top) - min(len(common.top), ranking.NAMED)
            parts.append(
                f"{len(common.top)} topics tie as the most common ({topics}{f' and {more:,} more' if more else ''}: "
                f"{common.high:.0f} questions each, {share:.0%} of the {ones} each)."
            )
    return " ".join(parts)


# The counts the paper's text gives of the release's questions (Sections 1 to 3, Appendices A and B, the
# Limitations): quantity, what it counts, and the SQL that counts it (`specific` and `writers` are the
# views of DATASET_COUNTS_SQL).
DATASET_COUNTS = (
    ("languages", "languages of the release", "SELECT count(*) FROM languages"),
    (
        "high_resource_languages",
        "high- and mid-resource languages",
        "SELECT count(*) FROM languages WHERE resource_level = 'high'",
    ),
    ("low_resource_languages", "low-resource languages", "SELECT count(*) FROM languages WHERE resource_level = 'low'"),
    (
        "questions",
        "questions of both types (human-collected)",
        f"SELECT count(*) FROM questions WHERE {RELEASE}",
    ),
    ("specific_questions", "culturally specific questions (human-collected)", "SELECT count(*) FROM specific"),
    (
        "specific_questions_high_resource",
        "culturally specific questions of high- and mid-resource languages",
        "SELECT count(*) FROM specific WHERE resource_level = 'high'",
    ),
    (
        "specific_high_resource_languages",
        "high- and mid-resource languages with culturally specific questions",
        "SELECT count(DISTINCT language) FROM specific WHERE resource_level = 'high'",
    ),
    (
        "specific_questions_low_resource",
        "culturally specific questions of low-resource languages",
        "SELECT count(*) FROM specific WHERE resource_level = 'low'",
    ),
    (
        "low_resource_question_writers",
        "distinct writers (`collector`) of the low-resource questions",
        "SELECT count(DISTINCT collector) FROM specific WHERE resource_level = 'low'",
    ),
    (
        "low_resource_writers_per_language_min",
        "fewest writers of one low-resource language",
        "SELECT min(n) FROM writers",
    ),
    (
        "low_resource_writers_per_language_max",
        "most writers of one low-resource language",
        "SELECT max(n) FROM writers",
    ),
    (
        "agnostic_questions",
        "distinct culturally agnostic questions (English originals)",
        f"SELECT count(DISTINCT name) FROM questions WHERE question_type = 'agnostic' AND {RELEASE}",
    ),
    (
        "agnostic_translation_languages",
        "languages other than English holding translations of the agnostic questions",
        "SELECT count(DISTINCT language) FROM questions "
        f"WHERE question_type = 'agnostic' AND {RELEASE} AND language <> 'English'",
    ),
    (
        "agnostic_question_rows",
        "culturally agnostic questions, one per language",
        f"SELECT count(*) FROM questions WHERE question_type = 'agnostic' AND {RELEASE}",
    ),
    (
        "human_evaluated_questions",
        "questions of the human evaluation",
        "SELECT count(*) FROM questions WHERE human_evaluated",
    ),
    (
        "human_evaluated_languages",
        "languages of the human evaluation",
        "SELECT count(DISTINCT language) FROM questions WHERE human_evaluated",
    ),
)
DATASET_COUNTS_SQL = f"""
WITH specific AS (
    SELECT q.*, l.resource_level FROM questions q JOIN languages l USING (language)
    WHERE q.question_type = 'specific' AND {RELEASE_QUESTION}
), writers AS (
    -- The low-resource questions were written by hired native speakers; `collector` names each one.
    SELECT language, count(DISTINCT collector) AS n FROM specific WHERE resource_level = 'low' GROUP BY language
)
SELECT * FROM (VALUES {{rows}}) AS counts(quantity, description, value)
"""


def dataset_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """What the release holds, in the counts the paper's text uses (`quantity`, `description`, `value`)."""
    rows = ",\n    ".join(
        f"('{quantity}', '{description}', ({query}))" for quantity, description, query in DATASET_COUNTS
    )
    return con.sql(DATASET_COUNTS_SQL.format(rows=rows)).pl()


TOP_CATEGORY_SQL = f"""
WITH counts AS (
    SELECT q.language, l.resource_level, q.category, count(*) AS n_questions
    FROM questions q JOIN languages l USING (language)
    WHERE (CAST($question_type AS VARCHAR) IS NULL OR q.question_type = $question_type)
      AND (CAST($collection AS VARCHAR) IS NULL OR q.collection = $collection) AND {RELEASE_QUESTION} AND q.category IS NOT NULL
    GROUP BY ALL
), ranked AS (
    SELECT *, rank() OVER (PARTITION BY language ORDER BY n_questions DESC) AS place,
           sum(n_questions) OVER (PARTITION BY language) AS language_questions
    FROM counts
)
SELECT resource_level, language, category AS top_category, n_questions, language_questions,
       round(100 * n_questions / language_questions, 1) AS pct_of_language
FROM ranked WHERE place = 1
"""


def top_categories(con: duckdb.DuckDBPyConnection, paper: str | None) -> pl.DataFrame:
    """Each language's most frequent category of the selection's questions (every one of a tie; the paper's
    Appendix B: of the culturally specific questions), languages by resource level."""
    question_type, collection = selection(paper)
    table = con.sql(TOP_CATEGORY_SQL, params={"question_type": question_type, "collection": collection}).pl()
    orders = dimensions.Orders.of(con)
    return dimensions.in_order(table, ["resource_level", "language", "top_category"], orders=orders)


def top_category_counts(top: pl.DataFrame, con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per resource level and category: in how many of the level's languages it is the top category
    (Appendix B: religion and customs tops 10 of the 12 low-resource languages)."""
    levels = con.sql("SELECT resource_level, count(*) AS n_languages_in_level FROM languages GROUP BY ALL").pl()
    counts = (
        top.group_by("resource_level", "top_category")
        .agg(pl.len().alias("n_languages"), pl.col("language").sort().str.join(", ").alias("languages"))
        .join(levels, on="resource_level", nulls_equal=True)
        .sort("n_languages", "top_category", descending=[True, False])
    )
    return dimensions.in_order(counts, ["resource_level"], orders=dimensions.Orders.of(con))


def language_table(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The languages with what the study gives of them (the paper's Table 10: linguistic and usage
    information, as the release's languages.csv gives it), by resource level; a column no language has a
    value in is left out. `speakers` as printed, `speakers_low`/`speakers_high` as numbers (they differ
    only where a range is given, Kirundi's 12-13M)."""
    table = con.sql(f"SELECT {', '.join(schema.LANGUAGE_DESCRIPTION)} FROM languages").pl()
    table = dimensions.in_order(table, ["resource_level", "language"], orders=dimensions.Orders.of(con))
    table = table.select(
        c for c in schema.LANGUAGE_DESCRIPTION if c in ("language", "iso_code") or table[c].is_not_null().any()
    )
    if "speakers" not in table.columns:
        return table
    bounds = [_speaker_bounds(text) for text in table["speakers"].to_list()]
    return table.with_columns(
        speakers_low=pl.Series([b[0] for b in bounds], dtype=pl.Float64),
        speakers_high=pl.Series([b[1] for b in bounds], dtype=pl.Float64),
    )


def speaker_ranges_note(languages: pl.DataFrame) -> str:
    """Where the speaker counts of `language_table` are a range (`speakers_low` below `speakers_high`)."""
    ranges = languages.filter(pl.col("speakers_low") != pl.col("speakers_high"))
    listed = ", ".join(f"{inert(r['language'])} ({inert(r['speakers'])})" for r in ranges.iter_rows(named=True))
    where = (
        f"they differ only where a range is given: {listed}" if listed else "no language has a range: they are equal"
    )
    return f"The CSV also gives the number of speakers as numbers (`speakers_low`, `speakers_high`); {where}."


def _speaker_bounds(text: str | None) -> tuple[float | None, float | None]:
    """`720M` -> (720e6, 720e6); `12-13M` -> (12e6, 13e6): the magnitude of a range's end applies to
    both ends. A text in another form (a languages.csv of your own) gives no numbers, not an error."""
    low, _, high = (text or "").partition("-")
    suffix = high[-1:] if high else ""
    try:
        return paper.printed_number(low + (suffix if low[-1:].isdigit() else "")), paper.printed_number(high or low)
    except ValueError:
        return None, None


# ---------------------------------------------------------------- Figure 1: the topic treemap


def category_treemap_table(
    con: duckdb.DuckDBPyConnection, paper: str | None, width: float = 100.0, height: float = 60.0
) -> pl.DataFrame:
    """The categories of the selection's questions as a squarified treemap (the paper's Figure 1, of its
    culturally specific questions), each box's area proportional to its number of questions; `x0`..`y1`
    are the box in a `width` x `height` frame."""
    question_type, collection = selection(paper)
    counts = con.sql(
        f"""
        SELECT c.category, c.description, c.examples[1] AS example, count(q.question_id) AS n_questions
        FROM categories c
        JOIN questions q ON q.category = c.category
             AND (CAST($question_type AS VARCHAR) IS NULL OR q.question_type = $question_type)
             AND (CAST($collection AS VARCHAR) IS NULL OR q.collection = $collection) AND {RELEASE_QUESTION}
        GROUP BY ALL
        ORDER BY n_questions DESC, c.category
    """,
        params={"question_type": question_type, "collection": collection},
    ).pl()
    total = counts["n_questions"].sum()
    boxes = squarify([n * width * height / total for n in counts["n_questions"].to_list()], 0.0, 0.0, width, height)
    return counts.with_columns(
        pct_of_questions=(100 * pl.col("n_questions") / total).round(1),
        **{name: pl.Series([round(b[i], 3) for b in boxes]) for i, name in enumerate(("x0", "y0", "x1", "y1"))},
    )


def squarify(
    areas: list[float], x: float, y: float, width: float, height: float
) -> list[tuple[float, float, float, float]]:
    """Boxes (x0, y0, x1, y1) tiling the rectangle, one per area in the given (descending) order, laid
    out in rows that keep the boxes as square as they can be (Bruls, Huizing and van Wijk, 2000)."""
    boxes: list[tuple[float, float, float, float]] = []
    remaining = list(areas)
    while remaining:
        short = min(width, height)
        row = [remaining.pop(0)]
        while remaining and _worst_ratio(row + [remaining[0]], short) <= _worst_ratio(row, short):
            row.append(remaining.pop(0))
        thickness = sum(row) / short
        offset = 0.0
        for area in row:
            length = area / thickness
            if width >= height:  # a column along the left edge
                boxes.append((x, y + offset, x + thickness, y + offset + length))
            else:  # a row along the top edge
                boxes.append((x + offset, y, x + offset + length, y + thickness))
            offset += length
        if width >= height:
            x, width = x + thickness, width - thickness
        else:
            y, height = y + thickness, height - thickness
    return boxes


def _worst_ratio(row: list[float], short: float) -> float:
    total = sum(row)
    return max(max(short * short * a / (total * total), total * total / (short * short * a)) for a in row)
