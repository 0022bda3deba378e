"""Print versions of every chart of the suite: the chart's own Vega-Lite spec drawn as a PDF for a page
(6.3 in of text width) or a column (3.0 in) of a paper.

`save(chart, path)` is the one way a print figure is written (`viz.export.save_figure` calls it for every
chart). It takes the spec the report shows and changes only what depends on the medium: the config
becomes `theme.PRINT_CONFIG` (print font sizes, legends below, a faceted heatmap's panels stacked), every
view is drawn `scale` times its screen size as the chart's builder recorded (`theme.print_layout`), and
the chart's title is left out: in a paper the caption says what the figure shows. vl-convert draws it: Vega lays it out, resvg shapes the text with
rustybuzz (a port of HarfBuzz), so Arabic and Pashto letters join and right-to-left text runs right to
left, and svg2pdf writes the glyphs as text in embedded TrueType subsets. A Vega pixel is a PDF point, so
the PDF's page is the figure's print size.

The same chart gives the same bytes on every run: svg2pdf writes no creation date, but numbers its font
objects in the order of a hash map, so the objects are renumbered in the order the document reaches
them (`canonical_pdf`).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import files
from .theme import PRINT_CONFIG, PRINT_META

if TYPE_CHECKING:
    import altair as alt

# Keys of a Vega-Lite spec under which no view size is set.
_NOT_VIEWS = frozenset({"config", "data", "datasets", "usermeta", "encoding", "transform", "params", "title"})


def print_spec(chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of `chart`'s print version."""
    spec = chart.to_dict()
    layout = (spec.get("usermeta") or {}).get(PRINT_META, {"size": "page", "scale": 1.0})
    spec["config"] = copy.deepcopy(PRINT_CONFIG)
    _scale_views(spec, layout["scale"])
    # The paper's caption says what the figure is: the chart's own title (and subtitle) stay on screen.
    spec.pop("title", None)
    return spec


def save(chart: alt.TopLevelMixin, path: Path | str) -> Path:
    """Write the print PDF of `chart` (any chart of the suite) to `path`, atomically."""
    import vl_convert

    path = Path(path)
    pdf = canonical_pdf(vl_convert.vegalite_to_pdf(json.dumps(print_spec(chart))))
    with files.atomic_write(path) as tmp:
        Path(tmp).write_bytes(pdf)
    return path


def _scale_views(node, scale: float) -> None:
    """Multiply every view width and height (a number, or a step) under `node` by `scale`, in place."""
    if isinstance(node, list):
        for item in node:
            _scale_views(item, scale)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in ("width", "height"):
            if isinstance(value, (int, float)):
                node[key] = round(value * scale, 2)
            elif isinstance(value, dict) and "step" in value:
                value["step"] = round(value["step"] * scale, 2)
        elif key not in _NOT_VIEWS:
            _scale_views(value, scale)


_OBJECT = re.compile(rb"(\d+) 0 obj\n")
_REFERENCE = re.compile(rb"(\d+) 0 R\b")
# A line of a dictionary that maps a name to an object (`/fo0 3 0 R`): resource maps, whose entries
# svg2pdf writes in hash-map order.
_NAMED_REFERENCE = re.compile(rb"^\s*/[^\s/<>\[\]()]+ \d+ 0 R$")


def canonical_pdf(pdf: bytes) -> bytes:
    """The same document with its objects numbered in the order a walk from the trailer reaches them, and
    the entries of its resource maps sorted by name: svg2pdf's output for one chart in one byte
    sequence. Stream contents are kept as they are."""
    first_line = pdf.index(b"\n") + 1
    header_end = pdf.index(b"\n", first_line) + 1 if pdf[first_line : first_line + 1] == b"%" else first_line
    objects: dict[int, tuple[bytes, bytes]] = {}
    xref = pdf.rindex(b"\nxref\n")
    position = header_end
    while (match := _OBJECT.search(pdf, position, xref)) is not None:
        start = match.end()
        end = pdf.index(b"endobj", start)
        stream = pdf.find(b"stream\n", start, end)
        if stream != -1:
            declared = re.search(rb"/Length (\d+)", pdf[start:stream])
            assert declared is not None, "a PDF stream declares its /Length"
            length = int(declared.group(1))
            end = pdf.index(b"endobj", stream + len(b"stream\n") + length)
            head, tail = pdf[start:stream], pdf[stream:end]
        else:
            head, tail = pdf[start:end], b""
        objects[int(match.group(1))] = (_sorted_name_maps(head), tail)
        position = end + len(b"endobj")
    trailer = pdf[pdf.index(b"trailer", xref) : pdf.index(b"startxref", xref)]

    order: list[int] = []
    seen: set[int] = set()
    pending = [int(m.group(1)) for m in _REFERENCE.finditer(trailer)][::-1]
    while pending:
        number = pending.pop()
        if number in seen or number not in objects:
            continue
        seen.add(number)
        order.append(number)
        pending.extend(int(m.group(1)) for m in reversed(list(_REFERENCE.finditer(objects[number][0]))))
    order += [number for number in sorted(objects) if number not in seen]
    new_number = {old: new for new, old in enumerate(order, start=1)}

    def renumbered(text: bytes) -> bytes:
        return _REFERENCE.sub(lambda m: b"%d 0 R" % new_number[int(m.group(1))], text)

    out = bytearray(pdf[:header_end])
    offsets = []
    for old in order:
        head, tail = objects[old]
        offsets.append(len(out))
        out += b"%d 0 obj\n" % new_number[old] + renumbered(head) + tail + b"endobj\n\n"
    xref_offset = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f\r\n" % (len(order) + 1)
    out += b"".join(b"%010d 00000 n\r\n" % offset for offset in offsets)
    out += re.sub(rb"/Size \d+", b"/Size %d" % (len(order) + 1), renumbered(trailer))
    out += b"startxref\n%d\n%%%%EOF" % xref_offset
    return bytes(out)


def _sorted_name_maps(head: bytes) -> bytes:
    lines = head.split(b"\n")
    out: list[bytes] = []
    run: list[bytes] = []
    for line in [*lines, None]:
        if line is not None and _NAMED_REFERENCE.match(line):
            run.append(line)
            continue
        out += sorted(run, key=lambda entry: entry.split()[0])
        run = []
        if line is not None:
            out.append(line)
    return b"\n".join(out)
