"""The one HTTP layer of EvalBoard: URL rules, capped replies, redirects, retries (httpx + tenacity).

What is sent where
------------------
EvalBoard makes HTTP requests only when a user asks for them: the LLM judge
(:mod:`evaluators.memory.llm`, Long Memory page and ``memory --judge``) posts each prompt to
one OpenAI-compatible endpoint, and dialogue live mode (:mod:`evaluators.dialogue.live`)
posts each test context to one persona chat endpoint.  Nothing else is contacted, and
uploaded files never leave the server.

- Only ``http`` and ``https`` URLs with a host are accepted (``file://``, ``ftp://`` ... are
  refused before any request).
- ``EVALBOARD_ALLOWED_HOSTS`` (comma-separated ``host``, ``host:port`` or ``*.domain``): when
  set, a URL a user types must name one of these hosts.  Unset: any host (local model
  servers are the common case).  The judge URL set by the server's own environment
  (``EVALBOARD_JUDGE_BASE_URL``) is always allowed.
- The server's judge key (``EVALBOARD_JUDGE_API_KEY`` / ``OPENAI_API_KEY``) is only sent to
  the judge URL of the environment (same scheme, host and port, a path at or below it); a
  URL typed in the page gets only a key typed in the page.
- Redirects are followed only within the same origin (scheme, host and port; at most
  :data:`MAX_REDIRECTS`), so a header never crosses hosts; a redirect elsewhere fails the
  request and names the target host.
- A reply body is read through a stream capped at :data:`MAX_REPLY_BYTES` (10 MB;
  ``EVALBOARD_MAX_REPLY_BYTES``); a longer reply is a malformed reply.  Replies are asked for
  uncompressed (``Accept-Encoding: identity``) and the cap counts decoded bytes.  One attempt
  lasts at most about twice its timeout, however slowly a server drips its reply.
- Error messages give the status, the standard reason phrase of that status, host and size of
  a reply, never its body (nor the server's own reason text).
- No proxy, ``.netrc`` or other credentials are taken from the environment
  (``trust_env=False``).
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.cookiejar import CookieJar, DefaultCookiePolicy
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

import tenacity

if TYPE_CHECKING:  # imported where a request is made: a page that may never send one does not load httpx
    import httpx

#: Environment variable of the host allow-list for user-typed URLs.
ALLOWED_HOSTS_VAR = "EVALBOARD_ALLOWED_HOSTS"
#: Environment variable overriding :data:`MAX_REPLY_BYTES` (a positive whole number of bytes).
MAX_REPLY_BYTES_VAR = "EVALBOARD_MAX_REPLY_BYTES"
#: Default cap of one reply body: 10 MB.
DEFAULT_MAX_REPLY_BYTES = 10 * 1024 * 1024


def _reply_cap_from_env(env: Mapping[str, str] | None = None) -> int:
    """The reply cap of ``EVALBOARD_MAX_REPLY_BYTES``; the default (with a warning) when unset or not a positive int."""
    raw = (os.environ if env is None else env).get(MAX_REPLY_BYTES_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_REPLY_BYTES
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        warnings.warn(f"{MAX_REPLY_BYTES_VAR}={raw[:40]!r} is not a positive number of bytes; "
                      f"using {DEFAULT_MAX_REPLY_BYTES}", RuntimeWarning, stacklevel=2)
        return DEFAULT_MAX_REPLY_BYTES
    return value


#: Largest reply body read, in bytes (10 MB unless ``EVALBOARD_MAX_REPLY_BYTES`` says otherwise).
MAX_REPLY_BYTES = _reply_cap_from_env()
#: Same-origin redirects followed at most.
MAX_REDIRECTS = 3
#: HTTP statuses worth another try.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class URLRejected(ValueError):
    """A URL that EvalBoard will not contact (scheme, missing host, or a host outside the allow-list)."""


class HTTPFailure(RuntimeError):
    """A request that gave no usable reply.

    Attributes
    ----------
    kind : str
        ``"timeout"``, ``"connection"``, ``"http"`` (with ``status``), ``"redirect"`` (a
        redirect to another origin or past :data:`MAX_REDIRECTS`), ``"too_large"`` (the reply
        passed the cap) or ``"rejected"`` (the URL broke a rule; no request was sent).
    status : int or None
        HTTP status for ``"http"`` and ``"redirect"``.
    retry_after : float or None
        Seconds from a ``Retry-After`` header.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """True for failures worth another try (timeouts, connection errors, 408/409/429/5xx)."""
        return self.kind in ("timeout", "connection") or (self.kind == "http" and self.status in RETRY_STATUS)


def origin(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a URL, lower-case, with the scheme's default port filled in.

    Parameters
    ----------
    url : str

    Returns
    -------
    (str, str, int)
        Port 0 for an unknown scheme without a port, or an unparsable port.

    Examples
    --------
    >>> origin("HTTPS://Judge.Example.com/v1")
    ('https', 'judge.example.com', 443)
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme, 0)


def is_under(url: str, base: str) -> bool:
    """True when ``url`` has the origin of ``base`` and a path at or below its path.

    A path with a ``.`` or ``..`` segment (also percent-encoded) is never under anything: the
    client or the server would resolve it to another place.

    Parameters
    ----------
    url, base : str

    Returns
    -------
    bool

    Examples
    --------
    >>> is_under("https://h.example/v1/chat", "https://h.example/v1")
    True
    >>> is_under("https://h.example/v1/%2e%2e/x", "https://h.example/v1")
    False
    """
    if origin(url) != origin(base):
        return False
    base_path = urlsplit(base).path.rstrip("/")
    path = urlsplit(url).path
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        return False
    return path == base_path or path.startswith(base_path + "/") or not base_path


def allowed_hosts_from_env(env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The allow-list of ``EVALBOARD_ALLOWED_HOSTS`` (lower-case entries), ``None`` when unset or blank.

    Parameters
    ----------
    env : mapping of str to str, optional
        Default ``os.environ``.

    Returns
    -------
    tuple of str or None
        Comma-separated entries, stripped.
    """
    raw = (os.environ if env is None else env).get(ALLOWED_HOSTS_VAR, "")
    hosts = tuple(h.strip().lower() for h in raw.split(",") if h.strip())
    return hosts or None


def _split_entry(entry: str) -> tuple[str, str]:
    """``(host, port)`` of an allow-list entry ``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` (port may be "")."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ""
    if entry.count(":") > 1:  # a bare IPv6 address
        return entry, ""
    host, _, port = entry.partition(":")
    return host, port


def _host_allowed(host: str, port: int, allowed: Iterable[str]) -> bool:
    for entry in allowed:
        name, want_port = _split_entry(entry)
        if want_port and want_port != str(port):
            continue
        if name.startswith("*."):
            if host.endswith(name[1:]) and host != name[2:]:
                return True
        elif host == name:
            return True
    return False


@dataclass(frozen=True)
class URLPolicy:
    """Which URLs may be contacted.

    Attributes
    ----------
    allowed_hosts : tuple of str or None
        Entries ``host``, ``host:port`` or ``*.domain``; ``None`` allows every host.
    trusted : tuple of str
        Base URLs always allowed (the server's own configured endpoint).
    """

    allowed_hosts: tuple[str, ...] | None = None
    trusted: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, trusted: Iterable[str] = ()) -> URLPolicy:
        """The policy of ``EVALBOARD_ALLOWED_HOSTS``, with ``trusted`` base URLs always allowed.

        Parameters
        ----------
        env : mapping of str to str, optional
            Default ``os.environ``.
        trusted : iterable of str
            Base URLs (blank ones dropped).

        Returns
        -------
        URLPolicy
        """
        return cls(allowed_hosts_from_env(env), tuple(t for t in trusted if t))

    def check(self, url: str) -> str:
        """Return ``url`` if it may be contacted.

        Parameters
        ----------
        url : str

        Returns
        -------
        str
            ``url`` unchanged.

        Raises
        ------
        URLRejected
            For a scheme other than http/https, a URL without a host, credentials in the URL,
            or a host outside the allow-list.
        """
        parts = urlsplit(url.strip())
        if parts.scheme.lower() not in _DEFAULT_PORTS:
            given = f"{parts.scheme}://" if parts.scheme else "a URL without a scheme"
            raise URLRejected(f"only http:// and https:// URLs are accepted, not {given}")
        if not parts.hostname:
            raise URLRejected("the URL has no host")
        if parts.username or parts.password:
            raise URLRejected("credentials in the URL are not accepted (give the key in its own field)")
        scheme, host, port = origin(url)
        if self.allowed_hosts is not None and not any(is_under(url, t) for t in self.trusted):
            if not _host_allowed(host, port, self.allowed_hosts):
                raise URLRejected(f"host {host}:{port} is not in {ALLOWED_HOSTS_VAR} "
                                  f"({', '.join(self.allowed_hosts)})")
        return url.strip()


def _describe(url: str) -> str:
    """``host:port`` of a URL for messages (never its path or query); ``a scheme:// URL`` without a host."""
    scheme, host, port = origin(url)
    if host:
        return f"{host}:{port}"
    return f"a {scheme}:// URL" if scheme.isalnum() else "a URL without a host"


def _reason(status: int) -> str:
    """The standard reason phrase of an HTTP status ("" for an unknown one): never the server's own text."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


#: Environment variables of the judge endpoint (:meth:`EndpointSettings.from_env`).
JUDGE_ENV = {"base_url": ("EVALBOARD_JUDGE_BASE_URL", "OPENAI_BASE_URL"), "model": ("EVALBOARD_JUDGE_MODEL",),
             "api_key": ("EVALBOARD_JUDGE_API_KEY", "OPENAI_API_KEY"), "timeout_s": ("EVALBOARD_JUDGE_TIMEOUT",),
             "max_retries": ("EVALBOARD_JUDGE_MAX_RETRIES",), "concurrency": ("EVALBOARD_JUDGE_CONCURRENCY",)}


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to call one endpoint: the one settings class of every HTTP caller.

    Used by the LLM judge (:class:`evaluators.memory.llm.OpenAICompatibleClient`, also under its
    earlier name ``LLMConfig``) and by dialogue live mode (:class:`evaluators.dialogue.live.ChatClient`,
    also under ``EndpointConfig``).

    Attributes
    ----------
    base_url : str
        Endpoint root (the judge: up to and including ``/v1``; the persona endpoint: its root).
    model : str
        Model name sent with every request.
    timeout_s : float
        Seconds to connect and for each read, > 0 (an attempt lasts at most about twice this,
        see :func:`post`).
    max_retries : int
        Retries after the first attempt for transient failures (timeouts, connection errors,
        HTTP 408/409/429/5xx), >= 0.
    backoff_s : float
        Seconds before the first retry, >= 0; doubled for each further retry.
    api_key : str or None
        Bearer token; ``None`` for servers that need none.  Not shown by ``repr``.  :meth:`from_env`
        gives the environment's key only to the environment's base URL.
    max_backoff_s : float
        Upper bound of one wait (also caps ``Retry-After``).
    concurrency : int
        Requests in flight at once across threads (>= 1); also the size of the connection pool.
    temperature : float
        Sampling temperature (the judge: 0, deterministic).
    policy : URLPolicy
        Which URLs may be contacted (default: any http/https host; :meth:`from_env` reads
        ``EVALBOARD_ALLOWED_HOSTS`` and trusts the environment's base URL).

    Raises
    ------
    ValueError
        For a timeout <= 0, negative retries or backoff, or a concurrency < 1 (naming the setting).
    """

    base_url: str
    model: str
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 1.0
    api_key: str | None = None
    max_backoff_s: float = 30.0
    concurrency: int = 4
    temperature: float = 0.0
    policy: URLPolicy = field(default_factory=URLPolicy)

    def __post_init__(self) -> None:
        """Check the numbers (raises ``ValueError`` naming the setting)."""
        if not self.timeout_s > 0:
            raise ValueError(f"timeout must be > 0 seconds (timeout_s), not {self.timeout_s!r}")
        if self.max_retries < 0:
            raise ValueError(f"retries must be >= 0 (max_retries), not {self.max_retries!r}")
        if self.backoff_s < 0:
            raise ValueError(f"backoff must be >= 0 seconds (backoff_s), not {self.backoff_s!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {self.concurrency!r}")

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (f"EndpointSettings(base_url={self.base_url!r}, model={self.model!r}, api_key=<{key}>, "
                f"timeout_s={self.timeout_s}, max_retries={self.max_retries}, concurrency={self.concurrency})")

    def to_dict(self) -> dict:
        """The settings for a report: everything but the key (``api_key`` says only whether one is set)."""
        return {"base_url": self.base_url, "model": self.model, "timeout_s": self.timeout_s,
                "max_retries": self.max_retries, "backoff_s": self.backoff_s, "api_key": bool(self.api_key),
                "max_backoff_s": self.max_backoff_s, "concurrency": self.concurrency,
                "temperature": self.temperature}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> EndpointSettings | None:
        """The judge endpoint of the environment (:data:`JUDGE_ENV`), with ``overrides`` (a typed URL, model, key).

        Parameters
        ----------
        env : mapping of str to str, optional
            Default ``os.environ``.
        **overrides
            ``base_url``, ``model``, ``api_key`` and the numeric settings, winning over the
            environment (an empty ``base_url`` or ``model`` falls back to it).

        Returns
        -------
        EndpointSettings or None
            ``None`` when no base URL or no model is configured.

        Raises
        ------
        ValueError
            When a numeric variable does not parse; :class:`URLRejected` (a ``ValueError``) when the
            base URL may not be contacted.

        Notes
        -----
        ``EVALBOARD_JUDGE_API_KEY`` (or ``OPENAI_API_KEY``) is used only when the base URL is the
        environment's ``EVALBOARD_JUDGE_BASE_URL`` (or ``OPENAI_BASE_URL``) or below it; another
        ``base_url`` gets the ``api_key`` override alone.
        """
        env = os.environ if env is None else env

        def first(name: str) -> str | None:
            return next((env[v] for v in JUDGE_ENV[name] if env.get(v)), None)

        env_base = first("base_url")
        base = overrides.pop("base_url", None) or env_base
        model = overrides.pop("model", None) or first("model")
        if not base or not model:
            return None
        policy = URLPolicy.from_env(env, trusted=[env_base] if env_base else [])
        policy.check(base)
        key = overrides.pop("api_key", None)
        if not key and env_base and is_under(base.rstrip("/"), env_base.rstrip("/")):
            key = first("api_key")
        numbers = {}
        for name, cast in (("timeout_s", float), ("max_retries", int), ("concurrency", int)):
            var = JUDGE_ENV[name][0]
            if env.get(var):
                try:
                    numbers[name] = cast(env[var])
                except ValueError as exc:
                    raise ValueError(f"{var}={env[var]!r} is not a valid {cast.__name__}") from exc
        numbers.update(overrides)
        return cls(base_url=base.rstrip("/"), model=model, api_key=key or None, policy=policy, **numbers)


class Session:
    """One reused HTTP client (a keep-alive connection pool) for one endpoint's settings.

    :meth:`post` is :func:`post` through this session's pool: the rules on URLs, redirects,
    reply sizes and messages are the same, and connections to the endpoint are kept open
    between requests (a new TCP and TLS handshake per request is what this saves).
    Thread-safe; the pool holds up to ``settings.concurrency`` connections.  Close it (or use
    it as a context manager) when done; an unclosed session's connections close with it.
    """

    def __init__(self, settings: EndpointSettings, *, transport: httpx.BaseTransport | None = None):
        self.settings = settings
        import httpx

        limits = httpx.Limits(max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency)
        # no cookie is kept between requests (a reused client would otherwise send back what a server set)
        no_cookies = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
        self._client = httpx.Client(timeout=settings.timeout_s, follow_redirects=False, transport=transport,
                                    trust_env=False, limits=limits, cookies=no_cookies)

    def post(self, url: str, body: bytes, *, headers: Mapping[str, str] | None = None,
             max_bytes: int | None = None) -> bytes:
        """:func:`post` with this session's timeout and URL policy, on its reused connections.

        Parameters
        ----------
        url : str
        body : bytes
        headers : mapping, optional
        max_bytes : int, optional
            As :func:`post`.

        Returns
        -------
        bytes

        Raises
        ------
        HTTPFailure
            As :func:`post`.
        """
        return post(url, body, headers=headers, timeout=self.settings.timeout_s, policy=self.settings.policy,
                    max_bytes=max_bytes, client=self._client)

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def post(url: str, body: bytes, *, headers: Mapping[str, str] | None = None, timeout: float = 60.0,
         policy: URLPolicy | None = None, max_bytes: int | None = None,
         transport: httpx.BaseTransport | None = None, client: httpx.Client | None = None) -> bytes:
    """POST ``body`` to ``url`` and return the reply body (one attempt; see :func:`retrying`).

    Parameters
    ----------
    url : str
        Checked by ``policy`` (default: http/https only, the allow-list of the environment).
    body : bytes
        Request body, sent as is.
    headers : mapping, optional
        Request headers; sent only to ``url``'s origin (redirects elsewhere are refused).
    timeout : float
        Seconds, > 0, for connecting and for each read.  The whole attempt is also abandoned
        once ``2 * timeout`` seconds have passed (checked between chunks of the reply), so a
        server dripping its reply cannot hold it much longer than ``3 * timeout``.
    policy : URLPolicy, optional
        Default :meth:`URLPolicy.from_env`.
    max_bytes : int, optional
        Cap of the reply body in bytes (default :data:`MAX_REPLY_BYTES`).
    transport : httpx.BaseTransport, optional
        For tests.
    client : httpx.Client, optional
        A reused client (:class:`Session`); it must not follow redirects nor trust the environment.
        Default: a client for this request only.

    Returns
    -------
    bytes
        The body of a 2xx reply.

    Raises
    ------
    HTTPFailure
        ``rejected`` (URL rule, nothing sent), ``timeout``, ``connection``, ``http`` (non-2xx
        status, with ``retry_after``), ``redirect`` or ``too_large``.  The message names the
        host and port, the status and its standard reason, and sizes; never the reply body.
    """
    policy = policy or URLPolicy.from_env()
    cap = MAX_REPLY_BYTES if max_bytes is None else max_bytes
    try:
        policy.check(url)
    except URLRejected as exc:
        raise HTTPFailure(f"{exc}; nothing was sent", kind="rejected") from exc
    sent = {"Accept-Encoding": "identity", **dict(headers or {})}
    deadline = time.monotonic() + 2 * timeout
    own = client is None
    if own:
        import httpx

        client = httpx.Client(timeout=timeout, follow_redirects=False, transport=transport, trust_env=False)
    try:
        return _post_hops(client, url, body, sent, timeout, cap, deadline)
    finally:
        if own:
            client.close()


def _post_hops(client: httpx.Client, url: str, body: bytes, sent: Mapping[str, str], timeout: float, cap: int,
               deadline: float) -> bytes:
    """The request and its same-origin redirects (see :func:`post`)."""
    import httpx

    start = url
    for _hop in range(MAX_REDIRECTS + 1):
        try:
            with client.stream("POST", url, content=body, headers=sent, timeout=timeout) as response:
                if response.is_redirect:
                    target = urljoin(url, response.headers.get("location", ""))
                    if origin(target) != origin(start):
                        raise HTTPFailure(f"HTTP {response.status_code} from {_describe(url)}: redirect to another "
                                          f"host ({_describe(target)}) not followed", kind="redirect",
                                          status=response.status_code)
                    url = target
                    continue
                data = _read_capped(response, cap, url, deadline)
                if not response.is_success:
                    status = " ".join(filter(None, (str(response.status_code), _reason(response.status_code))))
                    raise HTTPFailure(f"HTTP {status} from {_describe(url)} ({len(data)} bytes)", kind="http",
                                      status=response.status_code,
                                      retry_after=_retry_after(response.headers.get("retry-after")))
                return data
        except httpx.TimeoutException as exc:
            raise HTTPFailure(f"timed out after {timeout:g} s ({_describe(url)})", kind="timeout") from exc
        except httpx.RemoteProtocolError as exc:  # its text may quote what the server sent: not shown
            raise HTTPFailure(f"connection error for {_describe(url)}: the server broke the HTTP protocol",
                              kind="connection") from exc
        except (httpx.TransportError, httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise HTTPFailure(f"connection error for {_describe(url)}: {type(exc).__name__}: {str(exc)[:120]}",
                              kind="connection") from exc
    raise HTTPFailure(f"more than {MAX_REDIRECTS} redirects from {_describe(start)}", kind="redirect")


def _read_capped(response: httpx.Response, cap: int, url: str, deadline: float) -> bytes:
    """The reply body read chunk by chunk, at most ``cap`` bytes (decoded), before ``deadline`` (monotonic)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise HTTPFailure(f"reply from {_describe(url)} declares {int(declared)} bytes, over the {cap}-byte limit",
                          kind="too_large")
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise HTTPFailure(f"reply from {_describe(url)} is over the {cap}-byte limit", kind="too_large")
        if time.monotonic() > deadline:
            raise HTTPFailure(f"timed out: the reply from {_describe(url)} was still arriving ({size} bytes) "
                              f"past the attempt's time limit", kind="timeout")
        chunks.append(chunk)
    return b"".join(chunks)


def _retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (delay seconds or an HTTP date), ``None`` when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def retrying(call: Callable[[], bytes], *, max_retries: int, backoff_s: float, max_backoff_s: float,
             sleep: Callable[[float], None] = time.sleep) -> bytes:
    """Run ``call`` and try again on transient :class:`HTTPFailure` (tenacity).

    Parameters
    ----------
    call : callable
        One attempt, e.g. a :func:`post`; it may raise :class:`HTTPFailure`.
    max_retries : int
        Tries after the first one (>= 0) for transient failures (:attr:`HTTPFailure.transient`:
        timeouts, connection errors, HTTP 408/409/429/5xx).
    backoff_s : float
        Seconds before the first retry; the n-th retry waits ``backoff_s * 2**(n-1)``, at least
        the ``Retry-After`` of the failed reply.
    max_backoff_s : float
        Upper bound of one wait in seconds (also caps ``Retry-After``).
    sleep : callable, optional
        Waits between attempts (tests pass a recorder).

    Returns
    -------
    object
        What ``call`` returned.

    Raises
    ------
    HTTPFailure
        A failure that is not transient at once (4xx, refused redirect, reply over the cap,
        rejected URL), or the last transient one after ``max_retries`` retries; any other
        exception of ``call`` as it is, without a retry.
    """
    def wait(state: tenacity.RetryCallState) -> float:
        delay = backoff_s * (2 ** (state.attempt_number - 1))
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, HTTPFailure) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return min(delay, max_backoff_s)

    return tenacity.Retrying(
        retry=tenacity.retry_if_exception(lambda e: isinstance(e, HTTPFailure) and e.transient),
        stop=tenacity.stop_after_attempt(max_retries + 1), wait=wait, sleep=sleep, reraise=True)(call)


class RateLimiter:
    """A token bucket shared by threads: at most ``rate_per_s`` requests a second on average, ``burst`` at once.

    Parameters
    ----------
    rate_per_s : float or None
        Requests a second (> 0); ``None`` or 0: no limit (:meth:`acquire` returns at once).
    burst : int
        Tokens the bucket holds (>= 1): requests that may start together after a pause.
    clock, sleep : callable, optional
        ``time.monotonic`` and ``time.sleep`` by default (tests pass their own).

    Notes
    -----
    One limiter bounds the requests of one process (every thread that shares it); processes sharing a
    judge call cache each have their own, so give each ``rate / processes``.
    """

    def __init__(self, rate_per_s: float | None = None, burst: int = 1, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if rate_per_s is not None and rate_per_s < 0:
            raise ValueError(f"rate must be >= 0 requests a second, not {rate_per_s!r}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, not {burst!r}")
        self.rate = rate_per_s or None
        self.burst = burst
        self._clock, self._sleep = clock, sleep
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for a token; returns the seconds waited."""
        if self.rate is None:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return waited
                delay = (1.0 - self._tokens) / self.rate
            self._sleep(delay)
            waited += delay
