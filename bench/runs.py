"""The run registry at a team's size, on SQLite and on PostgreSQL (issue 28's bench row).

Targets: a registry of 1,000 runs x 10,000 items: the Runs page's first render <= 2 s, a trend over 1,000 runs
<= 1 s, storage <= 30 bytes per item and metric; ``qa --log`` on 1M records adds <= 15% to the command's time.

    python bench/runs.py [--runs 1000] [--items 10000] [--qa-records 1000000] [--pg URL] [--only sqlite|postgresql]

Figures printed, per database:

- build: ``RunStore.log_run`` of ``--runs`` one-system QA-shaped runs (``exact_match`` 0/1 and ``token_f1``, a
  ``lang`` slice), each run's values drawn afresh (no column shared between runs: the worst case for storage);
  the wall time (building the full size takes long: the figure says how long);
- storage: the database's size (SQLite: the file; PostgreSQL: ``pg_database_size`` less that of an empty
  database) and the stored column blobs' bytes, each over runs x items x 2 metrics;
- trend: ``store.runs(dataset=...)`` and :func:`evaluators.runs.view.summary_points` over every run (the
  "as scored" line, from the summary rows each run logged; the target's row), then the page's trend with the
  latest 30 steps tested on their items (:func:`evaluators.runs.view.page_trend`);
- first render: ``pages/8_Runs.py`` under AppTest on that database, the first session in a fresh process and a
  second one (the server warm, as a team's is), list view and trend view.

Then, without a database per size: ``qa --input FILE`` against ``qa --input FILE --log`` (SQLite in a temporary
folder, a new run name each time) on ``--qa-records`` HotpotQA-like records, every one distinct (``bench/qa_cli.py``'s
generator with ``varied=True``: ids, questions, gold answers and predictions of its own; right, partly right and
wrong mixed: EM 29%, F1 62% over 200k records; three systems), each in a fresh process, alternating,
``--repeat`` times each: wall and CPU (user + system, worker processes included) medians and their ratio.

PostgreSQL runs in a new database on the server of ``--pg`` (or ``EVALBOARD_TEST_DATABASE_URL``), dropped at the
end.  No assertion: the numbers are for the team to read, with the load they were measured at.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit  # noqa: E402

METRICS = ("exact_match", "token_f1")
GT = "f" * 64


def build(url: str, runs: int, items: int, seed: int = 0) -> float:
    """Log ``runs`` runs of ``items`` items into ``url``; returns the wall seconds."""
    import numpy as np

    from evaluators.run_result import ItemTable, RunResult
    from evaluators.runs import RunStore

    rng = np.random.default_rng(seed)
    ids = tuple(f"q-{i}" for i in range(items))
    lang = tuple("zh" if i % 2 else "en" for i in range(items))
    store = RunStore(url)
    start_time = datetime(2026, 1, 1, tzinfo=timezone.utc)
    start = time.perf_counter()
    for k in range(runs):
        rate = 0.6 + 0.1 * np.sin(k / 50)
        em = (rng.random(items) < rate).astype(float)
        f1 = np.where(em == 1.0, 1.0, np.round(rng.random(items) * 0.6, 3))
        table = ItemTable(ids, ("model",) * items, {"exact_match": em.tolist(), "token_f1": f1.tolist()},
                          {"lang": lang})
        store.log_run(RunResult("qa", table, unit="record", signature="bench"), name=f"run-{k:05d}", who="bench",
                      gt_name="bench.jsonl", gt_digest=GT,
                      created_at=(start_time + timedelta(minutes=k)).isoformat())
        if k and k % 100 == 0:
            print(f"  ... {k:,} runs logged, {time.perf_counter() - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - start
    store.dispose()
    return elapsed


def database_bytes(url: str, empty: int) -> int:
    """The database's size in bytes (less ``empty``: an empty database's)."""
    import sqlalchemy as sa

    if url.startswith("sqlite"):
        path = Path(sa.make_url(url).database)
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    engine = sa.create_engine(url)
    with engine.connect() as c:
        size = c.execute(sa.text("select pg_database_size(current_database())")).scalar()
    engine.dispose()
    return int(size) - empty


def blob_total(url: str) -> int:
    """Bytes of every stored column blob."""
    import sqlalchemy as sa

    from evaluators.runs.tables import blobs_table

    engine = sa.create_engine(url)
    with engine.connect() as c:
        total = c.execute(sa.select(sa.func.sum(blobs_table.c.size))).scalar()
    engine.dispose()
    return int(total or 0)


def trend_times(url: str) -> tuple[float, float, float]:
    """(seconds of the runs query + summary points over every run, of the query alone, of the page's trend with
    the latest 30 steps tested)."""
    from evaluators.runs import RunStore
    from evaluators.runs import view as rv

    store = RunStore(url)
    t0 = time.perf_counter()
    records = store.runs(dataset="bench.jsonl")
    query = time.perf_counter() - t0
    points = rv.summary_points(records, "exact_match")
    line = time.perf_counter() - t0
    assert len(points) == len(records)
    t0 = time.perf_counter()
    rv.page_trend(store, records, "exact_match", tested_steps=30)
    steps = time.perf_counter() - t0
    store.dispose()
    return line, query, steps


def first_render(url: str) -> dict[str, float]:
    """AppTest of the Runs page on ``url``: the first session of a fresh process, then a second session (warm)."""
    os.environ["EVALBOARD_DATABASE_URL"] = url
    from streamlit.testing.v1 import AppTest

    out = {}
    for label, state in (("cold list", {}), ("warm list", {}), ("warm trend", {"runs_view": "trend"})):
        at = AppTest.from_file(str(ROOT / "pages" / "8_Runs.py"), default_timeout=600)
        for key, value in state.items():
            at.session_state[key] = value
        t0 = time.perf_counter()
        at.run()
        out[label] = time.perf_counter() - t0
        assert not at.exception, at.exception
    return out


def bench(label: str, url: str, runs: int, items: int, empty: int) -> None:
    print(f"\n[{label}] {runs:,} runs x {items:,} items x {len(METRICS)} metrics", flush=True)
    seconds = build(url, runs, items)
    print(f"build: {seconds:.1f} s ({seconds / runs * 1000:.0f} ms a run)")
    cells = runs * items * len(METRICS)
    size, blobs = database_bytes(url, empty), blob_total(url)
    print(f"storage: database {size / 1e6:.1f} MB = {size / cells:.1f} B per item-metric; column blobs "
          f"{blobs / 1e6:.1f} MB = {blobs / cells:.1f} B per item-metric (target <= 30)")
    emit(f"runs {label}: B per item-metric, {runs:,} runs x {items:,} items", [blobs / cells], unit="B",
         target="<= 30 B", bound=30, note=f"column blobs; database {size / cells:.1f} B per item-metric")
    line, query, steps = trend_times(url)
    print(f"trend over {runs:,} runs, as scored (summary rows): {line:.2f} s (runs query {query:.2f} s; "
          f"target <= 1 s); with the latest 30 steps tested on their items: {steps:.2f} s")
    emit(f"runs {label}: trend over {runs:,} runs", [line], unit="s", target="<= 1 s", bound=1)
    # the page in a fresh process, so the first session is cold
    import subprocess

    code = ("import sys, json; sys.path.insert(0, {root!r}); from bench.runs import first_render; "
            "print(json.dumps(first_render({url!r})))").format(root=str(ROOT), url=url)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        print(f"first render failed: {out.stderr[-2000:]}")
        return
    import json

    timings = json.loads(out.stdout.strip().splitlines()[-1])
    print("Runs page first render (AppTest): " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
          + " (target <= 2 s)")
    emit(f"runs {label}: Runs page first render (AppTest, slowest view)", [max(timings.values())], unit="s",
         target="<= 2 s", bound=2, note=", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))


def qa_log(records: int, repeat: int) -> None:
    from bench.qa_cli import qa, run, write_file

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qa.jsonl"
        write_file(path, records, True, varied=True)
        print(f"\nqa --log: {records:,} distinct records ({path.stat().st_size / 1e6:.0f} MB), load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        plain, logged = [], []
        for k in range(repeat):
            plain.append(run(qa(path)))
            logged.append(run(qa(path, "--log", "--run-name", f"bench-{k}", "--db", f"sqlite:///{tmp}/r.sqlite")))
        wall = statistics.median(x[0] for x in plain), statistics.median(x[0] for x in logged)
        cpu = statistics.median(x[1] for x in plain), statistics.median(x[1] for x in logged)
        print(f"qa on {records:,} records: {wall[0]:.1f} s ({cpu[0]:.1f} s CPU); with --log {wall[1]:.1f} s "
              f"({cpu[1]:.1f} s CPU): {wall[1] / wall[0]:.2f}x = +{100 * (wall[1] / wall[0] - 1):.0f}% wall, "
              f"{cpu[1] / cpu[0]:.2f}x = +{100 * (cpu[1] / cpu[0] - 1):.0f}% CPU (target <= +15%; medians of "
              f"{repeat}, load average now {os.getloadavg()[0]:.1f})")
        emit(f"qa --log / qa, {records:,} records (overhead, %)",
             [100 * (b[0] / a[0] - 1) for a, b in zip(plain, logged)],
             unit="%", target="<= +15%", bound=15, cpu_rounds=[100 * (b[1] / a[1] - 1) for a, b in zip(plain, logged)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="0: skip the registry rows")
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--qa-records", type=int, default=1_000_000, help="0: skip the qa --log row")
    parser.add_argument("--repeat", type=int, default=3, help="qa --log: runs of each command (alternating)")
    parser.add_argument("--pg", default=os.environ.get("EVALBOARD_TEST_DATABASE_URL", ""),
                        help="a PostgreSQL server URL (a new database is made on it and dropped)")
    parser.add_argument("--only", choices=("sqlite", "postgresql"))
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        if args.runs > 0 and args.only != "postgresql":
            url = f"sqlite:///{Path(tmp) / 'runs.sqlite'}"
            from evaluators.runs import RunStore

            RunStore(url).dispose()
            bench("sqlite", url, args.runs, args.items, database_bytes(url, 0))
        if args.runs > 0 and args.pg and args.only != "sqlite":
            from bench.pg import temporary_database
            from evaluators.runs import RunStore

            with temporary_database(args.pg) as url:
                RunStore(url).dispose()
                bench("postgresql", url, args.runs, args.items, database_bytes(url, 0))
        elif args.runs > 0 and args.only != "sqlite":
            print("\n(PostgreSQL skipped: give --pg URL or set EVALBOARD_TEST_DATABASE_URL)")
    if args.qa_records:
        qa_log(args.qa_records, args.repeat)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
