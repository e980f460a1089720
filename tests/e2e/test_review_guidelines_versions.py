"""Issue 30's first acceptance walk in Chromium, on SQLite and on PostgreSQL: an owner writes guidelines v1
on the page, a reviewer decides 5 items, the owner saves v2, the reviewer decides 5 more; the decisions
carry v1 / v2 (read back from the database), the settings show the diff between the versions, and the
Agreement view splits by guidelines version.

A second reviewer's decisions on the same items (made through the service, as the AppTest version does) give
the agreement figures something to compare; everything the two people under test do goes through the page.
The PostgreSQL run takes a fresh database of ``EVALBOARD_TEST_DATABASE_URL`` (skipped without it, failed
under CI=true: :func:`tests.conftest.review_url`).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from evaluators.review import service as rs
from tests.e2e.conftest import start_server, stop_server, wait_for_app
from tests.e2e.test_review_workflow import _item, _open, _until

pytestmark = pytest.mark.e2e
WAIT = 90_000
ITEMS = [{"kind": "qa", "id": f"rec-{i}",
          "question": f"法国的首都是哪里？ Which city is the capital of France? #{i}",
          "ground_truth": "巴黎 Paris", "prediction": "里昂 Lyon", "system": "sys-a", "exact_match": 0.0,
          "token_f1": 0.25} for i in range(12)]
V1 = "# 审阅指南\n\nA variant in other words is acceptable.\n"
V2 = V1 + "\n漏字算模型错误。\n"


@pytest.fixture
def server(review_url, tmp_path):
    """A dashboard on the review database ``review_url`` (SQLite file, then PostgreSQL) and a store on it."""
    store = ReviewStore(review_url)
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(tmp_path / "data"), "EVALBOARD_DATABASE_URL": review_url})
    yield url, store
    stop_server(proc)
    store.dispose()


def _save_guidelines(page, text: str, version: int) -> None:
    """Open the session block, type the guidelines, save; wait for the page's confirmation of ``version``."""
    main = page.locator('[data-testid="stMain"]')
    box = main.get_by_role("textbox", name="Guidelines (Markdown) · 审阅指南")
    if not box.is_visible():
        main.locator('[data-testid="stExpander"] summary', has_text="Session · 审阅任务").first.click()
    expect(box).to_be_visible(timeout=WAIT)
    box.fill(text)
    main.get_by_role("button", name="Save settings · 保存设置").click()
    expect(main.get_by_text(f"Settings saved · 已保存 (guidelines v{version})")).to_be_visible(timeout=WAIT)


def _decide(page, store: ReviewStore, sid: int, who: str, label: str, n: int) -> None:
    """Click ``label`` on ``n`` items in turn; each click is read back from the database before the next."""
    for _ in range(n):
        item = _item(page)
        # the item's own button (keyed by item: a button left from the item before is never hit)
        page.locator(f".st-key-review_{label}_{item} button").first.click()
        assert _until(lambda: store.decision(int(item), who), 90), f"no decision of {who} on item {item}"
        page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{item}'",
                               timeout=WAIT)
        wait_for_app(page, timeout=WAIT)


def test_guidelines_v1_v2_decisions_diff_and_agreement_split(browser, server, tmp_path):
    url, store = server
    s = store.create_session("team", "qa", ITEMS, created_by="olga", k=2)
    owner = _open(browser, url, s.id, "olga")
    _save_guidelines(owner, V1, 1)
    assert store.session(s.id).guidelines_version == 1

    alice = _open(browser, url, s.id, "alice")
    expect(alice.get_by_text("Guidelines · 审阅指南 (version 1)")).to_be_visible(timeout=WAIT)
    _decide(alice, store, s.id, "alice", "model_error", 5)
    first = [d for d in store.decisions(s.id) if d.annotator == "alice"]
    for n, d in enumerate(first):  # a second reviewer on the same items: 3 agree (odd n), 2 do not
        rs.decide(store, store.session(s.id), "bob", d.item_id, "model_error" if n % 2 else "correct")

    _save_guidelines(owner, V2, 2)
    assert store.session(s.id).guidelines_version == 2
    alice.reload()
    wait_for_app(alice, timeout=WAIT)
    expect(alice.get_by_text("Guidelines · 审阅指南 (version 2)")).to_be_visible(timeout=WAIT)
    _decide(alice, store, s.id, "alice", "acceptable_variant", 5)

    mine = [d for d in store.decisions(s.id) if d.annotator == "alice"]
    assert sorted((d.guidelines_version, d.label) for d in mine) == (
        [(1, "model_error")] * 5 + [(2, "acceptable_variant")] * 5)
    for d in mine:
        if d.guidelines_version == 2:
            rs.decide(store, store.session(s.id), "bob", d.item_id, "model_error")

    owner.reload()
    wait_for_app(owner, timeout=WAIT)
    main = owner.locator('[data-testid="stMain"]')
    main.locator('[data-testid="stExpander"] summary', has_text="Session · 审阅任务").first.click()
    diff = main.locator('[data-testid="stCode"]').filter(has_text="guidelines v1")
    expect(diff).to_contain_text("--- guidelines v1", timeout=WAIT)
    expect(diff).to_contain_text("+++ guidelines v2")
    expect(diff).to_contain_text("+漏字算模型错误。")
    owner.screenshot(path=str(tmp_path / "guidelines_diff.png"), full_page=True)

    owner.locator('[data-testid="stButtonGroup"] button', has_text="Agreement · 一致性").first.click()
    wait_for_app(owner, timeout=WAIT)
    table = main.locator('[data-testid="stDataFrame"]').filter(has_text="Fleiss' kappa")  # the agreement table
    expect(table).to_be_visible(timeout=WAIT)
    expect(table).not_to_contain_text("guidelines")
    # Team progress counts the fast decisions (under the default 2 s): a column of its own
    expect(main.locator('[data-testid="stDataFrame"]').filter(has_text="under 2 s")).to_contain_text("alice")
    main.get_by_text("Split by guidelines version · 按指南版本").click()
    wait_for_app(owner, timeout=WAIT)
    # the grid draws on a canvas; its accessible copy holds the cells: a guidelines column, v1 and v2 rows
    expect(table).to_contain_text("guidelines", timeout=WAIT)
    expect(table).to_contain_text("v1")
    expect(table).to_contain_text("v2")
    owner.screenshot(path=str(tmp_path / "agreement_by_guidelines.png"), full_page=True)
    # what the split shows, from the database: 5 items under each version, both reviewers on each
    split = store.agreement_by_guidelines(s.id)
    assert sorted(split) == [1, 2]
    assert [split[v]["label"]["n_items"] for v in (1, 2)] == [5, 5]


def test_question_mark_shows_the_key_cheat_sheet(browser, tmp_path):
    """``?`` opens the cheat sheet of the keys bound on the Review screen (their names as the page binds
    them); Esc closes it; a ``?`` typed in the comment is text, and no key of the sheet decides anything."""
    store = ReviewStore(tmp_path / "review.sqlite")
    s = store.create_session("keys", "qa", ITEMS[:3], created_by="olga", k=1)
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(tmp_path), "EVALBOARD_DATABASE_URL": ""})
    try:
        page = _open(browser, url, s.id, "kim")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.wait_for_function("() => (window.__evalboardKeys || {})['1']", timeout=WAIT)
        sheet = page.locator("#evalboard-keys-help")
        page.keyboard.press("?")
        expect(sheet).to_be_visible(timeout=WAIT)
        expect(sheet).to_contain_text("Keyboard shortcuts")
        # one row per key bound on this screen (1-4, S, J, K; no U: nothing to undo yet), then ? and Esc
        assert [r.split("\t") for r in sheet.locator("tr").evaluate_all(
            "rows => rows.map(r => [...r.cells].map(c => c.textContent).join('\\t'))")] == [
            ["1", "Model error · 模型错误"], ["2", "GT error · 标准答案错误"],
            ["3", "Acceptable variant · 可接受的变体"], ["4", "Correct · 正确"], ["S", "Skip"], ["J", "Next"],
            ["K", "Previous"], ["?", "This list · 快捷键列表"], ["Esc", "Close · 关闭"]]
        page.screenshot(path=str(tmp_path / "key_cheat_sheet.png"))
        page.keyboard.press("Escape")
        expect(sheet).to_be_hidden()
        page.keyboard.press("?")
        expect(sheet).to_be_visible()
        page.keyboard.press("?")                               # ? again closes it
        expect(sheet).to_be_hidden()
        comment = page.get_by_role("textbox", name="Comment · 备注")
        comment.click()
        page.keyboard.type("why?")
        expect(comment).to_have_value("why?")
        expect(sheet).to_be_hidden()
        assert store.decisions(s.id) == []
    finally:
        stop_server(proc)
