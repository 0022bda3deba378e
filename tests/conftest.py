"""Shared fixtures: the real release snapshot (obtained by `make data`) and a database built from it once per run."""

from pathlib import Path

import pytest

from analysis import db, paths


@pytest.fixture(scope="session")
def release_folder() -> Path:
    if not (paths.RAW_CALMQA / "all_ratings.csv").is_file():
        pytest.fail(f"the release is not in {paths.RAW_CALMQA}: run `make data` (make test does it)")
    return paths.RAW_CALMQA


@pytest.fixture(scope="session")
def database(release_folder, tmp_path_factory) -> Path:
    """A database built from the real snapshot, private to this test run."""
    path = tmp_path_factory.mktemp("db") / "calmqa.duckdb"
    db.build(release_folder, path)
    return path


@pytest.fixture
def con(database):
    connection = db.connect(database)
    yield connection
    connection.close()
