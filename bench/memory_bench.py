"""Benchmark: long-term-memory scoring and the judge's concurrency and cache.

1. ``compute_metrics`` (default metrics) and LoCoMo parity on mem0's 1,540 real LoCoMo
   predictions (``../shared/data/long_memory``; the shipped demo when absent): median
   seconds over repeats and microseconds per question.
2. ``batch_judge`` against a local OpenAI-compatible server on 127.0.0.1 that answers each
   request after a fixed delay (standing in for a remote LLM): wall time for N questions at
   concurrency 1, 4 and 8, then the rerun served entirely from the cache (requests sent: 0).

    python bench/memory_bench.py [--repeats 5] [--questions 64] [--delay-ms 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluators.demo import demo_path  # noqa: E402
from evaluators.memory.judge import batch_judge  # noqa: E402
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient  # noqa: E402
from evaluators.memory.loaders import load_locomo, load_mem0_locomo, load_results_file  # noqa: E402
from evaluators.memory.locomo_parity import locomo_parity  # noqa: E402
from evaluators.memory.metrics import compute_metrics  # noqa: E402
from evaluators.memory.records import EvalResult  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "long_memory"


def load_results() -> tuple[list[EvalResult], str]:
    """mem0's real predictions, or the demo results when the shared data is absent."""
    if (DATA / "locomo_predictions_mem0" / "results.json").exists():
        dataset = load_locomo(DATA / "locomo" / "locomo10.json")
        return load_mem0_locomo(DATA / "locomo_predictions_mem0" / "results.json", dataset=dataset).results, \
            "mem0 LoCoMo predictions (1,540)"
    data = demo_path("memory", "demo_results.jsonl").read_bytes()
    return load_results_file(data, "demo_results.jsonl").results, "demo results (25)"


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class SlowServer:
    """Chat-completions endpoint replying ``{"score": 1.0, ...}`` after ``delay_s``."""

    def __init__(self, delay_s: float):
        self.count = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.count += 1
                time.sleep(delay_s)
                body = json.dumps({"choices": [{"message": {"role": "assistant",
                                                            "content": '{"score": 1.0, "reasoning": "ok"}'}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    args = parser.parse_args()

    results, source = load_results()
    n = len(results)
    print(f"scoring: {source}")
    compute_metrics(results[:5])  # load the registry once
    t = median_seconds(lambda: compute_metrics(results), args.repeats)
    print(f"  compute_metrics (default metrics): median {t:.3f} s = {t / n * 1e6:.0f} us per question")
    t = median_seconds(lambda: locomo_parity(results), args.repeats)
    print(f"  locomo_parity:                      median {t:.3f} s = {t / n * 1e6:.0f} us per question")

    questions = [EvalResult("s", f"q{i}", "single_hop", f"Question {i}?", "answer", f"answer {i}")
                 for i in range(args.questions)]
    server = SlowServer(args.delay_ms / 1000)
    print(f"judge: {args.questions} questions, endpoint latency {args.delay_ms:g} ms per request")
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 4, 8):
            client = OpenAICompatibleClient(LLMConfig(base_url=server.url, model="bench", concurrency=concurrency))
            cache = Path(tmp) / f"cache-{concurrency}.json"
            start = time.perf_counter()
            run = batch_judge(questions, llm=client, cache_path=cache)
            wall = time.perf_counter() - start
            print(f"  concurrency {concurrency}: {wall:.2f} s wall ({run.n_judged} judged, "
                  f"speed-up {args.questions * args.delay_ms / 1000 / wall:.1f}x over one request at a time)")
        before = server.count
        start = time.perf_counter()
        run = batch_judge(questions, llm=client, cache_path=cache)
        wall = time.perf_counter() - start
        print(f"  rerun from the cache: {wall * 1000:.1f} ms, {run.n_cached} cached, "
              f"{server.count - before} requests sent")
    server.httpd.shutdown()


if __name__ == "__main__":
    main()
