"""Metric cards and formatting helpers."""

from __future__ import annotations

import html
import re

import streamlit as st


def fmt(value: float | int | None, digits: int = 3) -> str:
    """``0.714`` for a float, ``12`` for an int, ``N/A`` for ``None``."""
    if value is None:
        return "N/A"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def metric_row(items: list[tuple[str, float | int | None, str | None]], *, digits: int = 3) -> None:
    """A row of ``st.metric`` cards: ``(label, value, help)``; ``None`` is shown as N/A."""
    cols = st.columns(len(items))
    for col, (label, value, help_text) in zip(cols, items):
        col.metric(label, fmt(value, digits), help=help_text)


def signature_caption(signature: str) -> None:
    """The settings that produced the numbers, in small print under them."""
    st.caption(f"Signature: `{signature}`")


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~:])")


def md_text(text: object) -> str:
    """Escape user text for Streamlit markdown (no links, emphasis, HTML or LaTeX can be injected)."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))
