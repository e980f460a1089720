"""From any page to review: the one review store (cached per database URL), the one way a page creates a
review session, and the button that turns a page's scored run into a session and opens the Review page."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import streamlit as st

from evaluators.reports.escape import md

if TYPE_CHECKING:
    from evaluators.review.store import ReviewStore, Session


@st.cache_resource(show_spinner=False)
def _store(url: str) -> ReviewStore:
    from evaluators.review.store import ReviewStore

    return ReviewStore(url)


def review_store(url: str | None = None) -> ReviewStore:
    """The review store of a database URL: one per URL and server process (engine, connection pool, caches).

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL or a SQLite path; default :func:`evaluators.review.store.default_url`
        (``EVALBOARD_DATABASE_URL``, else SQLite under ``EVALBOARD_DATA_DIR``), read on each call.

    Returns
    -------
    ReviewStore
        The same object for the same URL on every page and rerun.
    """
    from evaluators.review.store import default_url

    return _store(str(url or default_url()))


def create_review_session(name: str, kind: str, items: Iterable[Mapping[str, Any]], *, created_by: str,
                          files: Iterable[tuple[str, bytes]] = (), k: int = 2, blind: bool = False,
                          store: ReviewStore | None = None) -> Session:
    """Create a review session from a page: its items, with the files they came from kept beside them.

    Parameters
    ----------
    name : str
        The session's name (unique in the store).
    kind : str
        The task the items come from (``"qa"``, ``"narrative"``, ``"dialogue"``, ``"memory"``, ``"testsets"``).
    items : iterable of mapping
        The review items (:mod:`evaluators.review.items`).
    created_by : str
        Who creates it (an :class:`~evaluators.review.roles.Actor` when signed in), its owner: checked
        (``create``) and audited in the session's own transaction
        (:func:`evaluators.review.service.create_session`, as the Review page and ``review create``).
    files : iterable of (str, bytes)
        The run's input files (name, bytes), kept with the session by SHA-256 so it reopens after a restart.
    k : int
        Reviewers per item.
    blind : bool
        Hide system names and scores from reviewers.
    store : ReviewStore, optional
        Default :func:`review_store` of the default URL.

    Returns
    -------
    Session

    Raises
    ------
    PermissionError
        ``created_by`` may not create sessions.
    ValueError
        A taken name, no item, a file over the upload limit (:meth:`ReviewStore.create_session`,
        :meth:`ReviewStore.put_upload`).
    """
    from evaluators.review.service import create_session

    store = store if store is not None else review_store()
    return create_session(store, created_by, name, kind, items, files=files, k=k, blind=blind)


def page_actor(kind: str) -> str | None:
    """Who acts from a task page (no identity of its own): the signed-in person when ``[auth]`` is configured
    (an :class:`~evaluators.review.roles.Actor` with the role of their groups; ``None`` when nobody is signed
    in), else the name confirmed on the Review page in this browser (its cookie), else ``"<kind> page"`` (a
    typed-name dashboard: anyone may create, as before).

    Parameters
    ----------
    kind : str
        The page's task (``qa`` ...).

    Returns
    -------
    str or None
    """
    import urllib.parse

    from components.review_identity import NAME_COOKIE, sign_in_configured, user_actor

    if sign_in_configured():
        from evaluators.review.roles import load_config

        return user_actor(st.user, load_config()) if st.user.is_logged_in else None
    kept = st.session_state.get("review_me") or st.context.cookies.get(NAME_COOKIE)
    name = urllib.parse.unquote(kept).strip()[:256] if isinstance(kept, str) else ""
    return name or f"{kind} page"


def review_button(label: str, kind: str, source_name: str, items: Callable[[], list[dict]], *, key: str,
                  data: Callable[[], bytes] | None = None, blind: bool = False,
                  files: Callable[[], list[tuple[str, bytes]]] | None = None) -> None:
    """Show ``label``; when clicked, create a session of ``items()`` (k = 2) and switch to the Review page.

    ``label`` is Markdown: user text in it must come through :func:`evaluators.reports.escape.md`.

    ``data`` returns the bytes of the run's main file, kept with the session (by digest) so the
    session reopens after a restart; ``files`` returns ``(name, bytes)`` of several such files (a run
    with one GT file per story), each kept.  A *Blind* checkbox beside the button (``blind``: its default)
    hides system names and scores from reviewers (and shuffles A/B sides); the session's owner can
    still turn blind mode on later.  Problems (no item, a database error, a role that may not create) are
    shown, not raised.  The session is made by :func:`create_review_session` for :func:`page_actor` (checked
    and audited in the service layer).
    """
    left, right = st.columns([3, 2], vertical_alignment="center")
    blind = right.checkbox("Blind review (hide system names and scores) · 盲评", value=blind, key=f"{key}_blind",
                           help="Reviewers do not see which system answered, nor its scores.")
    if not left.button(label, key=key, help="Creates a review session (kept in the review database) and opens it."):
        return
    try:
        payloads = items()
        if not payloads:
            st.warning("Nothing to review here: no scored item.")
            return
        who = page_actor(kind)
        if who is None:
            st.warning("Sign in on the Review page first: sessions are created by a signed-in owner.")
            return
        kept = [(source_name, data())] if data is not None else []
        kept += files() if files is not None else []
        made = create_review_session(f"{source_name} · {kind} · {datetime.now():%Y-%m-%d %H:%M:%S}", kind, payloads,
                                     created_by=who, files=kept, blind=blind)
    except (PermissionError, ValueError, OSError, RuntimeError) as exc:
        st.error(md(f"Could not create the review session: {exc}"))
        return
    st.session_state["review_session"] = made.id
    st.switch_page("pages/6_Review.py")
