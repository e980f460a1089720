"""Peak memory of the client of ``qa --scheduler`` on a large file, against the in-process run (issue 32).

    python bench/dask_qa.py [--records 200000] [--workers 2] [--output-file] [--keep]

Writes HotpotQA-like JSONL records with distinct answers (``bench/qa_cli.py``'s generator, ``--distinct``),
starts a Dask ``LocalCluster`` of ``--workers`` processes (1 thread each, no dashboard port) in this
process, then runs, each in a fresh process:

- ``qa FILE`` (the table; intervals on, the default) in process: wall, CPU and peak memory;
- the same with ``--scheduler ADDRESS``: the client's wall, CPU and peak memory (the client has no
  child process: its ``ru_maxrss`` is its own; the scheduler and the workers live elsewhere), and
  each worker's peak memory;
- with ``--output-file``, both write ``out.json`` and the two files are compared byte for byte; and
  ``qa FILE --shard i/2 --output-file`` twice, then ``merge`` of the two shard files: the merged report
  is compared byte for byte with the in-process one.

Then one ``BENCH_JSON`` line a row (``bench/run_all.py``'s summary).

Prints the load (``os.getloadavg``) before and after; asserts nothing.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit, emit_check  # noqa: E402
from qa_cli import write_file  # noqa: E402


def run(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes (1 thread each)")
    ap.add_argument("--output-file", action="store_true", help="also write out.json both ways and compare them")
    ap.add_argument("--keep", action="store_true", help="keep the generated file (printed)")
    args = ap.parse_args()

    from distributed import Client, LocalCluster

    from evaluators.parallel import local_cluster_options

    folder = Path(tempfile.mkdtemp(prefix="evalboard-dask-bench-"))
    path = folder / "big.jsonl"
    write_file(path, args.records, distinct=True)
    print(f"{args.records:,} HotpotQA-like records (distinct pairs), {path.stat().st_size / 1e6:.0f} MB; "
          f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    qa = [sys.executable, "-m", "evaluators", "qa", str(path)]
    here = run(qa)
    print(f"  in process            wall {here[0]:6.1f} s  CPU {here[1]:6.1f} s  peak {here[2]:6.0f} MB")
    with LocalCluster(**local_cluster_options(args.workers)) as cluster, Client(cluster) as client:
        client.wait_for_workers(args.workers)
        there = run([*qa, "--scheduler", cluster.scheduler_address])
        workers = client.run(_peak_mb)
        print(f"  --scheduler (client)  wall {there[0]:6.1f} s  CPU {there[1]:6.1f} s  peak {there[2]:6.0f} MB   "
              f"({args.workers} workers, peak {', '.join(f'{v:.0f}' for v in workers.values())} MB each)")
        if args.output_file:
            a, b = folder / "here.json", folder / "there.json"
            w1 = run([*qa, "--output-file", str(a)])
            w2 = run([*qa, "--output-file", str(b), "--scheduler", cluster.scheduler_address])
            print(f"  --output-file in process peak {w1[2]:.0f} MB ({w1[0]:.1f} s); on Dask client peak "
                  f"{w2[2]:.0f} MB ({w2[0]:.1f} s); identical: {filecmp.cmp(a, b, shallow=False)}")
            dask_same = filecmp.cmp(a, b, shallow=False)
            shards = [folder / f"shard{i}.json" for i in (1, 2)]
            for i, shard in enumerate(shards, 1):
                run([*qa, "--shard", f"{i}/2", "--output-file", str(shard)])
            merged = folder / "merged.json"
            run([sys.executable, "-m", "evaluators", "merge", *map(str, shards), "--output-file", str(merged)])
            shards_same = filecmp.cmp(a, merged, shallow=False)
            print(f"  2 shards (--shard i/2) merged: identical to in process: {shards_same}")
    emit(f"qa --scheduler client peak, {args.records:,} records", [there[2]], unit="MB", target="<= 300 MB", bound=300,
         note=f"in process {here[2]:.0f} MB; workers {', '.join(f'{v:.0f}' for v in workers.values())} MB"
              + ("" if args.records >= 1_000_000 else "; the issue's target is at 1M records"))
    if args.output_file:
        emit_check("qa --scheduler out.json identical to in process", dask_same, target="True", met=dask_same)
        emit_check("qa 2 shards merged identical to in process", shards_same, target="True", met=shards_same)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.keep:
        print(f"kept {folder}")
    else:
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
