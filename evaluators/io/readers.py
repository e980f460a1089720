"""Readers for JSON, JSONL and CSV with located errors.

A broken JSONL/CSV line is reported (file and line) and skipped; the good lines are
kept.  A JSON document that does not parse is reported with its line and column.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from evaluators.io.decode import decode_bytes
from evaluators.io.errors import InputError, InputIssue
from evaluators.results import DictMixin


def parse_json_text(text: str, file: str = "<input>") -> Any:
    """Parse a JSON document.

    Raises
    ------
    InputError
        With the 1-based line and column of the syntax error and the parser's message.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            InputIssue(file, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno, kind="json")
        ) from exc


def load_json_bytes(data: bytes, file: str = "<input>") -> tuple[Any, str]:
    """Decode and parse a JSON file.

    Returns
    -------
    (value, encoding)
        The parsed value and the encoding used (see :func:`evaluators.io.decode.decode_bytes`).

    Raises
    ------
    InputError
        Undecodable bytes, or invalid JSON (with line and column).
    """
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
    """

    data: dict[str, Any]
    line: int | None
    index: int


@dataclass
class RecordSet(DictMixin):
    """Records read from one file, with the problems found while reading."""

    file: str
    format: str
    encoding: str
    records: list[Record] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)


def sniff_format(file: str, text: str) -> str:
    """Guess ``json``, ``jsonl`` or ``csv`` from the file suffix, then the content."""
    suffix = PurePath(file).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    stripped = text.lstrip()
    if suffix == ".json" or stripped.startswith("["):
        # A .json file may still be JSONL (one object per line); decide on content.
        if stripped.startswith("{"):
            first_line = stripped.split("\n", 1)[0].strip()
            try:
                json.loads(first_line)
                rest = stripped[len(first_line):].strip()
                if rest.startswith("{"):
                    return "jsonl"
            except json.JSONDecodeError:
                pass
        return "json"
    if stripped.startswith("{"):
        return "jsonl"
    return "csv"


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


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
    decoded = decode_bytes(data, file)
    text = decoded.text
    fmt = fmt or sniff_format(file, text)
    out = RecordSet(file=file, format=fmt, encoding=decoded.encoding)
    if fmt == "jsonl":
        index = 0
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                out.issues.append(
                    InputIssue(file, f"invalid JSON on this line: {exc.msg}", line=lineno, column=exc.colno, kind="json")
                )
                continue
            if not isinstance(value, dict):
                out.issues.append(
                    InputIssue(file, f"expected a JSON object, found {type(value).__name__}", line=lineno, kind="schema")
                )
                continue
            out.records.append(Record(value, lineno, index))
            index += 1
        return out
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
