"""Span overlay: GT and predicted event spans drawn on the story text (all text HTML-escaped).

GT spans are an underline track, predicted spans a background track; both are coloured by
the span category of :mod:`evaluators.narrative.text_span` (correct, partial, missed,
spurious, extra).  Sentence starts are marked with a thin grey bar.  Hovering a stretch of
text shows which events cover it, with their labels and IoU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st
from evaluators.reports.escape import html_text

CATEGORY_COLORS = {
    "correct": "#2e7d32",
    "partial": "#ef6c00",
    "missed": "#c62828",
    "spurious": "#6a1b9a",
    "extra": "#757575",
}
CATEGORY_LABELS = {
    "correct": "correct (IoU ≥ threshold)",
    "partial": "partial overlap",
    "missed": "missed (GT only)",
    "spurious": "spurious (prediction only)",
    "extra": "extra (GT has no span; not counted)",
}


@dataclass(frozen=True)
class OverlaySpan:
    """One span to draw: ``track`` is ``"gt"`` or ``"pred"``; ``label`` is shown on hover.

    ``event`` is the id of the event the span belongs to (GT or predicted id, matching
    ``track``); ``selected`` spans are drawn stronger.
    """

    start: int
    end: int
    track: str
    category: str
    label: str
    selected: bool = False
    event: str | None = None


def _tint(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def legend_html() -> str:
    """The colour legend as HTML."""
    items = []
    for cat, color in CATEGORY_COLORS.items():
        items.append(
            f"<span style='display:inline-flex;align-items:center;margin-right:14px'>"
            f"<span style='width:14px;height:14px;background:{_tint(color, .25)};border-bottom:3px solid {color};"
            f"display:inline-block;margin-right:5px'></span>{html_text(CATEGORY_LABELS[cat], breaks=False)}</span>")
    items.append("<span style='margin-left:6px;color:#555'>underline = GT · fill = prediction · "
                 "<span style='color:#9e9e9e'>▏</span> = sentence start</span>")
    return "<div style='font-size:0.85rem;line-height:1.9'>" + "".join(items) + "</div>"


def overlay_html(text: str, spans: list[OverlaySpan], sentence_starts: list[int] | tuple[int, ...] = (),
                 *, max_height: int = 560) -> str:
    """HTML of ``text`` with the spans drawn; every piece of text and every label is escaped.

    Parameters
    ----------
    text : str
        The story.
    spans : list of OverlaySpan
        Half-open character ranges; out-of-range offsets are clamped.
    sentence_starts : sequence of int
        Offsets where a sentence starts (marked unless 0).
    max_height : int
        Height of the scrolling container in pixels.
    """
    n = len(text)
    clean = [replace(s, start=max(0, min(s.start, n)), end=max(0, min(s.end, n))) for s in spans]
    clean = [s for s in clean if s.end > s.start]
    starts = sorted({s for s in sentence_starts if 0 < s < n})
    points = sorted({0, n, *starts, *(s.start for s in clean), *(s.end for s in clean)})
    out = []
    for a, b in zip(points, points[1:]):
        gt = [s for s in clean if s.track == "gt" and s.start <= a < s.end]
        pr = [s for s in clean if s.track == "pred" and s.start <= a < s.end]
        style = []
        if gt:
            g = gt[-1]
            style.append(f"border-bottom:{4 if g.selected else 3}px solid {CATEGORY_COLORS.get(g.category, '#000')}")
            style.append("padding-bottom:1px")
        if pr:
            p = pr[-1]
            style.append(f"background:{_tint(CATEGORY_COLORS.get(p.category, '#000'), .32 if p.selected else .18)}")
        if any(s.selected for s in gt + pr):
            style.append("outline:1px dashed #1565c0")
        piece = html_text(text[a:b])
        if a in starts:
            piece = "<span class='eb-sb' style='color:#9e9e9e'>▏</span>" + piece
        if gt or pr:
            title = html_text(" | ".join(s.label for s in gt + pr), breaks=False)
            out.append(f"<span style=\"{';'.join(style)}\" title=\"{title}\">{piece}</span>")
        else:
            out.append(piece)
    return (f"<div class='eb-overlay' style='max-height:{max_height}px;overflow-y:auto;border:1px solid #ddd;"
            f"border-radius:6px;padding:12px 16px;line-height:2.0;font-size:1.02rem;white-space:normal;"
            f"font-family:\"Noto Sans CJK SC\",\"Noto Serif CJK SC\",sans-serif'>" + "".join(out) + "</div>")


def render_span_overlay(text: str, spans: list[OverlaySpan], sentence_starts=(), *, max_height: int = 560) -> None:
    """Draw the legend and the overlay."""
    st.html(legend_html())
    if not text:
        st.info("This document has no source text (`source_info.text_content` is empty): "
                "spans cannot be drawn, but their offsets were still compared.")
        return
    st.html(overlay_html(text, spans, sentence_starts, max_height=max_height))
