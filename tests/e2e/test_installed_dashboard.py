"""The installed dashboard in Chromium: ``pip install`` into a clean virtualenv, then ``evalboard serve``
from a folder outside the checkout (issue 26).

Checked: Home offers all six pages (no "Not available"); each page, opened from its Home card, shows
its demo with no exception box; the project's own sidebar is there and Streamlit's page navigation is
not; the project's settings hold (upload limit 1 GB, its primary colour); and nothing leaves the
machine: every request the browser makes goes to the server on 127.0.0.1, and the server itself, whose
HTTP(S) proxy is a recorder (:class:`tests.helpers.install.OutboundRecorder`), asks no other host
(Streamlit's usage statistics are off, its headless banner does not look up the external IP).

The install (``tests/helpers/install.py``, shared with ``tests/unit/test_packaging.py``) runs under
``CI=true`` or with ``EVALBOARD_TEST_INSTALL=1``.
"""

from __future__ import annotations

import re
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from components.layout import PAGES
from tests.e2e.conftest import _free_port, wait_for_app
from tests.helpers.install import OutboundRecorder

pytestmark = pytest.mark.e2e

WAIT = 120_000  # ms: a fresh installed server imports each page on its first visit (2 shared cores in CI)
#: The heading each page starts with, by its path in components.layout.PAGES.
TITLES = {"pages/1_Narrative.py": "Narrative annotation", "pages/2_QA_Factcheck.py": "QA & Fact-check",
          "pages/3_Test_Sets.py": "Test sets", "pages/4_Persona_Dialogue.py": "Persona Dialogue",
          "pages/5_Long_Memory.py": "Long-term memory QA", "pages/6_Review.py": "Review",
          "pages/7_Judge_Lab.py": "Judge lab",
          "pages/8_Runs.py": "Runs"}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass
class Served:
    url: str
    log: Path
    share: Path
    proc: subprocess.Popen
    outbound: OutboundRecorder

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def served(installed_evalboard, tmp_path_factory):
    """``<venv>/bin/evalboard serve --port <free>`` run from an empty folder, its HTTP(S) proxy a recorder."""
    cwd = tmp_path_factory.mktemp("serve-cwd")
    outbound = OutboundRecorder()
    port = _free_port()
    log = cwd / "serve.log"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [str(installed_evalboard.bin / "evalboard"), "serve", "--port", str(port), "--data-dir", str(cwd / "data"),
             "--server.fileWatcherType", "none"],  # a pass-through option
            cwd=cwd, env=installed_evalboard.env(**outbound.proxy_env()), stdout=out, stderr=subprocess.STDOUT)
    served = Served(f"http://127.0.0.1:{port}", log, installed_evalboard.venv / "share" / "evalboard", proc, outbound)
    try:
        deadline = time.time() + 90
        while True:
            assert proc.poll() is None, f"evalboard serve exited with {proc.returncode}:\n{served.log_text()[-3000:]}"
            try:
                with urllib.request.urlopen(served.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, "evalboard serve did not become healthy within 90 s:\n" + served.log_text()[-3000:]
            time.sleep(0.3)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        outbound.close()


def test_the_installed_dashboard_serves_every_page_with_its_settings_and_asks_no_other_host(browser, served):
    from playwright.sync_api import expect

    banner = served.log_text()
    # the installed files are served (not a checkout), with the shipped settings
    assert f"serving {served.share / 'app.py'}" in banner, banner
    assert "  URL: http://localhost:" in banner, banner  # browser.serverAddress: no external IP looked up
    assert "External URL" not in banner and "external IP" not in banner, banner
    assert "Collecting usage statistics" not in banner, banner

    requests: list[str] = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.on("websocket", lambda ws: requests.append(ws.url))
    page.set_default_timeout(WAIT)
    main = page.locator('[data-testid="stMain"]')
    sidebar = page.locator('[data-testid="stSidebar"]')
    try:
        page.goto(served.url)
        # Home: one card per page, each linking to it
        cards = main.locator('[data-testid="stPageLink"]')
        for _, label, _, _ in PAGES[1:]:
            expect(cards.filter(has_text=f"Open {label}")).to_have_count(1, timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        expect(main).not_to_contain_text("Not available")
        # the project's own sidebar (every page, Home first), no Streamlit page navigation
        expect(sidebar.locator('[data-testid="stPageLink"]')).to_have_text(
            [re.compile(re.escape(label) + r"\s*$") for _, label, _, _ in PAGES])
        expect(sidebar).to_contain_text("Data source")
        assert page.locator('[data-testid="stSidebarNav"]').count() == 0
        # the theme: the chosen data source is drawn in the project's primary colour (#1565c0)
        colours = page.evaluate("() => [...document.querySelectorAll('[data-testid=stSidebar] [data-testid=stRadio] *')]"
                                ".map(e => getComputedStyle(e).backgroundColor)")
        assert "rgb(21, 101, 192)" in colours, colours

        for path, label, _, _ in PAGES[1:]:
            cards.filter(has_text=f"Open {label}").locator("a").click()
            slug = Path(path).stem.split("_", 1)[1]
            page.wait_for_url(re.compile(rf"/{slug}(\?.*)?$"))
            expect(main.locator("h1").first).to_contain_text(TITLES[path], timeout=WAIT)
            if path == "pages/6_Review.py":
                expect(main.get_by_role("button", name=re.compile("Review the QA demo"))).to_be_visible(timeout=WAIT)
            elif path == "pages/8_Runs.py":  # an empty registry: how to log a run, and the demo's runs
                expect(main.get_by_role("button", name=re.compile("Log the demo runs"))).to_be_visible(timeout=WAIT)
            else:  # the demo's headline cards
                expect(main.locator('[data-testid="stMetric"]').first).to_be_visible(timeout=WAIT)
            wait_for_app(page, timeout=WAIT)
            assert main.locator('[data-testid="stException"]').count() == 0, \
                (label, main.locator('[data-testid="stException"]').first.inner_text())
            expect(sidebar.locator('[data-testid="stPageLink"]')).to_have_count(len(PAGES))
            assert page.locator('[data-testid="stSidebarNav"]').count() == 0, label
            sidebar.locator('[data-testid="stPageLink"] a').first.click()  # Home, from the own sidebar
            expect(cards.filter(has_text=f"Open {label}")).to_have_count(1, timeout=WAIT)

        # the upload limit of the shipped settings (Streamlit's default says 200MB)
        page.goto(served.url + "/QA_Factcheck?source=upload")
        expect(main.locator('[data-testid="stFileUploader"]').first).to_contain_text("1GB per file", timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
    finally:
        context.close()

    foreign = sorted({u for u in requests if urlsplit(u).scheme not in ("data", "blob")
                      and urlsplit(u).hostname not in LOCAL_HOSTS})
    assert foreign == [], foreign
    assert any(u.startswith(("ws://127.0.0.1", "ws://localhost")) for u in requests), "no websocket was seen"
    assert served.outbound.seen == [], served.outbound.seen
    assert served.proc.poll() is None, served.log_text()[-3000:]
    assert "Traceback" not in served.log_text(), served.log_text()[-3000:]
