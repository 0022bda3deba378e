"""A mutation operator for the SQL text the package runs, for `make mutants` (scripts/mutants.py): mutmut has
none (it leaves triple-quoted strings alone and mutates any other string only by wrapping it in `XX`).

A string literal or f-string inside a function whose text reads as SQL (`looks_like_sql`: a clause keyword,
or a `= ?` parameter) gets one mutant per place where one of `OPERATORS` applies: a comparison turned
(`=` and `<>`, `<` and `<=`, `>` and `>=`), `AND` and `OR` swapped, `DISTINCT` dropped, a sort direction
reversed, `IS NULL` and `IS NOT NULL` swapped, `NOT IN`/`NOT EXISTS`/`NOT LIKE` made positive, an outer join
made inner, a join on several keys (`USING (a, b)`) made without one of them, `min` and `max` swapped, `UNION`
made `UNION ALL`, and `+`/`-`, `*`/`/` between spaces. An f-string's text parts are mutated, never its
`{expressions}`. A line of SQL that ends in `-- pragma: no mutate` and the reason is left alone (a mutant
equivalent to it: `count(DISTINCT region)` over one row per region).

`install()` adds the operator to mutmut's and records, per source file, the names mutmut gives the SQL
mutants (`sql_mutant_names`), so that the page can count them apart and a module can be mutated only in its
SQL (`[tool.calmqa.sql-mutants]` in pyproject.toml).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

# A clause keyword in capitals (as the package writes SQL), or a parameter compared: the text is SQL.
_SQL = re.compile(
    r"\b(SELECT|FROM|WHERE|JOIN|GROUP BY|ORDER BY|HAVING|QUALIFY|INSERT INTO|DELETE FROM|UPDATE|UNION|CASE WHEN|"
    r"IS NULL|IS NOT NULL|COALESCE)\b|=\s*\?"
)


def _swap_case(to: str) -> Callable[[re.Match], str]:
    """A replacement that keeps the case the SQL was written in (`min(` -> `max(`, `MIN(` -> `MAX(`)."""

    def replace(match: re.Match) -> str:
        return to.upper() if match.group(0).isupper() else to

    return replace


# A join's keys, several of them.
_USING = re.compile(r"USING \(([^()]+,[^()]+)\)")
_LINE = re.compile(r"[^\n]*")
_NO_MUTATE = re.compile(r"--\s*pragma: no mutate")
# An arithmetic operator between two operands, spaced (`a - b`; not `SELECT *`, a comment's `--`).
_ARITHMETIC = r"(?<=[\w)] )(?<!SELECT )(?<!DISTINCT ){}(?= [\w(])"
# (name, pattern, replacement): each match of the pattern is a mutant, with that match replaced.
OPERATORS: tuple[tuple[str, re.Pattern, str | Callable[[re.Match], str]], ...] = (
    ("= -> <>", re.compile(r"(?<![<>!=:])=(?![=>])"), "<>"),
    ("<> -> =", re.compile(r"<>|!="), "="),
    ("< -> <=", re.compile(r"(?<![<-])<(?![=>])"), "<="),
    ("<= -> <", re.compile(r"<="), "<"),
    ("> -> >=", re.compile(r"(?<![-=<>])>(?![=>])"), ">="),
    (">= -> >", re.compile(r">="), ">"),
    ("AND -> OR", re.compile(r"\bAND\b"), "OR"),
    ("OR -> AND", re.compile(r"\bOR\b(?!\s+REPLACE)"), "AND"),
    ("DISTINCT dropped", re.compile(r"\bDISTINCT\s+(?!ON\b)"), ""),
    ("ASC -> DESC", re.compile(r"\bASC\b"), "DESC"),
    ("DESC -> ASC", re.compile(r"\bDESC\b"), "ASC"),
    ("IS NULL -> IS NOT NULL", re.compile(r"\bIS NULL\b"), "IS NOT NULL"),
    ("IS NOT NULL -> IS NULL", re.compile(r"\bIS NOT NULL\b"), "IS NULL"),
    ("NOT dropped", re.compile(r"\bNOT\s+(?=IN\b|EXISTS\b|LIKE\b)"), ""),
    ("outer join -> inner", re.compile(r"\b(LEFT|RIGHT|FULL)( OUTER)? JOIN\b"), "JOIN"),
    ("min -> max", re.compile(r"\bmin(?=\()", re.IGNORECASE), _swap_case("max")),
    ("max -> min", re.compile(r"\bmax(?=\()", re.IGNORECASE), _swap_case("min")),
    ("UNION -> UNION ALL", re.compile(r"\bUNION\b(?! ALL)(?! BY NAME)"), "UNION ALL"),
    ("+ -> -", re.compile(_ARITHMETIC.format(r"\+")), "-"),
    ("- -> +", re.compile(_ARITHMETIC.format("-")), "+"),
    ("* -> /", re.compile(_ARITHMETIC.format(r"\*") + r"(?! FROM\b| EXCLUDE\b| REPLACE\b)"), "/"),
    ("/ -> *", re.compile(_ARITHMETIC.format("/")), "*"),
)


def looks_like_sql(text: str) -> bool:
    return bool(_SQL.search(text))


def _using_keys(text: str) -> Iterator[tuple[str, str]]:
    """A join on several keys (`USING (a, b)`) made on all but one of them, each in turn."""
    for match in _USING.finditer(text):
        keys = [key.strip() for key in match.group(1).split(",")]
        for dropped in range(len(keys)):
            kept = ", ".join(key for i, key in enumerate(keys) if i != dropped)
            yield "join key dropped", text[: match.start()] + f"USING ({kept})" + text[match.end() :]


def mutations(text: str) -> Iterator[tuple[str, str]]:
    """Each mutant of the SQL `text`: (the operator's name, the text with one place changed), in the order of
    `OPERATORS`, then of the places; then the joins' keys dropped one at a time. A line that ends in
    `-- pragma: no mutate` (with the reason after it) is not mutated: its mutants are equivalent to it."""
    kept = [(m.start(), m.end()) for m in _LINE.finditer(text) if not _NO_MUTATE.search(m.group(0))]

    def mutable(start: int) -> bool:
        return any(begin <= start < end for begin, end in kept)

    for name, pattern, replacement in OPERATORS:
        for match in pattern.finditer(text):
            if mutable(match.start()):
                new = replacement if isinstance(replacement, str) else replacement(match)
                yield name, text[: match.start()] + new + text[match.end() :]
    for name, mutated in _using_keys(text):
        if mutable(len(os.path.commonprefix([text, mutated]))):
            yield name, mutated


# ---------------------------------------------------------------- mutmut


def operator_sql(node) -> Iterable:
    """mutmut's operator for a string node: the SQL mutants of a string or f-string that reads as SQL."""
    import libcst as cst

    if isinstance(node, cst.SimpleString):
        quote_at = min(i for i in (node.value.find('"'), node.value.find("'")) if i != -1)
        prefix = node.value[:quote_at]
        if "b" in prefix.lower():
            return
        quote = (
            node.value[quote_at : quote_at + 3]
            if node.value[quote_at : quote_at + 3] in ('"""', "'''")
            else node.value[quote_at]
        )
        body = node.value[len(prefix) + len(quote) : -len(quote)]
        if not looks_like_sql(body):
            return
        for _, mutated in mutations(body):
            yield _recorded(node.with_changes(value=f"{prefix}{quote}{mutated}{quote}"))
    elif isinstance(node, cst.FormattedString):
        texts = [part for part in node.parts if isinstance(part, cst.FormattedStringText)]
        if not looks_like_sql(" ".join(part.value for part in texts)):
            return
        for i, part in enumerate(node.parts):
            if isinstance(part, cst.FormattedStringText):
                for _, mutated in mutations(part.value):
                    parts = list(node.parts)
                    parts[i] = part.with_changes(value=mutated)
                    yield _recorded(node.with_changes(parts=parts))


# The mutated nodes the operator made while mutmut mutates one file (their ids), and the names mutmut gave them.
_made: set[int] = set()
_named: list[str] = []


def _recorded(node):
    _made.add(id(node))
    return node


def names_file(mutants_folder: Path, source: Path | str) -> Path:
    """Where the names of the SQL mutants of `source` are kept (beside mutmut's own data of it)."""
    return mutants_folder / f"{source}.sql-mutants.json"


def sql_mutant_names(mutants_folder: Path, source: Path | str) -> set[str]:
    """mutmut's names (`x_function__mutmut_7`) of the SQL mutants of `source`, as the last generation wrote them."""
    path = names_file(mutants_folder, source)
    return set(json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else set()


def install(mutants_folder: Path) -> None:
    """Add `operator_sql` to mutmut's operators, and record the names of the SQL mutants of each file that
    mutmut mutates (in this process and the workers it forks)."""
    import libcst as cst
    from mutmut.mutation import file_mutation, mutators

    if any(operator is operator_sql for _, operator in mutators.mutation_operators):
        return
    # (the list object that file_mutation imported: one list)
    mutators.mutation_operators.append((cst.BaseString, operator_sql))
    arrange = file_mutation.function_trampoline_arrangement
    mutate = file_mutation.mutate_file_contents

    def arrangement(function, mutants, class_name):
        mutants = list(mutants)
        result = arrange(function, mutants, class_name)
        _named.extend(name for name, mutant in zip(result[3], mutants) if id(mutant.mutated_node) in _made)
        return result

    def mutate_file(filename, code, *args, **kwargs):
        _made.clear()
        _named.clear()
        result = mutate(filename, code, *args, **kwargs)
        path = names_file(mutants_folder, filename)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sorted(_named)), encoding="utf-8")
        return result

    file_mutation.function_trampoline_arrangement = arrangement
    file_mutation.mutate_file_contents = mutate_file
    import mutmut.__main__ as cli

    cli.mutate_file_contents = mutate_file
