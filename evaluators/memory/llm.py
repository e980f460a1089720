"""A small client for any OpenAI-compatible chat-completions endpoint (the judge's LLM).

Works with OpenAI, vLLM, llama.cpp's server, Ollama's ``/v1`` and the like: it POSTs
``{base_url}/chat/completions`` with ``model``, ``messages``, ``temperature`` (0 by
default) and ``max_tokens``, and reads ``choices[0].message.content``.

Configuration comes from the environment (:meth:`LLMConfig.from_env`):

====================================  =====================================================
``EVALBOARD_JUDGE_BASE_URL``          e.g. ``http://127.0.0.1:8000/v1`` (falls back to
                                      ``OPENAI_BASE_URL``)
``EVALBOARD_JUDGE_MODEL``             the model name sent in each request
``EVALBOARD_JUDGE_API_KEY``           sent as ``Authorization: Bearer``; optional (falls back
                                      to ``OPENAI_API_KEY``); never written anywhere
``EVALBOARD_JUDGE_TIMEOUT``           seconds per request (default 60)
``EVALBOARD_JUDGE_MAX_RETRIES``       retries after the first try (default 3)
``EVALBOARD_JUDGE_CONCURRENCY``       requests in flight at once (default 4)
====================================  =====================================================

The key of the environment is sent only to the base URL of the environment; a base URL
given in the page or on the command line gets only a key given with it (see
:mod:`evaluators.net` for every rule on URLs, redirects and reply sizes).

Transient failures (timeouts, connection errors, HTTP 408/409/429/5xx) are retried with
exponential backoff (``backoff_s * 2**attempt``, capped, honouring ``Retry-After``);
other HTTP errors, refused redirects, replies over the size cap and malformed bodies are
not retried.  Requests go through :mod:`evaluators.net` (httpx, tenacity).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Protocol

from evaluators import net
from evaluators.io.readers import loads_json_line
from evaluators.net import RETRY_STATUS, EndpointSettings, HTTPFailure, URLPolicy  # noqa: F401 - re-exported


class LLMError(RuntimeError):
    """The endpoint could not give a reply (after retries where they apply).

    Attributes
    ----------
    kind : str
        ``"timeout"``, ``"connection"``, ``"http"`` (with ``status``; also a refused redirect
        or a URL that may not be contacted) or ``"malformed"`` (the body was not a
        chat-completions response, or was over the reply size cap).
    status : int or None
        HTTP status for ``kind="http"``.
    attempts : int
        Requests made.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, attempts: int = 1):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.attempts = attempts


class ChatLLM(Protocol):
    """What the judge needs from an LLM: one prompt in, the reply text out.

    ``complete`` raises :class:`LLMError` when no reply can be had; ``model`` names the
    model for the judge cache.
    """

    model: str

    def complete(self, prompt: str, *, max_tokens: int | None = None) -> str:  # pragma: no cover - protocol
        ...


#: The judge endpoint's settings: :class:`evaluators.net.EndpointSettings` (one class for every endpoint;
#: ``LLMConfig.from_env`` reads the variables of the module docstring).
LLMConfig = EndpointSettings


def parse_chat_completion(body: bytes) -> str:
    """The reply text of a chat-completions response body.

    Parameters
    ----------
    body : bytes
        The HTTP response body of an OpenAI-compatible ``/chat/completions`` call.

    Returns
    -------
    str
        ``choices[0].message.content``.

    Raises
    ------
    LLMError
        ``kind="malformed"`` when the body is not JSON or has no
        ``choices[0].message.content`` string.
    """
    try:
        data = loads_json_line(body.decode("utf-8"))
        content = data["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, ValueError) as exc:  # not UTF-8, not JSON, nested too deeply
        raise LLMError(f"malformed response: not JSON ({exc})", kind="malformed") from exc
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError("malformed response: no choices[0].message.content", kind="malformed") from exc
    if not isinstance(content, str):
        raise LLMError("malformed response: message content is not text", kind="malformed")
    return content


class OpenAICompatibleClient:
    """Thread-safe client for an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    config : EndpointSettings (``LLMConfig``)
    sleep : callable, optional
        Used between retries (tests pass a recorder).

    Notes
    -----
    A semaphore of ``config.concurrency`` bounds the requests in flight, however many
    threads call :meth:`complete`.  ``requests_made`` counts HTTP requests sent.  Requests go
    through one :class:`evaluators.net.Session`: connections are kept alive between them.
    """

    def __init__(self, config: EndpointSettings, *, sleep=time.sleep):
        self.config = config
        self.model = config.model
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._session = net.Session(config)  # one client, connections kept alive between requests
        self.requests_made = 0

    def close(self) -> None:
        """Close the kept-alive connections."""
        self._session.close()

    @property
    def url(self) -> str:
        """The chat-completions URL."""
        return self.config.base_url.rstrip("/") + "/chat/completions"

    #: :meth:`complete` takes ``idempotency_key`` (sent as the ``Idempotency-Key`` header of every attempt).
    accepts_idempotency_key = True

    def _post(self, payload: bytes, idempotency_key: str | None = None) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        with self._lock:
            self.requests_made += 1
        with self._slots:
            return self._session.post(self.url, payload, headers=headers)

    def complete(self, prompt: str, *, max_tokens: int | None = None, idempotency_key: str | None = None) -> str:
        """Send one user message and return the reply text.

        Parameters
        ----------
        prompt : str
            The user message.
        max_tokens : int, optional
            Reply length limit sent to the endpoint.
        idempotency_key : str, optional
            Sent as ``Idempotency-Key`` with every attempt (retries, and a resumed run's request of a call
            whose reply was lost): an endpoint that honours it answers a repeated key from its record instead
            of running the model again (the judge call cache passes its content key).

        Returns
        -------
        str
            ``choices[0].message.content``.

        Raises
        ------
        LLMError
            After the retries for transient failures, at once for other HTTP errors
            (``kind="http"``) and malformed bodies (``kind="malformed"``).
        """
        body = {"model": self.config.model, "messages": [{"role": "user", "content": prompt}],
                "temperature": self.config.temperature, "n": 1}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempts = 0

        def post() -> bytes:
            nonlocal attempts
            attempts += 1
            return self._post(payload, idempotency_key)

        try:
            raw = net.retrying(post, max_retries=self.config.max_retries, backoff_s=self.config.backoff_s,
                               max_backoff_s=self.config.max_backoff_s, sleep=self._sleep)
        except HTTPFailure as exc:
            kind = {"too_large": "malformed", "redirect": "http", "rejected": "http"}.get(exc.kind, exc.kind)
            message = str(exc) + (f" (gave up after {attempts} attempts)" if exc.transient and attempts > 1 else "")
            raise LLMError(message, kind=kind, status=exc.status, attempts=max(attempts, 1)) from exc
        try:
            return parse_chat_completion(raw)
        except LLMError as exc:
            exc.attempts = attempts
            raise
