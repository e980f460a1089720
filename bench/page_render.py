"""First render of every page on its demo data, as a ratio to a two-widget Streamlit app.

Target (issue 21): every page <= 1.5x the two-widget app's first render on the same server setup.

    python bench/page_render.py [--repeat 3] [--pages Home,Narrative,...] [--json]

Each visit starts a fresh ``streamlit run`` (cold caches, as a first visitor after a deploy),
opens the page in Debian's Chromium (Playwright) and times from navigation until the page is
quiet: the script has finished (the app root's ``data-test-script-state`` is ``notRunning`` and no
status widget shows) and the document has not changed for ``QUIET_MS`` (a MutationObserver),
minus that quiet window. This works for pages that show no
metric (Review). The reference is a two-widget app (a segmented control and a metric) timed the
same way in the same run. Prints medians and each page's ratio beside the target; no assertion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.dashboard import FLOOR_APP, _server  # noqa: E402

#: Page name in the URL -> label. "" is the home page.
PAGES = {"": "Home", "Narrative": "Narrative", "QA_Factcheck": "QA", "Test_Sets": "Test sets",
         "Persona_Dialogue": "Persona", "Long_Memory": "Long Memory", "Review": "Review"}
QUIET_MS = 500
TARGET = 1.5

# Resolves once the script has finished and the DOM has not changed for QUIET_MS; returns the time
# (performance.now()) of the last change seen. "Finished" is the app root's script state (the attribute
# Streamlit's own browser tests wait on), not only the absence of the status widget: that widget shows
# half a second after a run starts, so a script pausing in that half second (importing, scoring) looked
# quiet and the page was timed before its tables and charts were drawn.
_QUIET_JS = """(quiet) => new Promise(resolve => {
  let last = performance.now();
  const obs = new MutationObserver(() => { last = performance.now(); });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  const tick = () => {
    const running = document.querySelector('[data-testid="stStatusWidget"]');
    const root = document.querySelector('[data-testid="stApp"]');
    const finished = root && root.getAttribute('data-test-script-state') === 'notRunning';
    const app = document.querySelector('[data-testid="stMain"], [data-testid="stAppViewContainer"]');
    if (!running && finished && app && performance.now() - last >= quiet) { obs.disconnect(); resolve(last); }
    else setTimeout(tick, 50);
  };
  setTimeout(tick, 50);
})"""


def first_render(app: Path, path: str) -> float:
    """Seconds from navigation to the last DOM change before the page went quiet (fresh server)."""
    from playwright.sync_api import sync_playwright

    proc, url = _server(app)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(url + path, wait_until="commit")
            nav_start = page.evaluate("performance.timeOrigin")
            last_change = page.evaluate(_QUIET_JS, QUIET_MS)
            origin_now = page.evaluate("performance.timeOrigin")
            assert origin_now == nav_start  # no reload in between
            browser.close()
            return last_change / 1000.0
    finally:
        proc.terminate()
        proc.wait(10)


def measure(pages: list[str], repeat: int) -> dict[str, float]:
    """Median first render (s) of the reference app and of each page, visits interleaved."""
    times: dict[str, list[float]] = {"reference": []}
    with tempfile.TemporaryDirectory() as tmp:
        floor = Path(tmp) / "floor.py"
        floor.write_text(FLOOR_APP)
        for _ in range(repeat):  # interleaved, so a busy moment hits every page alike
            times["reference"].append(first_render(floor, ""))
            for name in pages:
                times.setdefault(PAGES[name], []).append(first_render(ROOT / "app.py", f"/{name}"))
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pages", default=",".join(PAGES.values()),
                    help="labels, comma-separated (Home, Narrative, QA, Test sets, Persona, Long Memory, Review)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)
    wanted = {s.strip() for s in args.pages.split(",")}
    pages = [name for name, label in PAGES.items() if label in wanted]
    medians = measure(pages, args.repeat)
    ref = medians["reference"]
    print(f"two-widget Streamlit app: first render median {ref:.2f} s (reference)")
    out = {"reference_s": ref}
    for name in pages:
        label = PAGES[name]
        ratio = medians[label] / ref
        print(f"{label:12s} first render median {medians[label]:.2f} s = {ratio:.2f}x  (target <= {TARGET}x)"
              f"{'' if ratio <= TARGET else '  NOT MET'}")
        out[f"{label}_s"] = medians[label]
        out[f"{label}_ratio"] = ratio
    if args.json:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
