"""Pieces of the Review page: the item card, decision tables, the new-session panel, the
agreement and export panels.  Rules (who may, what is shown) come from
:mod:`evaluators.review.service`; these only lay out what they are given."""

from __future__ import annotations

import dataclasses

import streamlit as st

from components.downloads import download
from components.problems import show_problems
from components.review_link import create_review_session
from components.tables import show_table
from components.textdiff import render_char_diff
from components.uploads import upload_bytes, upload_digest
from evaluators.demo import demo_path
from evaluators.io import InputError
from evaluators.reports.format import fixed
from evaluators.qa import evaluate_qa
from evaluators.reports.escape import md, visible
from evaluators.reports.review import corrections_jsonl, export_csv, label_studio_config
from evaluators.review import service as rs
from evaluators.review.create import ORDER_TEXT, ORDERS, create_qa_session
from evaluators.review.exchange import export_jsonl
from evaluators.review.label_studio import export_tasks
from evaluators.review.limits import MAX_K
from evaluators.review.items import qa_items
from evaluators.review.store import MAX_UPLOAD_BYTES, ReviewStore, StaleDecision

DEMO_SESSION = "Demo review · 示例审阅"


def _decide(*, store: ReviewStore, session, annotator: str, item_id: int, key: str, version: int,
            shown_at: float, label: str | None, filters=None) -> str:
    """Save what the form holds at the version that was shown, then point ``key`` at the next item;
    returns what was saved (raises StaleDecision / ValueError, saving nothing)."""
    ss = st.session_state
    if ss.get(key) != item_id:  # a button left from an earlier item (a click during a rerun): nothing to do
        raise ValueError("this item is no longer the one shown")
    saved = rs.decide(store, session, annotator, item_id, label, comment=ss.get(f"review_comment_{item_id}", ""),
                      score=int(ss[f"review_score_{item_id}"]) if ss.get(f"review_give_score_{item_id}") else None,
                      seen_version=version, shown_at=shown_at)
    ss[key] = rs.step(store, session, annotator, item_id, 1, filters)
    return f"saved · 已保存 ({saved.label or saved.status} on item {item_id}, version {saved.version})"


def _refused(store: ReviewStore, session, exc: Exception) -> str:
    """The warning for a decision that was not saved: a session deleted meanwhile (``review delete``) is said
    so (the page then opens another one); only a stale save (:class:`StaleDecision`) "shows the saved
    decision"; anything else refused (a comment over the limit) says that nothing was saved."""
    try:
        store.session(session.id)
    except KeyError:
        return f"Session '{session.name}' was deleted meanwhile: nothing was saved. The page now shows another session."
    if isinstance(exc, StaleDecision):  # saved meanwhile elsewhere: this run shows that decision
        return f"{exc}. The page now shows the saved decision."
    return f"{exc}: nothing was saved."  # refused (a comment over the limit ...): the item and its form stay


def on_decide(**kwargs) -> None:
    """A decision button's callback (runs before the next script run): :func:`_decide`, a failure
    shown as the page's warning."""
    try:
        _decide(**kwargs)
    except (StaleDecision, ValueError, PermissionError) as exc:
        if "no longer the one shown" not in str(exc):
            st.session_state["review_flash"] = _refused(kwargs["store"], kwargs["session"], exc)


def key_decide(**kwargs) -> str:
    """A decision key's action (:mod:`components.keyboard`): as :func:`on_decide`, the result acknowledged."""
    try:
        return _decide(**kwargs)
    except (StaleDecision, ValueError, PermissionError) as exc:
        st.session_state["review_flash"] = _refused(kwargs["store"], kwargs["session"], exc)
        raise


def on_step(*, store: ReviewStore, session, annotator: str, item_id: int, key: str, step: int,
            filters=None, **_ignored) -> str:
    """Previous / Next: point ``key`` at the item before (by this annotator's decisions) or the next open one."""
    if st.session_state.get(key) != item_id:
        return "the page changed"
    st.session_state[key] = target = rs.step(store, session, annotator, item_id, step, filters)
    return "no other item" if target == item_id else ("previous item" if step < 0 else "next item")


def on_undo(*, store: ReviewStore, session, annotator: str, key: str, change: int | None, **_ignored) -> str:
    """Undo the annotator's last decision (the one the button named) and show its item."""
    ss = st.session_state
    try:
        entry = rs.undo(store, session, annotator, expected_change=change)
    except (StaleDecision, LookupError, PermissionError) as exc:
        ss["review_flash"] = f"Nothing undone: {exc}"
        raise
    ss[key] = entry.item_id
    back = rs.label_words(entry.new_label or entry.new_status) or "no decision"
    ss["review_flash_ok"] = f"Undone: the item is back to {back} · 已撤销"
    return f"undone · 已撤销 (back to {back})"


def on_click_undo(**kwargs) -> None:
    try:
        on_undo(**kwargs)
    except (StaleDecision, LookupError, PermissionError):
        pass


def review_filters(store: ReviewStore, session, annotator: str | None) -> object | None:
    """The queue filters this annotator may use (:func:`evaluators.review.service.allowed_filters`),
    as widgets; returns the :class:`~evaluators.review.store.QueueFilter` (``None``: no filter).
    Changing a filter drops the current item, so the next one comes from the filtered queue."""
    allowed = rs.allowed_filters(session, annotator)
    if not allowed:
        return None
    sid = session.id
    def reset() -> None:  # the next item comes from the filtered queue (not the link's item again)
        st.session_state.pop(f"review_cur_{sid}", None)
        if (link := st.session_state.get("review_link")) is not None:
            st.session_state["review_link"] = dataclasses.replace(link, item=None)

    reset = {"on_change": reset}
    picked: dict = {}
    with st.expander("Filters · 筛选", expanded=False):
        cols = st.columns(4)
        if "system" in allowed and (systems := store.systems(sid)):
            picked["system"] = cols[0].selectbox("System · 系统", [None, *systems], key=f"review_f_system_{sid}",
                                                 format_func=lambda v: "any · 全部" if v is None else visible(v),
                                                 **reset)
        if "label" in allowed:
            picked["label"] = cols[1].selectbox("A reviewer's label · 标签", [None, *rs.ALL_LABELS],
                                                key=f"review_f_label_{sid}",
                                                format_func=lambda v: "any · 全部" if v is None else v, **reset)
        if "disagreement" in allowed:
            picked["disagreement"] = cols[2].checkbox("Reviewers disagree · 有分歧", key=f"review_f_disagree_{sid}",
                                                      **reset)
        if "metric" in allowed and (what := rs.metric_name(session)):
            on = cols[3].checkbox(f"{what} range · 分数范围", key=f"review_f_metric_on_{sid}", **reset)
            low, high = cols[3].slider(f"{what}", 0.0, 1.0, (0.0, 1.0), 0.05, key=f"review_f_metric_{sid}",
                                       disabled=not on, **reset)
            picked["metric_range"] = (low, high) if on else None
        st.caption("Filters pick which open items you get next (items with fewer than k reviews that you have "
                   "not decided).")
    try:
        return rs.queue_filter(session, annotator, **picked)
    except (PermissionError, ValueError) as exc:
        st.warning(md(str(exc)))
        return None


def team_panel(store: ReviewStore, session) -> None:
    """Team progress (aggregate queries, cached until the session changes)."""
    team = store.team_progress(session.id)
    with st.expander(f"Team progress · 团队进度: {team.complete} of {team.n_items} item(s) have all {team.k} "
                     "reviews", expanded=True):
        st.caption(" · ".join(f"{m} item(s) with {n} review(s)" for n, m in team.by_reviews.items()))
        fast_team_table(store, session)


def fast_team_table(store: ReviewStore, session) -> None:
    """Team progress per annotator (:func:`evaluators.review.service.team_rows`) with each one's decisions made
    faster than the session's threshold (:func:`evaluators.review.service.fast_threshold`)."""
    threshold = rs.fast_threshold(session)
    show_table(rs.team_rows(store, session) or [{"annotator": None, "decided": 0, "skipped": 0}], key="review_team",
               column_config={"median seconds on item": st.column_config.NumberColumn(format="%.1f"),
                              "fast decisions": st.column_config.NumberColumn(
                                  f"under {threshold:g} s", help=f"Submitted decisions made in less than "
                                  f"{threshold:g} s on the item (a session setting; default "
                                  f"{rs.FAST_ENV}, else {rs.DEFAULT_FAST_SECONDS:g} s): read too fast to be "
                                  "careful?")})
    st.caption(f"“under {threshold:g} s”: submitted decisions made in less than {threshold:g} seconds on the item, "
               "per annotator (skips and decisions without a recorded time are not counted).")


def history_panel(store: ReviewStore, session, annotator: str | None, item_id: int) -> None:
    """The item's decision history (one's own; everyone's for those who may see it)."""
    rows = rs.history_rows(store, session, annotator, item_id)
    with st.expander(f"History of this item · 历史 ({len(rows)} change(s))", expanded=False):
        if rows:
            show_table(rows, key="review_history", counts=("version", "guidelines"))
        else:
            st.caption("No change of a decision you may see yet.")


def gold_panel(store: ReviewStore, session, annotator: str | None, item) -> None:
    """Owners: mark the shown item as gold with its known label (never shown to reviewers)."""
    if not rs.can_manage(session, annotator):
        return
    labels = list(rs.labels_for(item))
    with st.expander("Gold item (owners) · 金标准" + (f": {item.gold}" if item.gold else ""), expanded=False):
        with st.form(f"review_gold_form_{item.id}", border=False):
            pick = st.selectbox("Known label · 已知标签", [None, *labels], key=f"review_gold_{item.id}",
                                index=([None, *labels].index(item.gold) if item.gold in labels else 0),
                                format_func=lambda v: "not gold · 非金标准" if v is None else rs.label_words(v))
            if st.form_submit_button("Save gold mark · 保存", key=f"review_gold_save_{item.id}"):
                try:
                    rs.mark_gold(store, session, annotator, item.id, pick)
                    st.toast("Gold mark saved · 已保存")
                except (PermissionError, ValueError) as exc:
                    st.error(md(str(exc)))


def _on_blind(store: ReviewStore, session, who: str | None, key: str) -> None:
    ss = st.session_state
    try:
        rs.set_blind(store, session, who, bool(ss.get(key)))
    except (PermissionError, ValueError) as exc:
        ss[key] = session.blind  # the switch shows what is stored
        ss["review_settings_flash"] = str(exc)


def _on_save_settings(*, store: ReviewStore, session, who: str | None) -> None:
    """The settings form's Save: everything in it through :func:`evaluators.review.service.update_settings`
    (which refuses anyone but the owner and the admins); the outcome is shown in the panel."""
    ss, sid = st.session_state, session.id
    try:
        saved = rs.update_settings(
            store, session, who, guidelines=ss.get(f"review_set_guidelines_{sid}", session.guidelines),
            labels_help={lab: ss.get(f"review_set_help_{lab}_{sid}") or "" for lab in rs.LABELS},
            k=int(ss.get(f"review_set_k_{sid}", session.k)),
            fast_seconds=_changed_fast(session, ss.get(f"review_set_fast_{sid}")),
            adjudicators=str(ss.get(f"review_set_adjudicators_{sid}", "")).split(","))
    except (PermissionError, ValueError) as exc:
        ss["review_settings_flash"] = str(exc)
        return
    version = saved.guidelines_version
    ss["review_settings_ok"] = ("Settings saved · 已保存" + (f" (guidelines v{version})" if version else ""))


def _changed_fast(session, value) -> float | None:
    """The form's fast-decision threshold when it differs from the session's (``None``: leave it unset, so
    the environment's default still applies)."""
    if value is None or abs(float(value) - rs.fast_threshold(session)) < 1e-9:
        return None
    return float(value)


def settings_panel(store: ReviewStore, session, annotator: str | None, *, nested: bool = False) -> None:
    """Session settings: owners edit guidelines (a new version per save; versions listed, two of them
    diffed), label help, k, adjudicators and blind mode; others see the settings and who may change them."""
    flash = st.session_state.pop("review_settings_flash", None)
    ok = st.session_state.pop("review_settings_ok", None)
    manage, sid = rs.can_manage(session, annotator), session.id
    label = "Session settings (owners) · 设置" if manage else "Session settings · 设置"
    with _box(label, bool(flash or ok), nested):
        if not manage:
            st.info(md(rs.settings_refusal(session, annotator)))
            st.caption(f"k = {session.k} · blind: {'yes' if session.blind else 'no'} · adjudicators: "
                       f"{md(', '.join(session.adjudicators)) or '(none)'}"
                       + (f" · guidelines v{session.guidelines_version}" if session.guidelines_version else ""))
        else:
            key = f"review_blind_{sid}"
            st.toggle("Blind: hide system names and scores · 盲评", value=session.blind, key=key,
                      on_change=_on_blind, args=(store, session, annotator, key))
            st.caption("Blind mode can be turned on at any time; once a decision was made blind it stays on.")
            helps = (session.settings or {}).get("labels_help") or {}
            with st.form(f"review_settings_form_{sid}", border=False):
                st.text_area("Guidelines (Markdown) · 审阅指南", value=session.guidelines, height=200,
                             key=f"review_set_guidelines_{sid}",
                             help="Shown above every item with its version; each save of a changed text is a "
                                  "new version, and every decision keeps the version it was made under.")
                st.markdown("**Label help · 标签说明** (shown on the label buttons; empty: the default)")
                for lab in rs.LABELS:
                    st.text_input(rs.label_words(lab), value=helps.get(lab, ""), key=f"review_set_help_{lab}_{sid}",
                                  placeholder=rs.LABEL_HELP.get(lab, ""))
                c1, c2 = st.columns(2)
                c1.number_input("Reviewers per item (k)", 1, MAX_K, int(session.k), key=f"review_set_k_{sid}")
                c1.number_input("Fast decision: under (seconds) · 过快阈值", 0.1, 3600.0,
                                float(rs.fast_threshold(session)), step=0.5, key=f"review_set_fast_{sid}",
                                help="Team progress counts each annotator's decisions made faster than this.")
                c2.text_input("Adjudicators (comma-separated) · 裁决人", value=", ".join(session.adjudicators),
                              key=f"review_set_adjudicators_{sid}")
                st.form_submit_button("Save settings · 保存设置", key=f"review_set_save_{sid}",
                                      on_click=_on_save_settings,
                                      kwargs={"store": store, "session": session, "who": annotator})
        if flash:
            st.warning(md(flash))
        if ok:
            st.success(md(ok))
        versions = rs.guidelines_versions(store, session)
        if versions:
            st.markdown("**Guidelines versions · 指南版本**")
            show_table([{"version": v["version"], "by": v["by"], "saved at": (v["at"] or "")[:19].replace("T", " "),
                         "characters": len(v["text"]), "decisions": v["decisions"]} for v in versions],
                       key=f"review_set_versions_{sid}", counts=("version", "characters", "decisions"))
        if len(versions) >= 2:
            numbers = [v["version"] for v in versions]
            d1, d2 = st.columns(2)
            old = d1.selectbox("Compare version", numbers, index=len(numbers) - 2, key=f"review_set_diff_old_{sid}",
                               format_func=lambda n: f"v{n}")
            new = d2.selectbox("with version", numbers, index=len(numbers) - 1, key=f"review_set_diff_new_{sid}",
                               format_func=lambda n: f"v{n}")
            diff = rs.guidelines_diff(store, session, old, new)
            st.code(diff or "(the same text)", language="diff")


def gold_accuracy_panel(store: ReviewStore, session, annotator: str | None) -> None:
    rows = rs.gold_rows(store, session, annotator)
    if rows is None:
        return
    st.markdown("**Accuracy on gold items · 金标准准确率** (owners)")
    if rows:
        show_table(rows, key="review_gold_accuracy", column_config=_three_places("accuracy", "95% CI low",
                                                                                 "95% CI high"))
        st.caption("Submitted decisions on gold items that carry the gold label; 95% Wilson (1927) interval.")
    else:
        st.caption("No decision on a gold item yet (mark gold items on the Review view).")


def item_card(view: rs.ItemView) -> None:
    """The item as the annotator may see it (text escaped, hidden characters made visible)."""
    with st.container(border=True):
        if view.system:
            st.caption(f"System: {md(view.system)}")
        st.markdown(f"**{md(view.title)}**")
        if not view.sides:  # GT against prediction, the differing characters (CJK) or words marked
            render_char_diff(rs.text_diff(view.ground_truth or "", view.prediction or ""),
                             ("Ground truth · 标准答案", "Prediction · 模型回答"))
        else:
            st.markdown("**Ground truth · 标准答案**")
            st.text(visible(view.ground_truth or "—"))
        for col, side in zip(st.columns(2) if view.sides else [], view.sides):
            col.markdown(f"**{side.title}**" + (f" · {md(side.system)}" if side.system else ""))
            col.text(visible(side.prediction or "—"))
        if view.metrics:
            st.caption(view.metrics)


def decisions_table(decisions, key: str) -> None:
    show_table([{"annotator": d.annotator, "label": rs.label_words(d.label or d.status), "score": d.score,
                 "comment": d.comment, "guidelines": d.guidelines_version} for d in decisions], key=key,
               counts=("score", "guidelines"))


def _box(label: str, expanded: bool, nested: bool):
    """An expander, or (``nested``: inside the page's one collapsed session block, where Streamlit allows
    no expander) a container headed by the same label (no border: a border's padding narrowed the columns
    and cut the label of *Review what's new* at 1440 px)."""
    if not nested:
        return st.expander(label, expanded=expanded)
    box = st.container()
    box.markdown(f"**{label}**")
    return box


def new_session_panel(store: ReviewStore, annotator: str | None, n_sessions: int, *,
                      nested: bool = False) -> int | None:
    """The QA demo button and the upload form; a made session becomes the selected one (its id is returned:
    the page runs again to show it)."""
    made_id = None
    with _box("New session · 新建审阅", not n_sessions, nested):
        c1, c2 = st.columns(2)
        if c1.button("Review the QA demo · 审阅示例", key="review_demo", type="primary",
                     help="A session over the QA demo's scored records (English and Chinese)."):
            made = store.session_by_name(DEMO_SESSION)
            if made is None:  # checked and audited with the session (evaluators.review.service.create_session)
                data = demo_path("qa", "qa_demo.jsonl").read_bytes()
                try:
                    made = create_review_session(DEMO_SESSION, "qa", qa_items(evaluate_qa(data, "qa_demo.jsonl")),
                                                 created_by=annotator or "demo", files=[("qa_demo.jsonl", data)],
                                                 store=store)
                except PermissionError:
                    st.error(f"Your role ({md(getattr(annotator, 'role', None) or 'none')}) does not create "
                             "sessions.")
            if made is not None:
                st.session_state["review_session"] = made_id = made.id
        with c2.form("review_new", border=False):
            # the review store keeps at most MAX_UPLOAD_BYTES: the uploader says so (not the server's 1 GB)
            up = st.file_uploader("Or a QA / fact-check file (records with GT and prediction) · 上传文件",
                                  type=["jsonl", "json", "csv"], key="review_upload",
                                  max_upload_size=MAX_UPLOAD_BYTES // 2**20)
            name = st.text_input("Session name · 名称", key="review_name")
            f1, f2 = st.columns(2)
            k = f1.number_input("Reviewers per item (k)", 1, MAX_K, 2, key="review_k")
            blind = f2.checkbox("Blind (hide system names)", value=True, key="review_blind")
            order = f1.selectbox("Order · 顺序", ORDERS, key="review_order", format_func=ORDER_TEXT.get)
            new_only = f2.checkbox("Review what's new · 只审新的", key="review_new_only",
                                   help="Only the records whose question, GT and prediction were never reviewed in "
                                        "a session here; the others keep their earlier verdict (carried forward).")
            if st.form_submit_button("Create session · 创建", key="review_create"):
                try:
                    if up is None or not name.strip() or not annotator:
                        raise ValueError("Upload a file, give the session a name and confirm your own name first.")
                    made = create_qa_session(store, name, upload_bytes(up), up.name, created_by=annotator,
                                             blind=blind, k=int(k), seed=n_sessions, order=order, new_only=new_only)
                    st.session_state["review_session"] = made_id = made.session.id
                    if new_only:
                        st.session_state["review_flash_ok"] = (
                            f"{made.session.n_items} new record(s) to review of {made.offered}; {len(made.carried)} "
                            "carried forward with their earlier verdict.")
                except InputError as exc:  # the file cannot be read: where and why, as on the other pages
                    show_problems([exc.issue], key="review_upload_problems", error="Cannot read this file:")
                except (ValueError, PermissionError) as exc:
                    st.error(md(str(exc)))
    return made_id


def _three_places(*columns: str) -> dict:
    return {c: st.column_config.NumberColumn(c, format="%.3f") for c in columns}


def _short_time(iso: str | None) -> str | None:
    """``"2026-11-27T20:56:23.166756+00:00"`` -> ``"2026-11-27 20:56:23 UTC"`` (the store's times are UTC);
    anything else as it is."""
    if not iso or not str(iso).endswith("+00:00") or "T" not in str(iso):
        return iso
    return str(iso)[:19].replace("T", " ") + " UTC"


def agreement_panel(store: ReviewStore, session, annotator: str | None = None) -> None:
    """Team progress, agreement figures, the automatic verdict against reviewers, gold accuracy (owners)."""
    team_panel(store, session)
    by_version = st.toggle("Split by guidelines version · 按指南版本", key="review_agree_by_guidelines",
                           disabled=not session.guidelines_version,
                           help="The figures of the decisions made under each guidelines version apart "
                                "(pairs of reviewers who decided an item under the same version).")
    # the note "not yet meaningful: 3 items (fewer than 30)" gets a wide column (the grid cut it to "not yet mea…")
    show_table(rs.agreement_rows(store, session, by_guidelines=bool(by_version and session.guidelines_version)),
               key="review_agreement", counts=("n_items", "annotators"),
               column_config={**_three_places("value", "95% CI low", "95% CI high"),
                              "meaningful": st.column_config.TextColumn("meaningful", width="large")})
    st.caption("Each figure with its 95% percentile bootstrap interval over items and the number of items "
               "behind it; under 30 items it is flagged 'not yet meaningful'. Cohen (1960; quadratic weights for "
               "scores, Cohen 1968), Fleiss (1971) over the items rated by the most common number of reviewers, "
               "Krippendorff (2011). Empty: not enough shared items or no variation.")
    # no "system" in a blind session for those who may not see its system names (the service refuses it too)
    slices = rs.agreement_slices(session, annotator)
    by = st.selectbox("Agreement by · 分组一致性", ("—", *slices), key="review_agree_slice",
                      help="The same figures for each " + ("system, each " if "system" in slices else "")
                           + "question type, or each of ten windows of time (the items in order of their last "
                             "decision), each with its own interval and flag.")
    if by in slices:
        rows = rs.agreement_slice_rows(store, session, by, annotator)
        if by == "time":  # "2026-11-27 20:56:23 UTC", not the stored ISO time with microseconds (two wide columns)
            rows = [{**r, "from": _short_time(r["from"]), "to": _short_time(r["to"])} for r in rows]
        show_table(rows, key="review_agreement_slices",
                   counts=("n_items", "annotators"),
                   column_config={**_three_places("value", "95% CI low", "95% CI high"),
                                  "meaningful": st.column_config.TextColumn("meaningful", width="large")})
    machine = rs.automatic(store, session)
    if machine["source"]:
        st.markdown(f"**{md(machine['source'])} vs reviewers · 自动评分与人工一致性**")
        rows = machine["per_annotator"] or [{"annotator": "—", "n_items": 0}]
        # the note ("not yet meaningful: ...") beside the counts, in a wide column: as the last of eleven
        # columns it was cut at the grid's edge ("not yet mea…")
        order = [c for c in rows[0] if c != "note"]
        if "note" in rows[0]:
            order.insert(order.index("n_items") + 1 if "n_items" in order else 1, "note")
        show_table(rows, key="review_auto_agreement", column_order=order,
                   column_config={"note": st.column_config.TextColumn("note", width="large")})
        alpha = machine["krippendorff_alpha"]
        st.caption(f"The automatic verdict is 'correct' at a score ≥ {machine['threshold']:g}; a reviewer's "
                   "acceptable variant is correct, a model error wrong, a GT error left out. Krippendorff's alpha "
                   f"with the automatic verdict as one more rater: {fixed(alpha)} "
                   f"over {machine['n_items']} item(s). Reviewers with each other on the same two labels "
                   f"(the ceiling): mean Cohen's kappa "
                   f"{fixed(machine.get('human_kappa'))} "
                   f"over {machine.get('human_kappa_items', 0)} item(s).")
    gold_accuracy_panel(store, session, annotator)


def on_adjudicate(*, store: ReviewStore, session, who: str | None, item_id: int) -> None:
    """The Decide button's callback: record the final label, confirm, and move the picker to the next
    item waiting for adjudication."""
    ss = st.session_state
    try:  # no label is pre-chosen: the engine refuses a Decide without one
        rs.adjudicate(store, session, who, item_id, ss.get("review_adj_label"),
                      ss.get("review_adj_note", ""), corrected_answer=ss.get("review_adj_answer") or None)
    except (PermissionError, ValueError) as exc:
        ss["review_adj_flash"] = str(exc)
        return
    ss["review_adj_toast"] = "Adjudicated · 已裁决"
    following = rs.next_to_adjudicate(store, session, item_id)
    if following is not None:
        ss["review_adj_item"] = following
    ss["review_adj_label"] = None  # the next item starts with nothing chosen
    for k in ("review_adj_note", "review_adj_answer"):
        ss.pop(k, None)


def adjudication_card(view: rs.AdjudicationView) -> None:
    """The item as its reviewers saw it (question, GT, prediction and their diff, system and metric unless
    blind), then every reviewer's label in words, score and comment."""
    with st.container(border=True):
        if view.system:
            st.caption(f"System: {md(view.system)}")
        st.markdown("**Question · 问题**")
        st.text(visible(view.question or "—"))
        if view.sides:
            for col, side in zip(st.columns(2), view.sides):
                col.markdown(f"**{side.title}**" + (f" · {md(side.system)}" if side.system else ""))
                col.text(visible(side.prediction or "—"))
        else:
            render_char_diff(view.diff, ("Ground truth · 标准答案", "Prediction · 模型回答"))
        if view.metrics:
            st.caption(view.metrics)
    st.markdown("**Reviewers · 审阅人**")
    if view.reviewers:
        show_table(view.reviewers, key="review_adj_table", counts=("score", "guidelines"),
                   column_config={"comment": st.column_config.TextColumn("comment", width="large")})
        for r in view.reviewers:  # comments in full (the grid cuts long ones)
            if r["comment"]:
                st.markdown(f"- **{md(r['annotator'])}** ({md(r['label'])}): {md(r['comment'])}")
    else:
        st.caption("No submitted decision.")


def adjudication_panel(store: ReviewStore, session, who: str | None) -> None:
    """Items where reviewers disagree or someone marked a GT error, GT-error claims first and then the most
    split: a picker by question with ✓ on those already adjudicated, "n of m adjudicated", the item with its
    context and every reviewer's label and comment, and the Decide form (for those who may adjudicate)."""
    if not rs.can_adjudicate(session, who):
        st.info(f"Your role ({md(getattr(who, 'role', None) or 'none')}) does not adjudicate."
                if getattr(who, "role", None) is not None else
                "Adjudication is for the session's owner and adjudicators (and EVALBOARD_REVIEW_ADMINS).")
        return
    if toast := st.session_state.pop("review_adj_toast", None):
        st.toast(toast)
    flash = st.session_state.pop("review_adj_flash", None)  # shown under the Decide button that was refused
    entries = rs.adjudication_entries(store, session)
    if not entries:
        st.success("No item waits for adjudication (reviewers agree and nobody marked a GT error).")
        return
    done = {e.item_id for e in entries if e.done}
    pending = len(entries) - len(done)
    st.caption(f"{len(done)} of {len(entries)} adjudicated · 已裁决 — {pending} item(s) where reviewers disagree "
               "or someone marked a GT error wait; GT-error claims first, then the most split.")
    if not pending:
        st.success("Every item is adjudicated · 全部已裁决")
    options = [e.item_id for e in entries[:2000]]
    ss = st.session_state
    if ss.get("review_adj_item") not in options:
        ss["review_adj_item"] = rs.next_to_adjudicate(store, session) or options[0]
    names = rs.adjudication_names(store, session, options)
    pick = st.selectbox("Item", options, key="review_adj_item",
                        format_func=lambda i: ("✓ " if i in done else "○ ") + visible(names.get(i) or str(i)))
    view = rs.adjudication_view(store, session, who, pick)
    adjudication_card(view)
    if view.final:
        st.caption(f"✓ Adjudicated: {md(rs.label_words(view.final['label']))} by {md(view.final['adjudicator'])}"
                   " · 已裁决 (deciding again replaces it)")
    labels = [lab for lab, _ in view.choices]
    words = dict(view.choices)
    with st.form("review_adj_form", border=False):
        st.radio("Final decision", labels, format_func=words.get, horizontal=True,
                 key="review_adj_label", index=None)  # nothing pre-chosen: the adjudicator picks
        st.text_input("Why", key="review_adj_note")
        st.text_input("Corrected answer (for a GT error) · 更正答案", key="review_adj_answer",
                      help="Becomes a GT patch (review patch); the GT file is never edited.")
        st.form_submit_button("Decide · 裁决", key="review_adj_submit", on_click=on_adjudicate,
                              kwargs={"store": store, "session": session, "who": who, "item_id": pick})
    if flash:
        st.warning(md(flash))
    following = rs.next_to_adjudicate(store, session, pick)
    if following is not None and following != pick:
        st.caption(f"Next waiting · 下一项: {md(names.get(following) or str(following))} (Decide opens it)")


def export_panel(store: ReviewStore, session, annotator: str | None) -> None:
    """Downloads for those who may (:func:`evaluators.review.service.can_export`); each download, when made,
    is checked again, made, then audited (:func:`evaluators.review.service.export`)."""
    has_gold = bool(store.gold_items(session.id))
    if not rs.can_export(session, annotator, has_gold=has_gold):
        st.info("This session is blind or has gold items: its decisions (with system names, scores and gold "
                "labels) are exported by its owner and adjudicators only.")
        import_panel(store, session, annotator)
        return
    sid = session.id
    for label, make, name, mime, key, empty in (
            ("Decisions (JSONL)", lambda: export_jsonl(store, sid).encode("utf-8"), "review_decisions.jsonl",
             "application/jsonl", "review_dl_jsonl", None),
            ("Decisions (CSV, persona annotation layout)", lambda: export_csv(store, sid).encode("utf-8-sig"),
             "review_decisions.csv", "text/csv", "review_dl_csv", None),
            ("GT corrections (JSONL)", lambda: corrections_jsonl(store, sid).encode("utf-8"), "gt_corrections.jsonl",
             "application/jsonl", "review_dl_gt", rs.gt_corrections_missing(store, session)),
            ("Label Studio tasks (JSON)", lambda: export_tasks(store, sid).encode("utf-8"),
             "review_label_studio.json", "application/json", "review_dl_ls", None),
            ("Label Studio labeling config (XML)", lambda: label_studio_config(store, sid).encode("utf-8"),
             "review_label_studio.xml", "application/xml", "review_dl_ls_config", None)):
        what = {"review_dl_gt": "corrections", "review_dl_csv": "csv", "review_dl_ls": "label-studio",
                "review_dl_ls_config": "label-studio-config"}.get(key, "jsonl")

        def made(make=make, what=what):  # checked, made, then audited (no row for a failed download)
            return rs.export(store, session, annotator, what, make, has_gold=has_gold)

        download(label, made, file_name=name, mime=mime, key=key, empty=empty)
    st.caption("The same files come from `python -m evaluators review export|corrections --session NAME` "
               "(`--format label-studio` / `label-studio-config`); the JSONL restores the whole session with "
               "`review import`, which also reads Label Studio's JSON export (never over newer decisions).")
    import_panel(store, session, annotator)


#: The import's format choices (``None``: found from the file) in words.
IMPORT_FORMAT_TEXT = {None: "Found from the file · 自动", "jsonl": "EvalBoard export (JSONL)",
                      "label-studio": "Label Studio (JSON)"}


def _import_summary(report, *, dry_run: bool) -> str:
    """One line of what an import did (or, for a dry run, would do)."""
    refused = report.conflicts + sum(1 for i in report.issues if i.kind not in ("conflict", "duplicate"))
    would = "would be " if dry_run else ""
    return (f"{report.written} decision(s) {would}written (added, or replacing an older one) · "
            f"{report.unchanged + report.duplicates} skipped ({report.unchanged} already stored, "
            f"{report.duplicates} duplicate) · {refused} refused; {report.sessions_created} session(s), "
            f"{report.items_added} item(s) and {report.adjudications} adjudication(s) {would}added.")


def import_panel(store: ReviewStore, session, who) -> None:
    """Import an EvalBoard export or a Label Studio file, for those who may import from this session's page
    (:func:`evaluators.review.service.may` ``import``: its owner and the admins, or the role's policy;
    nobody else sees the block).  The upload is capped at the review upload limit; a dry run
    (:func:`evaluators.review.service.import_file`, rolled back) says what would be written, skipped and
    refused, each refused line located by line and JSON path; *Import* runs the same function for real."""
    from evaluators.io import InputIssue

    if not rs.may(session, who, "import"):
        return
    ss = st.session_state
    with st.container(border=True, key="review_import_box"):
        st.markdown("**Import · 导入**")
        st.caption("An EvalBoard export (JSONL, any session: it goes into the session it names) or a Label Studio "
                   "JSON export. Never over newer decisions; a dry run first, then *Import*. As `review import`.")
        if flash := ss.pop("review_import_done", None):
            st.success(md(flash))
        up = st.file_uploader("File to import · 导入文件", type=["jsonl", "json"], key="review_import_file",
                              max_upload_size=MAX_UPLOAD_BYTES // 2**20)
        fmt = st.radio("Format · 格式", list(IMPORT_FORMAT_TEXT), format_func=IMPORT_FORMAT_TEXT.get,
                       key="review_import_format", horizontal=True)
        if up is None:
            return
        if up.size > MAX_UPLOAD_BYTES:  # Streamlit's own cap is the server's; the review store's is this one
            st.error(md(f"{up.name}: {up.size:,} bytes is over the review upload limit of {MAX_UPLOAD_BYTES:,}"))
            return
        data = upload_bytes(up)
        found = fmt or rs.import_format(data[:64])
        into = None
        if found == "label-studio":
            here = st.radio("Into · 导入到", ("file", "here"), key="review_import_into", horizontal=True,
                            format_func={"file": "The session the tasks name (else a new one)",
                                         "here": f"This session ({md(session.name)})"}.get)
            into = session.name if here == "here" else None
        key = (upload_digest(up), found, into)
        try:
            if ss.get("review_import_dry", (None,))[0] != key:
                ss["review_import_dry"] = (key, rs.import_file(store, who, data, up.name, fmt=found, into=into,
                                                               context=session, dry_run=True))
            report = ss["review_import_dry"][1]
        except (PermissionError, ValueError) as exc:
            st.error(md(str(exc)))
            return
        st.markdown(f"**Dry run · 预检** ({md(IMPORT_FORMAT_TEXT[found])}): "
                    f"{md(_import_summary(report, dry_run=True))}")
        refused = [i for i in report.issues if isinstance(i, InputIssue)]
        if refused:
            usable = report.imported or report.items_added or report.sessions_created
            show_problems(refused, key="review_import_problems", title="Lines not imported",
                          error=None if usable else "Nothing in this file can be imported:",
                          rest="the other lines are imported")
        nothing = not (report.written or report.sessions_created or report.items_added or report.adjudications)
        if st.button("Import · 导入", key="review_import_go", type="primary", disabled=nothing,
                     help="Nothing to write: every line is stored already or refused." if nothing else None):
            try:
                done = rs.import_file(store, who, data, up.name, fmt=found, into=into, context=session)
            except (PermissionError, ValueError) as exc:
                st.error(md(str(exc)))
                return
            ss.pop("review_import_dry", None)  # the database changed: the next dry run is read afresh
            ss["review_import_done"] = f"Imported {up.name}: {_import_summary(done, dry_run=False)}"
            st.rerun()
