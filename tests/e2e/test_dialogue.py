"""Browser test of the Persona Dialogue page in headless Chromium."""

import pytest

from tests.conftest import require_shared
from tests.e2e.conftest import open_view, wait_for_app

pytestmark = pytest.mark.e2e

REPORT = "peppa_structured_evaluation_202510101638_report.json"


def test_demo_page_heatmap_cases_diff_and_downloads(app_url, page):
    page.goto(f"{app_url}/Persona_Dialogue")
    wait_for_app(page, timeout=90000)
    page.get_by_role("heading", name="Persona Dialogue").wait_for()
    page.get_by_text("panda-chat-large · combined", exact=True).wait_for(timeout=90000)
    # the first screen: static SVG charts (one colour per model), no Plotly chart
    page.locator(".eb-static svg .bar").first.wait_for(state="attached")
    assert page.locator(".js-plotly-plot").count() == 0
    open_view(page, "dialogue_view", "Scenes × models")
    page.locator(".js-plotly-plot").first.wait_for()
    open_view(page, "dialogue_view", "Cases")
    diff = page.locator(".evalboard-diff")
    diff.first.wait_for()
    assert "竹笋饼干" in diff.first.inner_text()
    assert page.locator(".evalboard-diff span").count() >= 1  # highlighted differences
    for label in ("Human annotation CSV", "JSON report", "Text summary"):
        page.get_by_role("button", name=label).wait_for(timeout=90000)
    from playwright.sync_api import expect  # the fixtures skip (or fail under CI) without Playwright

    button = page.get_by_role("button", name="Human annotation CSV")
    # attached, enabled and the app idle before the click; the file is made on click (a deferred
    # download): on a cold server that can take a while
    expect(button).to_be_enabled(timeout=90000)
    wait_for_app(page, timeout=90000)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):  # a click landing during a rerun of a loaded server is lost: click again
        try:
            with page.expect_download(timeout=60000) as dl:
                button.click()
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            wait_for_app(page, timeout=90000)
    path = dl.value.path()
    raw = open(path, "rb").read()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte-order mark, as every page's CSV (Excel, Chinese)
    header = raw.decode("utf-8-sig").splitlines()[0].strip()
    assert header.startswith("scene,dialogue_index,context,expected_response,prediction,exact_match_normalized,content_correct")


def test_real_run_uploaded_in_the_browser(app_url, page):
    report = require_shared("persona_chat", REPORT)
    page.goto(f"{app_url}/Persona_Dialogue?source=upload")
    wait_for_app(page, timeout=90000)
    page.get_by_text("Upload my files").click()
    wait_for_app(page, timeout=90000)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.first.set_input_files(str(report))
    wait_for_app(page, timeout=90000)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').nth(1).set_input_files(str(report))
    wait_for_app(page, timeout=120000)
    page.get_by_text("qwen3-32B · combined", exact=True).wait_for(timeout=120000)
    open_view(page, "dialogue_view", "Model comparison", timeout=120000)
    page.get_by_text("Load replies of two or more models").wait_for()
    assert page.get_by_text("Load replies of two or more models").count() == 1
