"""The project's promises about itself: set-up files in step, README true to the code."""

import re
import subprocess
import sys
from pathlib import Path

from analysis.core import paths

ROOT = paths.ROOT


def test_make_help_lists_the_targets():
    out = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    for target in (
        "setup",
        "data",
        "db",
        "figures",
        "check-reports",
        "import-answers",
        "import-metrics",
        "import-questions",
        "test",
        "bench",
        "lab",
        "clean",
    ):
        assert f"make {target} " in out


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make test" in readme and "make figures" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_release_data_is_not_tracked():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not [f for f in tracked if re.search(r"dataset-(specific|agnostic)-\w+\.json|all_ratings\.csv", f)]


def test_make_lab_runs_as_root():
    """JupyterLab refuses to start as root without `--allow-root`; `make lab` passes it then, and only then."""
    import os

    out = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", ".venv/.setup-done", "-o", "data/calmqa.duckdb", "lab"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    command = next(line for line in out.splitlines() if "jupyter lab" in line)
    assert ("--allow-root" in command) == (os.geteuid() == 0)


def test_make_help_groups_the_targets_for_using_and_for_maintaining_the_suite():
    out = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    using, maintaining = out.split("Using the suite:")[1].split("Maintaining the suite:")
    assert "make figures " in using and "make lab " in using and "make import-answers " in using
    assert "make test " in maintaining and "make bench " in maintaining and "make figures " not in maintaining
    documented = re.findall(r"^([a-z-]+):.*## ", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    listed = re.findall(r"^  make ([a-z-]+) ", out, re.MULTILINE)
    assert sorted(listed) == sorted(documented), "every documented target listed once"


def test_changelog_fragments_are_named_by_issue_and_type_and_build():
    """Every fragment in changes/ is `<issue>.<type>.md` (or `+<name>.<type>.md`), and towncrier gathers
    each into the next section of the changelog."""
    fragments = [p for p in (ROOT / "changes").iterdir() if p.name != "README.md"]
    bad = [
        p.name for p in fragments if not re.fullmatch(r"(\d+|\+[a-z0-9-]+)\.(added|changed|fixed|removed)\.md", p.name)
    ]
    assert not bad, f"changelog fragments not named <issue>.<type>.md: {bad}"
    draft = subprocess.run(
        [str(Path(sys.executable).parent / "towncrier"), "build", "--draft", "--version", "next"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for fragment in fragments:
        assert fragment.read_text(encoding="utf-8").strip()[:60] in draft, fragment.name


def test_the_tests_are_laid_out_like_the_package():
    """Each test file is in a folder of tests/ named for a layer or top-level module of the package (cli/ for
    cli.py), or in project/, and no two have one name (CONTRIBUTING.md, "How the tests are laid out")."""
    tests = ROOT / "tests"
    folders = {p.stem for p in (ROOT / "analysis").iterdir() if not p.name.startswith("_")} | {"project"}
    files = sorted(tests.rglob("test_*.py"))
    misplaced = [str(p.relative_to(tests)) for p in files if p.parent.parent != tests or p.parent.name not in folders]
    assert not misplaced, f"test files outside tests/<layer>/: {misplaced}"
    names = [p.name for p in files]
    assert not {name for name in names if names.count(name) > 1}, "two test files of one name"
