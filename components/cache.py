"""The dashboard's one cache: results shared by every session, and values kept per session.

Two stores, both on :mod:`cachetools` (the well-kept implementation of LRU and TTL):

- :func:`cached` — computed results (reports, parsed inputs) keyed by file digests and
  settings, shared by all sessions of the server. Each *namespace* (a page's kind of
  result, e.g. ``"narrative"``) is a :class:`cachetools.TTLCache` of its own size, so one
  page's results never push out another's; an entry unused for ``EVALBOARD_CACHE_TTL``
  seconds (default 3600) expires (a hit renews it), so results derived from a session's
  uploads do not outlive their use in a long-running server.
- :func:`remember` — small values derived from one upload in one browser session (its
  bytes, its digest, its expanded files), an LRU in ``st.session_state``.

A result of the built-in demo is not computed at all while the package ships it
(:mod:`components.demo_snapshot`): :func:`cached` takes it from there when its key matches.

Why not ``st.cache_resource`` / ``st.cache_data`` for results: ``st.cache_data`` pickles and
copies the result on each rerun (a large report would be), and ``st.cache_resource``
replays the elements ``compute`` draws (its progress bar) on every later run; both are
tested against (``tests/unit/test_uploads_cache.py``).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

import cachetools
import streamlit as st

from components import demo_snapshot

T = TypeVar("T")
_SESSION_KEY = "_evalboard_session_cache"
#: Bytes kept per browser session (uploads' copies and expanded files; other values count 1 KiB).
SESSION_BYTES = 256 * 1024 ** 2


def ttl_seconds() -> float:
    """``EVALBOARD_CACHE_TTL`` (seconds, default 3600, at least 1): how long an unused result is kept."""
    try:
        return max(1.0, float(os.environ.get("EVALBOARD_CACHE_TTL", "3600")))
    except ValueError:
        return 3600.0


class ResultCache:
    """Results by namespace, each a :class:`cachetools.TTLCache`; safe for concurrent sessions.

    Streamlit runs each session's script in its own thread: ``lock`` guards the namespaces
    (lookups renew entries, insertions evict), and one lock per key being computed lets a
    second session wait for the first one's result instead of computing it again. No lock
    is held by one key's computation over another's; the per-key locks are reentrant, so a
    ``compute`` that asks for its own key computes it instead of waiting on itself.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._namespaces: dict[Hashable, cachetools.TTLCache] = {}
        self._computing: dict[tuple[Hashable, Hashable], list] = {}  # (namespace, key) -> [RLock, users]

    def _entries(self, namespace: Hashable, max_entries: int) -> cachetools.TTLCache:
        entries = self._namespaces.get(namespace)
        if entries is None or entries.maxsize != max_entries:
            # ``time.monotonic`` looked up at each call, so a test can move the clock
            fresh = cachetools.TTLCache(max_entries, ttl_seconds(), timer=lambda: time.monotonic())
            for key, value in list((entries or {}).items())[-max_entries:]:
                fresh[key] = value
            entries = self._namespaces[namespace] = fresh
        return entries

    def get(self, namespace: Hashable, key: Hashable) -> tuple[bool, object]:
        """``(True, value)`` when ``key`` is kept (and renew it), else ``(False, None)``."""
        with self._lock:
            entries = self._namespaces.get(namespace)
            if entries is None:
                return False, None
            entries.expire()
            if key not in entries:
                return False, None
            value = entries[key]
            entries[key] = value  # a hit renews the entry's time to live and its LRU place
            return True, value

    def put(self, namespace: Hashable, key: Hashable, value: object, max_entries: int) -> None:
        with self._lock:
            self._entries(namespace, max_entries)[key] = value

    def get_or_compute(self, namespace: Hashable, key: Hashable, compute: Callable[[], object],
                       max_entries: int) -> object:
        found, value = self.get(namespace, key)
        if found:
            return value
        slot = (namespace, key)
        with self._lock:
            entry = self._computing.setdefault(slot, [threading.RLock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                found, value = self.get(namespace, key)  # computed by another session meanwhile?
                if found:
                    return value
                value = compute()
                self.put(namespace, key, value, max_entries)
                return value
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._computing[slot]

    def items(self) -> list[tuple[tuple[Hashable, Hashable], object]]:
        """Every kept result as ``((namespace, key), value)`` (expired ones left out)."""
        with self._lock:
            out = []
            for namespace, entries in self._namespaces.items():
                entries.expire()
                out.extend(((namespace, key), value) for key, value in entries.items())
            return out

    def pending(self) -> int:
        """How many keys are being computed now (0 once every computation has returned or raised)."""
        with self._lock:
            return len(self._computing)

    def sizes(self) -> dict[Hashable, int]:
        """Entries kept per namespace (expired ones not counted)."""
        with self._lock:
            for entries in self._namespaces.values():
                entries.expire()
            return {ns: len(entries) for ns, entries in self._namespaces.items()}

    def clear(self) -> None:
        with self._lock:
            self._namespaces.clear()


@st.cache_resource(show_spinner=False)
def results() -> ResultCache:
    """The process-wide :class:`ResultCache` (shared objects, never copied)."""
    return ResultCache()


def cached(key: Hashable, compute: Callable[[], T], *, namespace: Hashable | None = None,
           max_entries: int = 12) -> T:
    """``compute()`` once per ``key`` (e.g. a file digest plus the settings), kept for every session.

    Results are kept per ``namespace`` (default: the first element of a tuple ``key``, such
    as ``"narrative"`` in ``("narrative", digest)``), each holding its ``max_entries`` most
    recently used results. While one session computes a key, another asking for the same
    key waits for that result; if ``compute`` raises, nothing is kept and the exception
    propagates (a waiting session then computes it itself). The object itself is returned,
    not a copy. A result the package ships for this key (:func:`components.demo_snapshot.shipped`:
    the built-in demo, scored ahead and shipped as data) is kept instead of computing it.
    """
    if namespace is None:
        namespace = key[0] if isinstance(key, tuple) and key else None

    def shipped_or_compute() -> T:
        found, value = demo_snapshot.shipped(namespace, key)
        return value if found else compute()  # type: ignore[return-value]

    return results().get_or_compute(namespace, key, shipped_or_compute, max_entries)  # type: ignore[return-value]


def _size(value: object) -> int:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return max(1024, len(value))
    if isinstance(value, (list, tuple)):
        return max(1024, sum(len(getattr(v, "data", b"")) for v in value))
    return 1024


def remember(key: Hashable, make: Callable[[], T]) -> T:
    """``make()`` once per ``key`` in this browser session.

    An LRU bounded by size (:data:`SESSION_BYTES` of bytes and files' data, other values
    1 KiB each): uploads a session no longer uses leave first; a value larger than the
    bound is returned without being kept.
    """
    store = st.session_state.get(_SESSION_KEY)
    if store is None:
        store = st.session_state[_SESSION_KEY] = cachetools.LRUCache(SESSION_BYTES, getsizeof=_size)
    try:
        return store[key]
    except KeyError:
        pass
    value = make()
    try:
        store[key] = value
    except ValueError:  # larger than the whole bound: not kept
        pass
    return value
