"""Uploads: read each file once, expand zips, and give a stable digest of the bytes for caching."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import streamlit as st

from evaluators.io import InputFile, InputIssue, expand_archives
from evaluators.reports.escape import html_text, md


T = TypeVar("T")
_CACHE_KEY = "_evalboard_uploads"
_SINGLE_KEY = "_evalboard_upload_digests"


def _file_id(u) -> str:
    return getattr(u, "file_id", None) or f"{u.name}:{getattr(u, 'size', '')}"


def _single_cache() -> OrderedDict:
    cache = st.session_state.get(_SINGLE_KEY)
    if cache is None:
        cache = st.session_state[_SINGLE_KEY] = OrderedDict()
    return cache


def _remember(kind: str, u, make: Callable[[], T]) -> T:
    """Per-session LRU (16 entries) of values derived from one upload, keyed by its file id."""
    cache = _single_cache()
    key = (kind, _file_id(u))
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = cache[key] = make()
    while len(cache) > 16:
        cache.popitem(last=False)
    return value


def upload_digest(u) -> str:
    """Digest of one upload's bytes, computed once per upload (read through ``getbuffer()``: no copy)."""
    def make() -> str:
        return f"{u.name}:{_blake(u.getbuffer())}"
    return _remember("digest", u, make)


def upload_bytes(u) -> bytes:
    """The bytes of one upload, copied out once per upload (``getvalue()``) and kept in the session."""
    return _remember("bytes", u, u.getvalue)


def _ttl_seconds() -> float:
    """``EVALBOARD_CACHE_TTL`` (seconds, default 3600): how long an unused result is kept."""
    import os

    try:
        return max(1.0, float(os.environ.get("EVALBOARD_CACHE_TTL", "3600")))
    except ValueError:
        return 3600.0


class _ResultStore:
    """Computed results by namespace, each namespace an LRU of its own size, shared by all sessions.

    An entry not used for :func:`_ttl_seconds` is dropped (checked on every lookup and insert),
    so results derived from a session's uploads do not outlive their use in a long-running
    server; the LRU bounds the count.

    Streamlit runs each session's script in its own thread: ``lock`` guards the namespaces
    (lookups move entries, insertions evict), and one lock per key being computed lets a
    second session wait for the first one's result instead of computing it again.  No
    lock is held by one key's computation over another's; the per-key locks are reentrant,
    so a ``compute`` that asks for its own key computes it instead of waiting on itself.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.namespaces: dict[Hashable, OrderedDict] = {}
        self.used: dict[tuple[Hashable, Hashable], float] = {}  # (namespace, key) -> last use (monotonic)
        self.computing: dict[tuple[Hashable, Hashable], list] = {}  # (namespace, key) -> [RLock, users]

    def _expire(self, now: float) -> None:
        """Drop entries unused for longer than the TTL (the caller holds ``lock``)."""
        limit = now - _ttl_seconds()
        for (namespace, key), when in list(self.used.items()):
            if when < limit:
                del self.used[(namespace, key)]
                self.namespaces.get(namespace, {}).pop(key, None)

    def get(self, namespace: Hashable, key: Hashable) -> tuple[bool, object]:
        import time

        with self.lock:
            now = time.monotonic()
            self._expire(now)
            entries = self.namespaces.get(namespace)
            if entries is None or key not in entries:
                return False, None
            entries.move_to_end(key)
            self.used[(namespace, key)] = now
            return True, entries[key]

    def put(self, namespace: Hashable, key: Hashable, value: object, max_entries: int) -> None:
        import time

        with self.lock:
            now = time.monotonic()
            self._expire(now)
            entries = self.namespaces.setdefault(namespace, OrderedDict())
            entries[key] = value
            entries.move_to_end(key)
            self.used[(namespace, key)] = now
            while len(entries) > max_entries:
                old, _ = entries.popitem(last=False)
                self.used.pop((namespace, old), None)

    def key_lock(self, slot: tuple[Hashable, Hashable]) -> threading.RLock:
        """The lock of one key being computed (counted, so it leaves once nobody holds it)."""
        with self.lock:
            entry = self.computing.setdefault(slot, [threading.RLock(), 0])
            entry[1] += 1
            return entry[0]

    def release_key_lock(self, slot: tuple[Hashable, Hashable]) -> None:
        with self.lock:
            entry = self.computing[slot]
            entry[1] -= 1
            if entry[1] == 0:
                del self.computing[slot]


@st.cache_resource(show_spinner=False)
def _result_store() -> _ResultStore:
    """Process-wide store of computed results (shared objects, never copied)."""
    return _ResultStore()


def cached(key: Hashable, compute: Callable[[], T], *, namespace: Hashable | None = None,
           max_entries: int = 12) -> T:
    """``compute()`` once per ``key`` (e.g. a file digest plus the settings), kept for every session.

    Why not ``st.cache_resource`` / ``st.cache_data``: ``st.cache_data`` pickles and copies the
    result on each rerun (a large report would be), and ``st.cache_resource`` replays the
    elements ``compute`` draws (its progress bar) on every later run; both are tested
    against here (``tests/unit/test_uploads_cache.py``).  Like them, entries are bounded
    (``max_entries`` per namespace) and expire when unused (``EVALBOARD_CACHE_TTL``, 1 hour).

    Results are kept per ``namespace`` (default: the first element of a tuple ``key``, such as
    ``"narrative"`` in ``("narrative", digest)``), each namespace holding its ``max_entries``
    most recently used results, so one page's results never push out another's.  Safe to
    call from several sessions at once: while one session computes a key, another asking
    for the same key waits for that result; if ``compute`` raises, nothing is kept and the
    exception propagates (a waiting session then computes it itself).
    """
    if namespace is None:
        namespace = key[0] if isinstance(key, tuple) and key else None
    store = _result_store()
    found, value = store.get(namespace, key)
    if found:
        return value  # type: ignore[return-value]
    slot = (namespace, key)
    lock = store.key_lock(slot)
    try:
        with lock:
            found, value = store.get(namespace, key)  # computed by another session meanwhile?
            if found:
                return value  # type: ignore[return-value]
            value = compute()
            store.put(namespace, key, value, max_entries)
            return value
    finally:
        store.release_key_lock(slot)


def _upload_cache(group: str) -> dict:
    return st.session_state.setdefault(_CACHE_KEY, {}).setdefault(group, {})


def read_uploads(uploaded: Sequence | None, suffixes: tuple[str, ...] = (".json",), *,
                 group: str = "default") -> list[InputFile]:
    """Turn ``st.file_uploader`` results into :class:`InputFile`, zips expanded.

    Each upload is read once (``getvalue()``) and hashed once: the files and their digests
    are kept in the session keyed by the upload's ``file_id``, so reruns neither copy nor
    rehash the bytes.  ``group`` names the uploader (files no longer uploaded are forgotten).
    """
    cache = _upload_cache(group)
    out: list[InputFile] = []
    live = set()
    for u in uploaded or []:
        fid = _file_id(u)
        live.add(fid)
        entry = cache.get(fid)
        if entry is None or entry[0] != suffixes:
            files = expand_archives([InputFile(u.name, u.getvalue())], suffixes)
            entry = (suffixes, files, [_blake(f.data) for f in files])
            cache[fid] = entry
        for f, d in zip(entry[1], entry[2]):
            _remember_digest(f, d)
            out.append(f)
    for fid in [k for k in cache if k not in live]:
        del cache[fid]
    return out


# id(file) -> (weak reference to the file, digest).  Weak, so a digest never keeps an
# upload's bytes alive; the entry leaves when the file object is collected.
_DIGESTS: dict[int, tuple[weakref.ref, str]] = {}


def _remember_digest(f: InputFile, d: str) -> None:
    key = id(f)
    _DIGESTS[key] = (weakref.ref(f, lambda _ref, key=key: _forget(key, _ref)), d)


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _DIGESTS.get(key)
    if entry is not None and entry[0] is ref:
        del _DIGESTS[key]


def _blake(data: bytes | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_digest(f: InputFile) -> str:
    """Digest of a file's bytes, computed once per file object."""
    known = _DIGESTS.get(id(f))
    if known is not None and known[0]() is f:
        return known[1]
    d = _blake(f.data)
    _remember_digest(f, d)
    return d


def digest(*groups: Sequence[InputFile], extra: str = "") -> str:
    """A short hash of the file names and byte digests of ``groups`` plus ``extra`` (a cache key)."""
    h = hashlib.blake2b(digest_size=16)
    for group in groups:
        for f in group:
            h.update(f.name.encode("utf-8", "replace"))
            h.update(file_digest(f).encode())
        h.update(b"\x00")
    h.update(extra.encode())
    return h.hexdigest()


FILE_LEVEL = ("decode", "json", "pairing", "taxonomy", "settings")


#: Problems listed on the page; the rest are in the CSV download.
SHOWN_ISSUES = 20


def show_issues(issues: Sequence[InputIssue], *, title: str = "Input problems") -> None:
    """Summarise input issues: counts per kind, the first :data:`SHOWN_ISSUES` listed, a CSV of all.

    Problems that lose a whole file open the list; record-level problems (a record left out,
    the rest of the file used) stay folded with a count.  User text is escaped.
    """
    if not issues:
        return
    from collections import Counter

    from evaluators.reports.csv_writer import write_dict_csv

    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity != "error"]
    file_level = [i for i in errors if i.kind in FILE_LEVEL]
    summary = (f"{title}: {len(errors)} error{'s' * (len(errors) != 1)}, "
               f"{len(warnings)} warning{'s' * (len(warnings) != 1)} — the rest of the data is still scored")
    ordered = file_level + [e for e in errors if e not in file_level] + warnings
    with st.expander(summary, expanded=bool(file_level), icon=":material/error:" if file_level else
                     ":material/warning:"):
        kinds = Counter(i.kind or "other" for i in issues)
        if len(issues) > SHOWN_ISSUES:
            st.caption("By kind: " + ", ".join(f"{md(k)} {n}" for k, n in kinds.most_common())
                       + f". The first {SHOWN_ISSUES} are listed; the CSV has all {len(issues)}.")
        lines = []
        for i in ordered[:SHOWN_ISSUES]:
            mark = "error" if i.severity == "error" else "warning"
            color = "#c62828" if mark == "error" else "#ef6c00"
            lines.append(f"<li><span style='color:{color};font-weight:600'>{mark}</span> "
                         f"<code>{html_text(i.location(), breaks=False)}</code> — {html_text(i.message, breaks=False)}</li>")
        st.html(f"<ul class='eb-issues' style='margin:0;padding-left:1.2rem'>{''.join(lines)}</ul>")
        if len(issues) > SHOWN_ISSUES:
            st.download_button(
                "Download all problems (CSV)",
                lambda: write_dict_csv(["severity", "kind", "file", "line", "path", "message"],
                                       [{"severity": i.severity, "kind": i.kind, "file": i.file, "line": i.line,
                                         "path": i.path, "message": i.message} for i in ordered]).encode("utf-8-sig"),
                file_name="input_problems.csv", mime="text/csv", key=f"issues_csv_{title}", on_click="ignore")
