"""Answers as a reader compares them: each question (its text and English translation side by side) with
every model's answer beside the others, each answer's verdicts as badges (`analyses.answers.badges`).
The explorer shows a page of them at a time; the reports' drill-down carries them to the browser.

All text from the data is escaped (`core.text.inert`), or, for an answer rendered as Markdown, rendered
by markdown-it-py with raw HTML off and then cleaned by nh3 (Ammonia's allow-list: no script, no event
attribute, no `javascript:` link); an answer's block takes its direction from its text (`dir="auto"`), so
Arabic, Hebrew and Pashto run right to left.
"""

import polars as pl

from ..analyses.answers import Badge, badges
from ..core.text import inert

# The HTML classes a browser test (and a reader's stylesheet) finds the comparison by.
PANEL_CLASS = "calmqa-comparison"
CHOSEN_CLASS = "calmqa-chosen"
# The attribute of an answer's card that holds its model's name (the drill-down marks the chosen one).
MODEL_ATTRIBUTE = "data-model"

# Badge kinds: a failure (warm), a note (grey), fine (green), a rating or a metric (blue).
CSS = f"""<style>
.{PANEL_CLASS} {{ max-width: 100%; }}
.calmqa-question {{ border-top: 2px solid #888; margin-top: 1em; padding-top: 0.5em; }}
.calmqa-question-texts {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 0.8em; }}
.calmqa-answers {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 0.6em; margin-top: 0.5em; }}
.calmqa-answer {{ border: 1px solid #ccc; border-radius: 4px; padding: 0.4em; font-size: 0.9em; min-width: 0; }}
.calmqa-answer.{CHOSEN_CLASS} {{ border: 2px solid #000; background: #fffbe6; }}
.calmqa-text {{ white-space: pre-wrap; overflow-wrap: anywhere; max-height: 18em; overflow-y: auto; }}
.calmqa-markdown {{ white-space: normal; }}
.calmqa-markdown p, .calmqa-markdown ul, .calmqa-markdown ol {{ margin: 0.2em 0 0.4em 0; }}
.calmqa-markdown ul, .calmqa-markdown ol {{ padding-left: 1.3em; }}
.calmqa-question-text {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
.calmqa-label {{ font-weight: bold; margin-top: 0.3em; }}
.calmqa-meta {{ color: #555; font-size: 0.85em; }}
.calmqa-badge {{ display: inline-block; border-radius: 3px; padding: 0 0.35em; margin: 0.1em 0.2em 0.1em 0;
  font-size: 0.8em; border: 1px solid; }}
.calmqa-badge-fail {{ background: #fde0d2; border-color: #b3400a; color: #7a2a05; }}
.calmqa-badge-note {{ background: #eeeeee; border-color: #888; color: #333; }}
.calmqa-badge-ok {{ background: #e3f1e3; border-color: #3b7d3b; color: #1f4d1f; }}
.calmqa-badge-rating, .calmqa-badge-metric {{ background: #e1ecf7; border-color: #2f6aa3; color: #163e66; }}
</style>"""


def shorten(text: str | None, limit: int) -> str:
    """`text` on one line, cut to `limit` characters (with an ellipsis)."""
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown_html(text: str) -> str:
    """`text` as Markdown rendered to HTML and sanitised: raw HTML in it is shown as text, and what the
    renderer makes passes nh3's allow-list (links keep only safe schemes and get `rel="noopener
    noreferrer"`)."""
    import nh3
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").enable("strikethrough").render(text)
    return nh3.clean(rendered, link_rel="noopener noreferrer")


def text_block(label: str, text: str | None, css: str = "calmqa-text", markdown: bool = False) -> str:
    """A labelled block of text from the data: escaped, or rendered as sanitised Markdown."""
    body = markdown_html(text or "") if markdown else inert(text or "", "html")
    classes = f"{css} calmqa-markdown" if markdown else css
    return (
        f'<div><div class="calmqa-label">{inert(label, "html")}</div>'
        f'<div class="{classes}" dir="auto">{body}</div></div>'
    )


def badge_html(badge: Badge) -> str:
    title = f' title="{inert(badge.explanation, "html")}"' if badge.explanation else ""
    return f'<span class="calmqa-badge calmqa-badge-{badge.kind}"{title}>{inert(badge.text, "html")}</span>'


def answer_card(answer: dict, has_surface: bool, chosen: bool, markdown: bool = False) -> str:
    """One answer: its model, its length, its verdicts and its text (and its English translation)."""
    classes = "calmqa-answer" + (f" {CHOSEN_CLASS}" if chosen else "")
    title = inert(answer["model_name"], "html") + (" · <em>chosen model</em>" if chosen else "")
    parts = [
        f'<div class="{classes}" {MODEL_ATTRIBUTE}="{inert(answer["model_name"], "html")}">'
        f'<div class="calmqa-label">{title}</div>',
        f'<div class="calmqa-meta">{answer["n_bytes"]:,} bytes</div>',
        f"<div>{''.join(badge_html(b) for b in badges(answer, has_surface))}</div>",
        text_block("Answer", answer["text"], markdown=markdown)
        if answer["text"]
        else '<div class="calmqa-label">Answer</div><div class="calmqa-text"><em>(empty)</em></div>',
    ]
    if answer["text_en"]:
        parts.append(text_block("English translation", answer["text_en"], markdown=markdown))
    parts.append("</div>")
    return "".join(parts)


def question_html(
    rows: pl.DataFrame, has_surface: bool, chosen_model: str | None = None, markdown: bool = False
) -> str:
    """One question (its original text and English translation side by side) and every answer to it side
    by side: the chosen model's first and marked, then the other models', then the human references."""
    q = rows.row(0, named=True)
    meta = " · ".join(
        str(q[c]) for c in ("language", "question_type", "category", "collection", "question_name") if q[c] is not None
    )
    texts = [text_block(f"Question ({q['language']})", q["question_text"], "calmqa-question-text")]
    if q["question_text_en"] and q["question_text_en"] != q["question_text"]:
        texts.append(text_block("In English", q["question_text_en"], "calmqa-question-text"))
    chosen = pl.lit(False) if chosen_model is None else pl.col("model_name") == chosen_model
    ordered = rows.with_columns(_rank=pl.when(chosen).then(0).when(~pl.col("is_human")).then(1).otherwise(2)).sort(
        "_rank", maintain_order=True
    )
    cards = [
        answer_card(a, has_surface, chosen_model is not None and a["model_name"] == chosen_model, markdown)
        for a in ordered.iter_rows(named=True)
    ]
    return (
        f'<div class="calmqa-question"><div class="calmqa-meta">{inert(meta, "html")}</div>'
        f'<div class="calmqa-question-texts">{"".join(texts)}</div>'
        f'<div class="calmqa-answers">{"".join(cards)}</div></div>'
    )


def answers_html(
    answers: pl.DataFrame,
    has_surface: bool,
    limit: int = 5,
    chosen_model: str | None = None,
    questions: list[int] | None = None,
    page: int = 0,
    markdown: bool = True,
) -> str:
    """Page `page` (of `limit` questions each) of `questions` (by default every question of `answers`,
    in their order), each with its answers side by side (`question_html`), answers rendered as sanitised
    Markdown (or as plain text)."""
    question_list = answers["question_id"].unique(maintain_order=True).to_list() if questions is None else questions
    if not question_list:
        return f'<div class="{PANEL_CLASS}"><p>No answer matches these filters.</p></div>'
    pages = max((len(question_list) + limit - 1) // limit, 1)
    page = min(max(page, 0), pages - 1)
    shown = question_list[page * limit : (page + 1) * limit]
    parts = [CSS, f'<div class="{PANEL_CLASS}">']
    parts.append(
        f'<p class="calmqa-meta">Questions {page * limit + 1:,}–{page * limit + len(shown):,} of '
        f"{len(question_list):,} (page {page + 1} of {pages}).</p>"
    )
    by_question = answers.filter(pl.col("question_id").is_in(shown)).partition_by("question_id", as_dict=True)
    for question_id in shown:
        parts.append(question_html(by_question[(question_id,)], has_surface, chosen_model, markdown))
    parts.append("</div>")
    return "\n".join(parts)
