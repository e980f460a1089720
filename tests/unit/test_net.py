"""The one HTTP layer (evaluators.net): URL rules, the judge key's destination, redirects, reply cap.

Every server is a local stub on 127.0.0.1 (tests/helpers/http_servers.py) recording the
requests and headers it received, so a test can assert what reached which host.
"""

from __future__ import annotations

import pytest

from evaluators import net
from evaluators.dialogue.live import ChatClient, EndpointConfig, EndpointError
from evaluators.memory.llm import LLMConfig, LLMError, OpenAICompatibleClient
from tests.helpers.http_servers import FakeJudgeServer, ScriptedServer

OK_REPLY = FakeJudgeServer.completion("Yes.")


def ok(path, raw, headers):
    return 200, OK_REPLY, {}


@pytest.mark.parametrize("url", ["file:///etc/passwd#", "file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://x:70/",
                                 "127.0.0.1:8000/v1", "//127.0.0.1/v1", "http:///nohost", "http://u:p@127.0.0.1/v1",
                                 "javascript:alert(1)"])
def test_only_http_urls_with_a_host_and_no_credentials(url):
    with pytest.raises(net.URLRejected):
        net.URLPolicy().check(url)
    with pytest.raises(net.HTTPFailure) as exc:
        net.post(url, b"{}", policy=net.URLPolicy())
    assert exc.value.kind == "rejected" and "nothing was sent" in str(exc.value)


def test_file_url_is_never_read_and_never_echoed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-LINE")
    with pytest.raises(net.URLRejected) as exc:
        ChatClient(EndpointConfig(f"file://{secret}#", "m"))
    assert "TOP-SECRET" not in str(exc.value)
    with pytest.raises(LLMError) as exc2:  # a client built past the config check still refuses it
        OpenAICompatibleClient(LLMConfig(base_url=f"file://{secret}#", model="m")).complete("hi")
    assert exc2.value.attempts == 1 and "TOP-SECRET" not in str(exc2.value)


def test_allow_list_from_the_environment():
    env = {"EVALBOARD_ALLOWED_HOSTS": "models.example.org, 127.0.0.1:8000 ,*.corp.example"}
    policy = net.URLPolicy.from_env(env, trusted=["https://judge.internal/v1"])
    assert policy.allowed_hosts == ("models.example.org", "127.0.0.1:8000", "*.corp.example")
    for good in ("https://models.example.org/v1", "http://127.0.0.1:8000/v1", "https://a.corp.example/x",
                 "https://judge.internal/v1", "https://judge.internal/v1/chat/completions"):
        assert policy.check(good) == good
    for bad in ("http://127.0.0.1:9000/v1", "http://169.254.169.254/latest", "https://corp.example/x",
                "https://evilcorp.example.net/", "https://judge.internal/other", "http://localhost:8000/v1"):
        with pytest.raises(net.URLRejected, match="EVALBOARD_ALLOWED_HOSTS"):
            policy.check(bad)
    assert net.URLPolicy.from_env({}).allowed_hosts is None  # unset: every host (local model servers)
    assert net.URLPolicy.from_env({"EVALBOARD_ALLOWED_HOSTS": " , "}).allowed_hosts is None


def test_live_mode_refuses_hosts_outside_the_allow_list(monkeypatch):
    monkeypatch.setenv("EVALBOARD_ALLOWED_HOSTS", "models.example.org")
    with pytest.raises(net.URLRejected):
        ChatClient(EndpointConfig("http://127.0.0.1:1", "m"))


ENV = {"EVALBOARD_JUDGE_BASE_URL": "http://127.0.0.1:5000/v1", "EVALBOARD_JUDGE_MODEL": "judge",
       "EVALBOARD_JUDGE_API_KEY": "sk-server-secret"}


def test_the_environment_key_goes_only_to_the_environment_url():
    assert LLMConfig.from_env(ENV).api_key == "sk-server-secret"
    assert LLMConfig.from_env(ENV, base_url="http://127.0.0.1:5000/v1/").api_key == "sk-server-secret"
    for other in ("http://127.0.0.1:5001/v1", "https://127.0.0.1:5000/v1", "http://localhost:5000/v1",
                  "http://127.0.0.1:5000/v10", "http://evil.example/v1"):
        assert LLMConfig.from_env(ENV, base_url=other).api_key is None, other
    typed = LLMConfig.from_env(ENV, base_url="http://evil.example/v1", api_key="sk-typed")
    assert typed.api_key == "sk-typed"
    openai_env = {"OPENAI_BASE_URL": "http://127.0.0.1:5000/v1", "OPENAI_API_KEY": "sk-o", "EVALBOARD_JUDGE_MODEL": "j"}
    assert LLMConfig.from_env(openai_env, base_url="http://127.0.0.1:6000/v1").api_key is None
    with pytest.raises(ValueError, match="http"):
        LLMConfig.from_env(ENV, base_url="file:///etc/passwd#")
    restricted = dict(ENV, EVALBOARD_ALLOWED_HOSTS="models.example.org")
    assert LLMConfig.from_env(restricted).api_key == "sk-server-secret"  # the server's own URL is always allowed
    with pytest.raises(ValueError, match="EVALBOARD_ALLOWED_HOSTS"):
        LLMConfig.from_env(restricted, base_url="http://127.0.0.1:6000/v1")


def test_typed_url_never_receives_the_server_key():
    with ScriptedServer(ok) as typed:
        env = dict(ENV)  # the environment's judge is elsewhere (port 5000, nothing listens)
        config = LLMConfig.from_env(env, base_url=f"{typed.url}/v1", max_retries=0)
        assert OpenAICompatibleClient(config).complete("hi") == "Yes."
    assert [p for p, _ in typed.log] == ["/v1/chat/completions"]
    assert "Authorization" not in typed.log[0][1] and "authorization" not in typed.log[0][1]


def test_redirect_to_another_host_is_refused_and_the_key_stays_home():
    with ScriptedServer(ok) as elsewhere:
        def redirect(path, raw, headers):
            return 307, b"", {"Location": f"{elsewhere.url}/steal"}

        with ScriptedServer(redirect) as home:
            config = LLMConfig(base_url=f"{home.url}/v1", model="j", api_key="sk-server-secret", max_retries=2)
            with pytest.raises(LLMError) as exc:
                OpenAICompatibleClient(config).complete("hi")
    assert exc.value.kind == "http" and exc.value.status == 307 and exc.value.attempts == 1
    assert f"127.0.0.1:{elsewhere.httpd.server_address[1]}" in str(exc.value)  # names the target host
    assert elsewhere.log == []  # nothing reached the other host
    assert home.log[0][1]["Authorization"] == "Bearer sk-server-secret"


def test_same_origin_redirect_is_followed_with_its_headers_a_few_hops_at_most():
    def script(path, raw, headers):
        if path == "/v1/chat/completions":
            return 308, b"", {"Location": "/v2/chat/completions"}
        return 200, OK_REPLY, {}

    with ScriptedServer(script) as srv:
        config = LLMConfig(base_url=f"{srv.url}/v1", model="j", api_key="k", max_retries=0)
        assert OpenAICompatibleClient(config).complete("hi") == "Yes."
    assert [p for p, _ in srv.log] == ["/v1/chat/completions", "/v2/chat/completions"]
    assert srv.log[1][1]["Authorization"] == "Bearer k"

    with ScriptedServer(lambda p, r, h: (307, b"", {"Location": p + "x"})) as loop:
        with pytest.raises(net.HTTPFailure, match="more than 3 redirects") as exc:
            net.post(f"{loop.url}/a", b"{}")
    assert exc.value.kind == "redirect" and len(loop.log) == net.MAX_REDIRECTS + 1


def test_redirect_to_a_file_url_is_refused():
    with ScriptedServer(lambda p, r, h: (302, b"", {"Location": "file:///etc/passwd"})) as srv:
        with pytest.raises(net.HTTPFailure) as exc:
            net.post(f"{srv.url}/chat", b"{}")
    assert exc.value.kind == "redirect" and "root:" not in str(exc.value)


def test_reply_over_the_cap_is_malformed_and_not_retried():
    big = b"x" * 4096
    with ScriptedServer(lambda p, r, h: (200, big, {})) as srv:
        with pytest.raises(net.HTTPFailure, match="over the 1000-byte limit") as exc:
            net.post(f"{srv.url}/x", b"{}", max_bytes=1000)
        assert exc.value.kind == "too_large" and not exc.value.transient
        assert net.post(f"{srv.url}/x", b"{}", max_bytes=4096) == big  # exactly at the cap is fine


def test_huge_judge_reply_under_the_default_cap_rule():
    huge = b"{" + b" " * (net.MAX_REPLY_BYTES + 10) + b"}"
    with ScriptedServer(lambda p, r, h: (200, huge, {})) as srv:
        client = OpenAICompatibleClient(LLMConfig(base_url=f"{srv.url}/v1", model="j", max_retries=3))
        with pytest.raises(LLMError) as exc:
            client.complete("hi")
    assert exc.value.kind == "malformed" and len(srv.log) == 1


def test_error_messages_never_quote_the_reply_body():
    body = b'{"error": "BODY-SECRET <script>alert(1)</script>"}'
    with ScriptedServer(lambda p, r, h: (403, body, {})) as srv:
        with pytest.raises(LLMError) as exc:
            OpenAICompatibleClient(LLMConfig(base_url=f"{srv.url}/v1", model="j")).complete("hi")
        with pytest.raises(EndpointError) as exc2:
            ChatClient(EndpointConfig(srv.url, "m", max_retries=0)).chat("hi")
    for e in (exc.value, exc2.value):
        assert "HTTP 403" in str(e) and "BODY-SECRET" not in str(e) and "<script>" not in str(e)


def test_retry_after_is_honoured_and_capped():
    calls = []

    def script(path, raw, headers):
        calls.append(path)
        return (429, b"", {"Retry-After": "120"}) if len(calls) == 1 else (200, OK_REPLY, {})

    sleeps: list[float] = []
    with ScriptedServer(script) as srv:
        config = LLMConfig(base_url=f"{srv.url}/v1", model="j", backoff_s=0.5, max_backoff_s=7.0)
        assert OpenAICompatibleClient(config, sleep=sleeps.append).complete("hi") == "Yes."
    assert sleeps == [7.0]  # max(0.5 * 2**0, 120) capped at 7
