"""Score a large QA / fact-check JSONL file on a local Dask cluster, with EvalBoard's per-record function.

    pip install -r examples/requirements.txt
    python examples/dask_qa.py --input evaluators/demo/qa/qa_systems_demo.jsonl --workers 2

What it does, and why the numbers equal ``python -m evaluators qa`` on the same file:

1. The task (QA or fact-check) and the group field are decided once, on a sample of the file,
   by the engine's own rules (``detect_task``, ``pick_group_field``): every partition must score
   with the same settings.
2. ``dask.bag.read_text`` cuts the file into partitions (lines stay whole); each partition is
   parsed and scored line by line by :func:`evaluators.qa.evaluate.score_record` — the function
   behind every EvalBoard report — and reduced to per-group *sums* (count, EM sum, F1 sum).
3. The sums are added up in the client and divided once.  Means of sums are exact whatever the
   partitioning (up to floating-point addition order, well below 1e-12 here); the example checks
   them against the in-process report and exits 1 if they differ.

Confidence intervals need the per-record scores: collect the EM / F1 columns (8 bytes a record)
and call :func:`evaluators.metrics.statistics.bootstrap_ci` on them in the client (see
docs/scaling.md).  For Ray, the same two functions run inside ``ray.data.Dataset.map_batches``.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing the package

from evaluators.io.readers import loads_json_line  # noqa: E402
from evaluators.qa.evaluate import (  # noqa: E402
    STATUS_MISSING_PREDICTION, STATUS_SCORED, QAConfig, detect_task, evaluate_qa_file, pick_group_field, score_record,
)

COUNTED = (STATUS_SCORED, STATUS_MISSING_PREDICTION)


def partition_sums(lines, task: str, config: QAConfig, group_field: str | None) -> list[dict]:
    """Score one partition's lines; returns ``[{group: [n, em_sum, f1_sum]}]`` (one dict, None = overall)."""
    sums: dict = {}
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            data = loads_json_line(line.encode("utf-8"))
        except ValueError:
            continue  # the in-process report lists bad lines; here they are skipped alike
        if not isinstance(data, dict):
            continue
        r = score_record(data, task, config, group_field, index=k)
        if r.status not in COUNTED:
            continue
        for key in (None, r.group) if group_field and r.group is not None else (None,):
            s = sums.setdefault(key, [0, 0.0, 0.0])
            s[0] += 1
            s[1] += r.exact_match
            s[2] += r.token_f1
    return [sums]


def merge(a: dict, b: dict) -> dict:
    """Add two partitions' sums."""
    out = {k: list(v) for k, v in a.items()}
    for k, (n, em, f1) in b.items():
        s = out.setdefault(k, [0, 0.0, 0.0])
        s[0] += n
        s[1] += em
        s[2] += f1
    return out


def cluster_ports(dashboard: str | None = None) -> dict:
    """``LocalCluster`` keywords that open no port the user did not ask for.

    ``dashboard_address=None`` does not turn the scheduler's web server off: distributed
    (``Scheduler.__init__`` -> ``ServerNode.start_http_server``) then listens on its default
    port, 127.0.0.1:8787 (``dashboard_address or default_port``), which another cluster or a
    service of the user may hold.  The server always starts (it also serves ``/health``), so
    it is bound to the loopback interface on a port the system picks (``127.0.0.1:0``) with
    the dashboard's pages off (``dashboard=False``); the scheduler and the workers talk on
    loopback ports the system picks too (LocalCluster's ``host`` defaults to 127.0.0.1).
    With ``dashboard="HOST:PORT"`` the dashboard is served there.
    """
    if dashboard:
        return {"dashboard_address": dashboard, "scheduler_kwargs": {"dashboard": True}}
    return {"dashboard_address": "127.0.0.1:0", "scheduler_kwargs": {"dashboard": False}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True, help="a JSONL file of QA / fact-check records")
    p.add_argument("--workers", type=int, default=2, help="local Dask worker processes")
    p.add_argument("--blocksize", default="1MiB", help="bytes per partition (default 1MiB)")
    p.add_argument("--sample", type=int, default=1000, help="records the task and group field are decided on")
    p.add_argument("--dashboard", metavar="HOST:PORT",
                   help="serve Dask's dashboard there (needs bokeh); default: no dashboard, no fixed port")
    args = p.parse_args(argv)

    import dask.bag as db
    from dask.distributed import Client, LocalCluster

    config = QAConfig(ci_resamples=0)
    with open(args.input, encoding="utf-8-sig") as f:
        head = [json.loads(line) for line in islice(f, args.sample) if line.strip()]
    task, reason = detect_task(head, config.dataset, config.gt_fields)
    group_field = pick_group_field(head, config.group_field)
    print(f"task: {task} ({reason}); group field: {group_field or '-'}")

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, **cluster_ports(args.dashboard))
    with cluster, Client(cluster) as client:
        bag = db.read_text(args.input, blocksize=args.blocksize)
        print(f"{bag.npartitions} partition(s) on {len(client.scheduler_info()['workers'])} worker(s)")
        parts = bag.map_partitions(partition_sums, task, config, group_field)
        totals = parts.fold(merge, merge, initial={}).compute()

    reference = evaluate_qa_file(args.input, config)
    expected = {None: reference.overall, **reference.by_group}
    worst = 0.0
    for key in sorted(totals, key=lambda k: (k is not None, str(k))):
        n, em, f1 = totals[key]
        ref = expected[key]
        worst = max(worst, abs(em / n - ref.exact_match), abs(f1 / n - ref.token_f1), abs(n - ref.n))
        name = "overall" if key is None else f"{group_field}={key}"
        print(f"{name:30s} n={n:>8,}  EM={em / n:.6f}  F1={f1 / n:.6f}   (in process: EM={ref.exact_match:.6f} "
              f"F1={ref.token_f1:.6f})")
    print(f"largest difference from the in-process report: {worst:.2e} over {len(totals)} aggregate(s)")
    return 0 if worst < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
