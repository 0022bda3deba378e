"""Screenshots of every report and of the explorer, the whole page at the widths a reader's screen has,
for review (`make screenshots`, `python -m analysis screenshots`): what a change did to the pages, seen
without opening each one. Reports open in headless Chromium with the network off (`reporting.browser`),
as in the report check; the explorer in a real JupyterLab (`reporting.jupyterlab`), every cell run, its
file browser open as it is by default.

Each page is also measured (`browser.LAYOUT_JS`): a chart wider than its place (the report's output
area, or JupyterLab's), text under 9 px, or a report taller than `MAX_REPORT_HEIGHT` at 1400 px is printed
as a problem; the command fails when there is one.
"""

import sys
import tempfile
from pathlib import Path

from ..core import paths
from .browser import LAYOUT_JS, Chromium, layout_problems

# A laptop's browser window, and a smaller one (a tablet, a window beside the notebook).
WIDTHS = (1400, 1024)
# A report taller than this at the wider width is a problem: a reader scrolls through it, folds or not.
MAX_REPORT_HEIGHT = 8000
SCREEN_HEIGHT = 900
# JupyterLab scrolls inside its own panel: a window tall enough for the whole explorer to show at once.
LAB_HEIGHT = 3000


def take(
    pages: list[Path], out: Path, widths: tuple[int, ...] = WIDTHS, explorer_db: Path | None = None
) -> tuple[list[Path], int]:
    """Write `<page>-<width>.png` of every page at every width into `out`, and, given `explorer_db`,
    `00_explore-<width>.png` of the explorer open on that database in JupyterLab; return the files
    written and the number of problems found. A page that logs an error, leaves the file, draws a blank
    chart or a chart that does not fit still gets its screenshots, and its problems are printed."""
    out.mkdir(parents=True, exist_ok=True)
    written, n_problems = [], 0
    with Chromium() as browser:
        for page in pages:
            for width in widths:
                target = out / f"{shot_name(Path(page))}-{width}.png"

                def shoot(chrome, session, target=target):
                    chrome.screenshot(session, target, full_page=True)
                    return {
                        "layout": chrome.evaluate(session, LAYOUT_JS),
                        "height": chrome.evaluate(session, "document.documentElement.scrollHeight"),
                    }

                report = browser.open(page, viewport=(width, SCREEN_HEIGHT), actions=shoot)
                problems = report.problems + layout_problems(report.values.get("layout", []))
                height = report.values.get("height") or 0
                if width == max(widths) and height > MAX_REPORT_HEIGHT and Path(page).name[:2].isdigit():
                    problems.append(f"{height:,} px tall, over {MAX_REPORT_HEIGHT:,} px")
                n_problems += _print(f"{page} at {width} px", problems)
                written.append(target)
                print(target)
        if explorer_db is not None:
            shots, found = _explorer(browser, Path(explorer_db), out, widths)
            written += shots
            n_problems += found
    return written, n_problems


def shot_name(page: Path) -> str:
    """A page's screenshots' name: the page's, after the folder its reports folder is in when that is not
    the project's own (`studies/example/reports/03_x.html` -> `example-03_x`)."""
    if page.resolve().parent == paths.REPORTS.resolve():
        return page.stem
    return f"{page.resolve().parent.parent.name}-{page.stem}"


def _explorer(browser: Chromium, db_path: Path, out: Path, widths: tuple[int, ...]) -> tuple[list[Path], int]:
    from . import jupyterlab

    written, n_problems = [], 0
    with tempfile.TemporaryDirectory(prefix="calmqa-explorer-") as folder:
        jupyterlab.prepare_explorer(Path(folder), db_path)
        with jupyterlab.JupyterLab(Path(folder)) as lab:
            with jupyterlab.open_explorer(browser, lab, (widths[0], LAB_HEIGHT)) as session:
                for width in widths:
                    browser.resize(session, (width, LAB_HEIGHT))
                    browser.wait(1.0)
                    target = out / f"{jupyterlab.EXPLORER}-{width}.png"
                    browser.screenshot(session, target)
                    problems = layout_problems(browser.evaluate(session, LAYOUT_JS))
                    n_problems += _print(f"the explorer in JupyterLab at {width} px", problems)
                    written.append(target)
                    print(target)
    return written, n_problems


def _print(where: str, problems: list[str]) -> int:
    for problem in problems:
        print(f"{where}: {problem}", file=sys.stderr)
    return len(problems)
