"""Browser tests of the long-term-memory page in headless Chromium."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import open_view, wait_for_app

pytestmark = pytest.mark.e2e


def test_demo_page_renders_tables_chart_and_chinese(page, app_url):
    page.goto(f"{app_url}/Long_Memory")
    wait_for_app(page)
    page.get_by_role("heading", name="Long-term memory QA").wait_for()
    page.get_by_text("24 of 25 questions judged (from the demo judge cache).").wait_for()
    # metric cards, the static by-type table and chart (no grid, no Plotly chart on the first screen)
    page.locator('[data-testid="stMetric"]').nth(2).wait_for()
    page.locator(".eb-static svg .bar").first.wait_for(state="attached")
    page.get_by_role("heading", name="Downloads").wait_for()
    assert page.locator('[data-testid="stDataFrame"]').count() == 0 and page.locator(".js-plotly-plot").count() == 0
    # the sortable tables and the interactive chart are one click away
    open_view(page, "mem_view", "By question type · 按类型")
    page.locator('[data-testid="stDataFrame"]').nth(1).wait_for()  # by type, parity
    page.locator(".js-plotly-plot").first.wait_for()
    # the drill-down of a Chinese question shows its texts and the judge's reasoning
    open_view(page, "mem_view", "Questions · 逐题")
    box = page.get_by_role("combobox", name="Question", exact=True)
    box.click()
    box.fill("demo-zh-1_q2")
    page.get_by_role("option", name="demo-zh-1_q2 · 小林最喜欢的水果是什么？").click()
    wait_for_app(page)
    page.get_by_text("包含正确答案，多了一个芒果。", exact=True).wait_for()
    page.get_by_text("荔枝和芒果。", exact=True).first.wait_for()


def test_upload_results_file_in_the_browser(page, app_url, tmp_path):
    rows = [
        {"question_id": "u1", "question_type": "single_hop", "question": "Where does Ann live?",
         "ground_truth": "Oslo", "prediction": "Oslo"},
        {"question_id": "u2", "question_type": "temporal", "question": "她哪一年毕业？", "ground_truth": "2019",
         "prediction": "2020"},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    page.goto(f"{app_url}/Long_Memory?source=upload")
    wait_for_app(page)
    page.get_by_text("Upload a results file").wait_for()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text="Results"))
    uploader.locator('input[type="file"]').set_input_files(str(path))
    wait_for_app(page)
    page.get_by_role("heading", name="By question type").wait_for()
    value = page.locator('[data-testid="stMetric"]').filter(has_text="Questions").locator(
        '[data-testid="stMetricValue"]')
    value.wait_for()
    assert value.inner_text().strip() == "2"
    page.get_by_text("No judge scores yet").wait_for()
