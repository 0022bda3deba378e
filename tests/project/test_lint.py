"""`make lint` passes: CI runs `make test`, so the linters `make lint` names (ruff's lint and format, mypy
on the package, the import contracts) run here too, and a finding fails with their output."""

import subprocess

import pytest

from analysis.core import paths


@pytest.mark.slow
def test_make_lint_finds_nothing():
    result = subprocess.run(["make", "--no-print-directory", "lint"], cwd=paths.ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
