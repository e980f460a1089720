"""Endpoint faults, the same for both HTTP clients (the judge's LLM client and dialogue live mode).

Every server is a stub on 127.0.0.1 (tests/helpers/http_servers.py) that records what it received;
every request loop is bounded (retries are counted, dripped and huge replies are finite).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import pytest

from evaluators import net
from evaluators.dialogue.live import ChatClient, EndpointConfig, EndpointError
from evaluators.memory.llm import LLMConfig, LLMError, OpenAICompatibleClient
from tests.helpers.http_servers import FakeJudgeServer, ScriptedServer

KEY = "sk-home-secret"


@dataclass
class Client:
    """One of the two clients behind one interface: ``ask(url, retries, timeout)`` returns the reply text."""

    name: str
    ok_body: bytes
    error: type
    build: Callable[..., Callable[[], str]]

    def ask(self, url: str, *, retries: int = 0, timeout: float = 2.0, sleeps: list | None = None) -> str:
        return self.build(url, retries, timeout, (sleeps if sleeps is not None else []).append)()


def _judge(url, retries, timeout, sleep):
    config = LLMConfig(base_url=f"{url}/v1", model="j", api_key=KEY, timeout_s=timeout, max_retries=retries,
                       backoff_s=0.01, max_backoff_s=5.0)
    return lambda: OpenAICompatibleClient(config, sleep=sleep).complete("hi")


def _live(url, retries, timeout, sleep):
    config = EndpointConfig(url, "m", timeout_s=timeout, max_retries=retries, backoff_s=0.01)
    return lambda: ChatClient(config, sleep=sleep).chat("hi")


CLIENTS = [Client("judge", FakeJudgeServer.completion("Yes."), LLMError, _judge),
           Client("live", json.dumps({"response": "Yes."}).encode(), EndpointError, _live)]


@pytest.fixture(params=CLIENTS, ids=lambda c: c.name)
def client(request) -> Client:
    return request.param


def _chat_requests(server) -> list[str]:
    return [p for p, _ in server.log if p.endswith("/chat") or p.endswith("/chat/completions")]


def test_500_then_success_is_retried(client):
    def script(path, raw, headers):
        return (500, b'{"error": "boom"}', {}) if len(server.log) == 1 else (200, client.ok_body, {})

    sleeps: list[float] = []
    with ScriptedServer(script) as server:
        assert client.ask(server.url, retries=2, sleeps=sleeps) == "Yes."
    assert len(_chat_requests(server)) == 2 and sleeps == [0.01]


def test_429_retry_after_is_honoured_up_to_the_cap(client):
    def script(path, raw, headers):
        return (429, b"", {"Retry-After": "3"}) if len(server.log) == 1 else (200, client.ok_body, {})

    sleeps: list[float] = []
    with ScriptedServer(script) as server:
        assert client.ask(server.url, retries=1, sleeps=sleeps) == "Yes."
    assert sleeps == [3.0]  # max(0.01, Retry-After 3), under the cap (judge 5 s, live 30 s)


@pytest.mark.parametrize("body", [b"<html>BODY-SECRET gateway error</html>", b'{"unexpected": "BODY-SECRET"}'])
def test_malformed_reply_is_not_retried_and_not_quoted(client, body):
    with ScriptedServer(lambda p, r, h: (200, body, {})) as server:
        with pytest.raises(client.error) as exc:
            client.ask(server.url, retries=3)
    assert len(server.log) == 1 and "BODY-SECRET" not in str(exc.value)
    if client.error is LLMError:
        assert exc.value.kind == "malformed" and exc.value.attempts == 1


def test_client_error_is_not_retried_and_its_body_not_quoted(client):
    with ScriptedServer(lambda p, r, h: (404, b"BODY-SECRET not here", {})) as server:
        with pytest.raises(client.error) as exc:
            client.ask(server.url, retries=3)
    assert len(server.log) == 1
    assert "HTTP 404 Not Found from 127.0.0.1:" in str(exc.value) and "BODY-SECRET" not in str(exc.value)


def test_slow_reply_times_out_after_each_retry(client):
    def slow(path, raw, headers):
        import time
        time.sleep(0.6)  # the stub's reply is late (the client's timeout is 0.2 s)
        return 200, client.ok_body, {}

    with ScriptedServer(slow) as server:
        with pytest.raises(client.error) as exc:
            client.ask(server.url, retries=1, timeout=0.2)
    assert "timed out" in str(exc.value) and len(server.log) == 2


def test_dripped_reply_is_cut_at_the_attempts_time_limit(client):
    def drip(path, raw, headers):
        import time

        def chunks():  # one byte every 50 ms for up to 5 s: each read is quick, the whole is not
            for _ in range(100):
                time.sleep(0.05)
                yield b" "
        return 200, chunks(), {}

    with ScriptedServer(drip) as server:
        with pytest.raises(client.error) as exc:
            client.ask(server.url, retries=0, timeout=0.2)
    assert "timed out" in str(exc.value) and len(server.log) == 1
    assert server.chunks_sent < 100  # the client hung up long before the server was done


def test_connection_refused_is_a_connection_error(client):
    with ScriptedServer(lambda p, r, h: (200, client.ok_body, {})) as server:
        url = server.url
    with pytest.raises(client.error) as exc:  # closed now: nothing listens on that port
        client.ask(url, retries=1)
    assert "connection error for 127.0.0.1:" in str(exc.value) and "2 attempt" in str(exc.value)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_reply_over_the_cap_is_malformed_and_not_retried(client, monkeypatch, declared):
    monkeypatch.setattr(net, "MAX_REPLY_BYTES", 64 * 1024)
    if declared:
        def script(path, raw, headers):
            return 200, b"x" * (64 * 1024 + 1), {}
    else:
        def script(path, raw, headers):
            return 200, iter([b"x" * 1024] * 200), {}  # 200 KiB without a Content-Length

    with ScriptedServer(script) as server:
        with pytest.raises(client.error) as exc:
            client.ask(server.url, retries=3)
    assert f"over the {64 * 1024}-byte limit" in str(exc.value) and len(server.log) == 1
    if client.error is LLMError:
        assert exc.value.kind == "malformed"


def test_redirect_to_another_port_is_refused_and_nothing_arrives_there(client):
    with ScriptedServer(lambda p, r, h: (200, client.ok_body, {})) as elsewhere:
        target = f"{elsewhere.url}/collect"
        with ScriptedServer(lambda p, r, h: (307, b"", {"Location": target})) as home:
            with pytest.raises(client.error) as exc:
                client.ask(home.url, retries=3)
    assert elsewhere.log == [] and len(home.log) == 1  # not followed, not retried
    assert f"redirect to another host (127.0.0.1:{elsewhere.httpd.server_address[1]}) not followed" in str(exc.value)
    if client.name == "judge":  # the key went to its own host only
        assert home.log[0][1]["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("location", ["file:///etc/passwd", "file:///etc/passwd#", "gopher://127.0.0.1:70/x"])
def test_redirect_to_another_scheme_is_refused(client, location):
    with ScriptedServer(lambda p, r, h: (302, b"", {"Location": location})) as home:
        with pytest.raises(client.error) as exc:
            client.ask(home.url, retries=2)
    assert len(home.log) == 1 and "not followed" in str(exc.value) and "root:" not in str(exc.value)


@pytest.mark.parametrize("url", ["file:///etc/passwd#", "ftp://127.0.0.1/x", "127.0.0.1:8000"])
def test_typed_non_http_url_is_refused_before_any_request(url):
    with pytest.raises(net.URLRejected) as exc:
        ChatClient(EndpointConfig(url, "m"))
    with pytest.raises(ValueError) as exc2:
        LLMConfig.from_env({"EVALBOARD_JUDGE_MODEL": "j"}, base_url=url)
    for e in (exc.value, exc2.value):
        assert "only http:// and https:// URLs are accepted" in str(e) and "root:" not in str(e)


def test_dot_segments_never_take_the_server_key_off_its_path():
    env = {"EVALBOARD_JUDGE_BASE_URL": "http://127.0.0.1:5000/v1", "EVALBOARD_JUDGE_MODEL": "j",
           "EVALBOARD_JUDGE_API_KEY": KEY}
    assert LLMConfig.from_env(env, base_url="http://127.0.0.1:5000/v1/deployments/a").api_key == KEY
    for sneaky in ("http://127.0.0.1:5000/v1/../admin", "http://127.0.0.1:5000/v1/%2e%2e/admin",
                   "http://127.0.0.1:5000/v1/./../x"):
        assert LLMConfig.from_env(env, base_url=sneaky).api_key is None, sneaky


def test_the_reply_cap_comes_from_the_environment_and_a_bad_value_falls_back():
    assert net._reply_cap_from_env({}) == net.DEFAULT_MAX_REPLY_BYTES == 10 * 1024 * 1024
    assert net._reply_cap_from_env({"EVALBOARD_MAX_REPLY_BYTES": "2_000_000"}) == 2_000_000
    for bad in ("10MB", "-5", "0"):
        with pytest.warns(RuntimeWarning, match="EVALBOARD_MAX_REPLY_BYTES"):
            assert net._reply_cap_from_env({"EVALBOARD_MAX_REPLY_BYTES": bad}) == net.DEFAULT_MAX_REPLY_BYTES


def test_retry_after_as_an_http_date_and_a_server_reason_never_shown():
    from email.utils import format_datetime
    from datetime import datetime, timedelta, timezone

    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=120), usegmt=True)
    assert 100 < net._retry_after(later) <= 120
    assert net._retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait
    assert net._retry_after("soon") is None and net._retry_after("7") == 7.0
    assert net._reason(503) == "Service Unavailable" and net._reason(599) == ""


def test_allow_list_entries_with_ipv6_and_ports():
    policy = net.URLPolicy(allowed_hosts=("[::1]:8000", "::2", "localhost"))
    assert policy.check("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert policy.check("http://[::2]:9/v1") and policy.check("http://localhost:1234/")
    for bad in ("http://[::1]:8001/v1", "http://[::3]/", "http://localhost.evil.example/"):
        with pytest.raises(net.URLRejected):
            policy.check(bad)
