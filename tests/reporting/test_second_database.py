"""`make figures DB=x.duckdb OUT=folder/`: another database's reports, figures and index in a folder of
their own, rebuilt on its own; the default outputs stay as they were, byte for byte and time for time."""

import json
import os
import shutil
import subprocess

import pytest
from tiny_release import write_release

from analysis.core import files, paths
from analysis.pipeline.build import build
from analysis.reporting import provenance

SOURCES = [
    "Makefile",
    "pyproject.toml",
    "r-packages.csv",
    "data/calmqa-manifest.csv",
    "data/calmqa-languages.csv",
    "data/calmqa-language-identification.csv",
    "data/calmqa-expected-counts.csv",
    "data/paper/items.csv",
    "docs/methods.md",
]
SOURCE_FOLDERS = ["analysis", "scripts", "data/nativqa", "data/paper/claims", "bench/results"]
NOTEBOOK = "01_dataset_overview"
# What an earlier `make figures` left in the default folders.
DEFAULT_OUTPUTS = {
    f"reports/{NOTEBOOK}.html": "report",
    "reports/index.html": "index",
    f"figures/{NOTEBOOK}/figure5_specific_categories.png": "png",
    f"build/executed/{NOTEBOOK}.ipynb": "{}",
    f"build/executed/{NOTEBOOK}.timings.json": "{}",
}


def snapshot(root) -> dict[str, tuple[bytes, int]]:
    """Every file under the default output folders, with its bytes and modification time."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for folder in ("reports", "figures", "build/executed")
        for p in (root / folder).rglob("*")
        if p.is_file()
    }


@pytest.mark.slow
def test_figures_of_a_second_database_leave_the_default_outputs_untouched(tmp_path, small_language_identification):
    db_path = tmp_path / "second.duckdb"
    build(write_release(tmp_path / "release"), db_path, verify=False, progress=False)
    project = tmp_path / "project"
    for name in SOURCES:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(paths.ROOT / name, project / name)
    for name in SOURCE_FOLDERS:
        shutil.copytree(paths.ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (project / "notebooks").mkdir()
    shutil.copy2(paths.NOTEBOOKS / f"{NOTEBOOK}.ipynb", project / "notebooks")
    os.symlink(paths.ROOT / ".venv", project / ".venv")
    for name, text in DEFAULT_OUTPUTS.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
        os.utime(project / name, (2_000_000, 2_000_000))
    before = snapshot(project)
    out = tmp_path / "comparison"

    def make(*args) -> subprocess.CompletedProcess:
        # -o: the database is built (`make db DB=...` in a project with the release) and .venv (the
        # project's, linked) set up; neither is remade here.
        return subprocess.run(
            ["make", *args, f"DB={db_path}", f"OUT={out}/", f"-o{db_path}", "-o.venv/.setup-done", "figures"],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "MAKEFLAGS": ""},
        )

    result = make()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "build-db" not in result.stdout
    assert snapshot(project) == before, "the default outputs changed"
    report = out / "reports" / f"{NOTEBOOK}.html"
    record = provenance.read(report)
    assert record["database"] == db_path.name and record["database_sha256"] == files.sha256(db_path)
    assert f'href="{NOTEBOOK}.html"' in (out / "reports" / "index.html").read_text(encoding="utf-8")
    assert (out / "figures" / NOTEBOOK / "figure5_specific_categories.png").is_file()
    breakdown = json.loads((out / "build" / "executed" / f"{NOTEBOOK}.timings.json").read_text(encoding="utf-8"))
    assert set(breakdown["phases"]) == {
        "kernel start",
        "imports and set-up",
        "analysis",
        "static export",
        "kernel shutdown",
        "HTML export",
        "provenance",
        "other",
    }
    assert {"csv", "png", "svg"} <= set(breakdown["static_export"])
    assert abs(sum(breakdown["phases"].values()) - breakdown["seconds"]) < 0.01
    # That folder is up to date on its own.
    assert make("-q").returncode == 0
