"""Screenshots of every report, the whole page at the widths a reader's screen has, for review
(`make screenshots`, `python -m analysis screenshots`): what a change did to the pages, seen without
opening each one. Headless Chromium with the network off (`reporting.browser`), as the report check.
"""

import sys
from pathlib import Path

from .browser import Chromium

# A laptop's browser window, and a smaller one (a tablet, a window beside the notebook).
WIDTHS = (1400, 1024)
SCREEN_HEIGHT = 900


def take(pages: list[Path], out: Path, widths: tuple[int, ...] = WIDTHS) -> list[Path]:
    """Write `<page>-<width>.png` of every page at every width into `out`; return the files written.
    A page that logs an error, leaves the file or draws a blank chart still gets its screenshots,
    and its problems are printed."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with Chromium() as browser:
        for page in pages:
            for width in widths:
                target = out / f"{Path(page).stem}-{width}.png"
                report = browser.open(
                    page,
                    viewport=(width, SCREEN_HEIGHT),
                    actions=lambda chrome, session: chrome.screenshot(session, target, full_page=True),  # noqa: B023 - called within this iteration
                )
                for problem in report.problems:
                    print(f"{page} at {width} px: {problem}", file=sys.stderr)
                written.append(target)
                print(target)
    return written
