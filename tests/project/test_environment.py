"""The environment is pinned and complete: every library the code imports is declared at an exact version,
environment.yml pins the same, R and its packages are at the versions of r-packages.csv, and the project
says how to cite it and under which licence."""

import ast
import csv
import importlib.metadata
import re
import subprocess
import sys
import tomllib

import pytest
import yaml

from analysis.core import paths

ROOT = paths.ROOT
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DECLARED = [*PROJECT["dependencies"], *[d for group in PROJECT["optional-dependencies"].values() for d in group]]
ENVIRONMENT = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
# The package and the tests' own helper modules (tests/*.py that are not test files).
# The package, the tests' helper modules, and the scripts (a script may import another: scripts/sql_mutants.py).
LOCAL = {
    "analysis",
    *(p.stem for p in (ROOT / "tests").glob("*.py") if not p.name.startswith("test_")),
    *(p.stem for p in (ROOT / "scripts").glob("*.py")),
}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _requirement(spec: str) -> tuple[str, str]:
    name, _, version = re.split(r"(==|=)", spec.strip(), maxsplit=1)
    return _normal(name), version.strip()


def _conda_and_pip() -> tuple[dict, dict]:
    conda, pip = {}, {}
    for dep in ENVIRONMENT["dependencies"]:
        if isinstance(dep, dict):
            pip.update(_requirement(p) for p in dep["pip"])
        elif "=" in dep:
            conda.update([_requirement(dep)])
    return conda, pip


def _r_pins() -> list[dict]:
    with open(paths.R_PACKAGES, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_every_dependency_is_pinned_exactly():
    for spec in DECLARED:
        assert "==" in spec, f"{spec} is not pinned to one version"


@pytest.mark.slow
def test_every_imported_library_is_declared():
    """Each third-party module that analysis/, scripts/ or tests/ import belongs to a declared distribution."""
    declared = {_requirement(spec)[0] for spec in DECLARED}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for path in [*ROOT.glob("analysis/**/*.py"), *ROOT.glob("scripts/*.py"), *ROOT.glob("tests/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in LOCAL:
                    continue
                names = {_normal(d) for d in distributions.get(top, [top])}
                if not names & declared:
                    undeclared.setdefault(top, path.relative_to(ROOT).as_posix())
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_environment_yml_names_every_dependency_of_pyproject():
    conda, pip = _conda_and_pip()
    conda_names = {"duckdb": "python-duckdb"}  # conda-forge spells it differently
    for spec in DECLARED:
        name, version = _requirement(spec)
        found = pip.get(name) or conda.get(conda_names.get(name, name))
        assert found == version, f"environment.yml does not pin {name}=={version} (has {found})"


def test_r_and_its_packages_are_pinned_alike_for_debian_and_conda():
    conda, _ = _conda_and_pip()
    script = (ROOT / "scripts" / "install-system-deps.sh").read_text(encoding="utf-8")
    pins = _r_pins()
    for pin in pins:
        # conda-forge writes an R version's `-` as `_`
        assert conda.get(pin["conda"]) == pin["version"].replace("-", "_"), f"environment.yml: {pin['conda']}"
    installed = re.search(r"^R_PACKAGES=\((.*)\)", script, re.M).group(1).split()
    assert set(installed) <= {pin["package"] for pin in pins}
    assert "check-r-packages.sh" in script


@pytest.mark.needs_r
def test_the_installed_r_packages_have_the_recorded_versions(tmp_path):
    check = ROOT / "scripts" / "check-r-packages.sh"
    result = subprocess.run(["bash", str(check)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    other = tmp_path / "r-packages.csv"
    other.write_text(
        paths.R_PACKAGES.read_text(encoding="utf-8").replace(",2022.11-16,", ",2019.12-10,"), encoding="utf-8"
    )
    result = subprocess.run(["bash", str(check), str(other)], capture_output=True, text=True)
    assert result.returncode == 1 and "ordinal 2022.11-16, recorded 2019.12-10" in result.stderr


def test_licence_and_citation():
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "the CaLMQA analysis suite authors" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["license"] == "MIT"
    assert citation["version"] == PROJECT["version"]
    assert {r["identifiers"][0]["value"] for r in citation["references"]} == {"arXiv:2406.17761", "arXiv:2407.09823"}


def test_set_up_files_cite_only_files_that_exist():
    for name in ("pyproject.toml", "environment.yml", "Makefile", "scripts/install-system-deps.sh"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for cited in re.findall(r"\b((?:tests|scripts|data|docs)/[\w./-]+\.(?:py|sh|csv|md))\b", text):
            assert (ROOT / cited).exists(), f"{name} cites {cited}, which does not exist"
