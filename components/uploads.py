"""Uploads: read each file once, expand zips, and give a stable digest of the bytes for caching."""

from __future__ import annotations

import hashlib
import html
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import streamlit as st

from evaluators.io import InputFile, InputIssue, expand_archives


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
        h = hashlib.blake2b(digest_size=16)
        h.update(u.getbuffer())
        return f"{u.name}:{h.hexdigest()}"
    return _remember("digest", u, make)


def upload_bytes(u) -> bytes:
    """The bytes of one upload, copied out once per upload (``getvalue()``) and kept in the session."""
    return _remember("bytes", u, u.getvalue)


@st.cache_resource(show_spinner=False)
def _result_store() -> OrderedDict:
    """Process-wide store of computed results (shared objects, never copied)."""
    return OrderedDict()


def cached(key: Hashable, compute: Callable[[], T], *, max_entries: int = 12) -> T:
    """``compute()`` once per ``key`` (e.g. a file digest plus the settings), kept for every session.

    Unlike ``st.cache_data`` the result is not pickled and copied on each rerun (a large report
    would be), and unlike elements inside ``st.cache_resource`` a progress bar drawn by
    ``compute`` is not replayed on later runs.  The oldest of ``max_entries`` results is dropped.
    """
    store = _result_store()
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = compute()
    store[key] = value
    while len(store) > max_entries:
        store.popitem(last=False)
    return value


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
            entry = (suffixes, files, [_blake(f) for f in files])
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


def _blake(f: InputFile) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f.data)
    return h.hexdigest()


def file_digest(f: InputFile) -> str:
    """Digest of a file's bytes, computed once per file object."""
    known = _DIGESTS.get(id(f))
    if known is not None and known[0]() is f:
        return known[1]
    d = _blake(f)
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


def show_issues(issues: Sequence[InputIssue], *, title: str = "Input problems") -> None:
    """List input issues (file, line/path, message); user text is escaped.

    Problems that lose a whole file open the list; record-level problems (a record left out,
    the rest of the file used) stay folded with a count.
    """
    if not issues:
        return
    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity != "error"]
    file_level = [i for i in errors if i.kind in FILE_LEVEL]
    summary = (f"{title}: {len(errors)} error{'s' * (len(errors) != 1)}, "
               f"{len(warnings)} warning{'s' * (len(warnings) != 1)} — the rest of the data is still scored")
    with st.expander(summary, expanded=bool(file_level), icon=":material/error:" if file_level else
                     ":material/warning:"):
        lines = []
        for i in file_level + [e for e in errors if e not in file_level] + warnings:
            mark = "error" if i.severity == "error" else "warning"
            color = "#c62828" if mark == "error" else "#ef6c00"
            lines.append(f"<li><span style='color:{color};font-weight:600'>{mark}</span> "
                         f"<code>{html.escape(i.location())}</code> — {html.escape(i.message)}</li>")
        st.html(f"<ul class='eb-issues' style='margin:0;padding-left:1.2rem'>{''.join(lines)}</ul>")
