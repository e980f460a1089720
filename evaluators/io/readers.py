"""Readers for JSON, JSONL and CSV with located errors.

A broken JSONL/CSV line is reported (file and line) and skipped; the good lines are
kept.  A JSON document that does not parse is reported with its line and column.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, BinaryIO

from evaluators.io.decode import decode_bytes

try:  # a faster parser with the same results; optional
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is in requirements.txt
    _orjson = None
from evaluators.io.errors import InputError, InputIssue
from evaluators.results import DictMixin


def parse_json_text(text: str | bytes, file: str = "<input>") -> Any:
    """Parse a JSON document (orjson when installed, else the standard library; same result).

    ``NaN``/``Infinity`` tokens, which orjson rejects, are read by the standard library as
    floats, as before.

    Raises
    ------
    InputError
        With the 1-based line and column of the syntax error and the parser's message
        (the standard library's wording).
    """
    if _orjson is not None:
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:
            pass  # fall through for NaN tokens and for the standard library's error message
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            InputIssue(file, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno, kind="json")
        ) from exc


def load_json_bytes(data: bytes, file: str = "<input>") -> tuple[Any, str]:
    """Decode and parse a JSON file.

    UTF-8 (with or without BOM) is parsed straight from the bytes; anything else is decoded
    first (GB18030), so the text is never decoded twice.

    Returns
    -------
    (value, encoding)
        The parsed value and the encoding used (see :func:`evaluators.io.decode.decode_bytes`).

    Raises
    ------
    InputError
        Undecodable bytes, or invalid JSON (with line and column).
    """
    if _orjson is not None:
        bom = data[:3] == b"\xef\xbb\xbf"
        try:
            return _orjson.loads(memoryview(data)[3:] if bom else data), ("utf-8-sig" if bom else "utf-8")
        except _orjson.JSONDecodeError:
            pass  # not UTF-8, NaN tokens or invalid JSON: the path below decides and locates errors
    decoded = decode_bytes(data, file)
    return parse_json_text(decoded.text, file), decoded.encoding


@dataclass(frozen=True)
class Record(DictMixin):
    """One input record and where it came from.

    Attributes
    ----------
    data : dict
        The record's fields.  CSV cells that are empty stay ``""``; float NaN read from
        JSON is kept as is (callers treat both as absent via :func:`evaluators.policy.is_empty`).
    line : int or None
        1-based line (JSONL, CSV: the line where the row starts) or ``None``.
    index : int
        0-based position among the records of the file.
    raw : bytes or None
        The record's JSON line as read (streamed JSONL only), so a consumer can keep the
        compact bytes instead of the parsed dict.
    offset : int or None
        Byte offset of that line in the input (streamed JSONL only): with the input kept
        elsewhere, the line can be read again from ``offset`` and ``len(raw)``.
    """

    data: dict[str, Any]
    line: int | None
    index: int
    raw: bytes | None = field(default=None, repr=False, compare=False)
    offset: int | None = field(default=None, repr=False, compare=False)


@dataclass
class RecordSet(DictMixin):
    """Records read from one file, with the problems found while reading."""

    file: str
    format: str
    encoding: str
    records: list[Record] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)


_HEAD = 65536


def sniff_format(file: str, head: str) -> str:
    """Guess ``json``, ``jsonl`` or ``csv`` from the file suffix, then from the first characters.

    ``head`` is the beginning of the text (the first 64 KiB is plenty).
    """
    suffix = PurePath(file).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    stripped = head.lstrip()
    if stripped.startswith("{"):
        # One object per line is JSONL, even in a .json file.
        first_line, _, rest = stripped.partition("\n")
        try:
            json.loads(first_line)
            if rest.strip().startswith("{"):
                return "jsonl"
        except json.JSONDecodeError:
            pass
        return "json"
    if suffix == ".json" or stripped.startswith("["):
        return "json"
    return "csv"


def _detect_encoding(data: bytes | memoryview | BinaryIO, file: str) -> tuple[str, int]:
    """Encoding of ``data`` (bytes or a seekable binary file) and the length of its BOM.

    Checked in 1 MiB chunks, so no decoded copy of the whole input is made; a file is
    rewound afterwards.
    """
    step = 1 << 20
    if hasattr(data, "read"):
        start_pos = data.tell()
        chunks = iter(lambda: data.read(step), b"")
        first = b""
    else:
        view = memoryview(data)
        chunks = (view[i:i + step] for i in range(0, len(view), step))
    decoder = codecs.getincrementaldecoder("utf-8")()
    encoding, bom = "utf-8", 0
    try:
        for k, chunk in enumerate(chunks):
            if k == 0:
                first = bytes(chunk[:3])
                if first == b"\xef\xbb\xbf":
                    encoding, bom = "utf-8-sig", 3
                    break
            decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        if hasattr(data, "read"):
            data.seek(start_pos)
            sample = data.read(1 << 22)
        else:
            sample = bytes(memoryview(data)[: 1 << 22])
        decode_bytes(sample, file)  # raises a located InputError when GB18030 fails too
        encoding, bom = "gb18030", 0
    if hasattr(data, "read"):
        data.seek(start_pos)
    return encoding, bom


def _lines(data: bytes | memoryview | BinaryIO, start: int) -> Iterator[tuple[int, bytes | memoryview]]:
    """``(offset, line)`` pairs (lines without the newline) of a buffer from ``start``, or of a binary file."""
    if hasattr(data, "read"):
        pos = data.tell()
        if start:
            data.read(start)
            pos += start
        for line in data:
            yield pos, (line[:-1] if line.endswith(b"\n") else line)
            pos += len(line)
        return
    view = memoryview(data)
    raw = data if isinstance(data, bytes) else bytes(view)
    n = len(view)
    pos = start
    while pos < n:
        end = raw.find(b"\n", pos)
        if end == -1:
            end = n
        yield pos, view[pos:end]
        pos = end + 1


def iter_jsonl(data: bytes | memoryview | BinaryIO, file: str = "<input>", *, encoding: str | None = None
               ) -> Iterator[Record | InputIssue]:
    """Stream the records of a JSONL buffer or binary file one line at a time.

    Yields a :class:`Record` per good line and an :class:`InputIssue` per bad line (invalid
    JSON, not an object), so a caller can score as it reads and keep only what it needs.
    Given an open file, only one line is in memory at a time.

    Parameters
    ----------
    data : bytes, memoryview or binary file (seekable)
    file : str
        Name used in issues.
    encoding : str, optional
        ``utf-8``, ``utf-8-sig`` or ``gb18030`` when already known (else detected).

    Raises
    ------
    InputError
        If the bytes are neither UTF-8 nor GB18030.
    """
    if encoding is None:
        encoding, bom = _detect_encoding(data, file)
    else:
        bom = 3 if encoding == "utf-8-sig" else 0
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    index = 0
    for lineno, (offset, raw_line) in enumerate(_lines(data, bom), start=1):
        line = str(raw_line, codec)
        if not line.strip():
            continue
        value = None
        if _orjson is not None:
            try:
                value = _orjson.loads(line)
            except _orjson.JSONDecodeError:
                value = None
        if value is None:
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                yield InputIssue(file, f"invalid JSON on this line: {exc.msg}", line=lineno, column=exc.colno,
                                 kind="json")
                continue
        if not isinstance(value, dict):
            yield InputIssue(file, f"expected a JSON object, found {type(value).__name__}", line=lineno,
                             kind="schema")
            continue
        yield Record(value, lineno, index, bytes(raw_line), offset)
        index += 1


def read_records(data: bytes, file: str = "<input>", fmt: str | None = None) -> RecordSet:
    """Read a JSONL file, a JSON array (or an object with one list of records) or a CSV file.

    Parameters
    ----------
    data : bytes
        Raw content (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Name used in issues and for format sniffing.
    fmt : {"json", "jsonl", "csv"} or None
        Force a format; by default it is sniffed.

    Returns
    -------
    RecordSet
        Good records in file order and one issue per skipped line or element.  A JSON
        value that is not a list of objects is reported as a single issue.

    Raises
    ------
    InputError
        Only when the bytes cannot be decoded at all.
    """
    if fmt is None:
        head_bytes = bytes(data[:_HEAD])
        fmt = sniff_format(file, head_bytes.decode("utf-8", "ignore") or head_bytes.decode("gb18030", "ignore"))
    if fmt == "jsonl":
        encoding, _ = _detect_encoding(data, file)
        out = RecordSet(file=file, format=fmt, encoding=encoding)
        for item in iter_jsonl(data, file, encoding=encoding):
            (out.records if isinstance(item, Record) else out.issues).append(item)
        return out
    decoded = decode_bytes(bytes(data), file)
    text = decoded.text
    out = RecordSet(file=file, format=fmt, encoding=decoded.encoding)
    if fmt == "json":
        try:
            value = parse_json_text(text, file)
        except InputError as exc:
            out.issues.append(exc.issue)
            return out
        items = value
        prefix = ""
        if isinstance(value, dict):
            lists = [(k, v) for k, v in value.items() if isinstance(v, list)]
            if len(lists) == 1:
                prefix, items = lists[0]
            else:
                items = [value]
        if not isinstance(items, list):
            out.issues.append(InputIssue(file, "expected a JSON array of objects", path="$", kind="schema"))
            return out
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                out.issues.append(
                    InputIssue(file, f"expected an object, found {type(item).__name__}",
                               path=f"{prefix}[{i}]", kind="schema")
                )
                continue
            out.records.append(Record(item, None, len(out.records)))
        return out
    if fmt == "csv":
        delimiter = "\t" if PurePath(file).suffix.lower() == ".tsv" else ","
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            out.issues.append(InputIssue(file, "empty CSV file (no header row)", line=1, kind="csv"))
            return out
        except csv.Error as exc:
            out.issues.append(InputIssue(file, f"unreadable CSV header: {exc}", line=1, kind="csv"))
            return out
        header = [h.strip() for h in header]
        while True:
            start_line = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                out.issues.append(InputIssue(file, f"unreadable CSV row: {exc}", line=start_line, kind="csv"))
                continue
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                out.issues.append(
                    InputIssue(file, f"expected {len(header)} columns, found {len(row)}", line=start_line, kind="csv")
                )
                continue
            out.records.append(Record(dict(zip(header, row)), start_line, len(out.records)))
        return out
    raise ValueError(f"unknown format {fmt!r}; expected json, jsonl or csv")
