"""Which questions a notebook counts, and how a report names them: the paper's selection (its
human-collected culturally specific questions, those of its Figure 6) for the paper's study, every
question for any other. Notebooks 01 (its category figures) and 02 (the topic similarity) share it; its
own module, so that a change to either notebook's analysis does not rerun the other.
"""

from . import dimensions

# The paper's Figure 6: languages, their human-collected culturally specific questions.
FIGURE6_SELECTION = ("language", "specific", "human")


def selection(question_type: str | None, collection: str | None, paper: str | None) -> tuple[str | None, str | None]:
    """The questions whose categories are compared: a parameter `default` is the paper's selection
    (human-collected culturally specific questions: its agnostic questions carry their English original's
    category) for the paper's study, and every question (None) for any other."""
    paper_type, paper_collection = FIGURE6_SELECTION[1:]
    return (
        (paper_type if paper else None) if question_type == "default" else question_type,
        (paper_collection if paper else None) if collection == "default" else collection,
    )


def describe_selection(question_type: str | None, collection: str | None, orders: dimensions.Orders) -> str:
    """The filtered questions in words, e.g. `culturally specific human-collected questions`, with the
    study's labels of the question type and the collection."""
    kind = f"{orders.question_type_labels.get(question_type, question_type)} " if question_type else ""
    source = f"{orders.collection_labels.get(collection, collection)} " if collection else ""
    return f"{kind}{source}questions"
