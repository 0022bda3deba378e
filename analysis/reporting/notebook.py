"""What every notebook calls first (`setup`), and what notebooks display besides figures.

`setup()` enables the offline chart renderer, so that charts draw in JupyterLab and in the
exported report with no network: each chart is a container and a vega-embed call, and the Vega
JavaScript is inlined once, before the first chart, with a small script that links the charts of the
page (a click on a heatmap cell highlights its row and column values in every chart, see
`viz.theme.PICK`). Chart specs are embedded with `<`, `>` and `&` escaped (`script_json`), so text
from data stays text.
"""

import json
import uuid

import polars as pl

from ..core import files, paths
from ..core.text import script_json
from ..viz import export, tables
from ..viz.charts import DRILL_META
from ..viz.theme import FIGURE_META, HIGHLIGHT, PICK, altair

_bundle_emitted = False

# Runs once per page: every chart registers its view; a pick in one sets the highlight of all.
LINK_SCRIPT = """
(function () {
  if (window.calmqaLink) { return; }
  var views = [];
  window.calmqaViews = views;
  function hasSignal(view, name) {
    try { view.signal(name); return true; } catch (e) { return false; }
  }
  window.calmqaLink = function (view) {
    views.push(view);
    if (!hasSignal(view, %(pick)s)) { return; }
    view.addSignalListener(%(pick)s, function (name, value) {
      var picked = [];
      Object.keys(value || {}).forEach(function (key) {
        if (Array.isArray(value[key])) { picked = picked.concat(value[key].map(String)); }
      });
      views.forEach(function (other) {
        if (hasSignal(other, %(highlight)s)) { other.signal(%(highlight)s, picked).runAsync(); }
      });
    });
  };
})();
""" % {"pick": json.dumps(PICK), "highlight": json.dumps(HIGHLIGHT)}  # noqa: UP031 - JavaScript braces would need escaping in a format string

# A chart keeps its size whatever its place (its cells and text never shrink under their size, the 9 px
# floor of `theme.SCREEN_LABEL_SIZE` included): a chart wider than its place scrolls sideways in its own
# box, as a wide table does, instead of being scaled down (JupyterLab's and nbconvert's `max-width:
# 100%` on an SVG) or spilling over the page.
CHART_TEMPLATE = """<style>@media screen { .calmqa-chart svg.marks { max-width: none !important; } }</style>
<div id="%(id)s" class="calmqa-chart" style="overflow-x: auto; max-width: 100%%;"></div>
<script type="text/javascript">
(function () {
  var element = document.getElementById(%(id_json)s);
  function fail(error) {
    element.textContent = "This chart could not be drawn: " + error;
    console.error("chart %(id)s:", error);
  }
  if (typeof vegaEmbed === "undefined") {
    fail("the Vega JavaScript is not on this page; run the notebook again from its first cell");
    return;
  }
  vegaEmbed(element, %(spec)s, %(options)s)
    .then(function (result) {
      if (window.calmqaLink) { window.calmqaLink(result.view); }
      if (window.calmqaDrillable && %(drill)s) { window.calmqaDrillable(result.view, element, %(drill)s); }
    })
    .catch(fail);
})();
</script>"""

# No action that opens a web page (the Vega editor): reports are read offline. SVG, not canvas: text a
# reader can select and a browser can check (its size on screen), sharp when printed.
EMBED_OPTIONS = {
    "mode": "vega-lite",
    "renderer": "svg",
    "actions": {"export": True, "source": False, "compiled": False, "editor": False},
}


def _offline_html_renderer(spec: dict, **metadata) -> dict:
    """Each chart as a container and a vega-embed call; the Vega JavaScript and the linking script
    are inlined once, before the first chart of the kernel's session.

    The bundle is wrapped in a function so that including it twice cannot redeclare its top-level
    names (it publishes vegaEmbed, vega and vegaLite on window).
    """
    global _bundle_emitted
    chart_id = f"calmqa-chart-{uuid.uuid4().hex[:12]}"
    page = CHART_TEMPLATE % {
        "id": chart_id,
        "id_json": json.dumps(chart_id),
        "spec": script_json(spec),
        "options": json.dumps(EMBED_OPTIONS),
        # The fields of a cell the report's drill-down opens (`reporting.drilldown`), or null.
        "drill": script_json((spec.get("usermeta") or {}).get(DRILL_META)),
    }
    figure = (spec.get("usermeta") or {}).get(FIGURE_META)
    if figure:
        page += "\n" + export.files_line(figure, ("csv", "svg", "pdf", "png"))
    if not _bundle_emitted:
        bundle = vega_bundle()
        page = f'<script type="text/javascript">(function(){{\n{bundle}\n}})();\n{LINK_SCRIPT}</script>\n' + page
        _bundle_emitted = True
    return {"text/html": page}


def vega_bundle() -> str:
    """The JavaScript of Vega, Vega-Lite and vega-embed that vl-convert bundles for offline pages.

    Bundling takes vl-convert about 1.5 s of CPU in every new process, and the bundle depends only on
    the versions of vl-convert and Vega-Lite, so it is kept under build/cache/ by those versions.
    """
    from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert

    vl_convert, vl_version = import_vl_convert(), vl_version_for_vl_convert()
    cached = paths.BUILD / "cache" / f"vega-bundle-vl-convert-{vl_convert.__version__}-vega-lite-{vl_version}.js"
    if cached.is_file():
        return cached.read_bytes().decode("utf-8")
    bundle = vl_convert.javascript_bundle(vl_version=vl_version)
    files.write_text(cached, bundle)
    return bundle


# Charts carry their data inside the report (offline: no data by URL). Altair's own limit on a chart's rows
# is kept, deliberately, as a guard on a report's size: a model x language chart draws at most
# `dimensions.MAX_DRAWN_MODELS` models (20 x 23 languages x 2 question types = 920 rows), whatever the
# number of models imported, and its CSV keeps every row.
MAX_CHART_ROWS = 5000


def setup(max_rows: int = MAX_CHART_ROWS) -> None:
    """Offline charts and tables for people, for JupyterLab and for the exported report alike: any
    polars frame a notebook displays is rendered by `viz.tables` (every row, no dtype row)."""
    alt = altair()
    alt.renderers.register("calmqa_offline", _offline_html_renderer)
    alt.renderers.enable("calmqa_offline")
    alt.data_transformers.enable("default", max_rows=max_rows)
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pl.DataFrame, lambda frame: tables.show(frame).html)


def titled(title: str, summary: str):
    """A notebook's data-dependent title and its summary, displayed as its first output (the report and
    the index take the title from it)."""
    from IPython.display import Markdown

    return Markdown(f"# {title}\n\n{summary}")


def folded(summary: str, *shown, open_: bool = False):
    """What a report shows on demand: `shown` (tables, charts, Markdown) inside a fold whose line reads
    `summary` (Markdown, inline), closed unless `open_`. A long report keeps its secondary material
    behind such lines, so that a reader sees every section's head at a glance; printed, a fold shows
    whole (the reports' print stylesheet)."""
    from IPython.display import HTML

    from .html import markdown_to_html

    parts = []
    for item in shown:
        if hasattr(item, "_repr_mimebundle_"):
            bundle = item._repr_mimebundle_()
            parts.append((bundle[0] if isinstance(bundle, tuple) else bundle)["text/html"])
        elif hasattr(item, "_repr_html_"):
            parts.append(item._repr_html_())
        else:
            parts.append(markdown_to_html(getattr(item, "data", str(item))))
    line = markdown_to_html(summary).strip().removeprefix("<p>").removesuffix("</p>")
    return HTML(
        f'<details class="calmqa-fold"{" open" if open_ else ""}><summary>{line}</summary>\n'
        + "\n".join(parts)
        + "\n</details>"
    )
