"""Streamlit pieces of the test-set page: highlighted answers, breakdown charts, turn-by-turn view.

Answers are user text: they are HTML-escaped piece by piece before the ``<mark>`` tags
around the keyword spans (found by :func:`evaluators.testsets.keyword_spans`) are added.
The first screen's charts and tables are static (:mod:`components.static`); pandas and plotly
are imported by the functions of the other views, not with this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from components.static import static_records
from evaluators.testsets import RUBRIC, keyword_spans
from evaluators.testsets.evaluate import GroupStats, MultiTurnReport, SingleTurnReport
from evaluators.reports.escape import html_text
from evaluators.reports.format import fixed, number

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

_MARK = '<mark style="background:#ffe08a;padding:0 2px;border-radius:3px">'


#: Characters of an answer shown on the page (tables and highlights); the scores and downloads use all of it.
SHOWN_CHARS = 3000


def shown_text(text: str | None, limit: int = SHOWN_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters for display, saying how much was left out."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]} … (+{len(text) - limit:,} characters · 其余 {len(text) - limit:,} 字符: see the downloads)"


def highlight_html(text: str | None, keywords: Sequence[str], limit: int = SHOWN_CHARS) -> str:
    """``text`` escaped for HTML with each keyword occurrence wrapped in ``<mark>``; ``—`` for no text.

    Only the first ``limit`` characters are shown (a one-line answer of megabytes would otherwise be
    sent whole to the browser); the rest is counted.
    """
    if not text:
        return '<span style="color:#999">— (no answer · 无回答)</span>'
    rest = len(text) - limit
    if rest > 0:
        text = text[:limit]
    out, pos = [], 0
    for start, end in keyword_spans(text, keywords):
        out.append(html_text(text[pos:start]))
        out.append(_MARK + html_text(text[start:end]) + "</mark>")
        pos = end
    out.append(html_text(text[pos:]))
    if rest > 0:
        out.append(f'<small style="color:#666"> … (+{rest:,} characters · 其余 {rest:,} 字符: see the downloads)</small>')
    return "".join(out)


def _chips(words: Sequence[str], ok: bool) -> str:
    color = "#1b7f3b" if ok else "#b42318"
    sign = "✓" if ok else "✗"
    return " ".join(f'<span style="color:{color};white-space:nowrap">{sign} {html_text(w)}</span>' for w in words)


def item_table(report: SingleTurnReport) -> None:
    """Per-item HTML table: question, answer with matched keywords highlighted, found / missing keywords, score."""
    rows = []
    for r in report.items:
        score = number(r.score, 2)
        rows.append(
            "<tr>"
            f"<td>{html_text(r.id)}<br><small>{html_text(r.category)} · {html_text(r.difficulty)}</small></td>"
            f"<td>{html_text(r.question)}<br><small style='color:#666'>expected: {html_text(r.expected_answer)}</small></td>"
            f"<td>{highlight_html(r.answer, r.found)}</td>"
            f"<td>{_chips(r.found, True)} {_chips(r.missing, False)}</td>"
            f"<td style='text-align:right'><b>{score}</b><br><small>{html_text(r.status)}</small></td>"
            "</tr>"
        )
    st.markdown(  # in a box that scrolls sideways: on a phone the score column ran past the screen's edge
        "<div style='overflow-x:auto;max-width:100%'><table style='width:100%;border-collapse:collapse;"
        "font-size:0.92rem'><thead><tr><th>id</th><th>question · 问题</th><th>answer · 回答</th>"
        "<th>keywords · 关键词</th><th>score</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>",
        unsafe_allow_html=True,
    )


def breakdown_chart(groups: dict[str, GroupStats], title: str) -> go.Figure:
    """Bar chart of the mean keyword score per group, with item counts on the bars."""
    import plotly.graph_objects as go

    names = [html_text(name, breaks=False) for name in groups]  # plotly reads <b>, <a href> in labels
    fig = go.Figure(go.Bar(
        x=names, y=[g.mean_score or 0.0 for g in groups.values()],
        text=[f"{fixed(g.mean_score or 0, 2)} (n={g.n_scored})" for g in groups.values()], textposition="outside",
        marker_color="#4c78a8", hovertemplate="%{x}: %{y:.3f}<extra></extra>",
    ))
    fig.update_layout(title=title, yaxis={"range": [0, 1.15], "title": "mean keyword score"}, height=320,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      font={"family": "Noto Sans CJK SC, Noto Sans, sans-serif"})
    return fig


def breakdown_svg(groups: dict[str, GroupStats], title: str) -> str:
    """The mean keyword score (95% interval) and the keyword recall per group as one static SVG chart
    (:func:`evaluators.reports.svg.grouped_bars`; a gap "—" where a group has no scored item)."""
    from evaluators.reports.svg import grouped_bars

    stats = list(groups.values())
    return grouped_bars(list(groups), {"mean_score": [g.mean_score for g in stats],
                                       "keyword_recall": [g.keyword_recall for g in stats]},
                        {"mean_score": [g.mean_score_ci_low for g in stats]},
                        {"mean_score": [g.mean_score_ci_high for g in stats]}, title=title)


def group_rows(groups: dict[str, GroupStats], name: str) -> list[dict]:
    """Group statistics, one dict per group (the static table of the overview, the grid of the tables view)."""
    return [{name: k, "items": g.n_items, "scored": g.n_scored, "mean_score": g.mean_score,
             "keyword_recall": g.keyword_recall, "found": g.keywords_found, "total": g.keywords_total,
             "mean_human_score": g.mean_human_score} for k, g in groups.items()]


def groups_frame(groups: dict[str, GroupStats], name: str) -> pd.DataFrame:
    """:func:`group_rows` as a DataFrame (one row per group)."""
    import pandas as pd

    return pd.DataFrame(group_rows(groups, name))


def turn_view(report: MultiTurnReport, dialogue_id: str) -> None:
    """Turn by turn: the user's question, the answer with covered points marked, each expected point and its rule."""
    dialogue = next(d for d in report.dialogues if d.id == dialogue_id)
    cov = number(dialogue.coverage_micro, 2)
    st.markdown(f"<div><b>{html_text(dialogue.scenario)}</b> — {dialogue.n_covered} of {dialogue.n_points} points "
                f"covered ({cov})</div>", unsafe_allow_html=True)
    for t in dialogue.turns:
        marks = [w for p in t.points for w in p.found]
        points = "<br>".join(
            f"{_chips([p.point], p.covered)} <small style='color:#666'>({p.rule}"
            + (": " + html_text(", ".join(p.keywords)) if p.keywords else "") + ")</small>"
            for p in t.points)
        ctx = " · needs context · 依赖上文" if t.requires_context else ""
        st.markdown(
            f"<div style='border-left:3px solid #4c78a8;padding:4px 12px;margin:8px 0'>"
            f"<div><b>Turn {t.turn}</b>{ctx} — coverage {fixed(t.coverage, 2)} ({t.n_covered}/{t.n_points})</div>"
            f"<div><small style='color:#666'>user · 用户</small> {html_text(t.user)}</div>"
            f"<div><small style='color:#666'>answer · 回答</small> {highlight_html(t.answer, marks)}</div>"
            f"<div style='margin-top:4px'>{points}</div></div>",
            unsafe_allow_html=True,
        )


def rubric() -> None:
    """The 1-5 human rubric of the test-set schema, as a static table."""
    static_records([{"score": k, "中文": zh, "English": en} for k, (zh, en) in sorted(RUBRIC.items(), reverse=True)])
