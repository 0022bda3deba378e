"""Which paper item an output reproduces, decided from what the study declares (`study.paper`), what the
data holds and what the parameters ask: titles and file names name a figure or table of the CaLMQA paper
only when the output is that item (say `beyond the paper` otherwise), and never for a study of your own.

Without imported factuality and relevance metrics, notebook 04 can draw the surface component only;
without auto-collected questions, notebook 06 compares other groups of answers than the paper did.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from ..io.calmqa import QUESTION_TYPES as PAPER_QUESTION_TYPES
from ..io.paper import PAPER_PAGES, PAPERS, load_items  # noqa: F401 - notebook 08 reads the items through here

# The paper's heatmap of each per-answer score (`scores.SCORES`) and of each surface metric (`surface.METRICS`).
SCORE_FIGURES = {"s": "Figure 2", "s_surf": "Figure 9", "s_fact": "Figure 10", "s_rel": "Figure 11"}
SURFACE_FIGURES = {"pct_correct_language": "Figure 13", "pct_repetition": "Figure 14", "pct_surface_ok": "Figure 9"}


def beyond_surface_figures(metrics: Iterable[str]) -> list[str]:
    """The surface metrics (keys of `schema.SURFACE_METRICS`) that are none of the paper's figures:
    notebook 03 draws them after Figures 13, 14 and 9."""
    return [metric for metric in metrics if metric not in SURFACE_FIGURES]


# The model x language heatmaps whose culturally agnostic panel the paper draws first (on the left: their
# captions say so); the captions of the others (Figures 13, 14, 16) name culturally specific questions
# first, the adapter's order (`io.calmqa.QUESTION_TYPES`).
AGNOSTIC_FIRST = frozenset({"Figure 2", "Figure 8", "Figure 9", "Figure 10", "Figure 11"})
ALL_SCORES = ("s_surf", "s_fact", "s_rel", "s")


def question_type_order(item: str | None, question_types: tuple[str, ...]) -> tuple[str, ...]:
    """The order of the question-type panels of the paper's `item` (a figure) when the study's question
    types (`question_types`, in the study's order) are the paper's; the study's order otherwise."""
    if item in AGNOSTIC_FIRST and set(question_types) == set(PAPER_QUESTION_TYPES):
        return tuple(reversed(PAPER_QUESTION_TYPES))
    return question_types


@dataclass(frozen=True)
class Labels:
    title: str
    names: dict[str, str]  # output -> file name (without extension)
    titles: dict[str, str] = field(default_factory=dict)  # output -> the title of its figure


def answer_scores(available: list[str], paper: str | None) -> Labels:
    """Notebook 04: the paper items its heatmaps reproduce (Figures 2, 9, 10, 11, one per available
    score) and, when every score is available, Table 2; otherwise its table is Table 2's surface column.
    A study of your own: its surface component and its metrics, under plain names."""
    if not paper:
        return Labels("Answer scores and metrics", {"table": "surface_by_model"})
    figures = [SCORE_FIGURES[s] for s in ALL_SCORES if s in available]
    numbers = sorted(f.removeprefix("Figure ") for f in figures)
    complete = all(s in available for s in ALL_SCORES)
    items = f"Figure{'s' if len(numbers) > 1 else ''} {', '.join(sorted(numbers, key=int))}" + (
        " and Table 2" if complete else ""
    )
    if complete:
        title = f"Answer scores (paper {items})"
    elif available == ["s_surf"]:
        title = f"Answer scores: the surface component only (paper {items}; Figures 2, 10, 11 and Table 2 need imported metrics)"
    else:
        title = f"Answer scores (paper {items}; Table 2 needs every score)"
    return Labels(title, {"table": "table2_scores_by_model" if complete else "scores_by_model"})


def _is_collection_comparison(groups: tuple[dict, dict]) -> bool:
    """The paper's comparison: human- against auto-collected culturally specific questions."""
    selectors = [{k: v for k, v in g.items() if k != "label"} for g in groups]
    return all(
        set(s) <= {"collection", "question_type"} and s.get("question_type", "specific") == "specific"
        for s in selectors
    ) and {s.get("collection") for s in selectors} == {"auto", "human"}  # (two groups: one of each)


def collection_comparison(groups: tuple[dict, dict], value: str, resource_level: str) -> Labels:
    """Notebook 06: the paper's Figure 12 is S on human- vs auto-collected questions, its Table 14 the
    aggregate over the high-resource languages, and its Appendix C.2 the KS test per language; any other
    pair of groups or score is beyond the paper."""
    a, b = (g.get("label") or "group" for g in groups)
    if not _is_collection_comparison(groups):
        return Labels(
            f"Comparing two groups of answers: {a} vs {b} (beyond the paper)",
            {"heatmap": "group_heatmaps", "aggregate": f"{resource_level}_resource_comparison"},
        )
    paper_score = value == "s"
    items = [
        "Figure 12" if paper_score else None,
        "Table 14" if resource_level == "high" else None,
        "the Appendix C.2 tests",
    ]
    shown = ", ".join(i for i in items if i)
    title = f"Human- vs auto-collected questions (paper {shown})"
    if not paper_score:
        title += "; the paper compares the overall score S"
    return Labels(
        title,
        {
            "heatmap": "figure12_group_heatmaps" if paper_score else "group_heatmaps",
            "aggregate": "table14_high_resource"
            if resource_level == "high"
            else f"{resource_level}_resource_comparison",
        },
    )


def dataset_overview(paper: str | None, selection: str) -> Labels:
    """Notebook 01: the paper's Tables 4 and 10 and Figures 1 and 5 for the paper's study; plain names
    and titles for any other (`selection`: the questions whose topics are counted, in words)."""
    if paper:
        return Labels(
            "Dataset overview",
            {
                "lengths": "table4_question_lengths",
                "languages": "table10_languages",
                "treemap": "figure1_category_treemap",
                "categories": "figure5_specific_categories",
                "shares": "figure5_specific_category_shares",
                "top": "top_category_by_language",
                "top_levels": "top_category_counts",
            },
            {
                "treemap": "Categories of the culturally specific questions (paper Figure 1)",
                "categories": "Culturally specific questions by category and language (paper Figure 5)",
                "shares": "Culturally specific questions by category: % of each language's questions "
                "(paper Figure 5 as shares)",
            },
        )
    what = selection[:1].upper() + selection[1:]
    return Labels(
        "Dataset overview",
        {
            "lengths": "question_lengths",
            "languages": "languages",
            "treemap": "category_treemap",
            "categories": "categories_by_language",
            "shares": "category_shares_by_language",
            "top": "top_categories",
            "top_levels": "top_category_levels",
        },
        {
            "treemap": f"Categories of the {selection}",
            "categories": f"{what} by category and language",
            "shares": f"{what} by category: % of each language's questions",
        },
    )


def surface_quality(paper: str | None) -> Labels:
    """Notebook 03: the paper's Appendix C.2 indicators and Table 17 for the paper's study; plain names for
    any other."""
    if paper:
        return Labels(
            "Surface-level quality",
            {
                "indicators": "appendix_c2_textual_indicators",
                "indicator_table": "textual_indicators",
                "token_counts": "table17_answer_token_counts",
            },
        )
    return Labels(
        "Surface-level quality",
        {
            "indicators": "textual_indicators",
            "indicator_table": "indicator_shares",
            "token_counts": "answer_token_counts",
        },
    )


# The culturally specific questions of the paper's Table 17 (its lengths of the answers).
TABLE17_QUESTION_TYPE = "specific"


def token_count_question_type(paper: str | None) -> str | None:
    """The questions whose answers' lengths are counted: the paper's culturally specific ones, or all."""
    return TABLE17_QUESTION_TYPE if paper else None


# ---------------------------------------------------------------- where an item is in the paper

_NUMBERED = re.compile(r"^(Figure|Table) (\d+)")
_SECTION = re.compile(r"^Section (\d+)$")
_APPENDIX = re.compile(r"^Appendix ([A-Z])(?:\.(\d+))?$")
# A mention of items in a report's text: `Figure 16`, `NativQA Table 2`, `Figures 13, 14 and 9`, `Tables 25 to 27`.
_MENTION = re.compile(r"\b(?:(CaLMQA|NativQA)(?:'s)? )?(Figure|Table)s? (\d+(?:(?:, | and | to |-|–)\d+)*)(?!\.\d)")


def item_url(paper: str, item: str, anchors: dict[tuple[str, str], str]) -> str:
    """The address of `item` of `paper` (as the claims registry names it: `Table 13`, `Table 2 footnote`,
    `Section 4`, `Appendix C.2`, `Abstract`) in the paper's arXiv HTML: a figure or table by its anchor in
    `anchors` ((paper, item) -> anchor, `data/paper/items.csv`), a section or appendix by its number, and
    the page itself for what has no anchor (the abstract, the limitations)."""
    page = PAPER_PAGES[paper]
    numbered, section, appendix = _NUMBERED.match(item), _SECTION.match(item), _APPENDIX.match(item)
    anchor = None
    if numbered:
        anchor = anchors.get((paper, f"{numbered[1]} {numbered[2]}"))
    elif section:
        anchor = f"S{section[1]}"
    elif appendix:
        anchor = f"A{ord(appendix[1]) - ord('A') + 1}" + (f".SS{appendix[2]}" if appendix[2] else "")
    return f"{page}#{anchor}" if anchor else page


def anchors_of(items: pl.DataFrame) -> dict[tuple[str, str], str]:
    """(paper, item) -> anchor, from the items table (`io.paper.load_items`)."""
    return {(r["paper"], r["item"]): r["anchor"] for r in items.iter_rows(named=True)}


def mentioned_items(text: str, default_paper: str = "calmqa") -> list[tuple[str, str]]:
    """The papers' figures and tables `text` names, in the order of their first mention: (paper, item).
    `NativQA Table 2` is NativQA's; an item without a paper's name is `default_paper`'s; `Figures 13, 14 and
    9` and `Tables 25 to 27` name each of them."""
    found: dict[tuple[str, str], None] = {}
    names = {name.lower(): name.lower() for name in PAPERS}
    for match in _MENTION.finditer(text):
        paper = names.get((match[1] or "").lower(), default_paper)
        numbers: list[int] = []
        for part in re.split(r", | and ", match[3]):
            ends = re.split(r" to |-|–", part)
            low, high = int(ends[0]), int(ends[-1])
            numbers += list(range(low, high + 1)) if 0 < high - low < 40 else [low, high][: len(ends)]
        for number in numbers:
            found.setdefault((paper, f"{match[2]} {number}"), None)
    return list(found)


def links(claims: pl.DataFrame, items: pl.DataFrame) -> dict[tuple[str, str], str]:
    """(paper, item) -> its address on arXiv, for every item of `claims` and of `items`."""
    anchors = anchors_of(items)
    pairs = set(claims.select("paper", "item").iter_rows()) | set(anchors)
    return {(paper, item): item_url(paper, item, anchors) for paper, item in pairs}


def not_in_release(items: pl.DataFrame) -> pl.DataFrame:
    """The papers' figures and tables the release cannot reach, with why and their address on arXiv."""
    anchors = anchors_of(items)
    rows = items.filter(pl.col("not_in_release").str.strip_chars() != "")
    return rows.select(
        "paper",
        "item",
        pl.col("not_in_release").alias("reason"),
        url=pl.struct("paper", "item").map_elements(
            lambda r: item_url(r["paper"], r["item"], anchors), return_dtype=pl.String
        ),
    )
