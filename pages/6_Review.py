"""Review: annotators mark model errors, GT errors and acceptable variants; adjudication and agreement.

Layout only: who acts, what is shown and every rule live in :mod:`evaluators.review.service`."""

from components.layout import page_frame, view_switch

source = page_frame("Review · 人工审阅", "📝", source_choice=False)

import streamlit as st  # noqa: E402

# Our own style rules (no user text): less space above the title and, on a phone, a one-line title and
# smaller decision buttons (two a row), so an item and its decisions fit the first screen at 390x844.
st.html("<style>[data-testid='stMainBlockContainer'] { padding-top: 4rem; }"
        "@media (max-width: 640px) { [data-testid='stMain'] h1 { font-size: 1.9rem; }"
        " .st-key-review_decide button { padding: 0.25rem 0.5rem; min-height: 2.25rem; }"
        " .st-key-review_decide button p { font-size: 0.85rem; } }</style>")

from components.keyboard import Shortcut, shortcuts  # noqa: E402
from components.review import (adjudication_panel, agreement_panel, decisions_table, export_panel,  # noqa: E402
                               gold_panel, history_panel, item_card, key_decide,
                               new_session_panel, on_click_undo, on_decide, on_step, on_undo, review_filters,
                               settings_panel, team_panel)
from evaluators.reports.escape import md, md_document, visible  # noqa: E402
from evaluators.review import service as rs  # noqa: E402
from evaluators.review.links import parse_link  # noqa: E402
from components.review_identity import identity_sidebar  # noqa: E402
from components.review_link import review_store  # noqa: E402

#: The views, slug (the link's ``?view=``) -> label.
VIEWS = {"review": "Review · 审阅", "adjudicate": "Adjudicate · 裁决", "agreement": "Agreement · 一致性",
         "export": "Export · 导出"}


store, qp = review_store(), st.query_params
link = st.session_state.setdefault("review_link", parse_link(qp))
for notice in link.notices:
    st.warning(md(notice))
if annotator := identity_sidebar(link.annotator):
    qp["annotator"] = annotator

SAVED = "Every decision is saved when submitted (SQLite by default); sessions reopen from their link."
sessions = {s.id: s for s in store.sessions()}
if not sessions:
    st.caption(SAVED)
    if new_session_panel(store, annotator, 0) is not None:
        st.rerun()  # the new session, opened
    st.info("No review session yet: start one with **Review the QA demo**, or upload a file above.")
    st.stop()
ss = st.session_state
# The open session is the page's own state (``review_session``: the link's ``?session=`` at first, else the
# newest), changed only by the picker's on_change and by a session made here.  It was the picker's widget
# state: a browser that mounted the folded picker afresh sent the picker's default (the newest session) with
# the next click, and the page switched sessions after a decision.
if ss.get("review_session") not in sessions:
    ss["review_session"] = link.session if link.session in sessions else next(iter(sessions))
# Once a session is open its controls (picker, new session, settings) fold into one line, so that an item's
# question, GT, prediction and decision buttons fit the first screen (1440x900 and 390x844).
opened = sessions[ss["review_session"]]


def _picked(key: str) -> None:
    ss["review_session"] = ss[key]


with st.expander(f"Session · 审阅任务: {md(opened.name)} · {opened.n_items} items",
                 expanded=bool({"review_settings_flash", "review_settings_ok"} & ss.keys())):
    picker = st.container()
    # run before the picker (a session made here becomes the picked one), drawn below it
    if new_session_panel(store, annotator, len(sessions), nested=True) is not None:
        st.rerun()  # the new session, opened
    with picker:
        # keyed by the open session and starting at it: whatever a browser sends for it is the open session
        # until someone picks another (a pick opens it; the next run draws a picker keyed by that one)
        pick = f"review_session_pick_{opened.id}"
        sid = st.selectbox("Session · 审阅任务", list(sessions), index=list(sessions).index(opened.id), key=pick,
                           format_func=lambda i: visible(sessions[i].name), on_change=_picked, args=(pick,))
        qp["session"], session = str(sid), sessions[sid]
        st.caption(f"{session.n_items} items · {md(session.kind)} · k = {session.k} reviewer(s) per item"
                   + (" · blind" if session.blind else "") + f" · owner {md(session.created_by)}"
                   + (f" · guidelines v{session.guidelines_version}" if session.guidelines_version else "")
                   + (f" · {carried['n']} record(s) carried forward from {md(', '.join(carried['sessions']))}"
                      if (carried := (session.settings or {}).get("carried")) else "") + " · " + SAVED)
    settings_panel(store, session, annotator, nested=True)
view_name = view_switch(VIEWS, key="review_view")


@st.fragment
def review_tab(store, session, annotator, link) -> None:
    """The Review view: the annotator's item, its decision buttons, navigation and progress.  A fragment: a
    click in it (a decision, Previous / Next, Undo, a key, a filter) reruns this function alone, not the
    sidebar, the session block and its settings (issue 30: the next item in <= 300 ms at 100k items)."""
    sid, qp = session.id, st.query_params
    # a signed-in viewer sees items as nobody does (no claim, no controls); a typed name always decides
    reader, annotator = annotator, annotator if rs.can_decide(session, annotator) else None
    cur_key = f"review_cur_{sid}"
    # the item first (question, GT against prediction, the decision buttons), then navigation and progress,
    # then guidelines and filters; each drawn into its slot, navigation before the card (should an item
    # ever fail to render, the reviewer can still move on)
    notice_slot, card_slot, nav_slot, more_slot = st.container(), st.container(), st.container(), st.container()
    with more_slot:
        filters = review_filters(store, session, annotator)
    from_link = st.session_state.get(cur_key) is None and link.item is not None
    view = rs.review_view(store, session, annotator or "", link_annotator=link.annotator if from_link else None,
                          item_id=link.item if from_link else st.session_state.get(cur_key), filters=filters)
    last = store.last_change(sid, annotator) if annotator else None
    item, mine = view.item, view.mine
    keys: dict = {}
    if annotator and item is not None:
        st.session_state[cur_key], qp["item"] = item.id, str(item.id)
        here = {"store": store, "session": session, "annotator": annotator, "item_id": item.id, "key": cur_key,
                "filters": filters}
        # saved in the click's callback, before the next run draws the next item (one run per click); the
        # version is the one shown here: a decision saved meanwhile elsewhere is never overwritten
        shown = {"version": mine.version if mine else 0,
                 "shown_at": st.session_state.setdefault(f"review_shown_{sid}_{item.id}", view.shown_at)}
        keys = {**{str(n): Shortcut(f"review_{c[0]}_{item.id}", c[1], key_decide, {**here, **shown, "label": c[2]})
                   for n, c in enumerate(view.choices, start=1)},
                "s": Shortcut(f"review_skip_{item.id}", "S · Skip", key_decide, {**here, **shown, "label": None}),
                "j": Shortcut("review_next", "J · Next", on_step, {**here, "step": 1}),
                "k": Shortcut("review_prev", "K · Previous", on_step, {**here, "step": -1})}
    undo = {"store": store, "session": session, "annotator": annotator, "key": cur_key,
            "change": last.id if last else None}
    if annotator and last is not None:
        keys["u"] = Shortcut("review_undo", "U · Undo", on_undo, undo)
    # before the item is drawn, so the keys follow the screen at once; a key pressed for another
    # screen (the token) is refused, never applied to another item
    shortcuts(keys, token=f"{sid}:{item.id if item else '-'}:{mine.version if mine else 0}:{last.id if last else 0}")
    if view.note:
        notice_slot.info(md(view.note))
    if session.guidelines:
        with more_slot.expander(f"Guidelines · 审阅指南 (version {session.guidelines_version})"):
            st.markdown(md_document(session.guidelines))  # the owner's Markdown, no HTML or links
    if flash := st.session_state.pop("review_flash", None):
        notice_slot.warning(md(flash))
    if done := st.session_state.pop("review_flash_ok", None):
        notice_slot.success(md(done))
    if item is None:
        notice_slot.success("Nothing left for you in this session: every item has its reviewers.")
    elif not annotator:
        with card_slot:
            item_card(view)
        notice_slot.info(f"Your role ({md(getattr(reader, 'role', None) or 'none')}) does not decide items."
                         if reader else "Confirm your name in the sidebar to review: decisions are recorded under it.")
    else:
        prog = view.progress
        with nav_slot:
            n1, n2, n3 = st.columns(3)
            n1.button("◀ Previous", key="review_prev", on_click=on_step, kwargs={**here, "step": -1})
            n2.button("Next ▶", key="review_next", on_click=on_step, kwargs={**here, "step": 1})
            n3.button("↶ Undo my last decision · 撤销", key="review_undo", on_click=on_click_undo, kwargs=undo,
                      disabled=last is None, help=None if last is None else
                      f"Back to before your last decision ({last.new_label or last.new_status}).")
            st.progress(min(1.0, prog.decided / max(1, prog.n_items)),
                        text=f"You have decided {prog.decided} of {prog.n_items} · {prog.complete} item(s) have "
                             f"all {session.k} reviews")
        with card_slot:
            item_card(view)
            with st.form(f"review_form_{item.id}", border=False):
                # one click decides, saves and opens the next item; the buttons wrap on a narrow screen
                with st.container(horizontal=True, gap="small", key="review_decide"):
                    for slug, text, lab, hint in view.choices:
                        st.form_submit_button(text, key=f"review_{slug}_{item.id}", help=md(hint) if hint else None,
                                              type="primary" if mine and mine.label == lab else "secondary",
                                              on_click=on_decide, kwargs={**here, **shown, "label": lab})
                    st.form_submit_button("Skip · 跳过", key=f"review_skip_{item.id}", on_click=on_decide,
                                          kwargs={**here, **shown, "label": None})
                st.text_area("Comment · 备注", value=mine.comment if mine else "", key=f"review_comment_{item.id}",
                             height=68)
            # outside the form, so ticking it redraws the slider enabled (unticked, the slider is greyed out);
            # both are read from the session state when a decision button is clicked
            give_score = st.checkbox("Give a 1-5 score · 打分", value=bool(mine and mine.score),
                                     key=f"review_give_score_{item.id}")
            st.slider("Score (5 = as good as the reference)", 1, 5, (mine.score if mine and mine.score else 3),
                      key=f"review_score_{item.id}", disabled=not give_score,
                      help=None if give_score else "Tick “Give a 1-5 score” to score this item.")
        if mine:
            card_slot.caption(f"Saved: {md(rs.label_words(mine.label or mine.status))} (version {mine.version}, "
                       f"{md(mine.updated_at)}"
                       + (f", guidelines v{mine.guidelines_version}" if mine.guidelines_version else "") + ")")
        if view.others:
            st.caption("Other reviewers' decisions on this item")
            decisions_table(view.others, "review_others")
        elif view.others_hidden:
            st.caption(f"{view.others_hidden} other reviewer(s) decided this item: shown after your own decision.")
        history_panel(store, session, annotator, item.id)
        gold_panel(store, session, annotator, item)
        st.caption("Keyboard: the numbers 1-4 decide (1-3 on an A/B item), S skips, J next, K previous, U undoes your last decision, "
                   "? lists the keys (not while typing in a field). Each key is confirmed at the bottom right; keys pressed "
                   "while the page updates wait their turn.")


if view_name == "review":
    review_tab(store, session, annotator, link)
else:
    shortcuts({})  # no key acts outside the Review view
if view_name == "adjudicate":
    adjudication_panel(store, session, annotator)
elif view_name == "agreement":
    agreement_panel(store, session, annotator)
elif view_name == "export":
    export_panel(store, session, annotator)
