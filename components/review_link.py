"""A button that turns the scored run of a page into a review session and opens the Review page."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import streamlit as st

from evaluators.reports.escape import md


def review_button(label: str, kind: str, source_name: str, items: Callable[[], list[dict]], *, key: str,
                  data: Callable[[], bytes] | None = None, blind: bool = False,
                  files: Callable[[], list[tuple[str, bytes]]] | None = None) -> None:
    """Show ``label``; when clicked, create a session of ``items()`` (k = 2) and switch to the Review page.

    ``label`` is Markdown: user text in it must come through :func:`evaluators.reports.escape.md`.

    ``data`` returns the bytes of the run's main file, kept with the session (by digest) so the
    session reopens after a restart; ``files`` returns ``(name, bytes)`` of several such files (a run
    with one GT file per story), each kept.  A *Blind* checkbox beside the button (``blind``: its default)
    hides system names and scores from reviewers (and shuffles A/B sides); the session's owner can
    still turn blind mode on later.  Problems (no item, a database error) are shown, not raised.
    """
    left, right = st.columns([3, 2], vertical_alignment="center")
    blind = right.checkbox("Blind review (hide system names and scores) · 盲评", value=blind, key=f"{key}_blind",
                           help="Reviewers do not see which system answered, nor its scores.")
    if not left.button(label, key=key, help="Creates a review session (kept in the review database) and opens it."):
        return
    from evaluators.review.store import ReviewStore

    try:
        store = ReviewStore()
        payloads = items()
        if not payloads:
            st.warning("Nothing to review here: no scored item.")
            return
        uploads = [store.put_upload(source_name, data())] if data is not None else []
        uploads += [store.put_upload(name, blob) for name, blob in (files() if files is not None else [])]
        made = store.create_session(f"{source_name} · {kind} · {datetime.now():%Y-%m-%d %H:%M:%S}", kind, payloads,
                                    created_by=f"{kind} page", k=2, uploads=uploads, blind=blind)
    except (ValueError, OSError, RuntimeError) as exc:
        st.error(md(f"Could not create the review session: {exc}"))
        return
    st.session_state["review_session"] = made.id
    st.switch_page("pages/6_Review.py")
