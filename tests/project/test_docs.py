"""The generated reference pages of docs/ are current, and the README is a front door that tells the truth:
short, every file it names exists, and its map from paper items to outputs names files the notebooks write."""

import json
import re

import pytest

from analysis.core import paths
from analysis.io.paper import load_claims
from analysis.reporting import docs

README = paths.ROOT / "README.md"


@pytest.mark.parametrize("name", sorted(set(docs.PAGES) - {"notebooks.md"}))
def test_generated_page_is_current(name):
    page = paths.DOCS / name
    assert page.is_file(), f"{page} is missing: run `make docs`"
    assert page.read_text(encoding="utf-8") == docs.PAGES[name](), f"{page} is stale: run `make docs`"


def test_the_notebooks_page_is_current_with_the_runs(built_reports):
    """docs/notebooks.md lists the files the runs of the notebooks wrote, from their manifests: those of
    the suite's own runs of every notebook from the database (`built_runs`)."""
    page = paths.DOCS / "notebooks.md"
    expected = docs.notebooks_page(manifests_folder=built_reports / "build" / "executed")
    assert page.read_text(encoding="utf-8") == expected, f"{page} is stale: run `make figures` and `make docs`"


def _manifest(name: str, files: list[tuple[str, str]]) -> dict:
    entries = [{"name": file, "bytes": 1, "sha256": "0" * 64, "written_by": by} for file, by in files]
    return {"notebook": name, "parameters": {}, "release": None, "files": entries}


def test_the_notebooks_page_lists_the_files_of_the_manifests(tmp_path):
    """Each notebook's files are those its manifest lists, grouped by figure or table, whatever its code
    says: a file the manifest does not name is not listed."""
    from analysis.reporting import run

    for name in run.notebook_names():
        files = [(f"{name}_only.csv", "save_table"), (f"{name}_only.tex", "tables.save")]
        if name == "02_topic_similarity":
            files = [
                ("planted.csv", "save_table"),
                ("planted.svg", "save_figure"),
                ("planted.png", "save_figure"),
                ("planted.pdf", "save_figure"),
                ("most_similar_pairs.csv", "save_table"),
            ]
        (tmp_path / f"{name}.manifest.json").write_text(json.dumps(_manifest(name, files)))
    page = docs.notebooks_page(manifests_folder=tmp_path)
    entry = page.split("## `02_topic_similarity`")[1].split("\n## ")[0]
    listed = [line for line in entry.splitlines() if line.startswith("- `")]
    assert listed[0] == "- `planted` (figure: `.csv`, `.svg`, `.png`, `.pdf`)"
    assert listed[1].startswith("- `most_similar_pairs` (table: `.csv`): ")  # with its caption
    assert len(listed) == 2 and "topic_similarity`" not in entry.split("Writes into")[1]
    assert "- `01_dataset_overview_only` (table: `.csv`, `.tex`)" in page


def test_docs_without_the_manifests_say_each_notebook_s_files_need_make_figures(tmp_path):
    """Before `make figures`, `make docs` works: a run notebook's entry says its files need `make figures`,
    the explorer's (never run) says nothing of runs, and the note names every notebook."""
    page = docs.notebooks_page(manifests_folder=tmp_path)
    entries = {e.split("`")[1]: e for e in page.split("\n## ")[1:]}
    run = sorted(p.stem for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not p.stem.startswith("00_"))
    assert run and all("run `make figures`, then `make docs`" in entries[name] for name in run)
    assert all("Writes into" not in entry for entry in entries.values())
    assert "then `make docs`" not in entries["00_explore"]
    note = docs.notebooks_note(manifests_folder=tmp_path)
    assert f"no manifest of the runs of {len(run)} notebook(s)" in note and all(name in note for name in run)


def test_docs_without_the_manifests_keep_the_lists_of_files_the_page_had(tmp_path):
    """On a fresh clone (no run), `make docs` leaves docs/notebooks.md as committed: each list of files is
    kept from the page it replaces (tests/project/test_docs.py checks the committed lists against real runs)."""
    committed = (paths.DOCS / "notebooks.md").read_text(encoding="utf-8")
    assert docs.notebooks_page(manifests_folder=tmp_path, previous=committed) == committed
    listed = docs.listed_files(committed)
    assert listed and "Writes into" in "".join(listed.values())
    note = docs.notebooks_note(manifests_folder=tmp_path, previous=committed)
    assert "are kept from the page as it was" in note and "not listed yet" not in note


def test_readme_is_a_front_door_under_12_kb():
    assert len(README.read_bytes()) < 12 * 1024


def test_every_path_the_readme_names_exists():
    text = README.read_text(encoding="utf-8")
    named = set(
        re.findall(r"`((?:docs|data|scripts|analysis|notebooks)/[\w./-]+|[\w-]+\.(?:md|yml|toml|csv|cff))`", text)
    )
    named |= {"LICENSE"} if "`LICENSE`" in text else set()
    # a bare file name of a study folder (`study.toml`, `answers.csv`...) is the example study's
    example = paths.ROOT / "data" / "examples" / "study"
    missing = [
        p
        for p in named
        if not (paths.ROOT / p).exists()
        and not ("/" not in p and (example / p).exists())
        and not p.startswith("data/calmqa.duckdb-imports")
    ]
    assert not missing, f"README names files that do not exist: {missing}"


@pytest.mark.slow
def test_readme_names_every_make_target_it_uses():
    import subprocess

    listed = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=paths.ROOT, capture_output=True, text=True, check=True
    ).stdout
    used = set(re.findall(r"make ([a-z][a-z-]*[a-z])(?![\w*-])", README.read_text(encoding="utf-8")))
    assert not [t for t in used if f"make {t} " not in listed], used


def test_readme_counts_of_the_paper_check_are_written_from_the_registry():
    """The README's counts of the claims by paper, kind and status are the ones `make docs` writes from
    data/paper/claims: those `make check-paper` finds when it passes."""
    text = README.read_text(encoding="utf-8")
    assert docs.readme_with_counts(text) == text, "the README's claim counts are stale: run `make docs`"
    block = text.split(docs.CLAIM_COUNTS_BEGIN)[1].split(docs.CLAIM_COUNTS_END)[0]
    claims = load_claims()
    rows = re.findall(r"^\| (CaLMQA|NativQA) \| (\w+) ((?:\| [\d,]+ )+)\|", block, re.MULTILINE)
    claims_by_kind = {(p.lower(), k): sum(int(n.replace(",", "")) for n in ns.split("|")[1:]) for p, k, ns in rows}
    assert claims_by_kind == {
        (r["paper"], r["kind"]): r["len"] for r in claims.group_by("paper", "kind").len().iter_rows(named=True)
    }


def test_the_readme_counts_fail_when_the_registry_changes(tmp_path):
    stale = README.read_text(encoding="utf-8").replace("| CaLMQA | reproduced | ", "| CaLMQA | reproduced | 1")
    assert stale != README.read_text(encoding="utf-8")
    assert docs.readme_with_counts(stale) != stale


def _map_rows() -> list[tuple[str, list[str]]]:
    """(notebook, output names) of each row of the README's map that needs no imported data."""
    text = README.read_text(encoding="utf-8")
    rows = []
    for line in text.split("## Where each paper item is", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`") or "need" in cells[0]:
            continue
        rows.append((cells[1].strip("`"), re.findall(r"`([\w{}]+)`", cells[2])))
    return rows


def test_readme_map_names_what_the_notebooks_write(built_reports):
    rows = _map_rows()
    assert len(rows) >= 10
    for notebook, names in rows:
        for name in names:
            assert list((built_reports / "figures" / notebook).glob(f"{name}.*")), (
                f"README maps a paper item to {notebook}/{name}, which the notebook does not write"
            )


CONTRIBUTING = paths.ROOT / "CONTRIBUTING.md"


def test_every_path_and_name_the_contributing_guides_give_exists():
    """CONTRIBUTING.md's guides name real files (a name with `<...>` is a pattern) and real functions,
    classes and constants of the package (`module.name`, for a module of `analysis/`)."""
    import importlib

    text = CONTRIBUTING.read_text(encoding="utf-8")
    named = {p.rstrip("/") for p in re.findall(r"`((?:docs|data|scripts|analysis|notebooks|tests)/[\w./-]+)`", text)}
    missing = [p for p in named if not (paths.ROOT / p).exists()]
    assert not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"
    modules: dict[str, list[str]] = {}
    for path in (paths.ROOT / "analysis").rglob("*.py"):
        module = ".".join(path.relative_to(paths.ROOT).with_suffix("").parts)
        modules.setdefault(path.stem, []).append(module)
    names = set(re.findall(r"`(?:analysis\.)?((?:\w+\.)?\w+)\.(\w+)`", text))
    files = {"csv", "jsonl", "md", "py", "ipynb", "toml", "duckdb", "html"}  # `answers.csv`: a file's name
    checked = [(m, n) for m, n in names if m.split(".")[-1] in modules and n not in files]
    unknown = [
        f"{m}.{n}"
        for m, n in checked
        if not any(hasattr(importlib.import_module(module), n) for module in modules[m.split(".")[-1]])
    ]
    assert len(checked) > 5 and not unknown, f"CONTRIBUTING.md names what the package does not have: {unknown}"
