"""Which paper item an output reproduces, decided from what the study declares (`study.paper`), what the
data holds and what the parameters ask: titles and file names name a figure or table of the CaLMQA paper
only when the output is that item (say `beyond the paper` otherwise), and never for a study of your own.

Without imported factuality and relevance metrics, notebook 04 can draw the surface component only;
without auto-collected questions, notebook 06 compares other groups of answers than the paper did.
"""

from dataclasses import dataclass, field

# The paper's heatmap of each per-answer score (`scores.SCORES`).
SCORE_FIGURES = {"s": "Figure 2", "s_surf": "Figure 9", "s_fact": "Figure 10", "s_rel": "Figure 11"}
ALL_SCORES = ("s_surf", "s_fact", "s_rel", "s")


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
    ) and sorted(s.get("collection") for s in selectors) == ["auto", "human"]


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
