"""The explorer (notebooks/00_explore.ipynb) as a researcher meets it: in a real JupyterLab, driven by
headless Chromium (`reporting.browser`), for its screenshots (`make screenshots`) and the test that
clicks its heatmap.

`JupyterLab` starts a server on a free local port with a token, its own settings and workspaces, and no
news or extension manager reaching out; `open_explorer` opens the notebook there with its parameters
(Papermill's, written into a copy), runs every cell through JupyterLab's own command, and waits until
the heatmap and the comparison have drawn. The page's JupyterLab application is exposed to the browser
(`window.jupyterapp`) so that the driver can run commands as the menus do; the clicks on the chart are
mouse events at screen coordinates, as a user's.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from .browser import BrowserError, Chromium
from .run import EXPLORER, opened_on, study_of

# JupyterLab's settings for a driven session: nothing fetched from the network, nothing written to
# the user's own settings or workspaces.
CONFIG = """
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
c.LabApp.extension_manager = "readonly"
c.LabApp.expose_app_in_browser = True
c.ServerApp.open_browser = False
"""
# User settings of the driven session: no question about fetching news in a corner of the screenshots,
# and every cell of the notebook drawn, not only those in view (JupyterLab's windowing), so that a tall
# window shows the whole explorer at once.
SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}
# The explorer's notebook is open, its kernel idle, every cell run: the heatmap drawn and the
# comparison shown.
READY_JS = """(() => {
  const app = window.jupyterapp;
  const panel = app && app.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!(kernel && kernel.status === 'idle' && panel.content && panel.content.widgets.length);
})()"""
DRAWN_JS = """(() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  return kernel.status === 'idle'
    && !!document.querySelector('.jp-OutputArea-output .vega-embed svg.marks')
    && !!document.querySelector('.calmqa-comparison');
})()"""
# The centre of the overview's cell of a model, a language and a question type, in the window's
# coordinates, scrolled into view; null when the chart has no such cell.
CELL_CENTRE_JS = """((model, language, questionType) => {
  // A cell's description names its fields by their tooltip titles (`viz.heatmap.TOOLTIP_TITLES`).
  const wanted = ['Model: ' + model, 'Language: ' + language + ';', 'Question type: ' + questionType];
  const marks = Array.from(document.querySelectorAll('.jp-OutputArea-output .vega-embed svg.marks .mark-rect path'))
    .filter(p => { const label = (p.getAttribute('aria-label') || '') + ';'; return wanted.every(w => label.includes(w)); });
  if (!marks.length) { return null; }
  marks[0].scrollIntoView({block: 'center'});
  const box = marks[0].getBoundingClientRect();
  return [box.left + box.width / 2, box.top + box.height / 2];
})"""
COMPARISON_JS = """(() => {
  const panel = document.querySelector('.calmqa-comparison');
  const chosen = document.querySelector('.calmqa-comparison .calmqa-answer.calmqa-chosen .calmqa-label');
  const sentence = panel ? panel.closest('.jp-OutputArea-output').innerText : '';
  return {text: panel ? panel.innerText : null, chosen: chosen ? chosen.innerText : null, output: sentence};
})()"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class JupyterLab:
    """A JupyterLab server serving `root` on a free local port with a token; `stop()` ends it."""

    def __init__(self, root: Path, timeout: float = 90.0):
        self.root = Path(root)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self._home = Path(tempfile.mkdtemp(prefix="calmqa-jupyterlab-"))
        config = self._home / "config"
        config.mkdir()
        (config / "jupyter_lab_config.py").write_text(CONFIG, encoding="utf-8")
        for plugin, values in SETTINGS.items():
            settings = self._home / "settings" / f"{plugin}.jupyterlab-settings"
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text(json.dumps(values), encoding="utf-8")
        environment = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_RUNTIME_DIR": str(self._home / "runtime"),
            "JUPYTERLAB_WORKSPACES_DIR": str(self._home / "workspaces"),
            "JUPYTERLAB_SETTINGS_DIR": str(self._home / "settings"),
        }
        self._log = open(self._home / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                *(["--allow-root"] if os.geteuid() == 0 else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=environment,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise BrowserError(f"JupyterLab did not start: {exc}\n{self.log()}") from None
                time.sleep(0.25)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        """The page of `notebook` (a path under the root), in a fresh workspace."""
        return f"{self.base}/lab/tree/{notebook}?reset&token={self.token}"

    def log(self) -> str:
        path = self._home / "server.log"
        return path.read_text(encoding="utf-8", errors="replace")[-4000:] if path.is_file() else ""

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def prepare_explorer(folder: Path, db_path: Path, page_size: int = 3) -> Path:
    """A copy of the explorer's notebook in `folder`, its parameters set to `db_path` (Papermill's
    parameter cell, not run); returns its path."""
    parameters = {"db_path": Path(db_path), "output_dir": folder / "out", "page_size": page_size}
    return opened_on(EXPLORER, folder, parameters, study_of(Path(db_path)).paper)


@contextlib.contextmanager
def open_explorer(
    browser: Chromium, lab: JupyterLab, viewport: tuple[int, int], timeout: float = 120.0
) -> Iterator[str]:
    """The explorer's notebook open in `lab` in a tab of `browser` sized `viewport`, every cell run and
    the heatmap and the comparison drawn; yields the tab's session."""
    with browser.page(lab.url(f"{EXPLORER}.ipynb"), viewport, offline=False) as session:
        browser.wait_for(session, READY_JS, timeout, "the notebook and its kernel")
        browser.evaluate(session, "window.jupyterapp.commands.execute('notebook:run-all-cells')")
        browser.wait_for(session, DRAWN_JS, timeout, "every cell run, the heatmap and the comparison drawn")
        yield session


def cell_centre(browser: Chromium, session: str, model: str, language: str, question_type: str):
    """Where the overview's cell of `model`, `language` and `question_type` is on the screen, or None."""
    call = f"{CELL_CENTRE_JS}({json.dumps(model)}, {json.dumps(language)}, {json.dumps(question_type)})"
    return browser.evaluate(session, call)


def comparison(browser: Chromium, session: str) -> dict:
    """The comparison's text and the label of the chosen model's answer (None when none is marked)."""
    return browser.evaluate(session, COMPARISON_JS)
