"""``narrative --workers 2`` against ``--workers 1`` on 400 documents, with a JSON report (issue 21).

Builds 400 GT/prediction pairs in a temporary folder from the real fairytale files (each GT v3
file against itself and the two real predictions against their GT, repeated), runs the CLI
with one and with two workers, alternating, ``--repeat`` rounds, and prints the wall-clock
times, the speed-up (time with 1 worker / time with 2) next to its target (>= 1.7x on two
cores) and whether the two reports are byte-identical.  The machine's other load moves
both sides: the best round of each is printed beside the medians.  No assertion.

    python bench/narrative_workers.py [--data ../shared/data/fairytales] [--docs 400] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit, emit_check  # noqa: E402

TARGET = 1.7


def build_corpus(data: Path, folder: Path, n: int) -> None:
    gts = sorted((data / "gt_v3").glob("*.json"))
    pairs = [(g, g) for g in gts]
    pairs.append((data / "gt_v3" / "CH_002_牛郎织女_v3.json", data / "predictions" / "CH_002_牛郎织女_v3_prediction.json"))
    pairs.append((data / "gt_v3" / "CH_003_孟姜女哭长城_v3.json", data / "predictions" / "CH_003_孟姜女哭长城_prediction.json"))
    (folder / "gt").mkdir()
    (folder / "pred").mkdir()
    for i in range(n):
        g, p = pairs[i % len(pairs)]
        (folder / "gt" / f"S{i:04d}_v3.json").write_bytes(g.read_bytes())
        (folder / "pred" / f"S{i:04d}_prediction.json").write_bytes(p.read_bytes())


def run_cli(folder: Path, workers: int) -> tuple[float, bytes, float]:
    """(wall seconds, the report's bytes, CPU seconds of the command and its workers)."""
    out = folder / f"report_w{workers}.json"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evaluators", "narrative", "--gt", str(folder / "gt"), "--pred",
                             str(folder / "pred"), "--out", str(out), "--quiet", "--workers", str(workers)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"narrative --workers {workers} failed")
    return wall, out.read_bytes(), usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "fairytales"))
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_corpus(Path(args.data), folder, args.docs)
        run_cli(folder, 1)  # warm the file cache and the byte-code
        one, two, ratios, same = [], [], [], True
        cpu1, cpu2 = [], []
        for _ in range(args.repeat):
            t1, b1, c1 = run_cli(folder, 1)
            t2, b2, c2 = run_cli(folder, 2)
            one.append(t1)
            two.append(t2)
            cpu1.append(c1)
            cpu2.append(c2)
            ratios.append(t1 / t2)
            same = same and b1 == b2
        size = len(b1) / 1e6
    print(f"narrative CLI, {args.docs} documents, JSON report {size:.1f} MB, {args.repeat} rounds, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print(f"--workers 1: median {statistics.median(one):.2f} s, best {min(one):.2f} s")
    print(f"--workers 2: median {statistics.median(two):.2f} s, best {min(two):.2f} s")
    print(f"speed-up: {statistics.median(ratios):.2f}x median of rounds, {min(one) / min(two):.2f}x best/best   "
          f"(target >= {TARGET}x)   reports byte-identical: {same}")
    print(f"CPU (user + sys, workers included): --workers 1 median {statistics.median(cpu1):.2f} s, "
          f"--workers 2 median {statistics.median(cpu2):.2f} s")
    emit(f"narrative --workers 2 vs 1, {args.docs} documents (speed-up)", ratios, unit="x", target=f">= {TARGET}x",
         bound=TARGET, better="higher", note=f"JSON report {size:.1f} MB; CPU of the command and its workers: 1 worker "
         f"{statistics.median(cpu1):.2f} s, 2 workers {statistics.median(cpu2):.2f} s")
    emit_check("narrative --workers 2 report identical to 1", same, target="True", met=same)


if __name__ == "__main__":
    main()
