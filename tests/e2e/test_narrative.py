"""End-to-end in real headless Chromium: upload the real CH_002 pair, open the span overlay and the character diff."""

import shutil
import subprocess

import pytest

from tests.conftest import IN_CI, require_shared
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e


def _cjk_font_installed() -> bool:
    if not shutil.which("fc-list"):
        return False
    out = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True).stdout
    return bool(out.strip())


def _click_view(page, label):
    page.locator('[data-testid="stButtonGroup"] button', has_text=label).first.click()
    wait_for_app(page)


def test_upload_real_pair_then_overlay_and_character_diff(app_url, page, tmp_path):
    gt = require_shared("fairytales", "gt_v3", "CH_002_牛郎织女_v3.json")
    pred = require_shared("fairytales", "predictions", "CH_002_牛郎织女_v3_prediction.json")
    if not _cjk_font_installed():
        msg = "no CJK font (fonts-noto-cjk) installed: Chinese text would render as boxes"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)
    page.goto(f"{app_url}/Narrative?source=upload")
    wait_for_app(page)
    def uploader(label):
        return page.locator('[data-testid="stFileUploader"]', has_text=label).locator("input[type=file]")

    uploader("Ground-truth files").set_input_files(str(gt))
    wait_for_app(page)
    uploader("Prediction files").set_input_files(str(pred))
    page.get_by_text("Documents scored").wait_for(timeout=60000)
    wait_for_app(page)
    assert page.locator('[data-testid="stMetric"]', has_text="Documents scored").inner_text().strip().endswith("1")

    _click_view(page, "Spans")
    overlay = page.locator(".eb-overlay")
    overlay.wait_for()
    text = overlay.inner_text()
    assert "牛郎" in text and "织女" in text
    # The overlay scrolls inside its own box instead of stretching the page.
    assert overlay.evaluate("e => getComputedStyle(e).overflowY") == "auto"
    assert overlay.locator("span[title]").count() >= 14  # one hover label per span stretch at least
    page.screenshot(path=str(tmp_path / "spans.png"), full_page=True)

    _click_view(page, "Characters")
    chips = page.locator(".eb-chars .eb-chip")
    chips.first.wait_for()
    names = chips.all_inner_texts()
    assert "牛郎" in names and "银河" in names  # a matched and an extra character
    assert page.locator(".eb-chars .eb-chip[data-status='extra']").count() == 8
    # Chinese glyphs are drawn with a CJK font, not as fallback boxes: the rendered width of a
    # CJK character is close to the font size (a full-width glyph).
    width = page.evaluate("""() => { const s = document.querySelector('.eb-chars .eb-chip');
        const c = document.createElement('canvas').getContext('2d');
        c.font = getComputedStyle(s).fontSize + ' ' + getComputedStyle(s).fontFamily;
        return c.measureText('牛').width / parseFloat(getComputedStyle(s).fontSize); }""")
    assert 0.85 <= width <= 1.15
    page.screenshot(path=str(tmp_path / "characters.png"), full_page=True)
