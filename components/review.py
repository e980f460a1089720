"""Pieces of the Review page: the item card, decision tables, the new-session panel, the
agreement and export panels.  Rules (who may, what is shown) come from
:mod:`evaluators.review.service`; these only lay out what they are given."""

from __future__ import annotations

import streamlit as st

from components.tables import show_table
from components.uploads import upload_bytes
from evaluators.demo import demo_path
from evaluators.io import InputError
from evaluators.qa import QAConfig, evaluate_qa
from evaluators.reports.escape import md, visible
from evaluators.reports.review import corrections_jsonl, export_csv, label_studio_config
from evaluators.review import service as rs
from evaluators.review.exchange import export_jsonl
from evaluators.review.label_studio import export_tasks
from evaluators.review.items import qa_items
from evaluators.review.store import ReviewStore, StaleDecision

DEMO_SESSION = "Demo review · 示例审阅"


def identity_sidebar(link_name: str | None) -> str | None:
    """Who acts (:func:`evaluators.review.service.resolve_identity`): the signed-in identity, else the
    name typed in this browser; a link's name is offered ("Continue as ...?"), never taken silently."""
    user = getattr(st, "user", None)
    signed_in = str(user.get("email") or user.get("name")) if getattr(user, "is_logged_in", False) else None
    me = rs.resolve_identity(signed_in, st.session_state.get("review_me"), link_name)
    if me.signed_in:
        st.sidebar.caption(f"Reviewing as **{md(me.name)}** (signed in)")
        return me.name
    if me.pending:
        st.sidebar.button(f"Continue as {md(me.pending)}? · 以此身份继续", key="review_confirm_link",
                          on_click=lambda: st.session_state.update(review_me=me.pending),
                          help="The link names this reviewer. Confirm only if it is you.")
    st.sidebar.text_input("Your name · 审阅人", key="review_me",
                          help="Type your own name and press Enter: it is recorded with every decision.")
    return me.name


def on_decide(*, store: ReviewStore, session, annotator: str, item_id: int, key: str, version: int,
              shown_at: float, label: str | None) -> None:
    """A decision button's callback (runs before the next script run): save what the form holds,
    at the version that was shown, then point ``key`` at the annotator's next item."""
    ss = st.session_state
    if ss.get(key) != item_id:  # a button left from an earlier item (a click during a rerun): nothing to do
        return
    try:
        rs.decide(store, session, annotator, item_id, label, comment=ss.get(f"review_comment_{item_id}", ""),
                  score=int(ss[f"review_score_{item_id}"]) if ss.get(f"review_give_score_{item_id}") else None,
                  seen_version=version, shown_at=shown_at)
    except (StaleDecision, ValueError) as exc:
        ss["review_flash"] = f"{exc}. The page now shows the saved decision."
        return
    ss[key] = rs.step(store, session, annotator, item_id, 1)


def on_step(*, store: ReviewStore, session, annotator: str, item_id: int, key: str, step: int) -> None:
    """Previous / Next: point ``key`` at the item before (by this annotator's decisions) or the next open one."""
    if st.session_state.get(key) != item_id:
        return
    st.session_state[key] = rs.step(store, session, annotator, item_id, step)


def item_card(view: rs.ItemView) -> None:
    """The item as the annotator may see it (text escaped, hidden characters made visible)."""
    with st.container(border=True):
        if view.system:
            st.caption(f"System: {md(view.system)}")
        st.markdown(f"**{md(view.title)}**")
        st.markdown("**Ground truth · 标准答案**")
        st.text(visible(view.ground_truth or "—"))
        if not view.sides:
            st.markdown("**Prediction · 模型回答**")
            st.text(visible(view.prediction or "—"))
        for col, side in zip(st.columns(2) if view.sides else [], view.sides):
            col.markdown(f"**{side.title}**" + (f" · {md(side.system)}" if side.system else ""))
            col.text(visible(side.prediction or "—"))
        if view.metrics:
            st.caption(view.metrics)


def decisions_table(decisions, key: str) -> None:
    show_table([{"annotator": d.annotator, "label": d.label or d.status, "score": d.score,
                 "comment": d.comment} for d in decisions], key=key)


def new_session_panel(store: ReviewStore, annotator: str | None, n_sessions: int) -> None:
    """The QA demo button and the upload form; a made session becomes the selected one."""
    with st.expander("New session · 新建审阅", expanded=not n_sessions):
        c1, c2 = st.columns(2)
        if c1.button("Review the QA demo · 审阅示例", key="review_demo", type="primary",
                     help="A session over the QA demo's scored records (English and Chinese)."):
            made = store.session_by_name(DEMO_SESSION)
            if made is None:
                data = demo_path("qa", "qa_demo.jsonl").read_bytes()
                made = store.create_session(DEMO_SESSION, "qa", qa_items(evaluate_qa(data, "qa_demo.jsonl")), k=2,
                                            created_by=annotator or "demo",
                                            uploads=[store.put_upload("qa_demo.jsonl", data)])
            st.session_state["review_session"] = made.id
        with c2.form("review_new", border=False):
            up = st.file_uploader("Or a QA / fact-check file (records with GT and prediction) · 上传文件",
                                  type=["jsonl", "json", "csv"], key="review_upload")
            name = st.text_input("Session name · 名称", key="review_name")
            f1, f2 = st.columns(2)
            k = f1.number_input("Reviewers per item (k)", 1, 10, 2, key="review_k")
            blind = f2.checkbox("Blind (hide system names)", value=True, key="review_blind")
            if st.form_submit_button("Create session · 创建", key="review_create"):
                try:
                    if up is None or not name.strip() or not annotator:
                        raise ValueError("Upload a file, give the session a name and confirm your own name first.")
                    data = upload_bytes(up)
                    items = qa_items(evaluate_qa(data, up.name, QAConfig(ci_resamples=0)))
                    made = store.create_session(name, "qa", items, created_by=annotator, blind=blind, k=int(k),
                                                seed=n_sessions, uploads=[store.put_upload(up.name, data)])
                    st.session_state["review_session"] = made.id
                except (InputError, ValueError) as exc:
                    st.error(md(str(exc)))


def agreement_panel(store: ReviewStore, session) -> None:
    show_table(rs.agreement_rows(store, session), key="review_agreement")
    st.caption("Cohen (1960; quadratic weights for scores, Cohen 1968), Fleiss (1971) over the items rated by the "
               "most common number of reviewers, Krippendorff (2011). Empty: not enough shared items or no variation.")
    machine = rs.automatic(store, session)
    if machine["source"]:
        st.markdown(f"**{md(machine['source'])} vs reviewers · 自动评分与人工一致性**")
        show_table(machine["per_annotator"] or [{"annotator": "—", "n_items": 0}], key="review_auto_agreement")
        alpha = machine["krippendorff_alpha"]
        st.caption(f"The automatic verdict is 'correct' at a score ≥ {machine['threshold']:g}; a reviewer's "
                   "acceptable variant is correct, a model error wrong, a GT error left out. Krippendorff's alpha "
                   f"with the automatic verdict as one more rater: {'—' if alpha is None else f'{alpha:.3f}'} "
                   f"over {machine['n_items']} item(s).")


def export_panel(store: ReviewStore, session, annotator: str | None) -> None:
    """Downloads for those who may (:func:`evaluators.review.service.can_export`)."""
    if not rs.can_export(session, annotator):
        st.info("This session is blind: its decisions (with system names and scores) are exported by its owner "
                "and adjudicators only.")
        return
    sid = session.id
    for label, make, name, mime, key in (
            ("Decisions (JSONL)", lambda: export_jsonl(store, sid).encode("utf-8"), "review_decisions.jsonl",
             "application/jsonl", "review_dl_jsonl"),
            ("Decisions (CSV, persona annotation layout)", lambda: export_csv(store, sid).encode("utf-8-sig"),
             "review_decisions.csv", "text/csv", "review_dl_csv"),
            ("GT corrections (JSONL)", lambda: corrections_jsonl(store, sid).encode("utf-8"), "gt_corrections.jsonl",
             "application/jsonl", "review_dl_gt"),
            ("Label Studio tasks (JSON)", lambda: export_tasks(store, sid).encode("utf-8"),
             "review_label_studio.json", "application/json", "review_dl_ls"),
            ("Label Studio labeling config (XML)", lambda: label_studio_config(store, sid).encode("utf-8"),
             "review_label_studio.xml", "application/xml", "review_dl_ls_config")):
        st.download_button(label, make, file_name=name, mime=mime, key=key, on_click="ignore")
    st.caption("The same files come from `python -m evaluators review export|corrections --session NAME` "
               "(`--format label-studio` / `label-studio-config`); the JSONL restores the whole session with "
               "`review import`, which also reads Label Studio's JSON export (never over newer decisions).")
