"""The report tables (analysis/viz/tables.py, from the specs of analysis/viz/table_specs.py): what a reader
sees of a frame, and that every spec belongs to a table a notebook shows."""

import re

import polars as pl
import pytest

from analysis.core import paths
from analysis.viz import table_specs, tables


def _cells(table: tables.Table) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", table.html, re.DOTALL)]


def test_a_frame_is_shown_for_people():
    frame = pl.DataFrame(
        {
            "model": ["claude-3-opus", "GPT-4o"],
            "question_type": ["specific", "agnostic"],
            "pct_correct_language": [97.91666, None],
            "ok": [True, False],
            "n_answers": [1278, 12345],
            "text": ["<script>alert(1)</script>", ""],
        }
    )
    table = tables.show(frame, "rates_by_model")
    cells = _cells(table)
    assert "Claude 3 Opus" in table.html and "claude-3-opus" not in table.html  # display names, grouped rows
    assert "97.9" in cells and table_specs.MISSING in cells  # fixed decimals; a dash for a missing value
    assert {"yes", "no"} <= set(cells) and "12,345" in cells
    assert "culturally specific" in cells and "% correct language" in table.html
    assert not {"None", "null", "true", "false", "NaN"} & set(cells)
    assert "<script>alert" not in table.html and "&lt;script&gt;" in table.html
    assert "shape:" not in table.html and not any(c.startswith('"') for c in cells)
    assert table_specs.SPECS["rates_by_model"].caption in table.html


def test_table4_is_wide_as_in_the_paper():
    frame = pl.DataFrame(
        {
            "resource_level": ["high"] * 4,
            "language": ["Arabic", "Arabic", "English", "English"],
            "question_type": ["specific", "agnostic"] * 2,
            "n_questions": [85, 51, 78, 51],
            "question_bytes_mean": [74.31, 108.7, 275.7, 67.1],
            "question_bytes_std": [61.3, 56.4, 189.0, 31.7],
            "n_human_answers": [85, 0, 78, 51],
            "answer_bytes_mean": [2105.0, None, 674.1, 632.3],
            "answer_bytes_std": [2378.2, None, 475.9, 636.9],
        }
    )
    table = tables.show(frame, "table4_question_lengths")
    assert "Culturally specific" in table.html and "Culturally agnostic" in table.html
    body = table.html.split("<tbody", 1)[1]
    assert len(re.findall(r"<tr>\s*<td", body)) == 2  # a row per language
    assert "74.3" in _cells(table) and "n/a" in _cells(table)


def test_labels_may_name_the_groups_compared():
    frame = pl.DataFrame(
        {
            "model": ["Aya 13B"],
            "n_a": [3],
            "n_b": [4],
            "group_a": ["human-collected"],
            "group_b": ["auto-collected"],
            "p_value": [0.00001],
        }
    )
    table = tables.show(frame, "table14_high_resource")
    assert "Answers: human-collected" in table.html and "Answers: auto-collected" in table.html
    assert "&lt; 0.001" in table.html and "group_a" not in table.html


def test_ks_d_is_shown_only_where_the_ks_test_ran():
    frame = pl.DataFrame(
        {
            "model": ["Aya 13B"],
            "n_a": [3],
            "n_b": [4],
            "group_a": ["human-collected"],
            "group_b": ["auto-collected"],
            "difference": [2.5],
            "ks_d": [None],
            "p_value": [0.5],
        },
        schema_overrides={"ks_d": pl.Float64},
    )
    assert "KS D" not in tables.show(frame, "table14_high_resource").html  # a 0/1 score: Fisher's exact test
    assert "KS D" in tables.show(frame.with_columns(ks_d=pl.lit(0.25)), "table14_high_resource").html


def test_an_empty_table_says_so():
    assert "none" in tables.show(pl.DataFrame({"language": []}, schema={"language": pl.String}), "left_out_groups").html


def test_nothing_is_fetched_from_the_network():
    html = tables.show(pl.DataFrame({"a": [1.5]})).html
    assert "@import" not in html and "http" not in html
    assert (
        tables._offline("<style>@import url('https://fonts.googleapis.com/css2?family=X');p{}</style>")
        == "<style>p{}</style>"
    )


def test_every_spec_is_a_table_a_notebook_shows():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in paths.NOTEBOOKS.glob("*.ipynb"))
    sources += (paths.ROOT / "analysis" / "analyses" / "paper_items.py").read_text(encoding="utf-8")
    # The paper's numbers beside the suite's are shown by `tables.show_beside` in every notebook that has them.
    sources += (
        (paths.ROOT / "analysis" / "viz" / "tables.py").read_text(encoding="utf-8").split("def show_beside", 1)[1]
    )
    unused = [
        name
        for name in table_specs.SPECS
        if not name.startswith("*") and f'\\"{name}\\"' not in sources and f'"{name}"' not in sources
    ]
    assert not unused, f"specs of tables no notebook shows: {unused}"


@pytest.mark.parametrize("name", sorted(n for n in table_specs.SPECS if not n.startswith("*")))
def test_a_spec_labels_only_columns_it_can_have(name):
    spec = table_specs.SPECS[name]
    if spec.wide is not None:
        assert set(spec.wide.values) <= set(spec.labels) | set(table_specs.LABELS)
    for columns in spec.spanners.values():
        assert set(columns) <= set(spec.labels)


def test_latex_is_the_same_table_with_booktabs(tmp_path):
    frame = pl.DataFrame(
        {
            "model": ["claude-3-opus", "GPT-4o"],
            "question_type": ["specific", "agnostic"],
            "pct_correct_language": [97.91666, None],
            "n_answers": [1278, 12345],
            "note": ["50% `x_y` & *more*", None],
        }
    )
    latex = tables.latex(frame, "rates_by_model")
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    # The caption, labels, display names, decimals and groups of the HTML table.
    assert "Surface verdicts per model and question type" in latex and "\\% correct language" in latex
    assert "Claude 3 Opus" in latex and "97.9" in latex and "12,345" in latex and "--" in latex
    assert "50\\% \\texttt{x\\_y} \\& \\emph{more}" not in latex  # `note` is not a Markdown column of this spec
    table = tables.save(frame.drop("note"), tmp_path, "rates_by_model")
    assert (tmp_path / "rates_by_model.csv").is_file()
    assert (tmp_path / "rates_by_model.tex").read_text(encoding="utf-8") == tables.latex(
        frame.drop("note"), "rates_by_model"
    )
    assert table.rows == 2


def test_latex_escapes_text_and_renders_markdown_and_links():
    assert tables.latex_escape("50% of a_b & {c} $5 #1 ~ ^") == (
        "50\\% of a\\_b \\& \\{c\\} \\$5 \\#1 \\textasciitilde{} \\textasciicircum{}"
    )
    assert tables._markdown_latex("`x_y` **b** *c* 5%") == "\\texttt{x\\_y} \\textbf{b} \\emph{c} 5\\%"
    frame = pl.DataFrame(
        {"paper": ["calmqa"], "item": ["Figure 8"], "reason": ["`make` it"], "url": ["https://a/b#A3.F8"]}
    )
    html = tables.show(frame, "items_not_in_release").html
    assert '<a href="https://a/b#A3.F8">Figure 8</a>' in html and "https://a/b" not in html.split("</a>", 1)[1]
    assert "\\href{https://a/b\\#A3.F8}{Figure 8}" in tables.latex(frame, "items_not_in_release")


def test_a_long_table_breaks_across_pages():
    frame = pl.DataFrame({"language": [f"L{i}" for i in range(tables.LONG_TABLE_ROWS + 1)]})
    assert "\\begin{longtable}" in tables.latex(frame, "left_out_groups")
    assert "\\begin{longtable}" not in tables.latex(frame.head(3), "left_out_groups")


def test_beside_the_paper_shows_differences_and_folds_exact_numbers_behind_their_count():
    """As report 08: a number the suite does not reproduce exactly is shown; the exact ones are folded away
    behind a line that counts them, so a long table of agreeing numbers does not lengthen the report."""
    row = dict.fromkeys(("item", "row", "column", "note"), "x")
    frame = pl.DataFrame(
        [
            {**row, "paper": "1.0", "suite": "1.1", "status": "differs"},
            *({**row, "paper": f"{i}", "suite": f"{i}", "status": "exact"} for i in range(5)),
        ]
    )
    html = tables.show_beside(frame).html
    shown, folded = html.split('<details class="calmqa-beside-exact">')
    assert shown.startswith('<details class="calmqa-beside" open>')
    assert "1.1" in shown and "1.1" not in folded
    assert "The 5 exact numbers" in folded
    assert folded.count("<tr") == shown.count("<tr") + 4  # the five exact rows against the one that differs
    # All exact: the whole block folded.
    all_exact = tables.show_beside(frame.filter(pl.col("status") == "exact")).html
    assert all_exact.startswith('<details class="calmqa-beside"><summary>') and "calmqa-beside-exact" not in all_exact


def test_a_fold_holds_what_it_is_given_behind_its_line():
    """`notebook.folded`: secondary material of a long report behind a line a reader clicks; its Markdown
    rendered, raw HTML in it escaped; closed unless asked open."""
    from IPython.display import Markdown

    from analysis.reporting import notebook

    table = tables.show(pl.DataFrame({"a": [1.5]}))
    closed = notebook.folded("The *models*' <b>table</b>", table, Markdown("Some **text**")).data
    assert closed.startswith('<details class="calmqa-fold"><summary>The <em>models</em>')
    assert "&lt;b&gt;table&lt;/b&gt;" in closed and table.html in closed and "<strong>text</strong>" in closed
    assert closed.rstrip().endswith("</details>")
    assert notebook.folded("x", table, open_=True).data.startswith('<details class="calmqa-fold" open>')
