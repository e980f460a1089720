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
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from evaluators import net
from evaluators.io.readers import loads_json_line
from evaluators.net import RETRY_STATUS, HTTPFailure, URLPolicy  # noqa: F401 - RETRY_STATUS re-exported


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


@dataclass(frozen=True)
class LLMConfig:
    """Settings of :class:`OpenAICompatibleClient`.

    Attributes
    ----------
    base_url : str
        Endpoint root, up to and including ``/v1`` (``/chat/completions`` is appended).
    model : str
        Model name sent with every request.
    api_key : str or None
        Bearer token; ``None`` for local servers that need none.  Not shown by ``repr``.
        :meth:`from_env` gives the environment's key only to the environment's base URL.
    timeout_s : float
        Seconds to wait for one request (connect + read), > 0.
    max_retries : int
        Retries after the first attempt for transient failures (>= 0).
    backoff_s : float
        First retry delay in seconds; doubles each retry.
    max_backoff_s : float
        Upper bound of one delay (also caps ``Retry-After``).
    concurrency : int
        Requests in flight at once across threads (>= 1).
    temperature : float
        Sampling temperature (0 for a deterministic judge).
    policy : evaluators.net.URLPolicy
        Which URLs may be contacted (:meth:`from_env` reads ``EVALBOARD_ALLOWED_HOSTS`` and
        trusts the environment's base URL).
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    concurrency: int = 4
    temperature: float = 0.0
    policy: URLPolicy = field(default_factory=URLPolicy)

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (f"LLMConfig(base_url={self.base_url!r}, model={self.model!r}, api_key=<{key}>, "
                f"timeout_s={self.timeout_s}, max_retries={self.max_retries}, concurrency={self.concurrency})")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> LLMConfig | None:
        """Read the configuration from the environment (see the module docstring).

        Returns
        -------
        LLMConfig or None
            ``None`` when no base URL or no model is configured (the judge is then
            unavailable; cached judgements can still be used).

        Raises
        ------
        ValueError
            When a numeric variable does not parse; :class:`evaluators.net.URLRejected` (a
            ``ValueError``) when the base URL may not be contacted (not http/https, or outside
            ``EVALBOARD_ALLOWED_HOSTS``).

        Notes
        -----
        ``EVALBOARD_JUDGE_API_KEY`` (or ``OPENAI_API_KEY``) is used only when the base URL is
        the environment's ``EVALBOARD_JUDGE_BASE_URL`` (or ``OPENAI_BASE_URL``) or below it;
        another ``base_url`` gets the ``api_key`` override alone.
        """
        env = os.environ if env is None else env
        env_base = env.get("EVALBOARD_JUDGE_BASE_URL") or env.get("OPENAI_BASE_URL")
        base = overrides.pop("base_url", None) or env_base
        model = overrides.pop("model", None) or env.get("EVALBOARD_JUDGE_MODEL")
        if not base or not model:
            return None
        policy = URLPolicy.from_env(env, trusted=[env_base] if env_base else [])
        policy.check(base)
        key = overrides.pop("api_key", None)
        if not key and env_base and net.is_under(base.rstrip("/"), env_base.rstrip("/")):
            key = env.get("EVALBOARD_JUDGE_API_KEY") or env.get("OPENAI_API_KEY")
        numbers = {}
        for name, var, cast in (("timeout_s", "EVALBOARD_JUDGE_TIMEOUT", float),
                                ("max_retries", "EVALBOARD_JUDGE_MAX_RETRIES", int),
                                ("concurrency", "EVALBOARD_JUDGE_CONCURRENCY", int)):
            if env.get(var):
                try:
                    numbers[name] = cast(env[var])
                except ValueError as exc:
                    raise ValueError(f"{var}={env[var]!r} is not a valid {cast.__name__}") from exc
        numbers.update(overrides)
        return cls(base_url=base.rstrip("/"), model=model, api_key=key or None, policy=policy, **numbers)


def parse_chat_completion(body: bytes) -> str:
    """The reply text of a chat-completions response body.

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
    config : LLMConfig
    sleep : callable, optional
        Used between retries (tests pass a recorder).

    Notes
    -----
    A semaphore of ``config.concurrency`` bounds the requests in flight, however many
    threads call :meth:`complete`.  ``requests_made`` counts HTTP requests sent.
    """

    def __init__(self, config: LLMConfig, *, sleep=time.sleep):
        if config.timeout_s <= 0 or config.concurrency < 1 or config.max_retries < 0:
            raise ValueError("timeout_s must be > 0, concurrency >= 1 and max_retries >= 0")
        self.config = config
        self.model = config.model
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self.requests_made = 0

    @property
    def url(self) -> str:
        """The chat-completions URL."""
        return self.config.base_url.rstrip("/") + "/chat/completions"

    def _post(self, payload: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        with self._lock:
            self.requests_made += 1
        with self._slots:
            return net.post(self.url, payload, headers=headers, timeout=self.config.timeout_s,
                            policy=self.config.policy)

    def complete(self, prompt: str, *, max_tokens: int | None = None) -> str:
        """Send one user message and return the reply text.

        Parameters
        ----------
        prompt : str
            The user message.
        max_tokens : int, optional
            Reply length limit sent to the endpoint.

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
            return self._post(payload)

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
