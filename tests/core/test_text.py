"""The one way text from the data enters Markdown and HTML (analysis/core/text.py), each output written out by
hand: `inert` in both markups, `script_json` in a <script> element, and `skeleton`, what a text looks like."""

import pytest

from analysis.core import text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("[x](https://e.org)", "\\[x\\]\\(https\\:\\/\\/e\\.org\\)"),
        ("**b**  and\n# h", "\\*\\*b\\*\\* and \\# h"),  # line breaks and runs of spaces: one space
        ("a_b`c`~", "a\\_b\\`c\\`\\~"),
        (3.5, "3\\.5"),  # made a string
        ("Модель 7B", "Модель 7B"),
    ],
)
def test_inert_markdown_escapes_every_ascii_punctuation_character(given, expected):
    assert text.inert(given) == expected
    assert text.inert(given, "markdown") == expected


def test_inert_html_escapes_tags_ampersands_and_both_quotes():
    assert (
        text.inert("<b a=\"1\" c='2'>R&D</b>", "html") == "&lt;b a=&quot;1&quot; c=&#x27;2&#x27;&gt;R&amp;D&lt;/b&gt;"
    )
    assert text.inert("a\n  b", "html") == "a\n  b"  # HTML keeps the text's spaces as they are


def test_an_unknown_markup_is_refused_by_name():
    with pytest.raises(ValueError, match="markup is 'latex'; expected one of markdown, html"):
        text.inert("x", "latex")


def test_script_json_cannot_end_its_script_element():
    value = {"b": "</script><x>", "a": "R&D \u2028\u2029", "é": 1}
    assert text.script_json(value) == (
        '{"b": "\\u003c/script\\u003e\\u003cx\\u003e", "a": "R\\u0026D \\u2028\\u2029", "é": 1}'
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [("ВЕТА 70В", "BETA 70B"), ("ΑΒΕ", "ABE"), ("l", "1"), ("rn", "m")],
)
def test_texts_that_look_alike_have_one_skeleton(a, b):
    assert text.skeleton(a) == text.skeleton(b)


def test_texts_that_do_not_look_alike_have_different_skeletons():
    assert text.skeleton("BETA") != text.skeleton("BETO")
    assert text.skeleton("é") == "e\u0301"  # decomposed


def test_script_json_keeps_the_order_of_keys_and_non_ascii_text():
    assert text.script_json({"z": "ü", "a": [1, None]}) == '{"z": "ü", "a": [1, null]}'
