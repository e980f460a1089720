"""Uploads: read each file once per session, expand zips, and give a stable digest of the bytes (for caching)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import streamlit as st

from components.cache import cached, remember  # noqa: F401 - ``cached`` is used by the pages through here
from evaluators.io import InputFile, expand_archives
from evaluators.io.sources import bytes_digest


def _file_id(u) -> str:
    return getattr(u, "file_id", None) or f"{u.name}:{getattr(u, 'size', '')}"


def upload_digest(u) -> str:
    """``name:digest`` of one upload's bytes, computed once per upload (read through ``getbuffer()``: no copy)."""
    return remember(("digest", _file_id(u)), lambda: f"{u.name}:{bytes_digest(u.getbuffer())}")


def upload_view(u) -> memoryview:
    """The bytes of one upload as a read-only view of Streamlit's own buffer (``getbuffer()``): no copy.

    For readers that take ``bytes | memoryview`` and keep nothing of it (the Long Memory page's
    inputs): the upload is held once (Streamlit's ``UploadedFile``), not a second time in the
    session as :func:`upload_bytes` holds it.
    """
    return u.getbuffer().toreadonly()


def upload_bytes(u) -> bytes:
    """The bytes of one upload, copied out once per upload (``getvalue()``) and kept in the session."""
    return remember(("bytes", _file_id(u)), u.getvalue)


def read_uploads(uploaded: Sequence | None, suffixes: tuple[str, ...] = (".json",), *,
                 group: str = "default") -> list[InputFile]:
    """Turn ``st.file_uploader`` results into :class:`InputFile`, zips expanded.

    Each upload is read (``getvalue()``), expanded and hashed once per browser session
    (:func:`components.cache.remember`, keyed by the upload's ``file_id``), so reruns neither
    copy nor rehash the bytes. ``group`` names the uploader.
    """
    out: list[InputFile] = []
    for u in uploaded or []:
        out.extend(remember(("files", group, _file_id(u), suffixes),
                            lambda u=u: expand_archives([InputFile(u.name, u.getvalue())], suffixes)))
    return out


def file_digest(f: InputFile) -> str:
    """Digest of a file's bytes, computed once per file object (:attr:`InputFile.digest`)."""
    return f.digest


def digest(*groups: Sequence[InputFile], extra: str = "") -> str:
    """A short hash of the file names and byte digests of ``groups`` plus ``extra`` (a cache key)."""
    h = hashlib.blake2b(digest_size=16)
    for group in groups:
        for f in group:
            h.update(f.name.encode("utf-8", "replace"))
            h.update(f.digest.encode())
        h.update(b"\x00")
    h.update(extra.encode())
    return h.hexdigest()
