"""The one CSV writer of EvalBoard: every CSV the CLI writes and every CSV download goes through it.

Spreadsheet formula injection (OWASP "CSV Injection"): a cell whose text starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return can run as a formula when the file is opened
in Excel, LibreOffice or Google Sheets (``=cmd|' /C calc'!A0``).  Such text cells get a
leading apostrophe, which spreadsheets show as a text marker; numbers (``-0.5`` as a float)
are written as they are.  Text is UTF-8; callers that serve a download for Excel encode it
as UTF-8 with a BOM.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """A cell as written: ``None`` -> ``""``; text starting a formula gets a leading apostrophe.

    >>> safe_cell("=cmd|' /C calc'!A0"), safe_cell("-1 分"), safe_cell(-0.5), safe_cell(None), safe_cell("正常")
    ("'=cmd|' /C calc'!A0", "'-1 分", -0.5, '', '正常')
    """
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]], *, lineterminator: str = "\r\n") -> str:
    """CSV text of a header and rows, every cell through :func:`safe_cell`.

    Parameters
    ----------
    header : sequence of str
        Column names (also made safe).
    rows : iterable of sequences
        One sequence of cells per row.
    lineterminator : str
        ``"\\r\\n"`` (the csv module's default, RFC 4180) or ``"\\n"``.

    Returns
    -------
    str
        The CSV text; minimal quoting (csv.QUOTE_MINIMAL).
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=lineterminator)
    writer.writerow([safe_cell(h) for h in header])
    writer.writerows([safe_cell(v) for v in row] for row in rows)
    return buf.getvalue()


def write_dict_csv(fieldnames: Sequence[str], rows: Iterable[Mapping[str, Any]], *,
                   lineterminator: str = "\r\n") -> str:
    """:func:`write_csv` of mappings, one column per field name (a missing key is an empty cell)."""
    return write_csv(fieldnames, ([row.get(f) for f in fieldnames] for row in rows), lineterminator=lineterminator)


def csv_cell(value: Any) -> str:
    """One cell's text as :func:`write_csv` writes it: :func:`safe_cell`, then the csv module's minimal quoting.

    For writers that render many rows at once, column by column (the QA report's per-record CSV,
    :func:`evaluators.reports.qa.render_csv_rows`): joined with ``","`` and ``"\\r\\n"`` the cells give
    :func:`write_csv`'s text (tested) for rows of two or more cells (the csv module writes a row of one empty
    cell as ``""``).

    Parameters
    ----------
    value : str, int, float, bool or None
        ``None`` is an empty cell; other non-text values are written with ``str``.

    Returns
    -------
    str

    >>> csv_cell("=1+1"), csv_cell('说 "好" 吧'), csv_cell("a,b"), csv_cell(None), csv_cell(0.25)
    ("'=1+1", '"说 ""好"" 吧"', '"a,b"', '', '0.25')
    """
    if value is None:
        return ""
    if isinstance(value, str):
        if value.startswith(FORMULA_START):
            value = "'" + value
        if '"' in value:
            return '"' + value.replace('"', '""') + '"'
        if "," in value or "\n" in value or "\r" in value:  # (each a fast search for one character)
            return '"' + value + '"'
        return value
    return str(value)


def csv_column(values: Sequence[Any], repeating: bool = False) -> list[str]:
    """:func:`csv_cell` of each value of a column.

    Parameters
    ----------
    values : sequence
        The column's values, one per row.
    repeating : bool
        The column holds a few distinct values (a status, a score): each distinct one is rendered once.

    Returns
    -------
    list of str
        One cell per value, in order.
    """
    if not repeating:  # a plain text (the common case) is its own cell: checked here without a call
        return [v if v.__class__ is str and not v.startswith(FORMULA_START) and '"' not in v and "," not in v
                and "\n" not in v and "\r" not in v else csv_cell(v) for v in values]
    seen: dict[tuple[type, Any], str] = {}  # keyed with the type: 0, 0.0 and False are equal keys, not equal cells
    return [seen[k] if (k := (v.__class__, v)) in seen else seen.setdefault(k, csv_cell(v)) for v in values]
