"""Issue 30 in Chromium at 1440 px: the Adjudicate view shows the item as its reviewers saw it — the
question, the GT-vs-prediction diff and every reviewer's comment — with the GT-error claim first and
labels in words."""

from __future__ import annotations

import subprocess

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from tests.e2e.conftest import start_server, wait_for_app

pytestmark = pytest.mark.e2e
WAIT = 90_000
ITEMS = [{"kind": "qa", "id": f"c{i}", "question": f"法国的首都是哪里？ Which city is the capital of France? #{i}",
          "ground_truth": "巴黎 Paris", "prediction": "里昂 Lyon", "system": "sys-a", "exact_match": 0.0,
          "token_f1": 0.25} for i in range(4)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("review-adjudicate")
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(data), "EVALBOARD_DATABASE_URL": ""})
    yield url, ReviewStore(data / "review.sqlite")
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_adjudicate_shows_question_both_comments_and_the_diff_at_1440px(browser, server, tmp_path):
    url, store = server
    s = store.create_session("context", "qa", ITEMS, created_by="olga", k=2)
    items = store.items(s.id)
    store.save_decision(items[0].id, "x", label="model_error")
    store.save_decision(items[0].id, "y", label="correct")
    store.save_decision(items[2].id, "x", label="gt_error", comment="标准答案应该是里昂")
    store.save_decision(items[2].id, "y", label="gt_error", comment="The reference names the wrong city")
    page = browser.new_context(viewport={"width": 1440, "height": 1200}).new_page()
    page.set_default_timeout(WAIT)
    page.goto(f"{url}/Review?annotator=olga&session={s.id}")
    wait_for_app(page, timeout=WAIT)
    page.get_by_role("button", name="Continue as olga?").click()
    expect(page.get_by_role("textbox", name="Your name · 审阅人")).to_have_value("olga", timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    page.locator('[data-testid="stButtonGroup"] button', has_text="Adjudicate · 裁决").first.click()
    wait_for_app(page, timeout=WAIT)
    picker = page.get_by_role("combobox", name="Item")
    expect(picker).to_have_value("○ 法国的首都是哪里？ Which city is the capital of France? #2 (c2)", timeout=WAIT)
    main = page.locator('[data-testid="stMain"]')
    expect(main.get_by_text("法国的首都是哪里？ Which city is the capital of France? #2", exact=True)).to_be_visible()
    for comment in ("标准答案应该是里昂", "The reference names the wrong city"):
        expect(main.get_by_text(comment).first).to_be_visible()
        box = main.get_by_text(comment).first.bounding_box()
        assert box and box["x"] + box["width"] <= 1440                       # on screen, not cut off
    diff = main.locator(".evalboard-diff")
    expect(diff).to_have_count(2)
    expect(diff.first.locator("span")).to_have_count(2)                      # 巴黎 and Paris marked
    expect(diff.first).to_contain_text("巴黎 Paris")
    expect(diff.nth(1)).to_contain_text("里昂 Lyon")
    expect(main.locator("li", has_text="标准答案应该是里昂")).to_contain_text("GT error · 标准答案错误")  # in words
    expect(page.locator('[data-testid="stRadio"]').locator("input:checked")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "adjudicate_1440.png"), full_page=True)
