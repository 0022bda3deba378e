"""Print the Makefile's code dependencies (build/make/deps.mk): for each product, the files of the
`analysis` package it runs, found from the import statements of the code and of the notebooks.

A product depends on the modules its entry point imports, directly or through others (imports inside
functions count too), and on the `__init__.py` of every package on the way. So editing a module
rebuilds exactly what runs it (`make -n -W analysis/<module>.py figures` shows what), and a new module
needs no Makefile change. Standard library only: it runs before the environment exists.

    python3 scripts/make_deps.py > build/make/deps.mk
"""

import ast
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "analysis"
# Make variable -> the module whose code builds that product.
ENTRY_POINTS = {
    "DB_CODE": "analysis.pipeline.build",
    "LANGUAGE_ID_CODE": "analysis.pipeline.language_id_all",
    "LANGUAGE_ID_EVALUATION_CODE": "analysis.pipeline.language_id_evaluation",
    "SHORT_TEXT_CODE": "analysis.pipeline.short_text",
    "REPORT_RUN_CODE": "analysis.reporting.run",
    "INDEX_CODE": "analysis.reporting.index",
}


def module_file(module: str) -> Path | None:
    path = ROOT / Path(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The modules of the package that `tree` (the code of `module`) imports."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from package import name`: name is a module when the package has one of that name.
            names = [origin] + [f"{origin}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] == PACKAGE and module_file(name))
    return found


def closure(modules: set[str]) -> set[str]:
    """The modules and everything they import, with the packages that contain them."""
    seen, todo = set(), list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # packages run their __init__.py
        path = module_file(module)
        todo += imported(ast.parse(path.read_text(encoding="utf-8")), module, path.name == "__init__.py")
    return seen


def notebook_imports(path: Path) -> set[str]:
    found = set()
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            try:
                found |= imported(ast.parse("".join(cell["source"])), "__notebook__", False)
            except SyntaxError:  # a cell with IPython syntax imports nothing of the package
                continue
    return found


def files(modules: set[str]) -> str:
    return " ".join(sorted(str(module_file(m).relative_to(ROOT)) for m in modules))


def generic(notebook: Path) -> bool:
    """A notebook every study gets: it requires no declaration of the study (`"calmqa": {"requires": ...}`
    in its metadata names the one a paper-only notebook needs; analysis/reporting/run.py reads it too)."""
    return "requires" not in json.loads(notebook.read_text(encoding="utf-8"))["metadata"].get("calmqa", {})


def parameters(notebook: Path) -> set[str]:
    """The names its `parameters` cell assigns (Papermill's parameters)."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(cell["source"]))
            return {
                target.id
                for node in ast.walk(tree)
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name)
            }
    return set()


def claim_sources() -> list[str]:
    """The notebooks whose figures CSVs the papers' claims read (their `source`, `<notebook>/<file>`): the
    reproduction report (notebook 08) reads those and no other."""
    found = set()
    for path in sorted((ROOT / "data/paper/claims").glob("*.csv")):
        with path.open(encoding="utf-8", newline="") as rows:
            found |= {row["source"].split("/")[0] for row in csv.DictReader(rows) if row.get("source")}
    return sorted(found)


def main() -> None:
    lines = ["# Generated by scripts/make_deps.py from the imports of analysis/ and notebooks/: do not edit."]
    lines += [f"{variable} := {files(closure({module}))}" for variable, module in ENTRY_POINTS.items()]
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for notebook in notebooks:
        lines.append(f"NOTEBOOK_CODE_{notebook.stem} := {files(closure(notebook_imports(notebook)))}")
    # The notebooks that read the papers' claims (a `claims_dir` parameter), and those whose figures the
    # reproduction report reads.
    claim_readers = [n.stem for n in notebooks if "claims_dir" in parameters(n)]
    lines.append("CLAIMS_NOTEBOOKS := " + " ".join(claim_readers))
    lines.append("CLAIM_SOURCE_NOTEBOOKS := " + " ".join(claim_sources()))
    # The notebooks `make figures STUDY=...` runs (docs/studies.md).
    lines.append("GENERIC_NOTEBOOKS := " + " ".join(str(n.relative_to(ROOT)) for n in notebooks if generic(n)))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
