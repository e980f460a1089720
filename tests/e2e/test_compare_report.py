"""Browser tests: systems side by side on the QA page, and the HTML report opened with the network off."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import open_view, wait_for_app

pytestmark = pytest.mark.e2e

CHART = '[data-testid="stPlotlyChart"]'
DEMO = ROOT / "evaluators" / "demo" / "qa" / "qa_systems_demo.jsonl"


def test_systems_demo_shows_chart_matrix_and_paired_test(app_url, page):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/QA_Factcheck")
    wait_for_app(page)
    page.get_by_text("Three systems · 多系统对比 (16 questions)").click()
    wait_for_app(page)
    # the first screen draws EM and F1 by system as static SVG bars (the HTML report's chart) ...
    page.locator(".eb-static svg .bar").first.wait_for(state="attached", timeout=90000)
    assert page.locator(CHART).count() == 0
    # ... and the interactive chart, the matrix and the paired test are one click away
    open_view(page, "qa_view", "Systems side by side · 系统对比")
    heading = page.get_by_role("heading", name="Systems side by side · 系统对比")
    heading.wait_for(timeout=90000)
    heading.scroll_into_view_if_needed()
    # the chart of EM / F1 by system has one bar per system and metric, with error bars
    page.wait_for_selector(f"{CHART} .errorbar", timeout=60000)
    labels = " ".join(page.locator(f"{CHART} text").evaluate_all("els => els.map(e => e.textContent || '')"))
    for name in ("baseline-7b", "rag-7b", "rag-70b"):
        assert name in labels
    # agreement filter: 14 of 16 questions split the systems (see the demo's README)
    expect(page.get_by_text("Systems disagree · 不一致 (14)")).to_be_visible()
    # the paired test of rag-7b (B, the default second system) against baseline-7b:
    # EM 5/16 -> 10/16, +31.25 points (the same figures as `python -m evaluators compare`)
    expect(page.locator('[data-testid="stMetricValue"]').filter(has_text="+31.25 pts")).to_have_count(1)
    page.screenshot(path=str(ROOT / ".pytest_cache" / "qa_side_by_side.png"), full_page=True) \
        if (ROOT / ".pytest_cache").exists() else None


def test_html_report_opens_offline_and_draws_every_chart(browser, tmp_path):
    out = tmp_path / "comparison.html"
    done = subprocess.run([sys.executable, "-m", "evaluators", "report", "--input", str(DEMO), "--out", str(out),
                           "--ci-resamples", "2000"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "cdn.plot.ly" not in html  # static SVG charts: no script at all
    context = browser.new_context(offline=True, viewport={"width": 1300, "height": 1000})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(out.as_uri())
    pg.wait_for_selector("figure.chart svg", timeout=60000)
    assert pg.locator("figure.chart").count() == 1  # the one chart of a comparison (EM and F1 by system)
    assert pg.locator("figure.chart rect.bar").count() == 6  # 3 systems x (EM, F1)
    assert pg.locator("figure.chart .errorbar").count() == 6
    assert pg.get_by_role("heading", name="rag-7b against baseline-7b").count() == 1
    assert not errors, errors
    assert [u for u in requests if not u.startswith("file://")] == []
    context.close()


@pytest.mark.parametrize("argv, charts", [
    (["narrative", "--gt", "evaluators/demo/narrative", "--pred", "evaluators/demo/narrative", "--quiet",
      "--format", "html", "--out"], 2),
    (["memory", "--results", "evaluators/demo/memory/demo_results.jsonl", "--format", "html", "--out"], 1),
], ids=["narrative", "memory"])
def test_run_reports_open_offline_with_every_chart(browser, tmp_path, argv, charts):
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "evaluators", *argv, str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    context = browser.new_context(offline=True)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    pg = context.new_page()
    pg.goto(out.as_uri())
    pg.wait_for_selector("figure.chart svg", timeout=60000)
    assert pg.locator("figure.chart").count() == charts
    assert pg.locator("figure.chart rect.bar").count() >= charts
    assert [u for u in requests if not u.startswith("file://")] == []
    context.close()
