"""The package's shape: layers with one-way imports and no cycle (the import-linter contracts of
pyproject.toml), and notebooks whose imports are quick and load nothing heavy."""

import ast
import json
import shutil
import subprocess
import sys

import pytest

from analysis.core import paths

LINT_IMPORTS = shutil.which("lint-imports", path=str(paths.ROOT / ".venv" / "bin")) or shutil.which("lint-imports")
# Libraries that take long to import, or belong to the database build: a notebook's imports load none.
HEAVY = (
    "altair",
    "matplotlib",
    "scipy",
    "pandas",
    "rpy2",
    "tiktoken",
    "quicktok",
    "pycld2",
    "langid",
    "statsmodels",
    "seaborn",
)


def _lint(root) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )


def test_the_layer_contracts_hold():
    result = _lint(paths.ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "module, line",
    [
        ("analysis/core/paths.py", "from analysis.pipeline import build"),  # a lower layer importing a higher one
        ("analysis/analyses/overview.py", "from analysis.pipeline import surface"),  # notebooks' code loading the build
        ("analysis/analyses/dimensions.py", "from analysis.analyses import surface"),  # a cycle within a layer
        ("analysis/ui/explorer_logic.py", "import ipywidgets"),  # the explorer's logic making a widget
    ],
)
def test_a_broken_contract_fails(tmp_path, module, line):
    shutil.copytree(paths.ROOT / "analysis", tmp_path / "analysis", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(paths.ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / module, "a", encoding="utf-8") as fh:
        fh.write(f"\n{line}  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout


def _notebook_imports(notebook) -> list[str]:
    lines = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            lines += [
                ast.unparse(node)
                for node in ast.parse("".join(cell["source"])).body
                if isinstance(node, (ast.Import, ast.ImportFrom)) and "analysis" in ast.unparse(node)
            ]
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("notebook", sorted(paths.NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_a_notebooks_imports_are_light(notebook):
    """What a notebook imports loads none of the heavy libraries. How long the imports take is measured
    by `make bench` (each notebook's import cell), not asserted here: a busy machine would fail it."""
    lines = _notebook_imports(notebook)
    assert lines, "the notebook imports nothing of the package"
    code = "\n".join(["import sys", *lines, f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"])
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"importing {notebook.name}'s modules loads {loaded}"
