"""The claims registry and `make check-paper`: printed numbers, statuses, registry errors that name the file,
line and field, missing figures named by claim, and the check on the figures the test suite itself produces."""

import shutil
from pathlib import Path

import polars as pl
import pytest

from analysis import cli
from analysis.analyses import paper_beside, paper_check, release_version
from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import paper
from analysis.io import release as release_files
from analysis.reporting import provenance, run
from analysis.viz import claims as claims_view

HEADER = ",".join(paper.COLUMNS)


# ---------------------------------------------------------------- printed numbers and statuses


@pytest.mark.parametrize(
    "text, value, decimals, unit",
    [
        ("98.67", 98.67, 2, 0.01),
        ("41.4%", 41.4, 1, 0.1),
        ("1,173", 1173, 0, 1),
        ("∼64k", 64000, 0, 1000),
        ("154K", 154000, 0, 1000),
        ("51.7K", 51700, 1, 100),
        ("1.38B", 1.38e9, 2, 1e7),
        (">90%", 90, 0, 1),
        ("−0.5", -0.5, 1, 0.1),
        ("0.230", 0.23, 3, 0.001),
        ("<.001", 0.001, 3, 0.001),
        ("<1%", 1, 0, 1),
    ],
)
def test_printed_numbers(text, value, decimals, unit):
    assert paper.printed_number(text) == pytest.approx(value)
    assert paper.printed_decimals(text) == decimals
    assert paper.printed_unit(text) == pytest.approx(unit)


@pytest.mark.parametrize("text", ["", "N/A", "12-13M", "1,17", "p<.001", "12 %", ".", "<."])
def test_what_is_not_a_printed_number(text):
    assert paper.printed_decimals(text) == -1
    with pytest.raises(ValueError):
        paper.printed_number(text)


@pytest.mark.parametrize(
    "printed, value, expected",
    [
        ("2105.0", 2105.047, "exact"),
        ("0.779", 0.7796, "within rounding"),  # the paper cut 0.7796 instead of rounding it
        ("0.17", 0.1777, "within rounding"),
        ("0.188", 0.1831, "differs"),
        ("29", 28, "differs"),  # a count off by one is not rounding
        ("6.12", 6.115, "exact"),  # half-way: either way of rounding a tie is the printed number
        ("6.11", 6.115, "exact"),
        ("∼64k", 63757, "exact"),
        ("∼154K", 154725, "within rounding"),
        ("55k", 44414, "differs"),
        ("41.4%", 41.44, "exact"),
        ("41.4%", 41.46, "within rounding"),
        ("1,173", 1173, "exact"),
        # A bound holds or it does not, however close: 1.02% is not less than 1%.
        ("<1%", 0.88, "exact"),
        ("<1%", 1.02, "differs"),
        ("<1%", 1.0, "differs"),
        ("<.001", 0.0009, "exact"),
        ("<.001", 0.0078, "differs"),
        (">90%", 90.0, "differs"),
        (">90%", 90.5, "exact"),
        ("≥90%", 90.0, "exact"),
        ("≤5", 5.0, "exact"),
    ],
)
def test_status_compares_at_the_printed_precision(printed, value, expected):
    assert paper_check.status(printed, value) == expected


def test_suite_value_is_printed_as_the_paper_prints():
    assert paper_check.suite_text(63757, 0, "∼64k") == "64k"
    assert paper_check.suite_text(44414, 0, "55,702") == "44,414"
    assert paper_check.suite_text(41.449, 1, "41.4%") == "41.4%"
    assert paper_check.suite_text(None, 1, "41.4%") is None
    # Beside a bound, enough digits to see on which side the value is.
    assert paper_check.suite_text(1.0215, 0, "<1%") == "1.02%"
    assert paper_check.suite_text(0.0007770, 3, "<.001") == "0.000777"


# ---------------------------------------------------------------- the registry's errors


def claim_row(**fields) -> str:
    row = {
        "claim_id": "calmqa/table4/english/n",
        "paper": "calmqa",
        "item": "Table 4",
        "row": "English",
        "column": "# Q",
        "printed": "78",
        "decimals": "0",
        "kind": "reproduced",
        "source": "01_dataset_overview/table4_question_lengths",
        "match": "language=English;question_type=specific",
        "value_column": "n_questions",
        "expect": "exact",
        "reason": "",
        **fields,
    }
    return ",".join(f'"{row[c]}"' if "," in row[c] else row[c] for c in paper.COLUMNS)


def write_claims(folder: Path, name: str, *rows: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "fields, line, field, message",
    [
        ({"paper": "calmqqa"}, 2, "paper", "is 'calmqqa'; expected one of calmqa, nativqa"),
        ({"expect": "close"}, 2, "expect", "is 'close'"),
        ({"kind": "copied"}, 2, "kind", "is 'copied'; expected one of reproduced, derived, transcribed"),
        ({"kind": ""}, 2, "kind", "is empty"),
        (
            {"printed": "<80", "expect": "within rounding"},
            2,
            "expect",
            "is `within rounding`, but '<80' is a bound",
        ),
        ({"printed": "N/A"}, 2, "printed", "expected a number as the paper prints it"),
        ({"decimals": "1"}, 2, "decimals", "is '1', but '78' has 0"),
        ({"expect": "differs"}, 2, "reason", "is empty; a claim expected to be `differs` says why"),
        ({"source": ""}, 2, "source", "is empty; a reproducible claim names where the suite's value is"),
        ({"source": "table4_question_lengths"}, 2, "source", "expected NOTEBOOK/CSV-STEM"),
        ({"match": "language English"}, 2, "match", "expected column=value pairs joined by ';'"),
        (
            {"expect": "not in the release", "reason": "never released"},
            2,
            "source",
            "a claim not in the release has no suite value",
        ),
        ({"claim_id": "nativqa/table4/english/n"}, 2, "claim_id", "does not start with its paper, 'calmqa'/"),
    ],
)
def test_a_bad_claim_is_named_by_file_line_and_field(tmp_path, fields, line, field, message):
    path = write_claims(tmp_path, "calmqa-table4.csv", claim_row(**fields))
    with pytest.raises(InputError) as caught:
        paper.load_claims(tmp_path)
    text = str(caught.value)
    assert f"{path}, line {line} ({fields.get('claim_id', 'calmqa/table4/english/n')}), field '{field}': " in text
    assert message in text


def test_every_problem_of_every_file_at_once(tmp_path):
    write_claims(tmp_path, "a.csv", claim_row(), claim_row(claim_id="calmqa/table4/english/m", printed="7.5"))
    write_claims(tmp_path, "b.csv", claim_row())  # the same id as a.csv line 2
    with pytest.raises(InputError) as caught:
        paper.load_claims(tmp_path)
    text = str(caught.value)
    assert "2 problems" in text
    assert "a.csv, line 3 (calmqa/table4/english/m), field 'decimals'" in text
    assert "b.csv, line 2 (calmqa/table4/english/n), field 'claim_id': is also the id of a.csv line 2" in text


def test_an_empty_registry_is_an_error(tmp_path):
    with pytest.raises(InputError, match="holds no claims file"):
        paper.load_claims(tmp_path)


def test_the_real_registry_is_valid_and_names_real_notebooks():
    claims = paper.load_claims()
    notebooks = {p.stem for p in paths.NOTEBOOKS.glob("*.ipynb")}
    sources = claims.filter(pl.col("source") != "")["source"].str.split("/").list.first().unique().to_list()
    assert set(sources) <= notebooks - {run.REPRODUCTION_NOTEBOOK}
    assert set(claims["paper"]) == set(paper.PAPERS)
    # Every number of the papers' text is registered (issue 25 counted 58 that were not), of every kind.
    assert claims.height >= 940
    assert set(claims["kind"]) == set(paper.KINDS)
    # every file holds one paper's claims and is named after it
    for file, papers in claims.group_by("file").agg(pl.col("paper").unique()).iter_rows():
        assert papers == [file.split("-")[0]], file


# ---------------------------------------------------------------- the check on hand-made figures


@pytest.fixture
def small(tmp_path) -> tuple[Path, Path]:
    claims = write_claims(
        tmp_path / "claims",
        "calmqa-table4.csv",
        claim_row(),
        claim_row(
            claim_id="calmqa/table4/english/mean",
            column="Q. Bytes avg",
            printed="275.7",
            decimals="1",
            value_column="question_bytes_mean",
        ),
        claim_row(
            claim_id="calmqa/table4/arabic/n",
            row="Arabic",
            printed="86",
            match="language=Arabic;question_type=specific",
            expect="differs",
            reason="one question fewer was released",
        ),
        claim_row(
            claim_id="calmqa/section3/auto",
            item="Section 3",
            printed="100",
            source="",
            match="",
            value_column="",
            expect="not in the release",
            reason="never released",
        ),
    ).parent
    figures = tmp_path / "figures" / "01_dataset_overview"
    figures.mkdir(parents=True)
    (figures / "table4_question_lengths.csv").write_text(
        "language,question_type,n_questions,question_bytes_mean\n"
        "English,specific,78,275.72\nArabic,specific,85,74.3\nEnglish,agnostic,51,67.1\n",
        encoding="utf-8",
    )
    return claims, tmp_path / "figures"


def test_check_gives_each_claim_its_status(small):
    claims, figures = small
    results = paper_check.check(paper.load_claims(claims), figures)
    assert results.select("claim_id", "status", "ok").rows() == [
        ("calmqa/table4/english/n", "exact", True),
        ("calmqa/table4/english/mean", "exact", True),
        ("calmqa/table4/arabic/n", "differs", True),
        ("calmqa/section3/auto", "not in the release", True),
    ]
    assert paper_check.summary_line(results, "calmqa") == (
        "CaLMQA, 4 printed numbers: 4 to reproduce from the data (2 exact, 1 differs, 1 not in the release)"
    )
    assert paper_check.counts(results, ["paper", "item"]).rows() == [
        ("calmqa", "Section 3", 1, 0, 0, 0, 1, 0),
        ("calmqa", "Table 4", 3, 2, 0, 1, 0, 0),
    ]


def test_the_counts_keep_the_kinds_apart(small):
    claims, figures = small
    kinds = paper.load_claims(claims).with_columns(
        kind=pl.when(pl.col("claim_id") == "calmqa/table4/english/mean").then(pl.lit("transcribed")).otherwise("kind")
    )
    results = paper_check.check(kinds, figures)
    assert paper_check.counts(results, ["paper", "kind"]).rows() == [
        ("calmqa", "reproduced", 3, 1, 0, 1, 1, 0),
        ("calmqa", "transcribed", 1, 1, 0, 0, 0, 0),
    ]
    assert paper_check.summary_line(results, "calmqa") == (
        "CaLMQA, 4 printed numbers: 3 to reproduce from the data (1 exact, 1 differs, 1 not in the "
        "release); 1 printed inputs checked against their transcription (1 exact)"
    )
    # The README's counts are the registry's expectations, which the check finds when it passes.
    expected = paper_check.readme_counts(paper_check.expected_results(kinds))
    assert expected == paper_check.readme_counts(results)
    assert "| CaLMQA | transcribed | 1 | 0 | 0 | 0 |" in expected


def test_check_passes_and_fails(small, capsys):
    claims, figures = small
    assert cli.main(["check-paper", "--claims", str(claims), "--figures", str(figures)]) == 0
    out = capsys.readouterr().out
    assert "CaLMQA, 4 printed numbers: 4 to reproduce from the data (2 exact" in out and "Table 4" in out
    assert "By paper and kind" in out
    csv = figures / "01_dataset_overview" / "table4_question_lengths.csv"
    csv.write_text(csv.read_text().replace("English,specific,78,", "English,specific,79,"), encoding="utf-8")
    assert cli.main(["check-paper", "--claims", str(claims), "--figures", str(figures)]) == 1
    err = capsys.readouterr().err
    assert "calmqa-table4.csv calmqa/table4/english/n: printed 78, expected exact; the suite has 79: differs" in err


def test_a_difference_that_disappears_fails_too(small, capsys):
    claims, figures = small
    csv = figures / "01_dataset_overview" / "table4_question_lengths.csv"
    csv.write_text(csv.read_text().replace("Arabic,specific,85,", "Arabic,specific,86,"), encoding="utf-8")
    assert cli.main(["check-paper", "--claims", str(claims), "--figures", str(figures)]) == 1
    assert "calmqa/table4/arabic/n: printed 86, expected differs; the suite has 86: exact" in capsys.readouterr().err


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            lambda csv: csv.unlink(),
            "table4_question_lengths.csv does not exist: run `make figures` (notebook 01_dataset_overview writes it)",
        ),
        (lambda csv: csv.write_text("language,question_type,n\nEnglish,specific,78\n"), "has no column 'n_questions'"),
        (
            lambda csv: csv.write_text(
                "language,question_type,n_questions,question_bytes_mean\nArabic,specific,85,1\n"
            ),
            "0 rows of 01_dataset_overview/table4_question_lengths.csv match language=English;question_type=specific",
        ),
        (
            lambda csv: csv.write_text(
                "language,question_type,n_questions,question_bytes_mean\nEnglish,specific,,1\nArabic,specific,85,1\n"
            ),
            "the 'n_questions' of the row language=English;question_type=specific is empty",
        ),
    ],
)
def test_a_missing_value_fails_naming_the_claim(small, capsys, change, problem):
    claims, figures = small
    change(figures / "01_dataset_overview" / "table4_question_lengths.csv")
    assert cli.main(["check-paper", "--claims", str(claims), "--figures", str(figures)]) == 1
    err = capsys.readouterr().err
    assert "calmqa-table4.csv calmqa/table4/english/n: printed 78, expected exact; " in err and problem in err


def test_an_invalid_registry_stops_the_check(tmp_path, capsys):
    write_claims(tmp_path, "calmqa-x.csv", claim_row(expect="close"))
    assert cli.main(["check-paper", "--claims", str(tmp_path), "--figures", str(tmp_path)]) == 2
    assert "field 'expect'" in capsys.readouterr().err


def test_report_table_puts_failures_then_differences_first(small):
    claims, figures = small
    (figures / "01_dataset_overview" / "table4_question_lengths.csv").unlink()
    table = paper_check.report_table(paper_check.check(paper.load_claims(claims), figures))
    assert table.select("claim_id", "status").rows()[:2] == [
        ("calmqa/table4/english/n", "no value"),
        ("calmqa/table4/english/mean", "no value"),
    ]
    assert "the claim's `source`" in table["note"][0]
    # The report folds the claims by paper item: the failures show with the status they should have had.
    page = claims_view.claims_browser(table, {}, "claims").html
    assert "no value (expected: exact)" in page and "calmqa-failing" in page
    assert "the claim&#x27;s <code>source</code>" in page


# ---------------------------------------------------------------- the reproduction the test suite produces


def test_the_suite_reproduces_every_claim_as_registered(built_reports, capsys):
    assert cli.main(["check-paper", "--figures", str(built_reports / "figures")]) == 0, capsys.readouterr().err
    # The report lists every registered claim, and its summary is the check's.
    listed = pl.read_csv(built_reports / "figures" / run.REPRODUCTION_NOTEBOOK / "claims.csv", infer_schema=False)
    claims = paper.load_claims()
    assert sorted(listed["claim_id"]) == sorted(claims["claim_id"])
    record = provenance.read(built_reports / "reports" / f"{run.REPRODUCTION_NOTEBOOK}.html")
    results = paper_check.check(claims, built_reports / "figures")
    assert paper_check.summary_line(results, "calmqa") in record["summary"]


def test_changing_one_regenerated_value_fails_the_check(built_reports, tmp_path, capsys):
    figures = tmp_path / "figures"
    shutil.copytree(built_reports / "figures", figures)
    csv = figures / "01_dataset_overview" / "table4_question_lengths.csv"
    table = pl.read_csv(csv)
    arabic = (pl.col("language") == "Arabic") & (pl.col("question_type") == "specific")
    assert table.filter(arabic)["n_questions"].item() == 85
    table.with_columns(n_questions=pl.when(arabic).then(86).otherwise(pl.col("n_questions"))).write_csv(csv)
    assert cli.main(["check-paper", "--figures", str(figures)]) == 1
    err = capsys.readouterr().err
    assert "1 claim does not have its expected status" in err
    assert "calmqa/table4/arabic/culturally-specific-n-q: printed 85, expected exact; the suite has 86: differs" in err


# ---------------------------------------------------------------- the paper's value beside the suite's in a report


def test_beside_shows_each_number_of_the_tables_with_its_status_and_reason(small):
    claims, _ = small
    registry = paper.load_claims(claims)
    table = pl.DataFrame(
        {
            "language": ["English", "Arabic"],
            "question_type": ["specific", "specific"],
            "n_questions": [78, 85],
            "question_bytes_mean": [275.72, 74.3],
        }
    )
    pinned = release_version.Release("abc", 49, ())
    shown = paper_beside.beside(registry, {"table4_question_lengths": table}, pinned)
    # Every claim of the table, the one that differs first; none of another table, none not in the release.
    assert shown.select("row", "paper", "suite", "status").rows() == [
        ("Arabic", "86", "85", "differs"),
        ("English", "78", "78", "exact"),
        ("English", "275.7", "275.7", "exact"),
    ]
    assert shown["note"][0] == "one question fewer was released"
    assert paper_beside.counts_phrase(shown) == "3 printed numbers: 2 exact, 1 differs"
    # A value that no longer has the registry's status says so.
    changed = paper_beside.beside(registry, {"table4_question_lengths": table.with_columns(n_questions=86)}, pinned)
    assert changed.filter(pl.col("row") == "Arabic")["note"][0] == (
        "the registry expects differs: one question fewer was released"
    )
    # The reasons of numbers computed from the release describe the pinned one: not shown for another.
    other = release_version.Release("def", 49, ("all_ratings.csv",))
    assert paper_beside.beside(registry, {"table4_question_lengths": table}, other)["note"].to_list() == [None] * 3
    derived = registry.with_columns(kind=pl.lit("derived"))
    assert paper_beside.beside(derived, {"table4_question_lengths": table}, other)["note"][0] == (
        "one question fewer was released"
    )
    assert paper_beside.beside(registry, {"other_table": table}, pinned).is_empty()


def test_the_reproduction_report_shows_the_reasons_of_the_pinned_release_only(small):
    claims, figures = small
    results = paper_check.check(paper.load_claims(claims), figures)
    notes = dict(paper_check.report_table(results).select("claim_id", "note").iter_rows())
    assert notes["calmqa/table4/arabic/n"] == "one question fewer was released"
    notes = dict(paper_check.report_table(results, pinned=False).select("claim_id", "note").iter_rows())
    assert notes["calmqa/table4/arabic/n"] is None
    assert notes["calmqa/section3/auto"] == "never released"  # why it is not in any release


def test_a_release_version_is_named_by_its_files():
    checksums = pl.DataFrame({"file": ["a.json.gz", "b.csv"], "sha256": ["1" * 64, "2" * 64]})
    plain = checksums.with_columns(pl.col("file").str.replace(r"\.gz$", ""))
    assert release_files.fingerprint(checksums) == release_files.fingerprint(plain)
    assert release_files.fingerprint(checksums) != release_files.fingerprint(
        checksums.reverse().with_columns(sha256=pl.Series(["3" * 64, "1" * 64]))
    )
    manifest = [
        release_files.ReleaseFile("a.json", "x", "c", "1" * 64, 1),
        release_files.ReleaseFile("b.csv", "x", "c", "9" * 64, 1),
    ]
    assert release_files.differences(checksums, manifest) == ["b.csv"]
    assert release_files.differences(plain.with_columns(sha256=pl.Series(["1" * 64, "9" * 64])), manifest) == []
