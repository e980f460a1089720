"""One download button, or the reason there is nothing to download.

A CSV given as text (``mime="text/csv"``) is written as UTF-8 with a byte-order mark, as every page's CSV (Excel
then reads Chinese text right); other text is UTF-8 (Streamlit's own); bytes are offered as given.

An empty payload is never offered as a 0-byte file: where the caller knows the file would be
empty (``empty`` is the reason, from the engine), the label and the reason are shown as a caption
and no button is drawn.  The payload itself is still made only when the button is clicked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from evaluators.reports.escape import md


def download(label: str, data: bytes | str | Callable[[], bytes | str], *, file_name: str, mime: str, key: str,
             empty: str | None = None, where: Any = None, **kwargs) -> bool:
    """A download button for ``data``, or, when ``empty`` gives a reason, a caption saying why there is none.

    Parameters
    ----------
    label, data, file_name, mime, key
        As :func:`streamlit.download_button` (``data`` may be a callable, run on click).
    empty : str, optional
        Why the file would be empty; given, no button is drawn.
    where : optional
        A column or container to draw in (default: the page).
    **kwargs
        Passed to :func:`streamlit.download_button` (``on_click="ignore"`` unless given).

    Returns
    -------
    bool
        Whether a button was drawn.
    """
    where = where if where is not None else st
    if empty:
        where.caption(f"**{md(label)}**: {md(empty)}")
        return False
    kwargs.setdefault("on_click", "ignore")
    payload = (lambda: encoded(data(), mime)) if callable(data) else encoded(data, mime)
    where.download_button(label, payload, file_name=file_name, mime=mime, key=key, **kwargs)
    return True


def encoded(data: bytes | str, mime: str) -> bytes | str:
    """``data`` as offered: a ``text/csv`` text as UTF-8 bytes with a byte-order mark; anything else unchanged
    (Streamlit writes other text as UTF-8)."""
    return data.encode("utf-8-sig") if isinstance(data, str) and mime == "text/csv" else data
