"""Benchmark: EvalBoard's EM/F1 against the official algorithms, on real answers.

English: SQuAD v1.1 EM + F1 on 100,000 (prediction, gold) pairs built from the HotpotQA
predictions of three systems (../shared/data/qa_factcheck/hotpotqa_vatsalp04): each real
pair, and each prediction against another question's gold answer.

Chinese: CMRC 2018 EM + F1 on 10,000 pairs from the CMRC 2018 dev set
(../shared/data/qa_factcheck/cmrc2018/cmrc2018_dev.json): the first annotator's answer
against all three, a context window around the answer, and a random context slice.

The official algorithms are the reference copies in ``bench/official_qa_metrics.py``.
Every value is compared (parity must be exact); timings are the median of several
passes over all pairs, with EvalBoard's caches cleared before each pass.  Prints figures,
asserts no time.

Usage: ``python bench/qa_em_f1.py [--repeat 5] [--data ../shared/data]``
Targets (2-core machine): English <= 10 us/pair, Chinese <= 40 us/pair.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import official_qa_metrics as official  # noqa: E402

from evaluators.metrics import cmrc, squad  # noqa: E402


def english_pairs(data: Path, n: int = 100_000) -> list[tuple[str, list[str]]]:
    rows = [json.loads(line) for line in (data / "qa_factcheck/hotpotqa_vatsalp04/DERIVED_seed_format.jsonl")
            .read_text(encoding="utf-8").splitlines() if line.strip()]
    m = len(rows)
    pairs = []
    for k in range(n):
        i = k % m
        rnd = k // m
        j = i if rnd % 2 == 0 else (i * 31 + rnd) % m
        pairs.append((rows[i]["final_answer"], [rows[j]["answer"]]))
    return pairs


def chinese_pairs(data: Path, n: int = 10_000, seed: int = 0) -> list[tuple[str, list[str]]]:
    doc = json.loads((data / "qa_factcheck/cmrc2018/cmrc2018_dev.json").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    questions = []
    for article in doc["data"]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                questions.append((para["context"], qa))
    pairs: list[tuple[str, list[str]]] = []
    k = 0
    while len(pairs) < n:
        ctx, qa = questions[(k // 3) % len(questions)]
        answers = [a["text"] for a in qa["answers"]]
        start, text = qa["answers"][0]["answer_start"], qa["answers"][0]["text"]
        kind = k % 3
        if kind == 0:
            pred = answers[0]
        elif kind == 1:
            pred = ctx[max(0, start - rng.randint(0, 8)): start + len(text) + rng.randint(0, 8)]
        else:
            pred = ctx[max(0, start + rng.randint(-20, 20)):][: rng.randint(1, 40)]
        pairs.append((pred, answers))
        k += 1
    return pairs


def time_pass(fn, pairs, before=None) -> tuple[float, float, list]:
    """(wall seconds, CPU seconds, results) of one pass over all pairs."""
    if before is not None:
        before()
    w0, c0 = time.perf_counter(), time.process_time()
    out = [fn(p, g) for p, g in pairs]
    return time.perf_counter() - w0, time.process_time() - c0, out


def _line(label: str, times: list[float], n: int) -> str:
    us = [t / n * 1e6 for t in times]
    return f"  {label:<16} {statistics.median(us):9.2f} us/pair  (min {min(us):.2f}, max {max(us):.2f})"


def bench(name: str, pairs, ours, ref, repeat: int, clear=None) -> None:
    """Alternate official and EvalBoard passes; print wall and CPU medians, the ratio and parity."""
    ref_wall, ref_cpu, our_wall, our_cpu, ratios = [], [], [], [], []
    ref_out = our_out = None
    for _ in range(repeat):
        w, c, ref_out = time_pass(ref, pairs)
        ref_wall.append(w)
        ref_cpu.append(c)
        w2, c2, our_out = time_pass(ours, pairs, clear)
        our_wall.append(w2)
        our_cpu.append(c2)
        ratios.append(c / c2)
    mismatches = sum(1 for a, b in zip(our_out, ref_out) if (float(a[0]), float(a[1])) != (float(b[0]), float(b[1])))
    n = len(pairs)
    em = sum(float(a[0]) for a in our_out) / n
    f1 = sum(float(a[1]) for a in our_out) / n
    print(f"{name}: {n} pairs, {repeat} alternating passes each (median, min, max)")
    print(_line("official wall", ref_wall, n))
    print(_line("evalboard wall", our_wall, n))
    print(_line("official CPU", ref_cpu, n))
    print(_line("evalboard CPU", our_cpu, n))
    print(f"  speed-up (CPU, pass by pass): median {statistics.median(ratios):.2f}x "
          f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    print(f"  parity    {n - mismatches}/{n} identical (EM {100 * em:.3f}, F1 {100 * f1:.3f})")
    if mismatches:
        print(f"  !! {mismatches} pairs differ")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--english", type=int, default=100_000, help="number of English pairs")
    ap.add_argument("--chinese", type=int, default=10_000, help="number of Chinese pairs")
    args = ap.parse_args()
    if not (args.data / "qa_factcheck").exists():
        print(f"real data not found under {args.data}", file=sys.stderr)
        return 2
    # Warm up imports (NLTK) outside the timed passes.
    official.cmrc_pair("a b", ["a"])
    cmrc.cmrc_scores("a (b)", ["a"])
    bench("English SQuAD v1.1 EM+F1 (HotpotQA answers)", english_pairs(args.data, args.english),
          squad.squad_scores, official.squad_pair, args.repeat)
    bench("Chinese CMRC 2018 EM+F1 (CMRC 2018 dev)", chinese_pairs(args.data, args.chinese),
          cmrc.cmrc_scores, official.cmrc_pair, args.repeat, clear=cmrc._nltk_tokens.cache_clear)
    print("targets: English <= 10 us/pair, Chinese <= 40 us/pair (CPU time is the steadier figure on a shared machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
