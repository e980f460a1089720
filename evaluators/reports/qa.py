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


def comparison_json(view, comparison=None, signature: str = "") -> str:
    """Side-by-side scores (and the paired comparison, if given) as pretty JSON with the signature."""
    data: dict[str, Any] = {"signature": signature, "systems": list(view.systems),
                            "scores": [s.to_dict() for s in view.scores], "agreement": dict(view.counts),
                            "matrix": matrix_rows(view)}
    if comparison is not None:
        data["comparison"] = comparison.to_dict()
    return json.dumps(data, ensure_ascii=False, indent=2)


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
