"""Review: annotators mark model errors, GT errors and acceptable variants; adjudication and agreement."""

from components.layout import page_frame

source = page_frame("Review · 人工审阅", "📝",
                    caption="Every decision is saved when submitted (SQLite by default); sessions reopen "
                            "from their link.", source_choice=False)

import json  # noqa: E402

import streamlit as st  # noqa: E402

from components.keyboard import shortcuts  # noqa: E402
from components.tables import show_table  # noqa: E402
from components.uploads import upload_bytes  # noqa: E402
from evaluators.demo import demo_path  # noqa: E402
from evaluators.io import InputError  # noqa: E402
from evaluators.qa import QAConfig, evaluate_qa  # noqa: E402
from evaluators.reports.escape import md, visible  # noqa: E402
from evaluators.review import LABELS, ReviewStore, StaleDecision, session_agreement  # noqa: E402
from evaluators.review.agreement import automatic_agreement  # noqa: E402
from evaluators.reports.review import export_csv  # noqa: E402
from evaluators.review.exchange import export_jsonl  # noqa: E402
from evaluators.review.items import qa_items  # noqa: E402
from evaluators.review.store import default_url  # noqa: E402

LABEL_TEXT = {"model_error": "1 · Model error · 模型错误", "gt_error": "2 · GT error · 标准答案错误",
              "acceptable_variant": "3 · Acceptable variant · 可接受的变体"}
DEMO_SESSION = "Demo review · 示例审阅"


@st.cache_resource(show_spinner=False)
def review_store(url: str) -> ReviewStore:
    """One store (engine and connection pool) per database URL and server process."""
    return ReviewStore(url)


store = review_store(default_url())
qp = st.query_params

# ---------------------------------------------------------------- who is reviewing
user = getattr(st, "user", None)
logged_in = bool(user is not None and getattr(user, "is_logged_in", False))
if logged_in:
    annotator = str(user.get("email") or user.get("name") or "user")
    st.sidebar.caption(f"Reviewing as **{md(annotator)}** (signed in)")
else:
    if "review_annotator" not in st.session_state and qp.get("annotator"):
        st.session_state["review_annotator"] = qp["annotator"]
    if "review_annotator" not in st.session_state:
        st.session_state["review_annotator"] = "reviewer"
    annotator = st.sidebar.text_input("Your name · 审阅人", key="review_annotator",
                                      help="Recorded with every decision and kept in the page link.").strip()
    if annotator:
        qp["annotator"] = annotator
    if annotator == "reviewer":
        st.sidebar.caption("Type your own name so that your decisions are told apart from others'.")

# ---------------------------------------------------------------- sessions
sessions = store.sessions()
with st.expander("New session · 新建审阅", expanded=not sessions):
    c1, c2 = st.columns(2)
    if c1.button("Review the QA demo · 审阅示例", key="review_demo", type="primary",
                 help="A session over the QA demo's scored records (English and Chinese)."):
        existing = store.session_by_name(DEMO_SESSION)
        if existing is None:
            data = demo_path("qa", "qa_demo.jsonl").read_bytes()
            digest = store.put_upload("qa_demo.jsonl", data)
            existing = store.create_session(DEMO_SESSION, "qa", qa_items(evaluate_qa(data, "qa_demo.jsonl")),
                                            created_by=annotator or "demo", k=2, seed=0, uploads=[digest])
        st.session_state["review_session"] = existing.id
    with c2.form("review_new", border=False):
        up = st.file_uploader("Or a QA / fact-check file (records with GT and prediction) · 上传文件",
                              type=["jsonl", "json", "csv"], key="review_upload")
        name = st.text_input("Session name · 名称", key="review_name")
        f1, f2 = st.columns(2)
        k = f1.number_input("Reviewers per item (k)", 1, 10, 2, key="review_k")
        blind = f2.checkbox("Blind (hide system names)", value=True, key="review_blind")
        if st.form_submit_button("Create session · 创建", key="review_create"):
            if up is None or not name.strip():
                st.error("Upload a file and give the session a name.")
            else:
                try:
                    data = upload_bytes(up)
                    items = qa_items(evaluate_qa(data, up.name, QAConfig(ci_resamples=0)))
                    made = store.create_session(name.strip(), "qa", items, created_by=annotator or "anonymous",
                                                blind=blind, k=int(k), seed=len(sessions),
                                                uploads=[store.put_upload(up.name, data)])
                    st.session_state["review_session"] = made.id
                except (InputError, ValueError) as exc:
                    st.error(md(str(exc)))

sessions = store.sessions()
if not sessions:
    st.info("No review session yet: start one with **Review the QA demo**, or upload a file above.")
    st.stop()
ids = [s.id for s in sessions]
if "review_session" not in st.session_state and qp.get("session", "").isdigit() and int(qp["session"]) in ids:
    st.session_state["review_session"] = int(qp["session"])
if st.session_state.get("review_session") not in ids:
    st.session_state["review_session"] = ids[0]
session_id = st.selectbox("Session · 审阅任务", ids, key="review_session",
                          format_func=lambda i: visible(next(s.name for s in sessions if s.id == i)))
qp["session"] = str(session_id)
session = store.session(session_id)
items = store.items(session_id)
decisions = store.decisions(session_id)  # read once per run: a save reruns the page
st.caption(f"{len(items)} items · {session.kind} · k = {session.k} reviewer(s) per item"
           + (" · blind" if session.blind else "") + f" · created by {md(session.created_by)}")

tab_review, tab_adjudicate, tab_agreement, tab_export = st.tabs(
    ["Review · 审阅", "Adjudicate · 裁决", "Agreement · 一致性", "Export · 导出"])

with tab_review:
    if not annotator:
        st.info("Type your name in the sidebar to start reviewing (it is recorded with each decision).")
    else:
        order = store.order_for(session_id, annotator, decisions)
        if not order:
            st.success("Nothing left for you in this session: every item has its reviewers.")
        else:
            pos_key = f"review_pos_{session_id}"
            if pos_key not in st.session_state:
                wanted = qp.get("item")
                st.session_state[pos_key] = next((n for n, it in enumerate(order) if str(it.id) == wanted), None)
                if st.session_state[pos_key] is None:  # first item without a decision of this annotator
                    mine = {d.item_id for d in decisions if d.annotator == annotator}
                    st.session_state[pos_key] = next((n for n, it in enumerate(order) if it.id not in mine), 0)
            pos = min(st.session_state[pos_key], len(order) - 1)
            item = order[pos]
            qp["item"] = str(item.id)
            done = sum(1 for d in decisions if d.annotator == annotator and d.status != "draft")
            st.progress(done / len(order), text=f"You have decided {done} of {len(order)} · item {pos + 1}")
            p = item.payload
            pair = isinstance(p.get("sides"), dict) and {"A", "B"} <= set(p["sides"])
            # A/B item: the screen's left/right are the stored A/B, swapped per annotator in blind mode
            screen = ("B", "A") if pair and ReviewStore.blind_sides(session, annotator, item) else ("A", "B")
            with st.container(border=True):
                if p.get("system") and not session.blind:
                    st.caption(f"System: {md(p['system'])}")
                st.markdown(f"**{md(p.get('id', ''))}** · " + md(p.get("question") or p.get("context") or ""))
                st.markdown("**Ground truth · 标准答案**")
                st.text(visible(p.get("ground_truth") or "—"))
                if pair:
                    for col, side, name in zip(st.columns(2), screen, ("Left · 左", "Right · 右")):
                        shown_side = p["sides"][side]
                        col.markdown(f"**{name}**" + ("" if session.blind else f" · {md(shown_side.get('system'))}"))
                        col.text(visible(shown_side.get("prediction") or "—"))
                else:
                    st.markdown("**Prediction · 模型回答**")
                    st.text(visible(p.get("prediction") or "—"))
                if p.get("exact_match") is not None and not session.blind:
                    st.caption(f"EM {p['exact_match']:.0f} · F1 {p.get('token_f1') or 0:.2f}")
            mine = store.decision(item.id, annotator)
            # Optimistic locking against what this page showed last time, not what is stored now: a
            # decision saved meanwhile (another tab, a colleague under the same name) is never overwritten.
            seen_key = f"review_seen_{session_id}_{item.id}_{annotator}"
            seen_version = st.session_state.get(seen_key, mine.version if mine else 0)
            st.session_state[seen_key] = mine.version if mine else 0
            with st.form(f"review_form_{item.id}", border=False):
                give_score = st.checkbox("Give a 1-5 score · 打分", value=bool(mine and mine.score),
                                         key=f"review_give_score_{item.id}")
                score = st.slider("Score (5 = as good as the reference)", 1, 5, (mine.score if mine and mine.score
                                                                                 else 3), key=f"review_score_{item.id}")
                comment = st.text_area("Comment · 备注", value=mine.comment if mine else "",
                                       key=f"review_comment_{item.id}")
                st.caption("Decide with one click: the decision is saved and the next item opens.")
                buttons = st.columns(4)
                chosen = None
                if pair:  # screen choices, each saved as the stored side's label
                    left, right = screen
                    choices = [("left", "1 · Left better · 左边更好", f"{left.lower()}_better"),
                               ("right", "2 · Right better · 右边更好", f"{right.lower()}_better"),
                               ("tie", "3 · Tie · 相当", "tie")]
                else:
                    choices = [(lab, LABEL_TEXT[lab], lab) for lab in LABELS]
                for col, (slug, text, lab) in zip(buttons, choices):
                    if col.form_submit_button(text, key=f"review_{slug}_{item.id}",
                                              type="primary" if mine and mine.label == lab else "secondary",
                                              wrap=True):  # a long bilingual label wraps, never cut
                        chosen = lab
                if buttons[3].form_submit_button("Skip · 跳过", key=f"review_skip_{item.id}"):
                    chosen = "skip"
            if chosen is not None:
                try:
                    store.save_decision(item.id, annotator, label=None if chosen == "skip" else chosen,
                                        score=int(score) if give_score and chosen != "skip" else None, comment=comment,
                                        status="skipped" if chosen == "skip" else "submitted",
                                        expected_version=seen_version)
                    st.session_state.pop(seen_key, None)
                    st.session_state[pos_key] = min(pos + 1, len(order) - 1)
                    st.rerun()
                except StaleDecision as exc:
                    st.warning(md(f"{exc}. The page now shows the saved decision."))
            n1, n2 = st.columns(2)
            if n1.button("◀ Previous", key="review_prev", disabled=pos == 0):
                st.session_state[pos_key] = pos - 1
                st.rerun()
            if n2.button("Next ▶", key="review_next", disabled=pos >= len(order) - 1):
                st.session_state[pos_key] = pos + 1
                st.rerun()
            if mine:
                st.caption(f"Saved: {md(mine.label or mine.status)} (version {mine.version}, {md(mine.updated_at)})")
            st.caption("Keyboard: 1 / 2 / 3 decide, S skips, J next, K previous (not while typing in a field).")
            slugs = ("left", "right", "tie") if pair else LABELS
            shortcuts({**{str(n): f"review_{slug}_{item.id}" for n, slug in enumerate(slugs, start=1)},
                       "s": f"review_skip_{item.id}", "j": "review_next", "k": "review_prev"})

with tab_adjudicate:
    queue = store.adjudication_queue(session_id)
    if not queue:
        st.success("No item waits for adjudication (reviewers agree and nobody marked a GT error).")
    else:
        st.caption(f"{len(queue)} item(s) where reviewers disagree or someone marked a GT error.")
        pick = st.selectbox("Item", range(len(queue)), key="review_adj_item",
                            format_func=lambda n: visible(str(queue[n][0].payload.get("id", queue[n][0].id))))
        item, item_decisions = queue[pick]
        st.text(visible(f"GT: {item.payload.get('ground_truth')}\nPrediction: {item.payload.get('prediction')}"))
        show_table([{"annotator": d.annotator, "label": d.label, "score": d.score,
                     "comment": d.comment} for d in item_decisions], key="review_adj_table")
        with st.form("review_adj_form", border=False):
            final = st.radio("Final decision", list(LABELS), format_func=LABEL_TEXT.get, horizontal=True,
                             key="review_adj_label")
            note = st.text_input("Why", key="review_adj_note")
            if st.form_submit_button("Decide · 裁决", key="review_adj_submit") and annotator:
                store.adjudicate(item.id, annotator, final, note)
                st.rerun()
        if not annotator:
            st.caption("Type your name in the sidebar to adjudicate.")

with tab_agreement:
    agr = session_agreement(decisions)
    rows = []
    for field, block in agr.items():
        rows.append({"what": "labels (nominal)" if field == "label" else "1-5 scores (ordinal)",
                     "items rated by 2+": block["n_items"], "annotators": block["n_annotators"],
                     "Cohen's kappa (mean of pairs)": block["cohen_kappa_mean"],
                     "Fleiss' kappa": block["fleiss_kappa"], "Krippendorff's alpha": block["krippendorff_alpha"]})
    show_table(rows, key="review_agreement", counts=("items rated by 2+", "annotators"))
    st.caption("Cohen (1960; quadratic weights for scores, Cohen 1968), Fleiss (1971) over the items rated by the "
               "most common number of reviewers, Krippendorff (2011). Empty: not enough shared items or no variation.")
    machine = automatic_agreement(items, decisions)
    if machine["source"]:
        st.markdown(f"**{md(machine['source'])} vs reviewers · 自动评分与人工一致性**")
        show_table(machine["per_annotator"] or [{"annotator": "—", "n_items": 0}],
                   key="review_auto_agreement")
        alpha = machine["krippendorff_alpha"]
        st.caption(f"The automatic verdict is 'correct' at a score ≥ {machine['threshold']:g}; a reviewer's "
                   "acceptable variant is correct, a model error wrong, a GT error left out. Krippendorff's alpha "
                   f"with the automatic verdict as one more rater: {'—' if alpha is None else f'{alpha:.3f}'} "
                   f"over {machine['n_items']} item(s).")

with tab_export:
    st.download_button("Decisions (JSONL)", lambda: export_jsonl(store, session_id).encode("utf-8"),
                       file_name="review_decisions.jsonl", mime="application/jsonl", key="review_dl_jsonl",
                       on_click="ignore")
    st.download_button("Decisions (CSV, persona annotation layout)",
                       lambda: export_csv(store, session_id).encode("utf-8-sig"), file_name="review_decisions.csv",
                       mime="text/csv", key="review_dl_csv", on_click="ignore")
    st.download_button("GT corrections (JSONL)",
                       lambda: "".join(json.dumps(c, ensure_ascii=False) + "\n"
                                       for c in store.gt_corrections(session_id)).encode("utf-8"),
                       file_name="gt_corrections.jsonl", mime="application/jsonl", key="review_dl_gt",
                       on_click="ignore")
    st.caption("The same files come from `python -m evaluators review export|corrections --session NAME`; "
               "the JSONL imports back with `review import` (idempotent).")
