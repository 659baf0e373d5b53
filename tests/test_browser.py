"""The ``--vmap`` section in a real browser, as a user meets it: JupyterLab + headless Chromium.

Debian's ``chromium`` is the browser (Playwright's own download cannot work
offline); ``.ci/run`` installs it. Without it this test fails, never skips.
Every request that is not to 127.0.0.1 is aborted. Set
``JITMAGIC_UPDATE_SCREENSHOT=1`` to copy the screenshot to ``docs/orderings.png``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbhelpers import ordering_notebook, private_jupyter_env

pytestmark = pytest.mark.slow  # a JupyterLab server and a browser

CHROMIUM = os.environ.get("JITMAGIC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
REPO = Path(__file__).resolve().parent.parent
TOKEN = "jitmagic-browser-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 2) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (127.0.0.1 only)
        return r.status


@contextmanager
def jupyterlab(root: Path, home: Path):
    """A JupyterLab server on 127.0.0.1, all of its state under ``home``; yields its URL."""
    port = free_port()
    env = private_jupyter_env(home)
    settings = home / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    log = (home / "jupyterlab.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", "--allow-root",
         "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
         "--LabApp.news_url=None"],
        env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if get(f"{url}/api/status?token={TOKEN}") == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("JupyterLab did not start:\n" + (home / "jupyterlab.log").read_text())
            time.sleep(0.3)
        yield url
    finally:
        _shutdown(proc, url)
        log.close()


def _shutdown(proc: subprocess.Popen, url: str) -> None:
    """Ask the server to stop (it stops its kernels too); else end its process group."""
    try:
        req = urllib.request.Request(f"{url}/api/shutdown", method="POST",
                                     headers={"Authorization": f"token {TOKEN}"})
        urllib.request.urlopen(req, timeout=5).close()  # noqa: S310 (127.0.0.1 only)
        proc.wait(timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def require_chromium() -> None:
    """Fail (never skip) where the browser is missing, saying how to get it."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium is needed for the browser test and is not at {CHROMIUM}: "
                    "install Debian's `chromium` package (./run-tests does), or point "
                    "JITMAGIC_CHROMIUM at a Chromium binary.")


def local_page(browser):
    """A page on which every request not to 127.0.0.1 is aborted."""
    page = browser.new_page(viewport={"width": 1300, "height": 3200})
    page.route("**/*", lambda route: route.continue_()
               if route.request.url.startswith("http://127.0.0.1:") else route.abort())
    return page


#: What JupyterLab writes where an output's widget has no model (a notebook saved with a
#: widget output but not its state, reopened after a kernel restart).
WIDGET_ERROR = "Error displaying widget"


def test_vmap_answer_first_in_jupyterlab(tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    ordering_notebook(root / "orderings.ipynb")
    with jupyterlab(root, home) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = local_page(browser)
            shot = run_and_open(page, f"{url}/lab/tree/orderings.ipynb?token={TOKEN}", tmp_path)
        finally:
            browser.close()
    if os.environ.get("JITMAGIC_UPDATE_SCREENSHOT") == "1":
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copy(shot, REPO / "docs" / "orderings.png")


def run_and_open(page, notebook_url: str, tmp_path: Path) -> Path:
    """Open the notebook, run all cells, open the orderings' fold; returns the screenshot."""
    page.goto(notebook_url)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget "
                           "&& window.jupyterapp.shell.currentWidget.sessionContext",
                           timeout=60_000)
    page.evaluate("""async () => {
        const panel = window.jupyterapp.shell.currentWidget;
        await panel.context.ready;
        await panel.sessionContext.ready;
        await window.jupyterapp.commands.execute('notebook:run-all-cells');
    }""")
    table = page.locator("table.jitcompare-orderings")
    table.wait_for(state="attached", timeout=180_000)
    kernel_python = page.locator(".jp-OutputArea-output pre", has_text="kernel python:")
    kernel_python = kernel_python.inner_text()
    assert sys.executable in kernel_python, f"the kernel is not this venv's: {kernel_python}"
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session.kernel.status === 'idle'", timeout=30_000)
    page.set_viewport_size({"width": 1366, "height": 768})
    opened_by_a_click(page)
    shot = tmp_path / "orderings.png"
    page.evaluate("() => Array.from(document.querySelectorAll('h4')).find(h => "
                  "h.textContent.startsWith('vmap/jit orderings')).scrollIntoView()")
    page.screenshot(path=shot)
    assert shot.stat().st_size > 10_000
    return shot


def opened_by_a_click(page) -> None:
    """The orderings' answer shows, their table and chart only after a click on the fold's
    summary, and no widget error anywhere."""
    verdict = page.locator(".jitcompare-verdict", has_text="jit(vmap(f)) against vmap(jit(f))")
    verdict.wait_for(timeout=120_000)
    assert "per call" in verdict.inner_text()
    table = page.locator("table.jitcompare-orderings")
    assert not table.is_visible()
    page.locator("summary", has_text="all four orderings").click()
    table.wait_for(state="visible", timeout=10_000)
    for name in ("jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))"):
        assert table.locator("code", has_text=name).count() >= 1
    assert page.get_by_text(WIDGET_ERROR).count() == 0
    assert page.locator(".widget-toggle-buttons").count() == 0


def test_a_saved_notebook_reopened_without_its_kernel_shows_no_widget_error(tmp_path,
                                                                             monkeypatch):
    """A notebook run by nbclient, saved as JupyterLab saves it (no widget state), then
    opened in JupyterLab without running it, in a fresh kernel that holds nothing of the
    run: no "Error displaying widget: model not found", the answer shows, and the
    orderings' fold opens with a click."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    env = private_jupyter_env(home)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    path = ordering_notebook(root / "saved.ipynb")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300, store_widget_state=False,
                   resources={"metadata": {"path": str(root)}}).execute()
    nbformat.write(nb, path)
    # JupyterLab applies an output's HTML (and CSS) in trusted notebooks only
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(path)], env=env, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    with jupyterlab(root, home) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = local_page(browser)
            page.goto(f"{url}/lab/tree/saved.ipynb?token={TOKEN}")
            opened_by_a_click(page)
        finally:
            browser.close()
