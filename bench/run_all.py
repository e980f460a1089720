"""Every row of the performance table (issues 21 and 32, README "Performance"), one command.

    python bench/run_all.py [--quick] [--only NAME[,NAME...]] [--list]

Runs each benchmark script in its own process, one after another (never two at once: they
time the same two cores), and prints its output; each script prints its own figures with the
ratio next to the target, then one ``BENCH_JSON {...}`` line a row of the table
(``bench/benchjson.py``). After the last one, prints one summary table: every row with min /
median / max over its rounds, the target, met or not, and the load (``os.getloadavg``) before
and after each benchmark. ``--quick`` passes smaller sizes where a script has them (for a
look at the shape of the numbers, not for the figures to quote). No assertion: figures are
for the team to read, measured at low load on the machine that reports them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import met, parse  # noqa: E402

#: name -> (script, the row of the table it measures, full arguments, --quick arguments)
BENCHES: dict[str, tuple[str, str, list[str], list[str]]] = {
    "pages": ("page_render.py", "page first render on demo data <= 1.5x a two-widget app",
              ["--repeat", "3"], ["--repeat", "1"]),
    "qa": ("qa_cli.py", "QA CLI 1M records <= 0.33x the official SQuAD script, <= 250 MB; output peak <= 3x input "
                        "+ 150 MB; --workers 2 >= 1.7x",
           [], ["--records", "100000", "--output-records", "20000", "--repeat", "1"]),
    "narrative-workers": ("narrative_workers.py", "narrative --workers 2 >= 1.7x, identical bytes",
                          [], ["--docs", "100", "--repeat", "2"]),
    "narrative-docs": ("narrative_docs.py", "narrative document <= 3x json.loads", [], ["--repeat", "5"]),
    "memory": ("memory_cli.py", "memory CLI on 20 MB <= 4x parsing the file", [], ["--repeats", "1", "--copies", "5"]),
    "bootstrap": ("bootstrap.py", "bootstrap 10k resamples x 100k scores <= 2 s, same interval as scipy",
                  [], ["--records", "20000"]),
    "review": ("review.py", "review 100k items: create <= 10 s, open <= 2 s, p95 click <= 500 ms, import 200k "
                            "<= 30 s, export <= 10 s at <= 300 MB", [], ["--items", "10000", "--clicks", "5"]),
    "runs": ("runs.py", "registry 1,000 runs x 10,000 items: Runs page first render <= 2 s, trend <= 1 s, <= 30 B "
                        "per item-metric; qa --log <= +15%", [],
             ["--runs", "100", "--items", "2000", "--qa-records", "100000"]),
    "dask": ("dask_qa.py", "Dask and shards: qa --scheduler (2-process LocalCluster) and 2 shards merged equal the "
                           "in-process report byte for byte; client peak <= 300 MB",
             ["--output-file"], ["--records", "20000", "--output-file"]),
    "shards": ("shards_merge.py", "1M QA records in 8 shards (400 narrative pairs, 30,800 memory rows in 4) from two "
                                  "checkouts, merged: the single-process report byte for byte",
               [], ["--records", "20000", "--shards", "4", "--narrative-docs", "40", "--memory-copies", "1"]),
    "judge-resume": ("judge_resume.py", "judge run, 10,000 stub judgements x 200 ms on 4 workers killed at 50% and "
                                        "resumed: exactly 10,000 calls, labels of one worker, >= 3.2x one worker",
                     [], ["--n", "400", "--latency", "0.02", "--baseline-n", "200"]),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (shape only, not figures to quote)")
    ap.add_argument("--only", default="", help=f"comma-separated names of: {', '.join(BENCHES)}")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and their rows")
    args = ap.parse_args(argv)
    if args.list:
        for name, (script, row, _, _) in BENCHES.items():
            print(f"{name:18s} bench/{script:22s} {row}")
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        print(f"error: unknown benchmark(s) {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    failed: list[str] = []
    results: list[tuple[str, list[dict], tuple[float, float], int]] = []
    for name in names:
        script, row, full, quick = BENCHES[name]
        print(f"\n=== {name}: {row}\n--- python bench/{script} {' '.join(quick if args.quick else full)}", flush=True)
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        records: list[dict] = []
        proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / script), *(quick if args.quick else full)],
                                cwd=ROOT, stdout=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
        assert proc.stdout is not None
        for line in proc.stdout:  # passed on as it comes; the BENCH_JSON lines are kept too
            print(line, end="", flush=True)
            record = parse(line)
            if record is not None:
                records.append(record)
        rc = proc.wait()
        print(f"--- {name}: exit {rc}, {time.perf_counter() - t0:.0f} s", flush=True)
        results.append((name, records, (load0, os.getloadavg()[0]), rc))
        if rc:
            failed.append(name)
    print_summary(results, quick=args.quick)
    if failed:
        print(f"\nbenchmarks that did not finish: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def _fmt(x: float, unit: str) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def print_summary(results: list[tuple[str, list[dict], tuple[float, float], int]], quick: bool) -> None:
    """One table: every row with min / median / max over its rounds, the target, met or not, the load."""
    print(f"\n=== summary{' (--quick: shape only, not figures to quote)' if quick else ''}; "
          f"{os.cpu_count()} CPUs; load now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    head = f"{'bench':17s} {'row':60s} {'n':>2s} {'min':>7s} {'median':>7s} {'max':>7s} {'unit':4s} " \
           f"{'CPU med':>7s} {'target':12s} {'met':4s} load"
    print(head)
    print("-" * len(head))
    for name, records, (load0, load1), rc in results:
        load = f"{load0:.1f}-{load1:.1f}"
        if not records:
            print(f"{name:17s} {'(no figures: exit ' + str(rc) + ')':60s} {'':>2s} {'':>7s} {'':>7s} {'':>7s} "
                  f"{'':4s} {'':>7s} {'':12s} {'-':4s} {load}")
            continue
        for r in records:
            ok = met(r)
            verdict = "-" if ok is None else ("yes" if ok else "NO")
            row = r["row"] if len(r["row"]) <= 60 else r["row"][:59] + "~"
            if "rounds" in r and r["rounds"]:
                xs, unit = r["rounds"], r["unit"]
                cpu = _fmt(statistics.median(r["cpu_rounds"]), unit) if r.get("cpu_rounds") else ""
                print(f"{name:17s} {row:60s} {len(xs):2d} {_fmt(min(xs), unit):>7s} "
                      f"{_fmt(statistics.median(xs), unit):>7s} {_fmt(max(xs), unit):>7s} {unit:4s} {cpu:>7s} "
                      f"{r['target']:12s} {verdict:4s} {load}")
            else:
                print(f"{name:17s} {row:60s} {'':>2s} {'':>7s} {r.get('value', ''):>7s} {'':>7s} {'':4s} {'':>7s} "
                      f"{r['target']:12s} {verdict:4s} {load}")
            if r.get("note"):
                print(f"{'':17s}   {r['note']}")


if __name__ == "__main__":
    sys.exit(main())
