"""Dashboard timings in real headless Chromium: first render, widget rerun, 1,000 documents scored.

Targets: demo page first render <= 2 s; widget rerun <= 300 ms; 1,000 documents scored <= 5 s.

    python bench/dashboard.py [--page Narrative] [--repeat 5]

Starts ``streamlit run app.py`` on a free port (fresh process: cold caches), drives Debian's
Chromium with Playwright, and prints medians:

- first render: navigation start until the script has finished and the first metric is visible;
- widget rerun: click a view of the segmented control until the script has finished again;
- 1,000 documents: ``evaluate_batch`` on 1,000 pairs (the two demo stories and the real
  fairytale GT, repeated under new names), as the upload path of the page calls it.
No assertion: the numbers are for the team to read.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


FLOOR_APP = """import streamlit as st
v = st.segmented_control("View", ["Overview", "Characters"], default="Overview", key="v") or "Overview"
st.metric("Documents scored", 2)
st.markdown(f"<div class='floor-{v}'>{v}</div>", unsafe_allow_html=True)
"""


def _server(app: Path = ROOT / "app.py"):
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port",
                             str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=app.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


def _timed_visits(app: Path, path: str, views: Sequence[tuple[str, str]], repeat: int,
                  idle_after_click: bool = True) -> tuple[list[float], list[float]]:
    """First-render and rerun timings of ``repeat`` visits, each to a fresh server of ``app``.

    A fresh server each time, so the first render includes cold caches.  First render: from
    navigating to ``url + path`` until the first metric is visible and the script has finished.
    Rerun: from clicking each ``(view, mark)`` of the segmented control until ``mark`` is
    visible (and, with ``idle_after_click``, the script has finished again).
    """
    from playwright.sync_api import sync_playwright

    firsts, reruns = [], []
    for _ in range(repeat):
        proc, url = _server(app)
        try:
            with sync_playwright() as p:
                b = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                pg = b.new_page(viewport={"width": 1400, "height": 1000})
                t0 = time.perf_counter()
                pg.goto(url + path)
                pg.wait_for_selector('[data-testid="stMetric"]', timeout=60000)
                pg.wait_for_function(IDLE, timeout=60000)
                firsts.append(time.perf_counter() - t0)
                for view, mark in views:
                    t0 = time.perf_counter()
                    pg.locator('[data-testid="stButtonGroup"] button', has_text=view).first.click()
                    pg.wait_for_selector(mark, timeout=60000)
                    if idle_after_click:
                        pg.wait_for_function(IDLE, timeout=60000)
                    reruns.append(time.perf_counter() - t0)
                b.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return firsts, reruns


def floor_timings(repeat: int) -> tuple[list[float], list[float]]:
    """The same measurements on a two-widget Streamlit app: what the framework costs here."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "floor.py"
        app.write_text(FLOOR_APP)
        views = [(view, f".floor-{view}") for view in ("Characters", "Overview") * 2]
        return _timed_visits(app, "", views, repeat, idle_after_click=False)


# Each view of a page shows something the others do not: a rerun is timed until it appears.
VIEW_MARKS = (("Characters", ".eb-chars"), ("Relationships", "text=Pair coverage"),
              ("Spans", ".eb-overlay"), ("Overview", "text=Documents scored"))


def browser_timings(page_name: str, repeat: int) -> tuple[list[float], list[float]]:
    # The home page (page_name "") has no views to switch.
    return _timed_visits(ROOT / "app.py", f"/{page_name}", VIEW_MARKS if page_name else (), repeat)


def thousand_documents() -> float:
    from evaluators.demo import demo_path
    from evaluators.io import InputFile, collect_paths
    from evaluators.narrative.batch import evaluate_batch

    sources = []
    demo = collect_paths(demo_path("narrative"))
    gts = {f.name.rsplit("_v3", 1)[0]: f for f in demo if f.name.endswith("_v3.json")}
    for f in demo:
        if f.name.endswith("_prediction.json"):
            sources.append((gts[f.name.rsplit("_prediction", 1)[0]].data, f.data))
    real = ROOT.parent / "shared" / "data" / "fairytales" / "gt_v3"
    for f in sorted(real.glob("*.json")) if real.exists() else []:
        data = f.read_bytes()
        sources.append((data, data))
    gt_files, pred_files = [], []
    for i in range(1000):
        g, p = sources[i % len(sources)]
        gt_files.append(InputFile(f"DOC_{i:04d}_v3.json", g))
        pred_files.append(InputFile(f"DOC_{i:04d}_prediction.json", p))
    t0 = time.perf_counter()
    batch = evaluate_batch(gt_files, pred_files)
    elapsed = time.perf_counter() - t0
    assert len(batch.scored) == 1000
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--page", default="Narrative")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-browser", action="store_true")
    args = ap.parse_args()
    out = {}
    if not args.skip_browser:
        f_firsts, f_reruns = floor_timings(args.repeat)
        print(f"framework floor (a two-widget Streamlit app, same browser): first render median "
              f"{statistics.median(f_firsts):.2f} s, widget rerun median {statistics.median(f_reruns) * 1000:.0f} ms")
        out["floor_first_render_s_median"] = statistics.median(f_firsts)
        out["floor_widget_rerun_s_median"] = statistics.median(f_reruns)
        for name in ("", args.page):
            firsts, reruns = browser_timings(name, args.repeat)
            label = name or "Home"
            print(f"{label}: first render median {statistics.median(firsts):.2f} s "
                  f"(min {min(firsts):.2f}, max {max(firsts):.2f}; target <= 2 s)")
            if reruns:
                print(f"{label}: widget rerun median {statistics.median(reruns) * 1000:.0f} ms "
                      f"(min {min(reruns) * 1000:.0f}, max {max(reruns) * 1000:.0f}; target <= 300 ms)")
            out[f"{label}_first_render_s_median"] = statistics.median(firsts)
            if reruns:
                out[f"{label}_widget_rerun_s_median"] = statistics.median(reruns)
    t = thousand_documents()
    out["thousand_documents_s"] = t
    print(f"1,000 documents scored in {t:.2f} s (target <= 5 s)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
