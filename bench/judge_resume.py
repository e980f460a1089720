"""Resumable judging across workers (issue 32): ``judge run`` on 4 worker threads against a local stub judge with
200 ms latency, killed (SIGKILL) at 50% and run again on the same judge call cache (SQLite, WAL).

    python bench/judge_resume.py [--n 10000] [--latency 0.2] [--workers 4] [--baseline-n 1000]

Prints, with the load (``os.getloadavg``) before and after:

- the stub's judgements in all (target: exactly ``--n``), the HTTP requests and the replays (requests of the
  calls in flight at the kill, answered from the stub's ``Idempotency-Key`` record without judging again);
- whether the labels equal one worker's (one worker over all ``--n`` items against the same stub with no
  latency: a label depends on the item only, not on the latency);
- the throughput of the killed-and-resumed run (judgements a second over both processes' wall time, process
  start-up included) over one worker's (``--baseline-n`` items at the same latency; 10,000 at 200 ms on one
  worker would take 33 minutes) (target >= 3.2x).

No assertion: the test (tests/unit/test_judge_calls.py) checks exactly-once and the labels at 400 x 20 ms.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit, emit_check  # noqa: E402
from tests.helpers.judge_resume import run_killed_and_resumed, run_once, write_inputs  # noqa: E402
from tests.helpers.judge_stub import LatencyJudgeServer  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="judgements (default 10,000)")
    ap.add_argument("--latency", type=float, default=0.2, help="stub latency in seconds (default 0.2)")
    ap.add_argument("--workers", type=int, default=4, help="worker threads of the resumed run (default 4)")
    ap.add_argument("--baseline-n", type=int, default=1000, help="judgements of the one-worker timing (default 1,000)")
    args = ap.parse_args(argv)
    print(f"load before: {_load()}  (n={args.n}, latency={args.latency * 1000:.0f} ms, workers={args.workers})",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="judge-resume-") as tmp:
        folder = Path(tmp)
        items, template = write_inputs(folder, args.n)
        base_items, _ = write_inputs(folder / "base", args.baseline_n)
        with LatencyJudgeServer(latency_s=0.0) as ref:
            _, one_worker, _ = run_once(ref, folder, items, template, workers=1, name="labels-one-worker")
        with LatencyJudgeServer(latency_s=args.latency) as base:
            t1, base_verdicts, _ = run_once(base, folder / "base", base_items, template, workers=1, name="one")
        rate1 = args.baseline_n / t1
        print(f"one worker: {args.baseline_n} judgements in {t1:.1f} s = {rate1:.2f}/s (load {_load()})", flush=True)
        with LatencyJudgeServer(latency_s=args.latency) as server:
            got = run_killed_and_resumed(server, folder, items, template, args.n, workers=args.workers, name="four")
        rate4 = args.n / got["seconds"]
        same = got["verdicts"] == one_worker and all(one_worker[i] == v for i, v in base_verdicts.items())
        print(f"{args.workers} workers, killed after {got['killed_after']} judgements ({got['stored_at_kill']} replies "
              f"stored), resumed: {args.n} judgements in {got['seconds']:.1f} s = {rate4:.2f}/s (load {_load()})")
        print(f"stub judgements in all: {server.executions} (target {args.n}); HTTP requests {server.requests} = "
              f"{server.executions} + {server.replays} replay(s) of calls in flight at the kill; "
              f"most in flight {server.max_in_flight}; reused by the resumed run: {got['report']['cached']}")
        print(f"labels identical to one worker: {same}")
        print(f"throughput: {rate4 / rate1:.2f}x one worker (target >= 3.2x)")
        print(f"load after: {_load()}")
        emit(f"judge run {args.n} x {args.latency * 1000:.0f} ms, {args.workers} workers killed+resumed / 1",
             [rate4 / rate1], unit="x", target=">= 3.2x", bound=3.2, better="higher",
             note=f"one worker {rate1:.2f}/s over {args.baseline_n}; resumed run {rate4:.2f}/s")
        emit_check("judge run: stub judgements in all", server.executions, target=f"== {args.n}",
                   met=server.executions == args.n, note=f"{server.replays} replay(s) of calls in flight at the kill")
        emit_check("judge run: labels identical to one worker", same, target="True", met=same)
    return 0 if server.executions == args.n and same else 1


if __name__ == "__main__":
    sys.exit(main())
