"""Issue 30, one screen per item: at 1440x900 and at 390x844, in Chromium, the question, the GT, the
prediction and the decision buttons of an item lie inside the first viewport (bounding boxes, page not
scrolled), on a QA item and on a long-term-memory item in Chinese; the card's GT-vs-prediction diff marks
the differing characters of the Chinese pair (and no others)."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from tests.e2e.conftest import start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e
WAIT = 90_000
#: (session kind, item, GT characters marked, prediction characters marked) — the marks by hand: the
#: pairs differ in one place each (夫 -> 斯文, 杭 -> 苏), every other character equal.
CASES = {
    "qa": ({"kind": "qa", "id": "grosvenor", "question": "第一代格罗夫纳伯爵是谁？ Who was the 1st Earl Grosvenor?",
            "ground_truth": "理查德·格罗夫纳，第一代格罗夫纳伯爵", "prediction": "理查德·格罗斯文纳，第一代格罗夫纳伯爵",
            "system": "sys-a", "exact_match": 0.0, "token_f1": 0.8}, ["夫"], ["斯文"]),
    "memory": ({"kind": "memory", "id": "conv-7-q3", "question_type": "single-session-user",
                "question": "用户哪一年搬到了哪座城市？", "ground_truth": "她2023年搬到了杭州，在西湖边开了一家书店",
                "prediction": "她2023年搬到了苏州，在西湖边开了一家书店", "scores": {"judge_score": 0.0}}, ["杭"], ["苏"]),
}
BUTTONS = ("1 · Model error · 模型错误", "2 · GT error · 标准答案错误", "3 · Acceptable variant · 可接受的变体",
           "4 · Correct · 正确")


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    data = tmp_path_factory.mktemp("review-one-screen")
    store = ReviewStore(data / "review.sqlite")
    # k above the runs that decide the item (two widths, each maybe run twice): every run finds it open
    sessions = {kind: store.create_session(f"one screen {kind}", kind, [item], created_by="olga", k=8).id
                for kind, (item, _, _) in CASES.items()}
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(data), "EVALBOARD_DATABASE_URL": ""})
    context = browser.new_context()  # one visit first: the cases below meet a warm server
    warm = context.new_page()
    warm.goto(f"{url}/Review")
    wait_for_app(warm, timeout=WAIT)
    context.close()
    yield url, store, sessions
    stop_server(proc)


def _inside(box, width: int, height: int, what: str) -> None:
    assert box is not None, f"{what}: not drawn"
    assert box["x"] >= 0 and box["y"] >= 0, (what, box)
    assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, (what, box, width, height)


@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_question_gt_prediction_and_decisions_in_the_first_viewport(browser, server, tmp_path, kind, width, height):
    url, store, sessions = server
    item, gt_marks, pred_marks = CASES[kind]
    who = f"rev{width}-{uuid.uuid4().hex[:6]}"  # a reviewer per run (a rerun too): each sees the item undecided
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    try:
        page.goto(f"{url}/Review?annotator={who}&session={sessions[kind]}")
        wait_for_app(page, timeout=WAIT)
        confirm = page.get_by_role("button", name=f"Continue as {who}?")
        if width < 640:  # a phone: the sidebar starts collapsed; open it, confirm the name, close it again
            page.locator('[data-testid="stExpandSidebarButton"]').click()
        confirm.click()
        expect(page.get_by_role("textbox", name="Your name · 审阅人")).to_have_value(who, timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        if width < 640:
            page.locator('[data-testid="stSidebarCollapseButton"] button').click()
        main = page.locator('[data-testid="stMain"]')
        for name in BUTTONS:
            expect(main.get_by_role("button", name=name)).to_be_visible(timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        page.evaluate("() => document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; })")
        assert page.evaluate("() => window.scrollY") == 0
        page.wait_for_timeout(500)  # the sidebar's closing animation
        page.screenshot(path=str(tmp_path / f"review_{kind}_{width}x{height}.png"))
        question = main.get_by_text(item["question"]).first
        expect(question).to_be_visible()
        _inside(question.bounding_box(), width, height, "question")
        diff = main.locator(".evalboard-diff")
        expect(diff).to_have_count(2)                                        # GT, then prediction
        expect(diff.first).to_have_text(item["ground_truth"])
        expect(diff.nth(1)).to_have_text(item["prediction"])
        _inside(diff.first.bounding_box(), width, height, "ground truth")
        _inside(diff.nth(1).bounding_box(), width, height, "prediction")
        assert diff.first.locator("span").all_inner_texts() == gt_marks    # the differing characters only
        assert diff.nth(1).locator("span").all_inner_texts() == pred_marks
        for name in BUTTONS:
            _inside(main.get_by_role("button", name=name).bounding_box(), width, height, name)
        # the buttons work from there: one click saves the decision (read back from the database), and the
        # page stays on the session (the first case of this file showed the newest session after its click:
        # the folded picker, mounted afresh, sent its default; tests/pages/test_review_session_stays.py)
        main.get_by_role("button", name=BUTTONS[1]).click()
        (saved,) = store.items(sessions[kind])
        for _ in range(300):
            if store.decision(saved.id, who) is not None:
                break
            page.wait_for_timeout(200)
        wait_for_app(page, timeout=WAIT)
        expect(main.locator('[data-testid="stExpander"] summary').first).to_contain_text(f"one screen {kind}")
        assert f"session={sessions[kind]}" in page.url
    finally:
        context.close()
    assert store.decision(saved.id, who).label == "gt_error"
