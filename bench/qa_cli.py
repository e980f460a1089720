"""QA command-line speed and memory against the official SQuAD v1.1 script (issue 21's QA rows).

    python bench/qa_cli.py [--records 1000000] [--output-records 200000] [--repeat 2] [--repeated]
                           [--keep]

Writes HotpotQA-like JSONL files into a temporary folder (the real rows of
``../shared/data/qa_factcheck/hotpotqa_vatsalp04/DERIVED_seed_format.jsonl``, three systems,
repeated with unique ids, and by default every gold answer and prediction made distinct, so no
(prediction, gold) pair repeats and no memo of repeated pairs flatters the figures (issue 32);
``--repeated`` keeps the real rows' answers as they are, the old default), then times, each in
a fresh process, alternating with the reference in the same run:

- reference: the official SQuAD v1.1 EM / F1 functions (``bench/official_qa_metrics.py``,
  verbatim) over the same JSONL, including ``json.loads`` of every line;
- ``qa --input FILE`` (intervals on, the default) on the large file: time ratio (target
  <= 0.33x the reference) and peak memory (target <= 250 MB);
- ``qa --input FILE --output-file out.json`` and ``out.csv`` on the smaller file: peak memory
  (target <= 3x the input + 150 MB) and time ratio with the report written (target <= 0.33x;
  the json one is issue 32's row: 200k records with varied predictions);
- ``--workers 2`` against ``--workers 1`` with ``--output-file out.json``: speed-up (target
  >= 1.7x on 2 cores) and whether the two files are byte-identical.

Times are wall-clock medians (and CPU seconds, less sensitive to a busy machine); peak
memory is the child's ``ru_maxrss``.  Prints figures next to their targets, then one
``BENCH_JSON`` line a row (ratios of each round: command / reference run next to it); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.benchjson import emit, emit_check  # noqa: E402

REAL = ROOT.parent / "shared" / "data" / "qa_factcheck" / "hotpotqa_vatsalp04" / "DERIVED_seed_format.jsonl"

OFFICIAL = """
import json, sys
sys.path.insert(0, {bench!r})
from official_qa_metrics import exact_match_score, f1_score, metric_max_over_ground_truths
em = f1 = n = 0
with open({path!r}, encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        ground_truths = [r["answer"]]
        em += metric_max_over_ground_truths(exact_match_score, r["final_answer"], ground_truths)
        f1 += metric_max_over_ground_truths(f1_score, r["final_answer"], ground_truths)
        n += 1
print(json.dumps({{"exact_match": 100.0 * em / n, "f1": 100.0 * f1 / n}}))
"""


def write_file(path: Path, n: int, distinct: bool, *, varied: bool = False) -> None:
    """``n`` HotpotQA-like records (the real rows repeated, ids made unique) into ``path``.

    ``distinct``: every gold answer and half the predictions get a token of their own (no (prediction, gold) pair
    repeats; the odd records keep the real rows' right / wrong mix, the even ones are at most partly right).
    ``varied`` (with ``distinct``): every record distinct in every text a run registry keeps, the questions and the
    even records' predictions too (their own token, so the even ones stay partly right or wrong), so no column of
    repeated texts flatters ``qa --log``.
    """
    rows = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            r = dict(rows[i % len(rows)])
            r.pop("reference_em", None)
            r.pop("reference_f1", None)
            r["question_id"] = f"{r['question_id']}-{i}"
            if distinct:  # the same words, plus a token of its own: no pair repeats, EM/F1 stay meaningful
                r["answer"] = f"{r['answer']} n{i}"
                r["final_answer"] = f"{r['final_answer']} n{i}" if i % 2 else r["final_answer"]
                if varied:
                    r["question"] = f"{r['question']} (n{i})"
                    r["final_answer"] = r["final_answer"] if i % 2 else f"{r['final_answer']} m{i}"
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def run(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MB) of a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def official(path: Path) -> list[str]:
    return [sys.executable, "-c", OFFICIAL.format(bench=str(ROOT / "bench"), path=str(path))]


def qa(path: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "evaluators", "qa", "--input", str(path), *extra]


def paired(ref_cmd: list[str], cmd: list[str], repeat: int) -> dict:
    """Medians of the reference and the command, run alternately; ``ratios`` / ``cpu_ratios``: each round's."""
    ref, got = [], []
    for _ in range(repeat):
        ref.append(run(ref_cmd))
        got.append(run(cmd))
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    return {"ref_wall": med(ref, 0), "ref_cpu": med(ref, 1), "wall": med(got, 0), "cpu": med(got, 1),
            "peak": max(x[2] for x in got), "ratios": [g[0] / r[0] for r, g in zip(ref, got)],
            "cpu_ratios": [g[1] / r[1] for r, g in zip(ref, got)], "peaks": [x[2] for x in got]}


def line(label: str, value: str, target: str, ok: bool) -> None:
    print(f"  {label:58s} {value:>22s}   target {target:10s} {'met' if ok else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--output-records", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--repeated", action="store_true",
                    help="keep the real rows' answers (pairs repeat; the old default) instead of distinct pairs")
    ap.add_argument("--distinct", action="store_true", help="no (prediction, gold) pair repeats (the default)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    if not REAL.exists():
        raise SystemExit(f"needs {REAL}")
    tmp = Path(tempfile.mkdtemp(prefix="evalboard-qa-cli-"))
    try:
        big, small = tmp / "big.jsonl", tmp / "small.jsonl"
        distinct = not args.repeated
        write_file(big, args.records, distinct)
        write_file(small, args.output_records, distinct)
        big_mb, small_mb = big.stat().st_size / 2**20, small.stat().st_size / 2**20
        kind = "distinct pairs" if distinct else "real rows repeated"
        print(f"cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {kind}; "
              f"{args.records:,} records ({big_mb:.0f} MiB), {args.output_records:,} records ({small_mb:.0f} MiB)")

        print(f"qa CLI, {args.records:,} records, intervals on")
        r = paired(official(big), qa(big), args.repeat)
        print(f"  reference {r['ref_wall']:.2f} s ({1e6 * r['ref_wall'] / args.records:.1f} us/record), "
              f"qa {r['wall']:.2f} s ({1e6 * r['wall'] / args.records:.1f} us/record)")
        line("time / official (wall; CPU in brackets)", f"{r['wall'] / r['ref_wall']:.2f}x "
             f"({r['cpu'] / r['ref_cpu']:.2f}x)", "<= 0.33x", r["wall"] / r["ref_wall"] <= 0.33)
        line("peak memory", f"{r['peak']:.0f} MB", "<= 250 MB", r["peak"] <= 250)
        rows = [("qa", r["ratios"], "x", "<= 0.33x", 0.33, r["cpu_ratios"], f"{args.records:,} records, {kind}"),
                ("qa peak", r["peaks"], "MB", "<= 250 MB", 250, None, f"{args.records:,} records")]

        print(f"qa --output-file, {args.output_records:,} records")
        for suffix in ("json", "csv"):
            out = tmp / f"out.{suffix}"
            r = paired(official(small), qa(small, "--output-file", str(out)), args.repeat)
            bound = 3 * small_mb + 150
            line(f"{suffix}: peak memory ({out.stat().st_size / 2**20:.0f} MiB written)", f"{r['peak']:.0f} MB",
                 f"<= {bound:.0f} MB", r["peak"] <= bound)
            line(f"{suffix}: time / official (wall; CPU)", f"{r['wall'] / r['ref_wall']:.2f}x "
                 f"({r['cpu'] / r['ref_cpu']:.2f}x)", "<= 0.33x", r["wall"] / r["ref_wall"] <= 0.33)
            rows += [(f"qa --output-file out.{suffix}", r["ratios"], "x", "<= 0.33x", 0.33, r["cpu_ratios"],
                      f"{args.output_records:,} records, {kind}"),
                     (f"qa --output-file out.{suffix} peak", r["peaks"], "MB", f"<= {bound:.0f} MB", bound, None,
                      f"3x the {small_mb:.0f} MiB input + 150 MB")]

        print(f"--workers 2 vs 1, qa --output-file out.json, {args.output_records:,} records")
        one, two = tmp / "one.json", tmp / "two.json"
        r = paired(qa(small, "--output-file", str(one), "--workers", "1"),
                   qa(small, "--output-file", str(two), "--workers", "2"), args.repeat)
        same = one.read_bytes() == two.read_bytes()
        line("speed-up (wall)", f"{r['ref_wall'] / r['wall']:.2f}x", ">= 1.7x", r["ref_wall"] / r["wall"] >= 1.7)
        print(f"  CPU (user + sys, workers included): 1 worker {r['ref_cpu']:.2f} s, 2 workers {r['cpu']:.2f} s")
        line("identical bytes", str(same), "True", same)
        speedups = [1 / x for x in r["ratios"]]
        for what, rounds, unit, target, bound, cpu, note in rows:
            label = f"{what} / official SQuAD script" if unit == "x" else f"{what} memory"
            emit(label, rounds, unit=unit, target=target, bound=bound, cpu_rounds=cpu, note=note)
        emit("qa --workers 2 vs 1, --output-file out.json (speed-up)", speedups, unit="x", target=">= 1.7x",
             bound=1.7, better="higher", note=f"CPU: 1 worker {r['ref_cpu']:.2f} s, 2 workers {r['cpu']:.2f} s")
        emit_check("qa --workers 2 out.json identical to 1", same, target="True", met=same)
    finally:
        if args.keep:
            print(f"files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
