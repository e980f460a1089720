"""Benchmark (issue 21): the ``memory`` CLI on 20 MB of predictions (about 54k rows) against parsing the file.

The input is mem0's 1,540 real LoCoMo predictions (``../shared/data/long_memory``, with
locomo10's ids) written as EvalResult JSONL 35 times under distinct ids: 53,900 rows,
about 21 MB (the shipped demo's 25 results repeated to the same size when the shared data
is absent).  The reference is parsing that file: ``json.loads`` of every line, the
cheapest complete read.  The CLI runs as a user runs it (``python -m evaluators memory
--results FILE --format json --out ...``, a fresh process, default metrics), with its
default 10,000-resample intervals and with ``--ci-resamples 0``; each ratio is printed next
to the target (<= 4x), with the CPU time (user + system) of the CLI process against parsing's
(steadier than wall time on a loaded machine) and its peak resident memory.

    python bench/memory_cli.py [--repeats 3] [--copies 35] [--profile]

``--profile`` also prints the top entries of a cProfile of one in-process run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.memory.loaders import load_locomo, load_mem0_locomo, load_results_file  # noqa: E402
from evaluators.results import to_jsonable  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "long_memory"
TARGET = 4.0
# Runs the CLI like ``python -m evaluators`` and prints its peak RSS (KiB) on stderr's last line.
WRAPPER = """
import sys
sys.argv = ["evaluators", *sys.argv[1:]]
try:
    from evaluators.cli import main
    code = main()
finally:
    with open("/proc/self/status") as f:
        print("VmHWM", next(line.split()[1] for line in f if line.startswith("VmHWM:")), file=sys.stderr)
sys.exit(code)
"""


def write_input(path: Path, copies: int) -> tuple[int, str]:
    """The benchmark file; returns (rows, what it was made from)."""
    if (DATA / "locomo_predictions_mem0" / "results.json").exists():
        dataset = load_locomo(DATA / "locomo" / "locomo10.json")
        base = load_mem0_locomo(DATA / "locomo_predictions_mem0" / "results.json", dataset=dataset).results
        source = f"mem0's {len(base)} real LoCoMo predictions x {copies}"
    else:
        base = load_results_file(demo_path("memory", "demo_results.jsonl").read_bytes(), "demo").results
        copies = copies * 1540 // len(base)
        source = f"the demo's {len(base)} results x {copies} (shared data absent)"
    rows = 0
    with path.open("w", encoding="utf-8") as fh:
        for k in range(copies):
            for r in base:
                record = to_jsonable(r)
                record["question_id"] = f"{r.question_id}_r{k}"
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                rows += 1
    return rows, source


def parse_seconds(path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of parsing every line."""
    start, cpu = time.perf_counter(), time.process_time()
    with path.open("rb") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - start, time.process_time() - cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_run(path: Path, out: Path, extra: list[str]) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one CLI process."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", WRAPPER, "memory", "--results", str(path), "--format", "json",
                           "--out", str(out), *extra], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), EVALBOARD_JUDGE_BASE_URL="",
                                   EVALBOARD_JUDGE_MODEL=""))
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"memory CLI failed ({proc.returncode}): {proc.stderr[-2000:]}")
    rss = int(proc.stderr.strip().splitlines()[-1].split()[1])
    return seconds, rss, _children_cpu() - cpu


def profile(path: Path, out: Path, top: int = 25) -> None:
    import cProfile
    import pstats

    from evaluators.cli import main

    prof = cProfile.Profile()
    prof.enable()
    main(["memory", "--results", str(path), "--format", "json", "--out", str(out)])
    prof.disable()
    print(f"\ncProfile of one run in this process (top {top} by cumulative time):")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--copies", type=int, default=35)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, out = Path(tmp) / "predictions.jsonl", Path(tmp) / "report.json"
        rows, source = write_input(path, args.copies)
        size = path.stat().st_size
        print(f"input: {rows} rows, {size / 1e6:.1f} MB ({source})")
        parses = [parse_seconds(path) for _ in range(args.repeats)]
        parse = statistics.median(w for w, _ in parses)
        parse_cpu = statistics.median(c for _, c in parses)
        print(f"reference: json.loads of every line: {parse:.2f} s, CPU {parse_cpu:.2f} s (median of {args.repeats})")
        for label, extra in (("memory CLI, default (10,000-resample intervals)", []),
                             ("memory CLI, --ci-resamples 0", ["--ci-resamples", "0"])):
            runs = [cli_run(path, out, extra) for _ in range(args.repeats)]
            seconds = statistics.median(s for s, _, _ in runs)
            cpu = statistics.median(c for _, _, c in runs)
            peak = max(r for _, r, _ in runs) / 1024
            ratio = seconds / parse
            verdict = "meets" if ratio <= TARGET else "misses"
            print(f"{label}: {seconds:.2f} s = {ratio:.1f}x parsing (target <= {TARGET:g}x: {verdict}); "
                  f"CPU {cpu:.2f} s = {cpu / parse_cpu:.1f}x parsing's CPU (a loaded machine moves the wall "
                  f"figures more); peak {peak:.0f} MB ({peak * 2 ** 20 / size:.1f}x the input)")
            short = "memory CLI, 10k-resample CIs" if not extra else "memory CLI --ci-resamples 0"
            emit(f"{short} / parsing, {size / 1e6:.1f} MB",
                 [s / parse for s, _, _ in runs], unit="x", target=f"<= {TARGET:g}x", bound=TARGET,
                 cpu_rounds=[c / parse_cpu for _, _, c in runs],
                 note=f"{rows} rows; parsing {parse:.2f} s (CPU {parse_cpu:.2f} s, median); peak {peak:.0f} MB")
        if args.profile:
            profile(path, out)


if __name__ == "__main__":
    main()
