"""Hostile text in every user-visible field, rendered by real headless Chromium.

Each page showing user text gets uploads whose names, ids, labels, questions, answers, categories
and scene names hold XSS and Markdown payloads.  After each view is rendered the test asserts:

* no script ran: the ``dialog`` handler saw nothing and ``window.__pwned`` is still undefined;
* no request left for another host (Playwright's request log), and the local "beacon" server the
  image payloads point at counted no hit;
* no payload turned into markup in the page body: no ``<img>`` from a payload, no ``<b>``/``<script>``
  /``<iframe>``, no ``javascript:`` link or autolink, no KaTeX (``.katex``), no Streamlit colour (an element whose
  text is only ``RED``), no bold ``bold``, no bold text or link in a
  plotly chart;
* the literal payload text is visible instead (checked on views that show it as text, not in a
  data-frame canvas).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.e2e.conftest import open_view, wait_for_app
from tests.unit.narrative_builders import doc, event, rel, span

pytestmark = pytest.mark.e2e

WAIT = 120000  # ms: a cold server on a shared machine can be slow; every wait is bounded


@pytest.fixture(scope="module")
def beacon():
    """A 127.0.0.1 HTTP server that records every request: a payload image that loads would hit it."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    server.hits = hits
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()
    thread.join(10)


def payloads(beacon_url: str) -> list[str]:
    """The hostile strings; a numbered prefix would not disarm any of them."""
    return [
        '<img src=x onerror="window.__pwned=1">',
        "<script>window.__pwned=1</script>",
        f"![x]({beacon_url}/md.png)",
        f'<img src="{beacon_url}/html.png">',
        ":red[RED]",
        "$x^2$",
        "**bold**",
        "[link](javascript:window.__pwned=1)",
        "evil\u202egnp.exe",
        "zero\u200bwidth",
        "a\r\r<b>x</b>",
        '<div>\n\n<img src=x onerror="window.__pwned=1">\n\n</div>',
        f'<a href="{beacon_url}/a">plotly link</a>',
        "autolinks www.example.com me@example.com",
    ]


def flat(text: str) -> str:
    """A payload for one-line fields (ids, names, categories): line breaks become spaces."""
    return text.replace("\r", " ").replace("\n", " ")


@pytest.fixture
def watched(page):
    """The test page with a dialog handler and a log of every request it makes."""
    page.dialogs, page.requests = [], []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: page.requests.append(r.url))
    return page


def assert_inert(page, app_url: str, beacon, where: str, literal: tuple[str, ...] = ()) -> None:
    """Everything the module docstring promises, for the view now shown.

    The literal texts are awaited first (bounded): they are drawn by the end of the rerun that shows
    them, so the checks after them look at the finished view.
    """
    from playwright.sync_api import expect  # the fixtures skip (or fail under CI) without Playwright

    main = page.locator('[data-testid="stMain"]')
    for typed in literal:
        expect(main).to_contain_text(typed, timeout=WAIT)
    wait_for_app(page, timeout=WAIT)
    assert page.dialogs == [], where
    assert page.evaluate("() => window.__pwned") is None, where
    foreign = [u for u in page.requests if not u.startswith((app_url + "/", "data:", "blob:"))]
    assert foreign == [], where
    assert beacon.hits == [], where
    # no frame at all (the keyboard shortcuts, components/keyboard.py, are a v2 component, not an iframe)
    assert main.locator("iframe").count() == 0, (where, "iframe")
    for selector in ('img[src="x"]', f'img[src^="{beacon.url}"]', "img[onerror]", "script", "b:text-is('x')",
                     'a[href^="javascript"]', ".katex", "strong:text-is('bold')", "span:text-is('RED')",
                     'a[href^="http"]', 'a[href^="mailto"]',  # GFM autolinks of user text
                     # plotly reads <b>, <a href> in labels: a payload label must not become bold or a link
                     ".js-plotly-plot a", '.js-plotly-plot tspan[style*="bold"]:text-is("x")'):
        assert main.locator(selector).count() == 0, (where, selector)


def upload(page, label: str, name: str, data: bytes) -> None:
    """Put one file into the uploader whose label contains ``label`` and wait for the rerun."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator('[data-testid="stFileUploader"]', has_text=label)
    for attempt in range(3):  # files set on an input that a rerun replaces are lost: set them again
        box.locator("input[type=file]").set_input_files([{"name": name, "mimeType": "application/json",
                                                          "buffer": data}])
        try:  # the file is listed once the upload is done
            box.locator('[data-testid="stFileChipName"]').first.wait_for(timeout=WAIT // 3)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            wait_for_app(page, timeout=WAIT)
    wait_for_app(page, timeout=WAIT)


def jsonl(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


def open_upload_page(page, app_url: str, slug: str) -> None:
    page.goto(f"{app_url}/{slug}?source=upload")
    wait_for_app(page, timeout=WAIT)


def test_qa_page_shows_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    rows = [{"id": f"q{i} {flat(p)}", "question": p, "answer": p, "prediction": f"{p} 多余", "system": flat(p)}
            for i, p in enumerate(ps)]
    open_upload_page(page, app_url, "QA_Factcheck")
    upload(page, "Records", "<b>x</b>:red[RED].jsonl", jsonl(rows))
    page.get_by_text("EM · 精确匹配").first.wait_for(timeout=WAIT)
    # the overview's static table and SVG chart by system hold the system names (every payload)
    page.locator(".eb-static svg .bar").first.wait_for(state="attached", timeout=WAIT)
    assert_inert(page, app_url, beacon, "QA page")
    for view in ("Records · 逐条结果", "Systems side by side · 系统对比"):  # the grids and the Plotly chart
        open_view(page, "qa_view", view, timeout=WAIT)
        assert_inert(page, app_url, beacon, f"QA page, {view}")
    # the same records in a review session: question, GT, prediction and system name all shown as text
    page.get_by_role("button", name="Review these records · 人工审阅这些记录").click()
    page.get_by_text("Ground truth · 标准答案").first.wait_for(timeout=WAIT)
    assert_inert(page, app_url, beacon, "review page")
    for view in ("Adjudicate · 裁决", "Agreement · 一致性", "Export · 导出"):
        page.locator('[data-testid="stButtonGroup"] button', has_text=view).first.click()
        wait_for_app(page, timeout=WAIT)
        assert_inert(page, app_url, beacon, f"review page, {view}")


#: A metric card that only this narrative view shows.
VIEW_MARK = {"Characters": "Archetype accuracy", "Relationships": "Sentiment P (micro)",
             "Actions": "Field accuracy (micro)", "Spans": "Boundary similarity B", "Alignment": "GT events"}


def test_narrative_views_show_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    text = "甲看见乙。" + "".join(flat(p) + "。" for p in ps)
    characters = [("甲", "", "Hero")] + [(flat(p), flat(p), p) for p in ps]
    events = [event(f"e{i} {flat(p)}", span(text, flat(p) + "。"), [rel("甲", flat(p), p, p, p)])
              for i, p in enumerate(ps)]
    gt = doc(text, characters, events)
    pred = doc(text, characters[:6], events[:5])
    open_upload_page(page, app_url, "Narrative")
    upload(page, "Ground-truth files", "T_001_v3.json", json.dumps(gt, ensure_ascii=False).encode())
    upload(page, "Prediction files", "T_001_pred.json", json.dumps(pred, ensure_ascii=False).encode())
    page.get_by_text("Documents scored").first.wait_for(timeout=WAIT)
    assert_inert(page, app_url, beacon, "narrative overview")
    for view in ("Characters", "Relationships", "Actions", "Spans", "Alignment"):
        page.locator('[data-testid="stButtonGroup"] button', has_text=view).first.click()
        page.wait_for_url(re.compile(f"view={view.lower()}"), timeout=WAIT)
        # a metric card only this view shows: the rerun of the click has rendered it
        page.locator('[data-testid="stMetric"]', has_text=VIEW_MARK[view]).first.wait_for(timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        # the character chips and the span overlay are our HTML: the payloads show there as typed
        literal = {"Characters": ("**bold**", ":red[RED]", "$x^2$", "evil⟨U+202E⟩gnp.exe", "zero⟨U+200B⟩width"),
                   "Spans": ("<script>window.__pwned=1</script>", "**bold**")}.get(view, ())
        assert_inert(page, app_url, beacon, f"narrative {view}", literal)


def test_test_sets_page_shows_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    items = {"version": "1", "items": [
        {"id": f"t{i}", "category": flat(p), "difficulty": "easy", "question": p, "expected_answer": p,
         "source": {"file": flat(p), "line_range": [1, 2]}, "keywords": [flat(p), "关键词"]}
        for i, p in enumerate(ps)]}
    answers = {f"t{i}": f"{p} 关键词" for i, p in enumerate(ps)}
    open_upload_page(page, app_url, "Test_Sets")
    upload(page, "Test set", "items.json", json.dumps(items, ensure_ascii=False).encode())
    upload(page, "Answers", "answers.json", json.dumps(answers, ensure_ascii=False).encode())
    page.get_by_text("Mean score").first.wait_for(timeout=WAIT)
    # the answers' text (drawn only once the answers are read) with the keyword highlighted
    assert_inert(page, app_url, beacon, "test sets", (":red[RED] 关键词", "**bold** 关键词", "$x^2$ 关键词"))
    # the categories (payloads) in a grid and as Plotly labels
    for view in ("Items table · 逐条表格", "Interactive charts · 交互图表"):
        open_view(page, "ts_view", view, timeout=WAIT)
        assert_inert(page, app_url, beacon, f"test sets, {view}")


def test_multi_turn_test_set_shows_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    items = {"version": "1", "items": [{"id": "d1 " + flat(ps[4]), "scenario": flat(ps[6]), "turns": [
        {"turn": i + 1, "user": p, "expected_points": [flat(p), {"point": p, "keywords": [flat(p)]}],
         "requires_context": i > 0} for i, p in enumerate(ps)]}]}
    answers = [{"id": "d1 " + flat(ps[4]), "turn": i + 1, "answer": f"{p} 回答"} for i, p in enumerate(ps)]
    open_upload_page(page, app_url, "Test_Sets")
    upload(page, "Test set", "multi_turn.json", json.dumps(items, ensure_ascii=False).encode())
    upload(page, "Answers", "answers.jsonl", jsonl(answers))
    page.get_by_text("Turn by turn").first.wait_for(timeout=WAIT)
    assert_inert(page, app_url, beacon, "multi-turn test set",
                 (":red[RED] 回答", "**bold** 回答", "$x^2$ 回答", "<script>window.__pwned=1</script> 回答",
                  "evil⟨U+202E⟩gnp.exe 回答"))


def test_dialogue_page_shows_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    scene = "场景 " + flat(ps[6])
    cases = {"test_cases_by_scene": {scene: [
        {"context": p, "expected_response": f"{p} 你好", "scene": scene, "dialogue_index": i + 1}
        for i, p in enumerate(ps)]}}
    # model names: HTML, image, colour, RTL override, bold tag, link (the last two for the plotly heatmap)
    models = [flat(p) for p in (ps[0], ps[2], ps[4], ps[8], ps[10], ps[12])]
    preds = [{"model": m, "scene": scene, "dialogue_index": i + 1, "prediction": p}
             for m in models for i, p in enumerate(ps)]
    open_upload_page(page, app_url, "Persona_Dialogue")
    upload(page, "Test cases", "cases.json", json.dumps(cases, ensure_ascii=False).encode())
    upload(page, "Predictions", "preds.jsonl", jsonl(preds))
    page.get_by_text("· combined").first.wait_for(timeout=WAIT)
    assert_inert(page, app_url, beacon, "dialogue scores", (":red[RED] · combined", "evil⟨U+202E⟩gnp.exe · combined"))
    for view, literal in (("Scenes × models", ()), ("Models", ()),
                          ("Cases", ('<img src=x onerror="window.__pwned=1">',)), ("Model comparison", (":red[RED]",))):
        open_view(page, "dialogue_view", view, timeout=WAIT)
        assert_inert(page, app_url, beacon, f"dialogue {view}", literal)


def test_memory_page_shows_payloads_as_text(watched, app_url, beacon):
    page, ps = watched, payloads(beacon.url)
    rows = [{"question_id": f"m{i} {flat(p)}", "question_type": "single_hop", "question": p, "ground_truth": p,
             "prediction": f"{p} 也许"} for i, p in enumerate(ps)]
    for row in rows[-3:]:  # question types are chart labels too: a bold tag, a link
        row["question_type"] = flat(ps[10]) if row is rows[-3] else flat(ps[12])
    open_upload_page(page, app_url, "Long_Memory")
    upload(page, "Results", "results.jsonl", jsonl(rows))
    page.get_by_role("heading", name="Overall").wait_for(timeout=WAIT)
    # the question types (a bold tag, a link) label the overview's static chart and table
    page.locator(".eb-static svg .bar").first.wait_for(state="attached", timeout=WAIT)
    assert_inert(page, app_url, beacon, "memory")
    open_view(page, "mem_view", "By question type · 按类型", timeout=WAIT)  # ... and the Plotly chart's axis
    assert_inert(page, app_url, beacon, "memory, by question type")
    open_view(page, "mem_view", "Questions · 逐题", timeout=WAIT)
    for i in (0, 4, 11):  # an HTML payload, a colour directive, blank lines inside HTML
        box = page.get_by_role("combobox", name="Question", exact=True)
        box.click()
        box.fill(f"m{i} ")
        page.get_by_role("option").first.wait_for(timeout=WAIT)
        page.keyboard.press("Enter")
        # the drill-down header "<id> · <type>" of the chosen question marks the end of the rerun
        page.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]',
                     has_text=re.compile(rf"^m{i} .* · ")).first.wait_for(timeout=WAIT)
        wait_for_app(page, timeout=WAIT)
        assert_inert(page, app_url, beacon, f"memory question {i}", (flat(ps[i]).split(" ")[0],))
