"""In Chromium: a link opened under another name cannot change that person's decision, and the
decision keys do nothing outside the Review view (today both changed Alice's decision)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from tests.e2e.conftest import start_server, wait_for_app

pytestmark = pytest.mark.e2e

ITEMS = [{"kind": "qa", "id": f"k{i}", "question": f"问题 {i} / question {i}", "ground_truth": "Paris",
          "prediction": "Lyon"} for i in range(5)]


def _press(page, keys: str) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for key in keys:
        page.keyboard.press(key)
    page.wait_for_timeout(1500)
    wait_for_app(page, timeout=90000)


def test_a_link_under_another_name_and_keys_outside_the_review_view_change_nothing(browser, tmp_path):
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("identity", "qa", ITEMS, created_by="olga", k=2)
    target = store.items(s.id)[2]
    store.save_decision(target.id, "alice", label="gt_error", comment="alice's private note")
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(tmp_path), "EVALBOARD_DATABASE_URL": ""})
    try:
        page = browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
        page.goto(f"{url}/Review?annotator=alice&session={s.id}&item={target.id}")
        wait_for_app(page, timeout=90000)
        page.get_by_text("问题 2 / question 2").first.wait_for(timeout=90000)    # the item is shown
        expect(page.get_by_text("alice's private note")).to_have_count(0)      # her comment is not
        expect(page.get_by_role("button", name="1 · Model error · 模型错误")).to_have_count(0)
        _press(page, "123sjk")                                                  # no control: keys do nothing
        assert store.decision(target.id, "alice").version == 1
        # mallory names herself: her own item, her own controls; then keys on another view
        name = page.get_by_role("textbox", name="Your name · 审阅人")
        name.fill("mallory")
        name.press("Enter")
        page.get_by_role("button", name="1 · Model error · 模型错误").first.wait_for(timeout=90000)
        wait_for_app(page, timeout=90000)
        expect(page.get_by_text("alice's private note")).to_have_count(0)
        page.locator('[data-testid="stButtonGroup"] button', has_text="Agreement · 一致性").first.click()
        page.get_by_text("Krippendorff (2011)").first.wait_for(timeout=90000)
        wait_for_app(page, timeout=90000)
        _press(page, "123s")
        assert [d.annotator for d in store.decisions(s.id)] == ["alice"]       # nothing saved from another view
        page.locator('[data-testid="stButtonGroup"] button', has_text="Review · 审阅").first.click()
        page.get_by_role("button", name="1 · Model error · 模型错误").first.wait_for(timeout=90000)
        wait_for_app(page, timeout=90000)
        page.wait_for_function("() => ((window.__evalboardKeys || {})['1'] || '').startsWith('review_model_error_')",
                               timeout=90000)
        _press(page, "1")                                                       # on the Review view a key decides
        for _ in range(60):
            if any(d.annotator == "mallory" for d in store.decisions(s.id)):
                break
            page.wait_for_timeout(500)
    finally:
        proc.terminate()
        proc.wait(30)
    got = {(d.annotator, d.item_id): (d.label, d.comment, d.version) for d in store.decisions(s.id)}
    assert got[("alice", target.id)] == ("gt_error", "alice's private note", 1)
    assert [a for a, _ in got if a == "mallory"] == ["mallory"]
    assert ("mallory", target.id) not in got or got[("mallory", target.id)][0] == "model_error"
