"""The Judge lab in Chromium at 1440 and 390 px: the versions side by side and the overfit warning on the demo; with
labels from a review session, a disagreeing item opens on the Review page."""

from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from evaluators.demo import demo_path
from evaluators.review import ReviewStore
from evaluators.review.links import review_url
from tests.e2e.conftest import CHROMIUM_ARGS, start_server, wait_for_app  # noqa: F401  (fixtures' browser args)

pytestmark = pytest.mark.e2e
WAIT = 90000


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A dashboard whose review database holds one session of 40 demo answers, both reviewers agreeing with the
    demo's labels; yields (url, session id, {item id: review item id}, the folder)."""
    folder = tmp_path_factory.mktemp("judgelab-e2e")
    rows = [json.loads(line) for line in demo_path("judgelab", "items.jsonl").read_text(encoding="utf-8").splitlines()]
    labels = {json.loads(line)["item_id"]: json.loads(line)["label"]
              for line in demo_path("judgelab", "labels.jsonl").read_text(encoding="utf-8").splitlines()}
    store = ReviewStore(folder / "review.sqlite")
    session = store.create_session("校准 calibration", "qa", [
        {"kind": "qa", "id": r["item_id"], "question": f"{r['question']} ({r['item_id']})",
         "ground_truth": r["reference"], "prediction": r["answer"], "question_type": r["slice"]} for r in rows[:40]],
        created_by="lead", k=2)
    ids = {i.payload["id"]: i.id for i in store.items(session.id)}
    for rid, item in ids.items():
        for who in ("ann", "bo"):
            store.save_decision(item, who, label="correct" if labels[rid] else "model_error")
    store.engine.dispose()
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(folder), "EVALBOARD_DATABASE_URL": ""})
    yield url, session.id, ids, folder
    proc.terminate()
    proc.wait(10)


def _shot(page, name: str) -> None:
    folder = os.environ.get("EVALBOARD_SCREENSHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, name), full_page=True)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_demo_shows_the_versions_and_the_overfit_warning(browser, lab_server, width):
    url = lab_server[0]
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    try:
        page.goto(f"{url}/Judge_Lab")
        wait_for_app(page, timeout=WAIT)
        main = page.locator('[data-testid="stMain"]')
        expect(main.locator("h1").first).to_contain_text("Judge lab")
        expect(main.locator('[data-testid="stAlertContentWarning"]')).to_contain_text(
            "v3 few-shot: overfit: dev kappa 1.000 lies above the test kappa's interval")
        grid = main.locator('[data-testid="stDataFrame"]').first
        expect(grid).to_be_visible()
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Judge versions")).to_contain_text("3")
        assert main.locator('[data-testid="stException"]').count() == 0
        _shot(page, f"judgelab_overview_{width}.png")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"page wider than the screen by {overflow} px"
        page.goto(f"{url}/Judge_Lab?view=confusion")
        wait_for_app(page, timeout=WAIT)
        for name in ("v1 plain", "v2 strict 中文", "v3 few-shot"):
            expect(main.locator("h3").filter(has_text=name)).to_have_count(1)
        expect(main.get_by_text("test · judge right, people wrong").first).to_be_visible()
        _shot(page, f"judgelab_confusion_{width}.png")
        assert page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth") <= 1
    finally:
        context.close()


def test_a_disagreeing_item_opens_on_the_review_page(browser, lab_server, tmp_path):
    url, session, ids, _ = lab_server
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    try:
        page.goto(f"{url}/Judge_Lab?source=upload&view=confusion")
        wait_for_app(page, timeout=WAIT)
        page.get_by_text("Review sessions (final labels)").click()
        wait_for_app(page, timeout=WAIT)
        box = page.get_by_role("combobox", name="Review sessions on one dataset")
        box.click()
        box.fill("calibration")
        page.get_by_role("option").filter(has_text="校准 calibration").first.click()
        page.keyboard.press("Escape")
        wait_for_app(page, timeout=WAIT)
        page.locator(".st-key-jl_verdicts input[type=file]").set_input_files(
            str(demo_path("judgelab", "verdicts_v3.jsonl")))
        main = page.locator('[data-testid="stMain"]')
        links = main.locator('a[href*="/Review?session="]')
        links.first.wait_for(timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        expect(main.locator('[data-testid="stMetric"]').filter(has_text="Labelled items")).to_contain_text("40")
        _shot(page, "judgelab_review_links_1440.png")
        link = links.first
        item_id = link.inner_text().strip()
        assert link.get_attribute("href") == review_url(session, ids[item_id])
        with context.expect_page() as opened:
            link.click()
        review = opened.value
        review.set_default_timeout(WAIT)
        wait_for_app(review, timeout=WAIT)
        assert f"/Review?session={session}&item={ids[item_id]}" in review.url
        review.get_by_text(f"({item_id})").first.wait_for(timeout=WAIT)  # the item's question, as the card shows it
        _shot(review, "judgelab_review_item_1440.png")
    finally:
        context.close()
