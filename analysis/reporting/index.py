"""reports/index.html: what to read first, then every report of reports/ (the paper reproduction first)
with its summary and a thumbnail of its main figure (inline image data, at its aspect ratio), and one
provenance for the page: when the reports were built, from which git commit and database (sha256); a
report built from another says so in its entry.

Built from the provenance each report carries (`reporting.provenance`), so it lists whatever reports
exist, present and future, and the reports whose last run failed, marked with the reason (the notes
`make figures` keeps going past: `run.failures`). `python -m analysis index` writes it (`make figures`
runs it last) and then ends with exit status 2 when a report failed.
"""

import base64
import io
import re
from pathlib import Path

from ..core import files, paths
from ..core.text import inert
from . import drilldown, provenance
from .html import METHODS_PAGE, markdown_to_html, methods_anchor
from .run import REPRODUCTION_NOTEBOOK, claim_outputs, failures, reading_order, report_labels

THUMBNAIL_WIDTH = 360
INDEX_NAME = "index.html"
# What to read first, in order, and why; reports that are missing are left out.
READING_ORDER = {
    REPRODUCTION_NOTEBOOK: "how much of the two papers the suite reproduces, number by number",
    "03_surface_quality": "which models answer in the question's language, without repeating themselves",
    "04_answer_scores": "the paper's answer score, as far as the release allows",
    "05_human_evaluation": "what the native-speaker annotators found",
}
# ... and in the reports of a study of your own.
STUDY_READING_ORDER = {
    "03_surface_quality": "which models answer in the question's language, without repeating themselves",
    "04_answer_scores": "the share of answers without surface issues, and the study's metrics",
    "05_human_evaluation": "what the annotators found, criterion by criterion",
}

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{page_title}</title>
<style>
body {{ font-family: "Noto Sans", "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }}
h1 {{ font-size: 1.6em; }}
.lead {{ font-size: 1.05em; line-height: 1.5; }}
.lead ol {{ margin: 0.3em 0; }}
.provenance {{ font-size: 0.85em; color: #555; }}
.provenance code, .meta code {{ overflow-wrap: anywhere; }}
.report {{ display: flex; align-items: flex-start; gap: 1.5em; border-top: 1px solid #ddd; padding: 1.2em 0; }}
.report img {{ width: {width}px; height: auto; outline: 1px solid #eee; flex: none; }}
.report .no-figure {{ width: {width}px; flex: none; color: #777; font-style: italic; }}
.report h2 {{ font-size: 1.2em; margin: 0 0 0.4em 0; }}
.meta {{ font-size: 0.8em; color: #8a4600; }}
.failed-mark, .failures {{ color: #b00020; }}
.failed-mark {{ font-size: 0.75em; border: 1px solid #b00020; border-radius: 3px; padding: 0 0.3em; vertical-align: middle; }}
</style>
</head>
<body>
<h1>{page_title}</h1>
{headline}
{failures}
{provenance}
{entries}
</body>
</html>
"""

ENTRY = """<div class="report">
{thumbnail}
<div>
<h2><a href="{href}">{title}</a></h2>
<div class="summary">{summary}</div>
{meta}
</div>
</div>"""


FAILED_ENTRY = """<div class="report">
<div class="no-figure">no report: its last run failed</div>
<div>
<h2>{title} <span class="failed-mark">failed</span></h2>
<p class="failures">{reason}</p>
<p class="meta">{executed}<code>make figures</code> runs it again.</p>
</div>
</div>"""


def failed_entry(note: dict) -> str:
    """The entry of a report whose last run failed: its title, the one-line reason and where the executed
    notebook with the traceback is."""
    executed = note.get("executed")
    return FAILED_ENTRY.format(
        title=inert(note.get("title") or note.get("notebook", "?"), "html"),
        reason=inert(note.get("reason", "it failed"), "html"),
        executed=f"The executed notebook, with the traceback: <code>{inert(executed, 'html')}</code>. "
        if executed
        else "",
    )


def failures_block(failed: dict[str, dict]) -> str:
    """One sentence above the entries when reports failed."""
    if not failed:
        return ""
    names = ", ".join(inert(note.get("title") or name, "html") for name, note in failed.items())
    noun = "report" if len(failed) == 1 else "reports"
    return (
        f'<p class="failures">{len(failed)} {noun} could not be built this time ({names}): each is marked below '
        "with the reason, and the other reports are complete.</p>"
    )


def thumbnail(png: Path, width: int = THUMBNAIL_WIDTH) -> str:
    """A PNG scaled to `width` pixels (twice that for sharp screens), as a data URI."""
    from PIL import Image

    with Image.open(png) as image:
        target = min(2 * width, image.width)
        small = image.convert("RGB").resize(
            (target, round(image.height * target / image.width)), Image.Resampling.LANCZOS
        )
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _build_key(record: dict) -> tuple:
    return record.get("commit"), record.get("database"), record.get("database_sha256")


def shared_build(records: list[dict]) -> tuple | None:
    """(commit, database, sha256) that most reports were built from; None without any provenance."""
    keys = [_build_key(r) for r in records if r]
    return max(set(keys), key=lambda k: (keys.count(k), k)) if keys else None


def provenance_block(records: list[dict]) -> str:
    """One provenance for the page: the commit and database most reports were built from, and when."""
    shared = shared_build(records)
    if shared is None:
        return '<p class="provenance">No report carries its provenance: build them again with <code>make figures</code>.</p>'
    built = sorted(str(r["built"]) for r in records if r and _build_key(r) == shared)
    n_same = len(built)
    when = built[0] if built[0] == built[-1] else f"{built[0]} to {built[-1]}"
    record = {"commit": shared[0], "database": shared[1], "database_sha256": shared[2], "built": when}
    scope = "Every report" if n_same == len(records) else f"{n_same} of the {len(records)} reports (the others say so)"
    return (
        f'<p class="provenance">{scope}: {provenance.line(record)} Each file is self-contained and opens offline.</p>'
    )


def study_headline(records: dict[str, dict], study) -> str:
    """What a study's reports are (a study of your own: `analyses.studies.Study`), and what to read first."""
    first = [
        f'<li><a href="{inert(name, "html")}.html">{inert(records[name].get("title", name), "html")}</a>: {why}</li>'
        for name, why in STUDY_READING_ORDER.items()
        if name in records
    ]
    reading = f"<p>What to read first:</p><ol>{''.join(first)}</ol>" if first else ""
    about = f"<p>{inert(study.description, 'html')}</p>" if study.description else ""
    cite = f'<p class="provenance">Cite the study as: {inert(study.citation, "html")}</p>' if study.citation else ""
    return (
        f'<div class="lead">{about}<p>{len(records)} {"report" if len(records) == 1 else "reports"} of the study '
        f"<code>{inert(study.name, 'html')}</code>, one "
        "per notebook of the CaLMQA analysis suite (docs/studies.md). Each says where the study lacks the data "
        f"for one of its sections.</p>{reading}{cite}</div>"
    )


def headline(records: dict[str, dict]) -> str:
    """What the suite is and what to read first."""
    first = [
        f'<li><a href="{inert(name, "html")}.html">{inert(records[name].get("title", name), "html")}</a>: {why}</li>'
        for name, why in READING_ORDER.items()
        if name in records
    ]
    reading = f"<p>What to read first:</p><ol>{''.join(first)}</ol>" if first else ""
    return (
        '<div class="lead"><p>The CaLMQA paper\'s figures and tables (culturally specific long-form questions '
        "in 23 languages, answered by 8 language models and rated by native speakers), regenerated from its "
        f"released data, with the published NativQA results beside them: {len(records)} reports, one per "
        "notebook. Each says which paper figure or table it reproduces, shows the paper's value beside "
        f"the suite's where the paper prints one, and says where the release lacks the data. How each is "
        f'computed: <a href="{METHODS_PAGE}">the methods</a>.</p>{reading}</div>'
    )


def entry(report_path: Path, record: dict, figures_root: Path, shared: tuple | None) -> str:
    name = record.get("notebook", report_path.stem)
    figure = record.get("main_figure")
    png = figures_root / name / f"{figure}.png" if figure else None
    if png is not None and png.is_file():
        image = f'<img alt="{inert(figure, "html")}" src="{thumbnail(png)}">'
    else:
        image = '<div class="no-figure">no figure</div>'
    if not record:
        meta = '<p class="meta">This report carries no provenance: build it again with <code>make figures</code>.</p>'
    elif _build_key(record) != shared:
        meta = f'<p class="meta">Built apart from the others: {provenance.line(record)}</p>'
    else:
        meta = ""
    summary = record.get("summary")
    return ENTRY.format(
        thumbnail=image,
        href=inert(report_path.name, "html"),
        title=inert(record.get("title", name), "html"),
        summary=markdown_to_html(summary) if summary else "<p><em>This report has no summary.</em></p>",
        meta=meta,
    )


def study_of(db_path: Path | None):
    """The study of the database the reports were built from, or None (no database named, or none there)."""
    if db_path is None or not db_path.is_file():
        return None
    from .. import store
    from ..analyses import studies

    with store.connect(db_path) as con:
        return studies.Study.of(con)


METHODS_SOURCE = paths.DOCS / "methods.md"
METHODS = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Methods · CaLMQA analysis</title>
<style>
body {{ font-family: "Noto Sans", "DejaVu Sans", sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; line-height: 1.5; }}
code {{ font-size: 0.92em; background: #f4f4f4; padding: 0 0.2em; overflow-wrap: anywhere; }}
table {{ border-collapse: collapse; }} th, td {{ border-bottom: 1px solid #ddd; padding: 2px 8px; text-align: left; }}
.anchor-link {{ display: none; }}
nav {{ font-size: 0.9em; border-left: 3px solid #ccc; padding: 0.3em 1em; }}
@media print {{ nav {{ display: none; }} }}
</style>
</head>
<body>
<p><a href="{index}">&larr; All reports (CaLMQA analysis)</a></p>
{contents}
{body}
</body>
</html>
"""
# A methods heading `## 03 Surface quality`: its number is the section's anchor (`html.methods_anchor`).
_METHODS_SECTION = re.compile(r'<h2 id="([^"]*)">(\d\d)\b')


def write_methods(reports_root: Path, source: Path = METHODS_SOURCE) -> Path:
    """reports/methods.html: docs/methods.md as a page beside the reports, which link to its sections,
    so that a report sent on its own keeps its methods."""
    body = markdown_to_html(source.read_text(encoding="utf-8"))
    # The heading's own anchor link (nbconvert's, to the id it gave the heading) follows it to the new id.
    renamed = {m.group(1): methods_anchor(m.group(2)) for m in _METHODS_SECTION.finditer(body)}
    body = _METHODS_SECTION.sub(lambda m: f'<h2 id="{renamed[m.group(1)]}">{m.group(2)}', body)
    body = re.sub(r'href="#([^"]*)"', lambda m: f'href="#{renamed.get(m.group(1), m.group(1))}"', body)
    sections = re.findall(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', body)
    contents = "".join(f'<li><a href="#{a}">{t}</a></li>' for a, t in sections)
    page = METHODS.format(
        index=INDEX_NAME, contents=f"<nav><strong>Sections</strong><ol>{contents}</ol></nav>", body=body
    )
    return files.write_text(reports_root / METHODS_PAGE, page)


def _reports(reports_root: Path) -> dict[str, Path]:
    """The reports in `reports_root`, by notebook."""
    return {
        p.stem: p
        for p in reports_root.glob("*.html")
        if p.name not in (INDEX_NAME, METHODS_PAGE) and not p.name.startswith(".")
    }


def failed_reports(reports_root: Path, build_root: Path, study=None) -> dict[str, dict]:
    """The notes of the reports the study gets (every report, without a study) whose last run failed, in
    reading order: a note of the output folder whose `build/` is `build_root` (`run.failures`) for a report
    that is not there (a later success removes the note)."""
    expected = {name for name, _ in report_labels(study=study)}
    found, noted = _reports(reports_root), failures(build_root)
    return {name: noted[name] for name in reading_order(list(noted)) if name in expected and name not in found}


def write_index(
    reports_root: Path = paths.REPORTS,
    figures_root: Path = paths.FIGURES,
    out: Path | None = None,
    db_path: Path | None = None,
    build_root: Path | None = None,
) -> Path:
    """Write the index of every report in `reports_root`, titled after the study of `db_path` when it
    is one of your own (else the CaLMQA study's page), and the methods page beside them; returns the
    index's path. With the output folder's `build_root`, the reports whose last run failed are marked
    (`failed_reports`), and the folder must hold the database's study (`run.claim_outputs`)."""
    out = out or reports_root / INDEX_NAME
    if db_path is not None and build_root is not None:
        claim_outputs(db_path, build_root)
    found = _reports(reports_root)
    study = study_of(db_path)
    failed = failed_reports(reports_root, build_root, study) if build_root is not None else {}
    write_methods(reports_root)
    if db_path is not None:
        drilldown.write_for(reports_root, db_path)
    records = {name: provenance.read(path) or {} for name, path in found.items()}
    shared = shared_build(list(records.values()))
    own = study is not None and not study.paper
    # The reproduction report first: its summary says how much of the two papers the suite reproduces.
    entries = [
        entry(found[name], records[name], figures_root, shared) if name in found else failed_entry(failed[name])
        for name in reading_order([*found, *failed])
    ]
    body = PAGE.format(
        width=THUMBNAIL_WIDTH,
        page_title=inert(f"{study.title}: reports" if own else "CaLMQA analysis reports", "html"),
        headline=study_headline(records, study) if own else headline(records),
        failures=failures_block(failed),
        provenance=provenance_block(list(records.values())),
        entries="\n".join(entries),
    )
    return files.write_text(out, body)
