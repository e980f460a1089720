"""``judge run`` as a real process against :class:`~tests.helpers.judge_stub.LatencyJudgeServer`: once, or killed
(SIGKILL) when the stub has made a share of the judgements and run again on the same judge call cache.

Used by tests/unit/test_judge_calls.py (small counts) and bench/judge_resume.py (10,000 x 200 ms).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = "VERSION: resume\n[item {question}] Is the answer right?\nReference: {reference}\nAnswer: {answer}\n\nyes or no?"


def write_inputs(folder: Path, n: int) -> tuple[Path, Path]:
    """``n`` items (ids ``i00000``...) and the template, written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    items, template = folder / "items.jsonl", folder / "template.txt"
    with items.open("w", encoding="utf-8") as fh:
        for k in range(n):
            fh.write(json.dumps({"item_id": f"i{k:05d}", "question": f"i{k:05d}", "reference": f"参考 {k % 7}",
                                 "answer": f"answer {k} 答案"}, ensure_ascii=False) + "\n")
    template.write_text(TEMPLATE, encoding="utf-8")
    return items, template


def command(base_url: str, items: Path, template: Path, cache: Path, out: Path, workers: int) -> list[str]:
    """The ``judge run`` command line."""
    return [sys.executable, "-m", "evaluators", "judge", "run", "--items", str(items), "--template", str(template),
            "--base-url", base_url, "--model", "stub-judge", "--cache", str(cache), "--out", str(out),
            "--workers", str(workers), "--format", "json"]


def _env(workers: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALBOARD_JUDGE_", "OPENAI_"))}
    env["EVALBOARD_JUDGE_CONCURRENCY"] = str(max(1, workers))  # the client's own bound: one request per worker
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def verdicts(out: Path) -> dict[str, int]:
    """``item_id -> verdict`` of a verdicts file written by ``judge run``."""
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["item_id"]: r["verdict"] for r in rows}


def run_once(server, folder: Path, items: Path, template: Path, workers: int, name: str,
             timeout_s: float = 3600) -> tuple[float, dict[str, int], dict]:
    """One ``judge run`` to the end on a fresh cache: (seconds, verdicts, its JSON report)."""
    cache, out = folder / f"{name}.sqlite", folder / f"{name}.jsonl"
    t0 = time.perf_counter()
    done = subprocess.run(command(server.base_url, items, template, cache, out, workers), env=_env(workers),
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    seconds = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(f"judge run exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, verdicts(out), json.loads(done.stdout)


def run_killed_and_resumed(server, folder: Path, items: Path, template: Path, n: int, workers: int, name: str,
                           kill_at: float = 0.5, timeout_s: float = 3600) -> dict:
    """``judge run`` killed with SIGKILL once the stub has made ``kill_at * n`` judgements, then run again on the
    same cache to the end.

    Returns
    -------
    dict
        ``seconds`` (both runs' wall time, the pause between them left out), ``killed_after`` (stub judgements
        made when the kill was sent), ``stored_at_kill`` (replies in the cache after the kill), ``verdicts``,
        ``report`` (the resumed run's JSON report).
    """
    from evaluators.io.judge_calls import JudgeCallCache

    cache, out = folder / f"{name}.sqlite", folder / f"{name}.jsonl"
    cmd = command(server.base_url, items, template, cache, out, workers)
    start = server.executions
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=_env(workers), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout_s
    while server.executions - start < kill_at * n:
        if proc.poll() is not None:
            raise RuntimeError(f"judge run ended before the kill (exit {proc.returncode}): "
                               f"{proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise TimeoutError("the run did not reach the kill point")
        time.sleep(0.002)
    killed_after = server.executions - start
    proc.send_signal(signal.SIGKILL)
    proc.wait()  # reaped: its pid is gone, so its claims are a dead worker's
    proc.stderr.close()
    first = time.perf_counter() - t0
    probe = JudgeCallCache(cache)
    stored = len(probe)
    probe.close()
    t1 = time.perf_counter()
    done = subprocess.run(cmd, env=_env(workers), cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    second = time.perf_counter() - t1
    if done.returncode:
        raise RuntimeError(f"resumed judge run exited {done.returncode}: {done.stderr[-2000:]}")
    return {"seconds": first + second, "killed_after": killed_after, "stored_at_kill": stored,
            "verdicts": verdicts(out), "report": json.loads(done.stdout)}
