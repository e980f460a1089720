"""Review: annotators mark model errors, GT errors and acceptable variants; adjudication and agreement.

Layout only: who acts, what is shown and every rule live in :mod:`evaluators.review.service`."""

from components.layout import page_frame

source = page_frame("Review · 人工审阅", "📝",
                    caption="Every decision is saved when submitted (SQLite by default); sessions reopen "
                            "from their link.", source_choice=False)

import streamlit as st  # noqa: E402

from components.keyboard import shortcuts  # noqa: E402
from components.review import (agreement_panel, decisions_table, export_panel, identity_sidebar,  # noqa: E402
                               item_card, new_session_panel, on_decide, on_step)
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.review import service as rs  # noqa: E402
from evaluators.review.store import LABELS, ReviewStore, default_url  # noqa: E402

VIEWS = ["Review · 审阅", "Adjudicate · 裁决", "Agreement · 一致性", "Export · 导出"]


@st.cache_resource(show_spinner=False)
def review_store(url: str) -> ReviewStore:
    """One store (engine, connection pool, caches) per database URL and server process."""
    return ReviewStore(url)


store, qp = review_store(default_url()), st.query_params
link = st.session_state.setdefault("review_link", {k: qp.get(k) for k in ("annotator", "item", "session")})
if annotator := identity_sidebar(link["annotator"]):
    qp["annotator"] = annotator

new_session_panel(store, annotator, len(store.sessions()))
sessions = {s.id: s for s in store.sessions()}
if not sessions:
    st.info("No review session yet: start one with **Review the QA demo**, or upload a file above.")
    st.stop()
if "review_session" not in st.session_state and str(link["session"]).isdigit() and int(link["session"]) in sessions:
    st.session_state["review_session"] = int(link["session"])
if st.session_state.get("review_session") not in sessions:
    st.session_state["review_session"] = next(iter(sessions))
sid = st.selectbox("Session · 审阅任务", list(sessions), key="review_session",
                   format_func=lambda i: visible(sessions[i].name))
qp["session"], session = str(sid), sessions[sid]
st.caption(f"{session.n_items} items · {md(session.kind)} · k = {session.k} reviewer(s) per item"
           + (" · blind" if session.blind else "") + f" · owner {md(session.created_by)}")
view_name = st.segmented_control("View", VIEWS, default=VIEWS[0], key="review_view", label_visibility="collapsed")

if view_name in (None, VIEWS[0]):
    cur_key = f"review_cur_{sid}"
    from_link = st.session_state.get(cur_key) is None and str(link["item"]).isdigit()
    view = rs.review_view(store, session, annotator or "", link_annotator=link["annotator"] if from_link else None,
                          item_id=int(link["item"]) if from_link else st.session_state.get(cur_key))
    # first in the view (a fixed place: the listener is updated, not remounted): keys act on this item only
    shortcuts({**{str(n): f"review_{c[0]}_{view.item.id}" for n, c in enumerate(view.choices, start=1)},
               "s": f"review_skip_{view.item.id}", "j": "review_next", "k": "review_prev"}
              if annotator and view.item is not None else {})
    if view.note:
        st.info(md(view.note))
    if session.guidelines:
        with st.expander("Guidelines · 审阅指南"):
            st.markdown(md(session.guidelines, one_line=False))
    if flash := st.session_state.pop("review_flash", None):
        st.warning(md(flash))
    if view.item is None:
        st.success("Nothing left for you in this session: every item has its reviewers.")
    elif not annotator:
        item_card(view)
        st.info("Confirm your name in the sidebar to review: decisions are recorded under it.")
    else:
        item, prog, mine = view.item, view.progress, view.mine
        st.session_state[cur_key], qp["item"] = item.id, str(item.id)
        here = {"store": store, "session": session, "annotator": annotator, "item_id": item.id, "key": cur_key}
        n1, n2 = st.columns(2)  # navigation first: it is there whatever the item holds
        n1.button("◀ Previous", key="review_prev", on_click=on_step, kwargs={**here, "step": -1})
        n2.button("Next ▶", key="review_next", on_click=on_step, kwargs={**here, "step": 1})
        st.progress(min(1.0, prog.decided / max(1, prog.n_items)),
                    text=f"You have decided {prog.decided} of {prog.n_items} · {prog.complete} item(s) have "
                         f"all {session.k} reviews")
        item_card(view)
        # saved in the click's callback, before the next run draws the next item (one run per click); the
        # version is the one shown here: a decision saved meanwhile elsewhere is never overwritten
        here |= {"version": mine.version if mine else 0,
                 "shown_at": st.session_state.setdefault(f"review_shown_{sid}_{item.id}", view.shown_at)}
        with st.form(f"review_form_{item.id}", border=False):
            st.checkbox("Give a 1-5 score · 打分", value=bool(mine and mine.score), key=f"review_give_score_{item.id}")
            st.slider("Score (5 = as good as the reference)", 1, 5, (mine.score if mine and mine.score else 3),
                      key=f"review_score_{item.id}")
            st.text_area("Comment · 备注", value=mine.comment if mine else "", key=f"review_comment_{item.id}")
            st.caption("Decide with one click: the decision is saved and the next item opens.")
            for col, (slug, text, lab, hint) in zip(st.columns(4), view.choices):
                col.form_submit_button(text, key=f"review_{slug}_{item.id}", help=hint or None,
                                       type="primary" if mine and mine.label == lab else "secondary", wrap=True,
                                       on_click=on_decide, kwargs={**here, "label": lab})
            st.columns(4)[3].form_submit_button("Skip · 跳过", key=f"review_skip_{item.id}", on_click=on_decide,
                                                kwargs={**here, "label": None})
        if mine:
            st.caption(f"Saved: {md(mine.label or mine.status)} (version {mine.version}, {md(mine.updated_at)})")
        if view.others:
            st.caption("Other reviewers' decisions on this item")
            decisions_table(view.others, "review_others")
        elif view.others_hidden:
            st.caption(f"{view.others_hidden} other reviewer(s) decided this item: shown after your own decision.")
        st.caption("Keyboard: 1 / 2 / 3 decide, S skips, J next, K previous (not while typing in a field).")

else:
    shortcuts({})  # the same place in the page: no key acts outside the Review view
if view_name == VIEWS[1]:
    if not rs.can_adjudicate(session, annotator):
        st.info("Adjudication is for the session's owner and adjudicators (and EVALBOARD_REVIEW_ADMINS).")
    elif not (queue := store.adjudication_queue(sid, limit=200)):
        st.success("No item waits for adjudication (reviewers agree and nobody marked a GT error).")
    else:
        st.caption(f"{store.queue_size(sid)} item(s) where reviewers disagree or someone marked a GT error.")
        pick = st.selectbox("Item", range(len(queue)), key="review_adj_item",
                            format_func=lambda n: visible(rs.text_of(queue[n][0].payload.get("id")) or queue[n][0].id))
        item, item_decisions = queue[pick]
        st.text(visible(f"GT: {rs.text_of(item.payload.get('ground_truth'))}\n"
                        f"Prediction: {rs.text_of(item.payload.get('prediction'))}"))
        decisions_table(item_decisions, "review_adj_table")
        with st.form("review_adj_form", border=False):
            final = st.radio("Final decision", list(LABELS), format_func=rs.LABEL_TEXT.get, horizontal=True,
                             key="review_adj_label")
            note = st.text_input("Why", key="review_adj_note")
            fixed = st.text_input("Corrected answer (for a GT error) · 更正答案", key="review_adj_answer",
                                  help="Becomes a GT patch (review patch); the GT file is never edited.")
            if st.form_submit_button("Decide · 裁决", key="review_adj_submit"):
                rs.adjudicate(store, session, annotator, item.id, final, note, corrected_answer=fixed)
                st.toast("Adjudicated · 已裁决")
                st.rerun()
elif view_name == VIEWS[2]:
    agreement_panel(store, session)
elif view_name == VIEWS[3]:
    export_panel(store, session, annotator)
