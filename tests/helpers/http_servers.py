"""Local HTTP servers on 127.0.0.1 standing in for the endpoints EvalBoard calls.

:class:`RecordingServer` is the common base: a threaded server on a free port, run in a
daemon thread while the ``with`` block lasts, answering every POST with :meth:`respond`.
:class:`ChatServer` is a persona-chat endpoint (``/chat``, ``/reset``);
:class:`FakeJudgeServer` an OpenAI-compatible ``/v1/chat/completions`` judge.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordingServer:
    """A threaded HTTP server on 127.0.0.1; subclasses answer POSTs in :meth:`respond`.

    ``respond(path, raw_body, headers)`` returns ``(status, payload, extra_headers)``; a
    payload that is not ``bytes`` is sent as JSON, except an iterator of ``bytes`` chunks,
    which is streamed chunk by chunk without a ``Content-Length`` (the reply ends when the
    connection closes) and stops as soon as the client hangs up.  Replies are
    ``application/json``.  ``chunks_sent`` counts the streamed chunks written.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.chunks_sent = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, payload, extra = outer.respond(self.path, raw, dict(self.headers))
                if isinstance(payload, Iterator):
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.end_headers()
                    try:
                        for chunk in payload:
                            self.wfile.write(chunk)
                            self.wfile.flush()
                            with outer._lock:
                                outer.chunks_sent += 1
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client stopped reading (cap or time limit)
                    self.close_connection = True
                    return
                if not isinstance(payload, bytes):
                    payload = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # a short poll interval: shutdown() on leaving the block waits up to one interval
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def respond(self, path: str, raw: bytes, headers: dict) -> tuple[int, object, dict]:  # pragma: no cover
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class ChatServer(RecordingServer):
    """A persona server recording every request in ``log`` as ``(path, body)``.

    behaviour: "ok" (echo), "slow" (sleeps ``delay`` before answering), "fail" (HTTP 500),
    "flaky" (503 on the first call of each message, then ok), "bad_json" (no 'response' key),
    "fail_one" (HTTP 500 for the message "再见" only).
    """

    def __init__(self, behaviour: str = "ok", delay: float = 0.5):
        super().__init__()
        self.behaviour, self.delay = behaviour, delay
        self.log: list[tuple[str, dict | None]] = []
        self.seen: set[str] = set()

    def respond(self, path, raw, headers):
        body = json.loads(raw or b"null")
        self.log.append((path, body))
        if path == "/reset":
            return 200, {"status": "ok"}, {}
        if self.behaviour == "slow":
            time.sleep(self.delay)
        if self.behaviour == "fail":
            return 500, {"error": "boom"}, {}
        if self.behaviour == "flaky" and body["message"] not in self.seen:
            self.seen.add(body["message"])
            return 503, {"error": "busy"}, {}
        if self.behaviour == "bad_json":
            return 200, {"text": "no response key"}, {}
        if self.behaviour == "fail_one" and body["message"] == "再见":
            return 500, {"error": "boom"}, {}
        return 200, {"response": f"{body['message']}呀 ({body['model_config_name']})"}, {}

    def paths(self) -> list[str]:
        return [p for p, _ in self.log]


class FakeJudgeServer(RecordingServer):
    """An OpenAI-compatible judge endpoint recording every request (``requests``, ``headers``).

    It judges like a strict grader (yes when the correct answer appears in the model
    response) and misbehaves on request: prompts mentioning MALFORMED get a broken reply,
    SLOW ones a late reply (after ``slow_s`` seconds or when ``release`` is set, whichever
    comes first; leaving the ``with`` block sets it), FAIL ones HTTP 500, FLAKY ones one 503
    before a good reply.  ``delay_s`` delays every reply; ``status_override`` answers every request
    with that status; ``max_in_flight`` is the most requests answered at once.

    ``in_flight`` counts requests between their arrival and the moment their reply is ready,
    decremented *before* the reply is written: a client holding a slot until it has read the
    reply can never be seen with more requests in flight than it allows.  ``gather`` (> 1)
    holds the first requests (at most ``gather_timeout_s`` seconds) until that many are in
    flight at once, so a test of a concurrency limit sees the limit reached without relying
    on timing.
    """

    def __init__(self, slow_s: float = 1.0):
        super().__init__()
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.slow_s = slow_s
        self.release = threading.Event()
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0
        self.seen_flaky: set[str] = set()
        self.status_override: int | None = None
        self.gather = 0
        self.gather_timeout_s = 10.0
        self._gathered = threading.Condition(self._lock)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @staticmethod
    def completion(content: str) -> bytes:
        return json.dumps({"id": "x", "object": "chat.completion",
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                        "finish_reason": "stop"}]}, ensure_ascii=False).encode("utf-8")

    @staticmethod
    def verdict(prompt: str) -> bool:
        answer = re.search(r"(?:Correct Answer|Rubric|Explanation): (.*?)\n\n", prompt, re.S).group(1)
        response = re.search(r"Model Response: (.*?)\n\n", prompt, re.S).group(1)
        return answer.strip().lower() in response.lower()

    def respond(self, path, raw, headers):
        body = json.loads(raw)
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._gathered.notify_all()
            if self.gather > 1:  # bounded: a client that never sends that many at once fails its assertion
                self._gathered.wait_for(lambda: self.max_in_flight >= self.gather, timeout=self.gather_timeout_s)
        try:
            return self.judge(path, body)
        finally:
            with self._lock:
                self.in_flight -= 1  # before the reply is written (the caller writes it after this returns)

    def judge(self, path: str, body: dict) -> tuple[int, bytes, dict]:
        if path != "/v1/chat/completions":
            return 404, b'{"error": "not found"}', {}
        if self.status_override is not None:
            return self.status_override, b'{"error": "overridden"}', {}
        prompt = body["messages"][0]["content"]
        if self.delay_s:
            time.sleep(self.delay_s)
        if "FAIL" in prompt:
            return 500, b'{"error": "internal"}', {}
        if "SLOW" in prompt:
            self.release.wait(self.slow_s)
        if "FLAKY" in prompt:
            with self._lock:
                first = prompt not in self.seen_flaky
                self.seen_flaky.add(prompt)
            if first:
                return 503, b'{"error": "busy"}', {"Retry-After": "0"}
        if "MALFORMED-BODY" in prompt:
            return 200, b"<html>gateway error</html>", {}
        if "MALFORMED" in prompt:
            return 200, self.completion("I think it is fine, roughly 7 out of 10."), {}
        ok = self.verdict(prompt)
        if '"score"' in prompt:  # continuous mode
            reply = json.dumps({"score": 1.0 if ok else 0.0, "reasoning": "answer present" if ok else "answer absent"})
            return 200, self.completion(f"```json\n{reply}\n```"), {}
        return 200, self.completion("Yes." if ok else "No."), {}

    def __exit__(self, *exc):
        self.release.set()  # held SLOW replies end now
        super().__exit__(*exc)


class ScriptedServer(RecordingServer):
    """Answers every POST with ``script(path, body, headers)`` and records ``(path, headers)`` in ``log``.

    ``script`` returns ``(status, payload, extra_headers)`` as :meth:`RecordingServer.respond`.
    """

    def __init__(self, script) -> None:
        super().__init__()
        self.script = script
        self.log: list[tuple[str, dict]] = []

    def respond(self, path, raw, headers):
        with self._lock:
            self.log.append((path, headers))
        return self.script(path, raw, headers)
