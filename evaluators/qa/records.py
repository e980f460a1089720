"""Read QA / fact-check input: JSONL, JSON arrays, CSV, and SQuAD-style files with a predictions map.

Record files (one object per question with its ground truth and prediction) go through
:func:`evaluators.io.read_records`: a broken line is reported with its number and skipped.

A SQuAD-style dataset (``{"data": [{"paragraphs": [{"qas": [...]}]}]}``, as SQuAD v1.1
and CMRC 2018 ship) is flattened to one record per question (``id``, ``question``,
``answers``).  Predictions can then come from a separate JSON object ``{id: answer}``
(the official scripts' prediction file), joined by id.

A comparison file ``{system: [records]}`` (an object with two or more fields, every one a
non-empty list of record objects, none of them SQuAD-style), as HotpotQA ablation scripts
write, is read as grouped records: each record gets the field :data:`SYSTEM_FIELD` set to its
key (a record's own ``system`` value is kept), so the systems are scored side by side.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from evaluators.io import InputIssue, Record, RecordSet, read_records
from evaluators.io.errors import InputError
from evaluators.io.readers import (add_json_records, iter_jsonl_values, read_json_document, records_field, sniff_bytes)
from evaluators.qa.fields import DEFAULT_PRED_FIELDS, ID_FIELDS, text_field

#: Field that receives predictions joined from a separate predictions file.
JOINED_PRED_FIELD = "prediction"
#: Field that receives the key of a ``{system: [records]}`` comparison file.
SYSTEM_FIELD = "system"


def _is_grouped(value: Any) -> bool:
    """Whether a JSON object is ``{system: [records]}`` with at least two systems."""
    if not isinstance(value, Mapping) or len(value) < 2 or _is_squad(value):
        return False
    return all(isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v) for v in value.values())


def _flatten_grouped(value: Mapping[str, Any], out: RecordSet) -> RecordSet:
    for system, rows in value.items():
        for i, row in enumerate(rows):
            data = row if SYSTEM_FIELD in row else {SYSTEM_FIELD: str(system), **row}
            out.records.append(Record(data, None, len(out.records), path=f"{system}[{i}]"))
    return out


def _is_squad(value: Any) -> bool:
    if not isinstance(value, Mapping) or not isinstance(value.get("data"), list) or not value["data"]:
        return False
    first = value["data"][0]
    return isinstance(first, Mapping) and isinstance(first.get("paragraphs"), list)


def _flatten_squad(value: Mapping[str, Any], file: str, encoding: str, warnings=()) -> RecordSet:
    out = RecordSet(file=file, format="squad", encoding=encoding, issues=list(warnings))
    for a, article in enumerate(value["data"]):
        paragraphs = article.get("paragraphs") if isinstance(article, Mapping) else None
        if not isinstance(paragraphs, list):
            out.issues.append(InputIssue(file, "expected a 'paragraphs' list", path=f"data[{a}]"))
            continue
        for p, para in enumerate(paragraphs):
            qas = para.get("qas") if isinstance(para, Mapping) else None
            if not isinstance(qas, list):
                out.issues.append(InputIssue(file, "expected a 'qas' list", path=f"data[{a}].paragraphs[{p}]"))
                continue
            for q, qa in enumerate(qas):
                if not isinstance(qa, Mapping) or "id" not in qa:
                    out.issues.append(InputIssue(file, "expected a question object with an 'id'",
                                                 path=f"data[{a}].paragraphs[{p}].qas[{q}]"))
                    continue
                answers = [x.get("text") for x in qa.get("answers") or [] if isinstance(x, Mapping)]
                record = {"id": str(qa["id"]).strip(), "question": qa.get("question", ""), "answers": answers}
                if isinstance(article, Mapping) and article.get("title"):
                    record["title"] = article["title"]
                out.records.append(Record(record, None, len(out.records)))
    return out


def read_qa_records(data: bytes, file: str = "<input>") -> RecordSet:
    """Read QA records from bytes (JSONL, JSON array, CSV or a SQuAD-style dataset).

    Parameters
    ----------
    data : bytes
        File content (UTF-8, UTF-8 with BOM or GB18030).
    file : str
        Name for messages and format sniffing.

    Returns
    -------
    RecordSet
        Records in file order with the issues found (broken lines are skipped and listed).

    Raises
    ------
    InputError
        When the bytes cannot be decoded.
    """
    return records_of(data, file, sniff_bytes(data, file))


def records_of(data: bytes, file: str, fmt: str) -> RecordSet:
    """:func:`read_qa_records` of a file whose format is known (``json``, ``jsonl`` or ``csv``): no second sniff.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    file : str
        Its name (for located problems).
    fmt : {"json", "jsonl", "csv"}
        Its format, as :func:`~evaluators.io.readers.sniff_bytes` found it.

    Returns
    -------
    RecordSet
        Records with their lines, and located problems; a SQuAD-style dataset or a grouped JSON
        file is flattened to one record per question.

    Raises
    ------
    InputError
        When the bytes cannot be decoded.
    """
    if fmt != "json":
        return read_records(data, file, fmt)
    value, out = read_json_document(data, file)
    if out.errors:
        return out
    if _is_squad(value):
        return _flatten_squad(value, file, out.encoding, out.issues)
    if _is_grouped(value):
        return _flatten_grouped(value, out)
    return add_json_records(value, out)


def read_prediction_map(data: bytes, file: str = "<predictions>") -> tuple[dict[str, Any], list[InputIssue]]:
    """Read a predictions file: a JSON object ``{id: answer}``, or records with an id and a prediction.

    Parameters
    ----------
    data : bytes
        The file's bytes (JSON, JSONL or CSV).
    file : str
        Its name, for located problems.

    Returns
    -------
    (predictions, issues)
        Answers keyed by id (as strings) and the problems found.

    Raises
    ------
    InputError
        When the bytes cannot be decoded, or the JSON is invalid.
    """
    fmt = sniff_bytes(data, file)
    if fmt == "json":
        value, rs = read_json_document(data, file)
        if rs.errors:
            raise InputError(rs.errors[0])
        if isinstance(value, dict) and records_field(value) is None:  # {id: answer}; answers may be lists
            return {str(k).strip(): v for k, v in value.items()}, list(rs.issues)
        add_json_records(value, rs)
    else:
        rs = read_records(data, file, fmt)
    out: dict[str, Any] = {}
    issues = list(rs.issues)
    for rec in rs.records:
        rid = text_field(rec.data, ID_FIELDS, allow_numbers=True)
        pred = next((rec.data[f] for f in DEFAULT_PRED_FIELDS + ("answer",) if f in rec.data), None)
        if rid is None:
            issues.append(InputIssue(file, "prediction record without an id field "
                                     f"(expected one of {', '.join(ID_FIELDS)})", **rec.where()))
            continue
        out[rid.strip()] = pred
    return out, issues


def join_predictions(records: RecordSet, predictions: Mapping[str, Any], pred_file: str) -> RecordSet:
    """Attach predictions by id to each record (field :data:`JOINED_PRED_FIELD`).

    Records whose id has no prediction keep no prediction (scored as missing); prediction
    ids that match no record are reported as one warning.

    Parameters
    ----------
    records : RecordSet
        The questions (a SQuAD-style dataset flattened).
    predictions : mapping of str to object
        Answers by id (:func:`read_prediction_map`).
    pred_file : str
        The predictions file's name, for the warning.

    Returns
    -------
    RecordSet
        New records (the originals are not changed), same order, with the issues of ``records``
        and at most one ``pairing`` warning added.
    """
    out = RecordSet(file=records.file, format=records.format, encoding=records.encoding, issues=list(records.issues))
    seen: set[str] = set()
    for rec in records.records:
        rid = text_field(rec.data, ID_FIELDS, allow_numbers=True)
        data = dict(rec.data)
        if rid is not None and rid.strip() in predictions:
            data[JOINED_PRED_FIELD] = predictions[rid.strip()]
            seen.add(rid.strip())
        out.records.append(Record(data, rec.line, rec.index))
    extra = [k for k in predictions if k not in seen]
    if extra:
        shown = ", ".join(extra[:10]) + (" ..." if len(extra) > 10 else "")
        out.issues.append(InputIssue(pred_file, f"{len(extra)} prediction id(s) match no question: {shown}",
                                     severity="warning", kind="pairing"))
    return out



@dataclass
class QASource:
    """One QA input, sniffed once and read once into records (with their located problems).

    Attributes
    ----------
    file : str
        Its name.
    format : str
        ``jsonl`` (streamed), ``json``, ``csv`` or ``squad``.
    records : RecordSet or iterator of tuple / InputIssue
        What the scorer consumes: the records read whole, or a one-pass stream of a JSONL
        input, parsed line by line as it is consumed (``(data, line, index, raw, offset)``
        tuples, :func:`evaluators.io.readers.iter_jsonl_values`; issues in the stream are located).
    total : int or None
        Lines of a stream when counted (for a progress bar), else ``None``.
    reader : callable or None
        ``reader(offset, length) -> bytes`` reading a streamed line back from the input
        (which the caller keeps), so per-record results can hold offsets instead of lines.
    blocks : callable or None
        ``blocks(offset) -> iterator of (bytes, offset)``: the raw input from ``offset`` in
        blocks of about :data:`BLOCK_BYTES` that end at a line end, parsed a block at a time
        (a file on disk or bytes; not an upload, which is read in place).
    opener : callable or None
        ``opener() -> binary file``: the raw input from its start, opened afresh (with ``blocks``).
    path : Path or None
        The file on disk, for worker processes that read their blocks themselves.
    """

    file: str
    format: str
    records: RecordSet | Iterator[tuple | InputIssue]
    total: int | None = None
    reader: Callable[[int, int], bytes] | None = None
    blocks: Callable[[int], Iterator[tuple[bytes, int]]] | None = None
    opener: Callable[[], BinaryIO] | None = None
    path: Path | None = None

    @property
    def streamed(self) -> bool:
        """Whether the records are a one-pass stream (JSONL)."""
        return not isinstance(self.records, RecordSet)


class LineReader:
    """``reader(offset, length) -> bytes`` over a file on disk, for records re-derived later.

    The file is opened on first use and kept open (closed with the reader), and read with
    ``os.pread`` where available (no shared file position, so threads can share it).  The
    file must not change after it was scored: the report reads its lines back from it.
    """

    def __init__(self, path: Path):
        self.path = path
        self._file: BinaryIO | None = None
        self._lock = threading.Lock()

    def __call__(self, offset: int, length: int) -> bytes:
        with self._lock:
            if self._file is None:
                self._file = open(self.path, "rb")
            if hasattr(os, "pread"):
                return os.pread(self._file.fileno(), length, offset)
            self._file.seek(offset)
            return self._file.read(length)

    def __del__(self) -> None:
        f = self._file
        if f is not None:
            f.close()

    def __getstate__(self) -> dict:  # picklable: the open file is not part of the state
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"])


#: Bytes per block of lines sent to a worker process.
BLOCK_BYTES = 1 << 20


def _blocks(open_input: Callable[[], BinaryIO], start: int) -> Iterator[tuple[bytes, int]]:
    """``(block, offset)`` of the input from ``start``, each block ending at a newline (the last at the end)."""
    with open_input() as f:
        f.seek(start)
        offset, rest = start, b""
        while True:
            chunk = f.read(BLOCK_BYTES)
            if not chunk:
                if rest:
                    yield rest, offset
                return
            chunk = rest + chunk if rest else chunk
            cut = chunk.rfind(b"\n")
            if cut < 0:
                rest = chunk  # a line longer than a block: read on
                continue
            yield chunk[:cut + 1], offset
            offset += cut + 1
            rest = chunk[cut + 1:]


def _count_lines(f: BinaryIO) -> int:
    f.seek(0)
    total = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) + 1
    f.seek(0)
    return total


def _stream_path(path: Path, name: str) -> Iterator[tuple | InputIssue]:
    """The JSONL records of a file on disk, one line in memory at a time; the file is closed at the end."""
    with open(path, "rb") as f:
        yield from iter_jsonl_values(f, name)


def open_qa_source(source: bytes | bytearray | memoryview | str | Path | BinaryIO, name: str | None = None, *,
                   predictions: bytes | None = None, predictions_file: str = "<predictions>",
                   count_lines: bool = False) -> QASource:
    """Sniff a QA input once and read it once into records (the one entry from bytes to records).

    JSONL without a separate predictions file is streamed (one line at a time; nothing is
    parsed until the records are consumed); every other input is read whole once and parsed
    by its format (JSON array or object, SQuAD-style dataset, ``{system: [records]}``, CSV),
    then joined with ``predictions`` by id when given.

    Parameters
    ----------
    source : bytes-like, path, or seekable binary file (an upload, ``open(path, "rb")``)
        A ``bytearray`` / ``memoryview`` is copied to ``bytes`` once (streamed lines are read
        back from it).
    name : str, optional
        File name for messages and format sniffing (default: the path, or the file's ``name``).
    predictions : bytes, optional
        A separate predictions file (``{id: answer}`` or records with id and prediction).
    predictions_file : str
        Its name.
    count_lines : bool
        Count the lines of a streamed file first (for a progress bar's total).

    Raises
    ------
    OSError
        If a file cannot be read.
    InputError
        When bytes cannot be decoded (or the predictions file is not valid JSON).  For a
        stream, decoding errors are raised when the records are consumed.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = name or str(path)
        with open(path, "rb") as f:
            fmt = sniff_bytes(f.read(65536), name)
            if predictions is None and fmt == "jsonl":
                total = _count_lines(f) if count_lines else None
                opener = partial(open, path, "rb")
                return QASource(name, "jsonl", _stream_path(path, name), total, LineReader(path),
                                partial(_blocks, opener), opener, path)
            f.seek(0)
            data = f.read()
        return _whole(data, name, fmt, predictions, predictions_file)
    if hasattr(source, "read"):
        name = name or str(getattr(source, "name", "<input>"))
        source.seek(0)
        head = source.read(65536)
        source.seek(0)
        fmt = sniff_bytes(head, name)
        if predictions is None and fmt == "jsonl":
            reader = None
            if hasattr(source, "getbuffer"):
                def reader(off: int, n: int) -> bytes:  # an in-memory file (an upload): read in place, no copy
                    with source.getbuffer() as view:
                        return bytes(view[off:off + n])
            total = _count_lines(source) if count_lines else None
            return QASource(name, "jsonl", iter_jsonl_values(source, name), total, reader)
        return _whole(source.read(), name, fmt, predictions, predictions_file)
    data = source if isinstance(source, bytes) else bytes(source)
    name = name or "<input>"
    fmt = sniff_bytes(data[:65536], name)
    if predictions is None and fmt == "jsonl":
        total = data.count(b"\n") + 1 if count_lines else None
        opener = partial(io.BytesIO, data)
        return QASource(name, "jsonl", iter_jsonl_values(data, name), total, lambda off, n: data[off:off + n],
                        partial(_blocks, opener), opener)
    return _whole(data, name, fmt, predictions, predictions_file)


def _whole(data: bytes, name: str, fmt: str, predictions: bytes | None, predictions_file: str) -> QASource:
    records = records_of(data, name, fmt)
    if predictions is not None:
        mapping, issues = read_prediction_map(predictions, predictions_file)
        records = join_predictions(records, mapping, predictions_file)
        records.issues.extend(issues)
    return QASource(name, records.format, records)
