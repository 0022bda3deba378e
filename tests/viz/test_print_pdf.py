"""Print PDFs of every chart (viz/print_pdf.py): written by save_figure for every figure, without the chart's
title (the paper's caption says what it is), sized for a page (6.3 in) or a column (3.0 in, at most 4 in
tall) of a paper with cell labels at 6 pt or more and every other text at 7 pt or
more when printed at that width, byte-stable with their fonts embedded, every script of the data drawn,
and Arabic and Pashto letters joined.

Everything is read back from the PDFs themselves: the page size from the MediaBox, and each glyph, its
font, its size and its position from the content stream (a small interpreter of the operators svg2pdf
writes: q, Q, cm, Tf, Tm, Tj), its character from the font's ToUnicode map.
"""

from __future__ import annotations

import io
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import polars as pl
import pypdf
import pytest
import vl_convert
from orders import calmqa_orders
from pypdf.generic import ContentStream

from analysis.analyses import dimensions
from analysis.io.calmqa import MODELS
from analysis.viz import charts, export, print_pdf, theme

PAGE, COLUMN = theme.PRINT_WIDTHS["page"], theme.PRINT_WIDTHS["column"]
# A figure of a column's width is at most 4 in tall: it shares its column with the text.
COLUMN_HEIGHT = 4 * theme.POINTS_PER_INCH
MIN_CELL_LABEL, MIN_TEXT = 6.0, 7.0
# A cell's label: a number (with its sign, decimals, thousands separators or %) or a status's short label.
# d3's format writes a negative number with the minus sign U+2212.
CELL_LABEL = re.compile(
    r"^([-\u2212]?[\d,]+(\.\d+)?%?|" + "|".join(re.escape(s["label"]) for s in theme.STATUS_STYLES.values()) + ")$"
)


# ---------------------------------------------------------------- reading a PDF back


@dataclass(frozen=True)
class Glyph:
    font: str
    cid: int
    char: str
    size: float  # effective size in points: the font size times the scale of the text and current matrices
    x: float
    y: float
    element: tuple  # the current matrix: the glyphs of one text element share it


@dataclass(frozen=True)
class TextRun:
    text: str
    size: float
    font: str
    glyphs: tuple[Glyph, ...]


def _multiply(a: list[float], b: list[float]) -> list[float]:
    """The product a x b of two PDF matrices [a b c d e f]."""
    return [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]


def _to_unicode(font) -> dict[int, str]:
    cmap = font["/ToUnicode"].get_object().get_data().decode("latin-1")
    chars = {}
    for block in re.findall(r"beginbfchar(.*?)endbfchar", cmap, re.S):
        for cid, text in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            chars[int(cid, 16)] = bytes.fromhex(text).decode("utf-16-be")
    for block in re.findall(r"beginbfrange(.*?)endbfrange", cmap, re.S):
        for low, high, start in re.findall(r"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            first = int(start, 16)
            for offset, cid in enumerate(range(int(low, 16), int(high, 16) + 1)):
                chars[cid] = chr(first + offset)
    return chars


def read_pdf(path: Path) -> tuple[float, float, list[Glyph]]:
    """The page's width and height in points, and every glyph drawn on it."""
    reader = pypdf.PdfReader(path)
    assert len(reader.pages) == 1, f"{path.name}: {len(reader.pages)} pages"
    page = reader.pages[0]
    fonts = {name: font.get_object() for name, font in page["/Resources"].get("/Font", {}).items()}
    maps = {name: _to_unicode(font) for name, font in fonts.items()}
    matrix, stack, glyphs = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], [], []
    font, font_size, text_matrix = None, 0.0, [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    for operands, operator in ContentStream(page.get_contents(), reader).operations:
        if operator == b"q":
            stack.append(matrix)
        elif operator == b"Q":
            matrix = stack.pop()
        elif operator == b"cm":
            matrix = _multiply([float(v) for v in operands], matrix)
        elif operator == b"Tf":
            font, font_size = str(operands[0]), float(operands[1])
        elif operator == b"Tm":
            text_matrix = [float(v) for v in operands]
        elif operator == b"Tj":
            data = operands[0].original_bytes if hasattr(operands[0], "original_bytes") else bytes(operands[0])
            rendering = _multiply(text_matrix, matrix)
            scale = math.sqrt(abs(rendering[0] * rendering[3] - rendering[1] * rendering[2]))
            for i in range(0, len(data), 2):
                cid = int.from_bytes(data[i : i + 2], "big")
                glyphs.append(
                    Glyph(
                        str(fonts[font]["/BaseFont"]),
                        cid,
                        maps[font].get(cid, ""),
                        round(font_size * scale, 2),
                        rendering[4],
                        rendering[5],
                        tuple(round(v, 3) for v in matrix),
                    )
                )
    box = page.mediabox
    return float(box.width), float(box.height), glyphs


def text_runs(glyphs: list[Glyph]) -> list[TextRun]:
    """The glyphs grouped into the text elements they were drawn from, blanks left out."""
    runs = []
    for (_element, size, font), group in groupby(glyphs, key=lambda g: (g.element, g.size, g.font)):
        group = tuple(group)
        text = "".join(g.char for g in group)
        if text.strip():
            runs.append(TextRun(text.strip(), size, font, group))
    return runs


def print_problems(path: Path) -> list[str]:
    """Why the figure at `path` does not print legibly at a page's or a column's width: wider than a page,
    or a text smaller than its minimum once the figure is scaled to the width it is printed at (a
    figure up to a column wide prints in a column, one up to a page wide on a page, at its own size)."""
    width, height, glyphs = read_pdf(path)
    problems = []
    if width > PAGE + 0.5:
        problems.append(f"{width:.0f} pt wide, more than a page's {PAGE:.0f} pt")
    if width <= COLUMN + 0.5 and height > COLUMN_HEIGHT + 0.5:
        problems.append(f"{height / 72:.2f} in tall, taller than a column's figure may be ({COLUMN_HEIGHT / 72:g} in)")
    scale = min(1.0, (COLUMN if width <= COLUMN + 0.5 else PAGE) / width)
    for run in text_runs(glyphs):
        printed = run.size * scale
        minimum = MIN_CELL_LABEL if CELL_LABEL.match(run.text) else MIN_TEXT
        if printed < minimum - 0.01:
            problems.append(f"{run.text[:40]!r} prints at {printed:.1f} pt (< {minimum:g} pt)")
    if any(g.cid == 0 for g in glyphs):
        problems.append("a character no installed font draws (.notdef)")
    return problems


# ---------------------------------------------------------------- charts to print


def text_chart(texts: list[str]):
    """Each text on its own line, drawn as the suite draws any chart's text."""
    alt = theme.altair()
    table = pl.DataFrame({"line": list(range(len(texts))), "text": texts})
    return (
        alt.Chart(table)
        .mark_text(align="left", fontSize=10)
        .encode(y=alt.Y("line:O", axis=None), text="text:N")
        .properties(width=400)
    )


def model_language_cells(n_languages: int = 23) -> tuple[pl.DataFrame, dimensions.Orders]:
    """Synthetic cells shaped like the suite's widest heatmaps: every model, `n_languages` languages,
    both question types, three-digit values, and a cell of each status."""
    models = [m.display_name for m in MODELS]
    languages = [f"Language {i:02d}" + (" †" if i % 7 == 3 else "") for i in range(n_languages)]
    rows = [
        {
            "model": m,
            "language": language,
            "language_label": language,
            "question_type": qt,
            "value": float((i * 37 + j * 11) % 101),
            "status": None,
        }
        for i, m in enumerate(models)
        for j, language in enumerate(languages)
        for qt in ("specific", "agnostic")
    ]
    rows[5]["status"], rows[5]["value"] = "provider errors only", None
    rows[9]["status"], rows[9]["value"] = "language not identified", None
    orders = calmqa_orders(models, languages, languages, languages[n_languages // 2])
    return pl.DataFrame(rows), orders


def wide_heatmap(n_languages: int = 23):
    cells, orders = model_language_cells(n_languages)
    return charts.model_language_heatmap(
        cells, "value", orders, title="A share by model and language", value_title="% of something", better="higher"
    )


# ---------------------------------------------------------------- size and type


@pytest.fixture(scope="module")
def heatmap_pdf(tmp_path_factory) -> Path:
    return print_pdf.save(wide_heatmap(), tmp_path_factory.mktemp("print") / "heatmap.pdf")


@pytest.mark.slow
def test_a_model_language_heatmap_prints_on_a_page_with_legible_labels(heatmap_pdf):
    path = heatmap_pdf
    width, height, glyphs = read_pdf(path)
    assert COLUMN < width <= PAGE
    assert print_problems(path) == []
    runs = text_runs(glyphs)
    cell_sizes = {r.size for r in runs if r.text == "100"}  # cell labels, and the legend's end
    tick_sizes = {r.size for r in runs if r.text in {m.display_name for m in MODELS}}
    assert min(cell_sizes) == theme.PRINT_CELL_LABEL_SIZE and min(tick_sizes) >= MIN_TEXT
    # Both panels stacked, each with every model, and the statuses labelled.
    assert sum(r.text == "Claude 3 Opus" for r in runs) == 2
    assert {"err", "n/i"} <= {r.text for r in runs}


@pytest.mark.slow
def test_a_cell_without_a_value_is_printed_without_a_label(tmp_path):
    cells, orders = model_language_cells(4)
    cells = cells.with_columns(value=pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise(pl.col("value")))
    chart = charts.model_language_heatmap(cells, "value", orders, title="t", value_title="%", better="higher")
    texts = {run.text for run in text_runs(read_pdf(print_pdf.save(chart, tmp_path / "null.pdf"))[2])}
    assert "null" not in texts and "NaN" not in texts and "100" in texts


@pytest.mark.slow
def test_the_print_check_finds_a_figure_too_wide_for_a_page(tmp_path):
    path = print_pdf.save(wide_heatmap(n_languages=40), tmp_path / "too_wide.pdf")
    problems = print_problems(path)
    assert any("more than a page" in p for p in problems)
    assert any("prints at" in p for p in problems)


def test_the_print_check_finds_text_too_small(tmp_path):
    chart = text_chart(["small"]).mark_text(fontSize=5)
    assert any("'small' prints at 5.0 pt" in p for p in print_problems(print_pdf.save(chart, tmp_path / "small.pdf")))


def test_save_figure_writes_a_print_pdf_for_every_kind_of_chart(tmp_path):
    alt = theme.altair()
    table = pl.DataFrame({"model": ["GPT-4o", "Aya 13B"], "share": [40.0, 60.0]})
    bars = theme.print_layout(
        alt.Chart(table).mark_bar().encode(x="share:Q", y="model:N").properties(width=300, title="Bars"), "column", 0.5
    )
    export.save_figure(bars, table, tmp_path, "bars")
    assert {p.suffix for p in tmp_path.iterdir()} == {".csv", ".svg", ".png", ".pdf"}
    width, _, _ = read_pdf(tmp_path / "bars.pdf")
    assert width <= COLUMN and print_problems(tmp_path / "bars.pdf") == []


@pytest.mark.slow
def test_print_pdfs_are_byte_stable_with_embedded_truetype_fonts(heatmap_pdf, tmp_path):
    first = heatmap_pdf.read_bytes()
    assert print_pdf.save(wide_heatmap(), tmp_path / "again.pdf").read_bytes() == first
    assert b"/CreationDate" not in first and b"/FontFile2" in first and b"/Subtype /Type3" not in first


# Several fonts (regular, bold, other scripts): svg2pdf numbers their objects in a different order each time.
MIXED_FONTS = ["Hello", "Здравствуйте", "پښتو", "中文", "हिन्दी"]


def test_canonical_pdf_gives_one_byte_sequence_for_the_orders_svg2pdf_writes():
    bold = text_chart(["Bold"]).mark_text(align="left", fontSize=10, fontWeight="bold")
    spec = json.dumps(print_pdf.print_spec(theme.altair().vconcat(text_chart(MIXED_FONTS), bold)))
    raw = {vl_convert.vegalite_to_pdf(spec) for _ in range(8)}
    assert len({print_pdf.canonical_pdf(pdf) for pdf in raw}) == 1
    pdf = print_pdf.canonical_pdf(next(iter(raw)))
    assert pypdf.PdfReader(io.BytesIO(pdf)).pages[0].mediabox.width > 0


def test_the_print_version_leaves_the_title_to_the_papers_caption(tmp_path):
    chart = text_chart(["x"]).properties(title=theme.altair().TitleParams("A title", subtitle="and its subtitle"))
    assert "title" not in print_pdf.print_spec(chart) and chart.to_dict()["title"]["text"] == "A title"
    _, _, glyphs = read_pdf(print_pdf.save(chart, tmp_path / "untitled.pdf"))
    assert "".join(g.char for g in glyphs).strip() == "x"


def test_the_print_check_finds_a_column_figure_taller_than_4_in(tmp_path):
    tall = theme.print_layout(text_chart([str(i) for i in range(40)]).properties(width=150, height=400), "column")
    assert any("taller than a column's" in p for p in print_problems(print_pdf.save(tall, tmp_path / "tall.pdf")))


# ---------------------------------------------------------------- every figure of `make figures`


def test_every_figure_has_a_print_pdf_that_fits_a_page_or_a_column(built_reports):
    figures = sorted((built_reports / "figures").glob("*/*.svg"))
    assert figures
    problems, sizes = {}, []
    for svg in figures:
        pdf = svg.with_suffix(".pdf")
        assert pdf.is_file(), f"{pdf.relative_to(built_reports)} is missing"
        width, height, glyphs = read_pdf(pdf)
        sizes.append(
            f"{pdf.parent.name}/{pdf.name}: {width / 72:.2f} x {height / 72:.2f} in, "
            f"text {min(g.size for g in glyphs if g.char.strip()):g}-{max(g.size for g in glyphs):g} pt"
        )
        problems.update({pdf.name: found} if (found := print_problems(pdf)) else {})
    print("\n".join(sizes))
    assert not problems, problems


# ---------------------------------------------------------------- scripts and shaping

ARABIC_LETTER = re.compile(r"[\u0620-\u064A\u066E-\u06D3\u06FA-\u06FF]")


def shaped_share(texts: list[str], tmp_path: Path) -> float:
    """Of the Arabic-script letters of `texts`, the share drawn with another glyph than the same letter
    standing alone (its isolated form): drawn in one PDF, so that glyph ids compare."""
    letters = sorted({c for text in texts for c in text if ARABIC_LETTER.match(c)})
    path = print_pdf.save(text_chart([*texts, " ".join(letters)]), tmp_path / "shaping.pdf")
    runs = text_runs(read_pdf(path)[2])
    isolated = {g.char: g.cid for g in runs[-1].glyphs if ARABIC_LETTER.match(g.char)}
    drawn = [g for run in runs[:-1] for g in run.glyphs if len(g.char) == 1 and ARABIC_LETTER.match(g.char)]
    assert drawn, "no Arabic-script letter was drawn"
    return sum(g.cid != isolated[g.char] for g in drawn) / len(drawn)


def test_arabic_and_pashto_letters_join(tmp_path):
    # Every letter of these words joins its neighbours: none may keep its isolated form.
    assert shaped_share(["پښتو", "ګټه", "عربي"], tmp_path) == 1.0


def test_the_join_check_finds_letters_that_do_not_join(tmp_path):
    # A zero-width non-joiner between the letters keeps each in its isolated form, as an unshaped renderer would.
    assert shaped_share(["\u200c".join("پښتو")], tmp_path) == 0.0


def test_right_to_left_words_run_right_to_left(tmp_path):
    path = print_pdf.save(text_chart(["پښتو"]), tmp_path / "rtl.pdf")
    run = text_runs(read_pdf(path)[2])[0]
    left_to_right = "".join(g.char for g in sorted(run.glyphs, key=lambda g: g.x))
    assert left_to_right == "پښتو"[::-1]


def test_real_arabic_and_pashto_questions_are_shaped(con, tmp_path):
    """Arabic-script text appears in no figure today (languages, models and categories are named in
    English); the release's own Arabic and Pashto questions stand in for the text a figure could show."""
    questions = con.sql("""
        SELECT language, text FROM questions WHERE language IN ('Arabic', 'Pashto') AND question_type = 'specific'
        QUALIFY row_number() OVER (PARTITION BY language ORDER BY question_id) <= 3 ORDER BY language, question_id
    """).pl()
    assert set(questions["language"]) == {"Arabic", "Pashto"}
    assert shaped_share([t[:80] for t in questions["text"]], tmp_path) > 0.6


# Scripts and letters beyond the data's first questions: Pashto's own letters, Hungarian, Faroese,
# Polynesian and Wolof diacritics, and Ethiopic (not a CaLMQA language, but Noto covers it).
EXTRA_SAMPLES = [
    "العربية",
    "پښتو ځ ښ ګ ړ",
    "हिन्दी",
    "עברית",
    "中文 简体 繁體",
    "日本語 ひらがな カタカナ",
    "한국어",
    "Русский",
    "Hőmérséklet űrhajó",
    "Føroyskt ð",
    "Faʻa Sāmoa lea faka-Tonga",
    "Wolof ëñŋ",
    "Setswana š",
    "አማርኛ",
]


def letters(text: str) -> str:
    """Letters, marks, digits, punctuation and spaces of `text`: emoji and other symbols are not a script."""
    return "".join(c for c in text if unicodedata.category(c)[0] in "LMNPZ")


def undrawn(texts: list[str], tmp_path: Path) -> list[str]:
    path = print_pdf.save(text_chart(texts), tmp_path / "scripts.pdf")
    return [run.text for run in text_runs(read_pdf(path)[2]) if any(g.cid == 0 for g in run.glyphs)]


def test_every_language_of_the_data_renders_as_glyphs(con, tmp_path):
    samples = con.sql("""
        SELECT language, text, text_en FROM questions
        QUALIFY row_number() OVER (PARTITION BY language ORDER BY question_id) <= 3
        ORDER BY language""").pl()
    assert samples["language"].n_unique() == 23
    texts = [letters(t)[:100] for t in samples["text"].to_list() + samples["text_en"].drop_nulls().to_list()]
    assert undrawn(texts + EXTRA_SAMPLES, tmp_path) == []


def test_the_glyph_check_can_fail(tmp_path):
    assert undrawn(["private use \ue000"], tmp_path) != []
