"""Metric cards and formatting helpers."""

from __future__ import annotations


import streamlit as st

from evaluators.reports.format import MISSING, fixed
from evaluators.reports.format import number as fmt  # noqa: F401 - re-exported: the pages format scores with it
from evaluators.reports.escape import html_text, md


def metric_row(items: list[tuple[str, float | int | str | None, str | None]], *, digits: int = 3) -> None:
    """A row of ``st.metric`` cards: ``(label, value, help)``; ``None`` is shown as ``—``
    (:data:`~evaluators.reports.format.MISSING`), text as it is.

    The cards sit in a horizontal container that wraps, each as wide as its label or value (at least
    150 px: :data:`components.layout.TEXT_STYLE`): a long value such as
    "2400 / 2400" widens its card instead of being cut to "2400 / …" in a fixed column, and a card
    that no longer fits moves to the next line.  On a phone they fill two or three to a line instead
    of one column each (ten cards stacked one per line pushed the content two screens down).  Labels
    and values wrap rather than end in an ellipsis (the page frame's style).
    """
    with st.container(horizontal=True, gap="small"):
        for label, value, help_text in items:
            st.metric(label, value if isinstance(value, str) else fmt(value, digits), help=help_text, width="content")


def signature_caption(signature: str) -> None:
    """The settings that produced the numbers, in small print under them."""
    st.caption(f"Signature: {md(signature)}")


def score_table_html(columns: list[str], rows: list[tuple[str, list[float | None]]]) -> str:
    """A small static table of scores with inline bars (escaped; no data-grid or pandas needed).

    Parameters
    ----------
    columns : list of str
        Score column titles.
    rows : list of (label, values)
        One row per item; ``None`` is shown as ``—``.
    """
    head = "".join(f"<th style='text-align:left;padding:4px 10px'>{html_text(c, breaks=False)}</th>" for c in columns)
    body = []
    for label, values in rows:
        cells = []
        for v in values:
            if v is None:
                cells.append(f"<td style='padding:4px 10px;color:#888'>{MISSING}</td>")
                continue
            pct = max(0.0, min(1.0, v)) * 100
            cells.append(
                f"<td style='padding:4px 10px;white-space:nowrap'><span style='display:inline-block;width:70px;"
                f"height:8px;background:#e3e8ef;border-radius:4px;vertical-align:middle;margin-right:6px'>"
                f"<span style='display:block;width:{fixed(pct, 0)}%;height:8px;background:#1565c0;border-radius:4px'>"
                f"</span></span>{fixed(v)}</td>")
        body.append(f"<tr><td style='padding:4px 10px'>{html_text(label, breaks=False)}</td>{''.join(cells)}</tr>")
    # in a box that scrolls sideways: six score columns are wider than a phone (they ran past its edge)
    return (f"<div style='overflow-x:auto;max-width:100%'>"
            f"<table class='eb-scores' style='border-collapse:collapse;font-size:0.9rem'>"
            f"<thead><tr><th></th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")
