"""Downloads of a QA report: the JSON report and the per-record CSV (both carry the signature).

Both are written by streaming writers (:func:`write_report_json`, :func:`write_records_csv`):
one record at a time, so a report of a million records is never materialised as rows.  The
CLI goes one step further and renders each record's row while it is scored (:func:`json_rows`,
:func:`csv_rows`, passed to :func:`evaluators.qa.run.run_qa`), in worker processes when there
are several; the text is the same as the one the writers give from the finished report.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import io
import json
import os
import shutil
from collections.abc import Iterable
from itertools import starmap
from typing import IO, Any

from evaluators.qa.evaluate import QARecordResult, QAReport, RowSink
from evaluators.qa.run import RECORD_COLUMNS, record_row
from evaluators.reports.csv_writer import csv_cell, csv_column, write_dict_csv
from evaluators.results import to_jsonable
from evaluators.io.json_text import dumps_pretty, dumps_pretty_bytes

__all__ = ["RECORD_COLUMNS", "csv_rows", "json_rows", "record_rows", "records_csv", "report_json", "rows_of",
           "write_records_csv", "write_report_json"]

_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(QARecordResult))


def record_rows(report: QAReport) -> list[dict[str, Any]]:
    """One flat dict per record (gold answers joined with `` | ``), columns :data:`RECORD_COLUMNS`."""
    return rows_of(report.records)


def rows_of(records: Iterable[QARecordResult]) -> list[dict[str, Any]]:
    """:func:`record_rows` for any records (e.g. the few shown in a table)."""
    return [record_row(r) for r in records]


def _values(r: QARecordResult) -> tuple:
    return tuple(getattr(r, f) for f in _RECORD_FIELDS)


def _record_dict(index, line, id, group, question, gold_answers, gold_field, prediction_raw,  # noqa: A002
                 prediction_field, prediction, status, lang, tokenizer, exact_match, token_f1, gold_verdict,
                 predicted_verdict, verdict_rule):
    """A record's values as the dict the report holds: the fields of QARecordResult, in order (tested)."""
    return {"index": index, "line": line, "id": id, "group": group, "question": question,
            "gold_answers": gold_answers, "gold_field": gold_field, "prediction_raw": prediction_raw,
            "prediction_field": prediction_field, "prediction": prediction, "status": status, "lang": lang,
            "tokenizer": tokenizer, "exact_match": exact_match, "token_f1": token_f1, "gold_verdict": gold_verdict,
            "predicted_verdict": predicted_verdict, "verdict_rule": verdict_rule}


def render_json_rows(rows: list[tuple], signature: str) -> bytes:
    """Records as they stand in the report's ``records`` list: pretty JSON (UTF-8), indented 4, each led by
    ``,`` and a line break (the writer drops the first comma).  ``rows``: each record's values in field order.

    One pretty-JSON call per block of records (:func:`evaluators.io.json_text.dumps_pretty_bytes`: orjson's
    text where it equals ``json.dumps(indent=2)``'s).
    """
    if not rows:
        return b""
    body = dumps_pretty_bytes(list(starmap(_record_dict, rows)))[1:-2]  # without "[" and "\n]"
    return b"," + body.replace(b"\n", b"\n  ")


_COLUMN_AT = tuple(_RECORD_FIELDS.index(c) for c in RECORD_COLUMNS)
_GOLD_AT = _RECORD_FIELDS.index("gold_answers")
_GOLD_COLUMN = RECORD_COLUMNS.index("gold_answers")
_PREDICTION_AT, _PREDICTION_COLUMN = _RECORD_FIELDS.index("prediction"), RECORD_COLUMNS.index("prediction")
assert _PREDICTION_COLUMN < RECORD_COLUMNS.index("prediction_raw")  # rendered before it (render_csv_rows)


#: Columns whose values repeat (a few distinct ones in a file): each distinct value is rendered once a block.
_REPEATING = frozenset({"group", "status", "lang", "tokenizer", "exact_match", "token_f1", "gold_field",
                        "prediction_field", "gold_verdict", "predicted_verdict", "verdict_rule"})


def render_csv_rows(rows: list[tuple], signature: str) -> bytes:
    """Records' CSV rows, UTF-8 (columns :data:`RECORD_COLUMNS` then the signature); ``rows``: values in field order.

    The text is what :func:`~evaluators.reports.csv_writer.write_dict_csv` writes for the same rows (tested),
    rendered column by column.
    """
    if not rows:
        return b""
    tail = "," + csv_cell(signature) + "\r\n"
    fields = list(zip(*rows))
    cells = []
    for name, at in zip(RECORD_COLUMNS, _COLUMN_AT):
        if name == "prediction_raw":  # mostly the very text scored (no tags, nothing stripped): its cell again
            cells.append([done if raw is scored else csv_cell(raw)
                          for raw, scored, done in zip(fields[at], fields[_PREDICTION_AT], cells[_PREDICTION_COLUMN])])
            continue
        values = fields[at] if at != _GOLD_AT else [" | ".join(g) for g in fields[at]]
        cells.append(csv_column(values, name in _REPEATING))
    tail = tail.encode("utf-8")
    return tail.join(map(str.encode, map(",".join, zip(*cells)))) + tail  # rows without a wide character: copied


def _csv_header() -> str:
    return write_dict_csv([*RECORD_COLUMNS, "signature"], [])


def write_records_csv(report: QAReport, out: IO[str]) -> None:
    """Per-record CSV (UTF-8 text, one row per record, the last column repeats the signature), streamed to ``out``."""
    out.write(_csv_header())
    block: list[tuple] = []
    for r in report.records:
        block.append(_values(r))
        if len(block) >= 1000:
            out.write(render_csv_rows(block, report.signature).decode("utf-8"))
            block = []
    out.write(render_csv_rows(block, report.signature).decode("utf-8"))


def records_csv(report: QAReport) -> str:
    """:func:`write_records_csv` as text."""
    buf = io.StringIO()
    write_records_csv(report, buf)
    return buf.getvalue()


def copy_range(source: str | IO[bytes], offset: int, length: int, out: IO[bytes]) -> None:
    """Append ``length`` bytes from ``offset`` of ``source`` (a file name or an open binary file) to the
    binary file ``out``.

    The kernel copies them (``os.copy_file_range``) when it can, else they are read and written
    in 1 MiB pieces; ``out`` is left positioned at its end.
    """
    with (open(source, "rb") if isinstance(source, str) else contextlib.nullcontext(source)) as src:
        out.flush()
        copier = getattr(os, "copy_file_range", None)
        if copier is not None:
            try:
                while length > 0:
                    n = copier(src.fileno(), out.fileno(), length, offset)
                    if n <= 0:
                        break
                    offset, length = offset + n, length - n
            except OSError:
                pass  # another file system, a pipe or a terminal, or not supported here: copied below
            if out.seekable():  # a pipe (``qa --format json | jq``) is not, and takes no bytes from the kernel copy
                out.seek(0, os.SEEK_END)
        while length > 0:
            chunk = os.pread(src.fileno(), min(length, 1 << 20), offset)
            if not chunk:
                raise OSError(f"{source} ends before offset {offset + length}")
            out.write(chunk)
            offset, length = offset + len(chunk), length - len(chunk)


def csv_rows(out: IO[bytes]) -> RowSink:
    """A row sink writing the per-record CSV (UTF-8) to the binary file ``out`` (seekable) while the records
    are scored."""
    out.write(_csv_header().encode("utf-8"))
    start = out.tell()

    def reset() -> None:
        out.seek(start)
        out.truncate()

    return RowSink(render_csv_rows, out.write, write_range=lambda path, offset, length: copy_range(path, offset,
                                                                                                   length, out),
                   reset=reset)


class _JsonSpool:
    """Record texts written while scoring, kept (UTF-8) in a temporary file until the report's head is known."""

    def __init__(self):
        import tempfile

        self.file = tempfile.TemporaryFile("w+b")
        self.started = False

    def write(self, text: bytes) -> None:
        if not text:
            return
        if not self.started:  # the first record has no comma before it
            text, self.started = text[1:], True
        self.file.write(text)

    def reset(self) -> None:
        """Forget the records written so far."""
        self.file.seek(0)
        self.file.truncate()
        self.started = False

    def write_range(self, path: str, offset: int, length: int) -> None:
        """:meth:`write` of the bytes from ``offset`` of the file ``path`` (rows a worker wrote)."""
        if not length:
            return
        if not self.started:
            offset, length, self.started = offset + 1, length - 1, True
        copy_range(path, offset, length, self.file)

    def copy_to(self, out: IO[str]) -> None:
        """Write the spooled records to ``out`` (through its byte buffer when it has one)."""
        self.file.flush()
        self.file.seek(0)
        buffer = getattr(out, "buffer", None)
        if buffer is not None and getattr(out, "encoding", "").lower().replace("-", "") == "utf8":
            out.flush()
            try:
                buffer.fileno()
            except (OSError, io.UnsupportedOperation):  # not a file on disk
                shutil.copyfileobj(self.file, buffer, 1 << 20)
            else:  # the kernel copies
                copy_range(self.file, 0, os.fstat(self.file.fileno()).st_size, buffer)
            return
        decoder = codecs.getincrementaldecoder("utf-8")()  # a chunk may end inside a character
        for chunk in iter(lambda: self.file.read(1 << 20), b""):
            out.write(decoder.decode(chunk))
        out.write(decoder.decode(b"", final=True))


def json_rows() -> tuple[RowSink, _JsonSpool]:
    """A row sink for :func:`write_report_json`: records rendered while scored, spooled to a temporary file."""
    spool = _JsonSpool()
    return RowSink(render_json_rows, spool.write, indexed=True, write_range=spool.write_range,
                   reset=spool.reset), spool


def write_report_json(report: QAReport, out: IO[str], *, include_records: bool = True,
                      spool: _JsonSpool | None = None, gt_patch: dict | None = None) -> None:
    """The report as pretty JSON (UTF-8 text, no NaN), written field by field to ``out``.

    The text equals ``json.dumps(report.to_dict(), ensure_ascii=False, indent=2)`` (tested);
    records are written one at a time (from ``spool`` when they were rendered while scoring).
    ``gt_patch`` (the review corrections' before / after section,
    :func:`evaluators.reports.corrections.corrections_jsonable`) is written last, as ``"gt_patch"``.
    """
    out.write("{")
    first = True
    for f in dataclasses.fields(report):
        if f.name == "records" and not include_records:
            continue
        out.write(("" if first else ",") + "\n  " + json.dumps(f.name) + ": ")
        first = False
        if f.name != "records":
            out.write(dumps_pretty(to_jsonable(getattr(report, f.name))).replace("\n", "\n  "))
            continue
        if spool is None:  # written here from the report, in blocks, by the same renderer
            spool = _JsonSpool()
            block: list[tuple] = []
            for r in report.records:
                block.append(_values(r))
                if len(block) >= 1000:
                    spool.write(render_json_rows(block, report.signature))
                    block = []
            spool.write(render_json_rows(block, report.signature))
        if not spool.started:
            out.write("[]")
            continue
        out.write("[")
        spool.copy_to(out)
        out.write("\n  ]")
    if gt_patch is not None:
        out.write(",\n  \"gt_patch\": " + dumps_pretty(gt_patch).replace("\n", "\n  "))
    out.write("\n}")


def report_json(report: QAReport, *, include_records: bool = True) -> str:
    """The report as pretty JSON text (see :func:`write_report_json`); records included by default."""
    buf = io.StringIO()
    write_report_json(report, buf, include_records=include_records)
    return buf.getvalue()


def matrix_rows(view) -> list[dict[str, Any]]:
    """The records x systems matrix of a :class:`~evaluators.qa.compare.SideBySide` as flat rows.

    Columns: ``id``, ``agreement``, ``question``, ``gold_answers`` (joined with `` | ``), then per
    system ``<system>: prediction``, ``<system>: exact_match``, ``<system>: token_f1``
    (``None`` where the system has no scored record with that id).
    """
    rows = []
    for r in view.rows:
        row: dict[str, Any] = {"id": r.id, "agreement": r.agreement, "question": r.question,
                               "gold_answers": " | ".join(r.gold_answers)}
        for k, s in enumerate(view.systems):
            row[f"{s}: prediction"] = r.predictions[k]
            row[f"{s}: exact_match"] = r.exact_match[k]
            row[f"{s}: token_f1"] = r.token_f1[k]
        rows.append(row)
    return rows


def matrix_csv(view, signature: str) -> str:
    """:func:`matrix_rows` as CSV text through the one writer; the last column repeats the signature."""
    rows = matrix_rows(view)
    columns = ["id", "agreement", "question", "gold_answers"]
    columns += [f"{s}: {c}" for s in view.systems for c in ("prediction", "exact_match", "token_f1")]
    for row in rows:
        row["signature"] = signature
    return write_dict_csv([*columns, "signature"], rows)


def comparison_json(view, comparison=None, signature: str = "", gt_patch: dict | None = None) -> str:
    """Side-by-side scores (and the paired comparison, if given) as pretty JSON with the signature;
    ``gt_patch``: the review corrections' before / after section
    (:func:`evaluators.reports.corrections.corrections_jsonable`), as ``"gt_patch"``."""
    data: dict[str, Any] = {"signature": signature, "systems": list(view.systems),
                            "scores": [s.to_dict() for s in view.scores], "agreement": dict(view.counts),
                            "common": {"n_common": view.common.n_common, "n_by_system": dict(view.common.n_by_system),
                                       "same": view.common.same,
                                       "scores": [s.to_dict() for s in view.common_scores]},
                            "matrix": matrix_rows(view)}
    if comparison is not None:
        data["comparison"] = comparison.to_dict()
    if gt_patch is not None:
        data["gt_patch"] = gt_patch
    return dumps_pretty(data)


SUMMARY_COLUMNS = ("subset", "n", "exact_match", "exact_match_ci_low", "exact_match_ci_high", "token_f1",
                   "token_f1_ci_low", "token_f1_ci_high", "ci")


def summary_csv(report: QAReport) -> str:
    """EM / F1 with their bootstrap intervals overall, by language and by group, as CSV (one writer).

    Columns :data:`SUMMARY_COLUMNS` plus ``signature``; one row per subset (``overall``,
    ``lang=<code>``, ``<group field>=<value>``).  For fact-check, one more row per class with its
    F1 (in ``token_f1``) and interval, and ``macro_f1`` / ``accuracy``.
    """
    subsets = [("overall", report.overall)] + [(f"lang={k}", v) for k, v in report.by_lang.items()]
    subsets += [(f"{report.group_field}={k}", v) for k, v in report.by_group.items()]
    rows = [{"subset": name, **{c: getattr(s, c) for c in SUMMARY_COLUMNS[1:]}} for name, s in subsets]
    cls, ci = report.classification, report.classification_ci
    if cls is not None:
        for m in cls.per_class:
            rows.append({"subset": f"class={m.label}", "n": m.support, "token_f1": m.f1,
                         "token_f1_ci_low": ci.f1_ci_low.get(m.label) if ci else None,
                         "token_f1_ci_high": ci.f1_ci_high.get(m.label) if ci else None, "ci": ci and ci.signature})
        rows.append({"subset": "macro_f1", "n": cls.n, "token_f1": cls.macro.f1,
                     "token_f1_ci_low": ci and ci.macro_f1_ci_low, "token_f1_ci_high": ci and ci.macro_f1_ci_high,
                     "ci": ci and ci.signature})
        rows.append({"subset": "accuracy", "n": cls.n, "exact_match": cls.accuracy,
                     "exact_match_ci_low": ci and ci.accuracy_ci_low, "exact_match_ci_high": ci and ci.accuracy_ci_high,
                     "ci": ci and ci.signature})
    for row in rows:
        row["signature"] = report.signature
    return write_dict_csv([*SUMMARY_COLUMNS, "signature"], rows)


def systems_csv(view, signature: str = "") -> str:
    """Per-system EM / F1 with intervals of a :class:`~evaluators.qa.compare.SideBySide`, as CSV (one writer)."""
    columns = ("system", *SUMMARY_COLUMNS[1:])
    rows = [{**{c: getattr(s, c) for c in columns}, "signature": signature} for s in view.scores]
    return write_dict_csv([*columns, "signature"], rows)
