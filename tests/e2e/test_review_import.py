"""Issue 30, import on the Export view, in Chromium at 1440 px: the owner uploads another session's export
through the real file uploader, reads the dry run, imports; the decisions and one audit row are in the
database (the page test does the same on SQLite and PostgreSQL: tests/pages/test_review_import_page.py)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from evaluators.review import ReviewStore
from evaluators.review.exchange import export_jsonl
from tests.e2e.conftest import start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e
WAIT = 90_000
ITEMS = [{"kind": "qa", "id": f"rec-{i}", "question": f"法国的首都是哪里？ Capital of France? #{i}",
          "ground_truth": "巴黎 Paris", "prediction": "里昂 Lyon", "exact_match": 0.0, "token_f1": 0.25}
         for i in range(3)]


@pytest.fixture
def server(tmp_path):
    data = tmp_path / "data"
    proc, url = start_server({"EVALBOARD_DATA_DIR": str(data), "EVALBOARD_DATABASE_URL": ""})
    store = ReviewStore(data / "review.sqlite")
    yield url, store
    stop_server(proc)
    store.dispose()


def test_owner_uploads_an_export_sees_the_dry_run_and_imports(browser, server, tmp_path):
    url, store = server
    mine = store.create_session("mine", "qa", ITEMS, created_by="olga", k=2)
    src = ReviewStore(tmp_path / "source.sqlite")  # another team's database: session "theirs", 2 decisions
    theirs = src.create_session("theirs", "qa", ITEMS, created_by="zoe", k=2)
    first, second, _ = src.items(theirs.id)
    src.save_decision(first.id, "alice", label="model_error", comment="里昂不是巴黎")
    src.save_decision(second.id, "bob", label="acceptable_variant")
    export = tmp_path / "theirs.jsonl"
    export.write_text(export_jsonl(src, theirs.id), encoding="utf-8")

    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(WAIT)
    page.goto(f"{url}/Review?annotator=olga&session={mine.id}")
    wait_for_app(page, timeout=WAIT)
    page.get_by_role("button", name="Continue as olga?").click()
    wait_for_app(page, timeout=WAIT)
    page.locator(".st-key-review_view button", has_text="Export · 导出").first.click()
    box = page.locator(".st-key-review_import_box")
    expect(box).to_be_visible(timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    box.locator('input[type="file"]').set_input_files(str(export))
    # 2 decision lines, neither stored: 2 written; 1 session line and 3 item lines: 1 session, 3 items
    expect(box.get_by_text("2 decision(s) would be written")).to_be_visible(timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    assert store.session_by_name("theirs") is None                            # the dry run stored nothing
    box.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "review_import_dry_run.png"))
    box.get_by_role("button", name="Import · 导入").click()
    expect(box.get_by_text("Imported theirs.jsonl: 2 decision(s) written")).to_be_visible(timeout=WAIT)
    # the file is read again against the database as it is now: both decisions stored, nothing to write
    expect(box.get_by_text("0 decision(s) would be written")).to_be_visible(timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    expect(box.get_by_role("button", name="Import · 导入")).to_be_disabled()
    page.screenshot(path=str(tmp_path / "review_import_done.png"))
    made = store.session_by_name("theirs")
    assert sorted((d.annotator, d.label, d.comment) for d in store.decisions(made.id)) == [
        ("alice", "model_error", "里昂不是巴黎"), ("bob", "acceptable_variant", "")]
    assert [(r["who"], r["via"]) for r in store.audit_rows() if r["action"] == "import"] == [("olga", "page")]
    page.context.close()
    src.dispose()
