"""Print versions of the suite's heatmaps: seaborn/matplotlib PDFs with embedded TrueType fonts.

Same palette as the Altair theme (`theme.SEQUENTIAL_SCHEME`, missing cells in `theme.MISSING_COLOUR`),
the same orders and value formats, and byte-identical files on every run: the PDF's creation date
is left out and fonts are embedded as Type 42 subsets.

Labels may be in any of the suite's scripts: the font list below falls back glyph by glyph from
Noto Sans to the Noto fonts of Arabic, Hebrew, Devanagari, Ethiopic and CJK (Debian's
fonts-noto-core and fonts-noto-cjk). Matplotlib draws glyphs without complex shaping: Arabic-script
letters appear in their isolated forms and right-to-left text in logical order, so figures should
label with English names, as the suite does.
"""

import math
import re
import warnings
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import seaborn as sns  # noqa: E402

from ..core import files  # noqa: E402
from .theme import MISSING_COLOUR, SEQUENTIAL_SCHEME, STATUS_STYLES  # noqa: E402

FONT_FAMILIES = [
    "Noto Sans", "Noto Sans Arabic", "Noto Sans Hebrew", "Noto Sans Devanagari", "Noto Sans Ethiopic",
    "Noto Sans CJK JP", "DejaVu Sans",
]
STYLE = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "font.family": FONT_FAMILIES,
    "font.size": 8,
    "axes.titlesize": 10,
    "axes.titlelocation": "left",
    "svg.hashsalt": "calmqa",
    "path.simplify": True,
}
# No creation date and a fixed producer: the same figure gives the same bytes on every run.
PDF_METADATA = {"CreationDate": None, "Producer": "calmqa-analysis (matplotlib)", "Creator": None}
CELL_INCHES = 0.32


@contextmanager
def print_style():
    """Matplotlib settings of every print figure."""
    with plt.rc_context(STYLE):
        yield


def python_format(d3_format: str):
    """A function formatting a number as the d3 format string `d3_format` would (the common cases)."""
    match = re.fullmatch(r"(,?)(?:\.(\d+))?([dfe%s]?)", d3_format or "")
    if not match:
        return lambda v: f"{v:g}"
    comma, precision, kind = match.groups()
    if kind in ("d", ""):
        spec = f"{comma}.0f" if kind == "d" or precision is None else f"{comma}.{precision}f"
    elif kind == "s":
        spec = "g"
    else:
        spec = f"{comma}.{precision or 6}{kind}"
    return lambda v: format(v, spec)


def _ordered(values: list, order: list | None) -> list:
    present = list(dict.fromkeys(values))
    if not order:
        return sorted(present, key=str)
    known = [v for v in order if v in present]
    return known + sorted((v for v in present if v not in known), key=str)


def check_columns(table: pl.DataFrame, meta: dict) -> None:
    missing = [c for c in (meta["x"], meta["y"], meta["value"], meta.get("column"), meta.get("status"))
               if c and c not in table.columns]
    if missing:
        raise ValueError(f"the table of heatmap {meta['title']!r} lacks the columns {missing}")


def heatmap_figure(table: pl.DataFrame, meta: dict) -> plt.Figure:
    """The matplotlib figure of a heatmap described by `meta` (from `heatmap.heatmap_meta`)."""
    check_columns(table, meta)
    x, y, value, column, status = meta["x"], meta["y"], meta["value"], meta.get("column"), meta.get("status")
    panels = _ordered(table[column].to_list(), None) if column else [None]
    rows = _ordered(table[y].to_list(), meta.get("y_order"))
    fmt = python_format(meta.get("value_format", "d"))
    values = table[value].cast(pl.Float64)
    finite = values.drop_nulls().drop_nans()
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.len() else (0.0, 1.0)
    middle = vmin + (vmax - vmin) / 2
    cmap = matplotlib.colormaps[SEQUENTIAL_SCHEME].copy()
    cmap.set_bad(MISSING_COLOUR)

    panel_columns = []
    for panel in panels:
        part = table if panel is None else table.filter(pl.col(column) == panel)
        panel_columns.append(_ordered(part[x].to_list(), meta.get("x_order")))
    width = sum(len(c) for c in panel_columns) * CELL_INCHES + 2.5 + 0.6 * len(panels)
    longest_label = max((len(str(r)) for r in rows), default=1)
    height = len(rows) * CELL_INCHES + 1.6
    fig, axes = plt.subplots(
        1, len(panels), figsize=(width + longest_label * 0.055, height), squeeze=False,
        gridspec_kw={"width_ratios": [max(len(c), 1) for c in panel_columns]}, layout="constrained",
    )
    for index, (ax, panel, columns) in enumerate(zip(axes[0], panels, panel_columns)):
        part = table if panel is None else table.filter(pl.col(column) == panel)
        grid = np.full((len(rows), len(columns)), np.nan)
        row_index = {r: i for i, r in enumerate(rows)}
        column_index = {c: j for j, c in enumerate(columns)}
        for r, c, v in part.select(y, x, pl.col(value).cast(pl.Float64)).iter_rows():
            if v is not None and not math.isnan(v):
                grid[row_index[r], column_index[c]] = v
        statuses = {}
        if status:
            for r, c, s in part.select(y, x, status).iter_rows():
                if s is not None:
                    statuses[row_index[r], column_index[c]] = s
                    grid[row_index[r], column_index[c]] = np.nan
        last = index == len(panels) - 1
        sns.heatmap(
            np.ma.masked_invalid(grid), ax=ax, cmap=cmap, vmin=vmin, vmax=vmax, cbar=last,
            cbar_kws={"label": meta.get("value_title") or value, "shrink": 0.8} if last else None,
            xticklabels=[str(c) for c in columns], yticklabels=[str(r) for r in rows] if index == 0 else False,
            linewidths=0, square=False,
        )
        for (i, j), s in statuses.items():
            style = STATUS_STYLES[s]
            ax.add_patch(matplotlib.patches.Rectangle((j, i), 1, 1, facecolor=style["colour"], hatch=style["hatch"],
                                                      edgecolor="white", linewidth=0))
            ax.text(j + 0.5, i + 0.5, style["label"], ha="center", va="center", fontsize=5.5, color="black")
        for i in range(len(rows)):
            for j in range(len(columns)):
                if not np.isnan(grid[i, j]):
                    ax.text(j + 0.5, i + 0.5, fmt(grid[i, j]), ha="center", va="center", fontsize=6,
                            color="white" if grid[i, j] < middle else "black")
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.tick_params(length=0)
        ax.set_xticklabels(ax.get_xticklabels(), rotation=45, ha="right", rotation_mode="anchor")
        if panel is not None:
            ax.set_title(str(panel), fontsize=9)
    shown = sorted(set(table[status].drop_nulls())) if status else []
    if shown:
        handles = [matplotlib.patches.Patch(facecolor=STATUS_STYLES[s]["colour"], hatch=STATUS_STYLES[s]["hatch"],
                                            edgecolor="white", label=f"{STATUS_STYLES[s]['label']}: {s}")
                   for s in shown]
        fig.legend(handles=handles, loc="outside lower left", ncols=len(handles), frameon=False, fontsize=7)
    fig.suptitle(meta["title"], x=0.01, ha="left", fontsize=10)
    return fig


def save_heatmap_pdf(table: pl.DataFrame, meta: dict, path: Path | str) -> Path:
    """Write the print PDF of a heatmap; raise when a label has a character no installed font draws."""
    path = Path(path)
    with print_style(), warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"Glyph .* missing from font")
        fig = heatmap_figure(table, meta)
        try:
            with files.atomic_write(path) as tmp:
                fig.savefig(tmp, format="pdf", metadata=PDF_METADATA)
        finally:
            plt.close(fig)
    return path
