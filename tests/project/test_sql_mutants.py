"""The SQL mutation operator of `make mutants` (scripts/sql_mutants.py): which text it takes for SQL, and the
mutants it makes of it, each one change, written out here by hand."""

import sys

import libcst as cst
import pytest

from analysis.core import paths

sys.path.insert(0, str(paths.ROOT / "scripts"))
import sql_mutants  # noqa: E402


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT 1", True),
        ("WHERE language = ?", True),
        ("q.model = ?", True),
        ("the model is better", False),
        ("select from where", False),  # prose in lower case, and what the package writes in capitals only
        ("Error: expected a number", False),
    ],
)
def test_what_reads_as_sql(text, expected):
    assert sql_mutants.looks_like_sql(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("WHERE a = b", {"WHERE a <> b"}),
        ("WHERE a <= b", {"WHERE a < b"}),
        ("WHERE a >= b", {"WHERE a > b"}),
        ("WHERE a < b", {"WHERE a <= b"}),
        ("WHERE a > b", {"WHERE a >= b"}),
        ("WHERE a <> b", {"WHERE a = b"}),
        ("WHERE a != b", {"WHERE a = b"}),
        ("WHERE a AND b", {"WHERE a OR b"}),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", set()),
        ("SELECT count(DISTINCT x)", {"SELECT count(x)"}),
        ("ORDER BY a ASC, b DESC", {"ORDER BY a DESC, b DESC", "ORDER BY a ASC, b ASC"}),
        ("WHERE x IS NULL", {"WHERE x IS NOT NULL"}),
        ("WHERE x IS NOT NULL", {"WHERE x IS NULL"}),
        ("WHERE x NOT IN (1)", {"WHERE x IN (1)"}),
        ("FROM a LEFT JOIN b USING (k)", {"FROM a JOIN b USING (k)"}),
        ("FROM a JOIN b USING (k)", set()),
        (
            "FROM a JOIN b USING (k, l, m)",
            {"FROM a JOIN b USING (l, m)", "FROM a JOIN b USING (k, m)", "FROM a JOIN b USING (k, l)"},
        ),
        ("SELECT min(x), MAX(y)", {"SELECT max(x), MAX(y)", "SELECT min(x), MIN(y)"}),
        ("SELECT 1 UNION SELECT 2", {"SELECT 1 UNION ALL SELECT 2"}),
        ("SELECT 1 UNION ALL SELECT 2", set()),
        (
            "SELECT a\nWHERE b = 1 AND c > 2 -- pragma: no mutate (one row per b)\nORDER BY a DESC",
            {"SELECT a\nWHERE b = 1 AND c > 2 -- pragma: no mutate (one row per b)\nORDER BY a ASC"},
        ),
        ("SELECT a - b, c / d", {"SELECT a + b, c / d", "SELECT a - b, c * d"}),
        ("SELECT count(*), x->>'k'", set()),
        ("SELECT a::INT", set()),
    ],
)
def test_each_mutant_changes_one_place(text, expected):
    assert {mutated for _, mutated in sql_mutants.mutations(text)} == expected


def test_an_f_string_is_mutated_in_its_text_never_in_its_expressions():
    node = cst.parse_expression('f"SELECT * FROM t WHERE {column} = ? AND {other(a, b=1)}"')
    mutated = {cst.Module([]).code_for_node(n) for n in sql_mutants.operator_sql(node)}
    assert mutated == {
        'f"SELECT * FROM t WHERE {column} <> ? AND {other(a, b=1)}"',
        'f"SELECT * FROM t WHERE {column} = ? OR {other(a, b=1)}"',
    }


def test_a_triple_quoted_string_is_mutated_and_bytes_and_prose_are_not():
    triple = cst.parse_expression('"""\n    SELECT x FROM t WHERE y > 1\n"""')
    assert [cst.Module([]).code_for_node(n) for n in sql_mutants.operator_sql(triple)] == [
        '"""\n    SELECT x FROM t WHERE y >= 1\n"""'
    ]
    assert list(sql_mutants.operator_sql(cst.parse_expression('b"SELECT a = 1"'))) == []
    assert list(sql_mutants.operator_sql(cst.parse_expression('"a = b, said the docs"'))) == []
