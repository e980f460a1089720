"""Shards scored from two checkouts, then merged, against the single-process report (issue 32).

    python bench/shards_merge.py [--records 1000000] [--shards 8] [--narrative-docs 400] [--narrative-shards 4]
                                 [--memory-copies 20] [--memory-shards 4] [--only qa,narrative,memory]

For each task it writes an input in a temporary folder, then, each command in a fresh process:

- the single-process report: ``qa FILE --format json --output-file`` / ``narrative --gt --pred --out
  --format json`` / ``memory FILE --out --format json``;
- shard ``i`` of ``N`` (``--shard i/N``, 1-based), the odd shards run from this checkout and the even ones from a
  second checkout of the same commit (``git worktree add --detach``, removed at the end), as two machines
  would;
- ``merge SHARD_FILE...`` into one report.

It prints, per task, the wall and CPU seconds of the single run, of the shards (sum and slowest) and of the
merge, the load before and after, and whether the merged report is **byte-identical** to the single-process
one (else the first differing offset with some context). The QA records are HotpotQA-like with distinct
answers (``bench/qa_cli.py``'s generator), the narrative pairs the real fairy tales repeated
(``bench/narrative_workers.py``'s corpus), the memory rows mem0's real LoCoMo predictions repeated
(``bench/memory_cli.py``'s input). Asserts nothing; exit 1 when a merged report differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"

from bench.benchjson import emit_check  # noqa: E402


def run(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``python -m evaluators ...`` run from the checkout ``cwd``."""
    env = dict(os.environ, PYTHONPATH=str(cwd))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evaluators", *cmd], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({cwd}): {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def first_difference(a: Path, b: Path) -> str | None:
    """``None`` when the two files have the same bytes, else where they first differ."""
    with a.open("rb") as fa, b.open("rb") as fb:
        offset = 0
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x == y:
                if not x:
                    return None
                offset += len(x)
                continue
            i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            return (f"first difference at byte {offset + i}: single {x[max(0, i - 60):i + 60]!r} / merged "
                    f"{y[max(0, i - 60):i + 60]!r}")


def one_task(name: str, single: list[str], shard: "callable", n: int, out: Path, checkouts: list[Path]) -> bool:
    """Single run, N shards alternating between the checkouts, merge; prints the figures; True when equal."""
    load0 = os.getloadavg()[0]
    w1, c1 = run(single, ROOT)
    shard_files, walls, cpus = [], [], []
    for i in range(n):
        target = out / f"{name}_shard_{i}.json"
        w, c = run(shard(i, n, target), checkouts[i % len(checkouts)])
        shard_files.append(str(target))
        walls.append(w)
        cpus.append(c)
    merged = out / f"{name}_merged.json"
    wm, cm = run(["merge", *shard_files, "--output-file", str(merged), "--format", "json"], ROOT)
    load1 = os.getloadavg()[0]
    diff = first_difference(out / f"{name}_single.json", merged)
    print(f"{name}: single {w1:.1f} s wall / {c1:.1f} s CPU; {n} shards from {len(checkouts)} checkouts: "
          f"sum {sum(cpus):.1f} s CPU, slowest {max(walls):.1f} s wall; merge {wm:.1f} s wall / {cm:.1f} s CPU; "
          f"load {load0:.1f} -> {load1:.1f}")
    print(f"  merged report {'byte-identical to the single-process one' if diff is None else 'DIFFERS: ' + diff}"
          f" ({merged.stat().st_size / 1e6:.1f} MB)")
    emit_check(f"shards: {name}, {n} shards from {len(checkouts)} checkouts merged", "byte-identical" if diff is None
               else "differs", target="the single-process report, byte for byte", met=diff is None,
               note=f"single {c1:.1f} s CPU, shards {sum(cpus):.1f} s CPU in all, merge {cm:.1f} s CPU")
    return diff is None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000, help="QA records")
    ap.add_argument("--shards", type=int, default=8, help="QA shards")
    ap.add_argument("--narrative-docs", type=int, default=400)
    ap.add_argument("--narrative-shards", type=int, default=4)
    ap.add_argument("--memory-copies", type=int, default=20, help="copies of mem0's 1,540 LoCoMo rows")
    ap.add_argument("--memory-shards", type=int, default=4)
    ap.add_argument("--only", default="qa,narrative,memory")
    args = ap.parse_args()
    tasks = {t.strip() for t in args.only.split(",") if t.strip()}
    ok = True
    with tempfile.TemporaryDirectory(prefix="evalboard-shards-") as tmp:
        tmp = Path(tmp)
        other = tmp / "second_checkout"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), "HEAD"], check=True)
        checkouts = [ROOT, other]
        print(f"checkouts: {ROOT} and {other} (commit "
              f"{subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()})")
        try:
            if "qa" in tasks:
                from qa_cli import write_file

                path = tmp / "qa.jsonl"
                write_file(path, args.records, distinct=True)
                print(f"qa: {args.records:,} records, {path.stat().st_size / 1e6:.0f} MB")
                ok &= one_task("qa", ["qa", str(path), "--format", "json", "--output-file", str(tmp / "qa_single.json")],
                               lambda i, n, t: ["qa", str(path), "--shard", f"{i + 1}/{n}", "--output-file", str(t)],
                               args.shards, tmp, checkouts)
            if "narrative" in tasks:
                from narrative_workers import build_corpus

                folder = tmp / "narrative"
                folder.mkdir()
                build_corpus(DATA / "fairytales", folder, args.narrative_docs)
                io = ["--gt", str(folder / "gt"), "--pred", str(folder / "pred"), "--quiet"]
                print(f"narrative: {args.narrative_docs} document pairs")
                ok &= one_task("narrative", ["narrative", *io, "--format", "json", "--out",
                                             str(tmp / "narrative_single.json")],
                               lambda i, n, t: ["narrative", *io, "--shard", f"{i + 1}/{n}", "--out", str(t)],
                               args.narrative_shards, tmp, checkouts)
            if "memory" in tasks:
                from memory_cli import write_input

                path = tmp / "memory.jsonl"
                rows, source = write_input(path, args.memory_copies)
                print(f"memory: {rows:,} rows ({source})")
                ok &= one_task("memory", ["memory", str(path), "--format", "json", "--out",
                                          str(tmp / "memory_single.json")],
                               lambda i, n, t: ["memory", str(path), "--shard", f"{i + 1}/{n}", "--out", str(t)],
                               args.memory_shards, tmp, checkouts)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
