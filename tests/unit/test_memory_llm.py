"""The judge's LLM client and batch judging against a real HTTP server on 127.0.0.1.

`FakeJudgeServer` (tests/helpers/http_servers.py) is an OpenAI-compatible
/v1/chat/completions endpoint that judges like a strict grader (yes when the correct
answer appears in the model response) and misbehaves on request: questions mentioning
MALFORMED get a broken body, SLOW ones a late reply, FAIL ones HTTP 500, FLAKY ones one
503 before a good reply.
"""

from __future__ import annotations

import json

import pytest

from evaluators.memory.judge import batch_judge, judge_answer
from evaluators.memory.llm import LLMConfig, LLMError, OpenAICompatibleClient
from evaluators.memory.records import EvalResult
from tests.helpers.http_servers import FakeJudgeServer


@pytest.fixture
def server():
    with FakeJudgeServer() as s:
        yield s


def client_for(server, **kw) -> OpenAICompatibleClient:
    sleeps: list[float] = []
    config = LLMConfig(base_url=server.base_url, model="judge-test", **{"timeout_s": 2.0, "max_retries": 2,
                                                                         "backoff_s": 0.01, **kw})
    client = OpenAICompatibleClient(config, sleep=sleeps.append)
    client.sleeps = sleeps
    return client


def test_valid_reply_and_the_request_sent(server):
    client = client_for(server, api_key="sk-test")
    reply = client.complete("Question: q\n\nCorrect Answer: Paris\n\nModel Response: It is Paris.\n\n", max_tokens=10)
    assert reply == "Yes."
    body = server.requests[0]
    assert body["model"] == "judge-test" and body["temperature"] == 0.0 and body["max_tokens"] == 10
    assert body["messages"] == [{"role": "user", "content": body["messages"][0]["content"]}]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert "sk-test" not in repr(client.config)  # the key is never shown


def test_malformed_body_is_not_retried(server):
    client = client_for(server)
    with pytest.raises(LLMError) as exc:
        client.complete("Correct Answer: a\n\nModel Response: MALFORMED-BODY\n\n")
    assert exc.value.kind == "malformed" and exc.value.attempts == 1
    assert len(server.requests) == 1


def test_slow_reply_times_out_after_the_retries(server):
    client = client_for(server, timeout_s=0.2, max_retries=1)
    with pytest.raises(LLMError) as exc:
        client.complete("Correct Answer: a\n\nModel Response: SLOW\n\n")
    assert exc.value.kind == "timeout" and exc.value.attempts == 2
    assert client.sleeps == [0.01]  # one backoff between the two attempts


def test_failing_endpoint_retries_with_exponential_backoff(server):
    client = client_for(server, max_retries=3, backoff_s=0.05)
    with pytest.raises(LLMError) as exc:
        client.complete("Correct Answer: a\n\nModel Response: FAIL\n\n")
    assert exc.value.kind == "http" and exc.value.status == 500 and exc.value.attempts == 4
    assert client.sleeps == [0.05, 0.1, 0.2]  # backoff_s * 2**attempt
    assert len(server.requests) == 4


def test_transient_503_then_success(server):
    client = client_for(server)
    assert client.complete("Correct Answer: rome\n\nModel Response: FLAKY Rome\n\n") == "Yes."
    assert len(server.requests) == 2 and len(client.sleeps) == 1


def test_client_errors_are_not_retried(server):
    server.status_override = 401
    client = client_for(server)
    with pytest.raises(LLMError) as exc:
        client.complete("anything")
    assert exc.value.status == 401 and len(server.requests) == 1 and client.sleeps == []


def test_unreachable_endpoint_is_a_connection_error():
    with FakeJudgeServer() as s:
        url = s.base_url
    client = OpenAICompatibleClient(LLMConfig(base_url=url, model="m", timeout_s=0.5, max_retries=1, backoff_s=0.0),
                                    sleep=lambda s: None)
    with pytest.raises(LLMError) as exc:
        client.complete("x")
    assert exc.value.kind == "connection" and exc.value.attempts == 2


def test_config_from_environment():
    env = {"EVALBOARD_JUDGE_BASE_URL": "http://127.0.0.1:9/v1/", "EVALBOARD_JUDGE_MODEL": "qwen",
           "EVALBOARD_JUDGE_TIMEOUT": "5", "EVALBOARD_JUDGE_CONCURRENCY": "2", "OPENAI_API_KEY": "k"}
    config = LLMConfig.from_env(env)
    assert (config.base_url, config.model, config.timeout_s, config.concurrency, config.api_key) == (
        "http://127.0.0.1:9/v1", "qwen", 5.0, 2, "k")
    assert LLMConfig.from_env({"EVALBOARD_JUDGE_MODEL": "qwen"}) is None  # no endpoint: judge unavailable
    with pytest.raises(ValueError, match="EVALBOARD_JUDGE_TIMEOUT"):
        LLMConfig.from_env({**env, "EVALBOARD_JUDGE_TIMEOUT": "soon"})


def test_judge_answer_over_http_in_each_mode(server):
    client = client_for(server)
    cont = judge_answer("小明的猫叫什么？", "咪咪", "它叫咪咪", llm=client, mode="continuous")
    assert (cont.score, cont.reasoning, cont.error) == (1.0, "answer present", None)
    wrong = judge_answer("When did she move?", "7 May 2023", "In June", llm=client, mode="temporal_reasoning")
    assert (wrong.score, wrong.reasoning) == (0.0, "No.")
    assert server.requests[-1]["max_tokens"] == 10  # LongMemEval's setting for yes/no
    malformed = judge_answer("Q MALFORMED", "a", "a", llm=client, mode="continuous")
    assert malformed.score is None and malformed.error.startswith("malformed reply: no JSON object")
    failed = judge_answer("Q FAIL", "a", "a", llm=client, mode="default_binary")
    assert failed.score is None and failed.error.startswith("request failed: HTTP 500")


def test_batch_judge_records_errors_per_question_and_reuses_the_cache(server, tmp_path):
    results = [
        EvalResult("s", "q1", "single_hop", "Where did Bob move from?", "New York", "He moved from New York."),
        EvalResult("s", "q2", "knowledge_update", "最新的城市？", "东京", "他现在住在东京"),
        EvalResult("s", "q3", "temporal", "When MALFORMED?", "2020", "2020"),
        EvalResult("s", "q4", "multi_session", "How many SLOW?", "3", "3"),
        EvalResult("s", "q5", "single_session_user", "FAIL?", "x", "x"),
        EvalResult("s", "q6", "adversarial", "What did Alice adopt?", "Not mentioned in the conversation",
                   "Not mentioned."),
        EvalResult("s", "q7", "single_session_preference", "FLAKY recommend a hotel", "likes quiet places",
                   "A hotel for someone who likes quiet places"),
    ]
    # q4 (SLOW) is held by the server until released, so it times out whatever the load; every other
    # reply gets 1 s per read.  (With 0.3 s, ordinary replies timed out twice in a row when the test's
    # server and 4 client threads shared a loaded machine: about 1 run in 3.)
    server.slow_s = 60.0
    client = client_for(server, timeout_s=1.0, max_retries=1)
    cache_path = tmp_path / "cache.json"
    progress: list[tuple[int, int]] = []
    run = batch_judge(results, llm=client, cache_path=cache_path, progress=lambda d, t: progress.append((d, t)))
    j = run.judgements
    assert [j[q].score for q in ("q1", "q2", "q3", "q4", "q5", "q6", "q7")] == [1.0, 1.0, None, None, None, 1.0, 1.0]
    assert [j[q].mode for q in ("q1", "q2", "q6", "q7")] == ["continuous", "knowledge_update", "adversarial",
                                                             "preference"]
    assert j["q3"].error.startswith("malformed reply")
    assert j["q4"].error.startswith("request failed: timed out")
    assert j["q5"].error.startswith("request failed: HTTP 500")
    assert (run.n_total, run.n_cached, run.n_judged, run.n_errors) == (7, 0, 7, 3)
    assert progress[0] == (0, 7) and progress[-1] == (7, 7)
    saved = json.loads(cache_path.read_text(encoding="utf-8"))
    assert set(saved["entries"]) == {f"q{i}" for i in range(1, 8)}
    assert saved["entries"]["q2"]["reasoning"] == "Yes."

    # Second run: the 4 good judgements come from the cache; only the 3 failed ones are asked again.
    n_before = len(server.requests)
    server.release.set()  # SLOW questions are answered at once now
    again = batch_judge(results, llm=client, cache_path=cache_path)
    assert (again.n_cached, again.n_judged) == (4, 3)
    asked = [r["messages"][0]["content"] for r in server.requests[n_before:]]
    assert len([a for a in asked if "MALFORMED" in a or "SLOW" in a]) == 2  # q3, q4 asked again
    assert again.judgements["q4"].score == 1.0

    # Third run: q5 still fails (HTTP 500 every time); every other question is now cached and
    # complete, so judging them again sends not a single request.
    assert again.judgements["q5"].score is None and again.judgements["q3"].score is None
    n_before = len(server.requests)
    done = [x for x in results if x.question_id not in ("q3", "q5")]
    third = batch_judge(done, llm=client, cache_path=cache_path)
    assert len(server.requests) == n_before  # no second call
    assert (third.n_cached, third.n_judged) == (5, 0)
    # ... and without any LLM at all
    assert batch_judge(done, llm=None, cache_path=cache_path).scores() == {q: 1.0 for q in third.judgements}


def test_changed_prediction_invalidates_only_that_entry(server, tmp_path):
    a = EvalResult("s", "a", "single_hop", "Q1", "Paris", "Paris")
    b = EvalResult("s", "b", "single_hop", "Q2", "Rome", "Milan")
    client = client_for(server)
    path = tmp_path / "c.json"
    batch_judge([a, b], llm=client, cache_path=path)
    n = len(server.requests)
    rerun = batch_judge([a, b.with_prediction("Rome")], llm=client, cache_path=path)
    assert len(server.requests) == n + 1
    assert rerun.judgements["b"].score == 1.0 and rerun.n_cached == 1


def test_concurrency_limit_holds_across_threads(server):
    # The server counts a request in flight until its reply is ready (decremented before writing it)
    # and holds the first requests until two are in flight together: the maximum it sees is exactly
    # the client's limit, whatever the scheduling (a third request would have to pass the semaphore).
    server.delay_s = 0.1
    server.gather = 2
    client = client_for(server, concurrency=2)
    results = [EvalResult("s", f"q{i}", "single_hop", f"Q{i}", "a", "a") for i in range(6)]
    run = batch_judge(results, llm=client, max_workers=6)
    assert run.n_errors == 0 and len(server.requests) == 6 and client.requests_made == 6
    assert server.max_in_flight == 2  # 6 threads, at most 2 requests at once


def test_concurrency_of_one_is_strictly_sequential(server):
    server.delay_s = 0.05
    client = client_for(server, concurrency=1)
    results = [EvalResult("s", f"q{i}", "single_hop", f"Q{i}", "a", "a") for i in range(4)]
    run = batch_judge(results, llm=client, max_workers=4)
    assert run.n_errors == 0 and client.requests_made == 4 and server.max_in_flight == 1
