"""A newcomer's walk (issue 20): each page with the public files of ../shared/data, in Chromium at 1440 and 390 px.

On every page, after uploading real files (README, "Which file goes in which uploader"):

- no literal "None" / "nan" and no count written with decimals ("70.000") in the page text or in
  any table cell, read as the grid draws it (its canvas text is recorded as it is drawn, so
  a cell's "None" is seen even though it is not in the page's DOM text);
- at 1440 px no label is cut (a label's scroll width is at most its client width); at both
  widths nothing makes the page scroll sideways;
- every download button produces a file, clicked forwards and then backwards; every HTML
  report downloaded has bars of different series in different colours (point 4).

The servers are started by the ``app_url`` fixture (tests/e2e/conftest.py); files are uploaded
through the pages' own uploaders.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import require_shared
from tests.e2e.conftest import open_view, wait_for_app
from tests.helpers.html_reports import assert_series_coloured

pytestmark = [pytest.mark.e2e, pytest.mark.realdata]

WAIT = 180_000

#: Every string drawn on a canvas (the data grids; charts are SVG), recorded as it is drawn.
RECORD_GRID_TEXT = """(() => {
  const fill = CanvasRenderingContext2D.prototype.fillText;
  window.__gridText = new Set();
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    // every canvas text: the grid draws through buffer canvases that are not in the page
    window.__gridText.add(String(text));
    return fill.call(this, text, ...rest);
  };
})();"""

#: Labels whose text is cut: an element with hidden overflow (or an ellipsis) narrower than its text,
#: inside a button, a widget label, a metric label or a tab.
CUT_LABELS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const out = [];
  for (const e of main.querySelectorAll('button *, label *, [data-testid="stWidgetLabel"] *, '
                                        + '[data-testid="stMetricLabel"] *, [role="tab"] *')) {
    if (e.offsetParent === null || e.clientWidth < 4) continue;  // hidden, or a screen-reader-only text
    if (e.closest('[data-testid="stFileUploaderFile"], [data-baseweb="select"], [data-testid="stDataFrame"], '
                  + '[data-testid^="stIcon"]')) continue;
    const st = getComputedStyle(e);
    if (!(st.overflowX === 'hidden' || st.overflowX === 'clip' || st.textOverflow === 'ellipsis')) continue;
    const text = (e.textContent || '').trim();
    if (/material|icon/i.test(st.fontFamily + ' ' + getComputedStyle(e.parentElement).fontFamily)) continue;  // an icon glyph
    if (text && e.scrollWidth > e.clientWidth + 1) out.push(text.slice(0, 80) + ' [' + st.fontFamily.slice(0, 40) + ']');
  }
  return [...new Set(out)];
}"""

NONE = re.compile(r"(?<!=)\b(None|nan|NaN)\b")  # not a parameter value in a signature ("zero_division=nan")
#: A grid cell that is nothing but a missing-value word (a cell of user text may well say "None. The ...").
NONE_CELL = re.compile(r"^\s*(None|nan|NaN|null)\s*$")
#: A whole number written with decimals ("70.000", "500.0"), not a percentage or points: scores are
#: in [0, 1], so a value of 2 or more with only zeros after the point is a count.
DECIMAL_COUNT = re.compile(r"(?<![\d.,])(?:[2-9]|[1-9]\d+)(?:,\d{3})*\.0+(?![\d%])(?!\s*pts)(?!\s*[KMG]?B\b)")  # not "120.0B"


def _settle(pg) -> None:
    wait_for_app(pg, timeout=WAIT)
    pg.wait_for_timeout(700)
    wait_for_app(pg, timeout=WAIT)


def _open(browser, app_url: str, path: str):
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    context.add_init_script(RECORD_GRID_TEXT)
    pg = context.new_page()
    pg.set_default_timeout(WAIT)
    pg.goto(f"{app_url}/{path}{'&' if '?' in path else '?'}source=upload")
    _settle(pg)
    return context, pg


def _upload(pg, key: str, *paths: Path) -> None:
    pg.locator(f".st-key-{key} input[type=file]").set_input_files([str(p) for p in paths])
    _settle(pg)


def _grid_text(pg) -> list[str]:
    """What the grids on the page have drawn so far (each is scrolled into view so that it draws)."""
    grids = pg.locator('[data-testid="stDataFrame"]')
    for k in range(grids.count()):
        if grids.nth(k).is_visible():  # not one in a closed expander
            grids.nth(k).scroll_into_view_if_needed()
            pg.wait_for_timeout(250)
    for _ in range(20):  # a grid draws a moment after the script has finished
        pg.wait_for_timeout(400)
        drawn = pg.evaluate("() => [...window.__gridText]")
        if drawn or not grids.count():
            return drawn
    return drawn


def _check_text(pg, where: str, problems: list[str], width: int) -> None:
    main = pg.locator('[data-testid="stMain"]')
    text = main.inner_text()
    cells = _grid_text(pg)
    if pg.locator('[data-testid="stMain"] [data-testid="stDataFrame"]:visible').count() and not cells:
        problems.append(f"{where}@{width}: the grids drew no text (nothing was checked)")
    for label, source in (("page text", [text]), ("grid cell", cells)):
        for s in source:
            for m in (NONE if label == "page text" else NONE_CELL).finditer(s):
                problems.append(f"{where}@{width}: literal {m.group()!r} in {label}: {s[max(0, m.start() - 50):m.end() + 50]!r}")
            for m in DECIMAL_COUNT.finditer(s):
                problems.append(f"{where}@{width}: count with decimals in {label}: {s[max(0, m.start() - 50):m.end() + 50]!r}")
    overflow = pg.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    if overflow > 1:
        problems.append(f"{where}@{width}: the page scrolls sideways by {overflow} px")
    if width >= 1440:
        cut = pg.evaluate(CUT_LABELS)
        if cut:
            problems.append(f"{where}@{width}: labels cut: {cut}")


def _check_both_widths(pg, where: str, problems: list[str]) -> None:
    _settle(pg)
    pg.set_viewport_size({"width": 1440, "height": 1000})
    pg.wait_for_timeout(500)
    _check_text(pg, where, problems, 1440)
    pg.set_viewport_size({"width": 390, "height": 844})
    pg.wait_for_timeout(1000)
    _check_text(pg, where, problems, 390)
    pg.set_viewport_size({"width": 1440, "height": 1000})
    pg.wait_for_timeout(500)


def _download_buttons(pg):
    # a disabled button (say, no judge cache to save yet) offers no file
    return pg.locator('[data-testid="stMain"] [data-testid="stDownloadButton"] button:visible:not([disabled])')


def _check_downloads(browser, pg, where: str, problems: list[str], tmp_path: Path, at_least: int) -> list[str]:
    """Click every download button forwards, then backwards: each click must give a file."""
    if at_least:
        _download_buttons(pg).first.wait_for(timeout=WAIT)  # drawn once the page has scored its inputs
    buttons = _download_buttons(pg)
    n = buttons.count()
    labels = [buttons.nth(i).inner_text().strip() for i in range(n)]
    if n < at_least:
        problems.append(f"{where}: {n} download buttons, expected at least {at_least}: {labels}")
    names: list[str] = []
    checked_html: set[str] = set()
    for i in [*range(n), *reversed(range(n))]:
        download = None
        for attempt in range(2):
            # A click that lands while a rerun redraws the buttons can be lost (the deferred file's
            # handler is replaced); a person clicks again, and so does the test, once, after the page settles.
            button = _download_buttons(pg).nth(i)
            button.scroll_into_view_if_needed()
            try:
                with pg.expect_download(timeout=60_000) as info:
                    button.click()
                download = info.value
                break
            except Exception as exc:  # noqa: BLE001 - reported with the button's label
                if attempt:
                    problems.append(f"{where}: no file from two clicks on {labels[i]!r} ({type(exc).__name__})")
                else:
                    _settle(pg)
        if download is None:
            continue
        target = tmp_path / f"{where}_{i}_{download.suggested_filename}"
        download.save_as(target)
        names.append(download.suggested_filename)
        if target.suffix == ".html" and download.suggested_filename not in checked_html:
            checked_html.add(download.suggested_filename)
            context = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
            report = context.new_page()
            report.goto(target.as_uri())
            report.wait_for_selector("footer")
            try:
                assert_series_coloured(report)
            except AssertionError as exc:
                problems.append(f"{where}: {download.suggested_filename}: {exc}")
            context.close()
    return names


def _pick_view(pg, view: str) -> None:
    pg.locator(".st-key-nar_view button", has_text=view).first.click()
    # the view's own heading ("<document> — Characters"; the overview's table caption) says it is drawn
    marker = "Open a document with the picker above" if view == "Overview" else f" — {view}"
    pg.get_by_text(marker).first.wait_for(timeout=WAIT)
    _settle(pg)


def _pick_page_view(pg, key: str, label: str, marker: str) -> None:
    """Open a view of a page whose first screen is its static overview, and wait until ``marker`` (a
    Playwright selector of something only that view draws) is there."""
    open_view(pg, key, label, timeout=WAIT)
    _settle(pg)
    pg.locator(marker).first.wait_for(timeout=WAIT)
    _settle(pg)


# --------------------------------------------------------------------------- pages


def test_qa_page_with_three_real_systems_and_a_fact_check_file(browser, app_url, tmp_path):
    hotpot = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    cfever = require_shared("qa_factcheck", "cfever_slice", "dumb_dev_pred.jsonl")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "QA_Factcheck")
    _upload(pg, "qa_upload", hotpot)
    pg.get_by_text("Breakdown · 分组").wait_for()  # the overview: static table and chart by system
    _check_both_widths(pg, "qa-hotpot", problems)
    _check_downloads(browser, pg, "qa-hotpot", problems, tmp_path, at_least=4)
    _pick_page_view(pg, "qa_view", "Records · 逐条结果", "text=records match the filters")
    _check_both_widths(pg, "qa-hotpot-records", problems)
    _pick_page_view(pg, "qa_view", "Systems side by side · 系统对比", "text=Paired comparison · 配对比较")
    _check_both_widths(pg, "qa-hotpot-systems", problems)
    names = _check_downloads(browser, pg, "qa-hotpot-systems", problems, tmp_path, at_least=7)
    if "comparison.html" not in names:
        problems.append(f"qa-hotpot: no HTML comparison report among {names}")
    context.close()

    context, pg = _open(browser, app_url, "QA_Factcheck")
    _upload(pg, "qa_upload", cfever)
    pg.get_by_text("Per-class metrics · 各类别指标").wait_for()
    _check_both_widths(pg, "qa-cfever", problems)
    _check_downloads(browser, pg, "qa-cfever", problems, tmp_path, at_least=4)
    _pick_page_view(pg, "qa_view", "Confusion matrix · 混淆矩阵", "text=Click a cell, or pick a true and a predicted label")
    _check_both_widths(pg, "qa-cfever-matrix", problems)
    _pick_page_view(pg, "qa_view", "Records · 逐条结果", "text=records match the filters")
    _check_both_widths(pg, "qa-cfever-records", problems)
    context.close()
    assert not problems, "\n".join(problems)


def test_narrative_page_with_real_stories_and_a_second_system(browser, app_url, tmp_path):
    data = require_shared("fairytales")
    gt = [data / "gt_v3" / "CH_002_牛郎织女_v3.json", data / "gt_v3" / "CH_003_孟姜女哭长城_v3.json"]
    pred = sorted((data / "predictions").glob("*.json"))
    older = data / "gt_v3_at_e33bce3" / "CH_002_牛郎织女_v3.json"  # an older annotation as a second "system"
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Narrative")
    _upload(pg, "nar_gt_upload", *gt)
    _upload(pg, "nar_pred_upload", *pred)
    _upload(pg, "nar_more_pred", older)
    for view in ("Overview", "Characters", "Relationships", "Actions", "Compare"):
        _pick_view(pg, view)
        _check_both_widths(pg, f"narrative-{view.lower()}", problems)
    names = _check_downloads(browser, pg, "narrative-compare", problems, tmp_path, at_least=2)
    if "narrative_comparison.html" not in names:
        problems.append(f"narrative-compare: no HTML comparison report among {names}")
    _pick_view(pg, "Downloads")
    _check_downloads(browser, pg, "narrative-downloads", problems, tmp_path, at_least=7)
    context.close()
    assert not problems, "\n".join(problems)


def test_test_sets_page_with_the_keyword_set_and_an_answers_file(browser, app_url, tmp_path):
    items = require_shared("keyword_qa", "factual_qa.json")
    answers = tmp_path / "answers.json"
    # README's example, one answer left out (a missing answer) and one unknown id (an input problem)
    answers.write_text(json.dumps({"fact_001": "伊法是花羽会的医生。", "fact_002": "他是伊法的助理。",
                                   "fact_999": "没有这个题目"}, ensure_ascii=False), encoding="utf-8")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Test_Sets")
    _upload(pg, "ts_items", items)
    _upload(pg, "ts_answers", answers)
    _check_both_widths(pg, "testsets", problems)
    _check_downloads(browser, pg, "testsets", problems, tmp_path, at_least=2)
    for view, marker in (("Items table · 逐条表格", '[data-testid="stDataFrame"]'),
                         ("Interactive charts · 交互图表", ".js-plotly-plot")):
        _pick_page_view(pg, "ts_view", view, marker)
        _check_both_widths(pg, f"testsets-{view.split()[0].lower()}", problems)
    context.close()
    assert not problems, "\n".join(problems)


def test_persona_page_with_the_real_cases_and_report(browser, app_url, tmp_path):
    data = require_shared("persona_chat")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Persona_Dialogue")
    _upload(pg, "dialogue_cases", data / "peppa_structured_test_cases.json")
    _upload(pg, "dialogue_preds", data / "peppa_structured_evaluation_202510101638_report.json")
    _check_both_widths(pg, "persona-overview", problems)
    _check_downloads(browser, pg, "persona", problems, tmp_path, at_least=3)
    for view, marker in (("Scenes × models", ".js-plotly-plot"), ("Models", "text=Signatures (tokenizer"),
                         ("Cases", "text=Character diff of case"),
                         ("Model comparison", "text=Load replies of two or more")):
        _pick_page_view(pg, "dialogue_view", view, marker)
        _check_both_widths(pg, f"persona-{view.split()[0].lower()}", problems)
    context.close()
    assert not problems, "\n".join(problems)


def test_long_memory_page_with_longmemeval_labels(browser, app_url, tmp_path):
    data = require_shared("long_memory")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Long_Memory")
    _upload(pg, "mem_questions", data / "longmemeval" / "longmemeval_oracle_questions_slim.json")
    _upload(pg, "mem_labels", data / "longmemeval_predictions_sample" / "my_predictions.jsonl.eval-results-gpt-4o")
    pg.get_by_text("accuracy", exact=False).first.wait_for()
    _check_both_widths(pg, "memory-longmemeval", problems)
    _check_downloads(browser, pg, "memory-longmemeval", problems, tmp_path, at_least=3)
    for view, marker in (("By question type · 按类型", ".js-plotly-plot"), ("Questions · 逐题", "text=Only judge score")):
        _pick_page_view(pg, "mem_view", view, marker)
        _check_both_widths(pg, f"memory-longmemeval-{view.split()[0].lower()}", problems)
    context.close()
    assert not problems, "\n".join(problems)


def _mem0_other_layout(tmp_path: Path) -> Path:
    """The shared mem0 results.json as another version of mem0's scripts writes it: conversations keyed
    ``"conv_0"`` instead of ``"0"``, and another system's answers (every fourth response emptied)."""
    data = json.loads(require_shared("long_memory", "locomo_predictions_mem0", "results.json").read_text("utf-8"))
    other = {}
    for conv, rows in data.items():
        other[f"conv_{conv}"] = [dict(r, response="" if k % 4 == 0 else r["response"]) for k, r in enumerate(rows)]
    path = tmp_path / "results_conv_keys.json"
    path.write_text(json.dumps(other, ensure_ascii=False), encoding="utf-8")
    return path


def test_long_memory_page_with_two_mem0_result_files(browser, app_url, tmp_path):
    results = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Long_Memory")
    _upload(pg, "mem_results", results)
    _upload(pg, "mem_more_results", _mem0_other_layout(tmp_path))
    _check_both_widths(pg, "memory-mem0", problems)
    _check_downloads(browser, pg, "memory-mem0", problems, tmp_path, at_least=4)  # no judge cache to save
    _pick_page_view(pg, "mem_view", "Systems side by side · 系统对比", "text=Show questions whose scores differ")
    _check_both_widths(pg, "memory-mem0-systems", problems)
    context.close()
    assert not problems, "\n".join(problems)


def test_long_memory_comparison_pairs_the_two_mem0_layouts(browser, app_url, tmp_path):
    results = require_shared("long_memory", "locomo_predictions_mem0", "results.json")
    context, pg = _open(browser, app_url, "Long_Memory")
    _upload(pg, "mem_results", results)
    _upload(pg, "mem_more_results", _mem0_other_layout(tmp_path))
    try:
        _pick_page_view(pg, "mem_view", "Systems side by side · 系统对比", "text=Show questions whose scores differ")
        assert pg.get_by_text("no scored item in common", exact=False).count() == 0
        # the questions x systems table is followed by its count (a dataframe without selection
        # carries no key class to look for)
        counted = pg.get_by_text(re.compile(r"^\d+ of \d+ questions\.$")).first
        counted.wait_for()
        caption = counted.inner_text()
        shown, total = (int(x) for x in re.findall(r"\d+", caption)[:2])
        assert shown == total == 1540  # every mem0 question (category 5 excluded) is in both files
        bars = pg.locator('.st-key-mem_sbs_chart .js-plotly-plot .bars .point')
        assert bars.count() == 2  # one bar per system
    finally:
        context.close()


def test_review_page_session_from_an_upload(browser, app_url, tmp_path):
    hotpot = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    problems: list[str] = []
    context, pg = _open(browser, app_url, "Review?annotator=walker")
    # a link's name is only offered: confirm it (issue 17), then create the session as that reviewer
    pg.get_by_role("button", name="Continue as walker?").click()
    _settle(pg)
    # with no session the New session panel is open; once one exists it sits in the folded session block
    folded = pg.locator('[data-testid="stExpander"] summary', has_text="Session · 审阅任务")
    if not pg.locator(".st-key-review_upload").is_visible() and folded.count():
        folded.first.click()
    new = pg.get_by_text("New session · 新建审阅")
    if new.count() and not pg.locator(".st-key-review_upload").is_visible():
        new.first.click()
    _upload(pg, "review_upload", hotpot)
    pg.locator(".st-key-review_name input").fill("walk")
    pg.locator(".st-key-review_name input").press("Tab")
    pg.get_by_role("button", name="Create session · 创建").click()
    _settle(pg)
    # the sidebar offers no "Demo data" beside a session made from an upload (point 9)
    assert pg.locator('[data-testid="stSidebar"]').get_by_text("Demo data").count() == 0
    for tab in ("Review · 审阅", "Adjudicate · 裁决", "Agreement · 一致性", "Export · 导出"):
        pg.locator('[data-testid="stButtonGroup"] button', has_text=tab).first.click()  # the view switcher
        _settle(pg)
        _check_both_widths(pg, f"review-{tab.split()[0].lower()}", problems)
    _check_downloads(browser, pg, "review-export", problems, tmp_path, at_least=3)
    context.close()
    assert not problems, "\n".join(problems)
