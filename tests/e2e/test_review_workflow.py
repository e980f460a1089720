"""Issue 18 in Chromium against a real server: keyboard decisions are never lost, undo and the
item's history, guidelines and their version, who sees the Decide control, adjudication that moves
on, and every Export download in any order.

One server for the module (its own data folder); each test makes its own session in the same
SQLite database through the store, then drives the page.
"""

from __future__ import annotations

import subprocess
import time

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from tests.e2e.conftest import start_server, wait_for_app

pytestmark = pytest.mark.e2e
WAIT = 90_000


def _items(n: int, prefix: str) -> list[dict]:
    return [{"kind": "qa", "id": f"{prefix}{i}", "question": f"问题 {i} / question {i}", "ground_truth": "巴黎 Paris",
             "prediction": "Lyon" if i % 2 else "Paris", "system": "sys-a", "exact_match": float(i % 2 == 0),
             "token_f1": 0.5} for i in range(n)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("review-workflow")
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(data), "EVALBOARD_DATABASE_URL": ""})
    yield url, ReviewStore(data / "review.sqlite")
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


def _open(browser, url: str, session_id: int, name: str, view: str | None = None):
    """The Review page of a session, the link's name confirmed, on ``view``."""
    page = browser.new_context(viewport={"width": 1300, "height": 1200}).new_page()
    page.set_default_timeout(WAIT)
    page.goto(f"{url}/Review?annotator={name}&session={session_id}")
    wait_for_app(page, timeout=WAIT)
    page.get_by_role("button", name=f"Continue as {name}?").click()
    expect(page.get_by_role("textbox", name="Your name · 审阅人")).to_have_value(name, timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    if view:
        page.locator('[data-testid="stButtonGroup"] button', has_text=view).first.click()
        wait_for_app(page, timeout=WAIT)
    return page


def _item(page) -> str:
    """The item the page shows (its link's ``item``, set by the run that draws it)."""
    page.wait_for_function("() => new URL(location.href).searchParams.get('item')", timeout=WAIT)
    return page.evaluate("() => new URL(location.href).searchParams.get('item')")


def _keys_ready(page, item: str | None = None) -> None:
    """Wait until the key map of the shown item (or any item) is in place, focus outside any field."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    want = f"'review_model_error_{item}'" if item else "null"
    page.wait_for_function(f"() => {{ const m = window.__evalboardKeys || {{}}; return m['1'] && "
                           f"({want} === null || m['1'] === {want}); }}", timeout=WAIT)


def _until(check, timeout: float = 300.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    return check()


def test_fifty_quick_key_presses_store_fifty_decisions(browser, server):
    """Pressed faster than the page reruns: every press is queued and stored (clicking the shown
    button lost the presses made during a rerun)."""
    url, store = server
    s = store.create_session("keys", "qa", _items(60, "k"), created_by="olga", k=1)
    page = _open(browser, url, s.id, "kim")
    _keys_ready(page)
    for _ in range(50):
        page.keyboard.press("1")
    assert _until(lambda: len(store.decisions(s.id)) >= 50) and len(store.decisions(s.id)) == 50
    decided = store.decisions(s.id)
    assert {d.label for d in decided} == {"model_error"} and len({d.item_id for d in decided}) == 50
    # every press was acknowledged on screen, the last one too
    page.wait_for_function("() => (window.__evalboardKbd || {}).acked === 50", timeout=WAIT)
    expect(page.locator("#evalboard-keys-status")).to_contain_text("✓", timeout=WAIT)
    assert store.progress(s.id, "kim").decided == 50


def test_a_key_meant_for_another_screen_is_refused_visibly(browser, server):
    """A press that reaches the server after its screen changed is not applied to the new item."""
    url, store = server
    s = store.create_session("stale key", "qa", _items(3, "t"), created_by="olga", k=1)
    page = _open(browser, url, s.id, "tia")
    _keys_ready(page, _item(page))
    # as if the screen had changed between the press and its arrival: the press carries another token
    page.evaluate("() => { const kb = window.__evalboardKbd; kb.token = 'an earlier screen'; kb.seq += 1; "
                  "kb.queue.push({seq: kb.seq, key: '1'}); kb.pump(); }")
    status = page.locator("#evalboard-keys-status")
    expect(status).to_contain_text("the page changed before this key arrived", timeout=WAIT)
    assert status.get_attribute("data-kind") == "refused"
    assert store.decisions(s.id) == []


def test_undo_restores_the_previous_decision_and_the_history_shows_both(browser, server):
    url, store = server
    s = store.create_session("undo", "qa", _items(5, "u"), created_by="olga", k=1)
    page = _open(browser, url, s.id, "uma")
    first = _item(page)
    page.locator(f".st-key-review_model_error_{first}").get_by_role("button").click()
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{first}'", timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    page.get_by_role("button", name="◀ Previous").click()                   # back to it, and change it
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') === '{first}'", timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    page.locator(f".st-key-review_gt_error_{first}").get_by_role("button").click()
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{first}'", timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    assert store.decision(int(first), "uma").label == "gt_error"
    _keys_ready(page, _item(page))                                            # the keys of the item shown
    page.keyboard.press("u")                                                   # U: undo the last decision
    page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') === '{first}'", timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    restored = store.decision(int(first), "uma")
    assert (restored.label, restored.version) == ("model_error", 3)
    expect(page.get_by_text("Undone: the item is back to Model error · 模型错误")).to_be_visible(timeout=WAIT)
    history = page.locator('[data-testid="stExpander"]', has_text="History of this item")
    grid = history.locator('[data-testid="stDataFrame"] >> visible=true')      # the table (a canvas grid)
    for _ in range(5):  # open the expander (a click during a rerun may land on the copy being replaced)
        if grid.count():
            break
        history.locator("summary").click()
        page.wait_for_timeout(1500)
    expect(grid.first).to_be_visible(timeout=WAIT)
    rows = [(h.action, h.old_label, h.new_label) for h in store.history(int(first))]
    assert rows == [("save", None, "model_error"), ("save", "model_error", "gt_error"),
                    ("undo", "gt_error", "model_error")]
    expect(page.get_by_text("History of this item · 历史 (3 change(s))")).to_be_visible(timeout=WAIT)
    # and the button: undo again goes back to no decision on the item
    page.get_by_role("button", name="↶ Undo my last decision · 撤销").click()
    assert _until(lambda: store.decision(int(first), "uma") is None, 60)


def test_guidelines_are_shown_and_their_version_stored_with_the_decision(browser, server):
    url, store = server
    s = store.create_session("guide", "qa", _items(3, "g"), created_by="olga", k=1,
                             settings={"guidelines": "判断答案是否等价 / judge whether the answers are equivalent"})
    store.update_session(s.id, guidelines="v2: 同义改写可接受 / a paraphrase is an acceptable variant")
    page = _open(browser, url, s.id, "gus")
    page.get_by_text("Guidelines · 审阅指南 (version 2)").click()
    shown = page.locator('[data-testid="stExpander"]', has_text="Guidelines · 审阅指南 (version 2)")  # not the
    expect(shown.get_by_text("v2: 同义改写可接受 / a paraphrase is an acceptable variant")).to_be_visible(  # settings' diff
        timeout=WAIT)
    item = _item(page)
    page.locator(f".st-key-review_acceptable_variant_{item}").get_by_role("button").click()
    assert _until(lambda: store.decision(int(item), "gus"), 60).guidelines_version == 2


def test_a_non_adjudicator_sees_no_decide_control(browser, server):
    url, store = server
    s = store.create_session("noadj", "qa", _items(2, "n"), created_by="olga", k=2)
    a = store.items(s.id)[0]
    store.save_decision(a.id, "x", label="model_error")
    store.save_decision(a.id, "y", label="gt_error", comment="y's reason")
    page = _open(browser, url, s.id, "mallory", view="Adjudicate · 裁决")
    expect(page.get_by_text("Adjudication is for the session's owner and adjudicators")).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Decide · 裁决")).to_have_count(0)
    expect(page.get_by_text("y's reason")).to_have_count(0)


def test_adjudication_confirms_and_moves_on_to_the_next_item(browser, server):
    url, store = server
    s = store.create_session("adjudicate", "qa", _items(4, "a"), created_by="olga", k=2)
    items = store.items(s.id)
    for item in items[:3]:                                                     # three disagreements
        store.save_decision(item.id, "x", label="model_error")
        store.save_decision(item.id, "y", label="acceptable_variant")
    page = _open(browser, url, s.id, "olga", view="Adjudicate · 裁决")
    expect(page.get_by_text("0 of 3 adjudicated")).to_be_visible(timeout=WAIT)
    picker = page.get_by_role("combobox", name="Item")
    expect(picker).to_have_value("○ 问题 0 / question 0 (a0)", timeout=WAIT)
    page.locator('[data-testid="stRadio"]').get_by_text("GT error · 标准答案错误").click()
    page.get_by_role("textbox", name="Corrected answer (for a GT error) · 更正答案").fill("巴黎")
    page.get_by_role("button", name="Decide · 裁决").click()
    expect(page.get_by_text("Adjudicated · 已裁决").first).to_be_visible(timeout=WAIT)       # the toast
    expect(page.get_by_text("1 of 3 adjudicated")).to_be_visible(timeout=WAIT)
    expect(picker).to_have_value("○ 问题 1 / question 1 (a1)", timeout=WAIT)                      # moved on
    (done,) = store.adjudications(s.id)
    assert (done["item_id"], done["label"], done["corrected_answer"]) == (items[0].id, "gt_error", "巴黎")
    radio = page.locator('[data-testid="stRadio"]')
    expect(radio.locator("input:checked")).to_have_count(0)                    # the next one starts unchosen
    page.get_by_role("button", name="Decide · 裁决").click()                   # refused without a choice
    expect(page.get_by_text("Choose a final decision first")).to_be_visible(timeout=WAIT)
    assert len(store.adjudications(s.id)) == 1
    radio.get_by_text("Model error · 模型错误").click()
    page.get_by_role("button", name="Decide · 裁决").click()
    expect(page.get_by_text("2 of 3 adjudicated")).to_be_visible(timeout=WAIT)
    expect(picker).to_have_value("○ 问题 2 / question 2 (a2)", timeout=WAIT)
    assert [a["item_id"] for a in store.adjudications(s.id)] == [items[0].id, items[1].id]
    wait_for_app(page, timeout=WAIT)                       # a click during a rerun closes the list again
    done = page.get_by_role("option", name="✓ 问题 0 / question 0 (a0)")
    for _ in range(5):                                                         # the picker marks what is done
        picker.click()
        try:
            expect(done).to_be_visible(timeout=10_000)
            break
        except AssertionError:
            page.keyboard.press("Escape")
            wait_for_app(page, timeout=WAIT)
    expect(done).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("option", name="✓ 问题 1 / question 1 (a1)")).to_be_visible(timeout=WAIT)


@pytest.mark.parametrize("order", [("jsonl", "csv", "gt"), ("gt", "csv", "jsonl"), ("csv", "gt", "jsonl")],
                         ids=lambda o: "-".join(o))
def test_every_export_download_produces_a_file_in_any_order(browser, server, order):
    url, store = server
    name = "export-" + "-".join(order)
    s = store.create_session(name, "qa", _items(3, "e"), created_by="olga", k=1)
    first = store.items(s.id)[0]
    store.save_decision(first.id, "olga", label="gt_error", comment="答案错了")
    store.adjudicate(first.id, "olga", "gt_error", corrected_answer="巴黎")
    page = _open(browser, url, s.id, "olga", view="Export · 导出")
    buttons = {"jsonl": "Decisions (JSONL)", "csv": "Decisions (CSV, persona annotation layout)",
               "gt": "GT corrections (JSONL)"}
    got = {}
    for key in order + order:                                                  # each twice
        with page.expect_download(timeout=WAIT) as info:
            page.get_by_role("button", name=buttons[key]).click()
        path = info.value.path()
        got.setdefault(key, []).append(open(path, "rb").read())
    assert got["jsonl"][0] == got["jsonl"][1] and b'"type": "session"' in got["jsonl"][0]
    assert got["csv"][0] == got["csv"][1] and "答案错了".encode() in got["csv"][0]
    assert got["gt"][0] == got["gt"][1] and "巴黎".encode() in got["gt"][0]
