"""Uploads: read each file once per session, expand zips, and give a stable digest of the bytes (for caching)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import streamlit as st

from components.cache import cached, remember  # noqa: F401 - ``cached`` is used by the pages through here
from evaluators.io import InputFile, InputIssue, expand_archives
from evaluators.io.sources import bytes_digest
from evaluators.reports.escape import html_text, md


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


FILE_LEVEL = ("decode", "json", "pairing", "taxonomy", "settings")


#: Problems listed on the page; the rest are in the CSV download.
SHOWN_ISSUES = 20


def show_issues(issues: Sequence[InputIssue], *, title: str = "Input problems") -> None:
    """Summarise input issues: counts per kind, the first :data:`SHOWN_ISSUES` lines listed (identical problems
    folded into one line with their count, as the CLI prints them), a CSV of all.

    Problems that lose a whole file open the list; record-level problems (a record left out,
    the rest of the file used) stay folded with a count.  User text is escaped.
    """
    if not issues:
        return
    from collections import Counter

    from evaluators.reports.csv_writer import write_dict_csv
    from evaluators.reports.format import fold_problems, folded_location

    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity != "error"]
    file_level = [i for i in errors if i.kind in FILE_LEVEL]
    summary = (f"{title}: {len(errors)} error{'s' * (len(errors) != 1)}, "
               f"{len(warnings)} warning{'s' * (len(warnings) != 1)} — the rest of the data is still scored")
    ordered = file_level + [e for e in errors if e not in file_level] + warnings
    # identical problems (same file, severity and message) are one line with their count, as the CLI prints them
    groups = fold_problems(ordered)
    with st.expander(summary, expanded=bool(file_level), icon=":material/error:" if file_level else
                     ":material/warning:"):
        kinds = Counter(i.kind or "other" for i in issues)
        if len(groups) > SHOWN_ISSUES:
            st.caption("By kind: " + ", ".join(f"{md(k)} {n}" for k, n in kinds.most_common())
                       + f". The first {SHOWN_ISSUES} are listed; the CSV has all {len(issues)}.")
        lines = []
        for first, group in groups[:SHOWN_ISSUES]:
            mark = "error" if first.severity == "error" else "warning"
            color = "#c62828" if mark == "error" else "#ef6c00"
            lines.append(f"<li><span style='color:{color};font-weight:600'>{mark}</span> "
                         f"<code>{html_text(folded_location(group), breaks=False)}</code> — "
                         f"{html_text(first.message, breaks=False)}</li>")
        st.html(f"<ul class='eb-issues' style='margin:0;padding-left:1.2rem'>{''.join(lines)}</ul>")
        if len(groups) > SHOWN_ISSUES or len(groups) < len(issues):  # the CSV has every problem, one a row
            st.download_button(
                "Download all problems (CSV)",
                lambda: write_dict_csv(["severity", "kind", "file", "line", "path", "message"],
                                       [{"severity": i.severity, "kind": i.kind, "file": i.file, "line": i.line,
                                         "path": i.path, "message": i.message} for i in ordered]).encode("utf-8-sig"),
                file_name="input_problems.csv", mime="text/csv", key=f"issues_csv_{title}", on_click="ignore")
