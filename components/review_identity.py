"""Who acts on the review pages: the signed-in identity (``st.login``) or the name typed in this browser,
kept across reloads in a cookie (not authentication).  Shared by the Review page and the task pages'
*Review these ...* buttons (:mod:`components.review_link`); the rules are in
:mod:`evaluators.review.service` and :mod:`evaluators.review.roles`."""

from __future__ import annotations

import time
import urllib.parse

import streamlit as st

from evaluators.reports.escape import md
from evaluators.review import service as rs


#: The cookie that keeps a typed name in this browser (not authentication: anyone can type any name).
NAME_COOKIE = "evalboard_review_me"
_REMEMBER_JS = """
export default function (component) {
  const data = component.data || {};
  if (typeof data.name !== 'string') return;
  const cookie = data.cookie + '=' + encodeURIComponent(data.name) + '; path=/; SameSite=Strict; max-age=';
  document.cookie = cookie + (data.name ? 31536000 : 0);
}
"""
_remember = st.components.v2.component("evalboard_remember_name", js=_REMEMBER_JS)


def sign_in_configured() -> bool:
    """Whether ``[auth]`` is configured in Streamlit's secrets (then the Review page signs people in)."""
    try:
        return bool(st.secrets.load_if_toml_exists()) and "auth" in st.secrets
    except Exception:  # noqa: BLE001 - an unreadable secrets file: no sign-in, as without one
        return False


def signed_in_identity() -> rs.Actor:
    """The signed-in person (``st.login``) as an :class:`~evaluators.review.roles.Actor`: the name from the
    ID token's ``email`` (else ``name``, ``sub``), the role from its groups claim
    (:mod:`evaluators.review.roles`).  Not signed in: a sign-in button and the page stops; a sign-in older
    than the configured maximum age is sent back to the provider's login."""
    from evaluators.review.roles import load_config, sign_in_expired

    try:
        config, user = load_config(), st.user
    except ValueError as exc:  # a bad EVALBOARD_REVIEW_ROLES: nobody acts until it is fixed
        st.error(md(f"The role configuration cannot be used: {exc}"))
        st.stop()
    if not user.is_logged_in:
        st.info("Sign in to review · 请先登录: your role (owner, adjudicator, annotator or viewer) comes from "
                "your sign-in.")
        st.button("Sign in · 登录", key="review_login", on_click=st.login, type="primary")
        st.stop()
    if sign_in_expired(user.get("iat"), time.time(), config.max_age_s):
        st.warning(f"Your sign-in is older than {config.max_age_s} s: sign in again · 登录已过期，请重新登录")
        st.login()
        st.stop()
    me = user_actor(user, config)
    st.sidebar.caption(f"Reviewing as **{md(me)}** (signed in) · role: {md(me.role or 'none')}")
    st.sidebar.button("Sign out · 退出", key="review_logout", on_click=st.logout)
    return me


def user_actor(user, config) -> rs.Actor:
    """A signed-in ``st.user`` as an :class:`~evaluators.review.roles.Actor`: the name from the ID token's
    ``email`` (else ``name``, ``sub``; 256 characters kept), the role from its groups claim (``config``:
    :func:`evaluators.review.roles.load_config`)."""
    name = str(user.get("email") or user.get("name") or user.get("sub") or "")[:256]
    return rs.Actor(name, config.role_for(user.get(config.claim)), "page")


def identity_sidebar(link_name: str | None) -> str | None:
    """Who acts (:func:`evaluators.review.service.resolve_identity`): the signed-in identity when ``[auth]``
    is configured (:func:`signed_in_identity`), else the name typed in this browser, kept across reloads
    in a cookie (:data:`NAME_COOKIE`; not authentication); a link's name is offered ("Continue as ...?"),
    never taken silently."""
    if sign_in_configured():
        return signed_in_identity()
    ss = st.session_state
    kept = st.context.cookies.get(NAME_COOKIE)
    if "review_me" not in ss and isinstance(kept, str) and kept:  # (a test's AppTest has no cookies)
        ss["review_me"] = urllib.parse.unquote(kept)[:256]  # the name confirmed before the reload
    me = rs.resolve_identity(None, ss.get("review_me"), link_name)
    if me.pending:
        st.sidebar.button(f"Continue as {md(me.pending)}? · 以此身份继续", key="review_confirm_link",
                          on_click=lambda: st.session_state.update(review_me=me.pending),
                          help="The link names this reviewer. Confirm only if it is you.")
    st.sidebar.text_input("Your name · 审阅人", key="review_me",
                          help="Type your own name and press Enter: it is recorded with every decision and "
                               "kept in this browser. A typed name is not a sign-in: anyone can type any name.")
    if me.problem:  # e.g. 10 kB pasted: no buttons under a name every save would refuse
        st.sidebar.error(md(me.problem))
    with st.sidebar:
        _remember(key="review_remember_name", data={"cookie": NAME_COOKIE, "name": me.name or ""}, height=0)
    return me.name
