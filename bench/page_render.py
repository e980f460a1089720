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
Beside the seconds: the CPU seconds of the server process and of Chromium over the same window
(medians; steadier than seconds on a busy machine) and the page's total CPU as a ratio to the
reference's.
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

from bench.benchjson import emit  # noqa: E402
from bench.dashboard import FLOOR_APP, _server  # noqa: E402

#: Page name in the URL -> label. "" is the home page.
PAGES = {"": "Home", "Narrative": "Narrative", "QA_Factcheck": "QA", "Test_Sets": "Test sets",
         "Persona_Dialogue": "Persona", "Long_Memory": "Long Memory", "Review": "Review",
         "Judge_Lab": "Judge lab",
         "Runs": "Runs"}
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


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by the processes ``pids`` (0 for one that has ended)."""
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def visit(app: Path, path: str) -> tuple[float, float | None, float | None]:
    """One first render on a fresh server: ``(seconds, server CPU seconds, browser CPU seconds)``.

    Seconds: from navigation to the last DOM change before the page went quiet. The CPU seconds
    (user + system, from navigation until quiet) of the Streamlit server process and of every
    Chromium process tell the two sides apart and vary less with the machine's load than the
    seconds; ``None`` without psutil.
    """
    from playwright.sync_api import sync_playwright

    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with the dev requirements (dask distributed)
        psutil = None

    proc, url = _server(app)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1440, "height": 1000})

            def chromium() -> list[int]:
                return [c.pid for c in psutil.Process().children(recursive=True) if "chrom" in c.name()]

            if psutil is not None:
                pids = chromium()
                server0, browser0 = _cpu_seconds([proc.pid]), _cpu_seconds(pids)
            page.goto(url + path, wait_until="commit")
            nav_start = page.evaluate("performance.timeOrigin")
            last_change = page.evaluate(_QUIET_JS, QUIET_MS)
            origin_now = page.evaluate("performance.timeOrigin")
            assert origin_now == nav_start  # no reload in between
            server_cpu = browser_cpu = None
            if psutil is not None:
                server_cpu = _cpu_seconds([proc.pid]) - server0
                later = chromium()
                browser_cpu = _cpu_seconds(later) - browser0 + _cpu_seconds([q for q in pids if q not in later])
            browser.close()
            return last_change / 1000.0, server_cpu, browser_cpu
    finally:
        proc.terminate()
        proc.wait(10)


def first_render(app: Path, path: str) -> float:
    """Seconds from navigation to the last DOM change before the page went quiet (fresh server)."""
    return visit(app, path)[0]


def measure(pages: list[str], repeat: int) -> dict[str, dict[str, float | None]]:
    """Medians of the reference app and of each page: ``{label: {"s", "server_cpu", "browser_cpu"}}``.

    Visits are interleaved (reference, every page, again), so a busy moment hits every page alike.
    """
    visits: dict[str, list[tuple[float, float | None, float | None]]] = {"reference": []}
    with tempfile.TemporaryDirectory() as tmp:
        floor = Path(tmp) / "floor.py"
        floor.write_text(FLOOR_APP)
        for _ in range(repeat):
            visits["reference"].append(visit(floor, ""))
            for name in pages:
                visits.setdefault(PAGES[name], []).append(visit(ROOT / "app.py", f"/{name}"))

    def median(values: list) -> float | None:
        return None if any(v is None for v in values) else statistics.median(values)

    return {label: {"s": statistics.median(v[0] for v in vs), "server_cpu": median([v[1] for v in vs]),
                    "browser_cpu": median([v[2] for v in vs]),
                    "cpu": median([None if v[1] is None else v[1] + v[2] for v in vs]),
                    "rounds_s": [v[0] for v in vs],
                    "rounds_cpu": [None if v[1] is None else v[1] + v[2] for v in vs]}
            for label, vs in visits.items()}


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pages", default=",".join(PAGES.values()),
                    help="labels, comma-separated (" + ", ".join(PAGES.values()) + ")")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)
    wanted = {s.strip() for s in args.pages.split(",")}
    pages = [name for name, label in PAGES.items() if label in wanted]
    medians = measure(pages, args.repeat)
    ref = medians["reference"]

    def cpu(m: dict) -> str:
        if m["cpu"] is None:
            return ""
        return f"; CPU {m['cpu']:.2f} s (server {m['server_cpu']:.2f}, browser {m['browser_cpu']:.2f})"

    print(f"two-widget Streamlit app: first render median {ref['s']:.2f} s (reference){cpu(ref)}")
    out = {"reference_s": ref["s"], "reference_cpu_s": ref["cpu"]}
    for name in pages:
        label = PAGES[name]
        m = medians[label]
        ratio = m["s"] / ref["s"]
        cpu_ratio = None if m["cpu"] is None or not ref["cpu"] else m["cpu"] / ref["cpu"]
        print(f"{label:12s} first render median {m['s']:.2f} s = {ratio:.2f}x  (target <= {TARGET}x)"
              f"{'' if ratio <= TARGET else '  NOT MET'}{cpu(m)}"
              + ("" if cpu_ratio is None else f" = {cpu_ratio:.2f}x the reference's CPU"))
        out[f"{label}_s"] = m["s"]
        out[f"{label}_ratio"] = ratio
        out[f"{label}_server_cpu_s"] = m["server_cpu"]
        out[f"{label}_browser_cpu_s"] = m["browser_cpu"]
        out[f"{label}_cpu_ratio"] = cpu_ratio
    for name in pages:  # one BENCH_JSON line a page: each round's ratio to the reference of the same round
        m = medians[PAGES[name]]
        cpus = [None if c is None or not rc else c / rc for c, rc in zip(m["rounds_cpu"], ref["rounds_cpu"])]
        emit(f"page first render / two-widget app: {PAGES[name]}",
             [a / b for a, b in zip(m["rounds_s"], ref["rounds_s"])], unit="x", target=f"<= {TARGET}x", bound=TARGET,
             cpu_rounds=None if None in cpus else cpus,
             note="" if PAGES[name] != "Home" else f"reference median {ref['s']:.2f} s")
    if args.json:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
