"""Character-level diff highlight of an expected and a predicted reply (HTML-escaped)."""

from __future__ import annotations


import streamlit as st
from evaluators.reports.escape import html_text, md

_STYLE = {
    "delete": "background:#ffd7d5;text-decoration:line-through;",
    "insert": "background:#ccf2d1;",
}


def diff_html(ops: list[tuple[str, str, str]]) -> tuple[str, str]:
    """HTML of the expected and the predicted side from ``evaluators.text.diff.char_diff`` opcodes.

    Every text piece goes through :func:`evaluators.reports.escape.html_text` (newlines as ``<br>``,
    carriage returns and other hidden characters shown); only the span tags are ours.
    """
    left, right = [], []
    for tag, a, b in ops:
        a_html, b_html = html_text(a), html_text(b)
        if tag == "equal":
            left.append(a_html)
            right.append(b_html)
            continue
        if a:
            left.append(f'<span style="{_STYLE["delete"]}">{a_html}</span>')
        if b:
            right.append(f'<span style="{_STYLE["insert"]}">{b_html}</span>')
    return "".join(left), "".join(right)


def render_char_diff(ops: list[tuple[str, str, str]], labels: tuple[str, str] = ("Expected", "Predicted")) -> None:
    """Show expected and predicted side by side, differing characters highlighted."""
    left, right = diff_html(ops)
    c1, c2 = st.columns(2)
    box = 'style="border:1px solid #ddd;border-radius:6px;padding:8px;font-size:1.05rem;line-height:1.7"'
    with c1:
        st.caption(md(labels[0]) + " (red: not in the prediction)")
        st.markdown(f'<div class="evalboard-diff" {box}>{left or "&nbsp;"}</div>', unsafe_allow_html=True)
    with c2:
        st.caption(md(labels[1]) + " (green: not in the expected reply)")
        st.markdown(f'<div class="evalboard-diff" {box}>{right or "&nbsp;"}</div>', unsafe_allow_html=True)
