"""The orders and labels of the CaLMQA study, as its database gives them (analysis/pipeline/release.py),
for tests of tables and charts that need no database."""

from analysis.analyses import dimensions
from analysis.io import calmqa

PAPER_MODELS = [m.display_name for m in calmqa.MODELS]
CALMQA_ORDERS = dimensions.Orders(
    PAPER_MODELS,
    [],
    [],
    question_types=calmqa.QUESTION_TYPES,
    question_type_labels=calmqa.QUESTION_TYPE_LABELS,
    resource_levels=calmqa.RESOURCE_LEVELS,
    resource_level_labels={level: level for level in calmqa.RESOURCE_LEVELS},
    collections=tuple(calmqa.COLLECTION_LABELS),
    collection_labels=calmqa.COLLECTION_LABELS,
)


def calmqa_orders(
    models: list[str], languages: list[str], labels: list[str], first_low_resource: str | None = None
) -> dimensions.Orders:
    """CaLMQA's orders for these models and languages (high-resource ones before `first_low_resource`)."""
    low = languages.index(first_low_resource) if first_low_resource in languages else len(languages)
    levels = {language: "high" if i < low else "low" for i, language in enumerate(languages)}
    return dimensions.Orders(
        models,
        languages,
        labels,
        level_starts=(first_low_resource,) if first_low_resource else (),
        question_types=CALMQA_ORDERS.question_types,
        question_type_labels=CALMQA_ORDERS.question_type_labels,
        resource_levels=CALMQA_ORDERS.resource_levels,
        resource_level_labels=CALMQA_ORDERS.resource_level_labels,
        collections=CALMQA_ORDERS.collections,
        collection_labels=CALMQA_ORDERS.collection_labels,
        levels_of=levels,
    )
