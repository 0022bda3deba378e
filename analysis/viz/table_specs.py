"""How each table of the reports is shown: a small spec per table (`SPECS`, keyed by the name of the CSV
it is saved as), read by `tables` to draw it. A spec gives a caption saying what the table is, display
names for its columns and models, fixed decimals per column, groups of rows, and a wide layout where the
paper uses one (Table 4: languages x culturally specific / agnostic).

Adding a table is adding its spec here; how every table is drawn (HTML, LaTeX, the files) is `tables.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypedDict

from ..io.calmqa import QUESTION_TYPE_LABELS
from ..schema import SCORE_SHORT, SURFACE_METRICS

# What a missing value is shown as (a spec may say otherwise: `Spec.missing`).
MISSING = "–"


@dataclass(frozen=True)
class Wide:
    """Long rows spread out: one group of columns per value of `across` (its label in `groups`, in
    display order), each holding the columns `values`; the other columns identify a row."""

    across: str
    values: tuple[str, ...]
    groups: dict[str, str]


@dataclass(frozen=True)
class Spec:
    """How one table is shown. `labels` may name a column's value of the first row as `{column}`
    (the groups compared in notebook 06); `decimals` fixes the decimals of a float column (default 2);
    `p_values` are shown as p values (3 decimals, `< 0.001` below it); `rows_by` groups the rows under
    the values of a column; `spanners` put a label over some columns; `values` rename values;
    `hide_when_empty` columns are left out when no row has a value (KS's D where the score is 0/1 and
    Fisher's exact test compares the shares)."""

    caption: str
    labels: dict[str, str] = field(default_factory=dict)
    decimals: dict[str, int] = field(default_factory=dict)
    hide: tuple[str, ...] = ()
    hide_when_empty: tuple[str, ...] = ()
    rows_by: str | None = None
    wide: Wide | None = None
    spanners: dict[str, tuple[str, ...]] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    p_values: tuple[str, ...] = ("p", "p_value", "p_vs_best", "p_adjusted")
    markdown: tuple[str, ...] = ()
    # A column shown as a link to the address in another column (which is not shown): {column: url column}.
    links: dict[str, str] = field(default_factory=dict)
    scientific: tuple[str, ...] = ()
    missing: str = MISSING
    empty: str = "none"


class _SharedFields(TypedDict, total=False):
    """Fields of a `Spec` that several tables share (`Spec(caption, **shared)`)."""

    labels: dict[str, str]
    decimals: dict[str, int]
    rows_by: str
    values: dict[str, dict[str, str]]


# Labels of columns that many tables share; a spec's own labels win. A column without a label shows its
# name in words (`n_answers` -> `N answers`).
LABELS = {
    "language": "Language",
    "model": "Model",
    "question_type": "Question type",
    "resource_level": "Resource level",
    "category": "Category",
    "region": "Region",
    "metric": "Metric",
    "engine": "Engine",
    "n_questions": "Questions",
    "n_answers": "Answers",
    "n_languages": "Languages",
    "n_regions": "Regions",
    "n_texts": "Texts",
    "n_paragraphs": "Paragraphs",
    "n": "Answers",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "estimate": "Estimate",
    "std_error": "Std. error",
    "z": "z",
    "p": "p",
    "p_value": "p",
    "odds_ratio": "Odds ratio",
    "log_likelihood": "Log-likelihood",
    "aic": "AIC",
    "excerpt": "Excerpt",
    "note": "Note",
    "reason": "Reason",
    # the significance tiers (analyses/tiers.py)
    "tier": "Tier",
    "p_vs_best": "p vs the best",
    "p_adjusted": "p vs the best (Holm)",
}
RESOURCE_LEVELS = {"high": "high", "low": "low", "medium": "medium", "extremely_low": "extremely low"}
NATIVQA_METRICS = {
    "bertscore_f1": "BERTScore F1",
    "bleu": "BLEU",
    "rouge1": "ROUGE-1",
    "gpt4o_judge_1to10": "GPT-4o judge (1-10)",
}
ENGINES = {
    "paper": "paper's pipeline",
    "all23": "new engine (all 23)",
    "py3langid": "py3langid",
    "pyfranc": "pyfranc",
    "lingua": "lingua",
    "fasttext": "fastText",
}
ENGINE_LABELS = {key: label[0].upper() + label[1:] for key, label in ENGINES.items()}

# The status of a printed number, with a mark a reader sees at a glance.
STATUS_MARKS = {
    "exact": "✓ exact",
    "within rounding": "≈ within rounding",
    "differs": "≠ differs",
    "not in the release": "– not in the release",
    "no value": "! no value",
}
_BESIDE_PAPER = Spec(
    "The paper's printed numbers beside the suite's, at the paper's precision",
    labels={
        "item": "Paper item",
        "row": "Row",
        "column": "Column",
        "paper": "Paper",
        "suite": "Suite",
        "status": "Status",
        "note": "Note",
    },
    values={"status": STATUS_MARKS},
    markdown=("note",),
)
_TESTS = {
    "n_a": "Answers: {group_a}",
    "n_b": "Answers: {group_b}",
    "mean_a": "Mean x 100: {group_a}",
    "mean_b": "Mean x 100: {group_b}",
    "difference": "Difference (points)",
    "ks_d": "KS D",
}
_TEST_DECIMALS = {"mean_a": 1, "mean_b": 1, "difference": 1, "ks_d": 3}
# Table 2's scores and the same table without every score (`scores.scores_by_model`), shown alike.
_SCORES_BY_MODEL: _SharedFields = {
    "labels": {
        "score": "Score",
        "n_valid": "Valid answers",
        "mean": "Mean x 100",
        "metrics_coverage": "Metrics coverage",
    },
    "decimals": {"mean": 1, "ci_low": 1, "ci_high": 1, "metrics_coverage": 2},
    "rows_by": "model",
    "values": {"score": SCORE_SHORT, "question_type": QUESTION_TYPE_LABELS},
}
_VERDICT_COUNTS: _SharedFields = {
    "labels": {"n": "Answers"},
    "rows_by": "language",
    "values": {"question_type": QUESTION_TYPE_LABELS},
}
# Tables 26 and 27: the annotators' severities (none, minor, major) of one issue.
_SEVERITY_COUNTS: _SharedFields = {
    **_VERDICT_COUNTS,
    "labels": {"none": "None", "minor": "Minor", "major": "Major", **_VERDICT_COUNTS["labels"]},
}
# The most and the least similar pairs of groups (notebook 02), shown alike.
_SIMILAR_PAIRS: _SharedFields = {
    "labels": {
        "rank": "Rank",
        "group_a": "Group",
        "group_b": "Other group",
        "bc": "Bhattacharyya coefficient",
        "hellinger": "Hellinger distance",
    },
    "decimals": {"bc": 3, "hellinger": 3},
}
_CLAIM_STATUS = {
    "claims": "Claims",
    "exact": "Exact",
    "within rounding": "Within rounding",
    "differs": "Differs",
    "not in the release": "Not in the release",
    "failing": "Failing",
    "paper": "Paper",
    "item": "Item",
}
_RATED = Spec(
    "Rated Kirundi answers: the annotator's label against the paper pipeline's and the new engine's verdicts",
    labels={
        "rating_id": "Rating",
        "annotator_label": "Annotator",
        "paper_verdict": "Paper's pipeline",
        "new_verdict": "New engine",
        "ngram_margin": "N-gram margin",
        "agrees": "Agrees",
    },
    decimals={"ngram_margin": 3},
)
_ENGINE_SHARES = {key: f"{label} %" for key, label in ENGINE_LABELS.items()}
_NATIVQA_AVERAGES: _SharedFields = {
    "labels": {**NATIVQA_METRICS, "n_models": "Models"},
    "decimals": {m: 4 for m in NATIVQA_METRICS},
    "values": {"resource_level": RESOURCE_LEVELS},
}

SPECS: dict[str, Spec] = {
    # 01 dataset overview
    "table4_question_lengths": Spec(
        "Table 4: questions per language, and the mean and standard deviation of question and human-answer "
        "lengths in UTF-8 bytes (n/a: no human answer)",
        labels={
            "n_questions": "# Q",
            "question_bytes_mean": "Q bytes mean",
            "question_bytes_std": "Q bytes std",
            "n_human_answers": "# A",
            "answer_bytes_mean": "A bytes mean",
            "answer_bytes_std": "A bytes std",
        },
        decimals={"question_bytes_mean": 1, "question_bytes_std": 1, "answer_bytes_mean": 1, "answer_bytes_std": 1},
        rows_by="resource_level",
        missing="n/a",
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
        wide=Wide(
            "question_type",
            (
                "n_questions",
                "question_bytes_mean",
                "question_bytes_std",
                "n_human_answers",
                "answer_bytes_mean",
                "answer_bytes_std",
            ),
            {"specific": "Culturally specific", "agnostic": "Culturally agnostic"},
        ),
    ),
    "dataset_counts": Spec(
        "The dataset in the counts the paper's text gives",
        hide=("quantity",),
        labels={"description": "What is counted", "value": "Count"},
    ),
    "table10_languages": Spec(
        "Table 10: the languages",
        hide=("speakers_low", "speakers_high"),
        rows_by="resource_level",
        labels={
            "iso_code": "ISO code",
            "family": "Family",
            "branch": "Branch",
            "morphology": "Morphology",
            "word_order": "Word order",
            "script": "Script",
            "region": "Where spoken",
            "speakers": "Speakers",
        },
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
    ),
    "top_category_by_language": Spec(
        "Each language's most frequent category of culturally specific questions",
        labels={
            "top_category": "Top category",
            "n_questions": "Its questions",
            "language_questions": "Language's questions",
            "pct_of_language": "% of the language's",
        },
        decimals={"pct_of_language": 1},
        rows_by="resource_level",
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
    ),
    "top_category_counts": Spec(
        "In how many languages of each resource level a category comes first",
        labels={
            "top_category": "Top category",
            "n_languages": "Languages where it is first",
            "languages": "Which",
            "n_languages_in_level": "Languages of the level",
        },
        rows_by="resource_level",
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
    ),
    # 02 topic similarity
    "left_out_groups": Spec("Groups left out of the comparison for having too few questions"),
    "most_similar_pairs": Spec(
        "The most similar pairs of groups (highest Bhattacharyya coefficient)",
        **_SIMILAR_PAIRS,
    ),
    "least_similar_pairs": Spec(
        "The least similar pairs of groups (lowest Bhattacharyya coefficient)",
        **_SIMILAR_PAIRS,
    ),
    "pooled_resource_similarity": Spec(
        "High- against low-resource languages, each level's questions pooled",
        labels={
            "high_questions": "High-resource questions",
            "low_questions": "Low-resource questions",
            "bc": "Bhattacharyya coefficient",
            "hellinger": "Hellinger distance",
        },
        decimals={"bc": 3, "hellinger": 3},
    ),
    # 03 surface quality
    "rates_by_model": Spec(
        "Surface verdicts per model and question type, the answers of all languages pooled (%)",
        labels={
            "n_provider_errors": "Provider errors",
            "n_language_abstained": "Too short to judge",
            **{m.key: m.label for m in SURFACE_METRICS},
            **{f"tier_{m.key}": f"Tier: {m.label}" for m in SURFACE_METRICS},
            "pct_provider_errors": "% provider errors",
        },
        decimals={**{m.key: m.decimals for m in SURFACE_METRICS}, "pct_provider_errors": 1},
        rows_by="model",
        values={"question_type": QUESTION_TYPE_LABELS},
    ),
    "table2_footnote_provider_errors": Spec(
        "Table 2 footnote: provider errors per model and question type, over the {n_languages} languages Table 2 "
        "aggregates",
        labels={
            "n_provider_errors": "Provider errors",
            "n_other": "OTHER",
            "n_safety": "SAFETY",
            "n_recitation": "RECITATION",
            "n_empty": "Empty",
            "pct_provider_errors": "% provider errors",
        },
        decimals={"pct_provider_errors": 1, "ci_low": 1, "ci_high": 1},
        rows_by="model",
        values={"question_type": QUESTION_TYPE_LABELS},
    ),
    "beside_paper": _BESIDE_PAPER,
    "appendix_c1_fully_identified_languages": Spec(
        "Appendix C.1: the languages whose every culturally specific question is identified as its own language",
        labels={
            "n_languages": "Languages",
            "languages": "Which",
            "lowest_other_pct": "Lowest of the others (%)",
            "lowest_other_language": "Its language",
        },
        decimals={"lowest_other_pct": 1},
    ),
    "table13_identification_accuracy": Spec(
        "Table 13: culturally specific questions identified as their own language (%), with 95% Wilson intervals",
        labels={
            "iso_code": "ISO code",
            "unreliable": "Unreliable",
            "n_identified": "Identified",
            "pct_identified": "% identified",
            "n_questions_all_types": "Questions (both types)",
            "pct_identified_all_types": "% identified (both types)",
            "detected_instead": "Taken for instead",
        },
        decimals={"pct_identified": 2, "ci_low": 2, "ci_high": 2, "pct_identified_all_types": 2},
        rows_by="resource_level",
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
    ),
    "textual_indicators": Spec(
        "Appendix C.2: share of answers (%) with each textual indicator, per model and scope",
        labels={
            "scope": "Scope",
            "apology": "Apology",
            "language_name_mention": "Names the language",
            "translation_mention": "Mentions translation",
            "emoji": "Emoji",
        },
        decimals={"apology": 2, "language_name_mention": 2, "translation_mention": 2, "emoji": 2},
        rows_by="model",
    ),
    "table17_answer_token_counts": Spec(
        "Table 17: answer lengths in o200k_base tokens, answers to culturally specific questions",
        labels={
            "tokenizer": "Tokenizer",
            "n_all": "Answers",
            "mean_all": "Mean",
            "median_all": "Median",
            "std_all": "Std",
            "n_clean": "Answers",
            "mean_clean": "Mean",
            "median_clean": "Median",
            "std_clean": "Std",
        },
        decimals={c: 1 for c in ("mean_all", "median_all", "std_all", "mean_clean", "median_clean", "std_clean")},
        spanners={
            "All answers": ("n_all", "mean_all", "median_all", "std_all"),
            "In the correct language, without repetitions": ("n_clean", "mean_clean", "median_clean", "std_clean"),
        },
    ),
    "agreement_crosstab": Spec(
        "The annotators' language label against the automatic verdict, every rated answer",
        labels={
            "identification": "Identification",
            "annotator_label": "Annotator's label",
            "correct": "Verdict: correct",
            "incorrect": "Verdict: incorrect",
        },
    ),
    "agreement_kappa": Spec(
        "Agreement of the automatic language verdict with the annotators: Cohen's kappa three ways",
        labels={
            "languages": "Languages",
            "partially_as": "`partially` counted as",
            "n_unreliable_answers": "Of unreliable languages",
            "pct_agreement": "% agreement",
            "cohens_kappa": "Cohen's kappa",
        },
        decimals={"pct_agreement": 1, "cohens_kappa": 3},
    ),
    # 04 answer scores (and 06's groups); without every score the table is Table 2's surface column only
    "table2_scores_by_model": Spec(
        "Table 2: scores x 100 per model and question type, the answers of all languages pooled", **_SCORES_BY_MODEL
    ),
    "scores_by_model": Spec(
        "The scores the database has, x 100 per model and question type, the answers of all languages pooled "
        "(the others need imported metrics)",
        **_SCORES_BY_MODEL,
    ),
    # 05 human evaluation
    "table25_language_correct_counts": Spec(
        "Table 25: is the answer in the question's language? Annotators' verdicts per language, question type "
        "and model",
        labels={"yes": "Yes", "partially": "Partially", "no": "No", **_VERDICT_COUNTS["labels"]},
        rows_by="language",
        values=_VERDICT_COUNTS["values"],
    ),
    "table26_factuality_counts": Spec(
        "Table 26: factuality issues found by the annotators, per language, question type and model",
        **_SEVERITY_COUNTS,
    ),
    "table27_omission_counts": Spec(
        "Table 27: omissions found by the annotators, per language, question type and model",
        **_SEVERITY_COUNTS,
    ),
    "human_evaluation_design": Spec(
        "What the human evaluation rated, in the counts the paper's text gives",
        hide=("quantity",),
        labels={"description": "What is counted", "value": "Count"},
    ),
    "clmm_fits": Spec(
        "The three cumulative link mixed models of the ratings: fit and convergence",
        labels={
            "analysis": "Model",
            "formula": "Formula",
            "n_obs": "Ratings",
            "annotator_variance": "Annotator variance",
            "converged": "Converged",
            "max_gradient": "Max. gradient",
            "condition_number_hessian": "Condition number (Hessian)",
            "r_messages": "R's messages",
        },
        decimals={"log_likelihood": 2, "aic": 1, "annotator_variance": 3, "condition_number_hessian": 1},
        scientific=("max_gradient",),
    ),
    "clmm_thresholds": Spec(
        "Thresholds (cut points between ratings) of each cumulative link mixed model",
        labels={"analysis": "Model", "threshold": "Between ratings"},
        decimals={"estimate": 3, "std_error": 3, "z": 2},
        rows_by="analysis",
    ),
    "table23_r2_by_predictor": Spec(
        "Table 23: Nakagawa's R² of one model per predictor, at the paper's precision",
        labels={
            "predictor": "Predictor",
            "r2_marginal": "Marginal R²",
            "r2_conditional": "Conditional R²",
            "var_fixed": "Fixed-effect variance",
            "var_annotator": "Annotator variance",
            "var_residual": "Residual variance",
        },
        hide=("r2_marginal_unrounded", "r2_conditional_unrounded"),
        decimals={
            "r2_marginal": 2,
            "r2_conditional": 3,
            "var_fixed": 3,
            "var_annotator": 3,
            "var_residual": 3,
            "log_likelihood": 2,
            "aic": 1,
        },
    ),
    "logistic_issue_models": Spec(
        "Mixed logistic regressions: no factuality issue and no omission, by question type",
        labels={
            "outcome": "Outcome",
            "term": "Term",
            "probability": "Probability",
            "probability_ci_low": "Probability 95% CI low",
            "probability_ci_high": "Probability 95% CI high",
        },
        decimals={
            "estimate": 3,
            "std_error": 3,
            "ci_low": 3,
            "ci_high": 3,
            "z": 2,
            "odds_ratio": 2,
            "probability": 3,
            "probability_ci_low": 3,
            "probability_ci_high": 3,
        },
        rows_by="outcome",
        values={
            "outcome": {"no_factuality_issue": "No factuality issue", "no_omission": "No omission"},
            "term": {
                "(Intercept)": "intercept (culturally specific)",
                "question_typeagnostic": "culturally agnostic vs specific",
            },
        },
    ),
    # 06 collection comparison
    "tests_by_language": Spec(
        "{test} per language: {group_a} against {group_b}",
        labels={**_TESTS, "unreliable": "Unreliable"},
        hide=("group_a", "group_b", "test"),
        hide_when_empty=("ks_d",),
        decimals=_TEST_DECIMALS,
        rows_by="resource_level",
        values={"resource_level": {"high": "High- and mid-resource languages", "low": "Low-resource languages"}},
    ),
    "table14_high_resource": Spec(
        "Table 14: each model's scores on {group_a} and {group_b} questions of the high-resource languages, "
        "with the {test}",
        labels=_TESTS,
        hide=("group_a", "group_b", "resource_level", "test"),
        hide_when_empty=("ks_d",),
        decimals=_TEST_DECIMALS,
    ),
    "*_resource_comparison": Spec(
        "Each model's scores on {group_a} and {group_b}, languages of one resource level pooled, with the {test}",
        labels={**_TESTS, "resource_level": "Languages"},
        hide=("group_a", "group_b", "test"),
        hide_when_empty=("ks_d",),
        decimals=_TEST_DECIMALS,
    ),
    # 07 NativQA
    "table1_dataset_sizes": Spec(
        "NativQA Table 1: seed queries, collected QA pairs and annotated pairs per split",
        labels={
            "city": "City",
            "seed_queries": "Seed queries",
            "qa_pairs_collected": "QA pairs collected",
            "train": "Train",
            "dev": "Dev",
            "test": "Test",
            "total_annotated": "Annotated",
        },
        hide=("n_regions", "n_languages"),
        values={"resource_level": RESOURCE_LEVELS},
    ),
    "model_averages": Spec("NativQA: each model's average over the regions (zero-shot)", **_NATIVQA_AVERAGES),
    "region_averages": Spec("NativQA: each region's average over the models (zero-shot)", **_NATIVQA_AVERAGES),
    "table3_fine_tuning_deltas": Spec(
        "NativQA Table 3: Llama-3.1-8B-Instruct before and after fine-tuning",
        labels={"base": "Base", "fine_tuned": "Fine-tuned", "delta": "Change", "relative_change_pct": "Change %"},
        decimals={"base": 3, "fine_tuned": 3, "delta": 3, "relative_change_pct": 1},
        rows_by="metric",
        values={"metric": NATIVQA_METRICS, "resource_level": RESOURCE_LEVELS},
    ),
    "table3_fine_tuning_summary": Spec(
        "NativQA Table 3 in sum: averages over the regions, and how many regions improved",
        labels={
            "base_average": "Base (average)",
            "fine_tuned_average": "Fine-tuned (average)",
            "delta_average": "Change (average)",
            "regions_improved": "Regions improved",
            "regions_worse": "Regions worse",
        },
        decimals={"base_average": 4, "fine_tuned_average": 4, "delta_average": 4},
        values={"metric": NATIVQA_METRICS},
    ),
    "table5_human_ratings": Spec(
        "NativQA Table 5: people's ratings of GPT-4o's answers (1 to 5)",
        labels={"human_accuracy_1to5": "Accuracy", "human_usefulness_1to5": "Usefulness"},
        decimals={"human_accuracy_1to5": 2, "human_usefulness_1to5": 2},
        values={"resource_level": RESOURCE_LEVELS},
    ),
    "table24_edit_distances": Spec(
        "NativQA Table 24: normalized Levenshtein distance between collected and edited answers",
        labels={
            "train": "Train",
            "dev": "Dev",
            "test": "Test",
            "n_values": "Splits",
            "region_average": "Region average",
        },
        decimals={"train": 3, "dev": 3, "test": 3, "region_average": 4},
        values={"resource_level": RESOURCE_LEVELS},
    ),
    "table24_split_averages": Spec(
        "NativQA Table 24: each split's average over the regions",
        labels={"split": "Split", "average": "Average"},
        decimals={"average": 4},
    ),
    "table18_lengths": Spec(
        "NativQA Table 18: average question and answer length in words",
        labels={"question_words_avg": "Question words", "answer_words_avg": "Answer words"},
        decimals={"question_words_avg": 1, "answer_words_avg": 1},
        values={"resource_level": RESOURCE_LEVELS},
    ),
    "table23_additional_pairs": Spec(
        "NativQA Table 23: QA pairs collected for further locations",
        labels={"location": "Location", "qa_pairs": "QA pairs"},
    ),
    "text_counts": Spec(
        "NativQA: what the paper's prose counts of the things it lists, counted from their transcription",
        hide=("quantity",),
        labels={"description": "What is counted", "value": "Count"},
    ),
    "domain_reliability": Spec(
        "NativQA Section 4.2.1: web domains checked for reliability, kept and eliminated",
        labels={"outcome": "Domains", "domains": "Number", "pct_of_checked": "% of those checked"},
        decimals={"pct_of_checked": 3},
        values={"outcome": {"checked": "checked", "very_reliable": "very reliable (kept)", "eliminated": "eliminated"}},
    ),
    # 08 paper reproduction
    "status_by_paper": Spec(
        "Claims by status, per paper",
        labels=_CLAIM_STATUS,
        values={"paper": {"calmqa": "CaLMQA", "nativqa": "NativQA"}},
    ),
    "status_by_kind": Spec(
        "Claims by status, per paper and kind",
        labels={**_CLAIM_STATUS, "kind": "Kind"},
        values={
            "paper": {"calmqa": "CaLMQA", "nativqa": "NativQA"},
            "kind": {
                "reproduced": "reproduced from the release",
                "derived": "derived from printed numbers",
                "transcribed": "transcribed input",
            },
        },
    ),
    "items_not_in_release": Spec(
        "The papers' figures and tables that the release cannot reach, and why",
        labels={"paper": "Paper", "item": "Item", "reason": "Why the release cannot reach it"},
        links={"item": "url"},
        markdown=("reason",),
        values={"paper": {"calmqa": "CaLMQA", "nativqa": "NativQA"}},
    ),
    "claims": Spec(
        "Claims",
        labels={
            "paper": "Paper",
            "item": "Item",
            "row": "Row",
            "column": "Column",
            "printed": "Printed",
            "suite": "Suite",
            "kind": "Kind",
            "note": "Note",
            "source": "Source CSV",
        },
        markdown=("note",),
        values={"paper": {"calmqa": "CaLMQA", "nativqa": "NativQA"}},
    ),
    # 10 language identification
    "goals": Spec(
        "The goals set for the new engine, measured",
        labels={"goal": "Goal", "of": "Over", "measured": "Measured", "threshold": "Goal", "met": "Met"},
        decimals={"measured": 1},
    ),
    "engines": Spec(
        "The language identification engines compared",
        labels={"name": "Name", "what": "What it is", "seconds": "Seconds"},
        decimals={"seconds": 1},
    ),
    "accuracy": Spec(
        "Held-out release texts identified as their language, per engine (%)",
        labels={**_ENGINE_SHARES, "left_out_by_paper": "Left out by the paper"},
        decimals={e: 1 for e in ENGINES},
    ),
    "neighbour_confusion": Spec(
        "What the four languages' held-out texts were taken for, per engine",
        labels={
            "pct_correct": "% identified",
            "named_neighbours": "Named neighbours",
            "pct_named_neighbour": "% taken for a named neighbour",
            "taken_for": "Taken for (texts)",
        },
        decimals={"pct_correct": 1, "pct_named_neighbour": 1},
        rows_by="language",
        values={"engine": ENGINES},
    ),
    "neighbour_false_positives": Spec(
        "Neighbours' UDHR paragraphs taken for one of the four languages, per engine (%)",
        labels={**_ENGINE_SHARES, "taken_for": "Taken for", "neighbour": "Neighbour", "declarations": "Declarations"},
        decimals={e: 1 for e in ENGINES},
        rows_by="taken_for",
    ),
    "other_language_false_positives": Spec(
        "Texts of every other language taken for one of the four, per engine",
        labels={
            "taken_for": "Taken for",
            "origin": "Texts",
            "n_taken": "Taken",
            "pct_taken": "% taken",
            "written_in": "Written in",
        },
        decimals={"pct_taken": 2},
        rows_by="taken_for",
        values={"engine": ENGINES},
    ),
    "udhr_recall": Spec(
        "UDHR paragraphs identified as their language, per engine (%)",
        labels=_ENGINE_SHARES,
        decimals={e: 1 for e in ENGINES},
    ),
    "errors": Spec(
        "Held-out release texts of the four languages that the new engine missed",
        labels={"kind": "Text", "group": "Question group", "detected": "Taken for", "ngram_margin": "N-gram margin"},
        decimals={"ngram_margin": 3},
    ),
    "neighbour_errors": Spec(
        "UDHR paragraphs of other languages that the new engine took for one of the four",
        labels={
            "taken_for": "Taken for",
            "declaration": "Declaration",
            "group": "Article",
            "ngram_margin": "N-gram margin",
        },
        decimals={"ngram_margin": 3},
    ),
    "annotator_agreement": Spec(
        "Agreement with the annotators' language labels on the rated Kirundi answers",
        labels={
            "n_rated": "Rated",
            "n_partially": "`partially`",
            "n_compared": "Compared (yes or no)",
            "pct_agreement_paper": "% agreement, paper's pipeline",
            "pct_agreement_new": "% agreement, new engine",
        },
        decimals={"pct_agreement_paper": 1, "pct_agreement_new": 1},
    ),
    "annotator_disagreements": _RATED,
    "annotator_compared": _RATED,
    "annotator_labels_and_verdicts": Spec(
        "Every annotator label of the rated Kirundi answers against the new engine's verdict",
        labels={"annotator_label": "Annotator's label", "new_verdict": "New engine's verdict"},
    ),
    "verdict_changes": Spec(
        "Model answers to questions in the four languages: the paper pipeline's verdict and the new engine's",
        labels={
            "paper_verdict": "Paper's pipeline",
            "new_verdict": "New engine",
            "in_question_language": "In the question's language",
        },
        rows_by="language",
    ),
}
# The tables of the generic sections (docs/studies.md): those a study of your own writes under plain names,
# and those every study writes. A study's own labels name its values (no CaLMQA renaming).
_NO_PAPER: _SharedFields = {"values": {}}
SPECS |= {
    "question_counts": Spec(
        "Questions and model answers per language, question type and collection",
        labels={"n_answers": "Model answers", "n_models": "Models", "n_rated_answers": "Rated answers"},
        rows_by="resource_level",
    ),
    "question_lengths": Spec(
        "Questions per language and question type, and the mean and standard deviation of their length in UTF-8 bytes",
        labels=SPECS["table4_question_lengths"].labels,
        decimals=SPECS["table4_question_lengths"].decimals,
        hide=("n_human_answers", "answer_bytes_mean", "answer_bytes_std"),
        rows_by="resource_level",
    ),
    "languages": replace(SPECS["table10_languages"], caption="The study's languages", **_NO_PAPER),
    "top_categories": replace(
        SPECS["top_category_by_language"], caption="Each language's most frequent category", **_NO_PAPER
    ),
    "top_category_levels": replace(SPECS["top_category_counts"], **_NO_PAPER),
    "surface_by_model": replace(
        SPECS["scores_by_model"],
        caption="The share of answers without surface issues (S_surf x 100) per model and question type, the "
        "answers of all languages pooled",
        labels={**_SCORES_BY_MODEL["labels"], "mean": "S_surf x 100"},
        hide=("score", "metrics_coverage"),
    ),
    "indicator_shares": replace(
        SPECS["textual_indicators"], caption="Share of answers (%) with each textual indicator, per model and scope"
    ),
    "answer_token_counts": replace(
        SPECS["table17_answer_token_counts"], caption="Answer lengths in o200k_base tokens, per model"
    ),
    "metrics_by_model": Spec(
        "Each metric per model, the answers of every language pooled: the mean and its 95% bootstrap interval",
        labels={"metric": "Metric", "n_values": "Values", "mean": "Mean"},
        decimals={"mean": 3, "ci_low": 3, "ci_high": 3},
        rows_by="metric",
    ),
    "criterion_coefficients": Spec(
        "The mixed model of each criterion: log-odds of a better level against the reference model, with 95% "
        "Wald intervals",
        labels={"criterion": "Criterion", "variable": "Variable", "level": "Level"},
        decimals={"estimate": 2, "std_error": 2, "ci_low": 2, "ci_high": 2, "z": 2},
        rows_by="criterion",
    ),
    "criterion_model_contrasts": Spec(
        "Every pair of models compared on each criterion (emmeans, log-odds; p adjusted as the column says)",
        labels={"contrast": "Contrast", "level_a": "Model", "level_b": "Against", "adjust": "Adjustment"},
        hide=("contrast",),
        decimals={"estimate": 2, "std_error": 2, "z": 2},
        rows_by="criterion",
    ),
    "criterion_r2": Spec(
        "Nakagawa's R² of each criterion's model: marginal (fixed effects) and conditional (with the random "
        "intercepts)",
        labels={
            "criterion": "Criterion",
            "formula": "Formula",
            "n_ratings": "Ratings",
            "r2_marginal": "Marginal R²",
            "r2_conditional": "Conditional R²",
            "var_fixed": "Fixed variance",
            "var_random": "Random variance",
            "converged": "Converged",
        },
        decimals={"r2_marginal": 3, "r2_conditional": 3, "var_fixed": 3, "var_random": 3},
    ),
    "criterion_model_tiers": Spec(
        "Each criterion's models in significance tiers over all languages, from its mixed model: the best, and "
        "every model no contrast separates from it, then the next (emmeans contrasts unadjusted, Holm within each "
        "round)",
        labels={"criterion": "Criterion", "estimate": "Log-odds against the reference"},
        decimals={"estimate": 2},
        rows_by="criterion",
    ),
    "interannotator_agreement": Spec(
        "Agreement between the annotators, per criterion over all languages and per language: Krippendorff's alpha "
        "with its 95% bootstrap interval, Cohen's weighted kappa where two annotators rated, and the counts behind them",
        labels={
            "criterion": "Criterion",
            "measure": "Level of measurement",
            "alpha": "Krippendorff's alpha",
            "kappa": "Weighted kappa",
            "n_answers": "Answers rated twice or more",
            "n_pairs": "Pairs of ratings",
            "n_annotators": "Annotators",
        },
        decimals={"alpha": 3, "ci_low": 3, "ci_high": 3, "kappa": 3},
        rows_by="criterion",
    ),
    "collection_tests": Spec(
        "Each metric per language: {collection_a} against {collection_b} questions, p corrected by Holm's method "
        "over every test of the table",
        labels={
            "n_a": "Values: {collection_a}",
            "n_b": "Values: {collection_b}",
            "mean_a": "Mean: {collection_a}",
            "mean_b": "Mean: {collection_b}",
            "difference": "Difference",
            "ks_d": "KS D",
            "test": "Test",
            "p_holm": "p (Holm)",
        },
        hide=("collection_a", "collection_b"),
        decimals={"mean_a": 3, "mean_b": 3, "difference": 3, "ks_d": 3},
        p_values=("p_value", "p_holm"),
        rows_by="metric",
    ),
}


# The short-text evaluation of the language identification (notebooks 03 and 10; analyses/short_text.py).
_LENGTH_LABELS = {
    f"{value}_{chars}": f"{words} {chars}"
    for chars in (20, 50, 100, 200)
    for value, words in (("engine", "engine"), ("pct_correct", "% right"), ("pct_neighbour", "% neighbour"))
}
SPECS |= {
    "language_id_accuracy": Spec(
        "How each language's answers are judged: the route, the shortest answer judged (characters), and per "
        "length of held-out pieces the engine, the % judged in the language and the % given a close neighbour's "
        "verdict (a dash: too short to judge)",
        labels={"route": "Route", "min_chars": "Judged from", **_LENGTH_LABELS},
        decimals={f"pct_{v}_{c}": 1 for v in ("correct", "neighbour") for c in (20, 50, 100, 200)},
    ),
    "short_text_goals": Spec(
        "The goals of the routing over every language measured",
        labels={"goal": "Goal", "n_languages": "Languages", "n_met": "Met", "worst": "Worst", "missed_by": "Missed by"},
    ),
    "short_text_by_length": Spec(
        "Per route and piece length, over every language measured",
        labels={
            "route": "Route",
            "chars": "Characters",
            "n_languages": "Languages",
            "mean_pct_correct": "Mean % right",
            "lowest_pct_correct": "Lowest % right",
            "pct_languages_too_short": "% of languages too short to judge",
            "highest_pct_neighbour": "Most % neighbour",
            "n_judged_by_lingua": "Languages judged by lingua",
        },
        decimals={
            "mean_pct_correct": 2,
            "lowest_pct_correct": 1,
            "pct_languages_too_short": 1,
            "highest_pct_neighbour": 1,
        },
        rows_by="route",
    ),
    "routing_beside_paper": Spec(
        "The paper's route and the new routing, per language: % of held-out pieces of each length judged in the "
        "language, and at the median length of the release's model answers",
        labels={
            "paper_route": "Paper's route",
            "new_min_chars": "New: judged from",
            "new_engines": "New: engines",
            "median_chars": "Answers' median length",
            "paper_pct_at_median": "Paper % at median",
            "new_pct_at_median": "New % at median",
            **{f"{who}_pct_{c}": f"{who.capitalize()} % {c}" for who in ("paper", "new") for c in (20, 50, 100, 200)},
        },
        decimals={
            "median_chars": 0,
            "paper_pct_at_median": 1,
            "new_pct_at_median": 1,
            **{f"{who}_pct_{c}": 1 for who in ("paper", "new") for c in (20, 50, 100, 200)},
        },
    ),
    "short_text_acceptance": Spec(
        "Close neighbours' pieces judged in the expected language (%): by the routing's engine with the prior, and "
        "by that engine alone",
        labels={
            "expected": "Expected",
            "neighbour": "Written in",
            "chars": "Characters",
            "engine": "Engine",
            "n_pieces": "Pieces",
            "pct_taken_for_expected": "% taken for expected (prior)",
            "pct_taken_raw": "% taken for expected (engine alone)",
        },
        decimals={"pct_taken_for_expected": 1, "pct_taken_raw": 1},
        rows_by="expected",
    ),
}


def spec_for(name: str | None) -> Spec:
    """The spec of the table saved as `name`.csv (a key starting with `*` matches by suffix); generic
    labels and two decimals for a table without one."""
    if name in SPECS:
        return SPECS[name]
    for key, spec in SPECS.items():
        if key.startswith("*") and name and name.endswith(key[1:]):
            return spec
    return Spec("")
