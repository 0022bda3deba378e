"""The tables of the reports, for people: each rendered with great_tables following the spec of the CSV it
is saved as (`table_specs.py`: its caption, labels, decimals, groups of rows, wide layout). Every row is
shown, missing values as a dash, never `null`; no dtype row, no `shape:`, no quotes.

The CSVs stay tidy and long (`export.save_table` writes them as they are): only what is displayed is
reshaped. `show(frame, name)` is the one way a notebook displays a table, and `notebook.setup()` makes
any other polars frame a notebook displays go through it too (with generic labels); `save` writes a
table's CSV and LaTeX, `show_beside` the paper's numbers beside the suite's.

The HTML is offline: great_tables adds a web-font `@import` only when asked for a Google font, which
this module never does, and `Table.html` removes any `@import` all the same. Text from the data is
escaped (great_tables escapes cell text; the few formatters here escape their own output).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import polars as pl

from ..analyses.paper_beside import counts_phrase
from ..core.text import inert
from ..io.calmqa import DISPLAY_NAMES as MODEL_DISPLAY_NAMES
from .table_specs import LABELS, MISSING, RESOURCE_LEVELS, Spec, Wide, spec_for

# Rows beyond which a table's LaTeX is a `longtable`, which breaks across pages.
LONG_TABLE_ROWS = 40
# A table is shown in a box at most this high, which scrolls when the table is longer.
SCROLLED_TABLE_HEIGHT = "32em"
SCROLLED_TABLE_CLASS = "calmqa-table-scroll"
# The reports' font (the figures' too: theme.py), before the browser's own.
FONT = ["Noto Sans", "DejaVu Sans", "sans-serif"]


def label(column: str, spec: Spec) -> str:
    """A column's label: the spec's, the shared one, or its name in words."""
    if column in spec.labels:
        return spec.labels[column]
    if column in LABELS:
        return LABELS[column]
    words = column.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _markdown_inline(text: str) -> str:
    """Escaped text with Markdown's `code`, **bold** and *italics* as HTML (notes of the claims registry)."""
    if text is None:
        return ""
    text = inert(text, "html")
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", text)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """`text` as LaTeX source that prints it as it is."""
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _markdown_latex(text: str) -> str:
    """`_markdown_inline` for LaTeX: `code` in typewriter, **bold**, *italics*, the rest escaped."""
    if text is None:
        return ""
    text = latex_escape(text)
    text = re.sub(r"`([^`]+)`", r"\\texttt{\1}", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\textbf{\1}", text)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\emph{\1}", text)


# Between a link's address and its text in a linked column (`Spec.links`), until it is drawn.
_LINK = "\x00"


def _link_html(value) -> str:
    if value is None:
        return ""
    url, text = value.split(_LINK, 1)
    return f'<a href="{inert(url, "html")}">{inert(text, "html")}</a>'


def _link_latex(value) -> str:
    if value is None:
        return ""
    url, text = value.split(_LINK, 1)
    return f"\\href{{{latex_escape(url)}}}{{{latex_escape(text)}}}"


def _p_value(value) -> str:
    if value is None:
        return ""
    return inert("< 0.001" if value < 0.001 else f"{value:.3f}", "html")


def _p_value_latex(value) -> str:
    if value is None:
        return ""
    return "$<$ 0.001" if value < 0.001 else f"{value:.3f}"


def _display_values(frame: pl.DataFrame, spec: Spec) -> pl.DataFrame:
    """The frame's values as a reader reads them: model keys as display names, booleans as yes/no, lists
    joined, resource levels in words, and the spec's renamings."""
    columns = []
    for name, dtype in frame.schema.items():
        column = pl.col(name)
        if name in spec.values:
            column = column.cast(pl.String).replace(spec.values[name])
        elif name in ("model", "level_a", "level_b") and dtype == pl.String:
            column = column.replace(MODEL_DISPLAY_NAMES)
        elif name == "resource_level" and dtype == pl.String:
            column = column.replace(RESOURCE_LEVELS)
        elif dtype == pl.Boolean:
            column = pl.when(column).then(pl.lit("yes")).when(~column).then(pl.lit("no"))
        elif isinstance(dtype, (pl.List, pl.Array)):
            column = column.cast(pl.List(pl.String)).list.join(", ")
        elif dtype == pl.String:
            column = pl.when(column.str.strip_chars() == "").then(None).otherwise(column)
        columns.append(column.alias(name))
    return frame.select(columns)


def _spread(frame: pl.DataFrame, wide: Wide) -> tuple[pl.DataFrame, dict[str, tuple[str, ...]], dict[str, str]]:
    """`frame` with one group of columns per value of `wide.across`; the spanners and the base column of
    every new column."""
    index = [c for c in frame.columns if c != wide.across and c not in wide.values]
    out = frame.select(index).unique(maintain_order=True)
    spanners, base = {}, {}
    for value, group_label in wide.groups.items():
        names = {c: f"{c}__{value}" for c in wide.values}
        part = frame.filter(pl.col(wide.across) == value).select(*index, *wide.values).rename(names)
        out = out.join(part, on=index, how="left", maintain_order="left", nulls_equal=True)
        spanners[group_label] = tuple(names.values())
        base.update({new: old for old, new in names.items()})
    return out, spanners, base


@dataclass(frozen=True)
class Table:
    """A rendered table: displayed as HTML in a notebook and in its report."""

    html: str
    rows: int

    def _repr_html_(self) -> str:
        return self.html


def _table(frame: pl.DataFrame, name: str | None, caption: str | None, medium: str):
    """The great_tables table of `frame` following the spec of `name`, for the `medium` ("html" or
    "latex"), and its title; None for a frame without rows."""
    from great_tables import GT

    spec = spec_for(name)
    first = frame.row(0, named=True) if frame.height else {}
    fill = {k: ("" if v is None else str(v)) for k, v in first.items()}
    title = (caption if caption is not None else spec.caption).format_map(_Defaulting(fill))
    if frame.height == 0:
        return None, title, spec
    without_values = [c for c in spec.hide_when_empty if c in frame.columns and frame[c].null_count() == frame.height]
    data = _display_values(frame, spec)
    linked = {c: u for c, u in spec.links.items() if c in data.columns and u in data.columns}
    data = data.with_columns(pl.concat_str(pl.col(u), pl.lit(_LINK), pl.col(c)).alias(c) for c, u in linked.items())
    hidden = (*spec.hide, *without_values, *linked.values())
    data = data.drop([c for c in hidden if c in data.columns])
    spanners: dict[str, tuple[str, ...]] = dict(spec.spanners)
    base: dict[str, str] = {}  # a spread column -> the column it was spread from
    if spec.wide is not None:
        data, spanners, base = _spread(data, spec.wide)
    digest = hashlib.sha256(f"{name}\0{title}\0{frame.write_csv()}".encode()).hexdigest()[:12]
    table = GT(data, groupname_col=spec.rows_by if spec.rows_by in data.columns else None, id=f"calmqa-table-{digest}")
    if title:
        table = table.tab_header(title=title)
    labels = {c: label(base.get(c, c), spec).format_map(_Defaulting(fill)) for c in data.columns}
    # great_tables types `cases` as a dict (invariant) of str | BaseText: a dict of str is one in fact.
    table = table.cols_label(cases=labels)  # type: ignore[arg-type]
    for group_label, columns in spanners.items():
        present = [c for c in columns if c in data.columns]
        if present:
            table = table.tab_spanner(label=group_label, columns=present)
    markdown, p_value = (_markdown_inline, _p_value) if medium == "html" else (_markdown_latex, _p_value_latex)
    for column, dtype in data.schema.items():
        source = base.get(column, column)
        if column == spec.rows_by:
            continue
        if source in spec.p_values and dtype.is_float():
            table = table.fmt(p_value, columns=column)
        elif source in spec.scientific and dtype.is_float():
            table = table.fmt_scientific(columns=column, decimals=1)
        elif dtype.is_float():
            table = table.fmt_number(columns=column, decimals=spec.decimals.get(source, 2))
        elif dtype.is_integer():
            table = table.fmt_integer(columns=column)
        elif source in spec.markdown:
            table = table.fmt(markdown, columns=column)
        elif source in linked:
            table = table.fmt(_link_html if medium == "html" else _link_latex, columns=column)
    table = table.sub_missing(missing_text=spec.missing if medium == "html" else spec.missing.replace(MISSING, "--"))
    if medium == "latex":
        return table.tab_options(table_font_size="9pt"), title, spec
    table = (
        table.opt_table_font(font=FONT, add=False)
        .opt_align_table_header(align="left")
        .tab_options(
            table_margin_left="0",
            table_font_size="14px",
            heading_title_font_size="15px",
            row_group_font_weight="bold",
            data_row_padding="3px",
            container_overflow_x="visible",
        )
    )
    if frame.height > 12:
        table = table.opt_row_striping()
    return table, title, spec


def show(frame: pl.DataFrame, name: str | None = None, caption: str | None = None) -> Table:
    """`frame` as a table for people, following the spec of `name` (the CSV it is saved as)."""
    table, title, spec = _table(frame, name, caption, "html")
    if table is None:
        words = inert(title or "This table", "html")
        return Table(f'<p class="calmqa-table-empty"><strong>{words}:</strong> {inert(spec.empty, "html")}.</p>', 0)
    # A long table scrolls in a box of its own, so that the report stays short enough to read through;
    # printed, it is shown whole (the reports' print stylesheet).
    page = (
        f'<div class="{SCROLLED_TABLE_CLASS}" style="max-height: {SCROLLED_TABLE_HEIGHT}; overflow-y: auto">'
        f"{_offline(table.as_raw_html())}</div>"
    )
    return Table(page, frame.height)


def latex(frame: pl.DataFrame, name: str | None = None, caption: str | None = None) -> str:
    """The same table as `show` draws, as LaTeX for a paper: booktabs rules, the caption, the labels,
    groups of rows and decimals of the spec (great_tables' `as_latex`; needs `booktabs`)."""
    table, title, spec = _table(frame, name, caption, "latex")
    if table is None:
        return f"% {latex_escape(title or 'This table')}: {latex_escape(spec.empty)}.\n"
    # A long table breaks across pages (the `longtable` package).
    return table.as_latex(use_longtable=frame.height > LONG_TABLE_ROWS).strip() + "\n"


class _Defaulting(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def _offline(page: str) -> str:
    """great_tables' HTML without anything that would load from the network (a web font's `@import`)."""
    return re.sub(r"@import\s+url\([^)]*\)[^;]*;", "", page)


def show_beside(frame: pl.DataFrame) -> Table:
    """The paper's numbers beside the suite's (`analyses.paper_beside.beside`), under a line that counts them
    by status, as report 08 shows its claims: the numbers that are not exact are shown, so that a difference
    is seen, and the exact ones are folded behind their count (a click opens them). When every number is
    exact the whole block is folded."""
    if frame.is_empty():
        return Table("", 0)
    exact = frame.filter(pl.col("status") == "exact")
    others = frame.filter(pl.col("status") != "exact")
    summary = f"<strong>Beside the paper</strong>: {inert(counts_phrase(frame), 'html')}."
    if others.is_empty():
        return Table(
            f'<details class="calmqa-beside"><summary>{summary}</summary>\n{show(exact, "beside_paper").html}\n'
            "</details>",
            frame.height,
        )
    parts = [f'<details class="calmqa-beside" open><summary>{summary}</summary>', show(others, "beside_paper").html]
    if not exact.is_empty():
        parts.append(
            f'<details class="calmqa-beside-exact"><summary>The {exact.height} exact '
            f"{'number' if exact.height == 1 else 'numbers'}</summary>\n{show(exact, 'beside_paper').html}\n</details>"
        )
    parts.append("</details>")
    return Table("\n".join(parts), frame.height)


def save(frame: pl.DataFrame, out_dir, name: str, caption: str | None = None) -> Table:
    """Write `frame` as `name`.csv (`export.save_table`, tidy and long) and the table as displayed as
    `name`.tex (LaTeX, `latex`); return it as a table to display."""
    from pathlib import Path

    from ..core import files, outputs
    from ..core.timings import timed
    from .export import files_line, save_table

    save_table(frame, out_dir, name)
    with timed("static export", format="tex", figure=name):
        files.write_text(Path(out_dir) / f"{name}.tex", latex(frame, name, caption))
    outputs.written(Path(out_dir) / f"{name}.tex", "tables.save")
    shown = show(frame, name, caption)
    return Table(shown.html + files_line(name, ("csv", "tex")), shown.rows)
