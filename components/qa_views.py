"""Streamlit pieces of the QA / fact-check page: headline metrics, tables, issue lists, downloads.

They render a :class:`evaluators.qa.QAReport`; every number comes from the report.
Uploaded text is shown through ``st.dataframe`` / ``st.text`` or, on the light overview, in the
static tables and charts of :mod:`components.static` (escaped there).  pandas is imported when a
grid is drawn, not with this module: the overview draws none.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

import streamlit as st

from evaluators.qa.evaluate import QAReport
from evaluators.reports.qa import records_csv, report_json, summary_csv
from components.metrics import metric_row
from components.static import static_chart, static_records
from components.tables import show_table
from evaluators.reports.format import number, percent, signed
from evaluators.reports.escape import md

if TYPE_CHECKING:
    import pandas as pd

def headline(report: QAReport) -> None:
    """Metric cards: EM, F1 (and accuracy, macro F1, kappa for fact-check) with the counts behind them."""
    o = report.overall
    ci = {m: f"; 95% CI {percent(getattr(o, m + '_ci_low'))} – {percent(getattr(o, m + '_ci_high'))}" if o.ci else ""
          for m in ("exact_match", "token_f1")}
    cards = [("EM · 精确匹配", percent(o.exact_match), o.aggregation + ci["exact_match"]),
             ("F1", percent(o.token_f1), o.aggregation + ci["token_f1"]),
             ("Scored · 评分数", f"{o.n:,} / {report.n_records:,}",
              "Records in the denominators (missing predictions count as errors)."),
             ("No GT · 无标准答案", f"{len(report.missing_gt):,}", "Not scored; listed below by id.")]
    c = report.classification
    if c is not None:
        cards += [("Macro F1 · 宏平均", percent(c.macro.f1),
                   f"Mean over {c.macro.n_classes} classes (T / F / uncertain); "
                   f"{c.macro.n_skipped} class(es) skipped where undefined."),
                  ("Cohen's kappa", number(c.cohen_kappa, 3), "Agreement beyond chance (Cohen 1960).")]
    else:
        cards += [("No answer · 无预测", f"{len(report.missing_prediction):,}", "Scored 0."),
                  ("Skipped lines · 跳过行", f"{sum(1 for i in report.issues if i.severity == 'error'):,}",
                   "Unreadable lines or elements of the input, listed above with their location.")]
    metric_row(cards)
    if o.ci:
        st.caption(f"95% confidence intervals: EM {percent(o.exact_match_ci_low)} – {percent(o.exact_match_ci_high)}, "
                   f"F1 {percent(o.token_f1_ci_low)} – {percent(o.token_f1_ci_high)} ({md(o.ci)})")
    st.caption(f"Signature: {md(report.signature)}")


def per_class_rows(report: QAReport) -> list[dict]:
    """Per-class precision / recall / F1 / support plus the micro, macro and weighted averages, one dict a row."""
    c, ci = report.classification, report.classification_ci

    def interval(lo, hi):
        return None if ci is None or lo is None else f"{percent(lo)} – {percent(hi)}"

    rows = [{"class": str(m.label), "precision": m.precision, "recall": m.recall, "f1": m.f1,
             "f1 95% CI": interval(ci and ci.f1_ci_low.get(m.label), ci and ci.f1_ci_high.get(m.label)),
             "support": m.support, "predicted": m.predicted, "tp": m.tp, "fp": m.fp, "fn": m.fn} for m in c.per_class]
    for avg in (c.micro, c.macro, c.weighted):
        rows.append({"class": f"{avg.kind} avg", "precision": avg.precision, "recall": avg.recall, "f1": avg.f1,
                     "f1 95% CI": interval(ci.macro_f1_ci_low, ci.macro_f1_ci_high) if ci and avg.kind == "macro"
                     else None,
                     "support": sum(m.support for m in c.per_class if m.label in c.average_labels)})
    return rows


def per_class_frame(report: QAReport) -> pd.DataFrame:
    """:func:`per_class_rows` as a DataFrame (the sortable grid of the confusion-matrix view)."""
    import pandas as pd

    return pd.DataFrame(per_class_rows(report))


def ratio_columns(*names: str) -> dict:
    """Column config showing [0, 1] ratios as percentages."""
    return {n: st.column_config.NumberColumn(n, format="percent") for n in names}


def breakdown_rows(report: QAReport) -> list[dict]:
    """EM / F1 per language and per group, with their 95% intervals, one dict a row."""
    def row(subset, v):
        return {"subset": subset, "n": v.n, "exact_match": v.exact_match,
                "EM 95% CI": None if v.exact_match_ci_low is None
                else f"{percent(v.exact_match_ci_low)} – {percent(v.exact_match_ci_high)}",
                "token_f1": v.token_f1,
                "F1 95% CI": None if v.token_f1_ci_low is None
                else f"{percent(v.token_f1_ci_low)} – {percent(v.token_f1_ci_high)}"}

    return ([row(f"lang = {k}", v) for k, v in report.by_lang.items()]
            + [row(f"{report.group_field} = {k}", v) for k, v in report.by_group.items()])


def breakdown_frame(report: QAReport) -> pd.DataFrame:
    """:func:`breakdown_rows` as a DataFrame (the sortable grid of the records view)."""
    import pandas as pd

    return pd.DataFrame(breakdown_rows(report))


def render_overview(report: QAReport) -> None:
    """The light first screen under the metric cards: static charts and tables, no grid, no Plotly.

    Fact-check: the confusion matrix (:func:`evaluators.reports.html.qa_confusion_chart`, the HTML
    report's drawing) beside the per-class table.  By language / group: the breakdown table and, with
    groups, EM and F1 by group (:func:`evaluators.reports.html.qa_group_chart`).  Then how many
    records lack a ground truth or a prediction.  The interactive matrix, the sortable grids and the
    records are in the page's other views.
    """
    from evaluators.reports.html import qa_confusion_chart, qa_group_chart

    c = report.classification
    if c is not None:
        st.subheader("Confusion matrix · 混淆矩阵")
        left, right = st.columns([2, 3])
        static_chart(qa_confusion_chart(report), where=left)
        left.caption("Rows: true label, columns: predicted (as scikit-learn). The Confusion matrix view lists "
                     "the claims of a cell and switches the layout.")
        with right:
            st.markdown("**Per-class metrics · 各类别指标**")
            static_records(per_class_rows(report), ["class", "precision", "recall", "f1", "f1 95% CI", "support"],
                           ratios=("precision", "recall", "f1"))
            st.caption(f"Accuracy {percent(c.accuracy)} ({c.correct} of {c.n}). Undefined values (no prediction "
                       "or no support for a class) show — and are skipped in the averages.")
    if len(report.by_lang) > 1 or report.by_group:
        st.subheader("Breakdown · 分组")
        static_records(breakdown_rows(report), ratios=("exact_match", "token_f1"))
        if report.by_group:
            static_chart(qa_group_chart(report))
    notes = [f"{len(report.missing_gt)} without ground truth (not scored)"] if report.missing_gt else []
    if report.missing_prediction:
        notes.append(f"{len(report.missing_prediction)} without a prediction (scored 0)")
    if report.task == "factcheck" and report.unparsed_predictions:
        notes.append(f"{len(report.unparsed_predictions)} predictions not read as a verdict (their own column)")
    st.caption(f"{report.n_records:,} records" + (": " + "; ".join(notes) if notes else "")
               + ". Each record, with filters and search, is in the Records view.")


def downloads(report: QAReport, key: str = "qa") -> None:
    """Download buttons: the JSON report, the per-record CSV (both carry the signature) and the HTML report."""
    from evaluators.reports.html import qa_report

    stem = PurePath(report.file).stem or "qa"
    c1, c2, c3, c4 = st.columns(4)
    # Written when clicked (callables): a large report is not serialised on every rerun.
    c1.download_button("Download JSON report · 下载报告", lambda: report_json(report).encode("utf-8"),
                       file_name=f"{stem}_report.json", mime="application/json", key=f"{key}_json",
                       on_click="ignore", wrap=True)
    c2.download_button("Download per-record CSV · 下载逐条结果", lambda: records_csv(report).encode("utf-8-sig"),
                       file_name=f"{stem}_records.csv", mime="text/csv", key=f"{key}_csv", on_click="ignore", wrap=True)
    c4.download_button("Download summary CSV · 下载汇总", lambda: summary_csv(report).encode("utf-8-sig"),
                       file_name=f"{stem}_summary.csv", mime="text/csv", key=f"{key}_summary",
                       on_click="ignore", wrap=True,
                       help="EM / F1 (and per-class F1) with their 95% intervals, overall and by subset.")
    c3.download_button("Download HTML report · 下载网页报告", lambda: qa_report(report).encode("utf-8"),
                       file_name=f"{stem}_report.html", mime="text/html", key=f"{key}_html",
                       on_click="ignore", wrap=True,
                       help="One self-contained file (charts drawn in it): opens offline in any browser.")


def sensitivity_rows(report, metric: str = "token_f1") -> list[dict]:
    """One row per system: its score, 95% interval and rank under each tokenization (strings, as the CLI)."""
    rows = []
    for row in report.table(metric):
        out = {"system": row["system"]}
        for t in report.tokenizations:
            mean, lo, hi, rank = row[t.key]
            out[t.key] = f"{percent(mean)} #{rank}" + (f" [{percent(lo)} – {percent(hi)}]" if lo is not None else "")
        rows.append(out)
    return rows


def render_sensitivity(report, metric: str = "token_f1", key: str = "qa") -> None:
    """The Tokenization view: scores by tokenization, the pairs whose order changes, the tokenizers' provenance."""
    st.markdown(f"**{metric} by tokenization** (reference: {md(report.tokenizations[0].label)}; #rank, 95% interval)")
    show_table(sensitivity_rows(report, metric), key=f"{key}_sens_table_{metric}")
    for note in report.notes:
        st.caption(md(note))
    flips = [f for f in report.flips if f.metric == metric]
    if flips:
        st.warning(f"{len(flips)} pair(s) of systems change order under another tokenization.")
        show_table([{"A": f.a, "B": f.b, "tokenization": f.tokenization,
                     "B − A (reference)": signed(100 * f.delta_reference, 2),
                     "95% CI (reference)": _points(f.ci_reference), "B − A": signed(100 * f.delta, 2),
                     "95% CI": _points(f.ci), "records": f.n_paired} for f in flips], key=f"{key}_sens_flips_{metric}")
    else:
        st.success("No pair of systems changes order under another tokenization.")
    with st.expander("Tokenizers · 分词器 (dictionary SHA-256, HMM, normalisation)"):
        for t in report.tokenizations:
            st.code(f"{t.key}: {t.provenance.signature()}", language=None, wrap_lines=True)


def _points(ci) -> str:
    lo, hi = ci
    return "—" if lo is None else f"{signed(100 * lo, 2)} to {signed(100 * hi, 2)}"


def audit_rows(result) -> list[dict]:
    """Per system: parsed, unparsed and ambiguous counts, and an unparsed example."""
    return [{"system": s.system, "n": s.n, "parsed": s.parsed, "unparsed": s.unparsed, "ambiguous": s.ambiguous,
             "accuracy": s.accuracy,
             "unparsed example": (s.examples.get("unparsed") or [None])[0].text if s.examples.get("unparsed") else None}
            for s in result.systems]
