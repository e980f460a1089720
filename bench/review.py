"""Review sessions at a real evaluation's size, on SQLite and on PostgreSQL.

Targets (issue 17): create a 100k-item session <= 10 s; Review page first render <= 2 s and p95
click-to-next-item <= 500 ms with 100k items (Chromium, real server); import <= 30 s and export
<= 10 s of 200k decisions, each at <= 300 MB peak memory.  Issue 30 tightens the click to p95 <= 300 ms
and asks for the Agreement view in <= 1 s on a 100k-item session with 200k decisions.

    python bench/review.py [--items 100000] [--clicks 20] [--pg URL] [--no-browser]

SQLite runs in a temporary folder; PostgreSQL in a new database on the server of ``--pg`` (or
``EVALBOARD_TEST_DATABASE_URL``), dropped at the end.  Figures printed:

- create: ``ReviewStore.create_session`` of ``--items`` QA items (k = 2);
- first render: a fresh ``streamlit run app.py`` on that database; navigation start of
  ``/Review?annotator=...&session=...`` in Chromium until the item is shown and the script is idle;
- click: "1 · Model error" until the next item is shown and the script is idle (``--clicks`` times;
  median and p95);
- Agreement view: on the imported session (100k items, 2 decisions each), a click on *Agreement* in
  Chromium until its last figure is shown and the script is idle: the first click of a fresh server
  (nothing cached), then ``--clicks`` / 4 more (back to *Review* between them; median), then
  ``--clicks`` / 4 first clicks after a decision saved meanwhile by another process (every figure
  recomputed: median and max);
- import / export: ``python -m evaluators review import`` of a format-2 file with the session's
  items and 2 decisions per item (``2 x --items`` decisions), then ``review export`` of it, each in
  its own process: wall time and the process's peak memory (``VmHWM``);
- Label Studio: ``review export --format label-studio`` of that session, and ``review import`` of
  the tasks into a new session (no target: the figures show the interchange at this size).
No assertion: the numbers are for the team to read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit  # noqa: E402
from bench.dashboard import IDLE, _port  # noqa: E402

BUTTON = "1 · Model error · 模型错误"


def _items(n: int) -> list[dict]:
    return [{"kind": "qa", "id": f"q{i:06d}", "question": f"问题 {i}: who wrote book {i}? / 谁写了第 {i} 本书？",
             "ground_truth": f"Author {i % 977}", "prediction": f"Author {(i * 7) % 977}", "system": "sys-a",
             "exact_match": float(i % 3 == 0), "token_f1": round((i % 10) / 10, 2)} for i in range(n)]


def create(url: str, n: int) -> tuple[float, int]:
    from evaluators.review import ReviewStore

    store = ReviewStore(url)
    items = _items(n)
    t0 = time.perf_counter()
    s = store.create_session("bench 100k", "qa", items, created_by="olga", k=2, seed=1)
    elapsed = time.perf_counter() - t0
    store.dispose()
    return elapsed, s.id


@contextlib.contextmanager
def _server(url: str):
    """A fresh ``streamlit run app.py`` on the database ``url``; yields its base URL once healthy."""
    import urllib.request

    port = _port()
    env = dict(os.environ, EVALBOARD_DATABASE_URL=url, EVALBOARD_DATA_DIR=tempfile.mkdtemp())
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port",
                             str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(30)


AGREEMENT, REVIEW = "Agreement · 一致性", "Review · 审阅"
#: The Agreement view's last figure on a QA session (the automatic verdict against reviewers).
AGREEMENT_DONE = "The automatic verdict is"


def _decide(url: str, session_id: int, round_: int) -> None:
    """One more decision in the session (alice's label on its first item, changed), as another server would."""
    from evaluators.review import ReviewStore

    store = ReviewStore(url)
    item = next(iter(store.iter_items(session_id, batch=1)))
    mine = [d for d in store.decisions(session_id) if d.item_id == item.id and d.annotator == "alice"]
    store.save_decision(item.id, "alice", label=("acceptable_variant", "model_error")[round_ % 2], score=3,
                        expected_version=mine[0].version if mine else 0)
    store.dispose()


def agreement(url: str, session_id: int, repeats: int) -> tuple[float, list[float], list[float]]:
    """Seconds from a click on *Agreement* to its last figure with the script idle: the first click on a fresh
    server (cold), ``repeats`` more (warm), then ``repeats`` first clicks after a decision saved meanwhile (the
    figures recomputed), switching back to *Review* between them."""
    from playwright.sync_api import sync_playwright

    with _server(url) as base, sync_playwright() as p:
        b = p.chromium.launch(executable_path=os.environ.get("EVALBOARD_CHROMIUM", "/usr/bin/chromium"))
        page = b.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(f"{base}/Review?session={session_id}")
        review_on = page.locator('[data-testid="stButtonGroup"] button[aria-checked="true"]', has_text=REVIEW)
        review_on.first.wait_for(timeout=300_000)
        page.wait_for_function(IDLE, timeout=300_000)
        times = []
        for r in range(1 + 2 * repeats):
            if r > repeats:
                _decide(url, session_id, r)
            t0 = time.perf_counter()
            page.locator('[data-testid="stButtonGroup"] button', has_text=AGREEMENT).first.click()
            page.get_by_text(AGREEMENT_DONE).first.wait_for(timeout=300_000)
            page.wait_for_function(IDLE, timeout=300_000)
            times.append(time.perf_counter() - t0)
            page.locator('[data-testid="stButtonGroup"] button', has_text=REVIEW).first.click()
            review_on.first.wait_for(timeout=300_000)
            # the Agreement view's elements gone (not left stale from the last run), the script idle
            page.get_by_text(AGREEMENT_DONE).first.wait_for(state="detached", timeout=300_000)
            page.wait_for_function(IDLE, timeout=300_000)
        b.close()
    return times[0], times[1:1 + repeats], times[1 + repeats:]


def browser(url: str, session_id: int, clicks: int) -> tuple[float, list[float]]:
    from playwright.sync_api import sync_playwright

    with _server(url) as base:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=os.environ.get("EVALBOARD_CHROMIUM", "/usr/bin/chromium"))
            page = b.new_context(viewport={"width": 1300, "height": 1000}).new_page()
            # warm the server process (module imports), as a team's server is warm
            page.goto(f"{base}/Review")
            page.wait_for_function(IDLE, timeout=120_000)
            page.get_by_text("Ground truth · 标准答案").first.wait_for(timeout=120_000)
            page = b.new_context(viewport={"width": 1300, "height": 1000}).new_page()
            t0 = time.perf_counter()
            page.goto(f"{base}/Review?annotator=olga&session={session_id}")
            page.get_by_text("Ground truth · 标准答案").first.wait_for(timeout=120_000)
            page.wait_for_function(IDLE, timeout=120_000)
            first = time.perf_counter() - t0
            page.get_by_role("button", name="Continue as olga?").click()
            page.get_by_role("button", name="1 · Model error · 模型错误").first.wait_for(timeout=120_000)
            page.wait_for_function(IDLE, timeout=120_000)
            times = []
            for _ in range(clicks):
                item = page.evaluate("() => new URL(location.href).searchParams.get('item')")
                t0 = time.perf_counter()
                page.locator(f".st-key-review_model_error_{item}").get_by_role("button", name=BUTTON).click()
                page.wait_for_function(f"() => new URL(location.href).searchParams.get('item') !== '{item}'",
                                       timeout=120_000)
                new = page.evaluate("() => new URL(location.href).searchParams.get('item')")
                page.locator(f".st-key-review_model_error_{new}").get_by_role("button", name=BUTTON).wait_for(timeout=120_000)
                page.wait_for_function(IDLE, timeout=120_000)
                times.append(time.perf_counter() - t0)
            b.close()
        return first, times


def exchange_file(path: Path, n: int) -> int:
    """A format-2 export: a session, ``n`` items, 2 decisions per item; returns the number of decisions."""
    from evaluators.review.store import item_digest

    name = "bench import"
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "session", "format": 2, "session": name, "kind": "qa", "created_by": "olga",
                              "created_at": "2026-01-01T00:00:00.000000+00:00", "blind": False, "k": 2, "seed": 3,
                              "settings": {}, "uploads": []}, ensure_ascii=False, sort_keys=True) + "\n")
        digests = []
        for pos, payload in enumerate(_items(n)):
            digest = item_digest(payload)
            digests.append(digest)
            out.write(json.dumps({"type": "item", "session": name, "item_digest": digest, "position": pos,
                                  "item": payload, "gold": None}, ensure_ascii=False, sort_keys=True) + "\n")
        for pos, digest in enumerate(digests):
            for who, label in (("alice", "model_error"), ("bob", ("gt_error", "acceptable_variant")[pos % 2])):
                out.write(json.dumps({"type": "decision", "session": name, "item_digest": digest, "annotator": who,
                                      "label": label, "score": 1 + pos % 5, "comment": f"说明 {pos}",
                                      "status": "submitted", "version": 1,
                                      "updated_at": "2026-01-02T00:00:00.000000+00:00"},
                                     ensure_ascii=False, sort_keys=True) + "\n")
    return 2 * n


PEAK = """
import atexit, sys
sys.path.insert(0, {root!r})
def _peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            open({side!r}, "w").write(line.split()[1])
atexit.register(_peak)
from evaluators.cli import main
code = main({args!r})
sys.exit(code)
"""


def cli(args: list[str]) -> tuple[float, float, int, float]:
    """Run ``python -m evaluators`` args in its own process: (seconds, peak MB, exit code, CPU seconds)."""
    import resource

    side = tempfile.mktemp()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK.format(root=str(ROOT), side=side, args=args)], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode:
        print(done.stderr[-2000:], file=sys.stderr)
    peak = int(Path(side).read_text()) / 1024 if Path(side).exists() else float("nan")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, peak, done.returncode, cpu


def bench(label: str, url: str, n: int, clicks: int, with_browser: bool, work: Path) -> None:
    print(f"\n== {label} ({url.split('@')[-1]})")
    seconds, sid = create(url, n)
    print(f"create a {n:,}-item session: {seconds:.2f} s (target <= 10 s)")
    emit(f"review {label}: create a {n:,}-item session", [seconds], unit="s", target="<= 10 s", bound=10)
    if with_browser:
        first, times = browser(url, sid, clicks)
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) >= 2 else times[0]
        print(f"Review page first render: {first:.2f} s (target <= 2 s); click to next item: median "
              f"{statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms over {len(times)} clicks "
              f"(target p95 <= 500 ms, issue 30: <= 300 ms)")
        emit(f"review {label}: Review page first render", [first], unit="s", target="<= 2 s", bound=2)
        emit(f"review {label}: click to next item (rounds: clicks)", [t * 1000 for t in times], unit="ms",
             target="p95 <= 500 ms (issue 30: <= 300 ms)", bound=500, judge="p95", note=f"p95 {p95 * 1000:.0f} ms")
    data = work / f"decisions-{label}.jsonl"
    n_dec = exchange_file(data, n)
    seconds, peak, code, cpu = cli(["review", "import", "--db", url, "--input", str(data)])
    print(f"import {n_dec:,} decisions (+{n:,} items, {data.stat().st_size / 1e6:.0f} MB): {seconds:.1f} s "
          f"({cpu:.1f} s CPU), {(n_dec + n + 1) / seconds:,.0f} lines/s, peak {peak:.0f} MB, exit {code} "
          f"(target <= 30 s, <= 300 MB)")
    emit(f"review {label}: import {n_dec:,} decisions", [seconds], unit="s", target="<= 30 s", bound=30,
         note=f"{cpu:.1f} s CPU, exit {code}")
    emit(f"review {label}: import peak memory", [peak], unit="MB", target="<= 300 MB", bound=300)
    if with_browser:
        from evaluators.review import ReviewStore

        store = ReviewStore(url)
        imported = store.session_by_name("bench import").id
        store.dispose()
        cold, warm, after = agreement(url, imported, max(1, clicks // 4))
        print(f"Agreement view of {n:,} items and {n_dec:,} decisions: first click {cold:.2f} s, then median "
              f"{statistics.median(warm):.2f} s over {len(warm)}; first click after a decision: median "
              f"{statistics.median(after):.2f} s, max {max(after):.2f} s over {len(after)} (target <= 1 s; load "
              f"{os.getloadavg()[0]:.1f})")
        emit(f"review {label}: Agreement view, first click of a fresh server", [cold], unit="s", target="<= 1 s",
             bound=1)
        emit(f"review {label}: Agreement view, repeat clicks", warm, unit="s", target="<= 1 s", bound=1)
        emit(f"review {label}: Agreement view, first click after a decision", after, unit="s", target="<= 1 s",
             bound=1, judge="p95")
    out = work / f"export-{label}.jsonl"
    seconds, peak, code, cpu = cli(["review", "export", "--db", url, "--session", "bench import", "--out", str(out)])
    print(f"export {n_dec:,} decisions: {seconds:.1f} s ({cpu:.1f} s CPU), peak {peak:.0f} MB, exit {code} "
          f"({out.stat().st_size / 1e6:.0f} MB; target <= 10 s, <= 300 MB)")
    emit(f"review {label}: export {n_dec:,} decisions", [seconds], unit="s", target="<= 10 s", bound=10,
         note=f"{cpu:.1f} s CPU, exit {code}")
    emit(f"review {label}: export peak memory", [peak], unit="MB", target="<= 300 MB", bound=300)
    tasks = work / f"tasks-{label}.json"
    seconds, peak, code, cpu = cli(["review", "export", "--db", url, "--session", "bench import", "--format",
                                    "label-studio", "--out", str(tasks)])
    print(f"Label Studio export of {n:,} tasks: {seconds:.1f} s ({cpu:.1f} s CPU), peak {peak:.0f} MB, exit {code} "
          f"({tasks.stat().st_size / 1e6:.0f} MB)")
    seconds, peak, code, cpu = cli(["review", "import", "--db", url, "--session", "bench label studio", "--input",
                                    str(tasks)])
    print(f"Label Studio import of {n:,} tasks ({n_dec:,} annotations) into a new session: {seconds:.1f} s "
          f"({cpu:.1f} s CPU), {(n + n_dec) / seconds:,.0f} records/s, peak {peak:.0f} MB, exit {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--clicks", type=int, default=20)
    parser.add_argument("--pg", default=os.environ.get("EVALBOARD_TEST_DATABASE_URL", ""),
                        help="a PostgreSQL server URL (a new database is made on it and dropped)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if not args.no_browser:
        from bench.dashboard import floor_timings

        firsts, reruns = floor_timings(3)
        print(f"Streamlit floor here (a two-widget app): first render {statistics.median(firsts):.2f} s, "
              f"rerun {statistics.median(reruns) * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only != "postgresql":
            bench("sqlite", f"sqlite:///{work / 'review.sqlite'}", args.items, args.clicks, not args.no_browser, work)
        if args.pg and args.only != "sqlite":
            from bench.pg import temporary_database

            with temporary_database(args.pg) as url:
                bench("postgresql", url, args.items, args.clicks, not args.no_browser, work)
        elif args.only != "sqlite":
            print("\n(PostgreSQL skipped: give --pg URL or set EVALBOARD_TEST_DATABASE_URL)")


if __name__ == "__main__":
    main()
