"""Issue 31: the QA page's Tokenization view in Chromium at 1440 px and 390 px, on the demo and on a public file
(HotpotQA, three real systems), the persona page's and the Long Memory page's: it renders, fits the screen, shows no
literal None, and names the tokenizers."""

from __future__ import annotations

import pytest

from tests.conftest import require_shared
from tests.e2e.conftest import open_view, wait_for_app
from tests.e2e.test_layout import MEASURE

pytestmark = pytest.mark.e2e

WAIT = 120000
LABEL = "Tokenization · 分词敏感性"


def _check(pg, name: str, width: int, problems: list[str]) -> None:
    pg.get_by_text("by tokenization").first.wait_for(timeout=WAIT)
    wait_for_app(pg, timeout=WAIT)
    try:
        pg.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=WAIT)
    except Exception:  # noqa: BLE001 - reported below as "no score table"
        pass
    pg.wait_for_timeout(1500)  # the grids lay out after the script finishes
    m = pg.evaluate(MEASURE)
    if m["overflow"] > 1:
        problems.append(f"{name}@{width}: page wider than the screen by {m['overflow']} px")
    if m["tables"]:
        problems.append(f"{name}@{width}: {m['tables']} table(s) past the screen edge")
    if m["none"]:
        problems.append(f"{name}@{width}: literal None in {m['none']!r}")
    if pg.locator('[data-testid="stDataFrame"]').count() < 1:
        problems.append(f"{name}@{width}: no score table")
    if pg.locator('[data-testid="stException"]').count():
        problems.append(f"{name}@{width}: an exception is shown")


@pytest.mark.parametrize("width, height", [(1440, 1000), (390, 844)], ids=["desktop", "phone"])
def test_tokenization_view_on_the_demo_and_a_public_file(browser, app_url, width, height):
    hotpot = require_shared("qa_factcheck", "hotpotqa_vatsalp04", "DERIVED_seed_format.jsonl")
    problems: list[str] = []
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        pg = context.new_page()
        pg.set_default_timeout(WAIT)
        pg.goto(f"{app_url}/QA_Factcheck")
        wait_for_app(pg, timeout=WAIT)
        pg.get_by_text("Three systems · 多系统对比 (16 questions)").click()
        wait_for_app(pg, timeout=WAIT)
        open_view(pg, "qa_view", LABEL, timeout=WAIT)
        _check(pg, "demo", width, problems)
        pg.close()

        pg = context.new_page()
        pg.set_default_timeout(WAIT)
        pg.goto(f"{app_url}/QA_Factcheck?source=upload")
        wait_for_app(pg, timeout=WAIT)
        pg.locator(".st-key-qa_upload input[type=file]").set_input_files(str(hotpot))
        wait_for_app(pg, timeout=WAIT)
        pg.get_by_text("Breakdown · 分组").first.wait_for(timeout=WAIT)
        open_view(pg, "qa_view", LABEL, timeout=WAIT)
        _check(pg, "hotpotqa", width, problems)
        pg.get_by_text("Tokenizers · 分词器").first.click()
        pg.get_by_text("dict=sha256:").first.wait_for(timeout=WAIT)  # the dictionary's digest is shown
        pg.close()

        pg = context.new_page()  # the persona page's view (models against the expected replies)
        pg.set_default_timeout(WAIT)
        pg.goto(f"{app_url}/Persona_Dialogue?view=tokenization")
        wait_for_app(pg, timeout=WAIT)
        _check(pg, "persona", width, problems)
        pg.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width, height", [(1440, 1000), (390, 844)], ids=["desktop", "phone"])
def test_memory_tokenization_view_on_the_demo(browser, app_url, width, height):
    problems: list[str] = []
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        pg = context.new_page()
        pg.set_default_timeout(WAIT)
        pg.goto(f"{app_url}/Long_Memory")
        wait_for_app(pg, timeout=WAIT)
        open_view(pg, "mem_view", LABEL, timeout=WAIT)
        _check(pg, "memory", width, problems)
        # the Chinese text is on the screen: the caption and a ground-truth answer as each tokenization cuts it
        for text in ("换一种分词，排名还成立吗？", "分词示例", "医生建议，为了腰伤康复"):
            if not pg.get_by_text(text).first.is_visible():
                problems.append(f"memory@{width}: {text!r} not visible")
        pg.get_by_text("Tokenizers · 分词器").first.click()
        pg.get_by_text("dict=sha256:").first.wait_for(timeout=WAIT)  # the jieba dictionary's digest is shown
        pg.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
