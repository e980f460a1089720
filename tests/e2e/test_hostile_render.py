"""XSS and Markdown payloads in every field that reaches a page, in real headless Chromium.

Each page gets uploads whose user-visible fields hold the payloads below; the views that show
those fields are opened, and the test asserts that no script ran (no dialog, ``window.__pwned``
never set), that no request left for another host (the Playwright request log, and a local
"beacon" server that counts hits), and that no payload turned into markup (no ``img``/``script``
/``iframe``/``javascript:`` link, no KaTeX, no Streamlit colour, no ``<strong>bold</strong>``)
while the literal text is on the page.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.e2e.conftest import wait_for_app
from tests.unit.narrative_builders import doc, event, rel, span

pytestmark = pytest.mark.e2e


class Beacon:
    """A local HTTP server counting every request (an image payload that loads would hit it)."""

    def __init__(self):
        self.hits: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def beacon():
    b = Beacon()
    yield b
    b.close()


def payloads(beacon_url: str) -> list[str]:
    return [
        '<img src=x onerror="window.__pwned=1">',
        "<script>window.__pwned=1</script>",
        f"![b]({beacon_url}/md.png)",
        f'<img src="{beacon_url}/html.png">',
        ":red[RED]",
        "$x^2$",
        "**bold**",
        "[link](javascript:window.__pwned=1)",
        "evil\u202egnp.exe",
        "zero\u200bwidth",
        "a\r\r<b>x</b>",
        '<div>\n\n<img src=x onerror="window.__pwned=1">',
    ]


def one_line(p: str) -> str:
    return p.replace("\n", " ").replace("\r", " ")


@pytest.fixture
def watched(page, app_url):
    """The page with a dialog handler and a request log."""
    dialogs, requests = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.watched = (dialogs, requests)
    return page


def assert_inert(page, app_url, beacon, where: str, literal: tuple[str, ...] = ()) -> None:
    dialogs, requests = page.watched
    wait_for_app(page, timeout=90000)
    assert dialogs == [], where
    assert page.evaluate("() => window.__pwned") is None, where
    foreign = [u for u in requests if not u.startswith((app_url, "data:", "blob:", "about:"))]
    assert foreign == [], where
    assert beacon.hits == [], where
    main = page.locator('[data-testid="stMain"]')
    for selector in ('img[src="x"]', f'img[src^="{beacon.url}"]', "iframe", 'a[href^="javascript"]', ".katex",
                     "b:text-is('x')"):
        assert main.locator(selector).count() == 0, (where, selector)
    assert main.locator("strong:text-is('bold')").count() == 0, where  # **bold** of a payload never turns bold
    scripts = page.evaluate("() => [...document.scripts].filter(s => s.textContent.includes('__pwned')).length")
    assert scripts == 0, where
    text = main.inner_text()
    assert ":red[RED]" in text or "RED" not in text, where  # a colour directive shows as typed, never as colour
    for typed in literal:  # payloads shown as the text they are
        assert typed in text, (where, typed)


def upload(page, label: str, files: list[tuple[str, bytes, str]]) -> None:
    box = page.locator('[data-testid="stFileUploader"]', has_text=label).locator("input[type=file]")
    box.set_input_files([{"name": n, "mimeType": m, "buffer": b} for n, b, m in files])
    wait_for_app(page, timeout=90000)


#: A metric card that only each narrative view shows (its rerun is done when it is there).
VIEW_MARK = {"Characters": "Archetype accuracy", "Relationships": "Pair coverage", "Actions": "Field accuracy",
             "Spans": "Boundary similarity B", "Alignment": "Spurious"}


def click_view(page, label: str) -> None:
    page.locator('[data-testid="stButtonGroup"] button', has_text=label).first.click()
    page.wait_for_url(re.compile(f"view={label.lower()}"), timeout=90000)
    page.locator('[data-testid="stMetric"]', has_text=VIEW_MARK[label]).first.wait_for(timeout=90000)
    wait_for_app(page, timeout=90000)


def test_qa_page(watched, app_url, beacon):
    page = watched
    ps = payloads(beacon.url)
    rows = [{"id": f"id{i} {one_line(p)}", "question": p, "answer": p, "prediction": p + " extra", "system": one_line(p)}
            for i, p in enumerate(ps)]
    page.goto(f"{app_url}/QA_Factcheck?source=upload")
    wait_for_app(page, timeout=90000)
    upload(page, "Records", [("xss.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode(),
                              "application/json")])
    page.get_by_text("EM · 精确匹配").first.wait_for(timeout=90000)
    assert_inert(page, app_url, beacon, "QA")


def test_narrative_page(watched, app_url, beacon):
    page = watched
    ps = payloads(beacon.url)
    text = "甲见乙。" + "".join(one_line(p) + "。" for p in ps)
    names = [(one_line(p), p, p) for p in ps]
    gt = doc(text, [("甲", "", "Hero"), *names],
             [event(f"e{i} {one_line(p)}", span(text, one_line(p) + "。"), [rel("甲", one_line(p), p, p, p)])
              for i, p in enumerate(ps[:6])])
    pred = json.loads(json.dumps(gt, ensure_ascii=False))
    pred["characters"] = pred["characters"][:5]
    page.goto(f"{app_url}/Narrative?source=upload")
    wait_for_app(page, timeout=90000)
    upload(page, "Ground-truth files", [("X_v3.json", json.dumps(gt, ensure_ascii=False).encode(), "application/json")])
    upload(page, "Prediction files", [("X_pred.json", json.dumps(pred, ensure_ascii=False).encode(),
                                       "application/json")])
    page.get_by_text("Documents scored").wait_for(timeout=90000)
    for view in ("Characters", "Relationships", "Actions", "Spans", "Alignment"):
        click_view(page, view)
        assert_inert(page, app_url, beacon, f"narrative {view}",
                     ("**bold**", ":red[RED]", "$x^2$") if view == "Characters" else ())
    click_view(page, "Characters")
    assert "⟨U+202E⟩" in page.locator('[data-testid="stMain"]').inner_text()  # the override is shown, not obeyed


def test_test_sets_page(watched, app_url, beacon):
    page = watched
    ps = payloads(beacon.url)
    items = {"version": "1", "items": [
        {"id": f"q{i}", "category": one_line(p), "difficulty": "easy", "question": p, "expected_answer": p,
         "source": {"file": "x.txt", "line_range": [1, 1]}, "keywords": [one_line(p)]} for i, p in enumerate(ps)]}
    answers = {f"q{i}": p for i, p in enumerate(ps)}
    page.goto(f"{app_url}/Test_Sets?source=upload")
    wait_for_app(page, timeout=90000)
    upload(page, "Test set", [("items.json", json.dumps(items, ensure_ascii=False).encode(), "application/json")])
    upload(page, "Answers", [("answers.json", json.dumps(answers, ensure_ascii=False).encode(), "application/json")])
    page.get_by_text("Mean score").first.wait_for(timeout=90000)
    assert_inert(page, app_url, beacon, "test sets", ("**bold**", ":red[RED]", "$x^2$", "<script>window.__pwned=1</script>"))


def test_dialogue_page(watched, app_url, beacon):
    page = watched
    ps = payloads(beacon.url)
    scene = "场景 " + one_line(ps[0])
    cases = {"test_cases_by_scene": {scene: [
        {"context": p, "expected_response": p + " 你好", "scene": scene, "dialogue_index": i + 1}
        for i, p in enumerate(ps)]}}
    # four models named by payloads (an RTL override among them), each answering the first case
    preds = [{"model": one_line(p), "scene": scene, "dialogue_index": 1, "prediction": p}
             for p in (ps[0], ps[2], ps[4], ps[8])]
    page.goto(f"{app_url}/Persona_Dialogue?source=upload")
    wait_for_app(page, timeout=90000)
    upload(page, "Test cases", [("cases.json", json.dumps(cases, ensure_ascii=False).encode(), "application/json")])
    upload(page, "Predictions", [("preds.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in preds).encode(),
                                  "application/json")])
    page.get_by_text("· combined").first.wait_for(timeout=90000)
    assert_inert(page, app_url, beacon, "dialogue scores")
    for tab in ("Cases", "Model comparison"):
        page.get_by_role("tab", name=tab).click()
        wait_for_app(page, timeout=90000)
        assert_inert(page, app_url, beacon, f"dialogue {tab}", ('<img src=x onerror="window.__pwned=1">',) if tab == "Cases" else ())


def test_memory_page(watched, app_url, beacon):
    page = watched
    ps = payloads(beacon.url)
    rows = [{"question_id": f"m{i} {one_line(p)}", "question_type": "single_hop", "question": p, "ground_truth": p,
             "prediction": p + " 也许"} for i, p in enumerate(ps)]
    page.goto(f"{app_url}/Long_Memory?source=upload")
    wait_for_app(page, timeout=90000)
    upload(page, "Results", [("results.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode(),
                              "application/json")])
    page.get_by_role("heading", name="Overall").wait_for(timeout=90000)
    assert_inert(page, app_url, beacon, "memory")
    for i, typed in ((0, '<img src=x onerror="window.__pwned=1">'), (4, ":red[RED]"), (6, "**bold**")):
        # drill into payload questions: each shown as typed
        box = page.get_by_role("combobox", name="Question", exact=True)
        box.click()
        box.fill(f"m{i} ")
        page.get_by_role("option").first.wait_for()
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        # the drill-down header of that question ("<id> · <type>") is shown once the rerun is done
        page.locator('[data-testid="stMain"]').get_by_text(f"m{i} {one_line(ps[i])} · single_hop").wait_for(
            timeout=90000)
        wait_for_app(page, timeout=90000)
        assert_inert(page, app_url, beacon, f"memory drill-down {i}", (typed,))
