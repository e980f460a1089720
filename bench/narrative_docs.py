"""Narrative scoring speed on the real fairytale pairs: documents per second and ratio to JSON parsing.

Target (README of the project): <= 2 ms per document and <= 3x the time json.loads takes on the
same files.  Run from the project root:

    python bench/narrative_docs.py [--data ../shared/data/fairytales] [--repeat 20]

Every GT v3 file is scored against itself, plus the two real predictions against their GT
(30 pairs).  Prints the median over repeats of the per-document time of full scoring (decode,
parse, validate, align, score, report-ready results) and of json.loads of the same bytes.
No assertion: the numbers are for the team to read.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchjson import emit  # noqa: E402
from evaluators.narrative import NarrativeEvaluator  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "fairytales"))
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    data = Path(args.data)
    pairs = [(f.read_bytes(), f.read_bytes()) for f in sorted((data / "gt_v3").glob("*.json"))]
    pairs.append(((data / "gt_v3" / "CH_002_牛郎织女_v3.json").read_bytes(),
                  (data / "predictions" / "CH_002_牛郎织女_v3_prediction.json").read_bytes()))
    pairs.append(((data / "gt_v3" / "CH_003_孟姜女哭长城_v3.json").read_bytes(),
                  (data / "predictions" / "CH_003_孟姜女哭长城_prediction.json").read_bytes()))
    evaluator = NarrativeEvaluator()

    def score_all():
        for gt, pred in pairs:
            evaluator.evaluate(pred, gt)

    def parse_all():
        for gt, pred in pairs:
            json.loads(gt)
            json.loads(pred)

    score_all()
    parse_all()
    gc.collect()
    # Alternate the two and take the ratio round by round, so that a machine whose speed
    # drifts (shared cores) moves both sides of each ratio together.
    t_score, t_parse, ratios = [], [], []
    c_score, c_parse = [], []  # CPU seconds of this process (less moved by other jobs than the wall clock)
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        parse_all()
        p = (time.perf_counter() - t0) / len(pairs)
        c_parse.append(time.process_time() - c0)
        t0, c0 = time.perf_counter(), time.process_time()
        score_all()
        s = (time.perf_counter() - t0) / len(pairs)
        c_score.append(time.process_time() - c0)
        t_score.append(s)
        t_parse.append(p)
        ratios.append(s / p)
    s, p = statistics.median(t_score), statistics.median(t_parse)
    print(f"pairs: {len(pairs)} (GT v3 identity + 2 real predictions), rounds: {args.repeat}")
    print(f"scoring:  {s * 1e3:.3f} ms/doc median  ({1 / s:,.0f} documents/s)")
    print(f"json.loads of the same files: {p * 1e3:.3f} ms/doc median")
    print(f"ratio scoring / parsing: {statistics.median(ratios):.2f}x median of rounds "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f}); best/best {min(t_score) / min(t_parse):.2f}x   "
          "(targets: <= 2 ms/doc, <= 3x)")
    print(f"CPU time: ratio {sum(c_score) / sum(c_parse):.2f}x over all rounds, {min(c_score) / min(c_parse):.2f}x "
          f"best/best (load {os.getloadavg()[0]:.1f})")
    emit("narrative scoring / json.loads, same documents", ratios, unit="x", target="<= 3x", bound=3.0,
         cpu_rounds=[a / b for a, b in zip(c_score, c_parse)], note=f"{len(pairs)} pairs a round; {s * 1e3:.3f} ms/doc")
    emit("narrative scoring, ms a document", [x * 1e3 for x in t_score], unit="ms", target="<= 2 ms", bound=2.0)


if __name__ == "__main__":
    main()
