"""One store of endpoint replies kept on disk, so a stopped run resumes: the judge cache and the live checkpoint.

:class:`ReplyStore` holds records (plain JSON objects) by key, in memory and in one file,
in one of two layouts:

``"json"`` (the LLM judge's cache, :class:`evaluators.memory.judge.JudgeCache`)
    One JSON document ``{"format": ..., "version": ..., "evalboard": ..., "entries": {key: record}}``,
    rewritten whole and atomically (temporary file + rename) by :meth:`ReplyStore.save`; an
    upload or a download is this document.
``"jsonl"`` (dialogue live mode's checkpoint, :func:`evaluators.dialogue.live.run_live`)
    One record per line, appended and flushed by :meth:`ReplyStore.put` as each reply arrives;
    the key is computed from the record (``key``).  A line cut by an interruption (or any line
    that is not a JSON object) is skipped when reading, and the next record starts a line of
    its own.  When several lines have one key, the last accepted one wins.

Existing files of both layouts are read as they were written before this module (judge caches
``evalboard-memory-judge-cache`` version 1, checkpoints of ``{"model", "scene", ...}`` lines).
Every read is capped (:data:`MAX_STORE_BYTES`).  Thread-safe: replies may arrive from a pool.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

from evaluators import __version__
from evaluators.io import InputError, InputIssue, load_json_bytes
from evaluators.io.readers import loads_json_line

def _cap_from_env() -> int:
    raw = os.environ.get("EVALBOARD_MAX_STORE_BYTES", "").strip().replace("_", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else 512 * 1024 * 1024


#: Largest store file read (bytes): 512 MiB, or ``EVALBOARD_MAX_STORE_BYTES`` (a positive whole number).
MAX_STORE_BYTES = _cap_from_env()


def _read_capped(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_STORE_BYTES:
        raise InputError(InputIssue(str(path), f"{size} bytes, over the {MAX_STORE_BYTES}-byte limit of a reply store "
                                               "(EVALBOARD_MAX_STORE_BYTES)", kind="size"))
    return path.read_bytes()


class ReplyStore:
    """Records by key, kept in one file (see the module docstring for the two layouts).

    Parameters
    ----------
    path : str or Path, optional
        The file; read when it exists.  ``None`` keeps the store in memory only.
    layout : {"json", "jsonl"}
    format, version : str, int
        The JSON layout's ``format`` and ``version`` (checked when reading when ``format`` is given).
    key : callable, optional
        JSONL layout: ``record -> key`` (default: the record's ``"key"`` field).
    accept : callable, optional
        JSONL layout: ``record -> bool``; records it refuses are kept in the file but not in
        :attr:`entries` (e.g. failed replies, another model's).

    Attributes
    ----------
    entries : dict
        ``key -> record``.
    issues : list of InputIssue
        Records skipped while reading (located), for the caller to show.

    Raises
    ------
    InputError
        A JSON-layout file that is not such a document (invalid JSON, another ``format``), or a
        file over :data:`MAX_STORE_BYTES`.
    """

    def __init__(self, path: str | Path | None = None, *, layout: str = "json", format: str | None = None,
                 version: int = 1, key: Callable[[Mapping[str, Any]], Hashable] | None = None,
                 accept: Callable[[Mapping[str, Any]], bool] | None = None):
        if layout not in ("json", "jsonl"):
            raise ValueError(f"layout must be 'json' or 'jsonl', not {layout!r}")
        self.path = Path(path) if path is not None else None
        self.layout = layout
        self.format = format
        self.version = version
        self._key = key or (lambda rec: rec.get("key"))
        self._accept = accept or (lambda rec: True)
        self.entries: dict[Hashable, dict[str, Any]] = {}
        self.issues: list[InputIssue] = []
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            self.load_bytes(_read_capped(self.path), str(self.path))

    # ------------------------------------------------------------------ reading
    def load_bytes(self, data: bytes, file: str) -> None:
        """Add the records of ``data`` (the file's content, named ``file`` in messages).

        Parameters
        ----------
        data : bytes
            JSONL (one record a line; a line cut by an interruption is skipped with a warning) or,
            in the JSON layout, one document.
        file : str
            The name used in messages.

        Raises
        ------
        InputError
            JSON layout: the document does not parse or is not this store's layout.
        """
        if self.layout == "json":
            value, _ = load_json_bytes(data, file)
            self.load_value(value, file)
            return
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                rec = loads_json_line(raw, file, lineno)
            except (ValueError, UnicodeDecodeError):  # a line cut by an interruption, or not JSON
                self.issues.append(InputIssue(file, "not a complete JSON record; skipped", line=lineno,
                                              severity="warning", kind="json"))
                continue
            if isinstance(rec, dict) and self._accept(rec):
                self.entries[self._key(rec)] = rec

    def load_value(self, value: Any, file: str) -> None:
        """Add the entries of an already parsed JSON-layout document (each checked by :meth:`check_entry`).

        Parameters
        ----------
        value : object
            ``{"format": ..., "entries": {key: entry}}``.
        file : str
            The name used in messages.

        Raises
        ------
        InputError
            Not an object of this store's format with an ``entries`` object (a bad entry is skipped
            and listed in ``issues`` instead).
        """
        if not isinstance(value, dict) or (self.format is not None and value.get("format") != self.format) \
                or not isinstance(value.get("entries"), dict):
            raise InputError(InputIssue(file, f"not a {self.describe()}: expected an object with \"format\": "
                                              f"\"{self.format}\" and \"entries\"", path="$"))
        for key, entry in value["entries"].items():
            try:
                if not isinstance(entry, dict):
                    raise ValueError("expected an object")
                self.check_entry(entry)
            except ValueError as exc:
                self.issues.append(InputIssue(file, f"{self.describe()} entry skipped: {exc}", path=f"entries.{key}"))
                continue
            self.entries[str(key)] = dict(entry)

    def check_entry(self, entry: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the problem of an entry read from a file (subclasses; default: none).

        Parameters
        ----------
        entry : mapping
            One entry of a JSON-layout file.

        Raises
        ------
        ValueError
            The entry cannot be used (it is then skipped and listed in ``issues``).
        """

    def describe(self) -> str:
        """What the store is, for messages."""
        return "reply store"

    # ------------------------------------------------------------------ writing
    def put(self, key: Hashable, record: dict[str, Any]) -> None:
        """Keep ``record`` under ``key``; the JSONL layout appends it to the file at once (thread-safe).

        Parameters
        ----------
        key : hashable
        record : dict
            JSON-ready.

        Raises
        ------
        OSError
            The JSONL file cannot be written.
        """
        with self._lock:
            if self.layout == "json" or self._accept(record):
                self.entries[key] = record
            if self.layout == "jsonl" and self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    def open_for_append(self) -> None:
        """JSONL layout: make the file writable now (created if absent), ending a line cut by an interruption
        with a newline so the next record starts a line of its own.  Raises ``OSError`` when it cannot be written."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab+") as fh:
            fh.seek(0, 2)
            if fh.tell():
                fh.seek(-1, 2)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")

    def to_json(self) -> str:
        """The JSON layout's document text."""
        with self._lock:
            entries = dict(self.entries)
        return json.dumps({"format": self.format, "version": self.version, "evalboard": __version__,
                           "entries": entries}, ensure_ascii=False, indent=1)

    def save(self) -> None:
        """JSON layout: write the file atomically (temporary file + rename); JSONL: make sure it can be appended to.
        No-op without a path."""
        if self.path is None:
            return
        if self.layout == "jsonl":
            self.open_for_append()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = self.to_json()
        fd, tmp = tempfile.mkstemp(prefix=".reply-store-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
