"""Open HTML reports in headless Chromium with the network off, and report what happened.

A dependency-free client of the Chrome DevTools protocol over `--remote-debugging-pipe` (file
descriptors 3 and 4, NUL-separated JSON messages): no websocket library, no Playwright, no browser
download. Debian's `chromium` is the browser (`CHROMIUM` overrides the path).

For each page it records every request that is not the page's own file, every console error and
uncaught exception, and, after the charts had time to draw, which chart containers hold no
`svg.marks` or `canvas.marks`. Tests and `python -m analysis check-reports reports/*.html` use it.
"""

import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..viz.theme import SCREEN_LABEL_SIZE

# Any host name fails to resolve, so that nothing can leave the machine even where there is a network;
# only this machine's own address is left, for a local server (JupyterLab).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-sync",
    "--disable-component-update",
    "--mute-audio",
    "--disable-dev-shm-usage",
]

# Chart containers: the report renderer's own, and any vega-embed container (charts from elsewhere).
CHART_CONTAINERS = ".calmqa-chart, .vega-embed"

# Charts the page asks for: each inline script that calls vegaEmbed (the bundle only defines it). A
# chart whose script failed before vega-embed made its container still counts as not rendered.
PAGE_STATE_JS = """
(() => {
  const selector = %s;
  const containers = Array.from(document.querySelectorAll(selector))
    .filter(el => !el.parentElement || !el.parentElement.closest(selector));
  const blank = containers
    .filter(el => !el.querySelector('svg.marks, canvas.marks'))
    .map(el => el.id || el.className);
  const requested = Array.from(document.scripts)
    .filter(s => !s.src && s.textContent.includes('vegaEmbed(') && !s.textContent.includes('window.vegaEmbed='))
    .length;
  if (requested > containers.length) {
    blank.push((requested - containers.length) + ' of ' + requested + ' charts never got a container');
  }
  return {charts: Math.max(containers.length, requested), blank: blank, ready: document.readyState};
})()
""" % json.dumps(CHART_CONTAINERS)  # noqa: UP031 - JavaScript braces would need escaping in a format string


# How each chart sits in its place: the width it is drawn at against the width of the output area that
# holds it (a report's, or JupyterLab's), and the smallest text it draws, in screen pixels (its font
# size times the scale the chart is drawn at). SVG charts only: a canvas has no text to measure.
LAYOUT_JS = """
(() => {
  const charts = Array.from(document.querySelectorAll(%s))
    .filter(el => !el.parentElement || !el.parentElement.closest(%s));
  return charts.map(el => {
    const drawn = el.querySelector('svg.marks, canvas.marks');
    const place = el.closest('.jp-OutputArea-output') || el.parentElement;
    const style = getComputedStyle(place);
    const box = place.getBoundingClientRect();
    const inner = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    const right = Math.min(inner, document.documentElement.clientWidth);
    // A chart that scrolls sideways in a box of its own (itself, or a box between it and its place) fits
    // when the box does; its text keeps its size.
    let scroller = el;
    while (scroller && scroller !== place && !['auto', 'scroll'].includes(getComputedStyle(scroller).overflowX)) {
      scroller = scroller.parentElement;
    }
    const scrolls = scroller && scroller !== place;
    const rect = drawn ? (scrolls ? scroller : drawn).getBoundingClientRect() : null;
    const sizes = drawn && drawn.tagName.toLowerCase() === 'svg'
      ? Array.from(drawn.querySelectorAll('text'))
          .filter(t => t.textContent.trim() && t.getBBox().width > 0)
          .map(t => { const m = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); })
      : [];
    const heading = drawn && drawn.querySelector('.role-title-text');
    const title = heading && heading.textContent || el.id || '';
    return {
      chart: title.slice(0, 100),
      renderer: drawn ? drawn.tagName.toLowerCase() : null,
      overflow: rect ? Math.round(rect.right - right) : null,
      width: rect ? Math.round(rect.width) : null,
      room: Math.round(right - (rect ? rect.left : box.left)),
      smallestText: sizes.length ? Math.round(Math.min(...sizes) * 100) / 100 : null,
    };
  });
})()
""" % (json.dumps(CHART_CONTAINERS), json.dumps(CHART_CONTAINERS))  # noqa: UP031 - JavaScript braces would need escaping in a format string


def layout_problems(layout: list[dict], min_text: float = SCREEN_LABEL_SIZE) -> list[str]:
    """What `LAYOUT_JS` found wrong: a chart wider than its place, drawn without SVG text to measure, or
    with text smaller than `min_text` pixels."""
    problems = []
    for chart in layout:
        name = chart["chart"] or "a chart"
        if chart["renderer"] != "svg":
            problems.append(
                f"{name}: drawn as {chart['renderer'] or 'nothing'}, not SVG, so its text cannot be measured"
            )
            continue
        if chart["overflow"] > 1:
            problems.append(f"{name}: {chart['width']} px wide, {chart['overflow']} px wider than its place")
        if chart["smallestText"] is not None and chart["smallestText"] < min_text - 0.01:
            problems.append(f"{name}: text drawn {chart['smallestText']} px high, under {min_text} px")
    return problems


class BrowserError(RuntimeError):
    pass


@dataclass
class PageReport:
    """What happened when a page was opened."""

    url: str
    charts: int = 0
    blank_charts: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    values: dict = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        found = [f"chart did not render: {c}" for c in self.blank_charts]
        found += [f"console error: {e}" for e in self.console_errors]
        found += [f"request left the file: {r}" for r in self.requests]
        return found


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise BrowserError("Chromium is not installed: `apt-get install -y chromium` (Debian)")
    return path


class Chromium:
    """One headless browser; `open()` loads a page in a fresh tab and returns its `PageReport`."""

    def __init__(self, executable: str | None = None, timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="calmqa-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict] = []

        def child_fds():
            # The protocol pipe must sit on descriptors 3 (commands in) and 4 (replies out); duplicate
            # first so that neither end is overwritten when it already sits on 3 or 4.
            high_in, high_out = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        self._process = subprocess.Popen(
            [
                executable or chromium_path(),
                *CHROMIUM_FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Not close_fds: it would run after preexec_fn and close 3 and 4; the parent's own
            # descriptors are close-on-exec anyway, and dup2 leaves 3 and 4 inheritable.
            preexec_fn=child_fds,
            close_fds=False,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.send("Browser.getVersion")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._write({"id": self._new_id(), "method": "Browser.close"})
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _write(self, message: dict) -> None:
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _read(self, deadline: float) -> dict | None:
        while b"\0" not in self._buffer:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([self._from_browser], [], [], wait)
            if not ready:
                return None
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the protocol pipe (did it crash?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Send one command and wait for its reply; events that arrive meanwhile are kept."""
        message_id = self._new_id()
        message = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._write(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply is None:
                raise BrowserError(f"no reply to {method} within {self.timeout} s")
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def wait(self, seconds: float) -> None:
        """Let the pages run for `seconds` (a resized window lays itself out again), keeping their events."""
        self._drain(seconds)

    def _drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (event := self._read(deadline)) is not None:
            self._events.append(event)

    def evaluate(self, session: str, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise BrowserError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, session: str, x: float, y: float) -> None:
        """A left click at viewport coordinates, as a user's mouse would send it."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}, session
            )
        self._drain(0.3)

    def screenshot(self, session: str, path: Path | str, full_page: bool = False) -> None:
        """The viewport, or with `full_page` the whole page, as a PNG: to look at what a test saw."""
        import base64

        params = {"format": "png", "captureBeyondViewport": True}
        if full_page:
            size = self.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        data = self.send("Page.captureScreenshot", params, session)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    @contextlib.contextmanager
    def page(self, url: str, viewport: tuple[int, int] | None = None, offline: bool = True) -> Iterator[str]:
        """A fresh tab loading `url`, as a protocol session, closed afterwards. `offline` cuts the tab
        off the network (a report must need none); a page served by a local server (JupyterLab) needs
        it on, and the host-resolver rule still keeps every named host unreachable. `viewport` (width,
        height in CSS pixels) sizes the window as a reader's would be; by default it is headless
        Chromium's own (800 x 600)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self._events.clear()
        try:
            for method in ("Runtime.enable", "Log.enable", "Network.enable", "Page.enable"):
                self.send(method, session=session)
            if offline:
                self.send(
                    "Network.emulateNetworkConditions",
                    {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
                    session,
                )
            if viewport is not None:
                self.resize(session, viewport)
            self.send("Page.navigate", {"url": url}, session)
            yield session
        finally:
            self.send("Target.closeTarget", {"targetId": target})

    def resize(self, session: str, viewport: tuple[int, int]) -> None:
        """Size the tab's window to `viewport` (width, height in CSS pixels)."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": viewport[0], "height": viewport[1], "deviceScaleFactor": 1, "mobile": False},
            session,
        )

    def wait_for(self, session: str, expression: str, timeout: float = 30.0, what: str = ""):
        """The first truthy value of `expression`, evaluated every quarter second; `BrowserError` naming
        `what` (or the expression) after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(session, expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"waited {timeout:.0f} s for {what or expression}")
            self._drain(0.25)

    def open(
        self,
        page: Path | str,
        settle: float = 1.0,
        render_timeout: float = 30.0,
        actions: Callable[["Chromium", str], dict] | None = None,
        viewport: tuple[int, int] | None = None,
    ) -> PageReport:
        """Load `page` (a file) and wait until every chart container holds marks or `render_timeout` passes.

        `viewport` (width, height in CSS pixels) sizes the window as a reader's would be.

        After rendering, `actions(browser, session)` may drive the page (`click`, `evaluate`); what it
        returns is kept in the report's `values`. Console errors and requests it causes count too.
        """
        url = Path(page).resolve().as_uri()
        report = PageReport(url=url)
        with self.page(url, viewport) as session:
            deadline = time.monotonic() + render_timeout
            state: dict = {}
            while time.monotonic() < deadline:
                self._drain(0.25)
                state = self.evaluate(session, PAGE_STATE_JS) or {}
                if state.get("ready") == "complete" and not state.get("blank"):
                    break
            # Late errors (a chart that fails after the others drew) still get a moment to show.
            self._drain(settle)
            if actions is not None:
                report.values = actions(self, session) or {}
            state = self.evaluate(session, PAGE_STATE_JS) or {}
            report.charts = state.get("charts", 0)
            report.blank_charts = state.get("blank", [])
            self._drain(0.2)
            self._collect(report, session)
        return report

    def _collect(self, report: PageReport, session: str) -> None:
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                report.console_errors.append(text)
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                report.console_errors.append(
                    details.get("exception", {}).get("description") or details.get("text", "exception")
                )
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                report.console_errors.append(f"{entry.get('text')} {entry.get('url', '')}".strip())
            elif method == "Network.requestWillBeSent":
                request_url = params.get("request", {}).get("url", "")
                # A file of the report's own folder (the drill-down's answers) is read from the disk, not requested.
                beside = request_url.startswith(report.url.rsplit("/", 1)[0] + "/")
                if (
                    request_url != report.url
                    and not beside
                    and not request_url.startswith(("data:", "blob:", "about:"))
                ):
                    report.requests.append(request_url)


def check(pages: list[Path | str]) -> int:
    """Open every page and print what each drew and what went wrong (`make check-reports`); the number
    of pages with a problem."""
    failed = 0
    with Chromium() as browser:
        for page in pages:
            report = browser.open(page)
            problems = report.problems
            failed += bool(problems)
            print(f"{page}: {report.charts} charts, {'OK' if not problems else 'FAILED'}")
            for problem in problems:
                print(f"  {problem}")
    return failed
