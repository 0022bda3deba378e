"""Titles and file names that name a paper item only when the output reproduces it."""

import nbformat
import polars as pl
import pytest

from analysis.analyses import paper_items, topics
from analysis.core.errors import InputError
from analysis.reporting import provenance
from analysis.reporting.notebook import titled

HUMAN = {"label": "human-collected", "collection": "human", "question_type": "specific"}
AUTO = {"label": "auto-collected", "collection": "auto", "question_type": "specific"}
SPECIFIC = {"label": "culturally specific", "collection": "human", "question_type": "specific"}
AGNOSTIC = {"label": "culturally agnostic", "collection": "human", "question_type": "agnostic"}


def test_answer_scores_without_metrics_claim_the_surface_figure_only():
    labels = paper_items.answer_scores(["s_surf"], "calmqa")
    assert "surface component only" in labels.title and "paper Figure 9;" in labels.title
    assert labels.names == {"table": "scores_by_model"}


def test_answer_scores_with_every_metric_are_the_papers():
    labels = paper_items.answer_scores(["s_surf", "s_fact", "s_rel", "s"], "calmqa")
    assert labels.title == "Answer scores (paper Figures 2, 9, 10, 11 and Table 2)"
    assert labels.names == {"table": "table2_scores_by_model"}


def test_a_study_of_your_own_names_no_paper_item():
    for available in (["s_surf"], ["s_surf", "s_fact", "s_rel", "s"]):
        labels = paper_items.answer_scores(available, None)
        assert "paper" not in labels.title and labels.names == {"table": "surface_by_model"}
    overview = paper_items.dataset_overview(None, "questions")
    assert not any(name.startswith(("table", "figure")) for name in overview.names.values())
    assert not any("paper" in title for title in overview.titles.values())
    assert paper_items.surface_quality(None).names == {
        "indicators": "textual_indicators",
        "indicator_table": "indicator_shares",
        "token_counts": "answer_token_counts",
    }
    assert topics.similarity_figure_name("language", "specific", "human", None) == "topic_similarity"
    assert topics.similarity_item("language", "specific", "human", None) is None


def test_human_vs_auto_on_s_is_figure12_and_table14():
    labels = paper_items.collection_comparison((HUMAN, AUTO), "s", "high")
    assert labels.title == "Human- vs auto-collected questions (paper Figure 12, Table 14, the Appendix C.2 tests)"
    assert labels.names == {"heatmap": "figure12_group_heatmaps", "aggregate": "table14_high_resource"}


def test_human_vs_auto_on_another_score_is_not_figure12():
    labels = paper_items.collection_comparison((HUMAN, AUTO), "s_surf", "high")
    assert "Figure 12" not in labels.title and "the paper compares the overall score S" in labels.title
    assert labels.names["heatmap"] == "group_heatmaps"
    assert paper_items.collection_comparison((HUMAN, AUTO), "s", "low").names["aggregate"] == "low_resource_comparison"


def test_other_groups_are_beyond_the_paper():
    for groups in ((SPECIFIC, AGNOSTIC), ({**HUMAN, "model": "gpt-4o"}, AUTO)):
        labels = paper_items.collection_comparison(groups, "s", "high")
        assert labels.title.endswith("(beyond the paper)")
        assert labels.names == {"heatmap": "group_heatmaps", "aggregate": "high_resource_comparison"}


def test_figure6_only_for_the_papers_selection():
    assert topics.similarity_figure_name("language", "specific", "human", "calmqa") == "figure6_topic_similarity"
    for selection in (
        ("resource_level", "specific", "human"),
        ("language", None, "human"),
        ("language", "specific", None),
    ):
        assert topics.similarity_figure_name(*selection, "calmqa") == "topic_similarity"
        assert topics.similarity_item(*selection, "calmqa") == "beyond the paper"


def test_a_titled_output_gives_the_report_its_title_and_summary():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("parameters"),
        nbformat.v4.new_code_cell(
            "title",
            outputs=[
                nbformat.v4.new_output(
                    "execute_result",
                    data={"text/markdown": titled("Data-dependent title", "The summary, in words.").data},
                )
            ],
        ),
        nbformat.v4.new_markdown_cell("## About\n\n# Not the title"),
    ]
    assert provenance.notebook_title(notebook) == "Data-dependent title"
    assert provenance.first_markdown_output(notebook) == "The summary, in words."
    static = nbformat.v4.new_notebook()
    static.cells = [nbformat.v4.new_markdown_cell("# Static title\n\ntext"), *notebook.cells]
    assert provenance.notebook_title(static) == "Static title"


# ---------------------------------------------------------------- where each item is on arXiv


def test_every_item_has_its_anchor_and_the_unreachable_ones_say_why():
    items = paper_items.load_items()
    assert items.filter(pl.col("paper") == "calmqa").height == 60  # Figures 1-26, Tables 1-34
    unreachable = paper_items.not_in_release(items)
    assert set(unreachable["item"]) == {
        "Figure 8",
        "Figure 24",
        "Figure 25",
        "Table 24",
        *(f"Table {n}" for n in range(28, 35)),
    }
    assert unreachable["reason"].str.contains("release").all()
    assert unreachable.filter(pl.col("item") == "Figure 8")["url"][0] == "https://arxiv.org/html/2406.17761v3#A3.F8"


def test_an_item_links_to_its_place_in_the_paper():
    anchors = {("calmqa", "Table 2"): "S3.T2", ("nativqa", "Table 2"): "S4.T2"}
    url = paper_items.item_url
    assert url("calmqa", "Table 2 footnote", anchors) == "https://arxiv.org/html/2406.17761v3#S3.T2"
    assert url("nativqa", "Table 2", anchors) == "https://arxiv.org/html/2407.09823v3#S4.T2"
    assert url("calmqa", "Section 4", anchors) == "https://arxiv.org/html/2406.17761v3#S4"
    assert url("calmqa", "Appendix C.2", anchors) == "https://arxiv.org/html/2406.17761v3#A3.SS2"
    assert url("nativqa", "Appendix G", anchors) == "https://arxiv.org/html/2407.09823v3#A7"
    assert url("calmqa", "Abstract", anchors) == "https://arxiv.org/html/2406.17761v3"
    assert url("calmqa", "Figure 99", anchors) == "https://arxiv.org/html/2406.17761v3"


def test_a_reports_text_names_items_singly_in_lists_and_in_ranges():
    text = "paper Figures 13, 14 and 9; Tables 25 to 27 (NativQA Table 2, Figure 16), Table 4.2 is no item"
    assert paper_items.mentioned_items(text) == [
        ("calmqa", "Figure 13"),
        ("calmqa", "Figure 14"),
        ("calmqa", "Figure 9"),
        ("calmqa", "Table 25"),
        ("calmqa", "Table 26"),
        ("calmqa", "Table 27"),
        ("nativqa", "Table 2"),
        ("calmqa", "Figure 16"),
    ]
    assert paper_items.mentioned_items("Table 3", default_paper="nativqa") == [("nativqa", "Table 3")]


def test_a_bad_item_is_named_by_file_line_and_field(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "paper,item,anchor,not_in_release\ncalmqa,Figure 8,A3.F8,\ncalmqa,Fig 9,A3.F9,\npaper3,Table 1,x y,\n"
    )
    with pytest.raises(InputError) as failure:
        paper_items.load_items(path)
    message = str(failure.value)
    assert "3 (calmqa Fig 9)" in message and "field 'item'" in message
    assert "4 (paper3 Table 1)" in message and "field 'anchor'" in message and "field 'paper'" in message
