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
