"""Browser test of "Apply review corrections" (components/corrections.py) in headless Chromium."""

from __future__ import annotations

import pytest

from evaluators.demo import demo_path
from evaluators.io.gt_patch import PatchEntry, file_sha256, write_gt_patch
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e


def test_testsets_page_applies_an_uploaded_patch(page, app_url, tmp_path):
    digest = file_sha256(demo_path("testsets", "factual_demo.json"))
    patch = tmp_path / "fix.jsonl"
    patch.write_text(write_gt_patch([
        PatchEntry("q_002", digest, "add_answer", ("一只橘色的猫，叫阿橘",), ("他养了一只猫，叫阿橘。",), "ann"),
        PatchEntry("q_003", digest, "replace", ("灯塔的铜灯罩",), ("灯罩",), "lead")]), encoding="utf-8")
    page.goto(f"{app_url}/Test_Sets")
    wait_for_app(page)
    page.get_by_role("heading", name="Review corrections · 审阅更正").wait_for()
    assert page.get_by_text("Corrections from · 更正来源").count() == 0   # off: only the toggle
    page.get_by_text("Apply review corrections · 应用审阅更正").click()
    wait_for_app(page)
    page.get_by_text("GT patch files · 更正文件 (JSONL)").click()
    wait_for_app(page)
    uploader = page.locator('[data-testid="stFileUploader"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text="GT patches"))
    uploader.locator('input[type="file"]').set_input_files(str(patch))
    wait_for_app(page)
    page.get_by_text("Before and after the corrections · 更正前后").wait_for()
    table = page.locator('[data-testid="stDataFrame"]').last
    table.wait_for()
    # the grid draws on a canvas; its accessible copy holds the cells' values: 5/8 -> 6.5/8, +1.5/8
    text = ""
    for _ in range(40):  # the accessible copy is filled in after the grid is drawn
        text = table.text_content() or ""
        if "keyword score" in text:
            break
        page.wait_for_timeout(250)
    for cell in ("keyword score", "0.625", "0.8125", "0.1875", "31.25% – 87.50%"):
        assert cell in text, text
