"""Narrative annotation (JSON v3): batch overview, character diff, relationships, action layer, spans."""

import streamlit as st

from components import narrative_views as views
from components.compare_views import basis, common_note, paired_scores_view, systems_chart
from components.tables import show_table
from components.layout import page_frame, view_switch
from evaluators.reports.escape import md, visible
from components.corrections import corrections_control
from components.downloads import download
from components.narrative_state import demo_files, score, score_patched, settings, system_name
from components.problems import show_problems
from components.uploads import cached, read_uploads
from evaluators.narrative import COMPONENTS
from components.review_link import review_button
from components.save_run import save_run
from evaluators.tasks.builtin import narrative_run_result
from evaluators.narrative.batch import (compare_two_systems, system_labels, systems_common, systems_macro,
                                        systems_matrix)
from evaluators.review.items import narrative_items
from evaluators.reports.narrative import document_markdown, mismatches_csv, systems_csv, to_json, to_markdown

#: The views, slug (the link's ``?view=``) -> label; the page compares labels.
VIEWS = {v.lower(): v for v in ("Overview", "Characters", "Relationships", "Actions", "Spans", "Alignment",
                                "Compare", "Downloads")}

source = page_frame("Narrative annotation", "📖",
                    caption="JSON v3 stories: characters, events and spans, relationships, sentiment, action layer.")
narrative_settings = settings()

other_files: list = []  # other systems' prediction files, one upload each (view Compare)
other_names: list[str] = []
if source == "demo":
    gt_files, pred_files = demo_files()
    st.info("Showing the built-in demo: one Chinese and one English story, each with a deliberately imperfect "
            "model prediction. Switch **Data source** in the sidebar to upload your own files.",
            icon=":material/science:")
else:
    c1, c2 = st.columns(2)
    gt_up = c1.file_uploader("Ground-truth files (JSON v3 or v2, or a .zip)", type=["json", "zip"],
                             accept_multiple_files=True, key="nar_gt_upload")
    pred_up = c2.file_uploader("Prediction files (JSON v3, or a .zip)", type=["json", "zip"],
                               accept_multiple_files=True, key="nar_pred_upload")
    more_up = st.file_uploader("Optional: other systems' predictions of the same stories, one .zip (or JSON file) "
                               "per system, to compare them (view Compare)", type=["json", "zip"],
                               accept_multiple_files=True, key="nar_more_pred")
    gt_files = read_uploads(gt_up, group="nar_gt")
    pred_files = read_uploads(pred_up, group="nar_pred")
    other_files = [read_uploads([up], group=f"nar_more_{i}") for i, up in enumerate(more_up or [])]
    other_names = [up.name for up in more_up or []]
    if not gt_files or not pred_files:
        st.markdown(
            "**Upload ground truth and predictions to start.** Files are paired by story id: the file name "
            "without `_v2`, `_v3`, `_prediction`, `_pred` and the extension — for example "
            "`CH_002_牛郎织女_v3.json` pairs with `CH_002_牛郎织女_v3_prediction.json`. Several files at once or "
            "a zip are fine; UTF-8, UTF-8 with BOM and GB18030 are read.")
        st.stop()

batch = score(gt_files, pred_files, narrative_settings)

show_problems(batch.all_issues(), key="nar_problems")  # settings problems (all weights 0, taxonomy files) first
for d in batch.documents:
    for side, enc in d.encodings.items():
        if enc and enc != "utf-8":
            name = d.gt_file if side == "gt" else d.pred_file
            st.caption(f"{md(name)} was read as **{enc}**.")
if batch.unpaired_gt or batch.unpaired_pred:
    st.warning("Not paired (no file with the same story id on the other side): "
               + ", ".join(md(n) for n in batch.unpaired_gt + batch.unpaired_pred))
if not batch.scored:
    st.error("No pair could be scored: see the input problems above.")
    st.stop()

docs = [r.story_id for r in batch.scored]
qp = st.query_params
default_doc = qp.get("doc") if qp.get("doc") in docs else docs[0]

top1, top2 = st.columns([1, 3], vertical_alignment="bottom")
doc_id = top1.selectbox("Document", docs, index=docs.index(default_doc), key="nar_doc", format_func=visible)
with top2:
    view = VIEWS[view_switch(VIEWS, key="nar_view")]  # the open view is in the link (?view=<slug>)
result = next(r for r in batch.scored if r.story_id == doc_id)
event_ids = [e for e in (*result.alignment.gt_ids, *result.alignment.pred_ids)]
event = qp.get("event") if qp.get("event") in event_ids else None

qp["doc"] = doc_id
if event:
    qp["event"] = event
elif "event" in qp:  # an event of another document must not linger in the shared link
    del qp["event"]



def gt_blobs() -> list[tuple[str, bytes]]:
    """The run's readable GT files (one per story) as ``(name, bytes)``: what review sessions keep."""
    return [(f.name, f.data) for f in gt_files if f.issue is None]


def review_items() -> list[dict]:
    """The run's mismatches as review items, each with its story file's digest and its GT place."""
    from evaluators.narrative.patch import gt_digests
    return narrative_items(batch.scored, gt_digests(gt_files))


def session_corrections(store, session_id):
    """A narrative session's corrections for this run's GT files (the control's session source)."""
    from evaluators.review.gt_patch import narrative_session_patch
    return narrative_session_patch(store, session_id, gt_blobs())


def corrections_html(patches, corrections) -> str:
    from evaluators.reports.html import narrative_report
    return narrative_report(score_patched(gt_files, pred_files, narrative_settings, patches))


if view == "Overview":
    views.render_overview(batch, open_key="nar_doc")
    st.subheader("Review corrections · 审阅更正")
    corrections_control("narrative", f"the {len(gt_files)} GT file(s) of this run", lambda: b"",
                        lambda patches: score_patched(gt_files, pred_files, narrative_settings, patches).corrections,
                        key="nar_fix", html=corrections_html, session_patch=session_corrections)
    st.subheader(f"Document: {md(doc_id)}")
    views.render_document_header(result)
else:
    st.subheader(f"{md(doc_id)} — {view}")
    views.render_document_header(result)
    st.divider()
    if view == "Characters":
        views.render_characters(result)
    elif view == "Relationships":
        views.render_relationships(result, event_filter=event)
    elif view == "Actions":
        views.render_action_layer(result)
    elif view == "Spans":
        pick = st.selectbox("Highlight an event", ["(none)", *event_ids],
                            index=(event_ids.index(event) + 1) if event else 0, key="nar_span_event",
                            format_func=lambda e: e if e == "(none)" else
                            visible(result.alignment.label_of(e)) + ("  (GT)" if e in result.alignment.gt_ids
                                                                     else "  (prediction)"))
        if pick != "(none)":
            qp["event"] = pick
        elif "event" in qp:
            del qp["event"]
        views.render_spans(result, selected_event=None if pick == "(none)" else pick)
    elif view == "Alignment":
        views.render_alignment(result)
    elif view == "Compare":
        if not other_files:
            st.info("Compare prediction sets of several systems on the same stories: switch **Data source** to "
                    "upload, then add each other system's predictions (one .zip or JSON file per system) under "
                    "*Optional: other systems' predictions*.")
        else:
            # named as narrative --other-pred names them: the file / zip names, never "predictions"
            names = system_labels(system_name([u.name for u in pred_up or []]), other_names)
            batches = dict(zip(names, [batch, *[score(gt_files, files, narrative_settings) for files in other_files]]))
            common = systems_common(batches)  # compared on the stories every system scored (engine's rule)
            common_note(common)
            # keyed on every system's per-story scores: a rerun of another widget re-samples nothing
            macro = cached(("narrative-common-macro", tuple(
                (n, tuple((r.story_id, r.overall_score) for r in b.scored)) for n, b in batches.items())),
                lambda: systems_macro(batches, common)) if common.n_common else {n: b.macro for n, b in batches.items()}
            metrics = {"overall": [macro[n].get("overall_score") for n in names]}
            lows = {"overall": [macro[n].get("overall_score_ci_low") for n in names]}
            highs = {"overall": [macro[n].get("overall_score_ci_high") for n in names]}
            for c in COMPONENTS:
                metrics[c] = [macro[n].get("component_scores", {}).get(c) for n in names]
                lows[c] = [macro[n].get("component_ci_low", {}).get(c) for n in names]
                highs[c] = [macro[n].get("component_ci_high", {}).get(c) for n in names]
            systems_chart(names, metrics, lows, highs, key="nar_systems_chart",
                          title=f"Macro scores by system ({basis(common)}; mean over documents; error bars: "
                                "95% bootstrap CI)")
            show_table([{"system": n, "n": common.n_by_system[n], "n common": common.n_common,
                         "overall (macro)": macro[n].get("overall_score"),
                         "95% CI low": macro[n].get("overall_score_ci_low"),
                         "95% CI high": macro[n].get("overall_score_ci_high"),
                         **({} if common.same else {"overall (own stories)": batches[n].macro.get("overall_score")})}
                        for n in names], key="nar_systems")
            matrix = systems_matrix(batches)
            spread = st.slider("Show stories whose overall scores differ by at least · 分差至少", 0.0, 1.0, 0.0, 0.05,
                               key="nar_spread")
            kept = [r for r in matrix if spread == 0 or (r["spread"] is not None and r["spread"] >= spread - 1e-12)]
            overall_cols = ["story_id", *[f"{n}: overall_score" for n in names], "spread"]
            show_table([{k: r.get(k) for k in overall_cols} for r in kept],
                       key="nar_matrix")
            st.caption(f"{len(kept)} of {len(matrix)} stories; component scores per system are in the download.")
            download("Download documents × systems CSV", lambda: systems_csv(matrix, batch.signature),
                     file_name="narrative_systems.csv", mime="text/csv", key="nar_matrix_csv")
            paired = None
            p1, p2 = st.columns(2)
            sys_a = p1.selectbox("System A (baseline)", names, index=0, key="nar_pair_a", format_func=visible)
            sys_b = p2.selectbox("System B", names, index=1, key="nar_pair_b", format_func=visible)
            if sys_a == sys_b:
                st.info("Pick two different systems.")
            else:
                try:
                    # keyed on the two systems' per-story scores: a rerun of another widget re-samples nothing
                    scores_key = tuple((n, tuple((r.story_id, r.overall_score) for r in batches[n].scored))
                                       for n in (sys_a, sys_b))
                    paired = cached(("narrative-pair", scores_key), lambda: compare_two_systems(batches, sys_a, sys_b))
                except ValueError as exc:
                    st.warning(md(str(exc)))
                else:
                    rows = {r["story_id"]: {"story_id": r["story_id"], sys_a: r.get(f"{sys_a}: overall_score"),
                                            sys_b: r.get(f"{sys_b}: overall_score")} for r in matrix}
                    paired_scores_view(paired, rows, "nar_pair", metric="overall score")

            def comparison_html() -> bytes:
                from evaluators.reports.html import narrative_comparison_report
                return narrative_comparison_report(batches, paired).encode("utf-8")

            st.download_button("Download comparison HTML report · 下载对比报告", comparison_html,
                               "narrative_comparison.html", "text/html", key="nar_compare_html", on_click="ignore",
                               help="Systems side by side and the paired test, in one file that opens offline.")
    elif view == "Downloads":
        st.markdown("Reports are written by the same writers as the command line "
                    "(`python -m evaluators narrative`).")
        c1, c2, c3 = st.columns(3)
        base = doc_id.replace("/", "_")
        # Each file is written when its button is clicked (callables), not on every rerun; a CSV is
        # UTF-8 with a BOM (components.downloads.download), the CLI's text otherwise.
        c1.download_button("This document — JSON", lambda: to_json(result), f"{base}_evaluation.json",
                           "application/json", key="nar_doc_json", on_click="ignore")
        c2.download_button("This document — Markdown", lambda: document_markdown(result), f"{base}_evaluation.md",
                           "text/markdown", key="nar_doc_md", on_click="ignore")
        download("This document — mismatches CSV", lambda: mismatches_csv(result), file_name=f"{base}_mismatches.csv",
                 mime="text/csv", key="nar_doc_csv", where=c3)
        c1.download_button("Whole batch — JSON", lambda: to_json(batch), "batch_evaluation.json", "application/json",
                           key="nar_batch_json", on_click="ignore")
        c2.download_button("Whole batch — Markdown", lambda: to_markdown(batch), "batch_evaluation.md",
                           "text/markdown", key="nar_batch_md", on_click="ignore")
        download("Whole batch — mismatches CSV", lambda: mismatches_csv(batch), file_name="batch_mismatches.csv",
                 mime="text/csv", key="nar_batch_csv", where=c3)

        def batch_html() -> bytes:
            from evaluators.reports.html import narrative_report
            return narrative_report(batch).encode("utf-8")

        c1.download_button("Whole batch — HTML report", batch_html, "batch_report.html", "text/html",
                           key="nar_batch_html", help="One self-contained file (charts drawn in it): opens offline.",
                           on_click="ignore")
        review_button("Review every mismatch · 人工审阅所有差异", "narrative", "narrative batch", review_items,
                      key="nar_to_review", files=gt_blobs)
        save_run(lambda: narrative_run_result(batch), gt_name=", ".join(name for name, _ in gt_blobs()),
                 source="narrative batch", key="nar_save", gt_files=gt_blobs)
