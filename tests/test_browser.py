"""The ordering toggle in a real browser, as a user meets it: JupyterLab + headless Chromium.

Debian's ``chromium`` is the browser (Playwright's own download cannot work
offline); ``.ci/run`` installs it. Without it this test fails, never skips.
Every request that is not to 127.0.0.1 is aborted. Set
``JITMAGIC_UPDATE_SCREENSHOT=1`` to copy the screenshot to ``docs/widget.png``.
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
from nbhelpers import ordering_notebook
from nbhelpers import private_jupyter_env

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


def test_toggle_in_jupyterlab(tmp_path):
    require_chromium()
    from playwright.sync_api import sync_playwright

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    ordering_notebook(root / "orderings.ipynb")
    with jupyterlab(root, home) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = local_page(browser)
            shot = run_and_click(page, f"{url}/lab/tree/orderings.ipynb?token={TOKEN}", tmp_path)
        finally:
            browser.close()
    if os.environ.get("JITMAGIC_UPDATE_SCREENSHOT") == "1":
        (REPO / "docs").mkdir(exist_ok=True)
        shutil.copy(shot, REPO / "docs" / "widget.png")


def run_and_click(page, notebook_url: str, tmp_path: Path) -> Path:
    """Open the notebook, run all cells, click the other ordering; returns the screenshot."""
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
    toggle = page.locator(".widget-toggle-buttons")
    toggle.wait_for(timeout=180_000)
    kernel_python = page.locator(".jp-OutputArea-output pre", has_text="kernel python:")
    kernel_python = kernel_python.inner_text()
    assert sys.executable in kernel_python, f"the kernel is not this venv's: {kernel_python}"
    # The static twin (for exports) hides itself beside the drawn widget.
    twin = page.locator(".jitcompare-switch")
    twin.wait_for(state="attached", timeout=30_000)
    assert twin.count() == 1 and not twin.is_visible()
    output = page.locator(".widget-output")
    verdict = output.locator(".jitcompare-verdict")
    # Whatever the numbers say, the verdict is about the chosen ordering, named first.
    assert verdict.inner_text().startswith("jit(vmap(f)) "), verdict.inner_text()
    assert "per call" in verdict.inner_text()
    first_chart = output.locator("img").get_attribute("src")
    other = toggle.locator("button", has_text="vmap(jit(f))").filter(
        has_not_text="jit(vmap(f))")
    other.click()
    page.wait_for_function("() => document.querySelector('.widget-output .jitcompare-verdict')"
                           ".innerText.startsWith('vmap(jit(f)) ')", timeout=30_000)
    assert "mod-active" in (other.get_attribute("class") or "")
    assert "vmap(jit(f))" in verdict.inner_text() and "per call" in verdict.inner_text()
    assert output.locator("img").get_attribute("src") != first_chart
    assert not twin.is_visible()
    # The summary table above the toggle has every ordering's row.
    table = page.locator("table.jitcompare-orderings")
    for name in ("jit(vmap(f))", "vmap(jit(f))", "vmap(f)", "jit(vmap(jit(f)))"):
        assert table.locator("code", has_text=name).count() >= 1
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session.kernel.status === 'idle'", timeout=30_000)
    shot = tmp_path / "widget.png"
    area = page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-child")
    top, bottom = area.nth(1).bounding_box(), area.nth(2).bounding_box()
    page.screenshot(path=shot, clip={"x": top["x"], "y": top["y"], "width": top["width"],
                                     "height": bottom["y"] + bottom["height"] - top["y"]})
    assert shot.stat().st_size > 10_000
    return shot


def test_toggle_reopened_from_its_saved_state_switches_in_the_browser(tmp_path, monkeypatch):
    """A notebook run by nbclient (which saves the widget state), trusted, then opened in
    JupyterLab without running it: the widget is drawn from the saved state, in a fresh
    kernel that holds none of its models, and its buttons still switch the panels (they
    are linked in the browser), with the static twin hidden beside it."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    env = private_jupyter_env(home)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    path = ordering_notebook(root / "saved.ipynb")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(root)}}).execute()
    assert "widgets" in nb.metadata
    nbformat.write(nb, path)
    # JupyterLab draws widgets (and applies an output's CSS) in trusted notebooks only
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(path)], env=env, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    with jupyterlab(root, home) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = local_page(browser)
            page.goto(f"{url}/lab/tree/saved.ipynb?token={TOKEN}")
            toggle = page.locator(".widget-toggle-buttons")
            toggle.wait_for(timeout=120_000)
            assert not page.locator(".jitcompare-switch").is_visible()
            verdict = page.locator(".widget-output .jitcompare-verdict")
            assert verdict.inner_text().startswith("jit(vmap(f)) "), verdict.inner_text()
            toggle.locator("button", has_text="vmap(jit(f))").filter(
                has_not_text="jit(vmap(f))").click()
            page.wait_for_function("() => document.querySelector('.widget-output "
                                   ".jitcompare-verdict').innerText.startsWith('vmap(jit(f)) ')",
                                   timeout=30_000)
        finally:
            browser.close()
