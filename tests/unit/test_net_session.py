"""One settings class and one reused HTTP client per endpoint (issue 16).

Both callers (the LLM judge and dialogue live mode) take :class:`evaluators.net.EndpointSettings`
and send every request of a client through one :class:`evaluators.net.Session`: a keep-alive
server sees one TCP connection for many requests (a client per request opened one each).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evaluators import net
from evaluators.dialogue.live import ChatClient, EndpointConfig
from evaluators.memory.llm import LLMConfig, OpenAICompatibleClient


class KeepAliveServer:
    """HTTP/1.1 on 127.0.0.1: counts connections, records Cookie headers, sets a cookie on every reply."""

    def __init__(self):
        self.connections = 0
        self.cookies: list[str | None] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                super().setup()
                outer.connections += 1

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.cookies.append(self.headers.get("Cookie"))
                if self.path.endswith("/chat/completions"):
                    body = {"choices": [{"message": {"content": "Yes."}}]}
                else:
                    body = {"response": "你好 hello"}
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Set-Cookie", "session=abc; Path=/")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_one_settings_class_for_both_endpoints():
    assert LLMConfig is EndpointConfig is net.EndpointSettings
    s = EndpointConfig("http://127.0.0.1:9", "m", 5.0, 1)  # positional: base_url, model, timeout_s, max_retries
    assert (s.timeout_s, s.max_retries, s.backoff_s, s.concurrency) == (5.0, 1, 1.0, 4)
    for bad, message in [({"timeout_s": 0}, "timeout must be > 0"), ({"max_retries": -1}, "retries must be >= 0"),
                         ({"backoff_s": -1}, "backoff must be >= 0"), ({"concurrency": 0}, "concurrency must be >= 1")]:
        with pytest.raises(ValueError, match=message):
            net.EndpointSettings("http://127.0.0.1:9", "m", **bad)
    keyed = net.EndpointSettings("http://127.0.0.1:9", "m", api_key="sk-secret")
    assert "sk-secret" not in repr(keyed) and "sk-secret" not in json.dumps(keyed.to_dict())


def test_the_judge_reuses_one_connection_and_keeps_no_cookie():
    with KeepAliveServer() as srv:
        client = OpenAICompatibleClient(LLMConfig(base_url=f"{srv.url}/v1", model="j", max_retries=0))
        assert [client.complete(f"q{i}") for i in range(5)] == ["Yes."] * 5
        client.close()
    assert srv.connections == 1  # a client per request opened 5
    assert srv.cookies == [None] * 5  # the server's cookie is never sent back


def test_live_mode_reuses_one_connection():
    with KeepAliveServer() as srv:
        client = ChatClient(EndpointConfig(srv.url, "peppa", max_retries=0))
        assert [client.chat("你好") for _ in range(4)] == ["你好 hello"] * 4
        client.reset()
        client.close()
    assert srv.connections == 1 and srv.cookies == [None] * 5
