"""The project's promises about itself: set-up files in step, README true to the code."""

import re
import subprocess
import tomllib

import yaml

from analysis import schema
from analysis.core import paths

ROOT = paths.ROOT


def _requirement_name(spec: str) -> tuple[str, str]:
    name, _, version = re.split(r"(==|=)", spec.strip(), maxsplit=1)
    return name.strip().lower(), version.strip()


def test_environment_yml_names_every_dependency_of_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = [*project["dependencies"], *[d for group in project["optional-dependencies"].values() for d in group]]
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.update(_requirement_name(p) for p in dep["pip"])
        elif "=" in dep and not dep.startswith(("python=", "r-base")):
            conda.update([_requirement_name(dep)])
    # conda-forge spells two packages differently
    conda_names = {"duckdb": "python-duckdb"}
    for spec in required:
        name, version = _requirement_name(spec)
        found = pip.get(name) or conda.get(conda_names.get(name, name))
        assert found == version, f"environment.yml does not pin {name}=={version} (has {found})"
    for r_package in ("r-ordinal", "r-emmeans", "r-performance", "r-lme4"):
        assert r_package in env["dependencies"]


def test_make_help_lists_the_targets():
    out = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for target in ("setup", "data", "db", "figures", "check-reports", "import-answers", "import-metrics",
                   "import-questions", "test", "bench", "lab", "clean"):
        assert f"make {target} " in out


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make test" in readme and "make figures" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_documents_every_table_as_the_schema_says():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert schema.markdown() in readme, "README's table documentation is stale: paste `python -m analysis schema`"


def test_release_data_is_not_tracked():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not [f for f in tracked if re.search(r"dataset-(specific|agnostic)-\w+\.json|all_ratings\.csv", f)]
