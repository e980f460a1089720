"""The Runs page in Chromium at 1440 and 390 px: it lists the runs, draws a trend with interval bands and a flagged
step, and opens two runs side by side; nothing wider than the screen.

The dashboard runs on a registry of seven runs (:func:`tests.helpers.runs_history.history`: a real drop at v4,
v7 sharing 40% of the items).  Screenshots are kept in ``.pytest_cache/runs/`` when ``.pytest_cache`` exists.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import open_view, start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e

#: The page's traces, as the browser's plotly holds them.
TRACES = "() => Array.from(document.querySelector('.js-plotly-plot').data, t => [t.name || '', t.fill || ''])"


@pytest.fixture(scope="module")
def runs_url(tmp_path_factory):
    """A dashboard whose registry holds the seven runs."""
    from evaluators.runs import RunStore
    from tests.helpers.runs_history import history

    url = f"sqlite:///{tmp_path_factory.mktemp('runs') / 'runs.sqlite'}"
    store = RunStore(url)
    history(store, [0.7, 0.7, 0.7, 0.45, 0.45, 0.45, 0.45], n_items=300, overlap_last=0.4)
    store.dispose()
    proc, base = start_server({"EVALBOARD_DATABASE_URL": url})
    yield base
    stop_server(proc)


def _fits(pg, width: int) -> None:
    assert pg.evaluate("() => document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width,height", [(1440, 900), (390, 844)])
def test_runs_listed_trend_flagged_and_side_by_side(browser, runs_url, width, height):
    shots = ROOT / ".pytest_cache" / "runs"
    keep = (ROOT / ".pytest_cache").exists()
    if keep:
        shots.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(90000)
    try:
        pg.goto(f"{runs_url}/Runs")
        wait_for_app(pg, timeout=90000)
        pg.get_by_text("7 of 7 runs, oldest first").wait_for()
        pg.locator('[data-testid="stDataFrame"]').first.wait_for()
        _fits(pg, width)
        if keep:
            pg.screenshot(path=str(shots / f"list_{width}.png"), full_page=True)

        open_view(pg, "runs_view", "Trend · 趋势")
        pg.locator(".js-plotly-plot").first.wait_for()
        traces = pg.evaluate(TRACES)
        assert ["flagged step", ""] in traces  # the drop at v4
        assert any(fill == "tonexty" for _, fill in traces)  # the interval band
        pg.locator("p").filter(has_text="v6 → v7: v6 and v7 are not joined: n common = 120 of 300 and 300 items")\
            .wait_for()
        _fits(pg, width)
        if keep:
            pg.screenshot(path=str(shots / f"trend_{width}.png"), full_page=True)
            pg.locator(".js-plotly-plot").first.screenshot(path=str(shots / f"trend_chart_{width}.png"))

        open_view(pg, "runs_view", "Side by side · 对比")
        pg.get_by_text("n common = 120 of 300 and 300 items", exact=False).first.wait_for()  # v6 and v7: refused
        for label, name in (("Run A", "v3"), ("Run B", "v4")):
            pg.get_by_role("combobox", name=label, exact=True).click()
            pg.get_by_role("option", name=name, exact=True).click()
            wait_for_app(pg, timeout=90000)
        pg.get_by_text("B = v4 against A = v3", exact=False).wait_for()
        metric = pg.locator('[data-testid="stMetric"]').first
        assert "n common" in metric.inner_text() and "300" in metric.inner_text()
        _fits(pg, width)
        if keep:
            pg.screenshot(path=str(shots / f"compare_{width}.png"), full_page=True)
            pg.locator('[data-testid="stDataFrame"]').first.screenshot(path=str(shots / f"compare_table_{width}.png"))
    finally:
        context.close()
