"""Views of narrative results: overview, characters, relationships, action layer, spans, alignment.

Every function takes results from :mod:`evaluators.narrative` and renders them; nothing here
computes a score.  User text reaches the screen only through dataframes (plain text), escaped
HTML (:mod:`components.span_overlay`) or escaped markdown (:func:`evaluators.reports.escape.md`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import streamlit as st

from evaluators.reports.figures import confusion_heatmap, scores_by_document
from evaluators.reports.format import fixed
from components.metrics import fmt, metric_row, signature_caption
from components.span_overlay import OverlaySpan, render_span_overlay
from evaluators.narrative import COMPONENT_TITLES, COMPONENTS, NarrativeResult
from evaluators.narrative.batch import BatchResult
from evaluators.schema import ACTION_FIELDS
from components.static import static_chart, static_records
from components.tables import dataframe, visible_frame
from evaluators.reports.escape import html_text, md, visible

if TYPE_CHECKING:  # imported where a grid is drawn: the overview (the first screen) draws none
    import pandas as pd

GOOD, BAD, WARN, MUTED = "#e8f5e9", "#ffebee", "#fff3e0", "#f5f5f5"
STATUS_COLORS = {"matched (exact)": GOOD, "matched (alias)": "#e3f2fd", "missing": "#ffcdd2", "extra": "#ffe0b2",
                 "archetype mismatch": "#e1bee7"}


def _legend(colors: dict[str, str]) -> None:
    chips = "".join(
        f"<span style='display:inline-flex;align-items:center;margin-right:14px'><span style='width:14px;"
        f"height:14px;background:{c};border:1px solid #bbb;display:inline-block;margin-right:5px'></span>"
        f"{html_text(label, breaks=False)}</span>" for label, c in colors.items())
    st.html(f"<div style='font-size:0.85rem'>{chips}</div>")


def _gt_incomplete_note(result: NarrativeResult, component: str) -> None:
    det = result.detailed_results[component]
    if result.component_scores[component] is None:
        st.info(f"**{COMPONENT_TITLES[component]} score not available:** {md(det.reason or 'no data')}")
    elif det.gt_incomplete and det.reason:
        st.caption(f"GT incomplete — {md(det.reason)}")


# ---------------------------------------------------------------- overview

def overview_rows(batch: BatchResult) -> list[dict]:
    """One dict per document pair with its scores (errors as text)."""
    rows = []
    for d in batch.documents:
        row = {"document": d.story_id}
        if d.result is None:
            row.update({"overall": None, **{COMPONENT_TITLES[c]: None for c in COMPONENTS},
                        "events GT/pred/aligned": "", "scoring notes": 0,
                        "status": f"error: {d.error.message if d.error else 'unreadable'}"})
        else:
            r = d.result
            s = r.summary
            row.update({"overall": r.overall_score,
                        **{COMPONENT_TITLES[c]: r.component_scores[c] for c in COMPONENTS},
                        "events GT/pred/aligned": f"{s.total_events_ground_truth}/{s.total_events_predicted}/"
                                                  f"{s.events_aligned}",
                        "scoring notes": len(r.warnings), "status": "scored"})
        rows.append(row)
    return rows


def overview_frame(batch: BatchResult) -> pd.DataFrame:
    """:func:`overview_rows` as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(overview_rows(batch))


def render_overview(batch: BatchResult, *, open_key: str | None = None) -> None:
    """Cards, the documents table, the micro/macro totals and the component chart by document.

    Static on the first screen (:mod:`components.static`: no grid, no Plotly, no pandas); the
    toggle *Sortable table and interactive chart* draws the sortable grids and the Plotly chart.
    With ``open_key`` (the document picker's widget key), clicking a scored document's row of the
    sortable table opens it: the picker is set to that story before the page runs again.
    """
    scored = batch.scored
    metric_row([
        ("Documents scored", len(scored), None),
        ("Overall (micro)", batch.micro.get("overall_score") if scored else None,
         "Weighted mean of component scores computed from pooled counts over all documents."),
        ("Overall (macro)", batch.macro.get("overall_score") if scored else None,
         "Mean of the documents' overall scores." + (
             f" 95% CI {fmt(batch.macro['overall_score_ci_low'])} – {fmt(batch.macro['overall_score_ci_high'])} "
             "(bootstrap over documents)." if batch.macro.get("overall_score_ci_low") is not None else "")),
        ("Pairs not scored", batch.problem_counts()["pairs_not_scored"],
         "Pairs whose GT or prediction file could not be used at all (see Input problems)."),
        ("Scoring notes", batch.problem_counts()["scoring_notes"],
         "Offset repairs, pairs aligned without text evidence, labels outside the taxonomy: listed per "
         "document in the Alignment view and in the report."),
    ], digits=3)
    # The first screen is static (tables and the HTML report's SVG chart: no data grid, no Plotly chart);
    # the sortable table whose rows open a document, and the interactive chart, are behind one toggle.
    rows = overview_rows(batch)
    score_cols = ["overall", *[COMPONENT_TITLES[c] for c in COMPONENTS]]
    interactive = st.toggle("Sortable table and interactive chart · 可排序表格与交互图表", key="nar_interactive",
                            persist_state="page",
                            help="Click a row of the sortable table to open that document; the static table shows "
                                 "the same numbers.")
    if interactive:
        stories = [r["document"] for r in rows]
        scored_ids = {r.story_id for r in scored}

        def open_row() -> None:
            rows = st.session_state["nar_overview_table"].selection.rows
            if rows and open_key and stories[rows[0]] in scored_ids:
                st.session_state[open_key] = stories[rows[0]]

        dataframe(
            visible_frame(overview_frame(batch)), hide_index=True, key="nar_overview_table", on_select=open_row,
            selection_mode="single-row",
            # narrow enough that all seven score columns fit a 1440 px window (Text spans was cut off)
            column_config={c: st.column_config.ProgressColumn(c, min_value=0.0, max_value=1.0, format="%.3f",
                                                              width=112) for c in score_cols},
        )
        if open_key:
            st.caption("Click a row to open that document.")
    else:
        static_records(rows)
        if open_key:
            st.caption("Open a document with the picker above (or click a row of the sortable table).")
    if scored:
        totals = [
            {"aggregate": "micro (pooled counts)", **{COMPONENT_TITLES[c]: batch.micro["component_scores"][c]
                                                      for c in COMPONENTS}, "overall": batch.micro["overall_score"]},
            {"aggregate": "macro (mean of documents)", **{COMPONENT_TITLES[c]: batch.macro["component_scores"][c]
                                                          for c in COMPONENTS}, "overall": batch.macro["overall_score"]},
        ]
        if interactive:
            import pandas as pd

            dataframe(pd.DataFrame(totals), hide_index=True,
                      column_config={c: st.column_config.NumberColumn(c, format="%.3f") for c in score_cols})
        else:
            static_records(totals)
        n_docs = batch.macro["n_documents"]
        st.caption("Documents in each macro mean: " + ", ".join(
            f"{COMPONENT_TITLES[c]} {n_docs[c]}" for c in COMPONENTS) + ". A component whose GT is missing "
            "is left out of the mean, not counted as 0.")
        if interactive:
            st.plotly_chart(scores_by_document([r.story_id for r in scored], [COMPONENT_TITLES[c] for c in COMPONENTS],
                                               [[r.component_scores[c] for c in COMPONENTS] for r in scored]))
        else:
            from evaluators.reports.html import narrative_documents_chart

            static_chart(narrative_documents_chart(scored))
    signature_caption(batch.signature)


def render_document_header(result: NarrativeResult) -> None:
    """Overall and component scores of one document, with why a component is blank."""
    metric_row([("Overall", result.overall_score, "Weighted mean of the available component scores.")]
               + [(COMPONENT_TITLES[c], result.component_scores[c], result.left_out.get(c)) for c in COMPONENTS])
    blank = {c: why for c, why in result.left_out.items() if result.component_scores[c] is None}
    for c, why in blank.items():
        st.caption(f"{COMPONENT_TITLES[c]} left out of the overall score: {md(why)}")


# ---------------------------------------------------------------- characters

def _match_status(m) -> str:
    """Status (and colour key) of a matched character."""
    if m.archetype_match is False:
        return "archetype mismatch"
    return "matched (exact)" if m.method == "exact" else "matched (alias)"


def character_frame(result: NarrativeResult) -> pd.DataFrame:
    """Rows: matched (how), missing and extra characters with archetypes."""
    import pandas as pd

    c = result.characters
    rows = []
    for m in c.matched_characters:
        status = _match_status(m)
        how = "same name" if m.method == "exact" else {
            "gt_alias": f"predicted name is a GT alias: {m.via}",
            "pred_alias": f"GT name is a predicted alias: {m.via}",
            "alias_overlap": f"shared alias: {m.via}"}[m.method]
        rows.append({"status": status, "GT character": visible(m.gt_name), "predicted character": visible(m.pred_name),
                     "how matched": how, "GT archetype": m.gt_archetype, "predicted archetype": m.pred_archetype})
    for name in c.missing_characters:
        rows.append({"status": "missing", "GT character": visible(name), "predicted character": "", "how matched": "",
                     "GT archetype": "", "predicted archetype": ""})
    for name in c.extra_characters:
        rows.append({"status": "extra", "GT character": "", "predicted character": visible(name), "how matched": "",
                     "GT archetype": "", "predicted archetype": ""})
    return pd.DataFrame(rows, columns=["status", "GT character", "predicted character", "how matched",
                                       "GT archetype", "predicted archetype"])


def character_chips_html(result: NarrativeResult) -> str:
    """The character diff at a glance: one escaped, colour-coded chip per character."""
    c = result.characters

    def chip(text: str, status: str, title: str = "") -> str:
        return (f"<span class='eb-chip' data-status='{html_text(status, breaks=False)}' "
                f"title='{html_text(title, breaks=False)}' "
                f"style='display:inline-block;margin:3px 6px 3px 0;padding:2px 10px;border-radius:12px;"
                f"border:1px solid #bbb;background:{STATUS_COLORS.get(status, 'white')}'>{html_text(text, breaks=False)}</span>")

    parts = []
    for m in c.matched_characters:
        status = _match_status(m)
        label = m.gt_name if m.gt_name == m.pred_name else f"{m.gt_name} ⇄ {m.pred_name}"
        title = f"{status}; archetype GT {m.gt_archetype or '∅'} / predicted {m.pred_archetype or '∅'}"
        parts.append(chip(label, status, title))
    parts += [chip(n, "missing", "in GT, not predicted") for n in c.missing_characters]
    parts += [chip(n, "extra", "predicted, not in GT") for n in c.extra_characters]
    return "<div class='eb-chars' style='line-height:2'>" + "".join(parts) + "</div>"


def render_characters(result: NarrativeResult) -> None:
    """Character diff: colour-coded table with a legend, plus the headline metrics."""
    c = result.characters
    metric_row([("Precision", c.character_precision, f"{c.n_matched} matched / {c.n_predicted} predicted"),
                ("Recall", c.character_recall, f"{c.n_matched} matched / {c.n_ground_truth} in GT"),
                ("F1", c.character_f1, None),
                ("Archetype accuracy", c.character_archetype_accuracy,
                 f"{c.archetype_correct} / {c.archetype_total} matched characters with a GT archetype")])
    _gt_incomplete_note(result, "characters")
    _legend(STATUS_COLORS)
    st.html(character_chips_html(result))
    df = character_frame(result)
    if df.empty:
        st.info("No characters in either file.")
        return
    styled_dataframe(df, lambda row: [f"background-color: {STATUS_COLORS.get(row['status'], 'white')}"] * len(row))


def styled_dataframe(df, row_style, **kwargs) -> None:
    """``st.dataframe`` of ``df`` with ``row_style`` applied per row (pandas Styler), or plain above the limit.

    Streamlit refuses a Styler of more than ``styler.render.max_elements`` cells (262,144 by
    default); such a table is shown without colours and a caption says so.
    """
    import pandas as pd

    limit = pd.get_option("styler.render.max_elements")
    if df.size > limit:
        dataframe(visible_frame(df), hide_index=True, **kwargs)
        st.caption(f"{len(df):,} rows × {len(df.columns)} columns is over the {limit:,} cells that can be coloured: "
                   "shown without colours (filter the table to see them).")
        return
    dataframe(visible_frame(df).style.apply(row_style, axis=1), hide_index=True, **kwargs)


# ---------------------------------------------------------------- relationships

def relationship_frame(result: NarrativeResult) -> pd.DataFrame:
    """One row per GT or predicted relationship, side by side, with per-field agreement."""
    import pandas as pd

    rows = []
    outcome = dict(zip(map(id, result.relationships.matched_pairs), result.sentiment.pair_correct))
    label = result.alignment.label_of
    for ev in result.relationships.events:
        ids = {"GT event id": ev.gt_event or "", "pred event id": ev.pred_event or ""}
        for m in ev.matched:
            rows.append({"GT event": label(ev.gt_event or ""), "pred event": label(ev.pred_event or ""), **ids,
                         "status": "matched",
                         "agent → target": f"{m.gt.agent} → {m.gt.target or '∅'}",
                         "predicted agent → target": f"{m.pred.agent} → {m.pred.target or '∅'}",
                         "GT level 1": m.gt.relationship_level1, "pred level 1": m.pred.relationship_level1,
                         "GT level 2": m.gt.relationship_level2, "pred level 2": m.pred.relationship_level2,
                         "GT sentiment": m.gt.sentiment, "pred sentiment": m.pred.sentiment,
                         "level1 ok": m.level1_match, "level2 ok": m.level2_match,
                         "sentiment ok": outcome.get(id(m))})
        for r in ev.missed:
            rows.append({"GT event": label(ev.gt_event or ""), "pred event": label(ev.pred_event or ""), **ids,
                         "status": "missed (event not aligned)" if ev.status == "missed" else "missed",
                         "agent → target": f"{r.agent} → {r.target or '∅'}", "predicted agent → target": "",
                         "GT level 1": r.relationship_level1, "pred level 1": "", "GT level 2": r.relationship_level2,
                         "pred level 2": "", "GT sentiment": r.sentiment, "pred sentiment": "",
                         "level1 ok": None, "level2 ok": None, "sentiment ok": None})
        for r in ev.spurious:
            status = {"skipped": "extra (GT event has none; not counted)",
                      "spurious": "extra (spurious event; not counted)"}.get(ev.status, "spurious")
            rows.append({"GT event": label(ev.gt_event or ""), "pred event": label(ev.pred_event or ""), **ids,
                         "status": status,
                         "agent → target": "", "predicted agent → target": f"{r.agent} → {r.target or '∅'}",
                         "GT level 1": "", "pred level 1": r.relationship_level1, "GT level 2": "",
                         "pred level 2": r.relationship_level2, "GT sentiment": "", "pred sentiment": r.sentiment,
                         "level1 ok": None, "level2 ok": None, "sentiment ok": None})
    cols = ["GT event", "pred event", "status", "agent → target", "predicted agent → target", "GT level 1",
            "pred level 1", "GT level 2", "pred level 2", "GT sentiment", "pred sentiment", "level1 ok", "level2 ok",
            "sentiment ok", "GT event id", "pred event id"]
    return pd.DataFrame(rows, columns=cols)


def _highlight_relationship(row) -> list[str]:
    """Row style of :func:`relationship_frame`: green / red per compared field, status colours otherwise."""
    out = [""] * len(row)
    idx = {c: i for i, c in enumerate(row.index)}
    if row["status"] == "matched":
        for f in ("level 1", "level 2", "sentiment"):
            ok = row[f"{f.replace(' ', '')} ok"]
            if ok is not None:
                out[idx[f"GT {f}"]] = out[idx[f"pred {f}"]] = f"background-color: {GOOD if ok else BAD}"
    elif row["status"].startswith("missed"):
        out[idx["status"]] = f"background-color: {BAD}"
    elif row["status"] == "spurious":
        out[idx["status"]] = f"background-color: {WARN}"
    else:
        out[idx["status"]] = f"background-color: {MUTED}"
    return out


def render_relationships(result: NarrativeResult, *, event_filter: str | None = None) -> None:
    """Relationships and sentiment side by side with filters; missed and spurious listed."""
    r, s = result.relationships, result.sentiment
    metric_row([("Precision", r.relationship_precision, f"{r.total_relationships_correct} matched / "
                                                         f"{r.total_relationships_pred} predicted"),
                ("Recall", r.relationship_recall, f"{r.total_relationships_correct} matched / "
                                                   f"{r.total_relationships_gt} in GT"),
                ("F1", r.relationship_f1, "Match on (agent, target) with alias resolution."),
                ("Level 1 acc.", r.level1_accuracy, f"{r.level1_correct}/{r.level1_total} matched pairs"),
                ("Level 2 acc.", r.level2_accuracy, f"{r.level2_correct}/{r.level2_total} matched pairs"),
                ("Pair coverage", r.relationship_pair_coverage,
                 f"{r.pairs_covered}/{r.pairs_total} GT (agent, target) pairs found in any predicted event")])
    metric_row([("Sentiment P (micro)", s.sentiment_precision, None),
                ("Sentiment R (micro)", s.sentiment_recall, None),
                ("Sentiment F1 (micro)", s.sentiment_f1, "On matched relationships."),
                ("Sentiment F1 (macro)", s.sentiment_macro_f1, "Mean of per-label F1."),
                ("Polarity accuracy", s.sentiment_polarity_accuracy, f"{s.polarity_correct}/{s.polarity_total}")])
    _gt_incomplete_note(result, "relationships")
    _gt_incomplete_note(result, "sentiment")
    if r.n_invalid_pred:
        st.warning(f"{r.n_invalid_pred} predicted relationships do not fit the schema (for example `doer`/"
                   "`receiver`/`type` keys) and were left out — see *Input problems*.")
    df = relationship_frame(result)
    if df.empty:
        st.info("No relationships in either file.")
        return
    c1, c2, c3 = st.columns([1, 2, 2])
    only_bad = c1.toggle("Only mismatches", value=False, key="rel_only_bad")
    levels = sorted({v for v in df["GT level 1"].tolist() + df["pred level 1"].tolist() if v})
    chosen = c2.multiselect("Level 1", levels, key="rel_level1", format_func=visible)
    events = ["(all events)"] + sorted({e for e in df["GT event id"].tolist() + df["pred event id"].tolist() if e})
    default_event = events.index(event_filter) if event_filter in events else 0
    ev = c3.selectbox("Event", events, index=default_event, key="rel_event",
                      format_func=lambda e: e if e == "(all events)" else visible(result.alignment.label_of(e)),
                      help="Events by type and the first words of their span; the ids are the table's last columns.")
    view = df
    if only_bad:
        ok = (view["status"] == "matched") & (view["level1 ok"] != False) & (view["level2 ok"] != False)  # noqa: E712
        ok &= view["sentiment ok"] != False  # noqa: E712
        view = view[~ok]
    if chosen:
        view = view[view["GT level 1"].isin(chosen) | view["pred level 1"].isin(chosen)]
    if ev != "(all events)":
        view = view[(view["GT event id"] == ev) | (view["pred event id"] == ev)]
    styled_dataframe(view, _highlight_relationship, column_order=[c for c in view.columns if not c.endswith(" ok")])
    st.caption(f"{len(view)} of {len(df)} rows · extra relationships are not counted (missing-GT policy) · "
               "∅ = empty target in GT (matched on the agent)")
    if s.confusion:
        labels = sorted({*s.confusion, *(p for row in s.confusion.values() for p in row)})
        rows = sorted(s.confusion)
        st.plotly_chart(confusion_heatmap(rows, [lab or "(none)" for lab in labels],
                                          [[s.confusion[g].get(p, 0) for p in labels] for g in rows],
                                          title="Sentiment on matched relationships (canonical labels)"))


# ---------------------------------------------------------------- action layer

def action_frame(result: NarrativeResult) -> pd.DataFrame:
    import pandas as pd

    rows = []
    label = result.alignment.label_of
    for ev in result.action_layer.events:
        row = {"GT event": label(ev.gt_event or ""), "pred event": label(ev.pred_event or ""), "status": ev.status}
        for f in ACTION_FIELDS:
            row[f"GT {f}"] = ev.gt[f]
            row[f"pred {f}"] = ev.pred[f]
            row[f"{f} ok"] = ev.correct[f]
        row["GT event id"], row["pred event id"] = ev.gt_event or "", ev.pred_event or ""
        rows.append(row)
    return pd.DataFrame(rows)


def render_action_layer(result: NarrativeResult) -> None:
    """Field accuracies, the per-event field table and the category confusion matrix."""
    a = result.action_layer
    metric_row([("Field accuracy (micro)", a.action_layer_field_accuracy,
                 "All correct fields / all GT-present fields."),
                ("Complete match", a.action_layer_complete_match, f"{a.complete_matches}/{a.n_events_evaluated} events"),
                ("Partial match", a.action_layer_partial_match, f"{a.partial_matches}/{a.n_events_evaluated} events")])
    metric_row([("Category", a.action_category_accuracy, f"{a.field_correct['category']}/{a.field_total['category']}"),
                ("Type", a.action_type_accuracy, f"{a.field_correct['type']}/{a.field_total['type']}"),
                ("Context", a.action_context_accuracy, f"{a.field_correct['context']}/{a.field_total['context']}"),
                ("Status", a.action_status_accuracy, f"{a.field_correct['status']}/{a.field_total['status']}"),
                ("Function", a.action_function_accuracy, f"{a.field_correct['function']}/{a.field_total['function']}")])
    _gt_incomplete_note(result, "action_layer")
    df = action_frame(result)
    if df.empty:
        st.info("No events.")
        return
    only_bad = st.toggle("Only events with a mismatch", value=False, key="act_only_bad")
    if only_bad:
        df = df[df[[f"{f} ok" for f in ACTION_FIELDS]].eq(False).any(axis=1)]

    def style(row):
        out = []
        for col in row.index:
            color = ""
            for f in ACTION_FIELDS:
                if col in (f"GT {f}", f"pred {f}"):
                    ok = row[f"{f} ok"]
                    color = GOOD if ok is True else BAD if ok is False else ""
            if col == "status" and row["status"] != "compared":
                color = MUTED if row["status"] == "skipped" else BAD
            out.append(f"background-color: {color}" if color else "")
        return out

    show = [c for c in df.columns if not c.endswith(" ok")]
    styled_dataframe(df, style, column_order=show)
    st.caption("Green: equal after canonicalisation · red: different or missing · blank: GT empty (skipped, "
               "not counted) · status *missed*: the GT event has no aligned prediction")
    conf = a.category_confusion
    if conf:
        cols = sorted({p for row in conf.values() for p in row})
        rows = sorted(conf)
        st.plotly_chart(confusion_heatmap(rows, [c or "(none / missed)" for c in cols],
                                          [[conf[g].get(p, 0) for p in cols] for g in rows],
                                          title="Action category: GT × prediction"))


# ---------------------------------------------------------------- spans

def span_labels(result: NarrativeResult) -> list[OverlaySpan]:
    """Overlay spans from the text-span rows, with hover labels (event ids, labels, IoU)."""
    gt_events = {}
    for ev in result.action_layer.events:
        gt_events[ev.gt_event] = ev.gt
    out = []
    for row in result.text_span.spans:
        iou = "" if row.iou is None else f", IoU {fixed(row.iou, 2)}"
        if row.gt_start is not None:
            acts = gt_events.get(row.gt_event, {})
            lab = "/".join(v for v in (acts.get("category"), acts.get("type")) if v)
            out.append(OverlaySpan(row.gt_start, row.gt_end, "gt", row.category,
                                   f"GT {row.gt_event} [{row.gt_start}, {row.gt_end}) {row.category}{iou}"
                                   + (f" · {lab}" if lab else ""), event=row.gt_event))
        if row.pred_start is not None:
            out.append(OverlaySpan(row.pred_start, row.pred_end, "pred", row.category,
                                   f"pred {row.pred_event} [{row.pred_start}, {row.pred_end}) {row.category}{iou}",
                                   event=row.pred_event))
    return out


def render_spans(result: NarrativeResult, *, selected_event: str | None = None) -> None:
    """Segmentation scores and the overlay of GT and predicted spans on the story."""
    t = result.text_span
    metric_row([("Boundary similarity B", t.boundary_score,
                 f"Fournier 2013, sentence units, n_t = {t.n_t}; undefined when the GT has no inner boundary."),
                ("Pk", t.pk, "Lower is better."), ("WindowDiff", t.window_diff, "Lower is better."),
                ("Mean IoU (aligned)", t.overlap_ratio, None)])
    st.caption(f"Boundaries: {t.exact_matches} exact, {t.near_misses} near misses, {t.insertions} insertions, "
               f"{t.deletions} deletions over {t.n_sentences} sentences · spans: "
               + ", ".join(f"{k} {v}" for k, v in t.span_categories.items()))
    _gt_incomplete_note(result, "text_span")
    spans = span_labels(result)
    if selected_event:
        spans = [dataclasses.replace(s, selected=s.event == selected_event) for s in spans]
    render_span_overlay(result.text, spans, t.sentence_offsets)


# ---------------------------------------------------------------- alignment

def alignment_frame(result: NarrativeResult) -> pd.DataFrame:
    import pandas as pd

    al = result.alignment
    rows = []
    for p in al.pairs:
        g, q = al.gt_spans[p.gt_index], al.pred_spans[p.pred_index]
        rows.append({"GT event": al.gt_labels[p.gt_index], "pred event": al.pred_labels[p.pred_index],
                     "method": p.method, "IoU": p.iou, "GT span": _span_str(g), "GT offsets": g.status,
                     "pred span": _span_str(q), "pred offsets": q.status, "note": "; ".join(
                         x for x in (g.note, q.note) if x),
                     "GT event id": al.gt_ids[p.gt_index], "pred event id": al.pred_ids[p.pred_index]})
    for i in al.missed:
        g = al.gt_spans[i]
        rows.append({"GT event": al.gt_labels[i], "pred event": "", "method": "missed", "IoU": None,
                     "GT span": _span_str(g), "GT offsets": g.status, "pred span": "", "pred offsets": "",
                     "note": g.note, "GT event id": al.gt_ids[i], "pred event id": ""})
    for j in al.spurious:
        q = al.pred_spans[j]
        rows.append({"GT event": "", "pred event": al.pred_labels[j], "method": "spurious", "IoU": None,
                     "GT span": "", "GT offsets": "", "pred span": _span_str(q), "pred offsets": q.status,
                     "note": q.note, "GT event id": "", "pred event id": al.pred_ids[j]})
    return pd.DataFrame(rows)


def _span_str(s) -> str:
    return f"[{s.start}, {s.end})" if s.usable else "—"


def render_alignment(result: NarrativeResult) -> None:
    """Which predicted event went with which GT event, how, and every warning about the input."""
    import pandas as pd

    s = result.summary
    metric_row([("GT events", s.total_events_ground_truth, None),
                ("Predicted events", s.total_events_predicted, None),
                ("Aligned", s.events_aligned, ", ".join(f"{k}: {v}" for k, v in s.alignment_methods.items())),
                ("Missed", s.events_missed, None), ("Spurious", s.events_spurious, None),
                ("Event F1", s.event_f1, None)])
    df = visible_frame(alignment_frame(result))
    dataframe(df, hide_index=True,
                 column_config={"IoU": st.column_config.NumberColumn("IoU", format="%.3f")})
    st.caption(f"Minimum IoU for a span-based pair: {result.alignment.min_iou:g}. Pairs made by time_order or list "
               "order have no text evidence and are flagged below.")
    if result.warnings:
        st.subheader(f"Scoring notes ({len(result.warnings)})")
        st.caption("The same notes are counted on the Overview and by the command line.")
        for w in result.warnings[:20]:
            st.warning(md(w))
        if len(result.warnings) > 20:
            st.caption(f"… and {len(result.warnings) - 20} more: the document's JSON report (Downloads) lists all.")
    validity = []
    for comp in ("characters", "relationships", "sentiment", "action_layer"):
        for f, sides in result.detailed_results[comp].validity.items():
            for side, v in sides.items():
                validity.append({"field": f, "side": "GT" if side == "gt" else "prediction",
                                 "validity rate": v["validity_rate"], "valid": v["valid"], "total": v["total"],
                                 "outside the taxonomy": ", ".join(f"{k} ×{n}" for k, n in v["invalid_labels"].items())})
    if validity:
        st.subheader("Labels inside the taxonomy")
        dataframe(pd.DataFrame(validity), hide_index=True,
                     column_config={"validity rate": st.column_config.ProgressColumn(
                         "validity rate", min_value=0.0, max_value=1.0, format="%.2f")})
    incomplete = [(COMPONENT_TITLES[c], result.detailed_results[c].reason) for c in COMPONENTS
                  if result.detailed_results[c].gt_incomplete]
    if incomplete:
        st.subheader("Ground truth incomplete")
        for title, why in incomplete:
            st.markdown(f"- **{title}**: {md(why or 'some GT values are empty (skipped)')}")

