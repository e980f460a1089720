"""The one judge call cache (evaluators/io/judge_calls.py): exactly-once judging across workers and a killed run.

Every endpoint here is a local stub on 127.0.0.1 (tests/helpers/judge_stub.py); no network.  The issue's
10,000 x 200 ms figure and the throughput ratio are in bench/judge_resume.py (docs/performance.md); here 400
judgements at 20 ms.
"""

import subprocess
import threading

import pytest

from evaluators.io import InputError
from evaluators.io.judge_calls import JudgeCallCache, call_key
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient
from evaluators.net import RateLimiter
from tests.helpers.judge_resume import _env, command, run_killed_and_resumed, run_once, write_inputs
from tests.helpers.judge_stub import LatencyJudgeServer


@pytest.mark.timeout(300)
def test_killed_at_half_and_resumed_makes_every_call_once_with_the_labels_of_one_worker(tmp_path):
    n = 400
    items, template = write_inputs(tmp_path, n)
    with LatencyJudgeServer(latency_s=0.0) as ref_server:  # labels do not depend on the latency
        _, one_worker, report = run_once(ref_server, tmp_path, items, template, workers=1, name="one",
                                     timeout_s=120)
    assert len(one_worker) == n and report["cached"] == 0 and ref_server.executions == n
    with LatencyJudgeServer(latency_s=0.02) as server:
        got = run_killed_and_resumed(server, tmp_path, items, template, n, workers=4, name="four",
                                     timeout_s=120)
        # killed halfway: part of the replies were stored, the rest were judged by the resumed run
        assert n // 2 <= got["killed_after"] < n and 0 < got["stored_at_kill"] < n
        assert got["report"]["cached"] == got["stored_at_kill"]
        # exactly n judgements made by the stub in all, one per idempotency key
        assert server.executions == n and len(server.keys) == n
        # the only repeated requests are the calls in flight at the kill (at most one per worker), answered
        # from the stub's idempotency record: requests = n + replays
        assert server.requests == n + server.replays and server.replays <= 4
        assert server.max_in_flight <= 4
    assert got["verdicts"] == one_worker == {f"i{k:05d}": server.label(f"i{k:05d}") for k in range(n)}


@pytest.mark.timeout(300)
def test_two_processes_sharing_the_cache_send_each_call_once(tmp_path):
    n = 200
    items, template = write_inputs(tmp_path, n)
    cache = tmp_path / "shared.sqlite"
    with LatencyJudgeServer(latency_s=0.01) as server:
        procs = [subprocess.Popen(command(server.base_url, items, template, cache, tmp_path / f"out{k}.jsonl", 2),
                                  env=_env(2), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for k in range(2)]
        assert [p.wait(timeout=300) for p in procs] == [0, 0], [p.stderr.read() for p in procs]
        for p in procs:
            p.stderr.close()
        # both processes judged the same items: every call sent once, by one of them (claims), none repeated
        assert server.executions == n and server.requests == n and server.replays == 0
    assert (tmp_path / "out0.jsonl").read_bytes() == (tmp_path / "out1.jsonl").read_bytes()


class _Flaky:
    """A ChatLLM that fails its first ``fail`` calls and counts the calls it answers."""

    model = "flaky"

    def __init__(self, fail=1, delay=0.0):
        self.fail, self.delay, self.calls, self.lock = fail, delay, 0, threading.Lock()

    def complete(self, prompt, *, max_tokens=None):
        import time

        from evaluators.memory.llm import LLMError

        time.sleep(self.delay)
        with self.lock:
            self.calls += 1
            if self.calls <= self.fail:
                raise LLMError("boom", kind="http", status=500)
        return f"reply to {prompt}"


def test_a_failed_call_is_not_stored_and_threads_asking_one_key_send_it_once(tmp_path):
    cache = JudgeCallCache(tmp_path / "c.sqlite")
    ck = call_key("flaky", "T {x}", {"x": "1"}, {"max_tokens": 5})
    llm = _Flaky(fail=1)
    from evaluators.memory.llm import LLMError

    with pytest.raises(LLMError):
        cache.call(llm, "T 1", ck, max_tokens=5)
    assert len(cache) == 0  # nothing stored, the claim dropped: the next call asks again
    assert cache.call(llm, "T 1", ck, max_tokens=5) == ("reply to T 1", False)
    assert cache.call(llm, "T 1", ck, max_tokens=5) == ("reply to T 1", True)
    # eight threads ask for one new key at once: one request, seven waits for its reply
    slow = _Flaky(fail=0, delay=0.1)
    ck2 = call_key("flaky", "T {x}", {"x": "2"}, {"max_tokens": 5})
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.call(slow, "T 2", ck2, max_tokens=5)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert slow.calls == 1 and sorted(c for _, c in got) == [False] + [True] * 7
    cache.close()
    # reopened from its file: the replies are there
    again = JudgeCallCache(tmp_path / "c.sqlite")
    assert again.get(ck.key) == "reply to T 1" and len(again) == 2
    again.close()


def test_not_a_judge_call_cache_is_refused(tmp_path):
    bad = tmp_path / "replies.json"
    bad.write_text('{"format": "evalboard-judgelab-replies", "entries": {}}', encoding="utf-8")
    with pytest.raises(InputError, match="not a judge call cache"):
        JudgeCallCache(bad)


def test_rate_limiter_token_bucket():
    now = [0.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(10.0, burst=2, clock=lambda: now[0], sleep=sleep)
    waits = [limiter.acquire() for _ in range(5)]
    # two tokens at once, then one every 1/10 s
    assert waits[:2] == [0.0, 0.0] and waits[2:] == pytest.approx([0.1, 0.1, 0.1])
    assert now[0] == pytest.approx(0.3)
    assert RateLimiter(None).acquire() == 0.0
    with pytest.raises(ValueError):
        RateLimiter(1.0, burst=0)


def test_the_client_sends_the_cache_key_as_idempotency_key_on_every_retry(tmp_path):
    from tests.helpers.http_servers import FakeJudgeServer

    cache = JudgeCallCache(None)
    with FakeJudgeServer() as server:
        client = OpenAICompatibleClient(LLMConfig(base_url=server.base_url, model="m", max_retries=2, backoff_s=0.0,
                                                  timeout_s=10.0), sleep=lambda s: None)
        prompt = "FLAKY Question: q\n\nCorrect Answer: a\n\nModel Response: a\n\n"
        ck = call_key("m", "{p}", {"p": prompt}, {"max_tokens": 10})
        reply, cached = cache.call(client, prompt, ck, max_tokens=10)
        client.close()
    assert reply == "Yes." and not cached and len(server.headers) == 2  # one 503, one retry
    assert [h.get("Idempotency-Key") for h in server.headers] == [ck.key, ck.key]


def test_the_memory_judge_goes_through_the_same_call_cache(tmp_path):
    from evaluators.memory.judge import batch_judge
    from evaluators.memory.records import EvalResult
    from tests.helpers.http_servers import FakeJudgeServer

    # two result sets with other question ids but the same questions, answers and predictions (中文 and English)
    first = [EvalResult("s", f"q{i}", "multi_session", f"Question {i} 问题?", f"answer {i}", f"it is answer {i}")
             for i in range(6)]
    second = [EvalResult("t", f"other-{i}", "multi_session", r.question, r.ground_truth, r.prediction)
              for i, r in enumerate(first)]
    calls_file = tmp_path / "judge_calls.sqlite"
    with FakeJudgeServer() as server:
        client = OpenAICompatibleClient(LLMConfig(base_url=server.base_url, model="m", timeout_s=10.0))
        calls = JudgeCallCache(calls_file)
        run1 = batch_judge(first, llm=client, calls=calls)
        calls.close()
        assert len(server.requests) == 6 and run1.n_errors == 0 and all(j.score == 1.0 for j in run1.judgements.values())
        # no JSON judgement cache, other ids: every reply comes from the call cache file, no request
        calls = JudgeCallCache(calls_file)
        run2 = batch_judge(second, llm=client, calls=calls)
        assert len(server.requests) == 6 and calls.hits == 6 and calls.calls_sent == 0
        assert [j.score for j in run2.judgements.values()] == [j.score for j in run1.judgements.values()]
        # every request carried its call key as Idempotency-Key
        assert {h.get("Idempotency-Key") for h in server.headers} == set(calls.replies())
        calls.close()
        client.close()


def test_a_folder_is_not_opened_as_a_cache(tmp_path):
    with pytest.raises(InputError, match="cannot open the judge call cache"):
        JudgeCallCache(tmp_path)
