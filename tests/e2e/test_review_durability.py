"""Review decisions survive a killed server, and two browsers reviewing one item lose nothing.

Starts its own ``streamlit run app.py`` with a private data folder, submits decisions from
Chromium, kills the server with SIGKILL, starts it again and reads the database.
"""

from __future__ import annotations

import signal
import subprocess

import pytest

from evaluators.review import ReviewStore
from tests.e2e.conftest import start_server, wait_for_app

pytestmark = pytest.mark.e2e


def _start(data_dir) -> tuple[subprocess.Popen, str]:
    return start_server({"EVALBOARD_DATA_DIR": str(data_dir), "EVALBOARD_DATABASE_URL": ""})


def _confirm(page, name: str) -> None:
    """Confirm the name the link proposes (a link's name is never taken silently)."""
    from playwright.sync_api import expect

    page.get_by_role("button", name=f"Continue as {name}?").click()
    expect(page.get_by_role("textbox", name="Your name · 审阅人")).to_have_value(name, timeout=90000)
    wait_for_app(page, timeout=90000)


def _decide(page, label_text: str) -> str:
    """Click a decision button; returns the item id the page showed (from the link) before the click."""
    item = page.evaluate("() => new URL(location.href).searchParams.get('item')")
    slug = {"1": "model_error", "2": "gt_error", "3": "acceptable_variant"}[label_text[0]]
    # the button of the item the link names (a button left from the item before, during a rerun, does nothing)
    page.locator(f".st-key-review_{slug}_{item}").get_by_role("button", name=label_text).click()
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{item}'", timeout=90000)
    wait_for_app(page, timeout=90000)
    return item


def test_decisions_survive_sigkill_and_two_browsers_lose_nothing(browser, tmp_path):
    proc, url = _start(tmp_path)
    try:
        alice = browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
        alice.goto(f"{url}/Review?annotator=alice")
        wait_for_app(alice, timeout=90000)
        _confirm(alice, "alice")
        alice.get_by_role("button", name="Review the QA demo · 审阅示例").click()
        alice.get_by_role("button", name="1 · Model error · 模型错误").first.wait_for(timeout=90000)
        decided = [_decide(alice, "1 · Model error · 模型错误"),
                   _decide(alice, "3 · Acceptable variant · 可接受的变体")]
        # bob opens the item alice decides next, in another browser, and both decide it
        shared = alice.evaluate("() => new URL(location.href).searchParams.get('item')")
        session = alice.evaluate("() => new URL(location.href).searchParams.get('session')")
        bob = browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
        bob.goto(f"{url}/Review?annotator=bob&session={session}&item={shared}")
        wait_for_app(bob, timeout=90000)
        _confirm(bob, "bob")
        bob.get_by_role("button", name="2 · GT error · 标准答案错误").first.wait_for(timeout=90000)
        _decide(bob, "2 · GT error · 标准答案错误")
        decided.append(_decide(alice, "1 · Model error · 模型错误"))
        # the keyboard: "3" decides (acceptable variant) and opens the next item, "k" goes back to it
        by_key = alice.evaluate("() => new URL(location.href).searchParams.get('item')")
        alice.evaluate("() => document.activeElement && document.activeElement.blur()")  # not in a text field
        alice.wait_for_function(f"() => (window.__evalboardKeys || {{}})['3'] === 'review_acceptable_variant_{by_key}'",
                                timeout=90000)  # the key map of this item is in place
        alice.keyboard.press("3")
        alice.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{by_key}'",
                                timeout=90000)
        wait_for_app(alice, timeout=90000)
        alice.keyboard.press("k")
        alice.wait_for_function(f"() => new URL(location.href).searchParams.get('item') === '{by_key}'",
                                timeout=90000)
    finally:
        proc.send_signal(signal.SIGKILL)  # no shutdown: what was submitted must already be on disk
        proc.wait(30)
    store = ReviewStore(tmp_path / "review.sqlite")
    (s,) = store.sessions()
    got = {(d.annotator, str(d.item_id)): d.label for d in store.decisions(s.id)}
    assert got[("alice", decided[0])] == "model_error" and got[("alice", decided[1])] == "acceptable_variant"
    assert got[("alice", shared)] == "model_error" and got[("bob", shared)] == "gt_error"
    assert got[("alice", by_key)] == "acceptable_variant"
    assert store.get_upload(s.uploads[0])[0] == "qa_demo.jsonl"
    # a restarted server reopens the session from its link, with the decisions
    proc, url = _start(tmp_path)
    try:
        page = browser.new_context().new_page()
        page.goto(f"{url}/Review?annotator=alice&session={session}")
        wait_for_app(page, timeout=90000)
        _confirm(page, "alice")
        page.get_by_text("You have decided 4 of").wait_for(timeout=90000)
    finally:
        proc.terminate()
        proc.wait(30)
