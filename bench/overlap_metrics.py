"""Benchmark: all Chinese overlap metrics of a pair, EvalBoard (tokenize once) vs separate libraries.

Reference, each library called on its own (each re-tokenizes the pair):
  rouge-score RougeScorer(rouge1, rouge2, rougeL) with a jieba tokenizer,
  sacrebleu sentence_bleu(tokenize="zh"), jieba keyword Jaccard, and the CMRC2018 F1
  (``evaluators.metrics.cmrc.cmrc_f1``).
EvalBoard: one ``PairScorer`` for rouge1, rouge2, rougeL, bleu4, keyword_jaccard, token_f1_char
and token_f1_cmrc, each text tokenized once per tokenizer.

Pairs: expected vs predicted replies of the real run in ../shared/data/persona_chat
(falls back to the shipped demo data when absent).  Prints median microseconds per pair
over several repeats and the ratio.  Target on the 2-core dev machine: <= 250 us per pair
(reference measured at 613 us per pair there).

    python bench/overlap_metrics.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.metrics.cmrc import cmrc_f1  # noqa: E402
from evaluators.metrics.registry import PairScorer  # noqa: E402
from evaluators.text.tokenize import TextView, jieba_raw  # noqa: E402

REPORT = ROOT.parent / "shared" / "data" / "persona_chat" / "peppa_structured_evaluation_202510101638_report.json"


def load_pairs() -> tuple[list[tuple[str, str]], str]:
    """(prediction, reference) pairs and where they came from."""
    if REPORT.exists():
        rows = json.loads(REPORT.read_text(encoding="utf-8"))["results"]
        return [(r["prediction"], r["expected_response"]) for r in rows], f"{REPORT.name} ({len(rows)} pairs)"
    from evaluators.demo import demo_path

    data = json.loads(demo_path("dialogue", "panda-chat-small_report.json").read_text(encoding="utf-8"))
    rows = [r for r in data["results"] if r["expected_response"]]
    return [(r["prediction"], r["expected_response"]) for r in rows], f"demo data ({len(rows)} pairs)"


def reference_scorer():
    """The separate-library reference scoring function."""
    import jieba
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU

    class JiebaTokenizer:
        def tokenize(self, text):
            return [t for t in jieba.lcut(text) if t.strip()]

    rouge = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=JiebaTokenizer())
    bleu = BLEU(tokenize="zh", effective_order=True)

    def score(pred: str, ref: str) -> dict:
        out = {k: v.fmeasure for k, v in rouge.score(ref, pred).items()}
        out["bleu"] = bleu.sentence_score(pred, [ref]).score / 100
        kp, kr = set(jieba.lcut(pred)), set(jieba.lcut(ref))
        out["jaccard"] = len(kp & kr) / len(kp | kr) if kp | kr else 1.0
        out["cmrc_f1"] = cmrc_f1(pred, ref)
        return out

    return score


def interleaved(fns: dict, pairs, repeats: int, clock) -> dict[str, list[float]]:
    """Mean microseconds per pair of each function, run in turn (A B A B ...) ``repeats`` times.

    Interleaving keeps a drift in machine load from favouring one side.
    """
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = clock()
            for p, r in pairs:
                fn(p, r)
            out[name].append((clock() - t0) / len(pairs) * 1e6)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    pairs, origin = load_pairs()
    jieba_raw("预热")  # initialise jieba outside the timings
    ref_fn = reference_scorer()
    names = ["rouge1", "rouge2", "rougeL", "bleu4", "keyword_jaccard", "token_f1_char", "token_f1_cmrc"]
    scorer = PairScorer(names)

    def ours(p, r):
        return scorer.score_views(TextView(p), TextView(r))

    for p, r in pairs[:20]:  # warm both paths
        ref_fn(p, r)
        ours(p, r)
    print(f"pairs: {origin}; {args.repeats} interleaved repeats; figures are per-pair means (us/pair)")
    print("reference: rouge-score+jieba, sacrebleu zh, jieba Jaccard, CMRC2018 F1, separately")
    print(f"evalboard: PairScorer({', '.join(names)})")
    for label, clock in (("wall (perf_counter)", time.perf_counter), ("CPU (process_time)", time.process_time)):
        runs = interleaved({"reference": ref_fn, "evalboard": ours}, pairs, args.repeats, clock)
        ref_med, our_med = statistics.median(runs["reference"]), statistics.median(runs["evalboard"])
        ratios = [a / b for a, b in zip(runs["reference"], runs["evalboard"])]
        print(f"{label:20s} reference median {ref_med:6.1f} (min {min(runs['reference']):6.1f}) | "
              f"evalboard median {our_med:6.1f} (min {min(runs['evalboard']):6.1f}) | "
              f"ratio median {statistics.median(ratios):.2f}x | target <= 250 us/pair: "
              f"{'met' if our_med <= 250 else 'NOT met'}")
    print(f"machine load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
          "(timings on a busy machine are inflated)")


if __name__ == "__main__":
    main()
