"""`make mutants`: mutation testing of the modules that hold the domain rules, with the fast tier
(`pytest --tier fast`) as the killing suite; writes the score and every mutant that survived to
docs/mutants.md.

The rule modules are `[tool.mutmut] only_mutate` in pyproject.toml, the one list to extend (mutmut's own
setting, so `mutmut browse` and `mutmut show` see the same modules). mutmut 3 copies the package into
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
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
PAGE = ROOT / "docs" / "mutants.md"
# What mutmut copies into mutants/ itself (its `source_paths` and `also_copy`), and what must not be linked
# there: the tools' caches (`*_cache`) neither, and not .git (git finds the checkout above mutants/).
NOT_LINKED = {"mutants", ".git", "tests", "pyproject.toml", "setup.cfg"}
# The share of the rule modules' mutants the fast tier must kill (issue 29).
REQUIRED_SCORE = 90.0
# How mutmut records a mutant that the tests detected: a failing test, or one the mutant made run past its
# time limit (an endless loop).
DETECTED = {"killed", "timeout"}
# mutmut files a test process ended by SIGKILL (exit -9) under "segfault", beside a real segmentation fault
# (-11). Those seen here hung (a database build waiting on a worker it forked) and were killed, or were
# killed by a run stopped under them: named so; like every mutant not killed, tested again by the next run.
STATUS_BY_EXIT_CODE = {-9: "SIGKILL (hung)"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]


def rule_modules() -> dict[str, list[str] | None]:
    """The files of the rule modules, as `[tool.mutmut] only_mutate` lists them, each with the functions
    that make its rules (`[tool.calmqa.mutant-functions]`; `Class.method` for a method), or None: all of it."""
    tool = _pyproject()
    functions = tool.get("calmqa", {}).get("mutant-functions", {})
    return {module: functions.get(module) for module in tool["mutmut"]["only_mutate"]}


def mutmut_function_name(function: str) -> str:
    """mutmut's name for a function (`x_name`) or a method (`xǁClassǁname`) of a module."""
    class_name, _, name = function.rpartition(".")
    return f"xǁ{class_name}ǁ{name}" if class_name else f"x_{name}"


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

    copy_src_dir()
    copy_also_copy_files()
    create_mutants(max_children)


def results(module: str, functions: list[str] | None) -> dict[str, str]:
    """Each mutant of the rule module (of its rule `functions` when named) -> its status (`killed`,
    `survived`, `no tests`, `timeout`, `not checked`...)."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    data = SourceFileMutationData(path=module)
    data.load()
    wanted = None if functions is None else {mutmut_function_name(f) for f in functions}
    return {
        name: STATUS_BY_EXIT_CODE.get(code) or status_by_exit_code[code]
        for name, code in sorted(data.exit_code_by_key.items(), key=_natural)
        if wanted is None or name.rpartition(".")[2].partition("__mutmut_")[0] in wanted
    }


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


def page(statuses: dict[str, dict[str, str]], modules: dict[str, list[str] | None], note: str) -> str:
    rows, survivors = [], []
    total = detected = 0
    for module, by_mutant in statuses.items():
        n_detected = sum(status in DETECTED for status in by_mutant.values())
        n_timeout = sum(status == "timeout" for status in by_mutant.values())
        n = len(by_mutant)
        total, detected = total + n, detected + n_detected
        score = f"{100 * n_detected / n:.1f}%" if n else "-"
        functions = modules[module]
        mutated = "all of it" if functions is None else ", ".join(f"`{f}`" for f in functions)
        rows.append(f"| `{module}` | {_summary(module)} | {mutated} | {n} | {n_detected} | {n_timeout} | {score} |")
        lines = _function_lines(module)
        for name, status in by_mutant.items():
            if status not in DETECTED:
                line, change = mutation(module, name, lines)
                change = change.replace("|", "\\|")
                survivors.append(f"| `{module}` | {line} | {status} | `{name.rpartition('.')[2]}` | `{change}` |")
    score = 100 * detected / total if total else 0.0
    survivor_table = (
        "\n".join(["| Module | Line | Status | Mutant | Change |", "|---|---:|---|---|---|", *survivors])
        if survivors
        else "None: the fast tier kills every mutant."
    )
    return f"""# Mutation testing of the rule modules

<!-- Generated by `make mutants` (scripts/mutants.py) from mutmut's results: do not edit by hand. -->

`make mutants` runs [mutmut](https://mutmut.readthedocs.io) {_mutmut_version()} on the modules that hold
the suite's domain rules, with the fast tier (`make test-fast`) as the killing suite: mutmut changes one
operator, constant, argument or name at a time in a function (a *mutant*) and runs the fast tests that
call that function; the mutant is killed when one of them fails (or runs past mutmut's time limit: an
endless loop, counted as killed, as mutmut does). Each surviving mutant is either a gap in the tests of
its rule (a test at the rule kills it) or equivalent to the original code (it is then marked in the
source with `# pragma: no mutate` and a comment saying why, and mutmut makes no mutant of that line).

**Score: {detected} of {total} mutants killed ({score:.1f}%; required: at least {REQUIRED_SCORE:.0f}%).**
{note}

The rule modules are `[tool.mutmut] only_mutate` in `pyproject.toml`: a module made of rules is added with
one line there and mutated whole; a module that also holds plumbing (workers, queries, the text of a
report) names the functions that make its rules in `[tool.calmqa.mutant-functions]`. Then `make mutants`,
and commit this page. mutmut mutates the code inside functions and methods, not module-level assignments
nor a method under a decorator other than `@staticmethod` and `@classmethod` (a `@property`, such as
`SurfaceMetric.count`, is pinned by `tests/analyses/test_domain_rules.py` instead): a threshold kept as a module constant (`intervals.MIN_VALID`, `surface.REPETITION_MIN_COUNT`) is pinned by
`tests/analyses/test_rule_boundaries.py`, which asserts its value and the boundary on both sides, and the comparison
that applies it (`>=`) is mutated in its function. SQL held in module-level strings is not mutated either.

A mutant's tests run in a process that mutmut forks from its fork server, and stop at the first failure. A
test on the tiny database (tests/conftest.py) builds it there, and that build can hang on a worker process it
forks (the same tests finish in seconds in a process of their own): mutmut then stops the process at its
time limit (`timeout`, counted as killed, as mutmut counts it) or by SIGKILL (exit -9, which mutmut files
under `segfault`: shown here as `SIGKILL (hung)`, not counted). Under mutmut the tests that build databases
(the long files of `make test` and the tests on the tiny database) run last, so a mutant that a unit test
kills is killed before any build.

| Module | What it holds | Mutated | Mutants | Killed | Of which timed out | Score |
|---|---|---|---:|---:|---:|---:|
{chr(10).join(rows)}
| **All** | | | **{total}** | **{detected}** | | **{score:.1f}%** |

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
    modules = rule_modules()
    note = "This page was written from the results kept in `mutants/`, without running mutmut."
    if not args.report_only:
        start = time.monotonic()
        link_project_files()
        generate_mutants(args.max_children)
        # A killed mutant stays killed until its function changes (mutmut then makes it anew); the others
        # are tested again, so that a test added since can kill them.
        pending = [
            name
            for module, functions in modules.items()
            for name, status in results(module, functions).items()
            if status not in DETECTED
        ]
        if pending:
            run_mutmut(pending, args.max_children)
        note = (
            f"The run that wrote this page tested {len(pending)} mutants (`--max-children {args.max_children}`) "
            f"in {time.monotonic() - start:.0f} s: those not killed before (all of them without `mutants/`)."
        )
    statuses = {module: results(module, functions) for module, functions in modules.items()}
    PAGE.write_text(page(statuses, modules, note), encoding="utf-8")
    total = sum(len(s) for s in statuses.values())
    detected = sum(status in DETECTED for s in statuses.values() for status in s.values())
    score = 100 * detected / total if total else 0.0
    print(f"{detected} of {total} mutants killed ({score:.1f}%): {PAGE.relative_to(ROOT)}")
    if score < REQUIRED_SCORE:
        print(f"below the required {REQUIRED_SCORE:.0f}%: see the surviving mutants in {PAGE.relative_to(ROOT)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
