"""Downloads of a QA report: the JSON report and the per-record CSV (both carry the signature)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from evaluators.qa.evaluate import QARecordResult, QAReport
from evaluators.reports.csv_writer import write_dict_csv

RECORD_COLUMNS = (
    "id", "group", "status", "lang", "tokenizer", "exact_match", "token_f1", "question", "gold_answers",
    "gold_field", "prediction", "prediction_raw", "prediction_field", "gold_verdict", "predicted_verdict",
    "verdict_rule", "line",
)


def record_rows(report: QAReport) -> list[dict[str, Any]]:
    """One flat dict per record (gold answers joined with `` | ``), columns :data:`RECORD_COLUMNS`."""
    return rows_of(report.records)


def rows_of(records: Iterable[QARecordResult]) -> list[dict[str, Any]]:
    """:func:`record_rows` for any records (e.g. the few shown in a table)."""
    rows = []
    for r in records:
        row = {c: getattr(r, c) for c in RECORD_COLUMNS}
        row["gold_answers"] = " | ".join(r.gold_answers)
        rows.append(row)
    return rows


def report_json(report: QAReport, *, include_records: bool = True) -> str:
    """The report as pretty JSON (UTF-8 text, no NaN); records included by default."""
    data = report.to_dict()
    if not include_records:
        data.pop("records", None)
    return json.dumps(data, ensure_ascii=False, indent=2)


def records_csv(report: QAReport) -> str:
    """Per-record CSV text (UTF-8, :mod:`evaluators.reports.csv_writer`); the last column repeats the signature."""
    rows = record_rows(report)
    for row in rows:
        row["signature"] = report.signature
    return write_dict_csv([*RECORD_COLUMNS, "signature"], rows)
