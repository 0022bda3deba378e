import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from analysis import cli
from analysis.analyses import overview, release_version
from analysis.core import files, outputs, paths
from analysis.core.errors import Failure, NotebookFailed
from analysis.reporting import run
from analysis.viz import export

NOTEBOOKS = sorted(paths.NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_clean_and_parameterized(notebook):
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "stored with outputs"
    assert nb["metadata"]["kernelspec"]["name"] == paths.KERNEL_NAME
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    source = "".join(tagged[0]["source"])
    assert "db_path" in source and "output_dir" in source
    # plain values only: Papermill does not recompute expressions when it injects parameters
    assert not re.search(r"\w\(", source)


@pytest.mark.parametrize("name", ["01_dataset_overview"])
def test_dataset_overview_end_to_end(built_reports, name, database, con):
    # The run of `make figures` from the real database (conftest.built_runs), which other tests read too.
    html = built_reports / "reports" / f"{name}.html"
    out = built_reports / "figures" / name
    assert sorted(p.name for p in out.iterdir()) == [
        "dataset_counts.csv",
        "dataset_counts.tex",
        "figure1_category_treemap.csv",
        "figure1_category_treemap.pdf",
        "figure1_category_treemap.png",
        "figure1_category_treemap.svg",
        "figure5_specific_categories.csv",
        "figure5_specific_categories.pdf",
        "figure5_specific_categories.png",
        "figure5_specific_categories.svg",
        "figure5_specific_category_shares.csv",
        "figure5_specific_category_shares.pdf",
        "figure5_specific_category_shares.png",
        "figure5_specific_category_shares.svg",
        "question_counts.csv",
        "question_counts.tex",
        "table10_languages.csv",
        "table10_languages.tex",
        "table4_question_lengths.csv",
        "table4_question_lengths.tex",
        "top_category_by_language.csv",
        "top_category_by_language.tex",
        "top_category_counts.csv",
        "top_category_counts.tex",
    ]
    assert pl.read_csv(out / "table4_question_lengths.csv").equals(overview.question_length_table(con, "calmqa"))
    assert pl.read_csv(out / "figure5_specific_categories.csv").equals(overview.category_counts(con, "calmqa"))
    assert pl.read_csv(out / "dataset_counts.csv").equals(overview.dataset_counts(con))
    # The run's manifest, beside the executed notebook: exactly the files of its folder, as written.
    manifest = json.loads((built_reports / "build" / "executed" / f"{name}.manifest.json").read_text())
    assert sorted(f["name"] for f in manifest["files"]) == sorted(p.name for p in out.iterdir())
    for entry in manifest["files"]:
        assert entry["bytes"] == (out / entry["name"]).stat().st_size
        assert entry["sha256"] == files.sha256(out / entry["name"])
    by = {entry["name"]: entry["written_by"] for entry in manifest["files"]}
    assert by["figure1_category_treemap.svg"] == "save_figure" and by["dataset_counts.tex"] == "tables.save"
    assert manifest["parameters"]["claims_dir"] == "../data/paper/claims"  # a default, as the run used it
    assert manifest["parameters"]["output_dir"] == str(out.resolve())
    assert manifest["database_sha256"] == files.sha256(database)
    assert manifest["release"] == release_version.of(con).describe()
    page = html.read_text(encoding="utf-8")
    assert "2,644 questions" in page
    assert not re.search(r"""<(script|link)[^>]+(src|href)=["']?https?:""", page), "the report loads from the network"
    assert page.count("window.vegaEmbed=") == 1


@pytest.mark.slow
def test_failed_notebook_names_the_cell_and_leaves_no_report(tmp_path):
    with pytest.raises(NotebookFailed) as info:
        run.run_notebook(
            "01_dataset_overview",
            db_path=tmp_path / "missing.duckdb",
            figures_root=tmp_path / "figures",
            reports_root=tmp_path / "reports",
            build_root=tmp_path / "build",
        )
    message = str(info.value)
    assert "01_dataset_overview.ipynb failed in code cell" in message and "missing.duckdb: no database here" in message
    assert (tmp_path / "build" / "executed" / "01_dataset_overview.ipynb").is_file()
    assert not (tmp_path / "reports" / "01_dataset_overview.html").exists()
    assert not (tmp_path / "figures" / "01_dataset_overview").exists()


def test_two_runs_at_once_neither_fail_nor_mix_their_outputs(database, tmp_path, con):
    code = (
        "import sys; from pathlib import Path; from analysis.reporting import run; o = Path(sys.argv[1]); "
        "run.run_notebook('01_dataset_overview', db_path=Path(sys.argv[2]), figures_root=o / 'figures', "
        "reports_root=o / 'reports', build_root=o / 'build')"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(database)], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for process in processes:
        assert process.wait() == 0, process.stderr.read().decode()
    out = tmp_path / "figures" / "01_dataset_overview"
    assert pl.read_csv(out / "table4_question_lengths.csv").equals(overview.question_length_table(con, "calmqa"))
    leftovers = [
        p.name
        for root in ("figures", "reports", "build/executed")
        for p in (tmp_path / root).iterdir()
        if ".tmp-" in p.name
    ]
    assert leftovers == []


@pytest.mark.parametrize("name", ["01_dataset_overview"])
def test_a_failed_run_removes_the_report_of_an_earlier_run(built_reports, name, tmp_path):
    # What an earlier successful run left (the session's run of every notebook, conftest.built_runs), copied.
    roots = dict(figures_root=tmp_path / "figures", reports_root=tmp_path / "reports", build_root=tmp_path / "build")
    shutil.copytree(built_reports / "figures" / name, tmp_path / "figures" / name)
    (tmp_path / "reports").mkdir()
    shutil.copy2(built_reports / "reports" / f"{name}.html", tmp_path / "reports")
    assert (tmp_path / "reports" / f"{name}.html").is_file()
    with pytest.raises(NotebookFailed):
        run.run_notebook("01_dataset_overview", db_path=tmp_path / "missing.duckdb", **roots)
    assert not (tmp_path / "reports" / "01_dataset_overview.html").exists()


def test_the_reproduction_report_is_not_run_after_a_report_whose_figures_it_reads_failed(tmp_path, capsys):
    """Issue 34: `make figures` keeps going past a failed notebook (`run-notebook --keep-going`). The
    reproduction report reads other reports' figures: after one of them failed it is not run on the
    figures of an older run, but noted as failed in turn; the index marks both, each with its reason on
    one line, and ends with exit status 2 naming them."""
    out = tmp_path / "out"
    roots = run.output_roots(out)
    failure = "1 problem in the input:\n  questions.csv, line 4, field 'language': unknown language 'Xyzzyish'"
    run.record_failure("03_surface_quality", failure, **roots)
    runs = [
        "run-notebook",
        "08_paper_reproduction",
        f"--db={tmp_path / 'missing.duckdb'}",
        f"--out={out}",
        "--figures-of=01_dataset_overview,03_surface_quality",
    ]
    assert cli.main(runs) == 2  # without --keep-going, a failure is the command's
    capsys.readouterr()
    assert cli.main([*runs, "--keep-going"]) == 0
    said = capsys.readouterr().err
    assert (
        "08_paper_reproduction was not run: it reads the figures of 03_surface_quality, whose last run failed" in said
    )
    notes = run.failures(roots["build_root"])
    assert notes["03_surface_quality"]["reason"] == (
        "1 problem in the input: questions.csv, line 4, field 'language': unknown language 'Xyzzyish'"
    )
    assert sorted(notes) == ["03_surface_quality", "08_paper_reproduction"]
    index_args = ["index", "--reports", str(roots["reports_root"]), "--figures", str(roots["figures_root"])]
    assert cli.main([*index_args, "--build", str(roots["build_root"])]) == 2
    said = capsys.readouterr().err
    assert "error: 2 reports failed (the index marks them" in said
    assert "  03_surface_quality: 1 problem in the input: questions.csv, line 4" in said
    page = (roots["reports_root"] / "index.html").read_text(encoding="utf-8")
    assert page.count('<span class="failed-mark">failed</span>') == 2
    assert "unknown language &#x27;Xyzzyish&#x27;" in page or "unknown language 'Xyzzyish'" in page
    # a name that is no notebook is refused, not noted: `../x` would note it outside the folder
    assert cli.main(["run-notebook", "../x", f"--out={out}", "--keep-going"]) == 2
    assert "no notebook '../x'" in capsys.readouterr().err
    assert sorted(run.failures(roots["build_root"])) == ["03_surface_quality", "08_paper_reproduction"]
    assert not list(out.glob("*.failure.json"))
    # once a report's notebook runs again and passes, its note goes (run_notebook removes it)
    run.failure_note(roots["build_root"], "03_surface_quality").unlink()
    run.failure_note(roots["build_root"], "08_paper_reproduction").unlink()
    assert cli.main([*index_args, "--build", str(roots["build_root"])]) == 0


def test_the_save_functions_record_what_they_write(tmp_path, monkeypatch):
    """The run's manifest comes from the save functions themselves (`core.outputs`), not from a look at
    the folder afterwards: each file they write is recorded, in order, with the function that wrote it."""
    log = tmp_path / "outputs.jsonl"
    monkeypatch.setenv(outputs.ENV, str(log))
    export.save_table(pl.DataFrame({"a": [1]}), tmp_path / "out", "first")
    (tmp_path / "out" / "by_hand.csv").write_text("a\n1\n")  # written by no save function
    export.save_table(pl.DataFrame({"a": [2]}), tmp_path / "out", "second")
    recorded = outputs.read(log)
    assert [(Path(r["path"]).name, r["by"]) for r in recorded] == [
        ("first.csv", "save_table"),
        ("second.csv", "save_table"),
    ]
    monkeypatch.delenv(outputs.ENV)
    export.save_table(pl.DataFrame({"a": [3]}), tmp_path / "out", "third")  # outside a run: nothing recorded
    assert len(outputs.read(log)) == 2


def test_a_file_no_save_function_recorded_fails_the_run(tmp_path):
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "table.csv").write_text("a\n1\n")
    (staging / "by_hand.csv").write_text("a\n1\n")
    record = {"database": "x.duckdb", "database_sha256": "0" * 64, "release": None}
    recorded = [{"path": str(staging / "table.csv"), "by": "save_table"}]
    with pytest.raises(Failure, match=r"not recorded \['by_hand.csv'\]"):
        run.write_manifest(tmp_path / "m.json", "nb", recorded, staging, tmp_path / "figures", {}, record)
    (staging / "by_hand.csv").unlink()
    run.write_manifest(tmp_path / "m.json", "nb", recorded, staging, tmp_path / "figures", {"n": 1}, record)
    manifest = json.loads((tmp_path / "m.json").read_text())
    assert manifest["files"] == [
        {"name": "table.csv", "bytes": 4, "sha256": files.sha256(staging / "table.csv"), "written_by": "save_table"}
    ]
    assert manifest["parameters"] == {"n": 1}
