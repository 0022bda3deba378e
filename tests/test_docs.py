"""The generated reference pages of docs/ are current, and the README is a front door that tells the truth:
short, every file it names exists, and its map from paper items to outputs names files the notebooks write."""

import re

import polars as pl
import pytest

from analysis.core import paths
from analysis.reporting import docs

README = paths.ROOT / "README.md"


@pytest.mark.parametrize("name", sorted(docs.PAGES))
def test_generated_page_is_current(name):
    page = paths.DOCS / name
    assert page.is_file(), f"{page} is missing: run `make docs`"
    assert page.read_text(encoding="utf-8") == docs.PAGES[name](), f"{page} is stale: run `make docs`"


def test_readme_is_a_front_door_under_12_kb():
    assert len(README.read_bytes()) < 12 * 1024


def test_every_path_the_readme_names_exists():
    text = README.read_text(encoding="utf-8")
    named = set(
        re.findall(r"`((?:docs|data|scripts|analysis|notebooks)/[\w./-]+|[\w-]+\.(?:md|yml|toml|csv|cff))`", text)
    )
    named |= {"LICENSE"} if "`LICENSE`" in text else set()
    missing = [p for p in named if not (paths.ROOT / p).exists() and not p.startswith("data/calmqa.duckdb-imports")]
    assert not missing, f"README names files that do not exist: {missing}"


@pytest.mark.slow
def test_readme_names_every_make_target_it_uses():
    import subprocess

    listed = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=paths.ROOT, capture_output=True, text=True, check=True
    ).stdout
    used = set(re.findall(r"make ([a-z][a-z-]*[a-z])(?![\w*-])", README.read_text(encoding="utf-8")))
    assert not [t for t in used if f"make {t} " not in listed], used


def test_readme_counts_of_the_paper_check_are_the_registrys():
    """The README's counts of claims by expected status are those of data/paper/claims."""
    from analysis.io.paper import load_claims

    text = " ".join(README.read_text(encoding="utf-8").split())
    counts = load_claims().group_by("paper", "expect").len()
    stated = {
        "calmqa": re.search(r"CaLMQA (\d+ of \d+ exact[^;]*);", text),
        "nativqa": re.search(r"NativQA (\d+ of \d+ exact[^.]*)\.", text),
    }
    for paper, match in stated.items():
        assert match, f"the README gives no counts of {paper}'s claims"
        numbers = dict(
            (label, int(n))
            for n, label in re.findall(
                r"(\d+)(?: of \d+)? (exact|within rounding|that differ|not in the release)", match.group(1)
            )
        )
        registry = {row["expect"]: row["len"] for row in counts.filter(pl.col("paper") == paper).iter_rows(named=True)}
        assert {k.replace("that differ", "differs"): v for k, v in numbers.items()} == registry, paper
        total = re.search(r"of (\d+) exact", match.group(1))
        assert total and int(total.group(1)) == sum(registry.values()), paper


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
