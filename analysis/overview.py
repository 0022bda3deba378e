"""Dataset overview (analyses.md section 1): the paper's Table 4 and Figure 5, computed in SQL."""

import duckdb
import polars as pl

# Population standard deviation (ddof = 0) and one decimal, as the paper prints them.
TABLE4_SQL = """
WITH question_stats AS (
    SELECT language, question_type,
           count(*) AS n_questions,
           avg(n_bytes) AS question_bytes_mean,
           stddev_pop(n_bytes) AS question_bytes_std
    FROM questions
    WHERE collection = 'human'
    GROUP BY language, question_type
), answer_stats AS (
    SELECT q.language, q.question_type,
           count(*) AS n_human_answers,
           avg(a.n_bytes) AS answer_bytes_mean,
           stddev_pop(a.n_bytes) AS answer_bytes_std
    FROM answers a JOIN questions q USING (question_id)
    WHERE a.is_human AND NOT a.is_dot_points AND q.collection = 'human'
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
LEFT JOIN answer_stats a USING (language, question_type)
ORDER BY l.resource_level, s.language, s.question_type DESC
"""

CATEGORY_COUNTS_SQL = """
SELECT c.category, l.language, l.resource_level, count(q.question_id) AS n_questions
FROM categories c
CROSS JOIN languages l
LEFT JOIN questions q
       ON q.category = c.category AND q.language = l.language
      AND q.question_type = 'specific' AND q.collection = 'human'
GROUP BY c.category, l.language, l.resource_level
ORDER BY c.category, l.language
"""


def question_length_table(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Table 4: per language and question type, the number of questions and the byte lengths of
    questions and of human reference answers (plain `human` answers, not the dot-point variant)."""
    return con.sql(TABLE4_SQL).pl()


def specific_category_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Figure 5: culturally specific questions by category and language (zero where there are none)."""
    return con.sql(CATEGORY_COUNTS_SQL).pl()


def language_order(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Languages grouped by resource level (high first), alphabetical within each group."""
    return [r[0] for r in con.sql("SELECT language FROM languages ORDER BY resource_level, language").fetchall()]


def summary(lengths: pl.DataFrame, categories: pl.DataFrame) -> str:
    """The overview's findings in words, computed from its two tables."""
    by_type = lengths.group_by("question_type").agg(pl.col("n_questions").sum())
    n = dict(by_type.iter_rows())
    specific = lengths.filter(pl.col("question_type") == "specific")
    largest = specific.sort("n_questions", descending=True).row(0, named=True)
    smallest = specific.sort("n_questions").row(0, named=True)
    top = categories.group_by("category").agg(pl.col("n_questions").sum()).sort("n_questions", descending=True)
    top_category = top.row(0, named=True)
    share = top_category["n_questions"] / max(n.get("specific", 0), 1)
    return (
        f"The database holds **{sum(n.values()):,} questions** in {lengths['language'].n_unique()} languages: "
        f"{n.get('specific', 0):,} culturally specific and {n.get('agnostic', 0):,} culturally agnostic. "
        f"{largest['language']} has the most culturally specific questions ({largest['n_questions']}), "
        f"{smallest['language']} the fewest ({smallest['n_questions']}). "
        f"The most common topic is *{top_category['category']}* ({top_category['n_questions']} questions, "
        f"{share:.0%} of the culturally specific ones)."
    )
