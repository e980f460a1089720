"""Aligned plain-text tables for the terminal (CJK characters count as two columns)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from evaluators.metrics.classification import ClassificationReport
from evaluators.reports.format import percent


def display_width(text: str) -> int:
    """Terminal columns of ``text``: wide and full-width characters count 2, combining marks 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int, align: str) -> str:
    gap = width - display_width(text)
    if gap <= 0:
        return text
    return (" " * gap + text) if align == "right" else (text + " " * gap)


def format_table(header: Sequence[Any], rows: Sequence[Sequence[Any]], *, first_align: str = "left") -> str:
    """Render rows as an aligned table with a rule under the header.

    The first column is aligned ``first_align``; the other columns are right-aligned.
    """
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(display_width(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for k, row in enumerate(cells):
        parts = [_pad(c, widths[i], first_align if i == 0 else "right") for i, c in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
        if k == 0:
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    return "\n".join(lines)


def confusion_table(report: ClassificationReport, rows: str = "true") -> str:
    """The confusion matrix with row and column totals; the corner names both axes (``true \\ predicted``).

    Parameters
    ----------
    report : ClassificationReport
    rows : {"true", "predicted"}
        ``"true"`` (default) puts the true labels on rows, as scikit-learn, the QA page and the HTML
        report; ``"predicted"`` the predictions (the earlier fact-check script's layout).
    """
    matrix = report.matrix(rows)
    labels = [str(label) for label in report.labels]
    corner = "predicted \\ true" if rows == "predicted" else "true \\ predicted"
    body = [[label, *row, sum(row)] for label, row in zip(labels, matrix)]
    col_totals = [sum(r[j] for r in matrix) for j in range(len(labels))]
    body.append(["total", *col_totals, sum(col_totals)])
    return format_table([corner, *labels, "total"], body)


def per_class_table(report: ClassificationReport) -> str:
    """Per-class precision, recall, F1 and support, then macro and weighted averages."""
    rows = [[str(m.label), percent(m.precision), percent(m.recall), percent(m.f1), m.support] for m in report.per_class]
    for avg in (report.macro, report.weighted):
        rows.append([f"{avg.kind} avg", percent(avg.precision), percent(avg.recall), percent(avg.f1),
                     sum(m.support for m in report.per_class if m.label in report.average_labels)])
    return format_table(["class", "precision", "recall", "f1", "support"], rows)
