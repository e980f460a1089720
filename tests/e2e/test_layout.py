"""Every page and view at 1440x900 (desktop) and 390x844 (phone) in Chromium, on each demo.

Checked on each: no horizontal overflow of the page, every table inside the viewport, no
literal "None" text, every button of a button group (the view switches) on screen, and no
text cut off:

- no element of the main area (metric card label or value, heading, caption, button, page link,
  static table, chart ...) whose text is wider than its box while the box clips it (``overflow``
  hidden or ``text-overflow: ellipsis``; measured with the text's own box too, since
  ``scrollWidth`` rounds a 1.5 px overflow away).  A box that scrolls (``overflow: auto``, a wide
  static table on a phone) is not cut: its last column is one swipe away;
- no text past the side of the screen outside such a box (the main area scrolls sideways unseen);
- no metric card label or value *set up* to cut (nowrap + ellipsis): the demo's numbers are
  short, a user's ("2400 / 2400") are not;
- in the interactive charts, no bar's value label drawn across an error bar.

Screenshots are kept in ``.pytest_cache/layout/`` when that folder exists.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import open_view, wait_for_app

pytestmark = pytest.mark.e2e

#: (path and query, name, demo radio option to click first or None); a view switch to click after the demo
#: radio (a ``?view=`` the first demo lacks falls back to the overview) is given in :data:`THEN_OPEN`
VIEWS = [("", "home", None), ("QA_Factcheck", "qa", None), ("QA_Factcheck?view=matrix", "qa_matrix", None),
         ("QA_Factcheck?view=records", "qa_records", None),
         ("QA_Factcheck", "qa_demo_qa", "QA demo · 问答示例 (12 questions)"),
         ("QA_Factcheck", "qa_demo_systems", "Three systems · 多系统对比 (16 questions)"),
         ("QA_Factcheck", "qa_systems", "Three systems · 多系统对比 (16 questions)"),
         ("Test_Sets", "test_sets", None), ("Test_Sets?view=items", "test_sets_items", None),
         ("Test_Sets", "test_sets_multi", "Multi-turn demo · 多轮示例 (2 dialogues)"),
         ("Persona_Dialogue", "dialogue", None), ("Persona_Dialogue?view=cases", "dialogue_cases", None),
         ("Persona_Dialogue?view=models", "dialogue_models", None),
         ("Long_Memory", "memory", None), ("Long_Memory?view=questions", "memory_questions", None),
         ("Long_Memory?view=types", "memory_types", None),
         ("Review", "review", None), ("Judge_Lab", "judgelab", None),
         ("Judge_Lab?view=confusion", "judgelab_confusion", None), ("Judge_Lab?view=bias", "judgelab_bias", None),
         ("Runs", "runs", None)] + [
    (f"Narrative?view={v}", f"narrative_{v}", None)
    for v in ("overview", "characters", "relationships", "actions", "spans", "alignment", "compare", "downloads")]

THEN_OPEN = {"qa_systems": ("qa_view", "Systems side by side · 系统对比")}

SETTLED = """() => !document.querySelector('[data-testid="stSkeleton"]')
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'))"""

#: Resolves once the page has stopped changing: the same number of elements and of characters for
#: 1.6 s (at most 60 s).
STILL = """() => new Promise(done => {
    let last = -1, same = 0;
    const started = Date.now();
    const tick = () => {
        const n = document.querySelectorAll('*').length * 100000 + document.body.innerText.length;
        same = n === last ? same + 1 : 0;
        last = n;
        if (same >= 4 || Date.now() - started > 60000) done(true); else setTimeout(tick, 400);
    };
    tick();
})"""


def settle(page) -> None:
    """Wait until the page has run and drawn: no element still a loading skeleton, every plotly chart
    drawn (its 4.7 MB chunk loads with the first chart; a chart below the fold lays out its labels once
    scrolled to), then a moment for the last layout; the page is left scrolled to the top."""
    wait_for_app(page, timeout=90000)
    page.evaluate(STILL)  # the script has finished; the last elements (a chart's chunk) may still be mounting
    page.wait_for_function(SETTLED, timeout=90000)
    charts = page.locator('[data-testid="stPlotlyChart"]')
    if charts.count():
        for i in range(charts.count()):
            charts.nth(i).scroll_into_view_if_needed()
            page.wait_for_timeout(500)
        page.wait_for_function(SETTLED, timeout=90000)
        page.evaluate(STILL)
    page.evaluate("() => { window.scrollTo(0, 0); const m = document.querySelector('[data-testid=\"stMain\"]');"
                  " if (m) m.scrollTo(0, 0); }")


MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const iw = window.innerWidth;
  const outside = sel => [...main.querySelectorAll(sel)].filter(e => {
      const r = e.getBoundingClientRect(); return r.width > 0 && (r.left < -1 || r.right > iw + 1); }).length;
  const name = e => {
      const t = e.closest('[data-testid]');
      return (t ? t.dataset.testid : e.tagName.toLowerCase()) + ': ' + (e.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 70);
  };
  // text cut off: a box narrower than its text that clips it (a scrolling box is reachable, not cut)
  const cut = [];
  for (const e of main.querySelectorAll('*')) {
      if (!(e instanceof HTMLElement) || !e.innerText || !e.innerText.trim()) continue;
      if (e.getBoundingClientRect().width === 0) continue;
      const cs = getComputedStyle(e);
      if (cs.overflowX === 'auto' || cs.overflowX === 'scroll') continue;
      if (cs.overflowX === 'visible' && cs.textOverflow !== 'ellipsis') continue;
      // scrollWidth is rounded to whole pixels: a label 1.5 px too wide ("Skipped lines · 跳…") has
      // scrollWidth 129 and clientWidth 128, so the text's own box (a Range) is compared as well
      const range = document.createRange();
      range.selectNodeContents(e);
      const t = range.getBoundingClientRect(), b = e.getBoundingClientRect();
      if (e.scrollWidth > e.clientWidth + 1 || t.right > b.right + 0.5 || t.left < b.left - 0.5) cut.push(name(e));
  }
  // text past the side of the screen, in no box of its own that scrolls or clips (the main area itself
  // scrolls sideways, unseen by the page's own width)
  const boxed = e => {
      for (let a = e.parentElement; a && a !== main; a = a.parentElement)
          if (getComputedStyle(a).overflowX !== 'visible') return true;
      return false;
  };
  const past = [...main.querySelectorAll('*')].filter(e => e instanceof HTMLElement
      && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()) && !boxed(e)
      && e.getBoundingClientRect().width > 0
      && (e.getBoundingClientRect().right > iw + 1 || e.getBoundingClientRect().left < -1)).map(name);
  // a metric card's label or value that would cut a longer text than the demo's
  const fragile = [...main.querySelectorAll('[data-testid="stMetricLabel"], [data-testid="stMetricValue"]')]
      .filter(card => [card, ...card.querySelectorAll('*')].some(e => {
          const cs = getComputedStyle(e);
          return cs.textOverflow === 'ellipsis' && cs.whiteSpace === 'nowrap' && cs.overflowX !== 'visible'; }))
      .map(name);
  // a bar's value written across its error bar (plotly charts: bar text and text traces vs whiskers)
  const crossed = [];
  for (const chart of main.querySelectorAll('.js-plotly-plot')) {
      const whiskers = [...chart.querySelectorAll('g.errorbar path')].map(e => e.getBoundingClientRect())
          .filter(r => r.height > 0);
      for (const t of chart.querySelectorAll('.bartext, .textpoint text')) {
          const r = t.getBoundingClientRect();
          if (r.width > 0 && whiskers.some(w => w.left < r.right - 1 && w.right > r.left + 1 && w.top < r.bottom - 1
                                                && w.bottom > r.top + 1))
              crossed.push(t.textContent);
      }
  }
  const text = main.innerText;
  const at = text.search(/\\bNone\\b/);
  return {overflow: document.scrollingElement.scrollWidth - iw, tables: outside('[data-testid="stDataFrame"]'),
          buttons: outside('[data-testid="stButtonGroup"] button'), cut: [...new Set(cut)],
          fragile: [...new Set(fragile)], crossed, past: [...new Set(past)].slice(0, 5), none: at < 0 ? '' : text.substr(Math.max(0, at - 60), 120)};
}"""


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_views_fit_the_screen_cut_nothing_and_show_no_none(browser, app_url, width, height):
    shots = ROOT / ".pytest_cache" / "layout"
    if shots.parent.exists():
        shots.mkdir(exist_ok=True)
    problems = []
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        for path, name, demo in VIEWS:
            page = context.new_page()
            page.set_default_timeout(90000)
            page.goto(f"{app_url}/{path}")
            wait_for_app(page, timeout=90000)
            if demo:
                page.get_by_text(demo, exact=True).click()
                page.wait_for_timeout(500)
                wait_for_app(page, timeout=90000)
            if name in THEN_OPEN:
                open_view(page, *THEN_OPEN[name])
            settle(page)
            m = page.evaluate(MEASURE)
            if m["overflow"] > 1:
                problems.append(f"{name}@{width}: page wider than the screen by {m['overflow']} px")
            if m["tables"]:
                problems.append(f"{name}@{width}: {m['tables']} table(s) past the screen edge")
            if m["buttons"]:
                problems.append(f"{name}@{width}: {m['buttons']} view button(s) off screen")
            if m["none"]:
                problems.append(f"{name}@{width}: literal None in {m['none']!r}")
            if m["cut"]:
                problems.append(f"{name}@{width}: text cut off: {m['cut']}")
            if m["past"]:
                problems.append(f"{name}@{width}: text past the edge of the screen: {m['past']}")
            if m["crossed"]:
                problems.append(f"{name}@{width}: bar value label(s) drawn across an error bar: {m['crossed']}")
            if m["fragile"]:
                problems.append(f"{name}@{width}: metric text set to cut (nowrap + ellipsis): {m['fragile'][:3]}"
                                + (f" and {len(m['fragile']) - 3} more" if len(m['fragile']) > 3 else ""))
            if shots.exists():
                page.screenshot(path=str(shots / f"{name}_{width}.png"))
            page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
