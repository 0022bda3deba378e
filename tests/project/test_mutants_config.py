"""`make mutants` (scripts/mutants.py) mutates the rule functions and the SQL of the modules pyproject.toml names,
with the fast tier as the killing suite (the score in docs/mutants.md is written by that run, which takes a
while: not checked here)."""

import ast
import tomllib

from analysis.core import paths

CONFIG = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def test_the_rule_modules_are_modules_of_the_package():
    modules = CONFIG["only_mutate"]
    assert modules, "[tool.mutmut] only_mutate names no rule module"
    assert len(set(modules)) == len(modules)
    for module in modules:
        assert module.startswith("analysis/") and module.endswith(".py"), module
        assert (paths.ROOT / module).is_file(), f"[tool.mutmut] only_mutate names {module}, which does not exist"


def test_the_killing_suite_is_the_fast_tier():
    assert CONFIG["source_paths"] == ["analysis"]
    assert CONFIG["pytest_add_cli_args_test_selection"] == ["--tier=fast"]


CALMQA = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["calmqa"]


def test_the_modules_whose_sql_is_mutated_are_mutated_modules():
    modules = CALMQA["sql-mutants"]["modules"]
    assert len(set(modules)) == len(modules)
    assert set(modules) <= set(CONFIG["only_mutate"])


def test_the_rule_functions_are_functions_of_rule_modules():
    functions = CALMQA["mutant-functions"]
    for module, names in functions.items():
        assert module in CONFIG["only_mutate"], f"{module} names rule functions but is not a rule module"
        tree = ast.parse((paths.ROOT / module).read_text(encoding="utf-8"))
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        defined |= {
            f"{node.name}.{member.name}"
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            for member in node.body
            if isinstance(member, ast.FunctionDef)
        }
        # (no function named: a module mutated in its SQL only)
        assert names or module in CALMQA["sql-mutants"]["modules"], f"{module} has nothing mutated"
        assert set(names) <= defined, f"{module} has no function {sorted(set(names) - defined)}"
