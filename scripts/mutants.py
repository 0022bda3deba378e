"""`make mutants`: mutation testing of the modules that hold the domain rules and of the SQL the package
runs, with the fast tier (`pytest --tier fast`) as the killing suite; writes the score of each layer and every
mutant that survived to docs/mutants.md.

The mutated modules are `[tool.mutmut] only_mutate` in pyproject.toml, the one list to extend (mutmut's own
setting, so `mutmut browse` and `mutmut show` see the same modules). The SQL of the modules listed in
`[tool.calmqa.sql-mutants]` is mutated by the operator of scripts/sql_mutants.py, in every function. mutmut 3 copies the package into
mutants/, plants each mutant behind a switch in its function and runs, per mutant, the fast tests that
call that function. It keeps every result in mutants/ and tests again only the mutants of the functions
that changed since (and runs the stats again for new tests), so a second run takes seconds.

The tests find the project's files (data/paper, docs, notebooks...) from `paths.ROOT`, which is mutants/
when they run there: every other top-level entry of the project is linked into mutants/ first.

    .venv/bin/python scripts/mutants.py [--max-children 2]

Exits with status 1 when fewer than `REQUIRED_SCORE` percent of the mutants are killed.
"""

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import sql_mutants

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
PAGE = ROOT / "docs" / "mutants.md"
# What mutmut copies into mutants/ itself (its `source_paths` and `also_copy`), and what must not be linked
# there: the tools' caches (`*_cache`) neither, and not .git (git finds the checkout above mutants/).
NOT_LINKED = {"mutants", ".git", "tests", "pyproject.toml", "setup.cfg"}
# The share of each layer's mutants the fast tier must kill (issue 39).
REQUIRED_SCORE = 85.0
# The SQL operator's code: mutants made by another version of it would be numbered otherwise, so mutants/
# (mutmut's results by mutant number) is started afresh when it changes.
OPERATOR = Path(sql_mutants.__file__)
OPERATOR_STAMP = MUTANTS / ".sql-operator.sha256"
# How mutmut records a mutant that the tests detected: a failing test, or one the mutant made run past its
# time limit (an endless loop).
DETECTED = {"killed", "timeout"}
# mutmut's status of a mutant no run has tested yet.
NOT_CHECKED = "not checked"
# mutmut files a test process ended by SIGKILL (exit -9) under "segfault", beside a real segmentation fault
# (-11). Those seen here hung (a database build waiting on a worker it forked) and were killed, or were
# killed by a run stopped under them: named so; like every mutant not killed, tested again by the next run.
STATUS_BY_EXIT_CODE = {-9: "SIGKILL (hung)"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]


@dataclass(frozen=True)
class Mutated:
    """What of a module is mutated: the functions that make its rules (`Class.method` for a method; None: all
    of them, [] none) and, when `sql`, the SQL text of every function."""

    functions: list[str] | None
    sql: bool


def mutated_modules() -> dict[str, Mutated]:
    """Each module of `[tool.mutmut] only_mutate`, with its rule functions (`[tool.calmqa.mutant-functions]`)
    and whether its SQL is mutated (`[tool.calmqa.sql-mutants] modules`)."""
    tool = _pyproject()
    functions = tool.get("calmqa", {}).get("mutant-functions", {})
    sql = set(tool.get("calmqa", {}).get("sql-mutants", {}).get("modules", []))
    unknown = (set(functions) | sql) - set(tool["mutmut"]["only_mutate"])
    if unknown:
        raise SystemExit(f"pyproject.toml: not in [tool.mutmut] only_mutate: {', '.join(sorted(unknown))}")
    return {module: Mutated(functions.get(module), module in sql) for module in tool["mutmut"]["only_mutate"]}


def layer(module: str) -> str:
    """The package's layer a module belongs to: its folder under analysis/ (`io`, `stats`...), or the module
    itself at the top (`schema`, `store`)."""
    parts = Path(module).parts
    return parts[1] if len(parts) > 2 else Path(module).stem


def mutmut_function_name(function: str) -> str:
    """mutmut's name for a function (`x_name`) or a method (`xǁClassǁname`) of a module."""
    class_name, _, name = function.rpartition(".")
    return f"xǁ{class_name}ǁ{name}" if class_name else f"x_{name}"


def start_afresh_if_the_operator_changed() -> None:
    """Remove mutants/ when the SQL operator is not the one that made it (its mutants' numbers would not be
    those mutmut kept results for)."""
    digest = hashlib.sha256(OPERATOR.read_bytes()).hexdigest()
    if MUTANTS.exists() and (not OPERATOR_STAMP.is_file() or OPERATOR_STAMP.read_text() != digest):
        shutil.rmtree(MUTANTS)
    MUTANTS.mkdir(exist_ok=True)
    OPERATOR_STAMP.write_text(digest)


def link_project_files() -> None:
    """Link every top-level entry of the project that mutmut does not copy into mutants/."""
    MUTANTS.mkdir(exist_ok=True)
    copied = {Path(p).parts[0] for p in _pyproject()["mutmut"]["source_paths"]}
    for entry in sorted(ROOT.iterdir()):
        target = MUTANTS / entry.name
        if entry.name.endswith("_cache") or entry.name in NOT_LINKED | copied or target.is_symlink() or target.exists():
            continue
        target.symlink_to(Path("..") / entry.name)


def generate_mutants(max_children: int) -> None:
    """Write the mutants of the rule modules into mutants/ (as the first step of `mutmut run` does: a
    function that did not change keeps its mutants and their results; one that changed gets new ones)."""
    from mutmut.__main__ import copy_also_copy_files, copy_src_dir, create_mutants

    sql_mutants.install(MUTANTS)
    copy_src_dir()
    copy_also_copy_files()
    create_mutants(max_children)


def results(module: str, mutated: Mutated) -> dict[str, tuple[str, bool]]:
    """Each mutant of the module that is tested -> its status (`killed`, `survived`, `no tests`, `timeout`,
    `not checked`...) and whether it is an SQL mutant: those of its rule functions (all of its functions when
    None are named) and its SQL mutants when its SQL is mutated."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    data = SourceFileMutationData(path=module)
    data.load()
    wanted = None if mutated.functions is None else {mutmut_function_name(f) for f in mutated.functions}
    sql = sql_mutants.sql_mutant_names(MUTANTS, module)
    found = {}
    for name, code in sorted(data.exit_code_by_key.items(), key=_natural):
        short = name.rpartition(".")[2]
        is_sql = short in sql
        if (wanted is None or short.partition("__mutmut_")[0] in wanted) or (mutated.sql and is_sql):
            found[name] = (STATUS_BY_EXIT_CODE.get(code) or status_by_exit_code[code], is_sql)
    return found


def run_mutmut(mutants: list[str], max_children: int) -> None:
    """`mutmut run` on `mutants`, at the project's root."""
    command = [str(Path(sys.executable).parent / "mutmut"), "run", f"--max-children={max_children}", *mutants]
    subprocess.run(command, cwd=ROOT, check=True)


def _natural(item: tuple[str, object]) -> tuple[str, int]:
    stem, _, number = item[0].rpartition("__mutmut_")
    return stem, int(number)


def _function_lines(module: str) -> dict[str, int]:
    """The first line (decorators included) of each function and method of the source file, by mutmut's
    name for it (`x_name`, `xǁClassǁname`)."""
    lines = {}
    for node in ast.parse((ROOT / module).read_text(encoding="utf-8")).body:
        members = [(None, node)] if isinstance(node, ast.FunctionDef) else []
        if isinstance(node, ast.ClassDef):
            members = [(node.name, m) for m in node.body if isinstance(m, ast.FunctionDef)]
        for class_name, function in members:
            first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
            lines[f"xǁ{class_name}ǁ{function.name}" if class_name else f"x_{function.name}"] = first
    return lines


def mutation(module: str, name: str, function_lines: dict[str, int]) -> tuple[int, str]:
    """The source line a mutant changes, and the change (the original line, then the mutant's)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    diff = get_diff_for_mutant(name, path=module).splitlines()
    function = name.rpartition(".")[2].partition("__mutmut_")[0]
    line, removed, added = None, [], []
    offset = 0
    for text in diff:
        if text.startswith(("---", "+++")):
            continue
        hunk = re.match(r"@@ -(\d+)", text)
        if hunk:
            offset = int(hunk.group(1)) - 1
        elif text.startswith("-"):
            line = line or function_lines[function] + offset
            removed.append(text[1:].strip())
            offset += 1
        elif text.startswith("+"):
            added.append(text[1:].strip())
        else:
            offset += 1
    change = " / ".join(removed) + " -> " + (" / ".join(added) or "(removed)")
    return line or function_lines[function], change


def _summary(module: str) -> str:
    """The first sentence of the module's docstring."""
    docstring = ast.get_docstring(ast.parse((ROOT / module).read_text(encoding="utf-8"))) or ""
    first = re.split(r"(?<=[.:])\s", " ".join(docstring.split()), maxsplit=1)[0]
    return first.rstrip(":.") + "."


def _score(detected: int, total: int) -> str:
    return f"{100 * detected / total:.1f}%" if total else "-"


def _counts(by_mutant: dict[str, tuple[str, bool]], sql: bool | None = None) -> tuple[int, int]:
    """(mutants, detected) among `by_mutant`, of the SQL mutants only (`sql` True), the others (False) or all."""
    kept = [status for status, is_sql in by_mutant.values() if sql is None or is_sql == sql]
    return len(kept), sum(status in DETECTED for status in kept)


def layer_scores(statuses: dict[str, dict[str, tuple[str, bool]]]) -> dict[str, tuple[int, int]]:
    """(mutants, detected) of each layer, in the order of the modules."""
    scores: dict[str, tuple[int, int]] = {}
    for module, by_mutant in statuses.items():
        n, detected = _counts(by_mutant)
        before = scores.get(layer(module), (0, 0))
        scores[layer(module)] = (before[0] + n, before[1] + detected)
    return scores


def page(statuses: dict[str, dict[str, tuple[str, bool]]], modules: dict[str, Mutated], note: str) -> str:
    rows, survivors = [], []
    for module, by_mutant in statuses.items():
        n, n_detected = _counts(by_mutant)
        n_sql, sql_detected = _counts(by_mutant, sql=True)
        n_timeout = sum(status == "timeout" for status, _ in by_mutant.values())
        functions = modules[module].functions
        mutated = "all of it" if functions is None else ", ".join(f"`{f}`" for f in functions) or "-"
        sql = f"{sql_detected} of {n_sql}" if modules[module].sql else "-"
        rows.append(
            f"| `{module}` | {_summary(module)} | {mutated} | {sql} | {n} | {n_detected} | {n_timeout} | "
            f"{_score(n_detected, n)} |"
        )
        lines = _function_lines(module)
        for name, (status, is_sql) in by_mutant.items():
            if status not in DETECTED and status != NOT_CHECKED:
                line, change = mutation(module, name, lines)
                change = change.replace("|", "\\|")
                kind = "SQL" if is_sql else "code"
                survivors.append(
                    f"| `{module}` | {line} | {kind} | {status} | `{name.rpartition('.')[2]}` | `{change}` |"
                )
    layers = layer_scores(statuses)
    unchecked = {name: 0 for name in layers}
    for module, by_mutant in statuses.items():
        unchecked[layer(module)] += sum(status == NOT_CHECKED for status, _ in by_mutant.values())
    layer_rows = [
        f"| `{name}` | {n} | {n - unchecked[name]} | {detected} | {_score(detected, n)} | "
        f"{_score(detected, n - unchecked[name])} |"
        for name, (n, detected) in layers.items()
    ]
    sql_total = [_counts(by_mutant, sql=True) for by_mutant in statuses.values()]
    n_sql, sql_detected = sum(n for n, _ in sql_total), sum(d for _, d in sql_total)
    total, detected = sum(n for n, _ in layers.values()), sum(d for _, d in layers.values())
    lowest = min(layers, key=lambda name: layers[name][1] / layers[name][0] if layers[name][0] else 1.0)
    survivor_table = (
        "\n".join(
            ["| Module | Line | Mutant of | Status | Mutant | Change |", "|---|---:|---|---|---|---|", *survivors]
        )
        if survivors
        else "None: the fast tier kills every mutant."
    )
    operators = ", ".join(f"`{name}`" for name, _, _ in sql_mutants.OPERATORS)
    return f"""# Mutation testing of the rules and of the SQL

<!-- Generated by `make mutants` (scripts/mutants.py) from mutmut's results: do not edit by hand. -->

`make mutants` runs [mutmut](https://mutmut.readthedocs.io) {_mutmut_version()} on the functions that hold
the suite's domain rules, layer by layer, and on the SQL text the package runs, with the fast tier
(`make test-fast`) as the killing suite: mutmut changes one operator, constant, argument or name at a time in a
function (a *mutant*) and runs the fast tests that call that function; the mutant is killed when one of them
fails (or runs past mutmut's time limit: an endless loop, counted as killed, as mutmut does). Each surviving
mutant is either a gap in the tests of its rule (a test at the rule kills it) or equivalent to the original
code (it is then marked in the source with `# pragma: no mutate` and a comment saying why, and mutmut makes no
mutant of that line).

mutmut has no operator for SQL (it leaves triple-quoted strings alone and changes any other string only by
wrapping it in `XX`): scripts/sql_mutants.py adds one. A string or f-string in a function whose text reads as
SQL gets one mutant per place where an operator applies: {operators}.

**Score: {detected} of {total} mutants killed ({_score(detected, total)}), of which SQL: {sql_detected} of
{n_sql} ({_score(sql_detected, n_sql)}). Lowest layer: `{lowest}`, {_score(layers[lowest][1], layers[lowest][0])}
(required: at least {REQUIRED_SCORE:.0f}% in each layer).**
{note}

| Layer | Mutants | Tested | Killed | Score | Score of the tested |
|---|---:|---:|---:|---:|---:|
{chr(10).join(layer_rows)}
| **All** | **{total}** | **{total - sum(unchecked.values())}** | **{detected}** | **{_score(detected, total)}** | **{_score(detected, total - sum(unchecked.values()))}** |

A mutant not tested (a run stopped before it: `not checked`) counts as not killed in the score; the last column
leaves the mutants not tested out.

The mutated modules are `[tool.mutmut] only_mutate` in `pyproject.toml`: a module made of rules is added with
one line there and mutated whole; a module that also holds plumbing (workers, queries, the text of a
report) names the functions that make its rules in `[tool.calmqa.mutant-functions]` (`[]`: none), and a module
whose SQL is mutated is listed in `[tool.calmqa.sql-mutants]`. Then `make mutants`, and commit this page.
mutmut mutates the code inside functions and methods, not module-level assignments nor a method under a
decorator other than `@staticmethod` and `@classmethod` (a `@property`, such as `SurfaceMetric.count`, is
pinned by `tests/analyses/test_domain_rules.py` instead): a threshold kept as a module constant
(`intervals.MIN_VALID`, `surface.REPETITION_MIN_COUNT`) is pinned by `tests/analyses/test_rule_boundaries.py`,
which asserts its value and the boundary on both sides, and the comparison that applies it (`>=`) is mutated
in its function. SQL held in module-level strings (the schema's macros and views, the queries some modules keep
as constants) is not mutated either: the macros are pinned by `tests/schema/test_sql_rules.py`.

A mutant's tests run in a process that mutmut forks from its fork server, and stop at the first failure. A
test on the tiny database (tests/conftest.py) builds it there, and that build can hang on a worker process it
forks (the same tests finish in seconds in a process of their own): mutmut then stops the process at its
time limit (`timeout`, counted as killed, as mutmut counts it) or by SIGKILL (exit -9, which mutmut files
under `segfault`: shown here as `SIGKILL (hung)`, not counted). Under mutmut the tests that build databases
(the long files of `make test` and the tests on the tiny database) run last, so a mutant that a unit test
kills is killed before any build, and the generated studies of the fast tier are those of its first seed.

| Module | What it holds | Rule functions mutated | SQL mutants killed | Mutants | Killed | Of which timed out | Score |
|---|---|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

## Surviving mutants

{survivor_table}
"""


def _mutmut_version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--report-only", action="store_true", help="write the page from mutants/ without running")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    modules = mutated_modules()
    note = "This page was written from the results kept in `mutants/`, without running mutmut."
    if not args.report_only:
        start = time.monotonic()
        start_afresh_if_the_operator_changed()
        link_project_files()
        generate_mutants(args.max_children)
        # A killed mutant stays killed until its function changes (mutmut then makes it anew); the others
        # are tested again, so that a test added since can kill them.
        pending = [
            name
            for module, mutated in modules.items()
            for name, (status, _) in results(module, mutated).items()
            if status not in DETECTED
        ]
        if pending:
            run_mutmut(pending, args.max_children)
        note = (
            f"The run that wrote this page tested {len(pending)} mutants (`--max-children {args.max_children}`) "
            f"in {time.monotonic() - start:.0f} s: those not killed before (all of them without `mutants/`)."
        )
    statuses = {module: results(module, mutated) for module, mutated in modules.items()}
    PAGE.write_text(page(statuses, modules, note), encoding="utf-8")
    below = {name: (n, d) for name, (n, d) in layer_scores(statuses).items() if n and 100 * d / n < REQUIRED_SCORE}
    for name, (n, detected) in layer_scores(statuses).items():
        print(f"{name}: {detected} of {n} mutants killed ({_score(detected, n)})")
    print(f"-> {PAGE.relative_to(ROOT)}")
    if below:
        print(f"below the required {REQUIRED_SCORE:.0f}%: {', '.join(below)}; see the surviving mutants")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
