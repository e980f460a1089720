"""Every page and narrative view at 1440 px (desktop) and 390 px (phone) in Chromium.

Checked on each: no horizontal overflow of the page, every table inside the viewport, no
literal "None" text, no metric label cut off (ellipsis) at 1440 px, and every button of a
button group (the narrative view switch) on screen.  Screenshots are kept in
``.pytest_cache/layout/`` when that folder exists.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.e2e

VIEWS = [("", "home"), ("QA_Factcheck", "qa"), ("QA_Factcheck?view=matrix", "qa_matrix"),
         ("QA_Factcheck?view=records", "qa_records"), ("Test_Sets?view=items", "test_sets_items"),
         ("Persona_Dialogue?view=cases", "dialogue_cases"), ("Long_Memory?view=questions", "memory_questions"),
         ("Test_Sets", "test_sets"), ("Persona_Dialogue", "dialogue"),
         ("Review", "review"), ("Long_Memory", "memory")] + [
    (f"Narrative?view={v}", f"narrative_{v}")
    for v in ("overview", "characters", "relationships", "actions", "spans", "alignment", "compare", "downloads")]

MEASURE = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const iw = window.innerWidth;
  const outside = sel => [...main.querySelectorAll(sel)].filter(e => {
      const r = e.getBoundingClientRect(); return r.width > 0 && (r.left < -1 || r.right > iw + 1); }).length;
  const cut = [...main.querySelectorAll('[data-testid="stMetricLabel"] p, [data-testid="stMetricLabel"] div')]
      .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText);
  const text = main.innerText;
  const at = text.search(/\\bNone\\b/);
  return {overflow: document.scrollingElement.scrollWidth - iw, tables: outside('[data-testid="stDataFrame"]'),
          buttons: outside('[data-testid="stButtonGroup"] button'), cut,
          none: at < 0 ? '' : text.substr(Math.max(0, at - 60), 120)};
}"""


@pytest.mark.parametrize("width, height", [(1440, 1000), (390, 844)], ids=["desktop", "phone"])
def test_views_fit_the_screen_and_show_no_none(browser, app_url, width, height):
    shots = ROOT / ".pytest_cache" / "layout"
    if shots.parent.exists():
        shots.mkdir(exist_ok=True)
    problems = []
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        for path, name in VIEWS:
            page = context.new_page()
            page.set_default_timeout(90000)
            page.goto(f"{app_url}/{path}")
            wait_for_app(page, timeout=90000)
            page.wait_for_timeout(1500)  # charts and tables lay out after the script finishes
            m = page.evaluate(MEASURE)
            if m["overflow"] > 1:
                problems.append(f"{name}@{width}: page wider than the screen by {m['overflow']} px")
            if m["tables"]:
                problems.append(f"{name}@{width}: {m['tables']} table(s) past the screen edge")
            if m["buttons"]:
                problems.append(f"{name}@{width}: {m['buttons']} view button(s) off screen")
            if m["none"]:
                problems.append(f"{name}@{width}: literal None in {m['none']!r}")
            if width >= 1440 and m["cut"]:
                problems.append(f"{name}@{width}: metric labels cut off: {m['cut']}")
            if shots.exists():
                page.screenshot(path=str(shots / f"{name}_{width}.png"))
            page.close()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
