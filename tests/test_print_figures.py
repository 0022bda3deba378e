"""Print PDFs of heatmaps: written by save_figure, same palette as the Altair theme, fonts embedded,
byte-stable, and every script of the 23 languages drawn as glyphs (fonts-noto-core, fonts-noto-cjk)."""

import io
import unicodedata
import warnings

import matplotlib.pyplot as plt
import polars as pl
import pytest

from analysis.viz import export, heatmap, print_pdf, theme

# Scripts and letters beyond the data's first questions: Pashto's own letters, Hungarian, Faroese,
# Polynesian and Wolof diacritics, and Ethiopic (not a CaLMQA language, but Noto covers it).
EXTRA_SAMPLES = ["العربية", "پښتو ځ ښ ګ ړ", "हिन्दी", "עברית", "中文 简体 繁體", "日本語 ひらがな カタカナ",
                 "한국어", "Русский", "Hőmérséklet űrhajó", "Føroyskt ð", "Faʻa Sāmoa lea faka-Tonga",
                 "Wolof ëñŋ", "Setswana š", "አማርኛ"]


def letters(text: str) -> str:
    """Letters, marks, digits, punctuation and spaces of `text`: emoji and other symbols are not a script."""
    return "".join(c for c in text if unicodedata.category(c)[0] in "LMNPZ")


def missing_glyph_warnings(texts: list[str]) -> list[str]:
    with print_pdf.print_style(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = plt.figure(figsize=(8, 0.3 * len(texts)))
        for i, text in enumerate(texts):
            fig.text(0.01, 1 - (i + 1) / (len(texts) + 1), text)
        fig.savefig(io.BytesIO(), format="pdf", metadata=print_pdf.PDF_METADATA)
        plt.close(fig)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_every_language_of_the_data_renders_as_glyphs(con):
    samples = con.sql("""
        SELECT language, text, text_en FROM questions
        QUALIFY row_number() OVER (PARTITION BY language ORDER BY question_id) <= 5
        ORDER BY language""").pl()
    assert samples["language"].n_unique() == 23
    texts = [letters(t)[:120] for t in samples["text"].to_list() + samples["text_en"].drop_nulls().to_list()]
    assert missing_glyph_warnings(texts + EXTRA_SAMPLES) == []


def test_the_glyph_check_can_fail():
    assert missing_glyph_warnings(["private use \ue000"]) != []


def table() -> pl.DataFrame:
    return pl.DataFrame({
        "language": ["Arabic", "Arabic", "Hindi", "Hindi", "Arabic", "Hindi"],
        "model": ["m1", "m2", "m1", "m2", "m1", "m2"],
        "question_type": ["specific"] * 4 + ["agnostic"] * 2,
        "share": [0.1, 0.5, None, 0.9, 0.3, 0.7],
    })


def chart(**options):
    return heatmap.heatmap(table(), x="language", y="model", value="share", title="Share by model", value_format=".0%",
                           x_order=["Hindi", "Arabic"], **options)


def test_save_figure_writes_a_byte_stable_pdf_with_embedded_truetype_fonts(tmp_path):
    export.save_figure(chart(column="question_type"), table(), tmp_path / "a", "shares")
    export.save_figure(chart(column="question_type"), table(), tmp_path / "b", "shares")
    first, second = (tmp_path / "a" / "shares.pdf").read_bytes(), (tmp_path / "b" / "shares.pdf").read_bytes()
    assert first == second
    assert b"/CreationDate" not in first and b"/FontFile2" in first and b"/Subtype /Type3" not in first


def test_print_figure_uses_the_theme_palette_orders_and_formats():
    meta = heatmap.heatmap_meta(chart())
    with print_pdf.print_style():
        fig = print_pdf.heatmap_figure(table().filter(pl.col("question_type") == "specific"), meta)
    ax = fig.axes[0]
    assert ax.collections[0].get_cmap().name == theme.SEQUENTIAL_SCHEME
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Hindi", "Arabic"]
    assert sorted(t.get_text() for t in ax.texts) == ["10%", "50%", "90%"]
    plt.close(fig)


def test_only_heatmaps_get_a_pdf_and_a_table_without_their_columns_is_an_error(tmp_path):
    import altair as alt

    bars = alt.Chart(table()).mark_bar().encode(x="model", y="share")
    export.save_figure(bars, table(), tmp_path, "bars")
    assert not (tmp_path / "bars.pdf").exists()
    with pytest.raises(ValueError, match="lacks the columns"):
        export.save_figure(chart(), table().drop("share"), tmp_path, "broken")
    assert not list(tmp_path.glob("broken.*"))


@pytest.mark.parametrize("d3, value, expected", [
    ("d", 1234.0, "1234"), (",d", 1234.0, "1,234"), (".2f", 0.456, "0.46"), (".0%", 0.456, "46%"), (".1%", 0.5, "50.0%"),
])
def test_python_format_follows_d3(d3, value, expected):
    assert print_pdf.python_format(d3)(value) == expected
