"""The one face of located input problems on every page: counts by severity, identical problems folded
into one row with their count (:func:`evaluators.reports.format.fold_problems`, the lines the CLI prints),
and a CSV of every problem, one a row.

A page gives the problems it has (an upload's, a run's, a patch file's); when they keep something from
being used (the page stops, a cache is left out) it says so (``error``): the first problem is written into
a red box, the rest listed under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

#: Folded rows listed on the page; the CSV has every problem.
SHOWN = 20

#: Kinds of error that lose a whole file (listed first).
FILE_LEVEL = ("decode", "json", "pairing", "taxonomy", "settings")

#: Columns of the table on the page (one group of identical problems a row).
COLUMNS = ("severity", "count", "where", "problem")

#: Columns of the CSV of all problems (one problem a row).
CSV_FIELDS = ("severity", "kind", "file", "line", "path", "message")


def _ordered(issues: Sequence[Any], severity: str | None) -> list[Any]:
    """Errors that lose a whole file first, then the other errors, then warnings (each in input order)."""
    def rank(issue: Any) -> int:
        if (severity or issue.severity) != "error":
            return 2
        return 0 if issue.kind in FILE_LEVEL else 1

    return sorted(issues, key=rank)


def problem_rows(issues: Sequence[Any], severity: str | None = None) -> list[dict[str, Any]]:
    """Input problems as table rows, identical ones folded into one row with their count.

    Parameters
    ----------
    issues : sequence of InputIssue, length n
        Located problems (``severity``, ``file``, ``line``, ``path``, ``message``, ``kind``).
    severity : str, optional
        Replaces each issue's own severity (a patch file's skipped line is a ``"warning"``), as in
        :func:`evaluators.reports.format.problem_lines`.

    Returns
    -------
    list of dict, length <= n
        ``{"severity", "where", "problem", "count"}`` per group of identical problems (same severity,
        file and message; :func:`evaluators.reports.format.fold_problems`): file-level errors first, then
        the other errors, then warnings.  ``"{severity}: {where}: {problem}"`` is the line the CLI prints.
    """
    from evaluators.reports.format import fold_problems, folded_location

    return [{"severity": severity or first.severity, "where": folded_location(group), "problem": first.message,
             "count": len(group)} for first, group in fold_problems(_ordered(issues, severity), severity)]


def problems_csv(issues: Sequence[Any], severity: str | None = None) -> bytes:
    """Every input problem as CSV, one a row (:data:`CSV_FIELDS`), UTF-8 with a BOM (opens in Excel).

    Parameters
    ----------
    issues : sequence of InputIssue, length n
    severity : str, optional
        As for :func:`problem_rows`.

    Returns
    -------
    bytes
        A header and n rows, in the order of :func:`problem_rows`.
    """
    from evaluators.reports.csv_writer import write_dict_csv

    return write_dict_csv(CSV_FIELDS, [{"severity": severity or i.severity, "kind": i.kind, "file": i.file,
                                        "line": i.line, "path": i.path, "message": i.message}
                                       for i in _ordered(issues, severity)]).encode("utf-8-sig")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def show_problems(issues: Sequence[Any], *, key: str, title: str = "Input problems", severity: str | None = None,
                  error: str | None = None, rest: str = "the rest of the data is still scored") -> None:
    """Show located input problems: counts by severity, identical ones folded, a CSV of all; nothing when none.

    An expander titled ``"{title}: 2 errors, 1 warning"`` (open when a problem is an error) holds a static
    table of :func:`problem_rows` (:data:`COLUMNS`, the first :data:`SHOWN` rows) and, when rows were folded
    or cut, a *Download all problems (CSV)* button (:func:`problems_csv`).  With ``error``, the problems
    keep something from being used: a red box says ``error`` and the first problem's line; the expander
    follows when there is more than one problem.  User text is escaped.

    Parameters
    ----------
    issues : sequence of InputIssue
    key : str
        Widget key prefix (unique on the page).
    title : str
        The project's own words for these problems (``"Input problems"``, ``"Problems in run2.jsonl"``);
        escaped.
    severity : str, optional
        Replaces each issue's own severity (as in :func:`problem_rows`).
    error : str, optional
        What the problems keep from being used (escaped), e.g. ``"No usable question in the upload:"``, or
        ``""`` for the problem's line alone.  The caller stops the page when it must.
    rest : str
        Without ``error``, what happens to the rest after the counts (the project's own words; an import's
        other lines are imported, not scored).
    """
    from evaluators.reports.escape import md

    from components.static import static_records

    issues = list(issues)
    rows = problem_rows(issues, severity)
    if error is not None:
        first = f"{rows[0]['severity']}: {rows[0]['where']}: {rows[0]['problem']}" if rows else ""
        more = len(rows) - 1
        st.error(" ".join(part for part in (md(error), md(first)) if part)
                 + (f" (and {_plural(more, 'more problem')}, listed below)" if more > 0 else ""))
        if len(issues) < 2:
            return
    if not issues:
        return
    errors = sum(1 for i in issues if (severity or i.severity) == "error")
    label = f"{md(title)}: {_plural(errors, 'error')}, {_plural(len(issues) - errors, 'warning')}"
    if error is None:
        label += f" — {rest}"
    with st.expander(label, expanded=errors > 0, icon=":material/error:" if errors else ":material/warning:"):
        # the short columns first: on a phone the table scrolls sideways and the count stays in sight
        static_records(rows, COLUMNS, max_rows=SHOWN)
        if len(rows) < len(issues) or len(rows) > SHOWN:  # folded or cut: the CSV has every problem
            st.caption(f"Identical problems are one row with their count; the CSV has all {len(issues)}, one a row.")
            st.download_button("Download all problems (CSV)", lambda: problems_csv(issues, severity),
                               file_name="input_problems.csv", mime="text/csv", key=f"{key}_csv", on_click="ignore")
