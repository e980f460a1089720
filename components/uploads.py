"""Uploads: read each file once, expand zips, and give a stable digest of the bytes for caching."""

from __future__ import annotations

import hashlib
import html
from collections.abc import Sequence

import streamlit as st

from evaluators.io import InputFile, InputIssue, expand_archives


_CACHE_KEY = "_evalboard_uploads"


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
        fid = getattr(u, "file_id", None) or f"{u.name}:{getattr(u, 'size', '')}"
        live.add(fid)
        entry = cache.get(fid)
        if entry is None or entry[0] != suffixes:
            files = expand_archives([InputFile(u.name, u.getvalue())], suffixes)
            entry = (suffixes, files, [_blake(f) for f in files])
            cache[fid] = entry
        for f, d in zip(entry[1], entry[2]):
            _DIGESTS[id(f)] = (f, d)
            out.append(f)
    for fid in [k for k in cache if k not in live]:
        del cache[fid]
    return out


_DIGESTS: dict[int, tuple[InputFile, str]] = {}


def _blake(f: InputFile) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(f.data)
    return h.hexdigest()


def file_digest(f: InputFile) -> str:
    """Digest of a file's bytes, computed once per file object."""
    known = _DIGESTS.get(id(f))
    if known is not None and known[0] is f:
        return known[1]
    d = _blake(f)
    if len(_DIGESTS) > 20000:
        _DIGESTS.clear()
    _DIGESTS[id(f)] = (f, d)
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
