"""The frame every page starts with: page config, shared sidebar and data-source choice."""

from __future__ import annotations

import streamlit as st

#: Session key of the data source shared by all pages (not a widget key, so it survives page changes).
SOURCE_KEY = "evalboard_data_source"
SOURCES = {"demo": "Demo data (built in)", "upload": "Upload my files"}


def _remember_source() -> None:
    st.session_state[SOURCE_KEY] = st.session_state["_source_widget"]


def data_source() -> str:
    """The current data source: ``"demo"`` (default) or ``"upload"``."""
    value = st.session_state.get(SOURCE_KEY)
    if value not in SOURCES:
        value = st.query_params.get("source", "demo")
        if value not in SOURCES:
            value = "demo"
        st.session_state[SOURCE_KEY] = value
    return value


def page_frame(title: str, icon: str = "📊", *, caption: str | None = None) -> str:
    """Set up a page: config, title, the shared sidebar with the data-source choice.

    Parameters
    ----------
    title : str
        Page title (browser tab and heading).
    icon : str
        Emoji shown in the tab.
    caption : str, optional
        One line under the title.

    Returns
    -------
    str
        ``"demo"`` or ``"upload"``.
    """
    st.set_page_config(page_title=f"{title} · EvalBoard", page_icon=icon, layout="wide")
    current = data_source()
    with st.sidebar:
        st.markdown("**EvalBoard**")
        st.radio(
            "Data source",
            options=list(SOURCES),
            format_func=SOURCES.get,
            index=list(SOURCES).index(current),
            key="_source_widget",
            on_change=_remember_source,
            help="Shared by all pages: the built-in demo, or files you upload on each page.",
        )
    st.title(title)
    if caption:
        st.caption(caption)
    return st.session_state[SOURCE_KEY]
