"""Shared fixtures: the real release snapshot (obtained by `make data`), a database built from it once per
run, and every notebook of `make figures` run from it once per run."""

import concurrent.futures
from pathlib import Path

import pytest

from analysis import store
from analysis.core import paths
from analysis.pipeline.build import build
from analysis.reporting import index, run


@pytest.fixture(scope="session")
def release_folder() -> Path:
    if not (paths.RAW_CALMQA / "all_ratings.csv").is_file():
        pytest.fail(f"the release is not in {paths.RAW_CALMQA}: run `make data` (make test does it)")
    return paths.RAW_CALMQA


@pytest.fixture(scope="session")
def database(release_folder, tmp_path_factory) -> Path:
    """A database built from the real snapshot, private to this test run."""
    path = tmp_path_factory.mktemp("db") / "calmqa.duckdb"
    build(release_folder, path)
    return path


@pytest.fixture
def con(database):
    connection = store.connect(database)
    yield connection
    connection.close()


def _run(args) -> str | None:
    """Run one notebook in a worker process; the error as text (exceptions may not pickle) or None."""
    name, database, root = args
    try:
        run.run_notebook(name, db_path=database, figures_root=root / "figures",
                            reports_root=root / "reports", build_root=root / "build")
    except Exception as exc:  # noqa: BLE001 - reported by the test of that notebook
        return f"{type(exc).__name__}: {exc}"
    return None


@pytest.fixture(scope="session")
def built_runs(database, tmp_path_factory) -> tuple[Path, dict]:
    """reports/ and figures/ of every notebook, run from the real database as `make figures` runs them
    (the reproduction report after the others, whose figures it reads), the index, and each run's error."""
    root = tmp_path_factory.mktemp("reports")
    names = run.notebook_names()
    first = [name for name in names if name != run.REPRODUCTION_NOTEBOOK]
    # Processes, not threads: each Papermill run starts its own kernel.
    with concurrent.futures.ProcessPoolExecutor(max_workers=3) as pool:
        errors = dict(zip(first, pool.map(_run, [(name, database, root) for name in first])))
    if run.REPRODUCTION_NOTEBOOK in names:
        errors[run.REPRODUCTION_NOTEBOOK] = _run((run.REPRODUCTION_NOTEBOOK, database, root))
    index.write_index(root / "reports", root / "figures")
    return root, errors


@pytest.fixture
def built_reports(built_runs, request) -> Path:
    """The root of `built_runs`; fails the test when a notebook it concerns (`name`, or any) failed."""
    root, errors = built_runs
    name = request.node.callspec.params.get("name") if hasattr(request.node, "callspec") else None
    failed = {n: e for n, e in errors.items() if e and (name is None or n == name)}
    if failed:
        pytest.fail("notebooks failed: " + "; ".join(f"{n}: {e}" for n, e in failed.items()))
    return root
