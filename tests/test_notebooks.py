import json
import re
import subprocess
import sys

import polars as pl
import pytest

from analysis.analyses import overview
from analysis.core import paths
from analysis.core.errors import NotebookFailed
from analysis.reporting import run

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


def test_dataset_overview_end_to_end(database, tmp_path, con):
    html = run.run_notebook(
        "01_dataset_overview",
        db_path=database,
        figures_root=tmp_path / "figures",
        reports_root=tmp_path / "reports",
        build_root=tmp_path / "build",
    )
    out = tmp_path / "figures" / "01_dataset_overview"
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


def test_a_failed_run_removes_the_report_of_an_earlier_run(database, tmp_path):
    roots = dict(figures_root=tmp_path / "figures", reports_root=tmp_path / "reports", build_root=tmp_path / "build")
    run.run_notebook("01_dataset_overview", db_path=database, **roots)
    with pytest.raises(NotebookFailed):
        run.run_notebook("01_dataset_overview", db_path=tmp_path / "missing.duckdb", **roots)
    assert not (tmp_path / "reports" / "01_dataset_overview.html").exists()
